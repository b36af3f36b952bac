/* SPDX-License-Identifier: MIT */
/*
 * engine/name_table.h - the name table: entries by the 64-bit hash of
 * (directory ino, name), in RCU chains whose writers the stripes serialise
 * (engine/name_table.c says how, and why not rculfhash).
 *
 * Readers (the _rcu calls) hold rcu_read_lock.  Writers (the _locked
 * calls) hold the stripe of the hash they change (stripe_of: the hash's
 * low bits, so a bucket's names share one stripe at every table size) and
 * rcu_read_lock.  name_table_resize takes the stripes itself.
 */
#ifndef UDC_ENGINE_NAME_TABLE_H
#define UDC_ENGINE_NAME_TABLE_H

#include <stdatomic.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "common/lock.h"

/* A node of a chain: in struct udc_entry (16 bytes, as rculfhash's was). */
struct name_node {
	struct name_node *_Atomic next;
	uint64_t hash;                    /* written before the node is linked, then fixed */
};

/*
 * A bucket: its chain's first node in the low NAME_PTR_BITS bits, and in
 * the 16 above them a summary of the chain: bit (hash >> 60) of every
 * node's hash is set (and maybe others: a removal leaves its bit, an
 * insert that walks the whole chain sets the exact ones again, an empty
 * chain has none).  A lookup or an insert of a name whose bit is clear
 * skips the chain: a new name's insert and an absent name's lookup walk
 * it 1 time in 16 per node, where every node was a cache miss (the
 * `mixed` workload's inserts, BENCHMARKS.md, issue 16, stop 34).  Nodes
 * live in slab pages below 2^NAME_PTR_BITS (x86-64 and arm64 Linux map no
 * higher address unless asked with a hint: engine/alloc.c refuses a slot
 * above, which cannot happen there).
 */
#define NAME_PTR_BITS 48
#define NAME_PTR_MASK ((UINT64_C(1) << NAME_PTR_BITS) - 1)
typedef _Atomic uint64_t name_bucket;

/* The summary bit of @hash. */
static inline uint64_t name_hint(uint64_t hash)
{
	return UINT64_C(1) << (NAME_PTR_BITS + (hash >> 60));
}

/* The first node of a bucket's value. */
static inline struct name_node *name_bucket_node(uint64_t v)
{
	return (struct name_node *)(uintptr_t)(v & NAME_PTR_MASK);
}

/* Can @node be linked (its address below 2^NAME_PTR_BITS)? */
static inline bool name_node_linkable(const void *node)
{
	return ((uintptr_t)node >> NAME_PTR_BITS) == 0;
}

/* One bucket array.  A resize links the next one as future and moves the
 * nodes to it; until it is the table's, lookups that miss here look there. */
struct name_array {
	size_t mask;                      /* buckets - 1 */
	struct name_array *_Atomic future;
	name_bucket b[];
};

struct name_table {
	struct name_array *_Atomic cur;
	struct udc_mutex resizing;        /* held through a resize (name_table_hold) */
};

/* Does node (of hash) hold key?  Given inline by the caller. */
typedef bool name_match_fn(const struct name_node *node, const void *key);

/* The first node of @a's bucket for @hash, or NULL if the bucket's
 * summary rules @hash out.  acquire: pairs with the release stores that
 * link a node (name_link_publish, name_bucket_publish): its fields, and
 * what its writer did before, are seen. */
static inline struct name_node *name_chain_first(struct name_array *a, uint64_t hash)
{
	uint64_t v = atomic_load_explicit(&a->b[hash & a->mask], memory_order_acquire);

	return v & name_hint(hash) ? name_bucket_node(v) : NULL;
}

static inline struct name_node *name_chain_next(struct name_node *n)
{
	/* acquire: pairs with name_link_publish, as name_chain_first */
	return atomic_load_explicit(&n->next, memory_order_acquire);
}

/* The array a resize moves @a's nodes to, or NULL.  acquire: pairs with
 * the release in name_table_resize's future link, and read after the
 * chain, so a node a resize took out of @a's chain (a release after it
 * was linked in the future's) is found there. */
static inline struct name_array *name_array_future(struct name_array *a)
{
	return atomic_load_explicit(&a->future, memory_order_acquire);
}

/* The node holding @key, or NULL; rcu_read_lock held (a stripe alone is
 * not enough: a resize frees the old array after a grace period). */
static inline __attribute__((always_inline)) struct name_node *
name_table_find_rcu(struct name_table *t, uint64_t hash, name_match_fn *match, const void *key)
{
	/* acquire: pairs with the release in name_table_resize's switch */
	struct name_array *a = atomic_load_explicit(&t->cur, memory_order_acquire);

	do {
		for (struct name_node *n = name_chain_first(a, hash); n; n = name_chain_next(n))
			if (n->hash == hash && match(n, key))
				return n;
		a = name_array_future(a);
	} while (__builtin_expect(a != NULL, 0));
	return NULL;
}

/* A table of @buckets (a power of two) buckets: 0 or -ENOMEM. */
int name_table_init(struct name_table *t, size_t buckets);
/* Free the arrays (the nodes are the caller's): alone, no reader left. */
void name_table_fini(struct name_table *t);

/* Link @node (its key: @key, of @hash) in place of the node holding the
 * same key, returned (the caller frees it after a grace period), or as a
 * new one (NULL returned).  Stripe of @hash held, rcu_read_lock held. */
struct name_node *name_table_add_replace_locked(struct name_table *t, struct name_node *node,
						uint64_t hash, name_match_fn *match,
						const void *key);
/* Take @node out of the table: false if it is not in it.  Stripe of its
 * hash held, rcu_read_lock held. */
bool name_table_del_locked(struct name_table *t, struct name_node *node);
/* Put @node (same hash and key) where @old is: old must be in the table.
 * Stripe held, rcu_read_lock held. */
void name_table_replace_locked(struct name_table *t, struct name_node *old,
			       struct name_node *node);

/* Hold off resizes (a walk of every node would see a moving one twice, or
 * miss it), and let them go.  Taken before any stripe; not with one held. */
void name_table_hold(struct name_table *t);
void name_table_release(struct name_table *t);

/* Visit every node, rcu_read_lock held, no resize running (name_table_hold,
 * or alone). */
#define name_table_for_each(t, a, n)                                                        \
	for ((a) = atomic_load_explicit(&(t)->cur, memory_order_acquire); (a);              \
	     (a) = name_array_future(a))                                                     \
		for (size_t name_i_ = 0; name_i_ <= (a)->mask; name_i_++)                    \
			for ((n) = name_bucket_node(atomic_load_explicit(&(a)->b[name_i_],       \
									 memory_order_acquire)); \
			     (n); (n) = name_chain_next(n))

struct udc_cache;
/* Resize @c's name table to @buckets (a power of two, at least its
 * stripes): false, and nothing done, when the array cannot be allocated.
 * Callers serialise resizes; no stripe held, outside rcu_read_lock (it
 * takes each stripe in turn, and waits a grace period). */
bool name_table_resize(struct udc_cache *c, size_t buckets);

/* The bytes of an array of @buckets buckets (for bytes_used). */
size_t name_array_bytes(size_t buckets);

/* The validator's part (engine_check): the nodes in a chain not of their
 * bucket's hash, or whose bit the bucket's summary lacks.  No writer may
 * run, nor a resize (name_table_hold); rcu_read_lock held. */
size_t name_table_check(struct name_table *t);

/* For tests: call @fn on the current array (lookups write none of it).
 * No resize may run. */
void name_table_memory(struct name_table *t,
		       void (*fn)(void *arg, const char *what, void *p, size_t len), void *arg);

#endif
