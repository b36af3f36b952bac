/* SPDX-License-Identifier: MIT */
/*
 * slab/slab.c - slabs, cpu slots, allocation, frees, statistics.
 *
 * Owns: slab creation and destruction, the cpu slots (each: an open page
 * per class and an RCU free batch), the allocation fast path, frees
 * (remote, after a grace period, held), page retirement and acquisition,
 * slab_stats and slab_check.
 *
 * Cpu slots: a slab has nr_cpus of them (the CPUs, or fewer when the
 * owner asks: small caches).  A thread takes the slot of the CPU it runs
 * on (this_cpu: its rseq area, no system call) with a trylock, or the next
 * slot whose lock is free, or waits for its own.  So however many threads
 * call, at most nr_cpus x nr_classes pages are open, and nothing stays
 * behind when a thread exits or parks: reclaim retires open pages itself
 * (slab_release_open), and a free batch is any slot's, flushed by anyone.
 *
 * Allocation: under the slot lock, the slot's open page of the class; pop
 * its local list or bump; else take its remote list (one exchange); else
 * retire it (PARTIAL, and the newest page of its class) and acquire a
 * partial page with a quarter free (the fullest with a slot free, in a
 * slab of objects that never move: fullest_first), or a new page (always,
 * in a fifo class), under the class lock.
 *
 * Frees: every free is a lock-free push on the page's remote list (the
 * slot lock is not taken to free).  A remote free that may have emptied an
 * unowned partial page takes the class lock to collect and release it.
 * slab_free_rcu() fills the slot's batch of SLAB_BATCH objects with one
 * rcu_head; the batch's callback frees them, or, while the owner has the
 * slab landing (its memory wanted now), the freer that filled it does,
 * after waiting for the grace periods itself.  The bytes of the batches
 * handed to call_rcu are counted until they run (queued_bytes: the owner
 * may wait for them rather than evict), and listed (flight): an owner that
 * needs their memory lands them in its hold (slab_land_queued) instead of
 * waiting for call_rcu's thread.  An owner's charge (slab_config)
 * counts the pages and batches it takes and may refuse them: no object
 * then (ENOBUFS), or a free that waits for its grace period itself.
 *
 * Locking:
 *   cpu->lock (the slot's pages' local side, its batch) -> cls->lock (page
 *   lists, non-OPEN pages) -> retained_lock.  A slot lock is held for a
 *   pop, or across a refill (which may call jemalloc and the owner's
 *   charge, slab_config: a leaf that takes no lock), never across another
 *   callback into the owner, synchronize_rcu or call_rcu.  A held pass
 *   takes the slots' batches with a trylock only (slab_rcu_flush_own: the
 *   reclaimer holds shrink_lock, and an allocator may wait for it).
 *   retained_lock is taken alone too: slab_set_roomy turned off gives
 *   back the spare pages past the tight cap at once (jemalloc's free and
 *   the owner's charge under no lock of ours), so its caller holds none
 *   of the slab's locks (the owner calls it after a call's work).
 *   flight_lock (a leaf) protects the flight list (common/rcu_flight.h);
 *   it is taken by batch_queue, the callbacks and the landers.
 *
 * Ordering:
 *   (a) Remote push is a release CAS; the collector's exchange is acquire
 *       (page.c): the next[] link is seen with the slot.
 *   (b) A retire stores owner = NULL and then takes the remote list; a
 *       remote freer pushes, counts (remote_n), then loads owner; a
 *       seq_cst fence on each side between its store and its load, so
 *       either the retire's collect sees the push or the freer sees NULL
 *       and checks the page itself (store-buffer pattern): an emptied page
 *       is found by one of them.
 *   (e) collect lowers used, then remote_n with release; a freer's acq_rel
 *       increment that follows it reads that used: the freer whose count
 *       reaches used is the last one and takes the class lock.  A freer
 *       that reads an older remote_n only takes the lock for nothing (the
 *       locked path collects again and decides).  Should an emptied page
 *       still be missed, it stays PARTIAL and empty until the next
 *       acquire, isolate or compaction takes it (never lost or leaked).
 *   (c) The remote freer touches the header after its push inside
 *       rcu_read_lock; pages are released with call_rcu (page.c).
 *   (d) slab_free_rcu: the caller unpublished the object before; call_rcu
 *       runs the batch after every reader that could have found it (or,
 *       held, slab_hold_end frees it after its own synchronize_rcu, and
 *       releases the pages it emptied after a second one, for (c); a
 *       landed batch is a hold of its own, ended at once).
 *       slab_call_rcu's callbacks, held, run after that first one too, and
 *       the pages they empty are released after the second.  A batch
 *       taken from the flight list (slab_land_queued) is freed by the
 *       lander's hold's end: common/rcu_flight.h's protocol.
 *   The slot locks order everything else: an open page's local side and
 *   a batch are touched only under their slot's lock.
 *
 * Limitations (this version): partial pages are found by a bounded scan
 * of the partial list (SLAB_PARTIAL_SCAN, rotating the ones skipped), not
 * by occupancy bins; slots freed remotely are poisoned for ASan when they
 * are collected, not when they are freed; slab_check is exact only when
 * no other call runs, so the debug tier runs it at slab_destroy and runs
 * the per-page validator at slab_page_putback.
 */

#include "slab/internal.h"
#include "common/cancel.h"

#include <errno.h>
#include <sched.h>
#include <sys/mman.h>
#include <sys/rseq.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

static __thread bool tls_holding;            /* slab_hold_begin .. slab_hold_end */
static __thread struct slab_batch *tls_held; /* batches kept meanwhile, newest first */
static __thread struct rcu_head *tls_calls;  /* slab_call_rcu's meanwhile, linked
                                              * through their (unused) next.next */
