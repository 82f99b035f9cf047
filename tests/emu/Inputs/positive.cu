// Positive checks of the emulated device: collectives, atomics, barriers,
// shared memory, grid-stride loops, copies, events.  Prints one line per
// check and a checksum of every result, so that runs under other
// schedules (GNNEMU_ORDER, GNNEMU_GRID_MAX) can be compared bitwise.
#include <cuda_runtime.h>
#include <stdio.h>
#include <stdlib.h>

static unsigned long long sum_ = 1469598103934665603ull;
static void mix(const void *p, size_t n)
{
	const unsigned char *c = (const unsigned char *)p;
	for (size_t i = 0; i < n; i++)
		sum_ = (sum_ ^ c[i]) * 1099511628211ull;
}
// blocks that run of a grid of g under GNNEMU_GRID_MAX
static int blocks_run(int g)
{
	const char *s = getenv("GNNEMU_GRID_MAX");
	return s && atoi(s) > 0 && atoi(s) < g ? atoi(s) : g;
}
#define CK(x) do { if (!(x)) { printf("FAIL %s:%d: %s\n", __FILE__, __LINE__, #x); exit(2); } } while (0)

// ---- shuffles: every lane records what each variant returns ----
GNN_DKERNEL(shfl_kernel)(int *oi, float *of, double *od, long long *ol, int width)
{
	const int lane = threadIdx.x % 32, t = threadIdx.x;
	int v = 100 + t;
	oi[t * 4 + 0] = __shfl_sync(0xffffffff, v, lane + 3, width);
	oi[t * 4 + 1] = __shfl_up_sync(0xffffffff, v, 2, width);
	oi[t * 4 + 2] = __shfl_down_sync(0xffffffff, v, 3, width);
	oi[t * 4 + 3] = __shfl_xor_sync(0xffffffff, v, 5, width);
	of[t] = __shfl_down_sync(0xffffffff, 0.5f + t, 1, width);
	od[t] = __shfl_xor_sync(0xffffffff, 0.25 + t, 1, width);
	ol[t] = __shfl_sync(0xffffffff, (long long)t << 40, 0, width);
}

static int ref_shfl(int op, int lane, int width, int arg)
{
	int seg = lane & ~(width - 1), src;
	switch (op) {
	case 0: src = seg + (arg & (width - 1)); break;
	case 1: src = lane - arg < seg ? lane : lane - arg; break;
	case 2: src = lane + arg >= seg + width ? lane : lane + arg; break;
	default: src = lane ^ arg; if (src >= seg + width) src = lane; break;
	}
	return src;
}

static void test_shuffles(void)
{
	const int n = 64;
	int *oi, hi[n * 4];
	float *of, hf[n];
	double *od, hd[n];
	long long *ol, hl[n];
	cudaMalloc(&oi, sizeof hi); cudaMalloc(&of, sizeof hf); cudaMalloc(&od, sizeof hd); cudaMalloc(&ol, sizeof hl);
	for (int width = 32; width >= 1; width /= 2) {
		GNN_LAUNCH(shfl_kernel, 1, n, 0, 0)(oi, of, od, ol, width);
		cudaMemcpy(hi, oi, sizeof hi, cudaMemcpyDeviceToHost);
		cudaMemcpy(hf, of, sizeof hf, cudaMemcpyDeviceToHost);
		cudaMemcpy(hd, od, sizeof hd, cudaMemcpyDeviceToHost);
		cudaMemcpy(hl, ol, sizeof hl, cudaMemcpyDeviceToHost);
		for (int t = 0; t < n; t++) {
			int lane = t % 32, w = t - lane;
			CK(hi[t * 4 + 0] == 100 + w + ref_shfl(0, lane, width, lane + 3));
			CK(hi[t * 4 + 1] == 100 + w + ref_shfl(1, lane, width, 2));
			CK(hi[t * 4 + 2] == 100 + w + ref_shfl(2, lane, width, 3));
			CK(hi[t * 4 + 3] == 100 + w + ref_shfl(3, lane, width, 5));
			CK(hf[t] == 0.5f + w + ref_shfl(2, lane, width, 1));
			CK(hd[t] == 0.25 + w + ref_shfl(3, lane, width, 1));
			CK(hl[t] == (long long)(w + ref_shfl(0, lane, width, 0)) << 40);
		}
		mix(hi, sizeof hi); mix(hf, sizeof hf); mix(hd, sizeof hd); mix(hl, sizeof hl);
	}
	cudaFree(oi); cudaFree(of); cudaFree(od); cudaFree(ol);
	printf("shuffles ok\n");
}

