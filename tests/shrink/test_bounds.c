/*
 * tests/shrink/test_bounds.c - the memory bound under adversarial
 * workloads, garbage collection of invalidated directories, the per-client
 * share, and no wrong answer while reclaim, promotion and compaction run
 * under many threads.
 *
 * The bound: after every call, bytes_used <= limit + slack (the cache's
 * udc_stats.bytes_slack), with the reclaim thread off (reclaim runs inline) and
 * on.  Workloads: all unique misses through udc_resolve; all hits; one
 * huge directory; many small ones; a new directory for every name (the
 * directory objects, left idle by evictions, must go too).  Threads record failures (tfail) and
 * the main thread asserts; seeds are printed.
 */
#include <criterion/criterion.h>
#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <time.h>

#include "common/prng.h"
#include "common/tcache.h"
#include "common/theld.h"
#include "common/tquiet.h"   /* engine_check between the reclaim thread's batches (an ASan
                               * CI run saw 75 positives in the table, 66 counted) */

#define LIMIT ((size_t)4 << 20)
#define BD_THREADS 3

static udc_cache *bd_create(const struct udc_backend *be, bool thread)
{
	struct udc_config cfg = UDC_CONFIG_INIT;

	cfg.memory_limit = LIMIT;
	cfg.root = TC_ROOT;
	cfg.backend = be;
	cfg.flags = thread ? 0 : UDC_CFG_NO_RECLAIM_THREAD;
	udc_cache *c = udc_create(&cfg);
	cr_assert_not_null(c, "udc_create: errno %d", errno);
	return c;
}

static int enoent_lookup(void *ctx, udc_ino dir, const char *name, size_t len,
			 struct udc_attr *out)
{
	(void)ctx, (void)dir, (void)name, (void)len, (void)out;
	return -ENOENT;
}

/* Directory d's name i exists (a regular file) when i is even. */
static int half_lookup(void *ctx, udc_ino dir, const char *name, size_t len,
		       struct udc_attr *out)
{
	unsigned i;

	(void)ctx, (void)len;
	if (sscanf(name, "h-%u", &i) != 1 || i % 2)
		return -ENOENT;
	*out = tc_attr(1000000 + i, UDC_TYPE_REG, dir);
	return 0;
}

static const struct udc_backend enoent_backend = { .lookup = enoent_lookup };
static const struct udc_backend half_backend = { .lookup = half_lookup };

enum bd_shape { BD_UNIQUE, BD_HITS, BD_HUGE_DIR, BD_SMALL_DIRS, BD_DIR_PER_NAME };

struct bd_worker {
	udc_cache *c;
	enum bd_shape shape;
	unsigned id, calls;
	struct tfail *fail;
};

static void bd_check_bound(struct bd_worker *w, unsigned call)
{
	struct udc_stats st = tc_stats(w->c);
	/* The other threads may each be inside a call between our return and
	 * the snapshot: a new entry page (and a page of directory objects or
	 * a name's bytes, under 4 KiB) each. */
	size_t page = slab_page_size(w->c->slabs[ENT_NEGATIVE]);
	size_t bound = LIMIT + st.bytes_slack + (BD_THREADS - 1) * (page + 4096);
	TCHECK(w->fail, st.bytes_used <= bound, "thread %u call %u: bytes_used %llu > %zu", w->id,
	       call, (unsigned long long)st.bytes_used, bound);
}

static void *bd_run(void *arg)
{
	struct bd_worker *w = arg;
	struct udc_call call = { .client = 0 };   /* anonymous: no client share, full pressure */
	struct udc_attr a;
	char nm[64];

	for (unsigned i = 0; i < w->calls; i++) {
		int len, r;
		udc_ino dir;
		switch (w->shape) {
		case BD_UNIQUE:   /* every call a new name: a miss, a negative */
			dir = 100 + i % 32;
			len = snprintf(nm, sizeof(nm), "u-%u-%u", w->id, i);
			r = udc_resolve(w->c, dir, nm, (size_t)len, &call, &a);
			TCHECK(w->fail, r == -ENOENT, "unique %u: %d", i, r);
			break;
		case BD_HITS:   /* a small set, looked up again and again */
			dir = 200;
			len = snprintf(nm, sizeof(nm), "h-%u", i % 512);
			r = udc_resolve(w->c, dir, nm, (size_t)len, &call, &a);
			TCHECK(w->fail, (i % 512) % 2 ? r == -ENOENT : r == 0 && a.ino == 1000000 + i % 512,
			       "hit %u: %d", i, r);
			break;
		case BD_HUGE_DIR:   /* one directory, unique names */
			dir = 300;
			len = snprintf(nm, sizeof(nm), "h-%u", w->id * 1000000 + i);
			r = udc_resolve(w->c, dir, nm, (size_t)len, &call, &a);
			TCHECK(w->fail, r == 0 || r == -ENOENT, "huge %u: %d", i, r);
			break;
		case BD_SMALL_DIRS:   /* a new directory every 8 names */
			dir = 10000 + (w->id * w->calls + i) / 8;
			len = snprintf(nm, sizeof(nm), "h-%u", i % 8);
			r = udc_resolve(w->c, dir, nm, (size_t)len, &call, &a);
			TCHECK(w->fail, r == 0 || r == -ENOENT, "small %u: %d", i, r);
			break;
		case BD_DIR_PER_NAME:   /* 128-byte directory objects outnumber the entries */
			dir = 1000000 + w->id * w->calls + i;
			r = udc_resolve(w->c, dir, "h-1", 3, &call, &a);
			TCHECK(w->fail, r == -ENOENT, "dir per name %u: %d", i, r);
			break;
		}
		if (i % 16 == 0)
			bd_check_bound(w, i);
	}
	return NULL;
}

static void bd_workload(enum bd_shape shape, const struct udc_backend *be, unsigned calls)
{
	for (int thread = 0; thread < 2; thread++) {
		udc_cache *c = bd_create(be, thread);
		struct tfail fail;
		struct bd_worker w[BD_THREADS];
		pthread_t th[BD_THREADS];

		tfail_init(&fail);
		for (unsigned t = 0; t < BD_THREADS; t++) {
			w[t] = (struct bd_worker){ .c = c, .shape = shape, .id = t, .calls = calls,
						   .fail = &fail };
			cr_assert_eq(pthread_create(&th[t], NULL, bd_run, &w[t]), 0);
		}
		for (unsigned t = 0; t < BD_THREADS; t++)
			pthread_join(th[t], NULL);
		tfail_assert_none(&fail);
		struct udc_stats st = tc_stats(c);
		fprintf(stderr, "bound (shape %d, thread %d): bytes_used %llu of %zu, %llu entries, "
				"%llu dirs, %llu evictions, %llu declined\n",
			(int)shape, thread, (unsigned long long)st.bytes_used, LIMIT,
			(unsigned long long)(st.nr_positive + st.nr_negative),
			(unsigned long long)st.nr_dirs,
			(unsigned long long)st.evictions, (unsigned long long)st.negatives_declined);
		udc_destroy(c);
	}
}

