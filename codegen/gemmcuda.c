/*
 * cuda's dense transforms as tiled GEMMs: O[M, P] = A[M, K] @ B[K, P],
 * K and P constants, M the node count, under a schedule bm, bn, bk, tm,
 * tn (ir/sched.c).
 *
 * A block computes a bm x bn tile of O (grid-stride over tiles, so any
 * grid covers M).  For each bk-deep slab of K it stages A's bm x bk
 * (transposed: a thread's rows are contiguous along k) and B's bk x bn
 * in shared memory, float4 at a time from global memory where K (or P)
 * is a multiple of 4 and the pointer is 16-byte aligned, masked past M
 * and P, then every thread updates its tm x tn register tile from float4
 * reads of shared memory.  K's last, shorter slab is a second copy of
 * the slab loop with its own constant depth, so every output is exactly
 * one multiply-add chain over k = 0 .. K-1 in order, whatever the
 * tiling and the order blocks run in: the reference kernel's arithmetic,
 * hence its bits (on one device: nvcc contracts into FMAs, the
 * emulated device's C++ does not).
 *
 * With ksplit (split K) and output tiles too few to fill the device,
 * the launch runs each tile as gnn_gemm_ksplit's S parts (the count is
 * a function of M, so a bound graph always gets the same): block b
 * takes tile b % tiles and part p = b / tiles, the part's run of full
 * slabs (the last part also the short slab), and writes its sums to the
 * output (part 0) or to part p's copy of the output in a scratch
 * segment; a second kernel adds parts 1 .. S-1 to the output in that
 * order.  Each output is then S chains added in a fixed order: bitwise
 * the same on every run, whatever order blocks and threads run in.
 *
 * With --gpu-math=tf32 the same staging feeds tensor cores: each warp
 * owns tm*tn/4 tiles of 16 x 8 outputs and steps through k eight at a
 * time with GNN_MMA_TF32 (mma.sync m16n8k8 .tf32, FP32 accumulate; the
 * prelude in emit.c spells it for nvcc and for the emulated device), its
 * operands rounded to TF32 by GNN_TF32; a short last slab is padded with
 * zeros to a multiple of 8.
 *
 * Under --precision=bf16, a product whose weights are rounded to
 * bfloat16 multiplies bfloat16 values (docs/precision.md): the same
 * staging then feeds bfloat16 tensor cores, whatever --gpu-math says
 * (the products are exact in both, and the bf16 step takes 16 k at a
 * time): GNN_MMA_BF16, mma.sync m16n8k16 .bf16 with FP32 accumulation,
 * the operands packed two to a register from the staged floats (exact:
 * each is a bfloat16 value), a short slab padded to a multiple of 16.
 * The FP32 form of the same kernel follows it under #if for devices
 * before sm_80 (GNN_TC_BF16, emit.c's prelude).
 *
 * Under --precision (docs/precision.md) A may be 16-bit words and O
 * 16-bit: A is read 4 words at a time where K is a multiple of 4 and the
 * pointer 8-byte aligned, else element by element (halfaccess converts each read;
 * under bf16 a float A is rounded to bfloat16 as it is staged, matmula),
 * O is stored element by element, rounded once at the store.  Split K
 * then keeps every part, part 0 too, in float32 in the scratch, and the
 * sum kernel rounds the total: a rounded part 0 would round twice.
 */
#include <string.h>

#include "../runtime/gnnrt.h"
#include "emit.h"

/* one tiled GEMM: its constants and the names of its operands */
typedef struct G {
	E *e;
	const char *O, *A, *B;
	long long K, P;
	int bm, bn, bk, tm, tn, nt, lda, ldb, ntn;
	bool tf32, avec, bvec, ovec, split, o16;
	int a16;                 /* A's 16-bit words (a DType), read 4 at a time: avec's form */
	bool bf16;               /* bfloat16 tensor cores (gemmbf16) */
	bool tc;                 /* this copy's tensor-core form: tf32 or bf16 */
	int ksplit;
	const Ins *in;
	/* the epilogue (passes/gemmepilogue.c): nepi steps after instruction
	 * at (the matmul), each step's other operand's parameter (NULL: none)
	 * and whether it is a bias (a row vector of P) */
	int at, nepi;
	Ref to;                  /* the value stored: in->to, or the epilogue's last */
	const char *opnd[EpilogueMax];
	bool bias[EpilogueMax];
} G;

/* the scratch a split-K GEMM may need, in floats, and the most it gets:
 * the largest (S - 1) * M * P over the tile counts that split (fewer
 * than 264), at most 4M floats (16 MiB: past it gnn_gemm_ksplit takes
 * fewer parts) */
enum { KsplitCap = 1 << 22 };

