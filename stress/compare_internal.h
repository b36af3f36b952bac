/* SPDX-License-Identifier: MIT */
/*
 * stress/compare_internal.h - what the (--impl) workloads' two files share:
 * compare.c (the model store, the operations, the workloads) and
 * compare_run.c (the run loop, the report, replay's report).
 *
 * Owns nothing at run time: the types of a run and its workers, and the
 * calls between the two files.  Locking and Ordering: compare.c's header
 * (the model, the rename tables) and compare_run.c's (the run loop).
 */
#ifndef UDC_STRESS_COMPARE_INTERNAL_H
#define UDC_STRESS_COMPARE_INTERNAL_H

#include <pthread.h>
#include <stdalign.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>

#include "stress/compare.h"
#include "stress/impl.h"
#include "stress/measure.h"

/* The names the workloads use (compare.c's header says which). */
struct names {
	char *bytes; /* name i at bytes + i * stride */
	uint8_t *len;
	uint8_t *negative;
	size_t stride;
	uint64_t n, dirs, nr_negative;
};

struct rename_move {
	_Atomic uint32_t obj, from, to;
};

struct model {
	const struct names *names;
	uint64_t dirs; /* "d<k>" in the root for k < dirs */
	/* rename: single writer (thread 0), see Ordering. */
	uint32_t slots, objs;
	_Atomic int32_t *slot; /* object in slot x, or -1 */
	_Atomic uint32_t *pos; /* slot of object j */
	struct rename_move *log;
	alignas(CACHELINE) _Atomic uint64_t gen;
};

/* The backend's ctx (struct udc_call.ctx): the model and the caller's counters. */
struct be_ctx {
	const struct model *m;
	uint64_t calls;
	const uint8_t *priv; /* mixed: this thread's private file is "p<id>" (0) or "q<id>" (1) */
	unsigned id;
};

struct run;

struct worker {
	alignas(CACHELINE) struct run *run;
	unsigned id;
	pthread_t tid;
	uint64_t rng;
	uint64_t quota; /* operations to do; UINT64_MAX: until stopped */
	uint32_t *seq;	/* hit: the indices to look up */
	struct be_ctx be;
	uint8_t priv; /* mixed: which of its two names the private file has */
	uint64_t churn_n, rmdir_round;
	/* Read by main while running (relaxed). */
	alignas(CACHELINE) _Atomic uint64_t progress;
	/* Results, read by main after pthread_join(). */
	alignas(CACHELINE) uint64_t ops, calls, hits, misses, wrong, unchecked;
	uint64_t t_end;
	char first_wrong[192];
	struct lat_hist lat; /* every timed call */
	struct lat_hist rmdir_lat, inval_lat, rename_lat;
};

struct workload_def {
	const char *name;
	void (*setup)(struct run *r);
	void (*op)(struct worker *w); /* one operation */
	const char *op_unit;	      /* what an operation is, for the report */
};

struct run {
	const struct options *opt;
	const struct impl *impl;
	const struct workload_def *wl;
	void *c;
	struct names names;
	struct model model;
	struct impl_config cfg;
	uint64_t rmdir_negatives;
	pthread_barrier_t start;
	struct stop_flag stop;
	uint64_t rcu_stalls;   /* --rcu-stall: times the call_rcu thread was held */
};

/* The workload called name, or NULL. */
const struct workload_def *compare_workload(const char *name);
/* The model store as a backend: every workload's names (compare.c's header). */
extern const struct udc_backend model_backend;
/* What worker w needs of its workload before the clock starts (hit: its
 * lookup sequence); r's setup has run. */
void compare_worker_prepare(struct worker *w, const struct run *r);
/* Free what the setup and the workers made: the names, the rename tables,
 * the workers' sequences. */
void compare_run_free(struct run *r, struct worker *w, unsigned n);

#endif /* UDC_STRESS_COMPARE_INTERNAL_H */
