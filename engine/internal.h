/* SPDX-License-Identifier: MIT */
/*
 * engine/internal.h - the engine's private types, in one place.
 *
 * Glossary
 *   entry      one cached answer for (directory ino, name): positive (an
 *              attr) or negative ("does not exist").  Immutable once
 *              published, except its hit counter; a change is a new entry
 *              that replaces the old one in the table.
 *   dir        a directory object (struct udc_dir), found by ino in the
 *              directory table: generation, flags, parent, counts.
 *   generation a dir's counter; an entry records the generation it was
 *              created in and is stale (a miss) once the dir's moves on.
 *              udc_invalidate_dir() and udc_rmdir() are O(1) because of it.
 *   stripe     one of the cache's name locks; a name's stripe is chosen by
 *              its hash.  Every mutation of a name, and the in-flight
 *              placeholders of resolve, are serialised by its stripe.
 *   placeholder an in-flight backend call for one name (struct inflight),
 *              on its caller's stack, listed on the name's stripe.
 *
 * Invariants (checked by engine_check() in UDC_DEBUG builds and tests)
 *   - at most one entry per (dir ino, name) in the name table;
 *   - dir_ino(e->dir) == the entry's key dir, and e->dir stays allocated while
 *     the entry is in the table (each holds a reference, d->refs);
 *   - a directory in the table with refs 0 is DIR_IDLE (on the reaper's
 *     queues), and any struct udc_dir * held outside rcu_read_lock is
 *     pinned (dir_get, dir_find; dir_put), or held by an entry in the
 *     table under a stripe lock the caller holds;
 *   - a directory's nr_positive counts its positive entries in the table;
 *   - sum over threads of (added - dropped) == entries in the table, per
 *     kind, when no call is running;
 *   - bytes == sum of accounted allocations not yet freed.
 */
#ifndef UDC_ENGINE_INTERNAL_H
#define UDC_ENGINE_INTERNAL_H

#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#define _LGPL_SOURCE   /* inline read-side fast paths */
#define URCU_API_MAP   /* the flavor-neutral names: rcu_read_lock, call_rcu... */
#include <urcu/urcu-memb.h>
#include "common/rcu_tsan.h"   /* liburcu's orderings, for TSan builds */
#include "common/rcu_flight.h"
#include <urcu/rculfhash.h>
#include <urcu/list.h>

#include <ck_sequence.h>
#include "engine/spin.h"

#include "common/cancel.h"
#include "common/debug.h"
#include "common/lock.h"
#include "common/rcu_pending.h"
#include "engine/engine.h"
#include "engine/hash.h"
#include "engine/name_table.h"
#include "engine/stats.h"
#include "include/udcache.h"
#include "shrink/shrink.h"
#include "common/path.h"
#include "slab/slab.h"

#define UDC_CACHELINE 64
#define UDC_ALIGNED __attribute__((aligned(UDC_CACHELINE)))

#define NR_STRIPES_MAX 512        /* name locks, a power of two: this many from a */
#define NR_STRIPES_MIN 32         /* 2 MiB limit up, fewer below (engine/cache.c) */
#define WALK_MAX_SYMLINKS 40
#define WALK_OPTIMISTIC_TRIES 8   /* seqcount passes before a walk takes rename_lock */
#define WALK_LOCKED_ROUNDS 256    /* cache-only locked passes before -EAGAIN */
#define FREE_BATCH 62             /* entries per deferred-free batch */

/* Longest name kept inside the entry (with its deadline and listing
 * place); longer names are allocated apart.  A value comes on top. */
#define NEG_INLINE_MAX 64         /* negative entry <= 96 bytes */
#define POS_INLINE_MAX 64         /* positive entry <= 112 bytes, or 384 with
                                   * a value (POS_VALUE_ROOM) */

/* In e->hits, beside the counter: the entry has a deadline (entry_expired).
 * Set before it is published and never changed; readers' raises and the
 * sweeper's spends keep it (they add or take one from the counter). */
#define ENT_EXPIRES 0x80
#define HITS_MASK 0x03

/* A positive's type bits: its enum udc_type, and whether it has a value. */
#define POS_TYPE_MASK 0x7
#define POS_VALUE 0x8             /* a value after the name: its length - 1 (a byte), its bytes */
#define POS_LISTED 0x10           /* a struct entry_kid after the extras (engine/listing.c) */

/* d->state: flags in the low bits, the drop count above them. */
enum dir_state {
	DIR_COMPLETE = 1u << 0,   /* the embedder told every name: misses are negative */
	DIR_IDLE = 1u << 1,       /* queued for the reaper (engine/dir.c), or on its list */
	DIR_FILLING = 1u << 2,    /* a fill began (udc_dir_fill_begin): kept by the reaper */
};
#define DIR_STATE_FLAGS ((uint32_t)7)
#define DIR_DROP_ONE ((uint32_t)8)   /* one name lost while it exists (dir_drop_note): the
                                      * count is mod 2^29 (engine/dir.c, Ordering, fills) */

struct dir_listing;                  /* engine/listing.c */

/*
 * struct udc_dir - one directory: 48 bytes from the directory slab
 * (engine/dir.c), read by lookups (its key, gen, flags) and written by the
 * mutations of its names (refs and the count).
 *
 * Its ino is not stored: the table node's reverse_hash is the ino's key
 * (dir_key, engine/hash.h, a bijection), and dir_ino() inverts it.  Nor is
 * a count of its negatives: refs less nr_positive counts them, with the
 * pins and an older generation's garbage (dir_negatives).  The object was
 * a line of 64 bytes, and at a binding limit the objects were a third of
 * the bytes (issue 14; BENCHMARKS.md, issue 14, stop 39).
 *
 * refs counts what needs the object: each entry in the table and each
 * call holding it (a pin, dir_get/dir_find).  At zero the object is idle
 * and may be freed by the reaper (engine/dir.c), which sets refs to
 * DIR_DEAD first; a dead object is never pinned again.
 *
 * What few directories have (a ".." record, a listing, a fill, the
 * epoch) is in struct dir_ext, made by the first that needs it and freed
 * with the object: a directory that a path only goes through costs its
 * 48 bytes (it cost two lines, 27-48% of the bytes at a binding limit:
 * issue 14).
 */
struct dir_ext;
struct udc_dir;

/* A FIFO of idle directories linked by queued_next (engine/dir.c's reaper). */
struct dir_fifo {
	struct udc_dir *head, **tail;
	size_t n;
};

