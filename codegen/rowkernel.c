/*
 * Fused row kernels: one task per target node r, computing every
 * instruction of a fusion group (passes/fuse.c) for that row.
 *
 * Node rows made in the group live in local arrays of their (constant)
 * width; rows made elsewhere are read in place (x + r * width).  Edge
 * values are never stored: a scatter walks the edges into r along its
 * segment plan (the graph's CSR, in a fixed order) and computes the edge
 * values it needs for each edge as it goes -- the gathered rows are read
 * straight from their tables.  edge_softmax first walks the segment to
 * get each column's maximum and sum, as PyG's softmax does, so the
 * weights equal exp(s - max) / (sum + 1e-16) exactly.  Rows that other
 * kernels read, or that the model returns, are written out at the end.
 *
 * Every shape inside a row is constant, so loops have constant bounds
 * and the compiler can unroll and vectorize them.
 */
#include <stdarg.h>
#include <string.h>

#include "emit.h"

enum { XLen = 4096 };   /* room for an edge value's inlined expression */
enum { XCoord = 160 };

typedef struct R {
	E *e;
	Fn *fn;
	int a, b;                /* the group's instructions: [a, b) */
	unsigned char *kind;     /* RowNode/RowEdge/... per value */
	Ref *egraph;
	bool *ingroup;           /* per value: made by the group */
	bool *ext;               /* per value: passed to the kernel */
	bool *done;              /* per value: computed in the current scope */
	char *esdone;            /* per value: edge_softmax stats emitted */
	int L;                   /* lanes per row (the schedule's) */
	bool lane;               /* L > 1: lanes share the row */
} R;

static void opoffset(R *r, const Type *t, Ref op, char coord[][XCoord], char *buf, size_t n);
static void coordsof(const Type *t, const char *idx, char coord[][XCoord]);

/* snprintf for generated expressions: one that does not fit is a bug */
static void
xprint(char *buf, size_t n, const char *fmt, ...)
{
	va_list ap;
	int len;

	va_start(ap, fmt);
	len = vsnprintf(buf, n, fmt, ap);
	va_end(ap);
	if (len < 0 || (size_t)len >= n)
		die("rowkernel: an expression longer than %zu bytes", n);
}

static const Ins *
defins(R *r, Ref v)
{
	int d = r->fn->val[v].def;

	return d >= 0 ? &r->fn->ins[d] : NULL;
}

static bool
isalias(const Ins *in)
{
	return in && (in->op == Oreshape || in->op == Odropout);
}

/* width of a row: the product of the dims after the first */
static int64_t
width(R *r, Ref v)
{
	Type t = ty(r->e, v);
	int64_t w = 1;
	int k;

	for (k = 1; k < t.rank; k++)
		w *= dimconstval(t.dim[k]);
	return w;
}

/* the value whose data v is (through reshape and dropout) */
static Ref
base(R *r, Ref v)
{
	const Ins *d;

	while ((d = defins(r, v)) && isalias(d) && r->ingroup[v])
		v = d->arg[0];
	return v;
}

/*
 * The element of value v at flat row-local index idx (a C expression),
 * in the current scope: row r, and inside a segment loop edge e_.
 */
static void
access(R *r, Ref v, const char *idx, char *buf, size_t n)
{
	const Ins *d;
	char sub[XLen];

	v = base(r, v);
	d = defins(r, v);
	if (r->ingroup[v] && d && d->op == Ogather) {
		const Ins *ix = defins(r, d->arg[1]);
		if (ix->op == Osrc) {
			/* another node's row: the table was made by an earlier kernel */
			xprint(buf, n, "p%d[(int64_t)p%d[e_] * %lld + (%s)]", base(r, d->arg[0]), d->arg[1],
			         (long long)width(r, d->arg[0]), idx);
			return;
		}
		/* by dst: the target's own row */
		access(r, d->arg[0], idx, sub, sizeof sub);
		xprint(buf, n, "%s", sub);
		return;
	}
	if (r->ingroup[v] && d && d->op == Oedge_softmax) {
		char s[XLen];
		access(r, d->arg[1], idx, s, sizeof s);
		xprint(buf, n, "(%s(%s - esmax%d[%s]) / (essum%d[%s] + (%s)1e-16))",
		         ty(r->e, v).dtype == DF32 ? "expf" : "exp", s, v, idx, v, idx, ctype(ty(r->e, v).dtype));
		return;
	}
	if (r->ingroup[v] && r->lane && r->kind[v] == RowEdge) {
		/* lanes compute edge values element by element, inline */
		Type t = ty(r->e, v);
		char coord[MaxRank][XCoord], off[XLen], a[XLen], b[XLen];
		coordsof(&t, idx, coord);
		opoffset(r, &t, d->arg[0], coord, off, sizeof off);
		access(r, d->arg[0], off, a, sizeof a);
		if (d->narg == 2) {
			opoffset(r, &t, d->arg[1], coord, off, sizeof off);
			access(r, d->arg[1], off, b, sizeof b);
			xprint(buf, n, "%s_f%d%s(%s, %s)", r->e->nm, v, r->e->sfx, a, b);
		} else
			xprint(buf, n, "%s_f%d%s(%s)", r->e->nm, v, r->e->sfx, a);
		return;
	}
	if (r->ingroup[v]) {
		xprint(buf, n, "v%d[%s]", v, idx);
		return;
	}
	switch (r->kind[v]) {
	case RowNode:
		xprint(buf, n, "p%d[r * %lld + (%s)]", v, (long long)width(r, v), idx);
		return;
	case RowUniform:
		xprint(buf, n, "p%d[%s]", v, idx);
		return;
	default:   /* a bind-time edge array of this segment's graph */
		xprint(buf, n, "p%d[e_ * %lld + (%s)]", v, (long long)width(r, v), idx);
		return;
	}
}

