/*
 * Emission of a model's C (--target=cpu) or CUDA C (--target=cuda)
 * source and of its header.
 *
 * The generated file is standalone: it needs only gnnrt.h (and the CUDA
 * runtime for cuda).  Per model it holds
 *   1. one function per instruction: a parallel loop over independent
 *      tasks (output elements, rows, segments), whose sizes arrive as
 *      arguments.  Bind-time instructions always run on the host; forward
 *      instructions run on the device for cuda, so their functions are
 *      __global__ kernels there and plain loops (OpenMP where available)
 *      for cpu.  Loop bodies are written once, for both;
 *   2. bind: graph ops through the runtime, derived sizes, the other
 *      bind-time values, segment plans for deterministic scatters, and
 *      the memory plan (every forward value gets its offset in one arena,
 *      sized from N, E and the derived sizes; nothing is allocated in
 *      forward);
 *   3. the API (create, load_weights, bind, forward, forward_host,
 *      destroy) and the descriptor that generic tools use.
 */
#include <stdarg.h>
#include <string.h>

#include "codegen.h"
#include "emit.h"

void
out(E *e, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vfprintf(e->f, fmt, ap);
	va_end(ap);
}

const char *
ctype(int dt)
{
	switch (dt) {
	case DF32: return "float";
	case DF64: return "double";
	case DI32: return "int32_t";
	case DI64: return "int64_t";
	case DBool: return "uint8_t";
	}
	die("codegen: no C type for %s", dtypename(dt));
}

static const char *
gnndtype(int dt)
{
	switch (dt) {
	case DF32: return "GNN_F32";
	case DF64: return "GNN_F64";
	case DI32: return "GNN_I32";
	case DI64: return "GNN_I64";
	case DBool: return "GNN_BOOL";
	}
	die("codegen: no runtime dtype for %s", dtypename(dt));
}

/* A dim as a C expression over m->sym[]; buffers rotate. */
const char *
cdim(E *e, Dim d)
{
	static char buf[8][512];
	static int k;
	const DExp *x;
	char *b;
	size_t n = 0;
	int i, j;

	k = (k + 1) % 8;
	b = buf[k];
	if (dimisconst(d)) {
		snprintf(b, sizeof buf[k], "(int64_t)%d", d);
		return b;
	}
	x = &e->m->dexp[~d];
	n += snprintf(b + n, sizeof buf[k] - n, "(");
	for (i = 0; i < x->nterm && n < sizeof buf[k]; i++) {
		n += snprintf(b + n, sizeof buf[k] - n, "%s(int64_t)%lld", i ? " + " : "", (long long)x->term[i].coef);
		for (j = 0; j < x->term[i].deg && n < sizeof buf[k]; j++)
			n += snprintf(b + n, sizeof buf[k] - n, " * m->sym[%d]", x->term[i].sym[j]);
	}
	if (n + 2 >= sizeof buf[k])
		die("codegen: dim expression too long");
	snprintf(b + n, sizeof buf[k] - n, ")");
	return b;
}

Type
ty(E *e, Ref v)
{
	return e->fn->val[v].type;
}

/* the element count of v as a C expression */
const char *
cnumel(E *e, Ref v)
{
	Type t = ty(e, v);
	bool ok = true;
	Dim n = dimprod(e->m, t.dim, t.rank, &ok);

	if (!ok)
		die("codegen: element count overflows");
	return cdim(e, n);
}

/* product of dims [from, to) */
const char *
cprod(E *e, const Type *t, int from, int to)
{
	bool ok = true;
	Dim n = dimprod(e->m, t->dim + from, to - from, &ok);

	if (!ok)
		die("codegen: size overflows");
	return cdim(e, n);
}

/* ---- kernels ------------------------------------------------------------ */



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
	arg(a, decl, "(%s%s *)m->%s[%d]", isout ? "" : "const ", ctype(ty(e, v).dtype), device ? "d" : "h", s);
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
			arg(&a, "int64_t *cnt", "(int64_t *)m->hseg[%d]", i);
			serialscatter(e, i, &a);
			snprintf(call, calln, "memset(m->hseg[%d], 0, m->segnb[%d]);\n\t%s_k%d(%s", i, i, e->nm, i, cnumel(e, in->arg[1]));
			for (k = 0; k < a.n; k++)
				snprintf(call + strlen(call), calln - strlen(call), ", %s", a.val[k]);
			snprintf(call + strlen(call), calln - strlen(call), ");");
			return;
		}
		/* pull along the segment plan built at bind: one task per
		 * output element, a fixed order, no atomics */
		arg(&a, "const int64_t *rowptr", "(const int64_t *)m->%sseg[%d]", dev ? "d" : "h", i);
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
		arg(&a, "const int64_t *rowptr", "(const int64_t *)m->%sseg[%d]", dev ? "d" : "h", i);
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

/* ---- bind, forward and the API --------------------------------------------- */

static bool
isaliasins(const Ins *in)
{
	return in->op == Oreshape || in->op == Odropout;
}

static int
phaseof(E *e, Ref v)
{
	return e->p->phase[v];
}

/* Does forward read v (or v is an output)? */
static bool
usedinforward(E *e, Ref v)
{
	Fn *fn = e->fn;
	int i, k;

	for (i = 0; i < fn->nret; i++)
		if (storageof(e->p, fn->ret[i]) == v)
			return true;
	for (i = 0; i < fn->nins; i++)
		if (phaseof(e, fn->ins[i].to) == PhaseForward && !isaliasins(&fn->ins[i]))
			for (k = 0; k < fn->ins[i].narg; k++)
				if (storageof(e->p, fn->ins[i].arg[k]) == v)
					return true;
	return false;
}

/* Needs instruction i a segment plan (or, for a serial scatter, counts)? */
static bool
hasseg(E *e, int i)
{
	int op = e->fn->ins[i].op;

	return (opinfo[op].flags & Fscatter) || op == Oedge_softmax;
}

static void
emitstruct(E *e)
{
	Fn *fn = e->fn;

	out(e, "\nstruct %s {\n", e->nm);
	out(e, "\tint64_t sym[%d];\n", e->m->nsym ? e->m->nsym : 1);
	out(e, "\tint bound;\n");
	out(e, "\tvoid *h[%d];          /* host storage: params, bind-time values */\n", fn->nval);
	out(e, "\tvoid *d[%d];          /* what forward reads: %s */\n", fn->nval, e->cuda ? "device pointers" : "the host pointers");
	out(e, "\tsize_t nb[%d];        /* bytes of each h[] */\n", fn->nval);
	out(e, "\tgnn_graph *g[%d];     /* graph values (the input one is borrowed) */\n", fn->nval);
	out(e, "\tvoid *hseg[%d], *dseg[%d];   /* segment plans of scatters */\n", fn->nins ? fn->nins : 1, fn->nins ? fn->nins : 1);
	out(e, "\tsize_t segnb[%d];\n", fn->nins ? fn->nins : 1);
	out(e, "\tunsigned char *arena;   /* forward values%s */\n", e->cuda ? ", device copies and staging" : "");
	out(e, "\tsize_t arenasize;\n");
	if (e->tc)
		out(e, "\tint sel[%d];          /* tuning: the candidate each kernel runs */\n", e->tc->nkernels ? e->tc->nkernels : 1);
	if (e->cuda) {
		out(e, "\tvoid *stage[%d];      /* forward_host: inputs then outputs */\n", fn->narg + fn->nret);
		out(e, "\tcudaStream_t stream;\n");
	}
	out(e, "};\n");
}

