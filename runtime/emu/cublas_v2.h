/*
 * cublas_v2.h for gnnemu: the part of cuBLAS that gnncc's --vendor=cublas
 * code calls (handles, stream, math mode, workspace, SGEMM), run on the
 * emulated device by libgnnemu_vendor.a (vendor.cc) instead of the real
 * library.  Names, enumerators and status codes are cuBLAS's, so one
 * source compiles against either.  The calls check their arguments as
 * cuBLAS does and return its status codes; the matrices must lie inside
 * live device allocations (the emulator's message otherwise).  SGEMM is
 * a kernel on the handle's stream: captured, deferred and replayed like
 * any other, each output one multiply-add chain over k in order.
 */
#ifndef GNNEMU_CUBLAS_V2_H
#define GNNEMU_CUBLAS_V2_H

#include "cuda_runtime.h"

typedef enum {
	CUBLAS_STATUS_SUCCESS = 0,
	CUBLAS_STATUS_NOT_INITIALIZED = 1,
	CUBLAS_STATUS_ALLOC_FAILED = 3,
	CUBLAS_STATUS_INVALID_VALUE = 7,
	CUBLAS_STATUS_ARCH_MISMATCH = 8,
	CUBLAS_STATUS_MAPPING_ERROR = 11,
	CUBLAS_STATUS_EXECUTION_FAILED = 13,
	CUBLAS_STATUS_INTERNAL_ERROR = 14,
	CUBLAS_STATUS_NOT_SUPPORTED = 15,
	CUBLAS_STATUS_LICENSE_ERROR = 16
} cublasStatus_t;

typedef enum { CUBLAS_OP_N = 0, CUBLAS_OP_T = 1, CUBLAS_OP_C = 2 } cublasOperation_t;

typedef enum {
	CUBLAS_DEFAULT_MATH = 0,
	CUBLAS_TENSOR_OP_MATH = 1,
	CUBLAS_PEDANTIC_MATH = 2,
	CUBLAS_TF32_TENSOR_OP_MATH = 3,
	CUBLAS_MATH_DISALLOW_REDUCED_PRECISION_REDUCTION = 16
} cublasMath_t;

typedef struct cublasContext *cublasHandle_t;

extern "C" {
cublasStatus_t cublasCreate_v2(cublasHandle_t *handle);
cublasStatus_t cublasDestroy_v2(cublasHandle_t handle);
cublasStatus_t cublasSetStream_v2(cublasHandle_t handle, cudaStream_t stream);
cublasStatus_t cublasGetStream_v2(cublasHandle_t handle, cudaStream_t *stream);
cublasStatus_t cublasSetMathMode(cublasHandle_t handle, cublasMath_t mode);
cublasStatus_t cublasGetMathMode(cublasHandle_t handle, cublasMath_t *mode);
cublasStatus_t cublasSetWorkspace_v2(cublasHandle_t handle, void *workspace, size_t bytes);
cublasStatus_t cublasSgemm_v2(cublasHandle_t handle, cublasOperation_t transa, cublasOperation_t transb, int m, int n,
                              int k, const float *alpha, const float *A, int lda, const float *B, int ldb,
                              const float *beta, float *C, int ldc);
const char *cublasGetStatusName(cublasStatus_t status);
const char *cublasGetStatusString(cublasStatus_t status);
}

#define cublasCreate cublasCreate_v2
#define cublasDestroy cublasDestroy_v2
#define cublasSetStream cublasSetStream_v2
#define cublasGetStream cublasGetStream_v2
#define cublasSetWorkspace cublasSetWorkspace_v2
#define cublasSgemm cublasSgemm_v2

#endif
