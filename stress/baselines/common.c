/* SPDX-License-Identifier: MIT */
/*
 * stress/baselines/common.c - what the baseline name caches share.
 *
 * Owns: the argument checks beyond the name rules (those are
 * common/path.h's, udcache's own), the keyed name hash, the stale-answer guard, the path walk,
 * the byte counter of the allocation helpers, the backend call and stats
 * glue, the calls every baseline makes the same way over its struct
 * bl_ops (create/destroy, add, add_negative, remove, rename's checks,
 * rmdir, invalidate_dir, a resolve's miss), and the urcu-memb thread
 * registration of the RCU baselines.  No
 * state of its own but the registration's thread-local flags: every other
 * object here belongs to a baseline's cache.
 *
 * The hash is a folded-multiply mix (the 128-bit product of two 64-bit
 * words, high half XORed into the low half), keyed by hash_key; {0,0}
 * hashes with the built-in constants.  It is fast and spreads names well,
 * and makes no claim against an attacker (the baselines are not attacked).
 *
 * The walk follows udc_walk()'s rules (engine/walk.c), with one
 * difference in means: ".." goes back to the directory the walk came from
 * (a stack of the attrs walked through), since the baselines keep no
 * parent links; at the start of a walk it is resolved as a name.  A walk
 * is a seqlock reader of the guard's dir_seq: it waits while a directory-
 * wide change is in progress and walks again when one ran meanwhile, with
 * no bound on the retries.
 *
 * Locking:
 *   None here.  The guard is lock-free; its callers keep two rules:
 *   bl_guard_valid() is called, and the table change of every mutation is
 *   made, with the same lock held for that name (bucket, stripe or cache
 *   lock), so that a validated insert is atomic with respect to
 *   mutations (a directory-wide change that deletes without those locks
 *   must first wait out the inserts validated before its dir_begin, as
 *   lfht.c's stripe flush does); and directory-wide changes are
 *   serialised by the caller (one bl_guard_dir_begin() .. dir_end() at a
 *   time), as seqcount writers must be.
 *   The shared calls keep those rules with the baseline's hooks: a name's
 *   change and a resolve's validated insert under ops->lock (or, NULL,
 *   ops->dir_lock, the one lock), the guard's begin/end inside it;
 *   rmdir and invalidate_dir under ops->dir_lock, the name's lock nested
 *   in it, dir_forget after it is dropped.  No lock is held across the
 *   backend call.
 *   bl_rcu_ready and bl_rcu_owned are thread-local.
 *
 * Ordering:
 *   name_end / dir_end (release RMW) pair with the acquire loads of
 *   bl_guard_snap(): the snapshot is taken before the backend call, so
 *   when the snapshot holds a mutation's count, the backend call sees the
 *   store as the embedder left it before telling the cache.
 *   name_begin is relaxed: bl_guard_valid() reads the count with the lock
 *   held that the mutation's table change was made under, and that lock
 *   orders the begin before the read.
 *   dir_begin's release fence (after the odd count) pairs with the acquire
 *   fence in walk_seq_retry(): a walk that read any table change made after
 *   the begin sees the count moved, and walks again.  dir_end's release
 *   RMW pairs with the acquire load in walk_seq_begin(): a walk that starts
 *   on the even count sees every change of that directory-wide change.
 *   bl_mem, and bl_head's backend_calls and stale_answers, count with
 *   relaxed RMWs: statistics, ordered with nothing.
 *
 * Limitations:
 *   ".." as the first component of a walk costs a resolve of the name
 *   ".." (the backend answers it, the cache then holds it like any name);
 *   a walk that keeps racing with renames retries for as long as they go.
 *   bl_rcu_register_slow() leaves alone a thread udcache registered, but
 *   udcache's own registration (engine/thread.c) does not look at
 *   urcu's flag: a thread that calls a baseline here first and udcache
 *   afterwards is registered twice (liburcu asserts).  udc-stress drives
 *   one implementation a process, so it never happens there.
 */
