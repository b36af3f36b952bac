/* SPDX-License-Identifier: MIT */
/*
 * tests/engine/test_walk.c - udc_walk over a model tree with symlinks.
 *
 * The tree lives in the model store only; the cache learns it through the
 * backend as the walks go, so the tests also check what a walk caches.
 *
 *   /                     1
 *   /a/                   2
 *   /a/b/                 3
 *   /a/b/c                4  file
 *   /a/f                  5  file
 *   /a/lc  -> b/c         6
 *   /a/labs -> /a/b       7
 *   /a/ldot -> .          8
 *   /x/                   9
 *   /x/y                 10  file
 *   /x/la -> /a/b        18
 *   /file                11  file
 *   /loop1 -> loop2      12
 *   /loop2 -> loop1      13
 *   /self -> self        14
 *   /ld -> a             15
 *   /lf -> file          16
 *   /dangling -> nowhere 17
 *   /lnotdir -> file/x   19
 *   /ch/                 20  chains: aN (40 links to /file), bN (41 links to
 *                            /file), cN (40 links to /a), dN (41 links to /a)
 */
#include <criterion/criterion.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "include/udcache.h"
#include "common/model.h"
#include "common/tcache.h"

static struct tenv env;

static void mk(udc_ino dir, const char *name, udc_ino ino, uint32_t type)
{
	tc_store_only(&env, dir, name, ino, type, ino * 0x100 + 7);
}

static void mklink(udc_ino dir, const char *name, udc_ino ino, const char *target)
{
	mk(dir, name, ino, UDC_TYPE_SYMLINK);
	model_set_link_s(env.m, ino, target);
}

/* A chain of n symlinks pfx1 -> pfx2 -> ... -> pfxn -> final, in /ch. */
static void mkchain(const char *pfx, int n, udc_ino first_ino, const char *final)
{
	char nm[16], tgt[16];

	for (int i = 1; i <= n; i++) {
		snprintf(nm, sizeof(nm), "%s%d", pfx, i);
		snprintf(tgt, sizeof(tgt), "%s%d", pfx, i + 1);
		mklink(20, nm, first_ino + (udc_ino)i, i == n ? final : tgt);
	}
}

static void build_tree(void)
{
	mk(TC_ROOT, "a", 2, UDC_TYPE_DIR);
	mk(2, "b", 3, UDC_TYPE_DIR);
	mk(3, "c", 4, UDC_TYPE_REG);
	mk(2, "f", 5, UDC_TYPE_REG);
	mklink(2, "lc", 6, "b/c");
	mklink(2, "labs", 7, "/a/b");
	mklink(2, "ldot", 8, ".");
	mk(TC_ROOT, "x", 9, UDC_TYPE_DIR);
	mk(9, "y", 10, UDC_TYPE_REG);
	mklink(9, "la", 18, "/a/b");
	mk(TC_ROOT, "file", 11, UDC_TYPE_REG);
	mklink(TC_ROOT, "loop1", 12, "loop2");
	mklink(TC_ROOT, "loop2", 13, "loop1");
	mklink(TC_ROOT, "self", 14, "self");
	mklink(TC_ROOT, "ld", 15, "a");
	mklink(TC_ROOT, "lf", 16, "file");
	mklink(TC_ROOT, "dangling", 17, "nowhere");
	mklink(TC_ROOT, "lnotdir", 19, "file/x");
	mk(TC_ROOT, "ch", 20, UDC_TYPE_DIR);
	mkchain("a", 40, 1000, "/file");
	mkchain("b", 41, 2000, "/file");
	mkchain("c", 40, 3000, "/a");
	mkchain("d", 41, 4000, "/a");
	model_reset_calls(env.m);
}

static void setup(void)
{
	tenv_init(&env, 0);
	build_tree();
}

static void setup_nolink(void)
{
	tenv_init_be(&env, &model_backend_nolink, 0);
	build_tree();
}

static void teardown(void)
{
	tenv_fini(&env);
}

