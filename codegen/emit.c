/*
 * Emission of a model's C (--target=cpu) or CUDA C (--target=cuda)
 * source and of its header.
 *
 * The generated file is standalone: it needs only gnnrt.h (and the CUDA
 * runtime for cuda), and philox.h, installed beside it, where a model
 * draws random numbers (dropout_train).  Per model it holds
 *   1. one function per instruction: a parallel loop over independent
 *      tasks (output elements, rows, segments), whose sizes arrive as
 *      arguments.  Forward and bind-time instructions run on the device
 *      for cuda (bind works on the device there, runtime/devbind.cu), so
 *      their functions are __global__ kernels there and plain loops
 *      (OpenMP where available) for cpu; load-time ones run on the host.
 *      Loop bodies are written once, for both;
 *   2. bind: graph ops through the runtime, derived sizes, the other
 *      bind-time values, segment plans for deterministic scatters, and
 *      the memory plan (every forward value gets its offset in one arena,
 *      sized from N, E and the derived sizes; nothing is allocated in
 *      forward);
 *   3. the API (create, load_weights, bind, forward, forward_host,
 *      destroy) and the descriptor that generic tools use.
 */
#include <limits.h>
#include <stdarg.h>
#include <string.h>

#include "codegen.h"
#include "emit.h"

void
out(E *e, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vwput(e->w, fmt, ap);
	va_end(ap);
}

const char *
ctype(int dt)
{
	switch (dt) {
	case DF32: return "float";
	case DF64: return "double";
	case DI32: return "int32_t";
	case DI64: return "int64_t";
	case DBool: return "uint8_t";
	/* a 16-bit float's arithmetic: memory holds its words (memctype) */
	case DF16:
	case DBF16: return "float";
	}
	die("codegen: no C type for %s", dtypename(dt));
}

const char *
gnndtype(int dt)
{
	switch (dt) {
	case DF32: return "GNN_F32";
	case DF64: return "GNN_F64";
	case DI32: return "GNN_I32";
	case DI64: return "GNN_I64";
	case DBool: return "GNN_BOOL";
	case DF16: return "GNN_F16";
	case DBF16: return "GNN_BF16";
	}
	die("codegen: no runtime dtype for %s", dtypename(dt));
}

/* A dim as a C expression over m->sym[] */
const char *
cdim(E *e, Dim d)
{
	const DExp *x;
	Str b = {0};
	const char *r;
	int i, j;

	if (dimisconst(d))
		return pf(e, "(int64_t)%d", d);
	x = &e->m->dexp[~d];
	sput(&b, "(");
	for (i = 0; i < x->nterm; i++) {
		sput(&b, "%s(int64_t)%lld", i ? " + " : "", (long long)x->term[i].coef);
		for (j = 0; j < x->term[i].deg; j++)
			sput(&b, " * m->sym[%d]", x->term[i].sym[j]);
	}
	sput(&b, ")");
	r = pf(e, "%s", sstr(&b));
	sfree(&b);
	return r;
}

/*
 * Where every value lives: buffers (the runtime's b[]/h[] slots) only for
 * values with storage of their own, graphs, segment plans; and the size
 * polynomials, each written once.
 */
typedef struct Host {
	int *buf;          /* per value: its buffer, or -1 */
	Ref *bufval;       /* per buffer: its value */
	int *share;        /* per buffer: the buffer whose memory it reuses (memplan's slots), or -1 */
	bool *lazy;        /* per buffer: an output alone in its slot (GNN_BUF_LAZY, cuda) */
	int *mbuf;         /* per value: memplan's buffer (arenabuffers), or -1 */
	int nbuf;
	int *graph;        /* per value: its graph slot, or -1 */
	int ngraph, nbound;   /* graph slots; the graph inputs among them (the first) */
	int *seg;          /* per instruction: its segment plan, or -1 */
	int nseg;
	Str poly;          /* the polynomial table's text */
	int npoly;         /* its length in int64s */
	Dim *pdim;         /* the dims written so far, and where */
	int *pat, np, capp;
	int nin, nbind, nload;   /* tensor inputs; bind and load steps */
	/* segments beyond the instructions': split plans and scratch */
	struct Extra { int kind, ins, what, c0, seg; } *extra;
	int nextra, capextra;
	Str extrasteps;
	char *devread;     /* per buffer: a kernel takes its device memory (storage) */
} Host;

/* a graph type's nodes, edges, graphs (1 unbatched) and source nodes */
static Dim
graphdim(Type t, int k)
{
	return k == 0 ? t.dim[0] : k == 1 ? t.dim[1] : k == 2 ? (t.rank == 3 ? t.dim[2] : 1) : graphsrcnodes(t);
}

/* the buffer holding v's storage; a value without one is a bug */
static int
bufno(E *e, Ref v)
{
	int b = e->host->buf[v];

	if (b < 0)
		die("codegen: %%%s has no storage", e->fn->val[v].name ? e->fn->val[v].name : "?");
	return b;
}

bool
samestorage(E *e, Ref a, Ref b)
{
	return a == b || (e->host->mbuf && e->host->mbuf[a] >= 0 && e->host->mbuf[a] == e->host->mbuf[b]);
}

const char *
storage(E *e, Ref v, bool dev)
{
	if (dev)
		e->host->devread[bufno(e, v)] = 1;
	return pf(e, "m->%s[%d]", dev ? "b" : "h", bufno(e, v));
}

const char *
segment(E *e, int i, bool dev)
{
	return pf(e, "m->%s[%d]", dev ? "seg" : "hseg", e->host->seg[i]);
}

/* the segment plan instruction i walks (its number), or -1 */
int
segno(E *e, int i)
{
	return e->host->seg[i];
}

const char *
segbytes(E *e, int i)
{
	return pf(e, "m->segnb[%d]", e->host->seg[i]);
}

const char *
tunesel(E *e, int k)
{
	return pf(e, "m->sel[%d]", k);
}

Type
ty(E *e, Ref v)
{
	return e->fn->val[v].type;
}

/* the element count of v */
static Dim
numel(E *e, Ref v)
{
	Type t = ty(e, v);
	bool ok = true;
	Dim n = dimprod(e->m, t.dim, t.rank, &ok);

	if (!ok)
		die("codegen: element count overflows");
	return n;
}

/* ... as a C expression */
const char *
cnumel(E *e, Ref v)
{
	return cdim(e, numel(e, v));
}

/* product of dims [from, to) */
const char *
cprod(E *e, const Type *t, int from, int to)
{
	bool ok = true;
	Dim n = dimprod(e->m, t->dim + from, to - from, &ok);

	if (!ok)
		die("codegen: size overflows");
	return cdim(e, n);
}

/* ---- bind, forward and the API --------------------------------------------- */

static bool
isaliasins(const Ins *in)
{
	return opinfo[in->op].flags & Falias;
}

static int
phaseof(E *e, Ref v)
{
	return e->p->phase[v];
}

/* Does forward read v (or v is an output)? */
static bool
usedinforward(E *e, Ref v)
{
	return readinforward(e->fn, e->p->phase, v);
}

/* Does forward's run function run instruction i (once-time work too)? */
static bool
ranbyforward(E *e, int i)
{
	int ph = phaseof(e, e->fn->ins[i].to);

	return ph == PhaseForward || ph == PhaseOnce;
}

/* Needs instruction i a segment plan (or, for a serial scatter, counts)? */
static bool
hasseg(E *e, int i)
{
	int op = e->fn->ins[i].op;

	return (opinfo[op].flags & Fscatter) || op == Oedge_softmax;
}

/* t as the model spells it ("f32[N, 16]"), whole */
const char *
typetext(E *e, Type t)
{
	char *b = typestr(NULL, e->m, t);
	const char *r = pf(e, "%s", b);

	free(b);
	return r;
}

/* ---- the host half: the model as tables ------------------------------- */

/* The offset of dim d's polynomial in the size table. */
static int
polyof(E *e, Dim d)
{
	Host *h = e->host;
	const DExp *x;
	int i, j, at;

	for (i = 0; i < h->np; i++)
		if (h->pdim[i] == d)
			return h->pat[i];
	if (h->np == h->capp) {
		h->capp = h->capp ? 2 * h->capp : 16;
		h->pdim = erealloc(h->pdim, h->capp * sizeof *h->pdim);
		h->pat = erealloc(h->pat, h->capp * sizeof *h->pat);
	}
	at = h->npoly;
	h->pdim[h->np] = d;
	h->pat[h->np++] = at;
	if (dimisconst(d)) {
		sput(&h->poly, "\t1, %d, 0,   /* %d: %d */\n", d, at, d);
		h->npoly += 3;
		return at;
	}
	x = &e->m->dexp[~d];
	sput(&h->poly, "\t%d,", x->nterm);
	for (i = 0; i < x->nterm; i++) {
		sput(&h->poly, " %lld, %d,", (long long)x->term[i].coef, x->term[i].deg);
		for (j = 0; j < x->term[i].deg; j++)
			sput(&h->poly, " %d,", x->term[i].sym[j]);
		h->npoly += 2 + x->term[i].deg;
	}
	h->npoly++;
	{
		char *text = dimstr(NULL, e->m, d);
		sput(&h->poly, "   /* %d: %s */\n", at, text);
		free(text);
	}
	return at;
}

