/*
** device.h: the device layer, the only code that calls a device API.
**
** A device is a table of plain functions returning 0 or the device's own
** error code (errstr names it), so that the layer needs nothing of the
** rest of the runtime and program.c words every message.  The cpu device
** shares host memory (separate = 0): forward reads host buffers in place.
** The cuda device (device_cuda.c) is compiled against the CUDA runtime
** for libgnnrt_cuda.a, and against the emulator for libgnnemu.a.
*/
#ifndef GNNRT_DEVICE_H
#define GNNRT_DEVICE_H

#include <stddef.h>
#include <stdint.h>

#include "gnnrt.h"

enum { GNN_H2D = 1, GNN_D2H, GNN_ANY };   /* copy directions */

struct gnn_device {
	const char *name;
	int separate;                            /* memory of its own */
	int (*stream_create)(void **s);
	void (*stream_destroy)(void *s);
	int (*alloc)(void **p, size_t n);
	void (*free)(void *p);
	/* n bytes; async on s, or synchronous when async is 0 */
	int (*copy)(void *dst, const void *src, size_t n, int dir, void *s, int async);
	int (*sync)(void *s);
	int (*last_error)(void);                 /* a failed launch since the last call */
	const char *(*errstr)(int err);
	/* microseconds of one fn(arg, k) on s */
	int (*elapsed)(void *s, void (*fn)(void *, int), void *arg, int k, double *us);
	const char *(*arch)(void);               /* "sm_90", "emu"; NULL on the cpu */
	const struct gnn_devbind *bind;          /* bind's graph work on the device, or NULL */
	const struct gnn_devfwd *fwd;            /* forward's graphs and staging, or NULL */
	const struct gnn_devoptim *optim;        /* training's optimizer update, or NULL */
	int nomem;                               /* the error code of alloc out of memory */
	/* the device's free and total memory in bytes, or NULL (the cpu) */
	int (*meminfo)(size_t *free, size_t *total);
	const struct gnn_devprof *prof;          /* profiling's timers, or NULL: the host clock */
	/* the emulated device's memcheck: on, [p, p+n) of an allocation is a
	 * redzone no kernel may touch (the gaps between the buffers carved
	 * out of one arena); off, it is usable again.  NULL elsewhere. */
	void (*redzone)(void *p, size_t n, int on);
	/* does redzone mark anything (the emulator under AddressSanitizer)?
	 * Only then does an arena keep gaps between its buffers. */
	int (*redzones)(void);
};

/*
** Forward's extras on a device with memory of its own (device_cuda.c):
** what kind of memory a pointer is (forward writes an output in place
** where it is the device's), page-locked host memory for forward_host's
** staging, and graphs: the launches issued on a stream between
** capture_begin and capture_end become an executable graph, replayed by
** graph_launch.  capture_end makes *exec, or updates the one there in
** place (remaking it when the update cannot be done); after a failure
** *exec is NULL and nothing is left to free.
*/
enum { GNN_MEM_PAGEABLE, GNN_MEM_PINNED, GNN_MEM_DEVICE };
struct gnn_devfwd {
	int (*memtype)(const void *p);           /* GNN_MEM_* */
	int (*host_alloc)(void **p, size_t n);   /* page-locked */
	void (*host_free)(void *p);
	int (*capture_begin)(void *s);
	int (*capture_end)(void *s, void **exec);
	int (*graph_launch)(void *exec, void *s);
	void (*graph_destroy)(void *exec);
	/* n bytes between pageable host memory and the device through pin
	 * (page-locked, n bytes), in pieces, so that the host's copies
	 * overlap the transfers; stage_out returns once dst holds the data */
	int (*stage_in)(void *dst, const void *src, void *pin, size_t n, void *s);
	int (*stage_out)(void *dst, const void *src, void *pin, size_t n, void *s);
};
typedef struct gnn_devfwd gnn_devfwd;

/*
** Bind on the device (devbind.cu): the graph work of a model's bind steps
** as kernels on the model's stream, so that bind's host work does not
** grow with the graph.  A graph value is a gnn_dgraph: its edge index on
** the device, and the CSR by target once a step needs it (a relation, one
** edge type of a heterogeneous graph, has ns source nodes of their own;
** a graph of one node type has ns = n).  Every
** function returns 0 or the device's error code; results are the host
** runtime's (graph.c) bit for bit: the CSR and segment plans are stable
** counting sorts (integer counts, scans, a stable radix placement), and
** per-node sums walk a row in edge order, as graph.c does.
*/
typedef struct gnn_dgraph {
	int64_t n, e, ns;      /* nodes (targets), edges, source nodes */
	int64_t *ei;           /* src[e] then dst[e] (device; NULL when e is 0) */
	float *w;              /* weights [e] (device), or NULL: unweighted */
	int64_t *csr;          /* rowptr[n+1] then perm[e] (device), or NULL: not built yet */
	int weighted;          /* w is meaningful (also when e is 0) */
	int ready;             /* made (uploaded, derived) */
} gnn_dgraph;

