// memreport.test's program: the device memory a compiled model (its
// descriptor, DESC) holds on the emulated device once a graph is bound
// -- the bytes of its live allocations, 256-byte units as a GPU's
// allocator rounds them -- and the most it held at once from create to
// there, to compare with gnncc --report=memory's figures for that graph.
//
// usage: memreport EDGE_INDEX.npy
#include <cuda_runtime.h>
#include <stdio.h>

#include "gnnrt.h"

extern "C" const gnn_model_desc DESC;

#define CK(x) do { if ((x) != GNN_OK) { printf("FAIL: %s: %s\n", #x, gnn_errmsg()); return 1; } } while (0)

int
main(int argc, char **argv)
{
	gnnemu_stats before, after;
	gnn_graph *g = NULL;
	void *m = NULL;

	if (argc != 2) {
		fprintf(stderr, "usage: memreport EDGE_INDEX.npy\n");
		return 2;
	}
	CK(gnn_graph_read_npy(&g, argv[1], -1));
	gnnemu_get_stats(&before);
	gnnemu_reset_peak();
	CK(DESC.create(&m));
	CK(DESC.bind(m, g));
	gnnemu_get_stats(&after);
	printf("on the emulated device: held after bind %zu bytes; bind's peak %zu bytes\n",
	       after.live_bytes - before.live_bytes, after.peak_bytes - before.live_bytes);
	DESC.destroy(m);
	gnn_graph_destroy(g);
	gnnemu_get_stats(&after);
	if (after.live_bytes != before.live_bytes) {
		printf("FAIL: %zu bytes outlive the model\n", after.live_bytes - before.live_bytes);
		return 1;
	}
	return 0;
}
