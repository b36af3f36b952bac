/* SPDX-License-Identifier: MIT */
/*
 * tests/fuzz/fuzz_api.c - libFuzzer harness: bytes -> udcache API calls,
 * every answer checked against a reference model of the store.
 *
 * An input is a config byte then a sequence of ops (see enum op below and
 * tests/fuzz/README.md).  Each input gets a fresh cache (no reclaim
 * thread, fixed hash key, no negative ageing: one input always runs the
 * same way) over a fuzzed backend that answers from the model below.  The
 * model is a proper tree: directories 1..NDIRS (1 is the root) are each
 * named at most once; files (100..107) and symlinks (200..207, targets per
 * ino) may have many names.  Every mutation the harness makes to the model
 * is told to the cache at once, in this one thread, so every definite
 * answer of the cache must equal the model's:
 *
 *   - a positive answer equals the model's attr (a directory's own attr,
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
 *   - UDC_MISS is always allowed, and so is -ESTALE from a fill.
 *
 * UDC_DEBUG=3 makes udc_destroy() run the engine's validators at the end
 * of each input.  A violation prints what was expected on stderr and
 * aborts.  UDC_FUZZ_TRACE=1 in the environment prints every op.
 */
#include <errno.h>
#include <limits.h>
#include <poll.h>
#include <sched.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include "include/udcache.h"

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

/* ------------------------------------------------------------------ */
/* Universe                                                            */

#define ROOT 1
#define NDIRS 8                       /* dir inos 1..8, 1 = root */
#define FILE0 100                     /* file inos 100..107 */
#define LINK0 200                     /* symlink inos 200..207 */
#define NOBJ 8
#define MAXENT 2048                   /* model entries at most */
#define MAXLIMITS 8

static bool is_dir_ino(udc_ino i)
{
	return i >= 1 && i <= NDIRS;
}

static bool is_link_ino(udc_ino i)
{
	return i >= LINK0 && i < LINK0 + NOBJ;
}

static uint64_t dir_cookie(udc_ino ino)
{
	return (ino * 0x9E3779B97F4A7C15ULL) | 1;
}

#ifndef FUZZ_PLANT
#define FUZZ_PLANT 0   /* tests/fuzz/README.md: checking the checks */
#endif

static bool trace;

static void tr(const char *fmt, ...)
{
	va_list ap;

	if (!trace)
		return;
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
}

static void show(const char *what, const char *s, size_t len)
{
	fprintf(stderr, "  %s (%zu bytes): \"", what, len);
	for (size_t i = 0; i < len && i < 80; i++) {
		unsigned char ch = (unsigned char)s[i];
		if (ch >= 32 && ch < 127 && ch != '"' && ch != '\\')
			fputc(ch, stderr);
		else
			fprintf(stderr, "\\x%02x", ch);
	}
	fprintf(stderr, "%s\"\n", len > 80 ? "..." : "");
}

static unsigned long op_no;

__attribute__((noreturn, format(printf, 1, 2))) static void violation(const char *fmt, ...)
{
	va_list ap;

	fprintf(stderr, "\nfuzz_api: VIOLATION at op %lu: ", op_no);
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputc('\n', stderr);
	abort();
}

/* ------------------------------------------------------------------ */
/* The model store                                                     */

struct ment {
	udc_ino dir;
	size_t len;
	struct udc_attr attr;
	uint64_t told;       /* op sequence when last told to the cache (fills) */
	int next;            /* hash chain, -1 ends */
	char name[UDC_NAME_MAX];
};

#define MBUCKETS 512

static struct {
	struct ment e[MAXENT];
	int n;
	int head[MBUCKETS];
	udc_ino parent[NDIRS + 1];   /* 0: none known; the root's is the root */
	bool attached[NDIRS + 1];    /* named somewhere now (the root: always) */
	char target[NOBJ][UDC_PATH_MAX];
	size_t tlen[NOBJ];
} M;

static uint64_t seq;         /* op sequence, for "told since the fill began" */

static unsigned mhash(udc_ino dir, const char *name, size_t len)
{
	uint64_t h = 1469598103934665603ULL ^ dir;

	for (size_t i = 0; i < len; i++)
		h = (h ^ (unsigned char)name[i]) * 1099511628211ULL;
	return (unsigned)((h ^ (h >> 31)) % MBUCKETS);
}

static struct ment *mfind(udc_ino dir, const char *name, size_t len)
{
	for (int i = M.head[mhash(dir, name, len)]; i >= 0; i = M.e[i].next)
		if (M.e[i].dir == dir && M.e[i].len == len && memcmp(M.e[i].name, name, len) == 0)
			return &M.e[i];
	return NULL;
}

