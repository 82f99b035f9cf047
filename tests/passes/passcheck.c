/*
 * passcheck [-p PIPELINE] FILE...: every pass keeps the program's meaning.
 *
 * For each function of each FILE (a .gnn model, or .ir text) compiled at
 * -O0, passcheck makes seeded random inputs and parameters, runs the
 * reference interpreter, and then
 *   - applies the passes of the pipeline (default: -O2's) one at a time,
 *     verifying the IR and re-running the interpreter after each, each
 *     run compared with the one before the pass;
 *   - applies each pass of the pipeline alone to a fresh -O0 copy, and
 *     compares with the -O0 run.
 * Outputs agree when every element does: NaN where the other has NaN,
 * the same infinity, and otherwise max|a - b| over the output at most
 * 1e-9 times max|b| (float64 throughout: the interpreter never rounds to
 * f32, so this is far above the rounding a reassociation causes and far
 * below any real change of meaning).
 *
 * -p double-output names a deliberately wrong pass, for the harness's own
 * test.
 *
 * Inputs are run twice ("trials"): signed values on an unweighted graph,
 * then positive values (for log, sqrt, pow) on a weighted graph.  The
 * graph has N = 23 nodes and E = 71 edges, with a self loop, a duplicate
 * edge and an isolated last node (a relation graph[Ns -> Nd, E]: Ns = 23
 * sources too, the last isolated), and B = 3 graphs in its batch vector
 * when its type is graph[N, E, B]; any other symbol is 5.  Parameters are
 * uniform in [-1, 1] (or [0.25, 1.25] in the second trial), seeded by
 * their name so that each pass sees the same weights, except a batch
 * norm's running_var, kept positive so that the model is not NaN.
 * Integer tensors hold 0, 1 or 2, which index anything of 3 or more rows.
 *
 * A function that the interpreter cannot run at -O0 (a pass test's IR
 * may be written to be compiled, not run) is skipped, with a line that
 * says why.  Prints a line per pass application and a summary
 * "N modules, M pass applications, K mismatches" (", S functions
 * skipped" when some were); exit status 1 if K > 0 or a file does not
 * compile, 2 on a usage error.
 */
#include <float.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "../../frontend/frontend.h"
#include "../../ir/interp.h"
#include "../../passes/passes.h"

enum { NTrial = 2, GraphN = 23, GraphE = 71, GraphB = 3, OtherSym = 5 };
static const double Tol = 1e-9;

typedef struct Param {
	const char *name;
	ITensor t;
} Param;

typedef struct Trial {
	IValue *arg;            /* [fn->narg] */
	Param *par;
	int npar;
	IValue *out;            /* the outputs before the current pass */
	int nout;
} Trial;

static int nmodule, napply, nmismatch, nskip;

/* ---------------------------------------------------------------- random */

static uint64_t
splitmix(uint64_t *s)
{
	uint64_t z = (*s += 0x9e3779b97f4a7c15u);

	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9u;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebu;
	return z ^ (z >> 31);
}

static double
uniform(uint64_t *s, double lo, double hi)
{
	return lo + (hi - lo) * (double)(splitmix(s) >> 11) * 0x1p-53;
}

static uint64_t
strseed(const char *s, int trial)
{
	uint64_t h = 14695981039346656037u;

	for (; *s; s++)
		h = (h ^ (unsigned char)*s) * 1099511628211u;
	return h ^ (uint64_t)(trial + 1) * 0x632be59bd9b4e019u;
}

/* Fill t (shape set) with values for dtype and trial. */
static void
filltensor(ITensor *t, uint64_t *s, int trial, bool positive)
{
	int64_t n = 1, i;
	int k;

	for (k = 0; k < t->rank; k++)
		n *= t->shape[k];
	t->data = emalloc((n ? n : 1) * sizeof *t->data);
	for (i = 0; i < n; i++) {
		if (t->dtype == DBool)
			t->data[i] = (double)(splitmix(s) & 1);
		else if (dtypeisint(t->dtype))
			t->data[i] = (double)(splitmix(s) % 3);
		else if (positive)
			t->data[i] = uniform(s, 0.5, 1.5);
		else
			t->data[i] = trial == 0 ? uniform(s, -1, 1) : uniform(s, 0.25, 1.25);
	}
}

/* ---------------------------------------------------------------- inputs */

static bool
shapeof(Mod *m, Type t, const int64_t *symval, ITensor *out)
{
	int k;

	out->dtype = t.dtype;
	out->rank = t.rank;
	for (k = 0; k < t.rank; k++)
		if ((out->shape[k] = dimeval(m, t.dim[k], symval)) < 0)
			return false;
	return true;
}

