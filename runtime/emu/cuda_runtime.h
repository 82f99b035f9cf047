/*
 * cuda_runtime.h for gnnemu: lets CUDA C++ (what gnncc emits, and
 * hand-written kernels) compile with g++/clang++ as ordinary C++ and run
 * on the emulated device of gnnemu.h.  Compile with
 *
 *   c++ -std=c++17 -fno-exceptions -fno-rtti -I runtime/emu ... libgnnemu.a
 *
 * Kernels are written with gnncc's portable macros (under nvcc the
 * generated file defines them itself, inside #ifndef GNN_EMU):
 *
 *   GNN_DKERNEL(k)(args) { ... }        a kernel (nvcc: static __global__ void k)
 *   GNN_DKERNEL_LB(k, n)(args) { ... }  with __launch_bounds__(n)
 *   GNN_LAUNCH(k, grid, block, shmem, stream)(args...)   k<<<...>>>(args...)
 *   GNN_SHARED(T, name, dims);          __shared__ T name dims;
 *
 * Device builtins (threadIdx, __syncthreads, shuffles, atomics, ...) are
 * macros and inline functions over the core; barriers and collectives pass
 * __FILE__ and __LINE__ so that errors name the source line.  A plain
 * `__shared__` is `static` here: one copy for all blocks, neither fresh nor
 * poisoned per block; use GNN_SHARED for that.
 */
#ifndef GNNEMU_CUDA_RUNTIME_H
#define GNNEMU_CUDA_RUNTIME_H

#ifndef __cplusplus
#error "gnnemu's cuda_runtime.h is for C++ (compile the .cu file with c++ -std=c++17)"
#endif

/* Standard headers first: libstdc++ uses __noinline__ as an attribute name,
 * which the macro below would break, so a .cu that needs more of the C++
 * library (<memory>, say) includes it before this header, as with nvcc's.
 * Only what the shim uses: every model compiles this, and <memory> alone
 * would add a sixth to the compile time. */
#include <math.h>
#include <stdint.h>
#include <stddef.h>
#include <string.h>
#include <type_traits>
#include <utility>

#include "gnnemu.h"

#define GNN_EMU 1

/* ---- qualifiers ---- */
#define __global__
#define __device__
#define __host__
#define __constant__
#define __shared__ static
#define __forceinline__ inline __attribute__((always_inline))
#define __noinline__ __attribute__((noinline))
#define __launch_bounds__(...)

/* ---- types ---- */
typedef gnnemu_uint3 uint3;

/* CUDA's vector type, 16-byte aligned as on the device: a misaligned
 * float4 access is an error (UBSan's, under memcheck) */
struct __attribute__((aligned(16))) float4 {
	float x, y, z, w;
};
static inline float4 make_float4(float x, float y, float z, float w) { return float4{x, y, z, w}; }

struct dim3 {
	unsigned int x, y, z;
	constexpr dim3(unsigned int x_ = 1, unsigned int y_ = 1, unsigned int z_ = 1) : x(x_), y(y_), z(z_) {}
	constexpr dim3(uint3 v) : x(v.x), y(v.y), z(v.z) {}
	constexpr operator uint3() const { return uint3{x, y, z}; }
};

enum cudaError {
	cudaSuccess = 0,
	cudaErrorInvalidValue = 1,
	cudaErrorMemoryAllocation = 2,
	cudaErrorInitializationError = 3,
	cudaErrorInvalidConfiguration = 9,
	cudaErrorInvalidDevicePointer = 17,
	cudaErrorInvalidMemcpyDirection = 21,
	cudaErrorNoDevice = 100,
	cudaErrorInvalidDevice = 101,
	cudaErrorInvalidResourceHandle = 400,
	cudaErrorIllegalState = 401,
	cudaErrorNotReady = 600,
	cudaErrorIllegalAddress = 700,
	cudaErrorLaunchOutOfResources = 701,
	cudaErrorLaunchFailure = 719,
	cudaErrorStreamCaptureUnsupported = 900,
	cudaErrorStreamCaptureInvalidated = 901,
	cudaErrorStreamCaptureUnmatched = 903,
	cudaErrorGraphExecUpdateFailure = 910,
	cudaErrorUnknown = 999
};
typedef enum cudaError cudaError_t;

