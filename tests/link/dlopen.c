/* SPDX-License-Identifier: MIT */
/*
 * tests/link/dlopen.c - libudcache.so loaded by dlopen, as a plugin is.
 *
 * Some of the library's thread-locals are initial-exec (engine/internal.h),
 * so glibc places its TLS block in the static TLS surplus it keeps for
 * libraries loaded later, in every thread, the ones started before the
 * dlopen included; liburcu's reader record, which its hit path reads
 * inline, goes through TLS descriptors (CMakeLists.txt), as initial-exec
 * for it would make this dlopen fail.
 * This checks that the load works and that a thread started before it and
 * one started after both use the cache: registration, stats slots, hits.
 *
 * Usage: udc-dlopen-test PATH-TO-libudcache.so
 */
#include <dlfcn.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <udcache.h>

static udc_cache *(*create)(const struct udc_config *);
static int (*add)(udc_cache *, udc_ino, const char *, size_t, const struct udc_attr *);
static int (*lookup)(udc_cache *, udc_ino, const char *, size_t, struct udc_attr *);
static void (*stats_get)(udc_cache *, struct udc_stats *);
static void (*destroy)(udc_cache *);

static udc_cache *cache;
static pthread_barrier_t loaded;

#define LOOKUPS 1000

/* LOOKUPS hits of "f" in the root; the number that hit. */
static void *hitter(void *arg)
{
	long n = 0;

	if (arg)   /* started before the dlopen: wait for it */
		pthread_barrier_wait(&loaded);
	for (int i = 0; i < LOOKUPS; i++) {
		struct udc_attr a;
		n += lookup(cache, 1, "f", 1, &a) == UDC_POSITIVE && a.ino == 2;
	}
	return (void *)n;
}

static void *sym(void *h, const char *name)
{
	void *p = dlsym(h, name);

	if (!p) {
		fprintf(stderr, "dlopen-test: dlsym(%s): %s\n", name, dlerror());
		exit(1);
	}
	return p;
}

int main(int argc, char **argv)
{
	pthread_t early, late;

	if (argc != 2) {
		fprintf(stderr, "usage: %s PATH-TO-libudcache.so\n", argv[0]);
		return 2;
	}
	pthread_barrier_init(&loaded, NULL, 2);
	if (pthread_create(&early, NULL, hitter, (void *)1))
		return 1;
	void *h = dlopen(argv[1], RTLD_NOW | RTLD_LOCAL);
	if (!h) {
		fprintf(stderr, "dlopen-test: dlopen(%s): %s\n", argv[1], dlerror());
		return 1;
	}
	*(void **)&create = sym(h, "udc_create");
	*(void **)&add = sym(h, "udc_add");
	*(void **)&lookup = sym(h, "udc_lookup");
	*(void **)&stats_get = sym(h, "udc_stats_get");
	*(void **)&destroy = sym(h, "udc_destroy");

	struct udc_config cfg = UDC_CONFIG_INIT;
	cfg.root = 1;
	cache = create(&cfg);
	struct udc_attr a = { .ino = 2, .type = UDC_TYPE_REG };
	if (!cache || add(cache, 1, "f", 1, &a)) {
		fprintf(stderr, "dlopen-test: udc_create or udc_add failed\n");
		return 1;
	}
	pthread_barrier_wait(&loaded);
	if (pthread_create(&late, NULL, hitter, NULL))
		return 1;
	void *hits_early, *hits_late;
	pthread_join(early, &hits_early);
	pthread_join(late, &hits_late);
	long here = (long)hitter(NULL);

	struct udc_stats st = { .size = sizeof(st) };
	stats_get(cache, &st);
	int fails = 0;
	if ((long)hits_early != LOOKUPS || (long)hits_late != LOOKUPS || here != LOOKUPS) {
		fprintf(stderr, "dlopen-test: hits %ld, %ld and %ld of %d each\n", (long)hits_early,
			(long)hits_late, here, LOOKUPS);
		fails++;
	}
	if (st.hits_positive != 3 * LOOKUPS) {
		fprintf(stderr, "dlopen-test: the stats count %llu hits, not %d\n",
			(unsigned long long)st.hits_positive, 3 * LOOKUPS);
		fails++;
	}
	destroy(cache);
	if (!fails)
		printf("dlopen-test: 3 threads x %d hits through a dlopen'd libudcache.so\n", LOOKUPS);
	return fails != 0;
}
