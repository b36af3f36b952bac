/*
 * tests/engine/test_hash.c - the keyed name hash (engine/hash.h).
 *
 * Both forms of hash_name(): NH then AES (where the CPU has AES-NI),
 * checked piece by piece: AES-128 against FIPS-197's example, NH against
 * a plain sum over the zero-padded pairs at every name length.  And
 * SipHash-1-3 of le64(dir) || name (elsewhere), specialised so that it
 * never copies or over-reads the name.  With the reference key 00..0f,
 * dir = le64(00..07) and name = bytes 08..n-1, its message is the
 * reference message 00..n-1, so vectors 8..63 check every name length
 * 0..55 (every tail length, one to six whole words).  The reference
 * vectors below are the low 32 bits of SipHash-1-3 as Linux's
 * lib/siphash_kunit.c lists them (hsiphash on 64-bit machines), and the
 * full 64 bits of the empty message's hash (Rust's SipHasher13 tests).
 */
#include <criterion/criterion.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "common/prng.h"
#include "engine/hash.h"

static const uint32_t sip13_low32[64] = {
	0x050fc4dc, 0x7d57ca93, 0x4dc7d44d, 0xe7ddf7fb, 0x88d38328, 0x49533b67, 0xc59f22a7,
	0x9bb11140, 0x8d299a8e, 0x6c063de4, 0x92ff097f, 0xf94dc352, 0x57b4d9a2, 0x1229ffa7,
	0xc0f95d34, 0x2a519956, 0x7d908b66, 0x63dbd80c, 0xb473e63e, 0x8d297d1c, 0xa6cce040,
	0x2b45f844, 0xa320872e, 0xdae6c123, 0x67349c8c, 0x705b0979, 0xca9913a5, 0x4ade3b35,
	0xef6cd00d, 0x4ab1e1f4, 0x43c5e663, 0x8c21d1bc, 0x16a7b60d, 0x7a8ff9bf, 0x1f2a753e,
	0xbf186b91, 0xada26206, 0xa3c33057, 0xae3a36a1, 0x7b108392, 0x99e41531, 0x3f1ad944,
	0xc8138825, 0xc28949a6, 0xfaf8876b, 0x9f042196, 0x68b1d623, 0x8b5114fd, 0xdf074c46,
	0x12cc86b3, 0x0a52098f, 0x9d292f9a, 0xa2f41f12, 0x43a71ed0, 0x73f0bce6, 0x70a7e980,
	0x243c6d75, 0xfdb71513, 0xa67d8a08, 0xb7e8f148, 0xf7a644ee, 0x0f1837f2, 0x4b6694e0,
	0xb7bbb3a8,
};

static const uint64_t ref_words[2] = { 0x0706050403020100ull, 0x0f0e0d0c0b0a0908ull };
static const udc_ino ref_dir = 0x0706050403020100ull;   /* the message's bytes 00..07 */
static struct hash_key ref_key;   /* SipHash-1-3, the reference key */
static struct hash_key best_key;  /* what udc_create would choose, the same key */

static void ref_key_init(void)
{
	cr_assert_eq(hash_key_init_as(&ref_key, ref_words, HASH_SIPHASH), 0);
	cr_assert_eq(hash_key_init(&best_key, ref_words), 0);
}

/* The properties every form must have run on both keys. */
static const struct hash_key *const both_keys[] = { &ref_key, &best_key };
#define NR_KEYS (sizeof(both_keys) / sizeof(both_keys[0]))

Test(hash, reference_vectors_every_name_length, .init = ref_key_init)
{
	char msg[64];

	for (unsigned i = 0; i < sizeof(msg); i++)
		msg[i] = (char)i;
	for (size_t n = 8; n < 64; n++) {
		uint64_t h = hash_name(&ref_key, ref_dir, msg + 8, n - 8);
		cr_expect_eq((uint32_t)h, sip13_low32[n], "message of %zu bytes: %08x, want %08x", n,
			     (unsigned)(uint32_t)h, (unsigned)sip13_low32[n]);
	}
	/* The empty name: the 8-byte message. */
	cr_expect_eq((uint32_t)hash_name(&ref_key, ref_dir, msg, 0), sip13_low32[8]);
}

/* Every 64-bit output, not only its low half: the empty message's is
 * known in full; the others' high halves differ when any bit of the key,
 * the dir or the name does. */
