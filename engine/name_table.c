/* SPDX-License-Identifier: MIT */
/*
 * engine/name_table.c - the name table's writers and its resize
 * (engine/name_table.h; its lookup is inline there).
 *
 * Owns: the bucket arrays of c->names (struct name_array), their
 * allocation (the slab pages' arena: freed memory leaves RSS at once) and
 * the links of every chain (struct name_node, in each entry).
 *
 * Why not rculfhash: every change of a name already holds its stripe lock
 * (engine/mutate.c), so a lock-free table paid for a freedom nobody used:
 * a CAS on every link change, two on a delete (flag, then unlink), and
 * an insert's walk of its bucket to its place in the split order, a cache
 * miss a node (30% of the `mixed` workload's writer; BENCHMARKS.md, issue
 * 16, stop 33), where the kernel's dcache pushes onto its chain's head.
 * An insert here must still find the name's entry to replace it; the
 * bucket's summary (name_table.h) spares it the walk when none can be.
 * Here a stripe is the hash's low bits and every array has at least as
 * many buckets as there are stripes, so all the names of a bucket, in the
 * array in use and in the one a resize moves them to, share one stripe:
 * its holder owns the chain.  A link change is a release store, an insert
 * a push on the head, and a lookup reads an array and a chain with acquire
 * loads (plain ones on x86; no indirect bucket_at, no reversed-hash
 * order).
 *
 * The resize (a relativistic one, as the kernel's rhashtable): allocate
 * the new array, link it as the old one's future, then, bucket by bucket,
 * under its stripe, move each old chain's nodes to the new array, tail
 * first; then make the new array the table's, wait a grace period, free
 * the old one.  While the
 * future is linked, inserts go to it, and a lookup that misses in the old
 * array looks in the future one.
 *
 * Locking:
 *   Writers (_locked) hold the stripe of the hash they change, and
 *   rcu_read_lock (the array they read may be a resize's old one).
 *   name_table_resize holds t->resizing throughout (so that a walk of
 *   every node, engine_check's, can hold resizes off: name_table_hold)
 *   and takes each bucket's stripe in turn, for that bucket's moves;
 *   callers serialise resizes anyway (shrink's resize_lock) and hold no
 *   stripe.  Order: resize_lock, resizing, a stripe.
 *
 * Ordering (the loads' side: name_table.h):
 *   Every store that links a node is a release (name_link_publish), paired
 *   with the acquire loads of the chains: a reader that finds a node sees
 *   its fields and the entry's, written before.  A delete or a replace
 *   leaves the unlinked node's next as it was, so a reader standing on it
 *   goes on along the chain; the node is freed after a grace period.
 *   A move: the tail node's next is set to the future bucket's head, the
 *   node is pushed there (release), then its predecessor's link in the old
 *   chain is cleared (release).  A reader standing on it meanwhile walks
 *   into the future chain (more nodes to compare, none missed: it was the
 *   last of its old chain).  A reader that reads the cleared link (acquire)
 *   then reads the old array's future (acquire, linked with a release
 *   before the first move) and that bucket, and sees the node there.
 *   A writer decides between the arrays under its stripe: the future link
 *   is published before the resize takes any stripe, so a writer that
 *   took the stripe after the resize held it sees the future; one that
 *   saw none wrote into the old array before the resize took the stripe,
 *   and the resize moves what it wrote.
 *   A bucket's word (its first node and its chain's summary, name_table.h)
 *   changes by one release store, and its summary holds the bit of every
 *   node in the chain the word points to: an insert adds its bit (and
 *   makes the rest exact when it walked the chain whole), a replace keeps
 *   it (same hash), a removal keeps every bit (clears them when the chain
 *   empties), a move adds the node's bit to its new bucket.  A lookup that
 *   reads a word without its bit found no node of its hash in that chain
 *   as it was at that store: the miss is linearised there.
 *   The switch (the table's array set to the new one, release) comes after
 *   every move; the old array, whose future stays set, is freed after a
 *   grace period, so a caller that read it before the switch is still
 *   sent to the new one.  Resizes are serialised and each ends with that
 *   grace period: no reader holds an array two resizes old.
 */
#include "engine/internal.h"

#include <errno.h>

/* How many buckets ahead of its moves a resize prefetches a chain's first
 * node: its buckets are read in order (the hardware prefetches them), its
 * nodes are anywhere (a miss each, which these overlap). */
#define RESIZE_PREFETCH_AHEAD 8

size_t name_array_bytes(size_t buckets)
{
	return sizeof(struct name_array) + buckets * sizeof(name_bucket);
}

static struct name_array *name_array_new(size_t buckets)
{
	struct name_array *a = slab_arena_zalloc(name_array_bytes(buckets));

	if (a)
		a->mask = buckets - 1;
	return a;
}

int name_table_init(struct name_table *t, size_t buckets)
{
	struct name_array *a = name_array_new(buckets);

	if (!a)
		return -ENOMEM;
	atomic_init(&t->cur, a);
	udc_mutex_init(&t->resizing);
	return 0;
}

