/*
** dropout.c: the cpu target's dropout kernel, gnn_dropout_rows: the mask
** of philox.h (gnn_dropout_keep: element t takes word t % 4 of the
** Philox4x32-10 block t / 4), drawn for 64 (avx512: 16 blocks) or 32
** (avx2: 8 blocks) consecutive elements at once, the four words of each
** block transposed into element order in registers.
**
** Why here and not in the generated loop: a scalar Philox block is ~250
** instructions per element, most of a training step's time on Cora's
** input dropout; compilers do not vectorize it well (gcc reaches for
** 64-bit lane multiplies, clang not at all), while 32 x 32 -> 64-bit
** even/odd lane multiplies (vpmuludq) do a round of 16 blocks in about
** as many instructions as one scalar round.
**
** Bits: the same as gnn_dropout_keep's on every path (the draw is exact
** integer work; the keep test compares the draw's 24 bits, converted
** exactly, with p * 2^24, which is exact too), and a kept element is
** x * scale rounded once, as the generated scalar code computes it.
** A run of 64 (or 32) elements whose inputs are all +0.0 is stored as
** +0.0 without drawing: kept or not, that is what they give.  The path
** is gemm.c's instruction-set level (GNN_CPU_ISA lowers it).
*/
#include <stdint.h>

#include "internal.h"
#include "philox.h"

#if defined(__x86_64__) && defined(__GNUC__)
#define DROP_X86 1
#include <immintrin.h>
#endif

#define M0 0xD2511F53u
#define M1 0xCD9E8D57u
#define W0 0x9E3779B9u
#define W1 0xBB67AE85u

/* x and out point at element t0, here and below */
static void
gen_rows(int64_t t0, int64_t t1, uint64_t seed, uint64_t step, uint32_t stream, float p, float scale,
	const float *x, float *out)
{
	for (int64_t t = t0; t < t1; t++)
		out[t - t0] = gnn_dropout_keep(seed, step, stream, (uint64_t)t, p) ? x[t - t0] * scale : 0.0f;
}

#ifdef DROP_X86

#define T_AVX2 __attribute__((target("avx2")))
#define T_AVX512 __attribute__((target("avx512f")))

/* Philox4x32-10 of the 8 blocks b0 .. b0+7 (counter (b low, b high,
** stream, step)): x[w] holds word w of each */
static inline T_AVX2 void
avx2_blocks(uint64_t b0, uint32_t stream, uint32_t step, uint32_t k0, uint32_t k1, __m256i x[4])
{
	const __m256i lane = _mm256_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7), sign = _mm256_set1_epi32(INT32_MIN);
	const __m256i m0 = _mm256_set1_epi32((int32_t)M0), m1 = _mm256_set1_epi32((int32_t)M1);
	__m256i base = _mm256_set1_epi32((int32_t)(uint32_t)b0);
	__m256i x0 = _mm256_add_epi32(base, lane);
	/* the low word wrapped (x0 < base, unsigned): carry into the high */
	__m256i c = _mm256_cmpgt_epi32(_mm256_xor_si256(base, sign), _mm256_xor_si256(x0, sign));
	__m256i x1 = _mm256_sub_epi32(_mm256_set1_epi32((int32_t)(uint32_t)(b0 >> 32)), c);
	__m256i x2 = _mm256_set1_epi32((int32_t)stream), x3 = _mm256_set1_epi32((int32_t)step);

	for (int r = 0; r < 10; r++) {
		__m256i e0 = _mm256_mul_epu32(x0, m0), o0 = _mm256_mul_epu32(_mm256_srli_epi64(x0, 32), m0);
		__m256i e1 = _mm256_mul_epu32(x2, m1), o1 = _mm256_mul_epu32(_mm256_srli_epi64(x2, 32), m1);
		__m256i hi0 = _mm256_blend_epi32(_mm256_srli_epi64(e0, 32), o0, 0xAA);
		__m256i lo0 = _mm256_blend_epi32(e0, _mm256_slli_epi64(o0, 32), 0xAA);
		__m256i hi1 = _mm256_blend_epi32(_mm256_srli_epi64(e1, 32), o1, 0xAA);
		__m256i lo1 = _mm256_blend_epi32(e1, _mm256_slli_epi64(o1, 32), 0xAA);

		x0 = _mm256_xor_si256(_mm256_xor_si256(hi1, x1), _mm256_set1_epi32((int32_t)k0));
		x2 = _mm256_xor_si256(_mm256_xor_si256(hi0, x3), _mm256_set1_epi32((int32_t)k1));
		x1 = lo1;
		x3 = lo0;
		k0 += W0;
		k1 += W1;
	}
	/* into element order: element 4i + w is word w of block i */
	{
		__m256i a = _mm256_unpacklo_epi32(x0, x1), b = _mm256_unpackhi_epi32(x0, x1);
		__m256i cc = _mm256_unpacklo_epi32(x2, x3), d = _mm256_unpackhi_epi32(x2, x3);
		__m256i e0 = _mm256_unpacklo_epi64(a, cc), e1 = _mm256_unpackhi_epi64(a, cc);
		__m256i e2 = _mm256_unpacklo_epi64(b, d), e3 = _mm256_unpackhi_epi64(b, d);
		x[0] = _mm256_permute2x128_si256(e0, e1, 0x20);
		x[1] = _mm256_permute2x128_si256(e2, e3, 0x20);
		x[2] = _mm256_permute2x128_si256(e0, e1, 0x31);
		x[3] = _mm256_permute2x128_si256(e2, e3, 0x31);
	}
}

