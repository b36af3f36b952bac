/* SPDX-License-Identifier: MIT */
/*
 * stress/udc-stress.c - udcache's benchmark and stress driver.
 *
 * Owns: the udc-stress program: option parsing, the workload table, the
 * worker threads and their counters, and the report (text or JSON).  It owns
 * no library state: everything it does to a cache goes through the public
 * header include/udcache.h (or stress/impl.h).  The exceptions are the `hash` workload, which
 * times the engine's internal hash_name() (engine/hash.h), and the `alloc`
 * workload, which drives slab/ (slab/slab.h) directly; both are linked in
 * from the static library.  `alloc` and `frag` also call jemalloc
 * (mallocx, sdallocx, mallctl) for their malloc baselines.
 *
 * Structure: workloads[] is a table of {name, summary, run}.  The
 * workloads that compare implementations (mixed, hit, trickle, churn, rmdir,
 * rename: stress/compare.c; replay: stress/replay/) run against --impl,
 * udcache or a baseline in stress/baselines/, through stress/impl.h.  The
 * others study udcache's own parts: hash, alloc and frag here, hotset,
 * invalidate and buildtrace in stress/policy.c.  A run function prepares
 * what its workload needs, runs its threads, checks and reports.  To add a
 * workload: write a run function (or a compare.c operation) and add a row.
 *
 * Workloads here:
 *  - hash:  time hash_name() on names of --name-len bytes; prints ns/hash.
 *  - alloc: allocation throughput of --object-size objects (a slab class),
 *           three runs of --seconds each on --threads threads: slab_alloc +
 *           slab_free_now, slab_alloc + slab_free_rcu, and jemalloc
 *           mallocx + sdallocx.  Each thread keeps a FIFO window of
 *           ALLOC_WINDOW live objects: allocate one, write a tag into it,
 *           check and free the oldest.  Reports alloc+free pairs per second
 *           and ns per pair per thread.  Exit status 1 if an allocation
 *           returned NULL, a freed object did not hold its tag (two live
 *           objects shared memory), slab_check failed or objects were left.
 *  - frag:  the fragmentation benchmark, one thread.  --names negatives
 *           (default 2,000,000) over --dirs directories (default 100),
 *           names of --name-len bytes (default 24), in a cache of --memory
 *           (default 4G, so nothing is evicted) with no reclaim thread; a
 *           seeded random --remove-ratio (default 0.9) of them is dropped
 *           with udc_invalidate; then bytes_used, RSS and jemalloc's
 *           stats.resident before inserting, after inserting and after the
 *           removals (the thread gone idle with udc_thread_offline, once
 *           bytes_used stops falling and jemalloc's dirty pages are
 *           purged): growth, what is left, and the retained
 *           fraction.  The malloc baseline (one jemalloc allocation per name,
 *           the size of a negative entry) runs first, in a forked child, so
 *           that the two processes' RSS do not mix.  Every kept name must
 *           still be UDC_NEGATIVE and every removed one UDC_MISS: exit
 *           status 1 otherwise.
 *
 * Locking: none of its own.  Each struct worker is written only by its own
 * thread while the workers run, and read by main only after pthread_join().
 * The read-only inputs (options, name table, cache or slab pointer, hash
 * key) are written by main before the start barrier and never again.
 * pthread_barrier_wait() and pthread_join() both order memory, so they
 * publish those inputs to the workers and the counters to main with no
 * other fence.  An alloc worker's window is on its own stack; the slab it
 * allocates from is shared and does its own locking.
 *
 * Ordering:
 *  - bench.stop: main sets it with a release store once --seconds have
 *    passed (CLOCK_MONOTONIC); each worker polls it with an acquire load
 *    before every operation.  The acquire pairs with the release so that a
 *    worker that sees stop == true also sees everything main wrote before
 *    the store; today that is nothing else, but the phased workloads that
 *    will grow here hand their next phase over this way.  Termination alone
 *    would need only relaxed.  The counters do not travel on this flag: main
 *    reads them after pthread_join().  The flag has its own cache line,
 *    which stays shared until main's single store, so polling it costs no
 *    coherence traffic (the acquire load is a plain load on x86-64).
 *  - frag's child writes its figures into a MAP_SHARED page and exits; the
 *    parent reads them only after waitpid() has reported the exit, which
 *    orders the child's stores before the parent's loads (the kernel's exit
 *    and wait paths are full barriers), so no atomic is needed.  The child
 *    is forked before the parent has created any thread or cache.
 *
 * Limitations and implementation defects:
 *  - In `frag` a kept name that misses is wrong unless the cache evicted
 *    something or declined a negative (then it is counted apart and warned
 *    about).
 *  - Rates are per thread, each measured on its own thread's clock; the
 *    total rate is their sum.
 *  - alloc: one object size per run, and every object is freed by the
 *    thread that allocated it (no cross-thread frees).  slab_rcu's frees
 *    run later on liburcu's call_rcu thread, whose time is not in the
 *    workers' clocks (on a machine with few cores it competes with them).
 *  - frag: single-threaded; RSS is the whole process's (statm resident), so
 *    the baseline reading is subtracted from every figure.  The malloc
 *    baseline's index (an array of pointers) is allocated and touched
 *    before its baseline reading, so its figures are the records alone,
 *    while udcache's include its hash table.
 *  - In sanitizer builds the malloc baselines use malloc/free instead of
 *    jemalloc (as engine/alloc.c does), so that ASan checks them; their
 *    jemalloc figures are then meaningless.
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif

#include <errno.h>
#include <getopt.h>
#include <inttypes.h>
#include <limits.h>
#include <math.h>
#include <pthread.h>
#include <stdalign.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <jemalloc/jemalloc.h>
#include <urcu/urcu-memb.h> /* alloc: slab's callers register with urcu-memb */

#include "include/udcache.h"
#include "engine/hash.h" /* the hash workload only: internal, from the static library */
#include "slab/slab.h"
#include "tests/diffstress/diffstress.h"  /* the diff workload */	 /* the alloc workload only: internal, from the static library */
#include "stress/compare.h"
#include "stress/impl.h"
#include "stress/stress.h"

#define DEFAULT_SEED UINT64_C(0x5eed0dcac4e5eed5)
#define MAX_THREADS 1024
#define MAX_NAMES (UINT64_C(1) << 26)
#define MAX_SECONDS 86400.0
#define MAX_SCAN_DIRS 65536
#define HASH_RING 4096	      /* names the hash workload cycles through (stay in L1/L2) */
#define ALLOC_WINDOW 1024     /* live objects per alloc thread (FIFO); power of 2 */
#define ALLOC_SLAB_RETAINED 2 /* alloc's slab keeps 2 empty pages, as the engine's do */
#define FRAG_NAMES 2000000    /* frag's defaults where they differ from hit's */
#define FRAG_DIRS 100
#define FRAG_NAME_LEN 24
#define FRAG_MEMORY ((size_t)4 << 30)
#define FRAG_SETTLE_POLL_NS 50000000L /* poll bytes_used every 50 ms after the removals, */
#define FRAG_SETTLE_EQUAL 3	      /* until 3 equal readings in a row, */
#define FRAG_SETTLE_MAX_SEC 5.0	      /* or 5 s */

#define STRINGIFY_(x) #x
#define STRINGIFY(x) STRINGIFY_(x)

/* The malloc baselines: jemalloc, or libc under a sanitizer (as engine/alloc.c). */
#if defined(__SANITIZE_ADDRESS__) || defined(__SANITIZE_THREAD__)
#define BASE_LIBC_ALLOC 1
#endif

/* ---------------------------------------------------------------------- */
/* Options (struct options is in stress.h) */

static const struct options default_options = {
	.workload = "mixed",
	.impl = "udcache",
	.dist = "uniform",
	.zipf_s = 0.99,
	.passes = 2,
	.threads = 2,
	.names = 65536,
	.dirs = 64,
	.negative_ratio = 0.25,
	.seconds = 5.0,
	.seed = DEFAULT_SEED,
	.memory = (size_t)1 << 30,
	.name_len = 16,
	.object_size = 64,
	.remove_ratio = 0.9,
	.hot = HOTSET_HOT,
	.period_ms = HOTSET_PERIOD_MS,
	.scan_dirs = HOTSET_SCAN_DIRS,
	.scan_client = HOTSET_CLIENT_SCAN,
	.headers = BUILD_HEADERS,
	.includes = BUILD_INCLUDES,
	.unique = BUILD_UNIQUE,
	.units = BUILD_UNITS,
	.scratch_dirs = 1,
	.no_reclaim_thread = false,
	.json = false,
};

