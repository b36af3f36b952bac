/* SPDX-License-Identifier: MIT */
/*
 * tests/engine/test_concurrency.c - what must hold when several threads miss
 * one name at once (the races around a backend call).
 *
 *  dedup        concurrent misses of one name make one backend call;
 *  stale        a backend answer that raced with a mutation of its name is
 *               returned but not cached (the model's gate holds the call
 *               while the test mutates).
 *
 * The races of mutations with readers (walks and renames, invalidate_dir,
 * random mixes, a small limit) are tests/engine/test_concurrency_races.c.
 *
 * Worker threads never call Criterion's assertions: they record failures
 * in a struct tfail that the main thread asserts on after joining them.
 * Loops are bounded by iteration counts; nothing asserts on time.
 *
 * Locking: the model's lock and gate (tests/common/model.h) order the
 * backend calls against the test's mutations; the cache locks itself.
 *
 * Ordering: pthread_barrier_wait() starts the threads together and
 * pthread_join() hands their results to the main thread; no other fence.
 */
#include <criterion/criterion.h>
#include <errno.h>
#include <inttypes.h>
#include <pthread.h>
#include <sched.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <urcu/urcu-memb.h>

#include "include/udcache.h"
#include "common/model.h"
#include "common/prng.h"
#include "common/tcache.h"
#include "common/tfixture.h"

/* env (common/tfixture.h): directory "d" = D_INO under the root. */
#define D_INO TFIX_D_INO

TestSuite(concurrency, .init = tfix_setup_d, .fini = tfix_teardown, .timeout = 60);

/* ------------------------------------------------------------------ dedup */

#define NDEDUP 8

struct dedup_arg {
	pthread_barrier_t *bar;
	const char *name;
	int r;
	struct udc_attr a;
};

static void *dedup_thread(void *p)
{
	struct dedup_arg *a = p;

	pthread_barrier_wait(a->bar);
	a->r = tc_resolve(&env, D_INO, a->name, &a->a);
	return NULL;
}

static void run_dedup(const char *name, struct dedup_arg *args)
{
	pthread_t th[NDEDUP];
	pthread_barrier_t bar;

	pthread_barrier_init(&bar, NULL, NDEDUP);
	for (int i = 0; i < NDEDUP; i++) {
		args[i] = (struct dedup_arg){ .bar = &bar, .name = name, .r = 12345 };
		cr_assert_eq(pthread_create(&th[i], NULL, dedup_thread, &args[i]), 0);
	}
	for (int i = 0; i < NDEDUP; i++)
		pthread_join(th[i], NULL);
	pthread_barrier_destroy(&bar);
}

Test(concurrency, dedup_positive)
{
	struct dedup_arg args[NDEDUP];
	struct udc_attr want = tc_attr(500, UDC_TYPE_REG, 0xFEED);
	struct udc_stats s0 = tc_stats(env.c), s1;

	model_set_s(env.m, D_INO, "x", &want);
	model_set_delay_us(env.m, 50000);
	run_dedup("x", args);
	cr_assert_eq(model_lookup_calls(env.m), 1,
		     "%d threads missing one name made %llu "
		     "backend calls",
		     NDEDUP, (unsigned long long)model_lookup_calls(env.m));
	for (int i = 0; i < NDEDUP; i++) {
		cr_assert_eq(args[i].r, 0, "thread %d got %s", i, tc_res_str(args[i].r));
		cr_assert(tc_attr_eq(&args[i].a, &want), "thread %d got ino %llu", i,
			  (unsigned long long)args[i].a.ino);
	}
	s1 = tc_stats(env.c);
	cr_expect_eq(s1.backend_calls - s0.backend_calls, 1);
	cr_assert_eq(tc_lookup(env.c, D_INO, "x", NULL), UDC_POSITIVE);
}

Test(concurrency, dedup_negative)
{
	struct dedup_arg args[NDEDUP];

	model_set_delay_us(env.m, 50000);
	run_dedup("absent", args);
	cr_assert_eq(model_lookup_calls(env.m), 1, "%llu backend calls for one negative",
		     (unsigned long long)model_lookup_calls(env.m));
	for (int i = 0; i < NDEDUP; i++)
		cr_assert_eq(args[i].r, -ENOENT, "thread %d got %s", i, tc_res_str(args[i].r));
	cr_assert_neq(tc_lookup(env.c, D_INO, "absent", NULL), UDC_POSITIVE);
}

