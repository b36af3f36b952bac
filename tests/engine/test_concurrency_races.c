/* SPDX-License-Identifier: MIT */
/*
 * tests/engine/test_concurrency_races.c - what must hold when mutations race
 * readers on several threads (the races of one name's miss are
 * tests/engine/test_concurrency.c).
 *
 *  walk_rename  walks racing directory renames only give paths that existed;
 *  forget       after invalidate_dir/rmdir returns, no lookup returns an
 *               entry cached before it, on any thread;
 *  mixed        random operations on private and shared names, with the
 *               invariants each thread can check, ending in udc_destroy;
 *  small_limit, rename vs invalidate_dir, an embedder-registered thread;
 *  last_release the last release of a directory object against the
 *               reaper's free, held open by a window hook (debug builds).
 *
 * Worker threads never call Criterion's assertions: they record failures
 * in a struct tfail that the main thread asserts on after joining them.
 * Loops are bounded by iteration counts; nothing asserts on time.
 *
 * Locking: the model's lock (tests/common/model.h) makes a store change and
 * the cache's notification one step for the backend; the cache locks itself.
 *
 * Ordering: the tests' shared flags (done) and counters are seq_cst atomics;
 * forget's forgotten_gen is stored with release after the call that forgot
 * and loaded with acquire by the readers, so a reader that sees a generation
 * also sees that call returned.  Results reach the main thread through
 * pthread_join().
 */
#include <criterion/criterion.h>
#include <errno.h>
#include <inttypes.h>
#include <pthread.h>
#include <sched.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "engine/internal.h"   /* rename_lock, rename_seq: a rename held open */
#include "include/udcache.h"
#include "common/model.h"
#include "common/prng.h"
#include "common/tcache.h"
#include "common/tfixture.h"

/* env (common/tfixture.h): directory "d" = D_INO under the root. */
#define D_INO TFIX_D_INO

TestSuite(concurrency_races, .init = tfix_setup_d, .fini = tfix_teardown, .timeout = 60);


/* ------------------------------------------------------------ walk_rename */

/*
 * /a (2), /x (5), directory b (3) moves between /a/b and /x/b, b/c (4) is a
 * file, /lab -> /a/b (6).  The renamer changes the store and tells the cache
 * under the model's lock, so every backend answer belongs to one state.
 */
#define WR_RENAMES 3000
#define WR_WALKERS 2
#define WR_MAX_WALKS 400000

struct wr_shared {
	atomic_int started;   /* walkers running: the renames wait for them all
	                       * (CI once ran every rename before a walker ran) */
	atomic_bool done;
	struct tfail fail;
	uint64_t seed;
};

struct wr_walker {
	struct wr_shared *sh;
	int idx;
	uint64_t ok_a, ok_x, enoent, eagain;
};

static struct wr_shared wr;

static void *wr_renamer(void *p)
{
	struct prng rng;
	bool in_a = true;

	(void)p;
	prng_init(&rng, wr.seed);
	while (atomic_load(&wr.started) < WR_WALKERS)
		sched_yield();
	for (int i = 0; i < WR_RENAMES; i++) {
		udc_ino from = in_a ? 2 : 5, to = in_a ? 5 : 2;
		int r;

		model_lock(env.m);
		model_move_locked(env.m, from, "b", 1, to, "b", 1);
		r = udc_rename(env.c, from, "b", 1, to, "b", 1, prng_chance(&rng, 1, 2) ? 3 : 0);
		TCHECK(&wr.fail, r == 0, "udc_rename #%d = %s", i, tc_res_str(r));
		/* Now and then, make the walkers go to the backend. */
		switch (prng_below(&rng, 16)) {
		case 0:
			r = udc_invalidate_dir(env.c, 3);
			TCHECK(&wr.fail, r == 0, "invalidate_dir = %s", tc_res_str(r));
			break;
		case 1:
			r = udc_invalidate(env.c, to, "b", 1);
			TCHECK(&wr.fail, r == 0, "invalidate = %s", tc_res_str(r));
			break;
		case 2:
			r = udc_invalidate(env.c, 3, "..", 2);
			TCHECK(&wr.fail, r == 0, "invalidate(b, \"..\") = %s", tc_res_str(r));
			break;
		default:
			break;
		}
		model_unlock(env.m);
		in_a = !in_a;
		if (i % 64 == 0)
			sched_yield();
	}
	atomic_store(&wr.done, true);
	return NULL;
}

static void wr_check(struct wr_walker *w, const char *path, unsigned flags, udc_ino want)
{
	struct udc_attr got;
	int r = udc_walk(env.c, TC_ROOT, path, strlen(path), flags, &env.call, &got);

	if (r == 0 && got.ino == want) {
		if (path[1] == 'a' || path[1] == 'l')
			w->ok_a++;
		else
			w->ok_x++;
		return;
	}
	if (r == -ENOENT) {
		w->enoent++;
		return;
	}
	if (r == -EAGAIN) {
		/* Allowed: renames so frequent that the walk gave up (never a
		 * wrong answer). */
		w->eagain++;
		return;
	}
	tfail_rec(&w->sh->fail, "walker %d: walk(\"%s\") = %s ino %llu, want ino %llu or -ENOENT",
		  w->idx, path, tc_res_str(r), r == 0 ? (unsigned long long)got.ino : 0ULL,
		  (unsigned long long)want);
}

