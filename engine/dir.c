/* SPDX-License-Identifier: MIT */
/*
 * engine/dir.c - directory objects, and their reaper.
 *
 * Owns: the directory table (cache->dirs, an rculfhash of the inos' keys,
 * dir_key: engine/hash.h), every struct udc_dir in it and its struct
 * dir_ext, the directory slab they come from (cache->dir_slab: 48 and 64
 * bytes), and
 * the reaper's queues (cache->dirs_queued, dirs_arrived, dirs_idle,
 * dirs_spare); the complete flag and the fill protocol (d->state,
 * x->complete_until); the ".." records (x->parent, parent_stamp,
 * parent_seq, epoch; cache->dir_clock, dotdot_moves).
 *
 * The extension (x = d->ext) holds what few directories have: a ".."
 * record, the epoch that records of it are stamped with, a listing, a
 * fill's deadline.  It is made by the first caller that needs one
 * (dir_ext_get: a fill, a ".." asked or told, a record naming d) and
 * freed with d.  A directory added by its name records nothing: a record
 * that exists is kept up to date (dir_learn, dir_parent_move), one that
 * does not is made when a ".." is asked (a backend call) or told.  (Each
 * object was two lines, and each directory named made one for its
 * record: 27-48% of the bytes at a binding limit, issue 14.)
 *
 * A directory object is made the first time the cache needs one for an
 * ino (an entry in it, a placeholder in it, a parent to record, a complete
 * flag).  d->refs counts what needs it: its entries in the name table and
 * the calls holding it (pins: dir_get, dir_find).  When refs falls to zero
 * the object is idle: it is pushed on dirs_queued, and the reaper (the
 * reclaim passes, one at a time) frees it under memory pressure, or at
 * once if it was invalidated or removed and holds no answer.  An idle
 * object that holds one (a ".." record of it or of a child, the complete
 * flag, a fill begun) is kept on dirs_idle, oldest first, for pressure
 * (its answers are cached facts like any entry: losing one costs a
 * backend call, never a wrong answer); one that holds none is a spare,
 * kept on dirs_spare for the directory's next name, the newest
 * spare_max() of them.  Freeing is: refs CAS 0 -> DIR_DEAD, out of
 * the table, freed with its extension after a grace period
 * (slab_free_rcu: no rcu_head in the object).  A pin that finds DIR_DEAD takes
 * the object out of the table itself (a second cds_lfht_del is harmless)
 * and treats the ino as having no object.  So an in-flight call's directory (pinned across the
 * backend call) can never be freed and made again with its generation
 * restarted, and "no object" still means "nothing cached, nothing in
 * flight".
 *
 * Locking:
 *   None to find, make or pin a directory: cds_lfht_add_unique() settles
 *   races between makers (the loser frees its never-published copy), and
 *   the refs RMWs settle pins against the reaper's CAS.
 *   The reaper's caller (the policy, shrink/, holding its lock) runs one
 *   reaper at a time; that protects dirs_arrived, dirs_idle, dirs_spare
 *   and the DIR_IDLE objects on them.  dirs_queued is a lock-free stack
 *   (CAS push anywhere, exchange pop-all by the reaper: with no single pop
 *   there is no ABA); dirs_idle and dirs_spare are FIFOs.  All four link
 *   by d->queued_next, which belongs to whoever set DIR_IDLE (one of them
 *   at a time).
 *   x->lock (spinlock, innermost) serialises the writers of d's ".."
 *   record (parent, parent_stamp, parent_seq); it
 *   is taken under the stripe lock of the entry being linked or unlinked.
 *   d->ext is set once (CAS); the slab's locks are taken by dir_ext_get,
 *   never with x->lock held.
 *   A child's record names its parent by ino and holds no reference on
 *   its object: a parent whose only holders were its children's records
 *   kept chains of objects with no entry (git-commit at 10% of its
 *   footprint: 4,990 objects for 4,457 entries), and could only go once
 *   every child had.  The parent's object may go under memory pressure
 *   (its kids, the children's records of it, a hint, keep it otherwise,
 *   as an answer of its own would); the record then answers nothing (a
 *   ".." miss) until it is learnt again.
 *
 * Ordering:
 *   dir_bump_gen() is a release increment; lookups load gen with acquire.
 *   A lookup that sees the new generation therefore also sees what the
 *   bumping thread did before it (clearing DIR_COMPLETE, forgetting the
 *   parent), so it never answers from a complete flag the bump retired.
 *   cds_lfht_add_unique() publishes a zeroed and filled object (it orders
 *   the node's initialisation before the link, rculfhash guarantee).
 *   dir_ext_get's CAS (seq_cst, a release at least) publishes the
 *   extension's fields; readers load d->ext with acquire (dir_ext_rcu).
 *   refs: a pin (fetch_add) and the reaper's CAS are RMWs of one location,
 *   so exactly one of them comes first; the CAS is acquire and dir_put a
 *   release, so the reaper sees everything the last holder did (its
 *   entries' unpublishing included).  dir_put's decrement and its DIR_IDLE
 *   load and or, and the reaper's DIR_IDLE clear and refs re-read, are
 *   seq_cst: of a put to zero racing an un-idling, one of the two sees the
 *   other, so an idle object is never left off every queue (a put whose
 *   load sees the flag still set comes before the clear, whose re-read
 *   then sees the zero).
 *   The free is slab_free_rcu, the object's and its extension's: every
 *   reader that found the object in the table (under rcu_read_lock) is
 *   done with both first.  So is the
 *   last holder: dir_put's decrement to zero lets the reaper kill an
 *   object already on its idle list (a pin does not take it off), and the
 *   put's DIR_IDLE or (and its queue push) come after the decrement, so
 *   dir_put runs them inside a read-side section that the free waits for.
 *   (They ran outside one: a put whose or came after such a kill wrote to
 *   an object a grace period could already have freed; CI's TSan run of
 *   tsan-stress-churn reported it.)
 *
 * Ordering, fills:
 *   d->state holds the flags and the drop count in one word.  A drop
 *   (dir_drop_note: count + 1 and DIR_COMPLETE cleared in one seq_cst CAS)
 *   comes before the name is unpublished (a release store) or
 *   an answer is left uncached.  dir_fill_begin reads the count (seq_cst
 *   RMW) before the embedder lists the directory; dir_fill_complete sets
 *   the flag by a seq_cst CAS that expects that count.  In the word's
 *   modification order a drop is either before the CAS (which then fails)
 *   or after it (and clears the flag before the name goes).  A lookup
 *   that finds no entry runs an acquire fence before it reads the flag
 *   (dir_complete_rcu): the table load that missed the name read what the
 *   unpublish wrote, so it also sees the clear made before it.
 *   The word is 32 bits (the object is 48 bytes), so the count is mod
 *   2^29: a completion would miss drops only if exactly a multiple of
 *   2^29 came between its begin and its CAS.  Each drop is an entry of
 *   that one directory that was in the table and went (one insert and one
 *   loss): 2^29 of them during one listing take minutes of a thread that
 *   does nothing else (churn's 1.4 M cycles a second, BENCHMARKS.md), and
 *   then the count must land on the multiple exactly.  The generation is
 *   the same kind of bound (2^32 bumps while a stale entry stays).
 *
 * Ordering, "..":
 *   A reader (dir_parent_rcu, under rcu_read_lock) loads parent and
 *   parent_stamp (relaxed), finds the object of that ino in the table,
 *   and trusts the pair only if the epoch in the object's extension
 *   equals the stamp (no extension: nothing was ever stamped with it).
 *   Epochs come from one counter, so each value names one object at one
 *   moment: a pair never written together has a stamp no live epoch
 *   equals, and a parent's object freed and made again has a new epoch.
 *   An object found dying (refs DEAD, still readable until the grace
 *   period) answers what it knew: its epoch moved on with no change.
 *   dir_children_moved: dotdot_moves is bumped (seq_cst), then the epoch
 *   (seq_cst), if the object has an extension: its load of d->ext is
 *   seq_cst, as dir_ext_get's CAS, so an extension made before a
 *   learner's reads (below) is seen, and one made after is stamped by a
 *   learner that reads the new dotdot_moves.  dir_parent_learn reads the
 *   parent's epoch (seq_cst), then dotdot_moves (seq_cst), and records
 *   only if dotdot_moves is what it was before the backend call.  If it
 *   reads the old count, the bump is later in the seq_cst order, so the
 *   epoch change is later too and the stamp it recorded stops matching;
 *   if the new one, it records nothing.
 */
