/* SPDX-License-Identifier: MIT */
/*
 * tests/fault/fault_inject.c - every allocation of every public call fails
 * once, and the call says -ENOMEM (or degrades) with the cache unchanged.
 *
 * Owns: the allocation hooks of this executable and the scripted run.
 *
 * This program defines malloc, calloc, realloc, posix_memalign,
 * aligned_alloc and jemalloc's mallocx itself, each forwarding to the next
 * definition (libc's, the sanitizer's, jemalloc's) found with
 * dlsym(RTLD_NEXT).  The executable comes first in symbol lookup, so
 * liburcu, glibc's pthread_create and udcache (linked in statically) all
 * allocate through them.  Only the main thread's allocations are counted
 * and failed: liburcu's call_rcu thread and rculfhash's resize helpers run
 * apart, at times the script does not decide.
 *
 * The script (build_script) is one public call a step, on a cache made
 * with UDC_CFG_NO_RECLAIM_THREAD (reclaim runs inline, in the calls, so
 * the allocations are the script's): adds, negatives, long names, removes,
 * file and directory renames, rmdir, invalidate, invalidate_dir, the fill
 * protocol and a listing, resolve and a walk through a symlink with a
 * backend, lookups, forgetting an object,
 * stats, thread offline/online, set_memory_limit, shrink; 5000 negatives
 * in one directory make the name table grow, then a small limit and 3000
 * positives make reclaim evict and throttle, and udc_shrink shrinks the
 * tables.  A dry run records each step's result, its allocations, and the
 * answers afterwards of the script's special names, and each allocation's
 * stack.  Then, for each step i and each of its allocations k whose
 * (public call, stack) no earlier step had (the fills repeat a few sites
 * thousands of times; replaying the script for each would take minutes),
 * a fresh cache replays steps 0..i-1, the answers of every name the
 * script uses are taken, the k-th allocation of step i fails, and:
 *   - the process is still there (liburcu aborted here before);
 *   - the step returned -ENOMEM and every name answers exactly as before,
 *     or it returned what the dry run did (it degraded: a table growth
 *     skipped, a batch freed at once) and every name answers as before, as
 *     a miss (evicted), or as in the dry run after that step;
 *   - the same step, retried with no failure, returns what the dry run did;
 *   - udc_destroy's validators (UDC_DEBUG builds) pass, and LeakSanitizer
 *     (the asan-ubsan build) finds nothing at exit.
 * udc_create is step 0 (NULL with errno ENOMEM), run once with the reclaim
 * thread as well (pthread_create's allocations).  With --every, every
 * allocation of every step is failed in turn (a soak).  udc_destroy cannot
 * report an error: it must not allocate at all, which the dry run checks
 * (it waits for its own call_rcu callbacks by count, common/rcu_pending.h,
 * not with liburcu's rcu_barrier, which allocates and aborts).
 *
 * Locking: none; the hooks' counters are the main thread's only.
 * Ordering: none needed (one thread counts).
 */
#include <dlfcn.h>
#include <errno.h>
#include <execinfo.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "include/udcache.h"

/* ---- allocation hooks ---- */

/* The sanitizer runtime allocates while it starts, before its shadow
 * memory exists: the hooks must not be instrumented. */
#define HOOK __attribute__((no_sanitize("address", "undefined")))

static __thread bool hook_counted;   /* the main thread, once main() starts */
static long hook_count;              /* counted allocations so far */
static long hook_fail_at;            /* fail the hook_fail_at-th; 0: none */
static long hook_failed;             /* failures injected */
static void **hook_sites;            /* the dry run's: each allocation's caller */
static long hook_sites_max;

static void *(*next_malloc)(size_t);
static void *(*next_calloc)(size_t, size_t);
static void *(*next_realloc)(void *, size_t);
static int (*next_posix_memalign)(void **, size_t, size_t);
static void *(*next_aligned_alloc)(size_t, size_t);
static void *(*next_mallocx)(size_t, int);
static void (*next_free)(void *);

/* dlsym may calloc before next_calloc is known: a little static memory. */
static char boot_mem[4096] __attribute__((aligned(16)));
static size_t boot_used;

