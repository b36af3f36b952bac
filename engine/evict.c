/* SPDX-License-Identifier: MIT */
/*
 * engine/evict.c - what the engine does to one entry at its reclaim
 * policy's request: copy its key, evict it, move it to another slot (or
 * requeue it: the same move, counted), spend a hit.  shrink/ decides which
 * entries and when; every write to the name table and the directories'
 * flags it asks for is made here, under the engine's locks.
 *
 * Owns: nothing of its own; these are the name table's and the entries'
 * mechanisms for a caller that found an entry in a slab page (not through
 * the table), which may be freed under it (entry_key_copy says whether it
 * is still published).
 *
 * Probes (common/probe.h): evict (STALE) for a stale entry that a move
 * dropped instead of copying.
 *
 * Locking:
 *   entry_evict and entry_move take the entry's stripe lock outside
 *   rcu_read_lock (mutate.c's rule); entry_evict, in the reclaim thread,
 *   first walks the entry's chain without it (entry_chain_warm), so that
 *   the stripe is held for the unlink, not for cache misses.  Under the
 *   stripe, published says whether the entry is in the
 *   table (every publish, replace and delete holds the stripe), so no
 *   lookup is needed to find it.  Its value is 1 + the entry's requeues
 *   (entry_requeue_move sets the copy's one more, entry_move the same;
 *   every other reader only tests it non-zero), written only under the
 *   stripe, before the slot is in the table.
 *
 * Ordering:
 *   entry_key_copy's acquire load of published pairs with the release
 *   store in entry_publish_locked: the key bytes are the published ones.
 *   An evicted current positive's directory notes the drop (dir_drop_note,
 *   seq_cst: the complete flag clears, a fill fails) before the entry is
 *   deleted (a stale one's generation bump noted it already);
 *   see engine/dir.c, Ordering, fills.  The evicted entry is freed after a
 *   grace period (entry_unlink_locked), so readers that found it read
 *   intact bytes.
 *   A move writes the new copy before name_table_replace_locked links it
 *   (a release: engine/name_table.c), so a reader that finds the new copy
 *   sees its bytes.  The old copy is freed by slab after a grace
 *   period (slab_relocate, SLAB_MOVED).  An external name or value passes
 *   to the new copy with its pointer; the old copy's slab free does not
 *   free it.
 *   Hits are relaxed everywhere (a heuristic): a reader's raise racing a
 *   spend is a lost hit.
 */
#include "engine/internal.h"
#include "common/probe.h"

bool entry_key_copy(struct udc_cache *c, struct udc_entry *e, struct entry_key *out)
{
	bool live;

	rcu_read_lock();   /* an external name stays until our unlock */
	/* acquire: pairs with the release in entry_publish_locked */
	live = atomic_load_explicit(&e->published, memory_order_acquire);
	if (live) {
		out->dir = dir_ino(c, e->dir);
		out->len = e->len;
		memcpy(out->name, entry_name(e), e->len);
		out->hash = hash_name(&c->key, out->dir, out->name, out->len);
	}
	rcu_read_unlock();
	return live;
}

bool entry_dir_counts(struct udc_entry *e, int64_t *positives, uint64_t *negatives)
{
	bool live;

	rcu_read_lock();   /* the directory stays until our unlock */
	/* acquire: pairs with the release in entry_publish_locked (e->dir is
	 * the published one, held by the publisher's pin until its entry's
	 * reference, or the replaced entry's handed on, holds it) */
	live = atomic_load_explicit(&e->published, memory_order_acquire);
	if (live) {
		struct udc_dir *d = e->dir;
		/* relaxed: the admission bound's inputs, a heuristic */
		*positives = atomic_load_explicit(&d->nr_positive, memory_order_relaxed);
		*negatives = dir_negatives(d, 0);
	}
	rcu_read_unlock();
	return live;
}

bool entry_published(const struct udc_entry *e)
{
	/* acquire: pairs with the release in entry_publish_locked: Ordering (A) */
	return atomic_load_explicit(&e->published, memory_order_acquire);
}

bool entry_is_current(struct udc_cache *c, const struct udc_entry *e)
{
	return entry_answers(c, e);
}

enum entry_kind entry_kind_of(const struct udc_entry *e)
{
	return (enum entry_kind)e->kind;
}

