/* SPDX-License-Identifier: MIT */
/*
 * tests/common/model.c - the in-memory model store behind model_backend.
 *
 * Two chained hash tables: entries keyed by (dir, name), objects keyed by
 * ino (parent, attr, symlink target).  Sizes are fixed (the tests use a few
 * thousand names at most); chains grow as needed.
 *
 * Locking: m->lock (a mutex) protects both tables, the error list and the
 * gate; the counters are atomics so that tests read them without the lock.
 * Ordering: a backend call reads its answer under m->lock, so a test that
 * changes the store and tells the cache inside model_lock() is atomic with
 * respect to backend answers.
 */
#include "common/model.h"

#include <errno.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define MODEL_BUCKETS 4096

struct mentry {
	struct mentry *next;
	udc_ino dir;
	struct udc_attr attr;
	size_t len;
	char name[UDC_NAME_MAX + 1];
};

struct mobj {
	struct mobj *next;
	udc_ino ino;
	udc_ino parent;
	struct udc_attr attr; /* what ".." of a child answers */
	char *target;	      /* symlink target, or NULL */
	size_t tlen;
};

struct merr {
	struct merr *next;
	udc_ino dir;
	size_t len;
	char name[UDC_NAME_MAX + 1];
	int err;
};

struct model {
	pthread_mutex_t lock;
	pthread_cond_t cond;
	udc_ino root;
	struct mentry *entries[MODEL_BUCKETS]; /* protected by lock */
	struct mobj *objs[MODEL_BUCKETS];      /* protected by lock */
	struct merr *errs;		       /* protected by lock */
	unsigned delay_us;		       /* protected by lock */

	/* The gate, protected by lock. */
	bool gate_armed;
	bool gate_entered;
	bool gate_released;
	udc_ino gate_dir;
	size_t gate_len;
	char gate_name[UDC_NAME_MAX + 1];

	_Atomic uint64_t lookups;
	_Atomic uint64_t readlinks;
	_Atomic(void *) last_ctx;
};

static struct model *model_fallback; /* for a NULL ctx; one model per test process */

static void model_die(const char *why)
{
	fprintf(stderr, "model: %s\n", why);
	abort();
}

static size_t entry_bucket(udc_ino dir, const char *name, size_t len)
{
	uint64_t h = 1469598103934665603ULL ^ dir;

	for (size_t i = 0; i < len; i++)
		h = (h ^ (unsigned char)name[i]) * 1099511628211ULL;
	h ^= h >> 29;
	return (size_t)(h % MODEL_BUCKETS);
}

static size_t obj_bucket(udc_ino ino)
{
	return (size_t)((ino * 0x9E3779B97F4A7C15ULL) >> 52) % MODEL_BUCKETS;
}

static struct mentry **entry_find(struct model *m, udc_ino dir, const char *name, size_t len)
{
	struct mentry **pp = &m->entries[entry_bucket(dir, name, len)];

	for (; *pp; pp = &(*pp)->next)
		if ((*pp)->dir == dir && (*pp)->len == len && memcmp((*pp)->name, name, len) == 0)
			return pp;
	return pp;
}

static struct mobj *obj_get(struct model *m, udc_ino ino, bool create)
{
	struct mobj **pp = &m->objs[obj_bucket(ino)];

	for (; *pp; pp = &(*pp)->next)
		if ((*pp)->ino == ino)
			return *pp;
	if (!create)
		return NULL;
	*pp = calloc(1, sizeof(**pp));
	if (!*pp)
		model_die("out of memory");
	(*pp)->ino = ino;
	return *pp;
}

struct model *model_new(udc_ino root)
{
	struct model *m = calloc(1, sizeof(*m));
	struct mobj *r;

	if (!m)
		model_die("out of memory");
	pthread_mutex_init(&m->lock, NULL);
	pthread_cond_init(&m->cond, NULL);
	m->root = root;
	r = obj_get(m, root, true);
	r->parent = root;
	r->attr = (struct udc_attr){ .ino = root, .type = UDC_TYPE_DIR };
	model_fallback = m;
	return m;
}

void model_free(struct model *m)
{
	if (!m)
		return;
	for (size_t b = 0; b < MODEL_BUCKETS; b++) {
		for (struct mentry *e = m->entries[b], *n; e; e = n) {
			n = e->next;
			free(e);
		}
		for (struct mobj *o = m->objs[b], *n; o; o = n) {
			n = o->next;
			free(o->target);
			free(o);
		}
	}
	for (struct merr *e = m->errs, *n; e; e = n) {
		n = e->next;
		free(e);
	}
	pthread_cond_destroy(&m->cond);
	pthread_mutex_destroy(&m->lock);
	if (model_fallback == m)
		model_fallback = NULL;
	free(m);
}

