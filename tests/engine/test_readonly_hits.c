/*
 * tests/engine/test_readonly_hits.c - the hit path writes nothing shared.
 *
 * entry_pages_read_only: after a warm-up that saturates every entry's hit
 * counter, the pages that hold the entries are made read-only
 * (slab_protect_pages, a test hook), and two threads run a million
 * positive and negative lookup hits each: any store to an entry page would
 * fault and crash the test.
 *
 * shared_memory_unchanged: the same for everything else a hit reads, and
 * for every kind of hit (udc_lookup positive and negative, "..",
 * udc_resolve answered from the cache, udc_walk through cached
 * directories and ".."): the cache struct (with its stripes), the shrink
 * struct, both tables' structs and bucket arrays, and every directory
 * object are compared byte for byte before and after, and (but in
 * sanitizer builds, whose allocators keep their own headers beside the
 * objects) their pages are read-only meanwhile, so that even a store that
 * writes a value back (a pin and its unpin, a lock and its unlock) faults
 * and is reported with the region it hit.  Only the calling thread's own
 * stats slot may change.  SCALING.md counts the shared lines each path
 * writes; this is the check of its hit rows.
 */
#include <criterion/criterion.h>
#include <pthread.h>
#include <stdio.h>
#include <sys/mman.h>
#include <time.h>

#include <signal.h>
#include <stdlib.h>
#include <unistd.h>

#include "engine/internal.h"
#include "engine/table.h"
#include "shrink/internal.h"   /* worker_busy, struct shrink */

#define RO_NAMES 20000
#define RO_LOOKUPS 1000000
#define RO_DIR ((udc_ino)7)

static udc_cache *ro_cache;

static int ro_name(char *buf, size_t size, unsigned i)
{
	return snprintf(buf, size, "%s%u-padded-name", i % 4 == 0 ? "neg" : "pos", i);
}

struct ro_worker {
	unsigned seed;
	unsigned long wrong;
};

static void *ro_lookups(void *arg)
{
	struct ro_worker *w = arg;
	unsigned x = w->seed;
	char nm[64];

	for (unsigned k = 0; k < RO_LOOKUPS; k++) {
		x = x * 1103515245u + 12345u;
		unsigned i = (x >> 8) % RO_NAMES;
		int n = ro_name(nm, sizeof(nm), i);
		struct udc_attr a;
		int r = udc_lookup(ro_cache, RO_DIR, nm, (size_t)n, &a);
		if (i % 4 == 0 ? r != UDC_NEGATIVE : (r != UDC_POSITIVE || a.ino != 1000 + i))
			w->wrong++;
	}
	return NULL;
}

Test(readonly_hits, entry_pages_read_only, .timeout = 120)
{
	struct udc_config cfg = UDC_CONFIG_INIT;
	char nm[64];

	cfg.root = 1;
	cfg.memory_limit = (size_t)1 << 30;
	cfg.flags = UDC_CFG_NO_RECLAIM_THREAD;
	ro_cache = udc_create(&cfg);
	cr_assert_not_null(ro_cache);
	for (unsigned i = 0; i < RO_NAMES; i++) {
		int n = ro_name(nm, sizeof(nm), i);
		struct udc_attr a = { .ino = 1000 + i, .type = UDC_TYPE_REG, .cookie = i };
		int r = i % 4 == 0 ? udc_add_negative(ro_cache, RO_DIR, nm, (size_t)n, 0)
				   : udc_add(ro_cache, RO_DIR, nm, (size_t)n, &a);
		cr_assert_eq(r, 0);
	}
	/* Warm-up: every counter reaches HITS_MAX, after which hits store nothing. */
	for (unsigned round = 0; round < HITS_MAX; round++)
		for (unsigned i = 0; i < RO_NAMES; i++) {
			int n = ro_name(nm, sizeof(nm), i);
			cr_assert_neq(udc_lookup(ro_cache, RO_DIR, nm, (size_t)n, NULL), UDC_MISS);
		}
	/*
	 * A resize links bucket nodes into the entries' chains (a store to
	 * entry pages that no lookup makes), but none can run below: the
	 * tables do not auto-resize (engine/cache.c), only a reclaim pass
	 * resizes them, and with no reclaim thread passes run only in
	 * mutating calls, which are all done; a resize of more than 8,192
	 * buckets that a call started runs in a resizer thread, waited for
	 * here (it crashed the test now and then, under load).
	 */
	while (atomic_load(&ro_cache->shrink->worker_busy)) {
		struct timespec ms = { 0, 1000000 };
		nanosleep(&ms, NULL);
	}
	/* The workers register and make their stats slots on their first
	 * call: none of that lives in entry pages. */
	struct ro_worker w[2] = { { .seed = 1 }, { .seed = 2 } };
	for (unsigned k = 0; k < 2; k++)
		cr_assert_eq(slab_protect_pages(ro_cache->slabs[k], PROT_READ), 0);

	pthread_t t[2];
	for (unsigned k = 0; k < 2; k++)
		cr_assert_eq(pthread_create(&t[k], NULL, ro_lookups, &w[k]), 0);
	for (unsigned k = 0; k < 2; k++)
		pthread_join(t[k], NULL);

	for (unsigned k = 0; k < 2; k++)
		cr_assert_eq(slab_protect_pages(ro_cache->slabs[k], PROT_READ | PROT_WRITE), 0);
	cr_assert_eq(w[0].wrong + w[1].wrong, 0, "%lu wrong answers", w[0].wrong + w[1].wrong);
	struct udc_stats st = { .size = sizeof(st) };
	udc_stats_get(ro_cache, &st);
	cr_assert_geq(st.hits_positive + st.hits_negative, 2ull * RO_LOOKUPS);
	udc_destroy(ro_cache);
}

