/*
 * Fused row kernels: one task per target node r, computing every
 * instruction of a fusion group (passes/fuse.c) for that row.
 *
 * Node rows made in the group live in local arrays of their (constant)
 * width; rows made elsewhere are read in place (x + r * width).  Edge
 * values are never stored: a scatter walks the edges into r along its
 * segment plan (the graph's CSR, in a fixed order) and computes the edge
 * values it needs for each edge as it goes -- the gathered rows are read
 * straight from their tables.  edge_softmax first walks the segment to
 * get each column's maximum and sum, as PyG's softmax does, so the
 * weights equal exp(s - max) / (sum + 1e-16) exactly.  Rows that other
 * kernels read, or that the model returns, are written out at the end.
 *
 * With lanes, edge values are computed element by element where they
 * are read: each into a named local (the value's IR name and a number),
 * made once per element and edge however often it is read, so a chain of
 * edge values is as long in C as it is in the IR.
 *
 * The arithmetic of every op is kernels.c's (elembody, reducebody,
 * scatterstep, ...); this file only walks rows, segments and lanes.
 * Every shape inside a row is constant, so loops have constant bounds
 * and the compiler can unroll and vectorize them.
 */
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

#include "emit.h"

/* an edge value computed into a local for one element (lanes) */
typedef struct Tmp {
	Ref v;
	const char *idx, *name;
} Tmp;

typedef struct R {
	E *e;
	Fn *fn;
	Args *a;                 /* the kernel's parameters and names */
	int a0, b;               /* the group's instructions: [a0, b) */
	unsigned char *kind;     /* RowNode/RowEdge/... per value */
	Ref *egraph;
	bool *ingroup;           /* per value: made by the group */
	const char **ext;        /* per value: the parameter it is read from */
	bool *done;              /* per value: computed in the current scope */
	char *esdone;            /* per value: edge_softmax stats emitted */
	int L;                   /* lanes per row (the schedule's) */
	bool lane;               /* L > 1: lanes share the row */
	Tmp *tmp;                /* lanes: the edge values of this element */
	int ntmp, captmp, tmpno;
} R;

static const Ins *
defins(R *r, Ref v)
{
	int d = r->fn->val[v].def;

	return d >= 0 ? &r->fn->ins[d] : NULL;
}

static bool
isalias(const Ins *in)
{
	return in && (opinfo[in->op].flags & Falias);
}

/* width of a row: the product of the dims after the first */
static int64_t
width(R *r, Ref v)
{
	Type t = ty(r->e, v);
	int64_t w = 1;
	int k;

	for (k = 1; k < t.rank; k++)
		w *= dimconstval(t.dim[k]);
	return w;
}

/* the value whose data v is (through reshape and dropout) */
static Ref
base(R *r, Ref v)
{
	const Ins *d;

	while ((d = defins(r, v)) && isalias(d) && r->ingroup[v])
		v = d->arg[0];
	return v;
}

/* the names of a value the group makes: its row, edge_softmax's column
 * maxima and sums, and the shared array behind one of them */
static const char *
rowname(R *r, Ref v)
{
	return lname(r->e, r->a, "%s", valname(r->e, v));
}

static const char *
statname(R *r, Ref v, const char *what)
{
	return lname(r->e, r->a, "%s_%s_", valname(r->e, v), what);
}

static const char *
segname(R *r, int i)
{
	return lname(r->e, r->a, "seg%d_", i);
}

static const char *access(R *r, Ref v, const char *idx);

/*
 * The offset into operand op of the element at coordinates coord[k]
 * (k >= 1) of a result of type t, under NumPy broadcasting: row values
 * align their trailing dims with the result's; uniform values align
 * from the right and never use the row dim.
 */
static const char *
opoffset(R *r, const Type *t, Ref op, const char *const *coord)
{
	Type ot = ty(r->e, op);
	bool row = r->kind[op] == RowNode || r->kind[op] == RowEdge || r->ingroup[op];
	int64_t os = 1;
	Str b = {0};
	const char *s;
	int k;

	sput(&b, "0");
	for (k = t->rank - 1; k >= 1; k--) {
		int ko = row ? k : k - (t->rank - ot.rank);
		if (ko < (row ? 1 : 0) || (!row && ot.rank == t->rank && ko == 0))
			break;
		if (!(ot.dim[ko] == 1 && t->dim[k] != 1))
			sput(&b, " + %s * %lld", coord[k], (long long)os);
		os *= dimconstval(ot.dim[ko]);
	}
	s = pf(r->e, "%s", sstr(&b));
	sfree(&b);
	return s;
}

/* opoffset, but idx itself where op's rows have t's shape: one element
 * reached along two paths has one spelling, so access() finds its local */
