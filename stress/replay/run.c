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
 *    pass for a later one.  Several lanes (--copies N of a trace, and the
 *    traces of a mix, replay_run_mix) are separate process trees: lane k's
 *    tree hangs under the name "c<k>" of a root of its own (ino 1), its
 *    objects have inos of their own (run_gen), its absolute paths and
 *    symlink targets are rewritten to start with "/c<k>", and its events
 *    are interleaved with the other lanes' in an order shuffled from the
 *    seed (each lane's own order kept), so every lane's entries stay live
 *    and a limit binds once the lanes' footprint passes it (the project's
 *    traces alone hold ~300 KB).  A lookup whose model walk climbs ".."
 *    above its lane's root (the log's "/" is its own parent, the lane's
 *    is not) counts as unmodelled.  The pids, cwds and fds of each lane are
 *    its own (the model resolved them when it was built).
 *    Measured besides hits and backend calls: the components each walk
 *    looks up (the model walk's names; per-component hit ratio = 1 -
 *    backend lookups / components), the backend's lookups by answer
 *    (positive, negative), the entries held over the last pass (sampled),
 *    and, on request, the component stream recorded for Belady's optimum
 *    (stress/replay/optimum.c).  A mutation the cache fails (-ENOMEM) makes it
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
#include "stress/stress.h"

#define SAMPLE_EVERY 64 /* impl->stats every this many events */
#define SUPER ROOT	/* with lanes, the root they hang under (ino 1) */
#define KEY_PREFIX 0x40000000u /* a step's id: a lane's "c<k>" in the root */
#define KEY_NAME 0x80000000u   /* a step's id: a name no slot holds (its hash) */

/* ---------------------------------------------------------------------- */
/* Replaying. */

/* One process tree: a trace's copy, its store state and its place. */
struct lane {
	const struct replay_trace *t;
	uint32_t *cur;	  /* object per slot (0: absent) */
	uint32_t *parent; /* parent per directory object */
	unsigned index;	  /* its number: name "c<index>" in the root, with lanes */
	size_t next;	  /* its next event in this pass */
	char prefix[16];  /* "/c<index>" with lanes, else "" */
	size_t plen;
};

/*
 * A replay's store: the model tree's state now, per lane.  Invariant between
 * events: the cache was told every change, so each of its answers is the
 * store's (cur, parent) as of some moment since the name was last changed.
 */
struct run {
	const struct impl *impl;
	void *c;
	struct replay_result *res;
	struct lane *lanes;
	unsigned nlanes;
	bool prefixed;	 /* nlanes > 1: lanes hang under their own root names */
	struct lane *ln; /* the lane whose event is replayed now */
	uint32_t *sched; /* a pass's events: the lane of each, in order */
	size_t nsched;
	uint64_t rng;
	char *buf;  /* UDC_PATH_MAX + 1: the model walk's spliced paths */
	char *path; /* UDC_PATH_MAX + 1: a lane's rewritten path */
	unsigned pass;
	uint64_t span; /* inos: id + generation * span (run_gen) */
	const struct replay_opts *opts;
	uint64_t calls, links, positive, negative; /* backend calls in the current walk */
	uint64_t steps, neg_steps;		   /* the current model walk's names */
	uint64_t since_sample, done;		   /* events: since a sample, this pass */
	uint64_t *keys; /* the recorded component stream (opts->optimum_entries) */
	size_t nkeys, capkeys, keys_from;
	bool keys_failed;
};

/* The generation of object o's ino now, in lane ln: objects that exist
 * before the log keep theirs in every pass; objects the log makes get a
 * new one in each pass.  With one lane: 0 for the originals, the pass for
 * the log's own; with lanes, 1 + that * nlanes + the lane's index (0 is
 * the root's own generation). */
static uint64_t run_gen(const struct run *r, const struct lane *ln, uint32_t o)
{
	uint64_t g = ln->t->objs[o].flags & OBJ_ORIGINAL ? 0 : r->pass;

	return g * r->nlanes + ln->index + r->prefixed;
}

/* The ino of lane ln's object o now; with one lane its root is the cache's. */
static udc_ino lane_ino(const struct run *r, const struct lane *ln, uint32_t o)
{
	if (o == ROOT && !r->prefixed)
		return ROOT;
	return o + run_gen(r, ln, o) * r->span;
}

