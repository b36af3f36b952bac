/* SPDX-License-Identifier: MIT */
/*
 * engine/listing.c - a directory's positives in a stable order, and
 * udc_readdir, which lists a complete directory from them.
 *
 * Owns: struct dir_listing (d->listing: made by the directory's first
 * fill, freed with the object), the listed positives' places in it
 * (struct entry_kid, inside the entries, after their other extras), and
 * udc_readdir.
 *
 * A positive allocated while its directory has a listing and is filling
 * or complete is listed (POS_LISTED, listing_wanted; the entry's size
 * depends on it, so it is decided then).  Its kid goes last, with the next
 * seq, when the entry is published; it takes the place and the seq of the
 * entry it replaces if that one was listed (a new answer for a name keeps
 * the name's place); it follows the entry when reclaim moves it; it leaves
 * when the entry leaves the table.  So the kids are in seq order, and a
 * seq is a cookie that resumes a listing after its name, whatever changed
 * since.  Finding the first kid after a cookie is a walk from the head,
 * except for the cookies the last LISTING_CURSORS batches ended on
 * (cursors, kept pointing at the right kid as kids come and go): a
 * listing read in order costs O(names) in all.
 *
 * A listing answers only when it holds the whole directory: the directory
 * is complete (and its completeness has not expired), every positive the
 * table holds for it is listed (d->nr_positive == n, below), and every
 * listed current answer is unexpired (an expired one: its name may be
 * gone or changed).  Answers of an older generation are skipped: garbage
 * of an invalidation before the fill that completed the directory.
 * Otherwise udc_readdir returns -ENODATA and the embedder lists its store.
 *
 * Locking:
 *   listing->lock (a spinlock) protects its kids list, n, seq, cursors
 *   and every kid on it.  It is taken under the entry's stripe lock
 *   (publish, move, unpublish) or alone (udc_readdir), and nothing is
 *   taken under it.  udc_readdir holds it to copy one batch (at most
 *   LISTING_BATCH names and values), never across the embedder's call.
 *
 * Ordering:
 *   d->listing is set once (CAS, release) and read with acquire
 *   (listing_of): the listing's initialised fields come with it.  It is
 *   freed with the object, when nothing holds it (no entry, no pin): a
 *   pinned directory's listing stays.
 *   A kid on the list is in a live entry: it is unlinked under the lock
 *   before the entry's free is queued, so the lock alone makes reading
 *   the entry (its name apart too) safe.
 *   d->nr_positive is raised before a kid is linked (entry_publish_locked)
 *   and lowered after it is unlinked (entry_detach), so the listed
 *   positives are a subset of those it counts, and under the lock
 *   n == nr_positive means no positive of the directory is in the table
 *   unlisted (a positive is counted before it enters the table and until
 *   after it left).  A loss of a name clears the complete flag
 *   (dir_drop_note, seq_cst) before its entry is unlinked under the lock,
 *   so a batch that no longer finds the entry sees the flag cleared.
 */
#include "engine/internal.h"

#include <errno.h>
#include <stdio.h>

#define LISTING_CURSORS 4
#define LISTING_BATCH 8

struct listing_cursor {
	uint64_t after;                   /* the cookie it resumes; 0: unused */
	struct entry_kid *at;             /* the first kid with a seq above it; NULL: none yet */
};

struct dir_listing {
	udc_spin_t lock;
	unsigned cursor_next;             /* the cursor a new cookie replaces (the oldest) */
	uint64_t seq;                     /* the last seq handed out */
	uint64_t n;                       /* kids on the list */
	struct cds_list_head kids;        /* struct entry_kid, in seq order */
	struct listing_cursor cur[LISTING_CURSORS];
};

static struct dir_listing *listing_of(struct udc_dir *d)
{
	struct dir_ext *x = dir_ext_rcu(d);

	/* acquire: pairs with the release CAS in listing_make */
	return x ? atomic_load_explicit(&x->listing, memory_order_acquire) : NULL;
}

