/*
** cpubench.c: times gnncc-compiled cpu models on one graph, through their
** descriptors (bench/cpu/cpubench.py builds and runs it).
**
**   cpubench --graph=EDGE_INDEX.npy --x=X.npy --weights=W.safetensors
**            [--out=OUT.npy] [options] MODEL
**
** Design.  The cpu twin of bench/gnnbench.cu: the models linked in are
** named at compile time by -DCPUBENCH_MODELS='X(GCN_O2) X(GCN_O0)', an
** X-macro list of NAME for each NAME_desc, so one executable per graph
** holds all of that graph's models; the driver runs one model per process
** so that the process's peak RSS is that model's.  x must be float32
** [N, F] (the driver writes it, normalized as PyG's NormalizeFeatures,
** from the same array PyG gets); the weights come from the safetensors
** file the driver wrote for PyG too.  Steps: create, load_weights, bind
** (gnn_graph_read_npy, then bind: reported, not timed with forward), warm-up
** forwards, timed forwards on host pointers (a monotonic clock around
** each call; the cpu target's forward returns when its work is done), and
** the last output written as .npy for the driver to compare with PyG's.
** The number of timed forwards: at least --runs, more (up to --max-runs)
** while they fit in --target-seconds; but when --runs of them would take
** longer than --cap-seconds, as many as fit in it, at least --floor-runs
** (the result's "runs" says how many).  One JSON line per model on stdout.
**
**   cpubench --train --graph=EDGE_INDEX.npy --x=X.npy --y=Y.npy --mask=MASK.npy
**            [--seed=S] [options] MODEL
**
** Training mode: the same, for the model's compiled training step
** (NAME_desc.train; a model compiled without a train item is an error):
** one call is one full-graph epoch (forward with dropout, nll over the
** mask, backward, the optimizer's update in place), as PyG's training
** cells time one.  The weights start from gnn_prog_init(seed), the
** model's declared (PyG's) init, not from --weights: PyG's cells start
** from PyG's init too, and the loss trajectory is then a fair sanity
** check.  y (int64 [N]) and the mask (bool [N]) are the very files PyG's
** cells read; x, y and the mask are copied with gnn_prog_to_device
** (plain copies on the cpu target, outside the timed calls).  Warm-up
** steps train too (the parameters move on, the work per step does not);
** the record has loss_first (the first warm-up step's) and loss_last
** (the last timed step's), and "task": "train".
**
**   cpubench --input=X_A.npy --input=X_B.npy ... --rel=EDGE_INDEX.npy:NSRC:NDST ...
**            (--weights=W.safetensors | --train --y=Y.npy --mask=MASK.npy) MODEL
**
** A heterogeneous model (several node types, one relation a graph input):
** --input once per tensor input in the model's order (in place of --x),
** --rel once per relation in the order the model's graph type lists them
** (in place of --graph), each an edge_index with its source and target
** types' node counts (gnn_graph_relation_from_edge_index checks every
** index against them); bound with bind_graphs.  The rest is as above;
** training's labels and mask have the output's rows (the node type the
** loss is on).
*/
#define _POSIX_C_SOURCE 200809L

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <time.h>

#include "gnnrt.h"
#include "../benchutil.h"
#include "../benchtrain.h"

#define MAXIN 16    /* tensor inputs (BENCHTRAIN_MAXIN) */
#define MAXREL 64   /* relations of a heterogeneous model */

#ifndef CPUBENCH_MODELS
#error "define CPUBENCH_MODELS as X(NAME) X(NAME) ..., one per NAME_desc linked in"
#endif

#define X(name) extern const gnn_model_desc name##_desc;
CPUBENCH_MODELS
#undef X

static const gnn_model_desc *const models[] = {
#define X(name) &name##_desc,
	CPUBENCH_MODELS
#undef X
};
static const int nmodels = (int)(sizeof models / sizeof models[0]);

typedef struct Opts {
	const char *graph, *x, *weights, *out, *label, *model, *y, *mask;
	const char *input[MAXIN], *rel[MAXREL];
	int ninput, nrel;
	int warmup, runs, max_runs, floor_runs, train;
	unsigned long long seed;
	double target_s, cap_s, slow_cap_s;
} Opts;

