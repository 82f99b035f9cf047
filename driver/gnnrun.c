/*
 * gnnrun: run a model on a graph and inputs from .npy files, with weights
 * from safetensors, and write its outputs as float32 .npy; in the spirit
 * of IREE's iree-run-module.
 *
 *	gnnrun MODEL.gnn --graph EDGE_INDEX.npy --input x=X.npy
 *	       --weights W.safetensors --output OUT.npy [--engine=interp]
 *
 * MODEL may be IR text (a .ir suffix), as for gnncc.
 *
 * The number of nodes comes from the node inputs (the tensor inputs whose
 * declared shape shares the graph's node dim), so isolated trailing nodes
 * count.  Every problem with the inputs is reported by name, all of them
 * before giving up.  The compiled engines take bare pointers, so the
 * interpreter's argument checks (every dim against the model's types and
 * the graph) run before them too: all engines reject the same inputs
 * with the same messages.  Outputs are written only on success, all of
 * them to temporaries first and then renamed into place, so a failed run
 * never leaves a new output file nor changes an existing one.
 */
#define _GNU_SOURCE     /* RTLD_DEFAULT, getline */
#include <ctype.h>
#include <dlfcn.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "frontend/frontend.h"
#include "ir/interp.h"
#include "codegen/codegen.h"
#include "driver/engine.h"
#include "driver/gnntrain.h"
#include "driver/options.h"
#include "driver/schedules.h"
#include "driver/toolchain.h"
#include "passes/passes.h"
#include "runtime/gnnrt.h"

enum { MaxIO = 64 };   /* inputs and outputs: a training step has one per parameter */

typedef struct Opts {
	const char *model;       /* path */
	const char *fnname;      /* --model-name */
	const char *graph;       /* --graph FILE: the one graph input */
	const char *gname[MaxIO], *gfile[MaxIO];   /* --graph NAME=FILE: by input name */
	int ngname;
	const char *batch;
	const char *weights;
	const char **inname;     /* --input NAME=FILE: the names (malloc'd) */
	const char **infile;     /* and the files */
	int nin;
	const char **out;
	int nout;
	const char *engine;
	int target;              /* of the compiled engines */
	int cpu;                 /* --cpu: codegen.h's Cpu* */
	int gpumath;             /* --gpu-math: codegen.h's GpuMath* */
	unsigned vendor;         /* --vendor: Vendor* (ir.h) bits */
	int precision;           /* --precision: optprecisions' index */
	int emu;                 /* cuda-emu: the emulated device's mode */
	int olevel;
	const char *specialize;  /* --specialize N=...,E=...: sizes fixed at compile time */
	const char **incdir;
	int nincdir;
	int64_t numnodes;        /* --num-nodes, -1: from inputs */
	bool f64out;             /* --output-dtype=f64 */
	bool checkfinite;        /* --check-finite */
	SchedForce *force;       /* --schedule */
	int nforce;
	const char *cache;       /* --tune-cache; "" with --no-tune-cache */
	bool interpcpu;          /* --interp-target=cpu */
	const char *emucheck, *emuorder, *emugrid;   /* --emu-* as given */
	const char *emuwork;     /* --emu-work FILE: per-launch warp work (GNNEMU_WORK) */
	bool profile;            /* --profile[=FILE]: per-launch records, printed after the run */
	const char *proffile;    /* ... and written as JSON lines to FILE */
	bool emudefer;           /* --emu-defer (GNNEMU_DEFER=1) */
	/* --train and its settings; a negative number or NULL: the file's */
	bool train, nesterov;
	const char *labels, *trainmask, *testmask, *loss, *save;
	int optimizer;           /* GNN_OPTIM_*, 0: the file's */
	int64_t epochs;
	double lr, wd, momentum;
	bool seedgiven;
	uint64_t seed;
	/* mini-batch training: --batch-size (0: full graph), --fanout (and
	 * --fanout REL=K,...: rfname[k]'s rfspec[k]), --shuffle,
	 * --sample-threads, --dump-batches */
	int64_t batchsize;
	const char *fanout, *rfname[MaxIO], *rfspec[MaxIO], *dumpbatches;
	int nrfan;
	bool shuffle;
	int samplethreads;
	/* --edge-time REL=FILE, --seed-time FILE */
	int netime;
	const char *etname[MaxIO], *etfile[MaxIO], *seedtime;
} Opts;

static void
usage(FILE *f)
{
	fputs("usage: gnnrun MODEL.gnn --graph EDGE_INDEX.npy --input NAME=FILE.npy ...\n"
	      "              [--weights W.safetensors] --output OUT.npy ... [options]\n"
	      "\n"
	      "Run a model on a graph and inputs from .npy files; write its outputs as .npy.\n"
	      "\n", f);
	opthelp(f, ForRun);
}

/* --- arrays as interpreter values -------------------------------------- */

/* Is the array's dtype acceptable for an IR dtype?  Floats take any
 * float array (widened exactly); integers need integers. */
static bool
dtypeok(int irdt, gnn_dtype dt)
{
	if (dtypeisfloat(irdt))
		return dt == GNN_F32 || dt == GNN_F64;
	if (dtypeisint(irdt))
		return dt == GNN_I32 || dt == GNN_I64;
	if (irdt == DBool)
		return dt == GNN_BOOL;
	return false;
}

static bool
totensor(const gnn_array *a, int irdt, ITensor *t)
{
	int64_t n = gnn_array_numel(a);
	int k;

	if (a->rank > MaxRank)
		return false;
	t->dtype = irdt;
	t->rank = a->rank;
	for (k = 0; k < a->rank; k++)
		t->shape[k] = a->shape[k];
	t->data = malloc((n ? n : 1) * sizeof(double));
	if (!t->data || !arraydoubles(a, t->data))
		return false;
	/* a 16-bit input of the model: the file's values stored so */
	if (irdt == DBF16 || irdt == DF16)
		for (int64_t e = 0; e < n; e++)
			t->data[e] = round16(t->data[e], irdt);
	return true;
}

/* a shape as "[2, 5]": a rank of at most GNN_MAX_RANK fits ShapeLen */
enum { ShapeLen = GNN_MAX_RANK * 22 + 3 };

static void
shapestr(char *buf, size_t n, const int64_t *shape, int rank)
{
	size_t len = snprintf(buf, n, "[");
	int k;

	for (k = 0; k < rank && len < n; k++)
		len += snprintf(buf + len, n - len, "%s%lld", k ? ", " : "", (long long)shape[k]);
	if (len < n)
		snprintf(buf + len, n - len, "]");
}

