/*
** hgemm.c: the dense transform with bfloat16 weights (gnn_bgemm,
** --precision=bf16; docs/precision.md): C = A @ B with B rounded to
** bfloat16 (the weights: float32 holding bfloat16 values, so the rounding
** here changes nothing), A in bfloat16 words or float32 (rounded to
** bfloat16 as it is read: the first layer's input needs no cast pass of
** its own), C float32 or bfloat16 (rounded to nearest even where
** stored).
**
** Bits. Every product of two bfloat16 values is exact in float32, so a
** sum's bits depend only on how it is added up.  Where the CPU has
** AMX-BF16 (granted by the kernel), the tile unit's tdpbf16ps adds them:
** its own fixed way of summing 32 products into a float32 (not the pair
** order below, and within the same error bound; tests/unit/test_bgemm.c),
** the same for every row wherever it sits in a tile, K padded with zeros
** to a multiple of 32 (a zero product changes no sum).  Elsewhere the
** order is AVX-512 BF16's vdpbf16ps: k in pairs (0, 1), (2, 3), ...,
** each pair's odd term added before its even one, from +0, each addition
** rounded to float32 (an odd K ends with the pair (K-1, a zero)).  On
** either, neither the row split nor the thread count changes a bit.
** gnn_bgemv, which reads the weights' pair panels in place, uses the
** tiles where K is a multiple of 32 and vdpbf16ps elsewhere: it gives
** gnn_bgemm's bits where K is a multiple of 32 or the CPU has no AMX.
**
** Paths, chosen at run time: AMX tiles (2 x 2 tiles of 16 x 16 sums a
** step; GNN_CPU_AMX=0 turns them off); with AVX-512 BF16 (cpuid, and the
** gemm's instruction-set level at avx512: GNN_CPU_ISA lowers it),
** microkernels of vdpbf16ps over B packed into pair panels (16 columns
** of (B[2p][n], B[2p+1][n]) words, one zmm a pair); else the float GEMM
** (gnn_sgemm) on the decoded values with each pair's two k swapped, the
** same chain step for step. The last two agree bit for bit but for what
** vdpbf16ps flushes: subnormal operands and partial sums (below 2^-126)
** count as zero there.  On Sapphire Rapids (a 2-vCPU virtual machine)
** a vdpbf16ps issues once a nanosecond, half the float FMA's
** products, so only the tiles make the bfloat16 GEMM faster than the
** float one (32 against 60 ms at 169,343 x 128 x 128, one thread).
**
** The weights are rounded to bfloat16 once, by the load-time kernel that
** writes B (passes/precision.c), and kept in float32 for the fused row
** kernels that multiply by them too; the pair panels are a per-call copy
** of at most a few ten KiB (a call is one thread's whole row range),
** about one part in 10^4 of the product's work at the GNN widths.
*/
#define _DEFAULT_SOURCE 1   /* syscall (the AMX permission) */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "internal.h"
#include "gnnhalf.h"

#if defined(__x86_64__) && defined(__GNUC__)
#define BGEMM_X86 1
#include <cpuid.h>
#include <immintrin.h>
#ifdef __linux__
#include <stdatomic.h>
#include <sys/syscall.h>
#include <unistd.h>
#endif
#endif

#define NR 16          /* columns of a panel */
#define HROWS 32       /* rows of A converted at a time */
#define MRMAX 16

#define ALWAYS_INLINE inline __attribute__((always_inline))

/* A's rows [i, i + r) as bfloat16 words, row length K (ld K): float32
** rounded (adt GNN_F32), bfloat16 copied */
static void
rowsbf16(uint16_t *d, const void *A, int adt, int64_t lda, int64_t r, int64_t K)
{
	for (int64_t i = 0; i < r; i++) {
		uint16_t *di = d + i * K;
		if (adt == GNN_F32) {
			const float *a = (const float *)A + i * lda;
			for (int64_t k = 0; k < K; k++)
				di[k] = gnn_st_bf16(a[k]);
		} else
			memcpy(di, (const uint16_t *)A + i * lda, (size_t)K * sizeof *di);
	}
}

