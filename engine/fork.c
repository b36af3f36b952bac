/* SPDX-License-Identifier: MIT */
/*
 * engine/fork.c - fork() without exec: the child can use its caches.
 *
 * Owns: the process-wide list of live caches and the pthread_atfork
 * handlers, installed once (pthread_once) by the first udc_create.
 *
 * What a fork must get right (liburcu's README, "Interaction with fork()"):
 * only the forking thread goes on in the child, so
 *  - liburcu's call_rcu worker is gone: call_rcu callbacks would never run
 *    and rcu_barrier() (udc_shrink, udc_destroy) would wait for ever.
 *    liburcu's own hooks pause the workers before the fork and make a new
 *    one in the child (call_rcu_before_fork / after_fork_parent /
 *    after_fork_child; they also cover rculfhash's worker);
 *  - each cache's reclaim thread is gone, and it may have been inside a
 *    batch (shrink_lock, a stripe, a slab lock, a synchronize_rcu held),
 *    and udc_destroy would join a thread that does not exist.  So the
 *    prepare handler stops every reclaim thread (a stop and a join: it
 *    finishes the wake-up it is in, a few milliseconds at most) and both
 *    sides start one again after the fork: parent and child each have
 *    theirs.  If pthread_create fails there, that cache runs its reclaim
 *    inline, as with UDC_CFG_NO_RECLAIM_THREAD.
 * The embedder's part (include/udcache.h, general rules): no udcache call
 * runs in another thread while fork() is called.  A call in flight could
 * hold a stripe, rename_lock or shrink_lock, or sit in a read-side section,
 * and none of these can be undone in the child.
 *
 * Order in the prepare handler: reclaim threads first (a thread stopping
 * may still wait for call_rcu callbacks, rcu_barrier), then liburcu's
 * workers.  pthread_atfork runs prepare handlers in reverse order of
 * registration: ours run before jemalloc's (registered at its start-up), so
 * the threads stopped here finish their frees before jemalloc takes its
 * locks for the fork.  liburcu discourages its hooks under pthread_atfork
 * with glibc's malloc in callbacks; udcache's callbacks free into jemalloc
 * (and slab pages), whose own fork handlers run after ours.
 *
 * Locking:
 *   fork_lock protects the list (fork_link of each cache) and is held from
 *   the prepare handler to the parent's or child's handler, so that no
 *   udc_create/udc_destroy changes the list across a fork.  It is taken
 *   before any cache lock, and never inside one.
 *
 * Ordering: none beyond fork_lock; the handlers run in the forking thread.
 */
#include "engine/internal.h"

#include <errno.h>

static pthread_mutex_t fork_lock = PTHREAD_MUTEX_INITIALIZER;
static CDS_LIST_HEAD(fork_caches);   /* live caches, by fork_link (fork_lock) */
static pthread_once_t fork_once = PTHREAD_ONCE_INIT;
static int fork_once_err;            /* pthread_atfork's result (written once) */

/* The cache of a fork_link.  (cds_list_for_each_entry would compute
 * container_of(&fork_caches) at the end, which UBSan rightly reports.) */
#define cache_of(pos) caa_container_of((pos), struct udc_cache, fork_link)

static void fork_prepare(void)
{
	struct cds_list_head *pos;

	pthread_mutex_lock(&fork_lock);
	cds_list_for_each(pos, &fork_caches)
		shrink_reclaimer_stop(cache_of(pos)->shrink);   /* joined: it holds nothing now */
	call_rcu_before_fork();
}

/* Both sides: a reclaim thread again for every cache that had one. */
static void fork_restart_threads(void)
{
	struct cds_list_head *pos;

	cds_list_for_each(pos, &fork_caches)
		(void)shrink_reclaimer_start(cache_of(pos)->shrink);   /* on failure: reclaim inline */
}

static void fork_parent(void)
{
	call_rcu_after_fork_parent();
	fork_restart_threads();
	pthread_mutex_unlock(&fork_lock);
}

static void fork_child(void)
{
	call_rcu_after_fork_child();
	fork_restart_threads();
	/* The only thread left is the one that locked it in fork_prepare. */
	pthread_mutex_unlock(&fork_lock);
}

static void fork_hooks_install(void)
{
	fork_once_err = pthread_atfork(fork_prepare, fork_parent, fork_child);
}

int fork_register(struct udc_cache *c)
{
	pthread_once(&fork_once, fork_hooks_install);
	if (fork_once_err)
		return -fork_once_err;
	pthread_mutex_lock(&fork_lock);
	cds_list_add(&c->fork_link, &fork_caches);
	pthread_mutex_unlock(&fork_lock);
	return 0;
}

void fork_unregister(struct udc_cache *c)
{
	pthread_mutex_lock(&fork_lock);
	cds_list_del(&c->fork_link);
	pthread_mutex_unlock(&fork_lock);
}
