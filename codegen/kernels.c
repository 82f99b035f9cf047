/*
 * The kernel half of a generated file.
 *
 * First the bodies of the ops: the arithmetic of every op family
 * (elementwise, reductions and normalizations, scatters, edge_softmax,
 * dot products), written here once.  A body takes its operands as C
 * expressions and its results as lvalues, so the per-op kernels below
 * (one task per output element, row or segment: -O0, bind- and
 * load-time work) and the fused row kernels (rowkernel.c: one task per
 * target node, -O2) emit the same arithmetic with their own addressing.
 *
 * Then the per-op kernels, and emitkernels(), which writes every kernel
 * of a model into a buffer of its own under the placeholder name KNAME:
 * a kernel whose text equals an earlier one's (up to the names taken
 * from IR values: two layers of the same shapes) is not written again,
 * and its call runs the earlier one.  Kernel-internal names end in '_';
 * values are called by their IR names (names.c).  Storage is reached
 * through the host half's accessors (emit.h); nothing here has a fixed
 * size.
 */
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

#include "emit.h"

/* elements per task of the cpu target's dropout (gnn_dropout_rows): a few
 * microseconds of work, so a task's call costs nothing next to it */
#define DROPCHUNK 4096

/* ---- kernel parameters */

static void
grow(const char ***p, int *cap, int n)
{
	if (n < *cap)
		return;
	*cap = *cap ? 2 * *cap : 16;
	*p = erealloc(*p, *cap * sizeof **p);
}

void
arg(Args *a, const char *decl, const char *fmt, ...)
{
	Str b = {0};
	va_list ap;
	int cap = a->cap;

	grow(&a->decl, &cap, a->n);
	cap = a->cap;
	grow(&a->val, &cap, a->n);
	cap = a->cap;
	grow(&a->pname, &cap, a->n);
	a->cap = cap;
	va_start(ap, fmt);
	vsput(&b, fmt, ap);
	va_end(ap);
	a->decl[a->n] = decl;
	a->val[a->n] = b.s ? b.s : estrdup("");
	a->pname[a->n] = NULL;
	a->n++;
}

const char *
lname(E *e, Args *a, const char *fmt, ...)
{
	Str b = {0};
	va_list ap;
	const char *s;
	int k;

	va_start(ap, fmt);
	vsput(&b, fmt, ap);
	va_end(ap);
	for (k = 0; k < a->nname; k++)   /* each name once: canonical() walks the list */
		if (!strcmp(a->name[k], sstr(&b))) {
			sfree(&b);
			return a->name[k];
		}
	s = pf(e, "%s", sstr(&b));
	sfree(&b);
	grow(&a->name, &a->capname, a->nname);
	a->name[a->nname++] = s;
	return s;
}

/* v lives in a 16-bit buffer: a kernel reads its elements through
 * gnn_ld_* (halfaccess), never through a float pointer of its own */
static bool
stored16(E *e, Ref v)
{
	return valstoredtype(e->fn, v) != DNone;
}

const char *
matmula(E *e, const Ins *in, const char *x)
{
	int d = e->fn->val[in->arg[1]].def, rd = d >= 0 ? rounddtype(&e->fn->ins[d]) : DNone;

	return rd == DNone ? x : pf(e, "gnn_round_%s(%s)", dtypename(rd), x);
}

const char *
memctype(E *e, Ref v)
{
	return stored16(e, v) ? "uint16_t" : ctype(ty(e, v).dtype);
}

const char *
ptrarg(E *e, Args *a, const char *name, Ref v, bool isout, bool device)
{
	const char *T = memctype(e, v);
	int k, sdt = valstoredtype(e->fn, v), d = e->fn->val[v].def, rdt = DNone;

	if (sdt == DNone && isout && d >= 0)
		rdt = rounddtype(&e->fn->ins[d]);
	name = lname(e, a, "%s", name ? name : valname(e, v));
	for (k = 0; k < a->n; k++)
		if (a->pname[k] && !strcmp(a->pname[k], name))
			return name;
	/* restrict: a kernel's values never share memory it writes -- live
	 * ranges are closed, so no output shares a slot with an input
	 * (memplan.c; but for a GEMM epilogue's operand, which epioperands
	 * declares without), and forward writes an output in place only
	 * where the caller's buffer overlaps no input (program.c); two inputs
	 * may be one buffer, which restrict allows for memory nobody writes */
	arg(a, pf(e, "%s%s *%s %s", isout ? "" : "const ", T, e->cuda ? "__restrict__" : "restrict", name), "(%s%s *)%s",
	    isout ? "" : "const ", T, storage(e, storageof(e->p, v), device));
	a->pname[a->n - 1] = name;
	if (sdt != DNone || rdt != DNone) {
		if (a->nhalf == MaxHalf)
			die("codegen: more than %d 16-bit operands in one kernel", MaxHalf);
		a->half[a->nhalf] = name;
		a->halfround[a->nhalf] = sdt == DNone;
		a->halfdt[a->nhalf++] = sdt != DNone ? sdt : rdt;
	}
	return name;
}

void
unrestrict(E *e, Args *a, const char *name)
{
	int k = argindex(a, name);
	const char *kw = e->cuda ? "__restrict__ " : "restrict ", *r = strstr(a->decl[k], kw);

	if (r)
		a->decl[k] = pf(e, "%.*s%s", (int)(r - a->decl[k]), a->decl[k], r + strlen(kw));
}

int
argindex(const Args *a, const char *name)
{
	for (int k = 0; k < a->n; k++)
		if (a->pname[k] && !strcmp(a->pname[k], name))
			return k;
	die("codegen: no kernel parameter %s", name);
}

/* ---- 16-bit storage: the conversions at every access */

static bool
identch(char c)
{
	return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_';
}

/* the end of the bracketed or statement text from s: the matching ']'
 * (close ']') or the ';' at depth 0 (close ';') */
static const char *
closing(const char *s, char close)
{
	int d = 0;

	for (; *s; s++) {
		if (*s == '(' || *s == '[' || *s == '{')
			d++;
		else if ((*s == ')' || *s == ']' || *s == '}') && d-- == 0 && close == ']')
			return s;
		else if (*s == ';' && d == 0 && close == ';')
			return s;
	}
	die("codegen: unbalanced kernel text");
}

static char *halfaccess(const char *s, size_t len, const Args *a);

/*
 * A kernel's text with every element access through a 16-bit pointer
 * converted: a read p[i] becomes gnn_ld_DT(p[i]), a store p[i] = x;
 * becomes p[i] = gnn_st_DT(x); -- so the arithmetic stays float and the
 * value is rounded where it is written, once.  Through a float pointer
 * to a value rounded but kept in float32 (halfround), a store becomes
 * p[i] = gnn_round_DT(x); and a read stays.  An address (&p[i], a
 * prefetch) stays as it is.  A compound assignment would round every
 * partial sum, which no 16-bit reference does: a code generator bug,
 * so it dies.  A pointer used whole (p + i, a call's argument) is the
 * kernel's own business (the generated file is compiled with
 * -Werror=incompatible-pointer-types, so a float * use fails).
 */
static char *
halfaccess(const char *s, size_t len, const Args *a)
{
	Str b = {0};
	const char *end = s + len, *p = s, *q, *r;
	int k;
	size_t n;

	while (p < end) {
		if (!identch(*p) || (p > s && identch(p[-1]))) {
			sput(&b, "%c", *p++);
			continue;
		}
		for (q = p; q < end && identch(*q); q++)
			;
		n = (size_t)(q - p);
		for (k = 0; k < a->nhalf; k++)
			if (strlen(a->half[k]) == n && !strncmp(a->half[k], p, n))
				break;
		if (k == a->nhalf || q >= end || *q != '[' || (p > s && p[-1] == '&')) {
			sput(&b, "%.*s", (int)n, p);
			p = q;
			continue;
		}
		r = closing(q + 1, ']');
		{
			char *idx = halfaccess(q + 1, (size_t)(r - q - 1), a);
			const char *t = r + 1, *dt = dtypename(a->halfdt[k]);
			while (*t == ' ')
				t++;
			if (t[0] == '=' && t[1] != '=') {
				const char *x = t + 1, *semi;
				while (*x == ' ')
					x++;
				semi = closing(x, ';');
				char *val = halfaccess(x, (size_t)(semi - x), a);
				sput(&b, "%.*s[%s] = gnn_%s_%s(%s)", (int)n, p, idx, a->halfround[k] ? "round" : "st", dt, val);
				free(val);
				p = semi;
			} else if (t[1] == '=' && strchr("+-*/|&", t[0]))
				die("codegen: a compound assignment to a 16-bit value (%.*s)", (int)n, p);
			else if (a->halfround[k]) {
				sput(&b, "%.*s[%s]", (int)n, p, idx);
				p = r + 1;
			} else {
				sput(&b, "gnn_ld_%s(%.*s[%s])", dt, (int)n, p, idx);
				p = r + 1;
			}
			free(idx);
		}
	}
	return b.s ? b.s : estrdup("");
}

void
argsfree(Args *a)
{
	int k;

	for (k = 0; k < a->n; k++)
		free((char *)a->val[k]);
	free(a->decl);
	free(a->val);
	free(a->pname);
	free(a->name);
	memset(a, 0, sizeof *a);
}

void
blockopen(W *w)
{
	wput(w, "{\n");
	w->ind++;
}

/* ---- the bodies of the ops */

static bool
isident(const char *s)
{
	for (; *s; s++)
		if (!((*s >= 'a' && *s <= 'z') || (*s >= 'A' && *s <= 'Z') || (*s >= '0' && *s <= '9') || *s == '_'))
			return false;
	return true;
}

/* an operand inside a larger expression */
static const char *
par(E *e, const char *x)
{
	return isident(x) ? x : pf(e, "(%s)", x);
}

/* e^x and e^x - 1 in dtype dt: float goes through GNN_EXPF and
 * GNN_EXPM1F, which the cpu target defines as an inline function that
 * its loops vectorize (emit.c's prelude) and cuda as expf and expm1f */
static const char *
expname(int dt)
{
	return dt == DF32 ? "GNN_EXPF" : "exp";
}

static const char *
expm1name(int dt)
{
	return dt == DF32 ? "GNN_EXPM1F" : "expm1";
}

const char *
elemexpr(E *e, const Ins *in, const char *a, const char *b)
{
	int odt = ty(e, in->to).dtype, dt = opinfo[in->op].flags & Fbin ? odt : ty(e, in->arg[0]).dtype;
	const char *f = dt == DF32 ? "f" : "", *T = ctype(dt);
	double slope = attrfloat(in, "slope", 0.01), alpha = attrfloat(in, "alpha", 1.0);
	const char *x = par(e, a);

	if (opinfo[in->op].flags & Fbin) {
		b = par(e, b);
		switch (in->op) {
		case Oadd: return pf(e, "%s + %s", x, b);
		case Osub: return pf(e, "%s - %s", x, b);
		case Omul: return pf(e, "%s * %s", x, b);
		case Odiv: return pf(e, "%s / %s", x, b);
		case Opow:
			if (dtypeisfloat(dt))
				return pf(e, "pow%s(%s, %s)", f, x, b);
			return pf(e, "(%s)pow((double)%s, (double)%s)", T, x, b);
		/* NaN propagates, as torch.maximum and torch.minimum do */
		case Omaximum: return pf(e, "(%s != %s || %s > %s ? %s : %s)", x, x, x, b, x, b);
		case Ominimum: return pf(e, "(%s != %s || %s < %s ? %s : %s)", x, x, x, b, x, b);
		/* a float 0 or 1; NaN compares false */
		case Ogt: return pf(e, "(%s > %s ? (%s)1 : (%s)0)", x, b, T, T);
		case Oeq: return pf(e, "(%s == %s ? (%s)1 : (%s)0)", x, b, T, T);
		default: die("codegen: %s is not binary", opinfo[in->op].name);
		}
	}
	switch (in->op) {
	case Oneg: return pf(e, "-%s", x);
	case Oabs: return dtypeisfloat(dt) ? pf(e, "fabs%s(%s)", f, x) : pf(e, "(%s < 0 ? -%s : %s)", x, x, x);
	/* x for x > 0 and NaN, +0 else: one compare, which compilers make a
	 * select (the two-test form stayed a branch, mispredicted on every
	 * other element of a sign-mixed tensor) */
	case Orelu: return pf(e, "(%s <= 0 ? 0 : %s)", x, x);
	case Oleaky_relu: return pf(e, "(%s > 0 ? %s : (%s)%.17g * %s)", x, x, T, slope, x);
	case Oelu: return pf(e, "(%s > 0 ? %s : (%s)%.17g * %s(%s))", x, x, T, alpha, expm1name(dt), x);
	case Osigmoid: return pf(e, "(1 / (1 + %s(-%s)))", expname(dt), x);
	case Otanh: return pf(e, "tanh%s(%s)", f, x);
	case Oexp: return pf(e, "%s(%s)", expname(dt), x);
	case Olog: return pf(e, "log%s(%s)", f, x);
	case Osqrt: return pf(e, "sqrt%s(%s)", f, x);
	case Orsqrt: return pf(e, "(1 / sqrt%s(%s))", f, x);
	case Ocast: return odt == DBool ? pf(e, "(uint8_t)(%s != 0)", x) : pf(e, "(%s)%s", ctype(odt), x);
	default: die("codegen: %s is not unary", opinfo[in->op].name);
	}
}

