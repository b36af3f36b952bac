/* SPDX-License-Identifier: MIT */
/*
 * engine/cache.c - a cache's life: udc_create, udc_destroy, statistics,
 * udc_version, udc_thread_offline/online, and the engine's validator.
 *
 * Owns: struct udc_cache itself, its tables' creation, sizing and
 * destruction (the name table's: engine/name_table.c; the directories'
 * rculfhash: engine/table.c), and the memory accounting total
 * (cache_bytes_used).
 *
 * bytes_used = every allocation made through engine/alloc.c (entries,
 * external names, directory objects, stats chunks, free batches, the
 * cache struct) + the name and directory tables' bucket arrays (8 and 16
 * bytes a bucket; the tables are sized here, see "Table sizes").
 *
 * Locking: none of its own; udc_destroy runs alone (the caller's promise).
 *
 * Ordering:
 *   The cache is published to other threads by the caller after
 *   udc_create returns (their own synchronisation orders it).
 *   cache_serials is a relaxed counter: only its uniqueness matters.
 *   udc_destroy runs alone (no reader, no other call), so it unpublishes
 *   nothing: it frees the external names of the entries still in the
 *   table, waits for the deferred frees' callbacks (rcu_pending_wait, not
 *   rcu_barrier), then frees the slabs' pages whole, the directories, and
 *   the tables with their buckets (table_free).
 */
#include "engine/internal.h"
#include "engine/table.h"

#include <errno.h>
#include <linux/membarrier.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#define MIN_BUCKETS_MAX 2048   /* a table's smallest size, at limits from 2 MiB up */
#define MIN_BUCKETS_MIN 64
/* log2 of the nodes per bucket past which a table grows (to half that):
 * 2 in the name table, whose chains every hit walks.  The directory
 * table, which no hit reads (a miss or an insert without its name's entry
 * finds the directory there), and whose bucket costs twice as much (16
 * bytes, a cds_lfht_node), takes 2 as long as its buckets stay within
 * 1/DIR_TABLE_SHARE_DIV of the limit, and up to 8 past that
 * (dirs_load_shift): at binding limits its buckets were 7-12% of
 * bytes_used, and this took 29 of 32 replay rows under lru-mutex's backend
 * lookups, where 2 a bucket took 28 (gcc at 5% from 1.09x to 0.99x); 8 a
 * bucket at every limit cost the mixed workload with 2^17 directories 3-7%
 * (BENCHMARKS.md, issue 14, stop 39). */
#define NAME_LOAD_SHIFT 1
#define DIR_LOAD_SHIFT 1
#define DIR_LOAD_SHIFT_TIGHT 3
#define DIR_TABLE_SHARE_DIV 128
/* The fixed part of an empty cache (its tables' smallest size, its
 * stripes) within 1/SMALL_SHARE_DIV of the memory limit each, down to
 * MIN_BUCKETS_MIN and NR_STRIPES_MIN: 160 KiB at every limit was 61% of
 * a 256 KiB one, and a quarter of the 5% replays' (issue 14). */
#define SMALL_SHARE_DIV 32

#define UDC_STR2(x) #x
#define UDC_STR(x) UDC_STR2(x)

const char *udc_version(void)
{
	return UDC_STR(UDC_VERSION_MAJOR) "." UDC_STR(UDC_VERSION_MINOR) "." UDC_STR(UDC_VERSION_PATCH);
}

static bool membarrier_available(void)
{
	long cmds = syscall(__NR_membarrier, MEMBARRIER_CMD_QUERY, 0);

	return cmds >= 0 && (cmds & MEMBARRIER_CMD_PRIVATE_EXPEDITED);
}

/*
 * Table sizes.  The tables do not auto-resize: liburcu 0.13's policy
 * (rculfhash.c: ht_count_add/ht_count_del) acts only when its count,
 * committed in steps of 1024, lands on a power of two: it grows 8-fold at
 * once, "shrinks" on the way down to the count even when that is a growth,
 * and a table whose count dipped once is left with chains of dozens
 * (measured: a 16 MiB trickle ran 8x slower in a third of the runs).  So
 * the reclaim passes size them (cache_tables_resize): a table grows to
 * table_target(count) buckets (one to two nodes each, or 4 to 8: below)
 * once its count passes 2 (or 8) per bucket, when the memory for it is there
 * (reclaim_used counts a growth due, so eviction makes the room first),
 * and shrinks to it under an eighth of that load.  bytes_used counts
 * what a bucket costs: 8 bytes (a chain's head) in the name table, 16 (a
 * struct cds_lfht_node) in the directory table.  A growth of the name
 * table allocates the new array whole and frees the old one at its end
 * (engine/name_table.c): its room is the new array's (more than the net
 * growth, which the pass after it gives back to the directory table's);
 * a shrink of it holds its new array, a quarter of the old one at most,
 * uncounted until it ends.  The directory table's keeps its arrays and
 * adds the new orders'.
 */