__thread bool slab_tls_capturing;
__thread struct slab_page *slab_tls_captured;

static const size_t default_sizes[] = { 64, 96, 128, 192, 256 };
static _Atomic uint64_t next_id = 1;

/* ------------------------------------------------------------------ */
/* creation */

static int class_layout(struct slab_class *c, size_t size, size_t page_size)
{
	size_t hdr = sizeof(struct slab_page);

	if (size < 16 || size > 4096 || size % 16 || size > page_size / 8)
		return -EINVAL;
	for (size_t cap = (page_size - hdr) / size; cap > 0; cap--) {
		size_t off = (hdr + cap * sizeof(uint16_t) + 63) & ~(size_t)63;
		if (cap <= SLAB_MAX_SLOTS && off + cap * size <= page_size) {
			c->capacity = (uint32_t)cap;
			c->offset = (uint32_t)off;
			c->size = (uint32_t)size;
			return 0;
		}
	}
	return -EINVAL;
}

unsigned slab_default_cpus(void)
{
	long n = sysconf(_SC_NPROCESSORS_ONLN);

	return n < 1 ? 1 : n > SLAB_MAX_CPUS ? SLAB_MAX_CPUS : (unsigned)n;
}

static int slab_geometry(struct slab *s, const struct slab_config *cfg)
{
	unsigned shift = cfg && cfg->page_shift ? cfg->page_shift : SLAB_PAGE_SHIFT_MAX;
	unsigned cpus = cfg && cfg->nr_cpus ? cfg->nr_cpus : slab_default_cpus();

	if (shift < SLAB_PAGE_SHIFT_MIN || shift > SLAB_PAGE_SHIFT_MAX || cpus > SLAB_MAX_CPUS)
		return -EINVAL;
	s->page_shift = shift;
	s->page_size = (size_t)1 << shift;
	s->nr_cpus = cpus;
	if (cfg) {
		s->charge = cfg->charge;
		s->charge_arg = cfg->charge_arg;
	}
	return 0;
}

struct slab *slab_create(const struct slab_config *cfg)
{
	const size_t *sizes = default_sizes;
	unsigned n = sizeof(default_sizes) / sizeof(default_sizes[0]);
	struct slab *s;

	if (cfg && cfg->nr_classes) {
		if (cfg->nr_classes > SLAB_MAX_CLASSES) {
			errno = EINVAL;
			return NULL;
		}
		sizes = cfg->class_size;
		n = cfg->nr_classes;
	}
	if (slab_arena_init()) {
		errno = ENOMEM;
		return NULL;
	}
	if (posix_memalign((void **)&s, 64, sizeof(*s))) {
		errno = ENOMEM;
		return NULL;
	}
	memset(s, 0, sizeof(*s));
	if (slab_geometry(s, cfg)) {
		free(s);
		errno = EINVAL;
		return NULL;
	}
	s->nr_classes = n;
	s->retained_max = cfg ? cfg->retained_max : 0;
	s->retained_roomy_max = slab_retained_roomy(s->retained_max,
						    cfg ? cfg->retained_roomy_max : 0);
	for (unsigned i = 0; i < n; i++) {
		struct slab_class *c = &s->cls[i];
		if (class_layout(c, sizes[i], s->page_size) || (i && sizes[i] < sizes[i - 1])) {
			free(s);
			errno = EINVAL;
			return NULL;
		}
	}
	if (posix_memalign((void **)&s->cpus, 64, s->nr_cpus * sizeof(*s->cpus))) {
		free(s);
		errno = ENOMEM;
		return NULL;
	}
	memset(s->cpus, 0, s->nr_cpus * sizeof(*s->cpus));
	for (unsigned i = 0; i < s->nr_cpus; i++)
		udc_mutex_init(&s->cpus[i].lock);
	for (unsigned i = 0; i < n; i++) {
		struct slab_class *c = &s->cls[i];
		pthread_mutex_init(&c->lock, NULL);
		CDS_INIT_LIST_HEAD(&c->pages);
		CDS_INIT_LIST_HEAD(&c->partial);
		c->index = i;
		c->fifo = cfg && (cfg->fifo_mask >> i) & 1;
		c->fullest_first = cfg && cfg->fullest_first;
		c->slab = s;
	}
	pthread_mutex_init(&s->retained_lock, NULL);
	CDS_INIT_LIST_HEAD(&s->retained);
	pthread_mutex_init(&s->flight_lock, NULL);
	CDS_INIT_LIST_HEAD(&s->flight);
	s->fixed_bytes = sizeof(*s) + s->nr_cpus * sizeof(*s->cpus);
	atomic_init(&s->meta_bytes, (int64_t)s->fixed_bytes);
	atomic_init(&s->seq_next, 1);
	/* relaxed: a name, unique by the RMW alone */
	s->id = atomic_fetch_add_explicit(&next_id, 1, memory_order_relaxed);
	return s;
}

unsigned slab_nr_classes(const struct slab *s)
{
	return s->nr_classes;
}

size_t slab_class_size(const struct slab *s, unsigned cls)
{
	return cls < s->nr_classes ? s->cls[cls].size : 0;
}

size_t slab_page_size(const struct slab *s)
{
	return s->page_size;
}

unsigned slab_nr_cpus(const struct slab *s)
{
	return s->nr_cpus;
}

int slab_class_for_size(const struct slab *s, size_t size)
{
	for (unsigned i = 0; i < s->nr_classes; i++)
		if (size <= s->cls[i].size)
			return (int)i;
	return -EINVAL;
}

/* ------------------------------------------------------------------ */
/* cpu slots */