HOOK static void *boot_alloc(size_t n)
{
	n = (n + 15) & ~(size_t)15;
	if (boot_used + n > sizeof(boot_mem))
		return NULL;
	void *p = boot_mem + boot_used;
	boot_used += n;
	return p;
}

HOOK static bool is_boot(const void *p)
{
	return (const char *)p >= boot_mem && (const char *)p < boot_mem + sizeof(boot_mem);
}

HOOK static void hooks_init(void)
{
	static bool resolving;

	if (next_malloc || resolving)
		return;
	resolving = true;
	next_calloc = (void *(*)(size_t, size_t))dlsym(RTLD_NEXT, "calloc");
	next_malloc = (void *(*)(size_t))dlsym(RTLD_NEXT, "malloc");
	next_realloc = (void *(*)(void *, size_t))dlsym(RTLD_NEXT, "realloc");
	next_posix_memalign = (int (*)(void **, size_t, size_t))dlsym(RTLD_NEXT, "posix_memalign");
	next_aligned_alloc = (void *(*)(size_t, size_t))dlsym(RTLD_NEXT, "aligned_alloc");
	next_mallocx = (void *(*)(size_t, int))dlsym(RTLD_NEXT, "mallocx");
	next_free = (void (*)(void *))dlsym(RTLD_NEXT, "free");
	resolving = false;
}

/* Should this allocation fail?  In the dry run, note where it is made
 * from: a hash of the return addresses of its stack. */
HOOK static bool hook_fail(void)
{
	if (!hook_counted)
		return false;
	if (hook_count < hook_sites_max) {
		void *frames[8];
		int n = backtrace(frames, 8);
		uintptr_t h = 0;
		for (int f = 2; f < n; f++)   /* past this function and the hook */
			h = (h ^ (uintptr_t)frames[f]) * 0x100000001b3ull;
		hook_sites[hook_count] = (void *)h;
	}
	if (++hook_count != hook_fail_at)
		return false;
	hook_failed++;
	return true;
}

HOOK void *malloc(size_t n)
{
	hooks_init();
	if (!next_malloc)
		return boot_alloc(n);
	return hook_fail() ? NULL : next_malloc(n);
}

HOOK void *calloc(size_t k, size_t n)
{
	hooks_init();
	if (!next_calloc)
		return boot_alloc(k * n);   /* static memory is zeroed */
	return hook_fail() ? NULL : next_calloc(k, n);
}

HOOK void *realloc(void *p, size_t n)
{
	hooks_init();
	if (is_boot(p)) {   /* never grown in practice; copy out if it is */
		void *q = malloc(n);
		if (q)
			memcpy(q, p, n < sizeof(boot_mem) ? n : sizeof(boot_mem));
		return q;
	}
	return hook_fail() ? NULL : next_realloc(p, n);
}

HOOK int posix_memalign(void **out, size_t align, size_t n)
{
	hooks_init();
	return hook_fail() ? ENOMEM : next_posix_memalign(out, align, n);
}

HOOK void *aligned_alloc(size_t align, size_t n)
{
	hooks_init();
	return hook_fail() ? NULL : next_aligned_alloc(align, n);
}

void *mallocx(size_t n, int flags);
HOOK void *mallocx(size_t n, int flags)
{
	hooks_init();
	return hook_fail() ? NULL : next_mallocx(n, flags);
}

HOOK void free(void *p)
{
	hooks_init();
	if (!p || is_boot(p) || !next_free)   /* dlsym's own, while it resolves: kept */
		return;
	next_free(p);
}

/* ---- the backend: a fixed store ---- */

#define ROOT ((udc_ino)1)
#define SUB ((udc_ino)100)      /* "sub" in ROOT, renamed "sub2", removed */
#define FILLD ((udc_ino)200)    /* filled and completed */
#define NEGD ((udc_ino)300)     /* the 5000 negatives */
#define POSD ((udc_ino)301)     /* the 3000 positives */
#define LINK_INO ((udc_ino)777) /* "lnk" in ROOT -> "sub" */
#define NR_NEG 5000
#define NR_POS 3000

