/* SPDX-License-Identifier: MIT */
/*
 * engine/mutate.c - what the embedder tells the cache: udc_add,
 * udc_add_value, udc_add_listed, udc_add_negative(_ttl), udc_remove,
 * udc_invalidate, udc_invalidate_dir, udc_rmdir, udc_rename, udc_exchange,
 * udc_dir_complete; and the table updates they (and resolve, and reclaim)
 * share.
 *
 * Owns: publishing and unpublishing entries in the name table, the
 * children lists, the per-directory and per-thread entry counts, the
 * rename seqcount's write side.
 *
 * Probes (common/probe.h): insert in entry_publish_locked (every entry
 * published goes through it), decline in udc_add_negative, invalidate in
 * udc_invalidate and dir_forget (invalidate_dir, rmdir, a directory
 * renamed over).
 *
 * Every change of a name is a new entry replacing the old one
 * (name_table_add_replace_locked) or a removal (name_table_del_locked),
 * made with the name's
 * stripe lock held; so each mutation is atomic for lookups, and the
 * stripe's in-flight placeholders for that name can be marked stale in the
 * same critical section.  Nothing is changed before every allocation a
 * call needs has succeeded: a call that fails with -ENOMEM changes nothing.
 *
 * Locking (outermost first):
 *   cache->rename_lock   serialises udc_rename, udc_exchange and udc_rmdir
 *                        (writers of rename_seq); taken before any stripe.
 *   stripe->lock         every update of the names hashed to the stripe,
 *                        and its in-flight list.  Two stripes (rename) are
 *                        taken in address order.  Never taken inside an
 *                        rcu_read_lock section (so that a stripe holder may
 *                        wait for a grace period).
 *   the directory slab's locks  under a stripe when a ".." record is
 *                        brought up to date (dir_learn, dir_parent_move:
 *                        the parent's extension, made if need be); never
 *                        held with the spinlocks below.
 *   ext->lock, free_lock spinlocks, innermost, never nested in each other
 *                        (a child's ext->lock guards its ".." record).
 *
 * Ordering:
 *   The name table's link changes are release stores, paired with its
 *   lookups' acquire loads (engine/name_table.c): an entry's fields, and
 *   everything its writer did before (dir_drop_note's RMW, below), are
 *   seen by every reader that finds the change.
 *   Every loss of a name that still exists (udc_invalidate, a rename in
 *   over an uncached name, a failed udc_add, dir_forget) calls
 *   dir_drop_note (seq_cst RMW: clears DIR_COMPLETE, fails fills) before
 *   the entry goes, so no lookup sees "complete" with the name gone (see
 *   engine/dir.c, Ordering, fills); the generation bump (release,
 *   dir_bump_gen) comes after the flag and parent are cleared, for the
 *   same reason (pairs with the acquire in lookups).  ".." records change
 *   only through engine/dir.c's helpers (dir_parent_set, dir_learn,
 *   dir_parent_move, dir_parent_forget_if, dir_children_moved).
 *   ck_sequence_write_begin/end bracket a rename's or rmdir's changes; they
 *   pair with udc_walk's rename_seq_begin and ck_sequence_read_retry.
 *   stripe->touched (inflight_mark_stale_locked) is written and read
 *   under its stripe lock; the fill_clock value it takes is a relaxed
 *   load: a fill begun before the mutation happened before it through the
 *   embedder's own ordering of the store (udc_add_listed), and coherence
 *   then gives the newer value.
 *   The hit counter a replacing entry takes from the one it replaces
 *   (entry_hits_carry) is a relaxed load and store, as the readers'
 *   raises (engine/lookup.c, Ordering): a policy hint, not an answer.
 */
#include "engine/internal.h"
#include "common/probe.h"

#include <errno.h>

static bool inflight_is(const struct inflight *ph, uint64_t hash, const struct name_key *k)
{
	return ph->hash == hash && ph->dir == k->dir && ph->len == k->len &&
	       memcmp(ph->name, k->name, k->len) == 0;
}

void inflight_answers_stale_locked(struct stripe *s, uint64_t hash, const struct name_key *k)
{
	lock_assert_held(&s->lock);
	struct inflight *ph;

	cds_list_for_each_entry(ph, &s->inflight, link) {
		if (inflight_is(ph, hash, k))
			ph->stale = true;
	}
}

void inflight_mark_stale_locked(struct udc_cache *c, struct stripe *s, uint64_t hash,
				 const struct name_key *k)
{
	lock_assert_held(&s->lock);
	/* A fill begun before now must not cache a listing's answer for
	 * this name (udc_add_listed).  relaxed: a fill that began before
	 * this mutation happened before it through the embedder's own
	 * ordering (the store), so its fill_clock increment is seen;
	 * touched is read under this stripe lock only. */
	atomic_store_explicit(&s->touched, atomic_load_explicit(&c->fill_clock, memory_order_relaxed),
			      memory_order_relaxed);
	inflight_answers_stale_locked(s, hash, k);
}

void inflight_mark_all_stale(struct udc_cache *c)
{
	for (unsigned i = 0; i <= c->stripe_mask; i++) {
		struct stripe *s = &c->stripes[i];
		struct inflight *ph;

		udc_mutex_lock(&s->lock);
		/* relaxed: as inflight_mark_stale_locked */
		atomic_store_explicit(&s->touched,
				      atomic_load_explicit(&c->fill_clock, memory_order_relaxed),
				      memory_order_relaxed);
		cds_list_for_each_entry(ph, &s->inflight, link)
			ph->stale = true;
		udc_mutex_unlock(&s->lock);
	}
}

struct inflight *inflight_find_locked(struct stripe *s, uint64_t hash, const struct name_key *k)
{
	lock_assert_held(&s->lock);
	struct inflight *ph;

	/* Stale ones are skipped: the newest live placeholder is first. */
	cds_list_for_each_entry(ph, &s->inflight, link) {
		if (inflight_is(ph, hash, k) && !ph->stale)
			return ph;
	}
	return NULL;
}

/*
 * The table's entries and their slots changed by @n and @bytes: kept in
 * the thread's own stats slot and added to the cache's counters once they
 * pass ENTRY_COUNT_BATCH entries or ENTRY_BYTES_BATCH bytes either way, so
 * that the cache-wide line is written once a batch instead of twice a
 * publish and twice a removal (docs/SCALING.md).  The counters are
 * estimates (table sizes, compaction, ghosts): each thread holds back
 * less than a batch.  The slot shared by threads past the last chunk has
 * many writers: its changes go to the cache at once.
 */
#define ENTRY_COUNT_BATCH 64
#define ENTRY_BYTES_BATCH ((int64_t)64 << 7)

