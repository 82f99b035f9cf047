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
#include <stdio.h>

#ifdef __cplusplus
extern "C" {
#endif

/* status.c */

typedef enum gnn_status {
	GNN_OK = 0,
	GNN_ERR_ARG,      /* invalid argument: a caller bug */
	GNN_ERR_MEM,      /* out of memory: the allocator returned NULL, or the device's is full */
	GNN_ERR_IO,       /* open/read/write/rename failed */
	GNN_ERR_FORMAT,   /* a file is malformed, truncated or inconsistent */
	GNN_ERR_DTYPE,    /* element type unknown or unsupported */
	GNN_ERR_SHAPE,    /* negative dims, rank > GNN_MAX_RANK, size overflow */
	GNN_ERR_RANGE,    /* index out of range; a value not allowed (gnn_check_finite) */
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

/*
** The limits of the readers of untrusted files (.npy, safetensors): what a
** file may declare before the reader gives up with an error naming the
** limit, so that a hostile header cannot make it allocate or loop without
** bound.  Every real file is far inside them.
*/
#define GNN_MAX_RANK 8                      /* dims of an array or tensor (SHAPE) */
#define GNN_NPY_MAX_HEADER (1 << 20)        /* .npy header bytes (FORMAT); numpy writes < 10000 */
#define GNN_ST_MAX_HEADER 100000000         /* safetensors header bytes (FORMAT), the reference's */
#define GNN_ST_MAX_TENSORS 65536            /* tensors, and __metadata__ entries, of a safetensors file (FORMAT) */

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
/* Product of the dims (1 for rank 0); 0 for NULL or a rank outside
** [0, GNN_MAX_RANK], whose dims cannot be read. */
int64_t gnn_array_numel(const gnn_array *a);

/* check.c */

/*
** An opt-in scan for NaN and infinities (the readers accept them: they
** are valid floats). GNN_ERR_RANGE names the first bad element by its
** position in a's shape ("x: element [3, 17] is nan (2 of 10031 elements
** are not finite)"); what (NULL: "array") labels a in the message.
** Integer and bool arrays always pass; a malformed a is GNN_ERR_ARG,
** GNN_ERR_DTYPE or GNN_ERR_SHAPE as for gnn_npy_write.
*/
gnn_status gnn_check_finite(const gnn_array *a, const char *what);

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

/* graph.c */

/*
** A graph: N nodes and E directed edges in PyG's edge_index layout (row 0
** sources, row 1 targets), kept in the user's edge order, plus a CSR by
** target (pull aggregation) whose order is stable, so results do not
** depend on scheduling.  Optional per-edge weights and, for a batch of
** graphs, a node-to-graph vector.  Host memory; immutable once built
** (the setters below are for right after creation).
*/
typedef struct gnn_graph gnn_graph;

/*
** edge_index: host array of 2*num_edges ints (GNN_I32 or GNN_I64), row
** major [2, E].  Every index must lie in [0, num_nodes): the first one
** that does not is named in the message (GNN_ERR_RANGE).  num_nodes and
** num_edges may be 0; negative counts are GNN_ERR_ARG.
*/
gnn_status gnn_graph_from_edge_index(gnn_graph **g, const void *edge_index,
	gnn_dtype dtype, int64_t num_edges, int64_t num_nodes);
/*
** A relation, one edge type (src_type, rel, dst_type) of a heterogeneous
** graph (PyG's HeteroData[src_type, rel, dst_type].edge_index): sources
** index num_src_nodes nodes of one type, targets num_dst_nodes of
** another; each index is checked against its own type's count
** (GNN_ERR_RANGE).  gnn_graph_num_nodes is num_dst_nodes (what targets,
** scatters and in-degrees index), gnn_graph_num_src_nodes num_src_nodes.
** Self loops and gcn_norm refuse a relation.  A model with relation
** inputs binds one graph per relation (NAME_bind_graphs).
*/
gnn_status gnn_graph_relation_from_edge_index(gnn_graph **g, const void *edge_index,
	gnn_dtype dtype, int64_t num_edges, int64_t num_src_nodes, int64_t num_dst_nodes);
int64_t gnn_graph_num_src_nodes(const gnn_graph *g);   /* num_nodes for one node type */
/* An edge_index .npy file (int32 or int64, [2, E]) as a graph of
** num_nodes nodes; num_nodes < 0: the largest index + 1. */
gnn_status gnn_graph_read_npy(gnn_graph **g, const char *path, int64_t num_nodes);
/* weight: num_edges floats in the user's edge order (copied). */
gnn_status gnn_graph_set_edge_weight(gnn_graph *g, const float *weight);
/* batch: num_nodes ints, each in [0, num_graphs) (copied). */
gnn_status gnn_graph_set_batch(gnn_graph *g, const void *batch, gnn_dtype dtype,
	int64_t num_graphs);
void gnn_graph_destroy(gnn_graph *g);      /* NULL is a no-op */

int64_t gnn_graph_num_nodes(const gnn_graph *g);
int64_t gnn_graph_num_edges(const gnn_graph *g);
int64_t gnn_graph_num_graphs(const gnn_graph *g);   /* 1 without a batch */
/* Views, valid while g lives.  src/dst: [E] in the user's order;
** weight: [E] or NULL when unweighted; batch: [N] or NULL. */
const int64_t *gnn_graph_src(const gnn_graph *g);
const int64_t *gnn_graph_dst(const gnn_graph *g);
const float *gnn_graph_weight(const gnn_graph *g);
const int64_t *gnn_graph_batch(const gnn_graph *g);
/* CSR by target: rowptr [N+1]; perm [E] lists edge ids (positions in the
** user's order) grouped by target, in increasing edge id within a row. */
const int64_t *gnn_graph_rowptr(const gnn_graph *g);
const int64_t *gnn_graph_perm(const gnn_graph *g);

/*
** Derived graphs, as PyG's utilities make them (new objects, which the
** caller destroys; weights and batch carried along):
**   add_self_loops: one loop (i, i) per node appended after the edges,
**     weight 1;
**   remove_self_loops: edges with src == dst dropped, order kept;
**   add_remaining_self_loops: loops dropped, then one per node appended;
**     on a weighted graph a new loop weighs fill, or the weight of the
**     node's last existing loop; an unweighted graph stays unweighted.
*/
gnn_status gnn_graph_add_self_loops(const gnn_graph *g, gnn_graph **out);
gnn_status gnn_graph_remove_self_loops(const gnn_graph *g, gnn_graph **out);
gnn_status gnn_graph_add_remaining_self_loops(const gnn_graph *g, float fill,
	gnn_graph **out);

/*
** Graph-only tensors, written into caller memory (host, float32):
**   degree: [N] count of edges by target (in) or source (out);
**   edge weights: [E] the weights, or 1;
**   gcn_norm: [E] deg^-1/2[src] * w * deg^-1/2[dst], deg = weighted
**     in-degree, 0 where deg is 0 (PyG's gcn_norm without self loops).
*/
void gnn_graph_in_degree(const gnn_graph *g, float *out);
void gnn_graph_out_degree(const gnn_graph *g, float *out);
void gnn_graph_edge_weight(const gnn_graph *g, float *out);
void gnn_graph_gcn_norm(const gnn_graph *g, float *out);

/*
** A segment plan for a deterministic scatter: the k entries of index,
** each in [0, n), grouped by value with a stable counting sort.
** rowptr: n+1 entries; order: k entries (positions into index).
** GNN_ERR_RANGE names the first index out of range.
*/
gnn_status gnn_segment_plan(const int64_t *index, int64_t k, int64_t n,
	int64_t *rowptr, int64_t *order);

/*
** split.c: a split plan over a segment plan's rowptr (t rows), which
** balances the cuda target's edge walks (the `split` schedule): rows
** longer than C edges are walked in chunks of C and their partials
** combined in reduce levels (split.c says how).  C is the largest of
** c0, 2c0, ... under which the busiest row's work is within twice the
** mean row's, else c0 (at least 2).  The plan is gnn_malloc'd int64
** slots (*nbytes bytes): the header below, then the arrays it locates
** (slot offsets).  A level's header: item count n, windows nwin, its
** items' first row in the scratch, the next level's, and the offsets of
** irow[n], wstart[nwin + 1] and wdest[nwin].
*/
enum {
	GNN_SPLIT_C, GNN_SPLIT_T, GNN_SPLIT_NLONG, GNN_SPLIT_NCHUNK, GNN_SPLIT_NLEV,
	GNN_SPLIT_NITEMS,        /* scratch rows before lr (one per long row) */
	GNN_SPLIT_LIX,           /* offset of lix[t]: long-row index or -1 */
	GNN_SPLIT_CHUNKS,        /* offset of crow[n0], then clo[n0], chi[n0] */
	GNN_SPLIT_NWIN,          /* the row kernel's row windows */
	GNN_SPLIT_WINS,          /* offset of their first rows, rwin[nwin + 1] */
	GNN_SPLIT_LEVEL,         /* the levels' headers from here */
	GNN_SPLIT_LEVELSLOTS = 7,
	GNN_SPLIT_MAXLEV = 64,
	GNN_SPLIT_HEADER = GNN_SPLIT_LEVEL + GNN_SPLIT_LEVELSLOTS * GNN_SPLIT_MAXLEV,
};
int64_t gnn_split_chunk(const int64_t *rowptr, int64_t t, int64_t c0);
gnn_status gnn_split_plan(const int64_t *rowptr, int64_t t, int64_t c0,
	int64_t **plan, size_t *nbytes);

/* model.c: what compiled models share */

typedef enum gnn_target { GNN_TARGET_CPU = 1, GNN_TARGET_CUDA } gnn_target;

/* A model input, output or parameter: shape[k] is -1 where the size is
** symbolic (N, E + N); dims spells the shape as the model does. */
typedef struct gnn_tensor_info {
	const char *name;
	gnn_dtype dtype;
	int rank;
	int64_t shape[GNN_MAX_RANK];
	const char *dims;        /* "[N, 1433]" */
} gnn_tensor_info;

/*
** Every compiled model exports one descriptor, NAME_desc, so that generic
** tools drive any model.  Pointers passed to forward are device pointers
** for the cuda target and host pointers for cpu; forward_host always
** takes host pointers (staging through the device when needed).
** Tensor inputs and outputs are in declaration order; the graph input is
** the one given to bind.
*/
typedef struct gnn_model_desc {
	const char *name;
	gnn_target target;
	int ninputs, noutputs, nparams;
	const gnn_tensor_info *inputs, *outputs, *params;
	gnn_status (*create)(void **model);
	gnn_status (*load_weights)(void *model, const char *path);
	gnn_status (*bind)(void *model, gnn_graph *g);
	/* the shape of output i once a graph is bound */
	gnn_status (*output_shape)(void *model, int i, int64_t *shape);
	gnn_status (*forward)(void *model, const void *const *inputs, void *const *outputs);
	gnn_status (*forward_host)(void *model, const void *const *inputs, void *const *outputs);
	void (*destroy)(void *model);
	/* the model's training step (NULL when compiled without one): see
	** gnn_prog_train_step */
	const struct gnn_train_prog *train;
	/* graph inputs, and bind for several (bind takes a model of one) */
	int ngraphs;
	gnn_status (*bind_graphs)(void *model, gnn_graph *const *g, int n);
} gnn_model_desc;

/*
** Tuning builds (gnncc --tune compiles one to measure) also export
** NAME_tune: forward's kernels in launch order, each compiled under
** ncand[k] candidate schedules (0 is the reference).  select picks the
** candidate forward runs for kernel k; time runs kernel k alone reps
** times (after a forward with the same inputs) and gives the median in
** microseconds; arch names the device ("sm_90"), NULL on the cpu.
*/
typedef struct gnn_tune_desc {
	int nkernels;
	const int *ncand;
	void (*select)(void *model, int kernel, int cand);
	gnn_status (*time)(void *model, int kernel, int reps, double *us);
	const char *(*arch)(void);
} gnn_tune_desc;

/* optim.c: training's optimizers */

/*
** torch.optim's SGD, Adam and AdamW (PyTorch 2.x, the single-tensor path:
** maximize, amsgrad, foreach and fused off) over float32 tensors, one
** fused launch a step for a whole parameter group, on any device (the
** cpu device runs it as a loop).  Every device gives the same bits: each
** float operation is rounded on its own, in torch's order (runtime/optim.h).
**   SGD:  g = grad + wd*p; with momentum, buf = g at the first step, else
**         buf = momentum*buf + (1 - dampening)*g, and g = g + momentum*buf
**         (nesterov) or buf; p -= lr*g.
**   Adam: g = grad + wd*p; m = lerp(m, g, 1 - beta1);
**         v = beta2*v + (1 - beta2)*g*g; p -= lr/(1 - beta1^t) * m /
**         (sqrt(v)/sqrt(1 - beta2^t) + eps).
**   AdamW: p *= 1 - lr*wd, then Adam without the wd term.
** Fields an optimizer does not use are ignored.  Checked as torch checks
** them (GNN_ERR_ARG): lr, eps, weight_decay, momentum >= 0, betas in
** [0, 1), nesterov only with momentum > 0 and dampening 0; and finite.
*/
typedef enum gnn_optim_kind { GNN_OPTIM_SGD = 1, GNN_OPTIM_ADAM, GNN_OPTIM_ADAMW } gnn_optim_kind;
typedef struct gnn_optim_config {
	gnn_optim_kind kind;
	double lr, weight_decay;
	double momentum, dampening;  /* SGD */
	int nesterov;                /* SGD */
	double beta1, beta2, eps;    /* Adam, AdamW */
} gnn_optim_config;
typedef struct gnn_optim gnn_optim;
struct gnn_device;   /* a device (gnn_device_cpu, gnn_device_cuda): program.c below */
/*
** n float32 tensors (n >= 0): param[i], updated in place, and grad[i],
** size[i] >= 0 elements each, in dev's memory (host memory for
** gnn_device_cpu; a device that can tell checks that they are its own),
** NULL only when empty.  The tensors must not overlap.  The optimizer
** keeps its state on the device, zeroed (SGD's momentum buffers when
** momentum != 0; Adam's exp_avg and exp_avg_sq), and a table of the
** tensors there, so that a step is one launch.  dev and stream stay the
** caller's and must outlive the optimizer.
*/
gnn_status gnn_optim_create(const struct gnn_device *dev, void *stream, int n, float *const *param,
	const float *const *grad, const int64_t *size, const gnn_optim_config *cfg, gnn_optim **out);
/* One step (t += 1): a launch on the stream, asynchronous on a device
** with memory of its own (synchronize before reading param on the host).
** GNN_ERR_CUDA if the launch fails; t is then not advanced. */
gnn_status gnn_optim_step(gnn_optim *o);
/* New hyper-parameters (a learning-rate schedule), keeping the state and
** t; the kind cannot change.  A bad cfg changes nothing. */
gnn_status gnn_optim_set(gnn_optim *o, const gnn_optim_config *cfg);
int64_t gnn_optim_steps(const gnn_optim *o);   /* t: steps taken */
void gnn_optim_destroy(gnn_optim *o);          /* NULL is a no-op */

/* init.c: parameter init */

/*
** dst[t] = (2u - 1) * bound for t < n, u = gnn_philox_uniform(seed, 0,
** 0x80000000 | index, t) (runtime/philox.h: init's streams, bit 31 set),
** in float: (2.0f*u - 1.0f) * (float)bound, uniform in [-bound, bound).
** index is the parameter's; dst[t] depends on (seed, index, t) only, so
** a prefix does not depend on n, and device code can draw the same.
*/
void gnn_init_uniform(float *dst, int64_t n, double bound, uint64_t seed, uint32_t index);

/*
** program.c: the host half of every compiled model.  A generated file
** holds its model as tables -- buffers with their sizes as polynomials in
** the graph's symbols (N, E, derived sizes), parameters, the bind-time
** graph work as steps, inputs and outputs -- plus its kernels; the runtime
** walks the tables to create, load, bind, run and destroy it, through a
** device (gnn_device_cpu, gnn_device_cuda), which is the only code that
** calls a device API.  Generated code fills these structures; nothing
** else needs them.
*/
typedef struct gnn_device gnn_device;
extern const gnn_device gnn_device_cpu;
extern const gnn_device gnn_device_cuda;       /* runtime/device_cuda.c */
extern const gnn_device gnn_device_cuda_emu;   /* the same, on the emulated device */

/* what a buffer holds, and so when it is made */
enum {
	GNN_BUF_PARAM = 1,   /* a parameter: create allocates, load fills */
	GNN_BUF_LOAD,        /* computed from parameters (load-time steps) */
	GNN_BUF_BIND,        /* computed from the graph (bind steps) */
	GNN_BUF_FWD,         /* computed by forward: in the arena */
	GNN_BUF_INPUT,       /* a forward input: the caller's memory */
};
/* buffer flags */
enum {
	GNN_BUF_DEVICE = 1,  /* forward reads it: a device copy where memory is separate */
	GNN_BUF_FILL = 2,    /* a parameter starting at init (else zero) */
	GNN_BUF_UNIFORM = 4, /* init_weights draws it from U(-init, init) */
	/* GNN_BUF_FWD, an output alone in its slot: where memory is separate
	 * it takes none of the arena; forward writes it into the caller's
	 * buffer, or into one made by the first forward that cannot */
	GNN_BUF_LAZY = 8,
};
typedef struct gnn_buffer {
	const char *name;    /* the IR value it holds */
	unsigned char kind, dtype, flags;
	int size;            /* element count: offset of its polynomial in poly[] */
	int share;           /* GNN_BUF_FWD: the buffer whose memory it reuses, or -1 */
	double init;
} gnn_buffer;

/* bind steps, in order (load steps are all GNN_STEP_KERNEL) */
enum {
	GNN_STEP_KERNEL = 1,     /* kernel(m, arg) computes buffer out */
	GNN_STEP_ADD_SELF_LOOPS, /* graph out from graph in */
	GNN_STEP_REMOVE_SELF_LOOPS,
	GNN_STEP_ADD_REMAINING_SELF_LOOPS,   /* fill: the new loops' weight */
	GNN_STEP_DERIVE,         /* sym[arg] = edges of graph in - poly[size] */
	GNN_STEP_SRC,            /* buffer out from graph in */
	GNN_STEP_DST,
	GNN_STEP_BATCH,
	GNN_STEP_IN_DEGREE,
	GNN_STEP_OUT_DEGREE,
	GNN_STEP_EDGE_WEIGHT,
	GNN_STEP_GCN_NORM,
	GNN_STEP_SEGPLAN,        /* segment out: index buffer in grouped into poly[size] rows */
	GNN_STEP_EDGEPLAN,       /* segment out: graph in's CSR by target (rowptr, perm) */
	GNN_STEP_COUNTS,         /* segment out: poly[size] counters (a serial scatter's) */
	GNN_STEP_SPLITPLAN,      /* segment out: split plan of segment in's rowptr, c0 = arg */
	GNN_STEP_SPLITBUF,       /* segment out: scratch of arg floats per item of split plan in */
	GNN_STEP_SCRATCH,        /* segment out: device scratch of arg floats, or fewer: in floats a
	                          * row of poly size rows when in > 0 (a split-K GEMM's parts) */
	GNN_STEP_ALLOC,          /* buffer out, allocated: a training step's once-time value
	                          * (forward computes it; gnncc's invariant pass) */
	GNN_STEP_PERMUTE,        /* segment out: buffer arg's rows of fill elements (an edge
	                          * array) in the order of segment plan in, of poly[size] rows
	                          * (the walks read it in memory's order, at their position k) */
	GNN_STEP_PERMUTE_INDEX,  /* the same of int64 index buffer arg (a gather's src), as int32
	                          * where the bound graphs' node ids fit (gnn_instance.ix32) */
};
typedef struct gnn_step {
	unsigned char op;
	int out, in;             /* buffer, graph or segment indices, by op */
	int arg, size;
	double fill;
} gnn_step;

typedef struct gnn_program gnn_program;
/* A model's state; a generated model's struct starts with it. */
typedef struct gnn_instance {
	const gnn_program *prog;
	int64_t *sym;            /* the bound graph's sizes */
	void **b;                /* per buffer: what kernels read (device side) */
	void **h;                /* per buffer: host storage */
	size_t *nb;              /* bytes of each h[] */
	gnn_graph **g;           /* graph values; g[0] is the bound graph (borrowed) */
	void **seg, **hseg;      /* segment plans: device side, host */
	size_t *segnb;
	void **stage;            /* forward_host: inputs then outputs */
	int *sel;                /* tuning: the candidate each kernel runs */
	void *stream;
	unsigned char *arena;    /* forward values, device copies, staging */
	size_t arenasize;
	size_t size_;             /* bytes of the model's struct */
	int bound;
	/* bind on the device (program.c): the graph values, then a byte per
	 * segment plan that bind made in device memory of its own; NULL
	 * when bind works on the host */
	struct gnn_dgraph *dg;
	/* forward's graph, in-place outputs and page-locked staging
	 * (program.c); NULL until the first forward */
	struct gnn_fwd *fwd;
	/* training (train.c): the step's state, created by the first
	 * train_step; stale: the device's weights have moved on since the
	 * host copies and the load-time values were made */
	struct gnn_trainer *train;
	int stale;
	/* forward may keep its once-time values (a training step's work on
	 * the graph and its constant inputs) from its last run: set by the
	 * trainer for a step with the same bind, inputs and loaded weights,
	 * cleared by bind;
	 * 0 (any other caller) computes them */
	int keep;
	/* this bind's number, unique in the process (0: never bound): what
	 * the trainer compares, since a graph's address may come again */
	uint64_t bindgen;
	/* this bind's node ids fit int32: the plan-order index copies
	 * (GNN_STEP_PERMUTE_INDEX) are int32, else int64; kernels take it */
	int ix32;
	/* binds that succeeded, and arenas allocated (gnn_prog_counters) */
	int64_t nbinds, narenas;
	/* weights loaded or initialized so far: the step's once-time values
	 * may read parameters that training leaves alone (GIN's eps) */
	uint64_t weightgen;
	/* the vendor libraries' handles (gnncc --vendor): the generated
	 * program's vendor hook makes them at create, on the model's
	 * stream, and frees them at destroy; NULL without */
	void *vendor;
} gnn_instance;

struct gnn_program {
	const char *name;
	const gnn_device *dev;
	int nsym;
	const int64_t *poly;     /* polynomials: nterm, then per term coef, deg, syms */
	int nbuf;
	const gnn_buffer *buf;
	int ngraph, nseg;
	const unsigned char *segdev;   /* per segment: forward reads it (2: scratch, device only;
	                                * 3: only a plan's row starts, not its order) */
	int nstep, nload;
	const gnn_step *step, *load;
	int nbound;              /* graph inputs: g[0..nbound), bound in the model's order */
	/* per graph input 8 ints: the symbol its nodes, edges, graphs and
	 * source nodes (a relation's; else the nodes) each set, or -1; then
	 * for each the polynomial it must equal instead, or -1 */
	const int *bound;
	int ninput, noutput, nparam;
	const int *input, *output, *param;   /* buffer indices */
	const int *outshape;     /* the outputs' dims in order: polynomials */
	const gnn_tensor_info *inputs, *outputs, *params;
	int ntune;               /* tuning builds: forward kernels */
	void (*kernel)(gnn_instance *m, int step);   /* a bind- or load-time kernel */
	gnn_status (*run)(void *m, const void *const *in, void *const *out);
	void (*launch)(gnn_instance *m, int kernel); /* tuning: forward kernel k alone */
	/* a build that calls vendor libraries (gnncc --vendor): open 1 makes
	 * m->vendor's handles after the stream, open 0 frees what there is;
	 * NULL for the rest */
	gnn_status (*vendor)(gnn_instance *m, int open);
	/* per segment: for a schedule's scratch (segdev 2), the forward
	 * kernel that alone reads and writes it, by its first instruction,
	 * else -1.  Forward's kernels run one after another, so the scratch
	 * of different kernels shares the arena's memory.  NULL: none does. */
	const int *segkern;
	/* per segment: for a kernel's scratch, how many of the forward slots
	 * (GNN_BUF_FWD with share -1, in buffer order) it may not overlap:
	 * those up to the last one live while its kernel runs (memplan's
	 * liveness); the slots after hold nothing live then.  -1, or NULL:
	 * it lies past them all. */
	const int *segfloor;
	/* per segment with a floor: which of the forward slots below it are
	 * live while its kernel runs (bit n: the n-th; the 64th on have no
	 * bit and count as live); the scratch lies in the first gap between
	 * them where it fits, else past the floor.  NULL: all are live. */
	const unsigned long long *seglive;
};

gnn_status gnn_prog_create(const gnn_program *p, size_t size, gnn_instance **out);
/* the rest take the model (a gnn_instance) as void *, as the descriptors do */
void gnn_prog_destroy(void *m);
gnn_status gnn_prog_load(void *m, const char *path);
gnn_status gnn_prog_bind(void *m, gnn_graph *g);
/* a model with several graph inputs (the relations of a heterogeneous
** graph) binds one graph per input, in the model's order; each is
** checked against its input's sizes.  gnn_prog_bind(m, g) is
** gnn_prog_bind_graphs(m, &g, 1). */
gnn_status gnn_prog_bind_graphs(void *m, gnn_graph *const *g, int n);
/* forward's prologue (checks, inputs) and epilogue (outputs, errors) */
gnn_status gnn_prog_begin(gnn_instance *m, const void *const *in, void *const *out);
/* forward issues its launches while this says so: `while (gnn_prog_issue(m))
** { launches }` runs them once, into a graph capture or directly, or not
** at all when the forward's graph was replayed (program.c) */
int gnn_prog_issue(gnn_instance *m);
gnn_status gnn_prog_end(gnn_instance *m, void *const *out);
/* forget forward's captured graph (a vendor call failed while it was
** captured, so the graph lacks it): the next forward captures anew */
void gnn_prog_graph_drop(gnn_instance *m);
gnn_status gnn_prog_run_host(void *m, const void *const *in, void *const *out);
gnn_status gnn_prog_sync(void *m);
gnn_status gnn_prog_output_shape(void *m, int i, int64_t *shape);
/* input i's array against its declaration and the bound graph's sizes:
** GNN_ERR_DTYPE or GNN_ERR_SHAPE naming both ("GCN: input 'x': expected
** f32 [N, 1433] = [2708, 1433], got f64 [2708, 1433]") */
gnn_status gnn_prog_check_input(void *m, int i, const gnn_array *a);
/* tuning builds */
void gnn_prog_tune_select(void *m, int k, int c);
gnn_status gnn_prog_tune_time(void *m, int k, int reps, double *us);
const char *gnn_prog_arch(const gnn_program *p);

/*
** train.c: training a compiled model (docs/training.md).  A model
** compiled with a training step has a gnn_train_prog: the step's program
** (inputs: the model's tensor inputs, the train item's, then the dropout
** key; outputs: the loss, each trained parameter's gradient, each
** updated buffer's new value), which model parameter each gradient and
** update belongs to, and the train item's settings.
*/
typedef struct gnn_train_prog {
	const gnn_program *prog;
	int nparam;
	const int *param;        /* per gradient: the model's parameter index */
	int nupdate;
	const int *update;       /* per updated buffer: the model's parameter index */
	int ninputs;             /* the step's inputs after the model's (labels, mask) */
	const gnn_tensor_info *inputs;
	gnn_optim_config cfg;    /* the train item's optimizer */
	uint64_t seed;
	int64_t epochs;
} gnn_train_prog;
/* One step on the bound graph: forward in training mode, the loss, its
** gradients, the optimizer's update of the model's weights in place (and
** of the buffers that training updates).  in: the model's tensor inputs
** then the step's (device pointers for cuda, as forward).  *loss gets the
** loss; one that is not finite fails the step (GNN_ERR_RANGE) and the
** weights are unchanged.  The dropout masks draw from (seed, step). */
gnn_status gnn_prog_train_step(void *model, const gnn_train_prog *tp, const void *const *in, float *loss);
/* the optimizer's settings and the dropout seed for the steps to come
** (the optimizer's state is kept) */
gnn_status gnn_prog_train_config(void *model, const gnn_train_prog *tp, const gnn_optim_config *cfg, uint64_t seed);
/* The step keeps what it computes from the graph and its inputs alone
** (but the dropout key) from one step to the next -- GIN's sum of x over
** neighbours, SAGE's mean -- while the bind and the input pointers stay
** the same (and no weights were loaded: the parameters that training
** leaves alone may take part).  After writing new values into the same input buffers, call
** this: the next step computes them again. */
gnn_status gnn_prog_train_inputs_changed(void *model);
/* every parameter as the model declares its init (PyG's), from seed */
gnn_status gnn_prog_init(void *model, uint64_t seed);
/* the weights as safetensors with the parameters' names (PyG's) */
gnn_status gnn_prog_save(void *model, const char *path);
/* n bytes of host memory copied into the model's device's memory (host
** memory for the cpu target), for train_step's inputs; free with
** gnn_prog_free_device */
gnn_status gnn_prog_to_device(void *model, const void *src, size_t n, void **out);
/* n bytes of the model's device memory (after the model's work on its
** stream) into host memory dst */
gnn_status gnn_prog_from_device(void *model, void *dst, const void *src, size_t n);
void gnn_prog_free_device(void *model, void *p);

/* What a model's runtime has done since create, counted where it
** happens: the work a graph of new sizes may cost.  Nothing is compiled
** at run time (the model and its training step are compiled code; a bind
** walks the program's compiled bind plan on the graph), so what a new
** shape can cost is a bind and, when the graph needs more memory than
** the arena has, a new arena.  Mini-batch training binds a graph of the
** batches' capacity first (docs/sampling.md): then every batch is a bind
** and no arena is allocated again. */
typedef struct gnn_counters {
	int64_t binds;             /* the model's binds that succeeded */
	int64_t arena_allocs;      /* forward's arena allocated (at a bind) */
	size_t arena_bytes;        /* its size now */
	int64_t steps;             /* training steps taken */
	int64_t step_binds;        /* the training step's program bound to the model's graph */
	int64_t step_arena_allocs; /* the step's arena allocated */
	size_t step_arena_bytes;
} gnn_counters;
gnn_status gnn_prog_counters(const void *model, gnn_counters *out);

/* A generated model's struct and the parts of its API that are the same
** for every model (forward's signature is the model's own). */
#define GNN_MODEL(NAME, PROG) \
	struct NAME { gnn_instance rt; }; \
	gnn_status NAME##_create(NAME **m) { return gnn_prog_create(&PROG, sizeof(NAME), (gnn_instance **)m); } \
	gnn_status NAME##_load_weights(NAME *m, const char *path) { return gnn_prog_load(m, path); } \
	gnn_status NAME##_init_weights(NAME *m, uint64_t seed) { return gnn_prog_init(m, seed); } \
	gnn_status NAME##_save_weights(NAME *m, const char *path) { return gnn_prog_save(m, path); } \
	gnn_status NAME##_bind(NAME *m, gnn_graph *graph) { return gnn_prog_bind(m, graph); } \
	gnn_status NAME##_bind_graphs(NAME *m, gnn_graph *const *graphs, int n) \
		{ return gnn_prog_bind_graphs(m, graphs, n); } \
	gnn_status NAME##_synchronize(NAME *m) { return gnn_prog_sync(m); } \
	void NAME##_destroy(NAME *m) { gnn_prog_destroy(m); } \
	static gnn_status NAME##_d_create(void **m) { return gnn_prog_create(&PROG, sizeof(NAME), (gnn_instance **)m); }

/*
** Loads a safetensors file into parameter buffers: every parameter of
** params must be present with its dtype and shape (a float32 parameter
** also accepts an F64 tensor, narrowed; an i64 one accepts I32), and the
** file must hold nothing else.  The message names each offending
** parameter (all of them, one per line).  dst[i] receives params[i]'s
** data (host, the declared dtype, C order).  On failure no dst is
** modified: the model keeps its previous weights.
*/
gnn_status gnn_load_params(const char *path, const gnn_tensor_info *params, int n,
	void *const *dst);
/*
** Saves parameters as a safetensors file that gnn_load_params (and the
** safetensors package) reads back: params[i] (its name, dtype F32, F64,
** I64, I32 or BOOL, and a concrete shape: no -1) with data from host
** memory src[i] (C order; NULL only for an empty tensor).  The header
** lists the tensors in the given order; their data is laid out by
** descending element size, in the given order within a size, so that
** every tensor is aligned with no gap (all-F32 parameters: the given
** order).  Written under a temporary name in path's directory and
** renamed over path: a failure never clobbers path nor leaves a partial
** file.
*/
gnn_status gnn_save_params(const char *path, const gnn_tensor_info *params, int n,
	const void *const *src);

/* For applications: on failure print the message to stderr and exit(1). */
void gnn_check_(gnn_status s, const char *expr, const char *file, int line);
#define gnn_check(expr) gnn_check_((expr), #expr, __FILE__, __LINE__)
/* For generated code: set the thread's message and return s. */
gnn_status gnn_error(gnn_status s, const char *fmt, ...)
#if defined(__GNUC__)
	__attribute__((format(printf, 2, 3)))
#endif
	;

/* sample.c: neighbour sampling for mini-batch training (docs/sampling.md) */

/*
** PyG's NeighborLoader over a graph's in-edges: a batch takes the next
** batch_size seed nodes (in the given order, or shuffled per epoch), then
** for each hop i, for each node the previous hop added (the seeds first),
** draws min(fanout[i], in-degree) of its in-edges uniformly without
** replacement.  The batch's subgraph numbers the seeds 0..S-1, then the
** new nodes in order of first appearance; its edges (sampled src ->
** frontier node, in the subgraph's numbering) go in the order drawn.
** Each draw is Philox4x32-10 of (seed, batch number, hop, node, draw), so
** a batch is the same for any thread count and with or without the
** producer thread, which samples batch i+1 while the caller trains on
** batch i.  Capacities are fixed by batch_size and the fanouts; the
** buffers are allocated once, through the allocator hook.
*/
#define GNN_SAMPLER_MAX_HOPS 8
#define GNN_SAMPLER_MAX_ROWS 8
#define GNN_SAMPLER_MAX_FANOUT 65535
typedef struct gnn_sampler gnn_sampler;
typedef struct gnn_sampler_config {
	int64_t batch_size;      /* seeds a batch (the last of an epoch may have fewer), >= 1 */
	int nhops;               /* 1..GNN_SAMPLER_MAX_HOPS */
	int64_t fanout[GNN_SAMPLER_MAX_HOPS];   /* 1..GNN_SAMPLER_MAX_FANOUT each */
	int shuffle;             /* the seeds in a new order each epoch (from seed, epoch) */
	uint64_t seed;
	int threads;             /* threads that sample a batch: 0 or 1 is the filling thread alone */
	int prefetch;            /* a producer thread fills the next batch ahead of the caller */
} gnn_sampler_config;
/* One batch.  The pointers are the sampler's: valid until the second
** gnn_sampler_next after the one that returned it (so a model bound to
** the previous batch's graph may be bound to this one's before that
** graph goes). */
typedef struct gnn_batch {
	int64_t epoch, index;    /* index-th batch of epoch (from 0) */
	int64_t num_nodes, num_edges, num_seeds;
	const int64_t *node;     /* [num_nodes] the graph's node ids; the seeds first */
	const int64_t *edge_index; /* [2, num_edges] sources, then targets, local ids */
	const int64_t *edge_id;  /* [num_edges] the graph's edge each one is (its position) */
	const uint8_t *mask;     /* [num_nodes] 1 for the seeds, 0 after */
	gnn_graph *graph;        /* the subgraph as a graph, to bind */
	const void *rows[GNN_SAMPLER_MAX_ROWS];   /* gnn_sampler_add_rows' arrays' rows of node[] */
} gnn_batch;
/*
** A sampler of g (borrowed: it must outlive the sampler) from the seed
** nodes seeds[0..nseeds) (copied; distinct, each in [0, N)).  Bad
** configs are GNN_ERR_ARG naming the field, seeds out of range or
** repeated GNN_ERR_RANGE naming the first, capacities whose bytes
** overflow GNN_ERR_SHAPE.
*/
gnn_status gnn_sampler_create(const gnn_graph *g, const int64_t *seeds, int64_t nseeds,
	const gnn_sampler_config *cfg, gnn_sampler **out);
/* Gathers rows of data (N rows of row_bytes bytes, host memory,
** borrowed) into each batch: batch->rows[k] holds the rows of its nodes,
** k being the k-th call.  Before the first gnn_sampler_next. */
gnn_status gnn_sampler_add_rows(gnn_sampler *s, const void *data, size_t row_bytes);
/* The next batch, after the last of an epoch the first of the next; with
** prefetch, ready or waited for, and the one after starts. */
gnn_status gnn_sampler_next(gnn_sampler *s, const gnn_batch **out);
int64_t gnn_sampler_batches(const gnn_sampler *s);   /* per epoch */
/* The most nodes and edges a batch can have */
void gnn_sampler_capacity(const gnn_sampler *s, int64_t *nodes, int64_t *edges);
/* A graph of that many nodes and edges (no self loops when it has two
** nodes or more; the caller destroys it): bound to a model once before
** the batches, it sizes the model's memory for all of them, so that no
** batch's bind allocates its arena again. */
gnn_status gnn_sampler_capacity_graph(const gnn_sampler *s, gnn_graph **out);
void gnn_sampler_destroy(gnn_sampler *s);   /* NULL is a no-op; stops the producer */

/* hsample.c: neighbour sampling over a heterogeneous graph, temporal
** where edges carry times (docs/sampling.md#heterogeneous-graphs) */

/*
** PyG's NeighborLoader over HeteroData: seeds of one node type; hop i
** expands the nodes of every type that hop i-1 added (the seeds first):
** for each relation in order, each of its target type's frontier nodes
** draws min(fanout[r][i], eligible in-edges of r) uniformly without
** replacement.  Each type numbers its nodes in order of first appearance
** (hop, relation, node, draw); each relation's edges are [2, E_r] in
** those numberings, in the order drawn.  With edge times, sampling is
** temporal: every seed has a time and its own subgraph (PyG's disjoint
** subgraphs), and an edge is eligible only when its time is at most the
** seed's (time_attr, temporal_strategy="uniform"), at every hop.
*/
#define GNN_HSAMPLER_MAX_TYPES 16
#define GNN_HSAMPLER_MAX_RELS 32
typedef struct gnn_hetero_desc {
	int num_types;                     /* 1..GNN_HSAMPLER_MAX_TYPES */
	const int64_t *num_nodes;          /* [num_types] */
	int num_rels;                      /* 1..GNN_HSAMPLER_MAX_RELS */
	const gnn_graph *const *rel;       /* [num_rels]: gnn_graph_relation_from_edge_index's (borrowed) */
	const int *src_type, *dst_type;    /* [num_rels] */
	const int64_t *const *edge_time;   /* NULL, or [num_rels]: NULL (untimed) or [E_r] (borrowed) */
} gnn_hetero_desc;
typedef struct gnn_hsampler gnn_hsampler;
typedef struct gnn_hsampler_config {
	int64_t batch_size;      /* >= 1 */
	int nhops;               /* 1..GNN_SAMPLER_MAX_HOPS */
	/* [relation][hop]: 0..GNN_SAMPLER_MAX_FANOUT (0: none drawn) */
	int64_t fanout[GNN_HSAMPLER_MAX_RELS][GNN_SAMPLER_MAX_HOPS];
	int shuffle;
	uint64_t seed;
	int prefetch;            /* a producer thread fills the next batch */
	int threads;             /* threads that sample a batch: 0 or 1 is the filling thread alone */
} gnn_hsampler_config;
/* One batch; its pointers live as gnn_batch's do. */
typedef struct gnn_hbatch {
	int64_t epoch, index, num_seeds;
	int64_t num_nodes[GNN_HSAMPLER_MAX_TYPES];
	const int64_t *node[GNN_HSAMPLER_MAX_TYPES];   /* each type's global ids; the seeds first */
	/* temporal: the seed (0..num_seeds-1) whose subgraph holds each node;
	** else NULL */
	const int64_t *root[GNN_HSAMPLER_MAX_TYPES];
	int64_t num_edges[GNN_HSAMPLER_MAX_RELS];
	const int64_t *edge_index[GNN_HSAMPLER_MAX_RELS];   /* [2, E_r] local ids of src_type, dst_type */
	const int64_t *edge_id[GNN_HSAMPLER_MAX_RELS];      /* [E_r] positions in the relation */
	gnn_graph *graph[GNN_HSAMPLER_MAX_RELS];            /* the relations, to bind */
	const uint8_t *mask;     /* [num_nodes[seed type]] 1 for the seeds */
	const int64_t *seed_index;   /* [num_seeds] each seed's position in seeds[] */
	const int64_t *seed_time;    /* temporal: [num_seeds] their times; else NULL */
	const void *rows[GNN_SAMPLER_MAX_ROWS];   /* gnn_hsampler_add_rows' rows of its type's nodes */
} gnn_hbatch;
/*
** A sampler of h (its arrays copied, its graphs and times borrowed) from
** seeds[0..nseeds) of seed_type; seed_time[0..nseeds) their times
** (copied), required when some relation is timed and refused otherwise.
** Untimed, seeds are distinct; timed, a node may be a seed at several
** times.  Errors as gnn_sampler_create's.
*/
gnn_status gnn_hsampler_create(const gnn_hetero_desc *h, int seed_type, const int64_t *seeds,
	const int64_t *seed_time, int64_t nseeds, const gnn_hsampler_config *cfg, gnn_hsampler **out);
/* data: num_nodes[type] rows of row_bytes (borrowed) gathered per batch
** into batch->rows[k], k being the k-th call */
gnn_status gnn_hsampler_add_rows(gnn_hsampler *s, int type, const void *data, size_t row_bytes);
gnn_status gnn_hsampler_next(gnn_hsampler *s, const gnn_hbatch **out);
int64_t gnn_hsampler_batches(const gnn_hsampler *s);   /* per epoch */
/* the most nodes a batch has of each type, edges of each relation */
void gnn_hsampler_capacity(const gnn_hsampler *s, int64_t *nodes, int64_t *edges);
/* out[0..num_rels): relations of those sizes (the caller destroys them),
** to bind once before the batches */
gnn_status gnn_hsampler_capacity_graphs(const gnn_hsampler *s, gnn_graph **out);
/* Batch b of s written into dir as .npy files for inspection, k its
** number: bK_meta.npy (epoch, index, seeds), bK_seed_index.npy,
** bK_mask.npy, per type t bK_node_t.npy, per relation r bK_ei_r.npy
** [2, E_r] and bK_eid_r.npy, and temporal bK_seed_time.npy and
** bK_root_t.npy (docs/sampling.md; tests/sampler/hcheck.py reads them) */
gnn_status gnn_hsampler_save_batch(const gnn_hsampler *s, const gnn_hbatch *b, const char *dir, int64_t k);
void gnn_hsampler_destroy(gnn_hsampler *s);

/* synth.c */

/*
** Synthetic graphs shaped like real datasets, for benchmarks and
** autotuning. The node of rank r (1-based) weighs r^-alpha: Zipf over
** ranks to within 0.4% (alpha 0 is uniform, 1 is Zipf's law; real Cora's
** hubs are nearer alpha 0.6's). Each edge draws its source by weight from
** one random ranking of the nodes and its target from another, so in- and
** out-degrees follow power laws, hubs have random ids, and in-hubs are
** other nodes than out-hubs. No self loops when nodes >= 2 (a target equal
** to its source is drawn again); with one node every edge is 0 -> 0.
** Repeated edges are kept. Edges are in the order drawn (not sorted). The
** output depends only on the spec and is the same on every platform.
** Limits: nodes < 2^32, 0 <= alpha <= 8 (rounded to 1/65536).
*/
typedef struct gnn_synth_spec {
	int64_t nodes, edges;
	int64_t features;   /* for gnn_synth_features */
	double alpha;
	uint64_t seed;
} gnn_synth_spec;
/* What both calls check first: GNN_ERR_ARG for NULL, a negative size,
** edges without nodes or alpha out of range, GNN_ERR_SHAPE for too many
** nodes or an output whose byte size overflows. */
gnn_status gnn_synth_check(const gnn_synth_spec *s);
/* edge_index: 2 * edges int64s, caller-owned, [2, edges] row major (row 0
** sources, row 1 targets); NULL only when edges is 0. Tables of about 8
** bytes a node go through the allocator hook for the duration of the
** call (GNN_ERR_MEM when it fails). */
gnn_status gnn_synth_edges(const gnn_synth_spec *s, int64_t *edge_index);
/* x: nodes * features floats, [nodes, features], uniform in [-1, 1) (in
** steps of 2^-23), from the seed alone: the same x whatever edges and
** alpha are. NULL only when nodes * features is 0. */
gnn_status gnn_synth_features(const gnn_synth_spec *s, float *x);
/* out: n integers uniform in [lo, hi) (hi - lo <= 2^32), from (seed,
** stream) alone: the same on every platform; another stream, other
** numbers (a relational table's columns: times, keys). */
gnn_status gnn_synth_ints(uint64_t seed, uint64_t stream, int64_t n, int64_t lo, int64_t hi, int64_t *out);

/* Dense kernels for generated code (gemm.c) */

/*
** Single-precision C = A @ B for the cpu target's dense transforms: A is
** M x K (row i at A + i*lda), B is K x N, C is M x N (row i at C + i*ldc).
** B is packed once (gnn_sgemm_pack), then the generated code's threads
** call gnn_sgemm_rows on disjoint row ranges; the library starts no
** threads, allocates nothing and keeps no mutable state but the chosen
** instruction-set path, so calls from many threads at once are safe.
**
** Bitwise contract: each C[i][n] is one multiply-add chain over k = 0, 1,
** ..., K-1 in increasing order, starting from +0.0 (from C's old value
** with GNN_SGEMM_ACC). The avx512 and avx2 paths fuse each step (FMA);
** the generic path fuses only where the compiler has a fast fmaf, and
** otherwise multiplies then adds, in the same order. Hence, on one path,
** the bits depend neither on kc nor on how rows are split across calls
** or threads, and gnn_sgemm_rows_sparse gives gnn_sgemm_rows's bits when
** B is finite (and, with GNN_SGEMM_ACC, C holds no -0.0), since a step
** whose a is zero then adds an exact zero. K == 0 gives C = 0 (C is left
** as it is with GNN_SGEMM_ACC); N == 0 or m1 <= m0 does nothing.
**
** Path: the widest of avx512, avx2 (with FMA) and generic that the CPU
** has, chosen on first use. GNN_CPU_ISA=generic|avx2|avx512, read then,
** forces a lower one; a value that is unknown or above the CPU's is
** ignored. Off x86-64 the path is always generic.
*/
#define GNN_SGEMM_ACC 1   /* add to C instead of overwriting it */

/* Size of B's packed form in floats (0 when K or N is 0): K times N
** rounded up to 16. Bp is best aligned to 64 bytes; any float alignment
** works. */
int64_t gnn_sgemm_packed_floats(int64_t K, int64_t N);
/* Packs B, element (k, n) at B[k*sk + n*sn] (sk = N, sn = 1 for a K x N
** row-major B; sk = 1, sn = K for W^T with W N x K), into Bp. */
void gnn_sgemm_pack(float *Bp, const float *B, int64_t K, int64_t N, int64_t sk, int64_t sn);
/* C[i][n] (= or +=, flags GNN_SGEMM_ACC) sum_k A[i*lda + k] * B[k][n] for
** m0 <= i < m1 and all n < N. kc: the K-block length, 0 for the library's
** choice; every kc >= 1 gives the same bits. Serial. */
void gnn_sgemm_rows(int64_t m0, int64_t m1, int64_t K, int64_t N, const float *A, int64_t lda,
                    const float *Bp, float *C, int64_t ldc, int64_t kc, int flags);
/* The same product skipping A's zeros (-0.0 included; NaN is not a zero),
** for very sparse A such as bag-of-words features. Serial. */
void gnn_sgemm_rows_sparse(int64_t m0, int64_t m1, int64_t K, int64_t N, const float *A,
                           int64_t lda, const float *Bp, float *C, int64_t ldc, int flags);
/* Whether the sparse form pays for this M x K A: counts the zeros of at
** most 16 rows spread evenly over M (so it reads at most 16 K floats). */
int gnn_sgemm_sparse_pays(const float *A, int64_t M, int64_t K, int64_t lda);
/* The path gnn_sgemm_* take here: "avx512", "avx2" or "generic". */
const char *gnn_sgemm_isa(void);
/* What generated code calls: gnn_sgemm_rows and gnn_sgemm_rows_sparse
** for B as it is in memory, row-major K x N with rows ldb floats apart
** (ldb >= N), so a model keeps no packed copy of its weights: the
** kernels read each 16-column panel of B in place, masked at N, and never
** past B's last element. Same contract, and on one path the same bits as
** the packed forms. */
void gnn_sgemm(int64_t m0, int64_t m1, int64_t K, int64_t N, const float *A, int64_t lda,
               const float *B, int64_t ldb, float *C, int64_t ldc, int64_t kc, int flags);
void gnn_sgemm_sparse(int64_t m0, int64_t m1, int64_t K, int64_t N, const float *A, int64_t lda,
                      const float *B, int64_t ldb, float *C, int64_t ldc, int flags);
/* The same, then bias[n] added to every row of C while a block of rows is
** in cache (a Linear's bias, readfold's GEMM epilogue): each element is
** the product's chain and then one float add, as an add of its own
** computes it, so the bits are the same. */
void gnn_sgemm_bias(int64_t m0, int64_t m1, int64_t K, int64_t N, const float *A, int64_t lda,
                    const float *B, int64_t ldb, const float *bias, float *C, int64_t ldc, int64_t kc,
                    int flags);
void gnn_sgemm_sparse_bias(int64_t m0, int64_t m1, int64_t K, int64_t N, const float *A, int64_t lda,
                           const float *B, int64_t ldb, const float *bias, float *C, int64_t ldc, int flags);

/* gnn_sgemm (sp: gnn_sgemm_sparse) with A and C stored as adt and cdt:
** GNN_F32, or GNN_BF16 / GNN_F16 (16-bit words, --precision): A's rows
** read through the exact 16-bit to float conversion, C's rounded to
** nearest even where stored, the float path's bits in between. Serial.
** And the sparse form's test on such an A. */
void gnn_hgemm(int64_t m0, int64_t m1, int64_t K, int64_t N, const void *A, int adt, int64_t lda,
               const float *B, int64_t ldb, void *C, int cdt, int64_t ldc, int64_t kc, int sp);
int gnn_hgemm_sparse_pays(const void *A, int adt, int64_t M, int64_t K, int64_t lda);

/* The dense transform with bfloat16 weights (--precision=bf16,
** runtime/hgemm.c): C = A @ B for rows [m0, m1), B [K, N] float32 (row
** stride ldb) rounded to bfloat16 (the weights, already rounded at load),
** A GNN_BF16 words or GNN_F32 (rounded to bfloat16 as read), C GNN_F32 or
** GNN_BF16 (rounded where stored). Each
** element sums the exact products in vdpbf16ps's order (k pairs, the odd
** term first) in float32, so no row split changes a bit; with AVX-512
** BF16 subnormal operands and partial sums count as zero. Serial. And the
** path it takes: "avx512bf16" or "float". */
void gnn_bgemm(int64_t m0, int64_t m1, int64_t K, int64_t N, const void *A, int adt, int64_t lda,
               const float *B, int64_t ldb, void *C, int cdt, int64_t ldc);
/* The same product for a mostly-zero A (gnn_hgemm_sparse_pays): A's zeros
** skipped, each element one chain over k in increasing order (the float
** path's: gnn_hgemm on A rounded to bfloat16), so its bits are not
** gnn_bgemm's but neither the row split nor the thread count changes
** them. Serial. */
void gnn_bgemm_sparse(int64_t m0, int64_t m1, int64_t K, int64_t N, const void *A, int adt, int64_t lda,
                      const float *B, int64_t ldb, void *C, int cdt, int64_t ldc);
const char *gnn_bgemm_isa(void);
/* The same product for one row inside a fused kernel: B packed once per
** kernel call by gnn_bpack into gnn_bpack_words(K, N) words (pair panels
** of bfloat16), then gnn_bgemv multiplies a row a (K floats, rounded to
** bfloat16 as read) into c (N floats), in gnn_bgemm's order and bits. */
int64_t gnn_bpack_words(int64_t K, int64_t N);
void gnn_bpack(uint32_t *P, const float *B, int64_t K, int64_t N, int64_t ldb);
void gnn_bgemv(const float *a, int64_t K, const uint32_t *P, int64_t N, float *c);

/* A weight's gradient, C = A @ B reducing over K (the node count, so M
** and the columns are the layer's widths): C[m*ldc + p] = sum_k A[m*lda +
** k] * B[k*ldb + p] for m < M and p0 <= p < p1, each one chain over k in
** order from +0.0, as gnn_sgemm's. sparse (gnn_sgemm_sparse_pays of B;
** used when M <= 4096): the steps whose B element is zero are left out
** (B's rows scanned by the vector path, each nonzero adding its scaled
** column of A to an accumulator row), which gives the dense form's bits
** when A is finite. Dense: gnn_sgemm on columns p0..p1. Bits independent
** of how columns are split across calls. Serial. */
void gnn_sgemm_wgrad(int64_t p0, int64_t p1, int64_t M, int64_t K, const float *A, int64_t lda,
                     const float *B, int64_t ldb, float *C, int64_t ldc, int sparse);
/* gnn_sgemm_wgrad with A given transposed: G = A^T, K x M, its rows ldg
** apart (a training step's dY as it is: the gradient's transpose is not
** made), read in place; the same bits as gnn_sgemm_wgrad on A.
** Serial. */
void gnn_sgemm_wgradt(int64_t p0, int64_t p1, int64_t M, int64_t K, const float *G, int64_t ldg,
                      const float *B, int64_t ldb, float *C, int64_t ldc, int sparse);

/* Dropout for the cpu target's generated code (dropout.c): out[t] =
** x[t] * scale where gnn_dropout_keep(seed, step, stream, t, p) (philox.h),
** else 0, for t0 <= t < t1; the same bits as that scalar expression, on
** every instruction-set path (gnn_sgemm_isa's, vectorized over 16 or 8
** elements). Serial; out may be x. */
void gnn_dropout_rows(int64_t t0, int64_t t1, uint64_t seed, uint64_t step, uint32_t stream, float p,
                      float scale, const float *x, float *out);
/* The same with x and out pointing at element t0 (x[0] is element t0):
** a 16-bit tensor's kernel converts a chunk into float buffers of its
** own, draws, and rounds the result as it stores it. */
void gnn_dropout_span(int64_t t0, int64_t t1, uint64_t seed, uint64_t step, uint32_t stream, float p,
                      float scale, const float *x, float *out);

/* cuda's split-K tiled GEMM (gnncc's codegen/gemmcuda.c): how many parts
** K's full slabs are split into, for T output tiles, slabs full slabs, at
** most smax parts, an output of mp floats and cap floats of scratch for
** the parts after the first.  Parts enough that the blocks fill two
** waves of a 132-SM H100 (264), never more than slabs (every part gets
** a slab: c = ceil(slabs / s) each, the last the rest) nor than the
** scratch holds.  A function of the shapes and the row count alone, so
** a bound graph's launches always split alike; the compiler's cost model
** calls it too. */
static inline int
gnn_gemm_ksplit(int64_t T, int64_t slabs, int64_t smax, int64_t mp, int64_t cap)
{
	int64_t s = T > 0 ? (264 + T - 1) / T : 1, c;

	if (s > smax)
		s = smax;
	if (s > slabs)
		s = slabs;
	if (s > 1 && mp > 0 && (s - 1) * mp > cap)
		s = 1 + cap / mp;
	if (s < 2)
		return 1;
	c = (slabs + s - 1) / s;
	return (int)((slabs + c - 1) / c);
}

/*
** profile.c: per-launch profiling (docs/cli.md "Profiling").  While it is
** on, every kernel launch of a compiled model -- load- and bind-time
** kernels, forward's, a training step's -- is timed and recorded: on a
** GPU between two CUDA events on the model's stream (the host waits for
** each launch: the sum is not an unprofiled forward's time), on the cpu
** target by the wall clock around the kernel's threads, and on the
** emulated device by the CPU's clock (meaningless as GPU time) with the
** launch's GNN_WORK counters.  Forward launches directly while it is on
** (no CUDA Graph replay, which would hide the launches).  Off, a launch
** costs one test of gnn_prof_on_.  GNN_PROFILE=FILE in the environment,
** read when the first model is created, turns it on with FILE as the
** output.  Process-wide, not synchronized: profile one thread's models.
*/
typedef struct gnn_launch_record {
	const char *model;       /* the program's name (GCN, GCN_train) */
	const char *phase;       /* "load", "bind", "forward" or "train" */
	const char *kernel;      /* as generated: GCN_k10, GCN_g0, GCN_g0_c0, GCN_split_reduce */
	const char *schedule;    /* its schedule as --report=schedules names it, "default" */
	unsigned grid, block, shmem;   /* blocks, threads a block, dynamic shared bytes; on the
				    * cpu target grid is the launch's task count, block 0 */
	double us;               /* microseconds (see above) */
	long long warps, work, busiest;   /* the emulated device's GNN_WORK counters of the
					   * launch (docs/emulator.md); -1 where nothing counted */
} gnn_launch_record;
/* Turns profiling on with no records; each launch's record is also
** written to path (NULL: none) as a JSON line as it completes (the
** record's fields by the same names; work fields only where counted). */
gnn_status gnn_profile_start(const char *path);
/* Turns it off and closes the file; the records stay until the next start. */
gnn_status gnn_profile_stop(void);
size_t gnn_profile_count(void);
const gnn_launch_record *gnn_profile_record(size_t i);
/* The records as a table on f (docs/cli.md "Profiling"): one line a
** launch, then each phase's launches and time per model. */
gnn_status gnn_profile_print(FILE *f);
/* What the generated launches call (gnn_prof_on_ tested first): begin
** returns a handle for end, 0 when the record could not be made. */
extern int gnn_prof_on_;
int gnn_prof_begin_(const gnn_device *dev, void *stream, const char *model, const char *kernel,
                    const char *schedule, unsigned grid, unsigned block, unsigned shmem);
void gnn_prof_end_(int h);
/* The phase of the launches that follow ("bind", "load", "train"; NULL:
** forward) and, unless NULL, the program they belong to (the records of
** launches that do not say: bind's own kernels); returns the phase it
** replaces, for the caller to restore. */
const char *gnn_prof_phase_(const char *phase, const char *model);
/* The launch statement that follows (name N, schedule S), timed and
** recorded while profiling is on (on dev's timers and stream; dev NULL:
** the host clock; model NULL: the phase's program); otherwise one test. */
#define GNN_PROF(dev, stream, model, N, S, grid, block, shmem) \
	for (int prof__ = gnn_prof_on_ ? gnn_prof_begin_(dev, (void *)(stream), model, N, S, (unsigned)(grid), \
	                                                 (unsigned)(block), (unsigned)(shmem)) : 0, once__ = 1; \
	     once__; once__ = 0, prof__ ? gnn_prof_end_(prof__) : (void)0)

#ifdef __cplusplus
}
#endif

#endif
