/*
 * Typing rules for every op: one function that the frontend (through
 * buildop), the IR parser and the verifier all call, so there is a single
 * definition of what is well typed.  Messages are user-facing: they name
 * the operation and print the operand types in full, since a shape
 * mismatch is the most common mistake in a model.
 */
#include <math.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

#include "ir.h"

typedef struct Ctx {
	Mod *m;
	int op;
	const Type *at;
	int n;
	const Attr *attr;
	int nattr;
	const Type *decl;
	Type *out;
	char *err;
	size_t errlen;
	char *text[8];   /* ty() and dm() strings, freed when the op is checked */
	int ntext;
} Ctx;

static bool
fail(Ctx *c, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(c->err, c->errlen, fmt, ap);
	va_end(ap);
	return false;
}

/* Up to 4 type strings live at once in one message. */
/* a message's text, sized to fit; a message holds a few at most */
static const char *
keep(Ctx *c, char *s)
{
	if (c->ntext == 8)
		die("typecheck: more than 8 types in one message");
	return c->text[c->ntext++] = s;
}

static const char *
ty(Ctx *c, Type t)
{
	return keep(c, typestr(NULL, c->m, t));
}

static const char *
dm(Ctx *c, Dim d)
{
	return keep(c, dimstr(NULL, c->m, d));
}

static const char *
opname(int op)
{
	switch (op) {
	case Oadd: return "'+'";
	case Osub: return "'-'";
	case Omul: return "'*'";
	case Odiv: return "'/'";
	case Opow: return "'**'";
	case Omatmul: return "'@'";
	default: return opinfo[op].name;
	}
}

static bool
istensor(Ctx *c, int k)
{
	if (c->at[k].kind != TTensor)
		return fail(c, "%s: operand %d must be a tensor, not %s", opname(c->op), k + 1, ty(c, c->at[k]));
	return true;
}

static bool
isfloat(Ctx *c, int k)
{
	if (!istensor(c, k))
		return false;
	if (!dtypeisfloat(c->at[k].dtype))
		return fail(c, "dtype mismatch: %s needs a floating-point tensor, got %s", opname(c->op), ty(c, c->at[k]));
	return true;
}

static bool
isgraphop(Ctx *c, int k)
{
	if (c->at[k].kind != TGraph)
		return fail(c, "%s: operand %d must be a graph, not %s", opname(c->op), k + 1, ty(c, c->at[k]));
	return true;
}

static bool
isindex(Ctx *c, int k)
{
	if (!istensor(c, k))
		return false;
	if (!dtypeisint(c->at[k].dtype) || c->at[k].rank != 1)
		return fail(c, "%s: index must be a 1-d integer tensor, got %s", opname(c->op), ty(c, c->at[k]));
	return true;
}

static bool
needdecl(Ctx *c, int kind)
{
	if (!c->decl || c->decl->kind != kind)
		return fail(c, "%s: needs a declared %s result type", opname(c->op), kind == TGraph ? "graph" : "tensor");
	return true;
}

static const Attr *
attr(Ctx *c, const char *key)
{
	return attrfind(c->attr, c->nattr, key);
}

static bool
intattr(Ctx *c, const char *key, bool required, int64_t *v)
{
	const Attr *a = attr(c, key);

	if (!a) {
		if (required)
			return fail(c, "%s: missing attribute '%s'", opname(c->op), key);
		return true;
	}
	if (a->kind != AInt && a->kind != ABool)
		return fail(c, "%s: attribute '%s' must be an integer", opname(c->op), key);
	*v = a->u.i;
	return true;
}

static bool
floatattr(Ctx *c, const char *key, bool required)
{
	const Attr *a = attr(c, key);

	if (!a)
		return required ? fail(c, "%s: missing attribute '%s'", opname(c->op), key) : true;
	if (a->kind != AFloat && a->kind != AInt)
		return fail(c, "%s: attribute '%s' must be a number", opname(c->op), key);
	return true;
}

/*
 * A const's value must be one its dtype holds: integer and bool tensors
 * hold exact integers in the interpreter (its arithmetic relies on it: an
 * i64 0.8 divides by zero) and in the generated code alike.
 */
