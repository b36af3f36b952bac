/* SPDX-License-Identifier: MIT */
/*
 * tests/engine/test_inputs.c - wrong use of every public function.
 *
 * Each bad call must return the documented error and change nothing: the
 * fixture caches a few entries, and every test compares a snapshot (the
 * answers for those entries, nr_positive, nr_negative, backend calls) taken
 * before the bad calls with one taken after.
 */
#include <criterion/criterion.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "include/udcache.h"
#include "common/path.h"
#include "common/model.h"
#include "common/tcache.h"

#define D_INO ((udc_ino)10)  /* directory "d" in the root */
#define F_INO ((udc_ino)100) /* file "f" in d */
#define F_COOKIE 0xC00C1E0000000001ULL

struct bad_name {
	const char *what;
	const char *name;
	size_t len;
	int err;
};

static char long256[256];
static char long1000[1000];
static char name255[255];

static void fill_names(void)
{
	memset(long256, 'a', sizeof(long256));
	memset(long1000, 'b', sizeof(long1000));
	memset(name255, 'c', sizeof(name255));
}

/* Names every name-taking function must refuse (and with which error). */
static const struct bad_name *bad_names(size_t *n)
{
	static struct bad_name v[12];
	size_t i = 0;

	fill_names();
	v[i++] = (struct bad_name){ "NULL name", NULL, 1, -EINVAL };
	v[i++] = (struct bad_name){ "NULL name, len 0", NULL, 0, -EINVAL };
	v[i++] = (struct bad_name){ "len 0", "f", 0, -EINVAL };
	v[i++] = (struct bad_name){ "\".\"", ".", 1, -EINVAL };
	v[i++] = (struct bad_name){ "\"/\"", "/", 1, -EINVAL };
	v[i++] = (struct bad_name){ "\"a/b\"", "a/b", 3, -EINVAL };
	v[i++] = (struct bad_name){ "\"f/\"", "f/", 2, -EINVAL };
	v[i++] = (struct bad_name){ "\"f\\0x\"", "f\0x", 3, -EINVAL };
	v[i++] = (struct bad_name){ "\"\\0\"", "\0", 1, -EINVAL };
	v[i++] = (struct bad_name){ "\"f\\0\"", "f\0", 2, -EINVAL };
	v[i++] = (struct bad_name){ "256 bytes", long256, 256, -ENAMETOOLONG };
	v[i++] = (struct bad_name){ "1000 bytes", long1000, 1000, -ENAMETOOLONG };
	*n = i;
	return v;
}

/* What must not change. */
struct snap {
	int r_d, r_f, r_neg, r_dotdot;
	struct udc_attr a_d, a_f, a_dotdot;
	uint64_t nr_positive, nr_negative;
	uint64_t calls;
};

static struct tenv env;

static void fixture_setup(void)
{
	tenv_init(&env, 0);
	tc_store_add(&env, TC_ROOT, "d", D_INO, UDC_TYPE_DIR, 7);
	tc_store_add(&env, D_INO, "f", F_INO, UDC_TYPE_REG, F_COOKIE);
	cr_assert_eq(tc_add_neg(env.c, D_INO, "neg"), 0);
	model_reset_calls(env.m);
}

static void fixture_teardown(void)
{
	tenv_fini(&env);
}

static struct snap take_snap(void)
{
	struct snap s;
	struct udc_stats st = tc_stats(env.c);

	memset(&s, 0, sizeof(s));
	s.r_d = tc_lookup(env.c, TC_ROOT, "d", &s.a_d);
	s.r_f = tc_lookup(env.c, D_INO, "f", &s.a_f);
	s.r_neg = tc_lookup(env.c, D_INO, "neg", NULL);
	s.r_dotdot = tc_lookup(env.c, D_INO, "..", &s.a_dotdot);
	s.nr_positive = st.nr_positive;
	s.nr_negative = st.nr_negative;
	s.calls = model_calls(env.m);
	return s;
}

static void check_snap(const struct snap *before, const char *what)
{
	struct snap now = take_snap();

	cr_assert_eq(now.r_d, UDC_POSITIVE, "%s: (root, \"d\") is %s", what, tc_res_str(now.r_d));
	cr_assert(tc_attr_eq(&now.a_d, &before->a_d), "%s: (root, \"d\") attr changed", what);
	cr_assert_eq(now.r_f, UDC_POSITIVE, "%s: (d, \"f\") is %s", what, tc_res_str(now.r_f));
	cr_assert(tc_attr_eq(&now.a_f, &before->a_f), "%s: (d, \"f\") attr changed", what);
	cr_assert_eq(now.r_neg, before->r_neg, "%s: (d, \"neg\") went from %s to %s", what,
		     tc_res_str(before->r_neg), tc_res_str(now.r_neg));
	cr_assert_eq(now.r_dotdot, before->r_dotdot, "%s: (d, \"..\") went from %s to %s", what,
		     tc_res_str(before->r_dotdot), tc_res_str(now.r_dotdot));
	if (now.r_dotdot == UDC_POSITIVE)
		cr_assert_eq(now.a_dotdot.ino, before->a_dotdot.ino, "%s: parent of d changed",
			     what);
	cr_assert_eq(now.nr_positive, before->nr_positive, "%s: nr_positive %llu -> %llu", what,
		     (unsigned long long)before->nr_positive, (unsigned long long)now.nr_positive);
	cr_assert_eq(now.nr_negative, before->nr_negative, "%s: nr_negative %llu -> %llu", what,
		     (unsigned long long)before->nr_negative, (unsigned long long)now.nr_negative);
	cr_assert_eq(now.calls, before->calls, "%s: the backend was called", what);
}

TestSuite(inputs, .init = fixture_setup, .fini = fixture_teardown, .timeout = 20);

