/* SPDX-License-Identifier: MIT */
/*
 * common/lock.h - a mutex that knows its holder in UDC_DEBUG builds, so
 * that a function that needs it held can say so and be checked:
 * lock_assert_held(&s->lock) at the top of every *_locked function.
 * Release builds: exactly a pthread_mutex_t (common/owner.h).
 */
#ifndef UDC_COMMON_LOCK_H
#define UDC_COMMON_LOCK_H

#include <pthread.h>
#include <stdbool.h>

#include "common/owner.h"

struct udc_mutex {
	pthread_mutex_t m;
	LOCK_OWNER_FIELD
};

static inline void udc_mutex_init(struct udc_mutex *l)
{
	pthread_mutex_init(&l->m, NULL);
	owner_set(&l->owner, false);
}

/* A mutex held for a few hundred nanoseconds at a time and taken by
 * threads on other CPUs all the time: a waiter spins a little (glibc's
 * adaptive mutex) before it sleeps, so that the holder's unlock is not a
 * futex wake and the waiter's wait not a trip through the scheduler. */
static inline void udc_mutex_init_adaptive(struct udc_mutex *l)
{
	pthread_mutexattr_t a;

	pthread_mutexattr_init(&a);
	pthread_mutexattr_settype(&a, PTHREAD_MUTEX_ADAPTIVE_NP);
	pthread_mutex_init(&l->m, &a);
	pthread_mutexattr_destroy(&a);
	owner_set(&l->owner, false);
}
static inline void udc_mutex_destroy(struct udc_mutex *l)
{
	pthread_mutex_destroy(&l->m);
}

static inline void udc_mutex_lock(struct udc_mutex *l)
{
	pthread_mutex_lock(&l->m);
	owner_set(&l->owner, true);
}

/* 0 if taken, else EBUSY (as pthread_mutex_trylock). */
static inline int udc_mutex_trylock(struct udc_mutex *l)
{
	int r = pthread_mutex_trylock(&l->m);

	if (!r)
		owner_set(&l->owner, true);
	return r;
}

static inline void udc_mutex_unlock(struct udc_mutex *l)
{
	owner_set(&l->owner, false);
	pthread_mutex_unlock(&l->m);
}

static inline void udc_cond_wait(pthread_cond_t *cv, struct udc_mutex *l)
{
	owner_set(&l->owner, false);
	pthread_cond_wait(cv, &l->m);
	owner_set(&l->owner, true);
}

/* Does the calling thread hold @l?  (Always true in release builds.) */
static inline bool lock_held(struct udc_mutex *l)
{
	(void)l;
	return owner_mine(&l->owner);
}

#define lock_assert_held(l) udc_assert(lock_held(l))

#endif
