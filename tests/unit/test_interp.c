/*
 * Unit tests of the reference interpreter (ir/interp.c).
 *
 * Each test builds a small function with the unchecked builder (emit
 * with explicit types, so a test does not depend on the typechecker's
 * choices), runs it and compares with values worked out by hand or by
 * the defining formula written out inline.  Error tests check the
 * message text, since the messages are part of the contract (they name
 * the input or the %value).  Exit status 0 iff every check passes.
 */
#include <math.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "../../ir/interp.h"

static int npass, nfail;
static Mod *m;
static Fn *fn;
static IRun run;
static Dim N, E;
static const Loc noloc;

#define S(...) ((int64_t[]){__VA_ARGS__})
#define D(...) ((double[]){__VA_ARGS__})
#define I(...) ((int64_t[]){__VA_ARGS__})
#define NARGS(...) (int)(sizeof((Ref[]){__VA_ARGS__}) / sizeof(Ref))
#define ARGS(...) NARGS(__VA_ARGS__), ((Ref[]){__VA_ARGS__})
#define NATTR(...) (int)(sizeof((Attr[]){__VA_ARGS__}) / sizeof(Attr))
#define ATTRS(...) NATTR(__VA_ARGS__), ((Attr[]){__VA_ARGS__})
#define NOARGS 0, NULL
#define NOATTR 0, NULL
#define AINT(k, v) mkattrint(m->arena, k, v)
#define AFLT(k, v) mkattrfloat(m->arena, k, v)
#define ADIM(k, v) mkattrdim(m->arena, k, v)

static void
check(bool ok, int line, const char *fmt, ...)
{
	va_list ap;

	if (ok) {
		npass++;
		return;
	}
	nfail++;
	printf("FAIL line %d: ", line);
	va_start(ap, fmt);
	vprintf(fmt, ap);
	va_end(ap);
	printf("\n");
}
#define CHECK(c, ...) check((c), __LINE__, __VA_ARGS__)

/* A fresh module with symbols N and E, and a function in it. */
static void
begin(void)
{
	m = newmod();
	fn = newfn(m, "f", noloc);
	N = dimsym(m, symadd(m, "N", false));
	E = dimsym(m, symadd(m, "E", false));
}

static void
end(void)
{
	interpfree(&run);
	freemod(m);
	m = NULL;
	fn = NULL;
}

static Type
tt(int dt, int rank, ...)
{
	Dim d[MaxRank];
	va_list ap;
	int k;

	va_start(ap, rank);
	for (k = 0; k < rank; k++)
		d[k] = va_arg(ap, int);
	va_end(ap);
	return tensortype(dt, rank, d);
}

static Ref
ins(int op, Type t, const char *name, int narg, const Ref *arg, int nattr, const Attr *attr)
{
	return emit(fn, op, t, arg, narg, attr, nattr, name, noloc);
}

static IValue
tv(int rank, const int64_t *shape, double *data)
{
	IValue v = {.kind = TTensor, .t = {.rank = rank, .data = data}};

	memcpy(v.t.shape, shape, rank * sizeof *shape);
	return v;
}

static IValue
gv(int64_t nnode, int64_t nedge, int64_t *src, int64_t *dst, double *w)
{
	return (IValue){.kind = TGraph, .g = {.nnode = nnode, .nedge = nedge, .src = src, .dst = dst, .weight = w}};
}

/* Parameters for the tests: a fixed table, handed out as malloc'd copies
 * since the interpreter takes the arrays over. */
typedef struct Par {
	const char *name;
	int rank;
	int64_t shape[MaxRank];
	double *data;
} Par;
static Par *params;
static int nparams;

static bool
getparam(void *ud, const char *name, ITensor *t)
{
	int64_t n = 1;
	int k, j;

	(void)ud;
	for (k = 0; k < nparams; k++)
		if (strcmp(params[k].name, name) == 0) {
			*t = (ITensor){.dtype = DNone, .rank = params[k].rank};
			memcpy(t->shape, params[k].shape, sizeof t->shape);
			for (j = 0; j < t->rank; j++)
				n *= t->shape[j];
			t->data = malloc(n * sizeof(double));
			memcpy(t->data, params[k].data, n * sizeof(double));
			return true;
		}
	return false;
}

/* Run fn on args; true on success (else print the error). */
static bool
go(IValue *args)
{
	interpfree(&run);
	run = (IRun){.fn = fn, .args = args, .param = getparam};
	if (interp(&run) == 0)
		return true;
	printf("  unexpected error: %s\n", run.err);
	return false;
}

/* Run fn on args expecting a failure whose message contains want. */
static void
goerr(int line, IValue *args, const char *want)
{
	interpfree(&run);
	run = (IRun){.fn = fn, .args = args, .param = getparam};
	if (interp(&run) == 0) {
		check(false, line, "expected error containing \"%s\", got success", want);
		return;
	}
	check(run.outs == NULL, line, "outs not NULL after an error");
	check(strstr(run.err, want) != NULL, line, "error \"%s\" does not contain \"%s\"", run.err, want);
}
#define GOERR(args, want) goerr(__LINE__, args, want)

static bool
near(double a, double b)
{
	if (isnan(a) || isnan(b))
		return isnan(a) && isnan(b);
	if (isinf(a) || isinf(b))
		return a == b;
	return fabs(a - b) <= 1e-12 * (1 + fabs(b));
}

static void
expectt(int line, const char *what, const IValue *v, int rank, const int64_t *shape, const double *want)
{
	int64_t n = 1, i;
	int k;

	if (!v || v->kind != TTensor) {
		check(false, line, "%s: not a tensor", what);
		return;
	}
	if (v->t.rank != rank) {
		check(false, line, "%s: rank %d, want %d", what, v->t.rank, rank);
		return;
	}
	for (k = 0; k < rank; k++) {
		if (v->t.shape[k] != shape[k]) {
			check(false, line, "%s: dim %d is %lld, want %lld", what, k,
			      (long long)v->t.shape[k], (long long)shape[k]);
			return;
		}
		n *= shape[k];
	}
	for (i = 0; i < n; i++)
		if (!near(v->t.data[i], want[i])) {
			check(false, line, "%s: element %lld is %.17g, want %.17g", what,
			      (long long)i, v->t.data[i], want[i]);
			return;
		}
	check(true, line, "");
}
#define EXPECTT(what, v, rank, shape, want) expectt(__LINE__, what, v, rank, shape, want)

static void
expectg(int line, const char *what, const IValue *v, int64_t nnode, int64_t nedge,
        const int64_t *src, const int64_t *dst, const double *w)
{
	int64_t e;

	if (!v || v->kind != TGraph) {
		check(false, line, "%s: not a graph", what);
		return;
	}
	if (v->g.nnode != nnode || v->g.nedge != nedge) {
		check(false, line, "%s: %lld nodes %lld edges, want %lld %lld", what,
		      (long long)v->g.nnode, (long long)v->g.nedge, (long long)nnode, (long long)nedge);
		return;
	}
	if ((v->g.weight != NULL) != (w != NULL)) {
		check(false, line, "%s: weighted %d, want %d", what, v->g.weight != NULL, w != NULL);
		return;
	}
	for (e = 0; e < nedge; e++)
		if (v->g.src[e] != src[e] || v->g.dst[e] != dst[e] || (w && !near(v->g.weight[e], w[e]))) {
			check(false, line, "%s: edge %lld is %lld->%lld (w %g), want %lld->%lld (w %g)", what,
			      (long long)e, (long long)v->g.src[e], (long long)v->g.dst[e],
			      v->g.weight ? v->g.weight[e] : 1.0, (long long)src[e], (long long)dst[e], w ? w[e] : 1.0);
			return;
		}
	check(true, line, "");
}
#define EXPECTG(what, v, n, e, src, dst, w) expectg(__LINE__, what, v, n, e, src, dst, w)

