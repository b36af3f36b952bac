/* SPDX-License-Identifier: MIT */
/*
 * stress/measure.c - the measuring tools udc-stress's workloads share.
 *
 * Owns: the latency histogram's quantiles and report, the thread helpers
 * (start, join, barrier, per-thread memory and PRNG seeds, the stop flag),
 * the memory watch (bytes_used, RSS and negatives held every 10 ms, through
 * struct impl's stats so that every --impl is watched the same way), its
 * monitor thread, its report and CSV, and name_fmt().
 *
 * Locking: none.  A struct mem_watch is written by one thread (a monitor,
 * or main) and read by main after pthread_join(), which orders memory.  A
 * struct lat_hist is its worker's own until joined.
 *
 * Ordering:
 *  - struct stop_flag: main raises it (relaxed) to end a monitor or churn
 *    thread, which polls it (relaxed).  Termination is all it carries: the
 *    thread's results reach main through pthread_join(), and nothing main
 *    writes before raising the flag is read by the thread afterwards.
 *
 * Limitations:
 *  - Latency percentiles are bucket upper bounds (16 buckets per power of
 *    two, so within 6.25% above the true value); max and the count of calls
 *    over 1 ms are exact.  Each timed call includes two clock_gettime calls
 *    (vDSO, ~20 ns) and whatever preemption hit the thread.
 *  - The memory watch samples every 10 ms: an overshoot shorter than that
 *    can be missed.  RSS is the whole process's, the program's own arrays
 *    included.
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif

#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "stress/measure.h"

/* ---------------------------------------------------------------------- */
/* Latency */

/* The smallest value bucket i holds (lat_index's inverse). */
static uint64_t lat_bucket_low(unsigned i)
{
	unsigned e, shift;

	if (i < LAT_SUB)
		return i;
	e = i / LAT_SUB + LAT_SUB_BITS - 1;
	shift = e - LAT_SUB_BITS;
	return (uint64_t)(LAT_SUB + i % LAT_SUB) << shift;
}

/* The largest: the buckets are contiguous. */
static uint64_t lat_bucket_high(unsigned i)
{
	return i + 1 < LAT_BUCKETS ? lat_bucket_low(i + 1) - 1 : UINT64_MAX;
}


void lat_merge(struct lat_hist *dst, const struct lat_hist *src)
{
	dst->n += src->n;
	dst->over_1ms += src->over_1ms;
	if (src->max > dst->max)
		dst->max = src->max;
	for (unsigned i = 0; i < LAT_BUCKETS; i++)
		dst->bucket[i] += src->bucket[i];
}

/*
 * The q-quantile, interpolated within its bucket (the calls in a bucket
 * taken as spread evenly over it), never past the largest call.  Until
 * issue 17 it was the bucket's upper bound: a p99 of 2097151 ns named a
 * bucket of [2031616, 2097151] (buckets are 3-6% wide) and read as a
 * measured value.
 */
uint64_t lat_quantile(const struct lat_hist *h, double q)
{
	uint64_t rank = (uint64_t)ceil(q * (double)h->n), seen = 0;

	if (h->n == 0)
		return 0;
	if (rank == 0)
		rank = 1;
	if (rank >= h->n)
		return h->max;   /* the largest call is known exactly */
	for (unsigned i = 0; i < LAT_BUCKETS; i++) {
		if (seen + h->bucket[i] >= rank) {
			uint64_t lo = lat_bucket_low(i), hi = lat_bucket_high(i);
			double at = ((double)(rank - seen) - 0.5) / (double)h->bucket[i];
			uint64_t v = lo + (uint64_t)(at * (double)(hi - lo + 1));

			if (v > hi)
				v = hi;
			return v < h->max ? v : h->max;
		}
		seen += h->bucket[i];
	}
	return h->max;
}

void rep_latency(struct report *r, const char *key, const char *prefix,
			const struct lat_hist *h)
{
	rep_obj_begin(r, key, prefix);
	rep_u64(r, "calls", "calls", h->n);
	rep_u64(r, "p50", "p50", lat_quantile(h, 0.50));
	rep_u64(r, "p99", "p99", lat_quantile(h, 0.99));
	rep_u64(r, "p99_9", "p99.9", lat_quantile(h, 0.999));
	rep_u64(r, "p99_99", "p99.99", lat_quantile(h, 0.9999));
	rep_u64(r, "max", "max", h->max);
	rep_u64(r, "over_1ms", "calls over 1 ms", h->over_1ms);
	rep_obj_end(r);
}
/* ---------------------------------------------------------------------- */
/* Threads */


/* Relaxed: termination only; the results travel through pthread_join(). */
void stop_raise(struct stop_flag *f)
{
	atomic_store_explicit(&f->raised, true, memory_order_relaxed);
}

