/* SPDX-License-Identifier: MIT */
/*
 * udcfs - a low-level FUSE 3 passthrough daemon that uses udcache as its
 * name cache.
 *
 *     udcfs [options] BACKING_DIR MOUNTPOINT
 *
 * Every LOOKUP goes through udc_resolve_value(parent st_ino, name); the
 * backend does fstatat() in the backing directory and hands back the
 * struct stat fields FUSE needs as the answer's value, so that a cache hit
 * answers LOOKUP without touching the store.  Every operation that changes
 * a name tells the cache; every operation that changes an object's
 * attributes (its own, or its directory's mtime/ctime/nlink) invalidates
 * every name the daemon knows for it.  See README.md next to this file.
 *
 * Staleness, the rule this file keeps: a cached value never describes an
 * object that changed (atime excepted: reads are not tracked).  The
 * daemon keeps, per backing ino, the names it has put in the cache (or
 * that a backend answer may have put there), and "pending" fetches (a
 * name whose stat is being read and not yet recorded).  An attribute
 * change, after the store call, invalidates the object's names and marks
 * every pending fetch as hit; a hit fetch invalidates its own name once it
 * is recorded, before it leaves the pending list.  So a fetch that read
 * the old attributes is either recorded before the change looks (its name
 * is invalidated) or sees the mark (it invalidates itself).
 *
 * GETATTR is answered from the cache too: a positive answer for one of
 * the object's known names, with its ino, carries its attributes; the
 * cache is not used while a hit fetch is still pending (see fs_getattr's
 * getattr_cached).  Otherwise, and for an object with no known name (the
 * root), GETATTR asks the store.
 *
 * Modelled on libfuse's example/passthrough_ll.c; written for udcache.
 */
#define FUSE_USE_VERSION 35
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif

#include <fuse_lowlevel.h>

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <limits.h>
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/fsuid.h>
#include <sys/stat.h>
#include <sys/statvfs.h>
#include <sys/syscall.h>
#include <sys/time.h>
#include <sys/types.h>
#include <time.h>
#include <unistd.h>

#include "udcache.h"

/* ------------------------------------------------------------------ */
/* The value a positive answer carries: the stat fields FUSE needs.    */

struct udcfs_value {
	uint32_t mode, nlink, uid, gid;
	uint64_t rdev, size, blocks;
	int64_t  atime, mtime, ctime;
	uint32_t atime_ns, mtime_ns, ctime_ns;
	uint32_t blksize;
};
_Static_assert(sizeof(struct udcfs_value) <= UDC_VALUE_MAX, "value too large");

static void value_pack(struct udcfs_value *v, const struct stat *st)
{
	memset(v, 0, sizeof(*v));
	v->mode = st->st_mode;
	v->nlink = (uint32_t)st->st_nlink;
	v->uid = st->st_uid;
	v->gid = st->st_gid;
	v->rdev = st->st_rdev;
	v->size = (uint64_t)st->st_size;
	v->blocks = (uint64_t)st->st_blocks;
	v->atime = st->st_atim.tv_sec;
	v->mtime = st->st_mtim.tv_sec;
	v->ctime = st->st_ctim.tv_sec;
	v->atime_ns = (uint32_t)st->st_atim.tv_nsec;
	v->mtime_ns = (uint32_t)st->st_mtim.tv_nsec;
	v->ctime_ns = (uint32_t)st->st_ctim.tv_nsec;
	v->blksize = (uint32_t)st->st_blksize;
}

static void value_unpack(struct stat *st, const struct udcfs_value *v, uint64_t ino, dev_t dev)
{
	memset(st, 0, sizeof(*st));
	st->st_ino = ino;
	st->st_dev = dev;
	st->st_mode = v->mode;
	st->st_nlink = v->nlink;
	st->st_uid = v->uid;
	st->st_gid = v->gid;
	st->st_rdev = v->rdev;
	st->st_size = (off_t)v->size;
	st->st_blocks = (blkcnt_t)v->blocks;
	st->st_blksize = v->blksize;
	st->st_atim.tv_sec = v->atime;
	st->st_mtim.tv_sec = v->mtime;
	st->st_ctim.tv_sec = v->ctime;
	st->st_atim.tv_nsec = v->atime_ns;
	st->st_mtim.tv_nsec = v->mtime_ns;
	st->st_ctim.tv_nsec = v->ctime_ns;
}

static uint32_t mode_type(mode_t m)
{
	if (S_ISREG(m))
		return UDC_TYPE_REG;
	if (S_ISDIR(m))
		return UDC_TYPE_DIR;
	if (S_ISLNK(m))
		return UDC_TYPE_SYMLINK;
	return UDC_TYPE_OTHER;
}

/* ------------------------------------------------------------------ */
/* Inode objects: one per backing object the kernel knows.             */

struct inode {
	struct inode *next;            /* hash chain */
	int fd;                        /* O_PATH */
	ino_t ino;
	dev_t dev;
	uint64_t nlookup;              /* under fs->itab_lock */
};

/* A name the daemon knows for a backing ino (it may be cached). */
struct name_rec {
	struct name_rec *next;
	uint64_t parent;
	size_t len;
	char name[];
};

struct ino_names {
	struct ino_names *next;
	uint64_t ino;
	struct name_rec *names;
};

/* A fetch (a name's stat being read for the cache) in progress. */
struct pending {
	struct pending *prev, *next;
	bool hit;                      /* an attribute changed meanwhile */
};

/* A name of a listing the cache gave (udc_readdir). */
struct listed {
	char *name;
	uint64_t ino;
	mode_t mode;                   /* its type bits */
};

struct dirh {
	pthread_mutex_t lock;
	DIR *dp;
	off_t offset;                  /* the offset the next call is expected at */
	struct dirent *entry;          /* read, not yet replied */
	bool filling, fill_ok;
	struct udc_fill fill;
	/* A complete directory listed from the cache at offset 0 (listed
	 * mode): offsets are then indices in ".", "..", names. */
	bool listed_mode;
	struct listed *names;
	size_t nr_names, room;
	uint64_t dot_ino, dotdot_ino;
};

#define ITAB_SIZE 4096
#define NTAB_SIZE 4096

struct stats {
	_Atomic uint64_t lookups;            /* FUSE LOOKUPs */
	_Atomic uint64_t store_lookups;      /* name lookups in the store (backend calls / direct) */
	_Atomic uint64_t cache_hits;         /* LOOKUPs answered by the cache (positive or negative) */
	_Atomic uint64_t cache_hits_negative;
	_Atomic uint64_t shared;             /* answers of another thread's backend call */
	_Atomic uint64_t opens_on_hit;       /* O_PATH opens for a hit with no inode object */
	_Atomic uint64_t attr_fetches;       /* GETATTRs that went to the store */
	_Atomic uint64_t attr_cached;        /* GETATTRs answered from a cached value */
	_Atomic uint64_t listed_fetches;     /* READDIRPLUS entries stat'ed */
	_Atomic uint64_t listed_cached;      /* READDIRPLUS entries from a cached value */
	_Atomic uint64_t mutation_fetches;   /* stats after a create/rename for the cache */
	_Atomic uint64_t invalidations;      /* names invalidated for attribute changes */
	_Atomic uint64_t cache_errors;       /* udc_* calls that failed (fell back to invalidate) */
	_Atomic uint64_t fills_complete;
	_Atomic uint64_t fills_failed;
	_Atomic uint64_t listings_cached;    /* directory listings read from the cache */
	_Atomic uint64_t store_listings;     /* READDIR(PLUS) requests the store answered */
	_Atomic uint64_t exchanges;          /* RENAME_EXCHANGEs told to the cache */
	_Atomic uint64_t verify_checks;
	_Atomic uint64_t verify_mismatches;
	_Atomic uint64_t verify_skipped;     /* a change ran during the check */
};

struct fs {
	udc_cache *cache;
	struct udc_backend backend;
	struct inode root;
	dev_t root_dev;

	pthread_mutex_t itab_lock;
	struct inode *itab[ITAB_SIZE];

	pthread_mutex_t names_lock;    /* names table and pending list */
	struct ino_names *ntab[NTAB_SIZE];
	struct pending pending;        /* list head */
	uint64_t pending_hits;         /* listed fetches marked hit */

	/* attribute changes: begun and ended (for --verify's race check) */
	_Atomic uint64_t change_begin, change_end;

	/* options */
	bool no_cache, verify, print_stats;
	unsigned store_delay_us, attr_delay_us, readdir_delay_us;
	double entry_timeout, attr_timeout;
	size_t memory;

	/* the daemon's own supplementary groups (restored after a request) */
	int ngroups;
	gid_t groups[256];

	struct stats st;
};

static struct fs *g_fs;

#define CNT(f) atomic_fetch_add_explicit(&fs->st.f, 1, memory_order_relaxed)

static struct fs *req_fs(fuse_req_t req)
{
	return (struct fs *)fuse_req_userdata(req);
}

static struct inode *get_inode(struct fs *fs, fuse_ino_t nodeid)
{
	if (nodeid == FUSE_ROOT_ID)
		return &fs->root;
	return (struct inode *)(uintptr_t)nodeid;
}

static size_t ihash(uint64_t ino)
{
	return (size_t)((ino * 0x9E3779B97F4A7C15ull) >> 52) % ITAB_SIZE;
}

/* Find the inode object for a backing ino (fs->itab_lock held). */
static struct inode *itab_find_locked(struct fs *fs, uint64_t ino)
{
	if (ino == fs->root.ino)
		return &fs->root;
	for (struct inode *i = fs->itab[ihash(ino)]; i; i = i->next)
		if (i->ino == ino)
			return i;
	return NULL;
}

/* The fd of a backing directory the kernel knows (the backend's parent). */
static int itab_fd(struct fs *fs, uint64_t ino)
{
	pthread_mutex_lock(&fs->itab_lock);
	struct inode *i = itab_find_locked(fs, ino);
	int fd = i ? i->fd : -1;
	pthread_mutex_unlock(&fs->itab_lock);
	return fd;
}

/*
 * Take a lookup reference on the inode object for @st (in @dirfd/@name),
 * making it if needed.  Return it, or NULL with errno set.
 */
