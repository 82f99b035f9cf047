/*
** main.c: train the SAGE example in mini-batches with neighbour sampling,
** in C: the runtime's sampler (gnn_sampler_*) makes PyG NeighborLoader's
** batches, and the model gnncc compiled once trains on every one of them.
**
**   ./sage_mb [DATA_DIR [EPOCHS [BATCH [FANOUTS [MAX_BATCHES [SEED]]]]]]
**
** defaults: ../../data/cora, the train item's epochs, 512, "25,10", 0
** (no limit), the train item's seed.  DATA_DIR holds x, edge_index, y,
** train_mask and test_mask (.npy).  MAX_BATCHES > 0 stops after that
** many batches and skips the evaluation (a partial epoch of a large
** graph, to measure it).
**
** Design: the generated API and the sampler's, nothing else.  The seeds
** are the train mask's nodes; the sampler gathers each batch's rows of x
** and y and marks its seeds in a mask, so the train item's nll over the
** mask is the loss over the seeds.  A graph of the batches' capacity is
** bound first (and the training configured on it), so the model's
** memory is sized once; then each batch's subgraph is bound in place
** (bind walks the compiled bind plan; nothing is compiled) and trained
** on, while the sampler's producer thread samples the next batch.  Then
** the whole graph is bound and one forward scores the test split
** (layer-wise full-graph inference).  Inputs are device pointers for
** the cuda target: each batch's rows are copied there.
*/
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cora.h"
#include MODEL_H

/* a step input: host memory on the cpu target, a device copy on cuda */
static const void *
input(SAGE *m, const void *p, size_t n, void **tmp)
{
	if (SAGE_TARGET != GNN_TARGET_CUDA)
		return p;
	gnn_check(gnn_prog_to_device(m, p, n, tmp));
	return *tmp;
}