#define NAME_BUCKET_BYTES sizeof(name_bucket)
#define DIR_BUCKET_BYTES sizeof(struct cds_lfht_node)
static size_t pow2_at_least(size_t n)
{
	return n <= 1 ? 1 : (size_t)1 << (64 - __builtin_clzll((unsigned long long)n - 1));
}

/* 2^(shift - 1) to 2^shift nodes per bucket after a resize, at least @min. */
static size_t table_target(int64_t count, size_t min, unsigned shift)
{
	size_t t = pow2_at_least(count > 0 ? (size_t)count : 0) >> shift;

	return t > min ? t : min;
}

/* The bytes a due growth of a table would add while it runs (0 if none is
 * due): @bucket_bytes a bucket, the old buckets kept (@moves: false) or
 * freed at its end (true). */
static size_t table_growth(const _Atomic size_t *buckets, int64_t count, size_t min,
			   unsigned shift, size_t bucket_bytes, bool moves)
{
	size_t b = atomic_load_explicit(buckets, memory_order_relaxed);

	if (count <= 0 || (size_t)count <= b << shift)
		return 0;
	return (table_target(count, min, shift) - (moves ? 0 : b)) * bucket_bytes;
}

/* Under an eighth of the growth's load: back to table_target. */
static bool table_shrink_due(const _Atomic size_t *buckets, int64_t count, size_t min,
			     unsigned shift)
{
	size_t b = atomic_load_explicit(buckets, memory_order_relaxed);

	return b > min && (count <= 0 || (size_t)count < (b << shift) / 8);
}

/* The tables' smallest size for a memory limit of @limit (0: the default). */
static size_t min_buckets_for(size_t limit)
{
	size_t n = MIN_BUCKETS_MAX;

	while (limit && n > MIN_BUCKETS_MIN &&
	       n * (NAME_BUCKET_BYTES + DIR_BUCKET_BYTES) > limit / SMALL_SHARE_DIV)
		n >>= 1;
	return n;
}

/* The stripes for a memory limit of @limit (0: the default). */
static size_t nr_stripes_for(size_t limit)
{
	size_t n = NR_STRIPES_MAX;

	while (limit && n > NR_STRIPES_MIN && n * sizeof(struct stripe) > limit / SMALL_SHARE_DIV)
		n >>= 1;
	return n;
}

size_t cache_buckets_bytes(struct udc_cache *c)
{
	return atomic_load_explicit(&c->names_buckets, memory_order_relaxed) * NAME_BUCKET_BYTES +
	       atomic_load_explicit(&c->dirs_buckets, memory_order_relaxed) * DIR_BUCKET_BYTES;
}

size_t cache_bytes_apart(struct udc_cache *c)
{
	return slab_meta_bytes(c->slabs[ENT_NEGATIVE]) + slab_meta_bytes(c->slabs[ENT_POSITIVE]) +
	       slab_meta_bytes(c->dir_slab) + cache_buckets_bytes(c);
}

size_t cache_bytes_used(struct udc_cache *c)
{
	return atomic_load_explicit(&c->bytes_held, memory_order_relaxed) + cache_bytes_apart(c);
}

/* relaxed (the counts, here and below): sizes follow them loosely */
#define NR_ENTRIES(c) atomic_load_explicit(&(c)->nr_entries, memory_order_relaxed)
#define NR_DIRS(c) atomic_load_explicit(&(c)->nr_dirs, memory_order_relaxed)

/* The directory table's load for its count now (see DIR_LOAD_SHIFT). */
static unsigned dirs_load_shift(struct udc_cache *c)
{
	return table_target(NR_DIRS(c), c->min_buckets, DIR_LOAD_SHIFT) * DIR_BUCKET_BYTES <=
			       shrink_limit(c->shrink) / DIR_TABLE_SHARE_DIV ?
		       DIR_LOAD_SHIFT :
		       DIR_LOAD_SHIFT_TIGHT;
}