#include "engine/internal.h"

#include <errno.h>

/* A new object's generation (dir_bump_gen moves it on). */
#define DIR_GEN_FIRST 1

/* refs of an object being freed: below any count a pin could bring back. */
#define DIR_DEAD (INT32_MIN / 2)

#if UDC_DEBUG
void (*udc_window_dir_put_last)(void *);   /* see common/debug.h */
#endif

/* The directory slab's classes: objects, and their extensions apart
 * (each page holds one period's objects of one kind). */
enum { DIR_CLASS, DIR_EXT_CLASS };

int dir_slab_create(struct udc_cache *c)
{
	const struct slab_config cfg = {
		.nr_classes = 2,
		.class_size = { sizeof(struct udc_dir), (sizeof(struct dir_ext) + 15) & ~(size_t)15 },
		/* Small pages: an object cannot be moved (entries point at
		 * it), so a few survivors pin their page, as they would a
		 * jemalloc slab of the same size. */
		.page_shift = SLAB_PAGE_SHIFT_MIN,
		.retained_max = 4,
		.fullest_first = true,   /* and sparse pages drain */
		.charge = bytes_charge,
		.charge_arg = c,
	};

	c->dir_slab = slab_create(&cfg);
	return c->dir_slab ? 0 : -ENOMEM;
}

