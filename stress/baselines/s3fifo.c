/* SPDX-License-Identifier: MIT */
/*
 * stress/baselines/s3fifo.c - impl_s3fifo: textbook S3-FIFO (Yang et al.,
 * SOSP 2023), entry by entry, over lru_mutex.c's one-mutex cache.
 *
 * Owns: the S3-FIFO policy's state (struct s3_state): the small FIFO queue,
 * the counts of both queues, the ghost queue; the main queue is the cache's
 * own list (lru_cache.lru).  A hit-ratio reference, not a speed one: every
 * call takes the one mutex, as lru-mutex does.
 *
 * The capacity is in entries: cfg->max_entries, or (0) cfg->memory_limit /
 * S3FIFO_ENTRY_BYTES, 128 bytes an entry (about lru-mutex's with a
 * 16-byte name: so that it runs at a bytes limit too).  The rules:
 *  - a new entry goes to the head of the small queue (S), or of the main
 *    queue (M) if its key is in the ghost queue (G); its frequency is 0;
 *  - a hit adds 1 to the frequency, at most 3 (two bits);
 *  - past the capacity, evict from S while it holds >= 10% of the capacity
 *    (or M is empty), else from M.  From S: the tail entry goes to the head
 *    of M if it was hit while in S (frequency >= 1; reset to 0), else it is
 *    evicted and its key joins G.  From M (CLOCK): the tail entry, if its
 *    frequency is > 0, goes back to the head with one less, else it is
 *    evicted;
 *  - G is a FIFO of the last (capacity - capacity/10) keys evicted from S
 *    (as many as M holds), keys being the names' 64-bit hashes.
 * G's membership test is a table from key to the ghost's sequence number:
 * a key is in G if its last entry in the table is one of the last |G| keys
 * added.  The table is rebuilt from the ring every |G| additions, so it
 * never holds more than 2 |G| keys (<= 50% of its slots).
 *
 * Locking: all of it under lru_cache.lock (every lru_policy hook is called
 * with it held; see lru_mutex.h).
 * Ordering: none beyond the mutex.
 *
 * Limitations: G's keys are 64-bit hashes (a collision admits a name to M
 * it should not; at most one in 2^64 / |G| times).  Bytes used (the
 * report's bytes_used) count the ghost ring and table besides lru-mutex's
 * entries and tables, but the limit is only the entry count.
 */
#include "stress/baselines/lru_mutex.h"

#include <errno.h>
#include <string.h>

#define S3FIFO_ENTRY_BYTES 128 /* an entry, to make a bytes limit an entry count */
#define S3_SMALL_PERCENT 10    /* S's share of the capacity */
#define S3_FREQ_MAX 3

enum { S3_SMALL = 0, S3_MAIN = 1 };

struct s3_state {
	struct cds_list_head small; /* S, newest first; M is the cache's lru list */
	size_t nr_small, nr_main;
	size_t small_target; /* evict from S while it holds this many (10%) */
	/* G: the ring of its keys by sequence number, and the table */
	uint64_t *ring;
	size_t ghost_cap; /* |G|: the ring's size */
	uint64_t seq;	  /* keys ever added to G */
	uint64_t *tkey;	  /* key per slot, 0: empty (a key 0 is stored as 1) */
	uint64_t *tseq;	  /* the key's last sequence number */
	size_t tmask;	  /* slots - 1 */
	size_t since_rebuild;
};

static struct s3_state *s3(struct lru_cache *c)
{
	return c->policy_state;
}

/* ---------------------------------------------------------------------- */
/* G */

static uint64_t ghost_key(uint64_t hash)
{
	return hash ? hash : 1;
}

/* key's table slot: its own, or the empty one it would take. */
static size_t ghost_slot(const struct s3_state *s, uint64_t key)
{
	size_t i = (size_t)(key ^ (key >> 29)) & s->tmask;

	while (s->tkey[i] && s->tkey[i] != key)
		i = (i + 1) & s->tmask;
	return i;
}

static void ghost_put(struct s3_state *s, uint64_t key, uint64_t seq)
{
	size_t i = ghost_slot(s, key);

	s->tkey[i] = key;
	s->tseq[i] = seq;
}

static bool ghost_has(const struct s3_state *s, uint64_t hash)
{
	uint64_t key = ghost_key(hash);
	size_t i = ghost_slot(s, key);

	return s->tkey[i] == key && s->tseq[i] + s->ghost_cap >= s->seq;
}

/* The table again from the ring: the last ghost_cap keys only. */
static void ghost_rebuild(struct s3_state *s)
{
	memset(s->tkey, 0, (s->tmask + 1) * sizeof(*s->tkey));
	uint64_t first = s->seq > s->ghost_cap ? s->seq - s->ghost_cap : 0;
	for (uint64_t q = first; q < s->seq; q++)
		ghost_put(s, s->ring[q % s->ghost_cap], q);
	s->since_rebuild = 0;
}

static void ghost_add(struct s3_state *s, uint64_t hash)
{
	uint64_t key = ghost_key(hash);

	s->ring[s->seq % s->ghost_cap] = key;
	ghost_put(s, key, s->seq);
	s->seq++;
	if (++s->since_rebuild >= s->ghost_cap)
		ghost_rebuild(s);
}

/* ---------------------------------------------------------------------- */
/* The policy's hooks (struct lru_policy), c->lock held */