#include "stress/baselines/common.h"

#define _LGPL_SOURCE /* urcu_memb_reader, to tell whether a thread is registered */
#include <urcu/urcu-memb.h>

#include <errno.h>
#include <pthread.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define BL_CACHELINE 64
#define WALK_MAX_SYMLINKS 40 /* as udc_walk (and Linux's MAXSYMLINKS) */
#define WALK_STACK_INLINE 32 /* directories a walk goes down before it allocates */

/* ---------------------------------------------------------------------- */
/* Names and arguments */

bool bl_attr_valid(const struct udc_attr *attr)
{
	return attr && attr->ino != UDC_INO_NONE && attr->type <= UDC_TYPE_OTHER &&
	       attr->flags == 0;
}

int bl_add_check(const void *c, udc_ino dir, const char *name, size_t len,
		 const struct udc_attr *attr)
{
	int r = call_check(c, dir, name, len);

	if (r)
		return r;
	if (!bl_attr_valid(attr))
		return -EINVAL;
	if (name_is_dotdot(name, len) && attr->type != UDC_TYPE_DIR)
		return -EINVAL; /* udc_add: ".." names a directory */
	return 0;
}

/* The lock of directory-wide changes: the baseline's hook, or its mutex. */
static void dir_lock(struct bl_head *h)
{
	if (h->ops->dir_lock)
		h->ops->dir_lock(h);
	else
		pthread_mutex_lock(h->dir_mutex);
}

static void dir_unlock(struct bl_head *h)
{
	if (h->ops->dir_unlock)
		h->ops->dir_unlock(h);
	else
		pthread_mutex_unlock(h->dir_mutex);
}

/* The lock of a name's changes: its own, or the baseline's one lock. */
static void name_lock(struct bl_head *h, uint64_t hash)
{
	if (h->ops->lock)
		h->ops->lock(h, hash);
	else
		dir_lock(h);
}

static void name_unlock(struct bl_head *h, uint64_t hash)
{
	if (h->ops->unlock)
		h->ops->unlock(h, hash);
	else
		dir_unlock(h);
}

/* A mutation of one name: e (NULL: remove) made its answer under the name's lock. */
static int name_change(struct bl_head *h, uint64_t hash, void **e, udc_ino dir, const char *name,
		       size_t len)
{
	const struct bl_ops *ops = h->ops;
	int r = 0;

	if (ops->rcu)
		bl_rcu_enter();
	name_lock(h, hash);
	bl_guard_name_begin(&h->guard, hash);
	if (e)
		r = ops->publish_locked(h, hash, e);
	else
		ops->drop_locked(h, hash, dir, name, len, NULL);
	bl_guard_name_end(&h->guard, hash);
	name_unlock(h, hash);
	return r;
}

/* add and add_negative, checks done: (dir, name) answers attr (NULL: negative). */
static int name_set(struct bl_head *h, udc_ino dir, const char *name, size_t len,
		    const struct udc_attr *attr)
{
	uint64_t hash = bl_hash(h->cfg.hash_key, dir, name, len);
	void *e = h->ops->entry_new(h, hash, dir, name, len, attr);

	if (!e)
		return -ENOMEM;
	int r = name_change(h, hash, &e, dir, name, len);
	h->ops->entry_free(h, e);
	return r;
}

int bl_add(void *c, udc_ino dir, const char *name, size_t len, const struct udc_attr *attr)
{
	int r = bl_add_check(c, dir, name, len, attr);

	return r ? r : name_set(c, dir, name, len, attr);
}

int bl_add_negative(void *c, udc_ino dir, const char *name, size_t len, uint32_t client)
{
	int r = call_check(c, dir, name, len);

	(void)client; /* no per-client admission here */
	return r ? r : name_set(c, dir, name, len, NULL);
}