static int store_lookup(void *ctx, udc_ino dir, const char *name, size_t len,
			struct udc_attr *out)
{
	(void)ctx;
	struct {
		udc_ino dir;
		const char *name;
		udc_ino ino;
		uint32_t type;
	} const known[] = {
		{ ROOT, "lnk", LINK_INO, UDC_TYPE_SYMLINK }, { ROOT, "sub", SUB, UDC_TYPE_DIR },
		{ SUB, "t", 101, UDC_TYPE_REG },            { ROOT, "bq", 102, UDC_TYPE_REG },
	};
	for (size_t i = 0; i < sizeof(known) / sizeof(known[0]); i++)
		if (known[i].dir == dir && strlen(known[i].name) == len &&
		    !memcmp(known[i].name, name, len)) {
			*out = (struct udc_attr){ .ino = known[i].ino, .type = known[i].type,
						  .cookie = 9 };
			return 0;
		}
	return -ENOENT;
}

static ssize_t store_readlink(void *ctx, udc_ino ino, char *buf, size_t size)
{
	(void)ctx;
	if (ino != LINK_INO || size < 3)
		return -EINVAL;
	memcpy(buf, "sub", 3);
	return 3;
}

/* Every positive carries a value made from its ino (values too go
 * through the failing allocations): @ino's is value_of(ino) bytes. */
static size_t value_of(udc_ino ino, unsigned char *buf)
{
	size_t len = (size_t)(ino * 13 % 97);

	for (size_t i = 0; i < len; i++)
		buf[i] = (unsigned char)(ino + i);
	return len;
}

static int store_lookup_value(void *ctx, udc_ino dir, const char *name, size_t len,
			      struct udc_attr *out, void *value, size_t *value_len, uint32_t *ttl_ms)
{
	*ttl_ms = UDC_TTL_NONE;   /* the answers must not change with time */
	int r = store_lookup(ctx, dir, name, len, out);

	if (r == 0)
		*value_len = value_of(out->ino, value);
	return r;
}

static const struct udc_backend store = {
	.lookup = store_lookup,
	.readlink = store_readlink,
	.lookup_value = store_lookup_value,
};

/* ---- the script ---- */

enum op_kind {
	OP_ADD, OP_NEG, OP_REMOVE, OP_RENAME, OP_RMDIR, OP_INVAL, OP_INVAL_DIR, OP_FILL_BEGIN,
	OP_COMPLETE, OP_RESOLVE, OP_WALK, OP_LOOKUP, OP_SHRINK, OP_LIMIT, OP_STATS, OP_OFFLINE,
	OP_READDIR, OP_FORGET,
	OP_KINDS
};

struct op {
	enum op_kind kind;
	udc_ino dir;
	const char *name;
	udc_ino dir2;        /* rename's target dir, rmdir's dir, add's ino */
	const char *name2;   /* rename's target name, walk's path */
	uint64_t n;          /* add's type, shrink's and limit's bytes */
};

#define LONG_A "a-name-longer-than-the-sixty-four-bytes-an-entry-holds-inline-0123456789"
#define LONG_B "another-name-longer-than-sixty-four-bytes-so-stored-apart-from-its-entry"

/* One step each (designated, so that the fields a kind ignores stay 0). */
#define ADD(d, nm, ino) { .kind = OP_ADD, .dir = d, .name = nm, .dir2 = ino, .n = UDC_TYPE_REG }
#define ADD_DIR(d, nm, ino) { .kind = OP_ADD, .dir = d, .name = nm, .dir2 = ino, .n = UDC_TYPE_DIR }
#define NAMED(k, d, nm) { .kind = k, .dir = d, .name = nm }
#define RENAME(d, nm, d2, nm2) { .kind = OP_RENAME, .dir = d, .name = nm, .dir2 = d2, .name2 = nm2 }
#define RMDIR(d, nm, ino) { .kind = OP_RMDIR, .dir = d, .name = nm, .dir2 = ino }
#define OF_DIR(k, d) { .kind = k, .dir = d }
#define WALK(path) { .kind = OP_WALK, .name2 = path }
#define BYTES(k, b) { .kind = k, .n = b }
#define BARE(k) { .kind = k }

