/* SPDX-License-Identifier: MIT */
/*
 * stress/studies.h - what the studies of udcache's own parts share
 * (stress/studies.c's alloc, stress/frag.c): the malloc baselines.
 *
 * Owns nothing at run time.  Inline, because alloc calls them in its timed
 * loop.
 *
 * Locking: none (the allocator locks itself).
 *
 * Ordering: none (no atomics here).
 */
#ifndef UDC_STRESS_STUDIES_H
#define UDC_STRESS_STUDIES_H

#include <stddef.h>
#include <stdlib.h>

#include <jemalloc/jemalloc.h>

/* The malloc baselines: jemalloc, or libc under a sanitizer (as engine/alloc.c). */
#if defined(__SANITIZE_ADDRESS__) || defined(__SANITIZE_THREAD__)
#define BASE_LIBC_ALLOC 1
#endif

static inline void *base_alloc(size_t size)
{
#ifdef BASE_LIBC_ALLOC
	return malloc(size);
#else
	return mallocx(size, 0);
#endif
}

static inline void base_free(void *p, size_t size)
{
#ifdef BASE_LIBC_ALLOC
	(void)size;
	free(p);
#else
	sdallocx(p, size, 0);
#endif
}

#endif /* UDC_STRESS_STUDIES_H */