/* An unsigned integer, decimal or 0x-hex, within [min, max]. */
static uint64_t parse_u64(const char *opt, const char *s, uint64_t min, uint64_t max)
{
	char *end;
	unsigned long long v;

	while (*s == ' ' || *s == '\t')
		s++;
	if (*s == '-' || *s == '\0')
		usage_error("%s: '%s' is not an unsigned integer", opt, s);
	errno = 0;
	v = strtoull(s, &end, 0);
	if (errno || *end != '\0')
		usage_error("%s: '%s' is not an unsigned integer", opt, s);
	if (v < min || v > max)
		usage_error("%s: %llu is out of range [%" PRIu64 ", %" PRIu64 "]", opt, v, min,
			    max);
	return v;
}

static double parse_double(const char *opt, const char *s, double min, double max)
{
	char *end;
	double v;

	errno = 0;
	v = strtod(s, &end);
	if (errno || end == s || *end != '\0' || !isfinite(v))
		usage_error("%s: '%s' is not a number", opt, s);
	if (v < min || v > max)
		usage_error("%s: %g is out of range [%g, %g]", opt, v, min, max);
	return v;
}

/* A byte count with an optional K, M, G or T suffix (powers of 1024). */
static size_t parse_size(const char *opt, const char *s)
{
	char *end;
	unsigned long long v;
	unsigned shift = 0;

	if (*s == '-' || *s == '\0')
		usage_error("%s: '%s' is not a size", opt, s);
	errno = 0;
	v = strtoull(s, &end, 10);
	if (errno || end == s)
		usage_error("%s: '%s' is not a size", opt, s);
	switch (*end) {
	case '\0':
		break;
	case 'k':
	case 'K':
		shift = 10;
		break;
	case 'm':
	case 'M':
		shift = 20;
		break;
	case 'g':
	case 'G':
		shift = 30;
		break;
	case 't':
	case 'T':
		shift = 40;
		break;
	default:
		usage_error("%s: '%s': unknown suffix (use K, M, G or T)", opt, s);
	}
	if (*end != '\0' && end[1] != '\0' && strcmp(end + 1, "iB") && strcmp(end + 1, "B"))
		usage_error("%s: '%s': unknown suffix (use K, M, G or T)", opt, s);
	if (shift && v > (SIZE_MAX >> shift))
		usage_error("%s: '%s' is too large", opt, s);
	return (size_t)v << shift;
}

/* ---------------------------------------------------------------------- */
/* Threads: start together on a barrier, stop on bench.stop. */

struct bench;
struct worker;
typedef void (*worker_fn)(struct worker *w);

struct worker {
	/* Set by main before the start barrier, then read-only. */
	alignas(CACHELINE) struct bench *b;
	worker_fn fn;
	unsigned id;
	pthread_t tid;
	/* Written by this worker only; read by main after pthread_join(). */
	uint64_t rng;
	uint64_t ops;
	uint64_t wrong;		  /* alloc: objects that did not hold their tag */
	uint64_t sink;		  /* keeps the hash loop from being optimised away */
	double elapsed;		  /* seconds, this thread's clock */
	double loop_elapsed;	  /* alloc: seconds of the timed loop alone (no set-up) */
	uint64_t bad_index; /* alloc: the first bad object's sequence number */
};
_Static_assert(sizeof(struct worker) % CACHELINE == 0, "workers must not share cache lines");

struct name_table {
	char *bytes;	   /* name i at bytes + i * stride, not NUL-terminated */
	uint8_t *len;	   /* its length, 1..UDC_NAME_MAX */
	size_t stride;
	uint64_t n;
};

struct bench {
	/* Written by main before the start barrier, then read-only. */
	const struct options *opt;
	udc_cache *cache;
	struct name_table *names;
	struct hash_key *hkey;
	struct slab *slab; /* alloc: shared by the workers (slab locks itself) */
	unsigned slab_cls; /* alloc: the class of --object-size */
	pthread_barrier_t start;
	/* Set once by main (release), polled by workers (acquire): own line. */
	alignas(CACHELINE) atomic_bool stop;
};

static void *thread_main(void *arg)
{
	struct worker *w = arg;
	double t0;

	/* The barrier orders main's set-up before every worker's reads. */
	pthread_barrier_wait(&w->b->start);
	t0 = now_sec();
	w->fn(w);
	w->elapsed = now_sec() - t0;
	return NULL;
}

/* Whether main has called time; pairs with the release store in run_threads(). */
static inline bool bench_stopped(struct bench *b)
{
	return atomic_load_explicit(&b->stop, memory_order_acquire);
}

/*
 * Run fn on opt->threads threads for opt->seconds.  Returns the array of
 * workers (joined; free() it); their counters are final.
 */
static struct worker *run_threads(struct bench *b, worker_fn fn)
{
	unsigned n = b->opt->threads;
	struct worker *w;
	struct timespec deadline;
	double secs;
	int err;

	w = aligned_alloc(CACHELINE, n * sizeof(*w));
	if (!w)
		die("out of memory for %u workers", n);
	memset(w, 0, n * sizeof(*w));
	atomic_init(&b->stop, false);
	err = pthread_barrier_init(&b->start, NULL, n + 1);
	if (err)
		die("pthread_barrier_init: %s", strerror(err));

	uint64_t s = b->opt->seed;
	for (unsigned i = 0; i < n; i++) {
		w[i].b = b;
		w[i].fn = fn;
		w[i].id = i;
		w[i].rng = splitmix64(&s);
		if (w[i].rng == 0) /* xorshift's one fixed point */
			w[i].rng = 1;
		err = pthread_create(&w[i].tid, NULL, thread_main, &w[i]);
		if (err) /* the others wait on the barrier: exit takes them */
			die("pthread_create (thread %u of %u): %s", i + 1, n, strerror(err));
	}

	pthread_barrier_wait(&b->start);
	clock_gettime(CLOCK_MONOTONIC, &deadline);
	secs = floor(b->opt->seconds);
	deadline.tv_sec += (time_t)secs;
	deadline.tv_nsec += (long)((b->opt->seconds - secs) * 1e9);
	if (deadline.tv_nsec >= 1000000000L) {
		deadline.tv_sec++;
		deadline.tv_nsec -= 1000000000L;
	}
	sleep_until(&deadline);
	/* Release: a worker that sees stop also sees what main wrote before it. */
	atomic_store_explicit(&b->stop, true, memory_order_release);

	for (unsigned i = 0; i < n; i++) {
		err = pthread_join(w[i].tid, NULL);
		if (err)
			die("pthread_join: %s", strerror(err));
	}
	pthread_barrier_destroy(&b->start);
	return w;
}

/* ---------------------------------------------------------------------- */
/* Names */

static const char *name_at(const struct name_table *t, uint64_t i)
{
	return t->bytes + i * t->stride;
}

static void name_table_free(struct name_table *t)
{
	free(t->bytes);
	free(t->len);
	memset(t, 0, sizeof(*t));
}

static void name_table_alloc(struct name_table *t, uint64_t n, size_t stride)
{
	memset(t, 0, sizeof(*t));
	t->n = n;
	t->stride = stride;
	t->bytes = malloc(n * stride);
	t->len = malloc(n);
	if (!t->bytes || !t->len)
		die("out of memory for %" PRIu64 " names", n);
}


/* ---------------------------------------------------------------------- */
/* Workload hash */

/* HASH_RING names of exactly name_len random bytes from [a-z0-9._-]. */
static void hash_names_build(struct name_table *t, const struct options *opt)
{
	static const char alphabet[] = "abcdefghijklmnopqrstuvwxyz0123456789._-";
	uint64_t s = opt->seed;

	name_table_alloc(t, HASH_RING, opt->name_len);
	for (uint64_t i = 0; i < t->n; i++) {
		char *p = t->bytes + i * t->stride;

		for (unsigned k = 0; k < opt->name_len; k++)
			p[k] = alphabet[splitmix64(&s) % (sizeof(alphabet) - 1)];
		if (opt->name_len == 1 && p[0] == '.')
			p[0] = 'a';
		t->len[i] = (uint8_t)opt->name_len;
	}
}

static void hash_worker(struct worker *w)
{
	struct bench *b = w->b;
	const struct name_table *t = b->names;
	const struct hash_key *k = b->hkey;
	uint64_t acc = 0, i = w->id * 7;

	/* Sequential through the ring: no PRNG in the timed loop. */
	while (!bench_stopped(b)) {
		uint64_t j = i++ & (HASH_RING - 1);

		acc ^= hash_name(k, dir_ino(j), name_at(t, j), t->len[j]);
		w->ops++;
	}
	w->sink = acc;
}

