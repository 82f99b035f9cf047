// The host dereferences a cudaMalloc pointer (DEREF), or passes host
// memory to a kernel (ARG).
#include "common.h"

GNN_DKERNEL(scale_k10)(int64_t T, float *o, const float *x)
{
	for (int64_t t = (int64_t)blockIdx.x * blockDim.x + threadIdx.x; t < T; t += (int64_t)blockDim.x * gridDim.x)
		o[t] = 2 * x[t];
}

int main(void)
{
	const int64_t T = 100;
	float *x, *o, h[T];
	for (int i = 0; i < T; i++)
		h[i] = (float)i;
	CHECK(cudaMalloc(&x, sizeof h));
	CHECK(cudaMalloc(&o, sizeof h));
	CHECK(cudaMemcpy(x, h, sizeof h, cudaMemcpyHostToDevice));
#if defined(DEREF) && !defined(FIXED)
	printf("x[3] = %g\n", ((volatile float *)x)[3]);
#endif
#if defined(ARG) && !defined(FIXED)
	GNN_LAUNCH(scale_k10, 1, 128, 0, 0)(T, o, h);
#else
	GNN_LAUNCH(scale_k10, 1, 128, 0, 0)(T, o, x);
#endif
	CHECK(cudaMemcpy(h, o, sizeof h, cudaMemcpyDeviceToHost));
	printf("o[3] = %g\n", h[3]);
	return 0;
}
