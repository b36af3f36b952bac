/* SPDX-License-Identifier: MIT */
/*
 * stress/replay.h - replay real `strace -f` logs against a name cache.
 *
 * Owns nothing at run time: the declarations of stress/replay/, which reads
 * a log (plain or gzip), builds from it a model file tree that reproduces
 * every outcome the log shows, and replays the log's path lookups through
 * impl->walk() with that tree as the cache's backend, telling the cache of
 * every change (unlink, rename, mkdir, rmdir, create).  See the comment at
 * the top of stress/replay/parse.c (reading), model.c (building the model)
 * and run.c (replaying) for the rules and their limits.
 *
 * Locking: a trace is read-only once replay_load() returns; replay_run()
 * is single-threaded and keeps its own state, so several replay_run() calls
 * may use one trace at once.
 *
 * Ordering: none (no shared state).
 */
#ifndef UDC_STRESS_REPLAY_H
#define UDC_STRESS_REPLAY_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "shrink/shrink.h"   /* struct shrink_bytes_parts */
#include "stress/impl.h"

struct replay_trace; /* opaque: a parsed log and its model tree */

#define REPLAY_SERIES 16       /* replay_result.entries_series: samples a pass */
#define REPLAY_MAX_LANES 100000 /* traces x copies in one replay at most */

/*
 * What replay_run() measured.  With passes > 1 the counters describe the
 * last pass only (the warm cache), except wrong, first_wrong, cache_errors
 * and bytes_used_max, which cover every pass.
 */
struct replay_result {
	uint64_t events;	   /* lookup events replayed (walks + unmodelled) */
	uint64_t syscalls_parsed;  /* complete syscall records in the log */
	uint64_t lines_skipped;	   /* lines not used: garbage, unsupported calls,
				    * unknown dirfd, truncated path, unmodelled errno */
	uint64_t walks;		   /* impl->walk() calls */
	uint64_t hits;		   /* walks answered with no backend call */
	uint64_t misses;	   /* walks that made >= 1 backend call */
	uint64_t backend_calls;	   /* backend lookups + readlinks */
	uint64_t negative_answers; /* walks that returned -ENOENT */
	uint64_t wrong;		   /* answers that disagreed with the model */
	uint64_t mutations;	   /* changes applied to the store and told to the cache */
	uint64_t bytes_used_max;   /* impl->stats bytes_used, sampled every 64 events */
	uint64_t bytes_used_end;
	uint64_t nr_negative_end, nr_positive_end;
	double seconds;	       /* wall time of the (last) pass, model walks included */
	char first_wrong[256]; /* the first wrong answer, or "" */
	/* Extensions. */
	uint64_t unmodelled;	    /* lookup events skipped: the model's answer is not
				     * the log's (never counted as wrong) */
	uint64_t backend_readlinks; /* of backend_calls, readlink calls */
	uint64_t cache_errors;	    /* walks that failed with -ENOMEM/-EAGAIN, and
				     * mutation calls that failed (the cache was then
				     * told to forget the names instead) */
	uint64_t reset_calls;	    /* cache calls that told it of the store's reset
				     * between passes and copies */
	uint64_t evictions_end;	    /* impl->stats evictions at the end */
	uint64_t promoted_end;	    /* ... entries_promoted, refaults and */
	uint64_t refaults_end;	    /* negatives_declined at the end (udcache's */
	uint64_t declined_end;	    /* policy; 0 for the baselines) */
	uint64_t dirs_sum;	    /* directory objects (udc_stats.nr_dirs), summed
				     * over the samples (dirs_mean: / samples) */
	unsigned passes;	    /* passes run */
	unsigned copies;	    /* copies of the trace's tree replayed per pass */
	uint64_t rss_end;	    /* the process's resident bytes (/proc/self/statm)
				     * at the end, before the cache is destroyed */
	unsigned lanes;		    /* process trees replayed at once (traces x copies) */
	/* Per component (the names the model walk looks up; the cache's walks
	 * look up the same ones, so 1 - (backend_positive + backend_negative) /
	 * components is the per-component hit ratio). */
	uint64_t components;	      /* names walked, in the walks replayed */
	uint64_t components_negative; /* of which the store does not hold (-ENOENT) */
	uint64_t backend_positive;    /* of backend_calls, lookups answered 0 */
	uint64_t backend_negative;    /* of backend_calls, lookups answered -ENOENT */
	/* Entries held (nr_positive + nr_negative), sampled with bytes_used
	 * every 64 events of the last pass: means are sum / samples. */
	uint64_t samples, entries_sum, negatives_sum, bytes_used_sum, entries_max;
	uint64_t entries_series[REPLAY_SERIES]; /* at k/REPLAY_SERIES of the pass */
	/* replay_opts.optimum_entries: Belady's optimum over the last pass. */
	uint64_t optimum_misses;     /* component misses of MIN at that many entries */
	uint64_t optimum_components; /* components in the recorded stream's last pass */
	/* impl->bytes_parts at the end (udcache; has_parts), where bytes_used
	 * is: directory objects, buckets, ghosts, each kind's slab, and each
	 * queue's pages against its live objects' slots. */
	bool has_parts;
	struct shrink_bytes_parts parts;
};