Test(inputs, fixture_is_sane)
{
	struct snap s = take_snap();

	cr_assert_eq(s.r_d, UDC_POSITIVE);
	cr_assert_eq(s.r_f, UDC_POSITIVE);
	cr_assert_eq(s.a_f.ino, F_INO);
	cr_assert_eq(s.a_f.cookie, F_COOKIE);
	cr_assert_neq(s.r_neg, UDC_POSITIVE);
	cr_assert_eq(s.r_dotdot, UDC_POSITIVE, "(d, \"..\") is %s", tc_res_str(s.r_dotdot));
	cr_assert_eq(s.a_dotdot.ino, TC_ROOT);
}

Test(inputs, null_cache)
{
	struct udc_attr a = tc_attr(5, UDC_TYPE_REG, 1);
	struct udc_stats st, copy;
	struct snap before = take_snap();

	cr_expect_eq(udc_lookup(NULL, D_INO, "f", 1, &a), -EINVAL);
	cr_expect_eq(udc_resolve(NULL, D_INO, "f", 1, &env.call, &a), -EINVAL);
	cr_expect_eq(udc_walk(NULL, TC_ROOT, "/d/f", 4, 0, &env.call, &a), -EINVAL);
	cr_expect_eq(udc_add(NULL, D_INO, "g", 1, &a), -EINVAL);
	cr_expect_eq(udc_add_negative(NULL, D_INO, "g", 1, 0), -EINVAL);
	cr_expect_eq(udc_remove(NULL, D_INO, "f", 1), -EINVAL);
	cr_expect_eq(udc_rename(NULL, D_INO, "f", 1, D_INO, "g", 1, F_INO), -EINVAL);
	cr_expect_eq(udc_rmdir(NULL, TC_ROOT, "d", 1, D_INO), -EINVAL);
	cr_expect_eq(udc_invalidate(NULL, D_INO, "f", 1), -EINVAL);
	cr_expect_eq(udc_invalidate_dir(NULL, D_INO), -EINVAL);
	struct udc_fill fill;
	cr_expect_eq(udc_dir_fill_begin(NULL, D_INO, &fill), -EINVAL);
	cr_expect_eq(udc_dir_fill_begin(env.c, D_INO, &fill), 0);
	cr_expect_eq(udc_dir_complete(NULL, D_INO, &fill), -EINVAL);
	cr_expect_eq(udc_dir_complete(env.c, D_INO, NULL), -EINVAL);
	cr_expect_eq(udc_dir_complete(env.c, D_INO + 1, &fill), -EINVAL, "another dir's fill");
	cr_expect_eq(udc_dir_fill_begin(env.c, D_INO, NULL), -EINVAL);
	cr_expect_eq(udc_set_memory_limit(NULL, 1 << 20), -EINVAL);
	cr_expect_eq(udc_shrink(NULL, SIZE_MAX), 0);
	cr_expect_eq(udc_shrink(NULL, 4096), 0);

	memset(&st, 0x5A, sizeof(st));
	st.size = sizeof(st);
	copy = st;
	udc_stats_get(NULL, &st);
	cr_expect_eq(memcmp(&st, &copy, sizeof(st)), 0, "udc_stats_get(NULL) wrote to *st");
	st.size = UDC_STATS_SIZE_V0;
	copy = st;
	udc_stats_get(NULL, &st);
	cr_expect_eq(memcmp(&st, &copy, sizeof(st)), 0, "udc_stats_get(NULL) wrote to *st");

	/* These return nothing: they must simply not crash. */
	udc_destroy(NULL);
	udc_thread_offline(NULL);
	udc_thread_online(NULL);
	udc_thread_online(NULL);
	udc_thread_offline(NULL);

	cr_expect_eq(memcmp(&a, &(struct udc_attr){ .ino = 5, .type = UDC_TYPE_REG, .cookie = 1 },
			    sizeof(a)),
		     0, "a failed call wrote to *out");
	check_snap(&before, "NULL cache");
}

Test(inputs, bad_names_lookup_resolve)
{
	size_t n;
	const struct bad_name *v = bad_names(&n);
	struct snap before = take_snap();

	for (size_t i = 0; i < n; i++) {
		struct udc_attr a = tc_attr(3, 3, 3), keep = a;
		int r;

		r = udc_lookup(env.c, D_INO, v[i].name, v[i].len, &a);
		cr_expect_eq(r, v[i].err, "udc_lookup(%s) = %s, want %s", v[i].what, tc_res_str(r),
			     tc_res_str(v[i].err));
		r = udc_lookup(env.c, D_INO, v[i].name, v[i].len, NULL);
		cr_expect_eq(r, v[i].err, "udc_lookup(%s, out NULL) = %s", v[i].what,
			     tc_res_str(r));
		r = udc_resolve(env.c, D_INO, v[i].name, v[i].len, &env.call, &a);
		cr_expect_eq(r, v[i].err, "udc_resolve(%s) = %s, want %s", v[i].what, tc_res_str(r),
			     tc_res_str(v[i].err));
		r = udc_resolve(env.c, D_INO, v[i].name, v[i].len, NULL, NULL);
		cr_expect_eq(r, v[i].err, "udc_resolve(%s, NULL call) = %s", v[i].what,
			     tc_res_str(r));
		cr_expect(tc_attr_eq(&a, &keep), "%s: a failed call wrote to *out", v[i].what);
	}
	check_snap(&before, "bad names to lookup/resolve");
}

/* name_check_bytes (common/path.h) scans a word at a time: a '/' or NUL at
 * every position of every length is found, a name of bytes that are
 * neither passes, and nothing is read outside the name (each is its own
 * allocation of exactly its length: ASan).  The bytes around the two
 * (0x2e, 0x30, 0x01, 0xff, 0x80 and 0xaf, which differ from them by one
 * bit or the borrow's high bit) are the ones a wrong mask would take. */
