/* SPDX-License-Identifier: MIT */
/*
 * engine/spin.h - the short spinlocks (dir->lock, cache->free_lock).
 *
 * Concurrency Kit's ck_spinlock (fetch-and-store) normally.  Under
 * ThreadSanitizer, which cannot see ck's inline-assembly atomics and would
 * report every access the lock protects as a race, the same interface is
 * a pthread spinlock, which TSan understands.
 *
 * Debug builds record the holder (common/owner.h), so that
 * spin_assert_held() checks that the caller holds the lock, not only that
 * someone does.  Release builds have no owner field: the struct is the
 * lock.
 */
#ifndef UDC_ENGINE_SPIN_H
#define UDC_ENGINE_SPIN_H

#include <stdbool.h>

#include "common/owner.h"

#if defined(__SANITIZE_THREAD__)
typedef pthread_spinlock_t udc_spin_raw;
#define SPIN_RAW_INIT(l) pthread_spin_init(l, PTHREAD_PROCESS_PRIVATE)
#define SPIN_RAW_LOCK(l) pthread_spin_lock(l)
#define SPIN_RAW_UNLOCK(l) pthread_spin_unlock(l)
#else
#include <ck_spinlock.h>
typedef ck_spinlock_t udc_spin_raw;
#define SPIN_RAW_INIT(l) ck_spinlock_init(l)
#define SPIN_RAW_LOCK(l) ck_spinlock_lock(l)
#define SPIN_RAW_UNLOCK(l) ck_spinlock_unlock(l)
#endif

typedef struct {
	udc_spin_raw raw;
	LOCK_OWNER_FIELD
} udc_spin_t;

static inline void udc_spin_init(udc_spin_t *l)
{
	SPIN_RAW_INIT(&l->raw);
	owner_set(&l->owner, false);
}

static inline void udc_spin_lock(udc_spin_t *l)
{
	SPIN_RAW_LOCK(&l->raw);
	owner_take(&l->owner);
}

static inline void udc_spin_unlock(udc_spin_t *l)
{
	owner_drop(&l->owner);
	SPIN_RAW_UNLOCK(&l->raw);
}

/* Does the calling thread hold @l?  (Always true in release builds.) */
static inline bool udc_spin_held(udc_spin_t *l)
{
	(void)l;
	return owner_mine(&l->owner);
}

#define spin_assert_held(l) udc_assert(udc_spin_held(l))

#endif
