/* SPDX-License-Identifier: MIT */
/*
 * common/lock.h - the library's mutex and condition variable: a futex
 * word each, and the holder recorded in UDC_DEBUG builds, so that a
 * function that needs the lock held can say so and be checked:
 * lock_assert_held(&s->lock) at the top of every *_locked function.
 *
 * Why not pthread_mutex_t: a churn cycle takes and releases eight of these
 * (four stripe locks, four slab cpu slots), and glibc's lock, trylock and
 * unlock are about 30 instructions each behind a call (their type and
 * robustness checks, the elision test): 490 of a cycle's 8,100
 * (BENCHMARKS.md, issue 16, stop 30).  Here the uncontended pair is one
 * compare-and-swap and one exchange, inline.
 *
 * The mutex (Drepper, "Futexes Are Tricky", mutex 3): word 0 free, 1
 * held, 2 held with a sleeper possibly waiting.  A contended lock spins a
 * little on the word first (held for a few hundred nanoseconds at a time,
 * the stripes and the slab's slots are usually free again before a sleep
 * and its wake would be over), then marks the word 2 and sleeps on it;
 * an unlock that finds 2 wakes one sleeper, which exchanges the word to
 * 2 again: it takes the lock if it was free (there may be other
 * sleepers), else sleeps again (a spinner or a trylock came first).
 *
 * Why the unlock stays an exchange (a locked instruction, 8 of a churn
 * cycle's 25): an unlock that is a plain store must still learn of a
 * sleeper that counted itself just before (a store-buffering pattern), so
 * the fence moves to the sleepers.  Issue 16's stop 36 tried a sleeper's
 * sys_membarrier, and a bounded first wait with the holds counted in the
 * word: both cut a churn cycle's locked instructions to 17 and gained up
 * to 6% at 1-2 threads, and both lost 2-6x at 64 threads on 2 cores (a
 * 64-thread churn 0.65x and 0.23x; a lock benchmark 5 M against 22-30 M
 * ops/s), because a count of sleepers makes every unlock wake one while
 * any is counted, a woken one included, where mutex 3's word is marked
 * again only by a sleeper that goes back to sleep.  BENCHMARKS.md, issue
 * 16, stop 36.
 *
 * The condition variable is a sequence: a waiter reads it with the mutex
 * held, unlocks, and sleeps only while it is unchanged; a broadcast bumps
 * it (with the mutex held, as every caller here does) and wakes every
 * sleeper.  A change made before the bump is seen by the waiter when it
 * holds the mutex again; a bump between its read and its sleep makes the
 * sleep return at once (the futex compares the word).  Waits may return
 * spuriously: every caller waits in a loop on its own condition.
 *
 * Neither is a cancellation point (common/cancel.h), neither knows
 * robustness, priority inheritance or process sharing: the library uses
 * none of them.
 *
 * Ordering:
 *   lock's successful compare-and-swap or exchange is an acquire, unlock's
 *   exchange a release: they pair with each other, so a holder sees every
 *   write of the previous holders' sections.  The futex calls order
 *   nothing themselves (the word's atomics do).  The sequence's loads and
 *   its increment are relaxed: the mutex orders the condition's state.
 */
#ifndef UDC_COMMON_LOCK_H
#define UDC_COMMON_LOCK_H

#include <errno.h>
#include <limits.h>
#include <linux/futex.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "common/owner.h"

#define UDC_LOCK_FREE 0u
#define UDC_LOCK_HELD 1u
#define UDC_LOCK_SLEEPERS 2u
#define UDC_LOCK_SPINS 100   /* glibc's adaptive mutex spins as long */

struct udc_mutex {
	_Atomic uint32_t word;   /* UDC_LOCK_FREE, _HELD or _SLEEPERS */
	LOCK_OWNER_FIELD
};

struct udc_cond {
	_Atomic uint32_t seq;    /* bumped by every broadcast */
};

/* A futex call that leaves errno as it was: glibc's locks never change it,
 * and an embedder may read it after a call that waited (lstat, then
 * udc_add_negative, then -errno).  A wait's EAGAIN (the word changed) and
 * EINTR need nothing: its callers look again. */
