/* SPDX-License-Identifier: MIT */
/*
 * tests/engine/test_readdir.c - udc_readdir: a complete directory listed
 * from the cache, names with their answers and values, in an order that
 * stays while names come and go (a cookie resumes after its name, a new
 * answer keeps its place); refused (-ENODATA) whenever the cache may not
 * hold every name (never filled, not complete, a name lost or expired, a
 * positive cached before the fill and not told by it); listed entries
 * moved by compaction under concurrent writers and readers.
 */
#include <criterion/criterion.h>
#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "include/udcache.h"
#include "common/prng.h"
#include "common/tfixture.h"
#include "engine/internal.h"   /* engine_check */
#include "shrink/internal.h"   /* compact_all */

#define D TFIX_D_INO
#define MAXN 4096

TestSuite(readdir, .init = tfix_setup_d, .fini = tfix_teardown, .timeout = 120);

/* What a listing gave. */
struct got {
	unsigned n;
	unsigned stop_after;              /* stop (return 1) after this many; 0: never */
	char name[MAXN][UDC_NAME_MAX + 1];
	struct udc_attr attr[MAXN];
	size_t vlen[MAXN];
	unsigned char value[MAXN][8];
	uint64_t cookie[MAXN];
};

static int collect(void *arg, const struct udc_dirent *ent)
{
	struct got *g = arg;

	cr_assert_lt(g->n, MAXN);
	memcpy(g->name[g->n], ent->name, ent->len);
	g->name[g->n][ent->len] = 0;
	g->attr[g->n] = ent->attr;
	g->vlen[g->n] = ent->value_len;
	if (ent->value_len)
		memcpy(g->value[g->n], ent->value, ent->value_len < 8 ? ent->value_len : 8);
	g->cookie[g->n] = ent->cookie;
	g->n++;
	return g->stop_after && g->n % g->stop_after == 0;
}

static struct got *got_new(void)
{
	struct got *g = calloc(1, sizeof(*g));

	cr_assert_not_null(g);
	return g;
}

/* Index of @name in g, or -1. */
static int got_find(const struct got *g, const char *name)
{
	for (unsigned i = 0; i < g->n; i++) {
		if (!strcmp(g->name[i], name))
			return (int)i;
	}
	return -1;
}

static void name_of(char *buf, size_t room, unsigned i)
{
	/* short names inline, every seventh past the inline room (apart) */
	if (i % 7 == 3)
		snprintf(buf, room, "a-long-name-that-is-kept-apart-from-its-entry-%06u", i);
	else
		snprintf(buf, room, "n%u", i);
}

static int add_v(const char *name, udc_ino ino)
{
	struct udc_attr a = tc_attr(ino, UDC_TYPE_REG, ino * 3);
	char v[8];

	memcpy(v, &ino, sizeof(v));
	return udc_add_value(env.c, D, name, strlen(name), &a, v, sizeof(v), 0);
}

/* Fill D with names 0..n-1 (values: their ino) and complete it. */
static void fill_complete(unsigned n)
{
	struct udc_fill f;
	char name[80];

	cr_assert_eq(udc_dir_fill_begin(env.c, D, &f), 0);
	for (unsigned i = 0; i < n; i++) {
		name_of(name, sizeof(name), i);
		cr_assert_eq(add_v(name, 1000 + i), 0);
	}
	cr_assert_eq(udc_dir_complete(env.c, D, &f), 0);
}

static void assert_lists_exactly(unsigned n, const struct got *g)
{
	char name[80];

	cr_assert_eq(g->n, n, "listed %u names, the directory has %u", g->n, n);
	for (unsigned i = 0; i < n; i++) {
		name_of(name, sizeof(name), i);
		int at = got_find(g, name);
		cr_assert_geq(at, 0, "%s not listed", name);
		cr_assert_eq(g->attr[at].ino, 1000 + i);
		cr_assert_eq(g->attr[at].cookie, (1000 + i) * 3);
		cr_assert_eq(g->vlen[at], 8);
		udc_ino v;
		memcpy(&v, g->value[at], sizeof(v));
		cr_assert_eq(v, 1000 + i, "%s: its value", name);
	}
}

