/* SPDX-License-Identifier: MIT */
/*
 * common/rcu_tsan.h - liburcu's orderings, told to ThreadSanitizer.
 *
 * Include right after <urcu/urcu-memb.h> (with URCU_API_MAP).  Outside TSan
 * builds everything here is a no-op and the urcu names are untouched.
 *
 * liburcu (0.13, an uninstrumented shared library) orders with plain
 * stores, compiler barriers, sys_membarrier and futexes, none of which
 * TSan sees.  So, without this, every RCU reader of an entry or directory
 * races (for TSan) with the writer's initialisation before
 * cds_lfht_add_*() published it, and the free after the grace period races
 * with every reader that had read it.  Rather than suppressing our read
 * paths (which would also hide real races in them), the two RCU rules are
 * modelled with TSan's acquire/release annotations:
 *
 *  - publication (rcu_assign_pointer in rculfhash): the publisher calls
 *    rcu_publish_note(node) just before the cds_lfht_add_*()/replace() that
 *    links the node, and a reader calls rcu_found_note(node) when the table
 *    hands it the node (name_match, dir_match, table_for_each).  Per node:
 *    only what the publisher did before linking that object is ordered
 *    before the reader's accesses to it.
 *  - grace periods: rcu_read_unlock() first releases udc_rcu_gp (one
 *    process-wide sync object), and whatever runs after a grace period
 *    acquires it: synchronize_rcu() and rcu_barrier() on return, and every
 *    call_rcu callback of ours on entry (rcu_callback_note()), and
 *    call_rcu() itself releases it first (the caller's last accesses to
 *    the object come before the callback's).  So a
 *    reader's accesses are ordered before the frees that follow its
 *    read-side section.  A free issued while a reader is still inside its
 *    section (a real bug) is still reported: that reader has not released.
 *
 * Only liburcu's own code (its .so and the inline fast paths in
 * <urcu/static/>) is suppressed, in scripts/tsan.supp.
 */
#ifndef UDC_COMMON_RCU_TSAN_H
#define UDC_COMMON_RCU_TSAN_H

#if defined(__SANITIZE_THREAD__)
#define UDC_TSAN 1
#elif defined(__has_feature)
#if __has_feature(thread_sanitizer)
#define UDC_TSAN 1
#endif
#endif

#ifdef UDC_TSAN
#include <sanitizer/tsan_interface.h>

/* The grace-period sync object: one address for the whole process (weak:
 * every translation unit's definition is the same object). */
__attribute__((weak)) char udc_rcu_gp;

static inline void rcu_publish_note(const void *obj)
{
	__tsan_release((void *)obj);   /* partner: rcu_found_note(obj) in readers */
}

static inline void rcu_found_note(const void *obj)
{
	__tsan_acquire((void *)obj);   /* partner: rcu_publish_note(obj) before the link */
}

static inline void rcu_callback_note(void)
{
	__tsan_acquire(&udc_rcu_gp);   /* partner: the release in rcu_read_unlock() */
}

static inline void udc_rcu_read_unlock(void)
{
	__tsan_release(&udc_rcu_gp);   /* partner: rcu_callback_note() and the waits below */
	urcu_memb_read_unlock();
}

static inline void udc_synchronize_rcu(void)
{
	urcu_memb_synchronize_rcu();
	rcu_callback_note();
}

static inline void udc_rcu_barrier(void)
{
	urcu_memb_barrier();
	rcu_callback_note();
}
static inline void udc_call_rcu(struct rcu_head *head, void (*fn)(struct rcu_head *))
{
	/* partner: rcu_callback_note() in fn: what the caller did to the
	 * object before handing it over (liburcu's queue is invisible) */
	__tsan_release(&udc_rcu_gp);
	urcu_memb_call_rcu(head, fn);
}

#undef rcu_read_unlock
#define rcu_read_unlock() udc_rcu_read_unlock()
#undef synchronize_rcu
#define synchronize_rcu() udc_synchronize_rcu()
#undef rcu_barrier
#define rcu_barrier() udc_rcu_barrier()
#undef call_rcu
#define call_rcu(head, fn) udc_call_rcu((head), (fn))

#else

static inline void rcu_publish_note(const void *obj)
{
	(void)obj;
}

static inline void rcu_found_note(const void *obj)
{
	(void)obj;
}

static inline void rcu_callback_note(void)
{
}

#endif

#endif
