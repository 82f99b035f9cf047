/*
** spmm.cu: the baselines of the aggregation benchmark: cuSPARSE SpMM on
** the graph's adjacency (the sum over in-edges, Y = A X with A[target,
** source] = 1, X dense [N, F]) and the device's copy bandwidth.
**
**   spmm --graph=EDGE_INDEX.npy --num-nodes=N [--width=F] [--label=NAME]
**        [--runs=R] [--warmup=K] [--target-seconds=T] [--d2d-mib=M]
**
** Design.  The CSR is built on the host by a stable counting sort of the
** edges by target (what gnncc's runtime builds too), with int32 indices
** and values of 1, and handed to cuSPARSE's generic SpMM with row-major
** dense matrices (PyG's layout) under three algorithms: the default,
** CSR_ALG2 (row-major's fast one) and CSR_ALG3 (the deterministic one;
** gnncc's aggregation is deterministic as well).  Each call is timed with
** CUDA events on the handle's stream and waited for, as gnnbench times a
** forward; the median is reported.  With --d2d-mib, a device-to-device
** cudaMemcpy of that many MiB is timed the same way: bytes read plus bytes
** written over its time is the copy bandwidth that bench/report.py
** divides the aggregation's effective bandwidth by.  One JSON line per
** measurement on stdout.
*/
#define _POSIX_C_SOURCE 200809L

#include <cuda_runtime.h>
#include <cusparse.h>

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "benchutil.h"
#include "gnnrt.h"

typedef struct Opts {
	const char *graph, *label;
	long long n;
	int width, warmup, runs, max_runs, d2d_mib;
	double target_s;
} Opts;

static void
fail(const Opts *o, const char *system, const char *what, const char *msg)
{
	printf("{\"tool\": \"cusparse\", \"event\": \"result\", \"system\": \"%s\", "
		"\"graph\": ", system);
	jstr(o->label);
	printf(", \"status\": \"error\", \"stage\": \"%s\", \"message\": ", what);
	jstr(msg);
	printf("}\n");
	fflush(stdout);
}

/* kind of closure for timeit: one call of the measured operation */
typedef int (*OpFn)(void *ctx, cudaStream_t st);

/* median milliseconds of op over warm-up + as many runs as fit the target */
static int
timeit(const Opts *o, OpFn op, void *ctx, cudaStream_t st, double *med, int *nruns)
{
	cudaEvent_t e0, e1;
	float ms, est = 0;
	double *v;
	int runs = o->runs, rc = -1;

	if (cudaEventCreate(&e0) != cudaSuccess || cudaEventCreate(&e1) != cudaSuccess)
		return -1;
	for (int i = 0; i < o->warmup; i++) {
		cudaEventRecord(e0, st);
		if (op(ctx, st))
			goto out;
		cudaEventRecord(e1, st);
		if (cudaEventSynchronize(e1) != cudaSuccess)
			goto out;
		cudaEventElapsedTime(&ms, e0, e1);
		est = ms;
	}
	if (est > 0 && o->target_s * 1e3 / est > runs)
		runs = o->target_s * 1e3 / est > o->max_runs ? o->max_runs
			: (int)(o->target_s * 1e3 / est);
	if (!(v = (double *)malloc((size_t)runs * sizeof *v)))
		goto out;
	for (int i = 0; i < runs; i++) {
		cudaEventRecord(e0, st);
		if (op(ctx, st)) {
			free(v);
			goto out;
		}
		cudaEventRecord(e1, st);
		if (cudaEventSynchronize(e1) != cudaSuccess) {
			free(v);
			goto out;
		}
		cudaEventElapsedTime(&ms, e0, e1);
		v[i] = ms;
	}
	*med = median(v, runs);
	*nruns = runs;
	free(v);
	rc = 0;
out:
	cudaEventDestroy(e0);
	cudaEventDestroy(e1);
	return rc;
}

/* --- device-to-device copy ----------------------------------------------- */

typedef struct Copy {
	void *a, *b;
	size_t n;
} Copy;

static int
copyop(void *ctx, cudaStream_t st)
{
	Copy *c = (Copy *)ctx;

	return cudaMemcpyAsync(c->b, c->a, c->n, cudaMemcpyDeviceToDevice, st) != cudaSuccess;
}

