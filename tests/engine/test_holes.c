/* SPDX-License-Identifier: MIT */
/*
 * tests/engine/test_holes.c - the wrong answers and crashes an embedder
 * found (issue 11), one regression test each: a complete directory whose
 * names were lost during the fill, ".." after renames the cache could not
 * follow, ".." resolves racing a rename, a backend that resolves its own
 * name, a thread that exits or is cancelled inside the backend, and
 * backend answers that break the contract.
 */
#include <criterion/criterion.h>
#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <unistd.h>

#include "common/tcache.h"

#define D_INO ((udc_ino)2)
#define E_INO ((udc_ino)3)
#define SUB_INO ((udc_ino)30)

static int name_of(char *buf, size_t size, unsigned i)
{
	return snprintf(buf, size, "file-with-a-longish-name-%06u", i);
}

/* ------------------------------------------------------------------ */
/* 1. the fill protocol */

/* A fill at a binding limit loses its own names to the adds' reclaim: it
 * must not complete, and no name that exists may read as absent. */
Test(holes, fill_evicted_during_fill_is_not_complete)
{
	udc_cache *c = tc_create_limit(TC_ROOT, NULL, 0, (size_t)2 << 20);
	struct udc_fill f;
	char nm[64];
	const unsigned n = 40000;

	cr_assert_eq(udc_dir_fill_begin(c, D_INO, &f), 0);
	for (unsigned i = 0; i < n; i++) {
		int len = name_of(nm, sizeof(nm), i);
		struct udc_attr a = tc_attr(1000 + i, UDC_TYPE_REG, i);
		cr_assert_eq(udc_add(c, D_INO, nm, (size_t)len, &a), 0);
	}
	struct udc_stats st = tc_stats(c);
	cr_assert_gt(st.evictions, 0, "the limit did not bind: nothing to test");
	int r = udc_dir_complete(c, D_INO, &f);
	cr_assert_eq(r, -ESTALE, "complete after its names were evicted = %s", tc_res_str(r));
	unsigned wrong = 0;
	for (unsigned i = 0; i < n; i++) {
		int len = name_of(nm, sizeof(nm), i);
		if (udc_lookup(c, D_INO, nm, (size_t)len, NULL) == UDC_NEGATIVE)
			wrong++;
	}
	cr_assert_eq(wrong, 0, "%u of %u existing names answered \"does not exist\"", wrong, n);
	udc_destroy(c);
}

/* Evictions of the directory's names after it is complete clear it. */
Test(holes, eviction_after_complete_clears_it)
{
	udc_cache *c = tc_create_limit(TC_ROOT, NULL, 0, (size_t)2 << 20);
	struct udc_fill f;
	char nm[64];

	cr_assert_eq(udc_dir_fill_begin(c, D_INO, &f), 0);
	for (unsigned i = 0; i < 100; i++) {
		int len = name_of(nm, sizeof(nm), i);
		cr_assert_eq(tc_add(c, D_INO, nm, 1000 + i, UDC_TYPE_REG, 0) == 0 && len > 0, 1);
	}
	cr_assert_eq(udc_dir_complete(c, D_INO, &f), 0);
	cr_assert_eq(tc_lookup(c, D_INO, "absent", NULL), UDC_NEGATIVE);
	udc_shrink(c, SIZE_MAX);   /* everything goes */
	for (unsigned i = 0; i < 100; i++) {
		int len = name_of(nm, sizeof(nm), i);
		int r = udc_lookup(c, D_INO, nm, (size_t)len, NULL);
		cr_assert_neq(r, UDC_NEGATIVE, "%s evicted from a complete dir answers negative", nm);
	}
	udc_destroy(c);
}