void dir_slab_destroy(struct udc_cache *c)
{
	if (c->dir_slab)
		slab_destroy(c->dir_slab);
	c->dir_slab = NULL;
}

/* A value no object has had: every epoch comes from here. */
static uint64_t epoch_next(struct udc_cache *c)
{
	/* relaxed: only uniqueness matters (a RMW on one counter gives it) */
	return atomic_fetch_add_explicit(&c->dir_clock, 1, memory_order_relaxed) + 1;
}

/* rculfhash calls it only for a node whose reverse_hash, the key of its
 * ino, equals the one looked for: the key is a bijection of the ino
 * (dir_key), so that is the same ino. */
static int dir_match(struct cds_lfht_node *node, const void *key)
{
	rcu_found_note(node);   /* TSan: pairs with rcu_publish_note in dir_get */
	return dir_node_key(dir_of(node)) == *(const uint64_t *)key;
}

/* The object of the ino whose key is @key, or NULL; rcu_read_lock held. */
static struct udc_dir *dir_lookup_rcu(struct udc_cache *c, uint64_t key)
{
	struct cds_lfht_iter it;

	cds_lfht_lookup(c->dirs, bit_reverse64(key), dir_match, &key, &it);
	struct cds_lfht_node *n = cds_lfht_iter_get_node(&it);
	return n ? dir_of(n) : NULL;
}

struct udc_dir *dir_find_rcu(struct udc_cache *c, udc_ino ino)
{
	return dir_lookup_rcu(c, dir_key(&c->key, ino));
}

/* Pin d, found under rcu_read_lock: false if it is dead (then taken out of
 * the table, so that the ino can have a new object). */
bool dir_pin_rcu(struct udc_cache *c, struct udc_dir *d)
{
	/* acquire: our reads of d come after the pin (see Ordering, refs) */
	if (atomic_fetch_add_explicit(&d->refs, 1, memory_order_acquire) >= 0)
		return true;
	cds_lfht_del(c->dirs, &d->node);   /* -ENOENT if the reaper got there first */
	return false;
}

static struct udc_dir *dir_find_keyed(struct udc_cache *c, uint64_t key)
{
	struct udc_dir *d;

	rcu_read_lock();
	d = dir_lookup_rcu(c, key);
	if (d && !dir_pin_rcu(c, d))
		d = NULL;
	rcu_read_unlock();
	return d;
}

struct udc_dir *dir_find(struct udc_cache *c, udc_ino ino)
{
	return dir_find_keyed(c, dir_key(&c->key, ino));
}

struct udc_dir *dir_get(struct udc_cache *c, udc_ino ino)
{
	uint64_t key = dir_key(&c->key, ino);
	struct udc_dir *d = dir_find_keyed(c, key);

	if (d)
		return d;
	d = bounded_slab_alloc(c, c->dir_slab, DIR_CLASS);   /* zeroed */
	if (!d)
		return NULL;
	atomic_init(&d->gen, DIR_GEN_FIRST);
	atomic_init(&d->refs, 1);   /* our pin */

	for (;;) {
		rcu_read_lock();
		rcu_publish_note(&d->node);   /* TSan: pairs with rcu_found_note in dir_match */
		/* it sets d->node.reverse_hash to the key (bit_reverse64 undone) */
		struct cds_lfht_node *n = cds_lfht_add_unique(c->dirs, bit_reverse64(key), dir_match,
							      &key, &d->node);
		struct udc_dir *other = n != &d->node ? dir_of(n) : NULL;
		bool pinned = other && dir_pin_rcu(c, other);
		rcu_read_unlock();
		if (!other)
			break;
		if (pinned) {   /* lost the race to a live one; ours was never published */
			slab_free_now(c->dir_slab, d);
			return other;
		}
		/* A dead one was in the way; it is out of the table now. */
	}
	udc_assert(dir_ino(c, d) == ino);
	atomic_fetch_add_explicit(&c->nr_dirs, 1, memory_order_relaxed);   /* relaxed: a count */
	return d;
}

/* Push idle d (DIR_IDLE just set by the caller) on dirs_queued. */
static void queued_push(struct udc_cache *c, struct udc_dir *d)
{
	struct udc_dir *head = atomic_load_explicit(&c->dirs_queued, memory_order_relaxed);

	do
		d->queued_next = head;
	/* release: the popper (acquire exchange) sees queued_next */
	while (!atomic_compare_exchange_weak_explicit(&c->dirs_queued, &head, d,
						      memory_order_release, memory_order_relaxed));
}

void dir_hold(struct udc_dir *d)
{
	/* relaxed: the caller holds d already, so refs cannot be 0 or dead */
	atomic_fetch_add_explicit(&d->refs, 1, memory_order_relaxed);
}