static void
d2d(const Opts *o, cudaStream_t st)
{
	Copy c = {NULL, NULL, (size_t)o->d2d_mib << 20};
	double ms;
	int runs;

	if (cudaMalloc(&c.a, c.n) != cudaSuccess || cudaMalloc(&c.b, c.n) != cudaSuccess ||
	    cudaMemset(c.a, 1, c.n) != cudaSuccess || cudaDeviceSynchronize() != cudaSuccess) {
		fail(o, "d2d", "alloc", cudaGetErrorString(cudaGetLastError()));
	} else if (timeit(o, copyop, &c, st, &ms, &runs)) {
		fail(o, "d2d", "copy", cudaGetErrorString(cudaGetLastError()));
	} else {
		printf("{\"tool\": \"cusparse\", \"event\": \"result\", \"system\": \"d2d\", "
			"\"status\": \"ok\", \"bytes\": %zu, \"median_ms\": %.6g, \"runs\": %d, "
			"\"gbps\": %.6g}\n", c.n, ms, runs, 2.0 * (double)c.n / (ms * 1e-3) / 1e9);
		fflush(stdout);
	}
	cudaFree(c.a);
	cudaFree(c.b);
}

/* --- SpMM ------------------------------------------------------------------ */

typedef struct Spmm {
	cusparseHandle_t h;
	cusparseSpMatDescr_t a;
	cusparseDnMatDescr_t x, y;
	cusparseSpMMAlg_t alg;
	void *buf;
} Spmm;

static int
spmmop(void *ctx, cudaStream_t st)
{
	Spmm *s = (Spmm *)ctx;
	float one = 1, zero = 0;

	(void)st;   /* the handle's stream */
	return cusparseSpMM(s->h, CUSPARSE_OPERATION_NON_TRANSPOSE,
		CUSPARSE_OPERATION_NON_TRANSPOSE, &one, s->a, s->x, &zero, s->y, CUDA_R_32F,
		s->alg, s->buf) != CUSPARSE_STATUS_SUCCESS;
}

/* CSR by target: rowptr [n+1], col [e] (sources), stable in edge order */
static int
buildcsr(const gnn_array *ei, int64_t n, int32_t **rowptr, int32_t **col)
{
	int64_t e = ei->shape[1];
	int32_t *rp = (int32_t *)calloc((size_t)n + 1, sizeof *rp);
	int32_t *c = (int32_t *)malloc((size_t)(e ? e : 1) * sizeof *c);
	int64_t *next = (int64_t *)malloc((size_t)(n ? n : 1) * sizeof *next);

	if (!rp || !c || !next)
		goto bad;
	for (int64_t k = 0; k < e; k++) {
		int64_t s = ei->dtype == GNN_I64 ? ((const int64_t *)ei->data)[k]
			: ((const int32_t *)ei->data)[k];
		int64_t t = ei->dtype == GNN_I64 ? ((const int64_t *)ei->data)[e + k]
			: ((const int32_t *)ei->data)[e + k];
		if (s < 0 || s >= n || t < 0 || t >= n)
			goto bad;
		rp[t + 1]++;
	}
	for (int64_t i = 0; i < n; i++) {
		rp[i + 1] += rp[i];
		next[i] = rp[i];
	}
	for (int64_t k = 0; k < e; k++) {
		int64_t s = ei->dtype == GNN_I64 ? ((const int64_t *)ei->data)[k]
			: ((const int32_t *)ei->data)[k];
		int64_t t = ei->dtype == GNN_I64 ? ((const int64_t *)ei->data)[e + k]
			: ((const int32_t *)ei->data)[e + k];
		c[next[t]++] = (int32_t)s;
	}
	free(next);
	*rowptr = rp;
	*col = c;
	return 0;
bad:
	free(rp);
	free(c);
	free(next);
	return -1;
}

