/* SPDX-License-Identifier: MIT */
/*
 * tests/diffstress/diffstress.h - the concurrent differential stress
 * (diffstress.c), for udc-diffstress and udc-stress --workload diff.
 */
#ifndef UDC_DIFFSTRESS_H
#define UDC_DIFFSTRESS_H

#include <stddef.h>
#include <stdint.h>

struct diffstress_options {
	unsigned threads;
	double seconds;
	size_t memory;        /* the cache's limit: small, so that eviction races everything */
	uint64_t seed;        /* worker i's PRNG starts from seed + i */
	uint32_t flags;       /* UDC_CFG_* */
	unsigned delay_us;    /* a backend answer ages up to this long (stale-answer races) */
};

extern const struct diffstress_options diffstress_defaults;

/* One run (once per process): 0 no violation, 1 violations, 2 bad options
 * or no resources.  Prints its seed, a summary and every violation. */
int diffstress_run(const struct diffstress_options *o);

#endif
