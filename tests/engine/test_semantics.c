/* SPDX-License-Identifier: MIT */
/*
 * tests/engine/test_semantics.c - what each public function does when used
 * right: the answers of udc_lookup/udc_resolve after each mutation, "..",
 * complete directories, byte-exact names, reclaim (statistics, the
 * version, the limit and destroy: test_stats_memory.c).
 *
 * Every cache here has a 1 GiB limit and no reclaim thread (unless a test
 * says otherwise), so the contract's strict answers are asserted strictly.
 */
#include <criterion/criterion.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "include/udcache.h"
#include "common/model.h"
#include "common/prng.h"
#include "common/tcache.h"

#define D_INO ((udc_ino)10)
#define E_INO ((udc_ino)11)

static struct tenv env;

static void setup_default(void)
{
	tenv_init(&env, 0);
	tc_store_add(&env, TC_ROOT, "d", D_INO, UDC_TYPE_DIR, 0xD);
	tc_store_add(&env, TC_ROOT, "e", E_INO, UDC_TYPE_DIR, 0xE);
	model_reset_calls(env.m);
}

static void setup_keep(void)
{
	tenv_init(&env, UDC_CFG_KEEP_UNLINKED);
	tc_store_add(&env, TC_ROOT, "d", D_INO, UDC_TYPE_DIR, 0xD);
	tc_store_add(&env, TC_ROOT, "e", E_INO, UDC_TYPE_DIR, 0xE);
	model_reset_calls(env.m);
}

static void teardown(void)
{
	tenv_fini(&env);
}

/* Assert (dir, name) is POSITIVE with exactly *want. */
static void expect_pos(udc_ino dir, const char *name, const struct udc_attr *want, const char *when)
{
	struct udc_attr got;
	int r = tc_lookup(env.c, dir, name, &got);

	cr_assert_eq(r, UDC_POSITIVE, "%s: lookup(%llu, \"%s\") = %s, want POSITIVE", when,
		     (unsigned long long)dir, name, tc_res_str(r));
	cr_assert(tc_attr_eq(&got, want),
		  "%s: (%llu, \"%s\") = {ino %llu type %u flags %u cookie %llx}, want {ino %llu "
		  "type %u cookie %llx}",
		  when, (unsigned long long)dir, name, (unsigned long long)got.ino, got.type,
		  got.flags, (unsigned long long)got.cookie, (unsigned long long)want->ino,
		  want->type, (unsigned long long)want->cookie);
}

static void expect_res(udc_ino dir, const char *name, int want, const char *when)
{
	int r = tc_lookup(env.c, dir, name, NULL);

	cr_assert_eq(r, want, "%s: lookup(%llu, \"%s\") = %s, want %s", when,
		     (unsigned long long)dir, name, tc_res_str(r), tc_res_str(want));
}

static void expect_not_pos(udc_ino dir, const char *name, const char *when)
{
	int r = tc_lookup(env.c, dir, name, NULL);

	cr_assert(r == UDC_MISS || r == UDC_NEGATIVE, "%s: lookup(%llu, \"%s\") = %s", when,
		  (unsigned long long)dir, name, tc_res_str(r));
}

TestSuite(semantics, .init = setup_default, .fini = teardown, .timeout = 30);
/* The same with UDC_CFG_KEEP_UNLINKED. */
TestSuite(semantics_keep, .init = setup_keep, .fini = teardown, .timeout = 30);

Test(semantics, add_then_lookup)
{
	struct udc_attr a[] = {
		tc_attr(100, UDC_TYPE_REG, 0),
		tc_attr(101, UDC_TYPE_SYMLINK, UINT64_MAX),
		tc_attr(UINT64_MAX, UDC_TYPE_OTHER, 0x0123456789ABCDEFULL),
		tc_attr(103, UDC_TYPE_UNKNOWN, 1),
		tc_attr(104, UDC_TYPE_DIR, 0x8000000000000000ULL),
	};
	const char *names[] = { "a", "bb", "file.txt", "x y", "sub" };

	for (size_t i = 0; i < 5; i++) {
		int r = udc_add(env.c, D_INO, names[i], strlen(names[i]), &a[i]);

		cr_assert_eq(r, 0, "udc_add(\"%s\") = %s", names[i], tc_res_str(r));
	}
	for (size_t i = 0; i < 5; i++)
		expect_pos(D_INO, names[i], &a[i], "after add");
	/* out may be NULL. */
	expect_res(D_INO, "a", UDC_POSITIVE, "out NULL");
	/* The same name in another directory is another name. */
	expect_res(E_INO, "a", UDC_MISS, "other dir");
	expect_res(D_INO, "c", UDC_MISS, "never added");
}

Test(semantics, add_replaces)
{
	struct udc_attr a1 = tc_attr(100, UDC_TYPE_REG, 1), a2 = tc_attr(200, UDC_TYPE_OTHER, 2);
	struct udc_attr a3 = tc_attr(100, UDC_TYPE_REG, 3);

	cr_assert_eq(udc_add(env.c, D_INO, "n", 1, &a1), 0);
	expect_pos(D_INO, "n", &a1, "first add");
	cr_assert_eq(udc_add(env.c, D_INO, "n", 1, &a2), 0);
	expect_pos(D_INO, "n", &a2, "replaced (other ino)");
	cr_assert_eq(udc_add(env.c, D_INO, "n", 1, &a3), 0);
	expect_pos(D_INO, "n", &a3, "replaced (cookie only)");
	/* Over a negative. */
	cr_assert_eq(tc_add_neg(env.c, D_INO, "m"), 0);
	cr_assert_eq(udc_add(env.c, D_INO, "m", 1, &a1), 0);
	expect_pos(D_INO, "m", &a1, "add over a negative");
	/* Replacing does not leak an entry. */
	struct udc_stats st = tc_stats(env.c);
	cr_assert_eq(udc_add(env.c, D_INO, "n", 1, &a1), 0);
	cr_assert_eq(udc_add(env.c, D_INO, "n", 1, &a2), 0);
	struct udc_stats st2 = tc_stats(env.c);
	cr_assert_eq(st2.nr_positive, st.nr_positive, "nr_positive %llu -> %llu after replaces",
		     (unsigned long long)st.nr_positive, (unsigned long long)st2.nr_positive);
}

