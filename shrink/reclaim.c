/* SPDX-License-Identifier: MIT */
/*
 * shrink/reclaim.c - udc_shrink(), udc_set_memory_limit() and the inline
 * reclaim that keeps bytes_used within the limit.
 *
 * Owns: when and how much reclaim runs (the sweeper, sweep.c, decides
 * what goes): the memory limit and its watermarks, the inline pass of the
 * mutating calls, udc_shrink, udc_set_memory_limit, and the background
 * reclaim thread.  The thread (started unless UDC_CFG_NO_RECLAIM_THREAD)
 * wakes every RECLAIM_THREAD_PERIOD_MS, evicts down to the low watermark
 * (limit - slack) once use passes limit - slack/2, ages negatives out
 * (negative_max_age_ms), sweeps the garbage of invalidated directories,
 * trims directories past their bound and runs compaction batches, a bounded number per wake-up, each under
 * shrink_lock.  The inline pass stays with the thread
 * too, so the bound holds even when a client outruns the thread; without
 * the thread, the inline pass also ages negatives, a batch at most every
 * AGE_INLINE_DIV-th of the age, and sweeps garbage and trims, in paced
 * batches (sweep_inline); the big jobs, a table resize past
 * RESIZE_INLINE_BUCKETS and garbage past GARBAGE_WORKER_MIN entries (a
 * huge udc_rmdir's), go to a short-lived worker thread (worker_main).
 *
 * Probes (common/probe.h): reclaim for each eviction pass (which caller,
 * the bytes asked for and those evicted); the entries are sweep.c's.
 *
 * Locking:
 *   shrink_lock serialises passes (inline reclaim only tries it, and waits
 *   for another thread's pass only when the overshoot nears the slack).
 *   The reclaim thread holds it for one batch at a time (RECLAIM_THREAD_BYTES
 *   of eviction, an ageing batch or a compaction batch).  A throttled call
 *   counts itself in lock_waiters while it waits: the thread's eviction
 *   batch then ends once it has made the call's room (sweep_reclaim), and
 *   its next batch of any kind lets the call in first (background_lock).  thread_lock
 *   protects thread_stop and is never held with another lock.
 *   entry_frees_wait() (which waits for call_rcu callbacks) and
 *   synchronize_rcu() (slab_hold_end) are called with shrink_lock held: no
 *   RCU callback and no reader takes it.  The tables' resizes are not:
 *   resize_lock serialises them and is never held with shrink_lock (by
 *   a call, with a trylock; by the reclaim thread, udc_shrink and the
 *   worker), because a resize of millions of buckets takes seconds and a
 *   throttled call waits for shrink_lock.  The worker holds shrink_lock
 *   for one garbage batch at a time, as the reclaim thread does.
 *   reclaimer_lock also guards the worker's making and joining, and
 *   reclaimer_stop, which the worker reads between batches.
 *
 * Scheduling: the reclaim thread runs as SCHED_BATCH: its fair share of
 *   the CPU as before, but a wake-up of it never preempts the thread that
 *   woke it (the kernel's wakeup preemption skips non-SCHED_NORMAL tasks).
 *   Its wake-ups come from the callers: a stripe lock it waited for, a
 *   grace period it waits in (the reader's rcu_read_unlock wakes it).  As
 *   SCHED_NORMAL it took the waker's CPU for its whole batch, a caller's
 *   call waited milliseconds for the scheduler (perf sched_switch, the
 *   writer during a 10 M-entry garbage sweep; BENCHMARKS.md, issue 13).
 *   Its garbage batches land their own frees (slab_hold), for the same
 *   reason: liburcu's call_rcu thread is SCHED_NORMAL, and running those
 *   callbacks (frees, pages given back) it took the callers' CPUs too.
 *
 * Ordering:
 *   lock_waiters is relaxed: a hint that only shortens or delays a
 *   background batch; the lock orders what the batches touch.
 *   age_next_ms and trim_next_ms are claimed by a relaxed CAS: they only
 *   space ageing batches and trims.  worker_busy: worker_main's release
 *   store of false pairs with worker_start's acquire load, so the join
 *   that follows finds the thread returning; and a seq_cst fence after
 *   that store (then a look at the garbage) pairs with one in
 *   worker_start (after the garbage was noted, before busy is read):
 *   either the starter sees the worker idle and makes one, or the worker
 *   sees the garbage and resumes (worker_resume, under reclaimer_lock).
 *   The limit, its watermarks (limit_set) and the landing flag are
 *   relaxed numbers: a call that reads one from before a change is a
 *   call that ran before it.
 */
#include "shrink/internal.h"
#include "common/probe.h"

#include <errno.h>
#include <sched.h>
#include <sys/resource.h>
#include <unistd.h>
#include <string.h>
#include <time.h>

#define SLACK_MIN ((size_t)16 << 10)
#define SLACK_MAX ((size_t)1 << 20)
#define RECLAIM_INLINE_ROUNDS 4
#define RECLAIM_THREAD_PERIOD_MS 100
#define RECLAIM_THREAD_BATCHES 64                  /* batches per wake-up, then sleep */
#define RECLAIM_THREAD_BYTES ((size_t)64 << 10)    /* eviction per shrink_lock hold */
#define AGE_BATCH 2048                             /* ageing work units per shrink_lock hold */
#define AGE_INLINE_DIV 8                           /* inline ageing: every max_age / 8 */
#define STALE_BATCH 1024                           /* garbage work units per batch (a page) */
#define GARBAGE_HOLD_BATCHES 16                    /* ... batches whose frees wait for one hold */
#define SWEEP_INLINE_BATCH 96                      /* the same in a call (see sweep_inline) */
#define SWEEP_INLINE_DUTY 10                       /* ... at most 1/10 of the calls' time */
#define RECLAIM_INLINE_BYTES ((size_t)16 << 10)    /* a call's eviction below the throttle, */
#define RECLAIM_INLINE_DIV 4                       /* ... at most this share of the slack */
#define SHRINK_ROUNDS 4                            /* udc_shrink's sweeps, at most */
#define DIR_REAP_BATCH 256                         /* idle directories looked at per batch */
#define DIR_REAP_BYTES_PER 64                      /* ... and under pressure one more per these
                                                    * bytes wanted (an object is at least 128) */
#define TRIM_PERIOD_MS 100                         /* retained pages not reused in it go back */
#define RESIZE_INLINE_BUCKETS 8192                 /* a call's resize, at most (see tables_resize_calls) */
#define WORKER_NICE 10                             /* the worker thread's (and liburcu's resize helpers') */
#define GARBAGE_WORKER_MIN 16384                   /* without the thread, more garbage goes to the worker */
#define WORKER_NAP_NS 10000000                     /* its wait for a garbage round to be due */

