/* SPDX-License-Identifier: MIT */
/*
 * stress/replay/run.c - replay_run(): a trace replayed against an
 * implementation (stress/impl.h), the model tree as its backend.  The
 * third of the replay's three programs (parse, model, run).
 *
 * Owns: inside replay_run_opts(), the store (the model tree's state now),
 * its counters and the cache under test.
 *
 * 3. Replaying (replay_run_opts).  The store is the model tree in its state at
 *    the start of the log, object ids as inos (root 1).  Events replay in
 *    order: a lookup walks its path in the model, and if the model's answer
 *    is the log's outcome (0, ENOENT, ENOTDIR), walks it with impl->walk()
 *    (UDC_WALK_FOLLOW as the call follows symlinks) and compares errno, ino
 *    and type; a mutation changes the store, then tells the cache (add,
 *    remove, rename, rmdir).  Mutating calls walk their path first as the
 *    kernel does (mkdir looks the name up, finds it absent, then creates
 *    it), so they are lookups too.  The backend answers from the store and
 *    counts its calls (lookups and readlinks), which gives hits and misses
 *    per walk.  With several passes one cache serves them all: between
 *    passes the store goes back to its state at the start of the log and the
 *    cache is told the difference as mutations (rmdir of the directories the
 *    log made, add of the names that existed, remove of those it made).
 *    Objects that existed keep their inos; those the log makes get new ones
 *    in each pass (id + pass * nobjs), so no answer from an earlier pass can
 *    pass for a later one.  With --copies N (opts->copies) the store holds
 *    N copies of the tree, each with inos of its own (run_gen) under the
 *    one root, and each pass replays them in turn: between two copies the
 *    store is reset as between passes and the root's names are told to
 *    name the next copy's objects, so the earlier copies' entries stay in
 *    the cache, unreachable, and its memory grows until the limit binds
 *    (the project's traces alone hold ~300 KB).  A mutation the cache fails (-ENOMEM) makes it
 *    forget the name instead (remove, else invalidate_dir), so it never
 *    answers from before the change; walks that fail with -ENOMEM or -EAGAIN
 *    count as cache_errors, not as wrong.
 *
 * Locking: none.  A replay is single-threaded: the store, its counters and
 * the backend calls all belong to the thread in replay_run_opts() (the
 * cache's own reclaim thread, if any, never calls the backend).  Each
 * replay keeps its state on its own, so several replays may share one
 * trace at once.
 * Ordering: none (no atomics, no shared state).
 *
 * Limitations and implementation defects:
 *  - Concurrent calls of several pids are ordered by their completion line;
 *    the real order of their lookups inside the kernel is unknown.
 *  - fchdir, dup, close, fork and clone are not in strace's %file class, so
 *    cwd and fd inheritance are the heuristics above.  Stale fd numbers
 *    (closed and reused by an untraced call) are not detected.
 *  - A symlink whose target is unknown (seen by lstat only) or truncated in
 *    the log gets a synthetic target "/\001L<id>" (a name no log uses).
 *  - A directory found by a following walk that readlink later shows to be
 *    a symlink is converted only if no name in it is known yet.
 *  - Procfs magic (/proc/self, /proc/self/fd/N, /dev/fd) is modelled as
 *    plain names, the same for every pid.
 *  - Hard links are names of one object; link counts are not kept.
 *  - Permissions are not modelled (EACCES and EPERM outcomes are skipped).
 */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "stress/replay/internal.h"

#define SAMPLE_EVERY 64 /* impl->stats every this many events */

/* ---------------------------------------------------------------------- */
/* Replaying. */

/*
 * A replay's store: the model tree's state now.  Invariant between events:
 * the cache was told every change, so each of its answers is the store's
 * (cur, parent) as of some moment since the name was last changed.
 */
struct run {
	const struct replay_trace *t;
	const struct impl *impl;
	void *c;
	struct replay_result *res;
	uint32_t *cur;	  /* object per slot (0: absent) */
	uint32_t *parent; /* parent per directory object */
	char *buf;	  /* UDC_PATH_MAX + 1: the model walk's spliced paths */
	unsigned pass;
	unsigned copy, copies; /* the copy of the tree replayed now, of how many */
	uint64_t span;	       /* inos: id + generation * span (run_gen) */
	const struct replay_opts *opts;
	uint64_t calls, links; /* backend calls in the current walk */
	uint64_t since_sample;
};

/* The generation of object o's ino now: objects that exist before the log
 * keep theirs in every pass (copy k's: k); objects the log makes get a new
 * one in each pass and copy (pass * copies + copy).  With one copy: 0 for
 * the originals, the pass for the log's own. */
