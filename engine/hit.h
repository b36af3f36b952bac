/* SPDX-License-Identifier: MIT */
/*
 * engine/hit.h - the hit path, inline for the calls that answer from the
 * cache most: udc_lookup (engine/lookup.c) and udc_resolve
 * (engine/resolve.c), each with its _value form.  Through a call of
 * lookup_name() from resolve_name(), a resolve's hit paid two frames'
 * saves and restores and the stats hint's test twice: 85 instructions
 * over a lookup's (BENCHMARKS.md, issue 16, stop 29).
 *
 * Locking and Ordering: engine/lookup.c's (these are its functions).
 */
#ifndef UDC_ENGINE_HIT_H
#define UDC_ENGINE_HIT_H

#include "engine/internal.h"

/* A hit on e, whose hits byte was @h: the counter raised (ENT_EXPIRES kept). */
static inline void entry_hit(struct udc_entry *e, uint8_t h)
{
	if ((h & HITS_MASK) < HITS_MAX)   /* only ever raise a counter that was lower */
		atomic_store_explicit(&e->hits, (uint8_t)(h + 1), memory_order_relaxed);
}

/* lookup_name() with the caller's stats slot, inline (a call's saves and
 * restores are a tenth of a hit): udc_lookup, udc_resolve and their
 * _value forms. */
static inline __attribute__((always_inline)) int
lookup_name_inline(struct udc_cache *c, struct thread_stats *ts, udc_ino dir, const char *name,
		   size_t len, uint64_t hash, struct udc_attr *out, struct value_out *vo,
		   struct udc_dir **miss_pin)
{
	_Static_assert(UDC_MISS == 0 && UDC_POSITIVE == 1 && UDC_NEGATIVE == 2,
		       "stat_lookup_result's index");
	const struct name_key k = name_key_of(c, dir, name, len);
	int r = UDC_MISS;

	rcu_read_lock();
	struct udc_entry *e = entry_find_rcu(c, hash, &k);
	/* relaxed: see Ordering (the counter); ENT_EXPIRES is fixed */
	uint8_t h = e ? atomic_load_explicit(&e->hits, memory_order_relaxed) : 0;
	bool current = e && entry_current(e);
	if (current && __builtin_expect(!(h & ENT_EXPIRES) || !entry_expired(c, e), 1) &&
	    !entry_forgotten(c, e)) {
		entry_hit(e, h);
		if (e->kind == ENT_POSITIVE) {
			/* the value first: the attr's byte copy would make the
			 * compiler read vo's fields again (5 instructions) */
			pos_value_copy(vo, (const struct udc_pos *)e);
			if (out)
				pos_attr_copy(out, (const struct udc_pos *)e);
			r = UDC_POSITIVE;
		} else {
			r = UDC_NEGATIVE;
		}
		rcu_read_unlock();
		/* A hit returns here: its match proved the name's bytes (and
		 * the miss path's flag and test cost a hit 3 instructions). */
		stat_lookup_result(ts, r);
		return r;
	}
	/* The miss path: a complete directory answers negative, but not for
	 * a name whose answer expired or was forgotten (it may exist).  Its
	 * object is looked up only if a caller pins it or some directory may
	 * be complete (relaxed: a miss is always a correct answer;
	 * dir_fill_complete). */
	bool want_dir = miss_pin || atomic_load_explicit(&c->fills_completed, memory_order_relaxed);
	struct udc_dir *d = e ? e->dir : want_dir ? dir_find_rcu(c, dir) : NULL;
	if (d && !current && dir_complete_rcu(d) && !dir_complete_expired(c, d))
		r = UDC_NEGATIVE;
	else if (miss_pin && d && dir_pin_rcu(c, d))
		*miss_pin = d;   /* the miss's caller asks the backend: no second lookup */
	rcu_read_unlock();

	/* No cached name matched (expired and forgotten ones did: still a
	 * cached name's bytes), so nothing proved the bytes valid. */
	if (!current) {
		int err = name_check_bytes(name, len);
		if (err) {
			if (miss_pin && *miss_pin) {
				dir_put(c, *miss_pin);
				*miss_pin = NULL;
			}
			return err;
		}
	}
	stat_lookup_result(ts, r);
	return r;
}

#endif
