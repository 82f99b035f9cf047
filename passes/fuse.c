/*
 * fuse: message-passing, epilogue and prologue fusion into row kernels.
 *
 * A row kernel runs one task per target node.  Everything it computes is
 * either a node row (a value whose first dim is the graph's N: row r of
 * it belongs to task r) or an edge value of some graph (computed per edge
 * while the task walks the edges into r along the graph's CSR), so one
 * kernel covers a dense transform x @ W, the gather -> edge math ->
 * scatter of a generalized SpMM, edge_softmax with its aggregation, and
 * any row-wise epilogue (bias, activations, normalizations over a row,
 * small dense transforms) -- the whole of a GCN layer, say.
 *
 * The rules that make this exact (no value read before it is computed):
 *   - a gather by src(g) reads rows of other nodes, so its table must
 *     come from an earlier kernel; a gather by dst(g) reads row r itself;
 *   - a scatter must reduce into the rows of N along dst(g) of the graph
 *     whose edges its messages belong to;
 *   - edge values never leave their kernel (they are not stored).
 * Groups are contiguous runs of forward instructions (hoist puts forward
 * work last), so running a group as one kernel keeps the order valid.
 * Small work of fixed shape that does not read the open group (batch
 * norm's running statistics, between its normalization and its affine
 * transform) would end the run; it moves up to the group's start
 * instead, which its operands, all made earlier, allow. In
 * a training step, of once-time instructions too (invariant.c), which hoist
 * puts before forward's: a group never mixes the two.
 * A group of one instruction is left alone: the per-op kernel serves.
 * A group's rows are one node type's: the graph inputs' target types are
 * the candidates, tried in order when a group opens (heterogeneous
 * models: the relations into each type make that type's kernels, where
 * only the first relation's target type was fused).
 *
 * checkgroups() applies the same rules to any "group" attributes, so code
 * generation can reject IR text that claims an impossible fusion (a
 * GEMM's epilogue group by gemmepilogue.c's rules).
 */
#include <stdlib.h>
#include <string.h>

#include "passes.h"

enum { KNone, KNode, KEdge, KUniform };

typedef struct Rows {
	const Fn *fn;
	unsigned char *phase;
	unsigned char *kind;     /* per value */
	Ref *egraph;             /* per value: for KEdge, the graph of its edges */
	Dim n;                   /* the open group's node count */
	Dim *cand;               /* the graph inputs' target node counts */
	int ncand;
	Dim *gn;                 /* per group: its node count */
	bool hasgraph;
	int *group;              /* per value: the group that produced it, -1 */
	unsigned char *gphase;   /* per group: its instructions' phase, 0 while empty */
} Rows;

static const Ins *
defof(const Rows *r, Ref v)
{
	int d = r->fn->val[v].def;

	return d >= 0 ? &r->fn->ins[d] : NULL;
}

/* every dim after the first is a constant: rows have a fixed width */
static bool
constrow(const Type *t)
{
	int k;

	if (t->kind != TTensor || t->rank < 1)
		return false;
	for (k = 1; k < t->rank; k++)
		if (!dimisconst(t->dim[k]))
			return false;
	return true;
}

/* the graph whose src/dst an index value is, or RNone */
static Ref
indexgraph(const Rows *r, Ref idx, int op)
{
	const Ins *d = defof(r, idx);

	return d && d->op == op ? d->arg[0] : RNone;
}

/* the edge count of graph g */
static Dim
edgesof(const Rows *r, Ref g)
{
	return r->fn->val[g].type.dim[1];
}

/* Kind of an operand value as seen by a row kernel. */
static int
kindof(const Rows *r, Ref v)
{
	const Type *t = &r->fn->val[v].type;

	if (r->kind[v] != KNone)
		/* a finished row of another node type is no row here */
		return r->kind[v] == KNode && t->dim[0] != r->n ? KNone : r->kind[v];
	if (t->kind != TTensor)
		return KNone;
	/* values computed outside forward: by rank and first dim */
	if (r->phase[v] == PhaseParam || r->phase[v] == PhaseLoad)
		return KUniform;
	if (t->rank >= 1 && t->dim[0] == r->n && constrow(t))
		return KNode;
	/* made before the kernel runs: bind-time, or a training step's
	 * once-time value read by its forward or a later once-time kernel,
	 * or a forward value of no group (groups are contiguous, so an
	 * operand of no group was computed by a kernel before this one):
	 * batch norm's statistics over the rows, the row-sums of its
	 * backward, which are the kernel boundaries they are reduced at */
	if (r->phase[v] == PhaseBind || r->phase[v] == PhaseOnce || r->phase[v] == PhaseForward)
		return t->rank == 0 || dimisconst(t->dim[0]) ? KUniform : KNone;
	return KNone;
}

