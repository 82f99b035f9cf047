/*
 * Semantic analysis and lowering: statements, expressions, layer
 * instantiation and the models themselves.
 *
 * 1. A model's signature creates its size symbols (N, E, ...) and the IR
 *    function's inputs.
 * 2. Its body runs statement by statement.  `layer x = L(...)` evaluates
 *    L's body with the constructor arguments bound (params become `param`
 *    instructions named by their path, nested layers recurse); `if` and
 *    `for` run at compile time; assignments bind names (SSA by
 *    construction: a reassigned name just binds a new value).
 * 3. A call of a layer instance inlines its forward: formals are matched
 *    against the actual types, names in the formal shapes that are not
 *    yet bound (N, E) bind to the actual sizes, and the declared return
 *    type is checked at the return.
 *
 * Errors are reported where they occur, with notes naming the layer
 * instantiations and calls that led there; evaluation goes on with a
 * poison value (CNone) so that one run reports several independent
 * errors without cascades.
 */
#include <math.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>

#include "sema.h"
#include "../passes/passes.h"

Sema S;

/*
 * Limits that keep hostile input from crashing or hanging the compiler.
 * MaxNest bounds the recursion of eval and execstmt, which is what the C
 * stack holds: the parser bounds the nesting within one expression, but
 * not a left-deep chain (x + x + ... + x) nor nesting that adds up
 * across layers calling layers; at about 1 KiB a level (several times
 * that under ASan) it stays far inside an 8 MiB stack.  MaxUnrolled
 * bounds the work of compile-time loops, which multiply when nested.
 */
enum { MaxDepth = 48, MaxUnroll = 10000, MaxNest = 1000, MaxUnrolled = 1000000 };
/* Lists and dicts are values, so `l = l + [x]` copies l: a loop that
 * grows one costs the square of its length.  MaxCopied bounds the
 * elements so copied in one model (a HeteroConv over R relations copies
 * about R * R), so that a hostile loop is an error and not gigabytes. */
enum { MaxCopied = 2000000 };

/* Enter one level of recursion; false (reported once per model) past MaxNest. */
static bool
deeper(Loc l)
{
	if (S.nest >= MaxNest) {
		if (!S.toodeep)
			serror(l, "nesting too deep: more than %d levels of expressions, statements "
			       "and layer calls", MaxNest);
		S.toodeep = true;
		return false;
	}
	S.nest++;
	return true;
}

void
serror(Loc l, const char *fmt, ...)
{
	va_list ap;
	int i;

	va_start(ap, fmt);
	verrorat(l, fmt, ap);
	va_end(ap);
	for (i = S.nframe - 1; i >= 0; i--)
		if (S.frame[i].loc.file)
			noteat(S.frame[i].loc, "%s", S.frame[i].what);
}

static void
pushframe(const char *fmt, const char *name, Loc l)
{
	if (S.nframe < (int)(sizeof S.frame / sizeof S.frame[0])) {
		S.frame[S.nframe].what = astrfmt(S.arena, fmt, name);
		S.frame[S.nframe].loc = l;
	}
	S.nframe++;
}

static void
popframe(void)
{
	S.nframe--;
}

/* Names are user text of any length and paths nest them (conv1.lin.weight
 * under layers of layers), so every string built from them is sized to
 * fit (astrfmt), never put in a fixed buffer. */
const char *
tystr(Type t)
{
	int n = snprinttype(NULL, 0, S.mod, t);
	char *s = arena_alloc(S.arena, (size_t)n + 1);

	snprinttype(s, (size_t)n + 1, S.mod, t);
	return s;
}

const char *
kindname(const CVal *v)
{
	static const char *names[] = {
		[CNone] = "error", [CInt] = "int", [CFloat] = "float", [CBool] = "bool",
		[CStr] = "string", [CList] = "list", [CDimv] = "size", [CSpec] = "layer constructor",
		[CInst] = "layer", [CArr] = "layer array", [CTensor] = "tensor", [CGraph] = "graph",
		[CHetero] = "heterogeneous graph", [CDict] = "dict",
	};
	return names[v->kind];
}

CVal
tensorval(Ref r)
{
	CVal v = {.kind = CNone};

	if (r == RNone)
		return v;
	v.ref = r;
	v.kind = valtype(S.fn, r).kind == TGraph ? CGraph : CTensor;
	return v;
}

Type
vtype(CVal v)
{
	return valtype(S.fn, v.ref);
}

/* scopes ------------------------------------------------------------------ */

void
bind(Scope *sc, const char *name, CVal v, int how, Loc l)
{
	Binding *b;

	for (b = sc->head; b; b = b->next)
		if (strcmp(b->name, name) == 0) {
			b->v = v;
			b->how = how;
			b->loc = l;
			return;
		}
	b = arena_alloc(S.arena, sizeof *b);
	*b = (Binding){name, v, how, l, sc->head};
	sc->head = b;
}

static Binding *
findlocal(Scope *sc, const char *name)
{
	Binding *b;

	for (b = sc->head; b; b = b->next)
		if (strcmp(b->name, name) == 0)
			return b;
	return NULL;
}

bool
binding(Ctx *c, const char *name, CVal *v)
{
	Scope *sc;
	Binding *b;

	for (sc = c->sc; sc; sc = sc->parent)
		if ((b = findlocal(sc, name))) {
			*v = b->v;
			return true;
		}
	return false;
}

/* names visible from c, for "did you mean" hints */
static const char *const *
scopenames(Ctx *c)
{
	static const char *names[129];
	Scope *sc;
	Binding *b;
	int n = 0;

	for (sc = c->sc; sc; sc = sc->parent)
		for (b = sc->head; b && n < 128; b = b->next)
			names[n++] = b->name;
	names[n] = NULL;
	return names;
}

/* compile-time values ------------------------------------------------------ */

static bool
isnum(const CVal *v)
{
	return v->kind == CInt || v->kind == CFloat;
}

static double
numval(const CVal *v)
{
	return v->kind == CInt ? (double)v->i : v->f;
}

static CVal
mkint(int64_t i)
{
	return (CVal){.kind = CInt, .i = i};
}

static CVal
mkbool(bool b)
{
	return (CVal){.kind = CBool, .i = b};
}

static CVal
mkfloat(double f)
{
	return (CVal){.kind = CFloat, .f = f};
}

static CVal
mkdim(Dim d)
{
	return (CVal){.kind = CDimv, .dim = d};
}

static const CVal none = {.kind = CNone};

bool
todim(Ctx *c, CVal v, Loc l, Dim *d)
{
	(void)c;
	if (v.kind == CDimv) {
		*d = v.dim;
		return true;
	}
	if (v.kind == CInt) {
		if (v.i < 0) {
			serror(l, "negative dimension %lld", (long long)v.i);
			return false;
		}
		if (v.i > DIMMAX) {
			serror(l, "dimension %lld is too large (the limit is %d)", (long long)v.i, DIMMAX);
			return false;
		}
		*d = (Dim)v.i;
		return true;
	}
	if (v.kind != CNone)
		serror(l, "a dimension must be an int or a size, not a %s", kindname(&v));
	return false;
}

/* a dim as a compile-time value: constants are plain ints */
static CVal
dimval(Dim d)
{
	return dimisconst(d) ? mkint(dimconstval(d)) : mkdim(d);
}

/* dicts ----------------------------------------------------------------------
 * A dict maps compile-time keys to any values (tensors too), in
 * insertion order, as Python's: HeteroConv's convs keyed by edge type
 * and its per-node-type inputs and outputs.  Keys are strings, ints,
 * bools and tuples (lists) of them, compared by value. */

static bool
iskey(const CVal *k)
{
	if (k->kind == CList) {
		for (int i = 0; i < k->n; i++)
			if (!iskey(&k->elems[i]))
				return false;
		return true;
	}
	return k->kind == CStr || k->kind == CInt || k->kind == CBool;
}

static bool
keyeq(const CVal *a, const CVal *b)
{
	if (a->kind != b->kind)
		return false;
	switch (a->kind) {
	case CStr:
		return strcmp(a->s, b->s) == 0;
	case CList:
		if (a->n != b->n)
			return false;
		for (int i = 0; i < a->n; i++)
			if (!keyeq(&a->elems[i], &b->elems[i]))
				return false;
		return true;
	default:
		return a->i == b->i;
	}
}

/* a key as Python writes it, for messages: "paper", ("paper", "cites", "paper") */
static const char *
keystr(const CVal *k)
{
	const char *s;

	switch (k->kind) {
	case CStr:
		return astrfmt(S.arena, "\"%s\"", k->s);
	case CList:   /* cut short: a key may nest deep */
		s = "(";
		for (int i = 0; i < k->n && strlen(s) < 200; i++)
			s = astrfmt(S.arena, "%s%s%s", s, i ? ", " : "", keystr(&k->elems[i]));
		return astrfmt(S.arena, "%.200s%s)", s, strlen(s) > 200 ? "..." : "");
	case CBool:
		return k->i ? "true" : "false";
	default:
		return astrfmt(S.arena, "%lld", (long long)k->i);
	}
}

static int
dictfind(const CVal *d, const CVal *k)
{
	for (int i = 0; i < d->n; i++)
		if (keyeq(&d->keys[i], k))
			return i;
	return -1;
}

/* false (reported once per model) when copying n more elements of lists
 * or dicts passes MaxCopied */
static bool
copying(long n, Loc l)
{
	if (S.copied <= MaxCopied && (S.copied += n) > MaxCopied)
		serror(l, "lists and dicts built with + grow too large: more than %d elements copied in all "
		       "(each + copies its operands)", MaxCopied);
	return S.copied <= MaxCopied;
}

/* d with k mapped to v: a new dict (values are immutable); a key d has
 * keeps its place, as Python's d[k] = v */