Test(readdir, lists_a_complete_directory_with_answers_and_values_in_a_stable_order)
{
	struct got *g = got_new(), *h = got_new();

	fill_complete(300);
	cr_assert_eq(udc_readdir(env.c, D, 0, collect, g), 0);
	assert_lists_exactly(300, g);
	cr_assert_eq(udc_readdir(env.c, D, 0, collect, h), 0);
	cr_assert_eq(h->n, g->n);
	for (unsigned i = 0; i < g->n; i++) {
		cr_assert_str_eq(h->name[i], g->name[i], "the order changed at %u", i);
		cr_assert_eq(h->cookie[i], g->cookie[i]);
	}
	for (unsigned i = 1; i < g->n; i++)
		cr_assert_gt(g->cookie[i], g->cookie[i - 1], "cookies rise with the order");
	cr_assert_eq(engine_check(env.c), 0);
	free(g);
	free(h);
}

/* A listed positive's place is sized from where its name ends: a 13-byte
 * name's entry is 48 + 13 + 3 (alignment) + 32 bytes, the 96-byte class
 * (reserving 7 bytes of alignment always made it 100: the 112-byte one). */
Test(readdir, a_listed_entry_takes_only_the_alignment_it_needs)
{
	cr_assert_leq(entry_size(ENT_POSITIVE, 13, EXTRA_LISTED), 96);
	cr_assert_leq(entry_size(ENT_POSITIVE, 32, EXTRA_LISTED), 112, "32 bytes still inline");
	cr_assert(name_fits_inline(ENT_POSITIVE, 32, EXTRA_LISTED));
	cr_assert(!name_fits_inline(ENT_POSITIVE, 33, EXTRA_LISTED), "past the room: apart");
}

Test(readdir, an_empty_complete_directory_lists_nothing)
{
	struct got *g = got_new();

	fill_complete(0);
	cr_assert_eq(udc_readdir(env.c, D, 0, collect, g), 0);
	cr_assert_eq(g->n, 0);
	free(g);
}

Test(readdir, refuses_what_it_may_not_hold_whole)
{
	struct got *g = got_new();
	struct udc_fill f;

	cr_assert_eq(udc_readdir(env.c, D, 0, collect, g), -ENODATA, "never filled");
	cr_assert_eq(udc_readdir(env.c, 999, 0, collect, g), -ENODATA, "unknown directory");
	cr_assert_eq(udc_dir_fill_begin(env.c, D, &f), 0);
	cr_assert_eq(add_v("a", 1), 0);
	cr_assert_eq(udc_readdir(env.c, D, 0, collect, g), -ENODATA, "filling, not complete");
	cr_assert_eq(udc_dir_complete(env.c, D, &f), 0);
	cr_assert_eq(udc_readdir(env.c, D, 0, collect, g), 0);
	cr_assert_eq(g->n, 1);

	cr_assert_eq(tc_invalidate(env.c, D, "a"), 0);
	cr_assert_eq(udc_readdir(env.c, D, 0, collect, g), -ENODATA, "a name lost");
	fill_complete(5);
	cr_assert_eq(udc_invalidate_dir(env.c, D), 0);
	cr_assert_eq(udc_readdir(env.c, D, 0, collect, g), -ENODATA, "the directory forgotten");
	cr_assert_eq(udc_readdir(NULL, D, 0, collect, g), -EINVAL);
	cr_assert_eq(udc_readdir(env.c, UDC_INO_NONE, 0, collect, g), -EINVAL);
	cr_assert_eq(udc_readdir(env.c, D, 0, NULL, g), -EINVAL);
	free(g);
}

Test(readdir, a_positive_cached_before_the_fill_must_be_told_by_it)
{
	struct got *g = got_new();
	struct udc_fill f;

	cr_assert_eq(add_v("early", 1), 0);   /* cached before any fill: not listed */
	cr_assert_eq(udc_dir_fill_begin(env.c, D, &f), 0);
	cr_assert_eq(add_v("a", 2), 0);
	cr_assert_eq(udc_dir_complete(env.c, D, &f), 0);
	cr_assert_eq(udc_readdir(env.c, D, 0, collect, g), -ENODATA,
		     "a positive the listing does not hold: not a listing");
	cr_assert_eq(udc_dir_fill_begin(env.c, D, &f), 0);
	cr_assert_eq(add_v("early", 1), 0);
	cr_assert_eq(add_v("a", 2), 0);
	cr_assert_eq(udc_dir_complete(env.c, D, &f), 0);
	cr_assert_eq(udc_readdir(env.c, D, 0, collect, g), 0, "told by the fill: listed");
	cr_assert_eq(g->n, 2);
	cr_assert_eq(engine_check(env.c), 0);
	free(g);
}

