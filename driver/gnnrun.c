/*
 * gnnrun: run a model on a graph and inputs from .npy files, with weights
 * from safetensors, and write its outputs as float32 .npy; in the spirit
 * of IREE's iree-run-module.
 *
 *	gnnrun MODEL.gnn --graph EDGE_INDEX.npy --input x=X.npy
 *	       --weights W.safetensors --output OUT.npy [--engine=interp]
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
#define _GNU_SOURCE     /* RTLD_DEFAULT */
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
#include "driver/schedules.h"
#include "driver/toolchain.h"
#include "passes/passes.h"
#include "runtime/gnnrt.h"

enum { MaxIO = 16 };

typedef struct Opts {
	const char *model;       /* path */
	const char *fnname;      /* --model-name */
	const char *graph;
	const char *batch;
	const char *weights;
	char inname[MaxIO][128];
	const char *infile[MaxIO];
	int nin;
	const char *out[MaxIO];
	int nout;
	const char *engine;
	int target;              /* of the compiled engines */
	int emu;                 /* cuda-emu: the emulated device's mode */
	int olevel;
	const char *specialize;  /* --specialize N=...,E=...: sizes fixed at compile time */
	const char *incdir[64];
	int nincdir;
	int64_t numnodes;        /* --num-nodes, -1: from inputs */
	bool f64out;             /* --output-dtype=f64 */
	bool checkfinite;        /* --check-finite */
	SchedForce force[16];    /* --schedule */
	int nforce;
	const char *cache;       /* --tune-cache; "" with --no-tune-cache */
	const char *emucheck, *emuorder, *emugrid;   /* --emu-* as given */
} Opts;

static int nerr;

static void
err(const char *fmt, ...)
{
	va_list ap;

	fputs("gnnrun: error: ", stderr);
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputc('\n', stderr);
	nerr++;
}

static void
usage(FILE *f)
{
	fputs("usage: gnnrun MODEL.gnn --graph EDGE_INDEX.npy --input NAME=FILE.npy ...\n"
	      "              [--weights W.safetensors] --output OUT.npy ... [options]\n"
	      "options:\n"
	      "  --graph FILE        edge_index, int32 or int64 [2, E] (row 0 source, row 1 target)\n"
	      "  --batch FILE        node-to-graph ids for a batched graph[N, E, B] input\n"
	      "  --num-nodes N       node count when no node input fixes it\n"
	      "  --input NAME=FILE   a tensor input of the model, by name\n"
	      "  --weights FILE      parameters by PyG state_dict name\n"
	      "  --output FILE       one per model output, written as float32 .npy\n"
	      "  --output-dtype=f64  write float64 instead (the interpreter's precision)\n"
	      "  --check-finite      reject inputs and weights holding NaN or infinity\n"
	      "  --model-name NAME   which model of the file (default: the first)\n"
	      "  --engine=interp     the reference interpreter (float64; the default)\n"
	      "  --engine=cpu        the model compiled for the cpu target (cc)\n"
	      "  --engine=cuda       the model compiled for the cuda target (nvcc; needs a GPU)\n"
	      "  --engine=cuda-emu   the cuda target's code on the emulated device (c++; the\n"
	      "                      CPU runs every GPU thread, with CUDA's semantics checked)\n"
	      "  --emu-check=MODE    cuda-emu under memcheck (AddressSanitizer) or racecheck\n"
	      "                      (ThreadSanitizer); gnnrun loads the sanitizer itself\n"
	      "  --emu-order=ORDER   cuda-emu: blocks and threads run forward (default),\n"
	      "                      reverse or random[:SEED]\n"
	      "  --emu-grid-max=N    cuda-emu: at most N blocks per grid dimension, so that\n"
	      "                      grid-stride loops wrap\n"
	      "  -O0, -O2            optimization level of the compiled IR (default -O2)\n"
	      "  --schedule=K:FIELDS force kernel K's schedule (cpu, cuda engines; as gnncc's)\n"
	      "  --tune-cache=FILE   use this tuning cache; --no-tune-cache: none\n"
	      "  --specialize N=V,E=V  compile for these graph sizes only, as gnncc does\n"
	      "  -I DIR              search DIR for imports\n", f);
}