Test(hash, full_width_and_every_input_bit, .init = ref_key_init)
{
	/* sip_begin() compresses a first word: the empty message starts bare. */
	struct sip_state e = ref_key.init;
	cr_expect_eq(sip_end(&e, 0), 0xabac0158050fc4dcull, "SipHash-1-3 of the empty message");

	for (unsigned kk = 0; kk < NR_KEYS; kk++) {
		const struct hash_key *key = both_keys[kk];
		char name[24] = "a-name-of-twenty-three";
		uint64_t h = hash_name(key, 42, name, 23);
		for (unsigned bit = 0; bit < 64; bit++) {
			cr_expect_neq(hash_name(key, 42ull ^ (1ull << bit), name, 23), h, "key %u dir bit %u",
				      kk, bit);
			for (unsigned w = 0; w < 2; w++) {
				uint64_t words[2] = { ref_words[0], ref_words[1] };
				struct hash_key k;
				words[w] ^= 1ull << bit;
				cr_assert_eq(hash_key_init_as(&k, words, kk ? HASH_BEST : HASH_SIPHASH), 0);
				cr_expect_neq(hash_name(&k, 42, name, 23), h, "key %u word %u bit %u", kk, w, bit);
			}
		}
		uint64_t flipped = 0;
		for (unsigned bit = 0; bit < 23 * 8; bit++) {
			name[bit / 8] ^= (char)(1 << (bit % 8));
			uint64_t g = hash_name(key, 42, name, 23);
			cr_expect_neq(g, h, "key %u name bit %u", kk, bit);
			flipped |= g ^ h;
			name[bit / 8] ^= (char)(1 << (bit % 8));
		}
		cr_expect_eq(flipped, ~0ull, "key %u: output bits that never changed: %016llx", kk,
			     (unsigned long long)~flipped);
		/* A name is not its zero-padded extension (the length is hashed). */
		cr_expect_neq(hash_name(key, 42, name, 22),
			      hash_name(key, 42, "a-name-of-twenty-thre\0", 22 + 1), "key %u", kk);
	}
}

/* The directory table's key (hash.h, dir_key): an odd multiplier, so a
 * bijection that dir_key_ino undoes, from the key (another key, another
 * multiplier); and bit_reverse64 against its definition. */
Test(hash, directory_keys_give_their_ino_back, .init = ref_key_init)
{
	uint64_t x = 0x9e3779b97f4a7c15ull;

	for (unsigned kk = 0; kk < NR_KEYS; kk++) {
		const struct hash_key *key = both_keys[kk];
		cr_expect_eq(key->dir_mul & 1, 1, "key %u: an even multiplier", kk);
		cr_expect_eq(key->dir_mul * key->dir_mul_inv, 1, "key %u: not its inverse", kk);
		const udc_ino inos[] = { 0, 1, 2, 42, UINT32_MAX, UDC_INO_NONE, UINT64_MAX - 1 };
		for (unsigned i = 0; i < sizeof(inos) / sizeof(inos[0]); i++)
			cr_expect_eq(dir_key_ino(key, dir_key(key, inos[i])), inos[i], "key %u ino %llu",
				     kk, (unsigned long long)inos[i]);
		for (unsigned i = 0; i < 10000; i++) {
			x = x * 6364136223846793005ull + 1442695040888963407ull;
			cr_assert_eq(dir_key_ino(key, dir_key(key, x)), x, "key %u ino %llx", kk,
				     (unsigned long long)x);
		}
	}
	struct hash_key other;
	const uint64_t words[2] = { ref_words[0] ^ 1, ref_words[1] };
	cr_assert_eq(hash_key_init_as(&other, words, HASH_SIPHASH), 0);
	cr_expect_neq(other.dir_mul, ref_key.dir_mul, "the multiplier does not depend on the key");

	for (unsigned i = 0; i < 1000; i++) {
		x = x * 6364136223846793005ull + 1442695040888963407ull;
		uint64_t r = 0;
		for (unsigned b = 0; b < 64; b++)
			r |= (x >> b & 1) << (63 - b);
		cr_assert_eq(bit_reverse64(x), r, "%016llx", (unsigned long long)x);
	}
}

/* The tail loads read only the name's bytes: a name that ends at a page
 * whose next page is inaccessible hashes without a fault, and the same as
 * a copy of it anywhere else. */
