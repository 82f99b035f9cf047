/*
 * Modules, functions and the instruction builder.  emit() appends without
 * checking (the IR parser and passes state types themselves, and the
 * verifier checks them); buildop() computes the type through
 * typecheckop() and reports ill-typed uses as user errors, which is how
 * the frontend builds.
 */
#include <stdlib.h>
#include <string.h>

#include "ir.h"

const OpInfo opinfo[NOp] = {
	[Oxxx] = {"xxx", 0, 0, 0},
#define O(name, mn, mx, fl) [O##name] = {#name, mn, mx, fl},
#include "ops.h"
#undef O
};

int
opfromname(const char *s)
{
	int i;

	for (i = 1; i < NOp; i++)
		if (strcmp(opinfo[i].name, s) == 0)
			return i;
	return Oxxx;
}

Mod *
newmod(void)
{
	Mod *m;

	m = emalloc(sizeof *m);
	m->arena = arena_new();
	m->fnlast = &m->fn;
	return m;
}

void
freemod(Mod *m)
{
	Fn *f, *next;

	if (!m)
		return;
	for (f = m->fn; f; f = next) {
		next = f->link;
		free(f->ins);
		free(f->val);
		free(f->arg);
		free(f->ret);
	}
	free(m->sym);
	free(m->dexp);
	arena_free(m->arena);
	free(m);
}

Fn *
newfn(Mod *m, const char *name, Loc loc)
{
	Fn *f;

	f = arena_alloc(m->arena, sizeof *f);
	f->mod = m;
	f->name = arena_strdup(m->arena, name);
	f->loc = loc;
	*m->fnlast = f;
	m->fnlast = &f->link;
	return f;
}

Ref
newval(Fn *fn, const char *name, Type t)
{
	if (fn->nval == fn->valc) {
		fn->valc = fn->valc ? 2 * fn->valc : 32;
		fn->val = erealloc(fn->val, fn->valc * sizeof *fn->val);
	}
	fn->val[fn->nval] = (Val){
		.name = name ? arena_strdup(fn->mod->arena, name) : NULL,
		.type = t,
		.def = -1,
	};
	return fn->nval++;
}

Ref
addarg(Fn *fn, const char *name, Type t)
{
	Ref r;

	r = newval(fn, name, t);
	fn->arg = erealloc(fn->arg, (fn->narg + 1) * sizeof *fn->arg);
	fn->arg[fn->narg++] = r;
	return r;
}

void
addret(Fn *fn, Ref r)
{
	fn->ret = erealloc(fn->ret, (fn->nret + 1) * sizeof *fn->ret);
	fn->ret[fn->nret++] = r;
}

Ref
emit(Fn *fn, int op, Type t, const Ref *arg, int narg,
     const Attr *attr, int nattr, const char *name, Loc loc)
{
	Ins *i;
	Ref r;

	r = newval(fn, name, t);
	if (fn->nins == fn->insc) {
		fn->insc = fn->insc ? 2 * fn->insc : 32;
		fn->ins = erealloc(fn->ins, fn->insc * sizeof *fn->ins);
	}
	i = &fn->ins[fn->nins];
	*i = (Ins){.op = op, .to = r, .narg = narg, .nattr = nattr, .loc = loc};
	if (narg) {
		i->arg = arena_alloc(fn->mod->arena, narg * sizeof(Ref));
		memcpy(i->arg, arg, narg * sizeof(Ref));
	}
	if (nattr) {
		i->attr = arena_alloc(fn->mod->arena, nattr * sizeof(Attr));
		memcpy(i->attr, attr, nattr * sizeof(Attr));
	}
	fn->val[r].def = fn->nins++;
	return r;
}

Ref
buildop(Fn *fn, int op, const Ref *arg, int narg,
        const Attr *attr, int nattr, const Type *decl,
        const char *name, Loc loc)
{
	Type at[64], out;
	char err[512];
	int k;

	if (narg > 64)
		die("too many operands");
	for (k = 0; k < narg; k++) {
		if (arg[k] < 0 || arg[k] >= fn->nval)
			die("bad operand");
		at[k] = fn->val[arg[k]].type;
	}
	if (!typecheckop(fn->mod, op, at, narg, attr, nattr, decl, &out, err, sizeof err)) {
		errorat(loc, "%s", err);
		return RNone;
	}
	return emit(fn, op, out, arg, narg, attr, nattr, name, loc);
}

