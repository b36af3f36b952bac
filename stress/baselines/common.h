/* SPDX-License-Identifier: MIT */
/*
 * stress/baselines/common.h - what the baseline name caches share.
 *
 * Owns nothing at run time.  Declares the pieces every baseline
 * (kernel.c, lru_mutex.c, lfht.c, ck_hs.c) needs and that must behave the
 * same in each, so that the comparison measures their data structures and
 * not differences in glue:
 *  - common/path.h: udcache's name and path rules, the same -errno values
 *    (name_check(), call_check(), walk_check(), path_next());
 *  - bl_hash(): one keyed 64-bit hash of (dir, name), siphash-free and fast
 *    (the baselines are not attacked);
 *  - struct bl_guard: the stale-answer guard.  A resolve snapshots the
 *    guard of its name before the backend call and caches the answer only
 *    if no mutation of that name, or of its directory, or rename/rmdir ran
 *    since.  It stands for what the kernel gets from the parent's i_rwsem
 *    and d_alloc_parallel (a lookup is never cached over a racing create or
 *    unlink), at the cost of a few shared counters;
 *  - bl_walk(): path walk (udc_walk's rules) over a baseline's resolve,
 *    retried when the guard's rename sequence moved (the kernel's
 *    rename_lock seqlock), so that a walk never returns a path that did not
 *    exist as a whole;
 *  - struct bl_head (first in every baseline's cache) and struct bl_ops (a
 *    baseline's locks and table behind hooks): the calls that are the same
 *    in every baseline but for those, written once (bl_create, bl_destroy,
 *    bl_add, bl_add_negative, bl_remove, bl_rename's checks, bl_rmdir,
 *    bl_invalidate_dir, a resolve's miss), and BL_OPS/BL_IMPL to make a
 *    baseline's tables.
 *    Lookups, and a resolve's hit, stay each baseline's own direct code:
 *    the hooks are for mutations, misses, walks and set-up only;
 *  - bl_mem: bytes allocated, counted by the allocation helpers.
 *
 * Locking: struct bl_guard is lock-free (atomic counters); bl_mem and
 * bl_head's counters are atomic counters.  None takes a lock; the shared
 * calls take the baseline's, through its bl_ops hooks.
 *
 * Ordering: see stress/baselines/common.c.
 */
#ifndef UDC_STRESS_BASELINES_COMMON_H
#define UDC_STRESS_BASELINES_COMMON_H

#include <errno.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "common/path.h"
#include "include/udcache.h"
#include "stress/impl.h"

/* Keyed hash of (dir, name): the same function in every baseline. */
uint64_t bl_hash(const uint64_t key[2], udc_ino dir, const char *name, size_t len);

#define BL_GUARD_STRIPES 4096 /* per-name sequence counters, by hash */

struct bl_guard {
	/* Bumped by every mutation of a name whose hash falls in the stripe. */
	_Atomic uint64_t name_seq[BL_GUARD_STRIPES];
	/* Bumped by rename, rmdir and invalidate_dir (directory-wide changes);
	 * odd while one is in progress. */
	_Atomic uint64_t dir_seq;
};

struct bl_snap {
	uint64_t name_seq, dir_seq;
};

/* Taken before asking the backend about (hash). */
struct bl_snap bl_guard_snap(struct bl_guard *g, uint64_t hash);
/* Whether an answer fetched after snap may be cached: call it with the
 * bucket (or cache) lock held, right before inserting. */
bool bl_guard_valid(struct bl_guard *g, uint64_t hash, struct bl_snap snap);
/* A mutation of one name: begin before changing the table, end after. */
void bl_guard_name_begin(struct bl_guard *g, uint64_t hash);
void bl_guard_name_end(struct bl_guard *g, uint64_t hash);
/* A directory-wide change (rename, rmdir, invalidate_dir). */
void bl_guard_dir_begin(struct bl_guard *g);
void bl_guard_dir_end(struct bl_guard *g);