/* The CPU this thread runs on: the kernel keeps it in the thread's rseq
 * area, which glibc (2.35 on) registers, so it is one load where
 * sched_getcpu was a call through the PLT (about 30 instructions, four a
 * create-and-unlink cycle).  Without a registration (refused, or
 * glibc.pthread.rseq=0), sched_getcpu. */
static inline int this_cpu(void)
{
	if (__builtin_expect(__rseq_size > 0, 1)) {
		const struct rseq *rs =
			(const struct rseq *)((char *)__builtin_thread_pointer() + __rseq_offset);
		/* relaxed: the kernel writes it on this thread's migrations;
		 * a stale CPU only picks another slot (a hint) */
		int cpu = (int)__atomic_load_n(&rs->cpu_id, __ATOMIC_RELAXED);
		if (cpu >= 0)
			return cpu;
	}
	return sched_getcpu();
}

/* Lock a cpu slot: this CPU's if free, else the next free one, else wait
 * for this CPU's (every slot busy: more runnable callers than slots). */
static struct slab_cpu *cpu_lock(struct slab *s)
{
	int cpu = this_cpu();
	unsigned n = s->nr_cpus, first = cpu < 0 ? 0 : (unsigned)cpu;

	if (first >= n)   /* fewer slots than CPUs: the one division, rare */
		first %= n;
	for (unsigned k = 0, i = first; k < n; k++, i = i + 1 < n ? i + 1 : 0) {
		struct slab_cpu *sc = &s->cpus[i];
		if (!udc_mutex_trylock(&sc->lock))
			return sc;
	}
	udc_mutex_lock(&s->cpus[first].lock);
	return &s->cpus[first];
}

static void cpu_unlock(struct slab_cpu *sc)
{
	udc_mutex_unlock(&sc->lock);
}

/* ------------------------------------------------------------------ */
/* retiring and acquiring pages */

uint64_t slab_now_ms(void)
{
	struct timespec t;

	clock_gettime(CLOCK_MONOTONIC_COARSE, &t);
	return (uint64_t)t.tv_sec * 1000 + (uint64_t)t.tv_nsec / 1000000;
}

/* Slot @sc (locked) gives up its OPEN page of class @cls: it becomes
 * PARTIAL, and the newest of its class (its objects are as young as the
 * last one allocated). */
static void page_retire_locked(struct slab_cpu *sc, unsigned cls)
{
	lock_assert_held(&sc->lock);
	struct slab_page *p = sc->open[cls];
	struct slab_class *c = p->cls;

	sc->open[cls] = NULL;
	pthread_mutex_lock(&c->lock);
	slab_page_requeue_locked(p);
	p->state = SLAB_PARTIAL;
	cds_list_add_tail(&p->plink, &c->partial);
	/* relaxed store + seq_cst fence: the owner store is before the collect
	 * below; pairs with the fence in remote_free (b) */
	atomic_store_explicit(&p->owner, NULL, memory_order_relaxed);
	atomic_thread_fence(memory_order_seq_cst);
	slab_page_collect(p);
	if (atomic_load_explicit(&p->used, memory_order_relaxed) == 0)
		slab_page_release_locked(p);
	pthread_mutex_unlock(&c->lock);
}

/* Set by slab_compact on its thread: refills skip sparse pages, which are
 * what it evacuates, so that survivors move into dense pages only once. */
__thread bool slab_tls_compacting;

/* Partial page @p of @c becomes slot @sc's open page; the class lock held. */
static struct slab_page *page_open_locked(struct slab_cpu *sc, struct slab_class *c,
					  struct slab_page *p)
{
	cds_list_del(&p->plink);
	p->state = SLAB_OPEN;
	/* relaxed: read by remote freers only against NULL, and by
	 * slab_check; the class lock orders the rest */
	atomic_store_explicit(&p->owner, sc, memory_order_relaxed);
	slab_page_collect(p);
	pthread_mutex_unlock(&c->lock);
	return p;
}

/*
 * Of the first SLAB_PARTIAL_SCAN partial pages of @c, the fullest with a
 * slot free (NULL if none); the ones looked at go to the list's tail at
 * once (the list's head moves past them), so the next refill looks at the
 * next ones.  For objects that never move: the first page with room, as
 * below, filled the sparse pages as readily as the dense ones, and the
 * directory slab of a replay at a small limit (gcc x313 at 500 KB) held
 * its objects in 53% of its slots.  The fullest with an eighth free left
 * the last slots of dense pages empty for good: a slot free is enough
 * (the enlarged replays' backend lookups, geometric mean of 32 rows, 0.7%
 * fewer; refills are rare enough that one a directory made costs nothing
 * seen: BENCHMARKS.md, issue 14, stop 38).
 */
static struct slab_page *partial_fullest_locked(struct slab_class *c)
{
	struct slab_page *p, *best = NULL, *last = NULL;
	uint32_t best_live = 0;
	unsigned scanned = 0;

	cds_list_for_each_entry(p, &c->partial, plink) {
		if (scanned++ == SLAB_PARTIAL_SCAN)
			break;
		last = p;
		uint32_t live = slab_page_live(p);
		if (p->capacity > live && (!best || live > best_live) &&
		    (!slab_tls_compacting || 2 * live >= p->capacity)) {
			best = p;
			best_live = live;
		}
	}
	if (last) {   /* the head after the last looked at: they are the tail */
		cds_list_del(&c->partial);
		cds_list_add(&c->partial, &last->plink);
	}
	return best;
}

/* Of the first SLAB_PARTIAL_SCAN partial pages of @c, the first with a
 * quarter of its slots free (NULL if none); the ones skipped go to the
 * list's tail, to be looked at again later. */
static struct slab_page *partial_first_locked(struct slab_class *c)
{
	struct slab_page *p, *tmp;
	unsigned scanned = 0;

