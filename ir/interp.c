/*
 * The reference interpreter: the oracle for every pass and backend.
 * interp.h states the contract, docs/ir.md what each op means.
 *
 * One pass over fn->ins in order.  Each IR value has a slot holding its
 * IValue.  Inputs are borrowed (never written or freed); what an
 * instruction computes, parameters included (the callback hands their
 * arrays over), is owned and freed right after its last use, so peak
 * memory is the live set of the program rather than its sum.  Symbols live in the per-run array symval[]: bound from the input
 * shapes before the first instruction, and from data-dependent edge
 * counts as Fdyn graph ops run.  A run keeps no state outside its own
 * allocations, so a failed run leaves nothing behind for the next one.
 *
 * Every op computes its result shape from its operands and attributes
 * (only const and param take it from the declared type, which is their
 * only source), and the driver compares it with the declared type under
 * the bound symbols.  A typing bug thus shows up here as an error rather
 * than as a silently different oracle.
 *
 * All arithmetic is in double, whatever the dtype; integer and bool
 * tensors hold exact integers.  Loops are plain and ordered (sums run in
 * index order), so results are deterministic.  Every op is linear in the
 * sizes of its operands and result (matmul: in M*K*N), never in
 * nodes x edges.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "interp.h"
#include "../runtime/philox.h"

/* Refuse tensors above this many elements (512 GiB of doubles) with an
 * error instead of asking malloc: a wrong symbol binding can ask for
 * absurd sizes, and the oracle must not die on them. */
#define MaxElems ((int64_t)1 << 36)

typedef struct Slot {
	IValue v;
	bool live;
	bool owned;             /* false: arrays borrowed from an input */
} Slot;

typedef struct R {
	IRun *run;
	Fn *fn;
	Mod *m;
	int64_t *symval;        /* [m->nsym], -1 unbound */
	int *symfrom;           /* [m->nsym], input that bound it, or -1 */
	Slot *slot;             /* [fn->nval] */
	int *left;              /* [fn->nval] operand uses still to run */
	bool *isret;            /* [fn->nval] */
	const Ins *ins;         /* running instruction, for messages; NULL: inputs */
	Type rty;               /* its declared result type */
	int64_t want[MaxRank];  /* rty's extents; -1 where an Fdyn op binds it */
} R;

/* Messages ---------------------------------------------------------------- */

/* A message lands in run->err, whose size interp.h fixes, so its parts
 * are formatted into small arrays too.  A part that does not fit (a value,
 * input or symbol name may be of any length) ends in "...": cut visibly,
 * never silently.  len is what snprintf wanted to write. */
static const char *
cut(char *buf, size_t n, size_t len)
{
	if (len >= n && n >= 4)
		memcpy(buf + n - 4, "...", 4);
	return buf;
}

/* The printer's names (print.c's valnames): unique, so a message points
 * at one line of the printed IR.  Only computed when a run fails. */
static const char *
valname(Fn *fn, Ref v, char *buf, size_t n)
{
	char **name;
	int len;

	if (v < 0 || v >= fn->nval) {
		snprintf(buf, n, "%%<bad ref %d>", v);
		return buf;
	}
	name = valnames(fn);
	len = snprintf(buf, n, "%%%s", name[v]);
	freevalnames(name);
	return cut(buf, n, len);
}

/* The first failure wins: callers return -1 up the stack without adding
 * their own message, so the innermost (most specific) one is kept. */
static int
fail(R *r, const char *fmt, ...)
{
	char *err = r->run->err, vn[80];
	size_t n = sizeof r->run->err, len = 0, fl;
	const Ins *i = r->ins;
	const char *file;
	va_list ap;

	if (err[0])
		return -1;
	if (i) {
		valname(r->fn, i->to, vn, sizeof vn);
		if ((file = i->loc.file)) {
			/* a long path keeps its end, which names the file */
			fl = strlen(file);
			len = snprintf(err, n, "%s%s:%d:%d: %s: ", fl > 120 ? "..." : "",
			               fl > 120 ? file + fl - 120 : file, i->loc.line, i->loc.col, vn);
		} else
			len = snprintf(err, n, "%s: ", vn);
	}
	if (len < n) {
		va_start(ap, fmt);
		len += vsnprintf(err + len, n - len, fmt, ap);
		va_end(ap);
	}
	cut(err, n, len);
	return -1;
}

static const char *
shapestr(char *buf, size_t n, int rank, const int64_t *shape)
{
	size_t len;
	int k;

	len = snprintf(buf, n, "[");
	for (k = 0; k < rank && len < n; k++)
		len += snprintf(buf + len, n - len, "%s%lld", k ? ", " : "", (long long)shape[k]);
	if (len < n)
		snprintf(buf + len, n - len, "]");
	return buf;
}

static const char *
rtypestr(R *r, char *buf, size_t n, Type t)
{
	return cut(buf, n, snprinttype(buf, n, r->m, t));
}

static const char *
rdimstr(R *r, char *buf, size_t n, Dim d)
{
	return cut(buf, n, snprintdim(buf, n, r->m, d));
}

static const char *
argname(R *r, int a, char *buf, size_t n)
{
	const char *s = r->fn->val[r->fn->arg[a]].name;

	if (s)
		return cut(buf, n, snprintf(buf, n, "input '%s'", s));
	snprintf(buf, n, "input %d", a + 1);
	return buf;
}

/* Symbols of d in term order, each once; returns the count. */
static int
dimsyms(const Mod *m, Dim d, int *sym, int max)
{
	const DExp *e;
	int i, k, j, n = 0;

	if (d >= 0)
		return 0;
	e = &m->dexp[~d];
	for (i = 0; i < e->nterm; i++)
		for (k = 0; k < e->term[i].deg; k++) {
			for (j = 0; j < n && sym[j] != e->term[i].sym[k]; j++)
				;
			if (j == n && n < max)
				sym[n++] = e->term[i].sym[k];
		}
	return n;
}

static int
unboundsyms(R *r, Dim d, int *sym, int max)
{
	int all[4 * MaxDeg + 16], n, k, u = 0;

	n = dimsyms(r->m, d, all, sizeof all / sizeof *all);
	for (k = 0; k < n; k++)
		if (r->symval[all[k]] < 0 && u < max)
			sym[u++] = all[k];
	return u;
}

/* " from input 'g'" for a plain symbol, " (N from input 'g', ...)" for
 * an expression: where the values that d was evaluated with came from. */
static const char *
origin(R *r, Dim d, char *buf, size_t n)
{
	int sym[16], ns, k;
	size_t len = 0;
	char an[80];

	buf[0] = 0;
	ns = dimsyms(r->m, d, sym, 16);
	if (ns == 1 && dimassym(r->m, d) >= 0) {
		if (r->symfrom[sym[0]] >= 0)
			cut(buf, n, snprintf(buf, n, " from %s", argname(r, r->symfrom[sym[0]], an, sizeof an)));
		return buf;
	}
	for (k = 0; k < ns && len < n; k++) {
		if (r->symfrom[sym[k]] < 0)
			continue;
		len += snprintf(buf + len, n - len, "%s%s from %s", len ? ", " : " (",
		                r->m->sym[sym[k]].name, argname(r, r->symfrom[sym[k]], an, sizeof an));
	}
	if (len && len < n)
		len += snprintf(buf + len, n - len, ")");
	return cut(buf, n, len);
}

/* Memory ------------------------------------------------------------------ */

static int64_t
numel(int rank, const int64_t *shape)
{
	int64_t n = 1;
	int k;

	for (k = 0; k < rank; k++)
		n *= shape[k];
	return n;
}

/* Element count, or -1 (after an error) if it is negative or too large. */
static int64_t
checkednumel(R *r, int rank, const int64_t *shape)
{
	int64_t n = 1;
	int k;
	char s[200];

	for (k = 0; k < rank; k++)
		if (shape[k] < 0)
			return fail(r, "negative extent in shape %s", shapestr(s, sizeof s, rank, shape));
	for (k = 0; k < rank; k++)
		if (shape[k] == 0)
			return 0;
	for (k = 0; k < rank; k++)
		if (__builtin_mul_overflow(n, shape[k], &n) || n > MaxElems)
			return fail(r, "tensor of shape %s is too large", shapestr(s, sizeof s, rank, shape));
	return n;
}