static void reclaimer_kick(struct shrink *sh);   /* wake the thread for a pass */

#define WAITER_WAIT_NS 200000   /* background_lock's wait for throttled calls, at most */

/*
 * shrink_lock, for a background batch (the reclaim thread's, the
 * worker's): a throttled call waiting for it goes first.  A mutex hands
 * over to whoever asks first after the unlock, and that was the thread,
 * back for its next batch before the call it woke had run: in the
 * trickle at 2 MiB a throttled call waited 1-4 ms, two or three of the
 * thread's batches, for a lock it then held with nothing left to do
 * (the first batch had made the room).  Bounded: past WAITER_WAIT_NS
 * the thread takes its turn (with many throttled callers there is always
 * one waiting, and they evict too).
 */
void background_lock(struct shrink *sh)
{
	/* relaxed: a hint (see lock_waiters) */
	if (atomic_load_explicit(&sh->lock_waiters, memory_order_relaxed) > 0) {
		uint64_t end = mono_ns() + WAITER_WAIT_NS;
		do
			sched_yield();
		while (atomic_load_explicit(&sh->lock_waiters, memory_order_relaxed) > 0 &&
		       mono_ns() < end);
	}
	udc_mutex_lock(&sh->lock);
}

__thread bool shrink_tls_reclaimer;

#define CHORES_STRIDE 8   /* see shrink_after_call */
/* Read on every mutating call: initial-exec, as the hit path's (one more
 * byte of the static TLS surplus: see engine/internal.h). */
static __thread uint8_t tls_chores_skip __attribute__((tls_model("initial-exec")));

/* The overshoot allowed past the limit: 1% of it, or 4% of it between
 * 16 KiB and 1 MiB, the larger (a small cache's slack is small: within
 * 1.04 x limit from 400 KiB up; four 4 KiB pages below). */
static size_t reclaim_slack(size_t limit)
{
	size_t one = limit / 100, four = limit / 25;
	size_t floor = four < SLACK_MIN ? SLACK_MIN : four > SLACK_MAX ? SLACK_MAX : four;

	return one > floor ? one : floor;
}

size_t shrink_slack(const struct shrink *sh)
{
	return reclaim_slack(shrink_limit(sh));
}

/* bytes_used as reclaim sees it: with the tables' and the ghosts' due
 * growth, which is made only once there is room for it (tables_resize,
 * sweep_ghosts_grow). */
static size_t reclaim_used(struct shrink *sh)
{
	return cache_bytes_used(sh->c) + cache_tables_growth(sh->c) + sweep_ghosts_growth(sh);
}

/* Resize the tables that are due, within the room under the limit;
 * resize_lock held. */
static void tables_resize_locked(struct shrink *sh)
{
	lock_assert_held(&sh->resize_lock);
	size_t limit = atomic_load_explicit(&sh->limit, memory_order_relaxed);
	size_t used = cache_bytes_used(sh->c);
	/* a cancel in its grace period would leave resize_lock held and the
	 * old array allocated */
	int cs = cancel_hold();

	cache_tables_resize(sh->c, limit > used ? limit - used : 0);
	cancel_release(cs);
}

/* The same, waiting for a resize in progress; shrink_lock not held (see
 * Locking: a resize of millions of buckets takes seconds). */
static void tables_resize(struct shrink *sh)
{
	udc_mutex_lock(&sh->resize_lock);
	tables_resize_locked(sh);
	udc_mutex_unlock(&sh->resize_lock);
}

/* The frees of other paths (call_rcu's: unlinks, replaced entries, the
 * directories reaped) landed; shrink_lock held (it serialises the waits). */
static void frees_wait(struct shrink *sh)
{
	lock_assert_held(&sh->lock);
	entry_frees_wait(sh->c);
}

/* The same for those still queued, landed here (two grace periods, not
 * call_rcu's thread: its 10 ms naps, twice, made every call that waited
 * for them a call of 20 ms); shrink_lock held. */
static void frees_land(struct shrink *sh)
{
	lock_assert_held(&sh->lock);
	entry_frees_land(sh->c);
}

/* Without the thread: an ageing batch when one is due (one caller wins it). */
static void age_inline(struct shrink *sh)
{
	uint32_t max_age = sh->negative_max_age_ms;
	uint64_t due = atomic_load_explicit(&sh->age_next_ms, memory_order_relaxed);
	uint64_t now = slab_now_ms();

	if (sh->reclaimer_running || max_age == UINT32_MAX || now < due)
		return;
	uint64_t period = max_age / AGE_INLINE_DIV ? max_age / AGE_INLINE_DIV : 1;
	/* relaxed: see Ordering */
	if (!atomic_compare_exchange_strong_explicit(&sh->age_next_ms, &due, now + period,
						     memory_order_relaxed, memory_order_relaxed))
		return;
	if (udc_mutex_trylock(&sh->lock))
		return;
	if (sweep_age(sh, AGE_BATCH))   /* more: come back soon, not a period later */
		atomic_store_explicit(&sh->age_next_ms, now, memory_order_relaxed);
	udc_mutex_unlock(&sh->lock);
}

/* The spare (retained) pages no allocation took since the last trim go
 * back; @all: every one of them (udc_shrink). */
static void spares_trim(struct shrink *sh, bool all)
{
	slab_trim(cache_slab(sh->c, ENT_NEGATIVE), all);
	slab_trim(cache_slab(sh->c, ENT_POSITIVE), all);
	/* (its 4 spare pages are 16 KiB, the least limit's whole slack: a
	 * call that needed room waited for nothing with them kept) */
	slab_trim(cache_dir_slab(sh->c), all);
}

/* Every spare page back (a throttled call's, before it would wait), then
 * bytes_used as reclaim sees it. */
static size_t used_spares_trimmed(struct shrink *sh)
{
	spares_trim(sh, true);
	return reclaim_used(sh);
}

/* Garbage for the worker: more than a few inline batches' worth (relaxed:
 * an estimate). */
static bool worker_garbage_due(struct shrink *sh)
{
	return atomic_load_explicit(&sh->garbage_pending, memory_order_relaxed) >= GARBAGE_WORKER_MIN;
}

static bool worker_stopping(struct shrink *sh)
{
	pthread_mutex_lock(&sh->reclaimer_lock);
	bool stop = sh->reclaimer_stop;
	pthread_mutex_unlock(&sh->reclaimer_lock);
	return stop;
}

/* Another garbage batch in the same hold: while no call waits for the
 * memory (no throttled caller, the frees not landing in the calls). */
static bool garbage_hold_more(struct shrink *sh)
{
	/* relaxed: hints (see lock_waiters, landing_tell) */
	return !atomic_load_explicit(&sh->lock_waiters, memory_order_relaxed) &&
	       !atomic_load_explicit(&sh->landing, memory_order_relaxed);
}

