/*
** philox.h: the counter-based generator behind dropout and parameter
** init, Philox4x32-10 (Salmon et al., "Parallel random numbers: as easy
** as 1, 2, 3", SC'11; the Random123 constants).  A draw is a pure
** function of (counter, key), so every element of a tensor gets its bits
** from its own index: the interpreter, the cpu target and the cuda
** target (one thread per element, in any order) give the same bits.
**
** Header-only, for C and CUDA: generated code, the runtime and the
** interpreter include it.
**
** Streams (counter word 2): dropout uses the op's stream attribute (and
** a block's four words for four elements), init
** the parameter's index with bit 31 set, so that the two never share a
** counter under one seed.
*/
#ifndef GNNRT_PHILOX_H
#define GNNRT_PHILOX_H

#include <stdint.h>

#if defined(__CUDACC__)
#define GNN_PHILOX_FN static __host__ __device__ __forceinline__
#else
#define GNN_PHILOX_FN static inline
#endif

/* out = Philox4x32-10(ctr, key) */
GNN_PHILOX_FN void
gnn_philox4x32(const uint32_t ctr[4], const uint32_t key[2], uint32_t out[4])
{
	uint32_t x0 = ctr[0], x1 = ctr[1], x2 = ctr[2], x3 = ctr[3];
	uint32_t k0 = key[0], k1 = key[1];
	int r;

	for (r = 0; r < 10; r++) {
		uint64_t p0 = (uint64_t)0xD2511F53u * x0, p1 = (uint64_t)0xCD9E8D57u * x2;
		uint32_t y0 = (uint32_t)(p1 >> 32) ^ x1 ^ k0;
		uint32_t y1 = (uint32_t)p1;
		uint32_t y2 = (uint32_t)(p0 >> 32) ^ x3 ^ k1;
		uint32_t y3 = (uint32_t)p0;
		x0 = y0; x1 = y1; x2 = y2; x3 = y3;
		k0 += 0x9E3779B9u;
		k1 += 0xBB67AE85u;
	}
	out[0] = x0; out[1] = x1; out[2] = x2; out[3] = x3;
}

/* The block of counter (c low, c high, stream, step) under the key (the
** seed's two halves). */
GNN_PHILOX_FN void
gnn_philox_block(uint64_t seed, uint64_t step, uint32_t stream, uint64_t c, uint32_t out[4])
{
	uint32_t ctr[4], key[2];

	ctr[0] = (uint32_t)c;
	ctr[1] = (uint32_t)(c >> 32);
	ctr[2] = stream;
	ctr[3] = (uint32_t)step;
	key[0] = (uint32_t)seed;
	key[1] = (uint32_t)(seed >> 32);
	gnn_philox4x32(ctr, key, out);
}

/* A uniform draw in [0, 1), a multiple of 2^-24 (exact in float), for
** element t of stream s under (seed, step): word 0 of the block whose
** counter is (t low, t high, s, step) and key the seed's two halves. */
GNN_PHILOX_FN float
gnn_philox_uniform(uint64_t seed, uint64_t step, uint32_t stream, uint64_t t)
{
	uint32_t o[4];

	gnn_philox_block(seed, step, stream, t, o);
	return (float)(o[0] >> 8) * (1.0f / 16777216.0f);
}

/* Dropout's draw for element t: word t % 4 of the block of t / 4 (four
** elements a block, where init takes a block an element: a mask of a
** wide activation draws a quarter of the blocks; the vector paths of
** dropout.c draw 16 blocks for 64 elements). */
GNN_PHILOX_FN float
gnn_dropout_uniform(uint64_t seed, uint64_t step, uint32_t stream, uint64_t t)
{
	uint32_t o[4];

	gnn_philox_block(seed, step, stream, t >> 2, o);
	return (float)(o[t & 3] >> 8) * (1.0f / 16777216.0f);
}

/* Dropout's mask: element t is kept when its draw is at least p (so a
** fraction 1 - p survives, each scaled by 1 / (1 - p)). */
GNN_PHILOX_FN int
gnn_dropout_keep(uint64_t seed, uint64_t step, uint32_t stream, uint64_t t, float p)
{
	return gnn_dropout_uniform(seed, step, stream, t) >= p;
}

#endif
