/*
 * The kernel half of a generated file: one function per instruction that
 * computes (a parallel loop over independent tasks: host loops for the
 * cpu, grid-stride kernels for cuda; fusion groups are rowkernel.c's),
 * and per instruction the statement that runs it.  Storage is reached
 * through the host half's accessors (emit.h).
 */
#include <stdarg.h>
#include <string.h>

#include "emit.h"

void
arg(Args *a, const char *decl, const char *fmt, ...)
{
	va_list ap;

	if (a->n == 48)
		die("codegen: too many kernel arguments");
	snprintf(a->decl[a->n], sizeof a->decl[0], "%s", decl);
	va_start(ap, fmt);
	vsnprintf(a->val[a->n], sizeof a->val[0], fmt, ap);
	va_end(ap);
	a->n++;
}

/* pointer to v's storage, on the side where instruction phase runs */
void
ptrarg(E *e, Args *a, const char *name, Ref v, bool isout, bool device)
{
	char decl[64];
	Ref s = storageof(e->p, v);

	snprintf(decl, sizeof decl, "%s%s *%s", isout ? "" : "const ", ctype(ty(e, v).dtype), name);
	arg(a, decl, "(%s%s *)%s", isout ? "" : "const ", ctype(ty(e, v).dtype), storage(e, s, device));
}

/*
 * Strided addressing: the task index t decomposes into the coordinates of
 * an output of rank r, and each source's offset is the sum of coordinate
 * times that source's stride for the dim (0 where it broadcasts).
 */
static void
stridedsrc(E *e, Args *a, const Type *o, int nsrc, const Type *src, const int *perm)
{
	int k, j, r = o->rank, sr, sd;
	char decl[64];

	for (k = 0; k < r; k++) {
		snprintf(decl, sizeof decl, "int64_t d%d", k);
		arg(a, decl, "%s", cdim(e, o->dim[k]));
		for (j = 0; j < nsrc; j++) {
			snprintf(decl, sizeof decl, "int64_t s%d_%d", j, k);
			if (perm) {
				/* transpose: out dim k is source dim perm[k] */
				arg(a, decl, "%s", cprod(e, &src[j], perm[k] + 1, src[j].rank));
				continue;
			}
			sr = src[j].rank;
			sd = sr - (r - k);   /* aligned from the right */
			if (sd < 0 || (src[j].dim[sd] == 1 && o->dim[k] != 1))
				arg(a, decl, "(int64_t)0");
			else
				arg(a, decl, "%s", cprod(e, &src[j], sd + 1, sr));
		}
	}
}

static void
stridedbody(E *e, int r, int nsrc, const char *from)
{
	int k, j;

	out(e, "\t\tint64_t ");
	for (j = 0; j < nsrc; j++)
		out(e, "%si%d = 0", j ? ", " : "", j);
	out(e, ";\n");
	if (r == 0)
		return;
	out(e, "\t\tint64_t r_ = %s;\n", from);
	for (k = r - 1; k >= 0; k--) {
		out(e, "\t\t{ int64_t c_ = r_ %% d%d; r_ /= d%d;", k, k);
		for (j = 0; j < nsrc; j++)
			out(e, " i%d += c_ * s%d_%d;", j, j, k);
		out(e, " }\n");
	}
	out(e, "\t\t(void)r_;\n");
}

static bool
isf32(int dt)
{
	return dt == DF32;
}