static void *
xalloc(R *r, int64_t n, size_t size)
{
	void *p;

	if (n < 0 || n > MaxElems)
		return fail(r, "allocation of %lld elements is too large", (long long)n), NULL;
	p = calloc(n ? (size_t)n : 1, size);
	if (!p)
		fail(r, "out of memory (%lld elements)", (long long)n);
	return p;
}

static int
newtensor(R *r, ITensor *t, int rank, const int64_t *shape)
{
	int64_t n;

	if (rank < 0 || rank > MaxRank)
		return fail(r, "rank %d is out of range", rank);
	if ((n = checkednumel(r, rank, shape)) < 0)
		return -1;
	t->rank = rank;
	memcpy(t->shape, shape, rank * sizeof *shape);
	t->data = xalloc(r, n, sizeof(double));
	return t->data ? 0 : -1;
}

/* A graph of nnode nodes and nedge edges; batch and ngraph are copied
 * from like (the ops keep the nodes). */
static int
newgraph(R *r, IGraph *g, int64_t nnode, int64_t nedge, bool weighted, const IGraph *like)
{
	g->nnode = g->nsrc = nnode;
	g->nedge = nedge;
	g->ngraph = like->ngraph;
	if (!(g->src = xalloc(r, nedge, sizeof *g->src)) || !(g->dst = xalloc(r, nedge, sizeof *g->dst)))
		return -1;
	if (weighted && !(g->weight = xalloc(r, nedge, sizeof *g->weight)))
		return -1;
	if (like->batch) {
		if (!(g->batch = xalloc(r, nnode, sizeof *g->batch)))
			return -1;
		memcpy(g->batch, like->batch, nnode * sizeof *g->batch);
	}
	return 0;
}

void
itensorfree(ITensor *t)
{
	if (!t)
		return;
	free(t->data);
	t->data = NULL;
}

void
ivaluefree(IValue *v)
{
	if (!v)
		return;
	if (v->kind == TTensor) {
		itensorfree(&v->t);
		return;
	}
	free(v->g.src);
	free(v->g.dst);
	free(v->g.weight);
	free(v->g.batch);
	v->g.src = v->g.dst = v->g.batch = NULL;
	v->g.weight = NULL;
}

void
interpfree(IRun *run)
{
	int k;

	if (!run->outs)
		return;
	for (k = 0; k < run->fn->nret; k++)
		ivaluefree(&run->outs[k]);
	free(run->outs);
	run->outs = NULL;
}

static int
copyvalue(R *r, IValue *to, const IValue *v)
{
	const IGraph *g = &v->g;

	*to = (IValue){.kind = v->kind};
	if (v->kind == TTensor) {
		to->t.dtype = v->t.dtype;
		if (newtensor(r, &to->t, v->t.rank, v->t.shape) < 0)
			return -1;
		memcpy(to->t.data, v->t.data, numel(v->t.rank, v->t.shape) * sizeof(double));
		return 0;
	}
	if (newgraph(r, &to->g, g->nnode, g->nedge, g->weight != NULL, g) < 0) {
		ivaluefree(to);
		return -1;
	}
	memcpy(to->g.src, g->src, g->nedge * sizeof *g->src);
	memcpy(to->g.dst, g->dst, g->nedge * sizeof *g->dst);
	if (g->weight)
		memcpy(to->g.weight, g->weight, g->nedge * sizeof *g->weight);
	return 0;
}

static void
drop(R *r, Ref v)
{
	Slot *s = &r->slot[v];

	if (s->live && s->owned)
		ivaluefree(&s->v);
	s->live = s->owned = false;
}

/* Operands ---------------------------------------------------------------- */

static const ITensor *
targ(R *r, int k)
{
	const IValue *v = &r->slot[r->ins->arg[k]].v;

	if (v->kind != TTensor)
		return fail(r, "malformed IR: operand %d of %s is not a tensor", k + 1, opinfo[r->ins->op].name), NULL;
	return &v->t;
}

static const IGraph *
garg(R *r, int k)
{
	const IValue *v = &r->slot[r->ins->arg[k]].v;

	if (v->kind != TGraph)
		return fail(r, "malformed IR: operand %d of %s is not a graph", k + 1, opinfo[r->ins->op].name), NULL;
	return &v->g;
}

/* Rows of x: extent of dim 0 and the element count of one row. */
static int64_t
rowsize(const ITensor *x)
{
	return numel(x->rank - 1, x->shape + 1);
}

/* A dim attribute of an op over one axis of a rank-r tensor. */
static int
axisattr(R *r, int rank, int *d)
{
	const Attr *a = findattr(r->ins, "dim");

	if (!a || (a->kind != AInt && a->kind != ABool))
		return fail(r, "%s: missing attribute 'dim'", opinfo[r->ins->op].name);
	if (a->u.i < 0 || a->u.i >= rank)
		return fail(r, "%s: dim %lld out of range for rank %d", opinfo[r->ins->op].name, (long long)a->u.i, rank);
	*d = (int)a->u.i;
	return 0;
}

/* Split shape around axis d: outer * n * inner elements. */
static void
splitaxis(const ITensor *x, int d, int64_t *outer, int64_t *n, int64_t *inner)
{
	*outer = numel(d, x->shape);
	*n = x->shape[d];
	*inner = numel(x->rank - d - 1, x->shape + d + 1);
}

/* An index held as a double: must be an integer in [0, lim). */
static int
getindex(R *r, double v, int64_t pos, int64_t lim, int64_t *out)
{
	const char *op = opinfo[r->ins->op].name;

	if (v != trunc(v))  /* NaN and fractions; inf passes, then fails the range */
		return fail(r, "%s: index %.17g at position %lld is not an integer", op, v, (long long)pos);
	if (!(v >= 0 && v < (double)lim))
		return fail(r, "%s: index %.17g at position %lld out of range [0, %lld)", op, v, (long long)pos, (long long)lim);
	*out = (int64_t)v;
	return 0;
}

/* max that propagates NaN, as torch.maximum and scatter amax do */
static double
nanmax(double a, double b)
{
	return isnan(a) || a > b ? a : b;
}

static double
nanmin(double a, double b)
{
	return isnan(a) || a < b ? a : b;
}

/* Graph ops --------------------------------------------------------------- */

static int
add_self_loops(R *r, IValue *o)
{
	const IGraph *g = garg(r, 0);
	int64_t e, i, E, N;

	if (!g)
		return -1;
	E = g->nedge;
	N = g->nnode;
	if (newgraph(r, &o->g, N, E + N, g->weight != NULL, g) < 0)
		return -1;
	memcpy(o->g.src, g->src, E * sizeof *g->src);
	memcpy(o->g.dst, g->dst, E * sizeof *g->dst);
	if (g->weight)
		memcpy(o->g.weight, g->weight, E * sizeof *g->weight);
	for (i = 0; i < N; i++) {
		e = E + i;
		o->g.src[e] = o->g.dst[e] = i;
		if (g->weight)
			o->g.weight[e] = 1;
	}
	return 0;
}

/* remove_self_loops, and the first half of add_remaining_self_loops:
 * copy the edges with src != dst in order, leaving room for extra more. */
static int
keepnonloops(R *r, IValue *o, const IGraph *g, int64_t extra)
{
	int64_t e, k, kept = 0;

	for (e = 0; e < g->nedge; e++)
		kept += g->src[e] != g->dst[e];
	if (newgraph(r, &o->g, g->nnode, kept + extra, g->weight != NULL, g) < 0)
		return -1;
	for (e = 0, k = 0; e < g->nedge; e++) {
		if (g->src[e] == g->dst[e])
			continue;
		o->g.src[k] = g->src[e];
		o->g.dst[k] = g->dst[e];
		if (g->weight)
			o->g.weight[k] = g->weight[e];
		k++;
	}
	return 0;
}

static int
remove_self_loops(R *r, IValue *o)
{
	const IGraph *g = garg(r, 0);

	return g ? keepnonloops(r, o, g, 0) : -1;
}

/* PyG utils.add_remaining_self_loops: a node's loop weight is fill, or
 * the weight of its last existing self-loop (the assignment
 * loop_attr[row[inv_mask]] = edge_attr[inv_mask] lets the last one win). */
static int
add_remaining_self_loops(R *r, IValue *o)
{
	const IGraph *g = garg(r, 0);
	double fill = attrfloat(r->ins, "fill", 1.0);
	int64_t e, i, k, N;

	if (!g || keepnonloops(r, o, g, g->nnode) < 0)
		return -1;
	N = g->nnode;
	k = o->g.nedge - N;
	for (i = 0; i < N; i++) {
		o->g.src[k + i] = o->g.dst[k + i] = i;
		if (g->weight)
			o->g.weight[k + i] = fill;
	}
	if (g->weight)
		for (e = 0; e < g->nedge; e++)
			if (g->src[e] == g->dst[e])
				o->g.weight[k + g->src[e]] = g->weight[e];
	return 0;
}