Test(concurrency, dedup_error_shared_not_cached)
{
	struct dedup_arg args[NDEDUP];
	struct udc_attr a = tc_attr(501, UDC_TYPE_REG, 1);

	model_set_s(env.m, D_INO, "bad", &a);
	model_set_error(env.m, D_INO, "bad", 3, -EIO);
	model_set_delay_us(env.m, 50000);
	run_dedup("bad", args);
	for (int i = 0; i < NDEDUP; i++)
		cr_assert_eq(args[i].r, -EIO, "thread %d got %s", i, tc_res_str(args[i].r));
	cr_assert_geq(model_lookup_calls(env.m), 1);
	cr_assert_leq(model_lookup_calls(env.m), NDEDUP);
	cr_expect_eq(model_lookup_calls(env.m), 1, "waiters did not share the error");
	cr_assert_eq(tc_lookup(env.c, D_INO, "bad", NULL), UDC_MISS, "an error was cached");
}

struct distinct_arg {
	pthread_barrier_t *bar;
	int i;
	int r;
	struct udc_attr a;
};

static void *distinct_thread(void *p)
{
	struct distinct_arg *a = p;
	char nm[16];

	snprintf(nm, sizeof(nm), "name%d", a->i);
	pthread_barrier_wait(a->bar);
	a->r = tc_resolve(&env, D_INO, nm, &a->a);
	return NULL;
}

Test(concurrency, distinct_names_each_call)
{
	pthread_t th[NDEDUP];
	struct distinct_arg args[NDEDUP];
	pthread_barrier_t bar;
	char nm[16];

	for (int i = 0; i < NDEDUP; i++) {
		struct udc_attr a = tc_attr(600 + (udc_ino)i, UDC_TYPE_REG, (uint64_t)i);

		snprintf(nm, sizeof(nm), "name%d", i);
		model_set_s(env.m, D_INO, nm, &a);
	}
	model_set_delay_us(env.m, 20000);
	pthread_barrier_init(&bar, NULL, NDEDUP);
	for (int i = 0; i < NDEDUP; i++) {
		args[i] = (struct distinct_arg){ .bar = &bar, .i = i, .r = 12345 };
		cr_assert_eq(pthread_create(&th[i], NULL, distinct_thread, &args[i]), 0);
	}
	for (int i = 0; i < NDEDUP; i++)
		pthread_join(th[i], NULL);
	pthread_barrier_destroy(&bar);
	for (int i = 0; i < NDEDUP; i++) {
		cr_assert_eq(args[i].r, 0, "thread %d got %s", i, tc_res_str(args[i].r));
		cr_assert_eq(args[i].a.ino, 600 + (udc_ino)i, "thread %d got another name's answer",
			     i);
	}
	cr_assert_eq(model_lookup_calls(env.m), NDEDUP);
}

/* ------------------------------------------------------------------ stale */

enum stale_mut {
	M_ADD,
	M_ADD_NEGATIVE,
	M_REMOVE,
	M_INVALIDATE,
	M_INVALIDATE_DIR,
	M_RMDIR,
	M_RENAME_AWAY,
	M_RENAME_ONTO,
};

static const char *const mut_names[] = {
	"udc_add",   "udc_add_negative", "udc_remove",	    "udc_invalidate", "udc_invalidate_dir",
	"udc_rmdir", "udc_rename away",	 "udc_rename onto",
};

struct resolver {
	udc_ino dir;
	const char *name;
	int r;
	struct udc_attr a;
};

static void *resolver_thread(void *p)
{
	struct resolver *rs = p;

	rs->r = tc_resolve(&env, rs->dir, rs->name, &rs->a);
	return NULL;
}

/*
 * (D, "n") is missed by a resolver whose backend call reads the store's
 * answer (A, or -ENOENT when @was_there is false) and is then held at the
 * gate; the test applies @m to the store and the cache, starts a second
 * resolver, and releases the gate.
 */