Type
valtype(const Fn *fn, Ref r)
{
	if (r < 0 || r >= fn->nval)
		die("bad value %d", r);
	return fn->val[r].type;
}

const Attr *
attrfind(const Attr *a, int n, const char *key)
{
	int i;

	for (i = 0; i < n; i++)
		if (strcmp(a[i].key, key) == 0)
			return &a[i];
	return NULL;
}

const Attr *
findattr(const Ins *i, const char *key)
{
	return attrfind(i->attr, i->nattr, key);
}

int64_t
attrint(const Ins *i, const char *key, int64_t dflt)
{
	const Attr *a = findattr(i, key);

	return a && (a->kind == AInt || a->kind == ABool) ? a->u.i : dflt;
}

double
attrfloat(const Ins *i, const char *key, double dflt)
{
	const Attr *a = findattr(i, key);

	if (!a)
		return dflt;
	if (a->kind == AFloat)
		return a->u.f;
	if (a->kind == AInt)
		return (double)a->u.i;
	return dflt;
}

const char *
attrstr(const Ins *i, const char *key)
{
	const Attr *a = findattr(i, key);

	return a && a->kind == AStr ? a->u.s : NULL;
}

int
storedtype(const Ins *in)
{
	const char *s = attrstr(in, "store");

	return s ? dtypefromname(s) : DNone;
}

int
rounddtype(const Ins *in)
{
	const char *s = attrstr(in, "round");

	return s ? dtypefromname(s) : DNone;
}

uint64_t
hashstr(uint64_t h, const char *s)
{
	for (; *s; s++) {
		h ^= (unsigned char)*s;
		h *= 1099511628211ull;
	}
	h ^= 0xff;   /* the separator: ("ab", "c") is not ("a", "bc") */
	return h * 1099511628211ull;
}

void
putattr(Fn *fn, Ins *in, Attr a)
{
	Attr *v = arena_alloc(fn->mod->arena, (in->nattr + 1) * sizeof *v);
	int k;

	if (in->nattr)
		memcpy(v, in->attr, in->nattr * sizeof *v);
	in->attr = v;
	for (k = 0; k < in->nattr; k++)
		if (strcmp(v[k].key, a.key) == 0) {
			v[k] = a;
			return;
		}
	v[in->nattr++] = a;
}

void
dropattr(Fn *fn, Ins *in, const char *key)
{
	Attr *v;
	int k, n = 0;

	/* the schedule was the attribute "sched" once: callers not yet
	 * switched to dropsched() (driver/tune.c) still drop it this way */
	if (strcmp(key, "sched") == 0)
		dropsched(in);
	if (!findattr(in, key))
		return;
	v = arena_alloc(fn->mod->arena, in->nattr * sizeof *v);
	for (k = 0; k < in->nattr; k++)
		if (strcmp(in->attr[k].key, key) != 0)
			v[n++] = in->attr[k];
	in->attr = v;
	in->nattr = n;
}

bool
attrgetdim(const Attr *a, Dim *d)
{
	if (a && a->kind == ADim) {
		*d = a->u.d;
		return true;
	}
	if (a && a->kind == AInt && a->u.i >= 0 && a->u.i <= DIMMAX) {
		*d = (Dim)a->u.i;
		return true;
	}
	return false;
}

int
attrgetdims(const Attr *a, Dim *d, int max)
{
	int k;

	if (!a || (a->kind != ADims && a->kind != AInts) || a->n > max)
		return -1;
	for (k = 0; k < a->n; k++) {
		if (a->kind == ADims)
			d[k] = a->u.ds[k];
		else if (a->u.is[k] >= 0 && a->u.is[k] <= DIMMAX)
			d[k] = (Dim)a->u.is[k];
		else
			return -1;
	}
	return a->n;
}

bool
attrdim(const Ins *i, const char *key, Dim *d)
{
	return attrgetdim(findattr(i, key), d);
}

int
attrdims(const Ins *i, const char *key, Dim *d, int max)
{
	return attrgetdims(findattr(i, key), d, max);
}

