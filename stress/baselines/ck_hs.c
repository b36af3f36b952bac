/* SPDX-License-Identifier: MIT */
/*
 * stress/baselines/ck_hs.c - impl_ck_hs: Concurrency Kit's ck_hs, the second lookup ceiling.
 *
 * Owns: one ck_hs open-addressing set (CK_HS_MODE_SPMC | CK_HS_MODE_OBJECT)
 * of pointers to entries, each (dir, a copy of the name) and a positive
 * attr (copied whole) or, with attr.ino == UDC_INO_NONE, the negative
 * answer; the single writer lock; the counters.  No eviction, no memory
 * bound (memory_limit is ignored), no per-directory index.  Lookups are
 * lock-free (ck_hs_get inside an RCU read section); every mutation, and a
 * resolve's insert, takes the one writer lock, as ck_hs's SPMC mode
 * requires (a single writer at a time).
 *
 * Memory reclamation is liburcu's (urcu-memb): an entry removed or
 * replaced is freed by call_rcu after a grace period, and so is every
 * array ck_hs replaces when it grows or is rebuilt: ck_hs asks its
 * struct ck_malloc to free the old array with defer = true, since SPMC
 * readers may still probe it.  ck_malloc's callbacks take no context, so
 * the allocating cache is passed to ckh_array_malloc() in a thread-local
 * (ckh_allocating), set while the writer lock is held (and during
 * ck_hs_init); each array carries a header with its size, its cache's
 * counter and the rcu_head its deferred free uses.
 *
 * ck_hs leaves a tombstone for every removal and reuses tombstones for
 * inserts but never clears them; when the removals since the array was
 * made outnumber the entries by REBUILD_SLACK, the array is rebuilt
 * (ck_hs_rebuild(): a fresh array of the same capacity, readers move over
 * as for a grow).  rmdir and invalidate_dir have no index to go by: they
 * iterate the whole set under the writer lock, O(entries in the cache).
 *
 * Threads are registered with urcu-memb on their first call here
 * (bl_rcu_enter()) and unregistered when they exit.
 *
 * Locking:
 *   lock (the writer lock, a pthread mutex) serialises every ck_hs update
 *   (ck_hs_set, ck_hs_remove, grows and rebuilds inside them), the guard's
 *   changes and checks, and protects nr_positive and nr_negative.  It is
 *   both the names' lock and the directory-wide one of the shared calls
 *   (struct bl_ops: lock NULL, dir_lock writer_lock).  Never held across a
 *   backend call.  ckh_allocating is
 *   thread-local, set only by the holder of lock.
 *   Lookups take no lock: an RCU read section only.
 *
 * Ordering:
 *   ckh_entry_publish_locked()'s release fence orders an entry's fields before
 *   ck_hs_set's plain store of its pointer; it pairs with the address
 *   dependency in ck_hs_get (a reader loads the slot and then reads the
 *   entry through it), so a reader that finds an entry sees its fields.
 *   ck_hs orders its own array publication (ck_pr_fence_store before the
 *   new map pointer) and makes probes that race with a moved entry retry
 *   (per-bucket generations).
 *   call_rcu frees an entry or array only after every read section that
 *   may hold it has ended.
 *   The resolve counters (struct bl_head's) are relaxed: statistics.
 *
 * Limitations:
 *   The array never shrinks (ck_hs has no shrink; a rebuild keeps the
 *   capacity), so after mass removals (rmdir of a large directory) a
 *   rebuild costs the old capacity.  Without pointer packing (Debian's ck
 *   is built with CK_MD_POINTER_PACK_DISABLE) every probe dereferences the
 *   entry it passes, to compare.  ".." is a name like any other (walks
 *   handle it, see bl_walk()).
 */
#include "stress/baselines/common.h"

#define _LGPL_SOURCE /* inline read-side fast paths, as udcache */
#include <urcu/urcu-memb.h>

#include <ck_hs.h>

#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define INIT_CAPACITY 4096 /* slots ck_hs starts with */
#define REBUILD_SLACK 4096 /* removals past the entry count that trigger a rebuild */
#define CACHELINE 64

/* What ck_hs hashes and compares: the head of every entry, and a lookup's key. */
struct ckh_key {
	unsigned long hash;
	udc_ino dir;
	const char *name; /* an entry's points at its own copy */
	size_t len;
};

struct ckh_entry {
	/* read by lookups */
	struct ckh_key key;   /* first: ck_hs's callbacks see entries as keys */
	struct udc_attr attr; /* ino UDC_INO_NONE: the name does not exist */
	/* for the free after a grace period */
	struct bl_mem *mem;
	struct rcu_head rcu;
	char name[];
};

/* What precedes each array ck_hs allocates. */
struct ckh_block {
	struct rcu_head rcu; /* its deferred free */
	struct bl_mem *mem;
	size_t size; /* header included */
	max_align_t data[];
};