static struct entry_kid *kid_of(struct udc_entry *e)
{
	return pos_kid(entry_pos(e));
}

bool listing_make(struct udc_cache *c, struct udc_dir *d)
{
	struct dir_ext *x = dir_ext_get(c, d, true);   /* the listing's place */

	if (!x)
		return false;
	if (listing_of(d))
		return true;
	struct dir_listing *l = mem_alloc(c, sizeof(*l));
	if (!l)
		return false;
	*l = (struct dir_listing){ 0 };
	udc_spin_init(&l->lock);
	CDS_INIT_LIST_HEAD(&l->kids);
	struct dir_listing *none = NULL;
	/* release: pairs with listing_of's acquire (the fields above) */
	if (!atomic_compare_exchange_strong_explicit(&x->listing, &none, l, memory_order_release,
						     memory_order_relaxed))
		mem_free(c, l, sizeof(*l));   /* another fill made it */
	return true;
}

bool listing_wanted(struct udc_dir *d)
{
	/* relaxed, both: a decision that only costs (a listed entry in a
	 * directory that stopped filling) or refuses udc_readdir (an
	 * unlisted one in a complete directory), never a wrong listing */
	return (atomic_load_explicit(&d->state, memory_order_relaxed) &
		(DIR_FILLING | DIR_COMPLETE)) &&
	       listing_of(d);
}

/* Cursors at @from now point at @to. */
static void cursors_move_locked(struct dir_listing *l, struct entry_kid *from, struct entry_kid *to)
{
	spin_assert_held(&l->lock);
	for (unsigned i = 0; i < LISTING_CURSORS; i++) {
		if (l->cur[i].at == from)
			l->cur[i].at = to;
	}
}

static struct entry_kid *kid_next_locked(struct dir_listing *l, struct entry_kid *k)
{
	spin_assert_held(&l->lock);
	return k->link.next == &l->kids ? NULL
					: caa_container_of(k->link.next, struct entry_kid, link);
}

void listing_link_locked(struct udc_cache *c, struct udc_entry *e, struct udc_entry *old)
{
	udc_assert_internal(entry_stripe_held(c, e));
	struct dir_listing *l = listing_of(e->dir);
	struct entry_kid *k = kid_of(e);

	udc_assert(entry_listed(e) && l);
	udc_spin_lock(&l->lock);
	k->e = e;
	struct entry_kid *ok = old && entry_listed(old) ? kid_of(old) : NULL;
	if (ok && ok->link.next) {   /* the name keeps its place */
		k->seq = ok->seq;
		cds_list_replace(&ok->link, &k->link);
		ok->link.next = NULL;
		cursors_move_locked(l, ok, k);
	} else {
		k->seq = ++l->seq;
		cds_list_add_tail(&k->link, &l->kids);
		l->n++;
		for (unsigned i = 0; i < LISTING_CURSORS; i++) {
			if (l->cur[i].after && !l->cur[i].at)
				l->cur[i].at = k;
		}
	}
	udc_spin_unlock(&l->lock);
}

void listing_unlink_locked(struct udc_cache *c, struct udc_entry *e)
{
	udc_assert_internal(entry_stripe_held(c, e));
	struct dir_listing *l = listing_of(e->dir);
	struct entry_kid *k = kid_of(e);

	udc_spin_lock(&l->lock);
	if (k->link.next) {   /* else replaced in place by its successor, or never linked */
		cursors_move_locked(l, k, kid_next_locked(l, k));
		cds_list_del(&k->link);
		k->link.next = NULL;
		l->n--;
	}
	udc_spin_unlock(&l->lock);
}