int64_t
gemmkscratch(const Sched *s, int64_t K, int64_t P)
{
	int64_t most = 0, ntn = (P + s->bn - 1) / s->bn;

	for (int64_t mt = 1; mt * ntn < 264; mt++) {
		int64_t mp = mt * s->bm * P, n = gnn_gemm_ksplit(mt * ntn, K / s->bk, s->ksplit, mp, INT64_MAX);
		if ((n - 1) * mp > most)
			most = (n - 1) * mp;
	}
	return most < KsplitCap ? most : KsplitCap;
}

/* o16: a 16-bit output, whose part 0 is in the scratch too (the
 * scratch then holds one part more than gnn_gemm_ksplit's cap counts) */
int
gemmparts(const Sched *s, int64_t M, int64_t K, int64_t P, bool o16)
{
	int64_t tiles = (M + s->bm - 1) / s->bm * ((P + s->bn - 1) / s->bn);

	if (s->ksplit < 2 || K / s->bk < 2)
		return 1;
	return gnn_gemm_ksplit(tiles, K / s->bk, s->ksplit, M * P, gemmkscratch(s, K, P) - (o16 ? M * P : 0));
}

bool
gemmbf16(const Fn *fn, const Ins *in, const Sched *s)
{
	int d = in->narg > 1 ? fn->val[in->arg[1]].def : -1;

	/* its B rows are 4 floats longer (kernel()): within 48 KiB */
	return in->op == Omatmul && s->bm && s->bk % 16 == 0 && d >= 0 && rounddtype(&fn->ins[d]) == DBF16 &&
	       valstoredtype(fn, in->arg[1]) == DNone && 4 * s->bk * (s->bm + 4 + s->bn + 4) <= 48 * 1024;
}

/* the tensor-core form's k-step */
static int
kstep(const G *g)
{
	return g->bf16 ? 16 : 8;
}

/*
 * Load rows [0, depth) of the slab at k0_ into shared memory: A's bm
 * rows transposed into as_ (row k of as_ holds k's column of A), B's
 * rows into bs_.  With pad, rows from depth to the next multiple of the
 * tensor-core form's k-step are zeros.  A row past M, a column
 * past P, are zeros.
 */
static void
loadslab(G *g, int depth, bool pad)
{
	E *e = g->e;
	int rows = pad ? (depth + kstep(g) - 1) / kstep(g) * kstep(g) : depth;

	if (g->avec || g->a16) {
		/* four along k in one load: float4 of float32, or 8 bytes of
		 * 16-bit words (a quarter of the element-by-element staging's
		 * dependent loads).  K % 4 == 0 keeps a vector inside K, and a
		 * padded slab's depth is a multiple of 4 too */
		static const char *const f4[4] = {"v_.x", "v_.y", "v_.z", "v_.w"};
		out(e, "if (av_)\n");
		out(e, "\tfor (int q_ = threadIdx.x; q_ < %d; q_ += %d) {\n", g->bm * rows / 4, g->nt);
		out(e, "\t\tconst int r_ = q_ / %d, c_ = q_ %% %d * 4;\n", rows / 4, rows / 4);
		out(e, "\t\tconst int64_t m_ = m0_ + r_;\n");
		out(e, "\t\t%s;\n", g->avec ? "float4 v_ = make_float4(0.0f, 0.0f, 0.0f, 0.0f)" : "uint64_t v_ = 0");
		out(e, "\t\tif (m_ < M_%s)\n\t\t\tv_ = *(const %s *)&%s[m_ * %lld + k0_ + c_];\n",
		    rows > depth ? pf(e, " && c_ < %d", depth) : "", g->avec ? "float4" : "uint64_t", g->A, g->K);
		for (int h = 0; h < 4; h++)
			out(e, "\t\tas_[(c_ + %d) * %d + r_] = %s;\n", h, g->lda,
			    matmula(e, g->in, g->avec ? f4[h] : pf(e, "gnn_ld_%s((uint16_t)(v_ >> %d))", dtypename(g->a16), 16 * h)));
		out(e, "\t}\nelse\n");
		e->w->ind++;
	}
	/* consecutive threads along k: a warp reads a run of one row */
	out(e, "for (int q_ = threadIdx.x; q_ < %d; q_ += %d) {\n", g->bm * rows, g->nt);
	out(e, "\tconst int r_ = q_ / %d, c_ = q_ %% %d;\n\tconst int64_t m_ = m0_ + r_;\n", rows, rows);
	out(e, "\tas_[c_ * %d + r_] = m_ < M_%s ? %s : 0.0f;\n}\n", g->lda, rows > depth ? pf(e, " && c_ < %d", depth) : "",
	    matmula(e, g->in, pf(e, "%s[m_ * %lld + k0_ + c_]", g->A, g->K)));
	if (g->avec || g->a16)
		e->w->ind--;
	if (g->bvec) {
		out(e, "if (bv_)\n");
		out(e, "\tfor (int q_ = threadIdx.x; q_ < %d; q_ += %d) {\n", rows * g->bn / 4, g->nt);
		out(e, "\t\tconst int c_ = q_ / %d, n_ = q_ %% %d * 4;\n", g->bn / 4, g->bn / 4);
		out(e, "\t\tfloat4 v_ = make_float4(0.0f, 0.0f, 0.0f, 0.0f);\n");
		out(e, "\t\tif (n0_ + n_ < %lld%s)\n\t\t\tv_ = *(const float4 *)&%s[(k0_ + c_) * %lld + n0_ + n_];\n", g->P,
		    rows > depth ? pf(e, " && c_ < %d", depth) : "", g->B, g->P);
		out(e, "\t\t*(float4 *)&bs_[c_ * %d + n_] = v_;\n\t}\nelse\n", g->ldb);
		e->w->ind++;
	}
	/* consecutive threads along n: a warp reads a run of one row of B */
	out(e, "for (int q_ = threadIdx.x; q_ < %d; q_ += %d) {\n", rows * g->bn, g->nt);
	out(e, "\tconst int c_ = q_ / %d, n_ = q_ %% %d;\n", g->bn, g->bn);
	out(e, "\tbs_[c_ * %d + n_] = n0_ + n_ < %lld%s ? %s[(k0_ + c_) * %lld + n0_ + n_] : 0.0f;\n}\n", g->ldb, g->P,
	    rows > depth ? pf(e, " && c_ < %d", depth) : "", g->B, g->P);
	if (g->bvec)
		e->w->ind--;
}

