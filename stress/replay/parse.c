/* SPDX-License-Identifier: MIT */
/*
 * stress/replay/parse.c - strace's text, read: the first of the replay's
 * three programs (parse, model, run).
 *
 * Owns: the tables of the names strace prints (errnos, flags, the calls
 * replay understands and where their arguments are), the decoding of one
 * call's line into a struct rec, and reading a log (plain or gzip) into
 * memory.  It knows nothing of the model: joining an <unfinished ...> half
 * with its <... resumed> half is per pid, which is the model's business
 * (stress/replay/load.c), with line_unfinished() and line_is_resumed().
 *
 * 1. Reading (replay_load).  The whole log is read into memory; a log that
 *    starts with the gzip magic is read through a `gzip -dc` child (no zlib
 *    dependency).  A line is `PID syscall(args) = result` ("[pid N]" and a
 *    leading timestamp are accepted too; no pid is pid 0).  `<unfinished
 *    ...>` and `<... NAME resumed>` halves are joined per pid and the call
 *    is placed where it finished.  `---` signal lines (SIGCHLD's si_pid) and
 *    `+++` lines only mark processes as exited.  Strings are decoded (\",
 *    \\, \n..., octal, \x); a path printed truncated ("..."...) is skipped.
 *
 * Locking: none (pure functions; the tables are constant).
 * Ordering: none.
 */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <spawn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "include/udcache.h"
#include "stress/replay/parse.h"

extern char **environ;

/* ---------------------------------------------------------------------- */
/* Parsing strace's text. */

static const struct {
	const char *name;
	int value;
} errno_names[] = {
	{ "ENOENT", ENOENT },	{ "ENOTDIR", ENOTDIR },
	{ "EEXIST", EEXIST },	{ "EINVAL", EINVAL },
	{ "ENXIO", ENXIO },	{ "EACCES", EACCES },
	{ "EPERM", EPERM },	{ "EISDIR", EISDIR },
	{ "ELOOP", ELOOP },	{ "ENOTEMPTY", ENOTEMPTY },
	{ "EXDEV", EXDEV },	{ "ENAMETOOLONG", ENAMETOOLONG },
	{ "EBUSY", EBUSY },	{ "EROFS", EROFS },
	{ "ETXTBSY", ETXTBSY }, { "ENODEV", ENODEV },
	{ "EAGAIN", EAGAIN },	{ "EBADF", EBADF },
	{ "ENOSYS", ENOSYS },	{ "EOPNOTSUPP", EOPNOTSUPP },
	{ "ESTALE", ESTALE },	{ "EIO", EIO },
	{ "ENOMEM", ENOMEM },	{ "EFAULT", EFAULT },
	{ "EMFILE", EMFILE },	{ "ENFILE", ENFILE },
	{ "ENODATA", ENODATA }, { "ERANGE", ERANGE },
	{ "EINTR", EINTR },	{ "ENOEXEC", ENOEXEC },
	{ "EMLINK", EMLINK },	{ "ENOSPC", ENOSPC },
	{ "EDQUOT", EDQUOT },	{ "ECHILD", ECHILD },
	{ "ENOTTY", ENOTTY },	{ "ESRCH", ESRCH },
};

/* The errno strace names s (len bytes), or INT_MAX if errno_names[] lacks it. */
int errno_of(const char *s, size_t len)
{
	for (size_t i = 0; i < sizeof(errno_names) / sizeof(errno_names[0]); i++)
		if (strlen(errno_names[i].name) == len && memcmp(errno_names[i].name, s, len) == 0)
			return errno_names[i].value;
	return INT_MAX;
}

