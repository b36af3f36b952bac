/* SPDX-License-Identifier: MIT */
/*
 * slab/page.c - page memory and one page's free lists.
 *
 * Owns: the pages' jemalloc arena (decays 0: freed pages are purged at
 * once), taking pages from it (mallocx aligned to the slab's page size)
 * or from the retained cache, laying them out for a class, popping slots, taking a
 * page's remote list into its local list (collect), releasing an empty
 * page (DEAD, then after a grace period to the retained cache or back to
 * jemalloc with dallocx), and the per-page validator.  In sanitizer builds
 * pages come from posix_memalign and free slots are ASan-poisoned.
 *
 * Locking:
 *   cls->lock protects cls->pages, cls->partial, nr_pages and every field
 *   of a page that is not OPEN (local, bump, used, state).  An OPEN page's
 *   local/bump/used belong to the holder of its cpu slot's lock.
 *   s->retained_lock (leaf) protects the retained list.  Order:
 *   cpu->lock (slab.c) -> cls->lock -> retained_lock.
 *
 * Ordering:
 *   The remote list's pushes are release CASes (slab.c) and collect takes
 *   the list with an acquire exchange: the collector sees the next[] links
 *   each pusher wrote before its push.
 *   A page is released with call_rcu (or, emptied by slab_hold_end, after
 *   its own synchronize_rcu): remote freers touch the page header
 *   after their push inside rcu_read_lock, so the header stays valid (and
 *   of the same class) until they are done.
 *   collect lowers remote_n with release after lowering used: a remote
 *   freer's acq_rel increment that follows sees the new used (slab.c (e)).
 *   used and the slab's counters are otherwise relaxed: one writer at a
 *   time, read for stats.
 */
#include "slab/internal.h"

#include <errno.h>
#include <string.h>

#include <jemalloc/jemalloc.h>

#ifndef SLAB_LIBC_PAGES
/*
 * The pages' arena: one jemalloc arena for every slab of the process, with
 * both decays at 0, so that a page given back is purged (madvise) at once
 * instead of sitting in jemalloc's dirty pages until the allocator next
 * runs its decay (which, in a process that idles, is never).  The slab's
 * retained cache (retained_max pages) is the reserve kept resident.
 * No thread cache: a freed page must reach the arena to be purged.
 */
static unsigned arena;
static int arena_err;
static pthread_once_t arena_once = PTHREAD_ONCE_INIT;

static void arena_create(void)
{
	size_t sz = sizeof(arena);
	ssize_t zero = 0;
	char name[64];

	if (mallctl("arenas.create", &arena, &sz, NULL, 0)) {
		arena_err = -ENOMEM;
		return;
	}
	snprintf(name, sizeof(name), "arena.%u.dirty_decay_ms", arena);
	int r = mallctl(name, NULL, NULL, &zero, sizeof(zero));
	snprintf(name, sizeof(name), "arena.%u.muzzy_decay_ms", arena);
	r = r ? r : mallctl(name, NULL, NULL, &zero, sizeof(zero));
	arena_err = r ? -ENOMEM : 0;
}

int slab_arena_init(void)
{
	pthread_once(&arena_once, arena_create);
	return arena_err;
}

size_t slab_resident_bytes(void)
{
	uint64_t epoch = 1;
	size_t resident, sz = sizeof(epoch);
	char name[64];

	if (slab_arena_init())
		return 0;
	/* Refresh jemalloc's statistics, then read the arena's. */
	if (mallctl("epoch", &epoch, &sz, &epoch, sz))
		return 0;
	snprintf(name, sizeof(name), "stats.arenas.%u.resident", arena);
	sz = sizeof(resident);
	return mallctl(name, &resident, &sz, NULL, 0) ? 0 : resident;
}

void *slab_arena_zalloc(size_t size)
{
	if (slab_arena_init())
		return NULL;
	return mallocx(size, MALLOCX_ZERO | MALLOCX_ARENA(arena) | MALLOCX_TCACHE_NONE);
}

void slab_arena_free(void *p)
{
	if (p)
		dallocx(p, MALLOCX_TCACHE_NONE);
}