static bool
constfits(Ctx *c, const Attr *a, int dt)
{
	double v = a->kind == AInt ? (double)a->u.i : a->u.f;
	bool ok = true;
	char buf[64];

	if (dt == DBool)
		ok = v == 0 || v == 1;
	else if (dt == DI32)
		ok = v == trunc(v) && v >= -0x1p31 && v < 0x1p31;
	else if (dt == DI64)
		ok = a->kind == AInt || (v == trunc(v) && v >= -0x1p63 && v < 0x1p63);
	if (!ok) {
		snprintfloat(buf, sizeof buf, v);
		return fail(c, "const: value %s does not fit %s", buf, dtypename(dt));
	}
	return true;
}

/*
 * An attribute key unknown to the op is an error: it would be ignored.
 * The scheduling attributes that passes add (fusion group, memory slot,
 * once per bind in a training step) are known to every op; they never change what an op computes.
 */
static bool
checkkeys(Ctx *c, const char *allowed)
{
	const char *p;
	size_t n;
	int i;

	for (i = 0; i < c->nattr; i++) {
		if (isschedattr(c->attr[i].key)) {
			if (c->attr[i].kind != AInt || c->attr[i].u.i < 0)
				return fail(c, "%s: attribute '%s' must be a non-negative integer", opname(c->op), c->attr[i].key);
			continue;
		}
		if (strcmp(c->attr[i].key, "store") == 0 || strcmp(c->attr[i].key, "round") == 0) {
			const char *key = c->attr[i].key;
			if (c->attr[i].kind != AStr || (strcmp(c->attr[i].u.s, "bf16") != 0 && strcmp(c->attr[i].u.s, "f16") != 0))
				return fail(c, "%s: attribute '%s' must be \"bf16\" or \"f16\"", opname(c->op), key);
			if (attrfind(c->attr, i, key))
				return fail(c, "%s: attribute '%s' given twice", opname(c->op), key);
			continue;
		}
		n = strlen(c->attr[i].key);
		for (p = allowed; (p = strstr(p, c->attr[i].key)); p += n)
			if ((p == allowed || p[-1] == ' ') && (p[n] == ' ' || p[n] == 0))
				break;
		if (!p)
			return fail(c, "%s: unknown attribute '%s'", opname(c->op), c->attr[i].key);
		if (attrfind(c->attr, i, c->attr[i].key))
			return fail(c, "%s: attribute '%s' given twice", opname(c->op), c->attr[i].key);
	}
	return true;
}

bool
isschedattr(const char *key)
{
	/* and passes/readfold.c's marks: a kernel reading through a
	 * "folded" instruction ("via"); passes/tilegemm.c's ("tile");
	 * passes/gemmepilogue.c's GEMM heading its group ("epilogue") */
	return strcmp(key, "group") == 0 || strcmp(key, "slot") == 0 || strcmp(key, "once") == 0 ||
	       strcmp(key, "via") == 0 || strcmp(key, "folded") == 0 || strcmp(key, "tile") == 0 ||
	       strcmp(key, "epilogue") == 0;
}

static bool
dimattr(Ctx *c, int64_t rank, int64_t *d)
{
	if (!intattr(c, "dim", true, d))
		return false;
	if (*d < 0 || *d >= rank)
		return fail(c, "%s: dim %lld out of range for rank %lld", opname(c->op), (long long)*d, (long long)rank);
	return true;
}

bool
broadcast(const Type *a, const Type *b, Type *out)
{
	int i, r;
	Dim x, y;

	r = a->rank > b->rank ? a->rank : b->rank;
	*out = (Type){.kind = TTensor, .dtype = a->dtype, .rank = r};
	for (i = 1; i <= r; i++) {
		x = i <= a->rank ? a->dim[a->rank - i] : 1;
		y = i <= b->rank ? b->dim[b->rank - i] : 1;
		if (x == y || y == 1)
			out->dim[r - i] = x;
		else if (x == 1)
			out->dim[r - i] = y;
		else
			return false;
	}
	return true;
}

