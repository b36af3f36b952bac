/* SPDX-License-Identifier: MIT */
/*
 * stress/udc-stress.c - udcache's benchmark and stress driver.
 *
 * Owns: the udc-stress program: option parsing, the workload table and
 * main.  It owns no library state and runs no workload of its own: each
 * row of the table names a run function in another file, which prepares
 * what its workload needs, runs its threads, checks and prints its report
 * (stress/common.c's rep_*: text or JSON).
 *
 * Structure: workloads[] is a table of {name, summary, run}.  The
 * workloads that compare implementations (mixed, hit, trickle, churn, rmdir,
 * rename: stress/compare.c; replay: stress/replay/) run against --impl,
 * udcache or a baseline in stress/baselines/, through stress/impl.h.  The
 * others study udcache's own parts: hash and alloc in stress/studies.c,
 * frag in stress/frag.c, hotset, invalidate and buildtrace in
 * stress/policy.c, threads (many parked threads, one working) in
 * stress/threads.c.  To add a workload: write a run function (or a compare.c
 * operation) and add a row.
 *
 * Locking: none; main parses the options and runs one workload, whose
 * threads are its own file's business.  struct options is written before
 * any thread starts, then read-only.
 *
 * Ordering: none (no atomics here).
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif

#include <errno.h>
#include <getopt.h>
#include <inttypes.h>
#include <math.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "include/udcache.h"
#include "tests/diffstress/diffstress.h" /* the diff workload */
#include "stress/compare.h"
#include "stress/impl.h"
#include "stress/stress.h"

#define DEFAULT_SEED UINT64_C(0x5eed0dcac4e5eed5)
#define MAX_THREADS 1024
#define MAX_NAMES (UINT64_C(1) << 26)
#define MAX_SECONDS 86400.0
#define MAX_SCAN_DIRS 65536

/* ---------------------------------------------------------------------- */
/* Options (struct options is in stress.h) */

static const struct options default_options = {
	.workload = "mixed",
	.impl = "udcache",
	.dist = "uniform",
	.zipf_s = 0.99,
	.passes = 2,
	.copies = 1,
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
	.scan_ids = SCAN_IDS_SAME,
	.rotate_every = HOTSET_ROTATE_EVERY,
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
	{ "listing", "a directory's listing: adds listed and not, bytes, udc_readdir ns/name",
	  run_listing },
	{ "hotset", "hit ratio of a periodic job's hot set under a scan of unique names",
	  run_hotset },
	{ "invalidate", "time udc_invalidate_dir/udc_rmdir of a full directory, then its garbage",
	  run_invalidate },
	{ "buildtrace", "a build's include searches: negative hits kept vs an unbounded cache",
	  run_buildtrace },
	{ "threads", "many threads add a few names and park; one works, timed; 1 ms memory",
	  run_threads_workload },
	{ "diff", "every answer checked against a versioned store during renames, rmdirs, fills",
	  run_diff },
};

#define NR_WORKLOADS (sizeof(workloads) / sizeof(workloads[0]))

/* The synopsis and the two lists: workloads and implementations. */
static void usage_lists(FILE *f)
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
}

