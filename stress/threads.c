/* SPDX-License-Identifier: MIT */
/*
 * stress/threads.c - the threads workload: a storage server's many threads
 * that each touch the cache a little and then block, while one thread
 * works (issue 13).
 *
 * Owns: the threads workload, its parked threads, its churn spawner and its
 * short-lived threads, the working thread, the 1 ms memory sampler and the
 * report.
 *
 * Workload:
 *  - threads: --threads N parked threads (1..4096; default 2).  Each adds
 *             --names names (default 8: half positive with udc_add, half
 *             negative with udc_add_negative) in a directory of its own,
 *             then blocks on a condition variable (not a spin, not
 *             udc_thread_offline: a server's idle thread does neither) until
 *             the end.  Once every one is parked, one working thread resolves
 *             unique names over --dirs directories (default 64; one in four a
 *             positive the backend knows, the rest -ENOENT) for --seconds, or
 *             --count calls, at --limit (default 16M), every call timed and
 *             its answer checked.  A sampler thread reads bytes_used and the
 *             RSS every 1 ms from before the first parked thread starts to
 *             the end; the report gives the working thread's latency
 *             percentiles (p99, p99.99, max, calls over 1 ms), the memory
 *             against limit + slack (stress/measure.c's rep_memory: max /
 *             limit, "memory bound" ok / past slack / FAILED), bytes_used and
 *             RSS once the threads are parked, and the stats.
 *             --churn-threads K: meanwhile a spawner keeps K short-lived
 *             threads going: each adds --names names in a fresh directory
 *             and exits; the spawner joins them and starts K more, until the
 *             end.
 *             Exit status 1 on a wrong answer or bytes_used past
 *             limit + slack + 1 MiB (as every workload).
 *
 * Locking: park.lock and park.cond: the parked threads count themselves
 * ready and wait for park.released under it; main waits for the count and
 * sets released under it.  The mem_watch is the sampler thread's until it
 * is joined; the worker's results are main's after pthread_join().
 *
 * Ordering:
 *  - stop flags (the sampler's, the spawner's) are relaxed: termination
 *    only (results travel through pthread_join()).
 *  - churn_created is relaxed: a count read after the spawner is joined.
 *
 * Limitations:
 *  - The sampler sees bytes_used every 1 ms: an overshoot shorter than that
 *    can be missed.  RSS is the whole process's (threads' stacks included:
 *    each thread gets a 64 KiB stack here, touched a little).
 *  - The working thread's latency includes preemption by the parked
 *    threads' wake-ups only at the end (they are all blocked meanwhile), by
 *    the sampler, the reclaim thread and the churn threads.
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif

#include <errno.h>
#include <inttypes.h>
#include <limits.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "stress/measure.h"
#include "stress/stress.h"

#define THREADS_SAMPLE_NS 1000000ull /* the sampler's period: 1 ms */
#define THREADS_STACK ((size_t)64 << 10)
#define PARKED_DIR_BASE ((udc_ino)0x1000000) /* parked thread i's directory */
#define CHURN_DIR_BASE ((udc_ino)0x40000000) /* short-lived thread k's directory */
#define POS_INO_BASE ((udc_ino)1 << 40)	     /* a positive's ino: this + a hash */

/* The backend: a name that begins with 'p' is a regular file, any other is absent. */
static udc_ino pos_ino(udc_ino dir, const char *name, size_t len)
{
	uint64_t h = mix64(dir);

	for (size_t i = 0; i < len; i++)
		h = mix64(h ^ (uint8_t)name[i]);
	return POS_INO_BASE + (h >> 24);
}

static int threads_lookup(void *ctx, udc_ino dir, const char *name, size_t len,
			  struct udc_attr *out)
{
	(void)ctx;
	if (len == 0 || name[0] != 'p')
		return -ENOENT;
	out->ino = pos_ino(dir, name, len);
	out->type = UDC_TYPE_REG;
	out->flags = 0;
	out->cookie = 0;
	return 0;
}