int
main(int argc, char **argv)
{
	const char *dir = argc > 1 ? argv[1] : "../../data/cora", *fan = argc > 4 ? argv[4] : "25,10";
	int64_t features = SAGE_desc.inputs[0].shape[1], classes = SAGE_desc.outputs[0].shape[1];
	int64_t epochs = argc > 2 ? atoll(argv[2]) : SAGE_desc.train->epochs;
	int64_t maxb = argc > 5 ? atoll(argv[5]) : 0, e, b, k, ns = 0, taken = 0, capn, cape, *seeds;
	gnn_sampler_config sc = {.batch_size = argc > 3 ? atoll(argv[3]) : 512, .shuffle = 1, .threads = 1,
	                         .prefetch = 1};
	uint64_t seed = argc > 6 ? strtoull(argv[6], NULL, 10) : SAGE_desc.train->seed;
	const gnn_batch *bt;
	gnn_sampler *s;
	gnn_graph *cap;
	gnn_array mask;
	char *p;
	cora data;
	SAGE *model;
	void *tx = NULL, *ty = NULL, *tm = NULL;
	float *out, loss = 0;
	double t0, t, sum, acc;
	size_t arena0;

	if (argc > 7 || (argc > 1 && (!strcmp(argv[1], "-h") || !strcmp(argv[1], "--help")))) {
		fprintf(argc > 7 ? stderr : stdout,
		        "usage: %s [DATA_DIR [EPOCHS [BATCH [FANOUTS [MAX_BATCHES [SEED]]]]]]\n", argv[0]);
		return argc > 7 ? 2 : 0;
	}
	for (p = (char *)fan; sc.nhops < GNN_SAMPLER_MAX_HOPS; p++) {
		sc.fanout[sc.nhops++] = strtoll(p, &p, 10);
		if (*p != ',')
			break;
	}
	sc.seed = seed;
	gnn_check(cora_load(dir, features, &data));
	gnn_check(cora_train_mask(dir, &data, &mask));
	if (!(seeds = malloc((size_t)data.num_nodes * sizeof *seeds + 1)))
		return 1;
	for (k = 0; k < data.num_nodes; k++)
		if (((const unsigned char *)mask.data)[k])
			seeds[ns++] = k;

	/* the sampler: seeds, x's and y's rows into every batch */
	gnn_check(gnn_sampler_create(data.graph, seeds, ns, &sc, &s));
	gnn_check(gnn_sampler_add_rows(s, data.x, (size_t)features * sizeof(float)));
	gnn_check(gnn_sampler_add_rows(s, data.y, sizeof(int64_t)));
	gnn_sampler_capacity(s, &capn, &cape);
	printf("%s (%s target): %lld seed nodes, batches of %lld, fanouts %s: %lld batches an epoch "
	       "of at most %lld nodes and %lld edges\n", SAGE_desc.name, SAGE_TARGET == GNN_TARGET_CUDA ? "cuda" : "cpu",
	       (long long)ns, (long long)sc.batch_size, fan, (long long)gnn_sampler_batches(s), (long long)capn,
	       (long long)cape);
	fflush(stdout);

	/* the model, sized once by the capacity */
	gnn_check(SAGE_create(&model));
	gnn_check(SAGE_init_weights(model, seed));
	gnn_check(gnn_sampler_capacity_graph(s, &cap));
	gnn_check(SAGE_bind(model, cap));
	gnn_check(SAGE_train_config(model, &SAGE_desc.train->cfg, seed));
	arena0 = ((const gnn_instance *)model)->arenasize;   /* a model starts with its gnn_instance */

	t0 = cora_now();
	for (e = 0; e < epochs && (!maxb || taken < maxb); e++) {
		sum = 0;
		for (b = 0; b < gnn_sampler_batches(s) && (!maxb || taken < maxb); b++, taken++) {
			gnn_check(gnn_sampler_next(s, &bt));
			gnn_check(SAGE_bind(model, bt->graph));
			gnn_check(SAGE_train_step(model,
				input(model, bt->rows[0], (size_t)(bt->num_nodes * features) * sizeof(float), &tx),
				input(model, bt->rows[1], (size_t)bt->num_nodes * sizeof(int64_t), &ty),
				input(model, bt->mask, (size_t)bt->num_nodes, &tm), &loss));
			gnn_prog_free_device(model, tx);
			gnn_prog_free_device(model, ty);
			gnn_prog_free_device(model, tm);
			tx = ty = tm = NULL;
			sum += (double)loss * (double)bt->num_seeds;
		}
		if ((e + 1) % 20 == 0 || e == 0 || epochs <= 20)
			printf("epoch %3lld  loss %.4f\n", (long long)e + 1, sum / (double)(ns < b * sc.batch_size ? ns : b * sc.batch_size));
	}
	t = cora_now() - t0;
	printf("%lld batches, %.2f ms a batch; forward's arena %zu bytes, %s\n", (long long)taken,
	       t * 1e3 / (double)(taken ? taken : 1), ((const gnn_instance *)model)->arenasize,
	       ((const gnn_instance *)model)->arenasize == arena0 ? "as bound for the capacity (never grew)" : "grew");

	if (!maxb) {
		/* inference: the whole graph bound, one forward */
		out = malloc((size_t)(data.num_nodes * classes) * sizeof *out);
		if (!out) {
			fprintf(stderr, "%s: out of memory\n", argv[0]);
			return 1;
		}
		gnn_check(SAGE_bind(model, data.graph));
		gnn_check(SAGE_forward_host(model, data.x, out));
		gnn_check(cora_accuracy(&data, out, classes, &acc));
		printf("test accuracy: %.1f%%\n", acc);
		free(out);
	}
	/* the model may be bound to a batch's graph: destroyed before it */
	SAGE_destroy(model);
	gnn_sampler_destroy(s);
	gnn_graph_destroy(cap);
	gnn_array_free(&mask);
	free(seeds);
	cora_free(&data);
	return 0;
}
