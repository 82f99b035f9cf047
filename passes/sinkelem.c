/*
 * sinkelem: elementwise row work that would be a kernel of its own waits
 * for the row kernel that reads it (the cpu target, before fusion).
 *
 * Autodiff emits a term's work where its adjoint arrives. GIN's backward
 * scales dX by 1 + eps, then aggregates dX over the reverse edges (a
 * kernel of its own: readfold's scatter), then adds the two. The scaling
 * sat between the GEMM that made dX and the scatter, a run of one: a
 * kernel that wrote [N, F] for the add's kernel to read back (1.8 ms of
 * a step on PubMed). Moved down to just before its first use, it joins
 * that use's run.
 *
 * Only an instruction that would run alone moves: elementwise forward
 * work on rows, whose next instruction is no row work it could fuse
 * with, whose operands no elementwise row work made (so no value of a
 * run is stored because it moved away), and whose first use, further
 * down, is elementwise work on the same rows. It moves to just before
 * that use, past instructions that do not read it, which keeps the order
 * valid; nothing is computed differently. Bits are unchanged.
 */
#include <stdlib.h>

#include "passes.h"

/* elementwise forward work on rows of count n (any count when n is
 * NULL) */
static bool
rowelem(const Fn *fn, const unsigned char *phase, const Ins *in, const Dim *n)
{
	const Type *t = &fn->val[in->to].type;

	return (opinfo[in->op].flags & (Felem | Fbin)) && phase[in->to] == PhaseForward && t->kind == TTensor &&
	       t->rank >= 1 && !dimisconst(t->dim[0]) && (!n || t->dim[0] == *n);
}

/* the instruction i moves to just before, or -1 */
static int
target(const Fn *fn, const unsigned char *phase, int i)
{
	const Ins *in = &fn->ins[i];
	Dim n = fn->val[in->to].type.dim[0];
	int j;

	if (!rowelem(fn, phase, in, NULL) || attrint(in, "group", -1) >= 0 || i + 1 >= fn->nins ||
	    rowelem(fn, phase, &fn->ins[i + 1], &n))
		return -1;
	for (int k = 0; k < in->narg; k++) {
		int d = fn->val[in->arg[k]].def;
		if (d >= 0 && rowelem(fn, phase, &fn->ins[d], NULL))
			return -1;
	}
	for (j = i + 1; j < fn->nins; j++)
		for (int k = 0; k < fn->ins[j].narg; k++)
			if (fn->ins[j].arg[k] == in->to)
				return j > i + 1 && rowelem(fn, phase, &fn->ins[j], &n) ? j : -1;
	return -1;
}

void
sinkelem(Fn *fn)
{
	unsigned char *phase = emalloc(fn->nval + 1);

	phases(fn, phase);
	/* from the last: an instruction moved down never passes one not
	 * yet seen */
	for (int i = fn->nins - 1; i >= 0; i--) {
		int j = target(fn, phase, i);
		if (j > i + 1)
			moveins(fn, i, j - 1);
	}
	free(phase);
}