static int
endpoints(R *r, IValue *o)
{
	const IGraph *g = garg(r, 0);
	const int64_t *p;
	int64_t e;

	if (!g || newtensor(r, &o->t, 1, &g->nedge) < 0)
		return -1;
	p = r->ins->op == Osrc ? g->src : g->dst;
	for (e = 0; e < g->nedge; e++)
		o->t.data[e] = (double)p[e];
	return 0;
}

static int
batchvec(R *r, IValue *o)
{
	const IGraph *g = garg(r, 0);
	int64_t i;

	if (!g || newtensor(r, &o->t, 1, &g->nnode) < 0)
		return -1;
	if (g->batch)
		for (i = 0; i < g->nnode; i++)
			o->t.data[i] = (double)g->batch[i];
	return 0;
}

static int
degree(R *r, IValue *o)
{
	const IGraph *g = garg(r, 0);
	const int64_t *p;
	int64_t e, shape[2];

	if (!g)
		return -1;
	shape[0] = r->ins->op == Oin_degree ? g->nnode : g->nsrc, shape[1] = 1;
	if (newtensor(r, &o->t, 2, shape) < 0)
		return -1;
	p = r->ins->op == Oin_degree ? g->dst : g->src;
	for (e = 0; e < g->nedge; e++)
		o->t.data[p[e]] += 1;
	return 0;
}

static int
edge_weight(R *r, IValue *o)
{
	const IGraph *g = garg(r, 0);
	int64_t e, shape[2];

	if (!g)
		return -1;
	shape[0] = g->nedge, shape[1] = 1;
	if (newtensor(r, &o->t, 2, shape) < 0)
		return -1;
	for (e = 0; e < g->nedge; e++)
		o->t.data[e] = g->weight ? g->weight[e] : 1;
	return 0;
}

/* PyG gcn_norm without its self-loop step: deg = scatter_sum(w, dst),
 * dis = deg.pow(-0.5) with inf masked to 0. */
static int
gcn_norm(R *r, IValue *o)
{
	const IGraph *g = garg(r, 0);
	int64_t e, i, shape[2];
	double *dis, w;

	if (!g)
		return -1;
	shape[0] = g->nedge, shape[1] = 1;
	if (newtensor(r, &o->t, 2, shape) < 0 || !(dis = xalloc(r, g->nnode, sizeof *dis)))
		return -1;
	for (e = 0; e < g->nedge; e++)
		dis[g->dst[e]] += g->weight ? g->weight[e] : 1;
	for (i = 0; i < g->nnode; i++) {
		dis[i] = pow(dis[i], -0.5);
		if (isinf(dis[i]))
			dis[i] = 0;
	}
	for (e = 0; e < g->nedge; e++) {
		w = g->weight ? g->weight[e] : 1;
		o->t.data[e] = dis[g->src[e]] * w * dis[g->dst[e]];
	}
	free(dis);
	return 0;
}

/* PyG utils.softmax(s, dst, num_nodes=N): per trailing index, the max of
 * each dst group is subtracted and 1e-16 added to the group's sum. */
static int
edge_softmax(R *r, IValue *o)
{
	const IGraph *g = garg(r, 0);
	const ITensor *s = targ(r, 1);
	double *mx, *sum;
	int64_t e, j, inner, slot;
	char sh[200];

	if (!g || !s)
		return -1;
	if (s->rank < 1 || s->shape[0] != g->nedge)
		return fail(r, "edge_softmax: scores of shape %s for a graph with %lld edges",
		            shapestr(sh, sizeof sh, s->rank, s->shape), (long long)g->nedge);
	inner = rowsize(s);
	if (newtensor(r, &o->t, s->rank, s->shape) < 0)
		return -1;
	if (!(mx = xalloc(r, g->nnode * inner, sizeof *mx)))
		return -1;
	if (!(sum = xalloc(r, g->nnode * inner, sizeof *sum))) {
		free(mx);
		return -1;
	}
	for (j = 0; j < g->nnode * inner; j++)
		mx[j] = -INFINITY;
	for (e = 0; e < g->nedge; e++)
		for (j = 0; j < inner; j++) {
			slot = g->dst[e] * inner + j;
			mx[slot] = nanmax(s->data[e * inner + j], mx[slot]);
		}
	for (e = 0; e < g->nedge; e++)
		for (j = 0; j < inner; j++) {
			slot = g->dst[e] * inner + j;
			o->t.data[e * inner + j] = exp(s->data[e * inner + j] - mx[slot]);
			sum[slot] += o->t.data[e * inner + j];
		}
	for (e = 0; e < g->nedge; e++)
		for (j = 0; j < inner; j++)
			o->t.data[e * inner + j] /= sum[g->dst[e] * inner + j] + 1e-16;
	free(mx);
	free(sum);
	return 0;
}

/* Index ops --------------------------------------------------------------- */

static int
checkindexvec(R *r, const ITensor *idx)
{
	char sh[200];

	if (idx->rank != 1)
		return fail(r, "%s: index of shape %s is not 1-d", opinfo[r->ins->op].name,
		            shapestr(sh, sizeof sh, idx->rank, idx->shape));
	return 0;
}

static int
gather(R *r, IValue *o)
{
	const ITensor *x = targ(r, 0), *idx = targ(r, 1);
	int64_t k, row, at = 0, shape[MaxRank];

	if (!x || !idx || checkindexvec(r, idx) < 0)
		return -1;
	if (x->rank < 1)
		return fail(r, "gather: cannot index a scalar");
	memcpy(shape, x->shape, sizeof shape);
	shape[0] = idx->shape[0];
	if (newtensor(r, &o->t, x->rank, shape) < 0)
		return -1;
	row = rowsize(x);
	for (k = 0; k < idx->shape[0]; k++) {
		if (getindex(r, idx->data[k], k, x->shape[0], &at) < 0)
			return -1;
		memcpy(o->t.data + k * row, x->data + at * row, row * sizeof(double));
	}
	return 0;
}

static int
scatter(R *r, IValue *o)
{
	const ITensor *msg = targ(r, 0), *idx = targ(r, 1);
	int64_t k, j, n, row, at = 0, *cnt = NULL, shape[MaxRank];
	double *out;
	Dim d;
	char sh[200], sh2[200], ds[100];
	int op = r->ins->op;

	if (!msg || !idx || checkindexvec(r, idx) < 0)
		return -1;
	if (msg->rank < 1 || msg->shape[0] != idx->shape[0])
		return fail(r, "%s: messages of shape %s but index of shape %s", opinfo[op].name,
		            shapestr(sh, sizeof sh, msg->rank, msg->shape),
		            shapestr(sh2, sizeof sh2, idx->rank, idx->shape));
	if (!attrdim(r->ins, "n", &d))
		return fail(r, "%s: missing attribute 'n'", opinfo[op].name);
	if ((n = dimeval(r->m, d, r->symval)) < 0)
		return fail(r, "%s: n = %s is not bound", opinfo[op].name, rdimstr(r, ds, sizeof ds, d));
	memcpy(shape, msg->shape, sizeof shape);
	shape[0] = n;
	if (newtensor(r, &o->t, msg->rank, shape) < 0)
		return -1;
	if (op != Oscatter_sum && !(cnt = xalloc(r, n, sizeof *cnt)))
		return -1;
	out = o->t.data;
	row = rowsize(msg);
	for (k = 0; k < idx->shape[0]; k++) {
		if (getindex(r, idx->data[k], k, n, &at) < 0) {
			free(cnt);
			return -1;
		}
		for (j = 0; j < row; j++) {
			/* scatter_max: the first message of a row replaces the 0 */
			if (op == Oscatter_max && cnt[at] > 0)
				out[at * row + j] = nanmax(msg->data[k * row + j], out[at * row + j]);
			else if (op == Oscatter_max)
				out[at * row + j] = msg->data[k * row + j];
			else
				out[at * row + j] += msg->data[k * row + j];
		}
		if (cnt)
			cnt[at]++;
	}
	if (op == Oscatter_mean)
		for (k = 0; k < n; k++)
			for (j = 0; j < row; j++)
				out[k * row + j] /= cnt[k] > 1 ? cnt[k] : 1;
	free(cnt);
	return 0;
}

