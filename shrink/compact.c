/* SPDX-License-Identifier: MIT */
/*
 * shrink/compact.c - moving entries out of sparse slab pages, and when.
 *
 * Owns: the decision to compact.  Nothing outside the cache holds a
 * pointer to an entry, so any entry can move: the survivors of a sparse
 * page are copied into a dense one by the engine's entry_move
 * (engine/evict.c), so that the page empties and goes back.
 *
 * When: compact_inline() runs at the end of mutating calls (with the
 * other chores: reclaim.c's shrink_after_call, on one call in 8 of a
 * thread that found nothing due), after every drop, and at the end of
 * udc_invalidate; it does a bounded batch
 * (COMPACT_BATCH objects) when the entries fill less than 4/5 of the slab
 * bytes and more than compact_slack() is free (2 MiB, or 1/16 of a limit
 * under 32 MiB); only pages under half full
 * are emptied (slab_compact), so the batches stop by themselves.  A batch
 * that finds nothing left to move backs off until the entries shrink or
 * the pages grow by an eighth.  The reclaim thread (reclaim.c) runs the
 * same batches between calls (compact_batch), and udc_shrink() runs them
 * to the end (compact_all).  A call that leaves compaction due does its
 * chores again on its next call, with the thread or without (with the
 * thread, leaving it to the thread was tried in issue 14 and 16's stop
 * 28: the calls' batches that found the lock free were missed, and RSS
 * after a mass removal came down more slowly, past
 * threads_memory/rss_follows_the_cache's bound under a loaded CI).
 *
 * Probes (common/probe.h): compact_batch after each batch (with the
 * fragmentation it left); slab/compact.c's compact_page for each page
 * worked on, engine/evict.c's evict (STALE) for a stale entry dropped.
 *
 * Locking:
 *   sh->lock serialises compaction with reclaim passes (inline: only
 *   tried, never waited for; the thread's batches let throttled calls
 *   take it first, background_lock); it protects compact_mark_* and
 *   compact_cursor.  slab_compact() holds no slab lock across the
 *   callback (entry_move, which takes the engine's locks).
 *
 * Ordering:
 *   compact_mark_* are atomics, written under shrink_lock and read
 *   without it by compact_due's first look (relaxed: a heuristic, a
 *   stale pair costs one batch or one skipped call); the size counters are
 *   relaxed too.  The moves' ordering is engine/evict.c's.
 */
#include "shrink/internal.h"
#include "common/probe.h"

#define COMPACT_BATCH 256              /* work units per inline batch: objects, 32 a page */
#define COMPACT_SLACK ((size_t)2 << 20) /* below this much free slab space, leave it, */
#define COMPACT_SLACK_DIV 16            /* ... or below 1/16 of a limit under 32 MiB */
#define COMPACT_ALL_ROUNDS 8            /* compact_all: rounds at most (each waits for RCU) */

/*
 * Compact every class of both slabs, at most @budget objects in all, each
 * class from where the last batch left it.  *@dry: every class's round
 * was started from its beginning and ended, with budget to spare.
 */
static size_t compact_locked(struct shrink *sh, size_t budget, bool *dry)
{
	lock_assert_held(&sh->lock);
	struct udc_cache *c = sh->c;
	size_t done = 0;

	*dry = true;
	for (unsigned k = 0; k < 2; k++) {
		struct slab *s = cache_slab(c, (enum entry_kind)k);
		for (unsigned cls = 0; cls < slab_nr_classes(s) && done < budget; cls++) {
			uint64_t *cursor = &sh->compact_cursor[k][cls];
			bool from_start = *cursor == 0;
			done += slab_compact(s, cls, budget - done, cursor, entry_move, c);
			*dry = *dry && from_start && *cursor == 0;
		}
	}
	*dry = *dry && done < budget;
	entry_free_flush(c);   /* the dropped stale ones */
	return done;
}

/* The free slab space worth compacting: a fixed 2 MiB never came at a
 * limit of a few MiB, where the sparse pages that sweeps leave (main's
 * survivors) were a third of the bytes (issue 14, density). */
static size_t compact_slack(struct shrink *sh)
{
	size_t part = atomic_load_explicit(&sh->limit, memory_order_relaxed) / COMPACT_SLACK_DIV;

	return part < COMPACT_SLACK ? part : COMPACT_SLACK;
}

/*
 * Do the slabs hold more free room than the entries need?  @pages: the
 * slab bytes less the frees queued for their grace period, which come
 * back by themselves and which no move can hasten (entry_frees_queued
 * counts an entry's name apart with its slot: while such frees
 * wait, this errs towards waiting for them too).  Counted as free room,
 * they kept compaction due while the call_rcu thread lagged: each batch
 * found the same pages, still waiting, and moved their survivors again
 * (a churn with its frees held back: 6,975 moves and 10x the time for
 * 200,000 cycles; none now: compaction/frees_that_wait_are_not_fragmentation;
 * under valgrind, which starves that thread, callgrind runs of churn
 * spent 3-13x their instructions in compaction).
 */
