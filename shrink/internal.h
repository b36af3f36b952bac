/* SPDX-License-Identifier: MIT */
/*
 * shrink/internal.h - the reclaim policy's private types: its state
 * (struct shrink, which the cache points to and the engine never reads)
 * and the calls between shrink/'s own files.
 *
 * Glossary
 *   probation, main  the two queues of S3-FIFO: each entry size has two
 *                    slab classes, an even one (probation: filled once, a
 *                    FIFO of pages) and the odd one above it (main).
 *   ghost            a 16-bit fingerprint of an evicted probation entry's
 *                    hash; a new entry that finds its own goes to main.
 *   garbage          entries of a directory whose generation moved on
 *                    (invalidated, removed), swept in rounds.
 *   in transit       bytes evicted whose frees have not landed yet (they
 *                    still count in bytes_used for a grace period).
 */
#ifndef UDC_SHRINK_INTERNAL_H
#define UDC_SHRINK_INTERNAL_H

#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define _LGPL_SOURCE   /* inline read-side fast paths */
#define URCU_API_MAP   /* the flavor-neutral names: rcu_read_lock, call_rcu... */
#include <urcu/urcu-memb.h>

#include "common/cancel.h"
#include "common/debug.h"
#include "common/lock.h"
#include "common/rcu_pending.h"
#include "common/rcu_tsan.h"
#include "engine/engine.h"
#include "shrink/shrink.h"

#include <time.h>

/* The calling thread is a cache's reclaim thread (reclaim.c). */
extern __thread bool shrink_tls_reclaimer;

/* CLOCK_MONOTONIC in nanoseconds. */
static inline uint64_t mono_ns(void)
{
	struct timespec t;

	clock_gettime(CLOCK_MONOTONIC, &t);
	return (uint64_t)t.tv_sec * 1000000000ull + (uint64_t)t.tv_nsec;
}

#define CLIENT_TAGS SHRINK_CLIENT_TAGS   /* tags 1..63 lent to client ids (0: anonymous) */
#define DEFAULT_MEMORY_LIMIT ((size_t)64 << 20)
#define DEFAULT_NEGATIVE_MAX_AGE_MS 600000u

struct ghost_table;

/* Where a round over every class of a slab is (sweep.c, sweep_round):
 * each class's slab_sweep cursor, and the classes gone through. */
struct sweep_cursor {
	uint64_t cur[SLAB_MAX_CLASSES];
	uint32_t finished;                /* bit per class */
};

struct shrink {
	/* --- read by every call --- */
	struct udc_cache *c;              /* the cache whose policy this is (immutable) */
	_Atomic size_t limit;             /* bytes_limit (relaxed: written under lock) */
	_Atomic size_t mark_low;          /* its watermarks, written with it (reclaim.c: */
	_Atomic size_t mark_land;         /* reclaim_low, reclaim_land; relaxed, numbers) */
	_Atomic bool landing;             /* what landing_set last told the slabs (relaxed) */
	_Atomic size_t mark_roomy;        /* reclaim_roomy (relaxed, a number) */
	_Atomic bool roomy;               /* the same: used <= mark_roomy */
	uint32_t negative_max_age_ms;     /* immutable; UINT32_MAX: never */
	bool no_thread;                   /* UDC_CFG_NO_RECLAIM_THREAD (immutable) */
	bool reclaimer_running;           /* the reclaim thread: set at start, cleared at stop */
	size_t open_reserve;              /* a page per probation class and slot, both
	                                   * slabs (set by shrink_slab_config before any
	                                   * call; reclaim_over) */
	_Atomic unsigned neg_share;       /* negatives' share of the entries' bytes, %
	                                   * (relaxed; written under lock) */
	_Atomic int64_t client_probation[CLIENT_TAGS];  /* probationary negatives by tag
	                                                 * (0: anonymous) */
	_Atomic uint32_t client_id[CLIENT_TAGS];        /* the client a tag is lent to (admit.c) */
	_Atomic uint32_t client_used[CLIENT_TAGS];      /* since the tag was lent: its negatives
	                                                 * refaulted or promoted (admit.c), */
	_Atomic uint32_t client_evicted[CLIENT_TAGS];   /* and evicted from probation unhit */
	struct ghost_table *_Atomic ghosts;   /* RCU: replaced under lock, freed by call_rcu */
	_Atomic uint32_t ghost_slots;     /* its slots, for reads off the lock (relaxed) */
	struct rcu_pending rcu_pending;   /* replaced ghost tables not yet freed */