static int run_hash(const struct options *opt)
{
	struct name_table names;
	struct hash_key key;
	struct bench b = { .opt = opt };
	struct report r;
	struct worker *w;
	uint64_t ops = 0, sink = 0, s = opt->seed;
	uint64_t cfg_key[2];
	double rate = 0.0;
	int rc;

	_Static_assert((HASH_RING & (HASH_RING - 1)) == 0, "HASH_RING must be a power of 2");
	cfg_key[0] = splitmix64(&s);
	cfg_key[1] = splitmix64(&s) | 1; /* never {0,0}, which means random */
	rc = hash_key_init(&key, cfg_key);
	if (rc < 0)
		die("hash_key_init: %s", strerror(-rc));
	hash_names_build(&names, opt);
	b.names = &names;
	b.hkey = &key;

	w = run_threads(&b, hash_worker);
	for (unsigned i = 0; i < opt->threads; i++) {
		ops += w[i].ops;
		sink ^= w[i].sink;
		if (w[i].elapsed > 0)
			rate += (double)w[i].ops / w[i].elapsed;
	}

	rep_begin(&r, opt->json);
	rep_str(&r, "workload", "workload", "hash");
	rep_str(&r, "version", "udcache version", udc_version());
	rep_u64(&r, "threads", "threads", opt->threads);
	rep_u64(&r, "name_len", "name length", opt->name_len);
	rep_f64(&r, "seconds", "seconds", opt->seconds, 3);
	rep_hex(&r, "seed", "seed", opt->seed);
	rep_u64(&r, "hashes", "hashes", ops);
	rep_f64(&r, "hashes_per_sec", "hashes/s", rate, 0);
	rep_f64(&r, "hashes_per_sec_per_thread", "hashes/s per thread", rate / opt->threads, 0);
	rep_f64(&r, "ns_per_hash", "ns/hash", rate > 0 ? 1e9 * opt->threads / rate : 0.0, 2);
	rep_hex(&r, "checksum", "checksum", sink);
	rep_end(&r);
	fflush(stdout);

	free(w);
	name_table_free(&names);
	return 0;
}

/* ---------------------------------------------------------------------- */
/* Malloc baselines: jemalloc, or libc under a sanitizer (so ASan sees them) */

static void *base_alloc(size_t size)
{
#ifdef BASE_LIBC_ALLOC
	return malloc(size);
#else
	return mallocx(size, 0);
#endif
}

static void base_free(void *p, size_t size)
{
#ifdef BASE_LIBC_ALLOC
	(void)size;
	free(p);
#else
	sdallocx(p, size, 0);
#endif
}

/* ---------------------------------------------------------------------- */
/* Workload alloc */

enum alloc_kind {
	ALLOC_SLAB,	/* slab_alloc + slab_free_now */
	ALLOC_SLAB_RCU, /* slab_alloc + slab_free_rcu */
	ALLOC_MALLOC,	/* mallocx + sdallocx */
	NR_ALLOC_KINDS
};

static const char *const alloc_kind_name[NR_ALLOC_KINDS] = {
	[ALLOC_SLAB] = "slab",
	[ALLOC_SLAB_RCU] = "slab_rcu",
	[ALLOC_MALLOC] = "malloc",
};

/* What object seq of thread id holds while it is live. */
static inline uint64_t alloc_tag(unsigned id, uint64_t seq)
{
	return (uint64_t)id << 48 | seq;
}

/* A new object, tagged: the 8-byte store also keeps the allocation alive. */
static inline __attribute__((always_inline)) void *alloc_new(struct worker *w, enum alloc_kind k,
							     uint64_t seq)
{
	struct bench *b = w->b;
	uint64_t tag = alloc_tag(w->id, seq);
	void *p;

	if (k == ALLOC_MALLOC)
		p = base_alloc(b->opt->object_size);
	else
		p = slab_alloc(b->slab, b->slab_cls);
	if (!p)
		die("alloc: %s: out of memory (thread %u)", alloc_kind_name[k], w->id);
	memcpy(p, &tag, sizeof(tag));
	return p;
}

/* Check that object seq still holds its tag, then free it. */
static inline __attribute__((always_inline)) void
alloc_check_free(struct worker *w, enum alloc_kind k, void *p, uint64_t seq)
{
	struct bench *b = w->b;
	uint64_t got;

	memcpy(&got, p, sizeof(got));
	if (got != alloc_tag(w->id, seq) && w->wrong++ == 0)
		w->bad_index = seq;
	switch (k) {
	case ALLOC_SLAB:
		slab_free_now(b->slab, p);
		break;
	case ALLOC_SLAB_RCU:
		slab_free_rcu(b->slab, p);
		break;
	default:
		base_free(p, b->opt->object_size);
		break;
	}
}

/*
 * The FIFO window: fill it, then until stop allocate one and free the
 * oldest (so frees are of objects ALLOC_WINDOW allocations old), timing
 * only that loop.  w->ops counts alloc+free pairs.
 */
static inline __attribute__((always_inline)) void alloc_loop(struct worker *w, enum alloc_kind k)
{
	struct bench *b = w->b;
	void *win[ALLOC_WINDOW];
	uint64_t seq;
	double t0;

	_Static_assert((ALLOC_WINDOW & (ALLOC_WINDOW - 1)) == 0, "ALLOC_WINDOW: a power of 2");
	if (k != ALLOC_MALLOC)
		urcu_memb_register_thread(); /* slab's calling context */
	for (seq = 0; seq < ALLOC_WINDOW; seq++)
		win[seq] = alloc_new(w, k, seq);
	t0 = now_sec();
	while (!bench_stopped(b)) {
		void **slot = &win[seq & (ALLOC_WINDOW - 1)];
		void *p = alloc_new(w, k, seq);

		alloc_check_free(w, k, *slot, seq - ALLOC_WINDOW);
		*slot = p;
		seq++;
	}
	w->loop_elapsed = now_sec() - t0;
	w->ops = seq - ALLOC_WINDOW;
	for (uint64_t i = seq - ALLOC_WINDOW; i < seq; i++)
		alloc_check_free(w, k, win[i & (ALLOC_WINDOW - 1)], i);
	if (k != ALLOC_MALLOC) {
		/* While still registered: call_rcu needs it. */
		slab_rcu_flush(b->slab);
		slab_thread_release(b->slab);
		urcu_memb_unregister_thread();
	}
}

static void alloc_slab_worker(struct worker *w)
{
	alloc_loop(w, ALLOC_SLAB);
}

static void alloc_slab_rcu_worker(struct worker *w)
{
	alloc_loop(w, ALLOC_SLAB_RCU);
}

static void alloc_malloc_worker(struct worker *w)
{
	alloc_loop(w, ALLOC_MALLOC);
}

static const worker_fn alloc_workers[NR_ALLOC_KINDS] = {
	[ALLOC_SLAB] = alloc_slab_worker,
	[ALLOC_SLAB_RCU] = alloc_slab_rcu_worker,
	[ALLOC_MALLOC] = alloc_malloc_worker,
};

/* A slab with the default classes; --object-size must be one of them. */
static struct slab *alloc_slab_create(const struct options *opt, unsigned *cls)
{
	const struct slab_config cfg = { .nr_classes = 0, .retained_max = ALLOC_SLAB_RETAINED };
	struct slab *s = slab_create(&cfg);
	int c;

	if (!s)
		die("slab_create: %s", strerror(errno));
	c = slab_class_for_size(s, opt->object_size);
	if (c < 0 || slab_class_size(s, (unsigned)c) != opt->object_size) {
		char list[128] = "";
		size_t off = 0;

		for (unsigned i = 0; i < slab_nr_classes(s) && off < sizeof(list); i++)
			off += (size_t)snprintf(list + off, sizeof(list) - off, "%s%zu",
						i ? ", " : "", slab_class_size(s, i));
		slab_destroy(s);
		usage_error("--object-size: %zu is not a slab class (the classes are %s)",
			    opt->object_size, list);
	}
	*cls = (unsigned)c;
	return s;
}

struct alloc_result {
	uint64_t pairs;		  /* alloc+free pairs, all threads */
	double rate;		  /* pairs/s, the sum of the threads' rates */
	uint64_t wrong;		  /* freed objects that did not hold their tag */
	uint64_t pages_allocated; /* slab: pages taken from the page allocator */
	uint64_t objects_left;	  /* slab: objects not freed after the last barrier */
	int check;		  /* slab: slab_check() */
};

