/* SPDX-License-Identifier: MIT */
/*
 * common/probe.h - USDT (sys/sdt.h) probes, provider "udcache".
 *
 * UDC_PROBE(name, args...) marks a static probe point: one nop in the
 * code and a note in the ELF's .note.stapsdt section, which perf (perf
 * probe -x <binary> sdt_udcache:<name>), bpftrace (usdt:<binary>:udcache:
 * <name>) and SystemTap read.  With no tracer attached the nop is all that
 * runs, but the arguments are asm operands, evaluated every time: pass
 * values the code has at hand, or a load or two on a path that is not the
 * hit path (lookup.c has no probe).  With -DUDC_NO_PROBES (CMake sets it
 * when sys/sdt.h is missing or UDC_PROBES is OFF) a probe is no code.
 *
 * Self-contained (no engine types), so that slab/ includes it too.  How
 * to use the probes: docs/PROFILING.md, which has this list as a table.
 *
 * The probes.  Every dir/ino is a udc_ino (u64; 0 = none), name a char *
 * to len bytes, not NUL-terminated (bpftrace: str(name, len)), kind 0
 * negative / 1 positive.
 *
 *   resolve_miss(dir, name, len)      resolve found no current answer, ".."
 *                                     with the parent unknown included
 *                                     (resolve.c resolve_name; not "miss":
 *                                     perf's event parser takes that word
 *                                     for a cache event's, and -e
 *                                     sdt_udcache:miss would not parse)
 *   backend_call(dir, name, len)      just before backend->lookup
 *   backend_return(dir, result, ino)  just after it: result as the cache
 *                                     takes it (0, -ENOENT, -errno; a broken
 *                                     contract is -EIO), ino 0 unless 0
 *                                     (resolve.c resolve_miss, resolve_dotdot)
 *   insert(kind, dir, name, len, replaced)  an entry published (udc_add,
 *                                     udc_add_negative, a resolve answer, a
 *                                     rename's new name, an unlink's
 *                                     negative); replaced: 1 if an entry
 *                                     went (mutate.c entry_publish_locked)
 *   decline(dir, client)              a negative not admitted: directory
 *                                     bound or client share (resolve.c,
 *                                     mutate.c udc_add_negative)
 *   evict(reason, kind, bytes, dir, name, len)  an entry reclaimed; reason:
 *                                     enum udc_probe_evict, bytes: its slab
 *                                     slot (sweep.c evict_entry; compact.c
 *                                     entry_move drops a stale one)
 *   promote(kind, dir, name, len, hits)  probation -> main, hits left after
 *                                     the one spent (sweep.c promote_move)
 *   refault(kind)                     a new entry's ghost was remembered: it
 *                                     starts in main (sweep.c ghost_take)
 *   sweep_batch(mode, kind, cls, units, evicted, bytes)  one slab_sweep of
 *                                     one class that did work; mode: enum
 *                                     udc_probe_sweep; units: objects
 *                                     visited + 32 a page; evicted entries
 *                                     and their slot bytes (sweep.c)
 *   reclaim(source, wanted, evicted)  one eviction pass; source: enum
 *                                     udc_probe_reclaim; bytes asked for,
 *                                     slot bytes evicted (reclaim.c)
 *   compact_page(slab, cls, size, objects, moved, dropped)  one sparse page
 *                                     slab_compact worked on (emptied unless
 *                                     the budget ran out): slab id (a
 *                                     cache's negative slab; its positive
 *                                     one is id + 1), class, slot size,
 *                                     slots visited (live or dead, a free
 *                                     pending), moved, dropped as stale
 *                                     (slab/compact.c)
 *   compact_batch(units, dry, live, pages)  one batch under shrink_lock:
 *                                     work units, dry (a whole round found
 *                                     nothing more), live entry bytes and
 *                                     entry slab bytes after it
 *                                     (shrink/compact.c compact_step,
 *                                     compact_round)
 *   invalidate(kind, dir, entries)    kind: enum udc_probe_inval; NAME:
 *                                     entries 1 if one was cached; the
 *                                     others: entries left to the garbage
 *                                     sweep (an estimate; 0 with no object)
 *                                     (mutate.c udc_invalidate, dir_forget)
 */
