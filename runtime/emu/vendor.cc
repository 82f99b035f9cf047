/*
 * The vendor libraries on the emulated device (libgnnemu_vendor.a): the
 * subset of cuBLAS and cuSPARSE that gnncc's --vendor code calls, so that
 * a model built with --vendor runs, and is checked, without a GPU.  The
 * emulated build links this library where a GPU build links -lcublas and
 * -lcusparse.
 *
 * Arguments are checked as the real libraries check them and give their
 * status codes (a null or destroyed handle, negative sizes, a leading
 * dimension below its matrix's, a null pointer the call needs, an
 * operation or type not supported).  The arrays a call reads or writes,
 * by their extents (leading dimensions included), must lie inside one
 * live device allocation and, under memcheck, clear of the arena's
 * redzones (gnnemu_check_range): the emulator's message, as for a
 * kernel's bad access.  The work itself is a kernel launched on the
 * handle's stream, so that capture, deferred execution and graph replay
 * treat it as any other launch, and its pointers are checked again at a
 * replay.  Results are deterministic: every output is one chain of
 * multiply-adds in a fixed order (SGEMM: k = 0 .. K-1; SpMM: the row's
 * entries in stored order), then alpha times it plus beta times C (C
 * unread when beta is 0, as BLAS has it).  Under CUBLAS_TF32_TENSOR_OP_MATH
 * the operands are rounded to TF32 first, as tensor cores round them.
 *
 * GNNEMU_VENDOR_FAIL=k makes the k-th SGEMM or SpMM call of the process
 * (counting from 1) fail once with EXECUTION_FAILED before it does
 * anything, so that tests reach the caller's handling of a failed call.
 *
 * Handles and descriptors are host objects; a destroyed one is poisoned
 * (its magic word cleared) before it is freed, so that most uses after
 * destroy give NOT_INITIALIZED rather than a crash.
 */
#include "cublas_v2.h"
#include "cusparse.h"

#include <stdlib.h>

/* GNNEMU_VENDOR_FAIL: is this call the one to fail? */
static bool
failnow(void)
{
	static unsigned long long k, n;
	static int read;

	if (!__atomic_load_n(&read, __ATOMIC_ACQUIRE)) {
		const char *e = getenv("GNNEMU_VENDOR_FAIL");
		__atomic_store_n(&k, e ? strtoull(e, NULL, 10) : 0, __ATOMIC_RELAXED);
		__atomic_store_n(&read, 1, __ATOMIC_RELEASE);
	}
	return __atomic_add_fetch(&n, 1, __ATOMIC_RELAXED) == __atomic_load_n(&k, __ATOMIC_RELAXED);
}

/* ------------------------------------------------------------------ cuBLAS */

enum { BlasMagic = 0x626c6173, SparseMagic = 0x73707273, SpMatMagic = 0x73706d74, DnMatMagic = 0x646e6d74 };

struct cublasContext {
	int magic;
	cudaStream_t stream;
	cublasMath_t math;
};

static inline float tf32(float x)
{
	uint32_t u = gnnemu_cvt_rna_tf32(x);
	float f;

	memcpy(&f, &u, sizeof f);
	return f;
}

/* C = alpha op(A) op(B) + beta C, column-major, a thread an output */
GNN_DKERNEL(cublasSgemm_emu)(int m, int n, int k, float alpha, const float *A, int lda, int ta, const float *B,
                             int ldb, int tb, float beta, float *C, int ldc, int round)
{
	for (int64_t t = (int64_t)blockIdx.x * blockDim.x + threadIdx.x; t < (int64_t)m * n;
	     t += (int64_t)blockDim.x * gridDim.x) {
		const int64_t i = t % m, j = t / m;
		float acc = 0.0f;

		for (int64_t l = 0; l < k; l++) {
			float a = ta ? A[l + i * lda] : A[i + l * lda], b = tb ? B[j + l * ldb] : B[l + j * ldb];
			if (round) {
				a = tf32(a);
				b = tf32(b);
			}
			acc += a * b;
		}
		C[i + j * ldc] = beta == 0.0f ? alpha * acc : alpha * acc + beta * C[i + j * ldc];
	}
}

