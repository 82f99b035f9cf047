/*
 * store-bf16, store-f16: which values are stored in 16 bits
 * (--precision=bf16|fp16; docs/precision.md).
 *
 * Features, activations and messages are stored in 16 bits; arithmetic
 * and accumulation stay f32.  Every f32 value that forward writes to
 * memory (memplan's needsstorage: a kernel's output, not a value a fused
 * kernel keeps in registers) gets store = "bf16" (or "f16"): it is
 * rounded to nearest even where it is written.  Each f32 tensor input
 * is read through a cast marked the same way, so the features are the
 * 16-bit ones from the first kernel on.  What stays 32-bit: parameters
 * and what is computed from them alone (but under bf16 a dense
 * transform's weights are rounded to bfloat16 values: roundweights),
 * bind-time values (degrees, gcn_norm), the outputs the caller receives,
 * integer and bool values.
 *
 * A training step (mixed precision) stores its activations in 16 bits:
 * the values of rank 2 or more (node and edge rows) that forward writes
 * to memory, that the loss depends on and that depend on a tensor input
 * -- what the backward reads again.  The loss and its reductions, the
 * gradients, the returned values and the inputs stay float32, and the
 * weights are not rounded (they change every step; the optimizer's
 * master weights and state are float32).  The gradient of a rounding is
 * taken as the identity, as autocast's casts are.
 *
 * The decision lives in the IR, so the interpreter (round16 at every
 * marked value: the reference) and every target read the same marks.
 * The pass runs after fusion, since which values are written depends on
 * the kernels, and before memplan, which sizes the inputs' casts' slots.
 */
#include <stdlib.h>
#include <string.h>

#include "passes.h"

/* the group around instruction i, [*a, *b), or [i, i + 1) */
static void
grouprange(const Fn *fn, int i, int *a, int *b)
{
	int64_t grp = attrint(&fn->ins[i], "group", -1);

	*a = i;
	*b = i + 1;
	if (grp < 0)
		return;
	while (*a > 0 && attrint(&fn->ins[*a - 1], "group", -1) == grp)
		--*a;
	while (*b < fn->nins && attrint(&fn->ins[*b], "group", -1) == grp)
		++*b;
}

/* a cast of x marked key = dt (store or round), placed at instruction
 * index a */
static Ref
insertcast(Fn *fn, Ref x, const char *key, const char *dt, int a)
{
	Attr at = mkattrstr(fn->mod->arena, key, dt);
	Ref c = emit(fn, Ocast, fn->val[x].type, &x, 1, &at, 1, fn->val[x].name, fn->loc);
	int d = fn->val[c].def;
	Ins in = fn->ins[d];

	memmove(&fn->ins[a + 1], &fn->ins[a], (d - a) * sizeof *fn->ins);
	fn->ins[a] = in;
	return c;
}

/* x's uses by instructions read cast c instead, which is placed before
 * the first of them (before its group: groups stay contiguous) */
static void
castinput(Fn *fn, Ref x, const char *store)
{
	int i, k, first = -1, a, b;
	Ref c;

	for (i = 0; i < fn->nins && first < 0; i++)
		for (k = 0; k < fn->ins[i].narg; k++)
			if (fn->ins[i].arg[k] == x)
				first = i;
	if (first < 0)
		return;
	grouprange(fn, first, &a, &b);
	c = insertcast(fn, x, "store", store, a);
	for (i = a + 1; i < fn->nins; i++)
		for (k = 0; k < fn->ins[i].narg; k++)
			if (fn->ins[i].arg[k] == x)
				fn->ins[i].arg[k] = c;
	filluse(fn);
}

/* whether w is read only as a forward matmul's right operand */
static bool
onlyweight(const Fn *fn, Ref w)
{
	int i, k;

	for (i = 0; i < fn->nret; i++)
		if (fn->ret[i] == w)
			return false;
	for (i = 0; i < fn->nins; i++)
		for (k = 0; k < fn->ins[i].narg; k++)
			if (fn->ins[i].arg[k] == w && (fn->ins[i].op != Omatmul || k != 1))
				return false;
	return true;
}

/* bf16: a dense transform's weights -- a forward matmul's right operand
 * computed from parameters alone -- are rounded to bfloat16, once, when
 * the weights are loaded (as torch's autocast does), so that the cpu
 * target multiplies bfloat16 by bfloat16 (vdpbf16ps): such a product
 * reads its left operand rounded to bfloat16 too (as autocast's linear
 * layer does; the interpreter's matmul, every code generator's), so an
 * input that only such products read needs no cast pass, and a row a
 * fused kernel keeps in registers is rounded as the product reads it.
 * The weights stay float32 in memory (round = "bf16", not store): a
 * fused row kernel's reads are float loads, and the GEMMs pack them into
 * bfloat16 pairs themselves.  The value is marked where a load-time kernel makes it and
 * only matmuls read it (a transposed weight); else the matmuls read a
 * marked cast of it, placed just after it (a parameter, a value read
 * elsewhere too). */