static void stale_case(enum stale_mut m, bool was_there)
{
	const char *what = mut_names[m];
	struct udc_attr A = tc_attr(700, UDC_TYPE_REG, 0xAAAA);
	struct udc_attr B = tc_attr(701, UDC_TYPE_REG, 0xBBBB);
	struct udc_attr C = tc_attr(702, UDC_TYPE_OTHER, 0xCCCC);
	struct resolver r1 = { .dir = D_INO, .name = "n", .r = 12345 };
	struct resolver r2 = { .dir = D_INO, .name = "n", .r = 12345 };
	struct udc_attr want_now = { 0 }, got;
	bool now_there = false; /* does the store have (D, "n") after m */
	bool now_cached_pos = false;
	struct udc_stats s0, s1;
	pthread_t t1, t2;
	int r;

	if (was_there)
		model_set_s(env.m, D_INO, "n", &A);
	if (m == M_RENAME_ONTO)
		tc_store_add(&env, D_INO, "o", 702, UDC_TYPE_OTHER, 0xCCCC);
	s0 = tc_stats(env.c);
	model_gate_arm(env.m, D_INO, "n", 1);
	cr_assert_eq(pthread_create(&t1, NULL, resolver_thread, &r1), 0);
	model_gate_wait_entered(env.m);

	/* The backend has read its answer and waits: now the store changes. */
	switch (m) {
	case M_ADD:
		model_set_s(env.m, D_INO, "n", &B);
		cr_assert_eq(udc_add(env.c, D_INO, "n", 1, &B), 0);
		want_now = B;
		now_there = now_cached_pos = true;
		break;
	case M_ADD_NEGATIVE:
		model_del(env.m, D_INO, "n", 1);
		cr_assert_eq(tc_add_neg(env.c, D_INO, "n"), 0);
		break;
	case M_REMOVE:
		model_del(env.m, D_INO, "n", 1);
		cr_assert_eq(tc_remove(env.c, D_INO, "n"), 0);
		break;
	case M_INVALIDATE:
		model_set_s(env.m, D_INO, "n", &B);
		cr_assert_eq(tc_invalidate(env.c, D_INO, "n"), 0);
		want_now = B;
		now_there = true;
		break;
	case M_INVALIDATE_DIR:
		model_set_s(env.m, D_INO, "n", &B);
		cr_assert_eq(udc_invalidate_dir(env.c, D_INO), 0);
		want_now = B;
		now_there = true;
		break;
	case M_RMDIR:
		model_lock(env.m);
		model_clear_dir_locked(env.m, D_INO);
		model_del_locked(env.m, TC_ROOT, "d", 1);
		model_unlock(env.m);
		cr_assert_eq(tc_rmdir(env.c, TC_ROOT, "d", D_INO), 0);
		break;
	case M_RENAME_AWAY:
		if (was_there)
			model_move(env.m, D_INO, "n", 1, D_INO, "m", 1);
		cr_assert_eq(tc_rename(env.c, D_INO, "n", D_INO, "m", was_there ? 700 : 0), 0);
		break;
	case M_RENAME_ONTO:
		model_move(env.m, D_INO, "o", 1, D_INO, "n", 1);
		cr_assert_eq(tc_rename(env.c, D_INO, "o", D_INO, "n", 702), 0);
		want_now = C;
		now_there = now_cached_pos = true;
		break;
	}
	/* A resolver that starts after the mutation returned. */
	cr_assert_eq(pthread_create(&t2, NULL, resolver_thread, &r2), 0);
	usleep(20000); /* let it reach the cache; the asserts do not depend on it */
	model_gate_release(env.m);
	pthread_join(t1, NULL);
	pthread_join(t2, NULL);

	/* The first resolver gets the backend's (now stale) answer. */
	if (was_there) {
		cr_assert_eq(r1.r, 0, "%s: the racing resolve got %s, want the backend's 0", what,
			     tc_res_str(r1.r));
		cr_assert(tc_attr_eq(&r1.a, &A), "%s: the racing resolve got ino %llu", what,
			  (unsigned long long)r1.a.ino);
	} else {
		cr_assert_eq(r1.r, -ENOENT,
			     "%s: the racing resolve got %s, want the backend's "
			     "-ENOENT",
			     what, tc_res_str(r1.r));
	}

	/* The cache must not hold the stale answer. */
	r = tc_lookup(env.c, D_INO, "n", &got);
	if (now_cached_pos) {
		cr_assert_eq(r, UDC_POSITIVE, "%s: after the race lookup = %s, want POSITIVE", what,
			     tc_res_str(r));
		cr_assert(tc_attr_eq(&got, &want_now), "%s: cached ino %llu cookie %llx, want %llu",
			  what, (unsigned long long)got.ino, (unsigned long long)got.cookie,
			  (unsigned long long)want_now.ino);
	} else if (now_there) {
		cr_assert(r == UDC_MISS || (r == UDC_POSITIVE && tc_attr_eq(&got, &want_now)),
			  "%s: after the race lookup = %s (ino %llu), want MISS or the new attr",
			  what, tc_res_str(r), (unsigned long long)got.ino);
		if (r == UDC_POSITIVE)
			cr_log_info("%s: the later resolver cached the new answer", what);
	} else {
		cr_assert_neq(r, UDC_POSITIVE, "%s: the stale positive (ino %llu) was cached", what,
			      (unsigned long long)got.ino);
	}

	/* The resolver that started after the mutation sees its effect. */
	if (now_there) {
		cr_expect_eq(r2.r, 0, "%s: a resolve started after the mutation got %s", what,
			     tc_res_str(r2.r));
		cr_expect(r2.r != 0 || tc_attr_eq(&r2.a, &want_now),
			  "%s: a resolve started after the mutation got the stale ino %llu", what,
			  (unsigned long long)r2.a.ino);
	} else {
		cr_expect_eq(r2.r, -ENOENT,
			     "%s: a resolve started after the mutation got %s "
			     "(ino %llu)",
			     what, tc_res_str(r2.r), (unsigned long long)r2.a.ino);
	}

	/* And from now on, resolve agrees with the store. */
	r = tc_resolve(&env, D_INO, "n", &got);
	if (now_there) {
		cr_assert_eq(r, 0, "%s: resolve afterwards = %s", what, tc_res_str(r));
		cr_assert(tc_attr_eq(&got, &want_now), "%s: resolve afterwards gave ino %llu", what,
			  (unsigned long long)got.ino);
	} else {
		cr_assert_eq(r, -ENOENT, "%s: resolve afterwards = %s (ino %llu)", what,
			     tc_res_str(r), (unsigned long long)got.ino);
	}
	s1 = tc_stats(env.c);
	cr_expect_geq(s1.stale_answers - s0.stale_answers, 1, "%s: stale_answers did not count it",
		      what);
}

Test(concurrency, stale_add_over_positive)
{
	stale_case(M_ADD, true);
}

Test(concurrency, stale_add_over_negative)
{
	stale_case(M_ADD, false);
}

Test(concurrency, stale_add_negative)
{
	stale_case(M_ADD_NEGATIVE, true);
}

Test(concurrency, stale_remove)
{
	stale_case(M_REMOVE, true);
}

Test(concurrency, stale_invalidate)
{
	stale_case(M_INVALIDATE, true);
}

Test(concurrency, stale_invalidate_negative)
{
	stale_case(M_INVALIDATE, false);
}

Test(concurrency, stale_invalidate_dir)
{
	stale_case(M_INVALIDATE_DIR, true);
}

Test(concurrency, stale_invalidate_dir_negative)
{
	stale_case(M_INVALIDATE_DIR, false);
}

Test(concurrency, stale_rmdir)
{
	stale_case(M_RMDIR, true);
}

Test(concurrency, stale_rename_away)
{
	stale_case(M_RENAME_AWAY, true);
}

Test(concurrency, stale_rename_onto)
{
	stale_case(M_RENAME_ONTO, false);
}

Test(concurrency, stale_rename_onto_positive)
{
	stale_case(M_RENAME_ONTO, true);
}
