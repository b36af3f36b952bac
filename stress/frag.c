/* SPDX-License-Identifier: MIT */
/*
 * stress/frag.c - the frag workload, a study of udcache's own parts beside
 * stress/studies.c (hash, alloc) and stress/policy.c (the reclaim studies):
 * how much memory the cache gives back after most of its names go.
 *
 * Owns: the frag workload, its two sides (the malloc baseline in a forked
 * child, udcache in the parent), their memory readings (bytes_used, RSS,
 * jemalloc's stats through mallctl) and the report.
 *
 * Workload:
 *  - frag:  the fragmentation benchmark, one thread.  --names negatives
 *           (default 2,000,000) over --dirs directories (default 100),
 *           names of --name-len bytes (default 24), in a cache of --memory
 *           (default 4G, so nothing is evicted) with no reclaim thread; a
 *           seeded random --remove-ratio (default 0.9) of them is dropped
 *           with udc_invalidate; then bytes_used, RSS (/proc/self/statm)
 *           and jemalloc's stats.resident before inserting, after
 *           inserting and after the removals, the thread gone idle with
 *           udc_thread_offline, at 0, 0.5, 1 and 2 s (final: the 2 s
 *           reading): growth, what is left, and the retained fraction,
 *           "RSS growth retained" = (RSS after 2 s idle - RSS before) /
 *           (RSS peak - RSS before).  No reading is taken after a purge
 *           (the library never purges) except the ones labelled so, read
 *           last, after an explicit jemalloc purge, for comparison.  The malloc baseline (one jemalloc allocation per name,
 *           the size of a negative entry) runs first, in a forked child, so
 *           that the two processes' RSS do not mix.  Every kept name must
 *           still be UDC_NEGATIVE and every removed one UDC_MISS: exit
 *           status 1 otherwise.
 *
 * Locking: none; frag runs on main alone (and its child, which shares
 * nothing with it but the MAP_SHARED page below).
 *
 * Ordering:
 *  - frag's child writes its figures into a MAP_SHARED page and exits; the
 *    parent reads them only after waitpid() has reported the exit, which
 *    orders the child's stores before the parent's loads (the kernel's exit
 *    and wait paths are full barriers), so no atomic is needed.  The child
 *    is forked before the parent has created any thread or cache.
 *
 * Limitations:
 *  - In `frag` a kept name that misses is wrong unless the cache evicted
 *    something or declined a negative (then it is counted apart and warned
 *    about).
 *  - frag: single-threaded; RSS is the whole process's (statm resident), so
 *    the baseline reading is subtracted from every figure.  The malloc
 *    baseline's index (an array of pointers) is allocated and touched
 *    before its baseline reading, so its figures are the records alone,
 *    while udcache's include its hash table.
 *  - In sanitizer builds the malloc baselines use malloc/free instead of
 *    jemalloc (as engine/alloc.c does), so that ASan checks them; their
 *    jemalloc figures are then meaningless.
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif

#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <jemalloc/jemalloc.h> /* mallctl: jemalloc's statistics and purge */

#include "include/udcache.h"
#include "stress/stress.h"
#include "stress/studies.h"

/* After the removals the process idles and is read at these times (s); the last is "final". */
static const double frag_idle_at[] = { 0.0, 0.5, 1.0, 2.0 };
#define FRAG_IDLE_POINTS (sizeof(frag_idle_at) / sizeof(frag_idle_at[0]))

#define STRINGIFY_(x) #x
#define STRINGIFY(x) STRINGIFY_(x)

/* ---------------------------------------------------------------------- */
/* Workload frag */

/* What frag works on: written by run_frag() before the fork, then read-only. */
struct frag_params {
	uint64_t names;
	uint64_t dirs;
	uint64_t nr_remove;
	unsigned name_len;
	size_t memory;
	uint32_t *order;  /* a seeded permutation of the names: the first nr_remove go */
	uint8_t *removed; /* removed[i]: name i is removed */
};

/* One memory reading, as the process sees it (or after a jemalloc purge: mem_purged). */
struct mem_point {
	uint64_t rss;	       /* /proc/self/statm resident pages * page size */
	uint64_t je_resident;  /* jemalloc stats.resident */
	uint64_t je_allocated; /* jemalloc stats.allocated */
	uint64_t bytes_used;   /* udc_stats; 0 in the malloc baseline */
};

