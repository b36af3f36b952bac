/* SPDX-License-Identifier: MIT */
/*
 * tests/common/tcache.h - making caches for tests, short wrappers, and a
 * failure recorder for worker threads.
 *
 * Caches made here have UDC_CFG_NO_RECLAIM_THREAD and a 1 GiB memory limit
 * unless told otherwise, so that nothing is reclaimed behind a test's back
 * and the contract's strict answers (a positive after udc_add is POSITIVE)
 * can be asserted.
 *
 * Criterion's assertions must run on the test's main thread; worker threads
 * record failures in a struct tfail (locked by its mutex) and the main
 * thread asserts after joining them (tfail_assert_none).
 */
#ifndef UDC_TEST_TCACHE_H
#define UDC_TEST_TCACHE_H

#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "include/udcache.h"
#include "common/model.h"

#define TC_ROOT ((udc_ino)1)
#define TC_MEMORY_LIMIT ((size_t)1 << 30)
#define TC_DEFAULT_LIMIT ((uint64_t)64 << 20)

/* A cache over @be (NULL: none) rooted at @root, with
 * UDC_CFG_NO_RECLAIM_THREAD | @flags and a 1 GiB limit.  Asserts success. */
udc_cache *tc_create(udc_ino root, const struct udc_backend *be, uint32_t flags);
udc_cache *tc_create_limit(udc_ino root, const struct udc_backend *be, uint32_t flags,
			   size_t limit);

/* Everything a test usually needs: a model store, a cache over it, and a
 * struct udc_call whose ctx is the model. */
struct tenv {
	udc_cache *c;
	struct model *m;
	struct udc_call call;
};
void tenv_init(struct tenv *e, uint32_t flags);
void tenv_init_be(struct tenv *e, const struct udc_backend *be, uint32_t flags);
void tenv_fini(struct tenv *e);

/* The full statistics (size = sizeof(struct udc_stats)). */
struct udc_stats tc_stats(udc_cache *c);

/*
 * A slab page open in another CPU's slot (the test thread moved) keeps
 * what was added or requeued into it, unswept, until it fills or
 * SWEEP_OPEN_MAX_MS (1 s, shrink/sweep.c) pass.  A test that counts
 * what sweeps did sleeps past that (tc_sleep_past_open_max) and makes the
 * sweeps run once more before it looks.
 */
#define TC_OPEN_MAX_MS 1000   /* SWEEP_OPEN_MAX_MS */
void tc_sleep_past_open_max(void);

static inline struct udc_attr tc_attr(udc_ino ino, uint32_t type, uint64_t cookie)
{
	struct udc_attr a = { .ino = ino, .type = type, .flags = 0, .cookie = cookie };

	return a;
}

static inline bool tc_attr_eq(const struct udc_attr *a, const struct udc_attr *b)
{
	return a->ino == b->ino && a->type == b->type && a->flags == b->flags &&
	       a->cookie == b->cookie;
}

/* Wrappers taking NUL-terminated names. */
int tc_lookup(udc_cache *c, udc_ino dir, const char *name, struct udc_attr *out);
int tc_resolve(struct tenv *e, udc_ino dir, const char *name, struct udc_attr *out);
int tc_walk(struct tenv *e, udc_ino start, const char *path, unsigned flags, struct udc_attr *out);
int tc_add(udc_cache *c, udc_ino dir, const char *name, udc_ino ino, uint32_t type,
	   uint64_t cookie);
int tc_add_neg(udc_cache *c, udc_ino dir, const char *name);
/* Tell the cache that @parent is the parent of directory @dir (udc_add of
 * ".."): a directory's ".." is recorded when told or asked, not by adding
 * its name. */
int tc_parent(udc_cache *c, udc_ino dir, udc_ino parent);
int tc_remove(udc_cache *c, udc_ino dir, const char *name);
int tc_invalidate(udc_cache *c, udc_ino dir, const char *name);
int tc_rename(udc_cache *c, udc_ino odir, const char *oname, udc_ino ndir, const char *nname,
	      udc_ino moved);
int tc_rmdir(udc_cache *c, udc_ino parent, const char *name, udc_ino dir);
/* Mark dir complete with a fill begun now (for names already told): 0 or -errno. */
int tc_complete(udc_cache *c, udc_ino dir);

/* Store and cache together: the store gets (dir, name) = attr and the cache
 * is told with udc_add (asserted to return 0), and of a directory its ".."
 * too (tc_parent). */
void tc_store_add(struct tenv *e, udc_ino dir, const char *name, udc_ino ino, uint32_t type,
		  uint64_t cookie);
/* Store only (the cache learns it through the backend). */
void tc_store_only(struct tenv *e, udc_ino dir, const char *name, udc_ino ino, uint32_t type,
		   uint64_t cookie);

/* "MISS", "POSITIVE", "NEGATIVE", or "-ENOENT" etc. for messages. */
const char *tc_res_str(int r);

/* Failures seen by worker threads. */
struct tfail {
	pthread_mutex_t lock;
	atomic_int count;
	char first[768]; /* protected by lock */
};
void tfail_init(struct tfail *f);
void tfail_rec(struct tfail *f, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
/* On the main thread: cr_assert that no failure was recorded. */
void tfail_assert_none(struct tfail *f);

#define TCHECK(f, cond, ...)                         \
	do {                                         \
		if (!(cond))                         \
			tfail_rec((f), __VA_ARGS__); \
	} while (0)

#endif
