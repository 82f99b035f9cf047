/*
 * tilegemm: under --precision=bf16 on the cpu target, a forward dense
 * transform whose depth K is a multiple of 32 stays its own GEMM instead
 * of joining a row kernel (the mark tile = 1, which fuse's rowmatmul
 * reads).
 *
 * A row kernel multiplies one row at a time (gnn_bgemv): the weights
 * pass through the multiplier once per row, on the tile unit as one-row
 * tiles or on vdpbf16ps, both about 40 ms for the 169,343 rows of the
 * arxiv-shaped graph at 128 x 40.  As a GEMM (gnn_bgemm) the AMX tiles
 * take 16 rows a step: about 10 ms, plus the row's 256 bytes written and
 * read back, where a row kernel kept it in registers.  K a multiple of
 * 32 is where gnn_bgemv uses the tiles too (it reads the packed weights
 * in place and cannot pad them), so the same bits either way
 * (tests/unit/test_bgemm.c); float32 models keep the row form, whose
 * row products are FMA chains as fast as the GEMM's.
 *
 * Only a mark: what fuse then groups is fuse's decision, and memplan
 * gives the product's result a slot as any kernel's.
 */
#include <stdlib.h>

#include "passes.h"

bool
weightproduct(const Fn *fn, const Ins *in, const unsigned char *phase)
{
	Ref w;

	if (!isdense(fn, in) || phase[in->to] != PhaseForward)
		return false;
	w = in->arg[1];
	return (phase[w] == PhaseLoad || phase[w] == PhaseParam) && fn->val[w].type.dtype == DF32;
}

void
tilegemm(Fn *fn)
{
	unsigned char *phase = emalloc(fn->nval + 1);

	filluse(fn);
	phases(fn, phase);
	for (int i = 0; i < fn->nins; i++) {
		Ins *in = &fn->ins[i];

		/* constant depth a multiple of 32 */
		if (weightproduct(fn, in, phase) && dimconstval(fn->val[in->arg[1]].type.dim[0]) % 32 == 0)
			putattr(fn, in, mkattrint(fn->mod->arena, "tile", 1));
	}
	free(phase);
}
