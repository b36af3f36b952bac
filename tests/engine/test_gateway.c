/* SPDX-License-Identifier: MIT */
/*
 * tests/engine/test_gateway.c - the calls a gateway's requests need:
 * udc_add_listed (a listing's answers cached only if the name did not
 * change since the fill began: READDIRPLUS racing an UNLINK).
 */
#include <criterion/criterion.h>
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "include/udcache.h"
#include "common/tfixture.h"

#define D TFIX_D_INO

TestSuite(listed, .init = tfix_setup_d, .fini = tfix_teardown, .timeout = 30);

static int listed(const char *name, udc_ino ino, const struct udc_fill *f)
{
	struct udc_attr a = tc_attr(ino, UDC_TYPE_REG, ino);

	return udc_add_listed(env.c, D, name, strlen(name), &a, "L", 1, 0, f);
}

Test(listed, untouched_names_are_cached_and_the_fill_completes)
{
	struct udc_fill f;
	struct udc_attr got;
	unsigned char v[4];
	size_t n = sizeof(v);

	cr_assert_eq(tc_remove(env.c, D, "before"), 0, "a change before the fill began");
	cr_assert_eq(udc_dir_fill_begin(env.c, D, &f), 0);
	cr_assert_eq(listed("a", 100, &f), 0);
	cr_assert_eq(listed("before", 101, &f), 0, "changed before the fill: cached");
	cr_assert_eq(udc_lookup_value(env.c, D, "a", 1, &got, v, &n), UDC_POSITIVE);
	cr_assert(got.ino == 100 && n == 1 && v[0] == 'L');
	cr_assert_eq(udc_dir_complete(env.c, D, &f), 0);
	cr_assert_eq(tc_lookup(env.c, D, "zzz", NULL), UDC_NEGATIVE);
}

/*
 * A listing of more names than the cache has stripes (512 at most), so
 * that some share one: every name is cached and the fill completes.  A
 * listed add marked its stripe changed for the fills, so the same fill
 * refused the next name of that stripe (-ESTALE) and failed: a directory
 * of a few dozen names never completed (CI caught the two-name test above
 * when "a" and "before" shared a stripe, 1 run in 512).
 */
Test(listed, a_listing_of_many_names_completes)
{
	struct udc_fill f;
	char nm[16];

	cr_assert_eq(udc_dir_fill_begin(env.c, D, &f), 0);
	for (unsigned i = 0; i < 2000; i++) {
		snprintf(nm, sizeof(nm), "n%u", i);
		cr_assert_eq(listed(nm, 1000 + i, &f), 0, "listed %s", nm);
	}
	cr_assert_eq(udc_dir_complete(env.c, D, &f), 0);
	for (unsigned i = 0; i < 2000; i++) {
		struct udc_attr got;

		snprintf(nm, sizeof(nm), "n%u", i);
		cr_assert_eq(tc_lookup(env.c, D, nm, &got), UDC_POSITIVE, "%s", nm);
		cr_assert_eq(got.ino, 1000 + i);
	}
	cr_assert_eq(tc_lookup(env.c, D, "absent", NULL), UDC_NEGATIVE, "complete");
}

Test(listed, an_unlink_after_the_listing_is_not_undone)
{
	struct udc_fill f;

	cr_assert_eq(tc_add(env.c, D, "a", 100, UDC_TYPE_REG, 1), 0);
	cr_assert_eq(udc_dir_fill_begin(env.c, D, &f), 0);
	/* the listing (read now) holds "a"; another request unlinks it */
	cr_assert_eq(tc_remove(env.c, D, "a"), 0);
	cr_assert_eq(listed("a", 100, &f), -ESTALE);
	cr_assert_eq(tc_lookup(env.c, D, "a", NULL), UDC_MISS, "the unlinked name stays gone");
	cr_assert_eq(udc_dir_complete(env.c, D, &f), -ESTALE,
		     "the cache holds nothing for a listed name: not complete");
	cr_assert_eq(tc_lookup(env.c, D, "a", NULL), UDC_MISS);
}

Test(listed, a_newer_add_wins_over_the_listing)
{
	struct udc_fill f;
	struct udc_attr got;

	cr_assert_eq(udc_dir_fill_begin(env.c, D, &f), 0);
	cr_assert_eq(tc_add(env.c, D, "a", 200, UDC_TYPE_REG, 2), 0);   /* replaced since */
	cr_assert_eq(listed("a", 100, &f), -ESTALE);
	cr_assert_eq(tc_lookup(env.c, D, "a", &got), UDC_POSITIVE);
	cr_assert_eq(got.ino, 200, "the newer answer stays");
	cr_assert_eq(udc_dir_complete(env.c, D, &f), 0, "the name is known: the fill completes");
}

