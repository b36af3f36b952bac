/* SPDX-License-Identifier: MIT */
/*
 * shrink/shrink.h - the reclaim policy, as the engine sees it: the events
 * the engine tells it, and the decisions it asks of it.
 *
 * The policy's state is a struct shrink (shrink/internal.h) that the cache
 * points to; the engine never reads its fields.  What the policy may ask
 * of the engine is engine/engine.h.
 */
#ifndef UDC_SHRINK_SHRINK_H
#define UDC_SHRINK_SHRINK_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "engine/engine.h"

struct shrink;
struct udc_config;

/* ---- start and stop ---- */
/* The policy of cache @c (its memory accounted in @c): 0 or -ENOMEM. */
int shrink_create(struct udc_cache *c, const struct udc_config *cfg, struct shrink **out);
void shrink_destroy(struct shrink *sh);   /* its thread stopped first */
/* The reclaim thread (none with UDC_CFG_NO_RECLAIM_THREAD): 0 or -ENOMEM.
 * Stopped and started again around fork() (engine/fork.c). */
int shrink_reclaimer_start(struct shrink *sh);
void shrink_reclaimer_stop(struct shrink *sh);

/* ---- the slabs' layout ---- */
/* The slab classes of @kind's entries, whose sizes are @sizes[0..n):
 * each size twice, probation and main (S3-FIFO); and the page size and cpu
 * slots, from the memory limit (the pages reclaim reaches last stay a
 * small share of it), by the first @common sizes, which every cache uses
 * (the others, positives with values, open pages only when they are). */
void shrink_slab_config(struct shrink *sh, const size_t *sizes, unsigned n, unsigned common,
			struct slab_config *out);
/* The class of a new entry of hash @hash whose size's probation class is
 * @cls: @cls, or its main class when the name's ghost was remembered.
 * @tag: a negative's client tag (0: anonymous, or a positive). */
unsigned shrink_entry_class(struct shrink *sh, enum entry_kind kind, unsigned cls,
			    uint64_t hash, uint8_t tag);

/* ---- admission of negatives ---- */
/* The tag of client id @client (0: anonymous, or no tag free). */
uint8_t shrink_client_tag(struct shrink *sh, uint32_t client);
/* The negatives a directory of @positives positives keeps. */
uint64_t shrink_dir_bound(int64_t positives);
/* May a negative of client @tag be kept in a directory holding @positives
 * positives and @negatives negatives of its generation?  Past the bound,
 * yes (and the directory's oldest unhit ones will go) up to twice it. */
bool shrink_admit_negative(struct shrink *sh, int64_t positives, uint64_t negatives,
			   uint8_t tag);

/* ---- events ---- */
/* An entry of @kind (a negative's client @tag) in slab class @cls entered
 * (+1) or left (-1) the table.  @unfolded (may be NULL): a counter only
 * the calling thread writes (its stats slot's anon_probation_unfolded),
 * where an anonymous negative's count waits until a batch of them is
 * added to the cache's at once. */
void shrink_entry_counted(struct shrink *sh, enum entry_kind kind, uint8_t tag, unsigned cls,
			  int delta, _Atomic uint64_t *unfolded);
/* The probationary negatives counted for client tag @tag (0..
 * SHRINK_CLIENT_TAGS - 1; anonymous: 0, less the threads' unfolded
 * counts), and whether slab class @cls is a probation class (engine_check
 * counts the table's against them). */
#define SHRINK_CLIENT_TAGS 64
int64_t shrink_probation_counted(struct shrink *sh, uint8_t tag);
bool shrink_class_probation(unsigned cls);
/* A directory's generation moved on, leaving about @entries entries
 * behind as garbage to sweep. */
void shrink_dir_forgotten(struct shrink *sh, int64_t entries);
/* An answer with a deadline (cache ticks, engine/internal.h's Expiry) was
 * published: a garbage round runs once the earliest such passes. */
void shrink_expiry_noted(struct shrink *sh, uint32_t deadline);
/* A mutating call or a miss is done (reclaim inline, throttle). */
void shrink_after_call(struct shrink *sh);
/* A call that made only directory objects is done: the bound alone, no
 * chores (see reclaim.c). */
void shrink_after_dir_call(struct shrink *sh);
/* A call's allocation would pass the bound (engine/alloc.c,
 * bounded_slab_alloc): wait for shrink_lock and evict below the limit,
 * as a throttled call does.  Outside a read-side section, with no lock of
 * the cache held. */
void shrink_make_room(struct shrink *sh);
/* Debug builds: does the calling thread hold shrink_lock?  (Always true
 * in release builds, as lock_held.) */
bool shrink_lock_mine(struct shrink *sh);
/* A name was dropped (pages may be sparse now: compaction). */
void shrink_after_drop(struct shrink *sh);
/* Directories were forgotten (shrink_dir_forgotten) and the caller holds
 * no lock: without the reclaim thread, the worker takes much garbage. */
void shrink_after_forget(struct shrink *sh);

/* ---- the public calls that are the policy's ---- */
size_t shrink_bytes(struct shrink *sh, size_t bytes);   /* udc_shrink */
int shrink_set_limit(struct shrink *sh, size_t bytes);   /* udc_set_memory_limit */
size_t shrink_limit(const struct shrink *sh);            /* bytes_limit */
size_t shrink_slack(const struct shrink *sh);            /* bytes_slack */

/* ---- diagnostics ---- */
/* The tables' resizes that are due, made now (waiting for one in progress):
 * a benchmark's steady state after a preload (udc-stress's settle). */
void shrink_tables_settle(struct shrink *sh);
/* Where bytes_used is (udc-stress's replay reports it): each part read
 * apart while the cache runs, so a busy cache's parts add up to about
 * the total only.  Density faults show here first: pages pinned by a few
 * frees (issue 14, stop 23), main's pages left part empty (stop 24). */
struct shrink_bytes_parts {
	uint64_t total;             /* bytes_used */
	uint64_t dirs;              /* directory objects */
	uint64_t buckets;           /* the tables' bucket arrays */
	uint64_t ghosts;            /* the ghost table */
	uint64_t slab[2];           /* by kind: the slab's pages and metadata */
	uint64_t pages[2][2];       /* [kind][main]: the queue's pages */
	uint64_t live[2][2];        /* [kind][main]: its live objects' slots */
	uint64_t other;             /* the rest: long names apart, stats,
	                             * the cache struct (total less the above) */
};
void shrink_bytes_parts(struct shrink *sh, struct shrink_bytes_parts *p);

#endif