Test(inputs, name_scan_finds_every_slash_and_nul)
{
	static const unsigned char near[] = { 0x2e, 0x30, 0x01, 0xff, 0x80, 0xaf, 0x0f, 0x20, 'a' };
	unsigned seed = 12345;

	for (size_t len = 1; len <= UDC_NAME_MAX; len++) {
		char *name = malloc(len);
		cr_assert_not_null(name);
		for (size_t i = 0; i < len; i++)
			name[i] = (char)near[((seed = seed * 1103515245u + 12345u) >> 16) % sizeof(near)];
		cr_expect_eq(name_check_bytes(name, len), 0, "clean name of %zu bytes", len);
		for (size_t pos = 0; pos < len; pos++) {
			char keep = name[pos];
			name[pos] = '/';
			cr_expect_eq(name_check_bytes(name, len), -EINVAL, "'/' at %zu of %zu", pos, len);
			name[pos] = '\0';
			cr_expect_eq(name_check_bytes(name, len), -EINVAL, "NUL at %zu of %zu", pos, len);
			name[pos] = keep;
		}
		free(name);
	}
}

/* The lookups scan a name's bytes only when no cached name matched: in a
 * complete directory, whose misses are negative answers, a '/' or NUL
 * must still be -EINVAL, and no bad call is counted as a lookup. */
Test(inputs, bad_names_complete_dir)
{
	struct udc_fill fill;
	size_t n;
	const struct bad_name *v = bad_names(&n);

	cr_assert_eq(udc_dir_fill_begin(env.c, D_INO, &fill), 0);
	cr_assert_eq(udc_add(env.c, D_INO, "f", 1, &(struct udc_attr){ .ino = F_INO,
		     .type = UDC_TYPE_REG, .cookie = F_COOKIE }), 0);
	cr_assert_eq(udc_dir_complete(env.c, D_INO, &fill), 0);
	cr_assert_eq(tc_lookup(env.c, D_INO, "absent", NULL), UDC_NEGATIVE, "d is complete");

	struct snap before = take_snap();
	struct udc_stats st0 = tc_stats(env.c);
	for (size_t i = 0; i < n; i++) {
		struct udc_attr a = tc_attr(3, 3, 3), keep = a;
		int r = udc_lookup(env.c, D_INO, v[i].name, v[i].len, &a);
		cr_expect_eq(r, v[i].err, "udc_lookup(%s) in a complete dir = %s, want %s", v[i].what,
			     tc_res_str(r), tc_res_str(v[i].err));
		r = udc_resolve(env.c, D_INO, v[i].name, v[i].len, &env.call, &a);
		cr_expect_eq(r, v[i].err, "udc_resolve(%s) in a complete dir = %s, want %s",
			     v[i].what, tc_res_str(r), tc_res_str(v[i].err));
		cr_expect(tc_attr_eq(&a, &keep), "%s: a failed call wrote to *out", v[i].what);
	}
	struct udc_stats st1 = tc_stats(env.c);
	cr_expect_eq(st1.lookups, st0.lookups, "bad calls counted as lookups: %llu -> %llu",
		     (unsigned long long)st0.lookups, (unsigned long long)st1.lookups);
	cr_expect_eq(st1.hits_negative, st0.hits_negative);
	check_snap(&before, "bad names in a complete directory");
}

Test(inputs, bad_names_mutations)
{
	size_t n;
	const struct bad_name *v = bad_names(&n);
	struct udc_attr a = tc_attr(200, UDC_TYPE_REG, 9);
	struct snap before = take_snap();

	for (size_t i = 0; i < n; i++) {
		const char *nm = v[i].name;
		size_t l = v[i].len;
		int r;

		r = udc_add(env.c, D_INO, nm, l, &a);
		cr_expect_eq(r, v[i].err, "udc_add(%s) = %s", v[i].what, tc_res_str(r));
		r = udc_add_negative(env.c, D_INO, nm, l, 0);
		cr_expect_eq(r, v[i].err, "udc_add_negative(%s) = %s", v[i].what, tc_res_str(r));
		r = udc_remove(env.c, D_INO, nm, l);
		cr_expect_eq(r, v[i].err, "udc_remove(%s) = %s", v[i].what, tc_res_str(r));
		r = udc_invalidate(env.c, D_INO, nm, l);
		cr_expect_eq(r, v[i].err, "udc_invalidate(%s) = %s", v[i].what, tc_res_str(r));
		r = udc_rename(env.c, D_INO, nm, l, D_INO, "g", 1, UDC_INO_NONE);
		cr_expect_eq(r, v[i].err, "udc_rename(old %s) = %s", v[i].what, tc_res_str(r));
		/* A good old name with a bad new one: "f" must stay where it is. */
		r = udc_rename(env.c, D_INO, "f", 1, D_INO, nm, l, F_INO);
		cr_expect_eq(r, v[i].err, "udc_rename(new %s) = %s", v[i].what, tc_res_str(r));
		r = udc_rename(env.c, D_INO, "f", 1, TC_ROOT, nm, l, UDC_INO_NONE);
		cr_expect_eq(r, v[i].err, "udc_rename(to root, new %s) = %s", v[i].what,
			     tc_res_str(r));
		r = udc_rmdir(env.c, TC_ROOT, nm, l, D_INO);
		cr_expect_eq(r, v[i].err, "udc_rmdir(%s) = %s", v[i].what, tc_res_str(r));
		r = udc_rmdir(env.c, TC_ROOT, nm, l, UDC_INO_NONE);
		cr_expect_eq(r, v[i].err, "udc_rmdir(%s, dir NONE) = %s", v[i].what, tc_res_str(r));
		check_snap(&before, v[i].what);
	}
}