/* n floats from shared memory at index expression at (16-byte aligned
 * when n is a multiple of 4) into the local array dst */
static void
sharedrun(G *g, const char *dst, const char *src, const char *at, int n)
{
	int j;

	for (j = 0; j + 4 <= n && n % 4 == 0; j += 4)
		out(g->e, "{ const float4 v_ = *(const float4 *)&%s[%s + %d]; %s[%d] = v_.x; %s[%d] = v_.y; %s[%d] = v_.z; %s[%d] = v_.w; }\n",
		    src, at, j, dst, j, dst, j + 1, dst, j + 2, dst, j + 3);
	for (j = n % 4 == 0 ? n : 0; j < n; j++)
		out(g->e, "%s[%d] = %s[%s + %d];\n", dst, j, src, at, j);
}

/* the slab's depth k-steps of the register tile (FP32) */
static void
fmaslab(G *g, int depth)
{
	E *e = g->e;

	/* unrolled by 8, not whole: ptxas kept a whole slab's shared loads
	 * in flight (127 registers a thread at tm = tn = 4, 95 this way) */
	out(e, "#pragma unroll 8\n");
	wopen(e->w, "for (int kk_ = 0; kk_ < %d; kk_++)", depth);
	out(e, "float a_[%d], b_[%d];\n", g->tm, g->tn);
	sharedrun(g, "a_", "as_", pf(e, "kk_ * %d + ty_ * %d", g->lda, g->tm), g->tm);
	sharedrun(g, "b_", "bs_", pf(e, "kk_ * %d + tx_ * %d", g->ldb, g->tn), g->tn);
	out(e, "#pragma unroll\nfor (int i_ = 0; i_ < %d; i_++)\n", g->tm);
	out(e, "#pragma unroll\n\tfor (int j_ = 0; j_ < %d; j_++)\n\t\tacc_[i_][j_] += a_[i_] * b_[j_];\n", g->tn);
	wclose(e->w, "");
}

/* the slab's k-steps of eight on tensor cores: warp w_ owns tiles
 * w_ + j * warps, tile q at 16-row band q / (bn/8), 8-column band
 * q % (bn/8); fragments as PTX lays out m16n8k8 .tf32 (g_ = lane / 4,
 * t_ = lane % 4: A (g_, t_), (g_+8, t_), (g_, t_+4), (g_+8, t_+4); B
 * (t_, g_), (t_+4, g_)) */
static void
mmaslab(G *g, int depth)
{
	E *e = g->e;
	int steps = (depth + 7) / 8;

	out(e, "#pragma unroll\n");
	wopen(e->w, "for (int ks_ = 0; ks_ < %d; ks_ += 8)", steps * 8);
	out(e, "#pragma unroll\n");
	wopen(e->w, "for (int j_ = 0; j_ < %d; j_++)", g->tm * g->tn / 4);
	out(e, "const int q_ = w_ + j_ * %d, r0_ = q_ / %d * 16, c0_ = q_ %% %d * 8;\n", g->nt / 32, g->bn / 8, g->bn / 8);
	out(e, "const float *ak_ = as_ + (ks_ + t_) * %d + r0_ + g_, *bk_ = bs_ + (ks_ + t_) * %d + c0_ + g_;\n", g->lda, g->ldb);
	out(e, "const uint32_t a_[4] = {GNN_TF32(ak_[0]), GNN_TF32(ak_[8]), GNN_TF32(ak_[%d]), GNN_TF32(ak_[%d])};\n", 4 * g->lda,
	    4 * g->lda + 8);
	out(e, "const uint32_t b_[2] = {GNN_TF32(bk_[0]), GNN_TF32(bk_[%d])};\n", 4 * g->ldb);
	out(e, "GNN_MMA_TF32(acc_[j_], a_, b_);\n");
	wclose(e->w, "");
	wclose(e->w, "");
}