/* The ino of object o of the lane replayed now. */
static udc_ino run_ino(const struct run *r, uint32_t o)
{
	return lane_ino(r, r->ln, o);
}

/* The object with ino i now in the lane replayed now, or 0 (with lanes, the
 * root they hang under is no lane's object). */
static uint32_t run_obj(const struct run *r, udc_ino i)
{
	if (i == UDC_INO_NONE)
		return 0;
	uint64_t o = (i - 1) % r->span + 1, gen = (i - 1) / r->span;
	if (o >= r->ln->t->nobjs)
		return 0;
	if (o == ROOT && !r->prefixed)
		return gen == 0 ? ROOT : 0;
	return gen == run_gen(r, r->ln, (uint32_t)o) ? (uint32_t)o : 0;
}

/* What the backend answers for object o in this pass. */
static struct udc_attr run_attr(const struct run *r, uint32_t o)
{
	struct udc_attr a = { .ino = run_ino(r, o), .type = r->ln->t->objs[o].type };
	return a;
}

/* With lanes, the root they hang under: "c<k>" names lane k's root. */
static int run_lookup_super(const struct run *r, const char *name, size_t len,
			    struct udc_attr *out)
{
	char *end;

	if (len == 2 && name[0] == '.' && name[1] == '.') {
		*out = (struct udc_attr){ .ino = SUPER, .type = UDC_TYPE_DIR };
		return 0;
	}
	if (len < 2 || len > 11 || name[0] != 'c' || name[1] < '0' || name[1] > '9')
		return -ENOENT;
	char num[12];
	memcpy(num, name + 1, len - 1);
	num[len - 1] = '\0';
	unsigned long k = strtoul(num, &end, 10);
	if (*end || k >= r->nlanes || (len > 2 && name[1] == '0'))
		return -ENOENT;
	*out = (struct udc_attr){ .ino = lane_ino(r, &r->lanes[k], ROOT), .type = UDC_TYPE_DIR };
	return 0;
}

/* Name in directory dir, from the store of the lane replayed now. */
static int run_lookup_store(const struct run *r, udc_ino dir, const char *name, size_t len,
			    struct udc_attr *out)
{
	const struct replay_trace *t = r->ln->t;

	if (r->prefixed && dir == SUPER)
		return run_lookup_super(r, name, len, out);
	uint32_t d = run_obj(r, dir);
	if (!d)
		return -ESTALE;
	if (t->objs[d].type != UDC_TYPE_DIR)
		return -ENOTDIR;
	if (len == 2 && name[0] == '.' && name[1] == '.') {
		if (d == ROOT && r->prefixed)
			*out = (struct udc_attr){ .ino = SUPER, .type = UDC_TYPE_DIR };
		else
			*out = run_attr(r, r->ln->parent[d]);
		return 0;
	}
	uint32_t s = slot_find(t, d, name, len);
	if (s == NONE || !r->ln->cur[s])
		return -ENOENT;
	*out = run_attr(r, r->ln->cur[s]);
	return 0;
}

/* Backend: name in directory dir, counted by answer. */
static int run_lookup(void *ctx, udc_ino dir, const char *name, size_t len, struct udc_attr *out)
{
	struct run *r = ctx;
	int rc = run_lookup_store(r, dir, name, len, out);

	r->calls++;
	r->positive += rc == 0;
	r->negative += rc == -ENOENT;
	return rc;
}

/* Backend: a symlink's target (an absolute one under the lane's prefix). */
static ssize_t run_readlink(void *ctx, udc_ino ino, char *buf, size_t size)
{
	struct run *r = ctx;
	uint32_t o = run_obj(r, ino);
	char synth[24];

	r->calls++;
	r->links++;
	if (!o)
		return -ESTALE;
	const struct robj *ob = &r->ln->t->objs[o];
	if (ob->type != UDC_TYPE_SYMLINK)
		return -EINVAL;
	const char *tg = synth;
	size_t n, p = 0;
	if (ob->flags & OBJ_SYNTH) {
		n = synth_target(o, synth);
	} else {
		tg = r->ln->t->str + ob->target;
		n = ob->tlen;
	}
	if (n && tg[0] == '/') {
		p = r->ln->plen < size ? r->ln->plen : size;
		memcpy(buf, r->ln->prefix, p);
	}
	if (n > size - p)
		n = size - p;
	memcpy(buf + p, tg, n);
	return (ssize_t)(p + n);
}