typedef int (*bl_resolve_fn)(void *c, udc_ino dir, const char *name, size_t len,
			     const struct udc_call *call, struct udc_attr *out);

/*
 * What the shared calls below need of a baseline: its locks and its table,
 * behind one indirect call each.  Only mutations, a resolve's miss, walks
 * and invalidate_dir go through it; every lookup, and a resolve's hit, stay
 * direct calls in the baseline.  kernel.c fills resolve and the dir_*
 * hooks only (its names are added, removed and cached its own way).
 */
struct bl_ops {
	bool rcu;	       /* bl_rcu_enter() before the table is touched */
	bl_resolve_fn resolve; /* its resolve, which bl_walk() walks with */
	/* bl_create()'s part: the rest of a cache that is zeroed but for its
	 * bl_head; 0, or -errno and fini undoes what was made.  fini frees all
	 * the cache holds, of a cache init made in whole or in part. */
	int (*init)(void *c);
	void (*fini)(void *c);
	/* The lock a name's table changes, and a resolve's guard check before
	 * its insert, are made under (hash: the name's bl_hash()); NULL: the
	 * baseline has one lock, dir_lock's, for everything. */
	void (*lock)(void *c, uint64_t hash);
	void (*unlock)(void *c, uint64_t hash);
	/* A new entry for (dir, name) answering attr (NULL: negative), in no
	 * table; NULL on ENOMEM.  No lock needed. */
	void *(*entry_new)(void *c, uint64_t hash, udc_ino dir, const char *name, size_t len,
			   const struct udc_attr *attr);
	/* Make *e's answer the name's: 0 (*e set to NULL if the table took it)
	 * or -ENOMEM (nothing changed).  Locked. */
	int (*publish_locked)(void *c, uint64_t hash, void **e);
	/* Free an entry no table holds, or NULL.  No lock needed. */
	void (*entry_free)(void *c, void *e);
	/* Drop what is cached for (dir, name), if anything; *was (may be NULL)
	 * gets a dropped positive's attr, ino UDC_INO_NONE if none.  Locked. */
	void (*drop_locked)(void *c, uint64_t hash, udc_ino dir, const char *name, size_t len,
			    struct udc_attr *was);
	/* The lock serialising directory-wide changes, and the dropping of
	 * every name of dir under it (the guard's dir_seq odd), for rmdir and
	 * invalidate_dir; dir_lock NULL: bl_head.dir_mutex is that lock. */
	void (*dir_lock)(void *c);
	void (*dir_unlock)(void *c);
	void (*dir_forget)(void *c, udc_ino dir);
	/* impl->rename once bl_rename() checked it: the names are good and
	 * differ, and bl_rcu_enter() is done (rcu). */
	int (*rename)(void *c, udc_ino odir, const char *oname, size_t olen, udc_ino ndir,
		      const char *nname, size_t nlen, udc_ino moved);
};

/*
 * The struct bl_ops of a baseline whose hooks are named p##_resolve,
 * p##_init, p##_fini, p##_entry_new, p##_publish_locked, p##_entry_free,
 * p##_drop_locked and p##_dir_forget; its locks are given.
 */
#define BL_OPS(p, use_rcu, name_lock, name_unlock, dirs_lock, dirs_unlock)                        \
	{                                                                                         \
		.rcu = use_rcu, .resolve = p##_resolve, .init = p##_init, .fini = p##_fini,       \
		.lock = name_lock, .unlock = name_unlock, .entry_new = p##_entry_new,             \
		.publish_locked = p##_publish_locked, .entry_free = p##_entry_free,               \
		.drop_locked = p##_drop_locked, .dir_lock = dirs_lock, .dir_unlock = dirs_unlock, \
		.dir_forget = p##_dir_forget, .rename = p##_rename                                \
	}