/* the same with bfloat16's k-steps of 16: A (g_, 2 t_ + {0, 1}), (g_+8,
 * 2 t_ + {0, 1}), (g_, 2 t_ + {8, 9}), (g_+8, 2 t_ + {8, 9}); B
 * (2 t_ + {0, 1}, g_), (2 t_ + {8, 9}, g_), the lower k in the low half */
static void
bf16slab(G *g, int depth)
{
	E *e = g->e;
	int steps = (depth + 15) / 16, l = g->lda, n = g->ldb;

	/* a warp's tiles are all in one 8-column band when the warps are a
	 * multiple of the bands: B's fragment once a k-step */
	bool oneband = g->nt / 32 % (g->bn / 8) == 0;
	const char *bfrag = pf(e, "const uint32_t b_[2] = {gnn_pack_bf16_(bk_[0], bk_[%d]), gnn_pack_bf16_(bk_[%d], bk_[%d])};\n", n,
	                       8 * n, 9 * n);

	out(e, "#pragma unroll\n");
	wopen(e->w, "for (int ks_ = 0; ks_ < %d; ks_ += 16)", steps * 16);
	if (oneband) {
		out(e, "const float *bk_ = bs_ + (ks_ + 2 * t_) * %d + w_ %% %d * 8 + g_;\n", n, g->bn / 8);
		out(e, "%s", bfrag);
	}
	out(e, "#pragma unroll\n");
	wopen(e->w, "for (int j_ = 0; j_ < %d; j_++)", g->tm * g->tn / 4);
	out(e, "const int q_ = w_ + j_ * %d, r0_ = q_ / %d * 16%s;\n", g->nt / 32, g->bn / 8,
	    oneband ? "" : pf(e, ", c0_ = q_ %% %d * 8", g->bn / 8));
	out(e, "const float *ak_ = as_ + (ks_ + 2 * t_) * %d + r0_ + g_;\n", l);
	out(e, "const uint32_t a_[4] = {gnn_pack_bf16_(ak_[0], ak_[%d]), gnn_pack_bf16_(ak_[8], ak_[%d]),\n", l, l + 8);
	out(e, "                        gnn_pack_bf16_(ak_[%d], ak_[%d]), gnn_pack_bf16_(ak_[%d], ak_[%d])};\n", 8 * l, 9 * l,
	    8 * l + 8, 9 * l + 8);
	if (!oneband) {
		out(e, "const float *bk_ = bs_ + (ks_ + 2 * t_) * %d + c0_ + g_;\n", n);
		out(e, "%s", bfrag);
	}
	out(e, "GNN_MMA_BF16(acc_[j_], a_, b_);\n");
	wclose(e->w, "");
	wclose(e->w, "");
}

/* one slab: stage it, wait, compute, wait (the next slab overwrites) */
static void
slab(G *g, int depth)
{
	loadslab(g, depth, g->tc && depth % kstep(g));
	out(g->e, "__syncthreads();\n");
	if (g->tc && g->bf16)
		bf16slab(g, depth);
	else if (g->tc)
		mmaslab(g, depth);
	else
		fmaslab(g, depth);
	out(g->e, "__syncthreads();\n");
}

Ref
gemmstored(const E *e, int i)
{
	int end = epilogueend(e->fn, i);

	return end >= 0 ? e->fn->ins[end].to : e->fn->ins[i].to;
}

/* the epilogue operand of operand step j of matmul i's group, or RNone */
static Ref
epioperand(const E *e, int j)
{
	const Ins *st = &e->fn->ins[j];

	return st->narg == 2 ? st->arg[st->arg[0] == e->fn->ins[j - 1].to ? 1 : 0] : RNone;
}

/* is matmul i's output written in place over an epilogue operand
 * (memplan's inplaceover)? */
static bool
inplaceepi(E *e, int i)
{
	for (int j = i + 1; j <= epilogueend(e->fn, i); j++)
		if (epioperand(e, j) != RNone && samestorage(e, epioperand(e, j), gemmstored(e, i)))
			return true;
	return false;
}

int
epioperands(E *e, int i, Args *a, const char **opnd, bool *bias)
{
	int end = epilogueend(e->fn, i);

	for (int j = i + 1; j <= end; j++) {
		Ref o = epioperand(e, j);

		opnd[j - i - 1] = o != RNone ? ptrarg(e, a, NULL, o, false, true) : NULL;
		bias[j - i - 1] = o != RNone && ty(e, o).rank == 1;
		/* the output written in place over it (memplan's inplaceover):
		 * one memory, so neither is restrict */
		if (o != RNone && samestorage(e, o, gemmstored(e, i))) {
			unrestrict(e, a, opnd[j - i - 1]);
			unrestrict(e, a, ptrarg(e, a, NULL, gemmstored(e, i), true, true));
		}
	}
	return end < 0 ? 0 : end - i;
}

