/* SPDX-License-Identifier: MIT */
/*
 * engine/spin.h - the short spinlocks (dir->lock, cache->free_lock).
 *
 * Concurrency Kit's ck_spinlock (fetch-and-store) normally.  Under
 * ThreadSanitizer, which cannot see ck's inline-assembly atomics and would
 * report every access the lock protects as a race, the same interface is
 * a pthread spinlock, which TSan understands.
 */
#ifndef UDC_ENGINE_SPIN_H
#define UDC_ENGINE_SPIN_H

#include <stdbool.h>

#if defined(__SANITIZE_THREAD__)
#include <pthread.h>
typedef pthread_spinlock_t udc_spin_t;
static inline void udc_spin_init(udc_spin_t *l)
{
	pthread_spin_init(l, PTHREAD_PROCESS_PRIVATE);
}
static inline void udc_spin_lock(udc_spin_t *l)
{
	pthread_spin_lock(l);
}
static inline void udc_spin_unlock(udc_spin_t *l)
{
	pthread_spin_unlock(l);
}
/* Is @l held (by anyone: a spinlock has no owner)?  For assertions. */
static inline bool udc_spin_is_locked(udc_spin_t *l)
{
	if (pthread_spin_trylock(l))
		return true;
	pthread_spin_unlock(l);
	return false;
}
#else
#include <ck_spinlock.h>
typedef ck_spinlock_t udc_spin_t;
static inline void udc_spin_init(udc_spin_t *l)
{
	ck_spinlock_init(l);
}
static inline void udc_spin_lock(udc_spin_t *l)
{
	ck_spinlock_lock(l);
}
static inline void udc_spin_unlock(udc_spin_t *l)
{
	ck_spinlock_unlock(l);
}
/* Is @l held (by anyone: a spinlock has no owner)?  For assertions. */
static inline bool udc_spin_is_locked(udc_spin_t *l)
{
	return ck_spinlock_locked(l);
}
#endif

#endif