static const struct op prologue[] = {
	BYTES(OP_LIMIT, 8u << 20),
	ADD(ROOT, "a", 10),
	ADD_DIR(ROOT, "sub", SUB),
	ADD(SUB, "t", 101),
	NAMED(OP_NEG, ROOT, "n1"),
	ADD(ROOT, LONG_A, 11),
	NAMED(OP_NEG, ROOT, LONG_B),
	NAMED(OP_LOOKUP, ROOT, "a"),
	BARE(OP_STATS),
	NAMED(OP_RESOLVE, ROOT, "bq"),
	NAMED(OP_RESOLVE, ROOT, "zz"),
	NAMED(OP_INVAL, ROOT, "lnk"),
	WALK("/lnk/t"),
	WALK("lnk"),
	OF_DIR(OP_FILL_BEGIN, FILLD),
	ADD(FILLD, "x", 20),
	OF_DIR(OP_COMPLETE, FILLD),
	OF_DIR(OP_READDIR, FILLD),
	NAMED(OP_LOOKUP, FILLD, "y"),
	NAMED(OP_REMOVE, ROOT, "a"),
	RENAME(ROOT, LONG_A, SUB, "moved"),
	RENAME(ROOT, "sub", ROOT, "sub2"),
	NAMED(OP_INVAL, ROOT, "n1"),
	BARE(OP_OFFLINE),
	{ .kind = OP_FORGET, .dir2 = 101 },   /* "t" in sub */
	RMDIR(ROOT, "sub2", SUB),
	OF_DIR(OP_INVAL_DIR, FILLD),
};

/* After the negatives: a small limit, then the positives (build_script). */
static const struct op epilogue[] = {
	BYTES(OP_SHRINK, 64u << 10),
	BYTES(OP_LIMIT, 1u << 20),
};

static const struct op finale[] = {
	OF_DIR(OP_INVAL_DIR, NEGD),
	BARE(OP_STATS),
	BYTES(OP_SHRINK, SIZE_MAX),
	ADD(ROOT, "last", 30),
};

static struct op *script;
static size_t nr_steps;          /* step 0 is udc_create, script[1..] */
static char (*fill_names)[16];   /* "f0000".. then "p0000".. */

static void push(const struct op *o)
{
	script[nr_steps++] = *o;
}

static void build_script(void)
{
	size_t max = 1 + sizeof(prologue) / sizeof(prologue[0]) + NR_NEG + NR_POS +
		     sizeof(epilogue) / sizeof(epilogue[0]) + sizeof(finale) / sizeof(finale[0]);

	script = calloc(max, sizeof(*script));
	fill_names = calloc(NR_NEG + NR_POS, sizeof(*fill_names));
	nr_steps = 1;
	for (size_t i = 0; i < sizeof(prologue) / sizeof(prologue[0]); i++)
		push(&prologue[i]);
	for (unsigned i = 0; i < NR_NEG; i++) {
		snprintf(fill_names[i], sizeof(fill_names[i]), "f%04u", i);
		push(&(struct op)NAMED(OP_NEG, NEGD, fill_names[i]));
	}
	for (size_t i = 0; i < sizeof(epilogue) / sizeof(epilogue[0]); i++)
		push(&epilogue[i]);
	for (unsigned i = 0; i < NR_POS; i++) {
		snprintf(fill_names[NR_NEG + i], sizeof(fill_names[0]), "p%04u", i);
		push(&(struct op)ADD(POSD, fill_names[NR_NEG + i], 1000 + i));
	}
	for (size_t i = 0; i < sizeof(finale) / sizeof(finale[0]); i++)
		push(&finale[i]);
}

/* ---- the names whose answers are compared ---- */

struct name {
	udc_ino dir;
	const char *name;
};

struct answer {
	int r;
	struct udc_attr a;
	size_t vlen;
	unsigned char v[UDC_VALUE_MAX];
};

static struct name names[NR_NEG + NR_POS + 64];
static size_t nr_names, nr_special;   /* the special ones come first */

