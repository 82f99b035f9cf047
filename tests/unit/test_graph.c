/*
** test_graph.c: graphs, their CSR, derived graphs, graph-only tensors and
** segment plans.
**
** Expected values are worked out by hand on small graphs (PyG semantics:
** pyg-semantics.md §0-§1, as ir/interp.c implements them), then a random
** graph is checked against naive recomputations; a failing allocator is
** swept over every call that allocates.
** Usage: test_graph [shared-dir] (unused: no file is read)
*/
#include "rtcheck.h"

#include <math.h>
#include <stdint.h>

/* a graph from src/dst lists (int64), or NULL after a failed CHECK */
static gnn_graph *
mk(const int64_t *src, const int64_t *dst, int64_t e, int64_t n)
{
	int64_t *ei = malloc(2 * (size_t)(e ? e : 1) * sizeof *ei);
	gnn_graph *g = NULL;

	for (int64_t i = 0; i < e; i++)
		ei[i] = src[i], ei[e + i] = dst[i];
	if (!CHECK_ST(gnn_graph_from_edge_index(&g, ei, GNN_I64, e, n), GNN_OK))
		g = NULL;
	free(ei);
	return g;
}

static int
eq64(const int64_t *a, const int64_t *b, int64_t n)
{
	for (int64_t i = 0; i < n; i++)
		if (a[i] != b[i])
			return 0;
	return 1;
}

static int
eqf(const float *a, const float *b, int64_t n)
{
	for (int64_t i = 0; i < n; i++)
		if (!(a[i] == b[i] || (isnan(a[i]) && isnan(b[i])))) {
			printf("  [%lld]: %.9g, want %.9g\n", (long long)i, a[i], b[i]);
			return 0;
		}
	return 1;
}

/* within a few float ulps, for values computed in a different order */
static int
nearf(const float *a, const double *b, int64_t n)
{
	for (int64_t i = 0; i < n; i++)
		if (!(fabs(a[i] - b[i]) <= 4e-7 * fabs(b[i]) || (isnan(a[i]) && isnan(b[i])))) {
			printf("  [%lld]: %.9g, want %.9g\n", (long long)i, a[i], b[i]);
			return 0;
		}
	return 1;
}

/* the CSR of g must group edge ids by target, increasing within a row */
static int
csr_ok(const gnn_graph *g)
{
	const int64_t *rp = gnn_graph_rowptr(g), *perm = gnn_graph_perm(g), *dst = gnn_graph_dst(g);
	int64_t n = gnn_graph_num_nodes(g), e = gnn_graph_num_edges(g);

	if (!rp || !perm || rp[0] != 0 || rp[n] != e)
		return 0;
	for (int64_t i = 0; i < n; i++)
		for (int64_t k = rp[i]; k < rp[i + 1]; k++)
			if (dst[perm[k]] != i || (k > rp[i] && perm[k] <= perm[k - 1]))
				return 0;
	return 1;
}

