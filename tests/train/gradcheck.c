/*
 * gradcheck: autodiff's gradients against central finite differences,
 * both in float64 through the reference interpreter.
 *
 *	gradcheck FILE.gnn [--nodes N] [--edges E] [--seed S] [--tol T] [-O2]
 *
 * Every model of the file gets its training step (its train item, else
 * nll of its output).  On a random graph (N nodes, E edges with repeats,
 * self loops and a node with no edges), random float inputs in [-1, 1),
 * class labels in range and a random bool mask, and random params (so
 * that no ReLU sits exactly at its kink and ties are unlikely), each
 * gradient element d is compared with (L(p + h) - L(p - h)) / 2h of the
 * loss itself: |d - fd| <= tol * max(1, |d|, |fd|) (default 1e-6).
 * Prints the worst error per param; exit 1 when any element fails.
 * A param of more than --max-elements (24) elements is checked at that
 * many elements spread over it.
 * With -O2 the step is optimized first (the passes must keep it exact).
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../../frontend/frontend.h"
#include "../../ir/interp.h"
#include "../../passes/passes.h"

static uint64_t rng = 88172645463325252ull;
static int64_t maxel = 24;   /* elements checked per param */

static double
urand(void)   /* [0, 1) */
{
	rng ^= rng << 13;
	rng ^= rng >> 7;
	rng ^= rng << 17;
	return (double)(rng >> 11) * (1.0 / 9007199254740992.0);
}

typedef struct Params {
	int n;
	const char **name;
	ITensor *t;
} Params;

static bool
getparam(void *ud, const char *name, ITensor *t)
{
	Params *p = ud;
	int64_t k, n = 1;
	int i, r;

	for (i = 0; i < p->n; i++)
		if (strcmp(p->name[i], name) == 0)
			break;
	if (i == p->n)
		return false;
	*t = p->t[i];
	for (r = 0; r < t->rank; r++)
		n *= t->shape[r];
	t->data = malloc((n + 1) * sizeof *t->data);
	for (k = 0; k < n; k++)
		t->data[k] = p->t[i].data[k];
	return true;
}

static int64_t
numel(const ITensor *t)
{
	int64_t n = 1;
	int r;

	for (r = 0; r < t->rank; r++)
		n *= t->shape[r];
	return n;
}

static double
lossof(IRun *run)
{
	double l;

	if (interp(run) != 0) {
		fprintf(stderr, "gradcheck: %s\n", run->err);
		exit(2);
	}
	l = run->outs[0].t.data[0];
	interpfree(run);
	return l;
}

/* every dim of t under the bound sizes (symbols: N nodes, E edges, any
 * other size symbol taken as 3) */
static void
shapeof(Mod *m, Type t, int64_t nn, int64_t ne, ITensor *x)
{
	int64_t sv[256];
	int s, r;

	for (s = 0; s < m->nsym && s < 256; s++)
		sv[s] = !strcmp(m->sym[s].name, "N") ? nn : !strcmp(m->sym[s].name, "E") ? ne : 3;
	x->dtype = t.dtype;
	x->rank = t.rank;
	for (r = 0; r < t.rank; r++)
		x->shape[r] = dimeval(m, t.dim[r], sv);
}