/* ------------------------------------------------------------------ */

#define SH_DIRS 8
#define SH_NAMES 2000            /* per directory, a quarter negative */
#define SH_OPS 200000            /* per thread */
#define SH_ROOT ((udc_ino)1)
#define SH_REGIONS_MAX 256
#if defined(__SANITIZE_ADDRESS__) || defined(__SANITIZE_THREAD__)
#define SH_PROTECT 0   /* the allocator's own headers sit beside the objects */
#else
#define SH_PROTECT 1
#endif

static udc_ino sh_dir_ino(unsigned k)
{
	return 100 + k;
}

static udc_ino sh_name_ino(unsigned k, unsigned i)
{
	return 10000 + (udc_ino)k * SH_NAMES + i;
}

struct sh_region {
	const char *what;
	char *p;
	size_t len;
	char *copy;
};

static struct sh_region sh_regions[SH_REGIONS_MAX];
static unsigned sh_nr_regions;
static udc_cache *sh_cache;
static pthread_barrier_t sh_ready, sh_go, sh_done;

static void sh_region_add(void *arg, const char *what, void *p, size_t len)
{
	(void)arg;
	cr_assert_lt(sh_nr_regions, SH_REGIONS_MAX, "more regions than the test keeps");
	sh_regions[sh_nr_regions++] = (struct sh_region){ .what = what, .p = p, .len = len };
}

/* Every region a hit reads, but entry pages (the other test's). */
static void sh_regions_collect(struct udc_cache *c)
{
	struct cds_lfht_iter it;
	struct cds_lfht_node *n;

	sh_region_add(NULL, "cache struct", c,
		      sizeof(*c) + (c->stripe_mask + 1) * sizeof(struct stripe));
	sh_region_add(NULL, "shrink struct", c->shrink, sizeof(*c->shrink));
	name_table_memory(&c->names, sh_region_add, NULL);
	table_memory(c->dirs, sh_region_add, NULL);
	rcu_read_lock();
	table_for_each(c->dirs, &it, n) {
		struct udc_dir *d = dir_of(n);
		sh_region_add(NULL, "directory object", d, sizeof(*d));
		if (dir_ext_rcu(d))
			sh_region_add(NULL, "directory extension", dir_ext_rcu(d), sizeof(struct dir_ext));
	}
	rcu_read_unlock();
}

static void sh_pages(int prot)
{
	long pg = sysconf(_SC_PAGESIZE);

	for (unsigned r = 0; r < sh_nr_regions; r++) {
		uintptr_t a = (uintptr_t)sh_regions[r].p & ~(uintptr_t)(pg - 1);
		uintptr_t b = ((uintptr_t)sh_regions[r].p + sh_regions[r].len + (uintptr_t)pg - 1) &
			      ~(uintptr_t)(pg - 1);
		cr_assert_eq(mprotect((void *)a, b - a, prot), 0, "mprotect: %s", strerror(errno));
	}
}