static bool
binary(Ctx *c)
{
	if (!istensor(c, 0) || !istensor(c, 1))
		return false;
	if (c->at[0].dtype != c->at[1].dtype)
		return fail(c, "dtype mismatch in %s: %s and %s", opname(c->op), ty(c, c->at[0]), ty(c, c->at[1]));
	if (c->at[0].dtype == DBool)
		return fail(c, "%s: arithmetic on bool tensors", opname(c->op));
	if (!broadcast(&c->at[0], &c->at[1], c->out))
		return fail(c, "shape mismatch in %s: %s and %s cannot be broadcast", opname(c->op), ty(c, c->at[0]), ty(c, c->at[1]));
	return true;
}

static bool
matmul(Ctx *c)
{
	Type a = c->at[0], b = c->at[1], ba, bb, bo;
	Dim k1, k2;
	bool va, vb;

	if (!istensor(c, 0) || !istensor(c, 1))
		return false;
	if (a.dtype != b.dtype)
		return fail(c, "dtype mismatch in '@': %s and %s", ty(c, a), ty(c, b));
	if (a.dtype == DBool)
		return fail(c, "'@': bool operands");
	if (a.rank == 0 || b.rank == 0)
		return fail(c, "'@' needs tensors of rank 1 or more, got %s and %s", ty(c, a), ty(c, b));
	/* NumPy: a 1-d operand is a row (left) or column (right) vector */
	va = a.rank == 1;
	vb = b.rank == 1;
	k1 = a.dim[a.rank - 1];
	k2 = vb ? b.dim[0] : b.dim[b.rank - 2];
	if (k1 != k2)
		return fail(c, "shape mismatch in '@': %s @ %s (inner dimensions %s and %s differ)",
		            ty(c, a), ty(c, b), dm(c, k1), dm(c, k2));
	ba = (Type){.kind = TTensor, .rank = a.rank > 2 ? a.rank - 2 : 0};
	bb = (Type){.kind = TTensor, .rank = b.rank > 2 ? b.rank - 2 : 0};
	memcpy(ba.dim, a.dim, ba.rank * sizeof(Dim));
	memcpy(bb.dim, b.dim, bb.rank * sizeof(Dim));
	if (!broadcast(&ba, &bb, &bo))
		return fail(c, "shape mismatch in '@': batch dimensions of %s and %s cannot be broadcast", ty(c, a), ty(c, b));
	*c->out = bo;
	c->out->dtype = a.dtype;
	if (!va)
		c->out->dim[c->out->rank++] = a.dim[a.rank - 2];
	if (!vb)
		c->out->dim[c->out->rank++] = b.dim[b.rank - 1];
	if (c->out->rank > MaxRank)
		return fail(c, "'@': result rank too large");
	return true;
}

static bool
sameshape(const Type *a, const Type *b)
{
	return a->rank == b->rank && memcmp(a->dim, b->dim, a->rank * sizeof(Dim)) == 0;
}

static bool
scatter(Ctx *c)
{
	Dim n;
	Type m;

	if (!checkkeys(c, "n") || !istensor(c, 0) || !isindex(c, 1))
		return false;
	m = c->at[0];
	if (m.rank < 1)
		return fail(c, "%s: messages must have rank 1 or more, got %s", opname(c->op), ty(c, m));
	if (m.dtype == DBool || (c->op == Oscatter_mean && !dtypeisfloat(m.dtype)))
		return fail(c, "dtype mismatch: %s of %s", opname(c->op), ty(c, m));
	if (c->at[1].dim[0] != m.dim[0])
		return fail(c, "shape mismatch in %s: messages %s but index %s", opname(c->op), ty(c, m), ty(c, c->at[1]));
	if (!attrgetdim(attr(c, "n"), &n))
		return fail(c, "%s: missing or bad attribute 'n'", opname(c->op));
	*c->out = m;
	c->out->dim[0] = n;
	return true;
}