/* the fallback: the float GEMM on the decoded values, k swapped in pairs
** (K2 = K rounded up to even, the pad a zero) */

static void
fallback(int64_t m0, int64_t m1, int64_t K, int64_t N, const void *A, int adt, int64_t lda,
	const float *B, int64_t ldb, void *C, int cdt, int64_t ldc)
{
	int64_t K2 = K + (K & 1);
	float *b = malloc((size_t)(K2 * N) * sizeof *b), *a = malloc((size_t)(HROWS * K2) * sizeof *a);
	float *c = cdt == GNN_F32 ? NULL : malloc((size_t)(HROWS * N) * sizeof *c);
	uint16_t *h = malloc((size_t)(HROWS * K2) * sizeof *h);

	if (!b || !a || !h || (cdt != GNN_F32 && !c))
		abort();   /* generated code has no status path here */
	for (int64_t k = 0; k < K2; k++)
		for (int64_t n = 0; n < N; n++)
			b[k * N + n] = (k ^ 1) < K ? gnn_round_bf16(B[(k ^ 1) * ldb + n]) : 0.0f;
	for (int64_t i = m0; i < m1; i += HROWS) {
		int64_t r = m1 - i < HROWS ? m1 - i : HROWS;
		const char *Ai = (const char *)A + (size_t)(i * lda) * (adt == GNN_F32 ? 4 : 2);
		float *ci = c ? c : (float *)C + i * ldc;

		rowsbf16(h, Ai, adt, lda, r, K);
		for (int64_t q = 0; q < r; q++)
			for (int64_t k = 0; k < K2; k++)
				a[q * K2 + k] = (k ^ 1) < K ? gnn_ld_bf16(h[q * K + (k ^ 1)]) : 0.0f;
		gnn_sgemm(0, r, K2, N, a, K2, b, N, ci, c ? N : ldc, 0, 0);
		if (c)
			for (int64_t q = 0; q < r; q++)
				for (int64_t n = 0; n < N; n++)
					((uint16_t *)C)[(i + q) * ldc + n] = gnn_st_bf16(c[q * N + n]);
	}
	free(b), free(a), free(c), free(h);
}

/* the pair panels: panel p's pair q is NR words (B[2q][n] | B[2q+1][n]
** << 16 for its columns n, rounded to bfloat16; zeros past K and N) */
int64_t
gnn_bpack_words(int64_t K, int64_t N)
{
	return K <= 0 || N <= 0 ? 0 : (K + 1) / 2 * ((N + NR - 1) / NR) * NR;
}

void
gnn_bpack(uint32_t *P, const float *B, int64_t K, int64_t N, int64_t ldb)
{
	int64_t kp = (K + 1) / 2, np = (N + NR - 1) / NR, ps = kp * NR;

	for (int64_t p = 0; p < np; p++)
		for (int64_t q = 0; q < kp; q++)
			for (int64_t j = 0; j < NR; j++) {
				int64_t n = p * NR + j, k = 2 * q;
				uint32_t lo = n < N ? gnn_st_bf16(B[k * ldb + n]) : 0;
				uint32_t hi = n < N && k + 1 < K ? gnn_st_bf16(B[(k + 1) * ldb + n]) : 0;
				P[p * ps + q * NR + j] = lo | hi << 16;
			}
}

/* one row without AVX-512 BF16: the pair order in float, step for step
** (exact products), a panel's 16 columns side by side so that the loop
** vectorizes */
static void
gemv_generic(const float *a, int64_t K, const uint32_t *P, int64_t N, float *c)
{
	int64_t kp = (K + 1) / 2, ps = kp * NR;

	for (int64_t n0 = 0; n0 < N; n0 += NR) {
		const uint32_t *w = P + n0 / NR * ps;
		float acc[NR] = {0};

		for (int64_t q = 0; q < kp; q++) {
			float a0 = gnn_round_bf16(a[2 * q]), a1 = 2 * q + 1 < K ? gnn_round_bf16(a[2 * q + 1]) : 0.0f;
			for (int j = 0; j < NR; j++) {
				acc[j] += a1 * gnn_ld_bf16((uint16_t)(w[q * NR + j] >> 16));
				acc[j] += a0 * gnn_ld_bf16((uint16_t)w[q * NR + j]);
			}
		}
		memcpy(c + n0, acc, (size_t)(N - n0 < NR ? N - n0 : NR) * sizeof *c);
	}
}

