/* SPDX-License-Identifier: MIT */
/*
 * tests/common/trcu_stall.c - see trcu_stall.h.
 *
 * Locking: stall.lock protects running and released; the callback waits
 * on stall.cond under it.  Ordering: the lock's.
 */
#include "common/trcu_stall.h"

#include <pthread.h>
#include <stdbool.h>
#include <urcu/urcu-memb.h>

static struct {
	struct rcu_head rcu;
	pthread_mutex_t lock;
	pthread_cond_t cond;
	bool running, released;   /* protected by lock */
} stall = { .lock = PTHREAD_MUTEX_INITIALIZER, .cond = PTHREAD_COND_INITIALIZER };

static void stall_cb(struct rcu_head *h)
{
	(void)h;
	pthread_mutex_lock(&stall.lock);
	stall.running = true;
	pthread_cond_broadcast(&stall.cond);
	while (!stall.released)
		pthread_cond_wait(&stall.cond, &stall.lock);
	pthread_mutex_unlock(&stall.lock);
}

void tc_rcu_stall_begin(void)
{
	pthread_mutex_lock(&stall.lock);
	stall.running = stall.released = false;
	pthread_mutex_unlock(&stall.lock);
	urcu_memb_call_rcu(&stall.rcu, stall_cb);
	pthread_mutex_lock(&stall.lock);
	while (!stall.running)
		pthread_cond_wait(&stall.cond, &stall.lock);
	pthread_mutex_unlock(&stall.lock);
}

void tc_rcu_stall_end(void)
{
	pthread_mutex_lock(&stall.lock);
	stall.released = true;
	pthread_cond_broadcast(&stall.cond);
	pthread_mutex_unlock(&stall.lock);
}