/* Leaves ------------------------------------------------------------------ */

static void
test_const_param(void)
{
	Ref x, c, p, q;
	Par ps[] = {{"w", 2, {2, 2}, D(1, 2, 3, 4)}, {"bad", 2, {2, 3}, D(0, 0, 0, 0, 0, 0)}};
	IValue args[1];

	params = ps;
	nparams = 2;
	begin();
	x = addarg(fn, "x", tt(DF32, 1, N));
	c = ins(Oconst, tt(DF32, 2, N, 2), "c", NOARGS, ATTRS(AFLT("value", 1.5)));
	p = ins(Oparam, tt(DF32, 2, 2, 2), "p", NOARGS, ATTRS(mkattrstr(m->arena, "name", "w")));
	q = ins(Oparam, tt(DF32, 2, 2, 2), "p2", NOARGS, ATTRS(mkattrstr(m->arena, "name", "w")));
	q = ins(Oadd, tt(DF32, 2, 2, 2), "q", ARGS(p, q), NOATTR);
	addret(fn, c);
	addret(fn, p);
	addret(fn, q);
	addret(fn, x);
	args[0] = tv(1, S(3), D(7, 8, 9));
	if (go(args)) {
		EXPECTT("const", &run.outs[0], 2, S(3, 2), D(1.5, 1.5, 1.5, 1.5, 1.5, 1.5));
		EXPECTT("param", &run.outs[1], 2, S(2, 2), D(1, 2, 3, 4));
		CHECK(run.outs[1].t.dtype == DF32, "param dtype is the declared one");
		EXPECTT("param+param", &run.outs[2], 2, S(2, 2), D(2, 4, 6, 8));
		EXPECTT("returned input", &run.outs[3], 1, S(3), D(7, 8, 9));
		CHECK(run.outs[3].t.data != args[0].t.data, "a returned input must be a copy");
	}
	end();

	/* missing parameter, then a shape mismatch (whose array the
	 * interpreter frees: ASan would report a leak) */
	begin();
	p = ins(Oparam, tt(DF32, 2, 16, 1433), "w1", NOARGS, ATTRS(mkattrstr(m->arena, "name", "conv1.lin.weight")));
	addret(fn, p);
	GOERR(NULL, "%w1: missing parameter 'conv1.lin.weight'");
	end();
	begin();
	p = ins(Oparam, tt(DF32, 2, 2, 2), "w1", NOARGS, ATTRS(mkattrstr(m->arena, "name", "bad")));
	addret(fn, p);
	GOERR(NULL, "%w1: parameter 'bad': expected shape [2, 2], got [2, 3]");
	end();
	params = NULL;
	nparams = 0;
}

/* Graph ops --------------------------------------------------------------- */

/* The weighted graph used below: node 2 has two self-loops (weights 5
 * and 7: the last one counts), node 3 is isolated. */
static int64_t wsrc[] = {0, 1, 2, 2, 2}, wdst[] = {1, 2, 2, 0, 2};
static double ww[] = {2, 3, 5, 0.5, 7};

static void
test_self_loops(void)
{
	Ref g, a, r, rw, q, qs;
	Dim E1, E2;
	bool ok = true;
	IValue args[1];

	begin();
	E1 = dimsym(m, symfresh(m, "E"));
	E2 = dimsym(m, symfresh(m, "E"));
	g = addarg(fn, "g", graphtype(N, E));
	a = ins(Oadd_self_loops, graphtype(N, dimadd(m, E, N, &ok)), "a", ARGS(g), NOATTR);
	r = ins(Oremove_self_loops, graphtype(N, E1), "r", ARGS(g), NOATTR);
	rw = ins(Oedge_weight, tt(DF32, 2, E1, 1), "rw", ARGS(r), NOATTR);
	q = ins(Oadd_remaining_self_loops, graphtype(N, dimadd(m, E2, N, &ok)), "q", ARGS(g), ATTRS(AFLT("fill", 1.5)));
	qs = ins(Osrc, tt(DI64, 1, dimadd(m, E2, N, &ok)), "qs", ARGS(q), NOATTR);
	addret(fn, a);
	addret(fn, r);
	addret(fn, rw);
	addret(fn, q);
	addret(fn, qs);
	CHECK(ok, "dim arithmetic");

	args[0] = gv(4, 5, wsrc, wdst, ww);
	if (go(args)) {
		EXPECTG("add_self_loops", &run.outs[0], 4, 9, I(0, 1, 2, 2, 2, 0, 1, 2, 3),
		        I(1, 2, 2, 0, 2, 0, 1, 2, 3), D(2, 3, 5, 0.5, 7, 1, 1, 1, 1));
		EXPECTG("remove_self_loops", &run.outs[1], 4, 3, I(0, 1, 2), I(1, 2, 0), D(2, 3, 0.5));
		EXPECTT("edge_weight after remove", &run.outs[2], 2, S(3, 1), D(2, 3, 0.5));
		EXPECTG("add_remaining_self_loops", &run.outs[3], 4, 7, I(0, 1, 2, 0, 1, 2, 3),
		        I(1, 2, 0, 0, 1, 2, 3), D(2, 3, 0.5, 1.5, 1.5, 7, 1.5));
		EXPECTT("src after add_remaining", &run.outs[4], 1, S(7), D(0, 1, 2, 0, 1, 2, 3));
	}
	/* unweighted: stays unweighted, fill ignored */
	args[0] = gv(4, 5, wsrc, wdst, NULL);
	if (go(args)) {
		EXPECTG("add_self_loops unweighted", &run.outs[0], 4, 9, I(0, 1, 2, 2, 2, 0, 1, 2, 3),
		        I(1, 2, 2, 0, 2, 0, 1, 2, 3), NULL);
		EXPECTT("edge_weight unweighted", &run.outs[2], 2, S(3, 1), D(1, 1, 1));
		EXPECTG("add_remaining unweighted", &run.outs[3], 4, 7, I(0, 1, 2, 0, 1, 2, 3),
		        I(1, 2, 0, 0, 1, 2, 3), NULL);
	}
	/* a second graph of another size rebinds the derived symbols */
	args[0] = gv(2, 1, I(1), I(1), NULL);
	if (go(args)) {
		EXPECTG("remove_self_loops all loops", &run.outs[1], 2, 0, NULL, NULL, NULL);
		EXPECTG("add_remaining all loops", &run.outs[3], 2, 2, I(0, 1), I(0, 1), NULL);
	}
	end();
}

