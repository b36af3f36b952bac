/* SPDX-License-Identifier: MIT */
/*
 * slab/internal.h - the slab's private types, in one place.
 *
 * Glossary
 *   page      s->page_size bytes (4..64 KiB, chosen at slab_create) aligned
 *             to its size: a header (struct slab_page), the next-index
 *             array, then the slots.
 *   cpu slot  one of s->nr_cpus open-page holders (struct slab_cpu): an
 *             open page per class and an RCU free batch, under its lock.
 *             A thread uses the slot of the CPU it runs on, or the next
 *             free one: threads share slots, so the pages no reclaim can
 *             reach are bounded by CPUs x classes, never by threads.
 *   slot      one object's place in a page, by index 0..capacity-1.
 *   bump      slots >= bump were never handed out (no list holds them).
 *   local     the page's local free list: popped by the holder of the
 *             page's cpu slot lock (OPEN), or under the class lock
 *             (otherwise); every free goes to remote first.
 *   remote    the page's remote free list: pushed lock-free by any thread,
 *             taken whole (atomic exchange) by whoever may touch local.
 *   used      slots handed out and not back on local (remote ones count).
 *   state     OPEN (a cpu slot's open page), PARTIAL (on the class's
 *             partial list, anyone may acquire it), ISOLATED (taken by
 *             slab_page_isolate), DEAD (empty, waiting for a grace period).
 *
 * Free-list links are slot indexes kept in the header's next[] array, not
 * in the objects: slab never writes into an object, which is what lets an
 * owner read an object of an isolated page while it is being freed.
 *
 * Lock order: cpu->lock -> cls->lock -> retained_lock.
 *
 * Invariants (checked by slab_check() and, for isolated pages,
 * slab_page_check() at UDC_DEBUG >= 3):
 *   |local| + (capacity - bump) + used == capacity
 *   |remote| == remote_n                         (when no free is running)
 *   live == used - remote_n                      (objects not yet freed)
 *   rcu_n <= live          (of them, those waiting for a grace period,
 *                          but a slot's batch's last run: slab.c, batch_put)
 *   no slot is twice on local + remote, and all are < bump
 *   state == PARTIAL  <=>  page on cls->partial
 *   state != DEAD     <=>  page on cls->pages (ages increase along it)
 *   state == OPEN     <=>  owner != NULL
 *   cls->nr_pages == |cls->pages|
 *   s->nr_pages == sum cls->nr_pages + s->nr_retained + s->nr_pending
 */
#ifndef UDC_SLAB_INTERNAL_H
#define UDC_SLAB_INTERNAL_H

#include "common/rcu_flight.h"
#include <pthread.h>
#include <stdatomic.h>
#include <stddef.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

#define _LGPL_SOURCE /* inline read-side fast paths */
#define URCU_API_MAP /* the flavor-neutral names: rcu_read_lock, call_rcu... */
#include <urcu/urcu-memb.h>
#include "common/rcu_tsan.h" /* liburcu's orderings, for TSan builds */
#include <urcu/list.h>

#include "slab/slab.h"

#include "common/debug.h"
#include "common/lock.h"
#include "common/rcu_pending.h"

#if defined(__SANITIZE_ADDRESS__)
#include <sanitizer/asan_interface.h>
#define SLAB_POISON(p, n) ASAN_POISON_MEMORY_REGION(p, n)
#define SLAB_UNPOISON(p, n) ASAN_UNPOISON_MEMORY_REGION(p, n)
#define SLAB_LIBC_PAGES 1
#else
#define SLAB_POISON(p, n) ((void)(p), (void)(n))
#define SLAB_UNPOISON(p, n) ((void)(p), (void)(n))
#endif
#if defined(__SANITIZE_THREAD__)
#define SLAB_LIBC_PAGES 1
#endif

#define SLAB_NIL UINT32_MAX  /* end of a free list */
#define SLAB_MAX_SLOTS 1024  /* 64 KiB / 64 bytes: fits next[] in uint16 */
#define SLAB_MAX_CPUS 1024   /* cpu slots at most */
#define SLAB_BATCH 62	     /* objects per RCU free batch */
#define SLAB_PARTIAL_SCAN 32 /* partial pages looked at per refill */
/* The retained cache follows the pages made in the last SLAB_DEMAND_TIGHT
 * windows of SLAB_DEMAND_MS, or in the last SLAB_DEMAND_WINDOWS (a second)
 * while the owner says it has room (slab_set_roomy).  Emptied pages come
 * back in bursts (a compaction's, a garbage pass's): in the mixed workload
 * at 1 GiB a burst came every 500-700 ms, and with 200 ms of demand the
 * pages of one burst that the next 300 ms needed went to the OS and were
 * faulted in again (22 faults a thousand calls, against 11); at a binding
 * limit a second's spare pages took the entries' room (tar-rm's replay
 * at half its footprint: 3% more backend lookups) (BENCHMARKS.md, issue
 * 16, stop 37). */
#define SLAB_DEMAND_MS 100
#define SLAB_DEMAND_WINDOWS 10
#define SLAB_DEMAND_TIGHT 2
#define SLAB_RETAINED_FLOOR 2 /* pages kept with no demand at all */

