/* SPDX-License-Identifier: MIT */
/*
 * stress/baselines/lru_mutex.c - impl_lru_mutex: the textbook bounded cache.
 *
 * Owns: one chained hash table of names, one LRU list, a table of the
 * directories that have names cached (each with the list of its names),
 * and the counters; all of it behind ONE pthread mutex.  It is the naive
 * design a name cache starts as, measured so that the others are seen
 * against it: every call, hits included, takes the mutex, and every hit
 * moves its entry to the front of the LRU list (a write to shared lines).
 *
 * An entry holds (dir, a copy of the name) and a positive attr (copied
 * whole) or, with attr.ino == UDC_INO_NONE, the negative answer.  Memory
 * is what bl_alloc() counted (entries with their names, directory objects,
 * both bucket arrays) plus the cache struct; when an insert takes it past
 * cfg->memory_limit (0: 64 MiB, udcache's default), entries are evicted
 * from the LRU tail until it is back within (with cfg->max_entries, until
 * it holds no more entries than that).  Which entry goes, and what a hit
 * does, is the policy's (struct lru_policy): this file's is LRU; s3fifo.c's
 * is S3-FIFO over the same table (impl_s3fifo).  A table doubles (rehashed
 * under the mutex) when it holds more than one node a bucket; it never
 * shrinks.  A directory object lives while it has names cached, so that
 * rmdir and invalidate_dir drop its names in O(its names), not O(cache).
 *
 * A resolve looks up under the mutex; on a miss it takes a guard snapshot,
 * drops the mutex for the backend call, and caches the answer only if the
 * guard (stress/baselines/common.c) says no mutation of the name or its
 * directory ran meanwhile.  ".." is a name like any other (walks handle
 * it, see bl_walk()).
 *
 * Locking:
 *   lock (one pthread mutex) protects names, dirs, lru, every entry and
 *   directory object, and the counters in st (stale_answers is struct
 *   bl_head's, relaxed).  The guard's counts are changed under it too (so
 *   bl_guard_valid() under it is exact).  It is both the names' lock and
 *   the directory-wide one of the shared calls (struct bl_ops: no lock
 *   hooks, bl_head.dir_mutex).  No
 *   call holds it across a backend call.  Allocation of entries happens
 *   before it is taken; directory objects and grown tables are allocated
 *   under it.
 *
 * Ordering:
 *   None beyond the mutex here (stale_answers: a relaxed statistic); the
 *   guard's own ordering (its snapshot
 *   before the backend call, walks as dir_seq readers) is in common.c.
 *
 * Limitations:
 *   No concurrency at all: the point of this baseline.  Memory counts
 *   bytes asked of calloc, not malloc's own overhead.
 */
#include "stress/baselines/lru_mutex.h"

#include <errno.h>
#include <pthread.h>
#include <string.h>

#define NAMES_BUCKETS 1024 /* initial sizes; both tables double from there */
#define DIRS_BUCKETS 256
#define DEFAULT_LIMIT ((size_t)64 << 20) /* memory_limit 0, as udcache */

static const struct lru_policy lru_policy;

/* ---------------------------------------------------------------------- */
/* Tables (with lock held) */

static int table_init(struct lru_cache *c, struct lru_table *t, size_t buckets)
{
	t->heads = bl_alloc(&c->mem, buckets * sizeof(*t->heads));
	t->mask = buckets - 1;
	t->count = 0;
	return t->heads ? 0 : -ENOMEM;
}

static void table_fini(struct lru_cache *c, struct lru_table *t)
{
	bl_free(&c->mem, t->heads, (t->mask + 1) * sizeof(*t->heads));
}

static struct cds_hlist_head *table_bucket(const struct lru_table *t, uint64_t hash)
{
	return &t->heads[hash & t->mask];
}

