/* SPDX-License-Identifier: MIT */
/*
 * tests/fuzz/fuzz_model.c - the fuzz harness's oracle: the model store
 * (what the backend answers from and every answer of the cache is checked
 * against), the API's name rules (name_err) and the reference walker
 * (ref_walk).
 *
 * Written from udcache.h's contract and engine/walk.c's documented rules
 * only, deliberately without common/path.h or any other code of the
 * library: an oracle that shares the code under test cannot find a bug in
 * it.
 */
#include <errno.h>
#include <stdbool.h>
#include <stdint.h>
#include <string.h>

#include "fuzz.h"

/* ------------------------------------------------------------------ */
/* The model store                                                     */

struct model M;
uint64_t seq;

static unsigned mhash(udc_ino dir, const char *name, size_t len)
{
	uint64_t h = 1469598103934665603ULL ^ dir;

	for (size_t i = 0; i < len; i++)
		h = (h ^ (unsigned char)name[i]) * 1099511628211ULL;
	return (unsigned)((h ^ (h >> 31)) % MBUCKETS);
}

struct ment *mfind(udc_ino dir, const char *name, size_t len)
{
	for (int i = M.head[mhash(dir, name, len)]; i >= 0; i = M.e[i].next)
		if (M.e[i].dir == dir && M.e[i].len == len && memcmp(M.e[i].name, name, len) == 0)
			return &M.e[i];
	return NULL;
}

static void munlink_chain(int idx)
{
	struct ment *x = &M.e[idx];
	int *pp = &M.head[mhash(x->dir, x->name, x->len)];

	while (*pp != idx)
		pp = &M.e[*pp].next;
	*pp = x->next;
}

static void mdel_entry(struct ment *x)
{
	int idx = (int)(x - M.e);
	int last = M.n - 1;

	munlink_chain(idx);
	if (idx != last) {
		/* move the last entry into the hole, fixing its chain link */
		int *pp = &M.head[mhash(M.e[last].dir, M.e[last].name, M.e[last].len)];
		while (*pp != last)
			pp = &M.e[*pp].next;
		M.e[idx] = M.e[last];
		*pp = idx;
	}
	M.n--;
}

bool mdel(udc_ino dir, const char *name, size_t len)
{
	struct ment *x = mfind(dir, name, len);

	if (!x)
		return false;
	mdel_entry(x);
	return true;
}

/* Set (dir, name) = attr; false if the model is full. */
bool mset(udc_ino dir, const char *name, size_t len, const struct udc_attr *attr)
{
	struct ment *x = mfind(dir, name, len);

	if (!x) {
		if (M.n == MAXENT)
			return false;
		x = &M.e[M.n];
		memset(x, 0, offsetof(struct ment, name));
		x->dir = dir;
		x->len = len;
		memcpy(x->name, name, len);
		unsigned b = mhash(dir, name, len);
		x->next = M.head[b];
		M.head[b] = M.n++;
	}
	x->attr = *attr;
	x->told = seq;
	if (attr->type == UDC_TYPE_DIR && is_dir_ino(attr->ino)) {
		M.parent[attr->ino] = dir;
		M.attached[attr->ino] = true;
	}
	return true;
}

bool mdir_empty(udc_ino d)
{
	for (int i = 0; i < M.n; i++)
		if (M.e[i].dir == d)
			return false;
	return true;
}

/* Remove every entry of d (an rmdir's store side); subdirectories are
 * left detached, their contents and ".." kept (orphans). */
void mclear_dir(udc_ino d)
{
	for (int i = 0; i < M.n;) {
		if (M.e[i].dir == d) {
			if (M.e[i].attr.type == UDC_TYPE_DIR)
				M.attached[M.e[i].attr.ino] = false;
			mdel_entry(&M.e[i]);
		} else {
			i++;
		}
	}
}

/* Is a an ancestor of (or equal to) d, following ".." in the model? */
bool mancestor(udc_ino a, udc_ino d)
{
	for (int guard = 0; guard <= NDIRS + 1 && d; guard++) {
		if (d == a)
			return true;
		if (d == ROOT || !M.attached[d])
			return false;
		d = M.parent[d];
	}
	return false;
}

/* The model's ".." of ino: true and *out, or false (none). */
bool mparent(udc_ino ino, struct udc_attr *out)
{
	if (!is_dir_ino(ino) || !M.parent[ino])
		return false;
	udc_ino p = M.parent[ino];
	*out = (struct udc_attr){ .ino = p, .type = UDC_TYPE_DIR, .cookie = dir_cookie(p) };
	return true;
}

