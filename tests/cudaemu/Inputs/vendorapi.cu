/*
 * The emulated cuBLAS and cuSPARSE (libgnnemu_vendor.a) against their
 * specification: results equal a host loop doing the documented
 * arithmetic in the documented order (bitwise: FP32 multiply-adds in one
 * chain, no contraction on either side) and a float64 product to 1e-5;
 * bad arguments give the real libraries' status codes; the calls are
 * stream work, so a captured call runs at the graph's launch on the data
 * there then.  -DOVERRUN (a C one float short), -DSPARSE_OVERRUN (a B
 * one row short) and, built with AddressSanitizer, -DREDZONE (a C whose
 * last float is a redzone, as between the buffers of the runtime's
 * arena) must end in the emulator's memcheck message instead.
 */
#include <cublas_v2.h>
#include <cusparse.h>
#include <stdio.h>
#include <stdlib.h>

static int failures;

#define EXPECT(cond, what)                                                                 \
	do {                                                                               \
		if (cond)                                                                  \
			printf("ok %s\n", what);                                           \
		else {                                                                     \
			printf("FAIL %s (line %d)\n", what, __LINE__);                     \
			failures++;                                                        \
		}                                                                          \
	} while (0)

static float *
dev(const float *h, size_t n)
{
	float *d;

	if (cudaMalloc(&d, n * sizeof *d) != cudaSuccess)
		abort();
	if (h)
		cudaMemcpy(d, h, n * sizeof *d, cudaMemcpyHostToDevice);
	return d;
}

static void *
devbytes(const void *h, size_t n)
{
	void *d;

	if (cudaMalloc(&d, n) != cudaSuccess)
		abort();
	cudaMemcpy(d, h, n, cudaMemcpyHostToDevice);
	return d;
}

static float
tf32(float x)
{
	uint32_t u = gnnemu_cvt_rna_tf32(x);
	float f;

	memcpy(&f, &u, sizeof f);
	return f;
}

/* column-major C = alpha op(A) op(B) + beta C, one chain per output */
static void
gemmref(int ta, int tb, int m, int n, int k, float alpha, const float *A, int lda, const float *B, int ldb, float beta,
        float *C, int ldc, int round, double *C64)
{
	for (int j = 0; j < n; j++)
		for (int i = 0; i < m; i++) {
			float acc = 0;
			double a64 = 0;
			for (int l = 0; l < k; l++) {
				float a = ta ? A[l + i * lda] : A[i + l * lda], b = tb ? B[j + l * ldb] : B[l + j * ldb];
				a64 += (double)a * b;
				if (round)
					a = tf32(a), b = tf32(b);
				acc += a * b;
			}
			C64[i + j * ldc] = alpha * a64 + (beta != 0 ? (double)beta * C[i + j * ldc] : 0);
			C[i + j * ldc] = beta == 0 ? alpha * acc : alpha * acc + beta * C[i + j * ldc];
		}
}

static bool
close64(const float *a, const double *b, int n)
{
	double most = 0, err = 0;

	for (int i = 0; i < n; i++) {
		most = fabs(b[i]) > most ? fabs(b[i]) : most;
		err = fabs(a[i] - b[i]) > err ? fabs(a[i] - b[i]) : err;
	}
	return err <= 1e-5 * most;
}

