/*
 * reorder: algebraic reordering, so that messages travel at the narrower
 * width.
 *
 * An aggregation A(x) = scatter_sum|scatter_mean(m, dst) {n} with
 * m = gather(x, src), optionally times a per-edge scalar w (an [E, 1]
 * edge weight such as gcn_norm, or a [1]/[] scalar, on either side of the
 * mul), is linear in x row by row: each output row is a weighted sum of
 * input rows (a mean is a sum times 1/count).  So for a matrix W,
 *
 *	A(x) @ W  ==  A(x @ W)
 *
 * and either side can be computed.  With x: [M, K] and W: [K, P], the
 * left side moves K floats per edge, the right side P, while the dense
 * transform costs the same M*K*P (n == M) either way.  So:
 *
 *   (a) matmul(A(x), W)  ->  A(matmul(x, W))         when P < K
 *       (SAGE's lin_l(mean(x)) with 1433 inputs and 16 outputs);
 *   (b) A(matmul(x, W))  ->  matmul(A(x), W)         when K < P
 *       (a GCN layer that widens), only if matmul(x, W) has no other use;
 *   (c) matmul(add(A(x), mul(c, x)), W)
 *         -> add(A(matmul(x, W)), mul(c, matmul(x, W)))  when P < K,
 *       c one number per row of x ([], [1], or [M, 1]: GIN's 1 + eps is
 *       [1]), since scaling rows commutes with a transform from the
 *       right; also with a bare x in place of mul(c, x).  The one
 *       matmul(x, W) is shared by both terms.
 *
 *   (d) sum(reshape(matmul(x, W), [n, H, C]) * a, dim=-1) -> matmul(x, Wa),
 *       a per-head score of a transform nothing else reads (headscore()).
 *
 * Only sum and mean: max is not linear.  W must be a rank-2 value of the
 * parameter or load phase (phase.c: a param or a transpose of one): the
 * rule is about a layer's weight matrix, whose shape is fixed when the
 * model is compiled; a product of two data values is left alone.  Both
 * widths must be constants to be compared.  Every
 * intermediate of a rewritten aggregation (its gather, its mul, the
 * aggregate itself, and in (c) the add and the mul by c) must have that
 * one use: otherwise the wide values are still needed and the rewrite
 * adds work instead of moving it.  Uses are counted over live
 * instructions only, since earlier rewrites leave dead ones behind.
 *
 * The rewrite is exact in real arithmetic; in floating point it changes
 * the order of the sums (a different rounding, far below 1e-9 relative
 * in the interpreter's doubles), and 0 * inf or a NaN weight read through
 * an empty neighbourhood may differ.  That is the trade every compiler's
 * reassociation makes; docs/passes.md says so.
 *
 * New instructions are emitted at the end of fn->ins and then moved to
 * just before the instruction they replace: all their operands (x, W,
 * the index vectors, w, c) are operands of the old chain, so they are
 * defined earlier, and every use of the replaced value comes later.
 * Each new instruction takes the name hint and location of the old one
 * in the same role (the new gather the old gather's, the new matmul the
 * old matmul's), so dumps read like the source.  The old chain is left,
 * dead, for dce.  Rewrites can enable others (A(A(x)) @ W moves the
 * matmul in twice), so the pass repeats until nothing changes; an
 * instruction already part of a rewrite is not matched again in the same
 * round, since the use counts are those of the round's start.
 */
#include <stdlib.h>
#include <string.h>

#include "passes.h"

enum { MaxRounds = 16 };

typedef struct Agg {    /* A(x), matched at its scatter */
	int scat, mul, gath;    /* instruction indices; mul -1 without a weight */
	Ref x;
} Agg;

typedef struct R {
	Fn *fn;
	int nins0, nval0;       /* the round's original instructions and values */
	int *use;               /* [nval0] uses by live instructions and ret */
	unsigned char *phase;   /* [nval0] */
	bool *done;             /* [nins0] part of a rewrite this round */
	int *at;                /* [insc] for emitted ones: insert before this index */
	int atcap;
	int pos;                /* where the current rewrite's instructions go */
} R;