TestSuite(walk, .init = setup, .fini = teardown, .timeout = 30);
/* The same tree behind a backend without readlink. */
TestSuite(walk_nolink, .init = setup_nolink, .fini = teardown, .timeout = 30);

/* Walk @path from @start and check the result: @want_ino when @want_err is 0. */
static void walk_is(udc_ino start, const char *path, unsigned flags, int want_err, udc_ino want_ino)
{
	struct udc_attr got;
	int r;

	memset(&got, 0, sizeof(got));
	r = tc_walk(&env, start, path, flags, &got);
	cr_assert_eq(r, want_err, "walk(%llu, \"%s\", %#x) = %s, want %s",
		     (unsigned long long)start, path, flags, tc_res_str(r), tc_res_str(want_err));
	if (want_err == 0)
		cr_assert_eq(got.ino, want_ino, "walk(%llu, \"%s\", %#x) gave ino %llu, want %llu",
			     (unsigned long long)start, path, flags, (unsigned long long)got.ino,
			     (unsigned long long)want_ino);
}

Test(walk, root)
{
	walk_is(TC_ROOT, "/", 0, 0, TC_ROOT);
	walk_is(TC_ROOT, "//", 0, 0, TC_ROOT);
	walk_is(TC_ROOT, "///", UDC_WALK_FOLLOW, 0, TC_ROOT);
	walk_is(TC_ROOT, "/.", 0, 0, TC_ROOT);
	walk_is(TC_ROOT, "/./", 0, 0, TC_ROOT);
	walk_is(TC_ROOT, ".", 0, 0, TC_ROOT);
	walk_is(3, "/", 0, 0, TC_ROOT);
	walk_is(TC_ROOT, "/..", 0, 0, TC_ROOT);
	walk_is(TC_ROOT, "/../..", 0, 0, TC_ROOT);
	walk_is(TC_ROOT, "..", 0, 0, TC_ROOT);
	walk_is(TC_ROOT, "/../a", 0, 0, 2);
	walk_is(TC_ROOT, "/../../a/../../x/y", 0, 0, 10);
	struct udc_attr got;
	cr_assert_eq(tc_walk(&env, TC_ROOT, "/", 0, &got), 0);
	cr_expect_eq(got.type, UDC_TYPE_DIR, "\"/\" has type %u", got.type);
}

/* A walk that ends on a directory it did not look up by name (its start,
 * ".", a ".." back to the start, "/") gives that directory's own attr: its
 * cookie is the directory's (read at the end of the walk, not at its
 * start), and nothing of the walk's bookkeeping shows in it. */