static void munlink_chain(int idx)
{
	struct ment *x = &M.e[idx];
	int *pp = &M.head[mhash(x->dir, x->name, x->len)];

	while (*pp != idx)
		pp = &M.e[*pp].next;
	*pp = x->next;
}

static void mdel_entry(struct ment *x)
{
	int idx = (int)(x - M.e);
	int last = M.n - 1;

	munlink_chain(idx);
	if (idx != last) {
		/* move the last entry into the hole, fixing its chain link */
		int *pp = &M.head[mhash(M.e[last].dir, M.e[last].name, M.e[last].len)];
		while (*pp != last)
			pp = &M.e[*pp].next;
		M.e[idx] = M.e[last];
		*pp = idx;
	}
	M.n--;
}

static bool mdel(udc_ino dir, const char *name, size_t len)
{
	struct ment *x = mfind(dir, name, len);

	if (!x)
		return false;
	mdel_entry(x);
	return true;
}

/* Set (dir, name) = attr; false if the model is full. */
static bool mset(udc_ino dir, const char *name, size_t len, const struct udc_attr *attr)
{
	struct ment *x = mfind(dir, name, len);

	if (!x) {
		if (M.n == MAXENT)
			return false;
		x = &M.e[M.n];
		memset(x, 0, offsetof(struct ment, name));
		x->dir = dir;
		x->len = len;
		memcpy(x->name, name, len);
		unsigned b = mhash(dir, name, len);
		x->next = M.head[b];
		M.head[b] = M.n++;
	}
	x->attr = *attr;
	x->told = seq;
	if (attr->type == UDC_TYPE_DIR && is_dir_ino(attr->ino)) {
		M.parent[attr->ino] = dir;
		M.attached[attr->ino] = true;
	}
	return true;
}

static bool mdir_empty(udc_ino d)
{
	for (int i = 0; i < M.n; i++)
		if (M.e[i].dir == d)
			return false;
	return true;
}

/* Remove every entry of d (an rmdir's store side); subdirectories are
 * left detached, their contents and ".." kept (orphans). */
static void mclear_dir(udc_ino d)
{
	for (int i = 0; i < M.n;) {
		if (M.e[i].dir == d) {
			if (M.e[i].attr.type == UDC_TYPE_DIR)
				M.attached[M.e[i].attr.ino] = false;
			mdel_entry(&M.e[i]);
		} else {
			i++;
		}
	}
}

/* Is a an ancestor of (or equal to) d, following ".." in the model? */
static bool mancestor(udc_ino a, udc_ino d)
{
	for (int guard = 0; guard <= NDIRS + 1 && d; guard++) {
		if (d == a)
			return true;
		if (d == ROOT || !M.attached[d])
			return false;
		d = M.parent[d];
	}
	return false;
}

/* The model's ".." of ino: true and *out, or false (none). */
static bool mparent(udc_ino ino, struct udc_attr *out)
{
	if (!is_dir_ino(ino) || !M.parent[ino])
		return false;
	udc_ino p = M.parent[ino];
	*out = (struct udc_attr){ .ino = p, .type = UDC_TYPE_DIR, .cookie = dir_cookie(p) };
	return true;
}

static void model_reset(void)
{
	M.n = 0;
	for (int b = 0; b < MBUCKETS; b++)
		M.head[b] = -1;
	memset(M.parent, 0, sizeof(M.parent));
	memset(M.attached, 0, sizeof(M.attached));
	M.parent[ROOT] = ROOT;
	M.attached[ROOT] = true;
	for (int k = 0; k < NOBJ; k++) {
		M.target[k][0] = 'a';
		M.tlen[k] = 1;
	}
}

/* ------------------------------------------------------------------ */
/* Input decoding                                                      */

static const uint8_t *in;
static size_t in_len, in_pos;

static uint8_t u8(void)
{
	return in_pos < in_len ? in[in_pos++] : 0;
}

static bool more(void)
{
	return in_pos < in_len;
}

static char bigname[UDC_PATH_MAX + 2];   /* 'n' repeated */

struct name {
	const char *s;
	size_t len;
	char buf[300];
};

static const struct {
	const char *s;
	size_t len;
} valid_names[] = {
	{ "a", 1 }, { "b", 1 }, { "c", 1 }, { "d", 1 }, { "e", 1 }, { "f", 1 },
	{ "...", 3 }, { "x y", 3 }, { "\xff\xfe", 2 }, { NULL, 64 }, { NULL, 65 },
	{ NULL, 255 }, { "l", 1 }, { "a", 1 }, { "b", 1 }, { "c", 1 },
};
#define NVALID (sizeof(valid_names) / sizeof(valid_names[0]))

