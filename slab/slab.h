/* SPDX-License-Identifier: MIT */
/*
 * slab/slab.h - a generic allocator of fixed-size objects in aligned pages.
 *
 * Knows nothing of names.  Objects of a few size classes live in pages of
 * 4 to 64 KiB (chosen per slab) aligned to their size; an object's page
 * header is found by masking its address.  Allocation is from an open
 * page per class of a cpu slot: the slot of the CPU the thread runs on,
 * under an uncontended lock (the next free slot if it is taken), so the
 * open pages are bounded by slots x classes however many threads call.
 * Frees are lock-free pushes on the page's remote list.  slab_free_rcu()
 * frees after an RCU grace period, batched per slot (no rcu_head in the
 * object).  Empty pages go back after a grace period: to a bounded
 * retained cache, then to a jemalloc arena that purges them at once (the
 * memory leaves the process's RSS with no call from the embedder).  For
 * its owner, slab offers page isolation, iteration over an isolated
 * page's objects, relocation and compaction of sparse pages.
 *
 * Calling context: every function except slab_create/slab_destroy must be
 * called from a thread registered with urcu-memb (rcu_register_thread),
 * outside or inside a read-side section unless told otherwise.
 */
#ifndef UDC_SLAB_H
#define UDC_SLAB_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#define SLAB_PAGE_SHIFT_MIN 12 /* 4 KiB pages */
#define SLAB_PAGE_SHIFT_MAX 16 /* 64 KiB pages, the default */
#define SLAB_MAX_CLASSES 12
#define SLAB_HIST_BUCKETS 10 /* occupancy deciles */

struct slab;
struct slab_page;
struct rcu_head;   /* liburcu's (slab_call_rcu) */

struct slab_config {
	/* Object sizes, non-decreasing, multiples of 16, 16..4096.  Equal
	 * sizes make twin classes (same size, pages apart: e.g. two queues of
	 * a cache); slab_class_for_size gives the first.  nr_classes 0: the
	 * default classes 64, 96, 128, 192, 256. */
	unsigned nr_classes;
	size_t class_size[SLAB_MAX_CLASSES];
	/* Bit i set: class i is filled once.  Its allocations take new pages
	 * only, never a partial one, so each page holds the objects of one
	 * period of time (a sweeper's FIFO segment). */
	unsigned fifo_mask;
	/* Objects that never move (nothing compacts them): a refill takes
	 * the fullest partial page with a slot free among those it
	 * looks at, so that sparse pages drain and go back, instead of the
	 * first with a quarter free. */
	bool fullest_first;
	/* Empty pages kept for reuse instead of being given back (0: none);
	 * slab_trim gives back the ones not reused. */
	size_t retained_max;
	/* The same while the owner says it has room (slab_set_roomy): more
	 * (0 or less: retained_max). */
	size_t retained_roomy_max;
	/* Pages of 1 << page_shift bytes, SLAB_PAGE_SHIFT_MIN..MAX (0: MAX).
	 * A class's objects must fit eight to a page. */
	unsigned page_shift;
	/* Cpu slots (open pages per class and RCU batches), 1..1024 (0:
	 * slab_default_cpus()).  Fewer than the CPUs: less memory open,
	 * more waiting for a slot. */
	unsigned nr_cpus;
	/* The owner's count of the pages' bytes and the RCU batches'
	 * (optional): charge(arg, bytes, holding) before a page is taken
	 * from the page allocator (not a retained one: it stays counted) or
	 * a batch is made, which may refuse it (false: slab_alloc fails with
	 * ENOBUFS; a free without a batch waits for its grace period, as
	 * without memory); @holding: a batch of slab_hold's, whose end gives
	 * memory back.  charge(arg, -bytes, false) once one is given back,
	 * slab_destroy's included.  Called under a cpu slot's lock or a
	 * class's, or none: it must not call into the slab. */
	bool (*charge)(void *arg, long bytes, bool holding);
	void *charge_arg;
};

/* The CPUs online (at least 1, at most 1024): the default slot count. */
unsigned slab_default_cpus(void);

/*
 * Statistics, declared once: X(name, meaning).  Per class and totals.
 */
#define SLAB_CLASS_STATS(X)                                                         \
	X(pages, "pages of this class (open, partial or isolated)")                 \
	X(objects, "objects allocated and not yet freed (pending RCU frees count)") \
	X(capacity, "object slots in those pages")                                  \
	X(page_bytes, "bytes of those pages")