/* the C expression of an elementwise unary op on x */
void
unaryexpr(char *buf, size_t n, const Ins *in, int dt, int odt)
{
	const char *f = isf32(dt) ? "f" : "";
	double slope = attrfloat(in, "slope", 0.01), alpha = attrfloat(in, "alpha", 1.0);

	switch (in->op) {
	case Oneg: snprintf(buf, n, "-x"); break;
	case Oabs: snprintf(buf, n, dtypeisfloat(dt) ? "fabs%s(x)" : "(x < 0 ? -x : x)", f); break;
	case Orelu: snprintf(buf, n, "(x > 0 || x != x ? x : 0)"); break;
	case Oleaky_relu: snprintf(buf, n, "(x > 0 ? x : (%s)%.17g * x)", ctype(dt), slope); break;
	case Oelu: snprintf(buf, n, "(x > 0 ? x : (%s)%.17g * expm1%s(x))", ctype(dt), alpha, f); break;
	case Osigmoid: snprintf(buf, n, "(1 / (1 + exp%s(-x)))", f); break;
	case Otanh: snprintf(buf, n, "tanh%s(x)", f); break;
	case Oexp: snprintf(buf, n, "exp%s(x)", f); break;
	case Olog: snprintf(buf, n, "log%s(x)", f); break;
	case Osqrt: snprintf(buf, n, "sqrt%s(x)", f); break;
	case Orsqrt: snprintf(buf, n, "(1 / sqrt%s(x))", f); break;
	case Ocast:
		if (odt == DBool)
			snprintf(buf, n, "(uint8_t)(x != 0)");
		else
			snprintf(buf, n, "(%s)x", ctype(odt));
		break;
	default: die("codegen: %s is not unary", opinfo[in->op].name);
	}
}

void
binaryexpr(char *buf, size_t n, int op, int dt)
{
	const char *f = isf32(dt) ? "f" : "";

	switch (op) {
	case Oadd: snprintf(buf, n, "a + b"); break;
	case Osub: snprintf(buf, n, "a - b"); break;
	case Omul: snprintf(buf, n, "a * b"); break;
	case Odiv: snprintf(buf, n, "a / b"); break;
	case Opow:
		if (dtypeisfloat(dt))
			snprintf(buf, n, "pow%s(a, b)", f);
		else
			snprintf(buf, n, "(%s)pow((double)a, (double)b)", ctype(dt));
		break;
	/* NaN propagates, as torch.maximum and torch.minimum do */
	case Omaximum: snprintf(buf, n, "(a != a || a > b ? a : b)"); break;
	case Ominimum: snprintf(buf, n, "(a != a || a < b ? a : b)"); break;
	default: die("codegen: %s is not binary", opinfo[op].name);
	}
}

static void
kernelhead(E *e, int i, bool device, const Args *a)
{
	int k;
	const Ins *in = &e->fn->ins[i];
	const char *name = e->fn->val[in->to].name;

	out(e, "\n/* %%%s = %s", name ? name : "", opinfo[in->op].name);
	if (in->loc.file)
		out(e, " (%s:%d)", in->loc.file, in->loc.line);
	out(e, " */\n");
	out(e, "%s(%s_k%d%s)(int64_t T", device ? "GNN_DKERNEL" : "GNN_HKERNEL", e->nm, i, e->sfx);
	for (k = 0; k < a->n; k++)
		out(e, ", %s", a->decl[k]);
	out(e, ")\n{\n\t%s(t, T) {\n", device ? "GNN_DLOOP" : "GNN_HLOOP");
}

static void
kerneltail(E *e)
{
	out(e, "\t}\n}\n");
}

/*
 * A dense transform [M, K] @ [K, P] (K, P constant) under a schedule:
 * each task computes tile rows, either one output column of them (B's
 * element loaded once for tile rows) or, with axpy, whole output rows (B
 * streamed by rows).  Every output sums over k in order, as the
 * reference kernel does.  The rows past M of the last task read row M-1
 * and store nothing.
 */
