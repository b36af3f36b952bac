/* SPDX-License-Identifier: MIT */
/*
 * tests/fuzz/fuzz_api.c - libFuzzer harness: bytes -> udcache API calls,
 * every answer checked against a reference model of the store.
 *
 * An input is a config byte then a sequence of ops (see enum op below and
 * tests/fuzz/README.md).  Each input gets a fresh cache (no reclaim
 * thread, fixed hash key, no negative ageing: one input always runs the
 * same way) over a fuzzed backend that answers from the model
 * (fuzz_model.c).  The model is a proper tree: directories 1..NDIRS (1 is
 * the root) are each named at most once; files (100..107) and symlinks
 * (200..207, targets per ino) may have many names.  Every mutation the
 * harness makes to the model is told to the cache at once, in this one
 * thread, so every definite answer of the cache must equal the model's:
 *
 *   - a positive answer equals the model's attr, and its value is the
 *     attr's own (value_of: every add and the backend give one; ".."
 *     none) (a directory's own attr,
 *     from "..", "/", "." or a walk's start, may carry cookie 0: the
 *     cache knows a directory's cookie only once told);
 *   - a negative answer means the model has no such name;
 *   - a walk equals the reference walker's resolution of the same path
 *     (ref_walk, which follows engine/walk.c's documented rules);
 *   - bad arguments give the documented -errno and change nothing;
 *   - a misbehaving backend (codes outside -4095..0, invalid attrs, a
 *     readlink with a huge length, a NUL or a huge negative) gives -EIO,
 *     a backend errno is passed through, and nothing is cached for the
 *     name;
 *   - a backend that mutates the name it is asked for (the store changed
 *     while it was read) or resolves it again (-EDEADLK) leaves the cache
 *     consistent with the model afterwards;
 *   - udc_dir_complete() returning 0 after every name was told means
 *     every name of the directory is positive in the cache right then;
 *   - a listing (udc_readdir, checked after every completion and every
 *     check op) holds exactly the model's names of the directory, each
 *     once with its answer and value, and read in pieces gives the same;
 *   - udc_forget_ino (with the stats op) only turns answers into misses;
 *   - UDC_MISS is always allowed, and so is -ESTALE from a fill.
 *
 * UDC_DEBUG=3 makes udc_destroy() run the engine's validators at the end
 * of each input.  A violation prints what was expected on stderr and
 * aborts.  UDC_FUZZ_TRACE=1 in the environment prints every op.
 *
 * This file owns the driver: the config byte, the ops and their checks,
 * udc_walk's among them.  The rest of the harness (fuzz.h lists its
 * files): the model store, name rules and reference walker (the oracle,
 * independent of the library's code), input decoding, the backend and
 * the checks of single answers.
 */
#include <errno.h>
#include <poll.h>
#include <sched.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include "fuzz.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);
int LLVMFuzzerInitialize(int *argc, char ***argv);

/*
 * Speed: liburcu 0.13's call_rcu thread sleeps poll(NULL, 0, 10) after
 * each wake-up to batch callbacks, so every grace-period wait of the cache
 * (udc_destroy makes about five, udc_shrink and throttled mutations more)
 * costs 10 ms, and an input at least 50 ms.  This poll() (it takes the
 * place of the sanitizer's interceptor, a weak symbol, and of libc's for
 * liburcu) yields instead for that one call: the same callbacks run in the
 * same order, only sooner.  Every other poll is the real one.
 */
int poll(struct pollfd *fds, nfds_t nfds, int timeout)
{
	if (!fds && nfds == 0 && timeout > 0) {
		sched_yield();
		return 0;
	}
	struct timespec ts, *tp = NULL;
	if (timeout >= 0) {
		ts.tv_sec = timeout / 1000;
		ts.tv_nsec = (long)(timeout % 1000) * 1000000L;
		tp = &ts;
	}
	return (int)syscall(SYS_ppoll, fds, nfds, tp, NULL, (size_t)8);
}

udc_cache *C;
static struct udc_backend backend;

/* ------------------------------------------------------------------ */
/* Walks                                                               */

static char pathbuf[UDC_PATH_MAX + 300];

