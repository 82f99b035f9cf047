/*
** gnnbench.cu: runs gnncc-compiled cuda models on one graph, through their
** descriptors, to time forward (bench/run.sh) or to check its output
** (tests/gpu/run.sh).
**
**   gnnbench --graph=EDGE_INDEX.npy --x=X.npy [options] [MODEL...]
**
** Design.  One source serves every model: the models linked in are named
** at compile time by -DGNNBENCH_MODELS='X(GCN_O2) X(SAGE_O2)', an X-macro
** list of NAME for each NAME_desc, so one executable per graph holds all
** the models of that graph and the graph is read and built once.
** Parameters get deterministic random values from the descriptor's
** shapes (or come from --weights), written to a safetensors file and
** loaded through load_weights, so the file can be handed to PyG as well.
** The link wraps three CUDA runtime calls (-Wl,--wrap=..., see
** bench/bench.py build-harness):
**   - cudaMalloc and cudaFree, to count the bytes live on the device: the
**     peak covers everything the inference holds (x, weights, the model's
**     arena, the outputs), as torch.cuda.max_memory_allocated does for PyG;
**   - cudaStreamCreateWithFlags, to learn the stream that create makes for
**     the model: the descriptor does not expose it, and CUDA events must be
**     recorded on the stream forward enqueues on.  If create made no stream
**     or several, the time falls back to a host clock around forward and a
**     cudaDeviceSynchronize ("timer": "host" in the output).
** Built for the emulated device (bench.py build-harness --emulate, which
** defines GNNBENCH_EMULATED: the C++ compiler against gnnemu's
** cuda_runtime.h, whose runtime calls are inline and cannot be wrapped),
** the peak is the emulator's own count (gnnemu_stats) and the timer is
** the host's; the figures then say nothing about a GPU, but every path
** of the harness runs without one (tests/bench).
** Each timed forward is bracketed by events and waited for, as a PyTorch
** loop with events does; the median is reported, with at least --runs
** samples (more, up to --max-runs, while they fit in --target-seconds).
** Every result is one JSON line on stdout; progress lines
** ({"event": "start", ...}) let bench/bench.py time out a single model.
** --profile=FILE records every launch (gnnrt.h's profile) of create,
** load, bind and --runs forwards instead of timing them.
** --check runs forward twice, each time on outputs poisoned with NaN
** (all bytes 0xff), and reports whether the two results are bitwise
** identical and how many elements are not finite.
** --train times the models' training steps instead (models compiled with
** a train item; benchtrain.h's epoch, as bench/cpu's training rows): the
** weights start from gnn_prog_init(--seed), the model's declared (PyG's)
** init, labels and mask come from --y and --mask; the record has "task":
** "train", the losses and the peak of device bytes.
*/
#define _POSIX_C_SOURCE 200809L

#include <cuda_runtime.h>

#include <errno.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "gnnrt.h"
#include "gnnhalf.h"
#include "benchutil.h"
#include "benchtrain.h"

#ifndef GNNBENCH_MODELS
#error "define GNNBENCH_MODELS as X(NAME) X(NAME) ..., one per NAME_desc linked in"
#endif

extern "C" {
#define X(name) extern const gnn_model_desc name##_desc;
GNNBENCH_MODELS
#undef X
}

static const gnn_model_desc *const models[] = {
#define X(name) &name##_desc,
	GNNBENCH_MODELS
#undef X
};
static const int nmodels = (int)(sizeof models / sizeof models[0]);

/* --- device allocations, counted through the wrapped runtime calls ------- */

static cudaStream_t created[4];
static int ncreated;

#ifdef GNNBENCH_EMULATED
static void
peak_restart(void)
{
	gnnemu_reset_peak();
}

static size_t
peak_bytes(void)
{
	gnnemu_stats st;

	gnnemu_get_stats(&st);
	return st.peak_bytes;
}
#else
typedef struct Block {
	void *p;
	size_t n;
} Block;

static Block *blocks;
static size_t nblocks, capblocks;
static size_t live, peak;

static void
peak_restart(void)
{
	peak = live;
}

static size_t
peak_bytes(void)
{
	return peak;
}

extern "C" {
cudaError_t __real_cudaMalloc(void **p, size_t n);
cudaError_t __real_cudaFree(void *p);
cudaError_t __real_cudaStreamCreateWithFlags(cudaStream_t *s, unsigned int flags);

cudaError_t
__wrap_cudaMalloc(void **p, size_t n)
{
	cudaError_t e = __real_cudaMalloc(p, n);

	if (e != cudaSuccess || !p || !*p)
		return e;
	if (nblocks == capblocks) {
		size_t cap = capblocks ? 2 * capblocks : 64;
		Block *b = (Block *)realloc(blocks, cap * sizeof *b);
		if (!b)   /* counting is best effort; the allocation stands */
			return e;
		blocks = b;
		capblocks = cap;
	}
	blocks[nblocks].p = *p;
	blocks[nblocks].n = n;
	nblocks++;
	live += n;
	if (live > peak)
		peak = live;
	return e;
}

cudaError_t
__wrap_cudaFree(void *p)
{
	for (size_t i = 0; p && i < nblocks; i++)
		if (blocks[i].p == p) {
			live -= blocks[i].n;
			blocks[i] = blocks[--nblocks];
			break;
		}
	return __real_cudaFree(p);
}

cudaError_t
__wrap_cudaStreamCreateWithFlags(cudaStream_t *s, unsigned int flags)
{
	cudaError_t e = __real_cudaStreamCreateWithFlags(s, flags);

	if (e == cudaSuccess && ncreated < (int)(sizeof created / sizeof created[0]))
		created[ncreated] = *s;
	if (e == cudaSuccess)
		ncreated++;
	return e;
}
}
#endif

