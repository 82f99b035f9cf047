/*
 * The primitives of the language and how each lowers to IR.
 *
 * A table gives each primitive its formal argument names (the first
 * `nreq` required) and its lowering kind; bindargs() matches a call's
 * positional and keyword arguments against those names, the same way for
 * primitives and layer forwards.  Compile-time helpers (range, len,
 * assert) live here too.  Negative dims are normalized here, so the IR
 * only ever holds dims in [0, rank).
 */
#include <math.h>
#include <string.h>

#include "sema.h"

enum BKind {
	KUnary, KLeaky, KElu, KDropout, KBinary,
	KGraph, KAddRemaining, KEdgeSoftmax,
	KGather, KScatter, KReduce, KSize, KNorm, KL2,
	KTranspose, KReshape, KConcat, KCast,
	KUpdate, KLoss,
	KRange, KLen, KAssert,
	KTypes, KKeys,
};

typedef struct Builtin {
	const char *name;
	int kind;
	int op;
	int nreq;
	const char *formals[4];
} Builtin;

static const Builtin builtins[] = {
	{"relu", KUnary, Orelu, 1, {"x"}},
	{"sigmoid", KUnary, Osigmoid, 1, {"x"}},
	{"tanh", KUnary, Otanh, 1, {"x"}},
	{"exp", KUnary, Oexp, 1, {"x"}},
	{"log", KUnary, Olog, 1, {"x"}},
	{"sqrt", KUnary, Osqrt, 1, {"x"}},
	{"rsqrt", KUnary, Orsqrt, 1, {"x"}},
	{"abs", KUnary, Oabs, 1, {"x"}},
	{"leaky_relu", KLeaky, Oleaky_relu, 1, {"x", "negative_slope"}},
	{"elu", KElu, Oelu, 1, {"x", "alpha"}},
	{"dropout", KDropout, Odropout, 1, {"x", "p"}},
	{"matmul", KBinary, Omatmul, 2, {"a", "b"}},
	{"maximum", KBinary, Omaximum, 2, {"a", "b"}},
	{"minimum", KBinary, Ominimum, 2, {"a", "b"}},
	{"pow", KBinary, Opow, 2, {"a", "b"}},
	{"src", KGraph, Osrc, 1, {"g"}},
	{"dst", KGraph, Odst, 1, {"g"}},
	{"batch", KGraph, Obatch, 1, {"g"}},
	{"in_degree", KGraph, Oin_degree, 1, {"g"}},
	{"out_degree", KGraph, Oout_degree, 1, {"g"}},
	{"edge_weight", KGraph, Oedge_weight, 1, {"g"}},
	{"gcn_norm", KGraph, Ogcn_norm, 1, {"g"}},
	{"add_self_loops", KGraph, Oadd_self_loops, 1, {"g"}},
	{"remove_self_loops", KGraph, Oremove_self_loops, 1, {"g"}},
	{"add_remaining_self_loops", KAddRemaining, Oadd_remaining_self_loops, 1, {"g", "fill"}},
	{"edge_softmax", KEdgeSoftmax, Oedge_softmax, 2, {"g", "e"}},
	{"gather", KGather, Ogather, 2, {"x", "index"}},
	{"scatter_sum", KScatter, Oscatter_sum, 3, {"src", "index", "dim_size"}},
	{"scatter_mean", KScatter, Oscatter_mean, 3, {"src", "index", "dim_size"}},
	{"scatter_max", KScatter, Oscatter_max, 3, {"src", "index", "dim_size"}},
	{"segment_sum", KScatter, Oscatter_sum, 3, {"x", "batch", "size"}},
	{"segment_mean", KScatter, Oscatter_mean, 3, {"x", "batch", "size"}},
	{"segment_max", KScatter, Oscatter_max, 3, {"x", "batch", "size"}},
	{"sum", KReduce, Osum, 2, {"x", "dim", "keepdim"}},
	{"mean", KReduce, Omean, 2, {"x", "dim", "keepdim"}},
	{"max", KReduce, Omax, 2, {"x", "dim", "keepdim"}},
	{"size", KSize, 0, 2, {"x", "dim"}},
	{"softmax", KNorm, Osoftmax, 1, {"x", "dim"}},
	{"log_softmax", KNorm, Olog_softmax, 1, {"x", "dim"}},
	{"l2_normalize", KL2, Ol2_normalize, 1, {"x", "dim", "eps"}},
	{"transpose", KTranspose, Otranspose, 1, {"x", "dim0", "dim1"}},
	{"reshape", KReshape, Oreshape, 2, {"x", "shape"}},
	{"concat", KConcat, Oconcat, 1, {"tensors", "dim"}},
	{"cast", KCast, Ocast, 2, {"x", "dtype"}},
	{"update", KUpdate, 0, 2, {"buffer", "value"}},
	{"nll_loss", KLoss, 0, 2, {"input", "target", "mask"}},
	{"cross_entropy", KLoss, 0, 2, {"input", "target", "mask"}},
	{"binary_cross_entropy_with_logits", KLoss, 0, 2, {"input", "target", "mask"}},
	{"mse_loss", KLoss, 0, 2, {"input", "target", "mask"}},
	{"range", KRange, 0, 1, {"a", "b", "step"}},
	{"len", KLen, 0, 1, {"x"}},
	{"keys", KKeys, 0, 1, {"d"}},
	{"node_types", KTypes, 0, 1, {"g"}},
	{"edge_types", KTypes, 1, 1, {"g"}},
	{"assert", KAssert, 0, 1, {"cond", "message"}},
};
enum { NBuiltin = sizeof builtins / sizeof builtins[0] };

