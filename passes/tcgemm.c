/*
 * tcgemm: under --precision=bf16 on the cuda target, a forward dense
 * transform by loaded weights of at least TcElems elements, small enough
 * to join a row kernel (rowmatmul), stays its own GEMM instead (the mark tile = 1, which fuse's
 * rowmatmul reads), and moves up to just after its operands.
 *
 * Such a product multiplies two bfloat16 operands, which the tiled GEMM
 * does on tensor cores (codegen/gemmcuda.c's bfloat16 form), where a row
 * kernel multiplies one row at a time by FMAs, a load of the weights' row
 * piece and of the operand per k-step and output a lane takes.  Modeled
 * on the products-shaped graph (--report=cost), SAGE's 128 -> 47 root
 * transform inside its row kernel is 5.0 ms of L1 wavefronts; as a GEMM,
 * 0.6 ms plus its 47-wide bfloat16 output written and read back.  Small
 * products (Cora's 16 -> 7) keep the row form: a launch costs more there.
 *
 * Moving up: the product's result is read by work after the aggregation
 * it sat beside (SAGE's lin_r beside lin_l's mean); made before that
 * aggregation's row kernel starts, the kernel reads it and finishes the
 * row (the sum, the log_softmax) instead of ending where the product
 * broke the run.  It goes to just after the later of its operands, but
 * not before forward work starts (hoist's order).
 *
 * Only a mark and a move: what fuse groups is fuse's decision.
 */
#include <stdlib.h>

#include "passes.h"

/* the least weights (K * P) worth a launch of their own */
enum { TcElems = 1024 };

void
tcgemm(Fn *fn)
{
	unsigned char *phase = emalloc(fn->nval + 1);

	filluse(fn);
	phases(fn, phase);
	for (int i = 0; i < fn->nins; i++) {
		Ins *in = &fn->ins[i];
		const Type *b;
		int at = 0;

		/* larger weights never join a row kernel (rowmatmul) */
		if (!weightproduct(fn, in, phase) || !rowmatmul(fn, in))
			continue;
		b = &fn->val[in->arg[1]].type;
		if (dimconstval(b->dim[0]) * dimconstval(b->dim[1]) < TcElems)
			continue;
		putattr(fn, in, mkattrint(fn->mod->arena, "tile", 1));
		for (int k = 0; k < in->narg; k++) {
			int d = fn->val[in->arg[k]].def;
			if (d + 1 > at)
				at = d + 1;
		}
		while (at < i && phase[fn->ins[at].to] != PhaseForward)
			at++;
		if (at < i)
			moveins(fn, i, at);   /* keeps val[].def */
	}
	free(phase);
}
