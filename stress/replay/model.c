/* SPDX-License-Identifier: MIT */
/*
 * stress/replay/model.c - the replay's model tree: objects, slots (names),
 * and the walk over them, which learns from the log while the model is
 * built and answers from it in the replay.  The second of the replay's
 * three programs (parse, model, run); calls.c turns each call into facts
 * for it, load.c drives the build.
 *
 * Owns: the objects, slots and strings of a struct replay_trace while
 * replay_load() builds it (every allocation through xrealloc(), which
 * longjmp()s to build() on failure).
 *
 * 2. Building the model (a first pass over the calls, in log order).  The
 *    model is a tree of objects (files, directories, symlinks, others) and
 *    names: a name is a (directory object, component) slot whose state is
 *    known (an object or absent) or unknown (never seen).  Each call's
 *    outcome is turned into facts about the slots its path walks through,
 *    walking with udc_walk's rules ("." , physical "..", "//", trailing '/',
 *    symlinks in the middle always and at the end when the call follows
 *    them, 40 at most):
 *     - success: every unknown slot on the way exists, a directory in the
 *       middle; the last one's type comes from the call when it says
 *       (st_mode, O_DIRECTORY, chdir, mkdir, execve, readlink => symlink
 *       with the result as target, fstat of the returned fd) and is
 *       otherwise a guessed regular file that becomes a directory if a
 *       later call walks through it.  A name found by a call that follows
 *       symlinks may later prove to be one (readlink succeeds on it): the
 *       object found moves to the link's target and a symlink takes its
 *       name (a retroactive fix, so the earlier calls still succeed).
 *     - ENOENT: if every slot before the last is known to exist the last
 *       is absent; otherwise the first unknown slot stays unknown (some
 *       component is missing, the log does not say which) and, like every
 *       slot never proved to exist, is absent in the model.
 *     - ENOTDIR: an unknown slot just before the last name (or the last,
 *       with a trailing '/') is a regular file, unknown ones before it
 *       directories.
 *     - EEXIST (mkdir, O_CREAT|O_EXCL, symlink, mknod), EISDIR, ENXIO,
 *       ENOTEMPTY, EINVAL from readlink (exists, not a symlink): the object
 *       exists.  Other failures (EACCES, EPERM, ELOOP, link's EEXIST...)
 *       are skipped.
 *    The first time a slot of a directory that existed before the log is
 *    learnt, that is also its state at the start (the log changes a slot
 *    only through calls that make it known first).  Mutations change the
 *    current state only: mkdir, O_CREAT (a create when the name is known
 *    absent or O_EXCL; an unknown name opened with O_CREAT alone is taken
 *    as existing), creat, mknod, symlink, link, unlink, rmdir (and unlinkat
 *    AT_REMOVEDIR), rename (RENAME_EXCHANGE is skipped).  A directory made
 *    during the log is complete: its unknown names are absent.  A call the
 *    model contradicts is counted (summary.conflicts) and changes nothing.
 *    Per pid: a cwd and an fd table.  The first pid starts in the directory
 *    of its first getcwd() if no chdir() precedes it, else in a synthetic
 *    "/cwd"; any other pid starts where its own first getcwd() (before any
 *    chdir() of its own) says, else inherits the cwd and fds of the pid of
 *    the previous line (the first pid's if that one has exited).  fds come
 *    from open/openat/creat results ("strong"); inherited ones, and all of
 *    a pid's after an execve, are "weak" (may be stale).  fts (rm -r) opens
 *    a directory, fstats it and F_DUPFDs it to a higher fd, which strace -e
 *    %file does not show: so a higher fd used as a dirfd right after a
 *    directory was opened (no open between) is taken as its dup if it is
 *    unknown, or weak and the new directory fits the call better than the
 *    old binding (its first name is known there, with the type the call
 *    needs).  A call relative to an fd still unknown is skipped.
 *
 * Locking: none (one replay_load() per builder; a trace is read-only
 * once built, and the replay's walk reads it only).
 * Ordering: none.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/path.h"
#include "stress/replay/internal.h"



/* realloc() of n elements of size; out of memory longjmp()s to build(). */
void *xrealloc(struct builder *b, void *p, size_t n, size_t size)
{
	if (size && n > SIZE_MAX / size) {
		b->err = -ENOMEM;
		longjmp(b->fail, 1);
	}
	void *q = realloc(p, (n && size) ? n * size : 1);
	if (!q) {
		b->err = -ENOMEM;
		longjmp(b->fail, 1);
	}
	return q;
}