/* Every way of losing a name between begin and complete fails the fill. */
Test(holes, every_loss_fails_the_fill)
{
	udc_cache *c = tc_create(TC_ROOT, NULL, 0);
	struct udc_fill f;

	/* udc_invalidate of a name */
	cr_assert_eq(udc_dir_fill_begin(c, D_INO, &f), 0);
	cr_assert_eq(tc_add(c, D_INO, "a", 10, UDC_TYPE_REG, 0), 0);
	cr_assert_eq(tc_add(c, D_INO, "b", 11, UDC_TYPE_REG, 0), 0);
	cr_assert_eq(tc_invalidate(c, D_INO, "a"), 0);
	cr_assert_eq(udc_dir_complete(c, D_INO, &f), -ESTALE);
	cr_assert_eq(tc_lookup(c, D_INO, "a", NULL), UDC_MISS);

	/* udc_invalidate_dir */
	cr_assert_eq(udc_dir_fill_begin(c, D_INO, &f), 0);
	cr_assert_eq(tc_add(c, D_INO, "a", 10, UDC_TYPE_REG, 0), 0);
	cr_assert_eq(udc_invalidate_dir(c, D_INO), 0);
	cr_assert_eq(udc_dir_complete(c, D_INO, &f), -ESTALE);

	/* a rename into D whose old name was not cached */
	cr_assert_eq(udc_dir_fill_begin(c, D_INO, &f), 0);
	cr_assert_eq(tc_add(c, D_INO, "a", 10, UDC_TYPE_REG, 0), 0);
	cr_assert_eq(tc_rename(c, E_INO, "uncached", D_INO, "z", UDC_INO_NONE), 0);
	cr_assert_eq(udc_dir_complete(c, D_INO, &f), -ESTALE);
	cr_assert_eq(tc_lookup(c, D_INO, "z", NULL), UDC_MISS);

	/* what does not lose a name keeps the fill good: adds, removes,
	 * negatives, renames of cached names */
	cr_assert_eq(udc_dir_fill_begin(c, D_INO, &f), 0);
	cr_assert_eq(tc_add(c, D_INO, "a", 10, UDC_TYPE_REG, 0), 0);
	cr_assert_eq(tc_add(c, D_INO, "b", 11, UDC_TYPE_REG, 0), 0);
	cr_assert_eq(tc_add(c, D_INO, "a", 12, UDC_TYPE_REG, 0), 0);
	cr_assert_eq(tc_remove(c, D_INO, "b"), 0);
	cr_assert_eq(tc_add_neg(c, D_INO, "n"), 0);
	cr_assert_eq(tc_add_neg(c, D_INO, "c"), 0);   /* known absent: replaces nothing */
	cr_assert_eq(tc_rename(c, D_INO, "a", D_INO, "c", 12), 0);
	cr_assert_eq(udc_dir_complete(c, D_INO, &f), 0);
	cr_assert_eq(tc_lookup(c, D_INO, "c", NULL), UDC_POSITIVE);
	cr_assert_eq(tc_lookup(c, D_INO, "a", NULL), UDC_NEGATIVE);
	cr_assert_eq(tc_lookup(c, D_INO, "b", NULL), UDC_NEGATIVE);
	udc_destroy(c);
}

/* The backend of resolve_not_cached: a mutation of the name races it. */
static int racing_lookup(void *ctx, udc_ino dir, const char *name, size_t len,
			 struct udc_attr *out)
{
	udc_cache *c = ctx;

	cr_assert_eq(udc_invalidate(c, dir, name, len), 0);   /* the answer goes stale */
	*out = tc_attr(500, UDC_TYPE_REG, 0);
	return 0;
}

/* A READDIRPLUS-style fill from resolves: an answer returned but not
 * cached fails the fill. */
Test(holes, resolve_answer_not_cached_fails_the_fill)
{
	static const struct udc_backend be = { .lookup = racing_lookup };
	udc_cache *c = tc_create(TC_ROOT, &be, 0);
	struct udc_call call = { .ctx = c };
	struct udc_fill f;
	struct udc_attr a;

	cr_assert_eq(udc_dir_fill_begin(c, D_INO, &f), 0);
	cr_assert_eq(udc_resolve(c, D_INO, "x", 1, &call, &a), 0);
	cr_assert_eq(a.ino, 500);
	cr_assert_eq(tc_lookup(c, D_INO, "x", NULL), UDC_MISS, "the stale answer was cached");
	cr_assert_eq(udc_dir_complete(c, D_INO, &f), -ESTALE);
	cr_assert_eq(tc_lookup(c, D_INO, "x", NULL), UDC_MISS);
	udc_destroy(c);
}

