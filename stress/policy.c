/* SPDX-License-Identifier: MIT */
/*
 * stress/policy.c - udc-stress's reclaim-policy workloads: hotset and
 * invalidate (buildtrace is stress/buildtrace.c).
 *
 * Owns: the two workloads, their threads and results, and what they
 * share: a log-bucketed latency histogram (struct lat_hist), the memory
 * watch that samples bytes_used and RSS every 10 ms (struct mem_watch, on a
 * monitor thread or on main) and its check against the contract's bound,
 * a backend that answers -ENOENT and counts its calls, and the names.
 * Everything goes through the public header include/udcache.h only.
 *
 *  - trickle:    --threads threads udc_resolve unique names ("id-<thread>-
 *                <n>" in TRICKLE_DIRS directories, one chosen at random per
 *                name) that the backend says do not exist, --count misses in
 *                all (or for --seconds), in a cache of --limit bytes.  Each
 *                call is timed.  Fails (exit 1) if bytes_used ever passed
 *                limit + slack + 1 MiB, or an answer was not -ENOENT.
 *  - hotset:     a periodic job (client HOTSET_CLIENT_JOB) resolves --hot
 *                names, round-robin over a directory per HOTSET_HOT_PER_DIR
 *                of them (under any directory's bound), every --period ms
 *                while --threads - 1 scanners resolve unique names spread
 *                round-robin over --scan-dirs other directories (so that the
 *                per-directory bound does not decline them and the cache is
 *                under pressure); the hot set's hit ratio after
 *                HOTSET_WARMUP_PERIODS periods, and how much of it is still
 *                cached (udc_lookup) when the scanners stop, a period after
 *                the job's last pass.  The scanners' client ids
 *                (--scan-ids): all --scan-client (0 = anonymous), distinct,
 *                rotating (a new id every --rotate-every lookups) or
 *                colliding with the job's (its id + 63 k); issue 14's
 *                fairness cases, scripts/bench_fairness.sh.  --head-start
 *                runs the scanners alone first, so that the job builds its
 *                set under their pressure.  Same failures, and a job name
 *                answered positive at the end.
 *  - invalidate: two phases, each in a fresh cache of --limit bytes: fill a
 *                directory with --positives regular files (udc_add; default
 *                --names / 8, so that the per-directory bound admits every
 *                negative) and --names negatives, then one udc_invalidate_dir
 *                (phase 1) or udc_rmdir (phase 2), timed; then, while a churn
 *                thread looks up (and re-adds) other names and times each
 *                call, bytes_used is sampled until it is back to its value
 *                before the fill plus 10% of what the fill added, or
 *                --seconds (60) pass.  The churn thread starts
 *                INVAL_BEFORE_SEC before the call, and its calls before it
 *                are a histogram of their own: the writers' tail before the
 *                garbage against during its sweep.  With --writer it adds
 *                unique negatives round-robin over INVAL_WRITER_DIRS
 *                directories instead (a writer: allocation, insertion and
 *                the reclaim hooks of a mutating call); the garbage is then
 *                gone once 90% of the dropped negatives are (nr_negative
 *                less the writer's adds since the call), its own entries
 *                growing bytes_used.  Fails if
 *                a name of the dropped directory is still answered, or the
 *                churn thread gets a wrong answer; garbage that does not go
 *                is reported, not failed.
 *
 * Locking: none of its own.  Every per-thread struct (struct trickle_worker,
 * hotset_job, hotset_scanner, inval_churn, and the struct mem_watch of a
 * monitor) is written by main before pthread_create(), then only by its own
 * thread until main's pthread_join(), after which main alone reads it.
 * pthread_create(), pthread_barrier_wait() and pthread_join() order memory,
 * so they carry the inputs to the threads and the results back with no
 * other fence.  The backend's counter (struct backend_count) is the calling
 * thread's own: the names of different threads never overlap, so the thread
 * that misses a name is the one whose ctx the backend gets.  The cache does
 * its own locking.
 *
 * Ordering:
 *  - struct stop_flag: main raises it (relaxed) to end a monitor or churn
 *    thread, which polls it (relaxed).  Termination is all it carries: the
 *    thread's results reach main through pthread_join(), and nothing main
 *    writes before raising the flag is read by the thread afterwards.
 *    invalidate's churn thread reads a second one, raised just before the
 *    call, to choose the histogram of each call (a call that straddles it
 *    counts as before); the writer's adds (inval_churn.added) are a relaxed
 *    counter that main reads as an estimate (gone, with --writer).  The
 *    workers of trickle and hotset need no flag: each stops on its own count
 *    or its own clock (a deadline it computes after the start barrier).
 *
 * Limitations and implementation defects:
 *  - Latency percentiles are bucket upper bounds (16 buckets per power of
 *    two, so within 6.25% above the true value); max and the count of calls
 *    over 1 ms are exact.  Each timed call includes two clock_gettime calls
 *    (vDSO, ~20 ns) and whatever preemption hit the thread: on a machine
 *    with fewer cores than threads + 1 the tail is the scheduler's.
 *  - The memory watch samples every 10 ms: an overshoot shorter than that
 *    can be missed.  RSS is the whole process's, the program's own arrays
 *    included (the samples: 24 bytes per 10 ms).
 *  - "Garbage gone" in invalidate is bytes_used back to its value before
 *    the fill plus 10% of the fill's growth (relative to the growth, not to
 *    the value before: a cache may hold tens of MiB of fixed overhead at a
 *    2 GiB limit, which would make 10% of it meaningless).  The churn set
 *    is added before that value is read, so the churn thread adds nothing
 *    new.  An engine that reclaims stale entries only under memory pressure
 *    ends the phase at the timeout with the garbage still there.
 *  - hotset under pressure measures the scan's speed against --period as
 *    much as the policy: a hot name survives in probation while the
 *    scanners insert fewer entries than the cache holds between two of its
 *    lookups.  On 2 cores they make ~1 M misses/s, cycling an 8 MiB cache
 *    (~80,000 negatives) in 80-100 ms: at --period 100 the FIFO order alone
 *    keeps the hot set, at 1000 only admission (or ghosts) can.  More cores
 *    cycle it sooner.
 *  - invalidate fills one directory: an engine that bounds a directory's
 *    negatives (admission) may hold fewer than --names (with --positives
 *    below --names / 8); the report says how many were held
 *    (nr_negative_filled) and warns.
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

#include "stress/measure.h"
#include "stress/stress.h"

#define SCAN_CLOCK_EVERY 64		/* a scanner reads its clock every 64 calls */
#define INVAL_CHURN_NAMES 4096		/* the churn thread's working set */
#define INVAL_CHECK_NAMES 10000		/* dropped names looked up after the call */
#define INVAL_FILE_INO ((udc_ino)1 << 40) /* invalidate's positive i is this + i */