Test(hash, reads_only_the_name, .init = ref_key_init)
{
	long pg = sysconf(_SC_PAGESIZE);
	char *map = mmap(NULL, 2 * (size_t)pg, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);

	cr_assert_neq(map, MAP_FAILED);
	cr_assert_eq(mprotect(map + pg, (size_t)pg, PROT_NONE), 0);
	char copy[UDC_NAME_MAX + 8];
	for (size_t len = 1; len <= UDC_NAME_MAX; len++) {
		char *at = map + pg - len;
		for (size_t i = 0; i < len; i++)
			at[i] = (char)('a' + (i * 7 + len) % 26);
		memcpy(copy + 3, at, len);   /* misaligned, with bytes after it */
		memset(copy + 3 + len, 'x', sizeof(copy) - 3 - len);
		for (unsigned kk = 0; kk < NR_KEYS; kk++)
			cr_expect_eq(hash_name(both_keys[kk], 9, at, len),
				     hash_name(both_keys[kk], 9, copy + 3, len), "key %u length %zu", kk, len);
	}
	munmap(map, 2 * (size_t)pg);
}

#if HASH_NH_AES
/* Does this CPU have AES-NI, as the kernel reports it (not hash.c's cpuid)? */
static bool cpuinfo_has_aes(void)
{
	FILE *f = fopen("/proc/cpuinfo", "r");
	char line[8192];
	bool aes = false;

	cr_assert_not_null(f);
	while (!aes && fgets(line, sizeof(line), f))
		if (strncmp(line, "flags", 5) == 0)
			aes = strstr(line, " aes ") || strstr(line, " aes\n");
	fclose(f);
	return aes;
}

static bool best_key_has_aes(void)
{
	struct hash_key k;

	cr_assert_eq(hash_key_init(&k, ref_words), 0);
	return k.aes;
}

/* udc_create's key is NH then AES exactly where the CPU has AES-NI, and
 * SipHash-1-3 when the tests ask (hash_kind_default). */
Test(hash, the_cpu_decides_the_form)
{
	struct hash_key k;

	cr_expect_eq(best_key_has_aes(), cpuinfo_has_aes(), "AES-NI in /proc/cpuinfo: %d",
		     cpuinfo_has_aes());
	hash_kind_default = HASH_SIPHASH;
	cr_assert_eq(hash_key_init(&k, ref_words), 0);
	cr_expect(!k.aes, "hash_kind_default ignored");
	hash_kind_default = HASH_BEST;
}

/* AES-128 as the hash's last step computes it: FIPS-197's example
 * (appendix C.1), key 00..0f, plaintext 00112233..ff, ciphertext
 * 69c4e0d86a7b0430d8cdb78070b4c55a, whose first 8 bytes (little-endian)
 * are aes_low64's answer. */
Test(hash, aes_is_fips_197s)
{
	static const unsigned char key[16] = { 0x00, 0x01, 0x02, 0x03, 0x04, 0x05, 0x06, 0x07,
					       0x08, 0x09, 0x0a, 0x0b, 0x0c, 0x0d, 0x0e, 0x0f };
	static const unsigned char plain[16] = { 0x00, 0x11, 0x22, 0x33, 0x44, 0x55, 0x66, 0x77,
						 0x88, 0x99, 0xaa, 0xbb, 0xcc, 0xdd, 0xee, 0xff };
	static const unsigned char cipher[16] = { 0x69, 0xc4, 0xe0, 0xd8, 0x6a, 0x7b, 0x04, 0x30,
						  0xd8, 0xcd, 0xb7, 0x80, 0x70, 0xb4, 0xc5, 0x5a };
	struct hash_key k;
	unsigned __int128 x;
	uint64_t want;
	unsigned char got[16];

	if (!best_key_has_aes())
		cr_skip_test("no AES-NI");
	aes128_schedule(k.rk, _mm_loadu_si128((const __m128i *)key));
	memcpy(&x, plain, sizeof(x));
	memcpy(&want, cipher, sizeof(want));
	cr_expect_eq(aes_low64(&k, x), want, "AES-128: %016llx, want %016llx",
		     (unsigned long long)aes_low64(&k, x), (unsigned long long)want);
	/* the set-up's AES, all 16 bytes */
	_mm_storeu_si128((__m128i *)got, aes128_encrypt(k.rk, _mm_loadu_si128((const __m128i *)plain)));
	cr_expect_eq(memcmp(got, cipher, sizeof(got)), 0, "aes128_encrypt differs from FIPS-197");
}

/* The keys are what the header says: under the master key (k0, k1), AES
 * of the counter block 0 is the AES key, and of blocks 1..NH_PAIRS NH's
 * key words, two a block.  So every NH word is its own (none repeats, and
 * none is the AES key's), which is what keeps names whose 16-byte blocks
 * are swapped apart: a derivation that gave every pair the same words
 * made such names collide under every key. */