static int
numelpoly(E *e, Ref v)
{
	return polyof(e, numel(e, v));
}

/* an extra segment (kind 1: split plan, 2: scratch), made once per key */
static int
extraseg(E *e, int kind, int i, int what, int c0, bool *made)
{
	Host *h = e->host;
	int k;

	*made = false;
	for (k = 0; k < h->nextra; k++)
		if (h->extra[k].kind == kind && h->extra[k].ins == i && h->extra[k].what == what && h->extra[k].c0 == c0)
			return h->extra[k].seg;
	if (h->nextra == h->capextra) {
		h->capextra = h->capextra ? 2 * h->capextra : 8;
		h->extra = erealloc(h->extra, h->capextra * sizeof *h->extra);
	}
	h->extra[h->nextra++] = (struct Extra){kind, i, what, c0, h->nseg};
	*made = true;
	return h->nseg++;
}

/* the rows of the segment plan a walk (scatter or edge_softmax) runs on */
static Dim
planrows(E *e, const Ins *in)
{
	Dim n = 0;

	if (in->op == Oedge_softmax)
		n = ty(e, in->arg[0]).dim[0];
	else
		attrdim(in, "n", &n);
	return n;
}

int
splitplanseg(E *e, int i, int c0)
{
	const Ins *in = &e->fn->ins[i];
	bool made;
	int s = extraseg(e, 1, -1 - e->host->seg[i], 0, c0, &made);   /* one per plan */
	Dim n;

	if (made) {
		n = planrows(e, in);
		sput(&e->host->extrasteps, "\t{GNN_STEP_SPLITPLAN, %d, %d, %d, %d, 0},   /* split of the plan for %s */\n", s,
		     e->host->seg[i], c0, polyof(e, n), pf(e, "%%%s", irname(e, in->to)));
	}
	return s;
}

/* a copy of bind-time edge array v (rows of w elements) in the order of
 * instruction i's segment plan (GNN_STEP_PERMUTE): a walk reads it at
 * its position k_, in memory's order, where v itself is read at the
 * plan's edge e_, a random place.  One per plan and array.  index: v is
 * a gather's int64 src index, copied as int32 where the bound graph's
 * ids fit (GNN_STEP_PERMUTE_INDEX). */
int
permseg(E *e, int i, Ref v, int64_t w, bool index)
{
	const Ins *in = &e->fn->ins[i];
	int b = bufno(e, storageof(e->p, v));
	bool made;
	int s;
	Dim n;

	s = extraseg(e, 1, -1 - e->host->seg[i], b + 1, -2, &made);   /* c0 -2: not a split plan's */
	if (made) {
		n = planrows(e, in);
		sput(&e->host->extrasteps, "\t{%s, %d, %d, %d, %d, %lld},   /* %%%s in the plan's order */\n",
		     index ? "GNN_STEP_PERMUTE_INDEX" : "GNN_STEP_PERMUTE", s, e->host->seg[i], b, polyof(e, n), (long long)w,
		     irname(e, v));
	}
	return s;
}

int
splitscratchseg(E *e, int i, int what, int c0, int64_t w)
{
	int p = splitplanseg(e, i, c0);
	bool made;
	int s = extraseg(e, 2, i, what, c0, &made);

	if (made)
		sput(&e->host->extrasteps, "\t{GNN_STEP_SPLITBUF, %d, %d, %lld, 0, 0},   /* partials of %s, walk %d */\n", s, p,
		     (long long)w, pf(e, "%%%s", irname(e, e->fn->ins[i].to)), what);
	return s;
}

int
gemmscratchseg(E *e, int i, int64_t floats, Dim m, int64_t perrow)
{
	bool made;
	int s = extraseg(e, 2, i, -1, (int)floats, &made);   /* a size per candidate */

	if (perrow > INT_MAX)
		perrow = 0;
	if (made)
		sput(&e->host->extrasteps, "\t{GNN_STEP_SCRATCH, %d, %lld, %lld, %d, 0},   /* split-K parts of %s */\n", s,
		     (long long)perrow, (long long)floats, polyof(e, m), pf(e, "%%%s", irname(e, e->fn->ins[i].to)));
	return s;
}

static int
bufkind(E *e, Ref v)
{
	const Val *x = &e->fn->val[v];

	if (x->def < 0)
		return 5;   /* GNN_BUF_INPUT */
	if (e->fn->ins[x->def].op == Oparam)
		return 1;
	switch (phaseof(e, v)) {
	case PhaseLoad: return 2;
	case PhaseBind:
	case PhaseOnce: return 3;   /* once-time values: bind allocates them (GNN_STEP_ALLOC) */
	default: return 4;
	}
}

static void
hostlayout(E *e, Host *h)
{
	Fn *fn = e->fn;
	int i, *slot;
	Ref v, *rep;

	memset(h, 0, sizeof *h);
	e->host = h;
	h->buf = emalloc((fn->nval + 1) * sizeof *h->buf);
	h->bufval = emalloc((fn->nval + 1) * sizeof *h->bufval);
	h->graph = emalloc((fn->nval + 1) * sizeof *h->graph);
	h->seg = emalloc((fn->nins + 1) * sizeof *h->seg);
	for (v = 0; v < fn->nval; v++)
		h->buf[v] = h->graph[v] = -1;
	slot = h->mbuf = emalloc((fn->nval + 1) * sizeof *slot);
	rep = emalloc((fn->nval + 1) * sizeof *rep);
	arenabuffers(fn, e->p->phase, slot, rep, e->cuda);
	for (i = 0; i < fn->narg; i++)   /* the bound graphs: g[0..nbound), in order */
		if (ty(e, fn->arg[i]).kind == TGraph)
			h->graph[fn->arg[i]] = h->ngraph++;
	h->nbound = h->ngraph;
	for (i = 0; i < fn->narg; i++) {
		v = fn->arg[i];
		if (ty(e, v).kind == TTensor)
			h->bufval[h->buf[v] = h->nbuf++] = v, h->nin++;
	}
	for (i = 0; i < fn->nins; i++) {
		const Ins *in = &fn->ins[i];
		v = in->to;
		h->seg[i] = -1;
		if (hasseg(e, i)) {
			int j;
			for (j = 0; j < i && !(h->seg[j] >= 0 && sameplan(fn, e->p->phase, i, j)); j++)
				;
			h->seg[i] = j < i ? h->seg[j] : h->nseg++;
		}
		if (isaliasins(in))
			continue;
		if (ty(e, v).kind == TGraph) {
			h->graph[v] = h->ngraph++;
			continue;
		}
		if ((phaseof(e, v) == PhaseForward && slot[v] < 0) || (phaseof(e, v) == PhaseOnce && groupinternal(fn, v)))
			continue;   /* internal to its fusion group */
		if (phaseof(e, v) == PhaseForward) {
			/* a slot's buffer (its largest value's, rep) is numbered
			 * where the slot's first value is made: the arena places
			 * the slots in that order (memplan's scratchfloors) */
			Ref r0 = rep[slot[v]];
			if (h->buf[r0] < 0)
				h->bufval[h->buf[r0] = h->nbuf++] = r0;
			if (r0 == v)
				continue;
		}
		h->bufval[h->buf[v] = h->nbuf++] = v;
	}
	/* a slot's largest value (rep) owns its memory; the others reuse it */
	h->share = emalloc((h->nbuf + 1) * sizeof *h->share);
	h->devread = emalloc(h->nbuf + 1);
	memset(h->devread, 0, h->nbuf + 1);
	h->lazy = emalloc(h->nbuf + 1);
	for (i = 0; i < h->nbuf; i++) {
		v = h->bufval[i];
		h->share[i] = phaseof(e, v) == PhaseForward && slot[v] >= 0 && rep[slot[v]] != v ? h->buf[rep[slot[v]]] : -1;
		h->lazy[i] = e->cuda && phaseof(e, v) == PhaseForward && slot[v] >= 0 && rep[slot[v]] == v && lazybuffer(fn, slot, rep, slot[v]);
	}
	free(rep);
}

static void
hostfree(Host *h)
{
	free(h->buf);
	free(h->bufval);
	free(h->share);
	free(h->lazy);
	free(h->mbuf);
	free(h->devread);
	free(h->graph);
	free(h->seg);
	free(h->pdim);
	free(h->pat);
	free(h->extra);
	sfree(&h->poly);
	sfree(&h->extrasteps);
}