/* take: out[i] = x[i, idx[i]]; an index outside [0, C) is an error here
 * (generated code, which cannot stop, writes NaN there) */
static int
take(R *r, IValue *o)
{
	const ITensor *x = targ(r, 0), *idx = targ(r, 1);
	int64_t i, c = 0, C;

	if (!x || !idx || checkindexvec(r, idx) < 0)
		return -1;
	if (x->rank != 2 || idx->shape[0] != x->shape[0])
		return fail(r, "take: operands of ranks %d and %d do not fit x[N, C] and idx[N]", x->rank, idx->rank);
	C = x->shape[1];
	if (newtensor(r, &o->t, 1, x->shape) < 0)
		return -1;
	for (i = 0; i < x->shape[0]; i++) {
		if (getindex(r, idx->data[i], i, C, &c) < 0)
			return -1;
		o->t.data[i] = x->data[i * C + c];
	}
	return 0;
}

/* put: zeros but out[i, idx[i]] = g[i]; a row whose index is outside
 * [0, n) stays zero, as in generated code (no error: it is take's
 * adjoint, and take already refused such an index) */
static int
put(R *r, IValue *o)
{
	const ITensor *g = targ(r, 0), *idx = targ(r, 1);
	int64_t i, n, shape[2];
	double v;
	Dim d;
	char ds[100];

	if (!g || !idx || checkindexvec(r, idx) < 0)
		return -1;
	if (g->rank != 1 || idx->shape[0] != g->shape[0])
		return fail(r, "put: operands of ranks %d and %d do not fit g[N] and idx[N]", g->rank, idx->rank);
	if (!attrdim(r->ins, "n", &d))
		return fail(r, "put: missing attribute 'n'");
	if ((n = dimeval(r->m, d, r->symval)) < 0)
		return fail(r, "put: n = %s is not bound", rdimstr(r, ds, sizeof ds, d));
	shape[0] = g->shape[0];
	shape[1] = n;
	if (newtensor(r, &o->t, 2, shape) < 0)
		return -1;
	for (i = 0; i < g->shape[0]; i++) {
		v = idx->data[i];
		if (v >= 0 && v < (double)n)
			o->t.data[i * n + (int64_t)v] = g->data[i];
	}
	return 0;
}

/* Dense ------------------------------------------------------------------- */

/*
 * NumPy matmul.  A 1-d left operand is a row [1, K], a 1-d right operand
 * a column [K, 1]; the added unit dims are dropped from the result.  The
 * dims before the last two broadcast; batch strides count whole matrices
 * and are 0 along a broadcast dim.
 */
static int
matmul(R *r, IValue *o)
{
	const ITensor *a = targ(r, 0), *b = targ(r, 1);
	int64_t M, K, K2, N, x, y, ma = 1, mb = 1, ia = 0, ib = 0, nbatch, t, i, k, j;
	int64_t bs[MaxRank], sa[MaxRank], sb[MaxRank], idx[MaxRank] = {0}, shape[MaxRank + 2];
	int ra, rb, nba, nbb, nb, d, da, db, rank = 0;
	const double *pa, *pb;
	double *po, aik;
	char s1[200], s2[200];
	/* weights rounded to a 16-bit format (round, passes/precision.c):
	 * the other operand is rounded to it as it is read, so that the
	 * product is 16-bit by 16-bit (autocast's linear layer) */
	int bd = r->fn->val[r->ins->arg[1]].def, rd = bd >= 0 ? rounddtype(&r->fn->ins[bd]) : DNone;

	if (!a || !b)
		return -1;
	ra = a->rank, rb = b->rank;
	if (ra == 0 || rb == 0)
		return fail(r, "matmul: operands must have rank 1 or more");
	M = ra == 1 ? 1 : a->shape[ra - 2];
	K = a->shape[ra - 1];
	K2 = rb == 1 ? b->shape[0] : b->shape[rb - 2];
	N = rb == 1 ? 1 : b->shape[rb - 1];
	if (K != K2)
		return fail(r, "matmul: inner dimensions differ: %s @ %s",
		            shapestr(s1, sizeof s1, ra, a->shape), shapestr(s2, sizeof s2, rb, b->shape));
	nba = ra > 2 ? ra - 2 : 0;
	nbb = rb > 2 ? rb - 2 : 0;
	nb = nba > nbb ? nba : nbb;
	for (d = nb - 1; d >= 0; d--) {
		da = d - (nb - nba);
		db = d - (nb - nbb);
		x = da >= 0 ? a->shape[da] : 1;
		y = db >= 0 ? b->shape[db] : 1;
		if (x != y && x != 1 && y != 1)
			return fail(r, "matmul: batch dimensions of %s and %s cannot be broadcast",
			            shapestr(s1, sizeof s1, ra, a->shape), shapestr(s2, sizeof s2, rb, b->shape));
		bs[d] = x == 1 ? y : x;
		sa[d] = x == 1 ? 0 : ma;
		sb[d] = y == 1 ? 0 : mb;
		ma *= x;
		mb *= y;
	}
	for (d = 0; d < nb; d++)
		shape[rank++] = bs[d];
	if (ra > 1)
		shape[rank++] = M;
	if (rb > 1)
		shape[rank++] = N;
	if (newtensor(r, &o->t, rank, shape) < 0)
		return -1;
	nbatch = numel(nb, bs);
	for (t = 0; t < nbatch; t++) {
		pa = a->data + ia * M * K;
		pb = b->data + ib * K * N;
		po = o->t.data + t * M * N;
		/* i-k-j order: each out[i][j] still sums over k in order */
		for (i = 0; i < M; i++)
			for (k = 0; k < K; k++) {
				aik = rd != DNone ? round16(pa[i * K + k], rd) : pa[i * K + k];
				for (j = 0; j < N; j++)
					po[i * N + j] += aik * pb[k * N + j];
			}
		for (d = nb - 1; d >= 0; d--) {
			ia += sa[d];
			ib += sb[d];
			if (++idx[d] < bs[d])
				break;
			ia -= sa[d] * bs[d];
			ib -= sb[d] * bs[d];
			idx[d] = 0;
		}
	}
	return 0;
}

static int
transpose(R *r, IValue *o)
{
	const ITensor *x = targ(r, 0);
	const Attr *a = findattr(r->ins, "perm");
	int64_t st[MaxRank], ist[MaxRank], shape[MaxRank], idx[MaxRank] = {0}, n, i, off = 0;
	bool seen[MaxRank] = {0};
	int k, rank;

	if (!x)
		return -1;
	rank = x->rank;
	if (!a || a->kind != AInts || a->n != rank)
		return fail(r, "transpose: attribute 'perm' must list %d dims", rank);
	for (k = 0; k < rank; k++) {
		if (a->u.is[k] < 0 || a->u.is[k] >= rank || seen[a->u.is[k]])
			return fail(r, "transpose: 'perm' is not a permutation");
		seen[a->u.is[k]] = true;
	}
	for (k = rank - 1, n = 1; k >= 0; k--) {
		ist[k] = n;
		n *= x->shape[k];
	}
	for (k = 0; k < rank; k++) {
		shape[k] = x->shape[a->u.is[k]];
		st[k] = ist[a->u.is[k]];
	}
	if (newtensor(r, &o->t, rank, shape) < 0)
		return -1;
	n = numel(rank, shape);
	for (i = 0; i < n; i++) {
		o->t.data[i] = x->data[off];
		for (k = rank - 1; k >= 0; k--) {
			off += st[k];
			if (++idx[k] < shape[k])
				break;
			off -= st[k] * shape[k];
			idx[k] = 0;
		}
	}
	return 0;
}

static int
reshape(R *r, IValue *o)
{
	const ITensor *x = targ(r, 0);
	Dim d[MaxRank];
	int64_t shape[MaxRank];
	int k, rank;
	char s1[200], s2[200], ds[100];

	if (!x)
		return -1;
	if ((rank = attrdims(r->ins, "shape", d, MaxRank)) < 0)
		return fail(r, "reshape: missing or bad attribute 'shape'");
	for (k = 0; k < rank; k++)
		if ((shape[k] = dimeval(r->m, d[k], r->symval)) < 0)
			return fail(r, "reshape: %s is not bound", rdimstr(r, ds, sizeof ds, d[k]));
	if (checkednumel(r, rank, shape) != numel(x->rank, x->shape))
		return fail(r, "reshape: %s and %s have different element counts",
		            shapestr(s1, sizeof s1, x->rank, x->shape), shapestr(s2, sizeof s2, rank, shape));
	if (newtensor(r, &o->t, rank, shape) < 0)
		return -1;
	memcpy(o->t.data, x->data, numel(rank, shape) * sizeof(double));
	return 0;
}