static void op_walk(void)
{
	udc_ino start = get_ino();
	size_t len = get_path(pathbuf, sizeof(pathbuf));
	uint8_t fl = u8();
	unsigned flags = fl & 1 ? UDC_WALK_FOLLOW : 0;
	bool bad_flags = (fl & 0x0e) == 0x0e;
	bool null_out = (fl & 0x30) == 0x30;
	struct udc_attr a, want;
	bool lenient = false;

	get_faults(false);
	if (bad_flags)
		flags |= 4;
	tr("walk start %llu flags %#x len %zu\n", (unsigned long long)start, flags, len);
	if (trace)
		show("path", pathbuf, len);
	memset(&a, 0xa5, sizeof(a));
	/* the model first: the backend's faults do not change it */
	int e = bad_flags ? -EINVAL : ref_walk(start, pathbuf, len, flags, &want, &lenient);
	int r = udc_walk(C, start, pathbuf, len, flags, NULL, null_out ? NULL : &a);
	if (trace) {
		struct udc_stats st = { .size = sizeof(st) };
		udc_stats_get(C, &st);
		tr("  -> %s (model %s)%s%s%s, walk_retries %llu\n", rname(r), rname(e),
		   F.lookup_hit ? " lookup fault" : "", F.link_hit ? " readlink fault" : "",
		   F.bump_dir ? " bumped" : "", (unsigned long long)st.walk_retries);
	}
	if (F.lookup_hit || F.link_hit) {
		if (r != F.expect) {
			show("path", pathbuf, len);
			violation("udc_walk with a failing backend returned %s, expected %s "
				  "(lookup fault %d, readlink fault %d)", rname(r), rname(F.expect),
				  F.lookup, F.link);
		}
		check_fault_cached_nothing();
		return;
	}
	if (r == -EAGAIN && !have_backend)
		return;
	if (r != e) {
		show("path", pathbuf, len);
		violation("udc_walk from %llu returned %s, the model says %s",
			  (unsigned long long)start, rname(r), rname(e));
	}
	if (r == 0 && !null_out) {
		bool ok = a.ino == want.ino && a.type == want.type && a.flags == want.flags &&
			  (a.cookie == want.cookie || (lenient && a.cookie == 0));
		if (!ok) {
			show("path", pathbuf, len);
			attr_must_equal(&a, &want, lenient, "udc_walk");
		}
	}
}

/* ------------------------------------------------------------------ */
/* Ops                                                                 */

enum op {
	OP_ADD_FILE, OP_ADD_DIR, OP_ADD_NEG, OP_REMOVE, OP_RENAME, OP_RMDIR, OP_INVALIDATE,
	OP_INVALIDATE_DIR, OP_FILL_BEGIN, OP_FILL_COMPLETE, OP_FILL_ALL, OP_LOOKUP, OP_RESOLVE,
	OP_WALK, OP_SHRINK, OP_SET_LIMIT, OP_STATS, OP_ADD_DOTDOT, OP_BULK, OP_CHECK,
	OP_COUNT
};

static struct {
	bool begun;
	struct udc_fill f;
	uint64_t seq;
} fills[NDIRS + 1];

static struct udc_stats last_stats;

static void op_add_file(void)
{
	udc_ino dir = get_dir();
	struct name n;
	get_name(&n);
	uint8_t kind = u8(), ib = u8(), cb = u8();
	struct udc_attr a = { .ino = FILE0 + ib % NOBJ, .type = UDC_TYPE_REG,
			      .cookie = (uint64_t)cb << 8 | ib };
	bool bad_attr = false;
	const struct udc_attr *ap = &a;

	switch (kind % 8) {
	case 3: a.type = UDC_TYPE_OTHER; break;
	case 4: a.type = UDC_TYPE_UNKNOWN; break;
	case 5:
	case 6: {
		size_t k = ib % NOBJ;
		a.ino = LINK0 + k;
		a.type = UDC_TYPE_SYMLINK;
		M.tlen[k] = get_path(M.target[k], UDC_PATH_MAX);   /* the store's new target */
		break;
	}
	case 7:
		bad_attr = true;
		switch ((kind >> 3) % 5) {
		case 0: ap = NULL; break;
		case 1: a.ino = UDC_INO_NONE; break;
		case 2: a.type = 5; break;
		case 3: a.type = 99; break;
		default: a.flags = 1; break;
		}
		break;
	default: break;
	}
	tr("add dir %llu type %u ino %llu%s\n", (unsigned long long)dir, a.type,
	   (unsigned long long)a.ino, bad_attr ? " (bad attr)" : "");
	int e = call_err(dir, n.s, n.len);
	if (!e && (bad_attr || is_dotdot(n.s, n.len)))
		e = -EINVAL;   /* "..": only a directory attr is a parent */
	if (e) {
		expect_rc(udc_add(C, dir, n.s, n.len, ap), e, "udc_add (bad arguments)");
		return;
	}
	struct ment *x = mfind(dir, n.s, n.len);
	if (x && x->attr.type == UDC_TYPE_DIR)
		return;   /* a file does not replace a directory in this store */
	tell_add(dir, n.s, n.len, &a);
}

static void op_add_dir(void)
{
	udc_ino p = get_dir();
	struct name n;
	get_name(&n);
	udc_ino d = 2 + u8() % (NDIRS - 1);
	struct udc_attr a = { .ino = d, .type = UDC_TYPE_DIR, .cookie = dir_cookie(d) };

	tr("add dir %llu -> dir %llu\n", (unsigned long long)p, (unsigned long long)d);
	int e = call_err(p, n.s, n.len);
	if (e) {
		expect_rc(udc_add(C, p, n.s, n.len, &a), e, "udc_add dir (bad name)");
		return;
	}
	if (is_dotdot(n.s, n.len))
		return;   /* OP_ADD_DOTDOT's business */
	struct ment *x = mfind(p, n.s, n.len);
	if (x && x->attr.type == UDC_TYPE_DIR && x->attr.ino == d) {
		tell_add(p, n.s, n.len, &a);   /* told again */
		return;
	}
	if (M.attached[d] || mancestor(d, p) || (x && x->attr.type == UDC_TYPE_DIR))
		return;
	tell_add(p, n.s, n.len, &a);
}