	cds_list_for_each_entry_safe(p, tmp, &c->partial, plink) {
		if (scanned++ == SLAB_PARTIAL_SCAN)
			break;
		uint32_t live = slab_page_live(p);
		if (p->capacity - live >= p->capacity / 4 &&
		    (!slab_tls_compacting || 2 * live >= p->capacity))
			return p;
		cds_list_del(&p->plink);
		cds_list_add_tail(&p->plink, &c->partial);
	}
	return NULL;
}

/* A page of @c for slot @sc (locked) to hold: partial with room, or new. */
static struct slab_page *page_acquire_locked(struct slab_cpu *sc, struct slab_class *c)
{
	lock_assert_held(&sc->lock);
	if (c->fifo)
		return slab_page_new(c, sc);
	pthread_mutex_lock(&c->lock);
	struct slab_page *p = c->fullest_first ? partial_fullest_locked(c) : partial_first_locked(c);
	if (p)
		return page_open_locked(sc, c, p);
	pthread_mutex_unlock(&c->lock);
	return slab_page_new(c, sc);
}

static void batch_free_rcu(struct rcu_head *head);

/* A full (or flushed) batch: to call_rcu, or kept for slab_hold_end. */
static void batch_queue(struct slab_batch *b)
{
	if (tls_holding) {
		b->held_next = tls_held;
		tls_held = b;
		return;
	}
	struct slab *s = b->slab;
	for (unsigned i = 0; i < b->n; i++)
		b->queued += slab_page_hdr(s, b->obj[i])->cls->size;
	/* relaxed: a size for the owner's reclaim (slab_queued_bytes) */
	atomic_fetch_add_explicit(&s->queued_bytes, (int64_t)b->queued, memory_order_relaxed);
	pthread_mutex_lock(&s->flight_lock);
	rcu_flight_list(&b->flight, &s->flight);
	pthread_mutex_unlock(&s->flight_lock);
	rcu_pending_add(&s->rcu_pending);
	call_rcu(&b->rcu, batch_free_rcu); /* (d) */
}

/* A full batch: landed by its freer while the slab is landing (a hold of
 * its own, ended at once: (d)), else queued. */
static void batch_land_or_queue(struct slab *s, struct slab_batch *b)
{
	/* (d) is the hold's own ordering */
	if (!slab_landing(s) || rcu_read_ongoing()) {
		batch_queue(b);
		return;
	}
	int cs = cancel_hold();   /* the caller may hold its locks: never left in a wait */
	slab_hold_begin();
	b->held_next = NULL;
	tls_held = b;
	slab_hold_end();
	cancel_release(cs);
}

void slab_set_landing(struct slab *s, bool on)
{
	/* relaxed: a policy flag; the load keeps the line shared when it
	 * already says so (every mutating call sets it) */
	if (atomic_load_explicit(&s->landing, memory_order_relaxed) != on)
		atomic_store_explicit(&s->landing, on, memory_order_relaxed);
}

void slab_set_roomy(struct slab *s, bool on)
{
	/* relaxed: as slab_set_landing */
	if (atomic_load_explicit(&s->roomy, memory_order_relaxed) == on)
		return;
	atomic_store_explicit(&s->roomy, on, memory_order_relaxed);
	/* The spare pages kept for the room that is no more go now, not at
	 * the next trim: the owner's bound would evict for them meanwhile. */
	if (!on)
		slab_retained_fit(s);
}

size_t slab_queued_bytes(struct slab *s)
{
	/* relaxed: a size (see batch_queue) */
	int64_t q = atomic_load_explicit(&s->queued_bytes, memory_order_relaxed);

	return q > 0 ? (size_t)q : 0;
}

bool slab_landing(struct slab *s)
{
	/* relaxed: see slab_set_landing */
	return atomic_load_explicit(&s->landing, memory_order_relaxed);
}

/* Count b's uncounted objects, one page's run (batch_put), in its rcu_n. */
static void batch_count_run(struct slab_batch *b)
{
	if (b->n == b->counted)
		return;
	/* relaxed: read only by compaction's choice of pages */
	atomic_fetch_add_explicit(&slab_page_hdr(b->slab, b->obj[b->counted])->rcu_n,
				  (int32_t)(b->n - b->counted), memory_order_relaxed);
	b->counted = b->n;
}

/* Take slot @sc's batch if it holds objects (its lock held), counted
 * whole (batch_put); or NULL. */
static struct slab_batch *batch_take_locked(struct slab_cpu *sc)
{
	lock_assert_held(&sc->lock);
	struct slab_batch *b = sc->batch;

	if (!b || !b->n)
		return NULL;
	sc->batch = NULL;
	batch_count_run(b);
	return b;
}

void slab_release_open(struct slab *s, uint64_t stamp_max)
{
	for (unsigned i = 0; i < s->nr_cpus; i++) {
		struct slab_cpu *sc = &s->cpus[i];
		udc_mutex_lock(&sc->lock);
		for (unsigned cls = 0; cls < s->nr_classes; cls++) {
			struct slab_page *p = sc->open[cls];
			/* stamp: written only when the page is not OPEN (requeue) */
			if (p && p->stamp <= stamp_max)
				page_retire_locked(sc, cls);
		}
		cpu_unlock(sc);
	}
}

size_t slab_class_bytes(struct slab *s, unsigned cls)
{
	struct slab_class *c = &s->cls[cls];

	udc_assert(cls < s->nr_classes);
	pthread_mutex_lock(&c->lock);
	uint64_t n = c->nr_pages;
	pthread_mutex_unlock(&c->lock);
	return (size_t)n * s->page_size;
}