Test(bounds, all_unique_misses, .timeout = 300)
{
	bd_workload(BD_UNIQUE, &enoent_backend, 120000);
}

Test(bounds, all_hits, .timeout = 300)
{
	bd_workload(BD_HITS, &half_backend, 120000);
}

Test(bounds, one_huge_directory, .timeout = 300)
{
	bd_workload(BD_HUGE_DIR, &half_backend, 120000);
}

Test(bounds, many_small_directories, .timeout = 300)
{
	bd_workload(BD_SMALL_DIRS, &half_backend, 60000);
}

Test(bounds, a_directory_per_name, .timeout = 300)
{
	bd_workload(BD_DIR_PER_NAME, &enoent_backend, 60000);
}

static double bd_now(void)
{
	struct timespec t;

	clock_gettime(CLOCK_MONOTONIC, &t);
	return (double)t.tv_sec + (double)t.tv_nsec * 1e-9;
}

/* Invalidated and removed directories' entries are swept with no memory
 * pressure: by the calls that follow (no thread), or by the thread alone. */
Test(bounds, garbage_of_invalidated_directories_is_swept, .timeout = 300)
{
	for (int thread = 0; thread < 2; thread++) {
		udc_cache *c = tc_create(TC_ROOT, NULL, UDC_CFG_NO_RECLAIM_THREAD);
		if (thread) {
			udc_destroy(c);
			struct udc_config cfg = UDC_CONFIG_INIT;
			cfg.memory_limit = TC_MEMORY_LIMIT;
			cfg.root = TC_ROOT;
			c = udc_create(&cfg);
			cr_assert_not_null(c);
		}
		char nm[32];
		size_t base = tc_stats(c).bytes_used;
		for (unsigned i = 0; i < 60000; i++) {
			int len = snprintf(nm, sizeof(nm), "g-%u", i);
			cr_assert_eq(udc_add_negative(c, 50 + i % 2, nm, (size_t)len, 0), 0);
			if (i % 10 == 0)
				cr_assert_eq(tc_add(c, 50 + i % 2, nm + 1, 70000 + i, UDC_TYPE_REG, 0), 0);
		}
		size_t full = tc_stats(c).bytes_used;
		cr_assert_eq(udc_invalidate_dir(c, 50), 0);
		cr_assert_eq(tc_rmdir(c, TC_ROOT, "d51", 51), 0);
		if (thread)   /* idle from now on: its open pages are the thread's to sweep */
			udc_thread_offline(c);
		double end = bd_now() + 60;
		uint64_t left;
		unsigned k = 0;
		/* Until the entries are gone, and the directory objects that
		 * held them (reaped by the calls, or the thread, a batch at a
		 * time: the last may go a call after the last entry). */
		while (((left = tc_stats(c).nr_positive + tc_stats(c).nr_negative) > 0 ||
			tc_stats(c).nr_dirs > 2) &&
		       bd_now() < end) {
			if (!thread) {   /* calls elsewhere do the sweeping */
				int len = snprintf(nm, sizeof(nm), "tick-%u", k++ % 64);
				cr_assert_eq(udc_add_negative(c, 60, nm, (size_t)len, 0), 0);
				cr_assert_eq(udc_invalidate(c, 60, nm, (size_t)len), 0);
			} else {
				struct timespec ts = { .tv_nsec = 10 * 1000000L };
				nanosleep(&ts, NULL);
			}
		}
		udc_shrink(c, 1);   /* waits for the frees, compacts */
		size_t after = tc_stats(c).bytes_used;
		fprintf(stderr, "garbage (thread %d): %llu entries left; bytes_used %zu -> %zu -> %zu\n",
			thread, (unsigned long long)left, base, full, after);
		cr_assert_eq(left, 0, "%llu stale entries still held", (unsigned long long)left);
		/* Their directory objects went with them: left are at most
		 * dir 60's (the ticks') and its idle neighbours' not yet reaped. */
		uint64_t dirs = tc_stats(c).nr_dirs;
		cr_assert_leq(dirs, 2, "%llu directory objects left", (unsigned long long)dirs);
		cr_assert_lt(after - base, (full - base) / 4, "the pages did not come back");
		udc_destroy(c);
	}
}

/*
 * Without the reclaim thread, one client's trickle of unique misses at a
 * small limit: the calls' own evictions (landed, two grace periods of
 * their own) keep bytes_used under the throttle, so no call ever waits
 * for the call_rcu queue.  Before the fix, landed evictions were still
 * counted as in flight, hid the due eviction from the calls that followed,
 * and about one call in 3,000 waited ~20 ms in the throttle.
 */
Test(bounds, one_client_without_the_thread_never_throttles, .timeout = 300)
{
	udc_cache *c = tc_create_limit(TC_ROOT, &enoent_backend, UDC_CFG_NO_RECLAIM_THREAD,
				       (size_t)2 << 20);
	char nm[32];
	struct udc_stats bound = { 0 };

	/* The first 50,000 fill the cache: the limit binds, the name table
	 * grows to its size once (the growth is made room for by one
	 * throttled call); then the steady state. */
	for (unsigned i = 0; i < 250000; i++) {
		if (i == 50000)
			bound = tc_stats(c);
		int len = snprintf(nm, sizeof(nm), "trickle-%08u-%08u", i, i * 7919u);
		cr_assert_eq(udc_resolve(c, 100 + i % 64, nm, (size_t)len, NULL, NULL), -ENOENT);
	}
	struct udc_stats st = tc_stats(c);
	fprintf(stderr, "trickle without the thread: %llu evictions, %llu throttled calls (%llu filling)\n",
		(unsigned long long)st.evictions, (unsigned long long)st.throttled,
		(unsigned long long)bound.throttled);
	cr_assert_gt(bound.evictions, 0, "the limit did not bind while filling");
	cr_assert_gt(st.evictions - bound.evictions, 150000);
	cr_assert_leq(st.bytes_used, st.bytes_limit + st.bytes_slack);
	cr_assert_eq(st.throttled - bound.throttled, 0, "%llu calls waited for reclaim",
		     (unsigned long long)(st.throttled - bound.throttled));
	udc_destroy(c);
}

/*
 * The ghost table grows when evictions start, to about one slot per entry
 * held: 2 MiB of it at a 64 MiB limit, three times the slack.  Its growth
 * is made room for like the name table's; before, it was made at once,
 * and bytes_used went past limit + slack by about the table's size until
 * the next call's throttle (the 128 MiB soak: 5 MiB past the limit).
 * bytes_used is read after every call (cache_bytes_used: the stats sum
 * every thread's counters, too slow for a million calls).
 */
