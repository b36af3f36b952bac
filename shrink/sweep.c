/* SPDX-License-Identifier: MIT */
/*
 * shrink/sweep.c - the page sweeper: S3-FIFO over slab pages, with ghosts.
 *
 * Owns: the two queues of each entry kind, the visit of a swept page's
 * entries, the ghost table, the negatives' share and the choice of what to
 * sweep (sweep_reclaim, under memory pressure; sweep_age, with none), and
 * the trim of directories past their bound (sweep_trim).
 *
 * Queues: an entry kind's slab has twin classes per size (shrink_slab_config):
 * probation (even; filled once, so a probation page is a FIFO segment of
 * entries made at about the same time) and main (odd).  New entries go to
 * probation, or to main when their ghost is remembered (a refault).  The
 * sweeper takes the oldest pages of a queue (slab_sweep: oldest retired or
 * swept first) and visits their entries:
 *   probation: not hit (a file's positive: hit at most once,
 *     promote_hits) -> evicted, a ghost left, unless it is a
 *     client's negative under its fair share (requeue_due: admit.c's
 *     shares, at most REQUEUE_MAX times, never anonymous, never when
 *     ageing) -> requeued (moved into an open page of its own class, the
 *     young end of the FIFO, entry_requeue_move); hit -> promoted (moved
 *     into a main page, cds_lfht_replace, its hits less one); stale (its
 *     directory's generation moved on) -> dropped.  The page empties and
 *     goes back whole after the grace period.  Requeued copies count with
 *     the promoted ones against the in-flight bound (PROMOTE_INFLIGHT_DIV);
 *     a copy that finds no room is evicted instead.
 *   main (CLOCK): hit -> reinserted (moved into an open page of its
 *     class, the young end, its hits less one; kept in place when no copy
 *     can be made; an entry alone in its directory needs two hits, as
 *     its eviction frees the object too: main_hits_to_keep); not hit ->
 *     evicted, a ghost left (ARC's second ghost list, in the same table);
 *     stale -> dropped.  The page empties and goes back whole, as probation's do: kept in place, survivors left
 *     pages 73-84% live that refills skip (a quarter free is their
 *     threshold), and the sweep took hot entries to free room in them.
 * Readers only ever raise hits (lookup.c); only the sweeper lowers it
 * (entry_hits_spend).
 *
 * What to sweep (S3-FIFO's rule, per kind): probation while it holds more
 * than PROBATION_SHARE of the kind's pages, else main; negatives first
 * while their pages pass sh->neg_share percent of all entry pages, else
 * positives.  neg_share adapts within [NEG_SHARE_MIN, NEG_SHARE_MAX] to
 * the kind whose evictions refault more per byte (the marginal hit rate),
 * read each time reclaim has evicted 1/ADAPT_TURNOVER_DIV of the limit,
 * from averages over the last windows, a point or more by how far apart
 * the two rates are (adapt_share).
 *
 * Ghosts: a table of 16-bit fingerprints indexed by the name hash, 3/4
 * of a slot per entry the cache holds when evictions run (so it remembers
 * less than a turnover of evictions), at most one per 64 bytes of the
 * limit (3% of it, the lasting ghosts a quarter more); small until the
 * first eviction, grown by the sweeper and made smaller when the limit
 * falls.  A false refault (a new name matching
 * a ghost) is a 1 in 32768 chance per slot filled.  A new entry whose slot
 * holds its fingerprint takes it (refault) and goes straight to main
 * (shrink_entry_class).  Lasting ghosts, in a quarter as many slots,
 * remember one in LASTING_SAMPLE of the clients' negatives evicted unhit
 * from probation, for about 12 turnovers: a client's name found there
 * credits its client with that many uses (admit.c's earning) and goes to
 * probation.
 *
 * Trim (sweep_trim): a directory past its bound (admit.c) keeps its new
 * negatives, and loses its oldest that no lookup hit instead: a round
 * over the negatives' pages, oldest first in each class, in bounded
 * batches with cursors of its own (sh->trim_cursor), while negatives were
 * admitted past a bound (sh->trim_excess); each round starts again from
 * the oldest pages.
 *
 * Locking: the reclaim entry points run with sh->lock held (one sweeper
 * at a time; it protects neg_share's adaptation state, the garbage
 * rounds, the trim's cursors, and the fair shares a batch took, struct
 * sweep_pass).  A visit asks the engine to evict or move the entry
 * (engine/evict.c, which takes the engine's locks).  The ghost slots,
 * lasting ones too, take no lock: relaxed 16-bit loads and stores (a
 * ghost lost or overwritten by a race is a missed refault or use,
 * nothing worse); the table is read under
 * rcu_read_lock and a replaced one freed after a grace period
 * (ghost_resize, with sh->lock held, call_rcu).
 *
 * Ordering: hits is relaxed everywhere (a heuristic), and so is
 * trim_excess (a work estimate).  The ghost table is
 * published with a release store and read with acquire loads (fp_put,
 * fp_take).  What eviction and promotion need of the table and the
 * directories is engine/evict.c's.
 *
 * Probes (common/probe.h): evict for each entry evicted (with its reason),
 * promote, refault, and sweep_batch for each slab_sweep call (sweep_class).
 * Requeues are counted (the requeued statistic), with no probe.
 */
#include "shrink/internal.h"
#include "common/probe.h"

#include <errno.h>
#include <string.h>
#include <time.h>

#define SWEEP_BATCH 1024              /* work units per slab_sweep call (about a page) */
#define SWEEP_OPEN_MAX_MS 1000        /* an open page not filled in this long gets swept */
#define OPEN_SHARE_DIV 64             /* open pages: at most 1/64 of the limit */
#define RETAINED_SHARE_DIV 16         /* retained pages: at most 1/16 of it, in both slabs */
/* While the cache is roomy (under 3/4 of its limit: reclaim.c's
 * reclaim_roomy), at most 1/4: the pages a churn's grace periods empty
 * come back in bursts that a 16th's cap sent to the OS at a small limit
 * the cache was far under (at 16 MiB, 12,600 madvise calls and 33,900
 * page faults in 3 s of churn, 0.6x lru-mutex's throughput; issue 16,
 * stop 46).  Past the mark the slabs give back what is over a 16th. */
#define RETAINED_ROOMY_DIV 4
#define RETAINED_MIN 2                /* empty pages a slab may keep for reuse: 2..512 */
#define RETAINED_MAX 512              /* 32 MiB of 64 KiB pages: a 1 GiB limit's share */
/* Without the reclaim thread, nothing gives spare pages back while the
 * cache idles (slab_trim runs in calls): the ones a burst left may stay
 * for good, so there are fewer (4 MiB of 64 KiB pages; with 512 an idle
 * cache kept 54% of a fill's RSS growth 2 s after removing 90% of it:
 * threads_memory/rss_follows_the_cache). */
#define RETAINED_MAX_UNTRIMMED 64
#define PROBATION_SHARE 10            /* % of a kind's pages that probation may hold */
#define NEG_SHARE_INIT 20             /* % of entry pages for negatives (FreeBSD's cap) */
#define NEG_SHARE_MIN 5
#define NEG_SHARE_MAX 60
/* neg_share is read each time evictions reach this fraction of the limit
 * (a window): at the pace the cache turns over, whatever the clock says.
 * Every 200 ms, a replay of perl-modules x618 at a quarter of its
 * footprint (2-3 s a pass, 2.6 turnovers) adapted 3 times in all and kept
 * negatives at 19-20% of the pages (issue 14, choice).  A window's
 * refaults and evicted bytes go into averages that lose ADAPT_DECAY of
 * their weight a window (about half a turnover of memory), and the share
 * moves a point per doubling of the rates' ratio past ADAPT_HYSTERESIS, at
 * most ADAPT_STEP_MAX points a window.  A point per 1/32 of the limit on
 * one window's rates went round in slow swings (bash-path x1316 at half
 * its footprint: 5% to 46% and back within a pass, negatives' backend
 * lookups doubled in half the runs): refaults answer for evictions made up
 * to a turnover (the ghosts' memory) before, so 32 points a turnover
 * overshot, and a replay's phases swung one window's rates. */
