/*
 * memplan: memory planning by liveness, and the analyses it shares with
 * code generation and --report (which kernels forward launches, which
 * values need storage, which buffers the arena holds).
 *
 * Forward runs as a sequence of kernels: one per fusion group (the
 * "group" attribute; fuse.c makes them contiguous), one per ungrouped
 * forward instruction; alias ops (Falias: reshape, dropout) are views of
 * their operand and launch nothing.  Time is the kernel index.  A value that needs
 * storage in the arena lives from the kernel that defines it to the last
 * kernel that reads it (through aliases), or to the end of forward if it
 * is returned (forward copies its outputs out last).  Ranges are closed:
 * a kernel's inputs and outputs are live together, so no kernel writes
 * the buffer it reads -- but for one case (inplaceover): a tiled GEMM's
 * epilogue reads an operand of its output's shape element by element,
 * each just before the same thread writes that element of the output,
 * so the output may take the operand's slot where that kernel reads it
 * last (SAGE's h = relu(lin_l(a) + lin_r(x)) over lin_l(a): a slot less
 * in bfloat16).
 *
 * Values that need no storage: everything outside forward (parameters,
 * load- and bind-time values have buffers of their own), aliases, and
 * values internal to a fusion group -- made by the group, read only
 * inside it, not returned -- which the fused kernel keeps in registers.
 *
 * The pass gives every value that needs storage a {slot = K}.  Values
 * share a slot when their live ranges are disjoint and their sizes (the
 * element count times the dtype's size, a polynomial) have the same
 * monomials and one is at most the other term by term (dimlike, dimle),
 * so that the slot, as large as its largest value, stays a formula in
 * N, E and the derived sizes, and one object serves every graph (the
 * 400*N bytes of an aggregated input and the 188*N of the logits share;
 * 16*E and 16*N do not, nor a constant's 512 bytes and 4*N: a small
 * vector would hold a large slot that the rows of a later value could
 * have taken: GIN's cpu training step ran 4-7% slower so in interleaved
 * runs, and within their noise without it).  Slots are handed out greedily in order of definition:
 * a free slot that holds the value already, else a free one that grows
 * least to hold it (by the graph-free measure of dimle: any that
 * grows), else a new one.
 *
 * arenabuffers() is what code generation lays out: values with the same
 * valid slot share a buffer, whose memory is its largest value's; a slot
 * that does not fit (hand-written IR: an incomparable size, an
 * overlapping live range) gives the value a buffer of its own rather
 * than wrong results.  Without slots (-O0) every value has its own
 * buffer.
 */
#include <stdlib.h>
#include <string.h>

#include "passes.h"

int
forwardkernels(const Fn *fn, const unsigned char *phase, int *kern)
{
	const Ins *in;
	int64_t grp, last = -1;
	int i, n = 0;

	/* the same walk as codegen's emitkernels: a group's kernel runs
	 * where the group starts */
	for (i = 0; i < fn->nins; i++) {
		in = &fn->ins[i];
		kern[i] = -1;
		if (phase[in->to] != PhaseForward) {
			last = -1;
			continue;
		}
		grp = attrint(in, "group", -1);
		if (grp >= 0) {
			if (grp != last)
				n++;
			kern[i] = n - 1;
			last = grp;
			continue;
		}
		last = -1;
		if (!(opinfo[in->op].flags & (Falias | Fgraph)) && !folded(fn, i))
			kern[i] = n++;
	}
	return n;
}

/* the first instruction of instruction d's fusion group grp (fuse.c
 * makes a group's instructions one contiguous run) */
static int
groupstart(const Fn *fn, int d, int64_t grp)
{
	while (d > 0 && attrint(&fn->ins[d - 1], "group", -1) == grp)
		d--;
	return d;
}

