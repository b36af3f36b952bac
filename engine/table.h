/* SPDX-License-Identifier: MIT */
/*
 * engine/table.h - rculfhash tables whose memory is allocated before
 * liburcu asks for it (engine/table.c), so that running out of it is an
 * error we return instead of an assertion inside liburcu.
 */
#ifndef UDC_ENGINE_TABLE_H
#define UDC_ENGINE_TABLE_H

#include <stdbool.h>
#include <stddef.h>

struct cds_lfht;

/* A table of @buckets buckets (a power of two), none allocated apart
 * later below that size: NULL when out of memory. */
struct cds_lfht *table_create(size_t buckets);
/* Resize @ht to @buckets (a power of two): a growth's bucket arrays are
 * allocated first, and when they cannot be, nothing is done and false is
 * returned.  Callers serialise resizes of a table; outside rcu_read_lock,
 * blocks for the resize (grace periods). */
bool table_resize_to(struct cds_lfht *ht, size_t buckets);
/* Free @ht and its bucket arrays whatever it still holds (its nodes are
 * the caller's, untouched): no other call on it may run or follow, and no
 * reader may still be in it (udc_destroy: alone).  What cds_lfht_destroy
 * does for an empty table, without the per-node deletes it needs first. */
void table_free(struct cds_lfht *ht);
/* For tests: call @fn on each block of @ht's memory (its struct, then each
 * bucket array in use), to show that lookups write none of it.  No resize
 * may run. */
void table_memory(struct cds_lfht *ht, void (*fn)(void *arg, const char *what, void *p, size_t len),
		  void *arg);

#endif