static CVal
dictput(CVal d, CVal k, CVal v, Loc l)
{
	int i = dictfind(&d, &k), n = d.n + (i < 0);
	CVal r = {.kind = CDict, .n = n};

	if (!copying(n, l))
		return none;

	r.keys = arena_alloc(S.arena, (size_t)(n + 1) * sizeof *r.keys);
	r.elems = arena_alloc(S.arena, (size_t)(n + 1) * sizeof *r.elems);
	if (d.n) {
		memcpy(r.keys, d.keys, (size_t)d.n * sizeof *r.keys);
		memcpy(r.elems, d.elems, (size_t)d.n * sizeof *r.elems);
	}
	r.keys[i < 0 ? d.n : i] = k;
	r.elems[i < 0 ? d.n : i] = v;
	return r;
}

/* d's keys as a list (what a for loop over d runs over) */
CVal
dictkeys(CVal d)
{
	CVal l = {.kind = CList, .n = d.n, .elems = d.keys};

	return l;
}

static CVal
evaldict(Ctx *c, Node *n)
{
	CVal d = {.kind = CDict}, k, v;

	for (int i = 0; i + 1 < n->args.n; i += 2) {
		k = eval(c, n->args.v[i]);
		v = eval(c, n->args.v[i + 1]);
		if (k.kind == CNone || v.kind == CNone)
			return none;
		if (!iskey(&k)) {
			serror(n->args.v[i]->loc, "a dict key is a string, an int, a bool or a tuple of them, not a %s",
			       kindname(&k));
			return none;
		}
		if (dictfind(&d, &k) >= 0) {
			serror(n->args.v[i]->loc, "duplicate key %s in a dict", keystr(&k));
			return none;
		}
		if ((d = dictput(d, k, v, n->loc)).kind == CNone)
			return none;
	}
	return d;
}

static CVal
evalconstbinary(Ctx *c, Node *n, CVal a, CVal b)
{
	Dim x, y, r;
	bool ok = true;
	double fa, fb;

	/* sizes: + - * over symbolic dims */
	if ((a.kind == CDimv || b.kind == CDimv) && (a.kind == CDimv || a.kind == CInt) &&
	    (b.kind == CDimv || b.kind == CInt)) {
		if (n->op == BEq || n->op == BNe) {
			if (!todim(c, a, n->loc, &x) || !todim(c, b, n->loc, &y))
				return none;
			return mkbool((x == y) == (n->op == BEq));
		}
		if (n->op != BAdd && n->op != BSub && n->op != BMul) {
			serror(n->loc, "only +, - and * apply to sizes");
			return none;
		}
		if (!todim(c, a, n->lhs->loc, &x) || !todim(c, b, n->rhs->loc, &y))
			return none;
		r = n->op == BAdd ? dimadd(S.mod, x, y, &ok) : n->op == BSub ? dimsub(S.mod, x, y, &ok)
		                                                             : dimmul(S.mod, x, y, &ok);
		if (!ok) {
			serror(n->loc, "size arithmetic overflows or goes negative");
			return none;
		}
		return dimval(r);
	}
	if (n->op == BAnd || n->op == BOr) {
		if (a.kind != CBool || b.kind != CBool) {
			serror(n->loc, "'%s' needs bools, got %s and %s", n->op == BAnd ? "and" : "or", kindname(&a), kindname(&b));
			return none;
		}
		return mkbool(n->op == BAnd ? a.i && b.i : a.i || b.i);
	}
	if (n->op == BEq || n->op == BNe) {
		bool eq;
		if (isnum(&a) && isnum(&b))
			eq = numval(&a) == numval(&b);
		else if (a.kind == CStr && b.kind == CStr)
			eq = strcmp(a.s, b.s) == 0;
		else if (a.kind == CBool && b.kind == CBool)
			eq = a.i == b.i;
		else {
			serror(n->loc, "cannot compare a %s with a %s", kindname(&a), kindname(&b));
			return none;
		}
		return mkbool(eq == (n->op == BEq));
	}
	if (n->op == BAdd && a.kind == CStr && b.kind == CStr)   /* Python's: "author" + "__" */
		return (CVal){.kind = CStr, .s = astrfmt(S.arena, "%s%s", a.s, b.s)};
	if (n->op == BAdd && a.kind == CList && b.kind == CList) {   /* Python's: [a] + [b] */
		CVal l = {.kind = CList, .n = a.n + b.n};
		if (!copying(l.n, n->loc))
			return none;
		l.elems = arena_alloc(S.arena, (size_t)(l.n + 1) * sizeof *l.elems);
		if (a.n)
			memcpy(l.elems, a.elems, (size_t)a.n * sizeof *l.elems);
		if (b.n)
			memcpy(l.elems + a.n, b.elems, (size_t)b.n * sizeof *l.elems);
		return l;
	}
	if (n->op == BAdd && a.kind == CDict && b.kind == CDict) {   /* Python's a | b */
		for (int i = 0; i < b.n && a.kind != CNone; i++)
			a = dictput(a, b.keys[i], b.elems[i], n->loc);
		return a;
	}
	if (!isnum(&a) || !isnum(&b)) {
		serror(n->loc, "operator needs numbers here, got %s and %s", kindname(&a), kindname(&b));
		return none;
	}
	if (n->op == BLt || n->op == BLe || n->op == BGt || n->op == BGe) {
		fa = numval(&a), fb = numval(&b);
		if (a.kind == CInt && b.kind == CInt) {
			int64_t p = a.i, q = b.i;
			return mkbool(n->op == BLt ? p < q : n->op == BLe ? p <= q : n->op == BGt ? p > q : p >= q);
		}
		return mkbool(n->op == BLt ? fa < fb : n->op == BLe ? fa <= fb : n->op == BGt ? fa > fb : fa >= fb);
	}
	if (a.kind == CInt && b.kind == CInt && n->op != BDiv && n->op != BPow) {
		int64_t r2;
		bool ovf = n->op == BAdd ? __builtin_add_overflow(a.i, b.i, &r2)
		         : n->op == BSub ? __builtin_sub_overflow(a.i, b.i, &r2)
		         : n->op == BMul ? __builtin_mul_overflow(a.i, b.i, &r2) : true;
		if (n->op == BMatmul) {
			serror(n->loc, "'@' needs tensors, got ints");
			return none;
		}
		if (ovf) {
			serror(n->loc, "integer overflow in constant expression");
			return none;
		}
		return mkint(r2);
	}
	fa = numval(&a), fb = numval(&b);
	switch (n->op) {
	case BAdd: return mkfloat(fa + fb);
	case BSub: return mkfloat(fa - fb);
	case BMul: return mkfloat(fa * fb);
	case BDiv: return mkfloat(fa / fb);
	case BPow: return mkfloat(pow(fa, fb));
	default:
		serror(n->loc, "'@' needs tensors, got numbers");
		return none;
	}
}

Ref
scalarconst(Ctx *c, CVal v, int dtype, Loc l)
{
	Attr a;
	Type t = tensortype(dtype, 0, NULL);
	CVal r;

	if (v.kind == CBool || !isnum(&v)) {
		serror(l, "expected a tensor or a number, got a %s", kindname(&v));
		return RNone;
	}
	if (dtypeisint(dtype) && v.kind == CFloat) {
		serror(l, "dtype mismatch: float constant %g used with an %s tensor", v.f, dtypename(dtype));
		return RNone;
	}
	a = mkattrfloat(S.mod->arena, "value", numval(&v));
	r = emitop(c, Oconst, NULL, 0, &a, 1, &t, l);
	return r.kind == CNone ? RNone : r.ref;
}

CVal
emitop(Ctx *c, int op, const Ref *arg, int narg, const Attr *attr, int nattr,
       const Type *decl, Loc l)
{
	Type at[64] = {{0}}, out;
	char err[512];      /* typecheckop's message: it bounds its own parts */
	int k;

	(void)c;
	for (k = 0; k < narg; k++) {
		if (arg[k] == RNone)
			return none;
		at[k] = valtype(S.fn, arg[k]);
	}
	if (!typecheckop(S.mod, op, at, narg, attr, nattr, decl, &out, err, sizeof err)) {
		serror(l, "%s", err);
		return none;
	}
	return tensorval(emit(S.fn, op, out, arg, narg, attr, nattr, NULL, l));
}

static int
binop2ir(int op)
{
	switch (op) {
	case BAdd: return Oadd;
	case BSub: return Osub;
	case BMul: return Omul;
	case BDiv: return Odiv;
	case BPow: return Opow;
	case BMatmul: return Omatmul;
	}
	return Oxxx;
}

static CVal
evalbinary(Ctx *c, Node *n)
{
	CVal a, b;
	Ref r[2];
	int op;

	if (n->op == BAnd || n->op == BOr) {
		/* short circuit, so `x == "a" and f(...)` guards like Python */
		a = eval(c, n->lhs);
		if (a.kind == CBool && (n->op == BAnd ? !a.i : a.i))
			return a;
		b = eval(c, n->rhs);
		if (a.kind == CNone || b.kind == CNone)
			return none;
		return evalconstbinary(c, n, a, b);
	}
	a = eval(c, n->lhs);
	b = eval(c, n->rhs);
	if (a.kind == CNone || b.kind == CNone)
		return none;
	if (a.kind != CTensor && b.kind != CTensor)
		return evalconstbinary(c, n, a, b);
	op = binop2ir(n->op);
	if (op == Oxxx) {
		serror(n->loc, "comparison of tensors is not supported");
		return none;
	}
	if (a.kind == CGraph || b.kind == CGraph) {
		serror(n->loc, "arithmetic on a graph");
		return none;
	}
	/* a number meets a tensor: it takes the tensor's dtype */
	r[0] = a.kind == CTensor ? a.ref : scalarconst(c, a, vtype(b).dtype, n->lhs->loc);
	r[1] = b.kind == CTensor ? b.ref : scalarconst(c, b, vtype(a).dtype, n->rhs->loc);
	return emitop(c, op, r, 2, NULL, 0, NULL, n->loc);
}