int bl_remove(void *c, udc_ino dir, const char *name, size_t len)
{
	struct bl_head *h = c;
	int r = call_check(c, dir, name, len);

	if (r)
		return r;
	return name_change(h, bl_hash(h->cfg.hash_key, dir, name, len), NULL, dir, name, len);
}

int bl_invalidate_dir(void *c, udc_ino dir)
{
	struct bl_head *h = c;

	if (!h || dir == UDC_INO_NONE)
		return -EINVAL;
	if (h->ops->rcu)
		bl_rcu_enter();
	dir_lock(h);
	bl_guard_dir_begin(&h->guard);
	h->ops->dir_forget(h, dir);
	bl_guard_dir_end(&h->guard);
	dir_unlock(h);
	return 0;
}

int bl_rmdir(void *c, udc_ino parent, const char *name, size_t len, udc_ino dir)
{
	struct bl_head *h = c;
	int r = call_check(c, parent, name, len);

	if (r)
		return r;
	const struct bl_ops *ops = h->ops;
	uint64_t hash = bl_hash(h->cfg.hash_key, parent, name, len);
	struct udc_attr was;
	if (ops->rcu)
		bl_rcu_enter();
	dir_lock(h);
	bl_guard_dir_begin(&h->guard);
	if (ops->lock) /* else dir_lock is the names' lock too */
		ops->lock(h, hash);
	bl_guard_name_begin(&h->guard, hash);
	ops->drop_locked(h, hash, parent, name, len, &was);
	bl_guard_name_end(&h->guard, hash);
	if (ops->unlock)
		ops->unlock(h, hash);
	if (dir == UDC_INO_NONE && was.ino != UDC_INO_NONE && was.type == UDC_TYPE_DIR)
		dir = was.ino;
	if (dir != UDC_INO_NONE)
		ops->dir_forget(h, dir);
	bl_guard_dir_end(&h->guard);
	dir_unlock(h);
	return 0;
}

int bl_rename(void *c, udc_ino odir, const char *oname, size_t olen, udc_ino ndir,
	      const char *nname, size_t nlen, udc_ino moved)
{
	struct bl_head *h = c;
	int r = call_check(c, ndir, nname, nlen);

	if (r)
		return r;
	r = call_check(c, odir, oname, olen);
	if (r)
		return r;
	if (name_is_dotdot(oname, olen) || name_is_dotdot(nname, nlen))
		return -EINVAL;
	if (odir == ndir && olen == nlen && memcmp(oname, nname, olen) == 0)
		return 0;
	if (h->ops->rcu)
		bl_rcu_enter();
	return h->ops->rename(c, odir, oname, olen, ndir, nname, nlen, moved);
}

int bl_resolve_fetch(void *c, uint64_t hash, struct bl_snap snap, udc_ino dir, const char *name,
		     size_t len, const struct udc_call *call, struct udc_attr *out)
{
	struct bl_head *h = c;
	const struct bl_ops *ops = h->ops;
	struct udc_attr a;
	int r = bl_backend_lookup(&h->cfg, call, dir, name, len, &a);

	if (r && r != -ENOENT)
		return r;
	void *e = ops->entry_new(h, hash, dir, name, len, r ? NULL : &a);
	if (e) { /* else out of memory: answered, not cached */
		name_lock(h, hash);
		if (bl_guard_valid(&h->guard, hash, snap))
			ops->publish_locked(h, hash, &e); /* -ENOMEM: not cached */
		else					  /* relaxed: a statistic (see Ordering) */
			atomic_fetch_add_explicit(&h->stale_answers, 1, memory_order_relaxed);
		name_unlock(h, hash);
		ops->entry_free(h, e);
	}
	if (r == 0 && out)
		*out = a;
	return r;
}

int bl_resolve_miss(void *c, udc_ino dir, const char *name, size_t len, const struct udc_call *call,
		    struct udc_attr *out)
{
	struct bl_head *h = c;