bool
groupinternal(const Fn *fn, Ref v)
{
	int64_t grp;
	int d = fn->val[v].def, a, b;

	if (d < 0 || (grp = attrint(&fn->ins[d], "group", -1)) < 0)
		return false;
	/* the group's instructions: the contiguous run around d */
	a = groupstart(fn, d, grp);
	for (b = d + 1; b < fn->nins && attrint(&fn->ins[b], "group", -1) == grp; b++)
		;
	return !escapesgroup(fn, v, a, b);
}

bool
needsstorage(const Fn *fn, const unsigned char *phase, Ref v)
{
	int d = fn->val[v].def;

	return phase[v] == PhaseForward && d >= 0 && !(opinfo[fn->ins[d].op].flags & Falias) &&
	       fn->val[v].type.kind == TTensor && !groupinternal(fn, v) && !folded(fn, d);
}

bool
inplaceover(const Fn *fn, Ref u, Ref v)
{
	int d = fn->val[v].def, h, j, k;
	int64_t grp;
	bool read = false;

	if (u < 0 || d < 0 || fn->val[u].def < 0 || (grp = attrint(&fn->ins[d], "group", -1)) < 0)
		return false;
	if (valelemsize(fn, u) != 2 || valelemsize(fn, v) != 2 || !typeeq(fn->val[u].type, fn->val[v].type))
		return false;
	h = groupstart(fn, d, grp);
	if (epilogueend(fn, h) != d)
		return false;
	for (k = 0; k < fn->ins[h].narg; k++)
		if (storageroot(fn, fn->ins[h].arg[k]) == u)
			return false;   /* the product reads it anywhere */
	for (j = h + 1; j <= d; j++)
		for (k = 0; k < fn->ins[j].narg; k++)
			if (fn->ins[j].arg[k] == u)
				read = true;
			else if (storageroot(fn, fn->ins[j].arg[k]) == u)
				return false;   /* through a view: another shape */
	return read;
}

/* Live ranges in kernels, [from[v], to[v]], of the values that need
 * storage (need[v]); the others are left -1. */
typedef struct Live {
	int nkern;
	bool *need;
	int *from, *to;
} Live;

static void
liveness(const Fn *fn, const unsigned char *phase, Live *l)
{
	int *kern, i, k, g;
	Ref r;

	kern = emalloc((fn->nins + 1) * sizeof *kern);
	l->nkern = forwardkernels(fn, phase, kern);
	l->need = emalloc(fn->nval + 1);
	l->from = emalloc((fn->nval + 1) * sizeof *l->from);
	l->to = emalloc((fn->nval + 1) * sizeof *l->to);
	for (i = 0; i < fn->nval; i++) {
		l->need[i] = needsstorage(fn, phase, i);
		l->from[i] = l->to[i] = -1;
	}
	for (i = 0; i < fn->nins; i++) {
		r = fn->ins[i].to;
		if (l->need[r])
			l->from[r] = l->to[r] = kern[i];
		if (kern[i] < 0)
			continue;
		for (k = 0; k < fn->ins[i].narg; k++) {
			r = storageroot(fn, fn->ins[i].arg[k]);
			if (l->need[r] && l->to[r] < kern[i])
				l->to[r] = kern[i];
		}
		/* a reader through a folded instruction reads its operands */
		if ((g = viafold(fn, i)) >= 0)
			for (k = 0; k < fn->ins[g].narg; k++) {
				r = storageroot(fn, fn->ins[g].arg[k]);
				if (l->need[r] && l->to[r] < kern[i])
					l->to[r] = kern[i];
			}
	}
	for (i = 0; i < fn->nret; i++) {
		r = storageroot(fn, fn->ret[i]);
		if (l->need[r])
			l->to[r] = l->nkern;
	}
	free(kern);
}

static void
freelive(Live *l)
{
	free(l->need);
	free(l->from);
	free(l->to);
}

/* v's size in bytes as a Dim; false if it does not fit one */
static bool
bytesof(Fn *fn, Ref v, Dim *out)
{
	const Type *t = &fn->val[v].type;
	bool ok = true;
	Dim n = dimprod(fn->mod, t->dim, t->rank, &ok);

	/* a value stored in 16 bits (passes/precision.c) takes 2 bytes an element */
	n = dimmul(fn->mod, n, dimconst((int64_t)valelemsize(fn, v)), &ok);
	*out = n;
	return ok;
}

