/* SPDX-License-Identifier: MIT */
/*
 * stress/buildtrace.c - the buildtrace workload, a reclaim-policy study
 * beside stress/policy.c (hotset, invalidate): how many of a build's
 * repeated negative lookups a bounded cache keeps hitting.
 *
 * Owns: the build model (headers, search directories, scratch names) and
 * its backend, the two runs (bounded and unbounded cache) and the report.
 * Everything goes through the public header include/udcache.h only (the
 * cache and its directories are policy.c's policy_cache and policy_add_dirs).
 *
 * The workload: one thread replays a build-like trace twice from --seed,
 *                in a cache of --limit bytes and in an unbounded one (16G):
 *                --units units each include --includes distinct headers
 *                (Zipf 1.0 over --headers, each living in one of --dirs
 *                search directories, tried in order until found: the misses
 *                before it are negatives repeated across units) and resolve
 *                --unique names once (--scratch-dirs directories).  Reports
 *                the negative hits, negatives held (end, and the mean of a
 *                sample every BUILD_SAMPLE_UNITS units) and backend calls
 *                of each cache and the policy's share of the unbounded
 *                figures.  Fails on a wrong answer only.
 *
 * Locking: none; buildtrace runs on main alone.
 *
 * Ordering: none (no atomics here).
 *
 * Limitations:
 *  - buildtrace's "unbounded" cache has a 16G limit but the same admission
 *    rules: a directory holds at most max(8 x its positives, 65536)
 *    negatives in it too, so with one scratch directory it declines most
 *    unique names as well (see its negatives_declined); --scratch-dirs
 *    spreads them.  Every call is anonymous (client 0: no per-client
 *    share).  A unit includes each header once (include guards); a
 *    duplicate is kept only when 64 draws in a row hit headers already
 *    included (--includes near --headers).
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif

#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "stress/measure.h"
#include "stress/stress.h"

#define BUILD_FILE_INO ((udc_ino)1 << 41) /* buildtrace's header h is this + h */


/*
 * The model: --headers headers, header h named "hdr-0-<h>" and living in
 * search directory home[h] (dir_ino(home[h]), a regular file of ino
 * BUILD_FILE_INO + h); the unique names go round-robin to the scratch
 * directories dir_ino(dirs + 0..scratch-1).  The backend answers from the
 * model, so both caches see the same store.
 */
struct build_model {
	uint64_t dirs, headers, scratch;
	uint32_t *home;
	double *cdf; /* Zipf(1.0) over the headers by index: P(index <= i) */
};

/* The backend's ctx: the model, and the calls made (one thread). */
struct build_backend {
	const struct build_model *m;
	uint64_t calls;
};

/* What one cache's pass over the sequence gave. */
struct build_run {
	const char *key, *prefix; /* the report's object */
	size_t limit;
	struct build_backend be;
	uint64_t resolves;
	uint64_t wrong; /* the first: bad_rc for header bad_h in directory bad_d */
	int bad_rc;
	uint64_t bad_h, bad_d;
	uint64_t samples, neg_max, bytes_max;
	double neg_sum, seconds;
	struct udc_stats st;
	uint64_t rss_end; /* the process's RSS, read with st */
};

/* The header's index, if name is "hdr-0-<h in hex>" with h < headers. */
static bool build_header_of(const struct build_model *m, const char *name, size_t len, uint64_t *h)
{
	static const char pre[] = "hdr-0-";
	uint64_t v = 0;

	if (len <= sizeof(pre) - 1 || len > sizeof(pre) - 1 + 16 ||
	    memcmp(name, pre, sizeof(pre) - 1))
		return false;
	for (size_t i = sizeof(pre) - 1; i < len; i++) {
		char ch = name[i];

		if (ch >= '0' && ch <= '9')
			v = v << 4 | (uint64_t)(ch - '0');
		else if (ch >= 'a' && ch <= 'f')
			v = v << 4 | (uint64_t)(ch - 'a' + 10);
		else
			return false;
	}
	*h = v;
	return v < m->headers;
}

static int build_lookup(void *ctx, udc_ino dir, const char *name, size_t len, struct udc_attr *out)
{
	struct build_backend *be = ctx;
	uint64_t h;

	be->calls++;
	if (!build_header_of(be->m, name, len, &h) || dir != dir_ino(be->m->home[h]))
		return -ENOENT;
	*out = (struct udc_attr){ .ino = BUILD_FILE_INO + h, .type = UDC_TYPE_REG, .cookie = h };
	return 0;
}

static const struct udc_backend build_backend = { .lookup = build_lookup };