static void entry_count(struct udc_cache *c, struct thread_stats *ts, int64_t n, int64_t bytes)
{
	if (ts != &c->shared_stats) {
		/* relaxed: the slot's single writer (stat_add); mod 2^64 */
		n += (int64_t)atomic_load_explicit(&ts->entries_unfolded, memory_order_relaxed);
		bytes += (int64_t)atomic_load_explicit(&ts->entry_bytes_unfolded, memory_order_relaxed);
		bool keep = n < ENTRY_COUNT_BATCH && n > -ENTRY_COUNT_BATCH &&
			    bytes < ENTRY_BYTES_BATCH && bytes > -ENTRY_BYTES_BATCH;
		atomic_store_explicit(&ts->entries_unfolded, keep ? (uint64_t)n : 0, memory_order_relaxed);
		atomic_store_explicit(&ts->entry_bytes_unfolded, keep ? (uint64_t)bytes : 0,
				      memory_order_relaxed);
		if (keep)
			return;
	}
	/* relaxed: estimates (see the memory accounting fields) */
	atomic_fetch_add_explicit(&c->nr_entries, n, memory_order_relaxed);
	atomic_fetch_add_explicit(&c->entry_bytes, bytes, memory_order_relaxed);
}

/* Negative @e entered (+1) or left (-1) the table: the policy's count of
 * its client's (the anonymous ones' in the thread's slot first: see
 * shrink_entry_counted; the shared slot has many writers). */
static void neg_counted(struct udc_cache *c, struct thread_stats *ts, struct udc_entry *e,
			int delta)
{
	shrink_entry_counted(c->shrink, ENT_NEGATIVE, neg_client(e),
			     slab_page_class(slab_page_of(c->slabs[ENT_NEGATIVE], e)), delta,
			     ts != &c->shared_stats ? &ts->anon_probation_unfolded : NULL);
}

/* e was just taken out of the table: uncounted; its reference to its
 * directory is returned to the caller, who drops it or hands it on. */
static struct udc_dir *entry_detach_keep_dir(struct udc_cache *c, struct udc_entry *e)
{
	struct thread_stats *ts = thread_stats(c);
	struct udc_dir *d = e->dir;

	if (e->kind == ENT_POSITIVE) {
		if (entry_listed(e))   /* before nr_positive: engine/listing.c, Ordering */
			listing_unlink_locked(c, e);
		atomic_fetch_sub_explicit(&d->nr_positive, 1, memory_order_relaxed);
		stat_add(ts, pos_dropped, 1);
	} else {
		dir_stale_negative_gone(d, e->gen);
		neg_counted(c, ts, e, -1);
		stat_add(ts, neg_dropped, 1);
	}
	entry_count(c, ts, -1, -(int64_t)entry_slot_size(c, e));
	/* relaxed: the sweeper that still reads 1 finds no entry by its key */
	atomic_store_explicit(&e->published, 0, memory_order_relaxed);
	return d;
}

/* e was just taken out of the table: uncounted. */
void entry_detach(struct udc_cache *c, struct udc_entry *e)
{
	dir_put(c, entry_detach_keep_dir(c, e));   /* last: d may be freed from here on */
}

/* e was just taken out of the table (replaced or deleted): detach, free
 * after a grace period; its reference to its directory is returned, to be
 * dropped or handed on.  Outside any read-side section (see Locking). */
static struct udc_dir *entry_unlink_keep_dir_locked(struct udc_cache *c, struct udc_entry *e)
{
	udc_assert_internal(entry_stripe_held(c, e));
	struct udc_dir *d = entry_detach_keep_dir(c, e);

	entry_free_deferred(c, e);
	return d;
}

/* The same, the reference dropped. */
void entry_unlink_locked(struct udc_cache *c, struct udc_entry *e)
{
	dir_put(c, entry_unlink_keep_dir_locked(c, e));   /* last: d may be freed from here on */
}

/*
 * @e replaces @was for its name (e just published, its stripe locked):
 * the name keeps the hits it earned.  An entry is immutable, so a change
 * of a name's answer (an add over its negative or its old attr, a
 * listing's refresh, a rename over it, a resolve's new answer) is a new
 * entry, but the name is the same one, as the kernel's dentry is the same
 * through a create over its negative or a setattr; a new counter made
 * every such change an unhit entry in probation (a directory's fill reset
 * its hot names).  The change itself is not a hit: a create comes with the
 * lookup that missed its name, in one system call (a correlated
 * reference, counted once).  An unlink's negative starts afresh: the hits
 * were the file's, not its absence's.  Readers only raise the counter, so
 * the plain store races with nothing but a raise (a lost one is a hit
 * uncounted, as with two readers).
 */
static void entry_hits_carry(struct udc_entry *e, const struct udc_entry *was)
{
	if (e->kind == ENT_NEGATIVE && was->kind == ENT_POSITIVE)
		return;
	/* relaxed: see Ordering (the hit counter) */
	uint8_t n = atomic_load_explicit(&was->hits, memory_order_relaxed) & HITS_MASK;
	uint8_t h = atomic_load_explicit(&e->hits, memory_order_relaxed);
	if ((h & HITS_MASK) < n)   /* ENT_EXPIRES kept */
		atomic_store_explicit(&e->hits, (uint8_t)((h & ~HITS_MASK) | n),
				      memory_order_relaxed);
}

bool entry_publish_locked(struct udc_cache *c, struct udc_entry *e, uint64_t hash,
			  const struct name_key *k, bool pin_given)
{
	lock_assert_held(&stripe_of(c, hash)->lock);
	struct thread_stats *ts = thread_stats(c);
	struct udc_dir *d = e->dir;

	udc_assert(dir_is(c, d, k->dir) && e->len == k->len);
	if (e->kind == ENT_POSITIVE) {
		atomic_fetch_add_explicit(&d->nr_positive, 1, memory_order_relaxed);
		stat_add(ts, pos_added, 1);
	} else {
		neg_counted(c, ts, e, 1);
		stat_add(ts, neg_added, 1);
	}
	entry_count(c, ts, 1, (int64_t)entry_slot_size(c, e));
	uint32_t deadline = entry_deadline(e);
	if (deadline)
		shrink_expiry_noted(c->shrink, deadline);

	/* release: a sweeper that reads 1 (acquire) sees the entry's fields:
	 * Ordering (A) */
	atomic_store_explicit(&e->published, 1, memory_order_release);
	rcu_read_lock();
	struct name_node *old = name_table_add_replace_locked(&c->names, &e->node, hash, name_match, k);
	rcu_read_unlock();
	UDC_PROBE(insert, (int)e->kind, k->dir, k->name, k->len, old != NULL);
	struct udc_entry *was = old ? caa_container_of(old, struct udc_entry, node) : NULL;
	if (entry_listed(e))   /* after nr_positive: listing.c */
		listing_link_locked(c, e, was);
	/*
	 * The entry's reference to d, taken after the publication: the
	 * publisher holds d until it returns, and e can leave the table only
	 * under the stripe lock we hold.  A replaced entry hands its own on
	 * (the common replace: a negative by its positive), which saves d's
	 * line two of the six atomics a replace made (a hold, a put) and the
	 * put's read-side section.  It holds d itself: an ino has one live
	 * object (dir_get), which every entry under it keeps live.  With none
	 * replaced, a caller that gives its pin saves two more, the hold and
	 * its own put (a new name's insert: 3 to 1 RMW on d's line).
	 */
	if (was) {
		udc_assert_internal(was->dir == d);
		entry_hits_carry(e, was);
		(void)entry_unlink_keep_dir_locked(c, was);   /* its reference is e's now */
		return false;
	}
	if (!pin_given)
		dir_hold(d);
	return pin_given;
}