Test(walk, ends_on_a_directory_not_named_with_its_own_attr)
{
	struct udc_attr got, dd;
	const struct udc_attr two = { .ino = 2, .type = UDC_TYPE_DIR, .cookie = 0x5eed };

	walk_is(TC_ROOT, "/a/b/c", 0, 0, 4);
	cr_assert_eq(udc_add(env.c, 3, "..", 2, &two), 0);   /* 2's cookie, with b's record */
	cr_assert_eq(udc_resolve(env.c, 3, "..", 2, NULL, &dd), 0);
	cr_assert_eq(dd.ino, 2);
	cr_assert_eq(dd.cookie, 0x5eed, "the '..' record's cookie is %#llx",
		     (unsigned long long)dd.cookie);
	const char *paths[] = { ".", "./", "b/..", "b/../.", "b/../b/.." };
	for (size_t i = 0; i < sizeof(paths) / sizeof(paths[0]); i++) {
		memset(&got, 0xa5, sizeof(got));
		cr_assert_eq(tc_walk(&env, 2, paths[i], 0, &got), 0, "walk of \"%s\" from 2",
			     paths[i]);
		cr_expect(got.ino == 2 && got.type == UDC_TYPE_DIR && got.flags == 0 &&
				  got.cookie == dd.cookie,
			  "walk of \"%s\" from 2: ino %llu type %u flags %#x cookie %#llx", paths[i],
			  (unsigned long long)got.ino, got.type, got.flags,
			  (unsigned long long)got.cookie);
	}
	/* The root's own cookie, with a's record of it. */
	const struct udc_attr root = { .ino = TC_ROOT, .type = UDC_TYPE_DIR, .cookie = 0x700d };
	cr_assert_eq(udc_add(env.c, 2, "..", 2, &root), 0);
	/* ... "/a/labs/../..": labs -> /a/b, the walk starts again at the
	 * root and goes back up to it. */
	const char *roots[] = { "/", "/.", "/..", "/a/..", "/a/b/../..", "/a/labs/../.." };
	for (size_t i = 0; i < sizeof(roots) / sizeof(roots[0]); i++) {
		memset(&got, 0xa5, sizeof(got));
		cr_assert_eq(tc_walk(&env, 3, roots[i], 0, &got), 0, "walk of \"%s\"", roots[i]);
		cr_expect(got.ino == TC_ROOT && got.type == UDC_TYPE_DIR && got.flags == 0 &&
				  got.cookie == root.cookie,
			  "walk of \"%s\": ino %llu type %u flags %#x cookie %#llx", roots[i],
			  (unsigned long long)got.ino, got.type, got.flags,
			  (unsigned long long)got.cookie);
	}
}

Test(walk, components)
{
	struct udc_attr got;

	cr_assert_eq(tc_walk(&env, TC_ROOT, "/a", 0, &got), 0);
	cr_assert_eq(got.ino, 2);
	cr_assert_eq(got.type, UDC_TYPE_DIR);
	cr_assert_eq(got.cookie, 2 * 0x100 + 7, "the walk lost the cookie");
	walk_is(TC_ROOT, "/a/b/c", 0, 0, 4);
	walk_is(TC_ROOT, "//a//b//c", 0, 0, 4);
	walk_is(TC_ROOT, "//a//b", 0, 0, 3);
	walk_is(TC_ROOT, "a/./b", 0, 0, 3);
	walk_is(TC_ROOT, "a/../x", 0, 0, 9);
	walk_is(TC_ROOT, "a/../x/y", 0, 0, 10);
	walk_is(TC_ROOT, "/a/b/../f", 0, 0, 5);
	walk_is(TC_ROOT, "/a/b/../../x/./y", 0, 0, 10);
	walk_is(TC_ROOT, "./a/./././b/.", 0, 0, 3);
	walk_is(2, "b/c", 0, 0, 4);
	walk_is(2, "./b", 0, 0, 3);
	walk_is(2, "..", 0, 0, TC_ROOT);
	walk_is(2, "../x", 0, 0, 9);
	walk_is(3, "../../file", 0, 0, 11);
	/* out may be NULL. */
	cr_assert_eq(udc_walk(env.c, TC_ROOT, "/a/b/c", 6, 0, &env.call, NULL), 0);
	/* A NULL call works (ctx NULL; the model backend copes). */
	cr_assert_eq(udc_walk(env.c, TC_ROOT, "/x/y", 4, 0, NULL, &got), 0);
	cr_assert_eq(got.ino, 10);
}

Test(walk, trailing_slash)
{
	walk_is(TC_ROOT, "/a/", 0, 0, 2);
	walk_is(TC_ROOT, "/a/b/", 0, 0, 3);
	walk_is(TC_ROOT, "/a/b//", 0, 0, 3);
	walk_is(TC_ROOT, "a/", 0, 0, 2);
	walk_is(TC_ROOT, "/file/", 0, -ENOTDIR, 0);
	walk_is(TC_ROOT, "/a/b/c/", 0, -ENOTDIR, 0);
	walk_is(TC_ROOT, "/a/b/c//", UDC_WALK_FOLLOW, -ENOTDIR, 0);
	/* A trailing '/' follows a final symlink even without UDC_WALK_FOLLOW. */
	walk_is(TC_ROOT, "/ld/", 0, 0, 2);
	walk_is(TC_ROOT, "/lf/", 0, -ENOTDIR, 0);
	walk_is(TC_ROOT, "/a/lc/", 0, -ENOTDIR, 0);
}

