/* SPDX-License-Identifier: MIT */
/*
 * tests/common/tcache.c - cache constructors, wrappers and struct tfail.
 * No shared state of its own; struct tfail is protected by its mutex.
 */
#include "common/tcache.h"

#include <criterion/criterion.h>
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <time.h>

udc_cache *tc_create_limit(udc_ino root, const struct udc_backend *be, uint32_t flags, size_t limit)
{
	struct udc_config cfg = UDC_CONFIG_INIT;
	udc_cache *c;

	cfg.memory_limit = limit;
	cfg.root = root;
	cfg.backend = be;
	cfg.flags = UDC_CFG_NO_RECLAIM_THREAD | flags;
	errno = 0;
	c = udc_create(&cfg);
	cr_assert_not_null(c, "udc_create failed: errno %d (%s)", errno, strerror(errno));
	return c;
}

udc_cache *tc_create(udc_ino root, const struct udc_backend *be, uint32_t flags)
{
	return tc_create_limit(root, be, flags, TC_MEMORY_LIMIT);
}

void tenv_init_be(struct tenv *e, const struct udc_backend *be, uint32_t flags)
{
	e->m = model_new(TC_ROOT);
	e->c = tc_create(TC_ROOT, be, flags);
	e->call.ctx = e->m;
	e->call.client = 0;
}

void tenv_init(struct tenv *e, uint32_t flags)
{
	tenv_init_be(e, &model_backend, flags);
}

void tenv_fini(struct tenv *e)
{
	udc_destroy(e->c);
	e->c = NULL;
	model_free(e->m);
	e->m = NULL;
}

void tc_sleep_past_open_max(void)
{
	const long ms = TC_OPEN_MAX_MS + 100;
	struct timespec ts = { .tv_sec = ms / 1000, .tv_nsec = ms % 1000 * 1000000L };

	while (nanosleep(&ts, &ts) == EINTR)
		;
}

struct udc_stats tc_stats(udc_cache *c)
{
	struct udc_stats st;

	memset(&st, 0, sizeof(st));
	st.size = sizeof(st);
	udc_stats_get(c, &st);
	return st;
}

int tc_lookup(udc_cache *c, udc_ino dir, const char *name, struct udc_attr *out)
{
	return udc_lookup(c, dir, name, strlen(name), out);
}

int tc_resolve(struct tenv *e, udc_ino dir, const char *name, struct udc_attr *out)
{
	return udc_resolve(e->c, dir, name, strlen(name), &e->call, out);
}

int tc_walk(struct tenv *e, udc_ino start, const char *path, unsigned flags, struct udc_attr *out)
{
	return udc_walk(e->c, start, path, strlen(path), flags, &e->call, out);
}

int tc_add(udc_cache *c, udc_ino dir, const char *name, udc_ino ino, uint32_t type, uint64_t cookie)
{
	struct udc_attr a = tc_attr(ino, type, cookie);

	return udc_add(c, dir, name, strlen(name), &a);
}

int tc_parent(udc_cache *c, udc_ino dir, udc_ino parent)
{
	struct udc_attr a = tc_attr(parent, UDC_TYPE_DIR, 0);

	return udc_add(c, dir, "..", 2, &a);
}

int tc_add_neg(udc_cache *c, udc_ino dir, const char *name)
{
	return udc_add_negative(c, dir, name, strlen(name), 0);
}

int tc_remove(udc_cache *c, udc_ino dir, const char *name)
{
	return udc_remove(c, dir, name, strlen(name));
}

int tc_invalidate(udc_cache *c, udc_ino dir, const char *name)
{
	return udc_invalidate(c, dir, name, strlen(name));
}

int tc_rename(udc_cache *c, udc_ino odir, const char *oname, udc_ino ndir, const char *nname,
	      udc_ino moved)
{
	return udc_rename(c, odir, oname, strlen(oname), ndir, nname, strlen(nname), moved);
}

int tc_rmdir(udc_cache *c, udc_ino parent, const char *name, udc_ino dir)
{
	return udc_rmdir(c, parent, name, strlen(name), dir);
}

void tc_store_only(struct tenv *e, udc_ino dir, const char *name, udc_ino ino, uint32_t type,
		   uint64_t cookie)
{
	struct udc_attr a = tc_attr(ino, type, cookie);

	model_set_s(e->m, dir, name, &a);
}

void tc_store_add(struct tenv *e, udc_ino dir, const char *name, udc_ino ino, uint32_t type,
		  uint64_t cookie)
{
	int r;

	tc_store_only(e, dir, name, ino, type, cookie);
	r = tc_add(e->c, dir, name, ino, type, cookie);
	cr_assert_eq(r, 0, "udc_add(%llu, \"%s\") = %d", (unsigned long long)dir, name, r);
	if (type == UDC_TYPE_DIR) {
		r = tc_parent(e->c, ino, dir);
		cr_assert_eq(r, 0, "udc_add(%llu, \"..\") = %d", (unsigned long long)ino, r);
	}
}

const char *tc_res_str(int r)
{
	static __thread char buf[32];

	switch (r) {
	case UDC_MISS:
		return "MISS/0";
	case UDC_POSITIVE:
		return "POSITIVE";
	case UDC_NEGATIVE:
		return "NEGATIVE";
	case -ENOENT:
		return "-ENOENT";
	case -EINVAL:
		return "-EINVAL";
	case -ENAMETOOLONG:
		return "-ENAMETOOLONG";
	case -ENOTDIR:
		return "-ENOTDIR";
	case -ELOOP:
		return "-ELOOP";
	case -EAGAIN:
		return "-EAGAIN";
	case -EIO:
		return "-EIO";
	case -ENOMEM:
		return "-ENOMEM";
	default:
		snprintf(buf, sizeof(buf), "%d", r);
		return buf;
	}
}

void tfail_init(struct tfail *f)
{
	pthread_mutex_init(&f->lock, NULL);
	atomic_init(&f->count, 0);
	f->first[0] = '\0';
}

void tfail_rec(struct tfail *f, const char *fmt, ...)
{
	va_list ap;

	if (atomic_fetch_add(&f->count, 1) >= 8)
		return; /* enough printed */
	va_start(ap, fmt);
	pthread_mutex_lock(&f->lock);
	if (!f->first[0]) {
		vsnprintf(f->first, sizeof(f->first), fmt, ap);
		fprintf(stderr, "FAIL (thread): %s\n", f->first);
	} else {
		char tmp[768];

		vsnprintf(tmp, sizeof(tmp), fmt, ap);
		fprintf(stderr, "FAIL (thread): %s\n", tmp);
	}
	pthread_mutex_unlock(&f->lock);
	va_end(ap);
}

void tfail_assert_none(struct tfail *f)
{
	int n = atomic_load(&f->count);
	char first[sizeof(f->first)];

	pthread_mutex_lock(&f->lock);
	memcpy(first, f->first, sizeof(first));
	pthread_mutex_unlock(&f->lock);
	cr_assert_eq(n, 0, "%d failure(s) in worker threads; first: %s", n, first);
}

int tc_complete(udc_cache *c, udc_ino dir)
{
	struct udc_fill f;
	int r = udc_dir_fill_begin(c, dir, &f);

	return r ? r : udc_dir_complete(c, dir, &f);
}
