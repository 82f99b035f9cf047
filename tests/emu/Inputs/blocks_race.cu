// Every block adds its sum into out[0]: a plain += from several blocks is a
// race (FIXED: atomicAdd).  Blocks use the same stacks and shared memory
// one after another, which must not be reported.
#include "common.h"

GNN_DKERNEL(blocks_k12)(float *out, const float *x)
{
	GNN_SHARED(float, s, [128]);
	const int t = threadIdx.x;
	float local[8];
	for (int i = 0; i < 8; i++)
		local[i] = x[blockIdx.x * 128 + t] * i;
	s[t] = local[7];
	__syncthreads();
	for (int d = 64; d > 0; d /= 2) {
		if (t < d)
			s[t] += s[t + d];
		__syncthreads();
	}
	if (t == 0) {
#ifdef FIXED
		atomicAdd(out, s[0]);
#else
		out[0] += s[0];
#endif
	}
}

int main(void)
{
	float *x, *o, h[64 * 128], total = 0;
	for (int i = 0; i < 64 * 128; i++)
		h[i] = 1.0f;
	CHECK(cudaMalloc(&x, sizeof h));
	CHECK(cudaMalloc(&o, sizeof(float)));
	CHECK(cudaMemcpy(x, h, sizeof h, cudaMemcpyHostToDevice));
	CHECK(cudaMemset(o, 0, sizeof(float)));
	GNN_LAUNCH(blocks_k12, 64, 128, 0, 0)(o, x);
	GNN_LAUNCH(blocks_k12, 64, 128, 0, 0)(o, x);
	CHECK(cudaMemcpy(&total, o, sizeof(float), cudaMemcpyDeviceToHost));
	printf("total %g\n", total);
	return 0;
}