bool entry_names_dir(const struct udc_entry *e)
{
	return e->kind == ENT_POSITIVE && (e->type & POS_TYPE_MASK) == UDC_TYPE_DIR;
}

uint8_t entry_hits(const struct udc_entry *e)
{
	/* relaxed: see Ordering, hits */
	return atomic_load_explicit(&e->hits, memory_order_relaxed) & HITS_MASK;
}

bool entry_dir_lone(const struct udc_entry *e)
{
	/* relaxed: a policy hint (a pin in flight makes it look shared) */
	return atomic_load_explicit(&e->dir->refs, memory_order_relaxed) <= 1;
}

uint32_t entry_deadline_of(const struct udc_entry *e)
{
	return entry_deadline(e);
}

uint8_t entry_client_tag(const struct udc_entry *e)
{
	return e->kind == ENT_NEGATIVE ? neg_client(e) : 0;
}

/*
 * Walk @key's hash chain under rcu_read_lock, before its stripe is taken:
 * name_table_del_locked walks the same chain, and its cache misses (the bucket and
 * the nodes, entries hashed all over the table) were most of a stripe's
 * hold in a sweep of garbage; a writer that wanted the stripe while the
 * sweeper was preempted holding it waited for the scheduler (BENCHMARKS.md,
 * issue 13, writers during a garbage sweep).  False if @e is no longer
 * the table's entry for @key (then nobody needs the stripe for it).  Only
 * for the reclaim thread (entry_evict's @warm): the walk is paid twice,
 * and a call that evicts inline paid it in its own latency (10-15% of a
 * trickle's throughput without the thread).
 */
static bool entry_chain_warm(struct udc_cache *c, const struct udc_entry *e,
			     const struct entry_key *key)
{
	const struct name_key k = name_key_of(c, key->dir, key->name, key->len);

	rcu_read_lock();
	bool found = entry_find_rcu(c, key->hash, &k) == e;
	rcu_read_unlock();
	return found;
}

bool entry_evict(struct udc_cache *c, struct udc_entry *e, const struct entry_key *key,
		 bool warm)
{
	struct stripe *s = stripe_of(c, key->hash);
	bool gone = false;

	if (warm && !entry_chain_warm(c, e, key))
		return false;
	udc_mutex_lock(&s->lock);
	rcu_read_lock();
	/* relaxed: written under this stripe lock, which we hold */
	if (atomic_load_explicit(&e->published, memory_order_relaxed)) {
		/* before it goes: see Ordering.  A stale positive (garbage of
		 * an invalidated or removed directory) is no answer, and its
		 * name was counted lost when the generation moved: counting it
		 * again would fail a fill begun since (found by the fuzzer:
		 * tests/fuzz/regressions/fill-estale-after-invalidate-dir). */
		if (e->kind == ENT_POSITIVE && entry_current(e))
			dir_drop_note(e->dir);
		gone = name_table_del_locked(&c->names, &e->node);
		udc_assert(gone);   /* the stripe is ours */
	}
	rcu_read_unlock();
	if (gone)
		entry_unlink_locked(c, e);
	udc_mutex_unlock(&s->lock);
	if (gone)
		stat_add(thread_stats(c), evictions, 1);
	return gone;
}

void entry_hits_spend(struct udc_entry *e, uint8_t n)
{
	/* relaxed: see Ordering, hits */
	uint8_t h = atomic_load_explicit(&e->hits, memory_order_relaxed);
	uint8_t count = h & HITS_MASK;

	if (count)   /* the counter only: ENT_EXPIRES stays */
		atomic_store_explicit(&e->hits, (uint8_t)(h - (n < count ? n : count)),
				      memory_order_relaxed);
}

uint8_t entry_requeues(const struct udc_entry *e)
{
	/* relaxed: a slot's value is fixed while it is published (set
	 * before its copy is, under the stripe) and read as a heuristic */
	uint8_t p = atomic_load_explicit(&e->published, memory_order_relaxed);

	return p ? (uint8_t)(p - 1) : 0;
}

/*
 * Move entry @old_obj to @new_obj (a fresh slot of the same size), or drop
 * it if stale, or leave it if it is no longer published.  The copy is
 * published with the old one's value plus @requeue (1 + its requeues,
 * saturated): a move keeps the count, a requeue raises it.
 */