/* Double the buckets and rehash; out of memory, keep the old ones (slower). */
static void table_grow(struct lru_cache *c, struct lru_table *t)
{
	size_t buckets = (t->mask + 1) * 2;
	struct cds_hlist_head *heads = bl_alloc(&c->mem, buckets * sizeof(*heads));

	if (!heads)
		return;
	for (size_t i = 0; i <= t->mask; i++) {
		struct cds_hlist_node *pos, *next;
		cds_hlist_for_each_safe(pos, next, &t->heads[i]) {
			struct lru_node *n = caa_container_of(pos, struct lru_node, link);
			cds_hlist_add_head(pos, &heads[n->hash & (buckets - 1)]);
		}
	}
	table_fini(c, t);
	t->heads = heads;
	t->mask = buckets - 1;
}

static void table_add(struct lru_cache *c, struct lru_table *t, struct lru_node *n)
{
	cds_hlist_add_head(&n->link, table_bucket(t, n->hash));
	if (++t->count > t->mask + 1)
		table_grow(c, t);
}

static void table_del(struct lru_table *t, struct lru_node *n)
{
	cds_hlist_del(&n->link);
	t->count--;
}

/* ---------------------------------------------------------------------- */
/* Directories (with lock held) */

static uint64_t dir_hash(const struct lru_cache *c, udc_ino ino)
{
	return bl_hash(c->key, ino, "", 0);
}

static struct lru_dir *dir_find_locked(struct lru_cache *c, udc_ino ino)
{
	uint64_t hash = dir_hash(c, ino);
	struct cds_hlist_node *pos;

	cds_hlist_for_each(pos, table_bucket(&c->dirs, hash)) {
		struct lru_dir *d = caa_container_of(pos, struct lru_dir, node.link);
		if (d->ino == ino)
			return d;
	}
	return NULL;
}

/* ino's directory object, made if it has none; NULL on ENOMEM. */
static struct lru_dir *dir_get_locked(struct lru_cache *c, udc_ino ino)
{
	struct lru_dir *d = dir_find_locked(c, ino);

	if (d)
		return d;
	d = bl_alloc(&c->mem, sizeof(*d));
	if (!d)
		return NULL;
	d->ino = ino;
	d->node.hash = dir_hash(c, ino);
	CDS_INIT_LIST_HEAD(&d->children);
	table_add(c, &c->dirs, &d->node);
	return d;
}

static void dir_free_locked(struct lru_cache *c, struct lru_dir *d)
{
	table_del(&c->dirs, &d->node);
	bl_free(&c->mem, d, sizeof(*d));
}

/* ---------------------------------------------------------------------- */
/* Entries */

static size_t lru_entry_size(size_t len)
{
	return sizeof(struct lru_entry) + len;
}

/* A new entry for (dir, name), not yet in the cache; NULL on ENOMEM.  No lock needed. */
static struct lru_entry *lru_entry_alloc(struct lru_cache *c, uint64_t hash, udc_ino dir,
				     const char *name, size_t len)
{
	struct lru_entry *e = bl_alloc(&c->mem, lru_entry_size(len));

	if (!e)
		return NULL;
	e->node.hash = hash;
	e->dir_ino = dir;
	e->len = (uint32_t)len;
	memcpy(e->name, name, len);
	return e;
}

/* Free an entry not in the cache (or NULL).  No lock needed. */
static void lru_entry_free(void *cp, void *ep)
{
	struct lru_cache *c = cp;
	struct lru_entry *e = ep;

	if (e)
		bl_free(&c->mem, e, lru_entry_size(e->len));
}

static bool entry_negative(const struct lru_entry *e)
{
	return e->attr.ino == UDC_INO_NONE;
}

/* e (in the cache or about to be) counts as positive or negative: delta +1 or -1. */
static void entry_count_locked(struct lru_cache *c, const struct lru_entry *e, int delta)
{
	uint64_t *n = entry_negative(e) ? &c->st.nr_negative : &c->st.nr_positive;

	*n += (uint64_t)delta; /* modulo 2^64: -1 subtracts one */
}

static struct lru_entry *entry_find_locked(struct lru_cache *c, uint64_t hash, udc_ino dir,
					   const char *name, size_t len)
{
	struct cds_hlist_node *pos;

	cds_hlist_for_each(pos, table_bucket(&c->names, hash)) {
		struct lru_entry *e = caa_container_of(pos, struct lru_entry, node.link);
		if (e->node.hash == hash && e->dir_ino == dir && e->len == len &&
		    memcmp(e->name, name, len) == 0)
			return e;
	}
	return NULL;
}