static CVal
evalunary(Ctx *c, Node *n)
{
	CVal a = eval(c, n->lhs);

	if (a.kind == CNone)
		return none;
	if (n->op == UNot) {
		if (a.kind != CBool) {
			serror(n->loc, "'not' needs a bool, got a %s", kindname(&a));
			return none;
		}
		return mkbool(!a.i);
	}
	switch (a.kind) {
	case CInt:
		if (a.i == INT64_MIN) {
			serror(n->loc, "integer overflow in constant expression");
			return none;
		}
		return mkint(-a.i);
	case CFloat:
		return mkfloat(-a.f);
	case CTensor:
		return emitop(c, Oneg, &a.ref, 1, NULL, 0, NULL, n->loc);
	default:
		serror(n->loc, "cannot negate a %s", kindname(&a));
		return none;
	}
}

static CVal heterorel(const Hetero *h, const char *key, Loc l);
static Inst *arrkey(const InstArr *a, const char *key);

static CVal
evalmember(Ctx *c, Node *n)
{
	CVal a = eval(c, n->lhs);
	Binding *b;
	Type t;
	int64_t perm[MaxRank];
	Attr at;
	int k;

	if (a.kind == CNone)
		return none;
	if (a.kind == CTensor && strcmp(n->name, "T") == 0) {
		t = vtype(a);
		for (k = 0; k < t.rank; k++)
			perm[k] = t.rank - 1 - k;
		at = mkattrints(S.mod->arena, "perm", perm, t.rank);
		return emitop(c, Otranspose, &a.ref, 1, &at, 1, NULL, n->loc);
	}
	if (a.kind == CHetero)
		return heterorel(a.het, n->name, n->loc);
	if (a.kind == CInst) {
		if ((b = findlocal(&a.inst->scope, n->name)) && b->how == BDecl)
			return b->v;
		serror(n->loc, "layer '%s' has no parameter or sublayer '%s'", a.inst->path, n->name);
		return none;
	}
	serror(n->loc, "a %s has no member '%s'", kindname(&a), n->name);
	return none;
}

/* the layer of a string-keyed array under key, or NULL */
static Inst *
arrkey(const InstArr *a, const char *key)
{
	for (int i = 0; i < a->nkey; i++)
		if (strcmp(a->key[i], key) == 0)
			return a->kv[i];
	return NULL;
}

/* relation key ("src__rel__dst") of heterogeneous graph h, as a graph
 * value; an error listing h's edge types if it has none such */
static CVal
heterorel(const Hetero *h, const char *key, Loc l)
{
	char *list;
	int i;

	for (i = 0; i < h->nedge; i++)
		if (strcmp(h->key[i], key) == 0)
			return (CVal){.kind = CGraph, .ref = h->rel[i]};
	list = "";
	for (i = 0; i < h->nedge; i++)
		list = astrfmt(S.arena, "%s%s(%s, %s, %s)", list, i ? ", " : "", h->edge[i][0], h->edge[i][1], h->edge[i][2]);
	serror(l, "the heterogeneous graph has no edge type %s; its edge types are %s", key, list);
	return none;
}

bool
indexfits(Ref idx, Dim n, const char *op, Loc l)
{
	for (struct IdxRange *x = S.idxrange; x; x = x->next)
		if (x->fn == S.fn && x->ref == idx && x->nodes != n) {
			serror(l, "%s: the index is %s, which indexes %s nodes, but the %s has %s rows", op, x->what,
			       dimstr(S.arena, S.mod, x->nodes), strcmp(op, "gather") == 0 ? "input" : "result",
			       dimstr(S.arena, S.mod, n));
			return false;
		}
	return true;
}

static CVal
evalindex(Ctx *c, Node *n)
{
	CVal a = eval(c, n->lhs), i;
	Ref r[2];

	if (a.kind == CHetero) {
		/* g["author", "writes", "paper"] or g["author__writes__paper"], as HeteroData */
		const char *part[3], *key;
		int k;
		if (n->args.n != 1 && n->args.n != 3) {
			serror(n->loc, "a heterogeneous graph is indexed by an edge type: g[\"src\", \"rel\", \"dst\"]");
			return none;
		}
		for (k = 0; k < n->args.n; k++) {
			i = eval(c, n->args.v[k]);
			if (i.kind == CNone)
				return none;
			if (i.kind != CStr) {
				serror(n->args.v[k]->loc, "an edge type's names are strings, not a %s", kindname(&i));
				return none;
			}
			part[k] = i.s;
		}
		key = n->args.n == 1 ? part[0] : astrfmt(S.arena, "%s__%s__%s", part[0], part[1], part[2]);
		return heterorel(a.het, key, n->loc);
	}
	if (n->args.n != 1) {
		serror(n->loc, "only one index is supported");
		return none;
	}
	i = eval(c, n->args.v[0]);
	if (a.kind == CNone || i.kind == CNone)
		return none;
	if (a.kind == CDict) {
		int k = iskey(&i) ? dictfind(&a, &i) : -1;
		const char *list = "";
		if (k >= 0)
			return a.elems[k];
		for (k = 0; k < a.n && strlen(list) < 400; k++)   /* cut short: a dict may be long */
			list = astrfmt(S.arena, "%s%s%s", list, k ? ", " : "", keystr(&a.keys[k]));
		if (k < a.n)
			list = astrfmt(S.arena, "%s, ...", list);
		if (!iskey(&i))
			serror(n->args.v[0]->loc, "a dict is indexed by a string, an int, a bool or a tuple of them, not a %s",
			       kindname(&i));
		else
			serror(n->args.v[0]->loc, "the dict has no key %s; its keys are %s", keystr(&i), a.n ? list : "none");
		return none;
	}
	if (a.kind == CArr && i.kind == CStr) {
		Inst *in = arrkey(a.arr, i.s);
		if (!in)
			serror(n->args.v[0]->loc, "no layer under key \"%s\"", i.s);
		return in ? (CVal){.kind = CInst, .inst = in} : none;
	}
	if (a.kind == CTensor) {
		if (i.kind != CTensor) {
			serror(n->args.v[0]->loc, "a tensor is indexed by an integer tensor (gather), not a %s", kindname(&i));
			return none;
		}
		r[0] = a.ref, r[1] = i.ref;
		if (vtype(a).rank >= 1 && !indexfits(i.ref, vtype(a).dim[0], "gather", n->loc))
			return none;
		return emitop(c, Ogather, r, 2, NULL, 0, NULL, n->loc);
	}
	if (i.kind != CInt) {
		serror(n->args.v[0]->loc, "index must be an int, not a %s", kindname(&i));
		return none;
	}
	if (a.kind == CList) {
		if (i.i < 0 || i.i >= a.n) {
			serror(n->args.v[0]->loc, "list index %lld out of range [0, %d)", (long long)i.i, a.n);
			return none;
		}
		return a.elems[i.i];
	}
	if (a.kind == CArr) {
		if (i.i < 0 || i.i >= a.arr->n || !a.arr->v[i.i]) {
			serror(n->args.v[0]->loc, "no layer at index %lld", (long long)i.i);
			return none;
		}
		return (CVal){.kind = CInst, .inst = a.arr->v[i.i]};
	}
	serror(n->loc, "cannot index a %s", kindname(&a));
	return none;
}

/* layers ------------------------------------------------------------------ */

static void execbody(Ctx *c, NodeList *body, CVal *ret, int *nret, bool *returned);
static CVal callinst(Ctx *c, Inst *in, Node *call);

static bool
checkformaltype(Node *formal, CVal v, const char *layer)
{
	int want;

	if (!formal->type)
		return true;
	want = (int)formal->type->ival;
	if (formal->type->kind != ND_TSCALAR) {
		serror(formal->loc, "constructor argument '%s' must have a compile-time type (int, float, bool, str, layer)", formal->name);
		return false;
	}
	if ((want == SInt && (v.kind == CInt || (v.kind == CDimv && dimisconst(v.dim)))) ||
	    (want == SFloat && isnum(&v)) || (want == SBool && v.kind == CBool) ||
	    (want == SStr && v.kind == CStr) || (want == SLayer && (v.kind == CSpec || v.kind == CInst)))
		return true;
	return false;
	(void)layer;
}

static bool
isliteral(Node *n)
{
	if (n->kind == ND_UNARY)
		n = n->lhs;
	return n->kind == ND_INT || n->kind == ND_FLOAT || n->kind == ND_STR || n->kind == ND_BOOL;
}

static CVal
coerce(Node *formal, CVal v)
{
	if (formal->type && formal->type->ival == SFloat && v.kind == CInt)
		return mkfloat((double)v.i);
	return v;
}

static Inst *instantiate(Ctx *c, Spec *sp, const char *path, Loc at);

