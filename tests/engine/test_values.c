/* SPDX-License-Identifier: MIT */
/*
 * tests/engine/test_values.c - the values a positive carries
 * (udc_add_value, udc_lookup_value, udc_resolve_value, the backend's
 * lookup_value): byte-exact round trips across the inline/apart name
 * boundaries, truncation, bad arguments that change nothing, what each
 * mutation does to a value, moves by compaction, memory given back, and
 * readers racing writers and eviction (each value read whole, never torn
 * or freed under the reader).
 */
#include <criterion/criterion.h>
#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "include/udcache.h"
#include "common/model.h"
#include "common/prng.h"
#include "common/tcache.h"

#define D_INO ((udc_ino)10)

/* The value the tests give (ino, version): its length and bytes follow
 * from both, so a reader can check a value it got whole. */
static size_t value_make(udc_ino ino, unsigned version, unsigned char *buf)
{
	size_t len = (ino * 37 + version * 101) % (UDC_VALUE_MAX + 1);

	for (size_t i = 0; i < len; i++)
		buf[i] = (unsigned char)(ino * 31 + i * 7 + version);
	return len;
}

/* Is (buf, len) value_make(ino, version) for some version < nv? */
static int value_version(udc_ino ino, const unsigned char *buf, size_t len, unsigned nv)
{
	unsigned char want[UDC_VALUE_MAX];

	for (unsigned v = 0; v < nv; v++)
		if (value_make(ino, v, want) == len && memcmp(want, buf, len) == 0)
			return (int)v;
	return -1;
}

/* A backend over the model whose positives carry value_make(ino, cookie). */
static atomic_int be_value_calls;
static size_t be_value_len_override;   /* past UDC_VALUE_MAX: a broken backend */

static uint32_t be_ttl_ms;   /* the life the backend gives its answers */

static int be_lookup_value(void *ctx, udc_ino dir, const char *name, size_t len,
			   struct udc_attr *out, void *value, size_t *value_len, uint32_t *ttl_ms)
{
	cr_assert_eq(*ttl_ms, 0, "lookup_value is called with *ttl_ms 0");
	*ttl_ms = be_ttl_ms;
	atomic_fetch_add(&be_value_calls, 1);
	cr_assert_eq(*value_len, 0, "lookup_value is called with *value_len 0");
	int r = model_backend.lookup(ctx, dir, name, len, out);
	if (r == 0) {
		*value_len = value_make(out->ino, (unsigned)out->cookie, value);
		if (be_value_len_override)
			*value_len = be_value_len_override;
	}
	return r;
}

static const struct udc_backend value_backend = {
	.lookup_value = be_lookup_value,   /* and no lookup: lookup_value alone serves */
	.readlink = NULL,
};

static struct tenv env;

static void setup(void)
{
	tenv_init_be(&env, &value_backend, 0);
	tc_store_add(&env, TC_ROOT, "d", D_INO, UDC_TYPE_DIR, 0xD);
	atomic_store(&be_value_calls, 0);
	be_value_len_override = 0;
	be_ttl_ms = 0;
}

static void teardown(void)
{
	tenv_fini(&env);
}

TestSuite(values, .init = setup, .fini = teardown, .timeout = 60);

static int add_v_ttl(udc_ino dir, const char *name, udc_ino ino, unsigned version,
		     uint32_t ttl_ms)
{
	unsigned char v[UDC_VALUE_MAX];
	size_t n = value_make(ino, version, v);
	struct udc_attr a = tc_attr(ino, UDC_TYPE_REG, version);

	return udc_add_value(env.c, dir, name, strlen(name), &a, v, n, ttl_ms);
}

static int add_v(udc_ino dir, const char *name, udc_ino ino, unsigned version)
{
	return add_v_ttl(dir, name, ino, version, 0);
}