static enum slab_verdict entry_move_as(struct udc_cache *c, void *old_obj, void *new_obj,
				       unsigned requeue)
{
	struct udc_entry *old = old_obj, *e = new_obj;
	struct entry_key key;
	enum slab_verdict v = SLAB_KEPT;

	if (!entry_key_copy(c, old, &key))
		return SLAB_KEPT;   /* dead: slab gets it back when its free lands */
	if (!name_node_linkable(&e->node))
		return SLAB_KEPT;   /* a slot the table cannot link (engine/name_table.h) */
	const struct name_key k = name_key_of(c, key.dir, key.name, key.len);
	struct stripe *s = stripe_of(c, key.hash);
	bool stale = false;

	udc_mutex_lock(&s->lock);
	rcu_read_lock();
	if (entry_find_rcu(c, key.hash, &k) != old)
		goto out;   /* replaced or dropped since the key was copied */
	if (!entry_answers(c, old)) {
		/* Stale or expired: no lookup answers from it; drop it (below).
		 * An expired positive's name was not forgotten by its
		 * directory: its loss is noted first (Ordering). */
		if (old->kind == ENT_POSITIVE && entry_current(old))
			dir_drop_note(old->dir);
		stale = name_table_del_locked(&c->names, &old->node);
		udc_assert(stale);   /* the stripe is ours: nobody else removes it */
		goto out;
	}
	/* The header field by field (hits is raised by readers: an atomic
	 * load; its ENT_EXPIRES bit comes along), the rest (attr, name or its
	 * pointer, the extras) as bytes. */
	e->dir = old->dir;
	e->gen = old->gen;
	e->len = old->len;
	e->kind = old->kind;
	e->ext = old->ext;
	e->type = old->type;
	/* relaxed: read after published's acquire, by sweepers only */
	atomic_store_explicit(&e->hits, atomic_load_explicit(&old->hits, memory_order_relaxed),
			      memory_order_relaxed);
	bool listed = entry_listed(old);
	size_t size = listed ? (size_t)((char *)pos_kid(entry_pos(old)) - (char *)old)
			     : entry_size((enum entry_kind)old->kind, old->len, entry_extras(old));
	/* ino, cookie, name or its pointer, the value's pointer, the deadline:
	 * the parts apart now belong to the copy (the old one is freed as a
	 * bare slot).  A listed one's kid is the listing's (under its lock). */
	memcpy(e + 1, old + 1, size - sizeof(*old));
	if (listed)
		listing_moved_locked(c, old, e);
	/* relaxed: written under this stripe lock, which we hold */
	unsigned pub = atomic_load_explicit(&old->published, memory_order_relaxed) + requeue;
	/* release: pairs with the sweepers' acquire (entry_key_copy): the copy's
	 * page may be retired from its cpu slot and isolated by now (slab
	 * hands it out zeroed), and a sweeper reads it whole or not at all */
	atomic_store_explicit(&e->published, (uint8_t)(pub < UINT8_MAX ? pub : UINT8_MAX),
			      memory_order_release);
	name_table_replace_locked(&c->names, &old->node, &e->node);
	/* relaxed: the old copy is out of the table; sweepers find no key */
	atomic_store_explicit(&old->published, 0, memory_order_relaxed);
	stat_add(thread_stats(c), moved, 1);
	uint32_t deadline = entry_deadline(e);
	if (deadline)   /* it may land behind a garbage round's cursor */
		shrink_expiry_noted(c->shrink, deadline);
	v = SLAB_MOVED;
out:
	rcu_read_unlock();
	if (stale) {
		/* Freed the engine's way (its external name too): new_obj goes back. */
		UDC_PROBE(evict, UDC_PROBE_EVICT_STALE, (int)old->kind, entry_slot_size(c, old),
			  key.dir, key.name, key.len);
		entry_unlink_locked(c, old);
		stat_add(thread_stats(c), evictions, 1);
	}
	udc_mutex_unlock(&s->lock);
	return v;
}

enum slab_verdict entry_move(void *arg, void *old_obj, void *new_obj)
{
	return entry_move_as(arg, old_obj, new_obj, 0);
}

enum slab_verdict entry_requeue_move(void *arg, void *old_obj, void *new_obj)
{
	return entry_move_as(arg, old_obj, new_obj, 1);
}
