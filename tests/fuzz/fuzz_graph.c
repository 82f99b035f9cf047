/*
 * libFuzzer target: an edge_index .npy file through gnn_graph_read_npy,
 * then what binding a model does with the graph: the CSR, the degrees,
 * gcn_norm (unweighted and weighted) and the derived graphs.
 *
 * The node count is inferred (num_nodes < 0, the largest index + 1), so
 * that the file alone decides the graph; reading it again with one node
 * fewer must fail with GNN_ERR_RANGE.  A graph that reads is checked
 * against its definition: every index in [0, N); the CSR's rows bound
 * each target's edges in edge order (a stable sort); in-degrees and
 * out-degrees sum to E; add_self_loops adds N edges, remove_self_loops
 * leaves no loop, add_remaining_self_loops leaves exactly one per node.
 * Graphs that need more than FUZZ_ALLOC_MAX bytes (loader.h; 1 MiB here,
 * some 40000 nodes) must fail with GNN_ERR_MEM instead.
 */
#define _GNU_SOURCE
#define FUZZ_ALLOC_MAX (1u << 20)
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "loader.h"

/* the CSR by target: row i holds i's in-edges in increasing edge id */
static void
checkcsr(const gnn_graph *g)
{
	int64_t n = gnn_graph_num_nodes(g), e = gnn_graph_num_edges(g);
	const int64_t *rowptr = gnn_graph_rowptr(g), *perm = gnn_graph_perm(g);
	const int64_t *dst = gnn_graph_dst(g);

	if (!rowptr) {
		FUZZ_CHECK(strstr(gnn_errmsg(), "out of memory") != NULL);
		return;
	}
	FUZZ_CHECK(perm != NULL && rowptr[0] == 0 && rowptr[n] == e);
	for (int64_t i = 0; i < n; i++) {
		FUZZ_CHECK(rowptr[i] <= rowptr[i + 1]);
		for (int64_t k = rowptr[i]; k < rowptr[i + 1]; k++) {
			FUZZ_CHECK(perm[k] >= 0 && perm[k] < e && dst[perm[k]] == i);
			FUZZ_CHECK(k == rowptr[i] || perm[k - 1] < perm[k]);
		}
	}
}

/* in- and out-degrees each sum to E; gcn_norm is finite and non-negative */
static void
checkdegrees(const gnn_graph *g)
{
	int64_t n = gnn_graph_num_nodes(g), e = gnn_graph_num_edges(g);
	float *in = malloc((size_t)n * sizeof *in + 1), *out = malloc((size_t)n * sizeof *out + 1);
	float *norm = malloc((size_t)e * sizeof *norm + 1);
	double sin = 0, sout = 0;

	if (!in || !out || !norm)
		abort();
	gnn_graph_in_degree(g, in);
	gnn_graph_out_degree(g, out);
	for (int64_t i = 0; i < n; i++)
		sin += in[i], sout += out[i];
	FUZZ_CHECK(sin == (double)e && sout == (double)e);
	gnn_graph_gcn_norm(g, norm);
	for (int64_t k = 0; k < e; k++)
		FUZZ_CHECK(isfinite(norm[k]) && norm[k] >= 0 && norm[k] <= 1);
	free(norm);
	free(out);
	free(in);
}

/* loops: the number of edges i -> i for each node, summed over the nodes */
static int64_t
loops(const gnn_graph *g, int64_t *maxper)
{
	int64_t n = gnn_graph_num_nodes(g), e = gnn_graph_num_edges(g), total = 0;
	const int64_t *src = gnn_graph_src(g), *dst = gnn_graph_dst(g);
	int64_t *per = calloc((size_t)n + 1, sizeof *per);

	if (!per)
		abort();
	*maxper = 0;
	for (int64_t k = 0; k < e; k++)
		if (src[k] == dst[k]) {
			total++;
			if (++per[src[k]] > *maxper)
				*maxper = per[src[k]];
		}
	for (int64_t i = 0; i < n; i++)
		if (per[i] == 0)
			*maxper = -1;   /* a node without a loop */
	free(per);
	return total;
}