Test(semantics, add_negative)
{
	struct udc_attr a = tc_attr(100, UDC_TYPE_REG, 1);
	struct udc_stats st = tc_stats(env.c), st2;
	int r;

	cr_assert_eq(tc_add_neg(env.c, D_INO, "n"), 0);
	r = tc_lookup(env.c, D_INO, "n", NULL);
	cr_assert_neq(r, UDC_POSITIVE);
	cr_expect_eq(r, UDC_NEGATIVE,
		     "add_negative then lookup = %s (MISS is allowed, but this "
		     "engine keeps negatives)",
		     tc_res_str(r));
	st2 = tc_stats(env.c);
	if (r == UDC_NEGATIVE)
		cr_expect_eq(st2.nr_negative, st.nr_negative + 1);
	/* Replaces a positive. */
	cr_assert_eq(udc_add(env.c, D_INO, "p", 1, &a), 0);
	cr_assert_eq(udc_add_negative(env.c, D_INO, "p", 1, 42), 0);
	expect_not_pos(D_INO, "p", "add_negative over a positive");
	st = tc_stats(env.c);
	cr_expect_eq(st.nr_positive, st2.nr_positive, "the replaced positive is still counted");
	/* Twice is fine. */
	cr_assert_eq(tc_add_neg(env.c, D_INO, "n"), 0);
	expect_not_pos(D_INO, "n", "add_negative twice");
	/* A cached negative answers resolve without the backend. */
	model_reset_calls(env.m);
	if (tc_lookup(env.c, D_INO, "n", NULL) == UDC_NEGATIVE) {
		r = tc_resolve(&env, D_INO, "n", NULL);
		cr_assert_eq(r, -ENOENT, "resolve of a cached negative = %s", tc_res_str(r));
		cr_assert_eq(model_calls(env.m), 0);
	}
}

Test(semantics, remove_default)
{
	struct udc_attr a = tc_attr(100, UDC_TYPE_REG, 1);
	struct udc_stats st, st2;

	cr_assert_eq(udc_add(env.c, D_INO, "n", 1, &a), 0);
	st = tc_stats(env.c);
	cr_assert_eq(tc_remove(env.c, D_INO, "n"), 0);
	expect_res(D_INO, "n", UDC_MISS, "after remove (no KEEP_UNLINKED)");
	st2 = tc_stats(env.c);
	cr_expect_eq(st2.nr_positive + 1, st.nr_positive, "nr_positive %llu -> %llu",
		     (unsigned long long)st.nr_positive, (unsigned long long)st2.nr_positive);
	cr_expect_eq(st2.nr_negative, st.nr_negative);
	/* Removing what is not cached, or a negative. */
	cr_assert_eq(tc_remove(env.c, D_INO, "never"), 0);
	expect_not_pos(D_INO, "never", "remove of an uncached name");
	cr_assert_eq(tc_add_neg(env.c, D_INO, "neg"), 0);
	cr_assert_eq(tc_remove(env.c, D_INO, "neg"), 0);
	expect_not_pos(D_INO, "neg", "remove of a negative");
	/* The name can come back. */
	cr_assert_eq(udc_add(env.c, D_INO, "n", 1, &a), 0);
	expect_pos(D_INO, "n", &a, "re-added");
}

Test(semantics_keep, remove_keep_unlinked)
{
	struct udc_attr a = tc_attr(100, UDC_TYPE_REG, 1);

	cr_assert_eq(udc_add(env.c, D_INO, "n", 1, &a), 0);
	cr_assert_eq(tc_remove(env.c, D_INO, "n"), 0);
	expect_res(D_INO, "n", UDC_NEGATIVE, "after remove with KEEP_UNLINKED");
	model_reset_calls(env.m);
	cr_assert_eq(tc_resolve(&env, D_INO, "n", NULL), -ENOENT);
	cr_assert_eq(model_calls(env.m), 0, "the kept negative did not answer resolve");
	cr_assert_eq(udc_add(env.c, D_INO, "n", 1, &a), 0);
	expect_pos(D_INO, "n", &a, "re-added");
}

