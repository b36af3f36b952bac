/* SPDX-License-Identifier: MIT */
/*
 * stress/studies.c - the workloads that study udcache's own parts, one at a
 * time, beside the reclaim studies of stress/policy.c: hash and alloc
 * (frag is stress/frag.c).
 *
 * Owns: the studies' worker threads (struct bench, struct worker,
 * run_threads(): start on a barrier, stop after --seconds), their name
 * table, and the hash and alloc workloads with their reports.  It reaches
 * under the public header: `hash` times the engine's internal hash_name()
 * (engine/hash.h) and `alloc` drives slab/ (slab/slab.h) directly, both
 * linked in from the static library; alloc's malloc baseline calls
 * jemalloc (mallocx, sdallocx: stress/studies.h).
 *
 * Workloads:
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
 *  - listing: adds into a listed directory and not, and one udc_readdir
 *           (run_listing, below).
 *
 * Locking: none of its own.  Each struct worker is written only by its own
 * thread while the workers run, and read by main only after pthread_join().
 * The read-only inputs (options, name table, slab pointer, hash key) are
 * written by main before the start barrier and never again.
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
 *
 * Limitations:
 *  - Rates are per thread, each measured on its own thread's clock; the
 *    total rate is their sum.
 *  - alloc: one object size per run, and every object is freed by the
 *    thread that allocated it (no cross-thread frees).  slab_rcu's frees
 *    run later on liburcu's call_rcu thread, whose time is not in the
 *    workers' clocks (on a machine with few cores it competes with them).
 *  - In sanitizer builds the malloc baselines use malloc/free instead of
 *    jemalloc (as engine/alloc.c does), so that ASan checks them; their
 *    jemalloc figures are then meaningless.
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif

#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <pthread.h>
#include <stdalign.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <urcu/urcu-memb.h> /* alloc: slab's callers register with urcu-memb */

#include "include/udcache.h"
#include "engine/hash.h" /* the hash workload only: internal, from the static library */
#include "slab/slab.h"	 /* the alloc workload only: internal, from the static library */
#include "stress/stress.h"
#include "stress/studies.h"

#define HASH_RING 4096	      /* names the hash workload cycles through (stay in L1/L2) */
#define ALLOC_WINDOW 1024     /* live objects per alloc thread (FIFO); power of 2 */
#define ALLOC_SLAB_RETAINED 2 /* alloc's slab keeps 2 empty pages, as the engine's do */

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

/*
 * Chains under chosen names.  CHAIN_BUCKETS buckets (rculfhash's bucket
 * is the hash's low bits), CHAIN_BUCKETS names: a load of one.
 *  - sequential: "f0", "f1", ... in one directory, names an attacker need
 *    not choose at all;
 *  - chosen: names an attacker picked, out of many candidates, because
 *    their hash under a key it knows (the attacker's) falls in bucket 0,
 *    then hashed with the key it does not know (the cache's), and, to show
 *    what a leaked key costs, with the attacker's key.
 * The longest chain of each, against about 8 for random hashes (the
 * largest of 2^16 Poisson(1) counts).
 */
#define CHAIN_BUCKETS (1u << 16)

static unsigned chain_max(const uint64_t *h, unsigned n)
{
	static uint32_t count[CHAIN_BUCKETS];
	unsigned max = 0;

	memset(count, 0, sizeof(count));
	for (unsigned i = 0; i < n; i++) {
		uint32_t c = ++count[h[i] & (CHAIN_BUCKETS - 1)];
		if (c > max)
			max = c;
	}
	return max;
}

struct chains {
	unsigned sequential, chosen_secret, chosen_known;
	uint64_t candidates;   /* names the attacker hashed to pick its chosen ones */
};