/* Directories (dir_ino(k)), each also a name in the root. */
enum {
	DIR_TARGET = 0,
	DIR_OTHER = 1,
	DIR_SPREAD = 2
};

/* Directory k as the name "d<k>" in the root. */
void policy_add_dirs(udc_cache *c, unsigned n)
{
	char name[NAME_BUF];

	for (unsigned k = 0; k < n; k++) {
		struct udc_attr a = { .ino = dir_ino(k), .type = UDC_TYPE_DIR };
		int len = snprintf(name, sizeof(name), "d%u", k);
		int rc = udc_add(c, ROOT_INO, name, (size_t)len, &a);

		if (rc < 0)
			die("udc_add(root, \"%s\"): %s", name, strerror(-rc));
	}
}

/* A backend's ctx: its calls, counted by the thread that made them. */
struct backend_count {
	uint64_t calls;
};

static int enoent_lookup(void *ctx, udc_ino dir, const char *name, size_t len, struct udc_attr *out)
{
	(void)dir, (void)name, (void)len, (void)out;
	((struct backend_count *)ctx)->calls++;
	return -ENOENT;
}

static const struct udc_backend enoent_backend = { .lookup = enoent_lookup };

udc_cache *policy_cache(const struct options *opt, size_t limit, const struct udc_backend *be)
{
	struct udc_config cfg = UDC_CONFIG_INIT;
	udc_cache *c;

	cfg.memory_limit = limit;
	cfg.root = ROOT_INO;
	cfg.backend = be;
	cfg.flags = opt->no_reclaim_thread ? UDC_CFG_NO_RECLAIM_THREAD : 0;
	c = udc_create(&cfg);
	if (!c)
		die("udc_create: %s", strerror(errno));
	return c;
}

/* ---------------------------------------------------------------------- */
/* Workload hotset */

const char *const scan_ids_names[NR_SCAN_IDS] = {
	[SCAN_IDS_SAME] = "same",
	[SCAN_IDS_DISTINCT] = "distinct",
	[SCAN_IDS_ROTATE] = "rotate",
	[SCAN_IDS_COLLIDE] = "collide",
};

struct hotset_job {
	/* Set by main before the thread starts, then read-only. */
	alignas(CACHELINE) udc_cache *c;
	pthread_barrier_t *start;
	uint64_t hot;
	uint64_t hot_dirs; /* name i is in dir_ino(hot_dir0 + i % hot_dirs) */
	unsigned hot_dir0;
	uint64_t period_ns;
	uint64_t lead_ns; /* the scanners run this long before the first period */
	uint64_t run_ns;  /* then both, this long */
	pthread_t tid;
	/* Written by this thread only; read by main after pthread_join(). */
	uint64_t rng;
	struct backend_count be;
	uint64_t periods;		   /* every period run, warm-up included */
	uint64_t measured;		   /* periods after the warm-up */
	uint64_t overruns;		   /* periods that took longer than period_ns */
	uint64_t hot_lookups, hot_backend; /* over the measured periods */
	uint64_t worst_backend;		   /* the most backend calls in one measured period */
	uint64_t last_backend;		   /* those of the last period */
	uint64_t job_ns_sum, job_ns_max;   /* a measured period's pass over the hot set */
	uint64_t kept;			   /* still cached after the run (hotset_check) */
	uint64_t wrong;
	int bad_rc;
};

struct hotset_scanner {
	alignas(CACHELINE) udc_cache *c;
	pthread_barrier_t *start;
	unsigned id;
	uint64_t run_ns;
	uint64_t dirs;	      /* names go round-robin to dir_ino(DIR_SPREAD + 0..dirs-1) */
	uint32_t client;      /* struct udc_call.client, the first one */
	uint32_t client_step; /* added to it every rotate_every calls (0: never) */
	uint64_t rotate_every;
	pthread_t tid;
	/* Written by this thread only; read by main after pthread_join(). */
	struct backend_count be;
	uint64_t calls;
	uint64_t clients; /* client ids used */
	uint64_t wrong;
	int bad_rc;
	uint64_t elapsed_ns;
};