Test(inputs, dir_ino_none)
{
	struct udc_attr a = tc_attr(200, UDC_TYPE_REG, 9);
	struct snap before = take_snap();
	int r;

	cr_expect_eq(udc_lookup(env.c, UDC_INO_NONE, "f", 1, &a), -EINVAL);
	cr_expect_eq(udc_lookup(env.c, UDC_INO_NONE, "..", 2, &a), -EINVAL);
	cr_expect_eq(udc_resolve(env.c, UDC_INO_NONE, "f", 1, &env.call, &a), -EINVAL);
	cr_expect_eq(udc_add(env.c, UDC_INO_NONE, "f", 1, &a), -EINVAL);
	cr_expect_eq(udc_add_negative(env.c, UDC_INO_NONE, "f", 1, 0), -EINVAL);
	cr_expect_eq(udc_remove(env.c, UDC_INO_NONE, "f", 1), -EINVAL);
	cr_expect_eq(udc_invalidate(env.c, UDC_INO_NONE, "f", 1), -EINVAL);
	cr_expect_eq(udc_invalidate_dir(env.c, UDC_INO_NONE), -EINVAL);
	struct udc_fill nfill = { { 0 } };
	cr_expect_eq(udc_dir_fill_begin(env.c, UDC_INO_NONE, &nfill), -EINVAL);
	cr_expect_eq(udc_dir_complete(env.c, UDC_INO_NONE, &nfill), -EINVAL);
	r = udc_rename(env.c, UDC_INO_NONE, "f", 1, D_INO, "g", 1, F_INO);
	cr_expect_eq(r, -EINVAL, "udc_rename(odir NONE) = %s", tc_res_str(r));
	r = udc_rename(env.c, D_INO, "f", 1, UDC_INO_NONE, "g", 1, F_INO);
	cr_expect_eq(r, -EINVAL, "udc_rename(ndir NONE) = %s", tc_res_str(r));
	r = udc_rmdir(env.c, UDC_INO_NONE, "d", 1, D_INO);
	cr_expect_eq(r, -EINVAL, "udc_rmdir(parent NONE) = %s", tc_res_str(r));
	check_snap(&before, "dir UDC_INO_NONE");
	cr_assert_eq(model_calls(env.m), 0);
}

Test(inputs, bad_attr)
{
	struct snap before = take_snap();
	struct udc_attr bad[] = {
		tc_attr(UDC_INO_NONE, UDC_TYPE_REG, 1),
		tc_attr(300, 5, 1),
		tc_attr(300, 0xFFFFFFFFu, 1),
		tc_attr(300, 0x80000002u, 1),
		{ .ino = 300, .type = UDC_TYPE_REG, .flags = 1, .cookie = 1 },
		{ .ino = 300, .type = UDC_TYPE_REG, .flags = 0x80000000u, .cookie = 1 },
	};
	int r;

	r = udc_add(env.c, D_INO, "g", 1, NULL);
	cr_expect_eq(r, -EINVAL, "udc_add(attr NULL) = %s", tc_res_str(r));
	r = udc_add(env.c, D_INO, "f", 1, NULL);
	cr_expect_eq(r, -EINVAL, "udc_add(\"f\", attr NULL) = %s", tc_res_str(r));
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		r = udc_add(env.c, D_INO, "g", 1, &bad[i]);
		cr_expect_eq(r, -EINVAL, "udc_add(bad attr #%zu) = %s", i, tc_res_str(r));
		/* Replacing an existing entry with a bad attr changes nothing. */
		r = udc_add(env.c, D_INO, "f", 1, &bad[i]);
		cr_expect_eq(r, -EINVAL, "udc_add(\"f\", bad attr #%zu) = %s", i, tc_res_str(r));
		r = udc_add(env.c, D_INO, "neg", 3, &bad[i]);
		cr_expect_eq(r, -EINVAL, "udc_add(\"neg\", bad attr #%zu) = %s", i, tc_res_str(r));
	}
	cr_expect_eq(tc_lookup(env.c, D_INO, "g", NULL), UDC_MISS);
	check_snap(&before, "bad attrs");
}

Test(inputs, every_type_is_accepted)
{
	for (uint32_t t = UDC_TYPE_UNKNOWN; t <= UDC_TYPE_OTHER; t++) {
		char nm[8];
		struct udc_attr a = tc_attr(400 + t, t, 0xABC0 + t), got;
		int r;

		snprintf(nm, sizeof(nm), "t%u", t);
		r = udc_add(env.c, D_INO, nm, strlen(nm), &a);
		cr_assert_eq(r, 0, "udc_add(type %u) = %s", t, tc_res_str(r));
		r = tc_lookup(env.c, D_INO, nm, &got);
		cr_assert_eq(r, UDC_POSITIVE, "type %u: lookup %s", t, tc_res_str(r));
		cr_assert(tc_attr_eq(&got, &a), "type %u: attr changed", t);
	}
}