#define ADAPT_TURNOVER_DIV 8
#define ADAPT_EVENTS_MIN 64           /* refaults a window needs to be read */
#define ADAPT_DECAY 0.25
#define ADAPT_HYSTERESIS 1.25
#define ADAPT_STEP_MAX 4
/* Promoted copies are allocated now and their old slots freed a grace
 * period later: past 1/PROMOTE_INFLIGHT_DIV of the slack of them, the
 * sweep waits for it, so that promotions never push bytes_used past the
 * bound (a fixed 128 KiB took a 2 MiB cache, slack 84 KiB, to 1.10 x its
 * limit when its first sweep found every entry hit). */
#define PROMOTE_INFLIGHT_DIV 4
/* Times an unhit client negative may be requeued in probation (its fair
 * share's second chance) before it is evicted like any other; a client
 * that has earned its place, while clients that have not (or anonymous
 * ones) have negatives in probation to go first, up to REQUEUE_MAX_BEHIND
 * times.  Eight requeues were not enough against an anonymous scanner at
 * 0.9 M misses/s: it turned probation over about every 100 ms, so a
 * victim's name lived 0.9 s there, against its period of 1 s, and the
 * victim kept 28-83% of its set (BENCHMARKS.md, issue 14, stop 23). */
#define REQUEUE_MAX 8
#define REQUEUE_MAX_BEHIND 64
/* An entry alone in its directory frees the object with it (128 bytes,
 * two to three times an entry's slot, when this was chosen; 48 since
 * issue 14's stop 39, where one hit lost again: 0.896 of lru-mutex's
 * backend lookups on the 32 replay rows, against 0.884): main keeps it for
 * two hits, where others need one.  On the 14 rows of scripts/replay_ab.sh, against one
 * hit: 12 rows 0.5-3.9% fewer backend lookups (bash-path at 608 KB -3.9%,
 * gcc x313 at 500 KB -3.6%), none worse beyond its spread.  Three hits
 * (the counter's top) gained more at small limits (gcc -9.1%, git-status
 * at 6.7 MB -8.0%) but lost at half the footprint (perl-modules +7.0%,
 * node-require +4.9% against two); weighing a directory of two entries
 * as well, or asking a lone entry for two hits before its promotion from
 * probation, changed no row consistently (BENCHMARKS.md, issue 14, stop
 * 26). */
#define LONE_HITS_TO_KEEP 2
/* Hits since its insertion that promote a file's positive in probation to
 * main: two.  The first hit most often follows the insertion in the same
 * program's next system call (a stat then an open, an access then an
 * exec): a correlated reference (LRU-K's, 2Q's), one use.  With one hit,
 * every file a program stats then opens reached main and pushed out what
 * was hit for good: tar-rm, whose reader stats and opens each source file
 * once a pass, made more backend lookups than lru-mutex at 5-25% of its
 * footprint, the chmods and locale files its processes hit all along
 * evicted.  An entry evicted with one hit leaves a ghost: a name that
 * comes back within a turnover still goes straight to main.  A negative
 * needs one: a failed lookup is rarely repeated at once (a program tries
 * the next path), and a client's useful negatives that come back once a
 * round must be promoted to hold their place against scanners
 * (bounds/a_victims_negatives_outlive_many_turnovers_of_rotating_ids:
 * 58% of its lookups hit with two, all with one).  On the 36 replay
 * rows: 35 at or under lru-mutex's backend lookups (32 with one), 29
 * within 2% of s3fifo's (24), 0.4% fewer in all (BENCHMARKS.md, issue
 * 14, stop 44).  A directory's name needs one, as a negative does: its
 * hits are walks through it to other names, not one use seen twice, and
 * with two, the directories a program uses twice a run (/etc for
 * ld.so.preload then ld.so.cache, /lib for two libraries) went before
 * its next run: make-build at half its footprint missed each copy's
 * /etc, /lib, /usr/include, /dev/null and /home/user, which s3fifo at
 * the same entries kept.  On the 36 rows: all at or under lru-mutex's
 * backend lookups (34 with two; gcc at 5% 0.995x from 1.037x), 0.9%
 * fewer in all; the rows at half the footprint gave back up to 6%
 * (git-status, node-require) (BENCHMARKS.md, issue 14, stop 45). */
#define POS_PROMOTE_HITS 2
/* The ghosts' slots: 3/4 of the entries the cache holds, rounded up to
 * one of four sizes a doubling (0.75-0.94 of them).  A slot keeps the
 * last of the names hashed to it, so the table remembers about as many
 * evictions as it has slots.  The next power of
 * two above the entries (1-2 of them, as it fell) let names evicted a
 * whole pass earlier come back to main as refaults (make-build x1924 at
 * half its footprint: 35,500 refaults a run against s3fifo's 5,200), and
 * main, full of them, evicted the directories each copy uses once a
 * pass, which s3fifo kept.  On the 36 replay rows, against it: 0.5%
 * fewer backend lookups in all, 3-9% fewer at half the footprint
 * (git-status, gcc, perl-modules, make-build), node-require and
 * git-commit at 10-25% up to 1.7% more (BENCHMARKS.md, issue 14, stop
 * 47); 0.3% fewer than 9/10 (S3-FIFO's |G|, whose ghost queue holds
 * probation's evictions alone, where this table has main's too),
 * make-build at 50% 3% fewer.  Either, tried alone (stop 46), cost a
 * victim its set to rotating ids in about 7 runs of 12 under load
 * (bounds/a_victims_negatives_outlive_many_turnovers_of_rotating_ids):
 * the victim earned its place only if one of its names, evicted twelve
 * turnovers before, still had its ghost.  The lasting ghosts (below)
 * tell that now (stop 47: none of 16 at 9/10, none of 16 at 3/4). */
#define GHOST_SHARE_NUM 3
#define GHOST_SHARE_DEN 4
#define GHOST_BYTES_PER_SLOT 64       /* of the limit: at most one slot per 64 bytes */
/* Lasting ghosts: whether a client's negatives come back is also
 * remembered for one name in LASTING_SAMPLE of those evicted unhit from
 * probation (by hash), in a quarter of the ghosts' slots, so for about
 * LASTING_SAMPLE / LASTING_DIV times as many evictions: 12 turnovers of
 * a cache of client negatives, where the ghosts remember 3/4.  A name
 * found there is not a refault (it goes to probation, as any new name);
 * its client is credited with LASTING_SAMPLE uses (admit.c's earning),
 * the sample's others.  A victim that looks up its set once every twelve
 * turnovers of rotating ids earned its place only when one of its 5,000
 * names still had its ghost, which 3/4 or 9/10 of the entries' ghosts
 * made a coin toss (bounds/a_victims_negatives_outlive_many_turnovers_of_rotating_ids,
 * about 7 runs in 12 under load). */
#define LASTING_SAMPLE 64u
#define LASTING_DIV 4u
#define GHOST_MIN_SLOTS 4096u       /* from a 1 MiB limit up; fewer below (ghost_min_slots) */
#define GHOST_MAX_SLOTS (1u << 24)

/* ------------------------------------------------------------------ */
/* ghosts */

/* The slots are an allocation of their own, of one of jemalloc's size
 * classes (ghost_size): with the header in it, 2^21 slots (4 MiB + 32
 * bytes) took jemalloc's 5 MiB size class, a quarter of it wasted,
 * counted in bytes_used and not in the room its growth waited for. */
struct ghost_table {
	struct rcu_head rcu;        /* the free of a replaced table */
	struct shrink *sh;
	uint32_t n;                 /* slots (ghost_size: any number) */
	_Atomic uint16_t *slot;     /* n fingerprints, 0 = empty */
	_Atomic uint16_t *lasting;  /* lasting_slots(n) fingerprints, the same way */
};

static size_t ghost_slots_bytes(uint32_t slots)
{
	return (size_t)slots * sizeof(uint16_t);
}

/* The lasting ghosts' slots beside @n ghosts: a quarter (a size too). */
static uint32_t lasting_slots(uint32_t n)
{
	return n / LASTING_DIV > 16 ? n / LASTING_DIV : 16;
}

/* What a table of @slots adds to bytes_used (its header rounded up). */
static size_t ghost_table_bytes(uint32_t slots)
{
	return 64 + ghost_slots_bytes(slots) + ghost_slots_bytes(lasting_slots(slots));
}

