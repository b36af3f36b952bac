/* SPDX-License-Identifier: MIT */
/*
 * tests/engine/test_stats_memory.c - what the statistics count, the
 * version, the memory limit and udc_destroy: the public contract's
 * accounting (test_semantics.c has the answers).
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

/* liburcu-memb's own answer (set by its constructor): whether its readers
 * rely on sys_membarrier.  Declared by <urcu/static/urcu-memb.h>, which
 * only _LGPL_SOURCE code includes. */
extern int urcu_memb_has_sys_membarrier;

#define D_INO ((udc_ino)10)
#define E_INO ((udc_ino)11)

static struct tenv env;

static void setup(void)
{
	tenv_init(&env, 0);
	tc_store_add(&env, TC_ROOT, "d", D_INO, UDC_TYPE_DIR, 0xD);
	tc_store_add(&env, TC_ROOT, "e", E_INO, UDC_TYPE_DIR, 0xE);
	model_reset_calls(env.m);
}

static void teardown(void)
{
	tenv_fini(&env);
}

TestSuite(stats_memory, .init = setup, .fini = teardown, .timeout = 30);

Test(stats_memory, stats_counters)
{
	struct udc_attr a = tc_attr(100, UDC_TYPE_REG, 1);
	struct udc_stats s0, s1;

	cr_assert_eq(udc_add(env.c, D_INO, "p", 1, &a), 0);
	cr_assert_eq(tc_add_neg(env.c, D_INO, "n"), 0);
	cr_assert_eq(tc_lookup(env.c, D_INO, "n", NULL), UDC_NEGATIVE);
	s0 = tc_stats(env.c);
	cr_assert_eq(tc_lookup(env.c, D_INO, "p", NULL), UDC_POSITIVE);
	cr_assert_eq(tc_lookup(env.c, D_INO, "p", NULL), UDC_POSITIVE);
	cr_assert_eq(tc_lookup(env.c, D_INO, "n", NULL), UDC_NEGATIVE);
	cr_assert_eq(tc_lookup(env.c, D_INO, "m", NULL), UDC_MISS);
	cr_assert_eq(tc_lookup(env.c, D_INO, "m2", NULL), UDC_MISS);
	cr_assert_eq(tc_lookup(env.c, D_INO, "m3", NULL), UDC_MISS);
	s1 = tc_stats(env.c);
	cr_expect_eq(s1.lookups - s0.lookups, 6, "lookups +%llu",
		     (unsigned long long)(s1.lookups - s0.lookups));
	cr_expect_eq(s1.hits_positive - s0.hits_positive, 2);
	cr_expect_eq(s1.hits_negative - s0.hits_negative, 1);
	cr_expect_eq(s1.misses - s0.misses, 3);
	cr_expect_eq(s1.backend_calls, s0.backend_calls);
	cr_expect_eq(s1.nr_positive, s0.nr_positive);

	/* resolve: one backend call per miss, counted. */
	tc_store_only(&env, D_INO, "r", 101, UDC_TYPE_REG, 2);
	s0 = tc_stats(env.c);
	cr_assert_eq(tc_resolve(&env, D_INO, "r", NULL), 0);
	cr_assert_eq(tc_resolve(&env, D_INO, "absent", NULL), -ENOENT);
	s1 = tc_stats(env.c);
	cr_expect_eq(s1.backend_calls - s0.backend_calls, 2);
	cr_expect_geq(s1.lookups - s0.lookups, 2);
	cr_expect_geq(s1.misses - s0.misses, 2);
	cr_expect_eq(s1.nr_positive - s0.nr_positive, 1);
	cr_expect_eq(s1.nr_negative - s0.nr_negative, 1);
	s0 = s1;
	cr_assert_eq(tc_resolve(&env, D_INO, "r", NULL), 0);
	s1 = tc_stats(env.c);
	cr_expect_eq(s1.backend_calls, s0.backend_calls);
	cr_expect_geq(s1.hits_positive - s0.hits_positive, 1);

	/* Entries held. */
	s0 = tc_stats(env.c);
	cr_assert_eq(tc_add(env.c, E_INO, "new", 102, UDC_TYPE_REG, 0), 0);
	s1 = tc_stats(env.c);
	cr_expect_eq(s1.nr_positive, s0.nr_positive + 1);
	cr_assert_eq(tc_add_neg(env.c, E_INO, "newneg"), 0);
	cr_assert_eq(tc_lookup(env.c, E_INO, "newneg", NULL), UDC_NEGATIVE);
	s0 = tc_stats(env.c);
	cr_expect_eq(s0.nr_negative, s1.nr_negative + 1);
	cr_assert_eq(tc_remove(env.c, E_INO, "new"), 0);
	cr_assert_eq(tc_invalidate(env.c, E_INO, "newneg"), 0);
	s1 = tc_stats(env.c);
	cr_expect_eq(s1.nr_positive + 1, s0.nr_positive);
	cr_expect_eq(s1.nr_negative + 1, s0.nr_negative);

	/* Memory. */
	cr_expect_gt(s1.bytes_used, 0);
	cr_expect_leq(s1.bytes_used, s1.bytes_limit);
	cr_expect_eq(s1.bytes_limit, TC_MEMORY_LIMIT);

	/* membarrier: 1 when RCU readers use sys_membarrier (the fast read
	 * side), as liburcu itself decided at start-up. */
	cr_expect_eq(s1.membarrier, urcu_memb_has_sys_membarrier != 0,
		     "stats.membarrier %llu, liburcu's readers %s sys_membarrier",
		     (unsigned long long)s1.membarrier,
		     urcu_memb_has_sys_membarrier ? "use" : "do not use");
}