static void *wr_walker(void *p)
{
	struct wr_walker *w = p;

	atomic_fetch_add(&wr.started, 1);
	for (int i = 0; i < WR_MAX_WALKS && !atomic_load(&wr.done); i++) {
		switch (i % 8) {
		case 0:
			wr_check(w, "/a/b/c", 0, 4);
			break;
		case 1:
			wr_check(w, "/x/b/c", 0, 4);
			break;
		case 2:
			wr_check(w, "/a/b/..", 0, 2);
			break;
		case 3:
			wr_check(w, "/x/b/..", 0, 5);
			break;
		case 4:
			wr_check(w, "/a/b/../b/c", 0, 4);
			break;
		case 5:
			wr_check(w, "/x/b/../b/./c", 0, 4);
			break;
		case 6:
			wr_check(w, "/lab/c", 0, 4);
			break;
		case 7:
			wr_check(w, "/lab/..", 0, 2);
			break;
		}
		if (atomic_load(&w->sh->fail.count) > 0)
			break;
	}
	return NULL;
}

Test(concurrency_races, walks_racing_dir_renames)
{
	pthread_t ren, th[WR_WALKERS];
	struct wr_walker w[WR_WALKERS];

	memset(&wr, 0, sizeof(wr));
	tfail_init(&wr.fail);
	wr.seed = test_seed("concurrency/walks_racing_dir_renames");
	tc_store_only(&env, TC_ROOT, "a", 2, UDC_TYPE_DIR, 2);
	tc_store_only(&env, TC_ROOT, "x", 5, UDC_TYPE_DIR, 5);
	tc_store_only(&env, 2, "b", 3, UDC_TYPE_DIR, 3);
	tc_store_only(&env, 3, "c", 4, UDC_TYPE_REG, 4);
	tc_store_only(&env, TC_ROOT, "lab", 6, UDC_TYPE_SYMLINK, 6);
	model_set_link_s(env.m, 6, "/a/b");
	/* Warm the cache so that both paths are cached at times. */
	cr_assert_eq(tc_walk(&env, TC_ROOT, "/a/b/c", 0, NULL), 0);
	cr_assert_eq(tc_walk(&env, TC_ROOT, "/x/b/c", 0, NULL), -ENOENT);

	for (int i = 0; i < WR_WALKERS; i++) {
		w[i] = (struct wr_walker){ .sh = &wr, .idx = i };
		cr_assert_eq(pthread_create(&th[i], NULL, wr_walker, &w[i]), 0);
	}
	cr_assert_eq(pthread_create(&ren, NULL, wr_renamer, NULL), 0);
	pthread_join(ren, NULL);
	for (int i = 0; i < WR_WALKERS; i++)
		pthread_join(th[i], NULL);
	tfail_assert_none(&wr.fail);

	uint64_t ok_a = 0, ok_x = 0, enoent = 0, eagain = 0;
	for (int i = 0; i < WR_WALKERS; i++) {
		ok_a += w[i].ok_a;
		ok_x += w[i].ok_x;
		enoent += w[i].enoent;
		eagain += w[i].eagain;
	}
	cr_log_info("walks: %llu ok under /a, %llu ok under /x, %llu -ENOENT, %llu -EAGAIN",
		    (unsigned long long)ok_a, (unsigned long long)ok_x, (unsigned long long)enoent,
		    (unsigned long long)eagain);
	cr_assert_gt(ok_a + ok_x, 0, "no walk ever succeeded");

	/* WR_RENAMES is even: b is back under /a. */
	cr_assert_eq(tc_walk(&env, TC_ROOT, "/a/b/c", 0, NULL), 0);
	cr_assert_eq(tc_walk(&env, TC_ROOT, "/x/b/c", 0, NULL), -ENOENT);
	struct udc_attr got;
	cr_assert_eq(tc_walk(&env, TC_ROOT, "/a/b/..", 0, &got), 0);
	cr_assert_eq(got.ino, 2, "/a/b/.. is %llu at rest", (unsigned long long)got.ino);
	struct udc_stats st = tc_stats(env.c);
	cr_log_info("walk_retries %llu, stale_answers %llu", (unsigned long long)st.walk_retries,
		    (unsigned long long)st.stale_answers);
}

/* ----------------------------------------------------------------- forget */

#define FG_ROUNDS 300
#define FG_NAMES 16
#define FG_READERS 2

struct fg_shared {
	atomic_uint_fast64_t forgotten_gen; /* every entry with cookie <= this is forgotten */
	atomic_bool done;
	struct tfail fail;
	uint64_t seed;
};

/*
 * A walk that meets a rename in progress (rename_seq odd, rename_lock
 * held) waits for it asleep: a writer can be preempted for a whole
 * timeslice, and walks that spun through it took half the CPU of a
 * 64-thread mixed run on 2 cores (issue 16, stop 36).  Here the test holds
 * a "rename" open for 300 ms; each walker's CPU time meanwhile must be a
 * small part of that (spinning, each took what a core gave it: about all
 * of it).  A slow machine only makes a spinner look better, never a
 * sleeper worse.
 */
#define RS_WALKERS 2
#define RS_HOLD_MS 300

struct rs_walker {
	pthread_t t;
	int rc;
	double cpu_ms;
};

static double thread_cpu_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
	return (double)ts.tv_sec * 1e3 + (double)ts.tv_nsec / 1e6;
}

