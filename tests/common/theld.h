/* SPDX-License-Identifier: MIT */
/*
 * tests/common/theld.h - is a name cached, without counting a hit?
 *
 * udc_lookup raises the entry's hit counter, which is what the reclaim
 * policy reads: a test of the policy that looked would change what it
 * tests.  tc_held() finds the entry in the name table as a lookup does
 * and touches nothing.  For the tests that include the engine's internals.
 */
#ifndef UDC_TESTS_THELD_H
#define UDC_TESTS_THELD_H

#include "engine/internal.h"

/* Is (dir, name) held?  The thread is registered with RCU by its earlier
 * calls on the cache. */
static inline bool tc_held(udc_cache *c, udc_ino dir, const char *nm, size_t len)
{
	const struct name_key k = name_key_of(c, dir, nm, len);

	rcu_read_lock();
	bool found = entry_find_rcu(c, hash_name(&c->key, dir, nm, len), &k) != NULL;
	rcu_read_unlock();
	return found;
}

#endif