static void
blas(cudaStream_t s)
{
	enum { M = 37, N = 9, K = 70 };
	static float A[K * M], B[K * N], C0[M * N], C[M * N], R[M * N];
	static double R64[M * N];
	cublasHandle_t h, bad = NULL;
	cublasMath_t mode;
	const float one = 1, zero = 0, half = 0.5f, two = 2;
	float *dA, *dB, *dC, *ws;

	for (int i = 0; i < K * M; i++)
		A[i] = (float)((i * 37 % 101) - 50) / 17.0f;
	for (int i = 0; i < K * N; i++)
		B[i] = (float)((i * 53 % 89) - 44) / 13.0f;
	for (int i = 0; i < M * N; i++)
		C0[i] = (float)(i % 7) - 3.0f;
	dA = dev(A, K * M);
	dB = dev(B, K * N);
	EXPECT(cublasCreate(NULL) == CUBLAS_STATUS_INVALID_VALUE, "cublasCreate(NULL): INVALID_VALUE");
	EXPECT(cublasCreate(&h) == CUBLAS_STATUS_SUCCESS, "cublasCreate");
	EXPECT(cublasSetStream(h, s) == CUBLAS_STATUS_SUCCESS, "cublasSetStream");
	EXPECT(cublasSetStream(bad, s) == CUBLAS_STATUS_NOT_INITIALIZED, "cublasSetStream(NULL handle): NOT_INITIALIZED");
	EXPECT(cublasSetMathMode(h, (cublasMath_t)9) == CUBLAS_STATUS_INVALID_VALUE, "cublasSetMathMode(9): INVALID_VALUE");
	EXPECT(cublasSetMathMode(h, CUBLAS_PEDANTIC_MATH) == CUBLAS_STATUS_SUCCESS &&
	           cublasGetMathMode(h, &mode) == CUBLAS_STATUS_SUCCESS && mode == CUBLAS_PEDANTIC_MATH,
	       "cublasSetMathMode(PEDANTIC)");
	ws = dev(NULL, 1024);
	EXPECT(cublasSetWorkspace(h, ws + 1, 1000) == CUBLAS_STATUS_INVALID_VALUE, "cublasSetWorkspace(misaligned): INVALID_VALUE");
	EXPECT(cublasSetWorkspace(h, ws, 4096) == CUBLAS_STATUS_SUCCESS, "cublasSetWorkspace");

	/* C = A B (A M x K, ld M) and C = 2 A^T B + 0.5 C (A stored K x M) */
	for (int t = 0; t < 2; t++) {
		memcpy(C, C0, sizeof C);
		memcpy(R, C0, sizeof R);
		dC = dev(C, M * N);
		EXPECT(cublasSgemm(h, t ? CUBLAS_OP_T : CUBLAS_OP_N, CUBLAS_OP_N, M, N, K, t ? &two : &one, dA, t ? K : M, dB, K,
		                   t ? &half : &zero, dC, M) == CUBLAS_STATUS_SUCCESS,
		       t ? "cublasSgemm(T, N, alpha 2, beta 0.5)" : "cublasSgemm(N, N)");
		cudaMemcpy(C, dC, sizeof C, cudaMemcpyDeviceToHost);
		gemmref(t, 0, M, N, K, t ? 2 : 1, A, t ? K : M, B, K, t ? 0.5f : 0, R, M, 0, R64);
		EXPECT(!memcmp(C, R, sizeof C), "  the chain's bits");
		EXPECT(close64(C, R64, M * N), "  within 1e-5 of float64");
		cudaFree(dC);
	}
	dC = dev(NULL, M * N);
	EXPECT(cublasSgemm(h, CUBLAS_OP_N, CUBLAS_OP_N, M, N, K, &one, dA, M - 1, dB, K, &zero, dC, M) == CUBLAS_STATUS_INVALID_VALUE,
	       "cublasSgemm(lda < m): INVALID_VALUE");
	EXPECT(cublasSgemm(h, CUBLAS_OP_N, CUBLAS_OP_N, M, N, K, &one, dA, M, dB, K - 1, &zero, dC, M) == CUBLAS_STATUS_INVALID_VALUE,
	       "cublasSgemm(ldb < k): INVALID_VALUE");
	EXPECT(cublasSgemm(h, CUBLAS_OP_N, CUBLAS_OP_N, M, N, K, &one, dA, M, dB, K, &zero, dC, M - 1) == CUBLAS_STATUS_INVALID_VALUE,
	       "cublasSgemm(ldc < m): INVALID_VALUE");
	EXPECT(cublasSgemm(h, CUBLAS_OP_N, CUBLAS_OP_N, -1, N, K, &one, dA, M, dB, K, &zero, dC, M) == CUBLAS_STATUS_INVALID_VALUE,
	       "cublasSgemm(m < 0): INVALID_VALUE");
	EXPECT(cublasSgemm(h, CUBLAS_OP_N, CUBLAS_OP_N, M, N, K, NULL, dA, M, dB, K, &zero, dC, M) == CUBLAS_STATUS_INVALID_VALUE,
	       "cublasSgemm(alpha NULL): INVALID_VALUE");
	EXPECT(cublasSgemm(bad, CUBLAS_OP_N, CUBLAS_OP_N, M, N, K, &one, dA, M, dB, K, &zero, dC, M) == CUBLAS_STATUS_NOT_INITIALIZED,
	       "cublasSgemm(NULL handle): NOT_INITIALIZED");

	/* captured: the call runs at the graph's launch, on B as it is then */
	{
		cudaGraph_t g = NULL;
		cudaGraphExec_t x = NULL;
		for (int i = 0; i < K * N; i++)
			B[i] = -B[i];
		EXPECT(cudaStreamBeginCapture(s, cudaStreamCaptureModeGlobal) == cudaSuccess &&
		           cublasSgemm(h, CUBLAS_OP_N, CUBLAS_OP_N, M, N, K, &one, dA, M, dB, K, &zero, dC, M) == CUBLAS_STATUS_SUCCESS &&
		           cudaStreamEndCapture(s, &g) == cudaSuccess && cudaGraphInstantiate(&x, g, 0) == cudaSuccess,
		       "cublasSgemm captured into a graph");
		cudaMemcpy(dB, B, sizeof B, cudaMemcpyHostToDevice);
		cudaGraphLaunch(x, s);
		cudaStreamSynchronize(s);
		cudaMemcpy(C, dC, sizeof C, cudaMemcpyDeviceToHost);
		gemmref(0, 0, M, N, K, 1, A, M, B, K, 0, R, M, 0, R64);
		EXPECT(!memcmp(C, R, sizeof C), "  the replay's bits, on the new B");
		cudaGraphExecDestroy(x);
		cudaGraphDestroy(g);
	}
	/* TF32: operands rounded as tensor cores round them */
	EXPECT(cublasSetMathMode(h, CUBLAS_TF32_TENSOR_OP_MATH) == CUBLAS_STATUS_SUCCESS &&
	           cublasSgemm(h, CUBLAS_OP_N, CUBLAS_OP_N, M, N, K, &one, dA, M, dB, K, &zero, dC, M) == CUBLAS_STATUS_SUCCESS,
	       "cublasSgemm under CUBLAS_TF32_TENSOR_OP_MATH");
	cudaMemcpy(C, dC, sizeof C, cudaMemcpyDeviceToHost);
	gemmref(0, 0, M, N, K, 1, A, M, B, K, 0, R, M, 1, R64);
	EXPECT(!memcmp(C, R, sizeof C), "  the TF32 chain's bits");
#ifdef OVERRUN
	cudaFree(dC);
	dC = dev(NULL, M * N - 1);
	cublasSetMathMode(h, CUBLAS_PEDANTIC_MATH);
	cublasSgemm(h, CUBLAS_OP_N, CUBLAS_OP_N, M, N, K, &one, dA, M, dB, K, &zero, dC, M);
	printf("FAIL: an overrunning C passed\n");
	failures++;
#endif
#ifdef REDZONE
	gnnemu_redzone(dC + M * N - 1, sizeof(float), 1);
	cublasSgemm(h, CUBLAS_OP_N, CUBLAS_OP_N, M, N, K, &one, dA, M, dB, K, &zero, dC, M);
	printf("FAIL: a C reaching a redzone passed\n");
	failures++;
#endif
	EXPECT(cublasDestroy(h) == CUBLAS_STATUS_SUCCESS, "cublasDestroy");
	cudaFree(dA);
	cudaFree(dB);
	cudaFree(dC);
	cudaFree(ws);
}