static struct inode *inode_ref(struct fs *fs, int dirfd, const char *name,
			       const struct stat *st, bool count_open)
{
	pthread_mutex_lock(&fs->itab_lock);
	struct inode *i = itab_find_locked(fs, st->st_ino);
	if (i) {
		i->nlookup++;
		pthread_mutex_unlock(&fs->itab_lock);
		return i;
	}
	pthread_mutex_unlock(&fs->itab_lock);

	int fd = openat(dirfd, name, O_PATH | O_NOFOLLOW | O_CLOEXEC);
	if (fd < 0)
		return NULL;
	if (count_open)
		CNT(opens_on_hit);
	struct stat chk;
	if (fstatat(fd, "", &chk, AT_EMPTY_PATH | AT_SYMLINK_NOFOLLOW) == 0 &&
	    chk.st_ino != st->st_ino) {
		/* the name was replaced between the stat and the open */
		close(fd);
		errno = ESTALE;
		return NULL;
	}
	struct inode *n = calloc(1, sizeof(*n));
	if (!n) {
		close(fd);
		errno = ENOMEM;
		return NULL;
	}
	n->fd = fd;
	n->ino = st->st_ino;
	n->dev = st->st_dev;
	n->nlookup = 1;

	pthread_mutex_lock(&fs->itab_lock);
	i = itab_find_locked(fs, st->st_ino);
	if (i) {                       /* another thread made it meanwhile */
		i->nlookup++;
		pthread_mutex_unlock(&fs->itab_lock);
		close(fd);
		free(n);
		return i;
	}
	size_t h = ihash(n->ino);
	n->next = fs->itab[h];
	fs->itab[h] = n;
	pthread_mutex_unlock(&fs->itab_lock);
	return n;
}

static void inode_unref(struct fs *fs, struct inode *i, uint64_t n)
{
	if (i == &fs->root)
		return;
	pthread_mutex_lock(&fs->itab_lock);
	if (i->nlookup < n) {
		fprintf(stderr, "udcfs: forget of %" PRIu64 " > nlookup %" PRIu64 "\n", n, i->nlookup);
		n = i->nlookup;
	}
	i->nlookup -= n;
	if (i->nlookup == 0) {
		struct inode **pp = &fs->itab[ihash(i->ino)];
		while (*pp && *pp != i)
			pp = &(*pp)->next;
		if (*pp)
			*pp = i->next;
		pthread_mutex_unlock(&fs->itab_lock);
		close(i->fd);
		free(i);
		return;
	}
	pthread_mutex_unlock(&fs->itab_lock);
}

/* ------------------------------------------------------------------ */
/* Known names and pending fetches.                                    */

static size_t nhash(uint64_t ino)
{
	return (size_t)((ino * 0x9E3779B97F4A7C15ull) >> 50) % NTAB_SIZE;
}

static void names_add(struct fs *fs, uint64_t ino, uint64_t parent, const char *name, size_t len)
{
	if (fs->no_cache)
		return;
	struct ino_names **pp = &fs->ntab[nhash(ino)], *in;
	pthread_mutex_lock(&fs->names_lock);
	for (in = *pp; in; in = in->next)
		if (in->ino == ino)
			break;
	if (!in) {
		in = calloc(1, sizeof(*in));
		if (!in)
			goto oom;
		in->ino = ino;
		in->next = *pp;
		*pp = in;
	}
	for (struct name_rec *r = in->names; r; r = r->next)
		if (r->parent == parent && r->len == len && memcmp(r->name, name, len) == 0) {
			pthread_mutex_unlock(&fs->names_lock);
			return;
		}
	struct name_rec *r = malloc(sizeof(*r) + len);
	if (!r)
		goto oom;
	r->parent = parent;
	r->len = len;
	memcpy(r->name, name, len);
	r->next = in->names;
	in->names = r;
	pthread_mutex_unlock(&fs->names_lock);
	return;
oom:
	pthread_mutex_unlock(&fs->names_lock);
	/* Without a record the name could go stale unseen: do not cache it. */
	udc_invalidate(fs->cache, parent, name, len);
	udc_invalidate_dir(fs->cache, parent);
}

static void names_del(struct fs *fs, uint64_t ino, uint64_t parent, const char *name, size_t len)
{
	if (fs->no_cache || ino == 0)
		return;
	struct ino_names **pp = &fs->ntab[nhash(ino)], *in;
	pthread_mutex_lock(&fs->names_lock);
	for (; (in = *pp); pp = &in->next)
		if (in->ino == ino)
			break;
	if (in) {
		for (struct name_rec **rp = &in->names, *r; (r = *rp); rp = &r->next)
			if (r->parent == parent && r->len == len && memcmp(r->name, name, len) == 0) {
				*rp = r->next;
				free(r);
				break;
			}
		if (!in->names) {
			*pp = in->next;
			free(in);
		}
	}
	pthread_mutex_unlock(&fs->names_lock);
}

static void pending_begin(struct fs *fs, struct pending *p)
{
	p->hit = false;
	pthread_mutex_lock(&fs->names_lock);
	p->next = fs->pending.next;
	p->prev = &fs->pending;
	p->next->prev = p;
	fs->pending.next = p;
	pthread_mutex_unlock(&fs->names_lock);
}

static void pending_unlink_locked(struct fs *fs, struct pending *p)
{
	if (p->hit)
		fs->pending_hits--;
	p->prev->next = p->next;
	p->next->prev = p->prev;
}

/*
 * The fetch @p of (@dir, @name) is over (its answer recorded, or nothing
 * to record: @name NULL).  Returns true if an attribute changed while it
 * was pending; then its name has been invalidated *before* @p left the
 * pending list, so that while a stale answer may be in the cache, a hit
 * fetch is still listed (GETATTR relies on it: see fs_getattr).
 */
static bool pending_end(struct fs *fs, struct pending *p, uint64_t dir,
			const char *name, size_t len)
{
	pthread_mutex_lock(&fs->names_lock);
	bool hit = p->hit;
	if (!hit || !name) {
		pending_unlink_locked(fs, p);
		pthread_mutex_unlock(&fs->names_lock);
		return hit;
	}
	pthread_mutex_unlock(&fs->names_lock);
	udc_invalidate(fs->cache, dir, name, len);   /* this answer is not cached */
	pthread_mutex_lock(&fs->names_lock);
	pending_unlink_locked(fs, p);
	pthread_mutex_unlock(&fs->names_lock);
	return hit;
}

/* An operation that changes attributes is about to call the store. */
static void change_begin(struct fs *fs)
{
	atomic_fetch_add(&fs->change_begin, 1);
}

/*
 * The store call of an attribute change returned: forget every known name
 * of each of @inos (0s skipped) and mark every pending fetch.
 */
static void change_end(struct fs *fs, const uint64_t *inos, int n)
{
	if (!fs->no_cache) {
		struct inv { uint64_t parent; size_t len; char name[NAME_MAX + 1]; };
		struct inv stackbuf[8], *buf = stackbuf;
		size_t cap = 8, cnt = 0;
		bool overflow = false;

		pthread_mutex_lock(&fs->names_lock);
		for (struct pending *p = fs->pending.next; p != &fs->pending; p = p->next)
			if (!p->hit) {
				p->hit = true;
				fs->pending_hits++;
			}
		for (int k = 0; k < n; k++) {
			if (!inos[k])
				continue;
			for (struct ino_names *in = fs->ntab[nhash(inos[k])]; in; in = in->next) {
				if (in->ino != inos[k])
					continue;
				for (struct name_rec *r = in->names; r; r = r->next) {
					if (cnt == cap) {
						size_t ncap = cap * 2;
						struct inv *nb = malloc(ncap * sizeof(*nb));
						if (!nb) {
							overflow = true;
							break;
						}
						memcpy(nb, buf, cnt * sizeof(*nb));
						if (buf != stackbuf)
							free(buf);
						buf = nb;
						cap = ncap;
					}
					buf[cnt].parent = r->parent;
					buf[cnt].len = r->len;
					memcpy(buf[cnt].name, r->name, r->len);
					cnt++;
				}
			}
		}
		pthread_mutex_unlock(&fs->names_lock);
		for (size_t k = 0; k < cnt; k++) {
			udc_invalidate(fs->cache, buf[k].parent, buf[k].name, buf[k].len);
			CNT(invalidations);
		}
		if (buf != stackbuf)
			free(buf);
		if (overflow) {
			/* Could not list the names: forget everything. */
			CNT(cache_errors);
			udc_shrink(fs->cache, SIZE_MAX);
		}
	}
	atomic_fetch_add(&fs->change_end, 1);
}

#define CHANGE_END(fs, ...) do { \
	const uint64_t inos_[] = { __VA_ARGS__ }; \
	change_end(fs, inos_, (int)(sizeof(inos_) / sizeof(inos_[0]))); \
} while (0)

/* ------------------------------------------------------------------ */
/* Credentials: requests run with the caller's fsuid, fsgid, groups.   */

static void creds_enter(fuse_req_t req)
{
	const struct fuse_ctx *ctx = fuse_req_ctx(req);
	if (ctx->uid != 0) {
		gid_t groups[256];
		int n = fuse_req_getgroups(req, 256, groups);
		if (n >= 0 && n <= 256)
			syscall(SYS_setgroups, (size_t)n, groups);
	}
	setfsgid(ctx->gid);
	setfsuid(ctx->uid);
}

static void creds_leave(fuse_req_t req)
{
	const struct fuse_ctx *ctx = fuse_req_ctx(req);
	setfsuid(0);
	setfsgid(0);
	if (ctx->uid != 0)
		syscall(SYS_setgroups, (size_t)g_fs->ngroups, g_fs->groups);
}

/* ------------------------------------------------------------------ */
/* The store.                                                          */

static void sleep_us(unsigned us)
{
	if (us) {
		struct timespec ts = { us / 1000000, (long)(us % 1000000) * 1000 };
		while (nanosleep(&ts, &ts) < 0 && errno == EINTR)
			;
	}
}

static int store_stat(int dirfd, const char *name, struct stat *st)
{
	return fstatat(dirfd, name, st, AT_SYMLINK_NOFOLLOW) < 0 ? -errno : 0;
}