/*
 * The offset into operand op of the element at coordinates coord[k]
 * (k >= 1) of a result of type t, under NumPy broadcasting: row values
 * align their trailing dims with the result's; uniform values align
 * from the right and never use the row dim.
 */
static void
opoffset(R *r, const Type *t, Ref op, char coord[][XCoord], char *buf, size_t n)
{
	Type ot = ty(r->e, op);
	bool row = r->kind[op] == RowNode || r->kind[op] == RowEdge || r->ingroup[op];
	int64_t os = 1;
	size_t len = snprintf(buf, n, "0");
	int k;

	for (k = t->rank - 1; k >= 1; k--) {
		int ko = row ? k : k - (t->rank - ot.rank);
		if (ko < (row ? 1 : 0) || (!row && ot.rank == t->rank && ko == 0))
			break;
		if (!(ot.dim[ko] == 1 && t->dim[k] != 1))
			len += snprintf(buf + len, n > len ? n - len : 0, " + %s * %lld", coord[k], (long long)os);
		os *= dimconstval(ot.dim[ko]);
	}
}

/* coord[k] (k >= 1): coordinate k of the flat row-local index idx of t */
static void
coordsof(const Type *t, const char *idx, char coord[][XCoord])
{
	int64_t st = 1;
	int k;

	for (k = t->rank - 1; k >= 1; k--) {
		snprintf(coord[k], XCoord, "((%s) / %lld %% %lld)", idx, (long long)st, (long long)dimconstval(t->dim[k]));
		st *= dimconstval(t->dim[k]);
	}
}

/*
 * A loop over the elements of a row of type t with the flat index j_ and
 * the coordinates c1_, c2_, ..., and for each operand its offset
 * (opoffset).  One thread: nested loops over the trailing dims; lanes:
 * lane l takes the elements l, l + L, ...
 */
static void
loopsopen(R *r, const Type *t, int nops, const Ref *ops, char offs[][XLen])
{
	char coord[MaxRank][XCoord];
	int64_t rs = 1, w = 1;
	int k, j;

	for (k = 1; k < t->rank; k++) {
		snprintf(coord[k], XCoord, "c%d_", k);
		w *= dimconstval(t->dim[k]);
	}
	if (r->lane) {
		out(r->e, "\t\tfor (int64_t j_ = lane_; j_ < %lld; j_ += %d) {\n", (long long)w, r->L);
		for (k = t->rank - 1; k >= 1; k--) {
			out(r->e, "\t\t\tconst int64_t c%d_ = j_ / %lld %% %lld;\n\t\t\t(void)c%d_;\n", k, (long long)rs,
			    (long long)dimconstval(t->dim[k]), k);
			rs *= dimconstval(t->dim[k]);
		}
	} else {
		for (k = 1; k < t->rank; k++)
			out(r->e, "\t\tfor (int64_t c%d_ = 0; c%d_ < %d; c%d_++)\n", k, k, t->dim[k], k);
		out(r->e, "\t\t{\n\t\t\tint64_t j_ = 0");
		for (k = t->rank - 1; k >= 1; k--) {
			out(r->e, " + c%d_ * %lld", k, (long long)rs);
			rs *= dimconstval(t->dim[k]);
		}
		out(r->e, ";\n");
	}
	for (j = 0; j < nops; j++)
		opoffset(r, t, ops[j], coord, offs[j], XLen);
}

static void
loopsclose(R *r)
{
	out(r->e, "\t\t}\n");
}

/*
 * With lanes, every node value is one phase: each lane computes its
 * share, then the lanes meet (__syncwarp) before anyone reads the row.
 * On the cpu the lanes run one after another, which is the same thing.
 */
static void
phaseopen(R *r)
{
	if (!r->lane)
		return;
	if (r->e->cuda)
		out(r->e, "\t\tif (live_) {\n");
	else
		out(r->e, "\t\tfor (int lane_ = 0; lane_ < %d; lane_++) {\n", r->L);
}

static void
phaseclose(R *r)
{
	if (!r->lane)
		return;
	out(r->e, "\t\t}\n");
	if (r->e->cuda)
		out(r->e, "\t\t__syncwarp();\n");
}