/* ------------------------------------------------------------------ */
/* allocation and frees */

static void *alloc_slow_locked(struct slab_cpu *sc, struct slab_class *c)
{
	lock_assert_held(&sc->lock);
	if (sc->open[c->index])
		page_retire_locked(sc, c->index);
	struct slab_page *p = page_acquire_locked(sc, c);
	if (!p)
		return NULL;   /* errno: slab_page_new's */
	sc->open[c->index] = p;
	void *obj = slab_page_pop(p);
	udc_assert(obj != NULL);
	return obj;
}

void *slab_alloc(struct slab *s, unsigned cls)
{
	udc_assert(cls < s->nr_classes);
	struct slab_cpu *sc = cpu_lock(s);
	struct slab_page *p = sc->open[cls];
	void *obj = NULL;

	if (__builtin_expect(p != NULL, 1)) {
		obj = slab_page_pop(p);
		if (!obj && slab_page_collect(p))
			obj = slab_page_pop(p);
	}
	if (__builtin_expect(obj == NULL, 0))
		obj = alloc_slow_locked(sc, &s->cls[cls]);
	if (obj)   /* under the slot lock: see slab_alloc in slab.h */
		memset(obj, 0, s->cls[cls].size);
	cpu_unlock(sc);
	return obj;
}

static void remote_free(struct slab_page *p, uint32_t i)
{
	rcu_read_lock(); /* (c): the header outlives this function */
	uint32_t old = atomic_load_explicit(&p->remote, memory_order_relaxed);
	do {
		p->next[i] = old == SLAB_NIL ? UINT16_MAX : (uint16_t)old;
		/* release: the link above is seen by the collector (a) */
	} while (!atomic_compare_exchange_weak_explicit(&p->remote, &old, i, memory_order_release,
							memory_order_relaxed));
	/* acq_rel: acquire pairs with collect's release of used (e), so the
	 * used read below is at least the one of the last collect */
	int32_t n = atomic_fetch_add_explicit(&p->remote_n, 1, memory_order_acq_rel) + 1;
	/* seq_cst fence: the push is before the owner load; pairs with the
	 * fence in page_retire_locked (b) */
	atomic_thread_fence(memory_order_seq_cst);
	if ((uint32_t)n >= atomic_load_explicit(&p->used, memory_order_relaxed) &&
	    atomic_load_explicit(&p->owner, memory_order_relaxed) == NULL) {
		struct slab_class *c = p->cls;
		pthread_mutex_lock(&c->lock);
		if (p->state == SLAB_PARTIAL) {
			slab_page_collect(p);
			if (atomic_load_explicit(&p->used, memory_order_relaxed) == 0)
				slab_page_release_locked(p);
		}
		pthread_mutex_unlock(&c->lock);
	}
	rcu_read_unlock();
}

void slab_free_now(struct slab *s, void *obj)
{
	struct slab_page *p = slab_page_hdr(s, obj);
	uint32_t i = slab_page_index(p, obj);

	/* not i < bump: bump is the slot holder's, unsynchronised for us */
	udc_assert(p->slab == s && i < p->capacity && slab_page_slot(p, i) == obj);
	remote_free(p, i);
}

/* A batch's memory back (its objects freed, or none in it). */
static void batch_delete(struct slab *s, struct slab_batch *b)
{
	atomic_fetch_sub_explicit(&s->meta_bytes, sizeof(*b), memory_order_relaxed);
	free(b);
	slab_uncharge(s, sizeof(*b));
}

/* The objects of batch @b freed (their grace period is over); not @b. */
static void batch_free_objects(struct slab_batch *b)
{
	struct slab *s = b->slab;

	/* relaxed: see batch_queue (0 for a batch that was held or landed) */
	atomic_fetch_sub_explicit(&s->queued_bytes, (int64_t)b->queued, memory_order_relaxed);
	/* The objects leave rcu_n a run of one page at a time, each run
	 * before its frees (the last may release the page).  Every batch
	 * was counted whole on its way here (batch_put). */
	udc_assert_internal(b->counted == b->n);
	for (unsigned i = 0, end; i < b->n; i = end) {
		struct slab_page *p = slab_page_hdr(s, b->obj[i]);
		for (end = i + 1; end < b->n && slab_page_hdr(s, b->obj[end]) == p; end++)
			;
		/* relaxed: a compaction heuristic */
		atomic_fetch_sub_explicit(&p->rcu_n, (int32_t)(end - i), memory_order_relaxed);
		for (unsigned j = i; j < end; j++)
			slab_free_now(s, b->obj[j]);
	}
}

static void batch_free(struct slab_batch *b)
{
	batch_free_objects(b);
	batch_delete(b->slab, b);
}

/* A reference to a taken batch dropped: the last one deletes it. */
static void batch_taken_put(struct slab_batch *b)
{
	if (rcu_flight_put(&b->flight))
		batch_delete(b->slab, b);
}

/* call_rcu's callback: the batch's objects freed, unless a lander took
 * them (slab_land_queued). */
static void batch_flight_end(struct slab_batch *b)
{
	struct slab *s = b->slab;

	pthread_mutex_lock(&s->flight_lock);
	bool taken = rcu_flight_end(&b->flight);
	pthread_mutex_unlock(&s->flight_lock);
	if (taken)
		batch_taken_put(b);
	else
		batch_free(b);
}

RCU_PENDING_CALLBACK(batch_free_rcu, struct slab_batch, rcu, slab->rcu_pending, batch_flight_end)

/* The lander's part, run by its hold's end after a grace period; counted
 * in rcu_pending from the take (slab_destroy waits for it). */
