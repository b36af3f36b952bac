/* SPDX-License-Identifier: MIT */
/*
 * tests/common/model.h - a tiny in-memory store that serves as a udc_backend.
 *
 * The model holds what a real store would: entries (dir ino, name) -> attr,
 * and objects (ino -> parent, attr, symlink target).  model_backend's lookup
 * and readlink answer from it; they find the model through call->ctx (a
 * struct model *), or, when the cache passes ctx NULL (a NULL struct
 * udc_call), through the last model made in this process.
 *
 * It counts backend calls, can sleep in each call, can fail a given name
 * with an errno, and can hold one call "at the gate": the call reads its
 * answer, says it has entered, and waits until the test releases it (the
 * stale-answer races of tests/engine/test_concurrency.c).
 *
 * Locking: one mutex, m->lock, protects every field but the counters
 * (atomics).  model_lock()/model_unlock() let a test change the store and
 * tell the cache in one critical section, so that no backend call sees the
 * store half way; the *_locked functions need that lock held, the others
 * take it.  Never call into udcache while holding the lock *and* expecting a
 * backend call from the same thread (the backend would deadlock on it).
 *
 * Directories: an entry with type UDC_TYPE_DIR records dir as the parent of
 * attr.ino, and lookup of ".." answers the parent's attr (the root's parent
 * is the root).  The root object is made by model_new().
 */
#ifndef UDC_TEST_MODEL_H
#define UDC_TEST_MODEL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "include/udcache.h"

struct model;

/* Backends over the model: with readlink, and without (walks get -ELOOP). */
extern const struct udc_backend model_backend;
extern const struct udc_backend model_backend_nolink;

/* Make an empty store whose root directory is @root.  Aborts the test on ENOMEM. */
struct model *model_new(udc_ino root);
void model_free(struct model *m);

void model_lock(struct model *m);
void model_unlock(struct model *m);

/* (dir, name) now exists as *attr (replaces).  Returns 0. */
int model_set(struct model *m, udc_ino dir, const char *name, size_t len,
	      const struct udc_attr *attr);
int model_set_locked(struct model *m, udc_ino dir, const char *name, size_t len,
		     const struct udc_attr *attr);
/* Convenience: NUL-terminated name. */
int model_set_s(struct model *m, udc_ino dir, const char *name, const struct udc_attr *attr);

/* Remove (dir, name).  0 or -ENOENT. */
int model_del(struct model *m, udc_ino dir, const char *name, size_t len);
int model_del_locked(struct model *m, udc_ino dir, const char *name, size_t len);

/* Move (odir, oname) to (ndir, nname), replacing the target.  0 or -ENOENT. */
int model_move_locked(struct model *m, udc_ino odir, const char *oname, size_t olen, udc_ino ndir,
		      const char *nname, size_t nlen);
int model_move(struct model *m, udc_ino odir, const char *oname, size_t olen, udc_ino ndir,
	       const char *nname, size_t nlen);

/* Remove every entry of dir (the store side of an rmdir). */
void model_clear_dir_locked(struct model *m, udc_ino dir);

/* What the store says, without counting a backend call: 0 and *out, or -ENOENT. */
int model_get(struct model *m, udc_ino dir, const char *name, size_t len, struct udc_attr *out);
int model_get_locked(struct model *m, udc_ino dir, const char *name, size_t len,
		     struct udc_attr *out);

/* Set the target of symlink @ino (the entry itself is added with model_set). */
void model_set_link(struct model *m, udc_ino ino, const char *target, size_t len);
void model_set_link_s(struct model *m, udc_ino ino, const char *target);

/* Lookups of (dir, name) fail with @err (a negative errno); 0 clears it. */
void model_set_error(struct model *m, udc_ino dir, const char *name, size_t len, int err);

/* Every backend call sleeps @us microseconds first. */
void model_set_delay_us(struct model *m, unsigned us);

/* The next backend lookup of (dir, name) reads its answer, then waits at the
 * gate until model_gate_release(). */
void model_gate_arm(struct model *m, udc_ino dir, const char *name, size_t len);
/* Wait until the armed call has read its answer and is waiting. */
void model_gate_wait_entered(struct model *m);
void model_gate_release(struct model *m);

/* Backend calls so far (each lookup / readlink made by the cache). */
uint64_t model_lookup_calls(struct model *m);
uint64_t model_readlink_calls(struct model *m);
uint64_t model_calls(struct model *m); /* both */
void model_reset_calls(struct model *m);

/* Last ctx the backend was called with (for the ctx pass-through test). */
void *model_last_ctx(struct model *m);

#endif
