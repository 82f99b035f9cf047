/*
** gemm.c: single-precision GEMM for the dense transforms of generated
** code (C = A @ B, A tall, B small and reused), dense and zero-skipping.
**
** Threads. None of our own: the caller splits rows across its OpenMP
** threads and calls gnn_sgemm_rows per range, so nothing here allocates
** or writes shared state (the one static, the chosen path, is an atomic
** that every thread computes to the same value).
**
** Dispatch. Each instruction set is a table (struct gemmisa) of a dense
** microkernel and two sparse helpers, compiled with target attributes so
** that one libgnnrt.a carries AVX-512, AVX2+FMA and portable C; the
** table is picked once from __builtin_cpu_supports, lowered (never
** raised) by GNN_CPU_ISA=generic|avx2|avx512 so tests can run each path.
**
** Blocking. B is packed once into panels of NR = 16 columns, each a
** contiguous K x 16 block (the last panel zero-padded), so a microkernel
** reads its B as one 64-byte row per k whatever B's strides were. Rows go
** in chunks of MC; inside a chunk K goes in blocks of kc, then groups of
** up to four panels (group() says how many), then MR-row tiles, each
** tile x group's accumulators in registers. A group's kc rows of B stay
** in L1 while the tiles sweep the chunk, whose rows of A stay in L2
** across the groups (a tile's rows in L1 across the groups, the order
** before, ran the forward shapes 5-10% and PubMed's weight gradients up
** to 70% slower); A is read in place (not packed), and tails are masked
** loads and stores, never reads past A's, B's or C's ends.
**
** Bits. Every C element is one multiply-add chain over k = 0, 1, ...,
** K-1 in order, starting from +0 (or from C's old value with
** GNN_SGEMM_ACC); between k blocks the running value waits in C itself,
** which is exact. The FMA paths fuse each step; the generic path fuses
** where the compiler has a fast fmaf and otherwise multiplies then adds.
** So, on one path, neither kc, MR nor the row split changes a bit, and
** the sparse form, which leaves out the steps whose a is zero, gives the
** dense form's bits when B is finite: such a step adds an exact zero.
**
** 16-bit storage (gnn_hgemm, --precision): A in bfloat16 or half words
** is decoded a block of rows at a time into a float scratch, C's block
** is computed in float and encoded (rounded to nearest even) as it is
** stored; the product between is the float path's, so its bits too.
*/
#include <stdatomic.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <math.h>

#include "internal.h"
#include "gnnhalf.h"

#if defined(__x86_64__) && defined(__GNUC__)
#define GEMM_X86 1
#include <immintrin.h>
#endif

#define NR 16          /* columns of a packed panel */
#define MC 256         /* rows of a chunk */
/* columns of A scanned per pass of the sparse form: all of them for the
** usual widths (a second pass reloads C just after the first stored it,
** which store forwarding does not serve for masked stores); the buffers
** take 16 KiB of stack */
#define SPCHUNK 2048
#define MRMAX 16       /* the most rows any microkernel takes */

#define ALWAYS_INLINE inline __attribute__((always_inline))

/* dense microkernel: rows A[r*lda + k] (at: A given transposed, the
** same element at A[k*lda + r]), r < mr, k < kc, times np panels
** (panel p's row k at B + p*ps + k*bs: packed, bs = NR and ps = K*NR; B
** as it is, bs = its row stride and ps = NR) of which ncols columns are
** real, into C; load: continue the chains from C instead of starting
** from zero.  Columns past ncols are never read, so an unpacked B's last
** row is not overrun. */
typedef void kernfn(int mr, int np, int64_t kc, const float *A, int64_t lda, int at,
	const float *B, int64_t bs, int64_t ps, float *C, int64_t ldc, int64_t ncols, int load);

/* A's element of row r, column k; at is a constant in every body */
#define AEL(A, lda, at, r, k) ((A) + ((at) ? (k) * (lda) + (r) : (r) * (lda) + (k)))
/* the nonzeros of a[0..n) as k0-based indices and values; the buffers
** have n + 16 slots (the vector forms store whole vectors) */
typedef int64_t nzfn(const float *a, int64_t n, int64_t k0, int32_t *idx, float *val);
/* c[0..N) (chain continued from c when load, else from zero) plus the
** given rows of B (laid out as for kernfn) scaled by val, in the given
** order */
typedef void spfn(int64_t nnz, const int32_t *idx, const float *val,
	const float *B, int64_t bs, int64_t ps, int64_t N, float *c, int load);

/* y[0..n) += a * x[0..n), each step one multiply-add (fused as the
** path's kernels fuse) */
typedef void axfn(int64_t n, float a, const float *x, float *y);

struct gemmisa {
	const char *name;
	int np;          /* the most panels a dense tile spans */
	int mr[5];       /* tile rows for 1, 2, ... panels (index np) */
	kernfn *kern;
	nzfn *nz;
	spfn *sp;
	axfn *ax;
};

#define CASES4(X)  X(1) X(2) X(3) X(4)
#define CASES6(X)  CASES4(X) X(5) X(6)

/* the portable path */

/* one step of a chain: fused where the target fuses cheaply, else a
** multiply then an add (and with no FMA there is nothing to contract) */
static ALWAYS_INLINE float
madd(float a, float b, float acc)
{
#ifdef __FP_FAST_FMAF
	return fmaf(a, b, acc);
#else
	return acc + a * b;
#endif
}