void model_lock(struct model *m)
{
	pthread_mutex_lock(&m->lock);
}

void model_unlock(struct model *m)
{
	pthread_mutex_unlock(&m->lock);
}

int model_set_locked(struct model *m, udc_ino dir, const char *name, size_t len,
		     const struct udc_attr *attr)
{
	struct mentry **pp;

	if (len > UDC_NAME_MAX)
		model_die("name too long");
	if (len == 2 && memcmp(name, "..", 2) == 0) {
		obj_get(m, dir, true)->parent = attr->ino;
		return 0;
	}
	pp = entry_find(m, dir, name, len);
	if (!*pp) {
		*pp = calloc(1, sizeof(**pp));
		if (!*pp)
			model_die("out of memory");
		(*pp)->dir = dir;
		(*pp)->len = len;
		memcpy((*pp)->name, name, len);
	}
	(*pp)->attr = *attr;
	if (attr->type == UDC_TYPE_DIR) {
		struct mobj *o = obj_get(m, attr->ino, true);

		o->parent = dir;
		o->attr = *attr;
	}
	return 0;
}

int model_set(struct model *m, udc_ino dir, const char *name, size_t len,
	      const struct udc_attr *attr)
{
	int r;

	model_lock(m);
	r = model_set_locked(m, dir, name, len, attr);
	model_unlock(m);
	return r;
}

int model_set_s(struct model *m, udc_ino dir, const char *name, const struct udc_attr *attr)
{
	return model_set(m, dir, name, strlen(name), attr);
}

int model_del_locked(struct model *m, udc_ino dir, const char *name, size_t len)
{
	struct mentry **pp = entry_find(m, dir, name, len);
	struct mentry *e = *pp;

	if (!e)
		return -ENOENT;
	*pp = e->next;
	free(e);
	return 0;
}

int model_del(struct model *m, udc_ino dir, const char *name, size_t len)
{
	int r;

	model_lock(m);
	r = model_del_locked(m, dir, name, len);
	model_unlock(m);
	return r;
}

int model_move_locked(struct model *m, udc_ino odir, const char *oname, size_t olen, udc_ino ndir,
		      const char *nname, size_t nlen)
{
	struct mentry **pp = entry_find(m, odir, oname, olen);
	struct udc_attr a;

	if (!*pp)
		return -ENOENT;
	if (odir == ndir && olen == nlen && memcmp(oname, nname, olen) == 0)
		return 0;
	a = (*pp)->attr;
	model_del_locked(m, odir, oname, olen);
	return model_set_locked(m, ndir, nname, nlen, &a);
}

int model_move(struct model *m, udc_ino odir, const char *oname, size_t olen, udc_ino ndir,
	       const char *nname, size_t nlen)
{
	int r;

	model_lock(m);
	r = model_move_locked(m, odir, oname, olen, ndir, nname, nlen);
	model_unlock(m);
	return r;
}

void model_clear_dir_locked(struct model *m, udc_ino dir)
{
	for (size_t b = 0; b < MODEL_BUCKETS; b++) {
		struct mentry **pp = &m->entries[b];

		while (*pp) {
			if ((*pp)->dir == dir) {
				struct mentry *e = *pp;

				*pp = e->next;
				free(e);
			} else {
				pp = &(*pp)->next;
			}
		}
	}
}

int model_get_locked(struct model *m, udc_ino dir, const char *name, size_t len,
		     struct udc_attr *out)
{
	struct mentry **pp;

	if (len == 2 && memcmp(name, "..", 2) == 0) {
		struct mobj *d = obj_get(m, dir, false);
		struct mobj *p;

		if (!d || !d->parent)
			return -ENOENT;
		p = obj_get(m, d->parent, false);
		if (out) {
			if (p)
				*out = p->attr;
			else
				*out = (struct udc_attr){ .ino = d->parent, .type = UDC_TYPE_DIR };
		}
		return 0;
	}
	pp = entry_find(m, dir, name, len);
	if (!*pp)
		return -ENOENT;
	if (out)
		*out = (*pp)->attr;
	return 0;
}

int model_get(struct model *m, udc_ino dir, const char *name, size_t len, struct udc_attr *out)
{
	int r;

	model_lock(m);
	r = model_get_locked(m, dir, name, len, out);
	model_unlock(m);
	return r;
}

void model_set_link(struct model *m, udc_ino ino, const char *target, size_t len)
{
	struct mobj *o;

	model_lock(m);
	o = obj_get(m, ino, true);
	free(o->target);
	o->target = malloc(len ? len : 1);
	if (!o->target)
		model_die("out of memory");
	memcpy(o->target, target, len);
	o->tlen = len;
	model_unlock(m);
}