/* Run a layer's body with its constructor arguments bound. */
static Inst *
instantiate(Ctx *c, Spec *sp, const char *path, Loc at)
{
	Node *def = sp->def, *f;
	Inst *in;
	Ctx ic;
	int i, k, npos = 0;
	bool *given;
	CVal v, ignored[1];
	int nret = 0;
	bool returned = false;

	(void)c;
	in = arena_alloc(S.arena, sizeof *in);
	in->def = def;
	in->path = path;
	in->loc = at;
	in->scope.parent = NULL;
	ic = (Ctx){.sc = &in->scope, .self = in, .inlayerbody = true};
	ic.prefix = path[0] ? astrfmt(S.arena, "%s.", path) : "";
	if (S.depth >= MaxDepth) {
		serror(at, "layers nested too deeply (is '%s' recursive?)", def->name);
		return NULL;
	}
	given = arena_alloc(S.arena, (def->params.n + 1) * sizeof(bool));
	for (i = 0; i < sp->nargs; i++)
		if (!sp->kw[i]) {
			if (npos >= def->params.n) {
				serror(sp->call->loc, "%s takes at most %d argument%s, got %d", def->name,
				       def->params.n, def->params.n == 1 ? "" : "s", npos + 1);
				return NULL;
			}
			npos++;
		}
	for (i = npos; i < sp->nargs; i++) {
		for (k = 0; k < def->params.n; k++)
			if (strcmp(sp->kw[i], def->params.v[k]->name) == 0)
				break;
		if (k == def->params.n) {
			const char *names[65] = {0};
			const char *near;
			for (k = 0; k < def->params.n && k < 64; k++)
				names[k] = def->params.v[k]->name;
			near = closestname(sp->kw[i], names);
			serror(sp->call->loc, "%s has no argument '%s'%s%s%s", def->name, sp->kw[i],
			       near ? "; did you mean '" : "", near ? near : "", near ? "'?" : "");
			return NULL;
		}
	}
	for (k = 0; k < def->params.n; k++) {
		bool have = k < npos || def->params.v[k]->init;
		for (i = npos; i < sp->nargs && !have; i++)
			have = strcmp(sp->kw[i], def->params.v[k]->name) == 0;
		if (!have) {
			serror(sp->call->loc, "missing argument '%s' of %s", def->params.v[k]->name, def->name);
			return NULL;
		}
	}
	S.depth++;
	pushframe("in layer %s instantiated here", def->name, at);
	/* Given arguments first, then defaults: literal ones, then the rest
	 * in order, so a default may name another argument as PyG's
	 * add_self_loops=None means "same as normalize". */
	for (int pass = 0; pass < 3; pass++)
		for (k = 0; k < def->params.n; k++) {
			f = def->params.v[k];
			if (pass == 0) {
				v = none;
				if (k < npos) {
					v = sp->args[k];
					given[k] = true;
				}
				for (i = npos; i < sp->nargs; i++)
					if (strcmp(sp->kw[i], f->name) == 0) {
						if (given[k]) {
							serror(sp->call->loc, "argument '%s' of %s given twice", f->name, def->name);
							goto fail;
						}
						v = sp->args[i];
						given[k] = true;
					}
				if (!given[k])
					continue;
			} else {
				if (given[k] || findlocal(&in->scope, f->name))
					continue;
				if (!f->init) {
					serror(sp->call->loc, "missing argument '%s' of %s", f->name, def->name);
					goto fail;
				}
				if (pass == 1 && !isliteral(f->init))
					continue;
				v = eval(&ic, f->init);
			}
			if (v.kind == CNone)
				goto fail;
			if (!checkformaltype(f, v, def->name)) {
				serror(given[k] ? sp->call->loc : f->init->loc,
				       "argument '%s' of %s must be %s, got a %s", f->name, def->name,
				       f->type->ival == SInt ? "an int" : f->type->ival == SFloat ? "a float" :
				       f->type->ival == SBool ? "a bool" : f->type->ival == SStr ? "a string" : "a layer",
				       kindname(&v));
				goto fail;
			}
			v = coerce(f, v);
			/* a layer argument becomes a sublayer named after the formal */
			if (v.kind == CSpec) {
				Inst *sl = instantiate(&ic, v.spec, astrfmt(S.arena, "%s%s", ic.prefix, f->name), v.spec->call->loc);
				if (!sl)
					goto fail;
				bind(&in->scope, f->name, (CVal){.kind = CInst, .inst = sl}, BDecl, f->loc);
			} else
				bind(&in->scope, f->name, v, BArg, f->loc);
		}
	execbody(&ic, &def->body, ignored, &nret, &returned);
	S.depth--;
	popframe();
	return in;
fail:
	S.depth--;
	popframe();
	return NULL;
}

/* Evaluate the arguments of a layer constructor call into a Spec. */
static CVal
makespec(Ctx *c, Node *def, Node *call)
{
	Spec *sp;
	int i, k;
	Node *a;

	sp = arena_alloc(S.arena, sizeof *sp);
	sp->def = def;
	sp->call = call;
	sp->nargs = call->args.n;
	sp->args = arena_alloc(S.arena, (sp->nargs + 1) * sizeof(CVal));
	sp->kw = arena_alloc(S.arena, (sp->nargs + 1) * sizeof(char *));
	for (i = 0, k = 0; i < call->args.n; i++) {
		a = call->args.v[i];
		if (a->kind == ND_KWARG) {
			sp->kw[i] = a->name;
			sp->args[i] = eval(c, a->lhs);
		} else {
			if (i > 0 && sp->kw[i - 1]) {
				serror(a->loc, "positional argument after a keyword argument");
				return none;
			}
			sp->args[i] = eval(c, a);
		}
		if (sp->args[i].kind == CNone)
			return none;
		if (sp->args[i].kind == CTensor || sp->args[i].kind == CGraph) {
			serror(a->loc, "constructor arguments are compile-time values; %s got a %s", def->name, kindname(&sp->args[i]));
			return none;
		}
		k++;
	}
	return (CVal){.kind = CSpec, .spec = sp};
}

/* A relation formal, graph[Ns -> Nd, E]: a homogeneous graph[N, E] (or
 * a batch of graphs) is the relation with Ns = Nd = N, so a layer
 * written for relations takes either. */
static bool
matchrelation(Ctx *c, Node *ty, Type actual, const char *what, Loc at)
{
	const char *got = tystr(actual);
	Dim have[3] = {graphsrcnodes(actual), actual.dim[0], actual.dim[1]}, want[3], d;
	Node *dn;
	CVal v;
	int k;

	for (k = 0; k < 3; k++) {
		dn = ty->args.v[k];
		want[k] = have[k];
		if (dn->kind == ND_NAME && !binding(c, dn->name, &v)) {
			bind(c->sc, dn->name, dimval(have[k]), BLocal, dn->loc);
			continue;
		}
		v = eval(c, dn);
		if (!todim(c, v, dn->loc, &d))
			return false;
		want[k] = d;
	}
	if (want[0] != have[0] || want[1] != have[1] || want[2] != have[2]) {
		serror(at, "type mismatch: %s expects %s, got %s", what,
		       tystr(relationtype(want[0], want[1], want[2])), got);
		return false;
	}
	return true;
}

/* Match an actual type against a formal's declared type.  Names in the
 * formal dims that are unbound in sc bind to the actual sizes. */
static bool
matchtype(Ctx *c, Node *ty, Type actual, const char *what, Loc at)
{
	static const char *const gdefault[] = {"N", "E", "B"};
	const char *got = tystr(actual);
	Type expect;
	int k, nd;
	Node *dn;
	CVal v;
	Dim d;

	if (ty->kind == ND_TSCALAR) {
		serror(at, "%s must be a tensor or graph, the declared type is a compile-time type", what);
		return false;
	}
	if ((ty->kind == ND_TGRAPH) != (actual.kind == TGraph)) {
		serror(at, "%s expects a %s, got %s", what, ty->kind == ND_TGRAPH ? "graph" : "tensor", got);
		return false;
	}
	if (ty->kind == ND_TGRAPH && ty->ival == 2) {
		serror(ty->loc, "a heterogeneous graph is a model input; a layer takes its relations (g[\"src\", \"rel\", \"dst\"])");
		return false;
	}
	if (ty->kind == ND_TGRAPH && ty->ival)
		return matchrelation(c, ty, actual, what, at);
	if (ty->kind == ND_TGRAPH) {
		nd = ty->args.n ? ty->args.n : 2;
		if (nd == 3 && actual.rank != 3) {
			serror(at, "%s expects a batched graph[N, E, B], got %s", what, got);
			return false;
		}
	} else {
		nd = ty->args.n;
		if ((int)ty->ival != actual.dtype) {
			serror(at, "dtype mismatch: %s expects %s, got %s", what, dtypename((int)ty->ival), got);
			return false;
		}
		if (nd != actual.rank) {
			serror(at, "shape mismatch: %s expects rank %d, got %s", what, nd, got);
			return false;
		}
	}
	expect = actual;
	for (k = 0; k < nd; k++) {
		dn = k < ty->args.n ? ty->args.v[k] : NULL;
		if (!dn || (dn->kind == ND_NAME && !binding(c, dn->name, &v))) {
			bind(c->sc, dn ? dn->name : gdefault[k], dimval(actual.dim[k]), BLocal, dn ? dn->loc : ty->loc);
			continue;
		}
		v = eval(c, dn);
		if (!todim(c, v, dn->loc, &d))
			return false;
		expect.dim[k] = d;
	}
	if (!typeeq(expect, actual)) {
		serror(at, "shape mismatch: %s expects %s, got %s", what, tystr(expect), got);
		return false;
	}
	return true;
}

