/* SPDX-License-Identifier: MIT */
/*
 * tests/stress/test_parse.c - the replay's strace parser
 * (stress/replay/parse.c): strace lines in, what the parser makes of them
 * checked; and small logs through replay_load(), for what only the whole
 * reading does (pids, <unfinished ...>/<... resumed> halves joined,
 * signal and exit lines, the events each call gives).
 *
 * Owns: the temporary log files of the replay_load() tests (removed at
 * the end of each test).
 *
 * Locking: none (each test is single-threaded).
 * Ordering: none.
 */
#include <criterion/criterion.h>

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "stress/replay.h"
#include "stress/replay/parse.h"

/* parse_call() over a NUL-terminated line. */
static bool call_of(const char *line, struct rec *r)
{
	*r = (struct rec){ .pid = 0 };
	return parse_call(line, line + strlen(line), r);
}

static bool name_is(const struct rec *r, const char *name)
{
	return r->nlen == strlen(name) && memcmp(r->name, name, r->nlen) == 0;
}

/* Argument k of r, decoded as a string into buf (>= its length + 1). */
static int arg_string(const struct rec *r, int k, char *buf, const char **s, size_t *len)
{
	return str_decode(r->arg[k], r->alen[k], buf, s, len);
}

Test(parse, open_success)
{
	struct rec r;
	char buf[256];
	const char *s;
	size_t len;

	cr_assert(call_of("open(\"/etc/passwd\", O_RDONLY|O_CLOEXEC) = 3", &r));
	cr_assert(name_is(&r, "open"));
	cr_assert_eq(r.nargs, 2);
	cr_assert_eq(r.ret, 3);
	cr_assert_eq(r.err, 0);
	cr_assert_eq(arg_string(&r, 0, buf, &s, &len), 1);
	cr_assert_eq(len, strlen("/etc/passwd"));
	cr_assert_str_eq(s, "/etc/passwd");
	cr_assert_eq(arg_flags(r.arg[1], r.alen[1]) & (O_CREAT | O_EXCL | O_DIRECTORY), 0);
}

Test(parse, openat_enoent_and_flags)
{
	struct rec r;
	long long fd;

	cr_assert(call_of("openat(AT_FDCWD, \"x/y\", O_WRONLY|O_CREAT|O_EXCL, 0644) = -1 ENOENT "
			  "(No such file or directory)",
			  &r));
	cr_assert(name_is(&r, "openat"));
	cr_assert_eq(r.nargs, 4);
	cr_assert_eq(r.ret, -1);
	cr_assert_eq(r.err, ENOENT);
	cr_assert_not(arg_int(r.arg[0], r.alen[0], &fd), "AT_FDCWD is no number");
	unsigned long f = arg_flags(r.arg[2], r.alen[2]);
	cr_assert_eq(f & (O_CREAT | O_EXCL), (unsigned long)(O_CREAT | O_EXCL));

	cr_assert(call_of("openat(3</usr/lib>, \"libc.so.6\", O_RDONLY|O_DIRECTORY) = -1 ENOTDIR "
			  "(Not a directory)",
			  &r));
	cr_assert(arg_int(r.arg[0], r.alen[0], &fd));
	cr_assert_eq(fd, 3, "an fd printed with -y is its number");
	cr_assert_eq(r.err, ENOTDIR);
	cr_assert(arg_flags(r.arg[2], r.alen[2]) & O_DIRECTORY);
}

Test(parse, stat_and_lstat_types)
{
	struct rec r;

	cr_assert(call_of("stat(\"/usr\", {st_mode=S_IFDIR|0755, st_size=4096, ...}) = 0", &r));
	cr_assert(name_is(&r, "stat"));
	cr_assert_eq(r.nargs, 2, "the braces are one argument");
	cr_assert_eq(stat_type(r.arg[1], r.alen[1]), UDC_TYPE_DIR);

	cr_assert(call_of("lstat(\"/bin\", {st_mode=S_IFLNK|0777, st_size=7, ...}) = 0", &r));
	cr_assert_eq(stat_type(r.arg[1], r.alen[1]), UDC_TYPE_SYMLINK);
	cr_assert(sys_find(r.name, r.nlen)->nofollow, "lstat does not follow");
	cr_assert_not(sys_find("stat", 4)->nofollow);

	cr_assert(call_of("newfstatat(AT_FDCWD, \"f\", {st_mode=S_IFREG|0644, st_size=1, ...}, 0) = 0",
			  &r));
	cr_assert_eq(r.nargs, 4);
	cr_assert_eq(stat_type(r.arg[2], r.alen[2]), UDC_TYPE_REG);

	cr_assert(call_of("stat(\"/nope\", 0x7ffc2a1b3c40) = -1 ENOENT (No such file or directory)",
			  &r));
	cr_assert_eq(stat_type(r.arg[1], r.alen[1]), UDC_TYPE_UNKNOWN, "an address: no type");
	cr_assert_eq(r.err, ENOENT);
}