static void op_add_neg(void)
{
	udc_ino dir = get_dir();
	struct name n;
	get_name(&n);
	uint32_t client = u8() % 5;

	tr("add_negative dir %llu client %u\n", (unsigned long long)dir, client);
	int e = call_err(dir, n.s, n.len);
	if (!e && is_dotdot(n.s, n.len))
		e = -EINVAL;
	if (!e && mfind(dir, n.s, n.len))
		return;   /* it exists */
	expect_rc(udc_add_negative(C, dir, n.s, n.len, client), e, "udc_add_negative");
}

static void op_remove(void)
{
	udc_ino dir = get_dir();
	struct name n;
	get_name(&n);

	tr("remove dir %llu\n", (unsigned long long)dir);
	int e = call_err(dir, n.s, n.len);
	if (!e && is_dotdot(n.s, n.len))
		e = -EINVAL;
	if (e) {
		expect_rc(udc_remove(C, dir, n.s, n.len), e, "udc_remove (bad name)");
		return;
	}
	struct ment *x = mfind(dir, n.s, n.len);
	if (x && x->attr.type == UDC_TYPE_DIR)
		return;   /* that is an rmdir */
	tell_remove(dir, n.s, n.len);
}

/* udc_exchange of two existing names (rename's flag byte, bit 1): each
 * must then hold the other's answer, or be a miss. */
static void op_exchange(udc_ino od, const struct name *on, udc_ino nd, const struct name *nn)
{
	tr("exchange %llu <-> %llu\n", (unsigned long long)od, (unsigned long long)nd);
	struct ment *a = mfind(od, on->s, on->len), *b = mfind(nd, nn->s, nn->len);
	if (!a || !b)
		return;   /* RENAME_EXCHANGE wants both */
	if (a == b) {   /* a name with itself: nothing changes, nothing is told */
		expect_rc(udc_exchange(C, od, on->s, on->len, nd, nn->s, nn->len), 0, "udc_exchange");
		return;
	}
	struct udc_attr sa = a->attr, sb = b->attr;
	if ((sa.type == UDC_TYPE_DIR && mancestor(sa.ino, nd)) ||
	    (sb.type == UDC_TYPE_DIR && mancestor(sb.ino, od)))
		return;   /* a directory into itself */
	bool a_cached = udc_lookup(C, od, on->s, on->len, NULL) == UDC_POSITIVE;
	bool b_cached = udc_lookup(C, nd, nn->s, nn->len, NULL) == UDC_POSITIVE;
	mset(od, on->s, on->len, &sb);
	mset(nd, nn->s, nn->len, &sa);
	expect_rc(udc_exchange(C, od, on->s, on->len, nd, nn->s, nn->len), 0, "udc_exchange");
	if (b_cached && roomy())
		must_be_cached(od, on->s, on->len, &sb, "udc_exchange of a cached name");
	if (a_cached && roomy())
		must_be_cached(nd, nn->s, nn->len, &sa, "udc_exchange of a cached name");
}