Test(inputs, name_255_bytes_ok)
{
	struct udc_attr a = tc_attr(500, UDC_TYPE_REG, 0x255), got;
	char other[255];
	int r;

	fill_names();
	memcpy(other, name255, sizeof(other));
	other[254] = 'z';
	cr_assert_eq(udc_add(env.c, D_INO, name255, 255, &a), 0);
	r = udc_lookup(env.c, D_INO, name255, 255, &got);
	cr_assert_eq(r, UDC_POSITIVE, "lookup of a 255-byte name: %s", tc_res_str(r));
	cr_assert(tc_attr_eq(&got, &a));
	/* A 254-byte prefix is another name. */
	cr_assert_eq(udc_lookup(env.c, D_INO, name255, 254, NULL), UDC_MISS);
	cr_assert_eq(udc_rename(env.c, D_INO, name255, 255, D_INO, other, 255, 500), 0);
	cr_assert_eq(udc_lookup(env.c, D_INO, other, 255, &got), UDC_POSITIVE);
	cr_assert_eq(got.ino, 500);
	cr_assert_neq(udc_lookup(env.c, D_INO, name255, 255, NULL), UDC_POSITIVE);
	cr_assert_eq(udc_add_negative(env.c, D_INO, name255, 255, 0), 0);
	cr_assert_neq(udc_lookup(env.c, D_INO, name255, 255, NULL), UDC_POSITIVE);
	cr_assert_eq(udc_invalidate(env.c, D_INO, name255, 255), 0);
	cr_assert_eq(udc_lookup(env.c, D_INO, name255, 255, NULL), UDC_MISS);
	cr_assert_eq(udc_remove(env.c, D_INO, other, 255), 0);
	cr_assert_neq(udc_lookup(env.c, D_INO, other, 255, NULL), UDC_POSITIVE);

	/* Through the backend. */
	model_set(env.m, D_INO, name255, 255, &a);
	r = udc_resolve(env.c, D_INO, name255, 255, &env.call, &got);
	cr_assert_eq(r, 0, "resolve of a 255-byte name: %s", tc_res_str(r));
	cr_assert(tc_attr_eq(&got, &a));
	cr_assert_eq(udc_lookup(env.c, D_INO, name255, 255, NULL), UDC_POSITIVE);
}

Test(inputs, dotdot_rules)
{
	struct udc_attr dir_attr = tc_attr(TC_ROOT, UDC_TYPE_DIR, 0);
	struct udc_attr reg_attr = tc_attr(TC_ROOT, UDC_TYPE_REG, 0);
	struct udc_attr got;
	struct snap before = take_snap();
	int r;

	/* ".." is legal for lookups. */
	r = udc_lookup(env.c, D_INO, "..", 2, &got);
	cr_assert_eq(r, UDC_POSITIVE, "lookup(d, \"..\") = %s", tc_res_str(r));
	cr_assert_eq(got.ino, TC_ROOT);
	r = udc_resolve(env.c, D_INO, "..", 2, &env.call, &got);
	cr_assert_eq(r, 0, "resolve(d, \"..\") = %s", tc_res_str(r));
	cr_assert_eq(got.ino, TC_ROOT);

	/* Mutations other than add (with a DIR attr) and invalidate refuse it. */
	r = udc_add(env.c, D_INO, "..", 2, &reg_attr);
	cr_expect_eq(r, -EINVAL, "udc_add(\"..\", REG) = %s", tc_res_str(r));
	r = udc_add_negative(env.c, D_INO, "..", 2, 0);
	cr_expect_eq(r, -EINVAL, "udc_add_negative(\"..\") = %s", tc_res_str(r));
	r = udc_remove(env.c, D_INO, "..", 2);
	cr_expect_eq(r, -EINVAL, "udc_remove(\"..\") = %s", tc_res_str(r));
	r = udc_rename(env.c, D_INO, "..", 2, D_INO, "g", 1, UDC_INO_NONE);
	cr_expect_eq(r, -EINVAL, "udc_rename(old \"..\") = %s", tc_res_str(r));
	r = udc_rename(env.c, D_INO, "f", 1, D_INO, "..", 2, F_INO);
	cr_expect_eq(r, -EINVAL, "udc_rename(new \"..\") = %s", tc_res_str(r));
	/* Both names bad: each name's own checks come before either's "..". */
	char too_long[UDC_NAME_MAX + 1];
	memset(too_long, 'x', sizeof(too_long));
	r = udc_rename(env.c, D_INO, too_long, sizeof(too_long), D_INO, "..", 2, UDC_INO_NONE);
	cr_expect_eq(r, -ENAMETOOLONG, "udc_rename(old too long, new \"..\") = %s", tc_res_str(r));
	r = udc_rename(env.c, D_INO, "..", 2, D_INO, too_long, sizeof(too_long), UDC_INO_NONE);
	cr_expect_eq(r, -ENAMETOOLONG, "udc_rename(old \"..\", new too long) = %s", tc_res_str(r));
	r = udc_rmdir(env.c, D_INO, "..", 2, TC_ROOT);
	cr_expect_eq(r, -EINVAL, "udc_rmdir(\"..\") = %s", tc_res_str(r));
	r = udc_rmdir(env.c, D_INO, "..", 2, UDC_INO_NONE);
	cr_expect_eq(r, -EINVAL, "udc_rmdir(\"..\", NONE) = %s", tc_res_str(r));
	check_snap(&before, "\"..\" mutations");

	/* udc_add(dir, "..", DIR) records the parent; invalidate forgets it. */
	cr_assert_eq(tc_lookup(env.c, 77, "..", NULL), UDC_MISS);
	dir_attr.ino = D_INO;
	r = udc_add(env.c, 77, "..", 2, &dir_attr);
	cr_assert_eq(r, 0, "udc_add(77, \"..\", DIR) = %s", tc_res_str(r));
	r = tc_lookup(env.c, 77, "..", &got);
	cr_assert_eq(r, UDC_POSITIVE, "lookup(77, \"..\") = %s", tc_res_str(r));
	cr_assert_eq(got.ino, D_INO);
	r = tc_invalidate(env.c, 77, "..");
	cr_assert_eq(r, 0, "udc_invalidate(77, \"..\") = %s", tc_res_str(r));
	r = tc_lookup(env.c, 77, "..", NULL);
	cr_assert_eq(r, UDC_MISS, "after invalidate: lookup(77, \"..\") = %s", tc_res_str(r));
}

