/*
 * When each value can be computed: the analysis that graph-invariant
 * hoisting, memory planning and code generation share.
 *
 * Anything touching a tensor input runs in forward; so does anything
 * mixing parameters with the graph (bind must not cache what new weights
 * change).  Graph-only work runs when a graph is bound, parameter-only
 * work when weights are loaded (a transposed weight, say), and constants
 * at load unless their size depends on the graph.  In a training step
 * (fn->train) parameter work runs in forward: the weights change; what
 * invariant.c marked there ("once") runs at its first step after a bind,
 * new inputs or new weights, when every operand is one of the step's
 * constant inputs (all but the dropout key, its last), a parameter the
 * step neither trains nor updates (GIN's eps), a constant, bind- or
 * once-time.
 */
#include <string.h>

#include "passes.h"

bool
frozenparam(const Fn *fn, Ref v)
{
	const Ins *in = fn->val[v].def >= 0 ? &fn->ins[fn->val[v].def] : NULL;
	const char *name;
	int k;

	if (!fn->train || !in || in->op != Oparam || !(name = attrstr(in, "name")))
		return false;
	for (k = 0; k < fn->train->nparam; k++)
		if (strcmp(fn->train->param[k], name) == 0)
			return false;
	for (k = 0; k < fn->train->nupdate; k++)
		if (strcmp(fn->train->update[k], name) == 0)
			return false;
	return true;
}

/* may a "once" instruction read v: a constant input of a training step
 * (not its key), a parameter it leaves alone, or a value that exists
 * before its first step runs? */
static bool
oncearg(const Fn *fn, const unsigned char *phase, Ref v)
{
	switch (phase[v]) {
	case PhaseInput: return fn->train && fn->narg > 0 && v != fn->arg[fn->narg - 1];
	case PhaseParam: return frozenparam(fn, v);
	case PhaseLoad:  /* a training step's load-time values are constants */
	case PhaseBind:
	case PhaseOnce: return true;
	default: return false;
	}
}

static int
classify(const Fn *fn, const unsigned char *phase, const Ins *in)
{
	bool fwd = false, param = false, graph = false, constdims;
	const Type *t = &fn->val[in->to].type;
	int k;

	if (in->op == Oparam)
		return PhaseParam;
	if (fn->train && findattr(in, "once")) {
		for (k = 0; k < in->narg && oncearg(fn, phase, in->arg[k]); k++)
			;
		if (k == in->narg)
			return PhaseOnce;
	}
	for (k = 0; k < in->narg; k++)
		switch (phase[in->arg[k]]) {
		case PhaseInput:
		case PhaseOnce:
		case PhaseForward: fwd = true; break;
		case PhaseParam:
		case PhaseLoad: param = true; break;
		default: graph = true; break;
		}
	if (fwd || (param && graph))
		return PhaseForward;
	if (graph)
		return PhaseBind;
	constdims = t->kind == TTensor;
	for (k = 0; k < t->rank; k++)
		constdims &= dimisconst(t->dim[k]);
	/* message passing needs a graph's plans, which exist from bind on */
	if (opinfo[in->op].flags & Fmsg)
		constdims = false;
	/* a training step's parameters change every step: nothing made from
	 * them can be kept from one step to the next */
	if (param)
		return constdims && !fn->train ? PhaseLoad : PhaseForward;
	return constdims ? PhaseLoad : PhaseBind;
}

void
phases(const Fn *fn, unsigned char *phase)
{
	int i;

	for (i = 0; i < fn->nval; i++)
		phase[i] = PhaseNone;
	for (i = 0; i < fn->narg; i++)
		phase[fn->arg[i]] = fn->val[fn->arg[i]].type.kind == TGraph ? PhaseBind : PhaseInput;
	for (i = 0; i < fn->nins; i++)
		phase[fn->ins[i].to] = classify(fn, phase, &fn->ins[i]);
}