/* udcache's backend: one name's stat, with the value. */
static int backend_lookup_value(void *ctx, udc_ino dir, const char *name, size_t len,
				struct udc_attr *out, void *value, size_t *value_len,
				uint32_t *ttl_ms)
{
	struct fs *fs = ctx;
	char nm[NAME_MAX + 1];
	(void)ttl_ms;
	if (len > NAME_MAX)
		return -ENAMETOOLONG;
	memcpy(nm, name, len);
	nm[len] = '\0';
	int dfd = itab_fd(fs, dir);
	if (dfd < 0)
		return -ESTALE;        /* not cached */

	struct pending p;
	pending_begin(fs, &p);
	sleep_us(fs->store_delay_us);
	struct stat st;
	int r = store_stat(dfd, nm, &st);
	CNT(store_lookups);
	if (r == 0)
		names_add(fs, st.st_ino, dir, name, len);
	pending_end(fs, &p, dir, name, len);   /* hit: invalidated, so not cached */
	if (r < 0)
		return r;
	if (st.st_ino == 0)
		return -EIO;
	out->ino = st.st_ino;
	out->type = mode_type(st.st_mode);
	out->flags = 0;
	out->cookie = 0;
	struct udcfs_value v;
	value_pack(&v, &st);
	memcpy(value, &v, sizeof(v));
	*value_len = sizeof(v);
	return 0;
}

static void fill_attr(struct udc_attr *a, const struct stat *st)
{
	a->ino = st->st_ino;
	a->type = mode_type(st->st_mode);
	a->flags = 0;
	a->cookie = 0;
}

/*
 * After a mutation created (or moved) @name in @dir: stat it and cache the
 * answer with its value.  Returns the stat in *st.
 */
static int fetch_add(struct fs *fs, uint64_t dir, int dfd, const char *name, struct stat *st)
{
	size_t len = strlen(name);
	struct pending p;
	if (!fs->no_cache)
		pending_begin(fs, &p);
	int r = store_stat(dfd, name, st);
	if (fs->no_cache)
		return r;
	CNT(mutation_fetches);
	if (r == 0) {
		names_add(fs, st->st_ino, dir, name, len);
		struct udc_attr a;
		struct udcfs_value v;
		fill_attr(&a, st);
		value_pack(&v, st);
		if (udc_add_value(fs->cache, dir, name, len, &a, &v, sizeof(v), 0) < 0) {
			CNT(cache_errors);
			udc_invalidate(fs->cache, dir, name, len);
		}
	} else {
		udc_invalidate(fs->cache, dir, name, len);
	}
	pending_end(fs, &p, dir, name, len);
	return r;
}

/* ------------------------------------------------------------------ */
/* Verification (--verify): every cache answer against a direct stat.  */

static bool verify_same(const struct stat *a, const struct stat *b)
{
	return a->st_ino == b->st_ino && a->st_mode == b->st_mode &&
	       a->st_nlink == b->st_nlink && a->st_uid == b->st_uid &&
	       a->st_gid == b->st_gid && a->st_rdev == b->st_rdev &&
	       a->st_size == b->st_size &&
	       a->st_mtim.tv_sec == b->st_mtim.tv_sec && a->st_mtim.tv_nsec == b->st_mtim.tv_nsec &&
	       a->st_ctim.tv_sec == b->st_ctim.tv_sec && a->st_ctim.tv_nsec == b->st_ctim.tv_nsec;
}

/*
 * Compare a cache answer (@r: 0 with *@cached, or -ENOENT) for @name in
 * @dir with the store's (@d: 0 with *@st, or -errno), read after it; count
 * and print a mismatch.  b1, e1: change_begin and change_end read before
 * the cache was asked; an attribute change begun or running meanwhile
 * makes the check meaningless (skipped).
 */
static void verify_compare(struct fs *fs, uint64_t dir, const char *name, int r,
			   const struct stat *cached, int d, const struct stat *st_,
			   uint64_t b1, uint64_t e1)
{
	const struct stat st = *st_;
	uint64_t b2 = atomic_load(&fs->change_begin);
	if (b1 != e1 || b2 != b1) {
		CNT(verify_skipped);
		return;
	}
	CNT(verify_checks);
	bool bad;
	if (r == -ENOENT)
		bad = d != -ENOENT;
	else
		bad = d != 0 || !verify_same(cached, &st);
	if (!bad)
		return;
	CNT(verify_mismatches);
	if (r == -ENOENT)
		fprintf(stderr, "udcfs: VERIFY MISMATCH dir %" PRIu64 " name '%s': cache says ENOENT, store says %d\n",
			dir, name, d);
	else if (d)
		fprintf(stderr, "udcfs: VERIFY MISMATCH dir %" PRIu64 " name '%s': cache says ino %lu, store says %d\n",
			dir, name, (unsigned long)cached->st_ino, d);
	else
		fprintf(stderr, "udcfs: VERIFY MISMATCH dir %" PRIu64 " name '%s': cache ino %lu mode %o nlink %lu uid %u gid %u size %ld mtime %ld.%09ld ctime %ld.%09ld; "
			"store ino %lu mode %o nlink %lu uid %u gid %u size %ld mtime %ld.%09ld ctime %ld.%09ld\n",
			dir, name,
			(unsigned long)cached->st_ino, cached->st_mode, (unsigned long)cached->st_nlink,
			cached->st_uid, cached->st_gid, (long)cached->st_size,
			(long)cached->st_mtim.tv_sec, cached->st_mtim.tv_nsec,
			(long)cached->st_ctim.tv_sec, cached->st_ctim.tv_nsec,
			(unsigned long)st.st_ino, st.st_mode, (unsigned long)st.st_nlink,
			st.st_uid, st.st_gid, (long)st.st_size,
			(long)st.st_mtim.tv_sec, st.st_mtim.tv_nsec,
			(long)st.st_ctim.tv_sec, st.st_ctim.tv_nsec);
}

static void verify_answer(struct fs *fs, int dfd, uint64_t dir, const char *name,
			  int r, const struct stat *cached, uint64_t b1, uint64_t e1)
{
	struct stat st;
	memset(&st, 0, sizeof(st));
	int d = store_stat(dfd, name, &st);
	verify_compare(fs, dir, name, r, cached, d, &st, b1, e1);
}

/* ------------------------------------------------------------------ */
/* FUSE operations.                                                    */

static void fs_init(void *userdata, struct fuse_conn_info *conn)
{
	(void)userdata;
	if (conn->capable & FUSE_CAP_EXPORT_SUPPORT)
		conn->want &= ~FUSE_CAP_EXPORT_SUPPORT;
	/* READDIRPLUS always (it is what fills complete directories). */
	conn->want &= ~FUSE_CAP_READDIRPLUS_AUTO;
	/* No writeback cache: every write reaches the daemon. */
	conn->want &= ~FUSE_CAP_WRITEBACK_CACHE;
	/* Writes and truncates run with the caller's fsuid on the backing
	 * file system, which clears setuid/setgid itself: the kernel must not
	 * send a SETATTR for it (as the caller, a chmod it may not do). */
	if (conn->capable & FUSE_CAP_HANDLE_KILLPRIV)
		conn->want |= FUSE_CAP_HANDLE_KILLPRIV;
}

static void reply_entry(fuse_req_t req, struct fs *fs, struct inode *i, const struct stat *st)
{
	struct fuse_entry_param e;
	memset(&e, 0, sizeof(e));
	e.ino = (uintptr_t)i;
	e.attr = *st;
	e.attr_timeout = fs->attr_timeout;
	e.entry_timeout = fs->entry_timeout;
	if (fuse_reply_entry(req, &e) == -ENOENT)
		inode_unref(fs, i, 1);   /* the kernel did not take it (interrupted) */
}

static void fs_lookup(fuse_req_t req, fuse_ino_t parent, const char *name)
{
	struct fs *fs = req_fs(req);
	struct inode *dir = get_inode(fs, parent);
	size_t len = strlen(name);
	struct stat st;
	int r;
	bool hit = false;

	CNT(lookups);
	if (len > NAME_MAX) {
		fuse_reply_err(req, ENAMETOOLONG);
		return;
	}
	creds_enter(req);
	if (fs->no_cache || strcmp(name, ".") == 0 || strcmp(name, "..") == 0) {
		sleep_us(fs->store_delay_us);
		r = store_stat(dir->fd, name, &st);
		CNT(store_lookups);
	} else {
		uint64_t e1 = atomic_load(&fs->change_end);
		uint64_t b1 = atomic_load(&fs->change_begin);
		struct udc_call call = { .ctx = fs, .client = 0 };
		struct udc_attr a;
		struct udcfs_value v;
		size_t vlen = sizeof(v);
		unsigned source = 0;
		r = udc_resolve_value(fs->cache, dir->ino, name, len, &call, &a, &v, &vlen, &source);
		if (r == 0 && vlen != sizeof(v)) {
			/* no value (should not happen): ask the store */
			CNT(cache_errors);
			udc_invalidate(fs->cache, dir->ino, name, len);
			r = store_stat(dir->fd, name, &st);
			CNT(store_lookups);
		} else {
			if (r == 0)
				value_unpack(&st, &v, a.ino, fs->root_dev);
			if (r == 0 || r == -ENOENT) {
				if (source == UDC_FROM_CACHE) {
					hit = true;
					CNT(cache_hits);
					if (r == -ENOENT)
						CNT(cache_hits_negative);
				} else if (source == UDC_FROM_SHARED) {
					CNT(shared);
				}
				if (fs->verify && source == UDC_FROM_CACHE)
					verify_answer(fs, dir->fd, dir->ino, name, r, &st, b1, e1);
			} else if (r == -ESTALE || r == -EIO || r == -ENOMEM || r == -EDEADLK) {
				CNT(cache_errors);
				r = store_stat(dir->fd, name, &st);
				CNT(store_lookups);
			}
		}
	}
	if (r < 0) {
		creds_leave(req);
		fuse_reply_err(req, -r);
		return;
	}
	struct inode *i = inode_ref(fs, dir->fd, name, &st, hit);
	int err = errno;
	creds_leave(req);
	if (!i) {
		if (!fs->no_cache)
			udc_invalidate(fs->cache, dir->ino, name, len);
		fuse_reply_err(req, err == ESTALE ? ENOENT : err);
		return;
	}
	reply_entry(req, fs, i, &st);
}