/* One side's figures: [0] the malloc baseline (the child), [1] udcache. */
struct frag_side {
	struct mem_point base, peak, final;	 /* no purge; final: the last idle reading */
	struct mem_point idle[FRAG_IDLE_POINTS]; /* at frag_idle_at[] s after the removals */
	struct mem_point purged; /* after the idle readings and an explicit jemalloc purge */
	double insert_sec, remove_sec;
	bool settled;	      /* bytes_used equal in the last two idle readings */
	uint64_t wrong;	      /* wrong answers, kept misses excluded */
	uint64_t kept_misses; /* udcache: kept names that were UDC_MISS */
	uint64_t first_bad;   /* the first unexpected answer: its name index, */
	int first_bad_rc;     /* and the answer (udcache) */
	bool any_bad;
	bool done;
	uint64_t stats_rss; /* RSS read with the final stats */
};

/* Name i: "f<index in hex>" padded with '_' to name_len, as hit's.  buf: 256 bytes. */
static size_t frag_name(char *buf, uint64_t i, unsigned name_len)
{
	int k = snprintf(buf, 20, "f%" PRIx64, i);

	while ((unsigned)k < name_len)
		buf[k++] = '_';
	return (size_t)k;
}

/* Memory that is resident from the start (so it is in every baseline reading). */
static void *populated_alloc(size_t size)
{
	void *p = mmap(NULL, size, PROT_READ | PROT_WRITE,
		       MAP_PRIVATE | MAP_ANONYMOUS | MAP_POPULATE, -1, 0);

	if (p == MAP_FAILED)
		die("mmap of %zu bytes: %s", size, strerror(errno));
	return p;
}

/* A jemalloc size_t statistic, refreshed (0 if jemalloc keeps no stats). */
static uint64_t jemalloc_stat(const char *name)
{
	uint64_t epoch = 1;
	size_t v = 0, len = sizeof(v);

	if (mallctl("epoch", NULL, NULL, &epoch, sizeof(epoch)) || mallctl(name, &v, &len, NULL, 0))
		return 0;
	return v;
}

/* Give jemalloc's unused pages back: this thread's tcache, then every arena. */
static void jemalloc_purge(void)
{
	int err;

	mallctl("thread.tcache.flush", NULL, NULL, NULL, 0); /* fails only with no tcache */
	err = mallctl("arena." STRINGIFY(MALLCTL_ARENAS_ALL) ".purge", NULL, NULL, NULL, 0);
	if (err)
		die("mallctl(arena.<all>.purge): %s", strerror(err));
}

/* A reading as the process sees it: no purge (the library never purges). */
static struct mem_point mem_read(udc_cache *c)
{
	struct mem_point m;

	m.rss = rss_bytes();
	m.je_resident = jemalloc_stat("stats.resident");
	m.je_allocated = jemalloc_stat("stats.allocated");
	m.bytes_used = c ? cache_bytes(c) : 0;
	return m;
}

/* The figure the library never produces itself: after an explicit purge. */
static struct mem_point mem_purged(udc_cache *c)
{
	jemalloc_purge();
	return mem_read(c);
}

/* Idle from now: the readings at frag_idle_at[] seconds; final is the last. */
static void frag_idle(udc_cache *c, struct frag_side *out)
{
	uint64_t t0 = now_ns();

	for (size_t k = 0; k < FRAG_IDLE_POINTS; k++) {
		uint64_t t = t0 + (uint64_t)(frag_idle_at[k] * 1e9);
		struct timespec ts = { .tv_sec = (time_t)(t / 1000000000u),
				       .tv_nsec = (long)(t % 1000000000u) };

		sleep_until(&ts);
		out->idle[k] = mem_read(c);
	}
	out->final = out->idle[FRAG_IDLE_POINTS - 1];
	out->settled = out->idle[FRAG_IDLE_POINTS - 1].bytes_used ==
		       out->idle[FRAG_IDLE_POINTS - 2].bytes_used;
	out->purged = mem_purged(c);
}

static void frag_record_bad(struct frag_side *out, uint64_t i, int rc)
{
	if (!out->any_bad) {
		out->any_bad = true;
		out->first_bad = i;
		out->first_bad_rc = rc;
	}
}