void
epiemit(E *e, int i, const char *const *opnd, const bool *bias, const char *v, const char *elem, const char *col)
{
	int end = epilogueend(e->fn, i);

	for (int j = i + 1; j <= end; j++) {
		const Ins *in = &e->fn->ins[j];
		const char *x[2] = {v, v};
		int k = j - i - 1;

		if (opnd[k]) {
			const char *o = pf(e, "%s[%s]", opnd[k], bias[k] ? col : elem);
			x[in->arg[0] == e->fn->ins[j - 1].to ? 1 : 0] = o;
		}
		elembody(e, in, x[0], in->narg == 2 ? x[1] : NULL, v);
	}
}

const char *
epiargs(E *e, const Args *a, const char *const *opnd, int nepi, bool val)
{
	const char *s = "";

	for (int k = 0; k < nepi; k++)
		if (opnd[k])
			s = pf(e, "%s, %s", s, val ? a->val[argindex(a, opnd[k])] : a->decl[argindex(a, opnd[k])]);
	return s;
}

static void
episteps(G *g, const char *v, const char *elem, const char *col)
{
	epiemit(g->e, g->at, g->opnd, g->bias, v, elem, col);
}

/* the body of epitile's two loops over the tile, at output (mi_, ni_):
 * its sum acc through the steps, and the loops' ends */
static void
epiacc(G *g, const char *acc)
{
	E *e = g->e;

	e->w->ind += 3;
	out(e, "float v_ = %s;\n\n", acc);
	episteps(g, "v_", pf(e, "mi_ * %lld + ni_", g->P), "ni_");
	out(e, "%s = v_;\n", acc);
	e->w->ind -= 3;
	out(e, "\t\t}\n\t}\n}\n");
}

/* the epilogue over the register tile, before it is stored: every
 * output inside M and P */
static void
epitile(G *g)
{
	E *e = g->e;

	if (!g->nepi)
		return;
	out(e, "/* the epilogue, on each complete sum */\n");
	if (g->split)
		wopen(e->w, "if (s_ == 1)");
	else
		blockopen(e->w);
	if (g->tc) {
		out(e, "for (int j_ = 0; j_ < %d; j_++) {\n", g->tm * g->tn / 4);
		out(e, "\tconst int q_ = w_ + j_ * %d;\n", g->nt / 32);
		out(e, "\tconst int64_t m_ = m0_ + q_ / %d * 16 + g_;\n\tconst int n_ = n0_ + q_ %% %d * 8 + 2 * t_;\n\n", g->bn / 8, g->bn / 8);
		out(e, "\tfor (int h_ = 0; h_ < 4; h_++) {\n");
		out(e, "\t\tconst int64_t mi_ = m_ + h_ / 2 * 8;\n\t\tconst int ni_ = n_ + h_ %% 2;\n\n");
		out(e, "\t\tif (mi_ < M_ && ni_ < %lld) {\n", g->P);
		epiacc(g, "acc_[j_][h_]");
	} else {
		out(e, "for (int i_ = 0; i_ < %d; i_++) {\n", g->tm);
		out(e, "\tconst int64_t mi_ = m0_ + ty_ * %d + i_;\n\n\tif (mi_ >= M_)\n\t\tbreak;\n", g->tm);
		out(e, "\tfor (int j_ = 0; j_ < %d; j_++) {\n", g->tn);
		out(e, "\t\tconst int ni_ = n0_ + tx_ * %d + j_;\n\n\t\tif (ni_ < %lld) {\n", g->tn, g->P);
		epiacc(g, "acc_[i_][j_]");
	}
	wclose(e->w, "");
}