static void
test_graph_tensors(void)
{
	Ref g, s, d, ind, outd, ew, b, gb;
	Dim B;
	IValue args[2];
	int64_t src[] = {0, 0, 1, 3}, dst[] = {1, 2, 2, 2}, batch[] = {0, 0, 1, 1};

	begin();
	B = dimsym(m, symadd(m, "B", false));
	g = addarg(fn, "g", graphtype(N, E));
	gb = addarg(fn, "gb", batchgraphtype(N, E, B));
	s = ins(Osrc, tt(DI64, 1, E), "s", ARGS(g), NOATTR);
	d = ins(Odst, tt(DI64, 1, E), "d", ARGS(g), NOATTR);
	ind = ins(Oin_degree, tt(DF32, 2, N, 1), "ind", ARGS(g), NOATTR);
	outd = ins(Oout_degree, tt(DF32, 2, N, 1), "outd", ARGS(g), NOATTR);
	ew = ins(Oedge_weight, tt(DF32, 2, E, 1), "ew", ARGS(g), NOATTR);
	b = ins(Obatch, tt(DI64, 1, N), "b", ARGS(gb), NOATTR);
	addret(fn, s);
	addret(fn, d);
	addret(fn, ind);
	addret(fn, outd);
	addret(fn, ew);
	addret(fn, b);
	args[0] = gv(4, 4, src, dst, D(0.5, 1, 2, 3));
	args[1] = gv(4, 4, src, dst, NULL);
	args[1].g.batch = batch;
	args[1].g.ngraph = 2;
	if (go(args)) {
		EXPECTT("src", &run.outs[0], 1, S(4), D(0, 0, 1, 3));
		EXPECTT("dst", &run.outs[1], 1, S(4), D(1, 2, 2, 2));
		EXPECTT("in_degree", &run.outs[2], 2, S(4, 1), D(0, 1, 3, 0));
		EXPECTT("out_degree", &run.outs[3], 2, S(4, 1), D(2, 1, 0, 1));
		EXPECTT("edge_weight", &run.outs[4], 2, S(4, 1), D(0.5, 1, 2, 3));
		EXPECTT("batch", &run.outs[5], 1, S(4), D(0, 0, 1, 1));
		CHECK(run.outs[1].t.dtype == DI64, "dst is i64");
	}
	/* no batch vector: one graph, all zeros */
	args[1] = gv(4, 4, src, dst, NULL);
	if (go(args))
		EXPECTT("batch without vector", &run.outs[5], 1, S(4), D(0, 0, 0, 0));
	/* batch id out of range */
	args[1].g.batch = I(0, 2, 1, 1);
	args[1].g.ngraph = 2;
	GOERR(args, "input 'gb': batch[1] = 2 out of range [0, 2)");
	end();
}

static void
test_gcn_norm(void)
{
	Ref g, n;
	IValue args[1];
	/* node 3 has an out-edge but no in-edge (deg 0: dis masked to 0, not
	 * inf); node 4 is isolated */
	int64_t src[] = {0, 1, 1, 2, 3}, dst[] = {1, 0, 2, 1, 0};
	double w[] = {1, 2, 3, 4, 5}, h = 1 / sqrt(2);
	double d0 = 1 / sqrt(7), d1 = 1 / sqrt(5), d2 = 1 / sqrt(3);

	begin();
	g = addarg(fn, "g", graphtype(N, E));
	n = ins(Ogcn_norm, tt(DF32, 2, E, 1), "n", ARGS(g), NOATTR);
	addret(fn, n);
	/* deg by dst: [2, 2, 1, 0, 0] */
	args[0] = gv(5, 5, src, dst, NULL);
	if (go(args))
		EXPECTT("gcn_norm", &run.outs[0], 2, S(5, 1), D(h * h, h * h, h * 1, 1 * h, 0));
	/* weighted: deg [2+5, 1+4, 3, 0, 0] */
	args[0] = gv(5, 5, src, dst, w);
	if (go(args))
		EXPECTT("gcn_norm weighted", &run.outs[0], 2, S(5, 1),
		        D(d0 * 1 * d1, d1 * 2 * d0, d1 * 3 * d2, d2 * 4 * d1, 0));
	end();
}

static void
test_edge_softmax(void)
{
	Ref g, s, o;
	IValue args[2];
	double sc[] = {1, 0, 2, 0, 3, 1, 5, -1};
	double z0 = exp(1 - 3) + exp(2 - 3) + exp(0) + 1e-16, z1 = 2 * exp(-1) + 1 + 1e-16;

	begin();
	g = addarg(fn, "g", graphtype(N, E));
	s = addarg(fn, "s", tt(DF32, 2, E, 2));
	o = ins(Oedge_softmax, tt(DF32, 2, E, 2), "o", ARGS(g, s), NOATTR);
	addret(fn, o);
	/* edges 0-2 go into node 1, edge 3 into node 2, none into node 0 */
	args[0] = gv(3, 4, I(0, 1, 2, 0), I(1, 1, 1, 2), NULL);
	args[1] = tv(2, S(4, 2), sc);
	if (go(args))
		EXPECTT("edge_softmax", &run.outs[0], 2, S(4, 2),
		        D(exp(-2) / z0, exp(-1) / z1, exp(-1) / z0, exp(-1) / z1,
		          1 / z0, 1 / z1, 1 / (1 + 1e-16), 1 / (1 + 1e-16)));
	end();
}

/* Index ops --------------------------------------------------------------- */

static void
test_gather_scatter(void)
{
	Ref x, idx, gx, mm, ss, sm, sx;
	Dim K, R;
	IValue args[3];
	Loc loc = {"t.gnn", 7, 3};

	begin();
	K = dimsym(m, symadd(m, "K", false));
	R = dimsym(m, symadd(m, "R", false));
	x = addarg(fn, "x", tt(DF32, 2, N, 2));
	idx = addarg(fn, "idx", tt(DI64, 1, K));
	mm = addarg(fn, "mm", tt(DF32, 2, K, 2));
	gx = emit(fn, Ogather, tt(DF32, 2, K, 2), (Ref[]){x, idx}, 2, NULL, 0, "y", loc);
	ss = ins(Oscatter_sum, tt(DF32, 2, R, 2), "ss", ARGS(mm, idx), ATTRS(ADIM("n", R)));
	sm = ins(Oscatter_mean, tt(DF32, 2, R, 2), "sm", ARGS(mm, idx), ATTRS(ADIM("n", R)));
	sx = ins(Oscatter_max, tt(DF32, 2, 4, 2), "sx", ARGS(mm, idx), ATTRS(AINT("n", 4)));
	addret(fn, gx);
	addret(fn, ss);
	addret(fn, sm);
	addret(fn, sx);
	/* R is bound by no input: the scatter results cannot be evaluated */
	args[0] = tv(2, S(3, 2), D(1, 2, 3, 4, 5, 6));
	args[1] = tv(1, S(4), D(2, 0, 2, 1));
	args[2] = tv(2, S(4, 2), D(-1, -2, 3, 4, -5, 6, 7, -8));
	GOERR(args, "%ss: symbol R in the result type f32[R, 2] is not bound by the inputs");
	end();

	begin();
	K = dimsym(m, symadd(m, "K", false));
	x = addarg(fn, "x", tt(DF32, 2, N, 2));
	idx = addarg(fn, "idx", tt(DI64, 1, K));
	mm = addarg(fn, "mm", tt(DF32, 2, K, 2));
	addarg(fn, "rows", tt(DF32, 1, E));
	gx = emit(fn, Ogather, tt(DF32, 2, K, 2), (Ref[]){x, idx}, 2, NULL, 0, "y", loc);
	ss = ins(Oscatter_sum, tt(DF32, 2, E, 2), "ss", ARGS(mm, idx), ATTRS(ADIM("n", E)));
	sm = ins(Oscatter_mean, tt(DF32, 2, E, 2), "sm", ARGS(mm, idx), ATTRS(ADIM("n", E)));
	sx = ins(Oscatter_max, tt(DF32, 2, 4, 2), "sx", ARGS(mm, idx), ATTRS(AINT("n", 4)));
	addret(fn, gx);
	addret(fn, ss);
	addret(fn, sm);
	addret(fn, sx);
	{
		IValue a4[4];

		a4[0] = tv(2, S(3, 2), D(1, 2, 3, 4, 5, 6));
		a4[1] = tv(1, S(4), D(2, 0, 2, 1));
		a4[2] = tv(2, S(4, 2), D(-1, -2, 3, 4, -5, 6, 7, -8));
		a4[3] = tv(1, S(4), D(0, 0, 0, 0));
		if (go(a4)) {
			EXPECTT("gather", &run.outs[0], 2, S(4, 2), D(5, 6, 1, 2, 5, 6, 3, 4));
			/* rows 0 <- msgs 1; row 1 <- msg 3; row 2 <- msgs 0, 2; row 3 empty */
			EXPECTT("scatter_sum", &run.outs[1], 2, S(4, 2), D(3, 4, 7, -8, -6, 4, 0, 0));
			EXPECTT("scatter_mean", &run.outs[2], 2, S(4, 2), D(3, 4, 7, -8, -3, 2, 0, 0));
			EXPECTT("scatter_max", &run.outs[3], 2, S(4, 2), D(3, 4, 7, -8, -1, 6, 0, 0));
		}
		/* gather index out of range: message with location and %name */
		a4[1] = tv(1, S(4), D(2, 3, 0, 1));
		GOERR(a4, "t.gnn:7:3: %y: gather: index 3 at position 1 out of range [0, 3)");
		a4[1] = tv(1, S(4), D(2, 1.5, 0, 1));
		GOERR(a4, "t.gnn:7:3: %y: gather: index 1.5 at position 1 is not an integer");
		/* the same function still runs after errors */
		a4[1] = tv(1, S(4), D(2, 0, 2, 1));
		if (go(a4))
			EXPECTT("gather after errors", &run.outs[0], 2, S(4, 2), D(5, 6, 1, 2, 5, 6, 3, 4));
		/* scatter index beyond n (x has 5 rows so gather passes) */
		a4[0] = tv(2, S(5, 2), D(1, 2, 3, 4, 5, 6, 7, 8, 9, 10));
		a4[1] = tv(1, S(4), D(0, 4, 0, 1));
		GOERR(a4, "%ss: scatter_sum: index 4 at position 1 out of range [0, 4)");
	}
	end();
}