/* --- arrays as interpreter values -------------------------------------- */

static bool
todouble(const gnn_array *a, double *out)
{
	int64_t i, n = gnn_array_numel(a);

	for (i = 0; i < n; i++)
		switch (a->dtype) {
		case GNN_F32: out[i] = ((const float *)a->data)[i]; break;
		case GNN_F64: out[i] = ((const double *)a->data)[i]; break;
		case GNN_I32: out[i] = ((const int32_t *)a->data)[i]; break;
		case GNN_I64: out[i] = (double)((const int64_t *)a->data)[i]; break;
		case GNN_BOOL: out[i] = ((const uint8_t *)a->data)[i] != 0; break;
		case GNN_U8: out[i] = ((const uint8_t *)a->data)[i]; break;
		default: return false;
		}
	return true;
}

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
	if (!t->data)
		return false;
	return todouble(a, t->data);
}

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
	char want[256], got[128];
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
			err("missing parameter '%s' (%s)", name, w->st ? "not in the weights file" : "no --weights given");
			continue;
		}
		if (gnn_st_get(w->st, k, &a) != GNN_OK) {
			err("parameter '%s': %s", name, gnn_errmsg());
			continue;
		}
		snprinttype(want, sizeof want, fn->mod, t);
		bad = a.rank != t.rank;
		for (j = 0; !bad && j < t.rank; j++)
			bad = a.shape[j] != dimconstval(t.dim[j]);
		shapestr(got, sizeof got, a.shape, a.rank);
		if (bad)
			err("parameter '%s': expected shape %s, the weights file has %s %s", name, want, gnn_dtype_name(a.dtype), got);
		else if (!dtypeok(t.dtype, a.dtype) || (t.dtype == DF32 && a.dtype != GNN_F32))
			err("parameter '%s': expected %s, the weights file has %s %s", name, want, gnn_dtype_name(a.dtype), got);
		else if (w->checkfinite && gnn_check_finite(&a, w->path) != GNN_OK)
			err("parameter '%s': %s", name, gnn_errmsg());
	}
	n = w->st ? gnn_st_count(w->st) : 0;
	for (k = 0; k < n; k++) {
		name = gnn_st_name(w->st, k);
		found = false;
		for (i = 0; i < fn->nins && !found; i++)
			found = fn->ins[i].op == Oparam && strcmp(attrstr(&fn->ins[i], "name"), name) == 0;
		if (!found)
			err("unexpected parameter '%s' in the weights file: model %s has no such parameter", name, fn->name);
	}
}

/* --- the graph ----------------------------------------------------------- */

/* The graph of --graph (and --batch) with nnode nodes, or with as many as
 * its largest index needs when nnode < 0; from says where nnode came from. */