static unsigned
gridfor(int64_t outputs)
{
	int64_t b = (outputs + 255) / 256;

	return b > 65535 ? 65535u : b < 1 ? 1u : (unsigned)b;
}

static bool
blasok(cublasHandle_t h)
{
	return h && h->magic == BlasMagic;
}

extern "C" {

cublasStatus_t
cublasCreate_v2(cublasHandle_t *handle)
{
	cublasContext *h;

	if (!handle)
		return CUBLAS_STATUS_INVALID_VALUE;
	if (!(h = (cublasContext *)calloc(1, sizeof *h)))
		return CUBLAS_STATUS_ALLOC_FAILED;
	h->magic = BlasMagic;
	h->math = CUBLAS_DEFAULT_MATH;
	*handle = h;
	return CUBLAS_STATUS_SUCCESS;
}

cublasStatus_t
cublasDestroy_v2(cublasHandle_t h)
{
	if (!blasok(h))
		return CUBLAS_STATUS_NOT_INITIALIZED;
	h->magic = 0;
	free(h);
	return CUBLAS_STATUS_SUCCESS;
}

cublasStatus_t
cublasSetStream_v2(cublasHandle_t h, cudaStream_t stream)
{
	if (!blasok(h))
		return CUBLAS_STATUS_NOT_INITIALIZED;
	h->stream = stream;
	return CUBLAS_STATUS_SUCCESS;
}

cublasStatus_t
cublasGetStream_v2(cublasHandle_t h, cudaStream_t *stream)
{
	if (!blasok(h))
		return CUBLAS_STATUS_NOT_INITIALIZED;
	if (!stream)
		return CUBLAS_STATUS_INVALID_VALUE;
	*stream = h->stream;
	return CUBLAS_STATUS_SUCCESS;
}

cublasStatus_t
cublasSetMathMode(cublasHandle_t h, cublasMath_t mode)
{
	int base = (int)mode & ~(int)CUBLAS_MATH_DISALLOW_REDUCED_PRECISION_REDUCTION;

	if (!blasok(h))
		return CUBLAS_STATUS_NOT_INITIALIZED;
	if (base < CUBLAS_DEFAULT_MATH || base > CUBLAS_TF32_TENSOR_OP_MATH)
		return CUBLAS_STATUS_INVALID_VALUE;
	h->math = mode;
	return CUBLAS_STATUS_SUCCESS;
}

cublasStatus_t
cublasGetMathMode(cublasHandle_t h, cublasMath_t *mode)
{
	if (!blasok(h))
		return CUBLAS_STATUS_NOT_INITIALIZED;
	if (!mode)
		return CUBLAS_STATUS_INVALID_VALUE;
	*mode = h->math;
	return CUBLAS_STATUS_SUCCESS;
}

cublasStatus_t
cublasSetWorkspace_v2(cublasHandle_t h, void *workspace, size_t bytes)
{
	if (!blasok(h))
		return CUBLAS_STATUS_NOT_INITIALIZED;
	/* cuBLAS wants 256-byte alignment; the workspace is device memory */
	if (bytes && (!workspace || (uintptr_t)workspace % 256))
		return CUBLAS_STATUS_INVALID_VALUE;
	gnnemu_check_range("cublasSetWorkspace", "workspace", workspace, bytes);
	return CUBLAS_STATUS_SUCCESS;
}

cublasStatus_t
cublasSgemm_v2(cublasHandle_t h, cublasOperation_t transa, cublasOperation_t transb, int m, int n, int k,
               const float *alpha, const float *A, int lda, const float *B, int ldb, const float *beta, float *C,
               int ldc)
{
	const int ta = transa != CUBLAS_OP_N, tb = transb != CUBLAS_OP_N;
	const int arows = ta ? k : m, brows = tb ? n : k;
	const int64_t acols = ta ? m : k, bcols = tb ? k : n;

	if (!blasok(h))
		return CUBLAS_STATUS_NOT_INITIALIZED;
	/* cuBLAS's order of checks: the operations, sizes, leading dims */
	if ((unsigned)transa > CUBLAS_OP_C || (unsigned)transb > CUBLAS_OP_C || m < 0 || n < 0 || k < 0 ||
	    lda < (arows > 1 ? arows : 1) || ldb < (brows > 1 ? brows : 1) || ldc < (m > 1 ? m : 1))
		return CUBLAS_STATUS_INVALID_VALUE;
	if (m == 0 || n == 0)
		return CUBLAS_STATUS_SUCCESS;
	if (!alpha || !beta)
		return CUBLAS_STATUS_INVALID_VALUE;
	if (failnow())
		return CUBLAS_STATUS_EXECUTION_FAILED;
	/* the last column ends at ld * (cols - 1) + rows */
	if (k > 0 && *alpha != 0.0f) {
		gnnemu_check_range("cublasSgemm", "A", A, ((size_t)lda * (acols - 1) + arows) * sizeof(float));
		gnnemu_check_range("cublasSgemm", "B", B, ((size_t)ldb * (bcols - 1) + brows) * sizeof(float));
	}
	gnnemu_check_range("cublasSgemm", "C", C, ((size_t)ldc * (n - 1) + m) * sizeof(float));
	GNN_LAUNCH(cublasSgemm_emu, gridfor((int64_t)m * n), 256, 0, h->stream)
	(m, n, k, *alpha, A, lda, ta, B, ldb, tb, *beta, C, ldc,
	 ((int)h->math & 0xf) == CUBLAS_TF32_TENSOR_OP_MATH || ((int)h->math & 0xf) == CUBLAS_TENSOR_OP_MATH);
	return CUBLAS_STATUS_SUCCESS;
}

const char *
cublasGetStatusName(cublasStatus_t s)
{
	switch (s) {
	case CUBLAS_STATUS_SUCCESS: return "CUBLAS_STATUS_SUCCESS";
	case CUBLAS_STATUS_NOT_INITIALIZED: return "CUBLAS_STATUS_NOT_INITIALIZED";
	case CUBLAS_STATUS_ALLOC_FAILED: return "CUBLAS_STATUS_ALLOC_FAILED";
	case CUBLAS_STATUS_INVALID_VALUE: return "CUBLAS_STATUS_INVALID_VALUE";
	case CUBLAS_STATUS_ARCH_MISMATCH: return "CUBLAS_STATUS_ARCH_MISMATCH";
	case CUBLAS_STATUS_MAPPING_ERROR: return "CUBLAS_STATUS_MAPPING_ERROR";
	case CUBLAS_STATUS_EXECUTION_FAILED: return "CUBLAS_STATUS_EXECUTION_FAILED";
	case CUBLAS_STATUS_INTERNAL_ERROR: return "CUBLAS_STATUS_INTERNAL_ERROR";
	case CUBLAS_STATUS_NOT_SUPPORTED: return "CUBLAS_STATUS_NOT_SUPPORTED";
	case CUBLAS_STATUS_LICENSE_ERROR: return "CUBLAS_STATUS_LICENSE_ERROR";
	}
	return "CUBLAS_STATUS_UNKNOWN";
}

const char *
cublasGetStatusString(cublasStatus_t s)
{
	switch (s) {
	case CUBLAS_STATUS_SUCCESS: return "success";
	case CUBLAS_STATUS_NOT_INITIALIZED: return "the library was not initialized";
	case CUBLAS_STATUS_ALLOC_FAILED: return "the resource allocation failed";
	case CUBLAS_STATUS_INVALID_VALUE: return "an invalid numeric value was used as an argument";
	case CUBLAS_STATUS_NOT_SUPPORTED: return "the functionality requested is not supported";
	default: return "an error occurred in the emulated cuBLAS";
	}
}

} /* extern "C" */

