/* SPDX-License-Identifier: MIT */
/*
 * stress/replay/load.c - replay_load(): a log's lines, per pid (the
 * <unfinished ...> and <... resumed> halves joined, signal and exit lines),
 * through a prescan (each pid's first getcwd()) and the build; the
 * starting directory; the public calls that load and describe a trace.
 *
 * Owns: the builder (struct builder) for the length of replay_load(), and
 * the struct replay_trace it returns.
 *
 * Locking: none (one replay_load() per builder; several loads may run at
 * once).
 * Ordering: none.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "stress/replay/internal.h"

/* ---------------------------------------------------------------------- */
/* Lines. */


/* A SIGCHLD line's si_pid exited (CLD_EXITED, CLD_KILLED, CLD_DUMPED). */
static void signal_line(struct builder *b, const char *s, const char *e)
{
	const char *p = memmem(s, (size_t)(e - s), "si_pid=", 7);
	long long pid;

	if (!p || !memmem(s, (size_t)(e - s), "CLD_", 4) ||
	    memmem(s, (size_t)(e - s), "CLD_STOPPED", 11) ||
	    memmem(s, (size_t)(e - s), "CLD_CONTINUED", 13) ||
	    !arg_int(p + 7, (size_t)(e - p - 7), &pid))
		return;
	struct pidst *q = pid_find(b, (int)pid);
	if (q)
		q->exited = true;
}

/* The prescan: a pid's first getcwd() before any chdir() of its own. */
static void prescan_call(struct builder *b, const struct rec *r)
{
	struct pidst *p = pid_get(b, r->pid);

	if (r->nlen == 5 && memcmp(r->name, "chdir", 5) == 0 && r->ret == 0) {
		if (p->start_cwd == NONE)
			p->chdir_seen = true;
	} else if (r->nlen == 6 && memcmp(r->name, "getcwd", 6) == 0 && r->ret > 0 &&
		   r->nargs > 0 && !p->chdir_seen && p->start_cwd == NONE) {
		const char *s;
		size_t len;
		if (arg_str(b, 0, r->arg[0], r->alen[0], &s, &len) == 1 && len && s[0] == '/')
			p->start_cwd = str_add(b, s, len);
	}
}

/* A line that is not a usable strace line (counted once, in the build). */
static void count_garbage(struct builder *b)
{
	if (!b->prescan)
		skip(b, &b->t->sum.skip_garbage);
}

/* One line of the log. */
/* Skip a line's "[pid N]" or "N " prefix and its timestamp: *pid and *sp
 * past them.  False (counted as garbage) if nothing is left or the prefix is bad. */
static bool line_prefix(struct builder *b, const char **sp, const char *e, int *pid)
{
	const char *s = *sp;
	long long v;

	if (e - s > 5 && memcmp(s, "[pid", 4) == 0) {
		const char *c = memchr(s, ']', (size_t)(e - s));
		if (!c || !arg_int(s + 4, (size_t)(c - s - 4), &v)) {
			count_garbage(b);
			return false;
		}
		*pid = (int)v;
		s = c + 1;
	} else if (is_digit(*s)) {
		const char *c = s;
		while (c < e && is_digit(*c))
			c++;
		if (c < e && is_space(*c)) {
			arg_int(s, (size_t)(c - s), &v);
			*pid = (int)v;
			s = c;
		}
	}
	while (s < e && is_space(*s))
		s++;
	/* A timestamp (-t, -tt, -ttt, -r): digits with ':' or '.'. */
	if (s < e && is_digit(*s)) {
		const char *c = s;
		bool stamp = false;
		while (c < e && (is_digit(*c) || *c == ':' || *c == '.'))
			stamp |= *c == ':' || *c == '.', c++;
		if (stamp && c < e && is_space(*c))
			s = c;
		while (s < e && is_space(*s))
			s++;
	}
	*sp = s;
	if (s == e) {
		count_garbage(b);
		return false;
	}
	return true;
}

/* A "--- SIG..." or "+++ exited" line: true if s..e is one (and it is handled). */
static bool line_other(struct builder *b, const char *s, const char *e, int pid)
{
	struct pidst *q;

	if (e - s < 3 || (memcmp(s, "---", 3) != 0 && memcmp(s, "+++", 3) != 0))
		return false;
	if (!b->prescan)
		b->t->sum.other_lines++;
	q = pid_find(b, pid);
	if (s[0] == '-') {
		if (q && !q->exited)
			b->last_pid = pid;
		signal_line(b, s, e);
	} else if (q) {
		q->exited = true;
	}
	return true;
}