struct ckh_cache {
	struct bl_head bl; /* first: the shared calls' (common.h) */
	/* read by lookups; hs's map pointer changes under lock, the rest is read-only */
	_Alignas(CACHELINE) struct ck_hs hs;
	uint64_t key[2];
	/* writers */
	_Alignas(CACHELINE) pthread_mutex_t lock;
	uint64_t nr_positive, nr_negative; /* protected by lock */
	struct bl_mem mem;
};

/* The cache whose writer lock this thread holds, for ck_hs's allocations. */
static __thread struct ckh_cache *ckh_allocating;

/* ---------------------------------------------------------------------- */
/* ck_hs's callbacks */

static unsigned long ckh_hash(const void *obj, unsigned long seed)
{
	(void)seed; /* the hash is bl_hash()'s, made once per key */
	return ((const struct ckh_key *)obj)->hash;
}

/* Called by ck_hs for each entry a probe passes: under the lock or rcu_read_lock. */
static bool ckh_compare_rcu(const void *a, const void *b)
{
	const struct ckh_key *x = a, *y = b;

	return x->hash == y->hash && x->dir == y->dir && x->len == y->len &&
	       memcmp(x->name, y->name, x->len) == 0;
}

static void *ckh_array_malloc(size_t size)
{
	struct ckh_cache *c = ckh_allocating;

	if (!c) {
		fprintf(stderr, "%s:%d: ck_hs allocated outside the writer lock\n", __FILE__,
			__LINE__);
		abort();
	}
	size_t bytes = sizeof(struct ckh_block) + size;
	struct ckh_block *b = bl_alloc(&c->mem, bytes); /* zeroed: ck_hs counts on it */
	if (!b)
		return NULL;
	b->mem = &c->mem;
	b->size = bytes;
	return b->data;
}

static struct ckh_block *block_of(void *p)
{
	return (struct ckh_block *)((char *)p - offsetof(struct ckh_block, data));
}

static void ckh_array_free_rcu(struct rcu_head *head)
{
	struct ckh_block *b = caa_container_of(head, struct ckh_block, rcu);

	bl_free(b->mem, b, b->size);
}

/* defer: readers may still probe the array (a grow or rebuild replaced it). */
static void ckh_array_free(void *p, size_t size, bool defer)
{
	struct ckh_block *b = block_of(p);

	(void)size; /* b->size has it, header included */
	if (defer)
		urcu_memb_call_rcu(&b->rcu, ckh_array_free_rcu);
	else
		bl_free(b->mem, b, b->size);
}

/* ck_hs never reallocates an array. */
static struct ck_malloc ckh_allocator = {
	.malloc = ckh_array_malloc,
	.free = ckh_array_free,
};

/* ---------------------------------------------------------------------- */
/* Entries */

static void writer_lock(void *cp)
{
	struct ckh_cache *c = cp;

	pthread_mutex_lock(&c->lock);
	ckh_allocating = c;
}

static void writer_unlock(void *cp)
{
	struct ckh_cache *c = cp;

	ckh_allocating = NULL;
	pthread_mutex_unlock(&c->lock);
}

static size_t ckh_entry_size(size_t len)
{
	return sizeof(struct ckh_entry) + len;
}

static struct ckh_key key_of(const struct ckh_cache *c, udc_ino dir, const char *name, size_t len)
{
	return (struct ckh_key){
		.hash = bl_hash(c->key, dir, name, len),
		.dir = dir,
		.name = name,
		.len = len,
	};
}

/* A new entry for k (attr NULL: negative), not in the set; NULL on ENOMEM. */
static struct ckh_entry *ckh_entry_alloc(struct ckh_cache *c, const struct ckh_key *k,
				     const struct udc_attr *attr)
{
	struct ckh_entry *e = bl_alloc(&c->mem, ckh_entry_size(k->len));

	if (!e)
		return NULL;
	memcpy(e->name, k->name, k->len);
	e->key = *k;
	e->key.name = e->name;
	if (attr)
		e->attr = *attr; /* calloc'd: else ino UDC_INO_NONE, negative */
	e->mem = &c->mem;
	return e;
}

/* Free an entry no reader can reach (never in the set, or destroy), or NULL. */
static void ckh_entry_free(void *cp, void *ep)
{
	struct ckh_cache *c = cp;
	struct ckh_entry *e = ep;

	if (e)
		bl_free(&c->mem, e, ckh_entry_size(e->key.len));
}

static void ckh_entry_free_rcu(struct rcu_head *head)
{
	struct ckh_entry *e = caa_container_of(head, struct ckh_entry, rcu);

	bl_free(e->mem, e, ckh_entry_size(e->key.len));
}

