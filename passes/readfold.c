/*
 * readfold: a kernel reads its operand through the gather or the
 * transpose that made it (the cpu target).
 *
 * A training step's backward is full of values made only to be read
 * once, in another layout, by the next kernel:
 *   - the backward of an aggregation is a gather of the gradient's rows
 *     by dst into an [E, F] array, then a scatter of it by src into
 *     nodes. Fusion's row kernels walk the edges into a node, along dst,
 *     so the pair stayed two kernels, and the gather wrote E x F floats
 *     that the scatter read back: 45 MB each way on PubMed at F = 128;
 *   - a weight's gradient dW = dY^T @ X transposed dY, [N, M], into
 *     [M, N] for its GEMM: 10 MB written and read back at M = 128;
 *   - a sum over rows of a product (batch norm's sum((x - mu)^2) and, in
 *     backward, its weight's sum(dY * x_hat)) wrote the [N, F] product
 *     for the column sum to read back; so did the sum of a negation
 *     (batch norm's backward sums -dC for the mean's adjoint);
 *   - a Linear's bias was a pass of its own over the [N, F] its GEMM had
 *     just written (before batch norm, which no row kernel takes).
 * When such a value has no other use (a transpose: no use but weight
 * gradients, as a heterogeneous layer's relations into one node type
 * each read the one dY^T), this pass marks its instruction "folded" and
 * each reader "via": the scatter's kernel reads row idx[e]
 * of the gather's table for message e; the weight-gradient GEMM reads
 * dY as it is (gnn_sgemm_wgradt reads it transposed in place); the
 * column sum multiplies the product's operands (negates the negation's)
 * as it walks them; the bias's add runs the GEMM (gemmbias), adding the
 * bias as blocks of rows finish. A
 * product that fusion put last in a row kernel leaves the kernel (a
 * kernel of one instruction is no kernel). The
 * folded instruction runs no kernel and takes no arena memory
 * (forwardkernels, needsstorage), and its operand stays live until the
 * reader (memplan). Each sum is the same chain in the same order, so the
 * bits are unchanged.
 *
 * Only what the cpu target's kernels can read through qualifies: a
 * scatter along a bind-time segment plan, a weight gradient in the form
 * codegen gives gnn_sgemm_wgrad (wgradmatmul), a float sum or mean over
 * a dim before the last (colsum: codegen's column walk) of a product of
 * two operands of its own type, none of it stored in 16
 * bits (whose kernels read through the halfaccess rewrite). The pipeline
 * runs it for the cpu target only (pipeline.c), before memplan.
 */
#include <stdlib.h>

#include "passes.h"

/* uses of v as an operand or a result */
bool
wgradmatmul(const Fn *fn, const Ins *in)
{
	const Type *a, *b;

	if (in->op != Omatmul || fn->val[in->to].type.dtype != DF32)
		return false;
	a = &fn->val[in->arg[0]].type;
	b = &fn->val[in->arg[1]].type;
	return a->rank == 2 && b->rank == 2 && dimisconst(a->dim[0]) && dimisconst(b->dim[1]) &&
	       !dimisconst(a->dim[1]) && dimconstval(a->dim[0]) >= 1 && dimconstval(a->dim[0]) * 4 <= 1 << 18;
}

/* a plain 2-D transpose */
static bool
swap2(const Fn *fn, const Ins *in)
{
	const Attr *p = findattr(in, "perm");

	return in->op == Otranspose && fn->val[in->to].type.rank == 2 && p && p->kind == AInts && p->n == 2 &&
	       p->u.is[0] == 1 && p->u.is[1] == 0;
}

/* a float sum or mean over a dim before the last: the cpu target's
 * column walk (codegen's colreducebody) */
bool
colsum(const Fn *fn, const Ins *in)
{
	const Type *t;
	int64_t d;

	if ((in->op != Osum && in->op != Omean) || in->narg != 1)
		return false;
	t = &fn->val[in->arg[0]].type;
	d = attrint(in, "dim", 0);
	return t->kind == TTensor && dtypeisfloat(t->dtype) && d >= 0 && d + 1 < t->rank &&
	       valstoredtype(fn, in->arg[0]) == DNone && valstoredtype(fn, in->to) == DNone;
}

/* d = mul(a, b) or neg(a), its operands of its type, none of them
 * stored in 16 bits */
