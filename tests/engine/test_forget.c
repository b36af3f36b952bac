/* SPDX-License-Identifier: MIT */
/*
 * tests/engine/test_forget.c - udc_forget_ino: every cached name of an
 * object (its hard links, in any directory) stops answering at once, a
 * complete directory then misses it (never a negative), an answer in
 * flight is not cached, other objects keep theirs; the garbage rounds
 * drop the names and retire the forget, after which the object's new
 * answers are cached again; a full slot says -EAGAIN and changes nothing.
 *
 * Timing: the retirement is awaited by polling, up to 60 s (it takes
 * about a second), so a slow machine cannot fail it.
 */
#include <criterion/criterion.h>
#include <errno.h>
#include <pthread.h>
#include <string.h>
#include <unistd.h>

#include "include/udcache.h"
#include "common/tfixture.h"
#include "engine/internal.h"   /* engine_check, c->forgets_pending */

#define D TFIX_D_INO
#define E ((udc_ino)11)

TestSuite(forget, .init = tfix_setup_d, .fini = tfix_teardown, .timeout = 120);

static void links(void)
{
	cr_assert_eq(tc_add(env.c, D, "a", 100, UDC_TYPE_REG, 1), 0);
	cr_assert_eq(tc_add(env.c, D, "b", 100, UDC_TYPE_REG, 1), 0);
	cr_assert_eq(tc_add(env.c, E, "c", 100, UDC_TYPE_REG, 1), 0);
	cr_assert_eq(tc_add(env.c, D, "other", 101, UDC_TYPE_REG, 2), 0);
}

/* Wait (polling, up to 60 s) for every forget to retire.  The cache has
 * no reclaim thread (tenv): calls run the garbage batches. */
static void await_retired(void)
{
	for (int i = 0; i < 6000 && atomic_load(&env.c->forgets_pending); i++) {
		cr_assert_eq(tc_add(env.c, E, "tick", 999, UDC_TYPE_REG, 1), 0);
		cr_assert_eq(tc_remove(env.c, E, "tick"), 0);
		usleep(10000);
	}
	cr_assert_eq(atomic_load(&env.c->forgets_pending), 0, "a forget never retired");
}

Test(forget, every_name_of_the_object_misses_and_the_others_stay)
{
	links();
	cr_assert_eq(udc_forget_ino(env.c, 100), 0);
	cr_assert_eq(tc_lookup(env.c, D, "a", NULL), UDC_MISS);
	cr_assert_eq(tc_lookup(env.c, D, "b", NULL), UDC_MISS);
	cr_assert_eq(tc_lookup(env.c, E, "c", NULL), UDC_MISS);
	cr_assert_eq(tc_lookup(env.c, D, "other", NULL), UDC_POSITIVE);
	await_retired();
	cr_assert_eq(tc_lookup(env.c, D, "a", NULL), UDC_MISS, "dropped by the round, not back");
	cr_assert_eq(tc_lookup(env.c, E, "c", NULL), UDC_MISS);
	cr_assert_eq(tc_lookup(env.c, D, "other", NULL), UDC_POSITIVE);
	cr_assert_eq(engine_check(env.c), 0);
}

static int count_names(void *arg, const struct udc_dirent *ent)
{
	(void)arg;
	(void)ent;
	return 0;
}

Test(forget, a_complete_directory_misses_a_forgotten_name_and_lists_nothing)
{
	struct udc_fill f;

	cr_assert_eq(udc_dir_fill_begin(env.c, D, &f), 0);
	links();
	cr_assert_eq(udc_dir_complete(env.c, D, &f), 0);
	cr_assert_eq(udc_forget_ino(env.c, 100), 0);
	cr_assert_eq(tc_lookup(env.c, D, "a", NULL), UDC_MISS, "not a negative: it may exist");
	cr_assert_eq(udc_readdir(env.c, D, 0, count_names, NULL), -ENODATA,
		     "a listing with a forgotten name is no listing");
	await_retired();
	cr_assert_eq(tc_lookup(env.c, D, "a", NULL), UDC_MISS);
	cr_assert_eq(tc_lookup(env.c, D, "zzz", NULL), UDC_MISS, "d lost names: no longer complete");
}

Test(forget, answers_cached_after_it_are_misses_until_it_retires)
{
	links();
	cr_assert_eq(udc_forget_ino(env.c, 100), 0);
	cr_assert_eq(tc_add(env.c, D, "a", 100, UDC_TYPE_REG, 3), 0);   /* the store reused it */
	cr_assert_eq(tc_lookup(env.c, D, "a", NULL), UDC_MISS);
	await_retired();
	/* The round may have dropped it: told again, it stays. */
	cr_assert_eq(tc_add(env.c, D, "a", 100, UDC_TYPE_REG, 3), 0);
	cr_assert_eq(tc_lookup(env.c, D, "a", NULL), UDC_POSITIVE);
}

