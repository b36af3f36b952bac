/* SPDX-License-Identifier: MIT */
/*
 * engine/walk.c - udc_walk(): path resolution, consistent with renames.
 *
 * Owns: nothing shared; a walk's state (the path being walked, with symlink
 * targets spliced in) is its own.
 *
 * A walk resolves each component with resolve_name() (cache first, backend
 * on a miss), except a ".." after a directory the pass resolved itself:
 * that goes back to the directory the pass came from (struct walk_up), as the
 * kernel's walk follows the parent of the dentry it came through.  Only a
 * ".." above where the pass started (or past WALK_UP_MAX levels) asks the
 * cache's record of the parent, and the backend.  Until issue 14's stop 25
 * every ".." asked the record: a directory whose record was lost or never
 * learnt cost a backend call (gcc x313 at 1 MB: about 5,000 a pass).
 * Directory renames and rmdirs bump cache->rename_seq; a walk
 * reads it before starting and checks it at the end, and walks again when
 * it moved, so the answer is that of a path that existed as a whole while
 * no rename or rmdir ran.
 *
 * After WALK_OPTIMISTIC_TRIES retries a walk falls back to passes under
 * rename_lock, which holds renames and rmdirs off; but a locked pass never
 * calls the backend, because an embedder may well hold its own store lock
 * while it tells the cache of a rename (and its backend takes that lock):
 * a rename waiting for a walk waiting for the backend would deadlock.  So
 * a locked pass uses the cache only (and the symlink targets this walk has
 * read); when it needs the backend it stops, the walk drops the lock, asks
 * the backend (which caches the answer, or the walk keeps the target), and
 * starts a new locked pass.  Each round learns one more component (the
 * cache keeps the answer, or, when it does not, the walk does, for as long
 * as no rename or rmdir runs: answers_seq), so the walk ends; after
 * WALK_LOCKED_ROUNDS it gives up with -EAGAIN.
 *
 * A writer can be preempted with rename_seq odd (it holds rename_lock
 * then): a walk that finds the sequence odd spins a little, then waits on
 * rename_lock itself, asleep, so that the writer gets the CPU back
 * (rename_seq_begin).  ck_sequence_read_begin spins until the sequence is
 * even: with 64 threads on 2 cores, half the CPU went to walks spinning
 * through a preempted rename's timeslice (issue 16, stop 36).
 *
 * Locking:
 *   rename_lock, around a locked (cache-only) pass, and taken and dropped
 *   by a walk that waits out a rename (never in a read-side section); the
 *   same lock the writers of rename_seq take.  No backend call is made
 *   with it held.
 *
 * Ordering:
 *   rename_seq_begin() (a load followed by a read fence, as
 *   ck_sequence_read_begin) and
 *   ck_sequence_read_retry() (a read fence followed by a load) pair with
 *   ck_sequence_write_begin/end in udc_rename and udc_rmdir: every cache
 *   read of the walk falls between them.
 */
#include "engine/internal.h"

#include <errno.h>

/* What a locked pass stopped for. */
enum walk_need {
	NEED_NAME = 1,    /* (need_dir, need_name) must be resolved */
	NEED_LINK = 2,    /* the target of symlink need_ino must be read */
};

struct walk_link {
	udc_ino ino;
	size_t len;
	char *target;
};

/* A backend answer a locked pass needed and the cache did not keep (".."
 * answered -ENOENT, a negative declined, a positive without memory). */
struct walk_answer {
	udc_ino dir;
	uint8_t len;
	char name[UDC_NAME_MAX];
	int result;                 /* 0 or -ENOENT */
	struct udc_attr attr;
};

#define WALK_ANSWERS 8

struct walk {
	struct udc_cache *c;
	const struct udc_call *call;
	unsigned flags;
	bool locked;      /* this pass holds rename_lock: cache only */
	char *buf;        /* the path with symlinks spliced in; NULL until one is */
	/* symlink targets read by this walk (at most WALK_MAX_SYMLINKS + 1) */
	struct walk_link links[WALK_MAX_SYMLINKS + 1];
	unsigned nr_links;
	/* what a locked pass needs from the backend */
	udc_ino need_dir, need_ino;
	size_t need_len;
	char need_name[UDC_NAME_MAX];
	/* the backend's answers to the locked passes' needs, valid while no
	 * rename or rmdir ran since answers_seq (rename_seq then) */
	struct walk_answer answers[WALK_ANSWERS];
	unsigned nr_answers;
	unsigned answers_seq;
};

