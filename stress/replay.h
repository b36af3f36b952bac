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

#include "stress/impl.h"

struct replay_trace; /* opaque: a parsed log and its model tree */

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
	unsigned passes;	    /* passes run */
	unsigned copies;	    /* copies of the trace's tree replayed per pass */
	uint64_t rss_end;	    /* the process's resident bytes (/proc/self/statm)
				     * at the end, before the cache is destroyed */
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
	unsigned copies;	/* copies of the trace's tree in the store, each
				 * replayed in turn in every pass (0 is taken as 1) */
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
 * With copies > 1 the store holds that many copies of the tree: every object
 * but the root has distinct inos in each copy (copy k's originals: id +
 * k * nobjs; the log's own objects: id + (pass * copies + k) * nobjs), so
 * every copy's names are distinct cache entries.  The root is the cache's
 * root, shared: each pass replays copy 0, 1, ... in turn, and between two
 * copies the store goes back to the log's start (as between passes) and the
 * root's names are told to name the next copy's objects (udc_add).  The
 * earlier copies' entries stay in the cache, unreachable, until reclaim
 * takes them: so the cache's memory grows with the copies until the limit
 * binds, and every answer is still checked against the store.
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

/* replay_run() - replay_run_opts() with memory_limit and passes, the
 * implementation's reclaim thread and hash key. */
int replay_run(const struct impl *impl, const struct replay_trace *t, size_t memory_limit,
	       unsigned passes, struct replay_result *out);

/* replay_summary() - fill @s with what replay_load() made of the log. */
void replay_summary(const struct replay_trace *t, struct replay_summary *s);

/* replay_kind_name() - "lookup", "create", ...; "?" past REPLAY_NR_KINDS. */
const char *replay_kind_name(unsigned kind);

#endif /* UDC_STRESS_REPLAY_H */