static void
emitinfo(E *e, Ref v, const char *name)
{
	Type t = ty(e, v);
	int k;

	out(e, "{\"%s\", %s, %d, {", name, gnndtype(t.dtype), t.rank);
	for (k = 0; k < t.rank; k++)
		out(e, "%s%lld", k ? ", " : "", dimisconst(t.dim[k]) ? (long long)dimconstval(t.dim[k]) : -1LL);
	if (t.rank == 0)
		out(e, "0");
	out(e, "}, \"%s\"},\n", strchr(typetext(e, t), '['));
}

static const char *const bufkinds[] = {"", "GNN_BUF_PARAM", "GNN_BUF_LOAD", "GNN_BUF_BIND", "GNN_BUF_FWD", "GNN_BUF_INPUT"};

/* the step that computes bind-time value i (none for aliases) */
static void
bindstep(E *e, Str *s, int i)
{
	Host *h = e->host;
	const Ins *in = &e->fn->ins[i];
	Ref v = in->to, g = in->narg ? in->arg[0] : RNone;
	const char *name = pf(e, "%%%s", irname(e, v));
	int sy, k;
	bool ok = true;
	Dim rest = 0;

	if (isaliasins(in))
		return;
	if (ty(e, v).kind == TGraph) {
		const char *op = in->op == Oadd_self_loops ? "ADD_SELF_LOOPS" :
		                 in->op == Oremove_self_loops ? "REMOVE_SELF_LOOPS" : "ADD_REMAINING_SELF_LOOPS";
		sput(s, "\t{GNN_STEP_%s, %d, %d, 0, 0, %.17g},   /* %s */\n", op, h->graph[v], h->graph[g],
		     attrfloat(in, "fill", 1.0), name);
		if (opinfo[in->op].flags & Fdyn) {
			/* the derived size: edges = sym + rest, for the derived
			 * symbol that occurs in the edge count (a model may have
			 * several) */
			Type t = ty(e, v);
			const DExp *x = dimisconst(t.dim[1]) ? NULL : &e->m->dexp[~t.dim[1]];
			for (sy = 0; x && sy < e->m->nsym; sy++) {
				if (!e->m->sym[sy].derived)
					continue;
				for (k = 0; k < x->nterm; k++)
					if (x->term[k].deg == 1 && x->term[k].sym[0] == sy && x->term[k].coef == 1)
						break;
				if (k < x->nterm)
					break;
			}
			rest = x && sy < e->m->nsym ? dimsub(e->m, t.dim[1], dimsym(e->m, sy), &ok) : 0;
			if (!x || sy == e->m->nsym || !ok)
				die("codegen: no derived size in %s", opinfo[in->op].name);
			sput(s, "\t{GNN_STEP_DERIVE, -1, %d, %d, %d, 0},   /* %s = edges - ... */\n", h->graph[v], sy,
			     polyof(e, rest), e->m->sym[sy].name);
		}
		return;
	}
	switch (in->op) {
	case Osrc: case Odst: case Obatch: case Oin_degree: case Oout_degree: case Oedge_weight: case Ogcn_norm: {
		char op[32];
		for (k = 0; opinfo[in->op].name[k] && k < 31; k++)
			op[k] = (char)(opinfo[in->op].name[k] - ('a' <= opinfo[in->op].name[k] && opinfo[in->op].name[k] <= 'z' ? 32 : 0));
		op[k] = 0;
		sput(s, "\t{GNN_STEP_%s, %d, %d, 0, 0, 0},   /* %s */\n", op, h->buf[v], h->graph[g], name);
		return;
	}
	default:
		break;
	}
	sput(s, "\t{GNN_STEP_KERNEL, %d, -1, %d, 0, 0},   /* %s = %s */\n", h->buf[v], i, name, opinfo[in->op].name);
}

/* the step that builds instruction i's segment plan */
static void
segstep(E *e, Str *s, int i)
{
	Host *h = e->host;
	const Ins *in = &e->fn->ins[i];
	Dim n;

	if (in->op == Oedge_softmax) {
		sput(s, "\t{GNN_STEP_EDGEPLAN, %d, %d, 0, 0, 0},   /* edges of %s by target */\n", h->seg[i],
		     h->graph[in->arg[0]], pf(e, "%%%s", irname(e, in->arg[0])));
		return;
	}
	attrdim(in, "n", &n);
	if (phaseof(e, in->arg[1]) != PhaseBind)   /* a serial scatter's counts */
		sput(s, "\t{GNN_STEP_COUNTS, %d, -1, 0, %d, 0},   /* for %s */\n", h->seg[i], polyof(e, n), pf(e, "%%%s", irname(e, in->to)));
	else
		sput(s, "\t{GNN_STEP_SEGPLAN, %d, %d, 0, %d, 0},   /* %s grouped */\n", h->seg[i],
		     h->buf[storageof(e->p, in->arg[1])], polyof(e, n), pf(e, "%%%s", irname(e, in->arg[1])));
}

/* the first instruction of instruction i's kernel: its fusion group's */
static int
kernelfirst(const Fn *fn, int i)
{
	int64_t g = attrint(&fn->ins[i], "group", -1);

	while (g >= 0 && i > 0 && attrint(&fn->ins[i - 1], "group", -1) == g)
		i--;
	return i;
}

/* per segment: the forward slots (GNN_BUF_FWD with share -1, in buffer
 * order) that a scratch's kernel may not overlap, the leading ones up to
 * the last live while it runs (memplan's liveness; -1: all of them, none
 * (not a forward kernel's scratch)), and which of those are live then
 * (a mask; the scratch may lie in a gap between them) */
static void
segfloors(E *e)
{
	Fn *fn = e->fn;
	Host *h = e->host;
	int k, kn, *order, *floor, *kern;
	uint64_t *live;

	order = emalloc((fn->nval + 1) * sizeof *order);
	floor = emalloc((fn->nins + 1) * sizeof *floor);
	live = emalloc((fn->nins + 1) * sizeof *live);
	kern = emalloc((fn->nins + 1) * sizeof *kern);
	scratchfloors(fn, e->p->phase, h->mbuf, order, floor, live, e->cuda);
	forwardkernels(fn, e->p->phase, kern);
	out(e, "static const int %s_segfloor[] = {", e->nm);
	for (k = 0; k < h->nseg - h->nextra; k++)
		out(e, "-1, ");
	for (k = 0; k < h->nextra; k++) {
		kn = h->extra[k].kind == 2 ? kern[kernelfirst(fn, h->extra[k].ins)] : -1;
		out(e, "%d, ", kn >= 0 ? floor[kn] : -1);
	}
	out(e, "-1};\nstatic const unsigned long long %s_seglive[] = {", e->nm);
	for (k = 0; k < h->nseg - h->nextra; k++)
		out(e, "0, ");
	for (k = 0; k < h->nextra; k++) {
		kn = h->extra[k].kind == 2 ? kern[kernelfirst(fn, h->extra[k].ins)] : -1;
		out(e, "%#llxull, ", kn >= 0 ? (unsigned long long)live[kn] : 0ull);
	}
	out(e, "0};\n");
	free(order);
	free(floor);
	free(live);
	free(kern);
}

