/* SPDX-License-Identifier: MIT */
/*
 * shrink/admit.c - which negatives are kept at all: a directory's bound
 * and a client's share; and each client's fair share of probation, which
 * the sweeper (sweep.c, requeue_due) protects at eviction.
 *
 * Owns: the admission rules, the count of negatives admitted past their
 * directory's bound (sh->trim_excess, which the trim works off), the
 * per-client count of probationary negatives (sh->client_probation, by
 * client tag, anonymous too) and of its negatives' uses and unhit
 * evictions since the tag was lent (client_used, client_evicted: whether
 * it has earned a place).  The per-directory
 * count of current-generation negatives is the engine's (engine/dir.c,
 * dir_negatives); the engine asks shrink_admit_negative() with it.
 *
 * A directory's bound is ADMIT_NEG_BASE + ADMIT_NEG_PER_POS x its
 * positives negatives of its current generation (Bottomley's bound, with
 * a small base for directories of few or no positives): a client scanning
 * unique names in one directory cannot fill the cache with them, while a
 * directory with real contents keeps the negatives its lookups need.
 * Past the bound a new negative is still kept, and the directory's oldest
 * negatives that no lookup hit go instead (the trim, sweep.c's
 * sweep_trim, in the reclaim thread or the calls): a new useful negative
 * is cached at once, not after the old ones age out.  Only past twice the
 * bound (the trim behind, or every negative there hit) is a new one
 * declined (udc_add_negative and udc_resolve still answer, and the name's
 * old entry still goes).
 *
 * A client (struct udc_call.client, udc_add_negative's client; its tag,
 * kept in the negative, see shrink_client_tag) may have at most CLIENT_SHARE
 * percent of the cache's room in probation (limit / 64 negatives), at
 * least CLIENT_FLOOR: past that its new negatives are declined, so a
 * client scanning unique names cannot push the others out (a hot set of
 * another client is a small share of the room, and leaves probation when
 * it is promoted).  Client 0 (anonymous) has no share.
 *
 * Fair shares (admit_fair_share): the mean of the probationary negatives
 * of the tags that have some, over those that have not earned (anonymous
 * one of them) and over those that have.  A client has earned when its
 * negatives' refaults (a negative published in main) and promotions are
 * at least 1/EARN_RATIO of its unhit evictions, and one.
 *
 * Locking: none; the client counts change by atomic add (the engine tells
 * them under the name's stripe lock, but clients span stripes; the
 * evictions, the sweeper under sh->lock; the anonymous count's batches
 * wait in counters of a single writer, see shrink_entry_counted), and a
 * free tag is lent by a compare-and-swap of its id (its uses and
 * evictions then zeroed).
 *
 * Ordering: relaxed throughout: the bounds are heuristics (a tag lent anew
 * while a call of its last client is between its lookup and its count is
 * one negative counted to the wrong client).
 */
#include "shrink/internal.h"

#define ADMIT_NEG_PER_POS 8
#define ADMIT_NEG_BASE 4096
#define CLIENT_SHARE 50          /* % of the cache's room one client's probation may take */
#define CLIENT_FLOOR 4096        /* probationary negatives any client may have */
#define NEG_BYTES 64             /* the smallest negative slot: the room in entries */
/* A client has earned a place when at least 1 in EARN_RATIO of its
 * negatives evicted unhit came back (a refault) or was hit in probation
 * (a promotion): a scanner's unique names refault only falsely, about
 * 1 in 32768 (sweep.c's ghosts). */
#define EARN_RATIO 64

/*
 * A tag is lent to one client id at a time, exactly (sh->client_id), for
 * as long as the client has negatives in probation; a tag with none is
 * free for the next new id.  So two clients never share a count, up to
 * CLIENT_TAGS - 1 of them with negatives in probation at once; past that a
 * new client is anonymous until a tag frees.  (Ids folded modulo 63 did
 * share one: a scanner whose id was the victim's + 63 had every one of
 * the victim's negatives declined, with no memory pressure at all.)  The
 * search starts at a slot picked by the id, so a client finds its tag in
 * a load or two.
 */
uint8_t shrink_client_tag(struct shrink *sh, uint32_t client)
{
	const unsigned n = CLIENT_TAGS - 1;

	if (!client)
		return 0;
	unsigned start = (unsigned)((client * 2654435761u) >> 26) % n;   /* Knuth's multiplicative hash */
	/* relaxed, all: see Ordering */
	for (unsigned i = 0; i < n; i++) {
		unsigned t = 1 + (start + i) % n;
		if (atomic_load_explicit(&sh->client_id[t], memory_order_relaxed) == client)
			return (uint8_t)t;
	}
	for (unsigned i = 0; i < n; i++) {
		unsigned t = 1 + (start + i) % n;
		uint32_t old = atomic_load_explicit(&sh->client_id[t], memory_order_relaxed);
		if (atomic_load_explicit(&sh->client_probation[t], memory_order_relaxed) <= 0 &&
		    atomic_compare_exchange_strong_explicit(&sh->client_id[t], &old, client,
							    memory_order_relaxed, memory_order_relaxed)) {
			atomic_store_explicit(&sh->client_used[t], 0, memory_order_relaxed);
			atomic_store_explicit(&sh->client_evicted[t], 0, memory_order_relaxed);
			return (uint8_t)t;
		}
	}
	return 0;
}

