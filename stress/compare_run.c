/* SPDX-License-Identifier: MIT */
/*
 * stress/compare_run.c - the run of an (--impl) workload: the workers'
 * loop, main's loop while they run, the totals and the report (text, --json
 * or --csv); and replay's report, with its memory watch (sampled on the
 * replaying thread; the parser and the replay itself are stress/replay/).  The model store, the operations and the workloads are
 * stress/compare.c.
 *
 * Owns: struct run and its workers for the length of run_compare(): the
 * start barrier, --seconds or --count, the memory watch and the live
 * progress line on main.
 *
 * Locking: none of its own.  A struct worker is written by its own thread
 * while the workers run and read by main after pthread_join(), except its
 * progress counter (below).  The read-only inputs (options, the name table,
 * the index sequences) are written by main before the start barrier, which
 * orders them before every worker's reads.  The implementations do their
 * own locking.
 *
 * Ordering:
 *  - worker.progress: relaxed; main reads it only for the progress line and
 *    to see that every --count quota is done (a count, nothing published
 *    with it).
 *  - run.stop: relaxed; termination only (results travel through
 *    pthread_join()).
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif

#include <errno.h>
#include <inttypes.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "stress/compare_internal.h"
#include "stress/replay.h"

#define PROGRESS_NS (500 * 1000000ull) /* the progress line's period */
#define CHECK_EVERY 64		       /* workers poll stop every 64 ops */

static void *worker_main(void *arg)
{
	struct worker *w = arg;
	struct run *r = w->run;

	pthread_barrier_wait(&r->start);
	while (w->ops < w->quota) {
		r->wl->op(w);
		w->ops++;
		if (w->ops % CHECK_EVERY == 0) {
			atomic_store_explicit(&w->progress, w->ops, memory_order_relaxed);
			if (stop_seen(&r->stop))
				break;
		}
	}
	w->t_end = now_ns();
	return NULL;
}

static void progress_line(const struct run *r, struct worker *w, unsigned n, uint64_t t0,
			  uint64_t *last_ops, uint64_t *last_t)
{
	struct udc_stats st = { .size = sizeof(st) };
	uint64_t ops = 0, t = now_ns();

	for (unsigned i = 0; i < n; i++)
		ops += atomic_load_explicit(&w[i].progress, memory_order_relaxed);
	r->impl->stats(r->c, &st);
	fprintf(stderr, "\r\033[K%6.1f s  %s  %10.0f ops/s  mem %8.1f MiB  negatives %10" PRIu64,
		(double)(t - t0) / 1e9, r->wl->name,
		t > *last_t ? (double)(ops - *last_ops) * 1e9 / (double)(t - *last_t) : 0.0,
		(double)st.bytes_used / (1 << 20), st.nr_negative);
	*last_ops = ops;
	*last_t = t;
}

struct totals {
	uint64_t ops, calls, hits, misses, wrong, unchecked, be_calls;
	double secs;
	struct lat_hist *lat, *rmdir_lat, *inval_lat, *rename_lat;
};

static void csv_row(const struct run *r, const struct totals *tt, const struct mem_watch *mw,
		    const struct udc_stats *st, long cores)
{
	static const char *const cols =
		"workload,impl,threads,cores,seconds,ops,ops_per_sec,wrong,hits,misses,"
		"p50_ns,p99_ns,p99_9_ns,p99_99_ns,max_ns,over_1ms,op2_p50_ns,op2_max_ns,"
		"bytes_used_max,bytes_used_end,rss_max,nr_negative,nr_positive,evictions,"
		"backend_calls,version,build,date,machine";
	const struct lat_hist *h2 = tt->rmdir_lat->n ? tt->rmdir_lat : tt->rename_lat;

	printf("%s\n%s,%s,%u,%ld,%.3f,%" PRIu64 ",%.0f,%" PRIu64 ",%" PRIu64 ",%" PRIu64, cols,
	       r->wl->name, r->impl->name, r->opt->threads, cores, tt->secs, tt->ops,
	       tt->secs > 0 ? (double)tt->ops / tt->secs : 0.0, tt->wrong, tt->hits, tt->misses);
	printf(",%" PRIu64 ",%" PRIu64 ",%" PRIu64 ",%" PRIu64 ",%" PRIu64 ",%" PRIu64,
	       lat_quantile(tt->lat, 0.5), lat_quantile(tt->lat, 0.99),
	       lat_quantile(tt->lat, 0.999), lat_quantile(tt->lat, 0.9999), tt->lat->max,
	       tt->lat->over_1ms);
	printf(",%" PRIu64 ",%" PRIu64 ",%" PRIu64 ",%" PRIu64 ",%" PRIu64 ",%" PRIu64
	       ",%" PRIu64 ",%" PRIu64 ",%" PRIu64,
	       lat_quantile(h2, 0.5), h2->max, mw->max_bytes, st->bytes_used, mw->max_rss,
	       st->nr_negative, st->nr_positive, st->evictions, tt->be_calls);
	const struct build_info *b = build_info();
	/* quoted: the build and the machine hold commas */
	printf(",%s,\"%s\",%s,\"%s\"\n", b->version, b->build, b->date, b->machine);
}

