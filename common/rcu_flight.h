/* SPDX-License-Identifier: MIT */
/*
 * common/rcu_flight.h - a batch of frees handed to call_rcu that the
 * owner may take back and free itself (slab/'s batches, engine/alloc.c's).
 *
 * liburcu's call_rcu thread naps 10 ms between its batches, and may be
 * starved; a caller that needs the memory of frees queued there should not
 * wait for it.  So each batch handed to call_rcu is also listed by its
 * owner (rcu_flight_list, under the owner's lock), and a lander (a caller
 * inside a slab hold) takes the listed batches (rcu_flight_take) and frees
 * their objects after a grace period of its own.  The callback, when it
 * runs, asks whether the batch was taken (rcu_flight_end): if so it leaves
 * the objects.  Two references then, the callback's and the lander's: the
 * last to drop its own (rcu_flight_put) frees the batch itself, whose
 * rcu_head stays in call_rcu's queue until the callback.
 *
 * Locking: the owner's lock (a leaf) around rcu_flight_list,
 * rcu_flight_take and rcu_flight_end; rcu_flight_put takes none.
 *
 * Ordering: taken is written and read under the owner's lock, and the
 *   lander's reference is added under it, before the callback can read
 *   taken.  A batch was listed after its objects were unpublished and is
 *   taken before the lander's grace period begins, which therefore covers
 *   every reader that could find them.  rcu_flight_put's decrement is
 *   acq_rel: the first side's accesses to the batch come before the free
 *   by the second.
 */
#ifndef UDC_COMMON_RCU_FLIGHT_H
#define UDC_COMMON_RCU_FLIGHT_H

#include <stdatomic.h>
#include <stdbool.h>
#include <urcu/list.h>

struct rcu_flight {
	struct cds_list_head link;   /* on the owner's list while listed */
	bool taken;                  /* the owner's lock */
	_Atomic int refs;            /* the callback's, and the lander's once taken */
};

/* List @f on @list before its call_rcu; the owner's lock held. */
static inline void rcu_flight_list(struct rcu_flight *f, struct cds_list_head *list)
{
	f->taken = false;
	/* relaxed: set before the batch is shared; the lock publishes it */
	atomic_init(&f->refs, 1);
	cds_list_add_tail(&f->link, list);
}

/* Take listed @f for a lander; the owner's lock held. */
static inline void rcu_flight_take(struct rcu_flight *f)
{
	cds_list_del(&f->link);
	f->taken = true;
	/* relaxed: the callback reads taken under the lock first */
	atomic_fetch_add_explicit(&f->refs, 1, memory_order_relaxed);
}

/* The callback's look: true if a lander took @f (then only rcu_flight_put
 * is left to do), else @f leaves the list; the owner's lock held. */
static inline bool rcu_flight_end(struct rcu_flight *f)
{
	if (!f->taken)
		cds_list_del(&f->link);
	return f->taken;
}

/* Drop a reference to taken @f: true if it was the last (free the batch). */
static inline bool rcu_flight_put(struct rcu_flight *f)
{
	/* acq_rel: see Ordering */
	return atomic_fetch_sub_explicit(&f->refs, 1, memory_order_acq_rel) == 1;
}

#endif