// ---- votes, with a partial mask and a partial last warp ----
GNN_DKERNEL(vote_kernel)(unsigned *o)
{
	const int t = threadIdx.x, lane = t % 32;
	int p = (t * 7) % 3 == 0;
	o[t * 5 + 3] = __activemask();   // no lane has exited yet
	o[t * 5 + 0] = __ballot_sync(0xffffffff, p);
	o[t * 5 + 1] = __all_sync(0xffffffff, t < 1000);
	o[t * 5 + 2] = __any_sync(0xffffffff, t == 40);
	o[t * 5 + 4] = lane < 16 ? __ballot_sync(0x0000ffff, lane & 1) : __ballot_sync(0xffff0000, lane > 20);
}

static void test_votes(void)
{
	const int n = 48;   // the second warp has 16 lanes
	unsigned *o, h[n * 5];
	cudaMalloc(&o, sizeof h);
	GNN_LAUNCH(vote_kernel, 1, n, 0, 0)(o);
	cudaMemcpy(h, o, sizeof h, cudaMemcpyDeviceToHost);
	for (int t = 0; t < n; t++) {
		int w = t / 32 * 32, lanes = t < 32 ? 32 : 16, lane = t % 32;
		unsigned b = 0, all = 0xffffffffu >> (32 - lanes), half = 0;
		for (int l = 0; l < lanes; l++)
			if (((w + l) * 7) % 3 == 0)
				b |= 1u << l;
		CK(h[t * 5 + 0] == b);
		CK(h[t * 5 + 1] == 1);
		CK(h[t * 5 + 2] == (unsigned)(t >= 32));
		CK(h[t * 5 + 3] == all);
		for (int l = 0; l < lanes; l++)
			if (lane < 16 ? (l < 16 && (l & 1)) : (l >= 16 && l > 20))
				half |= 1u << l;
		CK(h[t * 5 + 4] == half);
	}
	mix(h, sizeof h);
	cudaFree(o);
	printf("votes ok\n");
}

// ---- atomics: a histogram equals a serial count ----
GNN_DKERNEL(hist_kernel)(int64_t n, const int *x, int *bins, unsigned long long *total, float *fsum,
			 double *dsum, int *mx, int *mn, unsigned *sub)
{
	for (int64_t i = (int64_t)blockIdx.x * blockDim.x + threadIdx.x; i < n; i += (int64_t)blockDim.x * gridDim.x) {
		atomicAdd(&bins[x[i] % 64], 1);
		atomicAdd(total, (unsigned long long)x[i]);
		atomicAdd(fsum, (float)(x[i] % 8));
		atomicAdd(dsum, (double)x[i]);
		atomicMax(mx, x[i]);
		atomicMin(mn, x[i]);
		atomicSub(sub, 1u);
	}
}

GNN_DKERNEL(cas_kernel)(int *lock, int *counter, int *exch)
{
	// every thread takes a ticket with CAS
	int old = atomicAdd(counter, 0), seen;
	while ((seen = atomicCAS(counter, old, old + 1)) != old)
		old = seen;
	atomicExch(exch, 7);
	(void)lock;
}