static void *page_mem_alloc(struct slab *s)
{
	return mallocx(s->page_size,
		       MALLOCX_ALIGN(s->page_size) | MALLOCX_ARENA(arena) | MALLOCX_TCACHE_NONE);
}

static void page_mem_free(struct slab *s, void *p)
{
	dallocx(p, MALLOCX_ALIGN(s->page_size) | MALLOCX_TCACHE_NONE);
}
#else
/* Sanitizer builds: pages from libc, so that ASan and TSan see them. */
int slab_arena_init(void)
{
	return 0;
}

size_t slab_resident_bytes(void)
{
	return 0;
}

void *slab_arena_zalloc(size_t size)
{
	return calloc(1, size);
}

void slab_arena_free(void *p)
{
	free(p);
}

static void *page_mem_alloc(struct slab *s)
{
	void *p;

	return posix_memalign(&p, s->page_size, s->page_size) ? NULL : p;
}

static void page_mem_free(struct slab *s, void *p)
{
	(void)s;
	free(p);
}
#endif

/* Count @pages made now in the demand windows, the ones past emptied
 * first (retained_lock held). */
static void demand_note_locked(struct slab *s, uint64_t pages)
{
	uint64_t now = slab_now_ms();

	if (now >= s->demand_ms + SLAB_DEMAND_WINDOWS * SLAB_DEMAND_MS) {
		memset(s->demand, 0, sizeof(s->demand));
		s->demand_ms = now;
	}
	for (; now >= s->demand_ms + SLAB_DEMAND_MS; s->demand_ms += SLAB_DEMAND_MS) {
		s->demand_cur = (s->demand_cur + 1) % SLAB_DEMAND_WINDOWS;
		s->demand[s->demand_cur] = 0;
	}
	s->demand[s->demand_cur] += pages;
}

/* Whether the owner says it has room (slab_set_roomy). */
static bool slab_roomy(struct slab *s)
{
	/* relaxed: a policy flag, as landing */
	return atomic_load_explicit(&s->roomy, memory_order_relaxed);
}

/* The spare pages the demand asks for: the pages made in the last
 * windows (SLAB_DEMAND_TIGHT of them, all when @roomy), rolled on first
 * (an idle slab's demand is none within SLAB_DEMAND_WINDOWS);
 * retained_lock held. */
static uint64_t retained_want_locked(struct slab *s, bool roomy)
{
	unsigned n = roomy ? SLAB_DEMAND_WINDOWS : SLAB_DEMAND_TIGHT;
	uint64_t want = SLAB_RETAINED_FLOOR;

	demand_note_locked(s, 0);
	for (unsigned i = 0; i < n; i++)
		want += s->demand[(s->demand_cur + SLAB_DEMAND_WINDOWS - i) % SLAB_DEMAND_WINDOWS];
	return want;
}

/* The most spare pages kept now: more while the owner has room;
 * retained_lock held. */
static size_t retained_cap_locked(struct slab *s)
{
	return slab_roomy(s) ? s->retained_roomy_max : s->retained_max;
}

/* Take @k retained pages off onto @surplus; retained_lock held. */
static size_t retained_take_locked(struct slab *s, int64_t k, struct cds_list_head *surplus)
{
	size_t n = 0;

	for (; k > 0; k--, n++) {
		struct slab_page *p = cds_list_first_entry(&s->retained, struct slab_page, link);
		cds_list_move(&p->link, surplus);
		s->nr_retained--;
	}
	if (s->retained_low > s->nr_retained)
		s->retained_low = s->nr_retained;
	return n;
}

static void surplus_free(struct slab *s, struct cds_list_head *surplus)
{
	struct slab_page *p, *tmp;

	cds_list_for_each_entry_safe(p, tmp, surplus, link)
		slab_page_free_mem(s, p);
}