void model_reset(void)
{
	M.n = 0;
	for (int b = 0; b < MBUCKETS; b++)
		M.head[b] = -1;
	memset(M.parent, 0, sizeof(M.parent));
	memset(M.attached, 0, sizeof(M.attached));
	M.parent[ROOT] = ROOT;
	M.attached[ROOT] = true;
	for (int k = 0; k < NOBJ; k++) {
		M.target[k][0] = 'a';
		M.tlen[k] = 1;
	}
}

/* The name check of the API: 0 or the documented -errno. */
int name_err(const char *name, size_t len)
{
	if (len == 0)
		return -EINVAL;
	if (len > UDC_NAME_MAX)
		return -ENAMETOOLONG;
	if (len == 1 && name[0] == '.')
		return -EINVAL;
	if (memchr(name, '/', len) || memchr(name, '\0', len))
		return -EINVAL;
	return 0;
}

int call_err(udc_ino dir, const char *name, size_t len)
{
	return dir == UDC_INO_NONE ? -EINVAL : name_err(name, len);
}

bool is_dotdot(const char *name, size_t len)
{
	return len == 2 && name[0] == '.' && name[1] == '.';
}

/* ------------------------------------------------------------------ */
/* The reference walker                                                */

static char wbuf[2][UDC_PATH_MAX + 8];

int ref_walk(udc_ino start, const char *path0, size_t len0, unsigned flags,
	     struct udc_attr *out, bool *lenient)
{
	if (len0 > UDC_PATH_MAX)
		return -ENAMETOOLONG;
	if (memchr(path0, '\0', len0))
		return -EINVAL;
	if (len0 == 0)
		return -ENOENT;
	if (path0[0] != '/' && start == UDC_INO_NONE)
		return -EINVAL;

	const char *path = path0;
	size_t len = len0, i = 0;
	unsigned nlinks = 0, which = 0;
	struct udc_attr cur = { .ino = path[0] == '/' ? ROOT : start, .type = UDC_TYPE_DIR };
	bool cur_lenient = true;

	cur.cookie = dir_cookie(cur.ino);
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
		if (cur.type != UDC_TYPE_DIR && cur.type != UDC_TYPE_UNKNOWN)
			return -ENOTDIR;
		i = j;
		if (clen == 1 && comp[0] == '.')
			continue;
		struct udc_attr a;
		bool a_lenient = false;
		if (is_dotdot(comp, clen)) {
			if (cur.ino == ROOT)
				a = (struct udc_attr){ .ino = ROOT, .type = UDC_TYPE_DIR,
						       .cookie = dir_cookie(ROOT) };
			else if (!mparent(cur.ino, &a))
				return -ENOENT;
			a_lenient = true;
		} else {
			struct ment *x = mfind(cur.ino, comp, clen);
			if (!x)
				return -ENOENT;
			a = x->attr;
		}
		bool follow = !last || slash_after || (flags & UDC_WALK_FOLLOW);
		if (a.type != UDC_TYPE_SYMLINK || !follow) {
			cur = a;
			cur_lenient = a_lenient;
			continue;
		}
		if (++nlinks > 40 || !have_readlink)
			return -ELOOP;
		size_t k = (size_t)(a.ino - LINK0);
		const char *t = M.target[k];
		size_t tl = M.tlen[k];
		if (tl == 0)
			return -ENOENT;
		if (memchr(t, '\0', tl))
			return -EIO;
		size_t rlen = len - j;
		if (tl + rlen > UDC_PATH_MAX)
			return -ENAMETOOLONG;
		char *nb = wbuf[which];
		which ^= 1;
		memmove(nb + tl, path + j, rlen);
		memcpy(nb, t, tl);
		path = nb;
		len = tl + rlen;
		i = 0;
		if (path[0] == '/') {
			cur = (struct udc_attr){ .ino = ROOT, .type = UDC_TYPE_DIR,
						 .cookie = dir_cookie(ROOT) };
			cur_lenient = true;
		}
	}
	if (len && path[len - 1] == '/' && cur.type != UDC_TYPE_DIR && cur.type != UDC_TYPE_UNKNOWN)
		return -ENOTDIR;
	*out = cur;
	*lenient = cur_lenient;
	return 0;
}