static const struct udc_backend threads_backend = { .lookup = threads_lookup };

struct park {
	pthread_mutex_t lock;
	pthread_cond_t cond;
	unsigned ready;	 /* parked threads that did their work */
	bool released;	 /* main: the end, go */
	uint64_t failed; /* calls that returned an error */
};

struct threads_run {
	udc_cache *c;
	const struct options *opt;
	uint64_t names_each;
	struct park park;
	/* The churn spawner's. */
	struct stop_flag churn_stop;
	_Atomic uint64_t churn_created;
	_Atomic uint64_t churn_failed;
};

/* Add n names in dir: even ones positive (udc_add), odd ones negative; the failures. */
static uint64_t add_names(udc_cache *c, udc_ino dir, uint64_t n)
{
	char name[NAME_BUF];
	uint64_t failed = 0;

	for (uint64_t i = 0; i < n; i++) {
		size_t len = name_fmt(name, i % 2 ? "n" : "p", dir, i);
		int rc;

		if (i % 2 == 0) {
			struct udc_attr a = { .ino = pos_ino(dir, name, len),
					      .type = UDC_TYPE_REG };

			rc = udc_add(c, dir, name, len, &a);
		} else {
			rc = udc_add_negative(c, dir, name, len, 0);
		}
		failed += rc < 0;
	}
	return failed;
}

struct parked {
	struct threads_run *tr;
	unsigned id;
};

static void *parked_main(void *arg)
{
	struct parked *p = arg;
	struct threads_run *tr = p->tr;
	uint64_t failed = add_names(tr->c, PARKED_DIR_BASE + p->id, tr->names_each);

	pthread_mutex_lock(&tr->park.lock);
	tr->park.failed += failed;
	tr->park.ready++;
	pthread_cond_broadcast(&tr->park.cond);
	while (!tr->park.released)
		pthread_cond_wait(&tr->park.cond, &tr->park.lock);
	pthread_mutex_unlock(&tr->park.lock);
	return NULL;
}

/* A short-lived thread: its names in a fresh directory, then it exits. */
struct churner {
	struct threads_run *tr;
	udc_ino dir;
};

static void *churner_main(void *arg)
{
	struct churner *ch = arg;
	uint64_t failed = add_names(ch->tr->c, ch->dir, ch->tr->names_each);

	atomic_fetch_add_explicit(&ch->tr->churn_failed, failed, memory_order_relaxed);
	return NULL;
}

static void start_small(pthread_t *t, void *(*fn)(void *), void *arg)
{
	pthread_attr_t attr;
	int err;

	pthread_attr_init(&attr);
	pthread_attr_setstacksize(&attr, THREADS_STACK);
	err = pthread_create(t, &attr, fn, arg);
	pthread_attr_destroy(&attr);
	if (err)
		die("pthread_create: %s", strerror(err));
}

static void *spawner_main(void *arg)
{
	struct threads_run *tr = arg;
	unsigned k = tr->opt->churn_threads;
	pthread_t *t = calloc(k, sizeof(*t));
	struct churner *ch = calloc(k, sizeof(*ch));
	uint64_t seq = 0;

	if (!t || !ch)
		die("out of memory for %u churn threads", k);
	while (!stop_seen(&tr->churn_stop)) {
		for (unsigned i = 0; i < k; i++) {
			ch[i] = (struct churner){ .tr = tr, .dir = CHURN_DIR_BASE + seq++ };
			start_small(&t[i], churner_main, &ch[i]);
		}
		for (unsigned i = 0; i < k; i++)
			thread_join(t[i]);
		atomic_fetch_add_explicit(&tr->churn_created, k, memory_order_relaxed);
	}
	free(t);
	free(ch);
	return NULL;
}

/* The sampler: bytes_used and RSS every THREADS_SAMPLE_NS until stopped. */
struct sampler {
	struct mem_watch w;
	struct stop_flag stop;
	pthread_t tid;
};