/* --- options --------------------------------------------------------------- */

typedef struct Opts {
	const char *graph, *x, *batch, *label;
	const char *weights, *save_weights, *out;
	unsigned long long seed;
	int warmup, runs, max_runs;
	double target_s;
	int check;
	const char *profile;   /* --profile=FILE: per-launch records (gnnrt.h) */
	int train;             /* --train: training steps, --y and --mask their inputs */
	const char *y, *mask;
	int list;
	int weights_only;
	const char *only[64];
	int nonly;
} Opts;

static void
usage(FILE *f, const char *argv0)
{
	fprintf(f,
		"usage: %s --graph=EDGE_INDEX.npy --x=X.npy [options] [MODEL...]\n"
		"  runs the linked models (all, or those named) on the graph\n"
		"  --graph=FILE          edge_index, int32 or int64 [2, E]\n"
		"  --x=FILE              node features [N, F]: f32, f64, or u8/bool (then row-normalized\n"
		"                        as PyG's NormalizeFeatures); a model of another input width\n"
		"                        gets seeded random features U[0, 1) of its width instead\n"
		"  --batch=FILE          node-to-graph ids [N] for models with a batch graph\n"
		"  --label=NAME          the graph's name in the JSON output\n"
		"  --weights=FILE        load these weights (one model only) instead of random ones\n"
		"  --save-weights=FILE   keep the random weights (one model only)\n"
		"  --seed=S              seed of the random weights and features (default 0)\n"
		"  --warmup=K            untimed forwards first (default 5)\n"
		"  --runs=R              at least R timed forwards (default 20)\n"
		"  --max-runs=R          at most R timed forwards (default 200)\n"
		"  --target-seconds=T    time spent on timed forwards, within those bounds (default 0.5)\n"
		"  --check               no timing: forward twice on NaN-poisoned outputs, compare\n"
		"  --train               time training steps (one full-graph epoch each; models\n"
		"                        compiled with a train item), from gnn_prog_init(--seed)\n"
		"  --y=FILE              training: labels, int64 [N]\n"
		"  --mask=FILE           training: the nodes of the loss, bool [N]\n"
		"  --profile=FILE        no timing: every launch of create, load, bind and --runs\n"
		"                        forwards timed alone by CUDA events, written to FILE as JSON\n"
		"                        lines (docs/cli.md \"Profiling\"), a table on stderr\n"
		"  --out=PREFIX          write the outputs (one model only): PREFIX.npy, or PREFIX.K.npy\n"
		"                        for each output K when there are several\n"
		"  --weights-only        write the random weights (--save-weights) and exit: no GPU needed\n"
		"  --list                print the linked models and exit\n",
		argv0);
}

static int
parseopts(int argc, char **argv, Opts *o)
{
	memset(o, 0, sizeof *o);
	o->label = "graph";
	o->warmup = 5;
	o->runs = 20;
	o->max_runs = 200;
	o->target_s = 0.5;
	for (int i = 1; i < argc; i++) {
		const char *a = argv[i];
#define VAL(pfx) (!strncmp(a, pfx "=", sizeof pfx) ? a + sizeof pfx : NULL)
		const char *v;
		if (!strcmp(a, "-h") || !strcmp(a, "--help")) {
			usage(stdout, argv[0]);
			exit(0);
		} else if ((v = VAL("--graph")))
			o->graph = v;
		else if ((v = VAL("--x")))
			o->x = v;
		else if ((v = VAL("--batch")))
			o->batch = v;
		else if ((v = VAL("--label")))
			o->label = v;
		else if ((v = VAL("--weights")))
			o->weights = v;
		else if ((v = VAL("--save-weights")))
			o->save_weights = v;
		else if ((v = VAL("--out")))
			o->out = v;
		else if ((v = VAL("--seed")))
			o->seed = strtoull(v, NULL, 10);
		else if ((v = VAL("--warmup"))) {
			if (intopt("gnnbench", v, "--warmup", 0, &o->warmup) < 0)
				return -1;
		} else if ((v = VAL("--runs"))) {
			if (intopt("gnnbench", v, "--runs", 1, &o->runs) < 0)
				return -1;
		} else if ((v = VAL("--max-runs"))) {
			if (intopt("gnnbench", v, "--max-runs", 1, &o->max_runs) < 0)
				return -1;
		} else if ((v = VAL("--target-seconds")))
			o->target_s = atof(v);
		else if (!strcmp(a, "--check"))
			o->check = 1;
		else if (!strcmp(a, "--train"))
			o->train = 1;
		else if ((v = VAL("--y")))
			o->y = v;
		else if ((v = VAL("--mask")))
			o->mask = v;
		else if ((v = VAL("--profile")))
			o->profile = v;
		else if (!strcmp(a, "--list"))
			o->list = 1;
		else if (!strcmp(a, "--weights-only"))
			o->weights_only = 1;
		else if (a[0] == '-') {
			fprintf(stderr, "gnnbench: unknown option '%s'\n", a);
			usage(stderr, argv[0]);
			return -1;
		} else if (o->nonly < (int)(sizeof o->only / sizeof o->only[0]))
			o->only[o->nonly++] = a;
#undef VAL
	}
	if (o->max_runs < o->runs)
		o->max_runs = o->runs;
	if (o->weights_only && !o->save_weights) {
		fprintf(stderr, "gnnbench: --weights-only needs --save-weights\n");
		return -1;
	}
	if (o->train && (!o->y || !o->mask || o->check || o->profile || o->weights)) {
		fprintf(stderr, "gnnbench: --train needs --y and --mask, and takes no --check, "
			"--profile or --weights\n");
		return -1;
	}
	if (!o->list && !o->weights_only && (!o->graph || !o->x)) {
		fprintf(stderr, "gnnbench: --graph and --x are required\n");
		usage(stderr, argv[0]);
		return -1;
	}
	return 0;
}