static uint16_t ghost_fp(uint64_t hash)
{
	return (uint16_t)(hash >> 48) | 1;   /* never 0, the empty slot */
}

/* The slot of @hash in a table of @n: its low 32 bits scaled to n (the
 * fingerprint is the top 16), so that n need not be a power of two. */
static uint32_t ghost_index(uint64_t hash, uint32_t n)
{
	return (uint32_t)(((hash & 0xffffffffu) * (uint64_t)n) >> 32);
}

/* Fill @n slots with what they can hold of @old's @old_n (slot j takes
 * the old slot its hashes had, j scaled to the old size; at the edges of
 * the old slots a ghost may be lost), or empty ones. */
static void ghost_slots_copy(_Atomic uint16_t *slot, uint32_t n, _Atomic uint16_t *old,
			     uint32_t old_n)
{
	for (uint32_t i = 0; i < n; i++)
		/* relaxed: copied while clients may still write the old one */
		atomic_init(&slot[i], old ? atomic_load_explicit(&old[(uint64_t)i * old_n / n],
								 memory_order_relaxed)
					  : 0);
}

/* A table of @n slots holding what it can of @old's ghosts; NULL on
 * ENOMEM, or when a larger one would pass the bound (mem_alloc).  A
 * smaller one is made past it (it replaces @old: mem_alloc_over). */
static struct ghost_table *ghost_table_new(struct shrink *sh, uint32_t n,
					   const struct ghost_table *old)
{
	void *(*alloc)(struct udc_cache *, size_t) =
		old && n < old->n ? mem_alloc_over : mem_alloc;
	struct ghost_table *g = alloc(sh->c, sizeof(*g));
	uint32_t ln = lasting_slots(n);

	if (!g)
		return NULL;
	g->slot = alloc(sh->c, ghost_slots_bytes(n));
	g->lasting = g->slot ? alloc(sh->c, ghost_slots_bytes(ln)) : NULL;
	if (!g->lasting) {
		if (g->slot)
			mem_free(sh->c, (void *)g->slot, ghost_slots_bytes(n));
		mem_free(sh->c, g, sizeof(*g));
		return NULL;
	}
	g->sh = sh;
	g->n = n;
	ghost_slots_copy(g->slot, n, old ? old->slot : NULL, old ? old->n : 0);
	ghost_slots_copy(g->lasting, ln, old ? old->lasting : NULL, old ? lasting_slots(old->n) : 0);
	return g;
}

static void ghost_table_free(struct ghost_table *g)
{
	mem_free(g->sh->c, (void *)g->lasting, ghost_slots_bytes(lasting_slots(g->n)));
	mem_free(g->sh->c, (void *)g->slot, ghost_slots_bytes(g->n));
	mem_free(g->sh->c, g, sizeof(*g));
}

RCU_PENDING_CALLBACK(ghost_table_free_rcu, struct ghost_table, rcu, sh->rcu_pending,
		     ghost_table_free)

/* The table's smallest size: GHOST_MIN_SLOTS, or under a 1 MiB limit one
 * slot per 256 bytes of it (a 256 KiB cache's empty footprint was a
 * quarter ghosts), at least 64. */
static uint32_t ghost_min_slots(size_t limit)
{
	uint32_t n = GHOST_MIN_SLOTS;

	while (n > 64 && (size_t)n * 256 > limit)
		n >>= 1;
	return n;
}

/* The table sizes: four steps a doubling (2^k, then 1.25, 1.5 and 1.75
 * times it), @n rounded up or down to one.  Their bytes are jemalloc's
 * size classes (no slack counted in bytes_used), and a cache that fills
 * resizes its table a few times a doubling. */
static uint32_t ghost_size(uint64_t n, bool up)
{
	if (n <= 8)
		return (uint32_t)n;
	uint64_t step = 1ull << (61 - __builtin_clzll(n - 1));   /* a quarter of n's power of two */

	return (uint32_t)(up ? (n + step - 1) & ~(step - 1) : n & ~(step - 1));
}

/* The slots ghosts should have now: 3/4 of the entries the cache holds
 * (it is full when reclaim runs), rounded up to a size, at most one per
 * 64 bytes of the limit. */
static uint32_t ghost_slots_wanted(struct udc_cache *c, size_t limit)
{
	uint64_t most = ghost_size(limit / GHOST_BYTES_PER_SLOT, false);
	uint64_t entries = (uint64_t)cache_nr_entries(c);
	uint32_t n = ghost_min_slots(limit);
	uint64_t want = ghost_size(entries * GHOST_SHARE_NUM / GHOST_SHARE_DEN, true);

	if (want <= n || most <= n)
		return n;
	want = want < most ? want : most;
	return (uint32_t)(want < GHOST_MAX_SLOTS ? want : GHOST_MAX_SLOTS);
}

/* Replace the table by one of @n slots: 0, or -ENOMEM and nothing changed.
 * sh->lock held (one replacer); readers may hold the old table until
 * a grace period, so it is freed by call_rcu. */
static int ghost_resize(struct shrink *sh, uint32_t n)
{
	lock_assert_held(&sh->lock);
	struct ghost_table *old = atomic_load_explicit(&sh->ghosts, memory_order_relaxed);

	if (old->n == n)
		return 0;
	struct ghost_table *g = ghost_table_new(sh, n, old);
	if (!g)
		return -ENOMEM;
	/* release: publishes the filled table (pairs with the acquire loads below) */
	atomic_store_explicit(&sh->ghosts, g, memory_order_release);
	atomic_store_explicit(&sh->ghost_slots, n, memory_order_relaxed);   /* a size hint */
	rcu_pending_add(&sh->rcu_pending);
	call_rcu(&old->rcu, ghost_table_free_rcu);
	return 0;
}

/*
 * Evictions start: ghosts for as many entries as the cache holds, grown
 * only (the cache empties as it is swept).  The growth is counted as used
 * before it is made (sweep_ghosts_growth, in reclaim_used), so that
 * eviction makes room for it first: made at once when evictions began, a
 * 4 MiB table at a 128 MiB limit took bytes_used 5 MiB past the limit (the
 * soak, without the reclaim thread; a 2 MiB one at 64 MiB, 1.9 MiB).
 */
size_t sweep_ghosts_growth(struct shrink *sh)
{
	/* relaxed: an estimate off the lock (the table itself may be freed
	 * under us: its size is kept apart); sweep_ghosts_grow looks again */
	uint32_t have = atomic_load_explicit(&sh->ghost_slots, memory_order_relaxed);

	/* Every call asks: the common answer without the sizes (a table of
	 * at least the smallest slots and its share of the entries wants
	 * none) */
	if (have >= GHOST_MIN_SLOTS &&
	    (uint64_t)cache_nr_entries(sh->c) * GHOST_SHARE_NUM / GHOST_SHARE_DEN <= have)
		return 0;
	uint32_t want = ghost_slots_wanted(sh->c, atomic_load_explicit(&sh->limit, memory_order_relaxed));

	return want > have ? ghost_table_bytes(want) : 0;
}

void shrink_bytes_parts(struct shrink *sh, struct shrink_bytes_parts *p)
{
	struct udc_cache *c = sh->c;
	struct slab_stats st;

	memset(p, 0, sizeof(*p));
	p->total = cache_bytes_used(c);
	p->dirs = cache_dirs_bytes(c);
	p->buckets = cache_buckets_bytes(c);
	/* relaxed: a size, as in sweep_ghosts_growth */
	p->ghosts = ghost_table_bytes(atomic_load_explicit(&sh->ghost_slots, memory_order_relaxed));
	uint64_t parts = p->dirs + p->buckets + p->ghosts;
	for (unsigned k = 0; k < 2; k++) {
		slab_stats(cache_slab(c, (enum entry_kind)k), &st);
		p->slab[k] = st.bytes;
		parts += st.bytes;
		for (unsigned cls = 0; cls < st.nr_classes; cls++) {
			bool main = cls == entry_main_class(cls);
			p->pages[k][main] += st.cls[cls].page_bytes;
			p->live[k][main] += st.cls[cls].objects * st.cls[cls].size;
		}
	}
	p->other = p->total > parts ? p->total - parts : 0;
}

