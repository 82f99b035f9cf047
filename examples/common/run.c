/*
** run.c: the examples' main loop through a model's descriptor: create the
** model, load its weights, bind Cora's graph, run forward_host, report
** the test accuracy.  forward_host takes host pointers on either target
** (the cuda build copies through the device), so one program serves
** `make TARGET=cpu` and `make TARGET=cuda`; the descriptor gives the input
** width and the class count, so nothing here repeats a model's numbers.
** The first forward is a warm-up (and the output that is scored); the
** wall time printed is the mean of the RUNS calls after it.
*/
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cora.h"
#include "run.h"

#define RUNS 5

static void
usage(FILE *f, const char *argv0, const char *weights)
{
	fprintf(f, "usage: %s [DATA_DIR [WEIGHTS]]\n"
		"  DATA_DIR  a folder with x.npy, edge_index.npy, y.npy, test_mask.npy"
		" (default ../../data/cora)\n"
		"  WEIGHTS   the model's safetensors file (default %s)\n",
		argv0, weights);
}

int
run_example(const gnn_model_desc *d, const char *weights, int argc, char **argv)
{
	const char *dir = "../../data/cora";
	int64_t features = d->inputs[0].shape[1];   /* x: f32[N, features] */
	int64_t classes = d->outputs[0].shape[1];   /* out0: f32[N, classes] */
	cora data;
	void *model;
	const void *in[1];
	void *res[1];
	float *out;
	size_t n;
	double t0, acc;

	if (argc > 1 && (!strcmp(argv[1], "-h") || !strcmp(argv[1], "--help"))) {
		usage(stdout, argv[0], weights);
		return 0;
	}
	if (argc > 3) {
		usage(stderr, argv[0], weights);
		return 2;
	}
	if (argc > 1)
		dir = argv[1];
	if (argc > 2)
		weights = argv[2];

	gnn_check(cora_load(dir, features, &data));
	printf("%s (%s target): %lld nodes, %lld edges, %lld features, %lld test nodes\n",
		d->name, d->target == GNN_TARGET_CUDA ? "cuda" : "cpu",
		(long long)data.num_nodes, (long long)gnn_graph_num_edges(data.graph),
		(long long)data.num_features, (long long)data.num_test);
	fflush(stdout);   /* before any error on stderr */

	gnn_check(d->create(&model));
	gnn_check(d->load_weights(model, weights));
	gnn_check(d->bind(model, data.graph));
	n = (size_t)(data.num_nodes * classes);
	out = malloc((n ? n : 1) * sizeof *out);
	if (!out) {
		fprintf(stderr, "%s: out of memory for the output\n", argv[0]);
		return 1;
	}

	in[0] = data.x;
	res[0] = out;
	gnn_check(d->forward_host(model, in, res));
	gnn_check(cora_accuracy(&data, out, classes, &acc));
	t0 = cora_now();
	for (int i = 0; i < RUNS; i++)
		gnn_check(d->forward_host(model, in, res));
	printf("test accuracy: %.1f%%\n", acc);
	printf("forward_host wall time: %.3f ms (mean of %d runs after a warm-up)\n",
		(cora_now() - t0) * 1e3 / RUNS, RUNS);

	free(out);
	d->destroy(model);
	cora_free(&data);   /* after the model: a bound model uses the graph */
	return 0;
}
