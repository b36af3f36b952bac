/* SPDX-License-Identifier: MIT */
/*
 * engine/lookup.c - the hit path: udc_lookup() and the lookups inside
 * resolve and walk (the path itself is inline in engine/hit.h, which
 * udc_resolve shares).
 *
 * Owns: nothing; it reads the name table, entries and directory objects.
 *
 * The hit path is: check the name's length (call_check_len, inline from
 * common/path.h: one test an argument), find the thread's stats slot (its
 * hint names this cache: one compare, thread_enter_stats), hash the name
 * (engine/hash.h), rcu_read_lock,
 * one name table lookup (inline, engine/name_table.h: the full 64-bit hash
 * compared before name_match), a generation check against the entry's directory, copy the
 * answer out, rcu_read_unlock.  The name's bytes are scanned for '/' and
 * NUL only when no cached name matched: a match proves them valid, as
 * every cached name was checked when it was added.  It takes no lock,
 * does no atomic read-modify-write, and stores only to the calling thread's own stats slot and, at most
 * HITS_MAX times in an entry's life, a raised hit counter.
 *
 * Locking: none.  Callers of the *_rcu functions hold rcu_read_lock.
 *
 * Ordering:
 *   The name table's chain loads are acquires (engine/name_table.h): the
 *   entry's immutable fields, written before its link was published, are
 *   seen.
 *   The acquire load of dir->gen pairs with the release increment in
 *   dir_bump_gen(): a lookup that sees a new generation also sees the
 *   complete flag and parent that the bumping thread cleared before it.
 *   The hit counter is a relaxed load and a relaxed store: a lost raise
 *   costs only reclaim accuracy.  The same byte's ENT_EXPIRES bit and the
 *   deadline are written before the entry is published and never after,
 *   so the relaxed load sees the published ones; the clock is the
 *   kernel's coarse monotonic clock (vDSO), read only for such entries.
 *   cache->fills_completed is a relaxed load (partner: the relaxed store in
 *   dir_fill_complete, before the flag's CAS): reading false only skips
 *   the complete flag's check, and a miss is always a correct answer.
 */
#include "engine/hit.h"

#include <errno.h>

/* ".." of dir: the root's is the root; others' from the directory object. */
int lookup_dotdot(struct udc_cache *c, udc_ino dir, struct udc_attr *out)
{
	struct thread_stats *ts = thread_stats(c);
	udc_ino parent = dir == c->root ? c->root : UDC_INO_NONE;
	uint64_t cookie = 0;

	rcu_read_lock();
	if (parent == UDC_INO_NONE) {
		struct udc_dir *d = dir_find_rcu(c, dir);
		if (d)
			parent = dir_parent_rcu(c, d, &cookie);
	} else {
		struct udc_dir *rd = dir_find_rcu(c, parent);
		if (rd)
			cookie = dir_cookie_rcu(rd);
	}
	rcu_read_unlock();

	if (parent == UDC_INO_NONE) {
		stat_add(ts, misses, 1);
		return UDC_MISS;
	}
	stat_add(ts, hits_positive, 1);
	if (out)
		*out = (struct udc_attr){ .ino = parent, .type = UDC_TYPE_DIR, .cookie = cookie };
	return UDC_POSITIVE;
}

int lookup_name(struct udc_cache *c, udc_ino dir, const char *name, size_t len, uint64_t hash,
		struct udc_attr *out, struct value_out *vo, struct udc_dir **miss_pin)
{
	return lookup_name_inline(c, thread_stats(c), dir, name, len, hash, out, vo, miss_pin);
}

int udc_lookup(udc_cache *c, udc_ino dir, const char *name, size_t len, struct udc_attr *out)
{
	int r = call_check_len(c, dir, name, len);   /* lookup_name scans the bytes */

	if (r)
		return r;
	struct thread_stats *ts = thread_enter_stats(c);
	if (name_is_dotdot(name, len))
		return lookup_dotdot(c, dir, out);
	return lookup_name_inline(c, ts, dir, name, len, hash_name(&c->key, dir, name, len), out,
				  NULL, NULL);
}

int udc_lookup_value(udc_cache *c, udc_ino dir, const char *name, size_t len,
		     struct udc_attr *out, void *value, size_t *value_len)
{
	struct value_out vo;
	int r = value_call_check(&vo, value, value_len, c, dir, name, len);

	if (r)
		return r;
	struct thread_stats *ts = thread_enter_stats(c);
	if (name_is_dotdot(name, len))
		r = lookup_dotdot(c, dir, out);   /* no value */
	else
		r = lookup_name_inline(c, ts, dir, name, len, hash_name(&c->key, dir, name, len),
				       out, &vo, NULL);
	*value_len = vo.len;
	return r;
}
