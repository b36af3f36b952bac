/* SPDX-License-Identifier: MIT */
/*
 * tests/engine/test_differential.c - seeded random operation sequences
 * checked against a reference model of what the cache may answer.
 *
 * The name space is small so that operations collide: 8 directory slots in
 * the root ("d0".."d7", each a directory whose ino changes when it is
 * rmdir'ed and made again) x 64 names, some of them long (200+ bytes) or
 * with bytes >= 0x80.  Every operation is applied as a consistent embedder
 * would: to the model store (the backend) and told to the cache.
 *
 * The reference keeps, per name, what the cache holds:
 *   R_POS(attr)  strict: udc_lookup must give UDC_POSITIVE with attr
 *                (the limit is 1 GiB and there is no reclaim thread);
 *   R_MISS       nothing is cached (after udc_invalidate*, udc_rmdir, a
 *                rename of an uncached name, udc_remove without
 *                UDC_CFG_KEEP_UNLINKED);
 *   R_NEGMISS    a negative may be held (add_negative, a negative answer,
 *                remove with KEEP_UNLINKED): NEGATIVE or MISS;
 * and, per directory, whether it is complete: C_NO, C_YES (strict: a name
 * not held is NEGATIVE), C_MAYBE (after a mutation in a complete dir the
 * engine may keep or drop completeness).  On top of that the store decides:
 * a name the store has is never NEGATIVE, one it lacks is never POSITIVE.
 *
 * The seed is printed; UDC_TEST_SEED=<seed> replays a run.  On a mismatch
 * the op index, the op and the ops before it are printed.
 */
#include <criterion/criterion.h>
#include <errno.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "include/udcache.h"
#include "common/model.h"
#include "common/prng.h"
#include "common/tcache.h"
#include "engine/internal.h"

#define NSLOTS 8
#define NNAMES 64
#define NOPS 100000
#define NDEAD 64
#define HIST 12

enum rstate {
	R_MISS,
	R_POS,
	R_NEGMISS
};
enum cstate {
	C_NO,
	C_YES,
	C_MAYBE
};

struct rkey {
	enum rstate s;
	struct udc_attr a;
};

struct diff {
	struct tenv env;
	struct prng rng;
	uint64_t seed;
	bool keep; /* UDC_CFG_KEEP_UNLINKED */
	udc_ino slot_ino[NSLOTS];
	struct rkey root[NSLOTS];	 /* (root, "dS") */
	struct rkey key[NSLOTS][NNAMES]; /* (slot_ino[S], name N) */
	enum cstate complete[NSLOTS];
	udc_ino dead[NDEAD];
	int ndead;
	udc_ino next_ino;
	int op;
	char hist[HIST][160];
	/* counts, for the log */
	uint64_t n_pos_hits, n_neg_hits, n_miss;
};

static char names[NNAMES][UDC_NAME_MAX + 1];
static size_t name_len[NNAMES];
static char slot_name[NSLOTS][4];

static void make_names(void)
{
	for (int i = 0; i < NNAMES; i++) {
		if (i % 16 == 15) {
			/* long: 200..254 bytes */
			size_t l = 200 + (size_t)i % 55;

			memset(names[i], 'L', l);
			snprintf(names[i], 8, "L%02d", i);
			names[i][3] = '-';
			name_len[i] = l;
		} else if (i % 16 == 7) {
			snprintf(names[i], sizeof(names[i]), "\xc3\xa9t\xc3\xa9-%d\xff", i);
			name_len[i] = strlen(names[i]);
		} else {
			snprintf(names[i], sizeof(names[i]), "n%d", i);
			name_len[i] = strlen(names[i]);
		}
	}
	for (int s = 0; s < NSLOTS; s++)
		snprintf(slot_name[s], sizeof(slot_name[s]), "d%d", s);
}

static const char *nm_print(int n)
{
	return n % 16 == 15 ? "<long>" : names[n];
}

