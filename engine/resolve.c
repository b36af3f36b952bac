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
 * Probes (engine/probe.h): resolve_miss in resolve_name, backend_call and
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
#include "engine/internal.h"
#include "engine/probe.h"

#include <errno.h>

static int answer_of(int lookup_result)
{
	return lookup_result == UDC_POSITIVE ? 0 : -ENOENT;
}

/* ".." with the parent unknown: ask the backend and record the answer. */
static int resolve_dotdot(struct udc_cache *c, udc_ino dir, const struct udc_call *call,
			  struct udc_attr *out)
{
	struct udc_attr attr;
	struct udc_dir *d = dir_get(c, dir);

	if (!d)
		return -ENOMEM;
	uint32_t gen = atomic_load_explicit(&d->gen, memory_order_acquire);
	stat_add(thread_stats(c), backend_calls, 1);
	UDC_PROBE(backend_call, dir, "..", (size_t)2);
	int r = c->backend->lookup(call ? call->ctx : NULL, dir, "..", 2, &attr);
	if (r > 0 || (r == 0 && (!attr_valid(&attr) || attr.type != UDC_TYPE_DIR)))
		r = -EIO;
	UDC_PROBE(backend_return, dir, r, r ? UDC_INO_NONE : attr.ino);
	struct udc_dir *pd = r ? NULL : dir_get(c, attr.ino);
	if (pd) {
		if (gen == atomic_load_explicit(&d->gen, memory_order_acquire)) {
			atomic_store_explicit(&pd->cookie, attr.cookie, memory_order_relaxed);
			atomic_store_explicit(&d->parent, attr.ino, memory_order_relaxed);
		}
		dir_put(c, pd);
	}
	dir_put(c, d);
	if (r == 0 && out)
		*out = attr;
	return r;
}

/* Wait for ph's owner, with s->lock held; returns ph's answer. */
static int inflight_wait_locked(struct stripe *s, struct inflight *ph, struct udc_attr *out)
{
	ph->waiters++;
	while (!ph->done)
		pthread_cond_wait(&s->cond, &s->lock);
	int r = ph->result;
	if (r == 0 && out)
		*out = ph->attr;
	if (--ph->waiters == 0)
		pthread_cond_broadcast(&s->cond);   /* the owner waits for the last one */
	return r;
}