static CVal
callinst(Ctx *c, Inst *in, Node *call)
{
	Node *fn = in->forward, *f, *a;
	Scope local = {.parent = &in->scope};
	Ctx fc = {.sc = &local, .prefix = NULL, .self = in, .intensor = true};
	CVal args[64], ret[8];
	int i, k, nret = 0, npos, nreq;
	bool returned = false, given[64] = {0};
	const char *what, *names[65];   /* NULL-terminated: "did you mean" reads it as a list */

	if (!fn) {
		serror(call->loc, "layer %s ('%s') has no forward function", in->def->name, in->path);
		return none;
	}
	if (fn->params.n > 64) {
		serror(fn->loc, "too many parameters");
		return none;
	}
	/* formals with a default are optional and come last (PyG's
	 * edge_attr=None): an omitted one is bound to its default, a
	 * compile-time value that the body tests, and is not type-checked */
	nreq = 0;
	names[fn->params.n] = NULL;
	for (k = 0; k < fn->params.n; k++) {
		names[k] = fn->params.v[k]->name;
		if (!fn->params.v[k]->init && nreq < k) {
			serror(fn->params.v[k]->loc, "forward argument '%s' without a default follows one with a default",
			       names[k]);
			return none;
		}
		if (!fn->params.v[k]->init)
			nreq = k + 1;
	}
	what = astrfmt(S.arena, "%s (%s)", in->path, in->def->name);
	if (!bindargs(c, call, what, names, fn->params.n, nreq, args, given))
		return none;
	if (S.depth >= MaxDepth) {
		serror(call->loc, "calls nested too deeply");
		return none;
	}
	fc.prefix = astrfmt(S.arena, "%s.", in->path);
	for (k = 0; k < fn->params.n; k++) {
		f = fn->params.v[k];
		if (!given[k])
			continue;
		if (args[k].kind == CNone)
			return none;
		/* an untyped formal takes any value: a heterogeneous graph, a
		 * dict of per-type tensors (HeteroConv's) */
		if (f->type && args[k].kind != CTensor && args[k].kind != CGraph) {
			a = call->args.v[k < call->args.n ? k : 0];
			serror(a->loc, "argument '%s' of %s must be a tensor or graph, got a %s", f->name, what, kindname(&args[k]));
			return none;
		}
	}
	S.depth++;
	pushframe("in the forward of %s called here", in->path, call->loc);
	for (k = 0; k < fn->params.n; k++) {
		const char *w;
		f = fn->params.v[k];
		w = astrfmt(S.arena, "argument '%s' of %s", f->name, what);
		npos = k < call->args.n ? k : 0;
		/* a default is evaluated with the formals before it bound, so
		 * it may name them (SAGEConv's x_dst = x) */
		if (!given[k] && (args[k] = eval(&fc, f->init)).kind == CNone)
			goto fail;
		if (given[k] && f->type &&
		    !matchtype(&fc, f->type, vtype(args[k]), w, call->args.n ? call->args.v[npos]->loc : call->loc))
			goto fail;
		bind(&local, f->name, args[k], BLocal, f->loc);
	}
	execbody(&fc, &fn->body, ret, &nret, &returned);
	if (diag_nerrors() && !returned)
		goto fail;
	if (!returned) {
		serror(fn->loc, "forward of %s ends without a return", in->def->name);
		goto fail;
	}
	/* a forward with no declared return type returns one value of any kind */
	if (fn->rets.n ? nret != fn->rets.n : nret != 1) {
		serror(fn->loc, "forward of %s returns %d value%s, declared %d", in->def->name, nret, nret == 1 ? "" : "s",
		       fn->rets.n ? fn->rets.n : 1);
		goto fail;
	}
	for (i = 0; i < nret; i++) {
		if (ret[i].kind == CNone)
			goto fail;
		what = astrfmt(S.arena, "the return value of %s.forward", in->def->name);
		if (fn->rets.n && !matchtype(&fc, fn->rets.v[i], vtype(ret[i]), what, fn->rets.v[i]->loc))
			goto fail;
	}
	S.depth--;
	popframe();
	if (nret == 1)
		return ret[0];
	{
		CVal l = {.kind = CList, .n = nret};
		l.elems = arena_alloc(S.arena, nret * sizeof(CVal));
		memcpy(l.elems, ret, nret * sizeof(CVal));
		return l;
	}
fail:
	S.depth--;
	popframe();
	return none;
}

static CVal
evalcall(Ctx *c, Node *n)
{
	CVal f;
	Node *def;
	const char *near;

	if (n->lhs->kind == ND_NAME) {
		const char *name = n->lhs->name;
		/* a local name that is not callable (a bool named add_self_loops,
		 * a float named dropout) does not hide the primitive */
		if (binding(c, name, &f) && (f.kind == CInst || !isbuiltin(name)))
			goto value;
		if (isbuiltin(name))
			return callbuiltin(c, n, name);
		if ((def = lookupdef(name))) {
			if (def->kind == ND_MODEL) {
				serror(n->loc, "'%s' is a model; only layers can be used inside a model", name);
				return none;
			}
			return makespec(c, def, n);
		}
		near = closestname(name, NULL);
		serror(n->lhs->loc, "unknown function or layer '%s'%s%s%s", name,
		       near ? "; did you mean '" : "", near ? near : "", near ? "'?" : "");
		return none;
	}
	f = eval(c, n->lhs);
value:
	if (f.kind == CNone)
		return none;
	if (f.kind == CInst) {
		if (!c->intensor) {
			serror(n->loc, "layers can only be called inside fn forward or a model body");
			return none;
		}
		return callinst(c, f.inst, n);
	}
	serror(n->lhs->loc, "a %s is not callable", kindname(&f));
	return none;
}

static CVal
eval1(Ctx *c, Node *n)
{
	CVal v;
	const char *near;
	int i;

	switch (n->kind) {
	case ND_INT:
		return mkint(n->ival);
	case ND_FLOAT:
		return mkfloat(n->fval);
	case ND_BOOL:
		return mkbool(n->ival != 0);
	case ND_STR:
		return (CVal){.kind = CStr, .s = n->str};
	case ND_NAME:
		if (binding(c, n->name, &v))
			return v;
		/* true while a training step is lowered (lowertrain) */
		if (strcmp(n->name, "training") == 0)
			return mkbool(S.training);
		if (lookupdef(n->name)) {
			serror(n->loc, "layer '%s' must be called with its arguments", n->name);
			return none;
		}
		if (isbuiltin(n->name)) {
			serror(n->loc, "primitive '%s' must be called", n->name);
			return none;
		}
		near = closestname(n->name, scopenames(c));
		if (strcmp(n->name, "True") == 0 || strcmp(n->name, "False") == 0)
			near = n->name[0] == 'T' ? "true" : "false";
		serror(n->loc, "unknown name '%s'%s%s%s", n->name,
		       near ? "; did you mean '" : "", near ? near : "", near ? "'?" : "");
		return none;
	case ND_LIST:
		v = (CVal){.kind = CList, .n = n->args.n};
		v.elems = arena_alloc(S.arena, (n->args.n + 1) * sizeof(CVal));
		for (i = 0; i < n->args.n; i++)
			if ((v.elems[i] = eval(c, n->args.v[i])).kind == CNone)
				return none;
		return v;
	case ND_DICT:
		return evaldict(c, n);
	case ND_BINARY:
		return evalbinary(c, n);
	case ND_UNARY:
		return evalunary(c, n);
	case ND_MEMBER:
		return evalmember(c, n);
	case ND_INDEX:
		return evalindex(c, n);
	case ND_CALL:
		return evalcall(c, n);
	case ND_KWARG:
		serror(n->loc, "keyword argument outside a call");
		return none;
	default:
		serror(n->loc, "expected an expression");
		return none;
	}
}

CVal
eval(Ctx *c, Node *n)
{
	CVal v;

	if (!deeper(n->loc))
		return none;
	v = eval1(c, n);
	S.nest--;
	return v;
}

/* statements ---------------------------------------------------------------- */

static const char *
declname(Ctx *c, Node *n, CVal *idx)
{
	if (!n->index)
		return n->name;
	*idx = eval(c, n->index);
	if (idx->kind == CStr && n->kind == ND_LAYERDECL && idx->s[0] && !strchr(idx->s, '.'))
		return astrfmt(S.arena, "%s.%s", n->name, idx->s);   /* PyG's ModuleDict */
	if (idx->kind != CInt || idx->i < 0 || idx->i > 100000) {
		if (idx->kind != CNone)
			serror(n->index->loc, "a layer or param index must be a non-negative int%s",
			       n->kind == ND_LAYERDECL ? " or a layer's a non-empty string without '.'" : "");
		return NULL;
	}
	return astrfmt(S.arena, "%s.%lld", n->name, (long long)idx->i);
}

/* A declaration may not reuse the name of another declaration. */
static bool
checkdup(Ctx *c, Node *n)
{
	Binding *b = findlocal(c->sc, n->name);

	if (b && b->how == BDecl && !(n->index && (b->v.kind == CArr || b->v.kind == CList))) {
		serror(n->loc, "duplicate definition of '%s'", n->name);
		noteat(b->loc, "previous definition is here");
		return false;
	}
	return true;
}

static bool layerdecl1(Ctx *c, Node *n);
static bool paramdecl1(Ctx *c, Node *n);

/* A failed declaration still binds its name, to poison, so later uses
 * stay silent instead of cascading into "unknown name". */
static void
declare(Ctx *c, Node *n, bool (*decl)(Ctx *, Node *))
{
	if (!decl(c, n) && !n->index && !findlocal(c->sc, n->name))
		bind(c->sc, n->name, none, BDecl, n->loc);
}