/* n nodes (ns sources: a relation's, else ns = n) and e edges */
static void
makegraph(IGraph *g, int64_t ns, int64_t n, int64_t e, int64_t b, int trial, uint64_t *s)
{
	int64_t i, live = n > 1 ? n - 1 : n;   /* the last node stays isolated */
	int64_t lives = ns > 1 ? ns - 1 : ns;

	*g = (IGraph){.nnode = n, .nedge = e, .nsrc = ns};
	g->src = emalloc((e ? e : 1) * sizeof *g->src);
	g->dst = emalloc((e ? e : 1) * sizeof *g->dst);
	for (i = 0; i < e; i++) {
		g->src[i] = lives ? (int64_t)(splitmix(s) % (uint64_t)lives) : 0;
		g->dst[i] = live ? (int64_t)(splitmix(s) % (uint64_t)live) : 0;
	}
	if (e >= 3 && n >= 4 && ns >= 4) {
		g->src[0] = g->dst[0] = 2;              /* a self loop */
		g->src[1] = g->src[2] = 0;              /* a duplicate edge */
		g->dst[1] = g->dst[2] = 1;
	}
	if (trial == 1) {
		g->weight = emalloc((e ? e : 1) * sizeof *g->weight);
		for (i = 0; i < e; i++)
			g->weight[i] = uniform(s, 0.5, 1.5);
	}
	if (b > 0) {
		g->ngraph = b;
		g->batch = emalloc((n ? n : 1) * sizeof *g->batch);
		for (i = 0; i < n; i++)
			g->batch[i] = i * b / (n ? n : 1);
	}
}

/* Inputs and parameters of fn for one trial; false with a message if a
 * shape cannot be fixed. */
static bool
maketrial(Fn *fn, int trial, Trial *t)
{
	Mod *m = fn->mod;
	int64_t *symval, b;
	uint64_t s = strseed(fn->name, trial);
	Type ty;
	Ins *in;
	int i, k;
	bool ok = true;

	*t = (Trial){0};
	symval = emalloc((m->nsym + 1) * sizeof *symval);
	for (k = 0; k < m->nsym; k++)
		symval[k] = -1;
	for (i = 0; i < fn->narg; i++) {
		ty = fn->val[fn->arg[i]].type;
		if (ty.kind != TGraph)
			continue;
		if (dimeval(m, ty.dim[0], symval) < 0)
			dimbind(m, ty.dim[0], GraphN, symval);
		if (dimeval(m, graphsrcnodes(ty), symval) < 0)   /* a relation's sources */
			dimbind(m, graphsrcnodes(ty), GraphN, symval);
		if (dimeval(m, ty.dim[1], symval) < 0)
			dimbind(m, ty.dim[1], GraphE, symval);
		if (ty.rank == 3 && dimeval(m, ty.dim[2], symval) < 0)
			dimbind(m, ty.dim[2], GraphB, symval);
	}
	for (k = 0; k < m->nsym; k++)
		if (symval[k] < 0 && !m->sym[k].derived)
			symval[k] = OtherSym;
	t->arg = emalloc((fn->narg + 1) * sizeof *t->arg);
	for (i = 0; i < fn->narg; i++) {
		ty = fn->val[fn->arg[i]].type;
		t->arg[i].kind = ty.kind;
		if (ty.kind == TGraph) {
			b = ty.rank == 3 ? dimeval(m, ty.dim[2], symval) : 0;
			makegraph(&t->arg[i].g, dimeval(m, graphsrcnodes(ty), symval), dimeval(m, ty.dim[0], symval),
			          dimeval(m, ty.dim[1], symval), b, trial, &s);
		} else if (shapeof(m, ty, symval, &t->arg[i].t))
			filltensor(&t->arg[i].t, &s, trial, false);
		else {
			fprintf(stderr, "passcheck: @%s: cannot size input %d\n", fn->name, i + 1);
			ok = false;
			t->arg[i].t.rank = 0;
			t->arg[i].t.data = emalloc(sizeof(double));
		}
	}
	for (i = 0; i < fn->nins; i++) {
		in = &fn->ins[i];
		if (in->op != Oparam || !attrstr(in, "name"))
			continue;
		t->par = erealloc(t->par, (t->npar + 1) * sizeof *t->par);
		t->par[t->npar].name = attrstr(in, "name");
		if (!shapeof(m, fn->val[in->to].type, symval, &t->par[t->npar].t)) {
			fprintf(stderr, "passcheck: @%s: cannot size parameter '%s'\n", fn->name, t->par[t->npar].name);
			ok = false;
			continue;
		}
		s = strseed(t->par[t->npar].name, trial);
		filltensor(&t->par[t->npar].t, &s, trial, strstr(t->par[t->npar].name, "running_var") != NULL);
		t->npar++;
	}
	free(symval);
	return ok;
}