/* Take e out of the table, the policy's queue and its directory's list (the
 * directory stays). */
static void lru_entry_unlink_locked(struct lru_cache *c, struct lru_entry *e)
{
	table_del(&c->names, &e->node);
	c->pol->unlink(c, e);
	cds_list_del(&e->sibling);
	entry_count_locked(c, e, -1);
}

/* Drop e from the cache and free it, and its directory object if that was its last name. */
static void lru_entry_drop_locked(struct lru_cache *c, struct lru_entry *e)
{
	struct lru_dir *d = e->dir;

	lru_entry_unlink_locked(c, e);
	lru_entry_free(c, e);
	if (cds_list_empty(&d->children))
		dir_free_locked(c, d);
}

static uint64_t cache_bytes(const struct lru_cache *c)
{
	return sizeof(*c) + bl_mem_bytes(&c->mem);
}

/* Past the limit: max_entries entries if set, else limit bytes. */
static bool over_limit_locked(const struct lru_cache *c)
{
	if (c->max_entries)
		return c->st.nr_positive + c->st.nr_negative > c->max_entries;
	return cache_bytes(c) > c->limit;
}

/* Evict the policy's victims while over the limit; never keep (just inserted). */
static void evict_locked(struct lru_cache *c, const struct lru_entry *keep)
{
	while (over_limit_locked(c)) {
		struct lru_entry *victim = c->pol->victim(c, keep);
		if (!victim)
			return;
		lru_entry_drop_locked(c, victim);
		c->st.evictions++;
	}
}

/*
 * Make *fresh's name answer (*fresh)->attr, most recently used.  A name
 * already cached is updated in place and *fresh left to the caller to
 * free; else *fresh goes into the cache (set to NULL) and the LRU tail is
 * evicted past the limit.  Return 0, or -ENOMEM (no directory object:
 * nothing changed).
 */
static int entry_set_locked(struct lru_cache *c, struct lru_entry **fresh)
{
	struct lru_entry *n = *fresh;
	struct lru_entry *e = entry_find_locked(c, n->node.hash, n->dir_ino, n->name, n->len);

	if (e) {
		entry_count_locked(c, e, -1);
		e->attr = n->attr;
		entry_count_locked(c, e, 1);
		c->pol->hit(c, e);
		return 0;
	}
	struct lru_dir *d = dir_get_locked(c, n->dir_ino);
	if (!d)
		return -ENOMEM;
	n->dir = d;
	table_add(c, &c->names, &n->node);
	c->pol->insert(c, n);
	cds_list_add(&n->sibling, &d->children);
	entry_count_locked(c, n, 1);
	*fresh = NULL;
	evict_locked(c, n);
	return 0;
}

/* Drop every name cached in directory ino. */
static void lru_dir_forget(void *cp, udc_ino ino)
{
	struct lru_cache *c = cp;
	struct lru_dir *d = dir_find_locked(c, ino);
	struct lru_entry *e, *next;

	if (!d)
		return;
	cds_list_for_each_entry_safe(e, next, &d->children, sibling) {
		lru_entry_unlink_locked(c, e);
		lru_entry_free(c, e);
	}
	dir_free_locked(c, d);
}

/* Count a lookup; a hit is moved to the front and its answer copied to *out (may be NULL). */
static int lookup_locked(struct lru_cache *c, uint64_t hash, udc_ino dir, const char *name,
			 size_t len, struct udc_attr *out)
{
	struct lru_entry *e = entry_find_locked(c, hash, dir, name, len);

	c->st.lookups++;
	if (!e) {
		c->st.misses++;
		return UDC_MISS;
	}
	c->pol->hit(c, e);
	if (entry_negative(e)) {
		c->st.hits_negative++;
		return UDC_NEGATIVE;
	}
	c->st.hits_positive++;
	if (out)
		*out = e->attr;
	return UDC_POSITIVE;
}

/* ---------------------------------------------------------------------- */
/* The shared calls' hooks (struct bl_ops): the one lock for every name */

