/* SPDX-License-Identifier: MIT */
/*
 * engine/hash.h - the keyed name hash.
 *
 * Key = (directory ino, name).  The hash is a pseudorandom function of the
 * message le64(ino) || name, keyed with 128 random bits per cache (or the
 * embedder's udc_config.hash_key), so that clients who choose names cannot
 * build long hash chains: without the key, which names collide cannot be
 * predicted, and timing what collides teaches nothing about the key.  The
 * full 64-bit value is what the name table compares before it calls the
 * name match.  Two functions, chosen once per cache at udc_create (hash_key_init):
 *
 * NH then AES (x86-64 with AES-NI: every x86-64 server CPU since 2010).
 *   The message, as 64-bit little-endian words w = ino, the name's tail
 *   (its last len % 8 bytes) with the total length 8 + len mod 256 in the
 *   top byte (SipHash's padding; distinct for len 0..255), then the
 *   name's whole words and a zero word if they are odd (so distinct (ino,
 *   name) give distinct word strings), is compressed to 128 bits by NH,
 *       NH(w) = sum over pairs i of (w[2i] + k[2i]) * (w[2i+1] + k[2i+1]),
 *   words added mod 2^64, products and sum mod 2^128.  For two distinct
 *   strings of as many pairs, Pr[NH(w) - NH(w') = d] <= 2^-64 for every d
 *   (NH is 2^-w-almost-delta-universal on equal-length strings of w-bit
 *   words: Black, Halevi, Krawczyk, Krovetz and Rogaway, "UMAC: Fast and
 *   Secure Message Authentication", CRYPTO 1999; Krovetz, "Message
 *   Authentication on 64-bit Architectures", SAC 2006, uses w = 64).  When
 *   w' has more pairs, its last pair's key words appear nowhere else, so
 *   the difference is d exactly when that pair's product (u * v, u and v
 *   independent and uniform below 2^64, no wrap) equals one value c fixed
 *   by the other keys: for c > 0 each u allows at most one v (Pr <=
 *   2^-64), for c = 0 the 2^65 - 1 pairs with u or v zero (Pr < 2^-63).
 *   The 128 bits are then encrypted with AES-128 under a second,
 *   independent key, and the hash is the ciphertext's low 64 bits.  A
 *   universal hash followed by a PRF (AES as a PRP, within the birthday
 *   bound) is a PRF (Boneh and Shoup, "A Graduate Course in Applied
 *   Cryptography", chapter 7, the PRF(UHF) composition): an adaptive
 *   attacker, who learns which names collide, tells the hash from a random
 *   function with advantage at most q^2/2 * 2^-63 plus AES's, q being the
 *   distinct names ever hashed (lookups too): a 64-bit birthday bound,
 *   about 2^32 names, where SipHash's is its 128-bit key.  Past it the
 *   attacker may hold a pair of names whose hashes collide in all 64 bits:
 *   a chain of two.  Cost for a 16-byte name: two multiplies and ten AES
 *   rounds, about 60 instructions with the moves to and from xmm
 *   (SipHash-1-3: 138).
 *
 * SipHash-1-3 (elsewhere: no AES-NI, other architectures).
 *   The keyed function Python (since 3.11), Rust's std HashMap and Linux's
 *   hsiphash (64-bit) use for hash tables (Aumasson and Bernstein 2012;
 *   the 1-3 variant keeps 2-4's full finalisation and halves the
 *   compression rounds, a margin its authors call sufficient against hash
 *   flooding; no practical key recovery or collision attack is known).
 *
 * Neither is a MAC.  Both are written here, inline and specialised for
 * (ino, name), so that a lookup hashes the caller's bytes in place with no
 * copy and no library call.  tests/engine/test_hash.c checks SipHash
 * against its reference vectors, AES against FIPS-197's, the keys against
 * AES of a counter under the key, and NH against its definition at every
 * name length.
 */
#ifndef UDC_ENGINE_HASH_H
#define UDC_ENGINE_HASH_H

#include <endian.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "include/udcache.h"
#include "common/debug.h"
#include "common/load.h"

#if defined(__x86_64__)
#include <emmintrin.h>
#define HASH_NH_AES 1
#else
#define HASH_NH_AES 0
#endif

struct sip_state {
	uint64_t v0, v1, v2, v3;
};

/* NH's pairs for the longest message: (ino, the tail), then 31 whole
 * name words, the last with zero. */
#define NH_PAIRS (1 + (UDC_NAME_MAX / 8 + 1) / 2)