static udc_ino hot_dir(const struct hotset_job *j, uint64_t i)
{
	return dir_ino(j->hot_dir0 + i % j->hot_dirs);
}

/* One pass over the hot set, from a random rotation; returns its backend calls. */
static uint64_t hotset_pass(struct hotset_job *j, const struct udc_call *call)
{
	uint64_t before = j->be.calls, off = rand_below(&j->rng, j->hot);
	char name[NAME_BUF];

	for (uint64_t k = 0; k < j->hot; k++) {
		uint64_t i = off + k < j->hot ? off + k : off + k - j->hot;
		size_t len = name_fmt(name, "hot-", 0, i);
		int rc = udc_resolve(j->c, hot_dir(j, i), name, len, call, NULL);

		if (rc != -ENOENT && j->wrong++ == 0)
			j->bad_rc = rc;
	}
	return j->be.calls - before;
}

static void *hotset_job_main(void *arg)
{
	struct hotset_job *j = arg;
	const struct udc_call call = { .ctx = &j->be, .client = HOTSET_CLIENT_JOB };
	uint64_t next, deadline;

	pthread_barrier_wait(j->start);
	next = now_ns() + j->lead_ns; /* the scanners' head start */
	deadline = next + j->run_ns;
	while (next < deadline) {
		struct timespec ts = ns_to_ts(next);
		uint64_t t0, calls, t1;

		sleep_until(&ts);
		t0 = now_ns();
		calls = hotset_pass(j, &call);
		t1 = now_ns();
		if (++j->periods > HOTSET_WARMUP_PERIODS) {
			j->measured++;
			j->hot_lookups += j->hot;
			j->hot_backend += calls;
			if (calls > j->worst_backend)
				j->worst_backend = calls;
			j->job_ns_sum += t1 - t0;
			if (t1 - t0 > j->job_ns_max)
				j->job_ns_max = t1 - t0;
		}
		j->last_backend = calls;
		next += j->period_ns;
		if (t1 > next) { /* overran: start the next period now, no catching up */
			j->overruns++;
			next = t1;
		}
	}
	return NULL;
}

static void *hotset_scan_main(void *arg)
{
	struct hotset_scanner *s = arg;
	struct udc_call call = { .ctx = &s->be, .client = s->client };
	char name[NAME_BUF];
	uint64_t t0, t, deadline, d = s->id % s->dirs;

	pthread_barrier_wait(s->start);
	t0 = t = now_ns();
	deadline = t0 + s->run_ns;
	for (uint64_t i = 0; t < deadline; i++) {
		size_t len = name_fmt(name, "scan-", s->id, i);
		int rc = udc_resolve(s->c, dir_ino(DIR_SPREAD + d), name, len, &call, NULL);

		if (++d == s->dirs)
			d = 0;
		s->calls++;
		if (s->client_step && s->calls % s->rotate_every == 0) {
			call.client += s->client_step; /* --scan-ids rotate: a new client */
			s->clients++;
		}
		if (rc != -ENOENT && s->wrong++ == 0)
			s->bad_rc = rc;
		if (i % SCAN_CLOCK_EVERY == SCAN_CLOCK_EVERY - 1)
			t = now_ns();
	}
	s->elapsed_ns = now_ns() - t0;
	return NULL;
}

/* Scanner i's first client id and its rotation, of ns (--scan-ids). */
static void hotset_scan_ids(struct hotset_scanner *s, const struct options *opt, unsigned i,
			    unsigned ns)
{
	if (opt->scan_ids == SCAN_IDS_COLLIDE)
		s->client = HOTSET_CLIENT_JOB + HOTSET_CLIENT_FOLD * (i + 1);
	else
		s->client = opt->scan_client + (opt->scan_ids == SCAN_IDS_SAME ? 0 : i);
	s->client_step = opt->scan_ids == SCAN_IDS_ROTATE ? ns : 0;
	s->rotate_every = opt->rotate_every;
	s->clients = 1;
}

/* After the run: the job's names still cached, negative (udc_lookup: no backend call). */
static void hotset_check(udc_cache *c, struct hotset_job *j)
{
	char name[NAME_BUF];

	for (uint64_t i = 0; i < j->hot; i++) {
		size_t len = name_fmt(name, "hot-", 0, i);
		int rc = udc_lookup(c, hot_dir(j, i), name, len, NULL);

		if (rc == UDC_NEGATIVE)
			j->kept++;
		else if (rc != UDC_MISS && j->wrong++ == 0)
			j->bad_rc = rc;
	}
}