static void
emitinfo(E *e, const char *what, Ref v, const char *name)
{
	Type t = ty(e, v);
	char dims[512];
	int k;

	snprinttype(dims, sizeof dims, e->m, t);
	out(e, "\t{\"%s\", %s, %d, {", name, gnndtype(t.dtype), t.rank);
	for (k = 0; k < t.rank; k++)
		out(e, "%s%lld", k ? ", " : "", dimisconst(t.dim[k]) ? (long long)dimconstval(t.dim[k]) : -1LL);
	if (t.rank == 0)
		out(e, "0");
	out(e, "}, \"%s\"},\n", strchr(dims, '['));
	(void)what;
}

static void
emittables(E *e)
{
	Fn *fn = e->fn;
	int i, n = 0;
	char buf[32];

	out(e, "\nstatic const gnn_tensor_info %s_inputs[] = {\n", e->nm);
	for (i = 0; i < fn->narg; i++)
		if (ty(e, fn->arg[i]).kind == TTensor)
			emitinfo(e, "input", fn->arg[i], fn->val[fn->arg[i]].name), n++;
	if (!n)
		out(e, "\t{NULL, GNN_F32, 0, {0}, \"\"},\n");
	out(e, "};\n\nstatic const gnn_tensor_info %s_outputs[] = {\n", e->nm);
	for (i = 0; i < fn->nret; i++) {
		snprintf(buf, sizeof buf, "output%d", i);
		emitinfo(e, "output", fn->ret[i], buf);
	}
	out(e, "};\n\nstatic const gnn_tensor_info %s_params[] = {\n", e->nm);
	for (i = 0; i < fn->nins; i++)
		if (fn->ins[i].op == Oparam)
			emitinfo(e, "param", fn->ins[i].to, attrstr(&fn->ins[i], "name"));
	if (!e->p->nparam)
		out(e, "\t{NULL, GNN_F32, 0, {0}, \"\"},\n");
	out(e, "};\n");
}

static const char *
cbytes(E *e, Ref v)
{
	static char buf[4][700];
	static int k;

	k = (k + 1) % 4;
	snprintf(buf[k], sizeof buf[k], "((size_t)%s * %zu)", cnumel(e, v), dtypesize(ty(e, v).dtype));
	return buf[k];
}

/* Parameter-only values (a transposed weight): computed on the host
 * whenever the parameters change, uploaded once for forward. */
static void
emitloadtime(E *e)
{
	Fn *fn = e->fn;
	int i;
	Ref v;

	out(e, "\nstatic gnn_status\n%s_loadtime(%s *m)\n{\n", e->nm, e->nm);
	for (i = 0; i < fn->nins; i++) {
		v = fn->ins[i].to;
		if (phaseof(e, v) != PhaseLoad || !e->calls[i])
			continue;
		out(e, "\t%s\n", e->calls[i]);
		if (e->cuda && usedinforward(e, v))
			out(e, "\tif (m->nb[%d] && cudaMemcpy(m->d[%d], m->h[%d], m->nb[%d], cudaMemcpyHostToDevice) != cudaSuccess)\n\t\treturn gnn_error(GNN_ERR_CUDA, \"%s: upload failed\");\n",
			    v, v, v, v, e->nm);
	}
	out(e, "\t(void)m;\n\treturn GNN_OK;\n}\n");
}

static void
emitcreate(E *e)
{
	Fn *fn = e->fn;
	int i;
	const Ins *in;

	out(e, "\nstatic void %s_unbind(%s *m);\n", e->nm, e->nm);
	emitloadtime(e);
	out(e, "\nvoid\n%s_destroy(%s *m)\n{\n\tint i;\n\n\tif (!m)\n\t\treturn;\n\t%s_unbind(m);\n", e->nm, e->nm, e->nm);
	out(e, "\tfor (i = 0; i < %d; i++) {\n", fn->nval);
	if (e->cuda)
		out(e, "\t\tif (m->d[i] && m->d[i] != m->h[i] && m->h[i])\n\t\t\tcudaFree(m->d[i]);\n");
	out(e, "\t\tgnn_free(m->h[i], m->nb[i]);\n\t}\n");
	if (e->cuda)
		out(e, "\tif (m->arena)\n\t\tcudaFree(m->arena);\n\tif (m->stream)\n\t\tcudaStreamDestroy(m->stream);\n");
	else
		out(e, "\tgnn_free(m->arena, m->arenasize);\n");
	out(e, "\tgnn_free(m, sizeof *m);\n}\n");

	out(e, "\ngnn_status\n%s_create(%s **out)\n{\n\t%s *m;\n\tsize_t i;\n\n", e->nm, e->nm, e->nm);
	out(e, "\tif (!out)\n\t\treturn gnn_error(GNN_ERR_ARG, \"%s_create: out is NULL\");\n\t*out = NULL;\n", e->nm);
	out(e, "\tif (!(m = (%s *)gnn_malloc(sizeof *m)))\n\t\treturn gnn_error(GNN_ERR_MEM, \"%s_create: out of memory\");\n", e->nm, e->nm);
	out(e, "\tmemset(m, 0, sizeof *m);\n");
	if (e->cuda)
		out(e, "\tif (cudaStreamCreateWithFlags(&m->stream, cudaStreamNonBlocking) != cudaSuccess) {\n\t\t%s_destroy(m);\n\t\treturn gnn_error(GNN_ERR_CUDA, \"%s_create: no CUDA device or stream\");\n\t}\n", e->nm, e->nm);
	for (i = 0; i < fn->nins; i++) {
		in = &fn->ins[i];
		if (in->op != Oparam)
			continue;
		out(e, "\t/* %s */\n", attrstr(in, "name"));
		out(e, "\tm->nb[%d] = %s;\n", in->to, cbytes(e, in->to));
		out(e, "\tif (m->nb[%d] && !(m->h[%d] = gnn_malloc(m->nb[%d]))) {\n\t\t%s_destroy(m);\n\t\treturn gnn_error(GNN_ERR_MEM, \"%s_create: out of memory\");\n\t}\n",
		    in->to, in->to, in->to, e->nm, e->nm);
		if (findattr(in, "init"))
			out(e, "\tfor (i = 0; i < m->nb[%d] / sizeof(%s); i++)\n\t\t((%s *)m->h[%d])[i] = (%s)%.17g;\n",
			    in->to, ctype(ty(e, in->to).dtype), ctype(ty(e, in->to).dtype), in->to,
			    ctype(ty(e, in->to).dtype), attrfloat(in, "init", 0));
		else
			out(e, "\tif (m->nb[%d])\n\t\tmemset(m->h[%d], 0, m->nb[%d]);\n", in->to, in->to, in->to);
		if (e->cuda) {
			out(e, "\tif (m->nb[%d] && (cudaMalloc(&m->d[%d], m->nb[%d]) != cudaSuccess ||\n", in->to, in->to, in->to);
			out(e, "\t    cudaMemcpy(m->d[%d], m->h[%d], m->nb[%d], cudaMemcpyHostToDevice) != cudaSuccess)) {\n", in->to, in->to, in->to);
			out(e, "\t\t%s_destroy(m);\n\t\treturn gnn_error(GNN_ERR_CUDA, \"%s_create: cannot allocate parameters on the device\");\n\t}\n", e->nm, e->nm);
		} else
			out(e, "\tm->d[%d] = m->h[%d];\n", in->to, in->to);
	}
	for (i = 0; i < fn->nins; i++) {
		Ref v = fn->ins[i].to;
		if (phaseof(e, v) != PhaseLoad || isaliasins(&fn->ins[i]))
			continue;
		out(e, "\tm->nb[%d] = %s;\n", v, cbytes(e, v));
		out(e, "\tif (m->nb[%d] && !(m->h[%d] = gnn_malloc(m->nb[%d]))) {\n\t\t%s_destroy(m);\n\t\treturn gnn_error(GNN_ERR_MEM, \"%s_create: out of memory\");\n\t}\n",
		    v, v, v, e->nm, e->nm);
		if (e->cuda && usedinforward(e, v))
			out(e, "\tif (m->nb[%d] && cudaMalloc(&m->d[%d], m->nb[%d]) != cudaSuccess) {\n\t\t%s_destroy(m);\n\t\treturn gnn_error(GNN_ERR_CUDA, \"%s_create: out of device memory\");\n\t}\n",
			    v, v, v, e->nm, e->nm);
		else
			out(e, "\tm->d[%d] = m->h[%d];\n", v, v);
	}
	out(e, "\t{\n\t\tgnn_status s = %s_loadtime(m);\n\t\tif (s != GNN_OK) {\n\t\t\t%s_destroy(m);\n\t\t\treturn s;\n\t\t}\n\t}\n", e->nm, e->nm);
	out(e, "\t(void)i;\n\t*out = m;\n\treturn GNN_OK;\n}\n");
}