/* Kinds of replayed events (replay_summary().by_kind). */
enum replay_kind {
	REPLAY_LOOKUP = 0, /* a path walk, compared with the log's outcome */
	REPLAY_CREATE,	   /* a new file, symlink or device node */
	REPLAY_MKDIR,
	REPLAY_LINK, /* a new name for an existing file */
	REPLAY_UNLINK,
	REPLAY_RMDIR,
	REPLAY_RENAME,
	REPLAY_NR_KINDS,
};

/* What replay_load() made of a log. */
struct replay_summary {
	uint64_t lines;		   /* lines read */
	uint64_t syscalls_parsed;  /* complete syscall records (<unfinished ...> and
				    * <... resumed> pairs joined) */
	uint64_t lines_skipped;	   /* the sum of the skip_* below */
	uint64_t skip_garbage;	   /* not a strace line; a resumed call with no start;
				    * a start never resumed; result "?" */
	uint64_t skip_unsupported; /* a call replay does not model (fd-only calls
				    * such as close are not traced by %file) */
	uint64_t skip_dirfd;	   /* relative to a dirfd whose object is unknown */
	uint64_t skip_path;	   /* a path that is truncated ("..."...) or no string */
	uint64_t skip_errno;	   /* a failure that says nothing certain (EACCES...) */
	uint64_t other_lines;	   /* signals and exits: read, used only for pid exits */
	uint64_t fd_calls;	   /* calls on an fd ("" with AT_EMPTY_PATH): types only */
	uint64_t events;	   /* events to replay, all kinds */
	uint64_t by_kind[REPLAY_NR_KINDS];
	uint64_t lookups_enoent; /* lookup events whose logged outcome is ENOENT */
	uint64_t conflicts;	 /* calls the model contradicts (their lookups are
				  * counted unmodelled at replay, not wrong) */
	uint64_t pids;
	uint64_t objects;	   /* model objects: files, directories, symlinks */
	uint64_t original_objects; /* of which exist before the log starts */
	uint64_t names;		   /* (directory, name) pairs the log looks up */
	char cwd[256];		   /* the first process's starting directory */
	int cwd_synthetic;	   /* 1: the log never says; cwd is the model's "/cwd" */
};

/**
 * replay_load() - read and parse an strace log, build its model tree.
 * @path:   the log, plain text or gzip (detected by its magic; gunzipped by
 *          a `gzip -dc` child process).
 * @out:    the trace, on success; free it with replay_free().
 * @err:    a message on failure ("" on success); may be NULL.
 * @errlen: the size of @err.
 *
 * Context: any thread; reads the whole log into memory.
 * Return: 0; -ENOENT/-EACCES/... when the file cannot be read, -EIO when
 * gzip fails, -EINVAL when no line of it is a syscall, -ENOMEM, -EFBIG past
 * 4 GiB of model data.
 */
int replay_load(const char *path, struct replay_trace **out, char *err, size_t errlen);

/* replay_free() - free a trace from replay_load(); NULL is ignored. */
void replay_free(struct replay_trace *t);

/* How to replay (replay_run_opts()). */
struct replay_opts {
	size_t memory_limit;	/* the cache's limit in bytes (0: the implementation's
				 * default) */
	unsigned passes;	/* how many times to replay the log (0 is taken as 1) */
	bool no_reclaim_thread; /* impl_config.no_reclaim_thread: reclaim only in the
				 * replaying thread, so that a replay is deterministic */
	uint64_t hash_key[2];	/* impl_config.hash_key ({0,0}: the implementation's) */
	unsigned copies;	/* copies of each trace's tree in the store, each
				 * a lane of its own (0 is taken as 1) */
	size_t max_entries;	/* impl_config.max_entries (0: none) */
	uint64_t seed;		/* the order the lanes' events interleave in */
	size_t optimum_entries; /* >0: record the component stream and report
				 * Belady's optimum at this many entries */
	/* Called on the replaying thread with the cache and its stats every
	 * 64 events and at the end of each pass (NULL: not called). */
	void (*sample)(void *arg, void *cache, const struct udc_stats *st);
	void *sample_arg;
};