/* the i-th primitive's name, NULL past the end (for "did you mean") */
const char *
builtinname(int i)
{
	return i < NBuiltin ? builtins[i].name : NULL;
}

static const Builtin *
findbuiltin(const char *name)
{
	int i;

	for (i = 0; i < NBuiltin; i++)
		if (strcmp(builtins[i].name, name) == 0)
			return &builtins[i];
	return NULL;
}

bool
isbuiltin(const char *name)
{
	return findbuiltin(name) != NULL;
}

bool
bindargs(Ctx *c, Node *call, const char *what, const char *const *names,
         int nf, int nreq, CVal *out, bool *given)
{
	Node *a;
	int i, k, npos = 0;

	for (k = 0; k < nf; k++) {
		given[k] = false;
		out[k] = (CVal){.kind = CNone};
	}
	for (i = 0; i < call->args.n; i++) {
		a = call->args.v[i];
		if (a->kind != ND_KWARG) {
			if (npos < i) {
				serror(a->loc, "positional argument after a keyword argument");
				return false;
			}
			if (npos >= nf) {
				serror(a->loc, "%s takes at most %d argument%s, got %d", what, nf, nf == 1 ? "" : "s", call->args.n);
				return false;
			}
			out[npos] = eval(c, a);
			given[npos++] = true;
			continue;
		}
		for (k = 0; k < nf; k++)
			if (strcmp(names[k], a->name) == 0)
				break;
		if (k == nf) {
			const char *near = closestname(a->name, (const char *const *)names);
			serror(a->loc, "%s has no argument '%s'%s%s%s", what, a->name,
			       near ? "; did you mean '" : "", near ? near : "", near ? "'?" : "");
			return false;
		}
		if (given[k]) {
			serror(a->loc, "argument '%s' of %s given twice", a->name, what);
			return false;
		}
		out[k] = eval(c, a->lhs);
		given[k] = true;
	}
	for (k = 0; k < nreq; k++)
		if (!given[k]) {
			serror(call->loc, "missing argument '%s' of %s", names[k], what);
			return false;
		}
	for (k = 0; k < nf; k++)
		if (given[k] && out[k].kind == CNone)
			return false;
	return true;
}

static Loc
argloc(Node *call, const char *const *names, int k)
{
	int i;

	for (i = 0; i < call->args.n; i++)
		if (call->args.v[i]->kind == ND_KWARG ? strcmp(call->args.v[i]->name, names[k]) == 0 : i == k)
			return call->args.v[i]->loc;
	return call->loc;
}

static bool
wanttensor(Node *call, const Builtin *b, CVal *v, int k, int kind)
{
	if (v[k].kind == kind)
		return true;
	serror(argloc(call, b->formals, k), "argument '%s' of %s must be a %s, got a %s", b->formals[k], b->name,
	       kind == CGraph ? "graph" : "tensor", kindname(&v[k]));
	return false;
}

static bool
wantnum(Node *call, const Builtin *b, CVal *v, int k, double *out)
{
	if (v[k].kind == CInt || v[k].kind == CFloat) {
		*out = v[k].kind == CInt ? (double)v[k].i : v[k].f;
		return true;
	}
	serror(argloc(call, b->formals, k), "argument '%s' of %s must be a number, got a %s", b->formals[k], b->name, kindname(&v[k]));
	return false;
}

