/* SPDX-License-Identifier: MIT */
/*
 * stress/baselines/kernel.c - impl_kernel: a userspace model of today's
 * Linux dentry cache (fs/dcache.c, mm/list_lru.c, include/linux/lockref.h).
 *
 * Owns: one fixed-size hash table of hlist_bl buckets, the dentries in it,
 * the list_lru shards, the rename_lock, the striped counters and the
 * background shrinker thread.  Written from the kernel's design, not its
 * code; the point is to measure what the kernel's choices cost on the
 * workloads udcache runs, so each piece below says what it models.
 *
 * What models what:
 *  - dentry_hashtable: an array of hlist_bl heads whose lowest pointer bit
 *    is the bucket's lock (hlist_bl_lock: fetch_or acquire, spin; unlock: a
 *    release fetch_and).  RCU readers (urcu-memb) walk a chain with no lock,
 *    as __d_lookup_rcu.  Sized once at create from memory_limit, like the
 *    kernel's boot-time dhash_entries (alloc_large_system_hash, scale 13:
 *    one bucket per 8 KiB of RAM); here the "RAM" is the cache's budget and
 *    a dentry is about 160 bytes, so one bucket per KD_BYTES_PER_BUCKET of
 *    the limit, a power of two within [2^6, 2^21] (2^21: the kernel's size
 *    for 16 GiB).  Never resized (the kernel never resizes it either).
 *  - struct kd_dentry: the name (a copy, inline), the hash, the parent
 *    directory (d_parent, pinned: one reference per child), d_lockref
 *    (the spinlock and the count in one 64-bit word), d_flags and d_inode,
 *    here an udc_attr copied whole (ino UDC_INO_NONE: a negative dentry).
 *  - Directories: lookups name a directory by ino, not by a dentry
 *    pointer the caller holds (the kernel's path walk carries it), so each
 *    directory the cache has seen gets a directory object: a dentry keyed
 *    (ino, "/") in the same table ('/' is in no name), holding d_subdirs
 *    (every child, negatives included), ".." (the parent's ino) and the
 *    directory's own cookie.  A name is hashed by (dir ino, name) and pins
 *    its directory object, as a kernel dentry pins d_parent.  Simplified:
 *    the kernel's directory dentry is one object, both a name in its
 *    parent and the parent of its children; here those are two (the name
 *    may be reclaimed while the directory keeps children, which the kernel
 *    cannot do), and a directory object does not pin its parent's.
 *  - lockref: lookups take a reference with a cmpxchg of the whole word
 *    while the lock is free and the count is not dead (lockref_get_not_dead,
 *    100 tries, then the spinlock), copy the answer, and dput it
 *    (lockref_put_return, then fast_dput's lockless "retain" test, then the
 *    locked path).  That is the kernel's cost: two atomic writes to the
 *    dentry's line on every hit.  No d_seq: names and parents never change
 *    in place (see rename), so a lockless key compare is stable; the
 *    answer is read only while the reference is held.
 *  - list_lru: KD shards, one per 2 CPUs (at least 1, at most
 *    KD_MAX_SHARDS), standing for NUMA nodes; a dentry's shard is that of
 *    the thread that allocated it (the kernel: the node of its memory).
 *    Each shard is a list under a spinlock.  The last dput of a hashed
 *    dentry adds it at the tail if it is not on the LRU (d_lru_add), else
 *    sets DCACHE_REFERENCED (retain_dentry); so a lookup's dput takes the
 *    LRU lock only for a dentry the shrinker took off the LRU while it was
 *    in use.
 *  - The shrinker (prune_dcache_sb -> list_lru_shrink_walk with
 *    dentry_lru_isolate, then shrink_dentry_list): batches of
 *    KD_SHRINK_BATCH (SHRINK_BATCH, 128) walked from the head of one shard
 *    under its lock: a dentry whose d_lock is busy is skipped (LRU_SKIP), one
 *    in use is taken off the LRU (LRU_REMOVED, its last dput puts it back),
 *    a referenced one loses the bit and goes to the tail (LRU_ROTATE), any
 *    other moves to a private dispose list (d_lru_shrink_move).  The
 *    dispose list is freed outside the LRU lock: unhash under the bucket's
 *    bit lock, off the parent's d_subdirs under the parent's d_lock, the
 *    parent's reference dropped (a directory object left unused goes to the
 *    LRU in turn), and the memory freed by call_rcu.
 *  - Pressure: memory is what bl_alloc() counted (dentries with their
 *    names, the table, the cache struct), call_rcu frees still waiting
 *    included.  Nothing is reclaimed until the live bytes (counted minus
 *    those waiting for their grace period) pass memory_limit (0: 64 MiB,
 *    udcache's default).  Past it, with cfg->no_reclaim_thread, the
 *    allocating thread reclaims down to the limit itself (direct
 *    reclaim); otherwise the shrinker thread (kswapd) is woken to reclaim
 *    down to the limit, and an allocating thread that finds the live
 *    bytes past the min watermark, limit + max(limit/256, 128 KiB) (the
 *    kernel's gap between its low and min watermarks is a fraction of a
 *    percent too), reclaims directly as well.  Either way in 128-entry
 *    batches.  A caller that finds the counted bytes past the min
 *    watermark only because frees wait for grace periods waits for them
 *    (rcu_barrier(); callers meanwhile wait for that one): the kernel's
 *    allocation stall when reclaim cannot keep up.  So a cache whose limit
 *    is above what the workload brings in (SIZE_MAX; the stress tool's
 *    1 GiB default on a long trickle) never reclaims anything: negatives
 *    pile up for as long as names are missed, which is the kernel's memory
 *    growing without bound on a trickle of unique misses (it reclaims only
 *    under memory pressure).  bounded = true: bounded by its shrinker
 *    only, as the kernel is under memory pressure.
 *  - Mutations (the embedder's word, where the kernel has a filesystem):
 *    add = d_add/d_instantiate: an unused dentry gets the new attr in
 *    place, a busy one is unhashed and a new one hashed in the same bucket
 *    critical section; add_negative = d_add(dentry, NULL) the same way;
 *    remove = d_delete: an unused dentry turns negative in place, a busy
 *    one is unhashed (its last dput frees it); an uncached name: nothing.
 *    rmdir = shrink_dcache_parent of the directory (every cached child,
 *    negatives included, unhashed and the unused ones freed: O(children)),
 *    the directory object unhashed, then d_delete of its name (a negative
 *    is left when it is unused).  invalidate_dir = the same walk with the
 *    directory object kept ("..": forgotten).  rename = d_move under
 *    rename_lock: both parents' d_locks, the source's and target's d_locks
 *    and both buckets' bit locks; since names are immutable here, the
 *    source is unhashed and a new dentry with its attr is hashed at the
 *    target in one critical section of both buckets (the kernel moves the
 *    dentry and bumps its d_seq).  A directory renamed gets its new parent
 *    for "..", a directory replaced at the target is rmdir'ed.
 *  - resolve = lookup; on a miss a guard snapshot (bl_guard_snap), the
 *    backend call with no lock held, and the answer (positive or negative)
 *    hashed only if bl_guard_valid() holds under the parent's d_lock and
 *    the bucket lock.  That stands for i_rwsem and d_alloc_parallel (which
 *    keep the kernel from caching a lookup that raced with a create or an
 *    unlink); no in-lookup dedup: two threads missing one name both ask.
 *    walk = bl_walk() over resolve, retried on rename_lock's sequence.
 *  - Counters: per-thread stripes (the kernel's percpu nr_dentry,
 *    nr_negative), summed by stats.
 *
 * Locking (outermost first):
 *   rename_lock (a mutex; the kernel's is a seqlock's spinlock) serialises
 *     rename, rmdir and invalidate_dir: the guard's dir_seq is their
 *     sequence (bl_guard_dir_begin/end), and a sequence has one writer at
 *     a time.  It is bl_head.dir_mutex, for common.c's invalidate_dir.  The model holds it across rmdir's O(n) walk; the kernel's
 *     rmdir takes no rename_lock.
 *   directory object d_lock: its d_subdirs, and the creation of children
 *     (every name is hashed with its parent's d_lock held, after checking
 *     the parent is still hashed); every mutation of a name holds it, as
 *     the kernel's i_rwsem.  Two (rename) are taken in address order.
 *   name d_lock (in d_lockref): d_flags, d_attr, the count when slow (a
 *     directory object's: also its ".." and cookie, and its count as
 *     children come and go); nested in the parent's (two children:
 *     rename only, source first).
 *   bucket bit lock: its chain and each dentry's DCACHE_HASHED; nested in
 *     d_lock; two (rename) in address order.
 *   lru shard lock: its list and the dentries' d_lru links on it; nested
 *     in d_lock.  The shrinker holds it and only trylocks d_lock (the
 *     kernel's inversion, LRU_SKIP on failure).  A dentry on a dispose
 *     list is its shrinker's alone: only that shrinker frees it.
 *   Killing a dentry needs its d_lock and its parent's: with the child's
 *   held, trylock the parent, else drop the child, lock parent then child
 *   and check again (lock_for_kill), inside an RCU read-side section so
 *   that the parent's memory stays.
 *   With a parent's d_lock held its set of hashed children is stable: they
 *   are hashed and unhashed only with it held.  So a search of them under
 *   it is authoritative.
 *   wake_lock/wake_cond: the shrinker thread's sleep; a leaf.
 *   throttle_lock: held across rcu_barrier() by a stalled allocator,
 *     with no other lock held.
 *
 * Ordering:
 *   Chain publication: every store of a bucket head or a next pointer is
 *   a release (rcu_assign_pointer) and readers load them with acquire
 *   (rcu_dereference): a reader that reaches a dentry sees its key and
 *   everything written before it was hashed.  An unhashed dentry keeps its
 *   next pointer and is freed by call_rcu: readers in flight may finish.
 *   lockref: a get is an acquire cmpxchg and a put an acq_rel cmpxchg;
 *   lock is an acquire RMW, unlock a release RMW, all on the same word.
 *   d_attr changes in place only with d_lock held and the count 0, so a
 *   reader's get either comes before the lock (the writer then sees the
 *   count and replaces instead) or after the unlock (and reads the new
 *   attr); the put's release keeps the reader's copy before the count
 *   drops.
 *   d_flags is written under d_lock; it is read without the lock only
 *   right after an acquire lockref RMW (fast_dput's retain test, the
 *   lookup's hashed check), which reads from the last unlock: the flags
 *   as the last d_lock holder left them.  (DCACHE_DIR never changes.)
 *   Under a bucket lock the count is read relaxed to skip dead dentries:
 *   dead is final, and a live one is checked again under its d_lock.
 *   ".." and the cookie are relaxed atomics: advisory, as udcache's.
 *   The guard: bl_guard_valid() runs under the parent's d_lock and the
 *   bucket lock; every mutation bumps the name's count (name_begin) before
 *   taking the parent's d_lock (or, for a directory not cached, the
 *   bucket lock its object would be created under), and the
 *   directory-wide changes bump dir_seq before theirs: so a lock
 *   release/acquire chain puts every begin before a check that follows the
 *   change, and a check that precedes it is undone by the change.
 *   Counters are relaxed RMWs: statistics, ordered with nothing.
 *   pending_free is relaxed: an estimate for reclaim's target.
 *
 * Limitations and simplifications (besides those above):
 *   No d_seq, no in-place d_move, no aliases, no mounts, no
 *   d_alloc_parallel (concurrent misses of one name each call the
 *   backend), no memcg; a dentry on a dispose list is freed by its
 *   shrinker only (the kernel lets another killer unlink it and flag
 *   DCACHE_MAY_FREE); rmdir and invalidate_dir walk one level (the model's
 *   directories are flat objects).  A ".." lookup takes two references
 *   (the directory's object, then its parent's for the cookie).  Of the
 *   extended stats only nr_dirs and stale_answers are kept.  Memory counts
 *   the bytes asked of calloc, not the allocator's overhead or the
 *   kernel's slab rounding.
 */