/*
 * A name: mostly one of a few valid ones; some bytes give the invalid
 * ones (empty, ".", "/", NUL, 256 bytes) and ".."; 0xf0.. a raw name.
 */
static void get_name(struct name *n)
{
	uint8_t b = u8();

	n->s = n->buf;
	if (b < 0xe0) {
		unsigned k = b % NVALID;
		n->s = valid_names[k].s ? valid_names[k].s : bigname;
		n->len = valid_names[k].len;
		return;
	}
	switch (b) {
	case 0xe0: n->len = 0; n->s = ""; return;
	case 0xe1: n->s = "."; n->len = 1; return;
	case 0xe3: n->s = "/"; n->len = 1; return;
	case 0xe4: n->s = "a/b"; n->len = 3; return;
	case 0xe5: n->s = "\0"; n->len = 1; return;
	case 0xe6: n->s = "a\0"; n->len = 2; return;
	case 0xe7: n->s = bigname; n->len = 256; return;
	case 0xe8: n->s = bigname; n->len = 4097; return;
	default:
		if (b < 0xf0) {
			n->s = "..";
			n->len = 2;
			return;
		}
		n->len = u8();
		if (n->len == 255)
			n->len = 256;
		for (size_t i = 0; i < n->len; i++)
			n->buf[i] = (char)u8();
		return;
	}
}

/* A directory for mutations: 1..NDIRS. */
static udc_ino get_dir(void)
{
	return (udc_ino)(u8() % NDIRS) + 1;
}

/* Any ino, for lookups, walks and invalidations. */
static udc_ino get_ino(void)
{
	uint8_t b = u8() % 20;

	if (b < 8)
		return b + 1;
	if (b < 12)
		return FILE0 + (b - 8);
	if (b < 15)
		return LINK0 + (b - 12);
	if (b == 15)
		return UDC_INO_NONE;
	if (b == 16)
		return 12345;
	return ROOT;
}

/* A path (or symlink target): mostly components from the names the
 * model uses, "..", "." and empty ones ("//"), or special long ones. */
static size_t get_path(char *buf, size_t cap)
{
	uint8_t mode = u8();
	size_t len = 0;

	switch (mode % 16) {
	case 11: {   /* characters of an alphabet */
		static const char alpha[] = "//////aaabbbcccdddeeefffl...\0.";
		size_t n = u8() % 48;
		for (size_t i = 0; i < n && len < cap; i++)
			buf[len++] = alpha[u8() % (sizeof(alpha) - 1)];
		return len;
	}
	case 12: {   /* a long path: "a/" repeated, around UDC_PATH_MAX */
		size_t want = UDC_PATH_MAX - 8 + (u8() % 16);
		while (len < want && len < cap)
			buf[len] = len % 2 ? '/' : 'a', len++;
		return len;
	}
	case 13: {   /* "./" repeated: a target that makes the path too long */
		size_t want = UDC_PATH_MAX - 64 + (u8() % 128);
		while (len < want && len < cap)
			buf[len] = len % 2 ? '/' : '.', len++;
		return len;
	}
	case 14: {   /* a component of 255 or 256 bytes, then maybe more */
		size_t n = 255 + (u8() & 1);
		buf[len++] = '/';
		memcpy(buf + len, bigname, n);
		len += n;
		if (u8() & 1)
			buf[len++] = '/';
		return len;
	}
	case 15: {   /* raw bytes */
		size_t n = u8() % 64;
		for (size_t i = 0; i < n && len < cap; i++)
			buf[len++] = (char)u8();
		return len;
	}
	default: {   /* components */
		static const char *const tok[] = { "a", "b", "c", "d", "e", "f", "l", "..",
						   ".", "", "...", "x y" };
		size_t n = mode >> 4;   /* 0..15 components */
		if (mode & 1)
			buf[len++] = '/';
		for (size_t i = 0; i < n; i++) {
			const char *t = tok[u8() % (sizeof(tok) / sizeof(tok[0]))];
			size_t tl = strlen(t);
			if (len + tl + 1 >= cap)
				break;
			if (i)
				buf[len++] = '/';
			memcpy(buf + len, t, tl);
			len += tl;
		}
		if (mode & 2 && len < cap)
			buf[len++] = '/';
		return len;
	}
	}
}

/* ------------------------------------------------------------------ */
/* The backend                                                         */

