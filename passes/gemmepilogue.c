/*
 * gemmepilogue: cuda's tiled GEMMs apply the elementwise work after them
 * (a Linear's bias, the sum of two transforms, an activation) to their
 * register tile before storing it (the cuda target).
 *
 * A dense transform that is its own GEMM (too many weights for a row
 * kernel's in-row product: fuse leaves it alone) wrote its [M, P] result,
 * and the work after it read that back in kernels of its own.  SAGE's
 * first layer, relu(a @ Wl + b + x @ Wr), was four kernels over five
 * [N, 128] values, three of them live at once: 1724 bytes a node of
 * arena where two values would do.  Now the chain after a GEMM joins
 * it: each step reads the value before it, which nothing else reads,
 * and is elementwise of the GEMM's shape, its other operand (if any)
 * either a row vector of P (a bias) or an [M, P] value made before the
 * GEMM runs.  The steps move up to follow the GEMM, and the GEMM and
 * its steps become one fusion group (contiguous, as every group), whose
 * matmul carries `epilogue = 1`: the group is a dense kernel (schedule.c),
 * run as the tiled GEMM (gemmcuda.c) and nothing else.  A step that was
 * the first of a row kernel's group leaves that group; a group left with
 * one instruction is none.
 *
 * The arithmetic is the chain's own, in float32 on each output once its
 * sum over k is complete (split K: after the parts are added), so the
 * bits are those of the kernels it replaces.  The pass runs after fuse
 * and before the precision pass: values inside the group are not stored,
 * so not rounded to 16 bits.
 */
#include <stdlib.h>

#include "passes.h"

/* a dense transform that can head an epilogue: its own forward kernel,
 * a float32 [M, K] @ [K, P] */
static bool
gemmhead(const Fn *fn, const unsigned char *phase, const Ins *in)
{
	return isdense(fn, in) && phase[in->to] == PhaseForward && fn->val[in->to].type.dtype == DF32 &&
	       fn->val[in->arg[0]].type.rank == 2 && !attrint(in, "tile", 0);
}

/* instruction j reads v as the next step of the epilogue of the GEMM at
 * instruction head: elementwise, v's type, v its only reader; its other
 * operand a bias of P or a value of v's type, ready before head */
static bool
epistep(const Fn *fn, const unsigned char *phase, int head, Ref v, int j)
{
	const Ins *in = &fn->ins[j];
	const Type *t = &fn->val[v].type;
	unsigned fl = opinfo[in->op].flags;
	int k;

	if (phase[in->to] != PhaseForward || !typeeq(fn->val[in->to].type, *t))
		return false;
	if ((fl & Falias) || (!((fl & Felem) && in->narg == 1) && !((fl & Fbin) && in->narg == 2)))
		return false;
	for (k = 0; k < in->narg; k++) {
		Ref o = in->arg[k];
		const Type *ot = &fn->val[o].type;
		int d = fn->val[o].def;

		if (o == v)
			continue;
		if (d >= head || ot->kind != TTensor || ot->dtype != DF32)
			return false;
		if (!(ot->rank == 1 && ot->dim[0] == t->dim[1]) && !typeeq(*ot, *t))
			return false;
	}
	return in->arg[0] == v || (in->narg == 2 && in->arg[1] == v);
}

/* the one instruction that reads v (once), if v is not returned; else -1 */
static int
onlyreader(const Fn *fn, Ref v)
{
	int at;

	return usecount(fn, v, &at) == 1 ? at : -1;
}

int
epilogueend(const Fn *fn, int i)
{
	const Ins *in = &fn->ins[i];
	int64_t g = attrint(in, "group", -1);
	unsigned char *phase;
	int j, end = -1;

	if (g < 0 || !attrint(in, "epilogue", 0) || (i > 0 && attrint(&fn->ins[i - 1], "group", -1) == g))
		return -1;
	phase = emalloc(fn->nval + 1);
	phases(fn, phase);
	if (gemmhead(fn, phase, in)) {
		Ref v = in->to;
		for (j = i + 1; j < fn->nins && attrint(&fn->ins[j], "group", -1) == g; j++) {
			if (j - i > EpilogueMax || onlyreader(fn, v) != j || !epistep(fn, phase, i, v, j))
				break;
			v = fn->ins[j].to;
		}
		if (j > i + 1 && (j >= fn->nins || attrint(&fn->ins[j], "group", -1) != g))
			end = j - 1;
	}
	free(phase);
	return end;
}

/* the largest group number in fn, or -1 */
static int64_t
lastgroup(const Fn *fn)
{
	int64_t g = -1;

	for (int i = 0; i < fn->nins; i++)
		if (attrint(&fn->ins[i], "group", -1) > g)
			g = attrint(&fn->ins[i], "group", -1);
	return g;
}

/* instruction j, the first of its group, leaves it: the group's
 * schedule (its first instruction's) passes to the next, and a group
 * left with one instruction is none */
static void
leavegroup(Fn *fn, int j)
{
	int64_t g = attrint(&fn->ins[j], "group", -1);
	const Attr *s = findattr(&fn->ins[j], "sched");
	int n = 0;

	if (g < 0)
		return;
	if (s && j + 1 < fn->nins && attrint(&fn->ins[j + 1], "group", -1) == g)
		putattr(fn, &fn->ins[j + 1], *s);
	dropattr(fn, &fn->ins[j], "sched");
	dropattr(fn, &fn->ins[j], "group");
	for (int k = j + 1; k < fn->nins && attrint(&fn->ins[k], "group", -1) == g; k++)
		n++;
	if (n == 1) {   /* its schedule was the row kernel's */
		dropattr(fn, &fn->ins[j + 1], "group");
		dropattr(fn, &fn->ins[j + 1], "sched");
	}
}

void
gemmepilogue(Fn *fn)
{
	unsigned char *phase = emalloc(fn->nval + 1);
	int64_t grp = lastgroup(fn) + 1;

	filluse(fn);
	phases(fn, phase);
	for (int i = 0; i < fn->nins; i++) {
		Ins *in = &fn->ins[i];
		int at = i, j;
		Ref v = in->to;

		if (attrint(in, "group", -1) >= 0 || !gemmhead(fn, phase, in))
			continue;
		while (at - i < EpilogueMax && (j = onlyreader(fn, v)) > at && epistep(fn, phase, i, v, j)) {
			int64_t g = attrint(&fn->ins[j], "group", -1);
			/* only a group's first instruction can leave it whole */
			if (g >= 0 && j > 0 && attrint(&fn->ins[j - 1], "group", -1) == g)
				break;
			leavegroup(fn, j);
			moveins(fn, j, at + 1);   /* (keeps val[].def) */
			v = fn->ins[++at].to;
		}
		if (at == i)
			continue;
		for (j = i; j <= at; j++) {
			dropattr(fn, &fn->ins[j], "sched");
			putattr(fn, &fn->ins[j], mkattrint(fn->mod->arena, "group", grp));
		}
		putattr(fn, &fn->ins[i], mkattrint(fn->mod->arena, "epilogue", 1));
		grp++;
		i = at;
	}
	free(phase);
}
