/*
 * gnnemu: an emulated CUDA device on the CPU.
 *
 * The CUDA C++ that gnncc emits (and hand-written test kernels) compiles
 * with g++ or clang++ against runtime/emu/cuda_runtime.h, a shim over
 * this C API, and runs on the host with CUDA's semantics: every block of
 * the grid runs (one after another, on the calling OS thread), every GPU
 * thread of a block is a fiber of its own, __syncthreads / __syncwarp /
 * shuffles / votes are real barriers among those fibers, and device
 * memory is a separate mmap'ed heap the host cannot touch.  On top of
 * that it checks what compute-sanitizer would (memcheck, racecheck
 * through ThreadSanitizer, initcheck for copies back to the host,
 * synccheck for barriers), and reports every error as
 *
 *   gnnemu: error: kernel 'NAME' block (x,y,z) thread (x,y,z): WHAT, at FILE:LINE
 *
 * (or `gnnemu: error: WHAT` outside a kernel) on stderr, then exits the
 * process with status 1.  Nothing in the emulator ever hangs: a barrier
 * that can never complete is an error.
 *
 * Environment (read once, at the first call into the emulator):
 *   GNNEMU_ORDER=forward|reverse|random[:SEED]
 *                       order in which blocks run, and in which the runnable
 *                       threads of a block are resumed (default forward;
 *                       random's SEED defaults to 1)
 *   GNNEMU_GRID_MAX=n   run at most n blocks along each grid dimension
 *                       (gridDim reports the clamped size), so that
 *                       grid-stride loops wrap
 *   GNNEMU_STACK=bytes  fiber stack size (K/M suffixes; default 64K, 256K
 *                       when ASan is present); each stack has a guard page
 *   GNNEMU_DEVICE_MEMORY=bytes   size of the device heap (K/M/G
 *                       suffixes; default 16G of reserved address space)
 *   GNNEMU_MEM_CAP=bytes   the device's memory (K/M/G): cudaMalloc fails
 *                       past it, cudaMemGetInfo reports it (see
 *                       gnnemu_set_mem_cap)
 *   GNNEMU_MALLOC_FAIL=k   the k-th cudaMalloc of the process fails with
 *                       cudaErrorMemoryAllocation (see gnnemu_fail_malloc)
 *   GNNEMU_INITCHECK=0  do not check copies to the host for
 *                       uninitialized device memory
 *   GNNEMU_WORK=path    append a line per launch in which some thread
 *                       called gnnemu_work: the kernel, its warps, their
 *                       total work and the busiest warp's (see below)
 *   GNNEMU_STATS=1      print what ran (kernels, captures, graph launches:
 *                       gnnemu_stats) on stderr when the program ends
 *
 * Memory: cudaMalloc memory is 256-byte aligned, separated by redzones of
 * at least 256 bytes, and filled with the poison word 0x7fbadbad (a
 * signalling NaN as float; 0x7fbadbad7fbadbad as int64).  Freed memory is
 * quarantined (reused only when the heap is otherwise exhausted).  While no
 * kernel, cudaMemcpy or cudaMemset runs, the heap is PROT_NONE: host code
 * touching device memory is an error.  Writes into a redzone (past the end
 * of an allocation or of a shared array) are found after the kernel (or
 * block) when ASan is absent; with ASan, redzones and freed memory are
 * poisoned, so the access itself is an ASan report.
 *
 * Sanitizers are found at run time through weak symbols, so one library
 * serves plain, ASan and TSan processes: under TSan every GPU thread is a
 * TSan fiber and the only happens-before edges are CUDA's (launch,
 * barriers, warp collectives, grid end), so unordered accesses of two GPU
 * threads are TSan data-race reports.
 *
 * Errors (each `gnnemu: error: ...`, exit status 1): launch configuration
 * (0 or > 1024 threads, over __launch_bounds__, grid out of range, more
 * than 48 KiB of shared memory); a barrier or collective that cannot
 * complete (a thread exited before reaching it, divergent __syncthreads at
 * different lines, __syncthreads against __syncwarp), a shuffle reading a
 * lane outside its mask or exited, a calling lane outside its own mask; a
 * host pointer (or freed device memory) passed to a kernel; host code
 * touching device memory; a cudaMemcpy/cudaMemset whose pointers do not
 * match its kind or overrun their allocation; cudaFree of anything but a
 * live cudaMalloc pointer; a copy to the host of poison (initcheck); a
 * write past an allocation or shared array (found afterwards without
 * ASan); a fiber stack overflow.  Allocation failures return
 * cudaErrorMemoryAllocation as CUDA does.
 *
 * Limitations: blocks run one at a time, so a kernel that waits for
 * another block (a spin lock across blocks, a grid-wide barrier) hangs as
 * it would deadlock on a small GPU.  Under TSan, GPU threads run on two
 * rows of recycled TSan fibers (creating one costs about half a
 * millisecond), so blocks two apart in the run order are ordered for TSan:
 * races between them are found only through another pair (consecutive
 * blocks never are ordered; GNNEMU_ORDER=random changes the pairs).
 * __activemask() is the set of lanes that have not exited.  Dynamic shared
 * memory (extern __shared__) is not provided.
 *
 * Not thread-safe: call the emulator from one host thread at a time.
 */