	/* --- one pass at a time: what follows is protected by lock
	 * unless it says otherwise --- */
	struct udc_mutex lock;
	atomic_uint lock_waiters;         /* throttled calls waiting for lock: the
	                                   * background passes let them in (reclaim.c,
	                                   * background_lock; relaxed: a hint) */
	_Atomic size_t compact_mark_live;  /* entry bytes when compaction last ran dry, */
	_Atomic size_t compact_mark_pages; /* and the slab bytes then; 0: not backed off
	                                    * (atomics: read off the lock as a hint) */
	uint64_t compact_cursor[2][SLAB_MAX_CLASSES];  /* slab_compact's, per kind and class */
	_Atomic uint64_t age_next_ms;     /* when the inline path ages next (relaxed CAS) */
	_Atomic uint64_t trim_next_ms;    /* when the slabs' retained pages are trimmed next (relaxed CAS) */
	_Atomic int64_t garbage_pending;  /* garbage noted and not yet swept (an estimate;
	                                   * added to off the lock) */
	int64_t garbage_round;            /* of it, what the running round covers */
	uint64_t garbage_token;           /* the running round's (cache_garbage_round_begin) */
	bool garbage_expiring;            /* the running garbage round saw an answer with a
	                                   * deadline (sh->lock) */
	_Atomic uint32_t expiry_next;     /* the earliest deadline of an answer published
	                                   * (or found by the last garbage round) and not
	                                   * yet swept; UINT32_MAX: none (relaxed: a hint,
	                                   * lowered by a CAS off the lock) */
	uint64_t garbage_round_ns;        /* when the last round began (CLOCK_MONOTONIC) */
	_Atomic uint64_t sweep_inline_next_ns;  /* without the thread: when a call may
	                                         * sweep garbage or trim next (read off the lock) */
	struct sweep_cursor garbage_cursor[2];  /* the garbage round's, by kind */
	_Atomic int64_t trim_excess;      /* negatives admitted past their directory's
	                                   * bound, not trimmed yet (an estimate; added
	                                   * to off the lock) */
	struct sweep_cursor trim_cursor;  /* the trim's, over the negatives */
	uint64_t adapt_ghosted[2];        /* slot bytes evicted with a ghost since neg_share's
	                                   * last move, by kind */
	uint64_t adapt_last[2];           /* the refault counters then, by kind */
	double adapt_refaults[2];         /* refaults by kind, and slot bytes evicted with */
	double adapt_bytes[2];            /* a ghost, averaged over the windows (adapt_share) */

	/* --- the tables' resizes: one at a time, off lock (seconds, for
	 * tables of millions of buckets) --- */
	struct udc_mutex resize_lock;     /* serialises cache_tables_resize; never
	                                   * held with lock */
	pthread_t worker;                 /* without the reclaim thread: the big
	                                   * jobs' thread (big resizes, much
	                                   * garbage; reclaimer_lock) */
	bool worker_made;                 /* it exists, not joined yet (reclaimer_lock) */
	atomic_bool worker_busy;          /* it has not finished its jobs */

	/* --- the reclaim thread (the reclaimer; "thread" alone is the caller) --- */
	pthread_mutex_t reclaimer_lock;   /* protects reclaimer_stop and the worker's
	                                   * state; with reclaimer_cond */
	pthread_cond_t reclaimer_cond;    /* wakes it: a stop or a kick */
	bool reclaimer_stop;
	atomic_bool reclaimer_kicked;     /* a client asked for a pass since the last wake-up */
	pthread_t reclaimer;
};

/* Even classes are probation; the odd one above each is main. */
static inline unsigned entry_main_class(unsigned cls)
{
	return cls | 1;
}