/* (dir, name) is POSITIVE as ino with value_make(ino, version), exactly. */
static void expect_value(udc_ino dir, const char *name, udc_ino ino, unsigned version,
			 const char *when)
{
	unsigned char got[UDC_VALUE_MAX + 8], want[UDC_VALUE_MAX];
	size_t n = sizeof(got), wn = value_make(ino, version, want);
	struct udc_attr a;

	memset(got, 0xA5, sizeof(got));
	int r = udc_lookup_value(env.c, dir, name, strlen(name), &a, got, &n);
	cr_assert_eq(r, UDC_POSITIVE, "%s: lookup_value(\"%s\") = %s", when, name, tc_res_str(r));
	cr_assert_eq(a.ino, ino, "%s: ino %llu, want %llu", when, (unsigned long long)a.ino,
		     (unsigned long long)ino);
	cr_assert_eq(a.type, UDC_TYPE_REG, "%s: type %u (a value's flag in the type?)", when,
		     a.type);
	cr_assert_eq(n, wn, "%s: value length %zu, want %zu", when, n, wn);
	cr_assert(memcmp(got, want, wn) == 0, "%s: value bytes differ", when);
	cr_assert_eq(got[wn], 0xA5, "%s: a byte written past the value", when);
}

Test(values, round_trip_across_name_and_value_sizes)
{
	static const size_t name_lens[] = { 1, 8, 9, 16, 17, 40, 48, 49, 55, 56, 57, 63, 64, 65,
					    100, 255 };
	static const size_t value_lens[] = { 0, 1, 7, 8, 9, 16, 55, 56, 100, 200, 255, 256 };
	char name[UDC_NAME_MAX + 1];
	udc_ino ino = 100;

	for (size_t i = 0; i < sizeof(name_lens) / sizeof(name_lens[0]); i++) {
		for (size_t j = 0; j < sizeof(value_lens) / sizeof(value_lens[0]); j++) {
			size_t nl = name_lens[i], vl = value_lens[j];
			unsigned char v[UDC_VALUE_MAX], got[UDC_VALUE_MAX];
			for (size_t k = 0; k < nl; k++)
				name[k] = (char)('a' + (k + i + j) % 26);
			name[nl] = 0;
			for (size_t k = 0; k < vl; k++)
				v[k] = (unsigned char)(k * 13 + i + j);
			ino++;
			struct udc_attr a = tc_attr(ino, UDC_TYPE_SYMLINK, ino * 3), out;
			/* with and without a deadline (after the value's pointer) */
			uint32_t ttl = j % 3 == 0 ? 0 : j % 3 == 1 ? 600000 : UDC_TTL_NONE;
			cr_assert_eq(udc_add_value(env.c, D_INO, name, nl, &a, v, vl, ttl), 0);
			size_t n = sizeof(got);
			cr_assert_eq(udc_lookup_value(env.c, D_INO, name, nl, &out, got, &n),
				     UDC_POSITIVE);
			cr_assert(tc_attr_eq(&out, &a), "name %zu value %zu: attr differs", nl, vl);
			cr_assert_eq(n, vl, "name %zu value %zu: length %zu", nl, vl, n);
			cr_assert(memcmp(got, v, vl) == 0, "name %zu value %zu: bytes differ", nl,
				  vl);
			/* the calls without values see the same answer */
			cr_assert_eq(tc_lookup(env.c, D_INO, name, &out), UDC_POSITIVE);
			cr_assert(tc_attr_eq(&out, &a));
		}
	}
}

Test(values, short_buffers_get_a_prefix_and_the_length)
{
	unsigned char got[UDC_VALUE_MAX], want[UDC_VALUE_MAX];
	size_t wn = value_make(500, 3, want);

	cr_assert(wn > 10, "the test needs a value of more than 10 bytes");
	cr_assert_eq(add_v(D_INO, "f", 500, 3), 0);
	size_t n = 10;
	memset(got, 0, sizeof(got));
	cr_assert_eq(udc_lookup_value(env.c, D_INO, "f", 1, NULL, got, &n), UDC_POSITIVE);
	cr_assert_eq(n, wn);
	cr_assert(memcmp(got, want, 10) == 0);
	cr_assert_eq(got[10], 0, "only the room was written");
	n = 0;
	cr_assert_eq(udc_lookup_value(env.c, D_INO, "f", 1, NULL, NULL, &n), UDC_POSITIVE);
	cr_assert_eq(n, wn, "the length alone");
}