/* The options every workload reads, and replay's. */
static void usage_general(FILE *f)
{
	const struct options *d = &default_options;

	fprintf(f,
		"  -t, --threads N         worker threads, 1..%d (default %u); threads: the\n"
		"                          parked threads, 1..%d\n"
		"      --churn-threads K   threads: besides, K short-lived threads at a time,\n"
		"                          created, adding --names names and retired all along\n"
		"                          (default 0)\n"
		"  -s, --seconds S         run time in seconds, fractions allowed (default %g;\n"
		"                          with --count, a time limit besides it; invalidate:\n"
		"                          the longest wait for the garbage to go, default %g)\n"
		"      --count N           (--impl) workloads: operations in all, over every\n"
		"                          thread, instead of --seconds (0: run for --seconds)\n"
		"  -n, --names N           hit, mixed: names to preload, 1..%" PRIu64
		" (default %" PRIu64 ");\n"
		"                          rmdir: negatives per removed directory (default %d);\n"
		"                          frag, invalidate: negatives to insert (default %d, %d);\n"
		"                          threads: names each parked thread adds, half\n"
		"                          positive (default %d)\n"
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
		"                          4G; hotset 8M; invalidate 2G; buildtrace 4M; threads\n"
		"                          16M).  lfht and ck_hs have no limit; kernel reclaims\n"
		"                          only past it\n"
		"      --no-reclaim-thread no background reclaim thread (udcache:\n"
		"                          UDC_CFG_NO_RECLAIM_THREAD; kernel: direct reclaim\n"
		"                          only, no kswapd thread)\n"
		"      --rcu-stall MS      hold liburcu's call_rcu thread MS ms of every 2 MS\n"
		"                          (1..10000), as on a host that starves it: the\n"
		"                          frees the cache queues wait (the workloads run\n"
		"                          with workers; not replay)\n"
		"  -l, --name-len N        name length in bytes, 1..%d (default %u; frag %d);\n"
		"                          names are padded to it (longer only when the index\n"
		"                          needs it)\n"
		"      --trace FILE        replay: an strace -f log (plain or .gz); repeat for\n"
		"                          several\n"
		"      --passes N          replay: passes over each trace, 1..100 (default %u)\n"
		"      --copies N          replay: the store holds N copies of each trace's\n"
		"                          tree, separate process trees under /c<k> with\n"
		"                          inos of their own, their events interleaved at\n"
		"                          random (--seed), so that the cache outgrows its\n"
		"                          limit; 1..%u (default %u).  N = %u, %u and %u\n"
		"                          make each of the 8 project traces bind a limit\n"
		"                          of 2M, 4M and 16M\n"
		"      --mix               replay: every --trace (times --copies) in one\n"
		"                          replay, interleaved, one report\n"
		"      --entries N         replay with lru-mutex, s3fifo: hold at most N\n"
		"                          entries (s3fifo without it: --memory / 128 bytes)\n"
		"      --optimum N         replay: also Belady's optimum (MIN) at N entries\n"
		"                          over the components the walks looked up\n",
		MAX_THREADS, d->threads, THREADS_MAX, d->seconds, INVAL_TIMEOUT_SEC, MAX_NAMES,
		d->names, RMDIR_DEFAULT_NEGATIVES, FRAG_NAMES, INVAL_NAMES, THREADS_NAMES_EACH,
		d->dirs, FRAG_DIRS, BUILD_DIRS, d->negative_ratio, d->dist, d->zipf_s, UDC_NAME_MAX,
		d->name_len, FRAG_NAME_LEN, d->passes, REPLAY_MAX_COPIES, d->copies,
		REPLAY_COPIES_2M, REPLAY_COPIES_4M, REPLAY_COPIES_16M);
}

/* The studies' options, the seed and the output formats. */
static void usage_studies(FILE *f)
{
	const struct options *d = &default_options;

	fprintf(f,
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
		"      --scan-ids MODE     hotset: the client id of scanner i (0..S-1, S =\n"
		"                          --threads - 1): same (default: --scan-client),\n"
		"                          distinct (--scan-client + i), rotate (--scan-client\n"
		"                          + i, then S more every --rotate-every lookups: a\n"
		"                          new client each time), collide (the job's id %d +\n"
		"                          %d x (i + 1): ids the library folds onto the job's\n"
		"                          tag); distinct and rotate need --scan-client >= 2\n"
		"      --rotate-every N    hotset --scan-ids rotate: lookups per client id\n"
		"                          (default %" PRIu64 ")\n"
		"      --head-start S      hotset: the scanners run S seconds before the job's\n"
		"                          first period, so that its set is built under their\n"
		"                          pressure (default 0: they start together)\n"
		"      --positives N       invalidate: positives (regular files) added to the\n"
		"                          directory before the negatives (default --names / 8,\n"
		"                          rounded up, so its bound admits every negative)\n"
		"      --writer            invalidate: the churn thread adds unique negatives\n"
		"                          over %d other directories instead of looking up\n"
		"                          4096 names (garbage gone: by the negatives held)\n"
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
		"      --version           print the version, the build and the machine, and exit\n"
		"\n",
		d->object_size, d->remove_ratio, d->hot, d->period_ms, d->scan_dirs, d->scan_client,
		HOTSET_CLIENT_JOB, HOTSET_CLIENT_FOLD, d->rotate_every, INVAL_WRITER_DIRS,
		d->headers, d->includes, d->unique, d->units, d->scratch_dirs,
		(uint64_t)DEFAULT_SEED);
}

