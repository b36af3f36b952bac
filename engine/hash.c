/* SPDX-License-Identifier: MIT */
/*
 * engine/hash.c - the keyed name hash (see hash.h).
 *
 * Owns: nothing shared.  The key is written once in udc_create() before the
 * cache is published and only read afterwards.
 *
 * Locking: none.
 * Ordering: none (pure functions of their arguments).
 *
 * Why SipHash-2-4 from libsodium: it is the keyed PRF that Linux (siphash),
 * Python and Rust use against hash flooding; libsodium is maintained and
 * packaged by Debian.  Its cost on short names is measured by
 * `udc-stress --workload hash` and reported in BENCHMARKS.md.
 */
#include "engine/hash.h"

#include <errno.h>
#include <string.h>
#include <sys/random.h>

#include <sodium/crypto_shorthash_siphash24.h>

int hash_key_init(struct hash_key *k, const uint64_t cfg_key[2])
{
	if (cfg_key[0] || cfg_key[1]) {
		memcpy(k->bytes, cfg_key, sizeof(k->bytes));
		return 0;
	}
	size_t got = 0;
	while (got < sizeof(k->bytes)) {
		ssize_t n = getrandom(k->bytes + got, sizeof(k->bytes) - got, 0);
		if (n < 0) {
			if (errno == EINTR)
				continue;
			return -errno;
		}
		got += (size_t)n;
	}
	return 0;
}

uint64_t hash_name(const struct hash_key *k, udc_ino dir, const char *name, size_t len)
{
	unsigned char buf[sizeof(udc_ino) + UDC_NAME_MAX];
	uint64_t h;

	memcpy(buf, &dir, sizeof(dir));
	memcpy(buf + sizeof(dir), name, len);
	crypto_shorthash_siphash24((unsigned char *)&h, buf, sizeof(dir) + len, k->bytes);
	return h;
}

uint64_t hash_ino(const struct hash_key *k, udc_ino ino)
{
	uint64_t h;

	crypto_shorthash_siphash24((unsigned char *)&h, (const unsigned char *)&ino,
				   sizeof(ino), k->bytes);
	return h;
}