enum lookup_fault {
	LF_NONE = 0,
	LF_RET_ONE,        /* returns 1: -EIO */
	LF_RET_HUGE,       /* returns -100000: -EIO */
	LF_RET_INTMIN,     /* returns INT_MIN: -EIO */
	LF_RET_4096,       /* returns -4096: -EIO */
	LF_INO_NONE,       /* 0 with attr.ino 0: -EIO */
	LF_BAD_TYPE,       /* 0 with attr.type 7: -EIO */
	LF_BAD_FLAGS,      /* 0 with attr.flags 1: -EIO */
	LF_EACCES,         /* -EACCES, passed through */
	LF_4095,           /* -4095, passed through */
	LF_DOTDOT_REG,     /* ".." answered as a regular file: -EIO (else normal) */
	LF_REENTER,        /* the store changes (and the cache is told) during the call */
	LF_COUNT
};

enum link_fault {
	RF_NONE = 0,
	RF_HUGE_NEG,       /* -100000: -EIO */
	RF_LONG_MIN,       /* SSIZE_MIN: -EIO */
	RF_4096,           /* -4096: -EIO */
	RF_TOO_LONG,       /* size + 1 (the buffer filled): -EIO */
	RF_NUL,            /* "a\0b": -EIO */
	RF_ZERO,           /* 0: -ENOENT */
	RF_EACCES,         /* -EACCES */
	RF_COUNT
};

static struct {
	int lookup;            /* enum lookup_fault armed for the next lookup */
	int link;              /* enum link_fault armed for the next readlink */
	int expect;            /* the error a consumed fault must give */
	bool lookup_hit, link_hit;
	udc_ino fdir;          /* the name the consumed lookup fault was for */
	size_t flen;
	char fname[UDC_NAME_MAX];
	uint8_t reenter_kind, reenter_arg;
	unsigned bumps;        /* backend calls left that bump the rename seqcount */
	udc_ino bump_dir;
	int reenter_answer;    /* what the reentrant call answered (0 / -ENOENT) */
	struct udc_attr reenter_attr;
} F;

static udc_cache *C;
static struct udc_backend backend;
static bool have_backend, have_readlink;
static uint64_t backend_calls;         /* lookups only: what stats count */

static void reenter(udc_ino dir, const char *name, size_t len);
static const char *rname(int r);

/*
 * During a walk, the backend tells the cache of an rmdir of a name that
 * does not exist (it only forgets: ".." to bump_dir is no longer trusted)
 * the first F.bumps times it is called: the rename seqcount moves under
 * the walk, which must retry, then fall back to its locked passes, and
 * still give the model's answer.
 */
#define BUMP_NAME "\x01bump"
static void bump(void)
{
	if (!F.bumps)
		return;
	F.bumps--;
	if (mfind(F.bump_dir, BUMP_NAME, sizeof(BUMP_NAME) - 1))
		return;
	int r = udc_rmdir(C, F.bump_dir, BUMP_NAME, sizeof(BUMP_NAME) - 1, UDC_INO_NONE);
	if (r != 0)
		violation("udc_rmdir of an absent name (from the backend) returned %d", r);
}

static int lookup_fault_error(int f)
{
	switch (f) {
	case LF_EACCES: return -EACCES;
	case LF_4095: return -4095;
	default: return -EIO;
	}
}

static int be_lookup(void *ctx, udc_ino dir, const char *name, size_t len, struct udc_attr *out)
{
	(void)ctx;
	backend_calls++;
	bump();
	if (dir == UDC_INO_NONE || !name || len == 0 || len > UDC_NAME_MAX ||
	    memchr(name, '/', len) || memchr(name, '\0', len) || (len == 1 && name[0] == '.')) {
		show("name", name ? name : "", name ? len : 0);
		violation("backend asked for a bad name in dir %llu", (unsigned long long)dir);
	}
	bool dotdot = len == 2 && name[0] == '.' && name[1] == '.';
	int f = F.lookup_hit ? LF_NONE : F.lookup;
	if (f == LF_DOTDOT_REG && !dotdot)
		f = LF_NONE;
	if (f == LF_REENTER && dotdot)
		f = LF_NONE;
	if (f != LF_NONE) {
		F.lookup_hit = true;
		F.fdir = dir;
		F.flen = len;
		memcpy(F.fname, name, len);
		F.expect = lookup_fault_error(f);
	}

	/* the honest answer */
	int r;
	struct udc_attr a = { 0 };
	if (dotdot) {
		r = mparent(dir, &a) ? 0 : -ENOENT;
	} else {
		struct ment *x = mfind(dir, name, len);
		r = x ? 0 : -ENOENT;
		if (x)
			a = x->attr;
	}

	if (trace) {
		tr("    backend lookup %llu ", (unsigned long long)dir);
		show("name", name, len);
		tr("      = %s ino %llu%s\n", rname(r), (unsigned long long)a.ino,
		   f ? " (then the fault)" : "");
	}
	switch (f) {
	case LF_RET_ONE: return 1;
	case LF_RET_HUGE: return -100000;
	case LF_RET_INTMIN: return INT_MIN;
	case LF_RET_4096: return -4096;
	case LF_INO_NONE: *out = (struct udc_attr){ .ino = 0, .type = UDC_TYPE_REG }; return 0;
	case LF_BAD_TYPE: *out = (struct udc_attr){ .ino = 101, .type = 7 }; return 0;
	case LF_BAD_FLAGS: *out = (struct udc_attr){ .ino = 101, .type = 1, .flags = 1 }; return 0;
	case LF_EACCES: return -EACCES;
	case LF_4095: return -4095;
	case LF_DOTDOT_REG: *out = (struct udc_attr){ .ino = 101, .type = UDC_TYPE_REG }; return 0;
	case LF_REENTER:
		F.reenter_answer = r;
		F.reenter_attr = a;
		reenter(dir, name, len);
		break;
	default:
		break;
	}
#if FUZZ_PLANT == 2   /* self-test: the store answers a stale cookie */
	if (r == 0 && a.type == UDC_TYPE_REG && dir == 3)
		a.cookie++;
#endif
	if (r == 0)
		*out = a;
	return r;
}