static void s3_hit(struct lru_cache *c, struct lru_entry *e)
{
	(void)c;
	if (e->freq < S3_FREQ_MAX)
		e->freq++;
}

static void s3_insert(struct lru_cache *c, struct lru_entry *e)
{
	struct s3_state *s = s3(c);

	e->freq = 0;
	if (ghost_has(s, e->node.hash)) {
		e->queue = S3_MAIN;
		cds_list_add(&e->lru, &c->lru);
		s->nr_main++;
	} else {
		e->queue = S3_SMALL;
		cds_list_add(&e->lru, &s->small);
		s->nr_small++;
	}
}

static void s3_unlink(struct lru_cache *c, struct lru_entry *e)
{
	struct s3_state *s = s3(c);

	cds_list_del(&e->lru);
	if (e->queue == S3_SMALL)
		s->nr_small--;
	else
		s->nr_main--;
}

static struct lru_entry *queue_tail(struct cds_list_head *q)
{
	return caa_container_of(q->prev, struct lru_entry, lru);
}

/* S's tail, once entries hit in S went to M; NULL if that leaves only keep. */
static struct lru_entry *s3_victim_small(struct lru_cache *c, const struct lru_entry *keep)
{
	struct s3_state *s = s3(c);

	while (s->nr_small) {
		struct lru_entry *t = queue_tail(&s->small);
		if (t->freq == 0) {
			if (t == keep)
				return NULL;
			ghost_add(s, t->node.hash);
			return t;
		}
		cds_list_move(&t->lru, &c->lru);
		t->queue = S3_MAIN;
		t->freq = 0;
		s->nr_small--;
		s->nr_main++;
	}
	return NULL;
}

/* M's CLOCK: the first tail entry with frequency 0, the others sent back
 * to the head with one less. */
static struct lru_entry *s3_victim_main(struct lru_cache *c, const struct lru_entry *keep)
{
	while (!cds_list_empty(&c->lru)) {
		struct lru_entry *t = queue_tail(&c->lru);
		if (t->freq == 0)
			return t == keep ? NULL : t;
		t->freq--;
		cds_list_move(&t->lru, &c->lru);
	}
	return NULL;
}

static struct lru_entry *s3_victim(struct lru_cache *c, const struct lru_entry *keep)
{
	struct s3_state *s = s3(c);
	struct lru_entry *v = NULL;

	if (s->nr_small >= s->small_target || !s->nr_main)
		v = s3_victim_small(c, keep);
	return v ? v : s3_victim_main(c, keep);
}

static int s3_init(struct lru_cache *c)
{
	size_t cap = c->max_entries ? c->max_entries : c->limit / S3FIFO_ENTRY_BYTES;
	struct s3_state *s = bl_alloc(&c->mem, sizeof(*s));

	if (!s)
		return -ENOMEM;
	if (cap < 2)
		cap = 2;
	c->max_entries = cap;
	c->policy_state = s;
	CDS_INIT_LIST_HEAD(&s->small);
	s->small_target = cap * S3_SMALL_PERCENT / 100 ? cap * S3_SMALL_PERCENT / 100 : 1;
	s->ghost_cap = cap - s->small_target;
	size_t slots = 16;
	while (slots < 4 * s->ghost_cap)
		slots *= 2;
	s->tmask = slots - 1;
	s->ring = bl_alloc(&c->mem, s->ghost_cap * sizeof(*s->ring));
	s->tkey = bl_alloc(&c->mem, slots * sizeof(*s->tkey));
	s->tseq = bl_alloc(&c->mem, slots * sizeof(*s->tseq));
	return s->ring && s->tkey && s->tseq ? 0 : -ENOMEM;
}

static void s3_fini(struct lru_cache *c)
{
	struct s3_state *s = s3(c);

	if (!s)
		return;
	bl_free(&c->mem, s->ring, s->ring ? s->ghost_cap * sizeof(*s->ring) : 0);
	bl_free(&c->mem, s->tkey, s->tkey ? (s->tmask + 1) * sizeof(*s->tkey) : 0);
	bl_free(&c->mem, s->tseq, s->tseq ? (s->tmask + 1) * sizeof(*s->tseq) : 0);
	bl_free(&c->mem, s, sizeof(*s));
	c->policy_state = NULL;
}

static const struct lru_policy s3_policy = {
	.hit = s3_hit,
	.insert = s3_insert,
	.unlink = s3_unlink,
	.victim = s3_victim,
	.init = s3_init,
	.fini = s3_fini,
};

/* ---------------------------------------------------------------------- */
/* The interface: lru_mutex.c's, created with the policy above */

static void *s3fifo_create(const struct impl_config *cfg)
{
	return lru_create_policy(cfg, &s3_policy);
}

const struct impl impl_s3fifo = {
	.name = "s3fifo",
	.summary = "textbook S3-FIFO by entries (10% small queue, ghosts, main CLOCK) under one "
		   "mutex: a hit-ratio reference",
	.bounded = false, /* its limit is entries: bytes_used is not held to memory_limit */
	.create = s3fifo_create,
	.destroy = bl_destroy,
	.lookup = lru_lookup,
	.resolve = lru_resolve,
	.walk = bl_walk,
	.add = bl_add,
	.add_negative = bl_add_negative,
	.remove = bl_remove,
	.rename = bl_rename,
	.rmdir = bl_rmdir,
	.invalidate_dir = bl_invalidate_dir,
	.stats = lru_stats,
};