static void
spmm(const Opts *o, cudaStream_t st)
{
	static const struct {
		cusparseSpMMAlg_t alg;
		const char *name;
	} algs[] = {
		{CUSPARSE_SPMM_ALG_DEFAULT, "ALG_DEFAULT"},
		{CUSPARSE_SPMM_CSR_ALG2, "CSR_ALG2"},
		{CUSPARSE_SPMM_CSR_ALG3, "CSR_ALG3"},
	};
	gnn_array ei;
	int32_t *rp = NULL, *col = NULL;
	float *val = NULL, *xh = NULL;
	void *drp = NULL, *dcol = NULL, *dval = NULL, *dx = NULL, *dy = NULL;
	Spmm s;
	int64_t n = o->n, e, f = o->width, nf = o->n * o->width;

	memset(&s, 0, sizeof s);
	if (gnn_npy_read(o->graph, &ei) != GNN_OK) {
		fail(o, "agg-cusparse", "read", gnn_errmsg());
		return;
	}
	e = ei.rank == 2 ? ei.shape[1] : 0;
	if (ei.rank != 2 || ei.shape[0] != 2 || (ei.dtype != GNN_I64 && ei.dtype != GNN_I32) ||
	    n >= INT32_MAX || e >= INT32_MAX || buildcsr(&ei, n, &rp, &col)) {
		fail(o, "agg-cusparse", "csr", "edge_index is not int [2, E] over --num-nodes "
			"nodes with int32-sized counts");
		gnn_array_free(&ei);
		return;
	}
	gnn_array_free(&ei);
	val = (float *)malloc((size_t)(e ? e : 1) * sizeof *val);
	xh = (float *)malloc((size_t)(nf > 0 ? nf : 1) * sizeof *xh);
	if (!val || !xh) {
		fail(o, "agg-cusparse", "alloc", "out of host memory");
		goto out;
	}
	for (int64_t k = 0; k < e; k++)
		val[k] = 1;
	{
		uint64_t r = 0x5eed;
		for (int64_t i = 0; i < nf; i++) {
			r = r * 6364136223846793005ull + 1442695040888963407ull;
			xh[i] = (float)(r >> 40) / 16777216.0f;
		}
	}
	if (cudaMalloc(&drp, (size_t)(n + 1) * 4) != cudaSuccess ||
	    cudaMalloc(&dcol, (size_t)(e ? e : 1) * 4) != cudaSuccess ||
	    cudaMalloc(&dval, (size_t)(e ? e : 1) * 4) != cudaSuccess ||
	    cudaMalloc(&dx, (size_t)(nf > 0 ? nf : 1) * 4) != cudaSuccess ||
	    cudaMalloc(&dy, (size_t)(nf > 0 ? nf : 1) * 4) != cudaSuccess ||
	    cudaMemcpy(drp, rp, (size_t)(n + 1) * 4, cudaMemcpyHostToDevice) != cudaSuccess ||
	    cudaMemcpy(dcol, col, (size_t)e * 4, cudaMemcpyHostToDevice) != cudaSuccess ||
	    cudaMemcpy(dval, val, (size_t)e * 4, cudaMemcpyHostToDevice) != cudaSuccess ||
	    cudaMemcpy(dx, xh, (size_t)nf * 4, cudaMemcpyHostToDevice) != cudaSuccess ||
	    cudaDeviceSynchronize() != cudaSuccess) {   /* before the non-blocking stream reads */
		fail(o, "agg-cusparse", "alloc", cudaGetErrorString(cudaGetLastError()));
		goto out;
	}
	if (cusparseCreate(&s.h) != CUSPARSE_STATUS_SUCCESS ||
	    cusparseSetStream(s.h, st) != CUSPARSE_STATUS_SUCCESS ||
	    cusparseCreateCsr(&s.a, n, n, e, drp, dcol, dval, CUSPARSE_INDEX_32I,
		CUSPARSE_INDEX_32I, CUSPARSE_INDEX_BASE_ZERO, CUDA_R_32F) != CUSPARSE_STATUS_SUCCESS ||
	    cusparseCreateDnMat(&s.x, n, f, f, dx, CUDA_R_32F, CUSPARSE_ORDER_ROW)
		!= CUSPARSE_STATUS_SUCCESS ||
	    cusparseCreateDnMat(&s.y, n, f, f, dy, CUDA_R_32F, CUSPARSE_ORDER_ROW)
		!= CUSPARSE_STATUS_SUCCESS) {
		fail(o, "agg-cusparse", "setup", "cuSPARSE handle or descriptors");
		goto out;
	}
	for (size_t k = 0; k < sizeof algs / sizeof algs[0]; k++) {
		float one = 1, zero = 0;
		double ms;
		size_t nbuf = 0;
		int runs;
		s.alg = algs[k].alg;
		s.buf = NULL;
		if (cusparseSpMM_bufferSize(s.h, CUSPARSE_OPERATION_NON_TRANSPOSE,
			CUSPARSE_OPERATION_NON_TRANSPOSE, &one, s.a, s.x, &zero, s.y, CUDA_R_32F,
			s.alg, &nbuf) != CUSPARSE_STATUS_SUCCESS ||
		    (nbuf && cudaMalloc(&s.buf, nbuf) != cudaSuccess) ||
		    cusparseSpMM_preprocess(s.h, CUSPARSE_OPERATION_NON_TRANSPOSE,
			CUSPARSE_OPERATION_NON_TRANSPOSE, &one, s.a, s.x, &zero, s.y, CUDA_R_32F,
			s.alg, s.buf) != CUSPARSE_STATUS_SUCCESS) {
			char m[96];
			snprintf(m, sizeof m, "%s: buffer or preprocess failed", algs[k].name);
			fail(o, "agg-cusparse", "setup", m);
		} else if (timeit(o, spmmop, &s, st, &ms, &runs)) {
			char m[96];
			snprintf(m, sizeof m, "%s: SpMM failed", algs[k].name);
			fail(o, "agg-cusparse", "spmm", m);
		} else {
			printf("{\"tool\": \"cusparse\", \"event\": \"result\", \"system\": "
				"\"agg-cusparse\", \"graph\": \"%s\", \"status\": \"ok\", \"alg\": \"%s\", "
				"\"N\": %lld, \"E\": %lld, \"width\": %lld, \"median_ms\": %.6g, "
				"\"runs\": %d, \"buffer_bytes\": %zu}\n", o->label, algs[k].name,
				(long long)n, (long long)e, (long long)f, ms, runs, nbuf);
			fflush(stdout);
		}
		if (s.buf)
			cudaFree(s.buf);
	}
out:
	if (s.x)
		cusparseDestroyDnMat(s.x);
	if (s.y)
		cusparseDestroyDnMat(s.y);
	if (s.a)
		cusparseDestroySpMat(s.a);
	if (s.h)
		cusparseDestroy(s.h);
	cudaFree(drp);
	cudaFree(dcol);
	cudaFree(dval);
	cudaFree(dx);
	cudaFree(dy);
	free(rp);
	free(col);
	free(val);
	free(xh);
}

