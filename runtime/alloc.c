/*
** alloc.c: the allocator hook, dtypes, and the arrays that sit on both.
**
** One hook, with lua_Alloc's contract, carries every heap allocation of the
** runtime, so an embedder can account for, cap or fail memory in one place
** (the tests plug in an allocator that fails after k calls). Sizes are
** passed back on free, so the hook needs no headers of its own.
*/
#define _DEFAULT_SOURCE 1   /* madvise */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#ifdef __linux__
#include <sys/mman.h>
#endif

#include "internal.h"

static void *
defalloc(void *ud, void *ptr, size_t osize, size_t nsize)
{
	(void)ud;
	(void)osize;
	if (nsize == 0) {
		free(ptr);
		return NULL;
	}
	return realloc(ptr, nsize);
}

static gnn_alloc_fn allocf = defalloc;
static void *allocud;

void
gnn_set_allocator(gnn_alloc_fn f, void *ud)
{
	allocf = f ? f : defalloc;
	allocud = f ? ud : NULL;
}

void *
gnn_realloc(void *p, size_t osize, size_t nsize)
{
	return allocf(allocud, p, osize, nsize);
}

void *
gnn_malloc(size_t n)
{
	/* n == 0 would mean "free" to the hook */
	return n ? allocf(allocud, NULL, 0, n) : NULL;
}

void
gnn_free(void *p, size_t n)
{
	if (p)
		allocf(allocud, p, n, 0);
}

/* Transparent huge pages for the 2 MiB-aligned part of a large host block
 * that kernels read at random (the cpu target's arena, whose slots are
 * the tables a row kernel gathers from), where the system gives them on
 * request (THP "madvise"): with 4 KiB pages a gather from a table of tens
 * of MiB misses the TLB on most edges.  Advice only: a refusal, or a
 * block of the embedder's allocator that is not fresh memory, changes
 * nothing but speed, and the block stays the allocator's.  GNN_HUGEPAGES=0
 * leaves every block alone */
void
gnn_hugepages_(void *p, size_t n)
{
#if defined(__linux__) && defined(MADV_HUGEPAGE)
	const uintptr_t huge = (uintptr_t)2 << 20;
	uintptr_t lo = ((uintptr_t)p + huge - 1) & ~(huge - 1), hi = ((uintptr_t)p + n) & ~(huge - 1);
	const char *env = getenv("GNN_HUGEPAGES");

	if (p && hi > lo && !(env && strcmp(env, "0") == 0))
		(void)madvise((void *)lo, hi - lo, MADV_HUGEPAGE);
#else
	(void)p;
	(void)n;
#endif
}

static const struct {
	const char *name;
	size_t size;
} dtypes[] = {
	[GNN_F32] = {"f32", 4},
	[GNN_F64] = {"f64", 8},
	[GNN_F16] = {"f16", 2},
	[GNN_BF16] = {"bf16", 2},
	[GNN_I32] = {"i32", 4},
	[GNN_I64] = {"i64", 8},
	[GNN_BOOL] = {"bool", 1},
	[GNN_U8] = {"u8", 1},
	[GNN_I8] = {"i8", 1},
	[GNN_I16] = {"i16", 2},
	[GNN_U16] = {"u16", 2},
	[GNN_U32] = {"u32", 4},
	[GNN_U64] = {"u64", 8},
};

const char *
gnn_dtype_name(gnn_dtype t)
{
	if (t < GNN_F32 || t > GNN_U64)
		return "?";
	return dtypes[t].name;
}

size_t
gnn_dtype_size(gnn_dtype t)
{
	if (t < GNN_F32 || t > GNN_U64)
		return 0;
	return dtypes[t].size;
}

void
gnn_array_free(gnn_array *a)
{
	if (!a)
		return;
	gnn_free(a->data, a->nbytes);
	*a = (gnn_array){0};
}

int64_t
gnn_array_numel(const gnn_array *a)
{
	int64_t n = 1;

	if (!a || a->rank < 0 || a->rank > GNN_MAX_RANK)
		return 0;
	for (int i = 0; i < a->rank; i++)
		n *= a->shape[i];
	return n;
}

int
gnn_shape_nbytes(gnn_dtype t, int rank, const int64_t *shape, size_t *nbytes)
{
	uint64_t n = 1, size = gnn_dtype_size(t);

	for (int i = 0; i < rank; i++)
		if (shape[i] < 0)
			return -1;
	/* an empty array is empty whatever its other dims are */
	for (int i = 0; i < rank; i++)
		if (shape[i] == 0) {
			*nbytes = 0;
			return 0;
		}
	for (int i = 0; i < rank; i++) {
		if (n > (uint64_t)INT64_MAX / (uint64_t)shape[i])
			return -1;
		n *= (uint64_t)shape[i];
	}
	/* bytes must also fit int64 (file offsets) and size_t (memory) */
	if (n > (uint64_t)INT64_MAX / size || n * size > SIZE_MAX)
		return -1;
	*nbytes = (size_t)(n * size);
	return 0;
}

gnn_status
gnn_array_check(const char *path, const char *name, const gnn_array *a)
{
	char who[512];
	size_t nbytes;

	if (name)
		snprintf(who, sizeof who, "%s: array '%s'", path, name);
	else
		snprintf(who, sizeof who, "%s", path);
	if (!a)
		return gnn_fail(GNN_ERR_ARG, "%s: array is NULL", who);
	if (!gnn_dtype_size(a->dtype))
		return gnn_fail(GNN_ERR_DTYPE, "%s: invalid dtype %d", who, (int)a->dtype);
	if (a->rank < 0 || a->rank > GNN_MAX_RANK)
		return gnn_fail(GNN_ERR_SHAPE, "%s: rank %d not in [0, %d]",
			who, a->rank, GNN_MAX_RANK);
	if (gnn_shape_nbytes(a->dtype, a->rank, a->shape, &nbytes) != 0)
		return gnn_fail(GNN_ERR_SHAPE, "%s: shape has a negative dim or is too large", who);
	if (nbytes != a->nbytes)
		return gnn_fail(GNN_ERR_ARG, "%s: nbytes is %zu but the shape needs %zu",
			who, a->nbytes, nbytes);
	if (nbytes > 0 && !a->data)
		return gnn_fail(GNN_ERR_ARG, "%s: data is NULL", who);
	return GNN_OK;
}