Test(semantics, rename_cached)
{
	struct udc_attr a = tc_attr(100, UDC_TYPE_REG, 0xAA), b = tc_attr(200, UDC_TYPE_REG, 0xBB);

	cr_assert_eq(udc_add(env.c, D_INO, "old", 3, &a), 0);
	cr_assert_eq(tc_rename(env.c, D_INO, "old", D_INO, "new", 100), 0);
	expect_res(D_INO, "old", UDC_MISS, "old name after rename");
	expect_pos(D_INO, "new", &a, "new name after rename");

	/* Across directories, moved unknown. */
	cr_assert_eq(tc_rename(env.c, D_INO, "new", E_INO, "there", UDC_INO_NONE), 0);
	expect_not_pos(D_INO, "new", "old name after rename across dirs");
	expect_pos(E_INO, "there", &a, "new name after rename across dirs");

	/* Over a cached positive: the target takes the moved attr. */
	cr_assert_eq(udc_add(env.c, D_INO, "victim", 6, &b), 0);
	cr_assert_eq(tc_rename(env.c, E_INO, "there", D_INO, "victim", 100), 0);
	expect_pos(D_INO, "victim", &a, "target replaced by rename");
	expect_not_pos(E_INO, "there", "old name after rename over a positive");

	/* Over a cached negative. */
	cr_assert_eq(tc_add_neg(env.c, E_INO, "hole"), 0);
	cr_assert_eq(tc_rename(env.c, D_INO, "victim", E_INO, "hole", 100), 0);
	expect_pos(E_INO, "hole", &a, "rename onto a negative");
}

Test(semantics, rename_uncached)
{
	struct udc_attr b = tc_attr(200, UDC_TYPE_REG, 0xBB);

	/* The old name is not cached: the new one must be a miss, whatever it was. */
	cr_assert_eq(tc_rename(env.c, D_INO, "unknown", D_INO, "fresh", 100), 0);
	expect_res(D_INO, "fresh", UDC_MISS, "rename of an uncached name (moved given)");
	expect_not_pos(D_INO, "unknown", "old uncached name");

	cr_assert_eq(tc_add_neg(env.c, D_INO, "wasneg"), 0);
	cr_assert_eq(tc_rename(env.c, D_INO, "unknown2", D_INO, "wasneg", UDC_INO_NONE), 0);
	expect_res(D_INO, "wasneg", UDC_MISS, "rename of an uncached name onto a negative");

	cr_assert_eq(udc_add(env.c, D_INO, "waspos", 6, &b), 0);
	cr_assert_eq(tc_rename(env.c, D_INO, "unknown3", D_INO, "waspos", 300), 0);
	expect_res(D_INO, "waspos", UDC_MISS, "rename of an uncached name onto a positive");
}

Test(semantics_keep, rename_keep_unlinked)
{
	struct udc_attr a = tc_attr(100, UDC_TYPE_REG, 0xAA);

	cr_assert_eq(udc_add(env.c, D_INO, "old", 3, &a), 0);
	cr_assert_eq(tc_rename(env.c, D_INO, "old", E_INO, "new", 100), 0);
	expect_res(D_INO, "old", UDC_NEGATIVE, "old name after rename with KEEP_UNLINKED");
	expect_pos(E_INO, "new", &a, "new name");
}

Test(semantics, rename_to_itself)
{
	struct udc_attr a = tc_attr(100, UDC_TYPE_REG, 0xAA);
	struct udc_stats st, st2;

	cr_assert_eq(udc_add(env.c, D_INO, "same", 4, &a), 0);
	st = tc_stats(env.c);
	cr_assert_eq(tc_rename(env.c, D_INO, "same", D_INO, "same", 100), 0);
	expect_pos(D_INO, "same", &a, "rename to itself");
	cr_assert_eq(tc_rename(env.c, D_INO, "same", D_INO, "same", UDC_INO_NONE), 0);
	expect_pos(D_INO, "same", &a, "rename to itself, moved NONE");
	st2 = tc_stats(env.c);
	cr_assert_eq(st2.nr_positive, st.nr_positive);
	cr_assert_eq(st2.nr_negative, st.nr_negative);
}

Test(semantics, rename_moves_dotdot)
{
	struct udc_attr sub = tc_attr(30, UDC_TYPE_DIR, 0x30), got;
	int r;

	cr_assert_eq(udc_add(env.c, D_INO, "sub", 3, &sub), 0);
	cr_assert_eq(tc_parent(env.c, 30, D_INO), 0);
	r = tc_lookup(env.c, 30, "..", &got);
	cr_assert_eq(r, UDC_POSITIVE, "(sub, \"..\") = %s", tc_res_str(r));
	cr_assert_eq(got.ino, D_INO);

	cr_assert_eq(tc_rename(env.c, D_INO, "sub", E_INO, "sub2", 30), 0);
	r = tc_lookup(env.c, 30, "..", &got);
	cr_assert_eq(r, UDC_POSITIVE, "after move: (sub, \"..\") = %s", tc_res_str(r));
	cr_assert_eq(got.ino, E_INO, "after move: parent %llu, want %llu",
		     (unsigned long long)got.ino, (unsigned long long)E_INO);
	expect_pos(E_INO, "sub2", &sub, "moved dir");

	/* moved NONE: taken from the cached entry. */
	cr_assert_eq(tc_rename(env.c, E_INO, "sub2", D_INO, "sub3", UDC_INO_NONE), 0);
	r = tc_lookup(env.c, 30, "..", &got);
	cr_assert(r == UDC_POSITIVE || r == UDC_MISS, "(sub, \"..\") = %s", tc_res_str(r));
	if (r == UDC_POSITIVE)
		cr_assert_eq(got.ino, D_INO, "moved back with NONE: parent %llu, want %llu",
			     (unsigned long long)got.ino, (unsigned long long)D_INO);
	cr_expect_eq(r, UDC_POSITIVE, "moved with ino NONE: the cached entry knew the ino");
}

