/*
 * Reverse-mode automatic differentiation on the IR.
 *
 * autodiff() extends a function that computes a scalar loss with the
 * loss's gradient with respect to chosen values (the trainable params):
 * the adjoint of every value the loss depends on is built, last
 * instruction first, out of the same ops the forward uses, so the
 * backward is ordinary IR that prints, verifies and goes through the same
 * passes (fusion, hoisting, memory planning) and both code generators.
 *
 * Each op's vector-Jacobian product is one case of vjp().  Conventions
 * where the derivative is not unique follow torch: relu'(0) = 0, a tie
 * of maximum/minimum splits the gradient in halves, a tie of max and
 * scatter_max shares it evenly among the maximal elements (torch's amax
 * and scatter_reduce("amax")).  Graph ops and integer values carry no
 * gradient.  An op with no rule here is a user error at its location.
 *
 * GNNCC_VJP_MUTATE=OP in the environment scales every contribution of
 * OP's rule by 1.01: a deliberately wrong VJP, with which the
 * finite-difference tests (tests/train) must fail.
 */
#include <stdlib.h>
#include <string.h>

#include "passes.h"

typedef struct AD {
	Fn *fn;
	Ref *adj;         /* per forward value: its adjoint so far, or RNone */
	bool *need;       /* per forward value: the loss's gradient reaches a wrt through it */
	int nval;         /* forward values (adj and need cover these) */
	Loc loc;          /* of the instruction being differentiated */
	int err;
	const char *mutate;   /* GNNCC_VJP_MUTATE */
	bool wrong;           /* the rule being applied is the mutated one */
} AD;

static Ref
mk(AD *d, int op, const Ref *arg, int narg, const Attr *at, int nat, const Type *decl)
{
	Ref r = buildop(d->fn, op, arg, narg, at, nat, decl, "grad", d->loc);

	if (r == RNone)
		die("autodiff: ill-typed %s", opinfo[op].name);
	return r;
}

static Ref
un(AD *d, int op, Ref x)
{
	return mk(d, op, &x, 1, NULL, 0, NULL);
}

static Ref
bin(AD *d, int op, Ref a, Ref b)
{
	Ref x[2] = {a, b};

	return mk(d, op, x, 2, NULL, 0, NULL);
}

static Type
tyof(AD *d, Ref r)
{
	return valtype(d->fn, r);
}

/* a tensor of type t filled with v (a scalar when t has rank 0) */
static Ref
full(AD *d, Type t, double v)
{
	Attr a = mkattrfloat(d->fn->mod->arena, "value", v);

	return mk(d, Oconst, NULL, 0, &a, 1, &t);
}

static Ref
scalar(AD *d, Ref like, double v)
{
	Type t = tensortype(tyof(d, like).dtype, 0, NULL);

	return full(d, t, v);
}

static Ref
reduce(AD *d, int op, Ref x, int dim, bool keep)
{
	Arena *a = d->fn->mod->arena;
	Attr at[2] = {mkattrint(a, "dim", dim), mkattrbool(a, "keepdim", keep)};

	return mk(d, op, &x, 1, at, 2, NULL);
}

static Ref
reshapeto(AD *d, Ref x, Type t)
{
	Attr a;

	if (typeeq(tyof(d, x), t))
		return x;
	a = mkattrdims(d->fn->mod->arena, "shape", t.dim, t.rank);
	return mk(d, Oreshape, &x, 1, &a, 1, NULL);
}

/* g, of a broadcast result's shape, summed down to t's shape */
static Ref
unbroadcast(AD *d, Ref g, Type t)
{
	Type gt = tyof(d, g);
	int k;

	while (gt.rank > t.rank) {
		g = reduce(d, Osum, g, 0, false);
		gt = tyof(d, g);
	}
	for (k = 0; k < t.rank; k++)
		if (t.dim[k] == 1 && gt.dim[k] != 1)
			g = reduce(d, Osum, g, k, true);
	return reshapeto(d, g, t);
}