static void op_rename(void)
{
	udc_ino od = get_dir(), nd = get_dir();
	struct name on, nn;
	get_name(&on);
	get_name(&nn);
	uint8_t flags = u8();
	bool give = flags & 1;

	if ((flags & 2) && !call_err(nd, nn.s, nn.len) && !call_err(od, on.s, on.len) &&
	    !is_dotdot(nn.s, nn.len) && !is_dotdot(on.s, on.len)) {
		op_exchange(od, &on, nd, &nn);
		return;
	}

	tr("rename %llu -> %llu%s\n", (unsigned long long)od, (unsigned long long)nd,
	   give ? " (moved given)" : "");
	int e = call_err(nd, nn.s, nn.len);
	if (!e)
		e = call_err(od, on.s, on.len);
	if (!e && (is_dotdot(nn.s, nn.len) || is_dotdot(on.s, on.len)))
		e = -EINVAL;
	if (e) {
		expect_rc(udc_rename(C, od, on.s, on.len, nd, nn.s, nn.len, UDC_INO_NONE), e,
			  "udc_rename (bad name)");
		return;
	}
	struct ment *src = mfind(od, on.s, on.len);
	if (!src)
		return;   /* the store has nothing to rename */
	struct udc_attr sa = src->attr;
	bool same = od == nd && on.len == nn.len && memcmp(on.s, nn.s, on.len) == 0;
	if (same) {
		expect_rc(udc_rename(C, od, on.s, on.len, nd, nn.s, nn.len,
				     give ? sa.ino : UDC_INO_NONE), 0, "udc_rename to itself");
		return;
	}
	struct ment *dst = mfind(nd, nn.s, nn.len);
	bool sdir = sa.type == UDC_TYPE_DIR;
	if (sdir && mancestor(sa.ino, nd))
		return;   /* into itself */
	if (dst) {
		bool ddir = dst->attr.type == UDC_TYPE_DIR;
		if (ddir != sdir)
			return;
		if (ddir && !mdir_empty(dst->attr.ino))
			return;   /* ENOTEMPTY */
		if (ddir)
			M.attached[dst->attr.ino] = false;   /* replaced: detached */
	}
	bool was_cached = udc_lookup(C, od, on.s, on.len, NULL) == UDC_POSITIVE;
	if (dst && dst->attr.ino == sa.ino)
		return;   /* two links of one object: rename(2) changes nothing, nothing to tell */
	mdel(od, on.s, on.len);
	mset(nd, nn.s, nn.len, &sa);   /* cannot fail: one entry went */
	int r = udc_rename(C, od, on.s, on.len, nd, nn.s, nn.len, give ? sa.ino : UDC_INO_NONE);
	expect_rc(r, 0, "udc_rename");
	if (was_cached && roomy())   /* "positive with the old attr when the old name was cached" */
		must_be_cached(nd, nn.s, nn.len, &sa, "udc_rename of a cached name");
}

static void op_rmdir(void)
{
	udc_ino p = get_dir();
	struct name n;
	get_name(&n);
	bool give = u8() & 1;

	tr("rmdir in %llu%s\n", (unsigned long long)p, give ? " (ino given)" : "");
	int e = call_err(p, n.s, n.len);
	if (!e && is_dotdot(n.s, n.len))
		e = -EINVAL;
	if (e) {
		expect_rc(udc_rmdir(C, p, n.s, n.len, UDC_INO_NONE), e, "udc_rmdir (bad name)");
		return;
	}
	struct ment *x = mfind(p, n.s, n.len);
	if (!x || x->attr.type != UDC_TYPE_DIR)
		return;
	udc_ino d = x->attr.ino;
	/* without the ino the cache may not know which directory went: only
	 * an empty one may be removed that way (its names need no forgetting) */
	if (!give && !mdir_empty(d))
		give = true;
	mdel(p, n.s, n.len);
	mclear_dir(d);
	M.attached[d] = false;
	expect_rc(udc_rmdir(C, p, n.s, n.len, give ? d : UDC_INO_NONE), 0, "udc_rmdir");
	if (give)
		dir_forgotten(d, "udc_rmdir");
}

static void op_invalidate(void)
{
	udc_ino dir = get_ino();
	struct name n;
	get_name(&n);

	tr("invalidate %llu\n", (unsigned long long)dir);
	int e = call_err(dir, n.s, n.len);
	/* self-test 3: an invalidation not passed on */
	int r = FUZZ_PLANT == 3 && !e ? 0 : udc_invalidate(C, dir, n.s, n.len);
	expect_rc(r, e, "udc_invalidate");
	if (!e)
		must_be_forgotten(dir, n.s, n.len, "udc_invalidate");
}

static void op_invalidate_dir(void)
{
	udc_ino dir = get_ino();

	tr("invalidate_dir %llu\n", (unsigned long long)dir);
	expect_rc(udc_invalidate_dir(C, dir), dir == UDC_INO_NONE ? -EINVAL : 0,
		  "udc_invalidate_dir");
	if (dir != UDC_INO_NONE)
		dir_forgotten(dir, "udc_invalidate_dir");
}

static void op_fill_begin(void)
{
	uint8_t b = u8();
	udc_ino d = (udc_ino)(b % NDIRS) + 1;

	tr("fill_begin %llu\n", (unsigned long long)d);
	if (b >= 0xf0) {
		expect_rc(udc_dir_fill_begin(C, d, NULL), -EINVAL, "udc_dir_fill_begin(NULL)");
		struct udc_fill f;
		expect_rc(udc_dir_fill_begin(C, UDC_INO_NONE, &f), -EINVAL,
			  "udc_dir_fill_begin(NONE)");
		return;
	}
	int r = udc_dir_fill_begin(C, d, &fills[d].f);
	expect_rc(r, 0, "udc_dir_fill_begin");
	fills[d].begun = true;
	fills[d].seq = seq;
}

/* Tell every name of d not told since the fill began (by udc_add, or by
 * udc_resolve as a READDIRPLUS handler); false if one could not be. */