void dir_put(struct udc_cache *c, struct udc_dir *d)
{
	/* From the decrement to zero on, the reaper may free d (Ordering,
	 * refs: the free waits for the readers); our own accesses after it
	 * stay inside this read-side section. */
	rcu_read_lock();
	/* seq_cst (a release at least): see Ordering, refs */
	if (atomic_fetch_sub(&d->refs, 1) == 1) {
		udc_window(dir_put_last, d);   /* tests: the reaper may kill d here */
		/* seq_cst, the load and the or: pair with the reaper's
		 * clear-then-reread (Ordering).  The load first: a directory
		 * that goes idle again before the reaper took it off its queue
		 * (a create-and-unlink cycle's, each cycle) finds the flag set,
		 * and its line is not written (a locked RMW less a cycle). */
		if (!(atomic_load(&d->state) & DIR_IDLE) &&
		    !(atomic_fetch_or(&d->state, DIR_IDLE) & DIR_IDLE))
			queued_push(c, d);
	}
	rcu_read_unlock();
}

/* ------------------------------------------------------------------ */
/* the extension */

struct dir_ext *dir_ext_get(struct udc_cache *c, struct udc_dir *d, bool call)
{
	struct dir_ext *x = dir_ext_rcu(d);

	if (x)
		return x;
	/* zeroed: no parent, no listing */
	x = call ? bounded_slab_alloc(c, c->dir_slab, DIR_EXT_CLASS) :
		   slab_alloc(c->dir_slab, DIR_EXT_CLASS);
	if (!x)
		return NULL;
	atomic_init(&x->epoch, epoch_next(c));
	udc_spin_init(&x->lock);
	struct dir_ext *none = NULL;
	/* seq_cst (a release at least: the fields above before the pointer,
	 * for dir_ext_rcu's acquire): dir_children_moved's load is ordered
	 * against it (Ordering, "..") */
	if (atomic_compare_exchange_strong(&d->ext, &none, x))
		return x;
	slab_free_now(c->dir_slab, x);   /* another caller's is in place; ours was never seen */
	return none;
}

/* ------------------------------------------------------------------ */
/* the complete flag and the fill protocol */

void dir_drop_note(struct udc_dir *d)
{
	uint32_t s = atomic_load_explicit(&d->state, memory_order_relaxed);

	/* seq_cst: before the caller's unpublish (Ordering (C)); pairs
	 * with dir_complete_rcu's fence and dir_fill_complete's CAS */
	while (!atomic_compare_exchange_weak(&d->state, &s,
					     (s & ~(uint32_t)DIR_COMPLETE) + DIR_DROP_ONE))
		;
}

int dir_fill_begin(struct udc_cache *c, struct udc_dir *d, struct udc_fill *fill)
{
	struct dir_ext *x = dir_ext_get(c, d, true);

	if (!x)
		return -ENOMEM;
	/* seq_cst: the snapshot precedes the embedder's listing (Ordering, fills) */
	uint32_t s = atomic_fetch_or(&d->state, DIR_FILLING);

	fill->opaque[0] = dir_ino(c, d);
	/* relaxed: an epoch only ever changes to a value never seen before */
	fill->opaque[1] = atomic_load_explicit(&x->epoch, memory_order_relaxed);
	fill->opaque[2] = s & ~DIR_STATE_FLAGS;
	/* seq_cst: the listing's token; a mutation after it reads a value at
	 * least this (inflight_mark_stale_locked) */
	fill->opaque[3] = atomic_fetch_add(&c->fill_clock, 1) + 1;
	fill->opaque[4] = dir_gen(d);
	return 0;
}

/* d's epoch (relaxed: only ever changes to a value never seen before), or
 * 0, which none has, when d has no extension (a fill began on another
 * object of the ino). */
static uint64_t epoch_now(struct udc_dir *d)
{
	struct dir_ext *x = dir_ext_rcu(d);

	return x ? atomic_load_explicit(&x->epoch, memory_order_relaxed) : 0;
}

bool dir_fill_listed_ok(struct udc_dir *d, const struct udc_fill *fill, struct stripe *s)
{
	lock_assert_held(&s->lock);
	/* relaxed: touched is written under s->lock, which we hold */
	return atomic_load_explicit(&s->touched, memory_order_relaxed) < fill->opaque[3] &&
	       epoch_now(d) == fill->opaque[1] && dir_gen(d) == fill->opaque[4];
}

int dir_fill_complete(struct udc_cache *c, struct udc_dir *d, const struct udc_fill *fill)
{
	uint32_t s = atomic_load_explicit(&d->state, memory_order_relaxed);
	struct dir_ext *x = dir_ext_rcu(d);

	/* a different object has a different epoch, or none */
	if (!x || atomic_load_explicit(&x->epoch, memory_order_relaxed) != fill->opaque[1])
		return -ESTALE;
	/* relaxed, both: a lookup that reads false answers a miss, which is
	 * always correct; written once (the line is read by every call) */
	if (!atomic_load_explicit(&c->fills_completed, memory_order_relaxed))
		atomic_store_explicit(&c->fills_completed, true, memory_order_relaxed);

	/* relaxed: published by the CAS below (seq_cst) with the flag; a
	 * concurrent completion of the same fill writes about the same */
	atomic_store_explicit(&x->complete_until, cache_deadline_for(c, ENT_NEGATIVE, 0),
			      memory_order_relaxed);
	do {
		if ((s & ~DIR_STATE_FLAGS) != fill->opaque[2]) {
			/* relaxed: DIR_FILLING is a hint for the reaper */
			atomic_fetch_and_explicit(&d->state, ~(uint32_t)DIR_FILLING,
						  memory_order_relaxed);
			return -ESTALE;
		}
		/* seq_cst: one RMW with dir_drop_note's, so either it sees the
		 * drop or the drop clears what it set (Ordering, fills) */
	} while (!atomic_compare_exchange_weak(&d->state, &s,
					       (s | DIR_COMPLETE) & ~(uint32_t)DIR_FILLING));
	return 0;
}