/* the local array of a node row (with lanes, declared with the kernel) */
static void
declrow(R *r, Ref v)
{
	if (!r->lane)
		out(r->e, "\t\t%s v%d[%lld];\n", ctype(ty(r->e, v).dtype), v, (long long)width(r, v));
}

/* emit the local array of value v, computed by instruction in */
static void emitvalue(R *r, const Ins *in);

/* Make sure edge value v (and what it depends on) is computed in the
 * current segment loop. */
static void
neededge(R *r, Ref v)
{
	const Ins *in;
	int k;

	v = base(r, v);
	if (!r->ingroup[v] || r->done[v])
		return;
	in = defins(r, v);
	for (k = 0; k < in->narg; k++)
		if (r->ingroup[in->arg[k]])
			neededge(r, in->arg[k]);
	if (in->op == Oedge_softmax || in->op == Ogather || r->lane) {
		r->done[v] = true;   /* read through access() */
		return;
	}
	emitvalue(r, in);
	r->done[v] = true;
}

static void
resetedges(R *r)
{
	int i;

	for (i = r->a; i < r->b; i++)
		if (r->kind[r->fn->ins[i].to] == RowEdge)
			r->done[r->fn->ins[i].to] = false;
}

/* the edges of segment row r under plan p (rowptr, then order) */
static void
segopen(R *r, int plan)
{
	out(r->e, "\t\tfor (int64_t k_ = seg%d[r]; k_ < seg%d[r + 1]; k_++) {\n", plan, plan);
	out(r->e, "\t\t\tint64_t e_ = seg%d[T + 1 + k_];\n", plan);
	resetedges(r);
}

static void
segclose(R *r)
{
	out(r->e, "\t\t}\n");
	resetedges(r);
}

/* the stats of every edge_softmax that v depends on, before its loop */
static void
needstats(R *r, Ref v)
{
	const Ins *in;
	char s[XLen];
	int k, i = r->fn->val[base(r, v)].def;
	int64_t w;
	const char *T, *ex;

	v = base(r, v);
	if (!r->ingroup[v])
		return;
	in = defins(r, v);
	for (k = 0; k < in->narg; k++)
		needstats(r, in->arg[k]);
	if (in->op != Oedge_softmax || r->esdone[v])
		return;
	r->esdone[v] = 1;
	w = width(r, v);
	T = ctype(ty(r->e, v).dtype);
	ex = ty(r->e, v).dtype == DF32 ? "expf" : "exp";
	if (r->lane) {
		/* lane l: the columns l, l + L, ...; two walks per column */
		phaseopen(r);
		out(r->e, "\t\tfor (int64_t j_ = lane_; j_ < %lld; j_ += %d) {\n\t\t%s mx_ = 0, sm_ = 0;\n", (long long)w, r->L, T);
		segopen(r, i);
		access(r, in->arg[1], "j_", s, sizeof s);
		out(r->e, "\t\t\t{\n\t\t\t\t%s s_ = %s;\n\t\t\t\tif (k_ == seg%d[r] || s_ > mx_)\n\t\t\t\t\tmx_ = s_;\n\t\t\t}\n", T, s, i);
		segclose(r);
		segopen(r, i);
		out(r->e, "\t\t\tsm_ += %s(%s - mx_);\n", ex, s);
		segclose(r);
		out(r->e, "\t\tesmax%d[j_] = mx_;\n\t\tessum%d[j_] = sm_;\n\t\t}\n", v, v);
		phaseclose(r);
		return;
	}
	out(r->e, "\t\t%s esmax%d[%lld], essum%d[%lld];\n", T, v, (long long)w, v, (long long)w);
	out(r->e, "\t\tfor (int64_t j_ = 0; j_ < %lld; j_++)\n\t\t\tesmax%d[j_] = essum%d[j_] = 0;\n", (long long)w, v, v);
	segopen(r, i);
	neededge(r, in->arg[1]);
	access(r, in->arg[1], "j_", s, sizeof s);
	out(r->e, "\t\t\tfor (int64_t j_ = 0; j_ < %lld; j_++)\n", (long long)w);
	out(r->e, "\t\t\t\tif (k_ == seg%d[r] || %s > esmax%d[j_])\n\t\t\t\t\tesmax%d[j_] = %s;\n", i, s, v, v, s);
	segclose(r);
	segopen(r, i);
	neededge(r, in->arg[1]);
	out(r->e, "\t\t\tfor (int64_t j_ = 0; j_ < %lld; j_++)\n", (long long)w);
	out(r->e, "\t\t\t\tessum%d[j_] += %s(%s - esmax%d[j_]);\n", v, ex, s, v);
	segclose(r);
}

/* accumulate message element x_ into acc (a C lvalue) */
static void
accumulate(R *r, const Ins *in, int i, const char *acc)
{
	if (in->op == Oscatter_max)
		out(r->e, "\t\t\t\tif (k_ == seg%d[r] || x_ > %s || x_ != x_)\n\t\t\t\t\t%s = x_;\n", i, acc, acc);
	else
		out(r->e, "\t\t\t\t%s += x_;\n", acc);
}