static void *rs_walker_fn(void *p)
{
	struct rs_walker *w = p;
	double before = thread_cpu_ms();

	w->rc = udc_walk(env.c, TC_ROOT, "/d", 2, 0, &env.call, NULL);
	w->cpu_ms = thread_cpu_ms() - before;
	return NULL;
}

Test(concurrency_races, a_walk_waits_out_a_rename_asleep)
{
	struct udc_cache *c = env.c;
	struct rs_walker w[RS_WALKERS];
	const struct timespec hold = { .tv_nsec = RS_HOLD_MS * 1000000L };

	cr_assert_eq(udc_walk(c, TC_ROOT, "/d", 2, 0, &env.call, NULL), 0);
	udc_mutex_lock(&c->rename_lock);
	ck_sequence_write_begin(&c->rename_seq);
	for (int i = 0; i < RS_WALKERS; i++)
		cr_assert_eq(pthread_create(&w[i].t, NULL, rs_walker_fn, &w[i]), 0);
	nanosleep(&hold, NULL);
	ck_sequence_write_end(&c->rename_seq);
	udc_mutex_unlock(&c->rename_lock);
	for (int i = 0; i < RS_WALKERS; i++) {
		pthread_join(w[i].t, NULL);
		cr_expect_eq(w[i].rc, 0, "walker %d: %d", i, w[i].rc);
		cr_expect_lt(w[i].cpu_ms, RS_HOLD_MS / 3.0,
			     "walker %d spun: %.1f ms of CPU while a rename was held open %d ms", i,
			     w[i].cpu_ms, RS_HOLD_MS);
	}
}

static struct fg_shared fg;

static void *fg_reader(void *p)
{
	struct prng rng;
	char nm[8];

	prng_init(&rng, fg.seed + (uint64_t)(uintptr_t)p);
	for (int i = 0; i < 2000000 && !atomic_load(&fg.done); i++) {
		/* Read the generation before the lookup starts: acquire pairs with
		 * the main thread's release after the invalidation returned. */
		uint64_t gone = atomic_load_explicit(&fg.forgotten_gen, memory_order_acquire);
		struct udc_attr got;
		int n = (int)prng_below(&rng, FG_NAMES), r;

		snprintf(nm, sizeof(nm), "f%d", n);
		r = tc_lookup(env.c, D_INO, nm, &got);
		if (r == UDC_POSITIVE && got.cookie <= gone) {
			tfail_rec(&fg.fail,
				  "lookup(d, %s) returned generation %llu after generation %llu "
				  "was forgotten",
				  nm, (unsigned long long)got.cookie, (unsigned long long)gone);
			break;
		}
		if (r == UDC_POSITIVE && got.ino != 1000 + (udc_ino)n) {
			tfail_rec(&fg.fail, "lookup(d, %s) gave ino %llu", nm,
				  (unsigned long long)got.ino);
			break;
		}
		if (r < 0) {
			tfail_rec(&fg.fail, "lookup = %s", tc_res_str(r));
			break;
		}
	}
	return NULL;
}

Test(concurrency_races, forget_is_immediate_for_all_threads)
{
	pthread_t th[FG_READERS];
	char nm[8];
	struct udc_attr dattr = tc_attr(D_INO, UDC_TYPE_DIR, 0xD);

	memset(&fg, 0, sizeof(fg));
	tfail_init(&fg.fail);
	fg.seed = test_seed("concurrency/forget_is_immediate_for_all_threads");
	for (int i = 0; i < FG_READERS; i++)
		cr_assert_eq(pthread_create(&th[i], NULL, fg_reader, (void *)(uintptr_t)i), 0);
	for (uint64_t g = 1; g <= FG_ROUNDS; g++) {
		for (int n = 0; n < FG_NAMES; n++) {
			struct udc_attr a = tc_attr(1000 + (udc_ino)n, UDC_TYPE_REG, g);

			snprintf(nm, sizeof(nm), "f%d", n);
			cr_assert_eq(udc_add(env.c, D_INO, nm, strlen(nm), &a), 0);
		}
		if (g % 3 == 0) {
			cr_assert_eq(tc_rmdir(env.c, TC_ROOT, "d", D_INO), 0);
			cr_assert_eq(udc_add(env.c, TC_ROOT, "d", 1, &dattr), 0);
		} else if (g % 3 == 1) {
			cr_assert_eq(udc_invalidate_dir(env.c, D_INO), 0);
		} else {
			cr_assert_eq(tc_rename(env.c, TC_ROOT, "d", TC_ROOT, "d2", D_INO), 0);
			cr_assert_eq(tc_rename(env.c, TC_ROOT, "d2", TC_ROOT, "d", D_INO), 0);
			cr_assert_eq(udc_invalidate_dir(env.c, D_INO), 0);
		}
		/* Nothing of generation g may be seen by a lookup starting now. */
		for (int n = 0; n < FG_NAMES; n++) {
			snprintf(nm, sizeof(nm), "f%d", n);
			cr_assert_eq(tc_lookup(env.c, D_INO, nm, NULL), UDC_MISS,
				     "round %llu: %s survived", (unsigned long long)g, nm);
		}
		atomic_store_explicit(&fg.forgotten_gen, g, memory_order_release);
		if (atomic_load(&fg.fail.count))
			break;
	}
	atomic_store(&fg.done, true);
	for (int i = 0; i < FG_READERS; i++)
		pthread_join(th[i], NULL);
	tfail_assert_none(&fg.fail);
}

/* ------------------------------------------------------------------ mixed */