void
elembody(E *e, const Ins *in, const char *a, const char *b, const char *dst)
{
	bool bin = opinfo[in->op].flags & Fbin;
	const char *T = ctype(bin ? ty(e, in->to).dtype : ty(e, in->arg[0]).dtype);

	blockopen(e->w);
	if (bin)
		out(e, "const %s a_ = %s, b_ = %s;\n", T, a, b);
	else
		out(e, "const %s a_ = %s;\n", T, a);
	out(e, "%s = %s;\n", dst, elemexpr(e, in, "a_", bin ? "b_" : NULL));
	wclose(e->w, "");
}

/* partial chains of a long sum (reducebody) */
enum { SUMLANES = 16 };

/*
 * a_ = the sum of x over k_ in [0, D): from SUMLANES terms on,
 * SUMLANES partial chains (term k into partial k % SUMLANES, each in k
 * order) combined by halves, a chain of D / SUMLANES + 4 adds, which
 * vectorize; shorter sums one chain in k order.  A fixed order, so
 * every target, level and thread count gives the same bits.
 */
void
sumbody(E *e, const char *T, const char *x, const char *D)
{
	out(e, "%s a_ = 0;\n", T);
	wopen(e->w, "if (%s >= %d)", D, SUMLANES);
	out(e, "%s p_[%d] = {0};\nint64_t k0_ = 0;\n\n", T, SUMLANES);
	/* unrolled, a row's sums of up to 128 terms keep their partials in
	 * registers; looped, gcc stored them to the stack and read them
	 * back on every step, a store-to-load chain that was the critical
	 * path of an attention row's q . k (hetero TransformerConv forward
	 * 51 -> 40 ms, SAGE 18.5 -> 15.2, one thread; the same bits).
	 * gcc's and clang's spelling; nvcc would warn, so the cpu's only */
	if (!e->cuda)
		out(e, "#pragma GCC unroll 8\n");
	out(e, "for (; k0_ + %d <= %s; k0_ += %d)\n", SUMLANES, D, SUMLANES);
	out(e, "\tfor (int64_t j_ = 0; j_ < %d; j_++) {\n\t\tconst int64_t k_ = k0_ + j_;\n\n\t\tp_[j_] += %s;\n\t}\n", SUMLANES, x);
	out(e, "for (int64_t j_ = 0; k0_ + j_ < %s; j_++) {\n\tconst int64_t k_ = k0_ + j_;\n\n\tp_[j_] += %s;\n}\n", D, x);
	if (!e->cuda)
		out(e, "#pragma GCC unroll 4\n");
	out(e, "for (int64_t w_ = %d; w_ > 0; w_ /= 2)\n\tfor (int64_t j_ = 0; j_ < w_; j_++)\n\t\tp_[j_] += p_[j_ + w_];\n", SUMLANES / 2);
	out(e, "a_ = p_[0];\n");
	wclose(e->w, " else");
	out(e, "\tfor (int64_t k_ = 0; k_ < %s; k_++)\n\t\ta_ += %s;\n", D, x);
}

/*
 * m = the largest x over k_ in [0, D), NaN where one is NaN: from
 * SUMLANES terms on, SUMLANES partial maxima (term k into partial
 * k % SUMLANES) combined by halves, compares and selects that vectorize,
 * where one chain of D compare-and-branch steps took a fifth of GCN's
 * last layer on the cpu (a row of 40 classes' log_softmax); shorter rows
 * one chain.  The largest value is the same in any order; only which of
 * equal zeros (-0 or +0) or of several NaNs is kept can differ.
 */
static void
maxbody(E *e, const char *T, const char *x, const char *D, const char *m)
{
	const char *step = "p_[j_] = (x_ > p_[j_]) | (x_ != x_) ? x_ : p_[j_];";

	wopen(e->w, "if (%s >= %d)", D, SUMLANES);
	out(e, "%s p_[%d];\nint64_t k0_ = %d;\n\n", T, SUMLANES, SUMLANES);
	out(e, "for (int64_t j_ = 0; j_ < %d; j_++) {\n\tconst int64_t k_ = j_;\n\n\tp_[j_] = %s;\n}\n", SUMLANES, x);
	out(e, "for (; k0_ + %d <= %s; k0_ += %d)\n", SUMLANES, D, SUMLANES);
	out(e, "\tfor (int64_t j_ = 0; j_ < %d; j_++) {\n\t\tconst int64_t k_ = k0_ + j_;\n\t\tconst %s x_ = %s;\n\n\t\t%s\n\t}\n",
	    SUMLANES, T, x, step);
	out(e, "for (int64_t j_ = 0; k0_ + j_ < %s; j_++) {\n\tconst int64_t k_ = k0_ + j_;\n\tconst %s x_ = %s;\n\n\t%s\n}\n", D, T, x,
	    step);
	out(e, "for (int64_t w_ = %d; w_ > 0; w_ /= 2)\n\tfor (int64_t j_ = 0; j_ < w_; j_++) {\n\t\tconst %s x_ = p_[j_ + w_];\n\n\t\t%s\n\t}\n",
	    SUMLANES / 2, T, step);
	out(e, "%s = p_[0];\n", m);
	wclose(e->w, " else");
	out(e, "\tfor (int64_t k_ = 0; k_ < %s; k_++) {\n\t\tconst %s x_ = %s;\n\n", D, T, x);
	out(e, "\t\tif (k_ == 0 || x_ > %s || x_ != x_)\n\t\t\t%s = x_;\n\t}\n", m, m);
}

void
reducebody(E *e, const Ins *in, int dt, const char *x, const char *D, const char *o, const char *ok)
{
	const char *T = ctype(dt), *f = dt == DF32 ? "f" : "";
	double eps = attrfloat(in, "eps", 1e-12);

	switch (in->op) {
	case Osum:
	case Omean:
		/* sumbody's partial chains, where one chain of D adds was
		 * the critical path of an attention row (TransformerConv's
		 * q . k, 64 adds an edge) */
		sumbody(e, T, x, D);
		if (in->op == Osum)
			out(e, "%s = a_;\n", o);
		else if (dtypeisfloat(dt))   /* 0/0: NaN over an empty dim, as torch */
			out(e, "%s = a_ / (%s)(%s);\n", o, T, D);
		else
			out(e, "%s = (%s) ? a_ / (%s)(%s) : 0;\n", o, D, T, D);
		return;
	case Omax:
		/* NaN propagates; over an empty dim (which the interpreter
		 * refuses) NaN, and 0 for integers */
		out(e, "%s a_ = %s;\n", T, dtypeisfloat(dt) ? pf(e, "(%s)NAN", T) : "0");
		maxbody(e, T, x, D, "a_");
		out(e, "%s = a_;\n", o);
		return;
	case Ol2_normalize:
		out(e, "%s a_ = 0;\nfor (int64_t k_ = 0; k_ < %s; k_++) {\n\tconst %s x_ = %s;\n\ta_ += x_ * x_;\n}\n", T, D, T, x);
		out(e, "a_ = sqrt%s(a_);\nif (!(a_ > (%s)%.17g))\n\ta_ = (%s)%.17g;\n", f, T, eps, T, eps);
		out(e, "for (int64_t k_ = 0; k_ < %s; k_++)\n\t%s = %s / a_;\n", D, ok, par(e, x));
		return;
	case Osoftmax:
	case Olog_softmax:
		out(e, "%s m_ = 0, a_ = 0;\n", T);
		maxbody(e, T, x, D, "m_");
		out(e, "for (int64_t k_ = 0; k_ < %s; k_++)\n\ta_ += %s(%s - m_);\n", D, expname(dt), par(e, x));
		if (in->op == Osoftmax)
			out(e, "for (int64_t k_ = 0; k_ < %s; k_++)\n\t%s = %s(%s - m_) / a_;\n", D, ok, expname(dt), par(e, x));
		else
			/* the log once a row: a call the compiler may not hoist
			 * (errno), 40 a row of 40 classes */
			out(e, "const %s lg_ = log%s(a_);\nfor (int64_t k_ = 0; k_ < %s; k_++)\n\t%s = %s - m_ - lg_;\n", T, f, D, ok, par(e, x));
		return;
	default:
		die("codegen: %s is no reduction", opinfo[in->op].name);
	}
}

/* columns of a task of colreducebody and segscatterbody: a 64-byte line
** of floats; RBW of them at most in one walk */
enum { RB = 16, RBW = 8 };

/*
 * The tasks of colreducebody and segscatterbody are RB columns each, but
 * a thread walks its whole range [t_, t1_) at once: consecutive tasks of
 * one row (segscatter) or outer index (colreduce), up to RBW of them,
 * share one walk of the rows or edges, so memory is read as it lies and
 * the plan once, where a walk per task read a line a row and the plan
 * once per 16 columns (PubMed's [N, 128] column sums 2.3x faster, one
 * thread).  Each column is still its own chain in the same order, so
 * neither the range nor the thread count moves a bit.  Opens the walk
 * over groups: u_ its first task, g_ the tasks the group covers, c0_ and
 * nc_ its columns in the row of W columns; the caller ends the walk with
 * rangewalkclose.
 */
static void
rangewalkopen(E *e, const char *W)
{
	out(e, "const int64_t nb_ = (%s + %d) / %d;\n\n", W, RB - 1, RB);
	wopen(e->w, "for (int64_t u_ = t_, g_; u_ < t1_; u_ += g_)");
	out(e, "const int64_t q_ = u_ / nb_, b0_ = u_ %% nb_, c0_ = b0_ * %d;\nint64_t nc_;\n\n", RB);
	out(e, "g_ = nb_ - b0_ < t1_ - u_ ? nb_ - b0_ : t1_ - u_;\n");
	out(e, "if (g_ > %d)\n\tg_ = %d;\n", RBW, RBW);
	out(e, "nc_ = %s - c0_ < g_ * %d ? %s - c0_ : g_ * %d;\n", W, RB, W, RB);
}

static void
rangewalkclose(E *e)
{
	wclose(e->w, "");
	out(e, "break;   /* the walk covered the range */\n");
}

/* for each column c_ of the group, a loop of constant trip count per
** full line (the compiler vectorizes it), then the line left over; step
** writes the statement, with c_ */
typedef struct ColStep {
	void (*emit)(E *e, const struct ColStep *s);
	const Ins *in;
	const char *T, *el;
} ColStep;

static void
groupcols(E *e, const ColStep *s)
{
	out(e, "for (int64_t l_ = 0; l_ < nc_ / %d; l_++)\n", RB);
	e->w->ind++;
	wopen(e->w, "for (int64_t j_ = 0; j_ < %d; j_++)", RB);
	out(e, "const int64_t c_ = l_ * %d + j_;\n\n", RB);
	s->emit(e, s);
	wclose(e->w, "");
	e->w->ind--;
	wopen(e->w, "for (int64_t c_ = nc_ / %d * %d; c_ < nc_; c_++)", RB, RB);
	s->emit(e, s);
	wclose(e->w, "");
}

