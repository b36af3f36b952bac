/* SPDX-License-Identifier: MIT */
/*
 * tests/races/lock_race.c - common/lock.h's mutex and condition variable
 * under many threads: mutual exclusion, the writes of one holder seen by
 * the next, no lost wake-up.
 *
 * Owns: its locks and threads.  A plain program (Criterion cannot start
 * under ThreadSanitizer): ctest runs it in every preset; under TSan a
 * section's plain counter is a data race unless unlock and lock order it.
 *
 * First, a trylock must take a free lock and fail on a held one.  Then
 * each round, every thread takes one of a few mutexes by lock or by
 * trylock (randomised, seeded, the seed printed; some trylocks must take
 * theirs, and no lock may change errno, even one that slept), checks
 * that no other
 * thread is inside (a holder flag), adds to the mutex's plain counters,
 * sometimes spins inside the section so that others contend, sleep and
 * are woken.  At the end each counter must equal the adds made to it.
 * Then a relay: threads wait on one condition variable for their turn
 * (turn == their id, the mutex held) and pass it on with a broadcast; a
 * lost wake-up leaves the relay stuck and the run ends in ctest's
 * timeout, a wrong turn is counted.
 *
 * Locking: the mutexes under test.  Ordering: the totals are relaxed
 * (summed after the joins, which order them).
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include "common/lock.h"
#include "tests/races/race.h"

#include <errno.h>
#include <inttypes.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#define NR_LOCKS 3
#define MAX_THREADS 256

struct guarded {
	struct udc_mutex lock;
	bool inside;           /* a holder is in the section */
	uint64_t count;        /* plain: only holders touch it */
	uint64_t sum;
} __attribute__((aligned(64)));

static struct guarded g[NR_LOCKS];
static struct udc_mutex relay_lock;
static struct udc_cond relay_cond;
static unsigned relay_turn;   /* under relay_lock */
static unsigned nr_threads = 8, rounds = 20000, relay_laps = 200;
static uint64_t seed;
static _Atomic uint64_t adds[NR_LOCKS], overlaps, wrong_turns, busy, taken, errno_changed;

static void *worker(void *arg)
{
	unsigned id = (unsigned)(uintptr_t)arg;
	uint64_t rng = seed ^ ((uint64_t)id << 32);

	for (unsigned r = 0; r < rounds; r++) {
		uint64_t x = race_splitmix(&rng);
		struct guarded *s = &g[x % NR_LOCKS];

		if (x & 0x100) {
			if (udc_mutex_trylock(&s->lock)) {
				atomic_fetch_add_explicit(&busy, 1, memory_order_relaxed);
				continue;
			}
			atomic_fetch_add_explicit(&taken, 1, memory_order_relaxed);
		} else {
			errno = 0x5eed;   /* a lock that slept must leave errno as it was */
			udc_mutex_lock(&s->lock);
			if (errno != 0x5eed)
				atomic_fetch_add_explicit(&errno_changed, 1, memory_order_relaxed);
		}
		if (!lock_held(&s->lock) || s->inside)
			atomic_fetch_add_explicit(&overlaps, 1, memory_order_relaxed);
		s->inside = true;
		s->count++;
		s->sum += id;
		if ((x & 0xf000) == 0)   /* one section in 16 lasts: the others sleep */
			for (volatile int k = 0; k < 2000; k++)
				;
		s->inside = false;
		atomic_fetch_add_explicit(&adds[s - g], 1, memory_order_relaxed);
		udc_mutex_unlock(&s->lock);
	}

	for (unsigned lap = 0; lap < relay_laps; lap++) {
		udc_mutex_lock(&relay_lock);
		while (relay_turn % nr_threads != id)
			udc_cond_wait(&relay_cond, &relay_lock);
		if (relay_turn != lap * nr_threads + id)
			atomic_fetch_add_explicit(&wrong_turns, 1, memory_order_relaxed);
		relay_turn++;
		udc_cond_broadcast(&relay_cond);
		udc_mutex_unlock(&relay_lock);
	}
	return NULL;
}

int main(int argc, char **argv)
{
	struct timespec now;

	clock_gettime(CLOCK_REALTIME, &now);
	seed = (uint64_t)now.tv_nsec ^ (uint64_t)now.tv_sec << 20;
	const struct race_opt opts[] = {
		{ "--threads", &nr_threads, NULL }, { "--rounds", &rounds, NULL },
		{ "--seed", NULL, &seed }, { NULL, NULL, NULL },
	};
	if (race_args(argc, argv, opts))
		return 2;
	if (nr_threads < 1 || nr_threads > MAX_THREADS) {
		fprintf(stderr, "lock_race: --threads must be 1..%d\n", MAX_THREADS);
		return 2;
	}
	printf("lock_race: seed %" PRIu64 ", %u threads, %u rounds\n", seed, nr_threads, rounds);
	for (unsigned i = 0; i < NR_LOCKS; i++)
		udc_mutex_init(&g[i].lock);
	udc_mutex_init(&relay_lock);
	/* Uncontended: a trylock takes a free lock and fails on a held one. */
	if (udc_mutex_trylock(&relay_lock) != 0 || udc_mutex_trylock(&relay_lock) != EBUSY) {
		fprintf(stderr, "lock_race: trylock of a free lock failed, or of a held one took it\n");
		return 1;
	}
	udc_mutex_unlock(&relay_lock);
	udc_cond_init(&relay_cond);

	pthread_t t[MAX_THREADS];
	for (unsigned i = 0; i < nr_threads; i++)
		if (pthread_create(&t[i], NULL, worker, (void *)(uintptr_t)i)) {
			perror("pthread_create");
			return 1;
		}
	for (unsigned i = 0; i < nr_threads; i++)
		pthread_join(t[i], NULL);

	int bad = 0;
	for (unsigned i = 0; i < NR_LOCKS; i++) {
		if (g[i].count != adds[i] || g[i].inside) {
			fprintf(stderr, "lock_race: lock %u: %" PRIu64 " counted, %" PRIu64 " adds\n", i,
				g[i].count, (uint64_t)adds[i]);
			bad = 1;
		}
		udc_mutex_destroy(&g[i].lock);
	}
	if (!taken) {
		fprintf(stderr, "lock_race: no trylock took its lock in %u rounds\n", rounds);
		bad = 1;
	}
	if (errno_changed) {
		fprintf(stderr, "lock_race: %" PRIu64 " locks changed errno\n", (uint64_t)errno_changed);
		bad = 1;
	}
	if (overlaps || wrong_turns || relay_turn != relay_laps * nr_threads) {
		fprintf(stderr, "lock_race: %" PRIu64 " sections overlapped, %" PRIu64
				" wrong turns, relay at %u of %u\n",
			(uint64_t)overlaps, (uint64_t)wrong_turns, relay_turn, relay_laps * nr_threads);
		bad = 1;
	}
	printf("lock_race: %" PRIu64 " + %" PRIu64 " + %" PRIu64 " sections, trylocks %" PRIu64
	       " taken and %" PRIu64 " busy, %u relay turns: %s\n",
	       (uint64_t)adds[0], (uint64_t)adds[1], (uint64_t)adds[2], (uint64_t)taken, (uint64_t)busy,
	       relay_turn,
	       bad ? "FAILED" : "ok");
	return bad;
}