Test(semantics, rename_over_dir_removes_it)
{
	struct udc_attr sub = tc_attr(30, UDC_TYPE_DIR, 0x30);
	struct udc_attr victim = tc_attr(40, UDC_TYPE_DIR, 0x40);
	struct udc_attr inside = tc_attr(41, UDC_TYPE_REG, 0x41);

	cr_assert_eq(udc_add(env.c, D_INO, "sub", 3, &sub), 0);
	cr_assert_eq(udc_add(env.c, E_INO, "victim", 6, &victim), 0);
	cr_assert_eq(udc_add(env.c, 40, "inside", 6, &inside), 0);
	cr_assert_eq(tc_add_neg(env.c, 40, "ghost"), 0);
	cr_assert_eq(tc_rename(env.c, D_INO, "sub", E_INO, "victim", 30), 0);
	expect_pos(E_INO, "victim", &sub, "target of the rename");
	expect_res(40, "inside", UDC_MISS, "a name in the replaced directory");
	expect_res(40, "ghost", UDC_MISS, "a negative in the replaced directory");
}

Test(semantics, rmdir_forgets_everything_inside)
{
	struct udc_attr sub = tc_attr(30, UDC_TYPE_DIR, 0x30), a = tc_attr(31, UDC_TYPE_REG, 1);
	char nm[16];

	cr_assert_eq(udc_add(env.c, D_INO, "sub", 3, &sub), 0);
	for (int i = 0; i < 200; i++) {
		snprintf(nm, sizeof(nm), "p%d", i);
		cr_assert_eq(tc_add(env.c, 30, nm, 1000 + i, UDC_TYPE_REG, i), 0);
		snprintf(nm, sizeof(nm), "n%d", i);
		cr_assert_eq(tc_add_neg(env.c, 30, nm), 0);
	}
	cr_assert_eq(udc_add(env.c, D_INO, "keep", 4, &a), 0);
	cr_assert_eq(tc_rmdir(env.c, D_INO, "sub", 30), 0);
	expect_res(D_INO, "sub", UDC_MISS, "the removed dir's name");
	for (int i = 0; i < 200; i++) {
		snprintf(nm, sizeof(nm), "p%d", i);
		expect_res(30, nm, UDC_MISS, "positive in the removed dir");
		snprintf(nm, sizeof(nm), "n%d", i);
		expect_res(30, nm, UDC_MISS, "negative in the removed dir");
	}
	expect_res(30, "..", UDC_MISS, "\"..\" of the removed dir");
	expect_pos(D_INO, "keep", &a, "sibling of the removed dir");
	/* The directory's names can be told again (e.g. the ino is reused). */
	cr_assert_eq(tc_add(env.c, 30, "p1", 5000, UDC_TYPE_REG, 9), 0);
	struct udc_attr again = tc_attr(5000, UDC_TYPE_REG, 9);
	expect_pos(30, "p1", &again, "added after rmdir");
	expect_res(30, "p2", UDC_MISS, "still forgotten");
}

Test(semantics, rmdir_ino_from_cache)
{
	struct udc_attr sub = tc_attr(30, UDC_TYPE_DIR, 0x30);

	cr_assert_eq(udc_add(env.c, D_INO, "sub", 3, &sub), 0);
	cr_assert_eq(tc_add(env.c, 30, "x", 31, UDC_TYPE_REG, 0), 0);
	cr_assert_eq(tc_rmdir(env.c, D_INO, "sub", UDC_INO_NONE), 0);
	expect_res(D_INO, "sub", UDC_MISS, "the removed dir's name");
	expect_res(30, "x", UDC_MISS, "a name in the dir removed with ino NONE");
	/* Of an uncached dir: fine, nothing to forget. */
	cr_assert_eq(tc_rmdir(env.c, D_INO, "nothere", UDC_INO_NONE), 0);
	cr_assert_eq(tc_rmdir(env.c, D_INO, "nothere2", 77), 0);
	expect_not_pos(D_INO, "nothere", "rmdir of an uncached dir");
}

Test(semantics_keep, rmdir_keep_unlinked)
{
	struct udc_attr sub = tc_attr(30, UDC_TYPE_DIR, 0x30);

	cr_assert_eq(udc_add(env.c, D_INO, "sub", 3, &sub), 0);
	cr_assert_eq(tc_add(env.c, 30, "x", 31, UDC_TYPE_REG, 0), 0);
	cr_assert_eq(tc_rmdir(env.c, D_INO, "sub", 30), 0);
	expect_res(D_INO, "sub", UDC_NEGATIVE, "removed dir's name with KEEP_UNLINKED");
	expect_res(30, "x", UDC_MISS, "a name in the removed dir");
}