Test(inputs, create_bad_config)
{
	struct udc_config cfg = UDC_CONFIG_INIT;
	struct udc_backend no_lookup = { .lookup = NULL, .readlink = model_backend.readlink };
	udc_cache *c;

	cfg.root = TC_ROOT;
	cfg.memory_limit = TC_MEMORY_LIMIT;
	cfg.flags = UDC_CFG_NO_RECLAIM_THREAD;

	errno = 0;
	cr_expect_null(udc_create(NULL));
	cr_expect_eq(errno, EINVAL, "udc_create(NULL): errno %d", errno);

	struct {
		const char *what;
		struct udc_config cfg;
	} bad[] = {
		{ "size 0", cfg },	    { "size - 1", cfg },
		{ "size + 8", cfg },	    { "size 1", cfg },
		{ "root NONE", cfg },	    { "flag 0x4", cfg },
		{ "flag 0x80000000", cfg }, { "backend without lookup", cfg },
		{ "limit 1", cfg },	    { "limit UDC_MEMORY_MIN - 1", cfg },
	};
	bad[0].cfg.size = 0;
	bad[1].cfg.size = sizeof(struct udc_config) - 1;
	bad[2].cfg.size = sizeof(struct udc_config) + 8;
	bad[3].cfg.size = 1;
	bad[4].cfg.root = UDC_INO_NONE;
	bad[5].cfg.flags |= 0x4;
	bad[6].cfg.flags |= 0x80000000u;
	bad[7].cfg.backend = &no_lookup;
	bad[8].cfg.memory_limit = 1;
	bad[9].cfg.memory_limit = UDC_MEMORY_MIN - 1;
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		errno = 0;
		c = udc_create(&bad[i].cfg);
		cr_expect_null(c, "udc_create(%s) succeeded", bad[i].what);
		if (c)
			udc_destroy(c);
		else
			cr_expect_eq(errno, EINVAL, "udc_create(%s): errno %d, want EINVAL",
				     bad[i].what, errno);
	}

	/* The good config works, with and without a backend or readlink. */
	c = udc_create(&cfg);
	cr_assert_not_null(c, "udc_create(good, no backend): errno %d", errno);
	udc_destroy(c);
	cfg.backend = &model_backend_nolink;
	c = udc_create(&cfg);
	cr_assert_not_null(c, "udc_create(good, no readlink): errno %d", errno);
	udc_destroy(c);
	cfg.flags = UDC_CFG_NO_RECLAIM_THREAD | UDC_CFG_KEEP_UNLINKED;
	cfg.memory_limit = 0;
	cfg.hash_key[0] = 1;
	cfg.hash_key[1] = 2;
	cfg.negative_max_age_ms = UINT32_MAX;
	c = udc_create(&cfg);
	cr_assert_not_null(c, "udc_create(all options): errno %d", errno);
	udc_destroy(c);
	cfg.flags = 0; /* with the reclaim thread */
	c = udc_create(&cfg);
	cr_assert_not_null(c, "udc_create(reclaim thread): errno %d", errno);
	cr_assert_eq(tc_add(c, 5, "x", 6, UDC_TYPE_REG, 0), 0);
	cr_assert_eq(tc_lookup(c, 5, "x", NULL), UDC_POSITIVE);
	udc_destroy(c);
}