Test(values, bad_arguments_change_nothing)
{
	unsigned char v[UDC_VALUE_MAX + 1] = { 0 }, got[UDC_VALUE_MAX];
	struct udc_attr a = tc_attr(600, UDC_TYPE_REG, 1);
	size_t n = sizeof(got);

	cr_assert_eq(add_v(D_INO, "f", 600, 1), 0);
	struct udc_stats before = tc_stats(env.c);
	cr_assert_eq(udc_add_value(env.c, D_INO, "f", 1, &a, v, UDC_VALUE_MAX + 1, 0), -EINVAL);
	cr_assert_eq(udc_add_value(env.c, D_INO, "f", 1, &a, NULL, 4, 0), -EINVAL);
	cr_assert_eq(udc_add_value(env.c, D_INO, "..", 2, &a, v, 4, 0), -EINVAL, "\"..\" has no value");
	cr_assert_eq(udc_add_value(env.c, D_INO, "a/b", 3, &a, v, 4, 0), -EINVAL);
	cr_assert_eq(udc_add_value(NULL, D_INO, "f", 1, &a, v, 4, 0), -EINVAL);
	cr_assert_eq(udc_lookup_value(env.c, D_INO, "f", 1, NULL, got, NULL), -EINVAL);
	cr_assert_eq(udc_lookup_value(env.c, D_INO, "f", 1, NULL, NULL, &n), -EINVAL);
	cr_assert_eq(udc_resolve_value(env.c, D_INO, "f", 1, &env.call, NULL, got, NULL, NULL), -EINVAL);
	cr_assert_eq(udc_resolve_value(env.c, D_INO, "f", 1, &env.call, NULL, NULL, &n, NULL), -EINVAL);
	cr_assert_eq(udc_lookup_value(env.c, UDC_INO_NONE, "f", 1, NULL, got, &n), -EINVAL);
	struct udc_stats after = tc_stats(env.c);
	cr_assert_eq(after.nr_positive, before.nr_positive);
	cr_assert_eq(after.lookups, before.lookups, "refused calls are not counted");
	expect_value(D_INO, "f", 600, 1, "after the refused calls");
	cr_assert_eq(udc_add_value(env.c, D_INO, "f", 1, &a, NULL, 0, 0), 0, "no value is fine");
	n = sizeof(got);
	cr_assert_eq(udc_lookup_value(env.c, D_INO, "f", 1, NULL, got, &n), UDC_POSITIVE);
	cr_assert_eq(n, 0);
}

Test(values, each_mutation_and_answer_kind)
{
	unsigned char got[UDC_VALUE_MAX];
	size_t n;

	n = 99;
	cr_assert_eq(udc_lookup_value(env.c, D_INO, "..", 2, NULL, got, &n), UDC_POSITIVE);
	cr_assert_eq(n, 0, "\"..\" has no value");
	cr_assert_eq(add_v(D_INO, "f", 700, 1), 0);
	cr_assert_eq(add_v(D_INO, "f", 700, 2), 0);
	expect_value(D_INO, "f", 700, 2, "a new value replaces the old");
	cr_assert_eq(tc_add(env.c, D_INO, "f", 700, UDC_TYPE_REG, 2), 0);
	n = sizeof(got);
	cr_assert_eq(udc_lookup_value(env.c, D_INO, "f", 1, NULL, got, &n), UDC_POSITIVE);
	cr_assert_eq(n, 0, "udc_add leaves no value");

	cr_assert_eq(add_v(D_INO, "g", 701, 5), 0);
	cr_assert_eq(tc_rename(env.c, D_INO, "g", TC_ROOT, "h", 701), 0);
	expect_value(TC_ROOT, "h", 701, 5, "a rename moves the value");
	n = sizeof(got);
	cr_assert_neq(udc_lookup_value(env.c, D_INO, "g", 1, NULL, got, &n), UDC_POSITIVE);
	cr_assert_eq(n, 0);

	cr_assert_eq(tc_add_neg(env.c, D_INO, "neg"), 0);
	n = 99;
	cr_assert_eq(udc_lookup_value(env.c, D_INO, "neg", 3, NULL, got, &n), UDC_NEGATIVE);
	cr_assert_eq(n, 0, "a negative has no value");
	n = 99;
	cr_assert_eq(udc_lookup_value(env.c, D_INO, "none", 4, NULL, got, &n), UDC_MISS);
	cr_assert_eq(n, 0, "a miss has no value");

	cr_assert_eq(tc_remove(env.c, TC_ROOT, "h"), 0);
	cr_assert_eq(tc_lookup(env.c, TC_ROOT, "h", NULL), UDC_MISS);
	cr_assert_eq(udc_invalidate_dir(env.c, D_INO), 0);
	cr_assert_eq(tc_lookup(env.c, D_INO, "f", NULL), UDC_MISS);
}