void listing_moved_locked(struct udc_cache *c, struct udc_entry *e, struct udc_entry *to)
{
	udc_assert_internal(entry_stripe_held(c, e));
	struct dir_listing *l = listing_of(e->dir);
	struct entry_kid *k = kid_of(e), *nk = kid_of(to);

	udc_spin_lock(&l->lock);
	if (k->link.next) {
		nk->seq = k->seq;
		nk->e = to;
		cds_list_replace(&k->link, &nk->link);
		k->link.next = NULL;
		cursors_move_locked(l, k, nk);
	}   /* else nk stays zeroed (slab): on no list, as k */
	udc_spin_unlock(&l->lock);
}

void listing_free(struct udc_cache *c, struct udc_dir *d)
{
	/* relaxed: the caller is alone with d (dead: no entry, no pin; or
	 * udc_destroy, whose entries go with their pages, unlinked) */
	struct dir_ext *x = atomic_load_explicit(&d->ext, memory_order_relaxed);
	struct dir_listing *l = x ? atomic_load_explicit(&x->listing, memory_order_relaxed) : NULL;

	if (!l)
		return;
	atomic_store_explicit(&x->listing, NULL, memory_order_relaxed);
	mem_free(c, l, sizeof(*l));
}

int listing_check(struct udc_dir *d)
{
	struct dir_listing *l = listing_of(d);
	struct entry_kid *k;
	uint64_t n = 0, seq = 0;
	int r = 0;

	if (!l)
		return 0;
	udc_spin_lock(&l->lock);
	cds_list_for_each_entry(k, &l->kids, link) {
		if (k->seq <= seq || k->seq > l->seq || k->e->dir != d || !entry_listed(k->e) ||
		    kid_of(k->e) != k || !entry_published(k->e)) {
			fprintf(stderr, "udcache: listing kid %llu out of order or not its entry's\n",
				(unsigned long long)k->seq);
			r = -EUCLEAN;
			break;
		}
		seq = k->seq;
		n++;
	}
	/* relaxed: the validator runs with no call under way */
	if (!r && (n != l->n ||
		   n > (uint64_t)atomic_load_explicit(&d->nr_positive, memory_order_relaxed))) {
		fprintf(stderr, "udcache: a listing holds %llu kids, counts %llu (positives %d)\n",
			(unsigned long long)n, (unsigned long long)l->n,
			(int)atomic_load_explicit(&d->nr_positive, memory_order_relaxed));
		r = -EUCLEAN;
	}
	udc_spin_unlock(&l->lock);
	return r;
}

/* ------------------------------------------------------------------ */
/* udc_readdir */

/* One name of a batch, copied out under the lock. */
struct listed_name {
	struct udc_attr attr;
	uint64_t seq;
	uint16_t len, vlen;
	char name[UDC_NAME_MAX];
	unsigned char value[UDC_VALUE_MAX];
};

struct listing_batch {
	unsigned n;
	bool end;                         /* the last kid was copied */
	struct listed_name names[LISTING_BATCH];
};

/* Does l hold every name of d now? */
static bool listing_whole_locked(struct udc_cache *c, struct udc_dir *d, struct dir_listing *l)
{
	spin_assert_held(&l->lock);
	/* acquire: a loss's flag clear (Ordering); nr_positive relaxed: its
	 * changes around a kid's are ordered by this lock (Ordering) */
	return (atomic_load_explicit(&d->state, memory_order_acquire) & DIR_COMPLETE) &&
	       !dir_complete_expired(c, d) &&
	       l->n == (uint64_t)atomic_load_explicit(&d->nr_positive, memory_order_relaxed);
}

/* The first kid with a seq above @after: from the nearest cursor at or
 * before it (a reader that stopped inside its last batch resumes a few
 * kids after that batch's start), else from the head. */
static struct entry_kid *listing_resume_locked(struct dir_listing *l, uint64_t after)
{
	struct entry_kid *k = NULL;
	uint64_t best = 0;