static const char *
sameoffset(R *r, const Type *t, Ref op, const char *idx, const char *const *coord)
{
	Type ot = ty(r->e, op);
	bool row = r->kind[op] == RowNode || r->kind[op] == RowEdge || r->ingroup[op];
	int k;

	if (row && ot.rank == t->rank) {
		for (k = 1; k < t->rank && ot.dim[k] == t->dim[k]; k++)
			;
		if (k == t->rank)
			return idx;
	}
	return opoffset(r, t, op, coord);
}

/* coord[k] (k >= 1): coordinate k of the flat row-local index idx of t */
static void
coordsof(R *r, const Type *t, const char *idx, const char **coord)
{
	int64_t st = 1;
	int k;

	for (k = t->rank - 1; k >= 1; k--) {
		/* a 0-wide dim has no elements: any divisor but 0 will do */
		coord[k] = pf(r->e, "((%s) / %lld %% %lld)", idx, (long long)(st ? st : 1), (long long)(dimconstval(t->dim[k]) ? dimconstval(t->dim[k]) : 1));
		st *= dimconstval(t->dim[k]);
	}
}

/* the element of v at idx, as it is computed (access() binds it) */
static const char *
compute(R *r, Ref v, const char *idx)
{
	const Ins *d = defins(r, v);

	if (r->ingroup[v] && d && d->op == Ogather) {
		const Ins *ix = defins(r, d->arg[1]);
		if (ix->op == Osrc)   /* another node's row, made by an earlier kernel */
			return pf(r->e, "%s[(int64_t)%s[e_] * %lld + (%s)]", r->ext[base(r, d->arg[0])], r->ext[d->arg[1]],
			          (long long)width(r, d->arg[0]), idx);
		return access(r, d->arg[0], idx);   /* by dst: the target's own row */
	}
	if (r->ingroup[v] && d && d->op == Oedge_softmax && !r->lane)
		return pf(r->e, "%s[%s]", rowname(r, v), idx);   /* neededge made it */
	if (r->ingroup[v] && d && d->op == Oedge_softmax)
		return esweight(r->e, ty(r->e, v).dtype, access(r, d->arg[1], idx), pf(r->e, "%s[%s]", statname(r, v, "max"), idx),
		                pf(r->e, "%s[%s]", statname(r, v, "sum"), idx));
	if (r->ingroup[v] && r->lane && r->kind[v] == RowEdge) {
		/* lanes: an elementwise edge value, from its operands' elements */
		Type t = ty(r->e, v);
		const char *coord[MaxRank], *x, *y = NULL;
		coordsof(r, &t, idx, coord);
		x = access(r, d->arg[0], sameoffset(r, &t, d->arg[0], idx, coord));
		if (d->narg == 2)
			y = access(r, d->arg[1], sameoffset(r, &t, d->arg[1], idx, coord));
		return elemexpr(r->e, d, x, y);
	}
	if (r->ingroup[v])
		return pf(r->e, "%s[%s]", rowname(r, v), idx);
	switch (r->kind[v]) {
	case RowNode:
		return pf(r->e, "%s[r_ * %lld + (%s)]", r->ext[v], (long long)width(r, v), idx);
	case RowUniform:
		return pf(r->e, "%s[%s]", r->ext[v], idx);
	default:   /* a bind-time edge array of this segment's graph */
		return pf(r->e, "%s[e_ * %lld + (%s)]", r->ext[v], (long long)width(r, v), idx);
	}
}

/*
 * The element of value v at flat row-local index idx (a C expression),
 * in the current scope: row r_, and inside a segment loop edge e_.  With
 * lanes, an edge value the group makes is computed into a local the
 * first time the scope reads that element, and read from it after.
 */
static const char *
access(R *r, Ref v, const char *idx)
{
	const char *x, *name;
	int k;

	v = base(r, v);
	if (!(r->lane && r->ingroup[v] && r->kind[v] == RowEdge))
		return compute(r, v, idx);
	for (k = 0; k < r->ntmp; k++)
		if (r->tmp[k].v == v && !strcmp(r->tmp[k].idx, idx))
			return r->tmp[k].name;
	x = compute(r, v, idx);
	name = lname(r->e, r->a, "%s_%d_", valname(r->e, v), r->tmpno++);
	out(r->e, "const %s %s = %s;\n", ctype(ty(r->e, v).dtype), name, x);
	if (r->ntmp == r->captmp) {
		r->captmp = r->captmp ? 2 * r->captmp : 16;
		r->tmp = erealloc(r->tmp, r->captmp * sizeof *r->tmp);
	}
	r->tmp[r->ntmp++] = (Tmp){v, pf(r->e, "%s", idx), name};
	return name;
}

/* the end of the block the element's locals were made in */
static void
tmpreset(R *r)
{
	r->ntmp = 0;
}