/* The end of every creating operation: cache the new name, reply. */
static void created(fuse_req_t req, struct fs *fs, struct inode *dir, const char *name,
		    struct fuse_file_info *fi, int fd, uint64_t linked)
{
	struct stat st;
	/* The directory (mtime, ctime, nlink) changed, and a link's target
	 * (nlink, ctime): forget their names, then cache the new one. */
	CHANGE_END(fs, dir->ino, linked);
	int r = fetch_add(fs, dir->ino, dir->fd, name, &st);
	struct inode *i = NULL;
	if (r == 0) {
		i = inode_ref(fs, dir->fd, name, &st, false);
		if (!i)
			r = -errno;
	}
	creds_leave(req);
	if (r < 0) {
		if (fd >= 0)
			close(fd);
		fuse_reply_err(req, -r);
		return;
	}
	struct fuse_entry_param e;
	memset(&e, 0, sizeof(e));
	e.ino = (uintptr_t)i;
	e.attr = st;
	e.attr_timeout = fs->attr_timeout;
	e.entry_timeout = fs->entry_timeout;
	if (fi) {
		fi->fh = (uint64_t)fd;
		if (fuse_reply_create(req, &e, fi) == -ENOENT) {
			close(fd);
			inode_unref(fs, i, 1);
		}
	} else if (fuse_reply_entry(req, &e) == -ENOENT) {
		inode_unref(fs, i, 1);
	}
}

static void fs_mknod_common(fuse_req_t req, fuse_ino_t parent, const char *name,
			    mode_t mode, dev_t rdev, const char *link)
{
	struct fs *fs = req_fs(req);
	struct inode *dir = get_inode(fs, parent);
	int r;
	creds_enter(req);
	change_begin(fs);
	if (link)
		r = symlinkat(link, dir->fd, name);
	else if (S_ISDIR(mode))
		r = mkdirat(dir->fd, name, mode);
	else
		r = mknodat(dir->fd, name, mode, rdev);
	if (r < 0) {
		int err = errno;
		CHANGE_END(fs, 0);
		creds_leave(req);
		fuse_reply_err(req, err);
		return;
	}
	created(req, fs, dir, name, NULL, -1, 0);
}

static void fs_mknod(fuse_req_t req, fuse_ino_t parent, const char *name, mode_t mode, dev_t rdev)
{
	fs_mknod_common(req, parent, name, mode, rdev, NULL);
}

static void fs_mkdir(fuse_req_t req, fuse_ino_t parent, const char *name, mode_t mode)
{
	fs_mknod_common(req, parent, name, S_IFDIR | mode, 0, NULL);
}

static void fs_symlink(fuse_req_t req, const char *link, fuse_ino_t parent, const char *name)
{
	fs_mknod_common(req, parent, name, S_IFLNK, 0, link);
}

static void fs_create(fuse_req_t req, fuse_ino_t parent, const char *name, mode_t mode,
		      struct fuse_file_info *fi)
{
	struct fs *fs = req_fs(req);
	struct inode *dir = get_inode(fs, parent);
	creds_enter(req);
	change_begin(fs);
	int fd = openat(dir->fd, name, (fi->flags | O_CREAT) & ~O_NOFOLLOW, mode);
	if (fd < 0) {
		int err = errno;
		CHANGE_END(fs, 0);
		creds_leave(req);
		fuse_reply_err(req, err);
		return;
	}
	created(req, fs, dir, name, fi, fd, 0);
}

static void fs_link(fuse_req_t req, fuse_ino_t ino, fuse_ino_t parent, const char *name)
{
	struct fs *fs = req_fs(req);
	struct inode *i = get_inode(fs, ino);
	struct inode *dir = get_inode(fs, parent);
	char path[64];
	creds_enter(req);
	change_begin(fs);
	snprintf(path, sizeof(path), "/proc/self/fd/%d", i->fd);
	int r = linkat(AT_FDCWD, path, dir->fd, name, AT_SYMLINK_FOLLOW);
	if (r < 0) {
		int err = errno;
		CHANGE_END(fs, 0);
		creds_leave(req);
		fuse_reply_err(req, err);
		return;
	}
	created(req, fs, dir, name, NULL, -1, i->ino);
}

static int stat_victim(int dfd, const char *name, struct stat *st)
{
	if (fstatat(dfd, name, st, AT_SYMLINK_NOFOLLOW) < 0) {
		st->st_ino = 0;
		st->st_mode = 0;
		return -errno;
	}
	return 0;
}

static void fs_unlink(fuse_req_t req, fuse_ino_t parent, const char *name)
{
	struct fs *fs = req_fs(req);
	struct inode *dir = get_inode(fs, parent);
	size_t len = strlen(name);
	struct stat vst;
	creds_enter(req);
	stat_victim(dir->fd, name, &vst);
	change_begin(fs);
	int r = unlinkat(dir->fd, name, 0);
	int err = errno;
	if (r == 0 && !fs->no_cache) {
		udc_remove(fs->cache, dir->ino, name, len);
		names_del(fs, vst.st_ino, dir->ino, name, len);
	}
	CHANGE_END(fs, r == 0 ? dir->ino : 0, r == 0 ? (uint64_t)vst.st_ino : 0);
	creds_leave(req);
	fuse_reply_err(req, r == 0 ? 0 : err);
}

static void fs_rmdir(fuse_req_t req, fuse_ino_t parent, const char *name)
{
	struct fs *fs = req_fs(req);
	struct inode *dir = get_inode(fs, parent);
	size_t len = strlen(name);
	struct stat vst;
	creds_enter(req);
	stat_victim(dir->fd, name, &vst);
	change_begin(fs);
	int r = unlinkat(dir->fd, name, AT_REMOVEDIR);
	int err = errno;
	if (r == 0 && !fs->no_cache) {
		if (udc_rmdir(fs->cache, dir->ino, name, len, S_ISDIR(vst.st_mode) ? vst.st_ino : UDC_INO_NONE) < 0) {
			CNT(cache_errors);
			udc_invalidate(fs->cache, dir->ino, name, len);
			if (S_ISDIR(vst.st_mode))
				udc_invalidate_dir(fs->cache, vst.st_ino);
		}
		names_del(fs, vst.st_ino, dir->ino, name, len);
	}
	CHANGE_END(fs, r == 0 ? dir->ino : 0, r == 0 ? (uint64_t)vst.st_ino : 0);
	creds_leave(req);
	fuse_reply_err(req, r == 0 ? 0 : err);
}

static void fs_rename(fuse_req_t req, fuse_ino_t parent, const char *name,
		      fuse_ino_t newparent, const char *newname, unsigned int flags)
{
	struct fs *fs = req_fs(req);
	struct inode *od = get_inode(fs, parent), *nd = get_inode(fs, newparent);
	size_t olen = strlen(name), nlen = strlen(newname);
	struct stat ost, nst;
	creds_enter(req);
	stat_victim(od->fd, name, &ost);
	stat_victim(nd->fd, newname, &nst);
	change_begin(fs);
	int r = renameat2(od->fd, name, nd->fd, newname, flags);
	int err = errno;
	if (r < 0) {
		CHANGE_END(fs, 0);
		creds_leave(req);
		fuse_reply_err(req, err);
		return;
	}
	bool same = ost.st_ino && ost.st_ino == nst.st_ino;
	if (!fs->no_cache && same) {
		/* Two links of one object: rename(2) does nothing, both stay. */
	} else if (!fs->no_cache) {
		if (flags & RENAME_EXCHANGE) {
			CNT(exchanges);
			/* udc_exchange moves each answer and the exchanged
			 * directories' ".." (invalidating the two names alone
			 * left a directory's ".." naming its old parent) */
			if (udc_exchange(fs->cache, od->ino, name, olen, nd->ino, newname, nlen) < 0) {
				CNT(cache_errors);
				udc_invalidate(fs->cache, od->ino, name, olen);
				udc_invalidate(fs->cache, nd->ino, newname, nlen);
				if (ost.st_ino)
					udc_invalidate(fs->cache, ost.st_ino, "..", 2);
				if (nst.st_ino)
					udc_invalidate(fs->cache, nst.st_ino, "..", 2);
			}
			names_del(fs, ost.st_ino, od->ino, name, olen);
			names_del(fs, nst.st_ino, nd->ino, newname, nlen);
			names_add(fs, ost.st_ino, nd->ino, newname, nlen);
			names_add(fs, nst.st_ino, od->ino, name, olen);
		} else {
			if (udc_rename(fs->cache, od->ino, name, olen, nd->ino, newname, nlen,
				       ost.st_ino ? ost.st_ino : UDC_INO_NONE) < 0) {
				CNT(cache_errors);
				udc_invalidate(fs->cache, od->ino, name, olen);
				udc_invalidate(fs->cache, nd->ino, newname, nlen);
				if (S_ISDIR(ost.st_mode)) {
					udc_invalidate_dir(fs->cache, od->ino);
					udc_invalidate_dir(fs->cache, nd->ino);
				}
			}
			if (nst.st_ino && S_ISDIR(nst.st_mode) && nst.st_ino != ost.st_ino)
				udc_invalidate_dir(fs->cache, nst.st_ino);   /* replaced: removed */
			names_del(fs, ost.st_ino, od->ino, name, olen);
			if (nst.st_ino != ost.st_ino)
				names_del(fs, nst.st_ino, nd->ino, newname, nlen);
			names_add(fs, ost.st_ino, nd->ino, newname, nlen);
			if (flags & RENAME_WHITEOUT)   /* a whiteout took the old name */
				udc_invalidate(fs->cache, od->ino, name, olen);
		}
	}
	/* Both directories (mtime, nlink), the moved object (ctime) and the
	 * replaced one (nlink, ctime) changed. */
	CHANGE_END(fs, od->ino, nd->ino, (uint64_t)ost.st_ino, (uint64_t)nst.st_ino);
	if (!fs->no_cache && !same && !(flags & RENAME_EXCHANGE)) {
		/* Refresh the moved name's value (its ctime changed). */
		struct stat st;
		fetch_add(fs, nd->ino, nd->fd, newname, &st);
	}
	creds_leave(req);
	fuse_reply_err(req, 0);
}

static void fs_forget(fuse_req_t req, fuse_ino_t ino, uint64_t nlookup)
{
	struct fs *fs = req_fs(req);
	inode_unref(fs, get_inode(fs, ino), nlookup);
	fuse_reply_none(req);
}