static ssize_t be_readlink(void *ctx, udc_ino ino, char *buf, size_t size)
{
	(void)ctx;
	bump();
	if (!is_link_ino(ino))
		violation("readlink of ino %llu, which is no symlink", (unsigned long long)ino);
	if (size == 0)
		violation("readlink with a 0-byte buffer");
	int f = F.link_hit ? RF_NONE : F.link;
	if (f != RF_NONE) {
		F.link_hit = true;
		F.expect = f == RF_ZERO ? -ENOENT : f == RF_EACCES ? -EACCES : -EIO;
	}
	switch (f) {
	case RF_HUGE_NEG: return -100000;
	case RF_LONG_MIN: return -SSIZE_MAX - 1;
	case RF_4096: return -4096;
	case RF_TOO_LONG: memset(buf, 'a', size); return (ssize_t)size + 1;
	case RF_NUL:
		if (size < 3)
			return -EIO;
		memcpy(buf, "a\0b", 3);
		return 3;
	case RF_ZERO: return 0;
	case RF_EACCES: return -EACCES;
	default: break;
	}
	size_t k = (size_t)(ino - LINK0);
	size_t n = M.tlen[k] < size ? M.tlen[k] : size;
	memcpy(buf, M.target[k], n);
	return (ssize_t)n;
}

static void faults_clear(void)
{
	memset(&F, 0, sizeof(F));
}

/* Read a fault byte: lookup faults, readlink faults, or none. */
static void get_faults(bool allow_reenter)
{
	uint8_t b = u8();

	faults_clear();
	if (b >= 96 && b < 128 && !allow_reenter) {   /* walks: renames under the walk */
		F.bumps = 1 + u8() % 24;
		F.bump_dir = (udc_ino)(u8() % NDIRS) + 1;
		return;
	}
	if (b < 128)
		return;
	if (b < 192) {
		F.lookup = 1 + (b % (LF_COUNT - 1));
		if (F.lookup == LF_REENTER) {
			if (!allow_reenter) {
				F.lookup = LF_NONE;
			} else {
				F.reenter_kind = u8();
				F.reenter_arg = u8();
			}
		}
	} else {
		F.link = 1 + (b % (RF_COUNT - 1));
	}
}

/* ------------------------------------------------------------------ */
/* Checks                                                              */

static const char *rname(int r)
{
	static char buf[32];

	switch (r) {
	case 0: return "0";
	case -ENOENT: return "-ENOENT";
	case -EINVAL: return "-EINVAL";
	case -ENAMETOOLONG: return "-ENAMETOOLONG";
	case -ENOTDIR: return "-ENOTDIR";
	case -ELOOP: return "-ELOOP";
	case -EIO: return "-EIO";
	case -EAGAIN: return "-EAGAIN";
	case -EACCES: return "-EACCES";
	case -ESTALE: return "-ESTALE";
	case -EDEADLK: return "-EDEADLK";
	case -ENOMEM: return "-ENOMEM";
	default: snprintf(buf, sizeof(buf), "%d", r); return buf;
	}
}

static void show_attr(const char *what, const struct udc_attr *a)
{
	fprintf(stderr, "  %s: ino %llu type %u flags %u cookie %#llx\n", what,
		(unsigned long long)a->ino, a->type, a->flags, (unsigned long long)a->cookie);
}

