// A row kernel writes one element past the end of a shared array.
#include "common.h"

GNN_DKERNEL(rowsoob_k6)(int64_t T, float *o)
{
	GNN_SHARED(float, shv_, [8 * 16]);
	const int lane_ = threadIdx.x % 16, slot_ = threadIdx.x / 16;
	const int64_t r = (int64_t)blockIdx.x * 8 + slot_;
#ifdef FIXED
	const int64_t n = 16;
#else
	const int64_t n = 17;
#endif
	for (int64_t j = lane_; j < n; j += 16)
		shv_[slot_ * 16 + j] = (float)j;
	__syncwarp();
	if (r < T)
		o[r * 16 + lane_] = shv_[slot_ * 16 + 15 - lane_];
}

int main(void)
{
	const int64_t T = 16;
	float *o, h[T * 16];
	CHECK(cudaMalloc(&o, sizeof h));
	GNN_LAUNCH(rowsoob_k6, 2, 128, 0, 0)(T, o);
	CHECK(cudaMemcpy(h, o, sizeof h, cudaMemcpyDeviceToHost));
	printf("o[0] = %g\n", h[0]);
	return 0;
}