static struct chains chains_measure(const struct hash_key *cache_key, uint64_t seed)
{
	uint64_t *h = malloc(CHAIN_BUCKETS * sizeof(*h)), *hk = malloc(CHAIN_BUCKETS * sizeof(*hk));
	/* h: under the cache's key; hk: under the chooser's (kept to count its
	 * chain like the others, not assumed from the choice) */
	struct hash_key atk;
	uint64_t s = seed ^ 0xa77ac4e5ull, atk_words[2] = { splitmix64(&s), splitmix64(&s) | 1 };
	struct chains r = { 0 };
	char nm[32];

	if (!h || !hk)
		die("out of memory for the chain study");
	if (hash_key_init(&atk, atk_words))
		die("hash_key_init failed");
	for (unsigned i = 0; i < CHAIN_BUCKETS; i++) {
		int n = snprintf(nm, sizeof(nm), "f%u", i);
		h[i] = hash_name(cache_key, 2, nm, (size_t)n);
	}
	r.sequential = chain_max(h, CHAIN_BUCKETS);
	/* The attacker keeps a name when its hash's low 16 bits are 0: one in
	 * 2^16 candidates, so CHAIN_BUCKETS of them take 2^32 hashes; a chain
	 * of 1,024 is already enough to show it (2^26 hashes, a second). */
	unsigned kept = 0, want = 1024;
	for (uint64_t i = 0; kept < want; i++) {
		int n = snprintf(nm, sizeof(nm), "x%" PRIx64, i);
		uint64_t ha = hash_name(&atk, 2, nm, (size_t)n);
		if ((ha & (CHAIN_BUCKETS - 1)) == 0) {
			h[kept] = hash_name(cache_key, 2, nm, (size_t)n);
			hk[kept++] = ha;
		}
		r.candidates = i + 1;
	}
	r.chosen_secret = chain_max(h, kept);
	r.chosen_known = chain_max(hk, kept);
	free(h);
	free(hk);
	return r;
}

int run_hash(const struct options *opt)
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
	struct chains ch = chains_measure(&key, opt->seed);
	rep_u64(&r, "chain_max_sequential", "longest chain, 65,536 names f0.. in 65,536 buckets", ch.sequential);
	rep_u64(&r, "chain_max_chosen_secret_key",
		"longest chain, 1,024 names chosen for one bucket, cache key secret", ch.chosen_secret);
	rep_u64(&r, "chain_max_chosen_known_key",
		"longest chain, the same names, cache key known to the chooser", ch.chosen_known);
	rep_u64(&r, "chain_candidates", "names the chooser hashed to find them", ch.candidates);
	rep_end(&r);
	fflush(stdout);

	free(w);
	name_table_free(&names);
	return 0;
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
		slab_release_open(b->slab, UINT64_MAX);
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

/* Run allocator k on --threads threads for --seconds; its figures into *res. */
static void alloc_run_kind(const struct options *opt, enum alloc_kind k, struct alloc_result *res)
{
	struct bench b = { .opt = opt };
	struct worker *w;

	if (k != ALLOC_MALLOC)
		b.slab = alloc_slab_create(opt, &b.slab_cls);
	w = run_threads(&b, alloc_workers[k]);
	for (unsigned i = 0; i < opt->threads; i++) {
		res->pairs += w[i].ops;
		res->wrong += w[i].wrong;
		if (w[i].loop_elapsed > 0)
			res->rate += (double)w[i].ops / w[i].loop_elapsed;
	}
	free(w);
	if (b.slab) {
		struct slab_stats st;

		/* Every slab_free_rcu done and its emptied pages released. */
		slab_rcu_barrier(b.slab);
		slab_stats(b.slab, &st);
		res->pages_allocated = st.pages_allocated;
		res->objects_left = st.objects;
		res->check = slab_check(b.slab);
		slab_destroy(b.slab);
	}
}

