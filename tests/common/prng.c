/* SPDX-License-Identifier: MIT */
/*
 * tests/common/prng.c - xoshiro256** seeded through splitmix64, and the
 * seed's source (UDC_TEST_SEED or the clock).  No shared state: each caller
 * owns its struct prng.
 */
#include "common/prng.h"

#include <criterion/criterion.h>
#include <criterion/logging.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>
#include <unistd.h>

static uint64_t splitmix64(uint64_t *x)
{
	uint64_t z = (*x += 0x9E3779B97F4A7C15ULL);

	z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ULL;
	z = (z ^ (z >> 27)) * 0x94D049BB133111EBULL;
	return z ^ (z >> 31);
}

uint64_t test_seed(const char *what)
{
	const char *env = getenv("UDC_TEST_SEED");
	uint64_t seed;

	if (env && *env) {
		seed = strtoull(env, NULL, 0);
	} else {
		struct timespec ts;
		uint64_t x;

		clock_gettime(CLOCK_REALTIME, &ts);
		x = (uint64_t)ts.tv_sec * 1000000000ULL + (uint64_t)ts.tv_nsec;
		x ^= (uint64_t)getpid() << 32;
		seed = splitmix64(&x);
	}
	fprintf(stderr, "%s: seed %" PRIu64 " (replay with UDC_TEST_SEED=%" PRIu64 ")\n",
		what ? what : "test", seed, seed);
	cr_log_info("%s: seed %" PRIu64 " (replay with UDC_TEST_SEED=%" PRIu64 ")",
		    what ? what : "test", seed, seed);
	return seed;
}

void prng_init(struct prng *p, uint64_t seed)
{
	uint64_t x = seed;

	for (int i = 0; i < 4; i++)
		p->s[i] = splitmix64(&x);
}

static uint64_t rotl(uint64_t x, int k)
{
	return (x << k) | (x >> (64 - k));
}

uint64_t prng_next(struct prng *p)
{
	uint64_t *s = p->s;
	uint64_t r = rotl(s[1] * 5, 7) * 9;
	uint64_t t = s[1] << 17;

	s[2] ^= s[0];
	s[3] ^= s[1];
	s[1] ^= s[2];
	s[0] ^= s[3];
	s[2] ^= t;
	s[3] = rotl(s[3], 45);
	return r;
}

uint64_t prng_below(struct prng *p, uint64_t n)
{
	/* Lemire's multiply-shift; the bias is far below what a test notices. */
	return (uint64_t)(((unsigned __int128)prng_next(p) * n) >> 64);
}

int prng_chance(struct prng *p, unsigned num, unsigned den)
{
	return prng_below(p, den) < num;
}