Test(bounds, ghost_table_growth_stays_within_the_bound, .timeout = 300)
{
	const size_t limit = (size_t)64 << 20;
	udc_cache *c = tc_create_limit(TC_ROOT, NULL, UDC_CFG_NO_RECLAIM_THREAD, limit);
	struct udc_stats st = tc_stats(c);
	const size_t bound = limit + st.bytes_slack;
	size_t max = 0;
	char nm[32];

	for (unsigned i = 0; i < 1200000; i++) {
		int len = snprintf(nm, sizeof(nm), "ghost-%010u", i);
		cr_assert_eq(udc_add_negative(c, 100 + i % 256, nm, (size_t)len, 0), 0);
		size_t used = cache_bytes_used(c);
		if (used > max)
			max = used;
		cr_assert_leq(used, bound, "call %u: bytes_used %zu past the bound %zu", i, used, bound);
	}
	st = tc_stats(c);
	fprintf(stderr, "ghosts at 64 MiB: max bytes_used %.4f x limit, bound %.4f, %llu evictions\n",
		(double)max / (double)limit, (double)bound / (double)limit,
		(unsigned long long)st.evictions);
	cr_assert_gt(st.evictions, 100000, "the limit did not bind");
	udc_destroy(c);
}

/* A client scanning unique names fills its share of probation and no more:
 * the other client's negatives stay. */
Test(bounds, a_scanning_client_keeps_to_its_share)
{
	udc_cache *c = tc_create_limit(TC_ROOT, NULL, 0, (size_t)16 << 20);
	char nm[32];

	for (unsigned i = 0; i < 20000; i++) {   /* 8 directories: within their bounds */
		int len = snprintf(nm, sizeof(nm), "keep-%u", i);
		cr_assert_eq(udc_add_negative(c, 10 + i % 8, nm, (size_t)len, 7), 0);
	}
	for (unsigned i = 0; i < 400000; i++) {
		int len = snprintf(nm, sizeof(nm), "scan-%u", i);
		cr_assert_eq(udc_add_negative(c, 20 + i % 256, nm, (size_t)len, 9), 0);
	}
	struct udc_stats st = tc_stats(c);
	unsigned kept = 0;
	for (unsigned i = 0; i < 20000; i++) {
		int len = snprintf(nm, sizeof(nm), "keep-%u", i);
		kept += udc_lookup(c, 10 + i % 8, nm, (size_t)len, NULL) == UDC_NEGATIVE;
	}
	fprintf(stderr, "client share: %u of 20000 kept, %llu declined, %llu evictions\n", kept,
		(unsigned long long)st.negatives_declined, (unsigned long long)st.evictions);
	cr_assert_gt(st.negatives_declined, 0, "the scanner was never declined");
	cr_assert_eq(kept, 20000, "the scanner pushed out %u of the other client's", 20000 - kept);
	udc_destroy(c);
}

/* Client ids 9 and 72 (9 + 63) have counts of their own: the scanner's
 * full share declines none of the other's negatives (folded modulo 63,
 * they shared one, and every one of client 9's was declined). */
Test(bounds, a_client_whose_id_collides_keeps_its_own_share)
{
	udc_cache *c = tc_create_limit(TC_ROOT, NULL, 0, (size_t)16 << 20);
	char nm[32];

	for (unsigned i = 0; i < 400000; i++) {
		int len = snprintf(nm, sizeof(nm), "scan-%u", i);
		cr_assert_eq(udc_add_negative(c, 20 + i % 256, nm, (size_t)len, 72), 0);
	}
	uint64_t declined = tc_stats(c).negatives_declined;
	cr_assert_gt(declined, 0, "the scanner was never declined");
	for (unsigned i = 0; i < 20000; i++) {
		int len = snprintf(nm, sizeof(nm), "keep-%u", i);
		cr_assert_eq(udc_add_negative(c, 10 + i % 8, nm, (size_t)len, 9), 0);
	}
	unsigned kept = 0;
	for (unsigned i = 0; i < 20000; i++) {
		int len = snprintf(nm, sizeof(nm), "keep-%u", i);
		kept += udc_lookup(c, 10 + i % 8, nm, (size_t)len, NULL) == UDC_NEGATIVE;
	}
	cr_assert_eq(tc_stats(c).negatives_declined, declined, "client 9 was declined %llu times",
		     (unsigned long long)(tc_stats(c).negatives_declined - declined));
	cr_assert_eq(kept, 20000, "%u of client 9's 20000 kept", kept);
	udc_destroy(c);
}

/*
 * Fairness against more than one scanner (issue 14, deliverable 4).  A
 * victim, client 1, has FAIR_VICTIM negatives, looked up once every
 * FAIR_LOOK rounds (a miss is added again, as udc_resolve would); in each
 * round scanners add FAIR_ROUND unique names, about the cache's worth of
 * negatives, so that probation turns over FAIR_LOOK times between two of
 * the victim's passes (BENCHMARKS.md, issue 14, fairness: 1000 ms rows).
 * Reclaim runs inline (no thread): the same calls, the same evictions.
 * Which scanner makes a name is random (seeded, printed).
 */
#define FAIR_LIMIT ((size_t)4 << 20)
#define FAIR_VICTIM 5000
#define FAIR_ROUND 40000
#define FAIR_LOOK 4
#define FAIR_PASSES 6          /* the victim's looks, the first one or two a warm-up */

enum fair_ids { FAIR_DISTINCT, FAIR_ROTATE, FAIR_ANONYMOUS };

/* The victim's pass: its hits; its misses added again. */
static unsigned fair_victim_pass(udc_cache *c)
{
	char nm[32];
	unsigned hits = 0;

	for (unsigned i = 0; i < FAIR_VICTIM; i++) {
		int len = snprintf(nm, sizeof(nm), "victim-%u", i);
		if (udc_lookup(c, 10 + i % 5, nm, (size_t)len, NULL) == UDC_NEGATIVE)
			hits++;
		else
			cr_assert_eq(udc_add_negative(c, 10 + i % 5, nm, (size_t)len, 1), 0);
	}
	return hits;
}

/* One round of the scanners: @scanners distinct ids 2.., or one taking a
 * new id every @rotate names, or one anonymous.  *@next: names made so far. */
static void fair_scan_round(udc_cache *c, struct prng *p, enum fair_ids ids, unsigned scanners,
			    unsigned rotate, unsigned *next)
{
	char nm[32];

	for (unsigned k = 0; k < FAIR_ROUND; k++, (*next)++) {
		uint32_t id = ids == FAIR_DISTINCT ? 2 + (uint32_t)prng_below(p, scanners) :
			      ids == FAIR_ROTATE   ? 2 + *next / rotate :
						     0;
		int len = snprintf(nm, sizeof(nm), "scan-%u", *next);
		cr_assert_eq(udc_add_negative(c, 20 + (udc_ino)prng_below(p, 64), nm, (size_t)len, id),
			     0);
	}
}

/* The victim's hit ratio over its passes after the first @warmup: it may
 * lose its set before its first look (it is the largest client then, or
 * cannot yet be told from a scanner that rotates its ids); from its first
 * look on (its names refault or are promoted: its client has earned a
 * place) it keeps them.  Against rotating ids, @warmup is 2: in a slow,
 * oversubscribed run (CI's ASan preset, two test processes of two jobs
 * each on 2 cores) the victim once kept 1,536 of its 5,000 names at its
 * second look and all of them from its third (ratio 0.861 over passes
 * 1-5); the pacing that varies with time (open pages retired after
 * SWEEP_OPEN_MAX_MS) makes earning take one look more there. */
