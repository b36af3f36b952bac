/* SPDX-License-Identifier: MIT */
/*
 * udcache.h - the public interface of udcache, an embeddable name cache.
 *
 * udcache maps (directory ino, name) to an object (a positive entry) or to
 * "this name does not exist" (a negative entry).  It is a userspace
 * reimplementation of the performance-critical core of the Linux dentry
 * cache: lookups are RCU readers of a lock-free hash table, mutations are
 * told to the cache by the embedder, misses are resolved through the
 * embedder's backend with one backend call per name however many threads
 * miss it at once.
 *
 * General rules (they hold for every function below):
 *
 *  - Every function may be called from any number of threads at once, on
 *    any thread, with no registration step: a thread is registered with RCU
 *    on its first call and unregistered when it exits.
 *  - Errors are negative errno values.  A call that fails changes nothing.
 *  - A name is 1..UDC_NAME_MAX bytes, contains no '/' and no NUL byte, and
 *    is not ".".  ".." is legal for lookups and means "the parent of dir".
 *    Names are compared byte for byte.
 *  - Nothing outside the cache ever holds a reference to an entry: answers
 *    are copied into a caller's struct udc_attr.  So the cache may drop or
 *    move any entry at any time.
 *  - fork() without exec: the child may go on using every cache the parent
 *    had (any call, udc_shrink and udc_destroy included) provided that no
 *    udcache call was running in another thread when fork() was called: a
 *    call in flight may hold a lock or a read-side section that the child
 *    can never release.  udcache's own threads need nothing from the
 *    caller: handlers installed with pthread_atfork() by the first
 *    udc_create() stop each cache's reclaim thread before the fork (a
 *    fork waits for its current batch) and start one again in the parent
 *    and in the child, and pause and remake liburcu's call_rcu thread.
 *
 * This header is the contract: each function's comment says what it does,
 * its errors and what may run beside it.  The man pages (udcache(3), and
 * one per function) are made from it (scripts/gen-man.py); docs/ABI.md says
 * what a release may change, and docs/ in the source tree holds the design.
 */