/* is v what forward returns (a model's, not a training step's)? */
static bool
returned(const Fn *fn, Ref v)
{
	for (int k = 0; !fn->train && k < fn->nret; k++)
		if (storageroot(fn, fn->ret[k]) == v)
			return true;
	return false;
}

int
arenabuffers(Fn *fn, const unsigned char *phase, int *buf, Ref *rep, bool outalone)
{
	Live l;
	Dim *bytes, b;
	int *slotbuf, nslot = 0, nbuf = 0, i, j;
	int64_t s;
	bool okb, fits;
	Ref v;

	liveness(fn, phase, &l);
	bytes = emalloc((fn->nval + 1) * sizeof *bytes);
	for (i = 0; i < fn->nins; i++)
		if ((s = attrint(&fn->ins[i], "slot", -1)) >= nslot && s < fn->nval)
			nslot = (int)s + 1;
	slotbuf = emalloc((nslot + 1) * sizeof *slotbuf);
	for (i = 0; i < nslot; i++)
		slotbuf[i] = -1;
	for (v = 0; v < fn->nval; v++)
		buf[v] = -1;
	for (i = 0; i < fn->nins; i++) {
		v = fn->ins[i].to;
		if (!l.need[v])
			continue;
		/* outalone: a returned value shares no memory (lazybuffer) */
		s = outalone && returned(fn, v) ? -1 : attrint(&fn->ins[i], "slot", -1);
		okb = bytesof(fn, v, &b);
		fits = s >= 0 && s < nslot && slotbuf[s] >= 0 && okb && dimlike(fn->mod, b, bytes[slotbuf[s]]) &&
		       (dimle(fn->mod, b, bytes[slotbuf[s]]) || dimle(fn->mod, bytes[slotbuf[s]], b));
		/* every value already in the buffer must be dead before v is
		 * made, or read last where v is made over it in place */
		for (j = 0; fits && j < fn->nval; j++)
			if (buf[j] == slotbuf[s] && !(l.to[j] < l.from[v] || l.to[v] < l.from[j]) &&
			    !(l.to[j] == l.from[v] && inplaceover(fn, j, v)))
				fits = false;
		if (fits) {
			buf[v] = slotbuf[s];
			/* the largest value owns the memory (each before it is
			 * at most it: they were at most the one it outgrows) */
			if (!dimle(fn->mod, b, bytes[buf[v]])) {
				rep[buf[v]] = v;
				bytes[buf[v]] = b;
			}
			continue;
		}
		buf[v] = nbuf;
		rep[nbuf] = v;
		bytes[nbuf] = okb ? b : -1;
		/* a value whose size is no Dim shares with nothing */
		if (s >= 0 && s < nslot && slotbuf[s] < 0 && okb)
			slotbuf[s] = nbuf;
		nbuf++;
	}
	free(slotbuf);
	free(bytes);
	freelive(&l);
	return nbuf;
}

bool
lazybuffer(const Fn *fn, const int *buf, const Ref *rep, int b)
{
	Ref v = rep[b];

	if (!returned(fn, v))
		return false;
	for (Ref w = 0; w < fn->nval; w++)
		if (w != v && buf[w] == b)
			return false;
	return true;
}