/* The positive answer @e (may be NULL) gives, under rcu_read_lock (its
 * value too, @vo may be NULL; and its deadline, @deadline may be NULL).
 * None (false): out->ino UDC_INO_NONE, no value, no deadline. */
static bool entry_attr_rcu(struct udc_cache *c, struct udc_entry *e, struct udc_attr *out,
			   struct value_out *vo, uint32_t *deadline)
{
	if (!e || e->kind != ENT_POSITIVE || !entry_answers(c, e)) {
		out->ino = UDC_INO_NONE;
		if (vo)
			vo->len = 0;
		if (deadline)
			*deadline = 0;
		return false;
	}
	pos_attr_copy(out, entry_pos(e));
	pos_value_copy(vo, entry_pos(e));
	if (deadline)
		*deadline = entry_deadline(e);
	return true;
}

/*
 * Drop k's entry, with its stripe locked: the bytes it held (0: none).
 * @was (may be NULL): the positive answer it gave, ino UDC_INO_NONE if it
 * gave none (one lookup where an unlink made two: BENCHMARKS.md, issue 16),
 * and its value and deadline (@vo, @deadline: may be NULL; entry_attr_rcu).
 * @dir (may be NULL): where the entry's reference to its directory goes,
 * for the caller to put (else it is put here).
 */
static size_t entry_take_locked(struct udc_cache *c, uint64_t hash, const struct name_key *k,
				struct udc_attr *was, struct value_out *vo, uint32_t *deadline,
				struct udc_dir **dir)
{
	lock_assert_held(&stripe_of(c, hash)->lock);
	size_t size = 0;

	rcu_read_lock();
	struct udc_entry *e = entry_find_rcu(c, hash, k);
	if (was)
		entry_attr_rcu(c, e, was, vo, deadline);
	if (e && name_table_del_locked(&c->names, &e->node))
		size = entry_footprint(e);
	else
		e = NULL;
	rcu_read_unlock();
	if (e && dir)
		*dir = entry_unlink_keep_dir_locked(c, e);
	else if (e)
		entry_unlink_locked(c, e);
	return size;
}

size_t entry_drop_locked(struct udc_cache *c, uint64_t hash, const struct name_key *k)
{
	return entry_take_locked(c, hash, k, NULL, NULL, NULL, NULL);
}

/* The positive answer cached for k (its value too, @vo may be NULL; and
 * its deadline, @deadline may be NULL), with the stripe locked. */
static bool cached_attr_locked(struct udc_cache *c, uint64_t hash, const struct name_key *k,
			       struct udc_attr *out, struct value_out *vo, uint32_t *deadline)
{
	lock_assert_held(&stripe_of(c, hash)->lock);
	rcu_read_lock();
	bool found = entry_attr_rcu(c, entry_find_rcu(c, hash, k), out, vo, deadline);
	rcu_read_unlock();
	return found;
}

/* Does the cache hold an answer for k (positive or negative, not expired),
 * with the stripe locked? */
static bool name_known_locked(struct udc_cache *c, uint64_t hash, const struct name_key *k)
{
	lock_assert_held(&stripe_of(c, hash)->lock);
	rcu_read_lock();
	struct udc_entry *e = entry_find_rcu(c, hash, k);
	bool known = e && entry_answers(c, e);
	rcu_read_unlock();
	return known;
}

/* One name being changed: its key, hash, stripe and directory (pinned
 * from name_op_init_as to name_op_done; none with PIN_NONE, until an
 * unlink hands it the dropped entry's reference; not the op's from when
 * the pin went to the entry published, d_given, d then held by that entry
 * while the op holds the stripe lock; nor when it is another op's,
 * d_borrowed, whose pin outlives this op's use of it). */
struct name_op {
	struct name_key k;
	uint64_t hash;
	struct stripe *s;
	struct udc_dir *d;
	bool d_given;    /* the pin on d went to the entry published (op_publish_locked) */
	bool d_borrowed; /* d is the @pinned of name_op_init_as, held by its op */
};

static void name_op_done(struct udc_cache *c, struct name_op *op)
{
	if (op->d && !op->d_given && !op->d_borrowed)
		dir_put(c, op->d);
}

/* How a name_op finds its directory. */
enum dir_pin {
	PIN_MAKE,   /* find or make it (dir_get), through the name's entry first */
	PIN_MAKE_NEW, /* the same, not through the entry: a name seldom cached
	               * (udc_add_negative's: its lookup missed) */
	PIN_FIND,   /* find it if it has an object (dir_find) */
	PIN_NONE,   /* not at all: a removal needs none (see udc_remove) */
};

/* What a name's cached positive carried when its op began: the entry
 * that a rename or an exchange makes for the other name copies it, and
 * checks it again under the locks (an add of the name in between). */
struct value_peek {
	struct value_out value;   /* into buf; len 0: none (or not cached) */
	uint32_t deadline;
	unsigned char buf[UDC_VALUE_MAX];
};

/* Are the value and deadline read under the locks (@now, @deadline) the
 * ones @p peeked? */
static bool peek_holds(const struct value_peek *p, const struct value_out *now, uint32_t deadline)
{
	return now->len == p->value.len && memcmp(now->buf, p->buf, now->len) == 0 &&
	       deadline == p->deadline;
}

/*
 * One read-side section on op's name: its cached entry's directory,
 * pinned if @pin (NULL: no entry, or its directory dying), and into
 * @peek (may be NULL) what its positive answer carries.  A create whose
 * lookup missed finds the negative cached then, and the entry's
 * directory is the one live object of its ino (dir_get): no walk of the
 * directory table (an rculfhash lookup and its wrappers, about 200
 * instructions of a create's 1,600).  A new name's costs a chain's
 * summary test, and its bucket's line is the one the insert writes.
 * Under rcu_read_lock, a dying directory's object is not freed yet
 * (dir_pin_rcu tells).
 */
static struct udc_dir *entry_look(struct udc_cache *c, const struct name_op *op, bool pin,
				  struct value_peek *peek)
{
	struct udc_dir *d = NULL;

	rcu_read_lock();
	struct udc_entry *e = entry_find_rcu(c, op->hash, &op->k);
	if (peek) {
		struct udc_attr unused;
		peek->value = (struct value_out){ .buf = peek->buf, .room = sizeof(peek->buf) };
		entry_attr_rcu(c, e, &unused, &peek->value, &peek->deadline);
	}
	if (pin && e && dir_pin_rcu(c, e->dir))
		d = e->dir;
	rcu_read_unlock();
	return d;
}

/* The checks of a call on (c, dir, name) that changes the name: 0 or
 * -errno (".." is no name to change here: -EINVAL). */
