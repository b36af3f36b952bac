/* SPDX-License-Identifier: MIT */
/*
 * engine/alloc.c - the engine's allocation interface, and deferred frees.
 *
 * Owns: every byte the cache allocates goes through mem_alloc*() and is
 * counted in cache->bytes_held (jemalloc's real size of the allocation), so
 * bytes_used is what the cache holds, not what it asked for; the slabs'
 * pages and RCU batches are counted there too (bytes_charge, their
 * slab_config.charge).  And the bound at allocation: a charge that would
 * take bytes_used past limit + slack is refused (held_charge), and a
 * call's new objects make room and retry (entry_alloc,
 * bounded_slab_alloc).  Entries are
 * allocated here (entry_alloc) and freed here, either at once when no
 * reader can hold them or after an RCU grace period, in batches of
 * FREE_BATCH with one rcu_head per batch instead of one per entry.
 *
 * Entries live in slab/ pages, negatives and positives in slabs of their
 * own (classes 64/96 and 64/96/112 bytes, and 160/256/384 for positives
 * with a value, which lives in its entry: a hit reads it from the entry's
 * lines, with no block of its own to miss in the CPU's cache); slab
 * batches their RCU frees per thread.  Names longer than the inline room,
 * and everything else the engine allocates, come from jemalloc, counted
 * here; an entry with its name apart goes through this file's own
 * batches so that both are freed after the same grace period.  While the
 * slabs are landing (shrink/: memory wanted), a full batch is freed by
 * the call that filled it, after its own synchronize_rcu; inside a slab
 * hold (a reclaim pass) it joins the hold; otherwise it goes to call_rcu,
 * its bytes counted in frees_queued until it runs, and listed on
 * frees_flight, where a caller that needs the memory takes it and frees
 * it after a grace period of its own (entry_frees_land) rather than wait
 * for call_rcu's thread.  In sanitizer builds the libc allocator
 * (the sanitizer's) is used for the jemalloc part, and slab poisons free
 * objects, so that ASan sees every bound and every use after free.
 *
 * Locking:
 *   free_lock (a spinlock, leaf) protects cache->free_pending and
 *   cache->frees_flight.  It may be taken under a stripe lock, and is
 *   taken by the call_rcu thread (a batch's callback) and by a lander for
 *   a walk of frees_flight.  entry_frees_wait's mark has a lock of its
 *   own (leaf), shared with the call_rcu thread only.
 *
 * Ordering:
 *   cache->bytes_held is a relaxed counter: it is read for limits and stats
 *   only, where a slightly old value is fine.  Its charges are relaxed
 *   compare-and-swaps: atomic on the one variable, they make each check
 *   and add one step against every other charge; they order nothing else.
 *   tls_bounded is the thread's own.  cache->nr_ext (entries with
 *   an external name) is relaxed: only udc_destroy, alone, acts on it.
 *   cache->frees_queued is relaxed likewise (a size for reclaim), and so
 *   are the slab_wait_note counts of a batch's entries (compaction's
 *   choice of pages only; the -1 comes before the free, so a page is
 *   never released with its count still raised).
 *   call_rcu() orders the batch's frees after every read-side section that
 *   could have found the entries (they were unpublished before being added);
 *   so does a landing caller's synchronize_rcu.
 *   entry_frees_wait: a call_rcu thread runs its queue in order, and the
 *   mark's lock orders its callbacks' frees before the waiter's return.
 *   entry_frees_land: common/rcu_flight.h's protocol, under free_lock.
 */
#include "engine/internal.h"

#include <errno.h>
#include <stdlib.h>
#include <jemalloc/jemalloc.h>

#if defined(__SANITIZE_ADDRESS__) || defined(__SANITIZE_THREAD__)
#define UDC_LIBC_ALLOC 1
#endif

static size_t real_size(size_t size, size_t align)
{
	return nallocx(size, align > 16 ? MALLOCX_ALIGN(align) : 0);
}