Test(parse, access_readlink_execve)
{
	struct rec r;
	char buf[256];
	const char *s;
	size_t len;

	cr_assert(call_of("access(\"/etc/ld.so.preload\", R_OK) = -1 ENOENT (No such file or "
			  "directory)",
			  &r));
	cr_assert_eq(sys_find(r.name, r.nlen)->op, OP_ACCESS);
	cr_assert_eq(r.err, ENOENT);

	cr_assert(call_of("readlink(\"/usr/bin/cc\", \"gcc-12\", 4095) = 6", &r));
	cr_assert_eq(sys_find(r.name, r.nlen)->op, OP_READLINK);
	cr_assert_eq(r.ret, 6);
	cr_assert_eq(arg_string(&r, 1, buf, &s, &len), 1);
	cr_assert_str_eq(s, "gcc-12");

	cr_assert(call_of("readlink(\"/etc/passwd\", 0x7ffd1000, 4095) = -1 EINVAL (Invalid argument)",
			  &r));
	cr_assert_eq(r.err, EINVAL);

	cr_assert(call_of("execve(\"/usr/bin/make\", [\"make\", \"-j2\"], 0x7ffc /* 30 vars */) = 0",
			  &r));
	cr_assert_eq(sys_find(r.name, r.nlen)->op, OP_EXEC);
	cr_assert_eq(r.nargs, 3, "a comment and a bracketed list do not split arguments");
}

Test(parse, mutations)
{
	struct rec r;
	char buf[256];
	const char *s;
	size_t len;

	cr_assert(call_of("rename(\"a.tmp\", \"a\") = 0", &r));
	const struct sysdesc *d = sys_find(r.name, r.nlen);
	cr_assert_eq(d->op, OP_RENAME);
	cr_assert_eq(d->path, 0);
	cr_assert_eq(d->path2, 1);
	cr_assert_eq(arg_string(&r, 1, buf, &s, &len), 1);
	cr_assert_str_eq(s, "a");

	cr_assert(call_of("renameat2(AT_FDCWD, \"a\", AT_FDCWD, \"b\", RENAME_NOREPLACE) = -1 EEXIST "
			  "(File exists)",
			  &r));
	cr_assert_eq(r.err, EEXIST);
	cr_assert_eq(arg_flags(r.arg[4], r.alen[4]), RENAME_NOREPLACE);

	cr_assert(call_of("unlink(\"core\") = 0", &r));
	cr_assert_eq(sys_find(r.name, r.nlen)->op, OP_UNLINK);
	cr_assert(call_of("unlinkat(5, \"d\", AT_REMOVEDIR) = -1 ENOTEMPTY (Directory not empty)",
			  &r));
	cr_assert_eq(arg_flags(r.arg[2], r.alen[2]), (unsigned long)AT_REMOVEDIR);
	cr_assert_eq(r.err, ENOTEMPTY);
	cr_assert(call_of("mkdir(\"build\", 0777) = -1 EEXIST (File exists)", &r));
	cr_assert_eq(sys_find(r.name, r.nlen)->op, OP_MKDIR);
	cr_assert(call_of("rmdir(\"build\") = 0", &r));
	cr_assert_eq(sys_find(r.name, r.nlen)->op, OP_RMDIR);
	cr_assert_null(sys_find("close", 5), "fd-only calls are not replayed");
}

Test(parse, results_and_errnos)
{
	struct rec r;

	cr_assert(call_of("openat(AT_FDCWD, \"x\", O_RDONLY) = 0x10", &r));
	cr_assert_eq(r.ret, 16, "a hex result");
	cr_assert(call_of("open(\"x\", O_RDONLY) = -1 EWHATEVER (Made up)", &r));
	cr_assert_eq(r.err, INT_MAX, "an errno replay does not know");
	cr_assert_eq(errno_of("ENAMETOOLONG", 12), ENAMETOOLONG);
	cr_assert_not(call_of("exit_group(0) = ?", &r), "'?': the process went away");
	cr_assert_not(call_of("open(\"x\", O_RDONLY", &r), "no closing parenthesis");
	cr_assert_not(call_of("(\"x\") = 0", &r), "no name");
	cr_assert_not(call_of("open(\"x\") 3", &r), "no '='");
}

Test(parse, strings)
{
	char buf[64];
	const char *s;
	size_t len;
	const char *a;

	a = "\"a\\\"b\\\\c\\n\\x41\\101\"";
	cr_assert_eq(str_decode(a, strlen(a), buf, &s, &len), 1);
	cr_assert_eq(len, 8);
	cr_assert_eq(memcmp(s, "a\"b\\c\nAA", 8), 0);
	a = " \"/usr/lib/very/long\"... ";
	cr_assert_eq(str_decode(a, strlen(a), buf, &s, &len), 2, "truncated by strace");
	cr_assert_str_eq(s, "/usr/lib/very/long");
	a = "NULL";
	cr_assert_eq(str_decode(a, strlen(a), buf, &s, &len), 0);
	a = "\"a\\0b\"";
	cr_assert_eq(str_decode(a, strlen(a), buf, &s, &len), -1, "a NUL inside");
	a = "\"open";
	cr_assert_eq(str_decode(a, strlen(a), buf, &s, &len), -1, "not closed");
}

