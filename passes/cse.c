/*
 * Common subexpression elimination.
 *
 * Every op is pure and the function is one straight-line block, so two
 * instructions with the same op, the same operands, equal attributes and
 * equal result types compute the same value, and the later one can be
 * replaced by the earlier (which dominates it: it comes first).  Besides,
 * two params with the same name are the same tensor of the weight file,
 * so they merge whatever their other attributes say.  Result types are
 * compared too: ops that create a fresh derived symbol (Fdyn) then never
 * merge, which is right, since each has its own size.
 *
 * One forward walk with a hash table of the instructions kept so far.
 * Renaming a merged value rewrites the later instructions before the
 * walk reaches them, so chains collapse in one walk: once two gathers
 * merge, the matmuls that used them compare equal too.  Attributes are
 * compared as sets by key (their order in the array carries no meaning)
 * and are left out of the hash so the hash cannot depend on that order.
 * Floats compare by bit pattern: -0.0 and 0.0 differ, a NaN equals
 * itself.  Attribute kinds must match exactly (an AInt 16 and an ADim 16
 * do not merge; both come from one producer within a function anyway).
 *
 * Merged instructions are dropped here, so --passes=cse output is clean.
 */
#include <stdlib.h>
#include <string.h>

#include "passes.h"

static uint64_t
mix(uint64_t h, uint64_t v)
{
	h ^= v + 0x9e3779b97f4a7c15u + (h << 6) + (h >> 2);
	return h;
}

static uint64_t
strhash(const char *s)
{
	uint64_t h = 14695981039346656037u;

	for (; *s; s++)
		h = (h ^ (unsigned char)*s) * 1099511628211u;
	return h;
}

/* The name of a param, or NULL when the attribute is missing or odd. */
static const char *
paramname(const Ins *in)
{
	return in->op == Oparam ? attrstr(in, "name") : NULL;
}

static uint64_t
inshash(const Fn *fn, const Ins *in)
{
	Type t = fn->val[in->to].type;
	uint64_t h;
	const char *pn;
	int k;

	h = mix(in->op, t.kind);
	h = mix(h, t.dtype);
	h = mix(h, t.rank);
	for (k = 0; k < t.rank; k++)
		h = mix(h, (uint32_t)t.dim[k]);
	if ((pn = paramname(in)))
		return mix(h, strhash(pn));
	h = mix(h, in->narg);
	for (k = 0; k < in->narg; k++)
		h = mix(h, (uint32_t)in->arg[k]);
	return h;
}

static bool
attreq(const Attr *a, const Attr *b)
{
	int k;

	if (a->kind != b->kind)
		return false;
	switch (a->kind) {
	case AInt:
	case ABool:
		return a->u.i == b->u.i;
	case AFloat:
		return memcmp(&a->u.f, &b->u.f, sizeof a->u.f) == 0;
	case AStr:
		return strcmp(a->u.s, b->u.s) == 0;
	case ADim:
		return a->u.d == b->u.d;   /* interned: equal dims are equal ints */
	case AInts:
	case ADims:
		if (a->n != b->n)
			return false;
		for (k = 0; k < a->n; k++)
			if (a->kind == AInts ? a->u.is[k] != b->u.is[k] : a->u.ds[k] != b->u.ds[k])
				return false;
		return true;
	}
	return false;
}

/* Equal as sets by key; keys are unique within an instruction. */
static bool
attrseq(const Ins *a, const Ins *b)
{
	const Attr *o;
	int k;

	if (a->nattr != b->nattr)
		return false;
	for (k = 0; k < a->nattr; k++)
		if (!(o = findattr(b, a->attr[k].key)) || !attreq(&a->attr[k], o))
			return false;
	return true;
}

static bool
inseq(const Fn *fn, const Ins *a, const Ins *b)
{
	const char *pa, *pb;

	if (a->op != b->op || !typeeq(fn->val[a->to].type, fn->val[b->to].type))
		return false;
	pa = paramname(a);
	pb = paramname(b);
	if (pa || pb)
		return pa && pb && strcmp(pa, pb) == 0;
	/* narg 0: arg may be NULL, which memcmp must not see */
	if (a->narg != b->narg || (a->narg && memcmp(a->arg, b->arg, a->narg * sizeof *a->arg) != 0))
		return false;
	return attrseq(a, b);
}

void
cse(Fn *fn)
{
	int *slot;          /* instruction index + 1; 0 is empty */
	bool *dead;
	size_t cap, j;
	Ins *in;
	int i, n;

	for (cap = 16; cap < 2 * (size_t)fn->nins; cap *= 2)
		;
	slot = emalloc(cap * sizeof *slot);
	dead = emalloc((fn->nins + 1) * sizeof *dead);
	for (i = 0; i < fn->nins; i++) {
		in = &fn->ins[i];
		if (in->to == RNone || !(opinfo[in->op].flags & Fpure))
			continue;
		for (j = inshash(fn, in) & (cap - 1); slot[j]; j = (j + 1) & (cap - 1))
			if (inseq(fn, &fn->ins[slot[j] - 1], in))
				break;
		if (!slot[j]) {
			slot[j] = i + 1;
			continue;
		}
		replaceuses(fn, in->to, fn->ins[slot[j] - 1].to);
		dead[i] = true;
	}
	for (i = n = 0; i < fn->nins; i++)
		if (!dead[i])
			fn->ins[n++] = fn->ins[i];
	fn->nins = n;
	free(dead);
	free(slot);
}
