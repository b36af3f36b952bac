/* SPDX-License-Identifier: MIT */
/*
 * engine/table.c - the memory of the rculfhash table of directories (the
 * name table is our own: engine/name_table.c).
 *
 * Owns: a cds_lfht_mm_type (table_mm) that hands liburcu bucket arrays
 * allocated before it asks for them, the reservation of those arrays, and
 * the creation, resizing and (at udc_destroy) freeing of tables through it
 * (engine/table.h).
 *
 * Why: liburcu 0.13's allocators (cds_lfht_mm_order, the default;
 * chunk and mmap alike) assert() or abort() when calloc or mmap fails,
 * in cds_lfht_new (the table struct, the first bucket array) and in
 * cds_lfht_resize (one array per order grown), and their callbacks
 * cannot report a failure.  So we allocate first, where failing is a
 * return value: table_create() allocates the struct and the first array
 * and hands them over through table_making; table_resize_to() allocates
 * every array a growth will ask for into the table's reserved[] and
 * skips the resize if one cannot be had.  table_mm's callbacks then only
 * move pointers.  A shrink allocates nothing.
 *
 * The layout is the order allocator's (one array for the first
 * min_nr_alloc_buckets buckets, then one array per order, half the
 * buckets of that order each), so lookups cost what they did.
 *
 * A cds_lfht_mm_type must allocate and fill liburcu's struct cds_lfht,
 * which is private to liburcu (src/rculfhash-internal.h, not installed):
 * struct lfht_mirror below copies the 0.12/0.13 layout, and table_create
 * checks what liburcu wrote into the first table made against it and
 * stops the process if they disagree (another liburcu), before any entry
 * is stored.  The struct comes first in our block because
 * cds_lfht_destroy() frees it with free(): so the block is a libc
 * allocation (calloc).  The bucket arrays come from the slab pages' arena
 * (slab_arena_zalloc), whose freed memory leaves RSS at once: a table
 * that shrinks gives its old arrays back to the OS.  bytes_used counts
 * the buckets (engine/cache.c), not the struct.
 *
 * Locking: none of its own.  Resizes of one table are serialised by the
 * caller (shrink's resize_lock); liburcu calls the callbacks in the resizing
 * thread, under its resize_mutex.  table_free (udc_destroy) runs alone.  table_making is thread-local: set and
 * taken within one cds_lfht_new call.
 *
 * Ordering: liburcu publishes the arrays (cmm_smp_wmb before the new
 * size); the reservation is written and read by the resizing thread only.
 */
#include "engine/internal.h"
#include "engine/table.h"

#include <stdlib.h>

#define LFHT_MAX_ORDER 64   /* MAX_TABLE_ORDER, 64-bit */

/* liburcu 0.12/0.13's struct cds_lfht (rculfhash-internal.h). */
struct lfht_mirror {
	unsigned long max_nr_buckets;
	const struct cds_lfht_mm_type *mm;
	const struct rcu_flavor_struct *flavor;
	long count;
	pthread_mutex_t resize_mutex;
	pthread_attr_t *resize_attr;
	unsigned int in_progress_destroy;
	unsigned long resize_target;
	int resize_initiated;
	int flags;
	unsigned long min_alloc_buckets_order;
	unsigned long min_nr_alloc_buckets;
	void *split_count;
	unsigned long size;
	struct cds_lfht_node *(*bucket_at)(struct cds_lfht *ht, unsigned long index);
	struct cds_lfht_node *tbl_order[LFHT_MAX_ORDER];
};

struct table {
	struct lfht_mirror ht;                            /* first: see above */
	struct cds_lfht_node *reserved[LFHT_MAX_ORDER];   /* arrays for the next growth */
};

static const struct cds_lfht_mm_type table_mm;
static __thread struct table *table_making;   /* table_create's block, for mm_alloc_cds_lfht */

static struct table *table_of(struct cds_lfht *ht)
{
	return (struct table *)ht;
}

static unsigned long order_of(unsigned long pow2)
{
	return (unsigned long)__builtin_ctzl(pow2);
}

/* Buckets in the array of @order (order 0: the first min_nr_alloc). */
static unsigned long order_len(const struct table *t, unsigned long order)
{
	return order ? 1UL << (order - 1) : t->ht.min_nr_alloc_buckets;
}

/* Orders 1..min_alloc_buckets_order live inside order 0's array. */
static bool order_has_array(const struct table *t, unsigned long order)
{
	return order == 0 || order > t->ht.min_alloc_buckets_order;
}

/* cds_lfht_mm_order's bucket_at: index's order picks the array. */
static struct cds_lfht_node *mm_bucket_at(struct cds_lfht *ht, unsigned long index)
{
	struct lfht_mirror *m = &table_of(ht)->ht;

	if (index < m->min_nr_alloc_buckets)
		return &m->tbl_order[0][index];
	unsigned long order = 64 - (unsigned long)__builtin_clzl(index);   /* fls */
	return &m->tbl_order[order][index & ((1UL << (order - 1)) - 1)];
}

static struct cds_lfht *mm_alloc_cds_lfht(unsigned long min_nr_alloc_buckets,
					  unsigned long max_nr_buckets)
{
	struct table *t = table_making;

	table_making = NULL;
	if (!t)
		udc_panic("rculfhash made a table that table_create did not prepare");
	udc_assert(min_nr_alloc_buckets == t->ht.min_nr_alloc_buckets);
	/* What liburcu's __default_alloc_cds_lfht fills in (the rest is 0). */
	t->ht.mm = &table_mm;
	t->ht.bucket_at = mm_bucket_at;
	t->ht.max_nr_buckets = max_nr_buckets;
	return (struct cds_lfht *)t;
}