/* --- weights ---------------------------------------------------------------- */

typedef struct Weights {
	gnn_safetensors *st;
	const char *path;
	Fn *fn;
	bool checkfinite;
} Weights;

static bool
getparam(void *ud, const char *name, ITensor *t)
{
	Weights *w = ud;
	gnn_array a;
	int i;

	if (!w->st || (i = gnn_st_find(w->st, name)) < 0 || gnn_st_get(w->st, i, &a) != GNN_OK)
		return false;
	/* checkweights() already matched dtypes against the declarations */
	return totensor(&a, DNone, t);
}

/* Check the file against the model's params: each one present with the
 * declared dtype and shape, nothing unexpected.  Reports every problem. */
static void
checkweights(Weights *w)
{
	Fn *fn = w->fn;
	gnn_array a;
	char *want, got[ShapeLen];
	const char *name;
	int i, k, j, n;
	bool bad, found;

	for (i = 0; i < fn->nins; i++) {
		Ins *in = &fn->ins[i];
		Type t = fn->val[in->to].type;
		if (in->op != Oparam)
			continue;
		name = attrstr(in, "name");
		if (!w->st || (k = gnn_st_find(w->st, name)) < 0) {
			opterror("missing parameter '%s' (%s)", name, w->st ? "not in the weights file" : "no --weights given");
			continue;
		}
		if (gnn_st_get(w->st, k, &a) != GNN_OK) {
			opterror("parameter '%s': %s", name, gnn_errmsg());
			continue;
		}
		want = typestr(NULL, fn->mod, t);
		bad = a.rank != t.rank;
		for (j = 0; !bad && j < t.rank; j++)
			bad = a.shape[j] != dimconstval(t.dim[j]);
		shapestr(got, sizeof got, a.shape, a.rank);
		if (bad)
			opterror("parameter '%s': expected shape %s, the weights file has %s %s", name, want, gnn_dtype_name(a.dtype), got);
		else if (!dtypeok(t.dtype, a.dtype) || (t.dtype == DF32 && a.dtype != GNN_F32))
			opterror("parameter '%s': expected %s, the weights file has %s %s", name, want, gnn_dtype_name(a.dtype), got);
		else if (w->checkfinite && gnn_check_finite(&a, w->path) != GNN_OK)
			opterror("parameter '%s': %s", name, gnn_errmsg());
		free(want);
	}
	n = w->st ? gnn_st_count(w->st) : 0;
	for (k = 0; k < n; k++) {
		name = gnn_st_name(w->st, k);
		found = false;
		for (i = 0; i < fn->nins && !found; i++)
			found = fn->ins[i].op == Oparam && strcmp(attrstr(&fn->ins[i], "name"), name) == 0;
		if (!found)
			opterror("unexpected parameter '%s' in the weights file: model %s has no such parameter", name, fn->name);
	}
}

/* --- the graph ----------------------------------------------------------- */

/* The largest index + 1 of g's sources (ends 1), targets (2) or both
 * (3), or -1 (said why) when that overflows */
static int64_t
maxindex1(const char *path, const IGraph *g, int ends, const char *from)
{
	int64_t n = 0;

	for (int64_t i = 0; i < g->nedge; i++) {
		int64_t s = ends & 1 ? g->src[i] : 0, d = ends & 2 ? g->dst[i] : 0;
		/* index + 1 would overflow: no node count holds it (as gnn_graph_read_npy) */
		if (s == INT64_MAX || d == INT64_MAX) {
			opterror("%s: edge %lld (%lld -> %lld): no node count holds index %lld (%s)", path,
			    (long long)i, (long long)g->src[i], (long long)g->dst[i], (long long)INT64_MAX, from);
			return -1;
		}
		if (s + 1 > n)
			n = s + 1;
		if (d + 1 > n)
			n = d + 1;
	}
	return n;
}

/* The graph at path (and --batch) with nnode nodes, or with as many as
 * its largest index needs when nnode < 0; from says where nnode came from.
 * A relation (rel) has nsrc source nodes (src's range; nnode is dst's),
 * found the same way, from srcfrom. */
static bool
loadgraph(const Opts *o, const char *path, int64_t nnode, const char *from, bool rel, int64_t nsrc,
          const char *srcfrom, IGraph *g)
{
	gnn_array a, b = {0};
	int64_t e, i, v;

	if (gnn_npy_read(path, &a) != GNN_OK) {
		opterror("%s", gnn_errmsg());
		return false;
	}
	if (a.rank != 2 || a.shape[0] != 2 || (a.dtype != GNN_I64 && a.dtype != GNN_I32)) {
		char s[ShapeLen];
		shapestr(s, sizeof s, a.shape, a.rank);
		opterror("%s: edge_index must be int32 or int64 of shape [2, E], got %s %s", path, gnn_dtype_name(a.dtype), s);
		gnn_array_free(&a);
		return false;
	}
	e = a.shape[1];
	memset(g, 0, sizeof *g);
	g->nedge = e;
	g->src = malloc((e ? e : 1) * sizeof(int64_t));
	g->dst = malloc((e ? e : 1) * sizeof(int64_t));
	if (!g->src || !g->dst) {
		opterror("out of memory for %lld edges", (long long)e);
		gnn_array_free(&a);
		return false;
	}
	for (i = 0; i < 2 * e; i++) {
		v = a.dtype == GNN_I64 ? ((int64_t *)a.data)[i] : ((int32_t *)a.data)[i];
		(i < e ? g->src : g->dst)[i % (e ? e : 1)] = v;
	}
	gnn_array_free(&a);
	if (nnode < 0 && (nnode = maxindex1(path, g, rel ? 2 : 3, from)) < 0)
		return false;
	if (rel && nsrc < 0 && (nsrc = maxindex1(path, g, 1, srcfrom)) < 0)
		return false;
	if (!rel) {
		nsrc = nnode;
		srcfrom = from;
	}
	g->nnode = nnode;
	g->nsrc = nsrc;
	for (i = 0; i < e; i++) {
		if (!rel && (g->src[i] < 0 || g->src[i] >= nnode || g->dst[i] < 0 || g->dst[i] >= nnode)) {
			opterror("%s: edge %lld (%lld -> %lld) is out of range for %lld nodes (%s)", path, (long long)i,
			    (long long)g->src[i], (long long)g->dst[i], (long long)nnode, from);
			return false;
		}
		if (g->src[i] < 0 || g->src[i] >= nsrc) {
			opterror("%s: edge %lld (%lld -> %lld): source %lld is out of range for %lld source nodes (%s)",
			    path, (long long)i, (long long)g->src[i], (long long)g->dst[i], (long long)g->src[i],
			    (long long)nsrc, srcfrom);
			return false;
		}
		if (g->dst[i] < 0 || g->dst[i] >= nnode) {
			opterror("%s: edge %lld (%lld -> %lld): target %lld is out of range for %lld target nodes (%s)",
			    path, (long long)i, (long long)g->src[i], (long long)g->dst[i], (long long)g->dst[i],
			    (long long)nnode, from);
			return false;
		}
	}
	g->ngraph = 1;
	if (o->batch) {
		if (gnn_npy_read(o->batch, &b) != GNN_OK) {
			opterror("%s", gnn_errmsg());
			return false;
		}
		if (b.rank != 1 || b.shape[0] != nnode || (b.dtype != GNN_I64 && b.dtype != GNN_I32)) {
			opterror("%s: batch must be an integer vector of %lld entries", o->batch, (long long)nnode);
			gnn_array_free(&b);
			return false;
		}
		if (!(g->batch = malloc((nnode ? nnode : 1) * sizeof(int64_t)))) {
			opterror("out of memory for %lld batch entries", (long long)nnode);
			gnn_array_free(&b);
			return false;
		}
		g->ngraph = 0;
		for (i = 0; i < nnode; i++) {
			v = b.dtype == GNN_I64 ? ((int64_t *)b.data)[i] : ((int32_t *)b.data)[i];
			if (v < 0) {
				opterror("%s: negative graph id at node %lld", o->batch, (long long)i);
				gnn_array_free(&b);
				return false;
			}
			g->batch[i] = v;
			if (v + 1 > g->ngraph)
				g->ngraph = v + 1;
		}
		gnn_array_free(&b);
	}
	return true;
}