size_t cache_tables_growth(struct udc_cache *c)
{
	size_t g = table_growth(&c->names_buckets, NR_ENTRIES(c), c->min_buckets, NAME_LOAD_SHIFT,
				NAME_BUCKET_BYTES, true);
	int64_t n = NR_DIRS(c);

	/* Every call's bound asks (reclaim_used): at 2 a bucket or fewer no
	 * growth is due at any load, and the load is not asked. */
	if (n > (int64_t)(atomic_load_explicit(&c->dirs_buckets, memory_order_relaxed)
			  << DIR_LOAD_SHIFT))
		g += table_growth(&c->dirs_buckets, n, c->min_buckets, dirs_load_shift(c),
				  DIR_BUCKET_BYTES, false);
	return g;
}

bool cache_tables_resize_due(struct udc_cache *c)
{
	return cache_tables_growth(c) ||
	       table_shrink_due(&c->names_buckets, NR_ENTRIES(c), c->min_buckets, NAME_LOAD_SHIFT) ||
	       table_shrink_due(&c->dirs_buckets, NR_DIRS(c), c->min_buckets, dirs_load_shift(c));
}

/* A due resize of a table walks the larger of its sizes before and after. */
static size_t table_resize_work(const _Atomic size_t *buckets, int64_t count, size_t min,
				unsigned shift)
{
	size_t b = atomic_load_explicit(buckets, memory_order_relaxed);
	size_t target = table_target(count, min, shift);

	if (count <= (int64_t)(b << shift) && !table_shrink_due(buckets, count, min, shift))
		return 0;
	return target > b ? target : b;
}

size_t cache_tables_resize_work(struct udc_cache *c)
{
	return table_resize_work(&c->names_buckets, NR_ENTRIES(c), c->min_buckets, NAME_LOAD_SHIFT) +
	       table_resize_work(&c->dirs_buckets, NR_DIRS(c), c->min_buckets, dirs_load_shift(c));
}

static bool dirs_resize_to(struct udc_cache *c, size_t buckets)
{
	return table_resize_to(c->dirs, buckets);
}

/* Resize a table (its size: @buckets, resized by @resize_to) when due,
 * its growth within *room (less what it took). */
static void table_resize(struct udc_cache *c, bool (*resize_to)(struct udc_cache *, size_t),
			 _Atomic size_t *buckets, int64_t count, unsigned shift, size_t bucket_bytes,
			 bool moves, size_t *room)
{
	size_t grow = table_growth(buckets, count, c->min_buckets, shift, bucket_bytes, moves);

	if (grow ? grow > *room : !table_shrink_due(buckets, count, c->min_buckets, shift))
		return;
	size_t target = table_target(count, c->min_buckets, shift);
	/* The growth is charged while the arrays are made (bytes_charge),
	 * then counted in the buckets: a resize's room was read before
	 * calls in flight added theirs (at 1 MiB with 32 threads, bytes_used
	 * went 300-600 bytes past its bound).  The work is done in this
	 * thread; out of memory or room for the growth's arrays, the table
	 * stays as it is (a later pass retries). */
	if (grow && !bytes_charge(c, (long)grow, false))
		return;
	bool done = resize_to(c, target);
	if (done)   /* relaxed: read for accounting only */
		atomic_store_explicit(buckets, target, memory_order_relaxed);
	if (grow)
		bytes_charge(c, -(long)grow, false);
	if (done)
		*room -= grow;
}

void cache_tables_resize(struct udc_cache *c, size_t room)
{
	table_resize(c, name_table_resize, &c->names_buckets, NR_ENTRIES(c), NAME_LOAD_SHIFT,
		     NAME_BUCKET_BYTES, true, &room);
	table_resize(c, dirs_resize_to, &c->dirs_buckets, NR_DIRS(c), dirs_load_shift(c),
		     DIR_BUCKET_BYTES, false, &room);
}

/*
 * The smallest limit a cache made with @limit takes later: twice its own
 * part, what it holds empty (tables, stripes, ghosts: sized here from
 * @limit) and its open pages at most (every CPU slot, every class, at the
 * page size chosen here: the classes of positives with values too, which
 * open pages only once values are added, but then a cache set to a limit
 * that left them out went past its bound and evicted every entry for them),
 * so that entries have room; or @limit itself, if smaller (a small cache
 * sized to its limit can always go back to it); never below
 * UDC_MEMORY_MIN.  A cache made with 64 MiB and set to 323 KiB (twice the
 * empty part alone) overshot it with its 64 KiB open pages.
 */
