/* SPDX-License-Identifier: MIT */
/*
 * common/load.h - a name's bytes as little-endian words, unaligned, with
 * no read past the name: the keyed hash and the name compare
 * (engine/hash.h) and the name check (common/path.h).
 *
 * Locking: none (pure functions of their arguments).
 * Ordering: none.
 */
#ifndef UDC_COMMON_LOAD_H
#define UDC_COMMON_LOAD_H

#include <endian.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

static inline uint64_t load_le64(const char *p)
{
	uint64_t v;

	memcpy(&v, p, sizeof(v));
	return le64toh(v);
}

static inline uint64_t load_le32(const char *p)
{
	uint32_t v;

	memcpy(&v, p, sizeof(v));
	return le32toh(v);
}

/* The r < 8 bytes at p as a little-endian word, zero above; reads only them. */
static inline uint64_t load_tail(const char *p, size_t r)
{
	const unsigned char *b = (const unsigned char *)p;

	if (r >= 4)   /* two 4-byte loads that overlap when r < 8 */
		return load_le32(p) | load_le32(p + r - 4) << (8 * (r - 4));
	if (r == 0)
		return 0;
	/* 1..3 bytes: the first, the middle and the last (some the same) */
	return (uint64_t)b[0] | (uint64_t)b[r / 2] << (8 * (r / 2)) |
	       (uint64_t)b[r - 1] << (8 * (r - 1));
}

#endif