struct udc_dir {
	struct dir_ext *_Atomic ext;      /* NULL until needed (dir_ext_get) */
	struct cds_lfht_node node;        /* in cache->dirs until the reaper frees it;
	                                   * reverse_hash: dir_key(ino), immutable */
	_Atomic uint32_t gen;             /* bumped by invalidate_dir/rmdir (release) */
	_Atomic uint32_t state;           /* DIR_* flags | drops x DIR_DROP_ONE (dir.c) */
	_Atomic int32_t refs;             /* entries + pins; DIR_DEAD: being freed (2^31
	                                   * entries in one directory would be > 100 GB) */
	_Atomic int32_t nr_positive;      /* entries in the table, any generation */
	struct udc_dir *queued_next;      /* idle: on cache->dirs_queued, dirs_arrived or
	                                   * dirs_idle, dirs_spare (DIR_IDLE's holder owns it); dead:
	                                   * udc_destroy's list */
};

_Static_assert(sizeof(struct udc_dir) == 48, "a directory is 48 bytes (see above)");
/* What a hit reads (the key its match compares, the generation) and a
 * miss (the complete flag) in one 16-byte quarter: slots are 16-aligned,
 * so it is in one line at every slot, where a 48-byte object may span two. */
_Static_assert(offsetof(struct udc_dir, node.reverse_hash) / 16 == offsetof(struct udc_dir, gen) / 16 &&
	       offsetof(struct udc_dir, state) / 16 == offsetof(struct udc_dir, gen) / 16,
	       "a hit reads one line of its directory");

/*
 * struct dir_ext - a directory's rarer answers (engine/dir.c).  Published
 * once (dir_ext_get: a CAS, release; readers load d->ext with acquire),
 * freed with its directory after the same grace period.
 */
struct dir_ext {
	_Atomic udc_ino parent;           /* for ".."; UDC_INO_NONE = unknown (no reference:
	                                   * the parent's object is found by ino) */
	_Atomic uint64_t parent_stamp;    /* the parent's epoch when parent was learnt */
	_Atomic uint64_t cookie;          /* the cookie of the entry naming this dir */
	_Atomic uint64_t epoch;           /* unique per object and change: a child's ".." is
	                                   * usable while its parent_stamp equals it */
	struct dir_listing *_Atomic listing;  /* its positives in order, for udc_readdir: made
	                                   * by the first fill, freed with the object */
	_Atomic uint32_t parent_seq;      /* bumped by every change of parent (under lock) */
	_Atomic uint32_t kids;            /* the children's ".." records of it: a hint
	                                   * for the reaper (engine/dir.c) */
	_Atomic uint32_t complete_until;  /* the complete flag's deadline (cache ticks, the
	                                   * negatives' default life), 0: none */
	_Atomic uint32_t stale_negatives; /* negatives of older generations still in the
	                                   * table (dir_negatives; dir_bump_gen) */
	udc_spin_t lock;                  /* serialises the ".." record's writers */
};

_Static_assert(sizeof(struct dir_ext) <= (UDC_DEBUG ? 2 : 1) * UDC_CACHELINE,
	       "a directory's extension is one line (two in debug builds: the lock's owner)");

/*
 * struct udc_entry - the part every entry has (32 bytes).
 *
 * Immutable once published except hits.  Readers find it through the name
 * table under rcu_read_lock and copy what they need out.
 */
struct udc_entry {
	struct name_node node;            /* name table: next + hash (engine/name_table.h) */
	struct udc_dir *dir;              /* immutable */
	uint32_t gen;                     /* dir->gen when the answer was obtained */
	uint8_t len;                      /* name length, 1..255 (UDC_NAME_MAX fits) */
	uint8_t kind : 1;                 /* enum entry_kind */
	uint8_t ext : 1;                  /* 1: name stored apart, pointer inline */
	uint8_t type : 6;                 /* positive: enum udc_type | POS_VALUE;
	                                   * negative: client tag */
	_Atomic uint8_t hits;             /* HITS_MASK: raised by readers (plain store),
	                                   * lowered by reclaim; ENT_EXPIRES: fixed */
	_Atomic uint8_t published;        /* non-zero while in the table: the sweeper's test of
	                                   * a slot; 1 + the times it was requeued in probation
	                                   * (entry_requeue_move; written under the stripe) */
};

struct udc_neg {
	struct udc_entry e;
	char name[];                      /* inline name, or a char * when e.ext; then,
	                                   * with ENT_EXPIRES, the deadline */
};

struct udc_pos {
	struct udc_entry e;
	udc_ino ino;
	uint64_t cookie;
	char name[];                      /* inline name or its pointer; then, with
	                                   * POS_VALUE, the value (pos_value), and with
	                                   * ENT_EXPIRES the deadline (entry_tail) */
};

/* Where a lookup copies a positive's value: @room bytes at @buf; @len is
 * set to the value's length (0: none), which may pass @room. */
struct value_out {
	void *buf;
	size_t room;
	size_t len;
};

_Static_assert(sizeof(struct udc_entry) == 32, "entry header is 32 bytes");
_Static_assert(offsetof(struct udc_pos, name) % 8 == 0, "a positive's name starts 8-aligned (pos_kid)");
_Static_assert(sizeof(struct udc_neg) + NEG_INLINE_MAX <= 96, "negative fits 96 bytes");
_Static_assert(sizeof(struct udc_pos) + POS_INLINE_MAX <= 112, "positive fits 112 bytes");

/* A resolve in flight: on the owner's stack, listed on its stripe. */
struct inflight {
	struct cds_list_head link;        /* on stripe->inflight (protected by stripe->lock) */
	uint64_t hash;
	udc_ino dir;
	const char *name;
	size_t len;
	uint32_t gen;                     /* dir gen read before the backend call */
	pthread_t owner;                  /* the thread calling the backend */
	bool stale;                       /* a mutation of the name ran meanwhile */
	bool done;
	int waiters;                      /* threads waiting for the answer */
	int result;
	struct udc_attr attr;
	struct value_out value;           /* the answer's value: in the owner's frame */
};

struct stripe {
	struct udc_mutex lock;            /* serialises every mutation of its names */
	struct udc_cond cond;             /* placeholders done, waiters gone */
	struct cds_list_head inflight;    /* struct inflight (protected by lock) */
	_Atomic uint64_t touched;         /* cache->fill_clock at its names' last mutation
	                                   * (written and read under lock) */
} UDC_ALIGNED;

/* An object forgotten (udc_forget_ino): answers naming it are no answers
 * until a garbage round begun after epoch has dropped them (forget.c). */
#define FORGET_BUCKETS 16
#define FORGET_WAYS 4
struct forget_slot {
	_Atomic udc_ino ino;              /* UDC_INO_NONE: free */
	uint64_t epoch;                   /* c->forget_epoch when it was (last) forgotten */
};

/* A batch of allocations freed together after one grace period. */
struct free_batch {
	struct rcu_head rcu;
	struct udc_cache *cache;
	size_t queued;                    /* bytes counted in cache->frees_queued */
	unsigned n;
	bool flying;                      /* handed to call_rcu, not to a hold */
	struct rcu_flight flight;         /* flying: on cache->frees_flight (free_lock) */
	struct rcu_head land_rcu;         /* a lander's free, run by its hold's end */
	struct udc_entry *ents[FREE_BATCH];
};