static void report(const struct run *r, const struct totals *tt, const struct mem_watch *mw,
		   uint64_t t0, uint64_t t1, bool *failed)
{
	const struct options *opt = r->opt;
	struct udc_stats st = { .size = sizeof(st) };
	long cores = sysconf(_SC_NPROCESSORS_ONLN);
	struct report rp;
	uint64_t rss_end;

	r->impl->stats(r->c, &st);
	rss_end = rss_bytes();
	if (opt->csv) {
		csv_row(r, tt, mw, &st, cores);
		*failed = tt->wrong != 0;
		return;
	}
	rep_begin(&rp, opt->json);
	rep_str(&rp, "workload", "workload", r->wl->name);
	rep_str(&rp, "impl", "impl", r->impl->name);
	rep_u64(&rp, "threads", "threads", opt->threads);
	rep_i64(&rp, "cores", "cores online", cores);
	rep_bool(&rp, "oversubscribed", "more threads than cores", (long)opt->threads > cores);
	rep_hex(&rp, "seed", "seed", opt->seed);
	rep_u64(&rp, "memory_limit", "memory limit (bytes)", r->cfg.memory_limit);
	rep_u64(&rp, "rcu_stall_ms", "call_rcu thread held (ms of every 2x; 0 never)", opt->rcu_stall_ms);
	rep_u64(&rp, "rcu_stalls", "times it was held", r->rcu_stalls);
	rep_str(&rp, "op_unit", "an operation is", r->wl->op_unit);
	rep_u64(&rp, "ops", "operations", tt->ops);
	rep_f64(&rp, "seconds", "seconds", tt->secs, 3);
	rep_f64(&rp, "ops_per_sec", "operations/s", tt->secs > 0 ? (double)tt->ops / tt->secs : 0.0,
		0);
	rep_u64(&rp, "calls", "calls", tt->calls);
	rep_u64(&rp, "hits", "hits", tt->hits);
	rep_u64(&rp, "misses", "misses", tt->misses);
	rep_u64(&rp, "backend_calls", "backend calls", tt->be_calls);
	rep_u64(&rp, "wrong_answers", "wrong answers", tt->wrong);
	if (tt->unchecked)
		rep_u64(&rp, "unchecked", "answers not checkable", tt->unchecked);
	rep_latency(&rp, "latency_ns", "latency ns.", tt->lat);
	if (tt->rmdir_lat->n)
		rep_latency(&rp, "rmdir_ns", "rmdir ns.", tt->rmdir_lat);
	if (tt->inval_lat->n)
		rep_latency(&rp, "invalidate_dir_ns", "invalidate_dir ns.", tt->inval_lat);
	if (tt->rename_lat->n)
		rep_latency(&rp, "rename_ns", "rename ns.", tt->rename_lat);
	if (r->rmdir_negatives && !strcmp(r->wl->name, "rmdir"))
		rep_u64(&rp, "rmdir_negatives", "negatives per removed directory",
			r->rmdir_negatives);
	*failed = rep_memory(&rp, mw, t0, t1) && r->impl->bounded;
	rep_obj_begin(&rp, "stats", "stats.");
	rep_u64(&rp, "nr_positive", "nr_positive", st.nr_positive);
	rep_u64(&rp, "nr_negative", "nr_negative", st.nr_negative);
	rep_u64(&rp, "evictions", "evictions", st.evictions);
	rep_u64(&rp, "bytes_used", "bytes_used", st.bytes_used);
	rep_u64(&rp, "rss", "process RSS", rss_end);
	rep_u64(&rp, "backend_calls", "backend_calls", st.backend_calls);
	rep_u64(&rp, "throttled", "throttled (calls that waited for reclaim)", st.throttled);
	rep_u64(&rp, "entries_moved", "entries_moved (by compaction)", st.entries_moved);
	rep_obj_end(&rp);
	if (tt->wrong)
		rep_warn(&rp, "%" PRIu64 " wrong answers: FAILED", tt->wrong);
	else if (*failed)
		rep_warn(&rp, "memory bound: FAILED");
	rep_end(&rp);
	*failed = *failed || tt->wrong;
}