static const struct {
	const char *name;
	unsigned long value;
} flag_names[] = {
	{ "O_CREAT", O_CREAT },
	{ "O_EXCL", O_EXCL },
	{ "O_DIRECTORY", O_DIRECTORY },
	{ "O_NOFOLLOW", O_NOFOLLOW },
	{ "O_PATH", O_PATH },
	{ "O_TMPFILE", O_TMPFILE },
	{ "O_TRUNC", O_TRUNC },
	{ "AT_SYMLINK_NOFOLLOW", AT_SYMLINK_NOFOLLOW },
	{ "AT_EMPTY_PATH", AT_EMPTY_PATH },
	{ "AT_REMOVEDIR", AT_REMOVEDIR },
	{ "AT_SYMLINK_FOLLOW", AT_SYMLINK_FOLLOW },
	{ "RENAME_NOREPLACE", RENAME_NOREPLACE },
	{ "RENAME_EXCHANGE", RENAME_EXCHANGE },
	{ "RENAME_WHITEOUT", RENAME_WHITEOUT },
};

/* Flags as strace prints them ("O_RDONLY|O_CLOEXEC", "AT_SYMLINK_NOFOLLOW",
 * "0", "0x100"): the bits this file uses. */
unsigned long arg_flags(const char *a, size_t len)
{
	unsigned long v = 0;
	size_t i = 0;

	while (i < len) {
		size_t j = i;
		while (j < len && a[j] != '|')
			j++;
		const char *tok = a + i;
		size_t tlen = j - i;
		trim(&tok, &tlen);
		if (tlen && is_digit(tok[0])) {
			char num[32];
			size_t n = tlen < sizeof(num) - 1 ? tlen : sizeof(num) - 1;
			memcpy(num, tok, n);
			num[n] = '\0';
			v |= strtoul(num, NULL, 0);
		} else {
			for (size_t k = 0; k < sizeof(flag_names) / sizeof(flag_names[0]); k++)
				if (strlen(flag_names[k].name) == tlen &&
				    memcmp(flag_names[k].name, tok, tlen) == 0)
					v |= flag_names[k].value;
		}
		i = j + 1;
	}
	return v;
}

/* An integer argument ("3", "-100", "3</path>" with -y); false if none. */
bool arg_int(const char *a, size_t len, long long *v)
{
	char num[32];
	size_t n = 0;

	trim(&a, &len);
	while (n < len && n < sizeof(num) - 1 && (is_digit(a[n]) || (n == 0 && a[n] == '-')))
		n++;
	if (n == 0 || (n == 1 && a[0] == '-'))
		return false;
	memcpy(num, a, n);
	num[n] = '\0';
	*v = strtoll(num, NULL, 10);
	return true;
}

/* The file type an "S_IFxxx" token in [a, a + len) names, or UNKNOWN. */
uint8_t mode_type(const char *a, size_t len)
{
	const char *p = memmem(a, len, "S_IF", 4);

	if (!p)
		return UDC_TYPE_UNKNOWN;
	size_t rest = len - (size_t)(p - a);
	if (rest >= 7 && memcmp(p, "S_IFREG", 7) == 0)
		return UDC_TYPE_REG;
	if (rest >= 7 && memcmp(p, "S_IFDIR", 7) == 0)
		return UDC_TYPE_DIR;
	if (rest >= 7 && memcmp(p, "S_IFLNK", 7) == 0)
		return UDC_TYPE_SYMLINK;
	return UDC_TYPE_OTHER; /* S_IFCHR, S_IFBLK, S_IFIFO, S_IFSOCK */
}

/* The type a stat buffer argument shows ("{st_mode=S_IFDIR|0755, ...}",
 * statx's stx_mode), or UNKNOWN (an address: the call failed). */
uint8_t stat_type(const char *a, size_t len)
{
	const char *p = memmem(a, len, "st_mode=", 8);

	if (!p)
		p = memmem(a, len, "stx_mode=", 9);
	if (!p)
		return UDC_TYPE_UNKNOWN;
	return mode_type(p, len - (size_t)(p - a));
}

