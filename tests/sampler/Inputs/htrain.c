/*
** htrain: mini-batch training of a heterogeneous model (shop.gnn) on
** gnngen's rel-shop with temporal neighbour sampling: the seeds every
** customer at its label's time, so no transaction after it reaches it.
**
**   htrain DIR EPOCHS BATCH FANOUT
**
** FANOUT k: a customer draws k of its transactions at hop 1, each
** transaction its customer and its product at hop 2.  Prints each
** epoch's mean loss over the batches, then the capacity's and the
** batches' binds.
*/
#include <stdio.h>
#include <stdlib.h>

#include "shop.h"

enum { NT = 3, NR = 4, CUST = 0, PROD = 1, TRANS = 2 };
static const char *const type[NT] = {"customer", "product", "transaction"};
static const struct {
	int src, dst;
	const char *name;
} rel[NR] = {
	{TRANS, CUST, "transaction__by__customer"},
	{CUST, TRANS, "customer__rev_by__transaction"},
	{TRANS, PROD, "transaction__of__product"},
	{PROD, TRANS, "product__rev_of__transaction"},
};

static gnn_array
load(const char *dir, const char *pre, const char *name)
{
	char path[4096];
	gnn_array a;

	snprintf(path, sizeof path, "%s/%s%s.npy", dir, pre, name);
	gnn_check(gnn_npy_read(path, &a));
	return a;
}

int
main(int argc, char **argv)
{
	gnn_array x[NT], ei[NR], et[NR], y, ct;
	gnn_graph *g[NR], *cap[NR];
	const int64_t *times[NR];
	int64_t n[NT], *seeds, c, e, b;
	int src[NR], dst[NR], t, r;
	gnn_hsampler_config cfg = {0};
	gnn_hsampler *s;
	const gnn_hbatch *bt;
	SHOP *m;

	if (argc != 5) {
		fprintf(stderr, "usage: htrain DIR EPOCHS BATCH FANOUT\n");
		return 2;
	}
	for (t = 0; t < NT; t++) {
		x[t] = load(argv[1], "x_", type[t]);
		n[t] = x[t].shape[0];
	}
	for (r = 0; r < NR; r++) {
		ei[r] = load(argv[1], "", rel[r].name);
		et[r] = load(argv[1], "time_", rel[r].name);
		times[r] = et[r].data;
		src[r] = rel[r].src;
		dst[r] = rel[r].dst;
		gnn_check(gnn_graph_relation_from_edge_index(&g[r], ei[r].data, ei[r].dtype, ei[r].shape[1], n[src[r]],
		                                             n[dst[r]]));
	}
	y = load(argv[1], "y_", "customer");
	ct = load(argv[1], "time_", "customer");
	seeds = malloc((size_t)n[CUST] * sizeof *seeds);
	for (c = 0; c < n[CUST]; c++)
		seeds[c] = c;
	cfg.batch_size = atoll(argv[3]);
	cfg.nhops = 2;
	cfg.fanout[0][0] = atoll(argv[4]);   /* customer <- its transactions */
	cfg.fanout[1][1] = 1;                /* transaction <- its customer */
	cfg.fanout[3][1] = 1;                /* transaction <- its product */
	cfg.shuffle = 1;
	cfg.seed = 1;
	cfg.prefetch = 1;
	gnn_hetero_desc h = {.num_types = NT, .num_nodes = n, .num_rels = NR, .rel = (const gnn_graph *const *)g,
		.src_type = src, .dst_type = dst, .edge_time = times};
	gnn_check(gnn_hsampler_create(&h, CUST, seeds, ct.data, n[CUST], &cfg, &s));
	for (t = 0; t < NT; t++)
		gnn_check(gnn_hsampler_add_rows(s, t, x[t].data, (size_t)x[t].shape[1] * sizeof(float)));
	gnn_check(gnn_hsampler_add_rows(s, CUST, y.data, sizeof(int64_t)));

	gnn_check(SHOP_create(&m));
	gnn_check(SHOP_init_weights(m, 1));
	gnn_check(gnn_hsampler_capacity_graphs(s, cap));
	gnn_check(SHOP_bind_graphs(m, cap, NR));
	gnn_check(SHOP_train_config(m, &SHOP_desc.train->cfg, 1));
	for (e = 0; e < atoll(argv[2]); e++) {
		double sum = 0;
		for (b = 0; b < gnn_hsampler_batches(s); b++) {
			float loss;
			gnn_check(gnn_hsampler_next(s, &bt));
			gnn_check(SHOP_bind_graphs(m, bt->graph, NR));
			gnn_check(SHOP_train_step(m, bt->rows[0], bt->rows[1], bt->rows[2], bt->rows[3], bt->mask, &loss));
			sum += loss;
		}
		printf("epoch %lld loss %.4f\n", (long long)e, sum / (double)gnn_hsampler_batches(s));
	}
	{
		gnn_counters cnt;
		gnn_check(gnn_prog_counters(m, &cnt));
		printf("binds %lld step binds %lld arena allocations %lld step arena allocations %lld\n",
		       (long long)cnt.binds, (long long)cnt.step_binds, (long long)cnt.arena_allocs,
		       (long long)cnt.step_arena_allocs);
	}
	SHOP_destroy(m);
	gnn_hsampler_destroy(s);
	for (r = 0; r < NR; r++) {
		gnn_graph_destroy(g[r]);
		gnn_graph_destroy(cap[r]);
		gnn_array_free(&ei[r]);
		gnn_array_free(&et[r]);
	}
	for (t = 0; t < NT; t++)
		gnn_array_free(&x[t]);
	gnn_array_free(&y);
	gnn_array_free(&ct);
	free(seeds);
	return 0;
}