/* Dense ------------------------------------------------------------------- */

static void
test_matmul(void)
{
	Ref a, b, v, a3, b3, r[7];
	IValue args[5];
	int k;

	begin();
	a = addarg(fn, "a", tt(DF32, 2, 2, 3));
	b = addarg(fn, "b", tt(DF32, 2, 3, 2));
	v = addarg(fn, "v", tt(DF32, 1, 3));
	a3 = addarg(fn, "a3", tt(DF32, 3, 2, 2, 3));
	b3 = addarg(fn, "b3", tt(DF32, 3, 2, 3, 2));
	r[0] = ins(Omatmul, tt(DF32, 2, 2, 2), "ab", ARGS(a, b), NOATTR);
	r[1] = ins(Omatmul, tt(DF32, 1, 2), "vb", ARGS(v, b), NOATTR);
	r[2] = ins(Omatmul, tt(DF32, 1, 2), "av", ARGS(a, v), NOATTR);
	r[3] = ins(Omatmul, tt(DF32, 0), "vv", ARGS(v, v), NOATTR);
	r[4] = ins(Omatmul, tt(DF32, 3, 2, 2, 2), "a3b", ARGS(a3, b), NOATTR);
	r[5] = ins(Omatmul, tt(DF32, 3, 2, 2, 2), "ab3", ARGS(a, b3), NOATTR);
	r[6] = ins(Omatmul, tt(DF32, 2, 2, 2), "a3v", ARGS(a3, v), NOATTR);
	for (k = 0; k < 7; k++)
		addret(fn, r[k]);
	args[0] = tv(2, S(2, 3), D(1, 2, 3, 4, 5, 6));
	args[1] = tv(2, S(3, 2), D(7, 8, 9, 10, 11, 12));
	args[2] = tv(1, S(3), D(1, 0, -1));
	args[3] = tv(3, S(2, 2, 3), D(1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12));
	args[4] = tv(3, S(2, 3, 2), D(7, 8, 9, 10, 11, 12, 14, 16, 18, 20, 22, 24));
	if (go(args)) {
		EXPECTT("2-d @ 2-d", &run.outs[0], 2, S(2, 2), D(58, 64, 139, 154));
		EXPECTT("1-d @ 2-d", &run.outs[1], 1, S(2), D(-4, -4));
		EXPECTT("2-d @ 1-d", &run.outs[2], 1, S(2), D(-2, -2));
		EXPECTT("1-d @ 1-d", &run.outs[3], 0, S(0), D(2));
		EXPECTT("batched @ 2-d", &run.outs[4], 3, S(2, 2, 2), D(58, 64, 139, 154, 220, 244, 301, 334));
		EXPECTT("2-d @ batched", &run.outs[5], 3, S(2, 2, 2), D(58, 64, 139, 154, 116, 128, 278, 308));
		/* every row of a3 dotted with (1, 0, -1) */
		EXPECTT("batched @ 1-d", &run.outs[6], 2, S(2, 2), D(-2, -2, -2, -2));
	}
	end();

	/* batch dims broadcast on both sides: [2,1,1,2] @ [3,2,1] -> [2,3,1,1] */
	begin();
	a = addarg(fn, "a", tt(DF32, 4, 2, 1, 1, 2));
	b = addarg(fn, "b", tt(DF32, 3, 3, 2, 1));
	r[0] = ins(Omatmul, tt(DF32, 4, 2, 3, 1, 1), "ab", ARGS(a, b), NOATTR);
	addret(fn, r[0]);
	args[0] = tv(4, S(2, 1, 1, 2), D(1, 2, 3, 4));
	args[1] = tv(3, S(3, 2, 1), D(1, 0, 0, 1, 1, 1));
	if (go(args))
		EXPECTT("broadcast batch", &run.outs[0], 4, S(2, 3, 1, 1), D(1, 2, 3, 3, 4, 7));
	end();
}