static bool fill_tell(udc_ino d, uint64_t since, bool by_resolve)
{
	for (int i = 0; i < M.n; i++) {
		struct ment *x = &M.e[i];
		if (x->dir != d || x->told > since)
			continue;
		if (!by_resolve) {
			unsigned char v[UDC_VALUE_MAX];
			expect_rc(udc_add_value(C, d, x->name, x->len, &x->attr, v,
						value_of(&x->attr, v), 0), 0, "udc_add (fill)");
			x->told = seq;
			continue;
		}
		struct udc_attr a;
		int r = udc_resolve(C, d, x->name, x->len, NULL, &a);
		if (r == -EAGAIN && !have_backend)
			return false;   /* not told: a later fill must tell it */
		expect_rc(r, 0, "udc_resolve (fill)");
		attr_must_equal(&a, &x->attr, false, "udc_resolve (fill)");
		x->told = seq;
	}
	return true;
}

/* After udc_dir_complete() == 0: every name of d is positive. */
static void check_complete(udc_ino d)
{
	for (int i = 0; i < M.n; i++) {
		struct ment *x = &M.e[i];
		if (x->dir != d || (x->attr.ino >= FILE0 && x->attr.ino < FILE0 + NOBJ &&
				    forgot[x->attr.ino - FILE0]))
			continue;   /* a forgotten object's names are misses */
		struct udc_attr a;
		int r = udc_lookup(C, d, x->name, x->len, &a);
		if (r != UDC_POSITIVE) {
			show("name", x->name, x->len);
			violation("dir %llu completed, but udc_lookup of a name it holds is %d",
				  (unsigned long long)d, r);
		}
		attr_must_equal(&a, &x->attr, false, "udc_lookup after udc_dir_complete");
	}
	for (size_t k = 0; k < 6; k++) {   /* and every other name is negative */
		const char *nm = valid_names[k].s;
		if (mfind(d, nm, 1))
			continue;
		int r = udc_lookup(C, d, nm, 1, NULL);
		if (r != UDC_NEGATIVE)
			violation("dir %llu completed, but udc_lookup of \"%s\", absent, is %d",
				  (unsigned long long)d, nm, r);
	}
}

/* What udc_readdir gave (check_listing). */
struct listing {
	unsigned n, stop_every;
	uint64_t cookie[MAXENT];
	const struct ment *ent[MAXENT];
	udc_ino dir;
};

static int listing_note(void *arg, const struct udc_dirent *de)
{
	struct listing *l = arg;
	const struct ment *x = mfind(l->dir, de->name, de->len);
	unsigned char want[UDC_VALUE_MAX];

	if (!x) {
		show("name", de->name, de->len);
		violation("udc_readdir of dir %llu listed a name the store does not hold",
			  (unsigned long long)l->dir);
	}
	attr_must_equal(&de->attr, &x->attr, false, "udc_readdir");
	size_t wl = value_of(&x->attr, want);
	if (de->value_len && (de->value_len != wl || memcmp(de->value, want, wl) != 0))
		violation("udc_readdir of dir %llu: a wrong value", (unsigned long long)l->dir);
	for (unsigned i = 0; i < l->n; i++) {
		if (l->ent[i] == x)
			violation("udc_readdir of dir %llu listed a name twice", (unsigned long long)l->dir);
		if (l->cookie[i] >= de->cookie)
			violation("udc_readdir of dir %llu: cookies out of order", (unsigned long long)l->dir);
	}
	if (l->n == MAXENT)
		violation("udc_readdir listed more names than the store holds");
	l->ent[l->n] = x;
	l->cookie[l->n++] = de->cookie;
	return l->stop_every && l->n % l->stop_every == 0;
}

/*
 * If the cache lists d, it lists exactly the store's names of d, each
 * once, with its answer and value; and read in pieces (resumed by
 * cookie, nothing changing between), the same names in the same order.
 */
static void check_listing(udc_ino d)
{
	static struct listing whole, pieces;
	int r;

	whole = (struct listing){ .dir = d };
	r = udc_readdir(C, d, 0, listing_note, &whole);
	if (r == -ENODATA)
		return;
	if (r != 0)
		violation("udc_readdir of dir %llu returned %s", (unsigned long long)d, rname(r));
	unsigned held = 0;
	for (int i = 0; i < M.n; i++)
		held += M.e[i].dir == d;
	if (whole.n != held)
		violation("udc_readdir of dir %llu listed %u names, the store holds %u",
			  (unsigned long long)d, whole.n, held);
	pieces = (struct listing){ .dir = d, .stop_every = 1 + (unsigned)(seq % 3) };
	uint64_t cookie = 0;
	do {
		unsigned before = pieces.n;
		r = udc_readdir(C, d, cookie, listing_note, &pieces);
		if (r < 0)
			violation("udc_readdir of dir %llu, resumed, returned %s", (unsigned long long)d,
				  rname(r));
		if (pieces.n > before)
			cookie = pieces.cookie[pieces.n - 1];
	} while (r == 1);
	if (pieces.n != whole.n || memcmp(pieces.ent, whole.ent, whole.n * sizeof(whole.ent[0])))
		violation("udc_readdir of dir %llu read in pieces gave another listing",
			  (unsigned long long)d);
}

