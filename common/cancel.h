/* SPDX-License-Identifier: MIT */
/*
 * common/cancel.h - holding thread cancellation off in our own waits.
 */
#ifndef UDC_COMMON_CANCEL_H
#define UDC_COMMON_CANCEL_H

#include <pthread.h>

/*
 * Our waits are not cancellation points: a thread cancelled inside one
 * (pthread_cond_wait, or liburcu's poll() in a grace-period wait) would
 * leave a lock, a waiter count or a callback on its stack behind.  Public
 * calls that may block hold cancellation off around the blocking part
 * (only the backend is called with the caller's own state).
 */
static inline int cancel_hold(void)
{
	int old;

	pthread_setcancelstate(PTHREAD_CANCEL_DISABLE, &old);
	return old;
}

static inline void cancel_release(int old)
{
	pthread_setcancelstate(old, NULL);
}

#endif
