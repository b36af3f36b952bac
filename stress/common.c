/* SPDX-License-Identifier: MIT */
/*
 * stress/common.c - what every udc-stress workload uses.
 *
 * Owns: the messages (die, usage_error, rc_name), the clock helpers, the
 * report (aligned text or one JSON object, warnings, the udc_stats dump)
 * and the memory readings (RSS, bytes_used).  Factored out of udc-stress.c
 * so that policy.c's workloads print the same machine-readable report; the
 * declarations are in stress.h.
 *
 * Locking: none.  A struct report belongs to the thread that prints it
 * (main); stdout is written by that thread only while a report is open.
 * rss_bytes() and cache_bytes() may be called from any thread (each opens
 * its own FILE; udc_stats_get takes no lock lookups take).
 *
 * Ordering: none (no atomics here).
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif

#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/utsname.h>
#include <time.h>
#include <unistd.h>

#include "stress/stress.h"

/* ---------------------------------------------------------------------- */
/* Messages */

void die(const char *fmt, ...)
{
	va_list ap;

	fputs("udc-stress: ", stderr);
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputc('\n', stderr);
	exit(1);
}

void usage_error(const char *fmt, ...)
{
	va_list ap;

	fputs("udc-stress: ", stderr);
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputs("\nTry 'udc-stress --help'.\n", stderr);
	exit(2);
}

const char *rc_name(int rc)
{
	switch (rc) {
	case UDC_MISS:
		return "UDC_MISS";
	case UDC_POSITIVE:
		return "UDC_POSITIVE";
	case UDC_NEGATIVE:
		return "UDC_NEGATIVE";
	default:
		return rc < 0 ? strerror(-rc) : "an unknown value";
	}
}

/* ---------------------------------------------------------------------- */
/* Time */

double now_sec(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

void sleep_until(const struct timespec *deadline)
{
	int err;

	do
		err = clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, deadline, NULL);
	while (err == EINTR);
	if (err)
		die("clock_nanosleep: %s", strerror(err));
}

/* ---------------------------------------------------------------------- */
/* Report: the same calls print aligned text or one JSON object. */

static void json_string(const char *s)
{
	putchar('"');
	for (; *s; s++) {
		unsigned char ch = (unsigned char)*s;

		if (ch == '"' || ch == '\\')
			printf("\\%c", ch);
		else if (ch < 0x20)
			printf("\\u%04x", ch);
		else
			putchar(ch);
	}
	putchar('"');
}

/* A member's key, or (key NULL) an array element's separator. */
static void rep_key(struct report *r, const char *key)
{
	printf("%s\n%*s", r->need_comma ? "," : "", 2 * r->depth, "");
	if (key) {
		json_string(key);
		fputs(": ", stdout);
	}
	r->need_comma = true;
}

static void rep_label(struct report *r, const char *label)
{
	char buf[sizeof(r->prefix) + 128];

	snprintf(buf, sizeof(buf), "%s%s", r->prefix, label);
	printf("%-26s ", buf);
}

#ifndef UDC_BUILD_TYPE
#define UDC_BUILD_TYPE "unknown build type"
#endif
#if defined(__SANITIZE_ADDRESS__)
#define UDC_BUILD_SANITIZER ", ASan"
#elif defined(__SANITIZE_THREAD__)
#define UDC_BUILD_SANITIZER ", TSan"
#else
#define UDC_BUILD_SANITIZER ""
#endif
#if defined(__clang__)
#define UDC_BUILD_COMPILER "clang " __clang_version__
#elif defined(__GNUC__)
#define UDC_BUILD_COMPILER "gcc " __VERSION__
#else
#define UDC_BUILD_COMPILER "unknown compiler"
#endif

static struct build_info build;
static pthread_once_t build_once = PTHREAD_ONCE_INIT;

/* The CPU model of /proc/cpuinfo, or "unknown CPU". */
static void cpu_model(char *buf, size_t size)
{
	FILE *f = fopen("/proc/cpuinfo", "r");
	char line[256];

	snprintf(buf, size, "unknown CPU");
	if (!f)
		return;
	while (fgets(line, sizeof(line), f)) {
		char *colon = strchr(line, ':');
		if (strncmp(line, "model name", 10) || !colon)
			continue;
		colon += 1 + (colon[1] == ' ');
		colon[strcspn(colon, "\n")] = '\0';
		snprintf(buf, size, "%s", colon);
		break;
	}
	fclose(f);
}