static Ins *
defof(R *r, Ref v)
{
	int d;

	if (v < 0 || v >= r->nval0 || (d = r->fn->val[v].def) < 0 || d >= r->nins0 || r->done[d])
		return NULL;
	return &r->fn->ins[d];
}

static Type
ty(R *r, Ref v)
{
	return r->fn->val[v].type;
}

static bool
once(R *r, Ref v)
{
	return v >= 0 && v < r->nval0 && r->use[v] == 1;
}

/* Broadcasts as one number per row of a [rows, ...] tensor: [], [1], [rows|1, 1]. */
static bool
rowscalar(Type w, Dim rows)
{
	if (w.kind != TTensor || w.rank > 2)
		return false;
	if (w.rank >= 1 && w.dim[w.rank - 1] != dimconst(1))
		return false;
	return w.rank < 2 || w.dim[0] == rows || w.dim[0] == dimconst(1);
}

/* A float matrix with a constant second extent. */
static bool
matrix(Type t, int64_t *cols)
{
	if (t.kind != TTensor || t.rank != 2 || !dtypeisfloat(t.dtype) || !dimisconst(t.dim[1]))
		return false;
	*cols = dimconstval(t.dim[1]);
	return true;
}

/* W: a matrix known once the weights are loaded. */
static bool
weight(R *r, Ref w, int64_t *rows, int64_t *cols)
{
	Type t;

	if (w >= r->nval0 || (r->phase[w] != PhaseParam && r->phase[w] != PhaseLoad))
		return false;
	t = ty(r, w);
	if (!matrix(t, cols) || !dimisconst(t.dim[0]))
		return false;
	*rows = dimconstval(t.dim[0]);
	return true;
}

/* a = scatter_sum|scatter_mean(gather(x, i) [* w], d), every step used once. */
static bool
matchagg(R *r, Ref a, Agg *g)
{
	Ins *s, *m, *gt;
	Ref mv;
	int k;
	int64_t cols;

	if (!(s = defof(r, a)) || (s->op != Oscatter_sum && s->op != Oscatter_mean))
		return false;
	mv = s->arg[0];
	if (!once(r, mv) || !(m = defof(r, mv)))
		return false;
	g->scat = r->fn->val[a].def;
	g->mul = -1;
	if (m->op == Omul) {
		for (k = 0; k < 2; k++)
			if ((gt = defof(r, m->arg[k])) && gt->op == Ogather && once(r, m->arg[k])
			 && rowscalar(ty(r, m->arg[1 - k]), ty(r, m->arg[k]).dim[0]))
				break;
		if (k == 2 || !typeeq(ty(r, mv), ty(r, m->arg[k])))
			return false;
		g->mul = r->fn->val[mv].def;
		mv = m->arg[k];
	}
	if (!(gt = defof(r, mv)) || gt->op != Ogather)
		return false;
	g->gath = r->fn->val[mv].def;
	g->x = gt->arg[0];
	return matrix(ty(r, g->x), &cols) && matrix(ty(r, a), &cols);
}

/* Emit op(args) with its type from the typing rules; our bug if ill typed. */
static Ref
build(R *r, int op, const Ref *arg, int narg, const Ins *like)
{
	Type at[2], out;
	char err[256];
	int k;

	for (k = 0; k < narg; k++)
		at[k] = ty(r, arg[k]);
	if (!typecheckop(r->fn->mod, op, at, narg, like->attr, like->nattr, NULL, &out, err, sizeof err))
		die("reorder: %s", err);
	k = r->fn->nins;
	if (r->atcap <= k) {
		r->atcap = 2 * k + 16;
		r->at = erealloc(r->at, r->atcap * sizeof *r->at);
	}
	r->at[k] = r->pos;
	return emit(r->fn, op, out, arg, narg, like->attr, like->nattr, r->fn->val[like->to].name, like->loc);
}