void sweep_ghosts_grow(struct shrink *sh, size_t room)
{
	lock_assert_held(&sh->lock);
	uint32_t want = ghost_slots_wanted(sh->c, atomic_load_explicit(&sh->limit, memory_order_relaxed));

	/* Not now if it does not fit; -ENOMEM keeps the size: fewer ghosts. */
	if (want > atomic_load_explicit(&sh->ghosts, memory_order_relaxed)->n &&
	    ghost_table_bytes(want) <= room)
		ghost_resize(sh, want);
}

int sweep_create(struct shrink *sh)
{
	/* Small: ghosts are for evictions, and the table grows when they start. */
	uint32_t n = ghost_min_slots(atomic_load_explicit(&sh->limit, memory_order_relaxed));
	struct ghost_table *g = ghost_table_new(sh, n, NULL);

	if (!g)
		return -ENOMEM;
	atomic_init(&sh->ghosts, g);
	atomic_init(&sh->ghost_slots, n);
	atomic_init(&sh->neg_share, NEG_SHARE_INIT);
	return 0;
}

void sweep_destroy(struct shrink *sh)
{
	rcu_pending_wait(&sh->rcu_pending);   /* replaced tables freed */
	struct ghost_table *g = atomic_load_explicit(&sh->ghosts, memory_order_relaxed);

	if (g)
		ghost_table_free(g);
	atomic_store_explicit(&sh->ghosts, NULL, memory_order_relaxed);
}

/* The retained pages a slab of @page_size pages keeps at @limit, with
 * @share_div-th of it for both slabs. */
static size_t retained_for(const struct shrink *sh, size_t limit, size_t page_size,
			   size_t share_div)
{
	size_t spare = limit / share_div / 2 / page_size;
	size_t most = sh->no_thread ? RETAINED_MAX_UNTRIMMED : RETAINED_MAX;

	return spare < RETAINED_MIN ? RETAINED_MIN : spare > most ? most : spare;
}

/* The spare pages' cap follows the limit (a limit lowered 20-fold kept
 * the creation's 64 pages a slab: issue 16, stop 35's bound bug). */
static void retained_follow(struct shrink *sh, size_t limit)
{
	for (enum entry_kind k = ENT_NEGATIVE; k <= ENT_POSITIVE; k++) {
		struct slab *s = cache_slab(sh->c, k);
		size_t page = slab_page_size(s);
		slab_set_retained_max(s, retained_for(sh, limit, page, RETAINED_SHARE_DIV),
				      retained_for(sh, limit, page, RETAINED_ROOMY_DIV));
	}
}

int sweep_limit_changed(struct shrink *sh, size_t limit)
{
	lock_assert_held(&sh->lock);
	struct ghost_table *g = atomic_load_explicit(&sh->ghosts, memory_order_relaxed);
	uint32_t n = ghost_slots_wanted(sh->c, limit);

	/* Only smaller now: growing waits for evictions (sweep_reclaim). */
	int err = n < g->n ? ghost_resize(sh, n) : 0;
	if (!err)
		retained_follow(sh, limit);
	return err;
}

/* The slot of @hash among @g's ghosts, or (@lasting) its lasting ones. */
static _Atomic uint16_t *ghost_slot(struct ghost_table *g, uint64_t hash, bool lasting)
{
	return lasting ? &g->lasting[ghost_index(hash, lasting_slots(g->n))]
		       : &g->slot[ghost_index(hash, g->n)];
}

/* Remember @hash as a ghost, or (@lasting) a lasting one. */
static void fp_put(struct shrink *sh, uint64_t hash, bool lasting)
{
	rcu_read_lock();   /* the table stays until our unlock */
	/* acquire: pairs with the release store in ghost_resize */
	struct ghost_table *g = atomic_load_explicit(&sh->ghosts, memory_order_acquire);
	/* relaxed: see Locking */
	atomic_store_explicit(ghost_slot(g, hash, lasting), ghost_fp(hash), memory_order_relaxed);
	rcu_read_unlock();
}

/* Was @hash remembered as a ghost, or (@lasting) a lasting one?  Takes it. */
static bool fp_take(struct shrink *sh, uint64_t hash, bool lasting)
{
	rcu_read_lock();   /* the table stays until our unlock */
	/* acquire: pairs with the release store in ghost_resize */
	struct ghost_table *g = atomic_load_explicit(&sh->ghosts, memory_order_acquire);
	_Atomic uint16_t *slot = ghost_slot(g, hash, lasting);
	/* relaxed: see Locking */
	bool hit = atomic_load_explicit(slot, memory_order_relaxed) == ghost_fp(hash);
	if (hit)
		atomic_store_explicit(slot, 0, memory_order_relaxed);
	rcu_read_unlock();
	return hit;
}

/* Is @hash one of the names whose eviction leaves a lasting ghost? */
static bool lasting_sampled(uint64_t hash)
{
	return ((hash >> 32) & (LASTING_SAMPLE - 1)) == 0;
}

/* A fresh entry of @hash: was its ghost remembered (a refault, counted)?
 * Takes the ghost. */
static bool ghost_take(struct shrink *sh, uint64_t hash, enum entry_kind kind)
{
	if (!fp_take(sh, hash, false))
		return false;
	UDC_PROBE(refault, kind);
	if (kind == ENT_NEGATIVE)
		stat_add(cache_stats(sh->c), refaults_neg, 1);
	else
		stat_add(cache_stats(sh->c), refaults_pos, 1);
	return true;
}

unsigned shrink_entry_class(struct shrink *sh, enum entry_kind kind, unsigned cls, uint64_t hash,
			    uint8_t tag)
{
	if (ghost_take(sh, hash, kind))
		return entry_main_class(cls);
	if (tag && lasting_sampled(hash) && fp_take(sh, hash, true))   /* for the sample's others */
		admit_returned(sh, tag, LASTING_SAMPLE);
	return cls;
}

void open_release(struct udc_cache *c, uint64_t stamp_max)
{
	slab_release_open(cache_slab(c, ENT_NEGATIVE), stamp_max);
	slab_release_open(cache_slab(c, ENT_POSITIVE), stamp_max);
}

void shrink_slab_config(struct shrink *sh, const size_t *sizes, unsigned n, unsigned common,
			struct slab_config *out)
{
	size_t limit = atomic_load_explicit(&sh->limit, memory_order_relaxed);
	/* The open pages (slots x classes, both slabs), which reclaim
	 * reaches last, within OPEN_SHARE_DIV-th of the limit: pages shrink
	 * to 4 KiB first, then slots go (a tiny cache on many CPUs).  The
	 * retained pages (reuse without page faults; slab_trim gives back
	 * the ones not reused, and no more are kept than were made lately)
	 * within RETAINED_SHARE_DIV-th (RETAINED_ROOMY_DIV-th while the
	 * cache is roomy): the pages a churn's grace periods
	 * empty come back in bursts, and a burst past the cap went to the OS
	 * (madvise, a TLB shootdown each) to be faulted in again a moment
	 * later (at 16 MiB, 16 pages a slab: 15,000 of 15,100 pages made in a
	 * 3 s churn went back, 17% of its time in madvise; with 64, 300; at
	 * 1 GiB the mixed workload's compactions freed 100-140 pages a burst,
	 * and a cap of 64 sent 1,900 pages in 5 s back: issue 16, stop 37). */
	size_t budget = limit / OPEN_SHARE_DIV / 2;
	unsigned cpus = slab_default_cpus(), shift = SLAB_PAGE_SHIFT_MAX;

	while (shift > SLAB_PAGE_SHIFT_MIN && ((size_t)cpus * 2 * common) << shift > budget)
		shift--;
	while (cpus > 1 && ((size_t)cpus * 2 * common) << shift > budget)
		cpus--;
	udc_assert(2 * n <= SLAB_MAX_CLASSES);
	memset(out, 0, sizeof(*out));
	out->nr_classes = 2 * n;
	for (unsigned i = 0; i < n; i++) {
		out->class_size[2 * i] = out->class_size[2 * i + 1] = sizes[i];
		out->fifo_mask |= 1u << (2 * i);   /* probation: filled once, a FIFO */
	}
	out->retained_max = retained_for(sh, limit, (size_t)1 << shift, RETAINED_SHARE_DIV);
	out->retained_roomy_max = retained_for(sh, limit, (size_t)1 << shift, RETAINED_ROOMY_DIV);
	out->page_shift = shift;
	out->nr_cpus = cpus;
	sh->open_reserve += ((size_t)cpus * common) << shift;   /* see reclaim_over */
}

