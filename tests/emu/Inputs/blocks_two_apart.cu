// Blocks 0 and 2 of a 3-block grid both store into out[0] (FIXED: each
// block its own element).  Nothing orders two blocks, so it is a race;
// but blocks two apart run on the same recycled ThreadSanitizer fibers,
// which order them, and only the emulator's own check of global memory
// across blocks finds it.
#include "common.h"

GNN_DKERNEL(twoapart_k10)(float *out, const float *x)
{
	const int t = threadIdx.x;
	if (t == 0 && blockIdx.x != 1) {
#ifdef FIXED
		out[blockIdx.x] = x[blockIdx.x];
#else
		out[0] = x[blockIdx.x];
#endif
	}
}

int main(void)
{
	float *x, *o, h[3] = {1, 2, 3}, r[3];
	CHECK(cudaMalloc(&x, sizeof h));
	CHECK(cudaMalloc(&o, sizeof r));
	CHECK(cudaMemcpy(x, h, sizeof h, cudaMemcpyHostToDevice));
	CHECK(cudaMemset(o, 0, sizeof r));
	GNN_LAUNCH(twoapart_k10, 3, 64, 0, 0)(o, x);
	CHECK(cudaMemcpy(r, o, sizeof r, cudaMemcpyDeviceToHost));
	printf("o[0] = %g\n", r[0]);
	return 0;
}
