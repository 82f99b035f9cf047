/*
** gnnrt.h: public interface of libgnnrt, the runtime that gnncc-compiled
** models link against.
**
** Conventions (after Lua's C API):
** - every fallible call returns a gnn_status; GNN_OK is 0;
** - on failure the call leaves a message for this thread in gnn_errmsg()
**   and frees whatever it allocated: outputs are zeroed, nothing leaks;
** - bad input (a corrupt file, an invalid argument) is never fatal: the
**   runtime does not exit, abort or print;
** - all heap memory goes through one allocator hook (gnn_set_allocator);
** - the host is assumed little endian, as are all tensor files.
*/
#ifndef GNNRT_H
#define GNNRT_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/* status.c */

typedef enum gnn_status {
	GNN_OK = 0,
	GNN_ERR_ARG,      /* invalid argument: a caller bug */
	GNN_ERR_MEM,      /* the allocator returned NULL */
	GNN_ERR_IO,       /* open/read/write/rename failed */
	GNN_ERR_FORMAT,   /* a file is malformed, truncated or inconsistent */
	GNN_ERR_DTYPE,    /* element type unknown or unsupported */
	GNN_ERR_SHAPE,    /* negative dims, rank > GNN_MAX_RANK, size overflow */
	GNN_ERR_RANGE,    /* index out of range */
	GNN_ERR_CUDA,     /* a CUDA runtime or library call failed */
	GNN_ERR_STATE     /* call not valid in the object's current state */
} gnn_status;

const char *gnn_status_name(gnn_status s);   /* "GNN_ERR_FORMAT" */
/* The message of the last failure in the calling thread, "" if none.
** Successful calls leave it unchanged. Valid until the next failure. */
const char *gnn_errmsg(void);

/* alloc.c */

/*
** The allocator contract is lua_Alloc's: f(ud, NULL, 0, n) allocates,
** f(ud, p, o, n) resizes a block of o bytes to n (leaving p intact on
** failure), and f(ud, p, o, 0) frees p and returns NULL. Set it before
** any other call; it is process-wide and not synchronized.
** NULL restores the default (realloc/free).
*/
typedef void *(*gnn_alloc_fn)(void *ud, void *ptr, size_t osize, size_t nsize);
void gnn_set_allocator(gnn_alloc_fn f, void *ud);
/* gnn_malloc(0) returns NULL; gnn_free needs the size that was allocated. */
void *gnn_malloc(size_t n);
void gnn_free(void *p, size_t n);

typedef enum gnn_dtype {
	GNN_F32 = 1,
	GNN_F64,
	GNN_F16,
	GNN_BF16,
	GNN_I32,
	GNN_I64,
	GNN_BOOL,
	GNN_U8,
	GNN_I8,
	GNN_I16,
	GNN_U16,
	GNN_U32,
	GNN_U64
} gnn_dtype;

const char *gnn_dtype_name(gnn_dtype t);   /* "f32", ...; "?" if invalid */
size_t gnn_dtype_size(gnn_dtype t);        /* bytes; 0 if invalid */

#define GNN_MAX_RANK 8

/* A dense, C-ordered array. rank 0 is a scalar (one element); a zero
** dimension makes an empty array, whose data may be NULL. */
typedef struct gnn_array {
	gnn_dtype dtype;
	int rank;
	int64_t shape[GNN_MAX_RANK];
	void *data;
	size_t nbytes;   /* numel * gnn_dtype_size(dtype) */
} gnn_array;

/* Frees a->data through the hook (with a->nbytes) and zeroes *a. Only
** for arrays that own their data, never for gnn_st_get views. */
void gnn_array_free(gnn_array *a);
/* Product of the dims (1 for rank 0); a must be valid. */
int64_t gnn_array_numel(const gnn_array *a);

/* npy.c */

/*
** Reads a NumPy .npy file (versions 1.0, 2.0, 3.0). Big-endian data
** ('>' byte order) is byte-swapped to native; fortran_order=True is
** rejected for rank >= 2. On failure *out is zeroed.
*/
gnn_status gnn_npy_read(const char *path, gnn_array *out);
/*
** Writes a as .npy exactly as numpy.save would (version 1.0, C order,
** little endian). The file is written under a temporary name and then
** renamed over path, so a failure never leaves path half-written.
** GNN_BF16 has no .npy type and fails with GNN_ERR_DTYPE.
*/
gnn_status gnn_npy_write(const char *path, const gnn_array *a);

/* safetensors.c */

typedef struct gnn_safetensors gnn_safetensors;

/* Reads and validates the whole file; tensors are then views into it. */
gnn_status gnn_st_open(const char *path, gnn_safetensors **out);
void gnn_st_close(gnn_safetensors *st);   /* NULL is a no-op */
/* Tensors are indexed 0..count-1 in the order of their data in the file. */
int gnn_st_count(const gnn_safetensors *st);
const char *gnn_st_name(const gnn_safetensors *st, int i);   /* NULL if out of range */
int gnn_st_find(const gnn_safetensors *st, const char *name);   /* index or -1 */
/* view->data points into st's buffer: valid until gnn_st_close, never
** to be freed. Data of each tensor is aligned to its element size. */
gnn_status gnn_st_get(const gnn_safetensors *st, int i, gnn_array *view);
/* A value of the "__metadata__" map, NULL if absent. */
const char *gnn_st_metadata(const gnn_safetensors *st, const char *key);
/*
** Writes n named arrays as the reference implementation does (tensors
** ordered by descending alignment then name, header padded to a multiple
** of 8, no __metadata__), atomically like gnn_npy_write.
*/
gnn_status gnn_st_write(const char *path, const char *const *names,
	const gnn_array *arrays, int n);

#ifdef __cplusplus
}
#endif

#endif