struct hash_key {
#if HASH_NH_AES
	bool aes;                         /* the CPU has AES-NI: NH then AES (first: it
	                                   * shares the cache struct's first line) */
	uint64_t dir_mul;                 /* odd: the directory table's key (dir_key); here
	                                   * in aes's padding, on the line every hit reads */
	__m128i rk[11];                   /* AES-128's round keys (hash_key_init) */
	uint64_t nh[2 * NH_PAIRS];        /* NH's key words, for names of up to UDC_NAME_MAX */
#endif
	/* SipHash's: the key (k0, k1) as its initial state, k0 ^ "somepseu",
	 * k1 ^ "dorandom", k0 ^ "lygenera", k1 ^ "tedbytes", computed once */
	struct sip_state init;
#if !HASH_NH_AES
	uint64_t dir_mul;                 /* as above (no aes here) */
#endif
	uint64_t dir_mul_inv;             /* dir_mul's inverse mod 2^64 (dir_key_ino) */
};

enum hash_kind { HASH_BEST, HASH_SIPHASH };

/* Fill *k from cfg_key {k0, k1}, or from getrandom() when cfg_key is
 * {0,0}: NH then AES where the CPU has AES-NI, else SipHash-1-3
 * (HASH_SIPHASH: SipHash always, for the tests).  Return 0 or -errno. */
int hash_key_init_as(struct hash_key *k, const uint64_t cfg_key[2], enum hash_kind kind);

/* What udc_create asks hash_key_init_as for: HASH_BEST, but for tests that
 * run the engine on SipHash-1-3 (set before udc_create, never after). */
extern enum hash_kind hash_kind_default;

static inline int hash_key_init(struct hash_key *k, const uint64_t cfg_key[2])
{
	return hash_key_init_as(k, cfg_key, hash_kind_default);
}

static inline uint64_t sip_rotl(uint64_t x, unsigned b)
{
	return (x << b) | (x >> (64 - b));
}

static inline void sip_round(struct sip_state *s)
{
	s->v0 += s->v1;
	s->v1 = sip_rotl(s->v1, 13);
	s->v1 ^= s->v0;
	s->v0 = sip_rotl(s->v0, 32);
	s->v2 += s->v3;
	s->v3 = sip_rotl(s->v3, 16);
	s->v3 ^= s->v2;
	s->v0 += s->v3;
	s->v3 = sip_rotl(s->v3, 21);
	s->v3 ^= s->v0;
	s->v2 += s->v1;
	s->v1 = sip_rotl(s->v1, 17);
	s->v1 ^= s->v2;
	s->v2 = sip_rotl(s->v2, 32);
}

/* The state after the key and the first 8-byte word m. */
static inline struct sip_state sip_begin(const struct hash_key *k, uint64_t m)
{
	struct sip_state s = k->init;

	s.v3 ^= m;
	sip_round(&s);   /* c = 1 compression round */
	s.v0 ^= m;
	return s;
}

static inline void sip_compress(struct sip_state *s, uint64_t m)
{
	s->v3 ^= m;
	sip_round(s);
	s->v0 ^= m;
}

/* Compress the last word (the tail and the length byte), then d = 3 rounds. */
static inline uint64_t sip_end(struct sip_state *s, uint64_t last)
{
	sip_compress(s, last);
	s->v2 ^= 0xff;
	sip_round(s);
	sip_round(s);
	sip_round(s);
	return s->v0 ^ s->v1 ^ s->v2 ^ s->v3;
}

/* a[0..len) == b[0..len), by words, with no call: the hit path's name
 * compare (names are short; memcmp is a call through the PLT). */
static inline bool name_eq(const char *a, const char *b, size_t len)
{
	if (len < 8)
		return load_tail(a, len) == load_tail(b, len);
	for (size_t i = 0; i + 8 < len; i += 8)
		if (load_le64(a + i) != load_le64(b + i))
			return false;
	return load_le64(a + len - 8) == load_le64(b + len - 8);   /* may overlap */
}

/* SipHash-1-3 of le64(dir) || name[0..len). */
static inline __attribute__((always_inline)) uint64_t
sip_hash_name(const struct hash_key *k, udc_ino dir, const char *name, size_t len)
{
	struct sip_state s = sip_begin(k, dir);
	uint64_t total = sizeof(dir) + len;

	for (; len >= 8; len -= 8, name += 8)
		sip_compress(&s, load_le64(name));
	return sip_end(&s, load_tail(name, len) | total << 56);
}

#if HASH_NH_AES
/* AES-128's 11 round keys of the 16-byte key, and AES-128 of one block
 * under them (engine/hash.c: set-up and tests, not the hit path). */
void aes128_schedule(__m128i rk[11], __m128i key);
__m128i aes128_encrypt(const __m128i rk[11], __m128i b);

/* One pair of NH: (a + key[0]) * (b + key[1]), a 64x64 -> 128-bit product. */
static inline unsigned __int128 nh_pair(uint64_t a, uint64_t b, const uint64_t *key)
{
	return (unsigned __int128)(a + key[0]) * (b + key[1]);
}