static bool
reshape(Ctx *c)
{
	Dim d[MaxRank], p, q;
	int r;
	bool ok = true;

	if (!checkkeys(c, "shape") || !istensor(c, 0))
		return false;
	r = attrgetdims(attr(c, "shape"), d, MaxRank);
	if (r < 0)
		return fail(c, "reshape: missing or bad attribute 'shape'");
	p = dimprod(c->m, c->at[0].dim, c->at[0].rank, &ok);
	q = dimprod(c->m, d, r, &ok);
	if (!ok)
		return fail(c, "reshape: element count overflows");
	if (p != q)
		return fail(c, "shape mismatch in reshape: %s has %s elements, the new shape %s",
		            ty(c, c->at[0]), dm(c, p), dm(c, q));
	*c->out = tensortype(c->at[0].dtype, r, d);
	return true;
}

static bool
transpose(Ctx *c)
{
	const Attr *a = attr(c, "perm");
	int k, r = c->at[0].rank;
	bool seen[MaxRank] = {0};

	if (!checkkeys(c, "perm") || !istensor(c, 0))
		return false;
	if (!a || a->kind != AInts || a->n != r)
		return fail(c, "transpose: attribute 'perm' must list %d dims", r);
	*c->out = c->at[0];
	for (k = 0; k < r; k++) {
		if (a->u.is[k] < 0 || a->u.is[k] >= r || seen[a->u.is[k]])
			return fail(c, "transpose: 'perm' is not a permutation");
		seen[a->u.is[k]] = true;
		c->out->dim[k] = c->at[0].dim[a->u.is[k]];
	}
	return true;
}

static bool
concat(Ctx *c)
{
	int64_t d;
	int k, j;
	bool ok = true;

	if (!checkkeys(c, "dim"))
		return false;
	for (k = 0; k < c->n; k++)
		if (!istensor(c, k))
			return false;
	if (!dimattr(c, c->at[0].rank, &d))
		return false;
	*c->out = c->at[0];
	for (k = 1; k < c->n; k++) {
		if (c->at[k].dtype != c->at[0].dtype)
			return fail(c, "dtype mismatch in concat: %s and %s", ty(c, c->at[0]), ty(c, c->at[k]));
		if (c->at[k].rank != c->at[0].rank)
			return fail(c, "shape mismatch in concat: %s and %s", ty(c, c->at[0]), ty(c, c->at[k]));
		for (j = 0; j < c->at[0].rank; j++)
			if (j != d && c->at[k].dim[j] != c->at[0].dim[j])
				return fail(c, "shape mismatch in concat along dim %lld: %s and %s",
				            (long long)d, ty(c, c->at[0]), ty(c, c->at[k]));
		c->out->dim[d] = dimadd(c->m, c->out->dim[d], c->at[k].dim[d], &ok);
	}
	if (!ok)
		return fail(c, "concat: size overflows");
	return true;
}

/* d is >= 0 whatever values >= 0 its symbols take: a constant (interned
 * constants are never negative) or a polynomial of positive terms */
static bool
nonneg(const Mod *m, Dim d)
{
	const DExp *e;
	int i;

	if (dimisconst(d))
		return true;
	e = &m->dexp[~d];
	for (i = 0; i < e->nterm; i++)
		if (e->term[i].coef < 0)
			return false;
	return true;
}

/* x with dim cut to [start, start + len): the range must lie inside for
 * every binding of the symbols (exactly so when constant; N + N of 2*N,
 * or M of M + N, when symbolic) */
static bool
slice(Ctx *c)
{
	int64_t d;
	Dim start, len, end, rest;
	bool ok = true;

	if (!checkkeys(c, "dim start len") || !istensor(c, 0) || !dimattr(c, c->at[0].rank, &d))
		return false;
	if (!attrgetdim(attr(c, "start"), &start))
		return fail(c, "slice: missing or bad attribute 'start'");
	if (!attrgetdim(attr(c, "len"), &len))
		return fail(c, "slice: missing or bad attribute 'len'");
	end = dimadd(c->m, start, len, &ok);
	rest = ok ? dimsub(c->m, c->at[0].dim[d], end, &ok) : 0;
	if (!ok || !nonneg(c->m, rest))
		return fail(c, "slice: [%s, %s + %s) is not inside dim %lld of %s", dm(c, start), dm(c, start),
		            dm(c, len), (long long)d, ty(c, c->at[0]));
	*c->out = c->at[0];
	c->out->dim[d] = len;
	return true;
}