/* strict: nothing can have been lost (see op_fill_all): -ESTALE is wrong */
static void fill_finish(udc_ino d, uint64_t since, const struct udc_fill *f, bool by_resolve,
			bool strict)
{
	seq++;   /* names told from here on count as told since the fill began */
	if (!fill_tell(d, since, by_resolve))
		return;
	strict = strict && roomy();
	int r = udc_dir_complete(C, d, f);
	tr("  complete %llu: %s%s\n", (unsigned long long)d, rname(r), strict ? " (strict)" : "");
	if (r == 0) {
		check_complete(d);
		check_listing(d);
	} else if (r != -ESTALE || strict)
		violation("udc_dir_complete of dir %llu returned %s%s", (unsigned long long)d,
			  rname(r), strict ? " after a fill that lost nothing" : "");
}

static void op_fill_complete(void)
{
	udc_ino d = get_dir();
	uint8_t mode = u8();

	tr("fill_complete %llu mode %u\n", (unsigned long long)d, mode % 4);
	if (!fills[d].begun)
		return;
	switch (mode % 4) {
	case 2: {   /* a token of another directory */
		udc_ino o = d % NDIRS + 1;
		expect_rc(udc_dir_complete(C, o, &fills[d].f), -EINVAL,
			  "udc_dir_complete with another directory's fill");
		return;
	}
	case 3:
		expect_rc(udc_dir_complete(C, d, NULL), -EINVAL, "udc_dir_complete(NULL)");
		expect_rc(udc_dir_complete(C, UDC_INO_NONE, &fills[d].f), -EINVAL,
			  "udc_dir_complete(NONE)");
		return;
	default:
		fill_finish(d, fills[d].seq, &fills[d].f, mode & 1, false);
	}
}

static void op_fill_all(void)
{
	udc_ino d = get_dir();
	bool by_resolve = u8() & 1;
	struct udc_fill f;

	tr("fill_all %llu%s\n", (unsigned long long)d, by_resolve ? " (resolve)" : "");
	/*
	 * Begin, tell every name, complete, nothing else in between: with room
	 * to spare (no eviction) nothing of d is lost, and a directory that
	 * holds a name is not idle, so its object is not freed: none of the
	 * reasons udcache.h gives for -ESTALE can apply.  (An empty one may
	 * be freed by the reaper in between: -ESTALE is allowed then.)
	 */
	bool strict = !mdir_empty(d) && roomy();
	expect_rc(udc_dir_fill_begin(C, d, &f), 0, "udc_dir_fill_begin");
	uint64_t since = seq;
	fill_finish(d, since, &f, by_resolve, strict && have_backend);
}

static void op_lookup(void)
{
	udc_ino dir = get_ino();
	struct name n;
	get_name(&n);

	tr("lookup %llu\n", (unsigned long long)dir);
	do_lookup(dir, n.s, n.len, "udc_lookup");
}

static void op_resolve(void)
{
	udc_ino dir = get_ino();
	struct name n;
	get_name(&n);

	get_faults(true);
	tr("resolve %llu (lookup fault %d, readlink fault %d)\n", (unsigned long long)dir,
	   F.lookup, F.link);
	if (trace)
		show("name", n.s, n.len);
	int r = do_resolve(dir, n.s, n.len, "udc_resolve");
	tr("  -> %s%s\n", rname(r), F.lookup_hit ? " (lookup fault)" : "");
	if (r == 0 && !F.lookup_hit) {
		struct ment *x = mfind(dir, n.s, n.len);
		if (x)
			x->told = seq;   /* a fill may count it as told */
	}
}

static void op_shrink(void)
{
	static const size_t amounts[] = { 0, 1, 4096, 1 << 20, SIZE_MAX };
	size_t b = amounts[u8() % 5];

	tr("shrink %zu\n", b);
	(void)udc_shrink(C, b);
	if (b != SIZE_MAX)
		return;
	/* "all if SIZE_MAX": no thread of ours or the cache's runs (the
	 * cache has no reclaim thread), so nothing may stay, hit or not */
	struct udc_stats st = { .size = sizeof(st) };
	udc_stats_get(C, &st);
	if (st.nr_positive || st.nr_negative || st.nr_dirs)
		violation("udc_shrink(SIZE_MAX) left %llu positives, %llu negatives, %llu directories",
			  (unsigned long long)st.nr_positive, (unsigned long long)st.nr_negative,
			  (unsigned long long)st.nr_dirs);
}

static const size_t limits[MAXLIMITS] = { 0, 64 << 10, 128 << 10, 256 << 10, 512 << 10,
					  1 << 20, 4 << 20, 16 << 20 };