void model_set_link_s(struct model *m, udc_ino ino, const char *target)
{
	model_set_link(m, ino, target, strlen(target));
}

void model_set_error(struct model *m, udc_ino dir, const char *name, size_t len, int err)
{
	struct merr **pp;

	model_lock(m);
	for (pp = &m->errs; *pp; pp = &(*pp)->next)
		if ((*pp)->dir == dir && (*pp)->len == len && memcmp((*pp)->name, name, len) == 0)
			break;
	if (!*pp) {
		*pp = calloc(1, sizeof(**pp));
		if (!*pp)
			model_die("out of memory");
		(*pp)->dir = dir;
		(*pp)->len = len;
		memcpy((*pp)->name, name, len);
	}
	(*pp)->err = err;
	model_unlock(m);
}

void model_set_delay_us(struct model *m, unsigned us)
{
	model_lock(m);
	m->delay_us = us;
	model_unlock(m);
}

void model_gate_arm(struct model *m, udc_ino dir, const char *name, size_t len)
{
	model_lock(m);
	m->gate_armed = true;
	m->gate_entered = false;
	m->gate_released = false;
	m->gate_dir = dir;
	m->gate_len = len;
	memcpy(m->gate_name, name, len);
	model_unlock(m);
}

void model_gate_wait_entered(struct model *m)
{
	model_lock(m);
	while (!m->gate_entered)
		pthread_cond_wait(&m->cond, &m->lock);
	model_unlock(m);
}

void model_gate_release(struct model *m)
{
	model_lock(m);
	m->gate_released = true;
	pthread_cond_broadcast(&m->cond);
	model_unlock(m);
}

uint64_t model_lookup_calls(struct model *m)
{
	return atomic_load(&m->lookups);
}

uint64_t model_readlink_calls(struct model *m)
{
	return atomic_load(&m->readlinks);
}

uint64_t model_calls(struct model *m)
{
	return atomic_load(&m->lookups) + atomic_load(&m->readlinks);
}

void model_reset_calls(struct model *m)
{
	atomic_store(&m->lookups, 0);
	atomic_store(&m->readlinks, 0);
}

void *model_last_ctx(struct model *m)
{
	return atomic_load(&m->last_ctx);
}

static struct model *model_of(void *ctx)
{
	struct model *m = ctx ? ctx : model_fallback;

	if (!m)
		model_die("backend called with no model");
	return m;
}

static void model_delay(unsigned us)
{
	if (us)
		usleep(us);
}

/* What every backend call does first: count it, note its ctx, and sleep
 * for the configured delay (read under the lock, slept outside it). */
static void model_call_begin(struct model *m, _Atomic uint64_t *counter, void *ctx)
{
	unsigned delay;

	atomic_fetch_add(counter, 1);
	atomic_store(&m->last_ctx, ctx);
	model_lock(m);
	delay = m->delay_us;
	model_unlock(m);
	model_delay(delay);
}

static int model_be_lookup(void *ctx, udc_ino dir, const char *name, size_t len,
			   struct udc_attr *out)
{
	struct model *m = model_of(ctx);
	struct udc_attr a;
	int r = 0;

	model_call_begin(m, &m->lookups, ctx);

	model_lock(m);
	for (struct merr *e = m->errs; e; e = e->next)
		if (e->err && e->dir == dir && e->len == len && memcmp(e->name, name, len) == 0)
			r = e->err;
	if (!r)
		r = model_get_locked(m, dir, name, len, &a);
	if (m->gate_armed && m->gate_dir == dir && m->gate_len == len &&
	    memcmp(m->gate_name, name, len) == 0) {
		/* The answer is read: now let the test mutate the store and the
		 * cache while this call is in flight. */
		m->gate_armed = false;
		m->gate_entered = true;
		pthread_cond_broadcast(&m->cond);
		while (!m->gate_released)
			pthread_cond_wait(&m->cond, &m->lock);
	}
	model_unlock(m);
	if (r == 0 && out)
		*out = a;
	return r;
}

static ssize_t model_be_readlink(void *ctx, udc_ino ino, char *buf, size_t size)
{
	struct model *m = model_of(ctx);
	struct mobj *o;
	ssize_t r;

	model_call_begin(m, &m->readlinks, ctx);

	model_lock(m);
	o = obj_get(m, ino, false);
	if (!o || !o->target) {
		r = -EINVAL;
	} else {
		size_t n = o->tlen < size ? o->tlen : size;

		memcpy(buf, o->target, n);
		r = (ssize_t)n;
	}
	model_unlock(m);
	return r;
}

const struct udc_backend model_backend = {
	.lookup = model_be_lookup,
	.readlink = model_be_readlink,
};

const struct udc_backend model_backend_nolink = {
	.lookup = model_be_lookup,
	.readlink = NULL,
};