/* dropout_train: the keep test compares a float draw with (float)p, so p
 * must be below 1 as a float too (0.99999999 rounds to 1.0f and would
 * keep nothing while scaling by 1e8); the stream is a counter word whose
 * bit 31 parameter init owns (runtime/philox.h) */
static bool
dropouttrain(Ctx *c)
{
	const Attr *p = attr(c, "p");
	int64_t stream = 0;
	double v;
	char buf[64];

	if (!checkkeys(c, "p stream") || !isfloat(c, 0) || !istensor(c, 1))
		return false;
	if (c->at[1].dtype != DI64 || c->at[1].rank != 1 || c->at[1].dim[0] != 2)
		return fail(c, "dropout_train: the key must be i64[2] (seed, step), got %s", ty(c, c->at[1]));
	if (!floatattr(c, "p", true) || !intattr(c, "stream", true, &stream))
		return false;
	v = p->kind == AInt ? (double)p->u.i : p->u.f;
	if (!(v >= 0 && (float)v < 1)) {
		snprintfloat(buf, sizeof buf, v);
		return fail(c, "dropout_train: p must be in [0, 1), as a float too; got %s", buf);
	}
	if (stream < 0 || stream >= (int64_t)1 << 31)
		return fail(c, "dropout_train: stream must be in [0, 2^31), got %lld", (long long)stream);
	*c->out = c->at[0];
	return true;
}

/* take: x[N, C] and idx[N] -> [N]; put: g[N] and idx[N] -> [N, n] */
static bool
takeput(Ctx *c)
{
	Type x = c->at[0];
	Dim n;

	if (!checkkeys(c, c->op == Oput ? "n" : "") || !isfloat(c, 0) || !isindex(c, 1))
		return false;
	if (x.rank != (c->op == Otake ? 2 : 1) || c->at[1].dim[0] != x.dim[0])
		return fail(c, "shape mismatch in %s: %s and index %s (%s)", opname(c->op), ty(c, x), ty(c, c->at[1]),
		            c->op == Otake ? "x[N, C] and idx[N]" : "g[N] and idx[N]");
	if (c->op == Otake) {
		*c->out = tensortype(x.dtype, 1, x.dim);
		return true;
	}
	if (!attrgetdim(attr(c, "n"), &n))
		return fail(c, "put: missing or bad attribute 'n'");
	*c->out = x;
	c->out->rank = 2;
	c->out->dim[1] = n;
	return true;
}

static bool
reduce(Ctx *c)
{
	int64_t d, keep = 0;
	int k;

	if (!checkkeys(c, "dim keepdim") || !istensor(c, 0))
		return false;
	if (c->op == Omean && !isfloat(c, 0))
		return false;
	if (!dimattr(c, c->at[0].rank, &d) || !intattr(c, "keepdim", false, &keep))
		return false;
	*c->out = c->at[0];
	if (keep) {
		c->out->dim[d] = 1;
		return true;
	}
	for (k = d; k + 1 < c->out->rank; k++)
		c->out->dim[k] = c->out->dim[k + 1];
	c->out->rank--;
	return true;
}

/* graph[N, E'] from an op that drops edges: E' must be a fresh symbol */
static bool
dynedges(Ctx *c, Dim extra)
{
	Type g = c->at[0];
	Dim e;
	bool ok = true;
	int s;

	if (!needdecl(c, TGraph))
		return false;
	if (c->decl->rank != g.rank || c->decl->dim[0] != g.dim[0] || (g.rank == 3 && c->decl->dim[2] != g.dim[2]))
		return fail(c, "%s: result %s does not keep the nodes of %s", opname(c->op), ty(c, *c->decl), ty(c, g));
	e = dimsub(c->m, c->decl->dim[1], extra, &ok);
	s = ok ? dimassym(c->m, e) : -1;
	if (s < 0 || !c->m->sym[s].derived)
		return fail(c, "%s: the edge count of %s must be a derived symbol%s",
		            opname(c->op), ty(c, *c->decl), extra ? " plus the node count" : "");
	*c->out = *c->decl;
	return true;
}

