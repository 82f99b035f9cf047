/*
** graph.c: graphs in PyG's edge_index layout, their CSR by target, the
** graphs PyG's utilities derive from them, and the graph-only tensors
** (degrees, edge weights, gcn_norm) that a bound model hoists.
**
** Layout. One block of 8-byte slots holds src[E] then dst[E] (adjacent:
** a device bind uploads both with one copy), at least one slot. A second
** block, the host CSR, holds perm[E], rowptr[N+1], outdeg[N] (int64)
** and dis[N] (double); it is built on first host use (the accessors
** below, the cpu target's bind), so that a graph only a cuda model binds
** (whose bind works on the device, devbind.cu) never pays for it. The
** build is guarded by a lock, as graphs are shared between models and
** threads. Weights and batch are separate, optional blocks of at least
** one element, so that NULL keeps meaning "unweighted" / "no batch" on
** an empty graph too.
**
** A relation (one edge type of a heterogeneous graph) is a graph whose
** sources index ns nodes of one type and whose targets index n nodes of
** another: the CSR is by target as for any graph, outdeg has ns entries,
** and the ops that pair a node with itself (self loops, dis and
** gcn_norm) refuse it. A graph of one node type has ns = n.
**
** Why outdeg and dis are stored: out-degrees counted in float would
** stick at 2^24, and gcn_norm needs deg^-1/2 of every node in double.
** Both are computed with the CSR (dis again when weights are set), in
** the reference interpreter's order: deg summed in double in edge order,
** pow(deg, -0.5), inf to 0, then dis[src] * w * dis[dst] rounded once.
** The degree and gcn_norm calls return void: if the CSR cannot be
** allocated they leave out as it is (gnn_errmsg says why).
**
** The CSR is a counting sort over edges in increasing id, so it is
** stable: equal targets keep the user's order, and any reduction that
** walks it is deterministic.
*/
#include <math.h>
#include <string.h>

#include "internal.h"

struct gnn_graph {
	int64_t n, e, ngraphs;
	int64_t ns;          /* source nodes: n, or a relation's own count */
	int64_t loops;       /* edges with src == dst (bind sizes derived graphs by them) */
	int64_t *slots;      /* src, dst */
	int64_t *cslots;     /* the host CSR block, or NULL: not built */
	int ready, lock;     /* cslots is complete; the lock that builds it */
	int64_t *src, *dst, *perm, *rowptr, *outdeg;
	double *dis;
	float *weight;       /* [max(E, 1)] or NULL */
	int64_t *batch;      /* [max(N, 1)] or NULL */
};

/* the number of 8-byte slots of a graph, 3E + 3N + 1, or 0 if it cannot be addressed */
static size_t
nslots(int64_t e, int64_t n)
{
	uint64_t max = SIZE_MAX / 8, rest;

	if (e < 0 || n < 0 || (uint64_t)e > (max - 1) / 3)
		return 0;
	rest = max - 1 - 3 * (uint64_t)e;
	if ((uint64_t)n > rest / 3)
		return 0;
	return (size_t)(3 * (uint64_t)e + 3 * (uint64_t)n + 1);
}

/* optional blocks never have zero size, see above */
static size_t
atleast1(int64_t n)
{
	return n > 0 ? (size_t)n : 1;
}

/*
** Stable counting sort of k keys (each in [0, n)) into n buckets: rowptr
** [n+1] gets the bucket bounds and order [k] the key positions. The
** cursors are rowptr itself (each start advances to its end, which is
** the next start), so no scratch memory is needed.
*/
static void
countsort(const int64_t *key, int64_t k, int64_t n, int64_t *rowptr, int64_t *order)
{
	int64_t sum = 0;

	memset(rowptr, 0, (size_t)(n + 1) * sizeof *rowptr);
	for (int64_t i = 0; i < k; i++)
		rowptr[key[i]]++;
	for (int64_t b = 0; b < n; b++) {
		int64_t c = rowptr[b];
		rowptr[b] = sum;
		sum += c;
	}
	for (int64_t i = 0; i < k; i++)
		order[rowptr[key[i]]++] = i;
	/* rowptr[b] is now the end of bucket b: shift the ends up by one */
	if (n > 0)
		memmove(rowptr + 1, rowptr, (size_t)n * sizeof *rowptr);
	rowptr[0] = 0;
}