/* What the workloads check and do, and the exit status. */
static void usage_notes(FILE *f)
{
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
	      "include searches against an unbounded cache; threads: --threads threads each\n"
	      "add --names names in a directory of their own and block, then one thread\n"
	      "resolves unique names (one in four positive) over --dirs directories, timed,\n"
	      "while bytes_used and RSS are sampled every 1 ms (--churn-threads: threads\n"
	      "created and retired all along besides).  These drive udcache only.\n"
	      "\n"
	      "Exit status: 0 success, 1 wrong answers or a runtime failure, 2 bad options.\n",
	      f);
}

static void usage(FILE *f)
{
	usage_lists(f);
	usage_general(f);
	usage_studies(f);
	usage_notes(f);
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
	OPT_SCAN_IDS,
	OPT_ROTATE_EVERY,
	OPT_HEAD_START,
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
	OPT_COPIES,
	OPT_MIX,
	OPT_ENTRIES,
	OPT_OPTIMUM,
	OPT_MEM_CSV,
	OPT_CSV,
	OPT_CHURN_THREADS,
	OPT_WRITER,
	OPT_RCU_STALL,
	OPT_VERSION,
};

static const struct option longopts[] = {
	{ "version", no_argument, NULL, OPT_VERSION },
	{ "workload", required_argument, NULL, 'w' },
	{ "threads", required_argument, NULL, 't' },
	{ "seconds", required_argument, NULL, 's' },
	{ "names", required_argument, NULL, 'n' },
	{ "dirs", required_argument, NULL, 'd' },
	{ "negative-ratio", required_argument, NULL, 'r' },
	{ "memory", required_argument, NULL, 'm' },
	{ "limit", required_argument, NULL, 'm' },
	{ "no-reclaim-thread", no_argument, NULL, OPT_NO_RECLAIM_THREAD },
	{ "rcu-stall", required_argument, NULL, OPT_RCU_STALL },
	{ "name-len", required_argument, NULL, 'l' },
	{ "object-size", required_argument, NULL, OPT_OBJECT_SIZE },
	{ "remove-ratio", required_argument, NULL, OPT_REMOVE_RATIO },
	{ "count", required_argument, NULL, OPT_COUNT },
	{ "hot", required_argument, NULL, OPT_HOT },
	{ "period", required_argument, NULL, OPT_PERIOD },
	{ "scan-dirs", required_argument, NULL, OPT_SCAN_DIRS },
	{ "scan-client", required_argument, NULL, OPT_SCAN_CLIENT },
	{ "scan-ids", required_argument, NULL, OPT_SCAN_IDS },
	{ "rotate-every", required_argument, NULL, OPT_ROTATE_EVERY },
	{ "head-start", required_argument, NULL, OPT_HEAD_START },
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
	{ "copies", required_argument, NULL, OPT_COPIES },
	{ "mix", no_argument, NULL, OPT_MIX },
	{ "entries", required_argument, NULL, OPT_ENTRIES },
	{ "optimum", required_argument, NULL, OPT_OPTIMUM },
	{ "mem-csv", required_argument, NULL, OPT_MEM_CSV },
	{ "csv", no_argument, NULL, OPT_CSV },
	{ "churn-threads", required_argument, NULL, OPT_CHURN_THREADS },
	{ "writer", no_argument, NULL, OPT_WRITER },
	{ "seed", required_argument, NULL, 'S' },
	{ "json", no_argument, NULL, 'j' },
	{ "help", no_argument, NULL, 'h' },
	{ NULL, 0, NULL, 0 },
};