/* The header only: links[], answers[] and need_name are read below their
 * counts (nr_links, nr_answers, need_len), which start at 0.  Zeroing the
 * whole struct (1.3 KiB) was a quarter of a cached walk's instructions. */
static void walk_init(struct walk *w, struct udc_cache *c, const struct udc_call *call,
		      unsigned flags)
{
	w->c = c;
	w->call = call;
	w->flags = flags;
	w->locked = false;
	w->buf = NULL;
	w->nr_links = 0;
	w->need_dir = w->need_ino = UDC_INO_NONE;
	w->need_len = 0;
	w->nr_answers = 0;
	w->answers_seq = 0;
}

static void walk_release(struct walk *w)
{
	if (w->buf)   /* rare (a symlink spliced in): free(NULL) is a call too */
		free(w->buf);
	for (unsigned i = 0; i < w->nr_links; i++)
		free(w->links[i].target);
}

/*
 * A directory's own attr, for walks that end on it ("/", ".", ".."): its
 * cookie is read only if the walk ends there (dir_attr_settle), not at
 * every walk's start (a lookup of the directory's object, 270
 * instructions of a 1,500-instruction walk of cached names).  The flag
 * lives in the attr's reserved word, inside a walk only.
 */
#define WALK_ATTR_COOKIE_UNREAD (1u << 31)

static struct udc_attr dir_attr(udc_ino ino)
{
	return (struct udc_attr){ .ino = ino, .type = UDC_TYPE_DIR,
				  .flags = WALK_ATTR_COOKIE_UNREAD };
}

static void dir_attr_settle(struct udc_cache *c, struct udc_attr *a)
{
	if (!(a->flags & WALK_ATTR_COOKIE_UNREAD))
		return;
	a->flags = 0;
	rcu_read_lock();
	struct udc_dir *d = dir_find_rcu(c, a->ino);
	if (d)
		a->cookie = dir_cookie_rcu(d);
	rcu_read_unlock();
}

/*
 * Replace the walked path by target + rest (rest starts at the '/' after
 * the link's component, or is empty).  Return the new length or -errno.
 */
static ssize_t splice_link(struct walk *w, const struct walk_link *l, const char *rest,
			   size_t rlen)
{
	if (l->len + rlen > UDC_PATH_MAX)
		return -ENAMETOOLONG;
	if (!w->buf && !(w->buf = malloc(UDC_PATH_MAX)))
		return -ENOMEM;
	memmove(w->buf + l->len, rest, rlen);   /* rest may lie in w->buf itself */
	memcpy(w->buf, l->target, l->len);
	return (ssize_t)(l->len + rlen);
}

static const struct walk_link *link_known(const struct walk *w, udc_ino ino)
{
	for (unsigned i = 0; i < w->nr_links; i++)
		if (w->links[i].ino == ino)
			return &w->links[i];
	return NULL;
}

/* Read ino's target from the backend into w->links; 0 or -errno. */
static int link_read(struct walk *w, udc_ino ino)
{
	struct udc_cache *c = w->c;

	if (w->nr_links == sizeof(w->links) / sizeof(w->links[0]))
		return -ELOOP;
	char *t = malloc(UDC_PATH_MAX);
	if (!t)
		return -ENOMEM;
	ssize_t n = c->backend->readlink(w->call ? w->call->ctx : NULL, ino, t, UDC_PATH_MAX);
	/* The backend's answer is checked: an errno is -1..-4095, a target
	 * fits the buffer and holds no NUL; anything else is -EIO. */
	int r = n < 0 ? (n >= -4095 ? (int)n : -EIO)
		: n == 0 ? -ENOENT
		: n > UDC_PATH_MAX || memchr(t, '\0', (size_t)n) ? -EIO : 0;
	if (r) {
		free(t);
		return r;
	}
	w->links[w->nr_links++] = (struct walk_link){ .ino = ino, .len = (size_t)n, .target = t };
	return 0;
}

/* The answer kept for (dir, name) by an earlier round, or NULL. */
static const struct walk_answer *answer_known(const struct walk *w, udc_ino dir,
					      const char *name, size_t len)
{
	for (unsigned i = 0; i < w->nr_answers; i++) {
		const struct walk_answer *an = &w->answers[i];
		if (an->dir == dir && an->len == len && memcmp(an->name, name, len) == 0)
			return an;
	}
	return NULL;
}

/* Keep the backend's answer @r (@a) to the locked pass's need, obtained
 * with rename_seq at @seq; answers older than a rename or rmdir go. */