enum cudaMemcpyKind {
	cudaMemcpyHostToHost = 0,
	cudaMemcpyHostToDevice = 1,
	cudaMemcpyDeviceToHost = 2,
	cudaMemcpyDeviceToDevice = 3,
	cudaMemcpyDefault = 4
};

typedef struct CUstream_st *cudaStream_t;
typedef struct CUevent_st *cudaEvent_t;
typedef struct CUgraph_st *cudaGraph_t;
typedef struct CUgraphExec_st *cudaGraphExec_t;
typedef struct CUgraphNode_st *cudaGraphNode_t;

enum cudaStreamCaptureMode {
	cudaStreamCaptureModeGlobal = 0,
	cudaStreamCaptureModeThreadLocal = 1,
	cudaStreamCaptureModeRelaxed = 2
};
enum cudaStreamCaptureStatus {
	cudaStreamCaptureStatusNone = 0,
	cudaStreamCaptureStatusActive = 1,
	cudaStreamCaptureStatusInvalidated = 2
};
enum cudaGraphExecUpdateResult {
	cudaGraphExecUpdateSuccess = 0,
	cudaGraphExecUpdateError = 1,
	cudaGraphExecUpdateErrorTopologyChanged = 2,
	cudaGraphExecUpdateErrorNodeTypeChanged = 3,
	cudaGraphExecUpdateErrorFunctionChanged = 4,
	cudaGraphExecUpdateErrorParametersChanged = 5,
	cudaGraphExecUpdateErrorNotSupported = 6
};
typedef struct cudaGraphExecUpdateResultInfo_st {
	enum cudaGraphExecUpdateResult result;
	cudaGraphNode_t errorNode, errorFromNode;
} cudaGraphExecUpdateResultInfo;

enum cudaMemoryType {
	cudaMemoryTypeUnregistered = 0,
	cudaMemoryTypeHost = 1,
	cudaMemoryTypeDevice = 2,
	cudaMemoryTypeManaged = 3
};
struct cudaPointerAttributes {
	enum cudaMemoryType type;
	int device;
	void *devicePointer, *hostPointer;
};

#define cudaStreamDefault 0x00
#define cudaStreamNonBlocking 0x01
#define cudaHostAllocDefault 0x00
#define cudaHostAllocPortable 0x01
#define cudaHostAllocMapped 0x02
#define cudaHostAllocWriteCombined 0x04
#define cudaEventDefault 0x00
#define cudaEventBlockingSync 0x01
#define cudaEventDisableTiming 0x02

struct cudaDeviceProp {
	char name[256];
	size_t totalGlobalMem;
	size_t sharedMemPerBlock;
	int regsPerBlock;
	int warpSize;
	size_t memPitch;
	int maxThreadsPerBlock;
	int maxThreadsDim[3];
	int maxGridSize[3];
	int clockRate;
	size_t totalConstMem;
	int major;
	int minor;
	int multiProcessorCount;
	int maxThreadsPerMultiProcessor;
	size_t sharedMemPerMultiprocessor;
	size_t sharedMemPerBlockOptin;
	int regsPerMultiprocessor;
	int memoryBusWidth;
	int l2CacheSize;
	int concurrentKernels;
	int unifiedAddressing;
};

