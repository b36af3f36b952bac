/* SPDX-License-Identifier: MIT */
/*
 * tests/stress/test_optimum.c - Belady's optimum of the replay
 * (stress/replay/optimum.c) on hand-made streams whose MIN miss counts are
 * known (worked by hand; the first is the textbook example).
 *
 * Owns nothing (each test's arrays are its own).
 *
 * Locking: none (each test is single-threaded).
 * Ordering: none.
 */
#include <criterion/criterion.h>

#include <stdint.h>

#include "stress/replay.h"

/* The textbook reference string 1 2 3 4 1 2 5 1 2 3 4 5. */
static const uint64_t textbook[] = { 1, 2, 3, 4, 1, 2, 5, 1, 2, 3, 4, 5 };
#define TEXTBOOK_N (sizeof(textbook) / sizeof(textbook[0]))

Test(optimum, textbook_three_frames)
{
	/* 1 2 3 4 miss (4 evicts 3), 1 2 hit, 5 misses (evicts 4), 1 2 hit, 3
	 * and 4 miss (1 and 2 are not used again), 5 hits: 7. */
	cr_assert_eq(replay_optimum(textbook, TEXTBOOK_N, 0, 3), 7);
}

Test(optimum, textbook_four_frames)
{
	cr_assert_eq(replay_optimum(textbook, TEXTBOOK_N, 0, 4), 6);
}

Test(optimum, one_entry_misses_every_change)
{
	static const uint64_t s[] = { 7, 7, 8, 8, 7, 9, 9 };
	cr_assert_eq(replay_optimum(s, 7, 0, 1), 4);
}

Test(optimum, large_cache_misses_each_key_once)
{
	cr_assert_eq(replay_optimum(textbook, TEXTBOOK_N, 0, 100), 5);
}

Test(optimum, misses_counted_from_the_mark_after_warming)
{
	/* 1 2 3 | 1 2 3.  3 entries: the second half hits throughout.  2
	 * entries: 1 2 3 miss (3 evicts 2, used after 1), 1 hits, 2 misses
	 * (evicts 1, never used again), 3 hits: 4 in all, 1 after the mark. */
	static const uint64_t s[] = { 1, 2, 3, 1, 2, 3 };
	cr_assert_eq(replay_optimum(s, 6, 3, 3), 0);
	cr_assert_eq(replay_optimum(s, 6, 0, 2), 4);
	cr_assert_eq(replay_optimum(s, 6, 3, 2), 1);
}

Test(optimum, zero_entries_is_refused)
{
	cr_assert_eq(replay_optimum(textbook, TEXTBOOK_N, 0, 0), UINT64_MAX);
}