static bool
layerdecl1(Ctx *c, Node *n)
{
	CVal spec, idx = none;
	const char *name, *path;
	Inst *in;
	Binding *b;
	InstArr *arr;

	if (!c->inlayerbody) {
		serror(n->loc, "layers are declared in a layer or model body, not inside fn");
		return false;
	}
	if (!checkdup(c, n) || !(name = declname(c, n, &idx)))
		return false;
	if (n->init->kind != ND_CALL || n->init->lhs->kind != ND_NAME || !lookupdef(n->init->lhs->name) ||
	    lookupdef(n->init->lhs->name)->kind != ND_LAYER) {
		/* layer x = y, where y is a layer argument: alias it */
		spec = eval(c, n->init);
		if (spec.kind == CNone)
			return false;
		if (spec.kind != CInst && spec.kind != CSpec) {
			serror(n->init->loc, "expected a layer constructor such as Linear(16, 7), got a %s", kindname(&spec));
			return false;
		}
	} else
		spec = evalcall(c, n->init);
	if (spec.kind == CNone)
		return false;
	path = astrfmt(S.arena, "%s%s", c->prefix, name);
	if (spec.kind == CInst)
		in = spec.inst;
	else if (!(in = instantiate(c, spec.spec, path, n->loc)))
		return false;
	if (!n->index) {
		bind(c->sc, n->name, (CVal){.kind = CInst, .inst = in}, BDecl, n->loc);
		return true;
	}
	b = findlocal(c->sc, n->name);
	if (b && b->v.kind == CArr)
		arr = b->v.arr;
	else {
		arr = arena_alloc(S.arena, sizeof *arr);
		bind(c->sc, n->name, (CVal){.kind = CArr, .arr = arr}, BDecl, n->loc);
	}
	if (idx.kind == CStr) {
		if (arrkey(arr, idx.s)) {
			serror(n->loc, "duplicate definition of '%s[\"%s\"]'", n->name, idx.s);
			return false;
		}
		const char **k = arena_alloc(S.arena, (arr->nkey + 1) * sizeof *k);
		Inst **v = arena_alloc(S.arena, (arr->nkey + 1) * sizeof *v);
		if (arr->nkey) {
			memcpy(k, arr->key, arr->nkey * sizeof *k);
			memcpy(v, arr->kv, arr->nkey * sizeof *v);
		}
		k[arr->nkey] = idx.s;
		v[arr->nkey++] = in;
		arr->key = k;
		arr->kv = v;
		return true;
	}
	if (idx.i >= arr->n) {
		Inst **v = arena_alloc(S.arena, (idx.i + 1) * sizeof(Inst *));
		if (arr->n)
			memcpy(v, arr->v, arr->n * sizeof(Inst *));
		arr->v = v;
		arr->n = idx.i + 1;
	}
	if (arr->v[idx.i]) {
		serror(n->loc, "duplicate definition of '%s[%lld]'", n->name, (long long)idx.i);
		return false;
	}
	arr->v[idx.i] = in;
	return true;
}

static bool
paramdecl1(Ctx *c, Node *n)
{
	CVal idx = none, init;
	const char *name, *path;
	Node *ty = n->type;
	Dim d[MaxRank];
	Type t;
	Attr at[3];
	int k, na = 1;
	CVal v;

	if (!c->inlayerbody) {
		serror(n->loc, "params are declared in a layer or model body, not inside fn");
		return false;
	}
	if (!checkdup(c, n) || !(name = declname(c, n, &idx)))
		return false;
	if (ty->kind != ND_TTENSOR) {
		serror(ty->loc, "a param must have a tensor type such as f32[16, 7]");
		return false;
	}
	if (ty->args.n > MaxRank) {
		serror(ty->loc, "rank %d exceeds the maximum of %d", ty->args.n, MaxRank);
		return false;
	}
	for (k = 0; k < ty->args.n; k++) {
		v = eval(c, ty->args.v[k]);
		if (!todim(c, v, ty->args.v[k]->loc, &d[k]))
			return false;
		if (!dimisconst(d[k])) {
			serror(ty->args.v[k]->loc, "a param's shape must be constant; it cannot depend on the graph");
			return false;
		}
	}
	t = tensortype((int)ty->ival, ty->args.n, d);
	path = astrfmt(S.mod->arena, "%s%s", c->prefix, name);
	at[0] = mkattrstr(S.mod->arena, "name", path);
	if (n->ival)
		at[na++] = mkattrbool(S.mod->arena, "buffer", true);
	if (n->init && n->init->kind == ND_CALL && n->init->lhs->kind == ND_NAME &&
	    strcmp(n->init->lhs->name, "uniform") == 0 && !binding(c, "uniform", &init)) {
		/* uniform(bound): drawn from U(-bound, bound) by the seed */
		if (n->init->args.n != 1 || n->init->args.v[0]->kind == ND_KWARG) {
			serror(n->init->loc, "uniform takes one argument, the bound");
			return false;
		}
		init = eval(c, n->init->args.v[0]);
		if (init.kind == CNone)
			return false;
		if (!isnum(&init) || !(numval(&init) >= 0) || !isfinite(numval(&init)) || !dtypeisfloat(t.dtype)) {
			serror(n->init->loc, "uniform(bound) needs a float param and a finite bound >= 0");
			return false;
		}
		at[na++] = mkattrfloat(S.mod->arena, "uniform", numval(&init));
	} else if (n->init) {
		init = eval(c, n->init);
		if (init.kind == CNone)
			return false;
		if (!isnum(&init) && init.kind != CBool) {
			serror(n->init->loc, "a param's initial value must be a number, got a %s", kindname(&init));
			return false;
		}
		if (isnum(&init) && !isfinite(numval(&init))) {
			serror(n->init->loc, "a param's initial value must be finite, got %g", numval(&init));
			return false;
		}
		at[na++] = mkattrfloat(S.mod->arena, "init", init.kind == CBool ? (double)init.i : numval(&init));
	}
	v = emitop(c, Oparam, NULL, 0, at, na, &t, n->loc);
	if (v.kind == CNone)
		return false;
	S.fn->val[v.ref].name = path;
	if (n->index) {
		/* params arrays are lists indexed by the same ints */
		Binding *b = findlocal(c->sc, n->name);
		CVal l;
		if (!b || b->v.kind != CList) {
			l = (CVal){.kind = CList};
			bind(c->sc, n->name, l, BDecl, n->loc);
			b = findlocal(c->sc, n->name);
		}
		if (idx.i >= b->v.n) {
			CVal *e = arena_alloc(S.arena, (idx.i + 1) * sizeof(CVal));
			if (b->v.n)
				memcpy(e, b->v.elems, b->v.n * sizeof(CVal));
			b->v.elems = e;
			b->v.n = idx.i + 1;
		}
		b->v.elems[idx.i] = v;
		return true;
	}
	bind(c->sc, n->name, v, BDecl, n->loc);
	return true;
}

static void
assign(Ctx *c, Node *n)
{
	CVal v = eval(c, n->init);
	Binding *b;

	if (c->sc && (b = findlocal(c->sc, n->name)) && b->how == BDecl && c->inlayerbody) {
		serror(n->loc, "cannot assign to '%s': it names a layer or param", n->name);
		noteat(b->loc, "declared here");
		return;
	}
	if ((v.kind == CTensor || v.kind == CGraph) && !S.fn->val[v.ref].name) {
		S.fn->val[v.ref].name = astrfmt(S.mod->arena, "%s%s", c->prefix ? c->prefix : "", n->name);
	}
	bind(c->sc, n->name, v, BLocal, n->loc);
}

static void
execstmt(Ctx *c, Node *n, CVal *ret, int *nret, bool *returned)
{
	CVal v;
	int i;

	if (!deeper(n->loc))
		return;
	switch (n->kind) {
	case ND_LAYERDECL:
		declare(c, n, layerdecl1);
		break;
	case ND_PARAMDECL:
		declare(c, n, paramdecl1);
		break;
	case ND_FN:
		if (!c->inlayerbody || !c->self || c->intensor) {
			serror(n->loc, "fn is only allowed in a layer body");
			break;
		}
		if (strcmp(n->name, "forward") != 0) {
			serror(n->loc, "only 'fn forward' is supported, not 'fn %s'", n->name);
			break;
		}
		if (c->self->forward) {
			serror(n->loc, "duplicate definition of 'forward'");
			noteat(c->self->forward->loc, "previous definition is here");
			break;
		}
		c->self->forward = n;
		break;
	case ND_ASSIGN:
		assign(c, n);
		break;
	case ND_RETURN:
		if (!c->intensor) {
			serror(n->loc, "return outside fn forward or a model");
			break;
		}
		if (n->args.n > 8) {
			serror(n->loc, "at most 8 return values");
			break;
		}
		for (i = 0; i < n->args.n; i++)
			ret[i] = eval(c, n->args.v[i]);
		*nret = n->args.n;
		*returned = true;
		break;
	case ND_IF:
		v = eval(c, n->cond);
		if (v.kind == CNone)
			break;
		if (v.kind != CBool) {
			serror(n->cond->loc, "an if condition must be a compile-time bool, got a %s", kindname(&v));
			break;
		}
		if (v.i)
			execbody(c, &n->body, ret, nret, returned);
		else
			execbody(c, &n->els, ret, nret, returned);
		break;
	case ND_FOR:
		if (S.unrolled > MaxUnrolled)   /* reported already: unroll no more */
			break;
		v = eval(c, n->init);
		if (v.kind == CNone)
			break;
		if (v.kind == CDict)   /* over its keys, as Python's */
			v = dictkeys(v);
		if (v.kind != CList) {
			serror(n->init->loc, "a for loop runs over a compile-time list, dict or range(), not a %s", kindname(&v));
			break;
		}
		if (v.n > MaxUnroll) {
			serror(n->init->loc, "loop of %d iterations is too long to unroll (limit %d)", v.n, MaxUnroll);
			break;
		}
		if ((S.unrolled += v.n) > MaxUnrolled) {
			serror(n->init->loc, "loops unroll to more than %d iterations in all (nested "
			       "loops multiply)", MaxUnrolled);
			break;
		}
		for (i = 0; i < v.n && !*returned; i++) {
			bind(c->sc, n->name, v.elems[i], BLocal, n->loc);
			execbody(c, &n->body, ret, nret, returned);
		}
		break;
	case ND_EXPRSTMT:
		eval(c, n->init);
		break;
	default:
		serror(n->loc, "unexpected statement");
	}
	S.nest--;
}

static void
execbody(Ctx *c, NodeList *body, CVal *ret, int *nret, bool *returned)
{
	int i;

	for (i = 0; i < body->n && !*returned; i++)
		execstmt(c, body->v[i], ret, nret, returned);
}

/* models -------------------------------------------------------------------- */