/* ---- runtime API ---- */
static inline cudaError_t cudaMalloc(void **p, size_t n) { return (cudaError_t)gnnemu_malloc(p, n); }
template <class T>
static inline cudaError_t cudaMalloc(T **p, size_t n) { return (cudaError_t)gnnemu_malloc((void **)p, n); }
static inline cudaError_t cudaFree(void *p) { return (cudaError_t)gnnemu_free(p); }
static inline cudaError_t cudaMallocHost(void **p, size_t n) { return (cudaError_t)gnnemu_malloc_host(p, n); }
template <class T>
static inline cudaError_t cudaMallocHost(T **p, size_t n) { return (cudaError_t)gnnemu_malloc_host((void **)p, n); }
static inline cudaError_t cudaHostAlloc(void **p, size_t n, unsigned int) { return (cudaError_t)gnnemu_malloc_host(p, n); }
template <class T>
static inline cudaError_t cudaHostAlloc(T **p, size_t n, unsigned int) { return (cudaError_t)gnnemu_malloc_host((void **)p, n); }
static inline cudaError_t cudaFreeHost(void *p) { return (cudaError_t)gnnemu_free_host(p); }
static inline cudaError_t cudaMemcpy(void *d, const void *s, size_t n, cudaMemcpyKind k)
{
	return (cudaError_t)gnnemu_memcpy(d, s, n, (int)k);
}
static inline cudaError_t cudaMemcpyAsync(void *d, const void *s, size_t n, cudaMemcpyKind k, cudaStream_t st = 0)
{
	return (cudaError_t)gnnemu_memcpy_async(d, s, n, (int)k, st);
}
static inline cudaError_t cudaMemset(void *d, int v, size_t n) { return (cudaError_t)gnnemu_memset(d, v, n); }
static inline cudaError_t cudaMemsetAsync(void *d, int v, size_t n, cudaStream_t st = 0)
{
	return (cudaError_t)gnnemu_memset_async(d, v, n, st);
}
static inline cudaError_t cudaMemGetInfo(size_t *f, size_t *t) { return (cudaError_t)gnnemu_mem_info(f, t); }
static inline cudaError_t cudaStreamCreate(cudaStream_t *s) { return (cudaError_t)gnnemu_stream_create((void **)s); }
static inline cudaError_t cudaStreamCreateWithFlags(cudaStream_t *s, unsigned int)
{
	return (cudaError_t)gnnemu_stream_create((void **)s);
}
static inline cudaError_t cudaStreamDestroy(cudaStream_t s) { return (cudaError_t)gnnemu_stream_destroy(s); }
/* kernels and copies run eagerly: everything is done when they return,
 * and synchronizing fails only with a capturing stream */