/* --- JSON output ----------------------------------------------------------- */

static void
jhead(const Opts *o, const gnn_model_desc *d, const char *event)
{
	printf("{\"tool\": \"gnncc\", \"event\": \"%s\", \"model\": ", event);
	jstr(d->name);
	printf(", \"graph\": ");
	jstr(o->label);
	if (o->train)
		printf(", \"task\": \"train\"");
}

static void
jerror(const Opts *o, const gnn_model_desc *d, const char *stage, const char *msg)
{
	jhead(o, d, "result");
	printf(", \"status\": \"error\", \"stage\": \"%s\", \"message\": ", stage);
	jstr(msg);
	printf("}\n");
	fflush(stdout);
}

/* --- data ------------------------------------------------------------------ */

/* splitmix64: a fixed sequence per seed on every platform */
static uint64_t
mix(uint64_t *s)
{
	uint64_t z = (*s += 0x9e3779b97f4a7c15ull);

	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
	return z ^ (z >> 31);
}

static double
uniform(uint64_t *s)
{
	return (double)(mix(s) >> 11) * (1.0 / 9007199254740992.0);
}

static uint64_t
fnv1a(const char *s)
{
	uint64_t h = 0xcbf29ce484222325ull;

	for (; *s; s++)
		h = (h ^ (unsigned char)*s) * 0x100000001b3ull;
	return h;
}

static int
endswith(const char *s, const char *suffix)
{
	size_t n = strlen(s), k = strlen(suffix);

	return n >= k && !strcmp(s + n - k, suffix);
}

/*
** Random values for one parameter, seeded by its name (not its position),
** on PyG's scales: U(+-1/sqrt(fan_in)) for weights (the last dim is the
** input), BatchNorm weights and running variances in [0.5, 1.5) so that
** normalization stays well conditioned, num_batches_tracked 0, anything
** else (biases, running means, GIN's eps) U(+-0.1).
*/
static void
fillparam(const gnn_tensor_info *p, unsigned long long seed, gnn_array *a)
{
	uint64_t s = seed ^ fnv1a(p->name);
	int64_t n = gnn_array_numel(a);

	if (a->dtype != GNN_F32) {   /* i64 counters: zero */
		memset(a->data, 0, a->nbytes);
		return;
	}
	float *v = (float *)a->data;
	double lo = -0.1, hi = 0.1;
	if (endswith(p->name, "running_var") || endswith(p->name, "module.weight")) {
		lo = 0.5;
		hi = 1.5;
	} else if (p->rank >= 2) {
		hi = 1.0 / sqrt((double)(p->shape[p->rank - 1] > 0 ? p->shape[p->rank - 1] : 1));
		lo = -hi;
	}
	for (int64_t i = 0; i < n; i++)
		v[i] = (float)(lo + (hi - lo) * uniform(&s));
}

