/*
** init.c: parameter init from a seed (gnnrt.h).  Each element draws from
** its own Philox counter (philox.h), on init's streams (the parameter's
** index with bit 31 set, never dropout's), so a value depends on the
** seed, the parameter and the element only: any device, any order and
** any prefix give the same bits.
*/
#include "internal.h"
#include "philox.h"

void
gnn_init_uniform(float *dst, int64_t n, double bound, uint64_t seed, uint32_t index)
{
	const float b = (float)bound;
	const uint32_t stream = 0x80000000u | index;

	for (int64_t t = 0; t < n; t++) {
		float u = gnn_philox_uniform(seed, 0, stream, (uint64_t)t);
		/* 2u - 1 is exact (u is a multiple of 2^-24): one rounding, the product */
		dst[t] = (2.0f * u - 1.0f) * b;
	}
}