/* The model outgrew its 32-bit offsets: longjmp() to build() with -EFBIG. */
void too_big(struct builder *b)
{
	b->err = -EFBIG;
	longjmp(b->fail, 1);
}

/*
 * The model contradicts a call: count it (its lookups are then counted
 * unmodelled at replay).  With -DREPLAY_DEBUG, say where on stderr.
 */
void conflict_at(struct builder *b, const char *file, int where)
{
	b->t->sum.conflicts++;
#ifdef REPLAY_DEBUG
	fprintf(stderr, "replay: conflict at log line %" PRIu32 " (%s:%d)\n", b->line, file, where);
#else
	(void)file;
	(void)where;
#endif
}

/* Copy s (len bytes) into t->str, NUL-terminated; its offset. */
uint32_t str_add(struct builder *b, const char *s, size_t len)
{
	struct replay_trace *t = b->t;

	if (t->nstr + len + 1 > UINT32_MAX)
		too_big(b);
	if (t->nstr + len + 1 > t->capstr) {
		size_t nc = t->capstr ? t->capstr : 4096;
		while (nc < t->nstr + len + 1)
			nc *= 2;
		t->str = xrealloc(b, t->str, nc, 1);
		t->capstr = nc;
	}
	uint32_t off = (uint32_t)t->nstr;
	memcpy(t->str + off, s, len);
	t->str[off + len] = '\0';
	t->nstr += len + 1;
	return off;
}

/* Make sure the scratch buffer *buf holds n bytes. */
char *scratch(struct builder *b, char **buf, size_t *cap, size_t n)
{
	if (n > *cap) {
		*buf = xrealloc(b, *buf, n, 1);
		*cap = n;
	}
	return *buf;
}

/* A new object (no name yet); its id. */
uint32_t obj_new(struct builder *b, uint8_t type, uint8_t flags)
{
	struct replay_trace *t = b->t;

	if (t->nobjs >= UINT32_MAX / 4)
		too_big(b);
	GROW(b, t->objs, t->nobjs, t->capobjs);
	uint32_t id = (uint32_t)t->nobjs++;
	t->objs[id] = (struct robj){ .type = type, .flags = flags, .home = NONE, .slots = NONE };
	return id;
}

/* FNV-1a of (dir, name), for the slot table (not keyed: the log is trusted). */
static uint64_t name_hash(uint32_t dir, const char *name, size_t len)
{
	uint64_t h = 0xcbf29ce484222325ull ^ ((uint64_t)dir * 0x9e3779b97f4a7c15ull);

	for (size_t i = 0; i < len; i++) {
		h ^= (unsigned char)name[i];
		h *= 0x100000001b3ull;
	}
	return h ^ (h >> 29);
}

/* The slot (dir, name), or NONE. */
uint32_t slot_find(const struct replay_trace *t, uint32_t dir, const char *name, size_t len)
{
	if (!t->hsize)
		return NONE;
	uint32_t s = t->hash[name_hash(dir, name, len) & (t->hsize - 1)];
	for (; s != NONE; s = t->slots[s].hnext) {
		const struct rslot *sl = &t->slots[s];
		if (sl->dir == dir && sl->nlen == len && memcmp(t->str + sl->name, name, len) == 0)
			return s;
	}
	return NONE;
}

/* Double the slot hash table (or make it) and rehash every slot. */
static void hash_grow(struct builder *b)
{
	struct replay_trace *t = b->t;
	size_t n = t->hsize ? t->hsize * 2 : 1024;

	t->hash = xrealloc(b, t->hash, n, sizeof(*t->hash));
	t->hsize = n;
	for (size_t i = 0; i < n; i++)
		t->hash[i] = NONE;
	for (size_t s = 0; s < t->nslots; s++) {
		struct rslot *sl = &t->slots[s];
		size_t h = name_hash(sl->dir, t->str + sl->name, sl->nlen) & (n - 1);
		sl->hnext = t->hash[h];
		t->hash[h] = (uint32_t)s;
	}
}

/* The slot (dir, name), made (unknown, or absent in a complete directory)
 * if new.  len is 1..UDC_NAME_MAX. */