/* The report's parameters and the job's figures. */
static void hotset_rep_job(struct report *r, const struct options *opt, const struct hotset_job *j,
			   const struct hotset_scanner *s, unsigned ns, size_t limit)
{
	rep_str(r, "workload", "workload", "hotset");
	rep_str(r, "version", "udcache version", udc_version());
	rep_u64(r, "hot", "hot names", j->hot);
	rep_u64(r, "period_ms", "period (ms)", opt->period_ms);
	rep_u64(r, "scanners", "scanner threads", ns);
	rep_f64(r, "seconds", "seconds", opt->seconds, 3);
	rep_f64(r, "head_start_seconds", "scanners' head start (s)", opt->head_start, 3);
	rep_hex(r, "seed", "seed", opt->seed);
	rep_u64(r, "memory_limit", "memory limit (bytes)", limit);
	rep_bool(r, "reclaim_thread", "UDC_CFG_NO_RECLAIM_THREAD unset", !opt->no_reclaim_thread);
	rep_u64(r, "client_job", "client id of the job", HOTSET_CLIENT_JOB);
	rep_u64(r, "client_scan", "client id of scanner 0", s[0].client);
	rep_str(r, "scan_ids", "scanners' client ids", scan_ids_names[opt->scan_ids]);
	rep_u64(r, "rotate_every", "lookups per id (rotate)",
		s[0].client_step ? opt->rotate_every : 0);
	rep_u64(r, "scan_dirs", "scanners' directories", opt->scan_dirs);
	rep_u64(r, "hot_dirs", "hot set's directories", j->hot_dirs);
	rep_u64(r, "warmup_periods", "warm-up periods", HOTSET_WARMUP_PERIODS);
	rep_u64(r, "periods", "periods run", j->periods);
	rep_u64(r, "measured_periods", "periods measured", j->measured);
	rep_u64(r, "overruns", "periods overrun", j->overruns);
	rep_u64(r, "hot_lookups", "hot lookups (measured)", j->hot_lookups);
	rep_u64(r, "hot_backend_calls", "hot backend calls", j->hot_backend);
	rep_f64(r, "hot_hit_ratio", "hot hit ratio",
		j->hot_lookups ? 1.0 - (double)j->hot_backend / (double)j->hot_lookups : NAN, 4);
	rep_f64(r, "hot_hit_ratio_worst", "hot hit ratio, worst",
		j->measured ? 1.0 - (double)j->worst_backend / (double)j->hot : NAN, 4);
	rep_f64(r, "hot_hit_ratio_last", "hot hit ratio, last",
		j->periods ? 1.0 - (double)j->last_backend / (double)j->hot : NAN, 4);
	rep_f64(r, "job_ms_mean", "job pass ms, mean",
		j->measured ? (double)j->job_ns_sum / 1e6 / (double)j->measured : NAN, 3);
	rep_f64(r, "job_ms_max", "job pass ms, max", (double)j->job_ns_max / 1e6, 3);
	rep_u64(r, "hot_kept", "hot kept at the end", j->kept);
	rep_f64(r, "hot_kept_share", "hot kept share", (double)j->kept / (double)j->hot, 4);
}

/* The report's warnings: no period measured, scanners that hit, wrong answers. */
static void hotset_warn(struct report *r, const struct hotset_job *j,
			const struct hotset_scanner *s, unsigned ns, uint64_t scan_be,
			uint64_t scan_calls)
{
	if (j->measured == 0)
		rep_warn(r, "no period measured: raise --seconds past %d periods",
			 HOTSET_WARMUP_PERIODS);
	if (scan_be != scan_calls)
		rep_warn(r, "%" PRIu64 " scanner backend calls for %" PRIu64 " unique names",
			 scan_be, scan_calls);
	if (j->wrong)
		rep_warn(r, "job: %" PRIu64 " answers not -ENOENT; first: %s", j->wrong,
			 rc_name(j->bad_rc));
	for (unsigned i = 0; i < ns; i++)
		if (s[i].wrong)
			rep_warn(r, "scanner %u: %" PRIu64 " answers not -ENOENT; first: %s", i,
				 s[i].wrong, rc_name(s[i].bad_rc));
}