/* The malloc baseline's record: one allocation per name, like a dentry. */
struct frag_rec {
	udc_ino dir;
	uint64_t index;
	uint8_t len;
	char name[];
};

/* A negative entry's size with the name inline (the engine's 32-byte header), >= 64. */
static size_t frag_rec_size(size_t len)
{
	size_t size = (32 + len + 15) & ~(size_t)15;

	_Static_assert(offsetof(struct frag_rec, name) <= 32, "the record's header fits in 32");
	return size < 64 ? 64 : size;
}

/* The malloc baseline, in the forked child: the same names, inserts and removals. */
static void frag_malloc_side(const struct frag_params *fp, struct frag_side *out)
{
	size_t index_bytes = fp->names * sizeof(struct frag_rec *);
	struct frag_rec **index = populated_alloc(index_bytes); /* zero, resident */
	char name[UDC_NAME_MAX + 1];
	double t0;

	out->base = mem_read(NULL);
	t0 = now_sec();
	for (uint64_t i = 0; i < fp->names; i++) {
		size_t len = frag_name(name, i, fp->name_len);
		struct frag_rec *rec = base_alloc(frag_rec_size(len));

		if (!rec)
			die("malloc baseline: out of memory at name %" PRIu64, i);
		rec->dir = dir_ino(i % fp->dirs);
		rec->index = i;
		rec->len = (uint8_t)len;
		memcpy(rec->name, name, len);
		index[i] = rec;
	}
	out->insert_sec = now_sec() - t0;
	out->peak = mem_read(NULL);

	t0 = now_sec();
	for (uint64_t j = 0; j < fp->nr_remove; j++) {
		struct frag_rec *rec = index[fp->order[j]];

		base_free(rec, frag_rec_size(rec->len));
		index[fp->order[j]] = NULL;
	}
	out->remove_sec = now_sec() - t0;
	frag_idle(NULL, out);

	for (uint64_t i = 0; i < fp->names; i++) {
		struct frag_rec *rec = index[i];
		size_t len = frag_name(name, i, fp->name_len);
		bool ok = fp->removed[i] ? rec == NULL :
					   rec && rec->index == i && rec->len == len &&
						   rec->dir == dir_ino(i % fp->dirs) &&
						   memcmp(rec->name, name, len) == 0;

		if (!ok) {
			out->wrong++;
			frag_record_bad(out, i, 0);
		}
		if (rec)
			base_free(rec, frag_rec_size(rec->len));
	}
	munmap(index, index_bytes);
	out->done = true;
}

/* udcache: returns the statistics after the check's lookups in *st. */
static void frag_udcache_side(const struct frag_params *fp, struct frag_side *out,
			      struct udc_stats *peak_st, struct udc_stats *st)
{
	struct udc_config cfg = UDC_CONFIG_INIT;
	char name[UDC_NAME_MAX + 1];
	udc_cache *c;
	double t0;

	cfg.memory_limit = fp->memory;
	cfg.root = ROOT_INO;
	cfg.flags = UDC_CFG_NO_RECLAIM_THREAD;
	c = udc_create(&cfg);
	if (!c)
		die("udc_create: %s", strerror(errno));

	out->base = mem_read(c);
	t0 = now_sec();
	for (uint64_t i = 0; i < fp->names; i++) {
		size_t len = frag_name(name, i, fp->name_len);
		int rc = udc_add_negative(c, dir_ino(i % fp->dirs), name, len, 0);

		if (rc < 0)
			die("frag: udc_add_negative(dir %" PRIu64 ", \"%.*s\"): %s",
			    dir_ino(i % fp->dirs), (int)len, name, strerror(-rc));
	}
	out->insert_sec = now_sec() - t0;
	out->peak = mem_read(c);
	peak_st->size = sizeof(*peak_st);
	udc_stats_get(c, peak_st);

	t0 = now_sec();
	for (uint64_t j = 0; j < fp->nr_remove; j++) {
		uint64_t i = fp->order[j];
		size_t len = frag_name(name, i, fp->name_len);
		int rc = udc_invalidate(c, dir_ino(i % fp->dirs), name, len);

		if (rc < 0)
			die("frag: udc_invalidate(dir %" PRIu64 ", \"%.*s\"): %s",
			    dir_ino(i % fp->dirs), (int)len, name, strerror(-rc));
	}
	out->remove_sec = now_sec() - t0;
	/* An idle embedder thread hands over its deferred frees, then waits. */
	udc_thread_offline(c);
	frag_idle(c, out);
	udc_thread_online(c);

