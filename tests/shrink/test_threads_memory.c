/*
 * tests/shrink/test_threads_memory.c - issue 13's targets: memory follows
 * the limit with many threads, at small limits, and back to the OS.
 *
 * A storage server runs hundreds of threads, sets a memory limit and
 * expects RSS to follow the cache.  These tests state what it expects:
 *
 *  (a) parked_threads: 512 threads each add a few names in a directory of
 *      their own and block; one thread then trickles unique names.
 *      bytes_used <= limit + slack (exactly: no extra MiB, no page per
 *      thread) after every call of every thread, in a sampler thread all
 *      along, and at the end.
 *  (b) small_limit_*: threads trickle unique negatives and positives at a
 *      2 MiB and a 256 KiB limit, with and without the reclaim thread:
 *      every answer agrees with the model (a name added positive is never
 *      answered negative, an absent one never positive; small_limit_answers_*,
 *      2 threads) and, with 16 threads, bytes_used <= limit + slack
 *      after every call of every thread (small_limit_bound_*).
 *  (d) every_call_*: 32 or 64 threads at the least limit (and 1 MiB), each
 *      call one of every kind that allocates: udc_add, udc_add_value with
 *      a value of 0-256 bytes, udc_add_negative with a client, udc_resolve
 *      through a backend giving values, directories with their ".." and a
 *      name, one name in eight apart (long); a sampler thread all along
 *      and every thread after every call: bytes_used <= limit + slack
 *      exactly.  The calls in flight at once each opened a page past it
 *      before every charge was checked as it was made: 4 runs of 9 went
 *      past, by up to 24 KB, at the least limit.
 *  (c) rss_follows_the_cache(_with_the_thread): 1 M negatives inserted,
 *      90% removed, the thread idle (udc_thread_offline) up to 2 s: the RSS
 *      growth retained, (RSS now - RSS before) / (RSS after inserting - RSS
 *      before), <= 25%; without the reclaim thread and with it (its spare
 *      pages, up to 32 MiB here, go back a second after the demand stops).
 *
 * (a), (c) and (b)'s bound FAIL on the code before issue 13's slab
 * changes.  (a) takes 80 s here (512 threads on 2 cores): it is skipped
 * unless enabled:
 * build with -DUDC_TARGET_TESTS=ON (the executable is then compiled with
 * UDC_TARGET_TESTS=1) or run with the environment variable
 * UDC_TARGET_TESTS=1; udc-stress's threads workload measures (a) in CI's
 * smoke runs.  (b) and (c) always run.
 *
 * Nothing here depends on timing: the bounds are checked after calls, the
 * sampler only adds samples, and (c) polls for at most 2 s but passes as
 * soon as RSS is down (a slow machine only makes it wait longer).
 *
 * Threads record failures (tfail) and the main thread asserts.
 */
#include <criterion/criterion.h>
#include <errno.h>
#include <inttypes.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "common/model.h"
#include "common/prng.h"
#include "common/tcache.h"
#include "engine/internal.h"   /* cache_slab: the pages in progress */
#include "slab/slab.h"

#ifndef UDC_TARGET_TESTS
#define UDC_TARGET_TESTS 0
#endif

#if defined(__SANITIZE_ADDRESS__) || defined(__SANITIZE_THREAD__)
#define TM_SANITIZER 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer) || __has_feature(thread_sanitizer)
#define TM_SANITIZER 1
#endif
#endif

/* The bound the cache states: bytes_limit + bytes_slack (udcache.h). */
static uint64_t tm_bound(udc_cache *c)
{
	struct udc_stats st = { .size = sizeof(st) };

	udc_stats_get(c, &st);
	return st.bytes_limit + st.bytes_slack;
}

/* Whether the targets are on: built with them, or UDC_TARGET_TESTS=1 in the environment. */
static bool targets_on(void)
{
	const char *e = getenv("UDC_TARGET_TESTS");

	return UDC_TARGET_TESTS || (e && strcmp(e, "1") == 0);
}

#define TARGET_GATE(what)                                                                      \
	do {                                                                                   \
		if (!targets_on())                                                             \
			cr_skip_test("issue 13 target (%s), expected to fail before the slab " \
				     "changes: enable with -DUDC_TARGET_TESTS=ON or "          \
				     "UDC_TARGET_TESTS=1",                                     \
				     what);                                                    \
	} while (0)

static udc_cache *tm_create(size_t limit, const struct udc_backend *be, bool reclaim_thread)
{
	struct udc_config cfg = UDC_CONFIG_INIT;
	udc_cache *c;

	cfg.memory_limit = limit;
	cfg.root = TC_ROOT;
	cfg.backend = be;
	cfg.flags = reclaim_thread ? 0 : UDC_CFG_NO_RECLAIM_THREAD;
	c = udc_create(&cfg);
	cr_assert_not_null(c, "udc_create: errno %d", errno);
	return c;
}

