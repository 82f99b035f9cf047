/*
 * sinkreduce: a sum over rows waits until its result is needed (the cpu
 * target, before fusion).
 *
 * Fusion's row kernels are contiguous runs of instructions, and a sum
 * over the rows of a forward value (a bias's gradient, batch norm's
 * statistics and their gradients) is no row kernel's member: where
 * autodiff emitted it, between row work, it ended the run. In batch
 * norm's backward, dY * w and its product with the inverse deviation
 * were two kernels (two passes over [N, F]) because the sum of
 * dY * y_hat sat between them. Moved down past the elementwise row work
 * that follows it (not past its first use, nor further: its operand
 * stays live as long as it waits, and a bias's gradient would wait for
 * the end of backward), with the product only it reads (which readfold
 * then folds into its walk), it leaves that row work one kernel.
 *
 * Only instructions move, each to a place before all of its uses and
 * after all of its operands (they are earlier still), so the order stays
 * valid; nothing is computed differently. Bits are unchanged.
 */
#include <stdlib.h>

#include "passes.h"

/* where sum i goes: before the first instruction after it that reads
 * its result or is not elementwise work on rows of its operand's count */
static int
target(const Fn *fn, const unsigned char *phase, int i)
{
	const Ins *in = &fn->ins[i];
	Dim rows = fn->val[in->arg[0]].type.dim[0];
	int j;

	for (j = i + 1; j < fn->nins; j++) {
		const Ins *w = &fn->ins[j];
		const Type *t = &fn->val[w->to].type;

		if (!(opinfo[w->op].flags & (Felem | Fbin)) || phase[w->to] != PhaseForward ||
		    t->kind != TTensor || t->rank < 1 || t->dim[0] != rows)
			break;
		for (int k = 0; k < w->narg; k++)
			if (w->arg[k] == in->to)
				return j;
	}
	return j;
}

void
sinkreduce(Fn *fn)
{
	unsigned char *phase = emalloc(fn->nval + 1);

	filluse(fn);   /* moves keep the counts; moveins() keeps val[].def */
	phases(fn, phase);
	/* from the last: a sum moved down never passes one not yet seen */
	for (int i = fn->nins - 1; i >= 0; i--) {
		Ins *in = &fn->ins[i];
		int u, d;

		if (!colsum(fn, in) || phase[in->to] != PhaseForward)
			continue;
		u = target(fn, phase, i);
		d = fn->val[in->arg[0]].def;
		if (u > i + 1)
			moveins(fn, i, u - 1);
		/* now at u - 1; its operand's product, read by it alone, follows */
		if (d >= 0 && d < i && fn->ins[d].op == Omul && phase[fn->ins[d].to] == PhaseForward &&
		    fn->val[fn->ins[d].to].nuse == 1)
			moveins(fn, d, (u > i + 1 ? u : i + 1) - 2);
	}
	free(phase);
}
