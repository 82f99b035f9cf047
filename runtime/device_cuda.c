/*
** device_cuda.c: a CUDA device through the CUDA runtime API -- the only
** calls to it in a compiled model (kernel launches aside).  The same file
** is built for the real runtime (libgnnrt_cuda.a, gnn_device_cuda) and
** for the emulated device (libgnnemu.a, GNN_DEVICE_SYMBOL set to
** gnn_device_cuda_emu), and against a fake runtime in the unit tests,
** which fail each call in turn.
*/
#include <stdio.h>
#include <string.h>

#include <cuda_runtime_api.h>

#include "device.h"

#ifndef GNN_DEVICE_SYMBOL
#define GNN_DEVICE_SYMBOL gnn_device_cuda
#endif
/* bind's graph work on the device (devbind.cu), where it is built beside
 * this file; without it, bind works on the host and uploads */
#ifdef GNN_DEVBIND_SYMBOL
/* a declaration in C too: without extern, C would define it here, zeroed,
 * and the linker would never take devbind.cu's */
#ifdef __cplusplus
extern "C" {
#endif
extern const struct gnn_devbind GNN_DEVBIND_SYMBOL;
#ifdef __cplusplus
}
#endif
#define GNN_DEVBIND (&GNN_DEVBIND_SYMBOL)
#else
#define GNN_DEVBIND NULL
#endif
/* training's optimizer kernel (optim.cu), built beside this file the same
 * way; without it the device has no optimizer */
#ifdef GNN_DEVOPTIM_SYMBOL
#ifdef __cplusplus
extern "C" {
#endif
extern const struct gnn_devoptim GNN_DEVOPTIM_SYMBOL;
#ifdef __cplusplus
}
#endif
#define GNN_DEVOPTIM (&GNN_DEVOPTIM_SYMBOL)
#else
#define GNN_DEVOPTIM NULL
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

