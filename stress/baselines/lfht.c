/* SPDX-License-Identifier: MIT */
/*
 * stress/baselines/lfht.c - impl_lfht: bare liburcu rculfhash, the lookup ceiling.
 *
 * Owns: one rculfhash table (urcu-memb flavour, CDS_LFHT_AUTO_RESIZE |
 * CDS_LFHT_ACCOUNTING) of entries, each (dir, a copy of the name) and a
 * positive attr (copied whole) or, with attr.ino == UDC_INO_NONE, the
 * negative answer; the stripe locks that order its updates; the counters.
 * Nothing else: no eviction, no memory bound (memory_limit is ignored), no
 * per-directory index.  A lookup is rcu_read_lock, cds_lfht_lookup, a copy
 * of the attr, rcu_read_unlock: as fast as a name cache on liburcu can be,
 * which is what this baseline measures.
 *
 * impl_lfht_value is the same table with every positive carrying
 * IMPL_VALUE_LEN bytes of value inline after its name (one allocation,
 * the cheapest place a value can be), copied out by each lookup as
 * udc_lookup_value does (as much as fits, its length told): the ceiling
 * for udcache-value's hit (issue 16).
 *
 * Every change of a name is cds_lfht_add_replace() or cds_lfht_del() with
 * the name's stripe lock held; a replaced or deleted entry is freed by
 * call_rcu after a grace period.  rmdir and invalidate_dir have no index
 * to go by: they iterate the whole table and delete the directory's
 * entries, O(entries in the cache), under dir_lock.  A resolve on a miss
 * asks the backend with no lock held and caches the answer, with its
 * stripe lock held, only if the guard (stress/baselines/common.c) says no
 * mutation of the name or its directory ran meanwhile.
 *
 * Threads are registered with urcu-memb on their first call here
 * (bl_rcu_enter()) and unregistered when they exit.
 *
 * Locking (outermost first):
 *   dir_lock     serialises directory-wide changes (rename, rmdir,
 *                invalidate_dir): the guard's dir_seq writers (the shared
 *                calls' bl_head.dir_mutex).
 *   stripe lock  every table change of the names hashed to the stripe, and
 *                the guard check before a resolve's insert.  rename takes
 *                two, in address order.  The shared calls' lock hook
 *                (common.c: add, remove, rmdir, a resolve's insert).
 *                Never held across a backend call
 *                nor while lfht_dir_forget() flushes them.
 *   lookups take no lock: rcu_read_lock only.
 *
 * Ordering:
 *   cds_lfht_add_replace and cds_lfht_del are full barriers around the
 *   link change (rculfhash guarantee): an entry's fields, written before
 *   it is added, are seen by every lookup that finds it; a lookup that
 *   starts after a del returned does not find the node.
 *   call_rcu frees an entry only after every read section that may hold
 *   it has ended.
 *   lfht_dir_forget(): the guard's dir_begin (an odd dir_seq) comes before the
 *   stripe flush, and each stripe lock/unlock orders it with the resolves
 *   that validate under that stripe: a resolve validating after the flush
 *   sees the odd count and does not insert; one that validated before has
 *   inserted before the flush passed its stripe, so the scan, which starts
 *   after the flush, finds and deletes its entry.
 *   The counters (and struct bl_head's resolve counters) are relaxed:
 *   statistics, ordered with nothing.
 *
 * Limitations:
 *   rmdir and invalidate_dir are O(cache) and hold one RCU read section
 *   for the whole scan (grace periods, so frees, wait for it).  bytes_used
 *   is exact for entries and the cache struct; rculfhash allocates its
 *   bucket tables itself, so they are estimated as one struct
 *   cds_lfht_node a bucket, with as many buckets as entries (rounded up to
 *   a power of two), which is what CDS_LFHT_ACCOUNTING resizes towards.
 *   ".." is a name like any other (walks handle it, see bl_walk()).
 */
#include "stress/baselines/common.h"

