/* SPDX-License-Identifier: MIT */
/*
 * shrink/admit.c - which negatives are kept at all: a directory's bound.
 *
 * Owns: the per-directory count of current-generation negatives
 * (udc_dir.neg_now), the per-client count of probationary negatives
 * (c->client_probation, by client tag) and the admission rules.  A directory keeps at most
 * max(ADMIT_NEG_PER_POS x its positives, ADMIT_NEG_FLOOR) negatives of
 * its current generation (Bottomley's bound): a client scanning unique
 * names in one directory cannot fill the cache with them, while a
 * directory with real contents keeps the negatives its lookups need.
 * Past the bound a new negative is declined (udc_add_negative and
 * udc_resolve still answer, and the name's old entry still goes).
 *
 * A client (struct udc_call.client, udc_add_negative's client; folded to
 * one of 63 tags, kept in the negative's spare type bits) may have at most
 * CLIENT_SHARE percent of the cache's room in probation (limit / 64
 * negatives), at least CLIENT_FLOOR: past that its new negatives are
 * declined, so a client scanning unique names cannot push the others out
 * (a hot set of another client is a small share of the room, and leaves
 * probation when it is promoted).  Client 0 (anonymous) has no share.
 *
 * neg_now packs (generation << 32) | count, so a generation bump
 * (udc_invalidate_dir, udc_rmdir) restarts the count at zero without
 * touching it: the stale negatives are the sweeper's garbage, not the
 * new generation's budget.
 *
 * Locking: none; neg_now changes by CAS, the client counts by atomic add.  Counting runs under the name's
 * stripe lock (entry_publish_locked / entry_detach) but directories span
 * stripes, hence the CAS.
 *
 * Ordering: relaxed throughout: the bound is a heuristic, and a negative
 * published with a generation read just before a bump may be counted in
 * the old generation's count (lost) or the new one's (one too many).
 */
#include "engine/internal.h"

#define ADMIT_NEG_PER_POS 8
#define ADMIT_NEG_FLOOR 65536
#define CLIENT_SHARE 50          /* % of the cache's room one client's probation may take */
#define CLIENT_FLOOR 4096        /* probationary negatives any client may have */
#define NEG_BYTES 64             /* the smallest negative slot: the room in entries */

static uint32_t neg_count(uint64_t v, uint32_t gen)
{
	return (uint32_t)(v >> 32) == gen ? (uint32_t)v : 0;
}

bool admit_negative(struct udc_dir *d)
{
	uint32_t gen = atomic_load_explicit(&d->gen, memory_order_relaxed);
	uint64_t n = neg_count(atomic_load_explicit(&d->neg_now, memory_order_relaxed), gen);
	int64_t pos = atomic_load_explicit(&d->nr_positive, memory_order_relaxed);
	uint64_t bound = pos > 0 ? (uint64_t)pos * ADMIT_NEG_PER_POS : 0;

	return n < (bound > ADMIT_NEG_FLOOR ? bound : ADMIT_NEG_FLOOR);
}

void admit_count(struct udc_dir *d, uint32_t gen, int delta)
{
	uint64_t v = atomic_load_explicit(&d->neg_now, memory_order_relaxed), nv;

	do {
		uint32_t tag = (uint32_t)(v >> 32), n = (uint32_t)v;
		if (tag != gen) {
			/* Another generation's count: a removal of ours is not in
			 * it, and an older generation never takes a newer's place. */
			if (delta < 0 || (int32_t)(gen - tag) < 0)
				return;
			n = 0;
		}
		if (delta < 0 && n == 0)
			return;   /* counted in the generation a bump race lost */
		n = delta > 0 ? n + 1 : n - 1;
		nv = (uint64_t)gen << 32 | n;
		/* relaxed: a counter (see Ordering) */
	} while (!atomic_compare_exchange_weak_explicit(&d->neg_now, &v, nv, memory_order_relaxed,
							memory_order_relaxed));
}

bool admit_client(struct udc_cache *c, uint8_t tag)
{
	if (!tag)
		return true;   /* anonymous: no share */
	size_t limit = atomic_load_explicit(&c->limit, memory_order_relaxed);
	uint64_t room = (uint64_t)(limit / NEG_BYTES) * CLIENT_SHARE / 100;
	int64_t n = atomic_load_explicit(&c->client_probation[tag], memory_order_relaxed);

	return n < (int64_t)(room > CLIENT_FLOOR ? room : CLIENT_FLOOR);
}

void admit_client_count(struct udc_cache *c, const struct udc_entry *e, int delta)
{
	if (e->kind != ENT_NEGATIVE || !e->type ||
	    entry_main_class(slab_page_class(slab_page_of(e))) == slab_page_class(slab_page_of(e)))
		return;   /* positive, anonymous, or in main */
	/* relaxed: a counter (see Ordering) */
	atomic_fetch_add_explicit(&c->client_probation[e->type], delta, memory_order_relaxed);
}