/* C = alpha A B + beta C, A CSR, B and C dense in order row (or column) */
static void
spmmref(int rows, int ncol, const int64_t *rp, const int64_t *ci, const float *v, const float *B, int ldb, float alpha,
        float beta, float *C, int ldc, int row, double *C64)
{
	for (int i = 0; i < rows; i++)
		for (int j = 0; j < ncol; j++) {
			float acc = 0;
			double a64 = 0;
			for (int64_t e = rp[i]; e < rp[i + 1]; e++) {
				float b = row ? B[ci[e] * ldb + j] : B[ci[e] + j * ldb];
				acc += v[e] * b;
				a64 += (double)v[e] * b;
			}
			float *o = row ? &C[i * ldc + j] : &C[i + j * ldc];
			(row ? C64[i * ldc + j] : C64[i + j * ldc]) = alpha * a64 + (double)beta * *o;
			*o = beta == 0 ? alpha * acc : alpha * acc + beta * *o;
		}
}

static void
sparse(cudaStream_t s)
{
	/* 5 rows (row 2 empty) over 6 columns, B 6 x 4 */
	enum { R = 5, K = 6, N = 4, NNZ = 9 };
	const int64_t rp[R + 1] = {0, 3, 4, 4, 7, 9}, ci[NNZ] = {0, 2, 5, 1, 0, 3, 4, 5, 2};
	const int32_t rp32[R + 1] = {0, 3, 4, 4, 7, 9}, ci32[NNZ] = {0, 2, 5, 1, 0, 3, 4, 5, 2};
	const float v[NNZ] = {1.5f, -2, 0.25f, 3, -1, 0.5f, 2, -0.75f, 1.25f};
	float B[K * N], C0[R * N], C[R * N], Rf[R * N];
	double R64[R * N];
	const float alpha = 2, beta = 0.5f, one = 1, zero = 0;
	cusparseHandle_t h, bad = NULL;
	cusparseSpMatDescr_t A = NULL, A32 = NULL, tmp = NULL;
	cusparseDnMatDescr_t dB = NULL, dC = NULL, dBc = NULL, dCc = NULL, dBshort = NULL;
	size_t size = 1;
	void *drp = devbytes(rp, sizeof rp), *dci = devbytes(ci, sizeof ci), *drp32 = devbytes(rp32, sizeof rp32),
	     *dci32 = devbytes(ci32, sizeof ci32);
	float *dv = dev(v, NNZ), *db, *dc;

	for (int i = 0; i < K * N; i++)
		B[i] = (float)((i * 29 % 23) - 11) / 7.0f;
	for (int i = 0; i < R * N; i++)
		C0[i] = (float)(i % 5) - 2.0f;
	db = dev(B, K * N);
	dc = dev(C0, R * N);
	EXPECT(cusparseCreate(&h) == CUSPARSE_STATUS_SUCCESS && cusparseSetStream(h, s) == CUSPARSE_STATUS_SUCCESS,
	       "cusparseCreate, cusparseSetStream");
	EXPECT(cusparseCreateCsr(&A, R, K, NNZ, drp, dci, dv, CUSPARSE_INDEX_64I, CUSPARSE_INDEX_64I, CUSPARSE_INDEX_BASE_ZERO,
	                         CUDA_R_32F) == CUSPARSE_STATUS_SUCCESS &&
	           cusparseCreateCsr(&A32, R, K, NNZ, drp32, dci32, dv, CUSPARSE_INDEX_32I, CUSPARSE_INDEX_32I,
	                             CUSPARSE_INDEX_BASE_ZERO, CUDA_R_32F) == CUSPARSE_STATUS_SUCCESS,
	       "cusparseCreateCsr (64- and 32-bit indices)");
	EXPECT(cusparseCreateDnMat(&dB, K, N, N, db, CUDA_R_32F, CUSPARSE_ORDER_ROW) == CUSPARSE_STATUS_SUCCESS &&
	           cusparseCreateDnMat(&dC, R, N, N, dc, CUDA_R_32F, CUSPARSE_ORDER_ROW) == CUSPARSE_STATUS_SUCCESS,
	       "cusparseCreateDnMat (row-major)");
	EXPECT(cusparseSpMM_bufferSize(h, CUSPARSE_OPERATION_NON_TRANSPOSE, CUSPARSE_OPERATION_NON_TRANSPOSE, &alpha, A, dB,
	                               &beta, dC, CUDA_R_32F, CUSPARSE_SPMM_CSR_ALG1, &size) == CUSPARSE_STATUS_SUCCESS,
	       "cusparseSpMM_bufferSize");
	for (int w = 0; w < 2; w++) {
		cudaMemcpy(dc, C0, sizeof C0, cudaMemcpyHostToDevice);
		EXPECT(cusparseSpMM(h, CUSPARSE_OPERATION_NON_TRANSPOSE, CUSPARSE_OPERATION_NON_TRANSPOSE, &alpha, w ? A32 : A, dB,
		                    &beta, dC, CUDA_R_32F, w ? CUSPARSE_SPMM_CSR_ALG3 : CUSPARSE_SPMM_CSR_ALG1,
		                    NULL) == CUSPARSE_STATUS_SUCCESS,
		       w ? "cusparseSpMM (32-bit, ALG3, row-major, alpha 2, beta 0.5)" : "cusparseSpMM (64-bit, ALG1, row-major, alpha 2, beta 0.5)");
		cudaMemcpy(C, dc, sizeof C, cudaMemcpyDeviceToHost);
		memcpy(Rf, C0, sizeof Rf);
		spmmref(R, N, rp, ci, v, B, N, alpha, beta, Rf, N, 1, R64);
		EXPECT(!memcmp(C, Rf, sizeof C), "  the rows' chains' bits");
		EXPECT(close64(C, R64, R * N), "  within 1e-5 of float64");
	}
	/* column-major B (ld 7: padded) and C */
	{
		float Bc[7 * N];
		for (int j = 0; j < N; j++)
			for (int i = 0; i < 7; i++)
				Bc[i + j * 7] = i < K ? B[i * N + j] : 1e30f;
		float *dbc = dev(Bc, 7 * N);
		cudaMemset(dc, 0, sizeof C);
		EXPECT(cusparseCreateDnMat(&dBc, K, N, 7, dbc, CUDA_R_32F, CUSPARSE_ORDER_COL) == CUSPARSE_STATUS_SUCCESS &&
		           cusparseCreateDnMat(&dCc, R, N, R, dc, CUDA_R_32F, CUSPARSE_ORDER_COL) == CUSPARSE_STATUS_SUCCESS &&
		           cusparseSpMM(h, CUSPARSE_OPERATION_NON_TRANSPOSE, CUSPARSE_OPERATION_NON_TRANSPOSE, &one, A, dBc, &zero, dCc,
		                        CUDA_R_32F, CUSPARSE_SPMM_ALG_DEFAULT, NULL) == CUSPARSE_STATUS_SUCCESS,
		       "cusparseSpMM (column-major, ld 7)");
		cudaMemcpy(C, dc, sizeof C, cudaMemcpyDeviceToHost);
		spmmref(R, N, rp, ci, v, Bc, 7, 1, 0, Rf, R, 0, R64);
		EXPECT(!memcmp(C, Rf, sizeof C), "  the rows' chains' bits");
		cusparseDestroyDnMat(dBc);
		cusparseDestroyDnMat(dCc);
		cudaFree(dbc);
	}
	EXPECT(cusparseCreateCsr(&tmp, R, K, NNZ, drp, NULL, dv, CUSPARSE_INDEX_64I, CUSPARSE_INDEX_64I, CUSPARSE_INDEX_BASE_ZERO,
	                         CUDA_R_32F) == CUSPARSE_STATUS_INVALID_VALUE,
	       "cusparseCreateCsr(no column indices): INVALID_VALUE");
	EXPECT(cusparseCreateCsr(&tmp, R, K, NNZ, drp, dci, dv, CUSPARSE_INDEX_64I, CUSPARSE_INDEX_64I, CUSPARSE_INDEX_BASE_ZERO,
	                         CUDA_R_64F) == CUSPARSE_STATUS_NOT_SUPPORTED,
	       "cusparseCreateCsr(CUDA_R_64F): NOT_SUPPORTED");
	EXPECT(cusparseCreateDnMat(&dBshort, K, N, N - 1, db, CUDA_R_32F, CUSPARSE_ORDER_ROW) == CUSPARSE_STATUS_INVALID_VALUE,
	       "cusparseCreateDnMat(ld < cols, row-major): INVALID_VALUE");
	EXPECT(cusparseSpMM(h, CUSPARSE_OPERATION_TRANSPOSE, CUSPARSE_OPERATION_NON_TRANSPOSE, &alpha, A, dB, &beta, dC, CUDA_R_32F,
	                    CUSPARSE_SPMM_CSR_ALG1, NULL) == CUSPARSE_STATUS_NOT_SUPPORTED,
	       "cusparseSpMM(A transposed): NOT_SUPPORTED");
	EXPECT(cusparseSpMM(h, CUSPARSE_OPERATION_NON_TRANSPOSE, CUSPARSE_OPERATION_NON_TRANSPOSE, &alpha, A, dC, &beta, dC,
	                    CUDA_R_32F, CUSPARSE_SPMM_CSR_ALG1, NULL) == CUSPARSE_STATUS_INVALID_VALUE,
	       "cusparseSpMM(B's rows are not A's columns): INVALID_VALUE");
	EXPECT(cusparseSpMM(bad, CUSPARSE_OPERATION_NON_TRANSPOSE, CUSPARSE_OPERATION_NON_TRANSPOSE, &alpha, A, dB, &beta, dC,
	                    CUDA_R_32F, CUSPARSE_SPMM_CSR_ALG1, NULL) == CUSPARSE_STATUS_NOT_INITIALIZED,
	       "cusparseSpMM(NULL handle): NOT_INITIALIZED");
#ifdef SPARSE_OVERRUN
	{
		float *shortb = dev(B, K * N - N);
		cusparseCreateDnMat(&dBshort, K, N, N, shortb, CUDA_R_32F, CUSPARSE_ORDER_ROW);
		cusparseSpMM(h, CUSPARSE_OPERATION_NON_TRANSPOSE, CUSPARSE_OPERATION_NON_TRANSPOSE, &alpha, A, dBshort, &beta, dC,
		             CUDA_R_32F, CUSPARSE_SPMM_CSR_ALG1, NULL);
		printf("FAIL: an overrunning B passed\n");
		failures++;
	}
#endif
	EXPECT(cusparseDestroySpMat(A) == CUSPARSE_STATUS_SUCCESS && cusparseDestroySpMat(A32) == CUSPARSE_STATUS_SUCCESS &&
	           cusparseDestroyDnMat(dB) == CUSPARSE_STATUS_SUCCESS && cusparseDestroyDnMat(dC) == CUSPARSE_STATUS_SUCCESS &&
	           cusparseDestroy(h) == CUSPARSE_STATUS_SUCCESS,
	       "cusparseDestroy*");
	cudaFree(drp);
	cudaFree(dci);
	cudaFree(drp32);
	cudaFree(dci32);
	cudaFree(dv);
	cudaFree(db);
	cudaFree(dc);
}

int
main(void)
{
	cudaStream_t s;

	cudaStreamCreate(&s);
#ifndef SPARSE_OVERRUN
	blas(s);
#endif
	sparse(s);
	cudaStreamDestroy(s);
	printf("%d failures\n", failures);
	return failures != 0;
}