#include "stress/baselines/common.h"

#define _LGPL_SOURCE /* inline read-side fast paths, as the kernel's */
#define URCU_API_MAP /* the flavour-neutral names: rcu_read_lock, call_rcu... */
#include <urcu/urcu-memb.h>
#include <urcu/list.h>

#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define KD_DEFAULT_LIMIT ((size_t)64 << 20) /* memory_limit 0, as udcache */
#define KD_BYTES_PER_BUCKET 256		    /* about one dentry's worth of the budget */
#define KD_MIN_BUCKETS_SHIFT 6
#define KD_MAX_BUCKETS_SHIFT 21
#define KD_MIN_WMARK_GAP ((int64_t)128 << 10) /* min watermark: limit + max(limit/256, this) */
#define KD_SHRINK_BATCH 128		      /* SHRINK_BATCH: entries walked per shrinker batch */
#define KD_MAX_SHARDS 16
#define KD_STAT_SLOTS 64     /* counter stripes (threads beyond share) */
#define KD_LOCKREF_TRIES 100 /* lockref's CMPXCHG_LOOP bound */
#define KD_LOOKUP_RETRIES 3  /* re-walks of a chain after finding an unhashed match */
#define KD_DEAD (-128)	     /* lockref_mark_dead() */

/* d_flags */
#define DCACHE_REFERENCED 0x01	/* hit since the shrinker last saw it */
#define DCACHE_LRU_LIST 0x02	/* on a shard's LRU (or on a dispose list) */
#define DCACHE_SHRINK_LIST 0x04 /* on a shrinker's dispose list */
#define DCACHE_HASHED 0x08	/* in the hash table: the model's !d_unhashed() */
#define DCACHE_DIR 0x10		/* a directory object, keyed (ino, "/") */

/* ---------------------------------------------------------------------- */
/* lockref: spinlock (low 32 bits) and count (high 32 bits) in one word */

#define LR_LOCKED 1ull
#define LR_ONE (1ull << 32)

struct kd_lockref {
	_Atomic uint64_t lock_count;
};

static inline int32_t lr_count(uint64_t v)
{
	return (int32_t)(uint32_t)(v >> 32);
}

static void lockref_lock(struct kd_lockref *lr)
{
	uint64_t old = atomic_load_explicit(&lr->lock_count, memory_order_relaxed);

	for (;;) {
		if (old & LR_LOCKED) {
			caa_cpu_relax();
			old = atomic_load_explicit(&lr->lock_count, memory_order_relaxed);
			continue;
		}
		/* acquire: the fields this lock protects, as its last holder left them */
		if (atomic_compare_exchange_weak_explicit(&lr->lock_count, &old, old | LR_LOCKED,
							  memory_order_acquire,
							  memory_order_relaxed))
			return;
	}
}

/* Fails only if the lock is held (a count change meanwhile is retried). */
static bool lockref_trylock(struct kd_lockref *lr)
{
	uint64_t old = atomic_load_explicit(&lr->lock_count, memory_order_relaxed);

	while (!(old & LR_LOCKED)) {
		/* acquire: as lockref_lock() */
		if (atomic_compare_exchange_weak_explicit(&lr->lock_count, &old, old | LR_LOCKED,
							  memory_order_acquire,
							  memory_order_relaxed))
			return true;
	}
	return false;
}

static void lockref_unlock(struct kd_lockref *lr)
{
	/* release: what was written under the lock, before the next owner's acquire */
	atomic_fetch_and_explicit(&lr->lock_count, ~LR_LOCKED, memory_order_release);
}

/* With the lock held: the holder is the only writer of the word. */
static inline int32_t lockref_count_locked(struct kd_lockref *lr)
{
	return lr_count(atomic_load_explicit(&lr->lock_count, memory_order_relaxed));
}

static inline void lockref_set_locked(struct kd_lockref *lr, int32_t count)
{
	atomic_store_explicit(&lr->lock_count, ((uint64_t)(uint32_t)count << 32) | LR_LOCKED,
			      memory_order_relaxed);
}

/* lockref_get_not_dead(): a reference unless the count is dead. */
static bool lockref_get_not_dead(struct kd_lockref *lr)
{
	uint64_t old = atomic_load_explicit(&lr->lock_count, memory_order_relaxed);

	for (int i = 0; i < KD_LOCKREF_TRIES && !(old & LR_LOCKED); i++) {
		if (lr_count(old) < 0)
			return false;
		/* acquire: pairs with the last unlock (see Ordering: d_attr, d_flags) */
		if (atomic_compare_exchange_weak_explicit(&lr->lock_count, &old, old + LR_ONE,
							  memory_order_acquire,
							  memory_order_relaxed))
			return true;
	}
	lockref_lock(lr);
	int32_t n = lockref_count_locked(lr);
	if (n >= 0)
		lockref_set_locked(lr, n + 1);
	lockref_unlock(lr);
	return n >= 0;
}

/* lockref_put_return(): the new count, or -1 if it must be done locked. */
static int32_t lockref_put_return(struct kd_lockref *lr)
{
	uint64_t old = atomic_load_explicit(&lr->lock_count, memory_order_relaxed);

	for (int i = 0; i < KD_LOCKREF_TRIES && !(old & LR_LOCKED); i++) {
		int32_t n = lr_count(old);
		if (n <= 0)
			return -1;
		/* release: the holder's reads of d_attr before the count drops;
		 * acquire: the flags the retain test reads (see Ordering) */
		if (atomic_compare_exchange_weak_explicit(&lr->lock_count, &old, old - LR_ONE,
							  memory_order_acq_rel,
							  memory_order_relaxed))
			return n - 1;
	}
	return -1;
}

/* ---------------------------------------------------------------------- */
/* hlist_bl: a chain whose head's lowest bit is its lock */

struct kd_bl_head {
	_Atomic uintptr_t first; /* bit 0: the lock */
};

struct kd_bl_node {
	_Atomic uintptr_t next;	  /* the bucket lock; read by RCU walkers */
	_Atomic uintptr_t *pprev; /* the bucket lock; writers only */
};

#define BL_LOCK ((uintptr_t)1)

static void hlist_bl_lock(struct kd_bl_head *b)
{
	for (;;) {
		/* acquire: the chain as the previous holder left it */
		if (!(atomic_fetch_or_explicit(&b->first, BL_LOCK, memory_order_acquire) & BL_LOCK))
			return;
		while (atomic_load_explicit(&b->first, memory_order_relaxed) & BL_LOCK)
			caa_cpu_relax();
	}
}

static void hlist_bl_unlock(struct kd_bl_head *b)
{
	/* release: the chain's changes before the next holder's acquire */
	atomic_fetch_and_explicit(&b->first, ~BL_LOCK, memory_order_release);
}

/* The first node, for an RCU walker. */
static inline struct kd_bl_node *hlist_bl_first_rcu(struct kd_bl_head *b)
{
	/* acquire: rcu_dereference, pairs with the release stores below */
	return (struct kd_bl_node *)(atomic_load_explicit(&b->first, memory_order_acquire) &
				     ~BL_LOCK);
}

static inline struct kd_bl_node *hlist_bl_next_rcu(struct kd_bl_node *n)
{
	/* acquire: rcu_dereference, pairs with the release stores below */
	return (struct kd_bl_node *)atomic_load_explicit(&n->next, memory_order_acquire);
}

/* With b locked. */
static void hlist_bl_add_head_rcu(struct kd_bl_node *n, struct kd_bl_head *b)
{
	uintptr_t first = atomic_load_explicit(&b->first, memory_order_relaxed) & ~BL_LOCK;

	atomic_store_explicit(&n->next, first, memory_order_relaxed); /* n not yet reachable */
	n->pprev = &b->first;
	if (first)
		((struct kd_bl_node *)first)->pprev = &n->next;
	/* release: rcu_assign_pointer, n's fields before n (the lock bit kept) */
	atomic_store_explicit(&b->first, (uintptr_t)n | BL_LOCK, memory_order_release);
}