#define MX_THREADS 4
#define MX_OPS 20000
#define MX_OWN 32
#define MX_SHARED 32
#define MX_SHARED_DIR ((udc_ino)50)
#define MX_OWN_DIR(t) ((udc_ino)100 + (udc_ino)(t))

enum mx_state {
	MX_MISS,
	MX_POS,
	MX_NEGMISS
};

struct mx_thread {
	int idx;
	uint64_t seed;
	struct tfail *fail;
	enum mx_state st[MX_OWN];
	struct udc_attr a[MX_OWN];
	uint64_t next_ino;
	uint64_t n_ops;
};

static size_t mx_limit_slack;

/* Shared names come in pairs (sh2k, sh2k+1) that renames move between; an
 * attr carries its pair's index in the top half of ino and cookie, so that
 * any answer can be checked for belonging to the name asked. */
static uint64_t mx_cookie(int name, uint64_t r)
{
	return ((uint64_t)(name / 2) << 32) | (r & 0xFFFFFFFFu);
}

static bool mx_attr_of(const struct udc_attr *a, int name)
{
	return a->cookie >> 32 == (uint64_t)(name / 2) && a->ino >> 32 == (uint64_t)(name / 2);
}

static void mx_check_own(struct mx_thread *t, int n, const char *when)
{
	char nm[16];
	struct udc_attr got;
	int r;

	snprintf(nm, sizeof(nm), "own%d", n);
	r = tc_lookup(env.c, MX_OWN_DIR(t->idx), nm, &got);
	switch (t->st[n]) {
	case MX_POS:
		TCHECK(t->fail, r == UDC_POSITIVE && tc_attr_eq(&got, &t->a[n]),
		       "thread %d %s: own %s = %s ino %llu, want POSITIVE ino %llu", t->idx, when,
		       nm, tc_res_str(r), (unsigned long long)got.ino,
		       (unsigned long long)t->a[n].ino);
		break;
	case MX_MISS:
		TCHECK(t->fail, r == UDC_MISS, "thread %d %s: own %s = %s, want MISS", t->idx, when,
		       nm, tc_res_str(r));
		break;
	case MX_NEGMISS:
		TCHECK(t->fail, r == UDC_MISS || r == UDC_NEGATIVE,
		       "thread %d %s: own %s = %s, want NEGATIVE or MISS", t->idx, when, nm,
		       tc_res_str(r));
		break;
	}
}

static void mx_own_op(struct mx_thread *t, struct prng *rng)
{
	udc_ino dir = MX_OWN_DIR(t->idx);
	int n = (int)prng_below(rng, MX_OWN), r;
	char nm[16];
	struct udc_attr a, got;

	snprintf(nm, sizeof(nm), "own%d", n);
	switch (prng_below(rng, 8)) {
	case 0:
	case 1:
		a = tc_attr(t->next_ino++, UDC_TYPE_REG, prng_next(rng));
		model_set_s(env.m, dir, nm, &a);
		r = udc_add(env.c, dir, nm, strlen(nm), &a);
		TCHECK(t->fail, r == 0, "own add = %s", tc_res_str(r));
		t->st[n] = MX_POS;
		t->a[n] = a;
		break;
	case 2:
		model_del(env.m, dir, nm, strlen(nm));
		r = tc_add_neg(env.c, dir, nm);
		TCHECK(t->fail, r == 0, "own add_negative = %s", tc_res_str(r));
		t->st[n] = MX_NEGMISS;
		break;
	case 3:
		model_del(env.m, dir, nm, strlen(nm));
		r = tc_remove(env.c, dir, nm);
		TCHECK(t->fail, r == 0, "own remove = %s", tc_res_str(r));
		t->st[n] = MX_MISS;
		break;
	case 4:
		r = tc_invalidate(env.c, dir, nm);
		TCHECK(t->fail, r == 0, "own invalidate = %s", tc_res_str(r));
		t->st[n] = MX_MISS;
		break;
	case 5: {
		bool sp = model_get(env.m, dir, nm, strlen(nm), &a) == 0;

		r = tc_resolve(&env, dir, nm, &got);
		if (sp) {
			TCHECK(t->fail, r == 0 && tc_attr_eq(&got, &a),
			       "thread %d: own resolve %s = %s ino %llu, want ino %llu", t->idx, nm,
			       tc_res_str(r), (unsigned long long)got.ino,
			       (unsigned long long)a.ino);
			t->st[n] = MX_POS;
			t->a[n] = a;
		} else {
			TCHECK(t->fail, r == -ENOENT,
			       "thread %d: own resolve %s = %s, want -ENOENT", t->idx, nm,
			       tc_res_str(r));
			t->st[n] = MX_NEGMISS;
		}
		break;
	}
	case 6: {
		int m = (int)prng_below(rng, MX_OWN);
		char nm2[16];

		if (m == n || model_get(env.m, dir, nm, strlen(nm), &a) != 0)
			break;
		snprintf(nm2, sizeof(nm2), "own%d", m);
		model_move(env.m, dir, nm, strlen(nm), dir, nm2, strlen(nm2));
		r = tc_rename(env.c, dir, nm, dir, nm2, prng_chance(rng, 1, 2) ? a.ino : 0);
		TCHECK(t->fail, r == 0, "own rename = %s", tc_res_str(r));
		if (t->st[n] == MX_POS) {
			t->st[m] = MX_POS;
			t->a[m] = t->a[n];
		} else {
			t->st[m] = MX_MISS;
		}
		t->st[n] = MX_MISS;
		mx_check_own(t, m, "after rename (new)");
		break;
	}
	default:
		break;
	}
	mx_check_own(t, n, "after own op");
}