/* e is in the set (delta 1) or was just taken out of it (-1).  Locked. */
static void entry_count_locked(struct ckh_cache *c, const struct ckh_entry *e, int delta)
{
	uint64_t *n = e->attr.ino == UDC_INO_NONE ? &c->nr_negative : &c->nr_positive;

	*n += (uint64_t)delta; /* modulo 2^64: -1 subtracts one */
}

/* e was just taken out of the set: uncount, free after a grace period.  Locked. */
static void entry_retire_locked(struct ckh_cache *c, struct ckh_entry *e)
{
	entry_count_locked(c, e, -1);
	urcu_memb_call_rcu(&e->rcu, ckh_entry_free_rcu);
}

/* UDC_POSITIVE (copied to *out, which may be NULL), UDC_NEGATIVE or UDC_MISS. */
static int ckh_lookup_name(struct ckh_cache *c, const struct ckh_key *k, struct udc_attr *out)
{
	int r = UDC_MISS;

	urcu_memb_read_lock();
	const struct ckh_entry *e = ck_hs_get(&c->hs, k->hash, k);
	if (e) {
		if (e->attr.ino == UDC_INO_NONE) {
			r = UDC_NEGATIVE;
		} else {
			r = UDC_POSITIVE;
			if (out)
				*out = e->attr;
		}
	}
	urcu_memb_read_unlock();
	return r;
}

/* Put e in the set, replacing what was there; false (e not in it) on ENOMEM.  Locked. */
static bool ckh_entry_publish_locked(struct ckh_cache *c, struct ckh_entry *e)
{
	void *prev;

	/* release fence: e's fields before ck_hs_set's plain pointer store (see Ordering) */
	atomic_thread_fence(memory_order_release);
	if (!ck_hs_set(&c->hs, e->key.hash, e, &prev))
		return false;
	entry_count_locked(c, e, 1);
	if (prev)
		entry_retire_locked(c, prev);
	return true;
}

/* Rebuild the array once removals' tombstones outnumber the entries.  Locked. */
static void tombstones_check_locked(struct ckh_cache *c)
{
	struct ck_hs_stat st;

	ck_hs_stat(&c->hs, &st);
	if (st.tombstones > st.n_entries + REBUILD_SLACK)
		ck_hs_rebuild(&c->hs); /* out of memory: the old array stays, slower */
}

/* Drop what is cached for k; *was (may be NULL) gets a dropped positive's attr,
 * ino UDC_INO_NONE if there was none.  Locked. */
static void ckh_entry_drop_locked(struct ckh_cache *c, const struct ckh_key *k, struct udc_attr *was)
{
	struct ckh_entry *e = ck_hs_remove(&c->hs, k->hash, k);

	if (was)
		*was = e ? e->attr : (struct udc_attr){ .ino = UDC_INO_NONE };
	if (!e)
		return;
	entry_retire_locked(c, e);
	tombstones_check_locked(c);
}

/* Drop every entry of directory dir: O(entries in the cache).  Locked. */
static void ckh_dir_forget(void *cp, udc_ino dir)
{
	struct ckh_cache *c = cp;
	struct ck_hs_iterator it = CK_HS_ITERATOR_INITIALIZER;
	void *obj;

	/* ck_hs_remove only turns slots into tombstones: the iteration goes on safely. */
	while (ck_hs_next(&c->hs, &it, &obj)) {
		struct ckh_entry *e = obj;
		if (e->key.dir == dir && ck_hs_remove(&c->hs, e->key.hash, &e->key))
			entry_retire_locked(c, e);
	}
	tombstones_check_locked(c);
}

/* ---------------------------------------------------------------------- */
/* The shared calls' hooks (struct bl_ops) */

static void *ckh_entry_new(void *cp, uint64_t hash, udc_ino dir, const char *name, size_t len,
			   const struct udc_attr *attr)
{
	struct ckh_key k = { .hash = hash, .dir = dir, .name = name, .len = len };

	return ckh_entry_alloc(cp, &k, attr);
}

static int ckh_publish_locked(void *cp, uint64_t hash, void **e)
{
	(void)hash; /* the entry's key has it */
	if (!ckh_entry_publish_locked(cp, *e))
		return -ENOMEM;
	*e = NULL;
	return 0;
}

static void ckh_drop_locked(void *cp, uint64_t hash, udc_ino dir, const char *name, size_t len,
			    struct udc_attr *was)
{
	struct ckh_key k = { .hash = hash, .dir = dir, .name = name, .len = len };

	ckh_entry_drop_locked(cp, &k, was);
}

/* The writer lock and the set. */
static int ckh_init(void *cp)
{
	struct ckh_cache *c = cp;

	memcpy(c->key, c->bl.cfg.hash_key, sizeof(c->key));
	pthread_mutex_init(&c->lock, NULL);
	writer_lock(c);
	bool ok = ck_hs_init(&c->hs, CK_HS_MODE_SPMC | CK_HS_MODE_OBJECT, ckh_hash, ckh_compare_rcu,
			     &ckh_allocator, INIT_CAPACITY, 0);
	writer_unlock(c);
	if (ok)
		return 0;
	c->hs.map = NULL;
	return -ENOMEM;
}