enum slab_page_state {
	SLAB_OPEN = 1,
	SLAB_PARTIAL,
	SLAB_ISOLATED,
	SLAB_DEAD,
};

struct slab_class;

/*
 * struct slab_page - the header at the start of every page.
 *
 * The first line is the owner's (allocation path), the second is written
 * by remote frees, the rest is under the class lock.  The lines are padded
 * by hand, not with aligned(64): the list iterators form a struct pointer
 * from a list head, and UBSan rejects it if the type asks 64-byte alignment.
 */
struct slab_page {
	/* --- the owner's, or the class lock's when not OPEN --- */
	uint32_t local;		/* head of the local free list */
	uint32_t bump;		/* next never-used slot */
	_Atomic uint32_t used;	/* relaxed: written by one side, read by stats */
	uint32_t capacity;	/* immutable while the page is in a class */
	uint32_t size;		/* object size; immutable likewise */
	uint32_t offset;	/* first slot's offset from the page start */
	struct slab_class *cls; /* immutable likewise */
	_Atomic(void *) owner;	/* OPEN: the struct slab_cpu holding it, else NULL */
	char pad1_[24];		/* to 64 bytes (explicit: see below) */

	/* --- remote frees --- */
	_Atomic uint32_t remote;  /* head of the remote list */
	_Atomic int32_t remote_n; /* pushes counted after they land */
	_Atomic int32_t rcu_n;	  /* handed to slab_free_rcu, free not landed yet
				   * (but a slot's batch's last run: batch_put),
				   * or waiting in the owner's (slab_wait_note) */
	char pad2_[52];

	/* --- under cls->lock --- */
	uint32_t state;		    /* enum slab_page_state */
	uint64_t seq;		    /* order on cls->pages: made, retired or swept */
	uint64_t stamp;		    /* slab_now_ms() when it got that age */
	uint32_t resume;	    /* slab_sweep without a cursor: the slot a half-visited page resumes at */
	struct cds_list_head link;  /* on cls->pages, by age */
	struct cds_list_head plink; /* on cls->partial when PARTIAL */
	struct rcu_head rcu;	    /* the release after a grace period */
	struct slab_page *dead_next; /* on slab_hold_end's chain of pages it emptied */
	struct slab *slab;

	uint16_t next[]; /* free-list links by slot index */
};

_Static_assert(offsetof(struct slab_page, remote) == 64, "remote frees on their own line");
_Static_assert(offsetof(struct slab_page, state) == 128, "locked fields on their own line");

struct slab_class {
	pthread_mutex_t lock;	      /* protects the lists and non-OPEN pages */
	struct cds_list_head pages;   /* every non-DEAD page, oldest first */
	struct cds_list_head partial; /* PARTIAL pages, retired order */
	uint64_t nr_pages;	      /* |pages| (protected by lock) */
	uint32_t size;
	uint32_t capacity;
	uint32_t offset;
	unsigned index;
	bool fifo;		      /* filled once: no refill from partial pages */
	bool fullest_first;	      /* slab_config's: refills take the fullest */
	struct slab *slab;
	char pad_[64]; /* keep classes' locks apart (see slab_page) */
};

/* A batch of objects freed together after one grace period. */
struct slab_batch {
	struct rcu_head rcu;
	struct slab_batch *held_next; /* on the thread's held chain (slab_hold_begin) */
	struct slab *slab;
	unsigned n;
	unsigned counted;             /* obj[0..counted) are in their pages' rcu_n; the
				       * rest, one page's run in a slot's batch, not
				       * yet (slab.c, batch_put) */
	size_t queued;                /* bytes counted in slab.queued_bytes (batch_queue) */
	struct rcu_flight flight;     /* handed to call_rcu: on slab.flight (flight_lock) */
	struct rcu_head land_rcu;     /* a lander's free, run by its hold's end */
	void *obj[SLAB_BATCH];
};

/*
 * A cpu slot: the open pages and the RCU free batch of the threads that
 * run on one CPU (or find its lock free).  Padded to its own lines.
 */
struct slab_cpu {
	struct udc_mutex lock;			   /* everything below */
	struct slab_page *open[SLAB_MAX_CLASSES]; /* OPEN pages, owner == this slot */
	struct slab_batch *batch;		   /* slab_free_rcu's batch being filled */
} __attribute__((aligned(64)));

struct slab {
	uint64_t id;		/* unique in the process (probes) */
	unsigned nr_classes;
	unsigned nr_cpus;	/* cpu slots */
	unsigned page_shift;	/* pages of 1 << page_shift bytes, aligned to it */
	size_t page_size;
	struct slab_cpu *cpus;	/* [nr_cpus] */
	bool (*charge)(void *arg, long bytes, bool holding);   /* slab_config's (NULL: none) */
	void *charge_arg;
	size_t fixed_bytes;	/* the slab and its cpu slots: meta_bytes less the batches */