struct udc_cache {
	/* --- read-mostly: every call reads these --- */
	struct name_table names;          /* entries by hash(dir, name) */
	struct cds_lfht *dirs;            /* struct udc_dir by hash(ino) */
	struct hash_key key;
	uint64_t serial;                  /* this cache's number, unique in the process:
	                                   * what a thread's stats hint is checked by */
	udc_ino root;
	uint64_t clock_base_ns;           /* CLOCK_MONOTONIC_COARSE at create: tick 0 */
	uint32_t ttl_ms[2];               /* the default life of an answer, by enum
	                                   * entry_kind; 0: none (udc_config) */
	const struct udc_backend *backend;
	uint32_t flags;                   /* UDC_CFG_* */
	_Atomic uint32_t forgets_pending; /* objects forgotten, not yet retired: a hit
	                                   * consults c->forgets while non-zero (forget.c) */
	bool membarrier;                  /* sys_membarrier available at create */
	_Atomic bool fills_completed;     /* set by the first udc_dir_fill_complete: until
	                                   * then no directory is complete, and a lookup's
	                                   * miss skips the directory table (lookup.c) */
	size_t self_bytes;                /* this struct's real allocated size */
	size_t bytes_min;                 /* the smallest limit udc_set_memory_limit takes
	                                   * (bytes_min_for, at udc_create) */
	unsigned stripe_mask;             /* stripes - 1, from the limit at create (cache.c) */
	size_t min_buckets;               /* the tables' smallest size, likewise */
	struct slab *slabs[2];            /* entries, by enum entry_kind: their own classes */
	struct slab *dir_slab;            /* directory objects and their extensions (dir.c) */
	struct stats_chunk *_Atomic stats[STATS_CHUNKS];  /* per-thread counters, made on demand */
	struct thread_stats shared_stats; /* threads past the last chunk (approximate) */

	/* --- memory accounting: written by every allocation --- */
	_Atomic size_t bytes_held UDC_ALIGNED;  /* accounted bytes held now, the slabs'
	                                         * pages included (bytes_charge) */
	_Atomic int64_t nr_dirs;
	_Atomic uint64_t dir_clock;       /* the last epoch handed out (engine/dir.c) */
	_Atomic uint64_t dotdot_moves;    /* renames that moved a directory the cache
	                                   * could not name (engine/dir.c, Ordering) */
	_Atomic int64_t nr_entries;       /* entries in the name table (for bucket memory), */
	_Atomic int64_t entry_bytes;      /* and their slab slots, both less what the threads'
	                                   * stats slots hold back (entry_count: estimates) */
	_Atomic int64_t nr_ext;           /* entries with parts apart (entry_apart)
	                                   * (relaxed: udc_destroy reads it alone) */
	_Atomic size_t names_buckets;     /* the tables' sizes (engine/cache.c: set by the one */
	_Atomic size_t dirs_buckets;      /* resizer, read relaxed for bytes_used) */
	/* --- the reaper's queue: pushed by every directory going idle, so
	 * off the accounting line that every call's bound reads --- */
	struct udc_dir *_Atomic dirs_queued UDC_ALIGNED;  /* dirs that became idle: a stack */
	struct udc_dir *_Atomic dirs_arrived; /* popped from dirs_queued, not yet looked at (the reaper's) */
	struct dir_fifo dirs_idle;        /* idle dirs kept for their answers (the reaper's) */
	struct dir_fifo dirs_spare;       /* idle dirs with none, kept a while (the reaper's) */

	/* --- fills begun (udc_dir_fill_begin): a listing's token, read by
	 * every mutation (stripe->touched), written by each fill begun: a
	 * line of its own, off the hits' and the allocations' lines --- */
	_Atomic uint64_t fill_clock UDC_ALIGNED;

	/* --- deferred frees --- */
	udc_spin_t free_lock UDC_ALIGNED;  /* protects free_pending, frees_flight */
	struct free_batch *free_pending;
	struct cds_list_head frees_flight; /* free_batches handed to call_rcu, not yet taken */
	_Atomic int64_t frees_queued;     /* bytes of free_batches handed to call_rcu, not yet freed */
	struct rcu_pending rcu_pending;   /* our call_rcu callbacks in flight (destroy waits) */

	/* --- renames and rmdirs: walks validate against rename_seq --- */
	struct udc_mutex rename_lock UDC_ALIGNED;  /* serialises rename_seq writers; before stripes */
	ck_sequence_t rename_seq;

	/* --- objects forgotten (udc_forget_ino, engine/forget.c): the slots
	 * are read by hits while forgets_pending, written by forgets and by
	 * the retirement after a garbage round --- */
	udc_spin_t forget_lock UDC_ALIGNED;  /* serialises the slots' writers */
	bool forget_retiring;             /* forget_rcu queued (forget_lock) */
	uint64_t forget_epoch;            /* bumped when a garbage round begins (forget_lock) */
	uint64_t forget_retire_before;    /* forget_rcu's: slots of epochs below (forget_lock) */
	struct rcu_head forget_rcu;
	struct forget_slot forgets[FORGET_BUCKETS * FORGET_WAYS];

	/* --- the reclaim policy's state (shrink/): the engine never reads it --- */
	struct shrink *shrink;
	struct cds_list_head fork_link;   /* on engine/fork.c's list of live caches */

	struct stripe stripes[];          /* stripe_mask + 1 of them */
};

/*
 * Visit every node of an rculfhash table, under rcu_read_lock.  (liburcu's
 * cds_lfht_for_each_entry() computes container_of(NULL) at the end, which
 * UBSan rightly reports.)
 */
#define table_for_each(ht, it, n)                                                 \
	for (cds_lfht_first((ht), (it));                                          \
	     ((n) = cds_lfht_iter_get_node(it)) != NULL && (rcu_found_note(n), 1); \
	     cds_lfht_next((ht), (it)))

#define entry_of(n) caa_container_of((n), struct udc_entry, node)
#define dir_of(n) caa_container_of((n), struct udc_dir, node)

/* ---- engine/thread.c: automatic RCU registration, per-thread stats ---- */
/*
 * The hit path's thread-locals use the initial-exec model: a fixed offset
 * from the thread pointer, no __tls_get_addr call from the shared library.
 * They are 21 bytes (and shrink/reclaim.c's chores countdown, 1), and they
 * put the library's TLS block (82 bytes) in static TLS, within the surplus
 * glibc keeps for a library loaded by dlopen.  The others, liburcu's reader
 * record among them, go through TLS descriptors (CMakeLists.txt:
 * -mtls-dialect=gnu2).
 */
#define UDC_TLS_IE __attribute__((tls_model("initial-exec")))