#define _LGPL_SOURCE /* inline read-side fast paths, as udcache */
#include <urcu/urcu-memb.h>
#include <urcu/rculfhash.h>

#include <errno.h>
#include <pthread.h>
#include <string.h>

#define STRIPES 256	 /* stripe locks, by hash */
#define MIN_BUCKETS 4096 /* rculfhash's initial and smallest size */
#define CACHELINE 64

struct lfht_entry {
	/* read by lookups */
	struct cds_lfht_node node; /* in names, by (dir, name) */
	udc_ino dir;
	uint32_t len;
	uint32_t vlen;	      /* a positive's value, after the name (lfht-value) */
	struct udc_attr attr; /* ino UDC_INO_NONE: the name does not exist */
	/* for the free after a grace period */
	struct bl_mem *mem;
	struct rcu_head rcu;
	char name[];
};

struct lfht_key {
	udc_ino dir;
	const char *name;
	size_t len;
};

struct lfht_stripe {
	_Alignas(CACHELINE) pthread_mutex_t lock;
};

struct lfht_cache {
	struct bl_head bl; /* first: the shared calls' (common.h) */
	/* read by lookups; read-only after create */
	_Alignas(CACHELINE) struct cds_lfht *names;
	uint64_t key[2];
	size_t vlen; /* every entry's value room: 0, or IMPL_VALUE_LEN (lfht-value) */
	/* writers */
	_Alignas(CACHELINE) pthread_mutex_t dir_lock;
	_Atomic uint64_t nr_positive, nr_negative; /* entries in names now */
	struct bl_mem mem;
	struct lfht_stripe stripes[STRIPES];
};

/* ---------------------------------------------------------------------- */
/* Entries */

static size_t lfht_entry_size(const struct lfht_cache *c, size_t len)
{
	return sizeof(struct lfht_entry) + len + c->vlen;
}

static struct lfht_entry *entry_of(struct cds_lfht_node *n)
{
	return caa_container_of(n, struct lfht_entry, node);
}

/* Called by rculfhash, under rcu_read_lock, for nodes of the key's hash. */
static int lfht_match_rcu(struct cds_lfht_node *n, const void *key)
{
	const struct lfht_entry *e = entry_of(n);
	const struct lfht_key *k = key;

	return e->dir == k->dir && e->len == k->len && memcmp(e->name, k->name, k->len) == 0;
}

/*
 * Readers of an entry another thread may have published: its fields were
 * written before cds_lfht_add_replace() published it (see Ordering).
 */
static bool entry_negative_rcu(const struct lfht_entry *e)
{
	return e->attr.ino == UDC_INO_NONE;
}

static bool entry_in_dir_rcu(const struct lfht_entry *e, udc_ino dir)
{
	return e->dir == dir;
}

/* A new entry (attr NULL: negative), not in the table; NULL on ENOMEM.
 * With c->vlen, the value is there for a positive (vlen set) or for the
 * positive a rename may make of it (vlen 0 until then). */
static struct lfht_entry *lfht_entry_alloc(struct lfht_cache *c, udc_ino dir, const char *name,
				      size_t len, const struct udc_attr *attr)
{
	struct lfht_entry *e = bl_alloc(&c->mem, lfht_entry_size(c, len));

	if (!e)
		return NULL;
	e->dir = dir;
	e->len = (uint32_t)len;
	if (attr) {
		e->attr = *attr; /* calloc'd: else ino UDC_INO_NONE, negative */
		e->vlen = (uint32_t)c->vlen;
	}
	e->mem = &c->mem;
	memcpy(e->name, name, len);
	memcpy(e->name + len, impl_value, c->vlen);
	return e;
}

/* Free an entry that was never in the table (or NULL). */
static void lfht_entry_free(void *cp, void *ep)
{
	struct lfht_cache *c = cp;
	struct lfht_entry *e = ep;

	if (e)
		bl_free(&c->mem, e, lfht_entry_size(c, e->len));
}

