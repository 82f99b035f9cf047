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

#endif