/*
 * A thread's garbage batches (the reclaim thread's or the worker's), up
 * to *@batches of them, shrink_lock held for one at a time: their frees
 * and the pages they empty land in this thread (see Scheduling), not in
 * liburcu's call_rcu thread, at the end of one hold (slab_hold_end, off
 * shrink_lock, as dir_reap's): its grace periods are a membarrier each,
 * which interrupts every CPU running a caller, and a hold per batch made
 * 6,000 of them a second in mixed (BENCHMARKS.md, issue 16, stop 35).
 * The hold ends after GARBAGE_HOLD_BATCHES batches, or sooner when a call
 * waits for memory.  Sets *@due to whether a round was due; returns
 * whether garbage is left.
 */
static bool garbage_batches(struct shrink *sh, int *batches, bool *due)
{
	bool more = true;

	*due = true;
	slab_hold_begin();
	for (int k = 0; more && *due && *batches > 0 && (k == 0 || garbage_hold_more(sh)) &&
			k < GARBAGE_HOLD_BATCHES;
	     k++, (*batches)--) {
		background_lock(sh);
		*due = sweep_garbage_due(sh);
		more = *due && sweep_garbage(sh, STALE_BATCH);
		udc_mutex_unlock(&sh->lock);
	}
	slab_hold_end();
	return more && *due;
}

/* The worker's garbage batches; or, until the next round is due, a nap. */
static void worker_garbage_batch(struct shrink *sh)
{
	int batches = GARBAGE_HOLD_BATCHES;
	bool due;

	garbage_batches(sh, &batches, &due);
	if (!due)
		nanosleep(&(struct timespec){ .tv_nsec = WORKER_NAP_NS }, NULL);
}

/*
 * The worker, idle, found a job noted meanwhile (worker_start saw it busy
 * and left the job to it): busy again, unless a starter holds the lock
 * (it saw the worker idle: it joins it and makes the next one) or the
 * cache is being destroyed.
 */
static bool worker_resume(struct shrink *sh)
{
	if (pthread_mutex_trylock(&sh->reclaimer_lock))
		return false;
	/* relaxed: only this lock's holders set it */
	bool again = !sh->reclaimer_stop && !atomic_load_explicit(&sh->worker_busy, memory_order_relaxed);
	if (again)
		atomic_store_explicit(&sh->worker_busy, true, memory_order_relaxed);
	pthread_mutex_unlock(&sh->reclaimer_lock);
	return again;
}

/* The worker: the tables' resizes that are due and the garbage rounds,
 * until neither is left, or udc_destroy stops it between two batches. */
static void *worker_main(void *arg)
{
	struct shrink *sh = arg;

	engine_thread_enter();
	/* best effort, both: see Scheduling */
	pthread_setschedparam(pthread_self(), SCHED_BATCH, &(struct sched_param){ 0 });
	setpriority(PRIO_PROCESS, (id_t)gettid(), WORKER_NICE);
	do {
		for (bool more = true; more && !worker_stopping(sh);) {
			more = false;
			if (cache_tables_resize_due(sh->c)) {
				tables_resize(sh);
				more = true;
			}
			if (worker_garbage_due(sh)) {
				worker_garbage_batch(sh);
				more = true;
			}
		}
		entry_free_flush(sh->c);
		/* release: pairs with the acquire in worker_start: the thread
		 * is about to return, so the join there does not wait */
		atomic_store_explicit(&sh->worker_busy, false, memory_order_release);
		/* seq_cst: pairs with worker_start's fence (Dekker): a job
		 * noted before it saw the worker busy is seen here */
		atomic_thread_fence(memory_order_seq_cst);
	} while (worker_garbage_due(sh) && worker_resume(sh));
	return NULL;
}

/*
 * Without the thread: start the worker for a big job (a resize past
 * RESIZE_INLINE_BUCKETS, GARBAGE_WORKER_MIN entries of garbage), unless
 * it runs (it looks for more work before it returns, and garbage noted
 * as it returns once more after: worker_resume; until then a big
 * invalidation that came as the worker finished a resize waited for the
 * next call, and with none its garbage stayed: the ASan CI run of
 * reclaim_thread/worker_sweeps_the_garbage_without_the_thread).  A resize
 * noted as it returns waits for the next call, which notes it again.  One
 * at a time, joined by the next start or by shrink_reclaimer_stop.
 * Returns false if it neither runs nor could be made: the calls do the
 * job themselves.
 */
static bool worker_start(struct shrink *sh)
{
	/* seq_cst: the job noted before this call (garbage_pending), then
	 * worker_busy read; pairs with worker_main's fence after it clears
	 * busy: a worker seen busy sees the job (worker_resume) */
	atomic_thread_fence(memory_order_seq_cst);
	/* acquire: pairs with the release at worker_main's end */
	if (atomic_load_explicit(&sh->worker_busy, memory_order_acquire))
		return true;
	pthread_mutex_lock(&sh->reclaimer_lock);
	if (sh->worker_made && !atomic_load_explicit(&sh->worker_busy, memory_order_acquire)) {
		pthread_join(sh->worker, NULL);   /* it has returned, or is about to */
		sh->worker_made = false;
	}
	if (!sh->worker_made && !sh->reclaimer_stop) {
		/* relaxed: only this lock's holders set it; worker_main clears it */
		atomic_store_explicit(&sh->worker_busy, true, memory_order_relaxed);
		sh->worker_made = pthread_create(&sh->worker, NULL, worker_main, sh) == 0;
		if (!sh->worker_made)
			atomic_store_explicit(&sh->worker_busy, false, memory_order_relaxed);
	}
	bool running = sh->worker_made;
	pthread_mutex_unlock(&sh->reclaimer_lock);
	return running;
}

/*
 * Without the thread: resize the tables that are due.  A resize runs in
 * the calling thread (the name table's, engine/name_table.c, and
 * liburcu's of the directory table), in time proportional to the buckets:
 * up to RESIZE_INLINE_BUCKETS (about a millisecond) in this call, unless
 * another resize is running; past it, in the worker.  (Inline, the growth
 * of a 32 M-bucket table held one call for 10 s.)  If the worker cannot
 * be made, the resize waits for a later call.
 */
static void tables_resize_calls(struct shrink *sh)
{
	if (cache_tables_resize_work(sh->c) <= RESIZE_INLINE_BUCKETS) {
		if (udc_mutex_trylock(&sh->resize_lock))
			return;
		tables_resize_locked(sh);
		udc_mutex_unlock(&sh->resize_lock);
		return;
	}
	worker_start(sh);
}

/* Every TRIM_PERIOD_MS, by the reclaim thread or else by a call: the
 * retained pages no allocation took in a period go back to the OS (the
 * page faults of a churn stay away; an idle cache's spare pages do not). */