/* The store changed behind the cache's back: the embedder invalidates the
 * directory and fills it again.  The names gone meanwhile are stale
 * entries still in the listing until swept (thousands: the calls below
 * sweep a few batches): never given. */
Test(readdir, names_of_an_older_generation_are_not_given)
{
	struct got *g = got_new();
	struct udc_fill f;
	char name[80];

	fill_complete(2000);   /* more than the few calls below sweep */
	cr_assert_eq(udc_invalidate_dir(env.c, D), 0);
	cr_assert_eq(udc_dir_fill_begin(env.c, D, &f), 0);
	for (unsigned i = 0; i < 5; i++) {   /* 5..1999 are gone from the store */
		name_of(name, sizeof(name), i);
		cr_assert_eq(add_v(name, 1000 + i), 0);
	}
	cr_assert_eq(udc_dir_complete(env.c, D, &f), 0);
	cr_assert_eq(udc_readdir(env.c, D, 0, collect, g), 0);
	assert_lists_exactly(5, g);
	free(g);
}

Test(readdir, removals_and_additions_after_completion_are_listed)
{
	struct got *g = got_new();

	fill_complete(10);
	cr_assert_eq(tc_remove(env.c, D, "n0"), 0);
	cr_assert_eq(add_v("late", 77), 0);
	cr_assert_eq(tc_rename(env.c, D, "n1", D, "n1-renamed", 1001), 0);
	cr_assert_eq(udc_readdir(env.c, D, 0, collect, g), 0);
	cr_assert_eq(g->n, 10);
	cr_assert_lt(got_find(g, "n0"), 0, "removed");
	cr_assert_lt(got_find(g, "n1"), 0, "renamed away");
	cr_assert_geq(got_find(g, "n1-renamed"), 0);
	cr_assert_eq(got_find(g, "late"), 8, "a new name comes last but one");
	cr_assert_eq(got_find(g, "n1-renamed"), 9, "and the renamed one last");
	cr_assert_eq(engine_check(env.c), 0);
	free(g);
}

Test(readdir, a_new_answer_for_a_name_keeps_its_place)
{
	struct got *g = got_new(), *h = got_new();

	fill_complete(20);
	cr_assert_eq(udc_readdir(env.c, D, 0, collect, g), 0);
	cr_assert_eq(add_v("n5", 5555), 0);   /* changed: a new entry for the name */
	cr_assert_eq(udc_readdir(env.c, D, 0, collect, h), 0);
	cr_assert_eq(h->n, 20);
	int at = got_find(h, "n5");
	cr_assert_eq(at, got_find(g, "n5"), "same place");
	cr_assert_eq(h->cookie[at], g->cookie[at], "same cookie");
	cr_assert_eq(h->attr[at].ino, 5555, "the new answer");
	free(g);
	free(h);
}

/* A listing read in pieces of @piece names while @churn names change
 * between pieces: each name that stayed is given exactly once. */