/* One allocator's figures: "<kind>_pairs", ... */
static void alloc_rep_kind(struct report *r, const struct options *opt, enum alloc_kind k,
			   const struct alloc_result *res)
{
	const char *n = alloc_kind_name[k];
	double rate = res->rate;
	char key[64], label[64];

	snprintf(key, sizeof(key), "%s_pairs", n);
	snprintf(label, sizeof(label), "%s pairs", n);
	rep_u64(r, key, label, res->pairs);
	snprintf(key, sizeof(key), "%s_pairs_per_sec", n);
	snprintf(label, sizeof(label), "%s pairs/s", n);
	rep_f64(r, key, label, rate, 0);
	snprintf(key, sizeof(key), "%s_pairs_per_sec_per_thread", n);
	snprintf(label, sizeof(label), "%s pairs/s per thread", n);
	rep_f64(r, key, label, rate / opt->threads, 0);
	snprintf(key, sizeof(key), "%s_ns_per_pair", n);
	snprintf(label, sizeof(label), "%s ns/pair (per thread)", n);
	rep_f64(r, key, label, rate > 0 ? 1e9 * opt->threads / rate : 0.0, 2);
	if (k == ALLOC_MALLOC)
		return;
	snprintf(key, sizeof(key), "%s_pages_allocated", n);
	snprintf(label, sizeof(label), "%s pages allocated", n);
	rep_u64(r, key, label, res->pages_allocated);
}

/* Warn about allocator k's failed checks; whether there was one. */
static bool alloc_warn_kind(struct report *r, enum alloc_kind k, const struct alloc_result *res)
{
	bool failed = false;

	if (res->wrong) {
		rep_warn(r, "%s: %" PRIu64 " freed objects did not hold their tag",
			 alloc_kind_name[k], res->wrong);
		failed = true;
	}
	if (k == ALLOC_MALLOC)
		return failed;
	if (res->check) {
		rep_warn(r, "%s: slab_check: %s", alloc_kind_name[k], strerror(-res->check));
		failed = true;
	}
	if (res->objects_left) {
		rep_warn(r, "%s: %" PRIu64 " objects still allocated after every free",
			 alloc_kind_name[k], res->objects_left);
		failed = true;
	}
	return failed;
}

int run_alloc(const struct options *opt)
{
	struct alloc_result res[NR_ALLOC_KINDS] = { 0 };
	struct report r;
	bool failed = false;

	urcu_memb_register_thread(); /* main: slab_rcu_barrier, slab_stats, slab_check */
	for (unsigned k = 0; k < NR_ALLOC_KINDS; k++)
		alloc_run_kind(opt, k, &res[k]);
	urcu_memb_unregister_thread();

	rep_begin(&r, opt->json);
	rep_str(&r, "workload", "workload", "alloc");
	rep_str(&r, "version", "udcache version", udc_version());
	rep_u64(&r, "threads", "threads", opt->threads);
	rep_u64(&r, "object_size", "object size", opt->object_size);
	rep_u64(&r, "window", "live objects per thread", ALLOC_WINDOW);
	rep_f64(&r, "seconds", "seconds per allocator", opt->seconds, 3);
	rep_u64(&r, "slab_retained_max", "slab retained_max", ALLOC_SLAB_RETAINED);
	for (unsigned k = 0; k < NR_ALLOC_KINDS; k++)
		alloc_rep_kind(&r, opt, k, &res[k]);
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
	for (unsigned k = 0; k < NR_ALLOC_KINDS; k++)
		failed |= alloc_warn_kind(&r, k, &res[k]);
	if (failed)
		rep_warn(&r, "FAILED");
	rep_end(&r);
	fflush(stdout);
	return failed ? 1 : 0;
}

/*
 * listing: what a directory's listing (udc_readdir, engine/listing.c)
 * costs and gives, side by side in one run.  --names positives (names of
 * 13 bytes, "file-%08u") are added to one directory of a fresh cache,
 * once with a fill begun first and each name added with udc_add_listed
 * (a gateway's READDIRPLUS: each carries its place in the listing) and
 * once with udc_add and no fill; then the filled directory is completed
 * and listed once, whole.  Reports ns and bytes_used per name added for
 * both, and ns per name listed.  Exit status 1 if a call failed or the
 * listing gave another number of names.
 */
