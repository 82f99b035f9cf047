/*
** test_bgemm.c: gnn_bgemm (runtime/hgemm.c), the dense transform with
** bfloat16 weights, on each of its paths: AMX tiles where the CPU has
** them, vdpbf16ps where it has AVX-512 BF16 (GNN_CPU_AMX=0 selects it),
** and the float fallback over gnn_sgemm's avx2 and generic paths
** (GNN_CPU_ISA=avx2, generic select them).
** The test runs itself once per path, as test_gemm does.
**
** The references are independent of the runtime's rounding: a value is
** rounded to bfloat16 with frexp and rint (ties to even) in double. B is
** float32, half of it not bfloat16 values (the call rounds it).
**  - a plain float32 sum over k in order of the rounded operands'
**    products: within 2K units of 2^-24 of sum |a||b| (both are float32
**    chains over the same exact products, in different orders);
**  - the documented order (k pairs, the odd term first, each addition
**    rounded to float32): bit for bit, on both paths (the data has no
**    subnormals, which only vdpbf16ps flushes), but on AMX, whose sums
**    are its own (the bound above holds there too);
**  - gnn_bgemv (one row over gnn_bpack's panels) gives gnn_bgemm's bits
**    (on AMX where K is a multiple of 32: elsewhere it is vdpbf16ps's);
**  - every row split gives the whole call's bits, A as float32 or
**    bfloat16 words, C as float32 or bfloat16 words (rounded to nearest
**    even), padding of C's rows left alone;
**  - gnn_bgemm_sparse (a mostly-zero A): the float chain over k in order
**    of the rounded products, bit for bit, on every path.
** Usage: test_bgemm [shared-dir] (the folder is not used)
*/
#define _DEFAULT_SOURCE 1   /* syscall */
#include "rtcheck.h"

#include <math.h>
#include <stdint.h>
#include <sys/wait.h>
#if defined(__x86_64__) && defined(__GNUC__) && defined(__linux__)
#include <cpuid.h>
#include <sys/syscall.h>
#include <unistd.h>
#endif

#define CANARYF 12345.678f

static uint64_t rng = 0x9e3779b97f4a7c15u;

static uint64_t
next(void)
{
	rng ^= rng << 13;
	rng ^= rng >> 7;
	rng ^= rng << 17;
	return rng;
}

/* uniform in [-4, 4), a quarter of them zero */
static float
value(void)
{
	uint64_t r = next();

	return r % 4 == 0 ? 0.0f : (float)((double)(r >> 40) / 16777216.0 * 8.0 - 4.0);
}

/* x rounded to bfloat16 (8 significant bits), ties to even: normal x */
static float
bf16ref(float x)
{
	int e;
	double m = frexp((double)x, &e);

	return x == 0.0f ? x : (float)ldexp(rint(m * 256.0), e - 8);
}

static uint16_t
bf16word(float x)
{
	uint32_t u;

	x = bf16ref(x);
	memcpy(&u, &x, 4);
	return (uint16_t)(u >> 16);
}

static float
wordf(uint16_t h)
{
	uint32_t u = (uint32_t)h << 16;
	float x;

	memcpy(&x, &u, 4);
	return x;
}