static void track(udc_ino dir, const char *name)
{
	if (!dir || !name || name[0] == '/')
		return;
	for (size_t i = 0; i < nr_names; i++)
		if (names[i].dir == dir && !strcmp(names[i].name, name))
			return;
	names[nr_names++] = (struct name){ dir, name };
}

static void build_names(void)
{
	static const struct name extra[] = {
		{ ROOT, "lnk" }, { ROOT, "sub2" }, { SUB, "moved" }, { FILLD, "y" }, { ROOT, ".." },
	};
	for (size_t i = 0; i < sizeof(extra) / sizeof(extra[0]); i++)
		track(extra[i].dir, extra[i].name);
	for (size_t i = 1; i < nr_steps; i++)
		if (script[i].dir != NEGD && script[i].dir != POSD) {
			track(script[i].dir, script[i].name);
			if (script[i].kind == OP_RENAME)
				track(script[i].dir2, script[i].name2);
		}
	nr_special = nr_names;
	for (unsigned i = 0; i < NR_NEG + NR_POS; i++)
		names[nr_names++] = (struct name){ i < NR_NEG ? NEGD : POSD, fill_names[i] };
}

static struct answer answer_of(udc_cache *c, const struct name *n)
{
	struct answer x = { 0 };

	x.vlen = sizeof(x.v);
	x.r = udc_lookup_value(c, n->dir, n->name, strlen(n->name), &x.a, x.v, &x.vlen);
	if (x.r != UDC_POSITIVE)
		x.a = (struct udc_attr){ 0 };
	return x;
}

static bool same(const struct answer *x, const struct answer *y)
{
	return x->r == y->r && x->a.ino == y->a.ino && x->a.type == y->a.type &&
	       x->a.cookie == y->a.cookie && x->vlen == y->vlen &&
	       memcmp(x->v, y->v, x->vlen) == 0;
}

static void snapshot(udc_cache *c, struct answer *out, size_t n)
{
	for (size_t i = 0; i < n; i++)
		out[i] = answer_of(c, &names[i]);
}

/* The name a fill step is about (the special names are compared apart). */
static long own_name(size_t step)
{
	const struct op *o = &script[step];

	if ((o->dir != NEGD && o->dir != POSD) || !o->name)
		return -1;
	return (long)nr_special + (o->dir == POSD ? NR_NEG : 0) + atol(o->name + 1);
}

/* ---- running it ---- */

struct run {
	udc_cache *c;
	struct udc_fill fill;
};

static udc_cache *make_cache(uint32_t flags)
{
	struct udc_config cfg = UDC_CONFIG_INIT;

	cfg.root = ROOT;
	cfg.backend = &store;
	cfg.hash_key[0] = 0x0123456789abcdefull;   /* the same table layout every run */
	cfg.hash_key[1] = 0xfedcba9876543210ull;
	cfg.flags = flags;
	cfg.memory_limit = 8u << 20;
	return udc_create(&cfg);
}

static int count_name(void *arg, const struct udc_dirent *ent)
{
	(void)ent;
	++*(unsigned long *)arg;
	return 0;
}