static void *raw_alloc(size_t size, size_t align)
{
	void *p;

#ifdef UDC_LIBC_ALLOC
	if (posix_memalign(&p, align, size))
		p = NULL;
#else
	p = mallocx(size, align > 16 ? MALLOCX_ALIGN(align) : 0);
#endif
	return p;
}

static void *alloc_counted(_Atomic size_t *bytes, size_t size, size_t align)
{
	void *p = raw_alloc(size, align);

	if (p)
		atomic_fetch_add_explicit(bytes, real_size(size, align), memory_order_relaxed);
	return p;
}

/* ------------------------------------------------------------------ */
/* the bound at allocation */

/* Set while a call allocates what it adds (entry_alloc,
 * bounded_slab_alloc): its charges stop short of the bound (held_charge),
 * by an entry page and the reserve (CALL), on its last try by the
 * reserve only (CALL_LAST), as the rest do. */
enum bound_depth { BOUND_NONE, BOUND_CALL, BOUND_CALL_LAST };
static __thread uint8_t tls_bounded;

#define ROOM_ROUNDS 4    /* a refused allocation's reclaims, then -ENOMEM */
#define HOLD_BATCHES 4   /* the reserve of reclaim's held batches (held_charge) */

#if UDC_DEBUG
/*
 * Debug builds: UDC_REFUSE_EVERY=N in the environment refuses every N-th
 * charge of a call's allocation in each thread, as the bound would, so
 * that the refused path (the retry after shrink_make_room, and its
 * assertions) runs in every context the tests reach (tests/CMakeLists.txt
 * runs the engine suite and the differential stress so).  Not while the
 * thread holds shrink_lock (a test that holds it to keep the chores out
 * would wait on itself).
 */
static bool refuse_injected(struct udc_cache *c)
{
	static _Atomic int every = -1;
	static __thread unsigned charges;
	/* relaxed: the environment's number, the same for every thread */
	int n = atomic_load_explicit(&every, memory_order_relaxed);

	if (n < 0) {
		const char *e = getenv("UDC_REFUSE_EVERY");
		n = e ? atoi(e) : 0;
		atomic_store_explicit(&every, n, memory_order_relaxed);
	}
	return n > 0 && ++charges % (unsigned)n == 0 && !shrink_lock_mine(c->shrink);
}
#endif

/*
 * Count @bytes more in bytes_held if bytes_used stays within limit +
 * slack; else false, nothing counted.  The check and the count are one
 * compare-and-swap on bytes_held, the counter every charge goes through
 * (the slabs' pages and batches, mem_alloc, the tables' growth), so that
 * allocations in flight at once cannot pass the bound together: checked
 * only after each call's allocation, 32 threads at the least limit went
 * 24 KB past it, each call in flight having opened a page.
 *
 * Three depths.  A call's new objects (tls_bounded) stop an entry page
 * and the reserve short of the bound: they make room and retry
 * (bounded_retry), the last try the reserve short only (64 threads at
 * the least limit hold more than the slack in what reclaim cannot give
 * back: their statistics, open pages, the ghosts; some adds failed after
 * four rounds that found nothing to evict).  The rest (reclaim's moves,
 * what is allocated under a lock: directory extensions, free batches, a
 * table's growth) stops the reserve short, and gives up instead (an
 * entry evicted rather than moved, a free that waits for its grace
 * period, a growth skipped).  The reserve is for the batches of
 * reclaim's own frees (@holding, the slabs' slab_hold), which its end
 * gives back: refused, each of its frees would wait for a grace period.
 * While the cache is made (c->shrink not yet set), nothing is refused.
 */