/*
 * A loop over the elements of a row of type t with the flat index j_ and
 * the coordinates c1_, c2_, ..., and for each operand its offset
 * (opoffset).  One thread: nested loops over the trailing dims; lanes:
 * lane l takes the elements l, l + L, ...
 */
static void
loopsopen(R *r, const Type *t, int nops, const Ref *ops, const char **offs)
{
	const char *coord[MaxRank];
	int64_t rs = 1, w = 1;
	int k, j;

	for (k = 1; k < t->rank; k++) {
		coord[k] = pf(r->e, "c%d_", k);
		w *= dimconstval(t->dim[k]);
	}
	if (r->lane) {
		wopen(r->e->w, "for (int64_t j_ = lane_; j_ < %lld; j_ += %d)", (long long)w, r->L);
		for (k = t->rank - 1; k >= 1; k--) {
			out(r->e, "const int64_t c%d_ = j_ / %lld %% %lld;\n(void)c%d_;\n", k, (long long)(rs ? rs : 1),
			    (long long)(dimconstval(t->dim[k]) ? dimconstval(t->dim[k]) : 1), k);
			rs *= dimconstval(t->dim[k]);
		}
	} else {
		for (k = 1; k < t->rank; k++)
			out(r->e, "for (int64_t c%d_ = 0; c%d_ < %d; c%d_++)\n", k, k, t->dim[k], k);
		blockopen(r->e->w);
		out(r->e, "int64_t j_ = 0");
		for (k = t->rank - 1; k >= 1; k--) {
			out(r->e, " + c%d_ * %lld", k, (long long)rs);
			rs *= dimconstval(t->dim[k]);
		}
		out(r->e, ";\n");
	}
	for (j = 0; j < nops; j++)
		offs[j] = opoffset(r, t, ops[j], coord);
}

/*
 * With lanes, every node value is one phase: each lane computes its
 * share, then the lanes meet (__syncwarp) before anyone reads the row.
 * On the cpu the lanes run one after another, which is the same thing.
 */
static void
phaseopen(R *r)
{
	if (!r->lane)
		return;
	if (r->e->cuda)
		wopen(r->e->w, "if (live_)");
	else
		wopen(r->e->w, "for (int lane_ = 0; lane_ < %d; lane_++)", r->L);
}

static void
phaseclose(R *r)
{
	if (!r->lane)
		return;
	wclose(r->e->w, "");
	if (r->e->cuda)
		out(r->e, "__syncwarp();\n");
}

/* the local array of a node row (with lanes, declared with the kernel) */
static void
declrow(R *r, Ref v)
{
	if (!r->lane)
		out(r->e, "%s %s[%lld];\n", ctype(ty(r->e, v).dtype), rowname(r, v), (long long)width(r, v));
}

/* emit the local array of value v, computed by instruction in */
static void emitvalue(R *r, const Ins *in);

/* Make sure edge value v (and what it depends on) is computed in the
 * current segment loop. */
static void
neededge(R *r, Ref v)
{
	const Ins *in;
	int k;

	v = base(r, v);
	if (!r->ingroup[v] || r->done[v])
		return;
	in = defins(r, v);
	for (k = 0; k < in->narg; k++)
		if (r->ingroup[in->arg[k]])
			neededge(r, in->arg[k]);
	if (in->op == Oedge_softmax && !r->lane) {
		/* the weights once per edge and column, before the messages
		 * that broadcast them (GAT: one per head, not per feature) */
		int64_t w = width(r, v);
		declrow(r, v);
		wopen(r->e->w, "for (int64_t j_ = 0; j_ < %lld; j_++)", (long long)w);
		out(r->e, "%s[j_] = %s;\n", rowname(r, v),
		    esweight(r->e, ty(r->e, v).dtype, access(r, in->arg[1], "j_"), pf(r->e, "%s[j_]", statname(r, v, "max")),
		             pf(r->e, "%s[j_]", statname(r, v, "sum"))));
		wclose(r->e->w, "");
		r->done[v] = true;
		return;
	}
	if (in->op == Oedge_softmax || in->op == Ogather || r->lane) {
		r->done[v] = true;   /* read through access() */
		return;
	}
	emitvalue(r, in);
	r->done[v] = true;
}

static void
resetedges(R *r)
{
	int i;

	for (i = r->a0; i < r->b; i++)
		if (r->kind[r->fn->ins[i].to] == RowEdge)
			r->done[r->fn->ins[i].to] = false;
	tmpreset(r);
}

/* How many edges ahead the cpu prefetches the rows that gathers by
 * src(g) read: a row is another node's, anywhere in a table that
 * outgrows the caches on large graphs, and the index leading to it is
 * itself a load, so neither the hardware prefetchers nor out-of-order
 * execution (whose window a 128-wide row's work fills) get far ahead. */
enum { PrefetchEdges = 8 };

