/* SPDX-License-Identifier: MIT */
/*
 * tests/common/prng.h - a seeded PRNG for tests (xoshiro256**).
 *
 * test_seed() takes the seed from the environment variable UDC_TEST_SEED
 * (decimal or 0x-hex) when it is set, else makes one from the clock and the
 * pid, and prints it (stderr and cr_log_info) so that a failing run can be
 * replayed with UDC_TEST_SEED=<seed>.  Not thread-safe: give each thread its
 * own struct prng (prng_init with test_seed() + the thread's index).
 */
#ifndef UDC_TEST_PRNG_H
#define UDC_TEST_PRNG_H

#include <stdint.h>

struct prng {
	uint64_t s[4];
};

/* The run's seed, printed with @what (the test's name). */
uint64_t test_seed(const char *what);

void prng_init(struct prng *p, uint64_t seed);
uint64_t prng_next(struct prng *p);
/* Uniform in [0, n); n > 0. */
uint64_t prng_below(struct prng *p, uint64_t n);
/* True with probability num/den. */
int prng_chance(struct prng *p, unsigned num, unsigned den);

#endif