/* A "<... resumed>" line: *sp..*ep become the call joined with its first
 * half.  False (counted as garbage) if there is no first half to join. */
static bool line_resume(struct builder *b, struct pidst *p, const char **sp, const char **ep)
{
	const char *s = *sp, *e = *ep;
	const char *g = memchr(s, '>', (size_t)(e - s));

	if (!g || !p->unfinished) {
		count_garbage(b);
		return false;
	}
	size_t rest = (size_t)(e - g - 1);
	char *j = scratch(b, &b->join, &b->joincap, p->ulen + rest + 1);
	memcpy(j, p->unfinished, p->ulen);
	memcpy(j + p->ulen, g + 1, rest);
	free(p->unfinished);
	p->unfinished = NULL;
	*sp = j;
	*ep = j + p->ulen + rest;
	return true;
}

static void parse_line(struct builder *b, const char *s, const char *e)
{
	int pid = 0;

	while (s < e && is_space(*s))
		s++;
	if (s == e)
		return;
	if (!b->prescan)
		b->t->sum.lines++;
	if (!line_prefix(b, &s, e, &pid) || line_other(b, s, e, pid))
		return;
	bool resumed = line_is_resumed(s, e);
	if (!resumed && !line_is_call(s, e)) {
		count_garbage(b);
		return;
	}
	struct pidst *p = pid_get(b, pid);
	if (!b->prescan && !p->exited)
		b->last_pid = pid;
	if (resumed && !line_resume(b, p, &s, &e))
		return;
	ptrdiff_t first_half = line_unfinished(s, e);
	if (first_half >= 0) {
		if (p->unfinished) {
			free(p->unfinished);
			p->unfinished = NULL;
			count_garbage(b); /* its first half never resumed */
		}
		size_t n = (size_t)first_half;
		p->unfinished = xrealloc(b, NULL, n + 1, 1);
		memcpy(p->unfinished, s, n);
		p->ulen = n;
		return;
	}
	struct rec r = { .pid = pid };
	if (!parse_call(s, e, &r)) {
		count_garbage(b);
		return;
	}
	if (b->prescan)
		prescan_call(b, &r);
	else
		handle_call(b, &r);
}

/* Every line of the file, once. */
static void parse_all(struct builder *b)
{
	if (!b->file)
		return;
	const char *s = b->file, *end = b->file + b->flen;

	b->line = 0;
	while (s < end) {
		const char *nl = memchr(s, '\n', (size_t)(end - s));
		const char *e = nl ? nl : end;
		b->line++;
		if (!memchr(s, '\0', (size_t)(e - s)))
			parse_line(b, s, e);
		else if (!b->prescan) {
			b->t->sum.lines++;
			count_garbage(b);
		}
		s = e + 1;
	}
	for (size_t i = 0; i < b->pidcap; i++) {
		struct pidst *p = &b->pids[i];
		if (p->used && p->unfinished) {
			free(p->unfinished);
			p->unfinished = NULL;
			count_garbage(b);
		}
	}
}

/* The directory at path t->str + off, learnt as existing; 0 if the model
 * disagrees. */
uint32_t cwd_resolve(struct builder *b, uint32_t off)
{
	struct replay_trace *t = b->t;
	size_t n = strlen(t->str + off);
	char *copy = scratch(b, &b->tbuf, &b->tcap, n + 1);

	memcpy(copy, t->str + off, n + 1);
	struct kreq q = { .follow = true, .want = 0, .type = UDC_TYPE_DIR };
	struct wres r = know(b, ROOT, copy, n, &q);
	return r.err || t->objs[r.obj].type != UDC_TYPE_DIR ? 0 : r.obj;
}

/* The first pid's starting directory: its first getcwd() (before any
 * chdir()), or a synthetic "/cwd". */
static void cwd_start(struct builder *b)
{
	struct replay_trace *t = b->t;
	struct pidst *p = b->have_first ? pid_find(b, b->first_pid) : NULL;
	uint32_t off;

	if (p && p->start_cwd != NONE) {
		off = p->start_cwd;
	} else {
		t->sum.cwd_synthetic = 1;
		off = str_add(b, "/cwd", 4);
	}
	snprintf(t->sum.cwd, sizeof(t->sum.cwd), "%s", t->str + off);
	b->init_cwd = cwd_resolve(b, off);
	if (!b->init_cwd)
		b->init_cwd = ROOT;
}


