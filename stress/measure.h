/* SPDX-License-Identifier: MIT */
/*
 * stress/measure.h - what udc-stress's workloads measure with: latency
 * histograms, thread helpers, the memory watch, compact names.
 *
 * Owns nothing at run time; see stress/measure.c.  lat_record() is inline
 * because the workers call it around every timed call.
 *
 * Locking: a struct lat_hist and a struct mem_watch belong to one thread at
 * a time (see measure.c); nothing here locks.
 *
 * Ordering: struct stop_flag is relaxed (termination only; see measure.c).
 */
#ifndef UDC_STRESS_MEASURE_H
#define UDC_STRESS_MEASURE_H

#include <pthread.h>
#include <stdalign.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

#include "stress/impl.h"
#include "stress/stress.h"

#define NS_PER_SEC 1000000000ull
#define SAMPLE_NS 10000000ull		/* the memory watch's period: 10 ms */
#define SLOW_CALL_NS 1000000ull		/* a call over 1 ms is counted apart */
#define BOUND_EXTRA ((uint64_t)1 << 20) /* fail past limit + slack + this */
#define NAME_BUF 64			/* name_fmt()'s buffer */

/* Latency: a log-bucketed histogram of nanoseconds, one per thread. */
#define LAT_SUB_BITS 4
#define LAT_SUB (1u << LAT_SUB_BITS)			/* buckets per power of two */
#define LAT_BUCKETS ((64 - LAT_SUB_BITS + 1) * LAT_SUB) /* up to 2^64 ns */

struct lat_hist {
	uint64_t n;
	uint64_t max;
	uint64_t over_1ms;
	uint64_t bucket[LAT_BUCKETS];
};

/* Values below LAT_SUB have a bucket each; above, LAT_SUB per power of two. */
static inline unsigned lat_index(uint64_t v)
{
	unsigned e;

	if (v < LAT_SUB)
		return (unsigned)v;
	e = 63u - (unsigned)__builtin_clzll(v); /* >= LAT_SUB_BITS */
	return (e - LAT_SUB_BITS + 1) * LAT_SUB +
	       (unsigned)((v >> (e - LAT_SUB_BITS)) & (LAT_SUB - 1));
}

static inline void lat_record(struct lat_hist *h, uint64_t ns)
{
	h->n++;
	h->bucket[lat_index(ns)]++;
	if (ns > h->max)
		h->max = ns;
	h->over_1ms += ns > SLOW_CALL_NS;
}

void lat_merge(struct lat_hist *dst, const struct lat_hist *src);
/* The q-quantile (0 < q <= 1): the high end of its bucket, at most the max. */
uint64_t lat_quantile(const struct lat_hist *h, double q);
/* The object key: calls, p50, p99, p99.9, p99.99, max, calls over 1 ms. */
void rep_latency(struct report *r, const char *key, const char *prefix, const struct lat_hist *h);

/* Threads */
struct stop_flag {
	alignas(CACHELINE) atomic_bool raised;
};
void stop_raise(struct stop_flag *f);
bool stop_seen(struct stop_flag *f);
void thread_start(pthread_t *t, void *(*fn)(void *), void *arg);
void thread_join(pthread_t t);
void barrier_init(pthread_barrier_t *b, unsigned n);
/* Zeroed, cache-line aligned memory for n per-thread structs (die on ENOMEM). */
void *threads_alloc(size_t n, size_t size);
/* A seeded per-thread PRNG state, never xorshift's fixed point 0. */
uint64_t thread_rng(uint64_t seed, unsigned id);
uint64_t seconds_ns(double s);
/* The absolute CLOCK_MONOTONIC time t_ns, as clock_nanosleep's deadline. */
struct timespec ns_to_ts(uint64_t t_ns);

/* Memory watch: bytes_used, RSS and negatives held every SAMPLE_NS. */
struct mem_sample {
	uint64_t t_ns;
	uint64_t bytes;
	uint64_t rss;
	uint64_t nr_negative;
};

struct mem_watch {
	/* Set by main before the sampling starts. */
	const struct impl *impl;
	void *c;
	uint64_t limit;
	uint64_t period_ns; /* the sampling period, for the report (0: SAMPLE_NS) */
	/* Written by the sampling thread only. */
	struct mem_sample *s;
	size_t n, cap;
	uint64_t max_bytes, max_rss;
	uint64_t over_bound; /* samples past limit + slack */
};

/* The overshoot the contract allows: 1% of the limit or 1 MiB, the larger (API.md). */
uint64_t mem_slack(uint64_t limit);
/* Take one sample now; returns it. */
const struct mem_sample *watch_sample(struct mem_watch *w);
/* Sleep to the next multiple of SAMPLE_NS after *next (never catching up in a burst). */
void watch_sleep(uint64_t *next);
void watch_free(struct mem_watch *w);
/* Every sample as CSV lines "seconds,bytes_used,rss,nr_negative" from t0; -errno. */
int watch_write_csv(const struct mem_watch *w, uint64_t t0, const char *path);

struct monitor {
	struct mem_watch w; /* the monitor thread's until joined */
	struct stop_flag stop;
	pthread_t tid;
};
void monitor_start(struct monitor *m, const struct impl *impl, void *c, uint64_t limit);
void monitor_stop(struct monitor *m);

/*
 * The object "memory": bytes_used against the limit and the contract's
 * bound ("memory bound": ok up to limit + slack, "past slack" up to
 * BOUND_EXTRA more, FAILED beyond), RSS at 10%, 50% and the end of [t0, t1]
 * and its maximum.  Returns true if bytes_used ever passed limit + slack +
 * BOUND_EXTRA (fails a bounded run).
 */
bool rep_memory(struct report *r, const struct mem_watch *w, uint64_t t0, uint64_t t1);

/* "<prefix><a in hex>-<b in hex>" into buf (NAME_BUF bytes); its length.  No snprintf. */
size_t name_fmt(char *buf, const char *prefix, uint64_t a, uint64_t b);

#endif /* UDC_STRESS_MEASURE_H */