/* A fill whose directory object was freed and made again must fail. */
Test(holes, fill_of_a_freed_directory_object_fails)
{
	udc_cache *c = tc_create(TC_ROOT, NULL, 0);
	struct udc_fill f;

	cr_assert_eq(udc_dir_fill_begin(c, D_INO, &f), 0);
	cr_assert_eq(tc_add(c, D_INO, "a", 10, UDC_TYPE_REG, 0), 0);
	udc_shrink(c, SIZE_MAX);   /* the name and the idle object go */
	cr_assert_eq(tc_add(c, D_INO, "b", 11, UDC_TYPE_REG, 0), 0);
	int r = udc_dir_complete(c, D_INO, &f);
	cr_assert_eq(r, -ESTALE, "complete over a new object = %s", tc_res_str(r));
	cr_assert_neq(tc_lookup(c, D_INO, "a", NULL), UDC_NEGATIVE);
	udc_destroy(c);
}

/* ------------------------------------------------------------------ */
/* 2. ".." after renames the cache could not follow */

Test(holes, dotdot_after_rename_with_unknown_ino)
{
	udc_cache *c = tc_create(TC_ROOT, NULL, 0);
	struct udc_attr got;

	cr_assert_eq(tc_add(c, D_INO, "sub", SUB_INO, UDC_TYPE_DIR, 0), 0);
	cr_assert_eq(tc_parent(c, SUB_INO, D_INO), 0);
	cr_assert_eq(tc_add(c, SUB_INO, "f", 31, UDC_TYPE_REG, 0), 0);   /* keeps its object */
	cr_assert_eq(tc_lookup(c, SUB_INO, "..", &got), UDC_POSITIVE);
	cr_assert_eq(got.ino, D_INO);
	cr_assert_eq(tc_invalidate(c, D_INO, "sub"), 0);   /* its entry is no longer cached */
	cr_assert_eq(tc_rename(c, D_INO, "sub", E_INO, "sub2", UDC_INO_NONE), 0);
	int r = tc_lookup(c, SUB_INO, "..", &got);
	cr_assert(r == UDC_MISS || (r == UDC_POSITIVE && got.ino == E_INO),
		  "(sub, \"..\") after an unknown move = %s ino %llu", tc_res_str(r),
		  (unsigned long long)got.ino);
	/* the same through a walk */
	struct udc_attr w;
	r = udc_walk(c, SUB_INO, "../x", 4, 0, NULL, &w);
	cr_assert_eq(r, -EAGAIN, "walk through a stale \"..\" = %s", tc_res_str(r));
	udc_destroy(c);
}

Test(holes, dotdot_of_a_directory_replaced_uncached)
{
	udc_cache *c = tc_create(TC_ROOT, NULL, 0);
	struct udc_attr got, parent = tc_attr(E_INO, UDC_TYPE_DIR, 0);

	/* 40 is E/"t", known only by its "..": its entry is not cached */
	cr_assert_eq(udc_add(c, 40, "..", 2, &parent), 0);
	cr_assert_eq(tc_add(c, 40, "keep", 41, UDC_TYPE_REG, 0), 0);
	cr_assert_eq(tc_lookup(c, 40, "..", &got), UDC_POSITIVE);
	cr_assert_eq(tc_add(c, D_INO, "x", 50, UDC_TYPE_DIR, 0), 0);
	cr_assert_eq(tc_parent(c, 50, D_INO), 0);
	cr_assert_eq(tc_add(c, 50, "keep", 51, UDC_TYPE_REG, 0), 0);   /* keeps its object */
	cr_assert_eq(tc_rename(c, D_INO, "x", E_INO, "t", 50), 0);   /* over 40 */
	int r = tc_lookup(c, 40, "..", &got);
	cr_assert_eq(r, UDC_MISS, "a replaced directory's \"..\" = %s ino %llu", tc_res_str(r),
		     (unsigned long long)got.ino);
	cr_assert_eq(tc_lookup(c, 50, "..", &got), UDC_POSITIVE, "the moved one's");
	cr_assert_eq(got.ino, E_INO);
	/* a target known absent costs nothing */
	cr_assert_eq(tc_add_neg(c, E_INO, "free"), 0);
	cr_assert_eq(tc_rename(c, E_INO, "t", E_INO, "free", 50), 0);
	cr_assert_eq(tc_lookup(c, 50, "..", &got), UDC_POSITIVE);
	udc_destroy(c);
}