static int name_op_check(struct udc_cache *c, udc_ino dir, const char *name, size_t len)
{
	int r = call_check(c, dir, name, len);

	return r ? r : name_is_dotdot(name, len) ? -EINVAL : 0;
}

/* Set op up for a name whose arguments were checked (name_op_check), its
 * directory found as @how says; 0 or -ENOMEM.
 * @pinned (may be NULL): a directory another op of the caller's holds,
 * borrowed if it is @dir's (a rename or exchange within one directory: one
 * pin, and no lookup for it; that op is done after this one, or this
 * one's d is not used after it is).
 * @peek (may be NULL): filled from the lookup that finds the directory
 * (entry_look), or one of its own if none does.
 * Not found: op->d is NULL when the cache has no object for it (then
 * nothing is cached in it, and nothing is in flight: calls in flight pin
 * theirs), or with PIN_NONE. */
static int name_op_setup(struct name_op *op, struct udc_cache *c, udc_ino dir, const char *name,
			 size_t len, enum dir_pin how, struct udc_dir *pinned,
			 struct value_peek *peek)
{
	thread_enter();
	op->k = name_key_of(c, dir, name, len);
	op->hash = hash_name(&c->key, dir, name, len);
	op->s = stripe_of(c, op->hash);
	op->d_given = false;
	op->d_borrowed = how != PIN_NONE && pinned && dir_is(c, pinned, dir);
	op->d = op->d_borrowed ? pinned : NULL;
	bool through_entry = how != PIN_NONE && how != PIN_MAKE_NEW && !op->d_borrowed;
	if (through_entry || peek) {
		struct udc_dir *d = entry_look(c, op, through_entry, peek);
		if (through_entry)
			op->d = d;
	}
	if (how == PIN_NONE || op->d)
		return 0;
	op->d = how == PIN_FIND ? dir_find(c, dir) : dir_get(c, dir);
	return op->d || how == PIN_FIND ? 0 : -ENOMEM;
}

/* name_op_check, then name_op_setup with nothing peeked. */
static int name_op_init_as(struct name_op *op, struct udc_cache *c, udc_ino dir, const char *name,
			   size_t len, enum dir_pin how, struct udc_dir *pinned)
{
	int r = name_op_check(c, dir, name, len);

	return r ? r : name_op_setup(op, c, dir, name, len, how, pinned, NULL);
}

/* A positive for op's name with @attr (NULL: filled in later, pos_attr_set)
 * and @x's value and deadline. */
static struct udc_entry *pos_alloc(struct udc_cache *c, const struct name_op *op,
				   const struct udc_attr *attr, const struct entry_extra *x)
{
	struct entry_extra xl = x ? *x : (struct entry_extra){ 0 };
	xl.listed = listing_wanted(op->d);
	struct udc_entry *e = entry_alloc(c, ENT_POSITIVE, op->k.name, op->k.len, op->hash, &xl);

	if (e && attr)
		pos_attr_set(entry_pos(e), attr);
	if (e)
		e->dir = op->d;
	return e;
}

/* A negative for op's name, of client @tag, with a life of @ttl_ms
 * (cache_deadline_for). */
static struct udc_entry *neg_alloc(struct udc_cache *c, const struct name_op *op, uint8_t tag,
				   uint32_t ttl_ms)
{
	const struct entry_extra x = {
		.deadline = cache_deadline_for(c, ENT_NEGATIVE, ttl_ms),
		.client = tag,
	};
	struct udc_entry *e = entry_alloc(c, ENT_NEGATIVE, op->k.name, op->k.len, op->hash, &x);

	if (e)
		e->dir = op->d;
	return e;
}

/* Publish e (gen taken now) for op's name, with op->s locked.  @give:
 * op's pin on its directory may become e's reference (op->d_given; d
 * stays usable until the lock is dropped, e holding it). */
static void op_publish_locked(struct udc_cache *c, struct name_op *op, struct udc_entry *e,
			      bool give)
{
	lock_assert_held(&op->s->lock);
	e->gen = dir_gen(op->d);
	/* a borrowed pin is not ours to give */
	op->d_given = entry_publish_locked(c, e, op->hash, &op->k, give && !op->d_borrowed);
}

bool attr_valid(const struct udc_attr *attr)
{
	return attr && attr->ino != UDC_INO_NONE && attr->type <= UDC_TYPE_OTHER &&
	       attr->flags == 0;
}

/* Forget directory ino's contents, if it has an object: complete flag,
 * parent, then the generation.  No object: nothing cached and nothing in
 * flight in it (calls in flight pin theirs).  @why: the invalidate
 * probe's kind (enum udc_probe_inval). */
void dir_forget(struct udc_cache *c, udc_ino ino, int why)
{
	struct udc_dir *d = ino != UDC_INO_NONE ? dir_find(c, ino) : NULL;

	if (!d) {
		UDC_PROBE(invalidate, why, ino, (int64_t)0);
		return;
	}
	/* the entries left behind (an estimate: its refs, less our pin):
	 * garbage for the policy to sweep */
	/* relaxed: an estimate */
	int64_t garbage = atomic_load_explicit(&d->refs, memory_order_relaxed) - 1;
	shrink_dir_forgotten(c->shrink, garbage);
	UDC_PROBE(invalidate, why, ino, garbage);
	dir_drop_note(d);   /* before the release bump below (see Ordering) */
	dir_parent_set(c, d, NULL);
	dir_bump_gen(c, d);
	dir_put(c, d);
}

/* udc_add(dir, "..", attr): record the parent of dir. */
static int add_parent(struct udc_cache *c, udc_ino dir, const struct udc_attr *attr)
{
	if (attr->type != UDC_TYPE_DIR)
		return -EINVAL;
	struct udc_dir *d = dir_get(c, dir);
	struct udc_dir *pd = d ? dir_get(c, attr->ino) : NULL;
	int r = pd ? dir_parent_set(c, d, pd) : -ENOMEM;
	if (!r)
		dir_cookie_set(pd, attr->cookie);   /* pd has an extension: the record's stamp */
	if (pd)
		dir_put(c, pd);
	if (d)
		dir_put(c, d);
	if (!r)   /* the objects and the record are bytes: the bound */
		shrink_after_dir_call(c->shrink);
	return r;
}