static void pages_trim(struct shrink *sh)
{
	uint64_t due = atomic_load_explicit(&sh->trim_next_ms, memory_order_relaxed);
	uint64_t now = slab_now_ms();

	/* relaxed: see Ordering */
	if (now < due || !atomic_compare_exchange_strong_explicit(&sh->trim_next_ms, &due,
								   now + TRIM_PERIOD_MS,
								   memory_order_relaxed,
								   memory_order_relaxed))
		return;
	spares_trim(sh, false);
}

/*
 * Evict about @bytes (the thread: at least @enough, more unless a
 * throttled call waits: see sweep_reclaim), then free a batch of the
 * directories left idle, with the frees landed when it returns: the slot
 * bytes evicted (shrink_lock held).  @source: the reclaim probe's (enum
 * udc_probe_reclaim).  Landed by slab_hold: two grace periods of our own
 * (~0.1 ms), not liburcu's call_rcu thread, which sleeps 10 ms between
 * batches.  So a pass sees what the last one did in bytes_used: nothing is
 * evicted twice.  Other paths' frees (unlinks, replaced entries) that
 * wait in the slab's cpu slots for a batch to fill land with the pass too
 * (slab_rcu_flush_own, from entry_free_flush at the pass's end): a few of
 * them had pinned pages the pass emptied, and no caller waits for
 * call_rcu's queue unless those already queued keep bytes_used up.
 * (Passes whose frees went through call_rcu, counted as in flight until
 * bytes_used fell, made a throttled call wait 20 ms for that queue about
 * once in 3,000 calls of a trickle at 2 MiB, and let the frees of many
 * calls' promotions pile up past the slack at 256 KiB.)
 */
static size_t reclaim_evict(struct shrink *sh, size_t bytes, size_t enough, int source)
{
	lock_assert_held(&sh->lock);
	/* Frees in flight through call_rcu that would make the room: wait
	 * for them instead of evicting live entries (those queued before
	 * the calls started landing theirs, landing_set; tar-rm x75's
	 * removals, the hot set of bounds/a_churn_of_removals_*). */
	if (entry_frees_queued(sh->c) >= bytes) {
		size_t before = reclaim_used(sh);
		frees_land(sh);
		if (used_spares_trimmed(sh) + bytes <= before)
			return 0;
	}
	slab_hold_begin();
	size_t got = sweep_reclaim(sh, bytes, enough);
	UDC_PROBE(reclaim, source, bytes, got);
	/* The idle directories, as many more as the bytes asked for could
	 * free: a batch of 256 a pass fell behind the directories going
	 * idle, which then filled a 1 MiB cache whose entries the sweeps
	 * evicted for them (20,000 directories each holding one entry and
	 * naming a parent with none: 6,720 objects for 103 entries). */
	dir_reap(sh->c, DIR_REAP_BATCH + bytes / DIR_REAP_BYTES_PER, true);
	slab_hold_end();
	/* The room made, the ghosts grow into it when it holds them. */
	size_t limit = atomic_load_explicit(&sh->limit, memory_order_relaxed);
	size_t used = cache_bytes_used(sh->c) + cache_tables_growth(sh->c);
	sweep_ghosts_grow(sh, limit > used ? limit - used : 0);
	return got;
}

/* Without the thread: a batch of the directories that went idle. */
static void reap_inline(struct shrink *sh)
{
	if (sh->reclaimer_running || !dir_reap_due(sh->c))
		return;
	if (udc_mutex_trylock(&sh->lock))
		return;
	/* Landing (memory wanted), the objects it frees come back when the
	 * hold ends, off the lock, not through call_rcu: up to 1,800 dead
	 * directories, 230 KB, were waiting at a 587 KB limit (tar-rm x75),
	 * and the mix of the 8 traces at 5% made 16% fewer backend calls
	 * with them back.  Not always: a grace period per reaping batch cost
	 * a churn of 2-4 threads without the thread 70-75% of its rate. */
	bool hold = slab_landing(cache_slab(sh->c, ENT_POSITIVE));
	if (hold)
		slab_hold_begin();
	dir_reap(sh->c, DIR_REAP_BATCH, false);
	udc_mutex_unlock(&sh->lock);
	if (hold)
		slab_hold_end();
}

/* Garbage or a trim is waiting (relaxed: estimates). */
static bool sweeps_pending(struct shrink *sh)
{
	sweep_expiry_check(sh);
	return atomic_load_explicit(&sh->garbage_pending, memory_order_relaxed) > 0 ||
	       atomic_load_explicit(&sh->trim_excess, memory_order_relaxed) > 0;
}

/*
 * Without the thread: a batch of the garbage of invalidated directories,
 * or of the trim of directories past their bound.  The calls pay for the
 * whole sweep, so a call's share must stay within the tail of an ordinary
 * call: SWEEP_INLINE_BATCH is a page's isolation (SLAB_COMPACT_PAGE_COST)
 * and 64 entries, ~60 us (a stale entry's cds_lfht_del is ~1 us of cache
 * misses); under SLAB_COMPACT_PAGE_COST + 1 a batch visits no entry at all
 * (slab_sweep re-isolates its page each call).  And the calls spend at
 * most 1/SWEEP_INLINE_DUTY of their time in it: after a batch of t ns,
 * none for (SWEEP_INLINE_DUTY - 1) t.  With every call sweeping, a
 * writer's calls were 60 us each for the whole sweep, so it ran inside a
 * call nearly all the time and every preemption of it (the call_rcu
 * thread landing the sweep's frees) was a call of milliseconds: p99.99 3-8
 * ms against 0.05-0.5 ms before (BENCHMARKS.md, issue 13).  Stale entries
 * answer nothing, and eviction drops them first when memory is wanted, so
 * a slower sweep costs only the memory they hold meanwhile; a directory
 * whose trim lags declines its new negatives past twice its bound.  Even
 * paced, a 10 M-entry sweep took 3 minutes of a writer's calls and its
 * p99.99 was 8x that before it (the batches' own calls): past
 * GARBAGE_WORKER_MIN entries the garbage is the worker's (SCHED_BATCH,
 * nice 10, as the reclaim thread, whose writers' p99.99 stays within
 * 0.9-1.4x).
 */