static uint64_t tm_bytes(udc_cache *c)
{
	return tc_stats(c).bytes_used;
}

/* The highest bytes_used seen, kept with a CAS. */
static void tm_max(_Atomic uint64_t *max, uint64_t v)
{
	uint64_t cur = atomic_load_explicit(max, memory_order_relaxed);

	while (v > cur && !atomic_compare_exchange_weak_explicit(max, &cur, v, memory_order_relaxed,
								 memory_order_relaxed))
		;
}

/* ---------------------------------------------------------------------- */
/* (a) 512 parked threads at 16 MiB */

#define PARK_THREADS 512
#define PARK_NAMES 4 /* per thread: two positives, two negatives */
#define PARK_LIMIT ((size_t)16 << 20)
#define PARK_TRICKLE 400000 /* the working thread's unique names: past the limit */
#define PARK_DIR_BASE ((udc_ino)0x100000)
#define PARK_TRICKLE_DIRS 64

/* The backend of (a): nothing exists (the working thread's names are misses). */
static int tm_enoent(void *ctx, udc_ino dir, const char *name, size_t len, struct udc_attr *out)
{
	(void)ctx, (void)dir, (void)name, (void)len, (void)out;
	return -ENOENT;
}

static const struct udc_backend tm_enoent_backend = { .lookup = tm_enoent };

struct park_shared {
	udc_cache *c;
	uint64_t bound;
	struct tfail *fail;
	_Atomic uint64_t max_bytes;
	_Atomic uint64_t over; /* checks that saw bytes_used past the bound */
	pthread_mutex_t lock;
	pthread_cond_t cond;
	unsigned ready;
	bool released;
	atomic_bool stop_sampler;
	uint64_t samples; /* the sampler's */
};

struct park_thread {
	struct park_shared *sh;
	unsigned id;
};

static void park_check(struct park_shared *sh, const char *who, unsigned id, unsigned call)
{
	uint64_t b = tm_bytes(sh->c);

	tm_max(&sh->max_bytes, b);
	/* The first one is recorded; the count is asserted at the end. */
	if (b > sh->bound && atomic_fetch_add_explicit(&sh->over, 1, memory_order_relaxed) == 0)
		tfail_rec(sh->fail,
			  "%s %u call %u: bytes_used %" PRIu64 " > limit + slack %" PRIu64, who, id,
			  call, b, sh->bound);
}

static void *park_main(void *arg)
{
	struct park_thread *t = arg;
	struct park_shared *sh = t->sh;
	udc_ino dir = PARK_DIR_BASE + t->id;
	char nm[32];

	/* Once the bound is broken the test has failed: the calls left are
	 * skipped (before issue 13 each one past the limit stalls ~65 ms). */
	for (unsigned i = 0; i < PARK_NAMES && !atomic_load(&sh->over); i++) {
		int len = snprintf(nm, sizeof(nm), "%c%u-%u", i % 2 ? 'n' : 'p', t->id, i);
		int rc;

		if (i % 2) {
			rc = udc_add_negative(sh->c, dir, nm, (size_t)len, 0);
		} else {
			struct udc_attr a =
				tc_attr(1000000 + t->id * PARK_NAMES + i, UDC_TYPE_REG, 0);

			rc = udc_add(sh->c, dir, nm, (size_t)len, &a);
		}
		TCHECK(sh->fail, rc == 0, "parked %u: add %s: %d", t->id, nm, rc);
		park_check(sh, "parked", t->id, i);
	}
	pthread_mutex_lock(&sh->lock);
	sh->ready++;
	pthread_cond_broadcast(&sh->cond);
	while (!sh->released)
		pthread_cond_wait(&sh->cond, &sh->lock);
	pthread_mutex_unlock(&sh->lock);
	return NULL;
}

static void *park_sampler(void *arg)
{
	struct park_shared *sh = arg;
	const struct timespec pause = { .tv_sec = 0, .tv_nsec = 200000 };

	while (!atomic_load_explicit(&sh->stop_sampler, memory_order_relaxed)) {
		park_check(sh, "sampler", 0, (unsigned)sh->samples++);
		nanosleep(&pause, NULL);
	}
	return NULL;
}

/*
 * (a).  Fails before issue 13's slab changes: each thread owns an open slab
 * page per class that reclaim cannot reach (512 threads: far past 16 MiB,
 * and each call past the limit then waits for frees under the reclaim lock:
 * the calls stop at the first check past the bound, so that it fails in
 * seconds, not hours).  Passes with per-CPU open pages instead of
 * per-thread ones (the slab part of issue 13).
 */
