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
 * (BENCHMARKS.md, issue 16, stop 30).  Here the uncontended lock is one
 * compare-and-swap, inline, and the unlock a plain store and a load.
 *
 * The mutex: word 0 free, 1 held; sleepers counts the contenders that
 * have stopped spinning.  A contended lock spins a little on the word
 * first (held for a few hundred nanoseconds at a time, the stripes and
 * the slab's slots are usually free again before a sleep and its wake
 * would be over), then counts itself in sleepers and sleeps on the word
 * while it stays held; an unlock stores 0 and, if sleepers is not 0,
 * wakes one, which tries again (a spinner or a trylock may come first:
 * then it sleeps again).
 *
 * The unlock's store and its load of sleepers are the two sides of a
 * store-buffering pattern with the sleeper's increment and its look at
 * the word: one side must see the other's store, or a sleeper sleeps
 * through the last unlock.  Drepper's mutex 3 ("Futexes Are Tricky")
 * makes the unlock an exchange for this, a locked instruction on every
 * unlock, 5-6 ns on these machines, eight a churn cycle.  Here the fence
 * is asymmetric, as liburcu's readers' is (urcu-memb): the sleeper, the
 * slow side, issues sys_membarrier (MEMBARRIER_CMD_PRIVATE_EXPEDITED: a
 * full barrier on every CPU running one of the process's threads) between
 * its increment and its look, and the unlock needs only the compiler's
 * order.  Without sys_membarrier (an old kernel, a seccomp filter: known
 * once, before main, lock_asym_init) the unlock issues a full fence
 * instead, and the sleeper one too.
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
 *   (a) lock's successful compare-and-swap is an acquire, unlock's store
 *       a release: they pair with each other, so a holder sees every
 *       write of the previous holders' sections.
 *   (b) The unlock's store then its load of sleepers; a sleeper's
 *       increment then its compare-and-swap and futex wait: ordered by
 *       lock_unlock_fence (a compiler barrier, the sleeper's
 *       sys_membarrier its partner: common/lock.c) or, without
 *       sys_membarrier, a seq_cst fence on each side.  So an unlock
 *       either is seen by the sleeper's look at the word, or sees the
 *       sleeper and wakes it.
 *   The futex calls order nothing themselves (the word's atomics do).
 *   The sequence's loads and its increment are relaxed: the mutex orders
 *   the condition's state.
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
#define UDC_LOCK_SPINS 100   /* glibc's adaptive mutex spins as long */

struct udc_mutex {
	_Atomic uint32_t word;      /* UDC_LOCK_FREE or _HELD */
	_Atomic uint32_t sleepers;  /* contenders done spinning (common/lock.c) */
	LOCK_OWNER_FIELD
};

/* sys_membarrier serves the sleepers (Ordering (b)); set before main. */
extern bool lock_asym;

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
	atomic_init(&l->sleepers, 0);
	owner_set(&l->owner, false);
}

static inline void udc_mutex_destroy(struct udc_mutex *l)
{
	udc_assert(atomic_load_explicit(&l->word, memory_order_relaxed) == UDC_LOCK_FREE &&
		   atomic_load_explicit(&l->sleepers, memory_order_relaxed) == 0);
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
	owner_set(&l->owner, true);
}

/* 0 if taken, else EBUSY (as pthread_mutex_trylock). */
static inline int udc_mutex_trylock(struct udc_mutex *l)
{
	if (!udc_mutex_take(l))
		return EBUSY;
	owner_set(&l->owner, true);
	return 0;
}

/* Between the unlock's store and its load of sleepers: Ordering (b). */
static inline void lock_unlock_fence(void)
{
	if (__builtin_expect(lock_asym, 1))
		/* the sleeper's sys_membarrier is the fence (common/lock.c) */
		atomic_signal_fence(memory_order_seq_cst);
	else
		/* seq_cst: pairs with the sleeper's (common/lock.c, sleeper_fence) */
		atomic_thread_fence(memory_order_seq_cst);
}

static inline void udc_mutex_unlock(struct udc_mutex *l)
{
	owner_set(&l->owner, false);
	/* release: pairs with the acquire of the next holder's take */
	atomic_store_explicit(&l->word, UDC_LOCK_FREE, memory_order_release);
	lock_unlock_fence();
	/* relaxed: lock_unlock_fence orders it after the store (Ordering (b)) */
	if (__builtin_expect(atomic_load_explicit(&l->sleepers, memory_order_relaxed) != 0, 0))
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