static void *lru_entry_new(void *cp, uint64_t hash, udc_ino dir, const char *name, size_t len,
			   const struct udc_attr *attr)
{
	struct lru_entry *e = lru_entry_alloc(cp, hash, dir, name, len);

	if (e && attr)
		e->attr = *attr; /* calloc'd: else ino UDC_INO_NONE, negative */
	return e;
}

static int lru_publish_locked(void *cp, uint64_t hash, void **e)
{
	struct lru_entry *n = *e;
	int r = entry_set_locked(cp, &n);

	(void)hash; /* the entry has it */
	*e = n;
	return r;
}

static void lru_drop_locked(void *cp, uint64_t hash, udc_ino dir, const char *name, size_t len,
			    struct udc_attr *was)
{
	struct lru_entry *e = entry_find_locked(cp, hash, dir, name, len);

	if (was)
		*was = e ? e->attr : (struct udc_attr){ .ino = UDC_INO_NONE };
	if (e)
		lru_entry_drop_locked(cp, e);
}

/* The lock, the list and both tables; the policy is LRU until
 * lru_create_policy() sets another. */
static int lru_init(void *cp)
{
	struct lru_cache *c = cp;
	const struct impl_config *cfg = &c->bl.cfg;

	pthread_mutex_init(&c->lock, NULL);
	c->bl.dir_mutex = &c->lock;
	CDS_INIT_LIST_HEAD(&c->lru);
	c->pol = &lru_policy;
	c->limit = cfg->memory_limit ? cfg->memory_limit : DEFAULT_LIMIT;
	c->max_entries = cfg->max_entries;
	memcpy(c->key, cfg->hash_key, sizeof(c->key));
	if (table_init(c, &c->names, NAMES_BUCKETS) || table_init(c, &c->dirs, DIRS_BUCKETS))
		return -ENOMEM; /* lru_fini(): table_fini() of a table never made frees NULL */
	return 0;
}

static void lru_fini(void *cp)
{
	struct lru_cache *c = cp;

	for (size_t i = 0; c->dirs.heads && i <= c->dirs.mask; i++)
		while (c->dirs.heads[i].next)
			lru_dir_forget(c, caa_container_of(c->dirs.heads[i].next,
							   struct lru_dir, node.link)->ino);
	if (c->pol->fini)
		c->pol->fini(c);
	table_fini(c, &c->names);
	table_fini(c, &c->dirs);
	pthread_mutex_destroy(&c->lock);
}

/* ---------------------------------------------------------------------- */
/* The interface */

int lru_lookup(void *cp, udc_ino dir, const char *name, size_t len, struct udc_attr *out)
{
	struct lru_cache *c = cp;
	int r = call_check(c, dir, name, len);

	if (r)
		return r;
	uint64_t hash = bl_hash(c->key, dir, name, len);
	pthread_mutex_lock(&c->lock);
	r = lookup_locked(c, hash, dir, name, len, out);
	pthread_mutex_unlock(&c->lock);
	return r;
}

int lru_resolve(void *cp, udc_ino dir, const char *name, size_t len,
		       const struct udc_call *call, struct udc_attr *out)
{
	struct lru_cache *c = cp;
	int r = call_check(c, dir, name, len);

	if (r)
		return r;
	uint64_t hash = bl_hash(c->key, dir, name, len);
	pthread_mutex_lock(&c->lock);
	r = lookup_locked(c, hash, dir, name, len, out);
	struct bl_snap snap = bl_guard_snap(&c->bl.guard, hash);
	if (r == UDC_MISS && c->bl.cfg.backend)
		c->st.backend_calls++;
	pthread_mutex_unlock(&c->lock);
	if (r == UDC_POSITIVE)
		return 0;
	if (r == UDC_NEGATIVE)
		return -ENOENT;
	return bl_resolve_fetch(c, hash, snap, dir, name, len, call, out);
}