/* See parse.h. */
/* The escape at a[*ip] (after its backslash) into *out, *ip past it; false if bad. */
static bool str_escape(const char *a, size_t len, size_t *ip, char *out)
{
	char c = a[(*ip)++];

	switch (c) {
	case 'n':
		*out = '\n';
		break;
	case 't':
		*out = '\t';
		break;
	case 'r':
		*out = '\r';
		break;
	case 'v':
		*out = '\v';
		break;
	case 'f':
		*out = '\f';
		break;
	case 'a':
		*out = '\a';
		break;
	case 'b':
		*out = '\b';
		break;
	case 'e':
		*out = 033;
		break;
	case 'x': {
		unsigned v = 0, dig = 0;
		while (*ip < len && dig < 2) {
			char h = a[*ip];
			unsigned x = is_digit(h)	    ? (unsigned)(h - '0') :
				     (h >= 'a' && h <= 'f') ? (unsigned)(h - 'a' + 10) :
				     (h >= 'A' && h <= 'F') ? (unsigned)(h - 'A' + 10) :
							      16u;
			if (x == 16)
				break;
			v = v * 16 + x;
			(*ip)++;
			dig++;
		}
		if (!dig)
			return false;
		*out = (char)v;
		break;
	}
	default:
		if (c >= '0' && c <= '7') {
			unsigned v = (unsigned)(c - '0'), dig = 1;
			while (*ip < len && dig < 3 && a[*ip] >= '0' && a[*ip] <= '7') {
				v = v * 8 + (unsigned)(a[(*ip)++] - '0');
				dig++;
			}
			*out = (char)v;
		} else {
			*out = c; /* \\ \" \' and anything else: itself */
		}
	}
	return true;
}

int str_decode(const char *a, size_t len, char *d, const char **out, size_t *olen)
{
	trim(&a, &len);
	if (!len || a[0] != '"')
		return 0;
	size_t n = 0, i = 1;
	bool closed = false;
	while (i < len) {
		char c = a[i++];
		if (c == '"') {
			closed = true;
			break;
		}
		if (c != '\\') {
			d[n++] = c;
			continue;
		}
		if (i >= len)
			return -1;
		if (!str_escape(a, len, &i, &d[n++]))
			return -1;
	}
	if (!closed || memchr(d, '\0', n))
		return -1;
	d[n] = '\0';
	*out = d;
	*olen = n;
	return (len - i >= 3 && memcmp(a + i, "...", 3) == 0) ? 2 : 1;
}


/* ---------------------------------------------------------------------- */
/* The calls replay understands. */


