/* SPDX-License-Identifier: MIT */
/*
 * common/lock.h - a mutex that knows its holder in UDC_DEBUG builds, so
 * that a function that needs it held can say so and be checked:
 * lock_assert_held(&s->lock) at the top of every *_locked function.
 *
 * Release builds: exactly a pthread_mutex_t (the owner field and its
 * stores are compiled out).  Debug builds: the holder's pthread_self() is
 * stored after the lock is taken and cleared before it is released (and
 * around a condition wait), relaxed: only the holder writes it, and a
 * thread reads it to compare with itself, which no other thread's store
 * can make equal.  (pthread_t is an integer on Linux, which this assumes.)
 */
#ifndef UDC_COMMON_LOCK_H
#define UDC_COMMON_LOCK_H

#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>

#include "common/debug.h"

struct udc_mutex {
	pthread_mutex_t m;
#if UDC_DEBUG
	_Atomic unsigned long owner;   /* pthread_self() of the holder, 0: none */
#endif
};

static inline void lock_owner_set(struct udc_mutex *l, bool held)
{
#if UDC_DEBUG
	/* relaxed: see the file's comment */
	atomic_store_explicit(&l->owner, held ? (unsigned long)pthread_self() : 0,
			      memory_order_relaxed);
#else
	(void)l, (void)held;
#endif
}

static inline void udc_mutex_init(struct udc_mutex *l)
{
	pthread_mutex_init(&l->m, NULL);
	lock_owner_set(l, false);
}

static inline void udc_mutex_destroy(struct udc_mutex *l)
{
	pthread_mutex_destroy(&l->m);
}

static inline void udc_mutex_lock(struct udc_mutex *l)
{
	pthread_mutex_lock(&l->m);
	lock_owner_set(l, true);
}

/* 0 if taken, else EBUSY (as pthread_mutex_trylock). */
static inline int udc_mutex_trylock(struct udc_mutex *l)
{
	int r = pthread_mutex_trylock(&l->m);

	if (!r)
		lock_owner_set(l, true);
	return r;
}

static inline void udc_mutex_unlock(struct udc_mutex *l)
{
	lock_owner_set(l, false);
	pthread_mutex_unlock(&l->m);
}

static inline void udc_cond_wait(pthread_cond_t *cv, struct udc_mutex *l)
{
	lock_owner_set(l, false);
	pthread_cond_wait(cv, &l->m);
	lock_owner_set(l, true);
}

/* Does the calling thread hold @l?  (Always true in release builds.) */
static inline bool lock_held(struct udc_mutex *l)
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

#define lock_assert_held(l) udc_assert(lock_held(l))

#endif