	if (!h->cfg.backend)
		return -EAGAIN;
	uint64_t hash = bl_hash(h->cfg.hash_key, dir, name, len);
	struct bl_snap snap = bl_guard_snap(&h->guard, hash);
	/* relaxed: a statistic (see Ordering) */
	atomic_fetch_add_explicit(&h->backend_calls, 1, memory_order_relaxed);
	return bl_resolve_fetch(h, hash, snap, dir, name, len, call, out);
}

int bl_backend_lookup(const struct impl_config *cfg, const struct udc_call *call, udc_ino dir,
		      const char *name, size_t len, struct udc_attr *out)
{
	struct udc_attr a = { 0 };

	if (!cfg->backend)
		return -EAGAIN;
	int r = cfg->backend->lookup(call ? call->ctx : NULL, dir, name, len, &a);
	if (r > 0 || (r == 0 && !bl_attr_valid(&a)))
		return -EIO; /* the backend broke its contract: nothing to cache */
	if (r == 0)
		*out = a;
	return r;
}

void bl_stats_put(struct udc_stats *st, const struct udc_stats *from)
{
	size_t size = st->size;

	if (size != UDC_STATS_SIZE_V0 && size != sizeof(*st))
		return;
	memcpy(st, from, size);
	st->size = size;
}

/* ---------------------------------------------------------------------- */
/* The hash */

#define MIX0 0x9e3779b97f4a7c15ull /* 2^64 / golden ratio */
#define MIX1 0xc2b2ae3d27d4eb4full
#define MIX2 0x165667b19e3779f9ull
#define MIX3 0xd6e8feb86659fd93ull

/* The 128-bit product of a and b, folded to 64 bits. */
static inline uint64_t fold_mul(uint64_t a, uint64_t b)
{
	unsigned __int128 p = (unsigned __int128)a * b;

	return (uint64_t)p ^ (uint64_t)(p >> 64);
}

static inline uint64_t load64(const char *p)
{
	uint64_t v;

	memcpy(&v, p, sizeof(v));
	return v;
}

uint64_t bl_hash(const uint64_t key[2], udc_ino dir, const char *name, size_t len)
{
	uint64_t k0 = key[0] ^ MIX0, k1 = key[1] ^ MIX1;
	/* XOR dir back in: a zero product must not lose the directory. */
	uint64_t s = fold_mul(dir ^ k0, (uint64_t)len ^ k1) ^ dir;
	uint64_t tail[2] = { 0, 0 };

	/* 16 bytes a round; the last 1..16 bytes are zero-padded (len is in s). */
	for (; len > 16; len -= 16, name += 16)
		s ^= fold_mul(load64(name) ^ s ^ MIX2, load64(name + 8) ^ k1);
	if (len)
		memcpy(tail, name, len);
	s ^= fold_mul(tail[0] ^ s ^ MIX2, tail[1] ^ k1);
	return fold_mul(s ^ k0, ((s << 29) | (s >> 35)) ^ MIX3);
}

/* ---------------------------------------------------------------------- */
/* The stale-answer guard */

static inline _Atomic uint64_t *stripe_seq(struct bl_guard *g, uint64_t hash)
{
	return &g->name_seq[hash & (BL_GUARD_STRIPES - 1)];
}

static void guard_init(struct bl_guard *g)
{
	for (size_t i = 0; i < BL_GUARD_STRIPES; i++)
		atomic_init(&g->name_seq[i], 0);
	atomic_init(&g->dir_seq, 0);
}

void bl_head_init(struct bl_head *h, const struct bl_ops *ops, const struct impl_config *cfg)
{
	h->ops = ops;
	h->cfg = *cfg;
	atomic_init(&h->backend_calls, 0);
	atomic_init(&h->stale_answers, 0);
	guard_init(&h->guard);
}

struct bl_snap bl_guard_snap(struct bl_guard *g, uint64_t hash)
{
	struct bl_snap s;