static void
emitload(E *e)
{
	Fn *fn = e->fn;
	int i, k = 0;

	out(e, "\ngnn_status\n%s_load_weights(%s *m, const char *path)\n{\n", e->nm, e->nm);
	out(e, "\tvoid *dst[%d];\n\tgnn_status s;\n\n", e->p->nparam ? e->p->nparam : 1);
	out(e, "\tif (!m || !path)\n\t\treturn gnn_error(GNN_ERR_ARG, \"%s_load_weights: NULL argument\");\n", e->nm);
	for (i = 0; i < fn->nins; i++)
		if (fn->ins[i].op == Oparam)
			out(e, "\tdst[%d] = m->h[%d];\n", k++, fn->ins[i].to);
	out(e, "\tif ((s = gnn_load_params(path, %s_params, %d, dst)) != GNN_OK)\n\t\treturn s;\n", e->nm, e->p->nparam);
	if (e->cuda)   /* queued forwards read the parameters being replaced */
		out(e, "\tif (cudaStreamSynchronize(m->stream) != cudaSuccess)\n\t\treturn gnn_error(GNN_ERR_CUDA, \"%s_load_weights: an earlier forward failed\");\n", e->nm);
	if (e->cuda)
		for (i = 0; i < fn->nins; i++)
			if (fn->ins[i].op == Oparam)
				out(e, "\tif (m->nb[%d] && cudaMemcpy(m->d[%d], m->h[%d], m->nb[%d], cudaMemcpyHostToDevice) != cudaSuccess)\n\t\treturn gnn_error(GNN_ERR_CUDA, \"%s_load_weights: upload failed\");\n",
				    fn->ins[i].to, fn->ins[i].to, fn->ins[i].to, fn->ins[i].to, e->nm);
	out(e, "\t(void)dst;\n\treturn %s_loadtime(m);\n}\n", e->nm);
}

/* host code computing bind-time value i (a graph op or a tensor) */
static void
emitbindins(E *e, int i)
{
	const Ins *in = &e->fn->ins[i];
	Ref v = in->to, g = in->narg ? in->arg[0] : RNone;
	int s, k;
	bool ok = true;
	Dim rest = 0;

	if (isaliasins(in))
		return;
	if (ty(e, v).kind == TGraph) {
		const char *fnname = in->op == Oadd_self_loops ? "add_self_loops" :
		                     in->op == Oremove_self_loops ? "remove_self_loops" : "add_remaining_self_loops";
		out(e, "\t/* %%%s = %s */\n", e->fn->val[v].name ? e->fn->val[v].name : "", opinfo[in->op].name);
		if (in->op == Oadd_remaining_self_loops)
			out(e, "\tif ((s = gnn_graph_%s(m->g[%d], (float)%.17g, &m->g[%d])) != GNN_OK)\n\t\tgoto fail;\n",
			    fnname, g, attrfloat(in, "fill", 1.0), v);
		else
			out(e, "\tif ((s = gnn_graph_%s(m->g[%d], &m->g[%d])) != GNN_OK)\n\t\tgoto fail;\n", fnname, g, v);
		if (opinfo[in->op].flags & Fdyn) {
			/* the derived size: edges = sym + rest, for the derived
			 * symbol that occurs in the edge count (not merely the
			 * first derived symbol: a model may have several) */
			Type t = ty(e, v);
			const DExp *x = dimisconst(t.dim[1]) ? NULL : &e->m->dexp[~t.dim[1]];
			for (s = 0; x && s < e->m->nsym; s++) {
				if (!e->m->sym[s].derived)
					continue;
				for (k = 0; k < x->nterm; k++)
					if (x->term[k].deg == 1 && x->term[k].sym[0] == s && x->term[k].coef == 1)
						break;
				if (k < x->nterm)
					break;
			}
			rest = x && s < e->m->nsym ? dimsub(e->m, t.dim[1], dimsym(e->m, s), &ok) : 0;
			if (!x || s == e->m->nsym || !ok)
				die("codegen: no derived size in %s", opinfo[in->op].name);
			out(e, "\tm->sym[%d] = gnn_graph_num_edges(m->g[%d]) - %s;\n", s, v, cdim(e, rest));
		}
		return;
	}
	out(e, "\tm->nb[%d] = %s;\n", v, cbytes(e, v));
	out(e, "\tif (m->nb[%d] && !(m->h[%d] = gnn_malloc(m->nb[%d]))) {\n\t\ts = gnn_error(GNN_ERR_MEM, \"%s_bind: out of memory\");\n\t\tgoto fail;\n\t}\n",
	    v, v, v, e->nm);
	switch (in->op) {
	case Osrc:
		out(e, "\tif (m->nb[%d])\n\t\tmemcpy(m->h[%d], gnn_graph_src(m->g[%d]), m->nb[%d]);\n", v, v, g, v);
		return;
	case Odst:
		out(e, "\tif (m->nb[%d])\n\t\tmemcpy(m->h[%d], gnn_graph_dst(m->g[%d]), m->nb[%d]);\n", v, v, g, v);
		return;
	case Obatch:
		out(e, "\tif (m->nb[%d]) {\n\t\tif (gnn_graph_batch(m->g[%d]))\n\t\t\tmemcpy(m->h[%d], gnn_graph_batch(m->g[%d]), m->nb[%d]);\n\t\telse\n\t\t\tmemset(m->h[%d], 0, m->nb[%d]);\n\t}\n",
		    v, g, v, g, v, v, v);
		return;
	case Oin_degree:
	case Oout_degree:
	case Oedge_weight:
	case Ogcn_norm:
		out(e, "\tgnn_graph_%s(m->g[%d], (float *)m->h[%d]);\n", opinfo[in->op].name, g, v);
		return;
	default:
		break;
	}
	if (hasseg(e, i))
		return;   /* run by emitbind once its plan is built */
	out(e, "\t%s\n", e->calls[i]);
}