void thread_register_slow(void);
extern __thread bool thread_registered UDC_TLS_IE;

/* Make sure the calling thread is an RCU reader; cheap after the first call. */
static inline void thread_enter(void)
{
	if (__builtin_expect(!thread_registered, 0))
		thread_register_slow();
}

struct thread_stats *thread_stats_slow(struct udc_cache *c);
extern __thread int32_t thread_index UDC_TLS_IE;   /* STATS_SHARED_SLOT: none (then the shared slot) */

/* The calling thread's stats slot in the cache it last counted in, so that a
 * thread's next call there finds it with one compare.  Set by
 * thread_stats_slow() only for a registered thread's own slot, cleared when
 * the thread exits (thread_exit): a hint that names c also says the thread
 * is registered.  The serial, not the address, names the cache, since a new
 * cache may be allocated where a destroyed one was. */
struct stats_hint {
	uint64_t serial;   /* 0: none */
	struct thread_stats *slot;
};
extern __thread struct stats_hint stats_hint UDC_TLS_IE;

static inline bool stats_hint_is(const struct udc_cache *c)
{
	return __builtin_expect(stats_hint.serial == c->serial, 1);
}

/* The calling thread's counters in c (thread_enter() first, or a hint that
 * names c, which implies it).  A thread that alternates between caches
 * takes thread_stats_slow() on every switch. */
static inline struct thread_stats *thread_stats(struct udc_cache *c)
{
	return stats_hint_is(c) ? stats_hint.slot : thread_stats_slow(c);
}

/* thread_enter() and thread_stats() with one test of the hint: free when
 * the thread's hint names c. */
static inline struct thread_stats *thread_enter_stats(struct udc_cache *c)
{
	if (stats_hint_is(c))
		return stats_hint.slot;
	thread_enter();
	return thread_stats_slow(c);
}

/* ---- engine/alloc.c: accounted memory, entries in slab slots, deferred frees ---- */
/* mem_alloc/mem_free (accounted, 16-aligned): engine/engine.h */
void *mem_alloc_line(struct udc_cache *c, size_t size); /* accounted, cache-line aligned */
/* Count @bytes (> 0) in bytes_held if bytes_used stays within the bound,
 * else false (alloc.c, held_charge; @holding: a batch of reclaim's held
 * frees); or uncount -@bytes (< 0: true).  The slabs' charge
 * (slab_config): their pages and batches count in bytes_held. */
bool bytes_charge(void *arg, long bytes, bool holding);
/*
 * An object of @s's class @cls for what a call adds, within the bound
 * (bytes_used <= limit + slack): a new page that would pass it is refused,
 * reclaim makes room (shrink_make_room) and it is tried again, up to
 * ROOM_ROUNDS times; then NULL with errno ENOMEM.  Not in a read-side
 * section, nor with a stripe, rename_lock or shrink_lock held: it may
 * wait for reclaim.
 */
void *bounded_slab_alloc(struct udc_cache *c, struct slab *s, unsigned cls);
/* bytes_used besides bytes_held: the slabs' own bytes, the buckets. */
size_t cache_bytes_apart(struct udc_cache *c);
void mem_free_line(struct udc_cache *c, void *p, size_t size);
/* The cache struct with @stripes stripes; *bytes: its real size. */
struct udc_cache *cache_struct_alloc(size_t stripes, size_t *bytes);
void cache_struct_free(struct udc_cache *c);
/* An entry's bytes in its slot: header, attr, name (or its pointer) and
 * its EXTRA_* @extras. */
size_t entry_size(enum entry_kind kind, size_t len, unsigned extras);
/* e's EXTRA_* bits. */
static inline unsigned entry_extras(const struct udc_entry *e);
/* Its slot bytes and its name apart: an estimate of
 * what dropping it gives back. */
size_t entry_footprint(const struct udc_entry *e);
/* What a new entry holds beside its name: a positive's value (a copy of
 * @vlen <= UDC_VALUE_MAX bytes, 0: none) and a deadline (cache ticks,
 * 0: none; cache_deadline). */
struct entry_extra {
	const void *value;
	size_t vlen;
	uint32_t deadline;
	bool listed;                      /* a place in its directory's listing (listing_wanted) */
	uint8_t client;                   /* a negative's client tag (shrink_client_tag) */
};
/* In the class the policy chooses for @hash (shrink_entry_class); @x may
 * be NULL (nothing beside the name).  Within the bound, as
 * bounded_slab_alloc: NULL with errno ENOMEM. */
struct udc_entry *entry_alloc(struct udc_cache *c, enum entry_kind kind, const char *name,
			      size_t len, uint64_t hash, const struct entry_extra *x);
void entry_free_now(struct udc_cache *c, struct udc_entry *e);   /* never published or no readers */
int entry_slabs_create(struct udc_cache *c);
void entry_slabs_destroy(struct udc_cache *c);
void entry_free_deferred(struct udc_cache *c, struct udc_entry *e);  /* after a grace period */
void entry_ext_free(struct udc_cache *c, struct udc_entry *e);  /* its parts apart, now */

/* The key of d's ino (dir_key, engine/hash.h): rculfhash keeps it in the
 * node as its reverse_hash (engine/dir.c gives it the key bit-reversed). */
static inline uint64_t dir_node_key(const struct udc_dir *d)
{
	return d->node.reverse_hash;
}

/* d's ino, from its key. */
static inline udc_ino dir_ino(const struct udc_cache *c, const struct udc_dir *d)
{
	return dir_key_ino(&c->key, dir_node_key(d));
}

/* Is d the object of @ino?  Compares keys: one multiply, as dir_ino. */
static inline bool dir_is(const struct udc_cache *c, const struct udc_dir *d, udc_ino ino)
{
	return dir_node_key(d) == dir_key(&c->key, ino);
}

/* d's generation now. */
static inline uint32_t dir_gen(struct udc_dir *d)
{
	/* acquire: pairs with dir_bump_gen's release (a new generation comes
	 * with the complete flag and parent its bumper cleared): Ordering (B) */
	return atomic_load_explicit(&d->gen, memory_order_acquire);
}

/* Is e's answer current (its directory's generation is still e's)?  The
 * one test of staleness by generation: lookups, resolve, mutations and the
 * sweeper all ask it. */
static inline bool entry_current(const struct udc_entry *e)
{
	return e->gen == dir_gen(e->dir);
}

static inline bool entry_expired(const struct udc_cache *c, const struct udc_entry *e);

/* The first of @ino's FORGET_WAYS slots in c->forgets (engine/forget.c). */
static inline unsigned forget_bucket(udc_ino ino)
{
	return (unsigned)((ino * 0x9e3779b97f4a7c15ull) >> 60) % FORGET_BUCKETS * FORGET_WAYS;
}