Test(semantics, invalidate_dir)
{
	struct udc_attr a = tc_attr(100, UDC_TYPE_REG, 1), got;
	char nm[16];
	int r;

	for (int i = 0; i < 100; i++) {
		snprintf(nm, sizeof(nm), "p%d", i);
		cr_assert_eq(tc_add(env.c, D_INO, nm, 1000 + i, UDC_TYPE_REG, i), 0);
		cr_assert_eq(tc_add(env.c, E_INO, nm, 2000 + i, UDC_TYPE_REG, i), 0);
		snprintf(nm, sizeof(nm), "n%d", i);
		cr_assert_eq(tc_add_neg(env.c, D_INO, nm), 0);
	}
	cr_assert_eq(udc_invalidate_dir(env.c, D_INO), 0);
	for (int i = 0; i < 100; i++) {
		struct udc_attr e = tc_attr(2000 + i, UDC_TYPE_REG, i);

		snprintf(nm, sizeof(nm), "p%d", i);
		expect_res(D_INO, nm, UDC_MISS, "positive after invalidate_dir");
		expect_pos(E_INO, nm, &e, "other dir after invalidate_dir");
		snprintf(nm, sizeof(nm), "n%d", i);
		expect_res(D_INO, nm, UDC_MISS, "negative after invalidate_dir");
	}
	/* ".." is a lookup in d too, so it is forgotten; d's own name is kept. */
	r = tc_lookup(env.c, D_INO, "..", &got);
	cr_assert_eq(r, UDC_MISS, "(d, \"..\") after invalidate_dir = %s", tc_res_str(r));
	cr_assert_eq(tc_lookup(env.c, TC_ROOT, "d", NULL), UDC_POSITIVE);
	/* New names are cached again. */
	cr_assert_eq(udc_add(env.c, D_INO, "p1", 2, &a), 0);
	expect_pos(D_INO, "p1", &a, "added after invalidate_dir");
	expect_res(D_INO, "p2", UDC_MISS, "still forgotten");
	/* Twice, and of a dir the cache never saw. */
	cr_assert_eq(udc_invalidate_dir(env.c, D_INO), 0);
	cr_assert_eq(udc_invalidate_dir(env.c, 9999), 0);
	expect_res(D_INO, "p1", UDC_MISS, "second invalidate_dir");
	/* The backend is asked again. */
	tc_store_only(&env, D_INO, "p3", 1003, UDC_TYPE_REG, 3);
	model_reset_calls(env.m);
	cr_assert_eq(tc_resolve(&env, D_INO, "p3", &got), 0);
	cr_assert_eq(got.ino, 1003);
	cr_assert_eq(model_lookup_calls(env.m), 1);
}

Test(semantics, invalidate_name)
{
	struct udc_attr a = tc_attr(100, UDC_TYPE_REG, 1), b = tc_attr(101, UDC_TYPE_REG, 2);

	cr_assert_eq(udc_add(env.c, D_INO, "p", 1, &a), 0);
	cr_assert_eq(udc_add(env.c, D_INO, "q", 1, &b), 0);
	cr_assert_eq(tc_add_neg(env.c, D_INO, "n"), 0);
	cr_assert_eq(tc_invalidate(env.c, D_INO, "p"), 0);
	expect_res(D_INO, "p", UDC_MISS, "invalidated positive");
	expect_pos(D_INO, "q", &b, "neighbour");
	cr_assert_eq(tc_invalidate(env.c, D_INO, "n"), 0);
	expect_res(D_INO, "n", UDC_MISS, "invalidated negative");
	cr_assert_eq(tc_invalidate(env.c, D_INO, "never"), 0);
	expect_res(D_INO, "never", UDC_MISS, "invalidate of an uncached name");
}

Test(semantics, dotdot)
{
	struct udc_attr got, sub = tc_attr(30, UDC_TYPE_DIR, 0x30);
	int r;

	r = tc_lookup(env.c, TC_ROOT, "..", &got);
	cr_assert_eq(r, UDC_POSITIVE, "(root, \"..\") = %s", tc_res_str(r));
	cr_assert_eq(got.ino, TC_ROOT, "root's parent is %llu", (unsigned long long)got.ino);
	cr_expect_eq(got.type, UDC_TYPE_DIR);
	r = tc_resolve(&env, TC_ROOT, "..", &got);
	cr_assert_eq(r, 0, "resolve(root, \"..\") = %s", tc_res_str(r));
	cr_assert_eq(got.ino, TC_ROOT);

	r = tc_lookup(env.c, D_INO, "..", &got);
	cr_assert_eq(r, UDC_POSITIVE, "(d, \"..\") = %s", tc_res_str(r));
	cr_assert_eq(got.ino, TC_ROOT);
	cr_expect_eq(got.type, UDC_TYPE_DIR);

	cr_assert_eq(udc_add(env.c, D_INO, "sub", 3, &sub), 0);
	/* A directory added by its name has no ".." record yet (a line per
	 * directory for an answer seldom asked): told, it has one. */
	expect_res(30, "..", UDC_MISS, "\"..\" of a directory only named");
	cr_assert_eq(tc_parent(env.c, 30, D_INO), 0);
	r = tc_lookup(env.c, 30, "..", &got);
	cr_assert_eq(r, UDC_POSITIVE, "(sub, \"..\") = %s", tc_res_str(r));
	cr_assert_eq(got.ino, D_INO);
	cr_expect_eq(got.type, UDC_TYPE_DIR);
	/* A record that exists follows the directory's name when it is
	 * added elsewhere (the embedder saw it there), with its cookie. */
	cr_assert_eq(udc_add(env.c, E_INO, "sub", 3, &sub), 0);
	r = tc_lookup(env.c, 30, "..", &got);
	cr_assert_eq(r, UDC_POSITIVE, "(sub, \"..\") after its add in e = %s", tc_res_str(r));
	cr_assert_eq(got.ino, E_INO);
	cr_assert_eq(udc_add(env.c, D_INO, "sub", 3, &sub), 0);
	r = tc_lookup(env.c, 30, "..", &got);
	cr_assert_eq(r, UDC_POSITIVE);
	cr_assert_eq(got.ino, D_INO, "and back in d");
	/* A non-directory added does not get a parent. */
	cr_assert_eq(tc_add(env.c, D_INO, "file", 31, UDC_TYPE_REG, 0), 0);
	expect_res(31, "..", UDC_MISS, "\"..\" of a file");
	/* An unknown directory has no known parent. */
	expect_res(9999, "..", UDC_MISS, "\"..\" of an unknown dir");

	cr_assert_eq(tc_rmdir(env.c, D_INO, "sub", 30), 0);
	expect_res(30, "..", UDC_MISS, "\"..\" after rmdir");
	/* "...": an ordinary name. */
	cr_assert_eq(tc_add(env.c, D_INO, "...", 32, UDC_TYPE_REG, 0), 0);
	expect_res(D_INO, "...", UDC_POSITIVE, "\"...\"");
	cr_assert_eq(tc_add(env.c, D_INO, ".a", 33, UDC_TYPE_REG, 0), 0);
	expect_res(D_INO, ".a", UDC_POSITIVE, "\".a\"");
}