static size_t bytes_min_for(struct udc_cache *c, size_t limit)
{
	size_t own = cache_bytes_used(c);
	const struct slab *slabs[] = { c->slabs[ENT_NEGATIVE], c->slabs[ENT_POSITIVE], c->dir_slab };

	for (unsigned k = 0; k < sizeof(slabs) / sizeof(slabs[0]); k++)
		own += (size_t)slab_nr_cpus(slabs[k]) * slab_nr_classes(slabs[k]) *
		       slab_page_size(slabs[k]);
	size_t min = 2 * own < limit ? 2 * own : limit;
	return min > UDC_MEMORY_MIN ? min : UDC_MEMORY_MIN;
}

static int config_check(const struct udc_config *cfg)
{
	if (!cfg || cfg->size != sizeof(struct udc_config))
		return EINVAL;
	if (cfg->root == UDC_INO_NONE)
		return EINVAL;
	/* Below it, the cache's own part leaves no room for entries, and each
	 * call waited for reclaim that could free nothing (16 KiB: no add in
	 * 10 s). */
	if (cfg->memory_limit && cfg->memory_limit < UDC_MEMORY_MIN)
		return EINVAL;
	if (cfg->flags & ~(uint32_t)(UDC_CFG_NO_RECLAIM_THREAD | UDC_CFG_KEEP_UNLINKED))
		return EINVAL;
	if (cfg->backend && !cfg->backend->lookup && !cfg->backend->lookup_value)
		return EINVAL;
	return 0;
}

/* A number no other cache of this process had or will have (from 1; 0 is
 * a thread's "no hint"): 2^64 creates do not happen. */
static uint64_t cache_serial_next(void)
{
	static _Atomic uint64_t cache_serials;

	/* relaxed: only uniqueness matters (see Ordering) */
	return atomic_fetch_add_explicit(&cache_serials, 1, memory_order_relaxed) + 1;
}

static uint64_t coarse_now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC_COARSE, &ts);   /* the vDSO: no system call */
	return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

/* Ticks count from 1 (0 is "no deadline"); past 32 bits, the last one,
 * at which every deadline has passed: answers expire early, never late. */
static uint32_t ticks_of(const struct udc_cache *c, uint64_t ns)
{
	uint64_t t = ((ns - c->clock_base_ns) >> CACHE_TICK_SHIFT) + 1;

	return t < UINT32_MAX ? (uint32_t)t : UINT32_MAX;
}

uint32_t cache_ticks(const struct udc_cache *c)
{
	return ticks_of(c, coarse_now_ns());
}

uint32_t cache_deadline(const struct udc_cache *c, uint32_t ttl_ms)
{
	return ticks_of(c, coarse_now_ns() + (uint64_t)ttl_ms * 1000000u);
}