static void
test_validation(void)
{
	static char junk;
	gnn_graph *g = (gnn_graph *)&junk;
	int64_t ei[2 * 18] = {0};
	int32_t ei32[4] = {0, 1, 1, -1};

	CHECK_ST(gnn_graph_from_edge_index(NULL, ei, GNN_I64, 0, 0), GNN_ERR_ARG);
	CHECK_ST(gnn_graph_from_edge_index(&g, ei, GNN_I64, -1, 5), GNN_ERR_ARG);
	CHECK(g == NULL);
	g = (gnn_graph *)&junk;
	CHECK_ST(gnn_graph_from_edge_index(&g, ei, GNN_I64, 0, -1), GNN_ERR_ARG);
	CHECK(g == NULL);
	CHECK_ST(gnn_graph_from_edge_index(&g, NULL, GNN_I64, 1, 5), GNN_ERR_ARG);
	CHECK_MSG("NULL");
	CHECK_ST(gnn_graph_from_edge_index(&g, ei, GNN_F32, 0, 5), GNN_ERR_DTYPE);
	CHECK_MSG("f32");
	CHECK_ST(gnn_graph_from_edge_index(&g, ei, GNN_U64, 0, 5), GNN_ERR_DTYPE);
	CHECK_ST(gnn_graph_from_edge_index(&g, ei, (gnn_dtype)99, 0, 5), GNN_ERR_DTYPE);

	/* the example of the header: Cora's N, a bad target at edge 17 */
	for (int i = 0; i < 18; i++)
		ei[i] = i, ei[18 + i] = 2707 - i;
	ei[18 + 17] = 2708;
	g = (gnn_graph *)&junk;
	CHECK_ST(gnn_graph_from_edge_index(&g, ei, GNN_I64, 18, 2708), GNN_ERR_RANGE);
	CHECK(g == NULL);
	CHECK(strcmp(gnn_errmsg(), "edge_index: target of edge 17 is 2708, outside [0, 2708)") == 0);
	/* sources come first in memory, so a bad source wins over a bad target */
	ei[5] = -3;
	CHECK_ST(gnn_graph_from_edge_index(&g, ei, GNN_I64, 18, 2708), GNN_ERR_RANGE);
	CHECK_MSG("edge_index: source of edge 5 is -3, outside [0, 2708)");
	/* i32, and an index with no node at all */
	CHECK_ST(gnn_graph_from_edge_index(&g, ei32, GNN_I32, 2, 2), GNN_ERR_RANGE);
	CHECK_MSG("target of edge 1 is -1");
	CHECK_ST(gnn_graph_from_edge_index(&g, ei32, GNN_I32, 2, 0), GNN_ERR_RANGE);
	CHECK_MSG("source of edge 0 is 0, outside [0, 0)");

	/* sizes that cannot be addressed fail before edge_index is read */
	CHECK_ST(gnn_graph_from_edge_index(&g, ei, GNN_I64, INT64_MAX, 5), GNN_ERR_SHAPE);
	CHECK_ST(gnn_graph_from_edge_index(&g, ei, GNN_I64, (int64_t)1 << 62, 5), GNN_ERR_SHAPE);
	CHECK_ST(gnn_graph_from_edge_index(&g, ei, GNN_I64, 5, INT64_MAX), GNN_ERR_SHAPE);
	CHECK_ST(gnn_graph_from_edge_index(&g, ei, GNN_I64, (int64_t)1 << 59, (int64_t)1 << 59),
		GNN_ERR_SHAPE);
	CHECK(g == NULL);
	/* E = 2^40 is addressable: the allocation is asked for (and refused here) */
	{
		TestAlloc ta = {.failat = 1};   /* the graph, then its block */
		gnn_set_allocator(testalloc, &ta);
		CHECK_ST(gnn_graph_from_edge_index(&g, ei, GNN_I64, (int64_t)1 << 40, 100), GNN_ERR_MEM);
		gnn_set_allocator(NULL, NULL);
		CHECK(g == NULL && ta.live == 0);
	}
}

static void
test_setters(void)
{
	static const int64_t src[] = {0, 1, 2}, dst[] = {1, 2, 0};
	static const float w[] = {0.5f, NAN, 2};
	const int64_t b64[] = {0, 0, 1, 1}, bbad[] = {0, 2, 1, 0};
	const int32_t b32[] = {1, 0, 1, 0};
	gnn_graph *g = mk(src, dst, 3, 4), *h;

	if (!g)
		return;
	CHECK(gnn_graph_num_nodes(g) == 4 && gnn_graph_num_edges(g) == 3);
	CHECK(gnn_graph_num_graphs(g) == 1 && gnn_graph_batch(g) == NULL && gnn_graph_weight(g) == NULL);
	CHECK(eq64(gnn_graph_src(g), src, 3) && eq64(gnn_graph_dst(g), dst, 3));

	CHECK_ST(gnn_graph_set_edge_weight(NULL, w), GNN_ERR_ARG);
	CHECK_ST(gnn_graph_set_edge_weight(g, NULL), GNN_ERR_ARG);
	CHECK(gnn_graph_weight(g) == NULL);
	CHECK_ST(gnn_graph_set_edge_weight(g, w), GNN_OK);
	CHECK(gnn_graph_weight(g) != w && eqf(gnn_graph_weight(g), w, 3));
	/* replaced, not appended */
	CHECK_ST(gnn_graph_set_edge_weight(g, (const float[]){1, 2, 3}), GNN_OK);
	CHECK(eqf(gnn_graph_weight(g), (const float[]){1, 2, 3}, 3));
	CHECK_ST(gnn_graph_set_edge_weight(g, w), GNN_OK);

	CHECK_ST(gnn_graph_set_batch(NULL, b64, GNN_I64, 2), GNN_ERR_ARG);
	CHECK_ST(gnn_graph_set_batch(g, NULL, GNN_I64, 2), GNN_ERR_ARG);
	CHECK_ST(gnn_graph_set_batch(g, b64, GNN_F32, 2), GNN_ERR_DTYPE);
	CHECK_ST(gnn_graph_set_batch(g, b64, GNN_I64, 0), GNN_ERR_ARG);
	CHECK_ST(gnn_graph_set_batch(g, b64, GNN_I64, -1), GNN_ERR_ARG);
	CHECK_ST(gnn_graph_set_batch(g, b64, GNN_I64, 1), GNN_ERR_RANGE);
	CHECK_MSG("batch: entry 2 is 1, outside [0, 1)");
	CHECK(gnn_graph_batch(g) == NULL && gnn_graph_num_graphs(g) == 1);
	CHECK_ST(gnn_graph_set_batch(g, b64, GNN_I64, 2), GNN_OK);
	CHECK(eq64(gnn_graph_batch(g), b64, 4) && gnn_graph_num_graphs(g) == 2);
	/* a failure keeps what was set */
	CHECK_ST(gnn_graph_set_batch(g, bbad, GNN_I64, 2), GNN_ERR_RANGE);
	CHECK_MSG("batch: entry 1 is 2, outside [0, 2)");
	CHECK(eq64(gnn_graph_batch(g), b64, 4) && gnn_graph_num_graphs(g) == 2);
	CHECK_ST(gnn_graph_set_batch(g, (const int32_t[]){0, -1, 0, 0}, GNN_I32, 2), GNN_ERR_RANGE);
	CHECK_MSG("entry 1 is -1");
	/* i32, and graphs that no node belongs to (allowed: pooling gives 0) */
	CHECK_ST(gnn_graph_set_batch(g, b32, GNN_I32, 5), GNN_OK);
	CHECK(eq64(gnn_graph_batch(g), (const int64_t[]){1, 0, 1, 0}, 4) && gnn_graph_num_graphs(g) == 5);

	/* derived graphs carry weights, batch and the graph count */
	if (CHECK_ST(gnn_graph_add_self_loops(g, &h), GNN_OK)) {
		CHECK(gnn_graph_num_graphs(h) == 5 && eq64(gnn_graph_batch(h), (const int64_t[]){1, 0, 1, 0}, 4));
		CHECK(gnn_graph_batch(h) != gnn_graph_batch(g));
		CHECK(eqf(gnn_graph_weight(h), (const float[]){0.5f, NAN, 2, 1, 1, 1, 1}, 7));
		gnn_graph_destroy(h);
	}

	/* NULL everywhere a graph is read */
	CHECK(gnn_graph_num_nodes(NULL) == 0 && gnn_graph_src(NULL) == NULL && gnn_graph_rowptr(NULL) == NULL);
	gnn_graph_in_degree(NULL, NULL);
	gnn_graph_gcn_norm(NULL, NULL);
	gnn_graph_destroy(NULL);
	h = (gnn_graph *)g;
	CHECK_ST(gnn_graph_add_self_loops(NULL, &h), GNN_ERR_ARG);
	CHECK(h == NULL);
	CHECK_ST(gnn_graph_remove_self_loops(g, NULL), GNN_ERR_ARG);
	CHECK_ST(gnn_graph_add_remaining_self_loops(NULL, 1, &h), GNN_ERR_ARG);
	gnn_graph_destroy(g);
}