static void sweep_inline(struct shrink *sh)
{
	if (sh->reclaimer_running || !sweeps_pending(sh))
		return;
	/* Much garbage is the worker's: a round visits every page. */
	bool worker = worker_garbage_due(sh) && worker_start(sh);
	/* relaxed: an estimate */
	if (worker && atomic_load_explicit(&sh->trim_excess, memory_order_relaxed) <= 0)
		return;
	uint64_t start = mono_ns();
	/* relaxed: a pacing time (a race costs one batch early) */
	if (start < atomic_load_explicit(&sh->sweep_inline_next_ns, memory_order_relaxed))
		return;
	if (udc_mutex_trylock(&sh->lock))
		return;
	if (!worker && sweep_garbage_due(sh))
		sweep_garbage(sh, SWEEP_INLINE_BATCH);
	else
		sweep_trim(sh, SWEEP_INLINE_BATCH);
	uint64_t end = mono_ns();
	atomic_store_explicit(&sh->sweep_inline_next_ns, end + (end - start) * (SWEEP_INLINE_DUTY - 1),
			      memory_order_relaxed);
	udc_mutex_unlock(&sh->lock);
}

/* The calls' chores (without the thread, most of its work): compaction,
 * the trims, ageing, the sweeps, reaping, resizes.  Returns whether any
 * is still pending for the calls (then the next call does them again). */
static bool reclaim_chores(struct shrink *sh)
{
	compact_inline(sh);   /* pages back without losing answers, first */
	if (!sh->reclaimer_running)
		pages_trim(sh);
	age_inline(sh);
	sweep_inline(sh);
	reap_inline(sh);
	/* relaxed, the counts here: estimates */
	bool trims = atomic_load_explicit(&sh->trim_excess, memory_order_relaxed) > 0;
	if (sh->reclaimer_running && trims)
		reclaimer_kick(sh);
	bool resize = cache_tables_resize_due(sh->c);
	if (resize) {
		if (sh->reclaimer_running)
			reclaimer_kick(sh);
		else
			tables_resize_calls(sh);
	}
	if (compact_due(sh))
		return true;
	if (sh->reclaimer_running)   /* the rest is the thread's, kicked above */
		return false;
	return trims || resize || dir_reap_due(sh->c) ||
	       atomic_load_explicit(&sh->garbage_pending, memory_order_relaxed) > 0;
}

/* The low watermark: half a slack under the limit. */
static size_t reclaim_low(size_t limit)
{
	size_t slack = reclaim_slack(limit);

	return limit > slack / 2 ? limit - slack / 2 : 0;
}

/* Where the frees start landing in the calls (landing_set): a slack under
 * the limit, half a slack before eviction starts, so that what is in
 * flight comes back before the calls would evict for it. */
static size_t reclaim_land(size_t limit)
{
	size_t slack = reclaim_slack(limit);

	return limit > slack ? limit - slack : 0;
}

/* Up to where the spare pages follow a second's demand (slab_set_roomy), not
 * 200 ms's, up to a quarter of the limit (sweep.c, RETAINED_ROOMY_DIV):
 * three quarters of the limit.  Past it they are at most a 16th
 * (RETAINED_SHARE_DIV), the slabs giving back the rest when told, so that
 * a cache that keeps them all stays under 13/16 of the limit, and under
 * the low watermark: its spare pages never cost an entry. */
static size_t reclaim_roomy(size_t limit)
{
	return limit - limit / 4;
}

/* A call's share of eviction: small, and no more than a share of the slack. */
static size_t reclaim_share(size_t slack)
{
	return slack / RECLAIM_INLINE_DIV < RECLAIM_INLINE_BYTES ? slack / RECLAIM_INLINE_DIV :
								   RECLAIM_INLINE_BYTES;
}

/*
 * The throttle point, how far past the limit a call may leave bytes_used
 * without waiting: half the slack, less what the calls in flight can add
 * past it in whole pages (sh->open_reserve: a page per probation class and
 * slot, the classes new entries go to), down to the limit itself.  Only a
 * tiny cache is concerned: at 256 KiB the slack is four 4 KiB pages, and
 * 16 threads that each passed the check at half the slack opened four
 * more between them (1 run in 6 under load past limit + slack by up to
 * 6.5 KB; tests/shrink/test_threads_memory.c); from 2 MiB up the slack
 * is 84 KiB and more, and the point stays at its half.
 */
static size_t reclaim_over(const struct shrink *sh, size_t slack)
{
	size_t room = slack > sh->open_reserve ? slack - sh->open_reserve : 0;

	return room < slack / 2 ? room : slack / 2;
}

/*
 * Past reclaim_land, the entries the calls free come back in the
 * calls (slab_set_landing), not 10 ms or more later through liburcu's
 * call_rcu thread: what waits for it is counted, and reclaim evicted
 * live entries for it.  Replay tar-rm x75 at 5% of its footprint held
 * 2-60 entries during its rm phase (lru-mutex about 3,300), the bytes
 * being its removals in flight; landing, about 1,800 (BENCHMARKS.md,
 * issue 14, stop 25).  Under it nothing waits.  And under reclaim_roomy
 * the slabs are told they have room for a second's spare pages.  Set by
 * every mutating call (shrink_after_call) from its bytes_used, @used: a
 * few loads when they stay as they are.
 */
static void landing_tell(struct shrink *sh, size_t used)
{
	/* relaxed: policy flags, as the slabs' own, and the marks (numbers);
	 * stored only when they change (the line is the one every call
	 * reads: it stays shared) */
	bool on = used > atomic_load_explicit(&sh->mark_land, memory_order_relaxed);
	bool roomy = used <= atomic_load_explicit(&sh->mark_roomy, memory_order_relaxed);

	if (atomic_load_explicit(&sh->landing, memory_order_relaxed) != on)
		atomic_store_explicit(&sh->landing, on, memory_order_relaxed);
	if (atomic_load_explicit(&sh->roomy, memory_order_relaxed) != roomy)
		atomic_store_explicit(&sh->roomy, roomy, memory_order_relaxed);
	for (enum entry_kind k = ENT_NEGATIVE; k <= ENT_POSITIVE; k++) {
		slab_set_landing(cache_slab(sh->c, k), on);
		slab_set_roomy(cache_slab(sh->c, k), roomy);
	}
}

/* The same when they change: two loads and compares when they stay
 * (every call).  Two calls that change them at once may leave the slabs
 * told the older values: a call's chores tell them again (landing_tell),
 * one call in CHORES_STRIDE of each thread's at most. */
static void landing_set(struct shrink *sh, size_t used)
{
	/* relaxed: see landing_tell */
	bool on = used > atomic_load_explicit(&sh->mark_land, memory_order_relaxed);
	bool roomy = used <= atomic_load_explicit(&sh->mark_roomy, memory_order_relaxed);

	if (atomic_load_explicit(&sh->landing, memory_order_relaxed) != on ||
	    atomic_load_explicit(&sh->roomy, memory_order_relaxed) != roomy)
		landing_tell(sh, used);
}

static void reclaim_throttled(struct shrink *sh, size_t evict_past, size_t enough);