static void fs_forget_multi(fuse_req_t req, size_t count, struct fuse_forget_data *forgets)
{
	struct fs *fs = req_fs(req);
	for (size_t k = 0; k < count; k++)
		inode_unref(fs, get_inode(fs, forgets[k].ino), forgets[k].nlookup);
	fuse_reply_none(req);
}

#define GETATTR_NAMES 8                /* known names tried, at most */

/*
 * GETATTR from a cached value: a positive answer for one of the object's
 * known names, with its ino, carries attributes as fresh as LOOKUP's.
 * Returns true and fills *st, or false (then ask the store).
 *
 * Why the value is not older than a change that completed (replied)
 * before this GETATTR began: that change's change_end, before its reply,
 * (a) invalidated every name recorded for the object and (b) marked every
 * fetch then pending.  Every value is put in the cache by a fetch (the
 * backend, fetch_add, READDIRPLUS), each inside pending_begin/pending_end
 * with its name recorded before it ends (a rename only moves a value,
 * and its own change_end then invalidates it).  A value in the cache for
 * one of the object's names after (a) was therefore stored by a fetch
 * pending at (b), or by one that began after (b).  A fetch that began after (b)
 * read the store after the change (its stat follows pending_begin):
 * fresh.  A fetch pending at (b) is hit; pending_end invalidates its name
 * before it leaves the pending list (a backend answer so invalidated is
 * never cached at all).  So a stale value can be visible only while a
 * hit fetch is listed, and we do not use the cache then (pending_hits,
 * read under names_lock together with the names).  A fetch not yet hit
 * when we look and hit afterwards is marked by a change that had not
 * completed when we looked: concurrent with this GETATTR, which may
 * answer either side of it.  Values are never moved to another object:
 * the ino must match, and an inode object's O_PATH fd keeps its ino from
 * being reused.
 */
/* (dir, name)'s cached value as a stat, if it is a positive answer for
 * @ino with a value of ours. */
static bool cached_stat(struct fs *fs, uint64_t dir, const char *name, size_t len, uint64_t ino,
			struct stat *st)
{
	struct udc_attr a;
	struct udcfs_value v;
	size_t vlen = sizeof(v);
	int r = udc_lookup_value(fs->cache, dir, name, len, &a, &v, &vlen);

	if (r != UDC_POSITIVE || a.ino != ino || vlen != sizeof(v))
		return false;
	value_unpack(st, &v, a.ino, fs->root_dev);
	return true;
}

static bool getattr_cached(struct fs *fs, struct inode *i, struct stat *st,
			   uint64_t *dir_out, char *name_out)
{
	struct { uint64_t parent; size_t len; char name[NAME_MAX + 1]; } nm[GETATTR_NAMES];
	int n = 0;

	pthread_mutex_lock(&fs->names_lock);
	if (fs->pending_hits == 0) {
		for (struct ino_names *in = fs->ntab[nhash(i->ino)]; in; in = in->next) {
			if (in->ino != i->ino)
				continue;
			for (struct name_rec *r = in->names; r && n < GETATTR_NAMES; r = r->next) {
				nm[n].parent = r->parent;
				nm[n].len = r->len;
				memcpy(nm[n].name, r->name, r->len);
				nm[n].name[r->len] = '\0';
				n++;
			}
			break;
		}
	}
	pthread_mutex_unlock(&fs->names_lock);

	for (int k = 0; k < n; k++) {
		if (cached_stat(fs, nm[k].parent, nm[k].name, nm[k].len, i->ino, st)) {
			*dir_out = nm[k].parent;
			memcpy(name_out, nm[k].name, nm[k].len + 1);
			return true;
		}
	}
	return false;
}

/*
 * A READDIRPLUS entry's attributes from the name's cached value, as a
 * LOOKUP hit would give them: the listing's ino must match, and, as in
 * getattr_cached (whose argument this follows), not while a hit fetch is
 * listed.  The name is already cached, so the fill needs no add for it.
 */
static bool listed_cached(struct fs *fs, uint64_t dir, const char *name, size_t len,
			  uint64_t ino, struct stat *st)
{
	pthread_mutex_lock(&fs->names_lock);
	bool quiet = fs->pending_hits == 0;
	pthread_mutex_unlock(&fs->names_lock);
	return quiet && cached_stat(fs, dir, name, len, ino, st);
}

static void fs_getattr(fuse_req_t req, fuse_ino_t ino, struct fuse_file_info *fi)
{
	struct fs *fs = req_fs(req);
	struct inode *i = get_inode(fs, ino);
	struct stat st;
	(void)fi;
	if (!fs->no_cache) {
		uint64_t e1 = atomic_load(&fs->change_end);
		uint64_t b1 = atomic_load(&fs->change_begin);
		uint64_t dir;
		char name[NAME_MAX + 1];
		if (getattr_cached(fs, i, &st, &dir, name)) {
			CNT(attr_cached);
			if (fs->verify) {
				struct stat dst;
				memset(&dst, 0, sizeof(dst));
				int d = fstatat(i->fd, "", &dst, AT_EMPTY_PATH | AT_SYMLINK_NOFOLLOW) < 0 ? -errno : 0;
				verify_compare(fs, dir, name, 0, &st, d, &dst, b1, e1);
			}
			fuse_reply_attr(req, &st, fs->attr_timeout);
			return;
		}
	}
	sleep_us(fs->attr_delay_us);
	CNT(attr_fetches);
	if (fstatat(i->fd, "", &st, AT_EMPTY_PATH | AT_SYMLINK_NOFOLLOW) < 0) {
		fuse_reply_err(req, errno);
		return;
	}
	fuse_reply_attr(req, &st, fs->attr_timeout);
}

static void fs_setattr(fuse_req_t req, fuse_ino_t ino, struct stat *attr, int valid,
		       struct fuse_file_info *fi)
{
	struct fs *fs = req_fs(req);
	struct inode *i = get_inode(fs, ino);
	char path[64];
	int r = 0;
	snprintf(path, sizeof(path), "/proc/self/fd/%d", i->fd);
	creds_enter(req);
	change_begin(fs);
	if (valid & FUSE_SET_ATTR_MODE) {
		/* A write or truncate by someone other than the owner makes the
		 * kernel clear setuid/setgid with a SETATTR in the caller's
		 * name, which the owner check of chmod(2) refuses: a change that
		 * only clears those bits is done as the daemon. */
		struct stat cur;
		bool kill = false;
		const struct fuse_ctx *ctx = fuse_req_ctx(req);
		if (fstatat(i->fd, "", &cur, AT_EMPTY_PATH | AT_SYMLINK_NOFOLLOW) == 0 &&
		    ctx->uid != cur.st_uid && (cur.st_mode & (S_ISUID | S_ISGID)) &&
		    (attr->st_mode & 07777) == (cur.st_mode & 07777 & ~(mode_t)(S_ISUID | S_ISGID)))
			kill = true;
		if (kill) {
			setfsuid(0);
			setfsgid(0);
		}
		r = fi ? fchmod((int)fi->fh, attr->st_mode) : chmod(path, attr->st_mode);
		if (kill) {
			int e = errno;
			setfsgid(ctx->gid);
			setfsuid(ctx->uid);
			errno = e;
		}
		if (r < 0)
			goto out;
	}
	if (valid & (FUSE_SET_ATTR_UID | FUSE_SET_ATTR_GID)) {
		uid_t uid = (valid & FUSE_SET_ATTR_UID) ? attr->st_uid : (uid_t)-1;
		gid_t gid = (valid & FUSE_SET_ATTR_GID) ? attr->st_gid : (gid_t)-1;
		r = fchownat(i->fd, "", uid, gid, AT_EMPTY_PATH | AT_SYMLINK_NOFOLLOW);
		if (r < 0)
			goto out;
	}
	if (valid & FUSE_SET_ATTR_SIZE) {
		r = fi ? ftruncate((int)fi->fh, attr->st_size) : truncate(path, attr->st_size);
		if (r < 0)
			goto out;
	}
	if (valid & (FUSE_SET_ATTR_ATIME | FUSE_SET_ATTR_MTIME)) {
		struct timespec tv[2];
		tv[0].tv_sec = 0;
		tv[1].tv_sec = 0;
		tv[0].tv_nsec = UTIME_OMIT;
		tv[1].tv_nsec = UTIME_OMIT;
		if (valid & FUSE_SET_ATTR_ATIME_NOW)
			tv[0].tv_nsec = UTIME_NOW;
		else if (valid & FUSE_SET_ATTR_ATIME)
			tv[0] = attr->st_atim;
		if (valid & FUSE_SET_ATTR_MTIME_NOW)
			tv[1].tv_nsec = UTIME_NOW;
		else if (valid & FUSE_SET_ATTR_MTIME)
			tv[1] = attr->st_mtim;
		r = fi ? futimens((int)fi->fh, tv) : utimensat(AT_FDCWD, path, tv, 0);
		if (r < 0)
			goto out;
	}
out:;
	int err = errno;
	/* Even a partial failure may have changed something. */
	CHANGE_END(fs, i->ino);
	if (r < 0) {
		creds_leave(req);
		fuse_reply_err(req, err);
		return;
	}
	struct stat st;
	r = fstatat(i->fd, "", &st, AT_EMPTY_PATH | AT_SYMLINK_NOFOLLOW);
	err = errno;
	creds_leave(req);
	if (r < 0)
		fuse_reply_err(req, err);
	else
		fuse_reply_attr(req, &st, fs->attr_timeout);
}

static void fs_readlink(fuse_req_t req, fuse_ino_t ino)
{
	struct fs *fs = req_fs(req);
	struct inode *i = get_inode(fs, ino);
	char buf[PATH_MAX + 1];
	ssize_t n = readlinkat(i->fd, "", buf, sizeof(buf));
	if (n < 0) {
		fuse_reply_err(req, errno);
		return;
	}
	if ((size_t)n >= sizeof(buf)) {
		fuse_reply_err(req, ENAMETOOLONG);
		return;
	}
	buf[n] = '\0';
	fuse_reply_readlink(req, buf);
}