static int run_alloc(const struct options *opt)
{
	struct alloc_result res[NR_ALLOC_KINDS] = { 0 };
	struct report r;
	char key[64], label[64];
	bool failed = false;

	urcu_memb_register_thread(); /* main: slab_rcu_barrier, slab_stats, slab_check */
	for (unsigned k = 0; k < NR_ALLOC_KINDS; k++) {
		struct bench b = { .opt = opt };
		struct worker *w;

		if (k != ALLOC_MALLOC)
			b.slab = alloc_slab_create(opt, &b.slab_cls);
		w = run_threads(&b, alloc_workers[k]);
		for (unsigned i = 0; i < opt->threads; i++) {
			res[k].pairs += w[i].ops;
			res[k].wrong += w[i].wrong;
			if (w[i].loop_elapsed > 0)
				res[k].rate += (double)w[i].ops / w[i].loop_elapsed;
		}
		free(w);
		if (b.slab) {
			struct slab_stats st;

			/* Every slab_free_rcu done and its emptied pages released. */
			slab_rcu_barrier(b.slab);
			slab_stats(b.slab, &st);
			res[k].pages_allocated = st.pages_allocated;
			res[k].objects_left = st.objects;
			res[k].check = slab_check(b.slab);
			slab_destroy(b.slab);
		}
	}
	urcu_memb_unregister_thread();

	rep_begin(&r, opt->json);
	rep_str(&r, "workload", "workload", "alloc");
	rep_str(&r, "version", "udcache version", udc_version());
	rep_u64(&r, "threads", "threads", opt->threads);
	rep_u64(&r, "object_size", "object size", opt->object_size);
	rep_u64(&r, "window", "live objects per thread", ALLOC_WINDOW);
	rep_f64(&r, "seconds", "seconds per allocator", opt->seconds, 3);
	rep_u64(&r, "slab_retained_max", "slab retained_max", ALLOC_SLAB_RETAINED);
	for (unsigned k = 0; k < NR_ALLOC_KINDS; k++) {
		const char *n = alloc_kind_name[k];
		double rate = res[k].rate;

		snprintf(key, sizeof(key), "%s_pairs", n);
		snprintf(label, sizeof(label), "%s pairs", n);
		rep_u64(&r, key, label, res[k].pairs);
		snprintf(key, sizeof(key), "%s_pairs_per_sec", n);
		snprintf(label, sizeof(label), "%s pairs/s", n);
		rep_f64(&r, key, label, rate, 0);
		snprintf(key, sizeof(key), "%s_pairs_per_sec_per_thread", n);
		snprintf(label, sizeof(label), "%s pairs/s per thread", n);
		rep_f64(&r, key, label, rate / opt->threads, 0);
		snprintf(key, sizeof(key), "%s_ns_per_pair", n);
		snprintf(label, sizeof(label), "%s ns/pair (per thread)", n);
		rep_f64(&r, key, label, rate > 0 ? 1e9 * opt->threads / rate : 0.0, 2);
		if (k == ALLOC_MALLOC)
			continue;
		snprintf(key, sizeof(key), "%s_pages_allocated", n);
		snprintf(label, sizeof(label), "%s pages allocated", n);
		rep_u64(&r, key, label, res[k].pages_allocated);
	}
	rep_f64(&r, "slab_vs_malloc", "slab / malloc pairs/s",
		res[ALLOC_MALLOC].rate > 0 ? res[ALLOC_SLAB].rate / res[ALLOC_MALLOC].rate : NAN,
		3);
	rep_f64(&r, "slab_rcu_vs_malloc", "slab_rcu / malloc pairs/s",
		res[ALLOC_MALLOC].rate > 0 ? res[ALLOC_SLAB_RCU].rate / res[ALLOC_MALLOC].rate :
					     NAN,
		3);
	uint64_t wrong = 0;
	for (unsigned k = 0; k < NR_ALLOC_KINDS; k++)
		wrong += res[k].wrong;
	rep_u64(&r, "wrong_tags", "objects with a wrong tag", wrong);
	for (unsigned k = 0; k < NR_ALLOC_KINDS; k++) {
		if (res[k].wrong) {
			rep_warn(&r, "%s: %" PRIu64 " freed objects did not hold their tag",
				 alloc_kind_name[k], res[k].wrong);
			failed = true;
		}
		if (k == ALLOC_MALLOC)
			continue;
		if (res[k].check) {
			rep_warn(&r, "%s: slab_check: %s", alloc_kind_name[k],
				 strerror(-res[k].check));
			failed = true;
		}
		if (res[k].objects_left) {
			rep_warn(&r, "%s: %" PRIu64 " objects still allocated after every free",
				 alloc_kind_name[k], res[k].objects_left);
			failed = true;
		}
	}
	if (failed)
		rep_warn(&r, "FAILED");
	rep_end(&r);
	fflush(stdout);
	return failed ? 1 : 0;
}

/* ---------------------------------------------------------------------- */
/* Workload frag */

/* What frag works on: written by run_frag() before the fork, then read-only. */
struct frag_params {
	uint64_t names;
	uint64_t dirs;
	uint64_t nr_remove;
	unsigned name_len;
	size_t memory;
	uint32_t *order;  /* a seeded permutation of the names: the first nr_remove go */
	uint8_t *removed; /* removed[i]: name i is removed */
};

/* One memory reading, taken after a jemalloc purge. */
struct mem_point {
	uint64_t rss;	       /* /proc/self/statm resident pages * page size */
	uint64_t je_resident;  /* jemalloc stats.resident */
	uint64_t je_allocated; /* jemalloc stats.allocated */
	uint64_t bytes_used;   /* udc_stats; 0 in the malloc baseline */
};

/* One side's figures: [0] the malloc baseline (the child), [1] udcache. */
struct frag_side {
	struct mem_point base, peak, final;
	double insert_sec, remove_sec, settle_sec;
	bool settled;	      /* bytes_used stopped falling within the time */
	uint64_t wrong;	      /* wrong answers, kept misses excluded */
	uint64_t kept_misses; /* udcache: kept names that were UDC_MISS */
	uint64_t first_bad;   /* the first unexpected answer: its name index, */
	int first_bad_rc;     /* and the answer (udcache) */
	bool any_bad;
	bool done;
};

/* Name i: "f<index in hex>" padded with '_' to name_len, as hit's.  buf: 256 bytes. */
static size_t frag_name(char *buf, uint64_t i, unsigned name_len)
{
	int k = snprintf(buf, 20, "f%" PRIx64, i);

	while ((unsigned)k < name_len)
		buf[k++] = '_';
	return (size_t)k;
}

/* Memory that is resident from the start (so it is in every baseline reading). */
static void *populated_alloc(size_t size)
{
	void *p = mmap(NULL, size, PROT_READ | PROT_WRITE,
		       MAP_PRIVATE | MAP_ANONYMOUS | MAP_POPULATE, -1, 0);

	if (p == MAP_FAILED)
		die("mmap of %zu bytes: %s", size, strerror(errno));
	return p;
}

/* A jemalloc size_t statistic, refreshed (0 if jemalloc keeps no stats). */
static uint64_t jemalloc_stat(const char *name)
{
	uint64_t epoch = 1;
	size_t v = 0, len = sizeof(v);

	if (mallctl("epoch", NULL, NULL, &epoch, sizeof(epoch)) || mallctl(name, &v, &len, NULL, 0))
		return 0;
	return v;
}

/* Give jemalloc's unused pages back: this thread's tcache, then every arena. */
static void jemalloc_purge(void)
{
	int err;

	mallctl("thread.tcache.flush", NULL, NULL, NULL, 0); /* fails only with no tcache */
	err = mallctl("arena." STRINGIFY(MALLCTL_ARENAS_ALL) ".purge", NULL, NULL, NULL, 0);
	if (err)
		die("mallctl(arena.<all>.purge): %s", strerror(err));
}

static struct mem_point mem_read(udc_cache *c)
{
	struct mem_point m;

	jemalloc_purge();
	m.rss = rss_bytes();
	m.je_resident = jemalloc_stat("stats.resident");
	m.je_allocated = jemalloc_stat("stats.allocated");
	m.bytes_used = c ? cache_bytes(c) : 0;
	return m;
}