enum {                     /* gnn_devbind.selfloops */
	GNN_DB_ADD_LOOPS, GNN_DB_REMOVE_LOOPS, GNN_DB_REMAINING_LOOPS,
};
enum {                     /* gnn_devbind.tensor: what fills out */
	GNN_DB_SRC, GNN_DB_DST, GNN_DB_IN_DEGREE, GNN_DB_OUT_DEGREE, GNN_DB_EDGE_WEIGHT, GNN_DB_GCN_NORM,
};
typedef struct gnn_devbind gnn_devbind;
struct gnn_devbind {
	/* the bound graph's edge index (one copy) and weights */
	int (*upload)(gnn_dgraph *d, const gnn_graph *g, void *s);
	/* a derived graph (PyG's add_self_loops, remove_self_loops,
	 * add_remaining_self_loops with fill), in graph.c's edge order */
	int (*selfloops)(gnn_dgraph *out, const gnn_dgraph *in, int op, float fill, void *s);
	/* out (device, e or n elements by what) from g */
	int (*tensor)(void *out, int what, gnn_dgraph *g, void *s);
	/* gnn_segment_plan: plan = rowptr[n+1] then order[k] from key[k]
	 * (device); an entry outside [0, n) sets *bad to its position and
	 * *badval to it (else *bad = -1) and leaves plan undefined */
	int (*segplan)(int64_t *plan, const int64_t *key, int64_t k, int64_t n, int64_t *bad, int64_t *badval, void *s);
	/* the CSR by target of g (g->csr), if not built yet */
	int (*csr)(gnn_dgraph *g, void *s);
	/* gnn_split_plan of the segment plan rowptr[t+1] (device) with
	 * least chunk c0: *plan (device, *nbytes, for the device's free) and
	 * its header in head (host, GNN_SPLIT_HEADER slots), all the host
	 * reads of it; the rest stays on the device */
	int (*splitplan)(int64_t **plan, size_t *nbytes, int64_t *head, const int64_t *rowptr, int64_t t, int64_t c0, void *s);
	/* out row j = row order[j] of x (rows of rowbytes bytes, k rows;
	 * device), or with narrow, x an int64 index and out its int32 copy
	 * (rowbytes 8) */
	int (*permute)(void *out, const int64_t *order, int64_t k, const void *x, size_t rowbytes, int narrow, void *s);
	/* n zero bytes at p (device) */
	int (*zero)(void *p, size_t n, void *s);
	void (*release)(gnn_dgraph *g);
};

/*
** Training's optimizer (optim.c; the kernel is optim.cu, the cpu's a loop
** in device_cpu.c): step applies one update of a (optim.h) to the n
** tensors of tab, total elements in all, in one launch on s; tab and the
** tensors are the device's memory.  zero: n zero bytes at p.
*/
struct gnn_optseg;
struct gnn_optargs;
typedef struct gnn_devoptim {
	int (*step)(const struct gnn_optseg *tab, int n, int64_t total, const struct gnn_optargs *a, void *s);
	int (*zero)(void *p, size_t n, void *s);
} gnn_devoptim;

/*
** Profiling (profile.c) on a device with a stream of its own: begin
** records a start on s and makes *tok; end records the stop, waits for
** it, gives the microseconds between and, on the emulated device, the
** launch's GNN_WORK counters (warps, total, busiest warp's; -1 each
** where nothing counted), and frees tok.  NULL where there are none.
*/
typedef struct gnn_devprof {
	int (*begin)(void *s, void **tok);
	int (*end)(void *s, void *tok, double *us, long long w[3]);
} gnn_devprof;
/* the CUDA device that the CUDA sources beside device_cuda.c (devbind.cu,
 * optim.cu) are built for: the emulated one under the emulator */
#ifdef GNN_EMU
#define GNN_CUDA_SELF (&gnn_device_cuda_emu)
#else
#define GNN_CUDA_SELF (&gnn_device_cuda)
#endif
#endif