/* udc_add and udc_add_value: the value's arguments checked. */
static int add_positive(udc_cache *c, udc_ino dir, const char *name, size_t len,
			const struct udc_attr *attr, const void *value, size_t vlen,
			uint32_t ttl_ms, const struct udc_fill *fill)
{
	struct name_op op;
	int r = call_check(c, dir, name, len);

	if (r)
		return r;
	if (!attr_valid(attr))
		return -EINVAL;
	if (name_is_dotdot(name, len)) {
		if (vlen || ttl_ms)
			return -EINVAL;   /* a ".." record holds no value, and no life */
		thread_enter();
		return add_parent(c, dir, attr);
	}
	r = name_op_setup(&op, c, dir, name, len, PIN_MAKE, NULL, NULL);   /* checked above */
	if (r)
		return r;
	/* A directory's record of its parent, if it has one (dir_learn). */
	struct udc_dir *child = attr->type == UDC_TYPE_DIR ? dir_find(c, attr->ino) : NULL;
	const struct entry_extra x = {
		.value = value, .vlen = vlen,
		.deadline = cache_deadline_for(c, ENT_POSITIVE, ttl_ms),
	};
	struct udc_entry *e = pos_alloc(c, &op, attr, &x);
	bool refused = false;
	if (e) {
		udc_mutex_lock(&op.s->lock);
		refused = fill && !dir_fill_listed_ok(op.d, fill, op.s);
		if (refused) {
			/* Changed since the listing was read (or another name of
			 * the stripe was): what the change told the cache stays.
			 * If it holds nothing for the name, the name may exist
			 * (another name's change refused it): a fill fails. */
			if (!name_known_locked(c, op.hash, &op.k))
				dir_drop_note(op.d);
		} else {
			/* A listing's answer changes nothing in the store:
			 * the stripe stays untouched for the fills (touched by
			 * it, the fill refused the next of its names on the
			 * stripe, and a listing of a few dozen names never
			 * completed). */
			if (fill)
				inflight_answers_stale_locked(op.s, op.hash, &op.k);
			else
				inflight_mark_stale_locked(c, op.s, op.hash, &op.k);
			op_publish_locked(c, &op, e, true);
			if (child)
				dir_learn(c, child, op.d, attr->cookie);
			e = NULL;
		}
		udc_mutex_unlock(&op.s->lock);
		if (e)
			entry_free_now(c, e);   /* never published */
	} else {
		dir_drop_note(op.d);   /* a fill that told this name fails */
		r = -ENOMEM;
	}
	if (child)
		dir_put(c, child);
	name_op_done(c, &op);
	if (r)
		return r;
	shrink_after_call(c->shrink);
	return refused ? -ESTALE : 0;
}

int udc_add(udc_cache *c, udc_ino dir, const char *name, size_t len, const struct udc_attr *attr)
{
	return add_positive(c, dir, name, len, attr, NULL, 0, 0, NULL);
}

int udc_add_value(udc_cache *c, udc_ino dir, const char *name, size_t len,
		  const struct udc_attr *attr, const void *value, size_t value_len,
		  uint32_t ttl_ms)
{
	if (value_len > UDC_VALUE_MAX || (value_len && !value))
		return -EINVAL;
	return add_positive(c, dir, name, len, attr, value, value_len, ttl_ms, NULL);
}

int udc_add_listed(udc_cache *c, udc_ino dir, const char *name, size_t len,
		   const struct udc_attr *attr, const void *value, size_t value_len,
		   uint32_t ttl_ms, const struct udc_fill *fill)
{
	if (value_len > UDC_VALUE_MAX || (value_len && !value) || !fill || fill->opaque[0] != dir)
		return -EINVAL;
	if (name_is_dotdot(name, len))
		return -EINVAL;   /* a listing's ".." is the parent's record: udc_add */
	return add_positive(c, dir, name, len, attr, value, value_len, ttl_ms, fill);
}

int udc_add_negative(udc_cache *c, udc_ino dir, const char *name, size_t len, uint32_t client)
{
	return udc_add_negative_ttl(c, dir, name, len, client, 0);
}

int udc_add_negative_ttl(udc_cache *c, udc_ino dir, const char *name, size_t len,
			 uint32_t client, uint32_t ttl_ms)
{
	struct name_op op;
	int r = name_op_init_as(&op, c, dir, name, len, PIN_MAKE_NEW, NULL);

	if (r)
		return r;
	bool complete = dir_is_complete(c, op.d);
	uint8_t tag = shrink_client_tag(c->shrink, client);
	bool keep = !complete && dir_admits_negative(c, op.d, tag);
	struct udc_entry *e = keep ? neg_alloc(c, &op, tag, ttl_ms) : NULL;
	if (keep && !e) {
		name_op_done(c, &op);
		return -ENOMEM;
	}
	if (!complete && !keep) {
		stat_add(thread_stats(c), declined, 1);
		UDC_PROBE(decline, dir, client);
	}

	udc_mutex_lock(&op.s->lock);
	inflight_mark_stale_locked(c, op.s, op.hash, &op.k);
	if (e)
		op_publish_locked(c, &op, e, true);
	else   /* complete (answers negative with no entry) or declined */
		entry_drop_locked(c, op.hash, &op.k);
	udc_mutex_unlock(&op.s->lock);
	name_op_done(c, &op);
	shrink_after_call(c->shrink);
	return 0;
}

/* A name being unlinked: its op, the negative left behind
 * (UDC_CFG_KEEP_UNLINKED, else NULL), and the attr that was cached. */
struct unlink_op {
	struct name_op op;
	struct udc_entry *neg;
	struct udc_attr was;   /* ino UDC_INO_NONE if none was cached */
	struct value_out *value;  /* where its value goes (NULL: nowhere; a rename's) */
	uint32_t *deadline;       /* and its deadline, likewise */
};

/*
 * name_op_setup() for a name about to be unlinked (its arguments
 * checked: name_op_check), its directory found as @how says (@peek: as
 * name_op_setup's): also allocate, with UDC_CFG_KEEP_UNLINKED, the
 * negative left behind (its directory made).
 * Lenient unless @how is PIN_MAKE (udc_remove, udc_rmdir: the embedder's
 * way back to a correct cache must not fail): no -ENOMEM; with no memory
 * for the negative, the name is dropped instead (a negative is never
 * owed: it may be declined), and with no object for @dir, nothing being
 * cached in it, u->op.d is NULL.
 */
static int unlink_op_setup(struct unlink_op *u, struct udc_cache *c, udc_ino dir,
			   const char *name, size_t len, enum dir_pin how, struct value_peek *peek)
{
	bool keep = c->flags & UDC_CFG_KEEP_UNLINKED;
	bool lenient = how != PIN_MAKE;
	int r = name_op_setup(&u->op, c, dir, name, len, keep ? PIN_MAKE : how, NULL, peek);

	u->neg = NULL;
	u->value = NULL;
	u->deadline = NULL;
	if (r == -ENOMEM && lenient)
		r = name_op_setup(&u->op, c, dir, name, len, PIN_FIND, NULL, NULL);
	if (r || !keep || !u->op.d)
		return r;
	u->neg = neg_alloc(c, &u->op, 0, 0);
	if (u->neg || lenient)
		return 0;
	name_op_done(c, &u->op);
	return -ENOMEM;
}

/* name_op_check, then unlink_op_setup with nothing peeked. */
static int unlink_op_init(struct unlink_op *u, struct udc_cache *c, udc_ino dir, const char *name,
			  size_t len, enum dir_pin how)
{
	int r = name_op_check(c, dir, name, len);

	return r ? r : unlink_op_setup(u, c, dir, name, len, how, NULL);
}