/* deg^-1/2 for every node, from the weights or the CSR's row lengths */
static void
setdis(gnn_graph *g)
{
	int64_t i;

	if (g->weight) {
		for (i = 0; i < g->n; i++)
			g->dis[i] = 0;
		for (int64_t e = 0; e < g->e; e++)
			g->dis[g->dst[e]] += g->weight[e];
	} else
		for (i = 0; i < g->n; i++)
			g->dis[i] = (double)(g->rowptr[i + 1] - g->rowptr[i]);
	for (i = 0; i < g->n; i++) {
		/* PyG: deg.pow_(-0.5), then masked_fill(inf, 0); a negative deg stays NaN */
		g->dis[i] = pow(g->dis[i], -0.5);
		if (isinf(g->dis[i]))
			g->dis[i] = 0;
	}
}

/* slots of the host CSR block: perm[E], rowptr[N+1], outdeg[Ns], dis[N] */
static size_t
ncslots(const gnn_graph *g)
{
	return (size_t)g->e + 2 * (size_t)g->n + (size_t)g->ns + 1;
}

gnn_status
gnn_graph_csr_(const gnn_graph *cg)
{
	gnn_graph *g = (gnn_graph *)cg;   /* a cache: the graph's value does not change */
	gnn_status s = GNN_OK;
	int64_t *c;

	if (!g || __atomic_load_n(&g->ready, __ATOMIC_ACQUIRE))
		return GNN_OK;
	gnn_spin_lock_(&g->lock);
	if (!g->ready) {
		if (!(c = gnn_malloc(ncslots(g) * 8)))
			s = gnn_fail(GNN_ERR_MEM, "graph: out of memory for the CSR of %lld nodes and %lld edges",
				(long long)g->n, (long long)g->e);
		else {
			g->cslots = c;
			g->perm = c;
			g->rowptr = c + g->e;
			g->outdeg = g->rowptr + g->n + 1;
			/* malloc'd memory takes the type it is stored with, so this is not aliasing */
			g->dis = (double *)(void *)(g->outdeg + g->ns);
			countsort(g->dst, g->e, g->n, g->rowptr, g->perm);
			memset(g->outdeg, 0, (size_t)g->ns * sizeof *g->outdeg);
			for (int64_t e = 0; e < g->e; e++)
				g->outdeg[g->src[e]]++;
			if (g->ns == g->n)   /* a relation has no dis (gcn_norm refuses it) */
				setdis(g);
			__atomic_store_n(&g->ready, 1, __ATOMIC_RELEASE);
		}
	}
	gnn_spin_unlock_(&g->lock);
	return s;
}

int
gnn_graph_has_csr_(const gnn_graph *g)
{
	return g && __atomic_load_n(&g->ready, __ATOMIC_ACQUIRE);
}

void
gnn_graph_destroy(gnn_graph *g)
{
	if (!g)
		return;
	gnn_free(g->slots, (2 * (size_t)g->e + 1) * 8);
	if (g->cslots)
		gnn_free(g->cslots, ncslots(g) * 8);
	if (g->weight)
		gnn_free(g->weight, atleast1(g->e) * sizeof *g->weight);
	if (g->batch)
		gnn_free(g->batch, atleast1(g->n) * sizeof *g->batch);
	gnn_free(g, sizeof *g);
}

/*
** A graph of n nodes and e edges with room for weights and a batch when
** like has them (batch and num_graphs are copied: derived graphs keep
** the nodes). who names the caller in messages.
*/
static gnn_status
newgraph(const char *who, int64_t n, int64_t e, const gnn_graph *like, gnn_graph **out)
{
	gnn_graph *g;

	*out = NULL;
	/* the CSR block, built later, must be addressable too */
	if (!nslots(e, n))
		return gnn_fail(GNN_ERR_SHAPE, "%s: %lld edges on %lld nodes are too many to address",
			who, (long long)e, (long long)n);
	if (!(g = gnn_malloc(sizeof *g)))
		return gnn_fail(GNN_ERR_MEM, "%s: out of memory", who);
	*g = (gnn_graph){.n = n, .ns = n, .e = e, .ngraphs = like ? like->ngraphs : 1};
	if (!(g->slots = gnn_malloc((2 * (size_t)e + 1) * 8)))
		goto nomem;
	g->src = g->slots;
	g->dst = g->src + e;
	if (like && like->weight && !(g->weight = gnn_malloc(atleast1(e) * sizeof *g->weight)))
		goto nomem;
	if (like && like->batch) {
		if (!(g->batch = gnn_malloc(atleast1(n) * sizeof *g->batch)))
			goto nomem;
		if (n > 0)
			memcpy(g->batch, like->batch, (size_t)n * sizeof *g->batch);
	}
	*out = g;
	return GNN_OK;
nomem:
	gnn_graph_destroy(g);
	return gnn_fail(GNN_ERR_MEM, "%s: out of memory for a graph of %lld nodes and %lld edges",
		who, (long long)n, (long long)e);
}

