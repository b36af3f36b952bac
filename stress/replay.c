/* SPDX-License-Identifier: MIT */
/*
 * stress/replay.c - replay real `strace -f` logs against a name cache.
 *
 * Owns: struct replay_trace (a parsed log: the events to replay, and the
 * model tree built from the whole log) and, inside replay_run_opts(), the
 * model store's state and the cache under test.
 *
 * 1. Reading (replay_load).  The whole log is read into memory; a log that
 *    starts with the gzip magic is read through a `gzip -dc` child (no zlib
 *    dependency).  A line is `PID syscall(args) = result` ("[pid N]" and a
 *    leading timestamp are accepted too; no pid is pid 0).  `<unfinished
 *    ...>` and `<... NAME resumed>` halves are joined per pid and the call
 *    is placed where it finished.  `---` signal lines (SIGCHLD's si_pid) and
 *    `+++` lines only mark processes as exited.  Strings are decoded (\",
 *    \\, \n..., octal, \x); a path printed truncated ("..."...) is skipped.
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
 *    pass for a later one.  A mutation the cache fails (-ENOMEM) makes it
 *    forget the name instead (remove, else invalidate_dir), so it never
 *    answers from before the change; walks that fail with -ENOMEM or -EAGAIN
 *    count as cache_errors, not as wrong.
 *
 * Locking: none.  A trace is read-only once replay_load() returns.  A
 * replay is single-threaded: the store, its counters and the backend calls
 * all belong to the thread in replay_run_opts() (the cache's own reclaim
 * thread, if any, never calls the backend).  Each replay keeps its state on
 * its own, so several replays may share one trace at once.
 *
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
#include <fcntl.h>
#include <inttypes.h>
#include <limits.h>
#include <setjmp.h>
#include <spawn.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "common/path.h"
#include "stress/replay.h"

extern char **environ;

#define NONE UINT32_MAX	   /* no slot, no index */
#define ROOT ((uint32_t)1) /* the object "/" (ino 1) */
#define MAX_LINKS 40	   /* udc_walk's WALK_MAX_SYMLINKS */
#define MAX_ARGS 8
#define MAX_FD 65536	/* larger fd numbers are treated as unknown */
#define SAMPLE_EVERY 64 /* impl->stats every this many events */

#ifndef RENAME_NOREPLACE
#define RENAME_NOREPLACE 1
#endif
#ifndef RENAME_EXCHANGE
#define RENAME_EXCHANGE 2
#endif
#ifndef RENAME_WHITEOUT
#define RENAME_WHITEOUT 4
#endif

/* ---------------------------------------------------------------------- */
/* The trace: objects, slots, events. */

enum obj_flag {
	OBJ_ORIGINAL = 0x01, /* exists at the start of the log */
	OBJ_SURE = 0x02,     /* the type is known; else a guessed regular file */
	OBJ_COMPLETE = 0x04, /* directory: a name not known is absent (made by the
			      * log, or removed) */
	OBJ_SYNTH = 0x08,    /* symlink: the target is unknown ("/\001L<id>") */
};

/*
 * A model object.  Invariants: type != UDC_TYPE_UNKNOWN; a directory has one
 * name at a time (parent, home); target is set iff type == UDC_TYPE_SYMLINK
 * and !(flags & OBJ_SYNTH).
 */
struct robj {
	uint8_t type;	       /* enum udc_type */
	uint8_t flags;	       /* OBJ_* */
	uint32_t parent;       /* directories: the parent while the model is built */
	uint32_t init_parent;  /* directories: the parent when a pass begins (original)
				* or when it is made (made by the log) */
	uint32_t home;	       /* the slot that first named it (NONE: root, orphan) */
	uint32_t slots;	       /* directories: the first of their slots (NONE) */
	uint32_t target, tlen; /* symlinks: the target, in t->str */
};

/*
 * A name: (dir, component).  init is its object at the start of the log (0:
 * absent); cur, known and unsure are the build's state: cur its object now,
 * known whether cur is a fact, unsure that cur was found by a call that
 * followed symlinks (the name may be a symlink to it).
 */
struct rslot {
	uint32_t dir, name; /* directory object; the component, in t->str */
	uint16_t nlen;
	uint8_t known, unsure;
	uint32_t init, cur;
	uint32_t next;	/* the next slot of dir (NONE) */
	uint32_t hnext; /* the next slot in the hash chain (NONE) */
};

/* A replayed event. */
struct revent {
	uint8_t kind;	/* enum replay_kind */
	uint8_t sys;	/* index in sys_table, for messages */
	uint8_t follow; /* lookups: follow a final symlink */
	uint8_t pad;
	int32_t expect;	     /* lookups: the log's outcome, 0 / -ENOENT / -ENOTDIR */
	uint32_t line;	     /* line number in the log */
	uint32_t start;	     /* lookups: the object a relative path starts at */
	uint32_t path, plen; /* lookups: the path, in t->str */
	uint32_t slot;	     /* mutations: the name changed (rename: the old name) */
	uint32_t slot2;	     /* rename: the new name */
	uint32_t obj;	     /* create, mkdir, link: the object now named */
};

struct replay_trace {
	char *str; /* names, paths, targets: NUL-terminated, by offset */
	size_t nstr, capstr;
	struct robj *objs; /* objs[0] unused: 0 means "absent" */
	size_t nobjs, capobjs;
	struct rslot *slots;
	size_t nslots, capslots;
	uint32_t *hash; /* slot hash buckets (NONE: empty), a power of two */
	size_t hsize;
	struct revent *ev;
	size_t nev, capev;
	struct replay_summary sum;
};

/* ---------------------------------------------------------------------- */
/* The builder: per-pid state and scratch buffers.  Every allocation made
 * while building goes through xrealloc(), which longjmp()s to replay_load()
 * on failure; everything allocated is reachable from the builder or the
 * trace, so replay_load() frees it all. */

struct pidst {
	int pid;
	bool used, exited;
	bool seen;	    /* the build has met it */
	bool chdir_seen;    /* prescan: a chdir came before any getcwd */
	uint32_t start_cwd; /* prescan: offset of its first getcwd (NONE) */
	uint32_t cwd;	    /* object */
	uint32_t *fds;	    /* fd -> object (0: unknown) */
	size_t nfds;
	uint32_t pending; /* a directory just opened (see fd_get) */
	int pending_fd;
	char *unfinished; /* the first half of an <unfinished ...> call */
	size_t ulen;
};

struct rec {
	int pid;
	const char *name;
	size_t nlen;
	const char *arg[MAX_ARGS];
	size_t alen[MAX_ARGS];
	int nargs;
	long long ret;
	int err; /* errno when ret < 0 (INT_MAX: a name this file does not know) */
};

struct builder {
	struct replay_trace *t;
	jmp_buf fail;
	int err;
	bool prescan;
	struct pidst *pids; /* open addressing by pid, a power of two */
	size_t pidcap, npids;
	int last_pid;
	bool have_first;
	int first_pid;
	uint32_t init_cwd;
	uint32_t line;
	char *walkbuf; /* UDC_PATH_MAX + 1: spliced paths */
	char *join;    /* a joined <unfinished>/<resumed> line */
	size_t joincap;
	char *sbuf[3]; /* decoded string arguments */
	size_t scap[3];
	char *tbuf; /* a copy of a symlink target being walked */
	size_t tcap;
	char *file; /* the whole log */
	size_t flen;
};

/* realloc() of n elements of size; out of memory longjmp()s to build(). */
static void *xrealloc(struct builder *b, void *p, size_t n, size_t size)
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

/* Make room for one more element in (arr, n, cap). */
#define GROW(b, arr, n, cap)                                               \
	do {                                                               \
		if ((n) >= (cap)) {                                        \
			size_t nc_ = (cap) ? (cap)*2 : 64;                 \
			(arr) = xrealloc((b), (arr), nc_, sizeof(*(arr))); \
			(cap) = nc_;                                       \
		}                                                          \
	} while (0)

/* The model outgrew its 32-bit offsets: longjmp() to build() with -EFBIG. */
static void too_big(struct builder *b)
{
	b->err = -EFBIG;
	longjmp(b->fail, 1);
}

/*
 * The model contradicts a call: count it (its lookups are then counted
 * unmodelled at replay).  With -DREPLAY_DEBUG, say where on stderr.
 */
static void conflict_at(struct builder *b, int where)
{
	b->t->sum.conflicts++;
#ifdef REPLAY_DEBUG
	fprintf(stderr, "replay: conflict at log line %" PRIu32 " (replay.c:%d)\n", b->line, where);
#else
	(void)where;
#endif
}
#define CONFLICT(b) conflict_at((b), __LINE__)

/* Copy s (len bytes) into t->str, NUL-terminated; its offset. */
static uint32_t str_add(struct builder *b, const char *s, size_t len)
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
static char *scratch(struct builder *b, char **buf, size_t *cap, size_t n)
{
	if (n > *cap) {
		*buf = xrealloc(b, *buf, n, 1);
		*cap = n;
	}
	return *buf;
}

/* A new object (no name yet); its id. */
static uint32_t obj_new(struct builder *b, uint8_t type, uint8_t flags)
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
static uint32_t slot_find(const struct replay_trace *t, uint32_t dir, const char *name, size_t len)
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
static uint32_t slot_get(struct builder *b, uint32_t dir, const char *name, size_t len)
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
static void obj_home(struct replay_trace *t, uint32_t o, uint32_t s)
{
	t->objs[o].home = s;
	t->objs[o].parent = t->slots[s].dir;
	t->objs[o].init_parent = t->slots[s].dir;
}

/* Directory d was removed (or replaced by a rename): every name in it is
 * absent from now on. */
static void dir_kill(struct replay_trace *t, uint32_t d)
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

/* What the log says of the walk being learnt from. */
struct kreq {
	bool follow;	    /* the call follows a final symlink */
	int want;	    /* the log's outcome: 0, -ENOENT or -ENOTDIR */
	uint8_t type;	    /* the final object's type if the call says (else UNKNOWN) */
	bool not_link;	    /* the final name is not a symlink (nofollow success) */
	uint32_t place;	    /* put this object at an unknown final slot */
	const char *target; /* type == SYMLINK: the target (NULL: unknown) */
	size_t tlen;
};