/* the register tile to O, or to o_ (float32 in the scratch) */
static void
storeto(G *g, const char *O)
{
	E *e = g->e;

	if (g->tc) {
		/* lane (g_, t_) holds rows g_ and g_ + 8, columns 2 t_ and 2 t_ + 1 */
		out(e, "for (int j_ = 0; j_ < %d; j_++) {\n", g->tm * g->tn / 4);
		out(e, "\tconst int q_ = w_ + j_ * %d;\n", g->nt / 32);
		out(e, "\tconst int64_t m_ = m0_ + q_ / %d * 16 + g_;\n\tconst int n_ = n0_ + q_ %% %d * 8 + 2 * t_;\n", g->bn / 8, g->bn / 8);
		out(e, "\tfor (int h_ = 0; h_ < 4; h_++)\n");
		out(e, "\t\tif (m_ + h_ / 2 * 8 < M_ && n_ + h_ %% 2 < %lld)\n", g->P);
		out(e, "\t\t\t%s[(m_ + h_ / 2 * 8) * %lld + n_ + h_ %% 2] = acc_[j_][h_];\n}\n", O, g->P);
		return;
	}
	out(e, "for (int i_ = 0; i_ < %d; i_++) {\n", g->tm);
	out(e, "\tconst int64_t m_ = m0_ + ty_ * %d + i_;\n\tconst int n_ = n0_ + tx_ * %d;\n\n\tif (m_ >= M_)\n\t\tbreak;\n", g->tm,
	    g->tn);
	if (g->ovec) {
		/* P % 4 == 0 and tn % 4 == 0: a vector is all in or all out */
		out(e, "\tif (ov_) {\n\t\tfor (int j_ = 0; j_ < %d && n_ + j_ < %lld; j_ += 4)\n", g->tn, g->P);
		out(e, "\t\t\t*(float4 *)&%s[m_ * %lld + n_ + j_] = make_float4(acc_[i_][j_], acc_[i_][j_ + 1], acc_[i_][j_ + 2], acc_[i_][j_ + 3]);\n",
		    O, g->P);
		out(e, "\t\tcontinue;\n\t}\n");
	}
	out(e, "\tfor (int j_ = 0; j_ < %d && n_ + j_ < %lld; j_++)\n\t\t%s[m_ * %lld + n_ + j_] = acc_[i_][j_];\n}\n", g->tn, g->P, O, g->P);
}

static void
store(G *g)
{
	E *e = g->e;

	if (!g->split) {
		storeto(g, g->O);
		return;
	}
	if (!g->o16) {
		out(e, "float *const o_ = p_ ? ws_ + (int64_t)(p_ - 1) * M_ * %lld : %s;\n\n", g->P, g->O);
		storeto(g, "o_");
		return;
	}
	/* a 16-bit O: the parts in float32, O itself only when unsplit */
	wopen(e->w, "if (s_ > 1)");
	out(e, "float *const o_ = ws_ + (int64_t)p_ * M_ * %lld;\n\n", g->P);
	storeto(g, "o_");
	wclose(e->w, "");
	out(e, "else\n");
	e->w->ind++;
	blockopen(e->w);
	storeto(g, g->O);
	wclose(e->w, "");
	e->w->ind--;
}

/* the split-K parts' sum: the output (part 0) plus parts 1 .. s_-1 of
 * the scratch, in that order */
static void
ksum(G *g, const Args *a)
{
	E *e = g->e;
	int odt = valstoredtype(e->fn, g->to);

	out(e, "\n/* a split-K GEMM's parts, added in part order%s */\n", g->nepi ? ", then the epilogue" : "");
	/* o_ written in place over an epilogue operand: not restrict */
	out(e, "GNN_DKERNEL(" KNAME "_ksum)(GNN_DRANGE int64_t T_, %s *%so_, const float *__restrict__ ws_, int s_%s)\n",
	    g->o16 ? "uint16_t" : "float", inplaceepi(e, g->at) ? "" : "__restrict__ ", epiargs(e, a, g->opnd, g->nepi, false));
	blockopen(e->w);
	wopen(e->w, "GNN_DLOOP(t_, T_)");
	if (g->o16)
		out(e, "float v_ = ws_[t_];\n\nfor (int p_ = 1; p_ < s_; p_++)\n\tv_ += ws_[(int64_t)p_ * T_ + t_];\n");
	else
		out(e, "float v_ = o_[t_];\n\nfor (int p_ = 1; p_ < s_; p_++)\n\tv_ += ws_[(int64_t)(p_ - 1) * T_ + t_];\n");
	if (g->nepi) {
		episteps(g, "v_", "t_", pf(e, "t_ %% %lld", g->P));
	}
	if (g->o16)
		out(e, "o_[t_] = gnn_st_%s(v_);\n", dtypename(odt));
	else
		out(e, "o_[t_] = v_;\n");
	wclose(e->w, "");
	wclose(e->w, "");
}