struct slab_class_stats {
	size_t size; /* object size */
#define X(name, meaning) uint64_t name;
	SLAB_CLASS_STATS(X)
#undef X
	uint64_t hist[SLAB_HIST_BUCKETS]; /* pages by occupancy decile: [i] = i*10%..(i+1)*10% */
	double fragmentation;		  /* 1 - live bytes / page bytes (0 with no pages) */
};

#define SLAB_TOTAL_STATS(X)                                                               \
	X(pages, "pages in classes")                                                      \
	X(retained_pages, "empty pages kept for reuse")                                   \
	X(pending_pages, "empty pages waiting for a grace period")                        \
	X(objects, "objects allocated and not yet freed")                                 \
	X(bytes, "all bytes held: every page (in classes, retained, pending) + metadata") \
	X(meta_bytes, "metadata: the slab itself and RCU free batches")                   \
	X(pages_allocated, "pages ever taken from the page allocator")                    \
	X(pages_returned, "pages ever given back to the page allocator")                  \
	X(relocated, "objects moved by slab_relocate / slab_compact")                     \
	X(evicted, "objects evicted by slab_compact callbacks")                           \
	X(kept, "objects relocation left in place: dead, dropped by the owner, unmovable")

struct slab_stats {
	unsigned nr_classes;
	struct slab_class_stats cls[SLAB_MAX_CLASSES];
#define X(name, meaning) uint64_t name;
	SLAB_TOTAL_STATS(X)
#undef X
	double fragmentation; /* over all classes */
};

/* A slab; NULL with errno set (EINVAL, ENOMEM) on failure. */
struct slab *slab_create(const struct slab_config *cfg);

/*
 * Free everything.  No other call on @s may run or follow; objects still
 * allocated are freed with their pages.  Waits for pending RCU frees
 * (rcu_barrier), so call it outside a read-side section.
 */
void slab_destroy(struct slab *s);

unsigned slab_nr_classes(const struct slab *s);
size_t slab_class_size(const struct slab *s, unsigned cls);
size_t slab_page_size(const struct slab *s);
/* The bytes slab_bytes counts besides the pages: the slab itself and its
 * batches, or with a charge (slab_config) the slab itself (the owner
 * counts the rest). */
size_t slab_meta_bytes(struct slab *s);
/* The bytes of one RCU free batch (a charge's unit). */
size_t slab_batch_bytes(void);
unsigned slab_nr_cpus(const struct slab *s);
/* The smallest class holding @size bytes, or -EINVAL. */
int slab_class_for_size(const struct slab *s, size_t size);

/*
 * An object of class @cls, zeroed, or NULL: ENOMEM, or ENOBUFS if it
 * needed a new page and the owner's charge refused it.  Its page may be
 * retired from its cpu slot (slab_release_open) and isolated by a sweeper
 * before the caller has filled it in: the sweeper then reads the zeros
 * written before slab_alloc returned (ordered by the slot lock), so an
 * owner marks "this object is live" with a field that is 0 until it
 * stores it (with release) after the rest.
 */
void *slab_alloc(struct slab *s, unsigned cls);

/* Free now: no reader may still hold @obj (it was never published, or a
 * grace period passed since it was unpublished). */
void slab_free_now(struct slab *s, void *obj);

/*
 * Free after a grace period: @obj must be unpublished already; readers that
 * found it before may go on reading it until they leave their read-side
 * section.  Batched per cpu slot: a batch is handed to call_rcu() when
 * full, or by slab_rcu_flush(); while the slab is landing (below), a full
 * batch is freed by the caller, who waits for the grace periods.  Not
 * inside a read-side section (a landing caller would wait on itself: it
 * hands the batch to call_rcu() then).
 */
void slab_free_rcu(struct slab *s, void *obj);

/*
 * For an object the owner frees after a grace period by its own means
 * (slab_free_now once its own callback runs): @delta +1 when it is queued,
 * -1 just before the free.  Compaction then counts it as waiting, as it
 * counts slab_free_rcu's objects, and does not take its page for one to
 * empty by moves (each round visited such a page whole for nothing).
 */
void slab_wait_note(struct slab *s, void *obj, int delta);