	spin_assert_held(&l->lock);
	for (unsigned i = 0; i < LISTING_CURSORS; i++) {
		const struct listing_cursor *cur = &l->cur[i];
		if (cur->after && cur->after <= after && cur->after > best) {
			best = cur->after;
			k = cur->at;
		}
	}
	if (!best && !cds_list_empty(&l->kids))
		k = cds_list_first_entry(&l->kids, struct entry_kid, link);
	while (k && k->seq <= after)
		k = kid_next_locked(l, k);
	return k;
}

/* Remember that @at is the first kid after @after. */
static void listing_cursor_save_locked(struct dir_listing *l, uint64_t after, struct entry_kid *at)
{
	unsigned i;

	spin_assert_held(&l->lock);
	for (i = 0; i < LISTING_CURSORS && l->cur[i].after != after; i++)
		;
	if (i == LISTING_CURSORS) {   /* a new one: replaces the oldest */
		i = l->cursor_next;
		l->cursor_next = (i + 1) % LISTING_CURSORS;
	}
	l->cur[i] = (struct listing_cursor){ .after = after, .at = at };
}

/* Copy the names after @after into @b: 0, or -ENODATA if l does not hold
 * the whole directory. */
static int listing_batch_copy(struct udc_cache *c, struct udc_dir *d, struct dir_listing *l,
			      uint64_t after, struct listing_batch *b)
{
	int r = 0;

	b->n = 0;
	b->end = false;
	udc_spin_lock(&l->lock);
	if (!listing_whole_locked(c, d, l)) {
		r = -ENODATA;
		goto out;
	}
	struct entry_kid *k = listing_resume_locked(l, after);
	/* The cursor's kid: the first after the last name given, not after
	 * the garbage skipped since, whose names may be told again in their
	 * places (a cursor past them lost them: readdir/
	 * a_cursor_past_older_names_resumes_at_them). */
	struct entry_kid *resume = k;
	for (; k && b->n < LISTING_BATCH; k = kid_next_locked(l, k)) {
		struct udc_entry *e = k->e;
		if (!entry_current(e))
			continue;   /* garbage of an older generation */
		if (entry_expired(c, e) || entry_forgotten(c, e)) {
			r = -ENODATA;   /* the name may be gone: not a listing */
			goto out;
		}
		struct listed_name *ln = &b->names[b->n++];
		size_t vlen;
		const unsigned char *v = pos_value(entry_pos(e), &vlen);
		pos_attr_copy(&ln->attr, entry_pos(e));
		ln->seq = k->seq;
		ln->len = e->len;
		memcpy(ln->name, entry_name(e), e->len);
		ln->vlen = (uint16_t)vlen;
		memcpy(ln->value, v, vlen);
		after = k->seq;
		resume = kid_next_locked(l, k);
	}
	b->end = !k;
	if (after)
		listing_cursor_save_locked(l, after, resume);
out:
	udc_spin_unlock(&l->lock);
	return r;
}

int udc_readdir(udc_cache *c, udc_ino dir, uint64_t cookie, udc_readdir_fn fn, void *arg)
{
	if (!c || dir == UDC_INO_NONE || !fn)
		return -EINVAL;
	thread_enter();
	struct udc_dir *d = dir_find(c, dir);
	struct dir_listing *l = d ? listing_of(d) : NULL;
	struct listing_batch b;   /* ~4.3 KiB: no allocation to fail */
	int r = -ENODATA;

	while (l) {
		r = listing_batch_copy(c, d, l, cookie, &b);
		for (unsigned i = 0; !r && i < b.n; i++) {
			const struct listed_name *ln = &b.names[i];
			const struct udc_dirent ent = {
				.name = ln->name, .len = ln->len, .attr = ln->attr,
				.value = ln->vlen ? ln->value : NULL, .value_len = ln->vlen,
				.cookie = ln->seq,
			};
			r = fn(arg, &ent);
			cookie = ln->seq;
		}
		if (r || b.end)
			break;
	}
	if (d)
		dir_put(c, d);
	return r;
}
