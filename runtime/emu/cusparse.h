/*
 * cusparse.h for gnnemu: the part of cuSPARSE's generic API that gnncc's
 * --vendor=cusparse code calls (handles, stream, CSR and dense matrix
 * descriptors, SpMM with its buffer size), run on the emulated device by
 * libgnnemu_vendor.a (vendor.cc).  Names, enumerators and status codes
 * are cuSPARSE's.  Arguments are checked as cuSPARSE does (its status
 * codes); the arrays a call reads and writes must lie inside live device
 * allocations.  SpMM (CSR, A not transposed, FP32) is a kernel on the
 * handle's stream; each output is alpha times one chain over its row's
 * entries in stored order, plus beta times C: deterministic, as
 * CUSPARSE_SPMM_CSR_ALG1 and ALG3 are on a GPU.
 */
#ifndef GNNEMU_CUSPARSE_H
#define GNNEMU_CUSPARSE_H

#include "cuda_runtime.h"

typedef enum {
	CUSPARSE_STATUS_SUCCESS = 0,
	CUSPARSE_STATUS_NOT_INITIALIZED = 1,
	CUSPARSE_STATUS_ALLOC_FAILED = 2,
	CUSPARSE_STATUS_INVALID_VALUE = 3,
	CUSPARSE_STATUS_ARCH_MISMATCH = 4,
	CUSPARSE_STATUS_MAPPING_ERROR = 5,
	CUSPARSE_STATUS_EXECUTION_FAILED = 6,
	CUSPARSE_STATUS_INTERNAL_ERROR = 7,
	CUSPARSE_STATUS_MATRIX_TYPE_NOT_SUPPORTED = 8,
	CUSPARSE_STATUS_ZERO_PIVOT = 9,
	CUSPARSE_STATUS_NOT_SUPPORTED = 10,
	CUSPARSE_STATUS_INSUFFICIENT_RESOURCES = 11
} cusparseStatus_t;

typedef enum { CUSPARSE_INDEX_BASE_ZERO = 0, CUSPARSE_INDEX_BASE_ONE = 1 } cusparseIndexBase_t;
typedef enum {
	CUSPARSE_OPERATION_NON_TRANSPOSE = 0,
	CUSPARSE_OPERATION_TRANSPOSE = 1,
	CUSPARSE_OPERATION_CONJUGATE_TRANSPOSE = 2
} cusparseOperation_t;
typedef enum { CUSPARSE_ORDER_COL = 1, CUSPARSE_ORDER_ROW = 2 } cusparseOrder_t;
typedef enum { CUSPARSE_INDEX_16U = 1, CUSPARSE_INDEX_32I = 2, CUSPARSE_INDEX_64I = 3 } cusparseIndexType_t;
typedef enum {
	CUSPARSE_SPMM_ALG_DEFAULT = 0,
	CUSPARSE_SPMM_COO_ALG1 = 1,
	CUSPARSE_SPMM_COO_ALG2 = 2,
	CUSPARSE_SPMM_COO_ALG3 = 3,
	CUSPARSE_SPMM_COO_ALG4 = 5,
	CUSPARSE_SPMM_CSR_ALG1 = 4,
	CUSPARSE_SPMM_CSR_ALG2 = 6,
	CUSPARSE_SPMM_CSR_ALG3 = 12,
	CUSPARSE_SPMM_BLOCKED_ELL_ALG1 = 13,
	CUSPARSE_SPMM_BSR_ALG1 = 14
} cusparseSpMMAlg_t;

/* the value type: CUDA's library_types.h, of which FP32 is emulated */
#ifndef GNNEMU_CUDA_DATA_TYPE
#define GNNEMU_CUDA_DATA_TYPE
typedef enum { CUDA_R_32F = 0, CUDA_R_64F = 1, CUDA_R_16F = 2 } cudaDataType;
#endif

typedef struct cusparseContext *cusparseHandle_t;
typedef struct gnnemu_spmat *cusparseSpMatDescr_t;
typedef const struct gnnemu_spmat *cusparseConstSpMatDescr_t;
typedef struct gnnemu_dnmat *cusparseDnMatDescr_t;
typedef const struct gnnemu_dnmat *cusparseConstDnMatDescr_t;

extern "C" {
cusparseStatus_t cusparseCreate(cusparseHandle_t *handle);
cusparseStatus_t cusparseDestroy(cusparseHandle_t handle);
cusparseStatus_t cusparseSetStream(cusparseHandle_t handle, cudaStream_t stream);
cusparseStatus_t cusparseCreateCsr(cusparseSpMatDescr_t *spMatDescr, int64_t rows, int64_t cols, int64_t nnz,
                                   void *csrRowOffsets, void *csrColInd, void *csrValues,
                                   cusparseIndexType_t csrRowOffsetsType, cusparseIndexType_t csrColIndType,
                                   cusparseIndexBase_t idxBase, cudaDataType valueType);
cusparseStatus_t cusparseDestroySpMat(cusparseConstSpMatDescr_t spMatDescr);
cusparseStatus_t cusparseCreateDnMat(cusparseDnMatDescr_t *dnMatDescr, int64_t rows, int64_t cols, int64_t ld,
                                     void *values, cudaDataType valueType, cusparseOrder_t order);
cusparseStatus_t cusparseDestroyDnMat(cusparseConstDnMatDescr_t dnMatDescr);
cusparseStatus_t cusparseSpMM_bufferSize(cusparseHandle_t handle, cusparseOperation_t opA, cusparseOperation_t opB,
                                         const void *alpha, cusparseConstSpMatDescr_t matA,
                                         cusparseConstDnMatDescr_t matB, const void *beta, cusparseDnMatDescr_t matC,
                                         cudaDataType computeType, cusparseSpMMAlg_t alg, size_t *bufferSize);
cusparseStatus_t cusparseSpMM(cusparseHandle_t handle, cusparseOperation_t opA, cusparseOperation_t opB,
                              const void *alpha, cusparseConstSpMatDescr_t matA, cusparseConstDnMatDescr_t matB,
                              const void *beta, cusparseDnMatDescr_t matC, cudaDataType computeType,
                              cusparseSpMMAlg_t alg, void *externalBuffer);
const char *cusparseGetErrorName(cusparseStatus_t status);
const char *cusparseGetErrorString(cusparseStatus_t status);
}

#endif