static const struct udc_backend run_backend = {
	.lookup = run_lookup,
	.readlink = run_readlink,
};

/* Read impl->stats: the bytes_used maximum, the entries held over the pass
 * (their sums for the means, the series) and the end state. */
static void run_sample(struct run *r)
{
	struct replay_result *res = r->res;
	struct udc_stats st;

	memset(&st, 0, sizeof(st));
	st.size = sizeof(st);
	r->impl->stats(r->c, &st);
	if (r->opts->sample)
		r->opts->sample(r->opts->sample_arg, r->c, &st);
	uint64_t entries = st.nr_positive + st.nr_negative;
	if (st.bytes_used > res->bytes_used_max)
		res->bytes_used_max = st.bytes_used;
	if (entries > res->entries_max)
		res->entries_max = entries;
	res->samples++;
	res->entries_sum += entries;
	res->negatives_sum += st.nr_negative;
	res->dirs_sum += st.nr_dirs;
	res->bytes_used_sum += st.bytes_used;
	size_t k = r->nsched ? (size_t)(r->done * REPLAY_SERIES / r->nsched) : 0;
	if (k < REPLAY_SERIES && !res->entries_series[k])
		res->entries_series[k] = entries;
	res->bytes_used_end = st.bytes_used;
	res->nr_negative_end = st.nr_negative;
	res->nr_positive_end = st.nr_positive;
	res->evictions_end = st.evictions;
	res->promoted_end = st.entries_promoted;
	res->refaults_end = st.refaults;
	res->declined_end = st.negatives_declined;
}

/* The cache refused a change: make it forget the name instead (and, if that
 * fails too, the directory). */
static void run_forget(struct run *r, uint32_t s)
{
	const struct rslot *sl = &r->ln->t->slots[s];
	udc_ino d = run_ino(r, sl->dir);

	if (r->impl->remove(r->c, d, r->ln->t->str + sl->name, sl->nlen))
		r->impl->invalidate_dir(r->c, d);
}

/* Tell the cache slot s now names o (0: nothing). */
static void run_tell(struct run *r, uint32_t s, uint32_t o)
{
	const struct rslot *sl = &r->ln->t->slots[s];
	udc_ino d = run_ino(r, sl->dir);
	int rc;

	if (o) {
		struct udc_attr a = run_attr(r, o);
		rc = r->impl->add(r->c, d, r->ln->t->str + sl->name, sl->nlen, &a);
	} else {
		rc = r->impl->remove(r->c, d, r->ln->t->str + sl->name, sl->nlen);
	}
	if (rc) {
		r->res->cache_errors++;
		run_forget(r, s);
	}
}

/* Directory o was removed from slot s (or replaced there): its names go. */
static void run_kill(struct run *r, uint32_t o)
{
	const struct replay_trace *t = r->ln->t;

	for (uint32_t s = t->objs[o].slots; s != NONE; s = t->slots[s].next)
		r->ln->cur[s] = 0;
}

/* Tell the cache directory o, named by slot s, was removed; if it refuses,
 * make it forget the name and everything in o. */
static void run_rmdir(struct run *r, uint32_t s, uint32_t o)
{
	const struct rslot *sl = &r->ln->t->slots[s];

	if (r->impl->rmdir(r->c, run_ino(r, sl->dir), r->ln->t->str + sl->name, sl->nlen,
			   run_ino(r, o))) {
		r->res->cache_errors++;
		run_forget(r, s);
		r->impl->invalidate_dir(r->c, run_ino(r, o));
	}
}