static void
usage(FILE *f, const char *argv0)
{
	fprintf(f,
		"usage: %s --graph=EDGE_INDEX.npy --x=X.npy --weights=W.safetensors [options] MODEL\n"
		"       %s --train --graph=EDGE_INDEX.npy --x=X.npy --y=Y.npy --mask=MASK.npy\n"
		"                [--seed=S] [options] MODEL\n"
		"  --graph=FILE          edge_index, int32 or int64 [2, E]\n"
		"  --x=FILE              node features, float32 [N, F]\n"
		"  --input=FILE          instead of --x: a tensor input, once each in the model's order\n"
		"  --rel=FILE:NSRC:NDST  instead of --graph: a relation's edge_index and its source and\n"
		"                        target types' node counts, once each in the model's order\n"
		"  --weights=FILE        the model's parameters (safetensors, PyG's names)\n"
		"  --train               time training steps (one epoch each), not forwards\n"
		"  --y=FILE              training: labels, int64 [N]\n"
		"  --mask=FILE           training: the nodes of the loss, bool [N]\n"
		"  --seed=S              training: gnn_prog_init's seed (default the train item's)\n"
		"  --out=FILE            write the last forward's output here (.npy)\n"
		"  --label=NAME          the graph's name in the JSON output\n"
		"  --warmup=K            untimed forwards first (default 3; fewer when slow)\n"
		"  --runs=R              at least R timed forwards (default 20)\n"
		"  --max-runs=R          at most R timed forwards (default 200)\n"
		"  --target-seconds=T    time spent on timed forwards, within those bounds (default 0.5)\n"
		"  --cap-seconds=C       if R forwards take longer than C, as many as fit (default 1e9)\n"
		"  --floor-runs=F        but at least F (default 3)\n"
		"  --slow-cap-seconds=S  unless F forwards take longer than S: as many as fit,\n"
		"                        at least 1 (default 1e9)\n"
		"  --list                print the linked models and exit\n",
		argv0, argv0);
}

static int
parseopts(int argc, char **argv, Opts *o)
{
	memset(o, 0, sizeof *o);
	o->label = "graph";
	o->warmup = 3;
	o->runs = 20;
	o->max_runs = 200;
	o->floor_runs = 3;
	o->target_s = 0.5;
	o->cap_s = 1e9;
	o->slow_cap_s = 1e9;
	o->seed = ~0ull;   /* none given: the train item's */
	for (int i = 1; i < argc; i++) {
		const char *a = argv[i], *v;
#define VAL(pfx) (!strncmp(a, pfx "=", sizeof pfx) ? a + sizeof pfx : NULL)
		if (!strcmp(a, "-h") || !strcmp(a, "--help")) {
			usage(stdout, argv[0]);
			exit(0);
		} else if (!strcmp(a, "--list")) {
			for (int k = 0; k < nmodels; k++)
				printf("%s\n", models[k]->name);
			exit(0);
		} else if ((v = VAL("--graph")))
			o->graph = v;
		else if ((v = VAL("--x")))
			o->x = v;
		else if ((v = VAL("--input")) || (v = VAL("--rel"))) {
			int in = a[2] == 'i', *n = in ? &o->ninput : &o->nrel;
			if (*n == (in ? MAXIN : MAXREL)) {
				fprintf(stderr, "cpubench: too many %s options\n", in ? "--input" : "--rel");
				return -1;
			}
			(in ? o->input : o->rel)[(*n)++] = v;
		}
		else if ((v = VAL("--weights")))
			o->weights = v;
		else if (!strcmp(a, "--train"))
			o->train = 1;
		else if ((v = VAL("--y")))
			o->y = v;
		else if ((v = VAL("--mask")))
			o->mask = v;
		else if ((v = VAL("--seed"))) {
			char *end;
			o->seed = strtoull(v, &end, 10);
			if (!*v || *end) {
				fprintf(stderr, "cpubench: --seed: '%s' is not a number\n", v);
				return -1;
			}
		} else if ((v = VAL("--out")))
			o->out = v;
		else if ((v = VAL("--label")))
			o->label = v;
		else if ((v = VAL("--warmup"))) {
			if (intopt("cpubench", v, "--warmup", 1, &o->warmup) < 0)
				return -1;
		} else if ((v = VAL("--runs"))) {
			if (intopt("cpubench", v, "--runs", 1, &o->runs) < 0)
				return -1;
		} else if ((v = VAL("--max-runs"))) {
			if (intopt("cpubench", v, "--max-runs", 1, &o->max_runs) < 0)
				return -1;
		} else if ((v = VAL("--floor-runs"))) {
			if (intopt("cpubench", v, "--floor-runs", 1, &o->floor_runs) < 0)
				return -1;
		} else if ((v = VAL("--target-seconds")))
			o->target_s = atof(v);
		else if ((v = VAL("--cap-seconds")))
			o->cap_s = atof(v);
		else if ((v = VAL("--slow-cap-seconds")))
			o->slow_cap_s = atof(v);
		else if (a[0] == '-') {
			fprintf(stderr, "cpubench: unknown option '%s'\n", a);
			usage(stderr, argv[0]);
			return -1;
		} else
			o->model = a;
#undef VAL
	}
	if (o->max_runs < o->runs)
		o->max_runs = o->runs;
	if ((o->x && o->ninput) || (o->graph && o->nrel)) {
		fprintf(stderr, "cpubench: --x and --input, --graph and --rel exclude each other\n");
		return -1;
	}
	if (o->x)
		o->input[o->ninput++] = o->x;
	if (o->train ? (!o->graph && !o->nrel) || !o->ninput || !o->y || !o->mask || !o->model :
	    (!o->graph && !o->nrel) || !o->ninput || !o->weights || !o->model) {
		fprintf(stderr, "cpubench: --graph, --x, %s and a MODEL are required\n",
			o->train ? "--y, --mask" : "--weights");
		usage(stderr, argv[0]);
		return -1;
	}
	return 0;
}