	/* acquire: pairs with name_end's release (see Ordering) */
	s.name_seq = atomic_load_explicit(stripe_seq(g, hash), memory_order_acquire);
	/* acquire: pairs with dir_end's release (see Ordering) */
	s.dir_seq = atomic_load_explicit(&g->dir_seq, memory_order_acquire);
	return s;
}

bool bl_guard_valid(struct bl_guard *g, uint64_t hash, struct bl_snap snap)
{
	/* An odd count: a change was under way at the snapshot. */
	if ((snap.name_seq | snap.dir_seq) & 1)
		return false;
	/* relaxed: the caller's lock orders these after the mutations' begins */
	return atomic_load_explicit(stripe_seq(g, hash), memory_order_relaxed) == snap.name_seq &&
	       atomic_load_explicit(&g->dir_seq, memory_order_relaxed) == snap.dir_seq;
}

void bl_guard_name_begin(struct bl_guard *g, uint64_t hash)
{
	/* relaxed: read under the lock the table change is made under */
	atomic_fetch_add_explicit(stripe_seq(g, hash), 1, memory_order_relaxed);
}

void bl_guard_name_end(struct bl_guard *g, uint64_t hash)
{
	/* release: pairs with bl_guard_snap()'s acquire (see Ordering) */
	atomic_fetch_add_explicit(stripe_seq(g, hash), 1, memory_order_release);
}

void bl_guard_dir_begin(struct bl_guard *g)
{
	atomic_fetch_add_explicit(&g->dir_seq, 1, memory_order_relaxed);
	/* release fence: the odd count before the changes; pairs with walk_seq_retry()'s fence */
	atomic_thread_fence(memory_order_release);
}

void bl_guard_dir_end(struct bl_guard *g)
{
	/* release: the changes before the even count; pairs with walk_seq_begin()'s acquire */
	atomic_fetch_add_explicit(&g->dir_seq, 1, memory_order_release);
}

/* An even dir_seq, waited for while a directory-wide change runs. */
static uint64_t walk_seq_begin(struct bl_guard *g)
{
	for (;;) {
		/* acquire: pairs with dir_end's release (see Ordering) */
		uint64_t seq = atomic_load_explicit(&g->dir_seq, memory_order_acquire);
		if (!(seq & 1))
			return seq;
		sched_yield(); /* the writer may be on this CPU */
	}
}

/* Whether a directory-wide change ran since walk_seq_begin() gave seq. */
static bool walk_seq_retry(struct bl_guard *g, uint64_t seq)
{
	/* acquire fence: the walk's reads before the load; pairs with dir_begin's fence */
	atomic_thread_fence(memory_order_acquire);
	return atomic_load_explicit(&g->dir_seq, memory_order_relaxed) != seq;
}

void *bl_create(const struct impl_config *cfg, size_t size, const struct bl_ops *ops)
{
	size_t bytes = (size + BL_CACHELINE - 1) & ~(size_t)(BL_CACHELINE - 1);
	struct bl_head *h = aligned_alloc(BL_CACHELINE, bytes);

	if (!h) {
		errno = ENOMEM;
		return NULL;
	}
	memset(h, 0, size);
	bl_head_init(h, ops, cfg);
	int r = ops->init(h);
	if (r) {
		bl_destroy(h);
		errno = -r;
		return NULL;
	}
	return h;
}

void bl_destroy(void *c)
{
	struct bl_head *h = c;

	if (!h)
		return;
	h->ops->fini(h);
	free(h);
}

/* ---------------------------------------------------------------------- */
/* The walk */

struct walk {
	struct bl_head *c;
	bl_resolve_fn resolve;
	const struct impl_config *cfg;
	const struct udc_call *call;
	unsigned flags;
	char *buf;  /* the path with a symlink target spliced in; NULL until one is */
	char *link; /* readlink's buffer, in the same allocation */
	/* the directories walked down through, for ".." (the last is the parent) */
	struct udc_attr *stack;
	size_t depth, cap;
	struct udc_attr stack_inline[WALK_STACK_INLINE];
};

