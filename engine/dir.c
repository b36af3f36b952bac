/* SPDX-License-Identifier: MIT */
/*
 * engine/dir.c - directory objects.
 *
 * Owns: the directory table (cache->dirs, an rculfhash keyed by the keyed
 * hash of the ino) and every struct udc_dir in it.
 *
 * A directory object is made the first time the cache needs one for an
 * ino (an entry in it, a placeholder in it, a parent to record, a complete
 * flag) and, in this version, lives until udc_destroy(): entries point to
 * their directory without a reference count.  Freeing the objects of
 * removed and invalidated directories once the reclaim sweeper has dropped
 * their entries is the shrink module's work (see shrink/).
 *
 * Locking:
 *   None to find or make a directory: cds_lfht_add_unique() settles races
 *   between makers (the loser frees its never-published copy).
 *   d->lock (spinlock, innermost) protects d->children; it is taken under
 *   the stripe lock of the entry being linked or unlinked.
 *
 * Ordering:
 *   dir_bump_gen() is a release increment; lookups load gen with acquire.
 *   A lookup that sees the new generation therefore also sees what the
 *   bumping thread did before it (clearing DIR_COMPLETE, forgetting the
 *   parent), so it never answers from a complete flag the bump retired.
 *   cds_lfht_add_unique() publishes a zeroed and filled object (it orders
 *   the node's initialisation before the link, rculfhash guarantee).
 */
#include "engine/internal.h"

static int dir_match(struct cds_lfht_node *node, const void *key)
{
	const struct udc_dir *d = caa_container_of(node, struct udc_dir, node);

	return d->ino == *(const udc_ino *)key;
}

/* Call with rcu_read_lock held; the object stays valid until destroy. */
struct udc_dir *dir_find_rcu(struct udc_cache *c, udc_ino ino)
{
	struct cds_lfht_iter it;

	cds_lfht_lookup(c->dirs, hash_ino(&c->key, ino), dir_match, &ino, &it);
	struct cds_lfht_node *n = cds_lfht_iter_get_node(&it);
	return n ? caa_container_of(n, struct udc_dir, node) : NULL;
}

struct udc_dir *dir_get(struct udc_cache *c, udc_ino ino)
{
	uint64_t hash = hash_ino(&c->key, ino);
	struct cds_lfht_iter it;
	struct cds_lfht_node *n;

	rcu_read_lock();
	cds_lfht_lookup(c->dirs, hash, dir_match, &ino, &it);
	n = cds_lfht_iter_get_node(&it);
	rcu_read_unlock();
	if (n)
		return caa_container_of(n, struct udc_dir, node);

	struct udc_dir *d = mem_alloc_line(c, sizeof(*d));
	if (!d)
		return NULL;
	memset(d, 0, sizeof(*d));
	d->ino = ino;
	atomic_init(&d->gen, 1);
	udc_spin_init(&d->lock);
	CDS_INIT_LIST_HEAD(&d->children);

	rcu_read_lock();
	n = cds_lfht_add_unique(c->dirs, hash, dir_match, &ino, &d->node);
	rcu_read_unlock();
	if (n != &d->node) {
		mem_free_line(c, d, sizeof(*d));   /* lost the race; never published */
		return caa_container_of(n, struct udc_dir, node);
	}
	table_model_count(&c->dirs_model,
			  atomic_fetch_add_explicit(&c->nr_dirs, 1, memory_order_relaxed) + 1, true);
	return d;
}

/* A directory named by a positive entry in parent: record parent and cookie. */
void dir_learn(struct udc_dir *child, udc_ino parent, uint64_t cookie)
{
	/* relaxed: advisory for "..", read by walks under the rename seqcount */
	atomic_store_explicit(&child->cookie, cookie, memory_order_relaxed);
	atomic_store_explicit(&child->parent, parent, memory_order_relaxed);
}

void dir_bump_gen(struct udc_dir *d)
{
	/* release: see Ordering (pairs with the acquire load in lookups) */
	atomic_fetch_add_explicit(&d->gen, 1, memory_order_release);
}

/* At destroy: no other caller, every entry already unpublished. */
void dir_free_all(struct udc_cache *c)
{
	struct cds_lfht_iter it;
	struct cds_lfht_node *n;
	struct udc_dir *d, *dead = NULL;

	rcu_read_lock();
	table_for_each(c->dirs, &it, n) {
		d = dir_of(n);
		cds_lfht_del(c->dirs, &d->node);
		d->destroy_next = dead;
		dead = d;
	}
	rcu_read_unlock();
	synchronize_rcu();   /* rculfhash: a deleted node is freed after a grace period */
	while (dead) {
		d = dead;
		dead = d->destroy_next;
		mem_free_line(c, d, sizeof(*d));
		atomic_fetch_sub_explicit(&c->nr_dirs, 1, memory_order_relaxed);
	}
}