udc_cache *udc_create(const struct udc_config *cfg)
{
	int err = config_check(cfg);

	if (err) {
		errno = err;
		return NULL;
	}
	thread_enter();
	/*
	 * liburcu 0.13 makes the process's call_rcu thread on its first
	 * call_rcu and urcu_die()s (aborts) when that malloc or
	 * pthread_create fails: have it made here, once per process, rather
	 * than inside a later mutation, reclaim or udc_shrink.  From then on
	 * call_rcu never allocates, which entry_frees_wait() relies on.  The
	 * abort itself cannot be caught from outside liburcu (docs/ENGINE.md,
	 * Limitations).
	 */
	(void)get_default_call_rcu_data();

	size_t self, stripes = nr_stripes_for(cfg->memory_limit);
	struct udc_cache *c = cache_struct_alloc(stripes, &self);
	if (!c) {
		errno = ENOMEM;
		return NULL;
	}
	memset(c, 0, sizeof(*c) + stripes * sizeof(struct stripe));
	c->stripe_mask = stripes - 1;
	/* a name array has a bucket a stripe at least (engine/name_table.c) */
	c->min_buckets = min_buckets_for(cfg->memory_limit);
	if (c->min_buckets < stripes)
		c->min_buckets = stripes;
	atomic_init(&c->bytes_held, self);   /* the cache struct counts too */
	c->self_bytes = self;
	err = -hash_key_init(&c->key, cfg->hash_key);
	if (err)
		goto fail;
	c->serial = cache_serial_next();
	c->root = cfg->root;
	c->backend = cfg->backend;
	c->flags = cfg->flags;
	c->clock_base_ns = coarse_now_ns();
	c->ttl_ms[ENT_POSITIVE] = cfg->positive_ttl_ms;
	c->ttl_ms[ENT_NEGATIVE] = cfg->negative_ttl_ms;
	c->membarrier = membarrier_available();
	atomic_init(&c->names_buckets, c->min_buckets);
	atomic_init(&c->dirs_buckets, c->min_buckets);
	dir_reap_init(c);
	forget_init(c);
	udc_spin_init(&c->free_lock);
	CDS_INIT_LIST_HEAD(&c->frees_flight);
	ck_sequence_init(&c->rename_seq);
	udc_mutex_init(&c->rename_lock);
	for (unsigned i = 0; i <= c->stripe_mask; i++) {
		udc_mutex_init(&c->stripes[i].lock);
		udc_cond_init(&c->stripes[i].cond);
		CDS_INIT_LIST_HEAD(&c->stripes[i].inflight);
	}
	err = -name_table_init(&c->names, c->min_buckets);   /* sized by us (above) */
	c->dirs = table_create(c->min_buckets);
	if (err || !c->dirs || shrink_create(c, cfg, &c->shrink) || entry_slabs_create(c) ||
	    dir_slab_create(c)) {
		err = ENOMEM;
		goto fail;
	}
	c->bytes_min = bytes_min_for(c, shrink_limit(c->shrink));
	err = -shrink_reclaimer_start(c->shrink);
	if (!err)
		err = -fork_register(c);   /* a child of fork() can use it (engine/fork.c) */
	if (err)
		goto fail_thread;
	return c;

fail_thread:
	shrink_reclaimer_stop(c->shrink);
fail:
	entry_slabs_destroy(c);
	dir_slab_destroy(c);
	if (c->shrink)
		shrink_destroy(c->shrink);
	if (atomic_load_explicit(&c->names.cur, memory_order_relaxed))   /* relaxed: alone */
		name_table_fini(&c->names);
	if (c->dirs)
		cds_lfht_destroy(c->dirs, NULL);
	cache_struct_free(c);
	errno = err;
	return NULL;
}

void udc_destroy(udc_cache *c)
{
	struct name_array *a;
	struct name_node *n;
	struct udc_entry *e;

	if (!c)
		return;
	thread_enter();
	int cs = cancel_hold();   /* a destroy cancelled in a wait would leave it half freed */
	fork_unregister(c);       /* no fork restarts its reclaim thread now */
	shrink_reclaimer_stop(c->shrink);   /* first: it uses everything below */
	udc_assert_expensive(engine_check(c) == 0);   /* alone: a quiet moment */
	/*
	 * Nobody reads the tables any more (alone), so nothing is unpublished
	 * one by one (11 M entries took 16 s that way: a delete each, then
	 * the frees): the entries' external names go, if any entry has one,
	 * and the entries go with their slab pages, the tables with their
	 * bucket arrays (table_free), the directories in one pass.
	 */
	/* relaxed: alone (see nr_ext) */
	if (atomic_load_explicit(&c->nr_ext, memory_order_relaxed) > 0) {
		rcu_read_lock();   /* not needed alone; table_for_each's rule */
		name_table_for_each(&c->names, a, n) {
			e = entry_of(n);
			if (entry_apart(e))
				entry_ext_free(c, e);
		}
		rcu_read_unlock();
	}
	entry_free_flush(c);
	/* Every deferred free has run (not rcu_barrier, which allocates and
	 * aborts when memory is out: our callbacks are counted). */
	rcu_pending_wait(&c->rcu_pending);
	udc_assert(cds_list_empty(&c->frees_flight));   /* every batch ran or was landed */
	/* relaxed: alone */
	udc_assert(atomic_load_explicit(&c->nr_ext, memory_order_relaxed) == 0);
	entry_slabs_destroy(c);   /* every page, entries in them or not */
	dir_free_all(c);
	dir_slab_destroy(c);   /* the directories and their extensions, with the pages */
	shrink_destroy(c->shrink);
	name_table_fini(&c->names);
	table_free(c->dirs);
	for (unsigned i = 0; i < STATS_CHUNKS; i++) {
		struct stats_chunk *ch = atomic_load_explicit(&c->stats[i], memory_order_relaxed);
		if (ch)
			mem_free_line(c, ch, sizeof(*ch));
	}
	for (unsigned i = 0; i <= c->stripe_mask; i++) {
		udc_mutex_destroy(&c->stripes[i].lock);
	}
	udc_mutex_destroy(&c->rename_lock);
	/* Everything allocated through the cache has come back. */
	udc_assert(atomic_load(&c->bytes_held) == c->self_bytes);
	cache_struct_free(c);
	cancel_release(cs);
}