/* ------------------------------------------------------------------ */
/* ".." */

/* The stamp of a record naming p: its epoch (its extension made if need
 * be), or 0 when there is no room for one: nothing can be recorded then. */
static uint64_t stamp_of(struct udc_cache *c, struct udc_dir *p, bool call)
{
	struct dir_ext *x = dir_ext_get(c, p, call);

	/* seq_cst: read before dotdot_moves in dir_parent_learn (Ordering, "..") */
	return x ? atomic_load(&x->epoch) : 0;
}

/* The children's records of the object of @ino: +1 or -1, a hint (see
 * Locking: the count only keeps an idle object until memory is wanted; a
 * miscount costs a ".." answer or keeps an object until pressure).  A
 * record's parent has an extension (its stamp is the epoch there). */
static void kids_add(struct udc_cache *c, udc_ino ino, int delta)
{
	if (ino == UDC_INO_NONE)
		return;
	rcu_read_lock();
	struct udc_dir *p = dir_find_rcu(c, ino);
	struct dir_ext *x = p ? dir_ext_rcu(p) : NULL;
	if (x) {
		/* relaxed: a hint; a CAS so that it never wraps below 0 */
		uint32_t k = atomic_load_explicit(&x->kids, memory_order_relaxed);
		while ((delta > 0 || k > 0) &&
		       !atomic_compare_exchange_weak_explicit(&x->kids, &k, k + (uint32_t)delta,
							      memory_order_relaxed, memory_order_relaxed))
			;
	}
	rcu_read_unlock();
}

/* Record p (NULL: unknown, with @stamp 0) with @stamp, its epoch read by
 * the caller, in x (d's), with x->lock held. */
static void parent_store_locked(struct udc_cache *c, struct dir_ext *x, struct udc_dir *p,
				uint64_t stamp)
{
	spin_assert_held(&x->lock);
	udc_ino ino = p && stamp ? dir_ino(c, p) : UDC_INO_NONE;
	/* relaxed, all: x->lock orders the writers, and readers check the
	 * stamp against the parent's epoch, so a torn pair is never trusted */
	udc_ino old = atomic_load_explicit(&x->parent, memory_order_relaxed);

	if (ino == UDC_INO_NONE)
		stamp = 0;
	if (old == ino && atomic_load_explicit(&x->parent_stamp, memory_order_relaxed) == stamp)
		return;
	atomic_store_explicit(&x->parent_seq,
			      atomic_load_explicit(&x->parent_seq, memory_order_relaxed) + 1,
			      memory_order_relaxed);
	atomic_store_explicit(&x->parent_stamp, stamp, memory_order_relaxed);
	atomic_store_explicit(&x->parent, ino, memory_order_relaxed);
	if (old != ino) {
		kids_add(c, old, -1);
		kids_add(c, ino, 1);
	}
}

/* child's record set to parent (NULL: unknown) in its extension @x: 0,
 * or -ENOMEM (no room for the parent's extension: recorded unknown).
 * @call: as dir_ext_get's. */
static int parent_set_ext(struct udc_cache *c, struct dir_ext *x, struct udc_dir *parent,
			  bool call)
{
	uint64_t stamp = parent ? stamp_of(c, parent, call) : 0;

	udc_spin_lock(&x->lock);
	parent_store_locked(c, x, parent, stamp);
	udc_spin_unlock(&x->lock);
	return parent && !stamp ? -ENOMEM : 0;
}

int dir_parent_set(struct udc_cache *c, struct udc_dir *child, struct udc_dir *parent)
{
	/* A child with no extension has no record to forget. */
	struct dir_ext *x = parent ? dir_ext_get(c, child, true) : dir_ext_rcu(child);

	if (x)
		return parent_set_ext(c, x, parent, true);
	return parent ? -ENOMEM : 0;
}

void dir_cookie_set(struct udc_dir *d, uint64_t cookie)
{
	struct dir_ext *x = dir_ext_rcu(d);

	if (x)   /* relaxed: returned with ".." answers, which are checked by stamp */
		atomic_store_explicit(&x->cookie, cookie, memory_order_relaxed);
}