static void lfht_entry_free_rcu(struct rcu_head *head)
{
	struct lfht_entry *e = caa_container_of(head, struct lfht_entry, rcu);
	const struct lfht_cache *c = caa_container_of(e->mem, struct lfht_cache, mem);

	bl_free(e->mem, e, lfht_entry_size(c, e->len));
}

/* e is in the table (delta 1) or was just taken out of it (-1). */
static void entry_count(struct lfht_cache *c, const struct lfht_entry *e, int delta)
{
	_Atomic uint64_t *n = entry_negative_rcu(e) ? &c->nr_negative : &c->nr_positive;

	/* relaxed: statistics (see Ordering); modulo 2^64, -1 subtracts one */
	atomic_fetch_add_explicit(n, (uint64_t)delta, memory_order_relaxed);
}

/* e was just taken out of the table by this thread: uncount, free after a grace period. */
static void entry_retire(struct lfht_cache *c, struct lfht_entry *e)
{
	entry_count(c, e, -1);
	urcu_memb_call_rcu(&e->rcu, lfht_entry_free_rcu);
}

static struct lfht_stripe *stripe_of(struct lfht_cache *c, uint64_t hash)
{
	return &c->stripes[(hash >> 32) & (STRIPES - 1)];
}

/* UDC_POSITIVE (copied to *out, which may be NULL), UDC_NEGATIVE or
 * UDC_MISS.  With @vlen (lfht-value), a positive's value is copied to
 * @vbuf, as much as *@vlen bytes, and *@vlen set to its length (0: none);
 * always inline, so that plain lookups pass NULL and pay nothing. */
static inline __attribute__((always_inline)) int
lfht_lookup_name(struct lfht_cache *c, uint64_t hash, const struct lfht_key *k,
		 struct udc_attr *out, void *vbuf, size_t *vlen)
{
	struct cds_lfht_iter it;
	int r = UDC_MISS;
	size_t have = 0;

	urcu_memb_read_lock();
	cds_lfht_lookup(c->names, hash, lfht_match_rcu, k, &it);
	struct cds_lfht_node *n = cds_lfht_iter_get_node(&it);
	if (n) {
		const struct lfht_entry *e = entry_of(n);
		if (entry_negative_rcu(e)) {
			r = UDC_NEGATIVE;
		} else {
			r = UDC_POSITIVE;
			if (vlen) {
				have = e->vlen;
				memcpy(vbuf, e->name + e->len, have < *vlen ? have : *vlen);
			}
			if (out)
				*out = e->attr;
		}
	}
	urcu_memb_read_unlock();
	if (vlen)
		*vlen = have;
	return r;
}

/* Put e in the table for its name, replacing what was there.  Stripe locked. */
static void lfht_entry_publish_locked(struct lfht_cache *c, struct lfht_entry *e, uint64_t hash)
{
	struct lfht_key k = { .dir = e->dir, .name = e->name, .len = e->len };

	entry_count(c, e, 1);
	urcu_memb_read_lock();
	struct cds_lfht_node *old =
		cds_lfht_add_replace(c->names, hash, lfht_match_rcu, &k, &e->node);
	urcu_memb_read_unlock();
	if (old)
		entry_retire(c, entry_of(old));
}

/*
 * Drop what is cached for k.  Stripe locked.  *was (may be NULL) gets the
 * dropped positive's attr, ino UDC_INO_NONE if there was none.
 */
static void lfht_entry_drop_locked(struct lfht_cache *c, uint64_t hash, const struct lfht_key *k,
			      struct udc_attr *was)
{
	struct cds_lfht_iter it;
	struct udc_attr a = { .ino = UDC_INO_NONE };

	urcu_memb_read_lock();
	cds_lfht_lookup(c->names, hash, lfht_match_rcu, k, &it);
	struct cds_lfht_node *n = cds_lfht_iter_get_node(&it);
	if (n && cds_lfht_del(c->names, n) == 0) {
		a = entry_of(n)->attr;
		entry_retire(c, entry_of(n));
	}
	urcu_memb_read_unlock();
	if (was)
		*was = a;
}