/* ------------------------------------------------------------------ */
/* what the policy reads of the cache (engine/engine.h) */

struct slab *cache_slab(struct udc_cache *c, enum entry_kind kind)
{
	return c->slabs[kind];
}

struct slab *cache_dir_slab(struct udc_cache *c)
{
	return c->dir_slab;
}

/* The estimates: what the threads hold back (entry_count) is left out,
 * so either may read below 0 for a moment. */
size_t cache_entry_bytes(struct udc_cache *c)
{
	/* relaxed: a size estimate (see the memory accounting fields) */
	int64_t b = atomic_load_explicit(&c->entry_bytes, memory_order_relaxed);

	return b > 0 ? (size_t)b : 0;
}

int64_t cache_nr_entries(struct udc_cache *c)
{
	/* relaxed: a size estimate */
	int64_t n = atomic_load_explicit(&c->nr_entries, memory_order_relaxed);

	return n > 0 ? n : 0;
}

int64_t cache_nr_dirs(struct udc_cache *c)
{
	/* relaxed: a size estimate */
	return atomic_load_explicit(&c->nr_dirs, memory_order_relaxed);
}

size_t cache_dirs_bytes(struct udc_cache *c)
{
	return slab_bytes(c->dir_slab);
}

struct thread_stats *cache_stats(struct udc_cache *c)
{
	return thread_stats(c);
}

void engine_thread_enter(void)
{
	thread_enter();
}

/* ------------------------------------------------------------------ */
/* the public calls that are the policy's */

size_t udc_shrink(udc_cache *c, size_t bytes)
{
	if (!c || bytes == 0)
		return 0;
	thread_enter();
	int cs = cancel_hold();   /* it waits for grace periods, the policy's lock held */
	size_t freed = shrink_bytes(c->shrink, bytes);
	cancel_release(cs);
	return freed;
}

int udc_set_memory_limit(udc_cache *c, size_t bytes)
{
	if (!c || (bytes && bytes < c->bytes_min))
		return -EINVAL;
	thread_enter();
	int cs = cancel_hold();   /* its reclaim may wait */
	int err = shrink_set_limit(c->shrink, bytes);
	cancel_release(cs);
	return err;
}

/* Sum every thread's slot of c. */
void stats_sum(struct udc_cache *c, struct thread_stats *sum)
{
	memset(sum, 0, sizeof(*sum));
#define X(name, meaning)                                                                  \
	atomic_store_explicit(&sum->name,                                                 \
			      atomic_load_explicit(&sum->name, memory_order_relaxed) +    \
				      atomic_load_explicit(&ts->name, memory_order_relaxed), \
			      memory_order_relaxed);
	for (unsigned i = 0; i <= STATS_CHUNKS; i++) {
		struct stats_chunk *ch =
			i < STATS_CHUNKS ? atomic_load_explicit(&c->stats[i], memory_order_acquire)
					 : NULL;
		unsigned n = ch ? STATS_PER_CHUNK : (i == STATS_CHUNKS ? 1 : 0);
		for (unsigned j = 0; j < n; j++) {
			const struct thread_stats *ts = ch ? &ch->slot[j] : &c->shared_stats;
			UDC_THREAD_STATS(X)
		}
	}
#undef X
}

static uint64_t gauge(uint64_t added, uint64_t dropped)
{
	return added >= dropped ? added - dropped : 0;   /* counts read mid-update */
}

