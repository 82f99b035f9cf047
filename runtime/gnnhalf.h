/*
** gnnhalf.h: 16-bit floats for generated code (--precision=bf16|fp16,
** docs/precision.md).  A float rounded to the nearest bfloat16 or IEEE
** half, ties to even, given back as the float of the same value: the
** value a 16-bit store would hold.  Overflow gives the infinity of the
** sign (bfloat16's by the carry into the exponent, half's above 65504),
** subnormals of either format are kept, NaN stays a quiet NaN with the
** payload the 16-bit format keeps.
**
** Integer and float operations only, no branches, so the loops that call
** them vectorize; no instruction that flushes subnormals (AVX-512's
** vcvtneps2bf16 treats subnormal inputs as zero, so it is not used).
** The interpreter's reference is ir/type.c's round16, in double; the
** tests compare both with NumPy's float16 and an independent bfloat16.
**
** The 16-bit words themselves: gnn_st_bf16 / gnn_st_f16 give the bits a
** 16-bit store writes (the rounding above, then the format's encoding),
** gnn_ld_bf16 / gnn_ld_f16 the float a 16-bit load reads (exact: every
** 16-bit value is a float).  bfloat16 is a shift either way; half's
** encodings are integer and float operations without branches as well,
** or F16C's vcvtph2ps for the load where the compiler targets it.
**
** Header-only, for C and CUDA: generated code includes it beside gnnrt.h.
*/
#ifndef GNNRT_GNNHALF_H
#define GNNRT_GNNHALF_H

#include <stdint.h>
#include <string.h>

#if defined(__CUDACC__)
#define GNN_HALF_FN static __host__ __device__ __forceinline__
#else
#define GNN_HALF_FN static inline
#endif

GNN_HALF_FN uint32_t
gnn_fbits_(float x)
{
	uint32_t u;

	memcpy(&u, &x, sizeof u);
	return u;
}

GNN_HALF_FN float
gnn_bitsf_(uint32_t u)
{
	float x;

	memcpy(&x, &u, sizeof x);
	return x;
}

/* bfloat16 is float's upper half: add half a unit of the kept part (less
 * one, plus the kept part's lowest bit: ties to even) and cut */
GNN_HALF_FN float
gnn_round_bf16(float x)
{
	uint32_t u = gnn_fbits_(x);
	uint32_t r = (u + 0x7fffu + ((u >> 16) & 1u)) & 0xffff0000u;
	uint32_t q = (u | 0x00400000u) & 0xffff0000u;

	return gnn_bitsf_((u & 0x7fffffffu) > 0x7f800000u ? q : r);
}

/* half keeps 11 significant bits down to 2^-14, then the quantum 2^-24:
 * adding and subtracting c = 2^(e + 13) with x's sign (e: x's exponent,
 * at least -14) rounds x to a multiple of 2^(e - 10) in float's own
 * round-to-nearest-even, exactly (x + c stays in c's binade); the sign
 * is put back for the zeros that come out of it */
GNN_HALF_FN float
gnn_round_f16(float x)
{
	uint32_t u = gnn_fbits_(x), a = u & 0x7fffffffu, s = u & 0x80000000u;
	uint32_t e = a >> 23;
	uint32_t ce = (e < 113u ? 113u : e > 142u ? 142u : e) + 13u;
	float c = gnn_bitsf_(s | ce << 23);
	uint32_t r = (gnn_fbits_((x + c) - c) & 0x7fffffffu) | s;
	uint32_t q = (u | 0x00400000u) & 0xffffe000u;

	/* 65520 and above round past 65504, the largest half */
	r = a >= 0x477ff000u ? s | 0x7f800000u : r;
	return gnn_bitsf_(a > 0x7f800000u ? q : r);
}

/* the stored words */
GNN_HALF_FN uint16_t
gnn_st_bf16(float x)
{
	return (uint16_t)(gnn_fbits_(gnn_round_bf16(x)) >> 16);
}

GNN_HALF_FN float
gnn_ld_bf16(uint16_t h)
{
	return gnn_bitsf_((uint32_t)h << 16);
}

/* x rounded to half, then encoded: a normal half moves float's exponent
 * from bias 127 to 15 (the 13 mantissa bits dropped are zeros), a
 * subnormal one is its multiple of 2^-24, NaN and infinity keep
 * mantissa bits 22..13 */
GNN_HALF_FN uint16_t
gnn_st_f16(float x)
{
	uint32_t u = gnn_fbits_(gnn_round_f16(x)), a = u & 0x7fffffffu, s = (u >> 16) & 0x8000u;
	uint32_t n = (a - 0x38000000u) >> 13;
	uint32_t sub = (uint32_t)(gnn_bitsf_(a < 0x38800000u ? a : 0u) * 16777216.0f);
	uint32_t inf = 0x7c00u | ((a >> 13) & 0x3ffu);

	return (uint16_t)(s | (a >= 0x7f800000u ? inf : a >= 0x38800000u ? n : sub));
}

#if defined(__F16C__) && !defined(__CUDACC__)
#include <immintrin.h>
GNN_HALF_FN float
gnn_ld_f16(uint16_t h)
{
	return _cvtsh_ss(h);
}
#else
GNN_HALF_FN float
gnn_ld_f16(uint16_t h)
{
	uint32_t s = (uint32_t)(h & 0x8000u) << 16, e = (h >> 10) & 0x1fu, m = h & 0x3ffu;
	uint32_t n = ((uint32_t)(h & 0x7fffu) << 13) + 0x38000000u;
	uint32_t sub = gnn_fbits_((float)m * (1.0f / 16777216.0f));

	return gnn_bitsf_(s | (e == 31u ? 0x7f800000u | m << 13 : e == 0u ? sub : n));
}
#endif

#endif