static bool held_charge(struct udc_cache *c, size_t bytes, bool holding)
{
	/* relaxed: a count (see Ordering); the CAS makes the check and the
	 * add one step against every other charge */
	if (!c->shrink) {
		atomic_fetch_add_explicit(&c->bytes_held, bytes, memory_order_relaxed);
		return true;
	}
	size_t ceiling = shrink_limit(c->shrink) + shrink_slack(c->shrink);
	size_t apart = cache_bytes_apart(c);
	size_t held = atomic_load_explicit(&c->bytes_held, memory_order_relaxed);

	if (!holding)
		apart += HOLD_BATCHES * slab_batch_bytes();
	if (tls_bounded == BOUND_CALL)
		apart += slab_page_size(c->slabs[ENT_POSITIVE]);
#if UDC_DEBUG
	if (tls_bounded != BOUND_NONE && refuse_injected(c))
		return false;
#endif
	do {
		if (held + apart + bytes > ceiling)
			return false;
	} while (!atomic_compare_exchange_weak_explicit(&c->bytes_held, &held, held + bytes,
							 memory_order_relaxed, memory_order_relaxed));
	return true;
}

bool bytes_charge(void *arg, long bytes, bool holding)
{
	struct udc_cache *c = arg;

	if (bytes >= 0)
		return held_charge(c, (size_t)bytes, holding);
	/* relaxed: a count */
	atomic_fetch_sub_explicit(&c->bytes_held, (size_t)-bytes, memory_order_relaxed);
	return true;
}

/* A bounded allocation's try number @round begins (bounded_retry ends it). */
static void bounded_try(unsigned round)
{
	tls_bounded = round < ROOM_ROUNDS ? BOUND_CALL : BOUND_CALL_LAST;
}

/* After a bounded allocation (@got: its result): true if it is to be
 * tried again, reclaim having made room (shrink_make_room); false to
 * return @got, NULL with errno ENOMEM once ROOM_ROUNDS did not do. */
static bool bounded_retry(struct udc_cache *c, const void *got, unsigned *round)
{
	tls_bounded = BOUND_NONE;
	if (got || errno != ENOBUFS)
		return false;
	if ((*round)++ == ROOM_ROUNDS) {
		errno = ENOMEM;
		return false;
	}
	/* No lock of the cache held (a test may hold shrink_lock around
	 * calls that are never refused, to keep the chores out). */
	udc_assert(owner_none_held());
	shrink_make_room(c->shrink);
	return true;
}

void *bounded_slab_alloc(struct udc_cache *c, struct slab *s, unsigned cls)
{
	unsigned round = 0;
	void *obj;

	udc_assert(!rcu_read_ongoing());   /* it may wait for reclaim (bounded_retry) */
	do {
		bounded_try(round);
		obj = slab_alloc(s, cls);
	} while (bounded_retry(c, obj, &round));
	return obj;
}

static void free_counted(_Atomic size_t *bytes, void *p, size_t size, size_t align)
{
	if (!p)
		return;
	atomic_fetch_sub_explicit(bytes, real_size(size, align), memory_order_relaxed);
#ifdef UDC_LIBC_ALLOC
	free(p);
#else
	sdallocx(p, size, align > 16 ? MALLOCX_ALIGN(align) : 0);
#endif
}

/* mem_alloc's and mem_alloc_line's: charged first (held_charge). */
static void *held_alloc(struct udc_cache *c, size_t size, size_t align)
{
	size_t real = real_size(size, align);

	if (!held_charge(c, real, false)) {
		errno = ENOBUFS;
		return NULL;
	}
	void *p = raw_alloc(size, align);

	if (!p) {   /* relaxed: a count */
		atomic_fetch_sub_explicit(&c->bytes_held, real, memory_order_relaxed);
		errno = ENOMEM;
	}
	return p;
}

void *mem_alloc(struct udc_cache *c, size_t size)
{
	return held_alloc(c, size, 16);
}

void *mem_alloc_over(struct udc_cache *c, size_t size)
{
	return alloc_counted(&c->bytes_held, size, 16);   /* counted, never refused */
}

void *mem_alloc_line(struct udc_cache *c, size_t size)
{
	return held_alloc(c, size, UDC_CACHELINE);
}

