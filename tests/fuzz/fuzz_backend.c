/* SPDX-License-Identifier: MIT */
/*
 * tests/fuzz/fuzz_backend.c - the fuzz harness's backend: lookups and
 * readlinks answered from the model store (fuzz_model.c), with the faults
 * an input arms for the next call (garbage return codes, invalid attrs,
 * bad readlink lengths and contents, errnos), renames under a walk (the
 * seqcount bumped), and a store that changes during the call (reenter).
 */
#include <errno.h>
#include <limits.h>
#include <stdbool.h>
#include <stdint.h>
#include <string.h>

#include "fuzz.h"

/* ------------------------------------------------------------------ */
/* The backend                                                         */

struct faults F;
bool have_backend, have_readlink;
uint64_t backend_calls;

static void reenter(udc_ino dir, const char *name, size_t len);

/*
 * During a walk, the backend tells the cache of an rmdir of a name that
 * does not exist (it only forgets: ".." to bump_dir is no longer trusted)
 * the first F.bumps times it is called: the rename seqcount moves under
 * the walk, which must retry, then fall back to its locked passes, and
 * still give the model's answer.
 */
#define BUMP_NAME "\x01bump"
static void bump(void)
{
	if (!F.bumps)
		return;
	F.bumps--;
	if (mfind(F.bump_dir, BUMP_NAME, sizeof(BUMP_NAME) - 1))
		return;
	int r = udc_rmdir(C, F.bump_dir, BUMP_NAME, sizeof(BUMP_NAME) - 1, UDC_INO_NONE);
	if (r != 0)
		violation("udc_rmdir of an absent name (from the backend) returned %d", r);
}

static int lookup_fault_error(int f)
{
	switch (f) {
	case LF_EACCES: return -EACCES;
	case LF_4095: return -4095;
	default: return -EIO;
	}
}

int be_lookup(void *ctx, udc_ino dir, const char *name, size_t len, struct udc_attr *out)
{
	(void)ctx;
	backend_calls++;
	bump();
	if (dir == UDC_INO_NONE || !name || len == 0 || len > UDC_NAME_MAX ||
	    memchr(name, '/', len) || memchr(name, '\0', len) || (len == 1 && name[0] == '.')) {
		show("name", name ? name : "", name ? len : 0);
		violation("backend asked for a bad name in dir %llu", (unsigned long long)dir);
	}
	bool dotdot = len == 2 && name[0] == '.' && name[1] == '.';
	int f = F.lookup_hit ? LF_NONE : F.lookup;
	if (f == LF_DOTDOT_REG && !dotdot)
		f = LF_NONE;
	if (f == LF_REENTER && dotdot)
		f = LF_NONE;
	if (f != LF_NONE) {
		F.lookup_hit = true;
		F.fdir = dir;
		F.flen = len;
		memcpy(F.fname, name, len);
		F.expect = lookup_fault_error(f);
	}

	/* the honest answer */
	int r;
	struct udc_attr a = { 0 };
	if (dotdot) {
		r = mparent(dir, &a) ? 0 : -ENOENT;
	} else {
		struct ment *x = mfind(dir, name, len);
		r = x ? 0 : -ENOENT;
		if (x)
			a = x->attr;
	}

	if (trace) {
		tr("    backend lookup %llu ", (unsigned long long)dir);
		show("name", name, len);
		tr("      = %s ino %llu%s\n", rname(r), (unsigned long long)a.ino,
		   f ? " (then the fault)" : "");
	}
	switch (f) {
	case LF_RET_ONE: return 1;
	case LF_RET_HUGE: return -100000;
	case LF_RET_INTMIN: return INT_MIN;
	case LF_RET_4096: return -4096;
	case LF_INO_NONE: *out = (struct udc_attr){ .ino = 0, .type = UDC_TYPE_REG }; return 0;
	case LF_BAD_TYPE: *out = (struct udc_attr){ .ino = 101, .type = 7 }; return 0;
	case LF_BAD_FLAGS: *out = (struct udc_attr){ .ino = 101, .type = 1, .flags = 1 }; return 0;
	case LF_EACCES: return -EACCES;
	case LF_4095: return -4095;
	case LF_DOTDOT_REG: *out = (struct udc_attr){ .ino = 101, .type = UDC_TYPE_REG }; return 0;
	case LF_REENTER:
		F.reenter_answer = r;
		F.reenter_attr = a;
		reenter(dir, name, len);
		break;
	default:
		break;
	}
#if FUZZ_PLANT == 2   /* self-test: the store answers a stale cookie */
	if (r == 0 && a.type == UDC_TYPE_REG && dir == 3)
		a.cookie++;
#endif
	if (r == 0)
		*out = a;
	return r;
}