int run_hotset(const struct options *opt)
{
	size_t limit = opt->memory_set ? opt->memory : HOTSET_LIMIT;
	unsigned ns = opt->threads > 1 ? opt->threads - 1 : 1;
	struct udc_stats st = { .size = sizeof(st) };
	struct hotset_job *j = threads_alloc(1, sizeof(*j));
	struct hotset_scanner *s = threads_alloc(ns, sizeof(*s));
	uint64_t scan_calls = 0, scan_wrong = 0, scan_be = 0, scan_ids = 0, t0, t1;
	pthread_barrier_t start;
	struct monitor mon;
	struct report r;
	uint64_t stats_rss;
	double scan_rate = 0.0;
	bool failed;
	udc_cache *c;

	c = policy_cache(opt, limit, &enoent_backend);
	barrier_init(&start, ns + 2);
	j->c = c;
	j->start = &start;
	j->hot = opt->hot;
	j->hot_dirs = (opt->hot + HOTSET_HOT_PER_DIR - 1) / HOTSET_HOT_PER_DIR;
	j->hot_dir0 = (unsigned)(DIR_SPREAD + opt->scan_dirs);
	policy_add_dirs(c, (unsigned)(j->hot_dir0 + j->hot_dirs));
	j->period_ns = (uint64_t)opt->period_ms * 1000000u;
	j->lead_ns = seconds_ns(opt->head_start);
	j->run_ns = seconds_ns(opt->seconds);
	j->rng = thread_rng(opt->seed, 0);
	for (unsigned i = 0; i < ns; i++) {
		s[i].c = c;
		s[i].start = &start;
		s[i].id = i;
		s[i].run_ns = j->lead_ns + j->run_ns;
		s[i].dirs = opt->scan_dirs;
		hotset_scan_ids(&s[i], opt, i, ns);
	}
	monitor_start(&mon, &impl_udcache, c, limit);
	thread_start(&j->tid, hotset_job_main, j);
	for (unsigned i = 0; i < ns; i++)
		thread_start(&s[i].tid, hotset_scan_main, &s[i]);
	pthread_barrier_wait(&start);
	t0 = now_ns();
	thread_join(j->tid);
	for (unsigned i = 0; i < ns; i++) {
		thread_join(s[i].tid);
		scan_calls += s[i].calls;
		scan_wrong += s[i].wrong;
		scan_be += s[i].be.calls;
		scan_ids += s[i].clients;
		if (s[i].elapsed_ns)
			scan_rate += (double)s[i].calls * 1e9 / (double)s[i].elapsed_ns;
	}
	t1 = now_ns();
	monitor_stop(&mon);
	pthread_barrier_destroy(&start);
	hotset_check(c, j);
	udc_stats_get(c, &st);
	stats_rss = rss_bytes();

	rep_begin(&r, opt->json);
	hotset_rep_job(&r, opt, j, s, ns, limit);
	rep_u64(&r, "scanner_client_ids", "scanner ids used", scan_ids);
	rep_u64(&r, "scanner_negatives", "scanner negatives held",
		st.nr_negative > j->kept ? st.nr_negative - j->kept : 0);
	rep_u64(&r, "scanner_misses", "scanner misses", scan_calls);
	rep_f64(&r, "scanner_misses_per_sec", "scanner misses/s", scan_rate, 0);
	rep_u64(&r, "wrong_answers", "answers not -ENOENT", j->wrong + scan_wrong);
	rep_u64(&r, "nr_negative", "negatives held at the end", st.nr_negative);
	rep_u64(&r, "negatives_declined", "negatives declined", st.negatives_declined);
	rep_u64(&r, "entries_promoted", "entries promoted", st.entries_promoted);
	rep_u64(&r, "refaults", "refaults", st.refaults);
	rep_u64(&r, "evictions", "evictions", st.evictions);
	failed = rep_memory(&r, &mon.w, t0, t1);
	rep_udc_stats(&r, &st, stats_rss);
	hotset_warn(&r, j, s, ns, scan_be, scan_calls);
	if (j->wrong || scan_wrong || failed)
		rep_warn(&r, "FAILED");
	rep_end(&r);
	fflush(stdout);

	failed |= j->wrong || scan_wrong;
	watch_free(&mon.w);
	udc_destroy(c);
	free(s);
	free(j);
	return failed ? 1 : 0;
}

/* ---------------------------------------------------------------------- */
/* Workload invalidate */

enum inval_kind {
	INVAL_DIR,
	INVAL_RMDIR
};

struct inval_churn {
	/* Set by main before the thread starts, then read-only. */
	alignas(CACHELINE) udc_cache *c;
	pthread_barrier_t *start;
	struct stop_flag *stop;
	struct stop_flag *called; /* raised just before the call */
	bool writer;		  /* --writer */
	pthread_t tid;
	/* Written by this thread only; read by main after pthread_join(). */
	uint64_t rng;
	uint64_t lookups, adds;
	uint64_t wrong; /* a churn name answered positive, or an error */
	int bad_rc;
	struct lat_hist lat_before; /* calls begun before the call */
	struct lat_hist lat;	    /* calls begun after it */
	/* The writer's adds so far (relaxed; main reads it, see Ordering). */
	alignas(CACHELINE) _Atomic uint64_t added;
};

/* What one phase measured. */
struct inval_phase {
	enum inval_kind kind;
	double fill_sec;
	uint64_t before, filled; /* bytes_used before and after the fill */
	double positives_sec;	 /* of fill_sec, adding the positives */
	uint64_t destroy_ns;	 /* udc_destroy at the end, with what the cache held */
	uint64_t nr_positive_filled, nr_negative_filled, evictions_filled, declined_filled;
	uint64_t call_ns;
	uint64_t check_wrong; /* dropped names still answered */
	int check_bad_rc;
	bool gone;
	double gone_sec, watched_sec;
	uint64_t after_call, end_bytes;
	uint64_t neg_at_call, added_at_call; /* --writer: gone by the negatives held */
	uint64_t rss_before, rss_filled, rss_after_call, rss_end, stats_rss; /* process RSS */
	struct mem_watch w;
	struct inval_churn *churn;
	struct udc_stats st;
};

/* --writer: a unique negative "w-0-<n>" in directory DIR_SPREAD + n % INVAL_WRITER_DIRS. */
static int inval_write(struct inval_churn *ch, struct lat_hist *lat)
{
	char name[NAME_BUF];
	size_t len = name_fmt(name, "w-", 0, ch->adds);
	udc_ino dir = dir_ino(DIR_SPREAD + ch->adds % INVAL_WRITER_DIRS);
	uint64_t t0 = now_ns();
	int rc = udc_add_negative(ch->c, dir, name, len, 0);

	lat_record(lat, now_ns() - t0);
	ch->adds++;
	/* relaxed: a count main reads as an estimate (see Ordering) */
	atomic_store_explicit(&ch->added, ch->adds, memory_order_relaxed);
	return rc;
}