static void
freeouts(Trial *t)
{
	int k;

	for (k = 0; k < t->nout; k++)
		ivaluefree(&t->out[k]);
	free(t->out);
	t->out = NULL;
	t->nout = 0;
}

static void
freetrial(Trial *t, Fn *fn)
{
	int k;

	for (k = 0; k < fn->narg; k++)
		ivaluefree(&t->arg[k]);
	free(t->arg);
	for (k = 0; k < t->npar; k++)
		free(t->par[k].t.data);
	free(t->par);
	freeouts(t);
}

/* The interpreter's parameter callback: copies, since it takes ownership. */
static bool
getparam(void *ud, const char *name, ITensor *out)
{
	Trial *t = ud;
	int64_t n = 1;
	int k, j;

	for (k = 0; k < t->npar; k++)
		if (strcmp(t->par[k].name, name) == 0)
			break;
	if (k == t->npar)
		return false;
	*out = t->par[k].t;
	for (j = 0; j < out->rank; j++)
		n *= out->shape[j];
	out->data = emalloc((n ? n : 1) * sizeof *out->data);
	memcpy(out->data, t->par[k].t.data, n * sizeof *out->data);
	return true;
}

/* Run fn on trial t; the outputs (owned) in *out. */
static int
run(Fn *fn, Trial *t, IValue **out, char *err, size_t errlen)
{
	IRun r = {.fn = fn, .args = t->arg, .param = getparam, .ud = t};

	if (interp(&r) < 0) {
		snprintf(err, errlen, "%s", r.err);
		interpfree(&r);
		return -1;
	}
	*out = r.outs;
	return 0;
}

/* ---------------------------------------------------------------- compare */

/* Elements agree as described atop; *maxdiff and *scale accumulate. */
static bool
cmpvals(const double *a, const double *b, int64_t n, double *maxdiff, double *scale)
{
	int64_t i;

	for (i = 0; i < n; i++) {
		if (isnan(a[i]) || isnan(b[i])) {
			if (!(isnan(a[i]) && isnan(b[i])))
				return false;
			continue;
		}
		if (isinf(a[i]) || isinf(b[i])) {
			if (a[i] != b[i])
				return false;
			continue;
		}
		if (fabs(a[i] - b[i]) > *maxdiff)
			*maxdiff = fabs(a[i] - b[i]);
		if (fabs(b[i]) > *scale)
			*scale = fabs(b[i]);
	}
	return true;
}

static bool
cmpints(const int64_t *a, const int64_t *b, int64_t n)
{
	return n == 0 || !a == !b || (a && b && memcmp(a, b, n * sizeof *a) == 0);
}

/* Output k of got against want; *rel the relative difference. */
static bool
cmpvalue(const IValue *got, const IValue *want, double *rel, char *why, size_t whylen)
{
	double maxdiff = 0, scale = 0;
	int64_t n = 1;
	int k;

	*rel = 0;
	if (got->kind != want->kind) {
		snprintf(why, whylen, "a %s instead of a %s", got->kind == TGraph ? "graph" : "tensor",
		         want->kind == TGraph ? "graph" : "tensor");
		return false;
	}
	if (got->kind == TGraph) {
		const IGraph *a = &got->g, *b = &want->g;

		if (a->nnode != b->nnode || a->nedge != b->nedge || !a->weight != !b->weight
		 || !cmpints(a->src, b->src, a->nedge) || !cmpints(a->dst, b->dst, a->nedge)
		 || (a->batch && b->batch && !cmpints(a->batch, b->batch, a->nnode))) {
			snprintf(why, whylen, "different graphs");
			return false;
		}
		if (a->weight && !cmpvals(a->weight, b->weight, a->nedge, &maxdiff, &scale)) {
			snprintf(why, whylen, "different edge weights");
			return false;
		}
	} else {
		if (got->t.rank != want->t.rank || memcmp(got->t.shape, want->t.shape, got->t.rank * sizeof *got->t.shape)) {
			snprintf(why, whylen, "different shapes");
			return false;
		}
		for (k = 0; k < got->t.rank; k++)
			n *= got->t.shape[k];
		if (!cmpvals(got->t.data, want->t.data, n, &maxdiff, &scale)) {
			snprintf(why, whylen, "NaN or infinity where the other has none");
			return false;
		}
	}
	*rel = maxdiff / (scale > DBL_MIN ? scale : DBL_MIN);
	if (*rel > Tol) {
		snprintf(why, whylen, "max |a - b| = %.3g, %.3g relative", maxdiff, *rel);
		return false;
	}
	return true;
}

