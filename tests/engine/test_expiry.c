/* SPDX-License-Identifier: MIT */
/*
 * tests/engine/test_expiry.c - answers with a life (udc_add_value's and
 * udc_add_negative_ttl's ttl_ms, the backend's, the cache's defaults): an
 * expired answer is a miss, also in a complete directory (never a
 * negative for a name that may exist); a long life keeps it; a rename
 * keeps the deadline; reclaim drops expired entries with no memory
 * pressure, with and without the reclaim thread.
 *
 * Timing: a test only asserts that an answer expired after sleeping well
 * past its life, and that one with a life of minutes is still there, so
 * a slow machine cannot fail it.
 */
#include <criterion/criterion.h>
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "include/udcache.h"
#include "common/model.h"
#include "common/tcache.h"

#define D_INO ((udc_ino)10)
#define SHORT_MS 100u                 /* a life that ends during the test */
#define PAST_SHORT_US 400000u         /* sleep this long: past it, a tick and a jiffy */
#define LONG_MS 600000u               /* a life that does not */

static uint32_t be_ttl_ms;

static int be_lookup_value(void *ctx, udc_ino dir, const char *name, size_t len,
			   struct udc_attr *out, void *value, size_t *value_len, uint32_t *ttl_ms)
{
	(void)value;
	(void)value_len;
	*ttl_ms = be_ttl_ms;
	return model_backend.lookup(ctx, dir, name, len, out);
}

static const struct udc_backend ttl_backend = { .lookup_value = be_lookup_value };

static struct tenv env;

/* env over ttl_backend, with the cache's default lives and @flags. */
static void env_make(uint32_t pos_ttl, uint32_t neg_ttl, uint32_t flags)
{
	struct udc_config cfg = UDC_CONFIG_INIT;

	env.m = model_new(TC_ROOT);
	cfg.root = TC_ROOT;
	cfg.backend = &ttl_backend;
	cfg.memory_limit = TC_MEMORY_LIMIT;
	cfg.flags = flags;
	cfg.positive_ttl_ms = pos_ttl;
	cfg.negative_ttl_ms = neg_ttl;
	env.c = udc_create(&cfg);
	cr_assert_not_null(env.c);
	env.call.ctx = env.m;
	env.call.client = 0;
	tc_store_add(&env, TC_ROOT, "d", D_INO, UDC_TYPE_DIR, 0xD);
	be_ttl_ms = 0;
}

static void setup(void)
{
	env_make(0, 0, UDC_CFG_NO_RECLAIM_THREAD);
}

static void teardown(void)
{
	tenv_fini(&env);
}

TestSuite(expiry, .init = setup, .fini = teardown, .timeout = 60);

static int add_ttl(const char *name, udc_ino ino, uint32_t ttl_ms)
{
	struct udc_attr a = tc_attr(ino, UDC_TYPE_REG, 1);

	return udc_add_value(env.c, D_INO, name, strlen(name), &a, "v", 1, ttl_ms);
}

static void expect(const char *name, int want, const char *when)
{
	int r = tc_lookup(env.c, D_INO, name, NULL);

	cr_assert_eq(r, want, "%s: lookup(\"%s\") = %s, want %s", when, name, tc_res_str(r),
		     tc_res_str(want));
}

Test(expiry, an_expired_answer_is_a_miss_and_a_long_life_stays)
{
	cr_assert_eq(add_ttl("short", 100, SHORT_MS), 0);
	cr_assert_eq(add_ttl("long", 101, LONG_MS), 0);
	cr_assert_eq(add_ttl("none", 102, UDC_TTL_NONE), 0);
	cr_assert_eq(add_ttl("default", 103, 0), 0);   /* the cache's default: none */
	cr_assert_eq(udc_add_negative_ttl(env.c, D_INO, "neg-short", 9, 0, SHORT_MS), 0);
	cr_assert_eq(udc_add_negative_ttl(env.c, D_INO, "neg-long", 8, 0, LONG_MS), 0);
	expect("long", UDC_POSITIVE, "at once");
	expect("neg-long", UDC_NEGATIVE, "at once");
	usleep(PAST_SHORT_US);
	expect("short", UDC_MISS, "past its life");
	expect("neg-short", UDC_MISS, "past its life");
	expect("long", UDC_POSITIVE, "within its life");
	expect("none", UDC_POSITIVE, "no life");
	expect("default", UDC_POSITIVE, "the default, none");
	expect("neg-long", UDC_NEGATIVE, "within its life");

	/* an expired name resolves through the backend again */
	tc_store_only(&env, D_INO, "short", 100, UDC_TYPE_REG, 1);
	struct udc_stats before = tc_stats(env.c);
	struct udc_attr a;
	cr_assert_eq(tc_resolve(&env, D_INO, "short", &a), 0);
	cr_assert_eq(tc_stats(env.c).backend_calls, before.backend_calls + 1);
	cr_assert_eq(tc_resolve(&env, D_INO, "neg-short", NULL), -ENOENT);
	cr_assert_eq(tc_stats(env.c).backend_calls, before.backend_calls + 2);
}