/* A stored edge array of graph g, read at each edge's id: bind-time
 * (gcn_norm(g), edge_weight(g)), an input (edge features) or a forward
 * value an earlier kernel stored (edge features' transform).  Values of
 * groups (kind set) are not stored, and groups are contiguous, so a
 * forward value of no group was computed before the group that reads it. */
static bool
edgearray(const Rows *r, Ref v, Ref g)
{
	const Type *t = &r->fn->val[v].type;
	int ph = r->phase[v];

	return (ph == PhaseBind || ph == PhaseInput || ph == PhaseForward) && r->kind[v] == KNone &&
	       t->kind == TTensor && t->rank >= 1 && t->dim[0] == edgesof(r, g) && constrow(t);
}

/* a gather by src(g) may read table v: node rows, or a relation's source
 * type's rows of fixed width made before the kernel runs (an input, or
 * an earlier kernel's: groups are contiguous, so a forward value of no
 * group was made before) */
static bool
srctable(const Rows *r, Ref v, Ref g)
{
	const Type *t = &r->fn->val[v].type;
	int ph = r->phase[v];

	if (kindof(r, v) == KNode)
		return true;
	return isrelation(r->fn->val[g].type) && (r->kind[v] == KNone || r->kind[v] == KNode) && constrow(t) &&
	       t->dim[0] == graphsrcnodes(r->fn->val[g].type) &&
	       (ph == PhaseInput || ph == PhaseForward || ph == PhaseBind || ph == PhaseOnce);
}

/*
 * Can instruction in join a row kernel, given the values produced by the
 * kernel so far (r->group[v] == grp)?  Sets *kind and *eg (the result's
 * kind and, for an edge value, its graph).
 */
static bool
fusible(const Rows *r, const Ins *in, int grp, int *kind, Ref *eg)
{
	const Type *t = &r->fn->val[in->to].type;
	unsigned fl = opinfo[in->op].flags;
	int k, ka, rowk = KNone;
	Ref g = RNone, ga;

	*eg = RNone;
	if ((r->phase[in->to] != PhaseForward && r->phase[in->to] != PhaseOnce) || !constrow(t) ||
	    (r->gphase[grp] && r->gphase[grp] != r->phase[in->to]))
		return false;
	switch (in->op) {
	case Ogather:
		if ((g = indexgraph(r, in->arg[1], Osrc)) != RNone) {
			/* rows of other nodes: the table must be finished */
			if (!srctable(r, in->arg[0], g) || (r->kind[in->arg[0]] && r->group[in->arg[0]] == grp))
				return false;
		} else if ((g = indexgraph(r, in->arg[1], Odst)) != RNone) {
			if (kindof(r, in->arg[0]) != KNode)
				return false;
		} else
			return false;
		/* edges into another node type (a relation's) can never be
		 * reduced into these rows: gathered here, they would escape */
		if (r->fn->val[g].type.dim[0] != r->n)
			return false;
		*kind = KEdge;
		*eg = g;
		return true;
	case Oscatter_sum:
	case Oscatter_mean:
	case Oscatter_max: {
		Dim n;
		g = indexgraph(r, in->arg[1], Odst);
		if (g == RNone || !attrdim(in, "n", &n) || n != r->n)
			return false;
		if (r->kind[in->arg[0]] != KEdge || r->egraph[in->arg[0]] != g || r->group[in->arg[0]] != grp)
			return false;
		*kind = KNode;
		return true;
	}
	case Oedge_softmax:
		g = in->arg[0];
		if (r->kind[in->arg[1]] != KEdge || r->egraph[in->arg[1]] != g || r->group[in->arg[1]] != grp)
			return false;
		*kind = KEdge;
		*eg = g;
		return true;
	case Omatmul:
		if (t->rank < 2 || r->fn->val[in->arg[1]].type.rank != 2 || kindof(r, in->arg[1]) != KUniform)
			return false;
		if (!rowmatmul(r->fn, in))
			return false;   /* its own GEMM: schedule.c says why */
		break;
	case Otranspose:
		if (findattr(in, "perm")->u.is[0] != 0)
			return false;
		break;
	case Oreshape:
		if (r->fn->val[in->arg[0]].type.dim[0] != t->dim[0])
			return false;
		break;
	case Osum: case Omean: case Omax:
	case Osoftmax: case Olog_softmax: case Ol2_normalize:
	case Oconcat:
		if (attrint(in, "dim", 0) < 1)
			return false;
		break;
	default:
		if (!(fl & (Felem | Fbin)))
			return false;
	}
	/* the operands decide: node rows, edge values of one graph, or
	 * uniform values broadcast along the rows */
	for (k = 0; k < in->narg; k++) {
		const Type *at = &r->fn->val[in->arg[k]].type;
		ka = kindof(r, in->arg[k]);
		if (in->op == Omatmul && k == 1)
			continue;
		if (ka == KUniform) {
			if (at->rank == t->rank && at->rank > 0 && at->dim[0] != 1)
				return false;
			continue;
		}
		if (ka == KNone && rowk == KEdge && edgearray(r, in->arg[k], g))
			continue;
		if (ka == KNone) {
			/* a stored edge array can also come first */
			for (int j = k + 1; j < in->narg && g == RNone; j++)
				if (r->kind[in->arg[j]] == KEdge)
					g = r->egraph[in->arg[j]];
			if (g != RNone && edgearray(r, in->arg[k], g)) {
				rowk = KEdge;
				continue;
			}
			return false;
		}
		if (at->rank != t->rank && in->op != Omatmul && !(fl & Freduce) && in->op != Oreshape)
			return false;
		ga = ka == KEdge ? r->egraph[in->arg[k]] : RNone;
		if (ka == KEdge && r->group[in->arg[k]] != grp)
			return false;   /* edge values are never stored */
		if (rowk != KNone && (rowk != ka || ga != g))
			return false;
		rowk = ka;
		g = ga;
	}
	if (rowk == KNone)
		return false;
	*kind = rowk;
	*eg = g;
	return true;
}