/* A dim in a model signature: a bare unknown name becomes a symbol. */
static bool
sigdim(Ctx *c, Node *dn, const char *dflt, Dim *d)
{
	CVal v;
	const char *name = dn ? (dn->kind == ND_NAME ? dn->name : NULL) : dflt;

	if (name && !binding(c, name, &v) && !lookupdef(name)) {
		*d = dimsym(S.mod, symadd(S.mod, name, false));
		bind(c->sc, name, mkdim(*d), BArg, dn ? dn->loc : (Loc){0});
		return true;
	}
	if (!dn)
		return binding(c, name, &v) && todim(c, v, (Loc){0}, d);
	v = eval(c, dn);
	return todim(c, v, dn->loc, d);
}

/*
 * A heterogeneous graph input, graph[types; (src, rel, dst), ...]: one
 * relation input graph[N_src -> N_dst, E_src_rel_dst] per edge type,
 * named src__rel__dst (PyG's to_hetero and gnnrun --graph name them so).
 * The node types are declared before ';', or else those the edge types
 * name, in order.
 */
static CVal
heteroinput(Ctx *c, Node *ty)
{
	Hetero *h = arena_alloc(S.arena, sizeof *h);
	NodeList *types = NULL;
	int k, j, ne = ty->args.n, nt;
	Node *et;

	if (ty->lhs)
		types = &ty->lhs->args;
	nt = types ? types->n : 0;
	h->node = arena_alloc(S.arena, (size_t)(nt + 2 * ne + 1) * sizeof *h->node);
	h->edge = arena_alloc(S.arena, (size_t)(ne + 1) * sizeof *h->edge);
	h->key = arena_alloc(S.arena, (size_t)(ne + 1) * sizeof *h->key);
	h->rel = arena_alloc(S.arena, (size_t)(ne + 1) * sizeof *h->rel);
	for (k = 0; k < nt; k++) {
		Node *t = types->v[k];
		if (t->kind != ND_NAME) {
			serror(t->loc, "a node type is a name");
			return (CVal){0};
		}
		for (j = 0; j < h->nnode; j++)
			if (strcmp(h->node[j], t->name) == 0) {
				serror(t->loc, "duplicate node type '%s'", t->name);
				return (CVal){0};
			}
		h->node[h->nnode++] = t->name;
	}
	for (k = 0; k < ne; k++) {
		Dim d[3];
		et = ty->args.v[k];
		for (j = 0; j < 3; j++)
			h->edge[k][j] = et->args.v[j]->str;
		for (j = 0; j < 3; j += 2) {
			int i;
			for (i = 0; i < h->nnode && strcmp(h->node[i], h->edge[k][j]) != 0; i++)
				;
			if (i < h->nnode)
				continue;
			if (types) {
				serror(et->args.v[j]->loc, "edge type (%s, %s, %s): no node type '%s'", h->edge[k][0],
				       h->edge[k][1], h->edge[k][2], h->edge[k][j]);
				return (CVal){0};
			}
			h->node[h->nnode++] = h->edge[k][j];
		}
		h->key[k] = astrfmt(S.arena, "%s__%s__%s", h->edge[k][0], h->edge[k][1], h->edge[k][2]);
		for (j = 0; j < k; j++)
			if (strcmp(h->key[j], h->key[k]) == 0) {
				serror(et->loc, "duplicate edge type (%s, %s, %s)", h->edge[k][0], h->edge[k][1], h->edge[k][2]);
				return (CVal){0};
			}
		if (!sigdim(c, NULL, astrfmt(S.arena, "N_%s", h->edge[k][0]), &d[0]) ||
		    !sigdim(c, NULL, astrfmt(S.arena, "N_%s", h->edge[k][2]), &d[1]) ||
		    !sigdim(c, NULL, astrfmt(S.arena, "E_%s_%s_%s", h->edge[k][0], h->edge[k][1], h->edge[k][2]), &d[2]))
			return (CVal){0};
		h->rel[k] = addarg(S.fn, h->key[k], relationtype(d[0], d[1], d[2]));
		h->nedge++;
	}
	/* a declared node type no edge type names still has its size symbol */
	for (k = 0; k < h->nnode; k++) {
		Dim d;
		if (!sigdim(c, NULL, astrfmt(S.arena, "N_%s", h->node[k]), &d))
			return (CVal){0};
	}
	return (CVal){.kind = CHetero, .het = h};
}

static bool
sigtype(Ctx *c, Node *ty, Type *t)
{
	static const char *const gdefault[] = {"N", "E", "B"};
	Dim d[MaxRank];
	int k, nd;

	if (ty->kind == ND_TSCALAR) {
		serror(ty->loc, "model inputs and outputs are tensors or graphs");
		return false;
	}
	if (ty->kind == ND_TGRAPH && ty->ival == 2) {
		serror(ty->loc, "a heterogeneous graph is a model input, not an output");
		return false;
	}
	nd = ty->kind == ND_TGRAPH ? (ty->args.n ? ty->args.n : 2) : ty->args.n;
	if (nd > MaxRank) {
		serror(ty->loc, "rank %d exceeds the maximum of %d", nd, MaxRank);
		return false;
	}
	for (k = 0; k < nd; k++)
		/* only a graph's dims have defaults: a tensor's are all written */
		if (!sigdim(c, k < ty->args.n ? ty->args.v[k] : NULL, k < 3 ? gdefault[k] : NULL, &d[k]))
			return false;
	if (ty->kind == ND_TGRAPH && ty->ival)
		*t = relationtype(d[0], d[1], d[2]);
	else if (ty->kind == ND_TGRAPH)
		*t = nd == 3 ? batchgraphtype(d[0], d[1], d[2]) : graphtype(d[0], d[1]);
	else
		*t = tensortype((int)ty->ival, nd, d);
	/* op results are checked by typecheckop, inputs and outputs here */
	if (!typenumelok(S.mod, *t)) {
		serror(ty->loc, "%s is too large: its element count overflows or has degree "
		       "above %d", tystr(*t), MaxDeg);
		return false;
	}
	return true;
}

/*
 * A model's body as a new function named name: its inputs, then its
 * outputs checked against the signature into ret[].  sc receives the
 * model's scope (its symbols and body names) for what follows it (a
 * train item).  With key (training), the function also takes the
 * dropout key, i64[2], before anything follows.
 */
static bool
lowerbody(Node *model, const char *name, Inst *self, CVal *ret)
{
	Scope sc = {0};
	Ctx c = {.sc = &sc, .prefix = "", .self = self, .intensor = true, .inlayerbody = true};
	Type want[8], t;
	int i, nret = 0, nerr = diag_nerrors();
	bool returned = false;
	Node *p;
	Dim two = 2;

	S.fn = newfn(S.mod, name, model->loc);
	S.nframe = 0;
	S.depth = 0;
	S.nest = 0;
	S.toodeep = false;
	S.unrolled = 0;
	S.copied = 0;
	S.nstream = 0;
	S.nupd = 0;
	for (i = 0; i < model->params.n; i++) {
		p = model->params.v[i];
		if (!p->type) {
			serror(p->loc, "model input '%s' needs a type", p->name);
			return false;
		}
		if (findlocal(&sc, p->name)) {
			serror(p->loc, "duplicate definition of '%s'", p->name);
			return false;
		}
		if (p->type->kind == ND_TGRAPH && p->type->ival == 2) {
			CVal h = heteroinput(&c, p->type);
			if (h.kind == CNone)
				return false;
			bind(&sc, p->name, h, BArg, p->loc);
			continue;
		}
		if (!sigtype(&c, p->type, &t))
			return false;
		bind(&sc, p->name, tensorval(addarg(S.fn, p->name, t)), BArg, p->loc);
	}
	if (S.training)
		S.key = addarg(S.fn, "key", tensortype(DI64, 1, &two));
	if (model->rets.n > 8) {
		serror(model->loc, "at most 8 outputs");
		return false;
	}
	for (i = 0; i < model->rets.n; i++)
		if (!sigtype(&c, model->rets.v[i], &want[i]))
			return false;
	self->scope = sc;
	c.sc = &self->scope;
	execbody(&c, &model->body, ret, &nret, &returned);
	if (diag_nerrors() > nerr)
		return false;
	if (!returned) {
		serror(model->loc, "model %s ends without a return", model->name);
		return false;
	}
	if (nret != model->rets.n) {
		serror(model->loc, "model %s returns %d value%s, declared %d", model->name, nret, nret == 1 ? "" : "s", model->rets.n);
		return false;
	}
	for (i = 0; i < nret; i++) {
		if (ret[i].kind != CTensor && ret[i].kind != CGraph) {
			serror(model->rets.v[i]->loc, "model %s must return a tensor, not a %s", model->name, kindname(&ret[i]));
			return false;
		}
		if (!typeeq(vtype(ret[i]), want[i])) {
			serror(model->rets.v[i]->loc, "return type mismatch: model %s declares %s, returns %s",
			       model->name, tystr(want[i]), tystr(vtype(ret[i])));
			return false;
		}
	}
	return true;
}

void
lowermodel(Node *model)
{
	Inst self = {.def = model, .path = "", .loc = model->loc};
	CVal ret[8];
	int i;

	S.training = false;
	if (!lowerbody(model, model->name, &self, ret))
		return;
	for (i = 0; i < model->rets.n; i++)
		addret(S.fn, ret[i].ref);
}

/* training settings: a train item's names, their kinds and defaults */
static bool
trainsetting(Ctx *c, const char *name, int kind, CVal *v, Loc l)
{
	if (!binding(c, name, v))
		return false;
	if (kind == CFloat && v->kind == CInt)
		*v = mkfloat((double)v->i);
	if (v->kind != kind) {
		serror(l, "train: '%s' must be a %s, got a %s", name,
		       kind == CFloat ? "number" : kind == CInt ? "int" : kind == CBool ? "bool" : "string", kindname(v));
		v->kind = CNone;
		return false;
	}
	return true;
}