Test(listed, an_invalidation_of_the_directory_refuses_the_listing)
{
	struct udc_fill f;

	cr_assert_eq(udc_dir_fill_begin(env.c, D, &f), 0);
	cr_assert_eq(udc_invalidate_dir(env.c, D), 0);
	cr_assert_eq(listed("a", 100, &f), -ESTALE);
	cr_assert_eq(tc_lookup(env.c, D, "a", NULL), UDC_MISS);
	struct udc_fill g;
	cr_assert_eq(udc_dir_fill_begin(env.c, D, &g), 0);
	cr_assert_eq(listed("a", 100, &g), 0, "a fill begun afterwards caches it");
}

Test(listed, bad_arguments)
{
	struct udc_fill f, other;
	struct udc_attr a = tc_attr(5, UDC_TYPE_REG, 0);

	cr_assert_eq(udc_dir_fill_begin(env.c, D, &f), 0);
	cr_assert_eq(udc_dir_fill_begin(env.c, TC_ROOT, &other), 0);
	cr_assert_eq(listed("a", 5, &other), -EINVAL, "a fill of another directory");
	cr_assert_eq(udc_add_listed(env.c, D, "a", 1, &a, NULL, 0, 0, NULL), -EINVAL);
	cr_assert_eq(udc_add_listed(env.c, D, "..", 2, &a, NULL, 0, 0, &f), -EINVAL);
	cr_assert_eq(udc_add_listed(env.c, D, "a", 1, &a, NULL, 3, 0, &f), -EINVAL);
	cr_assert_eq(tc_lookup(env.c, D, "a", NULL), UDC_MISS, "nothing cached");
}

TestSuite(recovery, .init = tfix_setup_d, .fini = tfix_teardown, .timeout = 30);

/* udc_remove and udc_rmdir in a directory the cache knows nothing of
 * have nothing to forget: they allocate nothing (no directory object
 * made), so they cannot fail for memory. */
Test(recovery, forgetting_in_an_unknown_directory_allocates_nothing)
{
	struct udc_stats before = tc_stats(env.c);

	cr_assert_eq(tc_remove(env.c, 777, "x"), 0);
	cr_assert_eq(tc_rmdir(env.c, 778, "y", UDC_INO_NONE), 0);
	cr_assert_eq(tc_rmdir(env.c, 779, "z", 780), 0);
	cr_assert_eq(tc_invalidate(env.c, 781, "w"), 0);
	struct udc_stats after = tc_stats(env.c);
	cr_assert_eq(after.nr_dirs, before.nr_dirs, "%llu directory objects made",
		     (unsigned long long)(after.nr_dirs - before.nr_dirs));
	cr_assert_eq(after.bytes_used, before.bytes_used);
}

Test(recovery, rmdir_without_a_parent_object_still_forgets_the_directory)
{
	cr_assert_eq(tc_add(env.c, 900, "f", 901, UDC_TYPE_REG, 1), 0);
	cr_assert_eq(tc_rmdir(env.c, 899, "gone", 900), 0);
	cr_assert_eq(tc_lookup(env.c, 900, "f", NULL), UDC_MISS);
}

TestSuite(source, .init = tfix_setup_d, .fini = tfix_teardown, .timeout = 30);

Test(source, resolve_says_whether_the_store_was_asked)
{
	unsigned src = 0;
	size_t n = 0;

	tc_store_only(&env, D, "f", 50, UDC_TYPE_REG, 1);
	cr_assert_eq(udc_resolve_value(env.c, D, "f", 1, &env.call, NULL, NULL, &n, &src), 0);
	cr_assert_eq(src, UDC_FROM_BACKEND);
	cr_assert_eq(udc_resolve_value(env.c, D, "f", 1, &env.call, NULL, NULL, &n, &src), 0);
	cr_assert_eq(src, UDC_FROM_CACHE);
	cr_assert_eq(udc_resolve_value(env.c, D, "nope", 4, &env.call, NULL, NULL, &n, &src),
		     -ENOENT);
	cr_assert_eq(src, UDC_FROM_BACKEND);
	cr_assert_eq(udc_resolve_value(env.c, D, "nope", 4, &env.call, NULL, NULL, &n, &src),
		     -ENOENT);
	cr_assert_eq(src, UDC_FROM_CACHE);
	cr_assert_eq(udc_resolve_value(env.c, D, "..", 2, &env.call, NULL, NULL, &n, &src), 0);
	cr_assert_eq(src, UDC_FROM_CACHE);
}

TestSuite(exchange, .init = tfix_setup_d, .fini = tfix_teardown, .timeout = 30);

static void add_v(udc_ino dir, const char *name, udc_ino ino, uint32_t type, const char *v)
{
	struct udc_attr a = tc_attr(ino, type, ino * 10);

	cr_assert_eq(udc_add_value(env.c, dir, name, strlen(name), &a, v, strlen(v), 0), 0);
}