static void
test_empty(void)
{
	gnn_graph *g, *h;
	float f[4] = {7, 7, 7, 7};
	int64_t rp[4];

	/* N = 0, E = 0: all views valid, rowptr = {0} */
	if (!CHECK_ST(gnn_graph_from_edge_index(&g, NULL, GNN_I64, 0, 0), GNN_OK))
		return;
	CHECK(gnn_graph_num_nodes(g) == 0 && gnn_graph_num_edges(g) == 0 && gnn_graph_num_graphs(g) == 1);
	CHECK(gnn_graph_rowptr(g) && gnn_graph_rowptr(g)[0] == 0);
	CHECK(gnn_graph_src(g) && gnn_graph_dst(g) && gnn_graph_perm(g));
	gnn_graph_in_degree(g, f);
	gnn_graph_out_degree(g, f);
	gnn_graph_edge_weight(g, f);
	gnn_graph_gcn_norm(g, f);
	CHECK(f[0] == 7);
	/* a weighted empty graph is still weighted; a batch of no nodes may have no graphs */
	CHECK_ST(gnn_graph_set_edge_weight(g, NULL), GNN_OK);
	CHECK(gnn_graph_weight(g) != NULL);
	CHECK_ST(gnn_graph_set_batch(g, NULL, GNN_I32, 0), GNN_OK);
	CHECK(gnn_graph_batch(g) != NULL && gnn_graph_num_graphs(g) == 0);
	if (CHECK_ST(gnn_graph_add_remaining_self_loops(g, 2, &h), GNN_OK)) {
		CHECK(gnn_graph_num_edges(h) == 0 && gnn_graph_weight(h) != NULL);
		CHECK(gnn_graph_batch(h) != NULL && gnn_graph_num_graphs(h) == 0);
		gnn_graph_destroy(h);
	}
	if (CHECK_ST(gnn_graph_add_self_loops(g, &h), GNN_OK)) {
		CHECK(gnn_graph_num_edges(h) == 0 && gnn_graph_rowptr(h)[0] == 0);
		gnn_graph_destroy(h);
	}
	if (CHECK_ST(gnn_graph_remove_self_loops(g, &h), GNN_OK))
		gnn_graph_destroy(h);
	gnn_graph_destroy(g);

	/* N = 3, E = 0 (i32, data NULL): empty rows; self loops make a diagonal */
	if (!CHECK_ST(gnn_graph_from_edge_index(&g, NULL, GNN_I32, 0, 3), GNN_OK))
		return;
	CHECK(eq64(gnn_graph_rowptr(g), (const int64_t[]){0, 0, 0, 0}, 4));
	gnn_graph_in_degree(g, f);
	CHECK(eqf(f, (const float[]){0, 0, 0, 7}, 4));
	if (CHECK_ST(gnn_graph_add_self_loops(g, &h), GNN_OK)) {
		CHECK(gnn_graph_weight(h) == NULL && gnn_graph_num_edges(h) == 3);
		CHECK(eq64(gnn_graph_src(h), (const int64_t[]){0, 1, 2}, 3));
		CHECK(eq64(gnn_graph_rowptr(h), (const int64_t[]){0, 1, 2, 3}, 4) && csr_ok(h));
		gnn_graph_gcn_norm(h, f);
		CHECK(eqf(f, (const float[]){1, 1, 1, 7}, 4));
		gnn_graph_destroy(h);
	}
	gnn_graph_destroy(g);

	/* E = 0 with the empty graph in a segment plan too */
	CHECK_ST(gnn_segment_plan(NULL, 0, 3, rp, NULL), GNN_OK);
	CHECK(eq64(rp, (const int64_t[]){0, 0, 0, 0}, 4));
	rp[0] = 9;
	CHECK_ST(gnn_segment_plan(NULL, 0, 0, rp, NULL), GNN_OK);
	CHECK(rp[0] == 0);
}

