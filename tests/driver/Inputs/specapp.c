/*
 * A Tiny (Inputs/tiny.gnn) compiled with --specialize=N=6,E=8: bind
 * takes the graph it was specialized for and refuses others with a
 * message that names the size; the model stays usable after a refusal.
 */
#include <stdio.h>

#include "tiny.h"

static void
say(const char *what, gnn_status s)
{
	printf("%s: %s%s%s\n", what, gnn_status_name(s), s ? ": " : "", s ? gnn_errmsg() : "");
}

/* a ring over n nodes with e edges (e >= n: the rest are self loops) */
static gnn_graph *
ring(int64_t n, int64_t e)
{
	int64_t ei[2 * 64], k;
	gnn_graph *g = NULL;

	for (k = 0; k < e; k++) {
		ei[k] = k < n ? k : k - n;
		ei[e + k] = k < n ? (k + 1) % n : k - n;
	}
	gnn_check(gnn_graph_from_edge_index(&g, ei, GNN_I64, e, n));
	return g;
}

int
main(void)
{
	Tiny *m = NULL;
	gnn_graph *ok = ring(6, 8), *edges = ring(6, 7), *nodes = ring(7, 8);
	float x[6 * 4], out[6 * 2];
	int i;

	for (i = 0; i < 6 * 4; i++)
		x[i] = (float)(i % 5) - 2;
	gnn_check(Tiny_create(&m));
	say("bind 6 nodes, 8 edges", Tiny_bind(m, ok));
	say("forward", Tiny_forward(m, x, out));
	say("bind 6 nodes, 7 edges", Tiny_bind(m, edges));
	say("forward after a refused bind", Tiny_forward(m, x, out));
	say("bind 7 nodes, 8 edges", Tiny_bind(m, nodes));
	say("bind 6 nodes, 8 edges again", Tiny_bind(m, ok));
	say("forward again", Tiny_forward(m, x, out));
	Tiny_destroy(m);
	gnn_graph_destroy(ok);
	gnn_graph_destroy(edges);
	gnn_graph_destroy(nodes);
	return 0;
}