static void
shapes(void)
{
	static const int64_t Ms[] = {1, 5, 17, 33, 70}, Ks[] = {1, 2, 3, 17, 32, 128, 301}, Ns[] = {1, 7, 16, 40, 64, 65, 128};
	static const int dts[] = {GNN_F32, GNN_BF16};
	int bad = 0, badsum = 0, badsplit = 0;
	/* the tile unit's own order where it runs */
	const int paired = strcmp(gnn_bgemm_isa(), "amx") != 0;

	for (size_t a = 0; a < sizeof Ms / sizeof *Ms; a++)
		for (size_t b = 0; b < sizeof Ks / sizeof *Ks; b++)
			for (size_t c = 0; c < sizeof Ns / sizeof *Ns; c++)
				for (int ad = 0; ad < 2; ad++)
					for (int cd = 0; cd < 2; cd++) {
						int64_t M = Ms[a], K = Ks[b], N = Ns[c], lda = K + 3, ldb = N + 1, ldc = N + 2;
						int adt = dts[ad], cdt = dts[cd];
						float *Af = malloc((size_t)(M * lda) * 4), *Ar = malloc((size_t)(M * K) * 4);
						uint16_t *Ah = malloc((size_t)(M * lda) * 2);
						float *B = malloc((size_t)(K * ldb) * 4), *Br = malloc((size_t)(K * ldb) * 4);
						float *Cf = malloc((size_t)(M * ldc) * 4), *Cf1 = malloc((size_t)(M * ldc) * 4);
						uint16_t *Ch = malloc((size_t)(M * ldc) * 2), *Ch1 = malloc((size_t)(M * ldc) * 2);

						for (int64_t i = 0; i < M; i++)
							for (int64_t k = 0; k < lda; k++) {
								float x = value();
								Af[i * lda + k] = x;
								Ah[i * lda + k] = bf16word(x);
								if (k < K)
									Ar[i * K + k] = bf16ref(x);
							}
						for (int64_t i = 0; i < K * ldb; i++) {
							/* rounded in the call: half of them already bfloat16 */
							B[i] = next() % 2 ? value() : bf16ref(value());
							Br[i] = bf16ref(B[i]);
						}
						for (int64_t i = 0; i < M * ldc; i++)
							Cf[i] = Cf1[i] = CANARYF, Ch[i] = Ch1[i] = 0xbeef;
						/* the whole range, then random row splits */
						gnn_bgemm(0, M, K, N, adt == GNN_F32 ? (const void *)Af : Ah, adt, lda, B, ldb,
						          cdt == GNN_F32 ? (void *)Cf : Ch, cdt, ldc);
						for (int64_t m0 = 0, m1; m0 < M; m0 = m1) {
							m1 = m0 + 1 + (int64_t)(next() % 20);
							if (m1 > M)
								m1 = M;
							gnn_bgemm(m0, m1, K, N, adt == GNN_F32 ? (const void *)Af : Ah, adt, lda, B, ldb,
							          cdt == GNN_F32 ? (void *)Cf1 : Ch1, cdt, ldc);
						}
						badsplit += cdt == GNN_F32 ? memcmp(Cf, Cf1, (size_t)(M * ldc) * 4) != 0
						                           : memcmp(Ch, Ch1, (size_t)(M * ldc) * 2) != 0;
						for (int64_t i = 0; i < M; i++)
							for (int64_t n = 0; n < ldc; n++) {
								float plain = 0.0f, pairs = 0.0f, got;
								double mag = 0, word = 0;
								int ok;

								if (n >= N) {   /* padding: untouched */
									ok = cdt == GNN_F32 ? Cf[i * ldc + n] == CANARYF : Ch[i * ldc + n] == 0xbeef;
									if (!ok && bad++ < 5)
										printf("  M %lld K %lld N %lld: C[%lld][%lld] padding written\n",
										       (long long)M, (long long)K, (long long)N, (long long)i, (long long)n);
									continue;
								}
								for (int64_t k = 0; k < K; k++) {
									float p = Ar[i * K + k] * (Br[k * ldb + n]);   /* exact */
									plain += p;
									mag += fabs((double)p);
								}
								for (int64_t k = 0; k < K; k += 2) {
									if (k + 1 < K)
										pairs += Ar[i * K + k + 1] * (Br[(k + 1) * ldb + n]);
									pairs += Ar[i * K + k] * (Br[k * ldb + n]);
								}
								if (cdt == GNN_F32) {
									got = Cf[i * ldc + n];
									ok = !paired || !memcmp(&got, &pairs, 4);
								} else {
									got = wordf(Ch[i * ldc + n]);
									ok = !paired || Ch[i * ldc + n] == bf16word(pairs);
									/* the stored word's own rounding */
									word = fabs((double)pairs) / 256.0;
								}
								if (!ok && bad++ < 5)
									printf("  M %lld K %lld N %lld A %d C %d: C[%lld][%lld] = %.9g, the pair order gives %.9g\n",
									       (long long)M, (long long)K, (long long)N, adt, cdt,
									       (long long)i, (long long)n, got, pairs);
								if (fabs((double)got - (double)plain) > 2.0 * (double)K * mag / 16777216.0 + word &&
								    badsum++ < 5)
									printf("  M %lld K %lld N %lld: C[%lld][%lld] = %.9g, the plain sum %.9g\n",
									       (long long)M, (long long)K, (long long)N, (long long)i, (long long)n,
									       got, plain);
							}
						free(Af), free(Ar), free(Ah), free(B), free(Br), free(Cf), free(Cf1), free(Ch), free(Ch1);
					}
	CHECK(bad == 0);
	CHECK(badsum == 0);
	CHECK(badsplit == 0);
}