static void
test_csr_degrees(void)
{
	/* duplicates of 0->2 and 1->2, node 3 isolated, node 4 with two loops only */
	static const int64_t src[] = {0, 1, 0, 2, 1, 4, 4}, dst[] = {2, 2, 2, 0, 2, 4, 4};
	gnn_graph *g = mk(src, dst, 7, 5);
	float f[7];

	if (!g)
		return;
	CHECK(eq64(gnn_graph_rowptr(g), (const int64_t[]){0, 1, 1, 5, 5, 7}, 6));
	CHECK(eq64(gnn_graph_perm(g), (const int64_t[]){3, 0, 1, 2, 4, 5, 6}, 7));
	CHECK(csr_ok(g));
	gnn_graph_in_degree(g, f);
	CHECK(eqf(f, (const float[]){1, 0, 4, 0, 2}, 5));
	gnn_graph_out_degree(g, f);
	CHECK(eqf(f, (const float[]){2, 2, 1, 0, 2}, 5));
	gnn_graph_edge_weight(g, f);
	CHECK(eqf(f, (const float[]){1, 1, 1, 1, 1, 1, 1}, 7));
	/*
	** gcn_norm, no loops added: deg = {1, 0, 4, 0, 2}, dis = {1, 0, 1/2, 0, 1/sqrt2}.
	** 0->2: 1 * 1/2; 1->2: 0 (source without in-edges); 2->0: 1/2 * 1; 4->4: 1/2.
	*/
	gnn_graph_gcn_norm(g, f);
	CHECK(eqf(f, (const float[]){0.5f, 0, 0.5f, 0.5f, 0, 0.5f, 0.5f}, 7));
	gnn_graph_destroy(g);
}