static ALWAYS_INLINE void
gen_body(const int mr, int64_t kc, const float *A, int64_t lda, const int at, const float *B,
	int64_t bs, float *C, int64_t ldc, int64_t ncols, int load)
{
	float acc[4][NR];

	for (int r = 0; r < mr; r++)
		for (int j = 0; j < NR; j++)
			acc[r][j] = load && j < ncols ? C[r * ldc + j] : 0.0f;
	for (int64_t k = 0; k < kc; k++) {
		const float *b = B + k * bs;
		for (int r = 0; r < mr; r++) {
			float a = *AEL(A, lda, at, r, k);
			for (int j = 0; j < ncols; j++)
				acc[r][j] = madd(a, b[j], acc[r][j]);
		}
	}
	for (int r = 0; r < mr; r++)
		for (int j = 0; j < ncols; j++)
			C[r * ldc + j] = acc[r][j];
}

static void
gen_kern(int mr, int np, int64_t kc, const float *A, int64_t lda, int at, const float *B,
	int64_t bs, int64_t ps, float *C, int64_t ldc, int64_t ncols, int load)
{
	(void)np;
	(void)ps;
	if (at)
		switch (mr) {
#define X(r) case r: gen_body(r, kc, A, lda, 1, B, bs, C, ldc, ncols, load); return;
		CASES4(X)
#undef X
		}
	switch (mr) {
#define X(r) case r: gen_body(r, kc, A, lda, 0, B, bs, C, ldc, ncols, load); return;
	CASES4(X)
#undef X
	}
}

static int64_t
gen_nz(const float *a, int64_t n, int64_t k0, int32_t *idx, float *val)
{
	int64_t m = 0;

	for (int64_t k = 0; k < n; k++)
		if (a[k] != 0.0f) {   /* NaN counts as nonzero, as in the dense form */
			idx[m] = (int32_t)(k0 + k);
			val[m++] = a[k];
		}
	return m;
}

static void
gen_sp(int64_t nnz, const int32_t *idx, const float *val, const float *B,
	int64_t bs, int64_t ps, int64_t N, float *c, int load)
{
	for (int64_t n0 = 0; n0 < N; n0 += NR) {
		const float *P = B + n0 / NR * ps;
		int64_t w = N - n0 < NR ? N - n0 : NR;
		float acc[NR];

		for (int j = 0; j < NR; j++)
			acc[j] = load && j < w ? c[n0 + j] : 0.0f;
		for (int64_t t = 0; t < nnz; t++) {
			const float *b = P + (int64_t)idx[t] * bs;
			for (int j = 0; j < w; j++)
				acc[j] = madd(val[t], b[j], acc[j]);
		}
		memcpy(c + n0, acc, (size_t)w * sizeof(float));
	}
}

static void
gen_ax(int64_t n, float a, const float *x, float *y)
{
	for (int64_t j = 0; j < n; j++)
		y[j] = madd(a, x[j], y[j]);
}

static const struct gemmisa isa_generic = {"generic", 1, {0, 4}, gen_kern, gen_nz, gen_sp, gen_ax};

#ifdef GEMM_X86

/* AVX2 + FMA: a panel is two ymm; 6 x 16 tiles (12 accumulators) */

#define T_AVX2 __attribute__((target("avx2,fma")))

/* lanes j < n of a ymm: the mask of vmaskmovps, which neither reads nor
** writes (nor faults on) the others */
static ALWAYS_INLINE T_AVX2 __m256i
avx2_mask(int64_t n)
{
	const __m256i iota = _mm256_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7);
	int32_t m = n < 0 ? 0 : n > 8 ? 8 : (int32_t)n;

	return _mm256_cmpgt_epi32(_mm256_set1_epi32(m), iota);
}

static ALWAYS_INLINE T_AVX2 void
avx2_body(const int mr, int64_t kc, const float *A, int64_t lda, const int at, const float *B,
	int64_t bs, float *C, int64_t ldc, int64_t ncols, int load)
{
	__m256 acc[6][2];
	__m256i m0 = avx2_mask(ncols), m1 = avx2_mask(ncols - 8);

#pragma GCC unroll 6
	for (int r = 0; r < mr; r++) {
		acc[r][0] = load ? _mm256_maskload_ps(C + r * ldc, m0) : _mm256_setzero_ps();
		acc[r][1] = load ? _mm256_maskload_ps(C + r * ldc + 8, m1) : _mm256_setzero_ps();
	}
	for (int64_t k = 0; k < kc; k++) {
		__m256 b0 = _mm256_maskload_ps(B + k * bs, m0), b1 = _mm256_maskload_ps(B + k * bs + 8, m1);
#pragma GCC unroll 6
		for (int r = 0; r < mr; r++) {
			__m256 a = _mm256_broadcast_ss(AEL(A, lda, at, r, k));
			acc[r][0] = _mm256_fmadd_ps(a, b0, acc[r][0]);
			acc[r][1] = _mm256_fmadd_ps(a, b1, acc[r][1]);
		}
	}
#pragma GCC unroll 6
	for (int r = 0; r < mr; r++) {
		_mm256_maskstore_ps(C + r * ldc, m0, acc[r][0]);
		_mm256_maskstore_ps(C + r * ldc + 8, m1, acc[r][1]);
	}
}

static T_AVX2 void
avx2_kern(int mr, int np, int64_t kc, const float *A, int64_t lda, int at, const float *B,
	int64_t bs, int64_t ps, float *C, int64_t ldc, int64_t ncols, int load)
{
	(void)np;
	(void)ps;
	if (at)
		switch (mr) {
#define X(r) case r: avx2_body(r, kc, A, lda, 1, B, bs, C, ldc, ncols, load); return;
		CASES6(X)
#undef X
		}
	switch (mr) {
#define X(r) case r: avx2_body(r, kc, A, lda, 0, B, bs, C, ldc, ncols, load); return;
	CASES6(X)
#undef X
	}
}