static void batch_land_rcu(struct rcu_head *head)
{
	struct slab_batch *b = caa_container_of(head, struct slab_batch, land_rcu);
	struct rcu_pending *pending = &b->slab->rcu_pending;

	batch_free_objects(b);
	b->queued = 0;
	batch_taken_put(b);
	rcu_pending_done(pending);   /* last: the slab may go from here */
}

void slab_land_queued(struct slab *s)
{
	struct slab_batch *b, *tmp;

	udc_assert(slab_holding());
	pthread_mutex_lock(&s->flight_lock);
	cds_list_for_each_entry_safe(b, tmp, &s->flight, flight.link) {
		rcu_flight_take(&b->flight);
		rcu_pending_add(&s->rcu_pending);
		/* (d): unpublished before batch_queue, which was before this;
		 * the hold's grace period starts after */
		slab_call_rcu(&b->land_rcu, batch_land_rcu);
	}
	pthread_mutex_unlock(&s->flight_lock);
}

/*
 * A batch, charged to the owner (slab_config.charge) as its pages are;
 * NULL with errno ENOBUFS if refused, ENOMEM.  @holding: one of
 * slab_hold's, whose end gives memory back.
 */
static struct slab_batch *batch_new(struct slab *s, bool holding)
{
	if (!slab_charge(s, sizeof(struct slab_batch), holding)) {
		errno = ENOBUFS;
		return NULL;
	}
	struct slab_batch *b = malloc(sizeof(*b));

	if (!b)
		slab_uncharge(s, sizeof(*b));
	if (b) {
		atomic_fetch_add_explicit(&s->meta_bytes, sizeof(*b), memory_order_relaxed);
		b->slab = s;
		b->n = 0;
		b->counted = 0;
		b->queued = 0;
	}
	return b;
}

/*
 * Add obj to b: true when b is full.  With @defer (a slot's batch), its
 * page's rcu_n counts it with the rest of its run, once the next object
 * is on another page or the batch leaves its slot (batch_take_locked, or
 * full): one locked add a run, where each free took one, on a line that
 * the freeing thread rarely holds (2 of a create-and-unlink cycle's 38
 * locked instructions: BENCHMARKS.md, issue 16, stop 33).  So rcu_n runs
 * behind by a run per slot at most (rcu_n <= live holds), and is exact for
 * every batch on its way to a grace period.  Compaction reads rcu_n of
 * the pages its own moves free, as it moves: those frees, held, are
 * counted at once (counted only when their batch left, and
 * compaction/stale_entries_are_dropped_not_moved failed); a slot's
 * uncounted run makes a page look a run fuller than it is, until the
 * flush at the compaction's end (slab_rcu_flush_own) counts it.
 */
static bool batch_put(struct slab *s, struct slab_batch *b, void *obj, bool defer)
{
	if (b->n > b->counted && slab_page_hdr(s, b->obj[b->n - 1]) != slab_page_hdr(s, obj))
		batch_count_run(b);
	b->obj[b->n++] = obj;
	if (!defer || b->n == SLAB_BATCH)
		batch_count_run(b);
	return b->n == SLAB_BATCH;
}

void slab_wait_note(struct slab *s, void *obj, int delta)
{
	/* relaxed: a compaction heuristic (batch_count_run) */
	atomic_fetch_add_explicit(&slab_page_hdr(s, obj)->rcu_n, delta, memory_order_relaxed);
}

void slab_free_rcu(struct slab *s, void *obj)
{
	struct slab_batch *b, *full = NULL;

	if (tls_holding) {
		/* The thread's own batches, on the held chain from the start. */
		b = tls_held;
		if (!b || b->slab != s || b->n == SLAB_BATCH) {
			b = batch_new(s, true);
			if (b) {
				b->held_next = tls_held;
				tls_held = b;
			}
		}
		if (b)
			batch_put(s, b, obj, false);
	} else {
		struct slab_cpu *sc = cpu_lock(s);
		if (!sc->batch)
			sc->batch = batch_new(s, false);
		b = sc->batch;
		if (b && batch_put(s, b, obj, true)) {
			full = b;
			sc->batch = NULL;
		}
		cpu_unlock(sc);
		if (full)
			batch_land_or_queue(s, full);
	}
	if (!b) {
		/* No memory or room for a batch: wait for readers here. */
		synchronize_rcu();
		slab_free_now(s, obj);
	}
}

/* Queue every slot's pending batch (batch_queue: to call_rcu, or to this
 * thread's hold); @wait: for a slot's lock, else skip a slot held by an
 * allocator. */
static void slots_flush(struct slab *s, bool wait)
{
	for (unsigned i = 0; i < s->nr_cpus; i++) {
		struct slab_cpu *sc = &s->cpus[i];
		if (wait)
			udc_mutex_lock(&sc->lock);
		else if (udc_mutex_trylock(&sc->lock))
			continue;
		struct slab_batch *b = batch_take_locked(sc);
		cpu_unlock(sc);
		if (b)
			batch_queue(b);
	}
}

void slab_rcu_flush(struct slab *s)
{
	slots_flush(s, true);
}

void slab_rcu_flush_own(struct slab *s)
{
	/* Held: the slots' batches whose lock is free join the hold too. */
	slots_flush(s, !tls_holding);
}

void slab_hold_begin(void)
{
	udc_assert(!tls_holding);
	tls_holding = true;
}

bool slab_hold_flush(void)
{
	if (!tls_holding)
		return false;
	slab_hold_end();
	slab_hold_begin();
	return true;
}

bool slab_holding(void)
{
	return tls_holding;
}

void slab_call_rcu(struct rcu_head *head, void (*fn)(struct rcu_head *head))
{
	if (!tls_holding) {
		call_rcu(head, fn);
		return;
	}
	head->func = fn;
	head->next.next = (struct cds_wfcq_node *)tls_calls;
	tls_calls = head;
}

