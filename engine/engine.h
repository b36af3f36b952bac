/* SPDX-License-Identifier: MIT */
/*
 * engine/engine.h - what the engine offers its reclaim policy (shrink/).
 *
 * The engine owns the name table, the entries, the directory objects and
 * their locks; shrink/ decides what to evict, move, age and when, and asks
 * the engine to do it through these calls, never touching an engine
 * structure itself.  The entries shrink/ works on are the slots of the
 * engine's two slabs (cache_slab), which it visits with slab_sweep and
 * slab_compact: an entry found that way may be freed under it, so it
 * copies the key first (entry_key_copy) and the engine re-checks under the
 * name's lock.  (shrink/shrink.h is the other direction: the events the
 * engine tells its policy.)
 */
#ifndef UDC_ENGINE_ENGINE_H
#define UDC_ENGINE_ENGINE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "engine/stats.h"
#include "include/udcache.h"
#include "slab/slab.h"

struct udc_cache;
struct udc_entry;

enum entry_kind {
	ENT_NEGATIVE = 0,
	ENT_POSITIVE = 1,
};

#define HITS_MAX 3   /* an entry's hit counter saturates here */

/* A copy of an entry's key, taken while the entry may be freed under us. */
struct entry_key {
	uint64_t hash;
	udc_ino dir;
	uint8_t len;
	char name[UDC_NAME_MAX];
};

/* ---- the cache ---- */
struct slab *cache_slab(struct udc_cache *c, enum entry_kind kind);   /* the kind's entries */
struct slab *cache_dir_slab(struct udc_cache *c);   /* directory objects (its spare pages) */
size_t cache_bytes_used(struct udc_cache *c);   /* bytes_used, hash buckets included */
size_t cache_entry_bytes(struct udc_cache *c);  /* slots of the entries in the table */
int64_t cache_nr_entries(struct udc_cache *c);
int64_t cache_nr_dirs(struct udc_cache *c);
size_t cache_dirs_bytes(struct udc_cache *c);     /* the directory objects' */
size_t cache_buckets_bytes(struct udc_cache *c);  /* both tables' bucket arrays */
size_t entry_slabs_bytes(struct udc_cache *c);  /* both slabs' pages */
/* The bytes the tables' due growths would add (reclaim makes room first). */
size_t cache_tables_growth(struct udc_cache *c);
bool cache_tables_resize_due(struct udc_cache *c);
/* The buckets a due resize of the tables walks (0: none due). */
size_t cache_tables_resize_work(struct udc_cache *c);
/* Resize the tables that are due, growing only within @room bytes; one
 * caller at a time (the policy's resize_lock), outside rcu_read_lock;
 * blocks (seconds for tens of millions of buckets). */
void cache_tables_resize(struct udc_cache *c, size_t room);
/* The calling thread's counters (stat_add), and every thread's summed. */
struct thread_stats *cache_stats(struct udc_cache *c);
void stats_sum(struct udc_cache *c, struct thread_stats *sum);
/* Memory accounted in bytes_used: NULL on ENOMEM, or ENOBUFS if it would
 * take bytes_used past its bound (engine/alloc.c, held_charge). */
void *mem_alloc(struct udc_cache *c, size_t size);
/* The same, never refused by the bound: for what replaces a larger
 * allocation, freed once the new one is in place (a smaller table when
 * the limit is lowered: the cache may be at its bound then). */
void *mem_alloc_over(struct udc_cache *c, size_t size);
void mem_free(struct udc_cache *c, void *p, size_t size);
/* The cache's clock for deadlines (engine/internal.h, Expiry). */
uint32_t cache_ticks(const struct udc_cache *c);
/* A garbage round (one that visits every page, dropping what answers
 * nothing) begins: its token, for cache_garbage_round_end when it has
 * visited every page.  Objects forgotten before it began (udc_forget_ino)
 * are then retired (engine/forget.c). */
uint64_t cache_garbage_round_begin(struct udc_cache *c);
void cache_garbage_round_end(struct udc_cache *c, uint64_t token);
/* A thread of the policy's own (the reclaim thread) before its first call. */
void engine_thread_enter(void);

/* ---- one entry, found in a slab page ---- */
/* Still in the table (acquire: its fields are the published ones)? */
bool entry_published(const struct udc_entry *e);
/* Its answer is current (its directory's generation is still its own)? */
bool entry_is_current(struct udc_cache *c, const struct udc_entry *e);   /* answers: current, not expired */
enum entry_kind entry_kind_of(const struct udc_entry *e);
uint8_t entry_hits(const struct udc_entry *e);
bool entry_names_dir(const struct udc_entry *e);   /* a positive whose object is a directory */
bool entry_dir_lone(const struct udc_entry *e);   /* the only holder of its directory object */
uint8_t entry_client_tag(const struct udc_entry *e);   /* a negative's; 0 anonymous */
uint32_t entry_deadline_of(const struct udc_entry *e);  /* 0: none (cache ticks) */
size_t entry_slot_size(const struct udc_cache *c, const struct udc_entry *e);
/* Copy e's key if e is published (false: it is dead).  Outside rcu_read_lock;
 * e is in a slab page (its bytes stay until its free lands). */
bool entry_key_copy(struct udc_cache *c, struct udc_entry *e, struct entry_key *out);
/* The positives and current-generation negatives of e's directory, if e
 * is published (false: it is dead).  Outside rcu_read_lock. */
bool entry_dir_counts(struct udc_entry *e, int64_t *positives, uint64_t *negatives);
/* Evict e (key: its key) if it is still published: true if it went.
 * @warm: walk its hash chain before taking its stripe (a second walk, paid
 * by the caller, that keeps the stripe's hold short: the reclaim thread). */
bool entry_evict(struct udc_cache *c, struct udc_entry *e, const struct entry_key *key,
		 bool warm);
/* slab_move_fn (arg: the cache): move a published entry, drop a stale
 * one, keep a dead one.  The copy keeps the entry's requeues. */
enum slab_verdict entry_move(void *cache, void *old_obj, void *new_obj);
/* The same, the copy's requeues one more (saturated at 254): a probation
 * entry moved to the young end of its own FIFO (shrink/sweep.c). */
enum slab_verdict entry_requeue_move(void *cache, void *old_obj, void *new_obj);
/* How many times e (published) was requeued so far (0 for a dead one). */
uint8_t entry_requeues(const struct udc_entry *e);
/* Lower e's hit count by @n (to 0 at least). */
void entry_hits_spend(struct udc_entry *e, uint8_t n);
/* Hand the pending batches to RCU (while landing: land them now). */
void entry_free_flush(struct udc_cache *c);
/* Flush, and land here what waits for call_rcu's thread: the queued
 * batches (not those whose callbacks run meanwhile), their pages
 * included; two grace periods of the caller's.  Not in a read-side
 * section. */
void entry_frees_land(struct udc_cache *c);
/* The same, then wait until every free queued before and the pages they
 * empty have landed (call_rcu's queue, twice). */
void entry_frees_wait(struct udc_cache *c);
/* The bytes of freed entries handed to call_rcu and not yet back: what
 * entry_frees_wait would give (an estimate). */
size_t entry_frees_queued(struct udc_cache *c);

/* ---- directory objects ---- */
/* Free idle directories, at most @budget looked at, one caller at a time
 * (the policy's lock): those that hold no answer, and with @pressure the
 * others too.  Returns true if more remains. */
bool dir_reap(struct udc_cache *c, size_t budget, bool pressure);
bool dir_reap_due(struct udc_cache *c);   /* idle directories are waiting (a hint) */

#endif