static void *sampler_main(void *arg)
{
	struct sampler *s = arg;
	uint64_t next = now_ns();

	while (!stop_seen(&s->stop)) {
		struct timespec ts;
		uint64_t now;

		watch_sample(&s->w);
		next += THREADS_SAMPLE_NS;
		now = now_ns();
		if (next < now)
			next = now;
		ts = ns_to_ts(next);
		sleep_until(&ts);
	}
	watch_sample(&s->w);
	return NULL;
}

/* The working thread. */
struct working {
	struct threads_run *tr;
	pthread_t tid;
	uint64_t quota, deadline;
	uint64_t calls, wrong, t0, t1;
	char first_wrong[160];
	struct lat_hist lat;
};

static void *working_main(void *arg)
{
	struct working *w = arg;
	const struct options *opt = w->tr->opt;
	struct udc_call call = { .client = 0 };
	char name[NAME_BUF];

	w->t0 = now_ns();
	for (uint64_t i = 0; i < w->quota; i++) {
		udc_ino dir = dir_ino(i % opt->dirs);
		bool positive = i % 4 == 0;
		size_t len = name_fmt(name, positive ? "p" : "w", dir, i);
		struct udc_attr a;
		uint64_t t = now_ns(), dt;
		int rc = udc_resolve(w->tr->c, dir, name, len, &call, &a);

		dt = now_ns() - t;
		lat_record(&w->lat, dt);
		w->calls++;
		if (positive ? rc != 0 || a.ino != pos_ino(dir, name, len) : rc != -ENOENT) {
			if (!w->wrong)
				snprintf(w->first_wrong, sizeof(w->first_wrong),
					 "dir %" PRIu64 " \"%.*s\": %s", dir, (int)len, name,
					 rc_name(rc));
			w->wrong++;
		}
		if (t + dt >= w->deadline) /* every call: a stalled one can take 100 ms */
			break;
	}
	w->t1 = now_ns();
	return NULL;
}