static void mx_shared_op(struct mx_thread *t, struct prng *rng)
{
	int n = (int)prng_below(rng, MX_SHARED), r;
	char nm[16];
	struct udc_attr a, got;

	snprintf(nm, sizeof(nm), "sh%d", n);
	switch (prng_below(rng, 12)) {
	case 0:
	case 1:
		a = tc_attr(((udc_ino)(n / 2) << 32) | (t->next_ino++ & 0xFFFFFFFFu), UDC_TYPE_REG,
			    mx_cookie(n, prng_next(rng)));
		model_set_s(env.m, MX_SHARED_DIR, nm, &a);
		r = udc_add(env.c, MX_SHARED_DIR, nm, strlen(nm), &a);
		TCHECK(t->fail, r == 0, "shared add = %s", tc_res_str(r));
		break;
	case 2:
		model_del(env.m, MX_SHARED_DIR, nm, strlen(nm));
		r = tc_remove(env.c, MX_SHARED_DIR, nm);
		TCHECK(t->fail, r == 0, "shared remove = %s", tc_res_str(r));
		break;
	case 3:
		r = tc_add_neg(env.c, MX_SHARED_DIR, nm);
		TCHECK(t->fail, r == 0, "shared add_negative = %s", tc_res_str(r));
		break;
	case 4:
		r = tc_invalidate(env.c, MX_SHARED_DIR, nm);
		TCHECK(t->fail, r == 0, "shared invalidate = %s", tc_res_str(r));
		break;
	case 5:
		if (prng_chance(rng, 1, 8)) {
			r = udc_invalidate_dir(env.c, MX_SHARED_DIR);
			TCHECK(t->fail, r == 0, "shared invalidate_dir = %s", tc_res_str(r));
		}
		break;
	case 6: {
		/* Rename within the name's pair (see mx_cookie). */
		char nm2[16];

		snprintf(nm2, sizeof(nm2), "sh%d", n ^ 1);
		model_move(env.m, MX_SHARED_DIR, nm, strlen(nm), MX_SHARED_DIR, nm2, strlen(nm2));
		r = tc_rename(env.c, MX_SHARED_DIR, nm, MX_SHARED_DIR, nm2, 0);
		TCHECK(t->fail, r == 0, "shared rename = %s", tc_res_str(r));
		break;
	}
	case 7:
	case 8:
		r = tc_resolve(&env, MX_SHARED_DIR, nm, &got);
		TCHECK(t->fail, r == 0 || r == -ENOENT, "shared resolve = %s", tc_res_str(r));
		if (r == 0)
			TCHECK(t->fail, mx_attr_of(&got, n),
			       "shared resolve %s got another name's attr (ino %llx cookie %llx type %u)",
			       nm, (unsigned long long)got.ino, (unsigned long long)got.cookie,
			       got.type);
		break;
	default:
		r = tc_lookup(env.c, MX_SHARED_DIR, nm, &got);
		TCHECK(t->fail, r == UDC_MISS || r == UDC_POSITIVE || r == UDC_NEGATIVE,
		       "shared lookup = %s", tc_res_str(r));
		if (r == UDC_POSITIVE)
			TCHECK(t->fail, mx_attr_of(&got, n),
			       "shared lookup %s got another name's attr (ino %llx cookie %llx type %u)",
			       nm, (unsigned long long)got.ino, (unsigned long long)got.cookie,
			       got.type);
		break;
	}
}

static void mx_check_stats(struct mx_thread *t)
{
	struct udc_stats st = tc_stats(env.c);

	TCHECK(t->fail,
	       st.nr_positive < ((uint64_t)1 << 40) && st.nr_negative < ((uint64_t)1 << 40),
	       "counter underflow: nr_positive %llu nr_negative %llu",
	       (unsigned long long)st.nr_positive, (unsigned long long)st.nr_negative);
	TCHECK(t->fail, st.bytes_used <= st.bytes_limit + mx_limit_slack,
	       "bytes_used %llu > bytes_limit %llu", (unsigned long long)st.bytes_used,
	       (unsigned long long)st.bytes_limit);
}

static void *mx_thread_fn(void *p)
{
	struct mx_thread *t = p;
	struct prng rng;

	prng_init(&rng, t->seed);
	for (int i = 0; i < MX_OPS && atomic_load(&t->fail->count) == 0; i++) {
		if (prng_chance(&rng, 1, 2))
			mx_own_op(t, &rng);
		else
			mx_shared_op(t, &rng);
		if (i % 256 == 0)
			mx_check_stats(t);
		if (i % 4096 == 4095) {
			udc_thread_offline(env.c);
			sched_yield();
			udc_thread_online(env.c);
		}
		t->n_ops++;
	}
	/* Every own name, one last time. */
	for (int n = 0; n < MX_OWN; n++)
		mx_check_own(t, n, "at the end");
	udc_thread_offline(env.c);
	return NULL;
}