static void
emitscatter(R *r, const Ins *in)
{
	Ref v = in->to, m = in->arg[0];
	int i = r->fn->val[v].def;
	int64_t w = width(r, v), J;
	const char *T = ctype(ty(r->e, v).dtype);
	char s[XLen];

	needstats(r, m);
	if (r->lane) {
		/* lane l accumulates columns l, l + L, ... in registers while
		 * walking the edges once: loads of a message row coalesce */
		J = (w + r->L - 1) / r->L;
		phaseopen(r);
		out(r->e, "\t\t%s acc_[%lld];\n\t\tfor (int jj_ = 0; jj_ < %lld; jj_++)\n\t\t\tacc_[jj_] = 0;\n", T, (long long)(J ? J : 1), (long long)J);
		segopen(r, i);
		access(r, m, "j_", s, sizeof s);
		out(r->e, "\t\t\tfor (int jj_ = 0; jj_ < %lld; jj_++) {\n\t\t\t\tconst int64_t j_ = lane_ + (int64_t)jj_ * %d;\n", (long long)J, r->L);
		out(r->e, "\t\t\t\tif (j_ >= %lld)\n\t\t\t\t\tbreak;\n\t\t\t\t{\n\t\t\t\t%s x_ = %s;\n", (long long)w, T, s);
		accumulate(r, in, i, "acc_[jj_]");
		out(r->e, "\t\t\t\t}\n\t\t\t}\n");
		segclose(r);
		out(r->e, "\t\tfor (int jj_ = 0; jj_ < %lld; jj_++) {\n\t\t\tconst int64_t j_ = lane_ + (int64_t)jj_ * %d;\n", (long long)J, r->L);
		out(r->e, "\t\t\tif (j_ < %lld)\n\t\t\t\tv%d[j_] = acc_[jj_];\n\t\t}\n", (long long)w, v);
	} else {
		declrow(r, v);
		out(r->e, "\t\tfor (int64_t j_ = 0; j_ < %lld; j_++)\n\t\t\tv%d[j_] = 0;\n", (long long)w, v);
		segopen(r, i);
		neededge(r, m);
		access(r, m, "j_", s, sizeof s);
		out(r->e, "\t\t\tfor (int64_t j_ = 0; j_ < %lld; j_++) {\n\t\t\t\t%s x_ = %s;\n", (long long)w, T, s);
		snprintf(s, sizeof s, "v%d[j_]", v);
		accumulate(r, in, i, s);
		out(r->e, "\t\t\t}\n");
		segclose(r);
	}
	if (in->op == Oscatter_mean)
		out(r->e, "\t\tif (seg%d[r + 1] - seg%d[r] > 1)\n\t\t\tfor (int64_t j_ = %s; j_ < %lld; j_ += %d)\n\t\t\t\tv%d[j_] /= (%s)(seg%d[r + 1] - seg%d[r]);\n",
		    i, i, r->lane ? "lane_" : "0", (long long)w, r->L, v, T, i, i);
	phaseclose(r);
}

/* the loops over pairs (a_, b_) of [A, B] (one thread: nested; lanes:
 * lane l takes pairs l, l + L, ...), opening a block */
static void
pairsopen(R *r, const char *a, int64_t A, const char *b, int64_t B)
{
	if (r->lane)
		out(r->e, "\t\tfor (int64_t q_ = lane_; q_ < %lld; q_ += %d) {\n\t\t\tconst int64_t %s = q_ / %lld, %s = q_ %% %lld;\n",
		    (long long)(A * B), r->L, a, (long long)(B ? B : 1), b, (long long)(B ? B : 1));
	else
		out(r->e, "\t\tfor (int64_t %s = 0; %s < %lld; %s++)\n\t\tfor (int64_t %s = 0; %s < %lld; %s++) {\n", a, a, (long long)A, a, b, b,
		    (long long)B, b);
}