static void answer_keep(struct walk *w, unsigned seq, int r, const struct udc_attr *a)
{
	if (w->nr_answers && seq != w->answers_seq)
		w->nr_answers = 0;
	w->answers_seq = seq;
	if (w->nr_answers == WALK_ANSWERS)
		return;   /* a path that needs more: the next rounds ask again */
	struct walk_answer *an = &w->answers[w->nr_answers++];
	an->dir = w->need_dir;
	an->len = (uint8_t)w->need_len;
	memcpy(an->name, w->need_name, w->need_len);
	an->result = r;
	an->attr = r == 0 ? *a : (struct udc_attr){ 0 };
}

/* One component: the backend may be asked unless the pass is locked. */
static int walk_component(struct walk *w, udc_ino dir, const char *name, size_t len,
			  struct udc_attr *a)
{
	struct udc_cache *c = w->c;

	if (!w->locked)
		return resolve_name(c, dir, name, len, w->call, a, NULL, NULL);
	int r = name_is_dotdot(name, len)
			? lookup_dotdot(c, dir, a)
			: lookup_name(c, dir, name, len, hash_name(&c->key, dir, name, len), a, NULL, NULL);
	if (r == UDC_POSITIVE)
		return 0;
	if (r == UDC_NEGATIVE)
		return -ENOENT;
	const struct walk_answer *an = answer_known(w, dir, name, len);
	if (an) {
		if (an->result == 0)
			*a = an->attr;
		return an->result;
	}
	w->need_dir = dir;
	w->need_len = len;
	memcpy(w->need_name, name, len);
	return NEED_NAME;
}

/*
 * The directories a pass walked down from, for "..": the last WALK_UP_MAX,
 * newest on top.  A ".." after a name the pass resolved goes back to the
 * directory it resolved it in: that name was the directory's link in its
 * parent at that moment (a directory has one), and the pass's answer is
 * only kept if no rename or rmdir ran meanwhile (udc_walk).  Deeper, or
 * above where the pass started, ".." is asked of the cache (the parent
 * record) and the backend.
 */
#define WALK_UP_MAX 16

struct walk_up {
	struct udc_attr dir[WALK_UP_MAX];   /* a ring: dir[top - 1] is the newest */
	unsigned top, n;                    /* n: how many are there (<= WALK_UP_MAX) */
};

static void up_push(struct walk_up *u, const struct udc_attr *a)
{
	u->dir[u->top] = *a;
	u->top = (u->top + 1) % WALK_UP_MAX;
	if (u->n < WALK_UP_MAX)
		u->n++;
}

static struct udc_attr up_pop(struct walk_up *u)
{
	udc_assert(u->n > 0);
	u->n--;
	u->top = (u->top + WALK_UP_MAX - 1) % WALK_UP_MAX;
	return u->dir[u->top];
}

/* One pass over the path: 0, -errno, or (locked) a NEED_* code. */
static int walk_once(struct walk *w, udc_ino start, const char *path, size_t len,
		     struct udc_attr *out)
{
	struct udc_cache *c = w->c;
	unsigned nlinks = 0;
	struct udc_attr cur;
	struct walk_up up;   /* dir[] is read below n only: not zeroed (384 bytes) */
	struct path_comp comp;
	size_t i = 0;
	int r;

	if (path[0] == '/')
		start = c->root;
	cur = dir_attr(start);
	up.top = up.n = 0;

	while ((r = walk_next_name(path, len, &i, cur.type, &comp)) > 0) {
		struct udc_attr a;
		bool dotdot = name_is_dotdot(comp.name, comp.len);
		if (dotdot && cur.ino == c->root) {
			a = dir_attr(c->root);
		} else if (dotdot && up.n && cur.type == UDC_TYPE_DIR) {
			a = up_pop(&up);
		} else {
			/* Not known to be a directory (UDC_TYPE_UNKNOWN): its ".."
			 * is asked, and may not exist; the ring's levels no
			 * longer match the path after it. */
			if (dotdot)
				up.n = 0;
			if ((r = walk_component(w, cur.ino, comp.name, comp.len, &a)))
				return r;
		}

		bool follow = !comp.last || comp.slash_after || (w->flags & UDC_WALK_FOLLOW);
		if (a.type != UDC_TYPE_SYMLINK || !follow) {
			if (!dotdot)
				up_push(&up, &cur);
			cur = a;
			continue;
		}
		if (++nlinks > WALK_MAX_SYMLINKS || !c->backend || !c->backend->readlink)
			return -ELOOP;
		const struct walk_link *l = link_known(w, a.ino);
		if (!l) {
			if (w->locked) {
				w->need_ino = a.ino;
				return NEED_LINK;
			}
			if ((r = link_read(w, a.ino)))
				return r;
			l = &w->links[w->nr_links - 1];
		}
		ssize_t nlen = splice_link(w, l, path + comp.end, len - comp.end);
		if (nlen < 0)
			return (int)nlen;
		path = w->buf;
		len = (size_t)nlen;
		i = 0;
		if (path[0] == '/') {
			cur = dir_attr(c->root);
			up.n = 0;
		}
		/* a relative target resolves from the link's directory: cur,
		 * with the directories above it as they were */
	}
	if (r < 0)
		return r;