static void paged(unsigned piece, bool churn)
{
	struct got *g = got_new();
	uint64_t cookie = 0;
	unsigned calls = 0;
	char name[80];
	int r;

	fill_complete(500);
	g->stop_after = piece;
	do {
		unsigned before = g->n;
		r = udc_readdir(env.c, D, cookie, collect, g);
		cr_assert(r == 0 || r == 1, "readdir: %d", r);
		if (g->n > before)
			cookie = g->cookie[g->n - 1];
		if (churn) {   /* odd names below 100 go, new ones come */
			name_of(name, sizeof(name), 2 * calls + 1);
			if (2 * calls + 1 < 100)
				cr_assert_eq(tc_remove(env.c, D, name), 0);
			snprintf(name, sizeof(name), "new%u", calls);
			cr_assert_eq(add_v(name, 90000 + calls), 0);
		}
		cr_assert_lt(++calls, 10000);
	} while (r == 1);
	for (unsigned i = 0; i < 500; i++) {
		name_of(name, sizeof(name), i);
		bool stayed = !churn || i >= 100 || i % 2 == 0;
		int at = got_find(g, name);
		if (stayed) {
			cr_assert_geq(at, 0, "%s stayed and was not given", name);
			for (unsigned j = (unsigned)at + 1; j < g->n; j++)
				cr_assert_str_neq(g->name[j], name, "%s given twice", name);
		}
	}
	if (churn)
		cr_assert_geq(got_find(g, "new0"), 0, "a name added before the end is given");
	cr_assert_eq(engine_check(env.c), 0);
	free(g);
}

Test(readdir, read_in_pieces_gives_each_name_once)
{
	paged(7, false);
}

Test(readdir, read_in_pieces_under_changes_gives_each_name_that_stayed_once)
{
	paged(13, true);
}

Test(readdir, a_cookie_of_a_removed_name_resumes_after_its_place)
{
	struct got *g = got_new(), *h = got_new();

	fill_complete(30);
	cr_assert_eq(udc_readdir(env.c, D, 0, collect, g), 0);
	cr_assert_eq(tc_remove(env.c, D, g->name[10]), 0);
	cr_assert_eq(udc_readdir(env.c, D, g->cookie[10], collect, h), 0);
	cr_assert_eq(h->n, 19);
	cr_assert_str_eq(h->name[0], g->name[11]);
	free(g);
	free(h);
}

/* A reader stopped after a batch (8 names: the cursor its call left
 * points at the ninth); that name is then removed, replaced, or moved by
 * compaction: resuming gives the names after its place, each once. */
static void cursor_target_changes(int how)
{
	struct got *all = got_new(), *g = got_new();

	fill_complete(400);
	cr_assert_eq(udc_readdir(env.c, D, 0, collect, all), 0);
	g->stop_after = 8;
	cr_assert_eq(udc_readdir(env.c, D, 0, collect, g), 1);
	const char *next = all->name[8];
	if (how == 0) {
		cr_assert_eq(tc_remove(env.c, D, next), 0);
	} else if (how == 1) {
		cr_assert_eq(add_v(next, 7777), 0);
	} else {   /* most names go, the survivors (the next among them) move */
		for (unsigned i = 9; i < 400; i++)
			if (i % 8)
				cr_assert_eq(tc_remove(env.c, D, all->name[i]), 0);
		uint64_t moved0 = tc_stats(env.c).entries_moved;
		compact_all(env.c->shrink);
		cr_assert_gt(tc_stats(env.c).entries_moved, moved0, "nothing moved");
	}
	g->stop_after = 0;
	cr_assert_eq(udc_readdir(env.c, D, g->cookie[7], collect, g), 0);
	for (unsigned i = 0; i < g->n; i++)
		for (unsigned j = i + 1; j < g->n; j++)
			cr_assert_str_neq(g->name[i], g->name[j], "%s given twice", g->name[i]);
	int at = got_find(g, next);
	if (how == 0) {
		cr_assert_lt(at, 0, "the removed name was given");
		cr_assert_str_eq(g->name[8], all->name[9]);
	} else {
		cr_assert_eq(at, 8, "the name keeps its place");
		cr_assert_eq(g->attr[at].ino, how == 1 ? 7777 : all->attr[8].ino);
	}
	cr_assert_eq(engine_check(env.c), 0);
	free(all);
	free(g);
}

Test(readdir, a_cursors_name_removed_resumes_after_it)
{
	cursor_target_changes(0);
}

Test(readdir, a_cursors_name_replaced_keeps_its_place)
{
	cursor_target_changes(1);
}

Test(readdir, a_cursors_name_moved_by_compaction_keeps_its_place)
{
	cursor_target_changes(2);
}