Test(parse, line_shapes)
{
	const char *l;

	l = "openat(AT_FDCWD, \"/etc\", O_RDONLY <unfinished ...>";
	cr_assert(line_is_call(l, l + strlen(l)));
	cr_assert_eq(line_unfinished(l, l + strlen(l)), (ptrdiff_t)strlen(l) - 16);
	l = "openat(AT_FDCWD, \"/etc\", O_RDONLY <unfinished ...>  \r";
	cr_assert_eq(line_unfinished(l, l + strlen(l)), (ptrdiff_t)strlen(l) - 19,
		     "trailing blanks");
	l = "<... openat resumed>) = 3";
	cr_assert(line_is_resumed(l, l + strlen(l)));
	cr_assert_not(line_is_call(l, l + strlen(l)));
	cr_assert_eq(line_unfinished(l, l + strlen(l)), -1);
	l = "+++ exited with 0 +++";
	cr_assert_not(line_is_call(l, l + strlen(l)));
	cr_assert_not(line_is_resumed(l, l + strlen(l)));
}

/* ------------------------------------------------------------------ */
/* Whole logs through replay_load() */

/* replay_load() of text; the summary.  Fails the test if loading fails. */
static void load_text(const char *text, struct replay_summary *sum)
{
	char path[] = "/tmp/udc-test-parse-XXXXXX";
	int fd = mkstemp(path);
	char err[256];
	struct replay_trace *t;

	cr_assert_geq(fd, 0);
	cr_assert_eq(write(fd, text, strlen(text)), (ssize_t)strlen(text));
	close(fd);
	int r = replay_load(path, &t, err, sizeof(err));
	unlink(path);
	cr_assert_eq(r, 0, "replay_load: %s", err);
	replay_summary(t, sum);
	replay_free(t);
}

Test(load, unfinished_and_resumed_are_joined)
{
	struct replay_summary s;

	load_text("100 execve(\"/bin/sh\", [\"sh\"], 0x7ffc /* 3 vars */) = 0\n"
		  "100 openat(AT_FDCWD, \"/etc/passwd\", O_RDONLY <unfinished ...>\n"
		  "[pid 101] stat(\"/tmp\", {st_mode=S_IFDIR|01777, ...}) = 0\n"
		  "100 <... openat resumed>) = 3\n"
		  "101 <... stat resumed>) = 0\n"
		  "--- SIGCHLD {si_signo=SIGCHLD, si_code=CLD_EXITED, si_pid=101} ---\n"
		  "100 +++ exited with 0 +++\n",
		  &s);
	cr_assert_eq(s.lines, 7);
	cr_assert_eq(s.syscalls_parsed, 3, "execve, the joined openat, stat");
	cr_assert_eq(s.skip_garbage, 1, "a resumed half with no start");
	cr_assert_eq(s.other_lines, 2, "the signal and the exit");
	cr_assert_eq(s.pids, 2);
	cr_assert_eq(s.by_kind[REPLAY_LOOKUP], 3);
}

Test(load, timestamps_and_outcomes)
{
	struct replay_summary s;

	load_text("7 10:00:00.000001 mkdir(\"/w\", 0777) = 0\n"
		  "7 10:00:00.000002 mkdir(\"/w/d\", 0777) = 0\n"
		  "7 10:00:00.000003 open(\"/w/d/f\", O_WRONLY|O_CREAT|O_EXCL, 0644) = 3\n"
		  "7 10:00:00.000004 rename(\"/w/d/f\", \"/w/g\") = 0\n"
		  "7 10:00:00.000005 unlink(\"/w/g\") = 0\n"
		  "7 10:00:00.000006 rmdir(\"/w/d\") = 0\n"
		  "7 10:00:00.000007 lstat(\"/w/d\", 0x7ffc) = -1 ENOENT (No such file or directory)\n"
		  "7 10:00:00.000008 access(\"/w\", F_OK) = -1 EACCES (Permission denied)\n"
		  "not a strace line at all\n",
		  &s);
	cr_assert_eq(s.syscalls_parsed, 8);
	cr_assert_eq(s.by_kind[REPLAY_MKDIR], 2);
	cr_assert_eq(s.by_kind[REPLAY_CREATE], 1);
	cr_assert_eq(s.by_kind[REPLAY_RENAME], 1);
	cr_assert_eq(s.by_kind[REPLAY_UNLINK], 1);
	cr_assert_eq(s.by_kind[REPLAY_RMDIR], 1);
	cr_assert_geq(s.lookups_enoent, 1, "the lstat after the rmdir");
	cr_assert_eq(s.skip_errno, 1, "EACCES says nothing certain");
	cr_assert_eq(s.skip_garbage, 1);
}