static bool
check(Ctx *c)
{
	Type g;
	Dim d[2];
	int64_t k;
	bool ok = true;
	unsigned fl = opinfo[c->op].flags;

	if (fl & Fgraph) {
		if (!isgraphop(c, 0))
			return false;
		g = c->at[0];
		/* self-loops and gcn_norm pair a node with itself: they need
		 * one node set on both ends */
		if (isrelation(g) && (c->op == Oadd_self_loops || c->op == Oremove_self_loops ||
		                      c->op == Oadd_remaining_self_loops || c->op == Ogcn_norm))
			return fail(c, "%s: %s is a relation between two node types; it has no self-loops",
			            opname(c->op), ty(c, g));
	}
	switch (c->op) {
	case Oconst:
		if (!checkkeys(c, "value") || !needdecl(c, TTensor) || !floatattr(c, "value", true) ||
		    !constfits(c, attr(c, "value"), c->decl->dtype))
			return false;
		*c->out = *c->decl;
		return true;
	case Oparam:
		if (!checkkeys(c, "name init uniform buffer") || !needdecl(c, TTensor))
			return false;
		if (!attr(c, "name") || attr(c, "name")->kind != AStr)
			return fail(c, "param: missing attribute 'name'");
		*c->out = *c->decl;
		return true;
	case Oadd_self_loops:
		if (!checkkeys(c, ""))
			return false;
		*c->out = g;
		c->out->dim[1] = dimadd(c->m, g.dim[1], g.dim[0], &ok);
		return ok ? true : fail(c, "add_self_loops: edge count overflows");
	case Oremove_self_loops:
		return checkkeys(c, "") && dynedges(c, 0);
	case Oadd_remaining_self_loops:
		return checkkeys(c, "fill") && floatattr(c, "fill", false) && dynedges(c, g.dim[0]);
	case Osrc:
	case Odst:
		if (!checkkeys(c, ""))
			return false;
		*c->out = tensortype(DI64, 1, &g.dim[1]);
		return true;
	case Obatch:
		if (!checkkeys(c, ""))
			return false;
		if (g.rank != 3)
			return fail(c, "batch: %s has no batch vector; declare it as graph[N, E, B]", ty(c, g));
		*c->out = tensortype(DI64, 1, &g.dim[0]);
		return true;
	case Oin_degree:
	case Oout_degree:
		if (!checkkeys(c, ""))
			return false;
		d[0] = c->op == Oout_degree ? graphsrcnodes(g) : g.dim[0], d[1] = 1;
		*c->out = tensortype(DF32, 2, d);
		return true;
	case Oedge_weight:
	case Ogcn_norm:
		if (!checkkeys(c, ""))
			return false;
		d[0] = g.dim[1], d[1] = 1;
		*c->out = tensortype(DF32, 2, d);
		return true;
	case Oedge_softmax:
		if (!checkkeys(c, "") || !isgraphop(c, 0) || !isfloat(c, 1))
			return false;
		if (c->at[1].rank < 1 || c->at[1].dim[0] != c->at[0].dim[1])
			return fail(c, "shape mismatch in edge_softmax: scores %s for a graph with %s edges",
			            ty(c, c->at[1]), dm(c, c->at[0].dim[1]));
		*c->out = c->at[1];
		return true;
	case Ogather:
		if (!checkkeys(c, "") || !istensor(c, 0) || !isindex(c, 1))
			return false;
		if (c->at[0].rank < 1)
			return fail(c, "gather: cannot index the scalar %s", ty(c, c->at[0]));
		*c->out = c->at[0];
		c->out->dim[0] = c->at[1].dim[0];
		return true;
	case Oscatter_sum:
	case Oscatter_mean:
	case Oscatter_max:
		return scatter(c);
	case Otake:
	case Oput:
		return takeput(c);
	case Oslice:
		return slice(c);
	case Odropout_train:
		return dropouttrain(c);
	case Ogt:
	case Oeq:
		/* comparisons give a float 0 or 1 (a mask to multiply by) */
		return checkkeys(c, "") && binary(c) && isfloat(c, 0);
	case Omatmul:
		return checkkeys(c, "") && matmul(c);
	case Otranspose:
		return transpose(c);
	case Oreshape:
		return reshape(c);
	case Oconcat:
		return concat(c);
	case Ocast:
		if (!checkkeys(c, "") || !istensor(c, 0) || !needdecl(c, TTensor))
			return false;
		if (!sameshape(&c->at[0], c->decl) || c->decl->dtype == DNone)
			return fail(c, "cast: %s cannot become %s", ty(c, c->at[0]), ty(c, *c->decl));
		*c->out = *c->decl;
		return true;
	case Oleaky_relu:
		if (!checkkeys(c, "slope") || !floatattr(c, "slope", false) || !isfloat(c, 0))
			return false;
		*c->out = c->at[0];
		return true;
	case Oelu:
		if (!checkkeys(c, "alpha") || !floatattr(c, "alpha", false) || !isfloat(c, 0))
			return false;
		*c->out = c->at[0];
		return true;
	case Odropout:
		if (!checkkeys(c, "p") || !floatattr(c, "p", false) || !isfloat(c, 0))
			return false;
		*c->out = c->at[0];
		return true;
	case Owiden:
		if (!checkkeys(c, "") || !istensor(c, 0))
			return false;
		if (c->at[0].dtype != DF16 && c->at[0].dtype != DBF16)
			return fail(c, "widen: %s is not f16 or bf16", ty(c, c->at[0]));
		*c->out = c->at[0];
		c->out->dtype = DF32;
		return true;
	case Oneg:
	case Oabs:
	case Orelu:
		if (!checkkeys(c, "") || !istensor(c, 0))
			return false;
		if (c->at[0].dtype == DBool)
			return fail(c, "%s of a bool tensor", opname(c->op));
		*c->out = c->at[0];
		return true;
	case Osum:
	case Omean:
	case Omax:
		return reduce(c);
	case Osoftmax:
	case Olog_softmax:
	case Ol2_normalize:
		if (!checkkeys(c, c->op == Ol2_normalize ? "dim eps" : "dim") || !isfloat(c, 0))
			return false;
		if (!dimattr(c, c->at[0].rank, &k) || !floatattr(c, "eps", false))
			return false;
		*c->out = c->at[0];
		return true;
	default:
		break;
	}
	if (fl & Fbin)
		return checkkeys(c, "") && binary(c);
	if (fl & Felem) {  /* the transcendental unary ops */
		if (!checkkeys(c, "") || !isfloat(c, 0))
			return false;
		*c->out = c->at[0];
		return true;
	}
	die("typecheck: op %s has no rule", opinfo[c->op].name);
}

