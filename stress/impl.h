/* SPDX-License-Identifier: MIT */
/*
 * stress/impl.h - the name-cache interface udc-stress drives (--impl).
 *
 * Owns nothing at run time: the table of implementations and the one
 * interface every workload calls, so that udcache and the baselines in
 * stress/baselines/ run the same workloads side by side.  The interface is
 * udcache's public API (include/udcache.h) with the cache as a void
 * pointer: same arguments, same outcomes, same -errno values.  An
 * implementation that cannot do a call returns -EOPNOTSUPP; none may crash
 * on one.
 *
 * Contract every implementation keeps (the workloads check it):
 *  - lookup: UDC_POSITIVE (fills *out when out != NULL), UDC_NEGATIVE,
 *    UDC_MISS, or -EINVAL / -ENAMETOOLONG for a bad name (udcache's rules:
 *    1..UDC_NAME_MAX bytes, no '/', no NUL, not ".").
 *  - resolve: the cache, then cfg.backend on a miss, and the answer cached.
 *    0 or -ENOENT or the backend's error.  An answer that raced with a
 *    mutation of that name or of its directory is returned but not cached,
 *    so no call ever caches a stale answer.
 *  - walk: udc_walk's path rules ("//", ".", "..", trailing '/', symlinks
 *    through backend->readlink, -ELOOP, -ENOTDIR, -ENAMETOOLONG), and its
 *    consistency: the answer is a path that existed as a whole at one
 *    moment while the call ran, whatever renames and rmdirs are told to
 *    the cache concurrently.
 *  - add / add_negative / remove / rename / rmdir / invalidate_dir: as the
 *    udc_* calls of the same names.  After rmdir or invalidate_dir returns,
 *    no lookup in that directory gives an answer cached before the call.
 *  - stats: at least bytes_used, bytes_limit, nr_positive, nr_negative,
 *    evictions, backend_calls (the rest may be 0).  bytes_used counts what
 *    the implementation allocates for the cache (entries, names, tables),
 *    so that implementations compare.
 *
 * Locking: each implementation documents its own; every call may run on
 * any number of threads at once.
 *
 * Ordering: none here.
 */
#ifndef UDC_STRESS_IMPL_H
#define UDC_STRESS_IMPL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "include/udcache.h"

struct impl_config {
	size_t memory_limit; /* bytes; bounded implementations keep within it */
	size_t max_entries;  /* lru-mutex, s3fifo: at most this many entries (0: none;
			      * s3fifo then memory_limit / S3FIFO_ENTRY_BYTES) */
	udc_ino root;	     /* where absolute paths start */
	const struct udc_backend *backend; /* NULL: resolve/walk report a miss as -EAGAIN */
	uint64_t hash_key[2];		   /* name hash key, {0,0} = the implementation's choice */
	bool no_reclaim_thread;		   /* udcache: UDC_CFG_NO_RECLAIM_THREAD; kernel: no
					    * background shrinker (reclaim only in the caller) */
};

struct shrink_bytes_parts;

struct impl {
	const char *name;    /* what --impl takes */
	const char *summary; /* one line for --help */
	bool bounded;	     /* keeps bytes_used near memory_limit */
	void *(*create)(const struct impl_config *cfg); /* NULL and errno on failure */
	void (*destroy)(void *c);
	int (*lookup)(void *c, udc_ino dir, const char *name, size_t len, struct udc_attr *out);
	int (*resolve)(void *c, udc_ino dir, const char *name, size_t len,
		       const struct udc_call *call, struct udc_attr *out);
	int (*walk)(void *c, udc_ino start, const char *path, size_t len, unsigned flags,
		    const struct udc_call *call, struct udc_attr *out);
	int (*add)(void *c, udc_ino dir, const char *name, size_t len, const struct udc_attr *attr);
	int (*add_negative)(void *c, udc_ino dir, const char *name, size_t len, uint32_t client);
	int (*remove)(void *c, udc_ino dir, const char *name, size_t len);
	int (*rename)(void *c, udc_ino odir, const char *oname, size_t olen, udc_ino ndir,
		      const char *nname, size_t nlen, udc_ino moved);
	int (*rmdir)(void *c, udc_ino parent, const char *name, size_t len, udc_ino dir);
	int (*invalidate_dir)(void *c, udc_ino dir);
	/* Fill *st (st->size set by the caller, as for udc_stats_get). */
	void (*stats)(void *c, struct udc_stats *st);
	/* Where bytes_used is (shrink/shrink.h); NULL but for udcache's. */
	void (*bytes_parts)(void *c, struct shrink_bytes_parts *p);
	/* Finish the table resizes a preload made due, which run in other
	 * threads (udcache's worker, liburcu's for lfht), so that hits are
	 * timed in the steady state; NULL: the implementation resizes in the
	 * inserting call. */
	void (*settle)(void *c);
};

/* The value udcache-value and lfht-value give every positive. */
#define IMPL_VALUE_LEN 64
extern const unsigned char impl_value[IMPL_VALUE_LEN]; /* stress/impl.c */

/* Every implementation, udcache first; NULL-terminated. */
extern const struct impl *const impls[];
/* The implementation called name, or NULL. */
const struct impl *impl_find(const char *name);

extern const struct impl impl_udcache;	 /* stress/impl.c */
extern const struct impl impl_udcache_value; /* stress/impl.c: positives with values */
extern const struct impl impl_kernel;	 /* stress/baselines/kernel.c */
extern const struct impl impl_lru_mutex; /* stress/baselines/lru_mutex.c */
extern const struct impl impl_lfht;	 /* stress/baselines/lfht.c */
extern const struct impl impl_lfht_value; /* stress/baselines/lfht.c: positives with values */
extern const struct impl impl_ck_hs;	 /* stress/baselines/ck_hs.c */
extern const struct impl impl_s3fifo;	 /* stress/baselines/s3fifo.c */

#endif /* UDC_STRESS_IMPL_H */