/* element i of an int array of dtype t (GNN_I32 or GNN_I64) */
static int64_t
intat(const void *p, gnn_dtype t, int64_t i)
{
	return t == GNN_I32 ? ((const int32_t *)p)[i] : ((const int64_t *)p)[i];
}

/* a graph from edge_index whose sources lie in [0, ns) and targets in [0, n) */
static gnn_status
fromedges(const char *who, gnn_graph **g, const void *edge_index, gnn_dtype dtype,
	int64_t num_edges, int64_t ns, int64_t num_nodes)
{
	static const char *const rows[] = {"source", "target"};
	gnn_graph *ng;
	gnn_status s;

	if (!g)
		return gnn_fail(GNN_ERR_ARG, "%s: g is NULL", who);
	*g = NULL;
	if (num_edges < 0 || num_nodes < 0 || ns < 0)
		return gnn_fail(GNN_ERR_ARG, "%s: negative count (%lld edges, %lld nodes)", who,
			(long long)num_edges, (long long)(ns < 0 ? ns : num_nodes));
	if (ns != num_nodes && !nslots(num_edges, ns))
		return gnn_fail(GNN_ERR_SHAPE, "%s: %lld edges from %lld nodes are too many to address",
			who, (long long)num_edges, (long long)ns);
	if (dtype != GNN_I32 && dtype != GNN_I64)
		return gnn_fail(GNN_ERR_DTYPE, "edge_index: dtype %s, want i32 or i64",
			gnn_dtype_name(dtype));
	if (!edge_index && num_edges > 0)
		return gnn_fail(GNN_ERR_ARG, "edge_index: NULL with %lld edges", (long long)num_edges);
	/* allocate before reading: the size check proves that 2E indices are addressable */
	if ((s = newgraph("edge_index", num_nodes, num_edges, NULL, &ng)) != GNN_OK)
		return s;
	ng->ns = ns;
	for (int r = 0; r < 2; r++) {
		int64_t *to = r ? ng->dst : ng->src, lim = r ? num_nodes : ns;
		for (int64_t e = 0; e < num_edges; e++) {
			int64_t v = intat(edge_index, dtype, r * num_edges + e);
			if (v < 0 || v >= lim) {
				gnn_graph_destroy(ng);
				return gnn_fail(GNN_ERR_RANGE, "edge_index: %s of edge %lld is %lld, "
					"outside [0, %lld)", rows[r], (long long)e, (long long)v,
					(long long)lim);
			}
			to[e] = v;
			/* a relation's node ids of two types are never a loop */
			ng->loops += r == 1 && ns == num_nodes && v == ng->src[e];
		}
	}
	*g = ng;
	return GNN_OK;
}

gnn_status
gnn_graph_from_edge_index(gnn_graph **g, const void *edge_index, gnn_dtype dtype,
	int64_t num_edges, int64_t num_nodes)
{
	return fromedges("gnn_graph_from_edge_index", g, edge_index, dtype, num_edges, num_nodes, num_nodes);
}

gnn_status
gnn_graph_relation_from_edge_index(gnn_graph **g, const void *edge_index, gnn_dtype dtype,
	int64_t num_edges, int64_t num_src_nodes, int64_t num_dst_nodes)
{
	return fromedges("gnn_graph_relation_from_edge_index", g, edge_index, dtype, num_edges, num_src_nodes,
		num_dst_nodes);
}

int64_t
gnn_graph_num_src_nodes(const gnn_graph *g)
{
	return g ? g->ns : 0;
}

