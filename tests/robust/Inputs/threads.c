/*
** threads.c: the threads contract (docs/threads.md) under ThreadSanitizer.
**
**   threads THREADS INSTANCES ITERS NODES GCN.safetensors GAT.safetensors SAGE.safetensors
**
** Design.  The reference first: one instance of each model, alone, on a
** graph of its own, gives each model's output.  Then THREADS threads each
** create INSTANCES instances of every model, load their weights from the
** same files and bind them to one shared graph whose CSR nobody has built
** yet (so the binds race to build it), and run forward ITERS times on
** each, every output compared bit for bit with the reference.  Between
** forwards a thread makes a call fail (a NULL input) and checks that the
** message it reads is its own model's, though the other threads fail
** with other models' messages all along.  The models link as descriptors,
** so the program is the same for the cpu target and the emulated device
** (forward_host there: host pointers, staged through the device, the
** forward's CUDA graph captured while other threads allocate and copy).
** It prints one line per model and "threads: ok"; any difference is a
** message and exit status 1.  Run under TSan, which fails the run on a
** data race in the runtime, the model code or the emulator's users.
*/
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "gnnrt.h"

#define MAXTHREADS 16
#define MAXINSTANCES 4
#define NMODELS 3
#define FEATURES 1433   /* the examples' Cora width */

extern const gnn_model_desc GCN_desc, GAT_desc, SAGE_desc;
static const gnn_model_desc *const models[NMODELS] = {&GCN_desc, &GAT_desc, &SAGE_desc};

static const char *weights[NMODELS];
static int threads, instances;
static int64_t nodes, iters, *edges;
static float *x;                    /* features: read by every thread */
static float *ref[NMODELS];         /* the single-threaded outputs */
static size_t outbytes[NMODELS];
static gnn_graph *shared_graph;

static void
die(const char *what)
{
	fprintf(stderr, "threads: %s: %s\n", what, gnn_errmsg());
	exit(1);
}

static gnn_status
forward(const gnn_model_desc *d, void *m, const float *in, float *out)
{
	const void *ins[1] = {in};
	void *outs[1] = {out};

	/* forward takes device pointers on the cuda target */
	return d->target == GNN_TARGET_CPU ? d->forward(m, ins, outs) : d->forward_host(m, ins, outs);
}

/* a ready instance of model k bound to g, or exit */
static void *
instance(int k, gnn_graph *g)
{
	const gnn_model_desc *d = models[k];
	void *m;

	if (d->create(&m) != GNN_OK)
		die("create");
	if (d->load_weights(m, weights[k]) != GNN_OK)
		die("load_weights");
	if (d->bind(m, g) != GNN_OK)
		die("bind");
	return m;
}

static void *
worker(void *arg)
{
	int t = (int)(intptr_t)arg, fails = 0;
	void *m[NMODELS][MAXINSTANCES];
	size_t most = 0;
	float *out;

	for (int k = 0; k < NMODELS; k++)
		most = outbytes[k] > most ? outbytes[k] : most;
	if (!(out = malloc(most)))
		die("out of memory");
	/* each thread starts with another model, so that different models'
	 * create, load and bind overlap too */
	for (int j = 0; j < NMODELS; j++)
		for (int i = 0; i < instances; i++)
			m[(j + t) % NMODELS][i] = instance((j + t) % NMODELS, shared_graph);
	for (int64_t it = 0; it < iters; it++)
		for (int j = 0; j < NMODELS; j++) {
			int k = (j + t + (int)it) % NMODELS;
			const gnn_model_desc *d = models[k];
			for (int i = 0; i < instances; i++) {
				memset(out, 0xff, outbytes[k]);
				if (forward(d, m[k][i], x, out) != GNN_OK)
					die("forward");
				if (memcmp(out, ref[k], outbytes[k]) != 0) {
					fprintf(stderr, "threads: thread %d, %s instance %d, iteration %lld: "
						"output differs from the single-threaded run\n",
						t, d->name, i, (long long)it);
					fails++;
				}
			}
			/* this thread's error, read while others make theirs */
			if (forward(d, m[k][0], NULL, out) != GNN_ERR_ARG || strncmp(gnn_errmsg(), d->name, strlen(d->name)) != 0 ||
			    !strstr(gnn_errmsg(), "is NULL")) {
				fprintf(stderr, "threads: thread %d: %s's failed forward says \"%s\"\n", t, d->name,
					gnn_errmsg());
				fails++;
			}
		}
	for (int k = 0; k < NMODELS; k++)
		for (int i = 0; i < instances; i++)
			models[k]->destroy(m[k][i]);
	free(out);
	return (void *)(intptr_t)fails;
}

int
main(int argc, char **argv)
{
	gnn_synth_spec spec = {.features = FEATURES, .alpha = 0.6, .seed = 7};
	pthread_t th[MAXTHREADS];
	gnn_graph *g;
	int fails = 0;

	if (argc != 5 + NMODELS || (threads = atoi(argv[1])) < 1 || threads > MAXTHREADS ||
	    (instances = atoi(argv[2])) < 1 || instances > MAXINSTANCES) {
		fprintf(stderr, "usage: threads THREADS INSTANCES ITERS NODES GCN.safetensors GAT.safetensors SAGE.safetensors\n");
		return 2;
	}
	iters = atoll(argv[3]);
	nodes = atoll(argv[4]);
	for (int k = 0; k < NMODELS; k++)
		weights[k] = argv[5 + k];
	spec.nodes = nodes;
	spec.edges = 4 * nodes;
	if (!(edges = malloc((size_t)(2 * spec.edges) * sizeof *edges)) ||
	    !(x = malloc((size_t)(nodes * FEATURES) * sizeof *x)))
		die("out of memory");
	if (gnn_synth_edges(&spec, edges) != GNN_OK || gnn_synth_features(&spec, x) != GNN_OK)
		die("synth");

	/* the reference: each model alone, on a graph of its own */
	if (gnn_graph_from_edge_index(&g, edges, GNN_I64, spec.edges, nodes) != GNN_OK)
		die("graph");
	for (int k = 0; k < NMODELS; k++) {
		const gnn_model_desc *d = models[k];
		void *m = instance(k, g);
		int64_t shape[GNN_MAX_RANK];

		if (d->output_shape(m, 0, shape) != GNN_OK)
			die("output_shape");
		outbytes[k] = (size_t)(shape[0] * shape[1]) * sizeof(float);
		if (!(ref[k] = malloc(outbytes[k])))
			die("out of memory");
		if (forward(d, m, x, ref[k]) != GNN_OK)
			die("forward");
		d->destroy(m);
	}
	gnn_graph_destroy(g);

	/* the same work from THREADS threads at once, on one shared graph */
	if (gnn_graph_from_edge_index(&shared_graph, edges, GNN_I64, spec.edges, nodes) != GNN_OK)
		die("graph");
	for (int t = 0; t < threads; t++)
		if (pthread_create(&th[t], NULL, worker, (void *)(intptr_t)t) != 0)
			die("pthread_create");
	for (int t = 0; t < threads; t++) {
		void *r;
		pthread_join(th[t], &r);
		fails += (int)(intptr_t)r;
	}
	gnn_graph_destroy(shared_graph);
	for (int k = 0; k < NMODELS; k++) {
		if (!fails)
			printf("%s: %d threads x %d instances x %lld forwards equal the single-threaded output\n",
				models[k]->name, threads, instances, (long long)iters);
		free(ref[k]);
	}
	free(edges);
	free(x);
	if (fails) {
		fprintf(stderr, "threads: %d failures\n", fails);
		return 1;
	}
	printf("threads: ok\n");
	return 0;
}