Test(holes, rmdir_of_an_unknown_directory_distrusts_dotdot)
{
	udc_cache *c = tc_create(TC_ROOT, NULL, 0);
	struct udc_attr got, parent = tc_attr(D_INO, UDC_TYPE_DIR, 0);

	cr_assert_eq(udc_add(c, SUB_INO, "..", 2, &parent), 0);
	cr_assert_eq(tc_rmdir(c, D_INO, "sub", UDC_INO_NONE), 0);
	cr_assert_eq(tc_lookup(c, SUB_INO, "..", &got), UDC_MISS);
	udc_destroy(c);
}

/* ------------------------------------------------------------------ */
/* 3. ".." resolves racing a rename */

static int dotdot_racing_lookup(void *ctx, udc_ino dir, const char *name, size_t len,
				struct udc_attr *out)
{
	udc_cache *c = ctx;

	cr_assert(len == 2 && name[0] == '.' && dir == SUB_INO);
	/* the store answers D, then the directory moves to E and the cache is told */
	*out = tc_attr(D_INO, UDC_TYPE_DIR, 0);
	cr_assert_eq(tc_rename(c, D_INO, "sub", E_INO, "sub2", SUB_INO), 0);
	return 0;
}

Test(holes, dotdot_resolve_racing_rename_is_not_cached)
{
	static const struct udc_backend be = { .lookup = dotdot_racing_lookup };
	udc_cache *c = tc_create(TC_ROOT, &be, 0);
	struct udc_call call = { .ctx = c };
	struct udc_attr got;

	cr_assert_eq(tc_add(c, SUB_INO, "f", 31, UDC_TYPE_REG, 0), 0);
	cr_assert_eq(udc_resolve(c, SUB_INO, "..", 2, &call, &got), 0);
	cr_assert_eq(got.ino, D_INO, "the answer of the call itself");
	int r = tc_lookup(c, SUB_INO, "..", &got);
	cr_assert(r == UDC_MISS || (r == UDC_POSITIVE && got.ino == E_INO),
		  "after the rename: (sub, \"..\") = %s ino %llu", tc_res_str(r),
		  (unsigned long long)got.ino);
	cr_assert_geq(tc_stats(c).stale_answers, 1);
	udc_destroy(c);
}

/* ------------------------------------------------------------------ */
/* 4. a backend that resolves its own name */

static int self_lookup(void *ctx, udc_ino dir, const char *name, size_t len,
		       struct udc_attr *out)
{
	udc_cache *c = ctx;
	struct udc_call call = { .ctx = c };

	if (len == 1 && name[0] == 'x') {
		cr_assert_eq(udc_resolve(c, dir, "x", 1, &call, NULL), -EDEADLK);
		cr_assert_eq(udc_walk(c, dir, "x", 1, 0, &call, NULL), -EDEADLK);
		/* another name recurses once, and comes back to x */
		cr_assert_eq(udc_resolve(c, dir, "y", 1, &call, NULL), 0);
	} else {
		cr_assert_eq(udc_resolve(c, dir, "x", 1, &call, NULL), -EDEADLK);
	}
	*out = tc_attr(len == 1 && name[0] == 'x' ? 70 : 71, UDC_TYPE_REG, 0);
	return 0;
}