static int
checkstep(Mod *m, Fn *step, int64_t nn, int64_t ne, double tol)
{
	IValue *args = calloc(step->narg + 1, sizeof *args);
	Params p = {0};
	IRun run = {.fn = step, .args = args, .param = getparam, .ud = &p};
	int i, k, bad = 0, nclass = 2;
	int64_t e, x;
	Fn *model;

	for (model = m->fn; model && strcmp(model->name, step->train->model) != 0; model = model->link)
		;
	if (model && model->nret && model->val[model->ret[0]].type.rank == 2 &&
	    dimisconst(model->val[model->ret[0]].type.dim[1]))
		nclass = (int)dimconstval(model->val[model->ret[0]].type.dim[1]);
	for (i = 0; i < step->narg; i++) {
		Type t = step->val[step->arg[i]].type;
		IValue *a = &args[i];
		a->kind = t.kind;
		if (t.kind == TGraph) {
			a->g.nnode = nn;
			a->g.nedge = ne;
			a->g.src = malloc((ne + 1) * sizeof *a->g.src);
			a->g.dst = malloc((ne + 1) * sizeof *a->g.dst);
			for (e = 0; e < ne; e++) {
				/* node nn - 1 has no edges; edge 0 is a self loop, edge 1 repeats it */
				a->g.src[e] = e < 2 ? 0 : (int64_t)(urand() * (nn - 1));
				a->g.dst[e] = e < 2 ? 0 : (int64_t)(urand() * (nn - 1));
			}
			continue;
		}
		shapeof(m, t, nn, ne, &a->t);
		a->t.data = malloc((numel(&a->t) + 1) * sizeof(double));
		for (x = 0; x < numel(&a->t); x++)
			a->t.data[x] = i == step->narg - 1 ? (x == 0 ? 7 : 3) :
			               dtypeisfloat(t.dtype) ? 2 * urand() - 1 :
			               t.dtype == DBool ? (urand() < 0.6 || x == 0) :
			               (double)(int64_t)(urand() * nclass);
	}
	for (i = 0; i < step->nins; i++)
		p.n += step->ins[i].op == Oparam;
	p.name = calloc(p.n + 1, sizeof *p.name);
	p.t = calloc(p.n + 1, sizeof *p.t);
	for (i = 0, k = 0; i < step->nins; i++) {
		Ins *in = &step->ins[i];
		if (in->op != Oparam)
			continue;
		p.name[k] = attrstr(in, "name");
		shapeof(m, step->val[in->to].type, nn, ne, &p.t[k]);
		p.t[k].data = malloc((numel(&p.t[k]) + 1) * sizeof(double));
		for (x = 0; x < numel(&p.t[k]); x++)
			p.t[k].data[x] = attrint(in, "buffer", 0) && strstr(p.name[k], "running_var") ? 0.5 + urand() :
			                 dtypeisfloat(p.t[k].dtype) ? urand() - 0.5 : 0;
		k++;
	}
	if (interp(&run) != 0) {
		fprintf(stderr, "gradcheck: %s\n", run.err);
		exit(2);
	}
	{
		IValue *outs = run.outs;
		const TrainInfo *ti = step->train;
		run.outs = NULL;
		printf("%s: loss %.9g\n", step->name, outs[0].t.data[0]);
		for (k = 0; k < ti->nparam; k++) {
			int pi;
			double worst = 0, wd = 0, wf = 0;
			int64_t we = -1;
			for (pi = 0; pi < p.n && strcmp(p.name[pi], ti->param[k]) != 0; pi++)
				;
			for (int64_t c = 0; c < numel(&p.t[pi]) && c < maxel; c++) {
				/* every element of a small param, else maxel spread evenly */
				int64_t x = numel(&p.t[pi]) <= maxel ? c : c * (numel(&p.t[pi]) - 1) / (maxel - 1);
				double v = p.t[pi].data[x], h = 1e-6 * fmax(1, fabs(v)), lp, lm, fd, d, err;
				p.t[pi].data[x] = v + h;
				lp = lossof(&run);
				p.t[pi].data[x] = v - h;
				lm = lossof(&run);
				p.t[pi].data[x] = v;
				fd = (lp - lm) / (2 * h);
				d = outs[1 + k].t.data[x];
				err = fabs(d - fd) / fmax(1, fmax(fabs(d), fabs(fd)));
				if (err > worst || we < 0)
					worst = err, we = x, wd = d, wf = fd;
			}
			printf("  %-32s %s worst %.2e at %lld (autodiff %.9g, differences %.9g)\n", ti->param[k],
			       worst <= tol ? "ok  " : "FAIL", worst, (long long)we, wd, wf);
			bad += worst > tol;
		}
		for (k = 0; k < step->nret; k++)
			ivaluefree(&outs[k]);
		free(outs);
	}
	for (i = 0; i < step->narg; i++)
		ivaluefree(&args[i]);
	for (k = 0; k < p.n; k++)
		free(p.t[k].data);
	free(p.name);
	free(p.t);
	free(args);
	return bad;
}

int
main(int argc, char **argv)
{
	FrontOpts fo = {.train = true};
	PassOpts po = {.olevel = 2};
	const char *path = NULL;
	int64_t nn = 7, ne = 20;
	double tol = 1e-6;
	bool opt = false;
	int i, bad = 0, nstep = 0;
	Mod *m;
	Fn *fn;

	for (i = 1; i < argc; i++) {
		if (!strcmp(argv[i], "--nodes") && i + 1 < argc)
			nn = atoll(argv[++i]);
		else if (!strcmp(argv[i], "--edges") && i + 1 < argc)
			ne = atoll(argv[++i]);
		else if (!strcmp(argv[i], "--seed") && i + 1 < argc)
			rng ^= (uint64_t)atoll(argv[++i]) * 0x9E3779B97F4A7C15ull;
		else if (!strcmp(argv[i], "--tol") && i + 1 < argc)
			tol = atof(argv[++i]);
		else if (!strcmp(argv[i], "--max-elements") && i + 1 < argc)
			maxel = atoll(argv[++i]) < 2 ? 2 : atoll(argv[i]);
		else if (!strcmp(argv[i], "-O2"))
			opt = true;
		else
			path = argv[i];
	}
	if (!path || nn < 2 || ne < 2) {
		fprintf(stderr, "usage: gradcheck FILE.gnn [--nodes N>=2] [--edges E>=2] [--seed S] [--tol T] [-O2]\n");
		return 2;
	}
	if (!(m = compilefile(path, &fo)))
		return 2;
	if (opt && runpasses(m, &po) != 0)
		return 2;
	for (fn = m->fn; fn; fn = fn->link)
		if (fn->train) {
			bad += checkstep(m, fn, nn, ne, tol);
			nstep++;
		}
	if (!nstep) {
		fprintf(stderr, "gradcheck: %s has no model\n", path);
		return 2;
	}
	printf("%s\n", bad ? "FAILED" : "all gradients ok");
	freemod(m);
	return bad ? 1 : 0;
}