	for (uint64_t i = 0; i < fp->names; i++) {
		size_t len = frag_name(name, i, fp->name_len);
		int rc = udc_lookup(c, dir_ino(i % fp->dirs), name, len, NULL);

		if (fp->removed[i] ? rc == UDC_MISS : rc == UDC_NEGATIVE)
			continue;
		if (!fp->removed[i] && rc == UDC_MISS)
			out->kept_misses++;
		else
			out->wrong++;
		frag_record_bad(out, i, rc);
	}
	st->size = sizeof(*st);
	udc_stats_get(c, st);
	out->stats_rss = rss_bytes();
	udc_destroy(c);
	out->done = true;
}

/* (last - base) / (peak - base) in %; NAN if nothing grew. */
static double retained_pct(uint64_t base, uint64_t peak, uint64_t last)
{
	int64_t growth = (int64_t)peak - (int64_t)base;

	return growth > 0 ? 100.0 * (double)((int64_t)last - (int64_t)base) / (double)growth : NAN;
}

/* The idle readings of one side: RSS, bytes_used and jemalloc's resident at each time. */
static void frag_rep_idle(struct report *r, const char *key, const char *prefix,
			  const struct frag_side *side)
{
	char k[32], label[48];

	rep_obj_begin(r, key, prefix);
	for (size_t i = 0; i < FRAG_IDLE_POINTS; i++) {
		unsigned ms = (unsigned)(frag_idle_at[i] * 1000);

		snprintf(k, sizeof(k), "rss_%ums", ms);
		snprintf(label, sizeof(label), "RSS at %.1f s", frag_idle_at[i]);
		rep_u64(r, k, label, side->idle[i].rss);
		snprintf(k, sizeof(k), "bytes_used_%ums", ms);
		snprintf(label, sizeof(label), "bytes_used at %.1f s", frag_idle_at[i]);
		rep_u64(r, k, label, side->idle[i].bytes_used);
		snprintf(k, sizeof(k), "je_resident_%ums", ms);
		snprintf(label, sizeof(label), "jemalloc resident at %.1f s", frag_idle_at[i]);
		rep_u64(r, k, label, side->idle[i].je_resident);
	}
	rep_obj_end(r);
}

/* Growth, what is left and the retained share, for one figure of one side. */
static void rep_mem(struct report *r, const char *key, const char *prefix, uint64_t base,
		    uint64_t peak, uint64_t last)
{
	int64_t growth = (int64_t)peak - (int64_t)base;
	int64_t left = (int64_t)last - (int64_t)base;

	rep_obj_begin(r, key, prefix);
	rep_u64(r, "baseline", "baseline", base);
	rep_u64(r, "peak", "peak", peak);
	rep_u64(r, "final", "final", last);
	rep_i64(r, "growth", "growth", growth);
	rep_i64(r, "final_minus_baseline", "final-base", left);
	rep_f64(r, "retained_pct", "retained %",
		growth > 0 ? 100.0 * (double)left / (double)growth : NAN, 1);
	rep_obj_end(r);
}

/* The removal order: a Fisher-Yates shuffle from the seed; the first nr_remove are removed. */
static void frag_order(struct frag_params *fp, uint64_t seed)
{
	uint64_t rng, s = seed;

	fp->order = populated_alloc(fp->names * sizeof(*fp->order));
	fp->removed = populated_alloc(fp->names);
	rng = splitmix64(&s) | 1; /* never xorshift's fixed point 0 */
	for (uint64_t i = 0; i < fp->names; i++)
		fp->order[i] = (uint32_t)i;
	for (uint64_t i = fp->names - 1; i > 0; i--) {
		uint64_t j = rand_below(&rng, i + 1);
		uint32_t t = fp->order[i];

		fp->order[i] = fp->order[j];
		fp->order[j] = t;
	}
	for (uint64_t j = 0; j < fp->nr_remove; j++)
		fp->removed[fp->order[j]] = 1;
}