static struct udc_attr bl_dir_attr(udc_ino ino)
{
	return (struct udc_attr){ .ino = ino, .type = UDC_TYPE_DIR };
}

static int walk_push(struct walk *w, const struct udc_attr *a)
{
	if (w->depth == w->cap) {
		size_t cap = w->cap * 2;
		struct udc_attr *s = w->stack == w->stack_inline ? NULL : w->stack;
		s = realloc(s, cap * sizeof(*s));
		if (!s)
			return -ENOMEM;
		if (w->stack == w->stack_inline)
			memcpy(s, w->stack_inline, sizeof(w->stack_inline));
		w->stack = s;
		w->cap = cap;
	}
	w->stack[w->depth++] = *a;
	return 0;
}

/*
 * Read symlink ino and replace the walked path by target + rest (rest
 * starts at the '/' after the link's component, or is empty).  Return the
 * new length, or -errno.
 */
static ssize_t walk_splice_link(struct walk *w, udc_ino ino, const char *rest, size_t rlen)
{
	if (!w->buf) {
		w->buf = malloc(2 * UDC_PATH_MAX);
		if (!w->buf)
			return -ENOMEM;
		w->link = w->buf + UDC_PATH_MAX;
	}
	ssize_t n = w->cfg->backend->readlink(w->call ? w->call->ctx : NULL, ino, w->link,
					      UDC_PATH_MAX);
	if (n < 0)
		return n;
	if (n == 0)
		return -ENOENT;
	if ((size_t)n + rlen > UDC_PATH_MAX)
		return -ENAMETOOLONG;
	memmove(w->buf + n, rest, rlen); /* rest may lie in w->buf itself */
	memcpy(w->buf, w->link, (size_t)n);
	return n + (ssize_t)rlen;
}

/* ".." from cur: the root stays, else back where the walk came from, else ask. */
static int walk_dotdot(struct walk *w, const struct udc_attr *cur, struct udc_attr *a)
{
	if (cur->ino == w->cfg->root) {
		*a = bl_dir_attr(w->cfg->root);
		w->depth = 0;
		return 0;
	}
	if (w->depth) {
		*a = w->stack[--w->depth];
		return 0;
	}
	return w->resolve(w->c, cur->ino, "..", 2, w->call, a);
}

/* One pass over the path: 0 with *out filled, or -errno. */
static int bl_walk_once(struct walk *w, udc_ino start, const char *path, size_t len,
		     struct udc_attr *out)
{
	unsigned nlinks = 0;
	struct path_comp comp;
	size_t i = 0;

	w->depth = 0;
	struct udc_attr cur = bl_dir_attr(path[0] == '/' ? w->cfg->root : start);
	int r;

	while ((r = walk_next_name(path, len, &i, cur.type, &comp)) > 0) {
		/* a symlink is followed unless last with no '/' after, and no FOLLOW */
		bool follow = comp.slash_after || (w->flags & UDC_WALK_FOLLOW);
		struct udc_attr a;

		if (name_is_dotdot(comp.name, comp.len)) {
			r = walk_dotdot(w, &cur, &a);
			if (r)
				return r;
			cur = a;
			continue;
		}
		r = w->resolve(w->c, cur.ino, comp.name, comp.len, w->call, &a);
		if (r)
			return r;
		if (a.type != UDC_TYPE_SYMLINK || !follow) {
			r = walk_push(w, &cur);
			if (r)
				return r;
			cur = a;
			continue;
		}
		if (++nlinks > WALK_MAX_SYMLINKS || !w->cfg->backend || !w->cfg->backend->readlink)
			return -ELOOP;
		ssize_t n = walk_splice_link(w, a.ino, path + comp.end, len - comp.end);
		if (n < 0)
			return (int)n;
		path = w->buf;
		len = (size_t)n;
		i = 0;
		if (path[0] == '/') {
			cur = bl_dir_attr(w->cfg->root);
			w->depth = 0;
		}
		/* a relative target resolves from the link's directory: cur */
	}
	if (r < 0)
		return r;