static void
emittables(E *e)
{
	Fn *fn = e->fn;
	Host *h = e->host;
	Str bind = {0}, load = {0}, bufs = {0};
	int i, k, b, nparam = 0, nbind = 0, nload = 0;
	char *segdone;   /* per plan: its step written; then: forward walks it */
	Ref v;
	const char *nm = e->nm;

	/* tensor infos (the descriptor's and load_weights') */
	out(e, "\nstatic const gnn_tensor_info %s_inputs[] = {\n", nm);
	e->w->ind++;
	for (i = 0, k = 0; i < fn->narg; i++)
		if (ty(e, fn->arg[i]).kind == TTensor)
			emitinfo(e, fn->arg[i], fn->val[fn->arg[i]].name), k++;
	if (!k)
		out(e, "{NULL, GNN_F32, 0, {0}, \"\"},\n");
	e->w->ind--;
	out(e, "};\n\nstatic const gnn_tensor_info %s_outputs[] = {\n", nm);
	e->w->ind++;
	for (i = 0; i < fn->nret; i++)
		emitinfo(e, fn->ret[i], pf(e, "output%d", i));
	e->w->ind--;
	out(e, "};\n\nstatic const gnn_tensor_info %s_params[] = {\n", nm);
	e->w->ind++;
	for (i = 0; i < fn->nins; i++)
		if (fn->ins[i].op == Oparam)
			emitinfo(e, fn->ins[i].to, attrstr(&fn->ins[i], "name"));
	if (!e->p->nparam)
		out(e, "{NULL, GNN_F32, 0, {0}, \"\"},\n");
	e->w->ind--;
	out(e, "};\n");

	/* buffers */
	for (b = 0; b < h->nbuf; b++) {
		const Ins *in;
		v = h->bufval[b];
		in = fn->val[v].def >= 0 ? &fn->ins[fn->val[v].def] : NULL;
		{
			bool init = in && in->op == Oparam && findattr(in, "init");
			bool uni = in && in->op == Oparam && findattr(in, "uniform");
			/* a cuda bind-time value that no kernel takes (its walks
			 * read copies of it) is not kept on the device */
			bool dev = usedinforward(e, v) && !(phaseof(e, v) == PhaseBind && !h->devread[b] &&
			                                    copiedonly(fn, e->p->phase, e->p->target, v));
			const char *fl = pf(e, "%s%s%s%s", dev ? " | GNN_BUF_DEVICE" : "", init ? " | GNN_BUF_FILL" : "",
			                    uni ? " | GNN_BUF_UNIFORM" : "", h->lazy[b] ? " | GNN_BUF_LAZY" : "");
			sput(&bufs, "\t{\"%s\", %s, %s, %s, %d, %d, %.17g},   /* %d */\n", irname(e, v),
			     bufkinds[bufkind(e, v)],
			     gnndtype(valstoredtype(fn, v) != DNone ? valstoredtype(fn, v) : ty(e, v).dtype), *fl ? fl + 3 : "0",
			     numelpoly(e, v), h->share[b], init ? attrfloat(in, "init", 0) : uni ? attrfloat(in, "uniform", 0) : 0.0, b);
		}
	}
	/* bind: the graph ops and bind-time values in order, each plan
	 * before the kernel that walks it; then forward's plans */
	segdone = emalloc(h->nseg + 1);
	for (i = 0; i < fn->nins; i++) {
		if (phaseof(e, fn->ins[i].to) != PhaseBind)
			continue;
		if (hasseg(e, i) && !segdone[h->seg[i]]) {
			segstep(e, &bind, i);
			segdone[h->seg[i]] = 1;
		}
		bindstep(e, &bind, i);
	}
	for (i = 0; i < fn->nins; i++)
		if (ranbyforward(e, i) && hasseg(e, i) && !segdone[h->seg[i]]) {
			segstep(e, &bind, i);
			segdone[h->seg[i]] = 1;
		}
	/* the memory of what a training step computes once (invariant.c) */
	for (k = 0; k < h->nbuf; k++)
		if (phaseof(e, h->bufval[k]) == PhaseOnce && fn->val[h->bufval[k]].def >= 0)
			sput(&bind, "\t{GNN_STEP_ALLOC, %d, -1, 0, 0, 0},   /* %s, computed once by the step */\n", k,
			     pf(e, "%%%s", irname(e, h->bufval[k])));
	sput(&bind, "%s", sstr(&h->extrasteps));
	for (i = 0; i < fn->nins; i++) {
		v = fn->ins[i].to;
		if (phaseof(e, v) == PhaseLoad && e->calls[i])
			sput(&load, "\t{GNN_STEP_KERNEL, %d, -1, %d, 0, 0},   /* %s = %s */\n", h->buf[v], i, pf(e, "%%%s", irname(e, v)),
			     opinfo[fn->ins[i].op].name);
	}
	for (const char *p = sstr(&bind); (p = strchr(p, '\n')); p++)
		nbind++;
	for (const char *p = sstr(&load); (p = strchr(p, '\n')); p++)
		nload++;
	h->nbind = nbind;
	h->nload = nload;
	/* the sizes the graphs set (or, specialized, must have) */
	for (i = 0; i < fn->narg; i++)
		if (ty(e, fn->arg[i]).kind == TGraph)
			for (k = 0; k < 4; k++)
				(void)polyof(e, graphdim(ty(e, fn->arg[i]), k));
	for (i = 0; i < fn->nret; i++)
		for (k = 0; k < ty(e, fn->ret[i]).rank; k++)
			(void)polyof(e, ty(e, fn->ret[i]).dim[k]);

	out(e, "\nstatic const int64_t %s_poly[] = {   /* sizes: nterm, then coef, degree, symbols per term */\n%s};\n", nm,
	    sstr(&h->poly));
	out(e, "\nstatic const gnn_buffer %s_buffers[] = {\n%s};\n", nm, sstr(&bufs));
	if (nbind)
		out(e, "\nstatic const gnn_step %s_bindsteps[] = {   /* op, out, in, arg, size, fill */\n%s};\n", nm, sstr(&bind));
	if (nload)
		out(e, "\nstatic const gnn_step %s_loadsteps[] = {\n%s};\n", nm, sstr(&load));
	out(e, "\nstatic const int %s_io[] = {", nm);
	for (i = 0; i < fn->narg; i++)
		if (ty(e, fn->arg[i]).kind == TTensor)
			out(e, "%d, ", h->buf[fn->arg[i]]);
	out(e, "  ");
	for (i = 0; i < fn->nret; i++)
		out(e, "%d, ", h->buf[storageof(e->p, fn->ret[i])]);
	out(e, "  ");
	for (i = 0; i < fn->nins; i++)
		if (fn->ins[i].op == Oparam)
			out(e, "%d, ", h->buf[fn->ins[i].to]), nparam++;
	out(e, "-1};\n");
	out(e, "static const int %s_outshape[] = {", nm);
	for (i = 0; i < fn->nret; i++)
		for (k = 0; k < ty(e, fn->ret[i]).rank; k++)
			out(e, "%d, ", polyof(e, ty(e, fn->ret[i]).dim[k]));
	out(e, "-1};\n");
	out(e, "static const unsigned char %s_segdev[] = {", nm);
	/* a shared plan is the forward's where any of its walks is */
	memset(segdone, 0, h->nseg + 1);
	for (i = 0; i < fn->nins; i++)
		if (h->seg[i] >= 0 && ranbyforward(e, i))
			segdone[h->seg[i]] = 1;
	/* 3: forward reads only its row starts (rowsonly): bind frees the
	 * order once the steps that read it are done */
	for (i = 0; i < fn->nins; i++)
		if (h->seg[i] >= 0 && segdone[h->seg[i]] == 1 && rowsonly(fn, e->p->phase, e->p->target, i))
			segdone[h->seg[i]] = 3;
	for (k = 0; k < h->nseg - h->nextra; k++)
		out(e, "%d, ", segdone[k]);
	free(segdone);
	for (k = 0; k < h->nextra; k++)
		out(e, "%d, ", h->extra[k].kind);
	out(e, "0};\n");
	/* a scratch's kernel: its instruction's group's first instruction
	 * (the cost model's Kernel.first), where the arena may overlap the
	 * scratch of other kernels */
	out(e, "static const int %s_segkern[] = {", nm);
	for (k = 0; k < h->nseg - h->nextra; k++)
		out(e, "-1, ");
	for (k = 0; k < h->nextra; k++)
		out(e, "%d, ", h->extra[k].kind == 2 ? kernelfirst(fn, h->extra[k].ins) : -1);
	out(e, "-1};\n");
	segfloors(e);
	sfree(&bind);
	sfree(&load);
	sfree(&bufs);
	(void)nparam;
}

/* the typed parameter list of forward: inputs, then outputs */
static void
forwardparams(E *e)
{
	Fn *fn = e->fn;
	int i;

	out(e, "%s *m", e->nm);
	for (i = 0; i < fn->narg; i++)
		if (ty(e, fn->arg[i]).kind == TTensor)
			out(e, ", const %s *%s", memctype(e, fn->arg[i]), fn->val[fn->arg[i]].name);
	for (i = 0; i < fn->nret; i++)
		out(e, ", %s *out%d", memctype(e, fn->ret[i]), i);
}

/* a switch over the calls of the instructions (or tuning kernels) that sel picks */
static void
emitswitch(E *e, const char *head, int n, const int *ins)
{
	int k;

	out(e, "%s{\n", head);
	e->w->ind++;
	out(e, "switch (k) {\n");
	for (k = 0; k < n; k++)
		if (ins[k] >= 0)
			out(e, "case %d:\n\t%s\n\tbreak;\n", k, e->calls[ins[k]]);
	out(e, "}\n");
	wclose(e->w, "");
}