static void
scatterel(E *e, const ColStep *s)
{
	out(e, "const %s x_ = x0_[c_];\n", s->T);
	scatterstep(e, s->in, "k_ == rowptr_[r_]", "x_", "acc_[c_]");
}

/* a scatter along a bind-time segment plan on the cpu: tasks of RB
** columns of a row, walked as rangewalkopen says; each message's columns
** are read as lines, where a task per element reloaded the plan and read
** a float a line; each element is the chain over the row's messages the
** per-element task made, in the same order, so the bits are too. With
** via (an index expression in k_), message k is row via of X
** (throughgather). */
static void
segscatterbody(E *e, const Ins *in, const char *ot, const char *X, const char *O, const char *via)
{
	const ColStep st = {scatterel, in, ot, NULL};

	rangewalkopen(e, "row_");
	out(e, "const int64_t r_ = q_;\n%s acc_[%d];\n\n", ot, RB * RBW);
	out(e, "for (int64_t c_ = 0; c_ < nc_; c_++)\n\tacc_[c_] = 0;\n");
	wopen(e->w, "for (int64_t k_ = rowptr_[r_]; k_ < rowptr_[r_ + 1]; k_++)");
	if (via)
		out(e, "const %s *x0_ = %s + (int64_t)%s * row_ + c0_;\n\n", ot, X, via);
	else
		out(e, "const %s *x0_ = %s + order_[k_] * row_ + c0_;\n\n", ot, X);
	groupcols(e, &st);
	wclose(e->w, "");
	wopen(e->w, "for (int64_t c_ = 0; c_ < nc_; c_++)");
	scatterfinish(e, in, "rowptr_[r_ + 1] - rowptr_[r_]", "acc_[c_]");
	out(e, "%s[r_ * row_ + c0_ + c_] = acc_[c_];\n", O);
	wclose(e->w, "");
	rangewalkclose(e);
}

/* edge_softmax on the cpu: a task per RB columns (heads) of a node, as
** segscatterbody's, where a task per element read a float a line on
** each of its three walks of the node's edges and could not vectorize
** exp across heads; each weight is the same chain as before (the
** maximum, then the sum of exp(s - max) in edge order), so the bits too.
** w columns a task: RB, or the row's constant width below it (GAT's
** heads), which makes every block full */
static void
edgesoftmaxbody(E *e, int dt, const char *ot, const char *X, const char *O, int w)
{
	const char *nj[2] = {pf(e, "%d", w), "nj_"};

	out(e, "const int64_t nb_ = (row_ + %d) / %d, r_ = t_ / nb_, j0_ = t_ %% nb_ * %d;\n", w - 1, w, w);
	out(e, "const int64_t nj_ = row_ - j0_ < %d ? row_ - j0_ : %d;\n%s mx_[%d], sum_[%d];\n\n", w, w, ot, w, w);
	out(e, "for (int64_t j_ = 0; j_ < %d; j_++)\n\tmx_[j_] = 0, sum_[j_] = 0;\n", w);
	for (int full = 0; full < 2; full++) {
		/* a full block: constant trip counts the compiler vectorizes */
		if (full == 0)
			wopen(e->w, "if (nj_ == %d)", w);
		for (int j = 0; j < 3; j++) {
			wopen(e->w, "for (int64_t k_ = rowptr_[r_]; k_ < rowptr_[r_ + 1]; k_++)");
			out(e, "const %s *x0_ = %s + order_[k_] * row_ + j0_;\n", ot, X);
			if (j == 2)
				out(e, "%s *o0_ = %s + order_[k_] * row_ + j0_;\n", ot, O);
			out(e, "\n");
			wopen(e->w, "for (int64_t j_ = 0; j_ < %s; j_++)", nj[full]);
			out(e, "const %s s_ = x0_[j_];\n", ot);
			if (j == 0)
				esmaxstep(e, "k_ == rowptr_[r_]", "s_", "mx_[j_]");
			else if (j == 1)
				essumstep(e, dt, "s_", "mx_[j_]", "sum_[j_]");
			else
				out(e, "o0_[j_] = %s;\n", esweight(e, dt, "s_", "mx_[j_]", "sum_[j_]"));
			wclose(e->w, "");
			wclose(e->w, "");
		}
		if (full == 0) {
			wclose(e->w, " else {");
			e->w->ind++;
		} else
			wclose(e->w, "");
	}
}

static void
colsumel(E *e, const ColStep *s)
{
	out(e, "a_[c_] += %s;\n", s->el);
}

static void
colmaxel(E *e, const ColStep *s)
{
	out(e, "const %s x_ = %s;\n\n", s->T, s->el);
	out(e, "if (k_ == 0 || x_ > a_[c_] || x_ != x_)\n\ta_[c_] = x_;\n");
}

/* sum, mean or max over a dim with columns after it (D_ rows of inner_
** columns per outer index), tasks of RB columns of one outer index
** walked as rangewalkopen says: an accumulator per column, each the
** chain reducebody's task per column makes */
static void
colreducebody(E *e, const Ins *in, int dt, const char *X, const char *Y, bool neg, const char *O)
{
	const char *T = ctype(dt);
	/* the element summed: x's, or the product x * y or negation -x that
	 * readfold folded into the walk (the product rounded to T first, as
	 * its kernel stored it: the generated C is compiled without FMA
	 * contraction; a negation is exact) */
	const char *el = Y ? "x0_[k_ * inner_ + c_] * y0_[k_ * inner_ + c_]" : neg ? "-x0_[k_ * inner_ + c_]" : "x0_[k_ * inner_ + c_]";
	ColStep st = {colsumel, in, T, el};

	if (in->op == Omax && (Y || neg))
		die("colreducebody: a max read through a product");
	rangewalkopen(e, "inner_");
	out(e, "const %s *x0_ = %s + q_ * D_ * inner_ + c0_;\n", T, X);
	if (Y)
		out(e, "const %s *y0_ = %s + q_ * D_ * inner_ + c0_;\n", T, Y);
	out(e, "%s *o0_ = %s + q_ * inner_ + c0_;\n%s a_[%d];\n\n", T, O, T, RB * RBW);
	if (in->op == Omax) {
		/* NaN propagates, as reducebody's; an empty dim gives NaN */
		st.emit = colmaxel;
		out(e, "for (int64_t c_ = 0; c_ < nc_; c_++)\n\ta_[c_] = %s;\n", dtypeisfloat(dt) ? pf(e, "(%s)NAN", T) : "0");
	} else
		out(e, "for (int64_t c_ = 0; c_ < nc_; c_++)\n\ta_[c_] = 0;\n");
	wopen(e->w, "for (int64_t k_ = 0; k_ < D_; k_++)");
	groupcols(e, &st);
	wclose(e->w, "");
	if (in->op == Osum || in->op == Omax)
		out(e, "for (int64_t c_ = 0; c_ < nc_; c_++)\n\to0_[c_] = a_[c_];\n");
	else if (dtypeisfloat(dt))   /* 0/0: NaN over an empty dim, as torch */
		out(e, "for (int64_t c_ = 0; c_ < nc_; c_++)\n\to0_[c_] = a_[c_] / (%s)(D_);\n", T);
	else
		out(e, "for (int64_t c_ = 0; c_ < nc_; c_++)\n\to0_[c_] = D_ ? a_[c_] / (%s)(D_) : 0;\n", T);
	rangewalkclose(e);
}

void
scatterstep(E *e, const Ins *in, const char *first, const char *x, const char *acc)
{
	/* scatter_max: the row's first message replaces the 0; NaN wins */
	if (in->op == Oscatter_max)
		out(e, "if (%s || %s > %s || %s != %s)\n\t%s = %s;\n", first, x, acc, x, x, acc, x);
	else
		out(e, "%s += %s;\n", acc, x);
}

void
scatterfinish(E *e, const Ins *in, const char *cnt, const char *acc)
{
	if (in->op == Oscatter_mean)
		out(e, "if (%s > 1)\n\t%s /= (%s)(%s);\n", cnt, acc, ctype(ty(e, in->to).dtype), cnt);
}

void
esmaxstep(E *e, const char *first, const char *s, const char *mx)
{
	out(e, "if (%s || %s > %s || %s != %s)\n\t%s = %s;\n", first, s, mx, s, s, mx, s);
}

void
essumstep(E *e, int dt, const char *s, const char *mx, const char *sum)
{
	out(e, "%s += %s(%s - %s);\n", sum, expname(dt), par(e, s), mx);
}

/*
 * One pass of edge_softmax's statistics (online softmax): the running
 * maximum mx and sum of exp(s - mx), rescaled when the maximum grows.
 * The two-pass form's special values: its sum is NaN when the maximum
 * is +inf or NaN; when it is -inf every weight is NaN whatever the sum.
 * So s - s + 1 stands for exp(s - s) (1, or NaN for an infinite or NaN
 * s), and terms seen while the maximum was -inf rescale to 0, not to
 * NaN * 0, once a larger score comes.  Without first, mx starts at
 * -inf and sum at 0.
 */
void
esonlinestep(E *e, int dt, const char *first, const char *s, const char *mx, const char *sum)
{
	const char *x = expname(dt), *T = ctype(dt);

	if (first)
		out(e, "if (%s) {\n\t%s = %s;\n\t%s = %s - %s + 1;\n}\nelse ", first, mx, s, sum, s, s);
	out(e, "if (%s > %s || %s != %s) {\n\t%s = (%s > -(%s)INFINITY ? %s * %s(%s - %s) : 0) + (%s - %s + 1);\n\t%s = %s;\n}\n", s,
	    mx, s, s, sum, mx, T, sum, x, mx, s, s, s, mx, s);
	out(e, "else\n\t%s += %s(%s - %s);\n", sum, x, s, mx);
}

/* Two parts of online-softmax statistics, (mx, sum) and (m2, s2), into
 * (mx, sum) in that order; as esonlinestep, a part whose maximum is
 * -inf adds 0 once the other's is larger. */
void
esonlinemerge(E *e, int dt, const char *mx, const char *sum, const char *m2, const char *s2)
{
	const char *x = expname(dt), *T = ctype(dt);

	blockopen(e->w);
	out(e, "const %s n_ = %s > %s || %s != %s ? %s : %s;\n\n", T, m2, mx, m2, m2, m2, mx);
	out(e, "%s = (%s > -(%s)INFINITY || n_ == %s ? %s * %s(%s - n_) : 0) + (%s > -(%s)INFINITY || n_ == %s ? %s * %s(%s - n_) : 0);\n", sum,
	    mx, T, mx, sum, x, mx, m2, T, m2, s2, x, m2);
	out(e, "%s = n_;\n", mx);
	wclose(e->w, "");
}

const char *
esweight(E *e, int dt, const char *s, const char *mx, const char *sum)
{
	return pf(e, "(%s(%s - %s) / (%s + (%s)1e-16))", expname(dt), par(e, s), mx, sum, ctype(dt));
}

void
dotbody(E *e, const char *T, const char *acc, const char *a, const char *b, const char *K)
{
	out(e, "%s %s = 0;\nfor (int64_t k_ = 0; k_ < %s; k_++)\n\t%s += %s * %s;\n", T, acc, K, acc, par(e, a), par(e, b));
}

/*
 * acc (an lvalue in i_ and p_) = rows i_ < nrows of a (in i_ and k_) times
 * B[K][P], each output one chain over k = 0 .. K-1 in order from 0.  The
 * columns go in groups of up to four runs of 16 (the last run what is
 * left), each run's sums in a local array of constant length that gcc
 * keeps in a vector register across the k loop, four independent chains
 * of additions; the sums were a memory row before, each addition a load
 * and a store through it (hetero SAGE's fused transforms, 64 columns,
 * were most of its forward).  Each step is one fused multiply-add, as in
 * gnn_sgemm's chains: the generated C is compiled without contraction,
 * so a product and a sum were two instructions a step, and these loops
 * (a row kernel's products, one row at a time) issue little else:
 * hetero SAGE's forward went from 22-24 to 16.5 ms, GAT's from 48-52 to
 * 38 (one thread).  An explicit fma is the same on every path the
 * kernel is compiled for (a CPU without FMA calls libm's), so the bits
 * do not depend on the machine.
 */
