/*
** A fake CUDA runtime API for test_program.c: device memory is host
** memory (counted), streams and events are tokens, and every call can be
** made to fail -- the fake_failat-th call from now, and every one after
** it when fake_sticky is set -- so that each error path of the runtime's
** device layer (runtime/device_cuda.c) runs.  Only what device_cuda.c
** calls is here.
*/
#ifndef FAKE_CUDA_RUNTIME_API_H
#define FAKE_CUDA_RUNTIME_API_H

#include <stdlib.h>
#include <string.h>

typedef enum cudaError { cudaSuccess = 0, cudaErrorMemoryAllocation = 2, cudaErrorFake = 999 } cudaError_t;
enum cudaMemcpyKind { cudaMemcpyHostToHost, cudaMemcpyHostToDevice, cudaMemcpyDeviceToHost,
	cudaMemcpyDeviceToDevice, cudaMemcpyDefault };
typedef struct FakeStream *cudaStream_t;
typedef struct FakeEvent *cudaEvent_t;
struct cudaDeviceProp { int major, minor; };
#define cudaStreamNonBlocking 1
typedef struct FakeGraph *cudaGraph_t;
typedef struct FakeGraphExec *cudaGraphExec_t;
enum cudaStreamCaptureMode { cudaStreamCaptureModeGlobal, cudaStreamCaptureModeThreadLocal, cudaStreamCaptureModeRelaxed };
enum cudaMemoryType { cudaMemoryTypeUnregistered, cudaMemoryTypeHost, cudaMemoryTypeDevice, cudaMemoryTypeManaged };
struct cudaPointerAttributes { enum cudaMemoryType type; };
typedef struct cudaGraphExecUpdateResultInfo { int result; } cudaGraphExecUpdateResultInfo;

static long fake_calls, fake_failat = -1, fake_live;
static int fake_sticky, fake_pending;
static int fake_nopin;   /* cudaMallocHost fails (staging then copies from pageable memory) */
static char fake_token;

/* does this call fail? */
static int
fake_fail(void)
{
	long k = fake_calls++;

	return fake_failat >= 0 && (k == fake_failat || (fake_sticky && k > fake_failat));
}

static cudaError_t
fake_ret(void)
{
	return fake_fail() ? cudaErrorFake : cudaSuccess;
}

static inline cudaError_t
cudaStreamCreateWithFlags(cudaStream_t *s, unsigned f)
{
	(void)f;
	*s = (cudaStream_t)&fake_token;
	return fake_ret();
}

static inline cudaError_t
cudaStreamDestroy(cudaStream_t s)
{
	(void)s;
	return cudaSuccess;
}

static inline cudaError_t
cudaMalloc(void **p, size_t n)
{
	if (fake_fail())
		return cudaErrorFake;
	*p = malloc(n);
	fake_live++;
	return cudaSuccess;
}

/* never fails, nor counts as a call: bind's check of its room always
 * passes here (the emulator's cap tests it) */
static inline cudaError_t
cudaMemGetInfo(size_t *f, size_t *t)
{
	*f = *t = (size_t)1 << 40;
	return cudaSuccess;
}

static inline cudaError_t
cudaFree(void *p)
{
	if (p)
		fake_live--;
	free(p);
	return cudaSuccess;
}

static inline cudaError_t
cudaMemcpy(void *d, const void *s, size_t n, enum cudaMemcpyKind k)
{
	(void)k;
	if (fake_fail())
		return cudaErrorFake;
	memmove(d, s, n);
	return cudaSuccess;
}

static inline cudaError_t
cudaMemcpyAsync(void *d, const void *s, size_t n, enum cudaMemcpyKind k, cudaStream_t st)
{
	(void)st;
	return cudaMemcpy(d, s, n, k);
}

static inline cudaError_t
cudaStreamSynchronize(cudaStream_t s)
{
	(void)s;
	return fake_ret();
}

/* a failed launch is reported by the next cudaGetLastError */
static inline cudaError_t
cudaGetLastError(void)
{
	cudaError_t e = fake_pending || fake_fail() ? cudaErrorFake : cudaSuccess;

	fake_pending = 0;
	return e;
}

static inline const char *
cudaGetErrorString(cudaError_t e)
{
	return e == cudaSuccess ? "no error" : "fake failure";
}

static inline cudaError_t
cudaEventCreate(cudaEvent_t *e)
{
	*e = (cudaEvent_t)&fake_token;
	return fake_ret();
}

static inline cudaError_t
cudaEventDestroy(cudaEvent_t e)
{
	(void)e;
	return cudaSuccess;
}

static inline cudaError_t
cudaEventRecord(cudaEvent_t e, cudaStream_t s)
{
	(void)e;
	(void)s;
	return cudaSuccess;
}

static inline cudaError_t
cudaEventSynchronize(cudaEvent_t e)
{
	(void)e;
	return fake_ret();
}

static inline cudaError_t
cudaEventElapsedTime(float *ms, cudaEvent_t a, cudaEvent_t b)
{
	(void)a;
	(void)b;
	*ms = 0.5f;
	return fake_ret();
}

static inline cudaError_t
cudaGetDevice(int *d)
{
	*d = 0;
	return fake_ret();
}

static inline cudaError_t
cudaGetDeviceProperties(struct cudaDeviceProp *p, int d)
{
	(void)d;
	p->major = 9;
	p->minor = 0;
	return fake_ret();
}

/* Page-locked memory is host memory (counted).  A failure is no error of
** the runtime's (forward_host stages through pageable memory then), so
** it comes from fake_nopin, not from the failing call count. */
static inline cudaError_t
cudaMallocHost(void **p, size_t n)
{
	if (fake_nopin)
		return cudaErrorFake;
	*p = malloc(n);
	fake_live++;
	return cudaSuccess;
}

static inline cudaError_t
cudaFreeHost(void *p)
{
	return cudaFree(p);
}

/* every pointer is pageable host memory: forward never writes in place */
static inline cudaError_t
cudaPointerGetAttributes(struct cudaPointerAttributes *a, const void *p)
{
	(void)p;
	a->type = cudaMemoryTypeUnregistered;
	return cudaSuccess;
}

/* The fake device cannot capture (its "kernels" are host code), which is
** the runtime's fallback to plain launches; the rest are never reached. */
static inline cudaError_t
cudaStreamBeginCapture(cudaStream_t s, enum cudaStreamCaptureMode m)
{
	(void)s;
	(void)m;
	return cudaErrorFake;
}

static inline cudaError_t
cudaStreamEndCapture(cudaStream_t s, cudaGraph_t *g)
{
	(void)s;
	*g = NULL;
	return cudaErrorFake;
}

static inline cudaError_t
cudaGraphExecUpdate(cudaGraphExec_t x, cudaGraph_t g, cudaGraphExecUpdateResultInfo *r)
{
	(void)x;
	(void)g;
	r->result = 1;
	return cudaErrorFake;
}

static inline cudaError_t
cudaGraphInstantiateWithFlags(cudaGraphExec_t *x, cudaGraph_t g, unsigned long long f)
{
	(void)g;
	(void)f;
	*x = NULL;
	return cudaErrorFake;
}

static inline cudaError_t
cudaGraphLaunch(cudaGraphExec_t x, cudaStream_t s)
{
	(void)x;
	(void)s;
	return cudaErrorFake;
}

static inline cudaError_t
cudaGraphExecDestroy(cudaGraphExec_t x)
{
	(void)x;
	return cudaSuccess;
}

static inline cudaError_t
cudaGraphDestroy(cudaGraph_t g)
{
	(void)g;
	return cudaSuccess;
}

#endif