static void fs_open(fuse_req_t req, fuse_ino_t ino, struct fuse_file_info *fi)
{
	struct fs *fs = req_fs(req);
	struct inode *i = get_inode(fs, ino);
	char path[64];
	snprintf(path, sizeof(path), "/proc/self/fd/%d", i->fd);
	creds_enter(req);
	bool trunc = fi->flags & O_TRUNC;
	if (trunc)
		change_begin(fs);
	int fd = open(path, fi->flags & ~O_NOFOLLOW);
	int err = errno;
	if (trunc)
		CHANGE_END(fs, fd >= 0 ? i->ino : 0);
	creds_leave(req);
	if (fd < 0) {
		fuse_reply_err(req, err);
		return;
	}
	fi->fh = (uint64_t)fd;
	if (fuse_reply_open(req, fi) == -ENOENT)
		close(fd);
}

static void fs_release(fuse_req_t req, fuse_ino_t ino, struct fuse_file_info *fi)
{
	(void)ino;
	close((int)fi->fh);
	fuse_reply_err(req, 0);
}

static void fs_flush(fuse_req_t req, fuse_ino_t ino, struct fuse_file_info *fi)
{
	(void)ino;
	int r = close(dup((int)fi->fh));
	fuse_reply_err(req, r == -1 ? errno : 0);
}

static void fs_fsync(fuse_req_t req, fuse_ino_t ino, int datasync, struct fuse_file_info *fi)
{
	(void)ino;
	int r = datasync ? fdatasync((int)fi->fh) : fsync((int)fi->fh);
	fuse_reply_err(req, r == -1 ? errno : 0);
}

static void fs_read(fuse_req_t req, fuse_ino_t ino, size_t size, off_t off,
		    struct fuse_file_info *fi)
{
	(void)ino;
	struct fuse_bufvec buf = FUSE_BUFVEC_INIT(size);
	buf.buf[0].flags = FUSE_BUF_IS_FD | FUSE_BUF_FD_SEEK;
	buf.buf[0].fd = (int)fi->fh;
	buf.buf[0].pos = off;
	fuse_reply_data(req, &buf, FUSE_BUF_SPLICE_MOVE);
}

static void fs_write_buf(fuse_req_t req, fuse_ino_t ino, struct fuse_bufvec *in_buf,
			 off_t off, struct fuse_file_info *fi)
{
	struct fs *fs = req_fs(req);
	struct inode *i = get_inode(fs, ino);
	struct fuse_bufvec out = FUSE_BUFVEC_INIT(fuse_buf_size(in_buf));
	out.buf[0].flags = FUSE_BUF_IS_FD | FUSE_BUF_FD_SEEK;
	out.buf[0].fd = (int)fi->fh;
	out.buf[0].pos = off;
	creds_enter(req);
	change_begin(fs);
	ssize_t n = fuse_buf_copy(&out, in_buf, 0);
	CHANGE_END(fs, i->ino);
	creds_leave(req);
	if (n < 0)
		fuse_reply_err(req, (int)-n);
	else
		fuse_reply_write(req, (size_t)n);
}

static void fs_fallocate(fuse_req_t req, fuse_ino_t ino, int mode, off_t offset,
			 off_t length, struct fuse_file_info *fi)
{
	struct fs *fs = req_fs(req);
	struct inode *i = get_inode(fs, ino);
	creds_enter(req);
	change_begin(fs);
	int r = fallocate((int)fi->fh, mode, offset, length);
	int err = errno;
	CHANGE_END(fs, i->ino);
	creds_leave(req);
	fuse_reply_err(req, r < 0 ? err : 0);
}

static void fs_statfs(fuse_req_t req, fuse_ino_t ino)
{
	struct fs *fs = req_fs(req);
	struct statvfs sv;
	if (fstatvfs(get_inode(fs, ino)->fd, &sv) < 0)
		fuse_reply_err(req, errno);
	else
		fuse_reply_statfs(req, &sv);
}

/* Directories. */