/*
 * Run fn on every trial and compare with the trials' out; print a line
 * for the pass application what, and with replace, keep the new outputs
 * as the trials' out.
 */
static void
check(Fn *fn, Trial *t, const char *file, const char *what, bool verified, bool replace)
{
	char why[600] = "", err[512];
	double rel, worst = 0;
	IValue *out;
	bool ok = verified;
	int i, k;

	napply++;
	if (!verified)
		snprintf(why, sizeof why, "invalid IR");
	for (i = 0; i < NTrial && ok; i++) {
		if (run(fn, &t[i], &out, err, sizeof err) < 0) {
			snprintf(why, sizeof why, "trial %d: interpreter: %s", i, err);
			ok = false;
			break;
		}
		if (fn->nret != t[i].nout) {
			snprintf(why, sizeof why, "trial %d: %d outputs instead of %d", i, fn->nret, t[i].nout);
			ok = false;
		}
		for (k = 0; ok && k < fn->nret; k++) {
			char w[256];

			if (!cmpvalue(&out[k], &t[i].out[k], &rel, w, sizeof w)) {
				snprintf(why, sizeof why, "trial %d, output %d: %s", i, k + 1, w);
				ok = false;
			} else if (rel > worst)
				worst = rel;
		}
		if (ok && replace) {
			freeouts(&t[i]);
			t[i].out = out;
			t[i].nout = fn->nret;
		} else {
			for (k = 0; k < fn->nret; k++)
				ivaluefree(&out[k]);
			free(out);
		}
	}
	if (ok)
		printf("%s @%s %s: ok (max rel diff %.2g)\n", file, fn->name, what, worst);
	else {
		printf("%s @%s %s: MISMATCH: %s\n", file, fn->name, what, why);
		nmismatch++;
	}
}

/* ---------------------------------------------------------------- driver */

static bool
hassuffix(const char *s, const char *suf)
{
	size_t n = strlen(s), k = strlen(suf);

	return n >= k && strcmp(s + n - k, suf) == 0;
}

/* The file at -O0: a .gnn through the frontend, .ir text through the parser. */
static Mod *
load(const char *path)
{
	FrontOpts fo = {0};
	char *text;
	size_t len;
	Mod *m;

	diag_reset();
	if (!hassuffix(path, ".ir"))
		m = compilefile(path, &fo);
	else {
		if (!(text = readfile(path, &len))) {
			perror(path);
			return NULL;
		}
		m = parseir(path, text, len);
		free(text);
		if (m && !verifymod(m, NULL)) {
			freemod(m);
			m = NULL;
		}
	}
	if (m && diag_nerrors() > 0) {
		freemod(m);
		m = NULL;
	}
	return m;
}

static Fn *
nthfn(Mod *m, int k)
{
	Fn *fn;

	for (fn = m->fn; fn && k > 0; fn = fn->link)
		k--;
	return fn;
}

static bool
apply(Fn *fn, const Pass *p)
{
	p->run(fn);
	filluse(fn);
	return verifyfn(fn, p->name);
}