static void build_model_init(struct build_model *m, const struct options *opt)
{
	uint64_t rng = thread_rng(opt->seed, 3000);
	double sum = 0.0;

	m->dirs = opt->dirs_set ? opt->dirs : BUILD_DIRS;
	m->headers = opt->headers;
	m->scratch = opt->scratch_dirs;
	m->home = malloc(m->headers * sizeof(*m->home));
	m->cdf = malloc(m->headers * sizeof(*m->cdf));
	if (!m->home || !m->cdf)
		die("out of memory for %" PRIu64 " headers", m->headers);
	for (uint64_t h = 0; h < m->headers; h++) {
		m->home[h] = (uint32_t)rand_below(&rng, m->dirs);
		sum += 1.0 / (double)(h + 1);
		m->cdf[h] = sum;
	}
	for (uint64_t h = 0; h < m->headers; h++)
		m->cdf[h] /= sum;
}

/* A header drawn from Zipf(1.0): the first index whose cdf passes a uniform [0, 1). */
static uint64_t build_zipf(const struct build_model *m, uint64_t *rng)
{
	double u = (double)(xorshift64star(rng) >> 11) * 0x1p-53;
	uint64_t lo = 0, hi = m->headers - 1;

	while (lo < hi) {
		uint64_t mid = lo + (hi - lo) / 2;

		if (m->cdf[mid] > u)
			hi = mid;
		else
			lo = mid + 1;
	}
	return lo;
}

/* A unit's includes: k distinct headers (a duplicate only after 64 draws fail). */
static void build_unit_includes(const struct build_model *m, uint64_t *rng, uint64_t *inc,
				uint64_t k)
{
	for (uint64_t i = 0; i < k; i++) {
		bool dup = true;

		for (int tries = 0; dup && tries < 64; tries++) {
			inc[i] = build_zipf(m, rng);
			dup = false;
			for (uint64_t j = 0; j < i && !dup; j++)
				dup = inc[j] == inc[i];
		}
	}
}

static void build_wrong(struct build_run *run, int rc, uint64_t h, uint64_t d)
{
	if (run->wrong++ == 0) {
		run->bad_rc = rc;
		run->bad_h = h;
		run->bad_d = d;
	}
}

/* Include header h: resolve it in each search directory until found; check each answer. */
static void build_include(udc_cache *c, const struct build_model *m, const struct udc_call *call,
			  struct build_run *run, uint64_t h)
{
	char name[NAME_BUF];
	size_t len = name_fmt(name, "hdr-", 0, h);

	for (uint64_t d = 0; d <= m->home[h]; d++) {
		struct udc_attr a = { 0 };
		int rc = udc_resolve(c, dir_ino(d), name, len, call, &a);

		run->resolves++;
		if (d < m->home[h] ? rc != -ENOENT :
				     rc != 0 || a.ino != BUILD_FILE_INO + h ||
					     a.type != UDC_TYPE_REG || a.cookie != h)
			build_wrong(run, rc, h, d);
	}
}

/* The whole sequence (from --seed, the same for every run) in a cache of run->limit. */
static void build_run_cache(const struct options *opt, const struct build_model *m,
			    struct build_run *run)
{
	uint64_t k = opt->includes < m->headers ? opt->includes : m->headers;
	uint64_t *inc = malloc(k * sizeof(*inc)), rng = thread_rng(opt->seed, 3001), t0;
	const struct udc_call call = { .ctx = &run->be, .client = 0 };
	char name[NAME_BUF];
	udc_cache *c;

	if (!inc)
		die("out of memory for %" PRIu64 " includes", k);
	run->be.m = m;
	c = policy_cache(opt, run->limit, &build_backend);
	policy_add_dirs(c, (unsigned)(m->dirs + m->scratch));
	t0 = now_ns();
	for (uint64_t u = 0; u < opt->units; u++) {
		build_unit_includes(m, &rng, inc, k);
		for (uint64_t i = 0; i < k; i++)
			build_include(c, m, &call, run, inc[i]);
		for (uint64_t i = 0; i < opt->unique; i++) {
			size_t len = name_fmt(name, "tmp-", u, i);
			uint64_t d = m->dirs + (u * opt->unique + i) % m->scratch;
			int rc = udc_resolve(c, dir_ino(d), name, len, &call, NULL);

			run->resolves++;
			if (rc != -ENOENT)
				build_wrong(run, rc, UINT64_MAX, d);
		}
		if ((u + 1) % BUILD_SAMPLE_UNITS == 0) {
			struct udc_stats st = { .size = sizeof(st) };

			udc_stats_get(c, &st);
			run->samples++;
			run->neg_sum += (double)st.nr_negative;
			if (st.nr_negative > run->neg_max)
				run->neg_max = st.nr_negative;
			if (st.bytes_used > run->bytes_max)
				run->bytes_max = st.bytes_used;
		}
	}
	run->seconds = (double)(now_ns() - t0) / 1e9;
	run->st.size = sizeof(run->st);
	udc_stats_get(c, &run->st);
	run->rss_end = rss_bytes();
	udc_destroy(c);
	free(inc);
}

static double ratio(uint64_t a, uint64_t b)
{
	return b ? (double)a / (double)b : NAN;
}