static void ckh_fini(void *cp)
{
	struct ckh_cache *c = cp;

	if (c->hs.map) {
		struct ck_hs_iterator it = CK_HS_ITERATOR_INITIALIZER;
		void *obj;

		bl_rcu_enter();
		while (ck_hs_next(&c->hs, &it, &obj))
			ckh_entry_free(c, obj); /* no call runs: no reader holds it */
		ck_hs_destroy(&c->hs);
		urcu_memb_barrier(); /* every deferred free has run: c->mem is done with */
	}
	pthread_mutex_destroy(&c->lock);
}

/* ---------------------------------------------------------------------- */
/* The interface */

/* Inlined into resolve: a resolve's hit costs what a lookup does. */
static inline __attribute__((always_inline)) int ckh_lookup(void *cp, udc_ino dir, const char *name,
							    size_t len, struct udc_attr *out)
{
	struct ckh_cache *c = cp;
	int r = bl_check_rcu(c, dir, name, len);

	if (r)
		return r;
	struct ckh_key k = key_of(c, dir, name, len);
	return ckh_lookup_name(c, &k, out);
}

static int ckh_resolve(void *cp, udc_ino dir, const char *name, size_t len,
		       const struct udc_call *call, struct udc_attr *out)
{
	return bl_resolve_after(ckh_lookup(cp, dir, name, len, out), cp, dir, name, len, call, out);
}

static int ckh_rename(void *cp, udc_ino odir, const char *oname, size_t olen, udc_ino ndir,
		      const char *nname, size_t nlen, udc_ino moved)
{
	struct ckh_cache *c = cp;
	struct ckh_key ok = key_of(c, odir, oname, olen);
	struct ckh_key nk = key_of(c, ndir, nname, nlen);
	/* The new name's entry, its attr filled once the old one is known. */
	struct ckh_entry *fresh = ckh_entry_alloc(c, &nk, NULL);
	if (!fresh)
		return -ENOMEM;
	struct udc_attr was, target = { .ino = UDC_INO_NONE };

	writer_lock(c);
	bl_guard_dir_begin(&c->bl.guard);
	bl_guard_name_begin(&c->bl.guard, ok.hash);
	bl_guard_name_begin(&c->bl.guard, nk.hash);
	ckh_entry_drop_locked(c, &ok, &was);
	bool known = was.ino != UDC_INO_NONE && (moved == UDC_INO_NONE || moved == was.ino);
	ckh_lookup_name(c, &nk, &target);
	if (known)
		fresh->attr = was;
	if (known && ckh_entry_publish_locked(c, fresh))
		fresh = NULL;
	else /* unknown (or no memory to cache it): the new name is a miss */
		ckh_entry_drop_locked(c, &nk, NULL);
	/* A directory replaced at the target is gone. */
	udc_ino moved_ino = known ? was.ino : moved;
	if (target.ino != UDC_INO_NONE && target.type == UDC_TYPE_DIR && target.ino != moved_ino)
		ckh_dir_forget(c, target.ino);
	bl_guard_name_end(&c->bl.guard, nk.hash);
	bl_guard_name_end(&c->bl.guard, ok.hash);
	bl_guard_dir_end(&c->bl.guard);
	writer_unlock(c);
	ckh_entry_free(c, fresh);
	return 0;
}

static const struct bl_ops ckh_ops = BL_OPS(ckh, true, NULL, NULL, writer_lock, writer_unlock);

static void *ckh_create(const struct impl_config *cfg)
{
	return bl_create(cfg, sizeof(struct ckh_cache), &ckh_ops);
}

static void ckh_stats(void *cp, struct udc_stats *st)
{
	struct ckh_cache *c = cp;
	struct udc_stats s = { 0 };

	if (!c)
		return;
	pthread_mutex_lock(&c->lock);
	s.nr_positive = c->nr_positive;
	s.nr_negative = c->nr_negative;
	pthread_mutex_unlock(&c->lock);
	/* relaxed: statistics (see Ordering) */
	s.stale_answers = atomic_load_explicit(&c->bl.stale_answers, memory_order_relaxed);
	s.backend_calls = atomic_load_explicit(&c->bl.backend_calls, memory_order_relaxed);
	s.bytes_used = sizeof(*c) + bl_mem_bytes(&c->mem);
	s.bytes_limit = 0; /* unbounded */
	bl_stats_put(st, &s);
}

const struct impl impl_ck_hs =
	BL_IMPL(ckh, "ck_hs",
		"Concurrency Kit ck_hs (SPMC) + urcu reclamation, no eviction (unbounded)", false);
