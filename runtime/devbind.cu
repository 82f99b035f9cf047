/*
** devbind.cu: bind's graph work as CUDA kernels (the gnn_devbind table of
** device.h), so that binding a model of the cuda target costs the host
** O(1) work in the graph's size: one copy of the edge index up, a few
** small copies down (edge counts, the first bad index, a split plan's
** totals and header), and launches.
**
** Built twice: by nvcc into libgnnrt_cuda.a (gnn_devbind_cuda), and as
** C++ against the emulated device's cuda_runtime.h into libgnnemu.a
** (GNN_DEVBIND_SYMBOL=gnn_devbind_cuda_emu), where every kernel runs
** under its checks.  Kernels are written with the macros generated code
** uses (GNN_DKERNEL, GNN_LAUNCH, GNN_SHARED) and every loop over blocks
** is grid-stride, so a clamped grid (GNNEMU_GRID_MAX) gives the same
** results.
**
** Determinism: nothing whose order shows in a result uses a float atomic.
** Counts are integer atomics (the total does not depend on the order);
** prefix sums are a fixed tree; the stable counting sort that builds
** CSRs and segment plans is an LSD radix sort by 8-bit digits, whose
** placement within a tile is a warp walking the tile in order (ballots
** find the lanes with equal digits), so equal keys keep their order and
** the result is graph.c's countsort bit for bit.  Per-node sums of
** weights walk the node's CSR row, which is edge order within the row,
** in double, as graph.c's setdis does.  Split plans use integers only:
** sums and maxima by integer atomics, windows by prefix sums and the
** per-element tests of split.h, which split.c's reference uses too.
*/
#include <math.h>
#include <stdint.h>

#include <cuda_runtime.h>

#include "device.h"
#include "split.h"

#ifndef GNN_EMU
#define GNN_DKERNEL(k) static __global__ void k
#define GNN_LAUNCH(k, grid, block, shmem, stream) k<<<grid, block, shmem, stream>>>
#define GNN_SHARED(T, name, dims) __shared__ T name dims
#endif
#ifndef GNN_DEVBIND_SYMBOL
#define GNN_DEVBIND_SYMBOL gnn_devbind_cuda
#endif

enum {
	NT = 256,              /* threads of an elementwise block */
	SCAN_PER = 8,          /* items a scan thread sums */
	SCAN_CH = NT * SCAN_PER,
	RS_TILE = 4096,        /* radix sort: items per tile (one warp walks it) */
};

#define GSTRIDE(t, T) for (int64_t t = (int64_t)blockIdx.x * blockDim.x + threadIdx.x; t < (T); t += (int64_t)blockDim.x * gridDim.x)

/* blocks for T items, per a block; grid-stride loops take the rest */
static unsigned
blocks(int64_t T, int64_t per)
{
	int64_t b = (T + per - 1) / per;

	return b < 1 ? 1u : b > (1 << 20) ? (1u << 20) : (unsigned)b;
}

/* a launch on s, recorded while profiling (gnnrt.h: the bind phase's
 * program, the device's timers) */