/* The aggregation g, rebuilt over y in place of x. */
static Ref
rebuildagg(R *r, const Agg *g, Ref y)
{
	Ins old;
	Ref a[2], v;
	int k;

	old = r->fn->ins[g->gath];
	a[0] = y;
	a[1] = old.arg[1];
	v = build(r, Ogather, a, 2, &r->fn->ins[g->gath]);
	if (g->mul >= 0) {
		old = r->fn->ins[g->mul];
		k = r->fn->val[old.arg[0]].def == g->gath ? 0 : 1;
		a[k] = v;
		a[1 - k] = old.arg[1 - k];
		v = build(r, Omul, a, 2, &r->fn->ins[g->mul]);
	}
	old = r->fn->ins[g->scat];
	a[0] = v;
	a[1] = old.arg[1];
	return build(r, old.op, a, 2, &r->fn->ins[g->scat]);
}

static void
markagg(R *r, const Agg *g)
{
	r->done[g->scat] = r->done[g->gath] = true;
	if (g->mul >= 0)
		r->done[g->mul] = true;
}

/* (a) matmul(A(x), W) -> A(matmul(x, W)) when W narrows. */
static bool
aggfirst(R *r, int i)
{
	Ins in = r->fn->ins[i];
	int64_t k, p;
	Ref a[2];
	Agg g;

	if (!once(r, in.arg[0]) || !matchagg(r, in.arg[0], &g))
		return false;
	if (!weight(r, in.arg[1], &k, &p) || !(p < k))
		return false;
	r->pos = i;
	a[0] = g.x;
	a[1] = in.arg[1];
	a[0] = build(r, Omatmul, a, 2, &r->fn->ins[i]);
	replaceuses(r->fn, in.to, rebuildagg(r, &g, a[0]));
	markagg(r, &g);
	r->done[i] = true;
	return true;
}

/* (b) A(matmul(x, W)) -> matmul(A(x), W) when W widens. */
static bool
transformlast(R *r, int i)
{
	Ins *mm;
	int64_t k, p;
	Ref a[2], h;
	Agg g;
	int d;

	if (!matchagg(r, r->fn->ins[i].to, &g))
		return false;
	h = g.x;
	if (!once(r, h) || !(mm = defof(r, h)) || mm->op != Omatmul)
		return false;
	if (!weight(r, mm->arg[1], &k, &p) || !(k < p))
		return false;
	d = r->fn->val[h].def;
	r->pos = i;
	a[0] = rebuildagg(r, &g, r->fn->ins[d].arg[0]);
	a[1] = r->fn->ins[d].arg[1];
	replaceuses(r->fn, r->fn->ins[i].to, build(r, Omatmul, a, 2, &r->fn->ins[d]));
	markagg(r, &g);
	r->done[d] = true;
	return true;
}

/*
 * (c) matmul(add(A(x), mul(c, x)), W) -> add(A(xW), mul(c, xW)) when W
 * narrows, xW = matmul(x, W) made once; c scales whole rows.  A bare x
 * in place of mul(c, x) too.  Either operand order of the add and of
 * the mul.
 */