const struct sysdesc sys_table[] = {
	{ "open", OP_OPEN, -1, 0, 1, -1, -1, -1, false },
	{ "openat", OP_OPEN, 0, 1, 2, -1, -1, -1, false },
	{ "openat2", OP_OPEN, 0, 1, 2, -1, -1, -1, false },
	{ "creat", OP_CREAT, -1, 0, -1, -1, -1, -1, false },
	{ "stat", OP_STAT, -1, 0, -1, -1, -1, 1, false },
	{ "stat64", OP_STAT, -1, 0, -1, -1, -1, 1, false },
	{ "lstat", OP_STAT, -1, 0, -1, -1, -1, 1, true },
	{ "lstat64", OP_STAT, -1, 0, -1, -1, -1, 1, true },
	{ "newfstatat", OP_STAT, 0, 1, 3, -1, -1, 2, false },
	{ "fstatat64", OP_STAT, 0, 1, 3, -1, -1, 2, false },
	{ "statx", OP_STAT, 0, 1, 2, -1, -1, 4, false },
	{ "access", OP_ACCESS, -1, 0, -1, -1, -1, -1, false },
	{ "faccessat", OP_ACCESS, 0, 1, -1, -1, -1, -1, false },
	{ "faccessat2", OP_ACCESS, 0, 1, 3, -1, -1, -1, false },
	{ "execve", OP_EXEC, -1, 0, -1, -1, -1, -1, false },
	{ "execveat", OP_EXEC, 0, 1, 4, -1, -1, -1, false },
	{ "readlink", OP_READLINK, -1, 0, -1, -1, -1, 1, true },
	{ "readlinkat", OP_READLINK, 0, 1, -1, -1, -1, 2, true },
	{ "unlink", OP_UNLINK, -1, 0, -1, -1, -1, -1, true },
	{ "unlinkat", OP_UNLINK, 0, 1, 2, -1, -1, -1, true },
	{ "rmdir", OP_RMDIR, -1, 0, -1, -1, -1, -1, true },
	{ "rename", OP_RENAME, -1, 0, -1, -1, 1, -1, true },
	{ "renameat", OP_RENAME, 0, 1, -1, 2, 3, -1, true },
	{ "renameat2", OP_RENAME, 0, 1, 4, 2, 3, -1, true },
	{ "mkdir", OP_MKDIR, -1, 0, -1, -1, -1, -1, true },
	{ "mkdirat", OP_MKDIR, 0, 1, -1, -1, -1, -1, true },
	{ "chdir", OP_CHDIR, -1, 0, -1, -1, -1, -1, false },
	{ "getcwd", OP_GETCWD, -1, 0, -1, -1, -1, -1, false },
	{ "link", OP_LINK, -1, 0, -1, -1, 1, -1, true },
	{ "linkat", OP_LINK, 0, 1, 4, 2, 3, -1, true },
	{ "symlink", OP_SYMLINK, -1, 1, -1, -1, -1, 0, true },
	{ "symlinkat", OP_SYMLINK, 1, 2, -1, -1, -1, 0, true },
	{ "mknod", OP_MKNOD, -1, 0, -1, -1, -1, 1, true },
	{ "mknodat", OP_MKNOD, 0, 1, -1, -1, -1, 2, true },
	{ "statfs", OP_PATH, -1, 0, -1, -1, -1, -1, false },
	{ "statfs64", OP_PATH, -1, 0, -1, -1, -1, -1, false },
	{ "chmod", OP_PATH, -1, 0, -1, -1, -1, -1, false },
	{ "fchmodat", OP_PATH, 0, 1, -1, -1, -1, -1, false },
	{ "fchmodat2", OP_PATH, 0, 1, 3, -1, -1, -1, false },
	{ "chown", OP_PATH, -1, 0, -1, -1, -1, -1, false },
	{ "lchown", OP_PATH, -1, 0, -1, -1, -1, -1, true },
	{ "fchownat", OP_PATH, 0, 1, 4, -1, -1, -1, false },
	{ "utimensat", OP_PATH, 0, 1, 3, -1, -1, -1, false },
	{ "futimesat", OP_PATH, 0, 1, -1, -1, -1, -1, false },
	{ "utimes", OP_PATH, -1, 0, -1, -1, -1, -1, false },
	{ "utime", OP_PATH, -1, 0, -1, -1, -1, -1, false },
	{ "truncate", OP_PATH, -1, 0, -1, -1, -1, -1, false },
	{ "getxattr", OP_PATH, -1, 0, -1, -1, -1, -1, false },
	{ "lgetxattr", OP_PATH, -1, 0, -1, -1, -1, -1, true },
	{ "listxattr", OP_PATH, -1, 0, -1, -1, -1, -1, false },
	{ "llistxattr", OP_PATH, -1, 0, -1, -1, -1, -1, true },
	{ "setxattr", OP_PATH, -1, 0, -1, -1, -1, -1, false },
	{ "lsetxattr", OP_PATH, -1, 0, -1, -1, -1, -1, true },
	{ "removexattr", OP_PATH, -1, 0, -1, -1, -1, -1, false },
	{ "lremovexattr", OP_PATH, -1, 0, -1, -1, -1, -1, true },
	{ "inotify_add_watch", OP_PATH, -1, 1, -1, -1, -1, -1, false },
};

#define NR_SYS (sizeof(sys_table) / sizeof(sys_table[0]))