/* The malloc baseline, in a child of its own (no thread exists yet): into *m. */
static void frag_malloc_child(const struct frag_params *fp, struct frag_side *m)
{
	pid_t pid;
	int status;

	fflush(stdout);
	fflush(stderr);
	pid = fork();
	if (pid < 0)
		die("fork: %s", strerror(errno));
	if (pid == 0) {
		frag_malloc_side(fp, m);
		_exit(0);
	}
	while (waitpid(pid, &status, 0) < 0)
		if (errno != EINTR)
			die("waitpid: %s", strerror(errno));
	/* waitpid has returned: the child's stores to *m are visible. */
	if (!WIFEXITED(status) || WEXITSTATUS(status) != 0 || !m->done)
		die("the malloc baseline (child %d) failed: %s %d", (int)pid,
		    WIFEXITED(status) ? "exit status" : "signal",
		    WIFEXITED(status) ? WEXITSTATUS(status) : WTERMSIG(status));
}

/* The report's figures: the parameters, then both sides' times and memory. */
static void frag_rep_figures(struct report *r, const struct options *opt,
			     const struct frag_params *fp, const struct frag_side *m,
			     const struct frag_side *u)
{
	rep_str(r, "workload", "workload", "frag");
	rep_str(r, "version", "udcache version", udc_version());
	rep_u64(r, "names", "names (negatives)", fp->names);
	rep_u64(r, "dirs", "dirs", fp->dirs);
	rep_u64(r, "name_len", "name length", fp->name_len);
	rep_f64(r, "remove_ratio", "remove ratio", opt->remove_ratio, 3);
	rep_u64(r, "removed", "names removed", fp->nr_remove);
	rep_u64(r, "kept", "names kept", fp->names - fp->nr_remove);
	rep_hex(r, "seed", "seed", opt->seed);
	rep_u64(r, "memory_limit", "memory limit (bytes)", fp->memory);
	rep_u64(r, "malloc_record_size", "malloc record (bytes)", frag_rec_size(fp->name_len));
	rep_f64(r, "udcache_insert_seconds", "udcache insert seconds", u->insert_sec, 3);
	rep_f64(r, "udcache_remove_seconds", "udcache remove seconds", u->remove_sec, 3);
	rep_bool(r, "udcache_settled", "udcache bytes_used settled", u->settled);
	rep_f64(r, "udcache_peak_bytes_per_entry", "udcache peak bytes/entry",
		(double)((int64_t)u->peak.bytes_used - (int64_t)u->base.bytes_used) /
			(double)fp->names,
		1);
	rep_f64(r, "malloc_insert_seconds", "malloc insert seconds", m->insert_sec, 3);
	rep_f64(r, "malloc_remove_seconds", "malloc remove seconds", m->remove_sec, 3);
	rep_mem(r, "udcache_bytes_used", "udc.bytes_used.", u->base.bytes_used, u->peak.bytes_used,
		u->final.bytes_used);
	rep_mem(r, "udcache_rss", "udc.rss.", u->base.rss, u->peak.rss, u->final.rss);
	frag_rep_idle(r, "udcache_idle", "udc.idle.", u);
	rep_f64(r, "rss_growth_retained_pct", "udcache RSS growth retained % (idle 2 s, no purge)",
		retained_pct(u->base.rss, u->peak.rss, u->final.rss), 1);
	rep_mem(r, "udcache_jemalloc_resident", "udc.je_res.", u->base.je_resident,
		u->peak.je_resident, u->final.je_resident);
	rep_mem(r, "malloc_rss", "malloc.rss.", m->base.rss, m->peak.rss, m->final.rss);
	frag_rep_idle(r, "malloc_idle", "malloc.idle.", m);
	rep_f64(r, "malloc_rss_growth_retained_pct",
		"malloc RSS growth retained % (idle 2 s, no purge)",
		retained_pct(m->base.rss, m->peak.rss, m->final.rss), 1);
	/* Figures the library never gives: after an explicit jemalloc purge. */
	rep_mem(r, "udcache_rss_purged", "udc.rss after explicit jemalloc purge.", u->base.rss,
		u->peak.rss, u->purged.rss);
	rep_mem(r, "udcache_jemalloc_resident_purged", "udc.je_res after explicit jemalloc purge.",
		u->base.je_resident, u->peak.je_resident, u->purged.je_resident);
	rep_mem(r, "malloc_rss_purged", "malloc.rss after explicit jemalloc purge.", m->base.rss,
		m->peak.rss, m->purged.rss);
	rep_mem(r, "malloc_jemalloc_resident", "malloc.je_res.", m->base.je_resident,
		m->peak.je_resident, m->final.je_resident);
	rep_mem(r, "malloc_jemalloc_allocated", "malloc.je_alloc.", m->base.je_allocated,
		m->peak.je_allocated, m->final.je_allocated);
}