/* ---------------------------------------------------------------- cuSPARSE */

struct cusparseContext {
	int magic;
	cudaStream_t stream;
};

struct gnnemu_spmat {
	int magic;
	int64_t rows, cols, nnz;
	void *rowptr, *col, *val;
	int rowsize, colsize;   /* bytes of an index: 4 or 8 */
};

struct gnnemu_dnmat {
	int magic;
	int64_t rows, cols, ld;
	void *val;
	cusparseOrder_t order;
};

/* an index array's entry as int64 */
static inline int64_t
ix(const void *p, int size, int64_t i)
{
	return size == 8 ? ((const int64_t *)p)[i] : ((const int32_t *)p)[i];
}

/* C = alpha A B + beta C, A CSR; a thread an output, its row's entries
 * in stored order; an entry outside [0, k) is skipped (cuSPARSE's
 * behaviour is undefined there: the emulated device does not fault) */
GNN_DKERNEL(cusparseSpMM_emu)(int64_t m, int64_t n, int64_t k, float alpha, const void *rowptr, int rs,
                              const void *col, int cs, const float *val, const float *B, int64_t ldb, int brow,
                              float beta, float *C, int64_t ldc, int crow)
{
	for (int64_t t = (int64_t)blockIdx.x * blockDim.x + threadIdx.x; t < m * n; t += (int64_t)blockDim.x * gridDim.x) {
		const int64_t i = t / n, j = t % n;
		const int64_t e0 = ix(rowptr, rs, i), e1 = ix(rowptr, rs, i + 1);
		float acc = 0.0f;

		for (int64_t e = e0; e < e1; e++) {
			const int64_t c = ix(col, cs, e);
			if (c >= 0 && c < k)
				acc += val[e] * (brow ? B[c * ldb + j] : B[c + j * ldb]);
		}
		float *o = crow ? &C[i * ldc + j] : &C[i + j * ldc];
		*o = beta == 0.0f ? alpha * acc : alpha * acc + beta * *o;
	}
}

