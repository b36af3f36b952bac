/* SPDX-License-Identifier: MIT */
/*
 * engine/spin.h - the short spinlocks (dir->lock, cache->free_lock).
 *
 * Concurrency Kit's ck_spinlock (fetch-and-store) normally.  Under
 * ThreadSanitizer, which cannot see ck's inline-assembly atomics and would
 * report every access the lock protects as a race, the same interface is
 * a pthread spinlock, which TSan understands.
 *
 * Debug builds (UDC_DEBUG) record the holder, as common/lock.h does for
 * mutexes, so that spin_assert_held() checks that the caller holds the
 * lock, not only that someone does: stored after the lock is taken and
 * cleared before it is released, relaxed (only the holder writes it, and a
 * thread compares it with itself, which no other thread's store can make
 * equal).  Release builds have no owner field: the struct is the lock.
 */
#ifndef UDC_ENGINE_SPIN_H
#define UDC_ENGINE_SPIN_H

#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>

#include "common/debug.h"

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
#if UDC_DEBUG
	_Atomic unsigned long owner; /* pthread_self() of the holder, 0: none */
#endif
} udc_spin_t;

static inline void spin_owner_set(udc_spin_t *l, bool held)
{
#if UDC_DEBUG
	/* relaxed: see the file's comment */
	atomic_store_explicit(&l->owner, held ? (unsigned long)pthread_self() : 0,
			      memory_order_relaxed);
#else
	(void)l, (void)held;
#endif
}

static inline void udc_spin_init(udc_spin_t *l)
{
	SPIN_RAW_INIT(&l->raw);
	spin_owner_set(l, false);
}

static inline void udc_spin_lock(udc_spin_t *l)
{
	SPIN_RAW_LOCK(&l->raw);
	spin_owner_set(l, true);
}

static inline void udc_spin_unlock(udc_spin_t *l)
{
	spin_owner_set(l, false);
	SPIN_RAW_UNLOCK(&l->raw);
}

/* Does the calling thread hold @l?  (Always true in release builds.) */
static inline bool udc_spin_held(udc_spin_t *l)
{
#if UDC_DEBUG
	/* relaxed: see the file's comment */
	return atomic_load_explicit(&l->owner, memory_order_relaxed) ==
	       (unsigned long)pthread_self();
#else
	(void)l;
	return true;
#endif
}

#define spin_assert_held(l) udc_assert(udc_spin_held(l))

#endif
