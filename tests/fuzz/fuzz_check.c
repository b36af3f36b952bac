/* SPDX-License-Identifier: MIT */
/*
 * tests/fuzz/fuzz_check.c - the fuzz harness's checks: every definite
 * answer of the cache against the model (fuzz_model.c), freshness (what a
 * call cached stays cached while there is room to spare), what is
 * forgotten after an invalidation or rmdir, the mutations told to the
 * model and the cache together, and the reporting (trace, violations).
 */
#include <errno.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fuzz.h"

/* ------------------------------------------------------------------ */
/* Reporting                                                           */

bool trace;

void tr(const char *fmt, ...)
{
	va_list ap;

	if (!trace)
		return;
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
}

void show(const char *what, const char *s, size_t len)
{
	fprintf(stderr, "  %s (%zu bytes): \"", what, len);
	for (size_t i = 0; i < len && i < 80; i++) {
		unsigned char ch = (unsigned char)s[i];
		if (ch >= 32 && ch < 127 && ch != '"' && ch != '\\')
			fputc(ch, stderr);
		else
			fprintf(stderr, "\\x%02x", ch);
	}
	fprintf(stderr, "%s\"\n", len > 80 ? "..." : "");
}

unsigned long op_no;

void violation(const char *fmt, ...)
{
	va_list ap;

	fprintf(stderr, "\nfuzz_api: VIOLATION at op %lu: ", op_no);
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputc('\n', stderr);
	abort();
}

/* ------------------------------------------------------------------ */
/* Checks                                                              */

const char *rname(int r)
{
	static char buf[32];

	switch (r) {
	case 0: return "0";
	case -ENOENT: return "-ENOENT";
	case -EINVAL: return "-EINVAL";
	case -ENAMETOOLONG: return "-ENAMETOOLONG";
	case -ENOTDIR: return "-ENOTDIR";
	case -ELOOP: return "-ELOOP";
	case -EIO: return "-EIO";
	case -EAGAIN: return "-EAGAIN";
	case -EACCES: return "-EACCES";
	case -ESTALE: return "-ESTALE";
	case -EDEADLK: return "-EDEADLK";
	case -ENOMEM: return "-ENOMEM";
	default: snprintf(buf, sizeof(buf), "%d", r); return buf;
	}
}

static void show_attr(const char *what, const struct udc_attr *a)
{
	fprintf(stderr, "  %s: ino %llu type %u flags %u cookie %#llx\n", what,
		(unsigned long long)a->ino, a->type, a->flags, (unsigned long long)a->cookie);
}

/* got must equal want; a directory's own attr may lack its cookie. */
void attr_must_equal(const struct udc_attr *got, const struct udc_attr *want, bool lenient,
		     const char *what)
{
	bool ok = got->ino == want->ino && got->type == want->type && got->flags == want->flags &&
		  (got->cookie == want->cookie || (lenient && got->cookie == 0));
	if (!ok) {
		show_attr("got", got);
		show_attr("model", want);
		violation("%s: attr differs from the model", what);
	}
}

/* A positive answer for (dir, name): must be the model's. */
static void check_positive(udc_ino dir, const char *name, size_t len, const struct udc_attr *got,
			   const char *what)
{
	struct udc_attr want;

	if (is_dotdot(name, len)) {
		if (dir == ROOT)
			want = (struct udc_attr){ .ino = ROOT, .type = UDC_TYPE_DIR,
						  .cookie = dir_cookie(ROOT) };
		else if (!mparent(dir, &want))
			violation("%s: \"..\" of %llu positive (ino %llu), the model has none", what,
				  (unsigned long long)dir, (unsigned long long)got->ino);
		attr_must_equal(got, &want, true, what);
		return;
	}
	struct ment *x = mfind(dir, name, len);
	if (!x) {
		show("name", name, len);
		show_attr("got", got);
		violation("%s: positive in dir %llu, absent in the model", what,
			  (unsigned long long)dir);
	}
	if (memcmp(got, &x->attr, sizeof(*got)) != 0) {
		show("name", name, len);
		attr_must_equal(got, &x->attr, false, what);
	}
}

static void check_negative(udc_ino dir, const char *name, size_t len, const char *what)
{
	struct udc_attr p;

	if (is_dotdot(name, len) ? (dir == ROOT || mparent(dir, &p)) : mfind(dir, name, len) != NULL) {
		show("name", name, len);
		violation("%s: negative in dir %llu, the model has it", what,
			  (unsigned long long)dir);
	}
}

void expect_rc(int got, int want, const char *what)
{
	if (got != want)
		violation("%s returned %s, expected %s", what, rname(got), rname(want));
}

size_t value_of(const struct udc_attr *a, unsigned char *buf)
{
	size_t len = (size_t)((a->ino * 7 + a->type) % 97);

	for (size_t i = 0; i < len; i++)
		buf[i] = (unsigned char)(a->ino + i * 3);
	return len;
}

/* A positive answer's value (@v, @vlen) is its attr's own. */
static void check_value(const char *name, size_t len, const struct udc_attr *a,
			const unsigned char *v, size_t vlen, const char *what)
{
	unsigned char want[UDC_VALUE_MAX];
	size_t wlen = is_dotdot(name, len) ? 0 : value_of(a, want);

	if (vlen != wlen || memcmp(v, want, wlen) != 0) {
		show("name", name, len);
		violation("%s: a value of %zu bytes with ino %llu, not its own (%zu bytes)", what,
			  vlen, (unsigned long long)a->ino, wlen);
	}
}