/* Writes random weights for d to path. */
static gnn_status
randomweights(const gnn_model_desc *d, unsigned long long seed, const char *path)
{
	const char **names = (const char **)calloc((size_t)d->nparams + 1, sizeof *names);
	gnn_array *arrs = (gnn_array *)calloc((size_t)d->nparams + 1, sizeof *arrs);
	gnn_status s = GNN_OK;
	int i;

	if (!names || !arrs) {
		s = gnn_error(GNN_ERR_MEM, "out of memory for the parameter list");
		goto out;
	}
	for (i = 0; i < d->nparams; i++) {
		const gnn_tensor_info *p = &d->params[i];
		gnn_array *a = &arrs[i];
		size_t n = 1;
		names[i] = p->name;
		a->dtype = p->dtype;
		a->rank = p->rank;
		for (int k = 0; k < p->rank; k++) {
			if (p->shape[k] < 0) {
				s = gnn_error(GNN_ERR_SHAPE, "parameter %s has a symbolic shape %s",
					p->name, p->dims);
				goto out;
			}
			a->shape[k] = p->shape[k];
			n *= (size_t)p->shape[k];
		}
		a->nbytes = n * gnn_dtype_size(p->dtype);
		if (a->nbytes && !(a->data = malloc(a->nbytes))) {
			s = gnn_error(GNN_ERR_MEM, "out of memory for parameter %s", p->name);
			goto out;
		}
		if (a->nbytes)
			fillparam(p, seed, a);
	}
	s = gnn_st_write(path, names, arrs, d->nparams);
out:
	for (i = 0; arrs && i < d->nparams; i++)
		free(arrs[i].data);
	free(names);
	free(arrs);
	return s;
}

/* The node features as float32 [n, f] (host), from x.npy. */
typedef struct Feat {
	int64_t n, f;
	float *v;
} Feat;

static gnn_status
loadfeat(const char *path, Feat *x)
{
	gnn_array a;
	gnn_status s;

	memset(x, 0, sizeof *x);
	if ((s = gnn_npy_read(path, &a)) != GNN_OK)
		return s;
	if (a.rank != 2) {
		gnn_array_free(&a);
		return gnn_error(GNN_ERR_SHAPE, "%s: want a feature matrix [N, F]", path);
	}
	x->n = a.shape[0];
	x->f = a.shape[1];
	int64_t numel = x->n * x->f;
	if (!(x->v = (float *)malloc((size_t)(numel ? numel : 1) * sizeof(float)))) {
		gnn_array_free(&a);
		return gnn_error(GNN_ERR_MEM, "%s: out of memory", path);
	}
	switch (a.dtype) {
	case GNN_F32:
		memcpy(x->v, a.data, (size_t)numel * sizeof(float));
		break;
	case GNN_F64:
		for (int64_t i = 0; i < numel; i++)
			x->v[i] = (float)((const double *)a.data)[i];
		break;
	case GNN_U8:
	case GNN_BOOL: {
		/* PyG's NormalizeFeatures on 0/1 data (min 0): each row over its sum
		** clamped to 1, in double and rounded once, as examples/common/cora.c */
		const unsigned char *u = (const unsigned char *)a.data;
		unsigned lo = 255;
		for (int64_t i = 0; i < numel; i++)
			if (u[i] < lo)
				lo = u[i];
		for (int64_t r = 0; r < x->n; r++) {
			double sum = 0;
			for (int64_t k = 0; k < x->f; k++)
				sum += u[r * x->f + k] - lo;
			if (sum < 1)
				sum = 1;
			for (int64_t k = 0; k < x->f; k++)
				x->v[r * x->f + k] = (float)((u[r * x->f + k] - lo) / sum);
		}
		break;
	}
	default:
		gnn_array_free(&a);
		free(x->v);
		x->v = NULL;
		return gnn_error(GNN_ERR_DTYPE, "%s: dtype %s, want f32, f64, u8 or bool", path,
			gnn_dtype_name(a.dtype));
	}
	gnn_array_free(&a);
	return GNN_OK;
}

static gnn_status
loadgraph(const Opts *o, int64_t n, gnn_graph **g)
{
	gnn_array a, b;
	gnn_status s;

	if ((s = gnn_npy_read(o->graph, &a)) != GNN_OK)
		return s;
	if (a.rank != 2 || a.shape[0] != 2)
		s = gnn_error(GNN_ERR_SHAPE, "%s: want edge_index [2, E]", o->graph);
	else
		s = gnn_graph_from_edge_index(g, a.data, a.dtype, a.shape[1], n);
	gnn_array_free(&a);
	if (s != GNN_OK || !o->batch)
		return s;
	if ((s = gnn_npy_read(o->batch, &b)) != GNN_OK)
		return s;
	if (b.rank != 1 || b.shape[0] != n || (b.dtype != GNN_I64 && b.dtype != GNN_I32)) {
		s = gnn_error(GNN_ERR_SHAPE, "%s: want int [N] node-to-graph ids", o->batch);
	} else {
		int64_t ngraphs = 0;
		for (int64_t i = 0; i < n; i++) {
			int64_t v = b.dtype == GNN_I64 ? ((const int64_t *)b.data)[i]
				: ((const int32_t *)b.data)[i];
			if (v + 1 > ngraphs)
				ngraphs = v + 1;
		}
		s = gnn_graph_set_batch(*g, b.data, b.dtype, ngraphs);
	}
	gnn_array_free(&b);
	return s;
}

/* --- one model ------------------------------------------------------------- */

static size_t
freemem(void)
{
	size_t f = 0, t = 0;

	cudaMemGetInfo(&f, &t);
	return f;
}