static inline void udc_futex(_Atomic uint32_t *word, int op, uint32_t val)
{
	int saved = errno;

	syscall(SYS_futex, word, op, val, NULL, NULL, 0);
	errno = saved;
}

static inline void udc_futex_wait(_Atomic uint32_t *word, uint32_t val)
{
	udc_futex(word, FUTEX_WAIT_PRIVATE, val);
}

static inline void udc_futex_wake(_Atomic uint32_t *word, int n)
{
	udc_futex(word, FUTEX_WAKE_PRIVATE, (uint32_t)n);
}

static inline void udc_mutex_init(struct udc_mutex *l)
{
	atomic_init(&l->word, UDC_LOCK_FREE);
	owner_set(&l->owner, false);
}

static inline void udc_mutex_destroy(struct udc_mutex *l)
{
	udc_assert(atomic_load_explicit(&l->word, memory_order_relaxed) == UDC_LOCK_FREE);
	(void)l;
}

/* The word from FREE to HELD: true if taken. */
static inline bool udc_mutex_take(struct udc_mutex *l)
{
	uint32_t free_ = UDC_LOCK_FREE;

	/* acquire: pairs with udc_mutex_unlock's release (the sections' writes) */
	return atomic_compare_exchange_strong_explicit(&l->word, &free_, UDC_LOCK_HELD,
						       memory_order_acquire, memory_order_relaxed);
}

/* The contended case (common/lock.c). */
void mutex_lock_contended(struct udc_mutex *l);

static inline void udc_mutex_lock(struct udc_mutex *l)
{
	if (__builtin_expect(!udc_mutex_take(l), 0))
		mutex_lock_contended(l);
	owner_take(&l->owner);
}

/* 0 if taken, else EBUSY (as pthread_mutex_trylock).  A held lock is
 * seen by a load first: a compare-and-swap on it would take its line
 * from the holder for nothing (every call's chores try shrink_lock). */
static inline int udc_mutex_trylock(struct udc_mutex *l)
{
	/* relaxed: a look only; udc_mutex_take is the acquire */
	if (atomic_load_explicit(&l->word, memory_order_relaxed) != UDC_LOCK_FREE ||
	    !udc_mutex_take(l))
		return EBUSY;
	owner_take(&l->owner);
	return 0;
}

static inline void udc_mutex_unlock(struct udc_mutex *l)
{
	owner_drop(&l->owner);
	/* release: pairs with the acquire of the next holder's take or exchange */
	if (__builtin_expect(atomic_exchange_explicit(&l->word, UDC_LOCK_FREE, memory_order_release) ==
				     UDC_LOCK_SLEEPERS, 0))
		udc_futex_wake(&l->word, 1);
}

static inline void udc_cond_init(struct udc_cond *cv)
{
	atomic_init(&cv->seq, 0);
}

/* Wake every waiter of @cv; the caller holds the waiters' mutex. */
static inline void udc_cond_broadcast(struct udc_cond *cv)
{
	/* relaxed: the mutex orders the state (see Ordering) */
	atomic_fetch_add_explicit(&cv->seq, 1, memory_order_relaxed);
	udc_futex_wake(&cv->seq, INT_MAX);
}

/* Wait for a broadcast on @cv, @l held (and held again on return). */
static inline void udc_cond_wait(struct udc_cond *cv, struct udc_mutex *l)
{
	/* relaxed: read with l held, before the unlock (see Ordering) */
	uint32_t seq = atomic_load_explicit(&cv->seq, memory_order_relaxed);

	udc_mutex_unlock(l);
	udc_futex_wait(&cv->seq, seq);
	udc_mutex_lock(l);
}

/* Does the calling thread hold @l?  (Always true in release builds.) */
static inline bool lock_held(struct udc_mutex *l)
{
	(void)l;
	return owner_mine(&l->owner);
}

#define lock_assert_held(l) udc_assert(lock_held(l))

#endif