struct wstate {
	struct replay_trace *t;
	struct builder *b; /* building: learn from q; NULL in the replay */
	const struct kreq *q;
	const uint32_t *cur;	/* replay: object per slot */
	const uint32_t *parent; /* replay: parent per object */
	char *buf;		/* UDC_PATH_MAX + 1 bytes */
};

struct wres {
	int err;
	uint32_t obj;  /* the final object (err == 0) */
	uint32_t slot; /* the slot that named it (NONE: "/", ".", "..", the start) */
};

/* The synthetic target of symlink o, into buf (>= 16 bytes); its length. */
static size_t synth_target(uint32_t o, char *buf)
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
static struct wres walk_path(struct wstate *w, uint32_t start, const char *path, size_t len,
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
			a = cur == ROOT ? ROOT : w->parent ? w->parent[cur] : t->objs[cur].parent;
		} else {
			a = walk_child(w, cur, &comp, penult, follow, &s);
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
		if (path[0] == '/')
			cur = ROOT;
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

static struct wres know(struct builder *b, uint32_t start, const char *path, size_t len,
			const struct kreq *q);

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
static void know_final(struct builder *b, const struct wres *r, const struct kreq *q)
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
static struct wres know(struct builder *b, uint32_t start, const char *path, size_t len,
			const struct kreq *q)
{
	struct wstate w = { .t = b->t, .b = b, .q = q, .buf = b->walkbuf };
	struct wres r = walk_path(&w, start, path, len, q->follow);

	know_final(b, &r, q);
	return r;
}

/* ---------------------------------------------------------------------- */
/* Parsing strace's text. */

static const struct {
	const char *name;
	int value;
} errno_names[] = {
	{ "ENOENT", ENOENT },	{ "ENOTDIR", ENOTDIR },
	{ "EEXIST", EEXIST },	{ "EINVAL", EINVAL },
	{ "ENXIO", ENXIO },	{ "EACCES", EACCES },
	{ "EPERM", EPERM },	{ "EISDIR", EISDIR },
	{ "ELOOP", ELOOP },	{ "ENOTEMPTY", ENOTEMPTY },
	{ "EXDEV", EXDEV },	{ "ENAMETOOLONG", ENAMETOOLONG },
	{ "EBUSY", EBUSY },	{ "EROFS", EROFS },
	{ "ETXTBSY", ETXTBSY }, { "ENODEV", ENODEV },
	{ "EAGAIN", EAGAIN },	{ "EBADF", EBADF },
	{ "ENOSYS", ENOSYS },	{ "EOPNOTSUPP", EOPNOTSUPP },
	{ "ESTALE", ESTALE },	{ "EIO", EIO },
	{ "ENOMEM", ENOMEM },	{ "EFAULT", EFAULT },
	{ "EMFILE", EMFILE },	{ "ENFILE", ENFILE },
	{ "ENODATA", ENODATA }, { "ERANGE", ERANGE },
	{ "EINTR", EINTR },	{ "ENOEXEC", ENOEXEC },
	{ "EMLINK", EMLINK },	{ "ENOSPC", ENOSPC },
	{ "EDQUOT", EDQUOT },	{ "ECHILD", ECHILD },
	{ "ENOTTY", ENOTTY },	{ "ESRCH", ESRCH },
};

/* The errno strace names s (len bytes), or INT_MAX if errno_names[] lacks it. */
static int errno_of(const char *s, size_t len)
{
	for (size_t i = 0; i < sizeof(errno_names) / sizeof(errno_names[0]); i++)
		if (strlen(errno_names[i].name) == len && memcmp(errno_names[i].name, s, len) == 0)
			return errno_names[i].value;
	return INT_MAX;
}

static const struct {
	const char *name;
	unsigned long value;
} flag_names[] = {
	{ "O_CREAT", O_CREAT },
	{ "O_EXCL", O_EXCL },
	{ "O_DIRECTORY", O_DIRECTORY },
	{ "O_NOFOLLOW", O_NOFOLLOW },
	{ "O_PATH", O_PATH },
	{ "O_TMPFILE", O_TMPFILE },
	{ "O_TRUNC", O_TRUNC },
	{ "AT_SYMLINK_NOFOLLOW", AT_SYMLINK_NOFOLLOW },
	{ "AT_EMPTY_PATH", AT_EMPTY_PATH },
	{ "AT_REMOVEDIR", AT_REMOVEDIR },
	{ "AT_SYMLINK_FOLLOW", AT_SYMLINK_FOLLOW },
	{ "RENAME_NOREPLACE", RENAME_NOREPLACE },
	{ "RENAME_EXCHANGE", RENAME_EXCHANGE },
	{ "RENAME_WHITEOUT", RENAME_WHITEOUT },
};

/* Blank within a line. */
static bool is_space(char c)
{
	return c == ' ' || c == '\t' || c == '\r';
}

/* A decimal digit (locale-free). */
static bool is_digit(char c)
{
	return c >= '0' && c <= '9';
}

/* Trim spaces at both ends of [*s, *s + *len). */
static void trim(const char **s, size_t *len)
{
	while (*len && is_space(**s)) {
		(*s)++;
		(*len)--;
	}
	while (*len && is_space((*s)[*len - 1]))
		(*len)--;
}

/* Flags as strace prints them ("O_RDONLY|O_CLOEXEC", "AT_SYMLINK_NOFOLLOW",
 * "0", "0x100"): the bits this file uses. */
static unsigned long arg_flags(const char *a, size_t len)
{
	unsigned long v = 0;
	size_t i = 0;

	while (i < len) {
		size_t j = i;
		while (j < len && a[j] != '|')
			j++;
		const char *tok = a + i;
		size_t tlen = j - i;
		trim(&tok, &tlen);
		if (tlen && is_digit(tok[0])) {
			char num[32];
			size_t n = tlen < sizeof(num) - 1 ? tlen : sizeof(num) - 1;
			memcpy(num, tok, n);
			num[n] = '\0';
			v |= strtoul(num, NULL, 0);
		} else {
			for (size_t k = 0; k < sizeof(flag_names) / sizeof(flag_names[0]); k++)
				if (strlen(flag_names[k].name) == tlen &&
				    memcmp(flag_names[k].name, tok, tlen) == 0)
					v |= flag_names[k].value;
		}
		i = j + 1;
	}
	return v;
}

/* An integer argument ("3", "-100", "3</path>" with -y); false if none. */
static bool arg_int(const char *a, size_t len, long long *v)
{
	char num[32];
	size_t n = 0;

	trim(&a, &len);
	while (n < len && n < sizeof(num) - 1 && (is_digit(a[n]) || (n == 0 && a[n] == '-')))
		n++;
	if (n == 0 || (n == 1 && a[0] == '-'))
		return false;
	memcpy(num, a, n);
	num[n] = '\0';
	*v = strtoll(num, NULL, 10);
	return true;
}

/* The file type an "S_IFxxx" token in [a, a + len) names, or UNKNOWN. */
static uint8_t mode_type(const char *a, size_t len)
{
	const char *p = memmem(a, len, "S_IF", 4);

	if (!p)
		return UDC_TYPE_UNKNOWN;
	size_t rest = len - (size_t)(p - a);
	if (rest >= 7 && memcmp(p, "S_IFREG", 7) == 0)
		return UDC_TYPE_REG;
	if (rest >= 7 && memcmp(p, "S_IFDIR", 7) == 0)
		return UDC_TYPE_DIR;
	if (rest >= 7 && memcmp(p, "S_IFLNK", 7) == 0)
		return UDC_TYPE_SYMLINK;
	return UDC_TYPE_OTHER; /* S_IFCHR, S_IFBLK, S_IFIFO, S_IFSOCK */
}

/* The type a stat buffer argument shows ("{st_mode=S_IFDIR|0755, ...}",
 * statx's stx_mode), or UNKNOWN (an address: the call failed). */
static uint8_t stat_type(const char *a, size_t len)
{
	const char *p = memmem(a, len, "st_mode=", 8);

	if (!p)
		p = memmem(a, len, "stx_mode=", 9);
	if (!p)
		return UDC_TYPE_UNKNOWN;
	return mode_type(p, len - (size_t)(p - a));
}

/*
 * Decode string argument a into scratch buffer k.  Return 1 (a string), 2 (a
 * string strace truncated: the prefix is decoded), 0 (not a string: NULL, an
 * address), -1 (malformed, or a NUL inside).
 */
static int arg_str(struct builder *b, int k, const char *a, size_t len, const char **out,
		   size_t *olen)
{
	trim(&a, &len);
	if (!len || a[0] != '"')
		return 0;
	char *d = scratch(b, &b->sbuf[k], &b->scap[k], len + 1);
	size_t n = 0, i = 1;
	bool closed = false;
	while (i < len) {
		char c = a[i++];
		if (c == '"') {
			closed = true;
			break;
		}
		if (c != '\\') {
			d[n++] = c;
			continue;
		}
		if (i >= len)
			return -1;
		c = a[i++];
		switch (c) {
		case 'n':
			d[n++] = '\n';
			break;
		case 't':
			d[n++] = '\t';
			break;
		case 'r':
			d[n++] = '\r';
			break;
		case 'v':
			d[n++] = '\v';
			break;
		case 'f':
			d[n++] = '\f';
			break;
		case 'a':
			d[n++] = '\a';
			break;
		case 'b':
			d[n++] = '\b';
			break;
		case 'e':
			d[n++] = 033;
			break;
		case 'x': {
			unsigned v = 0, dig = 0;
			while (i < len && dig < 2) {
				char h = a[i];
				unsigned x = is_digit(h)	    ? (unsigned)(h - '0') :
					     (h >= 'a' && h <= 'f') ? (unsigned)(h - 'a' + 10) :
					     (h >= 'A' && h <= 'F') ? (unsigned)(h - 'A' + 10) :
								      16u;
				if (x == 16)
					break;
				v = v * 16 + x;
				i++;
				dig++;
			}
			if (!dig)
				return -1;
			d[n++] = (char)v;
			break;
		}
		default:
			if (c >= '0' && c <= '7') {
				unsigned v = (unsigned)(c - '0'), dig = 1;
				while (i < len && dig < 3 && a[i] >= '0' && a[i] <= '7') {
					v = v * 8 + (unsigned)(a[i++] - '0');
					dig++;
				}
				d[n++] = (char)v;
			} else {
				d[n++] = c; /* \\ \" \' and anything else: itself */
			}
		}
	}
	if (!closed || memchr(d, '\0', n))
		return -1;
	d[n] = '\0';
	*out = d;
	*olen = n;
	return (len - i >= 3 && memcmp(a + i, "...", 3) == 0) ? 2 : 1;
}

/* ---------------------------------------------------------------------- */
/* Processes. */

static struct pidst *pid_find(struct builder *b, int pid)
{
	if (!b->pidcap)
		return NULL;
	size_t m = b->pidcap - 1;
	for (size_t h = ((size_t)(unsigned)pid * 0x9e3779b9u) & m;; h = (h + 1) & m) {
		struct pidst *p = &b->pids[h];
		if (!p->used)
			return NULL;
		if (p->pid == pid)
			return p;
	}
}

/*
 * fd tables map an fd to an object id, FD_WEAK set when the binding may be
 * stale: made by the dup rule below, inherited from another pid, or older
 * than the pid's last execve.  A binding from a traced open is strong.
 */
#define FD_WEAK 0x80000000u

/* fd now refers to object o; a traced open's result unless weak. */
static void fd_bind(struct builder *b, struct pidst *p, long long fd, uint32_t o, bool weak)
{
	if (fd < 0 || fd >= MAX_FD)
		return;
	if ((size_t)fd >= p->nfds) {
		size_t n = p->nfds ? p->nfds : 16;
		while (n <= (size_t)fd)
			n *= 2;
		p->fds = xrealloc(b, p->fds, n, sizeof(*p->fds));
		memset(p->fds + p->nfds, 0, (n - p->nfds) * sizeof(*p->fds));
		p->nfds = n;
	}
	p->fds[fd] = o | (weak ? FD_WEAK : 0);
	if (!weak) {
		p->pending = o; /* fd_get() checks it is a directory when it matters */
		p->pending_fd = (int)fd;
	}
}

/* The object fd refers to (0: unknown), without the dup rule (fstat). */
static uint32_t fd_peek(const struct pidst *p, long long fd)
{
	return fd >= 0 && (size_t)fd < p->nfds ? p->fds[fd] & ~FD_WEAK : 0;
}

/* Every binding of p may be stale now (execve, inheritance). */
static void fd_weaken(struct pidst *p)
{
	for (size_t i = 0; i < p->nfds; i++)
		if (p->fds[i])
			p->fds[i] |= FD_WEAK;
	p->pending = 0;
}

/*
 * How well directory d fits a call on path (relative to it) whose outcome is
 * want and whose last name must be a directory (need 1), must not be (2), or
 * either (0): 2 the first name is known there as needed, 1 unknown, 0 it
 * cannot be.
 */
static int fd_fit(const struct replay_trace *t, uint32_t d, const char *path, size_t len, int want,
		  int need)
{
	if (!d || t->objs[d].type != UDC_TYPE_DIR)
		return 0;
	size_t n = 0;
	while (n < len && path[n] != '/')
		n++;
	if (want != 0 || name_check(path, n) || name_is_dotdot(path, n))
		return 1;
	if (n < len)
		need = 1; /* a directory on the way */
	uint32_t s = slot_find(t, d, path, n);
	if (s == NONE || !t->slots[s].known)
		return (t->objs[d].flags & OBJ_COMPLETE) ? 0 : 1;
	uint32_t o = t->slots[s].cur;
	if (!o)
		return 0;
	bool isdir = t->objs[o].type == UDC_TYPE_DIR || t->objs[o].type == UDC_TYPE_SYMLINK ||
		     !(t->objs[o].flags & OBJ_SURE);
	bool nondir = t->objs[o].type != UDC_TYPE_DIR;
	return (need == 1 && !isdir) || (need == 2 && !nondir) ? 0 : 2;
}

/*
 * The object dirfd fd refers to (0: unknown), for a call on path whose
 * outcome is want.  fts (rm -r) opens a directory, fstats it, then F_DUPFDs
 * it to a higher number, which strace -e %file does not show.  So a higher
 * fd used as a dirfd after a directory was opened (with no open since) is
 * taken as that directory's dup if it is unknown, or if it is weakly bound
 * and the directory fits the call better than the old binding (rm opens
 * each directory twice, the second time relative to its parent's fd).
 */
static uint32_t fd_get(struct builder *b, struct pidst *p, long long fd, const char *path,
		       size_t len, int want, int need)
{
	const struct replay_trace *t = b->t;

	if (fd < 0 || fd >= MAX_FD)
		return 0;
	uint32_t o = p->pending;
	if (o && t->objs[o].type == UDC_TYPE_DIR) {
		if (fd == p->pending_fd) {
			p->pending = 0; /* used as itself: not dup'd */
		} else if (fd > p->pending_fd) {
			uint32_t old = fd_peek(p, fd);
			bool weak = !old || (p->fds[fd] & FD_WEAK);
			if (weak && (!old || fd_fit(t, o, path, len, want, need) >
						     fd_fit(t, old, path, len, want, need))) {
				fd_bind(b, p, fd, o, true);
				p->pending = 0;
				return o;
			}
		}
	}
	return fd_peek(p, fd);
}

/* Double the pid table and rehash its entries (pointers into it go stale). */
static void pids_grow(struct builder *b)
{
	size_t oldcap = b->pidcap, n = oldcap ? oldcap * 2 : 64;
	struct pidst *old = b->pids;
	struct pidst *nw = xrealloc(b, NULL, n, sizeof(*nw));

	memset(nw, 0, n * sizeof(*nw));
	for (size_t i = 0; i < oldcap; i++) {
		if (!old[i].used)
			continue;
		for (size_t h = ((size_t)(unsigned)old[i].pid * 0x9e3779b9u) & (n - 1);;
		     h = (h + 1) & (n - 1)) {
			if (!nw[h].used) {
				nw[h] = old[i];
				break;
			}
		}
	}
	b->pids = nw;
	b->pidcap = n;
	free(old);
}

static uint32_t cwd_resolve(struct builder *b, uint32_t off);

/*
 * The state of pid.  In the build, on first sight: a pid whose first
 * getcwd() came before any chdir() starts there; the first pid otherwise
 * starts in init_cwd; any other inherits cwd and fds from the pid of the
 * previous line, or from the first pid if that one has exited.
 */
static struct pidst *pid_get(struct builder *b, int pid)
{
	struct pidst *p = pid_find(b, pid);

	if (!p) {
		if ((b->npids + 1) * 2 > b->pidcap)
			pids_grow(b);
		size_t m = b->pidcap - 1;
		size_t h = ((size_t)(unsigned)pid * 0x9e3779b9u) & m;
		while (b->pids[h].used)
			h = (h + 1) & m;
		p = &b->pids[h];
		*p = (struct pidst){ .pid = pid, .used = true, .start_cwd = NONE };
		b->npids++;
		if (!b->have_first) {
			b->have_first = true;
			b->first_pid = pid;
		}
	}
	if (b->prescan || p->seen)
		return p;
	p->seen = true;
	b->t->sum.pids++;
	struct pidst *parent = pid_find(b, b->last_pid);
	if (!parent || !parent->seen || parent->exited || parent == p)
		parent = pid_find(b, b->first_pid);
	if (pid != b->first_pid && parent && parent->seen && parent != p) {
		p->cwd = parent->cwd;
		if (parent->nfds) {
			p->fds = xrealloc(b, NULL, parent->nfds, sizeof(*p->fds));
			memcpy(p->fds, parent->fds, parent->nfds * sizeof(*p->fds));
			p->nfds = parent->nfds;
			fd_weaken(p);
		}
	} else {
		p->cwd = b->init_cwd;
	}
	if (pid != b->first_pid && p->start_cwd != NONE) {
		uint32_t o = cwd_resolve(b, p->start_cwd);
		if (o)
			p->cwd = o;
	}
	return p;
}

/* ---------------------------------------------------------------------- */
/* The calls replay understands. */

enum op {
	OP_OPEN,
	OP_CREAT,
	OP_STAT,
	OP_ACCESS,
	OP_EXEC,
	OP_READLINK,
	OP_UNLINK,
	OP_RMDIR,
	OP_RENAME,
	OP_MKDIR,
	OP_CHDIR,
	OP_GETCWD,
	OP_LINK,
	OP_SYMLINK,
	OP_MKNOD,
	OP_PATH, /* any other call that walks a path: exists or not */
};

struct sysdesc {
	const char *name;
	uint8_t op;
	int8_t dirfd, path;   /* argument indexes (-1: none, AT_FDCWD) */
	int8_t flags;	      /* open flags, AT_* flags, RENAME_* flags (-1: none) */
	int8_t dirfd2, path2; /* rename, link: the new name */
	int8_t aux;	      /* stat: the buffer; readlink: the buffer; symlink: the
			       * target; mknod: the mode (-1: none) */
	bool nofollow;	      /* does not follow a final symlink by default */
};

static const struct sysdesc sys_table[] = {
	{ "open", OP_OPEN, -1, 0, 1, -1, -1, -1, false },
	{ "openat", OP_OPEN, 0, 1, 2, -1, -1, -1, false },
	{ "openat2", OP_OPEN, 0, 1, 2, -1, -1, -1, false },
	{ "creat", OP_CREAT, -1, 0, -1, -1, -1, -1, false },
	{ "stat", OP_STAT, -1, 0, -1, -1, -1, 1, false },
	{ "stat64", OP_STAT, -1, 0, -1, -1, -1, 1, false },
	{ "lstat", OP_STAT, -1, 0, -1, -1, -1, 1, true },
	{ "lstat64", OP_STAT, -1, 0, -1, -1, -1, 1, true },
	{ "newfstatat", OP_STAT, 0, 1, 3, -1, -1, 2, false },
	{ "fstatat64", OP_STAT, 0, 1, 3, -1, -1, 2, false },
	{ "statx", OP_STAT, 0, 1, 2, -1, -1, 4, false },
	{ "access", OP_ACCESS, -1, 0, -1, -1, -1, -1, false },
	{ "faccessat", OP_ACCESS, 0, 1, -1, -1, -1, -1, false },
	{ "faccessat2", OP_ACCESS, 0, 1, 3, -1, -1, -1, false },
	{ "execve", OP_EXEC, -1, 0, -1, -1, -1, -1, false },
	{ "execveat", OP_EXEC, 0, 1, 4, -1, -1, -1, false },
	{ "readlink", OP_READLINK, -1, 0, -1, -1, -1, 1, true },
	{ "readlinkat", OP_READLINK, 0, 1, -1, -1, -1, 2, true },
	{ "unlink", OP_UNLINK, -1, 0, -1, -1, -1, -1, true },
	{ "unlinkat", OP_UNLINK, 0, 1, 2, -1, -1, -1, true },
	{ "rmdir", OP_RMDIR, -1, 0, -1, -1, -1, -1, true },
	{ "rename", OP_RENAME, -1, 0, -1, -1, 1, -1, true },
	{ "renameat", OP_RENAME, 0, 1, -1, 2, 3, -1, true },
	{ "renameat2", OP_RENAME, 0, 1, 4, 2, 3, -1, true },
	{ "mkdir", OP_MKDIR, -1, 0, -1, -1, -1, -1, true },
	{ "mkdirat", OP_MKDIR, 0, 1, -1, -1, -1, -1, true },
	{ "chdir", OP_CHDIR, -1, 0, -1, -1, -1, -1, false },
	{ "getcwd", OP_GETCWD, -1, 0, -1, -1, -1, -1, false },
	{ "link", OP_LINK, -1, 0, -1, -1, 1, -1, true },
	{ "linkat", OP_LINK, 0, 1, 4, 2, 3, -1, true },
	{ "symlink", OP_SYMLINK, -1, 1, -1, -1, -1, 0, true },
	{ "symlinkat", OP_SYMLINK, 1, 2, -1, -1, -1, 0, true },
	{ "mknod", OP_MKNOD, -1, 0, -1, -1, -1, 1, true },
	{ "mknodat", OP_MKNOD, 0, 1, -1, -1, -1, 2, true },
	{ "statfs", OP_PATH, -1, 0, -1, -1, -1, -1, false },
	{ "statfs64", OP_PATH, -1, 0, -1, -1, -1, -1, false },
	{ "chmod", OP_PATH, -1, 0, -1, -1, -1, -1, false },
	{ "fchmodat", OP_PATH, 0, 1, -1, -1, -1, -1, false },
	{ "fchmodat2", OP_PATH, 0, 1, 3, -1, -1, -1, false },
	{ "chown", OP_PATH, -1, 0, -1, -1, -1, -1, false },
	{ "lchown", OP_PATH, -1, 0, -1, -1, -1, -1, true },
	{ "fchownat", OP_PATH, 0, 1, 4, -1, -1, -1, false },
	{ "utimensat", OP_PATH, 0, 1, 3, -1, -1, -1, false },
	{ "futimesat", OP_PATH, 0, 1, -1, -1, -1, -1, false },
	{ "utimes", OP_PATH, -1, 0, -1, -1, -1, -1, false },
	{ "utime", OP_PATH, -1, 0, -1, -1, -1, -1, false },
	{ "truncate", OP_PATH, -1, 0, -1, -1, -1, -1, false },
	{ "getxattr", OP_PATH, -1, 0, -1, -1, -1, -1, false },
	{ "lgetxattr", OP_PATH, -1, 0, -1, -1, -1, -1, true },
	{ "listxattr", OP_PATH, -1, 0, -1, -1, -1, -1, false },
	{ "llistxattr", OP_PATH, -1, 0, -1, -1, -1, -1, true },
	{ "setxattr", OP_PATH, -1, 0, -1, -1, -1, -1, false },
	{ "lsetxattr", OP_PATH, -1, 0, -1, -1, -1, -1, true },
	{ "removexattr", OP_PATH, -1, 0, -1, -1, -1, -1, false },
	{ "lremovexattr", OP_PATH, -1, 0, -1, -1, -1, -1, true },
	{ "inotify_add_watch", OP_PATH, -1, 1, -1, -1, -1, -1, false },
};

#define NR_SYS (sizeof(sys_table) / sizeof(sys_table[0]))

/* The description of syscall name (len bytes), or NULL if replay skips it. */
static const struct sysdesc *sys_find(const char *name, size_t len)
{
	for (size_t i = 0; i < NR_SYS; i++)
		if (strlen(sys_table[i].name) == len && memcmp(sys_table[i].name, name, len) == 0)
			return &sys_table[i];
	return NULL;
}

/* ---------------------------------------------------------------------- */
/* Turning calls into facts and events. */

/* One call being handled. */
struct call {
	struct builder *b;
	struct pidst *p;
	const struct rec *r;
	const struct sysdesc *d;
	uint8_t sys;
	unsigned long flags; /* the call's open, AT_* or RENAME_* flags */
};

/* Append event e to the trace and count it in the summary. */
static void ev_push(struct builder *b, const struct revent *e)
{
	struct replay_trace *t = b->t;

	if (t->nev >= UINT32_MAX / 2)
		too_big(b);
	GROW(b, t->ev, t->nev, t->capev);
	t->ev[t->nev++] = *e;
	t->sum.events++;
	t->sum.by_kind[e->kind]++;
	if (e->kind == REPLAY_LOOKUP && e->expect == -ENOENT)
		t->sum.lookups_enoent++;
}

/* Record a lookup event: walk path from start, the log says expect. */
static void ev_lookup(struct call *c, uint32_t start, const char *path, size_t len, bool follow,
		      int expect)
{
	struct revent e = {
		.kind = REPLAY_LOOKUP,
		.sys = c->sys,
		.follow = follow,
		.expect = expect,
		.line = c->b->line,
		.start = start,
		.slot = NONE,
		.slot2 = NONE,
	};

	e.path = str_add(c->b, path, len);
	e.plen = (uint32_t)len;
	ev_push(c->b, &e);
}

/* Record a mutation event of kind on slot (slot2: a rename's new name; obj:
 * the object now named by a create, mkdir or link). */
static void ev_mutation(struct call *c, uint8_t kind, uint32_t slot, uint32_t slot2, uint32_t obj)
{
	struct revent e = {
		.kind = kind,
		.sys = c->sys,
		.line = c->b->line,
		.slot = slot,
		.slot2 = slot2,
		.obj = obj,
	};

	ev_push(c->b, &e);
}

/* Learn from a lookup and record it. */
static struct wres call_lookup(struct call *c, uint32_t start, const char *path, size_t len,
			       const struct kreq *q)
{
	struct wres r = know(c->b, start, path, len, q);

	ev_lookup(c, start, path, len, q->follow, q->want);
	return r;
}

/* The (directory part, last component) of a path; false if the path has no
 * last component to create or remove ("/", ".", "..", "a/.."). */
static bool path_split(const char *path, size_t len, size_t *dlen, const char **base, size_t *blen)
{
	while (len > 1 && path[len - 1] == '/')
		len--;
	size_t i = len;
	while (i > 0 && path[i - 1] != '/')
		i--;
	*base = path + i;
	*blen = len - i;
	if (name_check(*base, *blen) || name_is_dotdot(*base, *blen))
		return false;
	*dlen = i;
	return true;
}

/* The directory a path's last component is in (0 if the model has none). */
static uint32_t parent_dir(struct call *c, uint32_t start, const char *path, size_t dlen)
{
	if (dlen == 0)
		return start;
	struct kreq q = { .follow = true, .want = 0, .type = UDC_TYPE_DIR };
	struct wres r = know(c->b, start, path, dlen, &q);
	return r.err ? 0 : r.obj;
}

/* ENOENT from a call that would have made the last name: a directory on the
 * way is missing. */
static void parent_missing(struct call *c, uint32_t start, const char *path, size_t len)
{
	size_t dlen, blen;
	const char *base;
	struct kreq q = { .follow = true, .want = -ENOENT };

	if (path_split(path, len, &dlen, &base, &blen) && dlen > 0 &&
	    !(dlen == 1 && path[0] == '/'))
		know(c->b, start, path, dlen, &q);
	ev_lookup(c, start, path, len, false, -ENOENT);
}

/*
 * A call that makes a new name (mkdir, O_CREAT, creat, mknod, symlink,
 * link): the kernel looks the name up (absent), then creates it.  o is the
 * object to name, or 0 to make one of type (flags as made by the log).
 * Return the object now named, or 0 if the model disagrees.
 */
static uint32_t make_name(struct call *c, uint32_t start, const char *path, size_t len,
			  uint8_t kind, uint8_t type, uint32_t o, const char *tg, size_t tlen)
{
	struct builder *b = c->b;
	struct replay_trace *t = b->t;
	size_t dlen, blen;
	const char *base;

	if (!path_split(path, len, &dlen, &base, &blen)) {
		CONFLICT(b);
		ev_lookup(c, start, path, len, false, -ENOENT);
		return 0;
	}
	uint32_t d = parent_dir(c, start, path, dlen);
	if (!d || t->objs[d].type != UDC_TYPE_DIR) {
		CONFLICT(b);
		ev_lookup(c, start, path, len, false, -ENOENT);
		return 0;
	}
	uint32_t s = slot_get(b, d, base, blen);
	ev_lookup(c, start, path, len, false, -ENOENT);
	if (t->slots[s].known && t->slots[s].cur) {
		CONFLICT(b);
		return 0;
	}
	if (!t->slots[s].known) {
		t->slots[s].known = 1;
		t->slots[s].init = 0;
	}
	if (!o) {
		o = obj_new(b, type, OBJ_SURE | (type == UDC_TYPE_DIR ? OBJ_COMPLETE : 0));
		if (type == UDC_TYPE_SYMLINK) {
			if (tg && tlen) {
				t->objs[o].target = str_add(b, tg, tlen);
				t->objs[o].tlen = (uint32_t)tlen;
			} else {
				t->objs[o].flags |= OBJ_SYNTH;
			}
		}
		obj_home(t, o, s);
	}
	t->slots[s].cur = o;
	t->slots[s].unsure = 0;
	ev_mutation(c, kind, s, NONE, o);
	return o;
}

/* Where a call's relative path starts: cwd, or its dirfd's object.  false
 * if the dirfd is unknown (the call is skipped). */
static bool call_start(struct call *c, int dirfd_arg, const char *path, uint32_t *start)
{
	struct replay_trace *t = c->b->t;
	long long fd;

	*start = c->p->cwd;
	if (path[0] == '/' || dirfd_arg < 0)
		return true;
	if (dirfd_arg >= c->r->nargs)
		return false;
	const char *a = c->r->arg[dirfd_arg];
	size_t alen = c->r->alen[dirfd_arg];
	trim(&a, &alen);
	if (alen == 8 && memcmp(a, "AT_FDCWD", 8) == 0)
		return true;
	if (!arg_int(a, alen, &fd))
		return false;
	if (fd == AT_FDCWD)
		return true;
	const struct rec *r = c->r;
	int want = r->ret >= 0 ? 0 : r->err == ENOENT ? -ENOENT : 1;
	int need = 0;
	if (c->d->op == OP_RMDIR || c->d->op == OP_CHDIR)
		need = 1;
	else if (c->d->op == OP_UNLINK)
		need = (c->flags & AT_REMOVEDIR) ? 1 : 2;
	else if (c->d->op == OP_OPEN && (c->flags & O_DIRECTORY))
		need = 1;
	uint32_t o = fd_get(c->b, c->p, fd, path, strlen(path), want, need);
	if (!o)
		return false;
	struct robj *ob = &t->objs[o];
	if (ob->type != UDC_TYPE_DIR) {
		if (ob->flags & OBJ_SURE)
			return false;
		ob->type = UDC_TYPE_DIR;
		ob->flags |= OBJ_SURE;
		if (ob->home != NONE)
			ob->parent = ob->init_parent = t->slots[ob->home].dir;
	}
	*start = o;
	return true;
}

/* Count a call as skipped for a reason. */
static void skip(struct builder *b, uint64_t *why)
{
	(*why)++;
	b->t->sum.lines_skipped++;
}

/* What a call's failure says about its path: 0 (exists), -ENOENT, -ENOTDIR,
 * or 1 (nothing certain: skip).  *type gets a type the error implies. */
static int failure_says(const struct sysdesc *d, int err, unsigned long flags, uint8_t *type)
{
	*type = UDC_TYPE_UNKNOWN;
	if (err == ENOENT)
		return -ENOENT;
	if (err == ENOTDIR)
		return -ENOTDIR;
	switch (d->op) {
	case OP_OPEN:
	case OP_CREAT:
		if (err == EISDIR) {
			*type = UDC_TYPE_DIR;
			return 0;
		}
		if (err == ENXIO || err == ENODEV) {
			*type = UDC_TYPE_OTHER;
			return 0;
		}
		if (err == ETXTBSY || (err == EEXIST && (flags & O_CREAT)))
			return 0;
		return 1;
	case OP_EXEC:
		return err == ENOEXEC ? 0 : 1;
	case OP_READLINK:
		return err == EINVAL ? 0 : 1; /* exists, not a symlink */
	case OP_MKDIR:
	case OP_SYMLINK:
	case OP_MKNOD:
		return err == EEXIST ? 0 : 1;
	case OP_RMDIR:
		if (err == ENOTEMPTY || err == EEXIST || err == EBUSY) {
			*type = UDC_TYPE_DIR;
			return 0;
		}
		return 1;
	case OP_UNLINK:
		if (err == EISDIR || ((flags & AT_REMOVEDIR) && err == ENOTEMPTY)) {
			*type = UDC_TYPE_DIR;
			return 0;
		}
		return 1;
	default:
		return 1;
	}
}

/* A lookup-only call (stat, access, execve, open without create, chdir,
 * readlink, statfs...): learn, record, and keep the fd or the cwd. */
static void do_lookup(struct call *c, uint32_t start, const char *path, size_t len, bool follow,
		      unsigned long flags, int want, uint8_t type)
{
	const struct rec *r = c->r;
	struct kreq q = { .follow = follow, .want = want, .type = type };

	if (want == 0 && !follow && type != UDC_TYPE_UNKNOWN && type != UDC_TYPE_SYMLINK)
		q.not_link = true; /* lstat of a non-link */
	if (want == 0 && c->d->op == OP_OPEN && (flags & O_NOFOLLOW) && !(flags & O_PATH))
		q.not_link = true;
	if (want == 0 && c->d->op == OP_READLINK) {
		if (r->ret >= 0) {
			const char *tg = NULL;
			size_t tlen = 0;
			int k = c->d->aux < r->nargs ? arg_str(c->b, 2, r->arg[c->d->aux],
							       r->alen[c->d->aux], &tg, &tlen) :
						       0;
			q.type = UDC_TYPE_SYMLINK;
			if (k == 1 && (long long)tlen == r->ret) {
				q.target = tg;
				q.tlen = tlen;
			}
		} else {
			q.not_link = true; /* EINVAL: not a symlink */
		}
	}
	struct wres w = call_lookup(c, start, path, len, &q);
	if (want || w.err)
		return;
	if ((c->d->op == OP_OPEN || c->d->op == OP_CREAT) && r->ret >= 0)
		fd_bind(c->b, c->p, r->ret, w.obj, false);
	if (c->d->op == OP_CHDIR && c->b->t->objs[w.obj].type == UDC_TYPE_DIR)
		c->p->cwd = w.obj;
}

/* open, openat, creat. */
static void do_open(struct call *c, uint32_t start, const char *path, size_t len,
		    unsigned long flags)
{
	struct builder *b = c->b;
	struct replay_trace *t = b->t;
	const struct rec *r = c->r;
	bool tmpfile = (flags & O_TMPFILE) == O_TMPFILE;
	bool creat = (flags & O_CREAT) && !tmpfile;
	bool follow = !(flags & O_NOFOLLOW) && !(creat && (flags & O_EXCL));
	uint8_t type = UDC_TYPE_UNKNOWN;

	if ((flags & O_DIRECTORY) || tmpfile || path[len - 1] == '/')
		type = UDC_TYPE_DIR;
	if (r->ret < 0) {
		int want = failure_says(c->d, r->err, flags, &type);
		if (want == 1) {
			skip(b, &t->sum.skip_errno);
			return;
		}
		if (want == -ENOENT && creat)
			parent_missing(c, start, path, len);
		else
			do_lookup(c, start, path, len, follow, flags, want, type);
		return;
	}
	size_t dlen, blen;
	const char *base;
	if (creat && type == UDC_TYPE_UNKNOWN && path_split(path, len, &dlen, &base, &blen)) {
		uint32_t d = parent_dir(c, start, path, dlen);
		uint32_t s =
			d && t->objs[d].type == UDC_TYPE_DIR ? slot_get(b, d, base, blen) : NONE;
		if (s != NONE && ((t->slots[s].known && !t->slots[s].cur) ||
				  (!t->slots[s].known && (flags & O_EXCL)))) {
			uint32_t o = make_name(c, start, path, len, REPLAY_CREATE, UDC_TYPE_REG, 0,
					       NULL, 0);
			if (o)
				fd_bind(b, c->p, r->ret, o, false);
			return;
		}
		if (s != NONE && t->slots[s].known && (flags & O_EXCL))
			CONFLICT(b); /* O_EXCL succeeded on a name the model has */
	}
	do_lookup(c, start, path, len, follow, flags, 0, type);
}

/* unlink, unlinkat, rmdir. */
static void do_remove(struct call *c, uint32_t start, const char *path, size_t len, bool dir)
{
	struct builder *b = c->b;
	struct replay_trace *t = b->t;
	struct kreq q = { .follow = false,
			  .want = 0,
			  .type = dir ? UDC_TYPE_DIR : UDC_TYPE_UNKNOWN };
	struct wres w = call_lookup(c, start, path, len, &q);

	if (w.err || w.slot == NONE || w.obj == ROOT || t->slots[w.slot].cur != w.obj ||
	    (t->objs[w.obj].type == UDC_TYPE_DIR) != dir) {
		CONFLICT(b);
		return;
	}
	ev_mutation(c, dir ? REPLAY_RMDIR : REPLAY_UNLINK, w.slot, NONE, w.obj);
	t->slots[w.slot].cur = 0;
	t->slots[w.slot].unsure = 0;
	if (dir)
		dir_kill(t, w.obj);
}

/* rename, renameat, renameat2 (success). */
static void do_rename(struct call *c, uint32_t start, const char *path, size_t len, uint32_t start2,
		      const char *path2, size_t len2)
{
	struct builder *b = c->b;
	struct replay_trace *t = b->t;
	struct kreq q = { .follow = false, .want = 0 };
	struct wres w = call_lookup(c, start, path, len, &q);
	size_t dlen, blen;
	const char *base;

	if (w.err || w.slot == NONE || w.obj == ROOT || t->slots[w.slot].cur != w.obj ||
	    !path_split(path2, len2, &dlen, &base, &blen)) {
		CONFLICT(b);
		return;
	}
	uint32_t s1 = w.slot, x = w.obj;
	uint32_t d = parent_dir(c, start2, path2, dlen);
	if (!d || t->objs[d].type != UDC_TYPE_DIR) {
		CONFLICT(b);
		ev_lookup(c, start2, path2, len2, false, -ENOENT);
		return;
	}
	uint32_t s2 = slot_get(b, d, base, blen);
	if (!t->slots[s2].known) {
		t->slots[s2].known = 1;
		t->slots[s2].init = t->slots[s2].cur = 0;
	}
	uint32_t y = t->slots[s2].cur;
	ev_lookup(c, start2, path2, len2, false, y ? 0 : -ENOENT);
	if (s1 == s2 || y == x)
		return; /* rename(2) does nothing: the same name, or links of one file */
	ev_mutation(c, REPLAY_RENAME, s1, s2, x);
	t->slots[s2].cur = x;
	t->slots[s2].unsure = t->slots[s1].unsure;
	t->slots[s1].cur = 0;
	t->slots[s1].unsure = 0;
	if (t->objs[x].type == UDC_TYPE_DIR)
		t->objs[x].parent = d;
	if (y && t->objs[y].type == UDC_TYPE_DIR)
		dir_kill(t, y);
}

/* Decode a call's path argument k into buffer slot; false (skipped) if it is
 * not a whole string. */
static bool call_path(struct call *c, int k, int buf, const char **path, size_t *len)
{
	const struct rec *r = c->r;

	if (k < 0 || k >= r->nargs) {
		skip(c->b, &c->b->t->sum.skip_path);
		return false;
	}
	if (arg_str(c->b, buf, r->arg[k], r->alen[k], path, len) != 1) {
		skip(c->b, &c->b->t->sum.skip_path);
		return false;
	}
	return true;
}

/* Handle one complete call. */
static void handle_call(struct builder *b, const struct rec *r)
{
	struct replay_trace *t = b->t;
	const struct sysdesc *d = sys_find(r->name, r->nlen);

	t->sum.syscalls_parsed++;
	if (!d) {
		skip(b, &t->sum.skip_unsupported);
		return;
	}
	struct call c = {
		.b = b, .p = pid_get(b, r->pid), .r = r, .d = d, .sys = (uint8_t)(d - sys_table)
	};
	unsigned long flags = 0;
	const char *path, *path2;
	size_t len, len2;
	uint32_t start, start2;

	if (d->flags >= 0 && d->flags < r->nargs) {
		const char *a = r->arg[d->flags];
		size_t alen = r->alen[d->flags];
		const char *f = d->op == OP_OPEN ? memmem(a, alen, "flags=", 6) : NULL;
		if (f) { /* openat2's struct open_how */
			alen -= (size_t)(f + 6 - a);
			a = f + 6;
			const char *e = memchr(a, ',', alen);
			if (e)
				alen = (size_t)(e - a);
		}
		flags = arg_flags(a, alen);
	}
	if (d->op == OP_CREAT)
		flags = O_CREAT | O_WRONLY | O_TRUNC;
	c.flags = flags;

	if (d->op == OP_GETCWD)
		return; /* used by the prescan only */
	if (d->path >= r->nargs) {
		skip(b, &t->sum.skip_path);
		return;
	}
	/* A call on an fd, not a path: learn the fd's type. */
	int k = arg_str(b, 0, r->arg[d->path], r->alen[d->path], &path, &len);
	if ((k == 1 && len == 0 && (flags & AT_EMPTY_PATH) && d->op != OP_OPEN) ||
	    (k == 0 && d->op == OP_PATH && d->dirfd >= 0)) {
		long long fd;
		t->sum.fd_calls++;
		if (d->op == OP_STAT && r->ret == 0 && d->dirfd >= 0 &&
		    arg_int(r->arg[d->dirfd], r->alen[d->dirfd], &fd) && d->aux < r->nargs) {
			uint32_t o = fd_peek(c.p, fd);
			uint8_t ty = stat_type(r->arg[d->aux], r->alen[d->aux]);
			if (o && ty != UDC_TYPE_UNKNOWN) {
				struct wres w = { .obj = o, .slot = NONE };
				struct kreq q = { .want = 0, .type = ty };
				if (ty != UDC_TYPE_SYMLINK)
					know_final(b, &w, &q);
			}
		}
		return;
	}
	if (k != 1) {
		skip(b, &t->sum.skip_path);
		return;
	}
	if (!call_start(&c, d->dirfd, path, &start)) {
		skip(b, &t->sum.skip_dirfd);
		return;
	}
	bool follow = !d->nofollow;
	if (d->op != OP_OPEN && d->op != OP_UNLINK && d->op != OP_RENAME) {
		if (flags & AT_SYMLINK_NOFOLLOW)
			follow = false;
		if (d->op == OP_LINK && (flags & AT_SYMLINK_FOLLOW))
			follow = true;
	}

	if (r->ret < 0 && d->op != OP_OPEN && d->op != OP_CREAT) {
		uint8_t type;
		int want = failure_says(d, r->err, flags, &type);
		if (want == 1) {
			skip(b, &t->sum.skip_errno);
			return;
		}
		if (want == -ENOENT &&
		    (d->op == OP_MKDIR || d->op == OP_SYMLINK || d->op == OP_MKNOD))
			parent_missing(&c, start, path, len);
		else
			do_lookup(&c, start, path, len, follow, flags, want, type);
		return;
	}

	switch (d->op) {
	case OP_OPEN:
	case OP_CREAT:
		do_open(&c, start, path, len, flags);
		break;
	case OP_STAT: {
		uint8_t ty = d->aux < r->nargs ? stat_type(r->arg[d->aux], r->alen[d->aux]) :
						 UDC_TYPE_UNKNOWN;
		if (ty == UDC_TYPE_SYMLINK && follow)
			ty = UDC_TYPE_UNKNOWN;
		do_lookup(&c, start, path, len, follow, flags, 0, ty);
		break;
	}
	case OP_EXEC:
		do_lookup(&c, start, path, len, true, flags, 0, UDC_TYPE_REG);
		fd_weaken(c.p); /* O_CLOEXEC fds are gone, which ones is not traced */
		break;
	case OP_CHDIR:
		do_lookup(&c, start, path, len, true, flags, 0, UDC_TYPE_DIR);
		break;
	case OP_ACCESS:
	case OP_PATH:
	case OP_READLINK:
		do_lookup(&c, start, path, len, follow, flags, 0,
			  path[len - 1] == '/' ? UDC_TYPE_DIR : UDC_TYPE_UNKNOWN);
		break;
	case OP_UNLINK:
		do_remove(&c, start, path, len, (flags & AT_REMOVEDIR) != 0);
		break;
	case OP_RMDIR:
		do_remove(&c, start, path, len, true);
		break;
	case OP_MKDIR:
		make_name(&c, start, path, len, REPLAY_MKDIR, UDC_TYPE_DIR, 0, NULL, 0);
		break;
	case OP_MKNOD: {
		uint8_t ty = d->aux < r->nargs ? mode_type(r->arg[d->aux], r->alen[d->aux]) :
						 UDC_TYPE_UNKNOWN;
		make_name(&c, start, path, len, REPLAY_CREATE,
			  ty == UDC_TYPE_UNKNOWN ? UDC_TYPE_REG : ty, 0, NULL, 0);
		break;
	}
	case OP_SYMLINK: {
		const char *tg = NULL;
		size_t tlen = 0;
		if (d->aux >= r->nargs ||
		    arg_str(b, 1, r->arg[d->aux], r->alen[d->aux], &tg, &tlen) != 1)
			tg = NULL; /* unknown or truncated: a synthetic target */
		make_name(&c, start, path, len, REPLAY_CREATE, UDC_TYPE_SYMLINK, 0, tg, tlen);
		break;
	}
	case OP_RENAME:
	case OP_LINK: {
		if (d->op == OP_RENAME && (flags & (RENAME_EXCHANGE | RENAME_WHITEOUT))) {
			skip(b, &t->sum.skip_unsupported);
			return;
		}
		if (!call_path(&c, d->path2, 1, &path2, &len2))
			return;
		if (!call_start(&c, d->dirfd2, path2, &start2)) {
			skip(b, &t->sum.skip_dirfd);
			return;
		}
		if (d->op == OP_RENAME) {
			do_rename(&c, start, path, len, start2, path2, len2);
			break;
		}
		struct kreq q = { .follow = follow, .want = 0 };
		struct wres w = call_lookup(&c, start, path, len, &q);
		if (w.err || t->objs[w.obj].type == UDC_TYPE_DIR) {
			CONFLICT(b);
			break;
		}
		make_name(&c, start2, path2, len2, REPLAY_LINK, 0, w.obj, NULL, 0);
		break;
	}
	default:
		skip(b, &t->sum.skip_unsupported);
	}
}

/* ---------------------------------------------------------------------- */
/* Lines. */

/* Split "name(args) = result" (from s to e) into r; false if malformed. */
static bool parse_call(const char *s, const char *e, struct rec *r)
{
	const char *n = s;

	while (s < e &&
	       (is_digit(*s) || *s == '_' || (*s >= 'a' && *s <= 'z') || (*s >= 'A' && *s <= 'Z')))
		s++;
	if (s == n || s >= e || *s != '(')
		return false;
	r->name = n;
	r->nlen = (size_t)(s - n);
	r->nargs = 0;
	const char *a = ++s;
	int depth = 0;
	bool in_str = false, done = false;
	for (; s < e; s++) {
		char ch = *s;
		if (in_str) {
			if (ch == '\\')
				s++;
			else if (ch == '"')
				in_str = false;
			continue;
		}
		if (ch == '"') {
			in_str = true;
		} else if (ch == '/' && s + 1 < e && s[1] == '*') {
			const char *end = memmem(s + 2, (size_t)(e - s - 2), "*/", 2);
			if (!end)
				return false;
			s = end + 1;
		} else if (ch == '(' || ch == '[' || ch == '{') {
			depth++;
		} else if (ch == ')' || ch == ']' || ch == '}') {
			if (depth == 0 && ch == ')') {
				done = true;
				break;
			}
			depth--;
		} else if (ch == ',' && depth == 0) {
			if (r->nargs < MAX_ARGS) {
				r->arg[r->nargs] = a;
				r->alen[r->nargs++] = (size_t)(s - a);
			}
			a = s + 1;
		}
	}
	if (!done)
		return false;
	const char *last = a;
	size_t llen = (size_t)(s - a);
	trim(&last, &llen);
	if ((llen || r->nargs) && r->nargs < MAX_ARGS) {
		r->arg[r->nargs] = a;
		r->alen[r->nargs++] = (size_t)(s - a);
	}
	s++;
	while (s < e && is_space(*s))
		s++;
	if (s >= e || *s != '=')
		return false;
	s++;
	while (s < e && is_space(*s))
		s++;
	char num[32];
	size_t k = 0;
	if (s < e && *s == '-')
		num[k++] = *s++;
	if (s + 1 < e && s[0] == '0' && s[1] == 'x') {
		num[k++] = *s++;
		num[k++] = *s++;
		while (s < e && k < sizeof(num) - 1 &&
		       (is_digit(*s) || (*s >= 'a' && *s <= 'f') || (*s >= 'A' && *s <= 'F')))
			num[k++] = *s++;
	} else {
		while (s < e && k < sizeof(num) - 1 && is_digit(*s))
			num[k++] = *s++;
	}
	if (k == 0 || (k == 1 && num[0] == '-'))
		return false; /* "?": the process went away during the call */
	num[k] = '\0';
	r->ret = strtoll(num, NULL, 0);
	r->err = 0;
	if (r->ret < 0) {
		while (s < e && is_space(*s))
			s++;
		const char *en = s;
		while (s < e && ((*s >= 'A' && *s <= 'Z') || is_digit(*s)))
			s++;
		r->err = s > en ? errno_of(en, (size_t)(s - en)) : INT_MAX;
	}
	return true;
}

/* A SIGCHLD line's si_pid exited (CLD_EXITED, CLD_KILLED, CLD_DUMPED). */
static void signal_line(struct builder *b, const char *s, const char *e)
{
	const char *p = memmem(s, (size_t)(e - s), "si_pid=", 7);
	long long pid;

	if (!p || !memmem(s, (size_t)(e - s), "CLD_", 4) ||
	    memmem(s, (size_t)(e - s), "CLD_STOPPED", 11) ||
	    memmem(s, (size_t)(e - s), "CLD_CONTINUED", 13) ||
	    !arg_int(p + 7, (size_t)(e - p - 7), &pid))
		return;
	struct pidst *q = pid_find(b, (int)pid);
	if (q)
		q->exited = true;
}

/* The prescan: a pid's first getcwd() before any chdir() of its own. */
static void prescan_call(struct builder *b, const struct rec *r)
{
	struct pidst *p = pid_get(b, r->pid);

	if (r->nlen == 5 && memcmp(r->name, "chdir", 5) == 0 && r->ret == 0) {
		if (p->start_cwd == NONE)
			p->chdir_seen = true;
	} else if (r->nlen == 6 && memcmp(r->name, "getcwd", 6) == 0 && r->ret > 0 &&
		   r->nargs > 0 && !p->chdir_seen && p->start_cwd == NONE) {
		const char *s;
		size_t len;
		if (arg_str(b, 0, r->arg[0], r->alen[0], &s, &len) == 1 && len && s[0] == '/')
			p->start_cwd = str_add(b, s, len);
	}
}

/* A line that is not a usable strace line (counted once, in the build). */
static void count_garbage(struct builder *b)
{
	if (!b->prescan)
		skip(b, &b->t->sum.skip_garbage);
}

/* One line of the log. */
static void parse_line(struct builder *b, const char *s, const char *e)
{
	int pid = 0;
	long long v;

	while (s < e && is_space(*s))
		s++;
	if (s == e)
		return;
	if (!b->prescan)
		b->t->sum.lines++;
	if (e - s > 5 && memcmp(s, "[pid", 4) == 0) {
		const char *c = memchr(s, ']', (size_t)(e - s));
		if (!c || !arg_int(s + 4, (size_t)(c - s - 4), &v)) {
			count_garbage(b);
			return;
		}
		pid = (int)v;
		s = c + 1;
	} else if (is_digit(*s)) {
		const char *c = s;
		while (c < e && is_digit(*c))
			c++;
		if (c < e && is_space(*c)) {
			arg_int(s, (size_t)(c - s), &v);
			pid = (int)v;
			s = c;
		}
	}
	while (s < e && is_space(*s))
		s++;
	/* A timestamp (-t, -tt, -ttt, -r): digits with ':' or '.'. */
	if (s < e && is_digit(*s)) {
		const char *c = s;
		bool stamp = false;
		while (c < e && (is_digit(*c) || *c == ':' || *c == '.'))
			stamp |= *c == ':' || *c == '.', c++;
		if (stamp && c < e && is_space(*c))
			s = c;
		while (s < e && is_space(*s))
			s++;
	}
	if (s == e) {
		count_garbage(b);
		return;
	}
	if (e - s >= 3 && memcmp(s, "---", 3) == 0) {
		if (!b->prescan)
			b->t->sum.other_lines++;
		struct pidst *q = pid_find(b, pid);
		if (q && !q->exited)
			b->last_pid = pid;
		signal_line(b, s, e);
		return;
	}
	if (e - s >= 3 && memcmp(s, "+++", 3) == 0) {
		if (!b->prescan)
			b->t->sum.other_lines++;
		struct pidst *q = pid_find(b, pid);
		if (q)
			q->exited = true;
		return;
	}
	bool resumed = e - s > 5 && memcmp(s, "<... ", 5) == 0;
	const char *nm = s;
	while (nm < e && (is_digit(*nm) || *nm == '_' || (*nm >= 'a' && *nm <= 'z') ||
			  (*nm >= 'A' && *nm <= 'Z')))
		nm++;
	if (!resumed && (nm == s || nm == e || *nm != '(')) {
		count_garbage(b);
		return;
	}
	struct pidst *p = pid_get(b, pid);
	if (!b->prescan && !p->exited)
		b->last_pid = pid;
	if (resumed) {
		const char *g = memchr(s, '>', (size_t)(e - s));
		if (!g || !p->unfinished) {
			count_garbage(b);
			return;
		}
		size_t rest = (size_t)(e - g - 1);
		char *j = scratch(b, &b->join, &b->joincap, p->ulen + rest + 1);
		memcpy(j, p->unfinished, p->ulen);
		memcpy(j + p->ulen, g + 1, rest);
		free(p->unfinished);
		p->unfinished = NULL;
		s = j;
		e = j + p->ulen + rest;
	}
	const char *u = e;
	while (u > s && is_space(u[-1]))
		u--;
	if (u - s >= 16 && memcmp(u - 16, "<unfinished ...>", 16) == 0) {
		if (p->unfinished) {
			free(p->unfinished);
			p->unfinished = NULL;
			count_garbage(b); /* its first half never resumed */
		}
		size_t n = (size_t)(u - 16 - s);
		p->unfinished = xrealloc(b, NULL, n + 1, 1);
		memcpy(p->unfinished, s, n);
		p->ulen = n;
		return;
	}
	struct rec r = { .pid = pid };
	if (!parse_call(s, e, &r)) {
		count_garbage(b);
		return;
	}
	if (b->prescan)
		prescan_call(b, &r);
	else
		handle_call(b, &r);
}

/* Every line of the file, once. */
static void parse_all(struct builder *b)
{
	if (!b->file)
		return;
	const char *s = b->file, *end = b->file + b->flen;

	b->line = 0;
	while (s < end) {
		const char *nl = memchr(s, '\n', (size_t)(end - s));
		const char *e = nl ? nl : end;
		b->line++;
		if (!memchr(s, '\0', (size_t)(e - s)))
			parse_line(b, s, e);
		else if (!b->prescan) {
			b->t->sum.lines++;
			count_garbage(b);
		}
		s = e + 1;
	}
	for (size_t i = 0; i < b->pidcap; i++) {
		struct pidst *p = &b->pids[i];
		if (p->used && p->unfinished) {
			free(p->unfinished);
			p->unfinished = NULL;
			count_garbage(b);
		}
	}
}

/* The directory at path t->str + off, learnt as existing; 0 if the model
 * disagrees. */
static uint32_t cwd_resolve(struct builder *b, uint32_t off)
{
	struct replay_trace *t = b->t;
	size_t n = strlen(t->str + off);
	char *copy = scratch(b, &b->tbuf, &b->tcap, n + 1);

	memcpy(copy, t->str + off, n + 1);
	struct kreq q = { .follow = true, .want = 0, .type = UDC_TYPE_DIR };
	struct wres r = know(b, ROOT, copy, n, &q);
	return r.err || t->objs[r.obj].type != UDC_TYPE_DIR ? 0 : r.obj;
}

/* The first pid's starting directory: its first getcwd() (before any
 * chdir()), or a synthetic "/cwd". */
static void cwd_start(struct builder *b)
{
	struct replay_trace *t = b->t;
	struct pidst *p = b->have_first ? pid_find(b, b->first_pid) : NULL;
	uint32_t off;

	if (p && p->start_cwd != NONE) {
		off = p->start_cwd;
	} else {
		t->sum.cwd_synthetic = 1;
		off = str_add(b, "/cwd", 4);
	}
	snprintf(t->sum.cwd, sizeof(t->sum.cwd), "%s", t->str + off);
	b->init_cwd = cwd_resolve(b, off);
	if (!b->init_cwd)
		b->init_cwd = ROOT;
}

/* ---------------------------------------------------------------------- */
/* Reading the file. */

static int read_fd(int fd, char **buf, size_t *len)
{
	size_t cap = 1 << 16, n = 0;
	char *p = malloc(cap);

	if (!p)
		return -ENOMEM;
	for (;;) {
		if (n == cap) {
			char *q = cap > SIZE_MAX / 2 ? NULL : realloc(p, cap * 2);
			if (!q) {
				free(p);
				return -ENOMEM;
			}
			p = q;
			cap *= 2;
		}
		ssize_t r = read(fd, p + n, cap - n);
		if (r < 0) {
			if (errno == EINTR)
				continue;
			int e = -errno;
			free(p);
			return e;
		}
		if (r == 0)
			break;
		n += (size_t)r;
	}
	*buf = p;
	*len = n;
	return 0;
}

/* The whole log into *buf, gunzipped by a `gzip -dc` child if it is gzip. */
static int read_log(const char *path, char **buf, size_t *len, char *err, size_t errlen)
{
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	unsigned char magic[2];

	if (fd < 0) {
		int e = errno;
		snprintf(err, errlen, "cannot open %s: %s", path, strerror(e));
		return -e;
	}
	ssize_t m = pread(fd, magic, 2, 0);
	if (m != 2 || magic[0] != 0x1f || magic[1] != 0x8b) {
		int r = read_fd(fd, buf, len);
		close(fd);
		if (r)
			snprintf(err, errlen, "cannot read %s: %s", path, strerror(-r));
		return r;
	}

	int pfd[2];
	if (pipe2(pfd, O_CLOEXEC)) {
		int e = errno;
		close(fd);
		snprintf(err, errlen, "pipe: %s", strerror(e));
		return -e;
	}
	posix_spawn_file_actions_t fa;
	posix_spawn_file_actions_init(&fa);
	posix_spawn_file_actions_adddup2(&fa, fd, 0);
	posix_spawn_file_actions_adddup2(&fa, pfd[1], 1);
	char *argv[] = { (char *)"gzip", (char *)"-dc", NULL };
	pid_t pid;
	int e = posix_spawnp(&pid, "gzip", &fa, NULL, argv, environ);
	posix_spawn_file_actions_destroy(&fa);
	close(fd);
	close(pfd[1]);
	if (e) {
		close(pfd[0]);
		snprintf(err, errlen, "cannot run gzip -dc for %s: %s", path, strerror(e));
		return -e;
	}
	int r = read_fd(pfd[0], buf, len);
	close(pfd[0]);
	int status;
	while (waitpid(pid, &status, 0) < 0 && errno == EINTR)
		;
	if (r) {
		snprintf(err, errlen, "cannot read gzip -dc %s: %s", path, strerror(-r));
		return r;
	}
	if (!WIFEXITED(status) || WEXITSTATUS(status) != 0) {
		free(*buf);
		*buf = NULL;
		snprintf(err, errlen, "gzip -dc %s failed (%s %d)", path,
			 WIFEXITED(status) ? "exit status" : "signal",
			 WIFEXITED(status) ? WEXITSTATUS(status) : WTERMSIG(status));
		return -EIO;
	}
	return 0;
}

/* ---------------------------------------------------------------------- */
/* The public calls: loading. */

/* See replay.h. */
void replay_free(struct replay_trace *t)
{
	if (!t)
		return;
	free(t->str);
	free(t->objs);
	free(t->slots);
	free(t->hash);
	free(t->ev);
	free(t);
}

/* Free the builder and everything it owns (not the trace). */
static void builder_free(struct builder *b)
{
	for (size_t i = 0; i < b->pidcap; i++) {
		free(b->pids[i].fds);
		free(b->pids[i].unfinished);
	}
	free(b->pids);
	free(b->walkbuf);
	free(b->join);
	for (int i = 0; i < 3; i++)
		free(b->sbuf[i]);
	free(b->tbuf);
	free(b->file);
	free(b);
}

/* Forget the prescan's per-pid state but its start_cwd. */
static void pids_reset(struct builder *b)
{
	for (size_t i = 0; i < b->pidcap; i++) {
		struct pidst *p = &b->pids[i];
		if (!p->used)
			continue;
		free(p->fds);
		free(p->unfinished);
		uint32_t sc = p->start_cwd;
		int pid = p->pid;
		*p = (struct pidst){ .pid = pid, .used = true, .start_cwd = sc };
	}
	b->last_pid = b->first_pid;
}

/* Parse the log in b->file into b->t: 0, or -ENOMEM / -EFBIG (from the
 * longjmp() of xrealloc() and too_big(); b is not changed here after
 * setjmp(), and everything allocated is reachable from b). */
static int build(struct builder *b)
{
	if (setjmp(b->fail))
		return b->err;
	b->walkbuf = xrealloc(b, NULL, UDC_PATH_MAX + 1, 1);
	obj_new(b, UDC_TYPE_UNKNOWN, 0); /* objs[0]: "absent" */
	uint32_t root = obj_new(b, UDC_TYPE_DIR, OBJ_ORIGINAL | OBJ_SURE);
	b->t->objs[root].parent = b->t->objs[root].init_parent = root;

	/* The prescan learns each pid's first getcwd(); then the build. */
	b->prescan = true;
	parse_all(b);
	pids_reset(b);
	b->prescan = false;
	cwd_start(b);
	parse_all(b);
	return 0;
}

/* See replay.h: read (read_log), build (build), report. */
int replay_load(const char *path, struct replay_trace **out, char *err, size_t errlen)
{
	char dummy[8];

	if (!err || !errlen) {
		err = dummy;
		errlen = sizeof(dummy);
	}
	err[0] = '\0';
	if (!path || !out) {
		snprintf(err, errlen, "replay_load: NULL argument");
		return -EINVAL;
	}
	*out = NULL;
	struct builder *b = calloc(1, sizeof(*b));
	struct replay_trace *t = calloc(1, sizeof(*t));
	if (!b || !t) {
		free(b);
		free(t);
		snprintf(err, errlen, "out of memory");
		return -ENOMEM;
	}
	b->t = t;
	int r = read_log(path, &b->file, &b->flen, err, errlen);
	if (r) {
		free(t);
		free(b);
		return r;
	}
	r = build(b);
	if (r) {
		snprintf(err, errlen, "%s: %s", path,
			 r == -EFBIG ? "too large (4 GiB of model data)" : "out of memory");
		replay_free(b->t);
		builder_free(b);
		return r;
	}
	t = b->t;
	if (t->sum.syscalls_parsed == 0) {
		snprintf(err, errlen, "%s: no strace syscall lines (%" PRIu64 " lines read)", path,
			 t->sum.lines);
		replay_free(t);
		builder_free(b);
		return -EINVAL;
	}
	t->sum.objects = t->nobjs - 1;
	for (size_t i = 1; i < t->nobjs; i++)
		if (t->objs[i].flags & OBJ_ORIGINAL)
			t->sum.original_objects++;
	t->sum.names = t->nslots;
	builder_free(b);
	*out = t;
	return 0;
}

/* See replay.h. */
void replay_summary(const struct replay_trace *t, struct replay_summary *s)
{
	if (!s)
		return;
	if (!t) {
		memset(s, 0, sizeof(*s));
		return;
	}
	*s = t->sum;
}

/* See replay.h. */
const char *replay_kind_name(unsigned kind)
{
	static const char *const names[REPLAY_NR_KINDS] = {
		"lookup", "create", "mkdir", "link", "unlink", "rmdir", "rename",
	};

	return kind < REPLAY_NR_KINDS ? names[kind] : "?";
}

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
	uint64_t span;	       /* inos of the log's own objects: id + pass * span */
	uint64_t calls, links; /* backend calls in the current walk */
	uint64_t since_sample;
};