static int resolve_miss(struct udc_cache *c, udc_ino dir, const char *name, size_t len,
			uint64_t hash, const struct udc_call *call, struct udc_attr *out)
{
	const struct name_key k = { .dir = dir, .name = name, .len = len };
	struct stripe *s = stripe_of(c, hash);
	struct udc_dir *d = dir_get(c, dir);   /* pinned until the answer is in */
	int r;

	if (!d)
		return -ENOMEM;

	pthread_mutex_lock(&s->lock);
	/* An answer may have landed since the lockless lookup. */
	rcu_read_lock();
	struct udc_entry *e = entry_find_rcu(c, hash, &k);
	if (e && e->gen == atomic_load_explicit(&d->gen, memory_order_acquire)) {
		r = e->kind == ENT_POSITIVE ? 0 : -ENOENT;
		if (r == 0 && out) {
			const struct udc_pos *p = (const struct udc_pos *)e;
			*out = pos_attr(p);
		}
		rcu_read_unlock();
		pthread_mutex_unlock(&s->lock);
		dir_put(c, d);
		return r;
	}
	rcu_read_unlock();
	/*
	 * Join a call in flight, unless a mutation made it stale: a resolve
	 * that starts after a mutation must not get the answer from before it.
	 */
	struct inflight *other = inflight_find_locked(s, hash, &k);
	if (other && (other->stale ||
		      other->gen != atomic_load_explicit(&d->gen, memory_order_acquire)))
		other = NULL;
	if (other) {
		r = inflight_wait_locked(s, other, out);
		pthread_mutex_unlock(&s->lock);
		dir_put(c, d);
		return r;
	}
	struct inflight ph = {
		.hash = hash, .dir = dir, .name = name, .len = len,
		.gen = atomic_load_explicit(&d->gen, memory_order_acquire),
	};
	cds_list_add(&ph.link, &s->inflight);
	pthread_mutex_unlock(&s->lock);

	stat_add(thread_stats(c), backend_calls, 1);
	struct udc_attr attr = { 0 };
	UDC_PROBE(backend_call, dir, name, len);
	r = c->backend->lookup(call ? call->ctx : NULL, dir, name, len, &attr);
	if (r > 0 || (r == 0 && !attr_valid(&attr)))
		r = -EIO;   /* the backend broke its contract: report, cache nothing */
	UDC_PROBE(backend_return, dir, r, r ? UDC_INO_NONE : attr.ino);

	/* Allocate what caching the answer needs before taking the lock. */
	struct udc_entry *fresh = NULL;
	struct udc_dir *child = NULL;
	if (r == 0) {
		fresh = entry_alloc(c, ENT_POSITIVE, name, len, hash);
		if (fresh) {
			struct udc_pos *p = entry_pos(fresh);
			p->ino = attr.ino;
			p->e.type = attr.type & 0x3f;
			p->cookie = attr.cookie;
		}
		if (attr.type == UDC_TYPE_DIR)
			child = dir_get(c, attr.ino);
	} else if (r == -ENOENT &&
		   !(atomic_load_explicit(&d->flags, memory_order_relaxed) & DIR_COMPLETE)) {
		uint8_t tag = client_tag(call ? call->client : 0);
		if (admit_negative(d) && admit_client(c, tag)) {
			fresh = entry_alloc(c, ENT_NEGATIVE, name, len, hash);
			if (fresh)
				fresh->type = tag & 0x3f;
		} else {
			stat_add(thread_stats(c), declined, 1);
			UDC_PROBE(decline, dir, call ? call->client : 0);
		}
	}
	if (fresh) {
		fresh->dir = d;
		fresh->gen = ph.gen;
	}

	pthread_mutex_lock(&s->lock);
	cds_list_del(&ph.link);
	bool stale = ph.stale || ph.gen != atomic_load_explicit(&d->gen, memory_order_acquire);
	if (stale && (r == 0 || r == -ENOENT))
		stat_add(thread_stats(c), stale_answers, 1);
	if (!stale && fresh) {
		entry_publish_locked(c, fresh, hash, &k);
		fresh = NULL;
		if (child)
			dir_learn(child, dir, attr.cookie);
	}
	ph.result = r;
	ph.attr = attr;
	ph.done = true;
	if (ph.waiters) {
		pthread_cond_broadcast(&s->cond);
		while (ph.waiters)
			pthread_cond_wait(&s->cond, &s->lock);
	}
	pthread_mutex_unlock(&s->lock);
	if (fresh)
		entry_free_now(c, fresh);   /* never published */
	if (child)
		dir_put(c, child);
	dir_put(c, d);
	if (r == 0 && out)
		*out = attr;
	reclaim_inline(c);
	return r;
}

int resolve_name(struct udc_cache *c, udc_ino dir, const char *name, size_t len,
		 const struct udc_call *call, struct udc_attr *out)
{
	int r;

	if (name_is_dotdot(name, len)) {
		r = lookup_dotdot(c, dir, out);
		if (r == UDC_POSITIVE)
			return 0;
		UDC_PROBE(resolve_miss, dir, name, len);
		return c->backend ? resolve_dotdot(c, dir, call, out) : -EAGAIN;
	}
	uint64_t hash = hash_name(&c->key, dir, name, len);
	r = lookup_name(c, dir, name, len, hash, out);
	if (r != UDC_MISS)
		return answer_of(r);
	UDC_PROBE(resolve_miss, dir, name, len);
	if (!c->backend)
		return -EAGAIN;
	return resolve_miss(c, dir, name, len, hash, call, out);
}

int udc_resolve(udc_cache *c, udc_ino dir, const char *name, size_t len,
		const struct udc_call *call, struct udc_attr *out)
{
	int r = call_check(c, dir, name, len);

	if (r)
		return r;
	thread_enter();
	return resolve_name(c, dir, name, len, call, out);
}