static void
readsettings(Ctx *c, TrainInfo *ti, Loc l)
{
	static const struct { const char *name; int kind; size_t off; } set[] = {
		{"lr", CFloat, offsetof(TrainInfo, lr)},
		{"weight_decay", CFloat, offsetof(TrainInfo, weight_decay)},
		{"momentum", CFloat, offsetof(TrainInfo, momentum)},
		{"dampening", CFloat, offsetof(TrainInfo, dampening)},
		{"beta1", CFloat, offsetof(TrainInfo, beta1)},
		{"beta2", CFloat, offsetof(TrainInfo, beta2)},
		{"eps", CFloat, offsetof(TrainInfo, eps)},
	};
	CVal v;
	size_t k;

	for (k = 0; k < sizeof set / sizeof set[0]; k++)
		if (trainsetting(c, set[k].name, set[k].kind, &v, l))
			*(double *)((char *)ti + set[k].off) = v.f;
	if (trainsetting(c, "nesterov", CBool, &v, l))
		ti->nesterov = v.i;
	if (trainsetting(c, "epochs", CInt, &v, l))
		ti->epochs = v.i;
	if (trainsetting(c, "seed", CInt, &v, l))
		ti->seed = v.i;
	if (trainsetting(c, "optimizer", CStr, &v, l)) {
		if (strcmp(v.s, "sgd") && strcmp(v.s, "adam") && strcmp(v.s, "adamw"))
			serror(l, "train: unknown optimizer \"%s\" (sgd, adam or adamw)", v.s);
		else
			ti->optimizer = arena_strdup(S.mod->arena, v.s);
	}
}

/*
 * The training step of model as a function NAME_train: the model's body
 * in training mode (dropout draws its mask from the key input, layers
 * that behave differently in training see `training` true), the loss of
 * the train item tr (or, with no item, opts' loss of the first output
 * against labels y: i64[N] and a node mask: bool[N]), then autodiff's
 * gradients.  Outputs: the loss, the gradient of every trained param
 * (float params that are not buffers, in declaration order), then the
 * new value of every buffer the step updates (BatchNorm's statistics).
 */
static void
lowertrain(Node *model, Node *tr, const char *lossname)
{
	Inst self = {.def = model, .path = "", .loc = model->loc};
	Scope tsc = {0};
	Ctx c = {.sc = &tsc, .prefix = "", .self = &self, .intensor = true};
	CVal ret[8], lossv[8], v;
	TrainInfo *ti;
	Ref *wrt, *grad, loss = RNone, key;
	int i, k, nw = 0, nl = 0, nerr = diag_nerrors();
	bool returned = false;
	Loc l = tr ? tr->loc : model->loc;
	Type t;
	Arena *a = S.mod->arena;

	S.training = true;
	if (!lowerbody(model, astrfmt(a, "%s_train", model->name), &self, ret))
		goto out;
	key = S.key;
	tsc.parent = &self.scope;
	ti = arena_alloc(a, sizeof *ti);
	*ti = (TrainInfo){.model = arena_strdup(a, model->name), .optimizer = "adam", .lr = 0.01, .beta1 = 0.9,
	                  .beta2 = 0.999, .eps = 1e-8, .epochs = 200, .loss = lossname ? arena_strdup(a, lossname) : NULL};
	if (tr) {
		if (tr->params.n < model->rets.n) {
			serror(tr->loc, "train %s: the first %d formal%s name%s the model's output%s", model->name,
			       model->rets.n, model->rets.n == 1 ? "" : "s", model->rets.n == 1 ? "s" : "",
			       model->rets.n == 1 ? "" : "s");
			goto out;
		}
		for (i = 0; i < tr->params.n; i++) {
			Node *p = tr->params.v[i];
			if (findlocal(&tsc, p->name)) {
				serror(p->loc, "duplicate definition of '%s'", p->name);
				goto out;
			}
			if (i < model->rets.n) {
				if (p->type && (!sigtype(&c, p->type, &t) || !typeeq(t, vtype(ret[i])))) {
					if (diag_nerrors() == nerr)
						serror(p->loc, "train %s: output %d is %s", model->name, i, tystr(vtype(ret[i])));
					goto out;
				}
				bind(&tsc, p->name, ret[i], BArg, p->loc);
				continue;
			}
			if (!p->type) {
				serror(p->loc, "train input '%s' needs a type", p->name);
				goto out;
			}
			if (!sigtype(&c, p->type, &t))
				goto out;
			bind(&tsc, p->name, tensorval(addarg(S.fn, p->name, t)), BArg, p->loc);
		}
		execbody(&c, &tr->body, lossv, &nl, &returned);
		if (diag_nerrors() > nerr)
			goto out;
		readsettings(&c, ti, tr->loc);
		if (!lossname && (!returned || nl != 1)) {
			serror(tr->loc, "train %s must return one loss", model->name);
			goto out;
		}
	} else {
		Type ot = vtype(ret[0]);
		Dim n = ot.rank ? ot.dim[0] : 1;
		bind(&tsc, "out", ret[0], BArg, l);
		bind(&tsc, "y", tensorval(addarg(S.fn, "y", tensortype(DI64, 1, &n))), BArg, l);
		bind(&tsc, "mask", tensorval(addarg(S.fn, "mask", tensortype(DBool, 1, &n))), BArg, l);
	}
	if (lossname) {
		/* the loss named on the command line, of the first output and
		 * the first two train inputs */
		Ref ins[2];
		const char *names[3] = {"out", "y", "mask"};
		if (tr) {
			if (tr->params.n < model->rets.n + 2) {
				serror(tr->loc, "--loss needs train %s to take the targets and a mask after the output", model->name);
				goto out;
			}
			names[0] = tr->params.v[0]->name;
			names[1] = tr->params.v[model->rets.n]->name;
			names[2] = tr->params.v[model->rets.n + 1]->name;
		}
		for (i = 0; i < 2; i++) {
			binding(&c, names[i + 1], &v);
			ins[i] = v.ref;
		}
		binding(&c, names[0], &v);
		lossv[0] = lowerloss(&c, lossname, v, tensorval(ins[0]), tensorval(ins[1]), true, l);
		if (lossv[0].kind == CNone)
			goto out;
	}
	v = lossv[0];
	t = vtype(v);
	if (v.kind != CTensor || t.rank != 0 || !dtypeisfloat(t.dtype)) {
		serror(tr ? tr->loc : l, "train %s: the loss must be a float scalar such as f32[], got %s",
		       model->name, v.kind == CTensor ? tystr(t) : kindname(&v));
		goto out;
	}
	loss = v.ref;
	/* the key goes last among the inputs */
	for (i = 0; i < S.fn->narg && S.fn->arg[i] != key; i++)
		;
	for (; i + 1 < S.fn->narg; i++)
		S.fn->arg[i] = S.fn->arg[i + 1];
	S.fn->arg[S.fn->narg - 1] = key;
	wrt = emalloc((S.fn->nins + 1) * sizeof *wrt);
	for (i = 0; i < S.fn->nins; i++) {
		Ins *in = &S.fn->ins[i];
		if (in->op == Oparam && dtypeisfloat(valtype(S.fn, in->to).dtype) && !attrint(in, "buffer", 0))
			wrt[nw++] = in->to;
	}
	grad = emalloc((nw + 1) * sizeof *grad);
	if (autodiff(S.fn, loss, wrt, nw, grad) == 0) {
		ti->nparam = nw;
		ti->param = arena_alloc(a, (nw + 1) * sizeof *ti->param);
		ti->nupdate = S.nupd;
		ti->update = arena_alloc(a, (S.nupd + 1) * sizeof *ti->update);
		addret(S.fn, loss);
		for (k = 0; k < nw; k++) {
			ti->param[k] = attrstr(&S.fn->ins[S.fn->val[wrt[k]].def], "name");
			addret(S.fn, grad[k]);
		}
		for (k = 0; k < S.nupd; k++) {
			ti->update[k] = S.upd[k].name;
			addret(S.fn, S.upd[k].v);
		}
		S.fn->train = ti;
	}
	free(wrt);
	free(grad);
out:
	S.training = false;
}

void
lowertrains(File *main, const FrontOpts *o)
{
	int i, j, nerr;
	bool any = false;
	Fn *f;

	for (i = 0; i < main->items.n; i++) {
		Node *tr = main->items.v[i], *m;
		if (tr->kind != ND_TRAIN)
			continue;
		any = true;
		nerr = diag_nerrors();
		if (!(m = lookupdef(tr->name)) || m->kind != ND_MODEL) {
			serror(tr->loc, "train %s: no model named '%s'", tr->name, tr->name);
			continue;
		}
		for (j = 0; j < i; j++)
			if (main->items.v[j]->kind == ND_TRAIN && strcmp(main->items.v[j]->name, tr->name) == 0) {
				serror(tr->loc, "a second train item for model '%s'", tr->name);
				noteat(main->items.v[j]->loc, "the first is here");
				break;
			}
		if (j < i || diag_nerrors() > nerr)
			continue;
		/* an imported model is lowered for its train item */
		for (f = S.mod->fn; f && strcmp(f->name, m->name) != 0; f = f->link)
			;
		if (!f)
			lowermodel(m);
		if (diag_nerrors() == nerr)
			lowertrain(m, tr, o ? o->loss : NULL);
	}
	if (any || !o || !o->train)
		return;
	/* --train with no train item: every model of the file */
	for (i = 0; i < main->items.n; i++)
		if (main->items.v[i]->kind == ND_MODEL)
			lowertrain(main->items.v[i], NULL, o->loss ? o->loss : "nll");
}
