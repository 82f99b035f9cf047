/*
 * vendor-models.test's program: a GCN built with --vendor=cublas for the
 * emulated device, run with GNNEMU_VENDOR_FAIL=1, so that the process's
 * first cublasSgemm fails.  That is the first forward's, made while
 * forward's CUDA Graph is captured: the forward must fail with the
 * call's status, and the next forwards must not replay a graph without
 * the call, but capture anew and give the bits of a second instance's
 * forward that nothing failed in.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "gcn.h"

enum { N = 300, E = 1500, F = 1433, C = 7 };

static float x[N * F], a[N * C], b[N * C], c[N * C], ref[N * C];

static GCN *
model(gnn_graph *g)
{
	GCN *m;

	if (GCN_create(&m) != GNN_OK || GCN_init_weights(m, 5) != GNN_OK || GCN_bind(m, g) != GNN_OK) {
		printf("FAIL: %s\n", gnn_errmsg());
		exit(1);
	}
	return m;
}

int
main(void)
{
	static int64_t ei[2 * E];
	gnn_graph *g;
	GCN *m, *m2;
	gnn_status s;
	int i, finite = 1;

	srand(3);
	for (i = 0; i < 2 * E; i++)
		ei[i] = rand() % N;
	for (i = 0; i < N * F; i++)
		x[i] = rand() % 50 == 0 ? 1.0f : 0.0f;
	if (gnn_graph_from_edge_index(&g, ei, GNN_I64, E, N) != GNN_OK)
		return 1;
	m = model(g);
	s = GCN_forward_host(m, x, a);
	printf("first forward: %s: %s\n", s == GNN_OK ? "ok" : "failed", s == GNN_OK ? "" : gnn_errmsg());
	if (GCN_forward_host(m, x, b) != GNN_OK || GCN_forward_host(m, x, c) != GNN_OK) {
		printf("FAIL: %s\n", gnn_errmsg());
		return 1;
	}
	m2 = model(g);
	if (GCN_forward_host(m2, x, ref) != GNN_OK) {
		printf("FAIL: %s\n", gnn_errmsg());
		return 1;
	}
	for (i = 0; i < N * C; i++)
		finite &= isfinite(ref[i]);
	printf("reference finite: %s\n", finite ? "yes" : "no");
	printf("second forward: %s\n", memcmp(b, ref, sizeof b) ? "DIFFERENT" : "the reference's bits");
	printf("third forward: %s\n", memcmp(c, ref, sizeof c) ? "DIFFERENT" : "the reference's bits");
	GCN_destroy(m);
	GCN_destroy(m2);
	gnn_graph_destroy(g);
	return 0;
}