/* a dim argument: negative counts from the end, as in PyTorch */
static bool
wantaxis(Node *call, const Builtin *b, CVal *v, int k, int rank, int64_t *out)
{
	Loc l = argloc(call, b->formals, k);

	if (v[k].kind != CInt) {
		serror(l, "argument '%s' of %s must be an int, got a %s", b->formals[k], b->name, kindname(&v[k]));
		return false;
	}
	*out = v[k].i < 0 ? v[k].i + rank : v[k].i;
	if (*out < 0 || *out >= rank) {
		serror(l, "dim %lld out of range for a tensor of rank %d", (long long)v[k].i, rank);
		return false;
	}
	return true;
}

/*
 * A data-dependent graph op applied again to the same graph gives the same
 * graph: reuse the first result, so both share one derived edge symbol
 * (two GCNConv layers then agree that their graphs have E1 + N edges).
 */
static Ref
samegraphop(int op, Ref g, double fill)
{
	Ins *in;
	int i;

	for (i = 0; i < S.fn->nins; i++) {
		in = &S.fn->ins[i];
		if (in->op == op && in->arg[0] == g && attrfloat(in, "fill", 1.0) == fill)
			return in->to;
	}
	return RNone;
}

static CVal
lowerreshape(Ctx *c, Node *call, const Builtin *b, CVal *v)
{
	Type t = vtype(v[0]);
	Dim d[MaxRank], known = 1, total, q;
	int k, infer = -1;
	bool ok = true;
	Attr a;
	Loc l = argloc(call, b->formals, 1);

	if (v[1].kind != CList) {
		serror(l, "reshape: the shape must be a list such as [N, 8, 8], got a %s", kindname(&v[1]));
		return (CVal){.kind = CNone};
	}
	if (v[1].n > MaxRank) {
		serror(l, "reshape: rank %d exceeds the maximum of %d", v[1].n, MaxRank);
		return (CVal){.kind = CNone};
	}
	for (k = 0; k < v[1].n; k++) {
		if (v[1].elems[k].kind == CInt && v[1].elems[k].i == -1) {
			if (infer >= 0) {
				serror(l, "reshape: only one dimension can be -1");
				return (CVal){.kind = CNone};
			}
			infer = k;
			d[k] = 1;
			continue;
		}
		if (!todim(c, v[1].elems[k], l, &d[k]))
			return (CVal){.kind = CNone};
		known = dimmul(S.mod, known, d[k], &ok);
	}
	if (infer >= 0) {
		total = dimprod(S.mod, t.dim, t.rank, &ok);
		/* the known part must be one term dividing every term */
		if (!ok || known == 0 || !dimdiv(S.mod, total, known, &q)) {
			serror(l, "shape mismatch in reshape: cannot infer -1 for %s", tystr(t));
			return (CVal){.kind = CNone};
		}
		d[infer] = q;
	}
	a = mkattrdims(S.mod->arena, "shape", d, v[1].n);
	return emitop(c, Oreshape, &v[0].ref, 1, &a, 1, NULL, call->loc);
}

static CVal
lowerrange(Node *call, const Builtin *b, CVal *v, bool *given)
{
	int64_t lo = 0, hi, step = 1, n, i;
	CVal r = {.kind = CList};

	for (i = 0; i < 3; i++)
		if (given[i] && v[i].kind != CInt) {
			serror(argloc(call, b->formals, i), "range() takes ints, got a %s", kindname(&v[i]));
			return (CVal){.kind = CNone};
		}
	hi = v[0].i;
	if (given[1])
		lo = v[0].i, hi = v[1].i;
	if (given[2])
		step = v[2].i;
	if (step == 0) {
		serror(call->loc, "range() step must not be zero");
		return (CVal){.kind = CNone};
	}
	n = step > 0 ? (hi > lo ? (hi - lo + step - 1) / step : 0) : (lo > hi ? (lo - hi - step - 1) / -step : 0);
	if (n > 100000) {
		serror(call->loc, "range() of %lld elements is too long", (long long)n);
		return (CVal){.kind = CNone};
	}
	r.n = (int)n;
	r.elems = arena_alloc(S.arena, (n + 1) * sizeof(CVal));
	for (i = 0; i < n; i++)
		r.elems[i] = (CVal){.kind = CInt, .i = lo + i * step};
	return r;
}