/* A thread keeps the stats slot of the cache it last counted in (the hit
 * path's hint): lookups alternating between two caches, and caches
 * destroyed and created again (jemalloc hands a new cache the old one's
 * address), count each in its own cache and nowhere else. */
Test(stats_memory, stats_count_in_their_own_cache_when_caches_alternate_and_are_recreated)
{
	struct udc_attr a = tc_attr(100, UDC_TYPE_REG, 1);

	cr_assert_eq(udc_add(env.c, D_INO, "p", 1, &a), 0);
	struct udc_stats e0 = tc_stats(env.c);
	for (int round = 0; round < 20; round++) {
		udc_cache *x = tc_create(TC_ROOT, NULL, 0);
		cr_assert_not_null(x);
		cr_assert_eq(udc_add(x, D_INO, "p", 1, &a), 0);
		struct udc_stats x0 = tc_stats(x);
		for (int i = 0; i < 3; i++) {
			cr_assert_eq(tc_lookup(x, D_INO, "p", NULL), UDC_POSITIVE);
			cr_assert_eq(tc_lookup(env.c, D_INO, "p", NULL), UDC_POSITIVE);
			cr_assert_eq(tc_lookup(x, D_INO, "q", NULL), UDC_MISS);
		}
		struct udc_stats x1 = tc_stats(x);
		cr_expect_eq(x1.hits_positive - x0.hits_positive, 3, "round %d: %llu hits in the new cache",
			     round, (unsigned long long)(x1.hits_positive - x0.hits_positive));
		cr_expect_eq(x1.misses - x0.misses, 3, "round %d: %llu misses in the new cache", round,
			     (unsigned long long)(x1.misses - x0.misses));
		udc_destroy(x);
	}
	struct udc_stats e1 = tc_stats(env.c);
	cr_expect_eq(e1.hits_positive - e0.hits_positive, 60, "%llu hits in the old cache",
		     (unsigned long long)(e1.hits_positive - e0.hits_positive));
	cr_expect_eq(e1.misses, e0.misses, "%llu misses counted in the old cache",
		     (unsigned long long)(e1.misses - e0.misses));
}

Test(stats_memory, stats_bytes_grow)
{
	struct udc_stats s0 = tc_stats(env.c), s1;
	char nm[64];

	for (int i = 0; i < 20000; i++) {
		snprintf(nm, sizeof(nm), "a-fairly-long-name-to-take-room-%08d", i);
		cr_assert_eq(tc_add(env.c, D_INO, nm, 10000 + (udc_ino)i, UDC_TYPE_REG, 0), 0);
	}
	s1 = tc_stats(env.c);
	cr_expect_gt(s1.bytes_used, s0.bytes_used + 20000 * 32, "20000 entries took %llu bytes",
		     (unsigned long long)(s1.bytes_used - s0.bytes_used));
	cr_expect_leq(s1.bytes_used, s1.bytes_limit);
	cr_expect_eq(s1.nr_positive - s0.nr_positive, 20000);
}

