/*
 * The IR verifier, run on parsed IR and after passes (--verify-each).
 *
 * It checks what the builder and the parser guarantee and what a pass
 * may break: straight-line SSA (every value defined once, before its
 * uses, with val.def pointing at its definition), in-range refs, ops,
 * types and dims, well-formed attributes, and that each instruction's
 * recorded type is what typecheckop() computes.  The typing rules
 * themselves live only in typecheck.c.
 *
 * Since its input may be arbitrarily broken, every index is checked
 * before it is followed, and typecheckop() is only called on an
 * instruction whose operands, types and dims passed.  Problems name
 * values as printfn would, so a message can be matched against a dump.
 */
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

#include "ir.h"

typedef struct V {
	Fn *fn;
	Mod *m;
	const char *after;
	char **name;        /* printed names, or NULL if arrays are broken */
	bool *defd;         /* defd[r]: r is defined at this point */
	bool *tyok;         /* tyok[r]: r's type passed checktype() */
	int nerr;
} V;

static void
prefix(V *v)
{
	fputs("verify: ", stderr);
	if (v->after)
		fprintf(stderr, "after pass '%s': ", v->after);
	if (v->fn)
		fprintf(stderr, "@%s: ", v->fn->name ? v->fn->name : "?");
}

/* A problem with value r (RNone: with the function as a whole). */
static bool
bad(V *v, Ref r, const char *fmt, ...)
{
	va_list ap;

	prefix(v);
	if (r != RNone && v->name && r >= 0 && r < v->fn->nval)
		fprintf(stderr, "%%%s: ", v->name[r]);
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputc('\n', stderr);
	v->nerr++;
	return false;
}

static bool
inrange(V *v, Ref r)
{
	return r >= 0 && r < v->fn->nval;
}

static const char *
vname(V *v, Ref r)
{
	return inrange(v, r) && v->name ? v->name[r] : "?";
}

static bool
dimok(const Mod *m, Dim d)
{
	const DExp *e;
	int i, k;

	if (d >= 0)
		return true;
	if (~d >= m->ndexp || !m->dexp)
		return false;
	e = &m->dexp[~d];
	if (e->nterm <= 0 || !e->term)
		return false;
	for (i = 0; i < e->nterm; i++) {
		if (e->term[i].deg > MaxDeg || e->term[i].coef == 0)
			return false;
		for (k = 0; k < e->term[i].deg; k++)
			if (e->term[i].sym[k] >= m->nsym)
				return false;
	}
	return true;
}

static bool
checktype(V *v, Ref r, Type t)
{
	int i;

	if (t.kind != TTensor && t.kind != TGraph)
		return bad(v, r, "bad type kind %d", t.kind);
	if (t.rank > MaxRank)
		return bad(v, r, "rank %d exceeds %d", t.rank, MaxRank);
	if (t.kind == TTensor && (t.dtype <= DNone || t.dtype >= NDType))
		return bad(v, r, "bad dtype %d", t.dtype);
	if (t.kind == TGraph && (t.dtype != DNone || t.rank < 2 || t.rank > 4))
		return bad(v, r, "bad graph type (dtype %d, rank %d)", t.dtype, t.rank);
	if (isrelation(t) && (t.dim[2] != dimconst(1) || t.dim[3] == t.dim[0]))
		return bad(v, r, "bad relation type (graph count %d, source nodes %d)", (int)t.dim[2], (int)t.dim[3]);
	for (i = 0; i < t.rank; i++)
		if (!dimok(v->m, t.dim[i]))
			return bad(v, r, "dim %d of its type is invalid (%d)", i, (int)t.dim[i]);
	if (!typenumelok(v->m, t))
		return bad(v, r, "the element count of its type overflows");
	return true;
}