/* The description of syscall name (len bytes), or NULL if replay skips it. */
const struct sysdesc *sys_find(const char *name, size_t len)
{
	for (size_t i = 0; i < NR_SYS; i++)
		if (strlen(sys_table[i].name) == len && memcmp(sys_table[i].name, name, len) == 0)
			return &sys_table[i];
	return NULL;
}


/* ---------------------------------------------------------------------- */
/* Lines. */

/* A character of a syscall's name. */
static bool is_name_char(char c)
{
	return is_digit(c) || c == '_' || (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z');
}

/* See parse.h. */
bool line_is_resumed(const char *s, const char *e)
{
	return e - s > 5 && memcmp(s, "<... ", 5) == 0;
}

/* See parse.h. */
bool line_is_call(const char *s, const char *e)
{
	const char *nm = s;

	while (nm < e && is_name_char(*nm))
		nm++;
	return nm != s && nm != e && *nm == '(';
}

/* See parse.h. */
ptrdiff_t line_unfinished(const char *s, const char *e)
{
	const char *u = e;

	while (u > s && is_space(u[-1]))
		u--;
	if (u - s >= 16 && memcmp(u - 16, "<unfinished ...>", 16) == 0)
		return u - 16 - s;
	return -1;
}

/* See parse.h. */
/* The arguments from s (after the '(') into r; the closing ')', or NULL
 * if the line ends first or a comment is not closed. */
static const char *parse_args(const char *s, const char *e, struct rec *r)
{
	const char *a = s;
	int depth = 0;
	bool in_str = false, done = false;
	for (; s < e; s++) {
		char ch = *s;
		if (in_str) {
			if (ch == '\\')
				s++;
			else if (ch == '"')
				in_str = false;
			continue;
		}
		if (ch == '"') {
			in_str = true;
		} else if (ch == '/' && s + 1 < e && s[1] == '*') {
			const char *end = memmem(s + 2, (size_t)(e - s - 2), "*/", 2);
			if (!end)
				return NULL;
			s = end + 1;
		} else if (ch == '(' || ch == '[' || ch == '{') {
			depth++;
		} else if (ch == ')' || ch == ']' || ch == '}') {
			if (depth == 0 && ch == ')') {
				done = true;
				break;
			}
			depth--;
		} else if (ch == ',' && depth == 0) {
			if (r->nargs < MAX_ARGS) {
				r->arg[r->nargs] = a;
				r->alen[r->nargs++] = (size_t)(s - a);
			}
			a = s + 1;
		}
	}
	if (!done)
		return NULL;
	const char *last = a;
	size_t llen = (size_t)(s - a);
	trim(&last, &llen);
	if ((llen || r->nargs) && r->nargs < MAX_ARGS) {
		r->arg[r->nargs] = a;
		r->alen[r->nargs++] = (size_t)(s - a);
	}
	return s;
}

/* The result from s (at the '='): r->ret and r->err; false if there is none. */
static bool parse_result(const char *s, const char *e, struct rec *r)
{
	if (s >= e || *s != '=')
		return false;
	s++;
	while (s < e && is_space(*s))
		s++;
	char num[32];
	size_t k = 0;
	if (s < e && *s == '-')
		num[k++] = *s++;
	if (s + 1 < e && s[0] == '0' && s[1] == 'x') {
		num[k++] = *s++;
		num[k++] = *s++;
		while (s < e && k < sizeof(num) - 1 &&
		       (is_digit(*s) || (*s >= 'a' && *s <= 'f') || (*s >= 'A' && *s <= 'F')))
			num[k++] = *s++;
	} else {
		while (s < e && k < sizeof(num) - 1 && is_digit(*s))
			num[k++] = *s++;
	}
	if (k == 0 || (k == 1 && num[0] == '-'))
		return false; /* "?": the process went away during the call */
	num[k] = '\0';
	r->ret = strtoll(num, NULL, 0);
	r->err = 0;
	if (r->ret < 0) {
		while (s < e && is_space(*s))
			s++;
		const char *en = s;
		while (s < e && ((*s >= 'A' && *s <= 'Z') || is_digit(*s)))
			s++;
		r->err = s > en ? errno_of(en, (size_t)(s - en)) : INT_MAX;
	}
	return true;
}

bool parse_call(const char *s, const char *e, struct rec *r)
{
	const char *n = s;

	while (s < e && is_name_char(*s))
		s++;
	if (s == n || s >= e || *s != '(')
		return false;
	r->name = n;
	r->nlen = (size_t)(s - n);
	r->nargs = 0;
	s = parse_args(s + 1, e, r);
	if (!s)
		return false;
	s++;
	while (s < e && is_space(*s))
		s++;
	return parse_result(s, e, r);
}

/* ---------------------------------------------------------------------- */
/* Reading the file. */

static int read_fd(int fd, char **buf, size_t *len)
{
	size_t cap = 1 << 16, n = 0;
	char *p = malloc(cap);

	if (!p)
		return -ENOMEM;
	for (;;) {
		if (n == cap) {
			char *q = cap > SIZE_MAX / 2 ? NULL : realloc(p, cap * 2);
			if (!q) {
				free(p);
				return -ENOMEM;
			}
			p = q;
			cap *= 2;
		}
		ssize_t r = read(fd, p + n, cap - n);
		if (r < 0) {
			if (errno == EINTR)
				continue;
			int e = -errno;
			free(p);
			return e;
		}
		if (r == 0)
			break;
		n += (size_t)r;
	}
	*buf = p;
	*len = n;
	return 0;
}

/* The whole log into *buf, gunzipped by a `gzip -dc` child if it is gzip. */
int read_log(const char *path, char **buf, size_t *len, char *err, size_t errlen)
{
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	unsigned char magic[2];

	if (fd < 0) {
		int e = errno;
		snprintf(err, errlen, "cannot open %s: %s", path, strerror(e));
		return -e;
	}
	ssize_t m = pread(fd, magic, 2, 0);
	if (m != 2 || magic[0] != 0x1f || magic[1] != 0x8b) {
		int r = read_fd(fd, buf, len);
		close(fd);
		if (r)
			snprintf(err, errlen, "cannot read %s: %s", path, strerror(-r));
		return r;
	}

	int pfd[2];
	if (pipe2(pfd, O_CLOEXEC)) {
		int e = errno;
		close(fd);
		snprintf(err, errlen, "pipe: %s", strerror(e));
		return -e;
	}
	posix_spawn_file_actions_t fa;
	posix_spawn_file_actions_init(&fa);
	posix_spawn_file_actions_adddup2(&fa, fd, 0);
	posix_spawn_file_actions_adddup2(&fa, pfd[1], 1);
	char *argv[] = { (char *)"gzip", (char *)"-dc", NULL };
	pid_t pid;
	int e = posix_spawnp(&pid, "gzip", &fa, NULL, argv, environ);
	posix_spawn_file_actions_destroy(&fa);
	close(fd);
	close(pfd[1]);
	if (e) {
		close(pfd[0]);
		snprintf(err, errlen, "cannot run gzip -dc for %s: %s", path, strerror(e));
		return -e;
	}
	int r = read_fd(pfd[0], buf, len);
	close(pfd[0]);
	int status;
	while (waitpid(pid, &status, 0) < 0 && errno == EINTR)
		;
	if (r) {
		snprintf(err, errlen, "cannot read gzip -dc %s: %s", path, strerror(-r));
		return r;
	}
	if (!WIFEXITED(status) || WEXITSTATUS(status) != 0) {
		free(*buf);
		*buf = NULL;
		snprintf(err, errlen, "gzip -dc %s failed (%s %d)", path,
			 WIFEXITED(status) ? "exit status" : "signal",
			 WIFEXITED(status) ? WEXITSTATUS(status) : WTERMSIG(status));
		return -EIO;
	}
	return 0;
}

