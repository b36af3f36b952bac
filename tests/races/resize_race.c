/* SPDX-License-Identifier: MIT */
/*
 * tests/races/resize_race.c - the name table resized, grown and shrunk
 * without pause, under lookups, replaces, inserts and removes.
 *
 * Owns: its cache and threads.  A plain program (Criterion cannot start
 * under ThreadSanitizer): ctest runs it in every preset.  What it checks
 * is engine/name_table.c's promise: a name in the table is found by every
 * lookup while a resize moves its chain (tail first, into the future
 * array, which a lookup that missed searches next), a replace or remove
 * racing the move neither loses nor resurrects a name, and a removed name
 * is gone.  Stable names (positive and negative) must always answer, with
 * one of the two inos a replacer flips them between; each churner's own
 * names must answer as it last left them.  The resizer takes shrink's
 * resize_lock, as the reclaim passes do, and sets the accounted size
 * after each resize, as they do (so those passes may resize too).
 *
 * A broken move (the old link cleared before the node is pushed on the
 * future chain) fails it within a second: see BENCHMARKS.md, issue 16,
 * stop 34.
 *
 * Locking: none of its own.  Ordering: stop is relaxed (a bound on the
 * run, nothing is published through it); the counters are relaxed sums.
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include "engine/internal.h"
#include "shrink/internal.h"   /* resize_lock */
#include "tests/common/tquiet.h"
#include "tests/races/race.h"

#include <errno.h>
#include <inttypes.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

#define STABLE 4096          /* names always in the table */
#define STABLE_DIR 2
#define INO_BASE 1000000
#define CHURN_NAMES 512      /* a churner's own names */

static udc_cache *cache;
static atomic_bool stop;
static atomic_int failures;
static atomic_ulong lookups, replaces, churns, resizes;

static __attribute__((format(printf, 1, 2))) void fail(const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	fprintf(stderr, "resize_race: ");
	vfprintf(stderr, fmt, ap);
	fputc('\n', stderr);
	va_end(ap);
	atomic_fetch_add(&failures, 1);
	atomic_store_explicit(&stop, true, memory_order_relaxed);
}

static bool stopped(void)
{
	return atomic_load_explicit(&stop, memory_order_relaxed);
}

/* Stable name i: negative if i % 4 == 0, else positive. */
static size_t stable_name(char *buf, unsigned i)
{
	return (size_t)sprintf(buf, "%s-%u", i % 4 ? "pos" : "neg", i);
}

static void *looker(void *arg)
{
	uint64_t seed = (uint64_t)(uintptr_t)arg;
	char nm[32];

	while (!stopped()) {
		unsigned i = (unsigned)(race_splitmix(&seed) % STABLE);
		size_t len = stable_name(nm, i);
		struct udc_attr a;
		int r = udc_lookup(cache, STABLE_DIR, nm, len, &a);
		atomic_fetch_add_explicit(&lookups, 1, memory_order_relaxed);
		if (i % 4 == 0 ? r != UDC_NEGATIVE : r != UDC_POSITIVE)
			fail("stable name %s answered %d (want %d)", nm, r,
			     i % 4 ? UDC_POSITIVE : UDC_NEGATIVE);
		else if (r == UDC_POSITIVE && a.ino != INO_BASE + 2 * i && a.ino != INO_BASE + 2 * i + 1)
			fail("stable name %s answered ino %" PRIu64, nm, (uint64_t)a.ino);
	}
	udc_thread_offline(cache);
	return NULL;
}

/* Replace stable names by new entries (the other ino, or a new negative). */
static void *replacer(void *arg)
{
	uint64_t seed = (uint64_t)(uintptr_t)arg;
	char nm[32];

	while (!stopped()) {
		unsigned i = (unsigned)(race_splitmix(&seed) % STABLE);
		size_t len = stable_name(nm, i);
		int r;
		if (i % 4 == 0) {
			r = udc_add_negative(cache, STABLE_DIR, nm, len, 0);
		} else {
			struct udc_attr a = { .ino = INO_BASE + 2 * i + (race_splitmix(&seed) & 1),
					      .type = UDC_TYPE_REG };
			r = udc_add(cache, STABLE_DIR, nm, len, &a);
		}
		if (r)
			fail("replacing %s returned %d", nm, r);
		atomic_fetch_add_explicit(&replaces, 1, memory_order_relaxed);
	}
	udc_thread_offline(cache);
	return NULL;
}