static void
test_derived(void)
{
	/* loops at 1 (twice: weights 3 then 5) and at 0 once; node 3 has none */
	static const int64_t src[] = {1, 0, 1, 2, 1, 0}, dst[] = {1, 1, 2, 3, 1, 0};
	static const float w[] = {3, 0.5f, 2, 4, 5, 7};
	gnn_graph *g = mk(src, dst, 6, 4), *h;
	float f[10];

	if (!g)
		return;
	/* unweighted: stays unweighted, fill has nothing to fill */
	if (CHECK_ST(gnn_graph_add_remaining_self_loops(g, 9, &h), GNN_OK)) {
		CHECK(gnn_graph_weight(h) == NULL && gnn_graph_num_edges(h) == 7);
		CHECK(eq64(gnn_graph_src(h), (const int64_t[]){0, 1, 2, 0, 1, 2, 3}, 7));
		CHECK(eq64(gnn_graph_dst(h), (const int64_t[]){1, 2, 3, 0, 1, 2, 3}, 7));
		CHECK(csr_ok(h));
		gnn_graph_edge_weight(h, f);
		CHECK(eqf(f, (const float[]){1, 1, 1, 1, 1, 1, 1}, 7));
		gnn_graph_destroy(h);
	}
	if (CHECK_ST(gnn_graph_remove_self_loops(g, &h), GNN_OK)) {
		CHECK(gnn_graph_weight(h) == NULL && gnn_graph_num_edges(h) == 3);
		CHECK(eq64(gnn_graph_src(h), (const int64_t[]){0, 1, 2}, 3));
		CHECK(eq64(gnn_graph_rowptr(h), (const int64_t[]){0, 0, 1, 2, 3}, 5) && csr_ok(h));
		gnn_graph_destroy(h);
	}
	/* add_self_loops keeps the existing loops */
	if (CHECK_ST(gnn_graph_add_self_loops(g, &h), GNN_OK)) {
		CHECK(gnn_graph_num_edges(h) == 10 && csr_ok(h));
		CHECK(eq64(gnn_graph_dst(h), (const int64_t[]){1, 1, 2, 3, 1, 0, 0, 1, 2, 3}, 10));
		CHECK(eq64(gnn_graph_perm(h), (const int64_t[]){5, 6, 0, 1, 4, 7, 2, 8, 3, 9}, 10));
		gnn_graph_destroy(h);
	}

	/* weighted: node 1's last loop (5) wins, node 0 keeps 7, nodes 2, 3 get fill */
	CHECK_ST(gnn_graph_set_edge_weight(g, w), GNN_OK);
	if (CHECK_ST(gnn_graph_add_remaining_self_loops(g, 9, &h), GNN_OK)) {
		CHECK(eq64(gnn_graph_src(h), (const int64_t[]){0, 1, 2, 0, 1, 2, 3}, 7));
		CHECK(eqf(gnn_graph_weight(h), (const float[]){0.5f, 2, 4, 7, 5, 9, 9}, 7));
		gnn_graph_destroy(h);
	}
	if (CHECK_ST(gnn_graph_remove_self_loops(g, &h), GNN_OK)) {
		CHECK(eqf(gnn_graph_weight(h), (const float[]){0.5f, 2, 4}, 3));
		gnn_graph_destroy(h);
	}
	if (CHECK_ST(gnn_graph_add_self_loops(g, &h), GNN_OK)) {
		CHECK(eqf(gnn_graph_weight(h), (const float[]){3, 0.5f, 2, 4, 5, 7, 1, 1, 1, 1}, 10));
		gnn_graph_destroy(h);
	}
	/* the source is untouched */
	CHECK(eq64(gnn_graph_src(g), src, 6) && eqf(gnn_graph_weight(g), w, 6));
	gnn_graph_destroy(g);
}

/* GCNConv's normalization of a triangle-ish graph, by hand */
static void
test_gcn_norm(void)
{
	static const int64_t src[] = {0, 1, 2}, dst[] = {1, 2, 1};
	gnn_graph *g = mk(src, dst, 3, 3), *h;
	float f[6];

	if (!g)
		return;
	/*
	** unweighted, with remaining loops: edges 0->1, 1->2, 2->1, 0->0, 1->1, 2->2;
	** in-degrees 1, 3, 2.
	*/
	if (CHECK_ST(gnn_graph_add_remaining_self_loops(g, 1, &h), GNN_OK)) {
		gnn_graph_gcn_norm(h, f);
		CHECK(nearf(f, (const double[]){1 / sqrt(3), 1 / sqrt(6), 1 / sqrt(6), 1, 1.0 / 3, 0.5}, 6));
		gnn_graph_in_degree(h, f);
		CHECK(eqf(f, (const float[]){1, 3, 2}, 3));
		gnn_graph_destroy(h);
	}
	/*
	** weighted 2, 0.5, 1 and fill 1: deg = {1, 2+1+1, 0.5+1} = {1, 4, 1.5},
	** dis = {1, 1/2, 1/sqrt(1.5)}.
	*/
	CHECK_ST(gnn_graph_set_edge_weight(g, (const float[]){2, 0.5f, 1}), GNN_OK);
	if (CHECK_ST(gnn_graph_add_remaining_self_loops(g, 1, &h), GNN_OK)) {
		double d2 = 1 / sqrt(1.5);
		gnn_graph_gcn_norm(h, f);
		CHECK(nearf(f, (const double[]){1 * 2 * 0.5, 0.5 * 0.5 * d2, d2 * 1 * 0.5,
			1, 0.25, d2 * d2}, 6));
		gnn_graph_destroy(h);
	}
	/* improved=True's fill: deg = {2, 5, 2.5} */
	if (CHECK_ST(gnn_graph_add_remaining_self_loops(g, 2, &h), GNN_OK)) {
		gnn_graph_gcn_norm(h, f);
		CHECK(nearf(f, (const double[]){2 / sqrt(10), 0.5 / sqrt(12.5), 1 / sqrt(12.5),
			1, 0.4, 0.8}, 6));
		gnn_graph_destroy(h);
	}
	/*
	** zero weights make deg 0: masked to 0, not inf; a negative deg gives NaN
	** as in PyG: deg = {0, 0, -1}, so both edges touching node 2 are NaN
	*/
	CHECK_ST(gnn_graph_set_edge_weight(g, (const float[]){0, -1, 0}), GNN_OK);
	gnn_graph_gcn_norm(g, f);
	CHECK(eqf(f, (const float[]){0, NAN, NAN}, 3));
	/* NaN weights propagate */
	CHECK_ST(gnn_graph_set_edge_weight(g, (const float[]){NAN, 1, 1}), GNN_OK);
	gnn_graph_gcn_norm(g, f);
	CHECK(isnan(f[0]) && isnan(f[1]) && isnan(f[2]));
	gnn_graph_edge_weight(g, f);
	CHECK(isnan(f[0]) && f[1] == 1);
	gnn_graph_destroy(g);
}