#ifndef UDC_COMMON_PROBE_H
#define UDC_COMMON_PROBE_H

/* evict's reason */
enum udc_probe_evict {
	UDC_PROBE_EVICT_PROBATION = 0, /* cold in probation (or no room to promote) */
	UDC_PROBE_EVICT_MAIN = 1,      /* main's clock found it with no hits left */
	UDC_PROBE_EVICT_AGED = 2,      /* a negative past negative_max_age_ms */
	UDC_PROBE_EVICT_STALE = 3,     /* its directory's generation moved on */
	UDC_PROBE_EVICT_BOUND = 4,     /* an unhit negative of a directory past its bound */
};

/* sweep_batch's mode */
enum udc_probe_sweep {
	UDC_PROBE_SWEEP_RECLAIM = 0, /* memory pressure (sweep_reclaim) */
	UDC_PROBE_SWEEP_AGE = 1,     /* negatives' age (sweep_age) */
	UDC_PROBE_SWEEP_STALE = 2,   /* garbage of invalidated dirs (sweep_garbage) */
	UDC_PROBE_SWEEP_TRIM = 3,    /* directories past their bound (sweep_trim) */
};

/* reclaim's source */
enum udc_probe_reclaim {
	UDC_PROBE_RECLAIM_INLINE = 0,	/* a mutating call, ahead of the limit */
	UDC_PROBE_RECLAIM_THROTTLE = 1, /* a mutating call past limit + slack/2 */
	UDC_PROBE_RECLAIM_THREAD = 2,	/* the reclaim thread */
	UDC_PROBE_RECLAIM_SHRINK = 3,	/* udc_shrink */
};

/* invalidate's kind */
enum udc_probe_inval {
	UDC_PROBE_INVAL_NAME = 0,	  /* udc_invalidate (dir is the parent) */
	UDC_PROBE_INVAL_DIR = 1,	  /* udc_invalidate_dir */
	UDC_PROBE_INVAL_RMDIR = 2,	  /* udc_rmdir: the removed directory */
	UDC_PROBE_INVAL_RENAMED_OVER = 3, /* udc_rename: a directory replaced at the target */
};

#ifndef UDC_NO_PROBES
/*
 * No immediate operands ("n" in sdt.h's default "nor"): perf probe (6.1)
 * cannot read an argument recorded as "$3" and drops it, and a probe with
 * several sites whose argument lists then differ fails to be added ("File
 * exists").  A constant argument costs a register load instead.  For
 * the same reason every site of a probe passes the same types (perf adds
 * all the sites under one event, and the kernel refuses sites whose
 * argument types differ): cast a constant to the type the others pass.
 */
#if (defined __x86_64__ || defined __i386__) && !defined STAP_SDT_ARG_CONSTRAINT
#define STAP_SDT_ARG_CONSTRAINT or
#endif
#include <sys/sdt.h>
/* UDC_PROBE(name, a1, ..., an) is STAP_PROBEn(udcache, name, a1, ..., an)
 * (DTRACE_PROBEn is the same macro), for 1 <= n <= 12. */
#define UDC_PROBE_NARG(...) UDC_PROBE_NARG_(__VA_ARGS__, 12, 11, 10, 9, 8, 7, 6, 5, 4, 3, 2, 1, 0)
#define UDC_PROBE_NARG_(a1, a2, a3, a4, a5, a6, a7, a8, a9, a10, a11, a12, n, ...) n
#define UDC_PROBE_CAT(a, b) UDC_PROBE_CAT_(a, b)
#define UDC_PROBE_CAT_(a, b) a##b
#define UDC_PROBE(name, ...) \
	UDC_PROBE_CAT(STAP_PROBE, UDC_PROBE_NARG(__VA_ARGS__))(udcache, name, __VA_ARGS__)
#else
/* Never called: the arguments stay "used" (no unused-variable warnings
 * for values computed only for a probe) and generate no code. */
static inline void udc_probe_none(int unused, ...)
{
	(void)unused;
}
#define UDC_PROBE(name, ...)                            \
	do {                                            \
		if (0)                                  \
			udc_probe_none(0, __VA_ARGS__); \
	} while (0)
#endif

#endif