/**
 * replay_run_opts() - replay a trace against an implementation.
 * @impl: the implementation (impl_udcache, a baseline).
 * @t:    the trace.
 * @opts: how (see struct replay_opts).
 * @out:  the measurements (zeroed first).
 *
 * One cache serves every pass.  Before each pass after the first, the store
 * goes back to its state at the start of the log and the cache is told the
 * difference (as mutations: directories the log made are rmdir'ed, names
 * that existed are added back, names the log made are removed), so a later
 * pass shows the warm cache.  Objects that existed before the log keep their
 * inos in every pass; objects the log makes get new inos in each pass.
 *
 * With copies > 1 the store holds that many copies of the tree, each a lane
 * (a separate process tree) of its own: lane k's root is the name "c<k>" in
 * the cache's root, its objects have inos of their own (lane k's originals:
 * id + (1 + k) * span; the log's own objects: id + (1 + pass * lanes + k) *
 * span, span > every trace's object count), and its absolute paths and
 * symlink targets are rewritten to start with "/c<k>".  Each pass replays
 * every lane's events, each lane's in order, the lanes' interleaved in an
 * order shuffled from opts->seed; between passes every lane's store goes
 * back to the log's start.  Every lane's entries stay live, so the cache's
 * memory grows with the copies until the limit binds, and every answer is
 * still checked against the store.  A lookup whose model walk climbs ".."
 * above the lane's root counts as unmodelled (the log's "/" is its own
 * parent; a lane's root is not).
 *
 * Each lookup event is walked in the model first; if the model's answer is
 * not the log's outcome the event counts in out->unmodelled and is not
 * replayed; otherwise impl->walk()'s answer (errno, ino, type) must equal the
 * model's, or out->wrong counts it (out->first_wrong says which).  The
 * backend is called on the replaying thread only; the cache may run its own
 * threads (reclaim), which never call the backend.
 *
 * Context: any thread; creates and destroys the cache.
 * Return: 0 (wrong answers are counted, not errors); -EINVAL for NULL
 * arguments; -errno from impl->create(); -EOPNOTSUPP if the implementation
 * has no walk (or its walk says so); -ENOMEM.
 */
int replay_run_opts(const struct impl *impl, const struct replay_trace *t,
		    const struct replay_opts *opts, struct replay_result *out);

/**
 * replay_run_mix() - replay_run_opts() of several traces at once: nt traces,
 * opts->copies lanes each (trace k's copy c is lane k * copies + c),
 * interleaved as above.  The result sums every lane's counters.
 * Return: as replay_run_opts(); -EINVAL past REPLAY_MAX_LANES lanes;
 * -ENOMEM if the optimum's stream does not fit in memory.
 */
int replay_run_mix(const struct impl *impl, const struct replay_trace *const *t, unsigned nt,
		   const struct replay_opts *opts, struct replay_result *out);

/**
 * replay_optimum() - Belady's MIN over a recorded stream of keys: the misses
 * of a cache of @entries entries that, on a miss when full, evicts the entry
 * whose next use is farthest (never used again first), counted from
 * keys[@from] on (the stream before it only warms the cache).
 * @keys: the stream (any 64-bit values; equal values are one entry).
 * @n: its length; @from <= @n.
 * @entries: the cache's size in entries, >= 1.
 *
 * Demand fetch, no bypass: every missed key is brought in (textbook MIN,
 * the optimum of a cache that must hold what it answers).  O(n log n) time,
 * O(n) memory.  Context: any thread.
 * Return: the misses; UINT64_MAX if out of memory.
 */
uint64_t replay_optimum(const uint64_t *keys, size_t n, size_t from, size_t entries);

/* replay_run() - replay_run_opts() with memory_limit and passes, the
 * implementation's reclaim thread and hash key. */
int replay_run(const struct impl *impl, const struct replay_trace *t, size_t memory_limit,
	       unsigned passes, struct replay_result *out);

/* replay_summary() - fill @s with what replay_load() made of the log. */
void replay_summary(const struct replay_trace *t, struct replay_summary *s);

/* replay_kind_name() - "lookup", "create", ...; "?" past REPLAY_NR_KINDS. */
const char *replay_kind_name(unsigned kind);

#endif /* UDC_STRESS_REPLAY_H */