static void
test_segment_plan(void)
{
	static const int64_t idx[] = {2, 0, 2, 1, 0, 2};
	int64_t rp[5], order[6];

	CHECK_ST(gnn_segment_plan(idx, 6, 4, rp, order), GNN_OK);
	CHECK(eq64(rp, (const int64_t[]){0, 2, 3, 6, 6}, 5));
	CHECK(eq64(order, (const int64_t[]){1, 4, 3, 0, 2, 5}, 6));
	/* out of range: named, and the outputs are zeroed */
	CHECK_ST(gnn_segment_plan((const int64_t[]){0, 1, 3, 9}, 4, 3, rp, order), GNN_ERR_RANGE);
	CHECK_MSG("entry 2 is 3, outside [0, 3)");
	CHECK(eq64(rp, (const int64_t[]){0, 0, 0, 0}, 4) && eq64(order, (const int64_t[]){0, 0, 0, 0}, 4));
	CHECK_ST(gnn_segment_plan((const int64_t[]){-1}, 1, 3, rp, order), GNN_ERR_RANGE);
	CHECK_MSG("entry 0 is -1");
	CHECK_ST(gnn_segment_plan((const int64_t[]){0}, 1, 0, rp, order), GNN_ERR_RANGE);
	CHECK_ST(gnn_segment_plan(idx, -1, 4, rp, order), GNN_ERR_ARG);
	CHECK_ST(gnn_segment_plan(idx, 6, -1, rp, order), GNN_ERR_ARG);
	CHECK_ST(gnn_segment_plan(idx, 6, INT64_MAX, rp, order), GNN_ERR_ARG);
	CHECK_ST(gnn_segment_plan(NULL, 6, 4, rp, order), GNN_ERR_ARG);
	CHECK_ST(gnn_segment_plan(idx, 6, 4, NULL, order), GNN_ERR_ARG);
	CHECK_ST(gnn_segment_plan(idx, 6, 4, rp, NULL), GNN_ERR_ARG);
}

/* a random multigraph with loops, against naive recomputation */
static void
test_random(void)
{
	enum { N = 300, E = 5000 };
	int64_t *src = malloc(E * sizeof *src), *dst = malloc(E * sizeof *dst), rp[N + 1];
	int64_t *order = malloc(E * sizeof *order);
	float *w = malloc(E * sizeof *w), *f = malloc((E + N) * sizeof *f);
	double deg[N], *want = malloc((E + N) * sizeof *want);
	unsigned x = 12345;
	gnn_graph *g, *h;

	for (int e = 0; e < E; e++) {
		x ^= x << 13, x ^= x >> 17, x ^= x << 5;
		src[e] = x % N;
		/* skewed targets, some loops, nodes >= 290 never targets */
		dst[e] = x >> 16 & 7 ? (x >> 8) % 290 % ((x >> 20) % 290 + 1) : src[e];
		w[e] = (float)((x >> 4) % 1000) / 250.0f;
	}
	if (!(g = mk(src, dst, E, N)))
		goto out;
	CHECK(csr_ok(g));
	CHECK_ST(gnn_segment_plan(dst, E, N, rp, order), GNN_OK);
	CHECK(eq64(rp, gnn_graph_rowptr(g), N + 1) && eq64(order, gnn_graph_perm(g), E));
	CHECK_ST(gnn_graph_set_edge_weight(g, w), GNN_OK);
	if (!CHECK_ST(gnn_graph_add_remaining_self_loops(g, 1, &h), GNN_OK))
		goto done;
	CHECK(csr_ok(h) && gnn_graph_num_edges(h) <= E + N);
	/* interp.c's gcn_norm, in double */
	{
		const int64_t *s = gnn_graph_src(h), *d = gnn_graph_dst(h);
		const float *hw = gnn_graph_weight(h);
		int64_t eh = gnn_graph_num_edges(h);
		memset(deg, 0, sizeof deg);
		for (int64_t e = 0; e < eh; e++)
			deg[d[e]] += hw[e];
		for (int i = 0; i < N; i++) {
			deg[i] = pow(deg[i], -0.5);
			if (isinf(deg[i]))
				deg[i] = 0;
		}
		for (int64_t e = 0; e < eh; e++)
			want[e] = (float)(deg[s[e]] * hw[e] * deg[d[e]]);
		gnn_graph_gcn_norm(h, f);
		for (int64_t e = 0; e < eh; e++)
			if (!CHECK(f[e] == (float)want[e])) {
				printf("  edge %lld: %.9g, want %.9g\n", (long long)e, f[e], want[e]);
				break;
			}
		/* every node has exactly one loop, the last of g's if it had any */
		for (int64_t e = eh - N; e < eh; e++)
			CHECK(s[e] == e - (eh - N) && d[e] == s[e]);
		for (int64_t e = 0; e < eh - N; e++)
			CHECK(s[e] != d[e]);
	}
	gnn_graph_destroy(h);
done:
	gnn_graph_destroy(g);
out:
	free(src), free(dst), free(order), free(w), free(f), free(want);
}