/*
 * Drop u's name (or leave its negative), with u->op.s locked.  u->was is
 * the dropped positive's attr, and u->value and u->deadline (if set) its
 * value and deadline, from the lookup that drops it.
 */
static void op_unlink_locked(struct udc_cache *c, struct unlink_op *u)
{
	struct name_op *op = &u->op;

	lock_assert_held(&op->s->lock);
	inflight_mark_stale_locked(c, op->s, op->hash, &op->k);
	if (!u->neg) {
		/* With no pin (udc_remove), the op holds the dropped entry's
		 * reference instead, to name_op_done: its directory stays
		 * pinned while the call ends (unlinked_dir_leaves). */
		entry_take_locked(c, op->hash, &op->k, &u->was, u->value, u->deadline,
				  op->d ? NULL : &op->d);
		return;
	}
	cached_attr_locked(c, op->hash, &op->k, &u->was, u->value, u->deadline);
	op_publish_locked(c, op, u->neg, false);   /* rmdir reads u->op.d after */
}

/* The directory the unlinked name held (if the cache knew it as one)
 * is no longer in u's directory: its ".." there goes. */
static void unlinked_dir_leaves(struct udc_cache *c, const struct unlink_op *u)
{
	if (u->was.ino == UDC_INO_NONE || u->was.type != UDC_TYPE_DIR)
		return;
	struct udc_dir *child = dir_find(c, u->was.ino);
	if (child) {
		dir_parent_forget_if(c, child, u->op.k.dir);
		dir_put(c, child);
	}
}

/*
 * No directory lookup (without UDC_CFG_KEEP_UNLINKED): a removal needs no
 * object of its own.  The entry it drops holds its directory, and hands
 * that reference to the unlink, which drops it (dir_put only queues an
 * idle object, under the stripe lock as anywhere); a name not cached
 * finds nothing, and marks the stripe's placeholders for it stale, as a
 * removal must (there are none when dir has no object).  The lookup was
 * a sixth of the call (BENCHMARKS.md, issue 16, stop 33).
 */
int udc_remove(udc_cache *c, udc_ino dir, const char *name, size_t len)
{
	struct unlink_op u;
	int r = unlink_op_init(&u, c, dir, name, len, PIN_NONE);

	if (r)
		return r;
	udc_mutex_lock(&u.op.s->lock);
	op_unlink_locked(c, &u);
	unlinked_dir_leaves(c, &u);
	udc_mutex_unlock(&u.op.s->lock);
	name_op_done(c, &u.op);
	shrink_after_call(c->shrink);
	return 0;
}

int udc_invalidate(udc_cache *c, udc_ino dir, const char *name, size_t len)
{
	struct name_op op;
	int r = call_check(c, dir, name, len);

	if (r)
		return r;
	if (name_is_dotdot(name, len)) {
		thread_enter();
		struct udc_dir *d = dir_find(c, dir);
		if (d) {
			dir_parent_set(c, d, NULL);
			dir_put(c, d);
		}
		return 0;
	}
	/* No object for dir: nothing cached in it and nothing in flight (calls
	 * in flight pin theirs), so there is nothing to forget, and no
	 * allocation that could fail. */
	(void)name_op_setup(&op, c, dir, name, len, PIN_FIND, NULL, NULL);   /* checked above */
	if (!op.d)
		return 0;
	dir_drop_note(op.d);   /* no longer complete before the name goes (Ordering) */
	udc_mutex_lock(&op.s->lock);
	inflight_mark_stale_locked(c, op.s, op.hash, &op.k);
	size_t dropped = entry_drop_locked(c, op.hash, &op.k);
	udc_mutex_unlock(&op.s->lock);
	UDC_PROBE(invalidate, UDC_PROBE_INVAL_NAME, dir, (int64_t)(dropped != 0));
	name_op_done(c, &op);
	shrink_after_drop(c->shrink);
	return 0;
}

int udc_invalidate_dir(udc_cache *c, udc_ino dir)
{
	if (!c || dir == UDC_INO_NONE)
		return -EINVAL;
	thread_enter();
	dir_forget(c, dir, UDC_PROBE_INVAL_DIR);
	shrink_after_forget(c->shrink);
	return 0;
}

int udc_dir_fill_begin(udc_cache *c, udc_ino dir, struct udc_fill *fill)
{
	if (!c || dir == UDC_INO_NONE || !fill)
		return -EINVAL;
	thread_enter();
	struct udc_dir *d = dir_get(c, dir);
	if (!d)
		return -ENOMEM;
	/* Out of memory: the fill goes on, and udc_readdir cannot list d
	 * (or, with no room for d's extension, the fill fails too). */
	(void)listing_make(c, d);
	int r = dir_fill_begin(c, d, fill);
	dir_put(c, d);
	shrink_after_dir_call(c->shrink);   /* the object and its listing are bytes */
	return r;
}

int udc_dir_complete(udc_cache *c, udc_ino dir, const struct udc_fill *fill)
{
	if (!c || dir == UDC_INO_NONE || !fill || fill->opaque[0] != dir)
		return -EINVAL;
	thread_enter();
	/* No object: the one the fill began on was freed, and with it the
	 * count of names lost since. */
	struct udc_dir *d = dir_find(c, dir);
	if (!d)
		return -ESTALE;
	int r = dir_fill_complete(c, d, fill);
	dir_put(c, d);
	/* No bound here: completing allocates nothing, and a reclaim between
	 * the flag and the return would take names the caller was just told
	 * are all held (the fuzzer's check_complete) */
	return r;
}

int udc_rmdir(udc_cache *c, udc_ino parent, const char *name, size_t len, udc_ino dir)
{
	struct unlink_op u;
	int r = unlink_op_init(&u, c, parent, name, len, PIN_FIND);

	if (r)
		return r;
	udc_mutex_lock(&c->rename_lock);
	ck_sequence_write_begin(&c->rename_seq);
	u.was.ino = UDC_INO_NONE;
	if (u.op.d) {   /* else nothing is cached in parent, and no ".." leads to it */
		udc_mutex_lock(&u.op.s->lock);
		op_unlink_locked(c, &u);
		udc_mutex_unlock(&u.op.s->lock);
	}
	if (dir == UDC_INO_NONE && u.was.ino != UDC_INO_NONE && u.was.type == UDC_TYPE_DIR)
		dir = u.was.ino;
	if (dir == UDC_INO_NONE && u.op.d)   /* whichever it was, its ".." is not trusted */
		dir_children_moved(c, u.op.d);
	dir_forget(c, dir, UDC_PROBE_INVAL_RMDIR);
	ck_sequence_write_end(&c->rename_seq);
	udc_mutex_unlock(&c->rename_lock);
	name_op_done(c, &u.op);
	/* Only an allocation (the negative left) calls for reclaim here: the
	 * directory's garbage is swept by the passes that follow (or by the
	 * worker, started here), and rmdir itself stays O(1). */
	if (u.neg)
		shrink_after_call(c->shrink);
	else
		shrink_after_forget(c->shrink);
	return 0;
}