/* A batch that skipped names of an older generation to the end of the
 * list left a cursor that said no name follows the last it gave.  Told
 * again, those names keep their places (a new answer for a name), and a
 * reader resuming after that last name must get them: read in pieces, a
 * listing lost them (found by tests/fuzz: regressions/
 * readdir-resume-past-older-names). */
Test(readdir, a_cursor_past_older_names_resumes_at_them)
{
	struct got *g = got_new(), *h = got_new();
	struct udc_fill f;
	char name[80];

	fill_complete(2000);
	/* The calls' chores would sweep the older names away (they try
	 * shrink_lock): held, the names stay until they are told again. */
	udc_mutex_lock(&env.c->shrink->lock);
	cr_assert_eq(udc_invalidate_dir(env.c, D), 0);
	cr_assert_eq(udc_dir_fill_begin(env.c, D, &f), 0);
	name_of(name, sizeof(name), 0);
	cr_assert_eq(add_v(name, 1000), 0);
	cr_assert_eq(udc_dir_complete(env.c, D, &f), 0);
	cr_assert_eq(udc_readdir(env.c, D, 0, collect, g), 0);   /* n0; the rest skipped */
	assert_lists_exactly(1, g);
	fill_complete(2000);   /* all told again */
	udc_mutex_unlock(&env.c->shrink->lock);
	cr_assert_eq(udc_readdir(env.c, D, g->cookie[0], collect, h), 0);
	cr_assert_eq(h->n, 1999, "resumed after %s: %u names, not 1,999", name, h->n);
	g->n = 0;
	cr_assert_eq(udc_readdir(env.c, D, 0, collect, g), 0);
	assert_lists_exactly(2000, g);
	cr_assert_str_eq(g->name[0], name);
	for (unsigned i = 0; i < h->n; i++)
		cr_assert_str_eq(h->name[i], g->name[i + 1]);
	cr_assert_eq(engine_check(env.c), 0);
	free(g);
	free(h);
}

/* A reader at the end (its cursor knows no next name); a name added then
 * is given when it resumes from the last cookie. */
Test(readdir, a_name_added_after_the_end_is_given_on_resuming)
{
	struct got *g = got_new();

	fill_complete(20);
	cr_assert_eq(udc_readdir(env.c, D, 0, collect, g), 0);
	cr_assert_eq(g->n, 20);
	cr_assert_eq(add_v("late", 77), 0);
	cr_assert_eq(udc_readdir(env.c, D, g->cookie[19], collect, g), 0);
	cr_assert_eq(g->n, 21, "the name added after the end was not given");
	cr_assert_str_eq(g->name[20], "late");
	free(g);
}

static int stop_now(void *arg, const struct udc_dirent *ent)
{
	(void)arg;
	(void)ent;
	return 42;
}

Test(readdir, the_callback_stops_it_with_its_own_value)
{
	fill_complete(3);
	cr_assert_eq(udc_readdir(env.c, D, 0, stop_now, NULL), 42);
}

Test(readdir, an_expired_answer_or_completeness_refuses)
{
	struct got *g = got_new();
	struct udc_fill f;
	struct udc_attr a = tc_attr(7, UDC_TYPE_REG, 7);

	cr_assert_eq(udc_dir_fill_begin(env.c, D, &f), 0);
	cr_assert_eq(udc_add_value(env.c, D, "short-lived", 11, &a, NULL, 0, 100), 0);
	cr_assert_eq(udc_dir_complete(env.c, D, &f), 0);
	cr_assert_eq(udc_readdir(env.c, D, 0, collect, g), 0);
	usleep(400000);   /* past its life (a tick and a jiffy included) */
	g->n = 0;
	cr_assert_eq(udc_readdir(env.c, D, 0, collect, g), -ENODATA);
	free(g);
}

/* Removing most names leaves sparse pages; compaction moves the listed
 * survivors, which keep their places. */