/* With n's bucket locked.  n->next stays for the readers still on n. */
static void hlist_bl_del_rcu(struct kd_bl_node *n)
{
	uintptr_t next = atomic_load_explicit(&n->next, memory_order_relaxed);
	_Atomic uintptr_t *pprev = n->pprev;
	uintptr_t lock = atomic_load_explicit(pprev, memory_order_relaxed) & BL_LOCK;

	/* release: the successor was published before; keep the chain transitive */
	atomic_store_explicit(pprev, next | lock, memory_order_release);
	if (next)
		((struct kd_bl_node *)next)->pprev = pprev;
	n->pprev = NULL;
}

/* ---------------------------------------------------------------------- */
/* The cache */

enum kd_stat {
	ST_LOOKUPS,
	ST_HITS_POS,
	ST_HITS_NEG,
	ST_MISSES,
	ST_BACKEND,
	ST_EVICT,
	ST_NR_POS, /* deltas; summed, they are the counts held now */
	ST_NR_NEG,
	ST_NR_DIRS,
	ST_STALE,
	KD_NR_STATS
};

union kd_stat_slot {
	_Atomic int64_t v[KD_NR_STATS];
	char line[128]; /* a slot to itself (two lines: the prefetcher pairs them) */
};

union kd_lru {
	struct {
		pthread_spinlock_t lock;
		struct cds_list_head list; /* lock: oldest first */
		long nr_items;		   /* lock */
	};
	char line[64];
};

struct kd_dentry;

struct kd_cache {
	struct bl_head bl; /* first: the shared calls' (common.h) */
	struct impl_config cfg;
	size_t limit;		  /* as configured (stats) */
	int64_t target;		  /* limit, at most INT64_MAX: what reclaim goes down to */
	int64_t min_wmark;	  /* saturated: direct reclaim and the stall past it */
	struct kd_bl_head *table; /* immutable pointer, 1 << shift heads */
	uint64_t mask;
	struct bl_mem mem;
	_Atomic int64_t pending_free; /* bytes handed to call_rcu, not freed yet */
	union kd_lru *lru;	      /* nr_shards */
	unsigned nr_shards;
	_Atomic unsigned lru_cursor; /* the shard the next batch walks */
	pthread_mutex_t rename_lock;
	union kd_stat_slot *stats;     /* KD_STAT_SLOTS */
	pthread_mutex_t throttle_lock; /* the allocation stall: one rcu_barrier() at a time */

	/* The shrinker thread (kswapd). */
	pthread_t shrinker;
	bool has_shrinker;
	pthread_mutex_t wake_lock;
	pthread_cond_t wake_cond;
	bool wake, stop;	   /* wake_lock */
	_Atomic bool wake_pending; /* a wake-up is asked and not yet taken */
};

struct kd_dentry {
	/* RCU lookup touched fields */
	struct kd_bl_node d_hash;    /* bucket bit lock */
	uint64_t d_hashval;	     /* immutable */
	udc_ino d_dir;		     /* immutable: a name's directory; a directory's own ino */
	struct kd_lockref d_lockref; /* d_lock and the count */
	_Atomic uint32_t d_flags;    /* d_lock (lockless reads: see Ordering) */
	uint16_t d_len;		     /* immutable */
	uint8_t d_shard;	     /* immutable: its list_lru shard */

	/* Ref-walk and reclaim fields */
	struct cds_list_head d_lru; /* shard lock, or its dispose list's owner */
	struct kd_cache *d_sb;	    /* immutable */
	struct rcu_head d_rcu;
	union {
		struct {			      /* a name */
			struct kd_dentry *d_parent;   /* immutable; pinned */
			struct cds_list_head d_child; /* d_parent's d_lock */
			struct udc_attr d_attr;	      /* d_lock, changed at count 0 only;
							 * read holding a reference;
							 * ino UDC_INO_NONE: negative */
		};
		struct {				/* a directory object */
			struct cds_list_head d_subdirs; /* d_lock */
			_Atomic udc_ino d_pino;		/* "..": written under d_lock */
			_Atomic uint64_t d_cookie;	/* its own cookie: the same */
		};
	};
	char d_name[]; /* immutable, d_len bytes, no NUL */
};

struct kd_key {
	udc_ino dir;
	const char *name;
	size_t len;
	uint64_t hash;
};

static _Atomic unsigned kd_next_slot;
static __thread int kd_slot = -1; /* this thread's counter stripe and LRU shard */

static inline unsigned kd_my_slot(void)
{
	if (__builtin_expect(kd_slot < 0, 0)) /* relaxed: a distinct number is all it needs */
		kd_slot = (int)(atomic_fetch_add_explicit(&kd_next_slot, 1, memory_order_relaxed) %
				KD_STAT_SLOTS);
	return (unsigned)kd_slot;
}

static inline void kd_stat_add(struct kd_cache *c, enum kd_stat s, int64_t n)
{
	/* relaxed: a statistic */
	atomic_fetch_add_explicit(&c->stats[kd_my_slot()].v[s], n, memory_order_relaxed);
}

static inline struct kd_bl_head *kd_bucket(struct kd_cache *c, uint64_t hash)
{
	return &c->table[hash & c->mask];
}

static inline size_t kd_dentry_size(const struct kd_dentry *d)
{
	return sizeof(*d) + d->d_len;
}

static inline uint32_t d_flags(const struct kd_dentry *d)
{
	return atomic_load_explicit(&d->d_flags, memory_order_relaxed);
}

/* With d_lock held. */
static inline void d_flags_set(struct kd_dentry *d, uint32_t set, uint32_t clear)
{
	atomic_store_explicit(&d->d_flags, (d_flags(d) | set) & ~clear, memory_order_relaxed);
}

static inline bool d_key_match(const struct kd_dentry *d, const struct kd_key *k)
{
	return d->d_hashval == k->hash && d->d_dir == k->dir && d->d_len == k->len &&
	       memcmp(d->d_name, k->name, k->len) == 0;
}

static inline struct kd_dentry *d_of(struct kd_bl_node *n)
{
	return caa_container_of(n, struct kd_dentry, d_hash);
}

static struct kd_key kd_key_name(struct kd_cache *c, udc_ino dir, const char *name, size_t len)
{
	return (struct kd_key){ .dir = dir,
				.name = name,
				.len = len,
				.hash = bl_hash(c->cfg.hash_key, dir, name, len) };
}

static struct kd_key kd_key_dir(struct kd_cache *c, udc_ino ino)
{
	return kd_key_name(c, ino, "/", 1);
}

/* ---------------------------------------------------------------------- */
/* Allocation and freeing */

/* d_alloc(): count 1 (the caller's), unhashed, on no list. */
static struct kd_dentry *d_alloc(struct kd_cache *c, const struct kd_key *k, bool dir)
{
	struct kd_dentry *d = bl_alloc(&c->mem, sizeof(*d) + k->len);

	if (!d)
		return NULL;
	d->d_hashval = k->hash;
	d->d_dir = k->dir;
	d->d_len = (uint16_t)k->len;
	d->d_shard = (uint8_t)(kd_my_slot() % c->nr_shards);
	d->d_sb = c;
	memcpy(d->d_name, k->name, k->len);
	atomic_init(&d->d_lockref.lock_count, LR_ONE);
	CDS_INIT_LIST_HEAD(&d->d_lru);
	if (dir) {
		atomic_init(&d->d_flags, DCACHE_DIR);
		CDS_INIT_LIST_HEAD(&d->d_subdirs);
		atomic_init(&d->d_pino, UDC_INO_NONE);
		atomic_init(&d->d_cookie, 0);
	} else {
		atomic_init(&d->d_flags, 0);
		CDS_INIT_LIST_HEAD(&d->d_child);
	}
	return d;
}

/* A dentry never hashed. */
static void d_free_now(struct kd_cache *c, struct kd_dentry *d)
{
	bl_free(&c->mem, d, kd_dentry_size(d));
}

static void d_free_rcu_cb(struct rcu_head *head)
{
	struct kd_dentry *d = caa_container_of(head, struct kd_dentry, d_rcu);
	struct kd_cache *c = d->d_sb;
	size_t size = kd_dentry_size(d);

	/* relaxed: an estimate for reclaim's target */
	atomic_fetch_sub_explicit(&c->pending_free, (int64_t)size, memory_order_relaxed);
	bl_free(&c->mem, d, size);
}

/* dentry_free(): after a grace period, for the RCU walkers still on it. */
static void d_free_rcu(struct kd_cache *c, struct kd_dentry *d)
{
	/* relaxed: an estimate for reclaim's target */
	atomic_fetch_add_explicit(&c->pending_free, (int64_t)kd_dentry_size(d),
				  memory_order_relaxed);
	call_rcu(&d->d_rcu, d_free_rcu_cb);
}

/* The kind counters a dentry is in (positive, negative, directory). */
static void d_count_kind(struct kd_cache *c, const struct kd_dentry *d, int64_t n)
{
	if (d_flags(d) & DCACHE_DIR)
		kd_stat_add(c, ST_NR_DIRS, n);
	else if (d->d_attr.ino == UDC_INO_NONE)
		kd_stat_add(c, ST_NR_NEG, n);
	else
		kd_stat_add(c, ST_NR_POS, n);
}

/* ---------------------------------------------------------------------- */
/* Hashing, the LRU */

/* __d_drop(): with d_lock held. */
static void __d_drop(struct kd_cache *c, struct kd_dentry *d)
{
	if (!(d_flags(d) & DCACHE_HASHED))
		return;
	struct kd_bl_head *b = kd_bucket(c, d->d_hashval);
	hlist_bl_lock(b);
	hlist_bl_del_rcu(&d->d_hash);
	d_flags_set(d, 0, DCACHE_HASHED);
	hlist_bl_unlock(b);
}