	/* A trailing '/' asks for a directory. */
	if (path_wants_dir(path, len) && !type_may_have_children(cur.type))
		return -ENOTDIR;
	*out = cur;
	return 0;
}

int bl_walk(void *c, udc_ino start, const char *path, size_t len, unsigned flags,
	    const struct udc_call *call, struct udc_attr *out)
{
	int r = walk_check(c, start, path, len, flags);

	if (r)
		return r;

	struct bl_head *h = c;
	struct walk walk = {
		.c = h,
		.resolve = h->ops->resolve,
		.cfg = &h->cfg,
		.call = call,
		.flags = flags,
		.cap = WALK_STACK_INLINE,
	};
	struct walk *w = &walk;
	struct udc_attr a;

	w->stack = w->stack_inline;
	for (;;) {
		uint64_t seq = walk_seq_begin(&h->guard);
		r = bl_walk_once(w, start, path, len, &a);
		if (!walk_seq_retry(&h->guard, seq))
			break;
	}
	free(w->buf);
	if (w->stack != w->stack_inline)
		free(w->stack);
	if (r == 0 && out)
		*out = a;
	return r;
}

/* ---------------------------------------------------------------------- */
/* Memory */

void *bl_alloc(struct bl_mem *m, size_t size)
{
	void *p = calloc(1, size);

	if (p) /* relaxed: a statistic (see Ordering) */
		atomic_fetch_add_explicit(&m->bytes, (int64_t)size, memory_order_relaxed);
	return p;
}

void bl_free(struct bl_mem *m, void *p, size_t size)
{
	if (!p)
		return;
	free(p);
	/* relaxed: a statistic (see Ordering) */
	atomic_fetch_sub_explicit(&m->bytes, (int64_t)size, memory_order_relaxed);
}

uint64_t bl_mem_bytes(const struct bl_mem *m)
{
	/* relaxed: a statistic; frees racing with allocations may dip it below 0 */
	int64_t b = atomic_load_explicit(&m->bytes, memory_order_relaxed);

	return b > 0 ? (uint64_t)b : 0;
}

/* ---------------------------------------------------------------------- */
/* RCU thread registration */

__thread bool bl_rcu_ready;	   /* this thread may use urcu-memb */
static __thread bool bl_rcu_owned; /* and bl_rcu_register_slow() registered it */
static pthread_key_t rcu_exit_key;
static pthread_once_t rcu_exit_once = PTHREAD_ONCE_INIT;

static void rcu_thread_exit(void *arg)
{
	(void)arg;
	if (bl_rcu_owned)
		urcu_memb_unregister_thread();
	bl_rcu_owned = false;
	bl_rcu_ready = false;
}

static void rcu_exit_key_create(void)
{
	if (pthread_key_create(&rcu_exit_key, rcu_thread_exit)) {
		fprintf(stderr, "%s:%d: pthread_key_create failed\n", __FILE__, __LINE__);
		abort();
	}
}

void bl_rcu_register_slow(void)
{
	bl_rcu_ready = true;
	/* Registered already (udcache registers on its first call): once is all urcu allows. */
	if (URCU_TLS(urcu_memb_reader).registered)
		return;
	pthread_once(&rcu_exit_once, rcu_exit_key_create);
	urcu_memb_register_thread();
	bl_rcu_owned = true;
	/* Any non-NULL value makes the destructor run at thread exit. */
	if (pthread_setspecific(rcu_exit_key, &bl_rcu_owned)) {
		fprintf(stderr, "%s:%d: pthread_setspecific failed\n", __FILE__, __LINE__);
		abort();
	}
}
