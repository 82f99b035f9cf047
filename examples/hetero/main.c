/*
 * The to_hetero GraphSAGE (sage.gnn) from C: the graph files export.py
 * wrote (one edge_index per relation, one feature matrix per node type),
 * one gnn_graph per relation bound in the order the model's graph type
 * lists its edge types, a forward on the host, and the outputs set
 * beside PyG's.
 *
 *   ./hsage DIR      (DIR: export.py's output directory, weights DIR/sage.safetensors)
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>

#include "sage.h"

enum { NTYPE = 3, NREL = 5 };

static const char *const types[NTYPE] = {"author", "paper", "institution"};
/* the model's edge types, in its order, as indices into types */
static const struct { const char *name; int src, dst; } rels[NREL] = {
	{"author__writes__paper", 0, 1},
	{"paper__rev_writes__author", 1, 0},
	{"paper__cites__paper", 1, 1},
	{"author__affiliated_with__institution", 0, 2},
	{"institution__employs__author", 2, 0},
};

/* DIR/fmt with name in it (in a buffer that the next call reuses) */
static const char *
path(const char *dir, const char *fmt, const char *name)
{
	static char buf[1024];
	char file[256];

	snprintf(file, sizeof file, fmt, name);
	snprintf(buf, sizeof buf, "%s/%s", dir, file);
	return buf;
}

static gnn_array
load(const char *dir, const char *fmt, const char *name)
{
	gnn_array a;

	gnn_check(gnn_npy_read(path(dir, fmt, name), &a));
	return a;
}

int
main(int argc, char **argv)
{
	const char *dir = argc > 1 ? argv[1] : "out";
	gnn_array x[NTYPE], ei[NREL], ref;
	gnn_graph *g[NREL];
	float *out[NTYPE];
	HSAGE *m;
	int t, r;

	for (t = 0; t < NTYPE; t++)
		x[t] = load(dir, "x_%s.npy", types[t]);
	for (r = 0; r < NREL; r++) {
		ei[r] = load(dir, "%s.npy", rels[r].name);
		gnn_check(gnn_graph_relation_from_edge_index(&g[r], ei[r].data, ei[r].dtype, ei[r].shape[1],
		                                             x[rels[r].src].shape[0], x[rels[r].dst].shape[0]));
	}
	gnn_check(HSAGE_create(&m));
	gnn_check(HSAGE_load_weights(m, path(dir, "%s.safetensors", "sage")));
	gnn_check(HSAGE_bind_graphs(m, g, NREL));
	for (t = 0; t < NTYPE; t++)
		out[t] = malloc((size_t)x[t].shape[0] * 4 * sizeof(float));
	gnn_check(HSAGE_forward_host(m, x[0].data, x[1].data, x[2].data, out[0], out[1], out[2]));
	for (t = 0; t < NTYPE; t++) {
		double err = 0, big = 0;
		int64_t i, n = x[t].shape[0] * 4;

		ref = load(dir, "pyg_sage_%s.npy", types[t]);
		for (i = 0; i < n; i++) {
			err = fmax(err, fabs(out[t][i] - ((float *)ref.data)[i]));
			big = fmax(big, fabs(((float *)ref.data)[i]));
		}
		printf("%s: %lld x 4, out[0] = %.6f, %s\n", types[t], (long long)x[t].shape[0], out[t][0],
		       err <= 1e-5 * big ? "within 1e-5 of PyG" : "DIFFERS from PyG");
		gnn_array_free(&ref);
		free(out[t]);
	}
	HSAGE_destroy(m);
	for (r = 0; r < NREL; r++) {
		gnn_graph_destroy(g[r]);
		gnn_array_free(&ei[r]);
	}
	for (t = 0; t < NTYPE; t++)
		gnn_array_free(&x[t]);
	return 0;
}