static void
initrows(Rows *r, const Fn *fn)
{
	int i;

	memset(r, 0, sizeof *r);
	r->fn = fn;
	r->phase = emalloc(fn->nval + 1);
	r->kind = emalloc(fn->nval + 1);
	r->egraph = emalloc((fn->nval + 1) * sizeof *r->egraph);
	r->group = emalloc((fn->nval + 1) * sizeof *r->group);
	r->gphase = emalloc(fn->nins + 2);   /* zeroed */
	r->gn = emalloc((fn->nins + 2) * sizeof *r->gn);
	r->cand = emalloc((fn->narg + 1) * sizeof *r->cand);
	phases(fn, r->phase);
	for (i = 0; i < fn->narg; i++)
		if (fn->val[fn->arg[i]].type.kind == TGraph) {
			Dim d = fn->val[fn->arg[i]].type.dim[0];
			int c;
			for (c = 0; c < r->ncand && r->cand[c] != d; c++)
				;
			if (c == r->ncand)
				r->cand[r->ncand++] = d;
			if (!r->hasgraph)
				r->n = d;
			r->hasgraph = true;
		}
	for (i = 0; i < fn->nval; i++) {
		r->group[i] = -1;
		r->egraph[i] = RNone;
	}
}

static void
freerows(Rows *r)
{
	free(r->phase);
	free(r->kind);
	free(r->egraph);
	free(r->group);
	free(r->gphase);
	free(r->gn);
	free(r->cand);
}

/* Can in begin group grp?  Tries the node types in order; the first
 * that takes it is the group's. */
static bool
opengroup(Rows *r, const Ins *in, int grp, int *kind, Ref *eg)
{
	for (int c = 0; c < r->ncand; c++) {
		r->n = r->cand[c];
		if (fusible(r, in, grp, kind, eg)) {
			r->gn[grp] = r->n;
			return true;
		}
	}
	r->n = r->cand[0];
	return false;
}

/* Can in join group grp: its first instruction, or one after it? */
static bool
joins(Rows *r, const Ins *in, int grp, bool first, int *kind, Ref *eg)
{
	if (first)
		return opengroup(r, in, grp, kind, eg);
	r->n = r->gn[grp];
	return fusible(r, in, grp, kind, eg);
}