static void
emitdense(E *e, int i, bool device, bool dev, Args *ap, char *T, size_t Tn)
{
	const Ins *in = &e->fn->ins[i];
	Args a = {0};
	const char *ot = ctype(ty(e, in->to).dtype), *M;
	long long K = dimconstval(ty(e, in->arg[1]).dim[0]), P = dimconstval(ty(e, in->arg[1]).dim[1]);
	int tile = e->sched.tile;

	ptrarg(e, &a, "o", in->to, true, dev);
	ptrarg(e, &a, "A", in->arg[0], false, dev);
	ptrarg(e, &a, "B", in->arg[1], false, dev);
	M = cdim(e, ty(e, in->arg[0]).dim[0]);
	arg(&a, "int64_t M", "%s", M);
	kernelhead(e, i, device, &a);
	out(e, "\t\tconst int64_t K_ = %lld, P_ = %lld;\n", K, P);
	if (e->sched.axpy) {
		out(e, "\t\tconst int64_t r0_ = t * %d;\n\t\t%s acc_[%d][%lld];\n", tile, ot, tile, P);
		out(e, "\t\tfor (int i_ = 0; i_ < %d; i_++)\n\t\t\tfor (int64_t p_ = 0; p_ < P_; p_++)\n\t\t\t\tacc_[i_][p_] = 0;\n", tile);
		out(e, "\t\tfor (int64_t k_ = 0; k_ < K_; k_++)\n\t\t\tfor (int i_ = 0; i_ < %d; i_++) {\n", tile);
		out(e, "\t\t\t\tconst %s a_ = A[(r0_ + i_ < M ? r0_ + i_ : M - 1) * K_ + k_];\n", ot);
		out(e, "\t\t\t\tfor (int64_t p_ = 0; p_ < P_; p_++)\n\t\t\t\t\tacc_[i_][p_] += a_ * B[k_ * P_ + p_];\n\t\t\t}\n");
		out(e, "\t\tfor (int i_ = 0; i_ < %d && r0_ + i_ < M; i_++)\n\t\t\tfor (int64_t p_ = 0; p_ < P_; p_++)\n\t\t\t\to[(r0_ + i_) * P_ + p_] = acc_[i_][p_];\n", tile);
		snprintf(T, Tn, "((%s) + %d) / %d", M, tile - 1, tile);
	} else {
		out(e, "\t\tconst int64_t p_ = t %% P_, r0_ = (t / P_) * %d;\n\t\t%s acc_[%d];\n", tile, ot, tile);
		out(e, "\t\tfor (int i_ = 0; i_ < %d; i_++)\n\t\t\tacc_[i_] = 0;\n", tile);
		out(e, "\t\tfor (int64_t k_ = 0; k_ < K_; k_++) {\n\t\t\tconst %s b_ = B[k_ * P_ + p_];\n", ot);
		out(e, "\t\t\tfor (int i_ = 0; i_ < %d; i_++)\n\t\t\t\tacc_[i_] += A[(r0_ + i_ < M ? r0_ + i_ : M - 1) * K_ + k_] * b_;\n\t\t}\n", tile);
		out(e, "\t\tfor (int i_ = 0; i_ < %d && r0_ + i_ < M; i_++)\n\t\t\to[(r0_ + i_) * P_ + p_] = acc_[i_];\n", tile);
		snprintf(T, Tn, "((%s) + %d) / %d * %lld", M, tile - 1, tile, P);
	}
	kerneltail(e);
	*ap = a;
}

/* A scatter whose index is computed in forward (cpu only): one pass in
 * message order, which is deterministic because it is sequential.  An
 * index out of range is skipped (the cuda target never gets here). */
static void
serialscatter(E *e, int i, const Args *a)
{
	const Ins *in = &e->fn->ins[i];
	const char *T = ctype(ty(e, in->to).dtype);
	int k;

	out(e, "\nstatic void\n%s_k%d(int64_t T", e->nm, i);
	for (k = 0; k < a->n; k++)
		out(e, ", %s", a->decl[k]);
	out(e, ")\n{\n\tint64_t k, j, r;\n\n");
	out(e, "\tfor (k = 0; k < n * row; k++)\n\t\to[k] = 0;\n");
	out(e, "\tfor (k = 0; k < T; k++) {\n\t\tr = (int64_t)idx[k];\n");
	out(e, "\t\tif (r < 0 || r >= n)\n\t\t\tcontinue;\n\t\tcnt[r]++;\n");
	out(e, "\t\tfor (j = 0; j < row; j++) {\n\t\t\t%s v = msg[k * row + j];\n", T);
	if (in->op == Oscatter_max)
		out(e, "\t\t\tif (cnt[r] == 1 || v > o[r * row + j] || v != v)\n\t\t\t\to[r * row + j] = v;\n");
	else
		out(e, "\t\t\to[r * row + j] += v;\n");
	out(e, "\t\t}\n\t}\n");
	if (in->op == Oscatter_mean)
		out(e, "\tfor (k = 0; k < n * row; k++)\n\t\tif (cnt[k / row] > 1)\n\t\t\to[k] /= (%s)cnt[k / row];\n", T);
	out(e, "}\n");
}