Test(holes, backend_resolving_its_own_name_gets_edeadlk)
{
	static const struct udc_backend be = { .lookup = self_lookup };
	udc_cache *c = tc_create(TC_ROOT, &be, 0);
	struct udc_call call = { .ctx = c };
	struct udc_attr got;

	alarm(60);   /* a hang fails the test instead of blocking the suite */
	cr_assert_eq(udc_resolve(c, D_INO, "x", 1, &call, &got), 0);
	cr_assert_eq(got.ino, 70);
	cr_assert_eq(tc_lookup(c, D_INO, "y", &got), UDC_POSITIVE);
	alarm(0);
	udc_destroy(c);
}

/* ------------------------------------------------------------------ */
/* 5. threads that exit or are cancelled inside the backend */

struct exit_ctx {
	atomic_int calls;
	atomic_int mode;          /* 0: answer; 1: pthread_exit; 2: block to be cancelled */
	atomic_int in_backend;
};

static int exiting_lookup(void *ctx, udc_ino dir, const char *name, size_t len,
			  struct udc_attr *out)
{
	struct exit_ctx *x = ctx;

	(void)dir, (void)name, (void)len;
	atomic_fetch_add(&x->calls, 1);
	int mode = atomic_exchange(&x->mode, 0);
	if (mode == 1)
		pthread_exit(NULL);
	if (mode == 2) {
		atomic_store(&x->in_backend, 1);
		for (;;)
			pause();   /* a cancellation point */
	}
	*out = tc_attr(80, UDC_TYPE_REG, 0);
	return 0;
}

struct resolver {
	udc_cache *c;
	struct exit_ctx *x;
	int r;
};

static void *resolver_main(void *arg)
{
	struct resolver *rv = arg;
	struct udc_call call = { .ctx = rv->x };

	rv->r = udc_resolve(rv->c, D_INO, "n", 1, &call, NULL);
	return NULL;
}

static void wait_in_backend(struct exit_ctx *x)
{
	while (!atomic_load(&x->in_backend))
		usleep(1000);
}

Test(holes, thread_exit_in_backend_leaves_nothing_behind)
{
	static const struct udc_backend be = { .lookup = exiting_lookup };
	struct exit_ctx x = { 0 };
	udc_cache *c = tc_create(TC_ROOT, &be, 0);
	struct resolver rv = { .c = c, .x = &x };
	pthread_t t;

	alarm(60);
	atomic_store(&x.mode, 1);
	cr_assert_eq(pthread_create(&t, NULL, resolver_main, &rv), 0);
	cr_assert_eq(pthread_join(t, NULL), 0);
	/* the name is usable again: the backend is asked and answers */
	struct udc_call call = { .ctx = &x };
	struct udc_attr got;
	cr_assert_eq(udc_resolve(c, D_INO, "n", 1, &call, &got), 0);
	cr_assert_eq(got.ino, 80);
	cr_assert_eq(atomic_load(&x.calls), 2);
	alarm(0);
	udc_destroy(c);
}

Test(holes, thread_cancelled_in_backend_hands_over_to_its_waiter)
{
	static const struct udc_backend be = { .lookup = exiting_lookup };
	struct exit_ctx x = { 0 };
	udc_cache *c = tc_create(TC_ROOT, &be, 0);
	struct resolver owner = { .c = c, .x = &x }, waiter = { .c = c, .x = &x, .r = 99 };
	pthread_t to, tw;

	alarm(60);
	atomic_store(&x.mode, 2);
	cr_assert_eq(pthread_create(&to, NULL, resolver_main, &owner), 0);
	wait_in_backend(&x);
	cr_assert_eq(pthread_create(&tw, NULL, resolver_main, &waiter), 0);
	usleep(50000);   /* the waiter joins the call in flight (or asks itself: both fine) */
	cr_assert_eq(pthread_cancel(to), 0);
	void *ret;
	cr_assert_eq(pthread_join(to, &ret), 0);
	cr_assert_eq(ret, PTHREAD_CANCELED);
	cr_assert_eq(pthread_join(tw, NULL), 0);
	cr_assert_eq(waiter.r, 0, "the waiter's resolve = %s", tc_res_str(waiter.r));
	cr_assert_eq(tc_lookup(c, D_INO, "n", NULL), UDC_POSITIVE);
	alarm(0);
	udc_destroy(c);
}

