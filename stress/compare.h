/* SPDX-License-Identifier: MIT */
/*
 * stress/compare.h - the workloads that run against every --impl
 * (stress/compare.c) and the trace replay (stress/replay/).
 *
 * Owns nothing at run time.  Locking and Ordering: see the .c files.
 */
#ifndef UDC_STRESS_COMPARE_H
#define UDC_STRESS_COMPARE_H

#include <stdbool.h>

#include "stress/stress.h"

/* Whether workload is one of compare.c's (hit, trickle, churn, rmdir, rename, mixed). */
bool compare_has(const char *workload);
/* Run opt->workload against opt->impl; the exit status (0, or 1 on a wrong answer). */
int run_compare(const struct options *opt);
/* Replay every --trace against opt->impl, --passes times; 1 on a wrong answer. */
int run_replay(const struct options *opt);

#endif /* UDC_STRESS_COMPARE_H */