/* the edges of segment row r_ under plan i (rowptr, then order) */
static void
segopen(R *r, int i)
{
	const char *s = segname(r, i);
	int j;

	wopen(r->e->w, "for (int64_t k_ = %s[r_]; k_ < %s[r_ + 1]; k_++)", s, s);
	out(r->e, "const int64_t e_ = %s[T_ + 1 + k_];\n", s);
	if (!r->e->cuda && !r->lane) {
		bool any = false;
		for (j = r->a0; j < r->b; j++) {
			const Ins *in = &r->fn->ins[j], *ix;
			if (in->op != Ogather || !r->ingroup[in->to] || !(ix = defins(r, in->arg[1])) || ix->op != Osrc)
				continue;
			if (!any) {
				wopen(r->e->w, "if (k_ + %d < %s[T_])", PrefetchEdges, s);
				out(r->e, "const int64_t ep_ = %s[T_ + 1 + k_ + %d];\n", s, PrefetchEdges);
				/* and the index that leads to a row twice as far ahead */
				out(r->e, "if (k_ + %d < %s[T_])\n\t__builtin_prefetch(&%s[%s[T_ + 1 + k_ + %d]]);\n",
				    2 * PrefetchEdges, s, r->ext[in->arg[1]], s, 2 * PrefetchEdges);
				any = true;
			}
			out(r->e, "for (int64_t o_ = 0; o_ < %lld; o_ += 16)\n\t__builtin_prefetch(&%s[(int64_t)%s[ep_] * %lld + o_]);\n",
			    (long long)width(r, in->arg[0]), r->ext[base(r, in->arg[0])], r->ext[in->arg[1]],
			    (long long)width(r, in->arg[0]));
		}
		if (any)
			wclose(r->e->w, "");
	}
	resetedges(r);
}

static void
segclose(R *r)
{
	wclose(r->e->w, "");
	resetedges(r);
}

/* the stats of every edge_softmax that v depends on, before its loop */
static void
needstats(R *r, Ref v)
{
	const Ins *in;
	int k, i, dt;
	int64_t w;
	const char *T, *mx, *sm, *first, *s;

	v = base(r, v);
	/* each value is walked once: a chain that reuses its values would
	 * otherwise be walked once per path, exponentially many */
	if (!r->ingroup[v] || r->esdone[v])
		return;
	r->esdone[v] = 1;
	in = defins(r, v);
	for (k = 0; k < in->narg; k++)
		needstats(r, in->arg[k]);
	if (in->op != Oedge_softmax)
		return;
	i = r->fn->val[v].def;
	first = pf(r->e, "k_ == %s[r_]", segname(r, i));
	w = width(r, v);
	dt = ty(r->e, v).dtype;
	T = ctype(dt);
	mx = statname(r, v, "max");
	sm = statname(r, v, "sum");
	if (r->lane) {
		/* lane l: the columns l, l + L, ...; two walks per column */
		phaseopen(r);
		wopen(r->e->w, "for (int64_t j_ = lane_; j_ < %lld; j_ += %d)", (long long)w, r->L);
		out(r->e, "%s mx_ = 0, sm_ = 0;\n", T);
		segopen(r, i);
		out(r->e, "const %s s_ = %s;\n", T, access(r, in->arg[1], "j_"));
		esmaxstep(r->e, first, "s_", "mx_");
		segclose(r);
		segopen(r, i);
		essumstep(r->e, dt, access(r, in->arg[1], "j_"), "mx_", "sm_");
		segclose(r);
		out(r->e, "%s[j_] = mx_;\n%s[j_] = sm_;\n", mx, sm);
		wclose(r->e->w, "");
		phaseclose(r);
		return;
	}
	out(r->e, "%s %s[%lld], %s[%lld];\n", T, mx, (long long)w, sm, (long long)w);
	out(r->e, "for (int64_t j_ = 0; j_ < %lld; j_++)\n\t%s[j_] = %s[j_] = 0;\n", (long long)w, mx, sm);
	segopen(r, i);
	neededge(r, in->arg[1]);
	s = access(r, in->arg[1], "j_");
	wopen(r->e->w, "for (int64_t j_ = 0; j_ < %lld; j_++)", (long long)w);
	out(r->e, "const %s s_ = %s;\n", T, s);
	esmaxstep(r->e, first, "s_", pf(r->e, "%s[j_]", mx));
	wclose(r->e->w, "");
	segclose(r);
	segopen(r, i);
	neededge(r, in->arg[1]);
	s = access(r, in->arg[1], "j_");
	out(r->e, "for (int64_t j_ = 0; j_ < %lld; j_++)\n", (long long)w);
	r->e->w->ind++;
	essumstep(r->e, dt, s, pf(r->e, "%s[j_]", mx), pf(r->e, "%s[j_]", sm));
	r->e->w->ind--;
	segclose(r);
}

