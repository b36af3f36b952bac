/* SPDX-License-Identifier: MIT */
/*
 * tests/races/reap_race.c - directory objects pinned and released while
 * the reaper frees idle ones under pressure.
 *
 * Owns: its cache and threads.  A plain program (Criterion cannot start
 * under ThreadSanitizer): ctest runs it in every preset, and under TSan or
 * ASan a use of a freed object is reported.  The bug it was written for:
 * the last holder's dir_put() marked the object idle (d->state) after its
 * reference was gone, outside any read-side section, while the reaper,
 * finding the object on its idle list from an earlier idling, could free
 * it in between (CI's tsan-stress-churn saw it once, in 4 runs).
 *
 * Workers fill, complete and remove an absent name in a few directories
 * with no entries (each call pins and releases the object; the completed
 * ones are kept idle for their answer, and a call's reclaim batch puts
 * them on the reaper's idle list), while one thread runs udc_shrink(),
 * whose reaper, under pressure, frees idle objects.  Every call must
 * return what the header documents (a completion whose object was freed
 * meanwhile: -ESTALE).  Left to timing, the window is two atomics wide
 * and this program did not hit it on a 2-core machine;
 * concurrency_races/last_release_racing_the_reaper holds it open with a
 * window hook and fails deterministically without the fix.  This one
 * keeps the path under TSan and ASan with many threads.
 *
 * Locking: none of its own.  Ordering: stop is relaxed (a bound on the
 * run, nothing is published through it); the counters are relaxed sums.
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include "include/udcache.h"
#include "tests/races/race.h"

#include <errno.h>
#include <inttypes.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

static udc_cache *cache;
static atomic_bool stop;
static atomic_int failures;
static atomic_ulong calls, stale, shrinks;
static unsigned nr_dirs = 8;

static void fail(const char *what, int r)
{
	fprintf(stderr, "reap_race: %s returned %d\n", what, r);
	atomic_fetch_add(&failures, 1);
	atomic_store_explicit(&stop, true, memory_order_relaxed);
}

static void *worker(void *arg)
{
	uint64_t seed = (uint64_t)(uintptr_t)arg;

	while (!atomic_load_explicit(&stop, memory_order_relaxed)) {
		udc_ino dir = 2 + race_splitmix(&seed) % nr_dirs;
		struct udc_fill f;
		int r = udc_dir_fill_begin(cache, dir, &f);
		if (r) {
			fail("udc_dir_fill_begin", r);
			break;
		}
		r = udc_dir_complete(cache, dir, &f);
		atomic_fetch_add_explicit(&calls, 1, memory_order_relaxed);
		if (r == -ESTALE)
			atomic_fetch_add_explicit(&stale, 1, memory_order_relaxed);
		if (r && r != -ESTALE) {
			fail("udc_dir_complete", r);
			break;
		}
		/* A name the directory does not have: the call pins and
		 * releases the object, and its reclaim batch queues the idle
		 * ones (kept, complete) on the reaper's idle list. */
		r = udc_remove(cache, dir, "absent", 6);
		if (r && r != -ENOENT) {
			fail("udc_remove", r);
			break;
		}
	}
	udc_thread_offline(cache);
	return NULL;
}

static void *reaper(void *arg)
{
	(void)arg;
	while (!atomic_load_explicit(&stop, memory_order_relaxed)) {
		udc_shrink(cache, SIZE_MAX);
		atomic_fetch_add_explicit(&shrinks, 1, memory_order_relaxed);
		/* room for the calls' own reaping (it only tries the lock) */
		nanosleep(&(struct timespec){ .tv_nsec = 500 * 1000 }, NULL);
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
		{ "--seed", NULL, &seed }, { "--dirs", &nr_dirs, NULL }, { NULL, NULL, NULL },
	};
	if (race_args(argc, argv, opts))
		return 2;
	if (!threads || threads > 256 || !nr_dirs) {
		fprintf(stderr, "reap_race: --threads 1..256, --dirs >= 1\n");
		return 2;
	}
	printf("reap_race: seed %" PRIu64 ", %u threads, %u dirs, %u s\n", seed, threads, nr_dirs,
	       seconds);

	struct udc_config cfg = UDC_CONFIG_INIT;
	cfg.root = 1;
	cfg.flags = UDC_CFG_NO_RECLAIM_THREAD;
	cache = udc_create(&cfg);
	if (!cache) {
		perror("reap_race: udc_create");
		return 1;
	}
	pthread_t tid[257];
	for (unsigned i = 0; i < threads; i++)
		pthread_create(&tid[i], NULL, worker, (void *)(uintptr_t)(seed + i));
	pthread_create(&tid[threads], NULL, reaper, NULL);
	race_sleep(seconds);
	atomic_store_explicit(&stop, true, memory_order_relaxed);
	for (unsigned i = 0; i <= threads; i++)
		pthread_join(tid[i], NULL);
	udc_destroy(cache);
	if (atomic_load(&failures)) {
		printf("reap_race: FAILED (seed %" PRIu64 ")\n", seed);
		return 1;
	}
	printf("reap_race: ok (%lu fills, %lu found their object freed, %lu shrinks)\n",
	       atomic_load(&calls), atomic_load(&stale), atomic_load(&shrinks));
	return 0;
}
