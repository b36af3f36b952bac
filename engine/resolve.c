/* SPDX-License-Identifier: MIT */
/*
 * engine/resolve.c - udc_resolve(): the miss path, with in-flight dedup.
 *
 * Owns: the in-flight placeholders (struct inflight).  A placeholder lives
 * on the stack of the thread that calls the backend (the owner), is listed
 * on the name's stripe while the call runs, and is read by the threads that
 * missed the same name meanwhile (waiters), which sleep on the stripe's
 * condition variable instead of calling the backend too (as Linux's
 * d_alloc_parallel).  The owner returns only once every waiter has copied
 * the answer.  A placeholder made stale is not joined: a later resolve of
 * the name calls the backend itself (with a placeholder of its own).
 *
 * A placeholder records the directory's generation before the backend is
 * asked.  The answer is cached only if no mutation of the name marked the
 * placeholder stale and the generation did not move (invalidate_dir,
 * rmdir): otherwise it is returned to the owner and the waiters but not
 * cached, and counted in stale_answers.  Backend errors other than -ENOENT
 * are shared with the waiters and never cached.
 *
 * A placeholder records its owner thread: a backend that resolves the
 * name it is resolving (itself, or through other names) finds its own
 * placeholder and gets -EDEADLK instead of waiting on it.  The backend is
 * called inside a cleanup handler (pthread_cleanup_push): an owner that
 * exits or is cancelled there withdraws its placeholder (answer
 * INFLIGHT_ABANDONED, waiters gone) and unpins the directory, and its
 * waiters resolve again.  Our own condition waits run with cancellation
 * disabled, so that no thread is cancelled holding a stripe or a
 * waiter count.  A positive answer that is not cached is a drop for the
 * fill protocol (dir_drop_note).  ".." answers are recorded only if the
 * directory's parent record did not change meanwhile (dir_parent_learn).
 *
 * Probes (common/probe.h): resolve_miss in resolve_name, backend_call and
 * backend_return around each backend->lookup, decline for a negative
 * not admitted.
 *
 * Locking:
 *   stripe->lock protects the stripe's in-flight list and every field of
 *   its placeholders (stale, done, waiters, result, attr); the backend is
 *   called with no lock held.  The stripe's cond is waited on with it.
 *
 * Ordering:
 *   Everything is under stripe->lock, whose acquire/release orders the
 *   owner's result before a waiter's read of it.  The generation check in
 *   the critical section needs no fence: a generation bump that lands
 *   after it leaves the published entry stale (its gen is the old one), so
 *   no answer older than an invalidation is ever served.
 */
#include "engine/hit.h"
#include "common/probe.h"

#include <errno.h>

static int answer_of(int lookup_result)
{
	return lookup_result == UDC_POSITIVE ? 0 : -ENOENT;
}

/* What the backend said, checked: 0 with a valid attr, -ENOENT, another
 * errno (-1..-4095), or -EIO for anything else (a contract broken). */
static int backend_checked(int r, const struct udc_attr *attr)
{
	if (r == 0)
		return attr_valid(attr) ? 0 : -EIO;
	return r < 0 && r >= -4095 ? r : -EIO;
}

/* Ask the backend (lookup_value when it has one) for one name; the value,
 * if @vo is given, at vo->buf (UDC_VALUE_MAX bytes room), its length in
 * vo->len.  The answer is checked (backend_checked; a value too long is
 * -EIO). */
static int backend_ask(struct udc_cache *c, const struct udc_call *call, udc_ino dir,
		       const char *name, size_t len, struct udc_attr *attr, struct value_out *vo,
		       uint32_t *ttl_ms)
{
	const struct udc_backend *b = c->backend;
	void *ctx = call ? call->ctx : NULL;
	unsigned char scratch[UDC_VALUE_MAX];
	size_t vlen = 0;
	uint32_t ttl = 0;
	int r;

	if (!b->lookup_value)
		r = b->lookup(ctx, dir, name, len, attr);
	else
		r = b->lookup_value(ctx, dir, name, len, attr, vo ? vo->buf : scratch, &vlen, &ttl);
	if (ttl_ms)
		*ttl_ms = ttl;
	r = backend_checked(r, attr);
	if (r == 0 && vlen > UDC_VALUE_MAX)
		r = -EIO;
	if (vo)
		vo->len = r == 0 ? vlen : 0;
	return r;
}

/* ".." with the parent unknown: ask the backend and record the answer,
 * unless d's parent changed meanwhile (a rename, a remove) or a directory
 * moved unseen: then the answer is returned but not cached. */
