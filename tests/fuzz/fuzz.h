/* SPDX-License-Identifier: MIT */
/*
 * tests/fuzz/fuzz.h - what the files of the libFuzzer harness share.
 *
 * The harness (its rules: the comment at the top of fuzz_api.c) is:
 *
 *   fuzz_api.c      the driver: one input, its config byte and ops
 *   fuzz_input.c    input decoding: bytes -> names, dirs, inos, paths
 *   fuzz_model.c    the model store, the API's name rules and the
 *                   reference walker
 *   fuzz_backend.c  the fuzzed backend over the model, its faults, and
 *                   the store changing during a call
 *   fuzz_check.c    the checks of the cache's answers against the model,
 *                   and the mutations told to both
 *
 * The oracle is independent of the code under test: the name check
 * (name_err) and the reference walker (ref_walk) are written again from
 * udcache.h's contract and engine/walk.c's documented rules, deliberately
 * without common/path.h or anything else of the library's: an oracle that
 * shares the code under test cannot find a bug in it.  Keep it that way.
 *
 * One input runs in one thread: the state below is plain globals.
 */
#ifndef UDC_TESTS_FUZZ_FUZZ_H
#define UDC_TESTS_FUZZ_FUZZ_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "include/udcache.h"

/* ------------------------------------------------------------------ */
/* Universe                                                            */

#define ROOT 1
#define NDIRS 8                       /* dir inos 1..8, 1 = root */
#define FILE0 100                     /* file inos 100..107 */
#define LINK0 200                     /* symlink inos 200..207 */
#define NOBJ 8
#define MAXENT 2048                   /* model entries at most */
#define MAXLIMITS 8

static inline bool is_dir_ino(udc_ino i)
{
	return i >= 1 && i <= NDIRS;
}

static inline bool is_link_ino(udc_ino i)
{
	return i >= LINK0 && i < LINK0 + NOBJ;
}

static inline uint64_t dir_cookie(udc_ino ino)
{
	return (ino * 0x9E3779B97F4A7C15ULL) | 1;
}

#ifndef FUZZ_PLANT
#define FUZZ_PLANT 0   /* tests/fuzz/README.md: checking the checks */
#endif

/* ------------------------------------------------------------------ */
/* Reporting (fuzz_check.c)                                            */

extern bool trace;              /* UDC_FUZZ_TRACE: print every op */
extern unsigned long op_no;     /* the op running, for violations */

void tr(const char *fmt, ...);
void show(const char *what, const char *s, size_t len);
__attribute__((noreturn, format(printf, 1, 2))) void violation(const char *fmt, ...);
const char *rname(int r);

/* ------------------------------------------------------------------ */
/* The model store (fuzz_model.c)                                      */

struct ment {
	udc_ino dir;
	size_t len;
	struct udc_attr attr;
	uint64_t told;       /* op sequence when last told to the cache (fills) */
	int next;            /* hash chain, -1 ends */
	char name[UDC_NAME_MAX];
};

#define MBUCKETS 512

struct model {
	struct ment e[MAXENT];
	int n;
	int head[MBUCKETS];
	udc_ino parent[NDIRS + 1];   /* 0: none known; the root's is the root */
	bool attached[NDIRS + 1];    /* named somewhere now (the root: always) */
	char target[NOBJ][UDC_PATH_MAX];
	size_t tlen[NOBJ];
};

extern struct model M;
extern uint64_t seq;         /* op sequence, for "told since the fill began" */

struct ment *mfind(udc_ino dir, const char *name, size_t len);
bool mdel(udc_ino dir, const char *name, size_t len);
bool mset(udc_ino dir, const char *name, size_t len, const struct udc_attr *attr);
bool mdir_empty(udc_ino d);
void mclear_dir(udc_ino d);
bool mancestor(udc_ino a, udc_ino d);
bool mparent(udc_ino ino, struct udc_attr *out);
void model_reset(void);

int name_err(const char *name, size_t len);
int call_err(udc_ino dir, const char *name, size_t len);
bool is_dotdot(const char *name, size_t len);
int ref_walk(udc_ino start, const char *path0, size_t len0, unsigned flags,
	     struct udc_attr *out, bool *lenient);

/* ------------------------------------------------------------------ */
/* Input decoding (fuzz_input.c)                                       */

extern const uint8_t *in;
extern size_t in_len, in_pos;
extern char bigname[UDC_PATH_MAX + 2];   /* 'n' repeated */

struct name {
	const char *s;
	size_t len;
	char buf[300];
};

struct valid_name {
	const char *s;
	size_t len;
};

/* The first 6 are the one-letter names "a".."f". */
extern const struct valid_name valid_names[];

uint8_t u8(void);
bool more(void);
void get_name(struct name *n);
udc_ino get_dir(void);
udc_ino get_ino(void);
size_t get_path(char *buf, size_t cap);

/* ------------------------------------------------------------------ */
/* The backend (fuzz_backend.c)                                        */

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

struct faults {
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
};

extern struct faults F;
extern udc_cache *C;                   /* the cache under test (fuzz_api.c) */
extern bool have_backend, have_readlink;
extern uint64_t backend_calls;         /* lookups only: what stats count */

int be_lookup(void *ctx, udc_ino dir, const char *name, size_t len, struct udc_attr *out);
/* be_lookup with the value every positive carries (value_of). */
int be_lookup_value(void *ctx, udc_ino dir, const char *name, size_t len, struct udc_attr *out,
		    void *value, size_t *value_len, uint32_t *ttl_ms);
/* The value the harness gives a positive of attr @a (udc_add_value, the
 * backend): from its ino and type, so that a directory's own attr with
 * cookie 0 has it too; its length.  A positive answer's value must be it
 * (".." answers have none). */
size_t value_of(const struct udc_attr *a, unsigned char *buf);
ssize_t be_readlink(void *ctx, udc_ino ino, char *buf, size_t size);
void faults_clear(void);
void get_faults(bool allow_reenter);

/* ------------------------------------------------------------------ */
/* Checks and told mutations (fuzz_check.c)                            */

extern size_t cur_limit;

void attr_must_equal(const struct udc_attr *got, const struct udc_attr *want, bool lenient,
		     const char *what);
void expect_rc(int got, int want, const char *what);
int do_lookup(udc_ino dir, const char *name, size_t len, const char *what);
int do_resolve(udc_ino dir, const char *name, size_t len, const char *what);
void check_fault_cached_nothing(void);
/* With room to spare and no object forgotten (udc_forget_ino makes its
 * names misses for a while): the strict checks apply. */
bool roomy(void);
/* File objects forgotten by this input (op_stats), FILE0-based. */
extern bool forgot[NOBJ];
extern bool forgot_any;
void must_be_cached(udc_ino dir, const char *name, size_t len, const struct udc_attr *want,
		    const char *what);
void must_be_forgotten(udc_ino dir, const char *name, size_t len, const char *what);
void dir_forgotten(udc_ino d, const char *what);
void tell_add(udc_ino dir, const char *name, size_t len, const struct udc_attr *a);
void tell_remove(udc_ino dir, const char *name, size_t len);

#endif