static void
emitscatter(R *r, const Ins *in)
{
	Ref v = in->to, m = in->arg[0];
	int i = r->fn->val[v].def;
	int64_t w = width(r, v), J;
	const char *T = ctype(ty(r->e, v).dtype), *V = rowname(r, v), *seg = segname(r, i);
	const char *first = pf(r->e, "k_ == %s[r_]", seg);

	needstats(r, m);
	if (r->lane) {
		/* lane l accumulates columns l, l + L, ... in registers while
		 * walking the edges once: loads of a message row coalesce */
		J = (w + r->L - 1) / r->L;
		phaseopen(r);
		out(r->e, "%s acc_[%lld];\nfor (int jj_ = 0; jj_ < %lld; jj_++)\n\tacc_[jj_] = 0;\n", T, (long long)(J ? J : 1), (long long)J);
		segopen(r, i);
		wopen(r->e->w, "for (int jj_ = 0; jj_ < %lld; jj_++)", (long long)J);
		out(r->e, "const int64_t j_ = lane_ + (int64_t)jj_ * %d;\n\nif (j_ >= %lld)\n\tbreak;\n", r->L, (long long)w);
		out(r->e, "const %s x_ = %s;\n", T, access(r, m, "j_"));
		scatterstep(r->e, in, first, "x_", "acc_[jj_]");
		wclose(r->e->w, "");
		segclose(r);
		wopen(r->e->w, "for (int jj_ = 0; jj_ < %lld; jj_++)", (long long)J);
		out(r->e, "const int64_t j_ = lane_ + (int64_t)jj_ * %d;\n\nif (j_ < %lld)\n\t%s[j_] = acc_[jj_];\n", r->L, (long long)w, V);
		wclose(r->e->w, "");
	} else {
		const char *s;
		declrow(r, v);
		out(r->e, "for (int64_t j_ = 0; j_ < %lld; j_++)\n\t%s[j_] = 0;\n", (long long)w, V);
		segopen(r, i);
		neededge(r, m);
		s = access(r, m, "j_");
		wopen(r->e->w, "for (int64_t j_ = 0; j_ < %lld; j_++)", (long long)w);
		out(r->e, "const %s x_ = %s;\n", T, s);
		scatterstep(r->e, in, first, "x_", pf(r->e, "%s[j_]", V));
		wclose(r->e->w, "");
		segclose(r);
	}
	if (in->op == Oscatter_mean) {
		wopen(r->e->w, "for (int64_t j_ = %s; j_ < %lld; j_ += %d)", r->lane ? "lane_" : "0", (long long)w, r->L);
		scatterfinish(r->e, in, pf(r->e, "(%s[r_ + 1] - %s[r_])", seg, seg), pf(r->e, "%s[j_]", V));
		wclose(r->e->w, "");
	}
	phaseclose(r);
}

/* the loops over pairs (a_, b_) of [A, B] (one thread: nested; lanes:
 * lane l takes pairs l, l + L, ...), opening a block */
static void
pairsopen(R *r, const char *a, int64_t A, const char *b, int64_t B)
{
	if (r->lane) {
		wopen(r->e->w, "for (int64_t q_ = lane_; q_ < %lld; q_ += %d)", (long long)(A * B), r->L);
		out(r->e, "const int64_t %s = q_ / %lld, %s = q_ %% %lld;\n", a, (long long)(B ? B : 1), b, (long long)(B ? B : 1));
	} else {
		out(r->e, "for (int64_t %s = 0; %s < %lld; %s++)\n", a, a, (long long)A, a);
		wopen(r->e->w, "for (int64_t %s = 0; %s < %lld; %s++)", b, b, (long long)B, b);
	}
}

/* sum/mean/max/softmax/log_softmax/l2_normalize over a trailing dim */
static void
emitreduce(R *r, const Ins *in)
{
	Ref v = in->to, x = in->arg[0];
	Type xt = ty(r->e, x);
	int64_t d = attrint(in, "dim", 1), outer = 1, D, inner = 1;
	const char *V = rowname(r, v);
	int k;

	for (k = 1; k < d; k++)
		outer *= dimconstval(xt.dim[k]);
	D = dimconstval(xt.dim[d]);
	for (k = d + 1; k < xt.rank; k++)
		inner *= dimconstval(xt.dim[k]);
	declrow(r, v);
	phaseopen(r);
	pairsopen(r, "o_", outer, "i_", inner);
	out(r->e, "const int64_t D_ = %lld, I_ = %lld;\n", (long long)D, (long long)inner);
	reducebody(r->e, in, xt.dtype, access(r, x, "(o_ * D_ + k_) * I_ + i_"), "D_", pf(r->e, "%s[o_ * I_ + i_]", V),
	           pf(r->e, "%s[(o_ * D_ + k_) * I_ + i_]", V));
	wclose(r->e->w, "");
	phaseclose(r);
}