/* sum/mean/max/softmax/log_softmax/l2_normalize over a trailing dim */
static void
emitreduce(R *r, const Ins *in)
{
	Ref v = in->to, x = in->arg[0];
	Type xt = ty(r->e, x);
	int64_t d = attrint(in, "dim", 1), outer = 1, D, inner = 1;
	const char *T = ctype(xt.dtype), *f = xt.dtype == DF32 ? "f" : "";
	char xa[XLen];
	int k;

	for (k = 1; k < d; k++)
		outer *= dimconstval(xt.dim[k]);
	D = dimconstval(xt.dim[d]);
	for (k = d + 1; k < xt.rank; k++)
		inner *= dimconstval(xt.dim[k]);
	declrow(r, v);
	phaseopen(r);
	pairsopen(r, "o_", outer, "i_", inner);
	access(r, x, "(o_ * " "D_" " + k_) * I_ + i_", xa, sizeof xa);
	out(r->e, "\t\t\tconst int64_t D_ = %lld, I_ = %lld;\n\t\t\t%s a_ = 0;\n\t\t\tint64_t k_;\n", (long long)D, (long long)inner, T);
	if (in->op == Osoftmax || in->op == Olog_softmax)
		out(r->e, "\t\t\t%s m_ = 0;\n", T);
	switch (in->op) {
	case Osum:
	case Omean:
		out(r->e, "\t\t\tfor (k_ = 0; k_ < D_; k_++)\n\t\t\t\ta_ += %s;\n", xa);
		out(r->e, "\t\t\tv%d[o_ * I_ + i_] = a_%s;\n", v, in->op == Omean ? " / (D_ ? D_ : 1)" : "");
		break;
	case Omax:
		out(r->e, "\t\t\tfor (k_ = 0; k_ < D_; k_++)\n\t\t\t\tif (k_ == 0 || %s > a_ || %s != %s)\n\t\t\t\t\ta_ = %s;\n", xa, xa, xa, xa);
		out(r->e, "\t\t\tv%d[o_ * I_ + i_] = a_;\n", v);
		break;
	case Ol2_normalize:
		out(r->e, "\t\t\tfor (k_ = 0; k_ < D_; k_++)\n\t\t\t\ta_ += %s * %s;\n", xa, xa);
		out(r->e, "\t\t\ta_ = sqrt%s(a_);\n\t\t\tif (!(a_ > (%s)%.17g))\n\t\t\t\ta_ = (%s)%.17g;\n", f, T,
		    attrfloat(in, "eps", 1e-12), T, attrfloat(in, "eps", 1e-12));
		out(r->e, "\t\t\tfor (k_ = 0; k_ < D_; k_++)\n\t\t\t\tv%d[(o_ * D_ + k_) * I_ + i_] = %s / a_;\n", v, xa);
		break;
	default:   /* softmax, log_softmax: as the per-op kernel */
		out(r->e, "\t\t\tfor (k_ = 0; k_ < D_; k_++)\n\t\t\t\tif (k_ == 0 || %s > m_)\n\t\t\t\t\tm_ = %s;\n", xa, xa);
		out(r->e, "\t\t\tfor (k_ = 0; k_ < D_; k_++)\n\t\t\t\ta_ += exp%s(%s - m_);\n", f, xa);
		if (in->op == Osoftmax)
			out(r->e, "\t\t\tfor (k_ = 0; k_ < D_; k_++)\n\t\t\t\tv%d[(o_ * D_ + k_) * I_ + i_] = exp%s(%s - m_) / a_;\n", v, f, xa);
		else
			out(r->e, "\t\t\tfor (k_ = 0; k_ < D_; k_++)\n\t\t\t\tv%d[(o_ * D_ + k_) * I_ + i_] = %s - m_ - log%s(a_);\n", v, xa, f);
	}
	out(r->e, "\t\t}\n");
	phaseclose(r);
}

/*
 * A row times a constant matrix: one dot product per output, or with
 * the schedule's axpy (one thread only) whole output rows accumulated
 * over k, which streams the matrix by rows.  Either sums in k order.
 */
static void
emitmatmul(R *r, const Ins *in)
{
	Ref v = in->to, a = in->arg[0], b = in->arg[1];
	Type bt = ty(r->e, b);
	int64_t K = dimconstval(bt.dim[0]), P = dimconstval(bt.dim[1]), B = width(r, a) / (K ? K : 1);
	const char *T = ctype(ty(r->e, v).dtype);
	char xa[XLen];

	declrow(r, v);
	if (r->e->sched.axpy && !r->lane) {
		access(r, a, "b_ * K_ + k_", xa, sizeof xa);
		out(r->e, "\t\tfor (int64_t b_ = 0; b_ < %lld; b_++) {\n\t\t\tconst int64_t K_ = %lld;\n", (long long)B, (long long)K);
		out(r->e, "\t\t\tfor (int64_t p_ = 0; p_ < %lld; p_++)\n\t\t\t\tv%d[b_ * %lld + p_] = 0;\n", (long long)P, v, (long long)P);
		out(r->e, "\t\t\tfor (int64_t k_ = 0; k_ < K_; k_++) {\n\t\t\t\tconst %s a_ = %s;\n", T, xa);
		out(r->e, "\t\t\t\tfor (int64_t p_ = 0; p_ < %lld; p_++)\n\t\t\t\t\tv%d[b_ * %lld + p_] += a_ * p%d[k_ * %lld + p_];\n\t\t\t}\n\t\t}\n",
		    (long long)P, v, (long long)P, b, (long long)P);
		return;
	}
	phaseopen(r);
	pairsopen(r, "b_", B, "p_", P);
	access(r, a, "b_ * " "K_" " + k_", xa, sizeof xa);
	out(r->e, "\t\t\tconst int64_t K_ = %lld;\n\t\t\t%s a_ = 0;\n", (long long)K, T);
	out(r->e, "\t\t\tfor (int64_t k_ = 0; k_ < K_; k_++)\n\t\t\t\ta_ += %s * p%d[k_ * %lld + p_];\n", xa, b, (long long)P);
	out(r->e, "\t\t\tv%d[b_ * %lld + p_] = a_;\n\t\t}\n", v, (long long)P);
	phaseclose(r);
}