/* u is v, or a view of v through aliases made in [a, b) */
static bool
viewin(const Fn *fn, Ref u, Ref v, int a, int b)
{
	int d;

	for (;;) {
		if (u == v)
			return true;
		d = fn->val[u].def;
		if (d < a || d >= b || !(opinfo[fn->ins[d].op].flags & Falias))
			return false;
		u = fn->ins[d].arg[0];
	}
}

bool
escapesgroup(const Fn *fn, Ref v, int a, int b)
{
	int i, k;

	for (i = 0; i < fn->nret; i++)
		if (viewin(fn, fn->ret[i], v, a, b))
			return true;
	for (i = 0; i < fn->nins; i++) {
		if (i >= a && i < b)
			continue;
		for (k = 0; k < fn->ins[i].narg; k++)
			if (viewin(fn, fn->ins[i].arg[k], v, a, b))
				return true;
	}
	return false;
}

/* Edge values must stay inside their group, instructions [a, b); 0 if
 * so, else the index of an offending instruction + 1. */
static int
edgeescape(const Fn *fn, const Rows *r, int a, int b)
{
	int i;

	for (i = a; i < b; i++)
		if (r->kind[fn->ins[i].to] == KEdge && escapesgroup(fn, fn->ins[i].to, a, b))
			return i + 1;
	return 0;
}

/* instruction in joins group grp as a value of kind, edges of eg */
static void
join(Rows *r, const Ins *in, int grp, int kind, Ref eg)
{
	r->group[in->to] = grp;
	r->kind[in->to] = kind;
	r->egraph[in->to] = eg;
	r->gphase[grp] = r->phase[in->to];
}

static void
setgroup(Fn *fn, int i, int grp)
{
	putattr(fn, &fn->ins[i], mkattrint(fn->mod->arena, "group", grp));
}

static void
dropgroup(Fn *fn, int i)
{
	dropattr(fn, &fn->ins[i], "group");
}

/* Instruction i, which cannot join the group open at [start, i), is
 * work of a fixed shape (no node or edge rows) of the group's phase
 * that reads nothing the group makes: it can run before the group. */
static bool
movable(const Rows *r, int start, int i)
{
	const Fn *fn = r->fn;
	const Ins *in = &fn->ins[i];
	const Type *t = &fn->val[in->to].type;

	if (t->kind != TTensor || (t->rank > 0 && !dimisconst(t->dim[0])) || r->phase[in->to] != r->phase[fn->ins[start].to])
		return false;
	for (int k = 0; k < in->narg; k++) {
		int d = fn->val[in->arg[k]].def;
		if (d >= start && d < i)
			return false;
	}
	return true;
}

/* instruction i to position start, [start, i) one down */
static void
moveup(Fn *fn, int *insgroup, int start, int i)
{
	moveins(fn, i, start);
	memmove(&insgroup[start + 1], &insgroup[start], (size_t)(i - start) * sizeof *insgroup);
	insgroup[start] = -1;
}

void
fuse(Fn *fn)
{
	Rows r;
	int *insgroup, i, k, kind, grp = 0, start = -1, size = 0;
	Ref eg;

	initrows(&r, fn);
	insgroup = emalloc((fn->nins + 1) * sizeof *insgroup);
	for (i = 0; i < fn->nins; i++) {
		insgroup[i] = -1;
		dropgroup(fn, i);
	}
	if (!r.hasgraph)
		goto out;
	for (i = 0; i <= fn->nins; i++) {
		if (i < fn->nins && joins(&r, &fn->ins[i], grp, start < 0, &kind, &eg)) {
			if (start < 0)
				start = i;
			insgroup[i] = grp;
			join(&r, &fn->ins[i], grp, kind, eg);
			size++;
			continue;
		}
		if (start >= 0 && i < fn->nins && movable(&r, start, i)) {
			moveup(fn, insgroup, start, i);
			start++;
			continue;
		}
		/* close the group: keep it if it is worth a kernel and exact */
		if (start >= 0) {
			if (size < 2 || edgeescape(fn, &r, start, i)) {
				for (k = start; k < i; k++)
					if (insgroup[k] == grp) {
						insgroup[k] = -1;
						r.group[fn->ins[k].to] = -1;
						r.kind[fn->ins[k].to] = KNone;
					}
				r.gphase[grp] = 0;
			} else
				grp++;
		}
		start = -1;
		size = 0;
		/* this instruction may begin the next group */
		if (i < fn->nins && opengroup(&r, &fn->ins[i], grp, &kind, &eg)) {
			start = i;
			insgroup[i] = grp;
			join(&r, &fn->ins[i], grp, kind, eg);
			size = 1;
		}
	}
	for (i = 0; i < fn->nins; i++)
		if (insgroup[i] >= 0)
			setgroup(fn, i, insgroup[i]);
out:
	free(insgroup);
	freerows(&r);
}

