/* SPDX-License-Identifier: MIT */
/*
 * tests/engine/test_fork.c - the child of a fork() (no exec) can use a cache.
 *
 * The parent uses a cache, forks, and the child looks names up, adds,
 * shrinks everything (udc_shrink(SIZE_MAX): compaction, sweeps, rcu_barrier)
 * and destroys the cache, then makes and destroys a fresh one; meanwhile the
 * parent goes on with its own copy.  Before engine/fork.c the child hung in
 * udc_shrink and udc_destroy (liburcu's call_rcu thread and the reclaim
 * thread do not exist in a child).  The child runs under alarm(): a hang
 * kills it with SIGALRM and fails the test instead of blocking CI; the
 * parent also gives up (SIGKILL) after CHILD_TIMEOUT_S.
 *
 * Both with the reclaim thread (busy: a small limit, so that it is inside a
 * batch when the fork comes, and many forks) and with
 * UDC_CFG_NO_RECLAIM_THREAD.  The child reports what went wrong through its
 * exit status only (no Criterion assertion in it).
 */
#include <criterion/criterion.h>
#include <errno.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "include/udcache.h"
#include "common/tcache.h"

#define CHILD_ALARM_S 20     /* the child kills itself past this */
#define CHILD_TIMEOUT_S 40   /* the parent kills it past this */
#define NAMES 2000           /* kept for the strict checks (no eviction) */

/* The child's exit codes: which step failed. */
enum {
	CHILD_OK = 0,
	CHILD_LOOKUP = 10,   /* a name added before the fork was not answered right */
	CHILD_ADD = 11,
	CHILD_LOOKUP_NEW = 12,
	CHILD_SHRINK = 13,   /* udc_shrink left names behind */
	CHILD_CREATE = 14,
	CHILD_FRESH = 15,    /* a cache made in the child misbehaved */
};

static udc_cache *make_cache(uint32_t flags, size_t limit)
{
	struct udc_config cfg = UDC_CONFIG_INIT;

	cfg.root = TC_ROOT;
	cfg.flags = flags;
	cfg.memory_limit = limit;
	udc_cache *c = udc_create(&cfg);
	cr_assert_not_null(c, "udc_create: %s", strerror(errno));
	return c;
}

static void name_of(char *buf, size_t size, const char *prefix, int i)
{
	snprintf(buf, size, "%s%d", prefix, i);
}

/* Positives p<i> (ino base + i) and negatives n<i> in directory 1. */
static int fill(udc_cache *c, const char *pos, const char *neg, int from, int to, udc_ino base)
{
	char name[32];

	for (int i = from; i < to; i++) {
		name_of(name, sizeof(name), pos, i);
		int rc = tc_add(c, TC_ROOT, name, base + (udc_ino)i, UDC_TYPE_REG, (uint64_t)i);
		if (rc)
			return rc;
		name_of(name, sizeof(name), neg, i);
		rc = tc_add_neg(c, TC_ROOT, name);
		if (rc)
			return rc;
	}
	return 0;
}

/* With @strict, every name must be answered as added; else (a small
 * limit: names may be evicted) an answer may be a miss but never wrong. */
static bool check(udc_cache *c, const char *pos, const char *neg, int from, int to, udc_ino base,
		  bool strict)
{
	char name[32];
	struct udc_attr a;

	for (int i = from; i < to; i++) {
		name_of(name, sizeof(name), pos, i);
		int r = tc_lookup(c, TC_ROOT, name, &a);
		if (r == UDC_POSITIVE ? a.ino != base + (udc_ino)i : (strict || r != UDC_MISS))
			return false;
		name_of(name, sizeof(name), neg, i);
		r = tc_lookup(c, TC_ROOT, name, &a);
		if (r == UDC_NEGATIVE ? false : (strict || r != UDC_MISS))
			return false;
	}
	return true;
}

/*
 * udc_shrink(SIZE_MAX) empties the cache but for the entries in other
 * threads' open slab pages: the reclaim thread's promotions and moves land
 * in its own, which it retires at the end of each pass.  So a cache with a
 * busy thread may need a few tries: true once it is empty.
 */
static bool shrink_all(udc_cache *c)
{
	for (int tries = 0; tries < 50; tries++) {
		udc_shrink(c, SIZE_MAX);
		struct udc_stats st = tc_stats(c);
		if (st.nr_positive + st.nr_negative == 0)
			return true;
		usleep(20 * 1000);   /* the thread's pass ends, its pages retire */
	}
	return false;
}

static int child_main(udc_cache *c, int names, bool strict)
{
	alarm(CHILD_ALARM_S);
	if (!check(c, "p", "n", 0, names, 1000, strict))
		return CHILD_LOOKUP;
	if (fill(c, "cp", "cn", 0, names, 100000))
		return CHILD_ADD;
	if (!check(c, "cp", "cn", 0, names, 100000, strict))
		return CHILD_LOOKUP_NEW;
	if (!shrink_all(c))
		return CHILD_SHRINK;
	udc_destroy(c);

	/* A cache of the child's own: call_rcu works, the thread starts. */
	struct udc_config cfg = UDC_CONFIG_INIT;
	cfg.root = TC_ROOT;
	udc_cache *d = udc_create(&cfg);
	if (!d)
		return CHILD_CREATE;
	if (fill(d, "p", "n", 0, 100, 1000) || !check(d, "p", "n", 0, 100, 1000, true))
		return CHILD_FRESH;
	udc_shrink(d, SIZE_MAX);
	udc_destroy(d);
	return CHILD_OK;
}

