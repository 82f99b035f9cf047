/*
 * invariant: in a training step, the work that depends only on the graph and
 * on the step's constant inputs.  In full-batch training the features x,
 * the labels and the mask are the same at every step, and so is the graph,
 * yet a step recomputed what it makes of them alone: GIN's sum of x over
 * neighbours, SAGE's mean of x, each as wide as x (Cora: 1433).  This pass
 * marks such instructions "once"; the phase analysis (phase.c) makes them
 * PhaseOnce, computed by the first step after a bind or new inputs and
 * kept in the training state for the steps after (runtime/train.c).
 *
 * An instruction is marked when it reads one of the step's tensor inputs
 * but its key (the last: dropout's seed and step), directly or through
 * marked values, and nothing else but constants, the graph's values and
 * the parameters the step neither trains nor updates (GIN's eps, a
 * buffer: new only when weights are loaded): no trained parameter (the
 * weights change every step) and nothing random (which reads the key).  A scatter or edge_softmax is marked only when its
 * segment plan is the graph's (bind-time), so that once-time work never
 * needs a plan of its own.  Inference functions are left alone: their
 * inputs are new at every call.
 */
#include <stdlib.h>

#include "passes.h"

void
invariant(Fn *fn)
{
	unsigned char *phase, *inv;
	Ins *in;
	int i, k, from;

	if (!fn->train || fn->narg == 0)
		return;
	phase = emalloc(fn->nval + 1);
	inv = emalloc(fn->nval + 1);
	phases(fn, phase);
	/* inv[v]: 1 where v exists before a step (graph, constants), 2 where
	 * it is made from the constant inputs too */
	for (i = 0; i < fn->nval; i++)
		inv[i] = phase[i] == PhaseBind || (phase[i] == PhaseLoad && fn->val[i].def >= 0) ? 1 : 0;
	for (i = 0; i < fn->narg - 1; i++)
		if (fn->val[fn->arg[i]].type.kind == TTensor)
			inv[fn->arg[i]] = 2;
	for (i = 0; i < fn->nins; i++)
		if (frozenparam(fn, fn->ins[i].to))
			inv[fn->ins[i].to] = 2;
	for (i = 0; i < fn->nins; i++) {
		in = &fn->ins[i];
		dropattr(fn, in, "once");
		if (in->op == Oparam || !(opinfo[in->op].flags & Fpure) || inv[in->to])
			continue;
		if (((opinfo[in->op].flags & Fscatter) && phase[in->arg[1]] != PhaseBind) ||
		    (in->op == Oedge_softmax && phase[in->arg[0]] != PhaseBind))
			continue;
		for (k = 0, from = 0; k < in->narg && inv[in->arg[k]]; k++)
			from |= inv[in->arg[k]] == 2;
		if (k < in->narg || !from)
			continue;
		inv[in->to] = 2;
		putattr(fn, in, mkattrint(fn->mod->arena, "once", 1));
	}
	free(inv);
	free(phase);
}
