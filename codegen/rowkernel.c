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

/* a walk over a row's edges: an edge_softmax's statistics walk (online: the maximum and the sum
 * together, a pair of columns per column) or a scatter's */
enum { WalkStats, WalkScatter };

typedef struct Walk {
	int ins, what;
	int64_t w;                   /* the accumulator's width */
	int plan, scratch;           /* split: the segments of its plan and partials */
	const char *lix, *ch, *sw, *lr;   /* and the kernel parameters reading them */
} Walk;

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
	/* split walks (cuda; runtime/split.c): long rows' walks run in chunk
	 * kernels, and the row kernel reads their combined values */
	bool split;              /* and the row kernel takes the plan's row windows (rw_) */
	int chunk;               /* -1: the row kernel; else the walk this chunk kernel computes */
	int walkno, cur;         /* walks met so far; the open one */
	bool stop;               /* a chunk kernel's walk is written: nothing follows */
	const char *Tn;          /* the segment plans' row count: T_, or TR_ where T_ counts chunks */
	Walk *walk;
	int nwalk;
	int kstride;             /* > 1: lane slices of a walk, edge q_, q_ + kstride, ... */
	int P;                   /* > 0: a sliced scatter's lanes a slice (columns p_, p_ + P, ...) */
	const char *col;         /* and the column its lane takes (h_), else j_ */
	const char **alpha;      /* per edge_softmax value: its weight for lane_ % H this edge, shuffled to the columns */
	/* bind-time edge arrays (a gather's src index, GCN's norm) copied
	 * into a plan's order at bind (permseg), read at k_ */
	struct Perm {
		Ref v;
		int seg;                 /* the plan's segment */
		const char *name;        /* the kernel parameter */
		bool ix;                 /* cuda's index copy: int32 where ix32_, else int64 */
	} *perm;
	int nperm;
	int wins;                /* the open walk's instruction, or -1 */
	const char *kv;          /* the open walk's edge: k_, or k1_ for a pair's second (pairopen) */
} R;

#define RESTRICT(e) ((e)->cuda ? "__restrict__" : "restrict")

/* v's copy in the open walk's plan order, or NULL */
static const struct Perm *
permrec(R *r, Ref v)
{
	if (r->wins < 0)
		return NULL;
	for (int k = 0; k < r->nperm; k++)
		if (r->perm[k].v == v && r->perm[k].seg == segno(r->e, r->wins))
			return &r->perm[k];
	return NULL;
}

/* the parameter of v's copy in the open walk's plan order, or NULL */
static const char *
permof(R *r, Ref v)
{
	const struct Perm *p = permrec(r, v);

	return p ? p->name : NULL;
}

/* element at (C expression) of v's copy: an index copy of either width */
static const char *
permat(R *r, Ref v, const char *at)
{
	const struct Perm *p = permrec(r, v);

	if (p->ix)
		return pf(r->e, "GNN_IXAT(%s, ix32_, %s)", p->name, at);
	return pf(r->e, "(int64_t)%s[%s]", p->name, at);
}

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

/* operand k of in (through aliases) when it is an array of graph g's
 * edges that the kernel takes as a parameter -- a walk over g reads it
 * at its edge e_ -- else RNone */