/* With d's bucket locked; d new (or d_lock held). */
static void __d_rehash_locked(struct kd_cache *c, struct kd_dentry *d)
{
	d_flags_set(d, DCACHE_HASHED, 0);
	hlist_bl_add_head_rcu(&d->d_hash, kd_bucket(c, d->d_hashval));
}

/* d_lru_add(): with d_lock held, d not on the LRU. */
static void d_lru_add(struct kd_cache *c, struct kd_dentry *d)
{
	union kd_lru *l = &c->lru[d->d_shard];

	d_flags_set(d, DCACHE_LRU_LIST, 0);
	pthread_spin_lock(&l->lock);
	cds_list_add_tail(&d->d_lru, &l->list);
	l->nr_items++;
	pthread_spin_unlock(&l->lock);
}

/* d_lru_del(): with d_lock held, d on the LRU (not on a dispose list). */
static void d_lru_del(struct kd_cache *c, struct kd_dentry *d)
{
	union kd_lru *l = &c->lru[d->d_shard];

	d_flags_set(d, 0, DCACHE_LRU_LIST);
	pthread_spin_lock(&l->lock);
	cds_list_del_init(&d->d_lru);
	l->nr_items--;
	pthread_spin_unlock(&l->lock);
}

/* ---------------------------------------------------------------------- */
/* Killing and dput */

static void dput(struct kd_cache *c, struct kd_dentry *d);

/*
 * lock_for_kill(): with d locked and its count 0, also lock its parent.
 * False (d still locked, parent not) if d was taken meanwhile, or went on
 * a dispose list that is not the caller's.  Call in an RCU read section.
 */
static bool lock_for_kill(struct kd_dentry *d, bool shrink_owner)
{
	struct kd_dentry *p = (d_flags(d) & DCACHE_DIR) ? NULL : d->d_parent;

	if (!p || lockref_trylock(&p->d_lockref))
		return true;
	lockref_unlock(&d->d_lockref);
	lockref_lock(&p->d_lockref);
	lockref_lock(&d->d_lockref);
	if (lockref_count_locked(&d->d_lockref) == 0 &&
	    (shrink_owner || !(d_flags(d) & DCACHE_SHRINK_LIST)))
		return true;
	lockref_unlock(&p->d_lockref);
	return false;
}

/*
 * __dentry_kill(): d locked, count 0, alive, on no dispose list; its
 * parent p (NULL for a directory object) locked.  Unhashes, unlinks and
 * frees d, unlocks d (not p).  True if p's count fell to 0: the caller
 * then owes p its last-reference handling (d_last_ref()).
 */
static bool __dentry_kill(struct kd_cache *c, struct kd_dentry *d, struct kd_dentry *p)
{
	bool parent_last = false;

	lockref_set_locked(&d->d_lockref, KD_DEAD);
	__d_drop(c, d);
	if (d_flags(d) & DCACHE_LRU_LIST)
		d_lru_del(c, d);
	if (p) {
		cds_list_del(&d->d_child);
		int32_t n = lockref_count_locked(&p->d_lockref) - 1;
		lockref_set_locked(&p->d_lockref, n);
		parent_last = n == 0;
	}
	d_count_kind(c, d, -1);
	lockref_unlock(&d->d_lockref);
	d_free_rcu(c, d);
	return parent_last;
}

/*
 * The last reference to d went (d locked, count 0, alive): retain it on
 * the LRU if it is hashed (retain_dentry, d_lru_add), else kill it and
 * then its parent if that was the parent's last reference.  Unlocks d.
 * Call in an RCU read section.
 */
static void d_last_ref(struct kd_cache *c, struct kd_dentry *d)
{
	for (;;) {
		uint32_t f = d_flags(d);

		if (f & DCACHE_HASHED) {
			if (!(f & DCACHE_LRU_LIST))
				d_lru_add(c, d);
			else if (!(f & DCACHE_REFERENCED))
				d_flags_set(d, DCACHE_REFERENCED, 0);
			lockref_unlock(&d->d_lockref);
			return;
		}
		if (f & DCACHE_SHRINK_LIST) { /* its shrinker frees it */
			lockref_unlock(&d->d_lockref);
			return;
		}
		struct kd_dentry *p = (f & DCACHE_DIR) ? NULL : d->d_parent;
		if (!lock_for_kill(d, false)) {
			lockref_unlock(&d->d_lockref);
			return;
		}
		if (!__dentry_kill(c, d, p)) {
			if (p)
				lockref_unlock(&p->d_lockref);
			return;
		}
		d = p; /* locked, count 0 (a directory object: the loop ends there) */
	}
}

/* dput(): drop a reference (fast_dput, then the locked path). */
static void dput(struct kd_cache *c, struct kd_dentry *d)
{
	rcu_read_lock();
	int32_t n = lockref_put_return(&d->d_lockref);
	if (n > 0)
		goto out;
	if (n == 0) {
		/* Lockless retain_dentry(): hashed, on the LRU, referenced. */
		uint32_t want = DCACHE_HASHED | DCACHE_LRU_LIST | DCACHE_REFERENCED;
		if ((d_flags(d) & want) == want)
			goto out;
		lockref_lock(&d->d_lockref);
		if (lockref_count_locked(&d->d_lockref) != 0) { /* taken again, or dead */
			lockref_unlock(&d->d_lockref);
			goto out;
		}
	} else {
		lockref_lock(&d->d_lockref);
		n = lockref_count_locked(&d->d_lockref) - 1;
		lockref_set_locked(&d->d_lockref, n);
		if (n > 0) {
			lockref_unlock(&d->d_lockref);
			goto out;
		}
	}
	d_last_ref(c, d);
out:
	rcu_read_unlock();
}

/* ---------------------------------------------------------------------- */
/* Lookups in the table */

/*
 * A reference to the hashed dentry of k, or NULL.  Call in an RCU read
 * section.  A match found unhashed once the reference is taken (unhashed
 * meanwhile) makes the chain be walked again, KD_LOOKUP_RETRIES times;
 * after that its answer stands (it was current while the walk ran).
 */
static struct kd_dentry *d_lookup_rcu(struct kd_cache *c, const struct kd_key *k, bool exact)
{
	struct kd_bl_head *b = kd_bucket(c, k->hash);

	for (int attempt = 0;; attempt++) {
		bool again = false;
		for (struct kd_bl_node *n = hlist_bl_first_rcu(b); n; n = hlist_bl_next_rcu(n)) {
			struct kd_dentry *d = d_of(n);
			if (!d_key_match(d, k) || !lockref_get_not_dead(&d->d_lockref))
				continue;
			if (!(d_flags(d) & DCACHE_HASHED) &&
			    (exact || attempt < KD_LOOKUP_RETRIES)) {
				dput(c, d);
				again = true;
				continue;
			}
			return d;
		}
		if (!again || (exact && attempt >= KD_LOOKUP_RETRIES))
			return NULL;
	}
}

/* With b locked: whether a live hashed dentry of k is on it. */
static bool d_present_locked(struct kd_bl_head *b, const struct kd_key *k)
{
	for (struct kd_bl_node *n = hlist_bl_first_rcu(b); n; n = hlist_bl_next_rcu(n)) {
		struct kd_dentry *d = d_of(n);
		/* relaxed: a dead count is final; a live one is rechecked by the caller */
		if (d_key_match(d, k) && lr_count(atomic_load_explicit(&d->d_lockref.lock_count,
								       memory_order_relaxed)) >= 0)
			return true;
	}
	return false;
}

/*
 * The directory object of ino, referenced, or NULL.  With create, made
 * if missing (NULL then means ENOMEM).  Without, NULL is authoritative:
 * checked under the bucket lock an object would be created under (see
 * Ordering: the guard).  Call with no lock held.
 */
static struct kd_dentry *d_dir_get(struct kd_cache *c, udc_ino ino, bool create)
{
	struct kd_key k = kd_key_dir(c, ino);
	struct kd_bl_head *b = kd_bucket(c, k.hash);
	struct kd_dentry *d, *fresh = NULL;

	for (;;) {
		rcu_read_lock();
		d = d_lookup_rcu(c, &k, true);
		rcu_read_unlock();
		if (d) {
			if (fresh)
				d_free_now(c, fresh);
			return d;
		}
		if (create && !fresh) {
			fresh = d_alloc(c, &k, true);
			if (!fresh)
				return NULL;
		}
		hlist_bl_lock(b);
		if (d_present_locked(b, &k)) { /* hashed meanwhile: take it by RCU */
			hlist_bl_unlock(b);
			continue;
		}
		if (fresh) {
			__d_rehash_locked(c, fresh);
			d_count_kind(c, fresh, 1);
		}
		hlist_bl_unlock(b);
		return fresh;
	}
}

/*
 * With parent p locked (hashed): the hashed child of p named by k,
 * locked, or NULL.  Authoritative (see Locking).
 */
static struct kd_dentry *d_child_lock(struct kd_cache *c, const struct kd_key *k)
{
	struct kd_bl_head *b = kd_bucket(c, k->hash);

	rcu_read_lock();
	for (struct kd_bl_node *n = hlist_bl_first_rcu(b); n; n = hlist_bl_next_rcu(n)) {
		struct kd_dentry *d = d_of(n);
		if (!d_key_match(d, k))
			continue;
		lockref_lock(&d->d_lockref);
		if ((d_flags(d) & DCACHE_HASHED) && lockref_count_locked(&d->d_lockref) >= 0) {
			rcu_read_unlock();
			return d;
		}
		lockref_unlock(&d->d_lockref);
	}
	rcu_read_unlock();
	return NULL;
}

/*
 * The directory object of ino, referenced and locked, hashed; made if
 * missing with create.  NULL: none (without create) or ENOMEM.
 */
