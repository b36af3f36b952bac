/* SPDX-License-Identifier: MIT */
/*
 * stress/baselines/lru_mutex.h - the one-mutex cache of lru_mutex.c, for
 * the eviction policies that run over it (its own LRU; s3fifo.c).
 *
 * Owns nothing at run time: the types of lru_mutex.c's cache and the hooks
 * a policy fills (struct lru_policy).  The cache (tables of names and
 * directories, counters, the memory and entry limits) is lru_mutex.c's; a
 * policy owns its queues and whatever state it hangs off policy_state, and
 * decides what a hit does and which entry is evicted.
 *
 * Locking: every field of struct lru_cache but bl and mem, every entry and
 * directory, and everything a policy keeps, are protected by lru_cache.lock;
 * every hook of struct lru_policy is called with it held (init and fini:
 * before and after any other thread can see the cache).
 *
 * Ordering: none beyond the mutex.
 */
#ifndef UDC_STRESS_BASELINES_LRU_MUTEX_H
#define UDC_STRESS_BASELINES_LRU_MUTEX_H

#include <urcu/hlist.h>
#include <urcu/list.h>

#include "stress/baselines/common.h"

/* What a table links: its hash, kept for lookups and rehashing. */
struct lru_node {
	struct cds_hlist_node link;
	uint64_t hash;
};

struct lru_table {
	struct cds_hlist_head *heads;
	size_t mask; /* buckets - 1 */
	size_t count;
};

struct lru_dir {
	struct lru_node node; /* in dirs, by ino */
	udc_ino ino;
	struct cds_list_head children; /* its entries (sibling); never empty */
};

struct lru_entry {
	struct lru_node node; /* in names, by (dir, name) */
	udc_ino dir_ino;
	uint32_t len;
	uint8_t queue, freq;	      /* the policy's (S3-FIFO: which queue, the frequency) */
	struct udc_attr attr;	      /* ino UDC_INO_NONE: the name does not exist */
	struct cds_list_head lru;     /* in the policy's queue (LRU: cache->lru,
				       * most recently used first) */
	struct cds_list_head sibling; /* in dir->children */
	struct lru_dir *dir;
	char name[];
};

struct lru_cache {
	struct bl_head bl; /* first: the shared calls' (common.h) */
	pthread_mutex_t lock;
	/* protected by lock */
	struct lru_table names;
	struct lru_table dirs;
	struct cds_list_head lru; /* the policy's (LRU's list; S3-FIFO's main queue) */
	void *policy_state;	  /* the policy's own (NULL for LRU) */
	struct udc_stats st;	  /* the counters; bytes_* filled by lru_stats() */
	/* read-only after create */
	const struct lru_policy *pol;
	size_t limit;
	size_t max_entries; /* 0: the limit is bytes (limit), else entries */
	uint64_t key[2];
	/* lock-free */
	struct bl_mem mem;
};

/* An eviction policy over struct lru_cache; every hook under c->lock. */
struct lru_policy {
	/* A lookup found e, or an add or answer replaced e's in place. */
	void (*hit)(struct lru_cache *c, struct lru_entry *e);
	/* e is new in the table: put it in a queue. */
	void (*insert)(struct lru_cache *c, struct lru_entry *e);
	/* e leaves the cache (evicted, removed, forgotten): take it out of its queue. */
	void (*unlink)(struct lru_cache *c, struct lru_entry *e);
	/* The entry to evict next, not keep (just inserted); NULL: none now. */
	struct lru_entry *(*victim)(struct lru_cache *c, const struct lru_entry *keep);
	/* policy_state made (0 or -errno) and freed (once the cache is empty); may be NULL. */
	int (*init)(struct lru_cache *c);
	void (*fini)(struct lru_cache *c);
};

/* impl->create of a cache evicting by pol: NULL and errno on failure. */
void *lru_create_policy(const struct impl_config *cfg, const struct lru_policy *pol);
/* impl->lookup, impl->resolve and impl->stats of every policy. */
int lru_lookup(void *cp, udc_ino dir, const char *name, size_t len, struct udc_attr *out);
int lru_resolve(void *cp, udc_ino dir, const char *name, size_t len, const struct udc_call *call,
		struct udc_attr *out);
void lru_stats(void *cp, struct udc_stats *st);

#endif /* UDC_STRESS_BASELINES_LRU_MUTEX_H */
