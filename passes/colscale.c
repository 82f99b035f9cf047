/*
 * colscale: a column's scale leaves a sum over rows (the cpu target,
 * before fusion).
 *
 *	sum(mul(mul(x, u), y), dim=0)  ->  mul(sum(mul(x, y), dim=0), u)
 *
 * with x and y [N, F] and u one number per column ([F]). Batch norm's
 * backward is full of it: its weight's gradient sums dY times
 * y_hat = c * rstd, its input's sums dY * w times c. The scaled value
 * (y_hat, dY * w) was stored for that sum alone, while the row kernel that
 * made it used it in registers: [N, F] written and read back (10 MB each
 * way on PubMed at F = 128, four of them in GIN's step). Summed unscaled
 * and scaled once per column, it is no longer read outside its kernel,
 * and readfold folds the new product x * y into the sum's walk.
 *
 * Exact in real arithmetic; in floating point the scale is applied once
 * to the sum instead of to every term, a different rounding (as reorder's
 * rewrites): the compiled step still matches the interpreter to the
 * tests' 1e-5 of its largest gradient. Only what fusion can use: a
 * forward float32 sum over the rows of a product that nothing else
 * reads, of which one factor is x * u. The scaled value keeps its other
 * uses and its instruction; the product is rewritten in place, and the
 * scale follows the sum.
 */
#include <stdlib.h>

#include "passes.h"

/* a = mul(x, u) or mul(u, x), x of a's type and u [F] with F a's last
 * extent: x, with *u set; else RNone */
static Ref
scaled(const Fn *fn, Ref a, Ref *u)
{
	const Type *t = &fn->val[a].type;
	int d = fn->val[a].def;

	if (d < 0 || fn->ins[d].op != Omul || fn->ins[d].narg != 2)
		return RNone;
	for (int k = 0; k < 2; k++) {
		Ref x = fn->ins[d].arg[k], s = fn->ins[d].arg[1 - k];
		const Type *st = &fn->val[s].type;
		if (typeeq(fn->val[x].type, *t) && st->kind == TTensor && st->rank == 1 && st->dtype == t->dtype &&
		    st->dim[0] == t->dim[t->rank - 1]) {
			*u = s;
			return x;
		}
	}
	return RNone;
}

void
colscale(Fn *fn)
{
	unsigned char *phase = emalloc(fn->nval + 1);

	filluse(fn);
	phases(fn, phase);
	for (int i = 0; i < fn->nins; i++) {
		Ins *s = &fn->ins[i], *p;
		const Type *pt;
		Ref x = RNone, u = RNone, m;
		int d, k;

		if (s->op != Osum || s->narg != 1 || attrint(s, "dim", 0) != 0 || attrint(s, "keepdim", 0) ||
		    phase[s->to] != PhaseForward || (d = fn->val[s->arg[0]].def) < 0)
			continue;
		p = &fn->ins[d];
		pt = &fn->val[p->to].type;
		if (p->op != Omul || p->narg != 2 || fn->val[p->to].nuse != 1 || pt->kind != TTensor || pt->rank != 2 ||
		    pt->dtype != DF32 || phase[p->to] != PhaseForward)
			continue;
		for (k = 0; k < 2 && x == RNone; k++)
			if (typeeq(fn->val[p->arg[1 - k]].type, *pt))
				x = scaled(fn, p->arg[k], &u);
		if (x == RNone)
			continue;
		k--;
		/* the product reads x in place of x * u ... */
		p->arg[k] = x;
		/* ... and the scale goes just before the sum's first use, so
		 * that sinkreduce can still move the sum down past the row
		 * work between */
		{
			Ref a[2] = {s->to, u}, old = s->to;
			Loc loc = s->loc;
			Type st = fn->val[s->to].type;
			int j, q;
			for (j = i + 1; j < fn->nins; j++) {
				for (q = 0; q < fn->ins[j].narg && fn->ins[j].arg[q] != old; q++)
					;
				if (q < fn->ins[j].narg)
					break;
			}
			m = emit(fn, Omul, st, a, 2, NULL, 0, NULL, loc);
			replaceuses(fn, old, m);
			fn->ins[fn->nins - 1].arg[0] = old;
			moveins(fn, fn->nins - 1, j < fn->nins - 1 ? j : fn->nins - 1);
		}
		filluse(fn);
		phase = erealloc(phase, fn->nval + 1);
		phases(fn, phase);
	}
	free(phase);
	/* batch norm's two sums of dY times c (its weight's, through y_hat,
	 * and its input's, through dY * w) are now one */
	cse(fn);
	dce(fn);
}