/*
 * Landing on or off: the owner's memory is wanted now.  A batch freed
 * through call_rcu comes back when liburcu's thread runs it, which waits
 * 10 ms between batches: a caller removing names fast keeps thousands of
 * them in flight, all still counted (at 5% of tar-rm x75's footprint,
 * most of its bytes during its rm phase, and reclaim evicted every other
 * entry for them).  Landing, slab_free_rcu frees a full batch in the
 * caller instead, after a grace period (and the pages it emptied after a
 * second one): a 62nd of the frees waits for two grace periods.  A flag,
 * read relaxed; setting it to what it is writes nothing.
 */
void slab_set_landing(struct slab *s, bool on);
/* Is it?  For the owner's own deferred frees, which may land alike. */
bool slab_landing(struct slab *s);
/*
 * Roomy on or off: the owner has room for the spare pages (retained,
 * below) that the last second's page demand asks for, not only the last
 * 200 ms's, up to retained_roomy_max, not retained_max (off is the
 * default: a slab whose owner says nothing, or one near its limit, where
 * spare pages take the room of live objects).  Turned off, the slab
 * gives back the spare pages past retained_max at once.  A flag, read
 * relaxed, as landing's.
 */
void slab_set_roomy(struct slab *s, bool on);
/* The objects' bytes freed through call_rcu and not yet back (an
 * estimate: what the owner would get by waiting for them, rather than
 * evicting; slab_rcu_barrier waits). */
size_t slab_queued_bytes(struct slab *s);

/* Hand every slot's pending slab_free_rcu() batch to call_rcu(). */
void slab_rcu_flush(struct slab *s);
/* The same after a sweep or a compaction batch, for the frees this thread
 * made.  While they are held (slab_hold_begin: they are on this thread's
 * chain and land at slab_hold_end), the slots' batches, other paths' frees
 * (unlinks, replaced entries), join the hold too, but only from the slots
 * whose lock is free (a trylock): locking every slot (the allocators'
 * lock) cost the reclaim thread ~3,000 sleeps a second with shrink_lock
 * held in a trickle at 2 MiB (one slot), a throttled caller waiting.
 * Left in its slot, such a batch waited for 62 frees to fill it, and its
 * few objects pinned pages the pass had otherwise emptied (10-15% of a
 * replay's bytes at 10% of its footprint). */
void slab_rcu_flush_own(struct slab *s);

/*
 * Between slab_hold_begin() and slab_hold_end(), this thread's RCU frees
 * (of every slab) are kept instead of going to call_rcu; slab_hold_end()
 * waits for a grace period itself, frees them, and releases the pages they
 * emptied after a second one: the memory is back when it returns, without
 * waiting for liburcu's call_rcu thread (which sleeps 10 ms between
 * batches).  Not inside a read-side section; the slabs must outlive it.
 */
void slab_hold_begin(void);
void slab_hold_end(void);
/* Whether this thread is inside a hold. */
bool slab_holding(void);
/*
 * Inside a hold: take the batches of @s handed to call_rcu and not yet
 * run, so that the hold's end frees their objects and releases the pages
 * they empty, instead of liburcu's call_rcu thread (10 ms naps between its
 * batches, and no bound when it is starved): a caller that needs their
 * memory waits two grace periods, not for that thread.
 */
void slab_land_queued(struct slab *s);
/* Inside a hold: land what it kept so far and hold on (true); else false. */
bool slab_hold_flush(void);
/*
 * call_rcu(@head, @fn), or inside a hold, @fn(@head) run by slab_hold_end
 * after its first grace period, and the pages its frees empty released
 * after the second: for the other objects a reclaim pass frees (the
 * owner's own batches of entries, slab_land_queued's part of a batch), so
 * that their memory is back when the pass ends too.
 */
void slab_call_rcu(struct rcu_head *head, void (*fn)(struct rcu_head *head));

/* Flush every slot's batch and wait until every RCU free queued so far is
 * done (a lander's part of a batch it took included), and the pages they
 * emptied are released (the slab's count of its callbacks in flight).
 * Not inside a read-side section. */
void slab_rcu_barrier(struct slab *s);

/* Retire the open pages of every slot stamped at most @stamp_max (made or
 * reopened then; UINT64_MAX: all): they become partial pages that sweeps,
 * compaction and other slots may take.  Takes each slot's lock in turn. */
