/* SPDX-License-Identifier: MIT */
/*
 * common/lock.c - udc_mutex_lock's contended case (common/lock.h).
 *
 * Owns nothing: the mutex is its caller's.
 *
 * Locking: this is the lock.  A contender spins on the word for
 * UDC_LOCK_SPINS rounds (reads, then a compare-and-swap when it looks
 * free), then exchanges it to SLEEPERS and sleeps while it stays SLEEPERS.
 * Taken by that exchange, the lock stays SLEEPERS, though this thread may
 * have been the only sleeper: the next unlock makes one futex wake more
 * than it needed (Drepper's mutex 3 accepts the same).
 *
 * Ordering: the exchange that finds the word FREE is an acquire, paired
 * with udc_mutex_unlock's release exchange; the spin's reads are relaxed
 * (the compare-and-swap that takes the lock is the acquire: udc_mutex_take).
 */
#include "common/lock.h"

#if UDC_DEBUG
__thread int owner_held_count;   /* common/owner.h */
#endif

#if defined(__x86_64__) || defined(__i386__)
#define cpu_relax() __builtin_ia32_pause()
#else
#define cpu_relax() atomic_signal_fence(memory_order_seq_cst)
#endif

void mutex_lock_contended(struct udc_mutex *l)
{
	for (int i = 0; i < UDC_LOCK_SPINS; i++) {
		cpu_relax();
		/* relaxed: a look only; udc_mutex_take is the acquire */
		if (atomic_load_explicit(&l->word, memory_order_relaxed) == UDC_LOCK_FREE &&
		    udc_mutex_take(l))
			return;
	}
	/* acquire: pairs with udc_mutex_unlock's release (when it was FREE) */
	while (atomic_exchange_explicit(&l->word, UDC_LOCK_SLEEPERS, memory_order_acquire) !=
	       UDC_LOCK_FREE)
		udc_futex_wait(&l->word, UDC_LOCK_SLEEPERS);
}