/* The cache struct itself: counted into *bytes before the cache exists. */
struct udc_cache *cache_struct_alloc(size_t stripes, size_t *bytes)
{
	_Atomic size_t n = 0;
	struct udc_cache *c = alloc_counted(&n, sizeof(*c) + stripes * sizeof(struct stripe),
					    UDC_CACHELINE);

	*bytes = atomic_load_explicit(&n, memory_order_relaxed);
	return c;
}

void cache_struct_free(struct udc_cache *c)
{
	size_t size = sizeof(*c) + (c->stripe_mask + 1) * sizeof(struct stripe);
	_Atomic size_t n = real_size(size, UDC_CACHELINE);

	free_counted(&n, c, size, UDC_CACHELINE);
}

/* mem_free() frees what mem_alloc() gave; mem_alloc_line() memory is freed
 * with mem_free_line(). */
void mem_free(struct udc_cache *c, void *p, size_t size)
{
	free_counted(&c->bytes_held, p, size, 16);
}

void mem_free_line(struct udc_cache *c, void *p, size_t size)
{
	free_counted(&c->bytes_held, p, size, UDC_CACHELINE);
}

size_t entry_size(enum entry_kind kind, size_t len, unsigned extras)
{
	size_t head = kind == ENT_POSITIVE ? sizeof(struct udc_pos) : sizeof(struct udc_neg);

	udc_assert(!(extras & (EXTRA_VALUE | EXTRA_LISTED)) || kind == ENT_POSITIVE);
	size_t part = name_fits_inline(kind, len, extras) ? len : sizeof(char *);

	return head + part + extras_size(part, extras);
}

size_t entry_footprint(const struct udc_entry *e)
{
	unsigned extras = entry_extras(e);
	size_t size = entry_size((enum entry_kind)e->kind, e->len, extras);

	if (e->ext)
		size += e->len;
	return size;
}

size_t entry_slot_size(const struct udc_cache *c, const struct udc_entry *e)
{
	return slab_class_size(c->slabs[e->kind], slab_page_class(slab_page_of(c->slabs[e->kind], e)));
}

/* The entries' sizes: negatives and positives apart (their slots, name
 * inline up to NEG_INLINE_MAX / POS_INLINE_MAX), then the sizes only
 * positives with a value take (a 16-byte name and up to 95, 191, or
 * UDC_VALUE_MAX bytes).  The policy lays the classes out
 * (shrink_slab_config: each size twice, its two queues), its budget of
 * open pages by the sizes every cache uses. */
#define POS_VALUE_ROOM 384
static const size_t entry_sizes[2][6] = {
	[ENT_NEGATIVE] = { 64, 96 },
	[ENT_POSITIVE] = { 64, 96, 112, 160, 256, POS_VALUE_ROOM },   /* names up to
	                                     * 16, 48, 64 bytes; then values */
};
static const unsigned entry_nr_sizes[2][2] = {   /* every cache's sizes, all sizes */
	[ENT_NEGATIVE] = { 2, 2 },
	[ENT_POSITIVE] = { 3, 6 },
};
/* The largest positive: a name inline with its deadline and kid in
 * POS_INLINE_MAX, their alignment, the value and its length byte. */
_Static_assert(sizeof(struct udc_pos) + POS_INLINE_MAX + 7 + 1 + UDC_VALUE_MAX <= POS_VALUE_ROOM,
	       "a positive with the longest value fits its largest class");

int entry_slabs_create(struct udc_cache *c)
{
	for (unsigned k = 0; k < 2; k++) {
		struct slab_config cfg;
		shrink_slab_config(c->shrink, entry_sizes[k], entry_nr_sizes[k][1],
				   entry_nr_sizes[k][0], &cfg);
		cfg.charge = bytes_charge;
		cfg.charge_arg = c;
		c->slabs[k] = slab_create(&cfg);
		if (!c->slabs[k])
			return -ENOMEM;
	}
	return 0;
}

