/*
** sampledump: the runtime's neighbour sampler (gnn_sampler_*) driven from
** files, its batches written as .npy for tests/sampler/check.py, which
** checks them with NumPy alone.
**
**   sampledump EDGE_INDEX.npy SEEDS.npy OUTDIR BATCH FANOUTS SHUFFLE SEED
**              THREADS PREFETCH NBATCHES [X.npy]
**
** SEEDS: int64 node ids, or a bool [N] mask (its true nodes).  FANOUTS:
** "25,10".  Batch k's files: OUTDIR/bK_node.npy, _ei.npy [2, E], _eid.npy,
** _mask.npy, _meta.npy (epoch, index, seeds, capacity nodes, edges) and
** with X, _x.npy (the gathered rows).  OUTDIR "-": no files, but a line
** a batch on stdout, the graph ids of its edges' sources in order.  A runtime error is printed as
** "sampledump: MESSAGE", exit 1.
*/
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "gnnrt.h"

static int
fail(void)
{
	fprintf(stderr, "sampledump: %s\n", gnn_errmsg());
	return 1;
}

static gnn_status
save(const char *dir, int64_t k, const char *what, gnn_dtype dt, int rank, int64_t d0, int64_t d1, const void *p)
{
	char path[4096];
	gnn_array a = {.dtype = dt, .rank = rank, .shape = {d0, d1}, .data = (void *)p};

	a.nbytes = (size_t)(d0 * (rank > 1 ? d1 : 1)) * gnn_dtype_size(dt);
	snprintf(path, sizeof path, "%s/b%lld_%s.npy", dir, (long long)k, what);
	return gnn_npy_write(path, &a);
}

int
main(int argc, char **argv)
{
	gnn_sampler_config cfg = {0};
	gnn_array sa = {0}, xa = {0};
	gnn_graph *g = NULL;
	gnn_sampler *s = NULL;
	const gnn_batch *b;
	int64_t *seeds = NULL, ns = 0, i, k, nb, meta[5];
	char *p;

	if (argc != 11 && argc != 12) {
		fprintf(stderr, "usage: sampledump EI SEEDS OUTDIR BATCH FANOUTS SHUFFLE SEED THREADS PREFETCH NBATCHES [X]\n");
		return 2;
	}
	if (gnn_graph_read_npy(&g, argv[1], -1) != GNN_OK || gnn_npy_read(argv[2], &sa) != GNN_OK)
		return fail();
	if (!(seeds = malloc((size_t)(gnn_array_numel(&sa) + 1) * sizeof *seeds)))
		return 1;
	for (i = 0; i < gnn_array_numel(&sa); i++)
		if (sa.dtype == GNN_BOOL) {
			if (((const uint8_t *)sa.data)[i])
				seeds[ns++] = i;
		} else {
			seeds[ns++] = sa.dtype == GNN_I32 ? ((const int32_t *)sa.data)[i] : ((const int64_t *)sa.data)[i];
		}
	cfg.batch_size = strtoll(argv[4], NULL, 10);
	for (p = argv[5]; cfg.nhops < GNN_SAMPLER_MAX_HOPS; p++) {
		cfg.fanout[cfg.nhops++] = strtoll(p, &p, 10);
		if (*p != ',')
			break;
	}
	cfg.shuffle = atoi(argv[6]);
	cfg.seed = strtoull(argv[7], NULL, 10);
	cfg.threads = atoi(argv[8]);
	cfg.prefetch = atoi(argv[9]);
	nb = strtoll(argv[10], NULL, 10);
	if (gnn_sampler_create(g, seeds, ns, &cfg, &s) != GNN_OK)
		return fail();
	if (argc == 12) {
		if (gnn_npy_read(argv[11], &xa) != GNN_OK)
			return fail();
		if (xa.dtype != GNN_F32 || xa.rank != 2 || xa.shape[0] != gnn_graph_num_nodes(g)) {
			fprintf(stderr, "sampledump: X must be f32 [N, F]\n");
			return 1;
		}
		if (gnn_sampler_add_rows(s, xa.data, (size_t)xa.shape[1] * sizeof(float)) != GNN_OK)
			return fail();
	}
	gnn_sampler_capacity(s, &meta[3], &meta[4]);
	printf("batches an epoch: %lld; capacity: %lld nodes, %lld edges\n", (long long)gnn_sampler_batches(s),
	       (long long)meta[3], (long long)meta[4]);
	for (k = 0; k < nb; k++) {
		if (gnn_sampler_next(s, &b) != GNN_OK)
			return fail();
		meta[0] = b->epoch;
		meta[1] = b->index;
		meta[2] = b->num_seeds;
		if (gnn_graph_num_nodes(b->graph) != b->num_nodes || gnn_graph_num_edges(b->graph) != b->num_edges) {
			fprintf(stderr, "sampledump: batch %lld's graph is not its edge_index\n", (long long)k);
			return 1;
		}
		if (strcmp(argv[3], "-") == 0) {
			/* a line a batch: the graph ids of its edges' sources */
			for (i = 0; i < b->num_edges; i++)
				printf("%s%lld", i ? " " : "", (long long)b->node[b->edge_index[i]]);
			putchar('\n');
			continue;
		}
		if (save(argv[3], k, "node", GNN_I64, 1, b->num_nodes, 0, b->node) != GNN_OK ||
		    save(argv[3], k, "ei", GNN_I64, 2, 2, b->num_edges, b->edge_index) != GNN_OK ||
		    save(argv[3], k, "eid", GNN_I64, 1, b->num_edges, 0, b->edge_id) != GNN_OK ||
		    save(argv[3], k, "mask", GNN_BOOL, 1, b->num_nodes, 0, b->mask) != GNN_OK ||
		    save(argv[3], k, "meta", GNN_I64, 1, 5, 0, meta) != GNN_OK ||
		    (argc == 12 && save(argv[3], k, "x", GNN_F32, 2, b->num_nodes, xa.shape[1], b->rows[0]) != GNN_OK))
			return fail();
	}
	gnn_sampler_destroy(s);
	gnn_graph_destroy(g);
	gnn_array_free(&sa);
	gnn_array_free(&xa);
	free(seeds);
	return 0;
}