static void op_set_limit(void)
{
	size_t l = limits[u8() % MAXLIMITS];

	tr("set_memory_limit %zu\n", l);
	struct udc_stats st = { .size = sizeof(st) };

	udc_stats_get(C, &st);
	int r = udc_set_memory_limit(C, l);
	if (r == 0 && l && l < st.bytes_min)
		violation("udc_set_memory_limit accepted %zu, below bytes_min %llu", l,
			  (unsigned long long)st.bytes_min);
	else if (r == 0)
		cur_limit = l ? l : (size_t)64 << 20;
	else if (!(r == -ENOMEM || (r == -EINVAL && l && l < st.bytes_min)))
		violation("udc_set_memory_limit returned %s", rname(r));
}

static void op_stats(void)
{
	uint8_t b = u8() % 4;
	struct udc_stats st;

	memset(&st, 0x5a, sizeof(st));
	st.size = b == 0 ? UDC_STATS_SIZE_V0 : b == 1 ? sizeof(st) : b == 2 ? 8 : sizeof(st) + 8;
	size_t size = st.size;
	if (b == 1) {   /* an idle spell changes no answer */
		udc_thread_offline(C);
		udc_thread_online(C);
		/* nor does forgetting an object: its names miss for a while */
		udc_ino ino = FILE0 + seq % NOBJ;
		int r = udc_forget_ino(C, ino);
		tr("forget ino %llu: %s\n", (unsigned long long)ino, rname(r));
		if (r != 0 && r != -EAGAIN)
			violation("udc_forget_ino returned %s", rname(r));
		if (r == 0)
			forgot[ino - FILE0] = forgot_any = true;
	}
	udc_stats_get(C, &st);
	tr("stats size %zu\n", size);
	if (b >= 2) {   /* a size it does not know: untouched */
		struct udc_stats un;
		memset(&un, 0x5a, sizeof(un));
		un.size = size;
		if (memcmp(&st, &un, sizeof(st)) != 0)
			violation("udc_stats_get wrote a struct of size %zu", size);
		return;
	}
	if (st.size != size)
		violation("udc_stats_get changed size");
	if (b == 0) {
		const unsigned char *p = (const unsigned char *)&st;
		for (size_t i = UDC_STATS_SIZE_V0; i < sizeof(st); i++)
			if (p[i] != 0x5a)
				violation("udc_stats_get wrote past UDC_STATS_SIZE_V0");
	}
	if (st.bytes_limit != cur_limit)
		violation("bytes_limit %llu, set %zu", (unsigned long long)st.bytes_limit, cur_limit);
	if (st.bytes_used > st.bytes_limit + st.bytes_slack)   /* "at every moment" */
		violation("bytes_used %llu past the limit %llu and its slack %llu",
			  (unsigned long long)st.bytes_used, (unsigned long long)st.bytes_limit,
			  (unsigned long long)st.bytes_slack);
	if (st.lookups != st.hits_positive + st.hits_negative + st.misses)
		violation("lookups %llu != hits %llu + %llu + misses %llu",
			  (unsigned long long)st.lookups, (unsigned long long)st.hits_positive,
			  (unsigned long long)st.hits_negative, (unsigned long long)st.misses);
	if (st.lookups < last_stats.lookups || st.misses < last_stats.misses ||
	    st.backend_calls < last_stats.backend_calls || st.evictions < last_stats.evictions)
		violation("a statistics counter went down");
	if (st.backend_calls != backend_calls)
		violation("backend_calls %llu, the backend counted %llu",
			  (unsigned long long)st.backend_calls, (unsigned long long)backend_calls);
	last_stats = st;
}

static void op_add_dotdot(void)
{
	udc_ino d = get_dir();
	uint8_t b = u8();
	struct udc_attr p;

	tr("add \"..\" of %llu\n", (unsigned long long)d);
	if (b & 1) {   /* a parent that is no directory */
		struct udc_attr a = { .ino = FILE0, .type = UDC_TYPE_REG };
		expect_rc(udc_add(C, d, "..", 2, &a), -EINVAL, "udc_add(\"..\", REG)");
		return;
	}
	if (d == ROOT || !mparent(d, &p))
		return;
	expect_rc(udc_add(C, d, "..", 2, &p), 0, "udc_add(\"..\")");
}

static void op_bulk(void)
{
	udc_ino d = get_dir();
	uint8_t mode = u8() % 4;
	unsigned count = 1 + u8();
	char nm[16];

	tr("bulk dir %llu mode %u count %u\n", (unsigned long long)d, mode, count);
	for (unsigned i = 0; i < count; i++) {
		size_t len;
		switch (mode) {
		case 0: {   /* files created */
			len = (size_t)snprintf(nm, sizeof(nm), "b%u", i);
			struct ment *x = mfind(d, nm, len);
			if (x && x->attr.type == UDC_TYPE_DIR)
				break;
			struct udc_attr a = { .ino = FILE0 + i % NOBJ, .type = UDC_TYPE_REG,
					      .cookie = i };
			tell_add(d, nm, len, &a);
			break;
		}
		case 1:   /* misses told as negatives */
			len = (size_t)snprintf(nm, sizeof(nm), "n%u", i);
			if (!mfind(d, nm, len))
				expect_rc(udc_add_negative(C, d, nm, len, i % 3), 0,
					  "udc_add_negative (bulk)");
			break;
		case 2:   /* misses resolved */
			len = (size_t)snprintf(nm, sizeof(nm), "r%u", i);
			do_resolve(d, nm, len, "udc_resolve (bulk)");
			break;
		default:   /* the files resolved */
			len = (size_t)snprintf(nm, sizeof(nm), "b%u", i);
			do_resolve(d, nm, len, "udc_resolve (bulk)");
			break;
		}
	}
}