/*
 * Emit instruction i's function and return, in call, the C statement
 * that runs it (host phase: a call; forward on cuda: a launch).
 */
static void
emitkernel(E *e, int i, char *call, size_t calln)
{
	const Ins *in = &e->fn->ins[i];
	Type o = ty(e, in->to), src[64];
	bool device = e->p->phase[in->to] == PhaseForward && e->cuda;
	bool dev = e->p->phase[in->to] == PhaseForward;   /* operands on the device side */
	Args a = {0};
	char expr[256], T[600];
	const char *ot = ctype(o.kind == TTensor ? o.dtype : DF32);
	int k, r = o.rank, perm[MaxRank];
	unsigned fl = opinfo[in->op].flags;

	call[0] = 0;
	snprintf(T, sizeof T, "%s", cnumel(e, in->to));
	for (k = 0; k < in->narg && k < 64; k++)
		src[k] = ty(e, in->arg[k]);
	switch (in->op) {
	case Oconst:
		ptrarg(e, &a, "o", in->to, true, false);
		kernelhead(e, i, false, &a);
		out(e, "\t\to[t] = (%s)%.17g;\n", ot, attrfloat(in, "value", 0));
		kerneltail(e);
		break;
	case Ogather: {
		const char *row = cprod(e, &src[0], 1, src[0].rank);
		ptrarg(e, &a, "o", in->to, true, dev);
		ptrarg(e, &a, "x", in->arg[0], false, dev);
		ptrarg(e, &a, "idx", in->arg[1], false, dev);
		arg(&a, "int64_t row", "%s", row);
		kernelhead(e, i, device, &a);
		out(e, "\t\tint64_t r_ = t / row, j_ = t %% row;\n");
		out(e, "\t\to[t] = x[(int64_t)idx[r_] * row + j_];\n");
		kerneltail(e);
		break;
	}
	case Oscatter_sum:
	case Oscatter_mean:
	case Oscatter_max: {
		Dim n;
		const char *row = cprod(e, &src[0], 1, src[0].rank);
		attrdim(in, "n", &n);
		ptrarg(e, &a, "o", in->to, true, dev);
		ptrarg(e, &a, "msg", in->arg[0], false, dev);
		if (e->p->phase[in->arg[1]] != PhaseBind) {
			ptrarg(e, &a, "idx", in->arg[1], false, dev);
			arg(&a, "int64_t row", "%s", row);
			arg(&a, "int64_t n", "%s", cdim(e, n));
			arg(&a, "int64_t *cnt", "(int64_t *)%s", segment(e, i, false));
			serialscatter(e, i, &a);
			snprintf(call, calln, "memset(%s, 0, %s);\n\t%s_k%d(%s", segment(e, i, false), segbytes(e, i), e->nm, i, cnumel(e, in->arg[1]));
			for (k = 0; k < a.n; k++)
				snprintf(call + strlen(call), calln - strlen(call), ", %s", a.val[k]);
			snprintf(call + strlen(call), calln - strlen(call), ");");
			return;
		}
		/* pull along the segment plan built at bind: one task per
		 * output element, a fixed order, no atomics */
		arg(&a, "const int64_t *rowptr", "(const int64_t *)%s", segment(e, i, dev));
		arg(&a, "int64_t n", "%s", cdim(e, n));
		arg(&a, "int64_t row", "%s", row);
		kernelhead(e, i, device, &a);
		out(e, "\t\tconst int64_t *order = rowptr + n + 1;\n");
		out(e, "\t\tint64_t r_ = t / row, j_ = t %% row, k_;\n");
		out(e, "\t\t%s acc = 0;\n", ot);
		out(e, "\t\tfor (k_ = rowptr[r_]; k_ < rowptr[r_ + 1]; k_++) {\n");
		out(e, "\t\t\t%s v = msg[order[k_] * row + j_];\n", ot);
		if (in->op == Oscatter_max)
			out(e, "\t\t\tif (k_ == rowptr[r_] || v > acc || v != v)\n\t\t\t\tacc = v;\n");
		else
			out(e, "\t\t\tacc += v;\n");
		out(e, "\t\t}\n");
		if (in->op == Oscatter_mean)
			out(e, "\t\tif (rowptr[r_ + 1] - rowptr[r_] > 1)\n\t\t\tacc /= (%s)(rowptr[r_ + 1] - rowptr[r_]);\n", ot);
		out(e, "\t\to[t] = acc;\n");
		kerneltail(e);
		snprintf(T, sizeof T, "%s", cnumel(e, in->to));
		break;
	}
	case Oedge_softmax: {
		const char *row = cprod(e, &src[1], 1, src[1].rank);
		ptrarg(e, &a, "o", in->to, true, dev);
		ptrarg(e, &a, "s", in->arg[1], false, dev);
		arg(&a, "const int64_t *rowptr", "(const int64_t *)%s", segment(e, i, dev));
		arg(&a, "int64_t n", "%s", cdim(e, ty(e, in->arg[0]).dim[0]));
		arg(&a, "int64_t row", "%s", row);
		kernelhead(e, i, device, &a);
		out(e, "\t\tconst int64_t *order = rowptr + n + 1;\n");
		out(e, "\t\tint64_t r_ = t / row, j_ = t %% row, k_;\n");
		out(e, "\t\t%s mx = 0, sum = 0;\n", ot);
		out(e, "\t\tfor (k_ = rowptr[r_]; k_ < rowptr[r_ + 1]; k_++) {\n");
		out(e, "\t\t\t%s v = s[order[k_] * row + j_];\n", ot);
		out(e, "\t\t\tif (k_ == rowptr[r_] || v > mx)\n\t\t\t\tmx = v;\n\t\t}\n");
		out(e, "\t\tfor (k_ = rowptr[r_]; k_ < rowptr[r_ + 1]; k_++)\n");
		out(e, "\t\t\tsum += exp%s(s[order[k_] * row + j_] - mx);\n", isf32(o.dtype) ? "f" : "");
		out(e, "\t\tfor (k_ = rowptr[r_]; k_ < rowptr[r_ + 1]; k_++)\n");
		out(e, "\t\t\to[order[k_] * row + j_] = exp%s(s[order[k_] * row + j_] - mx) / (sum + (%s)1e-16);\n",
		    isf32(o.dtype) ? "f" : "", ot);
		kerneltail(e);
		snprintf(T, sizeof T, "%s * %s", cdim(e, ty(e, in->arg[0]).dim[0]), row);
		break;
	}
	case Omatmul: {
		if (e->sched.tile > 1 || e->sched.axpy) {
			emitdense(e, i, device, dev, &a, T, sizeof T);
			break;
		}
		/* a as [batch.., M, K], b as [batch.., K, P]; vectors as 1-row
		 * or 1-column matrices, which keeps the offsets uniform */
		Type ab = src[0], bb = src[1], ob = o;
		Dim one = 1;
		const char *K = cdim(e, src[0].dim[src[0].rank - 1]);
		const char *M = src[0].rank >= 2 ? cdim(e, src[0].dim[src[0].rank - 2]) : cdim(e, one);
		const char *P = src[1].rank >= 2 ? cdim(e, src[1].dim[src[1].rank - 1]) : cdim(e, one);
		ab.rank = src[0].rank > 2 ? src[0].rank - 2 : 0;
		bb.rank = src[1].rank > 2 ? src[1].rank - 2 : 0;
		ob.rank = ab.rank > bb.rank ? ab.rank : bb.rank;
		ptrarg(e, &a, "o", in->to, true, dev);
		ptrarg(e, &a, "A", in->arg[0], false, dev);
		ptrarg(e, &a, "B", in->arg[1], false, dev);
		arg(&a, "int64_t M", "%s", M);
		arg(&a, "int64_t K", "%s", K);
		arg(&a, "int64_t P", "%s", P);
		{
			Type bs[2] = {ab, bb};
			stridedsrc(e, &a, &ob, 2, bs, NULL);
		}
		kernelhead(e, i, device, &a);
		out(e, "\t\tint64_t p_ = t %% P, m_ = (t / P) %% M;\n");
		stridedbody(e, ob.rank, 2, "t / (P * M)");
		out(e, "\t\tconst %s *a_ = A + i0 * M * K + m_ * K;\n", ot);
		out(e, "\t\tconst %s *b_p = B + i1 * K * P + p_;\n", ot);
		out(e, "\t\t%s acc = 0;\n\t\tfor (int64_t k_ = 0; k_ < K; k_++)\n\t\t\tacc += a_[k_] * b_p[k_ * P];\n", ot);
		out(e, "\t\to[t] = acc;\n");
		kerneltail(e);
		break;
	}
	case Otranspose: {
		const Attr *pa = findattr(in, "perm");
		for (k = 0; k < r; k++)
			perm[k] = (int)pa->u.is[k];
		ptrarg(e, &a, "o", in->to, true, dev);
		ptrarg(e, &a, "x", in->arg[0], false, dev);
		stridedsrc(e, &a, &o, 1, src, perm);
		kernelhead(e, i, device, &a);
		stridedbody(e, r, 1, "t");
		out(e, "\t\to[t] = x[i0];\n");
		kerneltail(e);
		break;
	}
	case Oconcat: {
		int64_t d = attrint(in, "dim", 0);
		char decl[64];
		ptrarg(e, &a, "o", in->to, true, dev);
		for (k = 0; k < in->narg; k++) {
			snprintf(decl, sizeof decl, "x%d", k);
			ptrarg(e, &a, decl, in->arg[k], false, dev);
			snprintf(decl, sizeof decl, "int64_t n%d", k);
			arg(&a, decl, "%s", cdim(e, src[k].dim[d]));
		}
		arg(&a, "int64_t D", "%s", cdim(e, o.dim[d]));
		arg(&a, "int64_t inner", "%s", cprod(e, &o, d + 1, r));
		kernelhead(e, i, device, &a);
		out(e, "\t\tint64_t i_ = t %% inner, c_ = (t / inner) %% D, o_ = t / (inner * D);\n");
		/* one chain: each step takes the inputs before it off c_ */
		for (k = 0; k < in->narg; k++) {
			if (k == 0)
				out(e, "\t\tif (c_ < n0)\n");
			else
				out(e, "\t\telse if ((c_ -= n%d) < n%d)\n", k - 1, k);
			out(e, "\t\t\to[t] = x%d[(o_ * n%d + c_) * inner + i_];\n", k, k);
		}
		kerneltail(e);
		break;
	}
	case Osum:
	case Omean:
	case Omax:
	case Osoftmax:
	case Olog_softmax:
	case Ol2_normalize: {
		int64_t d = attrint(in, "dim", 0);
		const char *f = isf32(src[0].dtype) ? "f" : "";
		const char *it = ctype(src[0].dtype);
		ptrarg(e, &a, "o", in->to, true, dev);
		ptrarg(e, &a, "x", in->arg[0], false, dev);
		arg(&a, "int64_t D", "%s", cdim(e, src[0].dim[d]));
		arg(&a, "int64_t inner", "%s", cprod(e, &src[0], d + 1, src[0].rank));
		kernelhead(e, i, device, &a);
		out(e, "\t\tint64_t i_ = t %% inner, o_ = t / inner, k_;\n");
		out(e, "\t\tconst %s *x_ = x + o_ * D * inner + i_;\n", it);
		if (in->op == Osum || in->op == Omean) {
			out(e, "\t\t%s acc = 0;\n\t\tfor (k_ = 0; k_ < D; k_++)\n\t\t\tacc += x_[k_ * inner];\n", it);
			out(e, "\t\to[t] = acc%s;\n", in->op == Omean ? " / (D ? D : 1)" : "");
			if (in->op == Omean)
				out(e, "\t\tif (D == 0)\n\t\t\to[t] = (%s)NAN;\n", it);
		} else if (in->op == Omax) {
			out(e, "\t\t%s acc = x_[0];\n\t\tfor (k_ = 1; k_ < D; k_++)\n", it);
			out(e, "\t\t\tif (x_[k_ * inner] > acc || x_[k_ * inner] != x_[k_ * inner])\n\t\t\t\tacc = x_[k_ * inner];\n");
			out(e, "\t\to[t] = acc;\n");
		} else if (in->op == Ol2_normalize) {
			out(e, "\t\t%s ss = 0;\n\t\tfor (k_ = 0; k_ < D; k_++)\n\t\t\tss += x_[k_ * inner] * x_[k_ * inner];\n", it);
			out(e, "\t\tss = sqrt%s(ss);\n\t\tif (!(ss > (%s)%.17g))\n\t\t\tss = (%s)%.17g;\n", f, it,
			    attrfloat(in, "eps", 1e-12), it, attrfloat(in, "eps", 1e-12));
			out(e, "\t\tfor (k_ = 0; k_ < D; k_++)\n\t\t\to[o_ * D * inner + i_ + k_ * inner] = x_[k_ * inner] / ss;\n");
		} else {
			out(e, "\t\t%s mx = x_[0], sum = 0;\n\t\tfor (k_ = 1; k_ < D; k_++)\n", it);
			out(e, "\t\t\tif (x_[k_ * inner] > mx)\n\t\t\t\tmx = x_[k_ * inner];\n");
			out(e, "\t\tfor (k_ = 0; k_ < D; k_++)\n\t\t\tsum += exp%s(x_[k_ * inner] - mx);\n", f);
			out(e, "\t\tfor (k_ = 0; k_ < D; k_++)\n\t\t\to[o_ * D * inner + i_ + k_ * inner] = ");
			if (in->op == Osoftmax)
				out(e, "exp%s(x_[k_ * inner] - mx) / sum;\n", f);
			else
				out(e, "x_[k_ * inner] - mx - log%s(sum);\n", f);
		}
		kerneltail(e);
		snprintf(T, sizeof T, "%s * %s", cprod(e, &src[0], 0, d), cprod(e, &src[0], d + 1, src[0].rank));
		break;
	}
	default:
		if (fl & Fbin) {
			ptrarg(e, &a, "o", in->to, true, dev);
			ptrarg(e, &a, "A", in->arg[0], false, dev);
			ptrarg(e, &a, "B", in->arg[1], false, dev);
			stridedsrc(e, &a, &o, 2, src, NULL);
			kernelhead(e, i, device, &a);
			stridedbody(e, r, 2, "t");
			binaryexpr(expr, sizeof expr, in->op, o.dtype);
			out(e, "\t\t%s a = A[i0], b = B[i1];\n\t\to[t] = %s;\n", ot, expr);
			kerneltail(e);
			break;
		}
		if (fl & Felem) {
			ptrarg(e, &a, "o", in->to, true, dev);
			ptrarg(e, &a, "X", in->arg[0], false, dev);
			kernelhead(e, i, device, &a);
			unaryexpr(expr, sizeof expr, in, src[0].dtype, o.dtype);
			out(e, "\t\t%s x = X[t];\n\t\to[t] = %s;\n", ctype(src[0].dtype), expr);
			kerneltail(e);
			break;
		}
		die("codegen: no kernel for %s", opinfo[in->op].name);
	}
	snprintf(call, calln, "%s(%s_k%d%s, %s", device ? "GNN_DLAUNCH" : "GNN_HLAUNCH", e->nm, i, e->sfx, T);
	for (k = 0; k < a.n; k++)
		snprintf(call + strlen(call), calln - strlen(call), ", %s", a.val[k]);
	snprintf(call + strlen(call), calln - strlen(call), ");");
}