static void test_atomics(void)
{
	const int n = 100000;
	int *hx = (int *)malloc(n * sizeof(int)), ref[64] = {0}, hb[64];
	unsigned long long rt = 0, t;
	double rd = 0, d;
	float rf = 0, f;
	int rmx = -1, rmn = 1 << 30, hm, hn;
	unsigned s, start = 1u << 30;
	for (int i = 0; i < n; i++) {
		hx[i] = (int)((i * 2654435761u) % 100003u);
		ref[hx[i] % 64]++;
		rt += hx[i];
		rf += hx[i] % 8;
		rd += hx[i];
		rmx = hx[i] > rmx ? hx[i] : rmx;
		rmn = hx[i] < rmn ? hx[i] : rmn;
	}
	int *x, *bins, *mx, *mn;
	unsigned long long *tot;
	float *fs;
	double *ds;
	unsigned *sub;
	cudaMalloc(&x, n * sizeof(int)); cudaMalloc(&bins, sizeof hb); cudaMalloc(&tot, 8); cudaMalloc(&fs, 4);
	cudaMalloc(&ds, 8); cudaMalloc(&mx, 4); cudaMalloc(&mn, 4); cudaMalloc(&sub, 4);
	cudaMemcpy(x, hx, n * sizeof(int), cudaMemcpyHostToDevice);
	cudaMemset(bins, 0, sizeof hb); cudaMemset(tot, 0, 8); cudaMemset(fs, 0, 4); cudaMemset(ds, 0, 8);
	int m0 = -1, m1 = 1 << 30;
	cudaMemcpy(mx, &m0, 4, cudaMemcpyHostToDevice);
	cudaMemcpy(mn, &m1, 4, cudaMemcpyHostToDevice);
	cudaMemcpy(sub, &start, 4, cudaMemcpyHostToDevice);
	GNN_LAUNCH(hist_kernel, 7, 128, 0, 0)((int64_t)n, x, bins, tot, fs, ds, mx, mn, sub);
	cudaMemcpy(hb, bins, sizeof hb, cudaMemcpyDeviceToHost);
	cudaMemcpy(&t, tot, 8, cudaMemcpyDeviceToHost);
	cudaMemcpy(&f, fs, 4, cudaMemcpyDeviceToHost);
	cudaMemcpy(&d, ds, 8, cudaMemcpyDeviceToHost);
	cudaMemcpy(&hm, mx, 4, cudaMemcpyDeviceToHost);
	cudaMemcpy(&hn, mn, 4, cudaMemcpyDeviceToHost);
	cudaMemcpy(&s, sub, 4, cudaMemcpyDeviceToHost);
	for (int i = 0; i < 64; i++)
		CK(hb[i] == ref[i]);
	CK(t == rt); CK(f == rf); CK(d == rd); CK(hm == rmx); CK(hn == rmn); CK(s == start - n);
	mix(hb, sizeof hb);
	int *lock, *counter, *exch, hc, he;
	cudaMalloc(&lock, 4); cudaMalloc(&counter, 4); cudaMalloc(&exch, 4);
	cudaMemset(counter, 0, 4);
	GNN_LAUNCH(cas_kernel, 3, 100, 0, 0)(lock, counter, exch);
	cudaMemcpy(&hc, counter, 4, cudaMemcpyDeviceToHost);
	cudaMemcpy(&he, exch, 4, cudaMemcpyDeviceToHost);
	CK(hc == 100 * blocks_run(3)); CK(he == 7);
	printf("atomics ok\n");
	cudaFree(x); cudaFree(bins); cudaFree(tot); cudaFree(fs); cudaFree(ds); cudaFree(mx); cudaFree(mn);
	cudaFree(sub); cudaFree(lock); cudaFree(counter); cudaFree(exch);
	free(hx);
}

// ---- __syncthreads orders a tree reduction through shared memory ----
GNN_DKERNEL_LB(reduce_kernel, 256)(int64_t n, const float *x, float *out)
{
	GNN_SHARED(float, s, [256]);
	const int t = threadIdx.x;
	float v = 0;
	for (int64_t i = (int64_t)blockIdx.x * blockDim.x + t; i < n; i += (int64_t)blockDim.x * gridDim.x)
		v += x[i];
	s[t] = v;
	__syncthreads();
	for (int d = blockDim.x / 2; d > 0; d /= 2) {
		if (t < d)
			s[t] += s[t + d];
		__syncthreads();
	}
	if (t == 0)
		out[blockIdx.x] = s[0];
}

