/*
** main.c: the SAGE example: classify the nodes of Cora with sage.gnn,
** compiled ahead of time by gnncc, and report the test accuracy.
**
**   ./sage [DATA_DIR [WEIGHTS]]
**
** DATA_DIR defaults to ../../data/cora and WEIGHTS to sage.safetensors
** (seeded random weights, not trained: the accuracy is chance level),
** both relative to the current directory: run it from examples/sage
** (`make run` does).
**
** Design: the program is the generated API and nothing else: create the
** model, load its weights, bind the graph, run forward_host.
** forward_host takes host pointers on either target (the cuda build
** copies through the device), so this one file serves `make TARGET=cpu`
** and `make TARGET=cuda`.  The model's descriptor (SAGE_desc) gives the
** input width and the class count, so nothing here repeats sage.gnn's
** numbers.  Data loading, PyG's feature normalization and the accuracy
** are in ../common/cora.c, shared by the four examples.  The first
** forward is a warm-up (and the output that is scored); the wall time
** printed is the mean of the RUNS calls after it.
*/
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cora.h"
#include "sage.h"

#define RUNS 5

static void
usage(FILE *f, const char *argv0)
{
	fprintf(f, "usage: %s [DATA_DIR [WEIGHTS]]\n"
		"  DATA_DIR  a folder with x.npy, edge_index.npy, y.npy, test_mask.npy"
		" (default ../../data/cora)\n"
		"  WEIGHTS   the model's safetensors file (default sage.safetensors)\n",
		argv0);
}

int
main(int argc, char **argv)
{
	const char *dir = "../../data/cora";
	const char *weights = "sage.safetensors";
	int64_t features = SAGE_desc.inputs[0].shape[1];   /* x: f32[N, features] */
	int64_t classes = SAGE_desc.outputs[0].shape[1];   /* out0: f32[N, classes] */
	cora data;
	SAGE *model;
	float *out;
	size_t n;
	double t0, acc;

	if (argc > 1 && (!strcmp(argv[1], "-h") || !strcmp(argv[1], "--help"))) {
		usage(stdout, argv[0]);
		return 0;
	}
	if (argc > 3) {
		usage(stderr, argv[0]);
		return 2;
	}
	if (argc > 1)
		dir = argv[1];
	if (argc > 2)
		weights = argv[2];

	gnn_check(cora_load(dir, features, &data));
	printf("%s (%s target): %lld nodes, %lld edges, %lld features, %lld test nodes\n",
		SAGE_desc.name, SAGE_TARGET == GNN_TARGET_CUDA ? "cuda" : "cpu",
		(long long)data.num_nodes, (long long)gnn_graph_num_edges(data.graph),
		(long long)data.num_features, (long long)data.num_test);
	fflush(stdout);   /* before any error on stderr */

	gnn_check(SAGE_create(&model));
	gnn_check(SAGE_load_weights(model, weights));
	gnn_check(SAGE_bind(model, data.graph));
	n = (size_t)(data.num_nodes * classes);
	out = malloc((n ? n : 1) * sizeof *out);
	if (!out) {
		fprintf(stderr, "%s: out of memory for the output\n", argv[0]);
		return 1;
	}

	gnn_check(SAGE_forward_host(model, data.x, out));
	gnn_check(cora_accuracy(&data, out, classes, &acc));
	t0 = cora_now();
	for (int i = 0; i < RUNS; i++)
		gnn_check(SAGE_forward_host(model, data.x, out));
	printf("test accuracy: %.1f%%\n", acc);
	printf("forward_host wall time: %.3f ms (mean of %d runs after a warm-up)\n",
		(cora_now() - t0) * 1e3 / RUNS, RUNS);

	free(out);
	SAGE_destroy(model);
	cora_free(&data);   /* after the model: a bound model uses the graph */
	return 0;
}