Test(walk, enotdir)
{
	walk_is(TC_ROOT, "/file/x", 0, -ENOTDIR, 0);
	walk_is(TC_ROOT, "/a/b/c/d", 0, -ENOTDIR, 0);
	walk_is(TC_ROOT, "/a/b/c/d/e", 0, -ENOTDIR, 0);
	walk_is(TC_ROOT, "/file/.", 0, -ENOTDIR, 0);
	walk_is(TC_ROOT, "/file/..", 0, -ENOTDIR, 0);
	walk_is(TC_ROOT, "/lf/x", 0, -ENOTDIR, 0);
	walk_is(TC_ROOT, "/lnotdir", UDC_WALK_FOLLOW, -ENOTDIR, 0);
	walk_is(TC_ROOT, "/lnotdir/y", 0, -ENOTDIR, 0);
}

Test(walk, enoent)
{
	walk_is(TC_ROOT, "/nope", 0, -ENOENT, 0);
	walk_is(TC_ROOT, "/a/nope/c", 0, -ENOENT, 0);
	walk_is(TC_ROOT, "/a/b/nope", 0, -ENOENT, 0);
	walk_is(TC_ROOT, "/a/b/nope/", 0, -ENOENT, 0);
	walk_is(TC_ROOT, "nope/..", 0, -ENOENT, 0);
	walk_is(TC_ROOT, "/dangling", UDC_WALK_FOLLOW, -ENOENT, 0);
	walk_is(TC_ROOT, "/dangling/", 0, -ENOENT, 0);
	/* Without FOLLOW the dangling link itself is the answer. */
	walk_is(TC_ROOT, "/dangling", 0, 0, 17);
	/* The negatives are cached: no backend call the second time. */
	uint64_t calls = model_lookup_calls(env.m);
	walk_is(TC_ROOT, "/nope", 0, -ENOENT, 0);
	walk_is(TC_ROOT, "/a/b/nope", 0, -ENOENT, 0);
	cr_assert_eq(model_lookup_calls(env.m), calls, "cached negatives were asked again");
}

Test(walk, symlinks_in_the_middle)
{
	walk_is(TC_ROOT, "/ld/b/c", 0, 0, 4);	      /* relative target */
	walk_is(TC_ROOT, "/a/labs/c", 0, 0, 4);	      /* absolute target */
	walk_is(TC_ROOT, "/a/ldot/f", 0, 0, 5);	      /* "." target */
	walk_is(TC_ROOT, "/ld/ldot/labs/c", 0, 0, 4); /* several */
	walk_is(TC_ROOT, "/ld/../x/y", 0, 0, 10);     /* ".." after a link */
	walk_is(TC_ROOT, "/x/la/../f", 0, 0, 5);      /* ".." of the target's dir */
	walk_is(9, "la/c", 0, 0, 4);		      /* relative walk, absolute link */
	walk_is(TC_ROOT, "ld/b", 0, 0, 3);
}

Test(walk, last_symlink_follow_flag)
{
	struct udc_attr got;

	cr_assert_eq(tc_walk(&env, TC_ROOT, "/a/lc", 0, &got), 0);
	cr_assert_eq(got.ino, 6);
	cr_assert_eq(got.type, UDC_TYPE_SYMLINK);
	cr_assert_eq(tc_walk(&env, TC_ROOT, "/a/lc", UDC_WALK_FOLLOW, &got), 0);
	cr_assert_eq(got.ino, 4);
	cr_assert_eq(got.type, UDC_TYPE_REG);
	walk_is(TC_ROOT, "/ld", 0, 0, 15);
	walk_is(TC_ROOT, "/ld", UDC_WALK_FOLLOW, 0, 2);
	walk_is(TC_ROOT, "/lf", UDC_WALK_FOLLOW, 0, 11);
	walk_is(TC_ROOT, "/x/la", UDC_WALK_FOLLOW, 0, 3);
	walk_is(TC_ROOT, "/x/la", 0, 0, 18);
	/* "." / ".." after a final symlink force following it. */
	walk_is(TC_ROOT, "/ld/.", 0, 0, 2);
	walk_is(TC_ROOT, "/x/la/..", 0, 0, 2);
}

