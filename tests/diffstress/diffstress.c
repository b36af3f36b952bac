/* SPDX-License-Identifier: MIT */
/*
 * tests/diffstress/diffstress.c - the concurrent differential stress: many
 * threads use one cache the way a storage server does, against a versioned
 * store that is the truth, and every answer is checked to be one the store
 * gave at some moment during the call.
 *
 * Owns: the store (a small namespace, versioned), the backend over it, the
 * worker threads and the checks.  A plain program (Criterion cannot start
 * under ThreadSanitizer), run by ctest in every preset for a bounded time;
 * udc-diffstress --seconds N --threads T runs it longer.
 *
 * The namespace: the root holds the top directories T0..T3 (fixed); each
 * top directory holds movable directories s0..s5; each movable directory
 * holds files f0..f15 and symlinks l0..l3 (targets "fK", "../sK/fK",
 * "/TK/sK/fK" or "lK": loops included).  Mutators create and unlink files
 * and symlinks, rename files (with and without the moved ino), rename and
 * move directories between top directories (with and without the ino),
 * exchange two files or two directories (udc_exchange),
 * and remove directories (emptied first; with and without the ino) and
 * make new ones.  Each mutation changes the store and tells the cache in
 * one critical section of the store's lock, and is one version; the store
 * keeps a snapshot of every recent version.  Other threads invalidate
 * names and directories, forget objects (udc_forget_ino), fill
 * directories (the fill protocol, under the store lock so that the
 * listing is exact), list them (udc_readdir), look up, resolve and walk
 * paths through "..", symlinks and trailing slashes, and resolve unique
 * absent names so that the small memory limit keeps reclaim evicting.
 *
 * A check: an answer read between versions v0 and v1 (v0: the last
 * version the cache was fully told of before the call; v1: the last one
 * committed after it) must equal the store's answer at one version in
 * [v0, v1] (UDC_MISS from udc_lookup is always allowed), and a
 * positive's value must be its attr's own (every positive carries one
 * made from its ino and cookie, told with udc_add_value or given by the
 * backend's lookup_value).  Any other answer is a violation: printed with
 * the seed, and the exit status is 1.
 *
 * Locking: store.lock (a rwlock): mutators, fills and the ring of
 * snapshots take it for writing; the backend and the checks for reading.
 * A mutator calls into udcache with it held (udcache never calls the
 * backend from a mutation), which is how an embedder keeps the store and
 * the cache in step.
 * Ordering: store.version is written under the write lock and read with
 * acquire outside it only to bound a check's window (its end); store.told,
 * the version whose mutation has told the cache all of it, is stored with
 * release at the end of the write section and read with acquire for the
 * window's start; the check itself reads the snapshots under the read
 * lock.
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <errno.h>
#include <inttypes.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "common/path.h"
#include "include/udcache.h"
#include "tests/diffstress/diffstress.h"

#define ROOT ((udc_ino)1)
#define NTOP 4
#define NSUB 6
#define NFILE 16
#define NLINK 4
#define NSLOT (NFILE + NLINK)
#define POOL 24          /* movable directory objects live at once, at most */
#define RING 4096        /* versions kept */
#define TOP_INO(i) ((udc_ino)(2 + (i)))
#define MAX_OBJ (1u << 20)

enum { OBJ_NONE, OBJ_REG, OBJ_DIR, OBJ_LINK };

/* Objects are immutable once made: an ino is never reused. */
struct object {
	uint8_t type;
	char target[24];
};

/* One version of the namespace. */
struct snap {
	uint32_t top[NTOP][NSUB];          /* dir ino of (T_i, s_j), 0: absent */
	uint32_t dir_ino[POOL];            /* the movable directories alive */
	uint32_t slot[POOL][NSLOT];        /* their files and symlinks */
};

static struct {
	pthread_rwlock_t lock;
	struct snap cur;
	struct snap ring[RING];            /* ring[v % RING]: version v */
	char what[RING][48];               /* what made version v (for reports) */
	_Atomic uint64_t version;
	_Atomic uint64_t told;             /* the last version whose mutation has told the
	                                    * cache all of it (op_mutate's end) */
	uint32_t next_ino;
	struct object *obj;                /* by ino */
} store;

static udc_cache *cache;
static atomic_bool stop;
static atomic_ulong violations, checks, unchecked, fills_ok, fills_stale, ops_done;
static atomic_ulong listings_ok, listings_refused, forgets_ok, forgets_again;
static uint64_t seed;
static unsigned backend_delay_us;

const struct diffstress_options diffstress_defaults = {
	.threads = 8, .seconds = 5, .memory = (size_t)2 << 20, .delay_us = 20,
};

/* ------------------------------------------------------------------ */
/* a seeded PRNG per thread (xoshiro256**) */

struct rng {
	uint64_t s[4];
};

static uint64_t rng_next(struct rng *r)
{
	uint64_t *s = r->s, res = ((s[1] * 5) << 7 | (s[1] * 5) >> 57) * 9, t = s[1] << 17;

	s[2] ^= s[0], s[3] ^= s[1], s[1] ^= s[2], s[0] ^= s[3], s[2] ^= t;
	s[3] = s[3] << 45 | s[3] >> 19;
	return res;
}

static void rng_init(struct rng *r, uint64_t x)
{
	for (int i = 0; i < 4; i++) {   /* splitmix64 */
		x += 0x9e3779b97f4a7c15ull;
		uint64_t z = x;
		z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
		z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
		r->s[i] = z ^ (z >> 31);
	}
}

static unsigned below(struct rng *r, unsigned n)
{
	return (unsigned)(rng_next(r) % n);
}

/* ------------------------------------------------------------------ */
/* the store */

static const char *slot_name(unsigned k, char *buf)
{
	sprintf(buf, k < NFILE ? "f%u" : "l%u", k < NFILE ? k : k - NFILE);
	return buf;
}