/* A lookup of one of the churn names, re-added if it is gone. */
static int inval_lookup(struct inval_churn *ch, struct lat_hist *lat)
{
	char name[NAME_BUF];
	size_t len = name_fmt(name, "other-", 0, rand_below(&ch->rng, INVAL_CHURN_NAMES));
	uint64_t t0 = now_ns();
	int rc = udc_lookup(ch->c, dir_ino(DIR_OTHER), name, len, NULL);
	uint64_t t1 = now_ns();

	lat_record(lat, t1 - t0);
	ch->lookups++;
	if (rc == UDC_MISS) { /* reclaimed or declined: tell the cache again */
		rc = udc_add_negative(ch->c, dir_ino(DIR_OTHER), name, len, 0);
		lat_record(lat, now_ns() - t1);
		ch->adds++;
	}
	return rc == UDC_NEGATIVE ? 0 : rc;
}

static void *inval_churn_main(void *arg)
{
	struct inval_churn *ch = arg;

	pthread_barrier_wait(ch->start);
	while (!stop_seen(ch->stop)) {
		struct lat_hist *lat = stop_seen(ch->called) ? &ch->lat : &ch->lat_before;
		int rc = ch->writer ? inval_write(ch, lat) : inval_lookup(ch, lat);

		if (rc != 0 && ch->wrong++ == 0)
			ch->bad_rc = rc;
	}
	return NULL;
}

/* n regular files "pos-0-<i>" in dir, ino FILE_INO_BASE + i. */
static void inval_add_positives(udc_cache *c, unsigned dir, uint64_t n)
{
	char name[NAME_BUF];

	for (uint64_t i = 0; i < n; i++) {
		struct udc_attr a = { .ino = INVAL_FILE_INO + i,
				      .type = UDC_TYPE_REG,
				      .cookie = i };
		size_t len = name_fmt(name, "pos-", 0, i);
		int rc = udc_add(c, dir_ino(dir), name, len, &a);

		if (rc < 0)
			die("udc_add(dir %" PRIu64 ", \"%.*s\"): %s", dir_ino(dir), (int)len, name,
			    strerror(-rc));
	}
}

static void inval_add_negatives(udc_cache *c, unsigned dir, const char *prefix, uint64_t n)
{
	char name[NAME_BUF];

	for (uint64_t i = 0; i < n; i++) {
		size_t len = name_fmt(name, prefix, 0, i);
		int rc = udc_add_negative(c, dir_ino(dir), name, len, 0);

		if (rc < 0)
			die("udc_add_negative(dir %" PRIu64 ", \"%.*s\"): %s", dir_ino(dir),
			    (int)len, name, strerror(-rc));
	}
}

/* Fill, drop with one call, then watch bytes_used while the churn thread runs. */
/* The contract: no name of the directory is answered from before the call. */
static void inval_check(udc_cache *c, const struct options *opt, uint64_t names,
			uint64_t positives, struct inval_phase *ph)
{
	uint64_t rng = thread_rng(opt->seed, 1000 + ph->kind);
	char name[NAME_BUF];
	int rc;

	for (uint64_t k = 0; k < INVAL_CHECK_NAMES && k < names + positives; k++) {
		uint64_t i = rand_below(&rng, names + positives);
		size_t len = i < names ? name_fmt(name, "neg-", 0, i) :
					 name_fmt(name, "pos-", 0, i - names);

		rc = udc_lookup(c, dir_ino(DIR_TARGET), name, len, NULL);
		if (rc != UDC_MISS && ph->check_wrong++ == 0)
			ph->check_bad_rc = rc;
	}
}

/* --writer: all but INVAL_GONE_PCT% of the dropped negatives are gone
 * (the writer's adds read first: they are at most those in the sample). */
static bool inval_gone_writer(const struct inval_phase *ph, uint64_t added,
			      const struct mem_sample *m)
{
	uint64_t dropped = ph->nr_negative_filled - INVAL_CHURN_NAMES;
	uint64_t held = ph->neg_at_call + (added - ph->added_at_call);
	uint64_t gone = held > m->nr_negative ? held - m->nr_negative : 0;

	return gone * 100 >= dropped * (100 - INVAL_GONE_PCT);
}

/* Sample until all but INVAL_GONE_PCT% of the fill's growth is back, or the timeout. */
static void inval_watch(udc_cache *c, size_t limit, double timeout, struct inval_phase *ph)
{
	uint64_t t0, next, gone_slack;

	gone_slack = ph->filled > ph->before ? (ph->filled - ph->before) * INVAL_GONE_PCT / 100 : 0;
	ph->w.impl = &impl_udcache;
	ph->w.c = c;
	ph->w.limit = limit;
	t0 = next = now_ns();
	for (;;) {
		/* relaxed: see Ordering */
		uint64_t added = atomic_load_explicit(&ph->churn->added, memory_order_relaxed);
		const struct mem_sample *m = watch_sample(&ph->w);

		if (ph->churn->writer ? inval_gone_writer(ph, added, m) :
					m->bytes <= ph->before + gone_slack) {
			ph->gone = true;
			ph->gone_sec = (double)(m->t_ns - t0) / 1e9;
			break;
		}
		if (m->t_ns - t0 >= seconds_ns(timeout))
			break;
		watch_sleep(&next);
	}
	ph->watched_sec = (double)(now_ns() - t0) / 1e9;
	ph->end_bytes = ph->w.s[ph->w.n - 1].bytes;
	ph->rss_end = ph->w.s[ph->w.n - 1].rss;
}