/*
 * Delete every entry of directory dir: O(entries in the cache).  With
 * dir_lock held and the guard's dir_seq odd, no stripe lock held.
 */
static void lfht_dir_forget(void *cp, udc_ino dir)
{
	struct lfht_cache *c = cp;
	struct cds_lfht_iter it;
	struct cds_lfht_node *n;

	/* Wait out resolves that validated before dir_seq went odd (see Ordering). */
	for (size_t i = 0; i < STRIPES; i++) {
		pthread_mutex_lock(&c->stripes[i].lock);
		pthread_mutex_unlock(&c->stripes[i].lock);
	}
	urcu_memb_read_lock();
	cds_lfht_for_each(c->names, &it, n) {
		/* del fails if a concurrent add_replace took n out first (it retires n) */
		if (entry_in_dir_rcu(entry_of(n), dir) && cds_lfht_del(c->names, n) == 0)
			entry_retire(c, entry_of(n));
	}
	urcu_memb_read_unlock();
}

/* ---------------------------------------------------------------------- */
/* The shared calls' hooks (struct bl_ops) */

static void lfht_lock(void *cp, uint64_t hash)
{
	pthread_mutex_lock(&stripe_of(cp, hash)->lock);
}

static void lfht_unlock(void *cp, uint64_t hash)
{
	pthread_mutex_unlock(&stripe_of(cp, hash)->lock);
}

static void *lfht_entry_new(void *cp, uint64_t hash, udc_ino dir, const char *name, size_t len,
			    const struct udc_attr *attr)
{
	(void)hash; /* not kept: rculfhash is told it with each call */
	return lfht_entry_alloc(cp, dir, name, len, attr);
}

static int lfht_publish_locked(void *cp, uint64_t hash, void **e)
{
	lfht_entry_publish_locked(cp, *e, hash); /* cannot fail */
	*e = NULL;
	return 0;
}

static void lfht_drop_locked(void *cp, uint64_t hash, udc_ino dir, const char *name, size_t len,
			     struct udc_attr *was)
{
	struct lfht_key k = { .dir = dir, .name = name, .len = len };

	lfht_entry_drop_locked(cp, hash, &k, was);
}

/* The locks and the table. */
static int lfht_init(void *cp)
{
	struct lfht_cache *c = cp;

	memcpy(c->key, c->bl.cfg.hash_key, sizeof(c->key));
	pthread_mutex_init(&c->dir_lock, NULL);
	c->bl.dir_mutex = &c->dir_lock;
	for (size_t i = 0; i < STRIPES; i++)
		pthread_mutex_init(&c->stripes[i].lock, NULL);
	c->names = cds_lfht_new_flavor(MIN_BUCKETS, MIN_BUCKETS, 0,
				       CDS_LFHT_AUTO_RESIZE | CDS_LFHT_ACCOUNTING,
				       &urcu_memb_flavor, NULL);
	return c->names ? 0 : -ENOMEM;
}

static void lfht_fini(void *cp)
{
	struct lfht_cache *c = cp;
	struct cds_lfht_iter it;
	struct cds_lfht_node *n;

	if (c->names) {
		bl_rcu_enter();
		urcu_memb_read_lock();
		cds_lfht_for_each(c->names, &it, n) {
			if (cds_lfht_del(c->names, n) == 0)
				entry_retire(c, entry_of(n));
		}
		urcu_memb_read_unlock();
		cds_lfht_destroy(c->names, NULL); /* empty: cannot fail */
		urcu_memb_barrier(); /* every entry's free has run: c->mem is done with */
	}
	for (size_t i = 0; i < STRIPES; i++)
		pthread_mutex_destroy(&c->stripes[i].lock);
	pthread_mutex_destroy(&c->dir_lock);
}

/* ---------------------------------------------------------------------- */
/* The interface */