ssize_t be_readlink(void *ctx, udc_ino ino, char *buf, size_t size)
{
	(void)ctx;
	bump();
	if (!is_link_ino(ino))
		violation("readlink of ino %llu, which is no symlink", (unsigned long long)ino);
	if (size == 0)
		violation("readlink with a 0-byte buffer");
	int f = F.link_hit ? RF_NONE : F.link;
	if (f != RF_NONE) {
		F.link_hit = true;
		F.expect = f == RF_ZERO ? -ENOENT : f == RF_EACCES ? -EACCES : -EIO;
	}
	switch (f) {
	case RF_HUGE_NEG: return -100000;
	case RF_LONG_MIN: return -SSIZE_MAX - 1;
	case RF_4096: return -4096;
	case RF_TOO_LONG: memset(buf, 'a', size); return (ssize_t)size + 1;
	case RF_NUL:
		if (size < 3)
			return -EIO;
		memcpy(buf, "a\0b", 3);
		return 3;
	case RF_ZERO: return 0;
	case RF_EACCES: return -EACCES;
	default: break;
	}
	size_t k = (size_t)(ino - LINK0);
	size_t n = M.tlen[k] < size ? M.tlen[k] : size;
	memcpy(buf, M.target[k], n);
	return (ssize_t)n;
}

void faults_clear(void)
{
	memset(&F, 0, sizeof(F));
}

/* Read a fault byte: lookup faults, readlink faults, or none. */
void get_faults(bool allow_reenter)
{
	uint8_t b = u8();

	faults_clear();
	if (b >= 96 && b < 128 && !allow_reenter) {   /* walks: renames under the walk */
		F.bumps = 1 + u8() % 24;
		F.bump_dir = (udc_ino)(u8() % NDIRS) + 1;
		return;
	}
	if (b < 128)
		return;
	if (b < 192) {
		F.lookup = 1 + (b % (LF_COUNT - 1));
		if (F.lookup == LF_REENTER) {
			if (!allow_reenter) {
				F.lookup = LF_NONE;
			} else {
				F.reenter_kind = u8();
				F.reenter_arg = u8();
			}
		}
	} else {
		F.link = 1 + (b % (RF_COUNT - 1));
	}
}

/* During a backend lookup of (dir, name): the store changes. */
static void reenter(udc_ino dir, const char *name, size_t len)
{
	struct ment *x = mfind(dir, name, len);
	int r;

	tr("    reenter kind %u\n", F.reenter_kind % 5);
	switch (F.reenter_kind % 5) {
	case 0:   /* the name appears or goes */
		if (!x) {
			struct udc_attr a = { .ino = FILE0 + F.reenter_arg % NOBJ,
					      .type = UDC_TYPE_REG, .cookie = F.reenter_arg };
			tell_add(dir, name, len, &a);
		} else if (x->attr.type != UDC_TYPE_DIR) {
			tell_remove(dir, name, len);
		} else {
			expect_rc(udc_invalidate(C, dir, name, len), 0, "udc_invalidate (reentrant)");
		}
		break;
	case 1:
		expect_rc(udc_invalidate(C, dir, name, len), 0, "udc_invalidate (reentrant)");
		break;
	case 2:
		expect_rc(udc_invalidate_dir(C, dir), 0, "udc_invalidate_dir (reentrant)");
		break;
	case 3:   /* the backend resolves the very name it is asked for */
		r = udc_resolve(C, dir, name, len, NULL, NULL);
		expect_rc(r, -EDEADLK, "udc_resolve of the name being resolved");
		break;
	default:
		if (!x) {
			r = udc_add_negative(C, dir, name, len, F.reenter_arg);
			expect_rc(r, 0, "udc_add_negative (reentrant)");
		} else {
			struct udc_attr a = x->attr;
			if (a.type != UDC_TYPE_DIR) {
				a.cookie ^= 0x100;   /* the same name, a new cookie */
				tell_add(dir, name, len, &a);
			}
		}
		break;
	}
}

int be_lookup_value(void *ctx, udc_ino dir, const char *name, size_t len, struct udc_attr *out,
		    void *value, size_t *value_len, uint32_t *ttl_ms)
{
	int r = be_lookup(ctx, dir, name, len, out);

	(void)ttl_ms;   /* none: answers must not change with time */
	if (r == 0)
		*value_len = value_of(out, value);
	return r;
}