/* The bound: eviction once @used passes the low watermark (see below). */
static void reclaim_bound(struct shrink *sh, size_t used)
{
	size_t limit = atomic_load_explicit(&sh->limit, memory_order_relaxed);
	size_t slack = reclaim_slack(limit);
	size_t low = reclaim_low(limit);
	size_t over = reclaim_over(sh, slack);

	/*
	 * Three zones.  Past the low watermark (half a slack under the limit)
	 * the thread is woken and evicts ahead of the clients; without the
	 * thread the calls each evict a small batch instead (unless a pass
	 * holds the lock: it works for them).  Past the limit, a call with
	 * the thread evicts a batch too (it is falling behind).  Past the
	 * throttle point (half the slack over the limit, or less in a tiny
	 * cache: reclaim_over), the caller waits its turn, evicts, and
	 * waits for the other paths' frees if that was not enough: the
	 * clients that outrun reclaim are the ones throttled, and bytes_used
	 * is within the bound when each call returns.
	 */
	if (used <= low)
		return;
	if (sh->reclaimer_running) {
		reclaimer_kick(sh);
		if (used <= limit)
			return;
	}
	/* (Throttled past a quarter of the slack instead, the trickle at 2
	 * MiB with the thread had 199 calls over 1 ms in 3 s against 45, and
	 * lost 13% of its rate: BENCHMARKS.md, issue 13, stop 16.) */
	if (used <= limit + over) {
		if (udc_mutex_trylock(&sh->lock))
			return;   /* a pass is running: it works for us */
		size_t share = reclaim_share(slack);
		reclaim_evict(sh, share, share, UDC_PROBE_RECLAIM_INLINE);
		udc_mutex_unlock(&sh->lock);
		return;
	}
	/* With the thread, which ended its batch for us once it had made
	 * our room (sweep_reclaim), the call evicts only if it is still past
	 * the throttle point; alone, it makes room for the calls that follow
	 * whenever it is past the limit.  (Evicting past the limit with the
	 * thread, a throttled call at 2 MiB evicted 60 KB after its wait,
	 * over 1 ms in all, where the thread had brought it under the
	 * throttle point already.) */
	reclaim_throttled(sh, sh->reclaimer_running ? limit + over : limit, limit + over);
}

/*
 * A call waits its turn for shrink_lock, then evicts if bytes_used is
 * past @evict_past, until it is at @enough, waiting for the other paths'
 * frees if eviction was not enough (RECLAIM_INLINE_ROUNDS rounds at most).
 */
static void reclaim_throttled(struct shrink *sh, size_t evict_past, size_t enough)
{
	stat_add(cache_stats(sh->c), throttled, 1);
	/* relaxed: a hint to the background passes (background_lock) */
	atomic_fetch_add_explicit(&sh->lock_waiters, 1, memory_order_relaxed);
	udc_mutex_lock(&sh->lock);
	atomic_fetch_sub_explicit(&sh->lock_waiters, 1, memory_order_relaxed);
	size_t limit = atomic_load_explicit(&sh->limit, memory_order_relaxed);
	size_t slack = reclaim_slack(limit);
	size_t used = reclaim_used(sh);
	/* The spare pages first, and again once the frees have landed: the
	 * pages eviction empties go to them while pages were made lately, and
	 * their cap (a 32nd of the limit a slab, sweep.c's retained_for; it
	 * follows the limit since stop 36) can be more than the slack, so spare
	 * pages go before answers do.  (Before the cap followed the limit, a
	 * cache lowered to its least limit stayed 71 KB past limit + slack
	 * without this: bounds/a_lowered_limit_takes_the_spare_pages_back.) */
	if (used > evict_past)
		used = used_spares_trimmed(sh);
	for (int round = 0; round < RECLAIM_INLINE_ROUNDS && used > evict_past; round++) {
		size_t want = used - limit + slack / 4;
		reclaim_evict(sh, want, want, UDC_PROBE_RECLAIM_THROTTLE);
		/* The pages the eviction emptied went to the spares: they go
		 * back before the call would wait for call_rcu's queue (twice,
		 * 10 ms naps: a trickle at 256 KiB with the thread made 6,500
		 * calls a second, 1.35 M without it; BENCHMARKS.md, issue 14,
		 * stop 43), after each step: the eviction, the queued frees
		 * landed, then the wait for the callbacks under way. */
		used = used_spares_trimmed(sh);
		if (used <= enough)
			break;
		frees_land(sh);
		used = used_spares_trimmed(sh);
		if (used <= enough)
			break;
		frees_wait(sh);
		used = used_spares_trimmed(sh);
	}
	udc_mutex_unlock(&sh->lock);
}

bool shrink_lock_mine(struct shrink *sh)
{
	return lock_held(&sh->lock);
}

void shrink_make_room(struct shrink *sh)
{
	udc_assert(!rcu_read_ongoing());   /* its pass waits for grace periods */
	size_t limit = atomic_load_explicit(&sh->limit, memory_order_relaxed);

	/* under the limit: a slack's room, more than a page */
	reclaim_throttled(sh, limit, limit);
}

void shrink_after_drop(struct shrink *sh)
{
	compact_inline(sh);   /* drops are what leave pages sparse */
	if (sh->reclaimer_running)
		return;
	/* Without the thread, what the drops leave behind goes with them:
	 * the spare pages, and the name table once it is four times too big. */
	pages_trim(sh);
	if (cache_tables_resize_due(sh->c))
		tables_resize_calls(sh);
}

void shrink_after_forget(struct shrink *sh)
{
	if (!sh->reclaimer_running && worker_garbage_due(sh))
		worker_start(sh);
}

/* Chores waiting that cost no more to see than a few loads (relaxed:
 * estimates): the calls' trims, garbage and idle directories. */
static bool chores_waiting(struct shrink *sh)
{
	if (atomic_load_explicit(&sh->trim_excess, memory_order_relaxed) > 0)
		return true;
	return !sh->reclaimer_running &&
	       (dir_reap_due(sh->c) || atomic_load_explicit(&sh->garbage_pending, memory_order_relaxed) > 0);
}

/*
 * After every mutating call: the bound, and the chores.  A thread that
 * found no chore pending skips them for its next CHORES_STRIDE - 1 calls
 * (their checks alone, the cache-wide counters and the clock, were 300
 * instructions of a call's 2,000-2,500 in a churn: BENCHMARKS.md, issue
 * 16), unless one is seen waiting by a few loads (chores_waiting); the
 * bound is checked on every call.  The others that fall due meanwhile
 * (compaction, a passed deadline, a resize, the spare pages' trim,
 * ageing) wait for the thread's next round of chores, or another
 * thread's; a drop runs compaction itself (shrink_after_drop).
 */