Test(walk, loops)
{
	walk_is(TC_ROOT, "/loop1", UDC_WALK_FOLLOW, -ELOOP, 0);
	walk_is(TC_ROOT, "/loop1", 0, 0, 12);
	walk_is(TC_ROOT, "/loop1/x", 0, -ELOOP, 0);
	walk_is(TC_ROOT, "/loop2/", 0, -ELOOP, 0);
	walk_is(TC_ROOT, "/self", UDC_WALK_FOLLOW, -ELOOP, 0);
	walk_is(TC_ROOT, "/self/", 0, -ELOOP, 0);
	walk_is(TC_ROOT, "self/a", 0, -ELOOP, 0);
	/* The cache is still sound afterwards. */
	walk_is(TC_ROOT, "/ld/b/c", 0, 0, 4);
}

Test(walk, chain_of_40_ok_41_eloop)
{
	walk_is(TC_ROOT, "/ch/a1", UDC_WALK_FOLLOW, 0, 11);
	walk_is(TC_ROOT, "/ch/a1", 0, 0, 1001);
	walk_is(TC_ROOT, "/ch/a2", UDC_WALK_FOLLOW, 0, 11);
	walk_is(TC_ROOT, "/ch/b1", UDC_WALK_FOLLOW, -ELOOP, 0);
	walk_is(TC_ROOT, "/ch/b2", UDC_WALK_FOLLOW, 0, 11); /* 40 of them */
	walk_is(TC_ROOT, "/ch/c1/f", 0, 0, 5);
	walk_is(TC_ROOT, "/ch/c1/", 0, 0, 2);
	walk_is(TC_ROOT, "/ch/d1/f", 0, -ELOOP, 0);
	walk_is(TC_ROOT, "/ch/d2/f", 0, 0, 5);
	/* The 40 are per walk: one more link before the chain is one too many. */
	walk_is(TC_ROOT, "/ld/../ch/c1/f", 0, -ELOOP, 0);
	walk_is(TC_ROOT, "/ld/../ch/c2/f", 0, 0, 5);
	/* Again, now that everything is cached. */
	walk_is(TC_ROOT, "/ch/a1", UDC_WALK_FOLLOW, 0, 11);
	walk_is(TC_ROOT, "/ch/b1", UDC_WALK_FOLLOW, -ELOOP, 0);
}

Test(walk_nolink, no_readlink)
{
	walk_is(TC_ROOT, "/a/b/c", 0, 0, 4);
	walk_is(TC_ROOT, "/a/lc", 0, 0, 6);
	walk_is(TC_ROOT, "/a/lc", UDC_WALK_FOLLOW, -ELOOP, 0);
	walk_is(TC_ROOT, "/ld/b", 0, -ELOOP, 0);
	walk_is(TC_ROOT, "/ld/", 0, -ELOOP, 0);
	cr_assert_eq(model_readlink_calls(env.m), 0);
}