static bool
isaliasins(const Ins *in)
{
	return in->op == Oreshape || in->op == Odropout;
}

/* Graph ops and graph-only tensors come from the runtime at bind; every
 * other instruction that computes gets a function of its own. */
static bool
needskernel(E *e, const Ins *in)
{
	if (in->op == Oparam || isaliasins(in) || ty(e, in->to).kind == TGraph)
		return false;
	return !(opinfo[in->op].flags & Fgraph);
}

/* A tuning build's kernel: every candidate, and a switch that runs the
 * selected one. */
static char *
candidates(E *e, int i, int kk)
{
	const TuneCands *tc = e->tc;
	size_t cap = 1024, len = 0, need;
	char *sw = emalloc(cap), call[8192], sfx[16];
	int c;

	len = snprintf(sw, cap, "switch (%s) {\n", tunesel(e, kk));
	for (c = 0; c < tc->ncand[kk]; c++) {
		e->sched = tc->cand[kk][c];
		snprintf(sfx, sizeof sfx, "_s%d", c);
		e->sfx = sfx;
		if (attrint(&e->fn->ins[i], "group", -1) >= 0)
			emitrowkernel(e, (int)attrint(&e->fn->ins[i], "group", -1), call, sizeof call);
		else
			emitkernel(e, i, call, sizeof call);
		need = len + strlen(call) + 64;
		if (need > cap)
			sw = realloc(sw, cap = 2 * need);
		if (!sw)
			die("out of memory");
		len += snprintf(sw + len, cap - len, "\tcase %d:\n\t\t%s\n\t\tbreak;\n", c, call);
	}
	e->sfx = "";
	snprintf(sw + len, cap - len, "\tdefault:\n\t\tbreak;\n\t}");
	return sw;
}