static int
concat(R *r, IValue *o)
{
	const ITensor *x, *x0;
	int64_t outer, n, inner, shape[MaxRank], i, chunk, at;
	int k, j, d;
	char s1[200], s2[200];

	if (!(x0 = targ(r, 0)) || axisattr(r, x0->rank, &d) < 0)
		return -1;
	memcpy(shape, x0->shape, sizeof shape);
	shape[d] = 0;
	for (k = 0; k < r->ins->narg; k++) {
		if (!(x = targ(r, k)))
			return -1;
		for (j = 0; j < x0->rank; j++)
			if (x->rank != x0->rank || (j != d && x->shape[j] != x0->shape[j]))
				return fail(r, "concat: operand %d of shape %s does not fit operand 1 of shape %s along dim %d",
				            k + 1, shapestr(s1, sizeof s1, x->rank, x->shape),
				            shapestr(s2, sizeof s2, x0->rank, x0->shape), d);
		shape[d] += x->shape[d];
	}
	if (newtensor(r, &o->t, x0->rank, shape) < 0)
		return -1;
	splitaxis(&o->t, d, &outer, &n, &inner);
	for (i = 0, at = 0; i < outer; i++)
		for (k = 0; k < r->ins->narg; k++) {
			x = targ(r, k);
			chunk = x->shape[d] * inner;
			memcpy(o->t.data + at, x->data + i * chunk, chunk * sizeof(double));
			at += chunk;
		}
	return 0;
}

/* slice: dim d cut to [start, start + len) */
static int
slice(R *r, IValue *o)
{
	const ITensor *x = targ(r, 0);
	int64_t outer, n, inner, start, len, i, shape[MaxRank];
	Dim ds, dl;
	int d;
	char s1[200];

	if (!x || axisattr(r, x->rank, &d) < 0)
		return -1;
	if (!attrdim(r->ins, "start", &ds) || !attrdim(r->ins, "len", &dl))
		return fail(r, "slice: missing attribute 'start' or 'len'");
	start = dimeval(r->m, ds, r->symval);
	len = dimeval(r->m, dl, r->symval);
	if (start < 0 || len < 0 || start > x->shape[d] || len > x->shape[d] - start)
		return fail(r, "slice: [%lld, %lld + %lld) is not inside dim %d of shape %s", (long long)start,
		            (long long)start, (long long)len, d, shapestr(s1, sizeof s1, x->rank, x->shape));
	splitaxis(x, d, &outer, &n, &inner);
	memcpy(shape, x->shape, sizeof shape);
	shape[d] = len;
	if (newtensor(r, &o->t, x->rank, shape) < 0)
		return -1;
	for (i = 0; i < outer; i++)
		memcpy(o->t.data + i * len * inner, x->data + (i * n + start) * inner, len * inner * sizeof(double));
	return 0;
}

/*
 * dropout_train: element t (x's flat index) is kept, times 1 / (1 - p),
 * when runtime/philox.h's draw for (seed, step, stream, t) is at least
 * (float)p; else 0.  The generated code includes the same header, so the
 * two masks are the same bits.  key = (seed, step), exact integers below
 * 2^53 (an i64 above that is already rounded in a double).
 */
static int
dropout_train(R *r, IValue *o)
{
	const ITensor *x = targ(r, 0), *key = targ(r, 1);
	double p = attrfloat(r->ins, "p", 0), scale;
	int64_t stream = attrint(r->ins, "stream", 0), i, n;
	uint64_t seed, step;

	if (!x || !key)
		return -1;
	if (key->rank != 1 || key->shape[0] != 2)
		return fail(r, "dropout_train: the key must hold 2 values (seed, step)");
	if (!(p >= 0 && (float)p < 1) || stream < 0 || stream >= (int64_t)1 << 31)
		return fail(r, "dropout_train: p or stream out of range");
	/* as generated code's (uint64_t) of the int64; INT64_MAX rounds
	 * up to 2^63 in a double, which no int64_t holds */
	seed = key->data[0] >= 0x1p63 ? (uint64_t)key->data[0] : (uint64_t)(int64_t)key->data[0];
	step = key->data[1] >= 0x1p63 ? (uint64_t)key->data[1] : (uint64_t)(int64_t)key->data[1];
	scale = 1 / (1 - p);
	if (newtensor(r, &o->t, x->rank, x->shape) < 0)
		return -1;
	n = numel(x->rank, x->shape);
	for (i = 0; i < n; i++)
		o->t.data[i] = gnn_dropout_keep(seed, step, (uint32_t)stream, (uint64_t)i, (float)p) ? x->data[i] * scale : 0;
	return 0;
}

static int
cast(R *r, IValue *o)
{
	const ITensor *x = targ(r, 0);
	int dt = r->rty.dtype;
	int64_t i, n;
	double v, t;

	if (!x || newtensor(r, &o->t, x->rank, x->shape) < 0)
		return -1;
	n = numel(x->rank, x->shape);
	for (i = 0; i < n; i++) {
		v = x->data[i];
		if (dt == DBool) {
			o->t.data[i] = v != 0;  /* NaN is true, as in torch */
		} else if (dtypeisint(dt)) {
			t = trunc(v);
			if (isnan(v) || (dt == DI64 && !(t >= -0x1p63 && t < 0x1p63))
			 || (dt == DI32 && !(t >= -0x1p31 && t < 0x1p31)))
				return fail(r, "cast: %.17g at position %lld does not fit %s", v, (long long)i, dtypename(dt));
			o->t.data[i] = t + 0.0;  /* no -0 in an integer tensor */
		} else
			o->t.data[i] = v;
	}
	return 0;
}

/* Elementwise ------------------------------------------------------------- */

/* NumPy broadcast of the two operand shapes, and each operand's strides
 * seen through it (0 along a broadcast dim). */
static int
bshape(R *r, const ITensor *a, const ITensor *b, int *rank, int64_t *shape, int64_t *sa, int64_t *sb)
{
	int k, rk, ka, kb;
	int64_t x, y, na = 1, nb = 1;
	char s1[200], s2[200];

	rk = a->rank > b->rank ? a->rank : b->rank;
	for (k = rk - 1; k >= 0; k--) {
		ka = k - (rk - a->rank);
		kb = k - (rk - b->rank);
		x = ka >= 0 ? a->shape[ka] : 1;
		y = kb >= 0 ? b->shape[kb] : 1;
		if (x != y && x != 1 && y != 1)
			return fail(r, "%s: shapes %s and %s cannot be broadcast", opinfo[r->ins->op].name,
			            shapestr(s1, sizeof s1, a->rank, a->shape), shapestr(s2, sizeof s2, b->rank, b->shape));
		shape[k] = x == 1 ? y : x;
		sa[k] = x == 1 ? 0 : na;
		sb[k] = y == 1 ? 0 : nb;
		na *= x;
		nb *= y;
	}
	*rank = rk;
	return 0;
}

/* Integer division truncating toward zero, exactly for all int64 values. */
static double
idiv(double a, double b)
{
	if (fabs(a) < 0x1p63 && fabs(b) < 0x1p63 && b != -1)
		return (double)((int64_t)a / (int64_t)b) + 0.0;
	return trunc(a / b) + 0.0;
}