/* Apply mutation e to the store and tell the cache. */
static void run_mutation(struct run *r, const struct revent *e)
{
	const struct replay_trace *t = r->ln->t;
	uint32_t *cur = r->ln->cur, s = e->slot, o;

	switch (e->kind) {
	case REPLAY_CREATE:
	case REPLAY_MKDIR:
	case REPLAY_LINK:
		o = cur[s];
		if (o && t->objs[o].type == UDC_TYPE_DIR && o != e->obj) {
			run_rmdir(r, s, o);
			run_kill(r, o);
		}
		cur[s] = e->obj;
		if (t->objs[e->obj].type == UDC_TYPE_DIR)
			r->ln->parent[e->obj] = t->slots[s].dir;
		run_tell(r, s, e->obj);
		break;
	case REPLAY_UNLINK:
		cur[s] = 0;
		run_tell(r, s, 0);
		break;
	case REPLAY_RMDIR:
		o = cur[s];
		cur[s] = 0;
		if (o) {
			run_rmdir(r, s, o);
			run_kill(r, o);
		} else {
			run_tell(r, s, 0);
		}
		break;
	case REPLAY_RENAME: {
		uint32_t s2 = e->slot2, x = cur[s], y = cur[s2];
		const struct rslot *a = &t->slots[s], *b2 = &t->slots[s2];
		if (!x || x == y)
			break;
		cur[s] = 0;
		cur[s2] = x;
		if (t->objs[x].type == UDC_TYPE_DIR)
			r->ln->parent[x] = b2->dir;
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

/* A name no slot holds, as a step's id: FNV-1a, 31 bits. */
static uint32_t name_hash(const char *name, size_t len)
{
	uint32_t h = 2166136261u;

	for (size_t i = 0; i < len; i++)
		h = (h ^ (uint8_t)name[i]) * 16777619u;
	return h & ~KEY_NAME;
}

/* The model walk's step (struct wstate): count it, and record its key
 * (the directory's ino now and the name) for the optimum.  dir 0: the walk
 * started at the root, which with lanes is the name "c<k>" in theirs. */
static void run_step(void *arg, uint32_t dir, uint32_t slot, const struct path_comp *comp,
		     bool found)
{
	struct run *r = arg;
	udc_ino d = SUPER;
	uint64_t id = KEY_PREFIX | r->ln->index;

	if (dir == 0 && !r->prefixed)
		return;
	if (dir) {
		d = run_ino(r, dir);
		id = slot != NONE ? slot
				  : KEY_NAME | name_hash(comp->name, comp->len);
	}
	r->steps++;
	r->neg_steps += !found;
	if (!r->opts->optimum_entries || r->keys_failed)
		return;
	if (r->nkeys == r->capkeys) {
		size_t nc = r->capkeys ? r->capkeys * 2 : 1 << 16;
		uint64_t *k = realloc(r->keys, nc * sizeof(*k));
		if (!k) {
			r->keys_failed = true;
			return;
		}
		r->keys = k;
		r->capkeys = nc;
	}
	r->keys[r->nkeys++] = mix64(d * 0x9e3779b97f4a7c15ull + id);
}

/* Lookup e's path as the lane's cache walk takes it: absolute paths under
 * the lane's prefix; NULL if that makes it too long (*len its length). */
static const char *run_path(struct run *r, const struct revent *e, size_t *len)
{
	const char *path = r->ln->t->str + e->path;

	*len = e->plen;
	if (path[0] != '/' || !r->ln->plen)
		return path;
	if (r->ln->plen + e->plen > UDC_PATH_MAX)
		return NULL;
	memcpy(r->path, r->ln->prefix, r->ln->plen);
	memcpy(r->path + r->ln->plen, path, e->plen);
	*len = r->ln->plen + e->plen;
	return r->path;
}

/* Replay lookup e: model first, then the cache. */
static int run_lookup_event(struct run *r, const struct revent *e)
{
	const struct replay_trace *t = r->ln->t;
	struct replay_result *res = r->res;
	const char *path = t->str + e->path;
	/* A replay walk (no builder) only reads the trace. */
	struct wstate w = { .t = (struct replay_trace *)t,
			    .cur = r->ln->cur,
			    .parent = r->ln->parent,
			    .buf = r->buf,
			    .step = run_step,
			    .step_arg = r };
	size_t keys_mark = r->nkeys, clen;

	r->steps = r->neg_steps = 0;
	struct wres m = walk_path(&w, e->start, path, e->plen, e->follow);
	const char *cpath = run_path(r, e, &clen);

	res->events++;
	if (m.err != e->expect || (r->prefixed && w.root_dotdots) || !cpath) {
		res->unmodelled++;
		r->nkeys = keys_mark;
		return 0;
	}
	struct udc_call call = { .ctx = r };
	struct udc_attr a = { 0 };
	udc_ino start = path[0] == '/' ? (r->prefixed ? SUPER : ROOT) : run_ino(r, e->start);
	r->calls = r->links = r->positive = r->negative = 0;
	int rc = r->impl->walk(r->c, start, cpath, clen, e->follow ? UDC_WALK_FOLLOW : 0, &call,
			       &a);
	if (rc == -EOPNOTSUPP)
		return -EOPNOTSUPP;
	res->walks++;
	res->backend_calls += r->calls;
	res->backend_readlinks += r->links;
	res->backend_positive += r->positive;
	res->backend_negative += r->negative;
	res->components += r->steps;
	res->components_negative += r->neg_steps;
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
				 "pass %u lane %u line %" PRIu32 " %s(\"%.80s\"%s): cache %s ino %" PRIu64
				 " type %u, model %s ino %" PRIu64 " type %u",
				 r->pass + 1, r->ln->index, e->line, sys_table[e->sys].name, path,
				 e->follow ? "" : ", nofollow", err_name(rc), (uint64_t)a.ino,
				 (unsigned)a.type, err_name(m.err),
				 m.err ? (uint64_t)0 : (uint64_t)run_ino(r, m.obj),
				 m.err ? 0u : (unsigned)t->objs[m.obj].type);
		res->wrong++;
	}
	return 0;
}

/*
 * Between passes: put the lane replayed now back to the log's start and
 * tell the cache every difference, as an embedder would after restoring a
 * snapshot.  Directories the log made are removed (rmdir); names of
 * directories that existed before the log get their first state back (add
 * or remove).
 */
static void run_reset(struct run *r)
{
	struct lane *ln = r->ln;
	const struct replay_trace *t = ln->t;

	for (size_t s = 0; s < t->nslots; s++) {
		const struct rslot *sl = &t->slots[s];
		uint32_t now = ln->cur[s], then = sl->init;
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
		ln->cur[s] = t->slots[s].init;
	for (size_t o = 0; o < t->nobjs; o++)
		ln->parent[o] = t->objs[o].init_parent ? t->objs[o].init_parent : ROOT;
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

/* The lanes' state tables (every slot and object as its trace begins) and
 * the pass's schedule: nt traces, copies lanes each; -ENOMEM. */
static int lanes_alloc(struct run *r, const struct replay_trace *const *t, unsigned nt,
		     unsigned copies)
{
	r->nlanes = nt * copies;
	r->prefixed = r->nlanes > 1;
	r->lanes = calloc(r->nlanes, sizeof(*r->lanes));
	r->buf = malloc(UDC_PATH_MAX + 1);
	r->path = malloc(UDC_PATH_MAX + 1);
	if (!r->lanes || !r->buf || !r->path)
		return -ENOMEM;
	for (unsigned k = 0; k < r->nlanes; k++) {
		struct lane *ln = &r->lanes[k];
		ln->t = t[k / copies];
		ln->index = k;
		if (r->prefixed)
			ln->plen = (size_t)snprintf(ln->prefix, sizeof(ln->prefix), "/c%u", k);
		ln->cur = malloc((ln->t->nslots ? ln->t->nslots : 1) * sizeof(*ln->cur));
		ln->parent = malloc(ln->t->nobjs * sizeof(*ln->parent));
		if (!ln->cur || !ln->parent)
			return -ENOMEM;
		r->ln = ln;
		for (size_t s = 0; s < ln->t->nslots; s++)
			ln->cur[s] = ln->t->slots[s].init;
		for (size_t o = 0; o < ln->t->nobjs; o++)
			ln->parent[o] = ln->t->objs[o].init_parent ? ln->t->objs[o].init_parent
								   : ROOT;
		r->nsched += ln->t->nev;
		if (ln->t->nobjs >= r->span)
			r->span = ln->t->nobjs + 1;
	}
	r->sched = malloc((r->nsched ? r->nsched : 1) * sizeof(*r->sched));
	return r->sched ? 0 : -ENOMEM;
}

static void lanes_free(struct run *r)
{
	for (unsigned k = 0; r->lanes && k < r->nlanes; k++) {
		free(r->lanes[k].cur);
		free(r->lanes[k].parent);
	}
	free(r->lanes);
	free(r->sched);
	free(r->buf);
	free(r->path);
	free(r->keys);
}

/* A pass's order: each lane's events in their order, the lanes'
 * interleaved at random (a Fisher-Yates shuffle of the lane numbers). */
static void run_schedule(struct run *r)
{
	size_t n = 0;

	for (unsigned k = 0; k < r->nlanes; k++) {
		r->lanes[k].next = 0;
		for (size_t i = 0; i < r->lanes[k].t->nev; i++)
			r->sched[n++] = k;
	}
	for (size_t i = n; i > 1; i--) {
		size_t j = (size_t)rand_below(&r->rng, i);
		uint32_t x = r->sched[i - 1];
		r->sched[i - 1] = r->sched[j];
		r->sched[j] = x;
	}
}

/* One pass: every lane's events, interleaved; 0, or a lookup event's error. */
static int run_pass(struct run *r, struct replay_result *out)
{
	int rc = 0;
	double t0 = now_seconds();

	run_schedule(r);
	r->keys_from = r->nkeys;
	r->done = 0;
	for (size_t i = 0; i < r->nsched && rc == 0; i++) {
		r->ln = &r->lanes[r->sched[i]];
		const struct revent *e = &r->ln->t->ev[r->ln->next++];
		if (e->kind == REPLAY_LOOKUP)
			rc = run_lookup_event(r, e);
		else
			run_mutation(r, e);
		r->done++;
		if (++r->since_sample >= SAMPLE_EVERY) {
			r->since_sample = 0;
			run_sample(r);
		}
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

/* The passes, with what covers every pass kept across them; 0 or an error. */
static int run_passes(struct run *r, unsigned passes, struct replay_result *out)
{
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
			for (unsigned k = 0; k < r->nlanes; k++) {
				r->ln = &r->lanes[k];
				run_reset(r);
			}
			r->pass = p;
		}
		rc = run_pass(r, out);
	}
	out->wrong += wrong;
	out->cache_errors += cache_errors;
	if (first[0])
		memcpy(out->first_wrong, first, sizeof(first));
	if (bmax > out->bytes_used_max)
		out->bytes_used_max = bmax;
	return rc;
}

int replay_run_mix(const struct impl *impl, const struct replay_trace *const *t, unsigned nt,
		   const struct replay_opts *opts, struct replay_result *out)
{
	if (!impl || !t || !nt || !opts || !out)
		return -EINVAL;
	memset(out, 0, sizeof(*out));
	if (!impl->walk || !impl->create || !impl->destroy || !impl->stats || !impl->add ||
	    !impl->remove || !impl->rename || !impl->rmdir || !impl->invalidate_dir)
		return -EOPNOTSUPP;
	unsigned passes = opts->passes ? opts->passes : 1;
	unsigned copies = opts->copies ? opts->copies : 1;
	if ((uint64_t)nt * copies > REPLAY_MAX_LANES)
		return -EINVAL;

	/* | 1: xorshift64* must not start at 0 */
	struct run r = { .impl = impl, .res = out, .opts = opts, .rng = mix64(opts->seed) | 1 };
	if (lanes_alloc(&r, t, nt, copies) < 0) {
		lanes_free(&r);
		return -ENOMEM;
	}

	struct impl_config cfg = {
		.memory_limit = opts->memory_limit,
		.max_entries = opts->max_entries,
		.root = ROOT,
		.backend = &run_backend,
		.hash_key = { opts->hash_key[0], opts->hash_key[1] },
		.no_reclaim_thread = opts->no_reclaim_thread,
	};
	errno = 0;
	r.c = impl->create(&cfg);
	if (!r.c) {
		int e = errno ? -errno : -ENOMEM;
		lanes_free(&r);
		return e;
	}

	int rc = run_passes(&r, passes, out);
	out->passes = passes;
	out->copies = copies;
	out->lanes = r.nlanes;
	for (unsigned k = 0; k < nt; k++) {
		out->syscalls_parsed += t[k]->sum.syscalls_parsed;
		out->lines_skipped += t[k]->sum.lines_skipped;
	}
	out->rss_end = run_rss();
	if (r.impl->bytes_parts) {
		r.impl->bytes_parts(r.c, &out->parts);
		out->has_parts = true;
	}
	if (opts->optimum_entries && rc == 0) {
		out->optimum_misses = r.keys_failed ? UINT64_MAX
						    : replay_optimum(r.keys, r.nkeys, r.keys_from,
								     opts->optimum_entries);
		if (out->optimum_misses == UINT64_MAX)
			rc = -ENOMEM;
		out->optimum_components = r.nkeys - r.keys_from;
	}

	impl->destroy(r.c);
	lanes_free(&r);
	return rc;
}

int replay_run_opts(const struct impl *impl, const struct replay_trace *t,
		    const struct replay_opts *opts, struct replay_result *out)
{
	return replay_run_mix(impl, &t, 1, opts, out);
}