void name_table_fini(struct name_table *t)
{
	/* relaxed: alone */
	struct name_array *a = atomic_load_explicit(&t->cur, memory_order_relaxed);

	udc_assert(!atomic_load_explicit(&a->future, memory_order_relaxed));
	slab_arena_free(a);
	atomic_store_explicit(&t->cur, NULL, memory_order_relaxed);
	udc_mutex_destroy(&t->resizing);
}

void name_table_hold(struct name_table *t)
{
	udc_mutex_lock(&t->resizing);
}

void name_table_release(struct name_table *t)
{
	udc_mutex_unlock(&t->resizing);
}

/* Store @n in @link, a node's next: the publication of a chain's
 * nodes.  release: pairs with name_chain_next's acquire. */
static void name_link_publish(struct name_node *_Atomic *link, struct name_node *n)
{
	atomic_store_explicit(link, n, memory_order_release);
}

/* Store @v (a first node and a summary) in @bk.  release: pairs with
 * name_chain_first's acquire. */
static void name_bucket_publish(name_bucket *bk, uint64_t v)
{
	atomic_store_explicit(bk, v, memory_order_release);
}

/* Where a chain points at a node: its bucket (next NULL), or the previous
 * node's next. */
struct name_link {
	name_bucket *bucket;
	struct name_node *_Atomic *next;
};

/* Point @l at @n (NULL: the chain ends there).  A bucket keeps its summary
 * (a superset is right), but an empty chain's is cleared. */
static void name_link_set(struct name_link l, struct name_node *n)
{
	if (l.next) {
		name_link_publish(l.next, n);
		return;
	}
	/* relaxed (here and in every load of a chain below): the stripe we
	 * hold orders every store to this chain */
	uint64_t v = atomic_load_explicit(l.bucket, memory_order_relaxed);
	name_bucket_publish(l.bucket, n ? (uintptr_t)n | (v & ~NAME_PTR_MASK) : 0);
}

static struct name_node *name_next_locked(struct name_node *n)
{
	return atomic_load_explicit(&n->next, memory_order_relaxed);   /* relaxed: see above */
}

/* The link that points at @node (in the array in use or its future):
 * false if none does.  Stripe and rcu_read_lock held. */
static bool name_link_of(struct name_table *t, struct name_node *node, struct name_link *out)
{
	/* acquire: as name_table_find_rcu (another stripe's resize switch) */
	for (struct name_array *a = atomic_load_explicit(&t->cur, memory_order_acquire); a;
	     a = name_array_future(a)) {
		struct name_link l = { .bucket = &a->b[node->hash & a->mask] };
		uint64_t v = atomic_load_explicit(l.bucket, memory_order_relaxed);
		for (struct name_node *n = name_bucket_node(v); n; n = name_next_locked(n)) {
			if (n == node) {
				*out = l;
				return true;
			}
			l = (struct name_link){ .next = &n->next };
		}
	}
	return false;
}

struct name_node *name_table_add_replace_locked(struct name_table *t, struct name_node *node,
						uint64_t hash, name_match_fn *match,
						const void *key)
{
	struct name_array *last = NULL;
	uint64_t hint = name_hint(hash), exact = 0;
	bool walked = false;

	udc_assert(name_node_linkable(node));
	node->hash = hash;
	/* acquire: as name_table_find_rcu */
	for (struct name_array *a = atomic_load_explicit(&t->cur, memory_order_acquire); a;
	     a = name_array_future(a)) {
		struct name_link l = { .bucket = &a->b[hash & a->mask] };
		uint64_t v = atomic_load_explicit(l.bucket, memory_order_relaxed);
		last = a;
		walked = v & hint;   /* else no node of the chain has our bit: none is ours */
		exact = 0;
		for (struct name_node *n = walked ? name_bucket_node(v) : NULL; n;
		     n = name_next_locked(n)) {
			if (n->hash == hash && match(n, key)) {
				atomic_store_explicit(&node->next, name_next_locked(n),
						      memory_order_relaxed);
				name_link_set(l, node);
				return n;
			}
			exact |= name_hint(n->hash);
			l = (struct name_link){ .next = &n->next };
		}
	}
	/* A new name: on the head of its chain in the newest array, whose
	 * summary is made exact again if its chain was walked whole. */
	name_bucket *bk = &last->b[hash & last->mask];
	uint64_t v = atomic_load_explicit(bk, memory_order_relaxed);
	atomic_store_explicit(&node->next, name_bucket_node(v), memory_order_relaxed);
	name_bucket_publish(bk, (uintptr_t)node | (walked ? exact : v & ~NAME_PTR_MASK) | hint);
	return NULL;
}

bool name_table_del_locked(struct name_table *t, struct name_node *node)
{
	struct name_link l;

	if (!name_link_of(t, node, &l))
		return false;
	/* node->next stays: a reader on node goes on along the chain */
	name_link_set(l, name_next_locked(node));
	return true;
}