static bool
plainproduct(const Fn *fn, const Ins *d)
{
	if (!(d->op == Omul && d->narg == 2) && !(d->op == Oneg && d->narg == 1))
		return false;
	for (int k = 0; k < d->narg; k++)
		if (!typeeq(fn->val[d->arg[k]].type, fn->val[d->to].type) || valstoredtype(fn, d->arg[k]) != DNone)
			return false;
	return true;
}

/* grouped instruction di is the last of its fusion group, which it
 * may leave without making the group's run two */
static bool
lastingroup(const Fn *fn, int di)
{
	return di + 1 >= fn->nins || attrint(&fn->ins[di + 1], "group", -1) != attrint(&fn->ins[di], "group", -1);
}

/* The product a forward column sum j (of no group) reads, made in
 * forward and read by nothing else, whatever its group; else -1 */
static int
sumofproduct(const Fn *fn, const unsigned char *phase, int j)
{
	const Ins *in = &fn->ins[j];
	int di;

	if (!colsum(fn, in) || phase[in->to] != PhaseForward || attrint(in, "group", -1) >= 0 ||
	    (di = fn->val[in->arg[0]].def) < 0)
		return -1;
	return plainproduct(fn, &fn->ins[di]) && phase[fn->ins[di].to] == PhaseForward &&
	       usecount(fn, fn->ins[di].to, NULL) == 1 ? di : -1;
}

/* A Linear's bias added to a dense transform of its own kernel that
 * nothing else reads, all float32 and none of it stored in 16 bits: the
 * GEMM the add j reads through (gnn_sgemm_bias adds the bias while a
 * block of rows is in cache), or -1 */
static int
gemmbias(const Fn *fn, const unsigned char *phase, int j)
{
	const Ins *in = &fn->ins[j], *d;
	const Type *b;
	int di;

	if (in->op != Oadd || in->narg != 2 || phase[in->to] != PhaseForward || attrint(in, "group", -1) >= 0 ||
	    (di = fn->val[in->arg[0]].def) < 0)
		return -1;
	d = &fn->ins[di];
	b = &fn->val[in->arg[1]].type;
	if (!isdense(fn, d) || phase[d->to] != PhaseForward || attrint(d, "group", -1) >= 0 || usecount(fn, d->to, NULL) != 1 ||
	    fn->val[d->to].type.dtype != DF32 || !typeeq(fn->val[d->to].type, fn->val[in->to].type))
		return -1;
	if (b->kind != TTensor || b->rank != 1 || b->dtype != DF32 || b->dim[0] != fn->val[d->to].type.dim[1] ||
	    (phase[in->arg[1]] != PhaseParam && phase[in->arg[1]] != PhaseLoad))
		return -1;
	if (valstoredtype(fn, d->arg[0]) != DNone || valstoredtype(fn, d->arg[1]) != DNone || valstoredtype(fn, in->to) != DNone ||
	    valstoredtype(fn, in->arg[1]) != DNone)
		return -1;
	/* weights rounded to bfloat16 take gnn_bgemm, which adds no bias */
	for (int k = 0; k < 2; k++)
		if (fn->val[d->arg[k]].def >= 0 && rounddtype(&fn->ins[fn->val[d->arg[k]].def]) != DNone)
			return -1;
	return di;
}

const Ins *
denseof(const Fn *fn, int i)
{
	int d;

	if (isdense(fn, &fn->ins[i]))
		return &fn->ins[i];
	d = fn->ins[i].op == Oadd ? viafold(fn, i) : -1;
	return d >= 0 ? &fn->ins[d] : NULL;
}

/* j is a weight gradient of the form codegen gives gnn_sgemm_wgrad, of
 * no group, made in forward, its other operand and result in float32 */
static bool
wgradreader(const Fn *fn, const unsigned char *phase, int j)
{
	const Ins *in = &fn->ins[j];

	return wgradmatmul(fn, in) && phase[in->to] == PhaseForward && attrint(in, "group", -1) < 0 &&
	       valstoredtype(fn, in->arg[1]) == DNone && valstoredtype(fn, in->to) == DNone;
}

/* Every use of transpose di's result is a weight gradient reading it as
 * dY^T: the one transpose of a gradient that feeds several weights (a
 * heterogeneous layer's relations into one node type, each with its
 * Linear) is read in place by each, as it is by one */