static bool fragmented(struct shrink *sh, size_t *live, size_t *pages)
{
	size_t queued = entry_frees_queued(sh->c);

	*live = cache_entry_bytes(sh->c);
	*pages = entry_slabs_bytes(sh->c);
	*pages = *pages > queued ? *pages - queued : 0;
	return *pages > *live + *live / 4 + compact_slack(sh);
}

/* Worth a batch: fragmented, and not backed off (or things changed since). */
bool compact_due(struct shrink *sh)
{
	size_t live, pages;

	if (!fragmented(sh, &live, &pages))
		return false;
	/* relaxed: read without shrink_lock (compact_step's first look);
	 * partner: marks_set under shrink_lock.  A stale pair costs a batch. */
	size_t mark_live = atomic_load_explicit(&sh->compact_mark_live, memory_order_relaxed);
	size_t mark_pages = atomic_load_explicit(&sh->compact_mark_pages, memory_order_relaxed);
	return mark_pages == 0 || 8 * live < 7 * mark_live || 8 * pages > 9 * mark_pages;
}

/* Back off until things change (a dry batch: @live, @pages), or not (0, 0);
 * shrink_lock held.  relaxed: partner compact_due's lock-free reads. */
static void marks_set(struct shrink *sh, size_t live, size_t pages)
{
	atomic_store_explicit(&sh->compact_mark_live, live, memory_order_relaxed);
	atomic_store_explicit(&sh->compact_mark_pages, pages, memory_order_relaxed);
}

/* A batch if compaction is worth it; @wait: for shrink_lock, else only
 * try it.  Returns true if more work remains. */
static bool compact_step(struct shrink *sh, bool wait)
{
	bool more = false;

	if (!compact_due(sh))   /* racy read of the marks: a heuristic */
		return false;
	if (wait)
		background_lock(sh);   /* the thread's batch: throttled calls first */
	else if (udc_mutex_trylock(&sh->lock))
		return false;   /* a pass is running: it is at it */
	if (compact_due(sh)) {
		size_t live, pages;
		bool dry;
		size_t units = compact_locked(sh, COMPACT_BATCH, &dry);
		fragmented(sh, &live, &pages);
		UDC_PROBE(compact_batch, units, dry, live, pages);
		marks_set(sh, dry ? live : 0, dry ? pages : 0);
		more = !dry;
	}
	udc_mutex_unlock(&sh->lock);
	return more;
}

void compact_inline(struct shrink *sh)
{
	compact_step(sh, false);
}

bool compact_batch(struct shrink *sh, bool fresh)
{
	if (fresh) {   /* the marks are the inline path's: look again */
		udc_mutex_lock(&sh->lock);
		marks_set(sh, 0, 0);
		udc_mutex_unlock(&sh->lock);
	}
	return compact_step(sh, true);
}

/*
 * One round: batches until every class has been gone through once, or
 * @bound work units (mutators may make sparse pages as fast as a round
 * empties them).  Returns the work done.
 */
static size_t compact_round(struct shrink *sh, size_t bound)
{
	size_t done = 0;
	bool dry;

	do {   /* shrink_lock per batch: inline reclaim waits one batch at most */
		size_t live, pages;
		udc_mutex_lock(&sh->lock);
		size_t units = compact_locked(sh, COMPACT_BATCH, &dry);
		marks_set(sh, 0, 0);
		udc_mutex_unlock(&sh->lock);
		done += units;
		/* For the probe only (udc_shrink's rounds: a few loads a batch). */
		fragmented(sh, &live, &pages);
		UDC_PROBE(compact_batch, units, dry, live, pages);
	} while (!dry && done < bound);
	return done;
}

size_t compact_all(struct shrink *sh)
{
	struct udc_cache *c = sh->c;
	size_t done = 0;

	/* The open pages become candidates too. */
	open_release(c, UINT64_MAX);
	/*
	 * A round moves the survivors of sparse pages, but the pages come back
	 * only after a grace period, and a page the survivors went to may be
	 * sparse itself by then (removals meanwhile): rounds until one gives
	 * nothing back.  A round's bound: twice a visit of every slot of the
	 * smallest class (64 bytes) and of every page.  A first round that
	 * found nothing may have found the sparse pages waiting for their
	 * frees (a page where more wait than could move is not worked on,
	 * slab/compact.c): they have landed after the wait, so a second
	 * round looks again (values/values_survive_compaction_and_their_memory_goes_back:
	 * udc_shrink right after 18,000 removals moved nothing without it).
	 */
	for (int round = 0; round < COMPACT_ALL_ROUNDS; round++) {
		size_t before = entry_slabs_bytes(c);
		size_t bound = 2 * (before / 64 + before / slab_page_size(cache_slab(c, ENT_NEGATIVE)) * SLAB_COMPACT_PAGE_COST) + COMPACT_BATCH;
		size_t work = compact_round(sh, bound);
		done += work;
		entry_frees_wait(c);
		if (work == 0 && round == 0)
			continue;
		if (work == 0 || entry_slabs_bytes(c) >= before)
			break;
	}
	return done;
}