Test(threads_memory, parked_threads, .timeout = 900)
{
	static struct park_thread t[PARK_THREADS];
	static pthread_t th[PARK_THREADS];
	struct park_shared sh = { .bound = 0 };
	struct udc_call call = { .client = 0 };
	struct tfail fail;
	pthread_attr_t attr;
	pthread_t sampler;
	char nm[48];

	TARGET_GATE("(a) 512 parked threads within limit + slack");
	tfail_init(&fail);
	sh.fail = &fail;
	sh.c = tm_create(PARK_LIMIT, &tm_enoent_backend, true);
	sh.bound = tm_bound(sh.c);
	pthread_mutex_init(&sh.lock, NULL);
	pthread_cond_init(&sh.cond, NULL);
	atomic_init(&sh.max_bytes, 0);
	atomic_init(&sh.over, 0);
	atomic_init(&sh.stop_sampler, false);
	cr_assert_eq(pthread_create(&sampler, NULL, park_sampler, &sh), 0);

	pthread_attr_init(&attr);
	pthread_attr_setstacksize(&attr, (size_t)128 << 10);
	for (unsigned i = 0; i < PARK_THREADS; i++) {
		t[i] = (struct park_thread){ .sh = &sh, .id = i };
		cr_assert_eq(pthread_create(&th[i], &attr, park_main, &t[i]), 0);
	}
	pthread_attr_destroy(&attr);
	pthread_mutex_lock(&sh.lock);
	while (sh.ready < PARK_THREADS)
		pthread_cond_wait(&sh.cond, &sh.lock);
	pthread_mutex_unlock(&sh.lock);

	/* The working thread (this one) trickles while the others are parked. */
	for (unsigned i = 0; i < PARK_TRICKLE && !atomic_load(&sh.over); i++) {
		int len = snprintf(nm, sizeof(nm), "w-%u", i);
		int rc = udc_resolve(sh.c, 100 + i % PARK_TRICKLE_DIRS, nm, (size_t)len, &call,
				     NULL);

		TCHECK(&fail, rc == -ENOENT, "working call %u: %d", i, rc);
		park_check(&sh, "working", 0, i);
	}
	park_check(&sh, "end", 0, 0);

	pthread_mutex_lock(&sh.lock);
	sh.released = true;
	pthread_cond_broadcast(&sh.cond);
	pthread_mutex_unlock(&sh.lock);
	for (unsigned i = 0; i < PARK_THREADS; i++)
		pthread_join(th[i], NULL);
	atomic_store(&sh.stop_sampler, true);
	pthread_join(sampler, NULL);
	fprintf(stderr,
		"parked_threads: bytes_used max %" PRIu64 " (%.3f x limit), bound %" PRIu64
		", end %" PRIu64 ", %" PRIu64 " sampler samples, %" PRIu64
		" checks past the bound\n",
		atomic_load(&sh.max_bytes), (double)atomic_load(&sh.max_bytes) / PARK_LIMIT,
		sh.bound, tm_bytes(sh.c), sh.samples, atomic_load(&sh.over));
	udc_destroy(sh.c);
	pthread_mutex_destroy(&sh.lock);
	pthread_cond_destroy(&sh.cond);
	cr_expect_eq(atomic_load(&sh.over), 0,
		     "%" PRIu64 " checks saw bytes_used past limit + slack", atomic_load(&sh.over));
	tfail_assert_none(&fail);
}

/* ---------------------------------------------------------------------- */
/* (b) small limits: the bound at every call, every answer against the model */

#define SMALL_ANSWER_THREADS 2 /* the answers (always on) */
#define SMALL_ANSWER_CALLS 10000
#define SMALL_BOUND_THREADS 16 /* the bound (a target): a server's many threads */
#define SMALL_BOUND_CALLS 4000
#define SMALL_MAX_THREADS 16
#define SMALL_MAX_CALLS 10000 /* the largest of the two: names' inos are spaced by it */
#define SMALL_DIRS 16

struct small_shared {
	udc_cache *c;
	struct model *m;
	uint64_t bound;
	struct tfail *fail;
	_Atomic uint64_t max_bytes;
	_Atomic uint64_t over; /* calls after which bytes_used was past the bound */
	bool stop_over;	       /* the bound is asserted: stop at the first call past it */
};

struct small_thread {
	struct small_shared *sh;
	unsigned id, calls;
	uint64_t rng;
};

static uint64_t small_rand(uint64_t *s)
{
	uint64_t x = *s;

	x ^= x >> 12;
	x ^= x << 25;
	x ^= x >> 27;
	*s = x;
	return x * UINT64_C(0x2545f4914f6cdd1d);
}

/* Name i of thread id: positive ("p") when i % 3 == 0, else absent ("n"). */
static int small_name(char *buf, size_t size, unsigned id, unsigned i)
{
	return snprintf(buf, size, "%c%u-%u", i % 3 == 0 ? 'p' : 'n', id, i);
}

static udc_ino small_dir(unsigned i)
{
	return 100 + i % SMALL_DIRS;
}