size_t slab_trim(struct slab *s, bool all)
{
	CDS_LIST_HEAD(surplus);

	pthread_mutex_lock(&s->retained_lock);
	/* The pages that stayed retained all along were not needed: they go;
	 * but, roomy, the ones the last second's demand says the next bursts
	 * will take.  (Giving back all of them, a churn whose pages came back
	 * every 500-700 ms lost the pages of one burst before the next needed
	 * them: issue 16, stop 37.) */
	int64_t keep = slab_roomy(s) ? (int64_t)retained_want_locked(s, true) : 0;
	int64_t k = all ? s->nr_retained : s->retained_low > keep ? s->retained_low - keep : 0;
	int64_t past = s->nr_retained - (int64_t)retained_cap_locked(s);   /* kept while roomy */
	size_t n = retained_take_locked(s, k > past ? k : past, &surplus);
	s->retained_low = s->nr_retained;
	pthread_mutex_unlock(&s->retained_lock);
	surplus_free(s, &surplus);
	return n;
}

size_t slab_set_retained_max(struct slab *s, size_t max, size_t roomy_max)
{
	pthread_mutex_lock(&s->retained_lock);
	s->retained_max = max;
	s->retained_roomy_max = slab_retained_roomy(max, roomy_max);
	pthread_mutex_unlock(&s->retained_lock);
	return slab_retained_fit(s);
}

size_t slab_retained_fit(struct slab *s)
{
	CDS_LIST_HEAD(surplus);

	pthread_mutex_lock(&s->retained_lock);
	size_t n = retained_take_locked(s, s->nr_retained - (int64_t)retained_cap_locked(s),
					&surplus);
	pthread_mutex_unlock(&s->retained_lock);
	surplus_free(s, &surplus);
	return n;
}

/* Give a page's memory back to the page allocator. */
void slab_page_free_mem(struct slab *s, struct slab_page *p)
{
	SLAB_UNPOISON(p, s->page_size);
	page_mem_free(s, p);
	slab_uncharge(s, s->page_size);
	atomic_fetch_sub_explicit(&s->nr_pages, 1, memory_order_relaxed);
	atomic_fetch_add_explicit(&s->pages_returned, 1, memory_order_relaxed);
}

static struct slab_page *page_take_retained(struct slab *s)
{
	struct slab_page *p = NULL;

	pthread_mutex_lock(&s->retained_lock);
	/* A compaction's pages are not demand: it empties more than it fills. */
	demand_note_locked(s, slab_tls_compacting ? 0 : 1);
	if (!cds_list_empty(&s->retained)) {
		p = cds_list_first_entry(&s->retained, struct slab_page, link);
		cds_list_del(&p->link);
		s->nr_retained--;
		if (s->retained_low > s->nr_retained)
			s->retained_low = s->nr_retained;
	}
	pthread_mutex_unlock(&s->retained_lock);
	return p;
}

/*
 * A new OPEN page of class @c on c->pages, held by cpu slot @owner (whose
 * lock the caller holds).  NULL with errno ENOMEM when out of memory, or
 * ENOBUFS when the owner's charge refused a page (slab_config).
 */
struct slab_page *slab_page_new(struct slab_class *c, struct slab_cpu *owner)
{
	struct slab *s = c->slab;
	struct slab_page *p = page_take_retained(s);

	if (!p) {
		if (!slab_charge(s, s->page_size, false)) {
			errno = ENOBUFS;
			return NULL;
		}
		p = page_mem_alloc(s);
		if (!p) {
			slab_uncharge(s, s->page_size);
			errno = ENOMEM;
			return NULL;
		}
		atomic_fetch_add_explicit(&s->nr_pages, 1, memory_order_relaxed);
		atomic_fetch_add_explicit(&s->pages_allocated, 1, memory_order_relaxed);
	}
	/* A retained page may have been of another class: its old poisoned
	 * slots may overlap this class's next[] array. */
	SLAB_UNPOISON(p, s->page_size);
	memset(p, 0, sizeof(*p));
	p->local = SLAB_NIL;
	p->bump = 0;
	atomic_init(&p->used, 0);
	p->capacity = c->capacity;
	p->size = c->size;
	p->offset = c->offset;
	p->cls = c;
	p->slab = s;
	atomic_init(&p->remote, SLAB_NIL);
	atomic_init(&p->remote_n, 0);
	atomic_init(&p->rcu_n, 0);
	atomic_init(&p->owner, owner);
	p->state = SLAB_OPEN;
	SLAB_POISON((char *)p + p->offset, (size_t)p->capacity * p->size);