static void mm_alloc_bucket_table(struct cds_lfht *ht, unsigned long order)
{
	struct table *t = table_of(ht);

	if (!order_has_array(t, order))
		return;
	if (!t->reserved[order])
		udc_panic("rculfhash wants bucket order %lu, which was not reserved", order);
	t->ht.tbl_order[order] = t->reserved[order];
	t->reserved[order] = NULL;
}

/* liburcu frees with decreasing orders, 0 last (at cds_lfht_destroy). */
static void mm_free_bucket_table(struct cds_lfht *ht, unsigned long order)
{
	struct table *t = table_of(ht);

	if (!order_has_array(t, order))
		return;
	slab_arena_free(t->ht.tbl_order[order]);
	t->ht.tbl_order[order] = NULL;
}

static const struct cds_lfht_mm_type table_mm = {
	.alloc_cds_lfht = mm_alloc_cds_lfht,
	.alloc_bucket_table = mm_alloc_bucket_table,
	.free_bucket_table = mm_free_bucket_table,
	.bucket_at = mm_bucket_at,
};

/* Free the arrays reserved and not taken. */
static void reserve_drop(struct table *t)
{
	for (unsigned long o = 0; o < LFHT_MAX_ORDER; o++) {
		slab_arena_free(t->reserved[o]);
		t->reserved[o] = NULL;
	}
}

/* Reserve the arrays of orders @first..@last: false (none kept) on ENOMEM. */
static bool reserve(struct table *t, unsigned long first, unsigned long last)
{
	for (unsigned long o = first; o <= last; o++) {
		if (!order_has_array(t, o))
			continue;
		t->reserved[o] = slab_arena_zalloc(order_len(t, o) * sizeof(struct cds_lfht_node));
		if (!t->reserved[o]) {
			reserve_drop(t);
			return false;
		}
	}
	return true;
}

/* What liburcu wrote must be where the mirror says, or we stop here. */
static void mirror_check(const struct table *t, size_t buckets)
{
	const struct lfht_mirror *m = &t->ht;

	if (m->mm != &table_mm || m->bucket_at != mm_bucket_at || m->flavor != &rcu_flavor ||
	    m->flags != 0 || m->split_count || m->resize_attr || m->size != buckets ||
	    m->resize_target != buckets || m->in_progress_destroy || !m->tbl_order[0])
		udc_panic("liburcu's struct cds_lfht is not the layout engine/table.c copies "
			  "(liburcu 0.12/0.13)");
}

struct cds_lfht *table_create(size_t buckets)
{
	struct table *t = calloc(1, sizeof(*t));

	if (!t)
		return NULL;
	t->ht.min_nr_alloc_buckets = buckets;
	t->ht.min_alloc_buckets_order = order_of(buckets);
	if (!reserve(t, 0, t->ht.min_alloc_buckets_order)) {
		free(t);
		return NULL;
	}
	/* Everything it allocates is above: flags 0 (no accounting array,
	 * no resize worker), our mm.  The largest size the order layout
	 * allows, as cds_lfht_mm_order's "0 = unbounded". */
	table_making = t;
	struct cds_lfht *ht = _cds_lfht_new(buckets, buckets, 1UL << (LFHT_MAX_ORDER - 1), 0,
					    &table_mm, &rcu_flavor, NULL);
	udc_assert(ht == (struct cds_lfht *)t && !table_making);
	mirror_check(t, buckets);
	return ht;
}

/* cds_lfht_destroy (0.12/0.13) of a table made by table_create (flags 0:
 * no accounting array, no resize worker, nothing registered): the bucket
 * arrays through the mm (table_mm's free_bucket_table), the mutex, the
 * struct.  We do the same without its emptiness check. */
void table_free(struct cds_lfht *ht)
{
	struct table *t = table_of(ht);

	for (unsigned long o = LFHT_MAX_ORDER; o-- > 0;)
		if (order_has_array(t, o) && t->ht.tbl_order[o]) {
			slab_arena_free(t->ht.tbl_order[o]);
			t->ht.tbl_order[o] = NULL;
		}
	reserve_drop(t);
	pthread_mutex_destroy(&t->ht.resize_mutex);
	free(t);
}

void table_memory(struct cds_lfht *ht, void (*fn)(void *arg, const char *what, void *p, size_t len),
		  void *arg)
{
	struct table *t = table_of(ht);

	fn(arg, "table struct", t, sizeof(*t));
	for (unsigned long o = 0; o < LFHT_MAX_ORDER; o++)
		if (order_has_array(t, o) && t->ht.tbl_order[o])
			fn(arg, "bucket array", t->ht.tbl_order[o],
			   order_len(t, o) * sizeof(struct cds_lfht_node));
}

bool table_resize_to(struct cds_lfht *ht, size_t buckets)
{
	struct table *t = table_of(ht);
	/* relaxed: resizes are serialised by the caller, and only they write it */
	unsigned long size = __atomic_load_n(&t->ht.size, __ATOMIC_RELAXED);

	if (buckets > size && !reserve(t, order_of(size) + 1, order_of(buckets)))
		return false;
	cds_lfht_resize(ht, buckets);
	/* liburcu stops a growth early only when another resize moves its
	 * target, which the caller's serialisation rules out; should it, the
	 * arrays it did not take go back. */
	reserve_drop(t);
	return true;
}