/* Add, check, remove, check names of its own directory. */
static void *churner(void *arg)
{
	uint64_t seed = (uint64_t)(uintptr_t)arg;
	udc_ino dir = 100 + (udc_ino)(seed & 0xffff);
	char nm[32];

	while (!stopped()) {
		unsigned i = (unsigned)(race_splitmix(&seed) % CHURN_NAMES);
		size_t len = (size_t)sprintf(nm, "churn-%u", i);
		struct udc_attr a = { .ino = INO_BASE + i, .type = UDC_TYPE_REG }, got;
		int r = udc_add(cache, dir, nm, len, &a);
		if (r)
			fail("adding %s returned %d", nm, r);
		r = udc_lookup(cache, dir, nm, len, &got);
		if (r != UDC_POSITIVE || got.ino != a.ino)
			fail("%s just added answered %d, ino %" PRIu64, nm, r, (uint64_t)got.ino);
		r = udc_remove(cache, dir, nm, len);
		if (r)
			fail("removing %s returned %d", nm, r);
		r = udc_lookup(cache, dir, nm, len, &got);
		if (r != UDC_MISS)
			fail("%s just removed answered %d", nm, r);
		atomic_fetch_add_explicit(&churns, 1, memory_order_relaxed);
	}
	udc_thread_offline(cache);
	return NULL;
}

/* Resize the name table to random sizes, from its stripes to 2^17. */
static void *resizer(void *arg)
{
	uint64_t seed = (uint64_t)(uintptr_t)arg;
	struct udc_cache *c = cache;
	unsigned min_order = (unsigned)__builtin_ctz(c->stripe_mask + 1);

	while (!stopped()) {
		size_t buckets = (size_t)1 << (min_order + race_splitmix(&seed) % (18 - min_order));
		udc_mutex_lock(&c->shrink->resize_lock);
		if (name_table_resize(c, buckets))
			/* relaxed: accounting, as cache.c's table_resize */
			atomic_store_explicit(&c->names_buckets, buckets, memory_order_relaxed);
		udc_mutex_unlock(&c->shrink->resize_lock);
		atomic_fetch_add_explicit(&resizes, 1, memory_order_relaxed);
	}
	udc_thread_offline(cache);
	return NULL;
}

int main(int argc, char **argv)
{
	unsigned threads = 4, seconds = 2;
	uint64_t seed = (uint64_t)time(NULL);

	const struct race_opt opts[] = {
		{ "--threads", &threads, NULL }, { "--seconds", &seconds, NULL },
		{ "--seed", NULL, &seed }, { NULL, NULL, NULL },
	};
	if (race_args(argc, argv, opts))
		return 2;
	if (threads < 3 || threads > 256) {
		fprintf(stderr, "resize_race: --threads 3..256\n");
		return 2;
	}
	printf("resize_race: seed %" PRIu64 ", %u threads and a resizer, %u s\n", seed, threads,
	       seconds);

	struct udc_config cfg = UDC_CONFIG_INIT;
	cfg.root = 1;
	cfg.memory_limit = 256u << 20;   /* nothing is evicted */
	cfg.flags = UDC_CFG_NO_RECLAIM_THREAD;
	cache = udc_create(&cfg);
	if (!cache) {
		perror("resize_race: udc_create");
		return 1;
	}
	char nm[32];
	for (unsigned i = 0; i < STABLE; i++) {
		size_t len = stable_name(nm, i);
		struct udc_attr a = { .ino = INO_BASE + 2 * i, .type = UDC_TYPE_REG };
		int r = i % 4 ? udc_add(cache, STABLE_DIR, nm, len, &a)
			      : udc_add_negative(cache, STABLE_DIR, nm, len, 0);
		if (r) {
			fprintf(stderr, "resize_race: adding %s: %d\n", nm, r);
			return 1;
		}
	}
	/* threads: 1 replacer, 1 churner each third, the rest look up */
	pthread_t tid[257];
	for (unsigned i = 0; i < threads; i++) {
		void *(*fn)(void *) = i == 0 ? replacer : i % 3 == 1 ? churner : looker;
		pthread_create(&tid[i], NULL, fn, (void *)(uintptr_t)(seed + i));
	}
	pthread_create(&tid[threads], NULL, resizer, (void *)(uintptr_t)(seed ^ 0x5eed));
	race_sleep(seconds);
	atomic_store_explicit(&stop, true, memory_order_relaxed);
	for (unsigned i = 0; i <= threads; i++)
		pthread_join(tid[i], NULL);
	/* the shrink worker may be in a batch or a resize of its own */
	int bad = tc_engine_check_quiet(cache);
	udc_destroy(cache);
	if (atomic_load(&failures) || bad) {
		printf("resize_race: FAILED (seed %" PRIu64 ")\n", seed);
		return 1;
	}
	printf("resize_race: ok (%lu lookups, %lu replaces, %lu churn cycles, %lu resizes)\n",
	       atomic_load(&lookups), atomic_load(&replaces), atomic_load(&churns),
	       atomic_load(&resizes));
	return 0;
}