static double fair_scenario(const char *what, enum fair_ids ids, unsigned scanners, unsigned rotate,
			    unsigned warmup, unsigned looks)
{
	struct prng p;
	prng_init(&p, test_seed(what));
	udc_cache *c = tc_create_limit(TC_ROOT, NULL, UDC_CFG_NO_RECLAIM_THREAD, FAIR_LIMIT);
	unsigned next = 0, hits = 0;

	fair_scan_round(c, &p, ids, scanners, rotate, &next);   /* the scanners' head start */
	fair_victim_pass(c);
	for (unsigned pass = 0; pass < FAIR_PASSES; pass++) {
		for (unsigned r = 0; r < looks; r++)
			fair_scan_round(c, &p, ids, scanners, rotate, &next);
		unsigned h = fair_victim_pass(c);
		if (pass >= warmup)   /* see above */
			hits += h;
		fprintf(stderr, "%s: pass %u: %u hits\n", what, pass, h);
	}
	struct udc_stats st = tc_stats(c);
	double ratio = (double)hits / ((double)FAIR_VICTIM * (FAIR_PASSES - warmup));
	fprintf(stderr, "%s: victim hit ratio %.3f; %llu negatives, %llu evictions, %llu declined, "
			"%llu promoted\n",
		what, ratio, (unsigned long long)st.nr_negative, (unsigned long long)st.evictions,
		(unsigned long long)st.negatives_declined, (unsigned long long)st.entries_promoted);
	cr_assert_leq(st.bytes_used, st.bytes_limit + st.bytes_slack);
	udc_destroy(c);
	return ratio;
}

/* Before: 2-50% (the set is flushed between two passes, bar what comes
 * back through its ghosts); after: all, at least 90% on any seed. */
Test(bounds, a_victims_negatives_survive_two_scanners, .timeout = 300)
{
	double r = fair_scenario("bounds/a_victims_negatives_survive_two_scanners", FAIR_DISTINCT, 2, 0, 1,
				 FAIR_LOOK);
	cr_assert_geq(r, 0.90, "victim hit ratio %.3f", r);
}

Test(bounds, a_victims_negatives_survive_eight_scanners, .timeout = 300)
{
	double r = fair_scenario("bounds/a_victims_negatives_survive_eight_scanners", FAIR_DISTINCT, 8, 0, 1,
				 FAIR_LOOK);
	cr_assert_geq(r, 0.90, "victim hit ratio %.3f", r);
}

Test(bounds, a_victims_negatives_survive_rotating_ids, .timeout = 300)
{
	double r = fair_scenario("bounds/a_victims_negatives_survive_rotating_ids", FAIR_ROTATE, 1, 1000, 2,
				 FAIR_LOOK);
	cr_assert_geq(r, 0.90, "victim hit ratio %.3f", r);
}

Test(bounds, a_victims_negatives_survive_an_anonymous_scanner, .timeout = 300)
{
	double r = fair_scenario("bounds/a_victims_negatives_survive_an_anonymous_scanner",
				 FAIR_ANONYMOUS, 1, 0, 1, FAIR_LOOK);
	cr_assert_geq(r, 0.90, "victim hit ratio %.3f", r);
}

/*
 * The same when probation turns over more often than a name may be
 * requeued (FAIR_LOOK_LONG rounds between two of the victim's passes,
 * past REQUEUE_MAX's 8): a client that has earned its place is requeued
 * for as long as unearned or anonymous negatives are there to go first.
 * With 8 requeues at most, the anonymous row of the fairness benchmark at
 * 1000 ms kept 28-83% of the victim's set, and these tests' victims hit
 * 0.427 (anonymous) and 0.158 (rotating ids).
 */
#define FAIR_LOOK_LONG 12

Test(bounds, a_victims_negatives_outlive_many_turnovers_of_an_anonymous_scanner, .timeout = 300)
{
	double r = fair_scenario("bounds/a_victims_negatives_outlive_many_turnovers_of_an_anonymous_scanner",
				 FAIR_ANONYMOUS, 1, 0, 1, FAIR_LOOK_LONG);
	cr_assert_geq(r, 0.90, "victim hit ratio %.3f", r);
}

Test(bounds, a_victims_negatives_outlive_many_turnovers_of_rotating_ids, .timeout = 300)
{
	double r = fair_scenario("bounds/a_victims_negatives_outlive_many_turnovers_of_rotating_ids",
				 FAIR_ROTATE, 1, 1000, 2, FAIR_LOOK_LONG);
	cr_assert_geq(r, 0.90, "victim hit ratio %.3f", r);
}

/*
 * A client earns its place by coming back (admit.c): here, to a set it
 * lost a long time ago.  Rotating ids turn the cache over about 20 times
 * (FAIR_AWAY rounds) between the victim's first look and its second,
 * which makes every name again; the ghosts remember about one turnover,
 * so no name of the set is a refault, and the names that stand for the
 * set in the lasting ghosts (sweep.c) tell that it came back.  Then the
 * set, earned, outlives twelve turnovers to its third look.  Before the
 * lasting ghosts, the set was lost at the third look in 7 runs of 10 (the
 * victim's client came back unearned: 0 hits of 5,000), kept only when one
 * of its names refaulted, truly or falsely.
 */
#define FAIR_AWAY 24

Test(bounds, a_client_that_comes_back_after_many_turnovers_earns_its_place, .timeout = 300)
{
	const char *what = "bounds/a_client_that_comes_back_after_many_turnovers_earns_its_place";
	struct prng p;
	prng_init(&p, test_seed(what));
	udc_cache *c = tc_create_limit(TC_ROOT, NULL, UDC_CFG_NO_RECLAIM_THREAD, FAIR_LIMIT);
	unsigned next = 0;

	fair_victim_pass(c);
	for (unsigned r = 0; r < FAIR_AWAY; r++)
		fair_scan_round(c, &p, FAIR_ROTATE, 1, 1000, &next);
	unsigned back = fair_victim_pass(c);
	uint64_t refaults = tc_stats(c).refaults;
	for (unsigned r = 0; r < FAIR_LOOK_LONG; r++)
		fair_scan_round(c, &p, FAIR_ROTATE, 1, 1000, &next);
	unsigned hits = fair_victim_pass(c);
	fprintf(stderr, "%s: %u hits when it came back, %u at its next look; %llu refaults in all\n",
		what, back, hits, (unsigned long long)refaults);
	cr_assert_geq(hits, FAIR_VICTIM * 9 / 10, "%u of %u hit at the victim's third look", hits,
		      FAIR_VICTIM);
	udc_destroy(c);
}

/*
 * Anonymous is first in line: a client's negatives, never looked up, made
 * before an anonymous stream of twice the cache, are still there (their
 * client under its fair share, they are requeued) while the anonymous
 * names made with them are gone; and a longer stream takes them too (each
 * is requeued a bounded number of times: rotating ids free their tags).
 */