int
scratchfloors(Fn *fn, const unsigned char *phase, const int *buf, int *order, int *floor, uint64_t *live, bool outalone)
{
	Live l;
	int *place, np = 0, i, k;
	Ref v;

	liveness(fn, phase, &l);
	place = emalloc((fn->nval + 1) * sizeof *place);
	/* a slot is placed where its first value is made (codegen numbers
	 * its buffer there), so a kernel early in forward has the slots of
	 * later values to lay its scratch over */
	for (i = 0; i < fn->nval; i++)
		place[i] = -1;
	for (i = 0; i < fn->nins; i++) {
		v = fn->ins[i].to;
		if (l.need[v] && buf[v] >= 0 && place[buf[v]] < 0)
			order[place[buf[v]] = np++] = buf[v];
	}
	for (k = 0; k <= l.nkern; k++) {
		floor[k] = 0;
		if (live)
			live[k] = 0;
	}
	/* a buffer is live while any of its values is; a returned value
	 * alone in its buffer (outalone: lazybuffer) is not in the arena */
	for (v = 0; v < fn->nval; v++)
		for (k = l.from[v]; l.need[v] && buf[v] >= 0 && !(outalone && returned(fn, v)) && k >= 0 && k <= l.to[v]; k++) {
			if (floor[k] < place[buf[v]] + 1)
				floor[k] = place[buf[v]] + 1;
			/* places past the mask's 64 count as live (program.c) */
			if (live && place[buf[v]] < 64)
				live[k] |= (uint64_t)1 << place[buf[v]];
		}
	free(place);
	freelive(&l);
	return np;
}

static void
setslot(Fn *fn, int i, int slot)
{
	putattr(fn, &fn->ins[i], mkattrint(fn->mod->arena, "slot", slot));
}

static void
dropslot(Fn *fn, int i)
{
	Ins *in = &fn->ins[i];
	int k;

	/* attribute order carries no meaning: the last one fills the hole */
	for (k = 0; k < in->nattr; k++)
		if (strcmp(in->attr[k].key, "slot") == 0)
			in->attr[k--] = in->attr[--in->nattr];
}

/* a free slot for v, of b bytes, made at kernel from: one that holds
 * it (the smallest such), else one it outgrows (the largest such: the
 * least growth), else -1.  A slot is free when its last value (last[s])
 * is dead by then, or read last by v's kernel, which may write v over it
 * (inplaceover). */
static int
pickslot(const Fn *fn, const Dim *size, const bool *share, const int *freeat, const Ref *last, int nslot, Ref v, Dim b, int from)
{
	Mod *m = fn->mod;
	int hold = -1, grow = -1;

	for (int s = 0; s < nslot; s++) {
		if (!share[s] || (freeat[s] >= from && !(freeat[s] == from && inplaceover(fn, last[s], v))))
			continue;
		if (!dimlike(m, b, size[s]))
			continue;
		if (dimle(m, b, size[s]) && (hold < 0 || dimle(m, size[s], size[hold])))
			hold = s;
		else if (dimle(m, size[s], b) && (grow < 0 || dimle(m, size[grow], size[s])))
			grow = s;
	}
	return hold >= 0 ? hold : grow;
}

void
memplan(Fn *fn)
{
	unsigned char *phase;
	Live l;
	Dim *size, b;
	bool *share;
	int *freeat, nslot = 0, i, s;
	Ref v, *last;

	filluse(fn);
	for (i = 0; i < fn->nins; i++)
		dropslot(fn, i);
	phase = emalloc(fn->nval + 1);
	phases(fn, phase);
	liveness(fn, phase, &l);
	size = emalloc((fn->nval + 1) * sizeof *size);
	freeat = emalloc((fn->nval + 1) * sizeof *freeat);
	share = emalloc(fn->nval + 1);
	last = emalloc((fn->nval + 1) * sizeof *last);
	for (i = 0; i < fn->nins; i++) {
		v = fn->ins[i].to;
		if (!l.need[v])
			continue;
		/* a size too large for a Dim shares with nothing */
		share[nslot] = bytesof(fn, v, &b);
		s = share[nslot] ? pickslot(fn, size, share, freeat, last, nslot, v, b, l.from[v]) : -1;
		if (s < 0)
			size[s = nslot++] = b;
		else if (!dimle(fn->mod, b, size[s]))
			size[s] = b;   /* grows to hold v */
		freeat[s] = l.to[v];
		last[s] = v;
		setslot(fn, i, s);
	}
	free(last);
	free(share);
	free(size);
	free(freeat);
	freelive(&l);
	free(phase);
}
