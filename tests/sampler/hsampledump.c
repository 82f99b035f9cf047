/*
** hsampledump: the runtime's heterogeneous neighbour sampler
** (gnn_hsampler_*) driven from a directory of relational files (gnngen's
** layout), its batches written as .npy for tests/sampler/hcheck.py,
** which checks them with NumPy alone: gnn_hsampler_save_batch's files
** and each type's gathered rows of x.
**
**   hsampledump DIR OUTDIR TYPES RELS SEEDTYPE BATCH FANOUTS SHUFFLE SEED
**               PREFETCH NBATCHES TEMPORAL [THREADS]
**
** TYPES "customer,product,transaction": each type's node count is the
** rows of DIR/x_TYPE.npy, which is gathered per batch.  RELS: relation
** names SRC__REL__DST (DIR/NAME.npy); with TEMPORAL 1, DIR/time_NAME.npy
** where it exists times the relation, and DIR/time_SEEDTYPE.npy times
** the seeds.  The seeds: DIR/seeds_SEEDTYPE.npy (int64) if it exists,
** else every node of the type.  FANOUTS: "5,3" for every relation, or a
** list a relation split by '/' ("5,3/2,2/0,1").  Batch k's files:
** bK_meta.npy (epoch, index, seeds), bK_seed_index.npy, bK_seed_time.npy
** (temporal), and for each type t and relation r (their indices)
** bK_node_t.npy, bK_root_t.npy (temporal), bK_x_t.npy, bK_ei_r.npy
** [2, E], bK_eid_r.npy, bK_mask.npy; a line a batch on stdout (OUTDIR
** "-": no files, and the line ends "| " and relation 0's edge ids).
** THREADS: the sampling threads (default 1).  A runtime
** error is printed as "hsampledump: MESSAGE", exit 1.
*/
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "gnnrt.h"

enum { MAXT = GNN_HSAMPLER_MAX_TYPES, MAXR = GNN_HSAMPLER_MAX_RELS };

static int
fail(void)
{
	fprintf(stderr, "hsampledump: %s\n", gnn_errmsg());
	return 1;
}

/* type t's gathered rows, bK_x_t.npy */
static gnn_status
savex(const char *dir, int64_t k, int t, int64_t n, int64_t f, const void *p)
{
	char path[4096];
	gnn_array a = {.dtype = GNN_F32, .rank = 2, .shape = {n, f}, .data = (void *)p,
	               .nbytes = (size_t)(n * f) * sizeof(float)};

	snprintf(path, sizeof path, "%s/b%lld_x_%d.npy", dir, (long long)k, t);
	return gnn_npy_write(path, &a);
}

/* s split at sep into at most max malloc'd words */
static int
split(const char *s, char sep, char **out, int max)
{
	int n = 0;

	while (n < max) {
		const char *e = strchr(s, sep);
		size_t len = e ? (size_t)(e - s) : strlen(s);
		out[n] = malloc(len + 1);
		memcpy(out[n], s, len);
		out[n++][len] = 0;
		if (!e)
			break;
		s = e + 1;
	}
	return n;
}

static int
typeof_(char **types, int nt, const char *name, size_t len)
{
	for (int t = 0; t < nt; t++)
		if (strlen(types[t]) == len && !strncmp(types[t], name, len))
			return t;
	return -1;
}

static int
load(const char *dir, const char *name, const char *suffix, gnn_array *a, int must)
{
	char path[4096];
	FILE *f;

	snprintf(path, sizeof path, "%s/%s%s.npy", dir, name, suffix);
	if (!must && !(f = fopen(path, "rb")))
		return 0;
	if (!must)
		fclose(f);
	return gnn_npy_read(path, a) == GNN_OK ? 1 : -1;
}