Test(walk, results_are_cached)
{
	struct udc_attr got;
	uint64_t calls, links;
	int r;

	walk_is(TC_ROOT, "/a/b/c", 0, 0, 4);
	calls = model_calls(env.m);
	cr_assert_geq(calls, 3, "a fresh walk of /a/b/c made %llu backend calls",
		      (unsigned long long)calls);
	walk_is(TC_ROOT, "/a/b/c", 0, 0, 4);
	walk_is(TC_ROOT, "//a/./b/../b/c", 0, 0, 4);
	cr_assert_eq(model_calls(env.m), calls, "the second walk called the backend");
	r = tc_lookup(env.c, TC_ROOT, "a", &got);
	cr_assert_eq(r, UDC_POSITIVE, "(root, a) after the walk: %s", tc_res_str(r));
	cr_assert_eq(got.ino, 2);
	cr_assert_eq(tc_lookup(env.c, 2, "b", NULL), UDC_POSITIVE);
	cr_assert_eq(tc_lookup(env.c, 3, "c", &got), UDC_POSITIVE);
	cr_assert_eq(got.ino, 4);
	cr_assert_eq(got.cookie, 4 * 0x100 + 7);

	/* Through symlinks: the names are cached (readlink may be asked again). */
	walk_is(TC_ROOT, "/ld/labs/c", 0, 0, 4);
	calls = model_lookup_calls(env.m);
	links = model_readlink_calls(env.m);
	walk_is(TC_ROOT, "/ld/labs/c", 0, 0, 4);
	cr_assert_eq(model_lookup_calls(env.m), calls, "second walk through links: lookups");
	cr_log_info("second walk through 2 links: %llu readlink calls",
		    (unsigned long long)(model_readlink_calls(env.m) - links));

	/* A cache-only walk over what the first walks cached. */
	struct udc_stats s0 = tc_stats(env.c), s1;
	walk_is(TC_ROOT, "/a/b/c", 0, 0, 4);
	s1 = tc_stats(env.c);
	cr_expect_eq(s1.backend_calls, s0.backend_calls);
	cr_expect_geq(s1.hits_positive - s0.hits_positive, 3);
}

Test(walk, backend_error)
{
	model_set_error(env.m, 2, "b", 1, -EIO);
	walk_is(TC_ROOT, "/a/b/c", 0, -EIO, 0);
	cr_assert_eq(tc_lookup(env.c, 2, "b", NULL), UDC_MISS, "the error was cached");
	model_set_error(env.m, 2, "b", 1, 0);
	walk_is(TC_ROOT, "/a/b/c", 0, 0, 4);
}

Test(walk, relative_dotdot_from_uncached_start)
{
	/* Nothing about 3 is cached: ".." must come from the backend. */
	walk_is(3, "..", 0, 0, 2);
	walk_is(3, "../f", 0, 0, 5);
	walk_is(9, "../a/b/c", 0, 0, 4);
}

Test(walk, spliced_path_too_long)
{
	char *target = malloc(3002), *path = malloc(1300);
	size_t n = 0;
	int r;

	cr_assert(target && path);
	for (int i = 0; i < 1500; i++, n += 2)
		memcpy(target + n, "./", 2);
	target[n++] = 'a';
	mk(TC_ROOT, "big", 30, UDC_TYPE_SYMLINK);
	model_set_link(env.m, 30, target, n);
	walk_is(TC_ROOT, "/big/f", 0, 0, 5);

	n = 0;
	memcpy(path, "/big/", 5);
	n = 5;
	for (int i = 0; i < 600; i++, n += 2)
		memcpy(path + n, "./", 2);
	path[n++] = 'f';
	r = udc_walk(env.c, TC_ROOT, path, n, 0, &env.call, NULL);
	cr_assert_eq(r, -ENAMETOOLONG, "a %zu-byte path with a 3001-byte link spliced in: %s", n,
		     tc_res_str(r));
	free(target);
	free(path);
}

