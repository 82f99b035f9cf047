/*
** counters.c: the runtime's counters (gnn_prog_counters) over mini-batch
** training on Cora, with the example's SAGE (examples/minibatch).
**
**   counters DATA_DIR
**
** The capacity's graph bound first sizes both arenas (the model's and its
** training step's): the batches after are binds only.  Then the whole
** graph, larger than any batch, is bound and trained on: each arena is
** allocated again, once; a batch bound after that allocates nothing.
** Prints the counters after each phase for FileCheck.
*/
#include <stdio.h>
#include <stdlib.h>

#include "cora.h"
#include "sage_mb.h"

static void
show(const char *what, SAGE *m)
{
	gnn_counters c;

	gnn_check(gnn_prog_counters(m, &c));
	printf("%s: binds %lld, arenas %lld, steps %lld; the step's binds %lld, arenas %lld; arena bytes %s\n", what,
	       (long long)c.binds, (long long)c.arena_allocs, (long long)c.steps, (long long)c.step_binds,
	       (long long)c.step_arena_allocs, c.arena_bytes && (c.step_arena_bytes || !c.step_binds) ? "set" : "none");
}

int
main(int argc, char **argv)
{
	gnn_sampler_config sc = {.batch_size = 64, .nhops = 2, .fanout = {5, 5}, .seed = 1};
	int64_t features = SAGE_desc.inputs[0].shape[1], ns = 0, b;
	const gnn_batch *bt = NULL;
	gnn_counters c, cap;
	gnn_sampler *s;
	gnn_graph *capg;
	gnn_array mask;
	int64_t *seeds;
	cora data;
	SAGE *m;
	float loss;

	if (argc != 2) {
		fprintf(stderr, "usage: %s DATA_DIR\n", argv[0]);
		return 2;
	}
	gnn_check(cora_load(argv[1], features, &data));
	gnn_check(cora_train_mask(argv[1], &data, &mask));
	gnn_check(cora_mask_nodes(&mask, &seeds, &ns));
	gnn_check(gnn_sampler_create(data.graph, seeds, ns, &sc, &s));
	gnn_check(gnn_sampler_add_rows(s, data.x, (size_t)features * sizeof(float)));
	gnn_check(gnn_sampler_add_rows(s, data.y, sizeof(int64_t)));

	gnn_check(SAGE_create(&m));
	gnn_check(SAGE_init_weights(m, 1));
	printf("NULL: %s\n", gnn_status_name(gnn_prog_counters(NULL, &c)));
	show("created", m);
	gnn_check(gnn_sampler_capacity_graph(s, &capg));
	gnn_check(SAGE_bind(m, capg));
	gnn_check(SAGE_train_config(m, &SAGE_desc.train->cfg, 1));
	show("capacity", m);
	gnn_check(gnn_prog_counters(m, &cap));
	for (b = 0; b < 2 * gnn_sampler_batches(s); b++) {
		gnn_check(gnn_sampler_next(s, &bt));
		gnn_check(SAGE_bind(m, bt->graph));
		gnn_check(SAGE_train_step(m, bt->rows[0], bt->rows[1], bt->mask, &loss));
	}
	show("batches", m);
	gnn_check(gnn_prog_counters(m, &c));
	printf("arenas' bytes %s\n", c.arena_bytes == cap.arena_bytes && c.step_arena_bytes == cap.step_arena_bytes ?
	       "as at the capacity" : "changed");
	/* the whole graph: more nodes and edges than the capacity's */
	gnn_check(SAGE_bind(m, data.graph));
	gnn_check(SAGE_train_step(m, data.x, data.y, (const uint8_t *)mask.data, &loss));
	show("whole graph", m);
	/* a batch again: the arenas are large enough */
	gnn_check(SAGE_bind(m, bt->graph));
	gnn_check(SAGE_train_step(m, bt->rows[0], bt->rows[1], bt->mask, &loss));
	show("a batch again", m);

	SAGE_destroy(m);
	gnn_sampler_destroy(s);
	gnn_graph_destroy(capg);
	gnn_array_free(&mask);
	free(seeds);
	cora_free(&data);
	return 0;
}