/* Create the implementation and set the workload and the workers up. */
static void run_setup(struct run *r, struct worker *w, const struct options *opt,
		      const struct workload_def *wl)
{
	unsigned n = opt->threads;

	r->opt = opt;
	r->wl = wl;
	r->impl = impl_find(opt->impl);
	if (!r->impl)
		usage_error("--impl: unknown implementation '%s'", opt->impl);
	r->cfg.memory_limit = opt->memory_set ? opt->memory :
			      strcmp(wl->name, "trickle") == 0 ? TRICKLE_LIMIT : opt->memory;
	r->cfg.root = ROOT_INO;
	r->cfg.backend = &model_backend;
	r->cfg.hash_key[0] = mix64(opt->seed);
	r->cfg.hash_key[1] = mix64(opt->seed + 1);
	r->cfg.no_reclaim_thread = opt->no_reclaim_thread;
	r->model.names = &r->names;
	r->c = r->impl->create(&r->cfg);
	if (!r->c)
		die("%s: create: %s", r->impl->name, strerror(errno));
	wl->setup(r);
	atomic_init(&r->stop.raised, false);
	barrier_init(&r->start, n + 1);
	for (unsigned i = 0; i < n; i++) {
		w[i].run = r;
		w[i].id = i;
		w[i].rng = thread_rng(opt->seed, i);
		w[i].be.m = &r->model;
		w[i].be.id = i;
		w[i].be.priv = &w[i].priv;
		w[i].quota = opt->count_set && opt->count ? opt->count / n + (i < opt->count % n) :
							      UINT64_MAX;
		compare_worker_prepare(&w[i], r);
		atomic_init(&w[i].progress, 0);
	}
}

/* Main while the workers run: watch memory, print progress, until the
 * deadline or every quota is done. */
static void run_watch(const struct run *r, struct worker *w, struct mem_watch *mw, uint64_t t0,
		      bool tty)
{
	const struct options *opt = r->opt;
	unsigned n = opt->threads, done;
	uint64_t deadline, next, next_progress, last_ops = 0, last_t;

	next = last_t = t0;
	next_progress = t0 + PROGRESS_NS;   /* the first line with a period behind it */
	deadline = opt->count_set && opt->count && !opt->seconds_set ? UINT64_MAX :
									  t0 + seconds_ns(opt->seconds);
	do {
		watch_sample(mw);
		if (tty && now_ns() >= next_progress) {
			progress_line(r, w, n, t0, &last_ops, &last_t);
			next_progress += PROGRESS_NS;
		}
		watch_sleep(&next);
		done = 0;
		for (unsigned i = 0; i < n; i++)
			done += atomic_load_explicit(&w[i].progress, memory_order_relaxed) >=
				(w[i].quota & ~(uint64_t)(CHECK_EVERY - 1));
	} while (now_ns() < deadline && done < n);
}

/* Join the workers and add their counters up; the last one's end time. */
static uint64_t run_join(struct worker *w, unsigned n, struct totals *tt)
{
	uint64_t t1 = 0;

	tt->lat = threads_alloc(4, sizeof(struct lat_hist));
	tt->rmdir_lat = tt->lat + 1;
	tt->inval_lat = tt->lat + 2;
	tt->rename_lat = tt->lat + 3;
	for (unsigned i = 0; i < n; i++) {
		thread_join(w[i].tid);
		tt->ops += w[i].ops;
		tt->calls += w[i].calls;
		tt->hits += w[i].hits;
		tt->misses += w[i].misses;
		tt->wrong += w[i].wrong;
		tt->unchecked += w[i].unchecked;
		tt->be_calls += w[i].be.calls;
		lat_merge(tt->lat, &w[i].lat);
		lat_merge(tt->rmdir_lat, &w[i].rmdir_lat);
		lat_merge(tt->inval_lat, &w[i].inval_lat);
		lat_merge(tt->rename_lat, &w[i].rename_lat);
		if (w[i].t_end > t1)
			t1 = w[i].t_end;
	}
	return t1;
}