static udc_ino small_ino(unsigned id, unsigned i)
{
	return 10000000 + (udc_ino)id * SMALL_MAX_CALLS + i;
}

static void small_bound(struct small_shared *sh, unsigned id, unsigned i)
{
	uint64_t b = tm_bytes(sh->c);

	tm_max(&sh->max_bytes, b);
	if (b > sh->bound)
		atomic_fetch_add_explicit(&sh->over, 1, memory_order_relaxed);
	(void)id, (void)i;
}

/* Check the answers for name j (already told to the cache or the store). */
static void small_check(struct small_shared *sh, struct small_thread *t, unsigned j)
{
	struct udc_call call = { .ctx = sh->m, .client = 0 };
	bool pos = j % 3 == 0;
	struct udc_attr a;
	char nm[32];
	int len = small_name(nm, sizeof(nm), t->id, j);
	int rc = udc_lookup(sh->c, small_dir(j), nm, (size_t)len, &a);

	if (pos)
		TCHECK(sh->fail,
		       rc == UDC_MISS || (rc == UDC_POSITIVE && a.ino == small_ino(t->id, j)),
		       "thread %u: lookup of positive %s: %s (ino %" PRIu64 ")", t->id, nm,
		       tc_res_str(rc), rc == UDC_POSITIVE ? (uint64_t)a.ino : 0);
	else
		TCHECK(sh->fail, rc == UDC_MISS || rc == UDC_NEGATIVE,
		       "thread %u: lookup of absent %s: %s", t->id, nm, tc_res_str(rc));
	rc = udc_resolve(sh->c, small_dir(j), nm, (size_t)len, &call, &a);
	if (pos)
		TCHECK(sh->fail, rc == 0 && a.ino == small_ino(t->id, j),
		       "thread %u: resolve of positive %s: %d", t->id, nm, rc);
	else
		TCHECK(sh->fail, rc == -ENOENT, "thread %u: resolve of absent %s: %d", t->id, nm,
		       rc);
}

static void *small_main(void *arg)
{
	struct small_thread *t = arg;
	struct small_shared *sh = t->sh;
	struct udc_call call = { .ctx = sh->m, .client = 0 };
	char nm[32];

	for (unsigned i = 0; i < t->calls; i++) {
		/* Once past the bound the test has failed: stop (before issue
		 * 13 every call there stalls). */
		if (sh->stop_over && atomic_load_explicit(&sh->over, memory_order_relaxed))
			break;
		int len = small_name(nm, sizeof(nm), t->id, i);
		int rc;

		if (i % 3 == 0) {
			/* A new file: the store first, then the cache is told. */
			struct udc_attr a = tc_attr(small_ino(t->id, i), UDC_TYPE_REG, 0);

			model_set(sh->m, small_dir(i), nm, (size_t)len, &a);
			rc = udc_add(sh->c, small_dir(i), nm, (size_t)len, &a);
			TCHECK(sh->fail, rc == 0, "thread %u: add %s: %d", t->id, nm, rc);
		} else {
			/* A unique miss: a negative, through the backend. */
			rc = udc_resolve(sh->c, small_dir(i), nm, (size_t)len, &call, NULL);
			TCHECK(sh->fail, rc == -ENOENT, "thread %u: resolve %s: %d", t->id, nm, rc);
		}
		small_bound(sh, t->id, i);
		/* This name again, and one of the earlier ones. */
		small_check(sh, t, i);
		small_check(sh, t, (unsigned)(small_rand(&t->rng) % (i + 1)));
		small_bound(sh, t->id, i);
	}
	return NULL;
}

/*
 * (b).  @threads threads of @calls calls each, with the reclaim thread off,
 * then on.  The answers are asserted always; the bound only when @bound
 * (and the targets are on), else logged.
 */