uint32_t slot_get(struct builder *b, uint32_t dir, const char *name, size_t len)
{
	struct replay_trace *t = b->t;
	uint32_t s = slot_find(t, dir, name, len);

	if (s != NONE)
		return s;
	if (t->nslots >= UINT32_MAX / 4)
		too_big(b);
	if (t->nslots >= t->hsize)
		hash_grow(b);
	uint32_t off = str_add(b, name, len);
	GROW(b, t->slots, t->nslots, t->capslots);
	s = (uint32_t)t->nslots++;
	struct rslot *sl = &t->slots[s];
	*sl = (struct rslot){ .dir = dir, .name = off, .nlen = (uint16_t)len, .next = NONE };
	sl->known = (t->objs[dir].flags & OBJ_COMPLETE) != 0;
	sl->next = t->objs[dir].slots;
	t->objs[dir].slots = s;
	size_t h = name_hash(dir, name, len) & (t->hsize - 1);
	sl->hnext = t->hash[h];
	t->hash[h] = s;
	return s;
}

/* Place object o in slot s as it was first named (parent of a directory). */
void obj_home(struct replay_trace *t, uint32_t o, uint32_t s)
{
	t->objs[o].home = s;
	t->objs[o].parent = t->slots[s].dir;
	t->objs[o].init_parent = t->slots[s].dir;
}

/* Directory d was removed (or replaced by a rename): every name in it is
 * absent from now on. */
void dir_kill(struct replay_trace *t, uint32_t d)
{
	t->objs[d].flags |= OBJ_COMPLETE;
	for (uint32_t s = t->objs[d].slots; s != NONE; s = t->slots[s].next) {
		t->slots[s].known = 1;
		t->slots[s].cur = 0;
		t->slots[s].unsure = 0;
	}
}


/* ---------------------------------------------------------------------- */
/* Walking a path, in the build (learning the model) or in the replay. */


/* The synthetic target of symlink o, into buf (>= 16 bytes); its length. */
size_t synth_target(uint32_t o, char *buf)
{
	return (size_t)sprintf(buf, "/\001L%" PRIu32, o);
}

/* o is a directory (in the build, a guessed file walked through becomes one). */
static bool walk_dir_ok(struct wstate *w, uint32_t o)
{
	struct robj *ob = &w->t->objs[o];

	if (ob->type == UDC_TYPE_DIR)
		return true;
	if (!w->b || (ob->flags & OBJ_SURE) || w->q->want == -ENOTDIR)
		return false;
	ob->type = UDC_TYPE_DIR;
	ob->flags |= OBJ_SURE;
	if (ob->home != NONE) {
		ob->parent = w->t->slots[ob->home].dir;
		ob->init_parent = ob->parent;
	}
	return true;
}

/* The object at slot s now; in the build, an unknown slot is decided from
 * the log's outcome.  0: absent (the walk stops with -ENOENT). */
static uint32_t walk_child(struct wstate *w, uint32_t dir, const struct path_comp *comp,
			   bool penult, bool follow, uint32_t *slotp)
{
	struct replay_trace *t = w->t;
	bool last = comp->last, slash_after = comp->slash_after;

	if (!w->b) {
		uint32_t s = slot_find(t, dir, comp->name, comp->len);
		*slotp = s;
		return s == NONE ? 0 : w->cur[s];
	}
	const struct kreq *q = w->q;
	uint32_t s = slot_get(w->b, dir, comp->name, comp->len);
	struct rslot *sl = &t->slots[s];
	*slotp = s;
	if (sl->known)
		return sl->cur;

	uint32_t o = 0;
	if (q->want == 0) {
		if (!last || slash_after) {
			o = obj_new(w->b, UDC_TYPE_DIR, OBJ_ORIGINAL | OBJ_SURE);
		} else if (q->place) {
			o = q->place;
		} else if (q->type == UDC_TYPE_SYMLINK) {
			o = obj_new(w->b, UDC_TYPE_SYMLINK, OBJ_ORIGINAL | OBJ_SURE);
			if (q->target && q->tlen) {
				t->objs[o].target = str_add(w->b, q->target, q->tlen);
				t->objs[o].tlen = (uint32_t)q->tlen;
			} else {
				t->objs[o].flags |= OBJ_SYNTH;
			}
		} else if (q->type != UDC_TYPE_UNKNOWN) {
			o = obj_new(w->b, q->type, OBJ_ORIGINAL | OBJ_SURE);
		} else {
			o = obj_new(w->b, UDC_TYPE_REG, OBJ_ORIGINAL);
		}
		obj_home(t, o, s);
		sl->unsure = !last || slash_after || (follow && !q->not_link);
	} else if (q->want == -ENOTDIR && (penult || (last && slash_after))) {
		o = obj_new(w->b, UDC_TYPE_REG, OBJ_ORIGINAL | OBJ_SURE); /* the non-directory */
		sl = &t->slots[s];
		obj_home(t, o, s);
	} else if (q->want == -ENOTDIR && !last) {
		o = obj_new(w->b, UDC_TYPE_DIR, OBJ_ORIGINAL | OBJ_SURE);
		sl = &t->slots[s];
		obj_home(t, o, s);
		sl->unsure = 1;
	} else if (q->want == -ENOENT && !last) {
		return 0; /* some component is missing: the log does not say which */
	}
	sl->known = 1;
	sl->init = sl->cur = o;
	return o;
}

