/*
** internal.h: what the runtime's files share and users do not see.
** Grouped by the file that defines each piece, as gnnrt.h is.
*/
#ifndef GNNRT_INTERNAL_H
#define GNNRT_INTERNAL_H

#include "gnnrt.h"

#if defined(__GNUC__)
#define GNN_PRINTF(f, a) __attribute__((format(printf, f, a)))
#else
#define GNN_PRINTF(f, a)
#endif

/* program.c: drop the bound graph's state (bind, destroy); recompute the
 * load-time values from the host's weights and upload them */
void gnn_prog_unbind_(gnn_instance *m);
gnn_status gnn_prog_loadtime_(gnn_instance *m);

/* train.c: free the training state (destroy); bring the host's weights
 * and the load-time values up to date after training (forward, save) */
void gnn_trainer_free_(gnn_instance *m);
gnn_status gnn_prog_refresh_(gnn_instance *m);

/* gemm.c: the cpu kernels' instruction-set level, 0 generic, 1 avx2
 * (with FMA), 2 avx512, picked once (GNN_CPU_ISA may lower it); the
 * paths of gemm.c and dropout.c by that level */
int gnn_cpu_level_(void);

/* gemm.c, hgemm.c: AVX-512 register tiles of r rows by np 16-column
 * panels, r at most 16, 12, 8, 6 for np = 1, 2, 3, 4 (up to 24 of the 32
 * registers accumulate). GNN_TILES(np, mr, K) runs the statement macro
 * K(r, np) with both as constants, so that a tile's loops unroll, and
 * returns from the caller */
#define GNN_TILE_C(K, r, p) case r: K(r, p); return;
#define GNN_TILE_C6(K, p) GNN_TILE_C(K, 1, p) GNN_TILE_C(K, 2, p) GNN_TILE_C(K, 3, p) \
	GNN_TILE_C(K, 4, p) GNN_TILE_C(K, 5, p) GNN_TILE_C(K, 6, p)
#define GNN_TILE_C8(K, p) GNN_TILE_C6(K, p) GNN_TILE_C(K, 7, p) GNN_TILE_C(K, 8, p)
#define GNN_TILE_C12(K, p) GNN_TILE_C8(K, p) GNN_TILE_C(K, 9, p) GNN_TILE_C(K, 10, p) \
	GNN_TILE_C(K, 11, p) GNN_TILE_C(K, 12, p)
#define GNN_TILE_C16(K, p) GNN_TILE_C12(K, p) GNN_TILE_C(K, 13, p) GNN_TILE_C(K, 14, p) \
	GNN_TILE_C(K, 15, p) GNN_TILE_C(K, 16, p)
#define GNN_TILES(np, mr, K) \
	switch (np) { \
	case 1: switch (mr) { GNN_TILE_C16(K, 1) } return; \
	case 2: switch (mr) { GNN_TILE_C12(K, 2) } return; \
	case 3: switch (mr) { GNN_TILE_C8(K, 3) } return; \
	default: switch (mr) { GNN_TILE_C6(K, 4) } return; \
	}

/* lanes j < n of a 16-lane mask (AVX-512's __mmask16): the masked tails
** of gemm.c's and hgemm.c's tiles */
static inline uint16_t
gnn_mask16(int64_t n)
{
	return n >= 16 ? (uint16_t)0xffff : n <= 0 ? 0 : (uint16_t)((1u << n) - 1);
}

/* profile.c: GNN_PROFILE in the environment, read once (gnn_prog_create) */
gnn_status gnn_prof_env_(void);

/* status.c */

/* Formats the thread's error message and returns s, so that a failure
** reads `return gnn_fail(GNN_ERR_IO, "%s: ...", path, ...);`. The buffer
** is overwritten, so gnn_errmsg() itself must not be an argument. */
gnn_status gnn_fail(gnn_status s, const char *fmt, ...) GNN_PRINTF(2, 3);

/* alloc.c */

/* Resizes through the hook; osize 0 with p NULL allocates. */
void *gnn_realloc(void *p, size_t osize, size_t nsize);
void gnn_hugepages_(void *p, size_t n);   /* alloc.c: huge pages asked for a large host block */
/*
** Checks a caller's array before it is written to path: valid dtype,
** rank, non-negative dims, nbytes equal to the shape's size and data
** present when nbytes > 0. name (may be NULL) labels the array in the
** message. GNN_ERR_ARG/DTYPE/SHAPE on failure.
*/
gnn_status gnn_array_check(const char *path, const char *name, const gnn_array *a);
/* Size in bytes of a dtype/shape pair; 0 on success, -1 when a dim is
** negative or numel or the byte count overflows int64. */
int gnn_shape_nbytes(gnn_dtype t, int rank, const int64_t *shape, size_t *nbytes);

/* npy.c (here because the .npy writer came first; safetensors.c uses it too) */

/*
** Writes the concatenation of parts to path.tmpXXXXXX, syncs it and
** renames it over path; on failure the temporary is removed and path
** is untouched.
*/
typedef struct gnn_span {
	const void *p;
	size_t n;
} gnn_span;
gnn_status gnn_write_atomic(const char *path, const gnn_span *parts, int nparts);

/* safetensors.c: gnn_st_write, or (inorder) with the header in the
 * caller's order and the data by descending element size, then the
 * caller's order (gnn_save_params) */
gnn_status gnn_st_write_(const char *path, const char *const *names, const gnn_array *arrays, int n,
	int inorder);

/* program.c: drop the bound graph's state (bind, destroy); recompute the
 * load-time values from the host's weights and upload them */
void gnn_prog_unbind_(gnn_instance *m);
gnn_status gnn_prog_loadtime_(gnn_instance *m);
/* program.c: a device call of who's failed with the device's err while
 * doing what: "WHO: WHAT: " and the device's words, GNN_ERR_CUDA; or,
 * when the device ran out of memory, GNN_ERR_MEM naming need (the bytes
 * asked for; 0: not known) and what the device has free, its last error
 * cleared (it is this failure's, not the next launch's) */
gnn_status gnn_devfail_(const gnn_device *dev, int err, size_t need, const char *who, const char *what);

/* train.c: free the training state (destroy); bring the host's weights
 * and the load-time values up to date after training (forward, save) */
void gnn_trainer_free_(gnn_instance *m);
gnn_status gnn_prog_refresh_(gnn_instance *m);

/* graph.c: the host CSR, out-degrees and dis, built on first use
 * (GNN_ERR_MEM if they cannot be); whether they have been */
gnn_status gnn_graph_csr_(const gnn_graph *g);
int gnn_graph_has_csr_(const gnn_graph *g);
/* graph.c: the edges that are self loops (src == dst) */
int64_t gnn_graph_loops_(const gnn_graph *g);

/* A spin lock for work done once and shared between threads (a graph's
 * CSR, reading GNN_PROFILE): held briefly, and only the first time. */
static inline void
gnn_spin_lock_(int *l)
{
	while (__atomic_exchange_n(l, 1, __ATOMIC_ACQUIRE))
		;
}

static inline void
gnn_spin_unlock_(int *l)
{
	__atomic_store_n(l, 0, __ATOMIC_RELEASE);
}

#endif