void
emitkernels(E *e)
{
	char call[8192];
	int i, *kern, last = -1;

	/* kernels in forward's order, as memory planning and the report
	 * count them: a fusion group is one row kernel, run where it starts */
	kern = emalloc((e->fn->nins + 1) * sizeof *kern);
	forwardkernels(e->fn, e->p->phase, kern);
	e->calls = emalloc((e->fn->nins + 1) * sizeof *e->calls);
	if (e->tc)
		e->kstart = emalloc((e->tc->nkernels + 1) * sizeof *e->kstart);
	for (i = 0; i < e->fn->nins; i++) {
		if (kern[i] >= 0 && kern[i] != last)
			schedof(&e->fn->ins[i], &e->sched);
		else
			scheddefault(&e->sched);
		if (e->tc && kern[i] >= 0 && kern[i] != last) {
			if (kern[i] >= e->tc->nkernels)
				die("codegen: a tuning build with %d kernels, forward has more", e->tc->nkernels);
			e->kstart[kern[i]] = i;
			e->calls[i] = candidates(e, i, kern[i]);
			last = kern[i];
			continue;
		}
		if (kern[i] >= 0 && kern[i] != last && attrint(&e->fn->ins[i], "group", -1) >= 0) {
			emitrowkernel(e, (int)attrint(&e->fn->ins[i], "group", -1), call, sizeof call);
			e->calls[i] = estrdup(call);
		} else if (kern[i] < 0 ? needskernel(e, &e->fn->ins[i]) : kern[i] != last) {
			emitkernel(e, i, call, sizeof call);
			e->calls[i] = estrdup(call);
		}
		if (kern[i] >= 0)
			last = kern[i];
	}
	free(kern);
}


void
freekernels(E *e)
{
	int i;

	for (i = 0; i < e->fn->nins; i++)
		free(e->calls[i]);
	free(e->calls);
}