static void build_info_fill(void)
{
	struct utsname u;
	time_t now = time(NULL);
	struct tm tm;
	char cpu[128];

	build.version = udc_version();
	build.build = UDC_BUILD_TYPE ", " UDC_BUILD_COMPILER UDC_BUILD_SANITIZER;
	gmtime_r(&now, &tm);
	strftime(build.date, sizeof(build.date), "%Y-%m-%dT%H:%M:%SZ", &tm);
	cpu_model(cpu, sizeof(cpu));
	if (uname(&u))
		snprintf(u.release, sizeof(u.release), "?");
	snprintf(build.machine, sizeof(build.machine), "%ld x %s, %s %s",
		 sysconf(_SC_NPROCESSORS_ONLN), cpu, u.sysname, u.release);
}

const struct build_info *build_info(void)
{
	pthread_once(&build_once, build_info_fill);
	return &build;
}

void rep_begin(struct report *r, bool json)
{
	const struct build_info *b = build_info();

	memset(r, 0, sizeof(*r));
	r->json = json;
	if (json) {
		putchar('{');
		r->depth = 1;
	}
	rep_obj_begin(r, "build", "build.");
	rep_str(r, "version", "udcache", b->version);
	rep_str(r, "build", "build", b->build);
	rep_str(r, "date", "date", b->date);
	rep_str(r, "machine", "machine", b->machine);
	rep_obj_end(r);
}

void rep_u64(struct report *r, const char *key, const char *label, uint64_t v)
{
	if (r->json) {
		rep_key(r, key);
		printf("%" PRIu64, v);
	} else {
		rep_label(r, label);
		printf("%" PRIu64 "\n", v);
	}
}

void rep_i64(struct report *r, const char *key, const char *label, int64_t v)
{
	if (r->json) {
		rep_key(r, key);
		printf("%" PRId64, v);
	} else {
		rep_label(r, label);
		printf("%" PRId64 "\n", v);
	}
}

void rep_hex(struct report *r, const char *key, const char *label, uint64_t v)
{
	if (r->json) {
		/* JSON numbers lose precision past 2^53: give it as a string. */
		char buf[32];

		snprintf(buf, sizeof(buf), "0x%016" PRIx64, v);
		rep_key(r, key);
		json_string(buf);
	} else {
		rep_label(r, label);
		printf("0x%016" PRIx64 "\n", v);
	}
}

void rep_f64(struct report *r, const char *key, const char *label, double v, int prec)
{
	if (r->json) {
		rep_key(r, key);
		if (isfinite(v))
			printf("%.*f", prec, v);
		else
			fputs("null", stdout);
	} else {
		rep_label(r, label);
		printf("%.*f\n", prec, v);
	}
}

void rep_str(struct report *r, const char *key, const char *label, const char *v)
{
	if (r->json) {
		rep_key(r, key);
		json_string(v);
	} else {
		rep_label(r, label);
		printf("%s\n", v);
	}
}

void rep_bool(struct report *r, const char *key, const char *label, bool v)
{
	if (r->json) {
		rep_key(r, key);
		fputs(v ? "true" : "false", stdout);
	} else {
		rep_label(r, label);
		puts(v ? "yes" : "no");
	}
}

/* A nested object; in text its members' labels get the prefixes of every open object. */
void rep_obj_begin(struct report *r, const char *key, const char *prefix)
{
	if (r->json) {
		rep_key(r, key);
		putchar('{');
		r->need_comma = false;
		r->depth++;
	} else {
		size_t len = strlen(r->prefix);

		if (r->text_depth >= REP_MAX_DEPTH)
			die("report: objects nested deeper than %d", REP_MAX_DEPTH);
		r->prefix_len[r->text_depth++] = len;
		snprintf(r->prefix + len, sizeof(r->prefix) - len, "%s", prefix);
	}
}

void rep_obj_end(struct report *r)
{
	if (r->json) {
		r->depth--;
		printf("\n%*s}", 2 * r->depth, "");
		r->need_comma = true;
	} else if (r->text_depth > 0) {
		r->prefix[r->prefix_len[--r->text_depth]] = '\0';
	}
}