static int resolve_dotdot(struct udc_cache *c, udc_ino dir, const struct udc_call *call,
			  struct udc_attr *out)
{
	struct udc_attr attr = { 0 };
	struct dotdot_snap snap;
	struct udc_dir *d = dir_get(c, dir);

	if (!d)
		return -ENOMEM;
	if (dir_parent_snap(c, d, &snap)) {
		dir_put(c, d);
		return -ENOMEM;
	}
	stat_add(thread_stats(c), backend_calls, 1);
	UDC_PROBE(backend_call, dir, "..", (size_t)2);
	int r = backend_ask(c, call, dir, "..", 2, &attr, NULL, NULL);
	if (r == 0 && attr.type != UDC_TYPE_DIR)
		r = -EIO;
	UDC_PROBE(backend_return, dir, r, r ? UDC_INO_NONE : attr.ino);
	struct udc_dir *pd = r ? NULL : dir_get(c, attr.ino);
	if (pd) {
		if (dir_parent_learn(c, d, pd, &snap))
			dir_cookie_set(pd, attr.cookie);
		else
			stat_add(thread_stats(c), stale_answers, 1);
		dir_put(c, pd);
	}
	dir_put(c, d);
	if (r == 0 && out)
		*out = attr;
	shrink_after_dir_call(c->shrink);   /* the objects and the record are bytes */
	return r;
}

/* Wait for ph's owner, with s->lock held; returns ph's answer
 * (INFLIGHT_ABANDONED: its owner never finished). */
#define INFLIGHT_ABANDONED 1
static int inflight_wait_locked(struct stripe *s, struct inflight *ph, struct udc_attr *out,
				struct value_out *vo)
{
	lock_assert_held(&s->lock);
	int cs = cancel_hold();

	ph->waiters++;
	while (!ph->done)
		udc_cond_wait(&s->cond, &s->lock);
	int r = ph->result;
	if (r == 0 && out)
		*out = ph->attr;
	if (r == 0 && vo)
		value_copy_out(vo, ph->value.buf, ph->value.len);
	if (--ph->waiters == 0)
		udc_cond_broadcast(&s->cond);   /* the owner waits for the last one */
	cancel_release(cs);
	return r;
}

/* The owner's end of ph, with s->lock held: off the list, the answer
 * given, and every waiter gone (ph may be on the owner's stack). */
static void inflight_finish_locked(struct stripe *s, struct inflight *ph, int r,
				   const struct udc_attr *attr)
{
	lock_assert_held(&s->lock);
	cds_list_del(&ph->link);
	ph->result = r;
	ph->attr = *attr;
	ph->done = true;
	if (ph->waiters) {
		int cs = cancel_hold();
		udc_cond_broadcast(&s->cond);
		while (ph->waiters)
			udc_cond_wait(&s->cond, &s->lock);
		cancel_release(cs);
	}
}

/* The owner's thread exits or is cancelled inside the backend: the
 * placeholder goes, its waiters resolve again themselves. */
struct owner_exit {
	struct udc_cache *c;
	struct stripe *s;
	struct inflight *ph;
	struct udc_dir *d;
};

static void inflight_abandon(void *arg)
{
	struct owner_exit *oe = arg;
	const struct udc_attr none = { 0 };

	cancel_hold();   /* the thread is going: its state needs no restoring */
	udc_mutex_lock(&oe->s->lock);
	inflight_finish_locked(oe->s, oe->ph, INFLIGHT_ABANDONED, &none);
	udc_mutex_unlock(&oe->s->lock);
	dir_put(oe->c, oe->d);
}

/* Ask the backend for k as ph's owner (the value into ph->value); a
 * thread that exits or is cancelled in it leaves nothing behind
 * (inflight_abandon). */
static int backend_lookup(struct udc_cache *c, struct owner_exit *oe, const struct name_key *k,
			  const struct udc_call *call, struct udc_attr *attr, uint32_t *ttl_ms)
{
	int r;

	stat_add(thread_stats(c), backend_calls, 1);
	UDC_PROBE(backend_call, k->dir, k->name, k->len);
	pthread_cleanup_push(inflight_abandon, oe);
	/* a contract broken: reported, nothing cached */
	r = backend_ask(c, call, k->dir, k->name, k->len, attr, &oe->ph->value, ttl_ms);
	pthread_cleanup_pop(0);
	UDC_PROBE(backend_return, k->dir, r, r ? UDC_INO_NONE : attr->ino);
	return r;
}

/* The entry caching the backend's answer @r (attr), allocated before the
 * stripe is taken; NULL if none is to be cached (or no memory). */