#define DB_LAUNCH(k, grid, block, shmem, s) \
	GNN_PROF(GNN_CUDA_SELF, s, NULL, #k, "-", grid, block, shmem) GNN_LAUNCH(k, grid, block, shmem, s)

#define TRY(x) do { if ((err = (x)) != cudaSuccess) goto done; } while (0)
#define LAUNCHED() TRY(cudaGetLastError())

/* ---- kernels ---------------------------------------------------------- */

GNN_DKERNEL(db_count)(int64_t k, const int64_t *key, unsigned long long *cnt)
{
	GSTRIDE(t, k)
		atomicAdd(cnt + key[t], 1ULL);
}

GNN_DKERNEL(db_firstbad)(int64_t k, const int64_t *key, int64_t n, unsigned long long *first)
{
	GSTRIDE(t, k)
		if (key[t] < 0 || key[t] >= n)
			atomicMin(first, (unsigned long long)t);
}

/* k arrays of L, one after another, in the same launch: block qb scans
 * chunk qb % nb of array qb / nb (nb chunks an array) */
GNN_DKERNEL(db_scan_block)(int64_t L, int64_t k, int64_t *a0, int64_t *sums)
{
	GNN_SHARED(int64_t, part, [NT]);
	const int64_t nb = (L + SCAN_CH - 1) / SCAN_CH;
	const int me = (int)threadIdx.x;

	for (int64_t qb = blockIdx.x; qb < k * nb; qb += gridDim.x) {
		int64_t *a = a0 + qb / nb * L;
		const int64_t b = qb % nb, base = b * SCAN_CH + (int64_t)me * SCAN_PER;
		int64_t s = 0, run, x;

		for (int j = 0; j < SCAN_PER; j++)
			if (base + j < L)
				s += a[base + j];
		part[me] = s;
		__syncthreads();
		for (int d = 1; d < NT; d <<= 1) {
			x = me >= d ? part[me - d] : 0;
			__syncthreads();
			part[me] += x;
			__syncthreads();
		}
		run = part[me] - s;
		for (int j = 0; j < SCAN_PER; j++)
			if (base + j < L) {
				x = a[base + j];
				a[base + j] = run;
				run += x;
			}
		if (me == NT - 1)
			sums[qb] = part[NT - 1];
		__syncthreads();   /* part is the next block's */
	}
}

GNN_DKERNEL(db_scan_add)(int64_t L, int64_t k, int64_t *a, const int64_t *sums)
{
	const int64_t nb = (L + SCAN_CH - 1) / SCAN_CH;

	GSTRIDE(t, k * L)
		a[t] += sums[t / L * nb + t % L / SCAN_CH];
}

/* the totals of k scanned arrays of L, one after another */
GNN_DKERNEL(db_totals)(int64_t L, int64_t k, const int64_t *a, int64_t *out)
{
	GSTRIDE(q, k)
		out[q] = a[q * L + L - 1];
}

/* radix sort: per tile, how many of its keys have each digit (digit-major) */
GNN_DKERNEL(db_rs_hist)(int64_t m, int shift, const int64_t *key, int64_t ntile, int64_t *hist)
{
	GNN_SHARED(unsigned, cnt, [256]);

	for (int64_t b = blockIdx.x; b < ntile; b += gridDim.x) {
		const int64_t lo = b * RS_TILE, hi = m - lo < RS_TILE ? m : lo + RS_TILE;

		for (int d = threadIdx.x; d < 256; d += blockDim.x)
			cnt[d] = 0;
		__syncthreads();
		for (int64_t t = lo + threadIdx.x; t < hi; t += blockDim.x)
			atomicAdd(&cnt[(key[t] >> shift) & 255], 1u);
		__syncthreads();
		for (int d = threadIdx.x; d < 256; d += blockDim.x)
			hist[(int64_t)d * ntile + b] = cnt[d];
		__syncthreads();
	}
}

/*
** radix sort: one warp places a tile's items at off[digit][tile] on, in
** the tile's order: 32 items at a time, the lanes holding one digit
** ("peers", found with a ballot per digit bit) take consecutive slots by
** lane, and the highest of them advances the digit's cursor.  keyo may
** be NULL (the last pass); id NULL means the identity.
*/
GNN_DKERNEL(db_rs_place)(int64_t m, int shift, const int64_t *key, const int64_t *id, int64_t ntile,
                         const int64_t *off, int64_t *keyo, int64_t *ido)
{
	GNN_SHARED(int64_t, cur, [256]);
	const unsigned lane = threadIdx.x;

	for (int64_t b = blockIdx.x; b < ntile; b += gridDim.x) {
		const int64_t lo = b * RS_TILE, hi = m - lo < RS_TILE ? m : lo + RS_TILE;

		for (int d = lane; d < 256; d += 32)
			cur[d] = off[(int64_t)d * ntile + b];
		__syncwarp();
		for (int64_t c = lo; c < hi; c += 32) {
			const int64_t t = c + lane;
			const int ok = t < hi;
			const int64_t k = ok ? key[t] : 0;
			const unsigned d = (unsigned)((k >> shift) & 255);
			unsigned peers = __ballot_sync(0xffffffffu, ok);
			int64_t at = 0;

			for (int bit = 0; bit < 8; bit++) {
				const unsigned set = __ballot_sync(0xffffffffu, (d >> bit) & 1u);
				peers &= (d >> bit) & 1u ? set : ~set;
			}
			if (ok) {
				at = cur[d] + __popc(peers & ((1u << lane) - 1u));
				if (keyo)
					keyo[at] = k;
				ido[at] = id ? id[t] : t;
			}
			__syncwarp();
			if (ok && (peers >> lane) == 1u)   /* the highest of its peers */
				cur[d] += __popc(peers);
			__syncwarp();
		}
	}
}

GNN_DKERNEL(db_count2float)(int64_t n, const unsigned long long *cnt, float *out)
{
	GSTRIDE(i, n)
		out[i] = (float)(int64_t)cnt[i];
}

GNN_DKERNEL(db_weights)(int64_t e, const float *w, float *out)
{
	GSTRIDE(t, e)
		out[t] = w ? w[t] : 1.0f;
}

/* deg^-1/2 per node: deg from the weights summed in edge order (the CSR
 * row), else the row's length; graph.c's setdis */
GNN_DKERNEL(db_dis)(int64_t n, const int64_t *rowptr, const unsigned long long *cnt, const float *w, double *dis)
{
	GSTRIDE(i, n) {
		double d = 0;

		if (w) {
			const int64_t *perm = rowptr + n + 1;
			for (int64_t k = rowptr[i]; k < rowptr[i + 1]; k++)
				d += w[perm[k]];
		} else
			d = (double)(int64_t)cnt[i];
		d = pow(d, -0.5);
		dis[i] = isinf(d) ? 0 : d;
	}
}

GNN_DKERNEL(db_gcn_norm)(int64_t e, const int64_t *ei, const float *w, const double *dis, float *out)
{
	GSTRIDE(t, e) {
		const double wt = w ? (double)w[t] : 1.0;
		out[t] = (float)(dis[ei[t]] * wt * dis[ei[e + t]]);
	}
}

GNN_DKERNEL(db_loops_add)(int64_t e, int64_t n, const int64_t *ei, const float *w, int64_t *eo, float *wo)
{
	GSTRIDE(t, e + n) {
		if (t < e) {
			eo[t] = ei[t];
			eo[e + n + t] = ei[e + t];
			if (wo)
				wo[t] = w[t];
		} else {
			eo[t] = eo[e + n + t] = t - e;
			if (wo)
				wo[t] = 1.0f;
		}
	}
}

GNN_DKERNEL(db_nonloop)(int64_t e, const int64_t *ei, int64_t *flag)
{
	GSTRIDE(t, e)
		flag[t] = ei[t] != ei[e + t];
}

/* the non-loops at their places pos[t] (an exclusive scan of the flags),
 * in a graph of eo_n edges */
GNN_DKERNEL(db_keep)(int64_t e, const int64_t *ei, const float *w, const int64_t *pos, int64_t eo_n, int64_t *eo, float *wo)
{
	GSTRIDE(t, e)
		if (ei[t] != ei[e + t]) {
			eo[pos[t]] = ei[t];
			eo[eo_n + pos[t]] = ei[e + t];
			if (wo)
				wo[pos[t]] = w[t];
		}
}

/* per node, 1 + the id of its last self loop (0: none) */
GNN_DKERNEL(db_lastloop)(int64_t e, const int64_t *ei, unsigned long long *last)
{
	GSTRIDE(t, e)
		if (ei[t] == ei[e + t])
			atomicMax(last + ei[t], (unsigned long long)t + 1);
}

/* add_remaining_self_loops' loops after the kept edges: a node's loop
 * weighs its last existing loop's weight, else fill */
GNN_DKERNEL(db_loops_rest)(int64_t n, int64_t kept, int64_t eo_n, const float *w, const unsigned long long *last,
                           float fill, int64_t *eo, float *wo)
{
	GSTRIDE(i, n) {
		eo[kept + i] = eo[eo_n + kept + i] = i;
		if (wo)
			wo[kept + i] = last[i] ? w[last[i] - 1] : fill;
	}
}

/* ---- split plans (split.c's rules, split.h) --------------------------- */

/* a[0] <= x: the last i in [0, n) with a[i] <= x (a nondecreasing) */
static __device__ int64_t
lastle(const int64_t *a, int64_t n, int64_t x)
{
	int64_t lo = 0, hi = n;

	while (hi - lo > 1) {
		const int64_t mid = lo + (hi - lo) / 2;
		if (a[mid] <= x)
			lo = mid;
		else
			hi = mid;
	}
	return lo;
}

/* per candidate bucket (split.h): rows, their edges, their largest
 * 1 + degree; summed in shared memory, then once a block */
GNN_DKERNEL(db_sp_stats)(int64_t t, const int64_t *rowptr, int64_t c0, unsigned long long *st)
{
	GNN_SHARED(unsigned long long, acc, [3 * GNN_SPLIT_NCAND]);

	for (int k = threadIdx.x; k < 3 * GNN_SPLIT_NCAND; k += blockDim.x)
		acc[k] = 0;
	__syncthreads();
	GSTRIDE(r, t) {
		const int64_t d = rowptr[r + 1] - rowptr[r];
		const int b = gnn_split_bucket(d, c0);

		atomicAdd(&acc[b], 1ULL);
		atomicAdd(&acc[GNN_SPLIT_NCAND + b], (unsigned long long)d);
		atomicMax(&acc[2 * GNN_SPLIT_NCAND + b], (unsigned long long)(1 + d));
	}
	__syncthreads();
	for (int k = threadIdx.x; k < 3 * GNN_SPLIT_NCAND; k += blockDim.x)
		if (acc[k]) {
			if (k < 2 * GNN_SPLIT_NCAND)
				atomicAdd(st + k, acc[k]);
			else
				atomicMax(st + k, acc[k]);
		}
}

/* per row (and 0 at t): long or not, its work, its chunks */
GNN_DKERNEL(db_sp_rows)(int64_t t, const int64_t *rowptr, int64_t c, int64_t *islong, int64_t *work, int64_t *chunks)
{
	GSTRIDE(r, t + 1) {
		const int64_t d = r < t ? rowptr[r + 1] - rowptr[r] : 0;

		islong[r] = r < t && d > c;
		work[r] = r < t ? gnn_split_rowwork(d, c) : 0;
		chunks[r] = r < t && d > c ? (d + c - 1) / c : 0;
	}
}

/* per row (and 0 at t): does it open a row window (P: the work before
 * each row) */
GNN_DKERNEL(db_sp_opens)(int64_t t, int64_t h, int64_t tau, const int64_t *P, int64_t *opens)
{
	GSTRIDE(r, t + 1)
		opens[r] = r < t && (r == 0 || gnn_split_opens(P[r - 1], P[r] - P[r - 1], P[r], P[r + 1] - P[r], h, tau));
}

/* the long rows in order: their rows and first chunks (first[nlong]: the
 * chunks) */
GNN_DKERNEL(db_sp_long)(int64_t t, const int64_t *pos, const int64_t *cs, int64_t *lrow, int64_t *first)
{
	GSTRIDE(r, t + 1) {
		if (r == t)
			first[pos[t]] = cs[t];
		else if (pos[r + 1] > pos[r]) {
			lrow[pos[r]] = r;
			first[pos[r]] = cs[r];
		}
	}
}

/*
 * One reduce level's rows (na active long rows, item: their first items,
 * item[na] the level's items): per row the windows it opens, the carries
 * it leaves (its windows when cut) and whether it is cut; 0 at na.
 */
GNN_DKERNEL(db_sp_lvrows)(int64_t na, int64_t c, int64_t h, int64_t tau, const int64_t *item, int64_t *win, int64_t *carry,
                          int64_t *cut)
{
	GSTRIDE(i, na + 1) {
		const int64_t k = i < na ? item[i + 1] - item[i] : 0;

		if (i == na)
			win[i] = carry[i] = cut[i] = 0;
		else if (k > c) {
			win[i] = carry[i] = (k + c - 1) / c;
			cut[i] = 1;
		} else {
			win[i] = i == 0 || gnn_split_opens(item[i - 1], item[i] - item[i - 1], item[i], k, h, tau);
			carry[i] = cut[i] = 0;
		}
	}
}

/* the next level's rows: the cut ones (cut: scanned), whose first items
 * there are their first carries (carry: scanned) */
GNN_DKERNEL(db_sp_next)(int64_t na, const int64_t *act, const int64_t *carry, const int64_t *cut, int64_t *act2, int64_t *item2)
{
	GSTRIDE(i, na + 1) {
		if (i == na)
			item2[cut[na]] = carry[na];
		else if (cut[i + 1] > cut[i]) {
			act2[cut[i]] = act ? act[i] : i;
			item2[cut[i]] = carry[i];
		}
	}
}

/* per row: lix (its index among long rows, or -1) and, where it opens a
 * row window (ws: the openings' scan), the window's first row */
GNN_DKERNEL(db_sp_rowfill)(int64_t t, const int64_t *pos, const int64_t *ws, int64_t *lix, int64_t *rwin)
{
	GSTRIDE(r, t + 1) {
		if (r == t) {
			rwin[ws[t]] = t;
			continue;
		}
		lix[r] = pos[r + 1] > pos[r] ? pos[r] : -1;
		if (ws[r + 1] > ws[r])
			rwin[ws[r]] = r;
	}
}

/* one thread a chunk: its long row by binary search over the rows' first chunks */
GNN_DKERNEL(db_sp_chunks)(int64_t n0, int64_t nlong, int64_t c, const int64_t *rowptr, const int64_t *lrow,
                          const int64_t *first, int64_t *crow)
{
	GSTRIDE(k, n0) {
		const int64_t j = lastle(first, nlong, k), r = lrow[j], e = rowptr[r] + (k - first[j]) * c;

		crow[k] = r;
		crow[n0 + k] = e;
		crow[2 * n0 + k] = rowptr[r + 1] - e > c ? e + c : rowptr[r + 1];
	}
}

/* a level's irow: one thread an item (act NULL: the identity) */
GNN_DKERNEL(db_sp_irow)(int64_t n, int64_t na, const int64_t *act, const int64_t *item, int64_t *irow)
{
	GSTRIDE(x, n) {
		const int64_t i = lastle(item, na, x);

		irow[x] = act ? act[i] : i;
	}
}

/* a level's windows: one thread a window, its row by binary search over
 * the rows' first windows */
GNN_DKERNEL(db_sp_wins)(int64_t nwin, int64_t na, int64_t c, const int64_t *item, const int64_t *win,
                        const int64_t *carry, int64_t *wstart, int64_t *wdest)
{
	GSTRIDE(w, nwin + 1) {
		const int64_t i = w < nwin ? lastle(win, na, w) : na, q = w - win[i];

		if (w == nwin)
			wstart[w] = item[na];
		else if (item[i + 1] - item[i] > c) {
			wstart[w] = item[i] + q * c;
			wdest[w] = carry[i] + q;
		} else {
			wstart[w] = item[i];
			wdest[w] = -1;
		}
	}
}

/* ---- host side: launches, O(1) each ----------------------------------- */

/* k arrays of L (one after another) in place to their exclusive prefix
 * sums, in the same launches; L >= 0 */
static cudaError_t
scans(int64_t *a, int64_t L, int64_t k, cudaStream_t s)
{
	cudaError_t err = cudaSuccess;
	int64_t nb = (L + SCAN_CH - 1) / SCAN_CH, *sums = NULL;

	if (L == 0 || k == 0)
		return cudaSuccess;
	TRY(cudaMalloc((void **)&sums, (size_t)(k * nb) * sizeof *sums));
	DB_LAUNCH(db_scan_block, blocks(k * nb, 1), NT, 0, s)(L, k, a, sums);
	LAUNCHED();
	if (nb > 1) {
		TRY(scans(sums, nb, k, s));
		DB_LAUNCH(db_scan_add, blocks(k * L, NT), NT, 0, s)(L, k, a, sums);
		LAUNCHED();
	}
done:
	cudaFree(sums);
	return err;
}

static cudaError_t
scan(int64_t *a, int64_t L, cudaStream_t s)
{
	return scans(a, L, 1, s);
}

/* order[m]: 0..m-1 sorted stably by key (each in [0, n)) */
static cudaError_t
sortids(int64_t *order, const int64_t *key, int64_t m, int64_t n, cudaStream_t s)
{
	cudaError_t err = cudaSuccess;
	int64_t ntile = (m + RS_TILE - 1) / RS_TILE, *hist = NULL, *buf = NULL;
	const int64_t *kin = key, *iin = NULL;
	int bits = 0, passes, p;

	if (m == 0)
		return cudaSuccess;
	while (bits < 63 && ((int64_t)1 << bits) < n)
		bits++;
	passes = bits > 8 ? (bits + 7) / 8 : 1;
	TRY(cudaMalloc((void **)&hist, (size_t)(256 * ntile) * sizeof *hist));
	if (passes > 1)   /* keys and ids, twice: passes alternate */
		TRY(cudaMalloc((void **)&buf, (size_t)(4 * m) * sizeof *buf));
	for (p = 0; p < passes; p++) {
		const int last = p == passes - 1;
		int64_t *ko = last ? NULL : buf + (p % 2) * 2 * m, *io = last ? order : buf + (p % 2) * 2 * m + m;

		DB_LAUNCH(db_rs_hist, blocks(ntile, 1), NT, 0, s)(m, 8 * p, kin, ntile, hist);
		LAUNCHED();
		TRY(scan(hist, 256 * ntile, s));
		DB_LAUNCH(db_rs_place, blocks(ntile, 1), 32, 0, s)(m, 8 * p, kin, iin, ntile, hist, ko, io);
		LAUNCHED();
		kin = ko;
		iin = io;
	}
done:
	cudaFree(hist);
	cudaFree(buf);
	return err;
}

/* plan = rowptr[n+1], order[k]: key's stable counting sort (keys in range) */
static cudaError_t
countsort(int64_t *plan, const int64_t *key, int64_t k, int64_t n, cudaStream_t s)
{
	cudaError_t err = cudaSuccess;

	TRY(cudaMemsetAsync(plan, 0, (size_t)(n + 1) * sizeof *plan, s));
	if (k > 0) {
		DB_LAUNCH(db_count, blocks(k, NT), NT, 0, s)(k, key, (unsigned long long *)plan);
		LAUNCHED();
	}
	TRY(scan(plan, n + 1, s));
	TRY(sortids(plan + n + 1, key, k, n, s));
done:
	return err;
}

/* n bytes back to the host */
static cudaError_t
fetchn(void *to, const void *from, size_t n, cudaStream_t s)
{
	cudaError_t err = cudaMemcpyAsync(to, from, n, cudaMemcpyDeviceToHost, s);

	return err != cudaSuccess ? err : cudaStreamSynchronize(s);
}

/* 8 bytes back to the host */
static cudaError_t
fetch(void *to, const void *from, cudaStream_t s)
{
	return fetchn(to, from, 8, s);
}

static void
db_release(gnn_dgraph *g)
{
	cudaFree(g->ei);
	cudaFree(g->w);
	cudaFree(g->csr);
	g->ei = g->csr = NULL;
	g->w = NULL;
	g->ready = 0;
}

/* room for a graph of n target and ns source nodes and e edges, weighted
 * or not */
static cudaError_t
newgraph(gnn_dgraph *g, int64_t n, int64_t ns, int64_t e, int weighted)
{
	cudaError_t err = cudaSuccess;

	*g = gnn_dgraph{n, e, ns, NULL, NULL, NULL, weighted, 1};
	if (e > 0) {
		TRY(cudaMalloc((void **)&g->ei, (size_t)(2 * e) * sizeof *g->ei));
		if (weighted)
			TRY(cudaMalloc((void **)&g->w, (size_t)e * sizeof *g->w));
	}
done:
	if (err != cudaSuccess)
		db_release(g);
	return err;
}

static int
db_upload(gnn_dgraph *d, const gnn_graph *g, void *sv)
{
	cudaStream_t s = (cudaStream_t)sv;
	cudaError_t err;
	int64_t e = gnn_graph_num_edges(g);

	/* graph.c keeps dst right after src: one copy */
	TRY(newgraph(d, gnn_graph_num_nodes(g), gnn_graph_num_src_nodes(g), e, gnn_graph_weight(g) != NULL));
	if (e > 0) {
		TRY(cudaMemcpyAsync(d->ei, gnn_graph_src(g), (size_t)(2 * e) * sizeof *d->ei, cudaMemcpyHostToDevice, s));
		if (d->w)
			TRY(cudaMemcpyAsync(d->w, gnn_graph_weight(g), (size_t)e * sizeof *d->w, cudaMemcpyHostToDevice, s));
	}
	/* the host's arrays may change once bind returns */
	TRY(cudaStreamSynchronize(s));
done:
	if (err != cudaSuccess)
		db_release(d);
	return (int)err;
}

static int
db_selfloops(gnn_dgraph *o, const gnn_dgraph *g, int op, float fill, void *sv)
{
	cudaStream_t s = (cudaStream_t)sv;
	cudaError_t err = cudaSuccess;
	int64_t *pos = NULL, kept = 0, e = g->e, n = g->n;
	unsigned long long *last = NULL;

	/* graphs of one node type only (typecheck refuses a relation's loops) */
	*o = gnn_dgraph{n, 0, n, NULL, NULL, NULL, g->weighted, 0};
	if (op == GNN_DB_ADD_LOOPS) {
		TRY(newgraph(o, n, n, e + n, g->weighted));
		if (e + n > 0) {
			DB_LAUNCH(db_loops_add, blocks(e + n, NT), NT, 0, s)(e, n, g->ei, g->w, o->ei, o->w);
			LAUNCHED();
		}
		return 0;
	}
	/* the non-loops in order: flags, their exclusive scan, its total */
	TRY(cudaMalloc((void **)&pos, (size_t)(e + 1) * sizeof *pos));
	TRY(cudaMemsetAsync(pos + e, 0, sizeof *pos, s));
	if (e > 0) {
		DB_LAUNCH(db_nonloop, blocks(e, NT), NT, 0, s)(e, g->ei, pos);
		LAUNCHED();
	}
	TRY(scan(pos, e + 1, s));
	TRY(fetch(&kept, pos + e, s));
	TRY(newgraph(o, n, n, kept + (op == GNN_DB_REMAINING_LOOPS ? n : 0), g->weighted));
	if (e > 0) {
		DB_LAUNCH(db_keep, blocks(e, NT), NT, 0, s)(e, g->ei, g->w, pos, o->e, o->ei, o->w);
		LAUNCHED();
	}
	if (op == GNN_DB_REMAINING_LOOPS && n > 0) {
		TRY(cudaMalloc((void **)&last, (size_t)n * sizeof *last));
		TRY(cudaMemsetAsync(last, 0, (size_t)n * sizeof *last, s));
		if (e > 0 && g->w) {
			DB_LAUNCH(db_lastloop, blocks(e, NT), NT, 0, s)(e, g->ei, last);
			LAUNCHED();
		}
		DB_LAUNCH(db_loops_rest, blocks(n, NT), NT, 0, s)(n, kept, o->e, g->w, last, fill, o->ei, o->w);
		LAUNCHED();
	}
done:
	cudaFree(pos);
	cudaFree(last);
	if (err != cudaSuccess)
		db_release(o);
	return (int)err;
}

static int
db_csr(gnn_dgraph *g, void *sv)
{
	cudaError_t err = cudaSuccess;

	if (g->csr)
		return 0;
	TRY(cudaMalloc((void **)&g->csr, (size_t)(g->n + 1 + g->e) * sizeof *g->csr));
	TRY(countsort(g->csr, g->ei ? g->ei + g->e : NULL, g->e, g->n, (cudaStream_t)sv));
done:
	if (err != cudaSuccess) {
		cudaFree(g->csr);
		g->csr = NULL;
	}
	return (int)err;
}

/* per node of n, how many edges have it at the end ends (src: ei, or dst) */
static cudaError_t
counts(unsigned long long **cnt, int64_t n, const gnn_dgraph *g, const int64_t *ends, cudaStream_t s)
{
	cudaError_t err = cudaSuccess;

	TRY(cudaMalloc((void **)cnt, (size_t)(n > 0 ? n : 1) * sizeof **cnt));
	TRY(cudaMemsetAsync(*cnt, 0, (size_t)n * sizeof **cnt, s));
	if (g->e > 0) {
		DB_LAUNCH(db_count, blocks(g->e, NT), NT, 0, s)(g->e, ends, *cnt);
		LAUNCHED();
	}
done:
	return err;
}

static int
db_tensor(void *out, int what, gnn_dgraph *g, void *sv)
{
	cudaStream_t s = (cudaStream_t)sv;
	cudaError_t err = cudaSuccess;
	unsigned long long *cnt = NULL;
	double *dis = NULL;
	const int64_t n = g->n, e = g->e;

	switch (what) {
	case GNN_DB_SRC:
	case GNN_DB_DST:
		if (e > 0)
			TRY(cudaMemcpyAsync(out, g->ei + (what == GNN_DB_DST ? e : 0), (size_t)e * sizeof *g->ei,
			                    cudaMemcpyDeviceToDevice, s));
		break;
	case GNN_DB_IN_DEGREE:
	case GNN_DB_OUT_DEGREE: {
		/* out-degrees per source node: a relation's are its sources' */
		const int64_t rows = what == GNN_DB_IN_DEGREE ? n : g->ns;
		TRY(counts(&cnt, rows, g, g->ei ? g->ei + (what == GNN_DB_IN_DEGREE ? e : 0) : NULL, s));
		if (rows > 0) {
			DB_LAUNCH(db_count2float, blocks(rows, NT), NT, 0, s)(rows, cnt, (float *)out);
			LAUNCHED();
		}
		break;
	}
	case GNN_DB_EDGE_WEIGHT:
		if (e > 0) {
			DB_LAUNCH(db_weights, blocks(e, NT), NT, 0, s)(e, g->w, (float *)out);
			LAUNCHED();
		}
		break;
	case GNN_DB_GCN_NORM:
		if (e == 0)
			break;
		/* weighted: sums in CSR order; else the counts suffice */
		if (g->w)
			TRY((cudaError_t)db_csr(g, sv));
		else
			TRY(counts(&cnt, n, g, g->ei + e, s));
		TRY(cudaMalloc((void **)&dis, (size_t)n * sizeof *dis));
		DB_LAUNCH(db_dis, blocks(n, NT), NT, 0, s)(n, g->csr, cnt, g->w, dis);
		LAUNCHED();
		DB_LAUNCH(db_gcn_norm, blocks(e, NT), NT, 0, s)(e, g->ei, g->w, dis, (float *)out);
		LAUNCHED();
		break;
	default:
		err = cudaErrorInvalidValue;
		break;
	}
done:
	cudaFree(cnt);
	cudaFree(dis);
	return (int)err;
}

static int
db_segplan(int64_t *plan, const int64_t *key, int64_t k, int64_t n, int64_t *bad, int64_t *badval, void *sv)
{
	cudaStream_t s = (cudaStream_t)sv;
	cudaError_t err = cudaSuccess;
	unsigned long long *first = NULL, at = ~0ULL;

	*bad = -1;
	if (k > 0) {
		/* everything checked first, as gnn_segment_plan does */
		TRY(cudaMalloc((void **)&first, sizeof *first));
		TRY(cudaMemsetAsync(first, 0xff, sizeof *first, s));
		DB_LAUNCH(db_firstbad, blocks(k, NT), NT, 0, s)(k, key, n, first);
		LAUNCHED();
		TRY(fetch(&at, first, s));
		if (at != ~0ULL) {
			*bad = (int64_t)at;
			TRY(fetch(badval, key + at, s));
			goto done;
		}
	}
	TRY(countsort(plan, key, k, n, s));
done:
	cudaFree(first);
	return (int)err;
}

/* a reduce level's rows on the device: na of them, act their long rows
 * (NULL: the identity), item their first items (item[na]: the level's),
 * win and carry the exclusive scans of their windows and carries */
struct splitlev {
	int64_t na, *act, *item, *win, *carry;
};

/*
 * gnn_split_plan on the device: the chunk length from per-bucket
 * statistics (one readback of 3 x 64 slots), then scans over the rows
 * (long flags, work, chunks) and per reduce level over its rows
 * (windows, carries, cut rows), each reading back three totals in one
 * copy; the host makes the header from them, and every array of the
 * plan is filled one thread an element, by binary search where an
 * element needs its row.
 */
static int
db_splitplan(int64_t **out, size_t *nbytes, int64_t *head, const int64_t *rowptr, int64_t t, int64_t c0, void *sv)
{
	cudaStream_t s = (cudaStream_t)sv;
	cudaError_t err = cudaSuccess;
	unsigned long long *st = NULL;
	int64_t stats[3 * GNN_SPLIT_NCAND], tot[4], n[GNN_SPLIT_MAXLEV], nwin[GNN_SPLIT_MAXLEV], c, h, tau, lh, ltau, nlong, n0, rnwin;
	int64_t *dtot, *pos = NULL, *P, *cs, *ws, *lrow = NULL, *first, *plan = NULL;
	splitlev lv[GNN_SPLIT_MAXLEV + 1] = {};
	size_t slots;
	int nlev = 0;

	*out = NULL;
	*nbytes = 0;
	if (c0 < 2)
		c0 = 2;
	TRY(cudaMalloc((void **)&st, sizeof stats + sizeof tot));
	dtot = (int64_t *)(st + 3 * GNN_SPLIT_NCAND);
	TRY(cudaMemsetAsync(st, 0, sizeof stats, s));
	if (t > 0) {
		DB_LAUNCH(db_sp_stats, blocks(t, NT), NT, 0, s)(t, rowptr, c0, st);
		LAUNCHED();
	}
	TRY(fetchn(stats, st, sizeof stats, s));
	c = gnn_split_pick(stats, t, c0);
	gnn_split_winrule(t, c, &h, &tau);
	gnn_split_fit(c, &lh, &ltau);
	/* the rows: scans of the long flags, the work and the chunks, then
	 * of the window openings; their totals (long rows, chunks, windows),
	 * then the long rows */
	TRY(cudaMalloc((void **)&pos, (size_t)(4 * (t + 1)) * sizeof *pos));
	P = pos + t + 1;
	cs = P + t + 1;
	ws = cs + t + 1;
	DB_LAUNCH(db_sp_rows, blocks(t + 1, NT), NT, 0, s)(t, rowptr, c, pos, P, cs);
	LAUNCHED();
	TRY(scans(pos, t + 1, 3, s));
	DB_LAUNCH(db_sp_opens, blocks(t + 1, NT), NT, 0, s)(t, h, tau, P, ws);
	LAUNCHED();
	TRY(scan(ws, t + 1, s));
	DB_LAUNCH(db_totals, 1, 32, 0, s)(t + 1, 4, pos, dtot);
	LAUNCHED();
	TRY(fetchn(tot, dtot, sizeof tot, s));
	nlong = tot[0];
	n0 = tot[2];
	rnwin = tot[3];
	TRY(cudaMalloc((void **)&lrow, (size_t)(2 * nlong + 1) * sizeof *lrow));
	first = lrow + nlong;
	DB_LAUNCH(db_sp_long, blocks(t + 1, NT), NT, 0, s)(t, pos, cs, lrow, first);
	LAUNCHED();
	/* the levels: level 0's items are the chunks; the next level's rows
	 * are this one's cut rows, their items its carries */
	lv[0] = splitlev{nlong, NULL, first, NULL, NULL};
	for (int64_t k = n0; k > 0; nlev++) {
		splitlev *v = &lv[nlev];

		if (nlev >= GNN_SPLIT_MAXLEV) {   /* C >= 2 halves a cut row's items per level: unreachable */
			err = cudaErrorInvalidValue;
			goto done;
		}
		n[nlev] = k;
		/* win, carry, cut: one allocation, scanned together */
		TRY(cudaMalloc((void **)&v->win, (size_t)(3 * (v->na + 1)) * sizeof *v->win));
		v->carry = v->win + v->na + 1;
		DB_LAUNCH(db_sp_lvrows, blocks(v->na + 1, NT), NT, 0, s)(v->na, c, lh, ltau, v->item, v->win, v->carry,
		                                                           v->carry + v->na + 1);
		LAUNCHED();
		TRY(scans(v->win, v->na + 1, 3, s));
		DB_LAUNCH(db_totals, 1, 32, 0, s)(v->na + 1, 3, v->win, dtot);
		LAUNCHED();
		TRY(fetchn(tot, dtot, 3 * sizeof *tot, s));   /* windows, carries, cut rows */
		nwin[nlev] = tot[0];
		k = tot[1];
		if (tot[2] > 0) {
			splitlev *w = &lv[nlev + 1];
			w->na = tot[2];
			TRY(cudaMalloc((void **)&w->act, (size_t)(2 * w->na + 1) * sizeof *w->act));
			w->item = w->act + w->na;
			DB_LAUNCH(db_sp_next, blocks(v->na + 1, NT), NT, 0, s)(v->na, v->act, v->carry, v->carry + v->na + 1, w->act,
			                                                         w->item);
			LAUNCHED();
		}
	}
	/* the plan: its header from the host, the rest filled in place */
	slots = gnn_split_header(head, c, t, nlong, n0, nlev, n, nwin, rnwin);
	TRY(cudaMalloc((void **)&plan, slots * sizeof *plan));
	TRY(cudaMemcpyAsync(plan, head, GNN_SPLIT_HEADER * sizeof *plan, cudaMemcpyHostToDevice, s));
	DB_LAUNCH(db_sp_rowfill, blocks(t + 1, NT), NT, 0, s)(t, pos, ws, plan + head[GNN_SPLIT_LIX], plan + head[GNN_SPLIT_WINS]);
	LAUNCHED();
	if (n0 > 0) {
		DB_LAUNCH(db_sp_chunks, blocks(n0, NT), NT, 0, s)(n0, nlong, c, rowptr, lrow, first, plan + head[GNN_SPLIT_CHUNKS]);
		LAUNCHED();
	}
	for (int l = 0; l < nlev; l++) {
		const int64_t *hd = head + GNN_SPLIT_LEVEL + GNN_SPLIT_LEVELSLOTS * l;
		const splitlev *v = &lv[l];

		DB_LAUNCH(db_sp_irow, blocks(n[l], NT), NT, 0, s)(n[l], v->na, v->act, v->item, plan + hd[4]);
		LAUNCHED();
		DB_LAUNCH(db_sp_wins, blocks(nwin[l] + 1, NT), NT, 0, s)(nwin[l], v->na, c, v->item, v->win, v->carry,
		                                                           plan + hd[5], plan + hd[6]);
		LAUNCHED();
	}
	*out = plan;
	*nbytes = slots * sizeof *plan;
	plan = NULL;
done:
	for (int l = 0; l <= GNN_SPLIT_MAXLEV; l++) {
		cudaFree(lv[l].win);
		cudaFree(lv[l].act);
	}
	cudaFree(st);
	cudaFree(pos);
	cudaFree(lrow);
	cudaFree(plan);
	return (int)err;
}

/* plan-order copies (GNN_STEP_PERMUTE): element t of row j of out is
 * element t of row order[j] of x, in the widest word the rows allow;
 * narrow: x is an int64 index, out its int32 copy (bind checked that
 * the ids fit) */
#define PERMROWS(name, T) \
	GNN_DKERNEL(name)(int64_t k, int64_t w, const int64_t *order, const T *x, T *out) \
	{ \
		GSTRIDE(t, k * w) \
			out[t] = x[order[t / w] * w + t % w]; \
	}
PERMROWS(db_perm64, uint64_t)
PERMROWS(db_perm32, uint32_t)
PERMROWS(db_perm16, uint16_t)

GNN_DKERNEL(db_permnarrow)(int64_t k, const int64_t *order, const int64_t *x, int32_t *out)
{
	GSTRIDE(t, k)
		out[t] = (int32_t)x[order[t]];
}

static int
db_permute(void *out, const int64_t *order, int64_t k, const void *x, size_t rowbytes, int narrow, void *sv)
{
	cudaStream_t s = (cudaStream_t)sv;
	cudaError_t err = cudaSuccess;

	if (k <= 0 || !rowbytes)
		return 0;
	if (narrow) {
		DB_LAUNCH(db_permnarrow, blocks(k, NT), NT, 0, s)(k, order, (const int64_t *)x, (int32_t *)out);
	} else if (rowbytes % 8 == 0) {
		int64_t w = (int64_t)(rowbytes / 8);
		DB_LAUNCH(db_perm64, blocks(k * w, NT), NT, 0, s)(k, w, order, (const uint64_t *)x, (uint64_t *)out);
	} else if (rowbytes % 4 == 0) {
		int64_t w = (int64_t)(rowbytes / 4);
		DB_LAUNCH(db_perm32, blocks(k * w, NT), NT, 0, s)(k, w, order, (const uint32_t *)x, (uint32_t *)out);
	} else {
		int64_t w = (int64_t)(rowbytes / 2);   /* 16-bit elements at least */
		DB_LAUNCH(db_perm16, blocks(k * w, NT), NT, 0, s)(k, w, order, (const uint16_t *)x, (uint16_t *)out);
	}
	LAUNCHED();
done:
	return (int)err;
}

static int
db_zero(void *p, size_t n, void *s)
{
	return (int)cudaMemsetAsync(p, 0, n, (cudaStream_t)s);
}

extern "C" const gnn_devbind GNN_DEVBIND_SYMBOL = {
	db_upload, db_selfloops, db_tensor, db_segplan, db_csr, db_splitplan, db_permute, db_zero, db_release,
};
