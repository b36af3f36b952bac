/* SPDX-License-Identifier: MIT */
/*
 * engine/stats.h - per-thread statistics, declared once.
 *
 * Each thread that calls into a cache gets a slot of counters of its own
 * (indexed by a process-wide thread index), so counting on the hit path is
 * a plain load and store to a line no other thread writes.  A slot outlives
 * its thread: a later thread that gets the same index goes on adding to it,
 * so sums stay exact.  Threads beyond STATS_CHUNKS * STATS_PER_CHUNK share
 * one slot (approximate counts).
 */
#ifndef UDC_ENGINE_STATS_H
#define UDC_ENGINE_STATS_H

#include <stdatomic.h>
#include <stddef.h>
#include <stdint.h>

/* X(name, meaning) */
#define UDC_THREAD_STATS(X)                                                       \
	X(misses, "lookups the cache could not answer")                           \
	X(hits_positive, "lookups answered by a positive entry")                  \
	X(hits_negative, "lookups answered negative (entry or complete dir)")     \
	X(backend_calls, "calls of backend->lookup")                              \
	X(pos_added, "positive entries published")                                \
	X(pos_dropped, "positive entries unpublished (replaced, removed, reclaimed)") \
	X(neg_added, "negative entries published")                                \
	X(neg_dropped, "negative entries unpublished")                            \
	X(evictions, "entries reclaimed by udc_shrink or the memory limit")       \
	X(stale_answers, "backend answers returned but not cached (raced a mutation)") \
	X(walk_retries, "udc_walk passes redone after a rename or rmdir")         \
	X(moved, "entries moved to another slab page by compaction")              \
	X(promoted, "entries moved from probation to main (hit since insertion)") \
	X(requeued, "negatives requeued in probation: their client under its fair share") \
	X(refaults_neg, "negatives re-created while their ghost was remembered")  \
	X(refaults_pos, "positives re-created while their ghost was remembered")  \
	X(aged, "negatives evicted by age (negative_max_age_ms)")                 \
	X(declined, "negatives not kept: their directory's bound")               \
	X(throttled, "calls that waited for reclaim: they outran it")              \
	X(entries_unfolded, "cache->nr_entries' change not yet added to it (mod 2^64)") \
	X(entry_bytes_unfolded, "cache->entry_bytes' change, likewise (mod 2^64)") \
	X(anon_probation_unfolded, "the anonymous probationary negatives' change, likewise")

struct thread_stats {
#define X(name, meaning) _Atomic uint64_t name;
	UDC_THREAD_STATS(X)
#undef X
} __attribute__((aligned(64)));

#define STATS_PER_CHUNK 64
#define STATS_CHUNKS 64           /* 4096 threads with slots of their own */
#define STATS_SHARED_SLOT (-1)

struct stats_chunk {
	struct thread_stats slot[STATS_PER_CHUNK];
};

/*
 * Add n to a counter of a slot the calling thread owns: a relaxed load and
 * store, no read-modify-write (single writer).  The shared slot of threads
 * past the last chunk may lose counts when they race: documented as
 * approximate, and never reached below 4096 live threads.
 */
#define stat_add(ts, field, n)                                                    \
	atomic_store_explicit(&(ts)->field,                                       \
			      atomic_load_explicit(&(ts)->field, memory_order_relaxed) + (n), \
			      memory_order_relaxed)

/* The counter of a lookup's result, UDC_MISS, UDC_POSITIVE or
 * UDC_NEGATIVE: one indexed store, no branch (the hit path's). */
_Static_assert(offsetof(struct thread_stats, hits_positive) ==
		       offsetof(struct thread_stats, misses) + 1 * sizeof(uint64_t) &&
	       offsetof(struct thread_stats, hits_negative) ==
		       offsetof(struct thread_stats, misses) + 2 * sizeof(uint64_t),
	       "lookup results index the counters from misses");
static inline void stat_lookup_result(struct thread_stats *ts, int r)
{
	_Atomic uint64_t *n = (_Atomic uint64_t *)((char *)ts + offsetof(struct thread_stats, misses) +
						   (size_t)r * sizeof(uint64_t));

	/* relaxed: the slot's single writer (stat_add) */
	atomic_store_explicit(n, atomic_load_explicit(n, memory_order_relaxed) + 1,
			      memory_order_relaxed);
}

#endif