void udc_stats_get(udc_cache *c, struct udc_stats *st)
{
	struct thread_stats t;

	if (!c || !st || st->size < UDC_STATS_SIZE_V0 || st->size > sizeof(*st))
		return;
	stats_sum(c, &t);
#define G(name) atomic_load_explicit(&t.name, memory_order_relaxed)
	struct udc_stats s = {
		.size = st->size,
		/* every lookup counts one of these three (one store a hit, not two) */
		.lookups = G(hits_positive) + G(hits_negative) + G(misses),
		.hits_positive = G(hits_positive),
		.hits_negative = G(hits_negative),
		.misses = G(misses),
		.backend_calls = G(backend_calls),
		.nr_positive = gauge(G(pos_added), G(pos_dropped)),
		.nr_negative = gauge(G(neg_added), G(neg_dropped)),
		.evictions = G(evictions),
		.bytes_used = cache_bytes_used(c),
		.bytes_limit = shrink_limit(c->shrink),
		.membarrier = c->membarrier,
		.nr_dirs = (uint64_t)atomic_load_explicit(&c->nr_dirs, memory_order_relaxed),
		.stale_answers = G(stale_answers),
		.walk_retries = G(walk_retries),
		.entries_moved = G(moved),
		.entries_promoted = G(promoted),
		.refaults = G(refaults_neg) + G(refaults_pos),
		.negatives_aged = G(aged),
		.negatives_declined = G(declined),
		.bytes_slack = shrink_slack(c->shrink),
		.throttled = G(throttled),
		.bytes_min = c->bytes_min,
		.resident_bytes = st->size >= offsetof(struct udc_stats, resident_bytes) +
							sizeof(st->resident_bytes) ?
					  slab_resident_bytes() :
					  0,
	};
#undef G
	memcpy(st, &s, st->size);   /* fields past the caller's size stay untouched */
}

void udc_thread_offline(udc_cache *c)
{
	if (!c)
		return;
	/*
	 * urcu-memb: a thread outside a read-side section never holds up a
	 * grace period, so there is nothing to tell RCU.  What a thread could
	 * hold is nothing: open pages and free batches are per CPU.  Hand the
	 * batches to RCU anyway, as a thread going idle would want.
	 */
	thread_enter();
	entry_free_flush(c);
}

void udc_thread_online(udc_cache *c)
{
	if (!c)
		return;
	thread_enter();
}

/* A count of references by directory object, in engine_check's mapping:
 * open addressing over a power of two of slots at most half full. */
struct holder_slot {
	const struct udc_dir *d;
	size_t n;
};

static struct holder_slot *holder_slot(struct holder_slot *t, size_t mask, const struct udc_dir *d)
{
	size_t i = (size_t)(((uintptr_t)d >> 6) * 0x9e3779b97f4a7c15u >> 20) & mask;

	while (t[i].d && t[i].d != d)
		i = (i + 1) & mask;
	return &t[i];
}