static void fs_opendir(fuse_req_t req, fuse_ino_t ino, struct fuse_file_info *fi)
{
	struct fs *fs = req_fs(req);
	struct inode *i = get_inode(fs, ino);
	struct dirh *d = calloc(1, sizeof(*d));
	if (!d) {
		fuse_reply_err(req, ENOMEM);
		return;
	}
	char path[64];
	snprintf(path, sizeof(path), "/proc/self/fd/%d", i->fd);
	creds_enter(req);
	/* Through /proc: openat(fd, ".") would need search permission. */
	int fd = open(path, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	int err = errno;
	creds_leave(req);
	if (fd < 0 || !(d->dp = fdopendir(fd))) {
		if (fd >= 0) {
			err = errno;
			close(fd);
		}
		free(d);
		fuse_reply_err(req, err);
		return;
	}
	pthread_mutex_init(&d->lock, NULL);
	d->offset = 0;
	fi->fh = (uintptr_t)d;
	if (fuse_reply_open(req, fi) == -ENOENT) {
		closedir(d->dp);
		free(d);
	}
}

static bool is_dot(const char *n)
{
	return n[0] == '.' && (n[1] == '\0' || (n[1] == '.' && n[2] == '\0'));
}

/* ------------------------------------------------------------------ */
/* Listings from the cache: a complete directory's names (udc_readdir),
 * taken at offset 0 and served from the handle (listed mode).         */

static void listed_free(struct dirh *d)
{
	for (size_t k = 0; k < d->nr_names; k++)
		free(d->names[k].name);
	free(d->names);
	d->names = NULL;
	d->nr_names = d->room = 0;
	d->listed_mode = false;
}

static int listed_add(void *arg, const struct udc_dirent *ent)
{
	struct dirh *d = arg;
	struct udcfs_value v;

	if (ent->value_len != sizeof(v))
		return 1;   /* a name cached without its stat: list the store */
	if (d->nr_names == d->room) {
		size_t room = d->room ? 2 * d->room : 64;
		struct listed *n = realloc(d->names, room * sizeof(*n));
		if (!n)
			return 1;
		d->names = n;
		d->room = room;
	}
	char *name = strndup(ent->name, ent->len);
	if (!name)
		return 1;
	memcpy(&v, ent->value, sizeof(v));
	d->names[d->nr_names++] = (struct listed){
		.name = name, .ino = ent->attr.ino, .mode = (mode_t)v.mode & S_IFMT,
	};
	return 0;
}

static int listed_cmp(const void *a, const void *b)
{
	return strcmp(((const struct listed *)a)->name, ((const struct listed *)b)->name);
}

/*
 * --verify: the listing against the store's, read after it (names and
 * inos, "." and ".." apart); meaningless if a change ran meanwhile
 * (skipped, as verify_compare).
 */
static void verify_listing(struct fs *fs, struct inode *dir, const struct dirh *d, uint64_t b1,
			   uint64_t e1)
{
	char path[64];
	snprintf(path, sizeof(path), "/proc/self/fd/%d", dir->fd);
	struct listed *sorted = malloc((d->nr_names + 1) * sizeof(*sorted));
	DIR *dp = sorted ? opendir(path) : NULL;
	if (!dp) {
		free(sorted);
		return;
	}
	memcpy(sorted, d->names, d->nr_names * sizeof(*sorted));
	qsort(sorted, d->nr_names, sizeof(*sorted), listed_cmp);
	size_t found = 0;
	char bad[NAME_MAX + 1] = "";
	struct dirent *de;
	while ((de = readdir(dp))) {
		if (is_dot(de->d_name))
			continue;
		struct listed key = { .name = de->d_name };
		struct listed *l = bsearch(&key, sorted, d->nr_names, sizeof(*sorted), listed_cmp);
		if (l && l->ino == de->d_ino)
			found++;
		else if (!bad[0])
			snprintf(bad, sizeof(bad), "%s", de->d_name);
	}
	closedir(dp);
	free(sorted);
	uint64_t b2 = atomic_load(&fs->change_begin);
	if (b1 != e1 || b2 != b1) {
		CNT(verify_skipped);
		return;
	}
	CNT(verify_checks);
	if (!bad[0] && found == d->nr_names)
		return;
	CNT(verify_mismatches);
	fprintf(stderr, "udcfs: VERIFY MISMATCH dir %" PRIu64 " listing: cache %zu names, store %zu matching%s%s\n",
		dir->ino, d->nr_names, found, bad[0] ? ", store's not in the cache: " : "", bad);
}

/* List @dir from the cache into d (listed mode): false if the cache cannot. */
static bool listed_take(struct fs *fs, struct inode *dir, struct dirh *d)
{
	uint64_t e1 = atomic_load(&fs->change_end);
	uint64_t b1 = atomic_load(&fs->change_begin);
	struct udc_attr a;

	listed_free(d);
	if (udc_readdir(fs->cache, dir->ino, 0, listed_add, d) != 0) {
		listed_free(d);
		return false;
	}
	if (dir == &fs->root || udc_lookup(fs->cache, dir->ino, "..", 2, &a) != UDC_POSITIVE) {
		struct stat st;
		if (fstatat(dir->fd, "..", &st, AT_SYMLINK_NOFOLLOW) < 0) {
			listed_free(d);
			return false;
		}
		a.ino = st.st_ino;
	}
	d->dot_ino = dir->ino;
	d->dotdot_ino = a.ino;
	d->listed_mode = true;
	d->offset = -1;   /* the store's stream: seek before reading it again */
	CNT(listings_cached);
	if (fs->verify)
		verify_listing(fs, dir, d, b1, e1);
	return true;
}

/* A READDIRPLUS entry for inode @i (its lookup reference taken), @e's
 * attributes: the bytes it needs (more than @rem: not added, and the
 * reference given back). */
static size_t add_direntry_plus(fuse_req_t req, struct fs *fs, struct inode *i, char *p,
				size_t rem, const char *name, struct fuse_entry_param *e, off_t next)
{
	e->ino = (uintptr_t)i;
	e->attr_timeout = fs->attr_timeout;
	e->entry_timeout = fs->entry_timeout;
	size_t used = fuse_add_direntry_plus(req, p, rem, name, e, next);
	if (used > rem)
		inode_unref(fs, i, 1);
	return used;
}

/* Reply entries of d's listing from index @offset into @p (@rem bytes). */
static size_t listed_reply(fuse_req_t req, struct fs *fs, struct inode *dir, struct dirh *d,
			   off_t offset, bool plus, char *p, size_t rem)
{
	size_t size = rem;

	for (size_t k = (size_t)offset; k < d->nr_names + 2; k++) {
		const struct listed dot = { .name = k ? ".." : ".", .mode = S_IFDIR,
					    .ino = k ? d->dotdot_ino : d->dot_ino };
		const struct listed *l = k < 2 ? &dot : &d->names[k - 2];
		off_t next = (off_t)k + 1;
		struct fuse_entry_param e;
		size_t used;

		memset(&e, 0, sizeof(e));
		e.attr.st_ino = l->ino;
		e.attr.st_mode = l->mode;
		if (!plus) {
			used = fuse_add_direntry(req, p, rem, l->name, &e.attr, next);
		} else if (k < 2) {
			used = fuse_add_direntry_plus(req, p, rem, l->name, &e, next);
		} else {
			/* The attributes as a LOOKUP would give them now: the
			 * cached value, else the store's. */
			size_t len = strlen(l->name);
			uint64_t e1 = atomic_load(&fs->change_end);
			uint64_t b1 = atomic_load(&fs->change_begin);
			if (listed_cached(fs, dir->ino, l->name, len, l->ino, &e.attr)) {
				CNT(listed_cached);
				if (fs->verify)
					verify_answer(fs, dir->fd, dir->ino, l->name, 0, &e.attr, b1, e1);
			} else {
				sleep_us(fs->store_delay_us);
				CNT(listed_fetches);
				if (store_stat(dir->fd, l->name, &e.attr) < 0 || e.attr.st_ino != l->ino)
					continue;   /* gone or replaced since the listing */
			}
			struct inode *i = inode_ref(fs, dir->fd, l->name, &e.attr, false);
			if (!i)
				continue;
			used = add_direntry_plus(req, fs, i, p, rem, l->name, &e, next);
		}
		if (used > rem)
			break;
		p += used;
		rem -= used;
	}
	return size - rem;
}

static void fs_readdir_common(fuse_req_t req, fuse_ino_t ino, size_t size, off_t offset,
			      struct fuse_file_info *fi, bool plus)
{
	struct fs *fs = req_fs(req);
	struct inode *dir = get_inode(fs, ino);
	struct dirh *d = (struct dirh *)(uintptr_t)fi->fh;
	char *buf = calloc(1, size), *p = buf;
	size_t rem = size;
	int err = 0;

	if (!buf) {
		fuse_reply_err(req, ENOMEM);
		return;
	}
	pthread_mutex_lock(&d->lock);
	creds_enter(req);
	if (offset == 0 && !fs->no_cache && listed_take(fs, dir, d) && d->filling) {
		d->filling = false;   /* complete already */
		CNT(fills_failed);
	}
	if (d->listed_mode) {
		size_t used = listed_reply(req, fs, dir, d, offset, plus, buf, size);
		creds_leave(req);
		pthread_mutex_unlock(&d->lock);
		fuse_reply_buf(req, buf, used);
		free(buf);
		return;
	}
	if (offset != d->offset) {
		seekdir(d->dp, offset);
		d->entry = NULL;
		d->offset = offset;
		if (d->filling) {
			d->filling = false;
			CNT(fills_failed);
		}
	}
	if (plus && !fs->no_cache && offset == 0 && !d->filling) {
		if (udc_dir_fill_begin(fs->cache, dir->ino, &d->fill) == 0) {
			d->filling = true;
			d->fill_ok = true;
		}
	}
	bool eof = false;
	sleep_us(fs->readdir_delay_us);   /* a remote store's listing: a round trip a request */
	CNT(store_listings);
	for (;;) {
		if (!d->entry) {
			errno = 0;
			d->entry = readdir(d->dp);
			if (!d->entry) {
				if (errno) {
					err = errno;
					d->fill_ok = false;
				} else {
					eof = true;
				}
				break;
			}
		}
		const char *name = d->entry->d_name;
		off_t next = d->entry->d_off;
		size_t used;
		if (!plus) {
			struct stat st;
			memset(&st, 0, sizeof(st));
			st.st_ino = d->entry->d_ino;
			st.st_mode = (mode_t)d->entry->d_type << 12;
			used = fuse_add_direntry(req, p, rem, name, &st, next);
		} else if (is_dot(name)) {
			struct fuse_entry_param e;
			memset(&e, 0, sizeof(e));
			e.attr.st_ino = d->entry->d_ino;
			e.attr.st_mode = (mode_t)d->entry->d_type << 12;
			used = fuse_add_direntry_plus(req, p, rem, name, &e, next);
		} else {
			struct fuse_entry_param e;
			struct pending pd;
			size_t len = strlen(name);
			memset(&e, 0, sizeof(e));
			uint64_t e1 = atomic_load(&fs->change_end);
			uint64_t b1 = atomic_load(&fs->change_begin);
			if (!fs->no_cache &&
			    listed_cached(fs, dir->ino, name, len, d->entry->d_ino, &e.attr)) {
				CNT(listed_cached);
				if (fs->verify) {
					struct stat dst;
					memset(&dst, 0, sizeof(dst));
					int vr = store_stat(dir->fd, name, &dst);
					verify_compare(fs, dir->ino, name, 0, &e.attr, vr, &dst, b1, e1);
				}
				goto reply_plus;
			}
			if (!fs->no_cache)
				pending_begin(fs, &pd);
			sleep_us(fs->store_delay_us);
			int r = store_stat(dir->fd, name, &e.attr);
			CNT(listed_fetches);
			if (r < 0) {
				/* gone since the listing: skip it */
				if (!fs->no_cache)
					pending_end(fs, &pd, 0, NULL, 0);
				d->entry = NULL;
				d->offset = next;
				continue;
			}
			if (!fs->no_cache) {
				names_add(fs, e.attr.st_ino, dir->ino, name, len);
				if (d->filling) {
					struct udc_attr a;
					struct udcfs_value v;
					fill_attr(&a, &e.attr);
					value_pack(&v, &e.attr);
					int ar = udc_add_listed(fs->cache, dir->ino, name, len, &a, &v,
								sizeof(v), 0, &d->fill);
					if (ar < 0 && ar != -ESTALE) {
						CNT(cache_errors);
						udc_invalidate(fs->cache, dir->ino, name, len);
					}
					if (ar < 0)
						d->fill_ok = false;
				}
				if (pending_end(fs, &pd, dir->ino, name, len))
					d->fill_ok = false;
			}
		reply_plus:;
			struct inode *i = inode_ref(fs, dir->fd, name, &e.attr, false);
			if (!i) {
				d->entry = NULL;
				d->offset = next;
				continue;
			}
			used = add_direntry_plus(req, fs, i, p, rem, name, &e, next);
		}
		if (used > rem)
			break;
		p += used;
		rem -= used;
		d->entry = NULL;
		d->offset = next;
	}
	if (d->filling && (eof || err)) {
		d->filling = false;
		if (eof && d->fill_ok) {
			int cr = udc_dir_complete(fs->cache, dir->ino, &d->fill);
			if (cr == 0)
				CNT(fills_complete);
			else
				CNT(fills_failed);
		} else {
			CNT(fills_failed);
		}
	}
	creds_leave(req);
	pthread_mutex_unlock(&d->lock);
	if (err && rem == size)
		fuse_reply_err(req, err);
	else
		fuse_reply_buf(req, buf, size - rem);
	free(buf);
}

static void fs_readdir(fuse_req_t req, fuse_ino_t ino, size_t size, off_t offset,
		       struct fuse_file_info *fi)
{
	fs_readdir_common(req, ino, size, offset, fi, false);
}

static void fs_readdirplus(fuse_req_t req, fuse_ino_t ino, size_t size, off_t offset,
			   struct fuse_file_info *fi)
{
	fs_readdir_common(req, ino, size, offset, fi, true);
}

static void fs_releasedir(fuse_req_t req, fuse_ino_t ino, struct fuse_file_info *fi)
{
	(void)ino;
	struct dirh *d = (struct dirh *)(uintptr_t)fi->fh;
	listed_free(d);
	closedir(d->dp);
	pthread_mutex_destroy(&d->lock);
	free(d);
	fuse_reply_err(req, 0);
}

static void fs_fsyncdir(fuse_req_t req, fuse_ino_t ino, int datasync, struct fuse_file_info *fi)
{
	(void)ino;
	struct dirh *d = (struct dirh *)(uintptr_t)fi->fh;
	int fd = dirfd(d->dp);
	int r = datasync ? fdatasync(fd) : fsync(fd);
	fuse_reply_err(req, r == -1 ? errno : 0);
}

static const struct fuse_lowlevel_ops fs_ops = {
	.init = fs_init,
	.lookup = fs_lookup,
	.mkdir = fs_mkdir,
	.mknod = fs_mknod,
	.symlink = fs_symlink,
	.link = fs_link,
	.unlink = fs_unlink,
	.rmdir = fs_rmdir,
	.rename = fs_rename,
	.forget = fs_forget,
	.forget_multi = fs_forget_multi,
	.getattr = fs_getattr,
	.setattr = fs_setattr,
	.readlink = fs_readlink,
	.opendir = fs_opendir,
	.readdir = fs_readdir,
	.readdirplus = fs_readdirplus,
	.releasedir = fs_releasedir,
	.fsyncdir = fs_fsyncdir,
	.create = fs_create,
	.open = fs_open,
	.release = fs_release,
	.flush = fs_flush,
	.fsync = fs_fsync,
	.read = fs_read,
	.write_buf = fs_write_buf,
	.statfs = fs_statfs,
	.fallocate = fs_fallocate,
};

/* ------------------------------------------------------------------ */
/* Statistics.                                                         */

#define LD(f) ((unsigned long long)atomic_load(&fs->st.f))

static void print_stats(struct fs *fs, FILE *f)
{
	fprintf(f, "udcfs statistics (%s):\n", fs->no_cache ? "--no-cache" : "udcache");
	fprintf(f, "  lookups              %llu\n", LD(lookups));
	fprintf(f, "  store name lookups   %llu\n", LD(store_lookups));
	fprintf(f, "  cache hits           %llu (negative %llu)\n", LD(cache_hits), LD(cache_hits_negative));
	fprintf(f, "  shared answers       %llu\n", LD(shared));
	fprintf(f, "  opens on a hit       %llu\n", LD(opens_on_hit));
	fprintf(f, "  attr fetches         %llu\n", LD(attr_fetches));
	fprintf(f, "  getattr from cache   %llu\n", LD(attr_cached));
	fprintf(f, "  readdirplus cached   %llu\n", LD(listed_cached));
	fprintf(f, "  readdirplus stats    %llu\n", LD(listed_fetches));
	fprintf(f, "  mutation stats       %llu\n", LD(mutation_fetches));
	fprintf(f, "  invalidations        %llu\n", LD(invalidations));
	fprintf(f, "  cache errors         %llu\n", LD(cache_errors));
	fprintf(f, "  fills complete       %llu (failed %llu)\n", LD(fills_complete), LD(fills_failed));
	fprintf(f, "  listings from cache  %llu\n", LD(listings_cached));
	fprintf(f, "  store listings       %llu\n", LD(store_listings));
	fprintf(f, "  exchanges            %llu\n", LD(exchanges));
	if (fs->verify)
		fprintf(f, "  verify checks        %llu, mismatches %llu, skipped %llu\n",
			LD(verify_checks), LD(verify_mismatches), LD(verify_skipped));
	if (fs->cache) {
		struct udc_stats s;
		memset(&s, 0, sizeof(s));
		s.size = sizeof(s);
		udc_stats_get(fs->cache, &s);
		fprintf(f, "  udcache: lookups %llu hits +%llu -%llu misses %llu backend %llu "
			"entries +%llu -%llu bytes %llu/%llu stale %llu evictions %llu\n",
			(unsigned long long)s.lookups, (unsigned long long)s.hits_positive,
			(unsigned long long)s.hits_negative, (unsigned long long)s.misses,
			(unsigned long long)s.backend_calls, (unsigned long long)s.nr_positive,
			(unsigned long long)s.nr_negative, (unsigned long long)s.bytes_used,
			(unsigned long long)s.bytes_limit, (unsigned long long)s.stale_answers,
			(unsigned long long)s.evictions);
	}
	fflush(f);
}

static void *stats_thread(void *arg)
{
	struct fs *fs = arg;
	sigset_t set;
	sigemptyset(&set);
	sigaddset(&set, SIGUSR1);
	for (;;) {
		int sig;
		if (sigwait(&set, &sig) == 0 && sig == SIGUSR1)
			print_stats(fs, stderr);
	}
	return NULL;
}

/* ------------------------------------------------------------------ */
/* main                                                                */

static void usage(const char *prog)
{
	fprintf(stderr,
		"usage: %s [options] BACKING_DIR MOUNTPOINT\n"
		"  --no-cache            no udcache: every LOOKUP asks the store (the baseline)\n"
		"  --store-delay-us N    sleep N us in every store name lookup\n"
		"  --attr-delay-us N     sleep N us in every GETATTR\n"
		"  --readdir-delay-us N  sleep N us in every READDIR(PLUS) request the store answers\n"
		"  --entry-timeout S     kernel entry timeout, seconds (default 0)\n"
		"  --attr-timeout S      kernel attr timeout, seconds (default 0)\n"
		"  --memory BYTES        udcache memory limit (default 64 MiB)\n"
		"  --stats               print statistics on exit and on SIGUSR1\n"
		"  --verify              check every cache answer against the store\n"
		"  -f                    foreground\n"
		"  -d                    FUSE debug (implies -f)\n"
		"  -s                    single-threaded loop\n"
		"  -o OPT[,OPT...]       FUSE mount options (allow_other, default_permissions, ...)\n",
		prog);
}

static int parse_opts(int argc, char **argv, struct fs *fs, struct fuse_args *fa,
		      bool *foreground, bool *single, const char **backing, const char **mnt)
{
	for (int k = 1; k < argc; k++) {
		const char *a = argv[k];
		const char *val = NULL;
#define NEEDVAL() do { if (k + 1 >= argc) { fprintf(stderr, "udcfs: %s needs a value\n", a); return -1; } val = argv[++k]; } while (0)
		if (!strcmp(a, "--no-cache")) {
			fs->no_cache = true;
		} else if (!strcmp(a, "--verify")) {
			fs->verify = true;
		} else if (!strcmp(a, "--stats")) {
			fs->print_stats = true;
		} else if (!strcmp(a, "--store-delay-us")) {
			NEEDVAL();
			fs->store_delay_us = (unsigned)strtoul(val, NULL, 0);
		} else if (!strcmp(a, "--attr-delay-us")) {
			NEEDVAL();
			fs->attr_delay_us = (unsigned)strtoul(val, NULL, 0);
		} else if (!strcmp(a, "--readdir-delay-us")) {
			NEEDVAL();
			fs->readdir_delay_us = (unsigned)strtoul(val, NULL, 0);
		} else if (!strcmp(a, "--entry-timeout")) {
			NEEDVAL();
			fs->entry_timeout = strtod(val, NULL);
		} else if (!strcmp(a, "--attr-timeout")) {
			NEEDVAL();
			fs->attr_timeout = strtod(val, NULL);
		} else if (!strcmp(a, "--memory")) {
			NEEDVAL();
			fs->memory = (size_t)strtoull(val, NULL, 0);
		} else if (!strcmp(a, "-f")) {
			*foreground = true;
		} else if (!strcmp(a, "-s")) {
			*single = true;
		} else if (!strcmp(a, "-d")) {
			*foreground = true;
			fuse_opt_add_arg(fa, "-d");
		} else if (!strcmp(a, "-o")) {
			NEEDVAL();
			fuse_opt_add_arg(fa, "-o");
			fuse_opt_add_arg(fa, val);
		} else if (!strncmp(a, "-o", 2) && a[2]) {
			fuse_opt_add_arg(fa, a);
		} else if (!strcmp(a, "-h") || !strcmp(a, "--help")) {
			usage(argv[0]);
			exit(0);
		} else if (a[0] == '-') {
			fprintf(stderr, "udcfs: unknown option %s\n", a);
			return -1;
		} else if (!*backing) {
			*backing = a;
		} else if (!*mnt) {
			*mnt = a;
		} else {
			fprintf(stderr, "udcfs: too many arguments\n");
			return -1;
		}
#undef NEEDVAL
	}
	if (!*backing || !*mnt)
		return -1;
	return 0;
}

int main(int argc, char **argv)
{
	struct fuse_args fa = FUSE_ARGS_INIT(0, NULL);
	struct fs *fs = calloc(1, sizeof(*fs));
	bool foreground = false, single = false;
	const char *backing = NULL, *mnt = NULL;
	int ret = 1;

	if (!fs)
		return 1;
	g_fs = fs;
	fuse_opt_add_arg(&fa, argv[0]);
	if (parse_opts(argc, argv, fs, &fa, &foreground, &single, &backing, &mnt) < 0) {
		usage(argv[0]);
		fuse_opt_free_args(&fa);
		free(fs);
		return 2;
	}
	umask(0);
	pthread_mutex_init(&fs->itab_lock, NULL);
	pthread_mutex_init(&fs->names_lock, NULL);
	fs->pending.next = fs->pending.prev = &fs->pending;
	fs->ngroups = getgroups(256, fs->groups);
	if (fs->ngroups < 0)
		fs->ngroups = 0;

	fs->root.fd = open(backing, O_PATH | O_DIRECTORY | O_CLOEXEC);
	struct stat rst;
	if (fs->root.fd < 0 || fstat(fs->root.fd, &rst) < 0) {
		fprintf(stderr, "udcfs: %s: %s\n", backing, strerror(errno));
		goto out_args;
	}
	fs->root.ino = rst.st_ino;
	fs->root.dev = rst.st_dev;
	fs->root.nlookup = 2;
	fs->root_dev = rst.st_dev;

	/* SIGUSR1 goes to the stats thread: block it everywhere else. */
	sigset_t usr1;
	sigemptyset(&usr1);
	sigaddset(&usr1, SIGUSR1);
	pthread_sigmask(SIG_BLOCK, &usr1, NULL);

	struct fuse_session *se = fuse_session_new(&fa, &fs_ops, sizeof(fs_ops), fs);
	if (!se)
		goto out_root;
	if (fuse_set_signal_handlers(se) != 0)
		goto out_session;
	if (fuse_session_mount(se, mnt) != 0)
		goto out_signals;
	fuse_daemonize(foreground);

	if (!fs->no_cache) {
		fs->backend.lookup = NULL;
		fs->backend.readlink = NULL;
		fs->backend.lookup_value = backend_lookup_value;
		struct udc_config cfg = UDC_CONFIG_INIT;
		cfg.root = rst.st_ino;
		cfg.memory_limit = fs->memory;
		cfg.backend = &fs->backend;
		fs->cache = udc_create(&cfg);
		if (!fs->cache) {
			fprintf(stderr, "udcfs: udc_create: %s\n", strerror(errno));
			goto out_unmount;
		}
	}
	pthread_t st_tid;
	bool st_started = pthread_create(&st_tid, NULL, stats_thread, fs) == 0;

	if (single) {
		ret = fuse_session_loop(se);
	} else {
		struct fuse_loop_config lc = { .clone_fd = 0, .max_idle_threads = 10 };
		ret = fuse_session_loop_mt(se, &lc);
	}
	if (st_started) {
		pthread_cancel(st_tid);
		pthread_join(st_tid, NULL);
	}
	if (fs->print_stats || fs->verify)
		print_stats(fs, stderr);
	if (fs->verify && atomic_load(&fs->st.verify_mismatches)) {
		fprintf(stderr, "udcfs: %llu verify mismatches\n", LD(verify_mismatches));
		ret = 3;
	}
out_unmount:
	fuse_session_unmount(se);
out_signals:
	fuse_remove_signal_handlers(se);
out_session:
	fuse_session_destroy(se);
out_root:
	udc_destroy(fs->cache);
	fs->cache = NULL;
	for (size_t h = 0; h < ITAB_SIZE; h++)
		for (struct inode *i = fs->itab[h], *n; i; i = n) {
			n = i->next;
			close(i->fd);
			free(i);
		}
	for (size_t h = 0; h < NTAB_SIZE; h++)
		for (struct ino_names *in = fs->ntab[h], *nn; in; in = nn) {
			nn = in->next;
			for (struct name_rec *r = in->names, *rn; r; r = rn) {
				rn = r->next;
				free(r);
			}
			free(in);
		}
	close(fs->root.fd);
out_args:
	fuse_opt_free_args(&fa);
	free(fs);
	return ret ? (ret == 3 ? 3 : 1) : 0;
}