static int
binary(R *r, IValue *o)
{
	const ITensor *a = targ(r, 0), *b = targ(r, 1);
	int64_t shape[MaxRank], sa[MaxRank], sb[MaxRank], idx[MaxRank] = {0}, i, n, oa = 0, ob = 0;
	int rank = 0, k, op = r->ins->op;
	bool isint = dtypeisint(r->rty.dtype);
	double x, y, v;

	if (!a || !b || bshape(r, a, b, &rank, shape, sa, sb) < 0)
		return -1;
	if (newtensor(r, &o->t, rank, shape) < 0)
		return -1;
	n = numel(rank, shape);
	for (i = 0; i < n; i++) {
		x = a->data[oa];
		y = b->data[ob];
		switch (op) {
		case Oadd: v = x + y; break;
		case Osub: v = x - y; break;
		case Omul: v = x * y; break;
		case Odiv:
			if (!isint) {
				v = x / y;
				break;
			}
			if (y == 0)
				return fail(r, "div: integer division by zero at position %lld", (long long)i);
			v = idiv(x, y);
			break;
		case Opow:
			if (isint && y < 0)
				return fail(r, "pow: integer %.17g to the negative power %.17g at position %lld", x, y, (long long)i);
			v = pow(x, y);
			break;
		case Omaximum: v = nanmax(x, y); break;
		case Ominimum: v = nanmin(x, y); break;
		case Ogt: v = x > y; break;   /* NaN compares false: 0 */
		case Oeq: v = x == y; break;
		default: return fail(r, "malformed IR: %s is not binary", opinfo[op].name);
		}
		o->t.data[i] = isint ? v + 0.0 : v;
		for (k = rank - 1; k >= 0; k--) {
			oa += sa[k];
			ob += sb[k];
			if (++idx[k] < shape[k])
				break;
			oa -= sa[k] * shape[k];
			ob -= sb[k] * shape[k];
			idx[k] = 0;
		}
	}
	return 0;
}

static int
unary(R *r, IValue *o)
{
	const ITensor *x = targ(r, 0);
	int op = r->ins->op;
	double slope = attrfloat(r->ins, "slope", 0.01);  /* torch defaults */
	double alpha = attrfloat(r->ins, "alpha", 1.0);
	int64_t i, n;
	double v, *out;

	if (!x || newtensor(r, &o->t, x->rank, x->shape) < 0)
		return -1;
	n = numel(x->rank, x->shape);
	out = o->t.data;
	for (i = 0; i < n; i++) {
		v = x->data[i];
		switch (op) {
		case Oneg: v = -v; break;
		case Oabs: v = fabs(v); break;
		case Orelu: v = v > 0 || isnan(v) ? v : 0; break;
		case Oleaky_relu: v = v > 0 ? v : slope * v; break;
		case Oelu: v = v > 0 ? v : alpha * expm1(v); break;
		case Osigmoid: v = 1 / (1 + exp(-v)); break;
		case Otanh: v = tanh(v); break;
		case Oexp: v = exp(v); break;
		case Olog: v = log(v); break;
		case Osqrt: v = sqrt(v); break;
		case Orsqrt: v = 1 / sqrt(v); break;
		case Odropout: break;
		case Owiden: break;   /* a 16-bit value is a float already */
		default: return fail(r, "malformed IR: %s is not unary", opinfo[op].name);
		}
		out[i] = dtypeisint(r->rty.dtype) ? v + 0.0 : v;
	}
	return 0;
}

/* Reductions and normalizations over one dim ------------------------------ */

static int
reduce(R *r, IValue *o)
{
	const ITensor *x = targ(r, 0);
	int64_t outer, n, inner, i, j, k, shape[MaxRank];
	int d, rank, op = r->ins->op;
	bool keep = attrint(r->ins, "keepdim", 0) != 0;
	double acc, v;

	if (!x || axisattr(r, x->rank, &d) < 0)
		return -1;
	splitaxis(x, d, &outer, &n, &inner);
	if (op == Omax && n == 0 && outer * inner > 0)
		return fail(r, "max: reduction over the empty dim %d", d);
	memcpy(shape, x->shape, sizeof shape);
	rank = x->rank;
	if (keep)
		shape[d] = 1;
	else {
		memmove(shape + d, shape + d + 1, (rank - d - 1) * sizeof *shape);
		rank--;
	}
	if (newtensor(r, &o->t, rank, shape) < 0)
		return -1;
	for (i = 0; i < outer; i++)
		for (j = 0; j < inner; j++) {
			acc = op == Omax ? x->data[i * n * inner + j] : 0;
			for (k = 0; k < n; k++) {
				v = x->data[(i * n + k) * inner + j];
				acc = op == Omax ? nanmax(v, acc) : acc + v;
			}
			if (op == Omean)
				acc /= n;  /* 0/0: NaN over an empty dim, as torch */
			o->t.data[i * inner + j] = acc;
		}
	return 0;
}

static int
normalize(R *r, IValue *o)
{
	const ITensor *x = targ(r, 0);
	int64_t outer, n, inner, i, j, k, at;
	int d, op = r->ins->op;
	double eps = attrfloat(r->ins, "eps", 1e-12), mx, acc;
	const double *in;
	double *out;

	if (!x || axisattr(r, x->rank, &d) < 0 || newtensor(r, &o->t, x->rank, x->shape) < 0)
		return -1;
	splitaxis(x, d, &outer, &n, &inner);
	in = x->data;
	out = o->t.data;
	for (i = 0; i < outer; i++)
		for (j = 0; j < inner; j++) {
			at = i * n * inner + j;
			if (op == Ol2_normalize) {
				for (acc = 0, k = 0; k < n; k++)
					acc += in[at + k * inner] * in[at + k * inner];
				acc = sqrt(acc);
				acc = acc > eps ? acc : eps;  /* clamp_min(eps) */
				for (k = 0; k < n; k++)
					out[at + k * inner] = in[at + k * inner] / acc;
				continue;
			}
			for (mx = -INFINITY, k = 0; k < n; k++)
				mx = nanmax(in[at + k * inner], mx);
			for (acc = 0, k = 0; k < n; k++)
				acc += exp(in[at + k * inner] - mx);
			for (k = 0; k < n; k++)
				if (op == Osoftmax)
					out[at + k * inner] = exp(in[at + k * inner] - mx) / acc;
				else
					out[at + k * inner] = (in[at + k * inner] - mx) - log(acc);
		}
	return 0;
}

/* Leaves ------------------------------------------------------------------ */

static int
constop(R *r, IValue *o)
{
	double v = attrfloat(r->ins, "value", 0);
	int64_t i, n;

	if (newtensor(r, &o->t, r->rty.rank, r->want) < 0)
		return -1;
	n = numel(r->rty.rank, r->want);
	for (i = 0; i < n; i++)
		o->t.data[i] = v;
	return 0;
}

/* The callback hands t.data over (see interp.h): it becomes the result's
 * array, and is freed here if the tensor is refused. */
static int
param(R *r, IValue *o)
{
	const char *name = attrstr(r->ins, "name");
	ITensor t = {0};
	char s1[200], s2[200];
	int k;

	if (!name)
		return fail(r, "param: missing attribute 'name'");
	if (!r->run->param || !r->run->param(r->run->ud, name, &t))
		return fail(r, "missing parameter '%s'", name);
	o->t.data = t.data;  /* ours now, whatever follows */
	for (k = 0; k < t.rank && t.rank == r->rty.rank; k++)
		if (t.shape[k] != r->want[k])
			break;
	if (t.rank != r->rty.rank || k != t.rank)
		return fail(r, "parameter '%s': expected shape %s, got %s", name,
		            shapestr(s1, sizeof s1, r->rty.rank, r->want),
		            shapestr(s2, sizeof s2, t.rank < 0 || t.rank > MaxRank ? 0 : t.rank, t.shape));
	if (t.dtype != DNone && t.dtype != r->rty.dtype)
		return fail(r, "parameter '%s': expected dtype %s, got %s", name, dtypename(r->rty.dtype),
		            t.dtype > DNone && t.dtype < NDType ? dtypename(t.dtype) : "?");
	if (!t.data && numel(t.rank, t.shape) > 0)
		return fail(r, "parameter '%s' has no data", name);
	o->t = t;
	return 0;
}

/* Driver ------------------------------------------------------------------ */

static int
exec(R *r, IValue *o)
{
	switch (r->ins->op) {
	case Oconst: return constop(r, o);
	case Oparam: return param(r, o);
	case Oadd_self_loops: return add_self_loops(r, o);
	case Oremove_self_loops: return remove_self_loops(r, o);
	case Oadd_remaining_self_loops: return add_remaining_self_loops(r, o);
	case Osrc: case Odst: return endpoints(r, o);
	case Obatch: return batchvec(r, o);
	case Oin_degree: case Oout_degree: return degree(r, o);
	case Oedge_weight: return edge_weight(r, o);
	case Ogcn_norm: return gcn_norm(r, o);
	case Oedge_softmax: return edge_softmax(r, o);
	case Ogather: return gather(r, o);
	case Oscatter_sum: case Oscatter_mean: case Oscatter_max: return scatter(r, o);
	case Omatmul: return matmul(r, o);
	case Otranspose: return transpose(r, o);
	case Oreshape: return reshape(r, o);
	case Oconcat: return concat(r, o);
	case Oslice: return slice(r, o);
	case Otake: return take(r, o);
	case Oput: return put(r, o);
	case Odropout_train: return dropout_train(r, o);
	case Ocast: return cast(r, o);
	case Osum: case Omean: case Omax: return reduce(r, o);
	case Osoftmax: case Olog_softmax: case Ol2_normalize: return normalize(r, o);
	default:
		break;
	}
	if (opinfo[r->ins->op].flags & Fbin)
		return binary(r, o);
	if (opinfo[r->ins->op].flags & Felem)
		return unary(r, o);
	return fail(r, "malformed IR: no semantics for op %s", opinfo[r->ins->op].name);
}