/* Is @ino forgotten (udc_forget_ino), with c->forgets_pending non-zero? */
static inline bool ino_forgotten(const struct udc_cache *c, udc_ino ino)
{
	const struct forget_slot *b = &c->forgets[forget_bucket(ino)];

	for (unsigned i = 0; i < FORGET_WAYS; i++) {
		/* relaxed: a forget that returned before this call began
		 * happened before it (engine/forget.c, Ordering) */
		if (atomic_load_explicit(&b[i].ino, memory_order_relaxed) == ino)
			return true;
	}
	return false;
}

/* Does e name an object forgotten since it was cached (udc_forget_ino)? */
static inline bool entry_forgotten(const struct udc_cache *c, const struct udc_entry *e)
{
	/* relaxed: as ino_forgotten; zero nearly always (one load, a hit's) */
	return __builtin_expect(atomic_load_explicit(&c->forgets_pending, memory_order_relaxed) != 0, 0) &&
	       e->kind == ENT_POSITIVE && ino_forgotten(c, ((const struct udc_pos *)e)->ino);
}

/* Does e answer its name: current, not expired, not of a forgotten object?
 * (An expired or forgotten entry is no answer, but not garbage either: its
 * name was not forgotten by its directory, so dropping it is a loss for
 * the fill protocol.) */
static inline bool entry_answers(const struct udc_cache *c, const struct udc_entry *e)
{
	return entry_current(e) && !entry_expired(c, e) && !entry_forgotten(c, e);
}

/* A negative's client tag lives in its type bits (a negative has no type). */
static inline uint8_t neg_client(const struct udc_entry *e)
{
	udc_assert(e->kind == ENT_NEGATIVE);
	return e->type;
}

static inline void neg_client_set(struct udc_entry *e, uint8_t tag)
{
	udc_assert(e->kind == ENT_NEGATIVE && tag < 64);
	e->type = tag & 0x3f;
}

/*
 * A listed positive's place in its directory's listing (engine/listing.c):
 * after its other extras, 8-aligned.  Read and written only under the
 * listing's lock, once the entry is published.
 */
struct entry_kid {
	struct cds_list_head link;        /* on the listing's kids; next NULL: not on it */
	uint64_t seq;                     /* its place: the cookie that resumes after it */
	struct udc_entry *e;              /* the entry it is in */
};

/* What an entry holds after its name: a value (a byte of its length - 1,
 * then its bytes), a deadline, then a place in a listing, 8-aligned (the
 * name starts 8-aligned: below).  EXTRA_VALUE comes with the value's
 * length above EXTRA_VLEN_SHIFT (extras_value). */
#define EXTRA_VALUE 0x1
#define EXTRA_DEADLINE 0x2
#define EXTRA_LISTED 0x4
#define EXTRA_VLEN_SHIFT 8

/* The extras bits of a value of @vlen bytes (0: none). */
static inline unsigned extras_value(size_t vlen)
{
	return vlen ? EXTRA_VALUE | (unsigned)vlen << EXTRA_VLEN_SHIFT : 0;
}

/* The value's bytes in an entry with @extras: its length byte and its own. */
static inline size_t extras_value_size(unsigned extras)
{
	return extras & EXTRA_VALUE ? 1 + (extras >> EXTRA_VLEN_SHIFT) : 0;
}

/* The value and the deadline: the bytes before the kid. */
static inline size_t extras_unaligned_size(unsigned extras)
{
	return extras_value_size(extras) + (extras & EXTRA_DEADLINE ? sizeof(uint32_t) : 0);
}

/* The bytes after the name's @part bytes (the name, or its pointer). */
static inline size_t extras_size(size_t part, unsigned extras)
{
	size_t end = part + extras_unaligned_size(extras);

	if (extras & EXTRA_LISTED)
		end = ((end + 7) & ~(size_t)7) + sizeof(struct entry_kid);
	return end - part;
}

/* Does a name of @len bytes live inside its entry (else apart, e->ext)?
 * The deadline and the kid take from the inline room, so a class holds
 * the same; a value does not (it has classes of its own: entry_sizes). */
static inline bool name_fits_inline(enum entry_kind kind, size_t len, unsigned extras)
{
	return len + extras_size(len, extras & (EXTRA_DEADLINE | EXTRA_LISTED)) <=
	       (kind == ENT_POSITIVE ? POS_INLINE_MAX : NEG_INLINE_MAX);
}

/* Has e a part allocated apart (its name), freed with it? */
static inline bool entry_apart(const struct udc_entry *e)
{
	return e->ext;
}

static inline const char *entry_name(const struct udc_entry *e)
{
	const char *p = e->kind == ENT_POSITIVE ? ((const struct udc_pos *)e)->name
						: ((const struct udc_neg *)e)->name;
	if (e->ext) {
		const char *ext;
		memcpy(&ext, p, sizeof(ext));
		return ext;
	}
	return p;
}

static inline struct udc_pos *entry_pos(struct udc_entry *e)
{
	udc_assert(e->kind == ENT_POSITIVE);
	return (struct udc_pos *)e;
}

/* *out = the answer a positive entry gives, field by field (gcc builds a
 * compound literal on the stack first: four instructions more a hit). */
static inline void pos_attr_copy(struct udc_attr *out, const struct udc_pos *p)
{
	out->ino = p->ino;
#if __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
	/* type and flags (0) as one 8-byte store: two instructions of a hit */
	_Static_assert(offsetof(struct udc_attr, flags) == offsetof(struct udc_attr, type) + 4,
		       "flags follows type");
	uint64_t type_flags = p->e.type & POS_TYPE_MASK;
	memcpy(&out->type, &type_flags, sizeof(type_flags));
#else
	out->type = p->e.type & POS_TYPE_MASK;
	out->flags = 0;
#endif
	out->cookie = p->cookie;
}

/* A new positive's attr (its POS_VALUE and POS_LISTED bits kept). */
static inline void pos_attr_set(struct udc_pos *p, const struct udc_attr *attr)
{
	p->ino = attr->ino;
	p->e.type = (uint8_t)((p->e.type & ~POS_TYPE_MASK) | (attr->type & POS_TYPE_MASK));
	p->cookie = attr->cookie;
}

/* Where e's name part (the name, or its pointer) ends: its extras follow,
 * the value first. */
static inline const char *entry_tail(const struct udc_entry *e)
{
	const char *p = e->kind == ENT_POSITIVE ? ((const struct udc_pos *)e)->name
						: ((const struct udc_neg *)e)->name;

	return p + (e->ext ? sizeof(char *) : e->len);
}

/* The length of a value whose length byte (the length - 1: entry_fill)
 * is at @at; its bytes follow. */
static inline size_t value_len_at(const char *at)
{
	return (size_t)(unsigned char)at[0] + 1;
}

