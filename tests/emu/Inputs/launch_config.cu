// Launch configurations CUDA refuses: a block of 2048 threads (BIGBLOCK),
// a block over the kernel's __launch_bounds__ (BOUND), more than 48 KiB of
// static shared memory (BIGSHARED).
#include "common.h"

GNN_DKERNEL_LB(bounded_k7, 128)(float *o)
{
	o[blockIdx.x * blockDim.x + threadIdx.x] = 1.0f;
}

GNN_DKERNEL(plain_k8)(float *o)
{
	o[blockIdx.x * blockDim.x + threadIdx.x] = 2.0f;
}

GNN_DKERNEL(bigshared_k9)(float *o)
{
	GNN_SHARED(float, a, [4096]);        // 16 KiB
#ifdef FIXED
	GNN_SHARED(float, b, [8192]);        // 32 KiB: 48 KiB in all
#else
	GNN_SHARED(float, b, [8193]);        // 4 bytes too many
#endif
	a[threadIdx.x] = b[threadIdx.x] = 1.0f;
	o[threadIdx.x] = a[threadIdx.x] + b[threadIdx.x];
}

int main(void)
{
	float *o;
	CHECK(cudaMalloc(&o, 4096 * sizeof(float)));
#if defined(BIGBLOCK)
#ifdef FIXED
	GNN_LAUNCH(plain_k8, 1, 1024, 0, 0)(o);
#else
	GNN_LAUNCH(plain_k8, 1, 2048, 0, 0)(o);
#endif
#elif defined(BOUND)
#ifdef FIXED
	GNN_LAUNCH(bounded_k7, 2, 128, 0, 0)(o);
#else
	GNN_LAUNCH(bounded_k7, 1, 256, 0, 0)(o);
#endif
#else
	GNN_LAUNCH(bigshared_k9, 1, 32, 0, 0)(o);
#endif
	CHECK(cudaDeviceSynchronize());
	printf("launched\n");
	return 0;
}