Test(readdir, listed_entries_moved_by_compaction_keep_their_places)
{
	struct got *g = got_new(), *h = got_new();
	char name[80];

	fill_complete(3000);
	cr_assert_eq(udc_readdir(env.c, D, 0, collect, g), 0);
	for (unsigned i = 0; i < 3000; i++) {
		name_of(name, sizeof(name), i);
		if (i % 10)
			cr_assert_eq(tc_remove(env.c, D, name), 0);
	}
	uint64_t moved0 = tc_stats(env.c).entries_moved;
	compact_all(env.c->shrink);
	cr_assert_gt(tc_stats(env.c).entries_moved, moved0, "compaction moved nothing: the test tests nothing");
	cr_assert_eq(udc_readdir(env.c, D, 0, collect, h), 0);
	cr_assert_eq(h->n, 300);
	unsigned j = 0;
	for (unsigned i = 0; i < g->n; i++) {
		if (j < h->n && !strcmp(g->name[i], h->name[j])) {
			cr_assert_eq(h->cookie[j], g->cookie[i]);
			j++;
		}
	}
	cr_assert_eq(j, 300, "the survivors kept their order");
	cr_assert_eq(engine_check(env.c), 0);
	free(g);
	free(h);
}

/* ---- races: writers add and remove names, rewrite others, and compact,
 * while readers list; every listing that succeeds holds each name that
 * never left exactly once and no name twice. ---- */

#define STABLE 200        /* names never removed */
#define FLUX 200          /* names added and removed */
#define READERS 2

struct race {
	atomic_bool stop;
	atomic_uint listings, refused;
	uint64_t seed;
	struct tfail fail;
};

static void *race_writer(void *arg)
{
	struct race *r = arg;
	struct prng p;
	char name[80];

	prng_init(&p, r->seed);
	while (!atomic_load(&r->stop)) {
		unsigned i = (unsigned)prng_below(&p, FLUX + STABLE);
		if (i < FLUX) {
			snprintf(name, sizeof(name), "flux%u", i);
			if (prng_below(&p, 2))
				add_v(name, 50000 + i);
			else
				tc_remove(env.c, D, name);
		} else {   /* a new answer for a stable name */
			name_of(name, sizeof(name), i - FLUX);
			add_v(name, 1000 + i - FLUX);
		}
	}
	return NULL;
}

static void *race_compactor(void *arg)
{
	struct race *r = arg;

	while (!atomic_load(&r->stop)) {
		compact_all(env.c->shrink);
		usleep(1000);
	}
	return NULL;
}

static void *race_reader(void *arg)
{
	struct race *r = arg;
	struct got *g = got_new();
	char name[80];

	while (!atomic_load(&r->stop)) {
		g->n = 0;
		int rc = udc_readdir(env.c, D, 0, collect, g);
		if (rc == -ENODATA) {
			atomic_fetch_add(&r->refused, 1);
			continue;
		}
		if (rc != 0) {
			tfail_rec(&r->fail, "readdir: %d", rc);
			break;
		}
		atomic_fetch_add(&r->listings, 1);
		for (unsigned i = 0; i < STABLE; i++) {
			name_of(name, sizeof(name), i);
			int at = got_find(g, name);
			if (at < 0 || g->attr[at].ino != 1000 + i)
				tfail_rec(&r->fail, "%s: %s", name, at < 0 ? "not listed" : "wrong answer");
		}
		for (unsigned i = 1; i < g->n; i++) {
			if (g->cookie[i] <= g->cookie[i - 1])
				tfail_rec(&r->fail, "cookies out of order at %u", i);
		}
	}
	free(g);
	return NULL;
}

Test(readdir, listings_race_writers_and_compaction)
{
	struct race r = { .seed = test_seed("readdir-race") };
	pthread_t w, k, rd[READERS];

	tfail_init(&r.fail);
	fill_complete(STABLE);
	pthread_create(&w, NULL, race_writer, &r);
	pthread_create(&k, NULL, race_compactor, &r);
	for (unsigned i = 0; i < READERS; i++)
		pthread_create(&rd[i], NULL, race_reader, &r);
	usleep(1500000);
	atomic_store(&r.stop, true);
	pthread_join(w, NULL);
	pthread_join(k, NULL);
	for (unsigned i = 0; i < READERS; i++)
		pthread_join(rd[i], NULL);
	tfail_assert_none(&r.fail);
	cr_assert_gt(atomic_load(&r.listings), 0, "no listing succeeded (%u refused)",
		     atomic_load(&r.refused));
	cr_assert_eq(engine_check(env.c), 0);
}