Test(walk, cache_only_walk)
{
	udc_cache *c = tc_create(TC_ROOT, NULL, 0);
	struct udc_attr d2 = tc_attr(2, UDC_TYPE_DIR, 0), d3 = tc_attr(3, UDC_TYPE_DIR, 0);
	struct udc_attr got;

	cr_assert_eq(udc_add(c, TC_ROOT, "a", 1, &d2), 0);
	cr_assert_eq(udc_add(c, 2, "b", 1, &d3), 0);
	cr_assert_eq(udc_add_negative(c, 3, "no", 2, 0), 0);
	cr_assert_eq(udc_walk(c, TC_ROOT, "/a/b", 4, 0, NULL, &got), 0);
	cr_assert_eq(got.ino, 3);
	cr_assert_eq(udc_walk(c, TC_ROOT, "/a/b/..", 7, 0, NULL, &got), 0);
	cr_assert_eq(got.ino, 2);
	cr_assert_eq(udc_walk(c, TC_ROOT, "/a/zz", 5, 0, NULL, &got), -EAGAIN);
	if (udc_lookup(c, 3, "no", 2, NULL) == UDC_NEGATIVE)
		cr_assert_eq(udc_walk(c, TC_ROOT, "/a/b/no", 7, 0, NULL, &got), -ENOENT);
	cr_assert_eq(tc_complete(c, 3), 0);
	cr_assert_eq(udc_walk(c, TC_ROOT, "/a/b/other", 10, 0, NULL, &got), -ENOENT);
	udc_destroy(c);
}

Test(walk, walk_after_mutations)
{
	struct udc_attr d2 = tc_attr(2, UDC_TYPE_DIR, 2 * 0x100 + 7);

	walk_is(TC_ROOT, "/a/b/c", 0, 0, 4);
	/* Rename /a to /z in the store and the cache. */
	model_move(env.m, TC_ROOT, "a", 1, TC_ROOT, "z", 1);
	cr_assert_eq(tc_rename(env.c, TC_ROOT, "a", TC_ROOT, "z", 2), 0);
	walk_is(TC_ROOT, "/a/b/c", 0, -ENOENT, 0);
	walk_is(TC_ROOT, "/z/b/c", 0, 0, 4);
	walk_is(TC_ROOT, "/z/b/../..", 0, 0, TC_ROOT);
	/* rmdir /z/b (the store drops it and its names). */
	model_lock(env.m);
	model_clear_dir_locked(env.m, 3);
	model_del_locked(env.m, 2, "b", 1);
	model_unlock(env.m);
	cr_assert_eq(tc_rmdir(env.c, 2, "b", 3), 0);
	walk_is(TC_ROOT, "/z/b/c", 0, -ENOENT, 0);
	walk_is(3, "c", 0, -ENOENT, 0);
	/* Move it back, told with an add this time. */
	model_move(env.m, TC_ROOT, "z", 1, TC_ROOT, "a", 1);
	cr_assert_eq(tc_remove(env.c, TC_ROOT, "z"), 0);
	cr_assert_eq(udc_add(env.c, TC_ROOT, "a", 1, &d2), 0);
	walk_is(TC_ROOT, "/a/f", 0, 0, 5);
	walk_is(TC_ROOT, "/z/f", 0, -ENOENT, 0);
}

/*
 * ".." after a name the walk resolved goes back where the walk came from:
 * the cache's record of the parent is not needed (here it is forgotten, and
 * there is no backend to ask).  Before, the walk looked the record up, and
 * a directory whose record was lost (or never learnt) cost a backend call.
 */
Test(walk, dotdot_returns_where_the_walk_came_from)
{
	udc_cache *c = tc_create(TC_ROOT, NULL, 0);
	struct udc_attr d2 = tc_attr(2, UDC_TYPE_DIR, 0), d3 = tc_attr(3, UDC_TYPE_DIR, 0);
	struct udc_attr f4 = tc_attr(4, UDC_TYPE_REG, 0), got;

	cr_assert_eq(udc_add(c, TC_ROOT, "a", 1, &d2), 0);
	cr_assert_eq(udc_add(c, 2, "b", 1, &d3), 0);
	cr_assert_eq(udc_add(c, 2, "f", 1, &f4), 0);
	cr_assert_eq(tc_parent(c, 3, 2), 0);   /* a record, then forgotten */
	cr_assert_eq(udc_lookup(c, 3, "..", 2, NULL), UDC_POSITIVE);
	cr_assert_eq(udc_invalidate(c, 3, "..", 2), 0);
	cr_assert_eq(udc_lookup(c, 3, "..", 2, NULL), UDC_MISS, "3's parent is forgotten");
	cr_assert_eq(udc_walk(c, TC_ROOT, "/a/b/..", 7, 0, NULL, &got), 0);
	cr_assert_eq(got.ino, 2);
	cr_assert_eq(udc_walk(c, TC_ROOT, "/a/b/../f", 9, 0, NULL, &got), 0);
	cr_assert_eq(got.ino, 4);
	/* From 3 itself nothing was walked down: the record is asked, and lost. */
	cr_assert_eq(udc_walk(c, 3, "..", 2, 0, NULL, &got), -EAGAIN);
	udc_destroy(c);
}