/* udc_lookup_value, checked. */
int do_lookup(udc_ino dir, const char *name, size_t len, const char *what)
{
	struct udc_attr a;
	unsigned char v[UDC_VALUE_MAX];
	size_t vlen = sizeof(v);

	memset(&a, 0xa5, sizeof(a));
	int r = udc_lookup_value(C, dir, name, len, &a, v, &vlen);
	int e = call_err(dir, name, len);
	if (e) {
		expect_rc(r, e, what);
		return r;
	}
	if (r == UDC_POSITIVE) {
		check_positive(dir, name, len, &a, what);
		check_value(name, len, &a, v, vlen, what);
	}
	else if (r == UDC_NEGATIVE)
		check_negative(dir, name, len, what);
	else if (r != UDC_MISS)
		violation("%s returned %d", what, r);
	return r;
}

/* After a consumed lookup fault: nothing was cached for its name. */
void check_fault_cached_nothing(void)
{
	if (!F.lookup_hit)
		return;
	int r = udc_lookup(C, F.fdir, F.fname, F.flen, NULL);
	if (r != UDC_MISS) {
		show("name", F.fname, F.flen);
		violation("after a failed backend lookup (fault %d) in dir %llu, udc_lookup is %d, "
			  "not UDC_MISS", F.lookup, (unsigned long long)F.fdir, r);
	}
}

/*
 * Freshness: what the model comparison cannot see (an answer that stayed
 * cached but is still right, an answer that was never cached).  A call
 * that caches must leave the answer cached when no eviction can have run:
 * the limit is large and far from reached.
 */
size_t cur_limit;

bool forgot[NOBJ];
bool forgot_any;

bool roomy(void)
{
	struct udc_stats st = { .size = sizeof(st) };

	if (forgot_any)
		return false;
	if (cur_limit < ((size_t)16 << 20))
		return false;
	udc_stats_get(C, &st);
	return st.bytes_used < cur_limit / 4;
}

void must_be_cached(udc_ino dir, const char *name, size_t len, const struct udc_attr *want,
		    const char *what)
{
	struct udc_attr a;
	unsigned char v[UDC_VALUE_MAX];
	size_t vlen = sizeof(v);
	int r = udc_lookup_value(C, dir, name, len, &a, v, &vlen);

	if (r != UDC_POSITIVE) {
		show("name", name, len);
		violation("after %s in dir %llu (room to spare), udc_lookup is %d, not UDC_POSITIVE",
			  what, (unsigned long long)dir, r);
	}
	attr_must_equal(&a, want, false, what);
	check_value(name, len, &a, v, vlen, what);
}

void must_be_forgotten(udc_ino dir, const char *name, size_t len, const char *what)
{
	if (dir == ROOT && is_dotdot(name, len))
		return;   /* the root's ".." is always the root */
	int r = udc_lookup(C, dir, name, len, NULL);
	if (r != UDC_MISS) {
		show("name", name, len);
		violation("after %s of dir %llu, udc_lookup is %d, not UDC_MISS", what,
			  (unsigned long long)dir, r);
	}
}

/* After udc_invalidate_dir(d) or udc_rmdir of d: nothing of d is known. */
void dir_forgotten(udc_ino d, const char *what)
{
	for (int i = 0; i < M.n; i++)
		if (M.e[i].dir == d)
			must_be_forgotten(d, M.e[i].name, M.e[i].len, what);
	for (size_t k = 0; k < 6; k++)
		must_be_forgotten(d, valid_names[k].s, 1, what);
	must_be_forgotten(d, "..", 2, what);
}

/* ------------------------------------------------------------------ */
/* Mutations: model first, then the cache, which must accept.          */

void tell_add(udc_ino dir, const char *name, size_t len, const struct udc_attr *a)
{
	if (!mset(dir, name, len, a))
		return;   /* model full: nothing changes */
	unsigned char v[UDC_VALUE_MAX];
	int r = udc_add_value(C, dir, name, len, a, v, value_of(a, v), 0);
	expect_rc(r, 0, "udc_add");
	if (roomy())
		must_be_cached(dir, name, len, a, "udc_add");
}

void tell_remove(udc_ino dir, const char *name, size_t len)
{
	mdel(dir, name, len);
#if FUZZ_PLANT == 1   /* self-test: the cache is not told of a removal */
	if (len == 1 && name[0] == 'c')
		return;
#endif
	int r = udc_remove(C, dir, name, len);
	expect_rc(r, 0, "udc_remove");
}

/* udc_resolve, checked. */
int do_resolve(udc_ino dir, const char *name, size_t len, const char *what)
{
	struct udc_attr a;
	unsigned char v[UDC_VALUE_MAX];
	size_t vlen = sizeof(v);

	memset(&a, 0xa5, sizeof(a));
	int r = udc_resolve_value(C, dir, name, len, NULL, &a, v, &vlen, NULL);
	int e = call_err(dir, name, len);
	if (e) {
		expect_rc(r, e, what);
		return r;
	}
	if (F.lookup == LF_REENTER && F.lookup_hit) {
		/* the answer is the store's before the change */
		expect_rc(r, F.reenter_answer, what);
		if (r == 0)
			attr_must_equal(&a, &F.reenter_attr, false, what);
		return r;
	}
	if (F.lookup_hit || F.link_hit) {
		expect_rc(r, F.expect, what);
		check_fault_cached_nothing();
		return r;
	}
	if (r == 0) {
		check_positive(dir, name, len, &a, what);
		check_value(name, len, &a, v, vlen, what);
		if (!is_dotdot(name, len) && roomy())
			must_be_cached(dir, name, len, &a, what);
	} else if (r == -ENOENT) {
		check_negative(dir, name, len, what);
	} else if (!(r == -EAGAIN && !have_backend)) {
		violation("%s returned %s", what, rname(r));
	}
	return r;
}