#ifndef UDCACHE_H
#define UDCACHE_H

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#ifdef __cplusplus
extern "C" {
#endif

/* Symbols of the shared library: only what this header declares is exported. */
#if defined(__GNUC__)
#define UDC_API __attribute__((visibility("default")))
#else
#define UDC_API
#endif

#define UDC_VERSION_MAJOR 0
#define UDC_VERSION_MINOR 2
#define UDC_VERSION_PATCH 0

typedef uint64_t udc_ino;              /* the backing store's identity of an object */
#define UDC_INO_NONE ((udc_ino)0)      /* "unknown"; never a valid ino */
#define UDC_NAME_MAX 255               /* longest name, in bytes */
#define UDC_PATH_MAX 4096              /* longest path given to udc_walk, in bytes */
#define UDC_VALUE_MAX 256              /* longest value a positive carries, in bytes */
#define UDC_TTL_NONE UINT32_MAX        /* an answer that never expires (see "Expiry") */

typedef struct udc_cache udc_cache;    /* opaque */

enum udc_type {
	UDC_TYPE_UNKNOWN = 0,
	UDC_TYPE_REG     = 1,
	UDC_TYPE_DIR     = 2,
	UDC_TYPE_SYMLINK = 3,
	UDC_TYPE_OTHER   = 4,
};

struct udc_attr {                      /* what a positive name maps to */
	udc_ino  ino;                  /* never UDC_INO_NONE */
	uint32_t type;                 /* enum udc_type */
	uint32_t flags;                /* reserved: 0 */
	uint64_t cookie;               /* the embedder's word, stored and returned as given */
};
/* A directory's attr that no name gave (a ".." answer, a walk that ends
 * on its start, "." or ".."): its cookie is the one its name was last
 * added or resolved with while the cache held a ".." record for it or
 * for one of its children, or a fill of it (it is kept with them), else 0. */

/* Outcomes of udc_lookup (cache only). */
#define UDC_MISS     0                 /* the cache knows nothing about the name */
#define UDC_POSITIVE 1                 /* the name exists; *out is filled */
#define UDC_NEGATIVE 2                 /* the name is known not to exist */

/*
 * The backend: how the cache asks the store on a miss.
 *
 * Everything it returns is checked; an answer that breaks the rules below
 * (a positive return value, an errno outside -1..-4095, an attr that
 * udc_add() would refuse, a ".." that is not a directory, a readlink
 * length past @size or a target holding a NUL byte) is returned to the
 * caller as -EIO and nothing is cached.
 *
 * What a backend may do: any udcache call, on any cache, except resolving
 * (udc_resolve, udc_walk) the very name it was asked for in the same cache,
 * directly or through other names: that call returns -EDEADLK (the cache
 * detects it: the name's call in flight belongs to this thread).  Calls
 * that only mutate or look up never wait for a backend.  A loop through
 * two threads' backends (each resolving the name the other's backend is
 * resolving) is not detected: it waits forever, as it would in the store.
 *
 * A thread that exits (pthread_exit) or is cancelled (pthread_cancel, at
 * a cancellation point of the backend's own) inside the backend leaves
 * nothing behind: its call in flight is withdrawn, and the threads that
 * were waiting for its answer ask the backend themselves.  udcache's own
 * waits are not cancellation points (cancellation is held off inside
 * them and restored before the backend is called).
 */
struct udc_backend {
	/* Resolve one name in directory dir. Return 0 and fill *out if it exists,
	 * -ENOENT if it does not, another negative errno on failure (then nothing
	 * is cached and the error is returned to the caller). May block. */
	int (*lookup)(void *ctx, udc_ino dir, const char *name, size_t len,
		      struct udc_attr *out);
	/* Read a symlink's target into buf (no NUL needed, none allowed);
	 * return its length (1..size) or -errno. NULL: udc_walk does not follow
	 * symlinks (returns -ELOOP on one that must be followed). */
	ssize_t (*readlink)(void *ctx, udc_ino ino, char *buf, size_t size);
	/* Optional, used instead of lookup when set (lookup may then be
	 * NULL): as lookup, and a positive answer may carry a value (see
	 * udc_add_value): write up to *value_len bytes (UDC_VALUE_MAX) at
	 * value and set *value_len to their number (0: none; it is 0 on
	 * entry).  A length past UDC_VALUE_MAX is -EIO.  ".." answers keep
	 * no value (the parent's value is its entry's, in its own parent).
	 * *ttl_ms (0 on entry: the cache's default) may be set to the
	 * answer's life, positive or -ENOENT (see "Expiry"). */
	int (*lookup_value)(void *ctx, udc_ino dir, const char *name, size_t len,
			    struct udc_attr *out, void *value, size_t *value_len,
			    uint32_t *ttl_ms);
};

struct udc_call {                      /* per call: whose work this is */
	void    *ctx;                  /* passed to the backend as is */
	uint32_t client;               /* tenant / client id for quotas; 0 = anonymous */
};

struct udc_config {
	size_t   size;                 /* sizeof(struct udc_config): set by UDC_CONFIG_INIT */
	size_t   memory_limit;         /* bytes the cache may hold, all overhead included;
	                                * 0 = 64 MiB */
	udc_ino  root;                 /* where absolute paths start; required */
	const struct udc_backend *backend;  /* NULL: resolve/walk use the cache only
	                                * and report a miss as -EAGAIN */
	uint64_t hash_key[2];          /* the name hash's key (NH then AES-128 with
	                                * AES-NI, else SipHash-1-3); {0,0} =
	                                * 128 random bits per cache.  A fixed key
	                                * (reproducible runs) must stay secret:
	                                * whoever knows it can choose names that
	                                * all land in one hash chain, and every
	                                * lookup in it then walks the chain */
	uint32_t flags;                /* UDC_CFG_* below */
	uint32_t negative_max_age_ms;  /* a negative not hit for this long is reclaimed
	                                * even with no memory pressure (one to two
	                                * ages after its last hit: a hit within an
	                                * age keeps it another); 0 = default
	                                * (600000); UINT32_MAX = never */
	uint32_t positive_ttl_ms;      /* the life of a positive answer that is given
	                                * none of its own (see "Expiry"); 0 = none */
	uint32_t negative_ttl_ms;      /* the same for negative answers; 0 = none */
};
#define UDC_CONFIG_INIT { .size = sizeof(struct udc_config) }
/* The smallest memory limit udc_create() accepts (and the smallest
 * udc_set_memory_limit() does: see udc_stats.bytes_min).  An empty cache
 * holds about 14 KiB at it, and room for a few hundred entries. */
#define UDC_MEMORY_MIN ((size_t)64 << 10)
#define UDC_CFG_NO_RECLAIM_THREAD 0x1  /* no background reclaim thread: reclaim
                                        * runs inline and through udc_shrink;
                                        * a hash table resize past 8192 buckets
                                        * and the garbage of an invalidation
                                        * past 16384 entries still run in a
                                        * short-lived thread of their own
                                        * (SCHED_BATCH, nice 10), as liburcu's
                                        * own resizes of such tables do (so no
                                        * call waits seconds for them) */
#define UDC_CFG_KEEP_UNLINKED     0x2  /* udc_remove leaves a negative behind */

/**
 * udc_version() - the library's version.
 *
 * Context: any.
 * Return: a static string "MAJOR.MINOR.PATCH".
 */
UDC_API const char *udc_version(void);

/**
 * udc_create() - make a cache.
 * @cfg: the configuration, initialised with UDC_CONFIG_INIT.  Read during
 *       the call only, except cfg->backend, which must stay valid until
 *       udc_destroy().
 *
 * cfg->size must be sizeof(struct udc_config) of this header; cfg->root must
 * not be UDC_INO_NONE; cfg->memory_limit must be 0 or at least
 * UDC_MEMORY_MIN; cfg->flags may hold only UDC_CFG_* bits; a backend, if
 * given, must have a lookup function.  Checks at start-up that the kernel
 * offers membarrier (see struct udc_stats.membarrier).
 *
 * Memory: an empty cache holds about 160 KiB (its tables' smallest
 * size, stripe locks, ghosts, statistics) at limits from 2 MiB up, and
 * less below, the tables, stripes and ghosts each within about 1/32 of
 * the limit: 26 KiB at 256 KiB, 86 KiB at 1 MiB; counted in bytes_used.  Entries live in
 * slab pages of 4 to 64 KiB; each CPU has an open page per entry class
 * (ten classes, and six more once positives with values are added)
 * whichever threads call, so the cache's memory does not
 * grow with the number of threads.  The page size and how many CPUs get
 * open pages are chosen here from cfg->memory_limit, so that open pages
 * stay within 1/64 of it (64 KiB pages at 64 MiB on 2 CPUs, 4 KiB pages
 * on a single slot at 2 MiB; the classes of positives with values come
 * on top, where values are used: 1.6 times the open pages);
 * udc_set_memory_limit() keeps them.  Emptied pages are kept for reuse as
 * many as were made in the last 200 ms, or second while bytes_used is
 * under 3/4 of the limit, within 1/16 of the limit (1/4 while under 3/4
 * of it) and 512 pages a slab
 * (64 with UDC_CFG_NO_RECLAIM_THREAD: nothing gives them back while the
 * cache idles), counted in bytes_used; the rest go back to the OS at once,
 * and the kept ones within a second of the demand stopping
 * (resident_bytes).
 *
 * Context: any thread; may allocate and start threads.
 * Return: the cache, or NULL with errno set: EINVAL for a bad config, ENOMEM
 * when memory runs out.
 */
UDC_API udc_cache *udc_create(const struct udc_config *cfg);

/**
 * udc_destroy() - free a cache and everything it holds.
 * @c: the cache, or NULL (then nothing happens).
 *
 * Context: no call on @c may be running, and none may follow.  Waits for
 * RCU grace periods, so must not be called inside an RCU read-side critical
 * section of the caller's own.
 */
UDC_API void udc_destroy(udc_cache *c);

/**
 * udc_lookup() - look a name up in the cache only.
 * @c:    the cache.
 * @dir:  the directory's ino.
 * @name: the name (not NUL-terminated), @len bytes.
 * @out:  filled on UDC_POSITIVE; may be NULL.
 *
 * ".." gives the parent of @dir when the cache knows it (for cfg->root, the
 * root itself).  In a directory marked complete (udc_dir_complete()), a name
 * the cache does not hold is UDC_NEGATIVE.  An entry cached before the last
 * udc_invalidate_dir()/udc_rmdir() of @dir is never returned.
 *
 * Context: any; lock-free, never blocks, takes no lock, does no atomic
 * read-modify-write and, in the steady state, stores to no shared cache line
 * (at most one plain store that raises an entry's hit counter, a byte that
 * reclaim lowers).
 * Ordering: a lookup that starts after udc_add() (or any mutation) of the
 * name has returned sees its effect.
 * Return: UDC_POSITIVE, UDC_NEGATIVE or UDC_MISS; -EINVAL for a NULL cache,
 * a NULL name, a bad name or @dir == UDC_INO_NONE; -ENAMETOOLONG past
 * UDC_NAME_MAX.
 */
UDC_API int udc_lookup(udc_cache *c, udc_ino dir, const char *name, size_t len,
	       struct udc_attr *out);

/**
 * udc_resolve() - look a name up, asking the backend on a miss.
 * @c:    the cache.
 * @dir:  the directory's ino.
 * @name: the name, @len bytes.
 * @call: passed to the backend (ctx) and used for quotas (client); may be
 *        NULL (anonymous, ctx NULL).
 * @out:  filled on 0; may be NULL.
 *
 * On a miss, exactly one of the threads missing (@dir, @name) at once calls
 * cfg->backend->lookup; the others wait for and share its answer.  The
 * answer (positive or -ENOENT) is cached, unless a mutation of that name
 * (udc_add, udc_add_negative, udc_remove, udc_rename, udc_invalidate,
 * udc_invalidate_dir or udc_rmdir of @dir) ran while the backend was asked:
 * then it is returned but not cached.  Backend errors other than -ENOENT are
 * returned to every waiter and nothing is cached.  A miss in a complete
 * directory is -ENOENT with no backend call.
 *
 * Context: any thread; may block in the backend (never while holding a lock
 * that lookups take: lookups take none).
 * ".." is answered from the cache when the parent is known and trusted
 * (see udc_rename), else asked of the backend as a name; that answer is
 * cached unless the directory's parent changed during the call (a rename,
 * a remove, udc_invalidate of ".."), or a directory moved that the cache
 * could not identify.
 *
 * Return: 0, -ENOENT, the name check's error (as udc_lookup), -EAGAIN on a
 * miss with no backend, -EDEADLK when called from the backend resolving
 * this very name, -ENOMEM, -EIO for a backend answer that breaks its rules
 * (see struct udc_backend), or the backend's error.
 */
UDC_API int udc_resolve(udc_cache *c, udc_ino dir, const char *name, size_t len,
		const struct udc_call *call, struct udc_attr *out);

/*
 * Expiry: an answer may have a life, after which it is a miss (the
 * backend is asked again) and reclaim drops it first: for a store with
 * writers the cache is not told of (a FUSE reply's entry timeout, NFS's
 * acdirmin).  Each answer's ttl_ms is given by the call that caches it
 * (udc_add_value, udc_add_negative_ttl, the backend's lookup_value), 0
 * meaning the cache's default for its kind (udc_config.positive_ttl_ms,
 * negative_ttl_ms; 0 there: none), UDC_TTL_NONE never.  udc_add,
 * udc_add_negative and a backend without lookup_value give 0; a rename
 * keeps the moved answer's deadline.  Deadlines are kept in steps of 2^26
 * ns (67 ms) from the cache's creation, rounded down: an answer expires up
 * to 67 ms early, never later than the kernel's coarse clock step (a
 * jiffy, 1-10 ms); a life under 67 ms may end at once.  A lookup reads
 * the clock (CLOCK_MONOTONIC_COARSE, no system call) only for an entry
 * that has a deadline.  A complete directory answers the names it does
 * not hold as negatives, so its completeness lives as long as a negative
 * does by default (udc_config.negative_ttl_ms, from udc_dir_complete()),
 * after which those names are misses again; an expired answer in a
 * complete directory is a miss, never a negative.
 */

/*
 * Values: a positive answer may carry an embedder-defined value of up to
 * UDC_VALUE_MAX bytes (attributes, a file handle, an object key), set by
 * udc_add_value() or by the backend's lookup_value, and copied out on a hit
 * by udc_lookup_value() and udc_resolve_value().  The cache keeps a copy:
 * an entry is immutable, so a new value is a new udc_add_value() of the
 * name (atomic for lookups, as every mutation).  The calls without _value
 * work as before and ignore values; udc_add() of a name replaces its value
 * with none.  udc_rename() moves the value with the name.  ".." answers
 * carry no value.
 *
 * @value, @value_len (in-out): *value_len is the room at @value on entry
 * (0 with @value NULL: only the length is wanted); on return it is the
 * cached value's length (0 when it has none, and on every answer but a
 * positive), of which min(room, length) bytes were copied.  A buffer of
 * UDC_VALUE_MAX bytes always holds it.  NULL @value_len, or a room with
 * @value NULL, is -EINVAL.
 *
 * Memory: a value lives in its entry (its bytes and one for its length,
 * the entry in a slab class of 160, 256 or 384 bytes), counted in
 * bytes_used; negatives and positives without a value are unchanged.
 */

/**
 * udc_lookup_value() - udc_lookup(), and the positive's value.
 * Context, Ordering: as udc_lookup(); the value comes from the same entry
 * as *out.
 * Return: as udc_lookup(), and -EINVAL for bad value arguments (above).
 */
UDC_API int udc_lookup_value(udc_cache *c, udc_ino dir, const char *name, size_t len,
		     struct udc_attr *out, void *value, size_t *value_len);

/* Where udc_resolve_value()'s answer came from (*source). */
#define UDC_FROM_CACHE   1             /* a cached entry (or a complete directory) */
#define UDC_FROM_BACKEND 2             /* this call asked the backend */
#define UDC_FROM_SHARED  3             /* another thread's backend call, waited for */

/**
 * udc_resolve_value() - udc_resolve(), and the positive's value, and
 * where the answer came from.
 * @source: may be NULL; set to UDC_FROM_* for an answer (0 or -ENOENT),
 *          so that a gateway knows whether the store was asked.
 * A miss asks the backend's lookup_value (lookup, with no value, if it has
 * none), and the value it gives is cached with the answer.
 * Return: as udc_resolve(), and -EINVAL for bad value arguments (above).
 */
UDC_API int udc_resolve_value(udc_cache *c, udc_ino dir, const char *name, size_t len,
		      const struct udc_call *call, struct udc_attr *out, void *value,
		      size_t *value_len, unsigned *source);

#define UDC_WALK_FOLLOW 0x1            /* follow a symlink in the last component */

/**
 * udc_walk() - resolve a path, component by component.
 * @c:     the cache.
 * @start: where a relative path starts (a directory's ino).
 * @path:  the path, @len bytes (not NUL-terminated; no NUL inside).
 * @flags: 0 or UDC_WALK_FOLLOW.
 * @call:  as for udc_resolve(); may be NULL.
 * @out:   the final object's attr, filled on 0; may be NULL.
 *
 * A path starting with '/' starts at cfg->root.  "//" is one '/'; "." stays;
 * ".." goes to the parent (and stays at cfg->root); a trailing '/' requires a
 * directory.  Symlinks are followed in the middle of a path always, in the
 * last component with UDC_WALK_FOLLOW or a trailing '/', at most 40 in one
 * walk.  Each component goes through udc_resolve(), except a ".." that
 * follows a directory (UDC_TYPE_DIR) the walk resolved: it returns to the
 * directory the walk came from (a directory has one parent), asking neither
 * the cache nor the backend; a ".." above where the walk started, or of a
 * name of type UDC_TYPE_UNKNOWN, is udc_resolve()'s (the cache's record of
 * the parent, else the backend).  The answer is
 * consistent with directory renames and rmdirs told to this cache: if one
 * ran during the walk, the walk is retried, so the path returned existed as
 * a whole at one moment.  No internal lock is held across a backend call,
 * so the embedder may hold its own store lock while it calls udc_rename().
 *
 * Context: any thread; may block in the backend.
 * Return: 0; -EINVAL (NULL cache or path, NUL in the path, unknown flags,
 * relative path with @start == UDC_INO_NONE); -ENOENT (a component does not
 * exist, or an empty path); -ENOTDIR (a non-directory followed by a
 * component or a trailing '/'); -ELOOP (more than 40 symlinks, or a symlink
 * that must be followed with no readlink); -ENAMETOOLONG (a component past
 * UDC_NAME_MAX, or the path, symlink targets spliced in, past UDC_PATH_MAX);
 * -EAGAIN (a miss with no backend, or renames so frequent that 256 passes
 * could not finish: never an inconsistent answer); -EDEADLK and -EIO as
 * udc_resolve() (a readlink answer is checked too); or the backend's error.
 */
UDC_API int udc_walk(udc_cache *c, udc_ino start, const char *path, size_t len,
	     unsigned flags, const struct udc_call *call, struct udc_attr *out);

/*
 * Mutations: the embedder tells the cache what changed in the store.  Each
 * returns 0 or -errno (-EINVAL for a NULL cache, a bad name, a bad attr or a
 * UDC_INO_NONE directory; -ENAMETOOLONG; -ENOMEM) and none calls the
 * backend.  The calls that forget (udc_remove, udc_rmdir, udc_invalidate,
 * udc_invalidate_dir) never fail with -ENOMEM: they are the embedder's
 * way back to a correct cache after another call failed (with no memory
 * for the negative UDC_CFG_KEEP_UNLINKED leaves, the name is dropped).  Each is atomic for lookups: a lookup sees the old state or the
 * new one.  Each marks in-flight udc_resolve() answers for the names it
 * touches as stale, so that they are not cached.
 * Context: any thread, outside an RCU read-side section of the caller's
 * own (urcu-memb); they take short internal locks and never block on the
 * backend.  When the cache is over its limit they run a bounded reclaim
 * batch, and a caller that outruns reclaim waits for one RCU grace period
 * (throttling).  bytes_used stays within limit + slack at every moment,
 * however many threads call: a call whose new entry would pass it waits
 * for reclaim to make room first, and returns -ENOMEM, changing nothing,
 * if four rounds of reclaim could not (a limit too small for the calls in
 * flight at once; none was seen with 64 threads at UDC_MEMORY_MIN).  A
 * udc_resolve() answer with no room is returned and not cached.
 */

/**
 * udc_add() - @name in @dir now exists as @attr (replacing what was cached).
 * attr->ino must not be UDC_INO_NONE, attr->type must be an enum udc_type,
 * attr->flags must be 0.  "..", with a UDC_TYPE_DIR attr, records the
 * parent of @dir.  A directory added by its name has @dir as its parent
 * for ".." only if the cache holds a ".." record for it already (it is
 * brought up to date); else its ".." is recorded when it is first asked
 * (udc_resolve, udc_walk: one backend call) or told with "..".  (Until
 * 0.2, every directory added recorded its parent: a second cache line
 * for each directory named, for an answer seldom asked.)
 */
UDC_API int udc_add(udc_cache *c, udc_ino dir, const char *name, size_t len,
	    const struct udc_attr *attr);

/**
 * udc_add_value() - udc_add(), with a value the name's lookups return and
 * a life.
 * @value:  @value_len bytes (0..UDC_VALUE_MAX; 0: no value), copied.
 * @ttl_ms: the answer's life (see "Expiry"): 0 the cache's default,
 *          UDC_TTL_NONE none.
 * Return: as udc_add(); -EINVAL also for @value_len past UDC_VALUE_MAX, a
 * length with @value NULL, or a value or a life for "..".
 */
UDC_API int udc_add_value(udc_cache *c, udc_ino dir, const char *name, size_t len,
		  const struct udc_attr *attr, const void *value, size_t value_len,
		  uint32_t ttl_ms);

/**
 * udc_add_negative() - @name is known not to exist in @dir.
 * @client: the client whose miss this was (quotas), 0 = anonymous.
 * Replaces a positive entry.  The cache may decline to keep it (admission
 * bounds, a complete directory): the call still returns 0.
 */
UDC_API int udc_add_negative(udc_cache *c, udc_ino dir, const char *name, size_t len,
		     uint32_t client);

/**
 * udc_add_negative_ttl() - udc_add_negative(), with a life (see "Expiry"):
 * @ttl_ms 0 the cache's default, UDC_TTL_NONE none.
 */
UDC_API int udc_add_negative_ttl(udc_cache *c, udc_ino dir, const char *name, size_t len,
			 uint32_t client, uint32_t ttl_ms);

/**
 * udc_remove() - @name was unlinked from @dir.  Drops the entry, or with
 * UDC_CFG_KEEP_UNLINKED leaves a negative entry behind.
 */
UDC_API int udc_remove(udc_cache *c, udc_ino dir, const char *name, size_t len);

/**
 * udc_rename() - (@odir, @oname) was renamed to (@ndir, @nname).
 * @moved: the object's ino, or UDC_INO_NONE if unknown.
 *
 * Afterwards (@odir, @oname) is not positive (a negative with
 * UDC_CFG_KEEP_UNLINKED) and (@ndir, @nname) is positive with the old attr
 * when the old name was cached (and, with @moved given, cached as @moved),
 * else a miss.  Both names cached as one ino is no exception: a lookup
 * of the new name may have cached the store's answer before this call
 * (the store moved first), and the old name must go.  So a rename(2)
 * between two links of one object, which changes nothing in the store,
 * is not to be told (udc_rename would forget the old link).  A
 * directory moved this way gets @ndir as its parent; a
 * directory that was replaced at the target is treated as removed.  Walks
 * that ran through a renamed directory are retried.  Renaming a name to
 * itself does nothing.
 *
 * ".." stays right without the inos, at a price: when the moved object is
 * neither given (@moved) nor cached under @oname, it may be a directory
 * whose ".." is @odir, so no cached ".." leading to @odir is trusted any
 * more (each is asked of the backend again); likewise ".." leading to
 * @ndir when the target name was not cached and not known absent (it may
 * have been a directory, now gone).  Give @moved, and keep the target
 * cached, to keep them.
 */
UDC_API int udc_rename(udc_cache *c, udc_ino odir, const char *oname, size_t olen,
	       udc_ino ndir, const char *nname, size_t nlen, udc_ino moved);

/**
 * udc_exchange() - (@adir, @aname) and (@bdir, @bname) were exchanged
 * (renameat2 with RENAME_EXCHANGE): each name now holds what the other
 * held.
 *
 * Each name gets the other's cached answer (attr, value, deadline) when it
 * was cached as positive, else it becomes a miss.  A directory exchanged
 * gets its new parent for ".."; when a side was not cached (it may have
 * been a directory), no cached ".." leading to its old directory is
 * trusted any more.  Walks through either are retried.  Exchanging a name
 * with itself does nothing.
 * Return: 0, -EINVAL, -ENAMETOOLONG, -ENOMEM (nothing changed).
 */
UDC_API int udc_exchange(udc_cache *c, udc_ino adir, const char *aname, size_t alen,
		 udc_ino bdir, const char *bname, size_t blen);

/**
 * udc_rmdir() - directory @dir, named @name in @parent, was removed.
 * @dir: its ino, or UDC_INO_NONE to take it from the cached entry.
 *
 * Drops (@parent, @name) (a negative with UDC_CFG_KEEP_UNLINKED) and forgets
 * every name cached in @dir, in O(1) however many there are: the directory's
 * generation is bumped and its old entries become garbage that reclaim
 * frees later.  Walks through @dir are retried.  With @dir UDC_INO_NONE and
 * no cached entry to take it from, the removed directory's names are not
 * found (give the ino) and no ".." leading to @parent is trusted any more.
 */
UDC_API int udc_rmdir(udc_cache *c, udc_ino parent, const char *name, size_t len,
	      udc_ino dir);

/**
 * udc_invalidate() - forget what is cached for @name in @dir (positive or
 * negative).  ".." forgets the parent of @dir.  A complete directory is no
 * longer complete.  Never allocates, so it never fails with -ENOMEM: the
 * embedder's way back to a correct cache when another call failed.
 */
UDC_API int udc_invalidate(udc_cache *c, udc_ino dir, const char *name, size_t len);

/**
 * udc_forget_ino() - forget every cached name of object @ino, wherever
 * it is (its hard links), when the store says it is gone or changed.
 *
 * From the call's return no lookup answers from a cached name of @ino (a
 * miss, also in a complete directory, never a negative); answers in
 * flight are not cached.  If @ino is a directory, its own names in it
 * and its ".." are forgotten too (udc_invalidate_dir()).  No reverse
 * index is kept: the names are dropped by the next garbage round (within
 * about a second with the reclaim thread; without it, in the batches the
 * calls run), and until it has run, an answer for @ino cached after the
 * call is a miss too.  At most
 * 64 objects, 4 per slot of @ino's hash, can be pending: beyond, -EAGAIN.
 * Allocates nothing.
 * Return: 0; -EINVAL (NULL cache, UDC_INO_NONE); -EAGAIN (too many
 * forgets pending: retry within a second, or udc_invalidate() the names
 * you know).
 */
UDC_API int udc_forget_ino(udc_cache *c, udc_ino ino);

/**
 * udc_invalidate_dir() - forget every name cached in @dir, in O(1).
 * ".." included (the parent of @dir is forgotten too: it is a lookup in
 * @dir); the directory is no longer complete.  @dir's own entry in its
 * parent is kept.
 */
UDC_API int udc_invalidate_dir(udc_cache *c, udc_ino dir);

/*
 * Complete directories: the fill protocol.
 *
 * A directory marked complete answers every name it does not hold as
 * negative, with no backend call.  That is only right if every name of the
 * directory is held when the flag is set and none is lost afterwards, so a
 * fill goes in three steps:
 *
 *     struct udc_fill f;
 *     udc_dir_fill_begin(c, dir, &f);        // before reading the listing
 *     ... read the directory from the store; udc_add() each name
 *         (or udc_resolve() each, as a READDIRPLUS handler does) ...
 *     r = udc_dir_complete(c, dir, &f);      // 0, or -ESTALE: try again later
 *
 * udc_dir_complete() fails with -ESTALE if, since udc_dir_fill_begin(), the
 * cache lost any name of @dir that still exists: an eviction (a fill at a
 * binding memory limit evicts the directory's own names), udc_invalidate(),
 * a resolve answer returned but not cached, a failed udc_add(), a rename
 * into @dir whose old name was not cached or over a name the cache held
 * nothing for (it may have replaced a directory), a rename out of @dir of
 * a directory the cache could not identify, udc_invalidate_dir() or
 * udc_rmdir() of @dir, or the directory object itself freed.  Once
 * complete, the flag is cleared before any of @dir's names is lost.  So a
 * complete directory never answers "does not exist" for a name the
 * embedder added during the fill (or since) and has not removed.
 *
 * The embedder's part: the listing is read after udc_dir_fill_begin(); a
 * name created in the store after the listing is read is told to the cache
 * (udc_add) as any mutation is; a name removed meanwhile is udc_remove()d
 * after the fill's own udc_add() of it (serialise the two, e.g. under the
 * store's directory lock, or a stale positive stays cached as with any
 * add).  A fill that keeps failing means the directory does not fit the
 * cache's room: stop trying, misses then go to the backend as usual.
 */
struct udc_fill {                      /* opaque: written by udc_dir_fill_begin */
	uint64_t opaque[5];
};

/**
 * udc_dir_fill_begin() - start filling @dir (see "Complete directories").
 * @fill: written; passed to udc_dir_complete() later, from any thread.
 *
 * Return: 0, -EINVAL (NULL cache or @fill, UDC_INO_NONE), -ENOMEM.
 */
UDC_API int udc_dir_fill_begin(udc_cache *c, udc_ino dir, struct udc_fill *fill);

/**
 * udc_dir_complete() - every name of @dir has been told since @fill began.
 *
 * From now on a miss in @dir is answered as negative with no backend call
 * and no negative entry stored, until the cache loses any of @dir's names
 * (reclaim, udc_invalidate) or @dir is invalidated or removed.
 * Return: 0; -ESTALE if a name of @dir was lost since udc_dir_fill_begin()
 * (nothing changes: fill again, or give up); -EINVAL (NULL cache or @fill,
 * UDC_INO_NONE, or @fill begun for another directory).
 */
UDC_API int udc_dir_complete(udc_cache *c, udc_ino dir, const struct udc_fill *fill);

/**
 * udc_add_listed() - cache a listing's answer for @name in @dir, unless
 * the name changed since @fill began.
 * @fill:   from udc_dir_fill_begin() of @dir, taken before the listing
 *          was read (READDIRPLUS: fill_begin, read, udc_add_listed each
 *          entry, udc_dir_complete).
 * @attr, @value, @value_len, @ttl_ms: as udc_add_value().
 *
 * A listing read from the store may be older than a mutation the cache
 * was told meanwhile (another request unlinked a name after the listing
 * was read and before it is cached): udc_add() would put the unlinked
 * name back.  This call caches the answer only if no mutation of @name
 * (udc_add, udc_add_value, udc_add_negative*, udc_remove, udc_rename,
 * udc_exchange, udc_invalidate, udc_rmdir of it) and no
 * udc_invalidate_dir()/udc_rmdir() of @dir ran since udc_dir_fill_begin();
 * otherwise the cache keeps what those told it.  A listing's own answers
 * (udc_add_listed, of this fill or another) are no mutation.  Names
 * share the record of such changes by stripes, so a change of another
 * name of the same stripe may refuse it too (rarely: never a wrong
 * answer).
 * Return: 0 (cached), -ESTALE (not cached: changed since @fill began; if
 * the cache then holds no answer for @name, udc_dir_complete() of this
 * fill fails too, as the name may exist), -EINVAL (as udc_add_value(),
 * "..", or @fill begun for another directory), -ENOMEM.
 */
UDC_API int udc_add_listed(udc_cache *c, udc_ino dir, const char *name, size_t len,
		   const struct udc_attr *attr, const void *value, size_t value_len,
		   uint32_t ttl_ms, const struct udc_fill *fill);

/*
 * Listings.  A directory filled and completed (above) can be listed from
 * the cache: READDIR of a complete directory needs no store call.
 */
struct udc_dirent {                    /* one name, as udc_readdir() gives it */
	const char *name;              /* @len bytes, not NUL-terminated */
	size_t len;
	struct udc_attr attr;
	const void *value;             /* its value (udc_add_value), NULL if none */
	size_t value_len;
	uint64_t cookie;               /* resumes the listing after this name */
};

/* Called for each name in turn; returns 0 for the next, anything else to
 * stop (udc_readdir() returns it).  It may call udcache. */
typedef int (*udc_readdir_fn)(void *arg, const struct udc_dirent *ent);

/**
 * udc_readdir() - list the names of complete directory @dir after @cookie.
 * @cookie: 0 for the first name; else an ent->cookie given before for
 *          this directory (any such cookie stays good: the listing resumes
 *          after that name, whether or not it still exists).
 * @fn, @arg: called for each name with @arg, in the listing's order,
 *          outside the cache's locks.
 *
 * The order is stable: a name keeps its place for as long as it stays
 * cached (a new answer for it, udc_add of it again, included), and names
 * added later come after every older one.  So a listing read in pieces
 * gives each name that stayed exactly once; a name added or removed
 * meanwhile is given once or not at all, as readdir(3) does.  "." and ".."
 * are not names of the directory here: the embedder adds them.
 *
 * The cache lists a directory only when it holds every name of it: the
 * directory is complete (udc_dir_complete() and its life,
 * udc_config.negative_ttl_ms, not over), every positive cached in it has
 * been told since its first fill began (the names cached before are told
 * again by the fill that completes it), and no answer in it has expired.
 * A listing costs a place (32 bytes, and up to 7 of alignment) in each
 * positive of a directory filled or complete when the positive was
 * cached; a directory never filled costs nothing.
 * Return: 0 when the listing's end was reached; what @fn returned if it
 * stopped it; -ENODATA if the cache cannot list @dir (not complete, never
 * filled, an answer expired or not told since the fill: list the store; a
 * listing that was under way stopped there, and the names given were
 * right when given); -EINVAL (NULL cache or @fn, UDC_INO_NONE).
 */
UDC_API int udc_readdir(udc_cache *c, udc_ino dir, uint64_t cookie, udc_readdir_fn fn, void *arg);

/**
 * udc_shrink() - free about @bytes of cached entries (all if SIZE_MAX).
 *
 * First compacts: entries of sparse pages move to dense ones and the pages
 * go back, with no answer lost; then, if that gave back less than @bytes,
 * evicts entries for the rest.  Waits for the frees (grace periods), so
 * the bytes are given back when it returns.  Works in bounded batches and
 * never blocks lookups.
 * Context: any thread, outside an RCU read-side section of the caller's own.
 * Return: the bytes freed: bytes_used's fall over the call (less what other
 * threads add meanwhile; 0 for a NULL cache).
 */
UDC_API size_t udc_shrink(udc_cache *c, size_t bytes);

/**
 * udc_set_memory_limit() - change cfg->memory_limit (0 = 64 MiB).
 *
 * A limit below udc_stats.bytes_min is refused: the cache's own part, sized
 * at udc_create() from the limit given then (its tables, stripes and ghosts,
 * about 160 KiB from 2 MiB up, and its open pages), would leave no room for
 * entries, and every call would wait for reclaim that cannot free anything
 * (a cache made with 64 MiB and set to 64 KiB took 80 ms an add).  To go
 * lower, make a new cache with the lower limit.
 * Return: 0; -EINVAL (NULL cache, or @bytes below bytes_min); -ENOMEM (a
 * lower limit may need a smaller table of evicted names' fingerprints,
 * which could not be allocated): the limit is then unchanged.
 */
UDC_API int udc_set_memory_limit(udc_cache *c, size_t bytes);

/**
 * udc_thread_offline() - the calling thread goes idle for long.
 * udc_thread_online() - it is back.
 *
 * Optional: a thread holds nothing of @c's between calls (open pages and
 * deferred frees are per CPU, and reclaim reaches them), so a thread that
 * parks or exits without this costs no memory.  Offline hands the pending
 * deferred frees to RCU now.  A thread that is not inside a udcache call
 * never holds up an RCU grace period, so calls between offline and online
 * are allowed (they bring the thread online by themselves).
 */
UDC_API void udc_thread_offline(udc_cache *c);
UDC_API void udc_thread_online(udc_cache *c);

/* Statistics: a consistent-enough snapshot, summed from per-thread counters. */
struct udc_stats {
	size_t   size;                 /* sizeof(struct udc_stats), set by the caller */
	uint64_t lookups;              /* udc_lookup + the name lookups inside resolve/walk */
	uint64_t hits_positive;
	uint64_t hits_negative;
	uint64_t misses;
	uint64_t backend_calls;
	uint64_t nr_positive;          /* entries held now */
	uint64_t nr_negative;
	uint64_t evictions;            /* entries reclaimed, every reason */
	uint64_t bytes_used;           /* every byte the cache holds now, pages, names,
	                                * hash table and metadata included */
	uint64_t bytes_limit;
	/* Extensions (filled when size covers them). */
	uint64_t membarrier;           /* 1: RCU readers use sys_membarrier (fast);
	                                * 0: it is missing, reads cost ~40x more */
	uint64_t nr_dirs;              /* directory objects held now */
	uint64_t stale_answers;        /* backend answers returned but not cached */
	uint64_t walk_retries;         /* walks redone after a rename or rmdir */
	uint64_t entries_moved;        /* entries moved between slab pages by
	                                * compaction (memory given back, answers kept) */
	uint64_t entries_promoted;     /* moved from probation to main: hit before
	                                * the sweeper came */
	uint64_t refaults;             /* names re-created while the ghost of their
	                                * eviction was remembered (they go to main) */
	uint64_t negatives_aged;       /* negatives evicted by negative_max_age_ms */
	uint64_t negatives_declined;   /* negatives not kept: past twice their
	                                * directory's bound (4096 + 8 x its
	                                * positives; past the bound itself the
	                                * directory's oldest unhit negatives go
	                                * instead), or their client's share of
	                                * probation (half of limit / 64; client 0
	                                * has none) */
	uint64_t bytes_slack;          /* the overshoot allowed: bytes_used <=
	                                * bytes_limit + bytes_slack at every moment,
	                                * however many threads call (but while
	                                * udc_set_memory_limit() lowers the limit,
	                                * until its reclaim has made the room)
	                                * (1% of the limit, or 4% of it between
	                                * 16 KiB and 1 MiB, the larger) */
	uint64_t resident_bytes;       /* the entries' pages and the hash tables'
	                                * arrays resident in memory, as jemalloc
	                                * counts them: one arena serves every cache
	                                * of the process, and it gives freed memory
	                                * back to the OS at once (0 in sanitizer
	                                * builds: their memory comes from libc) */
	uint64_t throttled;            /* calls that waited for reclaim (its lock,
	                                * or frees landing): they outran it.  Each
	                                * wait is bounded; a steady count means the
	                                * limit is too small for the load, or the
	                                * reclaim thread is off and the frees of a
	                                * pass take long to land */
	uint64_t bytes_min;            /* the smallest limit udc_set_memory_limit()
	                                * accepts: twice the cache's own part (what
	                                * it held empty, and its open pages at most:
	                                * all sized at udc_create() from its limit),
	                                * or that limit if smaller, and never below
	                                * UDC_MEMORY_MIN (2.8 MiB when made with 64
	                                * MiB on 2 CPUs, 400 KiB with 2 MiB) */
};
#define UDC_STATS_SIZE_V0 (offsetof(struct udc_stats, bytes_limit) + sizeof(uint64_t))

/**
 * udc_stats_get() - fill @st with the cache's statistics.
 * @st: st->size must be set by the caller, to any size from
 *      UDC_STATS_SIZE_V0 (the fields up to bytes_limit) to
 *      sizeof(struct udc_stats): the first st->size bytes are filled, the
 *      rest left as they are.  With a size outside that range, or a NULL
 *      cache, *st is left as it is.
 *
 * Cost: about a microsecond, summing every thread's counters.  A size that
 * covers resident_bytes adds a refresh of jemalloc's statistics, under its
 * own lock: 10-25 us on a 2-core VM.  A caller that polls often (per
 * request) sets st->size to offsetof(struct udc_stats, resident_bytes).
 *
 * Context: any thread; takes no lock that lookups take.
 */
UDC_API void udc_stats_get(udc_cache *c, struct udc_stats *st);

#ifdef __cplusplus
}
#endif

#endif /* UDCACHE_H */