bool stop_seen(struct stop_flag *f)
{
	return atomic_load_explicit(&f->raised, memory_order_relaxed);
}

void thread_start(pthread_t *t, void *(*fn)(void *), void *arg)
{
	int err = pthread_create(t, NULL, fn, arg);

	if (err)
		die("pthread_create: %s", strerror(err));
}

void thread_join(pthread_t t)
{
	int err = pthread_join(t, NULL);

	if (err)
		die("pthread_join: %s", strerror(err));
}

void barrier_init(pthread_barrier_t *b, unsigned n)
{
	int err = pthread_barrier_init(b, NULL, n);

	if (err)
		die("pthread_barrier_init: %s", strerror(err));
}

/* Zeroed, cache-line aligned memory for n per-thread structs. */
void *threads_alloc(size_t n, size_t size)
{
	size_t bytes = (n * size + CACHELINE - 1) & ~(size_t)(CACHELINE - 1); /* C11's rule */
	void *p = aligned_alloc(CACHELINE, bytes);

	if (!p)
		die("out of memory for %zu threads", n);
	memset(p, 0, bytes);
	return p;
}

/* A seeded per-thread PRNG state, never xorshift's fixed point 0. */
uint64_t thread_rng(uint64_t seed, unsigned id)
{
	uint64_t s = seed ^ mix64(id + 1), v = splitmix64(&s);

	return v ? v : 1;
}

/* ---------------------------------------------------------------------- */
/* Memory watch: bytes_used and RSS every SAMPLE_NS */



/* The overshoot the contract allows (udcache.h, udc_stats.bytes_slack): 1%
 * of the limit, or 4% of it between 16 KiB and 1 MiB, the larger.  The
 * baselines are held to the same bound. */
uint64_t mem_slack(uint64_t limit)
{
	uint64_t one = limit / 100, four = limit / 25, lo = (uint64_t)16 << 10, hi = (uint64_t)1 << 20;
	uint64_t floor = four < lo ? lo : four > hi ? hi : four;

	return one > floor ? one : floor;
}

const struct mem_sample *watch_sample(struct mem_watch *w)
{
	struct udc_stats st = { .size = sizeof(st) };
	struct mem_sample *m;

	if (w->n == w->cap) {
		w->cap = w->cap ? 2 * w->cap : 1024;
		w->s = realloc(w->s, w->cap * sizeof(*w->s));
		if (!w->s)
			die("out of memory for %zu memory samples", w->cap);
	}
	m = &w->s[w->n++];
	m->t_ns = now_ns();
	w->impl->stats(w->c, &st);
	m->bytes = st.bytes_used;
	m->nr_negative = st.nr_negative;
	if (st.bytes_slack && st.bytes_slack != mem_slack(w->limit))
		die("the cache states a slack of %llu bytes, udc-stress %llu: mem_slack is stale",
		    (unsigned long long)st.bytes_slack, (unsigned long long)mem_slack(w->limit));
	m->rss = rss_bytes();
	if (m->bytes > w->max_bytes)
		w->max_bytes = m->bytes;
	if (m->rss > w->max_rss)
		w->max_rss = m->rss;
	w->over_bound += m->bytes > w->limit + mem_slack(w->limit);
	return m;
}

void watch_free(struct mem_watch *w)
{
	free(w->s);
	w->s = NULL;
	w->n = w->cap = 0;
}

/* The absolute time t_ns, as clock_nanosleep's deadline. */
struct timespec ns_to_ts(uint64_t t_ns)
{
	struct timespec ts = { .tv_sec = (time_t)(t_ns / NS_PER_SEC),
			       .tv_nsec = (long)(t_ns % NS_PER_SEC) };
	return ts;
}

/* Sleep to the next multiple of SAMPLE_NS after *next (never catching up in a burst). */
void watch_sleep(uint64_t *next)
{
	uint64_t now = now_ns();
	struct timespec ts;

	*next += SAMPLE_NS;
	if (*next < now)
		*next = now;
	ts = ns_to_ts(*next);
	sleep_until(&ts);
}


static void *monitor_main(void *arg)
{
	struct monitor *m = arg;
	uint64_t next = now_ns();

	while (!stop_seen(&m->stop)) {
		watch_sample(&m->w);
		watch_sleep(&next);
	}
	watch_sample(&m->w); /* the reading at the end */
	return NULL;
}

void monitor_start(struct monitor *m, const struct impl *impl, void *c, uint64_t limit)
{
	memset(m, 0, sizeof(*m));
	m->w.impl = impl;
	m->w.c = c;
	m->w.limit = limit;
	atomic_init(&m->stop.raised, false);
	thread_start(&m->tid, monitor_main, m);
}

void monitor_stop(struct monitor *m)
{
	stop_raise(&m->stop);
	thread_join(m->tid);
}