void name_table_replace_locked(struct name_table *t, struct name_node *old, struct name_node *node)
{
	struct name_link l;
	bool found = name_link_of(t, old, &l);

	udc_assert(found && name_node_linkable(node));   /* the stripe keeps old in the table */
	(void)found;
	node->hash = old->hash;   /* the same summary bit */
	atomic_store_explicit(&node->next, name_next_locked(old), memory_order_relaxed);
	name_link_set(l, node);
}

/* Move the nodes of @from's bucket @i to @to, tail first; its stripe held. */
static void bucket_move_locked(struct name_array *from, size_t i, struct name_array *to)
{
	struct name_node *n;

	while ((n = name_bucket_node(atomic_load_explicit(&from->b[i], memory_order_relaxed)))) {
		struct name_link l = { .bucket = &from->b[i] };
		struct name_node *next;
		/* the tail, and the link that points at it */
		while ((next = name_next_locked(n)) != NULL) {
			l = (struct name_link){ .next = &n->next };
			n = next;
		}
		name_bucket *head = &to->b[n->hash & to->mask];
		uint64_t v = atomic_load_explicit(head, memory_order_relaxed);
		/* release: n's readers that walk on into the future chain see its nodes */
		atomic_store_explicit(&n->next, name_bucket_node(v), memory_order_release);
		name_bucket_publish(head, (uintptr_t)n | (v & ~NAME_PTR_MASK) | name_hint(n->hash));
		/* after the push (release): see Ordering, a move */
		name_link_set(l, NULL);
	}
}

static bool name_table_resize_held(struct udc_cache *c, size_t buckets);

bool name_table_resize(struct udc_cache *c, size_t buckets)
{
	name_table_hold(&c->names);
	bool done = name_table_resize_held(c, buckets);
	name_table_release(&c->names);
	return done;
}

static bool name_table_resize_held(struct udc_cache *c, size_t buckets)
{
	struct name_table *t = &c->names;
	lock_assert_held(&t->resizing);
	/* relaxed: resizes are serialised (t->resizing), the only writers */
	struct name_array *old = atomic_load_explicit(&t->cur, memory_order_relaxed);
	udc_assert(buckets > c->stripe_mask && (buckets & (buckets - 1)) == 0);
	/* relaxed: as old; a resize that stopped half way would be lost by
	 * a second one (none can: resizes run to their end, and a fork
	 * stops the threads that run them first: engine/fork.c) */
	udc_assert(!atomic_load_explicit(&old->future, memory_order_relaxed));
	if (buckets == old->mask + 1)
		return true;
	struct name_array *to = name_array_new(buckets);
	if (!to)
		return false;
	/* release: pairs with name_array_future (readers, and writers under
	 * the stripes taken below) */
	atomic_store_explicit(&old->future, to, memory_order_release);
	/* In bucket order, a stripe a bucket: one lock and unlock a bucket
	 * (about 12 ns) where its chain's misses are 100 ns each, and a
	 * writer waits for one bucket's moves at most. */
	for (size_t i = 0; i <= old->mask; i++) {
		if (i + RESIZE_PREFETCH_AHEAD <= old->mask)
			/* relaxed, unlocked: only an address to prefetch (a
			 * prefetch of a node freed since cannot fault) */
			__builtin_prefetch(name_bucket_node(atomic_load_explicit(
				&old->b[i + RESIZE_PREFETCH_AHEAD], memory_order_relaxed)));
		struct stripe *st = &c->stripes[i & c->stripe_mask];
#if UDC_DEBUG
		udc_assert(!lock_held(&st->lock));   /* callers hold no stripe */
#endif
		udc_mutex_lock(&st->lock);
		bucket_move_locked(old, i, to);
		udc_mutex_unlock(&st->lock);
	}
	/* release: pairs with the acquire of t->cur in every lookup (the
	 * new array's chains, complete now) */
	atomic_store_explicit(&t->cur, to, memory_order_release);
	synchronize_rcu();   /* nobody reads old now */
	slab_arena_free(old);
	return true;
}

size_t name_table_check(struct name_table *t)
{
	size_t bad = 0;

	/* relaxed: nothing runs beside us (the caller's rule) */
	for (struct name_array *a = atomic_load_explicit(&t->cur, memory_order_relaxed); a;
	     a = atomic_load_explicit(&a->future, memory_order_relaxed))
		for (size_t i = 0; i <= a->mask; i++) {
			uint64_t v = atomic_load_explicit(&a->b[i], memory_order_relaxed);
			for (struct name_node *n = name_bucket_node(v); n; n = name_next_locked(n))
				bad += (n->hash & a->mask) != i || !(v & name_hint(n->hash));
		}
	return bad;
}

void name_table_memory(struct name_table *t,
		       void (*fn)(void *arg, const char *what, void *p, size_t len), void *arg)
{
	/* relaxed: no resize runs (the caller's rule) */
	struct name_array *a = atomic_load_explicit(&t->cur, memory_order_relaxed);

	fn(arg, "name table array", a, name_array_bytes(a->mask + 1));
}
