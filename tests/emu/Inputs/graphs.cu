// CUDA Graphs on the emulated device: a stream that captures records its
// launches and async copies instead of running them; cudaGraphLaunch
// replays them in order, as often as asked; cudaGraphExecUpdate gives an
// executable graph new pointers; what capture forbids returns CUDA's
// errors and invalidates the capture.  -DFREED frees a buffer the graph
// takes and launches it again, which the emulator must catch.
#include "common.h"

GNN_DKERNEL(axpb_k1)(int64_t T, float *o, const float *x, float a, float b)
{
	for (int64_t t = (int64_t)blockIdx.x * blockDim.x + threadIdx.x; t < T; t += (int64_t)blockDim.x * gridDim.x)
		o[t] = a * x[t] + b;
}

enum { T = 300 };

/* o[0] and o[T - 1] after copying o back */
static void
show(const char *what, const float *o)
{
	float h[T];

	CHECK(cudaMemcpy(h, o, sizeof h, cudaMemcpyDeviceToHost));
	printf("%s: %g %g\n", what, h[0], h[T - 1]);
}

static void
stats(const char *what)
{
	gnnemu_stats st;

	gnnemu_get_stats(&st);
	printf("%s: kernels %llu (replayed %llu), recorded %llu, captures %llu, instantiated %llu, updated %llu, "
	       "graph launches %llu\n", what, st.kernels, st.replayed, st.recorded, st.captures, st.instantiated,
	       st.updated, st.graph_launches);
}

/* an API call's error code by name */
static void
expect(const char *what, cudaError_t got, cudaError_t want)
{
	printf("%s: %s%s\n", what, cudaGetErrorName(got), got == want ? "" : " (UNEXPECTED)");
	cudaGetLastError();
}

