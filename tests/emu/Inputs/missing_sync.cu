// A result copied back with cudaMemcpyAsync into page-locked memory is
// read before the stream is synchronized: on a GPU the copy (and the
// kernel before it) may not have run yet.  Eager emulation hides it;
// deferred (GNNEMU_DEFER=1), the host reads the poisoned destination.
// FIXED synchronizes the stream, FIXED_EVENT an event recorded after
// the copy.  The input is staged from pageable memory the host reuses
// at once, which CUDA allows.
#include "common.h"

GNN_DKERNEL(twice_k14)(float *o, const float *x, int n)
{
	int i = blockIdx.x * blockDim.x + threadIdx.x;
	if (i < n)
		o[i] = 2.0f * x[i];
}

int main(void)
{
	enum { N = 300 };
	float h[N], *x, *o, *pin;
	cudaStream_t s;
	cudaEvent_t ev;
	int bad = 0;

	for (int i = 0; i < N; i++)
		h[i] = (float)i;
	CHECK(cudaStreamCreate(&s));
	CHECK(cudaEventCreate(&ev));
	CHECK(cudaMalloc(&x, sizeof h));
	CHECK(cudaMalloc(&o, sizeof h));
	CHECK(cudaMallocHost(&pin, sizeof h));
	CHECK(cudaMemcpyAsync(x, h, sizeof h, cudaMemcpyHostToDevice, s));
	for (int i = 0; i < N; i++)
		h[i] = -1.0f;   /* pageable: staged when issued */
	GNN_LAUNCH(twice_k14, (N + 127) / 128, 128, 0, s)(o, x, N);
	CHECK(cudaMemcpyAsync(pin, o, sizeof h, cudaMemcpyDeviceToHost, s));
	CHECK(cudaEventRecord(ev, s));
#if defined(FIXED)
	CHECK(cudaStreamSynchronize(s));
#elif defined(FIXED_EVENT)
	CHECK(cudaEventSynchronize(ev));
#endif
	for (int i = 0; i < N; i++)
		if (!(pin[i] == 2.0f * (float)i))
			bad++;
	if (bad)
		printf("stale: %d of %d values read before the stream was synchronized\n", bad, N);
	else
		printf("o[%d] = %g\n", N - 1, pin[N - 1]);
	CHECK(cudaFreeHost(pin));
	CHECK(cudaFree(o));
	CHECK(cudaFree(x));
	CHECK(cudaEventDestroy(ev));
	CHECK(cudaStreamDestroy(s));
	return bad != 0;
}