/* RSS of the first sample at or after t0 + frac * (t1 - t0) (the last one if none). */
static uint64_t watch_rss_at(const struct mem_watch *w, uint64_t t0, uint64_t t1, double frac)
{
	uint64_t t = t0 + (uint64_t)(frac * (double)(t1 - t0));

	for (size_t i = 0; i < w->n; i++)
		if (w->s[i].t_ns >= t)
			return w->s[i].rss;
	return w->n ? w->s[w->n - 1].rss : 0;
}

/*
 * The object "memory": bytes_used against the limit and the contract's
 * bound (and the verdict, "memory bound"), RSS at 10%, 50% and the end of
 * [t0, t1] and its maximum.  Returns true if bytes_used ever passed
 * limit + slack + BOUND_EXTRA (the run fails).
 */
bool rep_memory(struct report *r, const struct mem_watch *w, uint64_t t0, uint64_t t1)
{
	uint64_t slack = mem_slack(w->limit), bound = w->limit + slack;
	uint64_t final = w->n ? w->s[w->n - 1].bytes : 0;
	bool failed = w->max_bytes > bound + BOUND_EXTRA;
	const char *verdict = failed ? "FAILED" : "ok";

	rep_obj_begin(r, "memory", "mem.");
	rep_u64(r, "limit", "limit", w->limit);
	rep_u64(r, "slack", "slack", slack);
	rep_u64(r, "samples", "samples", w->n);
	rep_f64(r, "sample_period_ms", "sample period (ms)",
		(double)(w->period_ns ? w->period_ns : SAMPLE_NS) / 1e6, 1);
	rep_u64(r, "bytes_used_max", "bytes_used max", w->max_bytes);
	rep_u64(r, "bytes_used_final", "bytes_used final", final);
	rep_f64(r, "max_vs_limit", "max / limit", (double)w->max_bytes / (double)w->limit, 4);
	rep_i64(r, "max_excess", "max excess over limit", (int64_t)(w->max_bytes - w->limit));
	rep_bool(r, "exceeded_slack", "ever past limit + slack", w->max_bytes > bound);
	rep_u64(r, "samples_past_slack", "samples past limit+slack", w->over_bound);
	rep_bool(r, "failed_bound", "past limit+slack+1MiB", failed);
	if (!failed && w->max_bytes > bound)
		verdict = "past slack";
	rep_str(r, "bound", "memory bound", verdict);
	rep_u64(r, "rss_10pct", "RSS at 10%", watch_rss_at(w, t0, t1, 0.1));
	rep_u64(r, "rss_50pct", "RSS at 50%", watch_rss_at(w, t0, t1, 0.5));
	rep_u64(r, "rss_end", "RSS at end", w->n ? w->s[w->n - 1].rss : 0);
	rep_u64(r, "rss_max", "RSS max", w->max_rss);
	rep_obj_end(r);
	if (w->max_bytes > bound)
		rep_warn(r,
			 "bytes_used reached %" PRIu64 ", %" PRIu64
			 " bytes past limit + slack (%" PRIu64 ")%s",
			 w->max_bytes, w->max_bytes - bound, bound,
			 failed ? ": past the extra 1 MiB too, FAILED" : "");
	return failed;
}

/* ---------------------------------------------------------------------- */
/* Names, directories, the backend */

/* "<prefix><a in hex>-<b in hex>"; buf holds NAME_BUF bytes.  No snprintf in the loops. */
size_t name_fmt(char *buf, const char *prefix, uint64_t a, uint64_t b)
{
	static const char hex[] = "0123456789abcdef";
	size_t k = strlen(prefix);
	uint64_t v[2] = { a, b };

	memcpy(buf, prefix, k);
	for (int j = 0; j < 2; j++) {
		char tmp[16];
		int n = 0;

		do
			tmp[n++] = hex[v[j] & 15];
		while (v[j] >>= 4);
		while (n)
			buf[k++] = tmp[--n];
		if (j == 0)
			buf[k++] = '-';
	}
	return k;
}

int watch_write_csv(const struct mem_watch *w, uint64_t t0, const char *path)
{
	FILE *f = fopen(path, "w");

	if (!f)
		return -errno;
	fputs("seconds,bytes_used,rss,nr_negative\n", f);
	for (size_t i = 0; i < w->n; i++)
		fprintf(f, "%.3f,%" PRIu64 ",%" PRIu64 ",%" PRIu64 "\n",
			(double)(w->s[i].t_ns - t0) / 1e9, w->s[i].bytes, w->s[i].rss,
			w->s[i].nr_negative);
	if (fclose(f) != 0)
		return -errno;
	return 0;
}

uint64_t seconds_ns(double s)
{
	return (uint64_t)(s * 1e9);
}