static bool
loadgraph(const Opts *o, int64_t nnode, const char *from, IGraph *g)
{
	gnn_array a, b = {0};
	int64_t e, i, v;

	if (gnn_npy_read(o->graph, &a) != GNN_OK) {
		err("%s", gnn_errmsg());
		return false;
	}
	if (a.rank != 2 || a.shape[0] != 2 || (a.dtype != GNN_I64 && a.dtype != GNN_I32)) {
		char s[128];
		shapestr(s, sizeof s, a.shape, a.rank);
		err("%s: edge_index must be int32 or int64 of shape [2, E], got %s %s", o->graph, gnn_dtype_name(a.dtype), s);
		gnn_array_free(&a);
		return false;
	}
	e = a.shape[1];
	memset(g, 0, sizeof *g);
	g->nedge = e;
	g->src = malloc((e ? e : 1) * sizeof(int64_t));
	g->dst = malloc((e ? e : 1) * sizeof(int64_t));
	if (!g->src || !g->dst) {
		err("out of memory for %lld edges", (long long)e);
		gnn_array_free(&a);
		return false;
	}
	for (i = 0; i < 2 * e; i++) {
		v = a.dtype == GNN_I64 ? ((int64_t *)a.data)[i] : ((int32_t *)a.data)[i];
		(i < e ? g->src : g->dst)[i % (e ? e : 1)] = v;
	}
	gnn_array_free(&a);
	if (nnode < 0) {
		nnode = 0;
		for (i = 0; i < e; i++) {
			if (g->src[i] + 1 > nnode)
				nnode = g->src[i] + 1;
			if (g->dst[i] + 1 > nnode)
				nnode = g->dst[i] + 1;
		}
	}
	g->nnode = nnode;
	for (i = 0; i < e; i++)
		if (g->src[i] < 0 || g->src[i] >= nnode || g->dst[i] < 0 || g->dst[i] >= nnode) {
			err("%s: edge %lld (%lld -> %lld) is out of range for %lld nodes (%s)", o->graph, (long long)i,
			    (long long)g->src[i], (long long)g->dst[i], (long long)nnode, from);
			return false;
		}
	g->ngraph = 1;
	if (o->batch) {
		if (gnn_npy_read(o->batch, &b) != GNN_OK) {
			err("%s", gnn_errmsg());
			return false;
		}
		if (b.rank != 1 || b.shape[0] != nnode || (b.dtype != GNN_I64 && b.dtype != GNN_I32)) {
			err("%s: batch must be an integer vector of %lld entries", o->batch, (long long)nnode);
			gnn_array_free(&b);
			return false;
		}
		if (!(g->batch = malloc((nnode ? nnode : 1) * sizeof(int64_t)))) {
			err("out of memory for %lld batch entries", (long long)nnode);
			gnn_array_free(&b);
			return false;
		}
		g->ngraph = 0;
		for (i = 0; i < nnode; i++) {
			v = b.dtype == GNN_I64 ? ((int64_t *)b.data)[i] : ((int32_t *)b.data)[i];
			if (v < 0) {
				err("%s: negative graph id at node %lld", o->batch, (long long)i);
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

/* a double tensor into a host buffer of dtype dt (and back) */
static void *
fromdouble(const ITensor *t, gnn_dtype dt, size_t *nbytes)
{
	int64_t i, n = 1;
	void *p;
	int k;

	for (k = 0; k < t->rank; k++)
		n *= t->shape[k];
	*nbytes = (size_t)n * gnn_dtype_size(dt);
	if (!(p = malloc(*nbytes ? *nbytes : 1)))
		return NULL;
	for (i = 0; i < n; i++)
		switch (dt) {
		case GNN_F32: ((float *)p)[i] = (float)t->data[i]; break;
		case GNN_F64: ((double *)p)[i] = t->data[i]; break;
		case GNN_I32: ((int32_t *)p)[i] = (int32_t)t->data[i]; break;
		case GNN_I64: ((int64_t *)p)[i] = (int64_t)t->data[i]; break;
		default: ((uint8_t *)p)[i] = t->data[i] != 0; break;
		}
	return p;
}

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
	void *model = NULL, *in[MaxIO] = {0}, *res[MaxIO] = {0};
	gnn_graph *g = NULL;
	int64_t *ei = NULL, shape[GNN_MAX_RANK], n;
	size_t nb;
	bool ok = false;
	int i, k;

	if (engineload(&en, m, fn, o->target, o->emu, o->model) < 0) {
		nerr++;
		return false;
	}
	d = en.desc;
	for (i = 0, k = 0; i < fn->narg; i++) {
		const IGraph *ig = &args[i].g;
		if (args[i].kind == TTensor) {
			if (!(in[k] = fromdouble(&args[i].t, d->inputs[k].dtype, &nb)))
				goto oom;
			k++;
			continue;
		}
		if (!(ei = malloc((2 * ig->nedge + 1) * sizeof *ei)))
			goto oom;
		memcpy(ei, ig->src, ig->nedge * sizeof *ei);
		memcpy(ei + ig->nedge, ig->dst, ig->nedge * sizeof *ei);
		if (gnn_graph_from_edge_index(&g, ei, GNN_I64, ig->nedge, ig->nnode) != GNN_OK ||
		    (ig->batch && gnn_graph_set_batch(g, ig->batch, GNN_I64, ig->ngraph) != GNN_OK))
			goto fail;
	}
	if (d->create(&model) != GNN_OK || (o->weights && d->load_weights(model, o->weights) != GNN_OK) ||
	    d->bind(model, g) != GNN_OK)
		goto fail;
	for (i = 0; i < d->noutputs; i++) {
		if (d->output_shape(model, i, shape) != GNN_OK)
			goto fail;
		outs[i].kind = TTensor;
		outs[i].t.rank = d->outputs[i].rank;
		for (n = 1, k = 0; k < d->outputs[i].rank; k++)
			n *= outs[i].t.shape[k] = shape[k];
		if (!(res[i] = malloc(n * gnn_dtype_size(d->outputs[i].dtype) + 1)) ||
		    !(outs[i].t.data = malloc((n + 1) * sizeof(double))))
			goto oom;
	}
	if (d->forward_host(model, (const void *const *)in, res) != GNN_OK)
		goto fail;
	for (i = 0; i < d->noutputs; i++) {
		gnn_array a = {.dtype = d->outputs[i].dtype, .rank = outs[i].t.rank, .data = res[i]};
		memcpy(a.shape, outs[i].t.shape, sizeof outs[i].t.shape[0] * a.rank);
		todouble(&a, outs[i].t.data);
	}
	ok = true;
	goto done;
oom:
	err("out of memory");
	goto done;
fail:
	err("%s", gnn_errmsg());
done:
	if (model)
		d->destroy(model);
	gnn_graph_destroy(g);
	free(ei);
	for (i = 0; i < MaxIO; i++) {
		free(in[i]);
		free(res[i]);
	}
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
		err("cannot write %s: out of memory", out);
		return false;
	}
	if (!(ok = gnn_npy_write(path, &a) == GNN_OK))
		err("cannot write %s: %s", out, gnn_errmsg());
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
		size_t len = strlen(o->out[i]) + 32;
		if (!(tmp[i] = malloc(len))) {
			err("out of memory");
			ok = false;
			break;
		}
		snprintf(tmp[i], len, "%s.gnnrun%ld.tmp", o->out[i], (long)getpid());
		ok = writeone(o, &outs[i].t, tmp[i], o->out[i]);
		done = ok ? i + 1 : i;
	}
	for (i = 0; ok && i < n; i++)
		if (rename(tmp[i], o->out[i]) != 0) {
			err("cannot rename %s to %s: %s", tmp[i], o->out[i], strerror(errno));
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

static bool
parseargs(int argc, char **argv, Opts *o)
{
	int i, k;
	char *eq;
	const char *a, *v;

	*o = (Opts){.engine = "interp", .olevel = 2, .numnodes = -1};
	for (i = 1; i < argc; i++) {
		a = argv[i];
#define VALUE(flag) ((strncmp(a, flag "=", sizeof flag) == 0) ? a + sizeof flag : \
	(strcmp(a, flag) == 0 && i + 1 < argc) ? argv[++i] : NULL)
		if (strcmp(a, "--help") == 0 || strcmp(a, "-h") == 0) {
			usage(stdout);
			exit(0);
		} else if ((v = VALUE("--graph")))
			o->graph = v;
		else if ((v = VALUE("--batch")))
			o->batch = v;
		else if ((v = VALUE("--weights")))
			o->weights = v;
		else if ((v = VALUE("--engine")))
			o->engine = v;
		else if ((v = VALUE("--emu-check"))) {
			int k = emumode(v);
			if (k != EmuMemcheck && k != EmuRacecheck) {
				err("--emu-check is memcheck or racecheck, not '%s'", v);
				return false;
			}
			o->emucheck = v;
		} else if ((v = VALUE("--emu-order"))) {
			if (strcmp(v, "forward") != 0 && strcmp(v, "reverse") != 0 && strcmp(v, "random") != 0 &&
			    strncmp(v, "random:", 7) != 0) {
				err("--emu-order is forward, reverse or random[:SEED], not '%s'", v);
				return false;
			}
			o->emuorder = v;
		} else if ((v = VALUE("--emu-grid-max"))) {
			char *end;
			long n;
			errno = 0;
			n = strtol(v, &end, 10);
			if (!*v || *end || errno || n < 1 || n > 65535) {
				err("--emu-grid-max takes a block count from 1 to 65535, not '%s'", v);
				return false;
			}
			o->emugrid = v;
		}
		else if ((v = VALUE("--output-dtype"))) {
			if (strcmp(v, "f32") != 0 && strcmp(v, "f64") != 0) {
				err("--output-dtype is f32 or f64, not '%s'", v);
				return false;
			}
			o->f64out = v[1] == '6';
		} else if (strcmp(a, "--check-finite") == 0)
			o->checkfinite = true;
		else if ((v = VALUE("--model-name")))
			o->fnname = v;
		else if ((v = VALUE("--num-nodes"))) {
			char *end;
			errno = 0;
			o->numnodes = strtoll(v, &end, 10);
			if (*end || errno || o->numnodes < 0) {
				err("--num-nodes takes a non-negative integer, not '%s'", v);
				return false;
			}
		} else if ((v = VALUE("--input"))) {
			if (!(eq = strchr(v, '=')) || eq == v || !eq[1] || eq - v >= 128) {
				err("--input takes NAME=FILE.npy, not '%s'", v);
				return false;
			}
			if (o->nin == MaxIO) {
				err("too many inputs");
				return false;
			}
			snprintf(o->inname[o->nin], sizeof o->inname[0], "%.*s", (int)(eq - v), v);
			for (k = 0; k < o->nin; k++)
				if (strcmp(o->inname[k], o->inname[o->nin]) == 0) {
					err("input '%s' given twice", o->inname[k]);
					return false;
				}
			o->infile[o->nin++] = eq + 1;
		} else if ((v = VALUE("--output"))) {
			if (o->nout == MaxIO) {
				err("too many outputs");
				return false;
			}
			/* the second would silently replace the first */
			for (k = 0; k < o->nout; k++)
				if (strcmp(o->out[k], v) == 0) {
					err("output '%s' given twice", v);
					return false;
				}
			o->out[o->nout++] = v;
		} else if ((v = VALUE("--specialize")))
			o->specialize = v;
		else if ((v = VALUE("--schedule"))) {
			char why[256];
			if (o->nforce == 16) {
				err("too many --schedule options");
				return false;
			}
			if (parseforce(v, &o->force[o->nforce++], why, sizeof why) < 0) {
				err("%s", why);
				return false;
			}
		} else if ((v = VALUE("--tune-cache")))
			o->cache = v;
		else if (strcmp(a, "--no-tune-cache") == 0)
			o->cache = "";
		else if (strcmp(a, "-O0") == 0)
			o->olevel = 0;
		else if (strcmp(a, "-O1") == 0 || strcmp(a, "-O2") == 0)
			o->olevel = 2;
		else if (strncmp(a, "-I", 2) == 0 && (a[2] || i + 1 < argc)) {
			if (o->nincdir < 64)
				o->incdir[o->nincdir++] = a[2] ? a + 2 : argv[++i];
		} else if (a[0] == '-' && a[1]) {
			err("unknown option '%s' (see --help)", a);
			return false;
		} else if (o->model) {
			err("more than one model file: '%s' and '%s'", o->model, a);
			return false;
		} else
			o->model = a;
#undef VALUE
	}
	if (!o->model)
		err("no model file given (see --help)");
	else if (!o->graph)
		err("no --graph given");
	else if (strcmp(o->engine, "interp") != 0 && strcmp(o->engine, "cpu") != 0 && strcmp(o->engine, "cuda") != 0 &&
	         strcmp(o->engine, "cuda-emu") != 0)
		err("unknown engine '%s': use interp, cpu, cuda or cuda-emu", o->engine);
	else if ((o->emucheck || o->emuorder || o->emugrid) && strcmp(o->engine, "cuda-emu") != 0)
		err("--emu-%s needs --engine=cuda-emu", o->emucheck ? "check" : o->emuorder ? "order" : "grid-max");
	o->target = strcmp(o->engine, "cpu") == 0 ? TargetCPU : TargetCUDA;
	o->emu = strcmp(o->engine, "cuda-emu") != 0 ? EmuOff : emumode(o->emucheck ? o->emucheck : "run");
	return nerr == 0;
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
	char cmd[4096], path[4096];
	FILE *p;
	size_t n;

	if (o->emuorder && setenv("GNNEMU_ORDER", o->emuorder, 1) != 0)
		return false;
	if (o->emugrid && setenv("GNNEMU_GRID_MAX", o->emugrid, 1) != 0)
		return false;
	if (!lib)
		return true;
	if (dlsym(RTLD_DEFAULT, o->emu == EmuRacecheck ? "__tsan_init" : "__asan_init")) {
		if (getenv("GNNRUN_EMU_PRELOAD"))
			unsetenv("LD_PRELOAD");
		return true;
	}
	if (getenv("GNNRUN_EMU_PRELOAD")) {
		err("the %s runtime did not load (LD_PRELOAD=%s)", lib, getenv("GNNRUN_EMU_PRELOAD"));
		return false;
	}
	snprintf(cmd, sizeof cmd, "%s -print-file-name=%s", emucxx(), lib);
	if (!(p = popen(cmd, "r")) || !fgets(path, sizeof path, p)) {
		if (p)
			pclose(p);
		err("--emu-check=%s: cannot ask the C++ compiler for %s", o->emucheck, lib);
		return false;
	}
	pclose(p);
	n = strlen(path);
	while (n && (path[n - 1] == '\n' || path[n - 1] == ' '))
		path[--n] = 0;
	if (!strchr(path, '/') || access(path, R_OK) != 0) {
		err("--emu-check=%s: the C++ compiler has no %s (install its sanitizer runtime)", o->emucheck, lib);
		return false;
	}
	if (o->emu == EmuRacecheck && !getenv("TSAN_OPTIONS"))
		setenv("TSAN_OPTIONS", "halt_on_error=1", 1);
	if (setenv("LD_PRELOAD", path, 1) != 0 || setenv("GNNRUN_EMU_PRELOAD", path, 1) != 0 || !selfexe())
		return false;
	fflush(NULL);
	execv(selfexe(), argv);
	err("cannot run gnnrun again with %s: %s", path, strerror(errno));
	return false;
}

/* The node count: from a tensor input that shares the graph's node dim,
 * whose name goes to *from; -1 if there is none. */
static int64_t
nodecount(Fn *fn, Ref garg, const IValue *in, const bool *have, const char **from)
{
	Dim n = fn->val[garg].type.dim[0];
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

int
main(int argc, char **argv)
{
	Opts o;
	FrontOpts fo = {0};
	PassOpts po = {0};
	Mod *m = NULL;
	Fn *fn;
	Weights w = {0};
	IValue args[MaxIO] = {{0}};
	bool have[MaxIO] = {0}, used[MaxIO] = {0};
	IRun run = {0};
	IValue compiled[MaxIO] = {{0}}, *outs;
	gnn_array a;
	int i, k, rc = 1;
	int64_t nnode;

	if (!parseargs(argc, argv, &o) || !emuprepare(&o, argv))
		return 1;
	fo.incdir = o.incdir;
	fo.nincdir = o.nincdir;
	if (!(m = compilefile(o.model, &fo)))
		return 1;
	for (fn = m->fn; fn && o.fnname && strcmp(fn->name, o.fnname) != 0; fn = fn->link)
		;
	if (!fn) {
		err(o.fnname ? "%s has no model '%s'" : "%s defines no model", o.model, o.fnname);
		goto out;
	}
	po.olevel = o.olevel;
	po.specialize = o.specialize;
	if (runpasses(m, &po) != 0)
		goto out;
	if (strcmp(o.engine, "interp") != 0) {
		/* schedules as gnncc chooses them */
		SchedOpts so = {.who = "gnnrun", .target = o.target, .emu = o.emu,
		                .olevel = o.olevel, .force = o.force, .nforce = o.nforce, .nodes = -1, .cache = o.cache,
		                .source = o.model};
		Choices cs;
		if (pickschedules(m, &so, &cs) < 0)
			goto out;
		freechoices(&cs);
	}
	if (fn->narg > MaxIO || fn->nret > MaxIO) {
		err("model %s has too many inputs or outputs for gnnrun", fn->name);
		goto out;
	}
	/* tensor inputs by name */
	for (i = 0; i < fn->narg; i++) {
		Val *v = &fn->val[fn->arg[i]];
		if (v->type.kind == TGraph)
			continue;
		for (k = 0; k < o.nin; k++)
			if (strcmp(o.inname[k], v->name) == 0)
				break;
		if (k == o.nin) {
			err("missing input '%s' of model %s (give --input %s=FILE.npy)", v->name, fn->name, v->name);
			continue;
		}
		used[k] = true;
		if (gnn_npy_read(o.infile[k], &a) != GNN_OK) {
			err("input '%s': %s", v->name, gnn_errmsg());
			continue;
		}
		if (!dtypeok(v->type.dtype, a.dtype)) {
			err("input '%s': %s holds %s, the model takes %s", v->name, o.infile[k], gnn_dtype_name(a.dtype), dtypename(v->type.dtype));
		} else if (a.rank != v->type.rank) {
			char s[128], t[256];
			shapestr(s, sizeof s, a.shape, a.rank);
			snprinttype(t, sizeof t, m, v->type);
			err("input '%s': %s has shape %s, the model takes %s", v->name, o.infile[k], s, t);
		} else if (o.checkfinite && gnn_check_finite(&a, o.infile[k]) != GNN_OK) {
			err("input '%s': %s", v->name, gnn_errmsg());
		} else if (!totensor(&a, v->type.dtype, &args[i].t)) {
			err("input '%s': out of memory", v->name);
		} else {
			args[i].kind = TTensor;
			have[i] = true;
		}
		gnn_array_free(&a);
	}
	for (k = 0; k < o.nin; k++)
		if (!used[k])
			err("model %s has no input '%s'", fn->name, o.inname[k]);
	if (o.nout != fn->nret)
		err("model %s has %d output%s; give --output for each (got %d)", fn->name, fn->nret, fn->nret == 1 ? "" : "s", o.nout);
	if (o.weights && gnn_st_open(o.weights, &w.st) != GNN_OK)
		err("%s", gnn_errmsg());
	w.fn = fn;
	w.path = o.weights;
	w.checkfinite = o.checkfinite;
	if (nerr == 0)
		checkweights(&w);
	if (nerr)
		goto out;
	for (i = 0; i < fn->narg; i++) {
		if (fn->val[fn->arg[i]].type.kind != TGraph)
			continue;
		const char *from = NULL;
		char why[160];
		nnode = o.numnodes >= 0 ? o.numnodes : nodecount(fn, fn->arg[i], args, have, &from);
		if (o.numnodes >= 0)
			snprintf(why, sizeof why, "from --num-nodes");
		else if (from)
			snprintf(why, sizeof why, "the node count of input '%.100s'", from);
		else
			snprintf(why, sizeof why, "no input gives the node count: the largest index + 1");
		args[i].kind = TGraph;
		have[i] = true;
		if (!loadgraph(&o, nnode, why, &args[i].g))
			goto out;
	}
	run.fn = fn;
	run.args = args;
	run.param = getparam;
	run.ud = &w;
	if (strcmp(o.engine, "interp") == 0) {
		if (interp(&run) != 0) {
			err("%s", run.err);
			goto out;
		}
		outs = run.outs;
	} else {
		/* the compiled model reads as many elements as its types say:
		 * inputs that do not fit them must not get that far */
		run.checkonly = true;
		if (interp(&run) != 0) {
			err("%s", run.err);
			goto out;
		}
		outs = compiled;
		if (!runcompiled(&o, m, fn, args, compiled))
			goto out;
	}
	rc = writeoutputs(&o, outs, fn->nret) ? 0 : 1;
out:
	for (i = 0; i < MaxIO; i++)
		if (have[i])
			ivaluefree(&args[i]);
	interpfree(&run);
	for (i = 0; i < MaxIO; i++)
		free(compiled[i].t.data);
	gnn_st_close(w.st);
	freemod(m);
	return rc;
}
