/* SPDX-License-Identifier: MIT */
/*
 * slab/slab.c - slabs, threads' open pages, allocation, frees, statistics.
 *
 * Owns: slab creation and destruction, the process-wide registry of live
 * slabs (so a thread's exit can tell which of its table entries are still
 * alive), each thread's small table of open pages (SLAB_TLS_WAYS slabs,
 * keyed by slab id; ids are never reused, so a stale entry never matches),
 * the allocation fast path, frees (local, remote, after a grace period),
 * page retirement and acquisition, slab_stats and slab_check.
 *
 * Allocation: the thread's open page of the class; pop its local list or
 * bump (no lock, no atomic RMW); else take its remote list (one exchange);
 * else retire it (PARTIAL, and the newest page of its class) and acquire
 * a partial page with a quarter free, or a new page (always, in a fifo
 * class), under the class lock.
 *
 * Frees: by the page's owner, a push on the local list (no atomic); by any
 * other thread, a lock-free push on the page's remote list.  A remote free
 * that may have emptied an unowned partial page takes the class lock to
 * collect and release it.  slab_free_rcu() fills a per-thread batch of
 * SLAB_BATCH objects with one rcu_head; the batch's callback frees them.
 *
 * Locking:
 *   registry_lock (outermost; create, destroy, thread exit, table
 *   eviction) -> cls->lock (page lists, non-OPEN pages) -> retained_lock.
 *   No lock is held across a callback into the owner and none across
 *   synchronize_rcu/rcu_barrier.
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
 *       releases the pages it emptied after a second one, for (c)).
 *
 * Limitations (this version): partial pages are found by a bounded scan
 * of the partial list (SLAB_PARTIAL_SCAN, rotating the ones skipped), not
 * by occupancy bins; slots freed remotely are poisoned for ASan when they
 * are collected, not when they are freed; a thread using more than
 * SLAB_TLS_WAYS slabs at once retires pages on each table eviction; a
 * thread owns only its open page per class, so its frees into its own
 * retired (full) pages take the remote path (a CAS and a fence); the
 * retained cache keeps pages resident (no madvise yet); slab_check is
 * exact only when no other call runs, so the debug tier runs it at
 * slab_destroy and runs the per-page validator at slab_page_putback.
 */
#include "slab/internal.h"

#include <errno.h>
#include <sys/mman.h>
#include <string.h>
#include <time.h>

static pthread_mutex_t registry_lock = PTHREAD_MUTEX_INITIALIZER;
static CDS_LIST_HEAD(registry);	      /* live slabs (protected by registry_lock) */
static uint64_t registry_next_id = 1; /* protected by registry_lock */

struct slab_tls {
	uint64_t id; /* 0: empty way */
	struct slab *s;
	struct slab_page *open[SLAB_MAX_CLASSES];
	struct slab_batch *batch;
};

static __thread struct slab_tls tls[SLAB_TLS_WAYS];
static __thread bool tls_holding;                /* slab_hold_begin .. slab_hold_end */
static __thread struct slab_batch *tls_held;     /* full batches kept meanwhile */
__thread bool slab_tls_capturing;
__thread struct slab_page *slab_tls_captured;
static __thread char tls_token;
static __thread bool tls_keyed;
static pthread_key_t exit_key;
static pthread_once_t exit_key_once = PTHREAD_ONCE_INIT;

static const size_t default_sizes[] = { 64, 96, 128, 192, 256 };

void *slab_thread_token(void)
{
	return &tls_token;
}

/* ------------------------------------------------------------------ */
/* creation */