void dir_parent_move(struct udc_cache *c, struct udc_dir *child, struct udc_dir *parent)
{
	/* Only a record that exists is brought up to date: one is made when
	 * a ".." is asked or told (a line for every directory named, for
	 * answers seldom asked, was the directory objects' second line). */
	struct dir_ext *x = dir_ext_rcu(child);

	if (x)
		(void)parent_set_ext(c, x, parent, false);   /* no room: unknown, asked again */
}

void dir_learn(struct udc_cache *c, struct udc_dir *child, struct udc_dir *parent,
	       uint64_t cookie)
{
	dir_cookie_set(child, cookie);
	dir_parent_move(c, child, parent);
}

uint64_t dir_cookie_rcu(struct udc_dir *d)
{
	struct dir_ext *x = dir_ext_rcu(d);

	/* relaxed: an advisory word, as any cookie (0: not known) */
	return x ? atomic_load_explicit(&x->cookie, memory_order_relaxed) : 0;
}

void dir_parent_forget_if(struct udc_cache *c, struct udc_dir *child, udc_ino ino)
{
	struct dir_ext *x = dir_ext_rcu(child);

	if (!x)
		return;
	udc_spin_lock(&x->lock);
	/* relaxed: under x->lock, which every writer holds */
	if (atomic_load_explicit(&x->parent, memory_order_relaxed) == ino)
		parent_store_locked(c, x, NULL, 0);
	udc_spin_unlock(&x->lock);
}

int dir_parent_snap(struct udc_cache *c, struct udc_dir *d, struct dotdot_snap *snap)
{
	struct dir_ext *x = dir_ext_get(c, d, true);   /* the answer will be recorded there */

	if (!x)
		return -ENOMEM;
	udc_spin_lock(&x->lock);
	/* relaxed: under x->lock, as dir_parent_learn's re-read */
	snap->seq = atomic_load_explicit(&x->parent_seq, memory_order_relaxed);
	udc_spin_unlock(&x->lock);
	snap->gen = dir_gen(d);
	/* seq_cst: see Ordering, ".." */
	snap->moves = atomic_load(&c->dotdot_moves);
	return 0;
}

bool dir_parent_learn(struct udc_cache *c, struct udc_dir *d, struct udc_dir *parent,
		      const struct dotdot_snap *snap)
{
	struct dir_ext *x = dir_ext_rcu(d);   /* made by dir_parent_snap */
	uint64_t stamp = stamp_of(c, parent, true);   /* before dotdot_moves: see Ordering, ".." */
	bool same;

	udc_spin_lock(&x->lock);
	/* relaxed (seq): under x->lock; seq_cst (moves): after the epoch
	 * read (Ordering, "..") */
	same = atomic_load_explicit(&x->parent_seq, memory_order_relaxed) == snap->seq &&
	       dir_gen(d) == snap->gen &&
	       atomic_load(&c->dotdot_moves) == snap->moves;
	if (same && stamp)
		parent_store_locked(c, x, parent, stamp);
	udc_spin_unlock(&x->lock);
	return same;
}

udc_ino dir_parent_rcu(struct udc_cache *c, struct udc_dir *d, uint64_t *cookie)
{
	struct dir_ext *x = dir_ext_rcu(d);

	if (!x)
		return UDC_INO_NONE;
	/* relaxed, both: a pair that was never written together has a stamp
	 * of another object or change, which no epoch equals (Ordering, "..") */
	udc_ino ino = atomic_load_explicit(&x->parent, memory_order_relaxed);
	uint64_t stamp = atomic_load_explicit(&x->parent_stamp, memory_order_relaxed);

	if (ino == UDC_INO_NONE)
		return UDC_INO_NONE;
	/* the table's lookup publishes the object's fields (rculfhash) */
	struct udc_dir *pd = dir_find_rcu(c, ino);
	struct dir_ext *px = pd ? dir_ext_rcu(pd) : NULL;
	if (!px || atomic_load_explicit(&px->epoch, memory_order_relaxed) != stamp)
		return UDC_INO_NONE;
	*cookie = atomic_load_explicit(&px->cookie, memory_order_relaxed);
	return ino;   /* pd is its object (found by it) */
}

void dir_children_moved(struct udc_cache *c, struct udc_dir *d)
{
	/* seq_cst, all, in this order: see Ordering, ".."  (With no
	 * extension, no record was ever stamped with d's epoch: none was
	 * made before the load, and a record made after it reads the new
	 * dotdot_moves.) */
	atomic_fetch_add(&c->dotdot_moves, 1);
	struct dir_ext *x = atomic_load(&d->ext);
	if (x)
		atomic_store(&x->epoch, epoch_next(c));
}

/* ------------------------------------------------------------------ */
/* the admission bound's count of the current generation's negatives.
 * Relaxed throughout: the bound is a heuristic.  No word of the object
 * counts them (it is 48 bytes): its references are its entries and its
 * pins, so refs less nr_positive is its negatives of every generation and
 * the pins (a few calls in flight).  A generation bump (udc_invalidate_dir,
 * udc_rmdir) makes the negatives then in the table garbage, not the new
 * generation's budget: it notes how many in the extension
 * (stale_negatives), and each that leaves takes one off.  A count racing
 * a bump may land on either side (one too few, or too many); with no
 * room for an extension the garbage counts until the sweep drops it (new
 * negatives are declined sooner, never wrongly kept). */