void entry_slabs_destroy(struct udc_cache *c)
{
	for (unsigned k = 0; k < 2; k++) {
		if (c->slabs[k])
			slab_destroy(c->slabs[k]);
		c->slabs[k] = NULL;
	}
}

size_t entry_slabs_bytes(struct udc_cache *c)
{
	return slab_bytes(c->slabs[ENT_NEGATIVE]) + slab_bytes(c->slabs[ENT_POSITIVE]);
}

static unsigned extras_of(const struct entry_extra *x)
{
	return extras_value(x->vlen) | (x->deadline ? EXTRA_DEADLINE : 0) |
	       (x->listed ? EXTRA_LISTED : 0);
}

/* Fill e's name part and extras (@dst: where its name goes): the name
 * apart when it does not fit (e->ext), a copy of the value, the deadline.
 * 0, or -ENOMEM with nothing allocated. */
static int entry_fill(struct udc_cache *c, struct udc_entry *e, char *dst, const char *name,
		      const struct entry_extra *x)
{
	unsigned extras = extras_of(x);
	char *ext = NULL;

	if (!name_fits_inline((enum entry_kind)e->kind, e->len, extras)) {
		ext = mem_alloc(c, e->len);
		if (!ext)
			return -ENOMEM;
		memcpy(ext, name, e->len);
		memcpy(dst, &ext, sizeof(ext));
		dst += sizeof(ext);
	} else {
		memcpy(dst, name, e->len);
		dst += e->len;
	}
	if (x->vlen) {   /* 1..UDC_VALUE_MAX: its length - 1 fits a byte */
		*dst++ = (char)(unsigned char)(x->vlen - 1);
		memcpy(dst, x->value, x->vlen);
		dst += x->vlen;
		e->type |= POS_VALUE;
	}
	if (x->deadline) {
		memcpy(dst, &x->deadline, sizeof(x->deadline));
		/* relaxed: before the entry is published (its release) */
		atomic_store_explicit(&e->hits, ENT_EXPIRES, memory_order_relaxed);
	}
	e->ext = ext != NULL;
	if (x->listed)   /* its kid is zeroed (slab): on no list yet */
		e->type |= POS_LISTED;
	if (entry_apart(e))   /* relaxed: a count udc_destroy reads alone (see Ordering) */
		atomic_fetch_add_explicit(&c->nr_ext, 1, memory_order_relaxed);
	return 0;
}

static struct udc_entry *entry_alloc_once(struct udc_cache *c, enum entry_kind kind,
					  const char *name, size_t len, uint64_t hash,
					  const struct entry_extra *x)
{
	static const struct entry_extra none = { 0 };
	struct slab *s = c->slabs[kind];

	if (!x)
		x = &none;
	unsigned extras = extras_of(x);
	int cls = slab_class_for_size(s, entry_size(kind, len, extras));

	udc_assert(cls >= 0 && x->vlen <= UDC_VALUE_MAX &&
		   (!(extras & (EXTRA_VALUE | EXTRA_LISTED)) || kind == ENT_POSITIVE));
	struct udc_entry *e =
		slab_alloc(s, shrink_entry_class(c->shrink, kind, (unsigned)cls, hash, x->client));
	if (!e)
		return NULL;
	if (__builtin_expect(!name_node_linkable(&e->node), 0)) {
		/* an address the name table's buckets cannot hold (none is
		 * mapped there unless asked: engine/name_table.h) */
		slab_free_now(s, e);
		errno = ENOMEM;
		return NULL;
	}
	/* Zeroed by slab, and not memset again: a sweeper that finds it in a
	 * page retired from its cpu slot meanwhile reads published (0) only. */
	e->kind = kind;
	e->len = (uint8_t)len;
	if (kind == ENT_NEGATIVE)
		neg_client_set(e, x->client);
	char *dst = kind == ENT_POSITIVE ? ((struct udc_pos *)e)->name : ((struct udc_neg *)e)->name;
	if (!extras && name_fits_inline(kind, len, 0)) {
		memcpy(dst, name, len);
		return e;
	}
	if (entry_fill(c, e, dst, name, x)) {
		int err = errno;   /* mem_alloc's: ENOBUFS is retried */

		slab_free_now(s, e);
		errno = err;
		return NULL;
	}
	return e;
}