/* A store to a protected page: say which region it hit, and die. */
static void sh_fault(int sig, siginfo_t *si, void *uc)
{
	(void)sig;
	(void)uc;
	char msg[256];
	uintptr_t at = (uintptr_t)si->si_addr;
	const char *what = "a page shared with a region (a neighbour of it)";
	size_t off = 0;

	for (unsigned r = 0; r < sh_nr_regions; r++)
		if (at >= (uintptr_t)sh_regions[r].p && at < (uintptr_t)sh_regions[r].p + sh_regions[r].len) {
			what = sh_regions[r].what;
			off = at - (uintptr_t)sh_regions[r].p;
		}
	int n = snprintf(msg, sizeof(msg), "a hit wrote to the %s, offset %zu (address %p)\n", what,
			 off, si->si_addr);
	if (write(STDERR_FILENO, msg, (size_t)n) < 0)
		_exit(71);
	_exit(70);
}

struct sh_worker {
	unsigned seed;
	unsigned long wrong;
};

static int sh_name(char *buf, size_t size, unsigned i)
{
	return snprintf(buf, size, "%s%u-name", i % 4 == 0 ? "neg" : "pos", i);
}

/* One hit of a kind chosen by x; false if its answer was wrong. */
static bool sh_hit(unsigned x)
{
	char nm[64], path[128];
	unsigned k = (x >> 4) % SH_DIRS, i = (x >> 8) % SH_NAMES, j = (x >> 20) % SH_DIRS;
	int n = sh_name(nm, sizeof(nm), i);
	bool pos = i % 4 != 0;
	struct udc_attr a;
	int r;

	switch (x % 6) {
	case 0:
		r = udc_lookup(sh_cache, sh_dir_ino(k), nm, (size_t)n, &a);
		return pos ? r == UDC_POSITIVE && a.ino == sh_name_ino(k, i) : r == UDC_NEGATIVE;
	case 1:
		r = udc_resolve(sh_cache, sh_dir_ino(k), nm, (size_t)n, NULL, &a);
		return pos ? r == 0 && a.ino == sh_name_ino(k, i) : r == -ENOENT;
	case 2:
		r = udc_lookup(sh_cache, sh_dir_ino(k), "..", 2, &a);
		return r == UDC_POSITIVE && a.ino == SH_ROOT;
	case 3:
		n = snprintf(path, sizeof(path), "/d%u/%s", k, nm);
		r = udc_walk(sh_cache, SH_ROOT, path, (size_t)n, 0, NULL, &a);
		return pos ? r == 0 && a.ino == sh_name_ino(k, i) : r == -ENOENT;
	case 4:
		n = snprintf(path, sizeof(path), "/d%u/../d%u/%s", j, k, nm);
		r = udc_walk(sh_cache, SH_ROOT, path, (size_t)n, 0, NULL, &a);
		return pos ? r == 0 && a.ino == sh_name_ino(k, i) : r == -ENOENT;
	default:
		n = snprintf(path, sizeof(path), "d%u/..", k);
		r = udc_walk(sh_cache, SH_ROOT, path, (size_t)n, 0, NULL, &a);
		return r == 0 && a.ino == SH_ROOT;
	}
}

static void *sh_hits(void *arg)
{
	struct sh_worker *w = arg;
	unsigned x = w->seed;

	/* First call: RCU registration and this thread's stats slot, made
	 * before the regions are taken. */
	if (!sh_hit(x))
		w->wrong++;
	pthread_barrier_wait(&sh_ready);
	pthread_barrier_wait(&sh_go);
	for (unsigned k = 0; k < SH_OPS; k++) {
		x = x * 1103515245u + 12345u;
		if (!sh_hit(x))
			w->wrong++;
	}
	pthread_barrier_wait(&sh_done);
	return NULL;
}

