/* SPDX-License-Identifier: MIT */
/*
 * stress/hit_shared.c - udc-hit-shared: hits through libudcache.so, as an
 * embedder that links the shared library makes them.
 *
 * udc-stress links the library's objects statically, where the linker
 * turns every thread-local access into a fixed offset; through the shared
 * library they may be calls into the dynamic linker (three a hit, before
 * liburcu's reader record went through TLS descriptors).  This program
 * uses the public API only, so scripts/hit_instructions.sh counts what a
 * hit costs an embedder (callgrind, --toggle-collect=hit_once).
 *
 * Usage: udc-hit-shared [NAMES [COUNT [negative|resolve|stats]]]
 *   NAMES names of 16 bytes ("f<hex>" padded with '_', as udc-stress's hit
 *   workload) in 256 directories, cached positive (or negative), then COUNT
 *   lookups of names drawn uniformly (udc_lookup; "resolve": udc_resolve,
 *   answered by the cache with no backend).  Prints the hits; exits 1 if
 *   any lookup missed.  "stats": COUNT calls of udc_stats_get instead, with
 *   the whole struct and without resident_bytes, timed (the figures of its
 *   header comment).
 */
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <udcache.h>

#define NAME_LEN 16
#define ROOT_INO ((udc_ino)1)
#define DIRS 256   /* the names spread over them: a directory's negatives are bounded */
#define DIR_OF(i) ((udc_ino)2 + (i) % DIRS)

static int resolving;   /* udc_resolve, not udc_lookup */

static double now_us(void)
{
	struct timespec t;

	clock_gettime(CLOCK_MONOTONIC, &t);
	return (double)t.tv_sec * 1e6 + (double)t.tv_nsec / 1e3;
}

/* udc_stats_get's cost, µs a call, with st->size @size, over @count calls. */
static double stats_cost(udc_cache *c, size_t size, unsigned long count)
{
	struct udc_stats st = { .size = size };
	double t0 = now_us();

	for (unsigned long i = 0; i < count; i++)
		udc_stats_get(c, &st);
	return (now_us() - t0) / (double)count;
}

/* One lookup: the function callgrind collects. */
__attribute__((noinline)) int hit_once(udc_cache *c, udc_ino dir, const char *name,
				      struct udc_attr *a)
{
	static const struct udc_call call = { 0 };

	if (resolving)
		return udc_resolve(c, dir, name, NAME_LEN, &call, a) == 0 ? UDC_POSITIVE : UDC_MISS;
	return udc_lookup(c, dir, name, NAME_LEN, a);
}

int main(int argc, char **argv)
{
	unsigned long names = argc > 1 ? strtoul(argv[1], NULL, 0) : 65536;
	unsigned long count = argc > 2 ? strtoul(argv[2], NULL, 0) : 1000000;
	int negative = argc > 3 && strcmp(argv[3], "negative") == 0;

	resolving = argc > 3 && strcmp(argv[3], "resolve") == 0;
	struct udc_config cfg = UDC_CONFIG_INIT;

	if (names == 0 || count == 0) {
		fprintf(stderr, "usage: %s [NAMES [COUNT [negative|resolve|stats]]]\n", argv[0]);
		return 2;
	}
	cfg.root = ROOT_INO;
	cfg.memory_limit = (size_t)1 << 30;
	udc_cache *c = udc_create(&cfg);
	char *buf = malloc(names * NAME_LEN);
	if (!c || !buf) {
		fprintf(stderr, "udc-hit-shared: out of memory\n");
		return 1;
	}
	for (unsigned long i = 0; i < names; i++) {
		char *n = buf + i * NAME_LEN, tmp[32];
		int k = snprintf(tmp, sizeof(tmp), "f%lx", i);
		memset(n, '_', NAME_LEN);
		memcpy(n, tmp, (size_t)k < NAME_LEN ? (size_t)k : NAME_LEN);
		struct udc_attr a = { .ino = 100 + i, .type = UDC_TYPE_REG };
		int r = negative ? udc_add_negative(c, DIR_OF(i), n, NAME_LEN, 0)
				 : udc_add(c, DIR_OF(i), n, NAME_LEN, &a);
		if (r) {
			fprintf(stderr, "udc-hit-shared: add: %s\n", strerror(-r));
			return 1;
		}
	}
	sleep(1);   /* the table's last growth, in the library's worker */
	if (argc > 3 && strcmp(argv[3], "stats") == 0) {
		printf("udc_stats_get: %.2f us a call, %.2f us without resident_bytes\n",
		       stats_cost(c, sizeof(struct udc_stats), count),
		       stats_cost(c, offsetof(struct udc_stats, resident_bytes), count));
		udc_destroy(c);
		free(buf);
		return 0;
	}

	unsigned long x = 1, hits = 0;
	struct udc_attr a;
	for (unsigned long i = 0; i < count; i++) {
		x = x * 6364136223846793005ul + 1442695040888963407ul;   /* Knuth's MMIX LCG */
		unsigned long k = (x >> 33) % names;
		hits += hit_once(c, DIR_OF(k), buf + k * NAME_LEN, &a) != UDC_MISS;
	}
	printf("%lu hits of %lu lookups\n", hits, count);
	udc_destroy(c);
	free(buf);
	return hits == count ? 0 : 1;
}