void slab_hold_end(void)
{
	udc_assert(tls_holding && !rcu_read_ongoing());
	tls_holding = false;
	if (!tls_held && !tls_calls)
		return;
	/* Both chains taken first: a callback that freed into a landing
	 * slab would begin a hold of its own (batch_land_or_queue). */
	struct rcu_head *calls = tls_calls;
	struct slab_batch *held = tls_held;
	tls_calls = NULL;
	tls_held = NULL;
	synchronize_rcu();   /* (d): every reader that could find the objects is done */
	/* The pages the callbacks' frees empty (the owner's batches) are
	 * captured as the batches' are. */
	slab_tls_capturing = true;
	while (calls) {
		struct rcu_head *head = calls;
		calls = (struct rcu_head *)head->next.next;
		head->func(head);
	}
	while (held) {
		struct slab_batch *b = held;
		held = b->held_next;
		batch_free(b);
	}
	slab_tls_capturing = false;
	if (!slab_tls_captured)
		return;
	synchronize_rcu();   /* (c): remote freers are done with the emptied headers */
	while (slab_tls_captured) {
		struct slab_page *p = slab_tls_captured;
		slab_tls_captured = p->dead_next;
		slab_page_free_dead(p);
	}
}

void slab_rcu_barrier(struct slab *s)
{
	slab_rcu_flush(s);
	/* A batch callback may release an emptied page, whose own callback is
	 * counted before the batch's is done: one wait covers both. */
	rcu_pending_wait(&s->rcu_pending);
}

/* ------------------------------------------------------------------ */
/* destruction */

void slab_destroy(struct slab *s)
{
	if (!s)
		return;
	/* The batches still in slots: freed now, with their pages below (no
	 * call runs on @s any more, and every reader of its objects is gone:
	 * the owner unpublished them and waited, or destroys them whole). */
	for (unsigned i = 0; i < s->nr_cpus; i++) {
		struct slab_batch *b = s->cpus[i].batch;
		if (b) {
			batch_delete(s, b);
		}
	}
	/* Batches already queued free into pages that must still exist; the
	 * pages they empty are released by a second wave of callbacks, counted
	 * before the first wave's are done (not rcu_barrier: it allocates). */
	rcu_pending_wait(&s->rcu_pending);
	udc_assert(cds_list_empty(&s->flight));   /* every batch ran or was landed */
#if UDC_DEBUG >= 3
	if (slab_check(s))
		udc_panic("slab_destroy: slab_check failed");
#endif

	struct slab_page *p, *tmp;
	for (unsigned i = 0; i < s->nr_classes; i++) {
		struct slab_class *c = &s->cls[i];
		cds_list_for_each_entry_safe(p, tmp, &c->pages, link)
			slab_page_free_mem(s, p);
		pthread_mutex_destroy(&c->lock);
	}
	cds_list_for_each_entry_safe(p, tmp, &s->retained, link)
		slab_page_free_mem(s, p);
	pthread_mutex_destroy(&s->retained_lock);
	pthread_mutex_destroy(&s->flight_lock);
	for (unsigned i = 0; i < s->nr_cpus; i++)
		udc_mutex_destroy(&s->cpus[i].lock);
	free(s->cpus);
	free(s);
}

/* ------------------------------------------------------------------ */
/* statistics and validation */

int slab_protect_pages(struct slab *s, int prot)
{
	int r = 0;

	for (unsigned i = 0; i < s->nr_classes && !r; i++) {
		struct slab_class *c = &s->cls[i];
		struct slab_page *p;

		pthread_mutex_lock(&c->lock);
		cds_list_for_each_entry(p, &c->pages, link) {
			if (mprotect(p, s->page_size, prot)) {
				r = -errno;
				break;
			}
		}
		pthread_mutex_unlock(&c->lock);
	}
	return r;
}

size_t slab_meta_bytes(struct slab *s)
{
	if (s->charge)
		return s->fixed_bytes;   /* the batches are the owner's count */
	/* relaxed: a counter for limits and stats */
	int64_t meta = atomic_load_explicit(&s->meta_bytes, memory_order_relaxed);

	return meta > 0 ? (size_t)meta : 0;
}

size_t slab_batch_bytes(void)
{
	return sizeof(struct slab_batch);
}

size_t slab_bytes(struct slab *s)
{
	/* relaxed: counters for limits and stats */
	int64_t pages = atomic_load_explicit(&s->nr_pages, memory_order_relaxed);
	int64_t meta = atomic_load_explicit(&s->meta_bytes, memory_order_relaxed);

	return (size_t)(pages > 0 ? pages : 0) * s->page_size + (size_t)(meta > 0 ? meta : 0);
}