Attr
mkattrint(Arena *a, const char *key, int64_t v)
{
	return (Attr){.key = arena_strdup(a, key), .kind = AInt, .u.i = v};
}

Attr
mkattrbool(Arena *a, const char *key, bool v)
{
	return (Attr){.key = arena_strdup(a, key), .kind = ABool, .u.i = v};
}

Attr
mkattrfloat(Arena *a, const char *key, double v)
{
	return (Attr){.key = arena_strdup(a, key), .kind = AFloat, .u.f = v};
}

Attr
mkattrstr(Arena *a, const char *key, const char *s)
{
	return (Attr){.key = arena_strdup(a, key), .kind = AStr, .u.s = arena_strdup(a, s)};
}

Attr
mkattrdim(Arena *a, const char *key, Dim d)
{
	return (Attr){.key = arena_strdup(a, key), .kind = ADim, .u.d = d};
}

Attr
mkattrints(Arena *a, const char *key, const int64_t *v, int n)
{
	Attr r = {.key = arena_strdup(a, key), .kind = AInts, .n = n};

	r.u.is = arena_alloc(a, (n ? n : 1) * sizeof(int64_t));
	memcpy(r.u.is, v, n * sizeof(int64_t));
	return r;
}

Attr
mkattrdims(Arena *a, const char *key, const Dim *v, int n)
{
	Attr r = {.key = arena_strdup(a, key), .kind = ADims, .n = n};

	r.u.ds = arena_alloc(a, (n ? n : 1) * sizeof(Dim));
	memcpy(r.u.ds, v, n * sizeof(Dim));
	return r;
}

Ref
storageroot(const Fn *fn, Ref v)
{
	int d;

	while ((d = fn->val[v].def) >= 0 && (opinfo[fn->ins[d].op].flags & Falias))
		v = fn->ins[d].arg[0];
	return v;
}

int
valstoredtype(const Fn *fn, Ref v)
{
	Ref r = storageroot(fn, v);
	int d = fn->val[r].def, dt = fn->val[r].type.dtype;

	/* a value of a 16-bit type (a model's input, a 16-bit output's
	 * cast) is its type's words */
	if (dt == DF16 || dt == DBF16)
		return dt;
	return d >= 0 ? storedtype(&fn->ins[d]) : DNone;
}

int
valelemsize(const Fn *fn, Ref v)
{
	int sdt = valstoredtype(fn, v);

	return (int)dtypesize(sdt != DNone ? sdt : fn->val[v].type.dtype);
}

int
usecount(const Fn *fn, Ref v, int *at)
{
	int n = 0;

	if (at)
		*at = -1;
	for (int j = 0; j < fn->nins; j++)
		for (int k = 0; k < fn->ins[j].narg; k++)
			if (fn->ins[j].arg[k] == v) {
				n++;
				if (at)
					*at = j;
			}
	for (int k = 0; k < fn->nret; k++)
		n += fn->ret[k] == v;
	return n;
}

void
filluse(Fn *fn)
{
	int i, k;

	for (i = 0; i < fn->nval; i++) {
		fn->val[i].nuse = 0;
		fn->val[i].def = -1;
	}
	for (i = 0; i < fn->nins; i++) {
		if (fn->ins[i].to >= 0)
			fn->val[fn->ins[i].to].def = i;
		for (k = 0; k < fn->ins[i].narg; k++)
			fn->val[fn->ins[i].arg[k]].nuse++;
	}
	for (i = 0; i < fn->nret; i++)
		fn->val[fn->ret[i]].nuse++;
}

/* Instruction from to index to, the ones between one place towards from;
 * the caller keeps the order valid (scheduling passes: sinkreduce, fuse) */
void
moveins(Fn *fn, int from, int to)
{
	Ins in = fn->ins[from];
	int lo = from < to ? from : to, hi = from < to ? to : from;

	if (from < to)
		memmove(&fn->ins[from], &fn->ins[from + 1], (size_t)(to - from) * sizeof in);
	else
		memmove(&fn->ins[to + 1], &fn->ins[to], (size_t)(from - to) * sizeof in);
	fn->ins[to] = in;
	for (int k = lo; k <= hi; k++)
		if (fn->ins[k].to >= 0)
			fn->val[fn->ins[k].to].def = k;
}