/* Symlink o's target (in synth, >= 16 bytes, if it is synthetic) and its length. */
static size_t link_target(const struct replay_trace *t, uint32_t o, char *synth, const char **tg)
{
	const struct robj *l = &t->objs[o];

	if (l->flags & OBJ_SYNTH) {
		*tg = synth;
		return synth_target(o, synth);
	}
	*tg = t->str + l->target;
	return l->tlen;
}

/*
 * Walk path from start with udc_walk's rules (engine/walk.c): the same
 * answers, including -ENOTDIR, -ELOOP and -ENAMETOOLONG.  In the build (w->b)
 * unknown slots are decided by walk_child() and guessed files walked through
 * become directories.
 */
struct wres walk_path(struct wstate *w, uint32_t start, const char *path, size_t len,
			     bool follow)
{
	struct replay_trace *t = w->t;
	struct wres res = { .err = 0, .obj = 0, .slot = NONE };
	struct path_comp comp, then;
	char synth[24];
	unsigned nlinks = 0;
	size_t i = 0;

	res.err = path_check(path, len);
	if (res.err)
		return res;
	uint32_t cur = path[0] == '/' ? ROOT : start;
	uint32_t cur_slot = NONE;
	if (path[0] == '/' && w->step)
		w->step(w->step_arg, 0, NONE, NULL, true);
	while (path_next(path, len, &i, &comp)) {
		size_t after = comp.end; /* the next component is the last one: penult */
		bool penult = path_next(path, len, &after, &then) && then.last;

		if (comp.len > UDC_NAME_MAX) {
			res.err = -ENAMETOOLONG;
			return res;
		}
		if (!walk_dir_ok(w, cur)) {
			res.err = -ENOTDIR;
			return res;
		}
		if (name_is_dot(comp.name, comp.len)) {
			cur_slot = NONE;
			continue;
		}
		uint32_t a, s = NONE;
		if (name_is_dotdot(comp.name, comp.len)) {
			w->root_dotdots += cur == ROOT;
			a = cur == ROOT ? ROOT : w->parent ? w->parent[cur] : t->objs[cur].parent;
		} else {
			a = walk_child(w, cur, &comp, penult, follow, &s);
			if (w->step)
				w->step(w->step_arg, cur, s, &comp, a != 0);
			if (!a) {
				res.err = -ENOENT;
				return res;
			}
		}
		bool fol = !comp.last || comp.slash_after || follow;
		if (t->objs[a].type != UDC_TYPE_SYMLINK || !fol) {
			cur = a;
			cur_slot = s;
			continue;
		}
		if (++nlinks > MAX_LINKS) {
			res.err = -ELOOP;
			return res;
		}
		const char *tg;
		size_t tlen = link_target(t, a, synth, &tg);
		if (tlen == 0) {
			res.err = -ENOENT;
			return res;
		}
		size_t rest = len - comp.end;
		if (tlen + rest > UDC_PATH_MAX) {
			res.err = -ENAMETOOLONG;
			return res;
		}
		/* tg is in t->str or synth, never in w->buf; the rest may be. */
		memmove(w->buf + tlen, path + comp.end, rest);
		memcpy(w->buf, tg, tlen);
		path = w->buf;
		len = tlen + rest;
		i = 0;
		if (path[0] == '/') {
			cur = ROOT;
			if (w->step)
				w->step(w->step_arg, 0, NONE, NULL, true);
		}
		cur_slot = NONE;
	}
	if (path_wants_dir(path, len) && !walk_dir_ok(w, cur)) {
		res.err = -ENOTDIR;
		return res;
	}
	res.obj = cur;
	res.slot = cur_slot;
	return res;
}


/* ---------------------------------------------------------------------- */
/* Learning from one call's path. */



/* Symlink l's target is now known: set it; an object a following walk put
 * at its synthetic target moves to the real one. */