static void add_names(udc_ino dir, int n)
{
	char nm[16];

	for (int i = 0; i < n; i++) {
		snprintf(nm, sizeof(nm), "f%d", i);
		tc_store_add(&env, dir, nm, 1000 + (udc_ino)i, UDC_TYPE_REG, (uint64_t)i);
	}
}

Test(semantics, dir_complete)
{
	struct udc_stats st, st2;
	struct udc_attr got;
	int r;

	add_names(D_INO, 20);
	cr_assert_eq(tc_complete(env.c, D_INO), 0);
	st = tc_stats(env.c);
	model_reset_calls(env.m);
	expect_res(D_INO, "missing", UDC_NEGATIVE, "miss in a complete dir");
	r = tc_resolve(&env, D_INO, "missing2", &got);
	cr_assert_eq(r, -ENOENT, "resolve in a complete dir = %s", tc_res_str(r));
	cr_assert_eq(model_calls(env.m), 0, "the backend was asked in a complete dir");
	expect_res(D_INO, "f3", UDC_POSITIVE, "a name of a complete dir");
	r = tc_resolve(&env, D_INO, "f7", &got);
	cr_assert_eq(r, 0);
	cr_assert_eq(got.ino, 1007);
	st2 = tc_stats(env.c);
	cr_assert_eq(st2.nr_negative, st.nr_negative, "a negative was stored: %llu -> %llu",
		     (unsigned long long)st.nr_negative, (unsigned long long)st2.nr_negative);
	cr_assert_eq(st2.backend_calls, st.backend_calls);
	/* Other directories are not complete. */
	expect_res(E_INO, "missing", UDC_MISS, "other dir");
	/* ".." is not a miss in a complete dir. */
	r = tc_lookup(env.c, D_INO, "..", &got);
	cr_assert_eq(r, UDC_POSITIVE, "(complete d, \"..\") = %s", tc_res_str(r));
	cr_assert_eq(got.ino, TC_ROOT);

	/* Adding a name (a create) keeps the dir complete. */
	tc_store_add(&env, D_INO, "created", 2000, UDC_TYPE_REG, 0);
	expect_res(D_INO, "created", UDC_POSITIVE, "created in a complete dir");
	r = tc_lookup(env.c, D_INO, "missing", NULL);
	cr_expect_eq(r, UDC_NEGATIVE, "complete dir after udc_add of a new name: %s",
		     tc_res_str(r));
	/* A removed name is never positive. */
	model_del(env.m, D_INO, "f1", 2);
	cr_assert_eq(tc_remove(env.c, D_INO, "f1"), 0);
	expect_not_pos(D_INO, "f1", "removed from a complete dir");

	/* udc_invalidate of any name clears completeness. */
	cr_assert_eq(tc_invalidate(env.c, D_INO, "f2"), 0);
	expect_res(D_INO, "missing", UDC_MISS, "after invalidate of a name");
	model_reset_calls(env.m);
	r = tc_resolve(&env, D_INO, "missing3", NULL);
	cr_assert_eq(r, -ENOENT);
	cr_assert_eq(model_lookup_calls(env.m), 1, "the backend must be asked again");
	expect_res(D_INO, "f3", UDC_POSITIVE, "names stay cached");
}

Test(semantics, dir_complete_cleared_by_invalidate_dir_and_rmdir)
{
	struct udc_attr sub = tc_attr(30, UDC_TYPE_DIR, 0x30);

	add_names(D_INO, 5);
	cr_assert_eq(tc_complete(env.c, D_INO), 0);
	expect_res(D_INO, "missing", UDC_NEGATIVE, "complete");
	cr_assert_eq(udc_invalidate_dir(env.c, D_INO), 0);
	expect_res(D_INO, "missing", UDC_MISS, "after invalidate_dir");
	expect_res(D_INO, "f1", UDC_MISS, "after invalidate_dir");

	/* Again, cleared by rmdir. */
	cr_assert_eq(udc_add(env.c, D_INO, "sub", 3, &sub), 0);
	cr_assert_eq(tc_add(env.c, 30, "x", 31, UDC_TYPE_REG, 0), 0);
	cr_assert_eq(tc_complete(env.c, 30), 0);
	expect_res(30, "y", UDC_NEGATIVE, "complete sub");
	cr_assert_eq(tc_rmdir(env.c, D_INO, "sub", 30), 0);
	expect_res(30, "y", UDC_MISS, "complete dir after rmdir");
	expect_res(30, "x", UDC_MISS, "name of a removed complete dir");

	/* An empty complete directory. */
	cr_assert_eq(tc_complete(env.c, 77), 0);
	expect_res(77, "anything", UDC_NEGATIVE, "empty complete dir");
	cr_assert_eq(tc_resolve(&env, 77, "anything", NULL), -ENOENT);
	cr_assert_eq(model_calls(env.m), 0);
}