static int
cu_meminfo(size_t *free, size_t *total)
{
	cudaError_t err = cudaMemGetInfo(free, total);

	if (err != cudaSuccess)
		cudaGetLastError();   /* the query's error is nobody's */
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

/* profiling's timer: an event recorded on s before what it times ... */
static int
cu_prof_begin(void *s, void **tok)
{
	cudaEvent_t a;
	cudaError_t err;

	*tok = NULL;
	if ((err = cudaEventCreate(&a)) != cudaSuccess)
		return (int)err;
#ifdef GNN_EMU_DEVICE
	gnnemu_count_work(1);   /* the launch's GNN_WORK counters, for the record */
#endif
	if ((err = cudaEventRecord(a, (cudaStream_t)s)) != cudaSuccess) {
		cudaEventDestroy(a);
		return (int)err;
	}
	*tok = (void *)a;
	return 0;
}

/* ... and one after: the microseconds between, once it has passed */
static int
cu_prof_end(void *s, void *tok, double *us, long long w[3])
{
	cudaEvent_t a = (cudaEvent_t)tok, b;
	cudaError_t err;
	float ms = 0;

	w[0] = w[1] = w[2] = -1;
	if ((err = cudaEventCreate(&b)) == cudaSuccess) {
		cudaEventRecord(b, (cudaStream_t)s);
		if ((err = cudaEventSynchronize(b)) == cudaSuccess)
			err = cudaEventElapsedTime(&ms, a, b);
		cudaEventDestroy(b);
	}
	cudaEventDestroy(a);
	*us = 1000.0 * ms;
#ifdef GNN_EMU_DEVICE
	{
		unsigned long long c[3];
		if (gnnemu_last_work(c))
			for (int i = 0; i < 3; i++)
				w[i] = (long long)c[i];
	}
#endif
	return (int)err;
}

static int
cu_elapsed(void *s, void (*fn)(void *, int), void *arg, int k, double *us)
{
	void *tok;
	long long w[3];
	int err;

	if ((err = cu_prof_begin(s, &tok)) != 0)
		return err;
	fn(arg, k);
	return cu_prof_end(s, tok, us, w);
}

static const char *
cu_arch(void)
{
#ifdef GNN_EMU_DEVICE
	/* the emulated device's timings are the CPU's: a key of their own,
	 * so that a real GPU's tuning cache entries never meet them */
	return "emu";
#else
	/* per thread: threads may ask at once, and of different devices */
	static _Thread_local char name[32];
	struct cudaDeviceProp p;
	int dev;

	if (cudaGetDevice(&dev) != cudaSuccess || cudaGetDeviceProperties(&p, dev) != cudaSuccess)
		return NULL;
	snprintf(name, sizeof name, "sm_%d%d", p.major, p.minor);
	return name;
#endif
}

/* ---- forward's extras: memory kinds, page-locked staging, graphs ---- */

static int
cu_memtype(const void *p)
{
	struct cudaPointerAttributes a;

	if (!p)
		return GNN_MEM_PAGEABLE;
	if (cudaPointerGetAttributes(&a, p) != cudaSuccess) {
		cudaGetLastError();   /* the query's error is nobody's */
		return GNN_MEM_PAGEABLE;
	}
	return a.type == cudaMemoryTypeDevice || a.type == cudaMemoryTypeManaged ? GNN_MEM_DEVICE :
	       a.type == cudaMemoryTypeHost ? GNN_MEM_PINNED : GNN_MEM_PAGEABLE;
}

static int
cu_host_alloc(void **p, size_t n)
{
	cudaError_t err = cudaMallocHost(p, n ? n : 1);

	if (err != cudaSuccess)
		*p = NULL;
	return (int)err;
}

static void
cu_host_free(void *p)
{
	if (p)
		cudaFreeHost(p);
}

/* thread-local: forbids what would break our capture on this thread
 * only, so that other threads' CUDA calls go on */
static int
cu_capture_begin(void *s)
{
	return (int)cudaStreamBeginCapture((cudaStream_t)s, cudaStreamCaptureModeThreadLocal);
}

static int
cu_capture_end(void *s, void **exec)
{
	cudaGraph_t g = NULL;
	cudaGraphExec_t x = (cudaGraphExec_t)*exec;
	cudaGraphExecUpdateResultInfo info;
	cudaError_t err = cudaStreamEndCapture((cudaStream_t)s, &g);

	*exec = NULL;
	if (err != cudaSuccess) {
		if (x)
			cudaGraphExecDestroy(x);
		if (g)
			cudaGraphDestroy(g);
		return (int)err;
	}
	/* new pointers in the same launches: an update, far cheaper than
	 * instantiating */
	if (x && cudaGraphExecUpdate(x, g, &info) != cudaSuccess) {
		cudaGetLastError();   /* a refused update is no error of forward's */
		cudaGraphExecDestroy(x);
		x = NULL;
	}
	if (!x && (err = cudaGraphInstantiateWithFlags(&x, g, 0)) != cudaSuccess)
		x = NULL;
	cudaGraphDestroy(g);
	*exec = x;
	return (int)err;
}

static int
cu_graph_launch(void *exec, void *s)
{
	return (int)cudaGraphLaunch((cudaGraphExec_t)exec, (cudaStream_t)s);
}

static void
cu_graph_destroy(void *exec)
{
	if (exec)
		cudaGraphExecDestroy((cudaGraphExec_t)exec);
}

/* staging moves pieces of at least 1 MiB, at most 8 of them: the host's
 * copy of one piece overlaps the transfer of the one before */
enum { STAGE_MIN = 1 << 20, STAGE_MAX = 8 };

static size_t
piece(size_t n)
{
	size_t c = (n + STAGE_MAX - 1) / STAGE_MAX, lo = STAGE_MIN;

	return c < lo ? lo : c;
}

static int
cu_stage_in(void *dst, const void *src, void *pin, size_t n, void *s)
{
	size_t off, c, k = piece(n);
	cudaError_t err = cudaSuccess;

	for (off = 0; off < n && err == cudaSuccess; off += c) {
		c = n - off < k ? n - off : k;
		memcpy((char *)pin + off, (const char *)src + off, c);
		err = cudaMemcpyAsync((char *)dst + off, (char *)pin + off, c, cudaMemcpyHostToDevice, (cudaStream_t)s);
	}
	return (int)err;
}

static int
cu_stage_out(void *dst, const void *src, void *pin, size_t n, void *s)
{
	cudaEvent_t ev[STAGE_MAX];
	size_t off, c, k = piece(n);
	int i, ne = 0;
	cudaError_t err = cudaSuccess;

	if (!n)
		return 0;
	if (n <= k) {   /* one piece: nothing to overlap */
		if ((err = cudaMemcpyAsync(pin, src, n, cudaMemcpyDeviceToHost, (cudaStream_t)s)) == cudaSuccess &&
		    (err = cudaStreamSynchronize((cudaStream_t)s)) == cudaSuccess)
			memcpy(dst, pin, n);
		return (int)err;
	}
	for (off = 0; off < n && err == cudaSuccess; off += c, ne++) {
		c = n - off < k ? n - off : k;
		if ((err = cudaEventCreate(&ev[ne])) != cudaSuccess)
			break;
		if ((err = cudaMemcpyAsync((char *)pin + off, (const char *)src + off, c, cudaMemcpyDeviceToHost,
		                           (cudaStream_t)s)) == cudaSuccess)
			err = cudaEventRecord(ev[ne], (cudaStream_t)s);
	}
	for (i = 0, off = 0; i < ne; i++, off += c) {
		c = n - off < k ? n - off : k;
		if (err == cudaSuccess && (err = cudaEventSynchronize(ev[i])) == cudaSuccess)
			memcpy((char *)dst + off, (char *)pin + off, c);
		cudaEventDestroy(ev[i]);
	}
	return (int)err;
}

static const struct gnn_devfwd cu_fwd = {
	cu_memtype, cu_host_alloc, cu_host_free, cu_capture_begin, cu_capture_end,
	cu_graph_launch, cu_graph_destroy, cu_stage_in, cu_stage_out,
};

static const struct gnn_devprof cu_prof = {cu_prof_begin, cu_prof_end};

#ifdef GNN_EMU_DEVICE
#define CU_REDZONE gnnemu_redzone, gnnemu_redzones
#else
#define CU_REDZONE NULL, NULL
#endif

const gnn_device GNN_DEVICE_SYMBOL = {
	"cuda", 1, cu_stream_create, cu_stream_destroy, cu_alloc, cu_free,
	cu_copy, cu_sync, cu_last_error, cu_errstr, cu_elapsed, cu_arch, GNN_DEVBIND, &cu_fwd, GNN_DEVOPTIM,
	cudaErrorMemoryAllocation, cu_meminfo, &cu_prof, CU_REDZONE,
};