#ifdef BGEMM_X86

#define T_BF16 __attribute__((target("avx512f,avx512bw,avx512bf16")))

static ALWAYS_INLINE uint32_t
ld32(const uint16_t *p)
{
	uint32_t u;

	memcpy(&u, p, sizeof u);
	return u;
}

/* gnn_st_bf16 in lanes: half a unit less one plus the kept part's
** lowest bit, then the upper half; NaN made quiet.  The words in the
** low halves of the lanes */
static ALWAYS_INLINE T_BF16 __m512i
bf_words(__m512 x)
{
	__m512i u = _mm512_castps_si512(x);
	__m512i odd = _mm512_and_si512(_mm512_srli_epi32(u, 16), _mm512_set1_epi32(1));
	__m512i rn = _mm512_add_epi32(_mm512_add_epi32(u, _mm512_set1_epi32(0x7fff)), odd);
	__m512i qn = _mm512_or_si512(u, _mm512_set1_epi32(0x00400000));
	__mmask16 nan = _mm512_cmpgt_epu32_mask(_mm512_and_si512(u, _mm512_set1_epi32(0x7fffffff)),
		_mm512_set1_epi32(0x7f800000));

	return _mm512_srli_epi32(_mm512_mask_blend_epi32(nan, rn, qn), 16);
}

/* float rows to bfloat16 words, as rowsbf16, 16 lanes a step */
static T_BF16 void
bf_rows(uint16_t *d, int64_t ldd, const float *a, int64_t lda, int64_t r, int64_t K)
{
	for (int64_t i = 0; i < r; i++)
		for (int64_t k = 0; k < K; k += 16) {
			__mmask16 m = gnn_mask16(K - k);
			_mm512_mask_cvtepi32_storeu_epi16(d + i * ldd + k, m, bf_words(_mm512_maskz_loadu_ps(m, a + i * lda + k)));
		}
}

/* rows A[r*lda + k] (bfloat16 words, r < mr) times np pair panels of
** P (panel stride ps words), of which ncols columns are real, into C */
static ALWAYS_INLINE T_BF16 void
bf_body(const int mr, const int np, int64_t K, const uint16_t *A, int64_t lda, const uint32_t *P,
	int64_t ps, void *C, int cdt, int64_t ldc, int64_t ncols)
{
	__m512 acc[MRMAX][4];
	__m512i b[4];
	__mmask16 m[4];
	const int64_t kh = K / 2;

	for (int p = 0; p < np; p++)
		m[p] = gnn_mask16(ncols - 16 * p);
#pragma GCC unroll 16
	for (int r = 0; r < mr; r++)
#pragma GCC unroll 4
		for (int p = 0; p < np; p++)
			acc[r][p] = _mm512_setzero_ps();
	for (int64_t q = 0; q < kh; q++) {
#pragma GCC unroll 4
		for (int p = 0; p < np; p++)
			b[p] = _mm512_loadu_si512(P + p * ps + q * NR);
#pragma GCC unroll 16
		for (int r = 0; r < mr; r++) {
			__m512i a = _mm512_set1_epi32((int)ld32(A + r * lda + 2 * q));
#pragma GCC unroll 4
			for (int p = 0; p < np; p++)
				acc[r][p] = _mm512_dpbf16_ps(acc[r][p], (__m512bh)a, (__m512bh)b[p]);
		}
	}
	if (K & 1) {   /* the last pair's odd half is zero, in A as in P */
#pragma GCC unroll 4
		for (int p = 0; p < np; p++)
			b[p] = _mm512_loadu_si512(P + p * ps + kh * NR);
#pragma GCC unroll 16
		for (int r = 0; r < mr; r++) {
			__m512i a = _mm512_set1_epi32(A[r * lda + K - 1]);
#pragma GCC unroll 4
			for (int p = 0; p < np; p++)
				acc[r][p] = _mm512_dpbf16_ps(acc[r][p], (__m512bh)a, (__m512bh)b[p]);
		}
	}
#pragma GCC unroll 16
	for (int r = 0; r < mr; r++)
#pragma GCC unroll 4
		for (int p = 0; p < np; p++) {
			if (cdt == GNN_F32) {
				_mm512_mask_storeu_ps((float *)C + r * ldc + p * 16, m[p], acc[r][p]);
				continue;
			}
			_mm512_mask_cvtepi32_storeu_epi16((uint16_t *)C + r * ldc + p * 16, m[p], bf_words(acc[r][p]));
		}
}

