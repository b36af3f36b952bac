/* SPDX-License-Identifier: MIT */
/*
 * stress/compare.c - the workloads that run against every --impl: hit,
 * trickle, churn, rmdir, rename, mixed.
 *
 * Owns: the model store these workloads share (a backend that knows every
 * name they use from the name alone, plus the rename workload's slot table),
 * the operations the workers do and their checks, and the table of
 * workloads (setup, one operation).  The run loop and the report are
 * stress/compare_run.c; the types they share, stress/compare_internal.h.
 * Everything goes through struct impl (stress/impl.h), so that udcache and
 * the baselines run the same code.
 *
 * The names (all parsed back by the model backend, model_lookup()):
 *  - in the root: "d<k>" is directory k (dir_ino(k)), for k < --dirs;
 *    "s<x>" is rename slot x, holding a rename object or nothing;
 *  - in directory k: "f<j>.<pad>" is file i = j * dirs + k (ino
 *    FILE_INO_BASE + i) when i < --names and i is not one of the negatives
 *    (a hash of (seed, i) below --negative-ratio); "n<j>.<pad>" is name i when
 *    it is a negative; "t..." (churn's temporary files) and "x..." (searched
 *    names) never exist for the backend: they are looked up only before
 *    they are created;
 *  - in rename object j (RENAME_OBJ_BASE + j): "leaf", a file.
 *  Anything else is -ENOENT.  <pad> is 'x's up to --name-len.
 *
 * Workloads (each checks every answer it can know; exit 1 on a wrong one):
 *  - hit:    preload the names (add / add_negative), then lookups of names
 *            drawn uniformly or Zipf (--dist, --zipf-s) from a per-thread
 *            sequence made before the clock starts.  Positive: the attr it was
 *            added with; negative: not positive; a miss is counted apart.
 *            Times one call in HIT_TIME_EVERY (timing every call would double
 *            the cost of a 50 ns lookup).
 *  - trickle: unique names ("t<thread>-<n>") resolved in --dirs directories
 *            (default 1) that the backend says do not exist: every answer
 *            -ENOENT.  The kernel discussion's workload: negatives pile up.
 *  - churn:  a temporary file's life, in a random directory of --dirs:
 *            resolve (-ENOENT), add, lookup (positive with its ino, or a
 *            miss), remove, lookup (never positive).  Each call is timed.
 *  - rmdir:  thread 0 fills a fresh directory with --names negatives (and
 *            one file), then removes it: udc_rmdir (even rounds) or
 *            invalidate_dir and remove (odd rounds), timed apart; then checks
 *            that none of its names is answered from before the call, and
 *            does RMDIR_LOOKUPS lookups.  The other threads look up a fixed
 *            set of files and negatives in other directories, checked.
 *  - rename: --dirs slots in the root, half holding a rename object (a
 *            directory with one file, "leaf").  Thread 0 moves a random object
 *            to a random empty slot (store first, then impl->rename) every
 *            RENAME_EVERY operations; every thread walks "/s<x>/leaf".  The
 *            answer must be a path that existed at one moment of the walk:
 *            object j's leaf only if j was in slot x at some point between
 *            the walk's start and end, -ENOENT only if x was empty at some
 *            point (the move log below proves it).
 *  - mixed:  a storage server's mix per thread: 60% resolves of files, 15%
 *            resolves of absent names, 10% churn cycles, 10% path walks, 4%
 *            renames of the thread's own file, 1% rmdir of a directory with
 *            MIXED_RMDIR_NEGATIVES negatives; every answer checked.
 *
 * Locking: none of its own.  A struct worker is written by its own thread
 * while the workers run and read by main after pthread_join(), except its
 * progress counter (compare_run.c).  The read-only inputs (options, the name table,
 * the index sequences) are written by main before the start barrier, which
 * orders them before every worker's reads.  The rename workload's slot
 * table, log and generation are written by thread 0 alone (single writer)
 * and read by every thread and the backend.  The implementations do their
 * own locking.
 *
 * Ordering (the run's own, worker.progress and run.stop: compare_run.c):
 *  - rename: thread 0 writes log[g] (relaxed) and then stores gen = g with
 *    release; a walker's acquire load of gen pairs with it, so it sees every
 *    log entry up to the gen it read.  Thread 0 updates slot[] and pos[]
 *    (relaxed) only after that release, and finishes move g (cache told)
 *    before it writes log[g + 1]: so a walker that read gen = g0 knows moves
 *    before g0 are complete.  A walker rereads gen (acquire) after reading
 *    pos[]/occupant state; an unchanged gen proves that state is the one
 *    after the log it scanned.  The backend reads slot[] relaxed: each slot
 *    is one atomic word, and any value it returns is one the store held.
 *  - mixed's private-file state (priv[]) is written by its thread and read
 *    by the backend on that same thread only (each thread resolves only its
 *    own private names), so it needs no atomics.
 *
 * Limitations:
 *  - Latency includes two clock_gettime calls (~20 ns each here) and any
 *    preemption; with more threads than cores the tail is the scheduler's.
 *  - The rename check gives up (counted as unchecked, not wrong) on a walk
 *    that saw more than RENAME_LOG - 2 moves.
 *  - A miss is never wrong: bounded implementations evict.
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif

#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "stress/compare_internal.h"

#define FILE_INO_BASE ((udc_ino)1 << 40)	 /* file i */
#define CHURN_INO_BASE ((udc_ino)2 << 40)	 /* + (thread << 32) + n */
#define RENAME_OBJ_BASE ((udc_ino)3 << 40)	 /* rename object j (a directory) */
#define RENAME_LEAF_BASE ((udc_ino)4 << 40)	 /* its file "leaf" */
#define RMDIR_INO_BASE ((udc_ino)5 << 40)	 /* + (thread << 32) + round */
#define PRIV_INO_BASE ((udc_ino)6 << 40)	 /* mixed: thread t's own file */
#define HIT_TIME_EVERY 16			 /* hit: one call in 16 is timed */
#define SEQ_LEN (1u << 20)			 /* hit: indices drawn per thread */
#define RENAME_EVERY 8				 /* rename: thread 0 moves one in 8 ops */
#define RENAME_LOG (1u << 16)			 /* moves remembered */
#define RMDIR_LOOKUPS 4096			 /* rmdir: thread 0's lookups per round */
#define RMDIR_CHECKS 64				 /* names checked gone after each round */
#define MIXED_RMDIR_NEGATIVES 256
#define STABLE_NAMES 4096			 /* rmdir: the other threads' names */