static struct kd_dentry *d_dir_lock(struct kd_cache *c, udc_ino ino, bool create)
{
	for (;;) {
		struct kd_dentry *p = d_dir_get(c, ino, create);
		if (!p)
			return NULL;
		lockref_lock(&p->d_lockref);
		if (d_flags(p) & DCACHE_HASHED)
			return p;
		lockref_unlock(&p->d_lockref); /* rmdir'ed meanwhile: its successor */
		dput(c, p);
	}
}

static void d_dir_unlock_put(struct kd_cache *c, struct kd_dentry *p)
{
	lockref_unlock(&p->d_lockref);
	dput(c, p);
}

/*
 * d_add(): hash the new name n (count 1, unhashed) as a child of p; p
 * locked and hashed, and no hashed child of that name (the caller
 * checked, under p's lock).  With snap, only if the guard still holds;
 * false then, and n is left as it was.
 */
static bool d_add_locked(struct kd_cache *c, struct kd_dentry *p, struct kd_dentry *n,
			 const struct bl_snap *snap)
{
	struct kd_bl_head *b = kd_bucket(c, n->d_hashval);

	hlist_bl_lock(b);
	if (snap && !bl_guard_valid(&c->bl.guard, n->d_hashval, *snap)) {
		hlist_bl_unlock(b);
		return false;
	}
	n->d_parent = p;
	lockref_set_locked(&p->d_lockref, lockref_count_locked(&p->d_lockref) + 1);
	cds_list_add(&n->d_child, &p->d_subdirs);
	__d_rehash_locked(c, n);
	hlist_bl_unlock(b);
	d_count_kind(c, n, 1);
	return true;
}

/*
 * Replace hashed d (locked, child of locked p, count > 0) by new n in
 * one critical section of the bucket: lookups see one or the other.
 * d stays locked; its last dput frees it.
 */
static void d_replace_locked(struct kd_cache *c, struct kd_dentry *p, struct kd_dentry *d,
			     struct kd_dentry *n)
{
	struct kd_bl_head *b = kd_bucket(c, d->d_hashval);

	n->d_parent = p;
	lockref_set_locked(&p->d_lockref, lockref_count_locked(&p->d_lockref) + 1);
	cds_list_add(&n->d_child, &p->d_subdirs);
	hlist_bl_lock(b);
	hlist_bl_del_rcu(&d->d_hash);
	d_flags_set(d, 0, DCACHE_HASHED);
	__d_rehash_locked(c, n);
	hlist_bl_unlock(b);
	d_count_kind(c, n, 1);
}

/* d_instantiate() in place: d locked, count 0. */
static void d_set_attr_locked(struct kd_cache *c, struct kd_dentry *d, const struct udc_attr *a)
{
	d_count_kind(c, d, -1);
	if (a)
		d->d_attr = *a;
	else
		d->d_attr = (struct udc_attr){ .ino = UDC_INO_NONE };
	d_count_kind(c, d, 1);
}

/* ---------------------------------------------------------------------- */
/* The shrinker */

enum lru_status {
	LRU_REMOVED,
	LRU_ROTATE,
	LRU_SKIP
};

/* dentry_lru_isolate(): with the shard locked. */
static enum lru_status dentry_lru_isolate(union kd_lru *l, struct kd_dentry *d,
					  struct cds_list_head *dispose)
{
	if (!lockref_trylock(&d->d_lockref))
		return LRU_SKIP;
	if (lockref_count_locked(&d->d_lockref) != 0) {
		/* In use: off the LRU (d_lru_isolate); its last dput puts it back. */
		d_flags_set(d, 0, DCACHE_LRU_LIST);
		cds_list_del_init(&d->d_lru);
		l->nr_items--;
		lockref_unlock(&d->d_lockref);
		return LRU_REMOVED;
	}
	if (d_flags(d) & DCACHE_REFERENCED) {
		d_flags_set(d, 0, DCACHE_REFERENCED);
		lockref_unlock(&d->d_lockref);
		return LRU_ROTATE;
	}
	/* d_lru_shrink_move(): DCACHE_LRU_LIST stays, as in the kernel. */
	d_flags_set(d, DCACHE_SHRINK_LIST, 0);
	cds_list_move(&d->d_lru, dispose);
	l->nr_items--;
	lockref_unlock(&d->d_lockref);
	return LRU_REMOVED;
}

/* list_lru_walk_one(): up to *nr_to_walk entries of shard l. */
static void list_lru_walk_one(union kd_lru *l, struct cds_list_head *dispose,
			      unsigned long *nr_to_walk)
{
	struct kd_dentry *d, *tmp;

	pthread_spin_lock(&l->lock);
	cds_list_for_each_entry_safe(d, tmp, &l->list, d_lru) {
		if (!*nr_to_walk)
			break;
		--*nr_to_walk;
		if (dentry_lru_isolate(l, d, dispose) == LRU_ROTATE) {
			cds_list_del(&d->d_lru);
			cds_list_add_tail(&d->d_lru, &l->list);
		}
	}
	pthread_spin_unlock(&l->lock);
}

/* d_shrink_del(): d locked, off its shrinker's dispose list. */
static void d_shrink_del(struct kd_dentry *d)
{
	cds_list_del_init(&d->d_lru);
	d_flags_set(d, 0, DCACHE_SHRINK_LIST | DCACHE_LRU_LIST);
}

/* shrink_dentry_list(): free what the walk isolated; returns how many. */
static unsigned long shrink_dentry_list(struct kd_cache *c, struct cds_list_head *dispose)
{
	unsigned long freed = 0;

	while (!cds_list_empty(dispose)) {
		struct kd_dentry *d = cds_list_entry(dispose->prev, struct kd_dentry, d_lru);

		rcu_read_lock();
		lockref_lock(&d->d_lockref);
		if (lockref_count_locked(&d->d_lockref) != 0 || !lock_for_kill(d, true)) {
			d_shrink_del(d); /* in use again: its last dput keeps or frees it */
			lockref_unlock(&d->d_lockref);
			rcu_read_unlock();
			continue;
		}
		struct kd_dentry *p = (d_flags(d) & DCACHE_DIR) ? NULL : d->d_parent;
		d_shrink_del(d);
		kd_stat_add(c, ST_EVICT, 1);
		freed++;
		if (__dentry_kill(c, d, p))
			d_last_ref(c, p);
		else if (p)
			lockref_unlock(&p->d_lockref);
		rcu_read_unlock();
	}
	return freed;
}

static int64_t kd_live_bytes(struct kd_cache *c)
{
	/* relaxed: an estimate */
	return (int64_t)bl_mem_bytes(&c->mem) -
	       atomic_load_explicit(&c->pending_free, memory_order_relaxed);
}

static long kd_lru_items(struct kd_cache *c)
{
	long n = 0;

	for (unsigned i = 0; i < c->nr_shards; i++) {
		pthread_spin_lock(&c->lru[i].lock);
		n += c->lru[i].nr_items;
		pthread_spin_unlock(&c->lru[i].lock);
	}
	return n;
}

/*
 * prune_dcache_sb() until the live bytes are within the limit: batches of
 * KD_SHRINK_BATCH, the shards in turn.  Gives up when the batches stop
 * freeing (everything left in use, or rotated past twice).
 */
static void kd_reclaim(struct kd_cache *c)
{
	long idle = 0, idle_max = -1;

	while (kd_live_bytes(c) > c->target) {
		/* relaxed: spreads the batches over the shards, nothing more */
		unsigned s = atomic_fetch_add_explicit(&c->lru_cursor, 1, memory_order_relaxed) %
			     c->nr_shards;
		unsigned long nr_to_walk = KD_SHRINK_BATCH;
		CDS_LIST_HEAD(dispose);

		list_lru_walk_one(&c->lru[s], &dispose, &nr_to_walk);
		if (shrink_dentry_list(c, &dispose)) {
			idle = 0;
			continue;
		}
		if (idle_max < 0) {
			long items = kd_lru_items(c);
			if (items == 0)
				return;
			idle_max = 2 * (items / KD_SHRINK_BATCH + 1) * (long)c->nr_shards;
		}
		if (++idle > idle_max)
			return;
	}
}

/* Past the min watermark only because frees wait for their grace periods. */
static bool kd_frees_behind(struct kd_cache *c)
{
	return bl_mem_bytes(&c->mem) > (uint64_t)c->min_wmark && kd_live_bytes(c) <= c->min_wmark;
}

/*
 * The allocation stall: a caller that finds kd_frees_behind() waits for
 * the frees to land (rcu_barrier()); callers that come meanwhile wait for
 * that one and look again, so that no allocator outruns the frees.
 */
static void kd_throttle(struct kd_cache *c)
{
	if (!kd_frees_behind(c))
		return;
	pthread_mutex_lock(&c->throttle_lock);
	if (kd_frees_behind(c))
		rcu_barrier();
	pthread_mutex_unlock(&c->throttle_lock);
}

static void kd_wake_shrinker(struct kd_cache *c)
{
	/* relaxed: the mutex below orders the wake-up itself */
	if (atomic_exchange_explicit(&c->wake_pending, true, memory_order_relaxed))
		return;
	pthread_mutex_lock(&c->wake_lock);
	c->wake = true;
	pthread_cond_signal(&c->wake_cond);
	pthread_mutex_unlock(&c->wake_lock);
}

/* After an allocation: reclaim if over the limit (with no lock held). */
static void kd_balance(struct kd_cache *c)
{
	if (bl_mem_bytes(&c->mem) <= (uint64_t)c->target)
		return;
	if (kd_live_bytes(c) > c->target) {
		if (!c->has_shrinker || kd_live_bytes(c) > c->min_wmark)
			kd_reclaim(c); /* direct reclaim */
		else
			kd_wake_shrinker(c);
	}
	kd_throttle(c);
}