/* Wait for @pid at most CHILD_TIMEOUT_S; its wait status. */
static int wait_child(pid_t pid)
{
	int status = 0;
	struct timespec nap = { .tv_sec = 0, .tv_nsec = 10 * 1000 * 1000 };

	for (int i = 0; i < CHILD_TIMEOUT_S * 100; i++) {
		pid_t r = waitpid(pid, &status, WNOHANG);
		if (r == pid)
			return status;
		cr_assert(r == 0, "waitpid: %s", strerror(errno));
		nanosleep(&nap, NULL);
	}
	kill(pid, SIGKILL);
	waitpid(pid, &status, 0);
	cr_assert_fail("the child hung (killed after %d s)", CHILD_TIMEOUT_S);
	return status;
}

static void fork_and_check(udc_cache *c, int names, bool strict)
{
	fflush(NULL);   /* nothing buffered is written twice */
	pid_t pid = fork();
	cr_assert(pid >= 0, "fork: %s", strerror(errno));
	if (pid == 0)
		_exit(child_main(c, names, strict));   /* no atexit handler of Criterion's */

	/* The parent goes on with its copy meanwhile. */
	cr_assert(check(c, "p", "n", 0, names, 1000, strict));
	int status = wait_child(pid);
	cr_assert(!WIFSIGNALED(status), "the child died of signal %d%s", WTERMSIG(status),
		  WTERMSIG(status) == SIGALRM ? " (alarm: it hung)" : "");
	cr_assert(WIFEXITED(status) && WEXITSTATUS(status) == CHILD_OK,
		  "the child failed at step %d", WEXITSTATUS(status));
}

/* After the forks the parent's cache still works: its thread was restarted. */
static void parent_after(udc_cache *c, bool strict)
{
	cr_assert_eq(fill(c, "q", "m", 0, 500, 50000), 0);
	cr_assert(check(c, "q", "m", 0, 500, 50000, strict));
	cr_assert(shrink_all(c), "udc_shrink(SIZE_MAX) left %llu entries",
		  (unsigned long long)(tc_stats(c).nr_positive + tc_stats(c).nr_negative));
	udc_destroy(c);
}

Test(fork, with_reclaim_thread)
{
	udc_cache *c = make_cache(0, TC_MEMORY_LIMIT);

	cr_assert_eq(fill(c, "p", "n", 0, NAMES, 1000), 0);
	fork_and_check(c, NAMES, true);
	parent_after(c, true);
}

Test(fork, no_reclaim_thread)
{
	udc_cache *c = make_cache(UDC_CFG_NO_RECLAIM_THREAD, TC_MEMORY_LIMIT);

	cr_assert_eq(fill(c, "p", "n", 0, NAMES, 1000), 0);
	fork_and_check(c, NAMES, true);
	parent_after(c, true);
}

/*
 * A 2 MiB limit and 40,000 names: the reclaim thread is evicting, ageing
 * and compacting when the forks come (so it may hold shrink_lock, a stripe
 * or a slab lock, or wait for a grace period, at that moment).
 */
Test(fork, busy_reclaim_thread)
{
	udc_cache *c = make_cache(0, (size_t)2 << 20);

	for (int round = 0; round < 8; round++) {
		cr_assert_eq(fill(c, "p", "n", 0, 20000, 1000), 0);
		fork_and_check(c, 20000, false);
		cr_assert_eq(fill(c, "x", "y", round * 2000, round * 2000 + 2000, 70000), 0);
	}
	parent_after(c, false);
}

Test(fork, busy_no_reclaim_thread)
{
	udc_cache *c = make_cache(UDC_CFG_NO_RECLAIM_THREAD, (size_t)2 << 20);

	for (int round = 0; round < 4; round++) {
		cr_assert_eq(fill(c, "p", "n", 0, 20000, 1000), 0);
		fork_and_check(c, 20000, false);
	}
	parent_after(c, false);
}

/* Two caches, one with a thread and one without: both are fixed up. */
Test(fork, two_caches)
{
	udc_cache *a = make_cache(0, TC_MEMORY_LIMIT);
	udc_cache *b = make_cache(UDC_CFG_NO_RECLAIM_THREAD, TC_MEMORY_LIMIT);

	cr_assert_eq(fill(a, "p", "n", 0, 200, 1000), 0);
	cr_assert_eq(fill(b, "p", "n", 0, 200, 1000), 0);
	fflush(NULL);
	pid_t pid = fork();
	cr_assert(pid >= 0);
	if (pid == 0) {
		alarm(CHILD_ALARM_S);
		udc_shrink(b, SIZE_MAX);
		udc_destroy(b);
		_exit(child_main(a, 200, true));
	}
	int status = wait_child(pid);
	cr_assert(WIFEXITED(status) && WEXITSTATUS(status) == CHILD_OK, "child status %#x",
		  status);
	parent_after(b, true);
	parent_after(a, true);
}