/* ------------------------------------------------------------------ */
/* visits */

struct sweep_pass {
	struct shrink *sh;
	struct udc_cache *c;
	const struct entry_key *key;  /* the entry being visited's (promote_move's probe) */
	size_t evicted;     /* slot bytes */
	size_t nr_evicted;  /* entries */
	size_t promoted;    /* slot bytes copied (promoted or requeued) and not yet waited for */
	size_t ghosted[2];  /* slot bytes evicted with a ghost, by kind: not yet in sh->adapt_ghosted */
	struct fair_share fair;   /* the fair shares of probation, this batch's */
	int mode;           /* enum udc_probe_sweep; AGE: evictions count as aged */
	bool all;           /* udc_shrink(SIZE_MAX): every entry goes, hit or not, leaving no
	                     * ghost and judging no client (not the policy's choice) */
};

/*
 * Evict @e (its key in @key) if it is still published (entry_evict):
 * true if it went.  A ghost is left if @ghost.  @why: the evict probe's
 * reason (enum udc_probe_evict; an ageing pass says AGED instead).
 */
static bool evict_entry(struct sweep_pass *sp, struct udc_entry *e, const struct entry_key *key,
			bool ghost, int why)
{
	struct udc_cache *c = sp->c;
	size_t slot = entry_slot_size(c, e);

	enum entry_kind kind = entry_kind_of(e);

	if (!entry_evict(c, e, key, shrink_tls_reclaimer))
		return false;
	bool aged = sp->mode == UDC_PROBE_SWEEP_AGE && kind == ENT_NEGATIVE;
	if (aged)
		stat_add(cache_stats(c), aged, 1);
	UDC_PROBE(evict, aged && why != UDC_PROBE_EVICT_STALE ? UDC_PROBE_EVICT_AGED : why,
		  (int)kind, slot, key->dir, key->name, key->len);
	if (ghost) {
		fp_put(sp->sh, key->hash, false);
		sp->ghosted[kind] += slot;
	}
	sp->evicted += slot;
	sp->nr_evicted++;
	return true;
}

/*
 * The hits a visit that keeps @e spends: one (CLOCK's counter), or all of
 * them when ageing, whose second chance is a hit since the page's last
 * visit, not one saved up: a negative hit three times and then no more
 * was promoted and reinserted by three age rounds, and went four to six
 * ages after its last hit, not the one to two the header promises
 * (policy/ageing_keeps_a_negative_one_age_whatever_its_hits).
 */
static void hits_spend(const struct sweep_pass *sp, struct udc_entry *e)
{
	entry_hits_spend(e, sp->mode == UDC_PROBE_SWEEP_AGE ? UINT8_MAX : 1);
}

/* slab_move_fn for a promotion (arg: the sweep_pass): entry_move, and the
 * hit that earned it is spent (all of them when ageing: hits_spend). */
static enum slab_verdict promote_move(void *arg, void *old_obj, void *new_obj)
{
	struct sweep_pass *sp = arg;
	enum slab_verdict v = entry_move(sp->c, old_obj, new_obj);

	if (v == SLAB_MOVED) {
		struct udc_entry *e = new_obj;
		admit_promoted(sp->sh, old_obj);   /* out of probation */
		hits_spend(sp, e);
		stat_add(cache_stats(sp->c), promoted, 1);
		UDC_PROBE(promote, (int)entry_kind_of(e), sp->key->dir, sp->key->name, sp->key->len,
			  entry_hits(e));
	}
	return v;
}

/* slab_move_fn for main's reinsertion (arg: the sweep_pass): entry_move,
 * and the hit that kept it is spent (all of them when ageing). */
static enum slab_verdict reinsert_move(void *arg, void *old_obj, void *new_obj)
{
	struct sweep_pass *sp = arg;
	enum slab_verdict v = entry_move(sp->c, old_obj, new_obj);

	if (v == SLAB_MOVED)
		hits_spend(sp, new_obj);
	return v;
}

/* slab_move_fn for a requeue (arg: the sweep_pass): entry_requeue_move. */
static enum slab_verdict requeue_move(void *arg, void *old_obj, void *new_obj)
{
	struct sweep_pass *sp = arg;
	enum slab_verdict v = entry_requeue_move(sp->c, old_obj, new_obj);

	if (v == SLAB_MOVED)
		stat_add(cache_stats(sp->c), requeued, 1);
	return v;
}

/* Unhit, current @e gets a second chance in probation: a client's negative
 * (not anonymous) whose client holds less than the fair share, requeued
 * fewer than REQUEUE_MAX times; never when ageing (a requeue would make
 * it young again). */
static bool requeue_due(const struct sweep_pass *sp, const struct udc_entry *e)
{
	if (sp->mode != UDC_PROBE_SWEEP_RECLAIM || entry_kind_of(e) != ENT_NEGATIVE)
		return false;
	uint8_t tag = entry_client_tag(e);
	if (!tag)
		return false;
	unsigned requeues = entry_requeues(e);
	const struct fair_share *f = &sp->fair;
	int64_t n = shrink_probation_counted(sp->sh, tag);
	if (admit_earned(sp->sh, tag))   /* behind the others, then its fair share */
		return (f->has[0] && requeues < REQUEUE_MAX_BEHIND) ||
		       (n < f->share[1] && requeues < REQUEUE_MAX);
	return requeues < REQUEUE_MAX && !f->has[1] && n < f->share[0];
}

/*
 * Copy @e (its key in @key) into an open page of its own queue's class,
 * or of main's when @to_main, through @move: the verdict (SLAB_MOVED,
 * SLAB_KEPT when entry_move dropped or left it), or -ENOMEM when no copy
 * could be made.  The copies count against the in-flight bound.
 */
static int relocate(struct sweep_pass *sp, struct udc_entry *e, const struct entry_key *key,
		    bool to_main, slab_move_fn move)
{
	struct slab *s = cache_slab(sp->c, entry_kind_of(e));
	unsigned cls = slab_page_class(slab_page_of(s, e));
	sp->key = key;
	int v = slab_relocate_to(s, e, to_main ? entry_main_class(cls) : cls, move, sp);

	if (v == SLAB_MOVED)
		sp->promoted += slab_class_size(s, cls);
	return v;
}

/* The hits since insertion that promote @e from probation (see
 * POS_PROMOTE_HITS): a file's two, a directory's or a negative's one. */
static uint8_t promote_hits(const struct udc_entry *e)
{
	return entry_kind_of(e) == ENT_POSITIVE && !entry_names_dir(e) ? POS_PROMOTE_HITS : 1;
}

static void visit_probation(void *arg, void *obj)
{
	struct sweep_pass *sp = arg;
	struct udc_cache *c = sp->c;
	struct udc_entry *e = obj;
	struct entry_key key;

	if (!entry_key_copy(c, e, &key))
		return;   /* dead: its free is on the way */
	bool stale = !entry_is_current(c, e);
	bool hit = !stale && entry_hits(e) >= promote_hits(e);
	if (!sp->all && (hit || (!stale && requeue_due(sp, e)))) {
		/* promoted to main, or requeued: the copy lands in an open
		 * page of its own class, the young end of the FIFO */
		if (relocate(sp, e, &key, hit, hit ? promote_move : requeue_move) != -ENOMEM)
			return;   /* moved, or dropped or left by entry_move */
		/* no room for the copy: evicted instead */
	}
	/* Read before it goes (its slot is freed after a grace period).  A
	 * shrink of everything judges no client (nor leaves a ghost). */
	bool counted = !stale && !hit && !sp->all && entry_kind_of(e) == ENT_NEGATIVE;
	uint8_t tag = entry_client_tag(e);
	if (evict_entry(sp, e, &key, !stale && !sp->all,
			stale ? UDC_PROBE_EVICT_STALE : UDC_PROBE_EVICT_PROBATION) &&
	    counted && tag) {
		admit_evicted(sp->sh, tag);
		if (lasting_sampled(key.hash))   /* its lasting ghost */
			fp_put(sp->sh, key.hash, true);
	}
}

