/*
** main.c: train the GCN example on Cora from scratch, in C: gnncc
** compiled gcn_train.gnn (the model and its train item) into an object
** whose API trains; no Python anywhere.
**
**   ./gcn_train [DATA_DIR [OUT.safetensors [SEED [EPOCHS]]]]
**
** Design: the generated API and nothing else.  GCN_init_weights draws
** PyG's init from the seed, GCN_bind binds Cora's graph, and each
** GCN_train_step is one epoch of full-graph training (forward with
** dropout, nll over the train mask, backward, Adam) on the device;
** its inputs are device pointers for the cuda target, as forward's, so
** x, y and the mask are copied there once (gnn_prog_to_device: plain
** copies on the cpu target).  Then GCN_forward_host scores the test
** split, and GCN_save_weights writes weights that PyG loads.
*/
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cora.h"
#include "gcn_train.h"

int
main(int argc, char **argv)
{
	const char *dir = argc > 1 ? argv[1] : "../../data/cora", *save = argc > 2 ? argv[2] : NULL;
	uint64_t seed = argc > 3 ? strtoull(argv[3], NULL, 10) : GCN_desc.train->seed;
	int64_t features = GCN_desc.inputs[0].shape[1], classes = GCN_desc.outputs[0].shape[1];
	char *end = NULL;
	int64_t epochs = argc > 4 ? strtoll(argv[4], &end, 10) : GCN_desc.train->epochs, e;
	gnn_array mask;
	cora data;
	GCN *model;
	void *dx, *dy, *dmask;
	float *out, loss = 0;
	double t0, t, acc;
	int bad;

	bad = argc > 5 || epochs < 0 || (end && (end == argv[4] || *end));
	if (bad || (argc > 1 && (!strcmp(argv[1], "-h") || !strcmp(argv[1], "--help")))) {
		fprintf(bad ? stderr : stdout, "usage: %s [DATA_DIR [OUT.safetensors [SEED [EPOCHS]]]]\n", argv[0]);
		return bad ? 2 : 0;
	}
	gnn_check(cora_load(dir, features, &data));
	gnn_check(cora_train_mask(dir, &data, &mask));
	printf("%s (%s target): training on %lld nodes, %lld edges, %lld epochs, seed %llu\n", GCN_desc.name,
		GCN_TARGET == GNN_TARGET_CUDA ? "cuda" : "cpu", (long long)data.num_nodes,
		(long long)gnn_graph_num_edges(data.graph), (long long)epochs, (unsigned long long)seed);
	fflush(stdout);

	gnn_check(GCN_create(&model));
	gnn_check(GCN_init_weights(model, seed));
	gnn_check(GCN_bind(model, data.graph));
	gnn_check(gnn_prog_to_device(model, data.x, (size_t)(data.num_nodes * features) * sizeof(float), &dx));
	gnn_check(gnn_prog_to_device(model, data.y, (size_t)data.num_nodes * sizeof(int64_t), &dy));
	gnn_check(gnn_prog_to_device(model, mask.data, (size_t)data.num_nodes, &dmask));
	t0 = cora_now();
	for (e = 0; e < epochs; e++) {
		gnn_check(GCN_train_step(model, dx, dy, dmask, &loss));
		if ((e + 1) % 20 == 0 || e == 0 || epochs <= 20)   /* a short run: every epoch */
			printf("epoch %3lld  loss %.4f\n", (long long)e + 1, loss);
	}
	t = cora_now() - t0;

	out = malloc((size_t)(data.num_nodes * classes) * sizeof *out);
	if (!out) {
		fprintf(stderr, "%s: out of memory\n", argv[0]);
		return 1;
	}
	gnn_check(GCN_forward_host(model, data.x, out));
	gnn_check(cora_accuracy(&data, out, classes, &acc));
	printf("test accuracy: %.1f%%\n", acc);
	printf("training: %.2f ms an epoch (%lld epochs)\n", t * 1e3 / (double)(epochs ? epochs : 1), (long long)epochs);
	if (save) {
		gnn_check(GCN_save_weights(model, save));
		printf("weights: %s\n", save);
	}
	free(out);
	gnn_prog_free_device(model, dx);
	gnn_prog_free_device(model, dy);
	gnn_prog_free_device(model, dmask);
	GCN_destroy(model);
	gnn_array_free(&mask);
	cora_free(&data);
	return 0;
}
