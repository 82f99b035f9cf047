// Two host threads on the emulated device, in a fixed interleaving (turns
// handed over by a condition variable): what CUDA keeps per thread is per
// thread.  A thread-local capture in thread A leaves thread B free to
// allocate, copy and launch, and is still valid at its end; a global one
// forbids B's allocation and is invalidated by it; an error B makes is
// B's last error and not A's.
#include <pthread.h>

#include "common.h"

GNN_DKERNEL(scale_k1)(int64_t T, float *o, float a)
{
	for (int64_t t = (int64_t)blockIdx.x * blockDim.x + threadIdx.x; t < T; t += (int64_t)blockDim.x * gridDim.x)
		o[t] *= a;
}

enum { T = 64 };

static pthread_mutex_t mu = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t cv = PTHREAD_COND_INITIALIZER;
static int turn;

/* waits for turn t; done() hands over to the next */
static void
wait_turn(int t)
{
	pthread_mutex_lock(&mu);
	while (turn != t)
		pthread_cond_wait(&cv, &mu);
	pthread_mutex_unlock(&mu);
}

static void
done(void)
{
	pthread_mutex_lock(&mu);
	turn++;
	pthread_cond_broadcast(&cv);
	pthread_mutex_unlock(&mu);
}

static void
expect(const char *who, const char *what, cudaError_t got, cudaError_t want)
{
	printf("%s: %s: %s%s\n", who, what, cudaGetErrorName(got), got == want ? "" : " (UNEXPECTED)");
	fflush(stdout);
}

/* T floats of v on the device */
static float *
filled(float v)
{
	float h[T], *d;

	for (int i = 0; i < T; i++)
		h[i] = v;
	CHECK(cudaMalloc(&d, sizeof h));
	CHECK(cudaMemcpy(d, h, sizeof h, cudaMemcpyHostToDevice));
	return d;
}

/* its first and last elements */
static void
show(const char *who, const char *name, const float *d)
{
	float h[T];

	CHECK(cudaMemcpy(h, d, sizeof h, cudaMemcpyDeviceToHost));
	printf("%s: %s = %g %g\n", who, name, h[0], h[T - 1]);
}

static void *
thread_b(void *arg)
{
	float h[T], *y;
	cudaStream_t s;
	void *p = NULL;

	(void)arg;
	CHECK(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking));
	wait_turn(1);   /* A captures thread-locally */
	expect("B", "cudaMalloc during A's thread-local capture", cudaMalloc((void **)&y, sizeof h), cudaSuccess);
	for (int i = 0; i < T; i++)
		h[i] = 3;
	expect("B", "cudaMemcpy during it", cudaMemcpy(y, h, sizeof h, cudaMemcpyHostToDevice), cudaSuccess);
	GNN_LAUNCH(scale_k1, 1, 32, 0, s)(T, y, 5.0f);
	expect("B", "launch during it", cudaGetLastError(), cudaSuccess);
	show("B", "y", y);
	expect("B", "a copy of an unknown kind", cudaMemcpy(h, h, sizeof h, (cudaMemcpyKind)7),
	       cudaErrorInvalidMemcpyDirection);
	done();
	wait_turn(3);   /* A captures globally */
	expect("B", "cudaMalloc during A's global capture", cudaMalloc(&p, 16), cudaErrorStreamCaptureUnsupported);
	expect("B", "its last error", cudaGetLastError(), cudaErrorStreamCaptureUnsupported);
	done();
	wait_turn(5);   /* A's capture has ended */
	CHECK(cudaFree(y));
	CHECK(cudaStreamDestroy(s));
	return NULL;
}

int
main(void)
{
	pthread_t b;
	cudaStream_t s;
	cudaGraph_t g;
	cudaGraphExec_t ex;
	float *x = filled(2);

	CHECK(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking));
	if (pthread_create(&b, NULL, thread_b, NULL) != 0)
		return 2;
	CHECK(cudaStreamBeginCapture(s, cudaStreamCaptureModeThreadLocal));
	GNN_LAUNCH(scale_k1, 1, 32, 0, s)(T, x, 10.0f);
	done();
	wait_turn(2);
	expect("A", "its last error after B's", cudaGetLastError(), cudaSuccess);
	expect("A", "end of the thread-local capture", cudaStreamEndCapture(s, &g), cudaSuccess);
	CHECK(cudaGraphInstantiate(&ex, g, 0));
	CHECK(cudaGraphLaunch(ex, s));
	CHECK(cudaStreamSynchronize(s));
	show("A", "x", x);
	CHECK(cudaGraphExecDestroy(ex));
	CHECK(cudaGraphDestroy(g));
	CHECK(cudaStreamBeginCapture(s, cudaStreamCaptureModeGlobal));
	done();
	wait_turn(4);
	expect("A", "end of the global capture", cudaStreamEndCapture(s, &g), cudaErrorStreamCaptureInvalidated);
	cudaGetLastError();
	done();
	pthread_join(b, NULL);
	CHECK(cudaFree(x));
	CHECK(cudaStreamDestroy(s));
	return 0;
}