/* AES-128 of x under k->rk, low 64 bits.  The rounds are asm, so that the
 * hit path needs no -maes (hash_key_init_as checks the CPU); volatile, so
 * that gcc never moves one above the k->aes test (an AES instruction on a
 * CPU without AES-NI is SIGILL); the round keys are 16-byte aligned
 * memory operands. */
static inline uint64_t aes_low64(const struct hash_key *k, unsigned __int128 x)
{
	__m128i s = _mm_set_epi64x((long long)(uint64_t)(x >> 64), (long long)(uint64_t)x);

	s = _mm_xor_si128(s, k->rk[0]);
#pragma GCC unroll 9
	for (int i = 1; i < 10; i++)
		__asm__ volatile("aesenc %1, %0" : "+x"(s) : "m"(k->rk[i]));
	__asm__ volatile("aesenclast %1, %0" : "+x"(s) : "m"(k->rk[10]));
	return (uint64_t)_mm_cvtsi128_si64(s);
}

/* NH then AES of (dir, name[0..len)) (the header comment), the words in
 * the order (ino, tail | length, the name's whole words...): the first
 * pair known at once, the rest straight from the name.  len <= UDC_NAME_MAX
 * (k->nh has the key words for no more): every caller's name is checked,
 * stored or built within it. */
static inline __attribute__((always_inline)) uint64_t
nh_aes_hash_name(const struct hash_key *k, udc_ino dir, const char *name, size_t len)
{
	const uint64_t *key = k->nh + 2;
	size_t whole = len / 8;

	udc_assert(len <= UDC_NAME_MAX);
	unsigned __int128 sum = nh_pair(dir, load_tail(name + 8 * whole, len % 8) |
					      (uint64_t)(sizeof(dir) + len) << 56, k->nh);

	for (; len >= 16; len -= 16, name += 16, key += 2)
		sum += nh_pair(load_le64(name), load_le64(name + 8), key);
	if (len >= 8)   /* an odd word: it pairs with zero */
		sum += nh_pair(load_le64(name), 0, key);
	return aes_low64(k, sum);
}

/* The SipHash-1-3 form, out of line where NH then AES is the usual one. */
uint64_t hash_name_siphash(const struct hash_key *k, udc_ino dir, const char *name, size_t len);
#endif

/* The 64-bit keyed hash of (dir, name[0..len)).  Always inline: a call's
 * saves and restores are 2% of a hit, and gcc stops inlining it into
 * udc_lookup once a second caller in lookup.c has it. */
static inline __attribute__((always_inline)) uint64_t
hash_name(const struct hash_key *k, udc_ino dir, const char *name, size_t len)
{
#if HASH_NH_AES
	if (__builtin_expect(k->aes, 1))
		return nh_aes_hash_name(k, dir, name, len);
	return hash_name_siphash(k, dir, name, len);
#else
	return sip_hash_name(k, dir, name, len);
#endif
}

/*
 * The directory table's key of an ino: ino times the cache's odd
 * multiplier, mod 2^64.  A bijection, so a directory object keeps the key
 * (in its table node) and not the ino, which dir_key_ino gives back: an
 * object is 48 bytes, not 64 (issue 14: the objects were a third of the
 * bytes at a binding limit).  The table's buckets are the key's top bits
 * (rculfhash is given the key bit-reversed, which it reverses again into
 * the node: engine/dir.c), multiply-shift hashing with a random odd multiplier:
 * for two distinct inos, Pr[their top l bits are equal] <= 2 / 2^l
 * (Dietzfelbinger, Hagerup, Katajainen and Penttonen, "A reliable
 * randomized algorithm for the closest-pair problem", J. Algorithms 1997),
 * so for any set of inos chosen without the key, chains stay short on
 * average.  It is not a PRF as the name hash is: it need not be, the keys
 * are inos, which the store assigns, where names are what clients choose.
 */
static inline uint64_t dir_key(const struct hash_key *k, udc_ino ino)
{
	return ino * k->dir_mul;
}

static inline udc_ino dir_key_ino(const struct hash_key *k, uint64_t key)
{
	return key * k->dir_mul_inv;
}

/* The 64 bits of @x in reverse order. */
static inline uint64_t bit_reverse64(uint64_t x)
{
	x = __builtin_bswap64(x);
	x = (x >> 4 & UINT64_C(0x0f0f0f0f0f0f0f0f)) | (x & UINT64_C(0x0f0f0f0f0f0f0f0f)) << 4;
	x = (x >> 2 & UINT64_C(0x3333333333333333)) | (x & UINT64_C(0x3333333333333333)) << 2;
	return (x >> 1 & UINT64_C(0x5555555555555555)) | (x & UINT64_C(0x5555555555555555)) << 1;
}

#endif