static T_BF16 void
bf_kern(int mr, int np, int64_t K, const uint16_t *A, int64_t lda, const uint32_t *P, int64_t ps,
	void *C, int cdt, int64_t ldc, int64_t ncols)
{
#define X(r, p) bf_body(r, p, K, A, lda, P, ps, C, cdt, ldc, ncols)
	GNN_TILES(np, mr, X)
#undef X
}

/* tile rows for 1..4 panels (GNN_TILES) */
static const int bf_mr[5] = {0, 16, 12, 8, 6};

static T_BF16 void
native(int64_t m0, int64_t m1, int64_t K, int64_t N, const void *A, int adt, int64_t lda,
	const float *B, int64_t ldb, void *C, int cdt, int64_t ldc)
{
	int64_t kp = (K + 1) / 2, np = (N + NR - 1) / NR, ps = kp * NR;
	int g0 = np < 4 ? (int)np : 4, mr0 = bf_mr[g0];
	uint32_t *P = malloc((size_t)gnn_bpack_words(K, N) * sizeof *P);
	uint16_t *h = adt == GNN_F32 ? malloc((size_t)(HROWS * K) * sizeof *h) : NULL;
	size_t cw = cdt == GNN_F32 ? 4 : 2;

	if (!P || (adt == GNN_F32 && !h))
		abort();   /* generated code has no status path here */
	gnn_bpack(P, B, K, N, ldb);
	for (int64_t i0 = m0; i0 < m1; i0 += HROWS) {
		int64_t i1 = m1 - i0 < HROWS ? m1 : i0 + HROWS;
		const uint16_t *a = (const uint16_t *)A + i0 * lda;
		int64_t la = lda;

		if (h) {   /* the float input, rounded as it is read */
			bf_rows(h, K, (const float *)A + i0 * lda, lda, i1 - i0, K);
			a = h;
			la = K;
		}
		for (int64_t i = i0; i < i1; i += mr0) {
			int mr = i1 - i < mr0 ? (int)(i1 - i) : mr0;
			for (int64_t p = 0; p < np; p += g0) {
				int g = np - p < g0 ? (int)(np - p) : g0;
				int64_t ncols = N - p * NR < g * NR ? N - p * NR : g * NR;
				bf_kern(mr, g, K, a + (i - i0) * la, la, P + p * ps, ps,
					(char *)C + (size_t)(i * ldc + p * NR) * cw, cdt, ldc, ncols);
			}
		}
	}
	free(P);
	free(h);
}