static long
maxrss_kb(void)
{
	struct rusage ru;

	return getrusage(RUSAGE_SELF, &ru) == 0 ? ru.ru_maxrss : -1;
}

static void
jresult(const Opts *o, const char *status)
{
	printf("{\"tool\": \"cpubench\", \"event\": \"result\", \"model\": ");
	jstr(o->model);
	printf(", \"graph\": ");
	jstr(o->label);
	printf(", \"status\": \"%s\"", status);
	if (o->train)
		printf(", \"task\": \"train\"");
}

static int
fail(const Opts *o, const char *stage, const char *msg)
{
	jresult(o, "error");
	printf(", \"stage\": \"%s\", \"message\": ", stage);
	jstr(msg);
	printf("}\n");
	fflush(stdout);
	return 1;
}

/* how many timed forwards, from the estimate of one */
static int
nruns(const Opts *o, double est)
{
	int runs = o->runs;

	if (est <= 0)
		return runs;
	if (o->target_s / est > runs)
		runs = o->target_s / est > o->max_runs ? o->max_runs : (int)(o->target_s / est);
	if (est * o->runs > o->cap_s) {
		runs = (int)(o->cap_s / est);
		if (runs < o->floor_runs)
			runs = o->floor_runs;
		if (est * runs > o->slow_cap_s) {
			runs = (int)(o->slow_cap_s / est);
			if (runs < 1)
				runs = 1;
		}
	}
	return runs;
}

/* nruns for benchtrain_run */
static int
steps(double est, const void *o)
{
	return nruns((const Opts *)o, est);
}

/*
** --train: warm-up and timed training steps on a created, initialized and
** bound model (the rules of main's forwards, benchtrain.h's epoch); one
** JSON line.  x: the model's nx inputs as read; n: the output's rows.
*/
static int
train(const Opts *o, const gnn_model_desc *d, void *m, const gnn_array *x, int nx, int64_t n,
	double create_s, double init_s, double bind_s)
{
	BenchTrain r;
	void *xdev[MAXIN] = {NULL};
	int rc = 1;

	memset(&r, 0, sizeof r);
	/* the step's inputs live where forward's do (host memory on cpu: copies) */
	for (int k = 0; k < nx; k++)
		if (gnn_prog_to_device(m, x[k].data, x[k].nbytes, &xdev[k]) != GNN_OK) {
			rc = fail(o, "to_device", gnn_errmsg());
			goto done;
		}
	if (benchtrain_run(m, d->train, (const void *const *)xdev, nx, n, o->y, o->mask, o->warmup,
			o->cap_s, steps, o, &r) < 0)
		rc = fail(o, r.stage, r.msg);
	else {
		jresult(o, "ok");
		benchtrain_json(&r, d->train);
		printf(", \"seed\": %llu, \"create_s\": %.4g, \"init_s\": %.4g, \"bind_s\": %.4g, "
			"\"self_maxrss_kb\": %ld}\n", o->seed, create_s, init_s, bind_s, maxrss_kb());
		fflush(stdout);
		rc = 0;
	}
done:
	for (int k = 0; k < nx; k++)
		if (xdev[k])
			gnn_prog_free_device(m, xdev[k]);
	free(r.t);
	return rc;
}