static Ref
op1(Ctx *c, int op, Ref x, Loc l)
{
	CVal v = emitop(c, op, &x, 1, NULL, 0, NULL, l);

	return v.kind == CTensor ? v.ref : RNone;
}

static Ref
op2(Ctx *c, int op, Ref x, Ref y, Loc l)
{
	Ref a[2] = {x, y};
	CVal v;

	if (x == RNone || y == RNone)
		return RNone;
	v = emitop(c, op, a, 2, NULL, 0, NULL, l);
	return v.kind == CTensor ? v.ref : RNone;
}

static Ref
opdim(Ctx *c, int op, Ref x, int dim, Loc l)
{
	Attr a[2] = {mkattrint(S.mod->arena, "dim", dim), mkattrbool(S.mod->arena, "keepdim", false)};
	CVal v;

	if (x == RNone)
		return RNone;
	v = emitop(c, op, &x, 1, a, op == Olog_softmax ? 1 : 2, NULL, l);
	return v.kind == CTensor ? v.ref : RNone;
}

static Ref
num(Ctx *c, double f, int dt, Loc l)
{
	return scalarconst(c, (CVal){.kind = CFloat, .f = f}, dt, l);
}

/*
 * Losses, each the mean over the rows a mask keeps, as torch's with
 * reduction="mean" over out[mask]: nll_loss (log-probabilities [N, C]
 * and class indices [N]), cross_entropy (logits: log_softmax, then
 * nll), binary_cross_entropy_with_logits and mse_loss (targets shaped
 * like the input; the mean over every element of the kept rows).  The
 * mask is a bool[N] node mask or an index list i64[K]; none keeps every
 * row.  A mask that keeps nothing gives NaN, as torch's mean of nothing.
 */