static void small_limit(size_t limit, unsigned threads, unsigned calls, bool bound)
{
	for (int thread = 0; thread < 2; thread++) {
		struct small_shared sh = { .bound = 0, .stop_over = bound };
		struct small_thread t[SMALL_MAX_THREADS];
		pthread_t th[SMALL_MAX_THREADS];
		struct tfail fail;
		uint64_t max, over;

		tfail_init(&fail);
		sh.fail = &fail;
		sh.m = model_new(TC_ROOT);
		sh.c = tm_create(limit, &model_backend, thread);
		sh.bound = tm_bound(sh.c);
		atomic_init(&sh.max_bytes, 0);
		atomic_init(&sh.over, 0);
		cr_assert_leq(threads, SMALL_MAX_THREADS);
		cr_assert_leq(calls, SMALL_MAX_CALLS);
		for (unsigned i = 0; i < threads; i++) {
			t[i] = (struct small_thread){ .sh = &sh,
						      .id = i,
						      .calls = calls,
						      .rng = 0x9e3779b97f4a7c15ull * (i + 1) +
							     limit };
			cr_assert_eq(pthread_create(&th[i], NULL, small_main, &t[i]), 0);
		}
		for (unsigned i = 0; i < threads; i++)
			pthread_join(th[i], NULL);
		small_bound(&sh, 0, 0);
		max = atomic_load(&sh.max_bytes);
		over = atomic_load(&sh.over);
		fprintf(stderr,
			"small_limit %zu, %u threads (reclaim thread %s): bytes_used max %" PRIu64
			" (%.3f x limit), bound %" PRIu64 ", %" PRIu64
			" samples past it, end %" PRIu64 "%s\n",
			limit, threads, thread ? "on" : "off", max, (double)max / (double)limit,
			sh.bound, over, tm_bytes(sh.c),
			over && !bound ? " (issue 13 target, not asserted here)" : "");
		udc_destroy(sh.c);
		model_free(sh.m);
		tfail_assert_none(&fail);
		if (bound)
			cr_expect_eq(over, 0,
				     "limit %zu, reclaim thread %s: bytes_used past limit + slack "
				     "(%" PRIu64 ") after %" PRIu64 " calls, max %" PRIu64,
				     limit, thread ? "on" : "off", sh.bound, over, max);
	}
}

/* (b), the answers: always on (the bound is logged).  Passes on the current code. */
Test(threads_memory, small_limit_answers_2m, .timeout = 300)
{
	small_limit((size_t)2 << 20, SMALL_ANSWER_THREADS, SMALL_ANSWER_CALLS, false);
}

Test(threads_memory, small_limit_answers_256k, .timeout = 300)
{
	small_limit((size_t)256 << 10, SMALL_ANSWER_THREADS, SMALL_ANSWER_CALLS, false);
}

/*
 * (b), the bound, with 16 threads: limit + slack exactly since every byte
 * is charged before it is allocated (engine/alloc.c, held_charge; until
 * then, the bound asserted here allowed an entry for each other thread's
 * call in progress and a page of each entry slab).  Failed before issue 13's slab
 * changes: every thread's open 64 KiB page per class counts, and reclaim
 * cannot reach it (16 threads: more than the 1 MiB slack); at 256 KiB every
 * call then throttles and waits for frees that cannot bring bytes_used
 * down (8 threads took over 600 s there): the threads stop at the first
 * call past the bound, so that it fails in seconds.  Failed after them
 * too, until promotions in flight and a call's eviction scaled with the
 * slack and every eviction pass landed its own frees (1.10 x the limit at
 * 2 MiB: a sweep's promotions, 128 KiB of copies before their old slots
 * went).  Answers are checked too.  About 5 s each here.
 * 2 MiB is on: it failed under ASan (up to 1.067 x the limit, the first
 * sweeps promoting every entry while 13 threads waited) until a sweep's
 * flush stopped locking the allocators' slots while its frees were held;
 * since, 1.020-1.023 x in 21 runs of 21 (ASan and release, some with two
 * busy loops beside).  256 KiB was gated until stop 22: its slack is 16
 * KiB, four of its 4 KiB pages, and the threads that had passed the
 * throttle check at half the slack opened pages between them: under ASan
 * with a busy loop beside, past the bound in 2 runs of 12, by up to 6.5
 * KB (1.095 x).  The throttle point now leaves room for a page per
 * probation class (shrink/reclaim.c, reclaim_over): 1.006-1.037 x in 12
 * runs of 12 in the same conditions.
 */
Test(threads_memory, small_limit_bound_2m, .timeout = 600)
{
	small_limit((size_t)2 << 20, SMALL_BOUND_THREADS, SMALL_BOUND_CALLS, true);
}

Test(threads_memory, small_limit_bound_256k, .timeout = 600)
{
	small_limit((size_t)256 << 10, SMALL_BOUND_THREADS, SMALL_BOUND_CALLS, true);
}

/* ---------------------------------------------------------------------- */
/* (d) every kind of call, in flight at once, at the least limit */

#define EVERY_MAX_THREADS 64
#define EVERY_DIRS 64
#define EVERY_VALUE 200 /* the backend's values (names starting 'V') */

struct every_shared {
	udc_cache *c;
	uint64_t bound;
	uint64_t seed;
	unsigned calls;
	bool parents;		 /* the calls of directories: "..", fills (every_parent_call) */
	struct tfail *fail;
	_Atomic uint64_t max_bytes;
	_Atomic uint64_t over;	 /* samples past the bound */
	_Atomic uint64_t enomem; /* calls that found no room (allowed, counted) */
	atomic_bool stop;
	uint64_t samples;
};

struct every_thread {
	struct every_shared *sh;
	unsigned id;
};

/* The backend: 'N...' does not exist, 'V...' exists with a value, the rest
 * exist without one; an ino from the name. */
