/* SPDX-License-Identifier: MIT */
/*
 * common/lock.c - udc_mutex_lock's contended case and the choice of the
 * unlock's fence (common/lock.h).
 *
 * Owns lock_asym, set once before main; the mutexes are their
 * callers'.
 *
 * Locking: this is the lock.  A contender spins on the word for
 * UDC_LOCK_SPINS rounds (reads, then a compare-and-swap when it looks
 * free), then counts itself in sleepers, fences (below), and sleeps on the
 * word while it stays held, taking it when it is free; it leaves sleepers
 * once it holds the lock.  A count left high a moment longer than needed
 * costs an unlock one futex wake too many, never a lost one.
 *
 * Ordering (common/lock.h, Ordering (b)):
 *   The increment, then sys_membarrier (lock_asym): it
 *   returns once every running thread of the process has passed a full
 *   barrier, so an unlock whose store the compare-and-swap after it does
 *   not see loads sleepers after that barrier, after the increment, and
 *   wakes this thread.  One membarrier a contended acquisition suffices:
 *   sleepers stays counted until the lock is ours, and every unlock that
 *   the first look missed comes after the barrier.  Without it, the
 *   unlock's seq_cst fence and one here order the pair.
 *   Should the membarrier fail (it does not once registered, and the
 *   registration survives fork), the sleeps time out and look again:
 *   late, never lost.
 *   The compare-and-swap that takes the lock is the acquire
 *   (udc_mutex_take); the spin's reads and the decrement are relaxed.
 */
#include "common/lock.h"

#include <linux/membarrier.h>
#include <time.h>

#if defined(__x86_64__) || defined(__i386__)
#define cpu_relax() __builtin_ia32_pause()
#else
#define cpu_relax() atomic_signal_fence(memory_order_seq_cst)
#endif

#define LOCK_SLEEP_BOUND_NS 1000000L   /* a sleep's bound when no fence orders it */

bool lock_asym;

/* Before main, so before any lock: the unlocks and the sleepers must
 * agree on the fence.  liburcu-memb registers the same command for its
 * readers; registering twice is harmless. */
__attribute__((constructor)) static void lock_asym_init(void)
{
	long cmds = syscall(__NR_membarrier, MEMBARRIER_CMD_QUERY, 0, 0);

	lock_asym = cmds >= 0 && (cmds & MEMBARRIER_CMD_PRIVATE_EXPEDITED) &&
			syscall(__NR_membarrier, MEMBARRIER_CMD_REGISTER_PRIVATE_EXPEDITED, 0, 0) == 0;
}

/* The sleeper's side of Ordering (b): false if the sleeps must be bounded. */
static bool sleeper_fence(void)
{
	if (!lock_asym) {
		/* seq_cst: pairs with the unlock's seq_cst fence */
		atomic_thread_fence(memory_order_seq_cst);
		return true;
	}
	int saved = errno;
	bool ok = syscall(__NR_membarrier, MEMBARRIER_CMD_PRIVATE_EXPEDITED, 0, 0) == 0;
	errno = saved;
	return ok;
}

static void sleep_while_held(struct udc_mutex *l, bool bounded)
{
	static const struct timespec bound = { .tv_nsec = LOCK_SLEEP_BOUND_NS };
	int saved = errno;

	syscall(SYS_futex, &l->word, FUTEX_WAIT_PRIVATE, UDC_LOCK_HELD, bounded ? &bound : NULL,
		NULL, 0);
	errno = saved;
}

void mutex_lock_contended(struct udc_mutex *l)
{
	for (int i = 0; i < UDC_LOCK_SPINS; i++) {
		cpu_relax();
		/* relaxed: a look only; udc_mutex_take is the acquire */
		if (atomic_load_explicit(&l->word, memory_order_relaxed) == UDC_LOCK_FREE &&
		    udc_mutex_take(l))
			return;
	}
	/* relaxed: sleeper_fence orders it before the looks (Ordering) */
	atomic_fetch_add_explicit(&l->sleepers, 1, memory_order_relaxed);
	bool bounded = !sleeper_fence();
	while (!udc_mutex_take(l))
		sleep_while_held(l, bounded);
	/* relaxed: a count left high only costs a wake (see Locking) */
	atomic_fetch_sub_explicit(&l->sleepers, 1, memory_order_relaxed);
}