Test(hash, keys_are_aes_of_a_counter_under_the_key)
{
	uint64_t seed = test_seed("hash/keys_are_aes_of_a_counter_under_the_key");   /* printed */
	struct prng rng;
	uint64_t cfg[2];
	struct hash_key k;
	__m128i master[11], rk[11];

	if (!best_key_has_aes())
		cr_skip_test("no AES-NI");
	prng_init(&rng, seed);
	cfg[0] = prng_next(&rng) | 1;
	cfg[1] = prng_next(&rng);
	cr_assert_eq(hash_key_init(&k, cfg), 0);
	cr_assert(k.aes);
	aes128_schedule(master, _mm_set_epi64x((long long)cfg[1], (long long)cfg[0]));
	aes128_schedule(rk, aes128_encrypt(master, _mm_setzero_si128()));
	cr_expect_eq(memcmp(rk, k.rk, sizeof(rk)), 0, "the AES key is not AES(0) under the key");
	for (unsigned i = 0; i < NH_PAIRS; i++) {
		uint64_t want[2];
		_mm_storeu_si128((__m128i *)want,
				 aes128_encrypt(master, _mm_set_epi64x(0, (long long)i + 1)));
		cr_expect(want[0] == k.nh[2 * i] && want[1] == k.nh[2 * i + 1],
			  "NH's pair %u is not AES(%u) under the key", i, i + 1);
	}
	uint64_t aes_key[2];
	_mm_storeu_si128((__m128i *)aes_key, k.rk[0]);
	for (unsigned i = 0; i < 2 * NH_PAIRS; i++) {
		cr_expect(k.nh[i] != aes_key[0] && k.nh[i] != aes_key[1], "NH word %u is the AES key's", i);
		for (unsigned j = 0; j < i; j++)
			cr_expect_neq(k.nh[i], k.nh[j], "NH words %u and %u repeat", j, i);
	}
	/* what a repeated pair key lets through: swapped 16-byte blocks */
	char a[32], b[32];
	for (unsigned trial = 0; trial < 1000; trial++) {
		for (unsigned i = 0; i < 32; i++)
			a[i] = (char)(1 + prng_below(&rng, 255));
		memcpy(b, a + 16, 16);
		memcpy(b + 16, a, 16);
		if (memcmp(a, b, 32) == 0)
			continue;
		cr_expect_neq(hash_name(&k, 7, a, 32), hash_name(&k, 7, b, 32), "trial %u", trial);
	}
}

/* NH then AES, from its definition: the message's words (ino, the tail
 * with 8 + len in its top byte, the name's whole words, a zero word if
 * that makes them odd), every pair's product summed; then AES.  At every
 * name length, for random names under a random key, and under a key with
 * every word set (the adds of non-zero words carry). */
Test(hash, nh_then_aes_is_its_definition, .init = ref_key_init)
{
	uint64_t seed = test_seed("hash/nh_then_aes_is_its_definition");   /* printed */
	struct prng rng;
	struct hash_key keys[2];

	prng_init(&rng, seed);
	uint64_t cfg[2] = { prng_next(&rng) | 1, prng_next(&rng) };

	if (!best_key_has_aes())
		cr_skip_test("no AES-NI: udc_create uses SipHash-1-3 here");
	cr_assert_eq(hash_key_init(&keys[0], cfg), 0);
	keys[1] = keys[0];
	memset(keys[1].nh, 0xff, sizeof(keys[1].nh));
	for (unsigned kk = 0; kk < 2; kk++) {
		const struct hash_key *k = &keys[kk];
		for (size_t len = 0; len <= UDC_NAME_MAX; len++) {
			char name[UDC_NAME_MAX];
			uint64_t w[2 * NH_PAIRS] = { 0 };
			udc_ino dir = prng_next(&rng);

			for (size_t i = 0; i < len; i++)
				name[i] = (char)(1 + prng_below(&rng, 255));   /* any byte but NUL */
			w[0] = dir;
			memcpy(&w[1], name + len / 8 * 8, len % 8);   /* little-endian, this machine */
			w[1] |= (uint64_t)(8 + len) << 56;
			memcpy(&w[2], name, len / 8 * 8);
			unsigned __int128 sum = 0;
			for (unsigned i = 0; i < (2 + len / 8 + 1) / 2; i++)
				sum += (unsigned __int128)(w[2 * i] + k->nh[2 * i]) * (w[2 * i + 1] + k->nh[2 * i + 1]);
			cr_expect_eq(hash_name(k, dir, name, len), aes_low64(k, sum), "key %u length %zu",
				     kk, len);
		}
	}
}
#endif