static struct udc_attr attr_of(uint32_t ino)
{
	uint8_t t = store.obj[ino].type;
	uint32_t type = t == OBJ_DIR ? UDC_TYPE_DIR : t == OBJ_LINK ? UDC_TYPE_SYMLINK
								   : UDC_TYPE_REG;
	return (struct udc_attr){ .ino = ino, .type = type, .cookie = (uint64_t)ino * 7919 };
}

static int pool_of(const struct snap *s, udc_ino ino)
{
	for (int p = 0; p < POOL; p++)
		if (s->dir_ino[p] && s->dir_ino[p] == ino)
			return p;
	return -1;
}

/* Where movable directory ino is linked in s: its top index, or -1. */
static int top_of(const struct snap *s, udc_ino ino)
{
	for (int i = 0; i < NTOP; i++)
		for (int j = 0; j < NSUB; j++)
			if (s->top[i][j] == ino)
				return i;
	return -1;
}

/* The store's answer for (dir, name) in s: 0 with *a, or -ENOENT. */
static int snap_lookup(const struct snap *s, udc_ino dir, const char *name, size_t len,
		       struct udc_attr *a)
{
	char nm[16];
	bool dotdot = name_is_dotdot(name, len);

	if (dir == ROOT) {
		if (dotdot) {
			*a = (struct udc_attr){ .ino = ROOT, .type = UDC_TYPE_DIR };
			return 0;
		}
		for (int i = 0; i < NTOP; i++) {
			sprintf(nm, "T%d", i);
			if (strlen(nm) == len && !memcmp(nm, name, len)) {
				*a = (struct udc_attr){ .ino = TOP_INO(i), .type = UDC_TYPE_DIR };
				return 0;
			}
		}
		return -ENOENT;
	}
	for (int i = 0; i < NTOP; i++) {
		if (dir != TOP_INO(i))
			continue;
		if (dotdot) {
			*a = (struct udc_attr){ .ino = ROOT, .type = UDC_TYPE_DIR };
			return 0;
		}
		for (int j = 0; j < NSUB; j++) {
			sprintf(nm, "s%d", j);
			if (s->top[i][j] && strlen(nm) == len && !memcmp(nm, name, len)) {
				*a = attr_of(s->top[i][j]);
				return 0;
			}
		}
		return -ENOENT;
	}
	int p = pool_of(s, dir);
	if (p < 0)
		return -ENOENT;   /* a removed (or never made) directory holds nothing */
	if (dotdot) {
		int t = top_of(s, dir);
		if (t < 0)
			return -ENOENT;
		*a = (struct udc_attr){ .ino = TOP_INO(t), .type = UDC_TYPE_DIR };
		return 0;
	}
	for (unsigned k = 0; k < NSLOT; k++) {
		slot_name(k, nm);
		if (s->slot[p][k] && strlen(nm) == len && !memcmp(nm, name, len)) {
			*a = attr_of(s->slot[p][k]);
			return 0;
		}
	}
	return -ENOENT;
}

/* The store's udc_walk in s (the reference walker). */
static int snap_walk(const struct snap *s, udc_ino start, const char *path, size_t len,
		     unsigned flags, struct udc_attr *out)
{
	char buf[2 * UDC_PATH_MAX];
	size_t i = 0;
	unsigned links = 0;
	struct udc_attr cur = { .ino = start, .type = UDC_TYPE_DIR };
	struct path_comp comp;
	int r = path_check(path, len);

	if (r)
		return r;
	memcpy(buf, path, len);
	if (buf[0] == '/')
		cur.ino = ROOT;
	/* the store's types are all known: type_may_have_children() is "a directory" */
	while ((r = walk_next_name(buf, len, &i, cur.type, &comp)) > 0) {
		struct udc_attr a;
		if ((r = snap_lookup(s, cur.ino, comp.name, comp.len, &a)))
			return r;
		bool follow = !comp.last || comp.slash_after || (flags & UDC_WALK_FOLLOW);
		if (a.type == UDC_TYPE_SYMLINK && follow) {
			if (++links > 40)
				return -ELOOP;
			const char *t = store.obj[a.ino].target;
			size_t tl = strlen(t), rest = len - comp.end;
			memmove(buf + tl, buf + comp.end, rest);
			memcpy(buf, t, tl);
			len = tl + rest;
			i = 0;
			if (buf[0] == '/')
				cur = (struct udc_attr){ .ino = ROOT, .type = UDC_TYPE_DIR };
			continue;
		}
		cur = a;
	}
	if (r < 0)
		return r;
	if (path_wants_dir(buf, len) && !type_may_have_children(cur.type))
		return -ENOTDIR;
	*out = cur;
	return 0;
}

