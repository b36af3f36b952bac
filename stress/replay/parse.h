/* SPDX-License-Identifier: MIT */
/*
 * stress/replay/parse.h - strace's text, read: the declarations of
 * stress/replay/parse.c (the replay's first program; see its top comment).
 *
 * Owns nothing at run time: a parsed call points into the line it was
 * parsed from.
 *
 * Locking: none (pure functions of their arguments, constant tables).
 * Ordering: none.
 */
#ifndef UDC_STRESS_REPLAY_PARSE_H
#define UDC_STRESS_REPLAY_PARSE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define MAX_ARGS 8

#ifndef RENAME_NOREPLACE
#define RENAME_NOREPLACE 1
#endif
#ifndef RENAME_EXCHANGE
#define RENAME_EXCHANGE 2
#endif
#ifndef RENAME_WHITEOUT
#define RENAME_WHITEOUT 4
#endif

/* One complete call: "name(arg, ...) = ret [ERRNO ...]".  Pointers into the line. */
struct rec {
	int pid;
	const char *name;
	size_t nlen;
	const char *arg[MAX_ARGS];
	size_t alen[MAX_ARGS];
	int nargs;
	long long ret;
	int err; /* errno when ret < 0 (INT_MAX: a name this file does not know) */
};

/* What a call does, for the model. */
enum op {
	OP_OPEN,
	OP_CREAT,
	OP_STAT,
	OP_ACCESS,
	OP_EXEC,
	OP_READLINK,
	OP_UNLINK,
	OP_RMDIR,
	OP_RENAME,
	OP_MKDIR,
	OP_CHDIR,
	OP_GETCWD,
	OP_LINK,
	OP_SYMLINK,
	OP_MKNOD,
	OP_PATH, /* any other call that walks a path: exists or not */
};

/* How replay reads a call it understands. */
struct sysdesc {
	const char *name;
	uint8_t op;
	int8_t dirfd, path;   /* argument indexes (-1: none, AT_FDCWD) */
	int8_t flags;	      /* open flags, AT_* flags, RENAME_* flags (-1: none) */
	int8_t dirfd2, path2; /* rename, link: the new name */
	int8_t aux;	      /* stat: the buffer; readlink: the buffer; symlink: the
			       * target; mknod: the mode (-1: none) */
	bool nofollow;	      /* does not follow a final symlink by default */
};


/* Blank within a line. */
static inline bool is_space(char c)
{
	return c == ' ' || c == '\t' || c == '\r';
}

/* A decimal digit (locale-free). */
static inline bool is_digit(char c)
{
	return c >= '0' && c <= '9';
}

/* Trim spaces at both ends of [*s, *s + *len). */
static inline void trim(const char **s, size_t *len)
{
	while (*len && is_space(**s)) {
		(*s)++;
		(*len)--;
	}
	while (*len && is_space((*s)[*len - 1]))
		(*len)--;
}

/* The errno strace names s (len bytes), or INT_MAX if replay does not know it. */
int errno_of(const char *s, size_t len);
/* Flags as strace prints them ("O_RDONLY|O_CLOEXEC", "AT_SYMLINK_NOFOLLOW",
 * "0", "0x100"): the bits replay uses. */
unsigned long arg_flags(const char *a, size_t len);
/* An integer argument ("3", "-100", "3</path>" with -y); false if none. */
bool arg_int(const char *a, size_t len, long long *v);
/* The file type an "S_IFxxx" token in [a, a + len) names, or UNKNOWN. */
uint8_t mode_type(const char *a, size_t len);
/* The type a stat buffer argument shows, or UNKNOWN (an address: the call failed). */
uint8_t stat_type(const char *a, size_t len);
/*
 * Decode string argument a (len bytes) into d (len + 1 bytes at least).
 * Return 1 (a string: *out = d, *olen its length, NUL-terminated), 2 (a
 * string strace truncated: the prefix is decoded), 0 (not a string: NULL,
 * an address), -1 (malformed, or a NUL inside).
 */
int str_decode(const char *a, size_t len, char *d, const char **out, size_t *olen);

/* The calls replay understands, and the one named (len bytes), or NULL. */
extern const struct sysdesc sys_table[];
const struct sysdesc *sys_find(const char *name, size_t len);

/* Whether [s, e) starts "<... NAME resumed>": the second half of a call. */
bool line_is_resumed(const char *s, const char *e);
/* Whether [s, e) starts "name(": the first half of a call, or all of it. */
bool line_is_call(const char *s, const char *e);
/* If [s, e) ends "<unfinished ...>", the length of what comes before it, else -1. */
ptrdiff_t line_unfinished(const char *s, const char *e);
/* Split "name(args) = result" (from s to e) into r; false if malformed. */
bool parse_call(const char *s, const char *e, struct rec *r);

/* The whole log into *buf (malloc'd), gunzipped by a `gzip -dc` child if
 * it is gzip: 0 or -errno, with a message in err. */
int read_log(const char *path, char **buf, size_t *len, char *err, size_t errlen);

#endif /* UDC_STRESS_REPLAY_PARSE_H */