static bool
distribute(R *r, int i)
{
	Ins in = r->fn->ins[i], *ad, *cm = NULL;
	Ref s = in.arg[0], a[2], xw, terms[2];
	int64_t k, p;
	int j, c = -1, ci = -1;
	Agg g;

	if (!once(r, s) || !(ad = defof(r, s)) || ad->op != Oadd)
		return false;
	if (!weight(r, in.arg[1], &k, &p) || !(p < k))
		return false;
	for (j = 0; j < 2; j++)
		if (once(r, ad->arg[j]) && matchagg(r, ad->arg[j], &g))
			break;
	if (j == 2)
		return false;
	/* the other term: x itself, or mul(c, x) / mul(x, c) used once */
	terms[0] = ad->arg[1 - j];
	if (terms[0] != g.x) {
		if (!once(r, terms[0]) || !(cm = defof(r, terms[0])) || cm->op != Omul)
			return false;
		for (c = 0; c < 2; c++)
			if (cm->arg[1 - c] == g.x && rowscalar(ty(r, cm->arg[c]), ty(r, g.x).dim[0]))
				break;
		if (c == 2 || !typeeq(ty(r, terms[0]), ty(r, g.x)))
			return false;
		ci = r->fn->val[terms[0]].def;
	}
	if (!typeeq(ty(r, s), ty(r, ad->arg[j])) || !typeeq(ty(r, s), ty(r, g.x)))
		return false;
	r->pos = i;
	a[0] = g.x;
	a[1] = in.arg[1];
	xw = build(r, Omatmul, a, 2, &r->fn->ins[i]);
	terms[1] = rebuildagg(r, &g, xw);
	terms[0] = xw;
	if (ci >= 0) {
		a[c] = r->fn->ins[ci].arg[c];
		a[1 - c] = xw;
		terms[0] = build(r, Omul, a, 2, &r->fn->ins[ci]);
		r->done[ci] = true;
	}
	a[j] = terms[1];
	a[1 - j] = terms[0];
	replaceuses(r->fn, in.to, build(r, Oadd, a, 2, &r->fn->ins[r->fn->val[s].def]));
	r->done[r->fn->val[s].def] = true;
	markagg(r, &g);
	r->done[i] = true;
	return true;
}

/*
 * (d) sum(reshape(matmul(x, W), [n, H, C]) * a, dim=-1) -> matmul(x, Wa)
 * with Wa = sum(reshape(W, [K, H, C]) * a, dim=-1), a [1, H, C] or
 * [H, C] known with the weights: a per-head score of a transform (GAT's
 * <lin_dst(x_dst), att_dst> on a bipartite relation) is a transform
 * itself, K wide where the product was H*C, and Wa is made once when the
 * weights load.  Only when the product, its view and the scaled view have
 * that one use: a transform read elsewhere (a homogeneous GAT's h, which
 * its messages carry) is made anyway, and its score is then a few
 * products of values already in registers.
 */
static bool
headscore(R *r, int i)
{
	Ins in = r->fn->ins[i], *p, *hv, *mm;
	Ref a[2], att = RNone, hd = RNone, wr, ws;
	Type pt, at;
	int64_t k, hc, dim;
	int j, ip, ih, im;

	if (in.narg != 1 || attrint(&in, "keepdim", 0) || !once(r, in.arg[0]) || !(p = defof(r, in.arg[0])) || p->op != Omul)
		return false;
	pt = ty(r, in.arg[0]);
	dim = attrint(&in, "dim", 0);
	if (dim < 0)
		dim += pt.rank;
	if (pt.kind != TTensor || pt.rank != 3 || dim != 2 || !dtypeisfloat(pt.dtype) ||
	    !dimisconst(pt.dim[1]) || !dimisconst(pt.dim[2]))
		return false;
	for (j = 0; j < 2; j++) {
		hd = p->arg[j];
		att = p->arg[1 - j];
		at = ty(r, att);
		if (att < r->nval0 && (r->phase[att] == PhaseParam || r->phase[att] == PhaseLoad) &&
		    at.kind == TTensor && at.dtype == pt.dtype && at.rank >= 2 && at.rank <= 3 &&
		    (at.rank == 2 || at.dim[0] == dimconst(1)) &&
		    at.dim[at.rank - 2] == pt.dim[1] && at.dim[at.rank - 1] == pt.dim[2] &&
		    typeeq(ty(r, hd), pt))
			break;
	}
	if (j == 2 || !once(r, hd) || !(hv = defof(r, hd)) || hv->op != Oreshape ||
	    !once(r, hv->arg[0]) || !(mm = defof(r, hv->arg[0])) || mm->op != Omatmul ||
	    !weight(r, mm->arg[1], &k, &hc) || hc != dimconstval(pt.dim[1]) * dimconstval(pt.dim[2]) ||
	    ty(r, mm->arg[0]).rank != 2)
		return false;
	/* build() may move fn->ins: instructions by index from here */
	ip = r->fn->val[in.arg[0]].def;
	ih = r->fn->val[hd].def;
	im = r->fn->val[hv->arg[0]].def;
	r->pos = i;
	{
		Dim shape[3] = {dimconst(k), pt.dim[1], pt.dim[2]};
		Attr sa = mkattrdims(r->fn->mod->arena, "shape", shape, 3);
		Ins like = r->fn->ins[ih];

		like.attr = &sa;
		like.nattr = 1;
		a[0] = r->fn->ins[im].arg[1];
		wr = build(r, Oreshape, a, 1, &like);
	}
	a[j] = wr;
	a[1 - j] = att;
	a[0] = build(r, Omul, a, 2, &r->fn->ins[ip]);
	/* names: Wa the transform's (it is its weight now), the new
	 * transform the score's */
	{
		Ins like = r->fn->ins[i];

		like.to = r->fn->ins[im].to;
		ws = build(r, Osum, a, 1, &like);
		like = r->fn->ins[im];
		like.to = in.to;
		a[0] = like.arg[0];
		a[1] = ws;
		replaceuses(r->fn, in.to, build(r, Omatmul, a, 2, &like));
	}
	r->done[ip] = r->done[ih] = r->done[im] = r->done[i] = true;
	return true;
}