/*
** --rel=FILE:NSRC:NDST: the edge_index in *ei (kept by the caller while
** the graph lives) and the relation over it.  0, or -1 with msg.
*/
static int
relation(const char *spec, gnn_array *ei, gnn_graph **g, char *msg, size_t nmsg)
{
	char path[4096], *c1, *c2, *end1, *end2;
	long long nsrc, ndst;

	snprintf(path, sizeof path, "%s", spec);
	if (!(c2 = strrchr(path, ':')) || (*c2 = 0, !(c1 = strrchr(path, ':')))) {
		snprintf(msg, nmsg, "--rel=%s: want FILE:NSRC:NDST", spec);
		return -1;
	}
	*c1 = 0;
	nsrc = strtoll(c1 + 1, &end1, 10);
	ndst = strtoll(c2 + 1, &end2, 10);
	if (*end1 || *end2 || !c1[1] || !c2[1] || nsrc < 0 || ndst < 0) {
		snprintf(msg, nmsg, "--rel=%s: want FILE:NSRC:NDST", spec);
		return -1;
	}
	if (gnn_npy_read(path, ei) != GNN_OK) {
		snprintf(msg, nmsg, "%s", gnn_errmsg());
		return -1;
	}
	if (ei->rank != 2 || ei->shape[0] != 2 || (ei->dtype != GNN_I64 && ei->dtype != GNN_I32)) {
		snprintf(msg, nmsg, "%s: want an int32 or int64 edge_index [2, E]", path);
		return -1;
	}
	if (gnn_graph_relation_from_edge_index(g, ei->data, ei->dtype, ei->shape[1], nsrc, ndst)
	    != GNN_OK) {
		*g = NULL;
		snprintf(msg, nmsg, "%s: %s", path, gnn_errmsg());
		return -1;
	}
	return 0;
}