gnn_status
gnn_graph_read_npy(gnn_graph **g, const char *path, int64_t num_nodes)
{
	gnn_array a;
	gnn_status s;
	int64_t i;

	if (!g || !path)
		return gnn_fail(GNN_ERR_ARG, "gnn_graph_read_npy: NULL argument");
	*g = NULL;
	if ((s = gnn_npy_read(path, &a)) != GNN_OK)
		return s;
	if (a.rank != 2 || a.shape[0] != 2 || (a.dtype != GNN_I32 && a.dtype != GNN_I64)) {
		gnn_array_free(&a);
		return gnn_fail(GNN_ERR_SHAPE, "%s is not an edge_index (int32 or int64, shape [2, E])", path);
	}
	/* the largest index + 1, where one holds it (fuzz_graph found the overflow) */
	if (num_nodes < 0)
		for (num_nodes = 0, i = 0; i < 2 * a.shape[1]; i++) {
			int64_t v = intat(a.data, a.dtype, i);
			if (v == INT64_MAX) {
				s = gnn_fail(GNN_ERR_RANGE, "%s: edge_index: %s of edge %lld is %lld: "
					"no node count holds it", path, i < a.shape[1] ? "source" : "target",
					(long long)(i % a.shape[1]), (long long)v);
				gnn_array_free(&a);
				return s;
			}
			if (v >= num_nodes)
				num_nodes = v + 1;
		}
	s = gnn_graph_from_edge_index(g, a.data, a.dtype, a.shape[1], num_nodes);
	gnn_array_free(&a);
	return s;
}

gnn_status
gnn_graph_set_edge_weight(gnn_graph *g, const float *weight)
{
	float *w;

	if (!g)
		return gnn_fail(GNN_ERR_ARG, "gnn_graph_set_edge_weight: g is NULL");
	if (!weight && g->e > 0)
		return gnn_fail(GNN_ERR_ARG, "edge weight: NULL with %lld edges", (long long)g->e);
	/* the old weights stay until the new ones are in hand */
	if (!(w = gnn_malloc(atleast1(g->e) * sizeof *w)))
		return gnn_fail(GNN_ERR_MEM, "edge weight: out of memory for %lld weights",
			(long long)g->e);
	if (g->e > 0)
		memcpy(w, weight, (size_t)g->e * sizeof *w);
	if (g->weight)
		gnn_free(g->weight, atleast1(g->e) * sizeof *g->weight);
	g->weight = w;
	if (g->ready && g->ns == g->n)
		setdis(g);
	return GNN_OK;
}

gnn_status
gnn_graph_set_batch(gnn_graph *g, const void *batch, gnn_dtype dtype, int64_t num_graphs)
{
	int64_t *b;

	if (!g)
		return gnn_fail(GNN_ERR_ARG, "gnn_graph_set_batch: g is NULL");
	if (dtype != GNN_I32 && dtype != GNN_I64)
		return gnn_fail(GNN_ERR_DTYPE, "batch: dtype %s, want i32 or i64", gnn_dtype_name(dtype));
	if (num_graphs < 0 || (num_graphs == 0 && g->n > 0))
		return gnn_fail(GNN_ERR_ARG, "batch: %lld graphs for %lld nodes",
			(long long)num_graphs, (long long)g->n);
	if (!batch && g->n > 0)
		return gnn_fail(GNN_ERR_ARG, "batch: NULL with %lld nodes", (long long)g->n);
	if (!(b = gnn_malloc(atleast1(g->n) * sizeof *b)))
		return gnn_fail(GNN_ERR_MEM, "batch: out of memory for %lld entries", (long long)g->n);
	for (int64_t i = 0; i < g->n; i++) {
		int64_t v = intat(batch, dtype, i);
		if (v < 0 || v >= num_graphs) {
			gnn_free(b, atleast1(g->n) * sizeof *b);
			return gnn_fail(GNN_ERR_RANGE, "batch: entry %lld is %lld, outside [0, %lld)",
				(long long)i, (long long)v, (long long)num_graphs);
		}
		b[i] = v;
	}
	if (g->batch)
		gnn_free(g->batch, atleast1(g->n) * sizeof *g->batch);
	g->batch = b;
	g->ngraphs = num_graphs;
	return GNN_OK;
}