Test(expiry, a_life_for_dotdot_is_refused)
{
	struct udc_attr a = tc_attr(TC_ROOT, UDC_TYPE_DIR, 0);

	cr_assert_eq(udc_add_value(env.c, D_INO, "..", 2, &a, NULL, 0, SHORT_MS), -EINVAL);
}

Test(expiry, the_caches_defaults_and_none_over_them)
{
	tenv_fini(&env);
	env_make(SHORT_MS, SHORT_MS, UDC_CFG_NO_RECLAIM_THREAD);
	cr_assert_eq(tc_add(env.c, D_INO, "plain", 200, UDC_TYPE_REG, 1), 0);
	cr_assert_eq(tc_add_neg(env.c, D_INO, "plain-neg"), 0);
	cr_assert_eq(add_ttl("none", 201, UDC_TTL_NONE), 0);
	cr_assert_eq(add_ttl("long", 202, LONG_MS), 0);
	cr_assert_eq(udc_add_negative_ttl(env.c, D_INO, "neg-none", 8, 0, UDC_TTL_NONE), 0);
	usleep(PAST_SHORT_US);
	expect("plain", UDC_MISS, "the default life");
	expect("plain-neg", UDC_MISS, "the default life");
	expect("none", UDC_POSITIVE, "UDC_TTL_NONE over the default");
	expect("long", UDC_POSITIVE, "its own life over the default");
	expect("neg-none", UDC_NEGATIVE, "UDC_TTL_NONE over the default");
}

Test(expiry, an_expired_name_in_a_complete_directory_is_a_miss_not_a_negative)
{
	struct udc_fill f;

	cr_assert_eq(udc_dir_fill_begin(env.c, D_INO, &f), 0);
	cr_assert_eq(add_ttl("a", 300, SHORT_MS), 0);
	cr_assert_eq(add_ttl("b", 301, LONG_MS), 0);
	cr_assert_eq(udc_dir_complete(env.c, D_INO, &f), 0);
	expect("zzz", UDC_NEGATIVE, "complete");
	usleep(PAST_SHORT_US);
	expect("a", UDC_MISS, "expired in a complete directory");
	expect("b", UDC_POSITIVE, "within its life");
	tc_store_only(&env, D_INO, "a", 300, UDC_TYPE_REG, 1);
	struct udc_attr got;
	cr_assert_eq(tc_resolve(&env, D_INO, "a", &got), 0, "the backend says it exists");
	cr_assert_eq(got.ino, 300);
	/* udc_rename over an expired target is not "known absent" */
	cr_assert_eq(add_ttl("c", 302, SHORT_MS), 0);
	usleep(PAST_SHORT_US);
	cr_assert_eq(tc_rename(env.c, D_INO, "b", D_INO, "c", 301), 0);
	expect("c", UDC_POSITIVE, "renamed over an expired name");
}

Test(expiry, the_backends_life)
{
	tc_store_only(&env, D_INO, "f", 400, UDC_TYPE_REG, 1);
	be_ttl_ms = SHORT_MS;
	cr_assert_eq(tc_resolve(&env, D_INO, "f", NULL), 0);
	cr_assert_eq(tc_resolve(&env, D_INO, "nope", NULL), -ENOENT);
	be_ttl_ms = LONG_MS;
	cr_assert_eq(tc_resolve(&env, D_INO, "g", NULL), -ENOENT);
	usleep(PAST_SHORT_US);
	expect("f", UDC_MISS, "the backend's life passed");
	expect("nope", UDC_MISS, "the backend's life passed");
	expect("g", UDC_NEGATIVE, "the backend's long life");
}