Test(stats_memory, memory_limit_default)
{
	struct udc_config cfg = UDC_CONFIG_INIT;
	udc_cache *c;
	struct udc_stats st;

	cfg.root = TC_ROOT;
	cfg.flags = UDC_CFG_NO_RECLAIM_THREAD;
	c = udc_create(&cfg);
	cr_assert_not_null(c);
	st = tc_stats(c);
	cr_expect_eq(st.bytes_limit, TC_DEFAULT_LIMIT, "memory_limit 0: bytes_limit %llu",
		     (unsigned long long)st.bytes_limit);
	cr_expect_gt(st.bytes_used, 0);
	cr_expect_leq(st.bytes_used, st.bytes_limit);
	cr_assert_eq(udc_set_memory_limit(c, (size_t)100 << 20), 0);
	st = tc_stats(c);
	cr_expect_eq(st.bytes_limit, (uint64_t)100 << 20);
	udc_destroy(c);

	c = tc_create_limit(TC_ROOT, NULL, 0, (size_t)3 << 30);
	st = tc_stats(c);
	cr_expect_eq(st.bytes_limit, (uint64_t)3 << 30);
	udc_destroy(c);
}

Test(stats_memory, version)
{
	const char *v = udc_version();
	unsigned maj, min, pat;
	char tail;
	char want[32];

	cr_assert_not_null(v);
	cr_assert_eq(sscanf(v, "%u.%u.%u%c", &maj, &min, &pat, &tail), 3,
		     "version \"%s\" is not MAJOR.MINOR.PATCH", v);
	cr_assert_eq(maj, UDC_VERSION_MAJOR);
	cr_assert_eq(min, UDC_VERSION_MINOR);
	cr_assert_eq(pat, UDC_VERSION_PATCH);
	snprintf(want, sizeof(want), "%u.%u.%u", maj, min, pat);
	cr_assert_str_eq(v, want);
	/* The header's version is the build's: bumped in one place only, the
	 * library would report another version than its package. */
	cr_assert_str_eq(v, UDC_PROJECT_VERSION, "udc_version() %s, CMake project version %s", v,
			 UDC_PROJECT_VERSION);
	cr_assert_eq(udc_version(), v, "not a static string");
}

Test(stats_memory, memory_limit_respected, .timeout = 60)
{
	const size_t limit = (size_t)8 << 20;
	const uint64_t slack = limit / 100 > (1u << 20) ? limit / 100 : (1u << 20);
	udc_cache *c = tc_create_limit(TC_ROOT, NULL, 0, limit);
	struct udc_stats st;
	char nm[64];
	int i, first_eviction = -1;

	for (i = 0; i < 300000; i++) {
		struct udc_attr a = tc_attr(100 + (udc_ino)i, UDC_TYPE_REG, (uint64_t)i);
		int r;

		snprintf(nm, sizeof(nm), "name-that-uses-some-bytes-%010d", i);
		if (i % 4 == 3)
			r = udc_add_negative(c, 2 + (udc_ino)(i % 50), nm, strlen(nm), 0);
		else
			r = udc_add(c, 2 + (udc_ino)(i % 50), nm, strlen(nm), &a);
		cr_assert(r == 0 || r == -ENOMEM, "add #%d = %s", i, tc_res_str(r));
		st = tc_stats(c);
		cr_assert_leq(st.bytes_used, st.bytes_limit + slack,
			      "after add #%d: bytes_used %llu > limit %llu + %llu", i,
			      (unsigned long long)st.bytes_used, (unsigned long long)st.bytes_limit,
			      (unsigned long long)slack);
		if (st.evictions > 0 && first_eviction < 0)
			first_eviction = i;
		if (first_eviction >= 0 && i >= first_eviction + 20000)
			break;
	}
	st = tc_stats(c);
	cr_expect_gt(st.evictions, 0, "8 MiB never filled after %d adds (bytes_used %llu)", i,
		     (unsigned long long)st.bytes_used);
	/* Whatever was kept is right. */
	for (int j = 0; j < i; j += 97) {
		struct udc_attr got, want = tc_attr(100 + (udc_ino)j, UDC_TYPE_REG, (uint64_t)j);
		int r;

		snprintf(nm, sizeof(nm), "name-that-uses-some-bytes-%010d", j);
		r = udc_lookup(c, 2 + (udc_ino)(j % 50), nm, strlen(nm), &got);
		if (j % 4 == 3)
			cr_assert(r == UDC_MISS || r == UDC_NEGATIVE, "#%d = %s", j, tc_res_str(r));
		else
			cr_assert(r == UDC_MISS || (r == UDC_POSITIVE && tc_attr_eq(&got, &want)),
				  "#%d = %s", j, tc_res_str(r));
	}
	/* Lowering the limit reclaims down to it at the next mutation. */
	cr_assert_eq(udc_set_memory_limit(c, (size_t)4 << 20), 0);
	for (int j = 0; j < 64; j++) {
		struct udc_attr a = tc_attr(5, UDC_TYPE_REG, 0);

		snprintf(nm, sizeof(nm), "late-%d", j);
		cr_assert_eq(udc_add(c, 2, nm, strlen(nm), &a), 0);
		udc_shrink(c, (size_t)1 << 20);
	}
	st = tc_stats(c);
	cr_expect_eq(st.bytes_limit, (uint64_t)4 << 20);
	cr_expect_leq(st.bytes_used, st.bytes_limit + slack, "after lowering: %llu",
		      (unsigned long long)st.bytes_used);
	udc_destroy(c);
}