/*
 * struct impl for a baseline over struct bl_ops: walk and invalidate_dir
 * are common.c's; BL_IMPL's add, add_negative, remove and rmdir too,
 * BL_IMPL_OWN's are the baseline's own (p##_add ...).  The rest is the
 * baseline's own, named p##_create, p##_lookup and so on.
 */
#define BL_IMPL_BASE(p, nm, sum, bnd)                                                           \
	.name = nm, .summary = sum, .bounded = bnd, .create = p##_create, .lookup = p##_lookup, \
	.resolve = p##_resolve, .walk = bl_walk, .rename = bl_rename,                           \
	.invalidate_dir = bl_invalidate_dir, .stats = p##_stats
#define BL_IMPL(p, nm, sum, bnd)                                                      \
	{                                                                             \
		BL_IMPL_BASE(p, nm, sum, bnd), .destroy = bl_destroy, .add = bl_add,  \
					       .add_negative = bl_add_negative,       \
					       .remove = bl_remove, .rmdir = bl_rmdir \
	}
#define BL_IMPL_OWN(p, nm, sum, bnd)                                                    \
	{                                                                               \
		BL_IMPL_BASE(p, nm, sum, bnd), .destroy = p##_destroy, .add = p##_add,  \
					       .add_negative = p##_add_negative,        \
					       .remove = p##_remove, .rmdir = p##_rmdir \
	}

/* The first member of every baseline's cache: the shared calls start from it. */
struct bl_head {
	const struct bl_ops *ops;
	struct impl_config cfg;
	pthread_mutex_t *dir_mutex; /* see bl_ops.dir_lock; set at create */
	/* bl_resolve_miss()'s counters (kernel.c counts in its own stripes) */
	_Atomic uint64_t backend_calls, stale_answers;
	struct bl_guard guard;
};

void bl_head_init(struct bl_head *h, const struct bl_ops *ops, const struct impl_config *cfg);
/* impl->create of a baseline over ops: a zeroed, cache-line aligned cache
 * of size bytes, its bl_head set, then ops->init; NULL and errno on failure. */
void *bl_create(const struct impl_config *cfg, size_t size, const struct bl_ops *ops);
/* impl->destroy: ops->fini, then the cache freed. */
void bl_destroy(void *c);

/*
 * impl->walk: udc_walk's rules over ops->resolve(c, dir, name, ...), with
 * cfg->root for absolute paths and backend->readlink for symlinks.  ".."
 * goes back to the component the walk came from; at the start of the walk it
 * is resolved as a name (the backend answers it).  Retried while the guard's
 * dir_seq moved (rename or rmdir in between).
 */
int bl_walk(void *c, udc_ino start, const char *path, size_t len, unsigned flags,
	    const struct udc_call *call, struct udc_attr *out);

/*
 * A resolve that missed (dir, name) in the cache: -EAGAIN with no backend,
 * else a guard snapshot, backend_calls counted and bl_resolve_fetch().
 */
int bl_resolve_miss(void *c, udc_ino dir, const char *name, size_t len, const struct udc_call *call,
		    struct udc_attr *out);

/* A lock-free baseline's resolve after its lookup answered @r: the
 * answer (0 or -ENOENT), an error as it is, or bl_resolve_miss on a miss. */
static inline int bl_resolve_after(int r, void *c, udc_ino dir, const char *name, size_t len,
				   const struct udc_call *call, struct udc_attr *out)
{
	if (r == UDC_MISS)
		return bl_resolve_miss(c, dir, name, len, call, out);
	return r == UDC_POSITIVE ? 0 : r == UDC_NEGATIVE ? -ENOENT : r;
}
/*
 * The backend's answer for (dir, name, hashed hash), asked with no lock
 * held, cached (entry_new, then publish_locked under lock) only if the
 * guard still holds snap (else stale_answers counted); returned as
 * resolve returns it, *out (may be NULL) filled on 0.
 */
int bl_resolve_fetch(void *c, uint64_t hash, struct bl_snap snap, udc_ino dir, const char *name,
		     size_t len, const struct udc_call *call, struct udc_attr *out);