/* Before it looks, the test waits out the open pages of the other CPU's
 * slot and runs two more rounds, whose sweeps take them too (seen in CI:
 * 32 client negatives after the 24 rounds below, on a loaded machine).
 * Two: a sweep retires an open page as the newest of its class (its
 * entries are as young as its last one), so the FIFO reaches it a
 * turnover later, and the requeued client names make a turnover longer
 * than a round (with one round, 12 anonymous names were once left in a
 * loaded ctest -j2 run). */
static void fair_settle(udc_cache *c, struct prng *p, unsigned *next)
{
	tc_sleep_past_open_max();
	for (unsigned r = 0; r < 2; r++)
		fair_scan_round(c, p, FAIR_ANONYMOUS, 1, 0, next);
}

Test(bounds, an_anonymous_scanner_is_evicted_before_a_client, .timeout = 300)
{
	udc_cache *c = tc_create_limit(TC_ROOT, NULL, UDC_CFG_NO_RECLAIM_THREAD, FAIR_LIMIT);
	char nm[32];
	unsigned next = 0;

	for (unsigned i = 0; i < FAIR_VICTIM; i++) {
		int len = snprintf(nm, sizeof(nm), "victim-%u", i);
		cr_assert_eq(udc_add_negative(c, 10 + i % 5, nm, (size_t)len, 5), 0);
		len = snprintf(nm, sizeof(nm), "early-%u", i);
		cr_assert_eq(udc_add_negative(c, 15, nm, (size_t)len, 0), 0);
	}
	struct prng p;
	prng_init(&p, test_seed("bounds/an_anonymous_scanner_is_evicted_before_a_client"));
	for (unsigned r = 0; r < 2; r++)
		fair_scan_round(c, &p, FAIR_ANONYMOUS, 1, 0, &next);
	fair_settle(c, &p, &next);
	unsigned victim = 0, early = 0;
	for (unsigned i = 0; i < FAIR_VICTIM; i++) {   /* udc_lookup would hit them: peek */
		int len = snprintf(nm, sizeof(nm), "victim-%u", i);
		victim += tc_held(c, 10 + i % 5, nm, (size_t)len);
		len = snprintf(nm, sizeof(nm), "early-%u", i);
		early += tc_held(c, 15, nm, (size_t)len);
	}
	fprintf(stderr, "anonymous first: %u of %u client negatives kept, %u anonymous\n", victim,
		FAIR_VICTIM, early);
	cr_assert_eq(early, 0, "%u of the anonymous names made with the client's kept", early);
	cr_assert_geq(victim, FAIR_VICTIM * 99 / 100, "%u of the client's %u kept", victim, FAIR_VICTIM);
	/* Never hit, they go once their requeues are spent: 24 rounds here,
	 * more when the machine is loaded (the calls' sweep batches are paced
	 * by their own duration, which preemption stretches: CI once kept 42
	 * after 24).  Eventually is the property; 240 rounds bound it. */
	unsigned rounds = 0;
	do {
		for (unsigned r = 0; r < 24; r++)
			fair_scan_round(c, &p, FAIR_ANONYMOUS, 1, 0, &next);
		fair_settle(c, &p, &next);
		rounds += 24;
		victim = 0;
		for (unsigned i = 0; i < FAIR_VICTIM; i++) {
			int len = snprintf(nm, sizeof(nm), "victim-%u", i);
			victim += tc_held(c, 10 + i % 5, nm, (size_t)len);
		}
		fprintf(stderr, "after %u more rounds: %u client negatives kept\n", rounds, victim);
	} while (victim && rounds < 240);
	cr_assert_eq(victim, 0, "%u never-hit client negatives outlived their requeues", victim);
	udc_destroy(c);
}

/*
 * Many threads, a small limit: every answer is one the thread's own model
 * allows (a positive with the attr last added, a negative where the name
 * is known absent, or a miss), while the sweeper evicts, promotes and
 * compacts under them.
 */
#define RW_THREADS 4
#define RW_NAMES 20000

struct rw_worker {
	udc_cache *c;
	unsigned id;
	uint64_t seed;
	struct tfail *fail;
	uint8_t state[RW_NAMES];     /* 0 unknown, 1 positive, 2 negative */
	uint32_t version[RW_NAMES];
};

static void *rw_run(void *arg)
{
	struct rw_worker *w = arg;
	struct prng p;
	char nm[32];
	udc_ino dir = 500 + w->id;

	prng_init(&p, w->seed);
	for (unsigned k = 0; k < 300000; k++) {
		unsigned i = (unsigned)prng_below(&p, RW_NAMES);
		int len = snprintf(nm, sizeof(nm), "rw-%u", i);
		unsigned op = (unsigned)prng_below(&p, 10);
		if (op == 0) {
			w->version[i]++;
			struct udc_attr a = tc_attr(1 + i, UDC_TYPE_REG, w->version[i]);
			TCHECK(w->fail, udc_add(w->c, dir, nm, (size_t)len, &a) == 0, "add");
			w->state[i] = 1;
		} else if (op == 1) {
			TCHECK(w->fail, udc_add_negative(w->c, dir, nm, (size_t)len, w->id + 1) == 0,
			       "add_negative");
			w->state[i] = 2;
		} else if (op == 2) {
			TCHECK(w->fail, udc_invalidate(w->c, dir, nm, (size_t)len) == 0, "invalidate");
			w->state[i] = 0;
		} else {
			struct udc_attr a;
			int r = udc_lookup(w->c, dir, nm, (size_t)len, &a);
			if (r == UDC_POSITIVE)
				TCHECK(w->fail, w->state[i] == 1 && a.ino == 1 + i &&
							a.cookie == w->version[i],
				       "thread %u name %u: positive (cookie %llu) but state %u v%u", w->id,
				       i, (unsigned long long)a.cookie, w->state[i], w->version[i]);
			else if (r == UDC_NEGATIVE)
				TCHECK(w->fail, w->state[i] == 2, "thread %u name %u: negative, state %u",
				       w->id, i, w->state[i]);
			else
				TCHECK(w->fail, r == UDC_MISS, "lookup: %d", r);
		}
	}
	return NULL;
}

Test(bounds, no_wrong_answer_while_reclaim_runs, .timeout = 300)
{
	uint64_t seed = test_seed("bounds/no_wrong_answer_while_reclaim_runs");
	udc_cache *c = bd_create(NULL, true);
	static struct rw_worker w[RW_THREADS];
	pthread_t th[RW_THREADS];
	struct tfail fail;

	/* 1 MiB: the names do not fit, so the sweeper never rests. */
	cr_assert_eq(udc_set_memory_limit(c, (size_t)1 << 20), 0);
	tfail_init(&fail);
	for (unsigned t = 0; t < RW_THREADS; t++) {
		memset(&w[t], 0, sizeof(w[t]));
		w[t].c = c;
		w[t].id = t;
		w[t].seed = seed + t;
		w[t].fail = &fail;
		cr_assert_eq(pthread_create(&th[t], NULL, rw_run, &w[t]), 0);
	}
	for (unsigned t = 0; t < RW_THREADS; t++)
		pthread_join(th[t], NULL);
	tfail_assert_none(&fail);
	struct udc_stats st = tc_stats(c);
	fprintf(stderr, "reclaim race: %llu evictions, %llu promoted, %llu moved, %llu refaults\n",
		(unsigned long long)st.evictions, (unsigned long long)st.entries_promoted,
		(unsigned long long)st.entries_moved, (unsigned long long)st.refaults);
	cr_assert_gt(st.evictions, 0);
	cr_assert_gt(st.entries_promoted, 0);
	udc_destroy(c);
}