/* elements t .. t+32 (t a multiple of 4): eight blocks, four words each */
static T_AVX2 void
avx2_rows(int64_t t0, int64_t t1, uint64_t seed, uint64_t step, uint32_t stream, float p, float scale,
	const float *x, float *out)
{
	const __m256 pv = _mm256_set1_ps(p * 16777216.0f), sv = _mm256_set1_ps(scale);
	int64_t t = (t0 + 3) & ~(int64_t)3;

	if (t > t1)
		t = t1;
	gen_rows(t0, t, seed, step, stream, p, scale, x, out);
	for (; t + 32 <= t1; t += 32) {
		__m256 xv[4];
		__m256i any = _mm256_setzero_si256(), w[4];

		for (int q = 0; q < 4; q++) {
			xv[q] = _mm256_loadu_ps(x + (t - t0) + 8 * q);
			any = _mm256_or_si256(any, _mm256_castps_si256(xv[q]));
		}
		if (_mm256_testz_si256(any, any)) {
			for (int q = 0; q < 4; q++)
				_mm256_storeu_ps(out + (t - t0) + 8 * q, _mm256_setzero_ps());
			continue;
		}
		avx2_blocks((uint64_t)t >> 2, stream, (uint32_t)step, (uint32_t)seed, (uint32_t)(seed >> 32), w);
		for (int q = 0; q < 4; q++) {
			__m256 u = _mm256_cvtepi32_ps(_mm256_srli_epi32(w[q], 8));
			__m256 keep = _mm256_cmp_ps(u, pv, _CMP_GE_OQ);
			_mm256_storeu_ps(out + (t - t0) + 8 * q, _mm256_and_ps(keep, _mm256_mul_ps(xv[q], sv)));
		}
	}
	gen_rows(t, t1, seed, step, stream, p, scale, x + (t - t0), out + (t - t0));
}

/* Philox4x32-10 of the 16 blocks b0 .. b0+15, x[q] the words of
** elements 4*b0 + 16q .. +15 in element order */
static inline T_AVX512 void
avx512_blocks(uint64_t b0, uint32_t stream, uint32_t step, uint32_t k0, uint32_t k1, __m512i x[4])
{
	const __m512i lane = _mm512_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15);
	const __m512i m0 = _mm512_set1_epi32((int32_t)M0), m1 = _mm512_set1_epi32((int32_t)M1);
	__m512i base = _mm512_set1_epi32((int32_t)(uint32_t)b0);
	__m512i x0 = _mm512_add_epi32(base, lane);
	__m512i hi = _mm512_set1_epi32((int32_t)(uint32_t)(b0 >> 32));
	__m512i x1 = _mm512_mask_add_epi32(hi, _mm512_cmplt_epu32_mask(x0, base), hi, _mm512_set1_epi32(1));
	__m512i x2 = _mm512_set1_epi32((int32_t)stream), x3 = _mm512_set1_epi32((int32_t)step);

	for (int r = 0; r < 10; r++) {
		__m512i e0 = _mm512_mul_epu32(x0, m0), o0 = _mm512_mul_epu32(_mm512_srli_epi64(x0, 32), m0);
		__m512i e1 = _mm512_mul_epu32(x2, m1), o1 = _mm512_mul_epu32(_mm512_srli_epi64(x2, 32), m1);
		__m512i hi0 = _mm512_mask_blend_epi32(0xAAAA, _mm512_srli_epi64(e0, 32), o0);
		__m512i lo0 = _mm512_mask_blend_epi32(0xAAAA, e0, _mm512_slli_epi64(o0, 32));
		__m512i hi1 = _mm512_mask_blend_epi32(0xAAAA, _mm512_srli_epi64(e1, 32), o1);
		__m512i lo1 = _mm512_mask_blend_epi32(0xAAAA, e1, _mm512_slli_epi64(o1, 32));

		/* 0x96: a ^ b ^ c */
		x0 = _mm512_ternarylogic_epi32(hi1, x1, _mm512_set1_epi32((int32_t)k0), 0x96);
		x2 = _mm512_ternarylogic_epi32(hi0, x3, _mm512_set1_epi32((int32_t)k1), 0x96);
		x1 = lo1;
		x3 = lo0;
		k0 += W0;
		k1 += W1;
	}
	/* a 4 x 4 transpose in each 128-bit lane (e_j: blocks j, j+4, j+8,
	** j+12, four words each), then of the lanes */
	{
		__m512i a = _mm512_unpacklo_epi32(x0, x1), b = _mm512_unpackhi_epi32(x0, x1);
		__m512i c = _mm512_unpacklo_epi32(x2, x3), d = _mm512_unpackhi_epi32(x2, x3);
		__m512i e0 = _mm512_unpacklo_epi64(a, c), e1 = _mm512_unpackhi_epi64(a, c);
		__m512i e2 = _mm512_unpacklo_epi64(b, d), e3 = _mm512_unpackhi_epi64(b, d);
		__m512i f0 = _mm512_shuffle_i32x4(e0, e1, 0x44), f1 = _mm512_shuffle_i32x4(e2, e3, 0x44);
		__m512i f2 = _mm512_shuffle_i32x4(e0, e1, 0xEE), f3 = _mm512_shuffle_i32x4(e2, e3, 0xEE);
		x[0] = _mm512_shuffle_i32x4(f0, f1, 0x88);
		x[1] = _mm512_shuffle_i32x4(f0, f1, 0xDD);
		x[2] = _mm512_shuffle_i32x4(f2, f3, 0x88);
		x[3] = _mm512_shuffle_i32x4(f2, f3, 0xDD);
	}
}