static struct udc_entry *answer_entry(struct udc_cache *c, struct udc_dir *d,
				      const struct name_key *k, uint64_t hash, int r,
				      const struct udc_attr *attr, const struct value_out *value,
				      uint32_t ttl_ms, const struct udc_call *call)
{
	struct udc_entry *fresh = NULL;

	if (r == 0) {
		const struct entry_extra x = {
			.value = value->buf, .vlen = value->len,
			.deadline = cache_deadline_for(c, ENT_POSITIVE, ttl_ms),
			.listed = listing_wanted(d),
		};
		fresh = entry_alloc(c, ENT_POSITIVE, k->name, k->len, hash, &x);
		if (fresh)
			pos_attr_set(entry_pos(fresh), attr);
	} else if (r == -ENOENT && !dir_is_complete(c, d)) {
		uint8_t tag = shrink_client_tag(c->shrink, call ? call->client : 0);
		if (dir_admits_negative(c, d, tag)) {
			const struct entry_extra x = {
				.deadline = cache_deadline_for(c, ENT_NEGATIVE, ttl_ms),
				.client = tag,
			};
			fresh = entry_alloc(c, ENT_NEGATIVE, k->name, k->len, hash, &x);
		} else {
			stat_add(thread_stats(c), declined, 1);
			UDC_PROBE(decline, k->dir, call ? call->client : 0);
		}
	}
	if (fresh)
		fresh->dir = d;
	return fresh;
}

/* A current entry for k, copied out under s->lock: 0, -ENOENT, or 1 (none). */
static int cached_answer_locked(struct udc_cache *c, uint64_t hash, const struct name_key *k,
				struct udc_attr *out, struct value_out *vo)
{
	lock_assert_held(&stripe_of(c, hash)->lock);
	int r = 1;

	rcu_read_lock();
	struct udc_entry *e = entry_find_rcu(c, hash, k);
	if (e && entry_answers(c, e)) {
		r = e->kind == ENT_POSITIVE ? 0 : -ENOENT;
		if (r == 0 && out)
			pos_attr_copy(out, (const struct udc_pos *)e);
		if (r == 0)
			pos_value_copy(vo, (const struct udc_pos *)e);
	}
	rcu_read_unlock();
	return r;
}

/*
 * Under s->lock: the answer that landed since the lockless lookup, or that
 * of a call in flight (joined and waited for), unless a mutation made that
 * call stale (a resolve that starts after a mutation must not get the
 * answer from before it).  Returns the answer (0, -ENOENT, the backend's
 * error, -EDEADLK for a backend resolving its own name), or 1: no answer,
 * the caller asks the backend itself.
 */
static int resolve_join_locked(struct udc_cache *c, struct stripe *s, struct udc_dir *d,
			       uint64_t hash, const struct name_key *k, struct udc_attr *out,
			       struct value_out *vo, unsigned *src)
{
	lock_assert_held(&s->lock);
	for (;;) {
		int r = cached_answer_locked(c, hash, k, out, vo);
		*src = UDC_FROM_CACHE;
		if (r <= 0)
			return r;
		struct inflight *other = inflight_find_locked(s, hash, k);
		if (!other || other->stale || other->gen != dir_gen(d))
			return 1;
		if (pthread_equal(other->owner, pthread_self()))
			return -EDEADLK;   /* the backend resolving this name asked for it */
		r = inflight_wait_locked(s, other, out, vo);
		*src = UDC_FROM_SHARED;
		if (r != INFLIGHT_ABANDONED)
			return r;
	}
}

static int resolve_miss(struct udc_cache *c, struct udc_dir *d, udc_ino dir, const char *name,
			size_t len, uint64_t hash, const struct udc_call *call, struct udc_attr *out,
			struct value_out *vo, unsigned *src)
{
	const struct name_key k = name_key_of(c, dir, name, len);
	struct stripe *s = stripe_of(c, hash);
	int r;

	/* @d: dir's object, pinned by the lookup's miss; NULL when the cache
	 * had none, which is made now.  Pinned until the answer is in. */
	if (!d)
		d = dir_get(c, dir);
	if (!d)
		return -ENOMEM;

	udc_mutex_lock(&s->lock);
	r = resolve_join_locked(c, s, d, hash, &k, out, vo, src);
	if (r != 1)
		goto unlock;
	*src = UDC_FROM_BACKEND;
	unsigned char value[UDC_VALUE_MAX];
	struct inflight ph = {
		.hash = hash, .dir = dir, .name = name, .len = len,
		.gen = dir_gen(d),
		.owner = pthread_self(),
		.value = { .buf = value, .room = sizeof(value) },
	};
	cds_list_add(&ph.link, &s->inflight);
	udc_mutex_unlock(&s->lock);

