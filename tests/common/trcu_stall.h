/* SPDX-License-Identifier: MIT */
/*
 * tests/common/trcu_stall.h - hold liburcu's call_rcu thread, as on a
 * machine where it is starved.
 *
 * tc_rcu_stall_begin queues a callback that blocks the (default) call_rcu
 * thread until tc_rcu_stall_end: every callback queued behind it (the
 * deferred frees, a caller's wait for them) waits until then.  Begin
 * returns once the callback runs.  One stall at a time per process.
 */
#ifndef UDC_TESTS_TRCU_STALL_H
#define UDC_TESTS_TRCU_STALL_H

void tc_rcu_stall_begin(void);
void tc_rcu_stall_end(void);

#endif