/* Poll bytes_used until FRAG_SETTLE_EQUAL equal readings or FRAG_SETTLE_MAX_SEC. */
static bool frag_settle(udc_cache *c, double *secs)
{
	const struct timespec poll = { .tv_sec = 0, .tv_nsec = FRAG_SETTLE_POLL_NS };
	double t0 = now_sec();
	uint64_t prev = cache_bytes(c);
	unsigned equal = 1;

	while (equal < FRAG_SETTLE_EQUAL && now_sec() - t0 < FRAG_SETTLE_MAX_SEC) {
		uint64_t cur;

		nanosleep(&poll, NULL);
		cur = cache_bytes(c);
		equal = cur == prev ? equal + 1 : 1;
		prev = cur;
	}
	*secs = now_sec() - t0;
	return equal >= FRAG_SETTLE_EQUAL;
}

static void frag_record_bad(struct frag_side *out, uint64_t i, int rc)
{
	if (!out->any_bad) {
		out->any_bad = true;
		out->first_bad = i;
		out->first_bad_rc = rc;
	}
}

/* The malloc baseline's record: one allocation per name, like a dentry. */
struct frag_rec {
	udc_ino dir;
	uint64_t index;
	uint8_t len;
	char name[];
};

/* A negative entry's size with the name inline (the engine's 32-byte header), >= 64. */
static size_t frag_rec_size(size_t len)
{
	size_t size = (32 + len + 15) & ~(size_t)15;

	_Static_assert(offsetof(struct frag_rec, name) <= 32, "the record's header fits in 32");
	return size < 64 ? 64 : size;
}

/* The malloc baseline, in the forked child: the same names, inserts and removals. */
static void frag_malloc_side(const struct frag_params *fp, struct frag_side *out)
{
	size_t index_bytes = fp->names * sizeof(struct frag_rec *);
	struct frag_rec **index = populated_alloc(index_bytes); /* zero, resident */
	char name[UDC_NAME_MAX + 1];
	double t0;

	out->base = mem_read(NULL);
	t0 = now_sec();
	for (uint64_t i = 0; i < fp->names; i++) {
		size_t len = frag_name(name, i, fp->name_len);
		struct frag_rec *rec = base_alloc(frag_rec_size(len));

		if (!rec)
			die("malloc baseline: out of memory at name %" PRIu64, i);
		rec->dir = dir_ino(i % fp->dirs);
		rec->index = i;
		rec->len = (uint8_t)len;
		memcpy(rec->name, name, len);
		index[i] = rec;
	}
	out->insert_sec = now_sec() - t0;
	out->peak = mem_read(NULL);

	t0 = now_sec();
	for (uint64_t j = 0; j < fp->nr_remove; j++) {
		struct frag_rec *rec = index[fp->order[j]];

		base_free(rec, frag_rec_size(rec->len));
		index[fp->order[j]] = NULL;
	}
	out->remove_sec = now_sec() - t0;
	out->settled = true; /* nothing is deferred */
	out->final = mem_read(NULL);

	for (uint64_t i = 0; i < fp->names; i++) {
		struct frag_rec *rec = index[i];
		size_t len = frag_name(name, i, fp->name_len);
		bool ok = fp->removed[i] ? rec == NULL :
					   rec && rec->index == i && rec->len == len &&
						   rec->dir == dir_ino(i % fp->dirs) &&
						   memcmp(rec->name, name, len) == 0;

		if (!ok) {
			out->wrong++;
			frag_record_bad(out, i, 0);
		}
		if (rec)
			base_free(rec, frag_rec_size(rec->len));
	}
	munmap(index, index_bytes);
	out->done = true;
}

/* udcache: returns the statistics after the check's lookups in *st. */
static void frag_udcache_side(const struct frag_params *fp, struct frag_side *out,
			      struct udc_stats *peak_st, struct udc_stats *st)
{
	struct udc_config cfg = UDC_CONFIG_INIT;
	char name[UDC_NAME_MAX + 1];
	udc_cache *c;
	double t0;

	cfg.memory_limit = fp->memory;
	cfg.root = ROOT_INO;
	cfg.flags = UDC_CFG_NO_RECLAIM_THREAD;
	c = udc_create(&cfg);
	if (!c)
		die("udc_create: %s", strerror(errno));

	out->base = mem_read(c);
	t0 = now_sec();
	for (uint64_t i = 0; i < fp->names; i++) {
		size_t len = frag_name(name, i, fp->name_len);
		int rc = udc_add_negative(c, dir_ino(i % fp->dirs), name, len, 0);

		if (rc < 0)
			die("frag: udc_add_negative(dir %" PRIu64 ", \"%.*s\"): %s",
			    dir_ino(i % fp->dirs), (int)len, name, strerror(-rc));
	}
	out->insert_sec = now_sec() - t0;
	out->peak = mem_read(c);
	peak_st->size = sizeof(*peak_st);
	udc_stats_get(c, peak_st);

	t0 = now_sec();
	for (uint64_t j = 0; j < fp->nr_remove; j++) {
		uint64_t i = fp->order[j];
		size_t len = frag_name(name, i, fp->name_len);
		int rc = udc_invalidate(c, dir_ino(i % fp->dirs), name, len);

		if (rc < 0)
			die("frag: udc_invalidate(dir %" PRIu64 ", \"%.*s\"): %s",
			    dir_ino(i % fp->dirs), (int)len, name, strerror(-rc));
	}
	out->remove_sec = now_sec() - t0;
	/* An idle embedder thread hands over its deferred frees, then waits. */
	udc_thread_offline(c);
	out->settled = frag_settle(c, &out->settle_sec);
	out->final = mem_read(c);
	udc_thread_online(c);

	for (uint64_t i = 0; i < fp->names; i++) {
		size_t len = frag_name(name, i, fp->name_len);
		int rc = udc_lookup(c, dir_ino(i % fp->dirs), name, len, NULL);

		if (fp->removed[i] ? rc == UDC_MISS : rc == UDC_NEGATIVE)
			continue;
		if (!fp->removed[i] && rc == UDC_MISS)
			out->kept_misses++;
		else
			out->wrong++;
		frag_record_bad(out, i, rc);
	}
	st->size = sizeof(*st);
	udc_stats_get(c, st);
	udc_destroy(c);
	out->done = true;
}

/* Growth, what is left and the retained share, for one figure of one side. */
static void rep_mem(struct report *r, const char *key, const char *prefix, uint64_t base,
		    uint64_t peak, uint64_t last)
{
	int64_t growth = (int64_t)peak - (int64_t)base;
	int64_t left = (int64_t)last - (int64_t)base;

	rep_obj_begin(r, key, prefix);
	rep_u64(r, "baseline", "baseline", base);
	rep_u64(r, "peak", "peak", peak);
	rep_u64(r, "final", "final", last);
	rep_i64(r, "growth", "growth", growth);
	rep_i64(r, "final_minus_baseline", "final-base", left);
	rep_f64(r, "retained_pct", "retained %",
		growth > 0 ? 100.0 * (double)left / (double)growth : NAN, 1);
	rep_obj_end(r);
}

