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
**
** It prints, every 50 batches, the time a batch so far and the resident
** set (Linux's /proc/self/status; left out elsewhere), and after
** training the runtime's counters (gnn_prog_counters): the binds, and
** how often forward's arena and the step's were allocated -- once each,
** at the capacity's bind, if no batch needed more.
*/
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cora.h"
#include MODEL_H

/* the resident set's kB now, or its peak (VmRSS, VmHWM); -1 where
 * /proc/self/status is not */
static long
resident(const char *what)
{
	char line[256];
	long kb = -1;
	FILE *f = fopen("/proc/self/status", "r");

	if (!f)
		return -1;
	while (kb < 0 && fgets(line, sizeof line, f))
		if (!strncmp(line, what, strlen(what)))
			kb = strtol(line + strlen(what), NULL, 10);
	fclose(f);
	return kb;
}

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
	int64_t maxb = argc > 5 ? atoll(argv[5]) : 0, e, b, ns = 0, taken = 0, capn, cape, *seeds;
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
	gnn_counters c0, c;
	long kb;

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
	gnn_check(cora_mask_nodes(&mask, &seeds, &ns));

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
	gnn_check(gnn_prog_counters(model, &c0));   /* the capacity's arenas */

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
			if ((taken + 1) % 50 == 0) {
				printf("batch %lld (epoch %lld, %lld of %lld): %.2f ms a batch so far", (long long)taken + 1,
				       (long long)e + 1, (long long)b + 1, (long long)gnn_sampler_batches(s),
				       (cora_now() - t0) * 1e3 / (double)(taken + 1));
				if ((kb = resident("VmRSS:")) >= 0)
					printf(", resident %ld kB", kb);
				printf("\n");
				fflush(stdout);
			}
		}
		if ((e + 1) % 20 == 0 || e == 0 || epochs <= 20)
			printf("epoch %3lld  loss %.4f\n", (long long)e + 1, sum / (double)(ns < b * sc.batch_size ? ns : b * sc.batch_size));
	}
	t = cora_now() - t0;
	gnn_check(gnn_prog_counters(model, &c));
	printf("%lld batches, %.2f ms a batch; forward's arena %zu bytes, %s\n", (long long)taken,
	       t * 1e3 / (double)(taken ? taken : 1), c.arena_bytes,
	       c.arena_allocs == c0.arena_allocs && c.step_arena_allocs == c0.step_arena_allocs ?
	       "as bound for the capacity (never grew)" : "grew");
	printf("%lld binds (the step's %lld), arenas allocated %lld (the step's %lld), the step's arena %zu bytes",
	       (long long)c.binds, (long long)c.step_binds, (long long)c.arena_allocs, (long long)c.step_arena_allocs,
	       c.step_arena_bytes);
	if ((kb = resident("VmRSS:")) >= 0)
		printf("; resident %ld kB, at most %ld kB", kb, resident("VmHWM:"));
	printf("\n");

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
