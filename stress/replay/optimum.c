/* SPDX-License-Identifier: MIT */
/*
 * stress/replay/optimum.c - replay_optimum(): Belady's MIN, offline, over the
 * component stream a replay recorded (replay_opts.optimum_entries).
 *
 * Owns: inside replay_optimum(), its scratch arrays; nothing after it.
 *
 * The stream is a sequence of 64-bit keys, one per name a walk looked up in
 * a directory (stress/replay/run.c: the directory's ino and the name, so
 * entries of different lanes, passes and directories differ).  MIN keeps
 * at most `entries` keys; a key looked up while held is a hit, any other a
 * miss that brings it in, evicting first, when full, the held key whose next
 * use is farthest (a key never used again before any other).  No cache of
 * that many entries that must hold what it answers misses less.  Three
 * steps, O(n log n) in all:
 *  1. keys -> dense ids (an open-addressing table of the distinct keys);
 *  2. next[i], the position of the next use of keys[i] (n: none), by one
 *     backward scan;
 *  3. the simulation, with a max-heap of (next use, id) pairs.  A hit pushes
 *     the key's new pair and leaves the old one in the heap; a pair is stale
 *     when its key is no longer held or its next use moved on, and stale
 *     pairs are dropped as they reach the top.
 *
 * Locking: none (no shared state; any thread).
 * Ordering: none.
 *
 * Limitations: what the replay records is its model walk's names (see
 * run.c): ".." and "." are not entries here, and a symlink's target is not
 * one either (the baselines do not cache targets; udcache keeps them in the
 * entry), so the optimum counts lookups, not readlinks.  Mutations are not
 * in the stream: a name the replay adds or removes keeps its entry in the
 * optimum (as the caches' udc_add/udc_remove change an entry in place), and
 * what udc_add brings in for free is not prefetched here.  Streams of 2^32
 * keys or more are refused.
 */
#include <stdlib.h>
#include <string.h>

#include "stress/replay.h"
#include "stress/stress.h"

/* keys[i] -> a dense id, 0..distinct-1, into ids; -1 on ENOMEM. */
static int optimum_ids(const uint64_t *keys, size_t n, uint32_t *ids, size_t *distinct)
{
	size_t size = 16;

	while (size < 2 * n)
		size *= 2;
	uint64_t *tk = malloc(size * sizeof(*tk));
	uint32_t *tv = malloc(size * sizeof(*tv));
	if (!tk || !tv) {
		free(tk);
		free(tv);
		return -1;
	}
	memset(tv, 0xff, size * sizeof(*tv)); /* UINT32_MAX: an empty slot */
	size_t next_id = 0;
	for (size_t i = 0; i < n; i++) {
		size_t h = (size_t)mix64(keys[i]) & (size - 1);
		while (tv[h] != UINT32_MAX && tk[h] != keys[i])
			h = (h + 1) & (size - 1);
		if (tv[h] == UINT32_MAX) {
			tk[h] = keys[i];
			tv[h] = (uint32_t)next_id++;
		}
		ids[i] = tv[h];
	}
	free(tk);
	free(tv);
	*distinct = next_id;
	return 0;
}

/* The max-heap of (next use << 32 | id). */
struct heap {
	uint64_t *v;
	size_t n;
};

static void heap_push(struct heap *h, uint64_t x)
{
	size_t i = h->n++;

	while (i > 0 && h->v[(i - 1) / 2] < x) {
		h->v[i] = h->v[(i - 1) / 2];
		i = (i - 1) / 2;
	}
	h->v[i] = x;
}

static uint64_t heap_pop(struct heap *h)
{
	uint64_t top = h->v[0], x = h->v[--h->n];
	size_t i = 0;

	for (;;) {
		size_t c = 2 * i + 1;
		if (c >= h->n)
			break;
		if (c + 1 < h->n && h->v[c + 1] > h->v[c])
			c++;
		if (h->v[c] <= x)
			break;
		h->v[i] = h->v[c];
		i = c;
	}
	if (h->n)
		h->v[i] = x;
	return top;
}

/* See replay.h. */
uint64_t replay_optimum(const uint64_t *keys, size_t n, size_t from, size_t entries)
{
	uint64_t misses = 0;
	size_t distinct = 0, held = 0;

	if (n >= UINT32_MAX || !entries)
		return UINT64_MAX;
	uint32_t *ids = malloc((n ? n : 1) * sizeof(*ids));
	uint32_t *next = malloc((n ? n : 1) * sizeof(*next));
	struct heap h = { .v = malloc((n ? n : 1) * sizeof(*h.v)) };
	uint32_t *last = NULL, *held_next = NULL;
	if (!ids || !next || !h.v || optimum_ids(keys, n, ids, &distinct) < 0)
		goto fail;
	/* last[id]: the next use seen so far by the backward scan (n: none);
	 * then held_next[id]: a held key's next use (n + 1: not held). */
	last = malloc((distinct ? distinct : 1) * sizeof(*last));
	held_next = last;
	if (!last)
		goto fail;
	for (size_t k = 0; k < distinct; k++)
		last[k] = (uint32_t)n;
	for (size_t i = n; i-- > 0;) {
		next[i] = last[ids[i]];
		last[ids[i]] = (uint32_t)i;
	}
	for (size_t k = 0; k < distinct; k++)
		held_next[k] = (uint32_t)n + 1;
	for (size_t i = 0; i < n; i++) {
		uint32_t id = ids[i];
		if (held_next[id] > n) {
			misses += i >= from;
			while (held == entries) {
				uint64_t top = heap_pop(&h);
				uint32_t vid = (uint32_t)top, vnext = (uint32_t)(top >> 32);
				if (held_next[vid] != vnext)
					continue; /* stale: evicted, or used since */
				held_next[vid] = (uint32_t)n + 1;
				held--;
			}
			held++;
		}
		held_next[id] = next[i];
		heap_push(&h, (uint64_t)next[i] << 32 | id);
	}
	free(ids);
	free(next);
	free(h.v);
	free(last);
	return misses;
fail:
	free(ids);
	free(next);
	free(h.v);
	free(last);
	return UINT64_MAX;
}