/* output file name for output k of nout */
static void
outname(char *buf, size_t n, const char *prefix, int k, int nout)
{
	if (nout == 1)
		snprintf(buf, n, "%s.npy", prefix);
	else
		snprintf(buf, n, "%s.%d.npy", prefix, k);
}

typedef struct Run {
	void *model;
	void *xdev;
	void *out[8];
	size_t outbytes[8];
	int64_t outshape[8][GNN_MAX_RANK];
	float *xrand;
} Run;

static void
teardown(const gnn_model_desc *d, Run *r)
{
	if (r->model)
		d->destroy(r->model);
	if (r->xdev)
		cudaFree(r->xdev);
	for (int k = 0; k < 8; k++)
		if (r->out[k])
			cudaFree(r->out[k]);
	free(r->xrand);
	memset(r, 0, sizeof *r);
}

/* the forward the descriptor exposes, then a wait for its work */
static gnn_status
forward_sync(const gnn_model_desc *d, Run *r, cudaStream_t st)
{
	const void *in[1] = {r->xdev};
	gnn_status s = d->forward(r->model, in, r->out);

	if (s != GNN_OK)
		return s;
	cudaError_t e = st ? cudaStreamSynchronize(st) : cudaDeviceSynchronize();
	if (e != cudaSuccess)
		return gnn_error(GNN_ERR_CUDA, "forward: %s", cudaGetErrorString(e));
	return GNN_OK;
}

/* nruns for benchtrain_run: as many steps as fit in --target-seconds,
** within [--runs, --max-runs] */
static int
trainruns(double est, const void *ctx)
{
	const Opts *o = (const Opts *)ctx;
	int runs = o->runs;

	if (est > 0 && o->target_s / est > runs)
		runs = o->target_s / est > o->max_runs ? o->max_runs : (int)(o->target_s / est);
	return runs;
}

/* --train: the training steps of a created, initialized and bound model */
static int
trainit(const Opts *o, const gnn_model_desc *d, Run *r, int64_t n, double bind_s, double init_s)
{
	BenchTrain t;
	int rc = -1;

	/* no cap on the warm-up: --warmup steps, as forwards get */
	if (benchtrain_run(r->model, d->train, (const void *const *)&r->xdev, 1, n, o->y, o->mask, o->warmup > 0 ? o->warmup : 1,
			1e30, trainruns, o, &t) < 0)
		jerror(o, d, t.stage, t.msg);
	else {
		jhead(o, d, "result");
		printf(", \"status\": \"ok\", \"timer\": \"host\"");
		benchtrain_json(&t, d->train);
		printf(", \"seed\": %llu, \"peak_bytes\": %zu, \"init_s\": %.4g, \"bind_s\": %.4g}\n",
			o->seed, peak_bytes(), init_s, bind_s);
		fflush(stdout);
		rc = 0;
	}
	free(t.t);
	return rc;
}

/* --profile: forwards one after another, their launches recorded by
 * the runtime's profile (on from main) */
static int
profileit(const Opts *o, const gnn_model_desc *d, Run *r, cudaStream_t st)
{
	for (int i = 0; i < o->runs; i++)
		if (forward_sync(d, r, st) != GNN_OK) {
			jerror(o, d, "forward", gnn_errmsg());
			return -1;
		}
	jhead(o, d, "result");
	printf(", \"status\": \"ok\", \"profile\": ");
	jstr(o->profile);
	printf(", \"forwards\": %d}\n", o->runs);
	fflush(stdout);
	return 0;
}