/* Extents of a value as its type lists them: a graph's are (nodes, edges
 * [, graphs]). */
static int
extents(const IValue *v, int64_t *x)
{
	if (v->kind == TTensor) {
		memcpy(x, v->t.shape, v->t.rank * sizeof *x);
		return v->t.rank;
	}
	x[0] = v->g.nnode;
	x[1] = v->g.nedge;
	x[2] = v->g.ngraph;
	x[3] = v->g.nsrc;
	return 4;
}

/* Compare the computed result with the declared type; bind the derived
 * symbol of an Fdyn op from the size it computed. */
static int
checkresult(R *r, const IValue *o)
{
	Type t = r->rty;
	int64_t x[MaxRank + 3], v;
	int k, n, sym[4];
	char s1[200], s2[200], ts[200], ds[100];

	if (o->kind != t.kind)
		return fail(r, "internal: %s computed a %s, but its type is %s", opinfo[r->ins->op].name,
		            o->kind == TGraph ? "graph" : "tensor", rtypestr(r, ts, sizeof ts, t));
	n = extents(o, x);
	if (t.kind == TGraph)
		n = t.rank;
	else if (n != t.rank)
		goto mismatch;
	for (k = 0; k < n; k++) {
		if (r->want[k] >= 0)
			continue;
		if (unboundsyms(r, t.dim[k], sym, 4) != 1 || !dimbind(r->m, t.dim[k], x[k], r->symval))
			return fail(r, "%s: the computed size %lld does not fit %s",
			            opinfo[r->ins->op].name, (long long)x[k], rdimstr(r, ds, sizeof ds, t.dim[k]));
	}
	for (k = 0; k < n; k++) {
		v = dimeval(r->m, t.dim[k], r->symval);
		r->want[k] = v;
		if (v != x[k])
			goto mismatch;
	}
	return 0;
mismatch:
	return fail(r, "internal: %s computed %s %s, but its type %s is %s", opinfo[r->ins->op].name,
	            o->kind == TGraph ? "graph" : "shape", shapestr(s1, sizeof s1, n, x),
	            rtypestr(r, ts, sizeof ts, t), shapestr(s2, sizeof s2, t.rank, r->want));
}

static int
step(R *r, const Ins *ins)
{
	Fn *fn = r->fn;
	IValue out;
	unsigned fl;
	int k, n, sym[4], sdt;
	char vn[80], ts[200];

	r->ins = ins;
	if (ins->op <= Oxxx || ins->op >= NOp)
		return fail(r, "malformed IR: bad op %d", ins->op);
	fl = opinfo[ins->op].flags;
	n = ins->narg;
	if (n < opinfo[ins->op].minargs || (opinfo[ins->op].maxargs >= 0 && n > opinfo[ins->op].maxargs))
		return fail(r, "malformed IR: %s with %d operands", opinfo[ins->op].name, n);
	if (ins->to < 0 || ins->to >= fn->nval || r->slot[ins->to].live)
		return fail(r, "malformed IR: %s does not define a new value", opinfo[ins->op].name);
	for (k = 0; k < n; k++)
		if (ins->arg[k] < 0 || ins->arg[k] >= fn->nval || !r->slot[ins->arg[k]].live)
			return fail(r, "malformed IR: operand %s is not defined before its use",
			            valname(fn, ins->arg[k], vn, sizeof vn));
	r->rty = fn->val[ins->to].type;
	if (r->rty.rank > MaxRank || (r->rty.kind == TGraph && (r->rty.rank < 2 || r->rty.rank > 4)))
		return fail(r, "malformed IR: bad result type");
	for (k = 0; k < r->rty.rank; k++) {
		r->want[k] = dimeval(r->m, r->rty.dim[k], r->symval);
		if (r->want[k] >= 0 || (fl & Fdyn))
			continue;
		if (unboundsyms(r, r->rty.dim[k], sym, 4) == 0)
			return fail(r, "dim %d of the result type %s is negative", k, rtypestr(r, ts, sizeof ts, r->rty));
		return fail(r, "symbol %s in the result type %s is not bound by the inputs",
		            r->m->sym[sym[0]].name, rtypestr(r, ts, sizeof ts, r->rty));
	}
	/* graph -> graph ops make graphs, every other op a tensor */
	out = (IValue){.kind = ins->op == Oadd_self_loops || ins->op == Oremove_self_loops
	                       || ins->op == Oadd_remaining_self_loops ? TGraph : TTensor};
	if (exec(r, &out) < 0)
		goto fail;
	if (out.kind == TTensor)
		out.t.dtype = r->rty.dtype;  /* a parameter's may be DNone */
	/* a value stored in 16 bits (a pass's mark, or its type's dtype) or
	 * rounded to them (round):
	 * rounded once, where it is written */
	sdt = storedtype(ins);
	if (sdt == DNone)
		sdt = rounddtype(ins);   /* rounded, kept in float32 */
	if (sdt == DNone && (r->rty.dtype == DBF16 || r->rty.dtype == DF16))
		sdt = r->rty.dtype;
	if (out.kind == TTensor && sdt != DNone) {
		int64_t e, ne = numel(out.t.rank, out.t.shape);
		for (e = 0; e < ne; e++)
			out.t.data[e] = round16(out.t.data[e], sdt);
	}
	if (checkresult(r, &out) < 0)
		goto fail;
	r->slot[ins->to] = (Slot){.v = out, .live = true, .owned = true};
	for (k = 0; k < n; k++)
		if (--r->left[ins->arg[k]] == 0 && !r->isret[ins->arg[k]])
			drop(r, ins->arg[k]);
	if (r->left[ins->to] == 0 && !r->isret[ins->to])
		drop(r, ins->to);
	return 0;
fail:
	ivaluefree(&out);
	return -1;
}

/* Inputs ------------------------------------------------------------------ */

static const char *const graphdim[] = {"node count", "edge count", "graph count", "source node count"};

static int
checkgraph(R *r, int a, IGraph *g, Type t)
{
	char an[80];
	int64_t e, i, nsrc = isrelation(t) ? g->nsrc : g->nnode;

	argname(r, a, an, sizeof an);
	if (g->nnode < 0 || g->nedge < 0 || nsrc < 0)
		return fail(r, "%s: negative node or edge count", an);
	if (!isrelation(t))
		g->nsrc = g->nnode;
	if (g->nedge > 0 && (!g->src || !g->dst))
		return fail(r, "%s: no edge arrays", an);
	if (!g->batch) {
		if (g->ngraph > 1)
			return fail(r, "%s: ngraph is %lld but there is no batch vector", an, (long long)g->ngraph);
		g->ngraph = 1;  /* zero-initialized means one graph */
	}
	for (e = 0; e < g->nedge; e++) {
		if (g->src[e] < 0 || g->src[e] >= nsrc)
			return fail(r, "%s: edge %lld: src %lld out of range [0, %lld)", an,
			            (long long)e, (long long)g->src[e], (long long)nsrc);
		if (g->dst[e] < 0 || g->dst[e] >= g->nnode)
			return fail(r, "%s: edge %lld: dst %lld out of range [0, %lld)", an,
			            (long long)e, (long long)g->dst[e], (long long)g->nnode);
	}
	if (g->batch)
		for (i = 0; i < g->nnode; i++)
			if (g->batch[i] < 0 || g->batch[i] >= g->ngraph)
				return fail(r, "%s: batch[%lld] = %lld out of range [0, %lld)", an,
				            (long long)i, (long long)g->batch[i], (long long)g->ngraph);
	return 0;
}