/* Inlined into resolve: a resolve's hit costs what a lookup does. */
static inline __attribute__((always_inline)) int
lfht_lookup(void *cp, udc_ino dir, const char *name, size_t len, struct udc_attr *out)
{
	struct lfht_cache *c = cp;
	int r = bl_check_rcu(c, dir, name, len);

	if (r)
		return r;
	struct lfht_key k = { .dir = dir, .name = name, .len = len };
	return lfht_lookup_name(c, bl_hash(c->key, dir, name, len), &k, out, NULL, NULL);
}

static int lfht_resolve(void *cp, udc_ino dir, const char *name, size_t len,
			const struct udc_call *call, struct udc_attr *out)
{
	return bl_resolve_after(lfht_lookup(cp, dir, name, len, out), cp, dir, name, len, call, out);
}

static void lfht_stripes_lock(struct lfht_stripe *a, struct lfht_stripe *b)
{
	if (a > b) {
		struct lfht_stripe *t = a;
		a = b;
		b = t;
	}
	pthread_mutex_lock(&a->lock);
	if (b != a)
		pthread_mutex_lock(&b->lock);
}

static void lfht_stripes_unlock(struct lfht_stripe *a, struct lfht_stripe *b)
{
	pthread_mutex_unlock(&a->lock);
	if (b != a)
		pthread_mutex_unlock(&b->lock);
}

static int lfht_rename(void *cp, udc_ino odir, const char *oname, size_t olen, udc_ino ndir,
		       const char *nname, size_t nlen, udc_ino moved)
{
	struct lfht_cache *c = cp;
	/* The new name's entry, its attr filled once the old one is known. */
	struct lfht_entry *fresh = lfht_entry_alloc(c, ndir, nname, nlen, NULL);
	if (!fresh)
		return -ENOMEM;
	uint64_t oh = bl_hash(c->key, odir, oname, olen);
	uint64_t nh = bl_hash(c->key, ndir, nname, nlen);
	struct lfht_key ok = { .dir = odir, .name = oname, .len = olen };
	struct lfht_key nk = { .dir = ndir, .name = nname, .len = nlen };
	struct lfht_stripe *os = stripe_of(c, oh), *ns = stripe_of(c, nh);
	struct udc_attr was, target = { .ino = UDC_INO_NONE };

	pthread_mutex_lock(&c->dir_lock);
	bl_guard_dir_begin(&c->bl.guard);
	lfht_stripes_lock(os, ns);
	bl_guard_name_begin(&c->bl.guard, oh);
	bl_guard_name_begin(&c->bl.guard, nh);
	lfht_entry_drop_locked(c, oh, &ok, &was);
	bool known = was.ino != UDC_INO_NONE && (moved == UDC_INO_NONE || moved == was.ino);
	lfht_lookup_name(c, nh, &nk, &target, NULL, NULL);
	if (known) {
		fresh->attr = was;
		fresh->vlen = (uint32_t)c->vlen; /* every positive's (lfht_entry_alloc) */
		lfht_entry_publish_locked(c, fresh, nh);
		fresh = NULL;
	} else {
		lfht_entry_drop_locked(c, nh, &nk, NULL);
	}
	bl_guard_name_end(&c->bl.guard, nh);
	bl_guard_name_end(&c->bl.guard, oh);
	lfht_stripes_unlock(os, ns);
	/* A directory replaced at the target is gone. */
	udc_ino moved_ino = known ? was.ino : moved;
	if (target.ino != UDC_INO_NONE && target.type == UDC_TYPE_DIR && target.ino != moved_ino)
		lfht_dir_forget(c, target.ino);
	bl_guard_dir_end(&c->bl.guard);
	pthread_mutex_unlock(&c->dir_lock);
	lfht_entry_free(c, fresh);
	return 0;
}

/* rculfhash's buckets, estimated (see Limitations). */
static uint64_t buckets_bytes(uint64_t entries)
{
	uint64_t buckets = MIN_BUCKETS;

	while (buckets < entries)
		buckets <<= 1;
	return buckets * sizeof(struct cds_lfht_node);
}

static const struct bl_ops lfht_ops = BL_OPS(lfht, true, lfht_lock, lfht_unlock, NULL, NULL);

