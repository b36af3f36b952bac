/* SPDX-License-Identifier: MIT */
/*
 * stress/rcu_stall.c - --rcu-stall MS: hold liburcu's call_rcu thread for
 * MS milliseconds out of every 2 MS, as on a machine where that thread is
 * starved (a loaded host, valgrind), so that the frees a cache hands to
 * call_rcu wait.  A fault injector for the class of bug where a policy
 * takes frees in flight for room it can use: compaction counted them as
 * free room and moved the same pages' survivors again and again
 * (shrink/compact.c, fragmented()).
 *
 * Owns: one thread (the staller) and the callback it queues: each round
 * it queues a callback that sleeps MS on the call_rcu thread (default
 * urcu-memb worker, the library's), waits for it to start and end, then
 * sleeps MS itself.
 *
 * Locking: stall.lock protects the flags; stall.cond wakes the stalled
 * callback early at rcu_stall_stop and tells the staller a round ended.
 *
 * Ordering: everything shared is under stall.lock.
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif

#define _LGPL_SOURCE
#define URCU_API_MAP
#include <urcu/urcu-memb.h>

#include <errno.h>
#include <pthread.h>
#include <stdbool.h>
#include <time.h>

#include "stress/measure.h"
#include "stress/stress.h"

static struct {
	pthread_mutex_t lock;
	pthread_cond_t cond;
	pthread_t tid;
	struct rcu_head rcu;
	unsigned ms;                  /* 0: not started */
	bool stopping, in_callback;
	uint64_t rounds;
} stall = { .lock = PTHREAD_MUTEX_INITIALIZER };

/* Wait on stall.cond until @ms from now or until stopping; stall.lock held. */
static void stall_wait_locked(unsigned ms)
{
	struct timespec t;

	clock_gettime(CLOCK_MONOTONIC, &t);
	t.tv_sec += ms / 1000;
	t.tv_nsec += (long)(ms % 1000) * 1000000L;
	if (t.tv_nsec >= 1000000000L) {
		t.tv_sec++;
		t.tv_nsec -= 1000000000L;
	}
	while (!stall.stopping && pthread_cond_timedwait(&stall.cond, &stall.lock, &t) != ETIMEDOUT)
		;
}

static void stall_cb(struct rcu_head *h)
{
	(void)h;
	pthread_mutex_lock(&stall.lock);
	stall_wait_locked(stall.ms);
	stall.in_callback = false;
	stall.rounds++;
	pthread_cond_broadcast(&stall.cond);
	pthread_mutex_unlock(&stall.lock);
}

static void *stall_main(void *arg)
{
	(void)arg;
	rcu_register_thread();   /* call_rcu's caller must be registered */
	pthread_mutex_lock(&stall.lock);
	while (!stall.stopping) {
		stall.in_callback = true;
		pthread_mutex_unlock(&stall.lock);
		call_rcu(&stall.rcu, stall_cb);
		pthread_mutex_lock(&stall.lock);
		while (stall.in_callback)   /* the callback ends early once stopping */
			pthread_cond_wait(&stall.cond, &stall.lock);
		stall_wait_locked(stall.ms);
	}
	pthread_mutex_unlock(&stall.lock);
	rcu_unregister_thread();
	return NULL;
}

void rcu_stall_start(unsigned ms)
{
	pthread_condattr_t ca;

	if (!ms)
		return;
	pthread_condattr_init(&ca);
	pthread_condattr_setclock(&ca, CLOCK_MONOTONIC);
	pthread_cond_init(&stall.cond, &ca);
	pthread_condattr_destroy(&ca);
	stall.ms = ms;
	stall.stopping = false;
	thread_start(&stall.tid, stall_main, NULL);
}

uint64_t rcu_stall_stop(void)
{
	if (!stall.ms)
		return 0;
	pthread_mutex_lock(&stall.lock);
	stall.stopping = true;
	pthread_cond_broadcast(&stall.cond);
	pthread_mutex_unlock(&stall.lock);
	thread_join(stall.tid);
	stall.ms = 0;
	pthread_cond_destroy(&stall.cond);
	return stall.rounds;
}