Test(forget, a_directory_forgets_its_contents_too)
{
	cr_assert_eq(tc_add(env.c, D, "x", 100, UDC_TYPE_REG, 1), 0);
	cr_assert_eq(udc_forget_ino(env.c, D), 0);
	cr_assert_eq(tc_lookup(env.c, TC_ROOT, "d", NULL), UDC_MISS, "its name");
	cr_assert_eq(tc_lookup(env.c, D, "x", NULL), UDC_MISS, "its contents");
	cr_assert_eq(tc_lookup(env.c, D, "..", NULL), UDC_MISS, "its \"..\"");
}

Test(forget, bad_arguments_and_a_full_slot_change_nothing)
{
	cr_assert_eq(udc_forget_ino(NULL, 100), -EINVAL);
	cr_assert_eq(udc_forget_ino(env.c, UDC_INO_NONE), -EINVAL);
	/* 200 objects, forgotten back to back (no call between runs a garbage
	 * batch, so none retires): some slot overflows (64 slots, 4 a bucket) */
	char nm[16];
	for (udc_ino ino = 1000; ino < 1200; ino++) {
		snprintf(nm, sizeof(nm), "n%llu", (unsigned long long)ino);
		cr_assert_eq(tc_add(env.c, D, nm, ino, UDC_TYPE_REG, 1), 0);
	}
	int r[200];
	for (udc_ino ino = 1000; ino < 1200; ino++) {
		r[ino - 1000] = udc_forget_ino(env.c, ino);
		if (ino == 1000)   /* again at once: renewed (or, retired meanwhile, taken anew) */
			cr_assert_eq(udc_forget_ino(env.c, ino), 0, "forgotten again: refused");
	}
	unsigned again = 0;
	for (udc_ino ino = 1000; ino < 1200; ino++) {
		int rc = r[ino - 1000];
		snprintf(nm, sizeof(nm), "n%llu", (unsigned long long)ino);
		cr_assert(rc == 0 || rc == -EAGAIN, "udc_forget_ino: %d", rc);
		again += rc == -EAGAIN;
		cr_assert_eq(tc_lookup(env.c, D, nm, NULL), rc ? UDC_POSITIVE : UDC_MISS,
			     "%s: a refused forget changed nothing, an accepted one forgot", nm);
	}
	cr_assert_gt(again, 0, "no slot overflowed: the test tests nothing");
	await_retired();
}

/* ---- an answer in flight when the object is forgotten ---- */

static pthread_mutex_t gate_lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t gate_cond = PTHREAD_COND_INITIALIZER;
static int gate_state;   /* 0: closed; 1: a call waits; 2: open */

static int gated_lookup(void *ctx, udc_ino dir, const char *name, size_t len, struct udc_attr *out)
{
	(void)ctx;
	(void)dir;
	(void)name;
	(void)len;
	pthread_mutex_lock(&gate_lock);
	gate_state = 1;
	pthread_cond_broadcast(&gate_cond);
	while (gate_state != 2)
		pthread_cond_wait(&gate_cond, &gate_lock);
	pthread_mutex_unlock(&gate_lock);
	*out = tc_attr(100, UDC_TYPE_REG, 7);   /* read before the object went */
	return 0;
}

static const struct udc_backend gated = { .lookup = gated_lookup };

static void *resolver(void *arg)
{
	struct udc_attr a;
	return (void *)(intptr_t)udc_resolve(arg, TC_ROOT, "late", 4, NULL, &a);
}

Test(forget, an_answer_in_flight_is_not_cached)
{
	struct udc_config cfg = UDC_CONFIG_INIT;
	pthread_t t;
	void *rv;

	cfg.root = TC_ROOT;
	cfg.backend = &gated;
	udc_cache *c = udc_create(&cfg);
	cr_assert_not_null(c);
	pthread_create(&t, NULL, resolver, c);
	pthread_mutex_lock(&gate_lock);
	while (gate_state != 1)
		pthread_cond_wait(&gate_cond, &gate_lock);
	pthread_mutex_unlock(&gate_lock);
	cr_assert_eq(udc_forget_ino(c, 100), 0);   /* while the store is read */
	pthread_mutex_lock(&gate_lock);
	gate_state = 2;
	pthread_cond_broadcast(&gate_cond);
	pthread_mutex_unlock(&gate_lock);
	pthread_join(t, &rv);
	cr_assert_eq((intptr_t)rv, 0, "the caller gets its answer");
	cr_assert_eq(udc_lookup(c, TC_ROOT, "late", 4, NULL), UDC_MISS, "but it is not cached");
	struct udc_stats st = { .size = sizeof(st) };
	udc_stats_get(c, &st);
	cr_assert_eq(st.nr_positive, 0, "not even as a forgotten entry");
	udc_destroy(c);
}