/* ---------------------------------------------------------------------- */
/* Names and the model store */

/* "<c><hex v>" padded with ".xxx" to pad bytes (no padding if pad is 0); its length. */
static size_t model_name(char *buf, char c, uint64_t v, unsigned pad)
{
	static const char hex[] = "0123456789abcdef";
	char tmp[16];
	size_t k = 0;
	int n = 0;

	buf[k++] = c;
	do
		tmp[n++] = hex[v & 15];
	while (v >>= 4);
	while (n)
		buf[k++] = tmp[--n];
	if (k + 1 < pad) {
		buf[k++] = '.';
		while (k < pad)
			buf[k++] = 'x';
	}
	return k;
}

/* Parse "<c><hex>[.x*]" as made by model_name(); false if it is not one. */
static bool model_parse(const char *s, size_t len, char c, uint64_t *v)
{
	size_t k = 1;

	if (len < 2 || s[0] != c)
		return false;
	*v = 0;
	for (; k < len && k < 17; k++) {
		int d = s[k] >= '0' && s[k] <= '9' ? s[k] - '0' :
			s[k] >= 'a' && s[k] <= 'f' ? s[k] - 'a' + 10 : -1;

		if (d < 0)
			break;
		*v = *v << 4 | (uint64_t)d;
	}
	if (k == 1)
		return false;
	if (k == len)
		return true;
	if (s[k++] != '.')
		return false;
	for (; k < len; k++)
		if (s[k] != 'x')
			return false;
	return true;
}

static struct udc_attr file_attr(udc_ino ino)
{
	struct udc_attr a = { .ino = ino, .type = UDC_TYPE_REG, .cookie = mix64(ino) };

	return a;
}

static struct udc_attr dir_attr(udc_ino ino)
{
	struct udc_attr a = { .ino = ino, .type = UDC_TYPE_DIR, .cookie = mix64(ino) };

	return a;
}

static bool attr_eq(const struct udc_attr *a, const struct udc_attr *b)
{
	return a->ino == b->ino && a->type == b->type && a->cookie == b->cookie &&
	       a->flags == b->flags;
}