	pthread_mutex_lock(&c->lock);
	p->seq = atomic_fetch_add_explicit(&s->seq_next, 1, memory_order_relaxed);
	p->stamp = slab_now_ms();
	cds_list_add_tail(&p->link, &c->pages);
	c->nr_pages++;
	pthread_mutex_unlock(&c->lock);
	return p;
}

/* Pop a slot: under an OPEN page's cpu slot lock, or under cls->lock. */
void *slab_page_pop(struct slab_page *p)
{
	uint32_t i = p->local;

	if (i != SLAB_NIL) {
		uint16_t n = p->next[i];
		p->local = n == UINT16_MAX ? SLAB_NIL : n;
	} else if (p->bump < p->capacity) {
		i = p->bump++;
	} else {
		return NULL;
	}
	atomic_store_explicit(&p->used, atomic_load_explicit(&p->used, memory_order_relaxed) + 1,
			      memory_order_relaxed);
	void *obj = slab_page_slot(p, i);
	SLAB_UNPOISON(obj, p->size);
	return obj;
}

/*
 * Move the remote list onto the local list (cpu slot lock of an OPEN page, or under
 * cls->lock).  Returns the number of slots taken.  The taken slots are
 * poisoned here, not by their freers: see slab_page_isolate() in slab.h.
 */
uint32_t slab_page_collect(struct slab_page *p)
{
	if (atomic_load_explicit(&p->remote, memory_order_relaxed) == SLAB_NIL)
		return 0;
	/* acquire: pairs with the pushers' release CAS (their next[] links) */
	uint32_t head = atomic_exchange_explicit(&p->remote, SLAB_NIL, memory_order_acquire);
	uint32_t k = 0, tail = head;

	for (uint32_t i = head; i != SLAB_NIL;) {
		SLAB_POISON(slab_page_slot(p, i), p->size);
		k++;
		tail = i;
		uint16_t n = p->next[i];
		i = n == UINT16_MAX ? SLAB_NIL : n;
	}
	if (!k)
		return 0;
	p->next[tail] = p->local == SLAB_NIL ? UINT16_MAX : (uint16_t)p->local;
	p->local = head;
	atomic_store_explicit(&p->used, atomic_load_explicit(&p->used, memory_order_relaxed) - k,
			      memory_order_relaxed);
	/* release: the used store above is seen by the freer whose increment
	 * follows (slab.c, ordering (e)) */
	atomic_fetch_sub_explicit(&p->remote_n, (int32_t)k, memory_order_release);
	return k;
}

void slab_page_free_dead(struct slab_page *p)
{
	struct slab *s = p->slab;

	atomic_fetch_sub_explicit(&s->nr_pending, 1, memory_order_relaxed);
	pthread_mutex_lock(&s->retained_lock);
	/* Kept for reuse as many as pages were made lately (a churn's pages
	 * come back as its next ones, without page faults), at most the
	 * cap of the moment (retained_cap_locked); with no demand (removals
	 * only), they go back now. */
	uint64_t want = retained_want_locked(s, slab_roomy(s));
	if ((size_t)s->nr_retained < retained_cap_locked(s) && (uint64_t)s->nr_retained < want) {
		cds_list_add(&p->link, &s->retained);
		s->nr_retained++;
		p = NULL;
	}
	pthread_mutex_unlock(&s->retained_lock);
	if (p)
		slab_page_free_mem(s, p);
}

RCU_PENDING_CALLBACK(page_free_rcu, struct slab_page, rcu, slab->rcu_pending,
		     slab_page_free_dead)

/* Make @p (not DEAD) the newest page of its class, cls->lock held. */
void slab_page_requeue_locked(struct slab_page *p)
{
	cds_list_del(&p->link);
	/* relaxed: ages are ordered by the class lock, the counter only counts */
	p->seq = atomic_fetch_add_explicit(&p->slab->seq_next, 1, memory_order_relaxed);
	p->stamp = slab_now_ms();
	cds_list_add_tail(&p->link, &p->cls->pages);
}