uint64_t dir_negatives(struct udc_dir *d, int pins)
{
	struct dir_ext *x = dir_ext_rcu(d);
	/* relaxed, all: see above */
	int64_t n = (int64_t)atomic_load_explicit(&d->refs, memory_order_relaxed) - pins -
		    atomic_load_explicit(&d->nr_positive, memory_order_relaxed) -
		    (x ? atomic_load_explicit(&x->stale_negatives, memory_order_relaxed) : 0);

	return n > 0 ? (uint64_t)n : 0;
}

void dir_stale_negative_gone(struct udc_dir *d, uint32_t gen)
{
	struct dir_ext *x = dir_ext_rcu(d);

	/* relaxed, all: a counter (see above) */
	if (!x || atomic_load_explicit(&d->gen, memory_order_relaxed) == gen)
		return;
	uint32_t n = atomic_load_explicit(&x->stale_negatives, memory_order_relaxed);
	do {
		if (n == 0)
			return;   /* one that a bump's race did not count */
	} while (!atomic_compare_exchange_weak_explicit(&x->stale_negatives, &n, n - 1,
							memory_order_relaxed, memory_order_relaxed));
}

void dir_bump_gen(struct udc_cache *c, struct udc_dir *d)
{
	/* release: Ordering (B) (pairs with the acquire in dir_gen) */
	atomic_fetch_add_explicit(&d->gen, 1, memory_order_release);
	/* relaxed, all: see above; our pin is one of the references */
	int64_t stale = (int64_t)atomic_load_explicit(&d->refs, memory_order_relaxed) - 1 -
			atomic_load_explicit(&d->nr_positive, memory_order_relaxed);
	struct dir_ext *x = stale > 0 ? dir_ext_get(c, d, false) : dir_ext_rcu(d);
	if (x)
		atomic_store_explicit(&x->stale_negatives, stale > 0 ? (uint32_t)stale : 0,
				      memory_order_relaxed);
}

/* ------------------------------------------------------------------ */
/* the reaper (one at a time: the policy's lock held) */

void dir_reap_init(struct udc_cache *c)
{
	atomic_init(&c->dirs_queued, NULL);
	atomic_init(&c->dirs_arrived, NULL);
	c->dirs_idle = (struct dir_fifo){ .tail = &c->dirs_idle.head };
	c->dirs_spare = (struct dir_fifo){ .tail = &c->dirs_spare.head };
}

/* dirs_idle and dirs_spare: FIFOs linked by queued_next, the reaper's alone. */
static void fifo_push(struct dir_fifo *f, struct udc_dir *d)
{
	d->queued_next = NULL;
	*f->tail = d;
	f->tail = &d->queued_next;
	f->n++;
}

static struct udc_dir *fifo_pop(struct dir_fifo *f)
{
	struct udc_dir *d = f->head;

	if (!d)
		return NULL;
	if (!(f->head = d->queued_next))
		f->tail = &f->head;
	f->n--;
	return d;
}

/* Does idle d hold an answer of its own (a ".." record of it or of a
 * child, completeness, a fill)?  Relaxed, all: a policy hint; an answer
 * lost to a race costs a call.  The extension is read through
 * dir_ext_rcu: a pinner may have made it while d waited on a queue. */
static bool dir_answers(struct udc_dir *d)
{
	struct dir_ext *x = dir_ext_rcu(d);

	return (x && (atomic_load_explicit(&x->parent, memory_order_relaxed) != UDC_INO_NONE ||
		      atomic_load_explicit(&x->kids, memory_order_relaxed) != 0)) ||
	       (atomic_load_explicit(&d->state, memory_order_relaxed) & (DIR_COMPLETE | DIR_FILLING));
}

/* Idle d goes on the FIFO of its kind. */
static void idle_keep(struct udc_cache *c, struct udc_dir *d)
{
	fifo_push(dir_answers(d) ? &c->dirs_idle : &c->dirs_spare, d);
}

/* Free idle d if nothing holds it: true if it was. */
static bool dir_kill(struct udc_cache *c, struct udc_dir *d)
{
	int32_t zero = 0;

	/* acquire: see Ordering, refs (pairs with dir_put's release) */
	if (!atomic_compare_exchange_strong_explicit(&d->refs, &zero, DIR_DEAD,
						     memory_order_acquire, memory_order_relaxed))
		return false;
	rcu_read_lock();
	cds_lfht_del(c->dirs, &d->node);   /* -ENOENT if a pinner helped */
	rcu_read_unlock();
	atomic_fetch_sub_explicit(&c->nr_dirs, 1, memory_order_relaxed);   /* relaxed: a count */
	/* relaxed: no writer is left (refs dead, the caller serialises
	 * reapers), and the extension, if any, was loaded by our pin's
	 * holders before their release */
	struct dir_ext *x = atomic_load_explicit(&d->ext, memory_order_relaxed);
	if (x) {
		kids_add(c, atomic_load_explicit(&x->parent, memory_order_relaxed), -1);
		listing_free(c, d);   /* nothing lists in it: no entry, no pin */
		slab_free_rcu(c->dir_slab, x);
	}
	slab_free_rcu(c->dir_slab, d);   /* both after the readers that found d */
	return true;
}

