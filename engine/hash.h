/* SPDX-License-Identifier: MIT */
/*
 * engine/hash.h - the keyed name hash.
 *
 * Key = (directory ino, name).  The hash is SipHash-1-3 of the 8-byte
 * little-endian ino followed by the name's bytes, keyed with 128 random
 * bits per cache (or the embedder's udc_config.hash_key), so that clients
 * who choose names cannot build long hash chains.  The full 64-bit value is
 * what rculfhash compares before it calls the name match.
 *
 * Why SipHash-1-3: it is the keyed function that Python (since 3.11),
 * Rust's std HashMap and Linux's hsiphash (64-bit) use for hash tables.
 * Its security claim is the one a table needs: without the key, an
 * attacker cannot predict which names collide (SipHash's paper, Aumasson
 * and Bernstein 2012; the 1-3 variant keeps the full-state finalisation of
 * 2-4 and halves the compression rounds, a margin its authors call
 * sufficient for hash-flooding protection, and no practical key recovery
 * or collision attack is known against it).  It is not a MAC.
 * Written here, inline and specialised for (ino, name) so that a lookup
 * hashes the caller's bytes in place with no copy and no library call;
 * tests/engine/test_hash.c checks it against the reference vectors.
 */
#ifndef UDC_ENGINE_HASH_H
#define UDC_ENGINE_HASH_H

#include <endian.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "include/udcache.h"
#include "common/load.h"

struct sip_state {
	uint64_t v0, v1, v2, v3;
};

/* The key (k0, k1) as SipHash's initial state: k0 ^ "somepseu", k1 ^
 * "dorandom", k0 ^ "lygenera", k1 ^ "tedbytes", computed once. */
struct hash_key {
	struct sip_state init;
};

/* Fill *k from cfg_key {k0, k1}, or from getrandom() when cfg_key is
 * {0,0}.  Return 0 or -errno. */
int hash_key_init(struct hash_key *k, const uint64_t cfg_key[2]);

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

/* The 64-bit keyed hash of (dir, name[0..len)): SipHash-1-3 of le64(dir) || name.
 * Always inline: a call's saves and restores are 2% of a hit, and gcc stops
 * inlining it into udc_lookup once a second caller in lookup.c has it. */
static inline __attribute__((always_inline)) uint64_t hash_name(const struct hash_key *k, udc_ino dir, const char *name,
				 size_t len)
{
	struct sip_state s = sip_begin(k, dir);
	uint64_t total = sizeof(dir) + len;

	for (; len >= 8; len -= 8, name += 8)
		sip_compress(&s, load_le64(name));
	return sip_end(&s, load_tail(name, len) | total << 56);
}

/* The keyed hash of a directory ino alone (the directory table's key). */
static inline uint64_t hash_ino(const struct hash_key *k, udc_ino ino)
{
	struct sip_state s = sip_begin(k, ino);

	return sip_end(&s, (uint64_t)sizeof(ino) << 56);
}

#endif