static void
emitconcat(R *r, const Ins *in)
{
	Ref v = in->to;
	Type t = ty(r->e, v);
	int64_t d = attrint(in, "dim", 1), outer = 1, inner = 1, D = dimconstval(t.dim[d]), start = 0, n;
	char xa[XLen], src[XLen];
	int k;

	for (k = 1; k < d; k++)
		outer *= dimconstval(t.dim[k]);
	for (k = d + 1; k < t.rank; k++)
		inner *= dimconstval(t.dim[k]);
	declrow(r, v);
	phaseopen(r);
	for (k = 0; k < in->narg; k++) {
		n = dimconstval(ty(r->e, in->arg[k]).dim[d]);
		snprintf(xa, sizeof xa, "(o_ * %lld + c_) * %lld + i_", (long long)n, (long long)inner);
		access(r, in->arg[k], xa, src, sizeof src);
		if (r->lane)
			out(r->e, "\t\tfor (int64_t q_ = lane_; q_ < %lld; q_ += %d) {\n\t\t\tconst int64_t o_ = q_ / %lld, c_ = q_ / %lld %% %lld, i_ = q_ %% %lld;\n",
			    (long long)(outer * n * inner), r->L, (long long)(n * inner != 0 ? n * inner : 1), (long long)(inner ? inner : 1),
			    (long long)(n ? n : 1), (long long)(inner ? inner : 1));
		else
			out(r->e, "\t\tfor (int64_t o_ = 0; o_ < %lld; o_++)\n\t\tfor (int64_t c_ = 0; c_ < %lld; c_++)\n\t\tfor (int64_t i_ = 0; i_ < %lld; i_++) {\n",
			    (long long)outer, (long long)n, (long long)inner);
		out(r->e, "\t\t\tv%d[(o_ * %lld + %lld + c_) * %lld + i_] = %s;\n\t\t}\n", v, (long long)D, (long long)start, (long long)inner, src);
		start += n;
	}
	phaseclose(r);
}

static void
emittranspose(R *r, const Ins *in)
{
	Ref v = in->to, x = in->arg[0];
	Type t = ty(r->e, v), xt = ty(r->e, x);
	const Attr *pa = findattr(in, "perm");
	int64_t xs[MaxRank], s = 1;
	char off[XLen], xa[XLen];
	size_t len = 0;
	int k;

	for (k = xt.rank - 1; k >= 1; k--) {
		xs[k] = s;
		s *= dimconstval(xt.dim[k]);
	}
	declrow(r, v);
	phaseopen(r);
	loopsopen(r, &t, 0, NULL, NULL);
	len = snprintf(off, sizeof off, "0");
	for (k = 1; k < t.rank; k++)
		len += snprintf(off + len, sizeof off - len, " + c%d_ * %lld", k, (long long)xs[pa->u.is[k]]);
	access(r, x, off, xa, sizeof xa);
	out(r->e, "\t\t\tv%d[j_] = %s;\n", v, xa);
	loopsclose(r);
	phaseclose(r);
}

/* elementwise: unary, cast, binary with broadcasting */
static void
emitelem(R *r, const Ins *in)
{
	Ref v = in->to;
	Type t = ty(r->e, v);
	char offs[2][XLen], a[XLen], b[XLen], expr[256];

	declrow(r, v);
	phaseopen(r);
	loopsopen(r, &t, in->narg, in->arg, offs);
	access(r, in->arg[0], offs[0], a, sizeof a);
	if (in->narg == 2) {
		access(r, in->arg[1], offs[1], b, sizeof b);
		binaryexpr(expr, sizeof expr, in->op, t.dtype);
		out(r->e, "\t\t\t%s a = %s, b = %s;\n\t\t\tv%d[j_] = %s;\n", ctype(t.dtype), a, b, v, expr);
	} else {
		unaryexpr(expr, sizeof expr, in, ty(r->e, in->arg[0]).dtype, t.dtype);
		out(r->e, "\t\t\t%s x = %s;\n\t\t\tv%d[j_] = %s;\n", ctype(ty(r->e, in->arg[0]).dtype), a, v, expr);
	}
	loopsclose(r);
	phaseclose(r);
}

static void
emitvalue(R *r, const Ins *in)
{
	if (isalias(in) || in->op == Ogather || in->op == Oedge_softmax)
		return;
	if (opinfo[in->op].flags & Fscatter)
		emitscatter(r, in);
	else if (in->op == Omatmul)
		emitmatmul(r, in);
	else if (in->op == Oconcat)
		emitconcat(r, in);
	else if (in->op == Otranspose)
		emittranspose(r, in);
	else if (opinfo[in->op].flags & (Freduce | Fnorm))
		emitreduce(r, in);
	else if (opinfo[in->op].flags & (Felem | Fbin))
		emitelem(r, in);
	else
		die("rowkernel: %s in a fusion group", opinfo[in->op].name);
}

