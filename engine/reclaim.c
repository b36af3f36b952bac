/* SPDX-License-Identifier: MIT */
/*
 * engine/reclaim.c - udc_shrink(), udc_set_memory_limit() and the inline
 * reclaim that keeps bytes_used within the limit.
 *
 * Owns: the reclaim pass.  Limitation, said plainly: this is the engine's
 * wiring, not the reclaim policy.  It evicts entries in hash-table order
 * (about random), in batches of RECLAIM_BATCH, with no regard to age, hits
 * or kind, and it runs inline in the mutating calls whether or not
 * UDC_CFG_NO_RECLAIM_THREAD is set (there is no reclaim thread yet).
 * negative_max_age_ms is stored but not acted on.  The policy the project
 * promises (sweeping slab pages oldest first, probation and promotion,
 * ghosts, ageing, per-directory and per-client bounds, the background
 * thread) is the shrink module's (shrink/), and replaces this file's pass.
 *
 * Locking:
 *   shrink_lock serialises passes (inline reclaim only tries it, and waits
 *   for another thread's pass only when the overshoot nears the slack).
 *   rcu_barrier() is called with shrink_lock held: no RCU callback takes it.  A pass takes each
 *   victim's stripe lock outside any rcu_read_lock section: candidates are
 *   collected under the read lock (keys copied), then dropped one by one
 *   under their stripe, after a fresh lookup.
 *
 * Ordering:
 *   A positive victim's directory loses DIR_COMPLETE (seq_cst RMW) before
 *   the entry is dropped, so no lookup answers a dropped name as negative.
 */
#include "engine/internal.h"

#include <errno.h>

#define RECLAIM_BATCH 32

struct victim {
	uint64_t hash;
	udc_ino dir;
	uint8_t len;
	char name[UDC_NAME_MAX];
};

/* Collect up to n keys from the table's front; returns how many. */
static unsigned collect(struct udc_cache *c, struct victim *v, unsigned max)
{
	struct cds_lfht_iter it;
	struct cds_lfht_node *n;
	struct udc_entry *e;
	unsigned got = 0;

	rcu_read_lock();
	table_for_each(c->names, &it, n) {
		e = entry_of(n);
		if (got == max)
			break;
		v[got].hash = hash_name(&c->key, e->dir->ino, entry_name(e), e->len);
		v[got].dir = e->dir->ino;
		v[got].len = e->len;
		memcpy(v[got].name, entry_name(e), e->len);
		got++;
	}
	rcu_read_unlock();
	return got;
}

static size_t evict(struct udc_cache *c, const struct victim *v)
{
	const struct name_key k = { .dir = v->dir, .name = v->name, .len = v->len };
	struct stripe *s = stripe_of(c, v->hash);
	size_t freed;

	pthread_mutex_lock(&s->lock);
	rcu_read_lock();
	struct udc_entry *e = entry_find_rcu(c, v->hash, &k);
	if (e && e->kind == ENT_POSITIVE)
		atomic_fetch_and(&e->dir->flags, ~(uint32_t)DIR_COMPLETE);   /* see Ordering */
	rcu_read_unlock();
	freed = e ? entry_drop_locked(c, v->hash, &k) : 0;
	pthread_mutex_unlock(&s->lock);
	if (freed)
		stat_add(thread_stats(c), evictions, 1);
	return freed;
}

static size_t reclaim_locked(struct udc_cache *c, size_t bytes)
{
	struct victim *v = malloc(sizeof(*v) * RECLAIM_BATCH);   /* scratch, not cache memory */
	size_t freed = 0;
	/* Bounded: about one visit per entry present at the start. */
	int64_t rounds = atomic_load_explicit(&c->nr_entries, memory_order_relaxed) /
			 RECLAIM_BATCH + 2;

	if (!v)
		return 0;
	while (freed < bytes && rounds-- > 0) {
		unsigned n = collect(c, v, RECLAIM_BATCH);
		if (n == 0)
			break;
		for (unsigned i = 0; i < n && freed < bytes; i++)
			freed += evict(c, &v[i]);
	}
	free(v);
	entry_free_flush(c);
	return freed;
}

/* The overshoot allowed past the limit: 1% of it or 1 MiB, the larger. */
static size_t reclaim_slack(size_t limit)
{
	size_t one = limit / 100;

	return one > ((size_t)1 << 20) ? one : (size_t)1 << 20;
}

void reclaim_inline(struct udc_cache *c)
{
	size_t limit = atomic_load_explicit(&c->limit, memory_order_relaxed);
	size_t slack = reclaim_slack(limit);
	size_t used = cache_bytes_used(c);

	if (used <= limit)
		return;
	/*
	 * Over the limit: evict.  A caller that finds another pass running
	 * goes on (that pass works for it) unless the overshoot nears the
	 * slack; then it waits its turn: the clients that outrun reclaim are
	 * the ones throttled.
	 */
	if (pthread_mutex_trylock(&c->shrink_lock)) {
		if (used <= limit + slack / 2)
			return;
		pthread_mutex_lock(&c->shrink_lock);
		used = cache_bytes_used(c);
	}
	if (used > limit)   /* aim a quarter slack below, not to reclaim per call */
		reclaim_locked(c, used - limit + slack / 4);
	/*
	 * Evicted entries are still held until their grace period ends.  If
	 * that alone keeps us near the slack, wait for it (rcu_barrier: the
	 * deferred frees have run), so bytes_used is within the bound when
	 * the call returns.
	 */
	if (cache_bytes_used(c) > limit + slack / 2)
		rcu_barrier();
	pthread_mutex_unlock(&c->shrink_lock);
}

size_t udc_shrink(udc_cache *c, size_t bytes)
{
	if (!c || bytes == 0)
		return 0;
	thread_enter();
	pthread_mutex_lock(&c->shrink_lock);
	size_t freed = reclaim_locked(c, bytes);
	pthread_mutex_unlock(&c->shrink_lock);
	return freed;
}

int udc_set_memory_limit(udc_cache *c, size_t bytes)
{
	if (!c)
		return -EINVAL;
	thread_enter();
	atomic_store_explicit(&c->limit, bytes ? bytes : DEFAULT_MEMORY_LIMIT, memory_order_relaxed);
	reclaim_inline(c);
	return 0;
}