/* The ino of object o in this pass.  Objects that exist before the log keep
 * their id; objects the log makes get new inos in each pass. */
static udc_ino run_ino(const struct run *r, uint32_t o)
{
	if (r->t->objs[o].flags & OBJ_ORIGINAL)
		return o;
	return o + (uint64_t)r->pass * r->span;
}

/* The object with ino i in this pass, or 0. */
static uint32_t run_obj(const struct run *r, udc_ino i)
{
	if (i == UDC_INO_NONE)
		return 0;
	uint64_t o = (i - 1) % r->span + 1, pass = (i - 1) / r->span;
	if (o >= r->t->nobjs)
		return 0;
	bool orig = r->t->objs[o].flags & OBJ_ORIGINAL;
	return (orig && pass == 0) || (!orig && pass == r->pass) ? (uint32_t)o : 0;
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
 * Between passes: put the store back to the log's start and tell the cache
 * every difference, as an embedder would after restoring a snapshot.
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

	struct run r = { .t = t, .impl = impl, .res = out, .span = t->nobjs };
	r.cur = malloc((t->nslots ? t->nslots : 1) * sizeof(*r.cur));
	r.parent = malloc(t->nobjs * sizeof(*r.parent));
	r.buf = malloc(UDC_PATH_MAX + 1);
	if (!r.cur || !r.parent || !r.buf) {
		free(r.cur);
		free(r.parent);
		free(r.buf);
		return -ENOMEM;
	}
	for (size_t s = 0; s < t->nslots; s++)
		r.cur[s] = t->slots[s].init;
	for (size_t o = 0; o < t->nobjs; o++)
		r.parent[o] = t->objs[o].init_parent ? t->objs[o].init_parent : ROOT;

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
			run_reset(&r); /* with the old pass's inos */
			r.pass = p;
		}
		double t0 = now_seconds();
		for (size_t i = 0; i < t->nev && rc == 0; i++) {
			const struct revent *e = &t->ev[i];
			if (e->kind == REPLAY_LOOKUP)
				rc = run_lookup_event(&r, e);
			else
				run_mutation(&r, e);
			if (++r.since_sample >= SAMPLE_EVERY) {
				r.since_sample = 0;
				run_sample(&r);
			}
		}
		out->seconds = now_seconds() - t0;
		run_sample(&r);
	}
	out->wrong += wrong;
	out->cache_errors += cache_errors;
	if (first[0])
		memcpy(out->first_wrong, first, sizeof(first));
	if (bmax > out->bytes_used_max)
		out->bytes_used_max = bmax;
	out->passes = passes;
	out->syscalls_parsed = t->sum.syscalls_parsed;
	out->lines_skipped = t->sum.lines_skipped;

	impl->destroy(r.c);
	free(r.cur);
	free(r.parent);
	free(r.buf);
	return rc;
}
