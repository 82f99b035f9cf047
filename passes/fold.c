/*
 * fold: constant folding.
 *
 * A const op is a tensor filled with one value, whatever its shape.  So
 * an elementwise op (Felem: unary, binary with broadcasting, cast) whose
 * operands are all consts is itself a fill, of its own result type, with
 * the op applied to the operands' values; and a sum, mean or max of a
 * fill over a dim of constant extent is a fill too.  Such an instruction
 * is rewritten in place into a const of its own type: it keeps its value
 * name and position, and instructions later in the walk see a const
 * operand, so chains (2.0 * 0.5 + 1.0) fold in one forward walk.  The
 * operands' consts stay for dce.  `(1 + eps)` with eps a param is left
 * alone: a param is data, not a constant.
 *
 * The value must be exactly what the reference interpreter would compute
 * (docs/ir.md: every dtype in double, f32 included, never rounded to
 * float; integers exact, division truncating).  Rather than restate those
 * rules here and risk the two drifting apart, the scalar is computed by
 * the interpreter itself, on a one-instruction function over rank-0
 * consts in a scratch module.  An op the interpreter refuses (integer
 * division by zero, a cast of NaN to i64, an integer to a negative power)
 * is not folded: the error stays where the program will meet it.  NaN and
 * infinities do fold; a const holds them and the printer writes them.
 *
 * Reductions are folded by the interpreter's own loop: a sum of n copies
 * adds them one by one, which is not always n*v to the last bit.  The
 * extent must be a constant (a symbolic N gives no single value), and a
 * max needs at least one element (over an empty dim it is an error).
 * dropout is Felem but is left to canonicalize, which removes it.
 */
#include "passes.h"
#include "../ir/interp.h"

/* Folds never loop longer than this (a sum over 16M copies). */
enum { MaxFoldExtent = 1 << 24 };

typedef struct Folder {
	Mod *m;             /* scratch module, made on first use */
	Fn *fn;             /* its one function, emptied for every fold */
} Folder;

/* The value of r if it is defined by a const op. */
static bool
constval(Fn *fn, Ref r, double *v)
{
	int d = fn->val[r].def;
	const Attr *a;

	if (d < 0 || fn->ins[d].op != Oconst || !(a = findattr(&fn->ins[d], "value")))
		return false;
	if (a->kind == AFloat)
		*v = a->u.f;
	else if (a->kind == AInt)
		*v = (double)a->u.i;
	else
		return false;
	return true;
}

/*
 * Run in's op on rank-0 consts of values v[0..narg) with the operand
 * dtypes of in, under in's attributes, through the interpreter.
 */
static bool
evalscalar(Folder *f, Fn *fn, const Ins *in, const double *v, double *out)
{
	Ref arg[8];
	Attr a;
	IRun run = {0};
	Fn *s;
	bool ok;
	int k;

	if (in->narg > 8)
		return false;
	if (!f->m) {
		f->m = newmod();
		f->fn = newfn(f->m, "fold", (Loc){0});
	}
	s = f->fn;
	s->nins = s->nval = s->nret = 0;
	for (k = 0; k < in->narg; k++) {
		a = mkattrfloat(f->m->arena, "value", v[k]);
		arg[k] = emit(s, Oconst, tensortype(fn->val[in->arg[k]].type.dtype, 0, NULL),
		              NULL, 0, &a, 1, NULL, (Loc){0});
	}
	addret(s, emit(s, in->op, tensortype(fn->val[in->to].type.dtype, 0, NULL),
	               arg, in->narg, in->attr, in->nattr, NULL, (Loc){0}));
	run.fn = s;
	ok = interp(&run) == 0;
	if (ok)
		*out = run.outs[0].t.data[0];
	interpfree(&run);
	return ok;
}

/* sum, mean or max over a constant extent n of copies of v, as the
 * interpreter's reduction loop computes it. */
static bool
evalreduce(int op, int64_t n, double v, double *out)
{
	double acc = 0;
	int64_t k;

	if (n > MaxFoldExtent)
		return false;
	switch (op) {
	case Osum:
	case Omean:
		for (k = 0; k < n; k++)
			acc += v;
		*out = op == Omean ? acc / n : acc;
		return true;
	case Omax:
		if (n == 0)
			return false;   /* an error at run time, or an empty result */
		*out = v;           /* max(v, v) is v, NaN included */
		return true;
	}
	return false;
}

static bool
foldreduce(Fn *fn, const Ins *in, double *out)
{
	Type t;
	double v;
	int64_t d;

	if (!constval(fn, in->arg[0], &v))
		return false;
	t = fn->val[in->arg[0]].type;
	d = attrint(in, "dim", -1);
	if (d < 0 || d >= t.rank || !dimisconst(t.dim[d]))
		return false;
	return evalreduce(in->op, dimconstval(t.dim[d]), v, out);
}

static bool
foldelem(Folder *f, Fn *fn, const Ins *in, double *out)
{
	double v[8];
	int k;

	if (in->narg > 8)
		return false;
	for (k = 0; k < in->narg; k++)
		if (!constval(fn, in->arg[k], &v[k]))
			return false;
	return evalscalar(f, fn, in, v, out);
}

void
fold(Fn *fn)
{
	Folder f = {0};
	Attr *a;
	Ins *in;
	double v;
	bool ok;
	int i;

	filluse(fn);        /* constval() needs val[].def */
	for (i = 0; i < fn->nins; i++) {
		in = &fn->ins[i];
		if (in->to == RNone || fn->val[in->to].type.kind != TTensor)
			continue;
		if (in->op == Osum || in->op == Omean || in->op == Omax)
			ok = foldreduce(fn, in, &v);
		else if ((opinfo[in->op].flags & Felem) && in->op != Odropout && in->narg > 0)
			ok = foldelem(&f, fn, in, &v);
		else
			ok = false;
		if (!ok)
			continue;
		/* in place: the value keeps its name, type and position */
		a = arena_alloc(fn->mod->arena, sizeof *a);
		*a = mkattrfloat(fn->mod->arena, "value", v);
		in->op = Oconst;
		in->narg = 0;
		in->arg = NULL;
		in->nattr = 1;
		in->attr = a;
	}
	freemod(f.m);
}