/*
 * A row times a constant matrix: one dot product per output, or with
 * the schedule's axpy (one thread only) whole output rows accumulated
 * over k, which streams the matrix by rows.  Either sums in k order.
 */
static void
emitmatmul(R *r, const Ins *in)
{
	Ref v = in->to, a = in->arg[0], b = in->arg[1];
	Type bt = ty(r->e, b);
	/* rows of the product: the result's (a's are empty when K is 0) */
	int64_t K = dimconstval(bt.dim[0]), P = dimconstval(bt.dim[1]), B = P ? width(r, v) / P : width(r, a) / (K ? K : 1);
	const char *T = ctype(ty(r->e, v).dtype), *V = rowname(r, v);

	declrow(r, v);
	if (r->e->sched.axpy && !r->lane) {
		axpybody(r->e, T, B, access(r, a, "i_ * K_ + k_"), r->ext[b], K, P, pf(r->e, "%s[i_ * %lld + p_]", V, (long long)P));
		return;
	}
	phaseopen(r);
	pairsopen(r, "b_", B, "p_", P);
	out(r->e, "const int64_t K_ = %lld;\n", (long long)K);
	dotbody(r->e, T, "a_", access(r, a, "b_ * K_ + k_"), pf(r->e, "%s[k_ * %lld + p_]", r->ext[b], (long long)P), "K_");
	out(r->e, "%s[b_ * %lld + p_] = a_;\n", V, (long long)P);
	wclose(r->e->w, "");
	phaseclose(r);
}

static void
emitconcat(R *r, const Ins *in)
{
	Ref v = in->to;
	Type t = ty(r->e, v);
	int64_t d = attrint(in, "dim", 1), outer = 1, inner = 1, D = dimconstval(t.dim[d]), start = 0, n;
	const char *V = rowname(r, v), *src;
	int k;

	for (k = 1; k < d; k++)
		outer *= dimconstval(t.dim[k]);
	for (k = d + 1; k < t.rank; k++)
		inner *= dimconstval(t.dim[k]);
	declrow(r, v);
	phaseopen(r);
	for (k = 0; k < in->narg; k++) {
		n = dimconstval(ty(r->e, in->arg[k]).dim[d]);
		src = access(r, in->arg[k], concatsrc(r->e, pf(r->e, "%lld", (long long)n), pf(r->e, "%lld", (long long)inner)));
		if (r->lane) {
			wopen(r->e->w, "for (int64_t q_ = lane_; q_ < %lld; q_ += %d)", (long long)(outer * n * inner), r->L);
			out(r->e, "const int64_t o_ = q_ / %lld, c_ = q_ / %lld %% %lld, i_ = q_ %% %lld;\n", (long long)(n * inner != 0 ? n * inner : 1),
			    (long long)(inner ? inner : 1), (long long)(n ? n : 1), (long long)(inner ? inner : 1));
		} else {
			out(r->e, "for (int64_t o_ = 0; o_ < %lld; o_++)\nfor (int64_t c_ = 0; c_ < %lld; c_++)\n", (long long)outer, (long long)n);
			wopen(r->e->w, "for (int64_t i_ = 0; i_ < %lld; i_++)", (long long)inner);
		}
		out(r->e, "%s[(o_ * %lld + %lld + c_) * %lld + i_] = %s;\n", V, (long long)D, (long long)start, (long long)inner, src);
		wclose(r->e->w, "");
		start += n;
	}
	phaseclose(r);
}

static void
emittranspose(R *r, const Ins *in)
{
	Ref v = in->to, x = in->arg[0];
	Type t = ty(r->e, v), xt = ty(r->e, x);
	const Attr *pa = findattr(in, "perm");
	int64_t xs[MaxRank], s = 1;
	Str off = {0};
	int k;

	for (k = xt.rank - 1; k >= 1; k--) {
		xs[k] = s;
		s *= dimconstval(xt.dim[k]);
	}
	declrow(r, v);
	phaseopen(r);
	loopsopen(r, &t, 0, NULL, NULL);
	sput(&off, "0");
	for (k = 1; k < t.rank; k++)
		sput(&off, " + c%d_ * %lld", k, (long long)xs[pa->u.is[k]]);
	out(r->e, "%s[j_] = %s;\n", rowname(r, v), access(r, x, pf(r->e, "%s", sstr(&off))));
	sfree(&off);
	wclose(r->e->w, "");
	phaseclose(r);
}

/* elementwise: unary, cast, binary with broadcasting */
static void
emitelem(R *r, const Ins *in)
{
	Ref v = in->to;
	Type t = ty(r->e, v);
	const char *offs[2] = {0};

	declrow(r, v);
	phaseopen(r);
	loopsopen(r, &t, in->narg, in->arg, offs);
	elembody(r->e, in, access(r, in->arg[0], offs[0]), in->narg == 2 ? access(r, in->arg[1], offs[1]) : NULL,
	         pf(r->e, "%s[j_]", rowname(r, v)));
	wclose(r->e->w, "");
	phaseclose(r);
}