Test(inputs, walk_bad_inputs)
{
	char *big = malloc(UDC_PATH_MAX + 2);
	struct udc_attr got;
	struct snap before;
	int r;

	cr_assert_not_null(big);
	fill_names();
	before = take_snap();

	r = udc_walk(env.c, TC_ROOT, NULL, 3, 0, &env.call, &got);
	cr_expect_eq(r, -EINVAL, "walk(NULL path) = %s", tc_res_str(r));
	r = udc_walk(env.c, TC_ROOT, NULL, 0, 0, &env.call, &got);
	cr_expect_eq(r, -EINVAL, "walk(NULL path, len 0) = %s", tc_res_str(r));
	r = udc_walk(env.c, TC_ROOT, "/d", 0, 0, &env.call, &got);
	cr_expect_eq(r, -ENOENT, "walk(len 0) = %s", tc_res_str(r));
	r = udc_walk(env.c, TC_ROOT, "/d\0f", 4, 0, &env.call, &got);
	cr_expect_eq(r, -EINVAL, "walk(NUL inside) = %s", tc_res_str(r));
	r = udc_walk(env.c, TC_ROOT, "/d/f\0", 5, 0, &env.call, &got);
	cr_expect_eq(r, -EINVAL, "walk(NUL at the end) = %s", tc_res_str(r));
	r = udc_walk(env.c, TC_ROOT, "\0", 1, 0, &env.call, &got);
	cr_expect_eq(r, -EINVAL, "walk(\"\\0\") = %s", tc_res_str(r));
	r = udc_walk(env.c, TC_ROOT, "/d/f", 4, 0x2, &env.call, &got);
	cr_expect_eq(r, -EINVAL, "walk(flags 0x2) = %s", tc_res_str(r));
	r = udc_walk(env.c, TC_ROOT, "/d/f", 4, 0x80000000u, &env.call, &got);
	cr_expect_eq(r, -EINVAL, "walk(flags 0x80000000) = %s", tc_res_str(r));
	r = udc_walk(env.c, TC_ROOT, "/d/f", 4, UDC_WALK_FOLLOW | 0x100, &env.call, &got);
	cr_expect_eq(r, -EINVAL, "walk(flags 0x101) = %s", tc_res_str(r));
	r = udc_walk(env.c, UDC_INO_NONE, "d/f", 3, 0, &env.call, &got);
	cr_expect_eq(r, -EINVAL, "walk(relative, start NONE) = %s", tc_res_str(r));
	r = udc_walk(env.c, UDC_INO_NONE, ".", 1, 0, &env.call, &got);
	cr_expect_eq(r, -EINVAL, "walk(\".\", start NONE) = %s", tc_res_str(r));

	/* A 256-byte component, alone or in the middle. */
	memcpy(big, "/d/", 3);
	memcpy(big + 3, long256, 256);
	r = udc_walk(env.c, TC_ROOT, big, 259, 0, &env.call, &got);
	cr_expect_eq(r, -ENAMETOOLONG, "walk(256-byte last component) = %s", tc_res_str(r));
	memcpy(big + 259, "/f", 2);
	r = udc_walk(env.c, TC_ROOT, big, 261, 0, &env.call, &got);
	cr_expect_eq(r, -ENAMETOOLONG, "walk(256-byte middle component) = %s", tc_res_str(r));
	r = udc_walk(env.c, D_INO, long256, 256, 0, &env.call, &got);
	cr_expect_eq(r, -ENAMETOOLONG, "walk(256-byte relative) = %s", tc_res_str(r));

	/* Past UDC_PATH_MAX: 4097 bytes of "/"s and of "./"s. */
	memset(big, '/', UDC_PATH_MAX + 1);
	r = udc_walk(env.c, TC_ROOT, big, UDC_PATH_MAX + 1, 0, &env.call, &got);
	cr_expect_eq(r, -ENAMETOOLONG, "walk(4097 slashes) = %s", tc_res_str(r));
	for (size_t i = 0; i + 1 < UDC_PATH_MAX + 2; i += 2)
		memcpy(big + i, "./", 2);
	r = udc_walk(env.c, D_INO, big, UDC_PATH_MAX + 1, 0, &env.call, &got);
	cr_expect_eq(r, -ENAMETOOLONG, "walk(4097 bytes of ./) = %s", tc_res_str(r));
	check_snap(&before, "bad walks");

	/* Exactly UDC_PATH_MAX is fine. */
	memset(big, '/', UDC_PATH_MAX);
	r = udc_walk(env.c, TC_ROOT, big, UDC_PATH_MAX, 0, &env.call, &got);
	cr_expect_eq(r, 0, "walk(4096 slashes) = %s", tc_res_str(r));
	cr_expect_eq(got.ino, TC_ROOT);
	for (size_t i = 0; i < UDC_PATH_MAX; i += 2)
		memcpy(big + i, "./", 2);
	memcpy(big + UDC_PATH_MAX - 2, "/f", 2);
	r = udc_walk(env.c, D_INO, big, UDC_PATH_MAX, 0, &env.call, &got);
	cr_expect_eq(r, 0, "walk(4096 bytes: ././.../f) = %s", tc_res_str(r));
	cr_expect_eq(got.ino, F_INO);

	/* An absolute path does not need a start. */
	r = udc_walk(env.c, UDC_INO_NONE, "/d/f", 4, 0, &env.call, &got);
	cr_expect_eq(r, 0, "walk(absolute, start NONE) = %s", tc_res_str(r));
	cr_expect_eq(got.ino, F_INO);
	free(big);
}

Test(inputs, stats_size_checked)
{
	struct udc_stats st, copy;

	memset(&st, 0xA5, sizeof(st));
	st.size = 0;
	copy = st;
	udc_stats_get(env.c, &st);
	cr_expect_eq(memcmp(&st, &copy, sizeof(st)), 0, "size 0: *st was written");

	st.size = UDC_STATS_SIZE_V0 - 8;
	copy = st;
	udc_stats_get(env.c, &st);
	cr_expect_eq(memcmp(&st, &copy, sizeof(st)), 0, "size V0 - 8: *st was written");

	st.size = UDC_STATS_SIZE_V0 - 1;
	copy = st;
	udc_stats_get(env.c, &st);
	cr_expect_eq(memcmp(&st, &copy, sizeof(st)), 0, "size V0 - 1: *st was written");

	st.size = sizeof(size_t);
	copy = st;
	udc_stats_get(env.c, &st);
	cr_expect_eq(memcmp(&st, &copy, sizeof(st)), 0, "size 8: *st was written");

	/* V0: the fields up to bytes_limit are filled, the rest is left alone. */
	memset(&st, 0xA5, sizeof(st));
	st.size = UDC_STATS_SIZE_V0;
	udc_stats_get(env.c, &st);
	cr_expect_eq(st.size, UDC_STATS_SIZE_V0);
	cr_expect_eq(st.bytes_limit, TC_MEMORY_LIMIT);
	cr_expect_eq(st.nr_positive, 2, "nr_positive %llu", (unsigned long long)st.nr_positive);
	cr_expect_eq(st.membarrier, 0xA5A5A5A5A5A5A5A5ULL, "V0: membarrier (past V0) written");
	cr_expect_eq(st.walk_retries, 0xA5A5A5A5A5A5A5A5ULL, "V0: walk_retries (past V0) written");

	/* A size between: the fields it covers are filled, the rest is left
	 * alone (V0 plus membarrier, the first extension). */
	memset(&st, 0xA5, sizeof(st));
	st.size = offsetof(struct udc_stats, membarrier) + sizeof(st.membarrier);
	udc_stats_get(env.c, &st);
	cr_expect_eq(st.bytes_limit, TC_MEMORY_LIMIT);
	cr_expect_neq(st.membarrier, 0xA5A5A5A5A5A5A5A5ULL, "V0+1: membarrier not written");
	cr_expect_eq(st.nr_dirs, 0xA5A5A5A5A5A5A5A5ULL, "V0+1: nr_dirs (past the size) written");

	/* The full size fills every extension, the last one included. */
	memset(&st, 0xA5, sizeof(st));
	st.size = sizeof(st);
	udc_stats_get(env.c, &st);
	cr_expect_eq(st.bytes_limit, TC_MEMORY_LIMIT);
	cr_expect_neq(st.membarrier, 0xA5A5A5A5A5A5A5A5ULL, "full: membarrier not written");
	cr_expect_neq(st.negatives_declined, 0xA5A5A5A5A5A5A5A5ULL,
		      "full: negatives_declined not written");
	cr_expect_neq(st.throttled, 0xA5A5A5A5A5A5A5A5ULL, "full: throttled not written");
}

