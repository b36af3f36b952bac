/* SPDX-License-Identifier: MIT */
/*
 * stress/replay/calls.c - one strace call, understood: the per-pid state
 * (cwd, fd table, the dup heuristics) and the facts and events each call
 * the replay understands gives the model (see model.c's top comment for
 * the rules).
 *
 * Owns: the builder's per-pid table (struct pidst) and its scratch string
 * buffers.
 *
 * Locking: none (one replay_load() per builder).
 * Ordering: none.
 */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>

#include "common/path.h"
#include "stress/replay/internal.h"

#define MAX_FD 65536 /* larger fd numbers are treated as unknown */

/* See internal.h. */
int arg_str(struct builder *b, int k, const char *a, size_t len, const char **out, size_t *olen)
{
	return str_decode(a, len, scratch(b, &b->sbuf[k], &b->scap[k], len + 1), out, olen);
}

/* ---------------------------------------------------------------------- */
/* Processes. */

struct pidst *pid_find(struct builder *b, int pid)
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



/*
 * The state of pid.  In the build, on first sight: a pid whose first
 * getcwd() came before any chdir() starts there; the first pid otherwise
 * starts in init_cwd; any other inherits cwd and fds from the pid of the
 * previous line, or from the first pid if that one has exited.
 */
struct pidst *pid_get(struct builder *b, int pid)
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
void skip(struct builder *b, uint64_t *why)
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
/* The call's flags argument (openat2: open_how's flags), or creat's implied flags. */
static unsigned long call_flags(const struct sysdesc *d, const struct rec *r)
{
	unsigned long flags = 0;

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
	return flags;
}

/* A call on an fd, not a path: learn the fd's type (fstat and the like). */
static void call_on_fd(struct call *c)
{
	struct builder *b = c->b;
	const struct sysdesc *d = c->d;
	const struct rec *r = c->r;
	long long fd;

	b->t->sum.fd_calls++;
	if (d->op == OP_STAT && r->ret == 0 && d->dirfd >= 0 &&
	    arg_int(r->arg[d->dirfd], r->alen[d->dirfd], &fd) && d->aux < r->nargs) {
		uint32_t o = fd_peek(c->p, fd);
		uint8_t ty = stat_type(r->arg[d->aux], r->alen[d->aux]);
		if (o && ty != UDC_TYPE_UNKNOWN) {
			struct wres w = { .obj = o, .slot = NONE };
			struct kreq q = { .want = 0, .type = ty };
			if (ty != UDC_TYPE_SYMLINK)
				know_final(b, &w, &q);
		}
	}
}

/* A failed call (not open or creat): what its errno says of the path. */
static void call_failed(struct call *c, uint32_t start, const char *path, size_t len,
			bool follow)
{
	const struct sysdesc *d = c->d;
	uint8_t type;
	int want = failure_says(d, c->r->err, c->flags, &type);

	if (want == 1) {
		skip(c->b, &c->b->t->sum.skip_errno);
		return;
	}
	if (want == -ENOENT && (d->op == OP_MKDIR || d->op == OP_SYMLINK || d->op == OP_MKNOD))
		parent_missing(c, start, path, len);
	else
		do_lookup(c, start, path, len, follow, c->flags, want, type);
}

/* rename and link: the second path, then the change. */
static void call_two_paths(struct call *c, uint32_t start, const char *path, size_t len,
			   bool follow)
{
	struct builder *b = c->b;
	const struct sysdesc *d = c->d;
	const char *path2;
	size_t len2;
	uint32_t start2;

	if (d->op == OP_RENAME && (c->flags & (RENAME_EXCHANGE | RENAME_WHITEOUT))) {
		skip(b, &b->t->sum.skip_unsupported);
		return;
	}
	if (!call_path(c, d->path2, 1, &path2, &len2))
		return;
	if (!call_start(c, d->dirfd2, path2, &start2)) {
		skip(b, &b->t->sum.skip_dirfd);
		return;
	}
	if (d->op == OP_RENAME) {
		do_rename(c, start, path, len, start2, path2, len2);
		return;
	}
	struct kreq q = { .follow = follow, .want = 0 };
	struct wres w = call_lookup(c, start, path, len, &q);
	if (w.err || b->t->objs[w.obj].type == UDC_TYPE_DIR) {
		CONFLICT(b);
		return;
	}
	make_name(c, start2, path2, len2, REPLAY_LINK, 0, w.obj, NULL, 0);
}