int64_t
gnn_graph_num_nodes(const gnn_graph *g)
{
	return g ? g->n : 0;
}

int64_t
gnn_graph_num_edges(const gnn_graph *g)
{
	return g ? g->e : 0;
}

int64_t
gnn_graph_loops_(const gnn_graph *g)
{
	return g ? g->loops : 0;
}

int64_t
gnn_graph_num_graphs(const gnn_graph *g)
{
	return g ? g->ngraphs : 0;
}

const int64_t *
gnn_graph_src(const gnn_graph *g)
{
	return g ? g->src : NULL;
}

const int64_t *
gnn_graph_dst(const gnn_graph *g)
{
	return g ? g->dst : NULL;
}

const float *
gnn_graph_weight(const gnn_graph *g)
{
	return g ? g->weight : NULL;
}

const int64_t *
gnn_graph_batch(const gnn_graph *g)
{
	return g ? g->batch : NULL;
}

const int64_t *
gnn_graph_rowptr(const gnn_graph *g)
{
	return g && gnn_graph_csr_(g) == GNN_OK ? g->rowptr : NULL;
}

const int64_t *
gnn_graph_perm(const gnn_graph *g)
{
	return g && gnn_graph_csr_(g) == GNN_OK ? g->perm : NULL;
}

/* derived graphs */

gnn_status
gnn_graph_add_self_loops(const gnn_graph *g, gnn_graph **out)
{
	gnn_graph *o;
	gnn_status s;

	if (!out)
		return gnn_fail(GNN_ERR_ARG, "gnn_graph_add_self_loops: out is NULL");
	*out = NULL;
	if (!g)
		return gnn_fail(GNN_ERR_ARG, "gnn_graph_add_self_loops: g is NULL");
	if (g->ns != g->n)
		return gnn_fail(GNN_ERR_ARG, "add_self_loops: a relation (%lld -> %lld nodes) has no self loops",
			(long long)g->ns, (long long)g->n);
	/* E + N cannot overflow: g's own block already holds more slots */
	if ((s = newgraph("add_self_loops", g->n, g->e + g->n, g, &o)) != GNN_OK)
		return s;
	if (g->e > 0) {
		memcpy(o->src, g->src, (size_t)g->e * sizeof *o->src);
		memcpy(o->dst, g->dst, (size_t)g->e * sizeof *o->dst);
		if (g->weight)
			memcpy(o->weight, g->weight, (size_t)g->e * sizeof *o->weight);
	}
	for (int64_t i = 0; i < g->n; i++) {
		o->src[g->e + i] = o->dst[g->e + i] = i;
		if (o->weight)
			o->weight[g->e + i] = 1;
	}
	o->loops = g->loops + g->n;
	*out = o;
	return GNN_OK;
}

/* remove_self_loops, and the first half of add_remaining_self_loops:
** the edges with src != dst in order, with room for extra more after them */
static gnn_status
keepnonloops(const char *who, const gnn_graph *g, int64_t extra, gnn_graph **out)
{
	int64_t kept = 0, k = 0;
	gnn_graph *o;
	gnn_status s;

	*out = NULL;
	if (g->ns != g->n)
		return gnn_fail(GNN_ERR_ARG, "%s: a relation (%lld -> %lld nodes) has no self loops", who,
			(long long)g->ns, (long long)g->n);
	for (int64_t e = 0; e < g->e; e++)
		kept += g->src[e] != g->dst[e];
	if ((s = newgraph(who, g->n, kept + extra, g, &o)) != GNN_OK)
		return s;
	for (int64_t e = 0; e < g->e; e++) {
		if (g->src[e] == g->dst[e])
			continue;
		o->src[k] = g->src[e];
		o->dst[k] = g->dst[e];
		if (g->weight)
			o->weight[k] = g->weight[e];
		k++;
	}
	o->loops = extra;   /* remaining: the loops its caller appends */
	*out = o;
	return GNN_OK;
}

gnn_status
gnn_graph_remove_self_loops(const gnn_graph *g, gnn_graph **out)
{
	if (!out)
		return gnn_fail(GNN_ERR_ARG, "gnn_graph_remove_self_loops: out is NULL");
	*out = NULL;
	if (!g)
		return gnn_fail(GNN_ERR_ARG, "gnn_graph_remove_self_loops: g is NULL");
	return keepnonloops("remove_self_loops", g, 0, out);
}