/* g (the adjoint of a reduction of x over dim) spread back over x's shape */
static Ref
spread(AD *d, Ref g, Type xt, int dim, bool keep)
{
	Type kt = xt;

	kt.dim[dim] = 1;
	if (!keep)
		g = reshapeto(d, g, kt);
	return bin(d, Oadd, full(d, xt, 0), g);
}

static void
accum(AD *d, Ref x, Ref g)
{
	if (x < 0 || x >= d->nval || !d->need[x] || g == RNone)
		return;
	if (d->wrong)
		g = bin(d, Omul, g, scalar(d, g, 1.01));
	d->adj[x] = d->adj[x] == RNone ? g : bin(d, Oadd, d->adj[x], g);
}

/* a mask that is 1 where a > b (gt) */
static Ref
gtmask(AD *d, Ref a, Ref b)
{
	return bin(d, Ogt, a, b);
}

static void
vjp(AD *d, int i)
{
	Ins in = d->fn->ins[i];           /* a copy: emitting grows fn->ins */
	Arena *ar = d->fn->mod->arena;
	Ref g = d->adj[in.to], y = in.to, x = in.narg > 0 ? in.arg[0] : RNone, b = in.narg > 1 ? in.arg[1] : RNone;
	Type xt = x != RNone ? tyof(d, x) : (Type){0}, bt = b != RNone ? tyof(d, b) : (Type){0};
	Ref t, u;
	int k;

	d->loc = in.loc;
	d->wrong = d->mutate && strcmp(d->mutate, opinfo[in.op].name) == 0;
	switch (in.op) {
	case Oadd:
		accum(d, x, unbroadcast(d, g, xt));
		accum(d, b, unbroadcast(d, g, bt));
		return;
	case Osub:
		accum(d, x, unbroadcast(d, g, xt));
		if (d->need[b])
			accum(d, b, unbroadcast(d, un(d, Oneg, g), bt));
		return;
	case Omul:
		if (d->need[x])
			accum(d, x, unbroadcast(d, bin(d, Omul, g, b), xt));
		if (d->need[b])
			accum(d, b, unbroadcast(d, bin(d, Omul, g, x), bt));
		return;
	case Odiv:
		if (d->need[x])
			accum(d, x, unbroadcast(d, bin(d, Odiv, g, b), xt));
		if (d->need[b])   /* -g a / b^2 = -g y / b */
			accum(d, b, unbroadcast(d, un(d, Oneg, bin(d, Omul, g, bin(d, Odiv, y, b))), bt));
		return;
	case Opow:
		if (d->need[x])   /* g b a^(b-1) */
			accum(d, x, unbroadcast(d, bin(d, Omul, g, bin(d, Omul, b,
				bin(d, Opow, x, bin(d, Osub, b, scalar(d, b, 1))))), xt));
		if (d->need[b])   /* g y log a */
			accum(d, b, unbroadcast(d, bin(d, Omul, g, bin(d, Omul, y, un(d, Olog, x))), bt));
		return;
	case Omaximum:
	case Ominimum: {
		/* torch: the larger (smaller) side takes g, a tie halves it */
		Ref half = bin(d, Omul, bin(d, Oeq, x, b), scalar(d, x, 0.5));
		Ref ma = in.op == Omaximum ? gtmask(d, x, b) : gtmask(d, b, x);
		Ref mb = in.op == Omaximum ? gtmask(d, b, x) : gtmask(d, x, b);
		if (d->need[x])
			accum(d, x, unbroadcast(d, bin(d, Omul, g, bin(d, Oadd, ma, half)), xt));
		if (d->need[b])
			accum(d, b, unbroadcast(d, bin(d, Omul, g, bin(d, Oadd, mb, half)), bt));
		return;
	}
	case Oneg:
		accum(d, x, un(d, Oneg, g));
		return;
	case Oabs: {
		Ref z = scalar(d, x, 0);
		accum(d, x, bin(d, Omul, g, bin(d, Osub, gtmask(d, x, z), gtmask(d, z, x))));
		return;
	}
	case Orelu:
		/* the mask from the output: relu(x) > 0 exactly where x > 0
		 * (NaN stays NaN, and compares false, either way), and the
		 * output is usually stored for its reader's gradient anyway,
		 * so the input need not be: a training step stored both */
		accum(d, x, bin(d, Omul, g, gtmask(d, y, scalar(d, x, 0))));
		return;
	case Oleaky_relu: {
		double s = attrfloat(&in, "slope", 0.01);
		t = gtmask(d, x, scalar(d, x, 0));         /* m (1 - s) + s */
		t = bin(d, Oadd, bin(d, Omul, t, scalar(d, x, 1 - s)), scalar(d, x, s));
		accum(d, x, bin(d, Omul, g, t));
		return;
	}
	case Oelu: {
		double al = attrfloat(&in, "alpha", 1.0);
		/* x > 0: 1; else alpha e^x = y + alpha */
		t = gtmask(d, x, scalar(d, x, 0));
		u = bin(d, Omul, bin(d, Osub, scalar(d, x, 1), t), bin(d, Oadd, y, scalar(d, x, al)));
		accum(d, x, bin(d, Omul, g, bin(d, Oadd, t, u)));
		return;
	}
	case Osigmoid:
		accum(d, x, bin(d, Omul, g, bin(d, Omul, y, bin(d, Osub, scalar(d, y, 1), y))));
		return;
	case Otanh:
		accum(d, x, bin(d, Omul, g, bin(d, Osub, scalar(d, y, 1), bin(d, Omul, y, y))));
		return;
	case Oexp:
		accum(d, x, bin(d, Omul, g, y));
		return;
	case Olog:
		accum(d, x, bin(d, Odiv, g, x));
		return;
	case Osqrt:
		accum(d, x, bin(d, Odiv, g, bin(d, Omul, y, scalar(d, y, 2))));
		return;
	case Orsqrt:   /* -y^3 / 2 */
		accum(d, x, bin(d, Omul, g, bin(d, Omul, bin(d, Omul, y, bin(d, Omul, y, y)), scalar(d, y, -0.5))));
		return;
	case Ocast:
		if (dtypeisfloat(xt.dtype)) {
			Type dt = xt;
			accum(d, x, mk(d, Ocast, &g, 1, NULL, 0, &dt));
		}
		return;
	case Odropout:
		accum(d, x, g);
		return;
	case Owiden:
		accum(d, x, mk(d, Ocast, &g, 1, NULL, 0, &xt));
		return;
	case Odropout_train: {
		/* the same mask: same key, stream and element indices */
		Ref a2[2] = {g, b};
		accum(d, x, mk(d, Odropout_train, a2, 2, in.attr, in.nattr, NULL));
		return;
	}
	case Oreshape:
		accum(d, x, reshapeto(d, g, xt));
		return;
	case Otranspose: {
		const Attr *pa = findattr(&in, "perm");
		int64_t inv[MaxRank];
		Attr a;
		for (k = 0; k < pa->n; k++)
			inv[pa->u.is[k]] = k;
		a = mkattrints(ar, "perm", inv, pa->n);
		accum(d, x, mk(d, Otranspose, &g, 1, &a, 1, NULL));
		return;
	}
	case Oconcat: {
		int dim = (int)attrint(&in, "dim", 0);
		Dim off = 0;
		bool ok = true;
		for (k = 0; k < in.narg; k++) {
			Type at = tyof(d, in.arg[k]);
			Attr sa[3] = {mkattrint(ar, "dim", dim), mkattrdim(ar, "start", off), mkattrdim(ar, "len", at.dim[dim])};
			if (d->need[in.arg[k]])
				accum(d, in.arg[k], mk(d, Oslice, &g, 1, sa, 3, NULL));
			off = dimadd(d->fn->mod, off, at.dim[dim], &ok);
		}
		return;
	}
	case Osum:
	case Omean: {
		int dim = (int)attrint(&in, "dim", 0);
		bool keep = attrint(&in, "keepdim", 0);
		t = g;
		if (in.op == Omean)   /* the extent, which may be a size (N), as a sum of ones */
			t = bin(d, Odiv, g, dimisconst(xt.dim[dim]) ? scalar(d, g, (double)dimconstval(xt.dim[dim]))
				: reduce(d, Osum, full(d, xt, 1), dim, keep));
		accum(d, x, spread(d, t, xt, dim, keep));
		return;
	}
	case Omax: {
		int dim = (int)attrint(&in, "dim", 0);
		Type kt = xt;
		kt.dim[dim] = 1;
		t = bin(d, Oeq, x, reshapeto(d, y, kt));                 /* the maxima */
		u = reduce(d, Osum, t, dim, true);                       /* how many */
		accum(d, x, bin(d, Omul, t, bin(d, Odiv, reshapeto(d, g, kt), u)));
		return;
	}
	case Osoftmax: {
		int dim = (int)attrint(&in, "dim", 0);
		t = reduce(d, Osum, bin(d, Omul, g, y), dim, true);
		accum(d, x, bin(d, Omul, y, bin(d, Osub, g, t)));
		return;
	}
	case Olog_softmax: {
		int dim = (int)attrint(&in, "dim", 0);
		t = reduce(d, Osum, g, dim, true);
		accum(d, x, bin(d, Osub, g, bin(d, Omul, un(d, Oexp, y), t)));
		return;
	}
	case Ol2_normalize: {
		int dim = (int)attrint(&in, "dim", 0);
		Ref eps = scalar(d, x, attrfloat(&in, "eps", 1e-12));
		Ref r = un(d, Osqrt, reduce(d, Osum, bin(d, Omul, x, x), dim, true));
		Ref n = bin(d, Omaximum, r, eps);
		/* (g - y sum(g y) [r > eps]) / max(r, eps) */
		t = bin(d, Omul, reduce(d, Osum, bin(d, Omul, g, y), dim, true), gtmask(d, r, eps));
		accum(d, x, bin(d, Odiv, bin(d, Osub, g, bin(d, Omul, y, t)), n));
		return;
	}
	case Omatmul: {
		Attr pa;
		int64_t perm[2] = {1, 0};
		if (xt.rank != 2 || bt.rank != 2) {
			errorat(in.loc, "cannot differentiate matmul of rank %d by rank %d (only matrices)", xt.rank, bt.rank);
			d->err++;
			return;
		}
		pa = mkattrints(ar, "perm", perm, 2);
		if (d->need[x])
			accum(d, x, bin(d, Omatmul, g, mk(d, Otranspose, &b, 1, &pa, 1, NULL)));
		/* b's gradient as (g^T a)^T: a weight's gradient reduces over the
		 * rows (N), and so transposes g [N, P], not a [N, K] (Cora's
		 * features: 1433 columns against 16) */
		if (d->need[b]) {
			t = bin(d, Omatmul, mk(d, Otranspose, &g, 1, &pa, 1, NULL), x);
			accum(d, b, mk(d, Otranspose, &t, 1, &pa, 1, NULL));
		}
		return;
	}
	case Ogather: {
		Attr na = mkattrdim(ar, "n", xt.dim[0]);
		Ref a2[2] = {g, b};
		accum(d, x, mk(d, Oscatter_sum, a2, 2, &na, 1, NULL));
		return;
	}
	case Oscatter_sum:
		accum(d, x, bin(d, Ogather, g, b));
		return;
	case Oscatter_mean:
	case Oscatter_max: {
		Ref a2[2];
		t = in.op == Oscatter_mean ? RNone : bin(d, Oeq, x, bin(d, Ogather, y, b));
		if (in.op == Oscatter_mean) {
			/* rows of ones [K, 1, ..] counted per target */
			Type ct = xt;
			for (k = 1; k < ct.rank; k++)
				ct.dim[k] = 1;
			a2[0] = full(d, ct, 1);
		} else {
			a2[0] = t;
		}
		a2[1] = b;
		u = mk(d, Oscatter_sum, a2, 2, in.attr, in.nattr, NULL);      /* counts [n, ..] */
		u = bin(d, Omaximum, u, scalar(d, y, 1));
		u = bin(d, Ogather, bin(d, Odiv, g, u), b);
		accum(d, x, t == RNone ? u : bin(d, Omul, t, u));
		return;
	}
	case Oedge_softmax: {
		/* y (g - sum over the target's edges of y g) */
		Ref gr = x, s = b, dst, a2[2];
		Attr na = mkattrdim(ar, "n", tyof(d, gr).dim[0]);
		dst = un(d, Odst, gr);
		a2[0] = bin(d, Omul, y, g);
		a2[1] = dst;
		t = mk(d, Oscatter_sum, a2, 2, &na, 1, NULL);
		t = bin(d, Ogather, t, dst);
		accum(d, s, bin(d, Omul, y, bin(d, Osub, g, t)));
		return;
	}
	case Otake: {
		Attr na = mkattrdim(ar, "n", xt.dim[1]);
		Ref a2[2] = {g, b};
		accum(d, x, mk(d, Oput, a2, 2, &na, 1, NULL));
		return;
	}
	case Oput:
		accum(d, x, bin(d, Otake, g, b));
		return;
	case Oparam:
	case Oconst:
	case Oslice:
	case Ogt:
	case Oeq:
		/* leaves; slice appears only in backward; comparisons are flat */
		return;
	default:
		errorat(in.loc, "cannot differentiate %s", opinfo[in.op].name);
		d->err++;
		return;
	}
}