static void names_build(struct names *t, const struct options *opt, uint64_t n, uint64_t dirs)
{
	size_t stride = opt->name_len > 24 ? opt->name_len : 24;
	uint64_t threshold = opt->negative_ratio >= 1.0 ?
				     UINT64_MAX :
				     (uint64_t)(opt->negative_ratio * 18446744073709551616.0);

	memset(t, 0, sizeof(*t));
	t->n = n;
	t->dirs = dirs;
	t->stride = stride;
	t->bytes = malloc(n * stride);
	t->len = malloc(n);
	t->negative = calloc(n, 1);
	if (!t->bytes || !t->len || !t->negative)
		die("out of memory for %" PRIu64 " names", n);
	for (uint64_t i = 0; i < n; i++) {
		bool neg = opt->negative_ratio > 0.0 && mix64(opt->seed ^ i) <= threshold;

		t->negative[i] = neg;
		t->nr_negative += neg;
		t->len[i] = (uint8_t)model_name(t->bytes + i * stride, neg ? 'n' : 'f', i / dirs,
						opt->name_len);
	}
}

static void names_free(struct names *t)
{
	free(t->bytes);
	free(t->len);
	free(t->negative);
}

static const char *name_of(const struct names *t, uint64_t i)
{
	return t->bytes + i * t->stride;
}

static udc_ino name_dir(const struct names *t, uint64_t i)
{
	return dir_ino(i % t->dirs);
}

static int model_lookup(void *ctx, udc_ino dir, const char *name, size_t len,
			struct udc_attr *out)
{
	struct be_ctx *b = ctx;
	const struct model *m = b->m;
	const struct names *t = m->names;
	uint64_t v;

	b->calls++;
	if (dir == ROOT_INO) {
		if (model_parse(name, len, 'd', &v) && v < m->dirs) {
			*out = dir_attr(dir_ino(v));
			return 0;
		}
		if (m->slot && model_parse(name, len, 's', &v) && v < m->slots) {
			int32_t j = atomic_load_explicit(&m->slot[v], memory_order_relaxed);

			if (j < 0)
				return -ENOENT;
			*out = dir_attr(RENAME_OBJ_BASE + (udc_ino)j);
			return 0;
		}
		return -ENOENT;
	}
	if (dir >= RENAME_OBJ_BASE && dir < RENAME_OBJ_BASE + m->objs) {
		if (len == 4 && memcmp(name, "leaf", 4) == 0) {
			*out = file_attr(RENAME_LEAF_BASE + (dir - RENAME_OBJ_BASE));
			return 0;
		}
		return -ENOENT;
	}
	if (t && dir >= DIR_INO_BASE && dir < DIR_INO_BASE + t->dirs &&
	    model_parse(name, len, 'f', &v)) {
		uint64_t i = v * t->dirs + (dir - DIR_INO_BASE);

		if (i < t->n && !t->negative[i]) {
			*out = file_attr(FILE_INO_BASE + i);
			return 0;
		}
		return -ENOENT;
	}
	if (b->priv && model_parse(name, len, "pq"[*b->priv], &v) && v == b->id &&
	    dir == dir_ino(b->id % m->dirs)) {
		*out = file_attr(PRIV_INO_BASE + b->id);
		return 0;
	}
	return -ENOENT;
}

const struct udc_backend model_backend = { .lookup = model_lookup };

/* ---------------------------------------------------------------------- */
/* Workers */