/* elements t .. t+64 (t a multiple of 4): sixteen blocks, four words each */
static T_AVX512 void
avx512_rows(int64_t t0, int64_t t1, uint64_t seed, uint64_t step, uint32_t stream, float p, float scale,
	const float *x, float *out)
{
	const __m512 pv = _mm512_set1_ps(p * 16777216.0f), sv = _mm512_set1_ps(scale);
	int64_t t = (t0 + 3) & ~(int64_t)3;

	if (t > t1)
		t = t1;
	gen_rows(t0, t, seed, step, stream, p, scale, x, out);
	for (; t + 64 <= t1; t += 64) {
		__m512 xv[4];
		__m512i any = _mm512_setzero_si512(), w[4];

		for (int q = 0; q < 4; q++) {
			xv[q] = _mm512_loadu_ps(x + (t - t0) + 16 * q);
			any = _mm512_or_si512(any, _mm512_castps_si512(xv[q]));
		}
		if (!_mm512_test_epi32_mask(any, any)) {
			for (int q = 0; q < 4; q++)
				_mm512_storeu_ps(out + (t - t0) + 16 * q, _mm512_setzero_ps());
			continue;
		}
		avx512_blocks((uint64_t)t >> 2, stream, (uint32_t)step, (uint32_t)seed, (uint32_t)(seed >> 32), w);
		for (int q = 0; q < 4; q++) {
			__m512 u = _mm512_cvtepi32_ps(_mm512_srli_epi32(w[q], 8));
			__mmask16 keep = _mm512_cmp_ps_mask(u, pv, _CMP_GE_OQ);
			_mm512_storeu_ps(out + (t - t0) + 16 * q, _mm512_maskz_mul_ps(keep, xv[q], sv));
		}
	}
	gen_rows(t, t1, seed, step, stream, p, scale, x + (t - t0), out + (t - t0));
}

#endif /* DROP_X86 */

void
gnn_dropout_rows(int64_t t0, int64_t t1, uint64_t seed, uint64_t step, uint32_t stream, float p,
	float scale, const float *x, float *out)
{
	if (t1 > t0)
		gnn_dropout_span(t0, t1, seed, step, stream, p, scale, x + t0, out + t0);
}

void
gnn_dropout_span(int64_t t0, int64_t t1, uint64_t seed, uint64_t step, uint32_t stream, float p,
	float scale, const float *x, float *out)
{
#ifdef DROP_X86
	switch (gnn_cpu_level_()) {
	case 2:
		avx512_rows(t0, t1, seed, step, stream, p, scale, x, out);
		return;
	case 1:
		avx2_rows(t0, t1, seed, step, stream, p, scale, x, out);
		return;
	}
#endif
	gen_rows(t0, t1, seed, step, stream, p, scale, x, out);
}