static void
emitprogram(E *e)
{
	Fn *fn = e->fn;
	Host *h = e->host;
	const char *nm = e->nm;
	int i, k, *ins;

	/* bind- and load-time kernels, by instruction */
	ins = emalloc((fn->nins + 1) * sizeof *ins);
	for (i = 0; i < fn->nins; i++) {
		int ph = phaseof(e, fn->ins[i].to);
		ins[i] = (ph == PhaseBind || ph == PhaseLoad) && e->calls[i] ? i : -1;
	}
	emitswitch(e, pf(e, "\nstatic void\n%s_kernel(gnn_instance *m, int k)\n", nm), fn->nins, ins);
	/* forward */
	out(e, "\nstatic gnn_status\n%s_run(void *mv, const void *const *in, void *const *out)\n", nm);
	out(e, "{\n");
	e->w->ind++;
	out(e, "gnn_instance *m = (gnn_instance *)mv;\ngnn_status s = gnn_prog_begin(m, in, out);\n\n");
	/* the launches run once: directly, or captured into forward's graph
	 * (or not at all: the graph was replayed), as gnn_prog_issue says */
	out(e, "if (s != GNN_OK)\n\treturn s;\n");
	/* a training step's once-time work (invariant.c), unless the trainer
	 * keeps what the last step computed (runtime/train.c): launched
	 * directly, never into forward's graph, which replays every step */
	for (i = 0, k = 0; i < fn->nins; i++)
		if (phaseof(e, fn->ins[i].to) == PhaseOnce && e->calls[i]) {
			if (!k++) {
				out(e, "if (!m->keep) {\n");
				e->w->ind++;
			}
			out(e, "%s\n", e->calls[i]);
		}
	if (k) {
		e->w->ind--;
		out(e, "}\n");
	}
	out(e, "while (gnn_prog_issue(m)) {\n");
	e->w->ind++;
	for (i = 0; i < fn->nins; i++)
		if (phaseof(e, fn->ins[i].to) == PhaseForward && e->calls[i])
			out(e, "%s\n", e->calls[i]);
	e->w->ind--;
	out(e, "}\nreturn %s;\n", vendorend(e, "gnn_prog_end(m, out)"));
	wclose(e->w, "");
	if (e->tc)
		emitswitch(e, pf(e, "\nstatic void\n%s_launch(gnn_instance *m, int k)\n", nm), e->tc->nkernels, e->kstart);
	free(ins);

	/* per graph input: the symbols its sizes set, else the sizes they
	 * must be (gnn_program.bound) */
	out(e, "\nstatic const int %s_bound[] = {\n", nm);
	for (i = 0; i < fn->narg; i++) {
		Type gt = ty(e, fn->arg[i]);
		if (gt.kind != TGraph)
			continue;
		out(e, "\t");
		for (k = 0; k < 8; k++) {
			Dim d = graphdim(gt, k % 4);
			/* a graph of one node type sets no source count of its own,
			 * and an unbatched one leaves its graph count unchecked */
			bool none = (k % 4 == 3 && !isrelation(gt)) || (k % 4 == 2 && gt.rank != 3), sym = dimassym(e->m, d) >= 0;
			out(e, "%d, ", none ? -1 : k < 4 ? (sym ? dimassym(e->m, d) : -1) : (sym ? -1 : polyof(e, d)));
		}
		out(e, "  /* %s */\n", fn->val[fn->arg[i]].name);
	}
	out(e, "};\n");
	out(e, "\nstatic const gnn_program %s_prog = {\n", nm);
	e->w->ind++;
	out(e, "\"%s\", &%s, %d, %s_poly,\n", nm, e->cuda ? "GNN_CUDA_DEVICE" : "gnn_device_cpu", e->m->nsym, nm);
	out(e, "%d, %s_buffers, %d, %d, %s_segdev,\n", h->nbuf, nm, h->ngraph, h->nseg, nm);
	out(e, "%d, %d, %s, %s,\n", h->nbind, h->nload, h->nbind ? pf(e, "%s_bindsteps", nm) : "NULL",
	    h->nload ? pf(e, "%s_loadsteps", nm) : "NULL");
	out(e, "%d, %s_bound,\n", h->nbound, nm);
	out(e, "%d, %d, %d, %s_io, %s_io + %d, %s_io + %d, %s_outshape,\n", h->nin, fn->nret, e->p->nparam, nm, nm, h->nin,
	    nm, h->nin + fn->nret, nm);
	out(e, "%s_inputs, %s_outputs, %s_params,\n", nm, nm, nm);
	out(e, "%d, %s_kernel, %s_run, %s,\n", e->tc ? e->tc->nkernels : 0, nm, nm, e->tc ? pf(e, "%s_launch", nm) : "NULL");
	out(e, "%s,\n", e->vendorused ? pf(e, "%s_vendor", nm) : "NULL");
	out(e, "%s_segkern,\n", nm);
	out(e, "%s_segfloor, %s_seglive,\n", nm, nm);
	e->w->ind--;
	out(e, "};\n");
}

/* the training step compiled for model fn, or NULL */
static Fn *
trainof(const Mod *m, const Fn *fn)
{
	Fn *t;

	for (t = m->fn; t; t = t->link)
		if (t->train && strcmp(t->train->model, fn->name) == 0)
			return t;
	return NULL;
}

/* model fn's parameter index (its params table's order) of name */
static int
paramindex(const Fn *fn, const char *name)
{
	int i, k = 0;

	for (i = 0; i < fn->nins; i++)
		if (fn->ins[i].op == Oparam) {
			if (strcmp(attrstr(&fn->ins[i], "name"), name) == 0)
				return k;
			k++;
		}
	die("codegen: the training step's param %s is not its model's", name);
}

/* the typed parameters of a training step: the step's tensor inputs but
 * the key (its last), then the loss */
static void
trainparams(E *e, const Fn *tf, const char *model)
{
	int i;

	out(e, "%s *m", model);
	for (i = 0; i < tf->narg - 1; i++)
		if (tf->val[tf->arg[i]].type.kind == TTensor)
			out(e, ", const %s *%s", ctype(tf->val[tf->arg[i]].type.dtype), tf->val[tf->arg[i]].name);
	out(e, ", float *loss");
}

/*
 * A training step's tables and the model's train API: e->fn is the step
 * (its program is emitted as any function's), named after the model.
 */
static void
emittrain(E *e)
{
	Fn *tf = e->fn, *mf;
	const TrainInfo *ti = tf->train;
	const char *nm = e->nm, *mn = ti->model, *kind;
	int i, k, nmin = 0;

	for (mf = e->m->fn; mf && strcmp(mf->name, mn) != 0; mf = mf->link)
		;
	if (!mf)
		die("codegen: training step %s without its model", nm);
	for (i = 0; i < mf->narg; i++)
		nmin += ty(e, mf->arg[i]).kind == TTensor;
	out(e, "\nstatic const int %s_gparam[] = {", nm);
	for (k = 0; k < ti->nparam; k++)
		out(e, "%d, ", paramindex(mf, ti->param[k]));
	out(e, "-1};\nstatic const int %s_gupdate[] = {", nm);
	for (k = 0; k < ti->nupdate; k++)
		out(e, "%d, ", paramindex(mf, ti->update[k]));
	kind = !strcmp(ti->optimizer, "sgd") ? "GNN_OPTIM_SGD" : !strcmp(ti->optimizer, "adamw") ? "GNN_OPTIM_ADAMW" : "GNN_OPTIM_ADAM";
	out(e, "-1};\n\n%sconst gnn_train_prog %s_tprog = {\n", e->cuda ? "extern \"C\" " : "", nm);
	e->w->ind++;
	out(e, "&%s_prog, %d, %s_gparam, %d, %s_gupdate, %d, %s_inputs + %d,\n", nm, ti->nparam, nm, ti->nupdate, nm,
	    e->host->nin - nmin - 1, nm, nmin);
	out(e, "{%s, %.17g, %.17g, %.17g, %.17g, %d, %.17g, %.17g, %.17g},\n", kind, ti->lr, ti->weight_decay, ti->momentum,
	    ti->dampening, ti->nesterov, ti->beta1, ti->beta2, ti->eps);
	out(e, "%lluu, %lld,\n", (unsigned long long)ti->seed, (long long)ti->epochs);
	e->w->ind--;
	out(e, "};\n\ngnn_status\n%s_train_step(", mn);
	trainparams(e, tf, mn);
	out(e, ")\n{\n\tconst void *in[] = {");
	for (i = 0; i < tf->narg - 1; i++)
		if (ty(e, tf->arg[i]).kind == TTensor)
			out(e, "%s, ", tf->val[tf->arg[i]].name);
	out(e, "NULL};\n\n\treturn gnn_prog_train_step(m, &%s_tprog, in, loss);\n}\n", nm);
	out(e, "\ngnn_status\n%s_train_config(%s *m, const gnn_optim_config *config, uint64_t seed)\n{\n", mn, mn);
	out(e, "\treturn gnn_prog_train_config(m, &%s_tprog, config, seed);\n}\n", nm);
}