int run_threads_workload(const struct options *opt)
{
	size_t limit = opt->memory_set ? opt->memory : THREADS_LIMIT;
	unsigned n = opt->threads;
	struct threads_run *tr = threads_alloc(1, sizeof(*tr));
	struct parked *p = calloc(n, sizeof(*p));
	pthread_t *pt = calloc(n, sizeof(*pt));
	struct sampler *s = threads_alloc(1, sizeof(*s));
	struct working *w = threads_alloc(1, sizeof(*w));
	struct udc_stats st = { .size = sizeof(st) };
	uint64_t parked_bytes, parked_rss, t_parked, failed_calls, stats_rss;
	pthread_t spawner;
	struct report r;
	bool failed;

	if (!p || !pt)
		die("out of memory for %u threads", n);
	tr->opt = opt;
	tr->names_each = opt->names_set ? opt->names : THREADS_NAMES_EACH;
	tr->c = policy_cache(opt, limit, &threads_backend);
	policy_add_dirs(tr->c, (unsigned)opt->dirs);
	pthread_mutex_init(&tr->park.lock, NULL);
	pthread_cond_init(&tr->park.cond, NULL);
	atomic_init(&tr->churn_stop.raised, false);
	atomic_init(&tr->churn_created, 0);
	atomic_init(&tr->churn_failed, 0);

	s->w.impl = impl_find("udcache");
	s->w.c = tr->c;
	s->w.limit = limit;
	s->w.period_ns = THREADS_SAMPLE_NS;
	atomic_init(&s->stop.raised, false);
	thread_start(&s->tid, sampler_main, s);

	/* The parked threads: each its names, then blocked. */
	for (unsigned i = 0; i < n; i++) {
		p[i] = (struct parked){ .tr = tr, .id = i };
		start_small(&pt[i], parked_main, &p[i]);
	}
	pthread_mutex_lock(&tr->park.lock);
	while (tr->park.ready < n)
		pthread_cond_wait(&tr->park.cond, &tr->park.lock);
	pthread_mutex_unlock(&tr->park.lock);
	t_parked = now_ns();
	parked_bytes = cache_bytes(tr->c);
	parked_rss = rss_bytes();

	/* The work, and the churn beside it. */
	if (opt->churn_threads)
		thread_start(&spawner, spawner_main, tr);
	w->tr = tr;
	w->quota = opt->count_set && opt->count ? opt->count : UINT64_MAX;
	w->deadline = opt->count_set && opt->count && !opt->seconds_set ?
			      UINT64_MAX :
			      now_ns() + seconds_ns(opt->seconds);
	thread_start(&w->tid, working_main, w);
	thread_join(w->tid);
	if (opt->churn_threads) {
		stop_raise(&tr->churn_stop);
		thread_join(spawner);
	}

	/* The end: the parked threads go, the sampler's last reading. */
	pthread_mutex_lock(&tr->park.lock);
	tr->park.released = true;
	pthread_cond_broadcast(&tr->park.cond);
	pthread_mutex_unlock(&tr->park.lock);
	for (unsigned i = 0; i < n; i++)
		thread_join(pt[i]);
	stop_raise(&s->stop);
	thread_join(s->tid);
	udc_stats_get(tr->c, &st);
	stats_rss = rss_bytes();
	failed_calls = tr->park.failed + atomic_load(&tr->churn_failed);

	rep_begin(&r, opt->json);
	rep_str(&r, "workload", "workload", "threads");
	rep_u64(&r, "parked_threads", "parked threads", n);
	rep_u64(&r, "names_each", "names each thread adds", tr->names_each);
	rep_u64(&r, "churn_threads", "churn threads at a time", opt->churn_threads);
	rep_u64(&r, "churn_created", "churn threads created and retired",
		atomic_load(&tr->churn_created));
	rep_u64(&r, "dirs", "working thread's dirs", opt->dirs);
	rep_bool(&r, "reclaim_thread", "reclaim thread", !opt->no_reclaim_thread);
	rep_hex(&r, "seed", "seed", opt->seed);
	rep_u64(&r, "memory_limit", "memory limit (bytes)", limit);
	rep_f64(&r, "park_seconds", "seconds to start and park",
		(double)(t_parked - s->w.s[0].t_ns) / 1e9, 3);
	rep_u64(&r, "parked_bytes_used", "bytes_used once parked", parked_bytes);
	rep_u64(&r, "parked_rss", "RSS once parked", parked_rss);
	rep_f64(&r, "seconds", "working seconds", (double)(w->t1 - w->t0) / 1e9, 3);
	rep_f64(&r, "ops_per_sec", "working calls/s",
		w->t1 > w->t0 ? (double)w->calls * 1e9 / (double)(w->t1 - w->t0) : 0.0, 0);
	rep_u64(&r, "wrong_answers", "wrong answers", w->wrong);
	rep_u64(&r, "failed_calls", "parked/churn calls that failed", failed_calls);
	rep_latency(&r, "latency_ns", "latency ns.", &w->lat);
	failed = rep_memory(&r, &s->w, s->w.s[0].t_ns, w->t1);
	rep_udc_stats(&r, &st, stats_rss);
	if (w->wrong)
		rep_warn(&r, "%" PRIu64 " wrong answers; first: %s: FAILED", w->wrong,
			 w->first_wrong);
	if (failed_calls)
		rep_warn(&r, "%" PRIu64 " calls of the parked or churn threads failed: FAILED",
			 failed_calls);
	rep_end(&r);
	fflush(stdout);
	failed = failed || w->wrong || failed_calls;

	udc_destroy(tr->c);
	pthread_mutex_destroy(&tr->park.lock);
	pthread_cond_destroy(&tr->park.cond);
	watch_free(&s->w);
	free(w);
	free(s);
	free(pt);
	free(p);
	free(tr);
	return failed ? 1 : 0;
}