static uint64_t run_gen(const struct run *r, uint32_t o)
{
	if (r->t->objs[o].flags & OBJ_ORIGINAL)
		return r->copy;
	return (uint64_t)r->pass * r->copies + r->copy;
}

/* The ino of object o now: id + generation * span; the root is the cache's
 * root in every copy. */
static udc_ino run_ino(const struct run *r, uint32_t o)
{
	if (o == ROOT)
		return ROOT;
	return o + run_gen(r, o) * r->span;
}

/* The object with ino i now, or 0. */
static uint32_t run_obj(const struct run *r, udc_ino i)
{
	if (i == UDC_INO_NONE)
		return 0;
	uint64_t o = (i - 1) % r->span + 1, gen = (i - 1) / r->span;
	if (o >= r->t->nobjs)
		return 0;
	if (o == ROOT)
		return gen == 0 ? ROOT : 0;
	return gen == run_gen(r, (uint32_t)o) ? (uint32_t)o : 0;
}

/* What the backend answers for object o in this pass. */
static struct udc_attr run_attr(const struct run *r, uint32_t o)
{
	struct udc_attr a = { .ino = run_ino(r, o), .type = r->t->objs[o].type };
	return a;
}

/* Backend: name in directory dir, from the store. */
static int run_lookup(void *ctx, udc_ino dir, const char *name, size_t len, struct udc_attr *out)
{
	struct run *r = ctx;
	uint32_t d = run_obj(r, dir);

	r->calls++;
	if (!d)
		return -ESTALE;
	if (r->t->objs[d].type != UDC_TYPE_DIR)
		return -ENOTDIR;
	if (len == 2 && name[0] == '.' && name[1] == '.') {
		*out = run_attr(r, r->parent[d]);
		return 0;
	}
	uint32_t s = slot_find(r->t, d, name, len);
	if (s == NONE || !r->cur[s])
		return -ENOENT;
	*out = run_attr(r, r->cur[s]);
	return 0;
}

/* Backend: a symlink's target. */
static ssize_t run_readlink(void *ctx, udc_ino ino, char *buf, size_t size)
{
	struct run *r = ctx;
	uint32_t o = run_obj(r, ino);
	char synth[24];

	r->calls++;
	r->links++;
	if (!o)
		return -ESTALE;
	const struct robj *ob = &r->t->objs[o];
	if (ob->type != UDC_TYPE_SYMLINK)
		return -EINVAL;
	const char *tg = synth;
	size_t n;
	if (ob->flags & OBJ_SYNTH) {
		n = synth_target(o, synth);
	} else {
		tg = r->t->str + ob->target;
		n = ob->tlen;
	}
	if (n > size)
		n = size;
	memcpy(buf, tg, n);
	return (ssize_t)n;
}

static const struct udc_backend run_backend = {
	.lookup = run_lookup,
	.readlink = run_readlink,
};

/* Read impl->stats: the bytes_used maximum and the end state. */
static void run_sample(struct run *r)
{
	struct udc_stats st;

	memset(&st, 0, sizeof(st));
	st.size = sizeof(st);
	r->impl->stats(r->c, &st);
	if (r->opts->sample)
		r->opts->sample(r->opts->sample_arg, r->c, &st);
	if (st.bytes_used > r->res->bytes_used_max)
		r->res->bytes_used_max = st.bytes_used;
	r->res->bytes_used_end = st.bytes_used;
	r->res->nr_negative_end = st.nr_negative;
	r->res->nr_positive_end = st.nr_positive;
	r->res->evictions_end = st.evictions;
}

/* The cache refused a change: make it forget the name instead (and, if that
 * fails too, the directory). */
static void run_forget(struct run *r, uint32_t s)
{
	const struct rslot *sl = &r->t->slots[s];
	udc_ino d = run_ino(r, sl->dir);

	if (r->impl->remove(r->c, d, r->t->str + sl->name, sl->nlen))
		r->impl->invalidate_dir(r->c, d);
}

/* Tell the cache slot s now names o (0: nothing). */
static void run_tell(struct run *r, uint32_t s, uint32_t o)
{
	const struct rslot *sl = &r->t->slots[s];
	udc_ino d = run_ino(r, sl->dir);
	int rc;

	if (o) {
		struct udc_attr a = run_attr(r, o);
		rc = r->impl->add(r->c, d, r->t->str + sl->name, sl->nlen, &a);
	} else {
		rc = r->impl->remove(r->c, d, r->t->str + sl->name, sl->nlen);
	}
	if (rc) {
		r->res->cache_errors++;
		run_forget(r, s);
	}
}