void shrink_after_call(struct shrink *sh)
{
	bool chores = tls_chores_skip == 0 || chores_waiting(sh);
	size_t used = reclaim_used(sh);
	/* relaxed: a number (see limit_set) */
	size_t low = atomic_load_explicit(&sh->mark_low, memory_order_relaxed);

	if (!chores) {
		landing_set(sh, used);
		tls_chores_skip--;
		if (used <= low)
			return;
	} else {
		landing_tell(sh, used);
	}
	int cs = cancel_hold();   /* it may wait for grace periods, shrink_lock held */
	if (chores) {
		tls_chores_skip = reclaim_chores(sh) ? 0 : CHORES_STRIDE - 1;
		used = reclaim_used(sh);
	}
	reclaim_bound(sh, used);
	cancel_release(cs);
}

/*
 * After a call that made only directory objects (a ".." told or asked,
 * a fill begun): the bound, which such calls alone can pass
 * (20,000 ".." recorded in a row took a cache of 64 KiB to 2.5 MB), but
 * not the chores.  Their reap of the directories gone idle would meet
 * these objects idle between the call and the entries that follow it (a
 * directory's ".." then its names), file them as idle, and spend later
 * reaping batches on them in use: with every call's chores, one ".." and
 * one name in each of 20,000 directories at 1 MiB left two objects an
 * entry, not one (stats_memory/parents_known_only_by_dotdot_go_under_pressure).
 */
void shrink_after_dir_call(struct shrink *sh)
{
	size_t used = reclaim_used(sh);

	/* relaxed: a number (see limit_set) */
	if (used <= atomic_load_explicit(&sh->mark_low, memory_order_relaxed))
		return;
	landing_set(sh, used);
	int cs = cancel_hold();   /* it may wait for grace periods, shrink_lock held */
	reclaim_bound(sh, used);
	cancel_release(cs);
}

void shrink_tables_settle(struct shrink *sh)
{
	tables_resize(sh);
}

size_t shrink_bytes(struct shrink *sh, size_t bytes)
{
	size_t start = cache_bytes_used(sh->c), freed = 0;
	if (bytes != SIZE_MAX) {
		/* First what compaction gives back (no answer lost); not when
		 * everything goes, where moving entries is wasted work. */
		size_t before = cache_bytes_used(sh->c);
		compact_all(sh);
		udc_mutex_lock(&sh->lock);
		frees_wait(sh);
		spares_trim(sh, true);
		size_t after = cache_bytes_used(sh->c);
		freed = before > after ? before - after : 0;
	} else {
		udc_mutex_lock(&sh->lock);
	}
	/* Rounds: what a round promotes lands in pages newer than its sweep
	 * (and in this thread's open ones), and main is swept only once
	 * probation's pages are gone, after their grace period: the next
	 * round, after the frees, takes them in.  A round that evicts
	 * nothing after the first: nothing is left.  All (SIZE_MAX): every
	 * round evicts whatever it finds, hit or not (sweep_reclaim), so
	 * nothing is promoted or reinserted out of a round's reach. */
	size_t swept = 0;
	for (int round = 0; freed + swept < bytes && round < SHRINK_ROUNDS; round++) {
		size_t want = bytes == SIZE_MAX ? SIZE_MAX : bytes - freed - swept;
		size_t got = sweep_reclaim(sh, want, want);
		UDC_PROBE(reclaim, UDC_PROBE_RECLAIM_SHRINK, want, got);
		swept += got;
		if (!got && round > 0)
			break;
		if (freed + swept < bytes)
			frees_wait(sh);
	}
	freed += swept;
	if (swept || freed < bytes) {
		/* The directories left idle; all of them if bytes are still
		 * wanted.  Bounded by the count now, as others add more. */
		int64_t rounds = cache_nr_dirs(sh->c) /
				 DIR_REAP_BATCH + 2;
		while (rounds-- > 0 && dir_reap(sh->c, DIR_REAP_BATCH, freed < bytes))
			;
		frees_wait(sh);
		spares_trim(sh, true);
	}
	udc_mutex_unlock(&sh->lock);
	if (cache_tables_resize_due(sh->c))
		tables_resize(sh);   /* shrinks the tables that are now too big */
	/* What the caller sees go: bytes_used's fall, the directory objects
	 * and the pages included (the evicted slots' bytes, returned until
	 * issue 14's stop 41, were 0 for 2.4 MB of directory objects) */
	size_t end = cache_bytes_used(sh->c);
	return start > end ? start - end : 0;
}

/*
 * One wake-up's work: evict down to the low watermark, then compact, in
 * bounded batches.  Returns true if work remains (no sleep before the next).
 */
static bool reclaim_background(struct shrink *sh)
{
	size_t limit = atomic_load_explicit(&sh->limit, memory_order_relaxed);
	size_t slack = reclaim_slack(limit);
	size_t low = limit > slack ? limit - slack : 0;
	int batches = RECLAIM_THREAD_BATCHES;
	bool more = false;

	while (batches > 0) {
		size_t used = reclaim_used(sh);
		if (used <= low + slack / 2)
			break;
		size_t want = used - low < RECLAIM_THREAD_BYTES ? used - low : RECLAIM_THREAD_BYTES;
		/* A throttled call needs room under the throttle point, a
		 * call's share below it: the batch may end there for it. */
		size_t room = limit + reclaim_over(sh, slack) - reclaim_share(slack);
		size_t enough = used > room ? used - room : 0;
		background_lock(sh);
		size_t got = reclaim_evict(sh, want, enough < want ? enough : want,
					   UDC_PROBE_RECLAIM_THREAD);
		udc_mutex_unlock(&sh->lock);
		batches--;
		if (got == 0)
			break;   /* nothing evictable now (others' open pages, pending frees) */
		more = batches == 0;
	}
	if (cache_tables_resize_due(sh->c))
		tables_resize(sh);   /* off shrink_lock: see Locking */
	for (bool aged_all = false; !aged_all && batches > 0; batches--) {
		background_lock(sh);
		aged_all = !sweep_age(sh, AGE_BATCH);
		udc_mutex_unlock(&sh->lock);
	}
	for (bool stale = true, due; stale && batches > 0;) {
		stale = garbage_batches(sh, &batches, &due);
		/* A table due to grow waits for no more than a hold of
		 * garbage: its chains lengthen every insert's walk (once,
		 * in 10 callgrind runs of mixed, a wake-up's garbage left the
		 * inserts walking long chains: 20% of the instructions) */
		if (cache_tables_resize_due(sh->c))
			tables_resize(sh);
	}
	for (bool trim = true; trim && batches > 0; batches--) {
		background_lock(sh);
		slab_hold_begin();   /* as the garbage's */
		trim = sweep_trim(sh, STALE_BATCH);
		slab_hold_end();
		udc_mutex_unlock(&sh->lock);
	}
	for (bool idle = dir_reap_due(sh->c); idle && batches > 0; batches--) {
		background_lock(sh);
		slab_hold_begin();   /* the objects freed when the batch ends */
		idle = dir_reap(sh->c, DIR_REAP_BATCH, reclaim_used(sh) > low);
		udc_mutex_unlock(&sh->lock);
		/* Off the lock: the calls that find it held skip their own
		 * eviction, and a grace period under load is milliseconds. */
		slab_hold_end();
	}
	for (bool fresh = true; batches-- > 0; fresh = false)
		if (!compact_batch(sh, fresh))
			break;
	more = more || batches < 0;
	entry_free_flush(sh->c);
	return more;
}