/* The name check of the API: 0 or the documented -errno. */
static int name_err(const char *name, size_t len)
{
	if (len == 0)
		return -EINVAL;
	if (len > UDC_NAME_MAX)
		return -ENAMETOOLONG;
	if (len == 1 && name[0] == '.')
		return -EINVAL;
	if (memchr(name, '/', len) || memchr(name, '\0', len))
		return -EINVAL;
	return 0;
}

static int call_err(udc_ino dir, const char *name, size_t len)
{
	return dir == UDC_INO_NONE ? -EINVAL : name_err(name, len);
}

static bool is_dotdot(const char *name, size_t len)
{
	return len == 2 && name[0] == '.' && name[1] == '.';
}

/* got must equal want; a directory's own attr may lack its cookie. */
static void attr_must_equal(const struct udc_attr *got, const struct udc_attr *want, bool lenient,
			    const char *what)
{
	bool ok = got->ino == want->ino && got->type == want->type && got->flags == want->flags &&
		  (got->cookie == want->cookie || (lenient && got->cookie == 0));
	if (!ok) {
		show_attr("got", got);
		show_attr("model", want);
		violation("%s: attr differs from the model", what);
	}
}

/* A positive answer for (dir, name): must be the model's. */
static void check_positive(udc_ino dir, const char *name, size_t len, const struct udc_attr *got,
			   const char *what)
{
	struct udc_attr want;

	if (is_dotdot(name, len)) {
		if (dir == ROOT)
			want = (struct udc_attr){ .ino = ROOT, .type = UDC_TYPE_DIR,
						  .cookie = dir_cookie(ROOT) };
		else if (!mparent(dir, &want))
			violation("%s: \"..\" of %llu positive (ino %llu), the model has none", what,
				  (unsigned long long)dir, (unsigned long long)got->ino);
		attr_must_equal(got, &want, true, what);
		return;
	}
	struct ment *x = mfind(dir, name, len);
	if (!x) {
		show("name", name, len);
		show_attr("got", got);
		violation("%s: positive in dir %llu, absent in the model", what,
			  (unsigned long long)dir);
	}
	if (memcmp(got, &x->attr, sizeof(*got)) != 0) {
		show("name", name, len);
		attr_must_equal(got, &x->attr, false, what);
	}
}

static void check_negative(udc_ino dir, const char *name, size_t len, const char *what)
{
	struct udc_attr p;

	if (is_dotdot(name, len) ? (dir == ROOT || mparent(dir, &p)) : mfind(dir, name, len) != NULL) {
		show("name", name, len);
		violation("%s: negative in dir %llu, the model has it", what,
			  (unsigned long long)dir);
	}
}

static void expect_rc(int got, int want, const char *what)
{
	if (got != want)
		violation("%s returned %s, expected %s", what, rname(got), rname(want));
}

/* udc_lookup, checked. */
static int do_lookup(udc_ino dir, const char *name, size_t len, const char *what)
{
	struct udc_attr a;

	memset(&a, 0xa5, sizeof(a));
	int r = udc_lookup(C, dir, name, len, &a);
	int e = call_err(dir, name, len);
	if (e) {
		expect_rc(r, e, what);
		return r;
	}
	if (r == UDC_POSITIVE)
		check_positive(dir, name, len, &a, what);
	else if (r == UDC_NEGATIVE)
		check_negative(dir, name, len, what);
	else if (r != UDC_MISS)
		violation("%s returned %d", what, r);
	return r;
}

/* After a consumed lookup fault: nothing was cached for its name. */
static void check_fault_cached_nothing(void)
{
	if (!F.lookup_hit)
		return;
	int r = udc_lookup(C, F.fdir, F.fname, F.flen, NULL);
	if (r != UDC_MISS) {
		show("name", F.fname, F.flen);
		violation("after a failed backend lookup (fault %d) in dir %llu, udc_lookup is %d, "
			  "not UDC_MISS", F.lookup, (unsigned long long)F.fdir, r);
	}
}

/*
 * Freshness: what the model comparison cannot see (an answer that stayed
 * cached but is still right, an answer that was never cached).  A call
 * that caches must leave the answer cached when no eviction can have run:
 * the limit is large and far from reached.
 */
static size_t cur_limit;

static bool roomy(void)
{
	struct udc_stats st = { .size = sizeof(st) };

	if (cur_limit < ((size_t)16 << 20))
		return false;
	udc_stats_get(C, &st);
	return st.bytes_used < cur_limit / 4;
}

static void must_be_cached(udc_ino dir, const char *name, size_t len, const struct udc_attr *want,
			   const char *what)
{
	struct udc_attr a;
	int r = udc_lookup(C, dir, name, len, &a);

	if (r != UDC_POSITIVE) {
		show("name", name, len);
		violation("after %s in dir %llu (room to spare), udc_lookup is %d, not UDC_POSITIVE",
			  what, (unsigned long long)dir, r);
	}
	attr_must_equal(&a, want, false, what);
}

