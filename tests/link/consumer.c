/* SPDX-License-Identifier: MIT */
/*
 * tests/link/consumer.c - an embedder that links udcache (libudcache.a or .so).
 *
 * It defines functions with the names of udcache's internals (hash_name,
 * dir_get, entry_alloc, slab_alloc: the library's own before issue 17 made
 * its archive export the API only), so the static link fails with
 * "multiple definition" if the archive exports them.  It then checks that
 * linking udcache left the process's malloc alone (libc's, not jemalloc's:
 * the archive carries a private copy of jemalloc, the shared library loads
 * libjemalloc.so after libc), and that the cache works.
 */
#define _GNU_SOURCE /* dladdr */
#include <dlfcn.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <udcache.h>

/* The embedder's own functions, named as udcache's internals are. */
int hash_name(int x);
int dir_get(int x);
void *entry_alloc(size_t n);
int slab_alloc(int x);
int hash_name(int x) { return x + 1; }
int dir_get(int x) { return x * 2; }
void *entry_alloc(size_t n) { return malloc(n); }
int slab_alloc(int x) { return x - 1; }

static int fails;
#define CHECK(cond, ...)                                                        \
	do {                                                                    \
		if (!(cond)) {                                                  \
			fprintf(stderr, "consumer: " __VA_ARGS__);       \
			fputc('\n', stderr);                                    \
			fails++;                                                \
		}                                                               \
	} while (0)

/* Which object malloc resolves to in this process. */
static const char *malloc_owner(void)
{
	Dl_info info;
	void *m = dlsym(RTLD_DEFAULT, "malloc");

	if (!m || !dladdr(m, &info) || !info.dli_fname)
		return "?";
	return info.dli_fname;
}

int main(void)
{
	struct udc_config cfg = UDC_CONFIG_INIT;
	struct udc_attr a = { .ino = 42, .type = UDC_TYPE_REG }, out;
	const char *owner = malloc_owner();
	udc_cache *c;

	CHECK(strstr(owner, "libc.so") != NULL,
	      "malloc is %s's, not libc's: linking udcache took over the process's allocator",
	      owner);
	CHECK(hash_name(1) == 2 && dir_get(2) == 4 && slab_alloc(1) == 0,
	      "the embedder's own functions are not the ones called");
	void *p = entry_alloc(16);
	CHECK(p != NULL, "the embedder's entry_alloc failed");
	free(p);

	cfg.root = 1;
	cfg.memory_limit = 4 << 20;
	c = udc_create(&cfg);
	CHECK(c != NULL, "udc_create: %s", strerror(errno));
	if (c) {
		CHECK(udc_add(c, 1, "file", 4, &a) == 0, "udc_add failed");
		CHECK(udc_lookup(c, 1, "file", 4, &out) == UDC_POSITIVE && out.ino == 42,
		      "udc_lookup did not find the name added");
		CHECK(udc_lookup(c, 1, "nofile", 6, &out) == UDC_MISS,
		      "udc_lookup of a name never added answered");
		udc_destroy(c);
	}
	printf("consumer: malloc from %s; %s\n", owner, fails ? "FAILED" : "ok");
	return fails != 0;
}