struct udc_entry *entry_alloc(struct udc_cache *c, enum entry_kind kind, const char *name,
			      size_t len, uint64_t hash, const struct entry_extra *x)
{
	unsigned round = 0;
	struct udc_entry *e;

	udc_assert(!rcu_read_ongoing());   /* it may wait for reclaim (bounded_retry) */
	do {
		bounded_try(round);
		e = entry_alloc_once(c, kind, name, len, hash, x);
	} while (bounded_retry(c, e, &round));
	return e;
}

/* An entry's name apart: freed, and the entry has none. */
void entry_ext_free(struct udc_cache *c, struct udc_entry *e)
{
	if (e->ext)
		mem_free(c, (void *)entry_name(e), e->len);
	e->ext = 0;
	/* relaxed: see entry_alloc */
	atomic_fetch_sub_explicit(&c->nr_ext, 1, memory_order_relaxed);
}

void entry_free_now(struct udc_cache *c, struct udc_entry *e)
{
	if (entry_apart(e))
		entry_ext_free(c, e);
	slab_free_now(c->slabs[e->kind], e);
}

/* The entries of batch @b freed (their grace period is over); not @b. */
static void free_batch_entries(struct free_batch *b)
{
	struct udc_cache *c = b->cache;

	/* relaxed: a size (entry_frees_queued) */
	atomic_fetch_sub_explicit(&c->frees_queued, (int64_t)b->queued, memory_order_relaxed);
	for (unsigned i = 0; i < b->n; i++) {
		struct udc_entry *e = b->ents[i];
		slab_wait_note(c->slabs[e->kind], e, -1);   /* before the free: it may release the page */
		entry_free_now(c, e);
	}
}

static void free_batch_release(struct free_batch *b)
{
	free_batch_entries(b);
	mem_free(b->cache, b, sizeof(*b));
}

/* A reference to a taken batch dropped: the last one frees it. */
static void free_batch_taken_put(struct free_batch *b)
{
	if (rcu_flight_put(&b->flight))
		mem_free(b->cache, b, sizeof(*b));
}

/* The callback: the batch's entries freed, unless a lander took them. */
static void free_batch_end(struct free_batch *b)
{
	struct udc_cache *c = b->cache;
	bool taken = false;

	if (b->flying) {
		udc_spin_lock(&c->free_lock);
		taken = rcu_flight_end(&b->flight);
		udc_spin_unlock(&c->free_lock);
	}
	if (taken)
		free_batch_taken_put(b);
	else
		free_batch_release(b);
}

RCU_PENDING_CALLBACK(free_batch_rcu, struct free_batch, rcu, cache->rcu_pending, free_batch_end)

/* The lander's part, run by its hold's end after a grace period; counted
 * in the cache's rcu_pending from the take (udc_destroy waits for it). */
static void free_batch_land_rcu(struct rcu_head *head)
{
	struct free_batch *b = caa_container_of(head, struct free_batch, land_rcu);
	struct rcu_pending *pending = &b->cache->rcu_pending;

	free_batch_entries(b);
	b->queued = 0;
	free_batch_taken_put(b);
	rcu_pending_done(pending);   /* last: the cache may go from here */
}

/* Hand batch @b to call_rcu, its bytes counted until it runs (and on
 * frees_flight, where a lander may take it); in a slab hold (a reclaim
 * pass), to the hold: it runs when the hold ends, and the pages it
 * empties are back with the pass's, not after call_rcu's thread (which
 * naps 10 ms between batches, and a throttled call waited for it). */
