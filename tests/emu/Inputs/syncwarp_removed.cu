// A rows kernel as gnncc emits it: each row's lanes write a shared vector,
// then read other lanes' elements.  Without the __syncwarp between, a lane
// reads what another lane writes with nothing ordering them.
#include "common.h"

GNN_DKERNEL_LB(rows_k1, 256)(int64_t T, float *o, const float *x)
{
	GNN_SHARED(float, shv_, [16][16]);
	const int lane_ = threadIdx.x % 16, slot_ = threadIdx.x / 16;
	for (int64_t base_ = (int64_t)blockIdx.x * 16; base_ < T; base_ += (int64_t)gridDim.x * 16) {
		const int64_t r = base_ + slot_;
		const bool live_ = r < T;
		float *v = shv_[slot_];
		if (live_)
			v[lane_] = x[r * 16 + lane_] * 2;
#ifdef FIXED
		__syncwarp();
#endif
		if (live_)
			o[r * 16 + lane_] = v[15 - lane_];
		__syncwarp();
	}
}

int main(void)
{
	const int64_t T = 100;
	float *x, *o, h[T * 16];
	for (int i = 0; i < T * 16; i++)
		h[i] = (float)i;
	CHECK(cudaMalloc(&x, sizeof h));
	CHECK(cudaMalloc(&o, sizeof h));
	CHECK(cudaMemcpy(x, h, sizeof h, cudaMemcpyHostToDevice));
	GNN_LAUNCH(rows_k1, (T + 15) / 16, 256, 0, 0)(T, o, x);
	CHECK(cudaMemcpy(h, o, sizeof h, cudaMemcpyDeviceToHost));
	printf("o[17] = %g\n", h[17]);
	return 0;
}