static void stripes_lock(struct stripe *a, struct stripe *b)
{
	if (a == b) {
		udc_mutex_lock(&a->lock);
	} else if (a < b) {
		udc_mutex_lock(&a->lock);
		udc_mutex_lock(&b->lock);
	} else {
		udc_mutex_lock(&b->lock);
		udc_mutex_lock(&a->lock);
	}
}

static void stripes_unlock(struct stripe *a, struct stripe *b)
{
	udc_mutex_unlock(&a->lock);
	if (a != b)
		udc_mutex_unlock(&b->lock);
}

/* A rename's two names, what it allocated, and what it found. */
struct rename_op {
	struct unlink_op old;         /* the old name */
	struct name_op n;             /* the new one */
	udc_ino moved;                /* as given */
	struct udc_entry *pos;        /* the new name's entry, published if the old was known */
	struct udc_dir *moved_dir;    /* the moved object's directory object, if any (pinned) */
	struct value_peek peek;       /* the old name's value and deadline when pos was made */
};

/*
 * The ".." records a rename changes, both stripes held: a directory
 * replaced at the target is gone (if the target was not cached and is not
 * known absent, it may have been one, and no ".." to ndir is trusted);
 * the moved directory learns ndir (an object of unknown type, @moved given
 * and the old name not cached, may be a file with a directory object: it
 * only forgets what it had); a directory that may have left odir unseen
 * makes no ".." to odir trusted.
 */
static void rename_dotdot_locked(struct udc_cache *c, struct rename_op *ro, bool known,
				 const struct udc_attr *was, const struct udc_attr *target,
				 bool target_absent)
{
	udc_ino moved_ino = known ? was->ino : ro->moved;

	lock_assert_held(&ro->n.s->lock);
	/* Before the moved one learns ndir (its stamp is ndir's new epoch). */
	if (target->ino != UDC_INO_NONE && target->type == UDC_TYPE_DIR && target->ino != moved_ino)
		dir_forget(c, target->ino, UDC_PROBE_INVAL_RENAMED_OVER);
	else if (target->ino == UDC_INO_NONE && !target_absent)
		dir_children_moved(c, ro->n.d);
	if (ro->moved_dir) {
		dir_parent_move(c, ro->moved_dir, known && was->type == UDC_TYPE_DIR ? ro->n.d : NULL);
		dir_put(c, ro->moved_dir);
	} else if (moved_ino == UDC_INO_NONE) {
		dir_children_moved(c, ro->old.op.d);
	}
}

/* What op's name is, with its stripe locked, from one lookup: its positive
 * answer in *pos (ino UDC_INO_NONE: none), and whether it is known not to
 * exist (a current negative, or a miss in a complete directory; returned).
 * A rename's target: it was two lookups, the second only for the absent
 * names a rename mostly goes to (BENCHMARKS.md, issue 16, stop 32). */
static bool name_answer_locked(struct udc_cache *c, const struct name_op *op, struct udc_attr *pos)
{
	lock_assert_held(&op->s->lock);
	bool absent = false;

	rcu_read_lock();
	struct udc_entry *e = entry_find_rcu(c, op->hash, &op->k);
	if (!entry_attr_rcu(c, e, pos, NULL, NULL)) {
		if (e && entry_answers(c, e))
			absent = e->kind == ENT_NEGATIVE;
		else   /* an expired answer: not known (nor by completeness) */
			absent = !(e && entry_current(e)) && dir_complete_rcu(op->d) &&
				 !dir_complete_expired(c, op->d);
	}
	rcu_read_unlock();
	return absent;
}

/* The rename itself: both stripes (and rename_lock) held. */
static void rename_locked(struct udc_cache *c, struct rename_op *ro)
{
	struct name_op *n = &ro->n;
	struct udc_attr target;

	lock_assert_held(&c->rename_lock);
	/*
	 * One snapshot: the new name's generation is read before the old
	 * attr, so that if an invalidation of ndir lands after the attr was
	 * read, the new entry is stale (the rename is ordered before it).
	 */
	uint32_t ngen = dir_gen(n->d);
	unsigned char now_buf[UDC_VALUE_MAX];
	struct value_out now = { .buf = now_buf, .room = sizeof(now_buf) };
	uint32_t now_deadline;
	/* The old name goes first: its answer, value and deadline come from
	 * the lookup that unlinks it (the new name is another key: its
	 * answer below is the same either side of the unlink).  The value
	 * and deadline must be the ones copied into pos before the locks (a
	 * udc_add_value of it in between): else it is not known. */
	ro->old.value = &now;
	ro->old.deadline = &now_deadline;
	op_unlink_locked(c, &ro->old);
	const struct udc_attr *was = &ro->old.was;
	bool known = was->ino != UDC_INO_NONE &&
		     (ro->moved == UDC_INO_NONE || ro->moved == was->ino) &&
		     peek_holds(&ro->peek, &now, now_deadline);
	bool target_absent = name_answer_locked(c, n, &target);
	if (!known)   /* the cached directory is not what moved: it left odir anyway */
		unlinked_dir_leaves(c, &ro->old);
	inflight_mark_stale_locked(c, n->s, n->hash, &n->k);
	if (known) {
		pos_attr_set(entry_pos(ro->pos), was);
		ro->pos->gen = ngen;
		entry_publish_locked(c, ro->pos, n->hash, &n->k, false);
		ro->pos = NULL;
		if (was->type == UDC_TYPE_DIR && !ro->moved_dir)
			ro->moved_dir = dir_find(c, was->ino);
	} else {
		/* The new name exists but its attr is unknown: no longer complete. */
		dir_drop_note(n->d);
		entry_drop_locked(c, n->hash, &n->k);
	}
	rename_dotdot_locked(c, ro, known, was, &target, target_absent);
}

/* Check the arguments and allocate all that the rename may need before
 * anything changes: the negative left behind and the new positive (its
 * attr filled in once the old one is known).  0, 1 (a rename to itself:
 * nothing to do) or -errno.  The old name's op first: its lookup finds
 * the directory through its entry, and peeks the value the new entry
 * copies; the new name's borrows that pin within one directory (no
 * lookup: three lookups of the names before the publish, from four,
 * BENCHMARKS.md, issue 16, stop 38). */