void slab_release_open(struct slab *s, uint64_t stamp_max);

/* The bytes of class @cls's pages (open, partial and isolated). */
size_t slab_class_bytes(struct slab *s, unsigned cls);

/*
 * The page holding @obj, its class, its sequence number and its stamp.  A
 * page's sequence number (seq) orders it in its class: pages are made,
 * retired by their cpu slot (it stops allocating from them) and swept
 * (slab_sweep) in increasing seq, each of which gives the page a new seq
 * past all others (a count, not a duration), and its stamp is the time of
 * the latest (slab_now_ms).  So the oldest pages are
 * the ones whose objects have waited longest since their page was filled.
 */
struct slab_page *slab_page_of(const struct slab *s, const void *obj);
unsigned slab_page_class(const struct slab_page *p);
uint64_t slab_page_seq(const struct slab_page *p);
uint64_t slab_page_stamp(const struct slab_page *p);
/* Milliseconds of CLOCK_MONOTONIC_COARSE: the clock of page stamps. */
uint64_t slab_now_ms(void);

/*
 * Page isolation, for the owner (sweeper, compactor).  slab_page_isolate()
 * takes the oldest partial page of @cls whose seq is >= @min_seq out of
 * circulation (no thread allocates from it) and returns it, or NULL.
 * While isolated, objects of the page may still be freed by anyone, but
 * their bytes are neither overwritten nor poisoned until putback, so an
 * owner callback may read an object that is being freed concurrently (it
 * must recognise it as dead by its own means).  slab_page_putback() puts it
 * back (and gives it back if it became empty).
 */
struct slab_page *slab_page_isolate(struct slab *s, unsigned cls, uint64_t min_seq);
void slab_page_putback(struct slab *s, struct slab_page *p);

/*
 * Call @fn on every object of isolated page @p not on a free list when the
 * walk starts (allocated, or freed after that).  Returns the number visited.
 */
size_t slab_page_for_each(struct slab *s, struct slab_page *p, void (*fn)(void *arg, void *obj),
			  void *arg);

/*
 * Relocation.  @move(arg, old, new) is called with a fresh object @new of
 * @old's class; it returns SLAB_MOVED after copying @old to @new and
 * republishing @new in place of @old (slab then frees @old after a grace
 * period), SLAB_EVICTED after unpublishing @old without a copy (slab frees
 * @old after a grace period and @new now), or SLAB_KEPT to leave @old alone
 * (@new is freed now; e.g. @old is already dead).  slab_relocate returns the
 * verdict, or -ENOMEM when no @new could be allocated.  The new copy is
 * taken from a cpu slot's open page, never from an isolated page.
 */
enum slab_verdict {
	SLAB_MOVED = 0,
	SLAB_EVICTED = 1,
	SLAB_KEPT = 2,
};
typedef enum slab_verdict (*slab_move_fn)(void *arg, void *old, void *new_obj);
int slab_relocate(struct slab *s, void *obj, slab_move_fn move, void *arg);
/* The same, with @new taken from class @cls (of the same object size:
 * a twin class): promotion from one queue to another. */
int slab_relocate_to(struct slab *s, void *obj, unsigned cls, slab_move_fn move, void *arg);

/*
 * Compaction of class @cls: isolate sparse partial pages (occupancy below
 * half) of seq >= *@cursor, oldest first, and ask @move about each of their
 * objects (as slab_relocate) until @budget units of work were done (one
 * per object handed to @move, SLAB_COMPACT_PAGE_COST per page isolated,
 * whose objects already waiting for a grace period are not counted as
 * its occupancy; a page where more wait than could move is left until
 * they land, unless the cursor stopped in it); emptied
 * pages go back after a grace period.  *@cursor (start at 0) is left
 * where the call stopped (a page and a slot: a page half visited resumes
 * there), or at 0 when no sparse page is left past it: so successive
 * calls sweep the class round and round, visit each slot once a round,
 * and do not revisit the pages they just evacuated.  Returns the units
 * done (fewer than @budget: the end of the round was reached; 0: no
 * sparse page at all).
 * Bounded work: at most @budget callbacks and @budget / 32 + 1 page scans.
 * Not inside a read-side section.
 */