/* d, taken off the reaper's queues, is held again: no longer idle, unless
 * its last reference went meanwhile (then it goes back on its FIFO). */
static void dir_unidle(struct udc_cache *c, struct udc_dir *d)
{
	/* seq_cst, both: see Ordering (a put to zero sees the flag or we see 0) */
	atomic_fetch_and(&d->state, ~(uint32_t)DIR_IDLE);
	if (atomic_load(&d->refs) == 0 && !(atomic_fetch_or(&d->state, DIR_IDLE) & DIR_IDLE))
		idle_keep(c, d);
}

/* An arrival: freed under pressure or when it has nothing to keep it,
 * else kept on its FIFO, or back in use.  A directory invalidated or
 * removed (its generation moved on) makes no spare: its names are gone,
 * and a removed one is not looked in again. */
static void dir_consider(struct udc_cache *c, struct udc_dir *d, bool pressure)
{
	bool useless = !dir_answers(d) && dir_gen(d) != DIR_GEN_FIRST;

	if ((pressure || useless) && dir_kill(c, d))
		return;
	/* relaxed: a hint; dir_unidle re-reads with seq_cst */
	if (atomic_load_explicit(&d->refs, memory_order_relaxed) != 0)
		dir_unidle(c, d);
	else
		idle_keep(c, d);
}

/*
 * The idle objects with no answer kept without pressure: a sixteenth of
 * the objects, at least DIR_SPARE_MIN.  A directory whose names come and
 * go (a staging directory; the churn workload) keeps its object between
 * them: freed at once, each create made it again and each unlink's reap
 * freed it (churn at 64 directories: 1,750 of a cycle's 10,200
 * instructions, BENCHMARKS.md, issue 14, stop 27).
 */
#define DIR_SPARE_MIN 64
static size_t spare_max(struct udc_cache *c)
{
	int64_t n = cache_nr_dirs(c) / 16;

	return n > DIR_SPARE_MIN ? (size_t)n : DIR_SPARE_MIN;
}

/* The oldest of @f: freed, or back in use (a pin does not take it off). */
static void fifo_reap_one(struct udc_cache *c, struct dir_fifo *f)
{
	struct udc_dir *d = fifo_pop(f);

	if (!dir_kill(c, d))
		dir_unidle(c, d);
}

bool dir_reap(struct udc_cache *c, size_t budget, bool pressure)
{
	/* relaxed: written by the one reaper, read outside as a hint only */
	struct udc_dir *n = atomic_load_explicit(&c->dirs_arrived, memory_order_relaxed);

	if (!n)   /* acquire: pairs with dir_put's release CAS (queued_next) */
		n = atomic_exchange_explicit(&c->dirs_queued, NULL, memory_order_acquire);
	while (budget && n) {
		struct udc_dir *d = n;
		n = d->queued_next;   /* before d's link is reused */
		dir_consider(c, d, pressure);
		budget--;
	}
	atomic_store_explicit(&c->dirs_arrived, n, memory_order_relaxed);
	/* The spares past their bound (all of them under pressure), then
	 * under pressure the ones kept for their answers, oldest first. */
	while (budget && c->dirs_spare.n > (pressure ? 0 : spare_max(c))) {
		fifo_reap_one(c, &c->dirs_spare);
		budget--;
	}
	while (pressure && budget && c->dirs_idle.n) {
		fifo_reap_one(c, &c->dirs_idle);
		budget--;
	}
	return n || dir_reap_due(c) || (pressure && (c->dirs_idle.n || c->dirs_spare.n));
}

bool dir_reap_due(struct udc_cache *c)
{
	/* relaxed: a hint (see dir_reap) */
	return atomic_load_explicit(&c->dirs_arrived, memory_order_relaxed) ||
	       atomic_load_explicit(&c->dirs_queued, memory_order_relaxed);
}

/* At destroy: no other caller and no reader.  The objects still in the
 * table give back their listings; they and their extensions go with the
 * directory slab's pages, the table whole (table_free). */
void dir_free_all(struct udc_cache *c)
{
	struct cds_lfht_iter it;
	struct cds_lfht_node *n;

	rcu_read_lock();   /* not needed alone; table_for_each's rule */
	table_for_each(c->dirs, &it, n) {
		listing_free(c, dir_of(n));
		atomic_fetch_sub_explicit(&c->nr_dirs, 1, memory_order_relaxed);
	}
	rcu_read_unlock();
}