CVal
lowerloss(Ctx *c, const char *name, CVal x, CVal target, CVal mask, bool hasmask, Loc l)
{
	CVal none = {.kind = CNone};
	Type xt, tt, mt;
	Ref xr, tr, w = RNone, w0, per, s, cnt;
	int kind, k, dt;
	Attr at;

	kind = !strcmp(name, "nll") || !strcmp(name, "nll_loss") ? 0 :
	       !strcmp(name, "cross_entropy") || !strcmp(name, "ce") ? 1 :
	       !strcmp(name, "bce") || !strcmp(name, "binary_cross_entropy_with_logits") ? 2 :
	       !strcmp(name, "mse") || !strcmp(name, "mse_loss") ? 3 : -1;
	if (kind < 0) {
		serror(l, "unknown loss '%s' (nll, cross_entropy, bce, mse)", name);
		return none;
	}
	if (x.kind != CTensor || target.kind != CTensor || (hasmask && mask.kind != CTensor)) {
		serror(l, "%s: the input, the target and the mask must be tensors", name);
		return none;
	}
	xt = vtype(x);
	tt = vtype(target);
	dt = xt.dtype;
	if (!dtypeisfloat(dt) || xt.rank < 1 || (kind < 2 && xt.rank != 2)) {
		serror(l, "%s: the input must be a float tensor%s, got %s", name, kind < 2 ? " [N, C]" : "", tystr(xt));
		return none;
	}
	if (kind < 2 ? (tt.rank != 1 || !dtypeisint(tt.dtype) || tt.dim[0] != xt.dim[0]) : !typeeq(tt, xt)) {
		serror(l, "%s: the target must be %s, got %s", name,
		       kind < 2 ? "class indices i64[N], one per row of the input" : "shaped like the input", tystr(tt));
		return none;
	}
	xr = x.ref;
	tr = target.ref;
	if (hasmask) {
		mt = vtype(mask);
		if (mt.rank != 1 || (mt.dtype == DBool && mt.dim[0] != xt.dim[0]) ||
		    (mt.dtype != DBool && !dtypeisint(mt.dtype))) {
			serror(l, "%s: the mask must be a node mask bool[%s] or an index list i64[K], got %s", name,
			       dimstr(S.arena, S.mod, xt.dim[0]), tystr(mt));
			return none;
		}
		if (mt.dtype == DBool) {
			Type ft = tensortype(dt, 1, mt.dim);
			CVal cv = emitop(c, Ocast, &mask.ref, 1, NULL, 0, &ft, l);
			if (cv.kind != CTensor)
				return none;
			w = cv.ref;
		} else {
			xr = op2(c, Ogather, xr, mask.ref, l);
			tr = op2(c, Ogather, tr, mask.ref, l);
		}
	}
	if (kind == 1)
		xr = opdim(c, Olog_softmax, xr, 1, l);
	switch (kind) {
	case 0:
	case 1:
		per = op2(c, Otake, xr, tr, l);
		break;
	case 2:   /* max(x, 0) - x t + log(1 + e^-|x|) */
		per = op2(c, Osub, op2(c, Omaximum, xr, num(c, 0, dt, l), l), op2(c, Omul, xr, tr, l), l);
		per = op2(c, Oadd, per, op1(c, Olog, op2(c, Oadd, num(c, 1, dt, l),
			op1(c, Oexp, op1(c, Oneg, op1(c, Oabs, xr, l), l), l), l), l), l);
		break;
	default:
		per = op2(c, Osub, xr, tr, l);
		per = op2(c, Omul, per, per, l);
		break;
	}
	if (per == RNone)
		return none;
	xt = valtype(S.fn, per);
	w0 = w;
	if (w != RNone) {
		Type wt = xt;
		for (k = 1; k < wt.rank; k++)
			wt.dim[k] = 1;
		at = mkattrdims(S.mod->arena, "shape", wt.dim, wt.rank);
		if (wt.rank > 1) {
			CVal cv = emitop(c, Oreshape, &w, 1, &at, 1, NULL, l);
			if (cv.kind != CTensor)
				return none;
			w = cv.ref;
		}
		per = op2(c, Omul, per, w, l);
	}
	s = per;
	for (k = xt.rank; k > 0; k--)
		s = opdim(c, Osum, s, 0, l);
	/* the count: kept rows times the elements of a row */
	if (w != RNone) {
		cnt = opdim(c, Osum, w0, 0, l);
		for (k = 1; k < xt.rank; k++)
			if (dimisconst(xt.dim[k]))
				cnt = op2(c, Omul, cnt, num(c, (double)dimconstval(xt.dim[k]), dt, l), l);
	} else {
		Type ot = xt;
		CVal cv;
		at = mkattrfloat(S.mod->arena, "value", 1);
		cv = emitop(c, Oconst, NULL, 0, &at, 1, &ot, l);
		if (cv.kind != CTensor)
			return none;
		cnt = cv.ref;
		for (k = xt.rank; k > 0; k--)
			cnt = opdim(c, Osum, cnt, 0, l);
	}
	s = op2(c, Odiv, s, cnt, l);
	if (kind < 2)
		s = op1(c, Oneg, s, l);
	return s == RNone ? none : tensorval(s);
}