/* Directory o was removed from slot s (or replaced there): its names go. */
static void run_kill(struct run *r, uint32_t o)
{
	const struct replay_trace *t = r->t;

	for (uint32_t s = t->objs[o].slots; s != NONE; s = t->slots[s].next)
		r->cur[s] = 0;
}

/* Tell the cache directory o, named by slot s, was removed; if it refuses,
 * make it forget the name and everything in o. */
static void run_rmdir(struct run *r, uint32_t s, uint32_t o)
{
	const struct rslot *sl = &r->t->slots[s];

	if (r->impl->rmdir(r->c, run_ino(r, sl->dir), r->t->str + sl->name, sl->nlen,
			   run_ino(r, o))) {
		r->res->cache_errors++;
		run_forget(r, s);
		r->impl->invalidate_dir(r->c, run_ino(r, o));
	}
}

/* Apply mutation e to the store and tell the cache. */
static void run_mutation(struct run *r, const struct revent *e)
{
	const struct replay_trace *t = r->t;
	uint32_t s = e->slot, o;

	switch (e->kind) {
	case REPLAY_CREATE:
	case REPLAY_MKDIR:
	case REPLAY_LINK:
		o = r->cur[s];
		if (o && t->objs[o].type == UDC_TYPE_DIR && o != e->obj) {
			run_rmdir(r, s, o);
			run_kill(r, o);
		}
		r->cur[s] = e->obj;
		if (t->objs[e->obj].type == UDC_TYPE_DIR)
			r->parent[e->obj] = t->slots[s].dir;
		run_tell(r, s, e->obj);
		break;
	case REPLAY_UNLINK:
		r->cur[s] = 0;
		run_tell(r, s, 0);
		break;
	case REPLAY_RMDIR:
		o = r->cur[s];
		r->cur[s] = 0;
		if (o) {
			run_rmdir(r, s, o);
			run_kill(r, o);
		} else {
			run_tell(r, s, 0);
		}
		break;
	case REPLAY_RENAME: {
		uint32_t s2 = e->slot2, x = r->cur[s], y = r->cur[s2];
		const struct rslot *a = &t->slots[s], *b2 = &t->slots[s2];
		if (!x || x == y)
			break;
		r->cur[s] = 0;
		r->cur[s2] = x;
		if (t->objs[x].type == UDC_TYPE_DIR)
			r->parent[x] = b2->dir;
		if (y && t->objs[y].type == UDC_TYPE_DIR)
			run_kill(r, y);
		if (r->impl->rename(r->c, run_ino(r, a->dir), t->str + a->name, a->nlen,
				    run_ino(r, b2->dir), t->str + b2->name, b2->nlen,
				    run_ino(r, x))) {
			r->res->cache_errors++;
			run_forget(r, s);
			run_forget(r, s2);
			if (t->objs[x].type == UDC_TYPE_DIR)
				r->impl->invalidate_dir(r->c, run_ino(r, x));
			if (y && t->objs[y].type == UDC_TYPE_DIR)
				r->impl->invalidate_dir(r->c, run_ino(r, y));
		}
		break;
	}
	}
	r->res->mutations++;
}

/* A -errno as text, for first_wrong. */
static const char *err_name(int e)
{
	switch (e) {
	case 0:
		return "0";
	case -ENOENT:
		return "-ENOENT";
	case -ENOTDIR:
		return "-ENOTDIR";
	case -ELOOP:
		return "-ELOOP";
	case -ENAMETOOLONG:
		return "-ENAMETOOLONG";
	case -ENOMEM:
		return "-ENOMEM";
	case -EAGAIN:
		return "-EAGAIN";
	case -ESTALE:
		return "-ESTALE";
	case -EINVAL:
		return "-EINVAL";
	case -EIO:
		return "-EIO";
	default:
		return "-errno";
	}
}