static void dfail(struct diff *d, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

static void dfail(struct diff *d, const char *fmt, ...)
{
	char msg[512];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	fprintf(stderr, "differential: MISMATCH at op #%d (seed %" PRIu64 "): %s\n", d->op, d->seed,
		msg);
	fprintf(stderr, "  the ops before it, oldest first:\n");
	for (int i = HIST - 1; i >= 0; i--) {
		int k = d->op - i;

		if (k < 0)
			continue;
		fprintf(stderr, "  #%d %s\n", k, d->hist[k % HIST]);
	}
	cr_assert_fail("seed %" PRIu64 " op #%d (%s): %s", d->seed, d->op, d->hist[d->op % HIST],
		       msg);
}

static void set_op(struct diff *d, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

static void set_op(struct diff *d, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(d->hist[d->op % HIST], sizeof(d->hist[0]), fmt, ap);
	va_end(ap);
}

static struct udc_attr new_attr(struct diff *d)
{
	static const uint32_t types[] = { UDC_TYPE_REG, UDC_TYPE_SYMLINK, UDC_TYPE_OTHER,
					  UDC_TYPE_UNKNOWN, UDC_TYPE_REG };

	return tc_attr(d->next_ino++, types[prng_below(&d->rng, 5)], prng_next(&d->rng));
}

/* Check one (slot, name) key, or a root key when n < 0. */
static void check_key(struct diff *d, int s, int n)
{
	udc_ino dir = n < 0 ? TC_ROOT : d->slot_ino[s];
	const char *nm = n < 0 ? slot_name[s] : names[n];
	size_t len = n < 0 ? strlen(nm) : name_len[n];
	struct rkey *k = n < 0 ? &d->root[s] : &d->key[s][n];
	enum cstate c = n < 0 ? C_NO : d->complete[s];
	struct udc_attr got, st_attr;
	bool sp = model_get(d->env.m, dir, nm, len, &st_attr) == 0;
	int r = udc_lookup(d->env.c, dir, nm, len, &got);
	const char *what = n < 0 ? "root name" : "name";

	if (r == UDC_POSITIVE)
		d->n_pos_hits++;
	else if (r == UDC_NEGATIVE)
		d->n_neg_hits++;
	else if (r == UDC_MISS)
		d->n_miss++;

	if (r != UDC_POSITIVE && r != UDC_NEGATIVE && r != UDC_MISS)
		dfail(d, "lookup(%llu, %s) = %s", (unsigned long long)dir, nm_print(n < 0 ? 0 : n),
		      tc_res_str(r));
	if (r == UDC_POSITIVE && !sp)
		dfail(d, "%s (slot %d, %s) is POSITIVE but the store does not have it", what, s,
		      n < 0 ? nm : nm_print(n));
	if (r == UDC_NEGATIVE && sp)
		dfail(d, "%s (slot %d, %s) is NEGATIVE but the store has it", what, s,
		      n < 0 ? nm : nm_print(n));
	switch (k->s) {
	case R_POS:
		if (r != UDC_POSITIVE)
			dfail(d, "%s (slot %d, %s): want POSITIVE (ino %llu), got %s", what, s,
			      n < 0 ? nm : nm_print(n), (unsigned long long)k->a.ino,
			      tc_res_str(r));
		if (!tc_attr_eq(&got, &k->a))
			dfail(d,
			      "%s (slot %d, %s): want ino %llu type %u cookie %llx, got ino %llu "
			      "type %u cookie %llx",
			      what, s, n < 0 ? nm : nm_print(n), (unsigned long long)k->a.ino,
			      k->a.type, (unsigned long long)k->a.cookie,
			      (unsigned long long)got.ino, got.type,
			      (unsigned long long)got.cookie);
		break;
	case R_MISS:
		if (sp || c == C_NO) {
			if (r != UDC_MISS)
				dfail(d,
				      "%s (slot %d, %s): want MISS, got %s (store %s, complete %d)",
				      what, s, n < 0 ? nm : nm_print(n), tc_res_str(r),
				      sp ? "has it" : "lacks it", c);
		} else if (c == C_YES && r != UDC_NEGATIVE) {
			dfail(d, "%s (slot %d, %s) in a complete dir: want NEGATIVE, got %s", what,
			      s, nm_print(n), tc_res_str(r));
		}
		break;
	case R_NEGMISS:
		if (sp)
			dfail(d, "reference broken: NEGMISS for a name the store has");
		if (c == C_YES && r != UDC_NEGATIVE)
			dfail(d, "%s (slot %d, %s) in a complete dir: want NEGATIVE, got %s", what,
			      s, nm_print(n), tc_res_str(r));
		if (r == UDC_POSITIVE)
			dfail(d, "%s (slot %d, %s): want NEGATIVE or MISS, got POSITIVE", what, s,
			      n < 0 ? nm : nm_print(n));
		break;
	}
}

static void do_resolve(struct diff *d, int s, int n)
{
	udc_ino dir = d->slot_ino[s];
	struct rkey *k = &d->key[s][n];
	enum cstate c = d->complete[s];
	struct udc_attr got, st_attr;
	bool sp = model_get(d->env.m, dir, names[n], name_len[n], &st_attr) == 0;
	uint64_t calls = model_lookup_calls(d->env.m), delta;
	int r, want_calls = -1; /* -1: 0 or 1 */

	set_op(d, "resolve(slot %d ino %llu, %s)", s, (unsigned long long)dir, nm_print(n));
	if (k->s == R_POS)
		want_calls = 0;
	else if (k->s == R_MISS && (sp || c == C_NO))
		want_calls = 1;
	else if (c == C_YES)
		want_calls = 0;
	r = udc_resolve(d->env.c, dir, names[n], name_len[n], &d->env.call, &got);
	delta = model_lookup_calls(d->env.m) - calls;
	if (sp) {
		if (r != 0)
			dfail(d, "resolve: want 0 (ino %llu), got %s",
			      (unsigned long long)st_attr.ino, tc_res_str(r));
		if (!tc_attr_eq(&got, &st_attr))
			dfail(d, "resolve: want ino %llu cookie %llx, got ino %llu cookie %llx",
			      (unsigned long long)st_attr.ino, (unsigned long long)st_attr.cookie,
			      (unsigned long long)got.ino, (unsigned long long)got.cookie);
	} else if (r != -ENOENT) {
		dfail(d, "resolve: want -ENOENT, got %s", tc_res_str(r));
	}
	if (want_calls >= 0 && delta != (uint64_t)want_calls)
		dfail(d, "resolve made %llu backend calls, want %d (state %d, complete %d)",
		      (unsigned long long)delta, want_calls, k->s, c);
	if (delta > 1)
		dfail(d, "resolve made %llu backend calls", (unsigned long long)delta);
	if (sp) {
		k->s = R_POS;
		k->a = st_attr;
	} else if (c != C_YES) {
		k->s = R_NEGMISS;
	}
}

static void mutated(struct diff *d, int s)
{
	if (d->complete[s] == C_YES)
		d->complete[s] = C_MAYBE;
}

static void do_add(struct diff *d, int s, int n)
{
	struct udc_attr a = new_attr(d);
	udc_ino dir = d->slot_ino[s];
	int r;

	set_op(d, "add(slot %d ino %llu, %s, ino %llu type %u)", s, (unsigned long long)dir,
	       nm_print(n), (unsigned long long)a.ino, a.type);
	model_set(d->env.m, dir, names[n], name_len[n], &a);
	r = udc_add(d->env.c, dir, names[n], name_len[n], &a);
	if (r != 0)
		dfail(d, "udc_add = %s", tc_res_str(r));
	d->key[s][n].s = R_POS;
	d->key[s][n].a = a;
	mutated(d, s);
}

static void do_add_negative(struct diff *d, int s, int n)
{
	udc_ino dir = d->slot_ino[s];
	int r;

	set_op(d, "unlink+add_negative(slot %d ino %llu, %s)", s, (unsigned long long)dir,
	       nm_print(n));
	model_del(d->env.m, dir, names[n], name_len[n]);
	r = udc_add_negative(d->env.c, dir, names[n], name_len[n],
			     (uint32_t)prng_below(&d->rng, 4));
	if (r != 0)
		dfail(d, "udc_add_negative = %s", tc_res_str(r));
	d->key[s][n].s = R_NEGMISS;
	mutated(d, s);
}

static void do_remove(struct diff *d, int s, int n)
{
	udc_ino dir = d->slot_ino[s];
	int r;

	set_op(d, "remove(slot %d ino %llu, %s)", s, (unsigned long long)dir, nm_print(n));
	model_del(d->env.m, dir, names[n], name_len[n]);
	r = udc_remove(d->env.c, dir, names[n], name_len[n]);
	if (r != 0)
		dfail(d, "udc_remove = %s", tc_res_str(r));
	d->key[s][n].s = d->keep ? R_NEGMISS : R_MISS;
	mutated(d, s);
}

static void do_rename(struct diff *d)
{
	int os = -1, on = -1, ns, nn;
	struct udc_attr a;
	udc_ino moved;
	int r;

	for (int tries = 0; tries < 16; tries++) {
		int s = (int)prng_below(&d->rng, NSLOTS), n = (int)prng_below(&d->rng, NNAMES);

		if (model_get(d->env.m, d->slot_ino[s], names[n], name_len[n], &a) == 0) {
			os = s;
			on = n;
			break;
		}
	}
	if (os < 0) {
		do_add(d, (int)prng_below(&d->rng, NSLOTS), (int)prng_below(&d->rng, NNAMES));
		return;
	}
	ns = prng_chance(&d->rng, 1, 2) ? os : (int)prng_below(&d->rng, NSLOTS);
	nn = prng_chance(&d->rng, 1, 16) ? on : (int)prng_below(&d->rng, NNAMES);
	moved = prng_chance(&d->rng, 1, 2) ? a.ino : UDC_INO_NONE;
	set_op(d, "rename(slot %d %s -> slot %d %s, moved %llu) [old state %d]", os, nm_print(on),
	       ns, nm_print(nn), (unsigned long long)moved, d->key[os][on].s);
	model_move(d->env.m, d->slot_ino[os], names[on], name_len[on], d->slot_ino[ns], names[nn],
		   name_len[nn]);
	r = udc_rename(d->env.c, d->slot_ino[os], names[on], name_len[on], d->slot_ino[ns],
		       names[nn], name_len[nn], moved);
	if (r != 0)
		dfail(d, "udc_rename = %s", tc_res_str(r));
	if (os == ns && on == nn)
		return; /* a no-op: the state stays */
	if (d->key[os][on].s == R_POS) {
		d->key[ns][nn].s = R_POS;
		d->key[ns][nn].a = d->key[os][on].a;
	} else {
		d->key[ns][nn].s = R_MISS;
	}
	d->key[os][on].s = d->keep ? R_NEGMISS : R_MISS;
	mutated(d, os);
	mutated(d, ns);
}

static void do_invalidate(struct diff *d, int s, int n)
{
	int r;

	set_op(d, "invalidate(slot %d ino %llu, %s)", s, (unsigned long long)d->slot_ino[s],
	       nm_print(n));
	r = udc_invalidate(d->env.c, d->slot_ino[s], names[n], name_len[n]);
	if (r != 0)
		dfail(d, "udc_invalidate = %s", tc_res_str(r));
	d->key[s][n].s = R_MISS;
	d->complete[s] = C_NO;
}

static void do_invalidate_dir(struct diff *d, int s)
{
	int r;

	set_op(d, "invalidate_dir(slot %d ino %llu)", s, (unsigned long long)d->slot_ino[s]);
	r = udc_invalidate_dir(d->env.c, d->slot_ino[s]);
	if (r != 0)
		dfail(d, "udc_invalidate_dir = %s", tc_res_str(r));
	for (int n = 0; n < NNAMES; n++)
		d->key[s][n].s = R_MISS;
	d->complete[s] = C_NO;
}

/* rmdir the slot's directory, then make a new one (new ino) under its name. */
static void do_rmdir(struct diff *d, int s)
{
	udc_ino old = d->slot_ino[s];
	udc_ino arg = d->root[s].s == R_POS && prng_chance(&d->rng, 1, 2) ? UDC_INO_NONE : old;
	struct udc_attr a;
	int r;

	set_op(d, "rmdir(root, %s, %llu) + mkdir (ino %llu)", slot_name[s], (unsigned long long)arg,
	       (unsigned long long)d->next_ino);
	model_lock(d->env.m);
	model_clear_dir_locked(d->env.m, old);
	model_del_locked(d->env.m, TC_ROOT, slot_name[s], strlen(slot_name[s]));
	model_unlock(d->env.m);
	r = udc_rmdir(d->env.c, TC_ROOT, slot_name[s], strlen(slot_name[s]), arg);
	if (r != 0)
		dfail(d, "udc_rmdir = %s", tc_res_str(r));
	d->root[s].s = d->keep ? R_NEGMISS : R_MISS;
	for (int n = 0; n < NNAMES; n++)
		d->key[s][n].s = R_MISS;
	d->complete[s] = C_NO;
	/* Everything cached in the old directory must be gone right now. */
	for (int n = 0; n < NNAMES; n++) {
		r = udc_lookup(d->env.c, old, names[n], name_len[n], NULL);
		if (r != UDC_MISS)
			dfail(d, "after rmdir: (old dir %llu, %s) = %s", (unsigned long long)old,
			      nm_print(n), tc_res_str(r));
	}
	check_key(d, s, -1);
	if (d->ndead < NDEAD)
		d->dead[d->ndead++] = old;
	else
		d->dead[prng_below(&d->rng, NDEAD)] = old;

	d->slot_ino[s] = d->next_ino++;
	a = tc_attr(d->slot_ino[s], UDC_TYPE_DIR, prng_next(&d->rng));
	model_set(d->env.m, TC_ROOT, slot_name[s], strlen(slot_name[s]), &a);
	r = udc_add(d->env.c, TC_ROOT, slot_name[s], strlen(slot_name[s]), &a);
	if (r != 0)
		dfail(d, "udc_add(mkdir) = %s", tc_res_str(r));
	d->root[s].s = R_POS;
	d->root[s].a = a;
}

static void do_complete(struct diff *d, int s)
{
	udc_ino dir = d->slot_ino[s];
	int r;

	set_op(d, "readdir+dir_complete(slot %d ino %llu)", s, (unsigned long long)dir);
	struct udc_fill fill;
	r = udc_dir_fill_begin(d->env.c, dir, &fill);
	if (r != 0)
		dfail(d, "udc_dir_fill_begin = %s", tc_res_str(r));
	for (int n = 0; n < NNAMES; n++) {
		struct udc_attr a;

		if (model_get(d->env.m, dir, names[n], name_len[n], &a) != 0)
			continue;
		r = udc_add(d->env.c, dir, names[n], name_len[n], &a);
		if (r != 0)
			dfail(d, "udc_add(readdir) = %s", tc_res_str(r));
		d->key[s][n].s = R_POS;
		d->key[s][n].a = a;
	}
	r = udc_dir_complete(d->env.c, dir, &fill);
	if (r == -ESTALE)
		return;   /* a name was lost during the fill (reclaim): not complete */
	if (r != 0)
		dfail(d, "udc_dir_complete = %s", tc_res_str(r));
	d->complete[s] = C_YES;
}

static void do_walk(struct diff *d, int s, int n)
{
	char path[UDC_NAME_MAX + 8];
	size_t len;
	struct udc_attr got, st_attr;
	bool sp = model_get(d->env.m, d->slot_ino[s], names[n], name_len[n], &st_attr) == 0;
	int r;

	len = (size_t)snprintf(path, sizeof(path), "/%s/", slot_name[s]);
	memcpy(path + len, names[n], name_len[n]);
	len += name_len[n];
	set_op(d, "walk(/%s/%s)", slot_name[s], nm_print(n));
	r = udc_walk(d->env.c, TC_ROOT, path, len, 0, &d->env.call, &got);
	if (sp) {
		if (r != 0 || !tc_attr_eq(&got, &st_attr))
			dfail(d, "walk: want ino %llu, got %s ino %llu",
			      (unsigned long long)st_attr.ino, tc_res_str(r),
			      (unsigned long long)got.ino);
		d->key[s][n].s = R_POS;
		d->key[s][n].a = st_attr;
	} else {
		if (r != -ENOENT)
			dfail(d, "walk: want -ENOENT, got %s", tc_res_str(r));
		if (d->complete[s] != C_YES)
			d->key[s][n].s = R_NEGMISS;
	}
	/* The directory's name was resolved on the way. */
	if (d->root[s].s != R_POS) {
		model_get(d->env.m, TC_ROOT, slot_name[s], strlen(slot_name[s]), &d->root[s].a);
		d->root[s].s = R_POS;
	}
}

static void do_root_op(struct diff *d)
{
	int s = (int)prng_below(&d->rng, NSLOTS);
	int r;

	switch (prng_below(&d->rng, 4)) {
	case 0:
		set_op(d, "invalidate(root, %s)", slot_name[s]);
		r = udc_invalidate(d->env.c, TC_ROOT, slot_name[s], strlen(slot_name[s]));
		if (r != 0)
			dfail(d, "udc_invalidate = %s", tc_res_str(r));
		d->root[s].s = R_MISS;
		break;
	case 1:
		set_op(d, "invalidate_dir(root)");
		r = udc_invalidate_dir(d->env.c, TC_ROOT);
		if (r != 0)
			dfail(d, "udc_invalidate_dir(root) = %s", tc_res_str(r));
		for (int i = 0; i < NSLOTS; i++)
			d->root[i].s = R_MISS;
		break;
	default:
		set_op(d, "lookup(root, %s)", slot_name[s]);
		check_key(d, s, -1);
		break;
	}
}

static void check_dead(struct diff *d)
{
	udc_ino dir;
	int n, r;

	if (!d->ndead)
		return;
	dir = d->dead[prng_below(&d->rng, (uint64_t)d->ndead)];
	n = (int)prng_below(&d->rng, NNAMES);
	set_op(d, "lookup(dead dir %llu, %s)", (unsigned long long)dir, nm_print(n));
	r = udc_lookup(d->env.c, dir, names[n], name_len[n], NULL);
	if (r != UDC_MISS)
		dfail(d, "a name of a removed directory came back: %s", tc_res_str(r));
}

static void sweep(struct diff *d)
{
	struct udc_stats st = tc_stats(d->env.c);
	uint64_t npos = 0;

	for (int s = 0; s < NSLOTS; s++) {
		check_key(d, s, -1);
		npos += d->root[s].s == R_POS;
		for (int n = 0; n < NNAMES; n++) {
			check_key(d, s, n);
			npos += d->key[s][n].s == R_POS;
		}
	}
	if (st.nr_positive < npos)
		dfail(d, "nr_positive %llu < %llu positives the reference holds",
		      (unsigned long long)st.nr_positive, (unsigned long long)npos);
	if (st.nr_positive > ((uint64_t)1 << 40) || st.nr_negative > ((uint64_t)1 << 40))
		dfail(d, "counter underflow: nr_positive %llu nr_negative %llu",
		      (unsigned long long)st.nr_positive, (unsigned long long)st.nr_negative);
	if (st.bytes_used > st.bytes_limit)
		dfail(d, "bytes_used %llu > bytes_limit %llu", (unsigned long long)st.bytes_used,
		      (unsigned long long)st.bytes_limit);
}

static void run_differential(bool keep, const char *what)
{
	static struct diff d; /* large: keep it off the stack */

	memset(&d, 0, sizeof(d));
	make_names();
	d.keep = keep;
	d.seed = test_seed(what);
	prng_init(&d.rng, d.seed);
	tenv_init(&d.env, keep ? UDC_CFG_KEEP_UNLINKED : 0);
	d.next_ino = 100;
	for (int s = 0; s < NSLOTS; s++) {
		struct udc_attr a = tc_attr(d.next_ino++, UDC_TYPE_DIR, (uint64_t)s);

		d.slot_ino[s] = a.ino;
		model_set(d.env.m, TC_ROOT, slot_name[s], strlen(slot_name[s]), &a);
		if (s % 2 == 0) {
			cr_assert_eq(
				udc_add(d.env.c, TC_ROOT, slot_name[s], strlen(slot_name[s]), &a),
				0);
			d.root[s].s = R_POS;
			d.root[s].a = a;
		}
	}

	for (d.op = 0; d.op < NOPS; d.op++) {
		int s = (int)prng_below(&d.rng, NSLOTS), n = (int)prng_below(&d.rng, NNAMES);
		unsigned w = (unsigned)prng_below(&d.rng, 1000);

		if (w < 250) {
			set_op(&d, "lookup(slot %d ino %llu, %s)", s,
			       (unsigned long long)d.slot_ino[s], nm_print(n));
			check_key(&d, s, n);
		} else if (w < 400) {
			do_resolve(&d, s, n);
		} else if (w < 560) {
			do_add(&d, s, n);
		} else if (w < 620) {
			do_add_negative(&d, s, n);
		} else if (w < 700) {
			do_remove(&d, s, n);
		} else if (w < 780) {
			do_rename(&d);
		} else if (w < 840) {
			do_invalidate(&d, s, n);
		} else if (w < 855) {
			do_invalidate_dir(&d, s);
		} else if (w < 862) {
			do_rmdir(&d, s);
		} else if (w < 880) {
			do_complete(&d, s);
		} else if (w < 940) {
			do_walk(&d, s, n);
		} else if (w < 960) {
			do_root_op(&d);
		} else if (w < 970) {
			check_dead(&d);
		} else {
			/* Check the key just touched by the previous ops again. */
			set_op(&d, "lookup(slot %d, %s)", s, nm_print(n));
			check_key(&d, s, n);
		}
		if (d.op % 5000 == 4999) {
			set_op(&d, "sweep");
			sweep(&d);
		}
	}
	set_op(&d, "final sweep");
	sweep(&d);
	cr_log_info("%s: %d ops; lookups gave %llu positive, %llu negative, %llu miss", what, NOPS,
		    (unsigned long long)d.n_pos_hits, (unsigned long long)d.n_neg_hits,
		    (unsigned long long)d.n_miss);
	cr_assert_gt(d.n_pos_hits, 1000, "the sequence hardly ever hit a positive");
	cr_assert_gt(d.n_miss, 100);
	tenv_fini(&d.env);
}

Test(differential, default_flags, .timeout = 120)
{
	run_differential(false, "differential/default_flags");
}

Test(differential, keep_unlinked, .timeout = 120)
{
	run_differential(true, "differential/keep_unlinked");
}

/* The same on the other hash (udc_create's where the CPU has no AES-NI). */
Test(differential, siphash, .timeout = 120)
{
	hash_kind_default = HASH_SIPHASH;
#if HASH_NH_AES
	struct udc_config cfg = UDC_CONFIG_INIT;
	cfg.root = TC_ROOT;
	udc_cache *c = udc_create(&cfg);
	cr_assert_not_null(c);
	cr_assert(!c->key.aes, "udc_create did not take hash_kind_default");
	udc_destroy(c);
#endif
	run_differential(false, "differential/siphash");
}