Test(expiry, a_rename_keeps_the_deadline)
{
	cr_assert_eq(add_ttl("old", 500, 1500), 0);
	cr_assert_eq(tc_rename(env.c, D_INO, "old", D_INO, "new", 500), 0);
	expect("new", UDC_POSITIVE, "just renamed");
	unsigned char v[8];
	size_t n = sizeof(v);
	cr_assert_eq(udc_lookup_value(env.c, D_INO, "new", 3, NULL, v, &n), UDC_POSITIVE);
	cr_assert(n == 1 && v[0] == 'v', "the value came along");
	usleep(1500000 + PAST_SHORT_US);
	expect("new", UDC_MISS, "the old name's life passed");
}

/* With no memory pressure, expired entries go: their memory comes back. */
static void expect_reclaimed(bool with_thread)
{
	enum { N = 3000 };
	char name[32];

	tenv_fini(&env);
	env_make(0, 0, with_thread ? 0 : UDC_CFG_NO_RECLAIM_THREAD);
	for (unsigned i = 0; i < N; i++) {
		snprintf(name, sizeof(name), "p%u", i);
		cr_assert_eq(add_ttl(name, 1000 + i, SHORT_MS), 0);
		snprintf(name, sizeof(name), "n%u", i);
		cr_assert_eq(udc_add_negative_ttl(env.c, D_INO, name, strlen(name), 0, SHORT_MS), 0);
	}
	cr_assert_eq(add_ttl("keep", 999, UDC_TTL_NONE), 0);
	usleep(PAST_SHORT_US);
	uint64_t kept = with_thread ? 2 : 3;   /* "d", "keep" (and "poke") */
	struct udc_stats st = tc_stats(env.c);
	/* Up to 30 s: the thread's rounds, or the calls' (paced: at most a
	 * tenth of their time, in batches of a page; a round a second) */
	struct timespec t0, t;
	clock_gettime(CLOCK_MONOTONIC, &t0);
	for (t = t0; t.tv_sec - t0.tv_sec < 30 && st.nr_positive + st.nr_negative > kept;
	     clock_gettime(CLOCK_MONOTONIC, &t)) {
		if (!with_thread)
			for (int k = 0; k < 100; k++)
				tc_add(env.c, TC_ROOT, "poke", 7, UDC_TYPE_REG, (uint64_t)k);
		usleep(1000);
		st = tc_stats(env.c);
	}
	cr_assert_eq(st.nr_positive + st.nr_negative, kept,
		     "%llu positives and %llu negatives left of %d expired (and %llu kept)",
		     (unsigned long long)st.nr_positive, (unsigned long long)st.nr_negative, 2 * N,
		     (unsigned long long)kept);
	expect("keep", UDC_POSITIVE, "no life");
}

Test(expiry, expired_entries_are_reclaimed_by_the_thread, .timeout = 60)
{
	expect_reclaimed(true);
}

Test(expiry, expired_entries_are_reclaimed_by_the_calls, .timeout = 90)
{
	expect_reclaimed(false);
}

/* A complete directory answers its absent names as negatives: with a
 * default life for negatives, its completeness has that life too. */
Test(expiry, completeness_lives_as_long_as_a_negative)
{
	struct udc_fill f;

	tenv_fini(&env);
	env_make(0, SHORT_MS, UDC_CFG_NO_RECLAIM_THREAD);
	cr_assert_eq(udc_dir_fill_begin(env.c, D_INO, &f), 0);
	cr_assert_eq(add_ttl("a", 600, UDC_TTL_NONE), 0);
	cr_assert_eq(udc_dir_complete(env.c, D_INO, &f), 0);
	expect("zzz", UDC_NEGATIVE, "complete");
	usleep(PAST_SHORT_US);
	expect("zzz", UDC_MISS, "completeness past the negatives' life");
	expect("a", UDC_POSITIVE, "its names stay");
	cr_assert_eq(tc_add_neg(env.c, D_INO, "zzz"), 0);
	expect("zzz", UDC_NEGATIVE, "a negative is stored again");
	cr_assert_eq(udc_dir_fill_begin(env.c, D_INO, &f), 0);
	cr_assert_eq(udc_dir_complete(env.c, D_INO, &f), 0);
	expect("yyy", UDC_NEGATIVE, "completed again");
}