static void
test_shape_ops(void)
{
	Ref x, t, rs, a, b, c0, c1;
	double xs[24], want[24];
	int64_t i, j, k;
	IValue args[3];

	for (i = 0; i < 24; i++)
		xs[i] = (double)i;
	/* out[i][j][k] = x[j][k][i] for perm [2, 0, 1] */
	for (i = 0; i < 4; i++)
		for (j = 0; j < 2; j++)
			for (k = 0; k < 3; k++)
				want[(i * 2 + j) * 3 + k] = (double)(j * 12 + k * 4 + i);
	begin();
	x = addarg(fn, "x", tt(DF32, 3, 2, 3, 4));
	a = addarg(fn, "a", tt(DF32, 2, 2, 1));
	b = addarg(fn, "b", tt(DF32, 2, 2, 2));
	t = ins(Otranspose, tt(DF32, 3, 4, 2, 3), "t", ARGS(x), ATTRS(mkattrints(m->arena, "perm", I(2, 0, 1), 3)));
	rs = ins(Oreshape, tt(DF32, 2, 6, 4), "rs", ARGS(x), ATTRS(mkattrdims(m->arena, "shape", (Dim[]){6, 4}, 2)));
	c1 = ins(Oconcat, tt(DF32, 2, 2, 4), "c1", ARGS(a, b, a), ATTRS(AINT("dim", 1)));
	c0 = ins(Oconcat, tt(DF32, 2, 4, 2), "c0", ARGS(b, b), ATTRS(AINT("dim", 0)));
	addret(fn, t);
	addret(fn, rs);
	addret(fn, c1);
	addret(fn, c0);
	args[0] = tv(3, S(2, 3, 4), xs);
	args[1] = tv(2, S(2, 1), D(1, 2));
	args[2] = tv(2, S(2, 2), D(3, 4, 5, 6));
	if (go(args)) {
		EXPECTT("transpose", &run.outs[0], 3, S(4, 2, 3), want);
		EXPECTT("reshape", &run.outs[1], 2, S(6, 4), xs);
		EXPECTT("concat dim 1", &run.outs[2], 2, S(2, 4), D(1, 3, 4, 1, 2, 5, 6, 2));
		EXPECTT("concat dim 0", &run.outs[3], 2, S(4, 2), D(3, 4, 5, 6, 3, 4, 5, 6));
	}
	end();
}

static void
test_cast(void)
{
	Ref x, ci, cb, cf, c32;
	IValue args[1];

	begin();
	x = addarg(fn, "x", tt(DF32, 1, 4));
	ci = ins(Ocast, tt(DI64, 1, 4), "ci", ARGS(x), NOATTR);
	cb = ins(Ocast, tt(DBool, 1, 4), "cb", ARGS(x), NOATTR);
	cf = ins(Ocast, tt(DF64, 1, 4), "cf", ARGS(x), NOATTR);
	c32 = ins(Ocast, tt(DI32, 1, 4), "c32", ARGS(x), NOATTR);
	addret(fn, ci);
	addret(fn, cb);
	addret(fn, cf);
	addret(fn, c32);
	args[0] = tv(1, S(4), D(1.7, -1.7, 0, 2.5));
	if (go(args)) {
		EXPECTT("cast i64", &run.outs[0], 1, S(4), D(1, -1, 0, 2));
		CHECK(!signbit(run.outs[0].t.data[2]), "cast to int gives +0");
		EXPECTT("cast bool", &run.outs[1], 1, S(4), D(1, 1, 0, 1));
		EXPECTT("cast f64", &run.outs[2], 1, S(4), D(1.7, -1.7, 0, 2.5));
		CHECK(run.outs[1].t.dtype == DBool, "cast dtype");
	}
	args[0] = tv(1, S(4), D(1, NAN, 0, 0));
	GOERR(args, "%ci: cast: nan at position 1 does not fit i64");
	args[0] = tv(1, S(4), D(1, 0, 0, 3e9));
	GOERR(args, "%c32: cast: 3000000000 at position 3 does not fit i32");
	args[0] = tv(1, S(4), D(1, 0, 1e19, 0));
	GOERR(args, "%ci: cast: 1e+19 at position 2 does not fit i64");
	end();
}

/* 16-bit values: a value typed bf16 or f16, or marked store = "bf16" /
 * "f16" (--precision), is rounded to nearest even where it is made;
 * a 16-bit input must hold 16-bit values.  Worked by hand: 1 + 2^-8 is
 * a bf16 tie (to 1, even), 1 + 3 * 2^-8 one (to 1 + 2^-6), 1 + 2^-11 a
 * half tie (to 1); 65520 rounds past half's 65504 to inf; 2^-25 is half
 * of half's least subnormal, a tie to +0. */
static void
test_sixteen(void)
{
	Ref x, y, h, s, v;
	IValue args[2];
	Attr st;

	begin();
	x = addarg(fn, "x", tt(DF32, 1, 4));
	y = addarg(fn, "y", tt(DBF16, 1, 2));
	h = ins(Ocast, tt(DF16, 1, 4), "h", ARGS(x), NOATTR);
	st = mkattrstr(m->arena, "store", "bf16");
	s = ins(Oneg, tt(DF32, 1, 4), "s", ARGS(x), 1, &st);
	v = ins(Oneg, tt(DBF16, 1, 2), "v", ARGS(y), NOATTR);
	addret(fn, h);
	addret(fn, s);
	addret(fn, v);
	args[0] = tv(1, S(4), D(1 + 0x1p-8, 1 + 3 * 0x1p-8, 65520, 0x1p-25));
	args[1] = tv(1, S(2), D(1, 0x1p-133));
	if (go(args)) {
		EXPECTT("cast f16", &run.outs[0], 1, S(4), D(1 + 0x1p-8, 1 + 3 * 0x1p-8, INFINITY, 0));
		EXPECTT("store bf16", &run.outs[1], 1, S(4), D(-1, -(1 + 0x1p-6), -65536, -0x1p-25));
		EXPECTT("neg bf16", &run.outs[2], 1, S(2), D(-1, -0x1p-133));
	}
	args[0] = tv(1, S(4), D(1 + 0x1p-11, 0, 0, 0));
	if (go(args))
		EXPECTT("cast f16 tie", &run.outs[0], 1, S(4), D(1, 0, 0, 0));
	args[1] = tv(1, S(2), D(1, 1 + 0x1p-9));
	GOERR(args, "input 'y': element 1, 1.001953125, is not a bf16 value");
	end();
}