/* --- compiled engines -------------------------------------------------- */

/*
 * Run fn through the backend for target: the same inputs, the runtime's
 * graph, the weights loaded by the compiled model itself; outputs come
 * back as double tensors for the common writer.
 */
static bool
runcompiled(const Opts *o, Mod *m, Fn *fn, const IValue *args, IValue *outs)
{
	Engine en;
	const gnn_model_desc *d;
	void *model = NULL, *in[MaxIO] = {0};
	gnn_graph *g[MaxIO] = {0};
	size_t nb;
	bool ok = false;
	int i, k, ng = 0;

	if (engineload(&en, m, fn, o->target, o->cpu, o->gpumath, o->emu, o->vendor, o->model) < 0)
		return false;   /* it said why */
	d = en.desc;
	for (i = 0, k = 0; i < fn->narg; i++) {
		if (args[i].kind == TTensor) {
			if (!(in[k] = itensorbytes(&args[i].t, d->inputs[k].dtype, &nb))) {
				opterror("out of memory");
				goto done;
			}
			k++;
		} else if (igraphruntime(&args[i].g, isrelation(fn->val[fn->arg[i]].type), &g[ng++]) != GNN_OK) {
			goto fail;
		}
	}
	if (d->create(&model) != GNN_OK || (o->weights && d->load_weights(model, o->weights) != GNN_OK) ||
	    d->bind_graphs(model, g, ng) != GNN_OK || forwardoutputs(d, model, (const void *const *)in, outs) != GNN_OK)
		goto fail;
	ok = true;
	goto done;
fail:
	opterror("%s", gnn_errmsg());
done:
	if (model)
		d->destroy(model);
	for (i = 0; i < ng; i++)
		gnn_graph_destroy(g[i]);
	for (i = 0; i < MaxIO; i++)
		free(in[i]);
	engineclose(&en);
	return ok;
}

/* --- outputs -------------------------------------------------------------- */

/* t as a float32 (or, with --output-dtype=f64, float64) .npy at path,
 * a temporary for the output named out */
static bool
writeone(const Opts *o, const ITensor *t, const char *path, const char *out)
{
	gnn_array a = {.dtype = o->f64out ? GNN_F64 : GNN_F32, .rank = t->rank};
	int64_t n = 1, j;
	bool ok;
	int k;

	for (k = 0; k < t->rank; k++)
		n *= a.shape[k] = t->shape[k];
	a.nbytes = n * gnn_dtype_size(a.dtype);
	if (o->f64out)
		a.data = t->data;
	else if ((a.data = malloc(a.nbytes ? a.nbytes : 1)))
		for (j = 0; j < n; j++)
			((float *)a.data)[j] = (float)t->data[j];
	if (!a.data) {
		opterror("cannot write %s: out of memory", out);
		return false;
	}
	if (!(ok = gnn_npy_write(path, &a) == GNN_OK))
		opterror("cannot write %s: %s", out, gnn_errmsg());
	if (!o->f64out)
		free(a.data);
	return ok;
}

/*
 * All outputs or none: each is written (atomically) under a temporary
 * name beside it, and only when every one is complete are they renamed
 * over their paths.  Otherwise a second output that cannot be written
 * (a missing directory, a full disk) would leave the first one behind,
 * new or replacing the user's old file, from a run that failed.
 */
static bool
writeoutputs(const Opts *o, const IValue *outs, int n)
{
	char *tmp[MaxIO] = {0};
	bool ok = true;
	int i, done = 0;

	for (i = 0; i < n && ok; i++) {
		tmp[i] = astrfmt(NULL, "%s.gnnrun%ld.tmp", o->out[i], (long)getpid());
		ok = writeone(o, &outs[i].t, tmp[i], o->out[i]);
		done = ok ? i + 1 : i;
	}
	for (i = 0; ok && i < n; i++)
		if (rename(tmp[i], o->out[i]) != 0) {
			opterror("cannot rename %s to %s: %s", tmp[i], o->out[i], strerror(errno));
			ok = false;
		}
	/* after a failure nothing new is left (a renamed one is gone already) */
	for (i = 0; !ok && i < done; i++)
		unlink(tmp[i]);
	for (i = 0; i < n; i++)
		free(tmp[i]);
	return ok;
}

/* --- main ------------------------------------------------------------------ */

