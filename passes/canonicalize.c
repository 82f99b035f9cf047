/*
 * Canonicalization: local rewrites that are exact, bit for bit, in IEEE
 * arithmetic, so that later passes (cse, fusion) see fewer shapes of the
 * same computation.
 *
 *	dropout x                       -> x       (inference: identity)
 *	cast x to its own type          -> x
 *	neg (neg x)                     -> x       (a sign flip, twice)
 *	transpose x {perm = identity}   -> x
 *	transpose (transpose x {q}) {p} -> transpose x {q o p}, then the above
 *	reshape (reshape x)             -> reshape x
 *	reshape x to its own type       -> x
 *	mul x, c  /  mul c, x           -> x       c a const of value 1
 *	div x, c                        -> x       c a const of value 1
 *
 * The mul/div rules need the result type to equal x's type: a const that
 * broadcasts x to a larger shape (x: f32[16] times 1.0 of f32[N, 16])
 * changes the shape and must stay.  x*1 and x/1 are x for every float,
 * -0.0, infinities and NaNs included.  add of a const 0.0 is NOT
 * rewritten: -0.0 + 0.0 is +0.0, so it is not the identity on -0.0.
 * Only a const of exactly 1.0 counts; a value that merely rounds to 1.0f
 * in f32 is not 1 in the reference interpreter's doubles.
 *
 * One forward walk suffices: a rewrite renames the uses of a value, and
 * the instructions that use it come later, so they are examined with
 * their new operands (dropout between two transposes vanishes first, and
 * the transposes then meet).  Replaced instructions are left for dce.
 */
#include <string.h>

#include "passes.h"

/* The instruction that defines r, or NULL for a function argument. */
static Ins *
defof(Fn *fn, Ref r)
{
	int d = fn->val[r].def;

	return d >= 0 ? &fn->ins[d] : NULL;
}

static bool
isconst(Fn *fn, Ref r, double v)
{
	Ins *d = defof(fn, r);
	const Attr *a;

	if (!d || d->op != Oconst || !(a = findattr(d, "value")))
		return false;
	if (a->kind == AFloat)
		return a->u.f == v;
	return a->kind == AInt && (double)a->u.i == v;
}

/* The perm of a transpose, into p; its length, or -1 if malformed. */
static int
perm(const Ins *in, int64_t *p)
{
	const Attr *a = findattr(in, "perm");

	if (!a || a->kind != AInts || a->n > MaxRank)
		return -1;
	memcpy(p, a->u.is, a->n * sizeof *p);
	return a->n;
}

static bool
isidentity(const int64_t *p, int n)
{
	int k;

	for (k = 0; k < n; k++)
		if (p[k] != k)
			return false;
	return true;
}

/* transpose(transpose(x, q), p) is transpose(x, r) with r[k] = q[p[k]]. */
static void
transpose(Fn *fn, Ins *in)
{
	int64_t p[MaxRank], q[MaxRank], r[MaxRank];
	Ins *d;
	int n, k;

	if ((n = perm(in, p)) < 0)
		return;
	d = defof(fn, in->arg[0]);
	if (d && d->op == Otranspose && perm(d, q) == n) {
		for (k = 0; k < n; k++)
			r[k] = q[p[k]];
		in->arg[0] = d->arg[0];
		putattr(fn, in, mkattrints(fn->mod->arena, "perm", r, n));
		memcpy(p, r, sizeof r);
	}
	if (isidentity(p, n))
		replaceuses(fn, in->to, in->arg[0]);
}

static void
reshape(Fn *fn, Ins *in)
{
	Ins *d = defof(fn, in->arg[0]);

	/* row-major reshapes compose: only the last shape matters */
	if (d && d->op == Oreshape)
		in->arg[0] = d->arg[0];
	if (typeeq(fn->val[in->to].type, fn->val[in->arg[0]].type))
		replaceuses(fn, in->to, in->arg[0]);
}

/* x op c -> x when c is the const one and the result is x's type. */
static bool
byone(Fn *fn, Ins *in, int x)
{
	if (!isconst(fn, in->arg[1 - x], 1.0))
		return false;
	if (!typeeq(fn->val[in->to].type, fn->val[in->arg[x]].type))
		return false;
	replaceuses(fn, in->to, in->arg[x]);
	return true;
}

void
canonicalize(Fn *fn)
{
	Ins *in, *d;
	int i;

	filluse(fn);        /* defof() needs val[].def */
	for (i = 0; i < fn->nins; i++) {
		in = &fn->ins[i];
		if (in->to == RNone)
			continue;
		switch (in->op) {
		case Odropout:
			replaceuses(fn, in->to, in->arg[0]);
			break;
		case Ocast:
			if (typeeq(fn->val[in->to].type, fn->val[in->arg[0]].type))
				replaceuses(fn, in->to, in->arg[0]);
			break;
		case Oneg:
			d = defof(fn, in->arg[0]);
			if (d && d->op == Oneg)
				replaceuses(fn, in->to, d->arg[0]);
			break;
		case Otranspose:
			transpose(fn, in);
			break;
		case Oreshape:
			reshape(fn, in);
			break;
		case Omul:
			if (!byone(fn, in, 0))
				byone(fn, in, 1);
			break;
		case Odiv:
			byone(fn, in, 0);
			break;
		}
	}
}