/* ---------------------------------------------------------------------- */
/* The public calls: loading. */

/* See replay.h. */
void replay_free(struct replay_trace *t)
{
	if (!t)
		return;
	free(t->str);
	free(t->objs);
	free(t->slots);
	free(t->hash);
	free(t->ev);
	free(t);
}

/* Free the builder and everything it owns (not the trace). */
static void builder_free(struct builder *b)
{
	for (size_t i = 0; i < b->pidcap; i++) {
		free(b->pids[i].fds);
		free(b->pids[i].unfinished);
	}
	free(b->pids);
	free(b->walkbuf);
	free(b->join);
	for (int i = 0; i < 3; i++)
		free(b->sbuf[i]);
	free(b->tbuf);
	free(b->file);
	free(b);
}

/* Forget the prescan's per-pid state but its start_cwd. */
static void pids_reset(struct builder *b)
{
	for (size_t i = 0; i < b->pidcap; i++) {
		struct pidst *p = &b->pids[i];
		if (!p->used)
			continue;
		free(p->fds);
		free(p->unfinished);
		uint32_t sc = p->start_cwd;
		int pid = p->pid;
		*p = (struct pidst){ .pid = pid, .used = true, .start_cwd = sc };
	}
	b->last_pid = b->first_pid;
}

/* Parse the log in b->file into b->t: 0, or -ENOMEM / -EFBIG (from the
 * longjmp() of xrealloc() and too_big(); b is not changed here after
 * setjmp(), and everything allocated is reachable from b). */
static int build(struct builder *b)
{
	if (setjmp(b->fail))
		return b->err;
	b->walkbuf = xrealloc(b, NULL, UDC_PATH_MAX + 1, 1);
	obj_new(b, UDC_TYPE_UNKNOWN, 0); /* objs[0]: "absent" */
	uint32_t root = obj_new(b, UDC_TYPE_DIR, OBJ_ORIGINAL | OBJ_SURE);
	b->t->objs[root].parent = b->t->objs[root].init_parent = root;

	/* The prescan learns each pid's first getcwd(); then the build. */
	b->prescan = true;
	parse_all(b);
	pids_reset(b);
	b->prescan = false;
	cwd_start(b);
	parse_all(b);
	return 0;
}

/* See replay.h: read (read_log), build (build), report. */
int replay_load(const char *path, struct replay_trace **out, char *err, size_t errlen)
{
	char dummy[8];

	if (!err || !errlen) {
		err = dummy;
		errlen = sizeof(dummy);
	}
	err[0] = '\0';
	if (!path || !out) {
		snprintf(err, errlen, "replay_load: NULL argument");
		return -EINVAL;
	}
	*out = NULL;
	struct builder *b = calloc(1, sizeof(*b));
	struct replay_trace *t = calloc(1, sizeof(*t));
	if (!b || !t) {
		free(b);
		free(t);
		snprintf(err, errlen, "out of memory");
		return -ENOMEM;
	}
	b->t = t;
	int r = read_log(path, &b->file, &b->flen, err, errlen);
	if (r) {
		free(t);
		free(b);
		return r;
	}
	r = build(b);
	if (r) {
		snprintf(err, errlen, "%s: %s", path,
			 r == -EFBIG ? "too large (4 GiB of model data)" : "out of memory");
		replay_free(b->t);
		builder_free(b);
		return r;
	}
	t = b->t;
	if (t->sum.syscalls_parsed == 0) {
		snprintf(err, errlen, "%s: no strace syscall lines (%" PRIu64 " lines read)", path,
			 t->sum.lines);
		replay_free(t);
		builder_free(b);
		return -EINVAL;
	}
	t->sum.objects = t->nobjs - 1;
	for (size_t i = 1; i < t->nobjs; i++)
		if (t->objs[i].flags & OBJ_ORIGINAL)
			t->sum.original_objects++;
	t->sum.names = t->nslots;
	builder_free(b);
	*out = t;
	return 0;
}

/* See replay.h. */
void replay_summary(const struct replay_trace *t, struct replay_summary *s)
{
	if (!s)
		return;
	if (!t) {
		memset(s, 0, sizeof(*s));
		return;
	}
	*s = t->sum;
}

/* See replay.h. */
const char *replay_kind_name(unsigned kind)
{
	static const char *const names[REPLAY_NR_KINDS] = {
		"lookup", "create", "mkdir", "link", "unlink", "rmdir", "rename",
	};

	return kind < REPLAY_NR_KINDS ? names[kind] : "?";
}