static void
test_binary(void)
{
	static const int ops[] = {Oadd, Osub, Omul, Odiv, Opow, Omaximum, Ominimum};
	Ref a, b, c, d, r[7], cd, id, ip, z;
	IValue args[4];
	int k;

	begin();
	a = addarg(fn, "a", tt(DF32, 2, 2, 3));
	b = addarg(fn, "b", tt(DF32, 1, 3));
	c = addarg(fn, "c", tt(DF32, 2, 2, 1));
	d = addarg(fn, "d", tt(DF32, 2, 1, 3));
	for (k = 0; k < 7; k++)
		r[k] = ins(ops[k], tt(DF32, 2, 2, 3), NULL, ARGS(a, b), NOATTR);
	cd = ins(Omul, tt(DF32, 2, 2, 3), "cd", ARGS(c, d), NOATTR);
	z = ins(Oconst, tt(DF32, 0), "z", NOARGS, ATTRS(AFLT("value", 0)));
	z = ins(Odiv, tt(DF32, 2, 2, 1), "cz", ARGS(c, z), NOATTR);
	for (k = 0; k < 7; k++)
		addret(fn, r[k]);
	addret(fn, cd);
	addret(fn, z);
	args[0] = tv(2, S(2, 3), D(1, 2, 3, 4, 5, 6));
	args[1] = tv(1, S(3), D(2, 4, -1));
	args[2] = tv(2, S(2, 1), D(2, -3));
	args[3] = tv(2, S(1, 3), D(1, 2, 3));
	if (go(args)) {
		EXPECTT("add", &run.outs[0], 2, S(2, 3), D(3, 6, 2, 6, 9, 5));
		EXPECTT("sub", &run.outs[1], 2, S(2, 3), D(-1, -2, 4, 2, 1, 7));
		EXPECTT("mul", &run.outs[2], 2, S(2, 3), D(2, 8, -3, 8, 20, -6));
		EXPECTT("div", &run.outs[3], 2, S(2, 3), D(0.5, 0.5, -3, 2, 1.25, -6));
		EXPECTT("pow", &run.outs[4], 2, S(2, 3), D(1, 16, 1.0 / 3, 16, 625, 1.0 / 6));
		EXPECTT("maximum", &run.outs[5], 2, S(2, 3), D(2, 4, 3, 4, 5, 6));
		EXPECTT("minimum", &run.outs[6], 2, S(2, 3), D(1, 2, -1, 2, 4, -1));
		EXPECTT("[2,1] * [1,3]", &run.outs[7], 2, S(2, 3), D(2, 4, 6, -3, -6, -9));
		EXPECTT("float / 0", &run.outs[8], 2, S(2, 1), D(INFINITY, -INFINITY));
		CHECK(run.outs[7].t.dtype == DF32, "binary dtype");
	}
	end();

	/* integer division truncates toward zero; by zero is an error */
	begin();
	a = addarg(fn, "a", tt(DI64, 1, 4));
	b = addarg(fn, "b", tt(DI64, 1, 4));
	id = ins(Odiv, tt(DI64, 1, 4), "q", ARGS(a, b), NOATTR);
	ip = ins(Opow, tt(DI64, 1, 4), "p", ARGS(a, b), NOATTR);
	addret(fn, id);
	addret(fn, ip);
	args[0] = tv(1, S(4), D(7, -7, 7, -7));
	args[1] = tv(1, S(4), D(2, 2, -2, -2));
	GOERR(args, "%p: pow: integer 7 to the negative power -2 at position 2");
	args[1] = tv(1, S(4), D(2, 2, 3, 1));
	if (go(args)) {
		EXPECTT("int div", &run.outs[0], 1, S(4), D(3, -3, 2, -7));
		EXPECTT("int pow", &run.outs[1], 1, S(4), D(49, 49, 343, -7));
	}
	args[1] = tv(1, S(4), D(2, 0, 3, 1));
	GOERR(args, "%q: div: integer division by zero at position 1");
	end();

	/* incompatible runtime shapes behind a (wrongly) typed instruction */
	begin();
	a = addarg(fn, "a", tt(DF32, 1, N));
	b = addarg(fn, "b", tt(DF32, 1, E));
	r[0] = ins(Oadd, tt(DF32, 1, N), "s", ARGS(a, b), NOATTR);
	addret(fn, r[0]);
	args[0] = tv(1, S(3), D(1, 2, 3));
	args[1] = tv(1, S(2), D(1, 2));
	GOERR(args, "%s: add: shapes [3] and [2] cannot be broadcast");
	args[1] = tv(1, S(1), D(10));
	if (go(args))
		EXPECTT("broadcast of a runtime 1", &run.outs[0], 1, S(3), D(11, 12, 13));
	end();
}

static void
test_unary(void)
{
	static const int ops[] = {Oneg, Oabs, Orelu, Oleaky_relu, Oelu, Osigmoid, Otanh, Oexp, Odropout};
	Ref x, y, r[9], l, s, rs;
	IValue args[2];
	double v[4] = {-2, -0.5, 0, 1.5}, w[9][4];
	int k, i;
	Attr at[9][1];
	int nat[9] = {0};

	begin();
	x = addarg(fn, "x", tt(DF32, 1, 4));
	y = addarg(fn, "y", tt(DF32, 1, 3));
	at[3][0] = AFLT("slope", 0.1), nat[3] = 1;
	at[4][0] = AFLT("alpha", 2), nat[4] = 1;
	at[8][0] = AFLT("p", 0.5), nat[8] = 1;
	for (k = 0; k < 9; k++)
		r[k] = ins(ops[k], tt(DF32, 1, 4), NULL, ARGS(x), nat[k], at[k]);
	l = ins(Olog, tt(DF32, 1, 3), "l", ARGS(y), NOATTR);
	s = ins(Osqrt, tt(DF32, 1, 3), "s", ARGS(y), NOATTR);
	rs = ins(Orsqrt, tt(DF32, 1, 3), "rs", ARGS(y), NOATTR);
	for (k = 0; k < 9; k++)
		addret(fn, r[k]);
	addret(fn, l);
	addret(fn, s);
	addret(fn, rs);
	for (i = 0; i < 4; i++) {
		w[0][i] = -v[i];
		w[1][i] = fabs(v[i]);
		w[2][i] = v[i] > 0 ? v[i] : 0;
		w[3][i] = v[i] > 0 ? v[i] : 0.1 * v[i];
		w[4][i] = v[i] > 0 ? v[i] : 2 * (exp(v[i]) - 1);
		w[5][i] = 1 / (1 + exp(-v[i]));
		w[6][i] = tanh(v[i]);
		w[7][i] = exp(v[i]);
		w[8][i] = v[i];
	}
	args[0] = tv(1, S(4), v);
	args[1] = tv(1, S(3), D(0.25, 1, 4));
	if (go(args)) {
		for (k = 0; k < 9; k++)
			EXPECTT(opinfo[ops[k]].name, &run.outs[k], 1, S(4), w[k]);
		EXPECTT("log", &run.outs[9], 1, S(3), D(log(0.25), 0, log(4)));
		EXPECTT("sqrt", &run.outs[10], 1, S(3), D(0.5, 1, 2));
		EXPECTT("rsqrt", &run.outs[11], 1, S(3), D(2, 1, 0.5));
	}
	end();
}

static void
test_reduce_norm(void)
{
	Ref x, e, r[8];
	IValue args[2];
	double z0 = exp(-2) + exp(-1) + 1;
	int k;

	begin();
	x = addarg(fn, "x", tt(DF32, 2, 2, 3));
	e = addarg(fn, "e", tt(DF32, 2, 2, N));
	r[0] = ins(Osum, tt(DF32, 1, 3), "s0", ARGS(x), ATTRS(AINT("dim", 0)));
	r[1] = ins(Osum, tt(DF32, 2, 2, 1), "s1", ARGS(x), ATTRS(AINT("dim", 1), mkattrbool(m->arena, "keepdim", true)));
	r[2] = ins(Omean, tt(DF32, 1, 2), "m1", ARGS(x), ATTRS(AINT("dim", 1)));
	r[3] = ins(Omax, tt(DF32, 1, 3), "x0", ARGS(x), ATTRS(AINT("dim", 0)));
	r[4] = ins(Omean, tt(DF32, 1, 2), "me", ARGS(e), ATTRS(AINT("dim", 1)));
	r[5] = ins(Osoftmax, tt(DF32, 2, 2, 3), "sm", ARGS(x), ATTRS(AINT("dim", 1)));
	r[6] = ins(Olog_softmax, tt(DF32, 2, 2, 3), "lsm", ARGS(x), ATTRS(AINT("dim", 1)));
	r[7] = ins(Ol2_normalize, tt(DF32, 2, 2, 3), "l2", ARGS(x), ATTRS(AINT("dim", 0)));
	for (k = 0; k < 8; k++)
		addret(fn, r[k]);
	/* second row all equal; l2 over dim 0 with a zero column */
	args[0] = tv(2, S(2, 3), D(1, 2, 3, 0, 0, 0));
	args[1] = tv(2, S(2, 0), NULL);
	if (go(args)) {
		EXPECTT("sum dim 0", &run.outs[0], 1, S(3), D(1, 2, 3));
		EXPECTT("sum keepdim", &run.outs[1], 2, S(2, 1), D(6, 0));
		EXPECTT("mean", &run.outs[2], 1, S(2), D(2, 0));
		EXPECTT("max", &run.outs[3], 1, S(3), D(1, 2, 3));
		EXPECTT("mean over empty", &run.outs[4], 1, S(2), D(NAN, NAN));
		EXPECTT("softmax", &run.outs[5], 2, S(2, 3),
		        D(exp(-2) / z0, exp(-1) / z0, 1 / z0, 1.0 / 3, 1.0 / 3, 1.0 / 3));
		EXPECTT("log_softmax", &run.outs[6], 2, S(2, 3),
		        D(-2 - log(z0), -1 - log(z0), -log(z0), -log(3), -log(3), -log(3)));
		EXPECTT("l2_normalize", &run.outs[7], 2, S(2, 3), D(1, 1, 1, 0, 0, 0));
	}
	args[0] = tv(2, S(2, 3), D(3, -1, 0, 4, -7, 0));
	if (go(args)) {
		EXPECTT("max negative", &run.outs[3], 1, S(3), D(4, -1, 0));
		EXPECTT("l2_normalize 3-4-5", &run.outs[7], 2, S(2, 3), D(0.6, -1 / sqrt(50), 0, 0.8, -7 / sqrt(50), 0));
	}
	end();

	begin();
	e = addarg(fn, "e", tt(DF32, 2, 2, N));
	r[0] = ins(Omax, tt(DF32, 1, 2), "mx", ARGS(e), ATTRS(AINT("dim", 1)));
	addret(fn, r[0]);
	args[0] = tv(2, S(2, 0), NULL);
	GOERR(args, "%mx: max: reduction over the empty dim 1");
	end();
}