static int run_frag(const struct options *opt)
{
	struct frag_params fp = {
		.names = opt->names_set ? opt->names : FRAG_NAMES,
		.dirs = opt->dirs_set ? opt->dirs : FRAG_DIRS,
		.name_len = opt->name_len_set ? opt->name_len : FRAG_NAME_LEN,
		.memory = opt->memory_set ? opt->memory : FRAG_MEMORY,
	};
	struct udc_stats peak_st, st;
	struct frag_side *sides, *m, *u;
	struct report r;
	uint64_t rng, s = opt->seed, wrong;
	bool miss_allowed;
	pid_t pid;
	int status;

	if (fp.dirs > fp.names)
		usage_error("--dirs (%" PRIu64 ") must not exceed --names (%" PRIu64 ")", fp.dirs,
			    fp.names);
	fp.nr_remove = (uint64_t)(opt->remove_ratio * (double)fp.names + 0.5);
	if (fp.nr_remove > fp.names)
		fp.nr_remove = fp.names;

	/* The removal order: a Fisher-Yates shuffle from the seed. */
	fp.order = populated_alloc(fp.names * sizeof(*fp.order));
	fp.removed = populated_alloc(fp.names);
	rng = splitmix64(&s) | 1; /* never xorshift's fixed point 0 */
	for (uint64_t i = 0; i < fp.names; i++)
		fp.order[i] = (uint32_t)i;
	for (uint64_t i = fp.names - 1; i > 0; i--) {
		uint64_t j = rand_below(&rng, i + 1);
		uint32_t t = fp.order[i];

		fp.order[i] = fp.order[j];
		fp.order[j] = t;
	}
	for (uint64_t j = 0; j < fp.nr_remove; j++)
		fp.removed[fp.order[j]] = 1;

	/* The malloc baseline first, in a child of its own (no thread exists yet). */
	sides = mmap(NULL, 2 * sizeof(*sides), PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS,
		     -1, 0);
	if (sides == MAP_FAILED)
		die("mmap: %s", strerror(errno));
	memset(sides, 0, 2 * sizeof(*sides));
	m = &sides[0];
	u = &sides[1];
	fflush(stdout);
	fflush(stderr);
	pid = fork();
	if (pid < 0)
		die("fork: %s", strerror(errno));
	if (pid == 0) {
		frag_malloc_side(&fp, m);
		_exit(0);
	}
	while (waitpid(pid, &status, 0) < 0)
		if (errno != EINTR)
			die("waitpid: %s", strerror(errno));
	/* waitpid has returned: the child's stores to *m are visible. */
	if (!WIFEXITED(status) || WEXITSTATUS(status) != 0 || !m->done)
		die("the malloc baseline (child %d) failed: %s %d", (int)pid,
		    WIFEXITED(status) ? "exit status" : "signal",
		    WIFEXITED(status) ? WEXITSTATUS(status) : WTERMSIG(status));

	frag_udcache_side(&fp, u, &peak_st, &st);
	/* The cache may drop a kept negative only if it evicted or declined some. */
	miss_allowed = st.evictions > 0 || peak_st.nr_negative < fp.names;
	wrong = m->wrong + u->wrong + (miss_allowed ? 0 : u->kept_misses);

	rep_begin(&r, opt->json);
	rep_str(&r, "workload", "workload", "frag");
	rep_str(&r, "version", "udcache version", udc_version());
	rep_u64(&r, "names", "names (negatives)", fp.names);
	rep_u64(&r, "dirs", "dirs", fp.dirs);
	rep_u64(&r, "name_len", "name length", fp.name_len);
	rep_f64(&r, "remove_ratio", "remove ratio", opt->remove_ratio, 3);
	rep_u64(&r, "removed", "names removed", fp.nr_remove);
	rep_u64(&r, "kept", "names kept", fp.names - fp.nr_remove);
	rep_hex(&r, "seed", "seed", opt->seed);
	rep_u64(&r, "memory_limit", "memory limit (bytes)", fp.memory);
	rep_u64(&r, "malloc_record_size", "malloc record (bytes)", frag_rec_size(fp.name_len));
	rep_f64(&r, "udcache_insert_seconds", "udcache insert seconds", u->insert_sec, 3);
	rep_f64(&r, "udcache_remove_seconds", "udcache remove seconds", u->remove_sec, 3);
	rep_f64(&r, "udcache_settle_seconds", "udcache settle seconds", u->settle_sec, 3);
	rep_bool(&r, "udcache_settled", "udcache bytes_used settled", u->settled);
	rep_f64(&r, "udcache_peak_bytes_per_entry", "udcache peak bytes/entry",
		(double)((int64_t)u->peak.bytes_used - (int64_t)u->base.bytes_used) /
			(double)fp.names,
		1);
	rep_f64(&r, "malloc_insert_seconds", "malloc insert seconds", m->insert_sec, 3);
	rep_f64(&r, "malloc_remove_seconds", "malloc remove seconds", m->remove_sec, 3);
	rep_mem(&r, "udcache_bytes_used", "udc.bytes_used.", u->base.bytes_used, u->peak.bytes_used,
		u->final.bytes_used);
	rep_mem(&r, "udcache_rss", "udc.rss.", u->base.rss, u->peak.rss, u->final.rss);
	rep_mem(&r, "udcache_jemalloc_resident", "udc.je_res.", u->base.je_resident,
		u->peak.je_resident, u->final.je_resident);
	rep_mem(&r, "malloc_rss", "malloc.rss.", m->base.rss, m->peak.rss, m->final.rss);
	rep_mem(&r, "malloc_jemalloc_resident", "malloc.je_res.", m->base.je_resident,
		m->peak.je_resident, m->final.je_resident);
	rep_mem(&r, "malloc_jemalloc_allocated", "malloc.je_alloc.", m->base.je_allocated,
		m->peak.je_allocated, m->final.je_allocated);
	rep_u64(&r, "wrong_answers", "wrong answers", wrong);
	rep_u64(&r, "kept_misses", "kept names that missed", u->kept_misses);
	rep_udc_stats(&r, &st);

	if (st.evictions)
		rep_warn(&r,
			 "%" PRIu64 " evictions: the figures include reclaim, not only "
			 "compaction (raise --memory)",
			 st.evictions);
	if (peak_st.nr_negative < fp.names)
		rep_warn(&r, "the cache kept %" PRIu64 " of %" PRIu64 " negatives",
			 peak_st.nr_negative, fp.names);
	if (!u->settled)
		rep_warn(&r, "bytes_used was still changing after %.1f s", u->settle_sec);
	if (u->kept_misses)
		rep_warn(&r, "%" PRIu64 " kept names missed%s", u->kept_misses,
			 miss_allowed ? " (allowed: the cache evicted or declined)" : "");
	if (u->any_bad) {
		uint64_t i = u->first_bad;

		rep_warn(&r, "udcache: first unexpected answer: name %" PRIu64 " (%s) gave %s", i,
			 fp.removed[i] ? "removed" : "kept", rc_name(u->first_bad_rc));
	}
	if (m->any_bad)
		rep_warn(&r, "malloc baseline: name %" PRIu64 " (%s) has a wrong record",
			 m->first_bad, fp.removed[m->first_bad] ? "removed" : "kept");
	if (wrong)
		rep_warn(&r, "%" PRIu64 " wrong answers: FAILED", wrong);
	rep_end(&r);
	fflush(stdout);

	munmap(sides, 2 * sizeof(*sides));
	munmap(fp.removed, fp.names);
	munmap(fp.order, fp.names * sizeof(*fp.order));
	return wrong ? 1 : 0;
}

/* ---------------------------------------------------------------------- */
/* diff: the concurrent differential stress (tests/diffstress), for long soaks */

static int run_diff(const struct options *opt)
{
	struct diffstress_options o = diffstress_defaults;

	o.threads = opt->threads;
	o.seconds = opt->seconds;
	o.seed = opt->seed;
	if (opt->memory_set)   /* else diffstress's small default: eviction must race */
		o.memory = opt->memory;
	if (opt->no_reclaim_thread)
		o.flags |= UDC_CFG_NO_RECLAIM_THREAD;
	return diffstress_run(&o);
}

/* ---------------------------------------------------------------------- */
/* The workload table */

struct workload {
	const char *name;
	const char *summary;
	int (*run)(const struct options *opt);
};

static const struct workload workloads[] = {
	{ "mixed", "a storage server's mix of the workloads below (--impl)", run_compare },
	{ "hit", "lookups of preloaded names, uniform or Zipf (--impl)", run_compare },
	{ "trickle", "unique-name misses: memory over time, resolve latency (--impl)",
	  run_compare },
	{ "churn", "temporary files created and unlinked in many directories (--impl)",
	  run_compare },
	{ "rmdir", "directories full of negatives removed while others look up (--impl)",
	  run_compare },
	{ "rename", "directory renames while walks go through them, checked (--impl)",
	  run_compare },
	{ "replay", "strace logs replayed through walk, with the log as the store (--impl)",
	  run_replay },
	{ "hash", "time the engine's hash_name() (ns/hash) on --name-len byte names", run_hash },
	{ "alloc", "alloc+free pairs/s: slab, slab with RCU frees, jemalloc", run_alloc },
	{ "frag", "memory given back after removing most of many negatives, vs malloc", run_frag },
	{ "hotset", "hit ratio of a periodic job's hot set under a scan of unique names",
	  run_hotset },
	{ "invalidate", "time udc_invalidate_dir/udc_rmdir of a full directory, then its garbage",
	  run_invalidate },
	{ "buildtrace", "a build's include searches: negative hits kept vs an unbounded cache",
	  run_buildtrace },
	{ "diff", "every answer checked against a versioned store during renames, rmdirs, fills",
	  run_diff },
};

#define NR_WORKLOADS (sizeof(workloads) / sizeof(workloads[0]))