/* ------------------------------------------------------------------ */
/* 8. backend garbage */

static int garbage_lookup(void *ctx, udc_ino dir, const char *name, size_t len,
			  struct udc_attr *out)
{
	(void)ctx, (void)dir, (void)len;
	switch (name[0]) {
	case 'p':
		return 1;                       /* positive "success" */
	case 'h':
		return -100000;                 /* not an errno */
	case 'l':
		*out = tc_attr(90, UDC_TYPE_SYMLINK, 0);
		return 0;
	case 'z':
		*out = tc_attr(91, UDC_TYPE_SYMLINK, 0);
		return 0;
	case 'b':
		*out = tc_attr(92, 77, 0);      /* no such type */
		return 0;
	default:
		return -ENOENT;
	}
}

static ssize_t garbage_readlink(void *ctx, udc_ino ino, char *buf, size_t size)
{
	(void)ctx;
	if (ino == 90)
		return -((ssize_t)1 << 40);     /* truncated to int, this was 0 */
	memcpy(buf, "a\0b", 3);                 /* a NUL inside a target */
	return size >= 3 ? 3 : -ERANGE;
}

Test(holes, backend_garbage_is_eio)
{
	static const struct udc_backend be = { .lookup = garbage_lookup,
					       .readlink = garbage_readlink };
	udc_cache *c = tc_create(TC_ROOT, &be, 0);
	struct udc_call call = { 0 };
	struct udc_attr got;

	cr_assert_eq(udc_resolve(c, D_INO, "p", 1, &call, &got), -EIO);
	cr_assert_eq(udc_resolve(c, D_INO, "h", 1, &call, &got), -EIO);
	cr_assert_eq(udc_resolve(c, D_INO, "b", 1, &call, &got), -EIO);
	int r = udc_walk(c, D_INO, "l/x", 3, 0, &call, &got);
	cr_assert_eq(r, -EIO, "walk through a readlink of -2^40 = %s", tc_res_str(r));
	r = udc_walk(c, D_INO, "z/x", 3, 0, &call, &got);
	cr_assert_eq(r, -EIO, "walk through a target with a NUL = %s", tc_res_str(r));
	cr_assert_eq(tc_lookup(c, D_INO, "p", NULL), UDC_MISS, "garbage was cached");
	cr_assert_eq(tc_lookup(c, D_INO, "h", NULL), UDC_MISS, "garbage was cached");
	udc_destroy(c);   /* the validators (UDC_DEBUG) find no NUL-named entry */
}

/* ".." answers that make a loop of directories (a backend's mistake, or
 * two answers of a store that moved them between) hold no memory: a
 * record names its parent by ino, with no reference on its object, so
 * the loop's objects go like any others.  (With references, a loop was
 * refused: the objects would have held each other forever.) */
Test(holes, dotdot_loop_holds_no_memory)
{
	udc_cache *c = tc_create(TC_ROOT, NULL, 0);
	struct udc_attr got, pa = tc_attr(60, UDC_TYPE_DIR, 0), pb = tc_attr(61, UDC_TYPE_DIR, 0);

	cr_assert_eq(udc_add(c, 61, "..", 2, &pa), 0);   /* 61's parent is 60 */
	cr_assert_eq(udc_add(c, 60, "..", 2, &pb), 0);   /* and 60's 61: a loop */
	cr_assert_eq(tc_lookup(c, 61, "..", &got), UDC_POSITIVE);
	cr_assert_eq(got.ino, 60);
	cr_assert_eq(tc_lookup(c, 60, "..", &got), UDC_POSITIVE);
	cr_assert_eq(got.ino, 61);
	udc_shrink(c, SIZE_MAX);
	cr_assert_eq(tc_stats(c).nr_dirs, 0, "directory objects held by a loop");
	cr_assert_eq(tc_lookup(c, 61, "..", &got), UDC_MISS);
	udc_destroy(c);
}