static bool
transposereaders(const Fn *fn, const unsigned char *phase, int di)
{
	Ref v = fn->ins[di].to;
	int n = 0;

	for (int k = 0; k < fn->nret; k++)
		if (fn->ret[k] == v)
			return false;
	for (int j = di + 1; j < fn->nins; j++)
		for (int k = 0; k < fn->ins[j].narg; k++)
			if (fn->ins[j].arg[k] == v) {
				if (k != 0 || !wgradreader(fn, phase, j))
					return false;
				n++;
			}
	return n >= 1;
}

/* the instruction reader j may read through, or -1 */
static int
foldable(const Fn *fn, const unsigned char *phase, int j)
{
	const Ins *in = &fn->ins[j], *d;
	int di;
	bool scatter = in->op == Oscatter_sum || in->op == Oscatter_mean || in->op == Oscatter_max;

	if (in->op == Oadd)
		return gemmbias(fn, phase, j);
	if (colsum(fn, in))
		return (di = sumofproduct(fn, phase, j)) >= 0 && attrint(&fn->ins[di], "group", -1) < 0 ? di : -1;
	if ((!scatter && !wgradmatmul(fn, in)) || phase[in->to] != PhaseForward ||
	    attrint(in, "group", -1) >= 0 || (di = fn->val[in->arg[0]].def) < 0)
		return -1;
	if (scatter && phase[in->arg[1]] != PhaseBind)
		return -1;
	d = &fn->ins[di];
	if (scatter ? d->op != Ogather || fn->val[d->arg[0]].type.rank != fn->val[d->to].type.rank : !swap2(fn, d))
		return -1;
	if (phase[d->to] != PhaseForward || attrint(d, "group", -1) >= 0 ||
	    (scatter ? usecount(fn, d->to, NULL) != 1 : !transposereaders(fn, phase, di)) ||
	    valstoredtype(fn, d->arg[0]) != DNone || valstoredtype(fn, d->to) != DNone)
		return -1;
	return di;
}

void
readfold(Fn *fn)
{
	unsigned char *phase = emalloc(fn->nval + 1);
	int i, d;

	phases(fn, phase);
	for (i = 0; i < fn->nins; i++) {
		dropattr(fn, &fn->ins[i], "via");
		dropattr(fn, &fn->ins[i], "folded");
	}
	/* a product that only a column sum reads leaves the end of its row
	 * kernel (fusion put it there: it is a row's elementwise work), and
	 * a kernel left with one instruction is none */
	for (i = 0; i < fn->nins; i++) {
		int di = sumofproduct(fn, phase, i);
		int64_t g;

		if (di < 0 || (g = attrint(&fn->ins[di], "group", -1)) < 0 || !lastingroup(fn, di))
			continue;
		dropattr(fn, &fn->ins[di], "group");
		if (di >= 1 && attrint(&fn->ins[di - 1], "group", -1) == g &&
		    (di < 2 || attrint(&fn->ins[di - 2], "group", -1) != g))
			dropattr(fn, &fn->ins[di - 1], "group");
	}
	for (i = 0; i < fn->nins; i++)
		if ((d = foldable(fn, phase, i)) >= 0) {
			putattr(fn, &fn->ins[i], mkattrint(fn->mod->arena, "via", 1));
			putattr(fn, &fn->ins[d], mkattrint(fn->mod->arena, "folded", 1));
		}
	free(phase);
}

/* The instruction reader j reads through, or -1: both marked, and still
 * a pair the pass would make (IR text may claim one that is not). */
int
viafold(const Fn *fn, int j)
{
	unsigned char *phase;
	int d;

	if (!attrint(&fn->ins[j], "via", 0) || fn->ins[j].narg < 1 || (d = fn->val[fn->ins[j].arg[0]].def) < 0 ||
	    !attrint(&fn->ins[d], "folded", 0))
		return -1;
	phase = emalloc(fn->nval + 1);
	phases(fn, phase);
	d = foldable(fn, phase, j);
	free(phase);
	return d;
}

/* instruction i runs no kernel and takes no memory: every use reads
 * through it (one, but for a transpose that several weight gradients
 * read) */
bool
folded(const Fn *fn, int i)
{
	Ref v = fn->ins[i].to;
	int n = 0;

	if (!attrint(&fn->ins[i], "folded", 0))
		return false;
	for (int j = i + 1; j < fn->nins; j++)
		for (int k = 0; k < fn->ins[j].narg; k++)
			if (fn->ins[j].arg[k] == v) {
				if (viafold(fn, j) != i)
					return false;
				n++;
			}
	return n >= 1;
}