static void
emitapi(E *e)
{
	Fn *fn = e->fn;
	const char *nm = e->nm;
	int i, k;
	const char *suffix[2] = {"", "_host"};

	/* the struct, create, load_weights, bind, synchronize, destroy */
	if (fn->train)   /* not in the header: the model's train API is */
		out(e, "\ntypedef struct %s %s;\n", nm, nm);
	out(e, "\nGNN_MODEL(%s, %s_prog)\n", nm, nm);
	for (k = 0; k < 2; k++) {
		out(e, "\ngnn_status\n%s_forward%s(", nm, suffix[k]);
		forwardparams(e);
		out(e, ")\n{\n\tconst void *in[] = {");
		for (i = 0; i < fn->narg; i++)
			if (ty(e, fn->arg[i]).kind == TTensor)
				out(e, "%s, ", fn->val[fn->arg[i]].name);
		out(e, "NULL};\n\tvoid *out[] = {");
		for (i = 0; i < fn->nret; i++)
			out(e, "out%d, ", i);
		out(e, "NULL};\n\n\treturn %s(m, in, out);\n}\n", k ? "gnn_prog_run_host" : pf(e, "%s_run", nm));
	}
	if (trainof(e->m, fn))
		out(e, "\n%sconst gnn_train_prog %s_tprog;\n", e->cuda ? "extern \"C\" " : "extern ", trainof(e->m, fn)->name);
	out(e, "\n%sconst gnn_model_desc %s_desc = {\n\t\"%s\", %s, %d, %d, %d, %s_inputs, %s_outputs, %s_params,\n", e->cuda ? "extern \"C\" " : "",
	    nm, nm, e->cuda ? "GNN_TARGET_CUDA" : "GNN_TARGET_CPU", e->host->nin, fn->nret, e->p->nparam, nm, nm, nm);
	out(e, "\t%s_d_create, gnn_prog_load, gnn_prog_bind, gnn_prog_output_shape,\n\t%s_run, gnn_prog_run_host, gnn_prog_destroy,\n",
	    nm, nm);
	out(e, "\t%s,\n", trainof(e->m, fn) ? pf(e, "&%s_tprog", trainof(e->m, fn)->name) : "NULL");
	out(e, "\t%d, gnn_prog_bind_graphs,\n};\n", e->host->nbound);
	if (e->tc) {
		out(e, "\nstatic const char *\n%s_arch(void)\n{\n\treturn gnn_prog_arch(&%s_prog);\n}\n", nm, nm);
		out(e, "\nstatic const int %s_ncand[] = {", nm);
		for (k = 0; k < e->tc->nkernels; k++)
			out(e, "%d, ", e->tc->ncand[k]);
		out(e, "0};\n\n%sconst gnn_tune_desc %s_tune = {\n\t%d, %s_ncand, gnn_prog_tune_select, gnn_prog_tune_time, %s_arch,\n};\n",
		    e->cuda ? "extern \"C\" " : "", nm, e->tc->nkernels, nm, nm);
	}
}

/*
 * The cpu target's e^x for floats: libm's expf is a call the vectorizer
 * cannot see into (and may set errno), so a loop over it runs one element
 * at a time, and GAT's ELU over every hidden feature was a fifth of its
 * forward.  This one is branch-free C that inlines into the loops and
 * vectorizes: 2^n e^r with n = round(x / ln 2), e^r by Cephes's degree-6
 * polynomial, 2^n as two powers of two so that results near overflow and
 * in the subnormal range come out right; within 1.4 ulp of e^x on the
 * normal range, +inf above ln(FLT_MAX), 0 below the smallest subnormal's
 * logarithm, NaN for NaN.  e^x - 1 is taken from it (an absolute error of
 * an ulp of 1 near 0, where expm1f is exact to the ulp of its result).
 */
static const char cpuexpf[] =
	"GNN_DFN float\n"
	"gnn_expf_(float x)\n"
	"{\n"
	"\tconst float big = 12582912.0f;   /* 1.5 * 2^23: adding it rounds to an integer */\n"
	"\tconst float xc = x > 88.8f ? 88.8f : x < -104.0f ? -104.0f : x;\n"
	"\tconst float t = xc * 1.44269504088896341f + big, n = t - big;\n"
	"\tconst float r = xc - n * 0.693359375f - n * -2.12194440e-4f;\n"
	"\tfloat p = 1.9875691500e-4f, y, s1, s2;\n"
	"\tint32_t k, k1;\n"
	"\tuint32_t b1, b2;\n"
	"\n"
	"\tp = p * r + 1.3981999507e-3f;\n"
	"\tp = p * r + 8.3334519073e-3f;\n"
	"\tp = p * r + 4.1665795894e-2f;\n"
	"\tp = p * r + 1.6666665459e-1f;\n"
	"\tp = p * r + 5.0000001201e-1f;\n"
	"\ty = p * r * r + r + 1.0f;\n"
	"\tmemcpy(&k, &t, 4);\n"
	"\tk -= 0x4B400000;   /* n, from t's mantissa */\n"
	"\tk1 = k / 2;\n"
	"\tb1 = (uint32_t)(k1 + 127) << 23;\n"
	"\tb2 = (uint32_t)(k - k1 + 127) << 23;\n"
	"\tmemcpy(&s1, &b1, 4);\n"
	"\tmemcpy(&s2, &b2, 4);\n"
	"\ty = y * s1 * s2;\n"
	"\treturn x > 88.72283935546875f ? INFINITY : x < -103.972084f ? 0.0f : y;\n"
	"}\n"
	"#define GNN_EXPF gnn_expf_\n"
	"#define GNN_EXPM1F(x) (gnn_expf_(x) - 1.0f)\n";

/*
 * --gpu-math=tf32: the tiled GEMMs' tensor-core step in one spelling for
 * nvcc (PTX: cvt.rna.tf32.f32, then mma.sync m16n8k8 with FP32
 * accumulation, sm_80 and later) and for the emulated device, whose
 * cuda_runtime.h implements both instructions (docs/emulator.md).
 * GNN_MMA_TF32(d, a, b): d[4] += A * B over the warp, a[4] and b[2]
 * this lane's fragments as PTX lays them out.
 */
static const char tf32prelude[] =
	"#ifndef GNN_EMU\n"
	"#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ < 800\n"
	"#error \"--gpu-math=tf32 needs tensor cores with TF32: --arch=sm_80 or later\"\n"
	"#endif\n"
	"GNN_DFN uint32_t\ngnn_tf32_(float x)\n{\n\tuint32_t r;\n\n"
	"\tasm(\"cvt.rna.tf32.f32 %0, %1;\" : \"=r\"(r) : \"f\"(x));\n\treturn r;\n}\n"
	"GNN_DFN void\ngnn_mma_tf32_(float *d, const uint32_t *a, const uint32_t *b)\n{\n"
	"\tasm volatile(\"mma.sync.aligned.m16n8k8.row.col.f32.tf32.tf32.f32 {%0,%1,%2,%3}, {%4,%5,%6,%7}, {%8,%9}, {%0,%1,%2,%3};\"\n"
	"\t             : \"+f\"(d[0]), \"+f\"(d[1]), \"+f\"(d[2]), \"+f\"(d[3])\n"
	"\t             : \"r\"(a[0]), \"r\"(a[1]), \"r\"(a[2]), \"r\"(a[3]), \"r\"(b[0]), \"r\"(b[1]));\n}\n"
	"#define GNN_TF32(x) gnn_tf32_(x)\n"
	"#define GNN_MMA_TF32(d, a, b) gnn_mma_tf32_(d, a, b)\n"
	"#else\n"
	"#define GNN_TF32(x) gnnemu_cvt_rna_tf32(x)\n"
	"#define GNN_MMA_TF32(d, a, b) gnnemu_mma_m16n8k8_tf32(d, a, b)\n"
	"#endif\n";

/*
 * --precision=bf16: the tiled GEMMs' bfloat16 tensor-core step
 * (gemmcuda.c), mma.sync m16n8k16 .bf16 with FP32 accumulation, on
 * sm_80 and later and on the emulated device (GNN_TC_BF16 1); a device
 * pass for an older architecture compiles the FP32 form beside it.
 * gnn_pack_bf16_(lo, hi): two bfloat16 values held as floats, the word
 * of lo in the low half (their low 16 bits are zero: no rounding).
 */
static const char bf16prelude[] =
	"#if defined(GNN_EMU)\n"
	"#define GNN_TC_BF16 1\n"
	"#define GNN_MMA_BF16(d, a, b) gnnemu_mma_m16n8k16_bf16(d, a, b)\n"
	"GNN_DFN uint32_t\ngnn_pack_bf16_(float lo, float hi)\n{\n\tuint32_t l, h;\n\n"
	"\tmemcpy(&l, &lo, sizeof l);\n\tmemcpy(&h, &hi, sizeof h);\n\treturn l >> 16 | (h & 0xffff0000u);\n}\n"
	"#elif !defined(__CUDA_ARCH__) || __CUDA_ARCH__ >= 800\n"
	"#define GNN_TC_BF16 1\n"
	"GNN_DFN void\ngnn_mma_bf16_(float *d, const uint32_t *a, const uint32_t *b)\n{\n"
	"\tasm volatile(\"mma.sync.aligned.m16n8k16.row.col.f32.bf16.bf16.f32 {%0,%1,%2,%3}, {%4,%5,%6,%7}, {%8,%9}, {%0,%1,%2,%3};\"\n"
	"\t             : \"+f\"(d[0]), \"+f\"(d[1]), \"+f\"(d[2]), \"+f\"(d[3])\n"
	"\t             : \"r\"(a[0]), \"r\"(a[1]), \"r\"(a[2]), \"r\"(a[3]), \"r\"(b[0]), \"r\"(b[1]));\n}\n"
	"#define GNN_MMA_BF16(d, a, b) gnn_mma_bf16_(d, a, b)\n"
	"GNN_DFN uint32_t\ngnn_pack_bf16_(float lo, float hi)\n{\n"
	"\treturn __byte_perm(__float_as_uint(lo), __float_as_uint(hi), 0x7632);\n}\n"
	"#else\n"
	"#define GNN_TC_BF16 0\n"
	"#endif\n";