/* everything that allocates, for the failing-allocator sweep */
static gnn_status
op_all(void *ctx)
{
	static const int64_t ei[] = {0, 1, 2, 2, 1, 2, 0, 2};
	static const float w[] = {1, 2, 3, 4};
	static const int32_t b[] = {0, 0, 1};
	gnn_graph *g = NULL, *h[3] = {NULL, NULL, NULL};
	gnn_status s;

	(void)ctx;
	if ((s = gnn_graph_from_edge_index(&g, ei, GNN_I64, 4, 3)) != GNN_OK)
		return s;
	if ((s = gnn_graph_set_edge_weight(g, w)) != GNN_OK
	    || (s = gnn_graph_set_batch(g, b, GNN_I32, 2)) != GNN_OK
	    || (s = gnn_graph_set_edge_weight(g, w)) != GNN_OK
	    || (s = gnn_graph_add_self_loops(g, &h[0])) != GNN_OK
	    || (s = gnn_graph_remove_self_loops(g, &h[1])) != GNN_OK
	    || (s = gnn_graph_add_remaining_self_loops(h[0], 0.5f, &h[2])) != GNN_OK)
		goto out;
	/* the host CSRs, built on first use, may fail too */
	if (!gnn_graph_rowptr(g) || !gnn_graph_rowptr(h[2]))
		s = GNN_ERR_MEM;
out:
	/* a failed setter leaves the graph as it was (its CSR, where one
	 * can be built now) */
	if (s == GNN_ERR_MEM && g) {
		CHECK(gnn_graph_num_nodes(g) == 3 && (!gnn_graph_rowptr(g) || csr_ok(g)));
		CHECK(gnn_graph_weight(g) == NULL || gnn_graph_weight(g)[3] == 4);
	}
	for (int i = 0; i < 3; i++)
		gnn_graph_destroy(h[i]);
	gnn_graph_destroy(g);
	return s;
}

static gnn_status
op_empty(void *ctx)
{
	gnn_graph *g, *h = NULL;
	gnn_status s;

	(void)ctx;
	if ((s = gnn_graph_from_edge_index(&g, NULL, GNN_I32, 0, 0)) != GNN_OK)
		return s;
	if ((s = gnn_graph_set_edge_weight(g, NULL)) == GNN_OK
	    && (s = gnn_graph_add_remaining_self_loops(g, 1, &h)) == GNN_OK)
		gnn_graph_destroy(h);
	gnn_graph_destroy(g);
	return s;
}

static void
test_oom(void)
{
	CHECK(check_oom("graph calls", op_all, NULL) >= 10);
	CHECK(check_oom("empty graph calls", op_empty, NULL) >= 4);
}

/* gnn_graph_read_npy: the file's dtype and shape are checked, the node
 * count defaults to the largest index + 1, bad indices keep their message */