int
main(int argc, char **argv)
{
	gnn_hsampler_config cfg = {0};
	gnn_hetero_desc h = {0};
	gnn_array xa[MAXT], ea[MAXR], ta[MAXR], sa = {0}, sta = {0};
	gnn_graph *g[MAXR] = {0};
	const int64_t *etime[MAXR] = {0};
	int64_t nn[MAXT], *seeds, nseeds, k, nb;
	int srct[MAXR], dstt[MAXR], nt, nr, t, r, seedtype, temporal, nf;
	char *types[MAXT], *rels[MAXR], *fan[MAXR], name[512];
	const gnn_hbatch *b;
	gnn_hsampler *s = NULL;

	if (argc != 13 && argc != 14) {
		fprintf(stderr, "usage: hsampledump DIR OUTDIR TYPES RELS SEEDTYPE BATCH FANOUTS SHUFFLE SEED PREFETCH "
		                "NBATCHES TEMPORAL [THREADS]\n");
		return 2;
	}
	temporal = atoi(argv[12]);
	nt = split(argv[3], ',', types, MAXT);
	nr = split(argv[4], ',', rels, MAXR);
	for (t = 0; t < nt; t++) {
		snprintf(name, sizeof name, "x_%s", types[t]);
		if (load(argv[1], name, "", &xa[t], 1) < 0)
			return fail();
		nn[t] = xa[t].shape[0];
	}
	for (r = 0; r < nr; r++) {
		const char *a = strstr(rels[r], "__"), *z = a ? strstr(a + 2, "__") : NULL;
		if (!z || (srct[r] = typeof_(types, nt, rels[r], (size_t)(a - rels[r]))) < 0 ||
		    (dstt[r] = typeof_(types, nt, z + 2, strlen(z + 2))) < 0) {
			fprintf(stderr, "hsampledump: relation '%s' is not SRC__REL__DST of the types\n", rels[r]);
			return 2;
		}
		if (load(argv[1], rels[r], "", &ea[r], 1) < 0 ||
		    gnn_graph_relation_from_edge_index(&g[r], ea[r].data, ea[r].dtype, ea[r].shape[1], nn[srct[r]],
		                                       nn[dstt[r]]) != GNN_OK)
			return fail();
		snprintf(name, sizeof name, "time_%s", rels[r]);
		if (temporal && load(argv[1], name, "", &ta[r], 0) > 0)
			etime[r] = ta[r].data;
	}
	seedtype = typeof_(types, nt, argv[5], strlen(argv[5]));
	if (seedtype < 0) {
		fprintf(stderr, "hsampledump: no type '%s'\n", argv[5]);
		return 2;
	}
	snprintf(name, sizeof name, "seeds_%s", argv[5]);
	if (load(argv[1], name, "", &sa, 0) > 0) {
		seeds = sa.data;
		nseeds = gnn_array_numel(&sa);
	} else {
		nseeds = nn[seedtype];
		seeds = malloc((size_t)nseeds * sizeof *seeds + 1);
		for (k = 0; k < nseeds; k++)
			seeds[k] = k;
	}
	snprintf(name, sizeof name, "time_%s", argv[5]);
	if (temporal && load(argv[1], name, "", &sta, 1) < 0)
		return fail();
	h = (gnn_hetero_desc){.num_types = nt, .num_nodes = nn, .num_rels = nr, .rel = (const gnn_graph *const *)g,
		.src_type = srct, .dst_type = dstt, .edge_time = temporal ? etime : NULL};
	cfg.batch_size = atoll(argv[6]);
	nf = split(argv[7], '/', fan, MAXR);
	for (r = 0; r < nr; r++) {
		char *p = fan[nf == 1 ? 0 : r < nf ? r : nf - 1];
		for (cfg.nhops = 0; *p && cfg.nhops < GNN_SAMPLER_MAX_HOPS; cfg.nhops++) {
			cfg.fanout[r][cfg.nhops] = strtoll(p, &p, 10);
			p += *p == ',';
		}
	}
	cfg.shuffle = atoi(argv[8]);
	cfg.seed = strtoull(argv[9], NULL, 10);
	cfg.prefetch = atoi(argv[10]);
	cfg.threads = argc > 13 ? atoi(argv[13]) : 1;
	nb = atoll(argv[11]);
	if (gnn_hsampler_create(&h, seedtype, seeds, temporal ? sta.data : NULL, nseeds, &cfg, &s) != GNN_OK)
		return fail();
	for (t = 0; t < nt; t++)
		if (gnn_hsampler_add_rows(s, t, xa[t].data, (size_t)xa[t].shape[1] * sizeof(float)) != GNN_OK)
			return fail();
	for (k = 0; k < nb; k++) {
		if (gnn_hsampler_next(s, &b) != GNN_OK)
			return fail();
		printf("batch %lld:", (long long)k);
		for (t = 0; t < nt; t++)
			printf(" %s=%lld", types[t], (long long)b->num_nodes[t]);
		for (r = 0; r < nr; r++)
			printf(" %lld", (long long)b->num_edges[r]);
		if (!strcmp(argv[2], "-")) {   /* and relation 0's edge ids */
			printf(" |");
			for (int64_t e = 0; e < b->num_edges[0]; e++)
				printf(" %lld", (long long)b->edge_id[0][e]);
			printf("\n");
			continue;
		}
		printf("\n");
		if (gnn_hsampler_save_batch(s, b, argv[2], k) != GNN_OK)
			return fail();
		for (t = 0; t < nt; t++)
			if (savex(argv[2], k, t, b->num_nodes[t], xa[t].shape[1], b->rows[t]) != GNN_OK)
				return fail();
	}
	{
		int64_t cn[MAXT], ce[MAXR];
		gnn_graph *cg[MAXR];
		gnn_hsampler_capacity(s, cn, ce);
		printf("batches an epoch: %lld; capacity:", (long long)gnn_hsampler_batches(s));
		for (t = 0; t < nt; t++)
			printf(" %s=%lld", types[t], (long long)cn[t]);
		for (r = 0; r < nr; r++)
			printf(" %lld", (long long)ce[r]);
		printf("\n");
		if (gnn_hsampler_capacity_graphs(s, cg) != GNN_OK)
			return fail();
		for (r = 0; r < nr; r++)
			gnn_graph_destroy(cg[r]);
	}
	gnn_hsampler_destroy(s);
	for (r = 0; r < nr; r++) {
		gnn_graph_destroy(g[r]);
		gnn_array_free(&ea[r]);
		if (etime[r])
			gnn_array_free(&ta[r]);
		free(rels[r]);
	}
	for (t = 0; t < nt; t++) {
		gnn_array_free(&xa[t]);
		free(types[t]);
	}
	for (t = 0; t < nf; t++)
		free(fan[t]);
	if (sa.data)
		gnn_array_free(&sa);
	else
		free(seeds);
	gnn_array_free(&sta);
	return 0;
}