/*
 * The hits since the hand last passed that keep @e in main: one, or
 * LONE_HITS_TO_KEEP when it is its directory object's only holder, whose
 * eviction frees the object too: hits per byte freed, GDSF's measure, in
 * CLOCK's coarse form.
 */
static uint8_t main_hits_to_keep(const struct sweep_pass *sp, const struct udc_entry *e)
{
	/* ageing keeps what was hit within the age (bytes are not its measure) */
	return sp->mode != UDC_PROBE_SWEEP_AGE && entry_dir_lone(e) ? LONE_HITS_TO_KEEP : 1;
}

static void visit_main(void *arg, void *obj)
{
	struct sweep_pass *sp = arg;
	struct udc_entry *e = obj;
	struct entry_key key;

	if (!entry_published(e))
		return;
	bool stale = !entry_is_current(sp->c, e);
	if (!stale && !sp->all && entry_hits(e) >= main_hits_to_keep(sp, e)) {
		/* kept: its copy goes to the young end, so the page empties */
		if (entry_key_copy(sp->c, e, &key) &&
		    relocate(sp, e, &key, false, reinsert_move) == -ENOMEM)
			hits_spend(sp, e);   /* no room for a copy: kept in place */
		return;
	}
	if (entry_key_copy(sp->c, e, &key))
		evict_entry(sp, e, &key, !stale && !sp->all,
			    stale ? UDC_PROBE_EVICT_STALE : UDC_PROBE_EVICT_MAIN);
}

/* slab_sweep of one class of @kind, with the sweep_batch probe (fired
 * only when the class had something to sweep). */
static size_t sweep_class(struct sweep_pass *sp, enum entry_kind kind, unsigned cls, size_t budget,
			  uint64_t stamp_max, uint64_t *cursor, void (*visit)(void *arg, void *obj))
{
	size_t n0 = sp->nr_evicted, b0 = sp->evicted;
	size_t done = slab_sweep(cache_slab(sp->c, kind), cls, budget, stamp_max, cursor, visit, sp);

	if (done)   /* a class with nothing to sweep is no batch */
		UDC_PROBE(sweep_batch, sp->mode, kind, cls, done, sp->nr_evicted - n0,
			  sp->evicted - b0);
	return done;
}

/* The class of queue @main of @kind whose next page to sweep is the oldest
 * (none: -1), skipping the classes in @dry. */
static int oldest_class(struct slab *s, bool main, uint64_t stamp_max, const bool *dry)
{
	uint64_t best = UINT64_MAX;
	int found = -1;

	for (unsigned cls = main; cls < slab_nr_classes(s); cls += 2) {
		uint64_t seq = dry[cls] ? UINT64_MAX : slab_sweep_next_seq(s, cls, stamp_max);
		if (seq < best) {
			best = seq;
			found = (int)cls;
		}
	}
	return found;
}

/*
 * Sweep queue @main of @kind: at most @budget units, pages stamped at
 * most @stamp_max, a page at a time, the oldest of the queue's classes
 * first (page seqs are one order across a slab).  Class by class, the
 * short names' class was swept first every time and the long names'
 * only when it had nothing left: two caches, not one FIFO.  Returns the
 * units done.
 */
static size_t sweep_queue(struct sweep_pass *sp, enum entry_kind kind, bool main, size_t budget,
			  uint64_t stamp_max)
{
	struct slab *s = cache_slab(sp->c, kind);
	size_t inflight_max = shrink_slack(sp->sh) / PROMOTE_INFLIGHT_DIV;
	bool dry[SLAB_MAX_CLASSES] = { false };
	size_t done = 0;
	int cls;

	if (!main && kind == ENT_NEGATIVE)
		admit_fair_share(sp->sh, &sp->fair);   /* once a batch */
	while (done < budget && (cls = oldest_class(s, main, stamp_max, dry)) >= 0) {
		size_t size = slab_class_size(s, (unsigned)cls);
		size_t units = slab_page_size(s) / size + SLAB_COMPACT_PAGE_COST;   /* a page */
		units = units < budget - done ? units : budget - done;
		if (!main) {   /* a visit promotes or requeues one slot at most: no more than the room */
			size_t room = inflight_max > sp->promoted ? inflight_max - sp->promoted : 0;
			size_t most = room / size + SLAB_COMPACT_PAGE_COST + 1;
			units = units < most ? units : most;
		}
		size_t d = sweep_class(sp, kind, (unsigned)cls, units, stamp_max, NULL,
				       main ? visit_main : visit_probation);
		dry[cls] = d == 0;   /* its page went meanwhile: the others */
		done += d;
		if (sp->promoted >= inflight_max) {
			if (!slab_hold_flush())   /* the old copies go (see above) */
				entry_frees_wait(sp->c);
			sp->promoted = 0;
		}
	}
	return done;
}

/* ------------------------------------------------------------------ */
/* what to sweep */

static size_t queue_bytes(struct udc_cache *c, enum entry_kind kind, bool main)
{
	struct slab *s = cache_slab(c, kind);
	size_t b = 0;

	for (unsigned cls = main; cls < slab_nr_classes(s); cls += 2)
		b += slab_class_bytes(s, cls);
	return b;
}

/* The pass's evictions with a ghost, counted for adapt_share. */
static void adapt_note(struct sweep_pass *sp)
{
	for (unsigned k = 0; k < 2; k++) {
		sp->sh->adapt_ghosted[k] += sp->ghosted[k];
		sp->ghosted[k] = 0;
	}
}

/* Points a ratio of @hi to @lo is worth: one per doubling past
 * ADAPT_HYSTERESIS, at most ADAPT_STEP_MAX. */
static int adapt_points(double hi, double lo)
{
	int n = 0;

	for (double r = ADAPT_HYSTERESIS * lo; n < ADAPT_STEP_MAX && hi >= r && hi > 0; r *= 2)
		n++;
	return n;
}

/* Move neg_share towards the kind whose evictions refaulted more per
 * byte, once the evictions since the last move reached their share of the
 * limit and refaulted often enough to tell (sh->lock held). */
static void adapt_share(struct shrink *sh)
{
	size_t limit = atomic_load_explicit(&sh->limit, memory_order_relaxed);
	uint64_t *g = sh->adapt_ghosted;

	if (g[0] + g[1] < limit / ADAPT_TURNOVER_DIV)
		return;
	struct thread_stats t;
	stats_sum(sh->c, &t);
#define G(name) atomic_load_explicit(&t.name, memory_order_relaxed)
	uint64_t cur[2] = { G(refaults_neg), G(refaults_pos) };
#undef G
	uint64_t rf[2] = { cur[0] - sh->adapt_last[0], cur[1] - sh->adapt_last[1] };
	if (rf[0] + rf[1] < ADAPT_EVENTS_MIN)
		return;   /* too few to tell: the window goes on */
	memcpy(sh->adapt_last, cur, sizeof(cur));
	/* A refault is an eviction that was a mistake: the kind whose
	 * evictions were mistaken more often per byte gets the points. */
	double m[2];   /* by kind (cur's order): refaults per byte, averaged */
	for (unsigned k = 0; k < 2; k++) {
		sh->adapt_refaults[k] = sh->adapt_refaults[k] * (1 - ADAPT_DECAY) + (double)rf[k];
		sh->adapt_bytes[k] = sh->adapt_bytes[k] * (1 - ADAPT_DECAY) + (double)g[k];
		g[k] = 0;
		m[k] = sh->adapt_refaults[k] / (sh->adapt_bytes[k] + 4096);
	}
	int share = (int)atomic_load_explicit(&sh->neg_share, memory_order_relaxed) +
		    adapt_points(m[ENT_NEGATIVE], m[ENT_POSITIVE]) -
		    adapt_points(m[ENT_POSITIVE], m[ENT_NEGATIVE]);
	share = share < NEG_SHARE_MIN ? NEG_SHARE_MIN : share > NEG_SHARE_MAX ? NEG_SHARE_MAX : share;
	/* relaxed: read by admit_client as a heuristic */
	atomic_store_explicit(&sh->neg_share, (unsigned)share, memory_order_relaxed);
}