static void *kd_shrinker_main(void *arg)
{
	struct kd_cache *c = arg;

	bl_rcu_enter();
	pthread_mutex_lock(&c->wake_lock);
	while (!c->stop) {
		if (!c->wake) {
			pthread_cond_wait(&c->wake_cond, &c->wake_lock);
			continue;
		}
		c->wake = false;
		pthread_mutex_unlock(&c->wake_lock);
		/* relaxed: a wake-up asked from here on signals again */
		atomic_store_explicit(&c->wake_pending, false, memory_order_relaxed);
		kd_reclaim(c);
		kd_throttle(c);
		pthread_mutex_lock(&c->wake_lock);
	}
	pthread_mutex_unlock(&c->wake_lock);
	return NULL;
}

/* ---------------------------------------------------------------------- */
/* Directory-wide changes */

/*
 * shrink_dcache_parent() of directory ino, with rename_lock held: every
 * cached child unhashed, the unused ones freed now, the busy ones (and
 * those on a dispose list) by their last dput (their shrinker); ".."
 * forgotten.  With drop, the directory object is unhashed too (rmdir).
 */
static void d_forget_dir(struct kd_cache *c, udc_ino ino, bool drop)
{
	struct kd_dentry *d, *tmp;

	if (ino == UDC_INO_NONE)
		return;
	struct kd_dentry *p = d_dir_lock(c, ino, false);
	if (!p)
		return;
	rcu_read_lock();
	cds_list_for_each_entry_safe(d, tmp, &p->d_subdirs, d_child) {
		lockref_lock(&d->d_lockref);
		__d_drop(c, d);
		if (lockref_count_locked(&d->d_lockref) == 0 && !(d_flags(d) & DCACHE_SHRINK_LIST))
			__dentry_kill(c, d, p); /* p's count stays > 0: ours */
		else
			lockref_unlock(&d->d_lockref);
	}
	atomic_store_explicit(&p->d_pino, UDC_INO_NONE, memory_order_relaxed);
	if (drop)
		__d_drop(c, p);
	rcu_read_unlock();
	d_dir_unlock_put(c, p);
}

/* A directory lost its name in parent: ".." no longer known. */
static void d_dir_unparent(struct kd_cache *c, udc_ino ino, udc_ino parent)
{
	struct kd_dentry *p = d_dir_lock(c, ino, false);

	if (!p)
		return;
	if (atomic_load_explicit(&p->d_pino, memory_order_relaxed) == parent)
		atomic_store_explicit(&p->d_pino, UDC_INO_NONE, memory_order_relaxed);
	d_dir_unlock_put(c, p);
}

/* d_splice_alias()/d_move() of a directory: ".." is parent now. */
static void d_dir_reparent(struct kd_dentry *child, udc_ino parent)
{
	lockref_lock(&child->d_lockref);
	atomic_store_explicit(&child->d_pino, parent, memory_order_relaxed);
	lockref_unlock(&child->d_lockref);
}

/* The directory's own cookie (what its ".." answers give). */
static void d_dir_set_cookie(struct kd_dentry *dir, uint64_t cookie)
{
	lockref_lock(&dir->d_lockref);
	atomic_store_explicit(&dir->d_cookie, cookie, memory_order_relaxed);
	lockref_unlock(&dir->d_lockref);
}

/* ---------------------------------------------------------------------- */
/* The interface: lookups */

/* ".." of dir: the root's is the root; others' from the directory object. */
static int kd_lookup_dotdot(struct kd_cache *c, udc_ino dir, struct udc_attr *out)
{
	udc_ino parent = dir == c->cfg.root ? c->cfg.root : UDC_INO_NONE;
	uint64_t cookie = 0;
	struct kd_key k;
	struct kd_dentry *d;

	kd_stat_add(c, ST_LOOKUPS, 1);
	rcu_read_lock();
	if (parent == UDC_INO_NONE) {
		k = kd_key_dir(c, dir);
		d = d_lookup_rcu(c, &k, false);
		if (d) {
			parent = atomic_load_explicit(&d->d_pino, memory_order_relaxed);
			dput(c, d);
		}
	}
	if (parent != UDC_INO_NONE) {
		k = kd_key_dir(c, parent);
		d = d_lookup_rcu(c, &k, false);
		if (d) {
			cookie = atomic_load_explicit(&d->d_cookie, memory_order_relaxed);
			dput(c, d);
		}
	}
	rcu_read_unlock();
	if (parent == UDC_INO_NONE) {
		kd_stat_add(c, ST_MISSES, 1);
		return UDC_MISS;
	}
	kd_stat_add(c, ST_HITS_POS, 1);
	if (out)
		*out = (struct udc_attr){ .ino = parent, .type = UDC_TYPE_DIR, .cookie = cookie };
	return UDC_POSITIVE;
}

/* __d_lookup_rcu() + dget + copy + dput, uncounted. */
static int kd_peek(struct kd_cache *c, const struct kd_key *k, struct udc_attr *out)
{
	int r = UDC_MISS;

	rcu_read_lock();
	struct kd_dentry *d = d_lookup_rcu(c, k, false);
	if (d) {
		if (d->d_attr.ino == UDC_INO_NONE) {
			r = UDC_NEGATIVE;
		} else {
			r = UDC_POSITIVE;
			if (out)
				*out = d->d_attr;
		}
		dput(c, d);
	}
	rcu_read_unlock();
	return r;
}

static int kd_lookup_name(struct kd_cache *c, const struct kd_key *k, struct udc_attr *out)
{
	int r = kd_peek(c, k, out);

	kd_stat_add(c, ST_LOOKUPS, 1);
	if (r == UDC_POSITIVE)
		kd_stat_add(c, ST_HITS_POS, 1);
	else if (r == UDC_NEGATIVE)
		kd_stat_add(c, ST_HITS_NEG, 1);
	else
		kd_stat_add(c, ST_MISSES, 1);
	return r;
}

static int kd_lookup(void *cv, udc_ino dir, const char *name, size_t len, struct udc_attr *out)
{
	struct kd_cache *c = cv;
	int r = bl_check_rcu(c, dir, name, len);

	if (r)
		return r;
	if (name_is_dotdot(name, len))
		return kd_lookup_dotdot(c, dir, out);
	struct kd_key k = kd_key_name(c, dir, name, len);
	return kd_lookup_name(c, &k, out);
}

/* ".." unknown: ask the backend, record the answer unless invalidated meanwhile. */
static int kd_resolve_dotdot(struct kd_cache *c, udc_ino dir, const struct udc_call *call,
			     struct udc_attr *out)
{
	struct kd_key k = kd_key_name(c, dir, "..", 2);
	struct bl_snap snap = bl_guard_snap(&c->bl.guard, k.hash);
	struct udc_attr a;

	kd_stat_add(c, ST_BACKEND, 1);
	int r = bl_backend_lookup(&c->cfg, call, dir, "..", 2, &a);
	if (r == 0 && a.type != UDC_TYPE_DIR)
		r = -EIO;
	if (r)
		return r;
	struct kd_dentry *pp = d_dir_get(c, a.ino, true);
	struct kd_dentry *p = pp ? d_dir_lock(c, dir, true) : NULL;
	if (p) {
		if (bl_guard_valid(&c->bl.guard, k.hash, snap)) {
			atomic_store_explicit(&p->d_pino, a.ino, memory_order_relaxed);
			d_dir_unlock_put(c, p);
			d_dir_set_cookie(pp, a.cookie);
		} else {
			kd_stat_add(c, ST_STALE, 1);
			d_dir_unlock_put(c, p);
		}
	}
	if (pp)
		dput(c, pp);
	if (out)
		*out = a;
	kd_balance(c);
	return 0;
}

/* Cache a backend answer (a NULL: negative) if the guard still holds. */
static void kd_cache_answer(struct kd_cache *c, const struct kd_key *k, const struct udc_attr *a,
			    struct bl_snap snap)
{
	struct kd_dentry *n = d_alloc(c, k, false);

	if (!n)
		return;
	n->d_attr = a ? *a : (struct udc_attr){ .ino = UDC_INO_NONE };
	struct kd_dentry *child = a && a->type == UDC_TYPE_DIR ? d_dir_get(c, a->ino, true) : NULL;
	struct kd_dentry *p = d_dir_lock(c, k->dir, true);
	bool added = false;
	if (p) {
		struct kd_dentry *d = d_child_lock(c, k);
		if (d) /* cached meanwhile (a mutation, or another resolve): keep it */
			lockref_unlock(&d->d_lockref);
		else if (!(added = d_add_locked(c, p, n, &snap)))
			kd_stat_add(c, ST_STALE, 1);
		d_dir_unlock_put(c, p);
	}
	if (added) {
		if (child) {
			d_dir_reparent(child, k->dir);
			d_dir_set_cookie(child, a->cookie);
		}
		dput(c, n); /* the creator's reference: onto the LRU */
	} else {
		d_free_now(c, n);
	}
	if (child)
		dput(c, child);
}

static int kd_resolve(void *cv, udc_ino dir, const char *name, size_t len,
		      const struct udc_call *call, struct udc_attr *out)
{
	struct kd_cache *c = cv;
	int r = bl_check_rcu(c, dir, name, len);

	if (r)
		return r;
	if (name_is_dotdot(name, len)) {
		if (kd_lookup_dotdot(c, dir, out) == UDC_POSITIVE)
			return 0;
		return c->cfg.backend ? kd_resolve_dotdot(c, dir, call, out) : -EAGAIN;
	}
	struct kd_key k = kd_key_name(c, dir, name, len);
	r = kd_lookup_name(c, &k, out);
	if (r != UDC_MISS)
		return r == UDC_POSITIVE ? 0 : -ENOENT;
	if (!c->cfg.backend)
		return -EAGAIN;

	struct bl_snap snap = bl_guard_snap(&c->bl.guard, k.hash);
	struct udc_attr a;
	kd_stat_add(c, ST_BACKEND, 1);
	r = bl_backend_lookup(&c->cfg, call, dir, name, len, &a);
	if (r == 0 || r == -ENOENT) {
		kd_cache_answer(c, &k, r == 0 ? &a : NULL, snap);
		kd_balance(c);
	}
	if (r == 0 && out)
		*out = a;
	return r;
}