/* Every name of the model, ".." of every directory, a few absent names. */
static void check_all(void)
{
	for (int i = 0; i < M.n; i++)
		do_lookup(M.e[i].dir, M.e[i].name, M.e[i].len, "udc_lookup (check)");
	for (udc_ino d = 1; d <= NDIRS; d++) {
		do_lookup(d, "..", 2, "udc_lookup .. (check)");
		for (size_t k = 0; k < 6; k++)
			do_lookup(d, valid_names[k].s, 1, "udc_lookup (check)");
		check_listing(d);
	}
}

/* ------------------------------------------------------------------ */

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
	(void)argc;
	(void)argv;
	memset(bigname, 'n', sizeof(bigname));
	const char *t = getenv("UDC_FUZZ_TRACE");
	trace = t && *t && *t != '0';
	return 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	if (!bigname[0])
		LLVMFuzzerInitialize(NULL, NULL);
	in = data;
	in_len = size;
	in_pos = 0;
	op_no = 0;
	seq = 1;
	backend_calls = 0;
	model_reset();
	memset(forgot, 0, sizeof(forgot));
	forgot_any = false;
	faults_clear();
	memset(fills, 0, sizeof(fills));
	memset(&last_stats, 0, sizeof(last_stats));

	/* config: bit 0 KEEP_UNLINKED; bits 1-2 the backend (3: none, 2: no
	 * readlink); bits 3-5 the initial memory limit; bit 6 negatives age
	 * out after 1 ms (else never: ageing depends on the clock) */
	uint8_t cfgb = u8();
	have_backend = ((cfgb >> 1) & 3) != 3;
	have_readlink = ((cfgb >> 1) & 3) < 2;
	backend = (struct udc_backend){ .lookup = be_lookup,
					.lookup_value = be_lookup_value,
					.readlink = have_readlink ? be_readlink : NULL };
	struct udc_config cfg = UDC_CONFIG_INIT;
	cfg.root = ROOT;
	cfg.backend = have_backend ? &backend : NULL;
	cfg.hash_key[0] = 0x0123456789abcdefULL;
	cfg.hash_key[1] = 0xfedcba9876543210ULL;
	cfg.flags = UDC_CFG_NO_RECLAIM_THREAD | (cfgb & 1 ? UDC_CFG_KEEP_UNLINKED : 0);
	cfg.negative_max_age_ms = cfgb & 0x40 ? 1 : UINT32_MAX;
	cfg.memory_limit = limits[(cfgb >> 3) % MAXLIMITS];
	cur_limit = cfg.memory_limit ? cfg.memory_limit : (size_t)64 << 20;
	tr("--- input of %zu bytes: keep_unlinked %d backend %d readlink %d limit %zu\n", size,
	   cfgb & 1, have_backend, have_readlink, cur_limit);
	C = udc_create(&cfg);
	if (!C)
		violation("udc_create failed: %s", strerror(errno));

	while (more() && op_no < 4096) {
		op_no++;
		seq++;
		faults_clear();
		switch (u8() % OP_COUNT) {
		case OP_ADD_FILE: op_add_file(); break;
		case OP_ADD_DIR: op_add_dir(); break;
		case OP_ADD_NEG: op_add_neg(); break;
		case OP_REMOVE: op_remove(); break;
		case OP_RENAME: op_rename(); break;
		case OP_RMDIR: op_rmdir(); break;
		case OP_INVALIDATE: op_invalidate(); break;
		case OP_INVALIDATE_DIR: op_invalidate_dir(); break;
		case OP_FILL_BEGIN: op_fill_begin(); break;
		case OP_FILL_COMPLETE: op_fill_complete(); break;
		case OP_FILL_ALL: op_fill_all(); break;
		case OP_LOOKUP: op_lookup(); break;
		case OP_RESOLVE: op_resolve(); break;
		case OP_WALK: op_walk(); break;
		case OP_SHRINK: op_shrink(); break;
		case OP_SET_LIMIT: op_set_limit(); break;
		case OP_STATS: op_stats(); break;
		case OP_ADD_DOTDOT: op_add_dotdot(); break;
		case OP_BULK: op_bulk(); break;
		default: check_all(); break;
		}
	}
	faults_clear();
	op_no++;
	check_all();
	udc_destroy(C);   /* UDC_DEBUG=3: the validators run here */
	C = NULL;
	return 0;
}
