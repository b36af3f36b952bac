/* SPDX-License-Identifier: MIT */
/*
 * common/owner.h - which thread holds a lock, in UDC_DEBUG builds, so that
 * a function that needs the lock held can check that its caller holds it
 * (common/lock.h's mutex, engine/spin.h's spinlocks).
 *
 * Release builds: an empty struct's worth of nothing (the field and its
 * stores are compiled out; owner_mine() is always true).  Debug builds:
 * the holder's pthread_self() is stored after the lock is taken and
 * cleared before it is released, relaxed: only the holder writes it, and
 * a thread reads it to compare with itself, which no other thread's store
 * can make equal.  (pthread_t is an integer on Linux, which this assumes.)
 */
#ifndef UDC_COMMON_OWNER_H
#define UDC_COMMON_OWNER_H

#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>

#include "common/debug.h"

#if UDC_DEBUG
#define LOCK_OWNER_FIELD _Atomic unsigned long owner; /* pthread_self() of the holder, 0: none */
#else
#define LOCK_OWNER_FIELD
#endif

/* @owner: the lock's owner field (LOCK_OWNER_FIELD), or anything in
 * release builds (not evaluated there). */
#if UDC_DEBUG
#define owner_set(owner, held)                                                    \
	/* relaxed: see the file's comment */                                     \
	atomic_store_explicit(owner, (held) ? (unsigned long)pthread_self() : 0, \
			      memory_order_relaxed)
#define owner_mine(owner)                                                                \
	/* relaxed: see the file's comment */                                           \
	(atomic_load_explicit(owner, memory_order_relaxed) == (unsigned long)pthread_self())
#else
#define owner_set(owner, held) ((void)0)
#define owner_mine(owner) true
#endif

/*
 * owner_take/owner_drop: owner_set by a lock's take and release, which
 * also count the locks the thread holds (debug builds), so that a
 * function that may wait for another thread's pass can check that its
 * caller holds none (owner_none_held; always true in release builds).
 */
#if UDC_DEBUG
extern __thread int owner_held_count;
#define owner_take(owner) (owner_set(owner, true), (void)owner_held_count++)
#define owner_drop(owner) ((void)owner_held_count--, owner_set(owner, false))
#define owner_none_held() (owner_held_count == 0)
#else
#define owner_take(owner) ((void)0)
#define owner_drop(owner) ((void)0)
#define owner_none_held() true
#endif

#endif
