/* SPDX-License-Identifier: MIT */
/*
 * stress/stress.h - what udc-stress's files share.
 *
 * Owns nothing at run time: the declarations shared by udc-stress.c (the
 * program: options, workload table), common.c (messages, time, the report,
 * memory readings), the studies of udcache's own parts (studies.c: hash and
 * alloc; frag.c), policy.c (the reclaim-policy workloads hotset,
 * invalidate and buildtrace) and threads.c (the threads workload).  The PRNG is
 * here, inline, because the workers call it in their timed loops.
 *
 * Locking: none; nothing here is shared between threads except through the
 * callers' own rules (a struct report belongs to main; struct options is
 * written by main before any thread starts, then read-only).
 *
 * Ordering: none (no atomics here).
 */
#ifndef UDC_STRESS_H
#define UDC_STRESS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <time.h>

#include "include/udcache.h"

#define CACHELINE 64
#define ROOT_INO ((udc_ino)1)
#define DIR_INO_BASE ((udc_ino)0x100) /* directory k is DIR_INO_BASE + k */

static inline udc_ino dir_ino(uint64_t k)
{
	return DIR_INO_BASE + k;
}

/* ---------------------------------------------------------------------- */
/* Options: parsed by udc-stress.c, read-only afterwards. */

/* hotset --scan-ids: the client ids of scanner i (0..S-1) of S. */
enum scan_ids {
	SCAN_IDS_SAME,	   /* every scanner is --scan-client */
	SCAN_IDS_DISTINCT, /* scanner i is --scan-client + i */
	SCAN_IDS_ROTATE,   /* --scan-client + i, then S more every --rotate-every lookups */
	SCAN_IDS_COLLIDE,  /* the job's id + HOTSET_CLIENT_FOLD x (i + 1) */
	NR_SCAN_IDS
};
/* Their names on the command line and in the report (policy.c). */
extern const char *const scan_ids_names[NR_SCAN_IDS];

struct options {
	const char *workload;
	unsigned threads;
	uint64_t names;
	uint64_t dirs;
	double negative_ratio;
	double seconds;
	uint64_t seed;
	size_t memory; /* --memory or --limit */
	unsigned name_len;
	size_t object_size;    /* alloc */
	double remove_ratio;   /* frag */
	uint64_t count;	       /* trickle: total misses, 0 = none (run for --seconds) */
	uint64_t hot;	       /* hotset: names in the hot set */
	unsigned period_ms;    /* hotset: the periodic job's period */
	uint64_t scan_dirs;    /* hotset: directories the scanners' names are spread over */
	uint32_t scan_client;  /* hotset: the scanners' client id, 0 = anonymous */
	enum scan_ids scan_ids; /* hotset: how each scanner's client id is chosen */
	uint64_t rotate_every;	/* hotset --scan-ids rotate: lookups per client id */
	double head_start;	/* hotset: seconds the scanners run before the job starts */
	uint64_t positives;    /* invalidate: positives added before the negatives */
	uint64_t headers;      /* buildtrace: the universe of headers */
	uint64_t includes;     /* buildtrace: headers included per unit */
	uint64_t unique;       /* buildtrace: names looked up once per unit */
	uint64_t scratch_dirs; /* buildtrace: directories the unique names go round-robin to */
	uint64_t units;	       /* buildtrace: translation units */
	const char *impl;      /* --impl: udcache or a baseline (stress/impl.h) */
	const char *dist;      /* hit: "uniform" or "zipf" */
	double zipf_s;	       /* hit: Zipf's exponent */
	const char *mem_csv;   /* write the memory samples here (CSV) */
	const char **traces;   /* replay: the strace logs */
	unsigned nr_traces;
	unsigned passes;       /* replay: passes over each trace */
	unsigned copies;       /* replay: copies of each trace's tree in the store */
	bool mix;	       /* replay: every --trace in one replay, interleaved */
	size_t max_entries;    /* --entries: lru-mutex, s3fifo: an entry limit */
	size_t optimum;	       /* replay: Belady's optimum at this many entries */
	unsigned churn_threads; /* threads: short-lived threads at a time (0: none) */
	bool no_reclaim_thread;
	unsigned rcu_stall_ms;  /* hold the call_rcu thread this long in every 2x (0: never) */
	bool writer;	       /* invalidate: the churn thread adds unique negatives */
	bool json;
	bool csv;
	/* Given on the command line (frag and the policy workloads have defaults of their own). */
	bool names_set, dirs_set, name_len_set, memory_set, seconds_set, count_set;
	bool positives_set;
};

/* --rcu-stall (rcu_stall.c): start holding the call_rcu thread (@ms 0:
 * nothing); stop, returning the rounds it was held. */
void rcu_stall_start(unsigned ms);
uint64_t rcu_stall_stop(void);

/* ---------------------------------------------------------------------- */
/* Messages (common.c) */