static int every_lookup(void *ctx, udc_ino dir, const char *name, size_t len,
			struct udc_attr *out, void *value, size_t *value_len, uint32_t *ttl_ms)
{
	uint64_t h = dir;

	(void)ctx, (void)ttl_ms;
	if (name[0] == 'N')
		return -ENOENT;
	if (len == 2 && name[0] == '.' && name[1] == '.') {   /* every_parent_call's */
		*out = tc_attr(dir / 3 + 2, UDC_TYPE_DIR, 0);
		return 0;
	}
	for (size_t i = 0; i < len; i++)
		h = h * 131 + (unsigned char)name[i];
	*out = tc_attr(1000000 + h % 1000000000, UDC_TYPE_REG, 0);
	if (name[0] == 'V') {
		memset(value, 'v', EVERY_VALUE);
		*value_len = EVERY_VALUE;
	}
	return 0;
}

static const struct udc_backend every_backend = { .lookup_value = every_lookup };

static void every_check(struct every_shared *sh)
{
	uint64_t b = tm_bytes(sh->c);

	tm_max(&sh->max_bytes, b);
	if (b > sh->bound && atomic_fetch_add_explicit(&sh->over, 1, memory_order_relaxed) == 0)
		tfail_rec(sh->fail, "bytes_used %" PRIu64 " > limit + slack %" PRIu64, b, sh->bound);
}

/* One call of a random kind; 0, or -ENOENT from a resolve (of an 'N'
 * name, or of any name another thread's udc_add_negative told absent). */
static int every_call(struct every_shared *sh, struct prng *r)
{
	static const char pad[] = "-a-name-too-long-to-be-kept-in-its-entry-so-it-is-allocated-apart";
	static const unsigned char value[UDC_VALUE_MAX];
	uint64_t x = prng_next(r);
	udc_ino dir = 2 + x % EVERY_DIRS;
	const char *kind = (x >> 8) % 3 == 0 ? "V" : (x >> 8) % 3 == 1 ? "N" : "P";
	char nm[128];
	int len = snprintf(nm, sizeof(nm), "%s%u%s", kind, (unsigned)((x >> 12) % 100000),
			   (x >> 40) % 8 == 0 ? pad : "");
	struct udc_attr a = tc_attr(5000000 + (x >> 12) % 100000, UDC_TYPE_REG, 0);
	struct udc_call call = { .client = 1 + (uint32_t)(x >> 50) % 5 };

	switch ((x >> 4) % 6) {
	case 0:
		return udc_add(sh->c, dir, nm, (size_t)len, &a);
	case 1:
	case 2: {
		int rc = udc_resolve(sh->c, dir, nm, (size_t)len, &call, NULL);
		return rc == -ENOENT ? 0 : rc;
	}
	case 3:
		return udc_add_value(sh->c, dir, nm, (size_t)len, &a, value,
				     (size_t)((x >> 20) % (UDC_VALUE_MAX + 1)), 0);
	case 4:
		return udc_add_negative(sh->c, dir, nm, (size_t)len, call.client);
	default: {
		udc_ino sub = 100000 + (x >> 24) % EVERY_DIRS;
		struct udc_attr d = tc_attr(sub, UDC_TYPE_DIR, 0), p = tc_attr(dir, UDC_TYPE_DIR, 0);
		char dn[32];
		int dl = snprintf(dn, sizeof(dn), "d%" PRIu64, (uint64_t)sub);
		int rc = udc_add(sh->c, dir, dn, (size_t)dl, &d);

		if (!rc)
			rc = udc_add(sh->c, sub, "..", 2, &p);
		return rc ? rc : udc_add(sh->c, sub, nm, (size_t)len, &a);
	}
	}
}

/* One call of those that make directory objects, over 20,000 directories:
 * a ".." told or asked, a fill begun, a name added. */
static int every_parent_call(struct every_shared *sh, struct prng *r)
{
	uint64_t x = prng_next(r);
	udc_ino dir = 10 + x % 20000;
	struct udc_attr a, p = tc_attr(dir / 3 + 2, UDC_TYPE_DIR, 0);
	struct udc_call call = { .client = 0 };
	struct udc_fill f;
	char nm[16];
	int len;

	switch ((x >> 20) % 4) {
	case 0:
		return udc_add(sh->c, dir, "..", 2, &p);
	case 1:
		return udc_resolve(sh->c, dir, "..", 2, &call, &a);
	case 2:
		return udc_dir_fill_begin(sh->c, dir, &f);
	default:
		len = snprintf(nm, sizeof(nm), "f%u", (unsigned)(x >> 32) % 100);
		a = tc_attr(1000000 + (x >> 32), UDC_TYPE_REG, 0);
		return udc_add(sh->c, dir, nm, (size_t)len, &a);
	}
}