/* one row: a (K floats, rounded here) times the pair panels P, four
** panels at a time, into c (N floats) */
static T_BF16 void
gemv_native(const float *a, int64_t K, const uint32_t *P, int64_t N, float *c)
{
	int64_t kp = (K + 1) / 2, np = (N + NR - 1) / NR, ps = kp * NR;
	uint32_t pr[1024];

	if (kp > 1024) {   /* a row wider than 2048: the portable form */
		gemv_generic(a, K, P, N, c);
		return;
	}
	for (int64_t q = 0; q < kp; q++)
		pr[q] = gnn_st_bf16(a[2 * q]) | (2 * q + 1 < K ? (uint32_t)gnn_st_bf16(a[2 * q + 1]) << 16 : 0u);
	for (int64_t p0 = 0; p0 < np; p0 += 4) {
		__m512 acc[4];
		int g = np - p0 < 4 ? (int)(np - p0) : 4;

		for (int v = 0; v < 4; v++)
			acc[v] = _mm512_setzero_ps();
		for (int64_t q = 0; q < kp; q++) {
			__m512bh x = (__m512bh)_mm512_set1_epi32((int)pr[q]);
#pragma GCC unroll 4
			for (int v = 0; v < 4; v++)
				if (v < g)
					acc[v] = _mm512_dpbf16_ps(acc[v], x,
						(__m512bh)_mm512_loadu_si512(P + (p0 + v) * ps + q * NR));
		}
		for (int v = 0; v < g; v++)
			_mm512_mask_storeu_ps(c + (p0 + v) * NR, gnn_mask16(N - (p0 + v) * NR), acc[v]);
	}
}

/* AMX: the products on the tile unit, its own way of summing them (the
** header).  A block of 32 rows is copied (float rounded, bfloat16
** copied) into a scratch with K padded by zeros to a multiple of 32, and
** B into pair panels with the pairs padded by zeros to a multiple of 16:
** a zero product adds nothing to a sum (but the sign of an all-zero one).
** Each step multiplies 2 x 2 tiles (32 rows by 32 columns); the tiles
** are stored to a float block and written out masked, so any M, N fit.
** A thread asks the kernel for the tile state once (arch_prctl); where it
** is refused, or the CPU has no AMX-BF16, the vdpbf16ps path runs. */

#define AMX_ROWS 32
#define T_AMX __attribute__((target("avx512f,avx512bw,avx512bf16,amx-tile,amx-bf16")))

struct amxcfg {
	uint8_t palette, start;
	uint8_t reserved[14];
	uint16_t colsb[16];
	uint8_t rows[16];
};

/* the thread's tile configuration: 0 none, AMX_GEMM (eight 16 x 64-byte
** tiles) or AMX_GEMV (tiles 0-3 one row, 4-6 sixteen), kept between
** gnn_bgemv's calls (a row kernel's rows) and released by gnn_bgemm */
enum { AMX_GEMM = 1, AMX_GEMV };
static _Thread_local int amxmode;

static T_AMX void
amx_config(int mode)
{
	struct amxcfg c;

	if (amxmode == mode)
		return;
	memset(&c, 0, sizeof c);
	c.palette = 1;
	for (int t = 0; t < 8; t++) {
		c.colsb[t] = 64;
		c.rows[t] = mode == AMX_GEMV && t < 4 ? 1 : 16;
	}
	__asm__ volatile("" : : "r"(&c) : "memory");   /* gcc 12 drops the stores ldtilecfg reads */
	_tile_loadconfig(&c);
	amxmode = mode;
}

/* the 32 x 32 block at C (rows r, columns n of it real) from the float
** block t (32 x 32) */
static T_AMX void
amx_out(const float *t, void *C, int cdt, int64_t ldc, int64_t r, int64_t n)
{
	for (int64_t i = 0; i < r; i++)
		for (int h = 0; h < 2 && h * 16 < n; h++) {
			__mmask16 m = gnn_mask16(n - h * 16);
			__m512 v = _mm512_loadu_ps(t + i * 32 + h * 16);

			if (cdt == GNN_F32)
				_mm512_mask_storeu_ps((float *)C + i * ldc + h * 16, m, v);
			else
				_mm512_mask_cvtepi32_storeu_epi16((uint16_t *)C + i * ldc + h * 16, m, bf_words(v));
		}
}