static bool
checkattrs(V *v, Ref r, const Ins *in)
{
	const Attr *a;
	int i, k;
	bool ok = true;

	if (in->nattr < 0 || (in->nattr > 0 && !in->attr))
		return bad(v, r, "bad attribute array (%d)", in->nattr);
	for (i = 0; i < in->nattr; i++) {
		a = &in->attr[i];
		if (!a->key) {
			ok = bad(v, r, "attribute %d has no key", i);
			continue;
		}
		if (attrfind(in->attr, i, a->key))
			ok = bad(v, r, "attribute '%s' given twice", a->key);
		switch (a->kind) {
		case AInt: case AFloat: case ABool:
			break;
		case AStr:
			if (!a->u.s)
				ok = bad(v, r, "attribute '%s' has no string", a->key);
			break;
		case ADim:
			if (!dimok(v->m, a->u.d))
				ok = bad(v, r, "attribute '%s' is an invalid dim", a->key);
			break;
		case AInts:
		case ADims:
			if (a->n < 0 || (a->n > 0 && !a->u.is)) {
				ok = bad(v, r, "attribute '%s' is a bad list", a->key);
				break;
			}
			if (a->kind == ADims)
				for (k = 0; k < a->n; k++)
					if (!dimok(v->m, a->u.ds[k])) {
						ok = bad(v, r, "attribute '%s' holds an invalid dim", a->key);
						break;
					}
			break;
		default:
			ok = bad(v, r, "attribute '%s' has bad kind %d", a->key, a->kind);
		}
	}
	/* a pass may set any Sched; only valid ones print as parseable text */
	if (in->hassched) {
		char why[128];
		if (schedvalid(&in->sched, why, sizeof why) < 0)
			ok = bad(v, r, "%s", why);
	}
	return ok;
}

/* Types of the operands: a scratch array grown on demand. */
typedef struct Types {
	Type *t;
	int c;
} Types;

static void
checkins(V *v, int idx, Types *tv)
{
	Fn *fn = v->fn;
	const Ins *in = &fn->ins[idx];
	const OpInfo *oi;
	Ref r = in->to, a;
	char msg[512], b1[256], b2[256];
	bool ok = true;
	Type out;
	int k;

	if (!inrange(v, r)) {
		prefix(v);
		fprintf(stderr, "instruction %d defines bad ref %d\n", idx, (int)r);
		v->nerr++;
		r = RNone;
		ok = false;
	} else if (v->defd[r]) {
		ok = bad(v, r, "defined twice (again by instruction %d)", idx);
		r = RNone;      /* keep the first definition */
	} else if (fn->val[r].def != idx)
		ok = bad(v, r, "val.def is %d, but instruction %d defines it", fn->val[r].def, idx);
	if (in->op <= Oxxx || in->op >= NOp) {
		bad(v, r, "bad op %d (instruction %d)", in->op, idx);
		goto done;
	}
	oi = &opinfo[in->op];
	if (in->narg < 0 || (in->narg > 0 && !in->arg)) {
		bad(v, r, "%s: bad operand array (%d)", oi->name, in->narg);
		goto done;
	}
	if (in->narg < oi->minargs || (oi->maxargs >= 0 && in->narg > oi->maxargs))
		ok = bad(v, r, "%s: %d operands, expected %d to %d", oi->name, in->narg,
		         oi->minargs, oi->maxargs);
	for (k = 0; k < in->narg; k++) {
		a = in->arg[k];
		if (!inrange(v, a))
			ok = bad(v, r, "%s: operand %d is a bad ref %d", oi->name, k + 1, (int)a);
		else if (!v->defd[a])
			ok = bad(v, r, "%s: operand %d, %%%s, is not defined before this use",
			         oi->name, k + 1, vname(v, a));
		else if (!v->tyok[a])
			ok = false;     /* reported at its definition */
	}
	if (!checkattrs(v, r, in))
		ok = false;
	if (r != RNone) {
		if (checktype(v, r, fn->val[r].type))
			v->tyok[r] = true;
		else
			ok = false;
	}
	if (!ok)
		goto done;
	if (in->narg > tv->c) {
		tv->c = in->narg;
		tv->t = erealloc(tv->t, tv->c * sizeof *tv->t);
	}
	for (k = 0; k < in->narg; k++)
		tv->t[k] = fn->val[in->arg[k]].type;
	if (!typecheckop(v->m, in->op, tv->t, in->narg, in->attr, in->nattr,
	                 (oi->flags & (Fleaf | Fdyn)) || in->op == Ocast ? &fn->val[r].type : NULL,
	                 &out, msg, sizeof msg))
		bad(v, r, "%s", msg);
	else if (!typeeq(out, fn->val[r].type)) {
		snprinttype(b1, sizeof b1, v->m, fn->val[r].type);
		snprinttype(b2, sizeof b2, v->m, out);
		bad(v, r, "type mismatch: recorded %s, operands give %s", b1, b2);
	} else if (storedtype(in) != DNone && (out.kind != TTensor || out.dtype != DF32))
		bad(v, r, "store = \"%s\" on a value that is not f32", dtypename(storedtype(in)));
	else if (rounddtype(in) != DNone && (out.kind != TTensor || out.dtype != DF32))
		bad(v, r, "round = \"%s\" on a value that is not f32", dtypename(rounddtype(in)));
done:
	if (r != RNone)
		v->defd[r] = true;
}

