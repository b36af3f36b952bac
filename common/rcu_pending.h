/* SPDX-License-Identifier: MIT */
/*
 * common/rcu_pending.h - counting the call_rcu callbacks an owner (a
 * cache, its policy, a slab) has in flight, so that it can wait for them
 * before it frees what they use.
 *
 * liburcu's rcu_barrier() does that wait for every callback of the
 * process, but it allocates and urcu_die()s (aborts) when memory runs out:
 * udc_destroy() must not.  An owner adds one before each call_rcu() of its
 * own and its callback takes one off as its very last access to the owner;
 * rcu_pending_wait() sleeps until none is left.  Callbacks that queue
 * others (a batch free that empties a page) add the new one's before they
 * take their own off, so the count never falls to zero in between; so
 * does a lander that takes a queued batch from its callback (slab/,
 * engine/alloc.c), before the callback can run, for its own part.
 *
 * Ordering: rcu_pending_done() is a release (the callback's accesses to
 * the owner come before it) and rcu_pending_wait() reads with acquire, so
 * the waiter sees them all done when it reads zero.  rcu_pending_add() is
 * relaxed: it is made before call_rcu() by the thread that will wait, or
 * by a callback before its own done.
 */
#ifndef UDC_COMMON_RCU_PENDING_H
#define UDC_COMMON_RCU_PENDING_H

#include <stdatomic.h>
#include <time.h>

struct rcu_pending {
	_Atomic long n;
};

static inline void rcu_pending_add(struct rcu_pending *p)
{
	atomic_fetch_add_explicit(&p->n, 1, memory_order_relaxed);   /* see Ordering */
}

static inline void rcu_pending_done(struct rcu_pending *p)
{
	/* release: pairs with rcu_pending_wait's acquire */
	atomic_fetch_sub_explicit(&p->n, 1, memory_order_release);
}

/*
 * RCU_PENDING_CALLBACK(name, type, member, owner, release) defines
 * `static void name(struct rcu_head *head)`, the call_rcu callback of a
 * counted object: @type's rcu_head is @member, &obj->@owner is its owner's
 * struct rcu_pending (read before the object goes), @release(obj) frees
 * it.  The TSan note comes first (common/rcu_tsan.h, which the user
 * includes, with liburcu's caa_container_of), the count comes off last.
 */
#define RCU_PENDING_CALLBACK(name, type, member, owner, release)                  \
	static void name(struct rcu_head *head)                                     \
	{                                                                           \
		type *obj_ = caa_container_of(head, type, member);                  \
		struct rcu_pending *pending_ = &obj_->owner;                        \
                                                                                    \
		rcu_callback_note(); /* TSan: after the readers' rcu_read_unlock */ \
		release(obj_);                                                      \
		rcu_pending_done(pending_); /* last: the owner may go from here */  \
	}

/* Sleep until every counted callback has run (a grace period or more). */
static inline void rcu_pending_wait(struct rcu_pending *p)
{
	const struct timespec nap = { .tv_sec = 0, .tv_nsec = 1000000 };

	/* acquire: pairs with rcu_pending_done's release */
	while (atomic_load_explicit(&p->n, memory_order_acquire) != 0)
		nanosleep(&nap, NULL);
}

#endif