static int lru_rename(void *cp, udc_ino odir, const char *oname, size_t olen, udc_ino ndir,
		      const char *nname, size_t nlen, udc_ino moved)
{
	struct lru_cache *c = cp;
	uint64_t oh = bl_hash(c->key, odir, oname, olen);
	uint64_t nh = bl_hash(c->key, ndir, nname, nlen);
	struct lru_entry *fresh = lru_entry_alloc(c, nh, ndir, nname, nlen);
	if (!fresh)
		return -ENOMEM;

	pthread_mutex_lock(&c->lock);
	bl_guard_dir_begin(&c->bl.guard);
	bl_guard_name_begin(&c->bl.guard, oh);
	bl_guard_name_begin(&c->bl.guard, nh);
	struct lru_entry *old = entry_find_locked(c, oh, odir, oname, olen);
	struct lru_entry *target = entry_find_locked(c, nh, ndir, nname, nlen);
	struct udc_attr was = { .ino = UDC_INO_NONE };
	udc_ino replaced = UDC_INO_NONE; /* a directory renamed over */
	if (old) {
		was = old->attr;
		lru_entry_drop_locked(c, old); /* target, another name, keeps its directory */
	}
	if (target && target->attr.type == UDC_TYPE_DIR)
		replaced = target->attr.ino;
	bool known = was.ino != UDC_INO_NONE && (moved == UDC_INO_NONE || moved == was.ino);
	fresh->attr = was;
	if (known)
		entry_set_locked(c, &fresh); /* -ENOMEM: the new name is a miss */
	else if (target)
		lru_entry_drop_locked(c, target);
	udc_ino moved_ino = known ? was.ino : moved;
	if (replaced != UDC_INO_NONE && replaced != moved_ino)
		lru_dir_forget(c, replaced);
	bl_guard_name_end(&c->bl.guard, nh);
	bl_guard_name_end(&c->bl.guard, oh);
	bl_guard_dir_end(&c->bl.guard);
	pthread_mutex_unlock(&c->lock);
	lru_entry_free(c, fresh);
	return 0;
}

static const struct bl_ops lru_ops = BL_OPS(lru, false, NULL, NULL, NULL, NULL);

static void *lru_create(const struct impl_config *cfg)
{
	return bl_create(cfg, sizeof(struct lru_cache), &lru_ops);
}

/* See lru_mutex.h. */
void *lru_create_policy(const struct impl_config *cfg, const struct lru_policy *pol)
{
	struct lru_cache *c = lru_create(cfg);

	if (!c)
		return NULL;
	c->pol = pol;
	int r = pol->init ? pol->init(c) : 0;
	if (r) {
		bl_destroy(c); /* pol->fini frees what pol->init made */
		errno = -r;
		return NULL;
	}
	return c;
}

/* ---------------------------------------------------------------------- */
/* LRU, the policy of impl_lru_mutex: the list is most recently used first. */

static void lru_hit(struct lru_cache *c, struct lru_entry *e)
{
	cds_list_move(&e->lru, &c->lru);
}

static void lru_insert(struct lru_cache *c, struct lru_entry *e)
{
	cds_list_add(&e->lru, &c->lru);
}

static void lru_unlink(struct lru_cache *c, struct lru_entry *e)
{
	(void)c;
	cds_list_del(&e->lru);
}

static struct lru_entry *lru_victim(struct lru_cache *c, const struct lru_entry *keep)
{
	struct lru_entry *tail = caa_container_of(c->lru.prev, struct lru_entry, lru);

	return cds_list_empty(&c->lru) || tail == keep ? NULL : tail;
}

static const struct lru_policy lru_policy = {
	.hit = lru_hit, .insert = lru_insert, .unlink = lru_unlink, .victim = lru_victim
};

void lru_stats(void *cp, struct udc_stats *st)
{
	struct lru_cache *c = cp;

	if (!c)
		return;
	pthread_mutex_lock(&c->lock);
	struct udc_stats s = c->st;
	/* relaxed: a statistic (common.c's Ordering) */
	s.stale_answers = atomic_load_explicit(&c->bl.stale_answers, memory_order_relaxed);
	s.bytes_used = cache_bytes(c);
	s.bytes_limit = c->limit;
	pthread_mutex_unlock(&c->lock);
	bl_stats_put(st, &s);
}

const struct impl impl_lru_mutex = BL_IMPL(
	lru, "lru-mutex", "one mutex over a chained hash table and an LRU list (bounded)", true);