static T_AMX void
amx(int64_t m0, int64_t m1, int64_t K, int64_t N, const void *A, int adt, int64_t lda,
	const float *B, int64_t ldb, void *C, int cdt, int64_t ldc)
{
	int64_t K32 = (K + 31) / 32 * 32, kc = K32 / 32, kp = K32 / 2, np = (N + NR - 1) / NR;
	int64_t ps = kp * NR, np2 = np + (np & 1);
	uint32_t *P = calloc((size_t)(np2 * ps), sizeof *P);
	uint16_t *h = calloc((size_t)(AMX_ROWS * K32), sizeof *h);   /* K's padding stays zero */
	float t[AMX_ROWS * 32] __attribute__((aligned(64)));
	size_t cw = cdt == GNN_F32 ? 4 : 2;

	if (!P || !h)
		abort();   /* generated code has no status path here */
	for (int64_t p = 0; p < np; p++)   /* panels of K32 / 2 pairs; past N and K zeros */
		gnn_bpack(P + p * ps, B + p * NR, K, N - p * NR < NR ? N - p * NR : NR, ldb);
	amx_config(AMX_GEMM);
	for (int64_t i0 = m0; i0 < m1; i0 += AMX_ROWS) {
		int64_t r = m1 - i0 < AMX_ROWS ? m1 - i0 : AMX_ROWS;

		if (r < AMX_ROWS)   /* a short last block: the rows past it zero */
			memset(h + r * K32, 0, (size_t)((AMX_ROWS - r) * K32) * sizeof *h);
		if (adt == GNN_F32)
			bf_rows(h, K32, (const float *)A + i0 * lda, lda, r, K);
		else
			for (int64_t i = 0; i < r; i++)
				memcpy(h + i * K32, (const uint16_t *)A + (i0 + i) * lda, (size_t)K * sizeof *h);
		for (int64_t p = 0; p < np; p += 2) {
			const uint32_t *b0 = P + p * ps, *b1 = b0 + ps;

			_tile_zero(0);
			_tile_zero(1);
			_tile_zero(2);
			_tile_zero(3);
			for (int64_t c = 0; c < kc; c++) {
				_tile_loadd(4, h + c * 32, K32 * 2);
				_tile_loadd(5, h + 16 * K32 + c * 32, K32 * 2);
				_tile_loadd(6, b0 + c * 16 * NR, 64);
				_tile_loadd(7, b1 + c * 16 * NR, 64);
				_tile_dpbf16ps(0, 4, 6);
				_tile_dpbf16ps(1, 4, 7);
				_tile_dpbf16ps(2, 5, 6);
				_tile_dpbf16ps(3, 5, 7);
			}
			_tile_stored(0, t, 128);
			_tile_stored(1, t + 16, 128);
			_tile_stored(2, t + 16 * 32, 128);
			_tile_stored(3, t + 16 * 32 + 16, 128);
			amx_out(t, (char *)C + (size_t)(i0 * ldc + p * NR) * cw, cdt, ldc, r,
			        N - p * NR < 32 ? N - p * NR : 32);
		}
	}
	_tile_release();
	amxmode = 0;
	free(P);
	free(h);
}

/* one row (K a multiple of 32) on the tile unit, three panels at a time:
** the row's pairs are a one-row A tile, each panel's 16 pairs a B tile
** (gnn_bpack's panels, read in place), the sums one-row C tiles; a C
** row is the same chain as gnn_bgemm's (its rows are independent), so
** the same bits */
static T_AMX void
gemv_amx(const float *a, int64_t K, const uint32_t *P, int64_t N, float *c)
{
	int64_t kp = K / 2, np = (N + NR - 1) / NR, ps = kp * NR;
	uint16_t ah[2048] __attribute__((aligned(64)));
	float t[3 * 16] __attribute__((aligned(64)));

	bf_rows(ah, K, a, K, 1, K);
	amx_config(AMX_GEMV);
	for (int64_t p0 = 0; p0 < np; p0 += 3) {
		int g = np - p0 < 3 ? (int)(np - p0) : 3;
		const uint32_t *b = P + p0 * ps;

		_tile_zero(0);
		_tile_zero(1);
		_tile_zero(2);
		for (int64_t q = 0; q < kp; q += 16) {
			_tile_loadd(3, ah + 2 * q, 64);
			_tile_loadd(4, b + q * NR, 64);
			_tile_dpbf16ps(0, 3, 4);
			if (g > 1) {
				_tile_loadd(5, b + ps + q * NR, 64);
				_tile_dpbf16ps(1, 3, 5);
			}
			if (g > 2) {
				_tile_loadd(6, b + 2 * ps + q * NR, 64);
				_tile_dpbf16ps(2, 3, 6);
			}
		}
		_tile_stored(0, t, 64);
		_tile_stored(1, t + 16, 64);
		_tile_stored(2, t + 32, 64);
		for (int v = 0; v < g; v++)
			_mm512_mask_storeu_ps(c + (p0 + v) * NR, gnn_mask16(N - (p0 + v) * NR),
			                      _mm512_load_ps(t + 16 * v));
	}
}