static void *every_main(void *arg)
{
	struct every_thread *t = arg;
	struct every_shared *sh = t->sh;
	struct prng r;

	prng_init(&r, sh->seed + t->id);
	for (unsigned i = 0; i < sh->calls && !atomic_load(&sh->over); i++) {
		int rc = sh->parents ? every_parent_call(sh, &r) : every_call(sh, &r);

		if (rc == -ENOMEM)
			atomic_fetch_add_explicit(&sh->enomem, 1, memory_order_relaxed);
		else
			TCHECK(sh->fail, rc == 0, "thread %u call %u: %d", t->id, i, rc);
		every_check(sh);
	}
	return NULL;
}

static void *every_sampler(void *arg)
{
	struct every_shared *sh = arg;

	while (!atomic_load_explicit(&sh->stop, memory_order_relaxed)) {
		every_check(sh);
		sh->samples++;
	}
	return NULL;
}

static void every_call_bound(const char *what, size_t limit, unsigned threads, unsigned calls,
			     bool reclaim_thread, bool parents)
{
	struct every_shared sh = { .calls = calls, .parents = parents };
	struct every_thread t[EVERY_MAX_THREADS];
	pthread_t th[EVERY_MAX_THREADS], sampler;
	struct tfail fail;

	cr_assert_leq(threads, EVERY_MAX_THREADS);
	tfail_init(&fail);
	sh.fail = &fail;
	sh.seed = test_seed(what);
	sh.c = tm_create(limit, &every_backend, reclaim_thread);
	sh.bound = tm_bound(sh.c);
	atomic_init(&sh.max_bytes, 0);
	atomic_init(&sh.over, 0);
	atomic_init(&sh.enomem, 0);
	atomic_init(&sh.stop, false);
	cr_assert_eq(pthread_create(&sampler, NULL, every_sampler, &sh), 0);
	for (unsigned i = 0; i < threads; i++) {
		t[i] = (struct every_thread){ .sh = &sh, .id = i };
		cr_assert_eq(pthread_create(&th[i], NULL, every_main, &t[i]), 0);
	}
	for (unsigned i = 0; i < threads; i++)
		pthread_join(th[i], NULL);
	atomic_store(&sh.stop, true);
	pthread_join(sampler, NULL);
	every_check(&sh);
	fprintf(stderr,
		"%s: %u threads x %u calls at %zu (reclaim thread %s): bytes_used max %" PRIu64
		", bound %" PRIu64 ", %" PRIu64 " samples, %" PRIu64 " past it; %" PRIu64
		" calls found no room (-ENOMEM)\n",
		what, threads, calls, limit, reclaim_thread ? "on" : "off",
		atomic_load(&sh.max_bytes), sh.bound, sh.samples, atomic_load(&sh.over),
		atomic_load(&sh.enomem));
	udc_destroy(sh.c);
	tfail_assert_none(&fail);
	/* Reclaim can make a call's room whenever the cache holds anything it
	 * can give back: with 64 threads at the least limit, adds failed with
	 * -ENOMEM while the cache held no entry, reclaim keeping the
	 * directory slab's spare pages (16 KiB, the whole slack). */
	cr_expect_eq(atomic_load(&sh.enomem), 0, "%" PRIu64 " calls found no room",
		     atomic_load(&sh.enomem));
}

Test(threads_memory, every_call_at_the_least_limit, .timeout = 600)
{
	every_call_bound("every_call_at_the_least_limit", UDC_MEMORY_MIN, 32, 80, true, false);
}

Test(threads_memory, every_call_at_the_least_limit_without_the_thread, .timeout = 600)
{
	every_call_bound("every_call_at_the_least_limit_without_the_thread", UDC_MEMORY_MIN, 32, 80,
			 false, false);
}

Test(threads_memory, every_call_at_1m, .timeout = 600)
{
	every_call_bound("every_call_at_1m", (size_t)1 << 20, 64, 500, false, false);
}

/* 64 threads making directory objects at the least limit: the bound, and
 * room for every call (-ENOMEM in 2 runs of 3 before the directory slab's
 * spare pages went to the calls that waited for room). */
Test(threads_memory, directory_calls_of_64_threads_at_the_least_limit, .timeout = 600)
{
	every_call_bound("directory_calls_of_64_threads_at_the_least_limit", UDC_MEMORY_MIN, 64, 400,
			 false, true);
}

/* ---------------------------------------------------------------------- */
/* (c) RSS follows the cache */

#define RSS_NAMES 1000000
#define RSS_DIRS 1000 /* 1,000 names each: well within a directory's bound (4096 + 8 x positives) */
#define RSS_REMOVE_PCT 90
#define RSS_RETAINED_PCT 25
#define RSS_IDLE_POLLS 20 /* every 100 ms: 2 s at most */