static int
timeit(const Opts *o, const gnn_model_desc *d, Run *r, cudaStream_t st, size_t free0,
	size_t *minfree, double bind_s, double load_s)
{
	const void *in[1] = {r->xdev};
	cudaEvent_t ev0 = NULL, ev1 = NULL;
	double *ev = NULL, *host = NULL, *warm = NULL;
	int runs, i, rc = -1;

	if (!(warm = (double *)calloc((size_t)o->warmup + 1, sizeof *warm))) {
		jerror(o, d, "time", "out of memory");
		return -1;
	}
	for (i = 0; i < o->warmup; i++) {
		double t0 = now_s();
		if (forward_sync(d, r, st) != GNN_OK) {
			jerror(o, d, "forward", gnn_errmsg());
			goto out;
		}
		warm[i] = now_s() - t0;
	}
	{
		size_t f = freemem();
		if (f < *minfree)
			*minfree = f;
	}
	/* as many runs as fit in the target time, within [runs, max_runs] */
	runs = o->runs;
	if (o->warmup > 0) {
		double est = o->warmup > 1 ? median(warm + 1, o->warmup - 1) : warm[0];
		if (est > 0 && o->target_s / est > runs)
			runs = o->target_s / est > o->max_runs ? o->max_runs : (int)(o->target_s / est);
	}
	ev = (double *)calloc((size_t)runs, sizeof *ev);
	host = (double *)calloc((size_t)runs, sizeof *host);
	if (!ev || !host) {
		jerror(o, d, "time", "out of memory");
		goto out;
	}
	if (st && (cudaEventCreate(&ev0) != cudaSuccess || cudaEventCreate(&ev1) != cudaSuccess)) {
		jerror(o, d, "time", "cudaEventCreate failed");
		goto out;
	}
	for (i = 0; i < runs; i++) {
		double t0 = now_s();
		cudaError_t e;
		float ms = 0;
		if (st)
			cudaEventRecord(ev0, st);
		if (d->forward(r->model, in, r->out) != GNN_OK) {
			jerror(o, d, "forward", gnn_errmsg());
			goto out;
		}
		if (st) {
			cudaEventRecord(ev1, st);
			e = cudaEventSynchronize(ev1);
		} else
			e = cudaDeviceSynchronize();
		host[i] = (now_s() - t0) * 1e3;
		if (e != cudaSuccess) {
			jerror(o, d, "forward", cudaGetErrorString(e));
			goto out;
		}
		if (st)
			cudaEventElapsedTime(&ms, ev0, ev1);
		ev[i] = st ? ms : host[i];
	}
	{
		double mn = ev[0], mean = 0, med, hmed;
		for (i = 0; i < runs; i++) {
			mean += ev[i] / runs;
			if (ev[i] < mn)
				mn = ev[i];
		}
		med = median(ev, runs);
		hmed = median(host, runs);
		size_t f = freemem();
		if (f < *minfree)
			*minfree = f;
		jhead(o, d, "result");
		printf(", \"status\": \"ok\", \"timer\": \"%s\", \"median_ms\": %.6g, \"min_ms\": %.6g, "
			"\"mean_ms\": %.6g, \"host_median_ms\": %.6g, \"runs\": %d, \"warmup\": %d, "
			"\"peak_bytes\": %zu, \"meminfo_bytes\": %zu, \"load_s\": %.4g, \"bind_s\": %.4g}\n",
			st ? "events" : "host", med, mn, mean, hmed, runs, o->warmup, peak_bytes(),
			free0 > *minfree ? free0 - *minfree : (size_t)0, load_s, bind_s);
		fflush(stdout);
	}
	rc = 0;
out:
	if (ev0)
		cudaEventDestroy(ev0);
	if (ev1)
		cudaEventDestroy(ev1);
	free(warm);
	free(ev);
	free(host);
	return rc;
}

/* forward twice on poisoned outputs; bitwise comparison and a NaN count */
static int
checkit(const Opts *o, const gnn_model_desc *d, Run *r, cudaStream_t st)
{
	unsigned char *a[8] = {0}, *b[8] = {0};
	long long nonfinite = 0;
	int identical = 1, rc = -1, k;

	for (k = 0; k < d->noutputs; k++) {
		size_t n = r->outbytes[k] ? r->outbytes[k] : 1;
		if (!(a[k] = (unsigned char *)malloc(n)) || !(b[k] = (unsigned char *)malloc(n))) {
			jerror(o, d, "check", "out of memory");
			goto out;
		}
	}
	for (int pass = 0; pass < 2; pass++) {
		unsigned char **h = pass ? b : a;
		for (k = 0; k < d->noutputs; k++)
			if (r->outbytes[k] && cudaMemset(r->out[k], 0xff, r->outbytes[k]) != cudaSuccess) {
				jerror(o, d, "check", "cudaMemset failed");
				goto out;
			}
		/* the memset is on the default stream; the model's stream does
		** not wait for it (it is created non-blocking) */
		if (cudaDeviceSynchronize() != cudaSuccess) {
			jerror(o, d, "check", cudaGetErrorString(cudaGetLastError()));
			goto out;
		}
		if (forward_sync(d, r, st) != GNN_OK) {
			jerror(o, d, "forward", gnn_errmsg());
			goto out;
		}
		for (k = 0; k < d->noutputs; k++)
			if (r->outbytes[k] && cudaMemcpy(h[k], r->out[k], r->outbytes[k],
					cudaMemcpyDeviceToHost) != cudaSuccess) {
				jerror(o, d, "check", "cudaMemcpy failed");
				goto out;
			}
	}
	for (k = 0; k < d->noutputs; k++) {
		if (memcmp(a[k], b[k], r->outbytes[k]))
			identical = 0;
		if (d->outputs[k].dtype == GNN_F32)
			for (size_t i = 0; i < r->outbytes[k] / 4; i++)
				nonfinite += !isfinite(((const float *)a[k])[i]);
		if (d->outputs[k].dtype == GNN_BF16) {
			/* bfloat16 words: their values as float32, exactly (.npy
			** has no bfloat16), in b's buffer, no longer needed */
			float *v = (float *)realloc(b[k], r->outbytes[k] * 2 + 4);
			if (!v) {
				jerror(o, d, "check", "out of memory");
				goto out;
			}
			b[k] = (unsigned char *)v;
			for (size_t i = 0; i < r->outbytes[k] / 2; i++) {
				v[i] = gnn_ld_bf16(((const uint16_t *)a[k])[i]);
				nonfinite += !isfinite(v[i]);
			}
		}
		if (o->out) {
			char path[4096];
			gnn_array arr;
			memset(&arr, 0, sizeof arr);
			arr.dtype = d->outputs[k].dtype == GNN_BF16 ? GNN_F32 : d->outputs[k].dtype;
			arr.rank = d->outputs[k].rank;
			memcpy(arr.shape, r->outshape[k], sizeof arr.shape);
			arr.data = d->outputs[k].dtype == GNN_BF16 ? (void *)b[k] : a[k];
			arr.nbytes = d->outputs[k].dtype == GNN_BF16 ? r->outbytes[k] * 2 : r->outbytes[k];
			outname(path, sizeof path, o->out, k, d->noutputs);
			if (gnn_npy_write(path, &arr) != GNN_OK) {
				jerror(o, d, "write", gnn_errmsg());
				goto out;
			}
		}
	}
	jhead(o, d, "result");
	printf(", \"status\": \"ok\", \"check\": true, \"identical\": %s, \"nonfinite\": %lld}\n",
		identical ? "true" : "false", nonfinite);
	fflush(stdout);
	rc = 0;
out:
	for (k = 0; k < 8; k++) {
		free(a[k]);
		free(b[k]);
	}
	return rc;
}