static void test_reduce(void)
{
	const int n = 50000, g = 12;
	float *hx = (float *)malloc(n * sizeof(float)), ho[g], *x, *o;
	double ref = 0, got = 0;
	for (int i = 0; i < n; i++)
		hx[i] = (float)(i % 17), ref += i % 17;
	cudaMalloc(&x, n * sizeof(float)); cudaMalloc(&o, sizeof ho);
	cudaMemcpy(x, hx, n * sizeof(float), cudaMemcpyHostToDevice);
	GNN_LAUNCH(reduce_kernel, g, 256, 0, 0)((int64_t)n, x, o);
	int blocks = blocks_run(g);   // the other outputs stay unwritten
	cudaMemcpy(ho, o, blocks * sizeof(float), cudaMemcpyDeviceToHost);
	for (int i = 0; i < blocks; i++)
		got += ho[i];
	CK(got == ref);
	printf("reduce ok\n");
	cudaFree(x); cudaFree(o); free(hx);
}

// ---- shared memory is fresh and poisoned in every block ----
GNN_DKERNEL(fresh_kernel)(int *o)
{
	GNN_SHARED(unsigned, s, [4][32]);
	const int t = threadIdx.x;
	o[blockIdx.x * 128 + t] = s[t / 32][t % 32] == 0x7fbadbadu;   // before any write
	__syncthreads();
	s[t / 32][t % 32] = blockIdx.x;
}

static void test_fresh_shared(void)
{
	int *o, h[8 * 128];
	cudaMalloc(&o, sizeof h);
	GNN_LAUNCH(fresh_kernel, 8, 128, 0, 0)(o);
	cudaMemcpy(h, o, blocks_run(8) * 128 * sizeof(int), cudaMemcpyDeviceToHost);
	for (int i = 0; i < blocks_run(8) * 128; i++)
		CK(h[i] == 1);
	printf("fresh shared ok\n");
	cudaFree(o);
}

// ---- 3-D blocks and grids; a grid-stride loop covers all the work ----
GNN_DKERNEL(index_kernel)(int64_t n, int *o, unsigned *dims)
{
	const int64_t tid = threadIdx.x + blockDim.x * (threadIdx.y + (int64_t)blockDim.y * threadIdx.z);
	const int64_t bid = blockIdx.x + gridDim.x * (blockIdx.y + (int64_t)gridDim.y * blockIdx.z);
	const int64_t nt = (int64_t)blockDim.x * blockDim.y * blockDim.z;
	const int64_t nb = (int64_t)gridDim.x * gridDim.y * gridDim.z;
	for (int64_t i = bid * nt + tid; i < n; i += nb * nt)
		atomicAdd(&o[i], 1);
	if (bid == 0 && tid == 0) {
		dims[0] = gridDim.x; dims[1] = gridDim.y; dims[2] = gridDim.z;
		dims[3] = blockDim.x; dims[4] = blockDim.y; dims[5] = blockDim.z;
	}
}

static void test_grid_stride(void)
{
	const int n = 10007;
	int *o, *h = (int *)malloc(n * sizeof(int));
	unsigned *dims, hd[6];
	cudaMalloc(&o, n * sizeof(int)); cudaMalloc(&dims, sizeof hd);
	cudaMemset(o, 0, n * sizeof(int));
	GNN_LAUNCH(index_kernel, dim3(3, 4, 2), dim3(8, 4, 2), 0, 0)((int64_t)n, o, dims);
	cudaMemcpy(h, o, n * sizeof(int), cudaMemcpyDeviceToHost);
	cudaMemcpy(hd, dims, sizeof hd, cudaMemcpyDeviceToHost);
	for (int i = 0; i < n; i++)
		CK(h[i] == 1);
	printf("grid-stride ok: grid (%u,%u,%u) block (%u,%u,%u)\n", hd[0], hd[1], hd[2], hd[3], hd[4], hd[5]);
	mix(h, n * sizeof(int));
	cudaFree(o); cudaFree(dims); free(h);
}