/* the kernel's text in g's form (g->tc) */
static void
kernel(G *g, const Args *a, long long slabs, long long kfull)
{
	E *e = g->e;
	const Ins *in = g->in;
	int k, i = g->at;

	g->ovec = !g->tc && g->P % 4 == 0 && g->tn % 4 == 0 && !g->o16;
	/* the bfloat16 step's B loads, lane (g_, t_) at row 2 t_: a row
	 * of bn + 4 floats puts the lanes in distinct banks (bn alone: t_
	 * in the same bank) */
	g->ldb = g->tc && g->bf16 ? g->bn + 4 : g->bn;
	out(e, "\n/* %%%s = matmul", irname(e, in->to));
	if (in->loc.file)
		out(e, " (%s:%d)", in->loc.file, in->loc.line);
	out(e, ": [M, %lld] @ [%lld, %lld], a tiled GEMM%s%s", g->K, g->K, g->P, g->tc ? (g->bf16 ? " on tensor cores (bfloat16)" : " on tensor cores (TF32)") : "",
	    g->split ? pf(e, ", K split in up to %d parts", g->ksplit) : "");
	for (int j = i + 1; j <= i + g->nepi; j++)
		out(e, "%s %s", j == i + 1 ? ", then" : ",", opinfo[e->fn->ins[j].op].name);
	out(e, " */\n");
	out(e, "GNN_DKERNEL_LB(" KNAME ", %d)(int64_t T_", g->nt);
	for (k = 0; k < a->n; k++)
		out(e, ", %s", a->decl[k]);
	out(e, ")\n");
	blockopen(e->w);
	/* float4 storage: 16-byte aligned under nvcc as in the emulator */
	out(e, "GNN_SHARED(float4, as4_, [%d]);\nGNN_SHARED(float4, bs4_, [%d]);\n", g->bk * g->lda / 4, g->bk * g->ldb / 4);
	out(e, "float *const as_ = (float *)as4_, *const bs_ = (float *)bs4_;\n");
	if (g->tc)
		out(e, "const int w_ = threadIdx.x / 32, g_ = threadIdx.x %% 32 / 4, t_ = threadIdx.x %% 4;\n");
	else
		out(e, "const int tx_ = threadIdx.x %% %d, ty_ = threadIdx.x / %d;\n", g->bn / g->tn, g->bn / g->tn);
	if (g->avec || g->a16)
		out(e, "const bool av_ = ((uintptr_t)%s & %d) == 0;\n", g->A, g->avec ? 15 : 7);
	if (g->bvec)
		out(e, "const bool bv_ = ((uintptr_t)%s & 15) == 0;\n", g->B);
	if (g->ovec)
		out(e, "const bool ov_ = ((uintptr_t)%s & 15) == 0%s;\n", g->O, g->split ? " && ((uintptr_t)ws_ & 15) == 0" : "");
	if (g->split)
		/* each part's run of full slabs: the count's share, rounded up */
		out(e, "const int64_t kc_ = (%lld + s_ - 1) / s_ * %d;\n", slabs, g->bk);
	out(e, "\n");
	wopen(e->w, "for (int64_t b_ = blockIdx.x; b_ < T_; b_ += gridDim.x)");
	if (g->split)
		/* a 32-bit division, and none unsplit: a 64-bit one is a call
		 * (ptxas kept 128 registers a thread so, 96 without); split,
		 * tiles < 264 and b_ < 264 * 64 */
		out(e, "const int p_ = s_ > 1 ? (int)((uint32_t)b_ / (uint32_t)tiles_) : 0;\nconst int64_t tq_ = b_ - (int64_t)p_ * tiles_;\n");
	out(e, "const int64_t m0_ = %s / %d * %d;\nconst int n0_ = (int)(%s %% %d) * %d;\n", g->split ? "tq_" : "b_", g->ntn, g->bm,
	    g->split ? "tq_" : "b_", g->ntn, g->bn);
	if (g->tc)
		out(e, "float acc_[%d][4];\n\nfor (int j_ = 0; j_ < %d; j_++)\n\tfor (int h_ = 0; h_ < 4; h_++)\n\t\tacc_[j_][h_] = 0.0f;\n",
		    g->tm * g->tn / 4, g->tm * g->tn / 4);
	else
		out(e, "float acc_[%d][%d];\n\nfor (int i_ = 0; i_ < %d; i_++)\n\tfor (int j_ = 0; j_ < %d; j_++)\n\t\tacc_[i_][j_] = 0.0f;\n",
		    g->tm, g->tn, g->tm, g->tn);
	if (kfull) {
		if (g->split)
			wopen(e->w, "for (int64_t k0_ = p_ * kc_; k0_ < %lld && k0_ < (p_ + 1) * kc_; k0_ += %d)", kfull, g->bk);
		else
			wopen(e->w, "for (int64_t k0_ = 0; k0_ < %lld; k0_ += %d)", kfull, g->bk);
		slab(g, g->bk);
		wclose(e->w, "");
	}
	if (g->K > kfull) {
		/* the last, shorter slab: its own constant depth (split: the
		 * last part's) */
		if (g->split)
			wopen(e->w, "if (p_ == s_ - 1)");
		else
			blockopen(e->w);
		out(e, "const int64_t k0_ = %lld;\n\n", kfull);
		slab(g, (int)(g->K - kfull));
		wclose(e->w, "");
	}
	epitile(g);
	store(g);
	wclose(e->w, "");
	wclose(e->w, "");
}

