/*
** benchutil.h: what the benchmark's C programs (gnnbench.cu, spmm.cu,
** cpu/cpubench.c) share: JSON strings on stdout, the median of a sample
** and integer options.  Header-only
** (static functions), so each program stays one nvcc command.
*/
#ifndef BENCH_BENCHUTIL_H
#define BENCH_BENCHUTIL_H

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

/* s as a JSON string: quotes, backslashes and control bytes escaped (a
** runtime message may hold a path or a quote) */
static void
jstr(const char *s)
{
	putchar('"');
	for (; s && *s; s++) {
		unsigned char c = (unsigned char)*s;
		if (c == '"' || c == '\\')
			printf("\\%c", c);
		else if (c < 0x20)
			printf("\\u%04x", c);
		else
			putchar(c);
	}
	putchar('"');
}

static int
cmpd(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return (x > y) - (x < y);
}

/* an integer option's value, in [lo, 1000000]; else a message naming the
** program and the option, and -1 */
static int
intopt(const char *prog, const char *arg, const char *name, int lo, int *v)
{
	char *end;
	long x;

	errno = 0;
	x = strtol(arg, &end, 10);
	if (errno || *end || end == arg || x < lo || x > 1000000) {
		fprintf(stderr, "%s: bad %s '%s'\n", prog, name, arg);
		return -1;
	}
	*v = (int)x;
	return 0;
}

/* a monotonic clock, in seconds */
static double
now_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

/* the median of v[0..n-1], n > 0 (sorts v) */
static double
median(double *v, int n)
{
	qsort(v, (size_t)n, sizeof *v, cmpd);
	return n % 2 ? v[n / 2] : 0.5 * (v[n / 2 - 1] + v[n / 2]);
}

#endif