static T_AVX2 int64_t
avx2_nz(const float *a, int64_t n, int64_t k0, int32_t *idx, float *val)
{
	int64_t m = 0;

	for (int64_t k = 0; k < n; k += 8) {
		__m256 v = _mm256_maskload_ps(a + k, avx2_mask(n - k));
		/* unordered: NaN is nonzero; lanes past n load as zero */
		unsigned bits = (unsigned)_mm256_movemask_ps(
			_mm256_cmp_ps(v, _mm256_setzero_ps(), _CMP_NEQ_UQ));

		while (bits) {
			int t = __builtin_ctz(bits);
			idx[m] = (int32_t)(k0 + k + t);
			val[m++] = a[k + t];
			bits &= bits - 1;
		}
	}
	return m;
}

/* four panels (eight ymm chains) at a time */
static T_AVX2 void
avx2_sp(int64_t nnz, const int32_t *idx, const float *val, const float *B,
	int64_t bs, int64_t ps, int64_t N, float *c, int load)
{
	for (int64_t n0 = 0; n0 < N; n0 += 4 * NR) {
		int nv = (int)((N - n0 + 7) / 8);
		__m256 acc[8];
		__m256i m[8];

		if (nv > 8)
			nv = 8;
		for (int v = 0; v < 8; v++) {
			m[v] = avx2_mask(N - n0 - 8 * v);
			acc[v] = load ? _mm256_maskload_ps(c + n0 + 8 * v, m[v]) : _mm256_setzero_ps();
		}
		for (int64_t t = 0; t < nnz; t++) {
			__m256 a = _mm256_set1_ps(val[t]);
			const float *b = B + n0 / NR * ps + (int64_t)idx[t] * bs;
			for (int v = 0; v < nv; v++)
				acc[v] = _mm256_fmadd_ps(a, _mm256_maskload_ps(b + (v >> 1) * ps + (v & 1) * 8, m[v]), acc[v]);
		}
		for (int v = 0; v < nv; v++)
			_mm256_maskstore_ps(c + n0 + 8 * v, m[v], acc[v]);
	}
}

static T_AVX2 void
avx2_ax(int64_t n, float a, const float *x, float *y)
{
	const __m256 av = _mm256_set1_ps(a);
	int64_t j = 0;

	for (; j + 8 <= n; j += 8)
		_mm256_storeu_ps(y + j, _mm256_fmadd_ps(av, _mm256_loadu_ps(x + j), _mm256_loadu_ps(y + j)));
	if (j < n) {
		__m256i m = avx2_mask(n - j);
		_mm256_maskstore_ps(y + j, m, _mm256_fmadd_ps(av, _mm256_maskload_ps(x + j, m), _mm256_maskload_ps(y + j, m)));
	}
}

static const struct gemmisa isa_avx2 = {"avx2", 1, {0, 6}, avx2_kern, avx2_nz, avx2_sp, avx2_ax};

/* AVX-512: a panel is one zmm; tiles of 12 rows x 2 panels (24 of the
** 32 registers accumulate) or 16 rows x 1 panel */

#define T_AVX512 __attribute__((target("avx512f")))

static ALWAYS_INLINE T_AVX512 void
avx512_body(const int mr, const int np, int64_t kc, const float *A, int64_t lda, const int at,
	const float *B, int64_t bs, int64_t ps, float *C, int64_t ldc, int64_t ncols, int load)
{
	__m512 acc[MRMAX][4], b[4];
	__mmask16 m[4];

	for (int p = 0; p < np; p++)
		m[p] = gnn_mask16(ncols - 16 * p);
#pragma GCC unroll 16
	for (int r = 0; r < mr; r++)
#pragma GCC unroll 4
		for (int p = 0; p < np; p++)
			acc[r][p] = load ? _mm512_maskz_loadu_ps(m[p], C + r * ldc + p * 16)
				: _mm512_setzero_ps();
	for (int64_t k = 0; k < kc; k++) {
#pragma GCC unroll 4
		for (int p = 0; p < np; p++)
			b[p] = _mm512_maskz_loadu_ps(m[p], B + p * ps + k * bs);
#pragma GCC unroll 16
		for (int r = 0; r < mr; r++) {
			__m512 a = _mm512_set1_ps(*AEL(A, lda, at, r, k));
#pragma GCC unroll 4
			for (int p = 0; p < np; p++)
				acc[r][p] = _mm512_fmadd_ps(a, b[p], acc[r][p]);
		}
	}
#pragma GCC unroll 16
	for (int r = 0; r < mr; r++)
#pragma GCC unroll 4
		for (int p = 0; p < np; p++)
			_mm512_mask_storeu_ps(C + r * ldc + p * 16, m[p], acc[r][p]);
}

static T_AVX512 void
avx512_kern(int mr, int np, int64_t kc, const float *A, int64_t lda, int at, const float *B,
	int64_t bs, int64_t ps, float *C, int64_t ldc, int64_t ncols, int load)
{
	if (ncols == 16 * np) {
		/* whole panels (all but a last narrow one): the masks are
		** constants and the loads plain, where a mask reloaded from
		** the stack each k took a load port (128 x 128 and the weight
		** gradients 4-9% faster, 500 x 128 forward the same) */
		if (at) {
#define X(r, p) avx512_body(r, p, kc, A, lda, 1, B, bs, ps, C, ldc, 16 * p, load)
			GNN_TILES(np, mr, X)
#undef X
		}
#define X(r, p) avx512_body(r, p, kc, A, lda, 0, B, bs, ps, C, ldc, 16 * p, load)
		GNN_TILES(np, mr, X)
#undef X
	}
	if (at) {
#define X(r, p) avx512_body(r, p, kc, A, lda, 1, B, bs, ps, C, ldc, ncols, load)
		GNN_TILES(np, mr, X)
#undef X
	}
#define X(r, p) avx512_body(r, p, kc, A, lda, 0, B, bs, ps, C, ldc, ncols, load)
	GNN_TILES(np, mr, X)
#undef X
}