void
emitgemmcuda(E *e, int i, Args *a, Str *call)
{
	const Ins *in = &e->fn->ins[i];
	const Sched *s = &e->sched;
	G g = {.e = e, .in = in, .bm = s->bm, .bn = s->bn, .bk = s->bk, .tm = s->tm, .tn = s->tn, .tf32 = e->o->gpumath == GpuMathTF32};
	long long kfull, slabs;
	const char *M, *Oval;
	int k, ws = -1;
	int64_t floats = 0;
	Ref to = gemmstored(e, i);

	if (!e->cuda || e->p->phase[in->to] != PhaseForward || ty(e, in->to).dtype != DF32)
		die("codegen: a tiled GEMM outside cuda's forward");
	g.at = i;
	g.to = to;
	g.K = dimconstval(ty(e, in->arg[1]).dim[0]);
	g.P = dimconstval(ty(e, in->arg[1]).dim[1]);
	g.nt = g.bm / g.tm * (g.bn / g.tn);
	g.lda = g.bm + 4;
	g.ntn = (int)((g.P + g.bn - 1) / g.bn);
	g.o16 = valstoredtype(e->fn, to) != DNone;
	/* 16-bit operands go element by element (halfaccess) */
	g.avec = g.K % 4 == 0 && g.bk % 4 == 0 && valstoredtype(e->fn, in->arg[0]) == DNone;
	g.a16 = g.K % 4 == 0 && g.bk % 4 == 0 ? valstoredtype(e->fn, in->arg[0]) : DNone;
	g.bvec = g.P % 4 == 0 && valstoredtype(e->fn, in->arg[1]) == DNone;
	g.bf16 = gemmbf16(e->fn, in, s);
	g.ksplit = s->ksplit;
	slabs = g.K / g.bk;
	kfull = slabs * g.bk;
	/* a K of one slab has nothing to split */
	g.split = s->ksplit > 1 && slabs >= 2;
	k = a->n;
	g.O = ptrarg(e, a, NULL, to, true, true);
	Oval = a->val[k];
	g.A = ptrarg(e, a, NULL, in->arg[0], false, true);
	g.B = ptrarg(e, a, NULL, in->arg[1], false, true);
	g.nepi = epioperands(e, i, a, g.opnd, g.bias);
	M = cdim(e, ty(e, in->arg[0]).dim[0]);
	arg(a, "int64_t M_", "%s", M);
	if (g.split) {
		floats = gemmkscratch(s, g.K, g.P);
		/* the launch never takes more than ksplit parts: (ksplit - 1)
		 * rows of P a row of A at most, so a small graph binds a
		 * small scratch */
		ws = gemmscratchseg(e, i, floats, ty(e, in->arg[0]).dim[0], (int64_t)(s->ksplit - !g.o16) * g.P);
		arg(a, "float *__restrict__ ws_", "(float *)m->seg[%d]", ws);
		arg(a, "int64_t tiles_", "gt_");
		arg(a, "int s_", "gs_");
	}

	if (g.bf16) {
		/* the FP32 form for devices without bfloat16 tensor cores */
		out(e, "\n#if GNN_TC_BF16\n");
		g.tc = true;
		kernel(&g, a, slabs, kfull);
		out(e, "#else\n");
		g.tc = false;
		kernel(&g, a, slabs, kfull);
		out(e, "#endif\n");
	} else {
		g.tc = g.tf32;
		kernel(&g, a, slabs, kfull);
	}
	if (!g.split) {
		/* one block a tile: (tiles of M) x (tiles of P) */
		sput(call, "GNN_RLAUNCH(" KNAME ", %s, %d, 1, (%s + %d) / %d * %d", launchlit(e, KNAME), g.nt, M, g.bm - 1, g.bm, g.ntn);
		for (k = 0; k < a->n; k++)
			sput(call, ", %s", a->val[k]);
		sput(call, ");");
		return;
	}
	ksum(&g, a);
	/* one block a tile and part, then the parts' sum */
	sput(call, "{\n\t\tconst int64_t gt_ = (%s + %d) / %d * %d;\n", M, g.bm - 1, g.bm, g.ntn);
	sput(call, "\t\tconst int gs_ = gnn_gemm_ksplit(gt_, %lld, %d, %s * %lld, %lld%s);\n\n", slabs, s->ksplit, M, g.P, (long long)floats,
	     g.o16 ? pf(e, " - %s * %lld", M, g.P) : "");
	sput(call, "\t\tGNN_RLAUNCH(" KNAME ", %s, %d, 1, gt_ * gs_", launchlit(e, KNAME), g.nt);
	for (k = 0; k < a->n; k++)
		sput(call, ", %s", a->val[k]);
	sput(call, ");\n\t\tif (gs_ > 1)\n\t\t\tGNN_DLAUNCH(" KNAME "_ksum, %s, %s * %lld, %s, (const float *)m->seg[%d], gs_%s);\n\t}",
	     launchlit(e, KNAME "_ksum"), M, g.P, Oval, ws, epiargs(e, a, g.opnd, g.nepi, true));
}