static int class_layout(struct slab_class *c, size_t size)
{
	size_t hdr = sizeof(struct slab_page);

	if (size < 16 || size > 4096 || size % 16)
		return -EINVAL;
	for (size_t cap = (SLAB_PAGE_SIZE - hdr) / size; cap > 0; cap--) {
		size_t off = (hdr + cap * sizeof(uint16_t) + 63) & ~(size_t)63;
		if (cap <= SLAB_MAX_SLOTS && off + cap * size <= SLAB_PAGE_SIZE) {
			c->capacity = (uint32_t)cap;
			c->offset = (uint32_t)off;
			c->size = (uint32_t)size;
			return 0;
		}
	}
	return -EINVAL;
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
	if (posix_memalign((void **)&s, 64, sizeof(*s))) {
		errno = ENOMEM;
		return NULL;
	}
	memset(s, 0, sizeof(*s));
	s->nr_classes = n;
	s->retained_max = cfg ? cfg->retained_max : 0;
	for (unsigned i = 0; i < n; i++) {
		struct slab_class *c = &s->cls[i];
		if (class_layout(c, sizes[i]) || (i && sizes[i] < sizes[i - 1])) {
			free(s);
			errno = EINVAL;
			return NULL;
		}
		pthread_mutex_init(&c->lock, NULL);
		CDS_INIT_LIST_HEAD(&c->pages);
		CDS_INIT_LIST_HEAD(&c->partial);
		c->index = i;
		c->fifo = cfg && (cfg->fifo_mask >> i) & 1;
		c->slab = s;
	}
	pthread_mutex_init(&s->retained_lock, NULL);
	CDS_INIT_LIST_HEAD(&s->retained);
	atomic_init(&s->meta_bytes, (int64_t)sizeof(*s));
	atomic_init(&s->seq_next, 1);

	pthread_mutex_lock(&registry_lock);
	s->id = registry_next_id++;
	cds_list_add(&s->registry, &registry);
	pthread_mutex_unlock(&registry_lock);
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

int slab_class_for_size(const struct slab *s, size_t size)
{
	for (unsigned i = 0; i < s->nr_classes; i++)
		if (size <= s->cls[i].size)
			return (int)i;
	return -EINVAL;
}

/* ------------------------------------------------------------------ */
/* retiring and acquiring pages */

uint64_t slab_now_ms(void)
{
	struct timespec t;

	clock_gettime(CLOCK_MONOTONIC_COARSE, &t);
	return (uint64_t)t.tv_sec * 1000 + (uint64_t)t.tv_nsec / 1000000;
}

/* The owner gives up its OPEN page @p: it becomes PARTIAL, and the newest
 * of its class (its objects are as young as the last one allocated). */
static void page_retire(struct slab_page *p)
{
	struct slab_class *c = p->cls;

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

/* A page of @c for the calling thread to own: partial with room, or new. */
static struct slab_page *page_acquire(struct slab_class *c)
{
	struct slab_page *p, *tmp;
	unsigned scanned = 0;

	if (c->fifo)
		return slab_page_new(c);
	pthread_mutex_lock(&c->lock);
	cds_list_for_each_entry_safe(p, tmp, &c->partial, plink) {
		if (scanned++ == SLAB_PARTIAL_SCAN)
			break;
		uint32_t live = slab_page_live(p);
		if (p->capacity - live >= p->capacity / 4 &&
		    (!slab_tls_compacting || 2 * live >= p->capacity)) {
			cds_list_del(&p->plink);
			p->state = SLAB_OPEN;
			/* relaxed: only this thread tests owner == its token */
			atomic_store_explicit(&p->owner, slab_thread_token(), memory_order_relaxed);
			slab_page_collect(p);
			pthread_mutex_unlock(&c->lock);
			return p;
		}
		cds_list_del(&p->plink); /* skipped: look again later */
		cds_list_add_tail(&p->plink, &c->partial);
	}
	pthread_mutex_unlock(&c->lock);
	return slab_page_new(c);
}

/* ------------------------------------------------------------------ */
/* the thread table */

static struct slab *registry_find_locked(uint64_t id)
{
	struct slab *s;

	cds_list_for_each_entry(s, &registry, registry)
		if (s->id == id)
			return s;
	return NULL;
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
	rcu_pending_add(&b->slab->rcu_pending);
	call_rcu(&b->rcu, batch_free_rcu); /* (d) */
}

/* Hand a way's batch to call_rcu and retire its pages; the slab is alive. */
static void way_release(struct slab_tls *t)
{
	for (unsigned i = 0; i < SLAB_MAX_CLASSES; i++) {
		if (t->open[i])
			page_retire(t->open[i]);
		t->open[i] = NULL;
	}
	if (t->batch) {
		if (t->batch->n)
			batch_queue(t->batch);
		else {
			atomic_fetch_sub_explicit(&t->s->meta_bytes, sizeof(*t->batch),
						  memory_order_relaxed);
			free(t->batch);
		}
		t->batch = NULL;
	}
}

/* Release a way whose slab may have been destroyed. */
static void way_release_checked(struct slab_tls *t)
{
	pthread_mutex_lock(&registry_lock);
	if (registry_find_locked(t->id) == t->s) {
		way_release(t);
	} else {
		/* The slab is gone with its pages: only the batch is ours. */
		free(t->batch);
	}
	pthread_mutex_unlock(&registry_lock);
	memset(t, 0, sizeof(*t));
}

static void thread_exit(void *arg)
{
	(void)arg;
	/* call_rcu needs a registered thread; the embedder may have
	 * unregistered this one already (destructor order is unspecified). */
	bool reg = URCU_TLS(urcu_memb_reader).registered;

	if (!reg)
		rcu_register_thread();
	for (unsigned w = 0; w < SLAB_TLS_WAYS; w++)
		if (tls[w].id)
			way_release_checked(&tls[w]);
	if (!reg)
		rcu_unregister_thread();
}

static void exit_key_create(void)
{
	if (pthread_key_create(&exit_key, thread_exit))
		udc_panic("pthread_key_create failed");
}

static struct slab_tls *tls_get_slow(struct slab *s)
{
	if (!tls_keyed) {
		pthread_once(&exit_key_once, exit_key_create);
		if (pthread_setspecific(exit_key, &tls_token))
			udc_panic("pthread_setspecific failed");
		tls_keyed = true;
	}
	for (unsigned w = 1; w < SLAB_TLS_WAYS; w++) {
		if (tls[w].id == s->id) {
			struct slab_tls t = tls[w]; /* move to the front */
			tls[w] = tls[0];
			tls[0] = t;
			return &tls[0];
		}
	}
	unsigned w;
	for (w = 0; w < SLAB_TLS_WAYS && tls[w].id; w++)
		;
	if (w == SLAB_TLS_WAYS) {
		w = SLAB_TLS_WAYS - 1;
		way_release_checked(&tls[w]);
	}
	tls[w] = tls[0];
	memset(&tls[0], 0, sizeof(tls[0]));
	tls[0].id = s->id;
	tls[0].s = s;
	return &tls[0];
}

static inline struct slab_tls *tls_get(struct slab *s)
{
	if (__builtin_expect(tls[0].id == s->id, 1))
		return &tls[0];
	return tls_get_slow(s);
}

static struct slab_tls *tls_find(struct slab *s)
{
	for (unsigned w = 0; w < SLAB_TLS_WAYS; w++)
		if (tls[w].id == s->id)
			return &tls[w];
	return NULL;
}

void slab_thread_release(struct slab *s)
{
	struct slab_tls *t = tls_find(s);

	if (t) {
		way_release(t);
		memset(t, 0, sizeof(*t));
	}
}

void slab_thread_release_stale(struct slab *s, uint64_t stamp_max)
{
	struct slab_tls *t = tls_find(s);

	for (unsigned i = 0; t && i < s->nr_classes; i++) {
		struct slab_page *p = t->open[i];
		/* stamp: written only when the page is not OPEN (requeue) */
		if (p && p->stamp <= stamp_max) {
			t->open[i] = NULL;
			page_retire(p);
		}
	}
}

size_t slab_class_bytes(struct slab *s, unsigned cls)
{
	struct slab_class *c = &s->cls[cls];

	udc_assert(cls < s->nr_classes);
	pthread_mutex_lock(&c->lock);
	uint64_t n = c->nr_pages;
	pthread_mutex_unlock(&c->lock);
	return (size_t)n * SLAB_PAGE_SIZE;
}

/* ------------------------------------------------------------------ */
/* allocation and frees */

static void *alloc_slow(struct slab_tls *t, struct slab_class *c)
{
	struct slab_page *p = t->open[c->index];

	if (p) {
		t->open[c->index] = NULL;
		page_retire(p);
	}
	p = page_acquire(c);
	if (!p) {
		errno = ENOMEM;
		return NULL;
	}
	t->open[c->index] = p;
	void *obj = slab_page_pop(p);
	udc_assert(obj != NULL);
	return obj;
}

void *slab_alloc(struct slab *s, unsigned cls)
{
	udc_assert(cls < s->nr_classes);
	struct slab_tls *t = tls_get(s);
	struct slab_page *p = t->open[cls];

	if (__builtin_expect(p != NULL, 1)) {
		void *obj = slab_page_pop(p);
		if (__builtin_expect(obj != NULL, 1))
			return obj;
		if (slab_page_collect(p))
			return slab_page_pop(p);
	}
	return alloc_slow(t, &s->cls[cls]);
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
	 * fence in page_retire (b) */
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
	struct slab_page *p = slab_page_hdr(obj);
	uint32_t i = slab_page_index(p, obj);

	(void)s;
	/* not i < bump: bump is the owner's, unsynchronised for us */
	udc_assert(p->slab == s && i < p->capacity && slab_page_slot(p, i) == obj);
	/* relaxed: only this thread stores its own token (page_acquire/new) */
	if (atomic_load_explicit(&p->owner, memory_order_relaxed) == slab_thread_token()) {
		p->next[i] = p->local == SLAB_NIL ? UINT16_MAX : (uint16_t)p->local;
		p->local = i;
		atomic_store_explicit(&p->used,
				      atomic_load_explicit(&p->used, memory_order_relaxed) - 1,
				      memory_order_relaxed);
		SLAB_POISON(obj, p->size);
		return;
	}
	remote_free(p, i);
}

static void batch_free(struct slab_batch *b)
{
	struct slab *s = b->slab;

	for (unsigned i = 0; i < b->n; i++) {
		/* relaxed: a compaction heuristic; before the free, which
		 * may release the page */
		atomic_fetch_sub_explicit(&slab_page_hdr(b->obj[i])->rcu_n, 1,
					  memory_order_relaxed);
		slab_free_now(s, b->obj[i]);
	}
	atomic_fetch_sub_explicit(&s->meta_bytes, sizeof(*b), memory_order_relaxed);
	free(b);
}

static void batch_free_rcu(struct rcu_head *head)
{
	struct slab_batch *b = caa_container_of(head, struct slab_batch, rcu);
	struct slab *s = b->slab;

	rcu_callback_note(); /* TSan: after the readers' rcu_read_unlock */
	batch_free(b);
	rcu_pending_done(&s->rcu_pending);   /* last: s may go from here on */
}

void slab_free_rcu(struct slab *s, void *obj)
{
	struct slab_tls *t = tls_get(s);
	struct slab_batch *b = t->batch;

	if (!b) {
		b = malloc(sizeof(*b));
		if (!b) {
			/* No memory for a batch: wait for readers here. */
			synchronize_rcu();
			slab_free_now(s, obj);
			return;
		}
		atomic_fetch_add_explicit(&s->meta_bytes, sizeof(*b), memory_order_relaxed);
		b->slab = s;
		b->n = 0;
		t->batch = b;
	}
	/* relaxed: read only by compaction's choice of pages */
	atomic_fetch_add_explicit(&slab_page_hdr(obj)->rcu_n, 1, memory_order_relaxed);
	b->obj[b->n++] = obj;
	if (b->n == SLAB_BATCH) {
		t->batch = NULL;
		batch_queue(b);
	}
}

void slab_rcu_flush(struct slab *s)
{
	struct slab_tls *t = tls_find(s);

	if (t && t->batch && t->batch->n) {
		batch_queue(t->batch);
		t->batch = NULL;
	}
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

void slab_hold_end(void)
{
	udc_assert(tls_holding && !rcu_read_ongoing());
	for (unsigned w = 0; w < SLAB_TLS_WAYS; w++)
		if (tls[w].id && tls[w].batch && tls[w].batch->n) {
			batch_queue(tls[w].batch);
			tls[w].batch = NULL;
		}
	tls_holding = false;
	if (!tls_held)
		return;
	synchronize_rcu();   /* (d): every reader that could find the objects is done */
	slab_tls_capturing = true;
	while (tls_held) {
		struct slab_batch *b = tls_held;
		tls_held = b->held_next;
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
	struct slab_tls *t = tls_find(s);
	if (t) {
		if (t->batch && t->batch->n) {
			rcu_pending_add(&s->rcu_pending);
			call_rcu(&t->batch->rcu, batch_free_rcu);
		} else {
			free(t->batch);
		}
		memset(t, 0, sizeof(*t));
	}
	/* Unlink first: a thread exiting from now on leaves the slab alone;
	 * one that exited before queued its batch before the barriers below
	 * (its call_rcu ran under registry_lock). */
	pthread_mutex_lock(&registry_lock);
	cds_list_del(&s->registry);
	pthread_mutex_unlock(&registry_lock);
	/* Batches already queued free into pages that must still exist; the
	 * pages they empty are released by a second wave of callbacks, counted
	 * before the first wave's are done (not rcu_barrier: it allocates). */
	rcu_pending_wait(&s->rcu_pending);
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
			if (mprotect(p, SLAB_PAGE_SIZE, prot)) {
				r = -errno;
				break;
			}
		}
		pthread_mutex_unlock(&c->lock);
	}
	return r;
}

size_t slab_bytes(struct slab *s)
{
	/* relaxed: counters for limits and stats */
	int64_t pages = atomic_load_explicit(&s->nr_pages, memory_order_relaxed);
	int64_t meta = atomic_load_explicit(&s->meta_bytes, memory_order_relaxed);

	return (size_t)(pages > 0 ? pages : 0) * SLAB_PAGE_SIZE + (size_t)(meta > 0 ? meta : 0);
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
		cs->page_bytes = cs->pages * SLAB_PAGE_SIZE;
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
			    SLAB_PAGE_SIZE +
		    st->meta_bytes;
	st->pages_allocated = atomic_load_explicit(&s->pages_allocated, memory_order_relaxed);
	st->pages_returned = atomic_load_explicit(&s->pages_returned, memory_order_relaxed);
	st->relocated = atomic_load_explicit(&s->relocated, memory_order_relaxed);
	st->evicted = atomic_load_explicit(&s->evicted, memory_order_relaxed);
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
	struct slab_page *p;
	cds_list_for_each_entry(p, &s->retained, link)
		listed++;
	pthread_mutex_unlock(&s->retained_lock);
	int64_t total = atomic_load_explicit(&s->nr_pages, memory_order_relaxed);
	int64_t pending = atomic_load_explicit(&s->nr_pending, memory_order_relaxed);
	if (listed != retained || retained > (int64_t)s->retained_max) {
		fprintf(stderr, "slab_check: %lld retained listed, nr_retained %lld (max %zu)\n",
			(long long)listed, (long long)retained, s->retained_max);
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