/* use[v]: uses by instructions that are live (dce's walk) and by ret. */
static void
countuses(R *r)
{
	Fn *fn = r->fn;
	bool *live;
	Ins *in;
	int i, k;

	live = emalloc((fn->nval + 1) * sizeof *live);
	memset(r->use, 0, fn->nval * sizeof *r->use);
	for (i = 0; i < fn->nret; i++) {
		live[fn->ret[i]] = true;
		r->use[fn->ret[i]]++;
	}
	for (i = fn->nins - 1; i >= 0; i--) {
		in = &fn->ins[i];
		if (in->op != Oparam && !(in->to != RNone && live[in->to]))
			continue;
		for (k = 0; k < in->narg; k++) {
			live[in->arg[k]] = true;
			r->use[in->arg[k]]++;
		}
	}
	free(live);
}

/* Emitted instructions go just before the instruction they replace. */
static void
place(R *r)
{
	Fn *fn = r->fn;
	Ins *ins;
	int i, j = r->nins0, n = 0;

	ins = emalloc((fn->nins + 1) * sizeof *ins);
	for (i = 0; i < r->nins0; i++) {
		/* rewrites happen in walk order, so their positions ascend */
		for (; j < fn->nins && r->at[j] == i; j++)
			ins[n++] = fn->ins[j];
		ins[n++] = fn->ins[i];
	}
	if (j != fn->nins || n != fn->nins)
		die("reorder: misplaced instructions");
	memcpy(fn->ins, ins, n * sizeof *ins);
	free(ins);
	filluse(fn);
}

static bool
round_(R *r)
{
	Fn *fn = r->fn;
	bool changed = false;
	int i;

	filluse(fn);
	r->nins0 = fn->nins;
	r->nval0 = fn->nval;
	r->use = emalloc((fn->nval + 1) * sizeof *r->use);
	r->phase = emalloc(fn->nval + 1);
	r->done = emalloc((fn->nins + 1) * sizeof *r->done);
	memset(r->done, 0, (fn->nins + 1) * sizeof *r->done);
	countuses(r);
	phases(fn, r->phase);
	for (i = 0; i < r->nins0; i++) {
		if (r->done[i])
			continue;
		switch (fn->ins[i].op) {
		case Omatmul:
			changed |= aggfirst(r, i) || distribute(r, i);
			break;
		case Oscatter_sum:
		case Oscatter_mean:
			changed |= transformlast(r, i);
			break;
		case Osum:
			changed |= headscore(r, i);
			break;
		}
	}
	if (changed)
		place(r);
	free(r->use);
	free(r->phase);
	free(r->done);
	return changed;
}

void
reorder(Fn *fn)
{
	R r = {.fn = fn};
	int k;

	for (k = 0; k < MaxRounds && round_(&r); k++)
		;
	free(r.at);
}
