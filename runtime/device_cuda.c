/*
** device_cuda.c: a CUDA device through the CUDA runtime API -- the only
** calls to it in a compiled model (kernel launches aside).  The same file
** is built for the real runtime (libgnnrt_cuda.a, gnn_device_cuda) and
** for the emulated device (libgnnemu.a, GNN_DEVICE_SYMBOL set to
** gnn_device_cuda_emu), and against a fake runtime in the unit tests,
** which fail each call in turn.
*/
#include <stdio.h>

#include <cuda_runtime_api.h>

#include "device.h"

#ifndef GNN_DEVICE_SYMBOL
#define GNN_DEVICE_SYMBOL gnn_device_cuda
#endif
/* bind's graph work on the device (devbind.cu), where it is built beside
 * this file; without it, bind works on the host and uploads */
#ifdef GNN_DEVBIND_SYMBOL
#ifdef __cplusplus
extern "C"
#endif
const struct gnn_devbind GNN_DEVBIND_SYMBOL;
#define GNN_DEVBIND (&GNN_DEVBIND_SYMBOL)
#else
#define GNN_DEVBIND NULL
#endif

static int
cu_stream_create(void **s)
{
	cudaStream_t st = NULL;
	cudaError_t err = cudaStreamCreateWithFlags(&st, cudaStreamNonBlocking);

	*s = err == cudaSuccess ? (void *)st : NULL;
	return (int)err;
}

static void
cu_stream_destroy(void *s)
{
	if (s)
		cudaStreamDestroy((cudaStream_t)s);
}

static int
cu_alloc(void **p, size_t n)
{
	cudaError_t err = cudaMalloc(p, n);

	if (err != cudaSuccess)
		*p = NULL;
	return (int)err;
}

static void
cu_free(void *p)
{
	if (p)
		cudaFree(p);
}

static int
cu_copy(void *dst, const void *src, size_t n, int dir, void *s, int async)
{
	enum cudaMemcpyKind k = dir == GNN_H2D ? cudaMemcpyHostToDevice :
	                        dir == GNN_D2H ? cudaMemcpyDeviceToHost : cudaMemcpyDefault;

	if (!n)
		return 0;
	if (async)
		return (int)cudaMemcpyAsync(dst, src, n, k, (cudaStream_t)s);
	return (int)cudaMemcpy(dst, src, n, k);
}

static int
cu_sync(void *s)
{
	return (int)cudaStreamSynchronize((cudaStream_t)s);
}

static int
cu_last_error(void)
{
	return (int)cudaGetLastError();
}

static const char *
cu_errstr(int err)
{
	return cudaGetErrorString((cudaError_t)err);
}

static int
cu_elapsed(void *s, void (*fn)(void *, int), void *arg, int k, double *us)
{
	cudaEvent_t a, b;
	cudaError_t err;
	float ms = 0;

	if ((err = cudaEventCreate(&a)) != cudaSuccess)
		return (int)err;
	if ((err = cudaEventCreate(&b)) != cudaSuccess) {
		cudaEventDestroy(a);
		return (int)err;
	}
	cudaEventRecord(a, (cudaStream_t)s);
	fn(arg, k);
	cudaEventRecord(b, (cudaStream_t)s);
	if ((err = cudaEventSynchronize(b)) == cudaSuccess)
		err = cudaEventElapsedTime(&ms, a, b);
	cudaEventDestroy(a);
	cudaEventDestroy(b);
	*us = 1000.0 * ms;
	return (int)err;
}

static const char *
cu_arch(void)
{
#ifdef GNN_EMU_DEVICE
	/* the emulated device's timings are the CPU's: a key of their own,
	 * so that a real GPU's tuning cache entries never meet them */
	return "emu";
#else
	static char name[32];
	struct cudaDeviceProp p;
	int dev;

	if (cudaGetDevice(&dev) != cudaSuccess || cudaGetDeviceProperties(&p, dev) != cudaSuccess)
		return NULL;
	snprintf(name, sizeof name, "sm_%d%d", p.major, p.minor);
	return name;
#endif
}

const gnn_device GNN_DEVICE_SYMBOL = {
	"cuda", 1, cu_stream_create, cu_stream_destroy, cu_alloc, cu_free,
	cu_copy, cu_sync, cu_last_error, cu_errstr, cu_elapsed, cu_arch, GNN_DEVBIND,
};
