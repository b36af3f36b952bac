/* SPDX-License-Identifier: MIT */
/*
 * engine/thread.c - threads: automatic RCU registration and stats slots.
 *
 * Owns: the process-wide thread index allocator (which index each live
 * thread holds) and the per-cache stats chunks' creation.
 *
 * A thread is registered with urcu-memb on its first call into any cache
 * (thread_enter() tests one thread-local flag) and unregistered by a
 * pthread key destructor when it exits, so embedders never register.  A
 * thread the embedder has registered with urcu-memb itself (it uses liburcu
 * too) is used as it is: registering it twice would trip liburcu's check,
 * and it is left registered at exit (it must stay so while it calls in).  The
 * same registration gives the thread a small index, reused after it exits,
 * that picks its stats slot in every cache.
 *
 * Locking:
 *   index_lock protects index_used[] and index_hint.  It is a leaf lock.
 *   Chunk creation takes no lock: a compare-and-swap publishes it.
 *
 * Ordering:
 *   The release CAS that publishes a stats chunk pairs with the acquire
 *   load in stats_slot(): a reader of the pointer sees the zeroed chunk.
 *   The stats hint is the thread's own (TLS) and a cache's serial is
 *   written before the cache is published, so neither needs ordering.
 *   An index handed from an exited thread to a new one goes through
 *   index_lock, so the new owner sees the old owner's last counter stores.
 */
#include "engine/internal.h"

#include <errno.h>

#define NR_INDEXES (STATS_CHUNKS * STATS_PER_CHUNK)

__thread bool thread_registered;
static __thread bool rcu_ours;   /* this file registered the thread (not the embedder) */
__thread int32_t thread_index = STATS_SHARED_SLOT;
__thread struct stats_hint stats_hint;

static pthread_mutex_t index_lock = PTHREAD_MUTEX_INITIALIZER;
static bool index_used[NR_INDEXES];   /* protected by index_lock */
static int32_t index_hint;            /* protected by index_lock */
static pthread_key_t exit_key;
static pthread_once_t exit_key_once = PTHREAD_ONCE_INIT;

static void thread_exit(void *arg)
{
	(void)arg;
	stats_hint = (struct stats_hint){ 0 };   /* its slot goes with the index */
	if (thread_index >= 0) {
		pthread_mutex_lock(&index_lock);
		index_used[thread_index] = false;
		if (thread_index < index_hint)
			index_hint = thread_index;
		pthread_mutex_unlock(&index_lock);
		thread_index = STATS_SHARED_SLOT;
	}
	if (thread_registered) {
		if (rcu_ours)
			rcu_unregister_thread();
		rcu_ours = false;
		thread_registered = false;
	}
}

static void exit_key_create(void)
{
	if (pthread_key_create(&exit_key, thread_exit))
		udc_panic("pthread_key_create failed");
}

void thread_register_slow(void)
{
	pthread_once(&exit_key_once, exit_key_create);
	if (!URCU_TLS(urcu_memb_reader).registered) {   /* the embedder may have */
		rcu_register_thread();
		rcu_ours = true;
	}
	thread_registered = true;

	pthread_mutex_lock(&index_lock);
	for (int32_t i = index_hint; i < NR_INDEXES; i++) {
		if (!index_used[i]) {
			index_used[i] = true;
			thread_index = i;
			index_hint = i + 1;
			break;
		}
	}
	pthread_mutex_unlock(&index_lock);

	/* Any non-NULL value makes the destructor run at thread exit. */
	if (pthread_setspecific(exit_key, &thread_registered))
		udc_panic("pthread_setspecific failed");
}

/* The slot of index i (>= 0) in c: its chunk made if it is not yet. */
static struct thread_stats *stats_slot(struct udc_cache *c, int32_t i)
{
	struct stats_chunk *_Atomic *slotp = &c->stats[i / STATS_PER_CHUNK];
	/* acquire: pairs with the release CAS below, in another thread (see Ordering) */
	struct stats_chunk *ch = atomic_load_explicit(slotp, memory_order_acquire);
	if (ch)
		return &ch->slot[i % STATS_PER_CHUNK];

	struct stats_chunk *fresh = mem_alloc_line(c, sizeof(*fresh));
	if (!fresh)
		return NULL;
	memset(fresh, 0, sizeof(*fresh));

	struct stats_chunk *expected = NULL;
	/* release: the zeroed chunk is visible before the pointer (see Ordering) */
	if (!atomic_compare_exchange_strong_explicit(slotp, &expected, fresh,
						     memory_order_release,
						     memory_order_acquire)) {
		mem_free_line(c, fresh, sizeof(*fresh));
		return &expected->slot[i % STATS_PER_CHUNK];
	}
	return &fresh->slot[i % STATS_PER_CHUNK];
}

struct thread_stats *thread_stats_slow(struct udc_cache *c)
{
	int32_t i = thread_index;
	struct thread_stats *ts = i >= 0 ? stats_slot(c, i) : NULL;

	if (!ts)   /* no index of its own, or out of memory: count approximately */
		return &c->shared_stats;
	if (thread_registered)   /* the hint also says so (thread_enter_stats) */
		stats_hint = (struct stats_hint){ .serial = c->serial, .slot = ts };
	return ts;
}