/* --input NAME=FILE */
static bool
addinput(Opts *o, const char *v)
{
	const char *eq = strchr(v, '=');
	char *name;
	int k;

	if (!eq || eq == v || !eq[1]) {
		opterror("--input takes NAME=FILE.npy, not '%s'", v);
		return false;
	}
	name = estrdup(v);
	name[eq - v] = '\0';
	for (k = 0; k < o->nin; k++)
		if (strcmp(o->inname[k], name) == 0) {
			opterror("input '%s' given twice", name);
			free(name);
			return false;
		}
	strpush(&o->inname, &o->nin, name);
	o->infile = erealloc(o->infile, o->nin * sizeof *o->infile);
	o->infile[o->nin - 1] = eq + 1;
	return true;
}

static bool
addoutput(Opts *o, const char *v)
{
	int k;

	/* the second would silently replace the first */
	for (k = 0; k < o->nout; k++)
		if (strcmp(o->out[k], v) == 0) {
			opterror("output '%s' given twice", v);
			return false;
		}
	strpush(&o->out, &o->nout, v);
	return true;
}

/* a number >= 0 for a training setting */
static double
optreal(const char *opt, const char *v)
{
	char *end;
	double d = strtod(v, &end);

	if (!*v || *end || !(d >= 0) || d > 1e30)
		opterror("%s takes a number >= 0, not '%s'", opt, v);
	return d;
}

/* a REL=VALUE option's value v (form: its forms, for the error) as
 * name[*n] and val[*n] */
static void
relopt(const char *opt, const char *form, const char *v, const char **name, const char **val, int *n)
{
	size_t k = strcspn(v, "=");

	if (!v[k] || k == 0)
		opterror("%s takes %s (a relation's name), not '%s'", opt, form, v);
	else if (*n == MaxIO)
		opterror("too many %s", opt);
	else {
		name[*n] = astrfmt(NULL, "%.*s", (int)k, v);
		val[(*n)++] = v + k + 1;
	}
}