static int
checkinput(R *r, int a)
{
	Ref v = r->fn->arg[a];
	Type t = r->fn->val[v].type;
	IValue iv = r->run->args[a];
	char an[80], ts[200], s[200];
	int k;

	argname(r, a, an, sizeof an);
	rtypestr(r, ts, sizeof ts, t);
	if (iv.kind != t.kind)
		return fail(r, "%s: expected %s, got a %s", an, ts, iv.kind == TGraph ? "graph" : "tensor");
	if (t.kind == TGraph) {
		if (checkgraph(r, a, &iv.g, t) < 0)
			return -1;
	} else {
		if (iv.t.rank != t.rank)
			return fail(r, "%s: expected %s, got rank %d", an, ts, iv.t.rank);
		for (k = 0; k < t.rank; k++)
			if (iv.t.shape[k] < 0)
				return fail(r, "%s: negative extent in shape %s", an, shapestr(s, sizeof s, t.rank, iv.t.shape));
		if (iv.t.dtype != DNone && iv.t.dtype != t.dtype)
			return fail(r, "%s: expected %s, got dtype %s", an, ts,
			            iv.t.dtype > DNone && iv.t.dtype < NDType ? dtypename(iv.t.dtype) : "?");
		if (!iv.t.data && numel(t.rank, iv.t.shape) > 0)
			return fail(r, "%s: no data", an);
		/* a 16-bit input holds 16-bit values (whoever converted it
		 * rounded them: gnnrun does) */
		if (t.dtype == DBF16 || t.dtype == DF16) {
			int64_t e, ne = numel(t.rank, iv.t.shape);
			for (e = 0; e < ne; e++)
				if (iv.t.data[e] == iv.t.data[e] && round16(iv.t.data[e], t.dtype) != iv.t.data[e])
					return fail(r, "%s: element %lld, %.17g, is not a %s value", an, (long long)e,
					            iv.t.data[e], dtypename(t.dtype));
		}
		iv.t.dtype = t.dtype;
	}
	r->slot[v] = (Slot){.v = iv, .live = true, .owned = false};
	return 0;
}

static const char *
dimlabel(Type t, int k, char *buf, size_t n)
{
	if (t.kind == TGraph)
		snprintf(buf, n, "%s", graphdim[k]);
	else
		snprintf(buf, n, "dim %d", k);
	return buf;
}

/*
 * Bind every symbol in the input types from the actual extents, checking
 * the extents that are already determined.  A dim such as N*M can only
 * bind once all but one of its symbols are known, so this repeats until
 * nothing changes; inputs are taken in order, so the message for a
 * conflict names the later input and where the value came from.
 */
static int
bindinputs(R *r)
{
	const Fn *fn = r->fn;
	bool *done, progress, pending;
	int a, k, nu, sym[4];
	int64_t x[MaxRank + 3], v;
	Type t;
	char an[80], dl[40], ds[100], og[200];

	for (a = 0; a < fn->narg; a++)
		if (checkinput(r, a) < 0)
			return -1;
	if (!(done = xalloc(r, (int64_t)fn->narg * (MaxRank + 3), sizeof *done)))
		return -1;
	do {
		progress = pending = false;
		for (a = 0; a < fn->narg; a++) {
			t = fn->val[fn->arg[a]].type;
			extents(&r->slot[fn->arg[a]].v, x);
			argname(r, a, an, sizeof an);
			for (k = 0; k < t.rank; k++) {
				if (done[a * (MaxRank + 3) + k])
					continue;
				dimlabel(t, k, dl, sizeof dl);
				rdimstr(r, ds, sizeof ds, t.dim[k]);
				v = dimeval(r->m, t.dim[k], r->symval);
				nu = unboundsyms(r, t.dim[k], sym, 4);
				if (nu > 1) {
					pending = true;
					continue;
				}
				if (v < 0 && nu == 0) {
					free(done);
					return fail(r, "%s: %s is %lld but %s is negative%s", an, dl, (long long)x[k], ds,
					            origin(r, t.dim[k], og, sizeof og));
				}
				if (v >= 0 && v != x[k]) {
					free(done);
					if (dimisconst(t.dim[k]))
						return fail(r, "%s: %s is %lld, expected %s", an, dl, (long long)x[k], ds);
					return fail(r, "%s: %s is %lld but %s = %lld%s", an, dl, (long long)x[k], ds,
					            (long long)v, origin(r, t.dim[k], og, sizeof og));
				}
				if (v < 0) {
					if (!dimbind(r->m, t.dim[k], x[k], r->symval)) {
						free(done);
						return fail(r, "%s: %s is %lld, which no value of %s makes equal to %s%s",
						            an, dl, (long long)x[k], r->m->sym[sym[0]].name, ds,
						            origin(r, t.dim[k], og, sizeof og));
					}
					r->symfrom[sym[0]] = a;
					progress = true;
				}
				done[a * (MaxRank + 3) + k] = true;
			}
		}
	} while (progress && pending);
	for (a = 0; pending && a < fn->narg; a++) {
		t = fn->val[fn->arg[a]].type;
		for (k = 0; k < t.rank; k++)
			if (!done[a * (MaxRank + 3) + k]) {
				free(done);
				return fail(r, "%s: %s (%s) cannot be bound: no other input fixes its symbols",
				            argname(r, a, an, sizeof an), dimlabel(t, k, dl, sizeof dl),
				            rdimstr(r, ds, sizeof ds, t.dim[k]));
			}
	}
	free(done);
	return 0;
}

/* Entry ------------------------------------------------------------------- */

static int
runfn(R *r)
{
	Fn *fn = r->fn;
	IRun *run = r->run;
	Ref v;
	int i, j, k;
	char vn[80];

	for (i = 0; i < fn->nins; i++)
		for (k = 0; k < fn->ins[i].narg; k++)
			if (fn->ins[i].arg[k] >= 0 && fn->ins[i].arg[k] < fn->nval)
				r->left[fn->ins[i].arg[k]]++;
	for (j = 0; j < fn->nret; j++) {
		if (fn->ret[j] < 0 || fn->ret[j] >= fn->nval)
			return fail(r, "malformed IR: bad return value %d", fn->ret[j]);
		r->isret[fn->ret[j]] = true;
	}
	if (bindinputs(r) < 0)
		return -1;
	if (run->checkonly)
		return 0;
	for (i = 0; i < fn->narg; i++)
		if (r->left[fn->arg[i]] == 0 && !r->isret[fn->arg[i]])
			drop(r, fn->arg[i]);
	for (i = 0; i < fn->nins; i++)
		if (step(r, &fn->ins[i]) < 0)
			return -1;
	r->ins = NULL;
	if (!(run->outs = xalloc(r, fn->nret, sizeof *run->outs)))
		return -1;
	for (j = 0; j < fn->nret; j++) {
		v = fn->ret[j];
		if (!r->slot[v].live)
			return fail(r, "malformed IR: returned value %s is never defined", valname(fn, v, vn, sizeof vn));
		for (k = j + 1; k < fn->nret && fn->ret[k] != v; k++)
			;
		/* move an owned result at its last return, copy otherwise */
		if (r->slot[v].owned && k == fn->nret) {
			run->outs[j] = r->slot[v].v;
			r->slot[v].live = r->slot[v].owned = false;
		} else if (copyvalue(r, &run->outs[j], &r->slot[v].v) < 0)
			return -1;
	}
	return 0;
}

int
interp(IRun *run)
{
	Fn *fn = run->fn;
	Mod *m = fn->mod;
	R r = {.run = run, .fn = fn, .m = m};
	int rc = -1, i, j;

	run->err[0] = 0;
	run->outs = NULL;
	if (!(r.symval = xalloc(&r, m->nsym, sizeof *r.symval))
	 || !(r.symfrom = xalloc(&r, m->nsym, sizeof *r.symfrom))
	 || !(r.slot = xalloc(&r, fn->nval, sizeof *r.slot))
	 || !(r.left = xalloc(&r, fn->nval, sizeof *r.left))
	 || !(r.isret = xalloc(&r, fn->nval, sizeof *r.isret)))
		goto out;
	for (i = 0; i < m->nsym; i++)
		r.symval[i] = r.symfrom[i] = -1;
	rc = runfn(&r);
out:
	if (rc < 0 && run->outs) {
		/* outs[] is zeroed past the last one filled: freeing is safe */
		for (j = 0; j < fn->nret; j++)
			ivaluefree(&run->outs[j]);
		free(run->outs);
		run->outs = NULL;
	}
	if (r.slot)
		for (i = 0; i < fn->nval; i++)
			drop(&r, i);
	free(r.symval);
	free(r.symfrom);
	free(r.slot);
	free(r.left);
	free(r.isret);
	return rc;
}