#endif /* BGEMM_X86 */

/* vdpbf16ps is used when the CPU has it and the gemm's level is avx512
** (GNN_CPU_ISA=avx2 or generic gives the fallback, for the tests) */
static int
hasbf16(void)
{
#ifdef BGEMM_X86
	return gnn_cpu_level_() >= 2 && __builtin_cpu_supports("avx512bf16");
#else
	return 0;
#endif
}

/* AMX-BF16 (cpuid leaf 7: EDX bits 22 and 24) with the tile state granted
** by the kernel, the level at avx512 and GNN_CPU_AMX not 0 (the tests
** select the vdpbf16ps path with it); asked once: racing threads compute
** the same answer, stored through an atomic */
static int
hasamx(void)
{
#if defined(BGEMM_X86) && defined(__linux__)
	static atomic_int ok = -1;
	int v = atomic_load_explicit(&ok, memory_order_relaxed);

	if (v < 0) {
		unsigned a, b, c, d;
		const char *env = getenv("GNN_CPU_AMX");

		v = hasbf16() && !(env && strcmp(env, "0") == 0) && __get_cpuid_count(7, 0, &a, &b, &c, &d) &&
		    (d >> 22 & 1) && (d >> 24 & 1) &&
		    syscall(SYS_arch_prctl, 0x1023 /* ARCH_REQ_XCOMP_PERM */, 18 /* XTILEDATA */) == 0;
		atomic_store_explicit(&ok, v, memory_order_relaxed);
	}
	return v;
#else
	return 0;
#endif
}

void
gnn_bgemv(const float *a, int64_t K, const uint32_t *P, int64_t N, float *c)
{
#ifdef BGEMM_X86
	if (K % 32 == 0 && K <= 2048 && hasamx()) {
		gemv_amx(a, K, P, N, c);
		return;
	}
	if (hasbf16()) {
		gemv_native(a, K, P, N, c);
		return;
	}
#endif
	gemv_generic(a, K, P, N, c);
}

const char *
gnn_bgemm_isa(void)
{
	return hasamx() ? "amx" : hasbf16() ? "avx512bf16" : "float";
}

void
gnn_bgemm(int64_t m0, int64_t m1, int64_t K, int64_t N, const void *A, int adt, int64_t lda,
	const float *B, int64_t ldb, void *C, int cdt, int64_t ldc)
{
	if (m1 <= m0 || N <= 0)
		return;
	if (K <= 0) {   /* the empty sum: +0 */
		for (int64_t i = m0; i < m1; i++)
			memset((char *)C + (size_t)(i * ldc) * (cdt == GNN_F32 ? 4 : 2), 0,
			       (size_t)N * (cdt == GNN_F32 ? 4 : 2));
		return;
	}
#ifdef BGEMM_X86
	if (hasamx()) {
		amx(m0, m1, K, N, A, adt, lda, B, ldb, C, cdt, ldc);
		return;
	}
	if (hasbf16()) {
		native(m0, m1, K, N, A, adt, lda, B, ldb, C, cdt, ldc);
		return;
	}
#endif
	fallback(m0, m1, K, N, A, adt, lda, B, ldb, C, cdt, ldc);
}