static void reclaimer_kick(struct shrink *sh)
{
	/* relaxed: a lost kick costs one period's wait, never an answer */
	if (atomic_load_explicit(&sh->reclaimer_kicked, memory_order_relaxed) ||
	    atomic_exchange_explicit(&sh->reclaimer_kicked, true, memory_order_relaxed))
		return;
	pthread_mutex_lock(&sh->reclaimer_lock);
	pthread_cond_signal(&sh->reclaimer_cond);
	pthread_mutex_unlock(&sh->reclaimer_lock);
}

static void *reclaimer_main(void *arg)
{
	struct shrink *sh = arg;

	engine_thread_enter();
	shrink_tls_reclaimer = true;
	/* best effort: see Scheduling (without it, the thread is as before) */
	pthread_setschedparam(pthread_self(), SCHED_BATCH, &(struct sched_param){ 0 });
	pthread_mutex_lock(&sh->reclaimer_lock);
	while (!sh->reclaimer_stop) {
		pthread_mutex_unlock(&sh->reclaimer_lock);
		/* relaxed: kicks after this wake us again (see reclaimer_kick) */
		atomic_store_explicit(&sh->reclaimer_kicked, false, memory_order_relaxed);
		bool more = reclaim_background(sh);
		pages_trim(sh);
		pthread_mutex_lock(&sh->reclaimer_lock);
		if (more || sh->reclaimer_stop || atomic_load_explicit(&sh->reclaimer_kicked, memory_order_relaxed))
			continue;
		struct timespec t;
		clock_gettime(CLOCK_MONOTONIC, &t);
		t.tv_nsec += RECLAIM_THREAD_PERIOD_MS * 1000000L;
		t.tv_sec += t.tv_nsec / 1000000000L;
		t.tv_nsec %= 1000000000L;
		pthread_cond_timedwait(&sh->reclaimer_cond, &sh->reclaimer_lock, &t);
	}
	pthread_mutex_unlock(&sh->reclaimer_lock);
	return NULL;
}

int shrink_reclaimer_start(struct shrink *sh)
{
	pthread_condattr_t a;
	int err;

	pthread_mutex_init(&sh->reclaimer_lock, NULL);
	pthread_condattr_init(&a);
	pthread_condattr_setclock(&a, CLOCK_MONOTONIC);
	pthread_cond_init(&sh->reclaimer_cond, &a);
	pthread_condattr_destroy(&a);
	sh->reclaimer_stop = false;
	if (sh->no_thread)
		return 0;
	err = pthread_create(&sh->reclaimer, NULL, reclaimer_main, sh);
	if (err)
		return -ENOMEM;   /* with no attributes, only EAGAIN: out of memory or threads */
	sh->reclaimer_running = true;
	return 0;
}

void shrink_reclaimer_stop(struct shrink *sh)
{
	pthread_mutex_lock(&sh->reclaimer_lock);
	sh->reclaimer_stop = true;   /* no worker is made from here on, and it stops */
	bool worker = sh->worker_made;
	sh->worker_made = false;
	pthread_cond_signal(&sh->reclaimer_cond);
	pthread_mutex_unlock(&sh->reclaimer_lock);
	if (sh->reclaimer_running) {
		pthread_join(sh->reclaimer, NULL);
		sh->reclaimer_running = false;
	}
	if (worker)   /* it finishes its resize or garbage batch */
		pthread_join(sh->worker, NULL);
	pthread_cond_destroy(&sh->reclaimer_cond);
	pthread_mutex_destroy(&sh->reclaimer_lock);
}

/* The limit and its watermarks; relaxed: numbers, read by every call
 * (a call that reads a watermark of the other limit is as one that ran
 * just before or after the change). */
static void limit_set(struct shrink *sh, size_t limit)
{
	atomic_store_explicit(&sh->limit, limit, memory_order_relaxed);
	atomic_store_explicit(&sh->mark_low, reclaim_low(limit), memory_order_relaxed);
	atomic_store_explicit(&sh->mark_land, reclaim_land(limit), memory_order_relaxed);
	atomic_store_explicit(&sh->mark_roomy, reclaim_roomy(limit), memory_order_relaxed);
}

int shrink_set_limit(struct shrink *sh, size_t bytes)
{
	size_t limit = bytes ? bytes : DEFAULT_MEMORY_LIMIT;

	udc_mutex_lock(&sh->lock);
	int err = sweep_limit_changed(sh, limit);
	if (!err)
		limit_set(sh, limit);
	udc_mutex_unlock(&sh->lock);
	if (!err)
		shrink_after_call(sh);
	return err;
}

size_t shrink_limit(const struct shrink *sh)
{
	/* relaxed: a number (see shrink_set_limit) */
	return atomic_load_explicit(&sh->limit, memory_order_relaxed);
}

int shrink_create(struct udc_cache *c, const struct udc_config *cfg, struct shrink **out)
{
	struct shrink *sh = mem_alloc(c, sizeof(*sh));

	if (!sh)
		return -ENOMEM;
	memset(sh, 0, sizeof(*sh));
	sh->c = c;
	limit_set(sh, cfg->memory_limit ? cfg->memory_limit : DEFAULT_MEMORY_LIMIT);
	sh->negative_max_age_ms = cfg->negative_max_age_ms ? cfg->negative_max_age_ms
							   : DEFAULT_NEGATIVE_MAX_AGE_MS;
	sh->no_thread = cfg->flags & UDC_CFG_NO_RECLAIM_THREAD;
	atomic_init(&sh->expiry_next, UINT32_MAX);
	udc_mutex_init(&sh->lock);
	udc_mutex_init(&sh->resize_lock);
	if (sweep_create(sh)) {
		udc_mutex_destroy(&sh->resize_lock);
		udc_mutex_destroy(&sh->lock);
		mem_free(c, sh, sizeof(*sh));
		return -ENOMEM;
	}
	*out = sh;
	return 0;
}

void shrink_destroy(struct shrink *sh)
{
	sweep_destroy(sh);
	udc_mutex_destroy(&sh->resize_lock);
	udc_mutex_destroy(&sh->lock);
	mem_free(sh->c, sh, sizeof(*sh));
}