/*
 * udc_destroy frees a full cache without unpublishing its entries one by
 * one: external names (longer than the inline room), positives on their
 * directories' children lists, ".." records, directories, entries waiting
 * for their grace period, all must come back.  udc_destroy asserts that
 * every byte it accounted came back; ASan+UBSan builds (LSan) check for
 * leaks at exit, and UDC_DEBUG=3 runs the validator before it.
 */
static void destroy_full(size_t limit, uint32_t flags)
{
	struct udc_config cfg = UDC_CONFIG_INIT;
	char nm[128];

	cfg.root = TC_ROOT;
	cfg.memory_limit = limit;
	cfg.flags = flags;
	udc_cache *c = udc_create(&cfg);
	cr_assert_not_null(c);

	for (udc_ino d = 100; d < 164; d++) {
		cr_assert_eq(tc_add(c, TC_ROOT, "x", d, UDC_TYPE_DIR, 0), 0);   /* d's ".." */
		for (int i = 0; i < 800; i++) {
			/* every third name apart (over 63 bytes), the rest inline */
			int len = snprintf(nm, sizeof(nm), i % 3 ? "n%d" : "%0100d", i);
			cr_assert(len > 0);
			if (i % 2)
				cr_assert_eq(udc_add_negative(c, d, nm, (size_t)len, 0), 0);
			else
				cr_assert_eq(tc_add(c, d, nm, d * 1000 + (udc_ino)i, UDC_TYPE_REG, 1), 0);
		}
		if (d % 8 == 0)   /* their entries become garbage, some freed meanwhile */
			cr_assert_eq(udc_invalidate_dir(c, d), 0);
	}
	udc_destroy(c);
}

Test(stats_memory, destroy_frees_external_names_and_everything)
{
	destroy_full((size_t)1 << 30, UDC_CFG_NO_RECLAIM_THREAD);   /* no eviction */
	destroy_full((size_t)4 << 20, 0);                         /* evictions, the thread */
	destroy_full((size_t)4 << 20, UDC_CFG_NO_RECLAIM_THREAD);
}

/*
 * A directory object whose only holders are its children's ".." records
 * goes under memory pressure like an idle one: before, each record held a
 * reference on its parent's object, so a cached entry deep in a tree kept
 * every ancestor's object (git-commit's replay at 10% of its footprint:
 * 4,990 objects for 4,457 entries).  Here each child C holds one entry and
 * records a parent P that holds none; at a binding limit the objects stay
 * about one per entry (before: two).
 */
#define KIDS_CHAINS 20000u

Test(stats_memory, parents_known_only_by_dotdot_go_under_pressure, .timeout = 120)
{
	udc_cache *c = tc_create_limit(TC_ROOT, NULL, UDC_CFG_NO_RECLAIM_THREAD, (size_t)1 << 20);

	cr_assert_not_null(c);
	for (unsigned i = 0; i < KIDS_CHAINS; i++) {
		udc_ino parent = 1000000 + i, child = 2000000 + i;
		struct udc_attr p = tc_attr(parent, UDC_TYPE_DIR, 0);

		cr_assert_eq(udc_add(c, child, "..", 2, &p), 0);
		cr_assert_eq(tc_add(c, child, "f", 3000000 + i, UDC_TYPE_REG, 0), 0);
	}
	struct udc_stats st = tc_stats(c);
	uint64_t entries = st.nr_positive + st.nr_negative;
	cr_assert_gt(entries, 100, "the cache holds %llu entries", (unsigned long long)entries);
	cr_expect_leq(st.nr_dirs, entries + entries / 2 + 256,
		      "%llu directory objects for %llu entries", (unsigned long long)st.nr_dirs,
		      (unsigned long long)entries);
	udc_destroy(c);
}