// ---- copies, memset, Default, events, properties ----
static void test_copies(void)
{
	const int n = 1000;
	int h[n], back[n], *a, *b, *pinned;
	for (int i = 0; i < n; i++)
		h[i] = i * 3;
	CK(cudaMalloc(&a, sizeof h) == cudaSuccess);
	CK(cudaMalloc(&b, sizeof h) == cudaSuccess);
	CK(((uintptr_t)a & 255) == 0 && ((uintptr_t)b & 255) == 0);
	CK(cudaMallocHost(&pinned, sizeof h) == cudaSuccess);
	CK(cudaMemcpy(a, h, sizeof h, cudaMemcpyHostToDevice) == cudaSuccess);
	CK(cudaMemcpy(b, a, sizeof h, cudaMemcpyDeviceToDevice) == cudaSuccess);
	CK(cudaMemcpy(back, b, sizeof h, cudaMemcpyDeviceToHost) == cudaSuccess);
	CK(memcmp(h, back, sizeof h) == 0);
	CK(cudaMemset(a, 0, sizeof h) == cudaSuccess);
	CK(cudaMemcpyAsync(pinned, a, sizeof h, cudaMemcpyDefault, 0) == cudaSuccess);
	for (int i = 0; i < n; i++)
		CK(pinned[i] == 0);
	CK(cudaMemcpy(a + 10, h, 40, cudaMemcpyDefault) == cudaSuccess);
	CK(cudaMemcpy(back, a, sizeof h, cudaMemcpyDefault) == cudaSuccess);
	CK(back[10] == 0 && back[19] == 27 && back[20] == 0);
	cudaStream_t st;
	CK(cudaStreamCreateWithFlags(&st, cudaStreamNonBlocking) == cudaSuccess);
	CK(cudaMemsetAsync(b, 0xff, 8, st) == cudaSuccess);
	CK(cudaStreamSynchronize(st) == cudaSuccess);
	CK(cudaStreamDestroy(st) == cudaSuccess);
	CK(cudaFree(a) == cudaSuccess && cudaFree(b) == cudaSuccess && cudaFree(NULL) == cudaSuccess);
	CK(cudaFreeHost(pinned) == cudaSuccess);
	void *big;
	CK(cudaMalloc(&big, (size_t)1 << 62) == cudaErrorMemoryAllocation);
	CK(cudaGetLastError() == cudaErrorMemoryAllocation);
	CK(cudaGetLastError() == cudaSuccess);
	printf("copies ok: %s, %s\n", cudaGetErrorName(cudaErrorMemoryAllocation), cudaGetErrorString(cudaErrorMemoryAllocation));

	cudaEvent_t e0, e1;
	float ms = -1;
	CK(cudaEventCreate(&e0) == cudaSuccess && cudaEventCreate(&e1) == cudaSuccess);
	CK(cudaEventRecord(e0) == cudaSuccess && cudaEventRecord(e1, 0) == cudaSuccess);
	CK(cudaEventSynchronize(e1) == cudaSuccess);
	CK(cudaEventElapsedTime(&ms, e0, e1) == cudaSuccess && ms >= 0);
	cudaEventDestroy(e0); cudaEventDestroy(e1);
	printf("events ok\n");

	cudaDeviceProp p;
	int nd = 0, dev = -1;
	CK(cudaGetDeviceCount(&nd) == cudaSuccess && nd == 1);
	CK(cudaSetDevice(0) == cudaSuccess && cudaGetDevice(&dev) == cudaSuccess && dev == 0);
	CK(cudaGetDeviceProperties(&p, 0) == cudaSuccess);
	printf("device: %s sm_%d%d warp %d max %d shared %zu\n", p.name, p.major, p.minor, p.warpSize,
	       p.maxThreadsPerBlock, p.sharedMemPerBlock);
}

int main(void)
{
	test_shuffles();
	test_votes();
	test_atomics();
	test_reduce();
	test_fresh_shared();
	test_grid_stride();
	test_copies();
	CK(cudaDeviceSynchronize() == cudaSuccess);
	printf("checksum %016llx\n", sum_);
	return 0;
}