static void
emitvalue(R *r, const Ins *in)
{
	if (isalias(in) || in->op == Ogather || in->op == Oedge_softmax)
		return;
	if (opinfo[in->op].flags & Fscatter)
		emitscatter(r, in);
	else if (in->op == Omatmul)
		emitmatmul(r, in);
	else if (in->op == Oconcat)
		emitconcat(r, in);
	else if (in->op == Otranspose)
		emittranspose(r, in);
	else if (opinfo[in->op].flags & (Freduce | Fnorm))
		emitreduce(r, in);
	else if (opinfo[in->op].flags & (Felem | Fbin))
		emitelem(r, in);
	else
		die("rowkernel: %s in a fusion group", opinfo[in->op].name);
}

/* Is node value v needed outside the group (directly or via aliases)? */
static bool
escapes(R *r, Ref v)
{
	Fn *fn = r->fn;
	int i, k;

	for (i = 0; i < fn->nret; i++)
		if (base(r, fn->ret[i]) == v)
			return true;
	for (i = 0; i < fn->nins; i++) {
		if (i >= r->a0 && i < r->b)
			continue;
		for (k = 0; k < fn->ins[i].narg; k++)
			if (fn->ins[i].arg[k] == v || (r->ingroup[fn->ins[i].arg[k]] && base(r, fn->ins[i].arg[k]) == v))
				return true;
	}
	return false;
}

/*
 * The loop over rows, opening the body of row r_.  With lanes on cuda a
 * block takes rows rows at a time, lanes threads each (every thread runs
 * every iteration, so the warp can meet at __syncwarp); the rows the
 * group makes live in shared memory, one slice per row.  On the cpu the
 * same rows are local arrays; OpenMP takes chunk rows at a time when the
 * schedule says so.
 */
enum { ArrShared, ArrBind, ArrLocal };

/*
 * The arrays a lane kernel keeps per row -- each node row the group makes,
 * and edge_softmax's column maxima and sums -- declared as shared memory
 * (rows slices of each), bound to this thread's slice, or declared as
 * the cpu's locals.
 */
static void
rowarrays(R *r, int mode)
{
	E *e = r->e;
	const char *name[3];
	int i, k, n;

	for (i = r->a0; i < r->b; i++) {
		const Ins *in = &r->fn->ins[i];
		Ref v = in->to;
		long long w = width(r, v) ? width(r, v) : 1;
		const char *T = ctype(ty(e, v).dtype);
		n = 0;
		if (r->kind[v] == RowNode && !isalias(in))
			name[n++] = rowname(r, v);
		if (in->op == Oedge_softmax) {
			name[n++] = statname(r, v, "max");
			name[n++] = statname(r, v, "sum");
		}
		for (k = 0; k < n; k++) {
			size_t len = strlen(name[k]);
			const char *sh = lname(e, r->a, "%s%ssh_", name[k], name[k][len - 1] == '_' ? "" : "_");
			if (mode == ArrShared)
				out(e, "GNN_SHARED(%s, %s, [%d][%lld]);\n", T, sh, e->sched.rows, w);
			else if (mode == ArrBind)
				out(e, "%s *%s = %s[slot_];\n", T, name[k], sh);
			else
				out(e, "%s %s[%lld];\n", T, name[k], w);
		}
	}
}

static void
rowloopopen(R *r)
{
	E *e = r->e;
	int R_ = e->sched.rows;

	if (r->lane && e->cuda) {
		rowarrays(r, ArrShared);
		out(e, "const int lane_ = threadIdx.x %% %d, slot_ = threadIdx.x / %d;\n\n", r->L, r->L);
		wopen(e->w, "for (int64_t base_ = (int64_t)blockIdx.x * %d; base_ < T_; base_ += (int64_t)gridDim.x * %d)", R_, R_);
		out(e, "const int64_t r_ = base_ + slot_;\nconst bool live_ = r_ < T_;\n");
		rowarrays(r, ArrBind);
		return;
	}
	wopen(e->w, "GNN_DLOOP(r_, T_)");
	if (r->lane)
		rowarrays(r, ArrLocal);
}

