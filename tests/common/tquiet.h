/* SPDX-License-Identifier: MIT */
/*
 * tests/common/tquiet.h - engine_check while a reclaim thread runs.
 *
 * engine_check is exact only when nothing changes the tables.  With the
 * clients stopped, the reclaim thread (or its worker) may still be in a
 * batch, which changes them only under the policy's lock, or in a resize
 * of the name table, which runs under resize_lock alone (a resize's moved
 * nodes would be counted twice, and its old array freed under the walk).
 * tc_engine_check_quiet() holds both: resize_lock first (nobody holding
 * shrink_lock waits for it: shrink/reclaim.c, Locking).  For the tests
 * that include the engine's and the policy's internals.
 */
#ifndef UDC_TESTS_TQUIET_H
#define UDC_TESTS_TQUIET_H

#include "engine/internal.h"
#include "shrink/internal.h"

static inline int tc_engine_check_quiet(udc_cache *c)
{
	udc_mutex_lock(&c->shrink->resize_lock);
	udc_mutex_lock(&c->shrink->lock);
	int bad = engine_check(c);
	udc_mutex_unlock(&c->shrink->lock);
	udc_mutex_unlock(&c->shrink->resize_lock);
	return bad;
}

#endif