int run_compare(const struct options *opt)
{
	const struct workload_def *wl = compare_workload(opt->workload);
	unsigned n = opt->threads;
	struct run *r = threads_alloc(1, sizeof(*r));
	struct worker *w = threads_alloc(n, sizeof(*w));
	struct totals tt = { 0 };
	struct mem_watch mw = { 0 };
	bool tty = isatty(STDERR_FILENO) && !opt->json && !opt->csv, failed;
	uint64_t t0, t1;

	if (!wl)
		die("run_compare: no workload %s", opt->workload);
	run_setup(r, w, opt, wl);
	mw.impl = r->impl;
	mw.c = r->c;
	mw.limit = r->cfg.memory_limit;
	for (unsigned i = 0; i < n; i++)
		thread_start(&w[i].tid, worker_main, &w[i]);
	rcu_stall_start(opt->rcu_stall_ms);
	pthread_barrier_wait(&r->start);
	t0 = now_ns();
	run_watch(r, w, &mw, t0, tty);
	stop_raise(&r->stop);
	t1 = run_join(w, n, &tt);
	r->rcu_stalls = rcu_stall_stop();
	watch_sample(&mw);
	if (tty)
		fputs("\r\033[K", stderr);
	tt.secs = (double)(t1 - t0) / 1e9;
	pthread_barrier_destroy(&r->start);
	report(r, &tt, &mw, t0, t1, &failed);
	for (unsigned i = 0; i < n; i++)
		if (w[i].wrong)
			fprintf(stderr, "udc-stress: thread %u: %" PRIu64 " wrong; first: %s\n", i,
				w[i].wrong, w[i].first_wrong);
	if (opt->mem_csv) {
		int rc = watch_write_csv(&mw, t0, opt->mem_csv);

		if (rc < 0)
			die("--mem-csv %s: %s", opt->mem_csv, strerror(-rc));
	}
	fflush(stdout);

	r->impl->destroy(r->c);
	compare_run_free(r, w, n);
	watch_free(&mw);
	free(tt.lat);
	free(w);
	free(r);
	return failed ? 1 : 0;
}

/* ---------------------------------------------------------------------- */
/* replay: every --trace through stress/replay/, one report */

/*
 * The replay's memory watch (replay_opts.sample, on the replaying thread,
 * every 64 events): a full sample (bytes_used, RSS) every SAMPLE_NS, and at
 * every new maximum and past limit + slack, so that max bytes_used and the
 * samples past the bound are those of every 64 events.
 */
static void replay_sample(void *arg, void *cache, const struct udc_stats *st)
{
	struct mem_watch *w = arg;
	if (w->n == 0) {
		w->c = cache;
		watch_sample(w);
		return;
	}
	if (now_ns() - w->s[w->n - 1].t_ns >= SAMPLE_NS || st->bytes_used > w->max_bytes ||
	    st->bytes_used > w->limit + mem_slack(w->limit))
		watch_sample(w);
}

/* The mean of sum over n samples (0 with none). */
static double mean_of(uint64_t sum, uint64_t n)
{
	return n ? (double)sum / (double)n : 0.0;
}

/* Where bytes_used was at the end (udcache): the density faults of issue
 * 14 showed here first (stop 23's pinned pages, stop 24's main pages). */
static void report_parts(struct report *rp, const struct shrink_bytes_parts *p)
{
	static const char *const kind[2] = { "negatives", "positives" };
	static const char *const queue[2] = { "probation", "main" };
	char key[32], label[64];

	rep_obj_begin(rp, "bytes_parts", "parts.");
	rep_u64(rp, "total", "bytes_used at the end", p->total);
	rep_u64(rp, "dirs", "directory objects", p->dirs);
	rep_u64(rp, "buckets", "the tables' buckets", p->buckets);
	rep_u64(rp, "ghosts", "the ghost table", p->ghosts);
	rep_u64(rp, "other", "the rest (names apart, stats, the cache struct)", p->other);
	for (unsigned k = 0; k < 2; k++) {
		snprintf(key, sizeof(key), "slab_%s", kind[k]);
		snprintf(label, sizeof(label), "%s' slab", kind[k]);
		rep_u64(rp, key, label, p->slab[k]);
		for (unsigned q = 0; q < 2; q++) {
			snprintf(key, sizeof(key), "%s_%s_pages", kind[k], queue[q]);
			snprintf(label, sizeof(label), "%s' %s: pages", kind[k], queue[q]);
			rep_u64(rp, key, label, p->pages[k][q]);
			snprintf(key, sizeof(key), "%s_%s_live", kind[k], queue[q]);
			snprintf(label, sizeof(label), "%s' %s: live slots", kind[k], queue[q]);
			rep_u64(rp, key, label, p->live[k][q]);
		}
	}
	rep_obj_end(rp);
}