void
emitrowkernel(E *e, int grp, Args *a, Str *call)
{
	Fn *fn = e->fn;
	R r = {.e = e, .fn = fn, .a = a, .a0 = -1};
	Dim nodes = 0;
	bool found = false;
	int i, k;
	Ref v;

	for (i = 0; i < fn->nins; i++)
		if (attrint(&fn->ins[i], "group", -1) == grp) {
			if (r.a0 < 0)
				r.a0 = i;
			r.b = i + 1;
		}
	r.kind = emalloc(fn->nval + 1);
	r.egraph = emalloc((fn->nval + 1) * sizeof *r.egraph);
	r.ingroup = emalloc(fn->nval + 1);
	r.ext = emalloc((fn->nval + 1) * sizeof *r.ext);
	r.done = emalloc(fn->nval + 1);
	r.esdone = emalloc(fn->nval + 1);
	rowkinds(fn, r.kind, r.egraph);
	for (i = r.a0; i < r.b; i++)
		r.ingroup[fn->ins[i].to] = true;
	for (i = 0; i < fn->narg; i++)
		if (ty(e, fn->arg[i]).kind == TGraph && !found) {
			nodes = ty(e, fn->arg[i]).dim[0];
			found = true;
		}

	/* arguments: outputs, then what the group reads, then segment plans */
	for (i = r.a0; i < r.b; i++) {
		v = fn->ins[i].to;
		if (r.kind[v] == RowNode && !isalias(&fn->ins[i]) && escapes(&r, v))
			ptrarg(e, a, pf(e, "%s_out_", valname(e, v)), v, true, true);
	}
	for (i = r.a0; i < r.b; i++) {
		const Ins *in = &fn->ins[i];
		for (k = 0; k < in->narg; k++) {
			Ref x = base(&r, in->arg[k]);
			if (r.ingroup[x] || r.ext[x] || ty(e, x).kind == TGraph)
				continue;
			/* a scatter's index is its segment plan; a gather's by dst
			 * is row r_ itself */
			if ((k == 1 && (opinfo[in->op].flags & Fscatter)) ||
			    (in->op == Ogather && k == 1 && defins(&r, x)->op == Odst))
				continue;
			r.ext[x] = ptrarg(e, a, NULL, x, false, true);
		}
		if ((opinfo[in->op].flags & Fscatter) || in->op == Oedge_softmax)
			arg(a, pf(e, "const int64_t *%s", segname(&r, i)), "(const int64_t *)%s", segment(e, i, true));
	}
	r.L = e->sched.lanes > 1 ? e->sched.lanes : 1;
	r.lane = r.L > 1;
	out(e, "\n/* fusion group %d:", grp);
	for (i = r.a0; i < r.b; i++)
		out(e, " %s", opinfo[fn->ins[i].op].name);
	if (e->sched.lanes > 1 || e->sched.rows > 1 || e->sched.chunk || e->sched.axpy) {
		char text[128];   /* schedprint's fixed fields */
		schedprint(text, sizeof text, &e->sched);
		out(e, " (schedule %s)", text);
	}
	out(e, " */\n");
	if (r.lane && e->cuda)
		out(e, "GNN_DKERNEL_LB(" KNAME ", %d)(int64_t T_", r.L * e->sched.rows);
	else
		out(e, "GNN_DKERNEL(" KNAME ")(GNN_DRANGE int64_t T_");
	for (k = 0; k < a->n; k++)
		out(e, ", %s", a->decl[k]);
	out(e, ")\n");
	blockopen(e->w);
	rowloopopen(&r);
	for (i = r.a0; i < r.b; i++)
		if (r.kind[fn->ins[i].to] == RowNode) {
			emitvalue(&r, &fn->ins[i]);
			r.done[fn->ins[i].to] = true;
		}
	phaseopen(&r);
	for (i = r.a0; i < r.b; i++) {
		v = fn->ins[i].to;
		if (r.kind[v] == RowNode && !isalias(&fn->ins[i]) && escapes(&r, v))
			out(e, "for (int64_t j_ = %s; j_ < %lld; j_ += %d)\n\t%s[r_ * %lld + j_] = %s[j_];\n", r.lane ? "lane_" : "0",
			    (long long)width(&r, v), r.L, pf(e, "%s_out_", valname(e, v)), (long long)width(&r, v), rowname(&r, v));
	}
	phaseclose(&r);
	wclose(e->w, "");
	wclose(e->w, "");
	if (e->cuda && (r.lane || e->sched.rows > 1))
		sput(call, "GNN_RLAUNCH(" KNAME ", %d, %d, %s", r.L, e->sched.rows, cdim(e, nodes));
	else if (!e->cuda && e->sched.chunk)
		sput(call, "GNN_HLAUNCH_DYN(" KNAME ", %d, %s", e->sched.chunk, cdim(e, nodes));
	else
		sput(call, "GNN_DLAUNCH(" KNAME ", %s", cdim(e, nodes));
	for (k = 0; k < a->n; k++)
		sput(call, ", %s", a->val[k]);
	sput(call, ");");
	free(r.kind);
	free(r.egraph);
	free(r.ingroup);
	free(r.ext);
	free(r.done);
	free(r.esdone);
	free(r.tmp);
}
