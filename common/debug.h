/* SPDX-License-Identifier: MIT */
/*
 * common/debug.h - assertion tiers and the panic for impossible failures.
 *
 * UDC_DEBUG (a compile definition, 0..3) selects the tiers:
 *   udc_assert()           >= 1  cheap checks on arguments and states
 *   udc_assert_internal()  >= 2  invariants inside a module
 *   udc_assert_expensive() >= 3  whole-structure validators (engine_check)
 * udc_panic() always aborts with file:line and the reason.
 */
#ifndef UDC_COMMON_DEBUG_H
#define UDC_COMMON_DEBUG_H

#include <stdio.h>
#include <stdlib.h>

#ifndef UDC_DEBUG
#define UDC_DEBUG 0
#endif

#define udc_panic(...)                                                            \
	do {                                                                      \
		fprintf(stderr, "udcache: %s:%d: ", __FILE__, __LINE__);          \
		fprintf(stderr, __VA_ARGS__);                                     \
		fputc('\n', stderr);                                              \
		abort();                                                          \
	} while (0)

#define udc_assert_tier(tier, cond)                                               \
	do {                                                                      \
		if (UDC_DEBUG >= (tier) && !(cond))                               \
			udc_panic("assertion failed: %s", #cond);                 \
	} while (0)

/*
 * Race windows, for tests (UDC_DEBUG builds only; nothing in others):
 * udc_window(name, obj) calls the hook udc_window_<name> if a test set
 * one, at a point where another thread's action would be a race the code
 * must survive.  The hook runs in the calling thread, inside whatever it
 * holds: it may wait (boundedly) for another thread, never call udcache.
 */
#if UDC_DEBUG
#define udc_window(name, obj)                                                     \
	do {                                                                      \
		extern void (*udc_window_##name)(void *);                         \
		if (udc_window_##name)                                            \
			udc_window_##name(obj);                                   \
	} while (0)
#else
#define udc_window(name, obj) \
	do {                  \
	} while (0)
#endif

#define udc_assert(cond) udc_assert_tier(1, cond)
#define udc_assert_internal(cond) udc_assert_tier(2, cond)
#define udc_assert_expensive(cond) udc_assert_tier(3, cond)

#endif