static int
runmodel(const Opts *o, const gnn_model_desc *d, const Feat *x, gnn_graph *g)
{
	Run r;
	char wpath[4096];
	int tmpweights = 0, rc = -1;
	const float *xh = x->v;
	size_t free0, minfree, xbytes;
	double t0, load_s, bind_s = 0;
	cudaStream_t st = NULL;
	int64_t f = 0;
	gnn_status s;

	memset(&r, 0, sizeof r);
	jhead(o, d, "start");
	printf("}\n");
	fflush(stdout);
	if (d->target != GNN_TARGET_CUDA || d->ninputs != 1 || d->inputs[0].rank != 2 ||
	    (d->inputs[0].dtype != GNN_F32 && d->inputs[0].dtype != GNN_BF16) || d->noutputs > 8) {
		jerror(o, d, "model", "gnnbench runs cuda models with one f32 or bf16 input [N, F] "
			"and at most 8 outputs");
		return -1;
	}
	f = d->inputs[0].shape[1];
	if (f != x->f) {   /* another width (the aggregation benchmark): random features */
		if (!(r.xrand = (float *)malloc((size_t)(x->n * f + 1) * sizeof(float)))) {
			jerror(o, d, "input", "out of memory");
			return -1;
		}
		uint64_t st = o->seed ^ 0x5eedull;
		for (int64_t i = 0; i < x->n * f; i++)
			r.xrand[i] = (float)uniform(&st);
		xh = r.xrand;
	}

	/* the peak counts from here: this model's inputs, weights, arena, outputs */
	peak_restart();
	free0 = minfree = freemem();
	xbytes = (size_t)(x->n * f) * gnn_dtype_size(d->inputs[0].dtype);
	if (d->inputs[0].dtype == GNN_BF16) {
		/* a model that takes bfloat16 features: the words, rounded
		** to nearest even as gnnrun rounds a .npy, made before the
		** peak's count starts over below (the caller's conversion) */
		uint16_t *w = (uint16_t *)malloc(xbytes ? xbytes : 2);
		if (!w) {
			jerror(o, d, "input", "out of memory");
			goto out;
		}
		for (int64_t i = 0; i < x->n * f; i++)
			w[i] = gnn_st_bf16(xh[i]);
		free(r.xrand);
		r.xrand = (float *)w;
		xh = (const float *)w;
	}
	/* the copy must be complete before the model's (non-blocking) stream reads x */
	if (cudaMalloc(&r.xdev, xbytes ? xbytes : 4) != cudaSuccess ||
	    cudaMemcpy(r.xdev, xh, xbytes, cudaMemcpyHostToDevice) != cudaSuccess ||
	    cudaDeviceSynchronize() != cudaSuccess) {
		jerror(o, d, "input", cudaGetErrorString(cudaGetLastError()));
		goto out;
	}

	ncreated = 0;
	if ((s = d->create(&r.model)) != GNN_OK) {
		r.model = NULL;
		jerror(o, d, "create", gnn_errmsg());
		goto out;
	}
	st = ncreated == 1 ? created[0] : NULL;

	if (o->train) {
		/* from the model's declared init; the same seed draws dropout */
		if (!d->train) {
			jerror(o, d, "model", "the model has no training step (compiled without a "
				"train item)");
			goto out;
		}
		t0 = now_s();
		if ((s = gnn_prog_init(r.model, o->seed)) != GNN_OK ||
		    (s = gnn_prog_train_config(r.model, d->train, &d->train->cfg, o->seed)) != GNN_OK) {
			jerror(o, d, "init", gnn_errmsg());
			goto out;
		}
		load_s = now_s() - t0;
		goto bind;
	}
	if (o->weights)
		snprintf(wpath, sizeof wpath, "%s", o->weights);
	else if (o->save_weights)
		snprintf(wpath, sizeof wpath, "%s", o->save_weights);
	else {
		const char *tmp = getenv("TMPDIR");
		snprintf(wpath, sizeof wpath, "%s/gnnbench-%ld-%s.safetensors",
			tmp && *tmp ? tmp : "/tmp", (long)getpid(), d->name);
		tmpweights = 1;
	}
	if (!o->weights && (s = randomweights(d, o->seed, wpath)) != GNN_OK) {
		jerror(o, d, "weights", gnn_errmsg());
		goto out;
	}
	t0 = now_s();
	s = d->load_weights(r.model, wpath);
	load_s = now_s() - t0;
	if (tmpweights)
		unlink(wpath);
	if (s != GNN_OK) {
		jerror(o, d, "load_weights", gnn_errmsg());
		goto out;
	}
bind:
	t0 = now_s();
	if ((s = d->bind(r.model, g)) != GNN_OK) {
		jerror(o, d, "bind", gnn_errmsg());
		goto out;
	}
	bind_s = now_s() - t0;
	for (int k = 0; k < d->noutputs; k++) {
		size_t n = 1;
		if ((s = d->output_shape(r.model, k, r.outshape[k])) != GNN_OK) {
			jerror(o, d, "output_shape", gnn_errmsg());
			goto out;
		}
		for (int j = 0; j < d->outputs[k].rank; j++)
			n *= (size_t)r.outshape[k][j];
		r.outbytes[k] = n * gnn_dtype_size(d->outputs[k].dtype);
		if (cudaMalloc(&r.out[k], r.outbytes[k] ? r.outbytes[k] : 4) != cudaSuccess) {
			jerror(o, d, "output", cudaGetErrorString(cudaGetLastError()));
			goto out;
		}
	}
	{
		size_t fr = freemem();
		if (fr < minfree)
			minfree = fr;
	}
	rc = o->train ? trainit(o, d, &r, x->n, bind_s, load_s) :
		o->check ? checkit(o, d, &r, st) : o->profile ? profileit(o, d, &r, st)
		: timeit(o, d, &r, st, free0, &minfree, bind_s, load_s);
out:
	teardown(d, &r);
	cudaGetLastError();   /* a failed allocation must not fail the next model */
	return rc;
}