static void must_be_forgotten(udc_ino dir, const char *name, size_t len, const char *what)
{
	if (dir == ROOT && is_dotdot(name, len))
		return;   /* the root's ".." is always the root */
	int r = udc_lookup(C, dir, name, len, NULL);
	if (r != UDC_MISS) {
		show("name", name, len);
		violation("after %s of dir %llu, udc_lookup is %d, not UDC_MISS", what,
			  (unsigned long long)dir, r);
	}
}

/* After udc_invalidate_dir(d) or udc_rmdir of d: nothing of d is known. */
static void dir_forgotten(udc_ino d, const char *what)
{
	for (int i = 0; i < M.n; i++)
		if (M.e[i].dir == d)
			must_be_forgotten(d, M.e[i].name, M.e[i].len, what);
	for (size_t k = 0; k < 6; k++)
		must_be_forgotten(d, valid_names[k].s, 1, what);
	must_be_forgotten(d, "..", 2, what);
}

/* ------------------------------------------------------------------ */
/* Mutations: model first, then the cache, which must accept.          */

static void tell_add(udc_ino dir, const char *name, size_t len, const struct udc_attr *a)
{
	if (!mset(dir, name, len, a))
		return;   /* model full: nothing changes */
	int r = udc_add(C, dir, name, len, a);
	expect_rc(r, 0, "udc_add");
	if (roomy())
		must_be_cached(dir, name, len, a, "udc_add");
}

static void tell_remove(udc_ino dir, const char *name, size_t len)
{
	mdel(dir, name, len);
#if FUZZ_PLANT == 1   /* self-test: the cache is not told of a removal */
	if (len == 1 && name[0] == 'c')
		return;
#endif
	int r = udc_remove(C, dir, name, len);
	expect_rc(r, 0, "udc_remove");
}

/* During a backend lookup of (dir, name): the store changes. */
static void reenter(udc_ino dir, const char *name, size_t len)
{
	struct ment *x = mfind(dir, name, len);
	int r;

	tr("    reenter kind %u\n", F.reenter_kind % 5);
	switch (F.reenter_kind % 5) {
	case 0:   /* the name appears or goes */
		if (!x) {
			struct udc_attr a = { .ino = FILE0 + F.reenter_arg % NOBJ,
					      .type = UDC_TYPE_REG, .cookie = F.reenter_arg };
			tell_add(dir, name, len, &a);
		} else if (x->attr.type != UDC_TYPE_DIR) {
			tell_remove(dir, name, len);
		} else {
			expect_rc(udc_invalidate(C, dir, name, len), 0, "udc_invalidate (reentrant)");
		}
		break;
	case 1:
		expect_rc(udc_invalidate(C, dir, name, len), 0, "udc_invalidate (reentrant)");
		break;
	case 2:
		expect_rc(udc_invalidate_dir(C, dir), 0, "udc_invalidate_dir (reentrant)");
		break;
	case 3:   /* the backend resolves the very name it is asked for */
		r = udc_resolve(C, dir, name, len, NULL, NULL);
		expect_rc(r, -EDEADLK, "udc_resolve of the name being resolved");
		break;
	default:
		if (!x) {
			r = udc_add_negative(C, dir, name, len, F.reenter_arg);
			expect_rc(r, 0, "udc_add_negative (reentrant)");
		} else {
			struct udc_attr a = x->attr;
			if (a.type != UDC_TYPE_DIR) {
				a.cookie ^= 0x100;   /* the same name, a new cookie */
				tell_add(dir, name, len, &a);
			}
		}
		break;
	}
}

/* udc_resolve, checked. */
static int do_resolve(udc_ino dir, const char *name, size_t len, const char *what)
{
	struct udc_attr a;

	memset(&a, 0xa5, sizeof(a));
	int r = udc_resolve(C, dir, name, len, NULL, &a);
	int e = call_err(dir, name, len);
	if (e) {
		expect_rc(r, e, what);
		return r;
	}
	if (F.lookup == LF_REENTER && F.lookup_hit) {
		/* the answer is the store's before the change */
		expect_rc(r, F.reenter_answer, what);
		if (r == 0)
			attr_must_equal(&a, &F.reenter_attr, false, what);
		return r;
	}
	if (F.lookup_hit || F.link_hit) {
		expect_rc(r, F.expect, what);
		check_fault_cached_nothing();
		return r;
	}
	if (r == 0) {
		check_positive(dir, name, len, &a, what);
		if (!is_dotdot(name, len) && roomy())
			must_be_cached(dir, name, len, &a, what);
	} else if (r == -ENOENT) {
		check_negative(dir, name, len, what);
	} else if (!(r == -EAGAIN && !have_backend)) {
		violation("%s returned %s", what, rname(r));
	}
	return r;
}