static inline unsigned entry_extras(const struct udc_entry *e)
{
	bool valued = e->kind == ENT_POSITIVE && (e->type & POS_VALUE);

	/* relaxed: ENT_EXPIRES is fixed before the entry is published */
	return (valued ? extras_value(value_len_at(entry_tail(e))) : 0) |
	       (e->kind == ENT_POSITIVE && (e->type & POS_LISTED) ? EXTRA_LISTED : 0) |
	       (atomic_load_explicit(&e->hits, memory_order_relaxed) & ENT_EXPIRES ?
			EXTRA_DEADLINE : 0);
}

/* A positive's value: its bytes, their number in *@len (0: none). */
static inline const unsigned char *pos_value(const struct udc_pos *p, size_t *len)
{
	const char *at = entry_tail(&p->e);

	*len = p->e.type & POS_VALUE ? value_len_at(at) : 0;
	return (const unsigned char *)at + 1;
}

/*
 * Expiry.  A deadline is a cache tick (CACHE_TICK_SHIFT: 2^26 ns, 67 ms)
 * counted from the cache's creation on CLOCK_MONOTONIC_COARSE, rounded
 * down, so an answer expires up to a tick early and never more than the
 * clock's own step (a jiffy) late; 32 bits last 9 years, after which
 * every deadline has passed (answers with one are misses: early, never
 * wrong).  A hit reads the clock only for an entry that has a deadline.
 */
#define CACHE_TICK_SHIFT 26
/* cache_ticks(): now, in ticks (engine/engine.h). */
/* The deadline @ttl_ms from now (>= 1: 0 is "none"). */
uint32_t cache_deadline(const struct udc_cache *c, uint32_t ttl_ms);

/* The deadline of a new answer of @kind given @ttl_ms (0: the cache's
 * default for the kind; UDC_TTL_NONE: none), or 0 for none. */
static inline uint32_t cache_deadline_for(const struct udc_cache *c, enum entry_kind kind,
					  uint32_t ttl_ms)
{
	if (!ttl_ms)
		ttl_ms = c->ttl_ms[kind];
	return ttl_ms && ttl_ms != UDC_TTL_NONE ? cache_deadline(c, ttl_ms) : 0;
}

/* e's deadline, 0 if it has none. */
static inline uint32_t entry_deadline(const struct udc_entry *e)
{
	uint32_t deadline = 0;
	unsigned extras = entry_extras(e);

	if (extras & EXTRA_DEADLINE)
		memcpy(&deadline, entry_tail(e) + extras_value_size(extras), sizeof(deadline));
	return deadline;
}

/* Has e a place in its directory's listing (a listed positive)? */
static inline bool entry_listed(const struct udc_entry *e)
{
	return e->kind == ENT_POSITIVE && (e->type & POS_LISTED);
}

/* A listed positive's place in its directory's listing. */
static inline struct entry_kid *pos_kid(struct udc_pos *p)
{
	unsigned extras = entry_extras(&p->e);
	uintptr_t at = (uintptr_t)entry_tail(&p->e) + extras_unaligned_size(extras);

	udc_assert(extras & EXTRA_LISTED);
	return (struct entry_kid *)((at + 7) & ~(uintptr_t)7);
}

/* Has e's deadline passed (an expired answer is a miss)? */
static inline bool entry_expired(const struct udc_cache *c, const struct udc_entry *e)
{
	/* relaxed: ENT_EXPIRES is fixed before the entry is published */
	if (__builtin_expect(!(atomic_load_explicit(&e->hits, memory_order_relaxed) & ENT_EXPIRES), 1))
		return false;
	return cache_ticks(c) >= entry_deadline(e);
}

/* A caller's value buffer (@value, *@value_len bytes) as a value_out:
 * 0, or -EINVAL (no length, or a length with no buffer). */
static inline int value_out_init(struct value_out *vo, void *value, const size_t *value_len)
{
	if (__builtin_expect(!value_len, 0))
		return -EINVAL;
	size_t room = *value_len;
	/* two branches: as one condition gcc kept its flag on the stack */
	if (__builtin_expect(room && !value, 0))
		return -EINVAL;
	*vo = (struct value_out){ .buf = value, .room = room };
	return 0;
}

/* A value of @len bytes at @data, out to @vo: as much as fits. */
static inline void value_copy_out(struct value_out *vo, const void *data, size_t len)
{
	size_t n = len < vo->room ? len : vo->room;

	vo->len = len;
	if (n)   /* one test for both: no value, no room (buf may be NULL) */
		memcpy(vo->buf, data, n);
}

/* The checks a *_value lookup makes first: its value arguments, then the
 * name's length (call_check_len: lookup_name scans the bytes).  0 or
 * -errno; the caller then enters the thread. */
static inline int value_call_check(struct value_out *vo, void *value, const size_t *value_len,
				   struct udc_cache *c, udc_ino dir, const char *name, size_t len)
{
	int r = value_out_init(vo, value, value_len);

	return r ? r : call_check_len(c, dir, name, len);
}

/* Copy p's value out to @vo (NULL: not wanted). */
static inline void pos_value_copy(struct value_out *vo, const struct udc_pos *p)
{
	if (!vo)
		return;
	size_t len;
	const unsigned char *v = pos_value(p, &len);
	/* Its range (0..256) hidden from gcc, which copied by rep movsq then
	 * (startup cycles a copy, 8 steps for 64 bytes), not glibc's memcpy. */
	__asm__("" : "+r"(len));
	value_copy_out(vo, v, len);   /* none: len 0, nothing copied */
}

/* ---- engine/dir.c: directory objects ---- */
/* Under rcu_read_lock: the object stays until the unlock (not pinned). */
struct udc_dir *dir_find_rcu(struct udc_cache *c, udc_ino ino);
/* Pinned (dir_put when done): find or create, NULL on ENOMEM; or find only. */
struct udc_dir *dir_get(struct udc_cache *c, udc_ino ino);
struct udc_dir *dir_find(struct udc_cache *c, udc_ino ino);
/* Under rcu_read_lock: pin d, found in the directory table or through a
 * published entry; false if it is dead. */
bool dir_pin_rcu(struct udc_cache *c, struct udc_dir *d);
/* d's extension, or NULL (none yet).  Under rcu_read_lock, or d pinned. */
static inline struct dir_ext *dir_ext_rcu(struct udc_dir *d)
{
	/* acquire: pairs with dir_ext_get's CAS (the extension's fields) */
	return atomic_load_explicit(&d->ext, memory_order_acquire);
}
/* d's extension, made if it has none (d pinned): NULL on ENOMEM.  @call:
 * for a call holding no lock, which may wait for room (bounded_slab_alloc);
 * else (under a lock) made only within the bound's reserve. */