/* impl->remove: call_check(), then drop_locked() under lock, as a mutation of the name. */
int bl_remove(void *c, udc_ino dir, const char *name, size_t len);
/* impl->invalidate_dir: dir_forget() under dir_lock, as a directory-wide change. */
int bl_invalidate_dir(void *c, udc_ino dir);
/* impl->rmdir: as a directory-wide change, drop (parent, name), then
 * dir_forget() dir (UDC_INO_NONE: the dropped name's, if a directory). */
int bl_rmdir(void *c, udc_ino parent, const char *name, size_t len, udc_ino dir);
/* impl->rename: call_check() of the new name then the old, -EINVAL for
 * "..", 0 when old and new are one name, else ops->rename. */
int bl_rename(void *c, udc_ino odir, const char *oname, size_t olen, udc_ino ndir,
	      const char *nname, size_t nlen, udc_ino moved);

/* Bytes a baseline holds; the baselines add and subtract as they allocate. */
struct bl_mem {
	_Atomic int64_t bytes;
};
void *bl_alloc(struct bl_mem *m, size_t size);	      /* calloc'd, counted; NULL on ENOMEM */
void bl_free(struct bl_mem *m, void *p, size_t size); /* size as allocated */
uint64_t bl_mem_bytes(const struct bl_mem *m);

/*
 * Glue the baselines share, so that each behaves as udcache at its edges.
 */

/* Whether udc_add() takes attr: not NULL, ino set, a known type, flags 0. */
bool bl_attr_valid(const struct udc_attr *attr);
/* udc_add()'s checks: call_check(), bl_attr_valid(), ".." only as a directory. */
int bl_add_check(const void *c, udc_ino dir, const char *name, size_t len,
		 const struct udc_attr *attr);
/* impl->add: bl_add_check(), then entry_new() and publish_locked() under lock,
 * as a mutation of the name. */
int bl_add(void *c, udc_ino dir, const char *name, size_t len, const struct udc_attr *attr);
/* impl->add_negative: call_check(), then as bl_add() with a negative (no
 * per-client admission in these baselines: the client is ignored). */
int bl_add_negative(void *c, udc_ino dir, const char *name, size_t len, uint32_t client);
/*
 * cfg->backend->lookup(call's ctx, dir, name): 0 with *out filled, -ENOENT,
 * -EAGAIN with no backend, -EIO for an answer that breaks the backend's
 * contract (positive return, or 0 with an attr bl_attr_valid() refuses),
 * or the backend's error.  May block; call it with no lock held.
 */
int bl_backend_lookup(const struct impl_config *cfg, const struct udc_call *call, udc_ino dir,
		      const char *name, size_t len, struct udc_attr *out);
/* Copy *from into *st as udc_stats_get() would: the V0 fields or all of
 * them, by st->size; any other size leaves *st alone. */
void bl_stats_put(struct udc_stats *st, const struct udc_stats *from);

/*
 * urcu-memb registration for the RCU baselines (lfht.c, ck_hs.c): call
 * bl_rcu_enter() at the top of every call that reads or defers under RCU.
 * The first call on a thread registers it (unless someone, e.g. udcache,
 * already did) and a pthread key destructor unregisters it at thread exit.
 */
extern __thread bool bl_rcu_ready;
void bl_rcu_register_slow(void);
static inline void bl_rcu_enter(void)
{
	if (__builtin_expect(!bl_rcu_ready, 0))
		bl_rcu_register_slow();
}

/* call_check(), then (the arguments good) bl_rcu_enter(): the start of
 * every call of an RCU baseline on a name. */
static inline int bl_check_rcu(const void *c, udc_ino dir, const char *name, size_t len)
{
	int r = call_check(c, dir, name, len);

	if (r)
		return r;
	bl_rcu_enter();
	return 0;
}

#endif /* UDC_STRESS_BASELINES_COMMON_H */
