/* SPDX-License-Identifier: MIT */
/*
 * engine/hash.c - the keyed name hash (see hash.h).
 *
 * Owns: nothing shared.  The key is written once in udc_create() before the
 * cache is published and only read afterwards.  hash_kind_default is the
 * tests' (set before any cache is made).
 *
 * Locking: none.
 * Ordering: none (pure functions of their arguments).
 *
 * The hash itself is inline in hash.h (the hit path's); its cost on short
 * names is measured by `udc-stress --workload hash` and reported in
 * BENCHMARKS.md.
 */
#include "engine/hash.h"

#include <errno.h>
#include <string.h>
#include <sys/random.h>
#if HASH_NH_AES
#include <cpuid.h>
#include <wmmintrin.h>
#endif

enum hash_kind hash_kind_default = HASH_BEST;

static void sip_key_set(struct hash_key *k, uint64_t k0, uint64_t k1)
{
	k->init = (struct sip_state){
		.v0 = k0 ^ 0x736f6d6570736575ull,   /* "somepseu" */
		.v1 = k1 ^ 0x646f72616e646f6dull,   /* "dorandom" */
		.v2 = k0 ^ 0x6c7967656e657261ull,   /* "lygenera" */
		.v3 = k1 ^ 0x7465646279746573ull,   /* "tedbytes" */
	};
}

#if HASH_NH_AES
uint64_t hash_name_siphash(const struct hash_key *k, udc_ino dir, const char *name, size_t len)
{
	return sip_hash_name(k, dir, name, len);
}

/* One step of AES-128's key schedule: the previous round key and
 * AESKEYGENASSIST's output for it. */
__attribute__((target("aes"))) static __m128i aes_schedule_step(__m128i key, __m128i assist)
{
	assist = _mm_shuffle_epi32(assist, 0xff);
	key = _mm_xor_si128(key, _mm_slli_si128(key, 4));
	key = _mm_xor_si128(key, _mm_slli_si128(key, 4));
	key = _mm_xor_si128(key, _mm_slli_si128(key, 4));
	return _mm_xor_si128(key, assist);
}

/* AES-128's 11 round keys of the 16-byte key (FIPS-197, 5.2). */
__attribute__((target("aes"))) void aes128_schedule(__m128i rk[11], __m128i key)
{
	rk[0] = key;
#define STEP(i, rcon) rk[i] = aes_schedule_step(rk[i - 1], _mm_aeskeygenassist_si128(rk[i - 1], rcon))
	STEP(1, 0x01); STEP(2, 0x02); STEP(3, 0x04); STEP(4, 0x08); STEP(5, 0x10);
	STEP(6, 0x20); STEP(7, 0x40); STEP(8, 0x80); STEP(9, 0x1b); STEP(10, 0x36);
#undef STEP
}

__attribute__((target("aes"))) __m128i aes128_encrypt(const __m128i rk[11], __m128i b)
{
	b = _mm_xor_si128(b, rk[0]);
	for (int i = 1; i < 10; i++)
		b = _mm_aesenc_si128(b, rk[i]);
	return _mm_aesenclast_si128(b, rk[10]);
}

static bool cpu_has_aes(void)
{
	unsigned a, b, c, d;

	return __get_cpuid(1, &a, &b, &c, &d) && (c & bit_AES);
}

/* NH's key words and AES's key, from (k0, k1): AES-128 under (k0, k1) of
 * the counter blocks 0 (the AES key) and 1.. (NH's words, two a block),
 * independent pseudorandom keys from one. */
static void nh_aes_key_set(struct hash_key *k, uint64_t k0, uint64_t k1)
{
	__m128i master[11];

	aes128_schedule(master, _mm_set_epi64x((long long)k1, (long long)k0));
	aes128_schedule(k->rk, aes128_encrypt(master, _mm_setzero_si128()));
	for (unsigned i = 0; i < NH_PAIRS; i++) {
		__m128i b = aes128_encrypt(master, _mm_set_epi64x(0, (long long)i + 1));
		_mm_storeu_si128((__m128i *)&k->nh[2 * i], b);
	}
}
#endif

/* The directory table's multiplier (dir_key): pseudorandom and odd, from
 * the key, as NH's words are; and its inverse mod 2^64 (Newton: each step
 * doubles the bits right, from the 3 an odd number is its own inverse to). */
static void dir_key_set(struct hash_key *k)
{
	uint64_t a = sip_hash_name(k, 0, "dir-key", 7) | 1, inv = a;

	for (int i = 0; i < 5; i++)
		inv *= 2 - a * inv;
	k->dir_mul = a;
	k->dir_mul_inv = inv;
}

static void hash_key_set(struct hash_key *k, uint64_t k0, uint64_t k1, enum hash_kind kind)
{
	sip_key_set(k, k0, k1);
	dir_key_set(k);
#if HASH_NH_AES
	k->aes = kind == HASH_BEST && cpu_has_aes();
	if (k->aes)
		nh_aes_key_set(k, k0, k1);
#else
	(void)kind;
#endif
}

int hash_key_init_as(struct hash_key *k, const uint64_t cfg_key[2], enum hash_kind kind)
{
	if (cfg_key[0] || cfg_key[1]) {
		hash_key_set(k, cfg_key[0], cfg_key[1], kind);
		return 0;
	}
	uint64_t bytes[2];
	size_t got = 0;
	while (got < sizeof(bytes)) {
		ssize_t n = getrandom((char *)bytes + got, sizeof(bytes) - got, 0);
		if (n < 0) {
			if (errno == EINTR)
				continue;
			return -errno;
		}
		got += (size_t)n;
	}
	hash_key_set(k, bytes[0], bytes[1], kind);
	return 0;
}