static bool
sparseok(cusparseHandle_t h)
{
	return h && h->magic == SparseMagic;
}

static int
indexbytes(cusparseIndexType_t t)
{
	return t == CUSPARSE_INDEX_32I ? 4 : t == CUSPARSE_INDEX_64I ? 8 : 0;
}

/* a dense matrix's extent in bytes: ld a row (row-major) or a column */
static size_t
dnbytes(const gnnemu_dnmat *d)
{
	const int64_t lines = d->order == CUSPARSE_ORDER_ROW ? d->rows : d->cols,
	              len = d->order == CUSPARSE_ORDER_ROW ? d->cols : d->rows;

	return lines && len ? ((size_t)d->ld * (lines - 1) + len) * sizeof(float) : 0;
}

/* the checks SpMM and its buffer size share: cuSPARSE's status */
static cusparseStatus_t
spmmcheck(cusparseHandle_t h, cusparseOperation_t opA, cusparseOperation_t opB, const void *alpha,
          cusparseConstSpMatDescr_t A, cusparseConstDnMatDescr_t B, const void *beta, cusparseDnMatDescr_t C,
          cudaDataType type, cusparseSpMMAlg_t alg)
{
	if (!sparseok(h))
		return CUSPARSE_STATUS_NOT_INITIALIZED;
	if (!alpha || !beta || !A || !B || !C || A->magic != SpMatMagic || B->magic != DnMatMagic || C->magic != DnMatMagic)
		return CUSPARSE_STATUS_INVALID_VALUE;
	if (opA != CUSPARSE_OPERATION_NON_TRANSPOSE || opB != CUSPARSE_OPERATION_NON_TRANSPOSE || type != CUDA_R_32F)
		return CUSPARSE_STATUS_NOT_SUPPORTED;
	if (alg != CUSPARSE_SPMM_ALG_DEFAULT && alg != CUSPARSE_SPMM_CSR_ALG1 && alg != CUSPARSE_SPMM_CSR_ALG2 &&
	    alg != CUSPARSE_SPMM_CSR_ALG3)
		return CUSPARSE_STATUS_NOT_SUPPORTED;
	if (A->cols != B->rows || A->rows != C->rows || B->cols != C->cols || B->order != C->order)
		return CUSPARSE_STATUS_INVALID_VALUE;
	return CUSPARSE_STATUS_SUCCESS;
}