static void
roundweights(Fn *fn, const char *store)
{
	unsigned char *phase;
	int i, d;
	Ref w, c;

	for (i = 0; i < fn->nins; i++) {
		if (fn->ins[i].op != Omatmul || fn->ins[i].narg < 2)
			continue;
		filluse(fn);
		phase = emalloc((fn->nval + 1) * sizeof *phase);
		phases(fn, phase);
		w = fn->ins[i].arg[1];
		d = fn->val[w].def;
		if (phase[fn->ins[i].to] != PhaseForward || fn->val[w].type.kind != TTensor ||
		    fn->val[w].type.dtype != DF32 || (phase[w] != PhaseLoad && phase[w] != PhaseParam) ||
		    d < 0 || storedtype(&fn->ins[d]) != DNone || rounddtype(&fn->ins[d]) != DNone) {
			free(phase);
			continue;
		}
		free(phase);
		if (fn->ins[d].op != Oparam && !(opinfo[fn->ins[d].op].flags & Falias) && onlyweight(fn, w)) {
			putattr(fn, &fn->ins[d], mkattrstr(fn->mod->arena, "round", store));
			continue;
		}
		c = insertcast(fn, w, "round", store, d + 1);
		for (int j = d + 2; j < fn->nins; j++)
			if (fn->ins[j].op == Omatmul && fn->ins[j].narg > 1 && fn->ins[j].arg[1] == w)
				fn->ins[j].arg[1] = c;
		i++;   /* the matmul moved down one */
	}
	filluse(fn);
}

/* whether every use of x is as the left operand of a matmul whose
 * weights are rounded: such a product reads x rounded itself (the
 * interpreter's matmul, gnn_bgemm), so x needs no cast pass */
static bool
onlyroundedleft(const Fn *fn, Ref x)
{
	int i, k, d;

	for (i = 0; i < fn->nret; i++)
		if (fn->ret[i] == x)
			return false;
	for (i = 0; i < fn->nins; i++)
		for (k = 0; k < fn->ins[i].narg; k++) {
			if (fn->ins[i].arg[k] != x)
				continue;
			if (fn->ins[i].op != Omatmul || k != 0 || fn->ins[i].narg < 2)
				return false;
			d = fn->val[fn->ins[i].arg[1]].def;
			if (d < 0 || rounddtype(&fn->ins[d]) == DNone)
				return false;
		}
	return true;
}

/* a training step's activations: see the top of the file */
static void
trainmarks(Fn *fn, const char *store)
{
	unsigned char *phase = emalloc((fn->nval + 1) * sizeof *phase);
	size_t nb = (fn->nval + 1) * sizeof(bool);
	bool *anc = memset(emalloc(nb), 0, nb), *dep = memset(emalloc(nb), 0, nb), *out = memset(emalloc(nb), 0, nb);
	int i, k;

	filluse(fn);
	phases(fn, phase);
	for (i = 0; i < fn->narg; i++)
		dep[fn->arg[i]] = fn->val[fn->arg[i]].type.kind == TTensor;
	for (i = 0; i < fn->nins; i++)
		for (k = 0; k < fn->ins[i].narg; k++)
			if (fn->ins[i].to >= 0 && dep[fn->ins[i].arg[k]])
				dep[fn->ins[i].to] = true;
	for (i = 0; i < fn->nret; i++)
		out[storageroot(fn, fn->ret[i])] = true;
	if (fn->nret > 0)
		anc[fn->ret[0]] = true;   /* the loss */
	for (i = fn->nins - 1; i >= 0; i--)
		if (fn->ins[i].to >= 0 && anc[fn->ins[i].to])
			for (k = 0; k < fn->ins[i].narg; k++)
				anc[fn->ins[i].arg[k]] = true;
	for (i = 0; i < fn->nins; i++) {
		Ref v = fn->ins[i].to;
		if (v >= 0 && anc[v] && dep[v] && !out[v] && phase[v] == PhaseForward && fn->val[v].type.rank >= 2 &&
		    fn->val[v].type.dtype == DF32 && needsstorage(fn, phase, v))
			putattr(fn, &fn->ins[i], mkattrstr(fn->mod->arena, "store", store));
	}
	free(phase);
	free(anc);
	free(dep);
	free(out);
}

static void
precision(Fn *fn, const char *store)
{
	unsigned char *phase;
	bool *out;
	Ref v;
	int i, n;

	if (fn->train) {
		trainmarks(fn, store);
		return;
	}
	if (!strcmp(store, "bf16"))
		roundweights(fn, store);
	phase = emalloc((fn->nval + 1) * sizeof *phase);
	out = emalloc((fn->nval + 1) * sizeof *out);
	memset(out, 0, (fn->nval + 1) * sizeof *out);
	filluse(fn);
	phases(fn, phase);
	for (i = 0; i < fn->nret; i++)
		out[storageroot(fn, fn->ret[i])] = true;
	for (i = 0; i < fn->nins; i++) {
		v = fn->ins[i].to;
		if (v >= 0 && !out[v] && needsstorage(fn, phase, v) && fn->val[v].type.dtype == DF32)
			putattr(fn, &fn->ins[i], mkattrstr(fn->mod->arena, "store", store));
	}
	/* castinput grows fn->val: the inputs first */
	n = fn->narg;
	for (i = 0; i < n; i++) {
		v = fn->arg[i];
		if (fn->val[v].type.kind == TTensor && fn->val[v].type.dtype == DF32 && !onlyroundedleft(fn, v))
			castinput(fn, v, store);
	}

	free(phase);
	free(out);
}

void
storebf16(Fn *fn)
{
	precision(fn, "bf16");
}

void
storef16(Fn *fn)
{
	precision(fn, "f16");
}