	/* --- counters (relaxed; stats only) --- */
	_Atomic uint64_t seq_next;
	_Atomic int64_t nr_pages;   /* pages held: classes + retained + pending */
	_Atomic int64_t nr_pending; /* DEAD pages waiting for their grace period */
	_Atomic bool landing;       /* slab_set_landing: full batches freed by their freer */
	_Atomic bool roomy;         /* slab_set_roomy: spare pages for a second's demand */
	_Atomic int64_t queued_bytes; /* objects' bytes in batches handed to call_rcu, not yet freed */
	_Atomic int64_t meta_bytes;
	_Atomic uint64_t pages_allocated;
	_Atomic uint64_t pages_returned;
	_Atomic uint64_t relocated;
	_Atomic uint64_t evicted;
	_Atomic uint64_t kept;

	pthread_mutex_t retained_lock; /* protects retained, nr_retained, retained_low, demand*,
					* retained_max, retained_roomy_max */
	struct cds_list_head retained; /* empty pages, linked through link */
	size_t retained_max;	       /* the most kept (slab_set_retained_max) */
	size_t retained_roomy_max;     /* the same while roomy, >= retained_max */
	int64_t nr_retained;
	int64_t retained_low;	       /* fewest retained since the last slab_trim */
	uint64_t demand_ms;	       /* the current demand window's start (slab_now_ms) */
	unsigned demand_cur;	       /* the current window's index in demand[] */
	uint64_t demand[SLAB_DEMAND_WINDOWS]; /* pages made per window, a ring */

	struct rcu_pending rcu_pending; /* batch and page callbacks in flight (slab_destroy waits) */
	pthread_mutex_t flight_lock;	/* protects flight (a leaf; common/rcu_flight.h) */
	struct cds_list_head flight;	/* batches handed to call_rcu, not yet run or taken */

	struct slab_class cls[SLAB_MAX_CLASSES];
};

/* The owner's charge (slab_config.charge) for @bytes taken: false if it
 * refused them (no charge: always true); and the bytes given back. */
static inline bool slab_charge(struct slab *s, size_t bytes, bool holding)
{
	return !s->charge || s->charge(s->charge_arg, (long)bytes, holding);
}

static inline void slab_uncharge(struct slab *s, size_t bytes)
{
	if (s->charge)
		s->charge(s->charge_arg, -(long)bytes, false);
}

/* slab.c: true while this thread runs slab_compact (refill policy). */
extern __thread bool slab_tls_compacting;
/* slab.c: while slab_hold_end frees, the pages it empties are chained here
 * (released after its own grace period) instead of going to call_rcu. */
extern __thread bool slab_tls_capturing;
extern __thread struct slab_page *slab_tls_captured;

/* page.c */
struct slab_page *slab_page_new(struct slab_class *c, struct slab_cpu *owner);
int slab_arena_init(void);   /* the pages' jemalloc arena: 0 or -ENOMEM */
void slab_page_release_locked(struct slab_page *p);
void slab_page_free_dead(struct slab_page *p);   /* a DEAD page, a grace period later */
void slab_page_requeue_locked(struct slab_page *p);   /* newest of its class now */
uint32_t slab_page_collect(struct slab_page *p);
void *slab_page_pop(struct slab_page *p);
int slab_page_check(const struct slab_page *p, bool quiescent, char *why, size_t n);
void slab_page_free_mem(struct slab *s, struct slab_page *p);
/* Give back the spare pages past the cap of now (roomy or not); how many. */
size_t slab_retained_fit(struct slab *s);

/* The roomy cap given the tight one: never below it (0: the same). */
static inline size_t slab_retained_roomy(size_t max, size_t roomy_max)
{
	return roomy_max > max ? roomy_max : max;
}

static inline struct slab_page *slab_page_hdr(const struct slab *s, const void *obj)
{
	return (struct slab_page *)((uintptr_t)obj & ~(uintptr_t)(s->page_size - 1));
}

static inline uint32_t slab_page_index(const struct slab_page *p, const void *obj)
{
	return (uint32_t)(((uintptr_t)obj - (uintptr_t)p - p->offset) / p->size);
}

static inline void *slab_page_slot(const struct slab_page *p, uint32_t i)
{
	return (char *)p + p->offset + (size_t)i * p->size;
}

static inline uint32_t slab_page_live(const struct slab_page *p)
{
	int64_t v = (int64_t)atomic_load_explicit(&p->used, memory_order_relaxed) -
		    atomic_load_explicit(&p->remote_n, memory_order_relaxed);
	/* remote_n runs behind the remote list for a moment (a freer counts
	 * its push after it lands, and a collect may take the slot first):
	 * then used - remote_n exceeds the truth; never report past capacity. */
	return v < 0 ? 0 : v > p->capacity ? p->capacity : (uint32_t)v;
}

/* Live objects not already on their way out (slab_free_rcu): what a
 * compaction would have to move.  Relaxed, like slab_page_live. */
static inline uint32_t slab_page_movable(const struct slab_page *p)
{
	uint32_t live = slab_page_live(p);
	int32_t q = atomic_load_explicit(&p->rcu_n, memory_order_relaxed);

	return q <= 0 ? live : (uint32_t)q >= live ? 0 : live - (uint32_t)q;
}

#endif