/* The arrays themselves; nothing else can be checked without them. */
static bool
checkarrays(V *v)
{
	Fn *fn = v->fn;

	if (!fn->mod)
		return bad(v, RNone, "no module");
	if (fn->nval < 0 || (fn->nval > 0 && !fn->val))
		return bad(v, RNone, "bad value table (%d)", fn->nval);
	if (fn->narg < 0 || (fn->narg > 0 && !fn->arg))
		return bad(v, RNone, "bad argument list (%d)", fn->narg);
	if (fn->nret < 0 || (fn->nret > 0 && !fn->ret))
		return bad(v, RNone, "bad ret list (%d)", fn->nret);
	if (fn->nins < 0 || (fn->nins > 0 && !fn->ins))
		return bad(v, RNone, "bad instruction list (%d)", fn->nins);
	return true;
}

bool
verifyfn(Fn *fn, const char *after)
{
	V v = {.fn = fn, .m = fn->mod, .after = after};
	Types tv = {0};
	Ref r;
	int i;

	if (!checkarrays(&v))
		return false;
	v.name = valnames(fn);
	v.defd = emalloc((fn->nval + 1) * sizeof *v.defd);
	v.tyok = emalloc((fn->nval + 1) * sizeof *v.tyok);
	for (i = 0; i < fn->narg; i++) {
		r = fn->arg[i];
		if (!inrange(&v, r)) {
			bad(&v, RNone, "argument %d is a bad ref %d", i + 1, (int)r);
			continue;
		}
		if (v.defd[r]) {
			bad(&v, r, "argument listed twice");
			continue;
		}
		if (fn->val[r].def != -1)
			bad(&v, r, "argument has val.def %d, expected -1", fn->val[r].def);
		v.tyok[r] = checktype(&v, r, fn->val[r].type);
		v.defd[r] = true;
	}
	for (i = 0; i < fn->nins; i++)
		checkins(&v, i, &tv);
	for (i = 0; i < fn->nret; i++) {
		r = fn->ret[i];
		if (!inrange(&v, r))
			bad(&v, RNone, "ret %d is a bad ref %d", i + 1, (int)r);
		else if (!v.defd[r])
			bad(&v, RNone, "ret %d, %%%s, is not defined", i + 1, vname(&v, r));
	}
	free(tv.t);
	free(v.defd);
	free(v.tyok);
	freevalnames(v.name);
	return v.nerr == 0;
}

bool
verifymod(Mod *m, const char *after)
{
	V v = {.m = m, .after = after};
	Fn *fn, *g;
	int i;
	bool ok = true;

	for (i = 0; i < m->nsym; i++)
		if (!m->sym[i].name)
			ok = bad(&v, RNone, "symbol %d has no name", i);
	for (i = 0; i < m->ndexp; i++)
		if (!dimok(m, ~(Dim)i))
			ok = bad(&v, RNone, "dim expression %d is invalid", i);
	for (fn = m->fn; fn; fn = fn->link) {
		if (fn->mod != m) {
			v.fn = fn;
			ok = bad(&v, RNone, "belongs to another module");
			continue;
		}
		for (g = m->fn; g != fn; g = g->link)
			if (fn->name && g->name && strcmp(fn->name, g->name) == 0) {
				v.fn = fn;
				ok = bad(&v, RNone, "function defined twice");
				break;
			}
		if (!verifyfn(fn, after))
			ok = false;
	}
	return ok;
}
