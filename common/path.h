/* SPDX-License-Identifier: MIT */
/*
 * common/path.h - the rules of names and paths, stated once.
 *
 * Owns the rules every walker and every checker of the public API follows:
 * the engine (engine/lookup.c, engine/walk.c), the baselines
 * (stress/baselines/common.c), the replay's model walk (stress/replay/) and
 * the reference walker of tests/diffstress.  All static inline: the name
 * check runs on the hit path, which must not pay a call for it.
 *
 *  - name_check(): a name is 1..UDC_NAME_MAX bytes, holds no '/' and no
 *    NUL, and is not "."; ".." passes (each caller decides what it means).
 *  - call_check(): a call on (cache, dir, name): a cache, a directory, a name.
 *  - path_check() and walk_check(): udc_walk()'s argument checks.
 *  - path_next(): the scanner of a path's components (runs of '/' separate
 *    them; leading and trailing ones are allowed); path_comp_check(), the
 *    checks of one component; walk_next_name(), the two together, as a
 *    walk takes them; path_wants_dir(), the trailing '/' rule.
 *
 * Locking: none (pure functions of their arguments).
 * Ordering: none.
 */
#ifndef UDC_COMMON_PATH_H
#define UDC_COMMON_PATH_H

#include <errno.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "include/udcache.h"
#include "common/load.h"

static inline bool name_is_dot(const char *name, size_t len)
{
	return len == 1 && name[0] == '.';
}

static inline bool name_is_dotdot(const char *name, size_t len)
{
	return len == 2 && name[0] == '.' && name[1] == '.';
}

/* name_check() without its scan of the bytes: 0, or -EINVAL (NULL, empty,
 * ".") or -ENAMETOOLONG. */
static inline int name_check_len(const char *name, size_t len)
{
	if (!name || len == 0)
		return -EINVAL;
	if (len > UDC_NAME_MAX)
		return -ENAMETOOLONG;
	if (name_is_dot(name, len))
		return -EINVAL;
	return 0;
}

/* Does the word @w hold a zero byte?  (Exact as a truth value: the lowest
 * zero byte always sets its high bit, and a borrow starts only there.) */
static inline bool word_has_zero(uint64_t w)
{
	return ((w - 0x0101010101010101u) & ~w & 0x8080808080808080u) != 0;
}

/* Does the word @w hold a '/' or a NUL? */
static inline bool word_has_slash_or_nul(uint64_t w)
{
	return word_has_zero(w) || word_has_zero(w ^ 0x2f2f2f2f2f2f2f2fu);
}

/*
 * The scan name_check_len() leaves out (@len >= 1): 0, or -EINVAL for a
 * '/' or NUL inside.  A word at a time (common/load.h), the last word
 * overlapping the one before; a name under 8 bytes as one word
 * (load_tail), its bytes above the name filled with 'a' (neither).  Two
 * memchr calls through the PLT were 90 instructions for a 6-byte name
 * (BENCHMARKS.md, issue 16, stop 30).  Nothing is read outside the name.
 */
static inline int name_check_bytes(const char *name, size_t len)
{
	if (len < 8)
		return word_has_slash_or_nul(load_tail(name, len) | 0x6161616161616161u << (8 * len)) ?
			       -EINVAL : 0;
	for (size_t i = 0; i + 8 < len; i += 8)
		if (word_has_slash_or_nul(load_le64(name + i)))
			return -EINVAL;
	return word_has_slash_or_nul(load_le64(name + len - 8)) ? -EINVAL : 0;
}

/* 0, or -EINVAL (NULL, empty, ".", a '/' or NUL inside) or -ENAMETOOLONG. */
static inline int name_check(const char *name, size_t len)
{
	int r = name_check_len(name, len);

	return r ? r : name_check_bytes(name, len);
}

/* A call on (c, dir, name) without the scan of the name's bytes: 0, -EINVAL
 * (no cache, dir UDC_INO_NONE) or name_check_len()'s error.  For the
 * lookups, which scan the bytes only when no cached name matched
 * (lookup_name): a match proves them, as no name with a '/' or NUL is ever
 * cached. */