/* ---------------------------------------------------------------------- */
/* The interface: mutations */

/* add / add_negative: d_add, or d_instantiate in place.  a NULL: negative. */
static int kd_set(struct kd_cache *c, const struct kd_key *k, const struct udc_attr *a)
{
	struct kd_dentry *n = d_alloc(c, k, false);

	if (!n)
		return -ENOMEM;
	n->d_attr = a ? *a : (struct udc_attr){ .ino = UDC_INO_NONE };
	struct kd_dentry *child = a && a->type == UDC_TYPE_DIR ? d_dir_get(c, a->ino, true) : NULL;
	if (a && a->type == UDC_TYPE_DIR && !child) {
		d_free_now(c, n);
		return -ENOMEM;
	}
	bl_guard_name_begin(&c->bl.guard, k->hash);
	struct kd_dentry *p = d_dir_lock(c, k->dir, true);
	if (!p) {
		bl_guard_name_end(&c->bl.guard, k->hash);
		d_free_now(c, n);
		if (child)
			dput(c, child);
		return -ENOMEM;
	}
	bool used = true;
	struct kd_dentry *d = d_child_lock(c, k);
	if (!d) {
		d_add_locked(c, p, n, NULL);
	} else if (lockref_count_locked(&d->d_lockref) == 0) {
		d_set_attr_locked(c, d, a);
		lockref_unlock(&d->d_lockref);
		used = false;
	} else {
		d_replace_locked(c, p, d, n);
		lockref_unlock(&d->d_lockref);
	}
	d_dir_unlock_put(c, p);
	if (child) {
		d_dir_reparent(child, k->dir);
		d_dir_set_cookie(child, a->cookie);
	}
	bl_guard_name_end(&c->bl.guard, k->hash);
	if (used)
		dput(c, n); /* the creator's reference: onto the LRU */
	else
		d_free_now(c, n);
	if (child)
		dput(c, child);
	kd_balance(c);
	return 0;
}

/* add(dir, "..", attr): record the parent of dir (d_splice_alias of it). */
static int kd_add_dotdot(struct kd_cache *c, udc_ino dir, const struct udc_attr *a)
{
	if (a->type != UDC_TYPE_DIR)
		return -EINVAL;
	struct kd_key k = kd_key_name(c, dir, "..", 2);
	struct kd_dentry *pp = d_dir_get(c, a->ino, true);
	struct kd_dentry *p = pp ? d_dir_get(c, dir, true) : NULL;
	if (!p) {
		if (pp)
			dput(c, pp);
		return -ENOMEM;
	}
	bl_guard_name_begin(&c->bl.guard, k.hash);
	d_dir_set_cookie(pp, a->cookie);
	d_dir_reparent(p, a->ino);
	bl_guard_name_end(&c->bl.guard, k.hash);
	dput(c, p);
	dput(c, pp);
	kd_balance(c);
	return 0;
}

static int kd_add(void *cv, udc_ino dir, const char *name, size_t len, const struct udc_attr *attr)
{
	struct kd_cache *c = cv;
	int r = bl_check_rcu(c, dir, name, len);

	if (r)
		return r;
	if (!bl_attr_valid(attr))
		return -EINVAL;
	if (name_is_dotdot(name, len))
		return kd_add_dotdot(c, dir, attr);
	struct kd_key k = kd_key_name(c, dir, name, len);
	return kd_set(c, &k, attr);
}

static int kd_add_negative(void *cv, udc_ino dir, const char *name, size_t len, uint32_t client)
{
	struct kd_cache *c = cv;
	int r = bl_check_rcu(c, dir, name, len);

	(void)client;
	if (r)
		return r;
	if (name_is_dotdot(name, len))
		return -EINVAL;
	struct kd_key k = kd_key_name(c, dir, name, len);
	return kd_set(c, &k, NULL);
}

/*
 * d_delete() of k, with its name_begin done: an unused dentry turns
 * negative, a busy one is unhashed.  *was: the positive attr it had (ino
 * UDC_INO_NONE if none).
 */
static void kd_delete(struct kd_cache *c, const struct kd_key *k, struct udc_attr *was)
{
	was->ino = UDC_INO_NONE;
	struct kd_dentry *p = d_dir_lock(c, k->dir, false);
	if (!p)
		return;
	struct kd_dentry *d = d_child_lock(c, k);
	if (d) {
		*was = d->d_attr;
		if (lockref_count_locked(&d->d_lockref) == 0)
			d_set_attr_locked(c, d, NULL);
		else
			__d_drop(c, d);
		lockref_unlock(&d->d_lockref);
	}
	d_dir_unlock_put(c, p);
	if (was->ino != UDC_INO_NONE && was->type == UDC_TYPE_DIR)
		d_dir_unparent(c, was->ino, k->dir);
}

static int kd_remove(void *cv, udc_ino dir, const char *name, size_t len)
{
	struct kd_cache *c = cv;
	int r = bl_check_rcu(c, dir, name, len);
	struct udc_attr was;

	if (r)
		return r;
	if (name_is_dotdot(name, len))
		return -EINVAL;
	struct kd_key k = kd_key_name(c, dir, name, len);
	bl_guard_name_begin(&c->bl.guard, k.hash);
	kd_delete(c, &k, &was);
	bl_guard_name_end(&c->bl.guard, k.hash);
	return 0;
}

static int kd_rmdir(void *cv, udc_ino parent, const char *name, size_t len, udc_ino dir)
{
	struct kd_cache *c = cv;
	int r = bl_check_rcu(c, parent, name, len);
	struct udc_attr was, cur;

	if (r)
		return r;
	if (name_is_dotdot(name, len))
		return -EINVAL;
	struct kd_key k = kd_key_name(c, parent, name, len);
	pthread_mutex_lock(&c->rename_lock);
	bl_guard_dir_begin(&c->bl.guard);
	bl_guard_name_begin(&c->bl.guard, k.hash);
	if (dir == UDC_INO_NONE && kd_peek(c, &k, &cur) == UDC_POSITIVE && cur.type == UDC_TYPE_DIR)
		dir = cur.ino;
	d_forget_dir(c, dir, true);
	kd_delete(c, &k, &was);
	bl_guard_name_end(&c->bl.guard, k.hash);
	bl_guard_dir_end(&c->bl.guard);
	pthread_mutex_unlock(&c->rename_lock);
	return 0;
}

/*
 * rename's pairs of locks (two parents' d_locks, two buckets' bit locks):
 * lock() both in address order, once when a == b; unlock() both.  a and b
 * are evaluated more than once: pointers with no side effects.
 */
#define LOCK_TWO(a, b, lock)                         \
	do {                                         \
		lock((a) < (b) ? (a) : (b));         \
		if ((a) != (b))                      \
			lock((a) < (b) ? (b) : (a)); \
	} while (0)
#define UNLOCK_TWO(a, b, unlock)   \
	do {                       \
		unlock(a);         \
		if ((a) != (b))    \
			unlock(b); \
	} while (0)

/*
 * d, unhashed already, locked, child of locked p: free it now if unused
 * (p's count stays > 0: the caller holds a reference), else leave it to
 * its last dput or its shrinker.  Unlocks d.
 */
static void d_kill_or_leave(struct kd_cache *c, struct kd_dentry *d, struct kd_dentry *p)
{
	if (lockref_count_locked(&d->d_lockref) == 0 && !(d_flags(d) & DCACHE_SHRINK_LIST))
		__dentry_kill(c, d, p);
	else
		lockref_unlock(&d->d_lockref);
}

/*
 * d_move(): with rename_lock, both parents' d_locks, both dentries' and
 * both buckets' locks.  The source is unhashed and, when its attr is
 * known (and is @moved, if given), a new dentry with it is hashed at the
 * target in the same critical section; otherwise the target is dropped.
 */
/*
 * kd_rename's move in the hash: unhash the source d and the target t, and
 * hash n (the source's attributes under np) if the source is known.  Under
 * both parents' locks and the children's (d_child_lock).
 */
static void kd_rename_rehash_locked(struct kd_cache *c, const struct kd_key *okp,
				    const struct kd_key *nkp, struct kd_dentry *d, struct kd_dentry *t,
				    struct kd_dentry *n, struct kd_dentry *np, bool known,
				    const struct udc_attr *was)
{
	struct kd_bl_head *ob = kd_bucket(c, okp->hash), *nb = kd_bucket(c, nkp->hash);

	LOCK_TWO(ob, nb, hlist_bl_lock);
	if (d) {
		hlist_bl_del_rcu(&d->d_hash);
		d_flags_set(d, 0, DCACHE_HASHED);
	}
	if (t) {
		hlist_bl_del_rcu(&t->d_hash);
		d_flags_set(t, 0, DCACHE_HASHED);
	}
	if (known) {
		n->d_attr = *was;
		n->d_parent = np;
		lockref_set_locked(&np->d_lockref, lockref_count_locked(&np->d_lockref) + 1);
		cds_list_add(&n->d_child, &np->d_subdirs);
		__d_rehash_locked(c, n);
	}
	UNLOCK_TWO(ob, nb, hlist_bl_unlock);
}

/* After kd_rename: the moved directory's parent is ndir; a directory replaced
 * at the target is gone.  Under rename_lock. */
static void kd_rename_fix_dirs(struct kd_cache *c, bool known, const struct udc_attr *was,
			       udc_ino moved, const struct udc_attr *target, udc_ino ndir)
{
	udc_ino moved_ino = known ? was->ino : moved;

	if ((known && was->type == UDC_TYPE_DIR) || (!known && moved != UDC_INO_NONE)) {
		struct kd_dentry *m = d_dir_lock(c, moved_ino, false);
		if (m) {
			atomic_store_explicit(&m->d_pino, ndir, memory_order_relaxed);
			d_dir_unlock_put(c, m);
		}
	}
	/* A directory replaced at the target is gone. */
	if (target->ino != UDC_INO_NONE && target->type == UDC_TYPE_DIR && target->ino != moved_ino)
		d_forget_dir(c, target->ino, true);
}