/* A call that succeeded (or an open that failed): what it did to the path. */
static void call_done(struct call *c, uint32_t start, const char *path, size_t len, bool follow)
{
	const struct sysdesc *d = c->d;
	const struct rec *r = c->r;
	unsigned long flags = c->flags;

	switch (d->op) {
	case OP_OPEN:
	case OP_CREAT:
		do_open(c, start, path, len, flags);
		break;
	case OP_STAT: {
		uint8_t ty = d->aux < r->nargs ? stat_type(r->arg[d->aux], r->alen[d->aux]) :
						 UDC_TYPE_UNKNOWN;
		if (ty == UDC_TYPE_SYMLINK && follow)
			ty = UDC_TYPE_UNKNOWN;
		do_lookup(c, start, path, len, follow, flags, 0, ty);
		break;
	}
	case OP_EXEC:
		do_lookup(c, start, path, len, true, flags, 0, UDC_TYPE_REG);
		fd_weaken(c->p); /* O_CLOEXEC fds are gone, which ones is not traced */
		break;
	case OP_CHDIR:
		do_lookup(c, start, path, len, true, flags, 0, UDC_TYPE_DIR);
		break;
	case OP_ACCESS:
	case OP_PATH:
	case OP_READLINK:
		do_lookup(c, start, path, len, follow, flags, 0,
			  path[len - 1] == '/' ? UDC_TYPE_DIR : UDC_TYPE_UNKNOWN);
		break;
	case OP_UNLINK:
		do_remove(c, start, path, len, (flags & AT_REMOVEDIR) != 0);
		break;
	case OP_RMDIR:
		do_remove(c, start, path, len, true);
		break;
	case OP_MKDIR:
		make_name(c, start, path, len, REPLAY_MKDIR, UDC_TYPE_DIR, 0, NULL, 0);
		break;
	case OP_MKNOD: {
		uint8_t ty = d->aux < r->nargs ? mode_type(r->arg[d->aux], r->alen[d->aux]) :
						 UDC_TYPE_UNKNOWN;
		make_name(c, start, path, len, REPLAY_CREATE,
			  ty == UDC_TYPE_UNKNOWN ? UDC_TYPE_REG : ty, 0, NULL, 0);
		break;
	}
	case OP_SYMLINK: {
		const char *tg = NULL;
		size_t tlen = 0;
		if (d->aux >= r->nargs ||
		    arg_str(c->b, 1, r->arg[d->aux], r->alen[d->aux], &tg, &tlen) != 1)
			tg = NULL; /* unknown or truncated: a synthetic target */
		make_name(c, start, path, len, REPLAY_CREATE, UDC_TYPE_SYMLINK, 0, tg, tlen);
		break;
	}
	case OP_RENAME:
	case OP_LINK:
		call_two_paths(c, start, path, len, follow);
		break;
	default:
		skip(c->b, &c->b->t->sum.skip_unsupported);
	}
}

void handle_call(struct builder *b, const struct rec *r)
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
	unsigned long flags = call_flags(d, r);
	const char *path;
	size_t len;
	uint32_t start;

	c.flags = flags;
	if (d->op == OP_GETCWD)
		return; /* used by the prescan only */
	if (d->path >= r->nargs) {
		skip(b, &t->sum.skip_path);
		return;
	}
	int k = arg_str(b, 0, r->arg[d->path], r->alen[d->path], &path, &len);
	if ((k == 1 && len == 0 && (flags & AT_EMPTY_PATH) && d->op != OP_OPEN) ||
	    (k == 0 && d->op == OP_PATH && d->dirfd >= 0)) {
		call_on_fd(&c);
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
	if (r->ret < 0 && d->op != OP_OPEN && d->op != OP_CREAT)
		call_failed(&c, start, path, len, follow);
	else
		call_done(&c, start, path, len, follow);
}

