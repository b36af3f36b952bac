/* SPDX-License-Identifier: MIT */
/*
 * engine/walk.c - udc_walk(): path resolution, consistent with renames.
 *
 * Owns: nothing shared; a walk's state (the path being walked, with symlink
 * targets spliced in) is its own.
 *
 * A walk resolves each component with resolve_name() (cache first, backend
 * on a miss).  Directory renames and rmdirs bump cache->rename_seq; a walk
 * reads it before starting and checks it at the end, and walks again when
 * it moved, so the answer is that of a path that existed as a whole while
 * no rename or rmdir ran.  After WALK_OPTIMISTIC_TRIES retries a walk takes
 * rename_lock, which holds renames and rmdirs off for one pass, so a walk
 * always ends (Linux's rename_lock fallback).  The backend must therefore
 * not call udc_rename() or udc_rmdir() on the same cache from inside a
 * lookup.
 *
 * Locking:
 *   rename_lock, only in the fallback pass; the same lock the writers of
 *   rename_seq take, outermost (resolve_name takes stripes under it).
 *
 * Ordering:
 *   ck_sequence_read_begin() (a load followed by a read fence) and
 *   ck_sequence_read_retry() (a read fence followed by a load) pair with
 *   ck_sequence_write_begin/end in udc_rename and udc_rmdir: every cache
 *   read of the walk falls between them.
 */
#include "engine/internal.h"

#include <errno.h>

struct walk {
	struct udc_cache *c;
	const struct udc_call *call;
	unsigned flags;
	char *buf;        /* the path with symlinks spliced in; NULL until one is */
	char *link;       /* readlink's target */
};

static void walk_release(struct walk *w)
{
	free(w->buf);
	free(w->link);
}

/* A directory's own attr, for walks that end on it ("/", ".", ".."). */
static struct udc_attr dir_attr(struct udc_cache *c, udc_ino ino)
{
	struct udc_attr a = { .ino = ino, .type = UDC_TYPE_DIR };

	rcu_read_lock();
	struct udc_dir *d = dir_find_rcu(c, ino);
	if (d)
		a.cookie = atomic_load_explicit(&d->cookie, memory_order_relaxed);
	rcu_read_unlock();
	return a;
}

static bool may_have_children(uint32_t type)
{
	return type == UDC_TYPE_DIR || type == UDC_TYPE_UNKNOWN;
}

/*
 * Replace the walked path by target + rest (rest starts at the '/' after
 * the link's component, or is empty).  Return the new length or -errno.
 */
static ssize_t splice_link(struct walk *w, const char *target, size_t tlen, const char *rest,
			   size_t rlen)
{
	if (tlen + rlen > UDC_PATH_MAX)
		return -ENAMETOOLONG;
	if (!w->buf && !(w->buf = malloc(UDC_PATH_MAX)))
		return -ENOMEM;
	memmove(w->buf + tlen, rest, rlen);   /* rest may lie in w->buf itself */
	memcpy(w->buf, target, tlen);
	return (ssize_t)(tlen + rlen);
}

static int walk_once(struct walk *w, udc_ino start, const char *path, size_t len,
		     struct udc_attr *out)
{
	struct udc_cache *c = w->c;
	unsigned nlinks = 0;
	struct udc_attr cur;
	size_t i = 0;

	if (path[0] == '/')
		start = c->root;
	cur = dir_attr(c, start);

	for (;;) {
		while (i < len && path[i] == '/')
			i++;
		if (i == len)
			break;
		size_t j = i;
		while (j < len && path[j] != '/')
			j++;
		const char *comp = path + i;
		size_t clen = j - i;
		bool slash_after = j < len;
		size_t next = j;
		while (next < len && path[next] == '/')
			next++;
		bool last = next == len;

		if (clen > UDC_NAME_MAX)
			return -ENAMETOOLONG;
		if (!may_have_children(cur.type))
			return -ENOTDIR;
		i = j;
		if (clen == 1 && comp[0] == '.')
			continue;

		struct udc_attr a;
		int r;
		if (clen == 2 && comp[0] == '.' && comp[1] == '.' && cur.ino == c->root) {
			a = dir_attr(c, c->root);
		} else {
			r = resolve_name(c, cur.ino, comp, clen, w->call, &a);
			if (r)
				return r;
		}

		bool follow = !last || slash_after || (w->flags & UDC_WALK_FOLLOW);
		if (a.type != UDC_TYPE_SYMLINK || !follow) {
			cur = a;
			continue;
		}
		if (++nlinks > WALK_MAX_SYMLINKS || !c->backend || !c->backend->readlink)
			return -ELOOP;
		if (!w->link && !(w->link = malloc(UDC_PATH_MAX)))
			return -ENOMEM;
		ssize_t tlen = c->backend->readlink(w->call ? w->call->ctx : NULL, a.ino, w->link,
						    UDC_PATH_MAX);
		if (tlen < 0)
			return (int)tlen;
		if (tlen == 0)
			return -ENOENT;
		if (tlen > UDC_PATH_MAX)
			return -ENAMETOOLONG;
		ssize_t nlen = splice_link(w, w->link, (size_t)tlen, path + j, len - j);
		if (nlen < 0)
			return (int)nlen;
		path = w->buf;
		len = (size_t)nlen;
		i = 0;
		if (path[0] == '/')
			cur = dir_attr(c, c->root);
		/* a relative target resolves from the link's directory: cur */
	}

	/* A trailing '/' asks for a directory. */
	if (len && path[len - 1] == '/' && !may_have_children(cur.type))
		return -ENOTDIR;
	if (out)
		*out = cur;
	return 0;
}

int udc_walk(udc_cache *c, udc_ino start, const char *path, size_t len, unsigned flags,
	     const struct udc_call *call, struct udc_attr *out)
{
	if (!c || !path || (flags & ~(unsigned)UDC_WALK_FOLLOW))
		return -EINVAL;
	if (len > UDC_PATH_MAX)
		return -ENAMETOOLONG;
	if (memchr(path, '\0', len))
		return -EINVAL;
	if (len == 0)
		return -ENOENT;
	if (path[0] != '/' && start == UDC_INO_NONE)
		return -EINVAL;
	thread_enter();

	struct walk w = { .c = c, .call = call, .flags = flags };
	struct udc_attr a;
	int r;

	for (unsigned tries = 0;; tries++) {
		if (tries >= WALK_OPTIMISTIC_TRIES) {
			pthread_mutex_lock(&c->rename_lock);
			r = walk_once(&w, start, path, len, &a);
			pthread_mutex_unlock(&c->rename_lock);
			break;
		}
		unsigned seq = ck_sequence_read_begin(&c->rename_seq);
		r = walk_once(&w, start, path, len, &a);
		if (!ck_sequence_read_retry(&c->rename_seq, seq))
			break;
		stat_add(thread_stats(c), walk_retries, 1);
	}
	walk_release(&w);
	if (r == 0 && out)
		*out = a;
	return r;
}
