/*
 * hoist: graph-invariant hoisting.  Instructions are reordered, stably,
 * into the order the compiled model runs them: parameters and what
 * depends on them alone (computed when weights load), then what depends
 * on the graph alone (computed once per bound graph), then forward.
 * Dependencies always point from an earlier phase to a later one or
 * within a phase, so the order stays valid.  Codegen takes its phases
 * from the same analysis (phase.c); this pass makes the split visible in
 * the IR and leaves forward's instructions contiguous for fusion.
 */
#include <stdlib.h>
#include <string.h>

#include "passes.h"

void
hoist(Fn *fn)
{
	static const int order[] = {PhaseParam, PhaseLoad, PhaseBind, PhaseOnce, PhaseForward};
	unsigned char *phase;
	Ins *ins;
	int i, k, n = 0;

	phase = emalloc(fn->nval + 1);
	phases(fn, phase);
	ins = emalloc((fn->nins + 1) * sizeof *ins);
	for (k = 0; k < 5; k++)
		for (i = 0; i < fn->nins; i++)
			if (phase[fn->ins[i].to] == order[k])
				ins[n++] = fn->ins[i];
	if (n != fn->nins)
		die("hoist: an instruction without a phase");
	if (n)         /* a function may have no instructions (fn->ins NULL) */
		memcpy(fn->ins, ins, n * sizeof *ins);
	free(ins);
	free(phase);
}