/*
 * Release an empty page (used == 0 after a collect), PARTIAL or ISOLATED,
 * with its cls->lock held: DEAD now, memory reused after a grace period.
 */
void slab_page_release_locked(struct slab_page *p)
{
	struct slab *s = p->slab;

	udc_assert_internal(atomic_load_explicit(&p->used, memory_order_relaxed) == 0);
	if (p->state == SLAB_PARTIAL)
		cds_list_del(&p->plink);
	p->state = SLAB_DEAD;
	cds_list_del(&p->link);
	p->cls->nr_pages--;
	atomic_fetch_add_explicit(&s->nr_pending, 1, memory_order_relaxed);
	if (slab_tls_capturing) {   /* slab_hold_end waits for its grace period */
		p->dead_next = slab_tls_captured;
		slab_tls_captured = p;
		return;
	}
	rcu_pending_add(&s->rcu_pending);
	call_rcu(&p->rcu, page_free_rcu);
}

/*
 * The page invariants (internal.h).  0, or -EUCLEAN with the reason in
 * @why.  @quiescent: nobody frees into the page now, so the remote list
 * is checked too; otherwise (an isolated page under cls->lock) only the
 * local side, which the lock makes exact.
 */
int slab_page_check(const struct slab_page *p, bool quiescent, char *why, size_t n)
{
	uint64_t seen[SLAB_MAX_SLOTS / 64] = { 0 };
	uint32_t nlocal = 0, nremote = 0;

#define FAIL(...)                              \
	do {                                   \
		snprintf(why, n, __VA_ARGS__); \
		return -EUCLEAN;               \
	} while (0)

	if (p->capacity == 0 || p->capacity > SLAB_MAX_SLOTS || p->bump > p->capacity)
		FAIL("page %p: capacity %u bump %u", (void *)p, p->capacity, p->bump);
	if (p->offset + (size_t)p->capacity * p->size > p->slab->page_size)
		FAIL("page %p: slots overflow the page", (void *)p);
	for (int list = 0; list < (quiescent ? 2 : 1); list++) {
		/* acquire: pairs with the pushers' release (their next[] links) */
		uint32_t i =
			list ? atomic_load_explicit(&p->remote, memory_order_acquire) : p->local;
		while (i != SLAB_NIL) {
			if (i >= p->bump)
				FAIL("page %p: free slot %u >= bump %u", (void *)p, i, p->bump);
			if (seen[i / 64] & (1ull << (i % 64)))
				FAIL("page %p: slot %u twice on the free lists", (void *)p, i);
			seen[i / 64] |= 1ull << (i % 64);
			if (list)
				nremote++;
			else
				nlocal++;
			uint16_t nx = p->next[i];
			i = nx == UINT16_MAX ? SLAB_NIL : nx;
		}
	}
	uint32_t used = atomic_load_explicit(&p->used, memory_order_relaxed);
	int32_t rn = atomic_load_explicit(&p->remote_n, memory_order_relaxed);
	if (nlocal + (p->capacity - p->bump) + used != p->capacity)
		FAIL("page %p: |local| %u + unused %u + used %u != capacity %u", (void *)p, nlocal,
		     p->capacity - p->bump, used, p->capacity);
	if (quiescent && (int32_t)nremote != rn)
		FAIL("page %p: |remote| %u != remote_n %d", (void *)p, nremote, rn);
	if (quiescent && (rn < 0 || (uint32_t)rn > used))
		FAIL("page %p: remote_n %d > used %u", (void *)p, rn, used);
	int32_t q = atomic_load_explicit(&p->rcu_n, memory_order_relaxed);
	if (quiescent && (q < 0 || (uint32_t)q > used - (uint32_t)rn))
		FAIL("page %p: rcu_n %d > live %u", (void *)p, q, used - (uint32_t)rn);
	if ((p->state == SLAB_OPEN) !=
	    (atomic_load_explicit(&p->owner, memory_order_relaxed) != NULL))
		FAIL("page %p: state %u vs owner", (void *)p, p->state);
	if (p->state < SLAB_OPEN || p->state > SLAB_ISOLATED)
		FAIL("page %p: bad state %u in a class", (void *)p, p->state);
#undef FAIL
	return 0;
}