/*
 * Directory objects freed and made again under the calls that pin them:
 * 16 shared directories whose every name exists with the directory's
 * epoch as its cookie.  Threads resolve and look names up, invalidate
 * names, and move a directory to a new epoch (udc_invalidate_dir or
 * udc_rmdir after the backend changed), so that directories go idle and
 * are reaped (by the thread, and by udc_shrink under full pressure) while
 * others pin them.  No answer may be older than an invalidation that
 * returned before the call began.
 */
#define DC_THREADS 4
#define DC_DIRS 16
#define DC_NAMES 64
#define DC_INO 700

static _Atomic uint64_t dc_epoch[DC_DIRS];   /* the backend's truth */
static _Atomic uint64_t dc_told[DC_DIRS];    /* epochs whose invalidation returned */

static int dc_backend_lookup(void *ctx, udc_ino dir, const char *name, size_t len,
			     struct udc_attr *out)
{
	(void)ctx, (void)name, (void)len;
	*out = tc_attr(5000 + dir, UDC_TYPE_REG, atomic_load(&dc_epoch[dir - DC_INO]));
	return 0;
}

static const struct udc_backend dc_backend = { .lookup = dc_backend_lookup };

struct dc_worker {
	udc_cache *c;
	unsigned id;
	uint64_t seed;
	struct tfail *fail;
};

static void *dc_run(void *arg)
{
	struct dc_worker *w = arg;
	struct udc_call call = { .client = w->id + 1 };
	struct prng p;
	char nm[32];

	prng_init(&p, w->seed);
	for (unsigned k = 0; k < 60000; k++) {
		unsigned d = (unsigned)prng_below(&p, DC_DIRS);
		udc_ino dir = DC_INO + d;
		int len = snprintf(nm, sizeof(nm), "n-%u", (unsigned)prng_below(&p, DC_NAMES));
		unsigned op = (unsigned)prng_below(&p, 1000);
		uint64_t told = atomic_load(&dc_told[d]);
		struct udc_attr a;
		int r;
		if (op < 600) {
			r = udc_resolve(w->c, dir, nm, (size_t)len, &call, &a);
			TCHECK(w->fail, r == 0 && a.ino == 5000 + dir && a.cookie >= told,
			       "thread %u: resolve %llu/%s: %d, cookie %llu, told %llu", w->id,
			       (unsigned long long)dir, nm, r, (unsigned long long)a.cookie,
			       (unsigned long long)told);
		} else if (op < 850) {
			r = udc_lookup(w->c, dir, nm, (size_t)len, &a);
			TCHECK(w->fail, r == UDC_MISS || (r == UDC_POSITIVE && a.cookie >= told),
			       "thread %u: lookup %llu/%s: %d, cookie %llu, told %llu", w->id,
			       (unsigned long long)dir, nm, r, (unsigned long long)a.cookie,
			       (unsigned long long)told);
		} else if (op < 900) {
			TCHECK(w->fail, udc_invalidate(w->c, dir, nm, (size_t)len) == 0, "invalidate");
		} else if (op < 999) {
			uint64_t e = atomic_fetch_add(&dc_epoch[d], 1) + 1;
			if (op % 2)
				r = udc_invalidate_dir(w->c, dir);
			else   /* removed and made again under the same ino */
				r = udc_rmdir(w->c, TC_ROOT, nm, (size_t)len, dir);
			TCHECK(w->fail, r == 0, "invalidate_dir/rmdir: %d", r);
			uint64_t was = atomic_load(&dc_told[d]);
			while (was < e && !atomic_compare_exchange_weak(&dc_told[d], &was, e))
				;
		} else {
			udc_shrink(w->c, SIZE_MAX);   /* every idle directory goes */
		}
	}
	return NULL;
}

Test(bounds, no_stale_answer_while_directories_are_freed, .timeout = 300)
{
	uint64_t seed = test_seed("bounds/no_stale_answer_while_directories_are_freed");

	for (int thread = 0; thread < 2; thread++) {
		udc_cache *c = bd_create(&dc_backend, thread);
		struct dc_worker w[DC_THREADS];
		pthread_t th[DC_THREADS];
		struct tfail fail;

		tfail_init(&fail);
		for (unsigned t = 0; t < DC_THREADS; t++) {
			w[t] = (struct dc_worker){ .c = c, .id = t, .seed = seed + t, .fail = &fail };
			cr_assert_eq(pthread_create(&th[t], NULL, dc_run, &w[t]), 0);
		}
		for (unsigned t = 0; t < DC_THREADS; t++)
			pthread_join(th[t], NULL);
		tfail_assert_none(&fail);
		cr_assert_eq(tc_engine_check_quiet(c), 0);
		udc_shrink(c, SIZE_MAX);
		struct udc_stats st = tc_stats(c);
		uint64_t entries = st.nr_positive + st.nr_negative;
		fprintf(stderr, "directories freed under pins (thread %d): %llu stale answers; "
				"after udc_shrink %llu dirs, %llu entries\n",
			thread, (unsigned long long)st.stale_answers, (unsigned long long)st.nr_dirs,
			(unsigned long long)entries);
		/* Every idle directory went; with the thread, entries it moved
		 * meanwhile may stay (in its open pages), and their dirs. */
		cr_assert_leq(st.nr_dirs, thread ? entries : 0, "%llu directories survived",
			      (unsigned long long)st.nr_dirs);
		cr_assert_eq(tc_engine_check_quiet(c), 0);
		udc_destroy(c);
	}
}

/*
 * Removals free their entries after a grace period.  Through liburcu's
 * call_rcu thread (which waits 10 ms between batches) a client creating
 * and removing names fast kept thousands in flight, all counted in
 * bytes_used, and reclaim evicted live entries to make room for them: a
 * hot set that fits (a fifth of the limit), looked up every round while
 * one client churns, missed 57,000 of its 60,000 lookups (53-76 k
 * evictions; 53-55 k with values; on the machine of BENCHMARKS.md, issue
 * 14, stop 25).  Near the limit the calls now land their frees themselves
 * (slab_set_landing, and the engine's batches of entries with parts
 * apart), and an eviction waits for the frees already in flight when they
 * cover it (with values, then apart, landing alone still missed
 * 3,000-54,000).
 * @value: the churned names carry a value (in the entry since issue 16's
 * stop 31: the larger slots); @apart: they are too long to be inline (an
 * entry with a part apart, freed in the engine's own batches).
 */