/* ---- shrink/sweep.c: the page sweeper (S3-FIFO queues), ghosts, ageing ---- */
int sweep_create(struct shrink *sh);    /* the ghost table: 0 or -ENOMEM */
void sweep_destroy(struct shrink *sh);
/* The limit becomes @limit: the ghost table shrinks to it, the slabs'
 * spare pages' caps follow it (lock held, outside rcu_read_lock).  0, or
 * -ENOMEM and nothing changed. */
int sweep_limit_changed(struct shrink *sh, size_t limit);
/* The ghost table's due growth in bytes (0: none), and its growth when
 * @room bytes under the limit hold it (sh->lock held). */
size_t sweep_ghosts_growth(struct shrink *sh);
void sweep_ghosts_grow(struct shrink *sh, size_t room);
/* Sweep until about @bytes of entries are evicted, lock held: the slot
 * bytes evicted.  Past @enough of them (the reclaim thread's; @bytes
 * otherwise), the sweep ends early if a throttled call waits for the lock.
 * @bytes SIZE_MAX: every entry goes, hit or not, and leaves no ghost. */
size_t sweep_reclaim(struct shrink *sh, size_t bytes, size_t enough);
/* Retire both slabs' open pages stamped at most @stamp_max (UINT64_MAX:
 * all): sweeps and compaction reach them then. */
void open_release(struct udc_cache *c, uint64_t stamp_max);
/* Age negatives out (negative_max_age_ms), at most @budget work units,
 * lock held: true if more remains. */
bool sweep_age(struct shrink *sh, size_t budget);
/* Whether a garbage round should run now; lock held. */
bool sweep_garbage_due(struct shrink *sh);
/* The earliest deadline passed: a unit of garbage noted (a round runs). */
void sweep_expiry_check(struct shrink *sh);
/* Drop garbage, at most @budget work units, lock held: true if more remains. */
bool sweep_garbage(struct shrink *sh, size_t budget);
/* Trim directories past their bound (their oldest unhit negatives), at
 * most @budget work units, lock held: true if more remains. */
bool sweep_trim(struct shrink *sh, size_t budget);

/* ---- shrink/reclaim.c ---- */
/* shrink_lock for a background batch (the reclaim thread's, the
 * worker's): throttled calls waiting for it go first (lock_waiters). */
void background_lock(struct shrink *sh);

/* ---- shrink/compact.c: when to move entries out of sparse pages ---- */
/* A bounded batch if worth it, or nothing if another thread is at it. */
void compact_inline(struct shrink *sh);
/* Compaction would give pages back (a racy look, without shrink_lock). */
bool compact_due(struct shrink *sh);
/* One batch if worth it, waiting for the lock: true if more remains.
 * @fresh: forget the inline path's back-off first. */
bool compact_batch(struct shrink *sh, bool fresh);
/* Compact until no sparse page is left, in bounded batches (the lock
 * taken per batch, so not held by the caller): blocks.  The work done. */
size_t compact_all(struct shrink *sh);

/* ---- shrink/admit.c ---- */
/* Negative @e (found in a slab page) left probation for main (promotion). */
void admit_promoted(struct shrink *sh, const struct udc_entry *e);
/* Has client @tag shown use since its tag was lent: of its negatives,
 * refaults and promotions at least 1/EARN_RATIO of its evictions (and one)? */
bool admit_earned(struct shrink *sh, uint8_t tag);
/* A negative of client @tag was evicted from probation unhit. */
void admit_evicted(struct shrink *sh, uint8_t tag);
/* Client @tag made again a name whose lasting ghost stands for @uses of
 * its evicted names (sweep.c): that many uses. */
void admit_returned(struct shrink *sh, uint8_t tag, unsigned uses);
/* The fair shares of probation, [0] over the tags that have not earned
 * (anonymous one of them) and [1] over those that have: the mean of the
 * probationary negatives of the tags that have some (0 if none); has[i]:
 * some tag of the kind has some. */
struct fair_share {
	int64_t share[2];
	bool has[2];
};
void admit_fair_share(struct shrink *sh, struct fair_share *out);

#endif