Test(semantics, resolve_caches_answers)
{
	struct udc_attr a = tc_attr(100, UDC_TYPE_REG, 0xAB), got;
	int r;

	tc_store_only(&env, D_INO, "p", 100, UDC_TYPE_REG, 0xAB);
	expect_res(D_INO, "p", UDC_MISS, "before resolve");
	r = tc_resolve(&env, D_INO, "p", &got);
	cr_assert_eq(r, 0, "resolve = %s", tc_res_str(r));
	cr_assert(tc_attr_eq(&got, &a));
	cr_assert_eq(model_lookup_calls(env.m), 1);
	expect_pos(D_INO, "p", &a, "after resolve");
	r = tc_resolve(&env, D_INO, "p", &got);
	cr_assert_eq(r, 0);
	cr_assert(tc_attr_eq(&got, &a));
	cr_assert_eq(model_lookup_calls(env.m), 1, "second resolve called the backend");
	cr_assert_eq(tc_resolve(&env, D_INO, "p", NULL), 0, "out NULL");

	/* Negative answers. */
	r = tc_resolve(&env, D_INO, "absent", &got);
	cr_assert_eq(r, -ENOENT, "resolve of an absent name = %s", tc_res_str(r));
	cr_assert_eq(model_lookup_calls(env.m), 2);
	r = tc_lookup(env.c, D_INO, "absent", NULL);
	cr_assert_neq(r, UDC_POSITIVE);
	cr_expect_eq(r, UDC_NEGATIVE, "the negative answer was not cached: %s", tc_res_str(r));
	r = tc_resolve(&env, D_INO, "absent", NULL);
	cr_assert_eq(r, -ENOENT);
	cr_expect_eq(model_lookup_calls(env.m), 2,
		     "second resolve of a negative called the "
		     "backend");
	/* ctx goes to the backend as is. */
	cr_assert_eq(model_last_ctx(env.m), env.m);
}

Test(semantics, resolve_backend_errors_not_cached)
{
	struct udc_attr got;
	int r;

	tc_store_only(&env, D_INO, "p", 100, UDC_TYPE_REG, 1);
	model_set_error(env.m, D_INO, "p", 1, -EIO);
	model_set_error(env.m, D_INO, "q", 1, -EACCES);
	r = tc_resolve(&env, D_INO, "p", &got);
	cr_assert_eq(r, -EIO, "resolve with a failing backend = %s", tc_res_str(r));
	expect_res(D_INO, "p", UDC_MISS, "after a backend error");
	r = tc_resolve(&env, D_INO, "p", &got);
	cr_assert_eq(r, -EIO);
	cr_assert_eq(model_lookup_calls(env.m), 2, "the error was cached");
	r = tc_resolve(&env, D_INO, "q", &got);
	cr_assert_eq(r, -EACCES, "resolve = %s", tc_res_str(r));
	expect_res(D_INO, "q", UDC_MISS, "after -EACCES");
	/* Healed. */
	model_set_error(env.m, D_INO, "p", 1, 0);
	r = tc_resolve(&env, D_INO, "p", &got);
	cr_assert_eq(r, 0, "resolve after the error cleared = %s", tc_res_str(r));
	cr_assert_eq(got.ino, 100);
	expect_res(D_INO, "p", UDC_POSITIVE, "cached now");
}

Test(semantics, resolve_null_call)
{
	struct udc_attr got;

	tc_store_only(&env, D_INO, "p", 100, UDC_TYPE_REG, 1);
	cr_assert_eq(udc_resolve(env.c, D_INO, "p", 1, NULL, &got), 0);
	cr_assert_eq(got.ino, 100);
	cr_assert_null(model_last_ctx(env.m), "call NULL must pass ctx NULL");
	cr_assert_eq(udc_resolve(env.c, D_INO, "p", 1, NULL, NULL), 0);
}

Test(semantics, resolve_without_backend)
{
	udc_cache *c = tc_create(TC_ROOT, NULL, 0);
	struct udc_attr a = tc_attr(100, UDC_TYPE_REG, 5), got;
	int r;

	r = udc_resolve(c, 2, "x", 1, NULL, &got);
	cr_assert_eq(r, -EAGAIN, "miss with no backend = %s", tc_res_str(r));
	cr_assert_eq(udc_lookup(c, 2, "x", 1, NULL), UDC_MISS, "the -EAGAIN was cached");
	cr_assert_eq(udc_add(c, 2, "x", 1, &a), 0);
	r = udc_resolve(c, 2, "x", 1, NULL, &got);
	cr_assert_eq(r, 0, "hit with no backend = %s", tc_res_str(r));
	cr_assert(tc_attr_eq(&got, &a));
	cr_assert_eq(udc_add_negative(c, 2, "y", 1, 0), 0);
	if (udc_lookup(c, 2, "y", 1, NULL) == UDC_NEGATIVE)
		cr_assert_eq(udc_resolve(c, 2, "y", 1, NULL, &got), -ENOENT);
	cr_assert_eq(tc_complete(c, 3), 0);
	cr_assert_eq(udc_resolve(c, 3, "z", 1, NULL, &got), -ENOENT,
		     "complete dir with no backend");
	r = udc_walk(c, TC_ROOT, "/nothing", 8, 0, NULL, &got);
	cr_assert_eq(r, -EAGAIN, "walk miss with no backend = %s", tc_res_str(r));
	udc_destroy(c);
}