static void churn_of_removals(bool value, bool apart)
{
	enum { HOT = 3000, ROUNDS = 20, CHURN = 20000 };
	udc_cache *c = tc_create_limit(TC_ROOT, &enoent_backend, UDC_CFG_NO_RECLAIM_THREAD,
				       (size_t)1 << 20);
	char nm[96];
	unsigned missed = 0;

	for (unsigned i = 0; i < HOT; i++) {
		int len = snprintf(nm, sizeof(nm), "hot-%06u", i);
		struct udc_attr a = tc_attr(10000 + i, UDC_TYPE_REG, 0);
		cr_assert_eq(udc_add(c, 100 + i % 16, nm, (size_t)len, &a), 0);
	}
	struct udc_stats st = tc_stats(c);
	cr_assert_lt(st.bytes_used, st.bytes_limit / 2, "the hot set must fit: %llu bytes",
		     (unsigned long long)st.bytes_used);
	for (unsigned r = 0; r < ROUNDS; r++) {
		for (unsigned i = 0; i < HOT; i++) {   /* the hot set, hit every round */
			int len = snprintf(nm, sizeof(nm), "hot-%06u", i);
			missed += udc_lookup(c, 100 + i % 16, nm, (size_t)len, NULL) != UDC_POSITIVE;
		}
		for (unsigned i = 0; i < CHURN; i++) {   /* created and removed at once */
			int len = snprintf(nm, sizeof(nm), apart ? "tmp-%02u-%06u-%070u" : "tmp-%02u-%06u",
					   r, i, 0u);
			struct udc_attr a = tc_attr(1000000 + i, UDC_TYPE_REG, 0);
			cr_assert_eq(value ? udc_add_value(c, 200 + i % 16, nm, (size_t)len, &a, nm,
							   (size_t)len, 0)
					   : udc_add(c, 200 + i % 16, nm, (size_t)len, &a),
				     0);
			cr_assert_eq(udc_remove(c, 200 + i % 16, nm, (size_t)len), 0);
		}
	}
	st = tc_stats(c);
	fprintf(stderr, "a churn of removals at 1 MiB%s%s: %u hot lookups missed, %llu evictions\n",
		value ? ", with values" : "", apart ? ", names apart" : "", missed,
		(unsigned long long)st.evictions);
	cr_assert_eq(missed, 0, "%u of %u lookups of a hot set that fits missed (%llu evictions)",
		     missed, HOT * ROUNDS, (unsigned long long)st.evictions);
	cr_assert_leq(st.bytes_used, st.bytes_limit + st.bytes_slack);
	udc_destroy(c);
}

Test(bounds, a_churn_of_removals_does_not_evict_for_its_frees, .timeout = 300)
{
	churn_of_removals(false, false);
}

Test(bounds, a_churn_of_removals_with_values_does_not_evict_for_its_frees, .timeout = 300)
{
	churn_of_removals(true, false);
}

Test(bounds, a_churn_of_removals_with_names_apart_does_not_evict_for_its_frees, .timeout = 300)
{
	churn_of_removals(false, true);
}

/*
 * A cache made with 64 MiB and set to its least limit (bytes_min), then
 * given positives with values of up to UDC_VALUE_MAX bytes: the bound holds
 * after every call.  Until bytes_min counted the open pages of the value
 * classes (issue 16's stop 31, found by review), it left them out, and the
 * cache went past limit + slack and evicted every entry for them.
 */
Test(bounds, values_at_the_least_limit_stay_within_the_bound, .timeout = 120)
{
	udc_cache *c = tc_create_limit(TC_ROOT, NULL, UDC_CFG_NO_RECLAIM_THREAD, (size_t)64 << 20);
	struct udc_stats st = tc_stats(c);
	unsigned char v[UDC_VALUE_MAX];
	static const size_t vlens[] = { 100, 200, UDC_VALUE_MAX };
	char nm[32];

	memset(v, 0x5a, sizeof(v));
	cr_assert_eq(udc_set_memory_limit(c, (size_t)st.bytes_min), 0);
	for (unsigned i = 0; i < 60000; i++) {
		int len = snprintf(nm, sizeof(nm), "v-%u", i);
		struct udc_attr a = tc_attr(1000 + i, UDC_TYPE_REG, 0);
		cr_assert_eq(udc_add_value(c, 100 + i % 32, nm, (size_t)len, &a, v, vlens[i % 3], 0), 0);
		udc_lookup(c, 100 + i % 32, nm, (size_t)len, NULL);
		st = tc_stats(c);
		cr_assert_leq(st.bytes_used, st.bytes_limit + st.bytes_slack,
			      "add #%u: bytes_used %llu past limit %llu + slack %llu", i,
			      (unsigned long long)st.bytes_used, (unsigned long long)st.bytes_limit,
			      (unsigned long long)st.bytes_slack);
	}
	cr_assert_gt(st.evictions, 0, "the limit never bound");
	udc_destroy(c);
}

/*
 * A limit lowered far below the one the cache was made with: the spare
 * pages were sized for the old one (1/128 of it a slab: 64 pages of 16
 * KiB at 64 MiB), and the pages that eviction empties went to them while
 * pages were being made lately, so bytes_used stayed past limit + slack
 * after the throttled call had evicted all it could (the ASan CI run of
 * values_at_the_least_limit_stay_within_the_bound, once: add #9451, 120 KB
 * past the limit).  Spare pages go back before answers do.
 */
Test(bounds, a_lowered_limit_takes_the_spare_pages_back, .timeout = 120)
{
	udc_cache *c = tc_create_limit(TC_ROOT, NULL, UDC_CFG_NO_RECLAIM_THREAD, (size_t)64 << 20);
	struct udc_stats st = tc_stats(c);
	size_t least = (size_t)st.bytes_min;
	char nm[32];

	for (unsigned round = 0; round < 4; round++) {
		cr_assert_eq(udc_set_memory_limit(c, (size_t)64 << 20), 0);
		for (unsigned i = 0; i < 40000; i++) {
			int len = snprintf(nm, sizeof(nm), "s-%u-%u", round, i);
			struct udc_attr a = tc_attr(1000 + i, UDC_TYPE_REG, 0);
			cr_assert_eq(udc_add(c, 100 + i % 32, nm, (size_t)len, &a), 0);
		}
		cr_assert_eq(udc_set_memory_limit(c, least), 0);
		st = tc_stats(c);
		cr_assert_leq(st.bytes_used, st.bytes_limit + st.bytes_slack,
			      "round %u: bytes_used %llu past limit %llu + slack %llu", round,
			      (unsigned long long)st.bytes_used, (unsigned long long)st.bytes_limit,
			      (unsigned long long)st.bytes_slack);
	}
	udc_destroy(c);
}