/*
** PyG's utils.add_remaining_self_loops: a new loop weighs fill, or the
** weight of the node's last existing loop (loop_attr[row[inv_mask]] =
** edge_attr[inv_mask] assigns in edge order, so the last one wins).
*/
gnn_status
gnn_graph_add_remaining_self_loops(const gnn_graph *g, float fill, gnn_graph **out)
{
	gnn_graph *o;
	int64_t k;
	gnn_status s;

	if (!out)
		return gnn_fail(GNN_ERR_ARG, "gnn_graph_add_remaining_self_loops: out is NULL");
	*out = NULL;
	if (!g)
		return gnn_fail(GNN_ERR_ARG, "gnn_graph_add_remaining_self_loops: g is NULL");
	if ((s = keepnonloops("add_remaining_self_loops", g, g->n, &o)) != GNN_OK)
		return s;
	k = o->e - g->n;
	for (int64_t i = 0; i < g->n; i++) {
		o->src[k + i] = o->dst[k + i] = i;
		if (o->weight)
			o->weight[k + i] = fill;
	}
	if (o->weight)
		for (int64_t e = 0; e < g->e; e++)
			if (g->src[e] == g->dst[e])
				o->weight[k + g->src[e]] = g->weight[e];
	*out = o;
	return GNN_OK;
}

/* graph-only tensors */

void
gnn_graph_in_degree(const gnn_graph *g, float *out)
{
	if (!g || !out || gnn_graph_csr_(g) != GNN_OK)
		return;
	for (int64_t i = 0; i < g->n; i++)
		out[i] = (float)(g->rowptr[i + 1] - g->rowptr[i]);
}

void
gnn_graph_out_degree(const gnn_graph *g, float *out)
{
	if (!g || !out || gnn_graph_csr_(g) != GNN_OK)
		return;
	for (int64_t i = 0; i < g->ns; i++)
		out[i] = (float)g->outdeg[i];
}

void
gnn_graph_edge_weight(const gnn_graph *g, float *out)
{
	if (!g || !out)
		return;
	for (int64_t e = 0; e < g->e; e++)
		out[e] = g->weight ? g->weight[e] : 1.0f;
}

void
gnn_graph_gcn_norm(const gnn_graph *g, float *out)
{
	if (!g || !out || gnn_graph_csr_(g) != GNN_OK)
		return;
	if (g->ns != g->n) {
		gnn_fail(GNN_ERR_ARG, "gcn_norm: a relation (%lld -> %lld nodes) has no degree normalization",
			(long long)g->ns, (long long)g->n);
		return;
	}
	for (int64_t e = 0; e < g->e; e++) {
		double w = g->weight ? g->weight[e] : 1.0;
		out[e] = (float)(g->dis[g->src[e]] * w * g->dis[g->dst[e]]);
	}
}

gnn_status
gnn_segment_plan(const int64_t *index, int64_t k, int64_t n, int64_t *rowptr, int64_t *order)
{
	if (k < 0 || n < 0)
		return gnn_fail(GNN_ERR_ARG, "gnn_segment_plan: negative count (%lld entries, "
			"%lld segments)", (long long)k, (long long)n);
	/* rowptr's n + 1 entries must be addressable */
	if ((uint64_t)n >= SIZE_MAX / sizeof *rowptr)
		return gnn_fail(GNN_ERR_ARG, "gnn_segment_plan: %lld segments are too many",
			(long long)n);
	if (!rowptr || (k > 0 && (!index || !order)))
		return gnn_fail(GNN_ERR_ARG, "gnn_segment_plan: NULL array");
	/* check everything first, so that a failure leaves zeros, not half a plan */
	for (int64_t i = 0; i < k; i++)
		if (index[i] < 0 || index[i] >= n) {
			memset(rowptr, 0, (size_t)(n + 1) * sizeof *rowptr);
			memset(order, 0, (size_t)k * sizeof *order);
			return gnn_fail(GNN_ERR_RANGE, "segment index: entry %lld is %lld, "
				"outside [0, %lld)", (long long)i, (long long)index[i], (long long)n);
		}
	countsort(index, k, n, rowptr, order);
	return GNN_OK;
}