/* Is node value v needed outside the group (directly or via aliases)? */
static bool
escapes(R *r, Ref v)
{
	Fn *fn = r->fn;
	int i, k;

	for (i = 0; i < fn->nret; i++)
		if (base(r, fn->ret[i]) == v)
			return true;
	for (i = 0; i < fn->nins; i++) {
		if (i >= r->a && i < r->b)
			continue;
		for (k = 0; k < fn->ins[i].narg; k++)
			if (fn->ins[i].arg[k] == v || (r->ingroup[fn->ins[i].arg[k]] && base(r, fn->ins[i].arg[k]) == v))
				return true;
	}
	return false;
}

/*
 * With lanes, edge values are computed element by element where they
 * are read, through one small function per elementwise instruction.
 */
static void
elemhelpers(R *r)
{
	char expr[256];
	int i;

	for (i = r->a; i < r->b; i++) {
		const Ins *in = &r->fn->ins[i];
		Ref v = in->to;
		int dt = ty(r->e, v).dtype;
		if (r->kind[v] != RowEdge || isalias(in) || !(opinfo[in->op].flags & (Felem | Fbin)))
			continue;
		if (in->narg == 2) {
			binaryexpr(expr, sizeof expr, in->op, dt);
			out(r->e, "\nGNN_DFN %s\n%s_f%d%s(%s a, %s b)\n{\n\treturn %s;\n}\n", ctype(dt), r->e->nm, v, r->e->sfx,
			    ctype(dt), ctype(dt), expr);
		} else {
			int xdt = ty(r->e, in->arg[0]).dtype;
			unaryexpr(expr, sizeof expr, in, xdt, dt);
			out(r->e, "\nGNN_DFN %s\n%s_f%d%s(%s x)\n{\n\treturn %s;\n}\n", ctype(dt), r->e->nm, v, r->e->sfx, ctype(xdt), expr);
		}
	}
}

/*
 * The loop over rows, opening the body of row r.  With lanes on cuda a
 * block takes rows rows at a time, lanes threads each (every thread runs
 * every iteration, so the warp can meet at __syncwarp); the rows the
 * group makes live in shared memory, one slice per row.  On the cpu the
 * same rows are local arrays; OpenMP takes chunk rows at a time when the
 * schedule says so.
 */
enum { ArrShared, ArrBind, ArrLocal };

/*
 * The arrays a lane kernel keeps per row -- each node row the group makes,
 * and edge_softmax's column maxima and sums -- declared as shared memory
 * (rows slices of each), bound to this thread's slice, or declared as
 * the cpu's locals.
 */
static void
rowarrays(R *r, int mode)
{
	E *e = r->e;
	char name[3][32];
	int i, k, n;

	for (i = r->a; i < r->b; i++) {
		const Ins *in = &r->fn->ins[i];
		Ref v = in->to;
		long long w = width(r, v) ? width(r, v) : 1;
		const char *T = ctype(ty(e, v).dtype);
		n = 0;
		if (r->kind[v] == RowNode && !isalias(in))
			snprintf(name[n++], sizeof name[0], "v%d", v);
		if (in->op == Oedge_softmax) {
			snprintf(name[n++], sizeof name[0], "esmax%d", v);
			snprintf(name[n++], sizeof name[0], "essum%d", v);
		}
		for (k = 0; k < n; k++)
			if (mode == ArrShared)
				out(e, "\tGNN_SHARED(%s, sh%s_, [%d][%lld]);\n", T, name[k], e->sched.rows, w);
			else if (mode == ArrBind)
				out(e, "\t\t%s *%s = sh%s_[slot_];\n", T, name[k], name[k]);
			else
				out(e, "\t\t%s %s[%lld];\n", T, name[k], w);
	}
}

static void
rowloopopen(R *r)
{
	E *e = r->e;
	int R_ = e->sched.rows;

	if (r->lane && e->cuda) {
		rowarrays(r, ArrShared);
		out(e, "\tconst int lane_ = threadIdx.x %% %d, slot_ = threadIdx.x / %d;\n\n", r->L, r->L);
		out(e, "\tfor (int64_t base_ = (int64_t)blockIdx.x * %d; base_ < T; base_ += (int64_t)gridDim.x * %d) {\n", R_, R_);
		out(e, "\t\tconst int64_t r = base_ + slot_;\n\t\tconst bool live_ = r < T;\n");
		rowarrays(r, ArrBind);
		return;
	}
	if (!e->cuda && e->sched.chunk)
		out(e, "\tGNN_PARFOR_DYN(%d) for (int64_t r = 0; r < T; r++) {\n", e->sched.chunk);
	else
		out(e, "\tGNN_DLOOP(r, T) {\n");
	if (r->lane)
		rowarrays(r, ArrLocal);
}