struct dir_ext *dir_ext_get(struct udc_cache *c, struct udc_dir *d, bool call);
/* The directory slab (udc_create, udc_destroy after dir_free_all). */
int dir_slab_create(struct udc_cache *c);
void dir_slab_destroy(struct udc_cache *c);
void dir_hold(struct udc_dir *d);   /* another reference, on a dir already held */
void dir_put(struct udc_cache *c, struct udc_dir *d);
/* dir_reap and dir_reap_due (the policy's calls): engine/engine.h */
void dir_reap_init(struct udc_cache *c);
/* A new generation of d (pinned): its entries now are stale. */
void dir_bump_gen(struct udc_cache *c, struct udc_dir *d);
/* Negatives of @d of its current generation, about (the admission bound's
 * count); under rcu_read_lock or d pinned, by @pins of the caller's. */
uint64_t dir_negatives(struct udc_dir *d, int pins);
/* A negative of @d of generation @gen left the table (counted if stale). */
void dir_stale_negative_gone(struct udc_dir *d, uint32_t gen);
/* May a new negative of client @tag be kept in d, pinned once by the
 * caller (the policy decides)? */
static inline bool dir_admits_negative(struct udc_cache *c, struct udc_dir *d, uint8_t tag)
{
	/* relaxed: a heuristic's input */
	int64_t pos = atomic_load_explicit(&d->nr_positive, memory_order_relaxed);

	return shrink_admit_negative(c->shrink, pos, dir_negatives(d, 1), tag);
}

/*
 * The complete flag and the fill protocol (engine/dir.c).  d->state counts
 * the names d lost while they still existed (evicted, invalidated, answers
 * not cached, the directory forgotten): a fill token records the count, and
 * completing fails if it moved, so a directory is never complete with one
 * of its names missing.  Every such loss calls dir_drop_note() first, then
 * unpublishes (or does not cache) the name.
 */
void dir_drop_note(struct udc_dir *d);
/* Under rcu_read_lock, after a lookup that found no current entry of d. */
static inline bool dir_complete_rcu(struct udc_dir *d)
{
	/* acquire: the table loads before it saw a drop's unpublish; pairs with
	 * the seq_cst RMW of dir_drop_note(), made before that unpublish:
	 * Ordering (C) */
	atomic_thread_fence(memory_order_acquire);
	return atomic_load_explicit(&d->state, memory_order_relaxed) & DIR_COMPLETE;
}
/* Has d's completeness outlived its life (the negatives' default: a
 * complete directory's absent names are negative answers too)? */
static inline bool dir_complete_expired(const struct udc_cache *c, struct udc_dir *d)
{
	struct dir_ext *x = dir_ext_rcu(d);
	/* relaxed: written before the complete flag's seq_cst CAS, read
	 * after the flag was seen set (dir_complete_rcu's acquire fence);
	 * no extension: the flag was set on another object of the ino */
	uint32_t until = x ? atomic_load_explicit(&x->complete_until, memory_order_relaxed) : 1;

	return until && cache_ticks(c) >= until;
}
/* Not complete (a caller's snapshot, for its own decisions). */
static inline bool dir_is_complete(const struct udc_cache *c, struct udc_dir *d)
{
	/* relaxed: a hint (whether to store a negative); never an answer */
	return (atomic_load_explicit(&d->state, memory_order_relaxed) & DIR_COMPLETE) &&
	       !dir_complete_expired(c, d);
}
/* 0, or -ENOMEM (no room for d's extension, where the fill's epoch is). */
int dir_fill_begin(struct udc_cache *c, struct udc_dir *d, struct udc_fill *fill);
/* With @s (the name's stripe) locked: may a listing read after @fill began
 * be cached for a name of @s in d (no mutation of the stripe's names, no
 * invalidation of d, the same object)? */
bool dir_fill_listed_ok(struct udc_dir *d, const struct udc_fill *fill, struct stripe *s);
/* 0 or -ESTALE; complete for @ttl_ms (cache_deadline_for: 0 the negatives' default) */
int dir_fill_complete(struct udc_cache *c, struct udc_dir *d, const struct udc_fill *fill);

/*
 * "..": x->parent (an ino, in d's extension x), valid while the parent's
 * object exists and the epoch in its extension equals x->parent_stamp
 * (engine/dir.c).  Every writer holds x->lock and bumps parent_seq.
 */
/* child's parent is now @parent (pinned), or unknown (NULL). */
/* 0, or -ENOMEM (setting one: no room for an extension; recorded unknown).
 * Setting one, no lock held: it may wait for room (dir_ext_get). */
int dir_parent_set(struct udc_cache *c, struct udc_dir *child, struct udc_dir *parent);
/* child's record, if it has one, now names @parent (pinned; NULL: unknown,
 * as when there is no room for @parent's extension). */
void dir_parent_move(struct udc_cache *c, struct udc_dir *child, struct udc_dir *parent);
/* child (a directory named by an entry of @parent, with @cookie) learnt:
 * its record, if it has one, is brought up to date. */
void dir_learn(struct udc_cache *c, struct udc_dir *child, struct udc_dir *parent,
	       uint64_t cookie);
/* child's parent is unknown if it was @ino. */
void dir_parent_forget_if(struct udc_cache *c, struct udc_dir *child, udc_ino ino);
/* What resolve_dotdot snapshots before it asks the backend. */
struct dotdot_snap {
	uint32_t gen, seq;
	uint64_t moves;
};
/* 0, or -ENOMEM (no room for d's extension, where the record goes). */
int dir_parent_snap(struct udc_cache *c, struct udc_dir *d, struct dotdot_snap *snap);
/* Record @parent (pinned) as d's if nothing changed since @snap: true if so. */
bool dir_parent_learn(struct udc_cache *c, struct udc_dir *d, struct udc_dir *parent,
		      const struct dotdot_snap *snap);
/* The ".." answer of d, under rcu_read_lock: the parent's ino, or
 * UDC_INO_NONE (unknown, or no longer trusted); *cookie its cookie. */
udc_ino dir_parent_rcu(struct udc_cache *c, struct udc_dir *d, uint64_t *cookie);
/* A directory left d (or was replaced in it) and the cache cannot tell
 * which: every child's ".." through d becomes unusable. */
void dir_children_moved(struct udc_cache *c, struct udc_dir *d);
/* The cookie of the entry naming d, for ".." answers (d pinned), if d has
 * an extension; under rcu_read_lock, d's cookie (0: not known). */
void dir_cookie_set(struct udc_dir *d, uint64_t cookie);
uint64_t dir_cookie_rcu(struct udc_dir *d);
void dir_free_all(struct udc_cache *c);

/* ---- engine/listing.c: a directory's positives in a stable order ----
 * (udc_readdir).  Listed positives (POS_LISTED) are linked under their
 * stripe: published, moved, unpublished. */
/* Make d's listing if it has none (a fill begins): false if out of memory.
 * No lock held: it may wait for room (dir_ext_get). */
bool listing_make(struct udc_cache *c, struct udc_dir *d);
/* Should a new positive of d be listed (d has a listing and is filling or
 * complete)?  Decided at allocation: the entry's size depends on it. */
