/* SPDX-License-Identifier: MIT */
/*
 * engine/hash.h - the keyed name hash.
 *
 * Key = (directory ino, name).  The hash is SipHash-2-4 (libsodium's
 * crypto_shorthash) keyed with 128 random bits per cache, so that clients
 * who choose names cannot build long hash chains.  The full 64-bit value is
 * what rculfhash compares before it calls the name match.
 */
#ifndef UDC_ENGINE_HASH_H
#define UDC_ENGINE_HASH_H

#include <stddef.h>
#include <stdint.h>

#include "include/udcache.h"

struct hash_key {
	unsigned char bytes[16];
};

/* Fill *k from cfg_key, or from getrandom() when cfg_key is {0,0}.
 * Return 0 or -errno. */
int hash_key_init(struct hash_key *k, const uint64_t cfg_key[2]);

/* The 64-bit keyed hash of (dir, name[0..len)); len <= UDC_NAME_MAX. */
uint64_t hash_name(const struct hash_key *k, udc_ino dir, const char *name, size_t len);

/* The keyed hash of a directory ino alone (the directory table's key). */
uint64_t hash_ino(const struct hash_key *k, udc_ino ino);

#endif