/* The options every workload reads, and replay's; false if ch is not one. */
static bool parse_general(int ch, struct options *opt)
{
	switch (ch) {
	case 'w':
		opt->workload = optarg;
		return true;
	case 't':
		opt->threads = (unsigned)parse_u64("--threads", optarg, 1, THREADS_MAX);
		return true;
	case 's':
		opt->seconds = parse_double("--seconds", optarg, 0.001, MAX_SECONDS);
		opt->seconds_set = true;
		return true;
	case 'n':
		opt->names = parse_u64("--names", optarg, 1, MAX_NAMES);
		opt->names_set = true;
		return true;
	case 'd':
		opt->dirs = parse_u64("--dirs", optarg, 1, MAX_NAMES);
		opt->dirs_set = true;
		return true;
	case 'r':
		opt->negative_ratio = parse_double("--negative-ratio", optarg, 0.0, 1.0);
		return true;
	case 'm':
		opt->memory = parse_size("--memory/--limit", optarg);
		if (opt->memory && opt->memory < UDC_MEMORY_MIN)
			usage_error("--memory/--limit: %zu bytes is below UDC_MEMORY_MIN (%zu), the "
				    "smallest limit a cache takes (0: the default, 64 MiB)",
				    opt->memory, UDC_MEMORY_MIN);
		if (opt->memory == 0)
			usage_error("--memory/--limit: must be more than 0");
		opt->memory_set = true;
		return true;
	case OPT_NO_RECLAIM_THREAD:
		opt->no_reclaim_thread = true;
		return true;
	case OPT_RCU_STALL:
		opt->rcu_stall_ms = (unsigned)parse_u64("--rcu-stall", optarg, 1, 10000);
		return true;
	case 'l':
		opt->name_len = (unsigned)parse_u64("--name-len", optarg, 1, UDC_NAME_MAX);
		opt->name_len_set = true;
		return true;
	case 'i':
		if (!impl_find(optarg))
			usage_error("--impl: unknown implementation '%s'", optarg);
		opt->impl = optarg;
		return true;
	case OPT_DIST:
		if (strcmp(optarg, "uniform") != 0 && strcmp(optarg, "zipf") != 0)
			usage_error("--dist: 'uniform' or 'zipf', not '%s'", optarg);
		opt->dist = optarg;
		return true;
	case OPT_ZIPF_S:
		opt->zipf_s = parse_double("--zipf-s", optarg, 0.0, 5.0);
		return true;
	case OPT_TRACE: {
		const char **t = realloc(opt->traces, (opt->nr_traces + 1) * sizeof(*t));

		if (!t)
			die("out of memory for --trace");
		t[opt->nr_traces++] = optarg;
		opt->traces = t;
		return true;
	}
	case OPT_PASSES:
		opt->passes = (unsigned)parse_u64("--passes", optarg, 1, 100);
		return true;
	case OPT_COPIES:
		opt->copies = (unsigned)parse_u64("--copies", optarg, 1, REPLAY_MAX_COPIES);
		return true;
	case OPT_MIX:
		opt->mix = true;
		return true;
	case OPT_ENTRIES:
		opt->max_entries = (size_t)parse_u64("--entries", optarg, 1, UINT32_MAX);
		return true;
	case OPT_OPTIMUM:
		opt->optimum = (size_t)parse_u64("--optimum", optarg, 1, UINT32_MAX);
		return true;
	case OPT_MEM_CSV:
		opt->mem_csv = optarg;
		return true;
	case OPT_CSV:
		opt->csv = true;
		return true;
	case 'S':
		opt->seed = parse_u64("--seed", optarg, 0, UINT64_MAX);
		return true;
	case 'j':
		opt->json = true;
		return true;
	default:
		return false;
	}
}

static enum scan_ids parse_scan_ids(const char *s)
{
	for (int m = 0; m < NR_SCAN_IDS; m++)
		if (strcmp(s, scan_ids_names[m]) == 0)
			return (enum scan_ids)m;
	usage_error("--scan-ids: same, distinct, rotate or collide, not '%s'", s);
}

