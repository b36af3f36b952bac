/*
 * tests/engine/test_readonly_hits.c - the hit path writes nothing shared.
 *
 * After a warm-up that saturates every entry's hit counter, the pages that
 * hold the entries are made read-only (slab_protect_pages, a test hook),
 * and two threads run a million positive and negative lookup hits each:
 * any store to an entry page would fault and crash the test.
 */
#include <criterion/criterion.h>
#include <pthread.h>
#include <stdio.h>
#include <sys/mman.h>
#include <time.h>

#include "engine/internal.h"
#include "shrink/internal.h"   /* worker_busy */

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
