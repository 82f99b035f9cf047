// Warp 1 reads shared memory that warp 0 writes, without __syncthreads.
#include "common.h"

GNN_DKERNEL(twowarps_k5)(float *o)
{
	GNN_SHARED(float, s, [64]);
	const int t = threadIdx.x;
	if (t < 32)
		s[t] = (float)(t * blockIdx.x);
#ifdef FIXED
	__syncthreads();
#endif
	if (t >= 32)
		o[blockIdx.x * 32 + t - 32] = s[t - 32];
}

int main(void)
{
	float *o, h[4 * 32];
	CHECK(cudaMalloc(&o, sizeof h));
	GNN_LAUNCH(twowarps_k5, 4, 64, 0, 0)(o);
	CHECK(cudaMemcpy(h, o, sizeof h, cudaMemcpyDeviceToHost));
	printf("o[33] = %g\n", h[33]);
	return 0;
}