static bool
parseargs(int argc, char **argv, Opts *o)
{
	OptParser p;
	const char *v;
	Opt id;

	/* the cpu engine runs only here: this machine's instruction set
	 * (as the cuda engine's nvcc compiles for this GPU alone), one
	 * compile of each kernel instead of gnncc's three */
	*o = (Opts){.engine = "interp", .olevel = 2, .numnodes = -1, .epochs = -1, .lr = -1, .wd = -1, .momentum = -1,
	            .cpu = CpuNative};
	optstart(&p, "gnnrun", ForRun, argc, argv);
	while ((id = optnext(&p, &v)) != OptEnd)
		switch (id) {
		case OptOperand:
			if (o->model) {
				opterror("more than one model file: '%s' and '%s'", o->model, v);
				return false;
			}
			o->model = v;
			break;
		case OptHelp:
			usage(stdout);
			exit(0);
		case OptVersion:
			puts("gnnrun " GNNCC_VERSION);
			exit(0);
		case OptGraph:
			/* NAME=FILE names a graph input (a relation, src__rel__dst) */
			if (v[strspn(v, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_")] == '=' &&
			    !isdigit((unsigned char)v[0]) && v[0] != '=') {
				if (o->ngname == MaxIO)
					opterror("too many --graph NAME=FILE");
				else {
					size_t n = strcspn(v, "=");
					o->gname[o->ngname] = astrfmt(NULL, "%.*s", (int)n, v);
					o->gfile[o->ngname++] = v + n + 1;
				}
			} else
				o->graph = v;
			break;
		case OptBatch: o->batch = v; break;
		case OptWeights: o->weights = v; break;
		case OptEngine: o->engine = v; break;
		case OptInterpTarget: o->interpcpu = p.choice == 1; break;
		case OptCpu: o->cpu = p.choice; break;
		case OptGpuMath: o->gpumath = p.choice; break;
		case OptVendor: o->vendor = vendorbits(v); break;
		case OptPrecision: o->precision = p.choice; break;
		case OptEmuCheck: o->emucheck = v; break;
		case OptEmuOrder:
			if (strcmp(v, "forward") != 0 && strcmp(v, "reverse") != 0 && strcmp(v, "random") != 0 &&
			    strncmp(v, "random:", 7) != 0) {
				opterror("--emu-order is forward, reverse or random[:SEED], not '%s'", v);
				return false;
			}
			o->emuorder = v;
			break;
		case OptEmuGridMax:
			optint("--emu-grid-max", v, 1, 65535, "a block count");
			o->emugrid = v;
			break;
		case OptEmuDefer: o->emudefer = true; break;
		case OptEmuWork: o->emuwork = v; break;
		case OptProfile:
			o->profile = true;
			o->proffile = v;
			break;
		case OptOutputDtype: o->f64out = p.choice == 1; break;
		case OptCheckFinite: o->checkfinite = true; break;
		case OptModelName: o->fnname = v; break;
		case OptNumNodes: o->numnodes = optint("--num-nodes", v, 0, INT64_MAX, NULL); break;
		case OptInput:
			if (!addinput(o, v))
				return false;
			break;
		case OptOutput:
			if (!addoutput(o, v))
				return false;
			break;
		case OptSpecialize: o->specialize = v; break;
		case OptSchedule:
			o->force = erealloc(o->force, (o->nforce + 1) * sizeof *o->force);
			if (parseforce(v, &o->force[o->nforce++]) < 0)
				return false;
			break;
		case OptTuneCache: o->cache = v; break;
		case OptNoTuneCache: o->cache = ""; break;
		case OptLevel: o->olevel = optlevel(v); break;
		case OptInclude: strpush(&o->incdir, &o->nincdir, v); break;
		case OptTrain: o->train = true; break;
		case OptLabels: o->labels = v; break;
		case OptTrainMask: o->trainmask = v; break;
		case OptTestMask: o->testmask = v; break;
		case OptLoss: o->loss = v; break;
		case OptEpochs: o->epochs = optint("--epochs", v, 0, 100000000, "a count"); break;
		case OptOptimizer: o->optimizer = p.choice + 1; break;
		case OptLr: o->lr = optreal("--lr", v); break;
		case OptWeightDecay: o->wd = optreal("--weight-decay", v); break;
		case OptMomentum: o->momentum = optreal("--momentum", v); break;
		case OptNesterov: o->nesterov = true; break;
		case OptSaveWeights: o->save = v; break;
		case OptSeed:
			o->seed = (uint64_t)optint("--seed", v, 0, INT64_MAX, "a seed");
			o->seedgiven = true;
			break;
		case OptBatchSize: o->batchsize = optint("--batch-size", v, 1, INT64_MAX, "a count"); break;
		case OptFanout:
			if (!strchr(v, '='))
				o->fanout = v;
			else
				relopt("--fanout", "K1,K2,... or REL=K1,K2,...", v, o->rfname, o->rfspec, &o->nrfan);
			break;
		case OptDumpBatches: o->dumpbatches = v; break;
		case OptEdgeTime: relopt("--edge-time", "REL=FILE", v, o->etname, o->etfile, &o->netime); break;
		case OptSeedTime: o->seedtime = v; break;
		case OptShuffle: o->shuffle = true; break;
		case OptSampleThreads: o->samplethreads = (int)optint("--sample-threads", v, 1, 64, "a count"); break;
		default:
			die("option %d has no case", (int)id);
		}
	if (!o->model)
		opterror("no model file given (see --help)");
	else if (!o->graph && !o->ngname)
		opterror("no --graph given");
	else if ((o->emucheck || o->emuorder || o->emugrid || o->emuwork || o->emudefer) &&
	         strcmp(o->engine, "cuda-emu") != 0)
		opterror("--emu-%s needs --engine=cuda-emu", o->emucheck ? "check" : o->emuorder ? "order" :
		         o->emugrid ? "grid-max" : o->emuwork ? "work" : "defer");
	else if (o->profile && strcmp(o->engine, "interp") == 0)
		opterror("--profile needs a compiled engine (--engine=cpu, cuda or cuda-emu)");
	if (!o->train && (o->labels || o->trainmask || o->testmask || o->loss || o->save || o->epochs >= 0 ||
	                  o->optimizer || o->lr >= 0 || o->wd >= 0 || o->momentum >= 0 || o->nesterov))
		opterror("--labels, --train-mask, --test-mask, --loss, --save-weights and the optimizer's settings need --train");
	if (o->batchsize && !o->train)
		opterror("--batch-size needs --train");
	else if ((o->fanout || o->nrfan || o->shuffle || o->samplethreads || o->netime || o->seedtime ||
	          o->dumpbatches) && !o->batchsize)
		opterror("--fanout, --shuffle, --sample-threads, --edge-time, --seed-time and --dump-batches need "
		         "--batch-size");
	else if (!o->netime != !o->seedtime)
		opterror("temporal sampling takes both --edge-time REL=FILE and --seed-time FILE");
	else if (o->batchsize && strcmp(o->engine, "interp") == 0)
		opterror("mini-batch training (--batch-size) needs a compiled engine (--engine=cpu, cuda or cuda-emu)");
	else if (o->batchsize && !o->trainmask)
		opterror("mini-batch training (--batch-size) needs --train-mask: its nodes are the batches' seeds");
	if (o->interpcpu && strcmp(o->engine, "interp") != 0)
		optwarn("'--interp-target' has no effect with --engine=%s", o->engine);
	o->target = strcmp(o->engine, "cpu") == 0 ? TargetCPU : TargetCUDA;
	o->emu = strcmp(o->engine, "cuda-emu") != 0 ? EmuOff : emumode(o->emucheck ? o->emucheck : "run");
	return optnerrors() == 0;
}

/*
 * memcheck and racecheck instrument the model with a sanitizer whose
 * runtime must be in the process from its start: without it, gnnrun
 * runs itself again with the runtime preloaded (the C++ compiler's own
 * copy), and takes it off the environment of what it starts then.
 */
static bool
emuprepare(const Opts *o, char **argv)
{
	const char *lib = emuruntime(o->emu);
	char *cmd, *path = NULL;
	size_t cap = 0;
	ssize_t n;
	FILE *p;

	if (o->emuorder && setenv("GNNEMU_ORDER", o->emuorder, 1) != 0)
		return false;
	if (o->emugrid && setenv("GNNEMU_GRID_MAX", o->emugrid, 1) != 0)
		return false;
	if (o->emudefer && setenv("GNNEMU_DEFER", "1", 1) != 0)
		return false;
	if (o->emuwork) {
		/* the emulator appends a line per launch: this run's lines only */
		FILE *f = fopen(o->emuwork, "w");
		if (!f || fclose(f) != 0) {
			opterror("--emu-work: cannot write '%s': %s", o->emuwork, strerror(errno));
			return false;
		}
		if (setenv("GNNEMU_WORK", o->emuwork, 1) != 0)
			return false;
	}
	if (!lib)
		return true;
	if (dlsym(RTLD_DEFAULT, o->emu == EmuRacecheck ? "__tsan_init" : "__asan_init")) {
		if (getenv("GNNRUN_EMU_PRELOAD"))
			unsetenv("LD_PRELOAD");
		return true;
	}
	if (getenv("GNNRUN_EMU_PRELOAD")) {
		opterror("the %s runtime did not load (LD_PRELOAD=%s)", lib, getenv("GNNRUN_EMU_PRELOAD"));
		return false;
	}
	/* the compiler's answer, however long: getline sizes the buffer */
	cmd = astrfmt(NULL, "%s -print-file-name=%s", emucxx(), lib);
	p = popen(cmd, "r");
	free(cmd);
	if (!p || (n = getline(&path, &cap, p)) < 0) {
		if (p)
			pclose(p);
		free(path);
		opterror("--emu-check=%s: cannot ask the C++ compiler for %s", o->emucheck, lib);
		return false;
	}
	pclose(p);
	while (n && (path[n - 1] == '\n' || path[n - 1] == ' '))
		path[--n] = 0;
	if (!strchr(path, '/') || access(path, R_OK) != 0) {
		opterror("--emu-check=%s: the C++ compiler has no %s (install its sanitizer runtime)", o->emucheck, lib);
		free(path);
		return false;
	}
	if (o->emu == EmuRacecheck && !getenv("TSAN_OPTIONS"))
		setenv("TSAN_OPTIONS", "halt_on_error=1", 1);
	if (setenv("LD_PRELOAD", path, 1) != 0 || setenv("GNNRUN_EMU_PRELOAD", path, 1) != 0 || !selfexe()) {
		free(path);
		return false;
	}
	fflush(NULL);
	execv(selfexe(), argv);
	opterror("cannot run gnnrun again with %s: %s", path, strerror(errno));
	free(path);
	return false;
}

/* The model file: IR text for a .ir suffix (as gnncc takes it: parsed,
 * typed and verified; ops that only the IR spells, such as autodiff's,
 * run this way), model source otherwise. */
static Mod *
loadmodel(const char *path, const FrontOpts *fo)
{
	size_t n = strlen(path), len;
	char *text;
	Mod *m;

	if (n < 3 || strcmp(path + n - 3, ".ir") != 0)
		return compilefile(path, fo);
	if (!(text = readfile(path, &len))) {
		opterror("cannot open '%s': %s", path, strerror(errno));
		return NULL;
	}
	m = parseir(path, text, len);
	free(text);
	if (m && (diag_nerrors() > 0 || !verifymod(m, NULL))) {
		freemod(m);
		m = NULL;
	}
	return m;
}

/* A node count: from a tensor input that has the dim n, whose name goes
 * to *from; -1 if there is none. */
static int64_t
nodecount(Fn *fn, Dim n, const IValue *in, const bool *have, const char **from)
{
	int i, k;

	for (i = 0; i < fn->narg; i++) {
		Type t = fn->val[fn->arg[i]].type;
		if (t.kind != TTensor || !have[i])
			continue;
		for (k = 0; k < t.rank; k++)
			if (t.dim[k] == n && k < in[i].t.rank) {
				*from = fn->val[fn->arg[i]].name;
				return in[i].t.shape[k];
			}
	}
	return -1;
}

/* how --graph FILE or NAME=FILE feeds graph input v (NULL: none does) */
static const char *
graphfile(const Opts *o, const Fn *fn, const Val *v)
{
	int i, ngraph = 0;

	for (i = 0; i < o->ngname; i++)
		if (strcmp(o->gname[i], v->name) == 0)
			return o->gfile[i];
	for (i = 0; i < fn->narg; i++)
		ngraph += fn->val[fn->arg[i]].type.kind == TGraph;
	return ngraph == 1 ? o->graph : NULL;
}

/* Every graph input from its --graph; a relation's two node counts each
 * from a tensor input of that size, or its largest index + 1 */
static bool
graphinputs(const Opts *o, Fn *fn, IValue *args, bool *have)
{
	int i, k;
	bool ok = true;

	for (k = 0; k < o->ngname; k++) {
		for (i = 0; i < fn->narg; i++)
			if (fn->val[fn->arg[i]].type.kind == TGraph && strcmp(fn->val[fn->arg[i]].name, o->gname[k]) == 0)
				break;
		if (i == fn->narg) {
			opterror("--graph %s=%s: model %s has no graph input '%s'", o->gname[k], o->gfile[k], fn->name,
			         o->gname[k]);
			ok = false;
		}
	}
	for (i = 0; i < fn->narg && ok; i++) {
		Val *v = &fn->val[fn->arg[i]];
		const char *path, *from = NULL, *sfrom = NULL;
		char *why, *swhy = NULL;
		int64_t nnode, nsrc = -1;
		bool rel = isrelation(v->type);

		if (v->type.kind != TGraph)
			continue;
		if (!(path = graphfile(o, fn, v))) {
			opterror("no edge_index for graph input '%s' of model %s (give --graph %s=EDGE_INDEX.npy)", v->name,
			         fn->name, v->name);
			ok = false;
			continue;
		}
		nnode = o->numnodes >= 0 && !rel ? o->numnodes : nodecount(fn, v->type.dim[0], args, have, &from);
		if (o->numnodes >= 0 && !rel)
			why = astrfmt(NULL, "from --num-nodes");
		else if (from)
			why = astrfmt(NULL, "the node count of input '%s'", from);
		else
			why = astrfmt(NULL, "no input gives the node count: the largest index + 1");
		if (rel) {
			nsrc = nodecount(fn, graphsrcnodes(v->type), args, have, &sfrom);
			swhy = sfrom ? astrfmt(NULL, "the node count of input '%s'", sfrom)
			             : astrfmt(NULL, "no input gives the source node count: the largest index + 1");
		}
		args[i].kind = TGraph;
		have[i] = true;
		ok = loadgraph(o, path, nnode, why, rel, nsrc, swhy, &args[i].g);
		free(why);
		free(swhy);
	}
	return ok;
}

static double *
ecalloc2(int n)
{
	double *p = emalloc(n * sizeof *p);

	memset(p, 0, n * sizeof *p);
	return p;
}

/* --labels and --train-mask as --input NAME=FILE */
static bool
addnamed(Opts *o, const char *name, const char *file)
{
	/* kept until exit, as the command line's own strings are */
	return addinput(o, astrfmt(NULL, "%s=%s", name, file));
}

/* a fanout list "K1,K2,..." of what into out (each in [min, the most]):
 * its hops, or -1 after reporting */
static int
fanlist(const char *what, const char *list, int64_t min, int64_t *out)
{
	const char *p = list;
	char *end;
	long long k;
	int h = 0;

	for (;;) {
		errno = 0;
		k = strtoll(p, &end, 10);
		if (end == p || errno || (*end && *end != ',') || k < min || k > GNN_SAMPLER_MAX_FANOUT) {
			opterror("%s takes counts from %lld to %d separated by commas (one a hop), not '%s'", what,
			         (long long)min, GNN_SAMPLER_MAX_FANOUT, list);
			return -1;
		}
		if (h == GNN_SAMPLER_MAX_HOPS) {
			opterror("%s: at most %d hops, not '%s'", what, GNN_SAMPLER_MAX_HOPS, list);
			return -1;
		}
		out[h++] = k;
		if (!*end)
			return h;
		p = end + 1;
	}
}

/*
 * --batch-size: the sampler's settings from --fanout (PyG's num_neighbors
 * as a list; each at least 1; per relation, a dict of lists, each count
 * at least 0, all of as many hops), --shuffle, --seed, --sample-threads
 */
static bool
batchjob(const Opts *o, const Fn *model, TrainJob *j)
{
	int h, k;

	j->batch = o->batchsize;
	j->sample = (gnn_sampler_config){.batch_size = o->batchsize, .shuffle = o->shuffle, .seed = j->seed,
	                                 .threads = o->samplethreads ? o->samplethreads : 1, .prefetch = 1};
	if ((h = fanlist("--fanout", o->fanout ? o->fanout : "10,10", 1, j->sample.fanout)) < 0)
		return false;
	j->nrfan = o->nrfan;
	for (k = 0; k < o->nrfan; k++) {
		char what[256];
		int hk;
		snprintf(what, sizeof what, "--fanout %s=", o->rfname[k]);
		if ((hk = fanlist(what, o->rfspec[k], 0, j->rfanout[k])) < 0)
			return false;
		if (k == 0 && !o->fanout) {
			/* no list for every relation: the others draw 10 at each of
			 * the relations' hops */
			h = hk;
			for (int q = 0; q < h; q++)
				j->sample.fanout[q] = 10;
		}
		if (hk != h) {
			opterror("--fanout %s=%s: %d hops, not %d as the other fanouts: every relation samples as many hops",
			         o->rfname[k], o->rfspec[k], hk, h);
			return false;
		}
		j->rfname[k] = o->rfname[k];
	}
	j->dumpdir = o->dumpbatches;
	j->sample.nhops = h;
	for (k = h; k < GNN_SAMPLER_MAX_HOPS; k++)
		j->sample.fanout[k] = 0;
	/* --train-mask's input (main: the step's input after the labels) */
	j->maskarg = model->narg + 1;
	j->wantout = o->nout > 0 || o->testmask;
	j->netime = o->netime;
	for (h = 0; h < o->netime; h++) {
		j->etname[h] = o->etname[h];
		j->etfile[h] = o->etfile[h];
	}
	j->seedtime = o->seedtime;
	return true;
}

/*
 * --train: check the step's inputs as forward's are checked (and the
 * labels against the classes), train, then write --output, the test
 * accuracy and --save-weights.
 */
static bool
trainmodel(const Opts *o, Mod *m, Fn *model, Fn *step, IValue *args, Weights *w, IRun *check)
{
	const TrainInfo *ti = step->train;
	TrainJob j = {.m = m, .model = model, .step = step, .args = args, .engine = o->engine, .target = o->target,
	              .cpu = o->cpu, .gpumath = o->gpumath, .emu = o->emu, .source = o->model};
	IValue outs[MaxIO] = {{0}};
	Type ot = model->val[model->ret[0]].type;
	bool ok = false;
	int i;

	check->checkonly = true;
	if (interp(check) != 0) {
		opterror("%s", check->err);
		return false;
	}
	/* class indices: in range of the output's classes */
	if (step->narg > model->narg + 1 && dtypeisint(args[model->narg].t.dtype) && ot.rank == 2 &&
	    dimisconst(ot.dim[1])) {
		const ITensor *y = &args[model->narg].t;
		int64_t c = dimconstval(ot.dim[1]), k, n = y->rank ? y->shape[0] : 1;
		for (k = 0; k < n; k++)
			if (!(y->data[k] >= 0 && y->data[k] < c)) {
				opterror("--labels: label %lld of node %lld is out of range [0, %lld)", (long long)y->data[k],
				         (long long)k, (long long)c);
				return false;
			}
	}
	j.epochs = o->epochs >= 0 ? o->epochs : ti->epochs;
	j.seed = o->seedgiven ? o->seed : (uint64_t)ti->seed;
	j.opt = (gnn_optim_config){
		.kind = o->optimizer ? (gnn_optim_kind)o->optimizer :
		        !strcmp(ti->optimizer, "sgd") ? GNN_OPTIM_SGD : !strcmp(ti->optimizer, "adamw") ? GNN_OPTIM_ADAMW : GNN_OPTIM_ADAM,
		.lr = o->lr >= 0 ? o->lr : ti->lr, .weight_decay = o->wd >= 0 ? o->wd : ti->weight_decay,
		.momentum = o->momentum >= 0 ? o->momentum : ti->momentum, .dampening = ti->dampening,
		.nesterov = o->nesterov || ti->nesterov, .beta1 = ti->beta1, .beta2 = ti->beta2, .eps = ti->eps};
	j.save = o->save;
	j.weights = o->weights;
	if (o->batchsize && !batchjob(o, model, &j))
		return false;
	if (o->weights) {
		j.param = getparam;
		j.ud = w;
	}
	if (gnntrain(&j, outs) != 0)
		goto done;
	if (o->testmask) {
		gnn_array a;
		const ITensor *y = &args[model->narg].t, *p = &outs[0].t;
		int64_t k, c, n = 0, hit = 0, best;
		if (gnn_npy_read(o->testmask, &a) != GNN_OK) {
			opterror("--test-mask: %s", gnn_errmsg());
			goto done;
		}
		if (a.dtype != GNN_BOOL || a.rank != 1 || p->rank != 2 || a.shape[0] != p->shape[0]) {
			opterror("--test-mask: %s must be bool [%lld]", o->testmask, (long long)p->shape[0]);
			gnn_array_free(&a);
			goto done;
		}
		for (k = 0; k < a.shape[0]; k++) {
			if (!((const uint8_t *)a.data)[k])
				continue;
			for (best = 0, c = 1; c < p->shape[1]; c++)
				if (p->data[k * p->shape[1] + c] > p->data[k * p->shape[1] + best])
					best = c;
			n++;
			hit += best == (int64_t)y->data[k];
		}
		gnn_array_free(&a);
		printf("test accuracy: %.1f%% (%lld of %lld)\n", n ? 100.0 * hit / n : 0.0, (long long)hit, (long long)n);
	}
	ok = o->nout == 0 || writeoutputs(o, outs, model->nret);
done:
	for (i = 0; i < MaxIO; i++)
		ivaluefree(&outs[i]);
	return ok;
}

int
main(int argc, char **argv)
{
	/* static: what the options hold lives until exit */
	static Opts o;
	FrontOpts fo = {0};
	PassOpts po = {0};
	Mod *m = NULL;
	Fn *fn, *model, *step = NULL;
	bool profiling = false;
	Weights w = {0};
	IValue args[MaxIO] = {{0}};
	bool have[MaxIO] = {0}, *used = NULL;
	IRun run = {0};
	IValue compiled[MaxIO] = {{0}}, *outs;
	gnn_array a;
	int i, k, rc = 1;

	if (!parseargs(argc, argv, &o) || !emuprepare(&o, argv))
		return 1;
	fo.incdir = o.incdir;
	fo.nincdir = o.nincdir;
	fo.train = o.train;
	fo.loss = o.loss;
	if (!(m = loadmodel(o.model, &fo)))
		return 1;
	/* a training step runs as a model only by name */
	for (fn = m->fn; fn && (o.fnname ? strcmp(fn->name, o.fnname) != 0 : fn->train != NULL); fn = fn->link)
		;
	if (!fn) {
		opterror(o.fnname ? "%s has no model '%s'" : "%s defines no model", o.model, o.fnname);
		goto out;
	}
	model = fn;
	if (o.train) {
		/* the inputs are the training step's: the model's, the
		 * targets and the mask (--labels, --train-mask), the key */
		for (step = m->fn; step && !(step->train && strcmp(step->train->model, fn->name) == 0); step = step->link)
			;
		if (!step)
			die("gnnrun: no training step for %s", fn->name);
		if (o.labels && step->narg > fn->narg + 1 && !addnamed(&o, step->val[step->arg[fn->narg]].name, o.labels))
			goto out;
		if (o.trainmask && step->narg > fn->narg + 2 &&
		    !addnamed(&o, step->val[step->arg[fn->narg + 1]].name, o.trainmask))
			goto out;
		fn = step;
	}
	po.olevel = o.olevel;
	po.specialize = o.specialize;
	po.precision = optprecisionpass[o.precision];
	/* the cpu engine's code is gnncc --target=cpu's: its passes too
	 * (colscale, sinkreduce, sinkelem, readfold), and no graph breaks; the
	 * interpreter's with --interp-target=cpu */
	po.hostforward = strcmp(o.engine, "cpu") == 0 || (strcmp(o.engine, "interp") == 0 && o.interpcpu);
	if (runpasses(m, &po) != 0)
		goto out;
	if (strcmp(o.engine, "interp") != 0) {
		/* schedules as gnncc chooses them */
		SchedOpts so = {.who = "gnnrun", .target = o.target, .emu = o.emu, .cpu = o.cpu, .gpumath = o.gpumath,
		                .vendor = o.target == TargetCUDA ? o.vendor : 0, .olevel = o.olevel, .force = o.force,
		                .nforce = o.nforce, .nodes = -1, .cache = o.cache,
		                .source = o.model};
		Choices cs;
		if (pickschedules(m, &so, &cs) < 0)
			goto out;
		freechoices(&cs);
	}
	if (fn->narg > MaxIO || fn->nret > MaxIO) {
		opterror("model %s has too many inputs or outputs for gnnrun", fn->name);
		goto out;
	}
	/* tensor inputs by name */
	used = emalloc(o.nin * sizeof *used);
	for (i = 0; i < fn->narg; i++) {
		Val *v = &fn->val[fn->arg[i]];
		if (v->type.kind == TGraph)
			continue;
		if (step && i == fn->narg - 1) {   /* the key: set per step */
			args[i].kind = TTensor;
			args[i].t = (ITensor){.dtype = DI64, .rank = 1, .shape = {2}, .data = ecalloc2(2)};
			have[i] = true;
			continue;
		}
		for (k = 0; k < o.nin; k++)
			if (strcmp(o.inname[k], v->name) == 0)
				break;
		if (k == o.nin) {
			opterror("missing input '%s' of model %s (give --input %s=FILE.npy)", v->name, fn->name, v->name);
			continue;
		}
		used[k] = true;
		if (gnn_npy_read(o.infile[k], &a) != GNN_OK) {
			opterror("input '%s': %s", v->name, gnn_errmsg());
			continue;
		}
		if (!dtypeok(v->type.dtype, a.dtype)) {
			opterror("input '%s': %s holds %s, the model takes %s", v->name, o.infile[k], gnn_dtype_name(a.dtype), dtypename(v->type.dtype));
		} else if (a.rank != v->type.rank) {
			char s[ShapeLen], *t = typestr(NULL, m, v->type);
			shapestr(s, sizeof s, a.shape, a.rank);
			opterror("input '%s': %s has shape %s, the model takes %s", v->name, o.infile[k], s, t);
			free(t);
		} else if (o.checkfinite && gnn_check_finite(&a, o.infile[k]) != GNN_OK) {
			opterror("input '%s': %s", v->name, gnn_errmsg());
		} else if (!totensor(&a, v->type.dtype, &args[i].t)) {
			opterror("input '%s': out of memory", v->name);
		} else {
			args[i].kind = TTensor;
			have[i] = true;
		}
		gnn_array_free(&a);
	}
	for (k = 0; k < o.nin; k++)
		if (!used[k])
			opterror("model %s has no input '%s'", fn->name, o.inname[k]);
	if (o.nout != model->nret && !(step && o.nout == 0))
		opterror("model %s has %d output%s; give --output for each (got %d)", model->name, model->nret,
		         model->nret == 1 ? "" : "s", o.nout);
	if (o.weights && gnn_st_open(o.weights, &w.st) != GNN_OK)
		opterror("%s", gnn_errmsg());
	w.fn = model;
	w.path = o.weights;
	w.checkfinite = o.checkfinite;
	if (optnerrors() == 0 && (!step || o.weights))
		checkweights(&w);
	if (optnerrors())
		goto out;
	if (!graphinputs(&o, fn, args, have))
		goto out;
	run.fn = fn;
	run.args = args;
	run.param = getparam;
	run.ud = &w;
	if (o.profile && gnn_profile_start(o.proffile) != GNN_OK) {
		opterror("--profile: %s", gnn_errmsg());
		goto out;
	}
	profiling = o.profile;
	if (step) {
		rc = trainmodel(&o, m, model, step, args, &w, &run) ? 0 : 1;
		goto out;
	}
	if (strcmp(o.engine, "interp") == 0) {
		if (interp(&run) != 0) {
			opterror("%s", run.err);
			goto out;
		}
		outs = run.outs;
	} else {
		/* the compiled model reads as many elements as its types say:
		 * inputs that do not fit them must not get that far */
		run.checkonly = true;
		if (interp(&run) != 0) {
			opterror("%s", run.err);
			goto out;
		}
		outs = compiled;
		if (!runcompiled(&o, m, fn, args, compiled))
			goto out;
	}
	rc = writeoutputs(&o, outs, fn->nret) ? 0 : 1;
out:
	/* what ran, also when the run failed part way */
	if (profiling && (gnn_profile_print(stdout) != GNN_OK || gnn_profile_stop() != GNN_OK)) {
		opterror("--profile: %s", gnn_errmsg());
		rc = 1;
	}
	for (i = 0; i < MaxIO; i++)
		if (have[i])
			ivaluefree(&args[i]);
	interpfree(&run);
	for (i = 0; i < MaxIO; i++)
		free(compiled[i].t.data);
	gnn_st_close(w.st);
	freemod(m);
	free(used);
	return rc;
}