static void free_batch_queue(struct udc_cache *c, struct free_batch *b)
{
	rcu_pending_add(&c->rcu_pending);
	b->flying = !slab_holding();
	if (!b->flying) {   /* its hold's end frees it: nothing to wait for */
		slab_call_rcu(&b->rcu, free_batch_rcu);
		return;
	}
	for (unsigned i = 0; i < b->n; i++)
		b->queued += entry_footprint(b->ents[i]);
	/* relaxed: a size (entry_frees_queued) */
	atomic_fetch_add_explicit(&c->frees_queued, (int64_t)b->queued, memory_order_relaxed);
	udc_spin_lock(&c->free_lock);
	rcu_flight_list(&b->flight, &c->frees_flight);
	udc_spin_unlock(&c->free_lock);
	call_rcu(&b->rcu, free_batch_rcu);
}

/* Take the pending batch, if any, with free_lock held. */
static struct free_batch *free_take_locked(struct udc_cache *c)
{
	spin_assert_held(&c->free_lock);
	struct free_batch *b = c->free_pending;

	c->free_pending = NULL;
	return b;
}

void entry_free_deferred(struct udc_cache *c, struct udc_entry *e)
{
	struct free_batch *full = NULL;

	if (!entry_apart(e)) {   /* slab batches it per thread, no rcu_head per entry */
		slab_free_rcu(c->slabs[e->kind], e);
		return;
	}
	/* An entry with parts apart: all go after the same grace period. */

	udc_spin_lock(&c->free_lock);
	struct free_batch *b = c->free_pending;
	if (!b) {
		b = mem_alloc(c, sizeof(*b));
		if (!b) {
			udc_spin_unlock(&c->free_lock);
			/*
			 * No memory for a batch: wait for readers here instead.
			 * Callers free outside read-side sections (mutate.c's
			 * Locking), so this cannot wait on ourselves.
			 */
			udc_assert(!rcu_read_ongoing());
			synchronize_rcu();
			entry_free_now(c, e);
			return;
		}
		b->cache = c;
		b->queued = 0;
		b->n = 0;
		c->free_pending = b;
	}
	b->ents[b->n++] = e;
	slab_wait_note(c->slabs[e->kind], e, 1);   /* compaction: its slot is waiting */
	if (b->n == FREE_BATCH)
		full = free_take_locked(c);
	udc_spin_unlock(&c->free_lock);

	if (!full)
		return;
	if (!slab_holding() && slab_landing(c->slabs[e->kind]) && !rcu_read_ongoing()) {
		/* Memory is wanted: the batch lands here, as the slab's do
		 * (slab_set_landing), not through call_rcu's thread. */
		int cs = cancel_hold();   /* the caller may hold a stripe */
		synchronize_rcu();
		cancel_release(cs);
		free_batch_release(full);
		return;
	}
	free_batch_queue(c, full);
}

/*
 * The frees waiting in the slots' batches and the pending batch, to
 * call_rcu; in a hold, to the hold; and while memory is wanted (landing),
 * landed here in a hold of their own, pages included: a compaction batch's
 * moved-from copies went to call_rcu, and a throttled call then waited for
 * its queue (reclaim_evict).
 */
void entry_free_flush(struct udc_cache *c)
{
	bool land = !slab_holding() && slab_landing(c->slabs[ENT_POSITIVE]) && !rcu_read_ongoing();
	int cs = 0;

	if (land) {
		cs = cancel_hold();   /* the caller may hold shrink_lock */
		slab_hold_begin();
	}
	slab_rcu_flush_own(c->slabs[ENT_NEGATIVE]);
	slab_rcu_flush_own(c->slabs[ENT_POSITIVE]);
	/* and the reaper's: left in their slots, its frees waited for 62
	 * more, their pages pinned after udc_shrink (engine/dir.c) */
	slab_rcu_flush_own(c->dir_slab);

	udc_spin_lock(&c->free_lock);
	struct free_batch *b = free_take_locked(c);
	udc_spin_unlock(&c->free_lock);

	if (b)
		free_batch_queue(c, b);
	if (land) {
		slab_hold_end();
		cancel_release(cs);
	}
}