/* A runtime failure: "udc-stress: <message>" on stderr, exit 1. */
void die(const char *fmt, ...) __attribute__((noreturn, format(printf, 1, 2)));
/* Bad command line: say what and how to get help, exit 2. */
void usage_error(const char *fmt, ...) __attribute__((noreturn, format(printf, 1, 2)));
/* udc_lookup's outcome or a -errno, as text. */
const char *rc_name(int rc);

/* ---------------------------------------------------------------------- */
/* Random numbers: splitmix64 to seed, xorshift64* per thread. */

static inline uint64_t splitmix64(uint64_t *s)
{
	uint64_t z = (*s += UINT64_C(0x9e3779b97f4a7c15));

	z = (z ^ (z >> 30)) * UINT64_C(0xbf58476d1ce4e5b9);
	z = (z ^ (z >> 27)) * UINT64_C(0x94d049bb133111eb);
	return z ^ (z >> 31);
}

static inline uint64_t mix64(uint64_t x)
{
	return splitmix64(&x);
}

static inline uint64_t xorshift64star(uint64_t *s)
{
	uint64_t x = *s;

	x ^= x >> 12;
	x ^= x << 25;
	x ^= x >> 27;
	*s = x;
	return x * UINT64_C(0x2545f4914f6cdd1d);
}

/* Uniform in [0, n) without a division (Lemire's multiply-shift). */
static inline uint64_t rand_below(uint64_t *s, uint64_t n)
{
	return (uint64_t)(((unsigned __int128)xorshift64star(s) * n) >> 64);
}

/* ---------------------------------------------------------------------- */
/* Time (common.c) */

double now_sec(void);
/* CLOCK_MONOTONIC in nanoseconds: what the latency histograms are fed. */
static inline uint64_t now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}
/* Sleep until CLOCK_MONOTONIC reaches *deadline. */
void sleep_until(const struct timespec *deadline);

/* ---------------------------------------------------------------------- */
/* Report (common.c): the same calls print aligned text or one JSON object. */

#define MAX_WARNINGS 8
#define REP_MAX_DEPTH 4

struct report {
	bool json;
	bool need_comma; /* json: a member was printed at this depth */
	int depth;	 /* json: nesting, for indentation */
	/* text: label prefix inside objects ("stats.", nested: "a.b."), and
	 * its length before each open object */
	char prefix[128];
	size_t prefix_len[REP_MAX_DEPTH];
	int text_depth;
	int nr_warnings;
	char warnings[MAX_WARNINGS][256];
};

/* What made a report: udcache's version, the build type and compiler, the
 * date (UTC) and the machine (CPU model, CPUs, kernel).  Every report
 * (rep_begin, text or JSON, and the CSV rows) carries them. */
struct build_info {
	const char *version;   /* udc_version() */
	const char *build;     /* "RelWithDebInfo, gcc 12.2.0" (+ sanitizers) */
	char date[32];         /* "2026-12-04T15:40:00Z", when the run began */
	char machine[320];     /* "2 x Intel(R) Xeon(R) ..., Linux 6.1.0" */
};
const struct build_info *build_info(void);

/* The report begins with build_info() ("build" in JSON). */
void rep_begin(struct report *r, bool json);
void rep_u64(struct report *r, const char *key, const char *label, uint64_t v);
void rep_i64(struct report *r, const char *key, const char *label, int64_t v);
void rep_hex(struct report *r, const char *key, const char *label, uint64_t v);
void rep_f64(struct report *r, const char *key, const char *label, double v, int prec);
void rep_str(struct report *r, const char *key, const char *label, const char *v);
void rep_bool(struct report *r, const char *key, const char *label, bool v);
/* A nested object (up to REP_MAX_DEPTH deep); in text its members' labels get "prefix". */
void rep_obj_begin(struct report *r, const char *key, const char *prefix);
void rep_obj_end(struct report *r);
/* An array (JSON only; in text its elements follow one another).  Its
 * elements are objects begun with key NULL. */