static int kd_rename(void *cv, udc_ino odir, const char *oname, size_t olen, udc_ino ndir,
		     const char *nname, size_t nlen, udc_ino moved)
{
	struct kd_cache *c = cv;
	struct kd_key ok = kd_key_name(c, odir, oname, olen);
	struct kd_key nk = kd_key_name(c, ndir, nname, nlen);
	struct kd_dentry *n = d_alloc(c, &nk, false);
	struct kd_dentry *op = n ? d_dir_get(c, odir, true) : NULL;
	struct kd_dentry *np = op ? d_dir_get(c, ndir, true) : NULL;
	if (!np) {
		if (op)
			dput(c, op);
		if (n)
			d_free_now(c, n);
		return -ENOMEM;
	}

	pthread_mutex_lock(&c->rename_lock);
	bl_guard_dir_begin(&c->bl.guard);
	bl_guard_name_begin(&c->bl.guard, ok.hash);
	bl_guard_name_begin(&c->bl.guard, nk.hash);
	/* rmdir, the only unhasher of a referenced directory object, is excluded */
	LOCK_TWO(&op->d_lockref, &np->d_lockref, lockref_lock);

	struct kd_dentry *d = d_child_lock(c, &ok);
	struct kd_dentry *t = d_child_lock(c, &nk);
	struct udc_attr was = { .ino = UDC_INO_NONE }, target = { .ino = UDC_INO_NONE };
	if (d)
		was = d->d_attr;
	if (t)
		target = t->d_attr;
	bool known = was.ino != UDC_INO_NONE && (moved == UDC_INO_NONE || moved == was.ino);

	kd_rename_rehash_locked(c, &ok, &nk, d, t, n, np, known, &was);
	if (known)
		d_count_kind(c, n, 1);
	rcu_read_lock();
	if (d)
		d_kill_or_leave(c, d, op);
	if (t)
		d_kill_or_leave(c, t, np);
	rcu_read_unlock();
	UNLOCK_TWO(&op->d_lockref, &np->d_lockref, lockref_unlock);

	kd_rename_fix_dirs(c, known, &was, moved, &target, ndir);

	bl_guard_name_end(&c->bl.guard, nk.hash);
	bl_guard_name_end(&c->bl.guard, ok.hash);
	bl_guard_dir_end(&c->bl.guard);
	pthread_mutex_unlock(&c->rename_lock);
	if (known)
		dput(c, n); /* the creator's reference: onto the LRU */
	else
		d_free_now(c, n);
	dput(c, op);
	dput(c, np);
	kd_balance(c);
	return 0;
}

/* ---------------------------------------------------------------------- */
/* The interface: the cache */

static void kd_stats(void *cv, struct udc_stats *st)
{
	struct kd_cache *c = cv;
	int64_t v[KD_NR_STATS] = { 0 };

	if (!c || !st)
		return;
	for (unsigned i = 0; i < KD_STAT_SLOTS; i++)
		for (unsigned s = 0; s < KD_NR_STATS; s++) /* relaxed: a statistic */
			v[s] += atomic_load_explicit(&c->stats[i].v[s], memory_order_relaxed);
	for (unsigned s = 0; s < KD_NR_STATS; s++)
		if (v[s] < 0)
			v[s] = 0; /* deltas summed while they move */
	struct udc_stats all = {
		.lookups = (uint64_t)v[ST_LOOKUPS],
		.hits_positive = (uint64_t)v[ST_HITS_POS],
		.hits_negative = (uint64_t)v[ST_HITS_NEG],
		.misses = (uint64_t)v[ST_MISSES],
		.backend_calls = (uint64_t)v[ST_BACKEND],
		.nr_positive = (uint64_t)v[ST_NR_POS],
		.nr_negative = (uint64_t)v[ST_NR_NEG],
		.evictions = (uint64_t)v[ST_EVICT],
		.bytes_used = bl_mem_bytes(&c->mem),
		.bytes_limit = c->limit,
		.nr_dirs = (uint64_t)v[ST_NR_DIRS],
		.stale_answers = (uint64_t)v[ST_STALE],
	};
	bl_stats_put(st, &all);
}

static void kd_destroy(void *cv);

/* The shared calls' hooks (struct bl_ops): walk, rename and invalidate_dir only. */

/* invalidate_dir: the walk of rmdir with the directory object kept. */
static void kd_invalidate_locked(void *cv, udc_ino dir)
{
	d_forget_dir(cv, dir, false);
}

static const struct bl_ops kd_ops = {
	.rcu = true,
	.resolve = kd_resolve,
	.dir_forget = kd_invalidate_locked,
	.rename = kd_rename,
};

static void *kd_create(const struct impl_config *cfg)
{
	if (!cfg || cfg->root == UDC_INO_NONE || (cfg->backend && !cfg->backend->lookup)) {
		errno = EINVAL;
		return NULL;
	}
	struct bl_mem boot = { 0 };
	struct kd_cache *c = bl_alloc(&boot, sizeof(*c));
	if (!c) {
		errno = ENOMEM;
		return NULL;
	}
	atomic_init(&c->mem.bytes, atomic_load_explicit(&boot.bytes, memory_order_relaxed));
	c->cfg = *cfg;
	c->limit = cfg->memory_limit ? cfg->memory_limit : KD_DEFAULT_LIMIT;
	c->target = c->limit > (size_t)INT64_MAX ? INT64_MAX : (int64_t)c->limit;
	int64_t gap = c->target / 256 > KD_MIN_WMARK_GAP ? c->target / 256 : KD_MIN_WMARK_GAP;
	c->min_wmark = c->target > INT64_MAX - gap ? INT64_MAX : c->target + gap;
	bl_head_init(&c->bl, &kd_ops, &c->cfg);
	pthread_mutex_init(&c->rename_lock, NULL);
	c->bl.dir_mutex = &c->rename_lock;
	pthread_mutex_init(&c->throttle_lock, NULL);
	pthread_mutex_init(&c->wake_lock, NULL);
	pthread_cond_init(&c->wake_cond, NULL);

	unsigned shift = KD_MIN_BUCKETS_SHIFT;
	while (shift < KD_MAX_BUCKETS_SHIFT &&
	       ((size_t)1 << (shift + 1)) <= c->limit / KD_BYTES_PER_BUCKET)
		shift++;
	c->mask = ((uint64_t)1 << shift) - 1;
	long cpus = sysconf(_SC_NPROCESSORS_ONLN);
	c->nr_shards = cpus >= 4 ? (unsigned)(cpus / 2) : 1;
	if (c->nr_shards > KD_MAX_SHARDS)
		c->nr_shards = KD_MAX_SHARDS;

	c->table = bl_alloc(&c->mem, ((size_t)1 << shift) * sizeof(*c->table));
	c->lru = bl_alloc(&c->mem, c->nr_shards * sizeof(*c->lru));
	c->stats = bl_alloc(&c->mem, KD_STAT_SLOTS * sizeof(*c->stats));
	if (!c->table || !c->lru || !c->stats) {
		kd_destroy(c);
		errno = ENOMEM;
		return NULL;
	}
	for (unsigned i = 0; i < c->nr_shards; i++) {
		pthread_spin_init(&c->lru[i].lock, PTHREAD_PROCESS_PRIVATE);
		CDS_INIT_LIST_HEAD(&c->lru[i].list);
	}
	bl_rcu_enter();
	if (!cfg->no_reclaim_thread) {
		int err = pthread_create(&c->shrinker, NULL, kd_shrinker_main, c);
		if (err) {
			kd_destroy(c);
			errno = err;
			return NULL;
		}
		c->has_shrinker = true;
	}
	return c;
}

static void kd_destroy(void *cv)
{
	struct kd_cache *c = cv;

	if (!c)
		return;
	bl_rcu_enter();
	if (c->has_shrinker) {
		pthread_mutex_lock(&c->wake_lock);
		c->stop = true;
		pthread_cond_signal(&c->wake_cond);
		pthread_mutex_unlock(&c->wake_lock);
		pthread_join(c->shrinker, NULL);
	}
	rcu_barrier(); /* every call_rcu free has run: they count in c->mem */
	/* No call runs: every dentry left is hashed and unused; free them all. */
	if (c->table) {
		for (uint64_t i = 0; i <= c->mask; i++) {
			struct kd_bl_node *n = hlist_bl_first_rcu(&c->table[i]);
			while (n) {
				struct kd_bl_node *next = hlist_bl_next_rcu(n);
				d_free_now(c, d_of(n));
				n = next;
			}
		}
	}
	bl_free(&c->mem, c->table, (c->mask + 1) * sizeof(*c->table));
	if (c->lru)
		for (unsigned i = 0; i < c->nr_shards; i++)
			pthread_spin_destroy(&c->lru[i].lock);
	bl_free(&c->mem, c->lru, c->nr_shards * sizeof(*c->lru));
	bl_free(&c->mem, c->stats, KD_STAT_SLOTS * sizeof(*c->stats));
	pthread_mutex_destroy(&c->rename_lock);
	pthread_mutex_destroy(&c->throttle_lock);
	pthread_mutex_destroy(&c->wake_lock);
	pthread_cond_destroy(&c->wake_cond);
	struct bl_mem tail = { 0 };
	atomic_init(&tail.bytes, (int64_t)sizeof(*c));
	bl_free(&tail, c, sizeof(*c));
}

const struct impl impl_kernel = BL_IMPL_OWN(
	kd, "kernel", "model of Linux's dcache: hlist_bl + lockref + list_lru shrinker", true);