int
main(int argc, char **argv)
{
	Opts o;
	Feat x;
	gnn_graph *g = NULL;
	int fails = 0, ran = 0;

	if (parseopts(argc, argv, &o) < 0)
		return 2;
	if (o.list) {
		for (int i = 0; i < nmodels; i++)
			printf("%s\n", models[i]->name);
		return 0;
	}
	if ((o.weights || o.save_weights || o.out) && o.nonly != 1 && nmodels != 1) {
		fprintf(stderr, "gnnbench: --weights, --save-weights and --out need exactly one model\n");
		return 2;
	}
	if (o.weights_only) {
		const gnn_model_desc *d = models[0];
		for (int i = 0; i < nmodels && o.nonly; i++)
			if (!strcmp(o.only[0], models[i]->name))
				d = models[i];
		if (randomweights(d, o.seed, o.save_weights) != GNN_OK) {
			fprintf(stderr, "gnnbench: %s\n", gnn_errmsg());
			return 1;
		}
		return 0;
	}
	if (loadfeat(o.x, &x) != GNN_OK) {
		fprintf(stderr, "gnnbench: %s\n", gnn_errmsg());
		return 1;
	}
	if (loadgraph(&o, x.n, &g) != GNN_OK) {
		fprintf(stderr, "gnnbench: %s\n", gnn_errmsg());
		free(x.v);
		return 1;
	}
	if (o.profile && gnn_profile_start(o.profile) != GNN_OK) {
		fprintf(stderr, "gnnbench: %s\n", gnn_errmsg());
		return 1;
	}
	printf("{\"tool\": \"gnncc\", \"event\": \"graph\", \"graph\": ");
	jstr(o.label);
	printf(", \"N\": %lld, \"E\": %lld, \"F\": %lld}\n", (long long)x.n,
		(long long)gnn_graph_num_edges(g), (long long)x.f);
	fflush(stdout);
	for (int i = 0; i < nmodels; i++) {
		int want = o.nonly == 0;
		for (int k = 0; k < o.nonly; k++)
			want |= !strcmp(o.only[k], models[i]->name);
		if (!want)
			continue;
		ran++;
		fails += runmodel(&o, models[i], &x, g) != 0;
	}
	for (int k = 0; k < o.nonly; k++) {
		int found = 0;
		for (int i = 0; i < nmodels; i++)
			found |= !strcmp(o.only[k], models[i]->name);
		if (!found) {
			fprintf(stderr, "gnnbench: no model %s linked in (--list)\n", o.only[k]);
			fails++;
		}
	}
	if (o.profile && (gnn_profile_print(stderr) != GNN_OK || gnn_profile_stop() != GNN_OK)) {
		fprintf(stderr, "gnnbench: --profile: %s\n", gnn_errmsg());
		fails++;
	}
	gnn_graph_destroy(g);   /* after the models: a bound model uses the graph */
	free(x.v);
	return fails || !ran ? 1 : 0;
}