	/* A trailing '/' asks for a directory. */
	if (path_wants_dir(path, len) && !type_may_have_children(cur.type))
		return -ENOTDIR;
	if (out) {
		dir_attr_settle(c, &cur);   /* read within the pass (see udc_walk) */
		*out = cur;
	}
	return 0;
}

#define RENAME_SEQ_SPINS 64   /* looks at an odd rename_seq before waiting on the lock */

/* ck_sequence_read_begin, but a rename or rmdir still running after a
 * short spin is waited for on rename_lock (which it holds while rename_seq
 * is odd), asleep.  Not under rcu_read_lock: it may sleep. */
static unsigned rename_seq_begin(struct udc_cache *c)
{
	for (unsigned looks = 1;; looks++) {
		unsigned seq = ck_pr_load_uint(&c->rename_seq.sequence);
		if (__builtin_expect(!(seq & 1), 1)) {
			ck_pr_fence_load();   /* as ck_sequence_read_begin: Ordering */
			return seq;
		}
		if (looks % RENAME_SEQ_SPINS) {
			ck_pr_stall();
		} else {
			udc_mutex_lock(&c->rename_lock);
			udc_mutex_unlock(&c->rename_lock);
		}
	}
}

/* The locked fallback: cache-only passes, backend calls between them. */
static int walk_under_rename_lock(struct walk *w, udc_ino start, const char *path, size_t len,
		       struct udc_attr *out)
{
	struct udc_cache *c = w->c;

	for (unsigned round = 0; round < WALK_LOCKED_ROUNDS; round++) {
		udc_mutex_lock(&c->rename_lock);
		/* answers from before a rename or rmdir are not used */
		if (w->nr_answers && ck_sequence_read_retry(&c->rename_seq, w->answers_seq))
			w->nr_answers = 0;
		w->locked = true;
		int r = walk_once(w, start, path, len, out);
		w->locked = false;
		udc_mutex_unlock(&c->rename_lock);

		if (r == NEED_LINK) {
			r = link_read(w, w->need_ino);
		} else if (r == NEED_NAME) {
			if (!c->backend)
				return -EAGAIN;
			struct udc_attr a;
			unsigned seq = rename_seq_begin(c);
			r = resolve_name(c, w->need_dir, w->need_name, w->need_len, w->call, &a, NULL, NULL);
			/*
			 * The answer is usually cached now; when it is not (".."
			 * answered -ENOENT, a negative declined, no memory for
			 * it), the next passes use it as long as no rename or
			 * rmdir ran since it was asked: a walk's consistency.
			 */
			if (r == 0 || r == -ENOENT) {
				answer_keep(w, seq, r, &a);
				r = 0;
			}
		} else {
			return r;
		}
		if (r)
			return r;   /* the backend failed: that is the answer */
		stat_add(thread_stats(c), walk_retries, 1);
	}
	return -EAGAIN;
}

int udc_walk(udc_cache *c, udc_ino start, const char *path, size_t len, unsigned flags,
	     const struct udc_call *call, struct udc_attr *out)
{
	int check = walk_check(c, start, path, len, flags);

	if (check)
		return check;
	(void)thread_enter_stats(c);   /* the walk's lookups find the slot by the hint */

	struct walk walk;   /* ~1.3 KiB: walk_init writes its header only */
	struct walk *w = &walk;
	struct udc_attr a;
	int r = -EAGAIN;
	bool done = false;

	walk_init(w, c, call, flags);
	for (unsigned tries = 0; tries < WALK_OPTIMISTIC_TRIES && !done; tries++) {
		unsigned seq = rename_seq_begin(c);
		r = walk_once(w, start, path, len, &a);
		done = !ck_sequence_read_retry(&c->rename_seq, seq);
		if (!done)
			stat_add(thread_stats(c), walk_retries, 1);
	}
	if (!done)
		r = walk_under_rename_lock(w, start, path, len, &a);
	walk_release(w);
	if (r == 0 && out)
		*out = a;
	return r;
}