void
emitrowkernel(E *e, int grp, char *call, size_t calln)
{
	Fn *fn = e->fn;
	R r = {.e = e, .fn = fn, .a = -1};
	Args a = {0};
	char name[32], decl[64];
	Dim nodes = 0;
	bool found = false;
	int i, k;
	size_t len;
	Ref v;

	for (i = 0; i < fn->nins; i++)
		if (attrint(&fn->ins[i], "group", -1) == grp) {
			if (r.a < 0)
				r.a = i;
			r.b = i + 1;
		}
	r.kind = emalloc(fn->nval + 1);
	r.egraph = emalloc((fn->nval + 1) * sizeof *r.egraph);
	r.ingroup = emalloc(fn->nval + 1);
	r.ext = emalloc(fn->nval + 1);
	r.done = emalloc(fn->nval + 1);
	r.esdone = emalloc(fn->nval + 1);
	rowkinds(fn, r.kind, r.egraph);
	for (i = r.a; i < r.b; i++)
		r.ingroup[fn->ins[i].to] = true;
	for (i = 0; i < fn->narg; i++)
		if (ty(e, fn->arg[i]).kind == TGraph && !found) {
			nodes = ty(e, fn->arg[i]).dim[0];
			found = true;
		}

	/* arguments: outputs, then what the group reads, then segment plans */
	for (i = r.a; i < r.b; i++) {
		v = fn->ins[i].to;
		if (r.kind[v] == RowNode && !isalias(&fn->ins[i]) && escapes(&r, v)) {
			snprintf(name, sizeof name, "o%d", v);
			ptrarg(e, &a, name, v, true, true);
		}
	}
	for (i = r.a; i < r.b; i++) {
		const Ins *in = &fn->ins[i];
		for (k = 0; k < in->narg; k++) {
			Ref x = base(&r, in->arg[k]);
			if (r.ingroup[x] || r.ext[x] || ty(e, x).kind == TGraph)
				continue;
			/* a scatter's index is its segment plan; a gather's by dst
			 * is row r itself */
			if ((k == 1 && (opinfo[in->op].flags & Fscatter)) ||
			    (in->op == Ogather && k == 1 && defins(&r, x)->op == Odst))
				continue;
			r.ext[x] = true;
			snprintf(name, sizeof name, "p%d", x);
			ptrarg(e, &a, name, x, false, true);
		}
		if ((opinfo[in->op].flags & Fscatter) || in->op == Oedge_softmax) {
			snprintf(decl, sizeof decl, "const int64_t *seg%d", i);
			arg(&a, decl, "(const int64_t *)%s", segment(e, i, true));
		}
	}
	r.L = e->sched.lanes > 1 ? e->sched.lanes : 1;
	r.lane = r.L > 1;
	if (r.lane)
		elemhelpers(&r);
	out(e, "\n/* fusion group %d:", grp);
	for (i = r.a; i < r.b; i++)
		out(e, " %s", opinfo[fn->ins[i].op].name);
	if (e->sched.lanes > 1 || e->sched.rows > 1 || e->sched.chunk || e->sched.axpy) {
		char text[128];
		schedprint(text, sizeof text, &e->sched);
		out(e, " (schedule %s)", text);
	}
	out(e, " */\n");
	if (r.lane && e->cuda)
		out(e, "GNN_DKERNEL_LB(%s_g%d%s, %d)(int64_t T", e->nm, grp, e->sfx, r.L * e->sched.rows);
	else
		out(e, "GNN_DKERNEL(%s_g%d%s)(int64_t T", e->nm, grp, e->sfx);
	for (k = 0; k < a.n; k++)
		out(e, ", %s", a.decl[k]);
	out(e, ")\n{\n");
	rowloopopen(&r);
	for (i = r.a; i < r.b; i++)
		if (r.kind[fn->ins[i].to] == RowNode) {
			emitvalue(&r, &fn->ins[i]);
			r.done[fn->ins[i].to] = true;
		}
	phaseopen(&r);
	for (i = r.a; i < r.b; i++) {
		v = fn->ins[i].to;
		if (r.kind[v] == RowNode && !isalias(&fn->ins[i]) && escapes(&r, v))
			out(e, "\t\tfor (int64_t j_ = %s; j_ < %lld; j_ += %d)\n\t\t\to%d[r * %lld + j_] = v%d[j_];\n",
			    r.lane ? "lane_" : "0", (long long)width(&r, v), r.L, v, (long long)width(&r, v), v);
	}
	phaseclose(&r);
	out(e, "\t}\n}\n");
	if (e->cuda && (r.lane || e->sched.rows > 1))
		len = snprintf(call, calln, "GNN_RLAUNCH(%s_g%d%s, %d, %d, %s", e->nm, grp, e->sfx, r.L, e->sched.rows, cdim(e, nodes));
	else
		len = snprintf(call, calln, "GNN_DLAUNCH(%s_g%d%s, %s", e->nm, grp, e->sfx, cdim(e, nodes));
	for (k = 0; k < a.n; k++)
		len += snprintf(call + len, calln > len ? calln - len : 0, ", %s", a.val[k]);
	snprintf(call + len, calln > len ? calln - len : 0, ");");
	free(r.kind);
	free(r.egraph);
	free(r.ingroup);
	free(r.ext);
	free(r.done);
	free(r.esdone);
}
