/* SPDX-License-Identifier: MIT */
/*
 * tests/fuzz/fuzz_input.c - the fuzz harness's input decoding: the bytes
 * of an input read in turn as names (valid and invalid ones), directories,
 * inos and paths (tests/fuzz/make_corpus.py writes them by example).
 */
#include <stdbool.h>
#include <stdint.h>
#include <string.h>

#include "fuzz.h"

/* ------------------------------------------------------------------ */
/* Input decoding                                                      */

const uint8_t *in;
size_t in_len, in_pos;

uint8_t u8(void)
{
	return in_pos < in_len ? in[in_pos++] : 0;
}

bool more(void)
{
	return in_pos < in_len;
}

char bigname[UDC_PATH_MAX + 2];

const struct valid_name valid_names[] = {
	{ "a", 1 }, { "b", 1 }, { "c", 1 }, { "d", 1 }, { "e", 1 }, { "f", 1 },
	{ "...", 3 }, { "x y", 3 }, { "\xff\xfe", 2 }, { NULL, 64 }, { NULL, 65 },
	{ NULL, 255 }, { "l", 1 }, { "a", 1 }, { "b", 1 }, { "c", 1 },
};
#define NVALID (sizeof(valid_names) / sizeof(valid_names[0]))

/*
 * A name: mostly one of a few valid ones; some bytes give the invalid
 * ones (empty, ".", "/", NUL, 256 bytes) and ".."; 0xf0.. a raw name.
 */
void get_name(struct name *n)
{
	uint8_t b = u8();

	n->s = n->buf;
	if (b < 0xe0) {
		unsigned k = b % NVALID;
		n->s = valid_names[k].s ? valid_names[k].s : bigname;
		n->len = valid_names[k].len;
		return;
	}
	switch (b) {
	case 0xe0: n->len = 0; n->s = ""; return;
	case 0xe1: n->s = "."; n->len = 1; return;
	case 0xe3: n->s = "/"; n->len = 1; return;
	case 0xe4: n->s = "a/b"; n->len = 3; return;
	case 0xe5: n->s = "\0"; n->len = 1; return;
	case 0xe6: n->s = "a\0"; n->len = 2; return;
	case 0xe7: n->s = bigname; n->len = 256; return;
	case 0xe8: n->s = bigname; n->len = 4097; return;
	default:
		if (b < 0xf0) {
			n->s = "..";
			n->len = 2;
			return;
		}
		n->len = u8();
		if (n->len == 255)
			n->len = 256;
		for (size_t i = 0; i < n->len; i++)
			n->buf[i] = (char)u8();
		return;
	}
}

/* A directory for mutations: 1..NDIRS. */
udc_ino get_dir(void)
{
	return (udc_ino)(u8() % NDIRS) + 1;
}

/* Any ino, for lookups, walks and invalidations. */
udc_ino get_ino(void)
{
	uint8_t b = u8() % 20;

	if (b < 8)
		return b + 1;
	if (b < 12)
		return FILE0 + (b - 8);
	if (b < 15)
		return LINK0 + (b - 12);
	if (b == 15)
		return UDC_INO_NONE;
	if (b == 16)
		return 12345;
	return ROOT;
}

/* A path (or symlink target): mostly components from the names the
 * model uses, "..", "." and empty ones ("//"), or special long ones. */
size_t get_path(char *buf, size_t cap)
{
	uint8_t mode = u8();
	size_t len = 0;

	switch (mode % 16) {
	case 11: {   /* characters of an alphabet */
		static const char alpha[] = "//////aaabbbcccdddeeefffl...\0.";
		size_t n = u8() % 48;
		for (size_t i = 0; i < n && len < cap; i++)
			buf[len++] = alpha[u8() % (sizeof(alpha) - 1)];
		return len;
	}
	case 12: {   /* a long path: "a/" repeated, around UDC_PATH_MAX */
		size_t want = UDC_PATH_MAX - 8 + (u8() % 16);
		while (len < want && len < cap)
			buf[len] = len % 2 ? '/' : 'a', len++;
		return len;
	}
	case 13: {   /* "./" repeated: a target that makes the path too long */
		size_t want = UDC_PATH_MAX - 64 + (u8() % 128);
		while (len < want && len < cap)
			buf[len] = len % 2 ? '/' : '.', len++;
		return len;
	}
	case 14: {   /* a component of 255 or 256 bytes, then maybe more */
		size_t n = 255 + (u8() & 1);
		buf[len++] = '/';
		memcpy(buf + len, bigname, n);
		len += n;
		if (u8() & 1)
			buf[len++] = '/';
		return len;
	}
	case 15: {   /* raw bytes */
		size_t n = u8() % 64;
		for (size_t i = 0; i < n && len < cap; i++)
			buf[len++] = (char)u8();
		return len;
	}
	default: {   /* components */
		static const char *const tok[] = { "a", "b", "c", "d", "e", "f", "l", "..",
						   ".", "", "...", "x y" };
		size_t n = mode >> 4;   /* 0..15 components */
		if (mode & 1)
			buf[len++] = '/';
		for (size_t i = 0; i < n; i++) {
			const char *t = tok[u8() % (sizeof(tok) / sizeof(tok[0]))];
			size_t tl = strlen(t);
			if (len + tl + 1 >= cap)
				break;
			if (i)
				buf[len++] = '/';
			memcpy(buf + len, t, tl);
			len += tl;
		}
		if (mode & 2 && len < cap)
			buf[len++] = '/';
		return len;
	}
	}
}