static void expect_v(udc_ino dir, const char *name, udc_ino ino, const char *v)
{
	struct udc_attr got;
	char buf[UDC_VALUE_MAX];
	size_t n = sizeof(buf);

	cr_assert_eq(udc_lookup_value(env.c, dir, name, strlen(name), &got, buf, &n), UDC_POSITIVE,
		     "(%llu, %s) not positive", (unsigned long long)dir, name);
	cr_assert_eq(got.ino, ino, "(%llu, %s) = ino %llu, want %llu", (unsigned long long)dir,
		     name, (unsigned long long)got.ino, (unsigned long long)ino);
	cr_assert_eq(got.cookie, ino * 10);
	cr_assert(n == strlen(v) && memcmp(buf, v, n) == 0, "(%llu, %s): value differs",
		  (unsigned long long)dir, name);
}

Test(exchange, two_cached_files_swap_answers_values_included)
{
	add_v(D, "a", 100, UDC_TYPE_REG, "value of a");
	add_v(TC_ROOT, "b", 200, UDC_TYPE_SYMLINK, "b's");
	cr_assert_eq(udc_exchange(env.c, D, "a", 1, TC_ROOT, "b", 1), 0);
	expect_v(D, "a", 200, "b's");
	expect_v(TC_ROOT, "b", 100, "value of a");
	cr_assert_eq(udc_exchange(env.c, D, "a", 1, D, "a", 1), 0, "with itself");
	expect_v(D, "a", 200, "b's");
}

Test(exchange, directories_learn_their_new_parents)
{
	struct udc_attr got;

	add_v(D, "A", 300, UDC_TYPE_DIR, "A");
	add_v(TC_ROOT, "B", 400, UDC_TYPE_DIR, "B");
	cr_assert_eq(tc_lookup(env.c, 300, "..", NULL), UDC_MISS, "not told, not asked");
	cr_assert_eq(tc_parent(env.c, 300, D), 0);
	cr_assert_eq(tc_parent(env.c, 400, TC_ROOT), 0);
	cr_assert_eq(tc_lookup(env.c, 300, "..", &got), UDC_POSITIVE);
	cr_assert_eq(got.ino, D);
	cr_assert_eq(udc_exchange(env.c, D, "A", 1, TC_ROOT, "B", 1), 0);
	cr_assert_eq(tc_lookup(env.c, 300, "..", &got), UDC_POSITIVE);
	cr_assert_eq(got.ino, TC_ROOT, "A is in the root now");
	cr_assert_eq(tc_lookup(env.c, 400, "..", &got), UDC_POSITIVE);
	cr_assert_eq(got.ino, D, "B is in d now");
	expect_v(D, "A", 400, "B");
}

Test(exchange, an_unknown_side_is_forgotten_and_its_directory_not_complete)
{
	struct udc_fill f;
	struct udc_attr got;

	add_v(TC_ROOT, "C", 500, UDC_TYPE_DIR, "C");   /* a directory in the root */
	cr_assert_eq(tc_parent(env.c, 500, TC_ROOT), 0);
	cr_assert_eq(tc_lookup(env.c, 500, "..", &got), UDC_POSITIVE);
	cr_assert_eq(udc_dir_fill_begin(env.c, D, &f), 0);
	add_v(D, "a", 100, UDC_TYPE_REG, "x");
	cr_assert_eq(udc_dir_complete(env.c, D, &f), 0);
	/* (root, "u") is not cached: it may be a directory */
	cr_assert_eq(udc_exchange(env.c, D, "a", 1, TC_ROOT, "u", 1), 0);
	cr_assert_eq(tc_lookup(env.c, D, "a", NULL), UDC_MISS, "a holds what u held: unknown");
	cr_assert_eq(tc_lookup(env.c, D, "zzz", NULL), UDC_MISS, "d is no longer complete");
	expect_v(TC_ROOT, "u", 100, "x");
	cr_assert_eq(tc_lookup(env.c, 500, "..", NULL), UDC_MISS,
		     "what left the root unseen may have been a directory: no \"..\" to it trusted");
}

TestSuite(links, .init = tfix_setup_d, .fini = tfix_teardown, .timeout = 30);

/* The store renamed a to b, and a lookup of b cached the store's answer
 * before the rename was told: both names are cached as one ino when
 * udc_rename runs.  The old name must go (a rule that took equal inos
 * for two links of one object and changed nothing kept it for ever). */
Test(links, a_new_name_cached_before_the_rename_is_told_does_not_keep_the_old)
{
	cr_assert_eq(tc_add(env.c, D, "a", 100, UDC_TYPE_REG, 1), 0);
	cr_assert_eq(tc_add(env.c, D, "b", 100, UDC_TYPE_REG, 1), 0);   /* b resolved early */
	cr_assert_eq(tc_rename(env.c, D, "a", D, "b", 100), 0);
	cr_assert_neq(tc_lookup(env.c, D, "a", NULL), UDC_POSITIVE, "the old name is gone");
	cr_assert_eq(tc_lookup(env.c, D, "b", NULL), UDC_POSITIVE);
}