/* gnn_bgemv, the fused kernels' one-row form over gnn_bpack's panels:
** gnn_bgemm's bits for every row (float A) */
static void
gemv(void)
{
	static const int64_t Ks[] = {1, 2, 7, 32, 128, 301}, Ns[] = {1, 7, 16, 40, 65, 128};
	const int amx = strcmp(gnn_bgemm_isa(), "amx") == 0;
	int bad = 0;

	for (size_t b = 0; b < sizeof Ks / sizeof *Ks; b++)
		for (size_t c = 0; c < sizeof Ns / sizeof *Ns; c++) {
			int64_t M = 9, K = Ks[b], N = Ns[c];
			float *A = malloc((size_t)(M * K) * 4), *B = malloc((size_t)(K * N) * 4);
			float *C = malloc((size_t)(M * N) * 4), *C1 = malloc((size_t)(M * N + 1) * 4);
			uint32_t *P = malloc((size_t)gnn_bpack_words(K, N) * 4);

			for (int64_t i = 0; i < M * K; i++)
				A[i] = value();
			for (int64_t i = 0; i < K * N; i++)
				B[i] = value();
			gnn_bgemm(0, M, K, N, A, GNN_F32, K, B, N, C, GNN_F32, N);
			gnn_bpack(P, B, K, N, N);
			C1[M * N] = CANARYF;
			for (int64_t i = 0; i < M; i++)
				gnn_bgemv(A + i * K, K, P, N, C1 + i * N);
			/* gnn_bgemv on tiles only where K is a multiple of 32:
			 * elsewhere vdpbf16ps, whose pair order is checked above */
			if (amx && K % 32 != 0) {
				if (C1[M * N] != CANARYF && bad++ < 5)
					printf("  gemv K %lld N %lld: wrote past the row\n", (long long)K, (long long)N);
			} else if ((memcmp(C, C1, (size_t)(M * N) * 4) || C1[M * N] != CANARYF) && bad++ < 5)
				printf("  gemv K %lld N %lld: not gnn_bgemm's bits\n", (long long)K, (long long)N);
			free(A), free(B), free(C), free(C1), free(P);
		}
	CHECK(bad == 0);
}

/* gnn_bgemm_sparse, for a mostly-zero A: each element the float chain
** over k in increasing order of the rounded operands' products (fmaf:
** each product is exact), bit for bit, whatever the path; A as float32
** or bfloat16 words, C as float32 or bfloat16 words; every row split the
** whole call's bits */
static void
sparsegemm(void)
{
	static const int64_t Ks[] = {1, 17, 301, 1433}, Ns[] = {1, 7, 16, 40};
	int bad = 0;

	for (size_t b = 0; b < sizeof Ks / sizeof *Ks; b++)
		for (size_t c = 0; c < sizeof Ns / sizeof *Ns; c++) {
			int64_t M = 37, K = Ks[b], N = Ns[c];
			float *A = malloc((size_t)(M * K) * 4), *B = malloc((size_t)(K * N) * 4);
			float *C = malloc((size_t)(M * N) * 4), *R = malloc((size_t)(M * N) * 4);
			uint16_t *Ah = malloc((size_t)(M * K) * 2), *Ch = malloc((size_t)(M * N) * 2);

			for (int64_t i = 0; i < M * K; i++) {
				A[i] = next() % 50 == 0 ? value() : 0.0f;   /* about 1.5% nonzero */
				Ah[i] = bf16word(A[i]);
			}
			for (int64_t i = 0; i < K * N; i++)
				B[i] = value();
			for (int64_t i = 0; i < M; i++)
				for (int64_t n = 0; n < N; n++) {
					float s = 0.0f;
					for (int64_t k = 0; k < K; k++)
						s = fmaf(bf16ref(A[i * K + k]), bf16ref(B[k * N + n]), s);
					R[i * N + n] = s;
				}
			gnn_bgemm_sparse(0, M, K, N, A, GNN_F32, K, B, N, C, GNN_F32, N);
			if (memcmp(C, R, (size_t)(M * N) * 4) && bad++ < 5)
				printf("  sparse K %lld N %lld: not the float chain's bits\n", (long long)K, (long long)N);
			gnn_bgemm_sparse(0, 20, K, N, Ah, GNN_BF16, K, B, N, C, GNN_F32, N);
			gnn_bgemm_sparse(20, M, K, N, Ah, GNN_BF16, K, B, N, C, GNN_F32, N);
			if (memcmp(C, R, (size_t)(M * N) * 4) && bad++ < 5)
				printf("  sparse K %lld N %lld, bfloat16 A, split: not the float chain's bits\n", (long long)K,
				       (long long)N);
			gnn_bgemm_sparse(0, M, K, N, A, GNN_F32, K, B, N, Ch, GNN_BF16, N);
			for (int64_t i = 0; i < M * N; i++)
				if (Ch[i] != bf16word(R[i]) && bad++ < 5)
					printf("  sparse K %lld N %lld, bfloat16 C: element %lld\n", (long long)K, (long long)N,
					       (long long)i);
			free(A), free(B), free(C), free(R), free(Ah), free(Ch);
		}
	CHECK(bad == 0);
}