#define LISTING_NAMES 200000

struct listing_pass {
	double add_ns, bytes, list_ns;
	uint64_t listed;
	int rc;
};

static int listing_count(void *arg, const struct udc_dirent *ent)
{
	(void)ent;
	++*(uint64_t *)arg;
	return 0;
}

static struct listing_pass listing_run(uint64_t names, bool listed)
{
	struct udc_config cfg = UDC_CONFIG_INIT;
	struct listing_pass out = { .rc = 0 };
	struct udc_fill f;
	char name[32];

	cfg.root = 1;
	cfg.memory_limit = (size_t)1 << 30;
	cfg.flags = UDC_CFG_NO_RECLAIM_THREAD;
	udc_cache *c = udc_create(&cfg);
	if (!c)
		die("listing: udc_create: %s", strerror(errno));
	if (listed && (out.rc = udc_dir_fill_begin(c, 2, &f)) != 0)
		goto done;
	uint64_t t0 = now_ns();
	for (uint64_t i = 0; i < names && !out.rc; i++) {
		struct udc_attr a = { .ino = 1000 + i, .type = UDC_TYPE_REG, .cookie = i };
		int len = snprintf(name, sizeof(name), "file-%08llu", (unsigned long long)i);
		/* Listed: a gateway's READDIRPLUS, each name through
		 * udc_add_listed (whose fills refused their own names on a
		 * shared stripe until stop 22: this run then failed). */
		out.rc = listed ? udc_add_listed(c, 2, name, (size_t)len, &a, NULL, 0, 0, &f) :
				  udc_add(c, 2, name, (size_t)len, &a);
	}
	out.add_ns = (double)(now_ns() - t0) / (double)names;
	struct udc_stats st = { .size = sizeof(st) };
	udc_stats_get(c, &st);
	out.bytes = (double)st.bytes_used / (double)names;
	if (!listed || out.rc || (out.rc = udc_dir_complete(c, 2, &f)) != 0)
		goto done;
	t0 = now_ns();
	out.rc = udc_readdir(c, 2, 0, listing_count, &out.listed);
	out.list_ns = out.listed ? (double)(now_ns() - t0) / (double)out.listed : 0.0;
done:
	udc_destroy(c);
	return out;
}

int run_listing(const struct options *opt)
{
	uint64_t names = opt->names_set ? opt->names : LISTING_NAMES;
	struct listing_pass plain = listing_run(names, false);
	struct listing_pass listed = listing_run(names, true);
	bool failed = plain.rc || listed.rc || listed.listed != names;
	struct report r;

	rep_begin(&r, opt->json);
	rep_str(&r, "workload", "workload", "listing");
	rep_str(&r, "version", "udcache version", udc_version());
	rep_u64(&r, "names", "names (13 bytes) in one directory", names);
	rep_f64(&r, "add_ns_plain", "ns/add plain", plain.add_ns, 1);
	rep_f64(&r, "add_ns_listed", "ns/add listed", listed.add_ns, 1);
	rep_f64(&r, "bytes_plain", "bytes/name plain", plain.bytes, 1);
	rep_f64(&r, "bytes_listed", "bytes/name listed", listed.bytes, 1);
	rep_u64(&r, "listed", "names listed", listed.listed);
	rep_f64(&r, "readdir_ns", "ns/name listed", listed.list_ns, 1);
	if (failed) {
		rep_str(&r, "error", "error", plain.rc ? strerror(-plain.rc) :
					      listed.rc ? strerror(-listed.rc) : "names missing");
		rep_warn(&r, "FAILED");
	}
	rep_end(&r);
	fflush(stdout);
	return failed ? 1 : 0;
}