/* Step @i's call: its return value (0 for calls that return none). */
static long step_run(struct run *r, size_t i)
{
	const struct op *o = &script[i];
	udc_cache *c = r->c;
	struct udc_attr a = { .ino = o->dir2, .type = (uint32_t)o->n, .cookie = o->dir2 * 3 };
	struct udc_stats st = { .size = sizeof(st) };
	size_t len = o->name ? strlen(o->name) : 0;
	unsigned char v[UDC_VALUE_MAX];
	size_t vlen = sizeof(v);

	switch (o->kind) {
	case OP_ADD:
		return udc_add_value(c, o->dir, o->name, len, &a, v, value_of(a.ino, v), 0);
	case OP_NEG:
		return udc_add_negative(c, o->dir, o->name, len, 0);
	case OP_REMOVE:
		return udc_remove(c, o->dir, o->name, len);
	case OP_RENAME:
		return udc_rename(c, o->dir, o->name, len, o->dir2, o->name2, strlen(o->name2),
				  UDC_INO_NONE);
	case OP_RMDIR:
		return udc_rmdir(c, o->dir, o->name, len, o->dir2);
	case OP_INVAL:
		return udc_invalidate(c, o->dir, o->name, len);
	case OP_INVAL_DIR:
		return udc_invalidate_dir(c, o->dir);
	case OP_FILL_BEGIN:
		return udc_dir_fill_begin(c, o->dir, &r->fill);
	case OP_COMPLETE:
		return udc_dir_complete(c, o->dir, &r->fill);
	case OP_RESOLVE:
		return udc_resolve_value(c, o->dir, o->name, len, NULL, &a, v, &vlen, NULL);
	case OP_WALK:
		return udc_walk(c, ROOT, o->name2, strlen(o->name2), UDC_WALK_FOLLOW, NULL, &a);
	case OP_LOOKUP:
		return udc_lookup(c, o->dir, o->name, len, &a);
	case OP_SHRINK:
		udc_shrink(c, (size_t)o->n);
		return 0;
	case OP_LIMIT:
		return udc_set_memory_limit(c, (size_t)o->n);
	case OP_STATS:
		udc_stats_get(c, &st);
		return 0;
	case OP_OFFLINE:
		udc_thread_offline(c);
		udc_thread_online(c);
		return 0;
	case OP_READDIR: {
		unsigned long n = 0;
		long rr = udc_readdir(c, o->dir, 0, count_name, &n);
		return rr ? rr : (long)n;   /* the names listed */
	}
	case OP_FORGET:
		return udc_forget_ino(c, o->dir2);
	case OP_KINDS:
		break;
	}
	abort();
}

static long *dry_ret;                 /* each step's result */
static long *dry_allocs;              /* each step's counted allocations */
static struct answer *dry_special;    /* [step][special name] after the step */
static struct answer *dry_own;        /* [step] the fill step's own name after it */
static unsigned long failures;

#define FAIL(...)                                                   \
	do {                                                        \
		fprintf(stderr, "fault_inject: FAIL: " __VA_ARGS__); \
		fputc('\n', stderr);                                \
		failures++;                                         \
	} while (0)

static const char *op_names[] = {
	"add", "add_negative", "remove", "rename", "rmdir", "invalidate", "invalidate_dir",
	"dir_fill_begin", "dir_complete", "resolve", "walk", "lookup", "shrink",
	"set_memory_limit", "stats_get", "thread_offline/online", "readdir", "forget_ino",
};
_Static_assert(sizeof(op_names) / sizeof(op_names[0]) == OP_KINDS, "a name for each kind");

static void dry_run(void)
{
	struct run r = { 0 };

	dry_ret = calloc(nr_steps, sizeof(*dry_ret));
	dry_allocs = calloc(nr_steps, sizeof(*dry_allocs));
	dry_special = calloc(nr_steps * nr_special, sizeof(*dry_special));
	dry_own = calloc(nr_steps, sizeof(*dry_own));
	hook_sites = calloc((size_t)1 << 20, sizeof(*hook_sites));
	hook_sites_max = 1 << 20;
	hook_fail_at = 0;
	hook_count = 0;
	r.c = make_cache(UDC_CFG_NO_RECLAIM_THREAD);
	dry_allocs[0] = hook_count;
	if (!r.c) {
		fprintf(stderr, "fault_inject: udc_create failed with no failure injected\n");
		exit(1);
	}
	for (size_t i = 1; i < nr_steps; i++) {
		long before = hook_count;
		dry_ret[i] = step_run(&r, i);
		dry_allocs[i] = hook_count - before;
		snapshot(r.c, &dry_special[i * nr_special], nr_special);
		long own = own_name(i);
		if (own >= 0)
			dry_own[i] = answer_of(r.c, &names[own]);
	}
	struct udc_stats st = { .size = sizeof(st) };
	udc_stats_get(r.c, &st);
	printf("fault_inject: dry run: %zu steps, %ld allocations counted, %llu evictions\n",
	       nr_steps, hook_count, (unsigned long long)st.evictions);
	/* udc_destroy cannot report a failure, so it must not allocate at all
	 * (it waits for its own callbacks, not with rcu_barrier, which does). */
	long before_destroy = hook_count;
	udc_destroy(r.c);
	if (hook_count != before_destroy) {
		fprintf(stderr, "fault_inject: udc_destroy allocated %ld times\n",
			hook_count - before_destroy);
		exit(1);
	}
	hook_sites_max = 0;   /* the injection runs do not overwrite them */
}