#define SLAB_COMPACT_PAGE_COST 32   /* budget units per page isolated: a page of dead slots is not free */
size_t slab_compact(struct slab *s, unsigned cls, size_t budget, uint64_t *cursor,
		    slab_move_fn move, void *arg);

/*
 * Sweep class @cls: isolate its oldest partial pages (OPEN ones stay with
 * their slot, and pages whose objects all wait for a grace period are
 * left to empty) whose stamp is <= @stamp_max and whose seq is below the
 * class's seq when the call began, one at a time; hand each object not
 * on a free list to @visit(arg, obj) (as slab_page_for_each; @visit may
 * free, relocate or leave it), then put the page back as the newest of
 * its class with a fresh stamp (or give it back if it emptied).  Stops
 * after @budget units of work (SLAB_COMPACT_PAGE_COST per page, one per
 * object), in the middle of a page if need be: that page keeps its place
 * and is the first of the next call.  Returns the units done: fewer than @budget, no eligible page
 * is left.  Not inside a read-side section.
 * With @cursor (start at 0), pages keep their place and seq: only those
 * from *@cursor's page on are visited, and *@cursor is left where the
 * call stopped (a page and a slot: a half-visited page resumes there, not
 * where another sweep left it), or at 0 when none is left (a round over
 * the class, in bounded calls, that does not disturb the order the other
 * sweeps go by).
 */
/* The seq of the page slab_sweep (no cursor) would visit first in class
 * @cls, or UINT64_MAX if none: seqs are one order across a slab's classes,
 * so a sweeper of several classes takes the oldest page of them all. */
uint64_t slab_sweep_next_seq(struct slab *s, unsigned cls, uint64_t stamp_max);
size_t slab_sweep(struct slab *s, unsigned cls, size_t budget, uint64_t stamp_max,
		  uint64_t *cursor, void (*visit)(void *arg, void *obj), void *arg);

/* Every byte @s holds now (pages in classes, retained and pending, and
 * metadata): the stats' bytes, from two counters, cheap enough for every
 * call that checks a memory limit. */
size_t slab_bytes(struct slab *s);

/*
 * Give back the retained pages that no allocation took since the previous
 * call (the fewest the retained cache held meanwhile); while the slab is
 * roomy, but for as many as the pages made in the last second
 * (slab/internal.h, SLAB_DEMAND_MS).  Called every period, it keeps what
 * the next bursts need and returns the rest within two periods (roomy: a
 * second and a period) of the demand stopping, to the arena that purges
 * them at once.  @all: every retained page goes.  Returns the pages given
 * back.
 */
size_t slab_trim(struct slab *s, bool all);

/* At most @n retained pages from now on, @roomy_n while roomy (the
 * owner's limit changed); the ones past it go back now.  Returns the
 * pages given back. */
size_t slab_set_retained_max(struct slab *s, size_t n, size_t roomy_n);

/* Zeroed memory for an owner's big arrays (hash tables) from the pages'
 * arena, whose freed memory leaves RSS at once; NULL when out of memory.
 * slab_arena_free(NULL) does nothing. */
void *slab_arena_zalloc(size_t size);
void slab_arena_free(void *p);

/* The resident bytes of the pages' jemalloc arena, shared by every slab
 * of the process (and slab_arena_zalloc's arrays), as jemalloc counts them (its statistics refreshed: tens
 * of microseconds).  0 in sanitizer builds, whose pages come from libc. */
size_t slab_resident_bytes(void);

/*
 * Test hook: mprotect() every page in @s's classes (open ones included)
 * with @prot (PROT_READ, or PROT_READ | PROT_WRITE to undo).  Used to show
 * that a workload writes nothing to object pages.  Returns 0 or -errno.
 * No other call on @s may run, except ones that only read objects.
 */
int slab_protect_pages(struct slab *s, int prot);

/* Statistics; exact when no call runs, approximate (racy sums) otherwise. */
void slab_stats(struct slab *s, struct slab_stats *st);

/* Print @st, one line per total and per class (names from the X lists). */
void slab_stats_print(FILE *f, const struct slab_stats *st);

/*
 * Check every invariant (free lists vs live counts, lists vs states, stats
 * sums).  Returns 0, or -EUCLEAN after printing the first violation to
 * stderr.  Exact only when no other call on @s runs.
 */
int slab_check(struct slab *s);

#endif