/* ------------------------------------------------------------------ */
/* The reference walker                                                */

static char wbuf[2][UDC_PATH_MAX + 8];

static int ref_walk(udc_ino start, const char *path0, size_t len0, unsigned flags,
		    struct udc_attr *out, bool *lenient)
{
	if (len0 > UDC_PATH_MAX)
		return -ENAMETOOLONG;
	if (memchr(path0, '\0', len0))
		return -EINVAL;
	if (len0 == 0)
		return -ENOENT;
	if (path0[0] != '/' && start == UDC_INO_NONE)
		return -EINVAL;

	const char *path = path0;
	size_t len = len0, i = 0;
	unsigned nlinks = 0, which = 0;
	struct udc_attr cur = { .ino = path[0] == '/' ? ROOT : start, .type = UDC_TYPE_DIR };
	bool cur_lenient = true;

	cur.cookie = dir_cookie(cur.ino);
	for (;;) {
		while (i < len && path[i] == '/')
			i++;
		if (i == len)
			break;
		size_t j = i;
		while (j < len && path[j] != '/')
			j++;
		const char *comp = path + i;
		size_t clen = j - i;
		bool slash_after = j < len;
		size_t next = j;
		while (next < len && path[next] == '/')
			next++;
		bool last = next == len;

		if (clen > UDC_NAME_MAX)
			return -ENAMETOOLONG;
		if (cur.type != UDC_TYPE_DIR && cur.type != UDC_TYPE_UNKNOWN)
			return -ENOTDIR;
		i = j;
		if (clen == 1 && comp[0] == '.')
			continue;
		struct udc_attr a;
		bool a_lenient = false;
		if (is_dotdot(comp, clen)) {
			if (cur.ino == ROOT)
				a = (struct udc_attr){ .ino = ROOT, .type = UDC_TYPE_DIR,
						       .cookie = dir_cookie(ROOT) };
			else if (!mparent(cur.ino, &a))
				return -ENOENT;
			a_lenient = true;
		} else {
			struct ment *x = mfind(cur.ino, comp, clen);
			if (!x)
				return -ENOENT;
			a = x->attr;
		}
		bool follow = !last || slash_after || (flags & UDC_WALK_FOLLOW);
		if (a.type != UDC_TYPE_SYMLINK || !follow) {
			cur = a;
			cur_lenient = a_lenient;
			continue;
		}
		if (++nlinks > 40 || !have_readlink)
			return -ELOOP;
		size_t k = (size_t)(a.ino - LINK0);
		const char *t = M.target[k];
		size_t tl = M.tlen[k];
		if (tl == 0)
			return -ENOENT;
		if (memchr(t, '\0', tl))
			return -EIO;
		size_t rlen = len - j;
		if (tl + rlen > UDC_PATH_MAX)
			return -ENAMETOOLONG;
		char *nb = wbuf[which];
		which ^= 1;
		memmove(nb + tl, path + j, rlen);
		memcpy(nb, t, tl);
		path = nb;
		len = tl + rlen;
		i = 0;
		if (path[0] == '/') {
			cur = (struct udc_attr){ .ino = ROOT, .type = UDC_TYPE_DIR,
						 .cookie = dir_cookie(ROOT) };
			cur_lenient = true;
		}
	}
	if (len && path[len - 1] == '/' && cur.type != UDC_TYPE_DIR && cur.type != UDC_TYPE_UNKNOWN)
		return -ENOTDIR;
	*out = cur;
	*lenient = cur_lenient;
	return 0;
}

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

static void op_rename(void)
{
	udc_ino od = get_dir(), nd = get_dir();
	struct name on, nn;
	get_name(&on);
	get_name(&nn);
	bool give = u8() & 1;

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
			expect_rc(udc_add(C, d, x->name, x->len, &x->attr), 0, "udc_add (fill)");
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
		if (x->dir != d)
			continue;
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
	if (r == 0)
		check_complete(d);
	else if (r != -ESTALE || strict)
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
}

static const size_t limits[MAXLIMITS] = { 0, 64 << 10, 128 << 10, 256 << 10, 512 << 10,
					  1 << 20, 4 << 20, 16 << 20 };

static void op_set_limit(void)
{
	size_t l = limits[u8() % MAXLIMITS];

	tr("set_memory_limit %zu\n", l);
	int r = udc_set_memory_limit(C, l);
	if (r == 0)
		cur_limit = l ? l : (size_t)64 << 20;
	else if (r != -ENOMEM)
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