/* Fail the @k-th allocation of step @i.  Returns whether it was reached. */
static bool inject(size_t i, long k, struct answer *pre, struct answer *post, long *outcome)
{
	struct run r = { 0 };

	hook_fail_at = 0;
	hook_count = 0;
	if (i > 0) {
		r.c = make_cache(UDC_CFG_NO_RECLAIM_THREAD);
		for (size_t j = 1; j < i; j++)
			step_run(&r, j);
		snapshot(r.c, pre, nr_names);
	}
	long failed = hook_failed;
	hook_count = 0;
	hook_fail_at = k;
	long ret;
	if (i == 0) {
		errno = 0;
		r.c = make_cache(UDC_CFG_NO_RECLAIM_THREAD);
		ret = r.c ? 0 : -errno;
	} else {
		ret = step_run(&r, i);
	}
	hook_fail_at = 0;
	bool reached = hook_failed != failed;
	const char *what = i ? op_names[script[i].kind] : "create";

	if (reached && i == 0) {
		*outcome = ret;
		if (ret && ret != -ENOMEM)
			FAIL("udc_create, allocation %ld failed: errno %ld, not ENOMEM", k, -ret);
	} else if (reached) {
		*outcome = ret;
		snapshot(r.c, post, nr_names);
		long own = own_name(i);
		/* resolve and walk cache what the backend said on the way, before
		 * the allocation that failed: right answers, as the dry run's */
		bool learns = script[i].kind == OP_RESOLVE || script[i].kind == OP_WALK;
		/* the embedder's way back to a correct cache never fails */
		bool never_fails = script[i].kind == OP_REMOVE || script[i].kind == OP_RMDIR ||
				   script[i].kind == OP_INVAL || script[i].kind == OP_INVAL_DIR ||
				   script[i].kind == OP_FORGET;
		if (ret == -ENOMEM && never_fails)
			FAIL("step %zu (%s), allocation %ld failed: -ENOMEM from a call that "
			     "must not fail", i, what, k);
		if (ret == -ENOMEM && !learns) {
			for (size_t n = 0; n < nr_names; n++)
				if (!same(&pre[n], &post[n]))
					FAIL("step %zu (%s), allocation %ld failed: -ENOMEM but "
					     "(%llu, %s) went from %d to %d",
					     i, what, k, (unsigned long long)names[n].dir,
					     names[n].name, pre[n].r, post[n].r);
		} else if (ret != dry_ret[i] && ret != -ENOMEM) {
			FAIL("step %zu (%s), allocation %ld failed: returned %ld, dry run %ld", i,
			     what, k, ret, dry_ret[i]);
		} else {
			for (size_t n = 0; n < nr_names; n++) {
				const struct answer *d = n < nr_special ? &dry_special[i * nr_special + n]
						: (long)n == own ? &dry_own[i] : NULL;
				if (!same(&pre[n], &post[n]) && post[n].r != UDC_MISS &&
				    !(d && same(d, &post[n])))
					FAIL("step %zu (%s), allocation %ld failed, degraded: "
					     "(%llu, %s) went from %d to %d",
					     i, what, k, (unsigned long long)names[n].dir,
					     names[n].name, pre[n].r, post[n].r);
			}
		}
		if (ret == -ENOMEM) {
			long again = step_run(&r, i);
			if (again != dry_ret[i])
				FAIL("step %zu (%s), retried after -ENOMEM: %ld, dry run %ld", i,
				     what, again, dry_ret[i]);
		}
	}
	udc_destroy(r.c);
	return reached;
}

