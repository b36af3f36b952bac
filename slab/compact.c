/* SPDX-License-Identifier: MIT */
/*
 * slab/compact.c - isolation, iteration, relocation and compaction.
 *
 * Owns: taking partial pages out of circulation for the owner
 * (slab_page_isolate / slab_page_putback), walking an isolated page's
 * objects, moving one object (slab_relocate, slab_relocate_to),
 * compaction of sparse pages (slab_compact), and sweeps of the oldest
 * pages (slab_sweep).
 *
 * An isolated page is in no list but cls->pages, so no thread allocates
 * from it; frees into it only push on its remote list (slab never writes
 * or poisons an object until the slot is collected), so an owner callback
 * may read any slot the walk hands it, even one being freed concurrently.
 *
 * Locking:
 *   cls->lock is held to isolate, to snapshot a page's free slots and to
 *   put it back; never across an owner callback (the callback allocates,
 *   which may take the class lock).
 *
 * Ordering:
 *   Relocation: the owner's callback republishes the new copy (its own
 *   release store or cds_lfht_replace) before slab_free_rcu(old); readers
 *   that still hold the old copy keep it until their read-side section
 *   ends (call_rcu).  The counters are relaxed (stats only).
 *
 * Probes (common/probe.h, self-contained): compact_page for each sparse
 * page slab_compact worked on (emptied unless the budget ran out): slots
 * visited, moved, dropped.
 *
 * Limitations: the candidates of a compaction are found by a scan of the
 * class's pages under its lock (O(pages) per isolated page); bins by
 * occupancy would make it O(1).
 */
#include "slab/internal.h"
#include "common/probe.h"

#include <errno.h>
#include <string.h>

unsigned slab_page_class(const struct slab_page *p)
{
	return p->cls->index;
}

uint64_t slab_page_seq(const struct slab_page *p)
{
	return p->seq;
}

uint64_t slab_page_stamp(const struct slab_page *p)
{
	return p->stamp;
}

struct slab_page *slab_page_of(const struct slab *s, const void *obj)
{
	return slab_page_hdr(s, obj);
}

/* Isolate PARTIAL page @p, cls->lock held. */
static void isolate_locked(struct slab_page *p)
{
	cds_list_del(&p->plink);
	p->state = SLAB_ISOLATED;
	slab_page_collect(p);
}

struct slab_page *slab_page_isolate(struct slab *s, unsigned cls, uint64_t min_seq)
{
	struct slab_class *c = &s->cls[cls];
	struct slab_page *p, *found = NULL;

	udc_assert(cls < s->nr_classes);
	pthread_mutex_lock(&c->lock);
	cds_list_for_each_entry(p, &c->pages, link) {
		if (p->state == SLAB_PARTIAL && p->seq >= min_seq) {
			isolate_locked(p);
			found = p;
			break;
		}
	}
	pthread_mutex_unlock(&c->lock);
	return found;
}

/* Put isolated @p back; @requeue: as the newest page of its class. */
static void page_putback(struct slab_page *p, bool requeue)
{
	struct slab_class *c = p->cls;

	pthread_mutex_lock(&c->lock);
	udc_assert(p->state == SLAB_ISOLATED);
	slab_page_collect(p);
#if UDC_DEBUG >= 3
	char why[200];
	if (slab_page_check(p, false, why, sizeof(why)))
		udc_panic("slab_page_putback: %s", why);
#endif
	if (atomic_load_explicit(&p->used, memory_order_relaxed) == 0) {
		slab_page_release_locked(p);
	} else {
		if (requeue)
			slab_page_requeue_locked(p);
		p->state = SLAB_PARTIAL;
		cds_list_add_tail(&p->plink, &c->partial);
	}
	pthread_mutex_unlock(&c->lock);
}

void slab_page_putback(struct slab *s, struct slab_page *p)
{
	(void)s;
	page_putback(p, false);
}

/*
 * The slots of isolated @p that are not on a free list now: a bitmap
 * (1 = visit) and the bump bound.
 */
static uint32_t page_snapshot(struct slab_page *p, uint64_t *visit)
{
	struct slab_class *c = p->cls;
	uint32_t bump;

	pthread_mutex_lock(&c->lock);
	udc_assert(p->state == SLAB_ISOLATED);
	slab_page_collect(p);
	bump = p->bump;
	memset(visit, 0, SLAB_MAX_SLOTS / 8);
	for (uint32_t i = 0; i < bump; i++)
		visit[i / 64] |= 1ull << (i % 64);
	for (uint32_t i = p->local; i != SLAB_NIL;) {
		visit[i / 64] &= ~(1ull << (i % 64));
		uint16_t n = p->next[i];
		i = n == UINT16_MAX ? SLAB_NIL : n;
	}
	pthread_mutex_unlock(&c->lock);
	return bump;
}

size_t slab_page_for_each(struct slab *s, struct slab_page *p, void (*fn)(void *arg, void *obj),
			  void *arg)
{
	uint64_t visit[SLAB_MAX_SLOTS / 64];
	uint32_t bump = page_snapshot(p, visit);
	size_t n = 0;

	(void)s;
	for (uint32_t i = 0; i < bump; i++) {
		if (visit[i / 64] & (1ull << (i % 64))) {
			fn(arg, slab_page_slot(p, i));
			n++;
		}
	}
	return n;
}