int
main(int argc, char **argv)
{
	Opts o;
	const gnn_model_desc *d = NULL;
	gnn_array x[MAXIN], ei[MAXREL], out;
	gnn_graph *g[MAXREL] = {NULL};
	void *m = NULL;
	double t0, create_s, load_s, bind_s, *warm = NULL, *t = NULL;
	int rc = 1, warmup = 0, runs, ng = 0;
	char msg[4352];
	gnn_status s;

	if (parseopts(argc, argv, &o) < 0)
		return 2;
	for (int k = 0; k < nmodels; k++)
		if (!strcmp(models[k]->name, o.model))
			d = models[k];
	if (!d) {
		fprintf(stderr, "cpubench: no model %s linked in (--list)\n", o.model);
		return 2;
	}
	memset(x, 0, sizeof x);
	memset(ei, 0, sizeof ei);
	memset(&out, 0, sizeof out);
	if (d->target != GNN_TARGET_CPU || d->noutputs != 1)
		return fail(&o, "model", "cpubench runs cpu models with one output");
	if (d->ninputs != o.ninput) {
		snprintf(msg, sizeof msg, "the model has %d tensor inputs, %d given", d->ninputs,
			o.ninput);
		return fail(&o, "model", msg);
	}
	if (o.nrel ? d->ngraphs != o.nrel : d->ngraphs > 1) {
		snprintf(msg, sizeof msg, "the model has %d graph inputs, %d given", d->ngraphs,
			o.nrel ? o.nrel : 1);
		return fail(&o, "model", msg);
	}
	if (o.train && !d->train)
		return fail(&o, "model", "the model has no training step (compiled without a "
			"train item)");
	if (o.train && o.seed == ~0ull)
		o.seed = d->train->seed;
	for (int k = 0; k < o.ninput; k++) {
		if (gnn_npy_read(o.input[k], &x[k]) != GNN_OK) {
			rc = fail(&o, "input", gnn_errmsg());
			goto done;
		}
		if (d->inputs[k].dtype != GNN_F32 || d->inputs[k].rank != 2 || x[k].dtype != GNN_F32 ||
		    x[k].rank != 2 || x[k].shape[1] != d->inputs[k].shape[1]) {
			snprintf(msg, sizeof msg, "%s: want float32 [N, %lld] (input %s)", o.input[k],
				(long long)d->inputs[k].shape[1], d->inputs[k].name);
			rc = fail(&o, "input", msg);
			goto done;
		}
	}
	if (o.nrel) {
		for (ng = 0; ng < o.nrel; ng++)
			if (relation(o.rel[ng], &ei[ng], &g[ng], msg, sizeof msg) < 0) {
				rc = fail(&o, "graph", msg);
				goto done;
			}
	} else if (gnn_graph_read_npy(&g[ng++], o.graph, x[0].shape[0]) != GNN_OK) {
		g[0] = NULL;
		rc = fail(&o, "graph", gnn_errmsg());
		goto done;
	}

	t0 = now_s();
	if ((s = d->create(&m)) != GNN_OK) {
		m = NULL;
		rc = fail(&o, "create", gnn_errmsg());
		goto done;
	}
	create_s = now_s() - t0;
	t0 = now_s();
	/* training starts from the seeded init, as PyG's cells from PyG's;
	** the same seed draws the dropout masks */
	if (o.train ? (s = gnn_prog_init(m, o.seed)) != GNN_OK ||
	    (s = gnn_prog_train_config(m, d->train, &d->train->cfg, o.seed)) != GNN_OK :
	    (s = d->load_weights(m, o.weights)) != GNN_OK) {
		rc = fail(&o, o.train ? "init" : "load_weights", gnn_errmsg());
		goto done;
	}
	load_s = now_s() - t0;
	t0 = now_s();
	if ((s = o.nrel ? d->bind_graphs(m, g, ng) : d->bind(m, g[0])) != GNN_OK) {
		rc = fail(&o, "bind", gnn_errmsg());
		goto done;
	}
	bind_s = now_s() - t0;

	out.dtype = d->outputs[0].dtype;
	out.rank = d->outputs[0].rank;
	if (d->output_shape(m, 0, out.shape) != GNN_OK) {
		rc = fail(&o, "output_shape", gnn_errmsg());
		goto done;
	}
	if (o.train) {   /* the loss's rows are the output's */
		rc = train(&o, d, m, x, o.ninput, out.shape[0], create_s, load_s, bind_s);
		goto done;
	}
	out.nbytes = gnn_dtype_size(out.dtype);
	for (int k = 0; k < out.rank; k++)
		out.nbytes *= (size_t)out.shape[k];
	if (!(out.data = malloc(out.nbytes ? out.nbytes : 1)) ||
	    !(warm = calloc((size_t)o.warmup, sizeof *warm))) {
		rc = fail(&o, "output", "out of memory");
		goto done;
	}

	{
		const void *in[MAXIN];
		void *outs[1] = {out.data};
		for (int k = 0; k < o.ninput; k++)
			in[k] = x[k].data;
		/* warm-up: stop early when one forward alone uses up a quarter of the cap */
		for (warmup = 0; warmup < o.warmup; warmup++) {
			t0 = now_s();
			if (d->forward(m, in, outs) != GNN_OK) {
				rc = fail(&o, "forward", gnn_errmsg());
				goto done;
			}
			warm[warmup] = now_s() - t0;
			if (warm[warmup] * 4 > o.cap_s) {
				warmup++;
				break;
			}
		}
		runs = nruns(&o, warm[warmup - 1]);
		if (!(t = calloc((size_t)runs, sizeof *t))) {
			rc = fail(&o, "time", "out of memory");
			goto done;
		}
		for (int i = 0; i < runs; i++) {
			t0 = now_s();
			if (d->forward(m, in, outs) != GNN_OK) {
				rc = fail(&o, "forward", gnn_errmsg());
				goto done;
			}
			t[i] = (now_s() - t0) * 1e3;
		}
	}
	if (o.out && gnn_npy_write(o.out, &out) != GNN_OK) {
		rc = fail(&o, "write", gnn_errmsg());
		goto done;
	}
	{
		double mn = t[0], mean = 0, first = warm[0] * 1e3;
		for (int i = 0; i < runs; i++) {
			mean += t[i] / runs;
			mn = t[i] < mn ? t[i] : mn;
		}
		jresult(&o, "ok");
		printf(", \"median_ms\": %.6g, \"min_ms\": %.6g, \"mean_ms\": %.6g, \"first_ms\": %.6g, "
			"\"runs\": %d, \"warmup\": %d, \"create_s\": %.4g, \"load_s\": %.4g, "
			"\"bind_s\": %.4g, \"self_maxrss_kb\": %ld}\n",
			median(t, runs), mn, mean, first, runs, warmup, create_s, load_s, bind_s,
			maxrss_kb());
		fflush(stdout);
	}
	rc = 0;
done:
	if (m)
		d->destroy(m);
	for (int k = 0; k < ng; k++)   /* after the model: a bound model uses its graphs */
		gnn_graph_destroy(g[k]);
	for (int k = 0; k < MAXIN; k++)
		gnn_array_free(&x[k]);
	for (int k = 0; k < MAXREL; k++)
		gnn_array_free(&ei[k]);
	free(out.data);
	free(warm);
	free(t);
	return rc;
}
