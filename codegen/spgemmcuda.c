/*
 * cuda's sparse-input GEMM: O[M, P] = A[M, K] @ B[K, P] under the
 * schedule sparse=W (ir/sched.c), for an A that is mostly zeros
 * (bag-of-words node features: Cora's are 1.3% non-zero).
 *
 * A warp takes a row of A (W rows a block, grid-stride over rows).  Its
 * lanes read the row 32 floats at a time, eight such reads in flight (a
 * 1 KiB run of the row, coalesced; K need not be a multiple of 32 or 4:
 * reads past K are zeros), and for each read a ballot says which lanes
 * hold a non-zero.  For each set bit, lowest first, the value comes from
 * its lane by a shuffle and every lane adds value * B[k, column] to the
 * outputs it owns (lane l: columns l, l + 32, ..., P <= SparseMaxP), B's
 * row read coalesced from L1/L2.  Each output is then one multiply-add
 * chain over A's non-zeros in k order: the reference kernel's chain but
 * for the steps whose a is zero, which add an exact zero where B is
 * finite, so the result is the dense GEMM's bit for bit (as the cpu
 * target's zero-skipping gnn_sgemm_sparse), whatever order warps and
 * blocks run in.  A NaN counts as a non-zero (it propagates as in the
 * dense form).  Correct for any A: a dense one only runs slower.
 *
 * A's rows are read as floats, not float4: K is often odd (1433), and a
 * row's start then is not 16-byte aligned; the eight independent loads
 * keep as many bytes in flight.
 */
#include "emit.h"

/* reads of 32 floats a warp has in flight */
enum { Reads = 8 };

void
emitspgemmcuda(E *e, int i, Args *a, Str *call)
{
	const Ins *in = &e->fn->ins[i];
	const Sched *s = &e->sched;
	long long K, P;
	int C, k, W = s->sparse, nepi;
	const char *O, *A, *B, *M, *opnd[EpilogueMax];
	bool bias[EpilogueMax];

	if (!e->cuda || e->p->phase[in->to] != PhaseForward || ty(e, in->to).dtype != DF32)
		die("codegen: a sparse-input GEMM outside cuda's forward");
	K = dimconstval(ty(e, in->arg[1]).dim[0]);
	P = dimconstval(ty(e, in->arg[1]).dim[1]);
	if (P > SparseMaxP || W < 1)
		die("codegen: a sparse-input GEMM of %lld columns under sparse=%d", P, W);
	C = (int)((P + 31) / 32);
	O = ptrarg(e, a, NULL, gemmstored(e, i), true, true);
	A = ptrarg(e, a, NULL, in->arg[0], false, true);
	B = ptrarg(e, a, NULL, in->arg[1], false, true);
	nepi = epioperands(e, i, a, opnd, bias);
	M = cdim(e, ty(e, in->arg[0]).dim[0]);

	out(e, "\n/* %%%s = matmul", irname(e, in->to));
	if (in->loc.file)
		out(e, " (%s:%d)", in->loc.file, in->loc.line);
	out(e, ": [M, %lld] @ [%lld, %lld], a warp a row of A adding B's rows of its non-zeros */\n", K, K, P);
	out(e, "GNN_DKERNEL_LB(" KNAME ", %d)(int64_t T_", 32 * W);
	for (k = 0; k < a->n; k++)
		out(e, ", %s", a->decl[k]);
	out(e, ")\n");
	blockopen(e->w);
	out(e, "const int l_ = threadIdx.x %% 32;\n\n");
	/* a warp's rows: the warp is uniform in r_, so every lane reaches
	 * each ballot and shuffle */
	wopen(e->w, "for (int64_t r_ = (int64_t)blockIdx.x * %d + threadIdx.x / 32; r_ < T_; r_ += (int64_t)gridDim.x * %d)", W, W);
	out(e, "const float *const a_ = %s + r_ * %lld;\n", A, K);
	out(e, "float acc_[%d];\n\nfor (int c_ = 0; c_ < %d; c_++)\n\tacc_[c_] = 0.0f;\n", C, C);
	wopen(e->w, "for (int64_t k0_ = 0; k0_ < %lld; k0_ += %d)", K, 32 * Reads);
	out(e, "float v_[%d];\n\n", Reads);
	out(e, "#pragma unroll\nfor (int u_ = 0; u_ < %d; u_++) {\n", Reads);
	out(e, "\tconst int64_t k_ = k0_ + u_ * 32 + l_;\n\n\tv_[u_] = k_ < %lld ? a_[k_] : 0.0f;\n}\n", K);
	out(e, "#pragma unroll\n");
	wopen(e->w, "for (int u_ = 0; u_ < %d; u_++)", Reads);
	/* NaN != 0: a NaN is a non-zero */
	out(e, "unsigned nz_ = __ballot_sync(0xffffffffu, v_[u_] != 0.0f);\n\n");
	wopen(e->w, "while (nz_)");
	out(e, "const int s_ = __ffs((int)nz_) - 1;\n");
	out(e, "const float x_ = __shfl_sync(0xffffffffu, v_[u_], s_);\n");
	out(e, "const float *const b_ = %s + (k0_ + u_ * 32 + s_) * %lld;\n\n", B, P);
	out(e, "nz_ &= nz_ - 1;\n");
	for (k = 0; k < C; k++) {
		/* a column past P: the lane idles (P % 32 != 0) */
		if ((k + 1) * 32 > P)
			out(e, "if (l_ + %d < %lld)\n\t", 32 * k, P);
		out(e, "acc_[%d] += x_ * b_[l_ + %d];\n", k, 32 * k);
	}
	wclose(e->w, "");
	wclose(e->w, "");
	wclose(e->w, "");
	for (k = 0; k < C; k++) {
		if ((k + 1) * 32 > P)
			out(e, "if (l_ + %d < %lld)\n\t", 32 * k, P);
		if (!nepi) {
			out(e, "%s[r_ * %lld + l_ + %d] = acc_[%d];\n", O, P, 32 * k, k);
			continue;
		}
		/* the epilogue on the lane's complete sum */
		blockopen(e->w);
		out(e, "const int ni_ = l_ + %d;\nfloat v_ = acc_[%d];\n\n", 32 * k, k);
		epiemit(e, i, opnd, bias, "v_", pf(e, "r_ * %lld + ni_", P), "ni_");
		out(e, "%s[r_ * %lld + ni_] = v_;\n", O, P);
		wclose(e->w, "");
	}
	wclose(e->w, "");
	wclose(e->w, "");
	/* a warp a row, W rows a block */
	sput(call, "GNN_RLAUNCH(" KNAME ", %s, 32, %d, %s", launchlit(e, KNAME), W, M);
	for (k = 0; k < a->n; k++)
		sput(call, ", %s", a->val[k]);
	sput(call, ");");
}