static inline int call_check_len(const void *c, udc_ino dir, const char *name, size_t len)
{
	/* The common case, one test an argument (the hit path's): len - 2
	 * wraps for 0 and 1, so the empty name and 1-byte names ("." among
	 * them) take the long way. */
	if (__builtin_expect(c && dir != UDC_INO_NONE && name && len - 2 < UDC_NAME_MAX - 1, 1))
		return 0;
	if (!c || dir == UDC_INO_NONE)
		return -EINVAL;
	return name_check_len(name, len);
}

/* A call on (c, dir, name): 0, call_check_len()'s error or -EINVAL for a
 * '/' or NUL inside the name. */
static inline int call_check(const void *c, udc_ino dir, const char *name, size_t len)
{
	int r = call_check_len(c, dir, name, len);

	return r ? r : name_check_bytes(name, len);
}

/* A path to walk, in this order: -ENAMETOOLONG (over UDC_PATH_MAX), -EINVAL
 * (a NUL inside), -ENOENT (empty); else 0. */
static inline int path_check(const char *path, size_t len)
{
	if (len > UDC_PATH_MAX)
		return -ENAMETOOLONG;
	if (memchr(path, '\0', len))
		return -EINVAL;
	if (len == 0)
		return -ENOENT;
	return 0;
}

/* udc_walk()'s arguments, in this order: -EINVAL (no cache, no path, unknown
 * flags), path_check()'s error, -EINVAL (relative with start UDC_INO_NONE). */
static inline int walk_check(const void *c, udc_ino start, const char *path, size_t len,
			     unsigned flags)
{
	if (!c || !path || (flags & ~(unsigned)UDC_WALK_FOLLOW))
		return -EINVAL;
	int r = path_check(path, len);
	if (r)
		return r;
	if (path[0] != '/' && start == UDC_INO_NONE)
		return -EINVAL;
	return 0;
}

/* One component of a path, as path_next() finds it. */
struct path_comp {
	const char *name;
	size_t len;       /* may exceed UDC_NAME_MAX: the walker decides */
	size_t end;       /* offset just past the name: where the rest of the path starts */
	bool slash_after; /* a '/' follows the name */
	bool last;        /* nothing but '/' follows the name */
};

/*
 * The component of path[0..len) at or after offset *pos (leading '/'
 * skipped): fill *comp, move *pos to comp->end and return true; false when
 * only '/' is left.
 */
static inline bool path_next(const char *path, size_t len, size_t *pos, struct path_comp *comp)
{
	size_t i = *pos;

	while (i < len && path[i] == '/')
		i++;
	if (i == len)
		return false;
	size_t j = i;
	while (j < len && path[j] != '/')
		j++;
	size_t next = j;
	while (next < len && path[next] == '/')
		next++;
	*comp = (struct path_comp){
		.name = path + i,
		.len = j - i,
		.end = j,
		.slash_after = j < len,
		.last = next == len,
	};
	*pos = j;
	return true;
}

/* A walk may go down through an entry of this type (an unknown one is tried). */
static inline bool type_may_have_children(uint32_t type)
{
	return type == UDC_TYPE_DIR || type == UDC_TYPE_UNKNOWN;
}

/*
 * A component met in a directory of type dir_type, before the walk looks
 * it up, in this order: -ENAMETOOLONG (over UDC_NAME_MAX), -ENOTDIR
 * (dir_type cannot have children); else 0.
 */
static inline int path_comp_check(const struct path_comp *comp, uint32_t dir_type)
{
	if (comp->len > UDC_NAME_MAX)
		return -ENAMETOOLONG;
	if (!type_may_have_children(dir_type))
		return -ENOTDIR;
	return 0;
}

/*
 * The next component a walk standing in a directory of type dir_type looks
 * up: path_next() and path_comp_check(), passing over "." (the walk stays
 * where it is).  1 with *comp filled, 0 at the end of the path, or -errno.
 */
static inline int walk_next_name(const char *path, size_t len, size_t *pos, uint32_t dir_type,
				 struct path_comp *comp)
{
	while (path_next(path, len, pos, comp)) {
		int r = path_comp_check(comp, dir_type);
		if (r)
			return r;
		if (!name_is_dot(comp->name, comp->len))
			return 1;
	}
	return 0;
}

/* A trailing '/': the walk must end on something that may have children. */
static inline bool path_wants_dir(const char *path, size_t len)
{
	return len && path[len - 1] == '/';
}

#endif /* UDC_COMMON_PATH_H */