/* The studies' options; false if ch is not one. */
static bool parse_study(int ch, struct options *opt)
{
	switch (ch) {
	case OPT_OBJECT_SIZE:
		opt->object_size = (size_t)parse_u64("--object-size", optarg, 1, 4096);
		return true;
	case OPT_REMOVE_RATIO:
		opt->remove_ratio = parse_double("--remove-ratio", optarg, 0.0, 1.0);
		return true;
	case OPT_COUNT:
		opt->count = parse_u64("--count", optarg, 0, UINT64_MAX);
		opt->count_set = true;
		return true;
	case OPT_HOT:
		opt->hot = parse_u64("--hot", optarg, 1, MAX_NAMES);
		return true;
	case OPT_PERIOD:
		opt->period_ms = (unsigned)parse_u64("--period", optarg, 1, 3600000);
		return true;
	case OPT_SCAN_DIRS:
		opt->scan_dirs = parse_u64("--scan-dirs", optarg, 1, MAX_SCAN_DIRS);
		return true;
	case OPT_SCAN_CLIENT:
		opt->scan_client =
			(uint32_t)parse_u64("--scan-client", optarg, 0, UINT32_MAX);
		return true;
	case OPT_SCAN_IDS:
		opt->scan_ids = parse_scan_ids(optarg);
		return true;
	case OPT_ROTATE_EVERY:
		opt->rotate_every = parse_u64("--rotate-every", optarg, 1, UINT64_MAX);
		return true;
	case OPT_HEAD_START:
		opt->head_start = parse_double("--head-start", optarg, 0.0, MAX_SECONDS);
		return true;
	case OPT_WRITER:
		opt->writer = true;
		return true;
	case OPT_POSITIVES:
		opt->positives = parse_u64("--positives", optarg, 0, MAX_NAMES);
		opt->positives_set = true;
		return true;
	case OPT_HEADERS:
		opt->headers = parse_u64("--headers", optarg, 1, MAX_NAMES);
		return true;
	case OPT_INCLUDES:
		opt->includes = parse_u64("--includes", optarg, 1, MAX_NAMES);
		return true;
	case OPT_UNIQUE:
		opt->unique = parse_u64("--unique", optarg, 0, MAX_NAMES);
		return true;
	case OPT_SCRATCH_DIRS:
		opt->scratch_dirs = parse_u64("--scratch-dirs", optarg, 1, MAX_SCAN_DIRS);
		return true;
	case OPT_CHURN_THREADS:
		opt->churn_threads = (unsigned)parse_u64("--churn-threads", optarg, 0, MAX_THREADS);
		return true;
	case OPT_UNITS:
		opt->units = parse_u64("--units", optarg, 1, MAX_NAMES);
		return true;
	default:
		return false;
	}
}

static void parse_options(int argc, char **argv, struct options *opt)
{
	int ch;

	*opt = default_options;
	opterr = 0; /* our messages, our exit status */
	while ((ch = getopt_long(argc, argv, ":w:i:t:s:n:d:r:m:l:S:jh", longopts, NULL)) != -1) {
		if (parse_general(ch, opt) || parse_study(ch, opt))
			continue;
		switch (ch) {
		case 'h':
			usage(stdout);
			exit(0);
		case OPT_VERSION: {
			const struct build_info *b = build_info();
			printf("udc-stress (udcache %s), %s\n%s\n", b->version, b->build, b->machine);
			exit(0);
		}
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
	if (opt->threads > MAX_THREADS && strcmp(opt->workload, "threads") != 0)
		usage_error("--threads: %u out of range [1, %d] (up to %d: the threads workload)",
			    opt->threads, MAX_THREADS, THREADS_MAX);
	if (opt->churn_threads && strcmp(opt->workload, "threads") != 0)
		usage_error("--churn-threads: only for the threads workload");
	if (opt->csv && opt->json)
		usage_error("--csv and --json: one or the other");
	if (opt->csv && !compare_has(opt->workload))
		usage_error("--csv: only for the (--impl) workloads");
	if ((opt->scan_ids == SCAN_IDS_DISTINCT || opt->scan_ids == SCAN_IDS_ROTATE) &&
	    opt->scan_client < 2)
		usage_error("--scan-ids %s: --scan-client must be 2 or more (1 is the job's)",
			    scan_ids_names[opt->scan_ids]);
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