static void *lfht_create(const struct impl_config *cfg)
{
	return bl_create(cfg, sizeof(struct lfht_cache), &lfht_ops);
}

static void lfht_stats(void *cp, struct udc_stats *st)
{
	struct lfht_cache *c = cp;
	struct udc_stats s = { 0 };

	if (!c)
		return;
	/* relaxed: statistics (see Ordering) */
	s.nr_positive = atomic_load_explicit(&c->nr_positive, memory_order_relaxed);
	s.nr_negative = atomic_load_explicit(&c->nr_negative, memory_order_relaxed);
	s.backend_calls = atomic_load_explicit(&c->bl.backend_calls, memory_order_relaxed);
	s.stale_answers = atomic_load_explicit(&c->bl.stale_answers, memory_order_relaxed);
	s.bytes_used =
		sizeof(*c) + bl_mem_bytes(&c->mem) + buckets_bytes(s.nr_positive + s.nr_negative);
	s.bytes_limit = 0; /* unbounded */
	bl_stats_put(st, &s);
}

/* impl->settle: the size liburcu's accounting resizes to (a node a
 * bucket), made now; its own resize runs later, in liburcu's thread.
 * Outside a read-side section, as cds_lfht_resize wants. */
static void lfht_settle(void *cp)
{
	struct lfht_cache *c = cp;
	/* relaxed: statistics (see Ordering); nothing runs meanwhile */
	uint64_t n = atomic_load_explicit(&c->nr_positive, memory_order_relaxed) +
		     atomic_load_explicit(&c->nr_negative, memory_order_relaxed);
	unsigned long size = MIN_BUCKETS;

	while (size < n)
		size <<= 1;
	bl_rcu_enter();
	cds_lfht_resize(c->names, size);
}

const struct impl impl_lfht = {
	BL_IMPL_BASE(lfht, "lfht", "bare liburcu rculfhash, no eviction (lookup ceiling, unbounded)",
		     false),
	.destroy = bl_destroy, .add = bl_add, .add_negative = bl_add_negative,
	.remove = bl_remove, .rmdir = bl_rmdir, .settle = lfht_settle,
};

/* ---------------------------------------------------------------------- */
/* lfht-value: every positive with a value (see the top of the file) */

static void *lfht_value_create(const struct impl_config *cfg)
{
	struct lfht_cache *c = lfht_create(cfg);

	if (c)
		c->vlen = IMPL_VALUE_LEN; /* before any entry: set-up, one thread */
	return c;
}

/* As stress/impl.c's udcache-value: a value buffer of UDC_VALUE_MAX. */
static int lfht_value_lookup(void *cp, udc_ino dir, const char *name, size_t len,
			     struct udc_attr *out)
{
	struct lfht_cache *c = cp;
	unsigned char v[UDC_VALUE_MAX];
	size_t n = sizeof(v);
	int r = bl_check_rcu(c, dir, name, len);

	if (r)
		return r;
	struct lfht_key k = { .dir = dir, .name = name, .len = len };
	return lfht_lookup_name(c, bl_hash(c->key, dir, name, len), &k, out, v, &n);
}

static int lfht_value_resolve(void *cp, udc_ino dir, const char *name, size_t len,
			      const struct udc_call *call, struct udc_attr *out)
{
	return bl_resolve_after(lfht_value_lookup(cp, dir, name, len, out), cp, dir, name, len, call, out);
}

const struct impl impl_lfht_value = {
	.name = "lfht-value",
	.summary = "lfht, every positive with a 64-byte value inline, copied out on each hit",
	.bounded = false, .create = lfht_value_create, .lookup = lfht_value_lookup,
	.resolve = lfht_value_resolve, .walk = bl_walk, .rename = bl_rename,
	.invalidate_dir = bl_invalidate_dir, .stats = lfht_stats, .destroy = bl_destroy, .add = bl_add, .add_negative = bl_add_negative,
	.remove = bl_remove, .rmdir = bl_rmdir, .settle = lfht_settle,
};
