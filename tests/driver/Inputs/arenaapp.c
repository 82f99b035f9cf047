/*
 * arenaapp EDGE_INDEX.npy: the arena a compiled model allocates when it
 * binds that graph, for report.test to compare with --report=memory's
 * figure.  The generated source is included (MODEL_SRC, a cpu target
 * .c), so that the model's struct, and its arenasize, are visible;
 * MODEL is the model's name.
 */
#include <stdio.h>

#include MODEL_SRC

#define CAT_(a, b) a##b
#define CAT(a, b) CAT_(a, b)

int
main(int argc, char **argv)
{
	gnn_array ei;
	gnn_graph *g = NULL;
	MODEL *m = NULL;
	int64_t n = 0, k;

	if (argc != 2) {
		fprintf(stderr, "usage: arenaapp EDGE_INDEX.npy\n");
		return 2;
	}
	gnn_check(gnn_npy_read(argv[1], &ei));
	for (k = 0; k < 2 * ei.shape[1]; k++) {
		int64_t x = ei.dtype == GNN_I64 ? ((int64_t *)ei.data)[k] : ((int32_t *)ei.data)[k];
		if (x >= n)
			n = x + 1;
	}
	gnn_check(gnn_graph_from_edge_index(&g, ei.data, ei.dtype, ei.shape[1], n));
	gnn_check(CAT(MODEL, _create)(&m));
	gnn_check(CAT(MODEL, _bind)(m, g));
	printf("bound arena: %zu bytes\n", m->rt.arenasize);
	CAT(MODEL, _destroy)(m);
	gnn_graph_destroy(g);
	gnn_array_free(&ei);
	return 0;
}