Test(readonly_hits, shared_memory_unchanged, .timeout = 120)
{
	struct udc_config cfg = UDC_CONFIG_INIT;
	char nm[64], dn[16];
	unsigned seed = (unsigned)time(NULL);

	fprintf(stderr, "readonly_hits/shared_memory_unchanged: seed %u\n", seed);
	cfg.root = SH_ROOT;
	cfg.memory_limit = (size_t)1 << 30;
	cfg.flags = UDC_CFG_NO_RECLAIM_THREAD;
	sh_cache = udc_create(&cfg);
	cr_assert_not_null(sh_cache);
	for (unsigned k = 0; k < SH_DIRS; k++) {
		int n = snprintf(dn, sizeof(dn), "d%u", k);
		struct udc_attr a = { .ino = sh_dir_ino(k), .type = UDC_TYPE_DIR };
		cr_assert_eq(udc_add(sh_cache, SH_ROOT, dn, (size_t)n, &a), 0);
		struct udc_attr up = { .ino = SH_ROOT, .type = UDC_TYPE_DIR };
		cr_assert_eq(udc_add(sh_cache, sh_dir_ino(k), "..", 2, &up), 0);   /* its ".." */
		for (unsigned i = 0; i < SH_NAMES; i++) {
			n = sh_name(nm, sizeof(nm), i);
			struct udc_attr f = { .ino = sh_name_ino(k, i), .type = UDC_TYPE_REG };
			cr_assert_eq(i % 4 == 0 ? udc_add_negative(sh_cache, sh_dir_ino(k), nm, (size_t)n, 0)
						: udc_add(sh_cache, sh_dir_ino(k), nm, (size_t)n, &f),
				     0);
		}
	}
	/* Warm-up: every entry's hit counter (names and the root's "dK") at
	 * HITS_MAX, after which hits store nothing to entries. */
	for (unsigned round = 0; round < HITS_MAX; round++)
		for (unsigned k = 0; k < SH_DIRS; k++) {
			int n = snprintf(dn, sizeof(dn), "d%u", k);
			cr_assert_eq(udc_lookup(sh_cache, SH_ROOT, dn, (size_t)n, NULL), UDC_POSITIVE);
			for (unsigned i = 0; i < SH_NAMES; i++) {
				n = sh_name(nm, sizeof(nm), i);
				cr_assert_neq(udc_lookup(sh_cache, sh_dir_ino(k), nm, (size_t)n, NULL),
					      UDC_MISS);
			}
		}

	struct sh_worker w[2] = { { .seed = seed }, { .seed = seed * 7919u + 1 } };
	pthread_t t[2];
	cr_assert_eq(pthread_barrier_init(&sh_ready, NULL, 3), 0);
	cr_assert_eq(pthread_barrier_init(&sh_go, NULL, 3), 0);
	cr_assert_eq(pthread_barrier_init(&sh_done, NULL, 3), 0);
	for (unsigned k = 0; k < 2; k++)
		cr_assert_eq(pthread_create(&t[k], NULL, sh_hits, &w[k]), 0);
	pthread_barrier_wait(&sh_ready);

	/* Quiet: the adds' deferred frees landed, no resize running. */
	rcu_barrier();
	while (atomic_load(&sh_cache->shrink->worker_busy)) {
		struct timespec ms = { 0, 1000000 };
		nanosleep(&ms, NULL);
	}
	sh_regions_collect(sh_cache);
	for (unsigned r = 0; r < sh_nr_regions; r++) {
		sh_regions[r].copy = malloc(sh_regions[r].len);
		cr_assert_not_null(sh_regions[r].copy);
		memcpy(sh_regions[r].copy, sh_regions[r].p, sh_regions[r].len);
	}
	cr_assert_geq(sh_nr_regions, 4 + SH_DIRS, "the regions: %u", sh_nr_regions);
	struct sigaction sa = { .sa_sigaction = sh_fault, .sa_flags = SA_SIGINFO };
	if (SH_PROTECT) {
		cr_assert_eq(sigaction(SIGSEGV, &sa, NULL), 0);
		sh_pages(PROT_READ);
	}
	pthread_barrier_wait(&sh_go);
	pthread_barrier_wait(&sh_done);
	if (SH_PROTECT)
		sh_pages(PROT_READ | PROT_WRITE);
	for (unsigned k = 0; k < 2; k++)
		pthread_join(t[k], NULL);

	for (unsigned r = 0; r < sh_nr_regions; r++) {
		size_t off = 0;
		while (off < sh_regions[r].len && sh_regions[r].p[off] == sh_regions[r].copy[off])
			off++;
		cr_expect_eq(off, sh_regions[r].len, "the hits changed the %s at offset %zu", sh_regions[r].what,
			     off);
		free(sh_regions[r].copy);
	}
	cr_assert_eq(w[0].wrong + w[1].wrong, 0, "%lu wrong answers", w[0].wrong + w[1].wrong);
	pthread_barrier_destroy(&sh_ready);
	pthread_barrier_destroy(&sh_go);
	pthread_barrier_destroy(&sh_done);
	udc_destroy(sh_cache);
}