static int rename_op_init(struct rename_op *ro, struct udc_cache *c, udc_ino odir,
			  const char *oname, size_t olen, udc_ino ndir, const char *nname,
			  size_t nlen, udc_ino moved)
{
	/* both names' call checks, then either's "..": the order of errors
	 * udc_rename has always had (tests/fuzz's model checks it) */
	int r = call_check(c, ndir, nname, nlen);

	if (!r)
		r = call_check(c, odir, oname, olen);
	if (r)
		return r;
	if (name_is_dotdot(nname, nlen) || name_is_dotdot(oname, olen))
		return -EINVAL;
	if (odir == ndir && olen == nlen && memcmp(oname, nname, olen) == 0)
		return 1;
	r = unlink_op_setup(&ro->old, c, odir, oname, olen, PIN_MAKE, &ro->peek);
	if (r)
		return r;
	r = name_op_setup(&ro->n, c, ndir, nname, nlen, PIN_MAKE, ro->old.op.d, NULL);
	const struct entry_extra x = {
		.value = ro->peek.buf, .vlen = ro->peek.value.len, .deadline = ro->peek.deadline,
	};
	ro->pos = r ? NULL : pos_alloc(c, &ro->n, NULL, &x);
	if (!ro->pos) {
		if (!r)
			name_op_done(c, &ro->n);
		if (ro->old.neg)
			entry_free_now(c, ro->old.neg);
		name_op_done(c, &ro->old.op);
		return -ENOMEM;
	}
	ro->moved = moved;
	ro->moved_dir = moved != UDC_INO_NONE ? dir_find(c, moved) : NULL;
	return 0;
}

int udc_rename(udc_cache *c, udc_ino odir, const char *oname, size_t olen, udc_ino ndir,
	       const char *nname, size_t nlen, udc_ino moved)
{
	struct rename_op ro;
	int r = rename_op_init(&ro, c, odir, oname, olen, ndir, nname, nlen, moved);

	if (r)
		return r > 0 ? 0 : r;
	udc_mutex_lock(&c->rename_lock);
	ck_sequence_write_begin(&c->rename_seq);
	stripes_lock(ro.old.op.s, ro.n.s);
	rename_locked(c, &ro);
	stripes_unlock(ro.old.op.s, ro.n.s);
	ck_sequence_write_end(&c->rename_seq);
	udc_mutex_unlock(&c->rename_lock);
	if (ro.pos)
		entry_free_now(c, ro.pos);   /* never published */
	name_op_done(c, &ro.n);   /* it may borrow old's pin */
	name_op_done(c, &ro.old.op);
	shrink_after_call(c->shrink);
	return 0;
}

/* One name of an exchange: its op, the entry that will hold the other
 * name's answer under it (made before the locks, with the other's value
 * and deadline as peeked), and what the locks found. */
struct xchg_side {
	struct name_op op;
	struct udc_entry *pos;        /* published under op's name if the other is known */
	struct value_peek peek;       /* this name's value and deadline, peeked by its op */
	struct udc_attr was;          /* this name's answer, under the locks */
	bool known;                   /* cached, and as peeked */
};

/* Under the locks: is s's name cached as positive, with the value and
 * deadline peeked? */
static void xchg_find_locked(struct udc_cache *c, struct xchg_side *s)
{
	unsigned char now_buf[UDC_VALUE_MAX];
	struct value_out now = { .buf = now_buf, .room = sizeof(now_buf) };
	uint32_t now_deadline;

	s->known = cached_attr_locked(c, s->op.hash, &s->op.k, &s->was, &now, &now_deadline) &&
		   peek_holds(&s->peek, &now, now_deadline);
}

/* Under the locks: s's name now holds what @from's held (gen @gen). */
static void xchg_place_locked(struct udc_cache *c, struct xchg_side *s,
			      const struct xchg_side *from, uint32_t gen)
{
	if (from->known) {
		pos_attr_set(entry_pos(s->pos), &from->was);
		s->pos->gen = gen;
		entry_publish_locked(c, s->pos, s->op.hash, &s->op.k, false);
		s->pos = NULL;
	} else {
		/* It exists (an exchange swaps two existing names), its
		 * answer unknown: a fill of the directory fails. */
		dir_drop_note(s->op.d);
		entry_drop_locked(c, s->op.hash, &s->op.k);
	}
}

/* Under the locks: the object that was at @from's name is now in @to's
 * directory: its ".." follows it, or, unknown, it may be a directory
 * whose ".." was @from's directory. */
static void xchg_dotdot_locked(struct udc_cache *c, const struct xchg_side *from,
			       const struct xchg_side *to)
{
	if (!from->known) {
		dir_children_moved(c, from->op.d);
	} else if (from->was.type == UDC_TYPE_DIR) {
		struct udc_dir *moved = dir_find(c, from->was.ino);
		if (moved) {
			dir_parent_move(c, moved, to->op.d);
			dir_put(c, moved);
		}
	}
}

int udc_exchange(udc_cache *c, udc_ino adir, const char *aname, size_t alen, udc_ino bdir,
		 const char *bname, size_t blen)
{
	struct xchg_side a, b;
	int r = name_op_check(c, adir, aname, alen);

	if (!r)
		r = name_op_check(c, bdir, bname, blen);
	if (r)
		return r;
	if (adir == bdir && alen == blen && memcmp(aname, bname, alen) == 0)
		return 0;
	/* each op's lookup peeks its value: a's finds its directory too, and
	 * b's borrows it within one directory */
	r = name_op_setup(&a.op, c, adir, aname, alen, PIN_MAKE, NULL, &a.peek);
	if (r)
		return r;
	r = name_op_setup(&b.op, c, bdir, bname, blen, PIN_MAKE, a.op.d, &b.peek);
	/* a's name gets b's answer, b's name a's: each copy made now */
	const struct entry_extra xa = {
		.value = b.peek.buf, .vlen = b.peek.value.len, .deadline = b.peek.deadline,
	};
	const struct entry_extra xb = {
		.value = a.peek.buf, .vlen = a.peek.value.len, .deadline = a.peek.deadline,
	};
	a.pos = r ? NULL : pos_alloc(c, &a.op, NULL, &xa);
	b.pos = a.pos ? pos_alloc(c, &b.op, NULL, &xb) : NULL;
	if (!b.pos) {
		if (a.pos)
			entry_free_now(c, a.pos);
		if (!r)
			name_op_done(c, &b.op);
		name_op_done(c, &a.op);
		return -ENOMEM;
	}

	udc_mutex_lock(&c->rename_lock);
	ck_sequence_write_begin(&c->rename_seq);
	stripes_lock(a.op.s, b.op.s);
	/* the generations before the answers, as rename_locked */
	uint32_t agen = dir_gen(a.op.d), bgen = dir_gen(b.op.d);
	xchg_find_locked(c, &a);
	xchg_find_locked(c, &b);
	inflight_mark_stale_locked(c, a.op.s, a.op.hash, &a.op.k);
	inflight_mark_stale_locked(c, b.op.s, b.op.hash, &b.op.k);
	xchg_place_locked(c, &a, &b, agen);
	xchg_place_locked(c, &b, &a, bgen);
	xchg_dotdot_locked(c, &a, &b);
	xchg_dotdot_locked(c, &b, &a);
	stripes_unlock(a.op.s, b.op.s);
	ck_sequence_write_end(&c->rename_seq);
	udc_mutex_unlock(&c->rename_lock);

	if (a.pos)
		entry_free_now(c, a.pos);   /* never published */
	if (b.pos)
		entry_free_now(c, b.pos);
	name_op_done(c, &b.op);   /* it may borrow a's pin */
	name_op_done(c, &a.op);
	shrink_after_call(c->shrink);
	return 0;
}