int slab_relocate(struct slab *s, void *obj, slab_move_fn move, void *arg)
{
	return slab_relocate_to(s, obj, slab_page_hdr(s, obj)->cls->index, move, arg);
}

int slab_relocate_to(struct slab *s, void *obj, unsigned cls, slab_move_fn move, void *arg)
{
	udc_assert(cls < s->nr_classes && s->cls[cls].size == slab_page_hdr(s, obj)->size);
	void *dst = slab_alloc(s, cls);

	if (!dst)
		return -ENOMEM;
	enum slab_verdict v = move(arg, obj, dst);
	switch (v) {
	case SLAB_MOVED:
		slab_free_rcu(s, obj);
		atomic_fetch_add_explicit(&s->relocated, 1, memory_order_relaxed);
		break;
	case SLAB_EVICTED:
		slab_free_now(s, dst);
		slab_free_rcu(s, obj);
		atomic_fetch_add_explicit(&s->evicted, 1, memory_order_relaxed);
		break;
	case SLAB_KEPT:
		slab_free_now(s, dst);
		atomic_fetch_add_explicit(&s->kept, 1, memory_order_relaxed);
		break;
	default:
		udc_panic("slab_relocate: bad verdict %d", (int)v);
	}
	return (int)v;
}

/*
 * A round's cursor (compaction's, and a sweep's with one): the seq of the
 * page it is at, and the slot it resumes that page at.  A half-visited
 * page's place was once the page's own (resume), shared by every sweep:
 * a garbage round that came to a page another sweep had left
 * half-visited began where that one stopped, and the stale entries
 * before it stayed until the next round (found by
 * tests/shrink/test_bounds.c, garbage_of_invalidated_directories_is_swept,
 * once the trim of directories past their bound swept with a cursor too).
 */
#define CURSOR_SLOT_BITS 16
#define CURSOR_SLOT_MASK ((1ull << CURSOR_SLOT_BITS) - 1)
_Static_assert(SLAB_MAX_SLOTS <= CURSOR_SLOT_MASK, "a slot fits a cursor's low bits");

static inline uint64_t cursor_seq(uint64_t cursor)
{
	return cursor >> CURSOR_SLOT_BITS;
}

/* The slot @cursor resumes @p at: its own if it is at @p, else the first. */
static inline uint32_t cursor_slot(uint64_t cursor, const struct slab_page *p)
{
	return p->seq == cursor_seq(cursor) ? (uint32_t)(cursor & CURSOR_SLOT_MASK) : 0;
}

/* The cursor of a call that stopped at slot @i of @p's @bump: past the
 * page if it was visited to its end, else at @i. */
static inline uint64_t cursor_at(const struct slab_page *p, uint32_t i, uint32_t bump)
{
	return i >= bump ? (p->seq + 1) << CURSOR_SLOT_BITS : p->seq << CURSOR_SLOT_BITS | i;
}

/*
 * The oldest sparse PARTIAL page of @c at or past @cursor, isolated, or
 * NULL: occupancy below half, counting only objects not already waiting
 * for a grace period (a page of those empties by itself: visiting it
 * again is work for nothing).  (Not "below the class average" as well:
 * after a mass free every page is sparse, and all of them must empty.)
 * Nor a page where more objects wait than could move (unless the last
 * batch stopped in it: its own moves are what wait there): a visit goes
 * through every live slot, and each waiting one costs a slot taken and
 * given back for nothing; once they land the page is cheap.  Taken while
 * they waited, a run of pages of 60 waiting objects for 9 movable ones
 * made compaction/work_follows_progress_with_frees_held visit 190 k
 * slots for 25 k moves under a loaded ctest (its bound is 2 per move
 * and 50 k): the work followed the grace periods' lateness, not the
 * moves.  Survivors go to pages at least half full or to new ones
 * (slab.c's refill while compacting), so a page is never moved into a
 * candidate.
 */
static struct slab_page *isolate_sparse(struct slab_class *c, uint64_t cursor)
{
	uint64_t min_seq = cursor_seq(cursor);
	bool resumed = (cursor & CURSOR_SLOT_MASK) != 0;   /* the last batch stopped in a page */

	struct slab_page *p, *found = NULL;

	pthread_mutex_lock(&c->lock);
	cds_list_for_each_entry(p, &c->pages, link) {
		uint32_t movable = slab_page_movable(p);
		if (p->state == SLAB_PARTIAL && p->seq >= min_seq && movable > 0 &&
		    2 * movable < p->capacity &&
		    ((resumed && p->seq == min_seq) || slab_page_live(p) - movable <= movable)) {
			isolate_locked(p);
			found = p;
			break;
		}
	}
	pthread_mutex_unlock(&c->lock);
	return found;
}