/* What replay_result says per component, of the entries held and of the optimum. */
static void replay_report_measures(struct report *rp, const struct options *opt,
				   const struct replay_result *res)
{
	uint64_t lookups = res->backend_positive + res->backend_negative;
	double entries = mean_of(res->entries_sum, res->samples);
	char series[REPLAY_SERIES * 21 + 1];
	size_t o = 0;

	rep_u64(rp, "lanes", "lanes (process trees replayed at once)", res->lanes);
	rep_u64(rp, "components", "components walked", res->components);
	rep_u64(rp, "components_negative", "components the store lacks", res->components_negative);
	rep_u64(rp, "backend_positive", "backend lookups, positive", res->backend_positive);
	rep_u64(rp, "backend_negative", "backend lookups, negative", res->backend_negative);
	rep_u64(rp, "backend_readlinks", "backend readlinks", res->backend_readlinks);
	rep_f64(rp, "component_hit_ratio", "component hit ratio",
		res->components ? 1.0 - (double)lookups / (double)res->components : 0.0, 5);
	rep_u64(rp, "negative_hits", "negative component hits",
		res->components_negative > res->backend_negative
			? res->components_negative - res->backend_negative
			: 0);
	rep_f64(rp, "entries_mean", "entries held, mean (last pass)", entries, 1);
	rep_u64(rp, "entries_max", "entries held, max (last pass)", res->entries_max);
	rep_f64(rp, "negatives_mean", "negatives held, mean (last pass)",
		mean_of(res->negatives_sum, res->samples), 1);
	rep_f64(rp, "bytes_used_mean", "bytes_used, mean (last pass)",
		mean_of(res->bytes_used_sum, res->samples), 0);
	rep_f64(rp, "bytes_per_entry", "bytes_used per entry held (means)",
		entries > 0 ? mean_of(res->bytes_used_sum, res->samples) / entries : 0.0, 1);
	for (unsigned k = 0; k < REPLAY_SERIES; k++)
		o += (size_t)snprintf(series + o, sizeof(series) - o, "%s%" PRIu64, k ? " " : "",
				      res->entries_series[k]);
	rep_str(rp, "entries_series", "entries held over the pass (16ths)", series);
	if (opt->optimum) {
		rep_u64(rp, "optimum_entries", "optimum: entries", opt->optimum);
		rep_u64(rp, "optimum_misses", "optimum: component misses (Belady)",
			res->optimum_misses);
	}
}

/* Replay traces [first, first + n) at once (one, or the --mix) and report
 * them; their wrong answers, *failed if past the bound. */