Test(values, resolve_caches_the_backends_value)
{
	unsigned char got[UDC_VALUE_MAX], want[UDC_VALUE_MAX];
	struct udc_attr a;
	size_t wn = value_make(800, 9, want);

	tc_store_only(&env, D_INO, "f", 800, UDC_TYPE_REG, 9);
	for (int i = 0; i < 3; i++) {
		size_t n = sizeof(got);
		memset(got, 0, sizeof(got));
		cr_assert_eq(udc_resolve_value(env.c, D_INO, "f", 1, &env.call, &a, got, &n, NULL), 0);
		cr_assert_eq(a.ino, 800);
		cr_assert_eq(n, wn, "call %d: length %zu, want %zu", i, n, wn);
		cr_assert(memcmp(got, want, wn) == 0, "call %d: bytes differ", i);
	}
	cr_assert_eq(atomic_load(&be_value_calls), 1, "one backend call, then hits");
	expect_value(D_INO, "f", 800, 9, "cached from the backend");

	/* udc_resolve (no value wanted) caches the value too */
	tc_store_only(&env, D_INO, "g", 801, UDC_TYPE_REG, 4);
	cr_assert_eq(tc_resolve(&env, D_INO, "g", &a), 0);
	expect_value(D_INO, "g", 801, 4, "cached by udc_resolve");
	cr_assert_eq(tc_resolve(&env, D_INO, "nope", NULL), -ENOENT);
	size_t n = 5;
	cr_assert_eq(udc_resolve_value(env.c, D_INO, "nope", 4, &env.call, NULL, got, &n, NULL),
		     -ENOENT);
	cr_assert_eq(n, 0);
}

Test(values, a_value_too_long_from_the_backend_is_eio_and_not_cached)
{
	unsigned char got[UDC_VALUE_MAX];
	size_t n = sizeof(got);

	tc_store_only(&env, D_INO, "f", 900, UDC_TYPE_REG, 1);
	be_value_len_override = UDC_VALUE_MAX + 1;
	cr_assert_eq(udc_resolve_value(env.c, D_INO, "f", 1, &env.call, NULL, got, &n, NULL), -EIO);
	cr_assert_eq(n, 0);
	cr_assert_eq(tc_lookup(env.c, D_INO, "f", NULL), UDC_MISS, "nothing cached");
}

/* Sparse pages are compacted (entries move): every survivor keeps its
 * value; and removing everything gives the values' bytes back. */
Test(values, values_survive_compaction_and_their_memory_goes_back)
{
	enum { N = 20000 };
	char name[32];
	size_t base = tc_stats(env.c).bytes_used;

	for (unsigned i = 0; i < N; i++) {   /* half the survivors (i % 10 == 0) with a
					      * life: its deadline after the value, moved with it */
		snprintf(name, sizeof(name), "file-%u", i);
		cr_assert_eq(add_v_ttl(D_INO, name, 1000 + i, i % 7, i % 20 < 10 ? 0 : 600000), 0);
	}
	size_t full = tc_stats(env.c).bytes_used;
	cr_assert_gt(full - base, (size_t)N * 100, "values are counted: %zu bytes for %d",
		     full - base, N);
	for (unsigned i = 0; i < N; i++) {
		if (i % 10 == 0)
			continue;
		snprintf(name, sizeof(name), "file-%u", i);
		cr_assert_eq(tc_remove(env.c, D_INO, name), 0);
	}
	udc_shrink(env.c, 1);   /* compacts first, and that frees enough */
	struct udc_stats st = tc_stats(env.c);
	cr_assert_gt(st.entries_moved, 0, "the survivors were moved");
	cr_assert_eq(st.evictions, 0, "nothing was evicted");
	for (unsigned i = 0; i < N; i += 10) {
		snprintf(name, sizeof(name), "file-%u", i);
		expect_value(D_INO, name, 1000 + i, i % 7, "after compaction");
	}
	for (unsigned i = 0; i < N; i += 10) {
		snprintf(name, sizeof(name), "file-%u", i);
		cr_assert_eq(tc_remove(env.c, D_INO, name), 0);
	}
	udc_shrink(env.c, SIZE_MAX);
	size_t end = tc_stats(env.c).bytes_used;
	cr_assert_lt(end, base + (full - base) / 20, "bytes_used %zu after all went, %zu before any",
		     end, base);
}