Test(semantics, names_compared_exactly)
{
	const char *names[] = { "abc",	    "ABC",   "Abc",	 "abC",	      "abc ", " abc",
				"ab",	    "abcd",  "\xc3\xa9", "e\xcc\x81", "\x80", "\xff",
				"\xff\xfe", "a\x01", "a\x7f",	 "A",	      "a" };
	const size_t n = sizeof(names) / sizeof(names[0]);
	char long_a[255], long_b[255];

	for (size_t i = 0; i < n; i++)
		cr_assert_eq(tc_add(env.c, D_INO, names[i], 100 + i, UDC_TYPE_REG, i), 0,
			     "add #%zu", i);
	for (size_t i = 0; i < n; i++) {
		struct udc_attr want = tc_attr(100 + i, UDC_TYPE_REG, i);

		expect_pos(D_INO, names[i], &want, "distinct names");
	}
	expect_res(D_INO, "aBC", UDC_MISS, "case differs");
	expect_res(D_INO, "\xc3\xa8", UDC_MISS, "one byte differs");
	cr_assert_eq(tc_remove(env.c, D_INO, "ABC"), 0);
	struct udc_attr lower = tc_attr(100, UDC_TYPE_REG, 0);
	expect_pos(D_INO, "abc", &lower, "removing ABC left abc");

	/* Long names differing in the first or the last byte only. */
	memset(long_a, 'q', sizeof(long_a));
	memcpy(long_b, long_a, sizeof(long_b));
	long_b[254] = 'r';
	struct udc_attr la = tc_attr(900, UDC_TYPE_REG, 1), lb = tc_attr(901, UDC_TYPE_REG, 2);
	cr_assert_eq(udc_add(env.c, D_INO, long_a, 255, &la), 0);
	cr_assert_eq(udc_lookup(env.c, D_INO, long_b, 255, NULL), UDC_MISS);
	cr_assert_eq(udc_add(env.c, D_INO, long_b, 255, &lb), 0);
	long_b[254] = 'q';
	long_b[0] = 'r';
	cr_assert_eq(udc_lookup(env.c, D_INO, long_b, 255, NULL), UDC_MISS);
	struct udc_attr got;
	cr_assert_eq(udc_lookup(env.c, D_INO, long_a, 255, &got), UDC_POSITIVE);
	cr_assert(tc_attr_eq(&got, &la));
}

Test(semantics, many_names_many_dirs)
{
	char nm[32];

	for (udc_ino d = 100; d < 132; d++)
		for (int i = 0; i < 300; i++) {
			snprintf(nm, sizeof(nm), "n%d", i);
			cr_assert_eq(tc_add(env.c, d, nm, d * 1000 + (udc_ino)i, UDC_TYPE_REG,
					    d ^ (udc_ino)i),
				     0);
		}
	for (udc_ino d = 100; d < 132; d++)
		for (int i = 0; i < 300; i++) {
			struct udc_attr want =
				tc_attr(d * 1000 + (udc_ino)i, UDC_TYPE_REG, d ^ (udc_ino)i);

			snprintf(nm, sizeof(nm), "n%d", i);
			expect_pos(d, nm, &want, "9600 names");
		}
	struct udc_stats st = tc_stats(env.c);
	cr_expect_geq(st.nr_positive, 32 * 300);
}

Test(semantics, shrink_frees_and_stays_correct)
{
	char nm[32];
	struct udc_stats s0, s1;
	size_t freed;

	for (int i = 0; i < 5000; i++) {
		snprintf(nm, sizeof(nm), "p%d", i);
		cr_assert_eq(tc_add(env.c, D_INO, nm, 10000 + (udc_ino)i, UDC_TYPE_REG, i), 0);
		snprintf(nm, sizeof(nm), "n%d", i);
		cr_assert_eq(tc_add_neg(env.c, D_INO, nm), 0);
	}
	s0 = tc_stats(env.c);
	freed = udc_shrink(env.c, SIZE_MAX);
	s1 = tc_stats(env.c);
	cr_expect_gt(freed, 0, "udc_shrink(SIZE_MAX) freed nothing");
	cr_expect_lt(s1.nr_positive + s1.nr_negative, s0.nr_positive + s0.nr_negative);
	cr_expect_gt(s1.evictions, s0.evictions);
	cr_expect_lt(s1.bytes_used, s0.bytes_used);
	for (int i = 0; i < 5000; i++) {
		struct udc_attr got, want = tc_attr(10000 + (udc_ino)i, UDC_TYPE_REG, i);
		int r;

		snprintf(nm, sizeof(nm), "p%d", i);
		r = tc_lookup(env.c, D_INO, nm, &got);
		cr_assert(r == UDC_MISS || (r == UDC_POSITIVE && tc_attr_eq(&got, &want)),
			  "after shrink: %s = %s", nm, tc_res_str(r));
		snprintf(nm, sizeof(nm), "n%d", i);
		r = tc_lookup(env.c, D_INO, nm, NULL);
		cr_assert(r == UDC_MISS || r == UDC_NEGATIVE, "after shrink: %s = %s", nm,
			  tc_res_str(r));
	}
	/* Still usable. */
	struct udc_attr a = tc_attr(7, UDC_TYPE_REG, 7);
	cr_assert_eq(udc_add(env.c, D_INO, "after", 5, &a), 0);
	expect_pos(D_INO, "after", &a, "added after shrink");
	cr_assert_eq(udc_shrink(env.c, 0) <= s0.bytes_used, 1);
}
