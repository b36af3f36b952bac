/* SPDX-License-Identifier: MIT */
/*
 * engine/reclaim.c - udc_shrink(), udc_set_memory_limit() and the inline
 * reclaim that keeps bytes_used within the limit.
 *
 * Owns: the reclaim pass, and the background reclaim thread.  Limitation,
 * said plainly: this is the engine's wiring, not the reclaim policy.  It
 * empties whole slab pages, oldest first (negatives before positives), so
 * that pages go back, with no regard to hits.  The thread (started unless
 * UDC_CFG_NO_RECLAIM_THREAD) wakes every RECLAIM_THREAD_PERIOD_MS, evicts
 * down to the low watermark (limit - slack) once use passes limit -
 * slack/2, and runs compaction batches, a bounded number per wake-up, each
 * under shrink_lock; the inline pass in the mutating calls stays, so the
 * bound holds even when a client outruns the thread.
 * negative_max_age_ms is stored but not acted on.  The policy the project
 * promises (sweeping slab pages oldest first, probation and promotion,
 * ghosts, ageing, per-directory and per-client bounds, the background
 * thread) is the shrink module's (shrink/), and replaces this file's pass.
 *
 * Locking:
 *   A page is isolated (slab/) while its entries' keys are copied, each
 *   under rcu_read_lock; the entries are then dropped by key, each under
 *   its stripe, after a fresh lookup (a key whose entry moved on drops the
 *   newer entry: reclaim may evict a little more than the page held).
 *   shrink_lock serialises passes (inline reclaim only tries it, and waits
 *   for another thread's pass only when the overshoot nears the slack).
 *   The reclaim thread holds it for one batch at a time (RECLAIM_THREAD_BYTES
 *   of eviction or one compaction batch).  thread_lock protects thread_stop
 *   and is never held with another lock.
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
#include <time.h>

#define RECLAIM_BATCH 1024   /* at least the objects of one page */
#define RECLAIM_INLINE_ROUNDS 4
#define RECLAIM_THREAD_PERIOD_MS 100
#define RECLAIM_THREAD_BATCHES 64                  /* batches per wake-up, then sleep */
#define RECLAIM_THREAD_BYTES ((size_t)256 << 10)   /* eviction per shrink_lock hold */

struct sweep {
	struct udc_cache *c;
	struct entry_key *v;
	unsigned n, max;
};

bool entry_key_copy(struct udc_cache *c, struct udc_entry *e, struct entry_key *out)
{
	bool live;

	rcu_read_lock();   /* an external name stays until our unlock */
	/* acquire: pairs with the release in entry_publish_locked */
	live = atomic_load_explicit(&e->published, memory_order_acquire);
	if (live) {
		out->dir = e->dir->ino;
		out->len = e->len;
		memcpy(out->name, entry_name(e), e->len);
		out->hash = hash_name(&c->key, out->dir, out->name, out->len);
	}
	rcu_read_unlock();
	return live;
}

/* slab_page_for_each() callback: copy the key of a published entry. */
static void sweep_collect(void *arg, void *obj)
{
	struct sweep *sw = arg;

	if (sw->n < sw->max && entry_key_copy(sw->c, obj, &sw->v[sw->n]))
		sw->n++;
}

/* Where a pass has got to: the next page age to sweep, per slab and class. */
struct sweep_cursor {
	uint64_t min_age[2][SLAB_MAX_CLASSES];
};

/*
 * Collect the keys of the next isolated page's entries: oldest first in
 * each class, the first class that has one, negatives before positives.
 * Pages already swept in this pass (their entries wait for their grace
 * period) are past the cursor.  Returns how many keys.
 */
static unsigned collect(struct udc_cache *c, struct sweep_cursor *cur, struct entry_key *v,
			unsigned max)
{
	struct sweep sw = { .c = c, .v = v, .max = max };
	static const enum entry_kind order[2] = { ENT_NEGATIVE, ENT_POSITIVE };

	for (unsigned k = 0; k < 2; k++) {
		struct slab *s = c->slabs[order[k]];
		for (unsigned cls = 0; cls < slab_nr_classes(s); cls++) {
			struct slab_page *p;
			while ((p = slab_page_isolate(s, cls, cur->min_age[k][cls]))) {
				cur->min_age[k][cls] = slab_page_age(p) + 1;
				slab_page_for_each(s, p, sweep_collect, &sw);
				slab_page_putback(s, p);
				if (sw.n)
					return sw.n;
			}
		}
	}
	return 0;
}

static size_t evict(struct udc_cache *c, const struct entry_key *v)
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
	/* Scratch for one page's keys, made once (counted), kept for later passes. */
	if (!c->reclaim_scratch)
		c->reclaim_scratch = mem_alloc(c, sizeof(struct entry_key) * RECLAIM_BATCH);
	struct entry_key *v = c->reclaim_scratch;
	size_t freed = 0;
	/* Bounded: a page a round, and a page holds at least 256 entries. */
	int64_t rounds = atomic_load_explicit(&c->nr_entries, memory_order_relaxed) / 256 + 4;

	if (!v)
		return 0;
	/* This thread's open pages become sweepable (others' stay theirs). */
	slab_thread_release(c->slabs[ENT_NEGATIVE]);
	slab_thread_release(c->slabs[ENT_POSITIVE]);
	struct sweep_cursor cur = { 0 };
	while (freed < bytes && rounds-- > 0) {
		unsigned n = collect(c, &cur, v, RECLAIM_BATCH);
		if (n == 0)
			break;
		for (unsigned i = 0; i < n && freed < bytes; i++)
			freed += evict(c, &v[i]);
	}
	entry_free_flush(c);
	return freed;
}