static inline cudaError_t cudaStreamSynchronize(cudaStream_t s) { return (cudaError_t)gnnemu_stream_synchronize(s); }
static inline cudaError_t cudaStreamQuery(cudaStream_t s) { return (cudaError_t)gnnemu_stream_query(s); }
static inline cudaError_t cudaDeviceSynchronize(void) { return (cudaError_t)gnnemu_device_synchronize(); }
static inline cudaError_t cudaDeviceReset(void) { return cudaSuccess; }
static inline cudaError_t cudaGetLastError(void) { return (cudaError_t)gnnemu_last_error(1); }
static inline cudaError_t cudaPeekAtLastError(void) { return (cudaError_t)gnnemu_last_error(0); }
static inline const char *cudaGetErrorString(cudaError_t e) { return gnnemu_error_string((int)e); }
static inline const char *cudaGetErrorName(cudaError_t e) { return gnnemu_error_name((int)e); }
static inline cudaError_t cudaGetDeviceCount(int *n) { *n = 1; return cudaSuccess; }
static inline cudaError_t cudaGetDevice(int *d) { *d = 0; return cudaSuccess; }
static inline cudaError_t cudaSetDevice(int d) { return d == 0 ? cudaSuccess : cudaErrorInvalidDevice; }
static inline cudaError_t cudaGetDeviceProperties(cudaDeviceProp *p, int d)
{
	if (d != 0)
		return cudaErrorInvalidDevice;
	memset(p, 0, sizeof *p);
	strcpy(p->name, "gnnemu (emulated)");
	p->totalGlobalMem = gnnemu_device_memory();
	p->sharedMemPerBlock = 48 * 1024;
	p->sharedMemPerBlockOptin = 48 * 1024;
	p->sharedMemPerMultiprocessor = 228 * 1024;
	p->regsPerBlock = 65536;
	p->regsPerMultiprocessor = 65536;
	p->warpSize = 32;
	p->memPitch = (size_t)1 << 31;
	p->maxThreadsPerBlock = 1024;
	p->maxThreadsDim[0] = 1024;
	p->maxThreadsDim[1] = 1024;
	p->maxThreadsDim[2] = 64;
	p->maxGridSize[0] = 2147483647;
	p->maxGridSize[1] = 65535;
	p->maxGridSize[2] = 65535;
	p->clockRate = 1000000;
	p->totalConstMem = 65536;
	p->major = 9;
	p->minor = 0;
	p->multiProcessorCount = 132;
	p->maxThreadsPerMultiProcessor = 2048;
	p->memoryBusWidth = 5120;
	p->l2CacheSize = 50 * 1024 * 1024;
	p->concurrentKernels = 1;
	p->unifiedAddressing = 1;
	return cudaSuccess;
}
static inline cudaError_t cudaEventCreate(cudaEvent_t *e) { return (cudaError_t)gnnemu_event_create((void **)e); }
static inline cudaError_t cudaEventCreateWithFlags(cudaEvent_t *e, unsigned int)
{
	return (cudaError_t)gnnemu_event_create((void **)e);
}
static inline cudaError_t cudaEventDestroy(cudaEvent_t e) { return (cudaError_t)gnnemu_event_destroy(e); }
static inline cudaError_t cudaEventRecord(cudaEvent_t e, cudaStream_t s = 0) { return (cudaError_t)gnnemu_event_record_on(e, s); }
static inline cudaError_t cudaEventSynchronize(cudaEvent_t e) { return (cudaError_t)gnnemu_event_synchronize(e); }
static inline cudaError_t cudaEventQuery(cudaEvent_t e) { return (cudaError_t)gnnemu_event_synchronize(e); }
static inline cudaError_t cudaEventElapsedTime(float *ms, cudaEvent_t a, cudaEvent_t b)
{
	return (cudaError_t)gnnemu_event_elapsed(ms, a, b);
}
static inline cudaError_t cudaPointerGetAttributes(cudaPointerAttributes *a, const void *p)
{
	int t = gnnemu_pointer_type(p);

	if (!a || t < 0)
		return cudaErrorInvalidValue;
	a->type = (cudaMemoryType)t;
	a->device = 0;
	a->devicePointer = t == cudaMemoryTypeDevice ? (void *)p : nullptr;
	a->hostPointer = t == cudaMemoryTypeHost ? (void *)p : nullptr;
	return cudaSuccess;
}

/* ---- stream capture and graphs ---- */
static inline cudaError_t cudaStreamBeginCapture(cudaStream_t s, cudaStreamCaptureMode mode)
{
	return (cudaError_t)gnnemu_stream_begin_capture(s, (int)mode);
}
static inline cudaError_t cudaStreamEndCapture(cudaStream_t s, cudaGraph_t *g)
{
	return (cudaError_t)gnnemu_stream_end_capture(s, (void **)g);
}
static inline cudaError_t cudaStreamIsCapturing(cudaStream_t s, cudaStreamCaptureStatus *st)
{
	int v = 0;
	cudaError_t e = st ? (cudaError_t)gnnemu_stream_is_capturing(s, &v) : cudaErrorInvalidValue;

	if (st)
		*st = (cudaStreamCaptureStatus)v;
	return e;
}
static inline cudaError_t cudaGraphInstantiate(cudaGraphExec_t *x, cudaGraph_t g, unsigned long long = 0)
{
	return (cudaError_t)gnnemu_graph_instantiate((void **)x, g);
}
static inline cudaError_t cudaGraphInstantiateWithFlags(cudaGraphExec_t *x, cudaGraph_t g, unsigned long long = 0)
{
	return (cudaError_t)gnnemu_graph_instantiate((void **)x, g);
}
static inline cudaError_t cudaGraphExecUpdate(cudaGraphExec_t x, cudaGraph_t g, cudaGraphExecUpdateResultInfo *info)
{
	int r = 0;
	cudaError_t e = (cudaError_t)gnnemu_graph_exec_update(x, g, &r);

	if (info) {
		info->result = (cudaGraphExecUpdateResult)r;
		info->errorNode = info->errorFromNode = nullptr;
	}
	return e;
}
static inline cudaError_t cudaGraphLaunch(cudaGraphExec_t x, cudaStream_t s) { return (cudaError_t)gnnemu_graph_launch(x, s); }
static inline cudaError_t cudaGraphDestroy(cudaGraph_t g) { return (cudaError_t)gnnemu_graph_destroy(g); }
static inline cudaError_t cudaGraphExecDestroy(cudaGraphExec_t x) { return (cudaError_t)gnnemu_graph_exec_destroy(x); }