void rep_arr_begin(struct report *r, const char *key);
void rep_arr_end(struct report *r);
/* A warning: a WARNING line in text; in JSON, the "warnings" array and stderr. */
void rep_warn(struct report *r, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
void rep_end(struct report *r);
/* Every field of struct udc_stats, as the object "stats" (warns if membarrier is
 * 0), with @rss (the process's resident bytes read with the stats) after
 * bytes_used. */
void rep_udc_stats(struct report *r, const struct udc_stats *st, uint64_t rss);

/* ---------------------------------------------------------------------- */
/* Memory readings (common.c) */

/* The process's resident bytes (/proc/self/statm). */
uint64_t rss_bytes(void);
/* The cache's stats.bytes_used. */
uint64_t cache_bytes(udc_cache *c);

/* ---------------------------------------------------------------------- */
/* The reclaim-policy workloads (policy.c, buildtrace.c); defaults where they differ. */

#define RMDIR_DEFAULT_NEGATIVES 100000	 /* rmdir: --names default */
#define REPLAY_LIMIT ((size_t)64 << 20) /* replay: --memory default */
#define REPLAY_MAX_COPIES 100000	 /* replay: --copies at most (REPLAY_MAX_LANES) */
/*
 * replay: --copies enough for each of the 8 project traces (tests/traces)
 * to fill its cache to the limit (2M, 4M, 16M) and evict, in one pass.  The
 * smallest (make-build, git-status, node-require) add ~6-7 KB of entries
 * per copy, so 300, 600 and 2600 copies just reach the limits; these are
 * ~1.3 times that (tar-rm, the largest, adds ~220 KB per copy and binds from
 * ~10 copies at 2M).  Documented in --help; scripts/bench_issue13.sh's
 * replay row uses them.  (Issue 13's replay figures in BENCHMARKS.md were
 * taken with the copies replayed one after another; since issue 14 they
 * are separate process trees, interleaved: the same entries per copy.)
 */
#define REPLAY_COPIES_2M 400
#define REPLAY_COPIES_4M 800
#define REPLAY_COPIES_16M 3200
#define TRICKLE_LIMIT ((size_t)16 << 20)
#define HOTSET_HOT 20000
#define HOTSET_PERIOD_MS 100
#define HOTSET_LIMIT ((size_t)8 << 20)
#define INVAL_NAMES 10000000
#define INVAL_LIMIT ((size_t)2 << 30)
#define INVAL_TIMEOUT_SEC 60.0	/* the longest wait for the garbage to go */
#define HOTSET_WARMUP_PERIODS 3 /* periods not measured */
#define HOTSET_CLIENT_JOB 1	/* struct udc_call.client of the periodic job, */
#define HOTSET_CLIENT_SCAN 2	/* and of the scanners */
/*
 * --scan-ids collide: ids congruent modulo this one share the job's
 * admission slot in the library as it is at issue 14 (shrink/admit.c
 * folds ids onto 63 tags); a colliding id is the job's + a multiple.
 */
#define HOTSET_CLIENT_FOLD 63
#define HOTSET_ROTATE_EVERY 1000 /* --rotate-every default: below any client's floor (4096) */
#define HOTSET_HOT_PER_DIR 4096	 /* the hot set takes a directory per 4096 names */
#define INVAL_GONE_PCT 10	/* gone: back to before the fill + 10% of its growth */
#define INVAL_BEFORE_SEC 2.0	/* invalidate: the churn thread's window before the call */
#define INVAL_WRITER_DIRS 1024	/* invalidate --writer: directories its names go round-robin to */
#define HOTSET_SCAN_DIRS 64	/* the scanners' unique names are spread over these */
#define BUILD_DIRS 8		/* buildtrace: the include search path */
#define BUILD_HEADERS 5000
#define BUILD_INCLUDES 60 /* headers per unit, Zipf(1.0) over the universe */
#define BUILD_UNIQUE 200  /* names per unit looked up once (scratch directory) */
#define BUILD_UNITS 20000
#define BUILD_LIMIT ((size_t)4 << 20)
#define BUILD_UNBOUNDED ((size_t)16 << 30) /* the reference cache's limit */
#define BUILD_SAMPLE_UNITS 100		   /* nr_negative is sampled every 100 units */
#define THREADS_LIMIT ((size_t)16 << 20)   /* threads: --limit default */
#define THREADS_NAMES_EACH 8		   /* threads: --names default (per thread) */
#define THREADS_MAX 4096		   /* threads: --threads max (others: 1024) */

/* A cache of limit bytes for the policy studies (--no-reclaim-thread honoured). */
udc_cache *policy_cache(const struct options *opt, size_t limit, const struct udc_backend *be);
/* Directories 0..n-1 (dir_ino(k)), each the name "d<k>" in the root. */
void policy_add_dirs(udc_cache *c, unsigned n);

int run_hotset(const struct options *opt);
int run_invalidate(const struct options *opt);
int run_buildtrace(const struct options *opt);
/* stress/threads.c: many parked threads, one working, memory sampled every 1 ms. */
int run_threads_workload(const struct options *opt);

/* ---------------------------------------------------------------------- */
/* The studies of udcache's own parts (studies.c, frag.c) */

#define FRAG_NAMES 2000000 /* frag's defaults where they differ from hit's */
#define FRAG_DIRS 100
#define FRAG_NAME_LEN 24
#define FRAG_MEMORY ((size_t)4 << 30)

/* Each returns the exit status: 0, or 1 on a wrong answer or a failed check. */
int run_hash(const struct options *opt);
int run_alloc(const struct options *opt);
int run_listing(const struct options *opt);   /* stress/studies.c */
int run_frag(const struct options *opt);

#endif /* UDC_STRESS_H */