static void
test_read_npy(void)
{
	int32_t ei32[6] = {0, 4, 2, 1, 1, 3};
	float x[4] = {0};
	gnn_array a = {GNN_I32, 2, {2, 3}, ei32, sizeof ei32}, f = {GNN_F32, 2, {2, 2}, x, sizeof x};
	gnn_graph *g = NULL;

	CHECK_ST(gnn_npy_write(tmppath("ei.npy"), &a), GNN_OK);
	CHECK_ST(gnn_graph_read_npy(&g, tmppath("ei.npy"), -1), GNN_OK);
	CHECK(g && gnn_graph_num_nodes(g) == 5 && gnn_graph_num_edges(g) == 3);
	CHECK(eq64(gnn_graph_src(g), (const int64_t[]){0, 4, 2}, 3) && eq64(gnn_graph_dst(g), (const int64_t[]){1, 1, 3}, 3));
	gnn_graph_destroy(g);
	CHECK_ST(gnn_graph_read_npy(&g, tmppath("ei.npy"), 9), GNN_OK);
	CHECK(g && gnn_graph_num_nodes(g) == 9);
	gnn_graph_destroy(g);
	CHECK_ST(gnn_graph_read_npy(&g, tmppath("ei.npy"), 4), GNN_ERR_RANGE);
	CHECK(g == NULL);
	CHECK_MSG("source of edge 1 is 4, outside [0, 4)");
	CHECK_ST(gnn_npy_write(tmppath("x.npy"), &f), GNN_OK);
	CHECK_ST(gnn_graph_read_npy(&g, tmppath("x.npy"), -1), GNN_ERR_SHAPE);
	CHECK_MSG("x.npy is not an edge_index (int32 or int64, shape [2, E])");
	CHECK_ST(gnn_graph_read_npy(&g, tmppath("missing.npy"), -1), GNN_ERR_IO);
	CHECK_ST(gnn_graph_read_npy(NULL, tmppath("ei.npy"), -1), GNN_ERR_ARG);

	/* fuzz_graph's find (tests/fuzz/regress/edge-index-max.npy): an index of
	 * INT64_MAX overflowed the inferred node count (UBSan); no count holds it */
	{
		int64_t big[4] = {0, 1, 2, INT64_MAX};
		gnn_array b = {GNN_I64, 2, {2, 2}, big, sizeof big};
		CHECK_ST(gnn_npy_write(tmppath("big.npy"), &b), GNN_OK);
		CHECK_ST(gnn_graph_read_npy(&g, tmppath("big.npy"), -1), GNN_ERR_RANGE);
		CHECK(g == NULL);
		CHECK_MSG("big.npy: edge_index: target of edge 1 is 9223372036854775807: no node count holds it");
		big[3] = INT64_MAX - 1;   /* the largest that one does; too many to address */
		CHECK_ST(gnn_npy_write(tmppath("big.npy"), &b), GNN_OK);
		CHECK_ST(gnn_graph_read_npy(&g, tmppath("big.npy"), -1), GNN_ERR_SHAPE);
		CHECK(g == NULL);
		CHECK_MSG("too many to address");
	}
}

/* a relation: sources of 4 nodes of one type, targets of 2 of another */
static void
test_relation(void)
{
	const int64_t ei[2 * 3] = {0, 3, 3, 1, 0, 1}, bad[2 * 2] = {0, 1, 2, 0};
	float deg[4];
	gnn_graph *g, *o = NULL;

	CHECK_ST(gnn_graph_relation_from_edge_index(&g, bad, GNN_I64, 2, 4, 2), GNN_ERR_RANGE);
	CHECK_MSG("edge_index: target of edge 0 is 2, outside [0, 2)");
	CHECK_ST(gnn_graph_relation_from_edge_index(&g, ei, GNN_I64, 3, 3, 2), GNN_ERR_RANGE);
	CHECK_MSG("edge_index: source of edge 1 is 3, outside [0, 3)");
	CHECK_ST(gnn_graph_relation_from_edge_index(&g, ei, GNN_I64, 3, -1, 2), GNN_ERR_ARG);
	if (!CHECK_ST(gnn_graph_relation_from_edge_index(&g, ei, GNN_I64, 3, 4, 2), GNN_OK))
		return;
	CHECK(gnn_graph_num_nodes(g) == 2 && gnn_graph_num_src_nodes(g) == 4 && gnn_graph_num_edges(g) == 3);
	/* out-degrees per source node (4), in-degrees per target node (2) */
	gnn_graph_out_degree(g, deg);
	CHECK(deg[0] == 1 && deg[1] == 0 && deg[2] == 0 && deg[3] == 2);
	gnn_graph_in_degree(g, deg);
	CHECK(deg[0] == 1 && deg[1] == 2);
	CHECK(gnn_graph_rowptr(g)[2] == 3);
	/* ops that pair a node with itself refuse it */
	CHECK_ST(gnn_graph_add_self_loops(g, &o), GNN_ERR_ARG);
	CHECK_MSG("add_self_loops: a relation (4 -> 2 nodes) has no self loops");
	CHECK_ST(gnn_graph_remove_self_loops(g, &o), GNN_ERR_ARG);
	CHECK(o == NULL);
	gnn_graph_destroy(g);
	/* one node type: the source count is the node count */
	CHECK_ST(gnn_graph_from_edge_index(&g, ei, GNN_I64, 3, 4), GNN_OK);
	CHECK(gnn_graph_num_src_nodes(g) == 4);
	gnn_graph_destroy(g);
}

int
main(int argc, char **argv)
{
	(void)argc, (void)argv;
	test_validation();
	test_relation();
	test_setters();
	test_empty();
	test_csr_degrees();
	test_derived();
	test_gcn_norm();
	test_segment_plan();
	test_random();
	mktmpdir();
	test_read_npy();
	test_oom();
	rmtmpdir();
	return summary();
}