size_t slab_compact(struct slab *s, unsigned cls, size_t budget, uint64_t *cursor,
		    slab_move_fn move, void *arg)
{
	uint64_t visit[SLAB_MAX_SLOTS / 64];
	size_t done = 0;

	udc_assert(cls < s->nr_classes);
	bool nested = slab_tls_compacting;
	slab_tls_compacting = true;
	while (done < budget) {
		/* The cursor moves past the pages visited (ages only grow)
		 * and comes back to them after a wrap, on a later call.  A
		 * page the budget ended in resumes where it stopped: its
		 * first slots may wait for a grace period (a mass removal's),
		 * and a batch that began there again each time spent its
		 * budget on them and never reached the survivors behind. */
		struct slab_page *p = isolate_sparse(&s->cls[cls], *cursor);
		if (!p) {
			*cursor = 0;
			break;
		}
		done += SLAB_COMPACT_PAGE_COST;   /* the scan and snapshot */
		uint32_t bump = page_snapshot(p, visit), objects = 0, moved = 0, dropped = 0;
		uint32_t i;
		for (i = cursor_slot(*cursor, p); i < bump && done < budget; i++) {
			if (!(visit[i / 64] & (1ull << (i % 64))))
				continue;
			int v = slab_relocate(s, slab_page_slot(p, i), move, arg);
			if (v < 0) {
				budget = done;   /* out of memory: this slot again, later */
				break;
			}
			done++;
			objects++;
			moved += v == SLAB_MOVED;
			dropped += v == SLAB_EVICTED;
		}
		*cursor = cursor_at(p, i, bump);
		UDC_PROBE(compact_page, s->id, cls, s->cls[cls].size, objects, moved, dropped);
		slab_page_putback(s, p);
	}
	slab_tls_compacting = nested;
	/* The old copies go through their grace period now, not at the next
	 * SLAB_BATCH frees of this thread. */
	slab_rcu_flush_own(s);
	return done;
}

/* The oldest PARTIAL page of @c of seq in [@min_seq, @end) stamped at most
 * @stamp_max with an object not already waiting for a grace period,
 * isolated, or NULL. */
static struct slab_page *isolate_oldest(struct slab_class *c, uint64_t min_seq, uint64_t end,
					uint64_t stamp_max)
{
	struct slab_page *p, *found = NULL;

	pthread_mutex_lock(&c->lock);
	cds_list_for_each_entry(p, &c->pages, link) {
		if (p->seq >= end || p->stamp > stamp_max)
			break;   /* ages and stamps grow along the list */
		if (p->seq >= min_seq && p->state == SLAB_PARTIAL && slab_page_movable(p) > 0) {
			isolate_locked(p);
			found = p;
			break;
		}
	}
	pthread_mutex_unlock(&c->lock);
	return found;
}

uint64_t slab_sweep_next_seq(struct slab *s, unsigned cls, uint64_t stamp_max)
{
	struct slab_class *c = &s->cls[cls];
	struct slab_page *p;
	uint64_t seq = UINT64_MAX;

	udc_assert(cls < s->nr_classes);
	pthread_mutex_lock(&c->lock);
	cds_list_for_each_entry(p, &c->pages, link) {
		if (p->stamp > stamp_max)
			break;   /* stamps grow along the list */
		if (p->state == SLAB_PARTIAL && slab_page_movable(p) > 0) {
			seq = p->seq;
			break;
		}
	}
	pthread_mutex_unlock(&c->lock);
	return seq;
}

size_t slab_sweep(struct slab *s, unsigned cls, size_t budget, uint64_t stamp_max,
		  uint64_t *cursor, void (*visit)(void *arg, void *obj), void *arg)
{
	/* relaxed: pages made after this are newer than the sweep */
	uint64_t end = atomic_load_explicit(&s->seq_next, memory_order_relaxed);
	size_t done = 0;

	uint64_t visit_bits[SLAB_MAX_SLOTS / 64];

	udc_assert(cls < s->nr_classes);
	while (done < budget) {
		uint64_t min_seq = cursor ? cursor_seq(*cursor) : 0;
		struct slab_page *p = isolate_oldest(&s->cls[cls], min_seq, end, stamp_max);
		if (!p) {
			if (cursor)
				*cursor = 0;   /* the round is over */
			break;
		}
		done += SLAB_COMPACT_PAGE_COST;
		/* Where this sweep left the page, if it did: a round's own
		 * place (its cursor), the FIFO sweeps' shared one otherwise. */
		uint32_t start = cursor ? cursor_slot(*cursor, p) : p->resume;
		uint32_t bump = page_snapshot(p, visit_bits), i;
		for (i = start; i < bump && done < budget; i++) {
			if (visit_bits[i / 64] & (1ull << (i % 64))) {
				visit(arg, slab_page_slot(p, i));
				done++;
			}
		}
		/* A page left half-visited keeps its place: the next call
		 * begins with it again (its visited objects are quick). */
		bool whole = i >= bump;
		if (cursor)
			*cursor = cursor_at(p, i, bump);
		else
			p->resume = whole ? 0 : i;   /* the page is ours while isolated */
		page_putback(p, whole && !cursor);
	}
	slab_rcu_flush_own(s);   /* what the visits freed goes through its grace period now */
	return done;
}