/* Inputs ------------------------------------------------------------------ */

static void
test_inputs(void)
{
	Ref g, x, y, z, s;
	Dim M;
	bool ok = true;
	IValue args[4];
	int64_t src[] = {0, 1, 2}, dst[] = {1, 2, 3};

	begin();
	M = dimsym(m, symadd(m, "M", false));
	y = addarg(fn, "y", tt(DF32, 1, dimmul(m, N, M, &ok)));
	g = addarg(fn, "g", graphtype(N, E));
	x = addarg(fn, "x", tt(DF32, 2, N, 3));
	z = addarg(fn, "z", tt(DF32, 1, M));
	s = ins(Osum, tt(DF32, 0), "s", ARGS(y), ATTRS(AINT("dim", 0)));
	addret(fn, s);
	(void)x, (void)g, (void)z;
	args[0] = tv(1, S(8), D(1, 2, 3, 4, 5, 6, 7, 8));
	args[1] = gv(4, 3, src, dst, NULL);
	args[2] = tv(2, S(4, 3), D(0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0));
	args[3] = tv(1, S(2), D(0, 0));
	if (go(args))
		EXPECTT("N*M bound late", &run.outs[0], 0, S(0), D(36));
	args[2] = tv(2, S(5, 3), D(0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0));
	GOERR(args, "input 'x': dim 0 is 5 but N = 4 from input 'g'");
	args[2] = tv(2, S(4, 2), D(0, 0, 0, 0, 0, 0, 0, 0));
	GOERR(args, "input 'x': dim 1 is 2, expected 3");
	args[2] = tv(1, S(4), D(0, 0, 0, 0));
	GOERR(args, "input 'x': expected f32[N, 3], got rank 1");
	args[2] = tv(2, S(4, 3), D(0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0));
	args[2].t.dtype = DI64;
	GOERR(args, "input 'x': expected f32[N, 3], got dtype i64");
	args[2].t.dtype = DF32;
	args[0] = tv(1, S(7), D(1, 2, 3, 4, 5, 6, 7));
	GOERR(args, "input 'y': dim 0 is 7 but N*M = 8 (N from input 'g', M from input 'z')");
	args[0] = tv(1, S(8), D(1, 2, 3, 4, 5, 6, 7, 8));
	args[1] = gv(4, 3, src, I(1, 4, 3), NULL);
	GOERR(args, "input 'g': edge 1: dst 4 out of range [0, 4)");
	args[1] = tv(1, S(1), D(0));
	GOERR(args, "input 'g': expected graph[N, E], got a tensor");
	/* and after all those, the good inputs still run */
	args[1] = gv(4, 3, src, dst, NULL);
	if (go(args))
		EXPECTT("after input errors", &run.outs[0], 0, S(0), D(36));
	end();

	/* a symbol no input fixes */
	begin();
	M = dimsym(m, symadd(m, "M", false));
	y = addarg(fn, "y", tt(DF32, 1, dimmul(m, N, M, &ok)));
	addret(fn, y);
	args[0] = tv(1, S(8), D(1, 2, 3, 4, 5, 6, 7, 8));
	GOERR(args, "input 'y': dim 0 (N*M) cannot be bound");
	end();

	/* 2*N + 1 cannot be even */
	begin();
	y = addarg(fn, "y", tt(DF32, 1, dimadd(m, dimmul(m, 2, N, &ok), 1, &ok)));
	addret(fn, y);
	args[0] = tv(1, S(8), D(1, 2, 3, 4, 5, 6, 7, 8));
	GOERR(args, "input 'y': dim 0 is 8, which no value of N makes equal to 2*N + 1");
	args[0] = tv(1, S(7), D(1, 2, 3, 4, 5, 6, 7));
	if (go(args))
		EXPECTT("2*N + 1", &run.outs[0], 1, S(7), D(1, 2, 3, 4, 5, 6, 7));
	end();
	CHECK(ok, "dim arithmetic");
}

/* A typing bug (declared shape != computed) is reported, not trusted. */
static void
test_internal_mismatch(void)
{
	Ref a, r;
	IValue args[1];

	begin();
	a = addarg(fn, "a", tt(DF32, 2, 2, 3));
	r = ins(Osum, tt(DF32, 1, 2), "s", ARGS(a), ATTRS(AINT("dim", 0)));
	addret(fn, r);
	args[0] = tv(2, S(2, 3), D(1, 2, 3, 4, 5, 6));
	GOERR(args, "%s: internal: sum computed shape [3], but its type f32[2] is [2]");
	end();

	begin();
	a = addarg(fn, "g", graphtype(N, E));
	r = ins(Osrc, graphtype(N, E), "s", ARGS(a), NOATTR);
	addret(fn, r);
	args[0] = gv(2, 1, I(0), I(1), NULL);
	GOERR(args, "%s: internal: src computed a tensor, but its type is graph[N, E]");
	end();
}

/* Cora-sized two-layer GCN ------------------------------------------------ */

static uint64_t rng = 88172645463325252u;

static double
rnd(void)
{
	rng ^= rng << 13;
	rng ^= rng >> 7;
	rng ^= rng << 17;
	return (double)(rng >> 11) / 9007199254740992.0;
}

