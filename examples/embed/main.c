/*
 * examples/embed/main.c - the smallest embedder: a cache in front of a
 * store that knows one file, built against an installed udcache with
 * find_package(udcache) or pkg-config.
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include <udcache.h>

static int store_lookup(void *ctx, udc_ino dir, const char *name, size_t len,
			struct udc_attr *out)
{
	(void)ctx;
	if (dir == 1 && len == 5 && memcmp(name, "hello", 5) == 0) {
		*out = (struct udc_attr){ .ino = 2, .type = UDC_TYPE_REG, .cookie = 42 };
		return 0;
	}
	return -ENOENT;
}

int main(void)
{
	static const struct udc_backend store = { .lookup = store_lookup };
	struct udc_config cfg = UDC_CONFIG_INIT;
	struct udc_attr a;

	cfg.root = 1;
	cfg.backend = &store;
	udc_cache *c = udc_create(&cfg);
	if (!c) {
		perror("udc_create");
		return 1;
	}
	int r1 = udc_walk(c, 1, "/hello", 6, 0, NULL, &a);
	int r2 = udc_walk(c, 1, "/absent", 7, 0, NULL, NULL);
	struct udc_stats st = { .size = sizeof(st) };
	udc_stats_get(c, &st);
	printf("udcache %s: /hello -> %d (ino %llu), /absent -> %d, backend calls %llu\n",
	       udc_version(), r1, (unsigned long long)a.ino, r2,
	       (unsigned long long)st.backend_calls);
	udc_destroy(c);
	return r1 == 0 && a.ino == 2 && r2 == -ENOENT ? 0 : 1;
}