Test(concurrency_races, mixed_random_ops, .timeout = 90)
{
	pthread_t th[MX_THREADS];
	static struct mx_thread t[MX_THREADS];
	struct tfail fail;
	uint64_t seed = test_seed("concurrency/mixed_random_ops");

	tfail_init(&fail);
	mx_limit_slack = 0;
	tc_store_add(&env, TC_ROOT, "shared", MX_SHARED_DIR, UDC_TYPE_DIR, 0);
	for (int i = 0; i < MX_THREADS; i++) {
		memset(&t[i], 0, sizeof(t[i]));
		t[i].idx = i;
		t[i].seed = seed + 0x9E3779B97F4A7C15ULL * (uint64_t)(i + 1);
		t[i].fail = &fail;
		t[i].next_ino = 10000 + 1000000 * (uint64_t)i;
		cr_assert_eq(pthread_create(&th[i], NULL, mx_thread_fn, &t[i]), 0);
	}
	for (int i = 0; i < MX_THREADS; i++)
		pthread_join(th[i], NULL);
	tfail_assert_none(&fail);
	for (int i = 0; i < MX_THREADS; i++) {
		cr_assert_eq(t[i].n_ops, MX_OPS);
		for (int n = 0; n < MX_OWN; n++)
			mx_check_own(&t[i], n, "from the main thread");
	}
	tfail_assert_none(&fail);
	struct udc_stats st = tc_stats(env.c);
	cr_assert_lt(st.nr_positive, (uint64_t)1 << 40);
	cr_assert_lt(st.nr_negative, (uint64_t)1 << 40);
	cr_assert_leq(st.bytes_used, st.bytes_limit);
	/* teardown destroys the cache: ASan/LSan builds check for leaks */
}

/* A small limit: reclaim runs inline under concurrent adds. */
struct sl_arg {
	int idx;
	uint64_t limit, slack;
	struct tfail *fail;
};

static void *sl_thread(void *p)
{
	struct sl_arg *a = p;
	char nm[64];

	for (int i = 0; i < 40000 && atomic_load(&a->fail->count) == 0; i++) {
		struct udc_attr at = tc_attr(1 + (udc_ino)i * 8 + (udc_ino)a->idx, UDC_TYPE_REG,
					     ((uint64_t)a->idx << 32) | (uint64_t)i);
		udc_ino dir = 200 + (udc_ino)(i % 16);
		struct udc_stats st;
		struct udc_attr got;
		int r;

		snprintf(nm, sizeof(nm), "t%d-some-padding-for-bytes-%08d", a->idx, i);
		r = udc_add(env.c, dir, nm, strlen(nm), &at);
		TCHECK(a->fail, r == 0 || r == -ENOMEM, "add = %s", tc_res_str(r));
		if (i % 3 == 0) {
			snprintf(nm, sizeof(nm), "neg-%d-%d", a->idx, i);
			r = udc_add_negative(env.c, dir, nm, strlen(nm), (uint32_t)a->idx);
			TCHECK(a->fail, r == 0 || r == -ENOMEM, "add_negative = %s", tc_res_str(r));
		}
		st = tc_stats(env.c);
		TCHECK(a->fail, st.bytes_used <= a->limit + a->slack,
		       "thread %d add #%d: bytes_used %llu > limit %llu + slack %llu", a->idx, i,
		       (unsigned long long)st.bytes_used, (unsigned long long)a->limit,
		       (unsigned long long)a->slack);
		/* An older name of this thread: right or forgotten. */
		if (i > 10) {
			int j = i - 1 - (i * 7) % 10;
			struct udc_attr want =
				tc_attr(1 + (udc_ino)j * 8 + (udc_ino)a->idx, UDC_TYPE_REG,
					((uint64_t)a->idx << 32) | (uint64_t)j);

			snprintf(nm, sizeof(nm), "t%d-some-padding-for-bytes-%08d", a->idx, j);
			r = udc_lookup(env.c, 200 + (udc_ino)(j % 16), nm, strlen(nm), &got);
			TCHECK(a->fail,
			       r == UDC_MISS || (r == UDC_POSITIVE && tc_attr_eq(&got, &want)),
			       "thread %d: %s = %s (ino %llu)", a->idx, nm, tc_res_str(r),
			       (unsigned long long)got.ino);
		}
		if (a->idx == 0 && i % 1000 == 999)
			udc_shrink(env.c, (size_t)512 << 10);
	}
	return NULL;
}

Test(concurrency_races, small_limit_concurrent_adds, .timeout = 90)
{
	pthread_t th[MX_THREADS];
	struct sl_arg args[MX_THREADS];
	struct tfail fail;
	struct udc_stats st = tc_stats(env.c);
	/* 4 MiB, or the least the fixture's 1 GiB cache takes (its open
	 * pages: 4.3 MiB since positives with values have classes of their own) */
	const uint64_t limit = st.bytes_min > ((uint64_t)4 << 20) ? st.bytes_min : (uint64_t)4 << 20;

	tfail_init(&fail);
	cr_assert_eq(udc_set_memory_limit(env.c, (size_t)limit), 0);
	for (int i = 0; i < MX_THREADS; i++) {
		/* One reclaim batch (max(1% of the limit, 1 MiB)), plus what the
		 * other threads may add between a call's return and its stats. */
		args[i] = (struct sl_arg){ .idx = i,
					   .limit = limit,
					   .slack = ((uint64_t)1 << 20) + ((uint64_t)256 << 10),
					   .fail = &fail };
		cr_assert_eq(pthread_create(&th[i], NULL, sl_thread, &args[i]), 0);
	}
	for (int i = 0; i < MX_THREADS; i++)
		pthread_join(th[i], NULL);
	tfail_assert_none(&fail);
	st = tc_stats(env.c);
	cr_assert_gt(st.evictions, 0, "%llu bytes never filled (bytes_used %llu)",
		     (unsigned long long)limit, (unsigned long long)st.bytes_used);
	cr_assert_leq(st.bytes_used, limit + ((uint64_t)1 << 20));
	cr_assert_lt(st.nr_positive, (uint64_t)1 << 40);
	cr_assert_lt(st.nr_negative, (uint64_t)1 << 40);
}