/* The spare pages the positives' slab holds now, with their frees landed. */
static uint64_t spare_pages_landed(udc_cache *c)
{
	struct slab *s = cache_slab(c, ENT_POSITIVE);
	struct slab_stats ss;

	slab_rcu_barrier(s);
	slab_stats(s, &ss);
	return ss.retained_pages;
}

/*
 * A churn far under its limit keeps the pages its removals empty for its
 * next names, up to an 8th of the limit a slab (and 64 pages without the
 * thread), not a 32nd (at 16 MiB with the thread, 32 pages of 16 KiB: a
 * churn's grace period empties more, and the rest went to the OS to be
 * faulted in again, 12,600 madvise calls in a 3 s churn: issue 16, stop
 * 46).  Once bytes_used passes 3/4 of the limit, the spare pages past a
 * 32nd go back at once: there they would take entries' room.
 */
Test(bounds, a_churn_with_room_keeps_its_spare_pages_until_the_room_goes, .timeout = 120)
{
	enum { NAMES = 6000 };   /* about 600 KB of pages */
	const size_t limit = (size_t)4 << 20;
	udc_cache *c = tc_create_limit(TC_ROOT, NULL, UDC_CFG_NO_RECLAIM_THREAD, limit);
	size_t page = slab_page_size(cache_slab(c, ENT_POSITIVE));
	size_t tight = limit / 32 / page;   /* 32 pages of 4 KiB (the smallest page) */
	char nm[32];

	cr_assert_leq(tight, 32, "the precondition: a 32nd of the limit is %zu pages of %zu",
		      tight, page);
	for (unsigned i = 0; i < NAMES; i++) {
		int len = snprintf(nm, sizeof(nm), "churn-%u", i);
		struct udc_attr a = tc_attr(1000 + i, UDC_TYPE_REG, 0);
		cr_assert_eq(udc_add(c, 100 + i % 32, nm, (size_t)len, &a), 0);
	}
	for (unsigned i = 0; i < NAMES; i++) {
		int len = snprintf(nm, sizeof(nm), "churn-%u", i);
		cr_assert_eq(udc_invalidate(c, 100 + i % 32, nm, (size_t)len), 0);
	}
	uint64_t kept = spare_pages_landed(c);
	cr_assert_gt(kept, tight, "%llu spare pages kept with room, a 32nd of the limit is %zu",
		     (unsigned long long)kept, tight);
	/* Negatives (the other slab) past 3/4 of the limit. */
	struct udc_stats st = tc_stats(c);
	for (unsigned i = 0; st.bytes_used <= limit / 4 * 3; i++) {
		int len = snprintf(nm, sizeof(nm), "absent-%u", i);
		cr_assert_eq(udc_add_negative(c, 200 + i % 64, nm, (size_t)len, 0), 0);
		st = tc_stats(c);
	}
	uint64_t left = spare_pages_landed(c);
	cr_assert_leq(left, tight, "%llu spare pages kept past 3/4 of the limit (of %llu)",
		      (unsigned long long)left, (unsigned long long)kept);
	udc_destroy(c);
}

/*
 * The calls that make only directory objects keep the bound too: a ".."
 * recorded (udc_add), asked of the backend (udc_resolve), and the fill
 * protocol's begin (with its complete), each over 20,000 directories at
 * the least limit without the thread.  Until issue 14's stop 41 none of them ran the
 * bound (shrink_after_call), and bytes_used grew past limit + slack by
 * the 463rd ".." recorded (2.5 MB at the 20,000th), the 384th asked and
 * the 245th fill (4.7 MB),
 * and stayed there while the cache idled (found by an audit of the
 * header's promises: "bytes_used <= bytes_limit + bytes_slack at every
 * moment").
 */
enum dir_call { DC_DOTDOT_ADD, DC_DOTDOT_RESOLVE, DC_FILL };

static int dotdot_backend_lookup(void *ctx, udc_ino dir, const char *name, size_t len,
				 struct udc_attr *out)
{
	(void)ctx, (void)dir;
	if (len != 2 || memcmp(name, "..", 2) != 0)
		return -ENOENT;
	*out = tc_attr(7, UDC_TYPE_DIR, 1);
	return 0;
}

static const struct udc_backend dotdot_backend = { .lookup = dotdot_backend_lookup };

static void directory_calls_keep_the_bound(enum dir_call how)
{
	udc_cache *c = tc_create_limit(TC_ROOT, &dotdot_backend, UDC_CFG_NO_RECLAIM_THREAD,
				       UDC_MEMORY_MIN);
	struct udc_call call = { .client = 1 };
	unsigned completed = 0;

	for (unsigned i = 0; i < 20000; i++) {
		udc_ino dir = 100 + i;
		struct udc_attr a, parent = tc_attr(7, UDC_TYPE_DIR, 1);
		struct udc_fill f;
		switch (how) {
		case DC_DOTDOT_ADD:
			cr_assert_eq(udc_add(c, dir, "..", 2, &parent), 0);
			break;
		case DC_DOTDOT_RESOLVE:
			cr_assert_eq(udc_resolve(c, dir, "..", 2, &call, &a), 0);
			cr_assert_eq(a.ino, 7);
			break;
		case DC_FILL:
			cr_assert_eq(udc_dir_fill_begin(c, dir, &f), 0);
			int r = udc_dir_complete(c, dir, &f);
			cr_assert(r == 0 || r == -ESTALE, "udc_dir_complete: %d", r);
			completed += r == 0;
			break;
		}
		struct udc_stats st = tc_stats(c);
		cr_assert_leq(st.bytes_used, st.bytes_limit + st.bytes_slack,
			      "call %d #%u: bytes_used %llu past limit %llu + slack %llu, %llu dirs", (int)how,
			      i, (unsigned long long)st.bytes_used, (unsigned long long)st.bytes_limit,
			      (unsigned long long)st.bytes_slack, (unsigned long long)st.nr_dirs);
	}
	struct udc_stats st = tc_stats(c);
	fprintf(stderr, "directory-only calls (%d) at the least limit: bytes_used %llu, %llu dirs, "
			"%u of 20000 fills completed\n",
		(int)how, (unsigned long long)st.bytes_used, (unsigned long long)st.nr_dirs, completed);
	/* The bound reaps idle objects in batches, oldest first: at this
	 * limit (about 125 objects) a batch now and then takes them all, the
	 * one whose fill just began too, and its completion is -ESTALE (146
	 * of the 20,000 in the run that set this bar; none before the bound
	 * ran in these calls, at 4.7 MB). */
	if (how == DC_FILL)
		cr_assert_geq(completed, 19000, "%u of 20000 fills completed", completed);
	udc_destroy(c);
}

Test(bounds, recording_parents_keeps_the_bound, .timeout = 120)
{
	directory_calls_keep_the_bound(DC_DOTDOT_ADD);
}

Test(bounds, asking_parents_keeps_the_bound, .timeout = 120)
{
	directory_calls_keep_the_bound(DC_DOTDOT_RESOLVE);
}

Test(bounds, fills_of_many_directories_keep_the_bound, .timeout = 120)
{
	directory_calls_keep_the_bound(DC_FILL);
}