/* The segment plan (or serial scatter counts) of instruction i. */
static void
emitseg(E *e, int i)
{
	const Ins *in = &e->fn->ins[i];
	Dim n;

	if (in->op == Oedge_softmax) {
		Ref g = in->arg[0];
		out(e, "\t/* edges of %%%s grouped by target */\n", e->fn->val[g].name ? e->fn->val[g].name : "");
		out(e, "\tm->segnb[%d] = (size_t)(2 * gnn_graph_num_nodes(m->g[%d]) + 1 - gnn_graph_num_nodes(m->g[%d]) + gnn_graph_num_edges(m->g[%d])) * sizeof(int64_t);\n", i, g, g, g);
		out(e, "\tif (!(m->hseg[%d] = gnn_malloc(m->segnb[%d]))) {\n\t\ts = gnn_error(GNN_ERR_MEM, \"%s_bind: out of memory\");\n\t\tgoto fail;\n\t}\n", i, i, e->nm);
		out(e, "\tmemcpy(m->hseg[%d], gnn_graph_rowptr(m->g[%d]), (size_t)(gnn_graph_num_nodes(m->g[%d]) + 1) * sizeof(int64_t));\n", i, g, g);
		out(e, "\tif (gnn_graph_num_edges(m->g[%d]))\n\t\tmemcpy((int64_t *)m->hseg[%d] + gnn_graph_num_nodes(m->g[%d]) + 1, gnn_graph_perm(m->g[%d]), (size_t)gnn_graph_num_edges(m->g[%d]) * sizeof(int64_t));\n",
		    g, i, g, g, g);
		return;
	}
	attrdim(in, "n", &n);
	if (phaseof(e, in->arg[1]) != PhaseBind) {
		/* counts of a serial scatter */
		out(e, "\tm->segnb[%d] = (size_t)(%s > 0 ? %s : 1) * sizeof(int64_t);\n", i, cdim(e, n), cdim(e, n));
		out(e, "\tif (!(m->hseg[%d] = gnn_malloc(m->segnb[%d]))) {\n\t\ts = gnn_error(GNN_ERR_MEM, \"%s_bind: out of memory\");\n\t\tgoto fail;\n\t}\n", i, i, e->nm);
		return;
	}
	out(e, "\tm->segnb[%d] = (size_t)(%s + 1 + %s) * sizeof(int64_t);\n", i, cdim(e, n), cnumel(e, in->arg[1]));
	out(e, "\tif (!(m->hseg[%d] = gnn_malloc(m->segnb[%d]))) {\n\t\ts = gnn_error(GNN_ERR_MEM, \"%s_bind: out of memory\");\n\t\tgoto fail;\n\t}\n", i, i, e->nm);
	out(e, "\tif ((s = gnn_segment_plan((const int64_t *)m->h[%d], %s, %s, (int64_t *)m->hseg[%d], (int64_t *)m->hseg[%d] + %s + 1)) != GNN_OK)\n\t\tgoto fail;\n",
	    storageof(e->p, in->arg[1]), cnumel(e, in->arg[1]), cdim(e, n), i, i, cdim(e, n));
}