static void rep_build_run(struct report *r, const struct build_run *run)
{
	uint64_t bound = run->limit + mem_slack(run->limit);

	rep_obj_begin(r, run->key, run->prefix);
	rep_u64(r, "memory_limit", "memory limit", run->limit);
	rep_f64(r, "seconds", "seconds", run->seconds, 3);
	rep_f64(r, "resolves_per_sec", "resolves/s",
		run->seconds > 0 ? (double)run->resolves / run->seconds : NAN, 0);
	rep_u64(r, "hits_negative", "negative hits", run->st.hits_negative);
	rep_u64(r, "hits_positive", "positive hits", run->st.hits_positive);
	rep_u64(r, "backend_calls", "backend calls", run->be.calls);
	rep_u64(r, "nr_negative_end", "negatives, end", run->st.nr_negative);
	rep_f64(r, "nr_negative_mean", "negatives, mean",
		run->samples ? run->neg_sum / (double)run->samples : NAN, 0);
	rep_u64(r, "nr_negative_max", "negatives, max", run->neg_max);
	rep_u64(r, "nr_positive_end", "positives, end", run->st.nr_positive);
	rep_u64(r, "bytes_used", "bytes_used, end", run->st.bytes_used);
	rep_u64(r, "bytes_used_max", "bytes_used, max", run->bytes_max);
	rep_u64(r, "rss_end", "process RSS, end", run->rss_end);
	rep_u64(r, "wrong_answers", "wrong answers", run->wrong);
	rep_udc_stats(r, &run->st, run->rss_end);
	rep_obj_end(r);
	if (run->bytes_max > bound)
		rep_warn(r, "%s: bytes_used reached %" PRIu64 ", past limit + slack (%" PRIu64 ")",
			 run->key, run->bytes_max, bound);
	if (run->st.backend_calls != run->be.calls)
		rep_warn(r, "%s: stats.backend_calls %" PRIu64 ", the backend counted %" PRIu64,
			 run->key, run->st.backend_calls, run->be.calls);
	if (run->wrong && run->bad_h == UINT64_MAX)
		rep_warn(r, "%s: %" PRIu64 " wrong answers; first: a unique name gave %s: FAILED",
			 run->key, run->wrong, rc_name(run->bad_rc));
	else if (run->wrong)
		rep_warn(r,
			 "%s: %" PRIu64 " wrong answers; first: header %" PRIu64
			 " in directory %" PRIu64 " gave %s: FAILED",
			 run->key, run->wrong, run->bad_h, run->bad_d, rc_name(run->bad_rc));
}

int run_buildtrace(const struct options *opt)
{
	struct build_run run[2] = {
		{ .key = "policy",
		  .prefix = "pol.",
		  .limit = opt->memory_set ? opt->memory : BUILD_LIMIT },
		{ .key = "unbounded", .prefix = "unb.", .limit = BUILD_UNBOUNDED },
	};
	const struct build_run *p = &run[0], *u = &run[1];
	struct build_model m;
	struct report r;
	bool failed;

	build_model_init(&m, opt);
	for (int k = 0; k < 2; k++)
		build_run_cache(opt, &m, &run[k]);
	failed = p->wrong || u->wrong;

	rep_begin(&r, opt->json);
	rep_str(&r, "workload", "workload", "buildtrace");
	rep_str(&r, "version", "udcache version", udc_version());
	rep_u64(&r, "dirs", "search path directories", m.dirs);
	rep_u64(&r, "headers", "headers", m.headers);
	rep_u64(&r, "includes", "includes per unit", opt->includes);
	rep_u64(&r, "unique", "unique names per unit", opt->unique);
	rep_u64(&r, "scratch_dirs", "scratch directories", m.scratch);
	rep_u64(&r, "units", "units", opt->units);
	rep_hex(&r, "seed", "seed", opt->seed);
	rep_bool(&r, "reclaim_thread", "UDC_CFG_NO_RECLAIM_THREAD unset", !opt->no_reclaim_thread);
	rep_u64(&r, "resolves", "resolves (each cache)", p->resolves);
	rep_f64(&r, "negative_hits_kept", "negative hits kept",
		ratio(p->st.hits_negative, u->st.hits_negative), 4);
	rep_f64(&r, "negatives_held_ratio_end", "negatives held, end ratio",
		ratio(p->st.nr_negative, u->st.nr_negative), 4);
	rep_f64(&r, "negatives_held_ratio_mean", "negatives held, mean ratio",
		u->neg_sum > 0 ? p->neg_sum / u->neg_sum : NAN, 4);
	rep_f64(&r, "backend_calls_ratio", "backend calls ratio", ratio(p->be.calls, u->be.calls),
		4);
	rep_u64(&r, "wrong_answers", "wrong answers", p->wrong + u->wrong);
	for (int k = 0; k < 2; k++)
		rep_build_run(&r, &run[k]);
	if (failed)
		rep_warn(&r, "FAILED");
	rep_end(&r);
	fflush(stdout);

	free(m.home);
	free(m.cdf);
	return failed ? 1 : 0;
}
