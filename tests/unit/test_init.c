/*
** test_init.c: gnn_init_uniform (runtime/init.c).
**
** Each value is the formula's, bit for bit, from gnn_philox_uniform on
** init's stream (bit 31 | index); values lie in [-bound, bound); over
** 2^20 draws the mean is within 5 standard errors of 0 and the variance
** within 1% of bound^2 / 3; the same call gives the same bits, a shorter
** call their prefix, another seed or index other values; n = 0 writes
** nothing; a bound of 0 gives zeros.
** Usage: test_init
*/
#include "rtcheck.h"

#include <math.h>
#include <stdint.h>

#include "../../runtime/philox.h"

enum { N = 1 << 20 };

int
main(void)
{
	float *a = malloc(N * sizeof *a), *b = malloc(N * sizeof *b);
	const double bound = 0.125 * sqrt(6.0 / 160);   /* a Glorot-style bound, not a power of two */
	double sum = 0, sq = 0, mean, var;
	float lo = INFINITY, hi = -INFINITY, fb = (float)bound;
	int64_t diff;

	gnn_init_uniform(a, N, bound, 1234, 7);
	for (int64_t t = 0; t < N; t++) {
		lo = a[t] < lo ? a[t] : lo;
		hi = a[t] > hi ? a[t] : hi;
		sum += a[t];
		sq += (double)a[t] * a[t];
	}
	mean = sum / N;
	var = sq / N - mean * mean;
	CHECK(lo >= -fb && hi < fb);
	CHECK(lo < -0.99 * fb && hi > 0.99 * fb);   /* the whole range is used */
	CHECK(fabs(mean) < 5 * bound / sqrt(3.0 * N));
	CHECK(fabs(var / (bound * bound / 3) - 1) < 0.01);
	printf("mean %.3g (bound %.4g), variance / (bound^2/3) = %.5f\n", mean, bound, var / (bound * bound / 3));

	/* the formula, element by element */
	diff = 0;
	for (int64_t t = 0; t < N; t += 997) {
		float u = gnn_philox_uniform(1234, 0, 0x80000000u | 7, (uint64_t)t);
		diff += a[t] != (2.0f * u - 1.0f) * fb;
	}
	CHECK(diff == 0);

	/* determinism, and a prefix whatever n is */
	gnn_init_uniform(b, N, bound, 1234, 7);
	CHECK(memcmp(a, b, N * sizeof *a) == 0);
	memset(b, 0, N * sizeof *b);
	gnn_init_uniform(b, 1000, bound, 1234, 7);
	CHECK(memcmp(a, b, 1000 * sizeof *a) == 0);
	CHECK(b[1000] == 0);
	gnn_init_uniform(b, 0, bound, 1234, 7);
	CHECK(memcmp(a, b, 1000 * sizeof *a) == 0);

	/* other seeds and indices: other streams (about none equal) */
	gnn_init_uniform(b, 4096, bound, 1235, 7);
	diff = 0;
	for (int t = 0; t < 4096; t++)
		diff += a[t] == b[t];
	CHECK(diff < 8);
	gnn_init_uniform(b, 4096, bound, 1234, 8);
	diff = 0;
	for (int t = 0; t < 4096; t++)
		diff += a[t] == b[t];
	CHECK(diff < 8);
	/* init's stream is not dropout's stream of the same number */
	CHECK(a[0] != (2.0f * gnn_philox_uniform(1234, 0, 7, 0) - 1.0f) * fb);

	gnn_init_uniform(b, 16, 0, 1, 0);
	for (int t = 0; t < 16; t++)
		CHECK(b[t] == 0);
	free(a);
	free(b);
	return summary();
}