static void inval_run_phase(const struct options *opt, uint64_t names, uint64_t positives,
			    size_t limit, double timeout, struct inval_phase *ph)
{
	struct inval_churn *ch = threads_alloc(1, sizeof(*ch));
	struct udc_stats st = { .size = sizeof(st) };
	struct stop_flag stop, called;
	pthread_barrier_t start;
	uint64_t t0;
	udc_cache *c;
	int rc;

	c = policy_cache(opt, limit, NULL);
	policy_add_dirs(c, opt->writer ? DIR_SPREAD + INVAL_WRITER_DIRS : DIR_OTHER + 1);
	inval_add_negatives(c, DIR_OTHER, "other-", INVAL_CHURN_NAMES);
	ph->before = cache_bytes(c);
	ph->rss_before = rss_bytes();
	t0 = now_ns();
	inval_add_positives(c, DIR_TARGET, positives);
	ph->positives_sec = (double)(now_ns() - t0) / 1e9;
	inval_add_negatives(c, DIR_TARGET, "neg-", names);
	ph->fill_sec = (double)(now_ns() - t0) / 1e9;
	udc_stats_get(c, &st);
	ph->filled = st.bytes_used;
	ph->rss_filled = rss_bytes();
	ph->nr_positive_filled = st.nr_positive;
	ph->nr_negative_filled = st.nr_negative;
	ph->evictions_filled = st.evictions;
	ph->declined_filled = st.negatives_declined;

	atomic_init(&stop.raised, false);
	atomic_init(&called.raised, false);
	barrier_init(&start, 2);
	ch->c = c;
	ch->start = &start;
	ch->stop = &stop;
	ch->called = &called;
	ch->writer = opt->writer;
	ph->churn = ch; /* inval_watch reads its writer's count */
	ch->rng = thread_rng(opt->seed, 2000 + ph->kind);
	thread_start(&ch->tid, inval_churn_main, ch);
	pthread_barrier_wait(&start);

	/* The churn thread's calls before the garbage. */
	struct timespec before_end = ns_to_ts(now_ns() + seconds_ns(INVAL_BEFORE_SEC));
	sleep_until(&before_end);
	/* relaxed: see Ordering; read before the stats (inval_gone_writer) */
	ph->added_at_call = atomic_load_explicit(&ch->added, memory_order_relaxed);
	udc_stats_get(c, &st);
	ph->neg_at_call = st.nr_negative;
	stop_raise(&called);
	t0 = now_ns();
	if (ph->kind == INVAL_DIR)
		rc = udc_invalidate_dir(c, dir_ino(DIR_TARGET));
	else
		rc = udc_rmdir(c, ROOT_INO, "d0", 2, dir_ino(DIR_TARGET));
	ph->call_ns = now_ns() - t0;
	if (rc < 0)
		die("%s: %s", ph->kind == INVAL_DIR ? "udc_invalidate_dir" : "udc_rmdir",
		    strerror(-rc));
	ph->after_call = cache_bytes(c);
	ph->rss_after_call = rss_bytes();

	inval_check(c, opt, names, positives, ph);
	inval_watch(c, limit, timeout, ph);

	stop_raise(&stop);
	thread_join(ch->tid);
	pthread_barrier_destroy(&start);
	ph->st.size = sizeof(ph->st);
	udc_stats_get(c, &ph->st);
	ph->stats_rss = rss_bytes();
	t0 = now_ns();
	udc_destroy(c);   /* timed: every entry left (issue 13: under 1 s for 11 M) */
	ph->destroy_ns = now_ns() - t0;
}

