/*
 * gatherfold: a scatter reads its messages through the gather that made
 * them (the cpu target).
 *
 * The backward of an aggregation (autodiff.c) is a gather of the output
 * gradient's rows by dst into an [E, F] array, then a scatter of it by
 * src into nodes; outside a fusion group (fuse.c's row kernels walk the
 * edges into a node, along dst, and this scatter runs along src) the two
 * were two kernels, the gather writing E x F floats that the scatter read
 * back: 45 MB each way on PubMed at F = 128. When the gather's value has
 * no other use, this pass marks it "folded" and its scatter "via": the
 * scatter's kernel reads row idx[e] of the gather's table for message e,
 * the gather runs no kernel and takes no arena memory (forwardkernels,
 * needsstorage), and its table stays live until the scatter (memplan).
 * Each sum is the same chain in the same order, so the bits are too.
 *
 * Only a scatter along a bind-time segment plan qualifies (the kernel
 * walks the plan), and neither value may be stored in 16 bits, whose
 * kernels read through the halfaccess rewrite. The pipeline runs it for
 * the cpu target only (pipeline.c), before memplan.
 */
#include <stdlib.h>

#include "passes.h"

/* uses of v as an operand or a result */
static int
uses(const Fn *fn, Ref v)
{
	int n = 0;

	for (int j = 0; j < fn->nins; j++)
		for (int k = 0; k < fn->ins[j].narg; k++)
			n += fn->ins[j].arg[k] == v;
	for (int k = 0; k < fn->nret; k++)
		n += fn->ret[k] == v;
	return n;
}

/* scatter j may read through the gather that defines its messages */
static int
foldable(const Fn *fn, const unsigned char *phase, int j)
{
	const Ins *in = &fn->ins[j], *g;
	int d;

	if (in->op != Oscatter_sum && in->op != Oscatter_mean && in->op != Oscatter_max)
		return -1;
	if (phase[in->to] != PhaseForward || phase[in->arg[1]] != PhaseBind ||
	    attrint(in, "group", -1) >= 0 || (d = fn->val[in->arg[0]].def) < 0)
		return -1;
	g = &fn->ins[d];
	if (g->op != Ogather || phase[g->to] != PhaseForward || attrint(g, "group", -1) >= 0 ||
	    uses(fn, g->to) != 1 || fn->val[g->arg[0]].type.rank != fn->val[g->to].type.rank ||
	    valstoredtype(fn, g->arg[0]) != DNone || valstoredtype(fn, g->to) != DNone)
		return -1;
	return d;
}

void
gatherfold(Fn *fn)
{
	unsigned char *phase = emalloc(fn->nval + 1);
	int i, d;

	phases(fn, phase);
	for (i = 0; i < fn->nins; i++) {
		dropattr(fn, &fn->ins[i], "via");
		dropattr(fn, &fn->ins[i], "folded");
	}
	for (i = 0; i < fn->nins; i++)
		if ((d = foldable(fn, phase, i)) >= 0) {
			putattr(fn, &fn->ins[i], mkattrint(fn->mod->arena, "via", 1));
			putattr(fn, &fn->ins[d], mkattrint(fn->mod->arena, "folded", 1));
		}
	free(phase);
}

/* The gather scatter j reads through, or -1: both marked, and still a
 * pair the pass would make (IR text may claim one that is not). */
int
viagather(const Fn *fn, int j)
{
	unsigned char *phase;
	int d;

	if (!attrint(&fn->ins[j], "via", 0) || (d = fn->val[fn->ins[j].arg[0]].def) < 0 ||
	    !attrint(&fn->ins[d], "folded", 0))
		return -1;
	phase = emalloc(fn->nval + 1);
	phases(fn, phase);
	d = foldable(fn, phase, j);
	free(phase);
	return d;
}

/* gather i runs no kernel and takes no memory: its one use reads through it */
bool
foldedgather(const Fn *fn, int i)
{
	Ref v = fn->ins[i].to;

	if (fn->ins[i].op != Ogather || !attrint(&fn->ins[i], "folded", 0))
		return false;
	for (int j = i + 1; j < fn->nins; j++)
		for (int k = 0; k < fn->ins[j].narg; k++)
			if (fn->ins[j].arg[k] == v)
				return viagather(fn, j) == i;
	return false;
}