int
checkgroups(const Fn *fn, Loc *where, char *err, size_t errlen)
{
	Rows r;
	int *insgroup, i, j, kind, prev = -1, bad = 0;
	Ref eg;
	bool *seen;

	initrows(&r, fn);
	insgroup = emalloc((fn->nins + 1) * sizeof *insgroup);
	seen = emalloc((fn->nins + 1) * sizeof *seen);
	for (i = 0; i < fn->nins && !bad; i++) {
		int64_t gi = attrint(&fn->ins[i], "group", -1);
		insgroup[i] = (int)gi;
		if (gi < 0) {
			prev = -1;
			continue;
		}
		if (gi > fn->nins || (gi != prev && seen[gi])) {
			snprintf(err, errlen, "fusion group %lld is not contiguous", (long long)gi);
			bad = i + 1;
			break;
		}
		if (gi != prev && (j = epilogueend(fn, i)) >= 0) {
			/* a GEMM and its epilogue (gemmepilogue.c), no row kernel */
			for (int k = i; k <= j; k++)
				insgroup[k] = (int)gi;
			seen[gi] = true;
			prev = (int)gi;
			i = j;
			continue;
		}
		if (!r.hasgraph || !joins(&r, &fn->ins[i], (int)gi, gi != prev, &kind, &eg)) {
			snprintf(err, errlen, "%s cannot join fusion group %lld", opinfo[fn->ins[i].op].name, (long long)gi);
			bad = i + 1;
			break;
		}
		seen[gi] = true;
		prev = (int)gi;
		join(&r, &fn->ins[i], (int)gi, kind, eg);
	}
	/* groups are contiguous now: each run [i, j) is one */
	for (i = 0; i < fn->nins && !bad; i = j) {
		for (j = i + 1; j < fn->nins && insgroup[j] == insgroup[i]; j++)
			;
		if (insgroup[i] >= 0 && (bad = edgeescape(fn, &r, i, j)))
			snprintf(err, errlen, "an edge value of fusion group %d is used outside it", insgroup[i]);
	}
	if (bad)
		*where = fn->ins[bad - 1].loc;
	free(insgroup);
	free(seen);
	freerows(&r);
	return bad ? -1 : 0;
}

/* the groups' joins again, each group of the node type fuse chose */
static void
replay(Rows *r, const Fn *fn)
{
	int i, k, prev = -1;
	Ref eg;

	initrows(r, fn);
	for (i = 0; i < fn->nins; i++) {
		int64_t gi = attrint(&fn->ins[i], "group", -1);
		if (gi < 0 || gi > fn->nins || !r->hasgraph || !joins(r, &fn->ins[i], (int)gi, gi != prev, &k, &eg))
			continue;
		join(r, &fn->ins[i], (int)gi, k, eg);
		prev = (int)gi;
	}
}

void
rowkinds(const Fn *fn, unsigned char *kind, Ref *egraph)
{
	Rows r;
	int i, k;

	replay(&r, fn);
	for (i = 0; i < fn->nval; i++) {
		k = r.kind[i];
		/* a value no group makes: a row of whichever node type it has */
		for (int c = 0; k == KNone && c < r.ncand; c++) {
			r.n = r.cand[c];
			k = kindof(&r, i);
		}
		kind[i] = k == KNode ? RowNode : k == KEdge ? RowEdge : k == KUniform ? RowUniform : RowNone;
		egraph[i] = r.egraph[i];
	}
	freerows(&r);
}

Dim
groupnodes(const Fn *fn, int grp)
{
	Rows r;
	Dim n;

	replay(&r, fn);
	n = grp >= 0 && grp <= fn->nins && r.gphase[grp] ? r.gn[grp] : r.cand[0];
	freerows(&r);
	return n;
}