/* 64 columns a step: at the densities where the sparse form is used most
** steps hold no nonzero and cost four compares and a branch */
static T_AVX512 int64_t
avx512_nz(const float *a, int64_t n, int64_t k0, int32_t *idx, float *val)
{
	const __m512i iota = _mm512_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15);
	int64_t m = 0;

	for (int64_t k = 0; k < n; k += 64) {
		__m512 v[4];
		__mmask16 nz[4];

		/* one stream at a time draws less from the prefetchers than
		** the dense tiles' many, so ask 2 KiB ahead: 15% faster from
		** memory. Past a's end near the end, harmless for a hint
		** (integer arithmetic, so no out-of-bounds pointer either) */
		for (int q = 0; q < 4; q++)
			_mm_prefetch((const char *)((uintptr_t)(a + k) + 2048 + 64 * q), _MM_HINT_T0);
#pragma GCC unroll 4
		for (int q = 0; q < 4; q++) {
			/* lanes past n load as zero; unordered: NaN is nonzero */
			v[q] = _mm512_maskz_loadu_ps(gnn_mask16(n - k - 16 * q), a + k + 16 * q);
			nz[q] = _mm512_cmp_ps_mask(v[q], _mm512_setzero_ps(), _CMP_NEQ_UQ);
		}
		if ((nz[0] | nz[1] | nz[2] | nz[3]) == 0)
			continue;
#pragma GCC unroll 4
		for (int q = 0; q < 4; q++) {
			__m512i ix = _mm512_add_epi32(iota, _mm512_set1_epi32((int32_t)(k0 + k + 16 * q)));
			/* whole-vector stores of the compressed lanes (the buffers
			** have 16 floats of slack): a register compress beats
			** vcompress to memory on most cores */
			_mm512_storeu_si512(idx + m, _mm512_maskz_compress_epi32(nz[q], ix));
			_mm512_storeu_ps(val + m, _mm512_maskz_compress_ps(nz[q], v[q]));
			m += __builtin_popcount(nz[q]);
		}
	}
	return m;
}

/* nv panels from column n0 on, their chains in registers */
static ALWAYS_INLINE T_AVX512 void
avx512_spbody(const int nv, int64_t nnz, const int32_t *idx, const float *val,
	const float *P, int64_t bs, int64_t ps, int64_t w, float *c, int load)
{
	__m512 acc[4];
	__mmask16 m[4];

#pragma GCC unroll 4
	for (int v = 0; v < nv; v++) {
		m[v] = gnn_mask16(w - 16 * v);
		acc[v] = load ? _mm512_maskz_loadu_ps(m[v], c + 16 * v) : _mm512_setzero_ps();
	}
	for (int64_t t = 0; t < nnz; t++) {
		__m512 a = _mm512_set1_ps(val[t]);
		const float *b = P + (int64_t)idx[t] * bs;
#pragma GCC unroll 4
		for (int v = 0; v < nv; v++)
			acc[v] = _mm512_fmadd_ps(a, _mm512_maskz_loadu_ps(m[v], b + v * ps), acc[v]);
	}
#pragma GCC unroll 4
	for (int v = 0; v < nv; v++)
		_mm512_mask_storeu_ps(c + 16 * v, m[v], acc[v]);
}

/* four panels (four zmm chains) at a time */
static T_AVX512 void
avx512_sp(int64_t nnz, const int32_t *idx, const float *val, const float *B,
	int64_t bs, int64_t ps, int64_t N, float *c, int load)
{
	for (int64_t n0 = 0; n0 < N; n0 += 4 * NR) {
		const float *P = B + n0 / NR * ps;
		int64_t w = N - n0;

		switch (w > 3 * NR ? 4 : (int)(w + NR - 1) / NR) {
#define X(v) case v: avx512_spbody(v, nnz, idx, val, P, bs, ps, w, c + n0, load); break;
		CASES4(X)
#undef X
		}
	}
}

static T_AVX512 void
avx512_ax(int64_t n, float a, const float *x, float *y)
{
	const __m512 av = _mm512_set1_ps(a);
	int64_t j = 0;

	for (; j + 16 <= n; j += 16)
		_mm512_storeu_ps(y + j, _mm512_fmadd_ps(av, _mm512_loadu_ps(x + j), _mm512_loadu_ps(y + j)));
	if (j < n) {
		__mmask16 m = gnn_mask16(n - j);
		_mm512_mask_storeu_ps(y + j, m, _mm512_fmadd_ps(av, _mm512_maskz_loadu_ps(m, x + j), _mm512_maskz_loadu_ps(m, y + j)));
	}
}

static const struct gemmisa isa_avx512 = {"avx512", 4, {0, 16, 12, 8, 6}, avx512_kern, avx512_nz, avx512_sp, avx512_ax};

#endif /* GEMM_X86 */

/* dispatch */

/* the paths by level; a level the build lacks is NULL */
static const struct gemmisa *const isas[] = {
	&isa_generic,
#ifdef GEMM_X86
	&isa_avx2, &isa_avx512,
#else
	NULL, NULL,
#endif
};