int
main(void)
{
	float h[T], *x, *y, *z, *w;
	cudaStream_t s;
	cudaGraph_t g, g2;
	cudaGraphExec_t ex;
	cudaGraphExecUpdateResultInfo info;
	cudaStreamCaptureStatus st;
	void *p;

	for (int i = 0; i < T; i++)
		h[i] = (float)i;
	CHECK(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking));
	CHECK(cudaMalloc(&x, sizeof h));
	CHECK(cudaMalloc(&y, sizeof h));
	CHECK(cudaMalloc(&z, sizeof h));
	CHECK(cudaMalloc(&w, sizeof h));
	CHECK(cudaMemcpy(x, h, sizeof h, cudaMemcpyHostToDevice));
	CHECK(cudaMemset(y, 0, sizeof h));
	CHECK(cudaMemset(w, 0, sizeof h));

	/* capture: y = 2x + 1, z = 3y, then y copied to w; nothing runs */
	CHECK(cudaStreamBeginCapture(s, cudaStreamCaptureModeThreadLocal));
	CHECK(cudaStreamIsCapturing(s, &st));
	printf("capturing: %d\n", (int)st);
	GNN_LAUNCH(axpb_k1, 2, 128, 0, s)(T, y, x, 2.0f, 1.0f);
	GNN_LAUNCH(axpb_k1, 2, 128, 0, s)(T, z, y, 3.0f, 0.0f);
	CHECK(cudaMemcpyAsync(w, y, sizeof h, cudaMemcpyDeviceToDevice, s));
	CHECK(cudaStreamEndCapture(s, &g));
	CHECK(cudaStreamIsCapturing(s, &st));
	printf("capturing: %d\n", (int)st);
	stats("captured");
	show("y before", y);
	show("w before", w);
	CHECK(cudaGraphInstantiate(&ex, g, 0));
	CHECK(cudaGraphDestroy(g));   /* the executable graph is a copy */
	CHECK(cudaGraphLaunch(ex, s));
	CHECK(cudaStreamSynchronize(s));
	show("z", z);
	show("w", w);
	/* a replay reads the inputs as they are then */
	for (int i = 0; i < T; i++)
		h[i] = 1.0f;
	CHECK(cudaMemcpy(x, h, sizeof h, cudaMemcpyHostToDevice));
	CHECK(cudaGraphLaunch(ex, s));
	show("z again", z);
	stats("replayed");

	/* the same launches on other pointers: an update, not a new graph */
	CHECK(cudaStreamBeginCapture(s, cudaStreamCaptureModeGlobal));
	GNN_LAUNCH(axpb_k1, 2, 128, 0, s)(T, y, x, 2.0f, 5.0f);
	GNN_LAUNCH(axpb_k1, 2, 128, 0, s)(T, w, y, 1.0f, 0.0f);
	CHECK(cudaMemcpyAsync(z, y, sizeof h, cudaMemcpyDeviceToDevice, s));
	CHECK(cudaStreamEndCapture(s, &g));
	CHECK(cudaGraphExecUpdate(ex, g, &info));
	CHECK(cudaGraphDestroy(g));
	CHECK(cudaGraphLaunch(ex, s));
	show("updated w", w);
	/* other launches: the update is refused */
	CHECK(cudaStreamBeginCapture(s, cudaStreamCaptureModeGlobal));
	GNN_LAUNCH(axpb_k1, 2, 128, 0, s)(T, y, x, 2.0f, 5.0f);
	CHECK(cudaStreamEndCapture(s, &g2));
	expect("update of another topology", cudaGraphExecUpdate(ex, g2, &info), cudaErrorGraphExecUpdateFailure);
	printf("update result: %d\n", (int)info.result);
	CHECK(cudaGraphDestroy(g2));

	/* what capture forbids */
	expect("capture on the legacy stream", cudaStreamBeginCapture(0, cudaStreamCaptureModeGlobal),
	       cudaErrorStreamCaptureUnsupported);
	CHECK(cudaStreamBeginCapture(s, cudaStreamCaptureModeGlobal));
	expect("capture twice", cudaStreamBeginCapture(s, cudaStreamCaptureModeGlobal), cudaErrorIllegalState);
	expect("cudaStreamSynchronize while capturing", cudaStreamSynchronize(s), cudaErrorStreamCaptureUnsupported);
	CHECK(cudaStreamIsCapturing(s, &st));
	printf("capturing: %d\n", (int)st);
	expect("launch into an invalidated capture", cudaMemcpyAsync(w, y, 4, cudaMemcpyDeviceToDevice, s),
	       cudaErrorStreamCaptureInvalidated);
	g = (cudaGraph_t)&p;
	expect("end of an invalidated capture", cudaStreamEndCapture(s, &g), cudaErrorStreamCaptureInvalidated);
	printf("graph: %s\n", g ? "made" : "none");
	CHECK(cudaStreamBeginCapture(s, cudaStreamCaptureModeThreadLocal));
	expect("cudaMemcpy while capturing", cudaMemcpy(h, y, sizeof h, cudaMemcpyDeviceToHost),
	       cudaErrorStreamCaptureUnsupported);
	expect("end", cudaStreamEndCapture(s, &g), cudaErrorStreamCaptureInvalidated);
	CHECK(cudaStreamBeginCapture(s, cudaStreamCaptureModeGlobal));
	expect("cudaMalloc while capturing", cudaMalloc(&p, 64), cudaErrorStreamCaptureUnsupported);
	expect("end", cudaStreamEndCapture(s, &g), cudaErrorStreamCaptureInvalidated);
	CHECK(cudaStreamBeginCapture(s, cudaStreamCaptureModeRelaxed));
	expect("cudaMalloc while capturing (relaxed)", cudaMalloc(&p, 64), cudaSuccess);
	CHECK(cudaStreamEndCapture(s, &g));
	CHECK(cudaFree(p));
	CHECK(cudaGraphDestroy(g));
	expect("end without a capture", cudaStreamEndCapture(s, &g), cudaErrorIllegalState);
	stats("after the errors");

#ifdef FREED
	CHECK(cudaFree(y));
#endif
	CHECK(cudaGraphLaunch(ex, s));
	show("last", w);
	CHECK(cudaGraphExecDestroy(ex));
	CHECK(cudaFree(x));
#ifndef FREED
	CHECK(cudaFree(y));
#endif
	CHECK(cudaFree(z));
	CHECK(cudaFree(w));
	CHECK(cudaStreamDestroy(s));
	return 0;
}