bool listing_wanted(struct udc_dir *d);
/* e (listed) was published in place of @old (NULL: none): it takes old's
 * place if old was listed, else goes last. */
void listing_link_locked(struct udc_cache *c, struct udc_entry *e, struct udc_entry *old);
/* e (listed) left the table. */
void listing_unlink_locked(struct udc_cache *c, struct udc_entry *e);
/* e (listed) was copied to @to (entry_move): @to takes its place. */
void listing_moved_locked(struct udc_cache *c, struct udc_entry *e, struct udc_entry *to);
/* d is freed (no entry left): its listing too.  No other caller. */
void listing_free(struct udc_cache *c, struct udc_dir *d);
/* engine_check's part: 0 or -EUCLEAN (what is wrong on stderr; the caller
 * names d). */
int listing_check(struct udc_dir *d);

/* ---- engine/forget.c: udc_forget_ino's table ----
 * (cache_garbage_round_begin/end, the policy's: engine/engine.h) */
void forget_init(struct udc_cache *c);

/* ---- engine/lookup.c: the hit path ---- */
struct name_key {
	udc_ino dir;
	uint64_t dir_key;                 /* dir_key(dir): what an entry's directory holds */
	const char *name;
	size_t len;
};

static inline struct name_key name_key_of(const struct udc_cache *c, udc_ino dir, const char *name,
					  size_t len)
{
	return (struct name_key){ .dir = dir, .dir_key = dir_key(&c->key, dir), .name = name,
				  .len = len };
}
/* name_check(), call_check() (the checks every (cache, dir, name) call
 * makes first; the lookups' call_check_len() leaves the scan of the bytes
 * to lookup_name) and name_is_dotdot(): common/path.h. */
/* Does the entry of @node hold @key (a struct name_key)?  Its hash matched. */
static inline bool name_match(const struct name_node *node, const void *key)
{
	const struct udc_entry *e = caa_container_of(node, struct udc_entry, node);
	const struct name_key *k = key;

	return e->len == k->len && dir_node_key(e->dir) == k->dir_key &&
	       name_eq(entry_name(e), k->name, k->len);
}
/* Call with rcu_read_lock held.  The entry, current or stale, or NULL. */
static inline struct udc_entry *entry_find_rcu(struct udc_cache *c, uint64_t hash,
					       const struct name_key *k)
{
	struct name_node *n = name_table_find_rcu(&c->names, hash, name_match, k);

	return n ? caa_container_of(n, struct udc_entry, node) : NULL;
}

/* Look (dir, name) up under rcu_read_lock, counting stats; UDC_* result,
 * or -EINVAL when no cached name matched and name holds a '/' or NUL
 * (callers check the rest of name_check() first: call_check_len).
 * @miss_pin (may be NULL; *miss_pin NULL on entry): on UDC_MISS, dir's
 * object pinned (dir_put when done) if the cache has one, else NULL. */
int lookup_name(struct udc_cache *c, udc_ino dir, const char *name, size_t len, uint64_t hash,
		struct udc_attr *out, struct value_out *vo, struct udc_dir **miss_pin);
int lookup_dotdot(struct udc_cache *c, udc_ino dir, struct udc_attr *out);

/* ---- engine/mutate.c: table updates under a stripe ---- */
static inline struct stripe *stripe_of(struct udc_cache *c, uint64_t hash)
{
	return &c->stripes[hash & c->stripe_mask];   /* a bucket's names share it: name_table.c */
}
/* Does the caller hold the stripe of e's name?  (Debug: hashes the name.) */
static inline bool entry_stripe_held(struct udc_cache *c, const struct udc_entry *e)
{
	return lock_held(&stripe_of(c, hash_name(&c->key, dir_ino(c, e->dir), entry_name(e), e->len))->lock);
}
/* Every answer in flight is stale and every stripe touched, as if every
 * name had changed (udc_forget_ino: the names of an object are unknown). */
void inflight_mark_all_stale(struct udc_cache *c);
/* Forget directory ino's contents and "..", if it has an object (as
 * udc_invalidate_dir; @why: the invalidate probe's kind). */
void dir_forget(struct udc_cache *c, udc_ino ino, int why);
/* Every mutation of a name calls it, under the name's stripe: in-flight
 * answers for it are stale, and the stripe is touched (udc_add_listed). */
void inflight_mark_stale_locked(struct udc_cache *c, struct stripe *s, uint64_t hash,
				const struct name_key *k);
/* The same without the touch: a listing's own answer (udc_add_listed) is
 * no change of the store, and the fills must not be refused for it. */
void inflight_answers_stale_locked(struct stripe *s, uint64_t hash, const struct name_key *k);
struct inflight *inflight_find_locked(struct stripe *s, uint64_t hash, const struct name_key *k);
bool attr_valid(const struct udc_attr *attr);   /* ino set, known type, flags 0 */
/* ---- engine/resolve.c ---- */
/* udc_resolve() after the argument checks: 0, -ENOENT or -errno. */
int resolve_name(struct udc_cache *c, udc_ino dir, const char *name, size_t len,
		 const struct udc_call *call, struct udc_attr *out, struct value_out *vo,
		 unsigned *src);   /* src: UDC_FROM_*, may be NULL */
/* Publish e (filled, not yet published) for k, replacing what was there.
 * e's reference to its directory is the replaced entry's, handed on;
 * with none replaced, the caller's pin on it if @pin_given (true
 * returned: the caller no longer holds it), else a dir_hold of its own. */
bool entry_publish_locked(struct udc_cache *c, struct udc_entry *e, uint64_t hash,
			  const struct name_key *k, bool pin_given);
/* Drop what is cached for k; return the dropped entry's accounted size, 0 if none. */
size_t entry_drop_locked(struct udc_cache *c, uint64_t hash, const struct name_key *k);
void entry_unlink_locked(struct udc_cache *c, struct udc_entry *e);
void entry_detach(struct udc_cache *c, struct udc_entry *e);   /* unlink without the free */
/* engine/fork.c: fork() hooks (installed once); at create (0 or -errno), at destroy. */
int fork_register(struct udc_cache *c);
void fork_unregister(struct udc_cache *c);

/* ---- engine/evict.c: one entry, at the reclaim policy's request ----
 * (entry_key_copy, entry_evict, entry_move, entry_hits_spend and the
 * accessors: engine/engine.h) */

/* ---- engine/cache.c (cache_* for the policy: engine/engine.h) ---- */
/* The validator: walk every table and list and check the invariants of
 * internal.h: 0, or -EUCLEAN and why on stderr.  Call with no mutation
 * running (with a reclaim thread: tests/common/tquiet.h); it holds the
 * name table's resizes off itself (name_table_hold). */
int engine_check(struct udc_cache *c);

#endif