static void wrong(struct worker *w, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void wrong(struct worker *w, const char *fmt, ...)
{
	va_list ap;

	if (w->wrong++ == 0) {
		va_start(ap, fmt);
		vsnprintf(w->first_wrong, sizeof(w->first_wrong), fmt, ap);
		va_end(ap);
	}
}

static struct udc_call call_of(struct worker *w)
{
	struct udc_call call = { .ctx = &w->be, .client = 0 };

	return call;
}

/* ---------------------------------------------------------------------- */
/* Operations, shared by the workloads */

static void op_resolve_file(struct worker *w, uint64_t i, bool timed)
{
	const struct run *r = w->run;
	const struct names *t = &r->names;
	struct udc_call call = call_of(w);
	struct udc_attr a, want = file_attr(FILE_INO_BASE + i);
	uint64_t be0 = w->be.calls, t0 = timed ? now_ns() : 0;
	int rc = r->impl->resolve(r->c, name_dir(t, i), name_of(t, i), t->len[i], &call, &a);

	if (timed)
		lat_record(&w->lat, now_ns() - t0);
	w->calls++;
	if (w->be.calls == be0)
		w->hits++;
	else
		w->misses++;
	if (t->negative[i] ? rc != -ENOENT : rc != 0 || !attr_eq(&a, &want))
		wrong(w, "resolve(\"%.*s\"): %s", (int)t->len[i], name_of(t, i), rc_name(rc));
}

static void op_lookup_name(struct worker *w, uint64_t i, bool timed)
{
	const struct run *r = w->run;
	const struct names *t = &r->names;
	struct udc_attr a;
	uint64_t t0 = timed ? now_ns() : 0;
	int rc = r->impl->lookup(r->c, name_dir(t, i), name_of(t, i), t->len[i], &a);

	if (timed)
		lat_record(&w->lat, now_ns() - t0);
	w->calls++;
	if (rc == UDC_MISS) {
		w->misses++;
		return;
	}
	w->hits++;
	if (t->negative[i]) {
		if (rc != UDC_NEGATIVE)
			wrong(w, "lookup(negative \"%.*s\"): %s", (int)t->len[i], name_of(t, i),
			      rc_name(rc));
	} else {
		struct udc_attr want = file_attr(FILE_INO_BASE + i);

		if (rc != UDC_POSITIVE || !attr_eq(&a, &want))
			wrong(w, "lookup(\"%.*s\"): %s ino %" PRIu64, (int)t->len[i],
			      name_of(t, i), rc_name(rc), rc == UDC_POSITIVE ? a.ino : 0);
	}
}

/* A timed call of the implementation; rc as returned. */
#define TIMED(w, hist, expr)                                     \
	({                                                       \
		uint64_t t0_ = now_ns();                         \
		int rc_ = (expr);                                \
		lat_record(hist, now_ns() - t0_);                \
		(w)->calls++;                                    \
		rc_;                                             \
	})

/* A unique name "<c><thread>-<n>" resolved in dir: the backend says -ENOENT. */
static void op_absent(struct worker *w, udc_ino dir, char c)
{
	const struct run *r = w->run;
	struct udc_call call = call_of(w);
	char name[NAME_BUF];
	size_t len = name_fmt(name, c == 't' ? "t" : "x", w->id, w->churn_n++);
	int rc = TIMED(w, &w->lat, r->impl->resolve(r->c, dir, name, len, &call, NULL));

	w->misses++;
	if (rc != -ENOENT)
		wrong(w, "resolve(absent \"%.*s\"): %s", (int)len, name, rc_name(rc));
}

/* A temporary file's life in dir. */
static void op_churn_cycle(struct worker *w, udc_ino dir)
{
	const struct run *r = w->run;
	const struct impl *im = r->impl;
	struct udc_call call = call_of(w);
	char name[NAME_BUF];
	uint64_t n = w->churn_n++;
	size_t len = name_fmt(name, "t", w->id, n);
	struct udc_attr a, want = file_attr(CHURN_INO_BASE + ((uint64_t)w->id << 32) + n);
	int rc;

	rc = TIMED(w, &w->lat, im->resolve(r->c, dir, name, len, &call, NULL));
	if (rc != -ENOENT)
		wrong(w, "churn: resolve(new \"%.*s\"): %s", (int)len, name, rc_name(rc));
	rc = TIMED(w, &w->lat, im->add(r->c, dir, name, len, &want));
	if (rc < 0)
		wrong(w, "churn: add(\"%.*s\"): %s", (int)len, name, rc_name(rc));
	rc = TIMED(w, &w->lat, im->lookup(r->c, dir, name, len, &a));
	if (rc == UDC_MISS)
		w->misses++;
	else if (rc != UDC_POSITIVE || !attr_eq(&a, &want))
		wrong(w, "churn: lookup(created \"%.*s\"): %s", (int)len, name, rc_name(rc));
	rc = TIMED(w, &w->lat, im->remove(r->c, dir, name, len));
	if (rc < 0)
		wrong(w, "churn: remove(\"%.*s\"): %s", (int)len, name, rc_name(rc));
	rc = TIMED(w, &w->lat, im->lookup(r->c, dir, name, len, &a));
	if (rc == UDC_POSITIVE || rc < 0)
		wrong(w, "churn: lookup(unlinked \"%.*s\"): %s", (int)len, name, rc_name(rc));
}

/* Fill a fresh directory with negatives, remove it, check its names are gone. */
static void op_rmdir_cycle(struct worker *w, uint64_t negatives)
{
	const struct run *r = w->run;
	const struct impl *im = r->impl;
	uint64_t round = w->rmdir_round++;
	udc_ino dir = RMDIR_INO_BASE + ((uint64_t)w->id << 32) + round;
	struct udc_attr da = dir_attr(dir), fa = file_attr(dir ^ ((udc_ino)1 << 39));
	char dname[NAME_BUF], name[NAME_BUF];
	size_t dlen = name_fmt(dname, "r", w->id, round), len;
	int rc;

	rc = im->add(r->c, ROOT_INO, dname, dlen, &da);
	if (rc < 0)
		wrong(w, "rmdir: add(dir): %s", rc_name(rc));
	for (uint64_t i = 0; i < negatives; i++) {
		len = model_name(name, 'n', i, r->opt->name_len);
		rc = im->add_negative(r->c, dir, name, len, 0);
		if (rc < 0)
			wrong(w, "rmdir: add_negative: %s", rc_name(rc));
	}
	rc = im->add(r->c, dir, "file", 4, &fa);
	if (rc < 0)
		wrong(w, "rmdir: add(file): %s", rc_name(rc));
	w->calls += negatives + 2;
	if (round % 2 == 0) {
		rc = TIMED(w, &w->rmdir_lat, im->rmdir(r->c, ROOT_INO, dname, dlen, dir));
	} else {
		rc = TIMED(w, &w->inval_lat, im->invalidate_dir(r->c, dir));
		if (rc == 0)
			rc = im->remove(r->c, ROOT_INO, dname, dlen);
	}
	if (rc < 0)
		wrong(w, "rmdir: %s: %s", round % 2 ? "invalidate_dir" : "rmdir", rc_name(rc));
	for (unsigned k = 0; k <= RMDIR_CHECKS && negatives; k++) {
		struct udc_attr a;

		if (k < RMDIR_CHECKS)
			len = model_name(name, 'n', rand_below(&w->rng, negatives),
					 r->opt->name_len);
		else
			memcpy(name, "file", len = 4);
		rc = im->lookup(r->c, dir, name, len, &a);
		if (rc != UDC_MISS)
			wrong(w, "rmdir: \"%.*s\" answered %s after its directory went",
			      (int)len, name, rc_name(rc));
	}
	rc = im->lookup(r->c, ROOT_INO, dname, dlen, NULL);
	if (rc == UDC_POSITIVE || rc < 0)
		wrong(w, "rmdir: the removed directory answered %s", rc_name(rc));
}

/* ---------------------------------------------------------------------- */
/* The rename workload's log check */

static void move_of(const struct model *m, uint64_t g, uint32_t *obj, uint32_t *from, uint32_t *to)
{
	const struct rename_move *mv = &m->log[g % RENAME_LOG];

	*obj = atomic_load_explicit(&mv->obj, memory_order_relaxed);
	*from = atomic_load_explicit(&mv->from, memory_order_relaxed);
	*to = atomic_load_explicit(&mv->to, memory_order_relaxed);
}

/*
 * Whether object j was in slot x (want_empty false), or slot x was empty
 * (want_empty true), at some moment between the walk's start (gen g0) and
 * end (g1).  -1: cannot tell (the log was overwritten).
 */
static int rename_was(const struct model *m, uint64_t g0, uint64_t g1, uint32_t j, uint32_t x,
		      bool want_empty)
{
	for (;;) {
		/* Acquire: pairs with thread 0's release of gen; the log up to it is visible. */
		uint64_t gcur = atomic_load_explicit(&m->gen, memory_order_acquire);
		bool known = false, state = false; /* the state before move g0 */
		uint32_t obj, from, to;

		if (gcur - g0 >= RENAME_LOG - 2)
			return -1;
		for (uint64_t g = g0; g <= gcur && !known; g++) {
			if (g == 0)
				continue;
			move_of(m, g, &obj, &from, &to);
			if (want_empty && (from == x || to == x)) {
				known = true;
				state = to == x; /* x was empty before a move into it */
			} else if (!want_empty && obj == j) {
				known = true;
				state = from == x;
			}
		}
		if (!known) {
			state = want_empty ?
					atomic_load_explicit(&m->slot[x], memory_order_relaxed) < 0 :
					atomic_load_explicit(&m->pos[j], memory_order_relaxed) == x;
			/* Acquire: an unchanged gen proves that state is after the log scanned. */
			if (atomic_load_explicit(&m->gen, memory_order_acquire) != gcur)
				continue;
		}
		if (state)
			return 1;
		for (uint64_t g = g0 ? g0 : 1; g <= g1; g++) {
			move_of(m, g, &obj, &from, &to);
			if (want_empty ? from == x : obj == j && to == x)
				return 1;
		}
		/* Acquire: the log read above was not overwritten meanwhile. */
		if (atomic_load_explicit(&m->gen, memory_order_acquire) - g0 >= RENAME_LOG - 2)
			return -1;
		return 0;
	}
}

/* Thread 0: move a random object to a random empty slot. */
static void rename_move(struct worker *w)
{
	struct run *r = w->run;
	struct model *m = &r->model;
	uint32_t j = (uint32_t)rand_below(&w->rng, m->objs), to, from;
	uint64_t g = atomic_load_explicit(&m->gen, memory_order_relaxed) + 1;
	char oname[NAME_BUF], nname[NAME_BUF];
	size_t olen, nlen;
	int rc;

	do
		to = (uint32_t)rand_below(&w->rng, m->slots);
	while (atomic_load_explicit(&m->slot[to], memory_order_relaxed) >= 0);
	from = atomic_load_explicit(&m->pos[j], memory_order_relaxed);
	atomic_store_explicit(&m->log[g % RENAME_LOG].obj, j, memory_order_relaxed);
	atomic_store_explicit(&m->log[g % RENAME_LOG].from, from, memory_order_relaxed);
	atomic_store_explicit(&m->log[g % RENAME_LOG].to, to, memory_order_relaxed);
	/* Release: publishes the log entry before anyone can see the move. */
	atomic_store_explicit(&m->gen, g, memory_order_release);
	atomic_store_explicit(&m->slot[to], (int32_t)j, memory_order_relaxed);
	atomic_store_explicit(&m->slot[from], -1, memory_order_relaxed);
	atomic_store_explicit(&m->pos[j], to, memory_order_relaxed);
	olen = model_name(oname, 's', from, 0);
	nlen = model_name(nname, 's', to, 0);
	rc = TIMED(w, &w->rename_lat,
		   r->impl->rename(r->c, ROOT_INO, oname, olen, ROOT_INO, nname, nlen,
				   RENAME_OBJ_BASE + j));
	if (rc < 0)
		wrong(w, "rename(s%x -> s%x): %s", from, to, rc_name(rc));
}

static void rename_walk(struct worker *w)
{
	const struct run *r = w->run;
	const struct model *m = &r->model;
	struct udc_call call = call_of(w);
	uint32_t x = (uint32_t)rand_below(&w->rng, m->slots);
	char path[NAME_BUF];
	size_t len = 1;
	struct udc_attr a;
	uint64_t g0, g1, be0 = w->be.calls;
	int rc, ok;

	path[0] = '/';
	len += model_name(path + 1, 's', x, 0);
	memcpy(path + len, "/leaf", 5);
	len += 5;
	/* Acquire: pairs with the release of gen (see Ordering). */
	g0 = atomic_load_explicit(&m->gen, memory_order_acquire);
	rc = TIMED(w, &w->lat, r->impl->walk(r->c, ROOT_INO, path, len, 0, &call, &a));
	g1 = atomic_load_explicit(&m->gen, memory_order_acquire);
	if (w->be.calls == be0)
		w->hits++;
	else
		w->misses++;
	if (rc == 0 && a.ino >= RENAME_LEAF_BASE && a.ino < RENAME_LEAF_BASE + m->objs)
		ok = rename_was(m, g0, g1, (uint32_t)(a.ino - RENAME_LEAF_BASE), x, false);
	else if (rc == -ENOENT)
		ok = rename_was(m, g0, g1, 0, x, true);
	else
		ok = 0;
	if (ok < 0)
		w->unchecked++;
	else if (!ok)
		wrong(w, "walk(%.*s): %s ino 0x%" PRIx64 " (moves %" PRIu64 "..%" PRIu64 ")",
		      (int)len, path, rc_name(rc), rc == 0 ? a.ino : 0, g0, g1);
}

/* ---------------------------------------------------------------------- */
/* Workloads */

static void hit_preload(struct run *r)
{
	const struct names *t = &r->names;
	char name[NAME_BUF];
	int rc;

	for (uint64_t k = 0; k < r->model.dirs; k++) {
		struct udc_attr a = dir_attr(dir_ino(k));
		size_t len = model_name(name, 'd', k, 0);

		rc = r->impl->add(r->c, ROOT_INO, name, len, &a);
		if (rc < 0)
			die("preload: add(root, \"%.*s\"): %s", (int)len, name, strerror(-rc));
	}
	for (uint64_t i = 0; i < t->n; i++) {
		struct udc_attr a = file_attr(FILE_INO_BASE + i);

		rc = t->negative[i] ? r->impl->add_negative(r->c, name_dir(t, i), name_of(t, i),
							    t->len[i], 0) :
				      r->impl->add(r->c, name_dir(t, i), name_of(t, i), t->len[i], &a);
		if (rc < 0)
			die("preload: name %" PRIu64 ": %s", i, strerror(-rc));
	}
}

/* Zipf(s) over [0, n) by inverting the continuous approximation of its CDF. */
static uint64_t zipf_draw(uint64_t *rng, uint64_t n, double s)
{
	double u = (double)(xorshift64star(rng) >> 11) * 0x1.0p-53, x;

	if (fabs(s - 1.0) < 1e-9)
		x = pow((double)n, u);
	else
		x = pow((pow((double)n, 1.0 - s) - 1.0) * u + 1.0, 1.0 / (1.0 - s));
	return x < 1.0 ? 0 : (uint64_t)x - 1 < n ? (uint64_t)x - 1 : n - 1;
}

static void hit_setup(struct run *r)
{
	r->model.dirs = r->opt->dirs;
	names_build(&r->names, r->opt, r->opt->names, r->opt->dirs);
	hit_preload(r);
	/* The resizes the preload made due run in another thread: until they
	 * land, hits walk chains of 2-8 nodes, and under callgrind a hit
	 * counted 429 to 625 instructions from run to run of one binary
	 * (BENCHMARKS.md, issue 14 and 16, stop 28). */
	if (r->impl->settle)
		r->impl->settle(r->c);
}

static void hit_op(struct worker *w)
{
	uint64_t k = w->ops;

	op_lookup_name(w, w->seq[k % SEQ_LEN], k % HIT_TIME_EVERY == 0);
}

static void trickle_setup(struct run *r)
{
	r->model.dirs = r->opt->dirs_set ? r->opt->dirs : 1;
	hit_preload(r);
}

static void trickle_op(struct worker *w)
{
	op_absent(w, dir_ino(rand_below(&w->rng, w->run->model.dirs)), 't');
}

static void churn_setup(struct run *r)
{
	r->model.dirs = r->opt->dirs;
	hit_preload(r);
}

static void churn_op(struct worker *w)
{
	op_churn_cycle(w, dir_ino(rand_below(&w->rng, w->run->model.dirs)));
}

static void rmdir_setup(struct run *r)
{
	r->model.dirs = r->opt->dirs;
	r->rmdir_negatives = r->opt->names_set ? r->opt->names : RMDIR_DEFAULT_NEGATIVES;
	names_build(&r->names, r->opt, STABLE_NAMES, r->opt->dirs);
	hit_preload(r);
}

static void rmdir_op(struct worker *w)
{
	if (w->id == 0 && w->ops % RMDIR_LOOKUPS == 0)
		op_rmdir_cycle(w, w->run->rmdir_negatives);
	op_lookup_name(w, rand_below(&w->rng, w->run->names.n), true);
}

static void rename_setup(struct run *r)
{
	struct model *m = &r->model;

	m->slots = (uint32_t)(r->opt->dirs < 2 ? 2 : r->opt->dirs > 65536 ? 65536 : r->opt->dirs);
	m->objs = m->slots / 2;
	m->slot = calloc(m->slots, sizeof(*m->slot));
	m->pos = calloc(m->objs, sizeof(*m->pos));
	m->log = calloc(RENAME_LOG, sizeof(*m->log));
	if (!m->slot || !m->pos || !m->log)
		die("out of memory for %u rename slots", m->slots);
	for (uint32_t x = 0; x < m->slots; x++)
		atomic_init(&m->slot[x], x % 2 == 0 ? (int32_t)(x / 2) : -1);
	for (uint32_t j = 0; j < m->objs; j++)
		atomic_init(&m->pos[j], 2 * j);
	atomic_init(&m->gen, 0);
}

static void rename_op(struct worker *w)
{
	if (w->id == 0 && w->ops % RENAME_EVERY == RENAME_EVERY - 1)
		rename_move(w);
	else
		rename_walk(w);
}

static void mixed_setup(struct run *r)
{
	r->model.dirs = r->opt->dirs;
	names_build(&r->names, r->opt, r->opt->names, r->opt->dirs);
	hit_preload(r);
	for (unsigned t = 0; t < r->opt->threads; t++) {
		struct udc_attr a = file_attr(PRIV_INO_BASE + t);
		char name[NAME_BUF];
		size_t len = model_name(name, 'p', t, 0);
		int rc = r->impl->add(r->c, dir_ino(t % r->model.dirs), name, len, &a);

		if (rc < 0)
			die("preload: private file %u: %s", t, strerror(-rc));
	}
}

/* Rename this thread's own file between "p<id>" and "q<id>", then look both up. */
static void mixed_rename(struct worker *w)
{
	const struct run *r = w->run;
	udc_ino dir = dir_ino(w->id % r->model.dirs);
	struct udc_attr a, want = file_attr(PRIV_INO_BASE + w->id);
	struct udc_call call = call_of(w);
	char from[NAME_BUF], to[NAME_BUF];
	size_t flen = model_name(from, "pq"[w->priv], w->id, 0);
	size_t tlen = model_name(to, "pq"[!w->priv], w->id, 0);
	int rc;

	w->priv = !w->priv; /* the store first */
	rc = TIMED(w, &w->rename_lat,
		   r->impl->rename(r->c, dir, from, flen, dir, to, tlen, want.ino));
	if (rc < 0)
		wrong(w, "mixed: rename: %s", rc_name(rc));
	rc = TIMED(w, &w->lat, r->impl->resolve(r->c, dir, to, tlen, &call, &a));
	if (rc != 0 || !attr_eq(&a, &want))
		wrong(w, "mixed: resolve(renamed \"%.*s\"): %s", (int)tlen, to, rc_name(rc));
	rc = TIMED(w, &w->lat, r->impl->resolve(r->c, dir, from, flen, &call, &a));
	if (rc != -ENOENT)
		wrong(w, "mixed: resolve(old name \"%.*s\"): %s", (int)flen, from, rc_name(rc));
}

static void mixed_walk(struct worker *w, uint64_t i)
{
	const struct run *r = w->run;
	const struct names *t = &r->names;
	struct udc_call call = call_of(w);
	struct udc_attr a, want = file_attr(FILE_INO_BASE + i);
	char path[2 * NAME_BUF + UDC_NAME_MAX];
	size_t len = 1;
	int rc;

	path[0] = '/';
	len += model_name(path + 1, 'd', i % t->dirs, 0);
	path[len++] = '/';
	memcpy(path + len, name_of(t, i), t->len[i]);
	len += t->len[i];
	rc = TIMED(w, &w->lat, r->impl->walk(r->c, ROOT_INO, path, len, 0, &call, &a));
	if (t->negative[i] ? rc != -ENOENT : rc != 0 || !attr_eq(&a, &want))
		wrong(w, "mixed: walk(%.*s): %s", (int)len, path, rc_name(rc));
}

static void mixed_op(struct worker *w)
{
	const struct run *r = w->run;
	uint64_t p = rand_below(&w->rng, 100), i = rand_below(&w->rng, r->names.n);

	if (p < 60)
		op_resolve_file(w, i, true);
	else if (p < 75)
		op_absent(w, dir_ino(i % r->model.dirs), 'x');
	else if (p < 85)
		op_churn_cycle(w, dir_ino(i % r->model.dirs));
	else if (p < 95)
		mixed_walk(w, i);
	else if (p < 99)
		mixed_rename(w);
	else
		op_rmdir_cycle(w, MIXED_RMDIR_NEGATIVES);
}

static const struct workload_def compare_workloads[] = {
	{ "hit", hit_setup, hit_op, "lookups" },
	{ "trickle", trickle_setup, trickle_op, "misses" },
	{ "churn", churn_setup, churn_op, "create/unlink cycles" },
	{ "rmdir", rmdir_setup, rmdir_op, "lookups" },
	{ "rename", rename_setup, rename_op, "walks and renames" },
	{ "mixed", mixed_setup, mixed_op,
	  "one of: resolve (60%), absent name (15%), create/unlink (10%), walk (10%), rename (4%), rmdir (1%)" },
};


static void seq_build(struct worker *w, const struct options *opt, uint64_t n)
{
	bool zipf = opt->dist && strcmp(opt->dist, "zipf") == 0;

	w->seq = malloc(SEQ_LEN * sizeof(*w->seq));
	if (!w->seq)
		die("out of memory for the lookup sequence");
	for (uint32_t k = 0; k < SEQ_LEN; k++) {
		uint64_t rank = zipf ? zipf_draw(&w->rng, n, opt->zipf_s) : rand_below(&w->rng, n);

		/* Scatter the ranks so that the hot names are not all in directory 0. */
		w->seq[k] = (uint32_t)(zipf ? mix64(rank) % n : rank);
	}
}

const struct workload_def *compare_workload(const char *name)
{
	for (size_t i = 0; i < sizeof(compare_workloads) / sizeof(*compare_workloads); i++)
		if (strcmp(compare_workloads[i].name, name) == 0)
			return &compare_workloads[i];
	return NULL;
}

bool compare_has(const char *workload)
{
	return compare_workload(workload) != NULL;
}

void compare_worker_prepare(struct worker *w, const struct run *r)
{
	if (r->wl->op == hit_op)
		seq_build(w, r->opt, r->names.n);
}

void compare_run_free(struct run *r, struct worker *w, unsigned n)
{
	for (unsigned i = 0; i < n; i++)
		free(w[i].seq);
	free(r->model.slot);
	free(r->model.pos);
	free(r->model.log);
	names_free(&r->names);
}