void slab_stats(struct slab *s, struct slab_stats *st)
{
	uint64_t live_bytes = 0, page_bytes = 0;

	memset(st, 0, sizeof(*st));
	st->nr_classes = s->nr_classes;
	for (unsigned i = 0; i < s->nr_classes; i++) {
		struct slab_class *c = &s->cls[i];
		struct slab_class_stats *cs = &st->cls[i];
		struct slab_page *p;

		cs->size = c->size;
		pthread_mutex_lock(&c->lock);
		cds_list_for_each_entry(p, &c->pages, link) {
			uint32_t live = slab_page_live(p);
			if (live > p->capacity)
				live = p->capacity;
			cs->pages++;
			cs->objects += live;
			cs->capacity += p->capacity;
			unsigned b = live * SLAB_HIST_BUCKETS / p->capacity;
			cs->hist[b < SLAB_HIST_BUCKETS ? b : SLAB_HIST_BUCKETS - 1]++;
		}
		pthread_mutex_unlock(&c->lock);
		cs->page_bytes = cs->pages * s->page_size;
		cs->fragmentation = cs->page_bytes ? 1.0 - (double)(cs->objects * c->size) /
								     (double)cs->page_bytes :
						     0.0;
		st->pages += cs->pages;
		st->objects += cs->objects;
		live_bytes += cs->objects * c->size;
		page_bytes += cs->page_bytes;
	}
	pthread_mutex_lock(&s->retained_lock);
	st->retained_pages = (uint64_t)s->nr_retained;
	pthread_mutex_unlock(&s->retained_lock);
	st->pending_pages = (uint64_t)atomic_load_explicit(&s->nr_pending, memory_order_relaxed);
	st->meta_bytes = (uint64_t)atomic_load_explicit(&s->meta_bytes, memory_order_relaxed);
	st->bytes = (uint64_t)atomic_load_explicit(&s->nr_pages, memory_order_relaxed) *
			    s->page_size +
		    st->meta_bytes;
	st->pages_allocated = atomic_load_explicit(&s->pages_allocated, memory_order_relaxed);
	st->pages_returned = atomic_load_explicit(&s->pages_returned, memory_order_relaxed);
	st->relocated = atomic_load_explicit(&s->relocated, memory_order_relaxed);
	st->evicted = atomic_load_explicit(&s->evicted, memory_order_relaxed);
	st->kept = atomic_load_explicit(&s->kept, memory_order_relaxed);
	st->fragmentation = page_bytes ? 1.0 - (double)live_bytes / (double)page_bytes : 0.0;
}

void slab_stats_print(FILE *f, const struct slab_stats *st)
{
#define X(name, meaning) \
	fprintf(f, "  %-16s %12llu  %s\n", #name, (unsigned long long)st->name, meaning);
	SLAB_TOTAL_STATS(X)
#undef X
	fprintf(f, "  %-16s %12.3f  %s\n", "fragmentation", st->fragmentation,
		"1 - live bytes / page bytes");
	for (unsigned i = 0; i < st->nr_classes; i++) {
		const struct slab_class_stats *cs = &st->cls[i];
		fprintf(f, "  class %u (%zu bytes):", i, cs->size);
#define X(name, meaning) fprintf(f, " %s %llu", #name, (unsigned long long)cs->name);
		SLAB_CLASS_STATS(X)
#undef X
		fprintf(f, " fragmentation %.3f hist", cs->fragmentation);
		for (unsigned b = 0; b < SLAB_HIST_BUCKETS; b++)
			fprintf(f, " %llu", (unsigned long long)cs->hist[b]);
		fputc('\n', f);
	}
}

int slab_check(struct slab *s)
{
	char why[256];
	int64_t class_pages = 0;

#define FAIL(...)                                        \
	do {                                             \
		snprintf(why, sizeof(why), __VA_ARGS__); \
		goto fail;                               \
	} while (0)

	for (unsigned i = 0; i < s->nr_classes; i++) {
		struct slab_class *c = &s->cls[i];
		struct slab_page *p;
		uint64_t n = 0, npartial = 0, nonlist = 0, last_seq = 0;

		pthread_mutex_lock(&c->lock);
		cds_list_for_each_entry(p, &c->pages, link) {
			n++;
			if (p->cls != c || p->slab != s)
				FAIL("class %u: page %p of another class", i, (void *)p);
			if (p->seq <= last_seq)
				FAIL("class %u: ages not increasing (%llu after %llu)", i,
				     (unsigned long long)p->seq, (unsigned long long)last_seq);
			last_seq = p->seq;
			if (slab_page_check(p, true, why, sizeof(why)))
				goto fail_locked;
			if (p->state == SLAB_PARTIAL)
				npartial++;
		}
		cds_list_for_each_entry(p, &c->partial, plink) {
			if (p->state != SLAB_PARTIAL)
				FAIL("class %u: page %p on partial list in state %u", i, (void *)p,
				     p->state);
			nonlist++;
		}
		if (nonlist != npartial)
			FAIL("class %u: %llu pages on partial list, %llu PARTIAL", i,
			     (unsigned long long)nonlist, (unsigned long long)npartial);
		if (n != c->nr_pages)
			FAIL("class %u: %llu pages listed, nr_pages %llu", i, (unsigned long long)n,
			     (unsigned long long)c->nr_pages);
		class_pages += (int64_t)n;
		pthread_mutex_unlock(&c->lock);
		continue;
fail:
fail_locked:
		pthread_mutex_unlock(&c->lock);
		fprintf(stderr, "slab_check: %s\n", why);
		return -EUCLEAN;
	}
	pthread_mutex_lock(&s->retained_lock);
	int64_t retained = s->nr_retained, listed = 0;
	size_t retained_max = s->retained_roomy_max;
	struct slab_page *p;
	cds_list_for_each_entry(p, &s->retained, link)
		listed++;
	pthread_mutex_unlock(&s->retained_lock);
	int64_t total = atomic_load_explicit(&s->nr_pages, memory_order_relaxed);
	int64_t pending = atomic_load_explicit(&s->nr_pending, memory_order_relaxed);
	if (listed != retained || retained > (int64_t)retained_max) {
		fprintf(stderr, "slab_check: %lld retained listed, nr_retained %lld (max %zu)\n",
			(long long)listed, (long long)retained, retained_max);
		return -EUCLEAN;
	}
	if (total != class_pages + retained + pending) {
		fprintf(stderr,
			"slab_check: nr_pages %lld != classes %lld + retained %lld + "
			"pending %lld\n",
			(long long)total, (long long)class_pages, (long long)retained,
			(long long)pending);
		return -EUCLEAN;
	}
#undef FAIL
	return 0;
}