static void usage(FILE *f)
{
	const struct options *d = &default_options;

	fprintf(f,
		"Usage: udc-stress [OPTION]...\n"
		"Benchmark and stress udcache and the name caches it is compared with: run a\n"
		"workload on several threads, check every answer, print rates, latency\n"
		"percentiles and memory.\n"
		"\n"
		"Options:\n"
		"  -w, --workload NAME     workload to run (default %s), one of:\n",
		d->workload);
	for (size_t i = 0; i < NR_WORKLOADS; i++)
		fprintf(f, "                          %-10s %s\n", workloads[i].name,
			workloads[i].summary);
	fprintf(f, "  -i, --impl NAME         the name cache the (--impl) workloads drive\n"
		   "                          (default %s), one of:\n",
		d->impl);
	for (const struct impl *const *im = impls; *im; im++)
		fprintf(f, "                          %-10s %s\n", (*im)->name, (*im)->summary);
	fprintf(f,
		"  -t, --threads N         worker threads, 1..%d (default %u)\n"
		"  -s, --seconds S         run time in seconds, fractions allowed (default %g;\n"
		"                          with --count, a time limit besides it; invalidate:\n"
		"                          the longest wait for the garbage to go, default %g)\n"
		"      --count N           (--impl) workloads: operations in all, over every\n"
		"                          thread, instead of --seconds (0: run for --seconds)\n"
		"  -n, --names N           hit, mixed: names to preload, 1..%" PRIu64
		" (default %" PRIu64 ");\n"
		"                          rmdir: negatives per removed directory (default %d);\n"
		"                          frag, invalidate: negatives to insert (default %d, %d)\n"
		"  -d, --dirs N            directories the names are spread over, 1..--names\n"
		"                          (default %" PRIu64 "; trickle 1; frag %d); rename: slots\n"
		"                          (half hold a directory); buildtrace: the search path\n"
		"                          (default %d)\n"
		"  -r, --negative-ratio F  hit, mixed, rmdir: share of the names that are\n"
		"                          negatives, 0..1 (default %g)\n"
		"      --dist D            hit: uniform or zipf (default %s)\n"
		"      --zipf-s S          hit: Zipf's exponent, 0..5 (default %g)\n"
		"  -m, --memory, --limit SIZE\n"
		"                          the cache's memory limit in bytes, suffix K, M, G or\n"
		"                          T for powers of 1024 (default 1G; trickle 16M; frag\n"
		"                          4G; hotset 8M; invalidate 2G; buildtrace 4M).  lfht\n"
		"                          and ck_hs have no limit; kernel reclaims only past it\n"
		"      --no-reclaim-thread no background reclaim thread (udcache:\n"
		"                          UDC_CFG_NO_RECLAIM_THREAD; kernel: direct reclaim\n"
		"                          only, no kswapd thread)\n"
		"  -l, --name-len N        name length in bytes, 1..%d (default %u; frag %d);\n"
		"                          names are padded to it (longer only when the index\n"
		"                          needs it)\n"
		"      --trace FILE        replay: an strace -f log (plain or .gz); repeat for\n"
		"                          several\n"
		"      --passes N          replay: passes over each trace, 1..100 (default %u)\n"
		"      --mem-csv FILE      (--impl) workloads: write the memory samples (every\n"
		"                          10 ms: seconds, bytes_used, RSS, negatives) to FILE\n"
		"      --object-size N     alloc: object size in bytes, a slab class: 64, 96,\n"
		"                          128, 192 or 256 (default %zu)\n"
		"      --remove-ratio F    frag: share of the names removed, 0..1 (default %g)\n"
		"      --hot N             hotset: names in the hot set (default %" PRIu64 ")\n"
		"      --period MS         hotset: the periodic job's period in ms (default %u)\n"
		"      --scan-dirs N       hotset: directories the scanners' unique names are\n"
		"                          spread over (default %" PRIu64 ")\n"
		"      --scan-client ID    hotset: the scanners' client id, 0 = anonymous (no\n"
		"                          per-client share) (default %" PRIu32 ")\n"
		"      --positives N       invalidate: positives (regular files) added to the\n"
		"                          directory before the negatives (default --names / 8,\n"
		"                          rounded up, so its bound admits every negative)\n"
		"      --headers N         buildtrace: headers in the universe (default %" PRIu64
		")\n"
		"      --includes N        buildtrace: distinct headers included per unit\n"
		"                          (default %" PRIu64 ")\n"
		"      --unique N          buildtrace: names per unit looked up once in a\n"
		"                          scratch directory (default %" PRIu64 ")\n"
		"      --units N           buildtrace: translation units (default %" PRIu64 ")\n"
		"      --scratch-dirs N    buildtrace: directories the unique names go to, in\n"
		"                          turn (default %" PRIu64 ")\n"
		"  -S, --seed N            seeds every PRNG and the hash key (default 0x%" PRIx64
		")\n"
		"  -j, --json              print one JSON object instead of text\n"
		"      --csv               (--impl) workloads: print a CSV header and one row\n"
		"  -h, --help              print this help and exit\n"
		"\n",
		MAX_THREADS, d->threads, d->seconds, INVAL_TIMEOUT_SEC, MAX_NAMES, d->names,
		RMDIR_DEFAULT_NEGATIVES, FRAG_NAMES, INVAL_NAMES, d->dirs, FRAG_DIRS, BUILD_DIRS,
		d->negative_ratio, d->dist, d->zipf_s, UDC_NAME_MAX, d->name_len, FRAG_NAME_LEN,
		d->passes, d->object_size, d->remove_ratio, d->hot, d->period_ms, d->scan_dirs,
		d->scan_client, d->headers, d->includes, d->unique, d->units, d->scratch_dirs,
		(uint64_t)DEFAULT_SEED);
	fputs("The (--impl) workloads check every answer they can know; a miss is never\n"
	      "wrong (bounded caches evict).  On a terminal a progress line shows elapsed\n"
	      "time, operations/s, memory and negatives held; the summary gives\n"
	      "latency percentiles (p50, p99, p99.9, p99.99, max) from a histogram.\n"
	      "\n"
	      "mixed: per thread 60% resolves of files, 15% resolves of absent names, 10%\n"
	      "create/unlink cycles, 10% path walks, 4% renames of its own file, 1% rmdir\n"
	      "of a directory holding 256 negatives.\n"
	      "hit: preload --names names (a --negative-ratio share negative) over --dirs\n"
	      "directories, then look them up (one call in 16 timed).\n"
	      "trickle: resolve unique names the store says do not exist, in --dirs\n"
	      "directories (default 1); every answer must be -ENOENT.\n"
	      "churn: a temporary file's life in a random directory: resolve (-ENOENT),\n"
	      "add, lookup, remove, lookup (never positive).\n"
	      "rmdir: thread 0 fills a fresh directory with --names negatives and removes it\n"
	      "(rmdir, or invalidate_dir and remove, in turn; timed apart) every 4096 of\n"
	      "its lookups; no name of it may be answered afterwards.  Every thread looks\n"
	      "up 4096 fixed names.\n"
	      "rename: --dirs slots in the root, half holding a directory with a file\n"
	      "\"leaf\"; thread 0 moves one to an empty slot every 8 operations, every thread\n"
	      "walks /s<slot>/leaf; an answer must be a path that existed at one moment.\n"
	      "replay: each --trace is parsed into its path lookups and changes; the\n"
	      "outcomes seen make the store; every lookup goes through walk and must give\n"
	      "the trace's answer.  Reports hits, misses, backend calls and memory.\n"
	      "\n"
	      "hash: time the engine's hash_name(); alloc: slab_alloc + slab_free_now,\n"
	      "slab_free_rcu, and mallocx + sdallocx pairs; frag: memory given back after\n"
	      "removing most of --names negatives, against malloc; hotset: a periodic job's\n"
	      "hot set under a scan of unique names; invalidate: udc_invalidate_dir and\n"
	      "udc_rmdir of a full directory, then its garbage; buildtrace: a build's\n"
	      "include searches against an unbounded cache.  These drive udcache only.\n"
	      "\n"
	      "Exit status: 0 success, 1 wrong answers or a runtime failure, 2 bad options.\n",
	      f);
}

enum {
	OPT_NO_RECLAIM_THREAD = 256,
	OPT_OBJECT_SIZE,
	OPT_REMOVE_RATIO,
	OPT_COUNT,
	OPT_HOT,
	OPT_PERIOD,
	OPT_SCAN_DIRS,
	OPT_SCAN_CLIENT,
	OPT_POSITIVES,
	OPT_HEADERS,
	OPT_INCLUDES,
	OPT_UNIQUE,
	OPT_UNITS,
	OPT_SCRATCH_DIRS,
	OPT_DIST,
	OPT_ZIPF_S,
	OPT_TRACE,
	OPT_PASSES,
	OPT_MEM_CSV,
	OPT_CSV,
};

