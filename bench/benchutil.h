/*
** benchutil.h: what the benchmark's two C programs (gnnbench.cu, spmm.cu)
** share: JSON strings on stdout and the median of a sample.  Header-only
** (static functions), so each program stays one nvcc command.
*/
#ifndef BENCH_BENCHUTIL_H
#define BENCH_BENCHUTIL_H

#include <stdio.h>
#include <stdlib.h>

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

/* the median of v[0..n-1], n > 0 (sorts v) */
static double
median(double *v, int n)
{
	qsort(v, (size_t)n, sizeof *v, cmpd);
	return n % 2 ? v[n / 2] : 0.5 * (v[n / 2 - 1] + v[n / 2]);
}

#endif