void reclaim_release(struct udc_cache *c)
{
	mem_free(c, c->reclaim_scratch, sizeof(struct entry_key) * RECLAIM_BATCH);
	c->reclaim_scratch = NULL;
}

/* The overshoot allowed past the limit: 1% of it or 1 MiB, the larger. */
static size_t reclaim_slack(size_t limit)
{
	size_t one = limit / 100;

	return one > ((size_t)1 << 20) ? one : (size_t)1 << 20;
}

void reclaim_inline(struct udc_cache *c)
{
	compact_inline(c);   /* pages back without losing answers, first */
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
	/*
	 * Evict, aiming a quarter slack below the limit (not to reclaim on
	 * every call).  Evicted entries are held until their grace period
	 * ends and pages come back only when empty, so while that keeps us
	 * past half the slack, wait for the frees and evict again: a few
	 * rounds at most, so that bytes_used is within the bound when the
	 * call returns.
	 */
	for (int round = 0; round < RECLAIM_INLINE_ROUNDS && used > limit; round++) {
		reclaim_locked(c, used - limit + slack / 4);
		used = cache_bytes_used(c);
		if (used <= limit + slack / 2)
			break;
		entry_frees_wait(c);
		used = cache_bytes_used(c);
	}
	pthread_mutex_unlock(&c->shrink_lock);
}

size_t udc_shrink(udc_cache *c, size_t bytes)
{
	if (!c || bytes == 0)
		return 0;
	thread_enter();
	size_t freed = 0;
	if (bytes != SIZE_MAX) {
		/* First what compaction gives back (no answer lost); not when
		 * everything goes, where moving entries is wasted work. */
		size_t before = cache_bytes_used(c);
		compact_all(c);
		pthread_mutex_lock(&c->shrink_lock);
		entry_frees_wait(c);
		size_t after = cache_bytes_used(c);
		freed = before > after ? before - after : 0;
	} else {
		pthread_mutex_lock(&c->shrink_lock);
	}
	if (freed < bytes) {
		freed += reclaim_locked(c, bytes - freed);
		entry_frees_wait(c);
	}
	pthread_mutex_unlock(&c->shrink_lock);
	return freed;
}

/*
 * One wake-up's work: evict down to the low watermark, then compact, in
 * bounded batches.  Returns true if work remains (no sleep before the next).
 */
static bool reclaim_background(struct udc_cache *c)
{
	size_t limit = atomic_load_explicit(&c->limit, memory_order_relaxed);
	size_t slack = reclaim_slack(limit);
	size_t low = limit > slack ? limit - slack : 0;
	int batches = RECLAIM_THREAD_BATCHES;
	bool more = false;

	while (batches > 0) {
		size_t used = cache_bytes_used(c);
		if (used <= low + slack / 2)
			break;
		size_t want = used - low < RECLAIM_THREAD_BYTES ? used - low : RECLAIM_THREAD_BYTES;
		pthread_mutex_lock(&c->shrink_lock);
		size_t got = reclaim_locked(c, want);
		pthread_mutex_unlock(&c->shrink_lock);
		batches--;
		if (got == 0)
			break;   /* nothing evictable now (others' open pages, pending frees) */
		more = batches == 0;
	}
	for (bool fresh = true; batches-- > 0; fresh = false)
		if (!compact_batch(c, fresh))
			break;
	more = more || batches < 0;
	entry_free_flush(c);
	return more;
}

static void *reclaim_thread_main(void *arg)
{
	struct udc_cache *c = arg;

	thread_enter();
	pthread_mutex_lock(&c->thread_lock);
	while (!c->thread_stop) {
		pthread_mutex_unlock(&c->thread_lock);
		bool more = reclaim_background(c);
		pthread_mutex_lock(&c->thread_lock);
		if (more || c->thread_stop)
			continue;
		struct timespec t;
		clock_gettime(CLOCK_MONOTONIC, &t);
		t.tv_nsec += RECLAIM_THREAD_PERIOD_MS * 1000000L;
		t.tv_sec += t.tv_nsec / 1000000000L;
		t.tv_nsec %= 1000000000L;
		pthread_cond_timedwait(&c->thread_cond, &c->thread_lock, &t);
	}
	pthread_mutex_unlock(&c->thread_lock);
	/* Our open pages and RCU batches go with the thread (slab's and
	 * thread.c's exit handlers). */
	return NULL;
}

int reclaim_thread_start(struct udc_cache *c)
{
	pthread_condattr_t a;
	int err;

	pthread_mutex_init(&c->thread_lock, NULL);
	pthread_condattr_init(&a);
	pthread_condattr_setclock(&a, CLOCK_MONOTONIC);
	pthread_cond_init(&c->thread_cond, &a);
	pthread_condattr_destroy(&a);
	c->thread_stop = false;
	if (c->flags & UDC_CFG_NO_RECLAIM_THREAD)
		return 0;
	err = pthread_create(&c->thread, NULL, reclaim_thread_main, c);
	if (err)
		return -err;
	c->thread_running = true;
	return 0;
}

void reclaim_thread_stop(struct udc_cache *c)
{
	if (c->thread_running) {
		pthread_mutex_lock(&c->thread_lock);
		c->thread_stop = true;
		pthread_cond_signal(&c->thread_cond);
		pthread_mutex_unlock(&c->thread_lock);
		pthread_join(c->thread, NULL);
		c->thread_running = false;
	}
	pthread_cond_destroy(&c->thread_cond);
	pthread_mutex_destroy(&c->thread_lock);
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