static void parse_options(int argc, char **argv, struct options *opt)
{
	static const struct option longopts[] = {
		{ "workload", required_argument, NULL, 'w' },
		{ "threads", required_argument, NULL, 't' },
		{ "seconds", required_argument, NULL, 's' },
		{ "names", required_argument, NULL, 'n' },
		{ "dirs", required_argument, NULL, 'd' },
		{ "negative-ratio", required_argument, NULL, 'r' },
		{ "memory", required_argument, NULL, 'm' },
		{ "limit", required_argument, NULL, 'm' },
		{ "no-reclaim-thread", no_argument, NULL, OPT_NO_RECLAIM_THREAD },
		{ "name-len", required_argument, NULL, 'l' },
		{ "object-size", required_argument, NULL, OPT_OBJECT_SIZE },
		{ "remove-ratio", required_argument, NULL, OPT_REMOVE_RATIO },
		{ "count", required_argument, NULL, OPT_COUNT },
		{ "hot", required_argument, NULL, OPT_HOT },
		{ "period", required_argument, NULL, OPT_PERIOD },
		{ "scan-dirs", required_argument, NULL, OPT_SCAN_DIRS },
		{ "scan-client", required_argument, NULL, OPT_SCAN_CLIENT },
		{ "positives", required_argument, NULL, OPT_POSITIVES },
		{ "headers", required_argument, NULL, OPT_HEADERS },
		{ "includes", required_argument, NULL, OPT_INCLUDES },
		{ "unique", required_argument, NULL, OPT_UNIQUE },
		{ "units", required_argument, NULL, OPT_UNITS },
		{ "scratch-dirs", required_argument, NULL, OPT_SCRATCH_DIRS },
		{ "impl", required_argument, NULL, 'i' },
		{ "dist", required_argument, NULL, OPT_DIST },
		{ "zipf-s", required_argument, NULL, OPT_ZIPF_S },
		{ "trace", required_argument, NULL, OPT_TRACE },
		{ "passes", required_argument, NULL, OPT_PASSES },
		{ "mem-csv", required_argument, NULL, OPT_MEM_CSV },
		{ "csv", no_argument, NULL, OPT_CSV },
		{ "seed", required_argument, NULL, 'S' },
		{ "json", no_argument, NULL, 'j' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	int ch;

	*opt = default_options;
	opterr = 0; /* our messages, our exit status */
	while ((ch = getopt_long(argc, argv, ":w:i:t:s:n:d:r:m:l:S:jh", longopts, NULL)) != -1) {
		switch (ch) {
		case 'w':
			opt->workload = optarg;
			break;
		case 't':
			opt->threads = (unsigned)parse_u64("--threads", optarg, 1, MAX_THREADS);
			break;
		case 's':
			opt->seconds = parse_double("--seconds", optarg, 0.001, MAX_SECONDS);
			opt->seconds_set = true;
			break;
		case 'n':
			opt->names = parse_u64("--names", optarg, 1, MAX_NAMES);
			opt->names_set = true;
			break;
		case 'd':
			opt->dirs = parse_u64("--dirs", optarg, 1, MAX_NAMES);
			opt->dirs_set = true;
			break;
		case 'r':
			opt->negative_ratio = parse_double("--negative-ratio", optarg, 0.0, 1.0);
			break;
		case 'm':
			opt->memory = parse_size("--memory/--limit", optarg);
			if (opt->memory == 0)
				usage_error("--memory/--limit: must be more than 0");
			opt->memory_set = true;
			break;
		case OPT_NO_RECLAIM_THREAD:
			opt->no_reclaim_thread = true;
			break;
		case 'l':
			opt->name_len = (unsigned)parse_u64("--name-len", optarg, 1, UDC_NAME_MAX);
			opt->name_len_set = true;
			break;
		case OPT_OBJECT_SIZE:
			opt->object_size = (size_t)parse_u64("--object-size", optarg, 1, 4096);
			break;
		case OPT_REMOVE_RATIO:
			opt->remove_ratio = parse_double("--remove-ratio", optarg, 0.0, 1.0);
			break;
		case OPT_COUNT:
			opt->count = parse_u64("--count", optarg, 0, UINT64_MAX);
			opt->count_set = true;
			break;
		case OPT_HOT:
			opt->hot = parse_u64("--hot", optarg, 1, MAX_NAMES);
			break;
		case OPT_PERIOD:
			opt->period_ms = (unsigned)parse_u64("--period", optarg, 1, 3600000);
			break;
		case OPT_SCAN_DIRS:
			opt->scan_dirs = parse_u64("--scan-dirs", optarg, 1, MAX_SCAN_DIRS);
			break;
		case OPT_SCAN_CLIENT:
			opt->scan_client =
				(uint32_t)parse_u64("--scan-client", optarg, 0, UINT32_MAX);
			break;
		case OPT_POSITIVES:
			opt->positives = parse_u64("--positives", optarg, 0, MAX_NAMES);
			opt->positives_set = true;
			break;
		case OPT_HEADERS:
			opt->headers = parse_u64("--headers", optarg, 1, MAX_NAMES);
			break;
		case OPT_INCLUDES:
			opt->includes = parse_u64("--includes", optarg, 1, MAX_NAMES);
			break;
		case OPT_UNIQUE:
			opt->unique = parse_u64("--unique", optarg, 0, MAX_NAMES);
			break;
		case OPT_SCRATCH_DIRS:
			opt->scratch_dirs = parse_u64("--scratch-dirs", optarg, 1, MAX_SCAN_DIRS);
			break;
		case OPT_UNITS:
			opt->units = parse_u64("--units", optarg, 1, MAX_NAMES);
			break;
		case 'i':
			if (!impl_find(optarg))
				usage_error("--impl: unknown implementation '%s'", optarg);
			opt->impl = optarg;
			break;
		case OPT_DIST:
			if (strcmp(optarg, "uniform") != 0 && strcmp(optarg, "zipf") != 0)
				usage_error("--dist: 'uniform' or 'zipf', not '%s'", optarg);
			opt->dist = optarg;
			break;
		case OPT_ZIPF_S:
			opt->zipf_s = parse_double("--zipf-s", optarg, 0.0, 5.0);
			break;
		case OPT_TRACE: {
			const char **t = realloc(opt->traces, (opt->nr_traces + 1) * sizeof(*t));

			if (!t)
				die("out of memory for --trace");
			t[opt->nr_traces++] = optarg;
			opt->traces = t;
			break;
		}
		case OPT_PASSES:
			opt->passes = (unsigned)parse_u64("--passes", optarg, 1, 100);
			break;
		case OPT_MEM_CSV:
			opt->mem_csv = optarg;
			break;
		case OPT_CSV:
			opt->csv = true;
			break;
		case 'S':
			opt->seed = parse_u64("--seed", optarg, 0, UINT64_MAX);
			break;
		case 'j':
			opt->json = true;
			break;
		case 'h':
			usage(stdout);
			exit(0);
		case ':':
			usage_error("option '%s' needs an argument", argv[optind - 1]);
		default:
			if (optopt)
				usage_error("unknown option '-%c'", optopt);
			usage_error("unknown option '%s'", argv[optind - 1]);
		}
	}
	if (optind < argc)
		usage_error("unexpected argument '%s'", argv[optind]);
	if (opt->csv && opt->json)
		usage_error("--csv and --json: one or the other");
	if (opt->csv && !compare_has(opt->workload))
		usage_error("--csv: only for the (--impl) workloads");
	if (strcmp(opt->workload, "replay") == 0 && opt->nr_traces == 0)
		usage_error("replay: give at least one --trace FILE");
}

int main(int argc, char **argv)
{
	struct options opt;

	parse_options(argc, argv, &opt);
	for (size_t i = 0; i < NR_WORKLOADS; i++)
		if (strcmp(workloads[i].name, opt.workload) == 0) {
			int rc = workloads[i].run(&opt);

			free(opt.traces);
			return rc;
		}

	fprintf(stderr, "udc-stress: unknown workload '%s'; the workloads are:", opt.workload);
	for (size_t i = 0; i < NR_WORKLOADS; i++)
		fprintf(stderr, " %s", workloads[i].name);
	fputs("\nTry 'udc-stress --help'.\n", stderr);
	return 2;
}