int
main(int argc, char **argv)
{
	Opts o = {NULL, "graph", -1, 128, 5, 20, 200, 0, 0.5};
	cudaStream_t st;

	for (int i = 1; i < argc; i++) {
		const char *a = argv[i];
#define VAL(pfx) (!strncmp(a, pfx "=", sizeof pfx) ? a + sizeof pfx : NULL)
		const char *v;
		if ((v = VAL("--graph")))
			o.graph = v;
		else if ((v = VAL("--label")))
			o.label = v;
		else if ((v = VAL("--num-nodes")))
			o.n = atoll(v);
		else if ((v = VAL("--width")))
			o.width = atoi(v);
		else if ((v = VAL("--warmup")))
			o.warmup = atoi(v);
		else if ((v = VAL("--runs")))
			o.runs = atoi(v);
		else if ((v = VAL("--max-runs")))
			o.max_runs = atoi(v);
		else if ((v = VAL("--target-seconds")))
			o.target_s = atof(v);
		else if ((v = VAL("--d2d-mib")))
			o.d2d_mib = atoi(v);
		else {
			fprintf(stderr, "usage: %s --graph=EDGE_INDEX.npy --num-nodes=N [--width=F] "
				"[--label=NAME] [--runs=R] [--max-runs=R] [--warmup=K] "
				"[--target-seconds=T] [--d2d-mib=M]\n", argv[0]);
			return 2;
		}
#undef VAL
	}
	if (o.width < 1 || o.runs < 1 || o.warmup < 0 || (o.graph && o.n < 0)) {
		fprintf(stderr, "spmm: --num-nodes is required with --graph; --width and --runs "
			"must be positive\n");
		return 2;
	}
	if (o.max_runs < o.runs)
		o.max_runs = o.runs;
	if (cudaStreamCreateWithFlags(&st, cudaStreamNonBlocking) != cudaSuccess) {
		fail(&o, "agg-cusparse", "init", cudaGetErrorString(cudaGetLastError()));
		return 1;
	}
	if (o.d2d_mib > 0)
		d2d(&o, st);
	if (o.graph)
		spmm(&o, st);
	cudaStreamDestroy(st);
	return 0;
}