/* engine_check, the name table's resizes held off. */
static int engine_check_held(struct udc_cache *c)
{
	struct name_array *a;
	struct name_node *nn;
	struct cds_lfht_iter it;
	struct cds_lfht_node *n;
	struct udc_entry *e;
	struct udc_dir *d;
	int64_t entries = 0, pos = 0, neg = 0, probation[SHRINK_CLIENT_TAGS] = { 0 };
	size_t slots = 0;
	int bad = 0;

#define CHECK(cond, ...)                                                          \
	do {                                                                      \
		if (!(cond)) {                                                    \
			fprintf(stderr, "engine_check: " __VA_ARGS__);            \
			fputc('\n', stderr);                                      \
			bad = 1;                                                  \
		}                                                                 \
	} while (0)

	/* Each entry holds its directory object: the objects' references,
	 * quiet, are their entries' (a missing hold frees an object under
	 * its entries; an extra one keeps it for ever).  The count by object
	 * comes from mmap, not malloc: udc_destroy runs this and must not
	 * allocate (tests/fault).  Unchecked if the mapping fails. */
	size_t room = 0;

	rcu_read_lock();
	name_table_for_each(&c->names, a, nn)
		room++;
	rcu_read_unlock();
	size_t slots_n = 64;
	while (slots_n < 2 * room)
		slots_n <<= 1;
	size_t map_len = slots_n * sizeof(struct holder_slot);
	struct holder_slot *holds = mmap(NULL, map_len, PROT_READ | PROT_WRITE,
					 MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (holds == MAP_FAILED)
		holds = NULL;

	rcu_read_lock();
	name_table_for_each(&c->names, a, nn) {
		e = entry_of(nn);
		if (holds && room) {   /* quiet: the count stands */
			struct holder_slot *h = holder_slot(holds, slots_n - 1, e->dir);
			h->d = e->dir;
			h->n++;
			room--;
		}
		entries++;
		slots += entry_slot_size(c, e);
		CHECK(e->len >= 1, "entry with empty name");
		CHECK(e->kind == ENT_POSITIVE || e->kind == ENT_NEGATIVE, "bad kind %u", e->kind);
		CHECK(name_check(entry_name(e), e->len) == 0 && !name_is_dotdot(entry_name(e), e->len),
		      "entry with a bad name");
		CHECK(dir_find_rcu(c, dir_ino(c, e->dir)) == e->dir, "entry's dir not in the dir table");
		uint64_t h = hash_name(&c->key, dir_ino(c, e->dir), entry_name(e), e->len);
		const struct name_key k = name_key_of(c, dir_ino(c, e->dir), entry_name(e), e->len);
		CHECK(entry_find_rcu(c, h, &k) == e, "entry not found by its own key (duplicate?)");
		if (e->kind == ENT_POSITIVE) {
			pos++;
			CHECK(entry_pos(e)->ino != UDC_INO_NONE, "positive with no ino");
		} else {
			neg++;
			if (shrink_class_probation(
				    slab_page_class(slab_page_of(c->slabs[ENT_NEGATIVE], e))))
				probation[neg_client(e)]++;
		}
	}
	int64_t counted = 0;
	table_for_each(c->dirs, &it, n) {
		d = dir_of(n);
		counted += atomic_load(&d->nr_positive);
		size_t holders = holds ? holder_slot(holds, slots_n - 1, d)->n : 0;
		/* a dead object (the reaper's, refs < 0) has no holder left */
		CHECK(!holds || (atomic_load(&d->refs) < 0 ? holders == 0 :
				 atomic_load(&d->refs) == (int64_t)holders),
		      "dir %llu: %lld references, %zu entries hold it", (unsigned long long)dir_ino(c, d),
		      (long long)atomic_load(&d->refs), holders);
		CHECK(atomic_load(&d->refs) >= atomic_load(&d->nr_positive) ||
			      atomic_load(&d->refs) < 0,
		      "dir %llu: %lld references for %lld positives", (unsigned long long)dir_ino(c, d),
		      (long long)atomic_load(&d->refs), (long long)atomic_load(&d->nr_positive));
		CHECK(atomic_load(&d->refs) != 0 || (atomic_load(&d->state) & DIR_IDLE),
		      "dir %llu: idle but not queued for the reaper", (unsigned long long)dir_ino(c, d));
		CHECK(listing_check(d) == 0, "dir %llu: its listing (above)", (unsigned long long)dir_ino(c, d));
	}
	rcu_read_unlock();
	if (holds)
		munmap(holds, map_len);
	/* Every positive's directory is in the directory table (the entry
	 * holds it), so its count is summed above. */
	CHECK(counted == pos, "directories count %lld positives, the table holds %lld",
	      (long long)counted, (long long)pos);

	/* Exact when quiet: the cache's counters and what the slots hold back. */
	struct thread_stats held;
	stats_sum(c, &held);
	int64_t counted_bytes = atomic_load(&c->entry_bytes) + (int64_t)atomic_load(&held.entry_bytes_unfolded);
	int64_t counted_entries = atomic_load(&c->nr_entries) + (int64_t)atomic_load(&held.entries_unfolded);
	CHECK((int64_t)slots == counted_bytes, "entries' slots %zu bytes, counted %lld", slots,
	      (long long)counted_bytes);
	struct udc_stats st = { .size = sizeof(st) };
	udc_stats_get(c, &st);
	CHECK(entries == counted_entries, "table holds %lld, counted %lld", (long long)entries,
	      (long long)counted_entries);
	rcu_read_lock();   /* a resize after all would free the array it reads */
	size_t misplaced = name_table_check(&c->names);
	rcu_read_unlock();
	CHECK(misplaced == 0, "%zu entries in a chain not of their hash, or missing from its summary",
	      misplaced);
	CHECK((uint64_t)pos == st.nr_positive, "positives: %lld held, stats %llu", (long long)pos,
	      (unsigned long long)st.nr_positive);
	CHECK((uint64_t)neg == st.nr_negative, "negatives: %lld held, stats %llu", (long long)neg,
	      (unsigned long long)st.nr_negative);
	for (unsigned t = 0; t < SHRINK_CLIENT_TAGS; t++) {
		int64_t told = shrink_probation_counted(c->shrink, (uint8_t)t) +
			       (t ? 0 : (int64_t)atomic_load(&held.anon_probation_unfolded));
		CHECK(probation[t] == told, "client tag %u: %lld negatives in probation, counted %lld",
		      t, (long long)probation[t], (long long)told);
	}
#undef CHECK
	return bad ? -EUCLEAN : 0;
}

int engine_check(struct udc_cache *c)
{
	name_table_hold(&c->names);   /* a resize would move nodes under the walks */
	int bad = engine_check_held(c);
	name_table_release(&c->names);
	return bad;
}