/*
 * ".." of a name whose type the cache does not know (UDC_TYPE_UNKNOWN) is
 * not the way back: the name may be no directory, with no ".." at all.  The
 * walk asks, as before stop 25.  Found by the fuzzer (regression
 * walk-dotdot-of-unknown-type): "d/.." from 2, d of unknown type and
 * inode 105, returned 2 where the store says -ENOENT.
 */
Test(walk, dotdot_of_a_name_of_unknown_type_is_asked)
{
	udc_cache *c = tc_create(TC_ROOT, NULL, 0);
	struct udc_attr d2 = tc_attr(2, UDC_TYPE_DIR, 0), u = tc_attr(105, UDC_TYPE_UNKNOWN, 0);
	struct udc_attr got;

	cr_assert_eq(udc_add(c, TC_ROOT, "a", 1, &d2), 0);
	cr_assert_eq(udc_add(c, 2, "d", 1, &u), 0);
	/* No record of 105's parent and no backend: the walk cannot know. */
	cr_assert_eq(udc_walk(c, 2, "d/..", 4, 0, NULL, &got), -EAGAIN);
	cr_assert_eq(udc_walk(c, TC_ROOT, "a/d/../..", 9, 0, NULL, &got), -EAGAIN);
	/* A known directory's ".." is still the way back. */
	cr_assert_eq(udc_walk(c, TC_ROOT, "a/..", 4, 0, NULL, &got), 0);
	cr_assert_eq(got.ino, TC_ROOT);
	udc_destroy(c);
}

/* Deeper than the walk remembers: the first ".."s come back down the
 * walk's own path, the rest from the cache's records; all end at the root. */
Test(walk, dotdot_deeper_than_the_walk_remembers)
{
	udc_cache *c = tc_create(TC_ROOT, NULL, 0);
	char path[512];
	size_t n = 0;
	struct udc_attr got;
	enum { DEPTH = 40 };

	for (udc_ino i = 0; i < DEPTH; i++) {
		struct udc_attr d = tc_attr(100 + i, UDC_TYPE_DIR, 0);
		cr_assert_eq(udc_add(c, i ? 100 + i - 1 : TC_ROOT, "d", 1, &d), 0);
		cr_assert_eq(tc_parent(c, 100 + i, i ? 100 + i - 1 : TC_ROOT), 0);
		memcpy(path + n, "/d", 2);
		n += 2;
	}
	cr_assert_eq(udc_walk(c, TC_ROOT, path, n, 0, NULL, &got), 0);
	cr_assert_eq(got.ino, 100 + DEPTH - 1);
	for (int i = 0; i < DEPTH - 1; i++) {
		memcpy(path + n, "/..", 3);
		n += 3;
	}
	cr_assert_eq(udc_walk(c, TC_ROOT, path, n, 0, NULL, &got), 0);
	cr_assert_eq(got.ino, 100, "%d levels down and %d up", DEPTH, DEPTH - 1);
	memcpy(path + n, "/../..", 6);
	cr_assert_eq(udc_walk(c, TC_ROOT, path, n + 6, 0, NULL, &got), 0);
	cr_assert_eq(got.ino, TC_ROOT);
	udc_destroy(c);
}