Test(inputs, thread_offline_online)
{
	struct udc_attr got;

	udc_thread_offline(env.c);
	/* A call while offline brings the thread online by itself. */
	cr_assert_eq(tc_lookup(env.c, D_INO, "f", &got), UDC_POSITIVE);
	cr_assert_eq(tc_add(env.c, D_INO, "g", 201, UDC_TYPE_REG, 2), 0);
	udc_thread_online(env.c);
	cr_assert_eq(tc_lookup(env.c, D_INO, "g", &got), UDC_POSITIVE);
	udc_thread_offline(env.c);
	udc_thread_offline(env.c);
	udc_thread_online(env.c);
	udc_thread_online(env.c);
	cr_assert_eq(tc_lookup(env.c, D_INO, "f", &got), UDC_POSITIVE);
	cr_assert_eq(got.ino, F_INO);
	udc_thread_offline(env.c); /* left offline: teardown must cope */
}

Test(inputs, set_memory_limit)
{
	struct udc_stats st;

	cr_assert_eq(udc_set_memory_limit(env.c, (size_t)256 << 20), 0);
	st = tc_stats(env.c);
	cr_expect_eq(st.bytes_limit, (uint64_t)256 << 20);
	cr_assert_eq(udc_set_memory_limit(env.c, 0), 0);
	st = tc_stats(env.c);
	cr_expect_eq(st.bytes_limit, TC_DEFAULT_LIMIT, "limit 0 gave %llu",
		     (unsigned long long)st.bytes_limit);
	cr_assert_eq(udc_set_memory_limit(env.c, TC_MEMORY_LIMIT), 0);
	st = tc_stats(env.c);
	cr_expect_eq(st.bytes_limit, TC_MEMORY_LIMIT);
	/* Nothing was lost on the way (the limits were never tight). */
	cr_expect_eq(tc_lookup(env.c, D_INO, "f", NULL), UDC_POSITIVE);
}

/*
 * The memory floor.  Before it, udc_create took any limit, and a limit
 * below the cache's own part (its tables, stripes, ghosts: about 160 KiB
 * when made with 2 MiB or more) could never be met: every call waited for
 * reclaim that had nothing to free (16 KiB: no add finished in 10 s; made
 * with 64 MiB and set to 64 KiB: 80 ms an add).  Now such a limit is
 * refused, and the smallest accepted one works.
 */
Test(inputs, memory_floor)
{
	struct udc_config cfg = UDC_CONFIG_INIT;
	struct udc_stats st;
	char nm[32];

	cfg.root = TC_ROOT;
	cfg.flags = UDC_CFG_NO_RECLAIM_THREAD;
	cfg.memory_limit = (size_t)64 << 20;
	udc_cache *c = udc_create(&cfg);
	cr_assert_not_null(c);
	st = tc_stats(c);
	cr_assert_gt(st.bytes_min, UDC_MEMORY_MIN, "made with 64 MiB: bytes_min %llu",
		     (unsigned long long)st.bytes_min);
	cr_expect_eq(udc_set_memory_limit(c, UDC_MEMORY_MIN), -EINVAL);
	cr_expect_eq(udc_set_memory_limit(c, (size_t)st.bytes_min - 1), -EINVAL);
	cr_expect_eq(tc_stats(c).bytes_limit, (uint64_t)64 << 20, "a refused limit changed it");
	cr_assert_eq(udc_set_memory_limit(c, (size_t)st.bytes_min), 0);
	for (int i = 0; i < 2000; i++) {
		snprintf(nm, sizeof(nm), "floor-%d", i);
		cr_assert_eq(tc_add(c, 5, nm, 1000 + (udc_ino)i, UDC_TYPE_REG, 0), 0);
		st = tc_stats(c);
		cr_assert_leq(st.bytes_used, st.bytes_limit + st.bytes_slack,
			      "add %d: bytes_used %llu past %llu + %llu", i,
			      (unsigned long long)st.bytes_used, (unsigned long long)st.bytes_limit,
			      (unsigned long long)st.bytes_slack);
	}
	cr_expect_gt(st.nr_positive, 100, "at bytes_min the cache held %llu entries",
		     (unsigned long long)st.nr_positive);
	udc_destroy(c);

	/* Made with the floor itself: entries fit, and it says so. */
	cfg.memory_limit = UDC_MEMORY_MIN;
	c = udc_create(&cfg);
	cr_assert_not_null(c, "udc_create(UDC_MEMORY_MIN): errno %d", errno);
	cr_expect_eq(tc_stats(c).bytes_min, UDC_MEMORY_MIN);
	for (int i = 0; i < 500; i++) {
		snprintf(nm, sizeof(nm), "floor-%d", i);
		cr_assert_eq(tc_add(c, 5, nm, 1000 + (udc_ino)i, UDC_TYPE_REG, 0), 0);
	}
	st = tc_stats(c);
	cr_expect_gt(st.nr_positive, 50, "at UDC_MEMORY_MIN the cache held %llu entries",
		     (unsigned long long)st.nr_positive);
	cr_expect_leq(st.bytes_used, st.bytes_limit + st.bytes_slack);
	udc_destroy(c);
}