/*
 * The queues that should give memory back now, in order; returns how many.
 * Per kind, main only when probation is down to its share (S3-FIFO), except
 * the kind that is first (past its share of the pages, or the positives):
 * when its probation gives nothing now (its pages open, or waiting for
 * their grace period: probation's bytes count them), its main comes next,
 * not the other kind.  Without that fallback a replay whose hot negatives
 * filled main (gcc x313 at 10% of its footprint) evicted positives for
 * them, and its second pass made 1.7-2.6 M backend lookups in most runs
 * instead of 0.6 M: negatives held 70-85% of the entries at a share of
 * 5-10% (BENCHMARKS.md, issue 14, stop 15).
 */
static unsigned sweep_order(struct sweep_pass *sp, enum entry_kind kind[4], bool main[4])
{
	struct shrink *sh = sp->sh;
	unsigned n = 0;
	size_t bytes[2][2];

	for (unsigned k = 0; k < 2; k++)
		for (unsigned q = 0; q < 2; q++)
			bytes[k][q] = queue_bytes(sh->c, (enum entry_kind)k, q);
	adapt_note(sp);
	adapt_share(sh);
	size_t neg = bytes[ENT_NEGATIVE][0] + bytes[ENT_NEGATIVE][1];
	size_t all = neg + bytes[ENT_POSITIVE][0] + bytes[ENT_POSITIVE][1];
	unsigned share = atomic_load_explicit(&sh->neg_share, memory_order_relaxed);
	enum entry_kind first = 100 * neg > (size_t)share * all ? ENT_NEGATIVE : ENT_POSITIVE;
	for (unsigned i = 0; i < 2; i++) {
		enum entry_kind k = i ? (enum entry_kind)!first : first;
		size_t kb = bytes[k][0] + bytes[k][1];
		bool main_first = 100 * bytes[k][0] <= (size_t)PROBATION_SHARE * kb;
		if (main_first) {
			kind[n] = k;
			main[n++] = true;
		}
		kind[n] = k;
		main[n++] = false;
		if (!main_first && i == 0) {   /* the first kind's fallback */
			kind[n] = k;
			main[n++] = true;
		}
	}
	return n;
}

size_t sweep_reclaim(struct shrink *sh, size_t bytes, size_t enough)
{
	lock_assert_held(&sh->lock);
	struct udc_cache *c = sh->c;
	struct sweep_pass sp = { .sh = sh, .c = c, .mode = UDC_PROBE_SWEEP_RECLAIM,
				 .all = bytes == SIZE_MAX };
	enum entry_kind kind[4];
	bool main[4], empty[2][2] = { { false } };
	/* Bounded: every page about four times over (a main entry's hits
	 * reach zero in at most HITS_MAX + 1 visits). */
	int64_t steps = (int64_t)(entry_slabs_bytes(c) / slab_page_size(cache_slab(c, ENT_NEGATIVE))) *
				(HITS_MAX + 1) +
			8;

	/* Open pages that have not filled for a while become sweepable (the
	 * others hold the newest entries: FIFO takes them last, below). */
	open_release(c, slab_now_ms() - SWEEP_OPEN_MAX_MS);
	bool opened = false, waited = false;
	unsigned nq = 0;
	for (int64_t step = 0; sp.evicted < bytes && step < steps; step++) {
		/* The reclaim thread's batch ends early for a throttled call
		 * waiting for the lock (relaxed: a hint) once it has the
		 * room the call needs: what it evicted lands, and the call
		 * goes next (reclaim.c, background_lock). */
		if (sp.evicted && sp.evicted >= enough &&
		    atomic_load_explicit(&sh->lock_waiters, memory_order_relaxed) > 0)
			break;
		if (step % 16 == 0)   /* the shares move as pages go: look again */
			nq = sweep_order(&sp, kind, main);
		unsigned i = 0;
		while (i < nq && empty[kind[i]][main[i]])
			i++;
		if (i == nq && !opened && sp.evicted < bytes) {
			/* Everything else is swept: the open pages too. */
			open_release(c, UINT64_MAX);
			opened = true;
			memset(empty, 0, sizeof(empty));
			continue;
		}
		if (i == nq)
			break;   /* nothing to sweep now: the frees will land */
		/* No more work than the bytes still wanted (a unit is at most
		 * one eviction of the smallest slot): small requests stay small. */
		size_t units = (bytes - sp.evicted) / 64 + SLAB_COMPACT_PAGE_COST;
		if (sweep_queue(&sp, kind[i], main[i], units < SWEEP_BATCH ? units : SWEEP_BATCH,
				UINT64_MAX) != 0)
			continue;
		if (i == 0 && !main[i] && !waited && shrink_tls_reclaimer) {
			/* The first queue is probation and it gave nothing now:
			 * its pages may wait for their grace period.  The
			 * reclaim thread lands them once before it takes main
			 * (the fallback): main holds the hit entries, and
			 * sweeping it for lack of patience cost a victim
			 * client half of its negatives against rotating ids
			 * (BENCHMARKS.md, issue 14).  Then the shares are
			 * looked at again, without those pages.  Not in a
			 * call: a grace period there is a wait. */
			waited = true;
			if (!slab_hold_flush())
				entry_frees_wait(c);
			nq = sweep_order(&sp, kind, main);
			continue;
		}
		empty[kind[i]][main[i]] = true;
	}
	adapt_note(&sp);
	entry_free_flush(c);
	return sp.evicted;
}

bool sweep_age(struct shrink *sh, size_t budget)
{
	lock_assert_held(&sh->lock);
	struct udc_cache *c = sh->c;
	uint32_t max_age = sh->negative_max_age_ms;
	struct sweep_pass sp = { .sh = sh, .c = c, .mode = UDC_PROBE_SWEEP_AGE };

	if (max_age == UINT32_MAX)
		return false;
	uint64_t now = slab_now_ms();
	if (now < max_age)
		return false;
	/* Open pages older than the age: their entries too. */
	slab_release_open(cache_slab(c, ENT_NEGATIVE), now - max_age);
	/* Probation: every entry of a page that old is past the age (a hit
	 * one goes to main).  Main's pages once an age too: an entry hit
	 * since its page's last visit is kept for another age (a second
	 * chance), so a negative looked up about once an age stays, and one
	 * no longer hit goes one to two ages after its last hit.  (Visited
	 * every half age, one hit an age lost it every other round: 48%
	 * missed in the seed's scenario, issue 14.)  Held:
	 * the promotions' old copies land in our own grace periods when too
	 * many are in flight (sweep_queue), not after call_rcu's 10-20 ms. */
	slab_hold_begin();
	size_t done = sweep_queue(&sp, ENT_NEGATIVE, false, budget, now - max_age);
	if (done < budget)
		done += sweep_queue(&sp, ENT_NEGATIVE, true, budget - done, now - max_age);
	entry_free_flush(c);   /* into the hold */
	slab_hold_end();
	return done >= budget;
}

/* ------------------------------------------------------------------ */
/* garbage: the stale entries of invalidated and removed directories */

void shrink_dir_forgotten(struct shrink *sh, int64_t entries)
{
	if (entries > 0)   /* relaxed: a work estimate */
		atomic_fetch_add_explicit(&sh->garbage_pending, entries, memory_order_relaxed);
}

/* Drop garbage (a stale or expired entry); leave the others as they are
 * (hits untouched), noting the deadlines still ahead. */
static void visit_garbage(void *arg, void *obj)
{
	struct sweep_pass *sp = arg;
	struct udc_entry *e = obj;
	struct entry_key key;

	if (!entry_published(e))
		return;
	uint32_t deadline = entry_deadline_of(e);
	sp->sh->garbage_expiring |= deadline != 0;
	if (entry_is_current(sp->c, e)) {
		if (deadline)   /* ahead: the next round's */
			shrink_expiry_noted(sp->sh, deadline);
		return;
	}
	if (entry_key_copy(sp->c, e, &key))
		evict_entry(sp, e, &key, false, UDC_PROBE_EVICT_STALE);
}

/*
 * A garbage round visits every page, so it costs the whole cache whatever
 * the garbage: with a directory invalidated every few milliseconds, rounds
 * back to back kept the reclaim thread busy full time.  A round starts only
 * once the garbage is 1/STALE_ROUND_SHARE of the entries, or STALE_ROUND_NS
 * after the last one began: the scan is then paid for by the garbage it
 * drops, and garbage still goes within about a second.  Memory pressure
 * does not wait for it: eviction drops stale entries first.
 */