void
axpybody(E *e, const char *T, long long nrows, const char *a, const char *B, long long K, long long P, const char *acc)
{
	enum { Run = 16, Runs = 4 };
	const char *fma = !strcmp(T, "float") ? "__builtin_fmaf" : !strcmp(T, "double") ? "__builtin_fma" : NULL;

	blockopen(e->w);
	out(e, "const int64_t K_ = %lld, P_ = %lld;\n", K, P);
	wopen(e->w, "for (int i_ = 0; i_ < %lld; i_++)", nrows);
	for (long long g0 = 0; g0 < P; g0 += Run * Runs) {
		long long g1 = P - g0 < Run * Runs ? P : g0 + Run * Runs;

		int nrun = (int)((g1 - g0 + Run - 1) / Run);
		long long len[Runs];

		for (int q = 0; q < nrun; q++)
			len[q] = g1 - (g0 + q * Run) < Run ? g1 - (g0 + q * Run) : Run;
		blockopen(e->w);
		for (int q = 0; q < nrun; q++)
			out(e, "%s s%d_[%lld] = {0};\n", T, q, len[q]);
		wopen(e->w, "for (int64_t k_ = 0; k_ < K_; k_++)");
		out(e, "const %s a_ = %s;\n", T, a);
		for (int q = 0; q < nrun; q++)
			if (fma)
				out(e, "for (int j_ = 0; j_ < %lld; j_++)\n\ts%d_[j_] = %s(a_, %s[k_ * P_ + %lld + j_], s%d_[j_]);\n",
				    len[q], q, fma, B, g0 + q * Run, q);
			else
				out(e, "for (int j_ = 0; j_ < %lld; j_++)\n\ts%d_[j_] += a_ * %s[k_ * P_ + %lld + j_];\n", len[q], q, B,
				    g0 + q * Run);
		wclose(e->w, "");
		for (int q = 0; q < nrun; q++)
			out(e, "for (int j_ = 0; j_ < %lld; j_++) {\n\tconst int64_t p_ = %lld + j_;\n\t%s = s%d_[j_];\n}\n",
			    len[q], g0 + q * Run, acc, q);
		wclose(e->w, "");
	}
	wclose(e->w, "");
	wclose(e->w, "");
}

const char *
concatsrc(E *e, const char *n, const char *inner)
{
	return pf(e, "(o_ * %s + c_) * %s + i_", n, inner);
}

/* ---- per-op kernels */

/*
 * Strided addressing: the task index decomposes into the coordinates of
 * an output of rank r, and each source's offset is the sum of coordinate
 * times that source's stride for the dim (0 where it broadcasts).
 */