/* ------------------------------------------------------------------ */
/* cancellation inside udcache's own waits */

struct shrinker {
	udc_cache *c;
	atomic_int rounds;
};

static void *shrinker_main(void *arg)
{
	struct shrinker *sh = arg;
	char nm[64];

	pthread_setcanceltype(PTHREAD_CANCEL_DEFERRED, NULL);
	for (unsigned i = 0;; i++) {
		int len = name_of(nm, sizeof(nm), i % 4000);
		udc_add_negative(sh->c, D_INO, nm, (size_t)len, 0);
		if (i % 500 == 0) {
			udc_shrink(sh->c, SIZE_MAX);   /* waits for grace periods and frees */
			atomic_fetch_add(&sh->rounds, 1);
		}
		pthread_testcancel();   /* cancelled here, or inside a wait if one were a point */
	}
	return NULL;
}

/* A thread cancelled while it runs udc_shrink and mutations: the cache
 * goes on working (no lock, waiter or callback left behind). */
Test(holes, cancel_during_shrink_leaves_the_cache_usable)
{
	udc_cache *c = tc_create(TC_ROOT, NULL, 0);

	alarm(120);
	for (int k = 0; k < 20; k++) {
		struct shrinker sh = { .c = c };
		pthread_t t;
		cr_assert_eq(pthread_create(&t, NULL, shrinker_main, &sh), 0);
		while (atomic_load(&sh.rounds) < 2)
			usleep(100);
		usleep((useconds_t)(k * 137 % 3000));
		cr_assert_eq(pthread_cancel(t), 0);
		cr_assert_eq(pthread_join(t, NULL), 0);
		cr_assert_eq(tc_add(c, D_INO, "after", 7, UDC_TYPE_REG, 0), 0);
		udc_shrink(c, SIZE_MAX);   /* hangs if shrink_lock was left held */
	}
	alarm(0);
	udc_destroy(c);
}

/* ------------------------------------------------------------------ */
/* found by the fuzzer: a locked walk whose ".." the backend answers
 * -ENOENT (never cached) asked again every round and gave -EAGAIN */

struct renaming_be {
	udc_cache *c;
	atomic_int calls;
};

static int renaming_lookup(void *ctx, udc_ino dir, const char *name, size_t len,
			   struct udc_attr *out)
{
	struct renaming_be *b = ctx;

	(void)dir, (void)out;
	/* the first calls race an rmdir (of an absent name: rename_seq moves),
	 * so the optimistic passes fail and the walk takes the locked ones */
	if (atomic_fetch_add(&b->calls, 1) < 12)
		cr_assert_eq(tc_rmdir(b->c, TC_ROOT, "absent", UDC_INO_NONE), 0);
	if (len == 2 && name[0] == '.' && name[1] == '.')
		return -ENOENT;   /* a removed directory has no parent */
	return -ENOENT;
}

Test(holes, locked_walk_uses_an_uncached_dotdot_answer)
{
	static const struct udc_backend be = { .lookup = renaming_lookup };
	struct renaming_be b = { 0 };
	udc_cache *c = tc_create(TC_ROOT, &be, 0);
	struct udc_call call = { .ctx = &b };
	struct udc_attr got;

	b.c = c;
	int r = udc_walk(c, 50, "../y", 4, 0, &call, &got);
	cr_assert_eq(r, -ENOENT, "walk through a \"..\" that does not exist = %s", tc_res_str(r));
	cr_assert_lt(atomic_load(&b.calls), 40, "the backend was asked %d times",
		     atomic_load(&b.calls));
	cr_assert_gt(tc_stats(c).walk_retries, 8, "the walk never took the locked passes");
	udc_destroy(c);
}