/* Readers copy values out while writers replace them and a small limit
 * evicts and moves them: every value read is whole, one of the versions. */
#define RACE_NAMES 64
#define RACE_VERSIONS 4

struct race {
	udc_cache *c;
	atomic_bool stop;
	struct tfail fail;
	uint64_t seed;
	atomic_long reads;
};

static void *race_reader(void *arg)
{
	struct race *rc = arg;
	struct prng rng;
	unsigned char got[UDC_VALUE_MAX];
	char name[16];

	prng_init(&rng, rc->seed ^ (uintptr_t)&rng);
	while (!atomic_load(&rc->stop)) {
		unsigned i = (unsigned)prng_below(&rng, RACE_NAMES);
		struct udc_attr a;
		size_t n = sizeof(got);
		snprintf(name, sizeof(name), "r%u", i);
		int r = udc_lookup_value(rc->c, D_INO, name, strlen(name), &a, got, &n);
		if (r == UDC_POSITIVE) {
			int v = value_version(a.ino, got, n, RACE_VERSIONS);
			TCHECK(&rc->fail, v >= 0, "\"%s\": a value of %zu bytes that no writer wrote",
			       name, n);
			TCHECK(&rc->fail, v < 0 || (uint64_t)v == a.cookie,
			       "\"%s\": value version %d with the attr of version %llu", name, v,
			       (unsigned long long)a.cookie);
		}
		atomic_fetch_add(&rc->reads, 1);
	}
	return NULL;
}

static void *race_writer(void *arg)
{
	struct race *rc = arg;
	struct prng rng;
	unsigned char v[UDC_VALUE_MAX];
	char name[16];

	prng_init(&rng, rc->seed * 7 + 1 + (uintptr_t)&rng);
	while (!atomic_load(&rc->stop)) {
		unsigned i = (unsigned)prng_below(&rng, RACE_NAMES);
		unsigned ver = (unsigned)prng_below(&rng, RACE_VERSIONS);
		udc_ino ino = 5000 + i;
		snprintf(name, sizeof(name), "r%u", i);
		size_t n = value_make(ino, ver, v);
		struct udc_attr a = tc_attr(ino, UDC_TYPE_REG, ver);
		int r = udc_add_value(rc->c, D_INO, name, strlen(name), &a, v, n, 0);
		TCHECK(&rc->fail, r == 0, "add_value: %d", r);
		if (prng_below(&rng, 8) == 0)
			udc_rename(rc->c, D_INO, name, strlen(name), D_INO, "tmp", 3, ino);
		if (prng_below(&rng, 64) == 0)
			udc_shrink(rc->c, 1 << 16);
	}
	return NULL;
}

Test(values_race, readers_see_whole_values_under_writers_and_eviction, .timeout = 120)
{
	struct race rc = { .seed = test_seed("values_race") };
	pthread_t th[4];

	tfail_init(&rc.fail);
	rc.c = tc_create_limit(TC_ROOT, NULL, 0, 256 << 10);   /* reclaim thread on */
	for (int i = 0; i < 2; i++)
		pthread_create(&th[i], NULL, race_reader, &rc);
	for (int i = 2; i < 4; i++)
		pthread_create(&th[i], NULL, race_writer, &rc);
	/* a filler, so that the limit binds and the values' entries move */
	char name[24];
	struct udc_attr a = tc_attr(9, UDC_TYPE_REG, 0);
	unsigned char v[UDC_VALUE_MAX] = { 0 };
	for (unsigned i = 0; i < 40000; i++) {
		snprintf(name, sizeof(name), "fill-%u", i);
		udc_add_value(rc.c, D_INO, name, strlen(name), &a, v, i % UDC_VALUE_MAX, 0);
	}
	atomic_store(&rc.stop, true);
	for (int i = 0; i < 4; i++)
		pthread_join(th[i], NULL);
	tfail_assert_none(&rc.fail);
	cr_assert_gt(atomic_load(&rc.reads), 1000);
	struct udc_stats st = tc_stats(rc.c);
	cr_assert_gt(st.evictions, 0, "the limit bound");
	cr_assert_leq(st.bytes_used, st.bytes_limit + st.bytes_slack);
	udc_destroy(rc.c);
}