size_t entry_frees_queued(struct udc_cache *c)
{
	/* relaxed: sizes (free_batch_queue, batch_queue in slab/) */
	int64_t q = atomic_load_explicit(&c->frees_queued, memory_order_relaxed);

	return (q > 0 ? (size_t)q : 0) + slab_queued_bytes(c->slabs[ENT_NEGATIVE]) +
	       slab_queued_bytes(c->slabs[ENT_POSITIVE]);
}

/* A callback queued to wait for the ones queued before it (below). */
struct queue_mark {
	struct rcu_head rcu;
	pthread_mutex_t lock;
	pthread_cond_t cond;
	bool done;                        /* protected by lock */
};

static void queue_mark_rcu(struct rcu_head *head)
{
	struct queue_mark *m = caa_container_of(head, struct queue_mark, rcu);

	pthread_mutex_lock(&m->lock);
	m->done = true;
	pthread_cond_signal(&m->cond);
	pthread_mutex_unlock(&m->lock);   /* the waiter's frame may go from here on */
}

/*
 * Wait until the callbacks queued to the caller's call_rcu thread before
 * this call have run.  rcu_barrier() would do it for every call_rcu
 * thread, but it callocs and urcu_die()s (aborts) when that fails; the
 * mark lives on our stack and call_rcu allocates nothing once the thread
 * exists (udc_create makes it).  liburcu runs a thread's queue in order,
 * so the mark runs after them.  Every udcache callback goes to the
 * default call_rcu thread unless the embedder gave threads or CPUs
 * threads of their own; then this waits for the caller's queue only.
 */
static void call_rcu_queue_wait(void)
{
	struct queue_mark m = { .done = false };
	int cs = cancel_hold();   /* m must outlive its callback */

	pthread_mutex_init(&m.lock, NULL);
	pthread_cond_init(&m.cond, NULL);
	call_rcu(&m.rcu, queue_mark_rcu);
	pthread_mutex_lock(&m.lock);
	while (!m.done)
		pthread_cond_wait(&m.cond, &m.lock);
	pthread_mutex_unlock(&m.lock);
	pthread_cond_destroy(&m.cond);
	pthread_mutex_destroy(&m.lock);
	cancel_release(cs);
}

void entry_frees_land(struct udc_cache *c)
{
	struct free_batch *b, *tmp;
	bool own = !slab_holding();
	int cs = 0;

	udc_assert(!rcu_read_ongoing());   /* the hold's end waits for grace periods */
	if (own) {
		cs = cancel_hold();   /* the caller may hold shrink_lock */
		slab_hold_begin();
	}
	entry_free_flush(c);   /* the slots' and the pending batch, into the hold */
	udc_spin_lock(&c->free_lock);
	cds_list_for_each_entry_safe(b, tmp, &c->frees_flight, flight.link) {
		rcu_flight_take(&b->flight);
		rcu_pending_add(&c->rcu_pending);
		/* unpublished before free_batch_queue, which was before this;
		 * the hold's grace period starts after */
		slab_call_rcu(&b->land_rcu, free_batch_land_rcu);
	}
	udc_spin_unlock(&c->free_lock);
	slab_land_queued(c->slabs[ENT_NEGATIVE]);
	slab_land_queued(c->slabs[ENT_POSITIVE]);
	slab_land_queued(c->dir_slab);
	if (own) {
		slab_hold_end();
		cancel_release(cs);
	}
}

void entry_frees_wait(struct udc_cache *c)
{
	entry_free_flush(c);   /* every slot's batch, waiting for its lock */
	entry_frees_land(c);
	call_rcu_queue_wait();   /* the batches whose callbacks were running have run */
	call_rcu_queue_wait();   /* and the pages they emptied are released */
}