static void link_set_target(struct builder *b, uint32_t l, const char *tg, size_t tlen)
{
	struct replay_trace *t = b->t;
	char synth[24];
	size_t slen = synth_target(l, synth);

	t->objs[l].target = str_add(b, tg, tlen);
	t->objs[l].tlen = (uint32_t)tlen;
	t->objs[l].flags &= (uint8_t)~OBJ_SYNTH;
	uint32_t s = slot_find(t, ROOT, synth + 1, slen - 1);
	if (s == NONE || !t->slots[s].cur || t->objs[l].home == NONE)
		return;
	uint32_t o = t->slots[s].cur;
	t->slots[s].init = t->slots[s].cur = 0;
	char *copy = scratch(b, &b->tbuf, &b->tcap, tlen + 1);
	memcpy(copy, t->str + t->objs[l].target, tlen);
	struct kreq q = { .follow = true, .want = 0, .place = o };
	struct wres r = know(b, t->slots[t->objs[l].home].dir, copy, tlen, &q);
	if (!r.err && r.obj != o)
		CONFLICT(b); /* o is orphaned */
}

/*
 * readlink (or lstat's S_IFLNK) found a symlink at slot s, where a following
 * walk had put object x: make s a symlink and move x to its target, so the
 * earlier calls, which followed it, still find x.
 */
static void link_convert(struct builder *b, uint32_t s, uint32_t x, const char *tg, size_t tlen)
{
	struct replay_trace *t = b->t;
	uint32_t l = obj_new(b, UDC_TYPE_SYMLINK, OBJ_ORIGINAL | OBJ_SURE | OBJ_SYNTH);

	obj_home(t, l, s);
	t->slots[s].init = t->slots[s].cur = l;
	t->slots[s].unsure = 0;
	t->objs[x].home = NONE;
	char synth[24];
	if (tg && tlen) {
		t->objs[l].target = str_add(b, tg, tlen);
		t->objs[l].tlen = (uint32_t)tlen;
		t->objs[l].flags &= (uint8_t)~OBJ_SYNTH;
	} else {
		tlen = synth_target(l, synth);
		tg = synth;
	}
	char *copy = scratch(b, &b->tbuf, &b->tcap, tlen + 1);
	memcpy(copy, (t->objs[l].flags & OBJ_SYNTH) ? tg : t->str + t->objs[l].target, tlen);
	struct kreq q = { .follow = true, .want = 0, .place = x };
	struct wres r = know(b, t->slots[s].dir, copy, tlen, &q);
	if (!r.err && r.obj != x)
		CONFLICT(b); /* the target is another object: x is orphaned */
}

/* Apply what the log says of the final object to the model. */
void know_final(struct builder *b, const struct wres *r, const struct kreq *q)
{
	struct replay_trace *t = b->t;

	if (r->err != q->want) {
		CONFLICT(b);
		return;
	}
	if (r->err)
		return;
	uint32_t x = r->obj, s = r->slot;
	struct robj *o = &t->objs[x];
	if (q->type == UDC_TYPE_SYMLINK) {
		if (o->type == UDC_TYPE_SYMLINK) {
			if ((o->flags & OBJ_SYNTH) && q->target && q->tlen)
				link_set_target(b, x, q->target, q->tlen);
			else if (!(o->flags & OBJ_SYNTH) && q->target &&
				 (q->tlen != o->tlen ||
				  memcmp(q->target, t->str + o->target, q->tlen)))
				CONFLICT(b);
			return;
		}
		if (s != NONE && t->slots[s].unsure && (o->flags & OBJ_ORIGINAL) &&
		    t->slots[s].init == x && t->slots[s].cur == x &&
		    (o->type != UDC_TYPE_DIR || o->slots == NONE) && o->home == s) {
			link_convert(b, s, x, q->target, q->tlen);
			return;
		}
		CONFLICT(b);
		return;
	}
	if (q->type != UDC_TYPE_UNKNOWN) {
		if (o->type == q->type) {
			o->flags |= OBJ_SURE;
		} else if (!(o->flags & OBJ_SURE)) {
			o->type = q->type;
			o->flags |= OBJ_SURE;
			if (q->type == UDC_TYPE_DIR && o->home != NONE) {
				o->parent = t->slots[o->home].dir;
				o->init_parent = o->parent;
			}
		} else {
			CONFLICT(b);
		}
	}
	if (q->not_link && s != NONE) {
		if (o->type == UDC_TYPE_SYMLINK && q->follow == false)
			CONFLICT(b);
		else
			t->slots[s].unsure = 0;
	}
}

/* Learn from a walk of path whose outcome the log gives in q. */
struct wres know(struct builder *b, uint32_t start, const char *path, size_t len,
			const struct kreq *q)
{
	struct wstate w = { .t = b->t, .b = b, .q = q, .buf = b->walkbuf };
	struct wres r = walk_path(&w, start, path, len, q->follow);

	know_final(b, &r, q);
	return r;
}

