/* SPDX-License-Identifier: MIT */
/*
 * engine/forget.c - udc_forget_ino: every cached name of an object
 * forgotten at once, with no reverse index.
 *
 * Owns: the cache's forget slots (c->forgets, FORGET_BUCKETS x
 * FORGET_WAYS, inside the cache struct: nothing is allocated), their epoch
 * and their retirement.
 *
 * A forget puts the ino in a slot; while it is there, every positive
 * naming it is no answer (entry_answers, and the hit path's own test,
 * which reads c->forgets_pending first: one load a hit while no forget is
 * pending).  The garbage rounds drop such entries as they drop stale ones
 * (visit_garbage), and compaction drops instead of moving them
 * (entry_move_as), so once a round that began after the forget has visited
 * every page, no entry cached before the forget is left: the slot is
 * retired, after a grace period (below).  Answers cached after the forget
 * for the same ino are misses too until then (an ino reused by the store
 * within about a second of its forget costs backend calls, never a wrong
 * answer).  A forget's answers in flight are marked stale, every stripe's
 * (the names are unknown), so none is cached after it.
 *
 * Locking:
 *   forget_lock (a spinlock, leaf) serialises the slots' writers, the
 *   epoch and the retirement's state.  inflight_mark_all_stale takes each
 *   stripe in turn, with nothing else held.
 *
 * Ordering:
 *   The slots and forgets_pending are relaxed atomics.  A lookup that
 *   began after udc_forget_ino returned happened after its stores (the
 *   embedder's own synchronisation), so it sees them; one that ran
 *   alongside may answer from before the forget, as it may with any
 *   concurrent call.  A slot is cleared only after a grace period from the
 *   end of the round that dropped its entries (call_rcu): a reader that
 *   found such an entry before it was dropped is still in its read-side
 *   section, and sees the slot set, when it tests the entry.
 */
#include "engine/internal.h"
#include "common/probe.h"

#include <errno.h>

void forget_init(struct udc_cache *c)
{
	udc_spin_init(&c->forget_lock);
	c->forget_epoch = 1;
	for (unsigned i = 0; i < FORGET_BUCKETS * FORGET_WAYS; i++)
		atomic_init(&c->forgets[i].ino, UDC_INO_NONE);
}

/* Put @ino in a slot (or renew its epoch): 0, or -EAGAIN if its bucket is full. */
static int forget_note(struct udc_cache *c, udc_ino ino)
{
	struct forget_slot *b = &c->forgets[forget_bucket(ino)], *free_slot = NULL;
	int r = 0;

	udc_spin_lock(&c->forget_lock);
	for (unsigned i = 0; i < FORGET_WAYS; i++) {
		/* relaxed: the slots' writers hold forget_lock */
		udc_ino at = atomic_load_explicit(&b[i].ino, memory_order_relaxed);
		if (at == ino) {   /* again: its answers cached since go too */
			b[i].epoch = c->forget_epoch;
			goto out;
		}
		if (at == UDC_INO_NONE && !free_slot)
			free_slot = &b[i];
	}
	if (!free_slot) {
		r = -EAGAIN;
		goto out;
	}
	free_slot->epoch = c->forget_epoch;
	/* relaxed, both: see Ordering */
	atomic_store_explicit(&free_slot->ino, ino, memory_order_relaxed);
	atomic_fetch_add_explicit(&c->forgets_pending, 1, memory_order_relaxed);
out:
	udc_spin_unlock(&c->forget_lock);
	return r;
}

uint64_t cache_garbage_round_begin(struct udc_cache *c)
{
	udc_spin_lock(&c->forget_lock);
	uint64_t token = ++c->forget_epoch;
	udc_spin_unlock(&c->forget_lock);
	return token;
}

/* After a grace period from a round's end: its slots go.  Slots left (a
 * forget during the round, or renewed) need another round: noted as
 * garbage, as udc_forget_ino did. */
static void forget_retire(struct udc_cache *c)
{
	udc_spin_lock(&c->forget_lock);
	for (unsigned i = 0; i < FORGET_BUCKETS * FORGET_WAYS; i++) {
		struct forget_slot *f = &c->forgets[i];
		/* relaxed: see Ordering (a grace period since the round's end) */
		if (atomic_load_explicit(&f->ino, memory_order_relaxed) != UDC_INO_NONE &&
		    f->epoch < c->forget_retire_before) {
			atomic_store_explicit(&f->ino, UDC_INO_NONE, memory_order_relaxed);
			atomic_fetch_sub_explicit(&c->forgets_pending, 1, memory_order_relaxed);
		}
	}
	c->forget_retiring = false;
	/* relaxed: forget_lock is held */
	bool left = atomic_load_explicit(&c->forgets_pending, memory_order_relaxed) != 0;
	udc_spin_unlock(&c->forget_lock);
	if (left)
		shrink_dir_forgotten(c->shrink, 1);
}

RCU_PENDING_CALLBACK(forget_retire_rcu, struct udc_cache, forget_rcu, rcu_pending, forget_retire)

void cache_garbage_round_end(struct udc_cache *c, uint64_t token)
{
	bool due = false;

	udc_spin_lock(&c->forget_lock);
	for (unsigned i = 0; !c->forget_retiring && i < FORGET_BUCKETS * FORGET_WAYS; i++) {
		const struct forget_slot *f = &c->forgets[i];
		/* relaxed: forget_lock is held */
		due = due || (atomic_load_explicit(&f->ino, memory_order_relaxed) != UDC_INO_NONE &&
			      f->epoch < token);
	}
	if (due) {   /* one at a time: the rest is noted again when it is done */
		c->forget_retiring = true;
		c->forget_retire_before = token;
		rcu_pending_add(&c->rcu_pending);
	}
	udc_spin_unlock(&c->forget_lock);
	if (due)
		call_rcu(&c->forget_rcu, forget_retire_rcu);
}

int udc_forget_ino(udc_cache *c, udc_ino ino)
{
	if (!c || ino == UDC_INO_NONE)
		return -EINVAL;
	thread_enter();
	int r = forget_note(c, ino);
	if (r)
		return r;
	inflight_mark_all_stale(c);
	dir_forget(c, ino, UDC_PROBE_INVAL_DIR);   /* a directory: its names in it, its ".." */
	shrink_dir_forgotten(c->shrink, 1);        /* a garbage round drops its names */
	shrink_after_forget(c->shrink);
	return 0;
}