static void
checkfn(const char *path, int fi, const Pass **pipe, int npipe)
{
	Trial t[NTrial];
	char err[512], what[128];
	Mod *m, *m0;
	Fn *fn0, *fn;
	bool ok = true, seen;
	int i, j;

	m0 = load(path);
	fn0 = nthfn(m0, fi);
	for (i = 0; i < NTrial; i++) {
		if (!maketrial(fn0, i, &t[i]) && ok) {
			printf("%s @%s: skipped: cannot size the inputs\n", path, fn0->name);
			ok = false;
		}
		if (ok && run(fn0, &t[i], &t[i].out, err, sizeof err) < 0) {
			printf("%s @%s: skipped: trial %d fails at -O0: %s\n", path, fn0->name, i, err);
			ok = false;
		}
		if (ok)
			t[i].nout = fn0->nret;
	}
	if (!ok) {
		nskip++;
		for (j = 0; j < i && j < NTrial; j++)
			freetrial(&t[j], fn0);
		freemod(m0);
		return;
	}
	/* the pipeline, one pass at a time, each against the IR before it */
	m = load(path);
	fn = nthfn(m, fi);
	for (i = 0; i < npipe; i++) {
		snprintf(what, sizeof what, "pipeline %d/%d %s", i + 1, npipe, pipe[i]->name);
		check(fn, t, path, what, apply(fn, pipe[i]), true);
	}
	freemod(m);
	/* each pass alone on the -O0 IR, against -O0 */
	for (i = 0; i < NTrial; i++) {
		freeouts(&t[i]);
		run(fn0, &t[i], &t[i].out, err, sizeof err);
		t[i].nout = fn0->nret;
	}
	for (i = 0; i < npipe; i++) {
		for (seen = false, j = 0; j < i; j++)
			seen |= pipe[j] == pipe[i];
		if (seen)
			continue;
		m = load(path);
		fn = nthfn(m, fi);
		snprintf(what, sizeof what, "alone %s", pipe[i]->name);
		check(fn, t, path, what, apply(fn, pipe[i]), false);
		freemod(m);
	}
	for (i = 0; i < NTrial; i++)
		freetrial(&t[i], fn0);
	freemod(m0);
}

/*
 * A pass that changes the meaning, to show that the harness notices:
 * the first output, if a float tensor, is doubled.
 */
static void
doubleoutput(Fn *fn)
{
	Type t;
	Attr a;
	Ref arg[2];

	if (fn->nret == 0 || (t = fn->val[fn->ret[0]].type).kind != TTensor || !dtypeisfloat(t.dtype))
		return;
	a = mkattrfloat(fn->mod->arena, "value", 2.0);
	arg[0] = fn->ret[0];
	arg[1] = emit(fn, Oconst, tensortype(t.dtype, 0, NULL), NULL, 0, &a, 1, NULL, (Loc){0});
	fn->ret[0] = emit(fn, Omul, t, arg, 2, NULL, 0, NULL, (Loc){0});
}

static const Pass broken = {"double-output", doubleoutput, "a wrong pass, for passcheck's own test"};

/* Split a comma list into passes; -1 after a message. */
static int
parsepipe(const char *s, const Pass ***out)
{
	const Pass **v = NULL, *p;
	char name[64];
	const char *e;
	int n = 0;

	while (*s) {
		for (e = s; *e && *e != ','; e++)
			;
		p = NULL;
		if ((size_t)(e - s) < sizeof name) {
			memcpy(name, s, e - s);
			name[e - s] = 0;
			p = strcmp(name, broken.name) == 0 ? &broken : findpass(name);
		}
		if (!p) {
			fprintf(stderr, "passcheck: unknown pass '%.*s'\n", (int)(e - s), s);
			free(v);
			return -1;
		}
		v = erealloc(v, (n + 1) * sizeof *v);
		v[n++] = p;
		s = *e ? e + 1 : e;
	}
	*out = v;
	return n;
}

int
main(int argc, char **argv)
{
	const char *pipeline = defaultpipeline(2);
	const Pass **pipe = NULL;
	int i, k, npipe, nfn, bad = 0;
	Mod *m;
	Fn *fn;

	diag_setcaret(false);
	for (i = 1; i < argc && argv[i][0] == '-'; i++) {
		if (strcmp(argv[i], "-p") == 0 && i + 1 < argc)
			pipeline = argv[++i];
		else {
			fprintf(stderr, "usage: passcheck [-p PIPELINE] FILE...\n");
			return 2;
		}
	}
	if (i == argc) {
		fprintf(stderr, "usage: passcheck [-p PIPELINE] FILE...\n");
		return 2;
	}
	if ((npipe = parsepipe(pipeline, &pipe)) < 0)
		return 2;
	for (; i < argc; i++) {
		if (!(m = load(argv[i]))) {
			printf("%s: does not compile\n", argv[i]);
			bad++;
			continue;
		}
		for (nfn = 0, fn = m->fn; fn; fn = fn->link)
			nfn++;
		freemod(m);
		if (nfn == 0) {
			printf("%s: no functions\n", argv[i]);
			continue;
		}
		nmodule++;
		for (k = 0; k < nfn; k++)
			checkfn(argv[i], k, pipe, npipe);
	}
	free(pipe);
	printf("%d modules, %d pass applications, %d mismatches", nmodule, napply, nmismatch);
	if (nskip)
		printf(", %d functions skipped", nskip);
	printf("\n");
	return nmismatch + bad > 0;
}