static uint64_t replay_group(const struct options *opt, const struct impl *impl, size_t limit,
			     unsigned first, unsigned n, struct report *rp, bool *failed)
{
	struct replay_trace *t[n];
	struct replay_summary sm, one;
	struct replay_result res;
	struct mem_watch mw = { .impl = impl, .limit = limit, .period_ns = SAMPLE_NS };
	struct replay_opts ro = { .memory_limit = limit,
				  .passes = opt->passes,
				  .no_reclaim_thread = opt->no_reclaim_thread,
				  .copies = opt->copies,
				  .max_entries = opt->max_entries,
				  .seed = opt->seed,
				  .optimum_entries = opt->optimum,
				  .sample = replay_sample,
				  .sample_arg = &mw };
	char err[256], label[64];
	const char *file = n == 1 ? opt->traces[first] : "mix";

	memset(&sm, 0, sizeof(sm));
	for (unsigned k = 0; k < n; k++) {
		if (replay_load(opt->traces[first + k], &t[k], err, sizeof(err)) < 0)
			die("replay: %s", err);
		replay_summary(t[k], &one);
		sm.lines += one.lines;
		sm.syscalls_parsed += one.syscalls_parsed;
		sm.lines_skipped += one.lines_skipped;
	}
	uint64_t t0 = now_ns(), t1;
	int rc = replay_run_mix(impl, (const struct replay_trace *const *)t, n, &ro, &res);
	t1 = now_ns();
	if (rc < 0)
		die("replay %s: %s: %s", file, impl->name, strerror(-rc));
	snprintf(label, sizeof(label), "trace %u.", first);
	rep_obj_begin(rp, NULL, label);
	rep_str(rp, "trace", "file", file);
	rep_u64(rp, "lines", "lines", sm.lines);
	rep_u64(rp, "syscalls", "syscalls parsed", sm.syscalls_parsed);
	rep_u64(rp, "lines_skipped", "lines skipped", sm.lines_skipped);
	rep_u64(rp, "events", "events (last pass, every copy)", res.events);
	rep_u64(rp, "walks", "walks", res.walks);
	rep_u64(rp, "hits", "walks with no backend call", res.hits);
	rep_u64(rp, "misses", "walks with backend calls", res.misses);
	rep_u64(rp, "backend_calls", "backend calls", res.backend_calls);
	rep_u64(rp, "negative_answers", "-ENOENT answers", res.negative_answers);
	rep_u64(rp, "mutations", "mutations", res.mutations);
	rep_u64(rp, "unmodelled", "lookups the model cannot reproduce", res.unmodelled);
	rep_u64(rp, "cache_errors", "cache errors", res.cache_errors);
	rep_u64(rp, "wrong", "wrong answers", res.wrong);
	rep_u64(rp, "bytes_used_max", "bytes_used max", res.bytes_used_max);
	rep_u64(rp, "bytes_used_end", "bytes_used end", res.bytes_used_end);
	rep_u64(rp, "rss_end", "process RSS at the end", res.rss_end);
	rep_u64(rp, "nr_negative_end", "negatives held at the end", res.nr_negative_end);
	rep_u64(rp, "nr_positive_end", "positives held at the end", res.nr_positive_end);
	rep_u64(rp, "evictions_end", "evictions", res.evictions_end);
	rep_u64(rp, "promoted_end", "promotions to main", res.promoted_end);
	rep_u64(rp, "refaults_end", "refaults (ghosts found)", res.refaults_end);
	rep_u64(rp, "declined_end", "negatives declined", res.declined_end);
	rep_f64(rp, "dirs_mean", "directory objects (mean)",
		res.samples ? (double)res.dirs_sum / (double)res.samples : 0.0, 1);
	rep_f64(rp, "seconds", "seconds (last pass)", res.seconds, 4);
	if (res.has_parts)
		report_parts(rp, &res.parts);
	replay_report_measures(rp, opt, &res);
	*failed = rep_memory(rp, &mw, t0, t1) && impl->bounded;
	rep_obj_end(rp);
	if (res.wrong)
		rep_warn(rp, "%s: %" PRIu64 " wrong answers; first: %s", file, res.wrong,
			 res.first_wrong);
	watch_free(&mw);
	for (unsigned k = 0; k < n; k++)
		replay_free(t[k]);
	return res.wrong;
}

int run_replay(const struct options *opt)
{
	const struct impl *impl = impl_find(opt->impl);
	size_t limit = opt->memory_set ? opt->memory : REPLAY_LIMIT;
	uint64_t wrong_total = 0;
	bool failed = false;
	struct report rp;

	if (!impl)
		usage_error("--impl: unknown implementation '%s'", opt->impl);
	rep_begin(&rp, opt->json);
	rep_str(&rp, "workload", "workload", "replay");
	rep_str(&rp, "impl", "impl", impl->name);
	rep_u64(&rp, "memory_limit", "memory limit (bytes)", limit);
	rep_u64(&rp, "passes", "passes", opt->passes);
	rep_u64(&rp, "copies", "copies of each trace's tree", opt->copies);
	rep_bool(&rp, "reclaim_thread", "reclaim thread", !opt->no_reclaim_thread);
	rep_bool(&rp, "mix", "every trace in one replay", opt->mix);
	rep_u64(&rp, "max_entries", "entry limit (lru-mutex, s3fifo; 0 none)", opt->max_entries);
	rep_u64(&rp, "seed", "seed (the lanes' interleaving)", opt->seed);
	rep_arr_begin(&rp, "traces");
	for (unsigned k = 0; k < opt->nr_traces; k += opt->mix ? opt->nr_traces : 1) {
		bool f;

		wrong_total += replay_group(opt, impl, limit, k, opt->mix ? opt->nr_traces : 1,
					    &rp, &f);
		failed = failed || f;
	}
	rep_arr_end(&rp);
	rep_u64(&rp, "wrong_answers", "wrong answers in all", wrong_total);
	rep_bool(&rp, "failed_bound", "a trace past limit+slack+1MiB", failed);
	if (wrong_total || failed)
		rep_warn(&rp, "FAILED");
	rep_end(&rp);
	fflush(stdout);
	return wrong_total || failed ? 1 : 0;
}