static int
cpu_level(void)
{
#ifdef GEMM_X86
	/* libgcc's probe also checks that the OS saves the wider registers */
	if (__builtin_cpu_supports("avx512f"))
		return 2;
	if (__builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma"))
		return 1;
#endif
	return 0;
}

static int
pick_level(void)
{
	int hw = cpu_level();
	const char *want = getenv("GNN_CPU_ISA");

	for (int l = 0; want && l <= hw; l++)
		if (strcmp(want, isas[l]->name) == 0)
			return l;
	return hw;
}

/* Computed on first use by whichever thread gets there; racing threads
** compute and store the same value, through an atomic, so it is no data
** race. The environment is read once: GNN_CPU_ISA must be set before the
** process's first gnn_sgemm_* (or gnn_dropout_rows) call. */
int
gnn_cpu_level_(void)
{
	static atomic_int level = -1;
	int l = atomic_load_explicit(&level, memory_order_relaxed);

	if (l < 0) {
		l = pick_level();
		atomic_store_explicit(&level, l, memory_order_relaxed);
	}
	return l;
}

static const struct gemmisa *
isa(void)
{
	return isas[gnn_cpu_level_()];
}

const char *
gnn_sgemm_isa(void)
{
	return isa()->name;
}

/* packing */

static int64_t
panels(int64_t N)
{
	return (N + NR - 1) / NR;
}

int64_t
gnn_sgemm_packed_floats(int64_t K, int64_t N)
{
	return K <= 0 || N <= 0 ? 0 : K * panels(N) * NR;
}

void
gnn_sgemm_pack(float *Bp, const float *B, int64_t K, int64_t N, int64_t sk, int64_t sn)
{
	for (int64_t p = 0; p < panels(N); p++)
		for (int64_t k = 0; k < K; k++) {
			float *d = Bp + (p * K + k) * NR;
			for (int64_t j = 0; j < NR; j++) {
				int64_t n = p * NR + j;
				d[j] = n < N ? B[k * sk + n * sn] : 0.0f;
			}
		}
}

/* products */

/* The nothing-to-add cases: K == 0 gives zeros (or leaves C with
** GNN_SGEMM_ACC); returns whether the caller is done. */
static int
trivial(int64_t m0, int64_t m1, int64_t K, int64_t N, float *C, int64_t ldc, int flags)
{
	if (m1 <= m0 || N <= 0)
		return 1;
	if (K > 0)
		return 0;
	if (!(flags & GNN_SGEMM_ACC))
		for (int64_t i = m0; i < m1; i++)
			memset(C + i * ldc, 0, (size_t)N * sizeof(float));
	return 1;
}

/* The library's kc. B's kc x N slice stays in L2 across a chunk's
** tiles (a group's kc rows of it in L1). For the shapes of GNN layers B
** fits in L2 whole, and then not cutting K at all is fastest (A's rows
** stream whole, C is written once): measured, no kc < K came within 10%
** of kc = K on them. Else cut K to keep the slice at 1 MiB and, with more
** than four panels, at 1024 rows (chosen when a tile's rows of A stayed
** in L1 across the groups, 6 x kc floats at 24 KiB, the loop order
** before group()'s; not measured again since). */
static int64_t
default_kc(int64_t N, int several)
{
	int64_t kc = (1 << 18) / (panels(N) * NR);

	if (several && kc > 1024)
		kc = 1024;
	return kc < 256 ? 256 : kc;
}

/* Panels a group: AVX-512's 12-row x 2-panel tiles (24 accumulators,
** two B loads and twelve broadcasts a k) where B has more panels than
** one, 8 x 3 for three, and for a weight gradient (A read transposed)
** 6 x 4. Measured on 19717 rows, one thread, interleaved against 6 x 4
** for every shape (bench/cpu/gemm_speed.c's): forward 500 x 128 and
** 128 x 128 ran 10-20% faster, 32 x 32 40%; the weight gradients with
** many input columns (1433 x 16 or 64, 500 x 64) lost 20-40% with two.
** A weight gradient of 32 rows or more takes 8 x 3: 500 x 128 (GIN's
** first layer on PubMed's 19717 rows) 4-8% faster than 6 x 4, 128 x 128
** and 40 x 128 5-14%, 500 x 64 and 1433 x 64 about 5%; 16 rows (1433 x
** 16) ran 20% slower, so those keep 6 x 4. */
static int
group(const struct gemmisa *t, int64_t np, int at, int64_t rows)
{
	int g = at ? (rows >= 32 ? 3 : 4) : np == 3 ? 4 : 2;

	g = g < t->np ? g : t->np;
	return np < g ? (int)np : g;
}

/* bias (a Linear's, or NULL): bias[n] added to rows [i0, i1) of C once
** their chains are done, while they are in cache; a float add after the
** chain, as a kernel of its own adds it, so the bits are the same */
static void
addbias(float *C, int64_t ldc, int64_t i0, int64_t i1, int64_t N, const float *bias)
{
	if (!bias)
		return;
	for (int64_t i = i0; i < i1; i++)
		for (int64_t n = 0; n < N; n++)
			C[i * ldc + n] += bias[n];
}

/* The product for B laid out as kernfn says (packed or as it is). */
static void
dense(int64_t m0, int64_t m1, int64_t K, int64_t N, const float *A, int64_t lda, int at,
	const float *B, int64_t bs, int64_t ps, float *C, int64_t ldc, int64_t kc, int flags, const float *bias)
{
	const struct gemmisa *t = isa();
	int64_t np = panels(N);
	int g0;

	if (trivial(m0, m1, K, N, C, ldc, flags)) {
		addbias(C, ldc, m0, m1, N, bias);
		return;
	}
	if (kc <= 0)
		kc = default_kc(N, np > t->np);
	g0 = group(t, np, at, m1 - m0);
	for (int64_t i0 = m0; i0 < m1; i0 += MC) {
		int64_t i1 = m1 - i0 < MC ? m1 : i0 + MC;
		for (int64_t k0 = 0; k0 < K; k0 += kc) {
			int64_t kb = K - k0 < kc ? K - k0 : kc;
			int load = k0 > 0 || (flags & GNN_SGEMM_ACC);
			for (int64_t p = 0; p < np; p += g0) {
				/* tile rows are set by the widest group; a narrower
				** one (the last) takes as many, having registers to
				** spare */
				int g = np - p < g0 ? (int)(np - p) : g0;
				int64_t ncols = N - p * NR < g * NR ? N - p * NR : g * NR;
				for (int64_t i = i0; i < i1; i += t->mr[g0]) {
					int mr = i1 - i < t->mr[g0] ? (int)(i1 - i) : t->mr[g0];
					t->kern(mr, g, kb, AEL(A, lda, at, i, k0), lda, at, B + p * ps + k0 * bs, bs, ps,
						C + i * ldc + p * NR, ldc, ncols, load);
				}
			}
		}
		addbias(C, ldc, i0, i1, N, bias);
	}
}

/* sparse()'s flag beside GNN_SGEMM_ACC: A's values rounded to bfloat16
** as read (gnn_bgemm_sparse), only its nonzeros, which are all it reads */
#define SP_ABF16 0x100

static void
sparse(int64_t m0, int64_t m1, int64_t K, int64_t N, const float *A, int64_t lda,
	const float *B, int64_t bs, int64_t ps, float *C, int64_t ldc, int flags, const float *bias)
{
	const struct gemmisa *t = isa();
	int32_t idx[SPCHUNK + 16];
	float val[SPCHUNK + 16];

	if (trivial(m0, m1, K, N, C, ldc, flags)) {
		addbias(C, ldc, m0, m1, N, bias);
		return;
	}
	for (int64_t i = m0; i < m1; i++) {
		for (int64_t k0 = 0; k0 < K; k0 += SPCHUNK) {
			int64_t kb = K - k0 < SPCHUNK ? K - k0 : SPCHUNK;
			int64_t nnz = t->nz(A + i * lda + k0, kb, k0, idx, val);
			for (int64_t j = 0; (flags & SP_ABF16) && j < nnz; j++)
				val[j] = gnn_round_bf16(val[j]);
			/* a chunk with no nonzeros changes nothing, unless it must
			** start the chains */
			if (nnz > 0 || (k0 == 0 && !(flags & GNN_SGEMM_ACC)))
				t->sp(nnz, idx, val, B, bs, ps, N, C + i * ldc, k0 > 0 || (flags & GNN_SGEMM_ACC));
		}
		addbias(C, ldc, i, i + 1, N, bias);
	}
}

void
gnn_sgemm_rows(int64_t m0, int64_t m1, int64_t K, int64_t N, const float *A, int64_t lda,
	const float *Bp, float *C, int64_t ldc, int64_t kc, int flags)
{
	dense(m0, m1, K, N, A, lda, 0, Bp, NR, K * NR, C, ldc, kc, flags, NULL);
}

void
gnn_sgemm_rows_sparse(int64_t m0, int64_t m1, int64_t K, int64_t N, const float *A,
	int64_t lda, const float *Bp, float *C, int64_t ldc, int flags)
{
	sparse(m0, m1, K, N, A, lda, Bp, NR, K * NR, C, ldc, flags, NULL);
}

/* floats of gnn_sgemm's packed B (256 KiB of stack, as much as the
** generated kernels take: a 500 x 128 or 128 x 128 weight whole) */
#define PACKMAX 65536
/* rows from which packing B pays (measured on 19717 rows: 500 x 128,
** 71 GFLOP/s as it lies, 106 packed) */
#define PACKROWS 64

/* B as it is: panel p is the 16 columns from 16p on, its rows ldb apart.
** Read in place, every k of a tile is a line of its own, on a row ldb
** apart, which the prefetchers serve poorly: a weight-sized B (PACKMAX
** floats packed) that enough rows reuse is packed first. A tall B (a
** weight gradient's node-count rows) is not: packing it would be one
** more pass over all of it, read once anyway. The product is the same
** chains, so the bits are the same. */
static void
product(int64_t m0, int64_t m1, int64_t K, int64_t N, const float *A, int64_t lda, int at,
	const float *B, int64_t ldb, float *C, int64_t ldc, int64_t kc, int flags, const float *bias)
{
	float bp[PACKMAX] __attribute__((aligned(64)));

	if (m1 - m0 < PACKROWS || K <= 0 || N <= 0 || gnn_sgemm_packed_floats(K, N) > PACKMAX) {
		dense(m0, m1, K, N, A, lda, at, B, ldb, NR, C, ldc, kc, flags, bias);
		return;
	}
	gnn_sgemm_pack(bp, B, K, N, ldb, 1);
	dense(m0, m1, K, N, A, lda, at, bp, NR, K * NR, C, ldc, kc, flags, bias);
}

void
gnn_sgemm(int64_t m0, int64_t m1, int64_t K, int64_t N, const float *A, int64_t lda,
	const float *B, int64_t ldb, float *C, int64_t ldc, int64_t kc, int flags)
{
	product(m0, m1, K, N, A, lda, 0, B, ldb, C, ldc, kc, flags, NULL);
}

void
gnn_sgemm_sparse(int64_t m0, int64_t m1, int64_t K, int64_t N, const float *A, int64_t lda,
	const float *B, int64_t ldb, float *C, int64_t ldc, int flags)
{
	sparse(m0, m1, K, N, A, lda, B, ldb, NR, C, ldc, flags, NULL);
}

void
gnn_sgemm_bias(int64_t m0, int64_t m1, int64_t K, int64_t N, const float *A, int64_t lda,
	const float *B, int64_t ldb, const float *bias, float *C, int64_t ldc, int64_t kc, int flags)
{
	product(m0, m1, K, N, A, lda, 0, B, ldb, C, ldc, kc, flags, bias);
}

void
gnn_sgemm_sparse_bias(int64_t m0, int64_t m1, int64_t K, int64_t N, const float *A, int64_t lda,
	const float *B, int64_t ldb, const float *bias, float *C, int64_t ldc, int flags)
{
	sparse(m0, m1, K, N, A, lda, B, ldb, NR, C, ldc, flags, bias);
}

/* The sparse form wins below this share of nonzeros in A (measured with
** bench/cpu/gemm_speed.c; see docs/codegen.md). */
#define SPARSE_DENSITY 0.08

/* weight gradients: C = A @ B with the reduction over K the node count */

/* floats of the sparse form's accumulators (256 KiB of stack, as much
** as generated kernels take; wide enough that a task's columns are one
** pass over B for M up to 256) */
#define WGACC 65536

/* The dense form's k block: rows of B, read as they lie, spanning at
** most 512 KiB (rows ldb floats apart), 64 to 512 of them. default_kc's
** 4096 rows (for 64 columns) spanned as many pages and missed the TLB,
** and 512 rows ran 1.6-2.4x faster on PubMed's shapes; a fixed 512 was
** still too many where B's rows are long: 64 to 128 rows of 1433 floats
** ran 1.3-1.8x faster (1433 x 16 and 64, one thread on 19717 rows),
** 256 of 500 about 5% (bench/cpu/gemm_speed.c's way). */
static int64_t
wgkc(int64_t ldb)
{
	int64_t kc = ((int64_t)1 << 17) / (ldb > 0 ? ldb : 1);

	return kc < 64 ? 64 : kc > 512 ? 512 : kc;
}

/* the columns [q0, q0 + n) of C, n * M <= WGACC: accumulated transposed,
** acc[j*M + m], a column of A (ak) scaled by each nonzero of B's row k;
** A[m][k] at A + m*sm + k*sk (sm = 1: A given transposed, its columns
** read in place) */
static void
wgrad_sparse(const struct gemmisa *t, int64_t q0, int64_t n, int64_t M, int64_t K, const float *A,
	int64_t sm, int64_t sk, const float *B, int64_t ldb, float *C, int64_t ldc)
{
	float acc[WGACC], ak[WGACC / NR], val[SPCHUNK + 16];
	int32_t idx[SPCHUNK + 16];

	memset(acc, 0, (size_t)(n * M) * sizeof *acc);
	for (int64_t k = 0; k < K; k++) {
		int64_t nnz = t->nz(B + k * ldb + q0, n, 0, idx, val);
		const float *a = A + k * sk;

		if (nnz == 0)
			continue;
		if (sm != 1) {
			for (int64_t m = 0; m < M; m++)
				ak[m] = a[m * sm];
			a = ak;
		}
		for (int64_t j = 0; j < nnz; j++)
			t->ax(M, val[j], a, acc + (int64_t)idx[j] * M);
	}
	for (int64_t m = 0; m < M; m++)
		for (int64_t j = 0; j < n; j++)
			C[m * ldc + q0 + j] = acc[j * M + m];
}

/* gnn_sgemm_wgrad's and gnn_sgemm_wgradt's sparse form; 0 if it does
** not apply */
static int
wgrad_sparse_range(int64_t p0, int64_t p1, int64_t M, int64_t K, const float *A, int64_t sm, int64_t sk,
	const float *B, int64_t ldb, float *C, int64_t ldc, int sparse)
{
	const struct gemmisa *t = isa();
	int64_t w;

	if (!sparse || M > WGACC / NR)
		return 0;
	w = WGACC / M / NR * NR;
	if (w > SPCHUNK)
		w = SPCHUNK;
	for (int64_t q0 = p0; q0 < p1; q0 += w)
		wgrad_sparse(t, q0, p1 - q0 < w ? p1 - q0 : w, M, K, A, sm, sk, B, ldb, C, ldc);
	return 1;
}

/* A given transposed, G = A^T (K x M, rows ldg apart): the microkernels
** read G in place (a tile's rows of A, for each k, are adjacent floats of
** one row of G), where a transpose kernel of its own wrote all of A to
** memory and the GEMM read it back, and a transpose of G's blocks into a
** scratch cost as much as it saved; the chains are gnn_sgemm_wgrad's on
** A, so are the bits */
void
gnn_sgemm_wgradt(int64_t p0, int64_t p1, int64_t M, int64_t K, const float *G, int64_t ldg,
	const float *B, int64_t ldb, float *C, int64_t ldc, int sparse)
{
	if (p1 <= p0 || M <= 0 || wgrad_sparse_range(p0, p1, M, K, G, 1, ldg, B, ldb, C, ldc, sparse))
		return;
	product(0, M, K, p1 - p0, G, ldg, 1, B + p0, ldb, C + p0, ldc, wgkc(ldb), 0, NULL);
}

void
gnn_sgemm_wgrad(int64_t p0, int64_t p1, int64_t M, int64_t K, const float *A, int64_t lda,
	const float *B, int64_t ldb, float *C, int64_t ldc, int sparse)
{
	if (p1 <= p0 || M <= 0 || wgrad_sparse_range(p0, p1, M, K, A, lda, 1, B, ldb, C, ldc, sparse))
		return;
	gnn_sgemm(0, M, K, p1 - p0, A, lda, B + p0, ldb, C + p0, ldc, wgkc(ldb), 0);
}

int
gnn_sgemm_sparse_pays(const float *A, int64_t M, int64_t K, int64_t lda)
{
	const struct gemmisa *t = isa();
	int32_t idx[SPCHUNK + 16];
	float val[SPCHUNK + 16];
	int64_t rows = M < 16 ? M : 16, nz = 0;

	if (rows <= 0 || K <= 0)
		return 0;
	/* 16 rows spread over M, counted by the path's vector scan: a
	 * sample of thousands of entries at Cora's widths, read in microseconds */
	for (int64_t s = 0; s < rows; s++) {
		const float *a = A + (s * M / rows) * lda;
		for (int64_t k0 = 0; k0 < K; k0 += SPCHUNK)
			nz += t->nz(a + k0, K - k0 < SPCHUNK ? K - k0 : SPCHUNK, k0, idx, val);
	}
	return (double)nz < SPARSE_DENSITY * (double)(rows * K);
}

/* 16-bit A or C (--precision): blocks of HROWS rows converted to float
** in a scratch while they are in cache (A's block: HROWS * K floats,
** 256 KiB at K = 2048), multiplied by the float path, and C's block
** stored rounded; a row's chain is the float path's, so the bits are
** those of the float GEMM on the 16-bit values. */
#define HROWS 32

static void
loadrows(float *dst, const void *src, int dt, int64_t rows, int64_t K, int64_t ld)
{
	for (int64_t r = 0; r < rows; r++) {
		float *d = dst + r * K;
		const uint16_t *h = (const uint16_t *)src + r * ld;
		if (dt == GNN_BF16)
			for (int64_t k = 0; k < K; k++)
				d[k] = gnn_ld_bf16(h[k]);
		else
			for (int64_t k = 0; k < K; k++)
				d[k] = gnn_ld_f16(h[k]);
	}
}

static void
storerows(void *dst, int dt, const float *src, int64_t rows, int64_t N, int64_t ld)
{
	for (int64_t r = 0; r < rows; r++) {
		const float *x = src + r * N;
		uint16_t *h = (uint16_t *)dst + r * ld;
		if (dt == GNN_BF16)
			for (int64_t n = 0; n < N; n++)
				h[n] = gnn_st_bf16(x[n]);
		else
			for (int64_t n = 0; n < N; n++)
				h[n] = gnn_st_f16(x[n]);
	}
}

/* gnn_hgemm, and with spflags SP_ABF16 gnn_bgemm_sparse */
static void
halfgemm(int64_t m0, int64_t m1, int64_t K, int64_t N, const void *A, int adt, int64_t lda,
	const float *B, int64_t ldb, void *C, int cdt, int64_t ldc, int64_t kc, int sp, int spflags)
{
	float *a = NULL, *c = NULL;

	if (m1 <= m0)
		return;
	if ((adt != GNN_F32 && !(a = malloc((size_t)(HROWS * K + 1) * sizeof *a))) ||
	    (cdt != GNN_F32 && !(c = malloc((size_t)(HROWS * N + 1) * sizeof *c))))
		abort();   /* a few hundred KiB; generated code has no status path here */
	for (int64_t i = m0; i < m1; i += HROWS) {
		int64_t r = m1 - i < HROWS ? m1 - i : HROWS;
		const float *ai = a ? a : (const float *)A + i * lda;
		float *ci = c ? c : (float *)C + i * ldc;
		if (a)
			loadrows(a, (const uint16_t *)A + i * lda, adt, r, K, lda);
		if (sp)
			sparse(0, r, K, N, ai, a ? K : lda, B, ldb, NR, ci, c ? N : ldc, spflags, NULL);
		else
			gnn_sgemm(0, r, K, N, ai, a ? K : lda, B, ldb, ci, c ? N : ldc, kc, 0);
		if (c)
			storerows((uint16_t *)C + i * ldc, cdt, c, r, N, ldc);
	}
	free(a);
	free(c);
}

void
gnn_hgemm(int64_t m0, int64_t m1, int64_t K, int64_t N, const void *A, int adt, int64_t lda,
	const float *B, int64_t ldb, void *C, int cdt, int64_t ldc, int64_t kc, int sp)
{
	halfgemm(m0, m1, K, N, A, adt, lda, B, ldb, C, cdt, ldc, kc, sp, 0);
}

void
gnn_bgemm_sparse(int64_t m0, int64_t m1, int64_t K, int64_t N, const void *A, int adt, int64_t lda,
	const float *B, int64_t ldb, void *C, int cdt, int64_t ldc)
{
	float *b;

	if (m1 <= m0 || N <= 0)
		return;
	/* B rounded as gnn_bgemm rounds it (the weights hold bfloat16
	 * values already: a copy of a few ten KiB a call) */
	if (!(b = malloc((size_t)(K * N + 1) * sizeof *b)))
		abort();   /* generated code has no status path here */
	for (int64_t k = 0; k < K; k++)
		for (int64_t n = 0; n < N; n++)
			b[k * N + n] = gnn_round_bf16(B[k * ldb + n]);
	/* a bfloat16 A's words are exact as floats; a float A's nonzeros
	 * are rounded where the sparse walk reads them */
	halfgemm(m0, m1, K, N, A, adt, lda, b, N, C, cdt, ldc, 0, 1, adt == GNN_F32 ? SP_ABF16 : 0);
	free(b);
}

int
gnn_hgemm_sparse_pays(const void *A, int adt, int64_t M, int64_t K, int64_t lda)
{
	int64_t rows = M < 16 ? M : 16, nz = 0;

	if (adt == GNN_F32)
		return gnn_sgemm_sparse_pays(A, M, K, lda);
	if (rows <= 0 || K <= 0)
		return 0;
	/* +-0 is the one 16-bit zero, in either format */
	for (int64_t s = 0; s < rows; s++) {
		const uint16_t *h = (const uint16_t *)A + (s * M / rows) * lda;
		for (int64_t k = 0; k < K; k++)
			nz += (h[k] & 0x7fffu) != 0;
	}
	return (double)nz < SPARSE_DENSITY * (double)(rows * K);
}
