/*
 * The generated API as an application sees it: two models (GCN and SAGE)
 * linked into one program; errors that leave the model usable (forward
 * before bind, a missing or mismatched weights file, NULL arguments, a
 * bad graph); rebinding graphs of other sizes with the same object; and
 * bitwise-identical results when a graph is bound again.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "gcn.h"
#include "sage.h"

static void
say(const char *what, gnn_status s)
{
	printf("%s: %s%s%s\n", what, gnn_status_name(s), s ? ": " : "", s ? gnn_errmsg() : "");
}

static float *
features(const gnn_array *x, int64_t n)
{
	float *f = malloc((size_t)(n ? n : 1) * 1433 * sizeof *f);
	int64_t i, j;
	double sum;

	for (i = 0; i < n; i++) {
		for (sum = 0, j = 0; j < 1433; j++)
			sum += ((uint8_t *)x->data)[i * 1433 + j];
		for (j = 0; j < 1433; j++)
			f[i * 1433 + j] = (float)(((uint8_t *)x->data)[i * 1433 + j] / (sum > 1 ? sum : 1));
	}
	return f;
}

static double
accuracy(const float *out, const gnn_array *y, const gnn_array *mask)
{
	int64_t i, c, best, n = y->shape[0], right = 0, total = 0;

	for (i = 0; i < n; i++) {
		if (!((uint8_t *)mask->data)[i])
			continue;
		for (best = 0, c = 1; c < 7; c++)
			if (out[i * 7 + c] > out[i * 7 + best])
				best = c;
		right += best == ((int64_t *)y->data)[i];
		total++;
	}
	return 100.0 * right / total;
}

int
main(int argc, char **argv)
{
	const char *data = argv[1], *gcnw = argv[2], *sagew = argv[3];
	char path[4096];
	gnn_array ei, x, y, mask;
	gnn_graph *g, *small, *bad;
	GCN *m;
	SAGE *s;
	float *f, *out, *out2;
	int64_t n, sub[2][4] = {{0, 1, 2, 3}, {1, 0, 3, 9}};

	(void)argc;
	snprintf(path, sizeof path, "%s/edge_index.npy", data);
	gnn_check(gnn_npy_read(path, &ei));
	snprintf(path, sizeof path, "%s/x.npy", data);
	gnn_check(gnn_npy_read(path, &x));
	snprintf(path, sizeof path, "%s/y.npy", data);
	gnn_check(gnn_npy_read(path, &y));
	snprintf(path, sizeof path, "%s/test_mask.npy", data);
	gnn_check(gnn_npy_read(path, &mask));
	n = x.shape[0];
	f = features(&x, n);
	out = calloc((size_t)n * 7, sizeof *out);
	out2 = calloc((size_t)n * 7, sizeof *out2);
	gnn_check(gnn_graph_from_edge_index(&g, ei.data, GNN_I64, ei.shape[1], n));

	gnn_check(GCN_create(&m));
	say("forward before bind", GCN_forward_host(m, f, out));
	say("load missing file", GCN_load_weights(m, "/nonexistent/w.safetensors"));
	say("load SAGE weights into GCN", GCN_load_weights(m, sagew));
	say("load", GCN_load_weights(m, gcnw));
	say("bind NULL", GCN_bind(m, NULL));
	say("bind", GCN_bind(m, g));
	say("forward NULL input", GCN_forward_host(m, NULL, out));
	say("forward", GCN_forward_host(m, f, out));
	printf("GCN test accuracy: %.1f%%\n", accuracy(out, &y, &mask));

	/* a 10-node graph with the same object, then Cora again */
	say("bad graph", gnn_graph_from_edge_index(&bad, sub, GNN_I64, 4, 9));
	gnn_check(gnn_graph_from_edge_index(&small, sub, GNN_I64, 4, 10));
	say("bind small", GCN_bind(m, small));
	say("forward small", GCN_forward_host(m, f, out2));
	say("rebind", GCN_bind(m, g));
	say("forward again", GCN_forward_host(m, f, out2));
	printf("same bits: %s\n", memcmp(out, out2, (size_t)n * 7 * sizeof *out) == 0 ? "yes" : "no");

	/* a second model in the same program */
	gnn_check(SAGE_create(&s));
	say("SAGE load", SAGE_load_weights(s, sagew));
	say("SAGE bind", SAGE_bind(s, g));
	say("SAGE forward", SAGE_forward_host(s, f, out2));
	printf("SAGE rows finite: %s\n", out2[0] == out2[0] && out2[(n - 1) * 7] == out2[(n - 1) * 7] ? "yes" : "no");

	SAGE_destroy(s);
	GCN_destroy(m);
	gnn_graph_destroy(small);
	gnn_graph_destroy(g);
	gnn_array_free(&ei);
	gnn_array_free(&x);
	gnn_array_free(&y);
	gnn_array_free(&mask);
	free(f);
	free(out);
	free(out2);
	return 0;
}