/* ------------------------------------------- rename vs invalidate_dir */

/*
 * Renames within one directory racing udc_invalidate_dir of it: whatever a
 * lookup returns must be an attr that was added (never a half-made entry).
 */
#define RI_ROUNDS 100000

struct ri_shared {
	atomic_bool done;
	struct tfail fail;
};

static struct ri_shared ri;

static void *ri_renamer(void *p)
{
	(void)p;
	for (int i = 0; i < RI_ROUNDS && !atomic_load(&ri.fail.count); i++) {
		struct udc_attr a =
			tc_attr(0x1000 + (udc_ino)i, UDC_TYPE_REG, 0xC0000000u + (unsigned)i);
		struct udc_attr got = { 0 };
		int r;

		r = udc_add(env.c, D_INO, "a", 1, &a);
		TCHECK(&ri.fail, r == 0, "add = %s", tc_res_str(r));
		r = tc_rename(env.c, D_INO, "a", D_INO, "b", i % 2 ? a.ino : UDC_INO_NONE);
		TCHECK(&ri.fail, r == 0, "rename = %s", tc_res_str(r));
		/* Only this thread changes names in d: "b" is a's object or forgotten. */
		r = udc_lookup(env.c, D_INO, "b", 1, &got);
		TCHECK(&ri.fail, r == UDC_MISS || (r == UDC_POSITIVE && tc_attr_eq(&got, &a)),
		       "round %d: after rename a -> b: (d, b) = %s ino %#llx cookie %#llx, want "
		       "MISS or ino %#llx",
		       i, tc_res_str(r), (unsigned long long)got.ino,
		       (unsigned long long)got.cookie, (unsigned long long)a.ino);
		r = tc_rename(env.c, D_INO, "b", D_INO, "a", UDC_INO_NONE);
		TCHECK(&ri.fail, r == 0, "rename back = %s", tc_res_str(r));
		r = udc_lookup(env.c, D_INO, "a", 1, &got);
		TCHECK(&ri.fail, r == UDC_MISS || (r == UDC_POSITIVE && tc_attr_eq(&got, &a)),
		       "round %d: after rename b -> a: (d, a) = %s ino %#llx, want MISS or ino %#llx",
		       i, tc_res_str(r), (unsigned long long)got.ino, (unsigned long long)a.ino);
	}
	atomic_store(&ri.done, true);
	return NULL;
}

static void *ri_invalidator(void *p)
{
	(void)p;
	for (int i = 0; i < 4 * RI_ROUNDS && !atomic_load(&ri.done); i++) {
		int r = udc_invalidate_dir(env.c, D_INO);

		TCHECK(&ri.fail, r == 0, "invalidate_dir = %s", tc_res_str(r));
		if (i % 16 == 0)
			sched_yield();
	}
	return NULL;
}

static void *ri_reader(void *p)
{
	(void)p;
	for (int i = 0; i < 8 * RI_ROUNDS && !atomic_load(&ri.done); i++) {
		const char *nm = i % 2 ? "a" : "b";
		struct udc_attr got;
		int r = udc_lookup(env.c, D_INO, nm, 1, &got);

		if (r == UDC_POSITIVE &&
		    (got.ino < 0x1000 || got.ino >= 0x1000 + RI_ROUNDS ||
		     got.cookie != 0xC0000000u + (got.ino - 0x1000) || got.type != UDC_TYPE_REG)) {
			tfail_rec(&ri.fail,
				  "lookup(d, %s) = POSITIVE ino %#llx type %u cookie %#llx", nm,
				  (unsigned long long)got.ino, got.type,
				  (unsigned long long)got.cookie);
			break;
		}
	}
	return NULL;
}

Test(concurrency_races, rename_racing_invalidate_dir)
{
	pthread_t t[3];

	memset(&ri, 0, sizeof(ri));
	tfail_init(&ri.fail);
	cr_assert_eq(pthread_create(&t[0], NULL, ri_renamer, NULL), 0);
	cr_assert_eq(pthread_create(&t[1], NULL, ri_invalidator, NULL), 0);
	cr_assert_eq(pthread_create(&t[2], NULL, ri_reader, NULL), 0);
	for (int i = 0; i < 3; i++)
		pthread_join(t[i], NULL);
	tfail_assert_none(&ri.fail);
}

/* A thread the embedder registered with urcu-memb itself (it uses liburcu
 * too) calls in: udcache must not register it again (liburcu checks), and
 * must leave it registered for the embedder to unregister. */
static void *self_registered_main(void *arg)
{
	udc_cache *c = arg;
	struct udc_attr a = tc_attr(77, UDC_TYPE_REG, 7), got;

	urcu_memb_register_thread();
	cr_assert_eq(udc_add(c, 1, "mine", 4, &a), 0);
	cr_assert_eq(udc_lookup(c, 1, "mine", 4, &got), UDC_POSITIVE);
	cr_assert(tc_attr_eq(&a, &got));
	urcu_memb_unregister_thread();   /* would assert if udcache had unregistered it */
	return NULL;
}