static Ref
edgearray(R *r, const Ins *in, int k, Ref g)
{
	Ref x = base(r, in->arg[k]);
	Type t = ty(r->e, x);

	if (g == RNone || r->ingroup[x] || !r->ext[x] || t.kind != TTensor || t.rank < 1 || t.dim[0] != ty(r->e, g).dim[1])
		return RNone;
	return x;
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

/*
 * A constant of one value made outside the group (autodiff's zeros that
 * broadcast a row-sum's adjoint back over the rows: batch norm's
 * backward added a stored [N, F] of zeros four times, a 10 MB read each
 * on PubMed): its elements are that literal, and the kernel takes no
 * pointer to it.  NULL for anything else.
 */
static const char *
splat(R *r, Ref v)
{
	const Ins *d = defins(r, v);
	int dt = ty(r->e, v).dtype;

	if (r->ingroup[v] || !d || d->op != Oconst || !findattr(d, "value") || !dtypeisfloat(dt) ||
	    valstoredtype(r->fn, v) != DNone)
		return NULL;
	return pf(r->e, "((%s)%.17g)", ctype(dt), attrfloat(d, "value", 0));
}

/* the open walk's edge: e_ on the cpu; on cuda read from the plan's
 * order where used, which a plan that forward reads only the row
 * starts of (rowsonly: bind frees the order) must never be */
static const char *
edgeof(R *r)
{
	if (!r->e->cuda)
		return "e_";
	if (r->wins < 0 || rowsonly(r->fn, r->e->p->phase, TargetCUDA, r->wins))
		die("codegen: a walk reads its plan's order, which its plan does not keep");
	return pf(r->e, "%s[%s + 1 + %s]", segname(r, r->wins), r->Tn, r->kv);
}

/* the element of v at idx, as it is computed (access() binds it) */
static const char *
compute(R *r, Ref v, const char *idx)
{
	const Ins *d = defins(r, v);
	const char *lit = splat(r, v);

	if (lit)
		return lit;

	if (r->ingroup[v] && d && d->op == Ogather) {
		const Ins *ix = defins(r, d->arg[1]);
		if (ix->op == Osrc && permof(r, d->arg[1]))   /* the src index in the plan's order */
			return pf(r->e, "%s[%s * %lld + (%s)]", r->ext[base(r, d->arg[0])], permat(r, d->arg[1], r->kv),
			          (long long)width(r, d->arg[0]), idx);
		if (ix->op == Osrc)   /* another node's row, made by an earlier kernel */
			return pf(r->e, "%s[(int64_t)%s[%s] * %lld + (%s)]", r->ext[base(r, d->arg[0])], r->ext[d->arg[1]], edgeof(r),
			          (long long)width(r, d->arg[0]), idx);
		return access(r, d->arg[0], idx);   /* by dst: the target's own row */
	}
	if (r->ingroup[v] && d && d->op == Oedge_softmax && !r->lane)
		return pf(r->e, "%s[%s]", rowname(r, v), idx);   /* neededge made it */
	if (r->ingroup[v] && d && d->op == Oedge_softmax && r->alpha && r->alpha[v])
		return pf(r->e, "__shfl_sync(gma_, %s, (int)(%s), %d)", r->alpha[v], idx, r->L);
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
		if (permof(r, v))
			return pf(r->e, "%s[%s * %lld + (%s)]", permof(r, v), r->kv, (long long)width(r, v), idx);
		return pf(r->e, "%s[%s * %lld + (%s)]", r->ext[v], edgeof(r), (long long)width(r, v), idx);
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
loopsrange(R *r, const Type *t, int nops, const Ref *ops, const char **offs, int64_t lo, int64_t hi);

static void
loopsopen(R *r, const Type *t, int nops, const Ref *ops, const char **offs)
{
	loopsrange(r, t, nops, ops, offs, 0, -1);
}

/* loopsopen with a rank-2 row's columns [lo, hi) only (one thread; hi
 * -1: all) */
static void
loopsrange(R *r, const Type *t, int nops, const Ref *ops, const char **offs, int64_t lo, int64_t hi)
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
			if (hi >= 0 && t->rank == 2)
				out(r->e, "for (int64_t c%d_ = %lld; c%d_ < %lld; c%d_++)\n", k, (long long)lo, k, (long long)hi, k);
			else
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
 * execution (whose window a 128-wide row's work fills) get far ahead.
 * Rows of at most 256 bytes (a bfloat16 row of 128, a float row of 40)
 * twice as far: as many lines in flight for half the lines an edge (the
 * arxiv-shaped graph's bf16 GCN, one thread: its two row kernels 12%
 * faster each, 100 to 88 ms and 74 to 65; float rows of 512 bytes
 * unchanged). */
enum { PrefetchEdges = 8, PrefetchRowBytes = 256 };

/* whether in is a gather of the group by src(g), which a walk over g's
 * plan prefetches */
static bool
srcgather(R *r, const Ins *in, Ref g)
{
	const Ins *ix;

	return g != RNone && in->op == Ogather && r->ingroup[in->to] && (ix = defins(r, in->arg[1])) &&
	       ix->op == Osrc && ix->arg[0] == g;
}

/* the distance for a walk's gathers by src(g): the widest row's */
static int
prefetchedges(R *r, Ref g)
{
	int64_t most = 0, n;

	for (int j = r->a0; j < r->b; j++)
		if (srcgather(r, &r->fn->ins[j], g) &&
		    (n = width(r, r->fn->ins[j].arg[0]) * valelemsize(r->fn, base(r, r->fn->ins[j].arg[0]))) > most)
			most = n;
	return most <= PrefetchRowBytes ? 2 * PrefetchEdges : PrefetchEdges;
}

/* the edges of segment row r_ under plan i (rowptr, then order) */
static void
segopen(R *r, int i)
{
	const char *s = segname(r, i);
	int j;

	if (r->kstride > 1 && r->chunk >= 0)
		wopen(r->e->w, "for (int64_t k_ = lo_ + q_; k_ < hi_; k_ += %d)", r->kstride);
	else if (r->kstride > 1)
		wopen(r->e->w, "for (int64_t k_ = %s[r_] + q_; k_ < %s[r_ + 1]; k_ += %d)", s, s, r->kstride);
	else if (r->chunk >= 0)
		wopen(r->e->w, "for (int64_t k_ = lo_; k_ < hi_; k_++)");
	else
		wopen(r->e->w, "for (int64_t k_ = %s[r_]; k_ < %s[r_ + 1]; k_++)", s, s);
	r->wins = i;
	if (r->e->cuda)
		out(r->e, "GNN_WORK(1);\n");   /* (edgeof reads the edge where used) */
	else {
		out(r->e, "const int64_t e_ = %s[%s + 1 + k_];\n", s, r->Tn);
		if (r->nperm)
			out(r->e, "(void)e_;\n");
	}
	if (!r->e->cuda && !r->lane) {
		/* only the gathers by this walk's graph's src: e_ numbers its
		 * edges, and another graph's index may be shorter */
		Ref g = plangraph(r->fn, i);
		bool any = false;
		int pd = prefetchedges(r, g);
		for (j = r->a0; j < r->b; j++) {
			const Ins *in = &r->fn->ins[j];
			if (!srcgather(r, in, g))
				continue;
			if (permof(r, in->arg[1])) {
				/* the index is read in order: only the row ahead */
				out(r->e, "if (k_ + %d < %s[T_])\n\tfor (int64_t o_ = 0; o_ < %lld; o_ += %d)\n"
				    "\t\t__builtin_prefetch(&%s[(int64_t)%s[k_ + %d] * %lld + o_]);\n", pd, s,
				    (long long)width(r, in->arg[0]), 64 / valelemsize(r->fn, base(r, in->arg[0])),
				    r->ext[base(r, in->arg[0])], permof(r, in->arg[1]), pd, (long long)width(r, in->arg[0]));
				continue;
			}
			if (!any) {
				wopen(r->e->w, "if (k_ + %d < %s[T_])", pd, s);
				out(r->e, "const int64_t ep_ = %s[T_ + 1 + k_ + %d];\n", s, pd);
				/* and the index that leads to a row twice as far ahead */
				out(r->e, "if (k_ + %d < %s[T_])\n\t__builtin_prefetch(&%s[%s[T_ + 1 + k_ + %d]]);\n",
				    2 * pd, s, r->ext[in->arg[1]], s, 2 * pd);
				any = true;
			}
			/* one prefetch a 64-byte line: 16 floats, 32 16-bit words */
			out(r->e, "for (int64_t o_ = 0; o_ < %lld; o_ += %d)\n\t__builtin_prefetch(&%s[(int64_t)%s[ep_] * %lld + o_]);\n",
			    (long long)width(r, in->arg[0]), 64 / valelemsize(r->fn, base(r, in->arg[0])),
			    r->ext[base(r, in->arg[0])], r->ext[in->arg[1]], (long long)width(r, in->arg[0]));
		}
		if (any)
			wclose(r->e->w, "");
		/* the bind-time edge arrays the walk reads at e_ (GCN's norm,
		 * an edge weight): e_ runs in the plan's order, not memory's,
		 * so each is a load at a random place too */
		any = false;
		for (j = r->a0; j < r->b; j++) {
			const Ins *in = &r->fn->ins[j];
			for (int k = 0; k < in->narg; k++) {
				Ref v = edgearray(r, in, k, g);
				bool seen = false;
				/* (a gather's src index is prefetched above) */
				if (v == RNone || (in->op == Ogather && k == 1) || permof(r, v))
					continue;
				for (int q = r->a0; q < j && !seen; q++)
					for (int m = 0; m < r->fn->ins[q].narg; m++)
						seen |= base(r, r->fn->ins[q].arg[m]) == v;
				for (int m = 0; m < k; m++)
					seen |= base(r, in->arg[m]) == v;
				if (seen)
					continue;
				if (!any) {
					wopen(r->e->w, "if (k_ + %d < %s[T_])", 2 * PrefetchEdges, s);
					out(r->e, "const int64_t eq_ = %s[T_ + 1 + k_ + %d];\n", s, 2 * PrefetchEdges);
					any = true;
				}
				out(r->e, "__builtin_prefetch(&%s[eq_ * %lld]);\n", r->ext[v], (long long)width(r, v));
			}
		}
		if (any)
			wclose(r->e->w, "");
	}
	resetedges(r);
}

static void
segclose(R *r)
{
	r->wins = -1;
	wclose(r->e->w, "");
	resetedges(r);
}

/*
 * cuda lanes, a walk whose column loop some lane leaves every edge
 * (pairededges): segopen's edges two a step, k_ and k1_ (kstride
 * apart), so that the second edge's loads are issued before the first's
 * message is added -- each edge is a chain of dependent loads (index,
 * then row), and nvcc keeps only one edge's in flight around a loop a
 * lane breaks out of.  pairrest then opens the odd edge out at k_;
 * segclose closes it and pairclose the rest.
 */
static const char *
seghi(R *r, int i)
{
	return r->chunk >= 0 ? "hi_" : pf(r->e, "%s[r_ + 1]", segname(r, i));
}

static void
pairopen(R *r, int i)
{
	int d = r->kstride > 1 ? r->kstride : 1;

	blockopen(r->e->w);
	out(r->e, "int64_t k_ = %s%s;\n\n", r->chunk >= 0 ? "lo_" : pf(r->e, "%s[r_]", segname(r, i)), r->kstride > 1 ? " + q_" : "");
	wopen(r->e->w, "for (; k_ + %d < %s; k_ += %d)", d, seghi(r, i), 2 * d);
	r->wins = i;
	out(r->e, "GNN_WORK(2);\nconst int64_t k1_ = k_ + %d;\n\n", d);
	resetedges(r);
}

static void
pairrest(R *r, int i)
{
	wclose(r->e->w, "");
	resetedges(r);
	wopen(r->e->w, "if (k_ < %s)", seghi(r, i));
	out(r->e, "GNN_WORK(1);\n");
}

static void
pairclose(R *r)
{
	wclose(r->e->w, "");
}

/* a paired walk's column step j_ of scatter in (a sum or a mean, into
 * acc): both edges' messages, then their sums in edge order, as the
 * single walk adds them: the same bits */
static void
pairstep(R *r, const Ins *in, const char *T, const char *acc)
{
	out(r->e, "const %s x0_ = %s;\n", T, access(r, in->arg[0], "j_"));
	tmpreset(r);   /* the second edge's locals are its own */
	r->kv = "k1_";
	out(r->e, "const %s x1_ = %s;\n", T, access(r, in->arg[0], "j_"));
	r->kv = "k_";
	tmpreset(r);
	scatterstep(r->e, in, NULL, "x0_", acc);
	scatterstep(r->e, in, NULL, "x1_", acc);
}

/* the test for a segment walk's first edge */
static const char *
firstedge(R *r, int i)
{
	return r->chunk >= 0 ? "k_ == lo_" : pf(r->e, "k_ == %s[r_]", segname(r, i));
}

/* How a walk's accumulator acc (an lvalue of j_) is laid out: one column
 * j_ already in scope (a lane's edge_softmax column), all columns in one
 * thread, or a lane's registers acc_[jj_] for columns lane_ + jj_ * L. */
enum { AccColumn, AccRow, AccLanes };

/* the accumulator of walk w to or from its scratch: the long row's
 * combined value (row kernels, and the earlier walks in a chunk kernel)
 * or this chunk's partial */
static void
accxfer(R *r, const Walk *w, const char *acc, const char *acc2, int shape, bool store)
{
	/* a statistics walk's scratch row: its maxima, then its sums */
	int64_t cols = acc2 ? w->w / 2 : w->w;
	const char *j = shape == AccColumn && r->col ? r->col : "j_";
	const char *far = store ? pf(r->e, "%s[c_ * %lld + %s]", w->sw, (long long)w->w, j)
	                        : pf(r->e, "%s[lx_ * %lld + %s]", w->lr, (long long)w->w, j);
	const char *far2 = store ? pf(r->e, "%s[c_ * %lld + %lld + %s]", w->sw, (long long)w->w, (long long)cols, j)
	                         : pf(r->e, "%s[lx_ * %lld + %lld + %s]", w->lr, (long long)w->w, (long long)cols, j);
	const char *to = store ? far : acc, *from = store ? acc : far;
	const char *to2 = store ? far2 : acc2, *from2 = store ? acc2 : far2;

	if (shape == AccLanes && r->P > 0) {
		/* a sliced scatter: every slice holds the sum, the first stores it */
		wopen(r->e->w, "for (int jj_ = 0; jj_ < %lld; jj_++)", (long long)((w->w + r->P - 1) / r->P));
		out(r->e, "const int64_t j_ = p_ + (int64_t)jj_ * %d;\n\nif (j_ < %lld%s)\n\t%s = %s;\n", r->P, (long long)w->w,
		    store ? " && q_ == 0" : "", to, from);
		wclose(r->e->w, "");
	} else if (acc2 && shape == AccColumn && store && r->kstride > 1)
		out(r->e, "if (q_ == 0) {\n\t%s = %s;\n\t%s = %s;\n}\n", to, from, to2, from2);   /* every slice holds it */
	else if (acc2 && shape == AccColumn)
		out(r->e, "%s = %s;\n%s = %s;\n", to, from, to2, from2);
	else if (acc2)
		out(r->e, "for (int64_t j_ = 0; j_ < %lld; j_++) {\n\t%s = %s;\n\t%s = %s;\n}\n", (long long)cols, to, from, to2, from2);
	else if (shape == AccColumn)
		out(r->e, "%s = %s;\n", to, from);
	else if (shape == AccRow)
		out(r->e, "for (int64_t j_ = 0; j_ < %lld; j_++)\n\t%s = %s;\n", (long long)w->w, to, from);
	else {
		wopen(r->e->w, "for (int jj_ = 0; jj_ < %lld; jj_++)", (long long)((w->w + r->L - 1) / r->L));
		out(r->e, "const int64_t j_ = lane_ + (int64_t)jj_ * %d;\n\nif (j_ < %lld)\n\t%s = %s;\n", r->L, (long long)w->w, to, from);
		wclose(r->e->w, "");
	}
}

/*
 * Around every segment walk (instruction i, what: Walk*), whose
 * accumulator is acc: whether to write the walk itself.  Unsplit: always.
 * A split row kernel: for a long row, its combined value instead.  A
 * chunk kernel: the walks before its own only load their combined values
 * (the statistics its walk reads), its own walks the chunk lo_..hi_, and
 * nothing after it is written.
 */
static bool
walkopen(R *r, int i, int what, const char *acc, const char *acc2, int shape)
{
	int k = r->walkno++;
	const Walk *w;

	r->cur = k;
	if (!r->split)
		return true;
	if (k >= r->nwalk || r->walk[k].ins != i || r->walk[k].what != what)
		die("rowkernel: split walk %d out of step", k);
	w = &r->walk[k];
	if (r->chunk < 0) {
		blockopen(r->e->w);
		out(r->e, "const int64_t lx_ = %s[r_];\n\n", w->lix);
		wopen(r->e->w, "if (lx_ >= 0)");
		out(r->e, "GNN_WORK(1);\n");
		accxfer(r, w, acc, acc2, shape, false);
		wclose(r->e->w, "");
		wopen(r->e->w, "else");
		return true;
	}
	if (r->stop || k > r->chunk)
		return false;
	if (k < r->chunk) {
		if (what != WalkScatter)
			accxfer(r, w, acc, acc2, shape, false);
		return false;
	}
	return true;
}

static void
walkclose(R *r, const char *acc, const char *acc2, int shape)
{
	if (!r->split)
		return;
	if (r->chunk < 0) {
		wclose(r->e->w, "");
		wclose(r->e->w, "");
	} else if (r->cur == r->chunk && !r->stop) {
		accxfer(r, &r->walk[r->cur], acc, acc2, shape, true);
		r->stop = true;
	}
}

/* the mask of the lanes sharing this thread's row, for their shuffles */
static const char *
groupmask(R *r)
{
	return r->L == 32 ? "0xffffffffu" : pf(r->e, "((1u << %d) - 1) << (threadIdx.x & 31 & ~%du)", r->L, r->L - 1);
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
	first = firstedge(r, i);
	w = width(r, v);
	dt = ty(r->e, v).dtype;
	T = ctype(dt);
	mx = statname(r, v, "max");
	sm = statname(r, v, "sum");
	if (r->lane && r->e->cuda && rowslices(Oedge_softmax, w, r->L, 0, 0) > 1) {
		/* fewer columns (heads) than lanes: lane l takes column
		 * h_ = l % w and the row's edges q_, q_ + Q, ... (q_ = l / w,
		 * Q = L / w slices), so every lane walks; the slices' pairs
		 * then combine in slice order through shuffles among the row's
		 * lanes, which all end with the row's statistics */
		int Q = rowslices(Oedge_softmax, w, r->L, 0, 0);
		phaseopen(r);
		out(r->e, "const int64_t h_ = lane_ %% %lld, q_ = lane_ / %lld;\n", (long long)w, (long long)w);
		out(r->e, "%s mx_ = 0, sm_ = 0;\n", T);
		r->kstride = Q;
		r->col = "h_";
		if (walkopen(r, i, WalkStats, "mx_", "sm_", AccColumn)) {
			out(r->e, "const unsigned gm_ = %s;\n", groupmask(r));
			out(r->e, "%s pm_ = -(%s)INFINITY, ps_ = 0;\n\n", T, T);
			wopen(r->e->w, "if (q_ < %d)", Q);
			segopen(r, i);
			out(r->e, "const %s s_ = %s;\n", T, access(r, in->arg[1], "h_"));
			esonlinestep(r->e, dt, NULL, "s_", "pm_", "ps_");
			segclose(r);
			wclose(r->e->w, "");
			out(r->e, "mx_ = __shfl_sync(gm_, pm_, (int)h_, %d);\nsm_ = __shfl_sync(gm_, ps_, (int)h_, %d);\n", r->L, r->L);
			wopen(r->e->w, "for (int o_ = 1; o_ < %d; o_++)", Q);
			out(r->e, "const %s m2_ = __shfl_sync(gm_, pm_, (int)h_ + o_ * %lld, %d), s2_ = __shfl_sync(gm_, ps_, (int)h_ + o_ * %lld, %d);\n\n",
			    T, (long long)w, r->L, (long long)w, r->L);
			esonlinemerge(r->e, dt, "mx_", "sm_", "m2_", "s2_");
			wclose(r->e->w, "");
		}
		walkclose(r, "mx_", "sm_", AccColumn);
		r->kstride = 0;
		r->col = NULL;
		if (!r->stop)
			out(r->e, "if (q_ == 0) {\n\t%s[h_] = mx_;\n\t%s[h_] = sm_;\n}\n", mx, sm);
		phaseclose(r);
		return;
	}
	if (r->lane) {
		/* lane l: the columns l, l + L, ...; one walk per column */
		phaseopen(r);
		wopen(r->e->w, "for (int64_t j_ = lane_; j_ < %lld; j_ += %d)", (long long)w, r->L);
		out(r->e, "%s mx_ = 0, sm_ = 0;\n", T);
		if (walkopen(r, i, WalkStats, "mx_", "sm_", AccColumn)) {
			segopen(r, i);
			out(r->e, "const %s s_ = %s;\n", T, access(r, in->arg[1], "j_"));
			esonlinestep(r->e, dt, first, "s_", "mx_", "sm_");
			segclose(r);
		}
		walkclose(r, "mx_", "sm_", AccColumn);
		if (!r->stop)
			out(r->e, "%s[j_] = mx_;\n%s[j_] = sm_;\n", mx, sm);
		wclose(r->e->w, "");
		phaseclose(r);
		return;
	}
	out(r->e, "%s %s[%lld], %s[%lld];\n", T, mx, (long long)w, sm, (long long)w);
	out(r->e, "for (int64_t j_ = 0; j_ < %lld; j_++)\n\t%s[j_] = %s[j_] = 0;\n", (long long)w, mx, sm);
	if (walkopen(r, i, WalkStats, pf(r->e, "%s[j_]", mx), pf(r->e, "%s[j_]", sm), AccRow)) {
		segopen(r, i);
		neededge(r, in->arg[1]);
		s = access(r, in->arg[1], "j_");
		wopen(r->e->w, "for (int64_t j_ = 0; j_ < %lld; j_++)", (long long)w);
		out(r->e, "const %s s_ = %s;\n", T, s);
		esonlinestep(r->e, dt, first, "s_", pf(r->e, "%s[j_]", mx), pf(r->e, "%s[j_]", sm));
		wclose(r->e->w, "");
		segclose(r);
	}
	walkclose(r, pf(r->e, "%s[j_]", mx), pf(r->e, "%s[j_]", sm), AccRow);
}

/*
 * cuda lanes: the weights of the edge_softmaxes that message v reads,
 * with fewer heads H than lanes, once per edge and head: lane l computes
 * head l % H's, and the columns take theirs by shuffle (alpha[], read by
 * compute()), instead of an exp and a division per column.  Sets *any
 * if there are: the column loop must then keep every lane in step.
 */
static void
alphaprep(R *r, Ref v, char *seen, bool *any)
{
	const Ins *in;

	v = base(r, v);
	if (!r->ingroup[v] || seen[v])
		return;
	seen[v] = 1;
	in = defins(r, v);
	if (in->op == Oedge_softmax) {
		int64_t H = width(r, v);
		const char *h, *name;
		int dt = ty(r->e, v).dtype;
		if (H >= r->L || H == 0)   /* each lane's own columns; 0-wide: none */
			return;
		if (!*any)
			out(r->e, "const unsigned gma_ = %s;\n", groupmask(r));
		*any = true;
		h = lname(r->e, r->a, "ha%d_", r->tmpno++);
		out(r->e, "const int64_t %s = lane_ %% %lld;\n", h, (long long)H);
		name = lname(r->e, r->a, "%s_h%d_", valname(r->e, v), r->tmpno++);
		out(r->e, "const %s %s = %s;\n", ctype(dt), name,
		    esweight(r->e, dt, access(r, in->arg[1], h), pf(r->e, "%s[%s]", statname(r, v, "max"), h),
		             pf(r->e, "%s[%s]", statname(r, v, "sum"), h)));
		r->alpha[v] = name;
		return;
	}
	for (int k = 0; k < in->narg; k++)
		alphaprep(r, in->arg[k], seen, any);
}

static void
msgwalk(const Fn *fn, int grp, Ref v, char *seen, MsgReads *m)
{
	const Ins *in;
	int d;

	while ((d = fn->val[v].def) >= 0 && (opinfo[fn->ins[d].op].flags & Falias) && attrint(&fn->ins[d], "group", -1) == grp)
		v = fn->ins[d].arg[0];
	if (d < 0 || attrint(&fn->ins[d], "group", -1) != grp || seen[v])
		return;
	seen[v] = 1;
	in = &fn->ins[d];
	if (in->op == Oedge_softmax) {
		const Type *t = &fn->val[v].type;
		int64_t w = 1;
		for (int k = 1; k < t->rank; k++)
			w *= dimconstval(t->dim[k]);
		if (!m->heads || w < m->heads)
			m->heads = w;
		return;
	}
	if (in->op == Ogather) {
		Ref t = in->arg[0];
		while ((d = fn->val[t].def) >= 0 && (opinfo[fn->ins[d].op].flags & Falias))
			t = fn->ins[d].arg[0];
		if (valelemsize(fn, t) > m->esize)
			m->esize = valelemsize(fn, t);
	}
	for (int k = 0; k < in->narg; k++)
		msgwalk(fn, grp, in->arg[k], seen, m);
}

MsgReads
msgreads(const Fn *fn, int grp, Ref v)
{
	char *seen = memset(emalloc(fn->nval + 1), 0, fn->nval + 1);
	MsgReads m = {0, 0};

	msgwalk(fn, grp, v, seen, &m);
	free(seen);
	return m;
}

/* the element size rowslices weighs for scatter in: its message's
 * gathered tables' widest */
static int
sliceesize(R *r, const Ins *in)
{
	return msgreads(r->fn, attrint(in, "group", -1), in->arg[0]).esize;
}

/* whether scatter in's cuda lane walk (Q slices) is paired (pairopen) */
static bool
pairwalk(R *r, const Ins *in, int Q)
{
	if (!r->e->cuda || !r->lane || r->e->sched.single)
		return false;
	return pairededges(in->op, width(r, in->to), r->L, Q, msgreads(r->fn, attrint(in, "group", -1), in->arg[0]).heads);
}

/* the most columns a lane of a scatter's slice takes, and the widest
 * scatter sliced: a wider row fills the warp's loads by columns, and a
 * sliced load would fetch it in 32-byte pieces.  Rows of 16-bit words
 * take half the columns a lane: their L2 bytes halve, and each slice's
 * load is an L1 wavefront however few bytes it reads, so those are the
 * bound (--report=cost on the products graph: GCN's 47-wide bfloat16
 * aggregation 3.9 ms in 4 slices, 2.6 ms in 2) */
enum { SliceCols = 8, SliceWidest = 64 };

int
rowslices(int op, int64_t w, int L, int most, int esize)
{
	int P = 1, cols = esize == 2 ? SliceCols / 2 : SliceCols;

	if (op == Oedge_softmax)   /* a 0-wide value has no statistics to walk */
		return L > 1 && w > 0 && w < L ? (int)(L / w) : 1;
	if (L < 2 || (L & (L - 1)) || w <= 0 || w > SliceWidest || (op != Oscatter_sum && op != Oscatter_mean))
		return 1;
	while (P < L && ((int64_t)P * cols < w || (most > 0 && L / P > most)))
		P *= 2;
	return L / P;
}

bool
pairededges(int op, int64_t w, int L, int Q, int64_t heads)
{
	int P = Q > 0 ? L / Q : L;

	/* a max's first edge is its own (scatterstep's first); alphaprep's
	 * shuffles keep every lane in the column loop */
	if ((op != Oscatter_sum && op != Oscatter_mean) || L < 2 || P < 1 || w <= 0 || w % P == 0)
		return false;
	return Q > 1 || heads == 0 || heads >= L;
}

/*
 * cuda lanes, a narrow sum or mean (rowslices > 1): the row's L lanes
 * are Q slices of P = L / Q lanes; slice q_ walks the edges q_, q_ + Q,
 * ... and its lane p_ accumulates the columns p_, p_ + P, ..., so a
 * lane's chain of dependent loads (permutation, index, row) is a Q-th
 * of the row's.  The slices' sums then meet in a butterfly of shuffles
 * (offsets P, 2P, ..., L / 2): a fixed tree, after which every lane of
 * the row holds the same bits, whatever order the lanes run in.  The
 * messages' softmax weights are computed per column (the lanes are on
 * different edges, so they cannot share one by shuffle).
 */
static void
emitsliced(R *r, const Ins *in)
{
	Ref v = in->to, m = in->arg[0];
	int64_t w = width(r, v);
	int i = r->fn->val[v].def, Q = rowslices(in->op, w, r->L, r->e->sched.slices, sliceesize(r, in)), P = r->L / Q;
	long long J = (w + P - 1) / P;
	const char *T = ctype(ty(r->e, v).dtype), *V = rowname(r, v), *seg = segname(r, i);

	phaseopen(r);
	out(r->e, "const int p_ = lane_ %% %d, q_ = lane_ / %d;\n", P, P);
	out(r->e, "%s acc_[%lld];\nfor (int jj_ = 0; jj_ < %lld; jj_++)\n\tacc_[jj_] = 0;\n", T, J, J);
	r->P = P;
	r->kstride = Q;
	if (walkopen(r, i, WalkScatter, "acc_[jj_]", NULL, AccLanes)) {
		bool pair = pairwalk(r, in, Q);
		if (pair) {
			pairopen(r, i);
			wopen(r->e->w, "for (int jj_ = 0; jj_ < %lld; jj_++)", J);
			out(r->e, "const int64_t j_ = p_ + (int64_t)jj_ * %d;\n\nif (j_ >= %lld)\n\tbreak;\n", P, (long long)w);
			pairstep(r, in, T, "acc_[jj_]");
			wclose(r->e->w, "");
			pairrest(r, i);
		} else
			segopen(r, i);
		wopen(r->e->w, "for (int jj_ = 0; jj_ < %lld; jj_++)", J);
		out(r->e, "const int64_t j_ = p_ + (int64_t)jj_ * %d;\n\nif (j_ >= %lld)\n\tbreak;\n", P, (long long)w);
		out(r->e, "const %s x_ = %s;\n", T, access(r, m, "j_"));
		scatterstep(r->e, in, firstedge(r, i), "x_", "acc_[jj_]");
		wclose(r->e->w, "");
		segclose(r);
		if (pair)
			pairclose(r);
		out(r->e, "const unsigned gs_ = %s;\n\n", groupmask(r));
		wopen(r->e->w, "for (int jj_ = 0; jj_ < %lld; jj_++)", J);
		out(r->e, "for (int o_ = %d; o_ < %d; o_ *= 2)\n\tacc_[jj_] += __shfl_xor_sync(gs_, acc_[jj_], o_, %d);\n", P, r->L, r->L);
		wclose(r->e->w, "");
	}
	walkclose(r, "acc_[jj_]", NULL, AccLanes);
	r->kstride = 0;
	r->P = 0;
	if (!r->stop) {
		wopen(r->e->w, "for (int jj_ = 0; jj_ < %lld; jj_++)", J);
		out(r->e, "const int64_t j_ = p_ + (int64_t)jj_ * %d;\n\n", P);
		wopen(r->e->w, "if (j_ < %lld && q_ == 0)", (long long)w);
		scatterfinish(r->e, in, pf(r->e, "(%s[r_ + 1] - %s[r_])", seg, seg), "acc_[jj_]");
		out(r->e, "%s[j_] = acc_[jj_];\n", V);
		wclose(r->e->w, "");
		wclose(r->e->w, "");
	}
	phaseclose(r);
}

/*
 * One thread's scatter adds an elementwise message as it computes it,
 * column by column, when that message is a gathered row (or an edge
 * array, or a uniform) times, plus, ... a per-edge scalar or a uniform:
 * GCN's x[src] * norm.  Made into a row first, the message's last
 * columns past a multiple of 16 went through the stack as two 4-wide
 * halves, read back as one 8-wide vector, which the store could not
 * forward: a stall on every edge (bf16 GCN's 40-wide second layer ran
 * slower than float32's).  The same float arithmetic in the same order,
 * so the same bits.  Not for wider operands made in the group (an
 * attention weight per head, per edge): those are computed once an edge
 * into a row, where inlining would compute them once a column.  The
 * message's instruction, or NULL.
 */
static const Ins *
inlinemessage(R *r, Ref m)
{
	const Ins *d;

	m = base(r, m);
	d = defins(r, m);
	if (r->lane || !r->ingroup[m] || r->kind[m] != RowEdge || !d || !(opinfo[d->op].flags & Felem) ||
	    storedtype(d) != DNone || ty(r->e, m).rank != 2 || usecount(r->fn, m, NULL) != 1)
		return NULL;
	for (int k = 0; k < d->narg; k++) {
		Ref o = base(r, d->arg[k]);
		const Ins *od = defins(r, o);

		if (r->ingroup[o] && !(od && od->op == Ogather) && width(r, o) != 1)
			return NULL;
	}
	return d;
}

/* the element j_ of message m, computed from its operands (d: its
 * instruction, inlinemessage's) */
static const char *
messageexpr(R *r, Ref m, const Ins *d)
{
	Type t = ty(r->e, m);
	const char *coord[MaxRank], *x, *y = NULL;

	coordsof(r, &t, "j_", coord);
	x = access(r, d->arg[0], sameoffset(r, &t, d->arg[0], "j_", coord));
	if (d->narg == 2)
		y = access(r, d->arg[1], sameoffset(r, &t, d->arg[1], "j_", coord));
	return elemexpr(r->e, d, x, y);
}

static void
emitscatter(R *r, const Ins *in)
{
	Ref v = in->to, m = in->arg[0];
	int i = r->fn->val[v].def;
	int64_t w = width(r, v), J;
	const char *T = ctype(ty(r->e, v).dtype), *V = rowname(r, v), *seg = segname(r, i);
	const char *first = firstedge(r, i);

	needstats(r, m);
	if (r->stop)
		return;
	if (r->split && r->walkno < r->chunk) {
		/* a chunk kernel of a later walk: no later walk's messages
		 * read this scatter's row (the split's condition) */
		r->walkno++;
		return;
	}
	if (r->lane && r->e->cuda && rowslices(in->op, w, r->L, r->e->sched.slices, sliceesize(r, in)) > 1) {
		emitsliced(r, in);
		return;
	}
	if (r->lane) {
		/* lane l accumulates columns l, l + L, ... in registers while
		 * walking the edges once: loads of a message row coalesce */
		J = (w + r->L - 1) / r->L;
		phaseopen(r);
		out(r->e, "%s acc_[%lld];\nfor (int jj_ = 0; jj_ < %lld; jj_++)\n\tacc_[jj_] = 0;\n", T, (long long)(J ? J : 1), (long long)J);
		if (walkopen(r, i, WalkScatter, "acc_[jj_]", NULL, AccLanes)) {
			bool shf = false, pair = pairwalk(r, in, 1);
			if (pair) {
				/* (no alphaprep: pairwalk found no weights to shuffle) */
				pairopen(r, i);
				wopen(r->e->w, "for (int jj_ = 0; jj_ < %lld; jj_++)", (long long)J);
				out(r->e, "const int64_t j_ = lane_ + (int64_t)jj_ * %d;\n\nif (j_ >= %lld)\n\tbreak;\n", r->L, (long long)w);
				pairstep(r, in, T, "acc_[jj_]");
				wclose(r->e->w, "");
				pairrest(r, i);
			} else
				segopen(r, i);
			if (r->e->cuda && !pair) {
				char *seen = emalloc(r->fn->nval + 1);
				memset(seen, 0, r->fn->nval + 1);
				r->alpha = emalloc((r->fn->nval + 1) * sizeof *r->alpha);
				memset(r->alpha, 0, (r->fn->nval + 1) * sizeof *r->alpha);
				alphaprep(r, m, seen, &shf);
				free(seen);
			}
			wopen(r->e->w, "for (int jj_ = 0; jj_ < %lld; jj_++)", (long long)J);
			if (shf) {
				/* every lane runs every column step (the shuffles), a
				 * column past the row's end on the last one, unused */
				out(r->e, "const bool jv_ = lane_ + (int64_t)jj_ * %d < %lld;\n", r->L, (long long)w);
				out(r->e, "const int64_t j_ = jv_ ? lane_ + (int64_t)jj_ * %d : %lld;\n\n", r->L, (long long)w - 1);
			} else
				out(r->e, "const int64_t j_ = lane_ + (int64_t)jj_ * %d;\n\nif (j_ >= %lld)\n\tbreak;\n", r->L, (long long)w);
			out(r->e, "const %s x_ = %s;\n", T, access(r, m, "j_"));
			if (shf)
				wopen(r->e->w, "if (jv_)");
			scatterstep(r->e, in, first, "x_", "acc_[jj_]");
			if (shf)
				wclose(r->e->w, "");
			wclose(r->e->w, "");
			segclose(r);
			if (pair)
				pairclose(r);
			free(r->alpha);
			r->alpha = NULL;
		}
		walkclose(r, "acc_[jj_]", NULL, AccLanes);
		if (r->stop) {
			phaseclose(r);
			return;
		}
		wopen(r->e->w, "for (int jj_ = 0; jj_ < %lld; jj_++)", (long long)J);
		out(r->e, "const int64_t j_ = lane_ + (int64_t)jj_ * %d;\n\nif (j_ < %lld)\n\t%s[j_] = acc_[jj_];\n", r->L, (long long)w, V);
		wclose(r->e->w, "");
	} else {
		const Ins *md = inlinemessage(r, m);
		int64_t cut[3] = {0, md && w > 16 && w % 16 ? w / 16 * 16 : w, w};
		declrow(r, v);
		out(r->e, "for (int64_t j_ = 0; j_ < %lld; j_++)\n\t%s[j_] = 0;\n", (long long)w, V);
		if (walkopen(r, i, WalkScatter, pf(r->e, "%s[j_]", V), NULL, AccRow)) {
			segopen(r, i);
			if (md)
				for (int k = 0; k < md->narg; k++)
					neededge(r, md->arg[k]);
			else
				neededge(r, m);
			/* an inline message's columns as emitelem's: the 16s, then
			 * the rest */
			for (int part = 0; part < 2 && cut[part] < cut[part + 1]; part++) {
				wopen(r->e->w, "for (int64_t j_ = %lld; j_ < %lld; j_++)", (long long)cut[part], (long long)cut[part + 1]);
				out(r->e, "const %s x_ = %s;\n", T, md ? messageexpr(r, m, md) : access(r, m, "j_"));
				scatterstep(r->e, in, first, "x_", pf(r->e, "%s[j_]", V));
				wclose(r->e->w, "");
			}
			segclose(r);
		}
		walkclose(r, pf(r->e, "%s[j_]", V), NULL, AccRow);
		if (r->stop)
			return;
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
 * bf16 (passes/precision.c): weights rounded to bfloat16, so the row
 * is read rounded too: on the cpu target the row's product is gnn_bgemv
 * (vdpbf16ps) over the weights packed once per kernel call (gnn_bpack,
 * before the row loop, into at most 64 KiB of stack), in gnn_bgemm's
 * order and bits.  Returns the packed words, 0 when it does not apply.
 */
static long long
bgemvwords(R *r, const Ins *in)
{
	const Ins *bd = defins(r, in->arg[1]);
	Type bt = ty(r->e, in->arg[1]);
	long long K, P;

	if (in->op != Omatmul || r->e->cuda || r->lane || !bd || rounddtype(bd) != DBF16 ||
	    !r->ext[base(r, in->arg[1])])
		return 0;
	K = dimconstval(bt.dim[0]);
	P = dimconstval(bt.dim[1]);
	if (K <= 0 || P <= 0 || K > 2048)
		return 0;
	K = (K + 1) / 2 * ((P + 15) / 16) * 16;
	return K <= 16384 ? K : 0;
}

/*
 * A narrow product (fewer than 16 outputs from 16 inputs or more, as
 * GIN's last Linear, 128 to the classes) on the cpu target: one chain
 * of K dependent multiply-adds per output, in k order, kept a row
 * latency-bound (GIN's last kernel on PubMed: 9 ms of a 144 ms step).
 * So the weights are copied transposed once per kernel call (before the
 * row loop, at most 64 KiB of stack) and each output is sumbody's
 * partial chains over two contiguous rows, which vectorize.  Returns
 * the copy's floats, 0 when it does not apply.
 */
static long long
tdotwords(R *r, const Ins *in)
{
	Type bt = ty(r->e, in->arg[1]);
	long long K, P;

	if (in->op != Omatmul || r->e->cuda || r->lane || bgemvwords(r, in) || !r->ext[in->arg[1]] ||
	    valstoredtype(r->e->fn, in->arg[1]) != DNone || ty(r->e, in->to).dtype != DF32)
		return 0;
	K = dimconstval(bt.dim[0]);
	P = dimconstval(bt.dim[1]);
	return K >= 16 && P > 0 && P < 16 && K * P <= 16384 ? K * P : 0;
}

/* the weights' copies a kernel call makes before its row loop: the
 * packed bfloat16 pairs (bgemvwords), the transposed narrow products
 * (tdotwords) */
static void
weightcopies(R *r)
{
	for (int i = r->a0; i < r->b; i++) {
		const Ins *in = &r->fn->ins[i];
		long long n = bgemvwords(r, in), t = tdotwords(r, in), K, P;

		if (!n && !t)
			continue;
		K = dimconstval(ty(r->e, in->arg[1]).dim[0]);
		P = dimconstval(ty(r->e, in->arg[1]).dim[1]);
		if (n) {
			out(r->e, "uint32_t bp%d_[%lld];   /* the weights' bfloat16 pairs */\n", i, n);
			out(r->e, "gnn_bpack(bp%d_, %s, %lld, %lld, %lld);\n", i, r->ext[base(r, in->arg[1])], K, P, P);
		} else if (t) {
			out(r->e, "float wt%d_[%lld];   /* the weights transposed */\n", i, t);
			out(r->e, "for (int64_t k_ = 0; k_ < %lld; k_++)\n\tfor (int64_t p_ = 0; p_ < %lld; p_++)\n\t\twt%d_[p_ * %lld + k_] = %s[k_ * %lld + p_];\n",
			    K, P, i, K, r->ext[in->arg[1]], P);
		}
	}
}

/*
 * A row times a constant matrix: one dot product per output, in
 * sumbody's order (16 partial chains from 16 terms on), or with the
 * schedule's axpy (one thread only, not for a narrow product) whole
 * output rows accumulated over k in k order, which streams the matrix
 * by rows.
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
	if (bgemvwords(r, in)) {
		/* the rows of a as floats, which gnn_bgemv rounds, then the
		 * product */
		blockopen(r->e->w);
		out(r->e, "const int64_t K_ = %lld;\nfloat a_[%lld];\n", (long long)K, (long long)(B * K > 0 ? B * K : 1));
		out(r->e, "for (int i_ = 0; i_ < %lld; i_++)\n\tfor (int64_t k_ = 0; k_ < K_; k_++)\n\t\ta_[i_ * K_ + k_] = %s;\n",
		    (long long)B, access(r, a, "i_ * K_ + k_"));
		out(r->e, "for (int i_ = 0; i_ < %lld; i_++)\n\tgnn_bgemv(a_ + i_ * K_, K_, bp%d_, %lld, %s + i_ * %lld);\n",
		    (long long)B, (int)(in - r->fn->ins), (long long)P, V, (long long)P);
		wclose(r->e->w, "");
		return;
	}
	if (r->e->sched.axpy && !r->lane && !tdotwords(r, in)) {
		axpybody(r->e, T, B, matmula(r->e, in, access(r, a, "i_ * K_ + k_")), r->ext[b], K, P,
		         pf(r->e, "%s[i_ * %lld + p_]", V, (long long)P));
		return;
	}
	/* each output sumbody's partial chains (c_, not p_: its partials
	 * are p_), whatever the lanes, so every schedule but axpy gives the
	 * same bits; a narrow product reads its transposed copy */
	phaseopen(r);
	pairsopen(r, "b_", B, "c_", P);
	out(r->e, "const int64_t K_ = %lld;\n", (long long)K);
	sumbody(r->e, T, pf(r->e, "(%s) * %s", matmula(r->e, in, access(r, a, "b_ * K_ + k_")),
	                    tdotwords(r, in) ? pf(r->e, "wt%d_[c_ * K_ + k_]", (int)(in - r->fn->ins))
	                                     : pf(r->e, "%s[k_ * %lld + c_]", r->ext[b], (long long)P)), "K_");
	out(r->e, "%s[b_ * %lld + c_] = a_;\n", V, (long long)P);
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
	int64_t w = t.rank == 2 ? dimconstval(t.dim[1]) : 0, cut[3] = {0, w / 16 * 16, w};
	bool split = !r->lane && w > 16 && w % 16;

	declrow(r, v);
	phaseopen(r);
	/* a row of 16 columns or more, not a multiple of 16, is two loops:
	 * the 16s, then the rest.  As one loop gcc vectorizes the 16s and
	 * leaves the rest scalar (40 columns: 32 in two vectors, 8 in eight
	 * scalar steps, each a 16-bit load, shift and move where the row is
	 * bfloat16); the rest's loop of constant length it vectorizes too */
	for (int part = 0; part < (split ? 2 : 1); part++) {
		if (split)
			loopsrange(r, &t, in->narg, in->arg, offs, cut[part], cut[part + 1]);
		else
			loopsopen(r, &t, in->narg, in->arg, offs);
		elembody(r->e, in, access(r, in->arg[0], offs[0]), in->narg == 2 ? access(r, in->arg[1], offs[1]) : NULL,
		         pf(r->e, "%s[j_]", rowname(r, v)));
		wclose(r->e->w, "");
	}
	phaseclose(r);
}

static void
emitvalue(R *r, const Ins *in)
{
	int sdt = storedtype(in);

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
	if (sdt != DNone) {
		/* a value stored in 16 bits is rounded where it is made (the
		 * interpreter's rule): the group's later readers of the row
		 * see what memory will hold, not the float32 row */
		phaseopen(r);
		out(r->e, "for (int64_t j_ = %s; j_ < %lld; j_ += %d)\n\t%s[j_] = gnn_round_%s(%s[j_]);\n", r->lane ? "lane_" : "0",
		    (long long)width(r, in->to), r->L, rowname(r, in->to), dtypename(sdt), rowname(r, in->to));
		phaseclose(r);
	}
}

/*
 * The walks read the bind-time arrays of their plan's edges -- a
 * gather's src index, an edge weight -- through copies in the plan's
 * order (permseg), at k_: in memory's order, where the arrays themselves
 * are read at e_, a random place, one more dependent load an edge.  A
 * scatter's own index is its plan, and a gather by dst reads row r_.
 * On cuda a src index's copy is int32 where the bound graph's ids fit
 * (m->ix32, the kernel's ix32_), and the schedule's perm=1 keeps the
 * reads through the permutation instead.
 */
static void
permcopies(R *r)
{
	Fn *fn = r->fn;
	bool anyix = false, ix;
	int grp = (int)attrint(&fn->ins[r->a0], "group", -1);

	for (int i = r->a0; i < r->b; i++) {
		const Ins *w = &fn->ins[i];
		Ref g;
		if (!(((opinfo[w->op].flags & Fscatter) || w->op == Oedge_softmax) && (g = plangraph(fn, i)) != RNone))
			continue;
		for (int j = r->a0; j < r->b; j++) {
			for (int k = 0; k < fn->ins[j].narg; k++) {
				/* the same arrays --report=memory counts (report.c's eachcopy) */
				Ref x = walkarray(fn, grp, g, j, k);
				const Ins *d = x != RNone ? defins(r, x) : NULL;
				int s, q;
				if (x == RNone || r->e->p->phase[x] != PhaseBind)
					continue;
				for (q = 0; q < r->nperm; q++)
					if (r->perm[q].v == x && r->perm[q].seg == segno(r->e, i))
						break;
				if (q < r->nperm)
					continue;
				ix = r->e->cuda && d && d->op == Osrc;
				s = permseg(r->e, i, x, width(r, x), ix);
				r->perm = erealloc(r->perm, (r->nperm + 1) * sizeof *r->perm);
				r->perm[r->nperm].v = x;
				r->perm[r->nperm].seg = segno(r->e, i);
				r->perm[r->nperm].name = lname(r->e, r->a, "%s_p%d_", valname(r->e, x), s);
				r->perm[r->nperm].ix = ix;
				if (ix && !anyix)
					arg(r->a, "int ix32_", "m->ix32");
				anyix |= ix;
				if (ix)
					arg(r->a, pf(r->e, "const void *%s %s", RESTRICT(r->e), r->perm[r->nperm].name), "(const void *)m->seg[%d]", s);
				else
					arg(r->a, pf(r->e, "const %s *%s %s", memctype(r->e, x), RESTRICT(r->e), r->perm[r->nperm].name),
					    "(const %s *)m->seg[%d]", memctype(r->e, x), s);
				r->nperm++;
			}
		}
	}
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
/* A chunk kernel keeps edge_softmax i's statistics only when a walk
 * after theirs reads them: their own walk's chunk kernel stops at the
 * partials. */
static bool
statsbefore(const R *r, int i)
{
	for (int k = 0; k < r->nwalk && k < r->chunk; k++)
		if (r->walk[k].ins == i && r->walk[k].what == WalkStats)
			return true;
	return false;
}

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
		if (r->kind[v] == RowNode && !isalias(in) && r->chunk < 0)   /* a chunk kernel keeps only statistics */
			name[n++] = rowname(r, v);
		if (in->op == Oedge_softmax && (r->chunk < 0 || statsbefore(r, i))) {
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

/*
 * A chunk kernel's task c_ is chunk c_ of the split plan: edges lo_ to
 * hi_ of row r_, the lx_-th long row (ch: the chunks' rows, then their
 * first and end edges).
 */
static void
chunkvars(R *r, const Walk *w, const char *live)
{
	if (live)
		out(r->e, "const int64_t r_ = %s ? %s[c_] : 0, lo_ = %s ? %s[T_ + c_] : 0, hi_ = %s ? %s[2 * T_ + c_] : 0;\n"
		          "const int64_t lx_ = %s ? %s[r_] : 0;\n", live, w->ch, live, w->ch, live, w->ch, live, w->lix);
	else
		out(r->e, "const int64_t r_ = %s[c_], lo_ = %s[T_ + c_], hi_ = %s[2 * T_ + c_], lx_ = %s[r_];\n", w->ch, w->ch, w->ch, w->lix);
	out(r->e, "(void)lx_;\n");
}

/* Does this kernel take the split plan's row windows (a split row kernel)? */
static bool
rowwindows(const R *r)
{
	return r->split && r->chunk < 0;
}

static void
rowloopopen(R *r)
{
	E *e = r->e;
	int R_ = e->sched.rows;
	const char *t = r->chunk >= 0 ? "c_" : "r_";

	if (r->lane && e->cuda) {
		rowarrays(r, ArrShared);
		out(e, "const int lane_ = threadIdx.x %% %d, slot_ = threadIdx.x / %d;\n\n", r->L, r->L);
		wopen(e->w, "for (int64_t base_ = (int64_t)blockIdx.x * %d; base_ < T_; base_ += (int64_t)gridDim.x * %d)", R_, R_);
		if (rowwindows(r)) {
			/* slot_ walks window w_'s rows; the warp's slots step
			 * together, as often as its longest window has rows, so
			 * that every lane meets every __syncwarp */
			out(e, "const int64_t w_ = base_ + slot_, rlo_ = w_ < T_ ? (rw_ ? rw_[w_] : w_) : 0, rhi_ = w_ < T_ ? (rw_ ? rw_[w_ + 1] : w_ + 1) : 0;\n"
			       "const int s0_ = (int)(threadIdx.x & ~31u) / %d, s1_ = s0_ + %d < %d ? s0_ + %d : %d;\n"
			       "int64_t nr_ = 0;\n\n"
			       "for (int s_ = s0_; s_ < s1_ && base_ + s_ < T_; s_++)\n"
			       "\tnr_ = !rw_ ? 1 : rw_[base_ + s_ + 1] - rw_[base_ + s_] > nr_ ? rw_[base_ + s_ + 1] - rw_[base_ + s_] : nr_;\n",
			    r->L, 32 / r->L, R_, 32 / r->L, R_);   /* L <= 32: 32 / L slots a warp */
			wopen(e->w, "for (int64_t i_ = 0; i_ < nr_; i_++)");
			out(e, "const int64_t r_ = rlo_ + i_;\nconst bool live_ = r_ < rhi_;\n");
		} else
			out(e, "const int64_t %s = base_ + slot_;\nconst bool live_ = %s < T_;\n", t, t);
		if (r->chunk >= 0)
			chunkvars(r, &r->walk[r->chunk], "live_");
		rowarrays(r, ArrBind);
		out(e, "if (live_)\n\tGNN_WORK(1);\n");
		return;
	}
	weightcopies(r);
	if (rowwindows(r)) {
		wopen(e->w, "GNN_DLOOP(w_, T_)");
		wopen(e->w, "for (int64_t r_ = rw_ ? rw_[w_] : w_; r_ < (rw_ ? rw_[w_ + 1] : w_ + 1); r_++)");
	} else
		wopen(e->w, "GNN_DLOOP(%s, T_)", t);
	if (r->chunk >= 0)
		chunkvars(r, &r->walk[r->chunk], NULL);
	if (e->cuda)
		out(e, "GNN_WORK(1);\n");
	if (r->lane)
		rowarrays(r, ArrLocal);
}

/* The walks of the group in the order the emitters meet them: each
 * scatter's, after those of the edge_softmaxes its messages depend on
 * (needstats' walk, once per value). */
static void
walksof(R *r, Ref v, char *seen)
{
	const Ins *in;
	int k;

	v = base(r, v);
	if (!r->ingroup[v] || seen[v])
		return;
	seen[v] = 1;
	in = defins(r, v);
	for (k = 0; k < in->narg; k++)
		walksof(r, in->arg[k], seen);
	if (in->op == Oedge_softmax) {
		r->walk = erealloc(r->walk, (r->nwalk + 1) * sizeof *r->walk);
		r->walk[r->nwalk++] = (Walk){.ins = r->fn->val[v].def, .what = WalkStats, .w = 2 * width(r, v)};
	}
}

static void
collectwalks(R *r)
{
	char *seen = emalloc(r->fn->nval + 1);
	int i;

	for (i = r->a0; i < r->b; i++) {
		const Ins *in = &r->fn->ins[i];
		if (r->kind[in->to] != RowNode || !(opinfo[in->op].flags & Fscatter))
			continue;
		walksof(r, in->arg[0], seen);
		r->walk = erealloc(r->walk, (r->nwalk + 1) * sizeof *r->walk);
		r->walk[r->nwalk++] = (Walk){.ins = i, .what = WalkScatter, .w = width(r, in->to)};
	}
	free(seen);
}

/* the launch of kernel k (T tasks) as the row kernel is launched */
static void
rowlaunch(R *r, Str *call, const char *k, const char *T)
{
	E *e = r->e;

	if (e->cuda && (r->lane || e->sched.rows > 1))
		sput(call, "GNN_RLAUNCH(%s, %s, %d, %d, %s", k, launchlit(e, k), r->L, e->sched.rows, T);
	else if (!e->cuda && e->sched.chunk)
		sput(call, "GNN_HLAUNCH_DYN(%s, %s, %d, %s", k, launchlit(e, k), e->sched.chunk, T);
	else
		sput(call, "GNN_DLAUNCH(%s, %s, %s", k, launchlit(e, k), T);
	for (int i = 0; i < r->a->n; i++)
		sput(call, ", %s", r->a->val[i]);
	sput(call, ");");
}

/* the kernel head shared by the row kernel and its chunk kernels */
static void
rowhead(R *r, const char *name)
{
	E *e = r->e;
	int k;

	if (r->lane && e->cuda)
		out(e, "GNN_DKERNEL_LB(%s, %d)(int64_t T_", name, r->L * e->sched.rows);
	else
		out(e, "GNN_DKERNEL(%s)(GNN_DRANGE int64_t T_", name);
	for (k = 0; k < r->a->n; k++)
		out(e, ", %s", r->a->decl[k]);
	out(e, ")\n");
}

/* The chunk kernel of walk k: that walk over the chunk's edges, after
 * loading the combined values of the walks before it that it reads. */
static void
emitchunk(R *r, int k)
{
	E *e = r->e;
	int i;

	memset(r->done, 0, r->fn->nval + 1);
	memset(r->esdone, 0, r->fn->nval + 1);
	tmpreset(r);
	r->chunk = k;
	r->walkno = 0;
	r->stop = false;
	out(e, "\n/* walk %d of the group over one chunk of a long row (split) */\n", k);
	rowhead(r, pf(e, KNAME "_c%d", k));
	blockopen(e->w);
	rowloopopen(r);
	for (i = r->a0; i < r->b && !r->stop; i++)
		if (r->kind[r->fn->ins[i].to] == RowNode && (opinfo[r->fn->ins[i].op].flags & Fscatter))
			emitscatter(r, &r->fn->ins[i]);
	if (!r->stop)
		die("rowkernel: chunk kernel %d has no walk", k);
	wclose(e->w, "");
	wclose(e->w, "");
	memset(r->done, 0, r->fn->nval + 1);
	memset(r->esdone, 0, r->fn->nval + 1);
	tmpreset(r);
	r->chunk = -1;
	r->walkno = 0;
	r->stop = false;
}

/* split: the plans' least chunk, the schedule's C lane steps of the
 * walk with the fewest slices (a row of C * Q edges is C steps a lane) */
static int
splitc0(int split, int nwalk, const Walk *ws, R *r)
{
	int q = 0;

	for (int k = 0; k < nwalk; k++) {
		const Ins *in = &r->fn->ins[ws[k].ins];
		int s = rowslices(in->op, width(r, in->to), r->e->cuda ? r->L : 1, r->e->sched.slices, sliceesize(r, in));
		q = !q || s < q ? s : q;
	}
	return split * (q ? q : 1);
}

/* split: the walks, their segments, and the parameters that reach them */
static void
splitsetup(R *r, Dim nodes)
{
	E *e = r->e;
	int k, j, np = 0, *plans, c0;
	const char *h0;

	collectwalks(r);
	c0 = splitc0(e->sched.split, r->nwalk, r->walk, r);
	plans = emalloc((r->nwalk + 1) * sizeof *plans);
	for (k = 0; k < r->nwalk; k++) {
		Walk *w = &r->walk[k];
		const char *h;
		w->plan = splitplanseg(e, w->ins, c0);
		w->scratch = splitscratchseg(e, w->ins, w->what, c0, w->w);
		h = pf(e, "((const int64_t *)m->hseg[%d])", w->plan);
		for (j = 0; j < np && plans[j] != w->plan; j++)
			;
		if (j == np) {
			plans[np++] = w->plan;
			arg(r->a, pf(e, "const int64_t *lix%d_", j), "(const int64_t *)m->seg[%d] + GNN_SPLIT_HEADER", w->plan);
			arg(r->a, pf(e, "const int64_t *ch%d_", j), "(const int64_t *)m->seg[%d] + %s[GNN_SPLIT_CHUNKS]", w->plan, h);
		}
		w->lix = pf(e, "lix%d_", j);
		w->ch = pf(e, "ch%d_", j);
		w->sw = pf(e, "sw%d_", k);
		w->lr = pf(e, "lr%d_", k);
		arg(r->a, pf(e, "float *%s", w->sw), "(float *)m->seg[%d]", w->scratch);
		arg(r->a, pf(e, "const float *%s", w->lr), "(const float *)m->seg[%d] + %s[GNN_SPLIT_NITEMS] * %lld", w->scratch, h,
		    (long long)w->w);
		if (ctype(ty(e, r->fn->ins[w->ins].to).dtype)[0] != 'f')
			die("rowkernel: split walk of %s values", ctype(ty(e, r->fn->ins[w->ins].to).dtype));
	}
	/* a graph without long rows: no windows (NULL), a task a row */
	h0 = pf(e, "((const int64_t *)m->hseg[%d])", r->walk[0].plan);
	arg(r->a, "const int64_t *rw_", "%s[GNN_SPLIT_NLONG] ? (const int64_t *)m->seg[%d] + %s[GNN_SPLIT_WINS] : NULL", h0,
	    r->walk[0].plan, h0);
	arg(r->a, "int64_t TR_", "%s", cdim(e, nodes));
	r->Tn = "TR_";
	free(plans);
	e->splitused = true;
}

void
emitrowkernel(E *e, int grp, Args *a, Str *call)
{
	Fn *fn = e->fn;
	R r = {.e = e, .fn = fn, .a = a, .a0 = -1, .wins = -1, .kv = "k_"};
	Dim nodes;
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
	nodes = groupnodes(fn, grp);

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
			if (r.ingroup[x] || r.ext[x] || ty(e, x).kind == TGraph || splat(&r, x))
				continue;
			/* a scatter's index is its segment plan; a gather's by dst
			 * is row r_ itself */
			if ((k == 1 && (opinfo[in->op].flags & Fscatter)) ||
			    (in->op == Ogather && k == 1 && defins(&r, x)->op == Odst))
				continue;
			/* read only through plan-order copies (permcopies): no
			 * parameter, so that bind need not keep it (a read of it
			 * would not compile) */
			if (copiedonly(fn, e->p->phase, e->p->target, x)) {
				r.ext[x] = pf(e, "%s_uncopied_", valname(e, x));
				continue;
			}
			r.ext[x] = ptrarg(e, a, NULL, x, false, true);
		}
		if ((opinfo[in->op].flags & Fscatter) || in->op == Oedge_softmax)
			arg(a, pf(e, "const int64_t *%s", segname(&r, i)), "(const int64_t *)%s", segment(e, i, true));
	}
	if (!e->cuda || !e->sched.perm)
		permcopies(&r);
	r.L = e->sched.lanes > 1 ? e->sched.lanes : 1;
	r.lane = r.L > 1;
	r.chunk = -1;
	r.Tn = "T_";
	r.split = e->cuda && e->sched.split > 0;
	if (r.split)
		splitsetup(&r, nodes);
	out(e, "\n/* fusion group %d:", grp);
	for (i = r.a0; i < r.b; i++)
		out(e, " %s", opinfo[fn->ins[i].op].name);
	if (e->sched.lanes > 1 || e->sched.rows > 1 || e->sched.chunk || e->sched.axpy) {
		char text[128];   /* schedprint's fixed fields */
		schedprint(text, sizeof text, &e->sched);
		out(e, " (schedule %s)", text);
	}
	out(e, " */\n");
	for (k = 0; k < r.nwalk; k++)
		emitchunk(&r, k);
	if (r.nwalk)
		out(e, "\n");
	rowhead(&r, KNAME);
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
	if (rowwindows(&r))
		wclose(e->w, "");
	wclose(e->w, "");
	wclose(e->w, "");
	if (r.split) {
		/* each walk's chunks, then its reduce levels; then the rows */
		sput(call, "{\n");
		for (k = 0; k < r.nwalk; k++) {
			const Walk *w = &r.walk[k];
			const Ins *wi = &fn->ins[w->ins];
			sput(call, "\t");
			rowlaunch(&r, call, pf(e, KNAME "_c%d", k), pf(e, "((const int64_t *)m->hseg[%d])[GNN_SPLIT_NCHUNK]", w->plan));
			sput(call, "\n\t%s_split_levels(m, %d, %d, %lld, %d);\n", e->nm, w->plan, w->scratch, (long long)w->w,
			     w->what == WalkStats ? 2 : w->what == WalkScatter && wi->op == Oscatter_max);
		}
		sput(call, "\t");
		rowlaunch(&r, call, KNAME,
		          pf(e, "(((const int64_t *)m->hseg[%d])[GNN_SPLIT_NLONG] ? ((const int64_t *)m->hseg[%d])[GNN_SPLIT_NWIN] : %s)",
		             r.walk[0].plan, r.walk[0].plan, cdim(e, nodes)));
		sput(call, "\n}");
	} else
		rowlaunch(&r, call, KNAME, cdim(e, nodes));
	free(r.kind);
	free(r.egraph);
	free(r.ingroup);
	free(r.ext);
	free(r.done);
	free(r.esdone);
	free(r.tmp);
	free(r.walk);
	free(r.perm);
}

/* Split walks' reduce levels (runtime/split.c), one kernel per model:
 * thread t combines column t % cols of window t / cols, in item order,
 * into a carry for the next level or a long row's final value.  W_ is
 * the scratch row; mode_ 0 sums, 1 takes the maximum, 2 combines
 * online-softmax pairs (maxima in the row's first half, sums in its
 * second: the sums rescaled to the larger maximum). */
void
emitsplitreduce(E *e)
{
	const char *nm = e->nm;

	out(e, "\n/* split walks: one reduce level (runtime/split.c) */\n");
	out(e, "GNN_DKERNEL(%s_split_reduce)(GNN_DRANGE int64_t T_, int64_t W_, int mode_, const float *in_, float *carry_, float *lr_,\n"
	       "\tconst int64_t *irow_, const int64_t *wstart_, const int64_t *wdest_)\n", nm);
	blockopen(e->w);
	out(e, "const int64_t cols_ = mode_ == 2 ? W_ / 2 : W_;\n\n");
	wopen(e->w, "GNN_DLOOP(t_, T_)");
	out(e, "const int64_t w_ = t_ / cols_, j_ = t_ %% cols_, a_ = wstart_[w_], b_ = wstart_[w_ + 1], d_ = wdest_[w_];\n\n");
	out(e, "GNN_WORK(1 + (b_ - a_));\n");
	wopen(e->w, "for (int64_t i_ = a_; i_ < b_;)");
	out(e, "const int64_t row_ = irow_[i_];\nfloat acc_ = in_[i_ * W_ + j_], sum_ = mode_ == 2 ? in_[i_ * W_ + cols_ + j_] : 0;\n"
	       "int64_t k_ = i_ + 1;\n\n");
	wopen(e->w, "for (; k_ < b_ && irow_[k_] == row_; k_++)");
	out(e, "const float x_ = in_[k_ * W_ + j_];\n\n");
	wopen(e->w, "if (mode_ == 2)");
	/* as esonlinestep: a part whose maximum is -inf adds 0 once the
	 * other's is larger */
	out(e, "const float y_ = in_[k_ * W_ + cols_ + j_];\n\n");
	esonlinemerge(e, DF32, "acc_", "sum_", "x_", "y_");
	wclose(e->w, "");
	out(e, "else if (!mode_)\n\tacc_ += x_;\nelse if (x_ > acc_ || x_ != x_)\n\tacc_ = x_;\n");
	wclose(e->w, "");
	out(e, "float *to_ = d_ >= 0 ? carry_ + d_ * W_ : lr_ + row_ * W_;\n\n");
	out(e, "to_[j_] = acc_;\nif (mode_ == 2)\n\tto_[cols_ + j_] = sum_;\ni_ = k_;\n");
	wclose(e->w, "");
	wclose(e->w, "");
	wclose(e->w, "");
	out(e, "\n/* a split walk's reduce levels, in order */\nstatic void\n%s_split_levels(gnn_instance *m, int plan, int scratch, int64_t W, int mode)\n", nm);
	blockopen(e->w);
	out(e, "const int64_t *h = (const int64_t *)m->hseg[plan], *d = (const int64_t *)m->seg[plan];\n");
	out(e, "float *s = (float *)m->seg[scratch];\n\n");
	wopen(e->w, "for (int64_t l = 0; l < h[GNN_SPLIT_NLEV]; l++)");
	out(e, "const int64_t *v = h + GNN_SPLIT_LEVEL + GNN_SPLIT_LEVELSLOTS * l;\n");
	/* a level of few windows (the last ones) gets whole warps, not a
	 * block of mostly idle ones */
	out(e, "const int64_t T = v[1] * (mode == 2 ? W / 2 : W);\nconst int b = T < 256 ? (int)((T + 31) / 32 * 32) : 256;\n\n");
	out(e, "if (T > 0)\n\tGNN_PLAUNCH(%s_split_reduce, \"%s_split_reduce\", \"default\", gnn_blocks(T, b), b, 0)(T, W, mode, s + v[2] * W, s + v[3] * W, s + h[GNN_SPLIT_NITEMS] * W, d + v[4], d + v[5], d + v[6]);\n", nm, nm);
	wclose(e->w, "");
	wclose(e->w, "");
}