/* One GCNConv layer in the IR: lin (x @ W^T), gcn_norm messages, sum, bias. */
static Ref
gcnconv(Ref g1, Ref s, Ref d, Ref norm, Ref x, Dim ein, Dim eout, Dim EN, const char *w, const char *bias)
{
	Ref p, t, h, msg, mn, agg, b;

	p = ins(Oparam, tt(DF32, 2, eout, ein), NULL, NOARGS, ATTRS(mkattrstr(m->arena, "name", w)));
	t = ins(Otranspose, tt(DF32, 2, ein, eout), NULL, ARGS(p), ATTRS(mkattrints(m->arena, "perm", I(1, 0), 2)));
	h = ins(Omatmul, tt(DF32, 2, N, eout), NULL, ARGS(x, t), NOATTR);
	msg = ins(Ogather, tt(DF32, 2, EN, eout), NULL, ARGS(h, s), NOATTR);
	mn = ins(Omul, tt(DF32, 2, EN, eout), NULL, ARGS(msg, norm), NOATTR);
	agg = ins(Oscatter_sum, tt(DF32, 2, N, eout), NULL, ARGS(mn, d), ATTRS(ADIM("n", N)));
	b = ins(Oparam, tt(DF32, 1, eout), NULL, NOARGS, ATTRS(mkattrstr(m->arena, "name", bias)));
	(void)g1;
	return ins(Oadd, tt(DF32, 2, N, eout), NULL, ARGS(agg, b), NOATTR);
}

/* The same model in plain loops, to cross-check the composition. */
static void
gcnref(int64_t n, int64_t ne, const int64_t *src, const int64_t *dst, const double *x,
       int64_t fi, int64_t fo, const double *W, const double *b, double *out)
{
	double *deg = calloc(n, sizeof *deg), *h = calloc(n * fo, sizeof *h);
	int64_t e, i, j, k;

	/* add_remaining_self_loops on an unweighted graph: loops replace loops */
	for (e = 0; e < ne; e++)
		if (src[e] != dst[e])
			deg[dst[e]] += 1;
	for (i = 0; i < n; i++)
		deg[i] = 1 / sqrt(deg[i] + 1);
	for (i = 0; i < n; i++)
		for (j = 0; j < fo; j++)
			for (k = 0; k < fi; k++)
				h[i * fo + j] += x[i * fi + k] * W[j * fi + k];
	for (i = 0; i < n * fo; i++)
		out[i] = 0;
	for (e = 0; e < ne; e++)
		if (src[e] != dst[e])
			for (j = 0; j < fo; j++)
				out[dst[e] * fo + j] += deg[src[e]] * deg[dst[e]] * h[src[e] * fo + j];
	for (i = 0; i < n; i++)
		for (j = 0; j < fo; j++)
			out[i * fo + j] += deg[i] * deg[i] * h[i * fo + j] + b[j];
	free(deg);
	free(h);
}

static void
test_cora(void)
{
	enum { NN = 2708, NE = 10556, F = 1433, H = 16, C = 7 };
	Ref g, x, g1, s, d, norm, h, o;
	Dim E1, EN;
	bool ok = true;
	int64_t *src = malloc(NE * sizeof *src), *dst = malloc(NE * sizeof *dst), e, i, j;
	double *xs = calloc((size_t)NN * F, sizeof *xs), *w1 = malloc(H * F * sizeof *w1);
	double *b1 = malloc(H * sizeof *b1), *w2 = malloc(C * H * sizeof *w2), *b2 = malloc(C * sizeof *b2);
	double *r1 = malloc(NN * H * sizeof *r1), *r2 = malloc(NN * C * sizeof *r2), mx, z, worst = 0, sum;
	Par ps[4] = {{"conv1.lin.weight", 2, {H, F}, w1}, {"conv1.bias", 1, {H}, b1},
	             {"conv2.lin.weight", 2, {C, H}, w2}, {"conv2.bias", 1, {C}, b2}};
	IValue args[2];
	clock_t t0;

	for (e = 0; e < NE; e++) {
		src[e] = (int64_t)(rnd() * NN);
		dst[e] = e % 50 == 0 ? src[e] : (int64_t)(rnd() * NN);  /* some self-loops */
	}
	for (i = 0; i < (int64_t)NN * F; i++)
		xs[i] = rnd() < 0.013 ? 1 : 0;  /* Cora's bag-of-words density */
	for (i = 0; i < H * F; i++)
		w1[i] = rnd() - 0.5;
	for (i = 0; i < H; i++)
		b1[i] = rnd() - 0.5;
	for (i = 0; i < C * H; i++)
		w2[i] = rnd() - 0.5;
	for (i = 0; i < C; i++)
		b2[i] = rnd() - 0.5;
	params = ps;
	nparams = 4;

	begin();
	E1 = dimsym(m, symfresh(m, "E"));
	EN = dimadd(m, E1, N, &ok);
	g = addarg(fn, "g", graphtype(N, E));
	x = addarg(fn, "x", tt(DF32, 2, N, F));
	g1 = ins(Oadd_remaining_self_loops, graphtype(N, EN), "g1", ARGS(g), NOATTR);
	s = ins(Osrc, tt(DI64, 1, EN), "s", ARGS(g1), NOATTR);
	d = ins(Odst, tt(DI64, 1, EN), "d", ARGS(g1), NOATTR);
	norm = ins(Ogcn_norm, tt(DF32, 2, EN, 1), "norm", ARGS(g1), NOATTR);
	h = gcnconv(g1, s, d, norm, x, F, H, EN, "conv1.lin.weight", "conv1.bias");
	h = ins(Orelu, tt(DF32, 2, N, H), "h", ARGS(h), NOATTR);
	h = ins(Odropout, tt(DF32, 2, N, H), "h", ARGS(h), ATTRS(AFLT("p", 0.5)));
	h = gcnconv(g1, s, d, norm, h, H, C, EN, "conv2.lin.weight", "conv2.bias");
	o = ins(Olog_softmax, tt(DF32, 2, N, C), "out", ARGS(h), ATTRS(AINT("dim", 1)));
	addret(fn, o);
	args[0] = gv(NN, NE, src, dst, NULL);
	args[1] = tv(2, S(NN, F), xs);
	t0 = clock();
	if (go(args)) {
		printf("cora-sized GCN: %.3f s\n", (double)(clock() - t0) / CLOCKS_PER_SEC);
		gcnref(NN, NE, src, dst, xs, F, H, w1, b1, r1);
		for (i = 0; i < NN * H; i++)
			r1[i] = r1[i] > 0 ? r1[i] : 0;
		gcnref(NN, NE, src, dst, r1, H, C, w2, b2, r2);
		for (i = 0; i < NN; i++) {
			mx = -INFINITY;
			for (j = 0; j < C; j++)
				mx = fmax(mx, r2[i * C + j]);
			for (z = 0, j = 0; j < C; j++)
				z += exp(r2[i * C + j] - mx);
			for (sum = 0, j = 0; j < C; j++) {
				worst = fmax(worst, fabs(run.outs[0].t.data[i * C + j] - (r2[i * C + j] - mx - log(z))));
				sum += exp(run.outs[0].t.data[i * C + j]);
			}
			worst = fmax(worst, fabs(sum - 1));
		}
		CHECK(worst < 1e-9, "cora GCN differs from the plain-loop model by %g", worst);
	}
	end();
	params = NULL;
	nparams = 0;
	free(src), free(dst), free(xs), free(w1), free(b1), free(w2), free(b2), free(r1), free(r2);
	CHECK(ok, "dim arithmetic");
}

int
main(void)
{
	test_const_param();
	test_self_loops();
	test_graph_tensors();
	test_gcn_norm();
	test_edge_softmax();
	test_gather_scatter();
	test_matmul();
	test_shape_ops();
	test_cast();
	test_sixteen();
	test_binary();
	test_unary();
	test_reduce_norm();
	test_inputs();
	test_internal_mismatch();
	test_cora();
	printf("%d passed, %d failed\n", npass, nfail);
	return nfail ? 1 : 0;
}