extern "C" {

cusparseStatus_t
cusparseCreate(cusparseHandle_t *handle)
{
	cusparseContext *h;

	if (!handle)
		return CUSPARSE_STATUS_INVALID_VALUE;
	if (!(h = (cusparseContext *)calloc(1, sizeof *h)))
		return CUSPARSE_STATUS_ALLOC_FAILED;
	h->magic = SparseMagic;
	*handle = h;
	return CUSPARSE_STATUS_SUCCESS;
}

cusparseStatus_t
cusparseDestroy(cusparseHandle_t h)
{
	if (!sparseok(h))
		return CUSPARSE_STATUS_NOT_INITIALIZED;
	h->magic = 0;
	free(h);
	return CUSPARSE_STATUS_SUCCESS;
}

cusparseStatus_t
cusparseSetStream(cusparseHandle_t h, cudaStream_t stream)
{
	if (!sparseok(h))
		return CUSPARSE_STATUS_NOT_INITIALIZED;
	h->stream = stream;
	return CUSPARSE_STATUS_SUCCESS;
}

cusparseStatus_t
cusparseCreateCsr(cusparseSpMatDescr_t *d, int64_t rows, int64_t cols, int64_t nnz, void *rowptr, void *col,
                  void *val, cusparseIndexType_t rowtype, cusparseIndexType_t coltype, cusparseIndexBase_t base,
                  cudaDataType type)
{
	gnnemu_spmat *s;

	if (!d || rows < 0 || cols < 0 || nnz < 0 || (rows > 0 && !rowptr) || (nnz > 0 && (!col || !val)) ||
	    nnz > rows * cols || !indexbytes(rowtype) || !indexbytes(coltype))
		return CUSPARSE_STATUS_INVALID_VALUE;
	if (base != CUSPARSE_INDEX_BASE_ZERO || type != CUDA_R_32F)
		return CUSPARSE_STATUS_NOT_SUPPORTED;
	if (!(s = (gnnemu_spmat *)calloc(1, sizeof *s)))
		return CUSPARSE_STATUS_ALLOC_FAILED;
	*s = gnnemu_spmat{SpMatMagic, rows, cols, nnz, rowptr, col, val, indexbytes(rowtype), indexbytes(coltype)};
	*d = s;
	return CUSPARSE_STATUS_SUCCESS;
}

cusparseStatus_t
cusparseDestroySpMat(cusparseConstSpMatDescr_t d)
{
	if (!d)
		return CUSPARSE_STATUS_SUCCESS;
	if (d->magic != SpMatMagic)
		return CUSPARSE_STATUS_INVALID_VALUE;
	((gnnemu_spmat *)d)->magic = 0;
	free((void *)d);
	return CUSPARSE_STATUS_SUCCESS;
}

cusparseStatus_t
cusparseCreateDnMat(cusparseDnMatDescr_t *d, int64_t rows, int64_t cols, int64_t ld, void *values, cudaDataType type,
                    cusparseOrder_t order)
{
	gnnemu_dnmat *m;

	if (!d || rows < 0 || cols < 0 || (order != CUSPARSE_ORDER_ROW && order != CUSPARSE_ORDER_COL) ||
	    ld < (order == CUSPARSE_ORDER_ROW ? cols : rows) || (rows > 0 && cols > 0 && !values))
		return CUSPARSE_STATUS_INVALID_VALUE;
	if (type != CUDA_R_32F)
		return CUSPARSE_STATUS_NOT_SUPPORTED;
	if (!(m = (gnnemu_dnmat *)calloc(1, sizeof *m)))
		return CUSPARSE_STATUS_ALLOC_FAILED;
	*m = gnnemu_dnmat{DnMatMagic, rows, cols, ld, values, order};
	*d = m;
	return CUSPARSE_STATUS_SUCCESS;
}

cusparseStatus_t
cusparseDestroyDnMat(cusparseConstDnMatDescr_t d)
{
	if (!d)
		return CUSPARSE_STATUS_SUCCESS;
	if (d->magic != DnMatMagic)
		return CUSPARSE_STATUS_INVALID_VALUE;
	((gnnemu_dnmat *)d)->magic = 0;
	free((void *)d);
	return CUSPARSE_STATUS_SUCCESS;
}

/* the workspace SpMM wants: none for FP32 CSR here, as ALG1 often on a
 * GPU; a caller that sizes it by this call stays right either way */
cusparseStatus_t
cusparseSpMM_bufferSize(cusparseHandle_t h, cusparseOperation_t opA, cusparseOperation_t opB, const void *alpha,
                        cusparseConstSpMatDescr_t A, cusparseConstDnMatDescr_t B, const void *beta,
                        cusparseDnMatDescr_t C, cudaDataType type, cusparseSpMMAlg_t alg, size_t *size)
{
	cusparseStatus_t st = spmmcheck(h, opA, opB, alpha, A, B, beta, C, type, alg);

	if (st != CUSPARSE_STATUS_SUCCESS)
		return st;
	if (!size)
		return CUSPARSE_STATUS_INVALID_VALUE;
	*size = 0;
	return CUSPARSE_STATUS_SUCCESS;
}

cusparseStatus_t
cusparseSpMM(cusparseHandle_t h, cusparseOperation_t opA, cusparseOperation_t opB, const void *alpha,
             cusparseConstSpMatDescr_t A, cusparseConstDnMatDescr_t B, const void *beta, cusparseDnMatDescr_t C,
             cudaDataType type, cusparseSpMMAlg_t alg, void *buffer)
{
	cusparseStatus_t st = spmmcheck(h, opA, opB, alpha, A, B, beta, C, type, alg);
	const float a = alpha ? *(const float *)alpha : 0, b = beta ? *(const float *)beta : 0;

	(void)buffer;
	if (st != CUSPARSE_STATUS_SUCCESS)
		return st;
	if (failnow())
		return CUSPARSE_STATUS_EXECUTION_FAILED;
	if (C->rows == 0 || C->cols == 0)
		return CUSPARSE_STATUS_SUCCESS;
	gnnemu_check_range("cusparseSpMM", "A's row offsets", A->rowptr, (size_t)(A->rows + 1) * A->rowsize);
	gnnemu_check_range("cusparseSpMM", "A's column indices", A->col, (size_t)A->nnz * A->colsize);
	gnnemu_check_range("cusparseSpMM", "A's values", A->val, (size_t)A->nnz * sizeof(float));
	gnnemu_check_range("cusparseSpMM", "B", B->val, dnbytes(B));
	gnnemu_check_range("cusparseSpMM", "C", C->val, dnbytes(C));
	GNN_LAUNCH(cusparseSpMM_emu, gridfor(C->rows * C->cols), 256, 0, h->stream)
	(C->rows, C->cols, A->cols, a, (const void *)A->rowptr, A->rowsize, (const void *)A->col, A->colsize,
	 (const float *)A->val, (const float *)B->val, B->ld, B->order == CUSPARSE_ORDER_ROW, b, (float *)C->val, C->ld,
	 C->order == CUSPARSE_ORDER_ROW);
	return CUSPARSE_STATUS_SUCCESS;
}

const char *
cusparseGetErrorName(cusparseStatus_t s)
{
	switch (s) {
	case CUSPARSE_STATUS_SUCCESS: return "CUSPARSE_STATUS_SUCCESS";
	case CUSPARSE_STATUS_NOT_INITIALIZED: return "CUSPARSE_STATUS_NOT_INITIALIZED";
	case CUSPARSE_STATUS_ALLOC_FAILED: return "CUSPARSE_STATUS_ALLOC_FAILED";
	case CUSPARSE_STATUS_INVALID_VALUE: return "CUSPARSE_STATUS_INVALID_VALUE";
	case CUSPARSE_STATUS_NOT_SUPPORTED: return "CUSPARSE_STATUS_NOT_SUPPORTED";
	case CUSPARSE_STATUS_EXECUTION_FAILED: return "CUSPARSE_STATUS_EXECUTION_FAILED";
	case CUSPARSE_STATUS_INTERNAL_ERROR: return "CUSPARSE_STATUS_INTERNAL_ERROR";
	default: return "CUSPARSE_STATUS_UNKNOWN";
	}
}

const char *
cusparseGetErrorString(cusparseStatus_t s)
{
	switch (s) {
	case CUSPARSE_STATUS_SUCCESS: return "success";
	case CUSPARSE_STATUS_NOT_INITIALIZED: return "initialization error";
	case CUSPARSE_STATUS_INVALID_VALUE: return "invalid value";
	case CUSPARSE_STATUS_NOT_SUPPORTED: return "operation not supported";
	default: return "an error occurred in the emulated cuSPARSE";
	}
}

} /* extern "C" */