int
autodiff(Fn *fn, Ref loss, const Ref *wrt, int nwrt, Ref *grad)
{
	AD d = {.fn = fn, .nval = fn->nval, .mutate = getenv("GNNCC_VJP_MUTATE")};
	int i, k, n = fn->nins;
	Type lt = valtype(fn, loss);

	if (lt.kind != TTensor || lt.rank != 0 || !dtypeisfloat(lt.dtype))
		die("autodiff: the loss must be a float scalar");
	d.adj = emalloc(d.nval * sizeof *d.adj);
	d.need = emalloc(d.nval * sizeof *d.need);
	for (i = 0; i < d.nval; i++) {
		d.adj[i] = RNone;
		d.need[i] = false;
	}
	for (k = 0; k < nwrt; k++)
		d.need[wrt[k]] = true;
	/* forward: which values depend on a wrt through float values */
	for (i = 0; i < n; i++) {
		const Ins *in = &fn->ins[i];
		Type t = valtype(fn, in->to);
		if (t.kind != TTensor || !dtypeisfloat(t.dtype))
			continue;
		for (k = 0; k < in->narg; k++)
			if (d.need[in->arg[k]] && dtypeisfloat(valtype(fn, in->arg[k]).dtype))
				d.need[in->to] = true;
	}
	d.loc = fn->ins[fn->val[loss].def].loc;
	if (d.need[loss])
		d.adj[loss] = scalar(&d, loss, 1);
	for (i = n - 1; i >= 0; i--) {
		Ref to = fn->ins[i].to;
		if (to < 0 || to >= d.nval || d.adj[to] == RNone)
			continue;
		vjp(&d, i);
	}
	for (k = 0; k < nwrt; k++) {
		Ref a = d.adj[wrt[k]];
		if (a == RNone) {
			d.loc = fn->loc;
			a = full(&d, valtype(fn, wrt[k]), 0);
		}
		grad[k] = a;
	}
	free(d.adj);
	free(d.need);
	return d.err ? -1 : 0;
}