#define STALE_ROUND_SHARE 16
#define STALE_ROUND_NS 1000000000ull

/*
 * Expiry: answers with a deadline are garbage once it passes.  The
 * earliest deadline published is kept (shrink_expiry_noted: a relaxed
 * load, and a CAS only for an earlier one, which is rare as deadlines
 * grow with time); once it passes, one unit of garbage is noted, so that
 * a garbage round runs (within RECLAIM_THREAD_PERIOD_MS with the thread,
 * in the calls' paced batches without it) and drops every expired entry
 * (visit_garbage: entry_is_current is false for them); the round notes
 * again the deadlines it passes that are still ahead.
 */
#define EXPIRY_RECHECK_TICKS 16   /* about a second (CACHE_TICK_SHIFT: 67 ms) */

void shrink_expiry_noted(struct shrink *sh, uint32_t deadline)
{
	/* relaxed: a hint; the CAS keeps the minimum */
	uint32_t cur = atomic_load_explicit(&sh->expiry_next, memory_order_relaxed);

	while (deadline < cur &&
	       !atomic_compare_exchange_weak_explicit(&sh->expiry_next, &cur, deadline,
						      memory_order_relaxed, memory_order_relaxed))
		;
}

void sweep_expiry_check(struct shrink *sh)
{
	/* relaxed: a hint (see shrink_expiry_noted) */
	uint32_t next = atomic_load_explicit(&sh->expiry_next, memory_order_relaxed);

	if (next == UINT32_MAX || cache_ticks(sh->c) < next)
		return;
	/* One caller takes it: the exchange's winner (relaxed: a hint). */
	if (atomic_exchange_explicit(&sh->expiry_next, UINT32_MAX, memory_order_relaxed) != UINT32_MAX)
		atomic_fetch_add_explicit(&sh->garbage_pending, 1, memory_order_relaxed);
}

bool sweep_garbage_due(struct shrink *sh)
{
	lock_assert_held(&sh->lock);
	sweep_expiry_check(sh);
	/* relaxed: estimates (garbage_round and garbage_round_ns: sh->lock, held) */
	int64_t pending = atomic_load_explicit(&sh->garbage_pending, memory_order_relaxed);
	int64_t entries = cache_nr_entries(sh->c);

	if (pending <= 0)
		return false;
	if (sh->garbage_round || pending * STALE_ROUND_SHARE >= entries)
		return true;
	return mono_ns() - sh->garbage_round_ns >= STALE_ROUND_NS;
}

/* A round over every class of @kind with the cursors @cur: at most
 * @budget units; *@wrapped is cleared while a class is not through. */
/* A round over every class of @kind at @rc: at most @budget units;
 * *@wrapped is cleared while a class is not through.  A class is through
 * once a call that could isolate a page left its cursor at the start:
 * before, a class the budget did not reach (its cursor still 0) counted
 * as through, and a batch that ended the negatives' classes with a few
 * units left ended the garbage round with the positives' unvisited (an
 * expired positive stayed for ever without memory pressure). */
static size_t sweep_round(struct sweep_pass *sp, enum entry_kind kind, struct sweep_cursor *rc,
			  size_t budget, void (*visit)(void *arg, void *obj), bool *wrapped)
{
	struct slab *s = cache_slab(sp->c, kind);
	size_t done = 0;

	for (unsigned cls = 0; cls < slab_nr_classes(s); cls++) {
		uint32_t bit = 1u << cls;
		if (!(rc->finished & bit) && done < budget) {
			size_t given = budget - done;
			done += sweep_class(sp, kind, cls, given, UINT64_MAX, &rc->cur[cls], visit);
			if (rc->cur[cls] == 0 && given > SLAB_COMPACT_PAGE_COST)
				rc->finished |= bit;
		}
		*wrapped = *wrapped && (rc->finished & bit);
	}
	return done;
}

bool sweep_garbage(struct shrink *sh, size_t budget)
{
	lock_assert_held(&sh->lock);
	struct udc_cache *c = sh->c;
	struct sweep_pass sp = { .sh = sh, .c = c, .mode = UDC_PROBE_SWEEP_STALE };
	size_t done = 0;
	bool wrapped = true;

	if (atomic_load_explicit(&sh->garbage_pending, memory_order_relaxed) <= 0)
		return false;
	if (!sh->garbage_round) {   /* a round starts: what it will have covered */
		sh->garbage_round = atomic_load_explicit(&sh->garbage_pending, memory_order_relaxed);
		sh->garbage_round_ns = mono_ns();
		sh->garbage_token = cache_garbage_round_begin(c);
		/* The open pages too. */
		open_release(c, UINT64_MAX);
	}
	for (unsigned k = 0; k < 2; k++)
		done += sweep_round(&sp, (enum entry_kind)k, &sh->garbage_cursor[k], budget - done,
				    visit_garbage, &wrapped);
	entry_free_flush(c);
	if (wrapped && done < budget) {
		/* Every class gone through: what was noted before the round is
		 * swept (removals since are the next round's). */
		atomic_fetch_sub_explicit(&sh->garbage_pending, sh->garbage_round,
					  memory_order_relaxed);
		sh->garbage_round = 0;
		sh->garbage_cursor[0].finished = sh->garbage_cursor[1].finished = 0;
		cache_garbage_round_end(c, sh->garbage_token);   /* forgotten objects retire */
		/* Answers with deadlines were about: another round within a
		 * second, whatever the round saw (an entry the round missed,
		 * moved behind its cursor, has a deadline noted nowhere else). */
		if (sh->garbage_expiring)
			shrink_expiry_noted(sh, cache_ticks(c) + EXPIRY_RECHECK_TICKS);
		sh->garbage_expiring = false;
		return atomic_load_explicit(&sh->garbage_pending, memory_order_relaxed) > 0;
	}
	return true;
}

/* ------------------------------------------------------------------ */
/* the trim: directories past their bound lose their oldest unhit negatives */

/* A current negative that no lookup hit since it was made (or since main
 * last spent its hits), of a directory past its bound: evicted, no ghost
 * left (a name that comes back is a new negative, not a refault). */
static void visit_trim(void *arg, void *obj)
{
	struct sweep_pass *sp = arg;
	struct udc_entry *e = obj;
	struct entry_key key;
	int64_t positives;
	uint64_t negatives;

	if (!entry_dir_counts(e, &positives, &negatives) || negatives <= shrink_dir_bound(positives) ||
	    entry_hits(e) || !entry_is_current(sp->c, e) || !entry_key_copy(sp->c, e, &key))
		return;
	if (evict_entry(sp, e, &key, false, UDC_PROBE_EVICT_BOUND))
		/* relaxed: a work estimate */
		atomic_fetch_sub_explicit(&sp->sh->trim_excess, 1, memory_order_relaxed);
}

bool sweep_trim(struct shrink *sh, size_t budget)
{
	lock_assert_held(&sh->lock);
	struct sweep_pass sp = { .sh = sh, .c = sh->c, .mode = UDC_PROBE_SWEEP_TRIM };
	bool wrapped = true;

	/* relaxed, all: a work estimate */
	if (atomic_load_explicit(&sh->trim_excess, memory_order_relaxed) <= 0)
		return false;
	size_t done = sweep_round(&sp, ENT_NEGATIVE, &sh->trim_cursor, budget, visit_trim, &wrapped);
	entry_free_flush(sh->c);
	if (wrapped && done < budget) {
		/* A whole round: every directory it went through is within its
		 * bound, or holds nothing it may trim (all hit: past twice the
		 * bound its new negatives are declined).  Admissions past the
		 * bound from now on are the next round's. */
		atomic_store_explicit(&sh->trim_excess, 0, memory_order_relaxed);
		sh->trim_cursor.finished = 0;
		return false;
	}
	if (atomic_load_explicit(&sh->trim_excess, memory_order_relaxed) > 0)
		return true;
	/* Done: the next round starts again from the oldest pages (a round
	 * that went on from here would take newer negatives while older
	 * ones it passed by, within the bound then, stay). */
	memset(&sh->trim_cursor, 0, sizeof(sh->trim_cursor));
	return false;
}