/* whether fn multiplies by weights rounded to bfloat16 (gemmbf16's
 * products, under some schedule) */
static bool
roundsbf16(const Fn *fn)
{
	for (int i = 0; i < fn->nins; i++) {
		const Ins *in = &fn->ins[i];
		int d = in->op == Omatmul && in->narg > 1 ? fn->val[in->arg[1]].def : -1;
		if (d >= 0 && rounddtype(&fn->ins[d]) == DBF16)
			return true;
	}
	return false;
}

/* whether m draws random numbers: then the file needs philox.h beside
 * gnnrt.h (the interpreter's generator), and only then */
static bool
usesphilox(const Mod *m)
{
	const Fn *fn;
	int i;

	for (fn = m->fn; fn; fn = fn->link)
		for (i = 0; i < fn->nins; i++)
			if (fn->ins[i].op == Odropout_train)
				return true;
	return false;
}

/* whether a value of m is stored in 16 bits (valstoredtype: a marked
 * value, or a 16-bit input or output) or rounded to a 16-bit format:
 * then the file includes gnnhalf.h, whose conversions every access to
 * it goes through */
static bool
usesstore(const Mod *m)
{
	const Fn *fn;
	int i;

	for (fn = m->fn; fn; fn = fn->link) {
		for (i = 0; i < fn->nins; i++)
			if ((fn->ins[i].to != RNone && valstoredtype(fn, fn->ins[i].to) != DNone) ||
			    rounddtype(&fn->ins[i]) != DNone)
				return true;
		for (i = 0; i < fn->narg; i++)
			if (valstoredtype(fn, fn->arg[i]) != DNone)
				return true;
	}
	return false;
}

static void
emitprelude(E *e, const CodegenOpts *o)
{
	out(e, "/*\n * Generated by gnncc from %s for --target=%s; do not edit.\n", o->source ? o->source : "<ir>", e->cuda ? "cuda" : "cpu");
	out(e, " * %s.\n */\n", e->cuda ? "Bind and forward run as CUDA kernels on the model's stream" :
	    "Bind-time work runs on the host; forward runs as host loops (OpenMP where enabled)");
	out(e, "#include <math.h>\n#include <stdint.h>\n#include <string.h>\n%s\n", o->tune ? "#include <stdio.h>\n#include <time.h>\n" : "");
	if (e->cuda)
		out(e, "#include <cuda_runtime.h>\n\n");
	out(e, "#include \"gnnrt.h\"\n%s%s#include \"%s\"\n\n", usesphilox(e->m) ? "#include \"philox.h\"\n" : "",
	    usesstore(e->m) ? "#include \"gnnhalf.h\"\n" : "", o->header ? o->header : "model.h");
	out(e, "#ifdef _OPENMP\n#include <omp.h>\n#endif\n");
	/* a host kernel runs tasks [t0_, t1_) of its T_; a launch gives each
	 * thread one contiguous range (OpenMP's static schedule) or, with a
	 * chunk, ranges of that many tasks handed out as threads finish.  The
	 * threads are in the launch, outside the kernel, so that a kernel's
	 * clones (GNN_CLONES) cover its loop: an OpenMP region's outlined
	 * body would not inherit the clone's instruction set. */
	out(e, "#define GNN_PRAGMA(x) _Pragma(#x)\n");
	/* a plan-order index copy (rowkernel.c's permcopies): int32 where
	 * the bound graph's ids fit (w: m->ix32), else int64 */
	if (e->cuda)
		out(e, "#define GNN_IXAT(p, w, k) ((w) ? (int64_t)((const int32_t *)(p))[k] : ((const int64_t *)(p))[k])\n");
	if (!e->cuda && o->cpu == CpuPortable)
		out(e, "#if defined(__x86_64__) && defined(__has_attribute)\n#if __has_attribute(target_clones)\n"
		       "#define GNN_CLONES __attribute__((target_clones(\"arch=x86-64-v4\", \"arch=x86-64-v3\", \"default\")))\n"
		       "#endif\n#endif\n");
	out(e, "#ifndef GNN_CLONES\n#define GNN_CLONES\n#endif\n");
	/* a kernel realigns its own stack: gcc 12 laid out an x86-64-v4
	 * kernel's local arrays as if its frame were 16-aligned after an odd
	 * number of pushes, and read them with aligned vector loads (a crash).
	 * Not under clang, which rejects it beside target_clones and aligns
	 * what it spills itself */
	out(e, "#if defined(__x86_64__) && defined(__has_attribute) && !defined(__clang__)\n#if __has_attribute(force_align_arg_pointer)\n"
	       "#define GNN_KALIGN __attribute__((force_align_arg_pointer))\n#endif\n#endif\n"
	       "#ifndef GNN_KALIGN\n#define GNN_KALIGN\n#endif\n");
	out(e, "#define GNN_HKERNEL(k) static GNN_CLONES GNN_KALIGN void k\n#define GNN_HRANGE int64_t t0_, int64_t t1_,\n"
	       "#define GNN_HLOOP(t, T) for (int64_t t = t0_; t < t1_; t++)\n");
	/* profiling (gnnrt.h's GNN_PROF): the launch after GNN_MPROF (N its
	 * name, S its schedule's) timed and recorded on dev's timers (NULL:
	 * the host clock) while gnn_prof_on_ is set; otherwise one test */
	out(e, "#define GNN_MPROF(dev, N, S, grid, block, shmem) GNN_PROF(dev, m->stream, m->prog->name, N, S, grid, block, shmem)\n"
	       "#define GNN_HPROF(N, S, T) GNN_MPROF(NULL, N, S, T, 0, 0)\n");
	out(e, "#ifdef _OPENMP\n"
	       "#define GNN_HLAUNCH(k, N, S, T, ...) do { \\\n"
	       "\tconst int64_t T__ = (T); \\\n"
	       "\tconst int n__ = T__ > 1 ? omp_get_max_threads() : 1; \\\n"
	       "\tGNN_HPROF(N, S, T__) { \\\n"
	       "\t\tGNN_PRAGMA(omp parallel for schedule(static) num_threads(n__)) \\\n"
	       "\t\tfor (int p__ = 0; p__ < n__; p__++) \\\n"
	       "\t\t\tk(T__ * p__ / n__, T__ * (p__ + 1) / n__, T__, __VA_ARGS__); \\\n"
	       "\t} \\\n"
	       "} while (0)\n"
	       "#define GNN_HLAUNCH_DYN(k, N, S, c, T, ...) do { \\\n"
	       "\tconst int64_t T__ = (T), c__ = (c); \\\n"
	       "\tGNN_HPROF(N, S, T__) { \\\n"
	       "\t\tGNN_PRAGMA(omp parallel for schedule(dynamic, 1)) \\\n"
	       "\t\tfor (int64_t p__ = 0; p__ < T__; p__ += c__) \\\n"
	       "\t\t\tk(p__, T__ - p__ > c__ ? p__ + c__ : T__, T__, __VA_ARGS__); \\\n"
	       "\t} \\\n"
	       "} while (0)\n"
	       "#else\n"
	       "#define GNN_HLAUNCH(k, N, S, T, ...) do { \\\n"
	       "\tconst int64_t T__ = (T); \\\n"
	       "\tGNN_HPROF(N, S, T__) \\\n"
	       "\t\tk(0, T__, T__, __VA_ARGS__); \\\n"
	       "} while (0)\n"
	       "#define GNN_HLAUNCH_DYN(k, N, S, c, T, ...) GNN_HLAUNCH(k, N, S, T, __VA_ARGS__)\n"
	       "#endif\n");
	if (e->cuda) {
		/* launches, kernel heads and shared arrays through macros, so
		 * that the emulated device (gnnemu's cuda_runtime.h, which
		 * defines GNN_EMU) compiles this file as C++ on the CPU */
		out(e, "#ifndef GNN_EMU\n");
		out(e, "#define GNN_DKERNEL(k) static __global__ void k\n");
		out(e, "#define GNN_DKERNEL_LB(k, n) static __global__ void __launch_bounds__(n) k\n");
		out(e, "#define GNN_LAUNCH(k, grid, block, shmem, stream) k<<<grid, block, shmem, stream>>>\n");
		out(e, "#define GNN_SHARED(T, name, dims) __shared__ T name dims\n");
		out(e, "#define GNN_CUDA_DEVICE gnn_device_cuda\n#else\n#define GNN_CUDA_DEVICE gnn_device_cuda_emu\n");
		out(e, "#endif\n");
		/* work units for the emulated device's per-warp counters (the
		 * cost report's units, docs/cost.md); nothing on a GPU */
		out(e, "#ifdef GNN_EMU\n#define GNN_WORK(n) gnnemu_work(n)\n#else\n#define GNN_WORK(n) ((void)0)\n#endif\n");
		out(e, "#define GNN_DLOOP(t, T) for (int64_t t = (int64_t)blockIdx.x * blockDim.x + threadIdx.x; t < (T); t += (int64_t)blockDim.x * gridDim.x)\n");
		out(e, "#define GNN_PLAUNCH(k, N, S, grid, block, shmem) \\\n"
		       "\tGNN_MPROF(m->prog->dev, N, S, grid, block, shmem) GNN_LAUNCH(k, grid, block, shmem, (cudaStream_t)m->stream)\n");
		out(e, "#define GNN_DLAUNCH(k, N, S, T, ...) do { \\\n\tint64_t T_ = (T); \\\n\tif (T_ > 0) \\\n\t\tGNN_PLAUNCH(k, N, S, gnn_blocks(T_, 256), 256, 0)(T_, __VA_ARGS__); \\\n} while (0)\n\n");
		out(e, "#define GNN_DFN static __device__ __forceinline__\n#define GNN_DRANGE\n");
		out(e, "#define GNN_RLAUNCH(k, N, S, L, R, T, ...) do { \\\n\tint64_t T_ = (T); \\\n\tif (T_ > 0) \\\n\t\tGNN_PLAUNCH(k, N, S, gnn_blocks(T_, (R)), (L) * (R), 0)(T_, __VA_ARGS__); \\\n} while (0)\n\n");
		out(e, "/* blocks of per tasks for T tasks: grid-stride loops take the rest */\nstatic unsigned\ngnn_blocks(int64_t T, int64_t per)\n{\n\tint64_t b = (T + per - 1) / per;\n\n\treturn b > (1 << 20) ? (1u << 20) : (unsigned)b;\n}\n");
	} else
		out(e, "#define GNN_DKERNEL GNN_HKERNEL\n#define GNN_DRANGE GNN_HRANGE\n#define GNN_DLOOP GNN_HLOOP\n"
		       "#define GNN_DLAUNCH GNN_HLAUNCH\n#define GNN_DFN static inline\n#define GNN_WORK(n) ((void)0)\n");
	if (e->cuda && o->gpumath == GpuMathTF32)
		out(e, "%s", tf32prelude);
	if (e->cuda) {
		bool bf = false;
		for (const Fn *fn = e->m->fn; fn && !bf; fn = fn->link)
			bf = roundsbf16(fn);
		if (bf)
			out(e, "%s", bf16prelude);
	}
	if (e->cuda && o->vendor)
		emitvendorprelude(e);
	if (e->cuda)
		out(e, "#define GNN_EXPF expf\n#define GNN_EXPM1F expm1f\n");
	else
		out(e, "%s", cpuexpf);
}

