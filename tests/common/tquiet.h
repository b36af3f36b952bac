/* SPDX-License-Identifier: MIT */
/*
 * tests/common/tquiet.h - engine_check while a reclaim thread runs.
 *
 * engine_check is exact only when nothing changes the tables.  With the
 * clients stopped, the reclaim thread (or its worker) may still be in a
 * batch, which changes them only under the policy's lock; a resize of the
 * name table, which runs under resize_lock alone, engine_check holds off
 * itself (name_table_hold).  For the tests that include the engine's and
 * the policy's internals.
 */
#ifndef UDC_TESTS_TQUIET_H
#define UDC_TESTS_TQUIET_H

#include "engine/internal.h"
#include "shrink/internal.h"

static inline int tc_engine_check_quiet(udc_cache *c)
{
	udc_mutex_lock(&c->shrink->lock);
	int bad = engine_check(c);
	udc_mutex_unlock(&c->shrink->lock);
	return bad;
}

#endif
