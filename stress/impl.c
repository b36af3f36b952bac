/* SPDX-License-Identifier: MIT */
/*
 * stress/impl.c - the --impl table, and udcache behind the interface.
 *
 * Owns: impls[] (udcache and the baselines, in --help order) and
 * impl_udcache, whose calls are udcache's public API with the cache as a
 * void pointer: a cast and a tail call each, so udcache pays nothing for
 * the interface but the indirect call every implementation pays.
 *
 * Locking: none of its own; udcache's calls do their own.
 *
 * Ordering: none (no shared state).
 */
#include <errno.h>
#include <string.h>

#include "stress/impl.h"
#include "engine/internal.h"   /* the cache's policy, for bytes_parts */
#include "shrink/shrink.h"

static void *udcache_create(const struct impl_config *cfg)
{
	struct udc_config uc = UDC_CONFIG_INIT;

	uc.memory_limit = cfg->memory_limit;
	uc.root = cfg->root;
	uc.backend = cfg->backend;
	uc.hash_key[0] = cfg->hash_key[0];
	uc.hash_key[1] = cfg->hash_key[1];
	if (cfg->no_reclaim_thread)
		uc.flags |= UDC_CFG_NO_RECLAIM_THREAD;
	return udc_create(&uc);
}

static void udcache_destroy(void *c)
{
	udc_destroy(c);
}

static int udcache_lookup(void *c, udc_ino dir, const char *name, size_t len, struct udc_attr *out)
{
	return udc_lookup(c, dir, name, len, out);
}

static int udcache_resolve(void *c, udc_ino dir, const char *name, size_t len,
			   const struct udc_call *call, struct udc_attr *out)
{
	return udc_resolve(c, dir, name, len, call, out);
}

static int udcache_walk(void *c, udc_ino start, const char *path, size_t len, unsigned flags,
			const struct udc_call *call, struct udc_attr *out)
{
	return udc_walk(c, start, path, len, flags, call, out);
}

static int udcache_add(void *c, udc_ino dir, const char *name, size_t len, const struct udc_attr *attr)
{
	return udc_add(c, dir, name, len, attr);
}

static int udcache_add_negative(void *c, udc_ino dir, const char *name, size_t len, uint32_t client)
{
	return udc_add_negative(c, dir, name, len, client);
}

static int udcache_remove(void *c, udc_ino dir, const char *name, size_t len)
{
	return udc_remove(c, dir, name, len);
}

static int udcache_rename(void *c, udc_ino odir, const char *oname, size_t olen, udc_ino ndir,
			  const char *nname, size_t nlen, udc_ino moved)
{
	return udc_rename(c, odir, oname, olen, ndir, nname, nlen, moved);
}

static int udcache_rmdir(void *c, udc_ino parent, const char *name, size_t len, udc_ino dir)
{
	return udc_rmdir(c, parent, name, len, dir);
}

static int udcache_invalidate_dir(void *c, udc_ino dir)
{
	return udc_invalidate_dir(c, dir);
}

static void udcache_stats(void *c, struct udc_stats *st)
{
	udc_stats_get(c, st);
}

static void udcache_bytes_parts(void *c, struct shrink_bytes_parts *p)
{
	shrink_bytes_parts(((struct udc_cache *)c)->shrink, p);
}

static void udcache_settle(void *c)
{
	shrink_tables_settle(((struct udc_cache *)c)->shrink);
}

const struct impl impl_udcache = {
	.name = "udcache",
	.summary = "this library: RCU hash, lock-free reclaim, bounded memory",
	.bounded = true,
	.create = udcache_create,
	.destroy = udcache_destroy,
	.lookup = udcache_lookup,
	.resolve = udcache_resolve,
	.walk = udcache_walk,
	.add = udcache_add,
	.add_negative = udcache_add_negative,
	.remove = udcache_remove,
	.rename = udcache_rename,
	.rmdir = udcache_rmdir,
	.invalidate_dir = udcache_invalidate_dir,
	.stats = udcache_stats,
	.bytes_parts = udcache_bytes_parts,
	.settle = udcache_settle,
};

/*
 * udcache-value: the same cache, every positive added with a value of
 * IMPL_VALUE_LEN bytes (a file handle, or a stat's worth of attributes)
 * and every lookup copying it out (udc_lookup_value, udc_resolve_value):
 * the hit path's cost with values, side by side with udcache's.
 */
const unsigned char impl_value[IMPL_VALUE_LEN] = "udc-stress: a value of 64 bytes";

static int udcache_value_lookup(void *c, udc_ino dir, const char *name, size_t len,
				struct udc_attr *out)
{
	unsigned char v[UDC_VALUE_MAX];
	size_t n = sizeof(v);

	return udc_lookup_value(c, dir, name, len, out, v, &n);
}

static int udcache_value_resolve(void *c, udc_ino dir, const char *name, size_t len,
				 const struct udc_call *call, struct udc_attr *out)
{
	unsigned char v[UDC_VALUE_MAX];
	size_t n = sizeof(v);

	return udc_resolve_value(c, dir, name, len, call, out, v, &n, NULL);
}

static int udcache_value_add(void *c, udc_ino dir, const char *name, size_t len,
			     const struct udc_attr *attr)
{
	return udc_add_value(c, dir, name, len, attr, impl_value, sizeof(impl_value), 0);
}

const struct impl impl_udcache_value = {
	.name = "udcache-value",
	.summary = "udcache, every positive with a 64-byte value, copied out on each hit",
	.bounded = true,
	.create = udcache_create,
	.destroy = udcache_destroy,
	.lookup = udcache_value_lookup,
	.resolve = udcache_value_resolve,
	.walk = udcache_walk,
	.add = udcache_value_add,
	.add_negative = udcache_add_negative,
	.remove = udcache_remove,
	.rename = udcache_rename,
	.rmdir = udcache_rmdir,
	.invalidate_dir = udcache_invalidate_dir,
	.stats = udcache_stats,
	.bytes_parts = udcache_bytes_parts,
	.settle = udcache_settle,
};

const struct impl *const impls[] = {
	&impl_udcache, &impl_udcache_value, &impl_kernel, &impl_lru_mutex, &impl_lfht, &impl_lfht_value, &impl_ck_hs, &impl_s3fifo, NULL,
};

const struct impl *impl_find(const char *name)
{
	for (const struct impl *const *i = impls; *i; i++)
		if (strcmp((*i)->name, name) == 0)
			return *i;
	return NULL;
}