static void
stridedsrc(E *e, Args *a, const Type *o, int nsrc, const Type *src, const int *perm)
{
	int k, j, r = o->rank, sr, sd;

	for (k = 0; k < r; k++) {
		arg(a, pf(e, "int64_t d%d_", k), "%s", cdim(e, o->dim[k]));
		for (j = 0; j < nsrc; j++) {
			const char *decl = pf(e, "int64_t s%d_%d_", j, k);
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

/*
 * How an elementwise op's operand is read without per-dim strides, if it
 * can be: the output's shape (element t_), one element ([0]), the
 * output's leading dims with 1s after them (a value per row: [t_ /
 * inner]) or its trailing dims, right-aligned, with 1s or nothing before
 * (a bias: [t_ % inner]), inner being the product of the output's dims
 * from the split on.  Returns the op ('=', '0', '/', '%') and sets *from
 * to the split; 0: the strided form.
 */
static int
plainform(const Type *o, const Type *s, int *from)
{
	int r = o->rank, off = r - s->rank, k, lead, trail;

	if (off < 0)
		return 0;
	for (lead = 0; off == 0 && lead < r && s->dim[lead] == o->dim[lead]; lead++)
		;
	for (trail = 0; trail < s->rank && s->dim[s->rank - 1 - trail] == o->dim[r - 1 - trail]; trail++)
		;
	for (k = 0; k < s->rank && s->dim[k] == 1; k++)
		;
	if (k == s->rank)
		return '0';
	if (lead == r)
		return '=';
	for (k = lead; k < r && s->dim[k] == 1; k++)
		;
	if (off == 0 && k == r) {
		*from = lead;
		return '/';
	}
	for (k = 0; k < s->rank - trail && s->dim[k] == 1; k++)
		;
	if (k == s->rank - trail) {
		*from = r - trail;
		return '%';
	}
	return 0;
}

/* operand j's index in plainform's form f: inner a literal when the dims
 * are constants (the division becomes a multiply), else a parameter */
static const char *
plainindex(E *e, Args *a, const Type *o, int f, int from, int j)
{
	const char *inner;
	bool ok = true;

	if (f == '0')
		return "0";
	if (f == '=')
		return "t_";
	if (dimisconst(dimprod(e->m, o->dim + from, o->rank - from, &ok)) && ok)
		inner = cprod(e, o, from, o->rank);
	else {
		arg(a, pf(e, "int64_t inner%d_", j), "%s", cprod(e, o, from, o->rank));
		inner = pf(e, "inner%d_", j);
	}
	return pf(e, f == '/' ? "t_ / %s" : "t_ %% %s", inner);
}

/* The row count of a binary kernel run a task per row (cpu), and in
 * *width the row's: both operands in plainform's forms, those that vary
 * within a row ('%', '/') split at the same dim, and the row (the dims
 * from there) a constant of at least 8 elements; else NULL */
static const char *
rowform(E *e, const Type *o, int fx, int sx, int fy, int sy, const char **width)
{
	bool vx = fx == '%' || fx == '/', vy = fy == '%' || fy == '/', ok = true;
	int from = vx ? sx : sy;
	Dim w;

	if (e->cuda || (!vx && !vy) || (vx && vy && sx != sy))
		return NULL;
	w = dimprod(e->m, o->dim + from, o->rank - from, &ok);
	if (!ok || !dimisconst(w) || dimconstval(w) < 8)
		return NULL;
	*width = cprod(e, o, from, o->rank);
	return cprod(e, o, 0, from);
}

/* an operand's index in rowform's loop (row t_, column j_, element u_) */
static const char *
rowindex(int f)
{
	return f == '0' ? "0" : f == '=' ? "u_" : f == '/' ? "t_" : "j_";
}

static void
stridedbody(E *e, int r, int nsrc, const char *from)
{
	int k, j;

	out(e, "int64_t ");
	for (j = 0; j < nsrc; j++)
		out(e, "%si%d_ = 0", j ? ", " : "", j);
	out(e, ";\n");
	if (r == 0)
		return;
	out(e, "int64_t r_ = %s;\n", from);
	for (k = r - 1; k >= 0; k--) {
		out(e, "{ const int64_t c_ = r_ %% d%d_; r_ /= d%d_;", k, k);
		for (j = 0; j < nsrc; j++)
			out(e, " i%d_ += c_ * s%d_%d_;", j, j, k);
		out(e, " }\n");
	}
	out(e, "(void)r_;\n");
}

/* A size parameter that kernels divide by (row_, inner_, D_, n_, dK_)
 * whose value is a constant, "(int64_t)64": on the cpu target the kernel
 * declares it as a constant of its own instead, so that the divisions
 * and remainders by it (a task's row and column) are multiplies and
 * shifts; the launch does not pass it */
static bool
litarg(E *e, const Args *a, int k)
{
	const char *v = a->val[k], *d = a->decl[k];

	if (e->cuda || strncmp(v, "(int64_t)", 9) != 0 || !v[9])
		return false;
	/* the sizes kernels divide by */
	if (strcmp(d, "int64_t row_") && strcmp(d, "int64_t inner_") && strcmp(d, "int64_t D_") &&
	    strcmp(d, "int64_t n_") && !(strncmp(d, "int64_t d", 9) == 0 && d[9] >= '0' && d[9] <= '9'))
		return false;
	for (v += 9; *v; v++)
		if (*v < '0' || *v > '9')
			return false;
	return true;
}

static void
kernelhead(E *e, int i, bool device, const Args *a)
{
	int k;
	const Ins *in = &e->fn->ins[i];

	out(e, "\n/* %%%s = %s", irname(e, in->to), opinfo[in->op].name);
	if (in->loc.file)
		out(e, " (%s:%d)", in->loc.file, in->loc.line);
	out(e, " */\n%s(" KNAME ")(%s int64_t T_", device ? "GNN_DKERNEL" : "GNN_HKERNEL", device ? "GNN_DRANGE" : "GNN_HRANGE");
	for (k = 0; k < a->n; k++)
		if (!litarg(e, a, k))
			out(e, ", %s", a->decl[k]);
	out(e, ")\n");
	blockopen(e->w);
	for (k = 0; k < a->n; k++)
		if (litarg(e, a, k))
			out(e, "const %s = %s;\n", a->decl[k], a->val[k]);
	wopen(e->w, "%s(t_, T_)", device ? "GNN_DLOOP" : "GNN_HLOOP");
}

static void
kerneltail(E *e)
{
	wclose(e->w, "");
	wclose(e->w, "");
}

/*
 * A dense transform [M, K] @ [K, P] (K, P constant) under a schedule:
 * each task computes tile rows, either one output column of them (B's
 * element loaded once for tile rows) or, with axpy, whole output rows (B
 * streamed by rows).  Every output sums over k in order, as the
 * reference kernel does.  The rows past M of the last task read row M-1
 * and store nothing.  Returns the task count.
 */
static const char *
emitdense(E *e, int i, int ki, Ref to, Ref bias, bool device, bool dev, Args *a)
{
	const Ins *in = &e->fn->ins[i];
	const char *ot = ctype(ty(e, in->to).dtype), *M, *O, *A, *B, *Aval, *BI = NULL;
	long long K = dimconstval(ty(e, in->arg[1]).dim[0]), P = dimconstval(ty(e, in->arg[1]).dim[1]);
	int tile = e->sched.tile;

	O = ptrarg(e, a, NULL, to, true, dev);
	A = ptrarg(e, a, NULL, in->arg[0], false, dev);
	Aval = a->val[a->n - 1];
	B = ptrarg(e, a, NULL, in->arg[1], false, dev);
	if (bias != RNone)
		BI = ptrarg(e, a, NULL, bias, false, dev);
	M = cdim(e, ty(e, in->arg[0]).dim[0]);
	arg(a, "int64_t M_", "%s", M);
	if (e->sched.gemm) {
		/* the runtime's blocked GEMM (cpu), on this thread's rows; A's
		 * zeros are skipped when a sample of its rows says that pays,
		 * which gives the same bits (gnnrt.h) */
		int R = e->sched.gemm;
		int adt = valstoredtype(e->fn, in->arg[0]), cdt = valstoredtype(e->fn, in->to);
		int bd = e->fn->val[in->arg[1]].def;
		if (BI && (adt != DNone || cdt != DNone || (bd >= 0 && rounddtype(&e->fn->ins[bd]) != DNone)))
			die("codegen: a GEMM's bias with 16-bit operands");   /* readfold's gemmbias refuses them */
		if (bd >= 0 && rounddtype(&e->fn->ins[bd]) == DBF16) {
			/* weights rounded to bfloat16 (passes/precision.c):
			 * bfloat16 products with float32 sums (gnn_bgemm); a float
			 * A is rounded to bfloat16 as the GEMM reads it */
			const char *ad = adt != DNone ? "GNN_BF16" : "GNN_F32", *cd = cdt != DNone ? "GNN_BF16" : "GNN_F32";

			if ((adt != DNone && adt != DBF16) || (cdt != DNone && cdt != DBF16))
				die("codegen: a bfloat16 weight with a %s operand", dtypename(adt != DNone && adt != DBF16 ? adt : cdt));
			/* a mostly-zero A (bag-of-words features): its zeros
			 * skipped, in the float path's order (gnn_bgemm_sparse) */
			arg(a, "int sp_", "gnn_hgemm_sparse_pays(%s, %s, %s, %lld, %lld)", Aval, ad, M, K, K);
			kernelhead(e, i, device, a);
			out(e, "const int64_t m0_ = t0_ * %d, m1_ = t1_ * %d < M_ ? t1_ * %d : M_;\n(void)t_;\n", R, R, R);
			out(e, "if (sp_)\n\tgnn_bgemm_sparse(m0_, m1_, %lld, %lld, %s, %s, %lld, %s, %lld, %s, %s, %lld);\n", K, P, A, ad, K,
			    B, P, O, cd, P);
			out(e, "else\n\tgnn_bgemm(m0_, m1_, %lld, %lld, %s, %s, %lld, %s, %lld, %s, %s, %lld);\n", K, P, A, ad, K, B, P, O,
			    cd, P);
			out(e, "break;   /* one call covers the range */\n");
			kerneltail(e);
			return pf(e, "((%s) + %d) / %d", M, R - 1, R);
		}
		if (adt != DNone || cdt != DNone) {
			/* 16-bit A or C: the runtime's conversions around the
			 * same float path (gnn_hgemm), so the bits are gnn_sgemm's
			 * on the 16-bit values */
			const char *ad = adt != DNone ? gnndtype(adt) : "GNN_F32", *cd = cdt != DNone ? gnndtype(cdt) : "GNN_F32";
			arg(a, "int sp_", "gnn_hgemm_sparse_pays(%s, %s, %s, %lld, %lld)", Aval, ad, M, K, K);
			kernelhead(e, i, device, a);
			out(e, "const int64_t m0_ = t0_ * %d, m1_ = t1_ * %d < M_ ? t1_ * %d : M_;\n(void)t_;\n", R, R, R);
			out(e, "gnn_hgemm(m0_, m1_, %lld, %lld, %s, %s, %lld, %s, %lld, %s, %s, %lld, %d, sp_);\n", K, P, A, ad, K, B, P,
			    O, cd, P, e->sched.kc);
			out(e, "break;   /* one call covers the range */\n");
			kerneltail(e);
			return pf(e, "((%s) + %d) / %d", M, R - 1, R);
		}
		arg(a, "int sp_", "gnn_sgemm_sparse_pays(%s, %s, %lld, %lld)", Aval, M, K, K);
		kernelhead(e, ki, device, a);
		out(e, "const int64_t m0_ = t0_ * %d, m1_ = t1_ * %d < M_ ? t1_ * %d : M_;\n(void)t_;\n", R, R, R);
		if (BI) {
			/* the GEMM readfold folded into its bias's add: the bias
			 * is added as blocks of rows finish (gnn_sgemm_bias) */
			out(e, "if (sp_)\n\tgnn_sgemm_sparse_bias(m0_, m1_, %lld, %lld, %s, %lld, %s, %lld, %s, %s, %lld, 0);\n", K, P, A, K,
			    B, P, BI, O, P);
			out(e, "else\n\tgnn_sgemm_bias(m0_, m1_, %lld, %lld, %s, %lld, %s, %lld, %s, %s, %lld, %d, 0);\n", K, P, A, K, B, P,
			    BI, O, P, e->sched.kc);
		} else {
			out(e, "if (sp_)\n\tgnn_sgemm_sparse(m0_, m1_, %lld, %lld, %s, %lld, %s, %lld, %s, %lld, 0);\n", K, P, A, K, B, P, O, P);
			out(e, "else\n\tgnn_sgemm(m0_, m1_, %lld, %lld, %s, %lld, %s, %lld, %s, %lld, %d, 0);\n", K, P, A, K, B, P, O, P,
			    e->sched.kc);
		}
		out(e, "break;   /* one call covers the range */\n");
		kerneltail(e);
		return pf(e, "((%s) + %d) / %d", M, R - 1, R);
	}
	kernelhead(e, ki, device, a);
	if (tile < 1)
		tile = 1;
	if (e->sched.axpy) {
		out(e, "const int64_t r0_ = t_ * %d;\n%s acc_[%d][%lld];\n", tile, ot, tile, P);
		axpybody(e, ot, tile, matmula(e, in, pf(e, "%s[(r0_ + i_ < M_ ? r0_ + i_ : M_ - 1) * %lld + k_]", A, K)), B, K, P,
		         "acc_[i_][p_]");
		out(e, "for (int i_ = 0; i_ < %d && r0_ + i_ < M_; i_++)\n\tfor (int64_t p_ = 0; p_ < %lld; p_++)\n\t\t%s[(r0_ + i_) * %lld + p_] = acc_[i_][p_]%s;\n",
		    tile, P, O, P, BI ? pf(e, " + %s[p_]", BI) : "");
		kerneltail(e);
		return pf(e, "((%s) + %d) / %d", M, tile - 1, tile);
	}
	out(e, "const int64_t K_ = %lld, P_ = %lld;\n", K, P);
	out(e, "const int64_t p_ = t_ %% P_, r0_ = (t_ / P_) * %d;\n%s acc_[%d];\n", tile, ot, tile);
	out(e, "for (int i_ = 0; i_ < %d; i_++)\n\tacc_[i_] = 0;\n", tile);
	out(e, "for (int64_t k_ = 0; k_ < K_; k_++) {\n\tconst %s b_ = %s[k_ * P_ + p_];\n", ot, B);
	out(e, "\tfor (int i_ = 0; i_ < %d; i_++)\n\t\tacc_[i_] += %s * b_;\n}\n", tile,
	    matmula(e, in, pf(e, "%s[(r0_ + i_ < M_ ? r0_ + i_ : M_ - 1) * K_ + k_]", A)));
	out(e, "for (int i_ = 0; i_ < %d && r0_ + i_ < M_; i_++)\n\t%s[(r0_ + i_) * P_ + p_] = acc_[i_]%s;\n", tile, O,
	    BI ? pf(e, " + %s[p_]", BI) : "");
	kerneltail(e);
	return pf(e, "((%s) + %d) / %d * %lld", M, tile - 1, tile, P);
}

/* A scatter whose index is computed in forward (cpu only): one pass in
 * message order, which is deterministic because it is sequential.  An
 * index out of range is skipped (the cuda target never gets here). */
static void
serialscatter(E *e, int i, bool dev, Args *a, Str *call)
{
	const Ins *in = &e->fn->ins[i];
	const char *T = ctype(ty(e, in->to).dtype), *O, *M, *I;
	Type mt = ty(e, in->arg[0]);
	Dim n;
	int k;

	attrdim(in, "n", &n);
	O = ptrarg(e, a, NULL, in->to, true, dev);
	M = ptrarg(e, a, NULL, in->arg[0], false, dev);
	I = ptrarg(e, a, NULL, in->arg[1], false, dev);
	arg(a, "int64_t row_", "%s", cprod(e, &mt, 1, mt.rank));
	arg(a, "int64_t n_", "%s", cdim(e, n));
	arg(a, "int64_t *cnt_", "(int64_t *)%s", segment(e, i, false));
	out(e, "\n/* %%%s = %s, in message order */\nGNN_HKERNEL(" KNAME ")(int64_t T_", irname(e, in->to), opinfo[in->op].name);
	for (k = 0; k < a->n; k++)
		out(e, ", %s", a->decl[k]);
	out(e, ")\n");
	blockopen(e->w);
	out(e, "for (int64_t k_ = 0; k_ < n_ * row_; k_++)\n\t%s[k_] = 0;\n", O);
	wopen(e->w, "for (int64_t k_ = 0; k_ < T_; k_++)");
	out(e, "const int64_t r_ = (int64_t)%s[k_];\n\nif (r_ < 0 || r_ >= n_)\n\tcontinue;\ncnt_[r_]++;\n", I);
	wopen(e->w, "for (int64_t j_ = 0; j_ < row_; j_++)");
	out(e, "const %s x_ = %s[k_ * row_ + j_];\n", T, M);
	scatterstep(e, in, "cnt_[r_] == 1", "x_", pf(e, "%s[r_ * row_ + j_]", O));
	wclose(e->w, "");
	wclose(e->w, "");
	if (in->op == Oscatter_mean) {
		wopen(e->w, "for (int64_t k_ = 0; k_ < n_ * row_; k_++)");
		scatterfinish(e, in, "cnt_[k_ / row_]", pf(e, "%s[k_]", O));
		wclose(e->w, "");
	}
	wclose(e->w, "");
	sput(call, "memset(%s, 0, %s);\n\tGNN_HPROF(%s, %s)\n\t\t" KNAME "(%s", segment(e, i, false), segbytes(e, i),
	     launchlit(e, KNAME), cnumel(e, in->arg[1]), cnumel(e, in->arg[1]));
	for (k = 0; k < a->n; k++)
		sput(call, ", %s", a->val[k]);
	sput(call, ");");
}

/*
 * Emit instruction i's kernel, named KNAME, and put into call the C
 * statement that runs it (host phase: a call; forward on cuda: a launch).
 */
static void
emitkernel(E *e, int i, Args *a, Str *call)
{
	const Ins *in = &e->fn->ins[i];
	Type o = ty(e, in->to), src[2];
	/* forward runs on the device; so does bind for cuda (program.c's
	 * devstep), on bind-time values that live there */
	int ph = e->p->phase[in->to];
	bool device = (ph == PhaseForward || ph == PhaseOnce || ph == PhaseBind) && e->cuda;
	bool dev = ph == PhaseForward || ph == PhaseOnce || device;   /* operands on the device side */
	const char *T = cnumel(e, in->to), *ot = ctype(o.kind == TTensor ? o.dtype : DF32), *O, *X, *Y;
	int k, r = o.rank, perm[MaxRank];
	unsigned fl = opinfo[in->op].flags;

	for (k = 0; k < in->narg && k < 2; k++)
		src[k] = ty(e, in->arg[k]);
	if (in->op == Oadd && !e->cuda && (k = viafold(e->fn, i)) >= 0)
		/* a Linear's bias, added by the GEMM readfold folded (gemmbias) */
		T = emitdense(e, k, i, in->to, in->arg[1], device, dev, a);
	else switch (in->op) {
	case Oconst:
		O = ptrarg(e, a, NULL, in->to, true, device);
		kernelhead(e, i, device, a);
		out(e, "%s[t_] = (%s)%.17g;\n", O, ot, attrfloat(in, "value", 0));
		kerneltail(e);
		break;
	case Ogather:
		O = ptrarg(e, a, NULL, in->to, true, dev);
		X = ptrarg(e, a, NULL, in->arg[0], false, dev);
		Y = ptrarg(e, a, NULL, in->arg[1], false, dev);
		arg(a, "int64_t row_", "%s", cprod(e, &src[0], 1, src[0].rank));
		kernelhead(e, i, device, a);
		if (!e->cuda && !stored16(e, in->arg[0]) && !stored16(e, in->to)) {
			/* a task per row: one index load, then a copy the
			 * compiler vectorizes, where a task per element divided
			 * and reloaded the index for each */
			out(e, "const %s *x0_ = %s + (int64_t)%s[t_] * row_;\n\n", ot, X, Y);
			out(e, "for (int64_t j_ = 0; j_ < row_; j_++)\n\t%s[t_ * row_ + j_] = x0_[j_];\n", O);
			kerneltail(e);
			T = cnumel(e, in->arg[1]);
			break;
		}
		out(e, "const int64_t r_ = t_ / row_, j_ = t_ %% row_;\n");
		out(e, "%s[t_] = %s[(int64_t)%s[r_] * row_ + j_];\n", O, X, Y);
		kerneltail(e);
		break;
	case Oscatter_sum:
	case Oscatter_mean:
	case Oscatter_max: {
		Dim n;
		int gi;
		const char *via;
		if (e->p->phase[in->arg[1]] != PhaseBind) {
			serialscatter(e, i, dev, a, call);
			return;
		}
		/* pull along the segment plan built at bind: one task per
		 * output element, a fixed order, no atomics */
		attrdim(in, "n", &n);
		gi = viafold(e->fn, i);
		O = ptrarg(e, a, NULL, in->to, true, dev);
		Y = NULL;
		via = NULL;   /* the column walk's message row through the gather */
		if (gi >= 0) {
			Ref ix = e->fn->ins[gi].arg[1];
			X = ptrarg(e, a, NULL, e->fn->ins[gi].arg[0], false, dev);
			if (!e->cuda && !stored16(e, in->arg[0]) && e->p->phase[ix] == PhaseBind) {
				/* the gather's index copied into the plan's order at
				 * bind (permseg): read at k_, in memory's order, not
				 * at order_[k_], one dependent load less a message */
				int ps = permseg(e, i, ix, 1, false);
				arg(a, pf(e, "const %s *restrict ixp_", memctype(e, ix)), "(const %s *)m->seg[%d]", memctype(e, ix), ps);
				via = "ixp_[k_]";
			} else {
				Y = ptrarg(e, a, NULL, ix, false, dev);
				via = pf(e, "%s[order_[k_]]", Y);
			}
		} else
			X = ptrarg(e, a, NULL, in->arg[0], false, dev);
		arg(a, "const int64_t *rowptr_", "(const int64_t *)%s", segment(e, i, dev));
		arg(a, "int64_t n_", "%s", cdim(e, n));
		arg(a, "int64_t row_", "%s", cprod(e, &src[0], 1, src[0].rank));
		kernelhead(e, i, device, a);
		out(e, "const int64_t *order_ = rowptr_ + n_ + 1;\n");
		if (!e->cuda && !stored16(e, in->arg[0])) {
			segscatterbody(e, in, ot, X, O, via);
			kerneltail(e);
			T = pf(e, "%s * ((%s + %d) / %d)", cdim(e, n), cprod(e, &src[0], 1, src[0].rank), RB - 1, RB);
			break;
		}
		out(e, "const int64_t r_ = t_ / row_, j_ = t_ %% row_;\n%s acc_ = 0;\n", ot);
		wopen(e->w, "for (int64_t k_ = rowptr_[r_]; k_ < rowptr_[r_ + 1]; k_++)");
		if (gi >= 0)
			out(e, "const %s x_ = %s[(int64_t)%s[order_[k_]] * row_ + j_];\n", ot, X, Y);
		else
			out(e, "const %s x_ = %s[order_[k_] * row_ + j_];\n", ot, X);
		scatterstep(e, in, "k_ == rowptr_[r_]", "x_", "acc_");
		wclose(e->w, "");
		scatterfinish(e, in, "rowptr_[r_ + 1] - rowptr_[r_]", "acc_");
		out(e, "%s[t_] = acc_;\n", O);
		kerneltail(e);
		break;
	}
	case Oedge_softmax: {
		const char *row = cprod(e, &src[1], 1, src[1].rank), *rd;
		int j;
		O = ptrarg(e, a, NULL, in->to, true, dev);
		X = ptrarg(e, a, NULL, in->arg[1], false, dev);
		arg(a, "const int64_t *rowptr_", "(const int64_t *)%s", segment(e, i, dev));
		arg(a, "int64_t n_", "%s", cdim(e, ty(e, in->arg[0]).dim[0]));
		arg(a, "int64_t row_", "%s", row);
		kernelhead(e, i, device, a);
		out(e, "const int64_t *order_ = rowptr_ + n_ + 1;\n");
		if (!e->cuda && !stored16(e, in->arg[1]) && !stored16(e, in->to)) {
			bool ok = true;
			Dim rw = dimprod(e->fn->mod, src[1].dim + 1, src[1].rank - 1, &ok);
			int w = ok && dimisconst(rw) && dimconstval(rw) >= 1 && dimconstval(rw) < RB ? (int)dimconstval(rw) : RB;

			edgesoftmaxbody(e, o.dtype, ot, X, O, w);
			kerneltail(e);
			T = pf(e, "%s * ((%s + %d) / %d)", cdim(e, ty(e, in->arg[0]).dim[0]), row, w - 1, w);
			break;
		}
		out(e, "const int64_t r_ = t_ / row_, j_ = t_ %% row_;\n%s mx_ = 0, sum_ = 0;\n", ot);
		rd = pf(e, "%s[order_[k_] * row_ + j_]", X);
		for (j = 0; j < 3; j++) {
			wopen(e->w, "for (int64_t k_ = rowptr_[r_]; k_ < rowptr_[r_ + 1]; k_++)");
			out(e, "const %s s_ = %s;\n", ot, rd);
			if (j == 0)
				esmaxstep(e, "k_ == rowptr_[r_]", "s_", "mx_");
			else if (j == 1)
				essumstep(e, o.dtype, "s_", "mx_", "sum_");
			else
				out(e, "%s[order_[k_] * row_ + j_] = %s;\n", O, esweight(e, o.dtype, "s_", "mx_", "sum_"));
			wclose(e->w, "");
		}
		kerneltail(e);
		T = pf(e, "%s * %s", cdim(e, ty(e, in->arg[0]).dim[0]), row);
		break;
	}
	case Omatmul: {
		int ti = viafold(e->fn, i);   /* a weight gradient reading dY through its transpose */

		if (epilogueend(e->fn, i) >= 0 && !e->sched.vendor && !e->sched.sparse) {
			/* a GEMM's epilogue group has no untiled form (IR text may
			 * give it no schedule: the reference's) */
			if (!e->sched.bm)
				gemmreference(dimconstval(src[1].dim[1]), &e->sched);
			emitgemmcuda(e, i, a, call);
			return;
		}
		if (ti < 0 && e->sched.vendor) {
			emitvendorgemm(e, i, a, call);
			return;
		}
		if (ti < 0 && e->sched.bm) {
			emitgemmcuda(e, i, a, call);
			return;
		}
		if (ti < 0 && e->sched.sparse) {
			emitspgemmcuda(e, i, a, call);
			return;
		}
		if (ti < 0 && (e->sched.tile > 1 || e->sched.axpy || e->sched.gemm)) {
			T = emitdense(e, i, i, in->to, RNone, device, dev, a);
			break;
		}
		if (ti >= 0 || (!e->cuda && src[0].rank == 2 && src[1].rank == 2 && dimisconst(src[0].dim[0]) &&
		    dimisconst(src[1].dim[1]) && !dimisconst(src[0].dim[1]) && dimconstval(src[0].dim[0]) >= 1 &&
		    dimconstval(src[0].dim[0]) * (int64_t)dtypesize(o.dtype) <= 1 << 18)) {
			/* [M, K] @ [K, P] reducing over a size (K = N: a weight's
			 * gradient, g^T x): a task per tile of PT columns walks b's
			 * rows once, adding a's column times each element of the
			 * row's tile into the result's M rows (kept transposed, M
			 * contiguous, at most 256 KiB).  b's zeros are skipped, which
			 * leaves every sum bit for bit as it was when a is finite
			 * (bag-of-words features are 99% zeros); each element sums
			 * over k in order, as the dot does, whatever the tiling */
			long long Mc = dimconstval(src[0].dim[0]), Pc = dimconstval(src[1].dim[1]);
			long long PT = (1 << 18) / (Mc * (long long)dtypesize(o.dtype));
			Ref xs = ti >= 0 ? e->fn->ins[ti].arg[0] : in->arg[0];   /* [K, M] when readfold folded the transpose */
			if (o.dtype == DF32 && !stored16(e, xs) && !stored16(e, in->arg[1]) && !stored16(e, in->to)) {
				/* float: the runtime's gnn_sgemm_wgrad, the same
				 * chains (skipping b's zeros where a sample of its
				 * rows says that pays, else the blocked GEMM), on
				 * column ranges of 16s, eight tasks or more when the
				 * result is wide enough for two threads to share */
				PT = ((Pc + 7) / 8 + 15) / 16 * 16;
				O = ptrarg(e, a, NULL, in->to, true, dev);
				X = ptrarg(e, a, NULL, xs, false, dev);
				Y = ptrarg(e, a, NULL, in->arg[1], false, dev);
				arg(a, "int64_t K_", "%s", cdim(e, src[0].dim[1]));
				arg(a, "int sp_", "gnn_sgemm_sparse_pays(%s, %s, %lld, %lld)", a->val[a->n - 2],
				    cdim(e, src[0].dim[1]), Pc, Pc);
				kernelhead(e, i, device, a);
				/* a thread's tasks as one call: the GEMM then sweeps
				 * all its columns per tile of a's rows, which it keeps
				 * in L1, where a call per task reread all of a (the
				 * node count's length) per 16 or 64 columns: 1.3-1.6x
				 * faster on PubMed's 128 x 19717 by 500 and by 128 */
				out(e, "const int64_t p0_ = t0_ * %lld, p1_ = t1_ * %lld < %lld ? t1_ * %lld : %lld;\n\n", PT, PT,
				    Pc, PT, Pc);
				if (ti >= 0)   /* dY as it is, [K, M] (readfold) */
					out(e, "(void)t_;\ngnn_sgemm_wgradt(p0_, p1_, %lld, K_, %s, %lld, %s, %lld, %s, %lld, sp_);\n", Mc, X, Mc, Y, Pc, O, Pc);
				else
					out(e, "(void)t_;\ngnn_sgemm_wgrad(p0_, p1_, %lld, K_, %s, K_, %s, %lld, %s, %lld, sp_);\n", Mc, X, Y, Pc, O, Pc);
				out(e, "break;   /* one call covers the range */\n");
				kerneltail(e);
				T = pf(e, "(int64_t)%lld", (Pc + PT - 1) / PT);
				break;
			}
			if (PT > Pc)
				PT = Pc;
			/* element by element (16-bit operands: halfaccess converts
			 * each access), a's rows through the folded transpose */
			O = ptrarg(e, a, NULL, in->to, true, dev);
			X = ptrarg(e, a, NULL, xs, false, dev);
			Y = ptrarg(e, a, NULL, in->arg[1], false, dev);
			arg(a, "int64_t K_", "%s", cdim(e, src[0].dim[1]));
			kernelhead(e, i, device, a);
			out(e, "%s acc_[%lld][%lld], a_[%lld];\n", ot, PT, Mc, Mc);
			out(e, "const int64_t q0_ = t_ * %lld, nq_ = %lld - q0_ < %lld ? %lld - q0_ : %lld;\n", PT, Pc, PT, Pc, PT);
			out(e, "for (int64_t q_ = 0; q_ < nq_; q_++)\n\tfor (int64_t m_ = 0; m_ < %lld; m_++)\n\t\tacc_[q_][m_] = 0;\n", Mc);
			out(e, "for (int64_t k_ = 0; k_ < K_; k_++) {\n\tconst int64_t b_ = k_ * %lld + q0_;\n", Pc);
			out(e, "\tint any_ = 0;\n\tfor (int64_t q_ = 0; q_ < nq_; q_++)\n\t\tany_ |= %s[b_ + q_] != 0;\n\tif (!any_)\n\t\tcontinue;\n", Y);
			out(e, "\tfor (int64_t m_ = 0; m_ < %lld; m_++)\n\t\ta_[m_] = %s;\n", Mc,
			    ti >= 0 ? pf(e, "%s[k_ * %lld + m_]", X, Mc) : pf(e, "%s[m_ * K_ + k_]", X));
			out(e, "\tfor (int64_t q_ = 0; q_ < nq_; q_++) {\n\t\tconst %s b1_ = %s[b_ + q_];\n\t\tif (b1_ == 0)\n\t\t\tcontinue;\n", ot, Y);
			out(e, "\t\tfor (int64_t m_ = 0; m_ < %lld; m_++)\n\t\t\tacc_[q_][m_] += a_[m_] * b1_;\n\t}\n}\n", Mc);
			out(e, "for (int64_t m_ = 0; m_ < %lld; m_++)\n\tfor (int64_t q_ = 0; q_ < nq_; q_++)\n\t\t%s[m_ * %lld + q0_ + q_] = acc_[q_][m_];\n", Mc, O, Pc);
			kerneltail(e);
			T = pf(e, "(int64_t)%lld", (Pc + PT - 1) / PT);
			break;
		}
		/* a as [batch.., M, K], b as [batch.., K, P]; vectors as 1-row
		 * or 1-column matrices, which keeps the offsets uniform */
		Type ab = src[0], bb = src[1], ob = o;
		Dim one = 1;
		ab.rank = src[0].rank > 2 ? src[0].rank - 2 : 0;
		bb.rank = src[1].rank > 2 ? src[1].rank - 2 : 0;
		ob.rank = ab.rank > bb.rank ? ab.rank : bb.rank;
		O = ptrarg(e, a, NULL, in->to, true, dev);
		X = ptrarg(e, a, NULL, in->arg[0], false, dev);
		Y = ptrarg(e, a, NULL, in->arg[1], false, dev);
		arg(a, "int64_t M_", "%s", src[0].rank >= 2 ? cdim(e, src[0].dim[src[0].rank - 2]) : cdim(e, one));
		arg(a, "int64_t K_", "%s", cdim(e, src[0].dim[src[0].rank - 1]));
		arg(a, "int64_t P_", "%s", src[1].rank >= 2 ? cdim(e, src[1].dim[src[1].rank - 1]) : cdim(e, one));
		{
			Type bs[2] = {ab, bb};
			stridedsrc(e, a, &ob, 2, bs, NULL);
		}
		kernelhead(e, i, device, a);
		out(e, "const int64_t p_ = t_ %% P_, m_ = (t_ / P_) %% M_;\n");
		stridedbody(e, ob.rank, 2, "t_ / (P_ * M_)");
		/* element accesses, not row pointers: a 16-bit operand is read
		 * through its conversion (halfaccess) */
		dotbody(e, ot, "acc_", matmula(e, in, pf(e, "%s[i0_ * M_ * K_ + m_ * K_ + k_]", X)), pf(e, "%s[i1_ * K_ * P_ + p_ + k_ * P_]", Y), "K_");
		out(e, "%s[t_] = acc_;\n", O);
		kerneltail(e);
		break;
	}
	case Otranspose: {
		const Attr *pa = findattr(in, "perm");
		for (k = 0; k < r; k++)
			perm[k] = (int)pa->u.is[k];
		O = ptrarg(e, a, NULL, in->to, true, dev);
		X = ptrarg(e, a, NULL, in->arg[0], false, dev);
		if (!e->cuda && r == 2 && perm[0] == 1) {
			/* a matrix (a weight gradient's g^T): a task per 32 x 32
			 * tile, reading the source's rows as they lie, where a task
			 * per element missed the cache on every read of a tall one */
			arg(a, "int64_t d0_", "%s", cdim(e, o.dim[0]));
			arg(a, "int64_t d1_", "%s", cdim(e, o.dim[1]));
			kernelhead(e, i, device, a);
			out(e, "const int64_t nc_ = (d1_ + 31) / 32, r0_ = t_ / nc_ * 32, c0_ = t_ %% nc_ * 32;\n");
			out(e, "const int64_t r1_ = d0_ - r0_ < 32 ? d0_ : r0_ + 32, c1_ = d1_ - c0_ < 32 ? d1_ : c0_ + 32;\n\n");
			out(e, "for (int64_t c_ = c0_; c_ < c1_; c_++)\n\tfor (int64_t r_ = r0_; r_ < r1_; r_++)\n");
			out(e, "\t\t%s[r_ * d1_ + c_] = %s[c_ * d0_ + r_];\n", O, X);
			kerneltail(e);
			T = pf(e, "((%s) + 31) / 32 * (((%s) + 31) / 32)", cdim(e, o.dim[0]), cdim(e, o.dim[1]));
			break;
		}
		stridedsrc(e, a, &o, 1, src, perm);
		kernelhead(e, i, device, a);
		stridedbody(e, r, 1, "t_");
		out(e, "%s[t_] = %s[i0_];\n", O, X);
		kerneltail(e);
		break;
	}
	case Oconcat: {
		int64_t d = attrint(in, "dim", 0);
		const char **xs = emalloc((in->narg + 1) * sizeof *xs);
		O = ptrarg(e, a, NULL, in->to, true, dev);
		for (k = 0; k < in->narg; k++) {
			Type t = ty(e, in->arg[k]);
			xs[k] = ptrarg(e, a, NULL, in->arg[k], false, dev);
			arg(a, pf(e, "int64_t n%d_", k), "%s", cdim(e, t.dim[d]));
		}
		arg(a, "int64_t D_", "%s", cdim(e, o.dim[d]));
		arg(a, "int64_t inner_", "%s", cprod(e, &o, d + 1, r));
		kernelhead(e, i, device, a);
		out(e, "const int64_t i_ = t_ %% inner_, o_ = t_ / (inner_ * D_);\nint64_t c_ = (t_ / inner_) %% D_;\n\n");
		/* one chain: each step takes the inputs before it off c_ */
		for (k = 0; k < in->narg; k++) {
			if (k == 0)
				out(e, "if (c_ < n0_)\n");
			else
				out(e, "else if ((c_ -= n%d_) < n%d_)\n", k - 1, k);
			out(e, "\t%s[t_] = %s[%s];\n", O, xs[k], concatsrc(e, pf(e, "n%d_", k), "inner_"));
		}
		free(xs);
		kerneltail(e);
		break;
	}
	case Oslice: {
		/* concat's addressing, one source: row c_ of the cut is row
		 * start + c_ of x along dim */
		int64_t d = attrint(in, "dim", 0);
		Dim start = 0;
		attrdim(in, "start", &start);
		O = ptrarg(e, a, NULL, in->to, true, dev);
		X = ptrarg(e, a, NULL, in->arg[0], false, dev);
		arg(a, "int64_t n_", "%s", cdim(e, src[0].dim[d]));
		arg(a, "int64_t start_", "%s", cdim(e, start));
		arg(a, "int64_t D_", "%s", cdim(e, o.dim[d]));
		arg(a, "int64_t inner_", "%s", cprod(e, &o, d + 1, r));
		kernelhead(e, i, device, a);
		out(e, "const int64_t i_ = t_ %% inner_, o_ = t_ / (inner_ * D_), c_ = (t_ / inner_) %% D_;\n\n");
		out(e, "%s[t_] = %s[(o_ * n_ + start_ + c_) * inner_ + i_];\n", O, X);
		kerneltail(e);
		break;
	}
	case Otake:
		/* an index outside [0, C) gives NaN, never a read out of x */
		O = ptrarg(e, a, NULL, in->to, true, dev);
		X = ptrarg(e, a, NULL, in->arg[0], false, dev);
		Y = ptrarg(e, a, NULL, in->arg[1], false, dev);
		arg(a, "int64_t C_", "%s", cdim(e, src[0].dim[1]));
		kernelhead(e, i, device, a);
		out(e, "const int64_t c_ = (int64_t)%s[t_];\n\n", Y);
		out(e, "%s[t_] = c_ >= 0 && c_ < C_ ? %s[t_ * C_ + c_] : (%s)NAN;\n", O, X, ot);
		kerneltail(e);
		break;
	case Oput:
		/* one task per output element: no zeroing pass, no scatter; a
		 * row whose index is outside [0, n) stays zero */
		O = ptrarg(e, a, NULL, in->to, true, dev);
		X = ptrarg(e, a, NULL, in->arg[0], false, dev);
		Y = ptrarg(e, a, NULL, in->arg[1], false, dev);
		arg(a, "int64_t n_", "%s", cdim(e, o.dim[1]));
		kernelhead(e, i, device, a);
		out(e, "const int64_t r_ = t_ / n_, j_ = t_ %% n_;\n\n");
		out(e, "%s[t_] = (int64_t)%s[r_] == j_ ? %s[r_] : (%s)0;\n", O, Y, X, ot);
		kerneltail(e);
		break;
	case Odropout_train: {
		/* runtime/philox.h's mask, as the interpreter draws it, from the
		 * key in the operand's memory (the device's for cuda); the
		 * scale is 1 / (1 - p) rounded once to the dtype */
		double p = attrfloat(in, "p", 0);
		O = ptrarg(e, a, NULL, in->to, true, dev);
		X = ptrarg(e, a, NULL, in->arg[0], false, dev);
		Y = ptrarg(e, a, NULL, in->arg[1], false, dev);
		if (!e->cuda && o.dtype == DF32) {
			/* the runtime's vectorized draw (dropout.c, the same
			 * bits), a task per DROPCHUNK elements.  16-bit words (or
			 * an output rounded in float32) go through float buffers
			 * of a chunk, converted as they are read and rounded as
			 * they are stored (halfaccess), where a scalar draw per
			 * element took most of a bf16 training step */
			bool x16 = stored16(e, in->arg[0]);
			bool o16 = stored16(e, in->to) || rounddtype(in) != DNone;

			arg(a, "int64_t n_", "%s", T);
			kernelhead(e, i, device, a);
			out(e, "const int64_t e0_ = t_ * %d, e1_ = n_ - e0_ < %d ? n_ : e0_ + %d;\n", DROPCHUNK, DROPCHUNK,
			    DROPCHUNK);
			if (x16)
				out(e, "float xs_[%d];\n", DROPCHUNK);
			if (o16)
				out(e, "float os_[%d];\n", DROPCHUNK);
			out(e, "\n");
			if (x16)
				out(e, "for (int64_t u_ = e0_; u_ < e1_; u_++)\n\txs_[u_ - e0_] = %s[u_];\n", X);
			/* gnn_dropout_span's pointers are at the chunk's first element */
			out(e, "%s(e0_, e1_, (uint64_t)%s[0], (uint64_t)%s[1], %lldu, (float)%.17g, (float)%.17g, %s, %s);\n",
			    x16 || o16 ? "gnn_dropout_span" : "gnn_dropout_rows", Y, Y, (long long)attrint(in, "stream", 0),
			    (double)(float)p, 1 / (1 - p), x16 ? "xs_" : o16 ? pf(e, "%s + e0_", X) : X,
			    o16 ? "os_" : x16 ? pf(e, "%s + e0_", O) : O);
			if (o16)
				out(e, "for (int64_t u_ = e0_; u_ < e1_; u_++)\n\t%s[u_] = os_[u_ - e0_];\n", O);
			kerneltail(e);
			T = pf(e, "((%s) + %d) / %d", T, DROPCHUNK - 1, DROPCHUNK);
			break;
		}
		kernelhead(e, i, device, a);
		out(e, "const uint64_t seed_ = (uint64_t)%s[0], step_ = (uint64_t)%s[1];\n\n", Y, Y);
		out(e, "%s[t_] = gnn_dropout_keep(seed_, step_, %lldu, (uint64_t)t_, (float)%.17g) ? %s[t_] * (%s)%.17g : (%s)0;\n", O,
		    (long long)attrint(in, "stream", 0), (double)(float)p, X, ot, 1 / (1 - p), ot);
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
		int pi = e->cuda ? -1 : viafold(e->fn, i);   /* a column sum of a product (readfold) */

		O = ptrarg(e, a, NULL, in->to, true, dev);
		Y = NULL;
		if (pi >= 0) {
			X = ptrarg(e, a, NULL, e->fn->ins[pi].arg[0], false, dev);
			if (e->fn->ins[pi].op == Omul)
				Y = ptrarg(e, a, NULL, e->fn->ins[pi].arg[1], false, dev);
		} else
			X = ptrarg(e, a, NULL, in->arg[0], false, dev);
		arg(a, "int64_t D_", "%s", cdim(e, src[0].dim[d]));
		arg(a, "int64_t inner_", "%s", cprod(e, &src[0], d + 1, src[0].rank));
		if (!e->cuda && d + 1 < src[0].rank && (in->op == Osum || in->op == Omean || in->op == Omax) &&
		    !stored16(e, in->arg[0]) && !stored16(e, in->to)) {
			/* a sum over rows (a bias's gradient, batch norm's
			 * statistics): a task per RB columns walks the rows in
			 * order, so memory is read as it lies, where a task per
			 * column strode a row's length per element (a cache miss
			 * each on PubMed's [N, 128]); each column is the same
			 * chain over k as before, so the bits are too */
			kernelhead(e, i, device, a);
			colreducebody(e, in, src[0].dtype, X, Y, pi >= 0 && e->fn->ins[pi].op == Oneg, O);
			kerneltail(e);
			T = pf(e, "%s * ((%s + %d) / %d)", cprod(e, &src[0], 0, d), cprod(e, &src[0], d + 1, src[0].rank),
			       RB - 1, RB);
			break;
		}
		if (pi >= 0)
			die("a sum read through a product outside the column walk");
		kernelhead(e, i, device, a);
		out(e, "const int64_t i_ = t_ %% inner_, o_ = t_ / inner_;\n");
		reducebody(e, in, src[0].dtype, pf(e, "%s[o_ * D_ * inner_ + i_ + k_ * inner_]", X), "D_", pf(e, "%s[t_]", O), pf(e, "%s[o_ * D_ * inner_ + i_ + k_ * inner_]", O));
		kerneltail(e);
		T = pf(e, "%s * %s", cprod(e, &src[0], 0, d), cprod(e, &src[0], d + 1, src[0].rank));
		break;
	}
	default:
		if (fl & Fbin) {
			O = ptrarg(e, a, NULL, in->to, true, dev);
			X = ptrarg(e, a, NULL, in->arg[0], false, dev);
			Y = ptrarg(e, a, NULL, in->arg[1], false, dev);
			int fx, fy, sx = 0, sy = 0;
			if ((fx = plainform(&o, &src[0], &sx)) && (fy = plainform(&o, &src[1], &sy))) {
				const char *w, *rows = rowform(e, &o, fx, sx, fy, sy, &w);
				if (rows) {
					/* a task per row of a constant width: a loop
					 * the compiler vectorizes, where t_ % inner
					 * per element (a bias) kept it scalar */
					kernelhead(e, i, device, a);
					wopen(e->w, "for (int64_t j_ = 0; j_ < %s; j_++)", w);
					out(e, "const int64_t u_ = t_ * %s + j_;\n", w);
					elembody(e, in, pf(e, "%s[%s]", X, rowindex(fx)), pf(e, "%s[%s]", Y, rowindex(fy)),
						 pf(e, "%s[u_]", O));
					wclose(e->w, "");
					kerneltail(e);
					T = rows;
					break;
				}
				/* no division per dim (most of a strided
				 * kernel's time) */
				const char *ix = plainindex(e, a, &o, fx, sx, 0), *iy = plainindex(e, a, &o, fy, sy, 1);
				kernelhead(e, i, device, a);
				elembody(e, in, pf(e, "%s[%s]", X, ix), pf(e, "%s[%s]", Y, iy), pf(e, "%s[t_]", O));
				kerneltail(e);
				break;
			}
			stridedsrc(e, a, &o, 2, src, NULL);
			kernelhead(e, i, device, a);
			stridedbody(e, r, 2, "t_");
			elembody(e, in, pf(e, "%s[i0_]", X), pf(e, "%s[i1_]", Y), pf(e, "%s[t_]", O));
			kerneltail(e);
			break;
		}
		if (fl & Felem) {
			O = ptrarg(e, a, NULL, in->to, true, dev);
			X = ptrarg(e, a, NULL, in->arg[0], false, dev);
			kernelhead(e, i, device, a);
			elembody(e, in, pf(e, "%s[t_]", X), NULL, pf(e, "%s[t_]", O));
			kerneltail(e);
			break;
		}
		die("codegen: no kernel for %s", opinfo[in->op].name);
	}
	sput(call, "%s(" KNAME ", %s, %s", device ? "GNN_DLAUNCH" : "GNN_HLAUNCH", launchlit(e, KNAME), T);
	for (k = 0; k < a->n; k++)
		if (!litarg(e, a, k))
			sput(call, ", %s", a->val[k]);
	sput(call, ");");
}

static bool
isaliasins(const Ins *in)
{
	return opinfo[in->op].flags & Falias;
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

/* ---- identical kernels once */

typedef struct Kset {
	int n, cap;
	char **key, **name;
} Kset;

static bool
inlist(const char *const *l, int n, const char *s, size_t len)
{
	int k;

	for (k = 0; k < n; k++)
		if (strlen(l[k]) == len && !strncmp(l[k], s, len))
			return true;
	return false;
}

/* the text with every name taken from an IR value replaced by its order
 * of appearance: equal keys are the same kernel up to those names */
static char *
canonical(const char *s, const Args *a)
{
	Str b = {0};
	const char **seen = NULL;   /* into s, with their lengths */
	size_t *seenlen = NULL;
	int nseen = 0, cap = 0, cap2 = 0, k;
	size_t len;

	while (*s) {
		if (!((*s >= 'a' && *s <= 'z') || (*s >= 'A' && *s <= 'Z') || *s == '_')) {
			if (*s >= '0' && *s <= '9')   /* a number (or a suffix of one) */
				for (; (*s >= '0' && *s <= '9') || (*s >= 'a' && *s <= 'z') || (*s >= 'A' && *s <= 'Z') || *s == '_' || *s == '.'; s++)
					sput(&b, "%c", *s);
			else
				sput(&b, "%c", *s++);
			continue;
		}
		for (len = 0; (s[len] >= 'a' && s[len] <= 'z') || (s[len] >= 'A' && s[len] <= 'Z') || (s[len] >= '0' && s[len] <= '9') || s[len] == '_'; len++)
			;
		if (inlist(a->name, a->nname, s, len)) {
			for (k = 0; k < nseen; k++)
				if (seenlen[k] == len && !strncmp(seen[k], s, len))
					break;
			if (k == nseen) {
				grow(&seen, &cap, nseen);
				if (nseen >= cap2)
					seenlen = erealloc(seenlen, (cap2 = cap) * sizeof *seenlen);
				seenlen[nseen] = len;
				seen[nseen++] = s;
			}
			sput(&b, "@%d", k);
		} else
			sput(&b, "%.*s", (int)len, s);
		s += len;
	}
	free(seen);
	free(seenlen);
	return b.s ? b.s : estrdup("");
}

static char *
replace(const char *s, const char *what, const char *with)
{
	Str b = {0};
	const char *p;

	while ((p = strstr(s, what))) {
		sput(&b, "%.*s%s", (int)(p - s), s, with);
		s = p + strlen(what);
	}
	sput(&b, "%s", s);
	return b.s;
}

const char *
launchlit(E *e, const char *k)
{
	char text[128];   /* schedprint's fixed fields */
	char *label = replace(k, KNAME, KLABEL);
	const char *lit;

	schedprint(text, sizeof text, &e->sched);
	lit = pf(e, "\"%s\", \"%s\"", label, text);
	free(label);
	return lit;
}

/*
 * Kernel i (or fusion group grp >= 0) under e->sched, called name unless
 * an identical kernel was written before: its text to e->w, and the
 * statement that runs it (heap).
 */
static char *
kernel(E *e, Kset *ks, int i, int grp, const char *name)
{
	W kw = {.bol = true}, *w = e->w;
	Args a = {0};
	Str call = {0};
	const char *text, *head;
	char *key, *c, *shared;
	int k;

	e->w = &kw;
	if (grp >= 0 && epilogueend(e->fn, i) < 0)
		emitrowkernel(e, grp, &a, &call);
	else
		emitkernel(e, i, &a, &call);
	e->w = w;
	if (a.nhalf) {
		char *t = halfaccess(sstr(&kw.s), kw.s.len, &a);
		sfree(&kw.s);
		kw.s.s = t;
		kw.s.len = kw.s.cap = strlen(t);
	}
	text = sstr(&kw.s);
	head = strstr(text, "\nGNN_");   /* the comment before it names the op */
	head = head ? head + 1 : text;
	key = canonical(head, &a);
	for (k = 0; k < ks->n; k++)
		if (!strcmp(ks->key[k], key))
			break;
	if (k < ks->n) {
		out(e, "%.*s/* as %s */\n", (int)(head - text), text, ks->name[k]);
		free(key);
	} else {
		char *t = replace(text, KNAME, name);
		if (ks->n == ks->cap) {
			ks->cap = ks->cap ? 2 * ks->cap : 16;
			ks->key = erealloc(ks->key, ks->cap * sizeof *ks->key);
			ks->name = erealloc(ks->name, ks->cap * sizeof *ks->name);
		}
		ks->key[ks->n] = key;
		ks->name[ks->n++] = estrdup(name);
		out(e, "%s", t);
		free(t);
	}
	shared = replace(sstr(&call), KNAME, ks->name[k]);
	c = replace(shared, KLABEL, name);
	free(shared);
	sfree(&call);
	sfree(&kw.s);
	argsfree(&a);
	return c;
}

/* A tuning build's kernel: every candidate, and a switch that runs the
 * selected one. */
static char *
candidates(E *e, Kset *ks, int i, int kk)
{
	const TuneCands *tc = e->tc;
	int c, grp = (int)attrint(&e->fn->ins[i], "group", -1);
	Str sw = {0};
	char *call;

	sput(&sw, "switch (%s) {\n", tunesel(e, kk));
	for (c = 0; c < tc->ncand[kk]; c++) {
		e->sched = tc->cand[kk][c];
		e->sfx = pf(e, "_s%d", c);
		call = kernel(e, ks, i, grp, grp >= 0 ? pf(e, "%s_g%d%s", e->nm, grp, e->sfx) : pf(e, "%s_k%d%s", e->nm, i, e->sfx));
		sput(&sw, "\tcase %d:\n\t\t%s\n\t\tbreak;\n", c, call);
		free(call);
	}
	e->sfx = "";
	sput(&sw, "\tdefault:\n\t\tbreak;\n\t}");
	return sw.s;
}

void
emitkernels(E *e)
{
	Kset ks = {0};
	int i, k, *kern, last = -1, lastonce = -1, grp;

	/* kernels in forward's order, as memory planning and the report
	 * count them: a fusion group is one row kernel, run where it starts */
	kern = emalloc((e->fn->nins + 1) * sizeof *kern);
	forwardkernels(e->fn, e->p->phase, kern);
	e->calls = emalloc((e->fn->nins + 1) * sizeof *e->calls);
	for (i = 0; i <= e->fn->nins; i++)
		e->calls[i] = NULL;
	if (e->tc)
		e->kstart = emalloc((e->tc->nkernels + 1) * sizeof *e->kstart);
	for (i = 0; i < e->fn->nins; i++) {
		bool first = kern[i] >= 0 && kern[i] != last;
		grp = (int)attrint(&e->fn->ins[i], "group", -1);
		if (e->p->phase[e->fn->ins[i].to] == PhaseOnce && grp >= 0) {
			/* a training step's once-time group (invariant.c): one row
			 * kernel too, run where it starts, before forward's */
			if (grp != lastonce) {
				schedof(&e->fn->ins[i], &e->sched);
				e->calls[i] = kernel(e, &ks, i, grp, pf(e, "%s_g%d", e->nm, grp));
			}
			lastonce = grp;
			continue;
		}
		lastonce = -1;
		if (first)
			schedof(&e->fn->ins[i], &e->sched);
		else
			scheddefault(&e->sched);
		if (e->tc && first) {
			if (kern[i] >= e->tc->nkernels)
				die("codegen: a tuning build with %d kernels, forward has more", e->tc->nkernels);
			e->kstart[kern[i]] = i;
			e->calls[i] = candidates(e, &ks, i, kern[i]);
		} else if (first && grp >= 0)
			e->calls[i] = kernel(e, &ks, i, grp, pf(e, "%s_g%d", e->nm, grp));
		else if (kern[i] < 0 ? needskernel(e, &e->fn->ins[i]) && !folded(e->fn, i) : first)
			e->calls[i] = kernel(e, &ks, i, -1, pf(e, "%s_k%d", e->nm, i));
		if (kern[i] >= 0)
			last = kern[i];
	}
	for (k = 0; k < ks.n; k++) {
		free(ks.key[k]);
		free(ks.name[k]);
	}
	free(ks.key);
	free(ks.name);
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
