/*
** gemm_speed.c: single-thread GFLOP/s of libgnnrt's gnn_sgemm_rows on the
** dense-transform shapes of the standard models, and where the sparse
** form starts to pay. Not a test; build it against a built tree:
**
**   cc -O2 bench/cpu/gemm_speed.c -Iruntime build/libgnnrt.a -lm -o gemm_speed
**   ./gemm_speed [M [kc [dense|sparse]]]   # GNN_CPU_ISA=avx2 etc. for a lower path
**
** Times are thread CPU time, best of 15, so a busy machine hurts less.
** Compare with torch.mm timed the same way (torch.set_num_threads(1),
** time.thread_time()); docs/codegen.md has the numbers.
*/
#define _POSIX_C_SOURCE 200809L

#include <stdio.h>
#include <stdlib.h>
#include <time.h>

#include "gnnrt.h"

static double
now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
	return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

/* uniform in [-1, 1), a zero with probability 1 - density */
static void
fill(float *x, int64_t n, double density, unsigned *seed)
{
	for (int64_t i = 0; i < n; i++) {
		*seed = *seed * 1664525u + 1013904223u;
		double u = (double)(*seed >> 8) / 16777216.0;
		*seed = *seed * 1664525u + 1013904223u;
		x[i] = u < density ? (float)((double)(*seed >> 8) / 8388608.0 - 1.0) : 0.0f;
	}
}

/* best seconds per call of one product over a few repeats */
static double
timeit(int sparse, int64_t M, int64_t K, int64_t N, const float *A, const float *Bp,
	float *C, int64_t kc)
{
	double best = 1e30;

	for (int r = 0; r < 15; r++) {
		int n = 0;
		double t0 = now(), t;
		do {
			if (sparse)
				gnn_sgemm_rows_sparse(0, M, K, N, A, K, Bp, C, N, 0);
			else
				gnn_sgemm_rows(0, M, K, N, A, K, Bp, C, N, kc, 0);
			n++;
		} while ((t = now() - t0) < 0.03);
		if (t / n < best)
			best = t / n;
	}
	return best;
}

static void
setup(int64_t M, int64_t K, int64_t N, double density, float **A, float **Bp, float **C)
{
	unsigned seed = 12345;
	float *B = malloc((size_t)(K * N + 1) * sizeof(float));

	*A = malloc((size_t)(M * K + 1) * sizeof(float));
	*Bp = aligned_alloc(64, ((size_t)gnn_sgemm_packed_floats(K, N) * sizeof(float) + 64) / 64 * 64);
	*C = malloc((size_t)(M * N + 1) * sizeof(float));
	fill(*A, M * K, density, &seed);
	fill(B, K * N, 1.0, &seed);
	gnn_sgemm_pack(*Bp, B, K, N, N, 1);
	free(B);
}

int
main(int argc, char **argv)
{
	static const int64_t shapes[][2] = {
		{1433, 16}, {3703, 16}, {1433, 64}, {500, 128}, {128, 128},
		{128, 40}, {256, 256}, {16, 7}, {32, 32},
	};
	static const double dens[] = {0.01, 0.02, 0.05, 0.08, 0.1, 0.15, 0.2, 0.3};
	int64_t M = argc > 1 ? atoll(argv[1]) : 8192, kc = argc > 2 ? atoll(argv[2]) : 0;
	float *A, *Bp, *C;

	const char *what = argc > 3 ? argv[3] : "both";

	printf("path %s, M = %lld, kc = %lld\n", gnn_sgemm_isa(), (long long)M, (long long)kc);
	for (size_t s = 0; *what != 's' && s < sizeof shapes / sizeof shapes[0]; s++) {
		int64_t K = shapes[s][0], N = shapes[s][1];
		setup(M, K, N, 1.0, &A, &Bp, &C);
		double t = timeit(0, M, K, N, A, Bp, C, kc);
		printf("%6lld x %4lld @ %4lld x %3lld  %7.1f GFLOP/s\n", (long long)M,
			(long long)K, (long long)K, (long long)N, 2e-9 * (double)(M * K * N) / t);
		free(A), free(Bp), free(C);
	}
	if (*what == 'd')
		return 0;
	printf("sparse form against dense (time ratio; < 1: sparse wins)\n");
	for (int64_t N = 16; N <= 128; N *= 2) {
		printf("  K 1433 N %3lld:", (long long)N);
		for (size_t d = 0; d < sizeof dens / sizeof dens[0]; d++) {
			setup(M, 1433, N, dens[d], &A, &Bp, &C);
			double td = timeit(0, M, 1433, N, A, Bp, C, 0);
			double ts = timeit(1, M, 1433, N, A, Bp, C, 0);
			printf("  %.2f: %.2f", dens[d], ts / td);
			free(A), free(Bp), free(C);
		}
		printf("\n");
	}
	return 0;
}