/* Publish store.cur as the next version, made by @fmt; write lock held. */
static void store_commit(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
static void store_commit(const char *fmt, ...)
{
	uint64_t v = atomic_load_explicit(&store.version, memory_order_relaxed) + 1;
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(store.what[v % RING], sizeof(store.what[0]), fmt, ap);
	va_end(ap);
	store.ring[v % RING] = store.cur;
	/* release: a check that reads v (acquire) may look at ring[v % RING] */
	atomic_store_explicit(&store.version, v, memory_order_release);
}

static uint32_t obj_new(uint8_t type, const char *target)
{
	uint32_t ino = store.next_ino++;

	if (ino >= MAX_OBJ) {
		atomic_store(&stop, true);   /* out of inos: end the run */
		return 0;
	}
	store.obj[ino].type = type;
	if (target)
		snprintf(store.obj[ino].target, sizeof(store.obj[ino].target), "%s", target);
	return ino;
}

/* ------------------------------------------------------------------ */
/* the backend */

static int be_lookup(void *ctx, udc_ino dir, const char *name, size_t len, struct udc_attr *out)
{
	struct rng *r = ctx;

	pthread_rwlock_rdlock(&store.lock);
	int res = snap_lookup(&store.cur, dir, name, len, out);
	pthread_rwlock_unlock(&store.lock);
	if (r && backend_delay_us && below(r, 4) == 0)
		usleep(below(r, backend_delay_us) + 1);   /* the answer ages: stale-answer races */
	return res;
}

static ssize_t be_readlink(void *ctx, udc_ino ino, char *buf, size_t size)
{
	(void)ctx;
	pthread_rwlock_rdlock(&store.lock);
	bool ok = ino < store.next_ino && store.obj[ino].type == OBJ_LINK;
	size_t n = ok ? strlen(store.obj[ino].target) : 0;
	if (ok)
		memcpy(buf, store.obj[ino].target, n < size ? n : size);
	pthread_rwlock_unlock(&store.lock);
	return ok ? (ssize_t)n : -EINVAL;
}

/* Every positive carries a value made from its attr (ino, cookie): a
 * value that is not its answer's own (torn, another version's, freed) is
 * a violation (check_value). */
static size_t value_of(const struct udc_attr *a, unsigned char *buf)
{
	size_t len = (size_t)((a->ino * 7 + a->cookie) % (UDC_VALUE_MAX + 1));

	for (size_t i = 0; i < len; i++)
		buf[i] = (unsigned char)(a->ino ^ (a->cookie >> (i % 8)) ^ i);
	return len;
}

/* Some answers expire (ttl_pick): an expired one is a miss, asked again. */
static uint32_t ttl_pick(uint64_t x)
{
	switch (x % 4) {
	case 0:
		return 0;   /* the cache's default */
	case 1:
		return UDC_TTL_NONE;
	default:
		return (uint32_t)(x / 4 % 400);   /* under 0.4 s, some at once */
	}
}

static int be_lookup_value(void *ctx, udc_ino dir, const char *name, size_t len,
			   struct udc_attr *out, void *value, size_t *value_len, uint32_t *ttl_ms)
{
	int r = be_lookup(ctx, dir, name, len, out);

	if (r == 0)
		*value_len = value_of(out, value);
	*ttl_ms = ttl_pick(dir * 31 + len * 7 + (uint64_t)name[0] + out->ino);
	return r;
}

static const struct udc_backend backend = {
	.lookup = be_lookup,
	.readlink = be_readlink,
	.lookup_value = be_lookup_value,
};

/* ------------------------------------------------------------------ */
/* checks */

static void violation(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
static void violation(const char *fmt, ...)
{
	va_list ap;

	if (atomic_fetch_add(&violations, 1) >= 20)
		return;
	va_start(ap, fmt);
	fprintf(stderr, "diffstress: VIOLATION (seed %" PRIu64 "): ", seed);
	vfprintf(stderr, fmt, ap);
	fputc('\n', stderr);
	va_end(ap);
}

static bool attr_same(const struct udc_attr *a, const struct udc_attr *b)
{
	return a->ino == b->ino && a->type == b->type && a->cookie == b->cookie && a->flags == 0;
}

/* The versions at which (dir, name) changed, as far back as the ring
 * goes (read lock held): printed with a violation. */
static void history(udc_ino dir, const char *name, size_t len)
{
	uint64_t now = atomic_load_explicit(&store.version, memory_order_relaxed);
	uint64_t from = now > RING - 2 ? now - (RING - 2) : 0;
	int last = 1;
	uint64_t last_ino = ~0ull;

	for (uint64_t v = from; v <= now; v++) {
		struct udc_attr a = { 0 };
		int r = snap_lookup(&store.ring[v % RING], dir, name, len, &a);
		if (r != last || (r == 0 && a.ino != last_ino))
			fprintf(stderr, "diffstress:   version %" PRIu64 ": %d ino %" PRIu64 " (%s)\n",
				v, r, r ? 0 : a.ino, store.what[v % RING]);
		last = r, last_ino = a.ino;
	}
}

/* Versions v0..v1 still in the ring, read lock held: false if not. */
static bool window_kept(uint64_t v0)
{
	/* relaxed: under the read lock no version is committed */
	return atomic_load_explicit(&store.version, memory_order_relaxed) - v0 < RING - 1;
}

/* r (0/-errno) with *a must be the store's at a version in [v0, v1]. */
static void check_answer(const char *what, udc_ino dir, const char *name, size_t len,
			 uint64_t v0, uint64_t v1, int r, const struct udc_attr *a, bool is_walk,
			 unsigned wflags)
{
	pthread_rwlock_rdlock(&store.lock);
	if (!window_kept(v0)) {
		pthread_rwlock_unlock(&store.lock);
		atomic_fetch_add(&unchecked, 1);
		return;
	}
	bool ok = false;
	int want = 0;
	struct udc_attr wa = { 0 };
	for (uint64_t v = v0; v <= v1 && !ok; v++) {
		const struct snap *s = &store.ring[v % RING];
		want = is_walk ? snap_walk(s, dir, name, len, wflags, &wa)
			       : snap_lookup(s, dir, name, len, &wa);
		ok = want == r && (r != 0 || attr_same(&wa, a));
	}
	if (!ok && !is_walk)
		history(dir, name, len);
	pthread_rwlock_unlock(&store.lock);
	atomic_fetch_add(&checks, 1);
	if (!ok)
		violation("%s(%" PRIu64 ", \"%.*s\") = %d ino %" PRIu64 " cookie %" PRIu64
			  "; the store (versions %" PRIu64 "..%" PRIu64 ") said %d ino %" PRIu64
			  " (last)",
			  what, dir, (int)len, name, r, r ? 0 : a->ino, r ? 0 : a->cookie, v0, v1,
			  want, want ? 0 : wa.ino);
}

static uint64_t version_now(void)
{
	/* acquire: pairs with store_commit's release */
	return atomic_load_explicit(&store.version, memory_order_acquire);
}

/* A check's window starts here, not at version_now(): a mutation commits
 * its version before it tells the cache (under the write lock), so a call
 * that begins in between may still get the previous answer, rightly.
 * (With version_now() as the start, CI's run once reported the answer an
 * exchange was replacing, read while the exchange was still being told.) */
static uint64_t told_now(void)
{
	/* acquire: pairs with op_mutate's release */
	return atomic_load_explicit(&store.told, memory_order_acquire);
}

/* ------------------------------------------------------------------ */
/* the operations */

struct worker {
	pthread_t t;
	unsigned id;
	struct rng rng;
	struct udc_call call;
};

/* A directory to ask about: a top one, a live movable one, or any made. */
static udc_ino pick_dir(struct worker *w)
{
	unsigned k = below(&w->rng, 10);

	if (k == 0)
		return ROOT;
	if (k < 3)
		return TOP_INO(below(&w->rng, NTOP));
	pthread_rwlock_rdlock(&store.lock);
	udc_ino d = store.cur.dir_ino[below(&w->rng, POOL)];
	uint32_t made = store.next_ino;
	pthread_rwlock_unlock(&store.lock);
	if (!d || k == 9)   /* sometimes an old (perhaps removed) directory */
		d = 100 + below(&w->rng, made > 100 ? made - 100 : 1);
	return d;
}

static size_t pick_name(struct worker *w, udc_ino dir, char *nm)
{
	if (below(&w->rng, 8) == 0)
		return (size_t)sprintf(nm, "..");
	if (dir == ROOT)
		return (size_t)sprintf(nm, "T%u", below(&w->rng, NTOP + 1));
	if (dir < TOP_INO(NTOP))
		return (size_t)sprintf(nm, "s%u", below(&w->rng, NSUB));
	return strlen(slot_name(below(&w->rng, NSLOT), nm));
}

/* A positive's value (".." has none) must be its attr's own. */
static void check_value(const char *what, udc_ino dir, const char *nm, size_t len,
			const struct udc_attr *a, const unsigned char *v, size_t vlen)
{
	unsigned char want[UDC_VALUE_MAX];
	size_t wlen = len == 2 && !memcmp(nm, "..", 2) ? 0 : value_of(a, want);

	if (vlen != wlen || (wlen && memcmp(v, want, wlen) != 0))   /* a listing's v: NULL when 0 */
		violation("%s(%" PRIu64 ", \"%.*s\") = ino %" PRIu64 " cookie %" PRIu64
			  " with a value of %zu bytes that is not its own (%zu bytes)",
			  what, dir, (int)len, nm, a->ino, a->cookie, vlen, wlen);
}

static void op_lookup(struct worker *w, bool resolve)
{
	char nm[16];
	udc_ino dir = pick_dir(w);
	size_t len = pick_name(w, dir, nm);
	struct udc_attr a = { 0 };
	unsigned char v[UDC_VALUE_MAX];
	size_t vlen = sizeof(v);
	uint64_t v0 = told_now();
	int r = resolve ? udc_resolve_value(cache, dir, nm, len, &w->call, &a, v, &vlen, NULL)
			: udc_lookup_value(cache, dir, nm, len, &a, v, &vlen);
	uint64_t v1 = version_now();

	if (r == (resolve ? 0 : UDC_POSITIVE))
		check_value(resolve ? "resolve" : "lookup", dir, nm, len, &a, v, vlen);

	if (!resolve) {
		if (r == UDC_MISS)
			return;
		r = r == UDC_POSITIVE ? 0 : r == UDC_NEGATIVE ? -ENOENT : r;
	}
	if (r == -ENOMEM)
		return;   /* allowed (and the cache unchanged) */
	check_answer(resolve ? "resolve" : "lookup", dir, nm, len, v0, v1, r, &a, false, 0);
}

static void op_walk(struct worker *w)
{
	char path[64];
	unsigned t = below(&w->rng, NTOP), s = below(&w->rng, NSUB), s2 = below(&w->rng, NSUB);
	unsigned k = below(&w->rng, NSLOT);
	char nm[8];
	int n;

	slot_name(k, nm);
	switch (below(&w->rng, 6)) {
	case 0:
		n = sprintf(path, "/T%u/s%u/%s", t, s, nm);
		break;
	case 1:
		n = sprintf(path, "/T%u/s%u/../s%u/%s", t, s, s2, nm);
		break;
	case 2:
		n = sprintf(path, "T%u/s%u/%s/", t, s, nm);
		break;
	case 3:
		n = sprintf(path, "/T%u/s%u/..//T%u/./s%u", t, s, below(&w->rng, NTOP), s2);
		break;
	case 4:
		n = sprintf(path, "/T%u/s%u/%s/../..", t, s, nm);
		break;
	default:
		n = sprintf(path, "../T%u/s%u/%s", t, s, nm);
		break;
	}
	unsigned flags = below(&w->rng, 2) ? UDC_WALK_FOLLOW : 0;
	udc_ino start = below(&w->rng, 2) ? ROOT : TOP_INO(below(&w->rng, NTOP));
	struct udc_attr a = { 0 };
	uint64_t v0 = told_now();
	int r = udc_walk(cache, start, path, (size_t)n, flags, &w->call, &a);
	uint64_t v1 = version_now();

	if (r == -ENOMEM || r == -EAGAIN)
		return;   /* allowed: out of memory, or renames too frequent to finish */
	check_answer("walk", start, path, (size_t)n, v0, v1, r, &a, true, flags);
}

/* A unique absent name: memory pressure for reclaim. */
static void op_noise(struct worker *w)
{
	char nm[32];
	udc_ino dir = pick_dir(w);
	int n = sprintf(nm, "noise-%u-%" PRIu64, w->id, rng_next(&w->rng) % 100000000);
	int r = udc_resolve(cache, dir, nm, (size_t)n, &w->call, NULL);

	if (r != -ENOENT && r != -ENOMEM)
		violation("resolve(%" PRIu64 ", %s) = %d: no such name exists", dir, nm, r);
}

/* A call that must succeed (the forgetting ones never allocate). */
static void must(int r, const char *what)
{
	if (r != 0)
		violation("%s = %d", what, r);
}

/* Tell the cache (dir, name) is now @a, or forget it if that fails. */
static void tell_add(udc_ino dir, const char *nm, const struct udc_attr *a)
{
	unsigned char v[UDC_VALUE_MAX];
	int r = udc_add_value(cache, dir, nm, strlen(nm), a, v, value_of(a, v),
			      ttl_pick(a->ino * 13 + a->cookie));

	if (r)
		must(udc_invalidate(cache, dir, nm, strlen(nm)), "invalidate after failed add");
}

static void tell_remove(udc_ino dir, const char *nm)
{
	int r = udc_remove(cache, dir, nm, strlen(nm));

	if (r)
		must(udc_invalidate(cache, dir, nm, strlen(nm)), "invalidate after failed remove");
}

/* Mutations: store.lock held for writing. */
static void mut_file(struct worker *w)
{
	int p = (int)below(&w->rng, POOL);
	uint32_t d = store.cur.dir_ino[p];
	unsigned k = below(&w->rng, NSLOT);
	char nm[8];

	if (!d)
		return;
	slot_name(k, nm);
	if (store.cur.slot[p][k]) {   /* unlink */
		store.cur.slot[p][k] = 0;
		store_commit("unlink %u/%s", d, nm);
		tell_remove(d, nm);
		return;
	}
	char target[24];
	if (k >= NFILE) {
		unsigned x = below(&w->rng, NFILE);
		switch (below(&w->rng, 4)) {
		case 0: sprintf(target, "f%u", x); break;
		case 1: sprintf(target, "../s%u/f%u", below(&w->rng, NSUB), x); break;
		case 2: sprintf(target, "/T%u/s%u/f%u", below(&w->rng, NTOP), below(&w->rng, NSUB), x); break;
		default: sprintf(target, "l%u", below(&w->rng, NLINK)); break;
		}
	}
	uint32_t ino = obj_new(k >= NFILE ? OBJ_LINK : OBJ_REG, k >= NFILE ? target : NULL);
	if (!ino)
		return;
	store.cur.slot[p][k] = ino;
	store_commit("create %u/%s = %u", d, nm, ino);
	struct udc_attr a = attr_of(ino);
	tell_add(d, nm, &a);
}

static void mut_rename_file(struct worker *w)
{
	int p = (int)below(&w->rng, POOL), q = (int)below(&w->rng, POOL);
	unsigned k = below(&w->rng, NFILE), l = below(&w->rng, NFILE);
	char on[8], nn[8];

	if (!store.cur.dir_ino[p] || !store.cur.dir_ino[q] || !store.cur.slot[p][k] ||
	    (p == q && k == l))
		return;
	uint32_t ino = store.cur.slot[p][k];
	slot_name(k, on), slot_name(l, nn);
	if (store.cur.slot[q][l] && below(&w->rng, 3) == 0) {   /* RENAME_EXCHANGE */
		store.cur.slot[p][k] = store.cur.slot[q][l];
		store.cur.slot[q][l] = ino;
		store_commit("exchange %u/%s <-> %u/%s", store.cur.dir_ino[p], on,
			     store.cur.dir_ino[q], nn);
		if (udc_exchange(cache, store.cur.dir_ino[p], on, strlen(on), store.cur.dir_ino[q],
				 nn, strlen(nn))) {
			must(udc_invalidate(cache, store.cur.dir_ino[p], on, strlen(on)), "invalidate");
			must(udc_invalidate(cache, store.cur.dir_ino[q], nn, strlen(nn)), "invalidate");
		}
		return;
	}
	store.cur.slot[q][l] = ino;   /* replaces what was there */
	store.cur.slot[p][k] = 0;
	udc_ino moved = below(&w->rng, 2) ? ino : UDC_INO_NONE;
	store_commit("rename %u/%s -> %u/%s (%" PRIu64 ")", store.cur.dir_ino[p], on,
		     store.cur.dir_ino[q], nn, moved);
	int r = udc_rename(cache, store.cur.dir_ino[p], on, strlen(on), store.cur.dir_ino[q], nn,
			   strlen(nn), moved);
	if (r) {
		must(udc_invalidate(cache, store.cur.dir_ino[p], on, strlen(on)), "invalidate");
		must(udc_invalidate(cache, store.cur.dir_ino[q], nn, strlen(nn)), "invalidate");
	}
}

static void mut_rename_dir(struct worker *w)
{
	unsigned t = below(&w->rng, NTOP), s = below(&w->rng, NSUB);
	unsigned t2 = below(&w->rng, NTOP), s2 = below(&w->rng, NSUB);
	char on[8], nn[8];

	uint32_t ino = store.cur.top[t][s];
	if (!ino)
		return;
	sprintf(on, "s%u", s);
	sprintf(nn, "s%u", s2);
	uint32_t other = store.cur.top[t2][s2];
	if (other && other != ino) {   /* RENAME_EXCHANGE of two directories */
		store.cur.top[t2][s2] = ino;
		store.cur.top[t][s] = other;
		store_commit("exchange dirs T%u/%s <-> T%u/%s", t, on, t2, nn);
		if (udc_exchange(cache, TOP_INO(t), on, strlen(on), TOP_INO(t2), nn, strlen(nn))) {
			must(udc_invalidate(cache, TOP_INO(t), on, strlen(on)), "invalidate");
			must(udc_invalidate(cache, TOP_INO(t2), nn, strlen(nn)), "invalidate");
			must(udc_invalidate(cache, ino, "..", 2), "invalidate ..");
			must(udc_invalidate(cache, other, "..", 2), "invalidate ..");
		}
		return;
	}
	if (other)   /* onto itself */
		return;
	store.cur.top[t2][s2] = ino;
	store.cur.top[t][s] = 0;
	udc_ino moved = below(&w->rng, 2) ? ino : UDC_INO_NONE;
	store_commit("rename dir T%u/%s -> T%u/%s (%" PRIu64 ")", t, on, t2, nn, moved);
	int r = udc_rename(cache, TOP_INO(t), on, strlen(on), TOP_INO(t2), nn, strlen(nn), moved);
	if (r) {
		must(udc_invalidate(cache, TOP_INO(t), on, strlen(on)), "invalidate");
		must(udc_invalidate(cache, TOP_INO(t2), nn, strlen(nn)), "invalidate");
		must(udc_invalidate(cache, ino, "..", 2), "invalidate ..");
	}
}

static void mut_rmdir_mkdir(struct worker *w)
{
	unsigned t = below(&w->rng, NTOP), s = below(&w->rng, NSUB);
	char nm[8];

	sprintf(nm, "s%u", s);
	uint32_t ino = store.cur.top[t][s];
	if (ino) {   /* empty it (each unlink told), then remove it */
		int p = pool_of(&store.cur, ino);
		char fn[8];
		for (unsigned k = 0; k < NSLOT; k++) {
			if (!store.cur.slot[p][k])
				continue;
			store.cur.slot[p][k] = 0;
			store_commit("unlink %u/%s (rmdir)", ino, slot_name(k, fn));
			tell_remove(ino, fn);
		}
		store.cur.top[t][s] = 0;
		store.cur.dir_ino[p] = 0;
		udc_ino which = below(&w->rng, 2) ? ino : UDC_INO_NONE;
		store_commit("rmdir T%u/%s = %u (%" PRIu64 ")", t, nm, ino, which);
		int r = udc_rmdir(cache, TOP_INO(t), nm, strlen(nm), which);
		if (r) {
			must(udc_invalidate(cache, TOP_INO(t), nm, strlen(nm)), "invalidate");
			must(udc_invalidate_dir(cache, ino), "invalidate_dir");
		}
		return;
	}
	int p;   /* a free pool slot */
	for (p = 0; p < POOL && store.cur.dir_ino[p]; p++)
		;
	if (p == POOL)
		return;
	ino = obj_new(OBJ_DIR, NULL);
	if (!ino)
		return;
	memset(store.cur.slot[p], 0, sizeof(store.cur.slot[p]));
	store.cur.dir_ino[p] = ino;
	store.cur.top[t][s] = ino;
	store_commit("mkdir T%u/%s = %u", t, nm, ino);
	struct udc_attr a = attr_of(ino);
	tell_add(TOP_INO(t), nm, &a);
}

/* The fill protocol, under the write lock: the listing is exact. */
static void mut_fill(struct worker *w)
{
	int p = (int)below(&w->rng, POOL);
	uint32_t d = store.cur.dir_ino[p];
	struct udc_fill f;
	char nm[8];

	if (!d)
		return;
	if (udc_dir_fill_begin(cache, d, &f))
		return;
	for (unsigned k = 0; k < NSLOT; k++) {
		if (!store.cur.slot[p][k])
			continue;
		struct udc_attr a = attr_of(store.cur.slot[p][k]);
		tell_add(d, slot_name(k, nm), &a);
	}
	int r = udc_dir_complete(cache, d, &f);
	if (r == 0)
		atomic_fetch_add(&fills_ok, 1);
	else if (r == -ESTALE)
		atomic_fetch_add(&fills_stale, 1);
	else
		violation("udc_dir_complete = %d", r);
}

static void op_mutate(struct worker *w)
{
	pthread_rwlock_wrlock(&store.lock);
	switch (below(&w->rng, 16)) {
	case 0 ... 6: mut_file(w); break;
	case 7 ... 9: mut_rename_file(w); break;
	case 10 ... 11: mut_rename_dir(w); break;
	case 12: mut_rmdir_mkdir(w); break;
	default: mut_fill(w); break;
	}
	/* release: a check that reads told (acquire) sees the cache told */
	atomic_store_explicit(&store.told, atomic_load_explicit(&store.version, memory_order_relaxed),
			      memory_order_release);
	pthread_rwlock_unlock(&store.lock);
}

/* What a listing gave. */
struct listing {
	unsigned n;
	unsigned piece;                    /* stop after this many names a call; 0: never */
	uint64_t cookie;                   /* the last name's */
	char name[4 * NSLOT][8];
	struct udc_attr attr[4 * NSLOT];
	udc_ino dir;
};

static int listing_note(void *arg, const struct udc_dirent *ent)
{
	struct listing *l = arg;

	if (l->n == 4 * NSLOT || ent->len >= sizeof(l->name[0]))
		violation("udc_readdir(%" PRIu64 ") gave more names than a directory holds, or a "
			  "name no directory holds", l->dir);
	memcpy(l->name[l->n], ent->name, ent->len);
	l->name[l->n][ent->len] = 0;
	l->attr[l->n] = ent->attr;
	check_value("readdir", l->dir, ent->name, ent->len, &ent->attr, ent->value, ent->value_len);
	l->n++;
	l->cookie = ent->cookie;
	return l->piece && l->n % l->piece == 0;
}

/*
 * A listing of a movable directory, when the cache gives one, read whole
 * or in pieces of 1-5 names resumed by cookie (it is readdir(3)'s, not a
 * snapshot: the cache copies it in batches, and the pieces race the
 * mutators and the other readers' cursors): each name given was the
 * store's, with that answer, at a version in [v0, v1]; no name is given
 * twice; a name the store held with one answer over the whole window is
 * given.
 */
static void op_listing(struct worker *w)
{
	struct listing l = { .piece = below(&w->rng, 6) };
	int r;

	pthread_rwlock_rdlock(&store.lock);
	l.dir = store.cur.dir_ino[below(&w->rng, POOL)];
	pthread_rwlock_unlock(&store.lock);
	if (!l.dir)
		return;
	uint64_t v0 = told_now();
	do
		r = udc_readdir(cache, l.dir, l.cookie, listing_note, &l);
	while (r == 1);
	uint64_t v1 = version_now();
	if (r == -ENODATA) {
		atomic_fetch_add(&listings_refused, 1);
		return;
	}
	if (r)
		violation("udc_readdir(%" PRIu64 ") = %d", l.dir, r);
	atomic_fetch_add(&listings_ok, 1);
	pthread_rwlock_rdlock(&store.lock);
	if (!window_kept(v0)) {
		pthread_rwlock_unlock(&store.lock);
		atomic_fetch_add(&unchecked, 1);
		return;
	}
	const char *bad = NULL;
	unsigned at = 0;
	for (unsigned i = 0; i < l.n && !bad; i++) {
		bool was = false;
		for (unsigned j = 0; j < i; j++)
			if (!strcmp(l.name[i], l.name[j]))
				bad = "a name given twice";
		for (uint64_t v = v0; v <= v1 && !was; v++) {
			struct udc_attr a;
			was = snap_lookup(&store.ring[v % RING], l.dir, l.name[i], strlen(l.name[i]),
					  &a) == 0 && attr_same(&a, &l.attr[i]);
		}
		if (!bad && !was)
			bad = "a name the store did not hold so";
		at = i;
	}
	char nm[8];
	for (unsigned k = 0; k < NSLOT && !bad; k++) {
		struct udc_attr first, a;
		slot_name(k, nm);
		bool held = snap_lookup(&store.ring[v0 % RING], l.dir, nm, strlen(nm), &first) == 0;
		for (uint64_t v = v0 + 1; v <= v1 && held; v++)
			held = snap_lookup(&store.ring[v % RING], l.dir, nm, strlen(nm), &a) == 0 &&
			       attr_same(&a, &first);
		bool given = false;
		for (unsigned i = 0; i < l.n; i++)
			given = given || !strcmp(l.name[i], nm);
		if (held && !given) {
			bad = "a name the store held throughout not given";
			at = k;
		}
	}
	if (bad)
		history(l.dir, l.name[at], strlen(l.name[at]));
	pthread_rwlock_unlock(&store.lock);
	atomic_fetch_add(&checks, 1);
	if (bad)
		violation("udc_readdir(%" PRIu64 "), versions %" PRIu64 "..%" PRIu64 ", %u names: %s",
			  l.dir, v0, v1, l.n, bad);
}

/* Cache-only operations: never change an answer's correctness. */
static void op_forget(struct worker *w)
{
	char nm[16];
	udc_ino dir = pick_dir(w);

	switch (below(&w->rng, 8)) {
	case 0:
		must(udc_invalidate_dir(cache, dir), "invalidate_dir");
		break;
	case 2: {   /* every name of an object the store holds */
		pthread_rwlock_rdlock(&store.lock);
		udc_ino ino = store.cur.slot[below(&w->rng, POOL)][below(&w->rng, NSLOT)];
		pthread_rwlock_unlock(&store.lock);
		int r = ino ? udc_forget_ino(cache, ino) : 0;
		if (r && r != -EAGAIN)
			violation("udc_forget_ino(%" PRIu64 ") = %d", ino, r);
		atomic_fetch_add(r ? &forgets_again : &forgets_ok, 1);
		break;
	}
	case 1:
		udc_shrink(cache, 64 << 10);
		break;
	default: {
		size_t len = pick_name(w, dir, nm);
		must(udc_invalidate(cache, dir, nm, len), "invalidate");
	}
	}
}

static void *worker_main(void *arg)
{
	struct worker *w = arg;

	while (!atomic_load_explicit(&stop, memory_order_relaxed)) {
		unsigned k = below(&w->rng, 100);
		if (k < 25)
			op_lookup(w, false);
		else if (k < 50)
			op_lookup(w, true);
		else if (k < 64)
			op_walk(w);
		else if (k < 68)
			op_listing(w);
		else if (k < 80)
			op_noise(w);
		else if (k < 94)
			op_mutate(w);
		else
			op_forget(w);
		atomic_fetch_add_explicit(&ops_done, 1, memory_order_relaxed);
	}
	return NULL;
}

/* ------------------------------------------------------------------ */

static void store_init(void)
{
	pthread_rwlockattr_t ra;

	/* writers first: with many readers, mutations would starve */
	pthread_rwlockattr_init(&ra);
	pthread_rwlockattr_setkind_np(&ra, PTHREAD_RWLOCK_PREFER_WRITER_NONRECURSIVE_NP);
	pthread_rwlock_init(&store.lock, &ra);
	pthread_rwlockattr_destroy(&ra);
	store.obj = calloc(MAX_OBJ, sizeof(*store.obj));
	if (!store.obj) {
		perror("calloc");
		exit(2);
	}
	for (int i = 0; i < NTOP; i++)
		store.obj[TOP_INO(i)].type = OBJ_DIR;
	store.obj[ROOT].type = OBJ_DIR;
	store.next_ino = 100;
	for (int p = 0; p < POOL && p < NTOP * NSUB; p++) {   /* every top dir half full */
		if ((p % NSUB) >= NSUB / 2)
			continue;
		uint32_t ino = obj_new(OBJ_DIR, NULL);
		store.cur.dir_ino[p] = ino;
		store.cur.top[p / NSUB][p % NSUB] = ino;
	}
	store.ring[0] = store.cur;
}

int diffstress_run(const struct diffstress_options *o)
{
	unsigned threads = o->threads;
	double seconds = o->seconds;
	size_t memory = o->memory;
	uint32_t flags = o->flags;

	seed = o->seed;
	backend_delay_us = o->delay_us;
	if (threads == 0 || threads > 1024 || seconds <= 0 || memory == 0) {
		fprintf(stderr, "udc-diffstress: bad options (threads 1..1024, seconds > 0)\n");
		return 2;
	}
	printf("udc-diffstress: seed %" PRIu64 " (replay with --seed %" PRIu64 "), %u threads, "
	       "%.1f s, memory %zu, flags %#x\n",
	       seed, seed, threads, seconds, memory, flags);
	fflush(stdout);

	store_init();
	struct udc_config cfg = UDC_CONFIG_INIT;
	cfg.root = ROOT;
	cfg.backend = &backend;
	cfg.memory_limit = memory;
	cfg.flags = flags;
	cfg.positive_ttl_ms = 2000;   /* the default of the answers told with 0 */
	cfg.negative_ttl_ms = 300;
	cache = udc_create(&cfg);
	if (!cache) {
		perror("udc_create");
		return 2;
	}
	struct worker *ws = calloc(threads, sizeof(*ws));
	if (!ws)
		return 2;
	for (unsigned i = 0; i < threads; i++) {
		ws[i].id = i;
		rng_init(&ws[i].rng, seed + i);
		ws[i].call = (struct udc_call){ .ctx = &ws[i].rng, .client = i % 4 };
		if (pthread_create(&ws[i].t, NULL, worker_main, &ws[i])) {
			perror("pthread_create");
			return 2;
		}
	}
	struct timespec ts = { .tv_sec = (time_t)seconds,
			       .tv_nsec = (long)((seconds - (double)(time_t)seconds) * 1e9) };
	while (nanosleep(&ts, &ts) && errno == EINTR)
		;
	atomic_store(&stop, true);
	for (unsigned i = 0; i < threads; i++)
		pthread_join(ws[i].t, NULL);

	struct udc_stats st = { .size = sizeof(st) };
	udc_stats_get(cache, &st);
	unsigned long rss_pages = 0, vm_pages;
	FILE *statm = fopen("/proc/self/statm", "r");
	if (statm) {
		if (fscanf(statm, "%lu %lu", &vm_pages, &rss_pages) != 2)
			rss_pages = 0;
		fclose(statm);
	}
	printf("udc-diffstress: %lu ops, %lu answers checked (%lu windows too long to check), "
	       "%" PRIu64 " versions, fills %lu complete / %lu stale, listings %lu / refused %lu, "
	       "forgets %lu / refused %lu, evictions %" PRIu64
	       ", stale answers %" PRIu64 ", walk retries %" PRIu64 ", bytes_used %" PRIu64
	       " of %" PRIu64 ", process RSS %" PRIu64 "\n",
	       (unsigned long)atomic_load(&ops_done), (unsigned long)atomic_load(&checks),
	       (unsigned long)atomic_load(&unchecked), atomic_load(&store.version),
	       (unsigned long)atomic_load(&fills_ok), (unsigned long)atomic_load(&fills_stale),
	       (unsigned long)atomic_load(&listings_ok), (unsigned long)atomic_load(&listings_refused),
	       (unsigned long)atomic_load(&forgets_ok), (unsigned long)atomic_load(&forgets_again),
	       st.evictions, st.stale_answers, st.walk_retries, st.bytes_used, st.bytes_limit,
	       (uint64_t)rss_pages * (uint64_t)sysconf(_SC_PAGESIZE));
	udc_destroy(cache);
	free(ws);
	free(store.obj);
	unsigned long v = (unsigned long)atomic_load(&violations);
	if (v) {
		printf("udc-diffstress: FAILED: %lu violations (seed %" PRIu64 ")\n", v, seed);
		return 1;
	}
	if (atomic_load(&checks) == 0) {
		printf("udc-diffstress: FAILED: no answer was checked\n");
		return 1;
	}
	printf("udc-diffstress: passed\n");
	return 0;
}

#ifndef DIFFSTRESS_NO_MAIN
static void usage(void)
{
	fprintf(stderr,
		"usage: udc-diffstress [--threads N] [--seconds S] [--memory BYTES[K|M]] [--seed N]\n"
		"                      [--keep-unlinked] [--no-reclaim-thread] [--delay-us N]\n"
		"Many threads use one cache against a versioned store; every answer must be\n"
		"the store's at some moment of its call.  Exit 0: no violation; 1: some.\n"
		"The seed is also taken from UDC_TEST_SEED.  udc-stress --workload diff runs\n"
		"the same with udc-stress's options.\n");
	exit(2);
}

/* BYTES with an optional K or M suffix ("1M": until issue 17 read as 1 byte,
 * a limit the library then took and ctest's diffstress-keep-unlinked ran at). */
static size_t parse_bytes(const char *v)
{
	char *end;
	unsigned long long n = strtoull(v, &end, 0);

	if (end == v)
		usage();
	if (*end == 'K' || *end == 'k')
		n <<= 10, end++;
	else if (*end == 'M' || *end == 'm')
		n <<= 20, end++;
	if (*end != '\0')
		usage();
	return (size_t)n;
}

int main(int argc, char **argv)
{
	struct diffstress_options o = diffstress_defaults;

	if (getenv("UDC_TEST_SEED"))
		o.seed = strtoull(getenv("UDC_TEST_SEED"), NULL, 0);
	for (int i = 1; i < argc; i++) {
		const char *a = argv[i], *v = i + 1 < argc ? argv[i + 1] : NULL;
		if (!strcmp(a, "--keep-unlinked")) {
			o.flags |= UDC_CFG_KEEP_UNLINKED;
			continue;
		}
		if (!strcmp(a, "--no-reclaim-thread")) {
			o.flags |= UDC_CFG_NO_RECLAIM_THREAD;
			continue;
		}
		if (!v)
			usage();
		i++;
		if (!strcmp(a, "--threads"))
			o.threads = (unsigned)strtoul(v, NULL, 0);
		else if (!strcmp(a, "--seconds"))
			o.seconds = strtod(v, NULL);
		else if (!strcmp(a, "--memory"))
			o.memory = parse_bytes(v);
		else if (!strcmp(a, "--seed"))
			o.seed = strtoull(v, NULL, 0);
		else if (!strcmp(a, "--delay-us"))
			o.delay_us = (unsigned)strtoul(v, NULL, 0);
		else
			usage();
	}
	if (!o.seed)
		o.seed = (uint64_t)time(NULL) ^ ((uint64_t)getpid() << 32);
	return diffstress_run(&o);
}
#endif