static bool
typecheck1(Ctx *c);

bool
typecheckop(Mod *m, int op, const Type *at, int n,
            const Attr *attr, int nattr, const Type *decl,
            Type *out, char *err, size_t errlen)
{
	Ctx c = {m, op, at, n, attr, nattr, decl, out, err, errlen, {0}, 0};
	bool ok = typecheck1(&c);
	int k;

	for (k = 0; k < c.ntext; k++)
		free(c.text[k]);
	return ok;
}

static bool
typecheck1(Ctx *c)
{
	const OpInfo *oi;

	if (c->op <= Oxxx || c->op >= NOp)
		die("typecheck: bad op %d", c->op);
	oi = &opinfo[c->op];
	if (c->n < oi->minargs || (oi->maxargs >= 0 && c->n > oi->maxargs)) {
		if (oi->minargs == oi->maxargs)
			return fail(c, "%s takes %d operand%s, got %d", oi->name, oi->minargs, oi->minargs == 1 ? "" : "s", c->n);
		return fail(c, "%s takes at least %d operands, got %d", oi->name, oi->minargs, c->n);
	}
	memset(c->out, 0, sizeof *c->out);
	if (!check(c))
		return false;
	/* the code generator sizes every value by its element count */
	if (!typenumelok(c->m, *c->out))
		return fail(c, "%s: %s is too large: its element count overflows or has "
		            "degree above %d", opname(c->op), ty(c, *c->out), MaxDeg);
	return true;
}