static void rep_inval_phase(struct report *r, const struct inval_phase *ph, uint64_t names)
{
	const char *what = ph->kind == INVAL_DIR ? "udc_invalidate_dir" : "udc_rmdir";
	int64_t growth = (int64_t)ph->filled - (int64_t)ph->before;
	int64_t left = (int64_t)ph->end_bytes - (int64_t)ph->before;

	rep_obj_begin(r, ph->kind == INVAL_DIR ? "invalidate_dir" : "rmdir",
		      ph->kind == INVAL_DIR ? "inval." : "rmdir.");
	rep_str(r, "call", "call", what);
	rep_f64(r, "fill_seconds", "fill seconds", ph->fill_sec, 3);
	rep_f64(r, "positives_seconds", "fill seconds, positives", ph->positives_sec, 3);
	rep_u64(r, "bytes_before_fill", "bytes_used before fill", ph->before);
	rep_u64(r, "rss_before_fill", "RSS before fill", ph->rss_before);
	rep_u64(r, "bytes_filled", "bytes_used filled", ph->filled);
	rep_u64(r, "rss_filled", "RSS filled", ph->rss_filled);
	rep_f64(r, "bytes_per_entry_filled", "bytes/entry filled",
		(double)(ph->filled - ph->before) /
			(double)(ph->nr_positive_filled + ph->nr_negative_filled),
		1);
	rep_u64(r, "nr_positive_filled", "positives held filled", ph->nr_positive_filled);
	rep_u64(r, "nr_negative_filled", "negatives held filled", ph->nr_negative_filled);
	rep_u64(r, "negatives_declined_filled", "negatives declined, fill", ph->declined_filled);
	rep_u64(r, "evictions_filled", "evictions during fill", ph->evictions_filled);
	rep_f64(r, "call_us", "call us", (double)ph->call_ns / 1e3, 3);
	rep_u64(r, "bytes_after_call", "bytes_used after call", ph->after_call);
	rep_u64(r, "rss_after_call", "RSS after call", ph->rss_after_call);
	rep_u64(r, "check_wrong", "dropped names answered", ph->check_wrong);
	rep_bool(r, "garbage_gone", "garbage gone", ph->gone);
	rep_f64(r, "garbage_gone_seconds", "seconds until gone", ph->gone ? ph->gone_sec : NAN, 3);
	rep_f64(r, "watched_seconds", "seconds watched", ph->watched_sec, 3);
	rep_u64(r, "bytes_end", "bytes_used at the end", ph->end_bytes);
	rep_u64(r, "rss_end", "RSS at the end", ph->rss_end);
	rep_i64(r, "garbage_left_bytes", "garbage left (bytes)", left);
	rep_f64(r, "garbage_left_pct", "garbage left % of fill",
		growth > 0 ? 100.0 * (double)left / (double)growth : NAN, 1);
	rep_u64(r, "churn_lookups", "churn lookups", ph->churn->lookups);
	rep_u64(r, "churn_adds", ph->churn->writer ? "churn adds (writer)" : "churn re-adds",
		ph->churn->adds);
	rep_u64(r, "churn_wrong", "churn wrong answers", ph->churn->wrong);
	rep_latency(r, "churn_before_latency_ns", "churn before ns.", &ph->churn->lat_before);
	rep_latency(r, "churn_latency_ns", "churn ns.", &ph->churn->lat);
	rep_u64(r, "nr_negative_end", "negatives held at end", ph->st.nr_negative);
	rep_u64(r, "evictions_end", "evictions at end", ph->st.evictions);
	rep_u64(r, "entries_moved_end", "entries moved at end", ph->st.entries_moved);
	rep_f64(r, "destroy_ms", "udc_destroy ms (of the entries held at end)",
		(double)ph->destroy_ns / 1e6, 1);
	rep_obj_end(r);

	if (ph->evictions_filled)
		rep_warn(r, "%s: %" PRIu64 " evictions during the fill: raise --limit", what,
			 ph->evictions_filled);
	else if (ph->nr_negative_filled < names)
		rep_warn(r,
			 "%s: the cache held %" PRIu64 " of %" PRIu64
			 " negatives (it declined the rest)",
			 what, ph->nr_negative_filled, names);
	if (ph->churn->writer && (ph->st.negatives_declined > ph->declined_filled ||
				  ph->w.max_bytes + 2 * mem_slack(ph->w.limit) > ph->w.limit))
		rep_warn(r, "%s: the writer's negatives neared the limit or were declined", what);
	if (!ph->gone)
		rep_warn(r, "%s: garbage not gone after %.1f s: %" PRId64 " bytes left", what,
			 ph->watched_sec, left);
	if (ph->check_wrong)
		rep_warn(r, "%s: %" PRIu64 " dropped names still answered; first: %s: FAILED", what,
			 ph->check_wrong, rc_name(ph->check_bad_rc));
	if (ph->churn->wrong)
		rep_warn(r, "%s: churn thread: %" PRIu64 " wrong answers; first: %s: FAILED", what,
			 ph->churn->wrong, rc_name(ph->churn->bad_rc));
}

int run_invalidate(const struct options *opt)
{
	uint64_t names = opt->names_set ? opt->names : INVAL_NAMES;
	uint64_t positives = opt->positives_set ? opt->positives : (names + 7) / 8;
	size_t limit = opt->memory_set ? opt->memory : INVAL_LIMIT;
	double timeout = opt->seconds_set ? opt->seconds : INVAL_TIMEOUT_SEC;
	struct inval_phase ph[2] = { { .kind = INVAL_DIR }, { .kind = INVAL_RMDIR } };
	struct report r;
	bool failed = false;

	for (int k = 0; k < 2; k++)
		inval_run_phase(opt, names, positives, limit, timeout, &ph[k]);

	rep_begin(&r, opt->json);
	rep_str(&r, "workload", "workload", "invalidate");
	rep_str(&r, "version", "udcache version", udc_version());
	rep_u64(&r, "names", "names (negatives)", names);
	rep_u64(&r, "positives", "positives (added first)", positives);
	rep_u64(&r, "churn_names", "churn thread's names", INVAL_CHURN_NAMES);
	rep_bool(&r, "writer", "churn thread is a writer", opt->writer);
	rep_f64(&r, "before_seconds", "churn timed before the call s", INVAL_BEFORE_SEC, 1);
	rep_hex(&r, "seed", "seed", opt->seed);
	rep_u64(&r, "memory_limit", "memory limit (bytes)", limit);
	rep_bool(&r, "reclaim_thread", "UDC_CFG_NO_RECLAIM_THREAD unset", !opt->no_reclaim_thread);
	rep_f64(&r, "timeout_seconds", "garbage wait timeout s", timeout, 3);
	rep_u64(&r, "gone_pct", "gone: % of fill left", INVAL_GONE_PCT);
	for (int k = 0; k < 2; k++) {
		rep_inval_phase(&r, &ph[k], names);
		failed |= ph[k].check_wrong || ph[k].churn->wrong;
	}
	rep_str(&r, "stats_of", "stats below are of", "the rmdir phase, at its end");
	rep_udc_stats(&r, &ph[1].st, ph[1].stats_rss);
	if (failed)
		rep_warn(&r, "FAILED");
	rep_end(&r);
	fflush(stdout);

	for (int k = 0; k < 2; k++) {
		watch_free(&ph[k].w);
		free(ph[k].churn);
	}
	return failed ? 1 : 0;
}