#ifndef GNNEMU_H
#define GNNEMU_H

#include <stddef.h>

#ifdef __cplusplus
extern "C" {
#endif

/* CUDA's uint3 */
typedef struct gnnemu_uint3 {
	unsigned int x, y, z;
} gnnemu_uint3;

/* The running GPU thread, as device code sees it (the emulator's fiber
 * begins with this). */
typedef struct gnnemu_thread {
	gnnemu_uint3 tid, bid, bdim, gdim;
	unsigned int lane, warp;  /* linear thread index % 32 and / 32 */
} gnnemu_thread;

/* the running GPU thread; NULL outside kernels */
extern gnnemu_thread *gnnemu_self;

/* ---- runtime API; return a cudaError_t value (0 = success) ---- */
int gnnemu_malloc(void **p, size_t n);
int gnnemu_free(void *p);
/* kind: 0 host->host, 1 host->device, 2 device->host, 3 device->device,
 * 4 default (inferred from the pointers) */
int gnnemu_memcpy(void *dst, const void *src, size_t n, int kind);
int gnnemu_memset(void *dst, int value, size_t n);
int gnnemu_malloc_host(void **p, size_t n);
int gnnemu_free_host(void *p);
int gnnemu_mem_info(size_t *free_bytes, size_t *total);
int gnnemu_stream_create(void **s);
int gnnemu_stream_destroy(void *s);
int gnnemu_event_create(void **e);
int gnnemu_event_destroy(void *e);
int gnnemu_event_record(void *e);
int gnnemu_event_elapsed(float *ms, void *start, void *end);
/* the last error (reset: and clear it, as cudaGetLastError) */
int gnnemu_last_error(int reset);
const char *gnnemu_error_name(int err);
const char *gnnemu_error_string(int err);
/* the device's memory, as totalGlobalMem: the cap, or the heap's size */
size_t gnnemu_device_memory(void);
/* Out of memory on demand, so that tests reach every allocation's
 * failure.  The cap (0: none) bounds the bytes of live allocations, each
 * counted rounded up to 256: a cudaMalloc past it fails with
 * cudaErrorMemoryAllocation, and cudaMemGetInfo reports total = the cap,
 * free = the cap less what is live.  gnnemu_fail_malloc(k): the k-th
 * cudaMalloc from now (of a non-zero size) fails, once (0: none).
 * gnnemu_reset_peak: gnnemu_stats.peak_bytes starts again from what is
 * live. */
void gnnemu_set_mem_cap(size_t bytes);
void gnnemu_fail_malloc(unsigned long long k);
void gnnemu_reset_peak(void);
/* is p inside a live cudaMalloc allocation (or one past its end)? */
int gnnemu_is_device_pointer(const void *p);
/* The emulated vendor libraries' memcheck (vendor.cc): call's argument
 * what, n bytes at p, must lie inside one live allocation and (under
 * ASan) touch no redzone of the runtime's arena; else the error names
 * them and the process ends, as for a kernel's bad access.  n == 0 is
 * always fine. */
void gnnemu_check_range(const char *call, const char *what, const void *p, size_t n);

/* ---- stream capture and graphs (CUDA Graphs) ----
 * While a stream captures (cudaStreamBeginCapture), its launches and
 * async copies and sets are recorded as the nodes of a graph instead of
 * run; cudaGraphLaunch runs an executable graph's nodes in their order,
 * through the checks eager calls make (pointer arguments, launch bounds,
 * copy ranges).  mode is cudaStreamCaptureMode's (0 global, 1 thread
 * local, 2 relaxed); status is cudaStreamCaptureStatus's. */
int gnnemu_stream_begin_capture(void *s, int mode);
int gnnemu_stream_end_capture(void *s, void **graph);
int gnnemu_stream_is_capturing(void *s, int *status);
int gnnemu_stream_synchronize(void *s);
int gnnemu_stream_query(void *s);
int gnnemu_device_synchronize(void);
int gnnemu_memcpy_async(void *dst, const void *src, size_t n, int kind, void *s);
int gnnemu_memset_async(void *dst, int value, size_t n, void *s);
int gnnemu_event_record_on(void *e, void *s);
int gnnemu_graph_instantiate(void **exec, void *graph);
/* *result: cudaGraphExecUpdateResult */
int gnnemu_graph_exec_update(void *exec, void *graph, int *result);
int gnnemu_graph_launch(void *exec, void *s);
int gnnemu_graph_destroy(void *graph);
int gnnemu_graph_exec_destroy(void *exec);
/* Makes [p, p+n), inside one live allocation, a redzone (on) or usable
 * memory again (off) under memcheck: AddressSanitizer reports a kernel's
 * access there (use-after-poison); without ASan it does nothing.  The
 * runtime marks the gaps between the buffers of its arena
 * (runtime/device.h: redzone). */
void gnnemu_redzone(void *p, size_t n, int on);
/* Does gnnemu_redzone mark anything (AddressSanitizer is present)?  The
 * runtime leaves gaps between its arena's buffers only then, so that
 * without memcheck the arena is laid out as on a GPU. */
int gnnemu_redzones(void);
/* cudaMemoryType of p: 0 unregistered host memory, 1 page-locked host
 * memory (cudaMallocHost), 2 device memory; -1 freed device memory */
int gnnemu_pointer_type(const void *p);

/* What ran so far: kernels run (replayed: those run by cudaGraphLaunch),
 * kernels recorded by captures, captures ended with a graph, executable
 * graphs made (instantiated, updated), graph launches, and copies run
 * (cudaMemcpy and cudaMemcpyAsync, replayed ones too).  GNNEMU_STATS=1
 * prints them on stderr when the program ends.  Device memory: cudaMalloc
 * calls of a non-zero size (failed ones too), the allocations live now,
 * their bytes and the most bytes live at once (sizes rounded up to 256,
 * as the cap counts them). */
typedef struct gnnemu_stats {
	unsigned long long kernels, replayed, recorded;
	unsigned long long captures, instantiated, updated, graph_launches;
	unsigned long long copies;
	unsigned long long mallocs, live;
	size_t live_bytes, peak_bytes;
} gnnemu_stats;
void gnnemu_get_stats(gnnemu_stats *st);

/* ---- launches ---- */
typedef struct gnnemu_launch_desc {
	const char *name;          /* the kernel's name, for messages */
	unsigned int bound;        /* its __launch_bounds__ (1024 if none) */
	gnnemu_uint3 grid, block;
	size_t shmem;              /* dynamic shared memory (must fit 48 KiB) */
	void *stream;
	void (*thunk)(void *);     /* runs the kernel body for gnnemu_self */
	void *arg;
	/* arg is a trivially copyable closure of argsize bytes (the kernel
	 * and its parameters), so that a capturing stream keeps a copy;
	 * check(arg) checks its pointer parameters, again at each replay */
	size_t argsize;
	void (*check)(void *);
} gnnemu_launch_desc;

/* Runs a whole grid before returning; errors exit the process. */
void gnnemu_launch(const gnnemu_launch_desc *d);
/* Argument `index` (1-based) of kernel `name` is a pointer: it must be
 * NULL or point into a live device allocation. */
void gnnemu_check_arg(const char *name, int index, const void *p);

/* ---- device side (only inside kernels) ---- */
/* The block's storage for the __shared__ declaration identified by site:
 * the same for every thread of a block, fresh and poisoned per block. */
void *gnnemu_shared(const void *site, size_t size, size_t align, const char *file, int line);
void gnnemu_syncthreads(const char *file, int line);
void gnnemu_syncwarp(unsigned int mask, const char *file, int line);

enum gnnemu_op {
	GNNEMU_SHFL_IDX, GNNEMU_SHFL_UP, GNNEMU_SHFL_DOWN, GNNEMU_SHFL_XOR,
	GNNEMU_BALLOT, GNNEMU_ALL, GNNEMU_ANY, GNNEMU_MMA_TF32, GNNEMU_MMA_BF16
};
/* A warp collective among the lanes of mask (which must hold the calling
 * lane): shuffles return the source lane's 64-bit value (arg: srcLane,
 * delta or laneMask; width as CUDA's), votes their result. */
unsigned long long gnnemu_collective(int op, unsigned int mask, unsigned long long value,
				     int arg, int width, const char *file, int line);
/* PTX's mma.sync.aligned.m16n8k8.row.col.f32.tf32.tf32.f32 over the
 * calling warp, which must have all 32 lanes and every one of them here:
 * D = A B + C, A 16 x 8 and B 8 x 8 in TF32 (the low 13 bits of each
 * operand ignored, as tensor cores do), C and D FP32.  Each lane gives
 * its fragments as PTX lays them out (g = lane / 4, t = lane % 4):
 * a[0..3] = A(g, t), A(g+8, t), A(g, t+4), A(g+8, t+4); b[0..1] =
 * B(t, g), B(t+4, g); d[0..3] = C(g, 2t), C(g, 2t+1), C(g+8, 2t),
 * C(g+8, 2t+1) in, the same elements of D out.  Each D element is
 * C + the sum of its 8 exact products, rounded once to FP32. */
void gnnemu_mma_tf32(float *d, const unsigned int *a, const unsigned int *b, const char *file, int line);
/* PTX's mma.sync.aligned.m16n8k16.row.col.f32.bf16.bf16.f32, the same
 * way: A 16 x 16 and B 16 x 8 in bfloat16, two to a 32-bit register,
 * the lower column (A) or row (B) in the low half: a[0..3] = A(g, 2t..2t+1),
 * A(g+8, 2t..2t+1), A(g, 2t+8..2t+9), A(g+8, 2t+8..2t+9); b[0..1] =
 * B(2t..2t+1, g), B(2t+8..2t+9, g); d as for the TF32 form.  Each D
 * element is C + the sum of its 16 exact products, rounded once. */
void gnnemu_mma_bf16(float *d, const unsigned int *a, const unsigned int *b, const char *file, int line);
/* lanes of the calling warp that have not exited */
unsigned int gnnemu_activemask(void);

/* Work counters: adds n to the running thread's count (generated code's
 * GNN_WORK).  A warp's work is the largest count among its 32 lanes (a
 * divergent loop runs until its longest lane is done); with GNNEMU_WORK
 * set, each launch in which some thread counted appends
 *   NAME warps=W work=SUM busiest=MAX block=(x,y,z) warp=K
 * to that file: W warps launched, SUM their works, MAX the largest, and
 * where it ran (the lowest block and warp among equals). */
void gnnemu_work(long n);
/* Counts work without GNNEMU_WORK (on: 1) or only with it (0); and the
 * last launch's warps, total and busiest warp's work in w, returning
 * whether some thread of it counted (profiling's record, docs/cli.md). */
void gnnemu_count_work(int on);
int gnnemu_last_work(unsigned long long w[3]);

/* ---- schedule perturbation (as GNNEMU_ORDER / GNNEMU_GRID_MAX) ---- */
enum gnnemu_order { GNNEMU_FORWARD, GNNEMU_REVERSE, GNNEMU_RANDOM };
void gnnemu_set_order(int order, unsigned long long seed);
/* 0: no clamp */
void gnnemu_set_grid_max(unsigned int n);
/* Deferred execution (as GNNEMU_DEFER=1): kernels, async copies and sets
 * and event records wait in issue order until the host synchronizes
 * (a stream, the device, an event, a synchronous copy or set, a free);
 * a queued copy into page-locked host memory poisons its destination at
 * once.  Turning it off runs what waits. */
void gnnemu_set_defer(int on);
/* cudaEventSynchronize, cudaEventQuery: run what waits (event records
 * included) */
int gnnemu_event_synchronize(void *e);

/* Reports an error (printf format) for the running GPU thread or the
 * host and exits with status 1. */
void gnnemu_fatal(const char *file, int line, const char *fmt, ...)
	__attribute__((noreturn, format(printf, 3, 4)));

#ifdef __cplusplus
}
#endif

#endif