/* Replay lookup e: model first, then the cache. */
static int run_lookup_event(struct run *r, const struct revent *e)
{
	const struct replay_trace *t = r->t;
	struct replay_result *res = r->res;
	const char *path = t->str + e->path;
	/* A replay walk (no builder) only reads the trace. */
	struct wstate w = {
		.t = (struct replay_trace *)t, .cur = r->cur, .parent = r->parent, .buf = r->buf
	};
	struct wres m = walk_path(&w, e->start, path, e->plen, e->follow);

	res->events++;
	if (m.err != e->expect) {
		res->unmodelled++;
		return 0;
	}
	struct udc_call call = { .ctx = r };
	struct udc_attr a = { 0 };
	udc_ino start = path[0] == '/' ? ROOT : run_ino(r, e->start);
	r->calls = r->links = 0;
	int rc = r->impl->walk(r->c, start, path, e->plen, e->follow ? UDC_WALK_FOLLOW : 0, &call,
			       &a);
	if (rc == -EOPNOTSUPP)
		return -EOPNOTSUPP;
	res->walks++;
	res->backend_calls += r->calls;
	res->backend_readlinks += r->links;
	if (r->calls)
		res->misses++;
	else
		res->hits++;
	if (rc == -ENOENT)
		res->negative_answers++;
	if (rc == -ENOMEM || rc == -EAGAIN) {
		res->cache_errors++;
		return 0;
	}
	bool ok = rc == m.err;
	if (ok && rc == 0)
		ok = a.ino == run_ino(r, m.obj) && a.type == t->objs[m.obj].type;
	if (!ok) {
		if (!res->wrong)
			snprintf(res->first_wrong, sizeof(res->first_wrong),
				 "pass %u line %" PRIu32 " %s(\"%.80s\"%s): cache %s ino %" PRIu64
				 " type %u, model %s ino %" PRIu64 " type %u",
				 r->pass + 1, e->line, sys_table[e->sys].name, path,
				 e->follow ? "" : ", nofollow", err_name(rc), (uint64_t)a.ino,
				 (unsigned)a.type, err_name(m.err),
				 m.err ? (uint64_t)0 : (uint64_t)run_ino(r, m.obj),
				 m.err ? 0u : (unsigned)t->objs[m.obj].type);
		res->wrong++;
	}
	return 0;
}

/*
 * Between passes and copies: put the store back to the log's start and tell
 * the cache every difference, as an embedder would after restoring a snapshot.
 * Directories the log made are removed (rmdir); names of directories that
 * existed before the log get their first state back (add or remove).
 */
static void run_reset(struct run *r)
{
	const struct replay_trace *t = r->t;

	for (size_t s = 0; s < t->nslots; s++) {
		const struct rslot *sl = &t->slots[s];
		uint32_t now = r->cur[s], then = sl->init;
		if (now == then)
			continue;
		if (now && t->objs[now].type == UDC_TYPE_DIR &&
		    !(t->objs[now].flags & OBJ_ORIGINAL)) {
			run_rmdir(r, (uint32_t)s, now);
			r->res->reset_calls++;
			if (!then)
				continue;
		}
		if (!(t->objs[sl->dir].flags & OBJ_ORIGINAL))
			continue;
		run_tell(r, (uint32_t)s, then);
		r->res->reset_calls++;
	}
	for (size_t s = 0; s < t->nslots; s++)
		r->cur[s] = t->slots[s].init;
	for (size_t o = 0; o < t->nobjs; o++)
		r->parent[o] = t->objs[o].init_parent ? t->objs[o].init_parent : ROOT;
}

/*
 * The next run of the log: pass, copy.  The store goes back to the log's
 * start (run_reset, with the inos of the run just done); with several
 * copies, the root's names that exist at the start then name the next
 * copy's objects (the earlier copy's tree stays in the store, unreachable).
 */
static void run_next(struct run *r, unsigned pass, unsigned copy)
{
	const struct replay_trace *t = r->t;

	run_reset(r);
	r->pass = pass;
	r->copy = copy;
	if (r->copies < 2)
		return;
	for (uint32_t s = t->objs[ROOT].slots; s != NONE; s = t->slots[s].next) {
		if (!t->slots[s].init)
			continue;
		run_tell(r, s, t->slots[s].init);
		r->res->reset_calls++;
	}
}