/* ---- kernels and launches ---- */
#define GNN_DKERNEL(name) enum { name##_emu_bound_ = 1024 }; static void name
#define GNN_DKERNEL_LB(name, n) enum { name##_emu_bound_ = (n) }; static void name
#define GNN_LAUNCH(k, grid, block, shmem, stream) \
	gnnemu_launcher<decltype(&k)>(#k, k, k##_emu_bound_, (grid), (block), (shmem), (stream))
#define GNN_SHARED(T, name, dims) \
	static char name##_site_; \
	T (&name) dims = *reinterpret_cast<T (*) dims>( \
		gnnemu_shared(&name##_site_, sizeof(T dims), alignof(T), __FILE__, __LINE__))

/* a pointer argument must be NULL or device memory */
template <class T>
static inline void gnnemu_check_param(const char *name, int i, const T &v)
{
	if constexpr (std::is_pointer<T>::value &&
		      !std::is_function<typename std::remove_pointer<T>::type>::value)
		gnnemu_check_arg(name, i, (const void *)v);
	(void)name, (void)i, (void)v;
}

template <class T>
static inline T gnnemu_convert(T v) { return v; }   /* the implicit conversion of a call */

template <class F> struct gnnemu_launcher;
template <class... P> struct gnnemu_launcher<void (*)(P...)> {
	gnnemu_launch_desc d;
	void (*fn)(P...);

	gnnemu_launcher(const char *name, void (*f)(P...), unsigned bound, dim3 grid, dim3 block,
			size_t shmem, cudaStream_t stream)
	    : fn(f)
	{
		d.name = name;
		d.bound = bound;
		d.grid = grid;
		d.block = block;
		d.shmem = shmem;
		d.stream = stream;
		d.thunk = nullptr;
		d.arg = nullptr;
		d.argsize = 0;
		d.check = nullptr;
	}
	template <class... A> void operator()(A &&...a)
	{
		static_assert(sizeof...(A) == sizeof...(P), "kernel launched with the wrong number of arguments");
		run(gnnemu_convert<P>(std::forward<A>(a))...);
	}
	void run(P... p)
	{
		int i = 0;
		(gnnemu_check_param(d.name, ++i, p), ...);
		(void)i;
		/* The closure holds the kernel and its parameters by value, so that
		 * a capturing stream keeps a copy of it (a graph's node), and checks
		 * its pointers again when asked (at each replay); every thread
		 * still gets its own copy of the parameters, as on a GPU. */
		const char *name = d.name;
		auto body = [f = fn, name, p...](int check) {
			if (check) {
				int k = 0;
				(gnnemu_check_param(name, ++k, p), ...);
				(void)k;
			} else
				f(p...);
		};
		static_assert(std::is_trivially_copyable<decltype(body)>::value, "kernel parameters must be trivially copyable");
		d.thunk = [](void *c) { (*static_cast<decltype(body) *>(c))(0); };
		d.check = [](void *c) { (*static_cast<decltype(body) *>(c))(1); };
		d.arg = &body;
		d.argsize = sizeof body;
		gnnemu_launch(&d);
	}
};

/* ---- built-in variables ---- */
static inline uint3 gnnemu_threadIdx(void) { return gnnemu_self->tid; }
static inline uint3 gnnemu_blockIdx(void) { return gnnemu_self->bid; }
static inline dim3 gnnemu_blockDim(void) { return dim3(gnnemu_self->bdim); }
static inline dim3 gnnemu_gridDim(void) { return dim3(gnnemu_self->gdim); }
static inline gnnemu_thread *gnnemu_cur(void) { return gnnemu_self; }
#define threadIdx (gnnemu_threadIdx())
#define blockIdx (gnnemu_blockIdx())
#define blockDim (gnnemu_blockDim())
#define gridDim (gnnemu_gridDim())
static constexpr int warpSize = 32;

/* ---- barriers and warp collectives, at a source line ---- */
struct gnnemu_at {
	const char *file;
	int line;

	void syncthreads() const { gnnemu_syncthreads(file, line); }
	void syncwarp(unsigned mask = 0xffffffffu) const { gnnemu_syncwarp(mask, file, line); }
	template <class T> T shfl(int op, unsigned mask, T v, int arg, int width) const
	{
		static_assert(std::is_trivially_copyable<T>::value && sizeof(T) <= 8, "shuffle of a type over 8 bytes");
		unsigned long long x = 0, r;
		T out;
		memcpy(&x, &v, sizeof v);
		r = gnnemu_collective(op, mask, x, arg, width, file, line);
		memcpy(&out, &r, sizeof out);
		return out;
	}
	template <class T> T shfl_sync(unsigned m, T v, int src, int w = 32) const { return shfl(GNNEMU_SHFL_IDX, m, v, src, w); }
	template <class T> T shfl_up_sync(unsigned m, T v, unsigned d, int w = 32) const { return shfl(GNNEMU_SHFL_UP, m, v, (int)d, w); }
	template <class T> T shfl_down_sync(unsigned m, T v, unsigned d, int w = 32) const { return shfl(GNNEMU_SHFL_DOWN, m, v, (int)d, w); }
	template <class T> T shfl_xor_sync(unsigned m, T v, int x, int w = 32) const { return shfl(GNNEMU_SHFL_XOR, m, v, x, w); }
	unsigned ballot_sync(unsigned m, int p) const { return (unsigned)gnnemu_collective(GNNEMU_BALLOT, m, p != 0, 0, 32, file, line); }
	int all_sync(unsigned m, int p) const { return (int)gnnemu_collective(GNNEMU_ALL, m, p != 0, 0, 32, file, line); }
	int any_sync(unsigned m, int p) const { return (int)gnnemu_collective(GNNEMU_ANY, m, p != 0, 0, 32, file, line); }
	void mma_m16n8k8_tf32(float *d, const uint32_t *a, const uint32_t *b) const { gnnemu_mma_tf32(d, a, b, file, line); }
	void mma_m16n8k16_bf16(float *d, const uint32_t *a, const uint32_t *b) const { gnnemu_mma_bf16(d, a, b, file, line); }
};
#define GNNEMU_AT (gnnemu_at{__FILE__, __LINE__})
#define __syncthreads GNNEMU_AT.syncthreads
#define __syncwarp GNNEMU_AT.syncwarp
#define __shfl_sync GNNEMU_AT.shfl_sync
#define __shfl_up_sync GNNEMU_AT.shfl_up_sync
#define __shfl_down_sync GNNEMU_AT.shfl_down_sync
#define __shfl_xor_sync GNNEMU_AT.shfl_xor_sync
#define __ballot_sync GNNEMU_AT.ballot_sync
#define __all_sync GNNEMU_AT.all_sync
#define __any_sync GNNEMU_AT.any_sync
static inline unsigned __activemask(void) { return gnnemu_activemask(); }

/* ---- tensor cores: what PTX's cvt.rna.tf32.f32 and
 * mma.sync.aligned.m16n8k8.row.col.f32.tf32.tf32.f32 do, where CUDA
 * code writes them as inline asm (gnncc's prelude: GNN_TF32 and
 * GNN_MMA_TF32).  The conversion rounds to nearest, ties away from
 * zero, to 10 mantissa bits (the low 13 bits zero); NaN stays NaN and
 * a value that rounds past FLT_MAX is infinite.  The mma is a warp
 * collective (gnnemu.h: gnnemu_mma_tf32) that every lane must reach. */
static inline uint32_t gnnemu_cvt_rna_tf32(float x)
{
	uint32_t u;
	memcpy(&u, &x, sizeof u);
	if ((u & 0x7f800000u) == 0x7f800000u)   /* inf or NaN */
		return (u & 0x007fffffu) ? 0x7fffffffu : u;
	return (u + 0x1000u) & 0xffffe000u;
}
#define gnnemu_mma_m16n8k8_tf32 GNNEMU_AT.mma_m16n8k8_tf32
/* mma.sync.aligned.m16n8k16.row.col.f32.bf16.bf16.f32 (GNN_MMA_BF16):
 * the operands are bfloat16 words, two to a register */
#define gnnemu_mma_m16n8k16_bf16 GNNEMU_AT.mma_m16n8k16_bf16

/* ---- atomics: __atomic builtins, so that TSan sees atomics ---- */
#define GNNEMU_ATOMIC_INT(T) \
	static inline T atomicAdd(T *a, T v) { return __atomic_fetch_add(a, v, __ATOMIC_RELAXED); } \
	static inline T atomicExch(T *a, T v) { return __atomic_exchange_n(a, v, __ATOMIC_RELAXED); } \
	static inline T atomicCAS(T *a, T cmp, T v) \
	{ \
		__atomic_compare_exchange_n(a, &cmp, v, false, __ATOMIC_RELAXED, __ATOMIC_RELAXED); \
		return cmp; \
	} \
	static inline T atomicMax(T *a, T v) \
	{ \
		T old = __atomic_load_n(a, __ATOMIC_RELAXED); \
		while (old < v && !__atomic_compare_exchange_n(a, &old, v, true, __ATOMIC_RELAXED, __ATOMIC_RELAXED)) \
			; \
		return old; \
	} \
	static inline T atomicMin(T *a, T v) \
	{ \
		T old = __atomic_load_n(a, __ATOMIC_RELAXED); \
		while (old > v && !__atomic_compare_exchange_n(a, &old, v, true, __ATOMIC_RELAXED, __ATOMIC_RELAXED)) \
			; \
		return old; \
	} \
	static inline T atomicAnd(T *a, T v) { return __atomic_fetch_and(a, v, __ATOMIC_RELAXED); } \
	static inline T atomicOr(T *a, T v) { return __atomic_fetch_or(a, v, __ATOMIC_RELAXED); } \
	static inline T atomicXor(T *a, T v) { return __atomic_fetch_xor(a, v, __ATOMIC_RELAXED); }
GNNEMU_ATOMIC_INT(int)
GNNEMU_ATOMIC_INT(unsigned int)
GNNEMU_ATOMIC_INT(long long)
GNNEMU_ATOMIC_INT(unsigned long long)
#undef GNNEMU_ATOMIC_INT
static inline int atomicSub(int *a, int v) { return __atomic_fetch_sub(a, v, __ATOMIC_RELAXED); }
static inline unsigned int atomicSub(unsigned int *a, unsigned int v) { return __atomic_fetch_sub(a, v, __ATOMIC_RELAXED); }
static inline unsigned int atomicInc(unsigned int *a, unsigned int lim)
{
	unsigned int old = __atomic_load_n(a, __ATOMIC_RELAXED);
	while (!__atomic_compare_exchange_n(a, &old, old >= lim ? 0 : old + 1, true, __ATOMIC_RELAXED, __ATOMIC_RELAXED))
		;
	return old;
}

/* floating point: compare-and-swap on the bits */
template <class F, class U, class Op>
static inline F gnnemu_atomic_float(F *a, Op op)
{
	U *p = reinterpret_cast<U *>(a), old = __atomic_load_n(p, __ATOMIC_RELAXED), nw;
	F f, r;
	do {
		memcpy(&f, &old, sizeof f);
		r = op(f);
		memcpy(&nw, &r, sizeof nw);
	} while (!__atomic_compare_exchange_n(p, &old, nw, true, __ATOMIC_RELAXED, __ATOMIC_RELAXED));
	return f;
}
static inline float atomicAdd(float *a, float v) { return gnnemu_atomic_float<float, uint32_t>(a, [v](float x) { return x + v; }); }
static inline double atomicAdd(double *a, double v) { return gnnemu_atomic_float<double, uint64_t>(a, [v](double x) { return x + v; }); }
static inline float atomicExch(float *a, float v) { return gnnemu_atomic_float<float, uint32_t>(a, [v](float) { return v; }); }
static inline float atomicMax(float *a, float v) { return gnnemu_atomic_float<float, uint32_t>(a, [v](float x) { return x < v ? v : x; }); }
static inline float atomicMin(float *a, float v) { return gnnemu_atomic_float<float, uint32_t>(a, [v](float x) { return x > v ? v : x; }); }

static inline void __threadfence(void) { __atomic_thread_fence(__ATOMIC_SEQ_CST); }
static inline void __threadfence_block(void) { __atomic_thread_fence(__ATOMIC_SEQ_CST); }

/* ---- device functions ---- */
template <class T> static inline T __ldg(const T *p) { return *p; }
/* glibc declares (but does not export) __expf and friends: rename ours */
static inline float gnnemu_expf(float x) { return expf(x); }
static inline float gnnemu_logf(float x) { return logf(x); }
static inline float gnnemu_log2f(float x) { return log2f(x); }
static inline float gnnemu_sinf(float x) { return sinf(x); }
static inline float gnnemu_cosf(float x) { return cosf(x); }
static inline float gnnemu_powf(float x, float y) { return powf(x, y); }
#define __expf gnnemu_expf
#define __logf gnnemu_logf
#define __log2f gnnemu_log2f
#define __sinf gnnemu_sinf
#define __cosf gnnemu_cosf
#define __powf gnnemu_powf
static inline float __fdividef(float x, float y) { return x / y; }
static inline float __saturatef(float x) { return x < 0.0f ? 0.0f : x > 1.0f ? 1.0f : x; }
static inline float rsqrtf(float x) { return 1.0f / sqrtf(x); }
static inline double rsqrt(double x) { return 1.0 / sqrt(x); }
static inline int __popc(unsigned int x) { return __builtin_popcount(x); }
static inline int __popcll(unsigned long long x) { return __builtin_popcountll(x); }
static inline int __ffs(int x) { return __builtin_ffs(x); }
static inline int __clz(int x) { return x ? __builtin_clz((unsigned)x) : 32; }

/* CUDA's min/max: any two arithmetic types, in their common type */
template <class A, class B,
	  class = typename std::enable_if<std::is_arithmetic<A>::value && std::is_arithmetic<B>::value>::type>
static inline typename std::common_type<A, B>::type min(A a, B b)
{
	typedef typename std::common_type<A, B>::type C;
	return (C)b < (C)a ? (C)b : (C)a;
}
template <class A, class B,
	  class = typename std::enable_if<std::is_arithmetic<A>::value && std::is_arithmetic<B>::value>::type>
static inline typename std::common_type<A, B>::type max(A a, B b)
{
	typedef typename std::common_type<A, B>::type C;
	return (C)a < (C)b ? (C)b : (C)a;
}

#endif