Test(concurrency_races, embedder_registered_thread)
{
	udc_cache *c = tc_create(1, NULL, 0);
	pthread_t t;

	cr_assert_eq(pthread_create(&t, NULL, self_registered_main, c), 0);
	cr_assert_eq(pthread_join(t, NULL), 0);
	udc_destroy(c);
}

#if UDC_DEBUG
/*
 * The last release of a directory object against the reaper.  dir_put()
 * drops its reference and then marks the object idle; an object already
 * on the reaper's idle list (a pin does not take it off) may be killed
 * between the two, and freed a grace period later.  The release must keep
 * the object alive until its last access (it runs in a read-side section
 * that the free waits for): CI's TSan run reported a write to a freed
 * object when it did not.  The window hook (common/debug.h) holds the
 * releasing thread between its decrement and its mark while this thread
 * kills and frees the object (udc_shrink, then rcu_barrier for the free);
 * without the read-side section, ASan reports the mark's write to freed
 * memory.  With it, the free waits for the release, so the hook gives up
 * waiting after 300 ms and the release ends first.
 */
extern void (*udc_window_dir_put_last)(void *);

static __thread bool race_is_putter;   /* set by the releasing thread itself */
static atomic_bool race_armed, race_in_window, race_freed;

static void race_window(void *obj)
{
	(void)obj;
	if (!race_is_putter || !atomic_exchange(&race_armed, false))
		return;
	atomic_store(&race_in_window, true);
	for (int ms = 0; ms < 300 && !atomic_load(&race_freed); ms++)
		usleep(1000);
}

static void *race_release(void *arg)
{
	struct udc_fill f;

	race_is_putter = true;
	/* Pins the idle object and releases it: the window opens. */
	return (void *)(intptr_t)udc_dir_fill_begin(arg, 70, &f);
}

Test(concurrency_races, last_release_racing_the_reaper)
{
	udc_cache *c = tc_create(TC_ROOT, NULL, UDC_CFG_NO_RECLAIM_THREAD);
	struct udc_fill f;

	/* An object with no entry, kept idle for its answer (complete), on
	 * the reaper's idle list (a call's reaping batch put it there). */
	cr_assert_eq(udc_dir_fill_begin(c, 70, &f), 0);
	cr_assert_eq(udc_dir_complete(c, 70, &f), 0);
	cr_assert_eq(udc_remove(c, TC_ROOT, "absent", 6), 0);   /* nothing cached: 0 */
	udc_window_dir_put_last = race_window;
	atomic_store(&race_armed, true);
	pthread_t putter;
	cr_assert_eq(pthread_create(&putter, NULL, race_release, c), 0);
	while (!atomic_load(&race_in_window))
		usleep(1000);
	udc_shrink(c, SIZE_MAX);   /* the reaper, under pressure: kills the idle object */
	urcu_memb_barrier();       /* and its free has run, unless it waits for the release */
	atomic_store(&race_freed, true);
	void *r;
	pthread_join(putter, &r);
	udc_window_dir_put_last = NULL;
	cr_assert_eq((intptr_t)r, 0);
	udc_destroy(c);
}
#endif

/* The references of @dir's object: its entries and pins (ours taken off). */
static int32_t dir_refs(udc_cache *c, udc_ino dir)
{
	struct udc_dir *d = dir_find(c, dir);

	cr_assert_not_null(d, "no object for directory %llu", (unsigned long long)dir);
	int32_t refs = atomic_load(&d->refs) - 1;
	dir_put(c, d);
	return refs;
}

/*
 * A rename and an exchange within one directory leave its object's
 * references as they were: the second name's op borrows the first's pin
 * (name_op_init_as's @pinned) and must neither put it nor give it to an
 * entry; one put too many frees the object under its entries, one too
 * few keeps it for good.
 */
Test(concurrency_races, a_rename_within_a_directory_balances_its_pins)
{
	udc_cache *c = tc_create(TC_ROOT, NULL, UDC_CFG_NO_RECLAIM_THREAD);
	const udc_ino d = 70;

	cr_assert_eq(tc_add(c, d, "a", 100, UDC_TYPE_REG, 1), 0);
	cr_assert_eq(tc_add(c, d, "b", 101, UDC_TYPE_REG, 2), 0);
	cr_assert_eq(tc_add_neg(c, d, "c"), 0);
	int32_t before = dir_refs(c, d);
	cr_assert_eq(before, 3, "the precondition: one reference an entry, %d", before);

	cr_assert_eq(tc_rename(c, d, "a", d, "c", 100), 0);   /* over the negative */
	cr_assert_eq(dir_refs(c, d), 2, "a rename over a negative: two entries left");
	cr_assert_eq(tc_rename(c, d, "c", d, "z", 100), 0);   /* to an uncached name */
	cr_assert_eq(dir_refs(c, d), 2, "a rename to a new name: as many entries");
	cr_assert_eq(udc_exchange(c, d, "z", 1, d, "b", 1), 0);
	cr_assert_eq(dir_refs(c, d), 2, "an exchange: as many entries");
	cr_assert_eq(tc_lookup(c, d, "b", NULL), UDC_POSITIVE);
	cr_assert_eq(tc_lookup(c, d, "z", NULL), UDC_POSITIVE);
	udc_destroy(c);
}
