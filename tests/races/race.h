/* SPDX-License-Identifier: MIT */
/*
 * tests/races/race.h - what the race programs share: their random
 * numbers, their command line, their run's end.
 *
 * Owns: nothing (inline helpers).  Locking, Ordering: none.
 */
#ifndef UDC_TESTS_RACE_H
#define UDC_TESTS_RACE_H

#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

/* splitmix64: a thread's own sequence from its seed. */
static inline uint64_t race_splitmix(uint64_t *s)
{
	uint64_t z = (*s += 0x9e3779b97f4a7c15u);
	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9u;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebu;
	return z ^ (z >> 31);
}

/* One "--name N" option: an unsigned, or (seed) a 64-bit value. */
struct race_opt {
	const char *name;
	unsigned *value;
	uint64_t *value64;
};

/* Read argv's options (@opts, ended by a NULL name): 0, or 2 after the
 * usage on stderr. */
static inline int race_args(int argc, char **argv, const struct race_opt *opts)
{
	for (int i = 1; i < argc; i++) {
		const struct race_opt *o = opts;
		while (o->name && (strcmp(argv[i], o->name) || i + 1 >= argc))
			o++;
		if (!o->name) {
			fprintf(stderr, "usage: %s", argv[0]);
			for (o = opts; o->name; o++)
				fprintf(stderr, " [%s N]", o->name);
			fputc('\n', stderr);
			return 2;
		}
		if (o->value64)
			*o->value64 = strtoull(argv[++i], NULL, 0);
		else
			*o->value = (unsigned)strtoul(argv[++i], NULL, 0);
	}
	return 0;
}

/* Sleep @seconds (the run's length), whatever signals come. */
static inline void race_sleep(unsigned seconds)
{
	struct timespec end;

	clock_gettime(CLOCK_MONOTONIC, &end);
	end.tv_sec += seconds;
	while (clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &end, NULL) == EINTR)
		;
}

#endif