/* The report's warnings about what the cache did and what went wrong. */
static void frag_rep_warnings(struct report *r, const struct frag_params *fp,
			      const struct frag_side *m, const struct frag_side *u,
			      const struct udc_stats *peak_st, const struct udc_stats *st,
			      bool miss_allowed, uint64_t wrong)
{
	if (st->evictions)
		rep_warn(r,
			 "%" PRIu64 " evictions: the figures include reclaim, not only "
			 "compaction (raise --memory)",
			 st->evictions);
	if (peak_st->nr_negative < fp->names)
		rep_warn(r, "the cache kept %" PRIu64 " of %" PRIu64 " negatives",
			 peak_st->nr_negative, fp->names);
	if (!u->settled)
		rep_warn(r, "bytes_used was still changing %.1f s after the removals",
			 frag_idle_at[FRAG_IDLE_POINTS - 1]);
	if (u->kept_misses)
		rep_warn(r, "%" PRIu64 " kept names missed%s", u->kept_misses,
			 miss_allowed ? " (allowed: the cache evicted or declined)" : "");
	if (u->any_bad) {
		uint64_t i = u->first_bad;

		rep_warn(r, "udcache: first unexpected answer: name %" PRIu64 " (%s) gave %s", i,
			 fp->removed[i] ? "removed" : "kept", rc_name(u->first_bad_rc));
	}
	if (m->any_bad)
		rep_warn(r, "malloc baseline: name %" PRIu64 " (%s) has a wrong record",
			 m->first_bad, fp->removed[m->first_bad] ? "removed" : "kept");
	if (wrong)
		rep_warn(r, "%" PRIu64 " wrong answers: FAILED", wrong);
}

int run_frag(const struct options *opt)
{
	struct frag_params fp = {
		.names = opt->names_set ? opt->names : FRAG_NAMES,
		.dirs = opt->dirs_set ? opt->dirs : FRAG_DIRS,
		.name_len = opt->name_len_set ? opt->name_len : FRAG_NAME_LEN,
		.memory = opt->memory_set ? opt->memory : FRAG_MEMORY,
	};
	struct udc_stats peak_st, st;
	struct frag_side *sides, *m, *u;
	struct report r;
	uint64_t wrong;
	bool miss_allowed;

	if (fp.dirs > fp.names)
		usage_error("--dirs (%" PRIu64 ") must not exceed --names (%" PRIu64 ")", fp.dirs,
			    fp.names);
	fp.nr_remove = (uint64_t)(opt->remove_ratio * (double)fp.names + 0.5);
	if (fp.nr_remove > fp.names)
		fp.nr_remove = fp.names;
	frag_order(&fp, opt->seed);

	sides = mmap(NULL, 2 * sizeof(*sides), PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS,
		     -1, 0);
	if (sides == MAP_FAILED)
		die("mmap: %s", strerror(errno));
	memset(sides, 0, 2 * sizeof(*sides));
	m = &sides[0];
	u = &sides[1];
	frag_malloc_child(&fp, m);

	frag_udcache_side(&fp, u, &peak_st, &st);
	/* The cache may drop a kept negative only if it evicted or declined some. */
	miss_allowed = st.evictions > 0 || peak_st.nr_negative < fp.names;
	wrong = m->wrong + u->wrong + (miss_allowed ? 0 : u->kept_misses);

	rep_begin(&r, opt->json);
	frag_rep_figures(&r, opt, &fp, m, u);
	rep_u64(&r, "wrong_answers", "wrong answers", wrong);
	rep_u64(&r, "kept_misses", "kept names that missed", u->kept_misses);
	rep_udc_stats(&r, &st, u->stats_rss);
	frag_rep_warnings(&r, &fp, m, u, &peak_st, &st, miss_allowed, wrong);
	rep_end(&r);
	fflush(stdout);

	munmap(sides, 2 * sizeof(*sides));
	munmap(fp.removed, fp.names);
	munmap(fp.order, fp.names * sizeof(*fp.order));
	return wrong ? 1 : 0;
}
