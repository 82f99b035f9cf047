// __syncthreads inside a branch that half the block takes.
#include "common.h"

GNN_DKERNEL(halves_k3)(float *o)
{
	GNN_SHARED(float, s, [256]);
	const int t = threadIdx.x;
	s[t] = (float)t;
#ifdef FIXED
	__syncthreads();
	if (t < 128)
		o[blockIdx.x * 256 + t] = s[255 - t];
#else
	if (t < 128) {
		__syncthreads();
		o[blockIdx.x * 256 + t] = s[255 - t];
	}
#endif
}

int main(void)
{
	float *o, h[2 * 128];
	CHECK(cudaMalloc(&o, 2 * 256 * sizeof(float)));
	GNN_LAUNCH(halves_k3, 2, 256, 0, 0)(o);
	CHECK(cudaMemcpy(h, o, 128 * sizeof(float), cudaMemcpyDeviceToHost));
	printf("o[0] = %g\n", h[0]);
	return 0;
}