#ifndef TM_SANITIZER /* the RSS test is skipped there */
static uint64_t tm_rss(void)
{
	unsigned long size, resident;
	FILE *f = fopen("/proc/self/statm", "r");
	int n;

	cr_assert_not_null(f, "/proc/self/statm: errno %d", errno);
	n = fscanf(f, "%lu %lu", &size, &resident);
	fclose(f);
	cr_assert_eq(n, 2, "/proc/self/statm: unexpected contents");
	return (uint64_t)resident * (uint64_t)sysconf(_SC_PAGESIZE);
}

static int rss_name(char *buf, size_t size, unsigned i)
{
	return snprintf(buf, size, "f%x________________________", i); /* 24+ bytes, as frag's */
}
#endif

/*
 * (c).  Fails before issue 13's slab changes: freed slab pages stay
 * resident in jemalloc (RSS growth retained ~100-130% while idle; only an
 * explicit purge, which the library never does, gives them back).  Passes
 * with slab pages from a dedicated jemalloc arena that returns memory to
 * the OS (the slab part of issue 13).  Skipped under ASan/TSan, where the
 * pages come from libc.  @reclaim_thread: the spare pages a churn may keep
 * are more with the thread, which trims them while the cache idles
 * (shrink/sweep.c, RETAINED_MAX); without it, a burst's spares may stay.
 */
static void rss_follows(bool reclaim_thread)
{
#ifdef TM_SANITIZER
	(void)reclaim_thread;
	cr_skip_test(
		"RSS test: skipped under a sanitizer (slab pages come from libc, not jemalloc)");
#else
	udc_cache *c;
	uint64_t before, peak, now = 0, growth;
	unsigned nr_remove = RSS_NAMES / 100 * RSS_REMOVE_PCT, wrong = 0;
	const struct timespec poll = { .tv_sec = 0, .tv_nsec = 100000000 };
	double retained = 100.0;
	char nm[48];

	/* Always on since the slab arena landed (issue 13); about 9 s. */
	c = tm_create((size_t)4 << 30, NULL, reclaim_thread);
	before = tm_rss();
	for (unsigned i = 0; i < RSS_NAMES; i++) {
		int len = rss_name(nm, sizeof(nm), i);

		cr_assert_eq(udc_add_negative(c, 100 + i % RSS_DIRS, nm, (size_t)len, 0), 0);
	}
	peak = tm_rss();
	growth = peak > before ? peak - before : 0;
	cr_assert_gt(growth, (uint64_t)16 << 20, "RSS grew by only %" PRIu64 " bytes", growth);
	/* Remove every name i with i % 10 != 0: 90%, spread over every page. */
	for (unsigned i = 0, k = 0; i < RSS_NAMES && k < nr_remove; i++) {
		int len;

		if (i % 10 == 0)
			continue;
		len = rss_name(nm, sizeof(nm), i);
		cr_assert_eq(udc_invalidate(c, 100 + i % RSS_DIRS, nm, (size_t)len), 0);
		k++;
	}
	udc_thread_offline(c);
	for (int p = 0; p <= RSS_IDLE_POLLS; p++) {
		now = tm_rss();
		retained = 100.0 * (double)((int64_t)now - (int64_t)before) / (double)growth;
		if (retained <= RSS_RETAINED_PCT)
			break;
		if (p < RSS_IDLE_POLLS)
			nanosleep(&poll, NULL);
	}
	udc_thread_online(c);
	for (unsigned i = 0; i < RSS_NAMES; i += 997) {
		int len = rss_name(nm, sizeof(nm), i);
		int rc = udc_lookup(c, 100 + i % RSS_DIRS, nm, (size_t)len, NULL);

		wrong += i % 10 == 0 ? rc != UDC_NEGATIVE : rc != UDC_MISS;
	}
	fprintf(stderr,
		"rss_follows_the_cache (%s thread): RSS before %" PRIu64 ", after inserting %" PRIu64
		", after removing and idling %" PRIu64
		": growth retained %.1f%%, bytes_used %" PRIu64 "\n",
		reclaim_thread ? "with the" : "no", before, peak, now, retained, tm_bytes(c));
	udc_destroy(c);
	cr_expect_eq(wrong, 0, "%u wrong answers after the removals", wrong);
	cr_expect_leq(retained, RSS_RETAINED_PCT,
		      "RSS growth retained %.1f%% > %d%% (before %" PRIu64
		      ", after inserting %" PRIu64 ", after 2 s idle %" PRIu64 ")",
		      retained, RSS_RETAINED_PCT, before, peak, now);
#endif
}

Test(threads_memory, rss_follows_the_cache, .timeout = 300)
{
	rss_follows(false);
}

/* The same with the reclaim thread: a second's spare pages, trimmed. */
Test(threads_memory, rss_follows_the_cache_with_the_thread, .timeout = 300)
{
	rss_follows(true);
}