/* K = 0: zeros; an empty row range: nothing written */
static void
edges(void)
{
	float C[6] = {1, 2, 3, 4, 5, 6}, B[2] = {1, 1};
	uint16_t A[2] = {0x3f80, 0x3f80};

	gnn_bgemm(0, 2, 0, 2, A, GNN_BF16, 1, B, 2, C, GNN_F32, 3);
	CHECK(C[0] == 0 && C[1] == 0 && C[2] == 3 && C[3] == 0 && C[4] == 0 && C[5] == 6);
	gnn_bgemm(1, 1, 1, 1, A, GNN_BF16, 1, B, 1, C, GNN_F32, 1);
	CHECK(C[2] == 3);
}

/* whether this CPU has AMX-BF16 and the kernel grants its tile state:
** asked here on its own (cpuid, arch_prctl), not through the runtime */
static int
amxgranted(void)
{
#if defined(__x86_64__) && defined(__GNUC__) && defined(__linux__)
	unsigned a, b, c, d;

	return __get_cpuid_count(7, 0, &a, &b, &c, &d) && (d >> 22 & 1) && (d >> 24 & 1) &&
	       syscall(SYS_arch_prctl, 0x1023, 18) == 0;
#else
	return 0;
#endif
}

static void
child(char **argv, const char *isa, const char *want)
{
	int st;
	pid_t pid;

	fflush(stdout);
	pid = fork();
	if (pid == 0) {
		if (isa)
			setenv("GNN_CPU_ISA", isa, 1);
		if (!strcmp(want, "avx512bf16"))
			setenv("GNN_CPU_AMX", "0", 1);
		setenv("GNN_TEST_BGEMM_WANT", want, 1);
		execv("/proc/self/exe", argv);
		_exit(127);
	}
	if (!CHECK(pid > 0 && waitpid(pid, &st, 0) == pid && WIFEXITED(st) && WEXITSTATUS(st) == 0))
		printf("  the %s path failed\n", want);
}

int
main(int argc, char **argv)
{
	const char *want = getenv("GNN_TEST_BGEMM_WANT");

	(void)argc;
	if (!want) {
#if defined(__x86_64__) && defined(__GNUC__)
		if (__builtin_cpu_supports("avx512f") && __builtin_cpu_supports("avx512bf16")) {
			int amx = amxgranted();

			child(argv, NULL, amx ? "amx" : "avx512bf16");
			if (amx)
				child(argv, NULL, "avx512bf16");   /* GNN_CPU_AMX=0 */
		} else
			printf("path avx512bf16: not on this CPU, skipped\n");
		if (__builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma"))
			child(argv, "avx2", "float");
		child(argv, "generic", "float");
#else
		child(argv, NULL, "float");
#endif
		return summary();
	}
	printf("path %s\n", gnn_bgemm_isa());
	CHECK(strcmp(gnn_bgemm_isa(), want) == 0);
	edges();
	shapes();
	gemv();
	sparsegemm();
	return summary();
}