static void
emitbind(E *e)
{
	Fn *fn = e->fn;
	Type gt = ty(e, e->p->graph);
	const char *what[3] = {"nodes", "edges", "graphs"};
	const char *get[3] = {"gnn_graph_num_nodes", "gnn_graph_num_edges", "gnn_graph_num_graphs"};
	int i, k, s, *buf;
	Ref v, *rep;

	out(e, "\nstatic void\n%s_unbind(%s *m)\n{\n\tint i;\n\n", e->nm, e->nm);
	for (i = 0; i < fn->nins; i++) {
		v = fn->ins[i].to;
		if (phaseof(e, v) != PhaseBind || isaliasins(&fn->ins[i]))
			continue;
		if (ty(e, v).kind == TGraph)
			out(e, "\tgnn_graph_destroy(m->g[%d]);\n\tm->g[%d] = NULL;\n", v, v);
		else
			out(e, "\tgnn_free(m->h[%d], m->nb[%d]);\n\tm->h[%d] = NULL;\n\tm->nb[%d] = 0;\n", v, v, v, v);
	}
	out(e, "\tfor (i = 0; i < %d; i++) {\n\t\tgnn_free(m->hseg[i], m->segnb[i]);\n\t\tm->hseg[i] = m->dseg[i] = NULL;\n\t\tm->segnb[i] = 0;\n\t}\n", fn->nins ? fn->nins : 1);
	out(e, "\t(void)i;\n\tm->bound = 0;\n}\n");

	out(e, "\ngnn_status\n%s_bind(%s *m, gnn_graph *graph)\n{\n\tgnn_status s = GNN_OK;\n\tsize_t off = 0;\n\n", e->nm, e->nm);
	out(e, "\tif (!m || !graph)\n\t\treturn gnn_error(GNN_ERR_ARG, \"%s_bind: NULL argument\");\n", e->nm);
	if (e->cuda)   /* forwards still queued read what bind replaces */
		out(e, "\tif (cudaStreamSynchronize(m->stream) != cudaSuccess)\n\t\treturn gnn_error(GNN_ERR_CUDA, \"%s_bind: an earlier forward failed: %%s\", cudaGetErrorString(cudaGetLastError()));\n", e->nm);
	out(e, "\t%s_unbind(m);\n\tm->g[%d] = graph;\n", e->nm, e->p->graph);
	for (k = 0; k < gt.rank; k++) {
		if ((s = dimassym(e->m, gt.dim[k])) >= 0)
			out(e, "\tm->sym[%d] = %s(graph);\n", s, get[k]);
		else
			/* a constant size (--specialize): plan() allows nothing else */
			out(e, "\tif (%s(graph) != %s)\n\t\treturn gnn_error(GNN_ERR_SHAPE, \"%s_bind: the model was compiled for %lld %s, the graph has %%lld\", (long long)%s(graph));\n",
			    get[k], cdim(e, gt.dim[k]), e->nm, (long long)dimconstval(gt.dim[k]), what[k], get[k]);
	}
	for (i = 0; i < fn->nins; i++) {
		if (phaseof(e, fn->ins[i].to) != PhaseBind)
			continue;
		emitbindins(e, i);
		if (hasseg(e, i)) {
			emitseg(e, i);
			out(e, "\t%s\n", e->calls[i]);
		}
	}
	for (i = 0; i < fn->nins; i++)
		if (phaseof(e, fn->ins[i].to) == PhaseForward && hasseg(e, i))
			emitseg(e, i);
	/* the memory plan: the forward buffers (values with the same memplan
	 * slot share one; values internal to a fusion group have none), and
	 * for cuda the device copies of bind-time values and plans and the
	 * staging of forward_host */
	out(e, "\t/* memory plan */\n");
	buf = emalloc((fn->nval + 1) * sizeof *buf);
	rep = emalloc((fn->nval + 1) * sizeof *rep);
	arenabuffers(fn, e->p->phase, buf, rep);
	for (i = 0; i < fn->nins; i++) {
		v = fn->ins[i].to;
		if (isaliasins(&fn->ins[i]) || ty(e, v).kind == TGraph)
			continue;
		if (phaseof(e, v) == PhaseForward && buf[v] < 0)
			continue;
		if (phaseof(e, v) == PhaseForward && rep[buf[v]] != v) {
			out(e, "\tm->d[%d] = m->d[%d];   /* slot %d */\n", v, rep[buf[v]],
			    (int)attrint(&fn->ins[i], "slot", -1));
		} else if (phaseof(e, v) == PhaseForward || (e->cuda && phaseof(e, v) == PhaseBind && usedinforward(e, v))) {
			out(e, "\tm->d[%d] = (void *)off;\n\toff += (%s + 255) & ~(size_t)255;\n", v, cbytes(e, v));
		} else if (phaseof(e, v) == PhaseBind)
			out(e, "\tm->d[%d] = m->h[%d];\n", v, v);
	}
	for (i = 0; i < fn->nins; i++) {
		if (!hasseg(e, i))
			continue;
		if (e->cuda && phaseof(e, fn->ins[i].to) == PhaseForward)
			out(e, "\tm->dseg[%d] = (void *)off;\n\toff += (m->segnb[%d] + 255) & ~(size_t)255;\n", i, i);
		else
			out(e, "\tm->dseg[%d] = m->hseg[%d];\n", i, i);
	}
	if (e->cuda) {
		for (i = 0; i < fn->narg; i++)
			if (ty(e, fn->arg[i]).kind == TTensor)
				out(e, "\tm->stage[%d] = (void *)off;\n\toff += (%s + 255) & ~(size_t)255;\n", i, cbytes(e, fn->arg[i]));
		for (i = 0; i < fn->nret; i++)
			out(e, "\tm->stage[%d] = (void *)off;\n\toff += (%s + 255) & ~(size_t)255;\n", fn->narg + i, cbytes(e, fn->ret[i]));
	}
	/* grow the arena when this graph needs more than the last one */
	/* never an empty arena: offsets become pointers into it */
	out(e, "\tif (off == 0)\n\t\toff = 256;\n");
	out(e, "\tif (off > m->arenasize) {\n");
	if (e->cuda) {
		out(e, "\t\tif (m->arena)\n\t\t\tcudaFree(m->arena);\n\t\tm->arena = NULL;\n\t\tm->arenasize = 0;\n");
		out(e, "\t\tif (cudaMalloc((void **)&m->arena, off) != cudaSuccess) {\n\t\t\ts = gnn_error(GNN_ERR_CUDA, \"%s_bind: cannot allocate %%zu bytes on the device\", off);\n\t\t\tgoto fail;\n\t\t}\n", e->nm);
	} else {
		out(e, "\t\tgnn_free(m->arena, m->arenasize);\n\t\tm->arenasize = 0;\n");
		out(e, "\t\tif (!(m->arena = (unsigned char *)gnn_malloc(off))) {\n\t\t\ts = gnn_error(GNN_ERR_MEM, \"%s_bind: cannot allocate %%zu bytes\", off);\n\t\t\tgoto fail;\n\t\t}\n", e->nm);
	}
	out(e, "\t\tm->arenasize = off;\n\t}\n");
	/* offsets become pointers */
	for (i = 0; i < fn->nins; i++) {
		v = fn->ins[i].to;
		if (isaliasins(&fn->ins[i]) || ty(e, v).kind == TGraph)
			continue;
		if (phaseof(e, v) == PhaseForward && buf[v] < 0)
			continue;
		if (phaseof(e, v) == PhaseForward || (e->cuda && phaseof(e, v) == PhaseBind && usedinforward(e, v)))
			out(e, "\tm->d[%d] = m->arena + (size_t)m->d[%d];\n", v, v);
		if (e->cuda && phaseof(e, v) == PhaseBind && usedinforward(e, v))
			out(e, "\tif (m->nb[%d] && cudaMemcpy(m->d[%d], m->h[%d], m->nb[%d], cudaMemcpyHostToDevice) != cudaSuccess) {\n\t\ts = gnn_error(GNN_ERR_CUDA, \"%s_bind: upload failed\");\n\t\tgoto fail;\n\t}\n",
			    v, v, v, v, e->nm);
	}
	if (e->cuda) {
		for (i = 0; i < fn->nins; i++)
			if (hasseg(e, i) && phaseof(e, fn->ins[i].to) == PhaseForward)
				out(e, "\tm->dseg[%d] = m->arena + (size_t)m->dseg[%d];\n\tif (cudaMemcpy(m->dseg[%d], m->hseg[%d], m->segnb[%d], cudaMemcpyHostToDevice) != cudaSuccess) {\n\t\ts = gnn_error(GNN_ERR_CUDA, \"%s_bind: upload failed\");\n\t\tgoto fail;\n\t}\n",
				    i, i, i, i, i, e->nm);
		for (i = 0; i < fn->narg + fn->nret; i++)
			if (i >= fn->narg || ty(e, fn->arg[i]).kind == TTensor)
				out(e, "\tm->stage[%d] = m->arena + (size_t)m->stage[%d];\n", i, i);
	}
	out(e, "\tm->bound = 1;\n\treturn GNN_OK;\nfail:\n\t%s_unbind(m);\n\treturn s;\n}\n", e->nm);
	free(buf);
	free(rep);
}