/* CLOCK_MONOTONIC in seconds. */
static double now_seconds(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

/* See replay.h. */
int replay_run(const struct impl *impl, const struct replay_trace *t, size_t memory_limit,
	       unsigned passes, struct replay_result *out)
{
	struct replay_opts o = { .memory_limit = memory_limit, .passes = passes };

	return replay_run_opts(impl, t, &o, out);
}

/* See replay.h: set up the store and the cache, run the passes (resetting
 * the store between them), keep what covers every pass, clean up. */
/* r's state tables: every slot and object as the trace begins; -ENOMEM. */
static int run_alloc_state(struct run *r, const struct replay_trace *t)
{
	r->cur = malloc((t->nslots ? t->nslots : 1) * sizeof(*r->cur));
	r->parent = malloc(t->nobjs * sizeof(*r->parent));
	r->buf = malloc(UDC_PATH_MAX + 1);
	if (!r->cur || !r->parent || !r->buf) {
		free(r->cur);
		free(r->parent);
		free(r->buf);
		return -ENOMEM;
	}
	for (size_t s = 0; s < t->nslots; s++)
		r->cur[s] = t->slots[s].init;
	for (size_t o = 0; o < t->nobjs; o++)
		r->parent[o] = t->objs[o].init_parent ? t->objs[o].init_parent : ROOT;
	return 0;
}

/* The trace's events once (one copy); 0, or a lookup event's error. */
static int run_events(struct run *r, const struct replay_trace *t)
{
	int rc = 0;

	for (size_t i = 0; i < t->nev && rc == 0; i++) {
		const struct revent *e = &t->ev[i];
		if (e->kind == REPLAY_LOOKUP)
			rc = run_lookup_event(r, e);
		else
			run_mutation(r, e);
		if (++r->since_sample >= SAMPLE_EVERY) {
			r->since_sample = 0;
			run_sample(r);
		}
	}
	return rc;
}

/* One pass: every copy in turn; 0, or a lookup event's error. */
static int run_pass(struct run *r, const struct replay_trace *t, struct replay_result *out)
{
	int rc = 0;
	double t0 = now_seconds();

	for (unsigned k = 0; k < r->copies && rc == 0; k++) {
		if (k)
			run_next(r, r->pass, k);
		rc = run_events(r, t);
	}
	out->seconds = now_seconds() - t0;
	run_sample(r);
	return rc;
}

/* The process's resident bytes (/proc/self/statm), 0 if unreadable. */
static uint64_t run_rss(void)
{
	unsigned long size, resident;
	FILE *f = fopen("/proc/self/statm", "r");
	int n;

	if (!f)
		return 0;
	n = fscanf(f, "%lu %lu", &size, &resident);
	fclose(f);
	return n == 2 ? (uint64_t)resident * (uint64_t)sysconf(_SC_PAGESIZE) : 0;
}

int replay_run_opts(const struct impl *impl, const struct replay_trace *t,
		    const struct replay_opts *opts, struct replay_result *out)
{
	if (!impl || !t || !opts || !out)
		return -EINVAL;
	memset(out, 0, sizeof(*out));
	if (!impl->walk || !impl->create || !impl->destroy || !impl->stats || !impl->add ||
	    !impl->remove || !impl->rename || !impl->rmdir || !impl->invalidate_dir)
		return -EOPNOTSUPP;
	unsigned passes = opts->passes ? opts->passes : 1;

	struct run r = { .t = t,
			 .impl = impl,
			 .res = out,
			 .span = t->nobjs,
			 .copies = opts->copies ? opts->copies : 1,
			 .opts = opts };
	if (run_alloc_state(&r, t) < 0)
		return -ENOMEM;

	struct impl_config cfg = {
		.memory_limit = opts->memory_limit,
		.root = ROOT,
		.backend = &run_backend,
		.hash_key = { opts->hash_key[0], opts->hash_key[1] },
		.no_reclaim_thread = opts->no_reclaim_thread,
	};
	errno = 0;
	r.c = impl->create(&cfg);
	if (!r.c) {
		int e = errno ? -errno : -ENOMEM;
		free(r.cur);
		free(r.parent);
		free(r.buf);
		return e;
	}

	int rc = 0;
	uint64_t wrong = 0, cache_errors = 0, bmax = 0;
	char first[sizeof(out->first_wrong)] = "";
	for (unsigned p = 0; p < passes && rc == 0; p++) {
		if (p) {
			/* wrong, first_wrong, cache_errors, bytes_used_max and
			 * reset_calls cover every pass; the rest is the last one's. */
			wrong += out->wrong;
			cache_errors += out->cache_errors;
			if (out->bytes_used_max > bmax)
				bmax = out->bytes_used_max;
			if (!first[0])
				memcpy(first, out->first_wrong, sizeof(first));
			uint64_t resets = out->reset_calls;
			memset(out, 0, sizeof(*out));
			out->reset_calls = resets;
			run_next(&r, p, 0);
		}
		rc = run_pass(&r, t, out);
	}
	out->wrong += wrong;
	out->cache_errors += cache_errors;
	if (first[0])
		memcpy(out->first_wrong, first, sizeof(first));
	if (bmax > out->bytes_used_max)
		out->bytes_used_max = bmax;
	out->passes = passes;
	out->copies = r.copies;
	out->syscalls_parsed = t->sum.syscalls_parsed;
	out->lines_skipped = t->sum.lines_skipped;
	out->rss_end = run_rss();

	impl->destroy(r.c);
	free(r.cur);
	free(r.parent);
	free(r.buf);
	return rc;
}