	struct owner_exit oe = { .c = c, .s = s, .ph = &ph, .d = d };
	struct udc_attr attr = { 0 };
	uint32_t ttl_ms = 0;
	r = backend_lookup(c, &oe, &k, call, &attr, &ttl_ms);

	/* Allocate what caching the answer needs before taking the lock. */
	struct udc_entry *fresh = answer_entry(c, d, &k, hash, r, &attr, &ph.value, ttl_ms, call);
	/* A directory's record of its parent, if it has one (dir_learn). */
	struct udc_dir *child = r == 0 && attr.type == UDC_TYPE_DIR ? dir_find(c, attr.ino) : NULL;
	if (fresh)
		fresh->gen = ph.gen;

	udc_mutex_lock(&s->lock);
	bool stale = ph.stale || ph.gen != dir_gen(d), pin_given = false;
	if (stale && (r == 0 || r == -ENOENT))
		stat_add(thread_stats(c), stale_answers, 1);
	if (!stale && fresh) {
		/* Our pin on d may become the entry's (d stays ours until the unlock) */
		pin_given = entry_publish_locked(c, fresh, hash, &k, true);
		fresh = NULL;
		if (child)
			dir_learn(c, child, d, attr.cookie);
	} else if (r == 0) {
		dir_drop_note(d);   /* an existing name not cached: a fill of d fails */
	}
	inflight_finish_locked(s, &ph, r, &attr);
	udc_mutex_unlock(&s->lock);
	if (fresh)
		entry_free_now(c, fresh);   /* never published */
	if (child)
		dir_put(c, child);
	if (!pin_given)
		dir_put(c, d);
	if (r == 0 && out)
		*out = attr;
	if (r == 0 && vo)
		value_copy_out(vo, value, ph.value.len);
	shrink_after_call(c->shrink);
	return r;

unlock:
	udc_mutex_unlock(&s->lock);
	dir_put(c, d);
	return r;
}

/* resolve_name() with the caller's stats slot, inline into udc_resolve and
 * udc_resolve_value: a hit is then a lookup's (engine/hit.h). */
static inline __attribute__((always_inline)) int
resolve_name_inline(struct udc_cache *c, struct thread_stats *ts, udc_ino dir, const char *name,
		    size_t len, const struct udc_call *call, struct udc_attr *out,
		    struct value_out *vo, unsigned *src)
{
	unsigned ignored;
	int r;

	if (!src)
		src = &ignored;
	*src = UDC_FROM_CACHE;
	if (vo)
		vo->len = 0;
	if (name_is_dotdot(name, len)) {
		r = lookup_dotdot(c, dir, out);
		if (r == UDC_POSITIVE)
			return 0;
		UDC_PROBE(resolve_miss, dir, name, len);
		*src = UDC_FROM_BACKEND;
		return c->backend ? resolve_dotdot(c, dir, call, out) : -EAGAIN;
	}
	uint64_t hash = hash_name(&c->key, dir, name, len);
	struct udc_dir *d = NULL;   /* pinned by the lookup's miss, for the backend's */
	r = lookup_name_inline(c, ts, dir, name, len, hash, out, vo, c->backend ? &d : NULL);
	if (r < 0)
		return r;   /* a '/' or NUL in the name (the checks' order: call_check) */
	if (r != UDC_MISS)
		return answer_of(r);
	UDC_PROBE(resolve_miss, dir, name, len);
	if (!c->backend)
		return -EAGAIN;
	return resolve_miss(c, d, dir, name, len, hash, call, out, vo, src);
}

int resolve_name(struct udc_cache *c, udc_ino dir, const char *name, size_t len,
		 const struct udc_call *call, struct udc_attr *out, struct value_out *vo,
		 unsigned *src)
{
	return resolve_name_inline(c, thread_stats(c), dir, name, len, call, out, vo, src);
}

int udc_resolve(udc_cache *c, udc_ino dir, const char *name, size_t len,
		const struct udc_call *call, struct udc_attr *out)
{
	int r = call_check_len(c, dir, name, len);   /* lookup_name scans the bytes */

	if (r)
		return r;
	struct thread_stats *ts = thread_enter_stats(c);
	return resolve_name_inline(c, ts, dir, name, len, call, out, NULL, NULL);
}

int udc_resolve_value(udc_cache *c, udc_ino dir, const char *name, size_t len,
		      const struct udc_call *call, struct udc_attr *out, void *value,
		      size_t *value_len, unsigned *source)
{
	struct value_out vo;
	int r = value_call_check(&vo, value, value_len, c, dir, name, len);

	if (r)
		return r;
	struct thread_stats *ts = thread_enter_stats(c);
	r = resolve_name_inline(c, ts, dir, name, len, call, out, &vo, source);
	*value_len = vo.len;
	return r;
}