void rep_arr_begin(struct report *r, const char *key)
{
	if (r->json) {
		rep_key(r, key);
		putchar('[');
		r->need_comma = false;
		r->depth++;
	}
}

void rep_arr_end(struct report *r)
{
	if (r->json) {
		r->depth--;
		printf("\n%*s]", 2 * r->depth, "");
		r->need_comma = true;
	}
}

/* A warning: a WARNING line in text; in JSON, the "warnings" array and stderr. */
void rep_warn(struct report *r, const char *fmt, ...)
{
	char buf[256];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(buf, sizeof(buf), fmt, ap);
	va_end(ap);
	if (!r->json) {
		printf("WARNING: %s\n", buf);
		return;
	}
	fprintf(stderr, "udc-stress: WARNING: %s\n", buf);
	if (r->nr_warnings < MAX_WARNINGS)
		snprintf(r->warnings[r->nr_warnings++], sizeof(r->warnings[0]), "%s", buf);
}

void rep_end(struct report *r)
{
	if (!r->json)
		return;
	rep_key(r, "warnings");
	putchar('[');
	for (int i = 0; i < r->nr_warnings; i++) {
		if (i)
			fputs(", ", stdout);
		json_string(r->warnings[i]);
	}
	puts("]\n}");
}

/*
 * Every field of struct udc_stats, declared once: X(field, meaning).
 * The report and the JSON keys are generated from this list.
 */
#define STRESS_UDC_STATS(X)                                                   \
	X(lookups, "udc_lookup calls + name lookups inside resolve/walk")     \
	X(hits_positive, "lookups answered positive")                         \
	X(hits_negative, "lookups answered negative")                         \
	X(misses, "lookups the cache knew nothing about")                     \
	X(backend_calls, "backend lookups made")                              \
	X(nr_positive, "positive entries held now")                           \
	X(nr_negative, "negative entries held now")                           \
	X(evictions, "entries reclaimed, every reason")                       \
	X(bytes_used, "bytes the cache holds now, all overhead included")     \
	X(bytes_limit, "the memory limit")                                    \
	X(membarrier, "1: RCU readers use sys_membarrier; 0: slow fallback")  \
	X(nr_dirs, "directory objects held now")                              \
	X(stale_answers, "backend answers returned but not cached")           \
	X(walk_retries, "walks redone after a rename or rmdir")               \
	X(entries_moved, "entries moved between slab pages by compaction")    \
	X(entries_promoted, "moved from probation to main: hit before swept") \
	X(refaults, "names re-created while their eviction's ghost was kept") \
	X(negatives_aged, "negatives evicted by negative_max_age_ms")         \
	X(negatives_declined, "negatives not kept: directory bound, client share") \
	X(throttled, "calls that waited for reclaim: they outran it")

void rep_udc_stats(struct report *r, const struct udc_stats *st, uint64_t rss)
{
	rep_obj_begin(r, "stats", "stats.");
#define X(field, meaning)                      \
	rep_u64(r, #field, #field, st->field); \
	if (&st->field == &st->bytes_used)     \
		rep_u64(r, "rss", "rss (process, with the stats)", rss);
	STRESS_UDC_STATS(X)
#undef X
	rep_obj_end(r);
	if (st->membarrier == 0)
		rep_warn(r, "stats.membarrier == 0: the kernel offers no membarrier, RCU readers "
			    "use the slow fallback (reads cost ~40x more); these numbers are not "
			    "representative");
}

/* ---------------------------------------------------------------------- */
/* Memory readings */

uint64_t rss_bytes(void)
{
	unsigned long size, resident;
	FILE *f = fopen("/proc/self/statm", "r");

	if (!f)
		die("/proc/self/statm: %s", strerror(errno));
	if (fscanf(f, "%lu %lu", &size, &resident) != 2)
		die("/proc/self/statm: unexpected contents");
	fclose(f);
	return (uint64_t)resident * (uint64_t)sysconf(_SC_PAGESIZE);
}

uint64_t cache_bytes(udc_cache *c)
{
	struct udc_stats st = { .size = sizeof(st) };

	udc_stats_get(c, &st);
	return st.bytes_used;
}