CVal
callbuiltin(Ctx *c, Node *call, const char *name)
{
	const Builtin *b = findbuiltin(name);
	CVal v[4], none = {.kind = CNone}, out;
	bool given[4];
	Attr a[2];
	Ref r[64];
	double f;
	int64_t ax, perm[MaxRank];
	Dim n;
	Type t;
	int k, dt, nf;

	for (nf = 0; nf < 4 && b->formals[nf]; nf++)
		;
	if (!bindargs(c, call, b->name, b->formals, nf, b->nreq, v, given))
		return none;
	if (b->kind < KRange && !c->intensor) {
		serror(call->loc, "tensor primitive '%s' used outside fn forward or a model", name);
		return none;
	}
	switch (b->kind) {
	case KUnary:
		if (!wanttensor(call, b, v, 0, CTensor))
			return none;
		return emitop(c, b->op, &v[0].ref, 1, NULL, 0, NULL, call->loc);
	case KLeaky:
	case KElu:
	case KDropout:
		if (!wanttensor(call, b, v, 0, CTensor))
			return none;
		f = b->kind == KLeaky ? 0.01 : b->kind == KElu ? 1.0 : 0.5;
		if (given[1] && !wantnum(call, b, v, 1, &f))
			return none;
		if (b->kind == KDropout && !(f >= 0 && f < 1)) {
			serror(argloc(call, b->formals, 1), "dropout probability must be in [0, 1), got %g", f);
			return none;
		}
		a[0] = mkattrfloat(S.mod->arena, b->kind == KLeaky ? "slope" : b->kind == KElu ? "alpha" : "p", f);
		if (b->kind == KDropout && S.training && f > 0) {
			/* a mask of its own: the next stream under the step's key */
			r[0] = v[0].ref;
			r[1] = S.key;
			a[1] = mkattrint(S.mod->arena, "stream", S.nstream++);
			return emitop(c, Odropout_train, r, 2, a, 2, NULL, call->loc);
		}
		return emitop(c, b->op, &v[0].ref, 1, a, 1, NULL, call->loc);
	case KBinary:
		if (v[0].kind != CTensor && v[1].kind != CTensor) {
			serror(call->loc, "%s needs at least one tensor", name);
			return none;
		}
		for (k = 0; k < 2; k++)
			r[k] = v[k].kind == CTensor ? v[k].ref : scalarconst(c, v[k], vtype(v[1 - k]).dtype, argloc(call, b->formals, k));
		return emitop(c, b->op, r, 2, NULL, 0, NULL, call->loc);
	case KGraph:
		if (!wanttensor(call, b, v, 0, CGraph))
			return none;
		if (opinfo[b->op].flags & Fdyn) {
			if ((r[0] = samegraphop(b->op, v[0].ref, 1.0)) != RNone)
				return tensorval(r[0]);
			t = vtype(v[0]);
			t.dim[1] = dimsym(S.mod, symfresh(S.mod, "E"));
			return emitop(c, b->op, &v[0].ref, 1, NULL, 0, &t, call->loc);
		}
		out = emitop(c, b->op, &v[0].ref, 1, NULL, 0, NULL, call->loc);
		t = vtype(v[0]);
		if (out.kind == CTensor && isrelation(t) && (b->op == Osrc || b->op == Odst)) {
			struct IdxRange *x = arena_alloc(S.arena, sizeof *x);
			*x = (struct IdxRange){.fn = S.fn, .ref = out.ref, .nodes = b->op == Osrc ? graphsrcnodes(t) : t.dim[0],
			                       .what = astrfmt(S.arena, "%s of %s", name, tystr(t)),
			                       .next = S.idxrange};
			S.idxrange = x;
		}
		return out;
	case KAddRemaining:
		if (!wanttensor(call, b, v, 0, CGraph))
			return none;
		f = 1.0;
		if (given[1] && !wantnum(call, b, v, 1, &f))
			return none;
		if ((r[0] = samegraphop(b->op, v[0].ref, f)) != RNone)
			return tensorval(r[0]);
		t = vtype(v[0]);
		{
			bool ok = true;
			t.dim[1] = dimadd(S.mod, dimsym(S.mod, symfresh(S.mod, "E")), t.dim[0], &ok);
		}
		a[0] = mkattrfloat(S.mod->arena, "fill", f);
		return emitop(c, b->op, &v[0].ref, 1, a, 1, &t, call->loc);
	case KEdgeSoftmax:
		if (!wanttensor(call, b, v, 0, CGraph) || !wanttensor(call, b, v, 1, CTensor))
			return none;
		r[0] = v[0].ref, r[1] = v[1].ref;
		return emitop(c, b->op, r, 2, NULL, 0, NULL, call->loc);
	case KGather:
		if (!wanttensor(call, b, v, 0, CTensor) || !wanttensor(call, b, v, 1, CTensor))
			return none;
		if (vtype(v[0]).rank >= 1 && !indexfits(v[1].ref, vtype(v[0]).dim[0], "gather", call->loc))
			return none;
		r[0] = v[0].ref, r[1] = v[1].ref;
		return emitop(c, b->op, r, 2, NULL, 0, NULL, call->loc);
	case KScatter:
		if (!wanttensor(call, b, v, 0, CTensor) || !wanttensor(call, b, v, 1, CTensor))
			return none;
		if (!todim(c, v[2], argloc(call, b->formals, 2), &n) || !indexfits(v[1].ref, n, name, call->loc))
			return none;
		r[0] = v[0].ref, r[1] = v[1].ref;
		a[0] = mkattrdim(S.mod->arena, "n", n);
		return emitop(c, b->op, r, 2, a, 1, NULL, call->loc);
	case KReduce:
		if (!wanttensor(call, b, v, 0, CTensor) || !wantaxis(call, b, v, 1, vtype(v[0]).rank, &ax))
			return none;
		if (given[2] && v[2].kind != CBool) {
			serror(argloc(call, b->formals, 2), "keepdim must be a bool");
			return none;
		}
		a[0] = mkattrint(S.mod->arena, "dim", ax);
		a[1] = mkattrbool(S.mod->arena, "keepdim", given[2] && v[2].i);
		return emitop(c, b->op, &v[0].ref, 1, a, 2, NULL, call->loc);
	case KSize: {
		/* x's extent along dim as a number: a sum of ones of that
		 * length, which reads nothing of x, so a row count costs no
		 * pass over the rows and is worked out once per bound size
		 * (sum(x * 0 + 1) read all of x at every call, and its
		 * gradient was a pass of zeros) */
		Type ot;
		CVal cv;
		if (!wanttensor(call, b, v, 0, CTensor) || !wantaxis(call, b, v, 1, vtype(v[0]).rank, &ax))
			return none;
		t = vtype(v[0]);
		ot = tensortype(dtypeisfloat(t.dtype) ? t.dtype : DF32, 1, &t.dim[ax]);
		a[0] = mkattrfloat(S.mod->arena, "value", 1);
		cv = emitop(c, Oconst, NULL, 0, a, 1, &ot, call->loc);
		if (cv.kind != CTensor)
			return none;
		return tensorval(opdim(c, Osum, cv.ref, 0, call->loc));
	}
	case KNorm:
	case KL2:
		if (!wanttensor(call, b, v, 0, CTensor))
			return none;
		if (!given[1])
			v[1] = (CVal){.kind = CInt, .i = -1};
		if (!wantaxis(call, b, v, 1, vtype(v[0]).rank, &ax))
			return none;
		a[0] = mkattrint(S.mod->arena, "dim", ax);
		if (b->kind == KNorm)
			return emitop(c, b->op, &v[0].ref, 1, a, 1, NULL, call->loc);
		f = 1e-12;
		if (given[2] && !wantnum(call, b, v, 2, &f))
			return none;
		a[1] = mkattrfloat(S.mod->arena, "eps", f);
		return emitop(c, b->op, &v[0].ref, 1, a, 2, NULL, call->loc);
	case KTranspose:
		if (!wanttensor(call, b, v, 0, CTensor))
			return none;
		t = vtype(v[0]);
		for (k = 0; k < t.rank; k++)
			perm[k] = given[1] ? k : t.rank - 1 - k;
		if (given[1] != given[2]) {
			serror(call->loc, "transpose takes both dim0 and dim1, or neither");
			return none;
		}
		if (given[1]) {
			int64_t d0, d1;
			if (!wantaxis(call, b, v, 1, t.rank, &d0) || !wantaxis(call, b, v, 2, t.rank, &d1))
				return none;
			perm[d0] = d1;
			perm[d1] = d0;
		}
		a[0] = mkattrints(S.mod->arena, "perm", perm, t.rank);
		return emitop(c, b->op, &v[0].ref, 1, a, 1, NULL, call->loc);
	case KReshape:
		if (!wanttensor(call, b, v, 0, CTensor))
			return none;
		return lowerreshape(c, call, b, v);
	case KConcat:
		if (v[0].kind != CList || v[0].n == 0 || v[0].n > 64) {
			serror(argloc(call, b->formals, 0), "concat takes a non-empty list of tensors, such as concat([a, b], dim=1)");
			return none;
		}
		for (k = 0; k < v[0].n; k++) {
			if (v[0].elems[k].kind != CTensor) {
				serror(argloc(call, b->formals, 0), "concat: element %d is a %s, not a tensor", k, kindname(&v[0].elems[k]));
				return none;
			}
			r[k] = v[0].elems[k].ref;
		}
		if (!given[1])
			v[1] = (CVal){.kind = CInt, .i = 0};
		if (!wantaxis(call, b, v, 1, vtype(v[0].elems[0]).rank, &ax))
			return none;
		a[0] = mkattrint(S.mod->arena, "dim", ax);
		return emitop(c, b->op, r, v[0].n, a, 1, NULL, call->loc);
	case KCast:
		if (!wanttensor(call, b, v, 0, CTensor))
			return none;
		if (v[1].kind != CStr || (dt = dtypefromname(v[1].s)) == DNone) {
			serror(argloc(call, b->formals, 1), "cast: dtype must be a string such as \"f32\" or \"i64\"");
			return none;
		}
		t = vtype(v[0]);
		/* every f16 or bf16 value is a float: its f32 is a view */
		if ((t.dtype == DF16 || t.dtype == DBF16) && dt == DF32) {
			t.dtype = dt;
			return emitop(c, Owiden, &v[0].ref, 1, NULL, 0, NULL, call->loc);
		}
		t.dtype = dt;
		return emitop(c, b->op, &v[0].ref, 1, NULL, 0, &t, call->loc);
	case KRange:
		return lowerrange(call, b, v, given);
	case KTypes:
		/* a heterogeneous graph's metadata, as PyG's: node type names,
		 * or [src, rel, dst] lists of names */
		if (v[0].kind != CHetero) {
			serror(argloc(call, b->formals, 0), "%s() takes a heterogeneous graph, not a %s", name, kindname(&v[0]));
			return none;
		}
		{
			const Hetero *h = v[0].het;
			int n = b->op ? h->nedge : h->nnode;
			CVal *l = arena_alloc(S.arena, (size_t)(n + 1) * sizeof *l);
			for (k = 0; k < n; k++) {
				if (!b->op) {
					l[k] = (CVal){.kind = CStr, .s = h->node[k]};
					continue;
				}
				CVal *e3 = arena_alloc(S.arena, 3 * sizeof *e3);
				for (int j = 0; j < 3; j++)
					e3[j] = (CVal){.kind = CStr, .s = h->edge[k][j]};
				l[k] = (CVal){.kind = CList, .elems = e3, .n = 3};
			}
			return (CVal){.kind = CList, .elems = l, .n = n};
		}
	case KKeys:
		if (v[0].kind != CDict) {
			serror(argloc(call, b->formals, 0), "keys() takes a dict, not a %s", kindname(&v[0]));
			return none;
		}
		return dictkeys(v[0]);
	case KLen:
		if (v[0].kind == CList || v[0].kind == CDict)
			return (CVal){.kind = CInt, .i = v[0].n};
		if (v[0].kind == CStr)
			return (CVal){.kind = CInt, .i = (int64_t)strlen(v[0].s)};
		serror(call->loc, "len() of a %s", kindname(&v[0]));
		return none;
	case KUpdate:
		/* a buffer's new value after a training step (BatchNorm's
		 * running statistics); nothing at inference */
		if (!wanttensor(call, b, v, 0, CTensor))
			return none;
		if (S.fn->val[v[0].ref].def < 0 || S.fn->ins[S.fn->val[v[0].ref].def].op != Oparam ||
		    !attrint(&S.fn->ins[S.fn->val[v[0].ref].def], "buffer", 0)) {
			serror(argloc(call, b->formals, 0), "update: the first argument must be a buffer");
			return none;
		}
		if (!S.training)
			return (CVal){.kind = CBool, .i = 1};
		t = vtype(v[0]);
		if (v[1].kind != CTensor || !typeeq(vtype(v[1]), t)) {
			serror(argloc(call, b->formals, 1), "update: the new value must be a %s like the buffer, got %s",
			       tystr(t), v[1].kind == CTensor ? tystr(vtype(v[1])) : kindname(&v[1]));
			return none;
		}
		for (k = 0; k < S.nupd; k++)
			if (strcmp(S.upd[k].name, attrstr(&S.fn->ins[S.fn->val[v[0].ref].def], "name")) == 0) {
				serror(call->loc, "update: buffer '%s' is updated twice", S.upd[k].name);
				return none;
			}
		if (S.nupd == (int)(sizeof S.upd / sizeof S.upd[0])) {
			serror(call->loc, "update: more than %d buffers", S.nupd);
			return none;
		}
		S.upd[S.nupd].name = attrstr(&S.fn->ins[S.fn->val[v[0].ref].def], "name");
		S.upd[S.nupd++].v = v[1].ref;
		return (CVal){.kind = CBool, .i = 1};
	case KLoss:
		return lowerloss(c, name, v[0], v[1], v[2], given[2], call->loc);
	case KAssert:
		if (v[0].kind != CBool) {
			serror(argloc(call, b->formals, 0), "assert needs a compile-time bool, got a %s", kindname(&v[0]));
			return none;
		}
		if (given[1] && v[1].kind != CStr) {
			serror(argloc(call, b->formals, 1), "assert message must be a string");
			return none;
		}
		if (!v[0].i)
			serror(call->loc, "%s", given[1] ? v[1].s : "assertion failed");
		return (CVal){.kind = CBool, .i = 1};
	}
	die("builtin %s has no lowering", name);
}