/* the derived graphs, each checked and then bound as their own graphs */
static void
checkderived(const gnn_graph *g)
{
	int64_t n = gnn_graph_num_nodes(g), e = gnn_graph_num_edges(g), maxper, before;
	gnn_graph *d;
	gnn_status s;

	before = loops(g, &maxper);
	if ((s = gnn_graph_add_self_loops(g, &d)) == GNN_OK) {
		FUZZ_CHECK(gnn_graph_num_edges(d) == e + n && loops(d, &maxper) == before + n);
		checkcsr(d);
		gnn_graph_destroy(d);
	} else
		FUZZ_CHECK(s == GNN_ERR_MEM && d == NULL);
	if ((s = gnn_graph_remove_self_loops(g, &d)) == GNN_OK) {
		FUZZ_CHECK(gnn_graph_num_edges(d) == e - before && loops(d, &maxper) == 0);
		gnn_graph_destroy(d);
	} else
		FUZZ_CHECK(s == GNN_ERR_MEM && d == NULL);
	if ((s = gnn_graph_add_remaining_self_loops(g, 2.0f, &d)) == GNN_OK) {
		FUZZ_CHECK(loops(d, &maxper) == n && (n == 0 || maxper == 1));
		FUZZ_CHECK(gnn_graph_num_edges(d) == e - before + n);
		checkcsr(d);
		gnn_graph_destroy(d);
	} else
		FUZZ_CHECK(s == GNN_ERR_MEM && d == NULL);
}

/* the graph, weighted: gcn_norm with unit weights is the unweighted one */
static void
checkweighted(gnn_graph *g)
{
	int64_t e = gnn_graph_num_edges(g);
	float *w = malloc((size_t)e * sizeof *w + 1), *a = malloc((size_t)e * sizeof *a + 1);
	float *b = malloc((size_t)e * sizeof *b + 1);
	gnn_status s;

	if (!w || !a || !b)
		abort();
	for (int64_t k = 0; k < e; k++)
		w[k] = 1.0f;
	gnn_graph_gcn_norm(g, a);
	if ((s = gnn_graph_set_edge_weight(g, w)) == GNN_OK) {
		gnn_graph_gcn_norm(g, b);
		FUZZ_CHECK(e == 0 || memcmp(a, b, (size_t)e * sizeof *a) == 0);
	} else
		FUZZ_CHECK(s == GNN_ERR_MEM);
	free(b);
	free(a);
	free(w);
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	const char *path = fuzzfile(data, size);
	gnn_graph *g = (gnn_graph *)&g, *h;
	const int64_t *src, *dst;
	int64_t n, e;
	gnn_status s;

	if ((s = gnn_graph_read_npy(&g, path, -1)) != GNN_OK) {
		fuzzfailed(s);
		FUZZ_CHECK(g == NULL);
		fuzzdone();
		return 0;
	}
	n = gnn_graph_num_nodes(g);
	e = gnn_graph_num_edges(g);
	src = gnn_graph_src(g);
	dst = gnn_graph_dst(g);
	for (int64_t k = 0; k < e; k++)
		FUZZ_CHECK(src[k] >= 0 && src[k] < n && dst[k] >= 0 && dst[k] < n);
	FUZZ_CHECK(gnn_graph_weight(g) == NULL && gnn_graph_batch(g) == NULL);
	/* N is the least that holds every index */
	if (n > 0) {
		FUZZ_CHECK(gnn_graph_read_npy(&h, path, n - 1) == GNN_ERR_RANGE && h == NULL);
		FUZZ_CHECK(strstr(gnn_errmsg(), "outside [0, ") != NULL);
	}
	checkcsr(g);
	if (gnn_graph_rowptr(g)) {
		checkdegrees(g);
		checkderived(g);
		checkweighted(g);
	}
	gnn_graph_destroy(g);
	fuzzdone();
	return 0;
}