void
emitsource(FILE *f, Mod *m, const CodegenOpts *o)
{
	Plan p;
	Fn *fn;
	W w = {.bol = true};
	E e = {.f = f, .w = &w, .m = m, .cuda = o->target == TargetCUDA, .sfx = "", .o = o};
	Host host;
	int nfn;

	emitprelude(&e, o);
	for (fn = m->fn, nfn = 0; fn; fn = fn->link, nfn++) {
		if (plan(&p, fn, o->target))
			die("codegen: emitsource without a clean codegencheck");
		e.tc = o->tune ? &o->tune[nfn] : NULL;
		e.p = &p;
		e.fn = fn;
		e.nm = fn->name;
		out(&e, "\n/* ---- model %s ---- */\n", fn->name);
		hostlayout(&e, &host);
		e.splitused = false;
		e.vendorused = 0;
		emitkernels(&e);
		if (e.splitused)
			emitsplitreduce(&e);
		if (e.vendorused)
			emitvendorhook(&e);
		out(&e, "\n/* ---- model %s: host tables ---- */\n", fn->name);
		emittables(&e);
		emitprogram(&e);
		/* a training step is a program of its own too (NAME_train_desc,
		 * for tools: gnnrun --model-name runs it as a model) */
		emitapi(&e);
		if (fn->train)
			emittrain(&e);
		freekernels(&e);
		free(e.kstart);
		e.kstart = NULL;
		hostfree(&host);
		planfree(&p);
		poolfree(&e);
	}
	fputs(sstr(&w.s), f);
	sfree(&w.s);
}

void
emitheader(FILE *f, Mod *m, const CodegenOpts *o)
{
	Fn *fn;
	W w = {.bol = true};
	E e = {.f = f, .w = &w, .m = m, .cuda = o->target == TargetCUDA};
	char *guard;
	int i, k;

	guard = estrdup(pf(&e, "GNNCC_MODEL_%s", o->header ? o->header : "MODEL_H"));
	for (k = 0; guard[k]; k++)
		if (!(guard[k] >= 'A' && guard[k] <= 'Z') && !(guard[k] >= '0' && guard[k] <= '9'))
			guard[k] = guard[k] >= 'a' && guard[k] <= 'z' ? guard[k] - 'a' + 'A' : '_';
	out(&e, "/*\n * Generated by gnncc from %s for --target=%s; do not edit.\n", o->source ? o->source : "<ir>", e.cuda ? "cuda" : "cpu");
	out(&e, " * Every call returns a gnn_status; gnn_errmsg() says what went wrong.\n");
	out(&e, " * forward takes %s pointers; forward_host takes host pointers.\n */\n", e.cuda ? "device" : "host");
	out(&e, "#ifndef %s\n#define %s\n\n#include \"gnnrt.h\"\n\n#ifdef __cplusplus\nextern \"C\" {\n#endif\n", guard, guard);
	for (fn = m->fn; fn; fn = fn->link) {
		Fn *tf = trainof(m, fn);
		if (fn->train)
			continue;
		e.fn = fn;
		e.nm = fn->name;
		out(&e, "\n/* model %s", fn->name);
		for (i = 0; i < fn->narg; i++) {
			out(&e, "%s %s: %s", i ? "," : "\n *   inputs:", fn->val[fn->arg[i]].name, typetext(&e, fn->val[fn->arg[i]].type));
		}
		for (i = 0; i < fn->nret; i++) {
			out(&e, "%s out%d: %s", i ? "," : "\n *   outputs:", i, typetext(&e, fn->val[fn->ret[i]].type));
		}
		out(&e, "\n */\n#define %s_TARGET %s\ntypedef struct %s %s;\n", fn->name, e.cuda ? "GNN_TARGET_CUDA" : "GNN_TARGET_CPU", fn->name, fn->name);
		out(&e, "gnn_status %s_create(%s **model);\n", fn->name, fn->name);
		out(&e, "gnn_status %s_load_weights(%s *model, const char *safetensors_path);\n", fn->name, fn->name);
		out(&e, "gnn_status %s_bind(%s *model, gnn_graph *graph);\n", fn->name, fn->name);
		/* the graph inputs in order: a heterogeneous graph's relations */
		out(&e, "gnn_status %s_bind_graphs(%s *model, gnn_graph *const *graphs, int n);\n", fn->name, fn->name);
		out(&e, "gnn_status %s_forward(", fn->name);
		forwardparams(&e);
		out(&e, ");\ngnn_status %s_forward_host(", fn->name);
		forwardparams(&e);
		out(&e, ");\ngnn_status %s_synchronize(%s *model);\n", fn->name, fn->name);
		out(&e, "void %s_destroy(%s *model);\nextern const gnn_model_desc %s_desc;\n", fn->name, fn->name, fn->name);
		out(&e, "gnn_status %s_init_weights(%s *model, uint64_t seed);\n", fn->name, fn->name);
		out(&e, "gnn_status %s_save_weights(%s *model, const char *safetensors_path);\n", fn->name, fn->name);
		if (tf) {
			out(&e, "/* training (train %s): inputs as forward's, then", fn->name);
			for (i = fn->narg; i < tf->narg - 1; i++)
				out(&e, " %s: %s", tf->val[tf->arg[i]].name, typetext(&e, tf->val[tf->arg[i]].type));
			out(&e, " */\ngnn_status %s_train_step(", fn->name);
			trainparams(&e, tf, fn->name);
			out(&e, ");\ngnn_status %s_train_config(%s *model, const gnn_optim_config *config, uint64_t seed);\n",
			    fn->name, fn->name);
		}
	}
	out(&e, "\n#ifdef __cplusplus\n}\n#endif\n\n#endif\n");
	free(guard);
	fputs(sstr(&w.s), f);
	sfree(&w.s);
	poolfree(&e);
}