/* May client @tag add a probationary negative (its share of probation)? */
static bool admit_client(struct shrink *sh, uint8_t tag)
{
	if (!tag)
		return true;   /* anonymous: no share */
	/* relaxed, both: see Ordering */
	size_t limit = atomic_load_explicit(&sh->limit, memory_order_relaxed);
	uint64_t room = (uint64_t)(limit / NEG_BYTES) * CLIENT_SHARE / 100;
	int64_t n = atomic_load_explicit(&sh->client_probation[tag], memory_order_relaxed);

	return n < (int64_t)(room > CLIENT_FLOOR ? room : CLIENT_FLOOR);
}

uint64_t shrink_dir_bound(int64_t positives)
{
	return ADMIT_NEG_BASE + (positives > 0 ? (uint64_t)positives * ADMIT_NEG_PER_POS : 0);
}

bool shrink_admit_negative(struct shrink *sh, int64_t positives, uint64_t negatives, uint8_t tag)
{
	uint64_t bound = shrink_dir_bound(positives);

	if (negatives >= 2 * bound || !admit_client(sh, tag))
		return false;
	if (negatives >= bound) {
		/* relaxed: a work estimate (see Ordering) */
		atomic_fetch_add_explicit(&sh->trim_excess, 1, memory_order_relaxed);
	}
	return true;
}

/*
 * The anonymous count is every thread's: its line was written by every
 * publish and every removal of a negative, from every CPU (a locked add a
 * removal, the reclaim thread's included: 19% of a mixed@2 worker's
 * entry_publish_locked; BENCHMARKS.md, issue 16, stop 35).  A thread keeps
 * its change in its own counter (@unfolded) and adds it once it reaches
 * ANON_BATCH either way, so the count runs behind by less than ANON_BATCH
 * a thread: the fair shares (admit_fair_share) take it as the estimate it
 * is.  A client's own count is its tag's, added at once: admit_client's
 * share and a tag's lending read it.
 */
#define ANON_BATCH 64

void shrink_entry_counted(struct shrink *sh, enum entry_kind kind, uint8_t tag, unsigned cls,
			  int delta, _Atomic uint64_t *unfolded)
{
	if (kind != ENT_NEGATIVE)
		return;
	if (entry_main_class(cls) == cls) {
		/* In main: not counted.  Published there, it is a refault (a
		 * name looked up again after its eviction): its client has
		 * shown use. */
		if (tag && delta > 0)
			atomic_fetch_add_explicit(&sh->client_used[tag], 1, memory_order_relaxed);
		return;
	}
	/* anonymous (tag 0) counts too: the fair share's */
	int64_t n = delta;
	if (!tag && unfolded) {
		/* relaxed: the slot's single writer (engine/stats.h); mod 2^64 */
		n += (int64_t)atomic_load_explicit(unfolded, memory_order_relaxed);
		bool keep = n < ANON_BATCH && n > -ANON_BATCH;
		atomic_store_explicit(unfolded, keep ? (uint64_t)n : 0, memory_order_relaxed);
		if (keep)
			return;
	}
	/* relaxed: a counter (see Ordering) */
	atomic_fetch_add_explicit(&sh->client_probation[tag], n, memory_order_relaxed);
}

void admit_promoted(struct shrink *sh, const struct udc_entry *e)
{
	uint8_t tag = entry_client_tag(e);

	shrink_entry_counted(sh, entry_kind_of(e), tag,
			     slab_page_class(slab_page_of(cache_slab(sh->c, entry_kind_of(e)), e)), -1,
			     NULL);
	if (tag && entry_kind_of(e) == ENT_NEGATIVE)   /* relaxed: see Ordering */
		atomic_fetch_add_explicit(&sh->client_used[tag], 1, memory_order_relaxed);
}

void admit_evicted(struct shrink *sh, uint8_t tag)
{
	if (tag)   /* relaxed: see Ordering */
		atomic_fetch_add_explicit(&sh->client_evicted[tag], 1, memory_order_relaxed);
}

void admit_returned(struct shrink *sh, uint8_t tag, unsigned uses)
{
	/* relaxed: see Ordering */
	atomic_fetch_add_explicit(&sh->client_used[tag], uses, memory_order_relaxed);
}

bool admit_earned(struct shrink *sh, uint8_t tag)
{
	if (!tag)
		return false;
	/* relaxed: a heuristic (see Ordering) */
	uint64_t used = atomic_load_explicit(&sh->client_used[tag], memory_order_relaxed);
	uint64_t evicted = atomic_load_explicit(&sh->client_evicted[tag], memory_order_relaxed);

	return used && used * EARN_RATIO >= evicted;
}

int64_t shrink_probation_counted(struct shrink *sh, uint8_t tag)
{
	/* relaxed: a counter (see Ordering) */
	return atomic_load_explicit(&sh->client_probation[tag], memory_order_relaxed);
}

bool shrink_class_probation(unsigned cls)
{
	return entry_main_class(cls) != cls;
}

void admit_fair_share(struct shrink *sh, struct fair_share *out)
{
	int64_t all[2] = { 0, 0 }, tags[2] = { 0, 0 };

	for (unsigned t = 0; t < CLIENT_TAGS; t++) {
		int64_t n = shrink_probation_counted(sh, (uint8_t)t);
		if (n > 0) {
			bool e = admit_earned(sh, (uint8_t)t);
			all[e] += n;
			tags[e]++;
		}
	}
	for (unsigned i = 0; i < 2; i++) {
		out->has[i] = tags[i] > 0;
		out->share[i] = tags[i] ? all[i] / tags[i] : 0;
	}
}