static void
emitrun(E *e)
{
	Fn *fn = e->fn;
	int i, k;
	Ref v;

	out(e, "\nstatic gnn_status\n%s_run(%s *m, const void *const *in, void *const *out)\n{\n", e->nm, e->nm);
	out(e, "\tif (!m || !in || !out)\n\t\treturn gnn_error(GNN_ERR_ARG, \"%s_forward: NULL argument\");\n", e->nm);
	out(e, "\tif (!m->bound)\n\t\treturn gnn_error(GNN_ERR_STATE, \"%s_forward: no graph is bound (call %s_bind first)\");\n", e->nm, e->nm);
	for (i = 0, k = 0; i < fn->narg; i++) {
		v = fn->arg[i];
		if (ty(e, v).kind != TTensor)
			continue;
		out(e, "\tif (!in[%d] && %s != 0)\n\t\treturn gnn_error(GNN_ERR_ARG, \"%s_forward: input '%s' is NULL\");\n", k, cbytes(e, v), e->nm, fn->val[v].name);
		out(e, "\tm->d[%d] = (void *)in[%d];\n", v, k++);
	}
	for (i = 0; i < fn->nret; i++)
		out(e, "\tif (!out[%d] && %s != 0)\n\t\treturn gnn_error(GNN_ERR_ARG, \"%s_forward: output %d is NULL\");\n", i, cbytes(e, fn->ret[i]), e->nm, i);
	for (i = 0; i < fn->nins; i++) {
		if (phaseof(e, fn->ins[i].to) == PhaseForward && e->calls[i])
			out(e, "\t%s\n", e->calls[i]);
	}
	for (i = 0; i < fn->nret; i++) {
		v = storageof(e->p, fn->ret[i]);
		if (e->cuda)
			out(e, "\tif (%s != 0 && cudaMemcpyAsync(out[%d], m->d[%d], %s, cudaMemcpyDefault, m->stream) != cudaSuccess)\n\t\treturn gnn_error(GNN_ERR_CUDA, \"%s_forward: copying output %d failed\");\n",
			    cbytes(e, fn->ret[i]), i, v, cbytes(e, fn->ret[i]), e->nm, i);
		else
			out(e, "\tif (%s != 0)\n\t\tmemcpy(out[%d], m->d[%d], %s);\n", cbytes(e, fn->ret[i]), i, v, cbytes(e, fn->ret[i]));
	}
	if (e->cuda)
		out(e, "\t{\n\t\tcudaError_t err = cudaGetLastError();\n\t\tif (err != cudaSuccess)\n\t\t\treturn gnn_error(GNN_ERR_CUDA, \"%s_forward: %%s\", cudaGetErrorString(err));\n\t}\n", e->nm);
	out(e, "\treturn GNN_OK;\n}\n");

	/* forward_host: the same from host memory */
	out(e, "\nstatic gnn_status\n%s_run_host(%s *m, const void *const *in, void *const *out)\n{\n", e->nm, e->nm);
	if (!e->cuda) {
		out(e, "\treturn %s_run(m, in, out);\n}\n", e->nm);
		return;
	}
	out(e, "\tconst void *din[%d];\n\tvoid *dout[%d];\n\tgnn_status s;\n\n", fn->narg ? fn->narg : 1, fn->nret);
	out(e, "\tif (!m || !in || !out)\n\t\treturn gnn_error(GNN_ERR_ARG, \"%s_forward_host: NULL argument\");\n", e->nm);
	out(e, "\tif (!m->bound)\n\t\treturn gnn_error(GNN_ERR_STATE, \"%s_forward_host: no graph is bound (call %s_bind first)\");\n", e->nm, e->nm);
	for (i = 0, k = 0; i < fn->narg; i++) {
		v = fn->arg[i];
		if (ty(e, v).kind != TTensor)
			continue;
		out(e, "\tif (!in[%d] && %s != 0)\n\t\treturn gnn_error(GNN_ERR_ARG, \"%s_forward_host: input '%s' is NULL\");\n", k, cbytes(e, v), e->nm, fn->val[v].name);
		out(e, "\tdin[%d] = m->stage[%d];\n", k, i);
		out(e, "\tif (%s != 0 && cudaMemcpyAsync(m->stage[%d], in[%d], %s, cudaMemcpyHostToDevice, m->stream) != cudaSuccess)\n\t\treturn gnn_error(GNN_ERR_CUDA, \"%s_forward_host: upload failed\");\n",
		    cbytes(e, v), i, k, cbytes(e, v), e->nm);
		k++;
	}
	for (i = 0; i < fn->nret; i++)
		out(e, "\tdout[%d] = m->stage[%d];\n", i, fn->narg + i);
	out(e, "\tif ((s = %s_run(m, din, dout)) != GNN_OK)\n\t\treturn s;\n", e->nm);
	for (i = 0; i < fn->nret; i++)
		out(e, "\tif (%s != 0 && cudaMemcpyAsync(out[%d], m->stage[%d], %s, cudaMemcpyDeviceToHost, m->stream) != cudaSuccess)\n\t\treturn gnn_error(GNN_ERR_CUDA, \"%s_forward_host: download failed\");\n",
		    cbytes(e, fn->ret[i]), i, fn->narg + i, cbytes(e, fn->ret[i]), e->nm);
	out(e, "\t{\n\t\tcudaError_t err = cudaStreamSynchronize(m->stream);\n\t\tif (err != cudaSuccess)\n\t\t\treturn gnn_error(GNN_ERR_CUDA, \"%s_forward_host: %%s\", cudaGetErrorString(err));\n\t}\n", e->nm);
	out(e, "\treturn GNN_OK;\n}\n");
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

	len = snprintf(sw, cap, "switch (m->sel[%d]) {\n", kk);
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

static void
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

/*
 * A tuning build's NAME_tune: select a candidate per kernel, and time one
 * kernel alone.  Forward has run once with the same inputs, and nothing
 * shares memory in a tuning build, so every kernel's operands are still
 * in place.
 */
static void
emittune(E *e)
{
	const TuneCands *tc = e->tc;
	int k;

	out(e, "\nstatic void\n%s_tune_select(void *mv, int k, int c)\n{\n\t%s *m = (%s *)mv;\n\n", e->nm, e->nm, e->nm);
	out(e, "\tif (m && k >= 0 && k < %d)\n\t\tm->sel[k] = c;\n}\n", tc->nkernels);
	out(e, "\nstatic void\n%s_tune_launch(%s *m, int k)\n{\n\tswitch (k) {\n", e->nm, e->nm);
	for (k = 0; k < tc->nkernels; k++)
		out(e, "\tcase %d: {\n\t%s\n\t\tbreak;\n\t}\n", k, e->calls[e->kstart[k]]);
	out(e, "\tdefault:\n\t\tbreak;\n\t}\n}\n");
	out(e, "\nstatic gnn_status\n%s_tune_time(void *mv, int k, int reps, double *us)\n{\n\t%s *m = (%s *)mv;\n\tdouble t[64], x;\n\tint i, j;\n\n", e->nm, e->nm, e->nm);
	out(e, "\tif (!m || !us || !m->bound || k < 0 || k >= %d)\n\t\treturn gnn_error(GNN_ERR_ARG, \"%s_tune_time: bad arguments\");\n", tc->nkernels, e->nm);
	out(e, "\treps = reps < 1 ? 1 : reps > 64 ? 64 : reps;\n");
	if (e->cuda) {
		out(e, "\tcudaEvent_t a, b;\n\tfloat ms;\n\tif (cudaEventCreate(&a) != cudaSuccess || cudaEventCreate(&b) != cudaSuccess)\n\t\treturn gnn_error(GNN_ERR_CUDA, \"%s_tune_time: no events\");\n", e->nm);
		out(e, "\t%s_tune_launch(m, k);   /* warm */\n", e->nm);
		out(e, "\tfor (i = 0; i < reps; i++) {\n\t\tcudaEventRecord(a, m->stream);\n\t\t%s_tune_launch(m, k);\n\t\tcudaEventRecord(b, m->stream);\n", e->nm);
		out(e, "\t\tcudaEventSynchronize(b);\n\t\tcudaEventElapsedTime(&ms, a, b);\n\t\tt[i] = 1000.0 * ms;\n\t}\n");
		out(e, "\tcudaEventDestroy(a);\n\tcudaEventDestroy(b);\n");
		out(e, "\t{\n\t\tcudaError_t err = cudaGetLastError();\n\t\tif (err != cudaSuccess)\n\t\t\treturn gnn_error(GNN_ERR_CUDA, \"%s_tune_time: %%s\", cudaGetErrorString(err));\n\t}\n", e->nm);
	} else {
		out(e, "\t%s_tune_launch(m, k);   /* warm */\n", e->nm);
		out(e, "\tfor (i = 0; i < reps; i++) {\n\t\tstruct timespec a, b;\n\t\ttimespec_get(&a, TIME_UTC);\n\t\t%s_tune_launch(m, k);\n\t\ttimespec_get(&b, TIME_UTC);\n", e->nm);
		out(e, "\t\tt[i] = (double)(b.tv_sec - a.tv_sec) * 1e6 + (double)(b.tv_nsec - a.tv_nsec) / 1e3;\n\t}\n");
	}
	out(e, "\tfor (i = 1; i < reps; i++)\n\t\tfor (j = i, x = t[i]; j > 0 && t[j - 1] > x; j--)\n\t\t\tt[j] = t[j - 1], t[j - 1] = x;\n");
	out(e, "\t*us = t[reps / 2];\n\treturn GNN_OK;\n}\n");
	out(e, "\nstatic const char *\n%s_tune_arch(void)\n{\n", e->nm);
	if (e->cuda) {
		/* the emulated device's timings are the CPU's: a key of their own,
		 * so that a real GPU's cache entries never meet them */
		out(e, "#ifdef GNN_EMU\n\treturn \"emu\";\n#else\n");
		out(e, "\tstatic char name[32];\n\tcudaDeviceProp p;\n\tint dev;\n\n");
		out(e, "\tif (cudaGetDevice(&dev) != cudaSuccess || cudaGetDeviceProperties(&p, dev) != cudaSuccess)\n\t\treturn NULL;\n");
		out(e, "\tsnprintf(name, sizeof name, \"sm_%%d%%d\", p.major, p.minor);\n\treturn name;\n#endif\n}\n");
	} else
		out(e, "\treturn NULL;\n}\n");
	out(e, "\nstatic const int %s_tune_ncand[%d] = {", e->nm, tc->nkernels ? tc->nkernels : 1);
	for (k = 0; k < tc->nkernels; k++)
		out(e, "%s%d", k ? ", " : "", tc->ncand[k]);
	out(e, "};\n\n%sconst gnn_tune_desc %s_tune = {\n\t%d, %s_tune_ncand, %s_tune_select, %s_tune_time, %s_tune_arch,\n};\n",
	    e->cuda ? "extern \"C\" " : "", e->nm, tc->nkernels, e->nm, e->nm, e->nm, e->nm);
}

static void
freekernels(E *e)
{
	int i;

	for (i = 0; i < e->fn->nins; i++)
		free(e->calls[i]);
	free(e->calls);
}

/* the typed parameter list of forward: inputs, then outputs */
static void
forwardparams(E *e)
{
	Fn *fn = e->fn;
	int i;

	out(e, "%s *m", e->nm);
	for (i = 0; i < fn->narg; i++)
		if (ty(e, fn->arg[i]).kind == TTensor)
			out(e, ", const %s *%s", ctype(ty(e, fn->arg[i]).dtype), fn->val[fn->arg[i]].name);
	for (i = 0; i < fn->nret; i++)
		out(e, ", %s *out%d", ctype(ty(e, fn->ret[i]).dtype), i);
}

static void
emitapi(E *e)
{
	Fn *fn = e->fn;
	int i, k, nin = 0;
	const char *suffix[2] = {"", "_host"};

	for (i = 0; i < fn->narg; i++)
		nin += ty(e, fn->arg[i]).kind == TTensor;
	for (k = 0; k < 2; k++) {
		out(e, "\ngnn_status\n%s_forward%s(", e->nm, suffix[k]);
		forwardparams(e);
		out(e, ")\n{\n\tconst void *in[%d] = {", nin ? nin : 1);
		for (i = 0; i < fn->narg; i++)
			if (ty(e, fn->arg[i]).kind == TTensor)
				out(e, "%s, ", fn->val[fn->arg[i]].name);
		out(e, "};\n\tvoid *out[%d] = {", fn->nret);
		for (i = 0; i < fn->nret; i++)
			out(e, "out%d, ", i);
		out(e, "};\n\n\treturn %s_run%s(m, in, out);\n}\n", e->nm, suffix[k]);
	}
	out(e, "\ngnn_status\n%s_synchronize(%s *m)\n{\n", e->nm, e->nm);
	out(e, "\tif (!m)\n\t\treturn gnn_error(GNN_ERR_ARG, \"%s_synchronize: NULL model\");\n", e->nm);
	if (e->cuda)
		out(e, "\t{\n\t\tcudaError_t err = cudaStreamSynchronize(m->stream);\n\t\tif (err != cudaSuccess)\n\t\t\treturn gnn_error(GNN_ERR_CUDA, \"%s: %%s\", cudaGetErrorString(err));\n\t}\n", e->nm);
	out(e, "\treturn GNN_OK;\n}\n");

	out(e, "\nstatic gnn_status\n%s_output_shape(void *model, int i, int64_t *shape)\n{\n\t%s *m = (%s *)model;\n\n", e->nm, e->nm, e->nm);
	out(e, "\tif (!m || !shape)\n\t\treturn gnn_error(GNN_ERR_ARG, \"%s: output_shape: NULL argument\");\n", e->nm);
	out(e, "\tif (i < 0 || i >= %d)\n\t\treturn gnn_error(GNN_ERR_ARG, \"%s: no output %%d\", i);\n", fn->nret, e->nm);
	out(e, "\tif (!m->bound)\n\t\treturn gnn_error(GNN_ERR_STATE, \"%s: no graph is bound\");\n\tswitch (i) {\n", e->nm);
	for (i = 0; i < fn->nret; i++) {
		Type t = ty(e, fn->ret[i]);
		out(e, "\tcase %d:\n", i);
		for (k = 0; k < t.rank; k++)
			out(e, "\t\tshape[%d] = %s;\n", k, cdim(e, t.dim[k]));
		out(e, "\t\tbreak;\n");
	}
	out(e, "\t}\n\treturn GNN_OK;\n}\n");

	/* the descriptor, through void * wrappers */
	out(e, "\nstatic gnn_status %s_d_create(void **m) { return %s_create((%s **)m); }\n", e->nm, e->nm, e->nm);
	out(e, "static gnn_status %s_d_load(void *m, const char *p) { return %s_load_weights((%s *)m, p); }\n", e->nm, e->nm, e->nm);
	out(e, "static gnn_status %s_d_bind(void *m, gnn_graph *g) { return %s_bind((%s *)m, g); }\n", e->nm, e->nm, e->nm);
	out(e, "static gnn_status %s_d_run(void *m, const void *const *in, void *const *out) { return %s_run((%s *)m, in, out); }\n", e->nm, e->nm, e->nm);
	out(e, "static gnn_status %s_d_run_host(void *m, const void *const *in, void *const *out) { return %s_run_host((%s *)m, in, out); }\n", e->nm, e->nm, e->nm);
	out(e, "static void %s_d_destroy(void *m) { %s_destroy((%s *)m); }\n", e->nm, e->nm, e->nm);
	out(e, "\n%sconst gnn_model_desc %s_desc = {\n\t\"%s\", %s,\n\t%d, %d, %d,\n\t%s_inputs, %s_outputs, %s_params,\n",
	    e->cuda ? "extern \"C\" " : "", e->nm, e->nm, e->cuda ? "GNN_TARGET_CUDA" : "GNN_TARGET_CPU", nin, fn->nret, e->p->nparam, e->nm, e->nm, e->nm);
	out(e, "\t%s_d_create, %s_d_load, %s_d_bind, %s_output_shape,\n\t%s_d_run, %s_d_run_host, %s_d_destroy,\n};\n",
	    e->nm, e->nm, e->nm, e->nm, e->nm, e->nm, e->nm);
}

static void
emitprelude(E *e, const CodegenOpts *o)
{
	out(e, "/*\n * Generated by gnncc from %s for --target=%s; do not edit.\n", o->source ? o->source : "<ir>", e->cuda ? "cuda" : "cpu");
	out(e, " * Bind-time work runs on the host; forward runs %s.\n */\n", e->cuda ? "as CUDA kernels on the model's stream" : "as host loops (OpenMP where enabled)");
	out(e, "#include <math.h>\n#include <stdint.h>\n#include <string.h>\n%s\n", o->tune ? "#include <stdio.h>\n#include <time.h>\n" : "");
	if (e->cuda)
		out(e, "#include <cuda_runtime.h>\n\n");
	out(e, "#include \"gnnrt.h\"\n#include \"%s\"\n\n", o->header ? o->header : "model.h");
	out(e, "#ifdef _OPENMP\n#define GNN_PARFOR _Pragma(\"omp parallel for schedule(static)\")\n#else\n#define GNN_PARFOR\n#endif\n");
	out(e, "#define GNN_PRAGMA(x) _Pragma(#x)\n#ifdef _OPENMP\n#define GNN_PARFOR_DYN(c) GNN_PRAGMA(omp parallel for schedule(dynamic, c))\n#else\n#define GNN_PARFOR_DYN(c)\n#endif\n");
	out(e, "#define GNN_HKERNEL(k) static void k\n#define GNN_HLOOP(t, T) GNN_PARFOR for (int64_t t = 0; t < (T); t++)\n");
	out(e, "#define GNN_HLAUNCH(k, T, ...) k((T), __VA_ARGS__)\n");
	if (e->cuda) {
		/* launches, kernel heads and shared arrays through macros, so
		 * that the emulated device (gnnemu's cuda_runtime.h, which
		 * defines GNN_EMU) compiles this file as C++ on the CPU */
		out(e, "#ifndef GNN_EMU\n");
		out(e, "#define GNN_DKERNEL(k) static __global__ void k\n");
		out(e, "#define GNN_DKERNEL_LB(k, n) static __global__ void __launch_bounds__(n) k\n");
		out(e, "#define GNN_LAUNCH(k, grid, block, shmem, stream) k<<<grid, block, shmem, stream>>>\n");
		out(e, "#define GNN_SHARED(T, name, dims) __shared__ T name dims\n");
		out(e, "#endif\n");
		out(e, "#define GNN_DLOOP(t, T) for (int64_t t = (int64_t)blockIdx.x * blockDim.x + threadIdx.x; t < (T); t += (int64_t)blockDim.x * gridDim.x)\n");
		out(e, "#define GNN_DLAUNCH(k, T, ...) do { \\\n\tint64_t T_ = (T); \\\n\tif (T_ > 0) \\\n\t\tGNN_LAUNCH(k, gnn_blocks(T_, 256), 256, 0, m->stream)(T_, __VA_ARGS__); \\\n} while (0)\n\n");
		out(e, "#define GNN_DFN static __device__ __forceinline__\n");
		out(e, "#define GNN_RLAUNCH(k, L, R, T, ...) do { \\\n\tint64_t T_ = (T); \\\n\tif (T_ > 0) \\\n\t\tGNN_LAUNCH(k, gnn_blocks(T_, (R)), (L) * (R), 0, m->stream)(T_, __VA_ARGS__); \\\n} while (0)\n\n");
		out(e, "/* blocks of per tasks for T tasks: grid-stride loops take the rest */\nstatic unsigned\ngnn_blocks(int64_t T, int64_t per)\n{\n\tint64_t b = (T + per - 1) / per;\n\n\treturn b > (1 << 20) ? (1u << 20) : (unsigned)b;\n}\n");
	} else
		out(e, "#define GNN_DKERNEL GNN_HKERNEL\n#define GNN_DLOOP GNN_HLOOP\n#define GNN_DLAUNCH GNN_HLAUNCH\n#define GNN_DFN static inline\n");
}

void
emitsource(FILE *f, Mod *m, const CodegenOpts *o)
{
	Plan p;
	Fn *fn;
	E e = {.f = f, .m = m, .cuda = o->target == TargetCUDA, .sfx = "", .o = o};
	int nfn;

	emitprelude(&e, o);
	for (fn = m->fn, nfn = 0; fn; fn = fn->link, nfn++) {
		if (plan(&p, fn, o->target))
			die("codegen: emitsource without a clean codegencheck");
		e.tc = o->tune ? &o->tune[nfn] : NULL;
		e.p = &p;
		e.fn = fn;
		e.nm = fn->name;
		out(&e, "\n/* ---- model %s ---- */\n", fn->name);
		emitstruct(&e);
		emittables(&e);
		emitkernels(&e);
		emitcreate(&e);
		emitload(&e);
		emitbind(&e);
		emitrun(&e);
		emitapi(&e);
		if (e.tc)
			emittune(&e);
		freekernels(&e);
		free(e.kstart);
		e.kstart = NULL;
		planfree(&p);
	}
}

void
emitheader(FILE *f, Mod *m, const CodegenOpts *o)
{
	Fn *fn;
	E e = {.f = f, .m = m, .cuda = o->target == TargetCUDA};
	char guard[128], buf[512];
	int i, k;

	snprintf(guard, sizeof guard, "GNNCC_MODEL_%s", o->header ? o->header : "MODEL_H");
	for (k = 0; guard[k]; k++)
		if (!(guard[k] >= 'A' && guard[k] <= 'Z') && !(guard[k] >= '0' && guard[k] <= '9'))
			guard[k] = guard[k] >= 'a' && guard[k] <= 'z' ? guard[k] - 'a' + 'A' : '_';
	out(&e, "/*\n * Generated by gnncc from %s for --target=%s; do not edit.\n", o->source ? o->source : "<ir>", e.cuda ? "cuda" : "cpu");
	out(&e, " * Every call returns a gnn_status; gnn_errmsg() says what went wrong.\n");
	out(&e, " * forward takes %s pointers; forward_host takes host pointers.\n */\n", e.cuda ? "device" : "host");
	out(&e, "#ifndef %s\n#define %s\n\n#include \"gnnrt.h\"\n\n#ifdef __cplusplus\nextern \"C\" {\n#endif\n", guard, guard);
	for (fn = m->fn; fn; fn = fn->link) {
		e.fn = fn;
		e.nm = fn->name;
		out(&e, "\n/* model %s", fn->name);
		for (i = 0; i < fn->narg; i++) {
			snprinttype(buf, sizeof buf, m, fn->val[fn->arg[i]].type);
			out(&e, "%s %s: %s", i ? "," : "\n *   inputs:", fn->val[fn->arg[i]].name, buf);
		}
		for (i = 0; i < fn->nret; i++) {
			snprinttype(buf, sizeof buf, m, fn->val[fn->ret[i]].type);
			out(&e, "%s out%d: %s", i ? "," : "\n *   outputs:", i, buf);
		}
		out(&e, "\n */\n#define %s_TARGET %s\ntypedef struct %s %s;\n", fn->name, e.cuda ? "GNN_TARGET_CUDA" : "GNN_TARGET_CPU", fn->name, fn->name);
		out(&e, "gnn_status %s_create(%s **model);\n", fn->name, fn->name);
		out(&e, "gnn_status %s_load_weights(%s *model, const char *safetensors_path);\n", fn->name, fn->name);
		out(&e, "gnn_status %s_bind(%s *model, gnn_graph *graph);\n", fn->name, fn->name);
		out(&e, "gnn_status %s_forward(", fn->name);
		forwardparams(&e);
		out(&e, ");\ngnn_status %s_forward_host(", fn->name);
		forwardparams(&e);
		out(&e, ");\ngnn_status %s_synchronize(%s *model);\n", fn->name, fn->name);
		out(&e, "void %s_destroy(%s *model);\nextern const gnn_model_desc %s_desc;\n", fn->name, fn->name, fn->name);
	}
	out(&e, "\n#ifdef __cplusplus\n}\n#endif\n\n#endif\n");
}
