// An off-by-one loop bound writes one element past a cudaMalloc buffer.
#include "common.h"

GNN_DKERNEL(fill_k2)(int64_t T, float *o)
{
#ifdef FIXED
	for (int64_t t = (int64_t)blockIdx.x * blockDim.x + threadIdx.x; t < T; t += (int64_t)blockDim.x * gridDim.x)
#else
	for (int64_t t = (int64_t)blockIdx.x * blockDim.x + threadIdx.x; t <= T; t += (int64_t)blockDim.x * gridDim.x)
#endif
		o[t] = 1.0f;
}

int main(void)
{
	const int64_t T = 1000;
	float *o, h[T];
	CHECK(cudaMalloc(&o, sizeof h));
	GNN_LAUNCH(fill_k2, 4, 256, 0, 0)(T, o);
	CHECK(cudaMemcpy(h, o, sizeof h, cudaMemcpyDeviceToHost));
	printf("o[999] = %g\n", h[999]);
	CHECK(cudaFree(o));
	return 0;
}