int main(int argc, char **argv)
{
	struct timespec t0, t1;
	/* --every: every allocation of every step, not each (call, site) once
	 * (about 5500 injections, minutes: a soak, not CI's run) */
	bool every = argc > 1 && strcmp(argv[1], "--every") == 0;

	if (argc > 1 && !every) {
		fprintf(stderr, "usage: fault_inject [--every]\n");
		return 2;
	}

	clock_gettime(CLOCK_MONOTONIC, &t0);
	setvbuf(stdout, NULL, _IONBF, 0);
	build_script();
	build_names();
	struct answer *pre = calloc(nr_names, sizeof(*pre));
	struct answer *post = calloc(nr_names, sizeof(*post));

	/* liburcu's call_rcu thread is made once per process, by the first
	 * udc_create (engine/cache.c): made here, before anything is
	 * failed, as its failure is an abort inside liburcu. */
	udc_destroy(make_cache(UDC_CFG_NO_RECLAIM_THREAD));
	void *warm[1];
	backtrace(warm, 1);   /* loads the unwinder now: it allocates the first time */
	hook_counted = true;
	dry_run();

	/*
	 * Each (public call, allocation site) once: the 5000 and 3000 fills
	 * repeat the same few thousand times, and replaying the script up to
	 * each would take minutes.  The site is the allocator's caller
	 * (udcache, liburcu or glibc code), as the dry run saw it.
	 */
	static struct {
		size_t kind;
		void *site;
	} seen[4096];
	size_t nr_seen = 0;
	unsigned long points = 0, enomem = 0, degraded = 0, unreached = 0, repeats = 0;
	unsigned long by_kind[OP_KINDS + 1][2] = { { 0 } };
	long first = 0;   /* the dry run's index of step i's first allocation */
	for (size_t i = 0; i < nr_steps; first += dry_allocs[i], i++)
		for (long k = 1; k <= dry_allocs[i]; k++) {
			size_t kind = i ? script[i].kind + 1 : 0;
			void *site = hook_sites[first + k - 1];
			size_t s;
			for (s = 0; s < nr_seen && (seen[s].kind != kind || seen[s].site != site); s++)
				;
			if (s < nr_seen && !every) {
				repeats++;
				continue;
			}
			if (nr_seen < sizeof(seen) / sizeof(seen[0]))
				seen[nr_seen++] = (__typeof__(seen[0])){ kind, site };
			long outcome = 0;
			if (!inject(i, k, pre, post, &outcome)) {
				unreached++;
				continue;
			}
			points++;
			by_kind[kind][outcome == -ENOMEM]++;
			if (outcome == -ENOMEM)
				enomem++;
			else
				degraded++;
		}

	/* udc_create with the reclaim thread: pthread_create's allocations. */
	hook_count = 0;
	udc_destroy(make_cache(0));
	long create_allocs = hook_count;
	for (long k = 1; k <= create_allocs; k++) {
		long failed = hook_failed;
		hook_count = 0;
		hook_fail_at = k;
		errno = 0;
		udc_cache *c = make_cache(0);
		int err = errno;
		hook_fail_at = 0;
		if (hook_failed == failed) {
			unreached++;
		} else {
			points++;
			if (!c && err != ENOMEM)
				FAIL("udc_create (reclaim thread), allocation %ld failed: errno %d", k,
				     err);
			c ? degraded++ : enomem++;
		}
		udc_destroy(c);
	}
	hook_counted = false;

	clock_gettime(CLOCK_MONOTONIC, &t1);
	printf("fault_inject: %lu injection points: %lu -ENOMEM, %lu degraded (call "
	       "succeeded), %lu not reached, %lu repeats of a call's site skipped; "
	       "%lu failures; %.1f s\n",
	       points, enomem, degraded, unreached, repeats, failures,
	       (double)(t1.tv_sec - t0.tv_sec) + (double)(t1.tv_nsec - t0.tv_nsec) / 1e9);
	for (size_t kind = 0; kind < OP_KINDS + 1; kind++)
		if (by_kind[kind][0] + by_kind[kind][1])
			printf("  %-22s %4lu -ENOMEM %4lu degraded\n",
			       kind ? op_names[kind - 1] : "create", by_kind[kind][1],
			       by_kind[kind][0]);
	free(pre);
	free(post);
	free(dry_ret);
	free(dry_allocs);
	free(dry_special);
	free(dry_own);
	free(fill_names);
	free(script);
	return failures ? 1 : 0;
}
