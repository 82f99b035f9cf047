/*
 * --report=cost: a model of one forward of the cuda target on a stated
 * device, for one graph (--report-graph: an edge_index .npy, or a
 * gnngen preset's graph), kernel launch by kernel launch.  A training
 * step's function (a model's train item) is modeled the same way, plus
 * the optimizer's launch and the host calls the step waits on: a step
 * after the first on the same bind and inputs, whose once-time values
 * are kept.
 *
 * Work.  The generated kernels count work units for the emulated
 * device (GNN_WORK, docs/cost.md): a row kernel 1 per row a thread takes
 * plus 1 per edge per walk (a split long row's walk: 1), a chunk kernel
 * 1 per chunk plus 1 per edge, a reduce kernel 1 per thread plus 1 per
 * item of its window.  A warp's work is the largest of its lanes' (a
 * divergent loop runs until its longest lane is done).  The model
 * assigns rows, chunks and windows to lanes and warps exactly as the
 * generated code does, from the graph's degree sequences and the
 * runtime's own split plan (runtime/split.c), so that the emulated
 * device's counts (GNNEMU_WORK) check it.
 *
 * Bytes.  The minimum: every input read once, every output written
 * once, the graph as int32 CSR (rowptr, and the gathers' index in edge
 * order).  As emitted: per edge and walk the segment plan's int64
 * permutation, then 32-byte sectors of the int64 index and of the
 * gathered rows, with an L2 hit rate from the gathers' own distribution
 * (the hottest rows that fit in L2 take their share of the gathers);
 * DRAM bytes are the misses, and at least the minimum.
 *
 * Time.  max(DRAM bytes / bandwidth, L2 bytes / L2 bandwidth, flops /
 * peak, L1 wavefronts at one an SM a clock, the busiest warp's latency
 * chain, all warps' chains over the resident warps, the least kernel),
 * naming the bound; a forward adds a gap per launch.  The device
 * constants are the table below.
 */
#include <limits.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../runtime/gnnrt.h"
#include "../driver/options.h"
#include "codegen.h"

/* ---- devices --------------------------------------------------------------- */

/*
 * H100 SXM5 at its sustained 1.755 GHz clock, A100 SXM4 80GB: the
 * datasheets' peaks, streaming at about 85% of peak HBM and gathers of
 * >= 128-byte rows at 85% of that, L2 and latency figures from public
 * microbenchmarks (docs/cost.md says which).  Latencies are per
 * dependent load; the H100's L2 latency (97 ns in a forward) and the
 * profiler's factor on latencies (1.6: ncu replays a launch alone, caches
 * flushed, clocks at base) are fitted to bench/results/h100-kernels.json
 * (docs/cost.md, "Fitted to the record").
 */
const CostGpu costgpus[] = {
	{"h100", "H100 SXM5", 132, 1.755, 59.3e12, 495e12, 2.8e12, 2.4e12, 5.5e12, 50e6, 2.5, 4.5, 2.5, 97, 450, 64, 228, 1.6, 2},
	{"a100", "A100 SXM4 80GB", 108, 1.410, 19.5e12, 156e12, 1.7e12, 1.45e12, 4.0e12, 40e6, 2.5, 1.0, 2.5, 200, 500, 64, 164, 1.6, 1},
};
_Static_assert(sizeof costgpus / sizeof costgpus[0] + 1 == sizeof optgpus / sizeof optgpus[0], "a gpu without its name");

enum { Threads = 256, MaxBlocks = 1 << 20 };

/*
 * Fitted to bench/results/h100-kernels.json (docs/cost.md, "Fitted to the
 * record"):
 *   ColdShare  after a profiler's cache flush, the share of a walk's L2
 *              hits that are first touches (ncu: Cora's unsliced chunk
 *              kernel of lanes=8, 33 edges of 3 dependent loads, 29.2 us:
 *              0.3 us a load, halfway between L2's and DRAM's)
 *   InFlight   edges a lane keeps in flight where a walk's column loop
 *              has no lane leaving it (w a multiple of the lanes on a
 *              row or slice: nvcc unrolls the edge loop and ptxas
 *              overlaps their loads), and by construction where a
 *              sum's walk is emitted two edges a step (pairededges:
 *              some lane breaks out each edge, and both edges' loads
 *              are issued before either is added; not yet timed on a
 *              device); 1 for the other walks some lane breaks out of
 *              each edge (a max, a softmax's statistics, shuffled
 *              weights; ncu, before the pairs: the same chunks at
 *              lanes=16, width 16, 14.2 us)
 *   Unroll     a row's matmul k loop as nvcc unrolls it: this many loads
 *              of the row in flight
 *   FmaIssue   clocks a warp's FMA of a GEMM's register tile takes to
 *              issue (the outer product's operands collide in the
 *              register banks: ncu's 168 us for SAGE's 1433 -> 256 GEMM
 *              under bm=64,bn=128,bk=32,tm=4,tn=4, 16 warps an SM)
 *   BF16Issue  clocks of its scheduler's tensor core a warp's mma.sync
 *              m16n8k16 .bf16 (4096 flops) takes: the datasheet's dense
 *              bfloat16 rate, 989 TFLOP/s on an H100, is 4270 flops a
 *              clock an SM, four tensor cores; not yet measured
 *   BF16Rate   dense bfloat16 tensor flops over TF32's, the datasheets'
 *              (H100 989 and 495 TFLOP/s, A100 312 and 156)
 *   loaded     (the device's) a dependent load's latency over its idle
 *              figure when every resident warp waits on one: the
 *              queues of a full GPU (arxiv's forwards)
 */
#define ColdShare 0.5
enum { InFlight = 2, Unroll = 16, FmaClocks = 4, SharedClocks = 30, FmaIssue = 2, BF16Issue = 4, BF16Rate = 2 };

/* ---- the graph: degrees only ---------------------------------------------------- */

/* What the model needs of a graph value: its in- and out-degrees and
 * self loops per node (derived graphs are arithmetic on these). */
typedef struct Deg {
	int64_t n, e;
	int64_t *in, *out, *self;
	double *hot;             /* out-degrees sorted down, prefix sums (lazy) */
} Deg;

static void
degfree(Deg *d)
{
	free(d->in);
	free(d->out);
	free(d->self);
	free(d->hot);
	memset(d, 0, sizeof *d);
}

static void
degfromedges(Deg *d, const int64_t *src, const int64_t *dst, int64_t n, int64_t e)
{
	size_t b = ((size_t)n + 1) * sizeof *d->in;

	d->n = n;
	d->e = e;
	d->in = memset(emalloc(b), 0, b);
	d->out = memset(emalloc(b), 0, b);
	d->self = memset(emalloc(b), 0, b);
	for (int64_t k = 0; k < e; k++) {
		d->in[dst[k]]++;
		d->out[src[k]]++;
		d->self[dst[k]] += src[k] == dst[k];
	}
}

/*
 * The report's edge_index: a .npy, or "preset:NAME" (gnngen's preset at
 * seed 1, as bench/ makes it).  Returns false after a message.
 */
static bool
readgraph(const ReportOpts *o, Deg *d)
{
	const char *name = o->graph;

	if (!strncmp(name, "preset:", 7)) {
		gnn_synth_spec sp = {.alpha = 1, .seed = 1};
		int64_t *ei;
		int k;
		/* the graph presets only: a relational one is many graphs */
		for (k = 0; k < (int)(sizeof optpresetsizes / sizeof *optpresetsizes)
		            && strcmp(optpresets[k], name + 7) != 0; k++)
			;
		if (k == (int)(sizeof optpresetsizes / sizeof *optpresetsizes)) {
			fprintf(stderr, "gnncc: error: --report-graph: no preset '%s' (see gnngen --help)\n", name + 7);
			return false;
		}
		sp.nodes = optpresetsizes[k].nodes;
		sp.edges = optpresetsizes[k].edges;
		ei = emalloc(2 * (size_t)sp.edges * sizeof *ei);
		if (gnn_synth_edges(&sp, ei) != GNN_OK) {
			fprintf(stderr, "gnncc: error: --report-graph: %s\n", gnn_errmsg());
			free(ei);
			return false;
		}
		degfromedges(d, ei, ei + sp.edges, sp.nodes, sp.edges);
		free(ei);
		return true;
	}
	{
		gnn_graph *g = NULL;
		if (gnn_graph_read_npy(&g, name, o->nodes) != GNN_OK) {
			fprintf(stderr, "gnncc: error: --report-graph: %s\n", gnn_errmsg());
			return false;
		}
		degfromedges(d, gnn_graph_src(g), gnn_graph_dst(g), gnn_graph_num_nodes(g), gnn_graph_num_edges(g));
		gnn_graph_destroy(g);
	}
	return true;
}

/* graph op `op` applied to a: bind's add/remove self loops on degrees */
static void
degderive(Deg *to, const Deg *a, int op)
{
	int64_t n = a->n, loops = 0;

	to->n = n;
	to->in = emalloc(((size_t)n + 1) * sizeof *to->in);
	to->out = emalloc(((size_t)n + 1) * sizeof *to->out);
	to->self = emalloc(((size_t)n + 1) * sizeof *to->self);
	for (int64_t v = 0; v < n; v++) {
		/* add: one more loop; remove: none; add remaining: exactly one */
		int64_t keep = op == Oadd_self_loops ? a->self[v] : 0, add = op == Oremove_self_loops ? 0 : 1;
		to->in[v] = a->in[v] - a->self[v] + keep + add;
		to->out[v] = a->out[v] - a->self[v] + keep + add;
		to->self[v] = keep + add;
		loops += a->self[v];
	}
	to->e = op == Oadd_self_loops ? a->e + n : op == Oremove_self_loops ? a->e - loops : a->e - loops + n;
}

static int
cmpdown(const void *x, const void *y)
{
	int64_t a = *(const int64_t *)x, b = *(const int64_t *)y;

	return a < b ? 1 : a > b ? -1 : 0;
}

/* The L2 hit rate of gathering rows of rowbytes by this graph's sources:
 * the share of gathers that land on the hottest rows fitting in L2. */
static double
hitrate(Deg *d, double rowbytes, double l2)
{
	int64_t k;

	if (d->n == 0 || d->e == 0)
		return 1;
	if (!d->hot) {
		int64_t *s = emalloc((size_t)d->n * sizeof *s);
		d->hot = emalloc(((size_t)d->n + 1) * sizeof *d->hot);
		memcpy(s, d->out, (size_t)d->n * sizeof *s);
		qsort(s, (size_t)d->n, sizeof *s, cmpdown);
		d->hot[0] = 0;
		for (int64_t v = 0; v < d->n; v++)
			d->hot[v + 1] = d->hot[v] + (double)s[v];
		free(s);
	}
	k = (int64_t)(l2 / (rowbytes > 1 ? rowbytes : 1));
	if (k >= d->n)
		return 1;
	return d->hot[k] / d->hot[d->n];
}

/* ---- the model's state ------------------------------------------------------- */

/* a segment plan: the rows of graph g by target (or by source), and the
 * split plan the `split` schedule builds on it */
typedef struct Seg {
	Ref g;
	bool bysrc;
	int64_t t, e, *rowptr;
	int64_t c0, *plan;
	size_t planbytes;
} Seg;

enum { WStats, WScatter };

/* a walk over a row's edges, in the order the row kernel makes them */
typedef struct Walk {
	int what, seg, op;
	int64_t w;               /* its accumulator's width (columns) */
	int64_t sw;              /* a split partial's floats: w, or 2w for a softmax's (max, sum) */
	double dram, l2;         /* bytes per edge as emitted (DRAM misses, L2 traffic) */
	double flops;            /* per edge */
	double lat;              /* one edge's chain of dependent loads (s) */
	double emin;             /* least bytes per edge: int32 index, edge tensors */
	int ng;                  /* gathered tables: their bytes and row bytes */
	double gtb[8], grb[8];
	int nrd;                 /* tensors read per edge (gathered rows, edge tensors): */
	int64_t rdw[8];          /* their widths */
	bool perm;               /* reads its plan's permutation (an edge array not copied) */
	int Q;                   /* its edge slices under the kernel's schedule (rowslices) */
	int U;                   /* edges a lane keeps in flight (InFlight or 1) */
	int64_t heads;           /* a scatter's: the narrowest edge_softmax its message reads (pairededges) */
	int esize;               /* a scatter's: its gathered rows' widest element (msgreads, rowslices) */
} Walk;

/* one launch of forward */
typedef struct Line {
	char name[64], sched[96];
	const char *kind;
	int64_t blocks, tpb, warps;
	double total, busiest;
	int64_t bblock, bwarp;
	double minb, dram, l2, flops, t;
	double wf;               /* L1 wavefronts (a warp's load of up to 128 bytes) */
	bool bf16;               /* its flops on bfloat16 tensor cores */
	const char *bound;
} Line;

typedef struct C {
	FILE *f;
	Fn *fn;
	Mod *m;
	const CostGpu *gpu;
	unsigned char *kind;     /* rowkinds */
	Ref *eg;
	int64_t *symval;
	Deg *dg;                 /* per value: graphs' degrees */
	Seg *seg;
	int nseg;
	Line *line;
	int nline;
	bool prof;               /* --report-timing=profiler: each launch alone, cold, at base clock */
	CostGpu pg;              /* then the device as the profiler runs it */
	double cold;             /* the share of L2 hits a profiler's flush turns into misses */
	bool led;                /* costmemory: keep the ledger */
	MemItem *mem;            /* the buffers the kernels add */
	int nmem;
	unsigned char *phase;    /* per value */
	bool copies;             /* the row kernel's walks read bind-time edge arrays
	                          * through plan-order copies (its schedule's perm=0) */
} C;

/* costmemory's ledger: a buffer the schedules add, once per kind and
 * key (bind makes a split plan once per segment plan and C) */
static void
ledger(C *c, int kind, int64_t k0, int64_t k1, int64_t bytes, const char *fmt, ...)
{
	va_list ap;
	MemItem *it;

	if (!c->led)
		return;
	for (int k = 0; k < c->nmem; k++)
		if (c->mem[k].kind == kind && c->mem[k].key[0] == k0 && c->mem[k].key[1] == k1)
			return;
	c->mem = erealloc(c->mem, (c->nmem + 1) * sizeof *c->mem);
	it = &c->mem[c->nmem++];
	it->kind = kind;
	it->bytes = bytes;
	it->key[0] = k0;
	it->key[1] = k1;
	va_start(ap, fmt);
	vsnprintf(it->what, sizeof it->what, fmt, ap);
	va_end(ap);
}

static double
sect(double bytes)
{
	return ceil(bytes / 32) * 32;
}

/* a dependent load's latency (s) at L2 hit rate hit; after a profiler's
 * flush a share c->cold of those hits are first touches, DRAM's */
static double
mix(const C *c, double hit)
{
	const CostGpu *g = c->gpu;

	hit *= 1 - c->cold;
	return (hit * g->l2ns + (1 - hit) * g->dramns) * 1e-9;
}

static Ref
unalias(const Fn *fn, Ref v)
{
	int d;

	while ((d = fn->val[v].def) >= 0 && (opinfo[fn->ins[d].op].flags & Falias))
		v = fn->ins[d].arg[0];
	return v;
}

static int64_t
evaldim(C *c, Dim d)
{
	int64_t v = dimeval(c->m, d, c->symval);

	return v < 0 ? 0 : v;
}

static double
elems(C *c, Ref v)
{
	const Type *t = &c->fn->val[v].type;
	double n = 1;

	for (int k = 0; k < t->rank; k++)
		n *= (double)evaldim(c, t->dim[k]);
	return n;
}

static double
bytesof(C *c, Ref v)
{
	return elems(c, v) * (double)valelemsize(c->fn, v);
}

static int64_t
rowof(C *c, Ref v)
{
	const Type *t = &c->fn->val[v].type;
	int64_t w = 1;

	for (int k = 1; k < t->rank; k++)
		w *= evaldim(c, t->dim[k]);
	return w;
}

static bool
ingroup(C *c, Ref v, int grp)
{
	int d = c->fn->val[v].def;

	return d >= 0 && attrint(&c->fn->ins[d], "group", -1) == grp;
}

/* the graph value whose src or dst index v is, or RNone */
static Ref
indexgraph(C *c, Ref v, bool *bysrc)
{
	int d;

	v = unalias(c->fn, v);
	d = c->fn->val[v].def;
	if (d < 0 || (c->fn->ins[d].op != Osrc && c->fn->ins[d].op != Odst))
		return RNone;
	*bysrc = c->fn->ins[d].op == Osrc;
	return c->fn->ins[d].arg[0];
}

/* the segment plan of graph g (RNone: t rows and e edges spread evenly,
 * for an index the model cannot follow) */
static int
segof(C *c, Ref g, bool bysrc, int64_t t, int64_t e)
{
	Seg *s;

	for (int k = 0; k < c->nseg; k++)
		if (c->seg[k].g == g && c->seg[k].bysrc == bysrc && (g != RNone || (c->seg[k].t == t && c->seg[k].e == e)))
			return k;
	c->seg = erealloc(c->seg, (c->nseg + 1) * sizeof *c->seg);
	s = &c->seg[c->nseg];
	memset(s, 0, sizeof *s);
	s->g = g;
	s->bysrc = bysrc;
	if (g != RNone) {
		t = c->dg[g].n;
		e = c->dg[g].e;
	}
	s->t = t;
	s->e = e;
	s->rowptr = emalloc(((size_t)t + 1) * sizeof *s->rowptr);
	s->rowptr[0] = 0;
	for (int64_t r = 0; r < t; r++)
		s->rowptr[r + 1] = s->rowptr[r] + (g != RNone ? (bysrc ? c->dg[g].out[r] : c->dg[g].in[r])
		                                              : (e * (r + 1)) / t - (e * r) / t);
	return c->nseg++;
}

/* the split plan of segment k at c0 (one per segment, as bind builds it) */
static const int64_t *
splitof(C *c, int k, int64_t c0)
{
	Seg *s = &c->seg[k];
	size_t nb;

	if (s->plan && s->c0 == c0)
		return s->plan;
	if (s->plan)
		gnn_free(s->plan, s->planbytes);
	if (gnn_split_plan(s->rowptr, s->t, c0, &s->plan, &nb) != GNN_OK)
		die("cost: %s", gnn_errmsg());
	s->c0 = c0;
	s->planbytes = nb;
	return s->plan;
}

/* the L2 hit rate of gathering table x by index idx */
static double
gatherhit(C *c, Ref x, Ref idx, double rowbytes)
{
	bool bysrc = false;
	Ref g = indexgraph(c, idx, &bysrc);
	double tb = bytesof(c, x);

	if (g != RNone && bysrc)
		return hitrate(&c->dg[g], sect(rowbytes), c->gpu->l2);
	return tb <= c->gpu->l2 ? 1 : c->gpu->l2 / tb;
}

/* random 8-byte index reads along a segment plan: hits while the array fits L2 */
static double
indexhit(C *c, Ref v)
{
	double b = bytesof(c, v);

	return b <= c->gpu->l2 ? 1 : c->gpu->l2 / b;
}

/*
 * What one edge of a walk reads and computes: the message (or score)
 * expression's edge values, made in the group from gathered rows and
 * edge tensors read at the edge.
 */
static void
edgecost(C *c, int grp, Ref v, char *seen, Walk *w)
{
	const Ins *in;
	double rb, h;

	v = unalias(c->fn, v);
	if (seen[v])
		return;
	seen[v] = 1;
	if (!ingroup(c, v, grp)) {
		if (c->kind[v] != RowEdge)
			return;   /* node rows: read once per row, below */
		rb = (double)rowof(c, v) * (double)valelemsize(c->fn, v);
		h = indexhit(c, v);
		if (w->nrd < 8)
			w->rdw[w->nrd++] = rowof(c, v);
		w->emin += rb;
		if (c->copies && c->phase[v] == PhaseBind) {
			/* its copy in the plan's order: read in sequence */
			w->l2 += rb;
			w->dram += rb;
			return;
		}
		w->perm = true;
		w->l2 += sect(rb);
		w->dram += sect(rb) * (1 - h);
		if (mix(c, h) > w->lat)
			w->lat = mix(c, h);
		return;
	}
	in = &c->fn->ins[c->fn->val[v].def];
	if (in->op == Ogather) {
		Ref x = unalias(c->fn, in->arg[0]), idx = in->arg[1];
		double hi = indexhit(c, idx);
		rb = (double)rowof(c, x) * (double)valelemsize(c->fn, x);
		h = gatherhit(c, x, idx, rb);
		if (w->nrd < 8)
			w->rdw[w->nrd++] = rowof(c, x);
		w->emin += 4;   /* the index, int32 */
		if (w->ng < 8) {
			w->gtb[w->ng] = bytesof(c, x);
			w->grb[w->ng++] = rb;
		}
		if (c->copies && c->phase[idx] == PhaseBind && c->fn->val[idx].def >= 0 &&
		    c->fn->ins[c->fn->val[idx].def].op == Osrc) {
			/* the index's int32 copy in the plan's order, read in
			 * sequence: the row is the only dependent load */
			w->l2 += 4 + sect(rb);
			w->dram += 4 + sect(rb) * (1 - h);
			if (mix(c, h) > w->lat)
				w->lat = mix(c, h);
			return;
		}
		w->perm = true;
		w->l2 += 32 + sect(rb);
		w->dram += 32 * (1 - hi) + sect(rb) * (1 - h);
		if (mix(c, hi) + mix(c, h) > w->lat)
			w->lat = mix(c, hi) + mix(c, h);
		return;
	}
	if (c->kind[v] != RowEdge && in->op != Oedge_softmax)
		return;
	if (in->op != Oedge_softmax)
		w->flops += (double)rowof(c, v);
	for (int k = in->op == Oedge_softmax ? 1 : 0; k < in->narg; k++)
		edgecost(c, grp, in->arg[k], seen, w);
}

/* a walk of instruction i (scatter or edge_softmax), of group grp */
static Walk
mkwalk(C *c, int grp, int i, int what)
{
	const Ins *in = &c->fn->ins[i];
	char *seen = emalloc(c->fn->nval + 1);
	Walk w = {.what = what, .op = in->op};
	Ref g;
	bool bysrc = false;
	Dim n;

	memset(seen, 0, c->fn->nval + 1);
	if (in->op == Oedge_softmax) {
		g = in->arg[0];
		w.seg = segof(c, g, false, 0, 0);
		w.w = rowof(c, in->to);
		edgecost(c, grp, in->arg[1], seen, &w);
		w.sw = 2 * w.w;
		w.flops += (double)w.w * 3;   /* compare, exp, multiply-add */
	} else {
		g = indexgraph(c, in->arg[1], &bysrc);
		attrdim(in, "n", &n);
		w.seg = segof(c, g, bysrc, evaldim(c, n), (int64_t)elems(c, in->arg[1]));
		w.w = rowof(c, in->to);
		edgecost(c, grp, in->arg[0], seen, &w);
		{
			MsgReads mr = msgreads(c->fn, grp, in->arg[0]);
			w.heads = mr.heads;
			w.esize = mr.esize;
		}
		w.sw = w.w;
		w.flops += (double)w.w;
	}
	/* the permutation's int64 (a sequential run per row), where an edge
	 * array is read through it, then the loads it leads to: one after
	 * another; a lane's edges overlap only as the kernel's U says
	 * (rowkernel's walks as emitted: two edges a step where some lane
	 * leaves the column loop, unrolled by nvcc where none does); with
	 * the copies, the sequential load is theirs */
	if (w.perm || !c->copies) {
		w.l2 += 8;
		w.dram += 8;
	}
	w.lat = mix(c, 1) + w.lat;
	free(seen);
	return w;
}

/* the walks of group grp in emission order (rowkernel.c's collectwalks:
 * each scatter's, after those of the edge_softmaxes its message reads) */
static void
walksof(C *c, int grp, Ref v, char *seen, Walk **ws, int *n)
{
	const Ins *in;

	v = unalias(c->fn, v);
	if (!ingroup(c, v, grp) || seen[v])
		return;
	seen[v] = 1;
	in = &c->fn->ins[c->fn->val[v].def];
	for (int k = 0; k < in->narg; k++)
		walksof(c, grp, in->arg[k], seen, ws, n);
	if (in->op == Oedge_softmax) {
		*ws = erealloc(*ws, (*n + 1) * sizeof **ws);
		(*ws)[(*n)++] = mkwalk(c, grp, c->fn->val[v].def, WStats);
	}
}

static int
collectwalks(C *c, const Kernel *k, Walk **ws)
{
	char *seen = emalloc(c->fn->nval + 1);
	int n = 0;

	*ws = NULL;
	memset(seen, 0, c->fn->nval + 1);
	for (int i = k->first; i <= k->last; i++) {
		const Ins *in = &c->fn->ins[i];
		if (attrint(in, "group", -1) != k->group || c->kind[in->to] != RowNode || !(opinfo[in->op].flags & Fscatter))
			continue;
		walksof(c, k->group, in->arg[0], seen, ws, &n);
		*ws = erealloc(*ws, (n + 1) * sizeof **ws);
		(*ws)[n++] = mkwalk(c, k->group, i, WScatter);
	}
	free(seen);
	return n;
}

/* ---- work: tasks to lanes and warps, as the kernels take them ---------------------- */

typedef double (*UnitFn)(void *ctx, int64_t task, int lane);

static double
oneunit(void *p, int64_t t, int lane)
{
	(void)p;
	(void)t;
	(void)lane;
	return 1;
}

/*
 * T tasks of a launch: L lanes a task and R tasks a block (dl: GNN_DLAUNCH,
 * 256 tasks of one thread a block), grid-stride past 2^20 blocks.  Sets
 * the launch's shape, its warps' total work and the busiest warp.
 */
static void
launchwork(Line *ln, int64_t T, int L, int R, bool dl, UnitFn unit, void *ctx)
{
	int64_t per = dl ? Threads : R, blocks = (T + per - 1) / per;
	int tpb = dl ? Threads : L * R, nw = (tpb + 31) / 32;

	if (dl)
		L = 1;
	if (blocks > MaxBlocks)
		blocks = MaxBlocks;
	ln->blocks = blocks;
	ln->tpb = tpb;
	ln->warps = blocks * nw;
	ln->total = ln->busiest = 0;
	ln->bblock = ln->bwarp = 0;
	for (int64_t b = 0; b < blocks; b++)
		for (int w = 0; w < nw; w++) {
			double m = 0;
			if (unit == oneunit) {
				/* a task a unit: the warp's first lane has the most */
				int64_t t0 = b * per + 32 * w / L;
				m = t0 < T ? (double)((T - 1 - t0) / (blocks * per) + 1) : 0;
			}
			/* a lane's work never grows with its index (the columns it
			 * owns), so the warp's busiest is the first lane of a task */
			for (int t = 32 * w; unit != oneunit && t < tpb && t < 32 * w + 32; t = (t / L + 1) * L) {
				double s = 0;
				for (int64_t task = b * per + t / L; task < T; task += blocks * per)
					s += unit(ctx, task, t % L);
				if (s > m)
					m = s;
			}
			ln->total += m;
			if (m > ln->busiest) {
				ln->busiest = m;
				ln->bblock = b;
				ln->bwarp = w;
			}
		}
}

/* the columns of a walk lane l takes: edge_softmax's statistics walk the
 * row once per column a lane owns (l, l + L, ...); a scatter once */
static double
cols(const Walk *w, int L, int l)
{
	if (w->what == WScatter || L == 1)
		return 1;
	return l < w->w ? (double)((w->w - 1 - l) / L + 1) : 0;
}

typedef struct RowCtx {
	C *c;
	const Walk *w;
	int nw, L;
	const int64_t **lix;     /* per walk: split plan's long-row index, or NULL */
	const int64_t *ch;       /* chunk kernels: the plan's chunks */
	const int64_t *rwin;     /* split row kernel: the row windows' first rows */
	int64_t n0;
	int walk;
	bool timed;              /* units as seconds of a lane's chain: */
	double base, rlat;       /* a row's bounds and its matmuls' chain */
} RowCtx;

/* lane l's work in a walk of d edges, or of a long row's combined value
 * (loaded): a walk of Q = rowslices slices has its lanes in slices of P
 * (rowkernel.c: a statistics walk's P is its width w, lane l taking
 * column l % w; a scatter's L / Q), slice q = l / P taking the edges q,
 * q + Q, ...; every lane reads a loaded value */
static double
walkunits(const Walk *w, int L, int l, int64_t d, bool loaded)
{
	int64_t Q = w->Q;

	if (Q > 1) {
		int64_t q = l / (w->what == WStats ? w->w : L / Q);
		if (loaded)
			return 1;
		return q < Q && d > q ? (double)((d - q + Q - 1) / Q) : 0;
	}
	return cols(w, L, l) * (double)(loaded ? 1 : d);
}

static double
rowunit(void *p, int64_t r, int lane)
{
	RowCtx *x = p;
	double u = x->timed ? x->base + x->rlat : 1;

	for (int k = 0; k < x->nw; k++) {
		const Seg *s = &x->c->seg[x->w[k].seg];
		int64_t d = r < s->t ? s->rowptr[r + 1] - s->rowptr[r] : 0;
		double n = walkunits(&x->w[k], x->L, lane, d, x->lix[k] && x->lix[k][r] >= 0);
		u += x->timed ? n * x->w[k].lat / x->w[k].U : n;
	}
	return u;
}

/* a split row kernel's task: a window of rows (runtime/split.c) */
static double
winunit(void *p, int64_t wi, int lane)
{
	RowCtx *x = p;
	double u = 0;

	for (int64_t r = x->rwin[wi]; r < x->rwin[wi + 1]; r++)
		u += rowunit(p, r, lane);
	return u;
}

static double
chunkunit(void *p, int64_t ci, int lane)
{
	RowCtx *x = p;

	return 1 + walkunits(&x->w[x->walk], x->L, lane, x->ch[2 * x->n0 + ci] - x->ch[x->n0 + ci], false);
}

typedef struct RedCtx {
	const int64_t *wstart;
	int64_t W;
} RedCtx;

static double
reduceunit(void *p, int64_t t, int lane)
{
	RedCtx *x = p;
	int64_t win = t / x->W;

	(void)lane;
	return 1 + (double)(x->wstart[win + 1] - x->wstart[win]);
}

/* ---- time ----------------------------------------------------------------------- */

/* a dependent load's latency over its idle figure with par warps
 * resident: the GPU's queues fill as its warps do (g->loaded when every
 * resident warp waits on a load) */
static double
loadedlat(const CostGpu *g, double par)
{
	double f = par / ((double)g->sms * g->warps);

	return 1 + (g->loaded - 1) * (f < 1 ? f : 1);
}

/* the line's time and its bound, given its latency per unit of work
 * and whether its DRAM traffic is gathers */
static void
timeline(C *c, Line *ln, double unitlat, bool gather)
{
	const CostGpu *g = c->gpu;
	double resident = (double)g->sms * g->warps, par = ln->warps < resident ? (double)ln->warps : resident;

	/* what L2 serves was read from DRAM once: at least the least */
	if (ln->dram < ln->minb)
		ln->dram = ln->minb;
	struct {
		double t;
		const char *what;
	} b[] = {
		{ln->dram / (gather ? g->gather : g->hbm), "dram"},
		{ln->l2 / g->l2bw, "l2"},
		{ln->flops / (ln->bf16 ? BF16Rate * g->tf32 : g->fp32), ln->bf16 ? "tensor" : "fp32"},
		{ln->wf / ((double)(ln->blocks < g->sms ? ln->blocks : g->sms) * g->ghz * 1e9), "l1"},
		{ln->busiest * unitlat, "busiest warp"},
		{par > 0 ? ln->total * unitlat * loadedlat(g, par) / par : 0, "latency"},
		{g->kmin * 1e-6, "launch"},
	};

	ln->t = 0;
	for (size_t k = 0; k < sizeof b / sizeof b[0]; k++)
		if (b[k].t > ln->t) {
			ln->t = b[k].t;
			ln->bound = b[k].what;
		}
}

/* a launch of kernel fn->name + "_" + suffix */
static Line *
newline(C *c, const char *kind, const char *suffix)
{
	Line *ln;

	c->line = erealloc(c->line, (c->nline + 1) * sizeof *c->line);
	ln = &c->line[c->nline++];
	memset(ln, 0, sizeof *ln);
	ln->kind = kind;
	snprintf(ln->name, sizeof ln->name, "%s_%s", c->fn->name, suffix);
	return ln;
}

/* ---- kernels -------------------------------------------------------------------- */

/* bytes group grp reads and writes once (not per edge): the least any
 * kernel moves (int32 CSR for the segment plans) and what it adds as
 * emitted (node rows per row, weights, outputs) */
static void
groupbytes(C *c, const Kernel *k, const Walk *ws, int nw, double *minb, double *rowb)
{
	char *seen = emalloc(c->fn->nval + 1);

	memset(seen, 0, c->fn->nval + 1);
	*minb = *rowb = 0;
	for (int i = k->first; i <= k->last; i++) {
		const Ins *in = &c->fn->ins[i];
		if (attrint(in, "group", -1) != k->group || (opinfo[in->op].flags & Falias))
			continue;
		for (int a = 0; a < in->narg; a++) {
			Ref v = unalias(c->fn, in->arg[a]);
			double b;
			if (ingroup(c, v, k->group) || seen[v] || c->fn->val[v].type.kind != TTensor)
				continue;
			seen[v] = 1;
			b = bytesof(c, v);
			/* the segment plan stands for a scatter's index; the walks
			 * count what they gather and the edge tensors (walkmin) */
			if (((opinfo[in->op].flags & Fscatter) && a == 1) || in->op == Ogather || c->kind[v] == RowEdge)
				continue;
			*minb += b;
			*rowb += b;   /* read at the row (or weights, once) */
		}
		if (escapesgroup(c->fn, in->to, k->first, k->last + 1)) {
			*minb += bytesof(c, in->to);
			*rowb += bytesof(c, in->to);
		}
	}
	for (int w = 0; w < nw; w++) {
		bool dup = false;
		for (int u = 0; u < w; u++)
			dup |= ws[u].seg == ws[w].seg;
		if (!dup)
			*minb += 4 * (double)(c->seg[ws[w].seg].t + 1);   /* rowptr; the gathers' index counts the rest */
	}
	free(seen);
}

/* the least bytes walking `edges` edges of walk w reads: their indices
 * and edge tensors, and each gathered table's rows (at most all of it) */
static double
walkmin(const Walk *w, double edges)
{
	double b = edges * w->emin;

	for (int g = 0; g < w->ng; g++)
		b += fmin(w->gtb[g], edges * w->grb[g]);
	return b;
}

/* flops a row makes outside its walks: matmuls, elementwise node rows */
static double
rowflops(C *c, const Kernel *k)
{
	double f = 0;

	for (int i = k->first; i <= k->last; i++) {
		const Ins *in = &c->fn->ins[i];
		if (attrint(in, "group", -1) != k->group || c->kind[in->to] != RowNode || (opinfo[in->op].flags & (Falias | Fscatter)))
			continue;
		if (in->op == Omatmul)
			f += 2 * (double)rowof(c, in->arg[0]) * (double)rowof(c, in->to);
		else
			f += (double)rowof(c, in->to);
	}
	return f;
}

/* a row's matmuls as its lane runs them (rowkernel.c: lane l takes the
 * outputs l, l + L, ...; each a k loop that nvcc unrolls by Unroll): K
 * dependent FMAs, and per Unroll steps a round trip for the row's
 * operand: shared memory where the kernel made it, else the row in
 * global memory, which only this row's lanes read (an L2 hit in a
 * forward, a first touch after a profiler's flush) */
static double
rowchain(C *c, const Kernel *k, int L)
{
	const CostGpu *g = c->gpu;
	double t = 0;

	for (int i = k->first; i <= k->last; i++) {
		const Ins *in = &c->fn->ins[i];
		double K, rt;
		if (in->op != Omatmul || attrint(in, "group", -1) != k->group || c->kind[in->to] != RowNode)
			continue;
		K = (double)rowof(c, in->arg[0]);
		rt = ingroup(c, unalias(c->fn, in->arg[0]), k->group) ? SharedClocks / (g->ghz * 1e9)
		     : (c->prof ? g->dramns : g->l2ns) * 1e-9;
		t += ceil((double)rowof(c, in->to) / L) * (K * FmaClocks / (g->ghz * 1e9) + ceil(K / Unroll) * rt);
	}
	return t;
}

/* a warp's matmuls' L1 wavefronts a row slot (rowkernel.c): per output a lane
 * takes and k step, a load of the weights' row piece (the lanes'
 * outputs side by side: one wavefront) and of the row's operand (every
 * lane the same float: one) */
static double
rowmatwf(C *c, const Kernel *k, int L)
{
	double wf = 0;

	for (int i = k->first; i <= k->last; i++) {
		const Ins *in = &c->fn->ins[i];
		if (in->op != Omatmul || attrint(in, "group", -1) != k->group || c->kind[in->to] != RowNode)
			continue;
		wf += ceil((double)rowof(c, in->to) / L) * (double)rowof(c, in->arg[0]) * 2;
	}
	return wf;
}

/* L1 wavefronts of a walk's edge under L lanes: the permutation and
 * index, then a lane's loads of what the edge reads (below), each a
 * wavefront per row of the warp (a row's L floats are one).  A scatter of Q slices of P lanes:
 * a step's Q permutation entries are one wavefront, its Q indices and
 * each of the ceil(w / P) loads one per slice */
static double
stepwf(const Walk *w, int L)
{
	int Q = w->what == WScatter ? w->Q : 1;
	double cols = ceil((double)w->w / (L / Q)), wf = 1.0 / Q + 1;

	/* each tensor the edge's value reads, element by element where a
	 * column is read (rowkernel.c): a load a column a lane owns, or one
	 * for a narrower row (a head's score, an edge's weight) */
	for (int t = 0; t < w->nrd; t++)
		wf += fmin(cols, (double)w->rdw[t]);
	return w->nrd ? wf : wf + cols;
}

/* a split kernel's plans: C lane steps of its walk of fewest slices
 * (rowkernel.c's splitc0) */
static int64_t
splitc0(const Walk *ws, int nw, int64_t split)
{
	int q = 0;

	for (int w = 0; w < nw; w++) {
		int s = ws[w].Q;
		q = !q || s < q ? s : q;
	}
	return split * (q ? q : 1);
}

/* the walks of row kernel k under schedule s */
static int
schedwalks(C *c, const Kernel *k, const Sched *s, Walk **ws)
{
	c->copies = !s->perm;
	return collectwalks(c, k, ws);
}

static void
rowkernel(C *c, const Kernel *k, const Sched *s)
{
	Walk *ws;
	int nw = schedwalks(c, k, s, &ws), L = s->lanes > 0 ? s->lanes : 1, R = s->rows > 0 ? s->rows : 1;
	bool dl = L == 1 && R == 1, split = s->split > 0 && nw > 0;
	const int64_t **lix = emalloc((nw + 1) * sizeof *lix);
	RowCtx x = {.c = c, .w = ws, .nw = nw, .L = L, .lix = lix};
	int64_t c0;
	double minb, rowb, lat = 0, T, most = 0, rl;
	char sc[48], nm[32];
	Line *ln, chain;

	for (int w = 0; w < nw; w++) {
		/* lanes a row's (or slice's) columns are spread over: a lane
		 * leaves the column loop early unless they divide the width;
		 * then a sum's walk takes its edges in pairs (pairededges) */
		int64_t P;
		ws[w].Q = rowslices(ws[w].op, ws[w].w, L, ws[w].what == WScatter ? s->slices : 0, ws[w].esize);
		P = ws[w].Q > 1 ? (ws[w].what == WStats ? ws[w].w : L / ws[w].Q) : L;
		bool pairs = ws[w].what == WScatter && !s->single && pairededges(ws[w].op, ws[w].w, L, ws[w].Q, ws[w].heads);
		ws[w].U = P > 0 && (ws[w].w % P == 0 || pairs) ? InFlight : 1;
	}
	c0 = splitc0(ws, nw, s->split);
	schedprint(sc, sizeof sc, s);
	groupbytes(c, k, ws, nw, &minb, &rowb);
	T = nw ? (double)c->seg[ws[0].seg].t : (double)evaldim(c, c->fn->val[c->fn->ins[k->last].to].type.dim[0]);
	for (int w = 0; w < nw; w++) {
		lix[w] = NULL;
		if (ws[w].lat / ws[w].U > lat)
			lat = ws[w].lat / ws[w].U;
	}
	if (!nw)
		lat = c->gpu->l2ns * 1e-9;
	/* split: each walk's chunk kernel and reduce levels first */
	for (int w = 0; split && w < nw; w++) {
		const int64_t *p = splitof(c, ws[w].seg, c0);
		const Seg *sg = &c->seg[ws[w].seg];
		int64_t n0 = p[GNN_SPLIT_NCHUNK], W = ws[w].w, SW = ws[w].sw, edges = 0;
		/* bind's GNN_STEP_SPLITPLAN and SPLITBUF (program.c) */
		ledger(c, MemSplitPlan, ws[w].seg, c0, (int64_t)sg->planbytes, "split plan of segment plan %d, C0 = %lld",
		       ws[w].seg, (long long)c0);
		ledger(c, MemSplitPartials, k->first * 64 + w, c0,
		       (p[GNN_SPLIT_NITEMS] + p[GNN_SPLIT_NLONG]) * SW > 0 ? (p[GNN_SPLIT_NITEMS] + p[GNN_SPLIT_NLONG]) * SW * 4 : 4,
		       "split partials of %s, walk %d (%lld floats an item)", k->name, w, (long long)SW);
		lix[w] = p + p[GNN_SPLIT_LIX];
		for (int64_t r = 0; r < sg->t; r++)
			if (lix[w][r] >= 0)
				edges += sg->rowptr[r + 1] - sg->rowptr[r];
		if (n0 > 0) {
			x.ch = p + p[GNN_SPLIT_CHUNKS];
			x.n0 = n0;
			x.walk = w;
			snprintf(nm, sizeof nm, "g%d_c%d", k->group, w);
			ln = newline(c, "chunk", nm);
			snprintf(ln->sched, sizeof ln->sched, "%s, C=%lld", sc, (long long)p[GNN_SPLIT_C]);
			launchwork(ln, n0, L, R, dl, chunkunit, &x);
			ln->dram = (double)edges * ws[w].dram + (double)n0 * (24 + 4 * SW) + (double)w * n0 * 4 * SW;
			ln->l2 = (double)edges * ws[w].l2 + (double)n0 * (24 + 4 * SW);
			ln->minb = walkmin(&ws[w], (double)edges) + (double)n0 * 4 * SW;
			ln->flops = (double)edges * ws[w].flops;
			ln->wf = (double)edges * stepwf(&ws[w], L);
			timeline(c, ln, ws[w].lat / ws[w].U, true);
		}
		for (int l = 0; l < p[GNN_SPLIT_NLEV]; l++) {
			const int64_t *hd = p + GNN_SPLIT_LEVEL + GNN_SPLIT_LEVELSLOTS * l;
			RedCtx rx = {.wstart = p + hd[5], .W = W};
			if (hd[1] * W <= 0)
				continue;
			ln = newline(c, "reduce", "split_reduce");
			snprintf(ln->sched, sizeof ln->sched, "walk %d level %d", w, l);
			/* a thread a task; a level of few windows launches whole
			 * warps, not a block of 256 (rowkernel.c's split_levels) */
			launchwork(ln, hd[1] * W, 1, hd[1] * W < Threads ? (int)((hd[1] * W + 31) / 32 * 32) : Threads, false,
			           reduceunit, &rx);
			ln->dram = ln->l2 = 4 * (double)SW * (double)(hd[0] + hd[1]) + 8 * (double)(hd[0] + 2 * hd[1]);
			ln->minb = 4 * (double)SW * (double)(hd[0] + hd[1]);
			ln->flops = (double)SW * (double)hd[0] * (SW > W ? 2 : 1);
			/* a thread's items one after another: the next item's row
			 * index decides whether it continues (a load a step), after
			 * its window's bounds (two more); a profiler's flushed
			 * caches make each a DRAM round trip */
			/* the partials were just written: L2 hits, but first
			 * touches after a profiler's flush */
			rl = c->prof ? c->gpu->dramns * 1e-9 : mix(c, 1);
			timeline(c, ln, rl, false);
			if ((ln->busiest + 2) * rl > ln->t) {
				ln->t = (ln->busiest + 2) * rl;
				ln->bound = "busiest warp";
			}
		}
	}
	snprintf(nm, sizeof nm, "g%d", k->group);
	ln = newline(c, "row", nm);
	snprintf(ln->sched, sizeof ln->sched, "%s", sc);
	x.base = lat;
	x.rlat = rowchain(c, k, L);
	for (int pass = 0; pass < 2; pass++) {
		/* the work units, then the same walk over lanes in seconds of
		 * their chains (a row's matmuls are not edges) */
		x.timed = pass;
		if (split && splitof(c, ws[0].seg, c0)[GNN_SPLIT_NLONG] > 0) {
			const int64_t *p = splitof(c, ws[0].seg, c0);
			x.rwin = p + p[GNN_SPLIT_WINS];
			launchwork(pass ? &chain : ln, p[GNN_SPLIT_NWIN], L, R, dl, winunit, &x);
		} else   /* no long rows: a task a row (rowkernel.c: no windows) */
			launchwork(pass ? &chain : ln, (int64_t)T, L, R, dl, rowunit, &x);
	}
	ln->minb = minb;
	ln->dram = rowb;
	ln->l2 = rowb;
	ln->flops = T * rowflops(c, k);
	ln->wf = T * L / 32.0 * rowmatwf(c, k, L);   /* a warp holds 32 / L rows */
	/* the least: walks over the same edges read them once (the largest walk's) */
	for (int w = 0; w < nw; w++) {
		const Seg *sg = &c->seg[ws[w].seg];
		double edges = 0, nlong = 0;
		for (int64_t r = 0; r < sg->t; r++) {
			if (lix[w] && lix[w][r] >= 0)
				nlong++;
			else
				edges += (double)(sg->rowptr[r + 1] - sg->rowptr[r]);
		}
		ln->dram += edges * ws[w].dram + 16 * (double)sg->t + nlong * 4 * (double)ws[w].sw;
		ln->l2 += edges * ws[w].l2 + 16 * (double)sg->t + nlong * 4 * (double)ws[w].sw;
		ln->flops += edges * ws[w].flops;
		ln->wf += edges * stepwf(&ws[w], L);
		if (walkmin(&ws[w], edges) > most)
			most = walkmin(&ws[w], edges);
	}
	ln->minb += most;
	timeline(c, ln, 0, nw > 0);
	{
		double resident = (double)c->gpu->sms * c->gpu->warps, par = ln->warps < resident ? (double)ln->warps : resident;
		if (chain.busiest > ln->t) {
			ln->t = chain.busiest;
			ln->bound = "busiest warp";
		}
		if (par > 0 && chain.total * loadedlat(c->gpu, par) / par > ln->t) {
			ln->t = chain.total * loadedlat(c->gpu, par) / par;
			ln->bound = "latency";
		}
	}
	free(lix);
	free(ws);
}

/*
 * cuda's tiled GEMM (gemmcuda.c), measured on an H100 at 499 us for
 * Cora's x[2708, 1433] @ W[1433, 16] under bm=128,bn=16,bk=16,tm=8,tn=4
 * (22 blocks of 64 threads, 90 slabs): a latency chain, not a
 * throughput bound.  A block's time is its slabs one after another, each
 * the staging loads of a thread issued one after another (in the PTX
 * each sits under its own bounds branch before its shared store: no two
 * in flight), an L2 round trip each, then the slab's FMAs and shared
 * loads at a warp's one instruction a clock (more when more warps than
 * an SM's 4 schedulers share it).  Blocks run ceil(blocks / (resident *
 * SMs)) waves, the last perhaps partly full; resident blocks an SM are
 * the least of its 32 blocks, 64 warps, 64K registers (a thread's:
 * tm*tn accumulators, tm + tn operands and about 48 of addresses and
 * loop state; ptxas reports 95 for Cora's, 96 split) and shared memory
 * (228 KB on an H100, 164 KB on an A100; 1 KB of it reserved a block).  Split K
 * (ksplit) shortens each block's run of slabs and adds a kernel that sums
 * the parts in order.  Cora's figure: 32 scalar loads of A and 1 float4
 * of B a slab, 4.95 us, plus 16 * 35 clocks: 89 full slabs and a short
 * one, 472 us.
 */

/* lanes of a warp that one shared load of the bfloat16 step's B fragment
 * puts in the same bank at different addresses (the load's wavefronts):
 * lane (g, t) reads bs_[2t * ldb + g], rows of ldb = bn + 4 floats */
static int
bf16bconflict(int bn)
{
	int most = 1;

	for (int bank = 0; bank < 32; bank++) {
		int n = 0;
		for (int lane = 0; lane < 32; lane++)
			n += (2 * (lane % 4) * (bn + 4) + lane / 4) % 32 == bank;
		most = n > most ? n : most;
	}
	return most;
}

/* a slab of depth d: the staging chain and the FMA issue, in seconds,
 * with w warps sharing the SM; bf16: the bfloat16 tensor-core step
 * (gemmcuda.c's bf16slab), which pads the slab to a multiple of 16 */
static double
gemmslab(const C *c, const Sched *s, int64_t K, int64_t P, int d, double w, bool bf16)
{
	int nt = s->bm / s->tm * (s->bn / s->tn), va = K % 4 == 0 && s->bk % 4 == 0 ? 4 : 1, vb = P % 4 == 0 ? 4 : 1;
	int ntx = s->bn / s->tn, dty = ntx >= 32 ? 1 : 32 / ntx, dtx = ntx < 32 ? ntx : 32, dp = bf16 ? (d + 15) / 16 * 16 : d;
	double la = ceil((double)s->bm * dp / va / nt);
	double lb = ceil((double)dp * s->bn / vb / nt);
	/* the staging stores: a wavefront per 32 floats */
	double issue, smem = w * (la * va + lb * vb);

	if (bf16) {
		/* a warp's k-step of 16 for each of its tm*tn/4 tiles: 8 shared
		 * loads of A (conflict-free: lda = bm + 4 puts the lanes' rows
		 * in distinct banks), 4 packs and the mma; and B's 4 loads and
		 * 2 packs, once a step where the warp's tiles share a column
		 * band (gemmcuda.c's bf16slab), else a tile; an instruction a
		 * clock each */
		double steps = (double)(dp / 16), tiles = s->tm * s->tn / 4, bf = nt / 32 % (s->bn / 8) == 0 ? 1 : tiles;
		issue = steps * (tiles * (BF16Issue + 8 + 4) + bf * (4 + 2)) * (w > 4 ? w / 4 : 1);
		smem += w * steps * (tiles * 8 + bf * 4 * bf16bconflict(s->bn));
	} else {
		/* the FMAs and the shared memory pipe, a 128-byte wavefront a
		 * clock: a warp's k step reads its rows' A fragments (32 /
		 * (bn/tn) distinct rows; one, broadcast, when a warp is one row
		 * of threads) and its columns' B fragments, float4 by float4 */
		double wfk = ceil(s->tm / 4.0) * ceil(dty * 16 / 128.0) + ceil(s->tn / 4.0) * ceil(dtx * 16 / 128.0);
		issue = (double)d * (s->tm * s->tn * FmaIssue + ceil(s->tm / 4.0) + ceil(s->tn / 4.0)) * (w > 4 ? w / 4 : 1);
		smem += w * (double)d * wfk;
	}
	return (la + lb) * c->gpu->l2ns * 1e-9 + fmax(issue, smem) / (c->gpu->ghz * 1e9);
}

static void
gemmkernel(C *c, Line *ln, const char *kname, const Sched *s, double N, double K, double P, bool o16, bool bf16)
{
	const CostGpu *g = c->gpu;
	int nt = s->bm / s->tm * (s->bn / s->tn), wb = nt / 32, S = gemmparts(s, (int64_t)N, (int64_t)K, (int64_t)P, o16);
	int regs = ((s->tm * s->tn + s->tm + s->tn + 48) + 7) / 8 * 8, res = 32, r;
	double mt = ceil(N / s->bm), nt2 = ceil(P / s->bn), T = mt * nt2, B = T * S, waves, perblock, w, t, eff;
	int64_t slabs = (int64_t)K / s->bk, per = (slabs + S - 1) / S, sh = (int64_t)K - slabs * s->bk;
	char sc[96];

	if (regs > 255)
		regs = 255;
	if ((r = g->warps / wb) < res)
		res = r;
	if ((r = 65536 / (regs * nt)) < res)
		res = r;
	if ((r = g->smemkb * 1024 / (gemmsharedbytes(s) + (bf16 ? 16 * s->bk : 0) + 1024)) < res)   /* bf16: B's longer rows */
		res = r;
	if (res < 1)
		res = 1;
	waves = ceil(B / ((double)res * g->sms));
	/* warps an SM holds in the full waves */
	w = (B < (double)res * g->sms ? ceil(B / g->sms) : res) * wb;
	/* the busiest block: a full part, or the last with the short slab */
	perblock = (double)per * gemmslab(c, s, (int64_t)K, (int64_t)P, s->bk, w, bf16);
	if (sh) {
		double last = (double)(slabs - (S - 1) * per) * gemmslab(c, s, (int64_t)K, (int64_t)P, s->bk, w, bf16) +
		              gemmslab(c, s, (int64_t)K, (int64_t)P, (int)sh, w, bf16);
		perblock = fmax(perblock, last);
	}
	launchwork(ln, (int64_t)B, nt, 1, false, oneunit, NULL);
	ln->bf16 = bf16;
	/* A once per column tile, B once per row tile, from L2; the parts
	 * write S copies of the output */
	ln->l2 = 4 * (N * K * nt2 + K * P * mt + S * N * P);
	timeline(c, ln, 0, false);
	t = waves * perblock;
	if (t > ln->t) {
		ln->t = t;
		ln->bound = "latency";
	}
	/* the FMA pipes at 70% (cuBLAS's) of the register tile's rate, on
	 * the SMs that have a block; bfloat16 tensor cores at 70% of their
	 * dense rate, twice TF32's on the H100 and the A100 */
	eff = bf16 ? 1 : (s->tm * s->tn / 4.0) / (ceil(s->tm / 4.0) + ceil(s->tn / 4.0));
	t = ln->flops / ((bf16 ? BF16Rate * g->tf32 : g->fp32) * 0.7 * (eff < 1 ? eff : 1)) * (B < g->sms ? g->sms / B : 1);
	if (t > ln->t) {
		ln->t = t;
		ln->bound = bf16 ? "tensor" : "fp32";
	}
	snprintf(sc, sizeof sc, "%s", ln->sched);
	snprintf(ln->sched, sizeof ln->sched, "%.48s, parts=%d, %d blocks/SM, %.0f wave%s", sc, S, res, waves, waves == 1 ? "" : "s");
	if (S > 1) {
		/* the parts' sum: a thread an output, S loads from L2 in order */
		char sfx[48];
		Line *sum;
		snprintf(sfx, sizeof sfx, "%.40s_ksum", kname);
		sum = newline(c, "dense", sfx);   /* ln moves with the lines */
		snprintf(sum->sched, sizeof sum->sched, "%d parts", S);
		launchwork(sum, (int64_t)(N * P), 1, 1, true, oneunit, NULL);
		sum->minb = 4 * 2 * N * P;
		sum->dram = 4 * (S + 1) * N * P;
		sum->l2 = sum->dram;
		sum->flops = (S - 1) * N * P;
		timeline(c, sum, S * g->l2ns * 1e-9, false);
	}
}

/*
 * cuda's sparse-input GEMM (spgemmcuda.c): a warp a row of A, W rows a
 * block.  Bytes: A read once, dense (every element is read to find the
 * non-zeros), B and the output once from DRAM; from L2 besides, B's row
 * (its 32-byte sectors) for each non-zero.  A warp's chain: its row's
 * runs of 8 reads of 32 floats, a DRAM round trip each (the eight in
 * flight together), then for each non-zero a shuffle and B's row, an L2
 * round trip and 32 clocks of shuffle, bit scan and multiply-add (the
 * loop's next address waits on the ballot's bits, so the loads do not
 * overlap).  Warps are rows: the waves of resident warps at the mean
 * row's chain (timeline's latency bound) and the busiest warp's rows at
 * the densest row's.  The
 * density d is k->adensity (--input-density; not stated: 1, a dense A,
 * where the tiled GEMM is far ahead).
 */
static void
spgemmkernel(C *c, Line *ln, const Sched *s, double N, double K, double P, double d)
{
	const CostGpu *g = c->gpu;
	double nnz = d * K, most = fmin(K, nnz + 3 * sqrt(nnz * (1 - d))), t;
	double step = g->l2ns * 1e-9 + 32 / (g->ghz * 1e9), reads = ceil(K / 256) * g->dramns * 1e-9;
	char sc[96];

	launchwork(ln, (int64_t)N, 32, s->sparse, false, oneunit, NULL);
	ln->flops = 2 * N * nnz * P;
	ln->l2 = ln->dram + N * nnz * sect(4 * P);
	/* every lane a float a read, and a row of B a non-zero */
	ln->wf = N * (ceil(K / 32) + nnz * ceil(4 * P / 128));
	timeline(c, ln, reads + nnz * step, false);
	/* the busiest warp's row: a binomial count's mean plus three
	 * standard deviations (Cora: 18.2 and 31; its densest row has 30) */
	t = ln->busiest * (reads + most * step);
	if (t > ln->t) {
		ln->t = t;
		ln->bound = "busiest warp";
	}
	snprintf(sc, sizeof sc, "%s", ln->sched);
	snprintf(ln->sched, sizeof ln->sched, "%.60s, density %.3g", sc, d);
}

/*
 * A vendor call (gnncc --vendor, codegen/vendor.c): cuBLAS's SGEMM at
 * 70% of the FP32 peak where the flops bound it (its own tiles and split
 * K fill the device), else A, B and C once at HBM's streaming rate, and
 * at least a least kernel.  One launch, as the profile lists it (grid 0:
 * the library picks its own).  Cora's x[2708, 1433] @ W[1433, 16] is
 * 5.5 us of DRAM (measured on an H100: about 10 us).
 */
static void
vendorgemm(C *c, Line *ln)
{
	const CostGpu *g = c->gpu;
	const struct {
		double t;
		const char *what;
	} b[] = {{ln->flops / (g->fp32 * 0.7), "fp32"}, {ln->dram / g->hbm, "dram"}, {g->kmin * 1e-6, "launch"}};

	ln->l2 = ln->dram;
	ln->t = 0;
	for (size_t i = 0; i < sizeof b / sizeof b[0]; i++)
		if (b[i].t > ln->t) {
			ln->t = b[i].t;
			ln->bound = b[i].what;
		}
}

static void
densekernel(C *c, const Kernel *k, const Sched *s)
{
	const Ins *in = &c->fn->ins[k->first];
	double N = elems(c, in->arg[0]) / (double)(rowof(c, in->arg[0]) ? rowof(c, in->arg[0]) : 1);
	double K = (double)k->msgwidth, P = (double)k->width;
	Line *ln = newline(c, "dense", k->name);
	Ref to = k->epi ? c->fn->ins[k->last].to : in->to;   /* what it stores (an epilogue's last value) */
	bool o16 = valstoredtype(c->fn, to) != DNone;
	double epib = 0;   /* an epilogue's operands: a bias, or a value of the output's shape */

	schedprint(ln->sched, sizeof ln->sched, s);
	ln->flops = 2 * N * K * P;
	for (int i = k->first + 1; k->epi && i <= k->last; i++)
		for (int a = 0; a < c->fn->ins[i].narg; a++)
			if (c->fn->ins[i].arg[a] != c->fn->ins[i - 1].to)
				epib += bytesof(c, c->fn->ins[i].arg[a]);
	ln->minb = ln->dram = valelemsize(c->fn, in->arg[0]) * N * K + 4 * K * P + valelemsize(c->fn, to) * N * P + epib;
	if (s->vendor) {
		vendorgemm(c, ln);
		if (k->epi) {
			/* the epilogue's own launch after cuBLAS (vendor.c): the
			 * float32 output read and written, the operands read */
			char nm[48];
			Line *ep;
			snprintf(nm, sizeof nm, "%.40s_epi", k->name);
			ep = newline(c, "elementwise", nm);
			snprintf(ep->sched, sizeof ep->sched, "default");
			ep->minb = ep->dram = ep->l2 = 2 * 4 * N * P + epib;
			ep->flops = N * P * (k->last - k->first);
			launchwork(ep, (int64_t)(N * P), 1, 1, true, oneunit, NULL);
			timeline(c, ep, 0, false);
		}
		return;
	}
	if (s->bm) {
		/* bind's GNN_STEP_SCRATCH: gemmcuda.c's parts, at most
		 * ksplit - 1 rows of P a row of A (ksplit with a 16-bit output) */
		if (s->ksplit > 1 && (int64_t)K / s->bk >= 2) {
			int64_t fl = gemmkscratch(s, (int64_t)K, (int64_t)P), per = (int64_t)(s->ksplit - !o16) * (int64_t)P;
			if (per > 0 && per <= INT_MAX && (int64_t)N <= fl / per)
				fl = (int64_t)N * per;
			ledger(c, MemKsplit, k->first, 0, (fl > 0 ? fl : 1) * 4, "split-K parts of %s", k->name);
		}
		gemmkernel(c, ln, k->name, s, N, K, P, o16, gemmbf16(c->fn, in, s));
		return;
	}
	if (s->sparse) {
		spgemmkernel(c, ln, s, N, K, P, k->adensity > 0 ? k->adensity : 1);
		return;
	}
	/* one thread per column and tile of rows, no shared memory: a warp's
	 * 32 columns share A's loads, and each k step is a load of A and B
	 * per row of the tile (L1 wavefronts) */
	{
		int tile = s->tile > 0 ? s->tile : 1;
		double threads = ceil(N / tile) * P;
		launchwork(ln, (int64_t)threads, 1, 1, true, oneunit, NULL);
		ln->l2 = 4 * (N * K * ceil(P / 32) + K * P * ceil(N / tile) / 32 + N * P);
		ln->wf = (double)ln->warps * K * (tile + 1);
		/* a thread's chain: its k loop, an L2 round trip a step where
		 * 4K bytes rows make every step cross a sector somewhere, an
		 * eighth of one where a sector serves 8 steps */
		timeline(c, ln, K * c->gpu->l2ns * 1e-9 * ((int64_t)(4 * K) % 32 ? 1 : 0.125), false);
	}
}

static void
elemkernel(C *c, const Kernel *k)
{
	Line *ln = newline(c, "elementwise", k->name);
	char *seen = emalloc(c->fn->nval + 1);
	double T = 0;

	memset(seen, 0, c->fn->nval + 1);
	snprintf(ln->sched, sizeof ln->sched, "default");
	for (int i = k->first; i <= k->last; i++) {
		const Ins *in = &c->fn->ins[i];
		if (opinfo[in->op].flags & Falias)
			continue;
		for (int a = 0; a < in->narg; a++) {
			Ref v = unalias(c->fn, in->arg[a]);
			if (!seen[v] && c->fn->val[v].type.kind == TTensor) {
				seen[v] = 1;
				ln->minb += bytesof(c, v);
			}
		}
		ln->minb += bytesof(c, in->to);
		if (elems(c, in->to) > T)
			T = elems(c, in->to);
	}
	free(seen);
	ln->dram = ln->l2 = ln->minb;
	ln->flops = T;
	launchwork(ln, (int64_t)T, 1, 1, true, oneunit, NULL);
	timeline(c, ln, 0, false);
}

/*
 * A training step's optimizer update (runtime/optim.cu's opt_step): one
 * launch over every trained tensor's elements, about 4 a thread, 256
 * threads a block, at most 2^16 blocks (grid-stride).  Per element it
 * reads the weight, its gradient and the optimizer's state (Adam's two
 * moments, SGD's momentum buffer if any) and writes the weight and the
 * state: a streaming kernel.  None where nothing is trained.
 */
enum { OptThreads = 256, OptPer = 4, OptMaxBlocks = 1 << 16, StepHostCalls = 4 };

static void
optline(C *c)
{
	const TrainInfo *ti = c->fn->train;
	int state = strcmp(ti->optimizer, "sgd") ? 2 : ti->momentum != 0;
	double T = 0;
	int64_t blocks;
	Line *ln;

	for (int k = 0; k < ti->nparam; k++)
		T += elems(c, c->fn->ret[1 + k]);
	if (T <= 0)
		return;
	ln = newline(c, "optimizer", "opt");
	snprintf(ln->name, sizeof ln->name, "opt_step");
	snprintf(ln->sched, sizeof ln->sched, "-");
	blocks = ((int64_t)T + OptThreads * OptPer - 1) / (OptThreads * OptPer);
	ln->blocks = blocks < OptMaxBlocks ? blocks : OptMaxBlocks;
	ln->tpb = OptThreads;
	ln->warps = ln->blocks * (OptThreads / 32);
	/* an element a unit; a warp's first lane has the most (grid-stride) */
	for (int64_t w = 0, n = (int64_t)T, stride = ln->blocks * OptThreads; w < ln->warps && 32 * w < n; w++) {
		double u = (double)((n - 1 - 32 * w) / stride + 1);
		ln->total += u;
		if (u > ln->busiest)
			ln->busiest = u;
	}
	ln->minb = ln->dram = ln->l2 = T * sizeof(float) * (3 + 2 * state);
	ln->flops = T * (state == 2 ? 10 : 2 + 2 * state);   /* a multiply-add counts one */
	timeline(c, ln, 0, false);
}

/* ---- the report ------------------------------------------------------------------ */

/* fn's graph input, or RNone: none, or several (a heterogeneous graph's
 * relations: the model binds one degree table, one graph's) */
static Ref
graphinput(const Fn *fn)
{
	Ref g = RNone;

	for (int i = 0; i < fn->narg; i++)
		if (fn->val[fn->arg[i]].type.kind == TGraph) {
			if (g != RNone)
				return RNone;
			g = fn->arg[i];
		}
	return g;
}

/* --report-graph's graph input of fn, or RNone after a message */
Ref
reportgraphinput(const Fn *fn)
{
	int n = 0;

	for (int i = 0; i < fn->narg; i++)
		n += fn->val[fn->arg[i]].type.kind == TGraph;
	if (n == 0)
		fprintf(stderr, "gnncc: error: --report-graph: model %s has no graph input\n", fn->name);
	else if (n > 1)
		fprintf(stderr, "gnncc: error: --report-graph: model %s has %d graph inputs (relations); "
		        "--report-graph gives one graph, for a model of one\n", fn->name, n);
	return graphinput(fn);
}

/*
 * The degrees of every graph value bind makes (the input's, already in
 * c->dg, then the derived graphs in order) and the sizes of fn's symbols
 * they fix.  Returns false after a message (what: the graph's name).
 */
static bool
bindgraphs(C *c, const char *what)
{
	Fn *fn = c->fn;
	Ref garg = graphinput(fn);
	const char *dims[2] = {"nodes", "edges"};

	for (int s = 0; s < c->m->nsym; s++)
		c->symval[s] = -1;
	for (int k = 0; k < 2 && k < fn->val[garg].type.rank; k++) {
		int64_t have = k ? c->dg[garg].e : c->dg[garg].n;
		if (!dimbind(c->m, fn->val[garg].type.dim[k], have, c->symval)) {
			fprintf(stderr, "gnncc: error: --report-graph: model %s takes ", fn->name);
			fprintdim(stderr, c->m, fn->val[garg].type.dim[k]);
			fprintf(stderr, " %s, %s has %lld\n", dims[k], what, (long long)have);
			return false;
		}
	}
	for (int i = 0; i < fn->nins; i++) {
		const Ins *in = &fn->ins[i];
		if (fn->val[in->to].type.kind != TGraph || !in->narg || !c->dg[in->arg[0]].in)
			continue;
		if (in->op != Oadd_self_loops && in->op != Oremove_self_loops && in->op != Oadd_remaining_self_loops)
			continue;
		degderive(&c->dg[in->to], &c->dg[in->arg[0]], in->op);
		if (fn->val[in->to].type.rank > 1 && !dimbind(c->m, fn->val[in->to].type.dim[1], c->dg[in->to].e, c->symval)) {
			fprintf(stderr, "gnncc: error: --report-graph: %s of %s has %lld edges, which the model's ",
			        opinfo[in->op].name, what, (long long)c->dg[in->to].e);
			fprintdim(stderr, c->m, fn->val[in->to].type.dim[1]);
			fprintf(stderr, " does not fit\n");
			return false;
		}
	}
	return true;
}

/* the model's state for fn on gpu; its graph's degrees still to come */
static C *
cnew(FILE *f, Mod *m, Fn *fn, int gpu)
{
	C *c = emalloc(sizeof *c);

	memset(c, 0, sizeof *c);
	c->f = f;
	c->fn = fn;
	c->m = m;
	c->gpu = &costgpus[gpu];
	c->kind = emalloc(fn->nval + 1);
	c->eg = emalloc((fn->nval + 1) * sizeof *c->eg);
	c->symval = emalloc((m->nsym + 1) * sizeof *c->symval);
	c->dg = emalloc((fn->nval + 1) * sizeof *c->dg);
	memset(c->dg, 0, (fn->nval + 1) * sizeof *c->dg);
	rowkinds(fn, c->kind, c->eg);
	c->phase = emalloc(fn->nval + 1);
	phases(fn, c->phase);
	return c;
}

static void
cfree(C *c)
{
	if (!c)
		return;
	for (int s = 0; s < c->nseg; s++) {
		free(c->seg[s].rowptr);
		if (c->seg[s].plan)
			gnn_free(c->seg[s].plan, c->seg[s].planbytes);
	}
	for (int v = 0; v < c->fn->nval; v++)
		degfree(&c->dg[v]);
	free(c->seg);
	free(c->mem);
	free(c->line);
	free(c->dg);
	free(c->symval);
	free(c->eg);
	free(c->kind);
	free(c->phase);
	free(c);
}

/* kernel k's launches under s, appended to c->line */
static void
modelkernel(C *c, const Kernel *k, const Sched *s)
{
	if (k->kind == KernelRow)
		rowkernel(c, k, s);
	else if (k->kind == KernelDense)
		densekernel(c, k, s);
	else
		elemkernel(c, k);
}

/* o's graph read and bound, and every kernel of forward modeled (*ks:
 * them); the kernel count, or -1 after a message */
static int
modelall(C *c, const ReportOpts *o, Ref garg, Kernel **ks)
{
	Fn *fn = c->fn;
	int nk = listkernels(fn, ks);

	setdensities(fn, *ks, nk, o->density);
	if (!readgraph(o, &c->dg[garg]) || !bindgraphs(c, o->graph))
		return -1;
	for (int k = 0; k < nk; k++) {
		Sched s;
		schedof(&fn->ins[(*ks)[k].first], &s);
		modelkernel(c, &(*ks)[k], &s);
	}
	return nk;
}

static void
printline(C *c, const Line *ln)
{
	double mean = ln->warps ? ln->total / (double)ln->warps : 0, lb = ln->minb / c->gpu->hbm;

	fprintf(c->f, "  %-20s %-11s %s\n", ln->name, ln->kind, ln->sched);
	fprintf(c->f, "    grid=%lldx%lld warps=%lld work=%.0f busiest=%.0f (block %lld, warp %lld) busiest/mean=%.2f share=%.3g%%\n",
	        (long long)ln->blocks, (long long)ln->tpb, (long long)ln->warps, ln->total, ln->busiest, (long long)ln->bblock,
	        (long long)ln->bwarp, mean > 0 ? ln->busiest / mean : 0, ln->total > 0 ? 100 * ln->busiest / ln->total : 0);
	fprintf(c->f, "    bytes: min=%.0f dram=%.0f l2=%.0f  flops=%.0f  time=%.2f us (%s)  dram-lower-bound=%.0f%%\n",
	        ln->minb, ln->dram, ln->l2, ln->flops, ln->t * 1e6, ln->bound, ln->t > 0 ? 100 * lb / ln->t : 0);
}

static void
printdevice(FILE *f, const CostGpu *g)
{
	fprintf(f, "device %s (%s): %d SMs at %.3f GHz, %d resident warps an SM; FP32 %.1f TFLOP/s, TF32 %.0f TFLOP/s; "
	        "HBM %.2f TB/s streaming, %.2f TB/s gathering; L2 %.0f MB at %.1f TB/s; latency L2 %.0f ns, DRAM %.0f ns; "
	        "launch %.1f us host, %.1f us gap, %.1f us least kernel\n",
	        g->name, g->what, g->sms, g->ghz, g->warps, g->fp32 / 1e12, g->tf32 / 1e12, g->hbm / 1e12, g->gather / 1e12,
	        g->l2 / 1e6, g->l2bw / 1e12, g->l2ns, g->dramns, g->launch, g->gap, g->kmin);
}

int
reportcost(FILE *f, Mod *m, Fn *fn, const ReportOpts *o)
{
	C *c;
	Kernel *ks = NULL;
	int nk, rc = 0;
	double t = 0, minb = 0, dram = 0, flops = 0;
	Ref garg;

	if (!o->graph) {
		fprintf(stderr, "gnncc: error: --report=cost needs --report-graph (an edge_index .npy or preset:NAME)\n");
		return -1;
	}
	if ((garg = reportgraphinput(fn)) == RNone)
		return -1;
	c = cnew(f, m, fn, o->gpu);
	if ((c->prof = o->profiler)) {
		/* a profiler replays a launch alone: clocks at base, caches
		 * flushed, so every dependent load waits longer */
		c->pg = *c->gpu;
		c->pg.l2ns *= c->pg.prof;
		c->gpu = &c->pg;
		c->cold = ColdShare;
	}
	if ((nk = modelall(c, o, garg, &ks)) < 0) {
		rc = -1;
		goto out;
	}
	if (fn->train)
		optline(c);
	printdevice(f, c->gpu);
	fprintf(f, "graph %s:", o->graph);
	for (int s = 0, k = 0; s < m->nsym; s++)
		if (c->symval[s] >= 0)
			fprintf(f, "%s %s = %lld", k++ ? "," : "", m->sym[s].name, (long long)c->symval[s]);
	fputc('\n', f);
	for (int s = 0; s < c->nseg; s++) {
		const Seg *sg = &c->seg[s];
		int64_t mx = 0;
		for (int64_t r = 0; r < sg->t; r++)
			if (sg->rowptr[r + 1] - sg->rowptr[r] > mx)
				mx = sg->rowptr[r + 1] - sg->rowptr[r];
		fprintf(f, "segment plan %d: %lld rows, %lld edges, largest row %lld", s, (long long)sg->t, (long long)sg->e,
		        (long long)mx);
		if (sg->plan)
			fprintf(f, "; split at C=%lld: %lld long rows, %lld chunks, %lld reduce levels", (long long)sg->plan[GNN_SPLIT_C],
			        (long long)sg->plan[GNN_SPLIT_NLONG], (long long)sg->plan[GNN_SPLIT_NCHUNK],
			        (long long)sg->plan[GNN_SPLIT_NLEV]);
		fputc('\n', f);
	}
	fprintf(f, "launches: %d per %s\n", c->nline, fn->train ? "step" : "forward");
	for (int k = 0; k < c->nline; k++) {
		printline(c, &c->line[k]);
		t += c->line[k].t + c->gpu->gap * 1e-6;
		minb += c->line[k].minb;
		dram += c->line[k].dram;
		flops += c->line[k].flops;
	}
	if (fn->train) {
		/* the step's host calls (runtime/train.c): the dropout key's
		 * upload, the body's launch (a graph's replay), the loss read
		 * back before the update (the stream drains), the optimizer's
		 * launch after it, a copy per buffer the step updates
		 * (BatchNorm's statistics); the body's once-time values (the
		 * invariant pass's) are kept from the step before */
		int opt = c->nline > 0 && !strcmp(c->line[c->nline - 1].name, "opt_step");
		int host = StepHostCalls + fn->train->nupdate;
		t += host * c->gpu->launch * 1e-6;
		fprintf(f, "step: %d launches (the body's %d%s), %.2f us (kernels and a %.1f us gap each, and %d host calls "
		        "of %.1f us the step waits on: the key's upload, the body's launch, the loss read back before the "
		        "update, the optimizer's launch, %d updated buffers' copies; the once-time values kept from the step "
		        "before), bytes min=%.0f dram=%.0f, flops=%.0f, dram-lower-bound=%.0f%%\n",
		        c->nline, c->nline - opt, opt ? " and the optimizer's" : "", t * 1e6, c->gpu->gap, host,
		        c->gpu->launch, fn->train->nupdate, minb, dram, flops, t > 0 ? 100 * minb / c->gpu->hbm / t : 0);
	} else
		fprintf(f, "forward: %d launches, %.2f us (kernels and a %.1f us gap each; %.1f us of host launches, which a "
		        "CUDA Graph replay hides), bytes min=%.0f dram=%.0f, flops=%.0f, dram-lower-bound=%.0f%%\n",
		        c->nline, t * 1e6, c->gpu->gap, c->nline * c->gpu->launch, minb, dram, flops,
		        t > 0 ? 100 * minb / c->gpu->hbm / t : 0);
out:
	cfree(c);
	free(ks);
	return rc;
}

/* ---- --report=memory's use ------------------------------------------------------- */

int
costmemory(Mod *m, Fn *fn, const ReportOpts *o, int64_t **symval, MemItem **items, int *nitems)
{
	C *c;
	Kernel *ks = NULL;
	int rc = 0;
	Ref garg = reportgraphinput(fn);

	*symval = NULL;
	*items = NULL;
	*nitems = 0;
	if (garg == RNone)
		return -1;
	c = cnew(NULL, m, fn, o->gpu);
	c->led = true;
	if (modelall(c, o, garg, &ks) < 0) {
		rc = -1;
		goto out;
	}
	*symval = emalloc((m->nsym + 1) * sizeof **symval);
	memcpy(*symval, c->symval, m->nsym * sizeof **symval);
	*items = c->mem;
	*nitems = c->nmem;
	c->mem = NULL;
out:
	cfree(c);
	free(ks);
	return rc;
}

/* ---- the schedule picker's use ------------------------------------------------------ */

struct CostModel {
	C *c;
};

CostModel *
costmodel(Mod *m, Fn *fn, const gnn_graph *g)
{
	CostModel *cm;
	Ref garg = graphinput(fn);

	if (garg == RNone || !g)
		return NULL;
	cm = emalloc(sizeof *cm);
	cm->c = cnew(NULL, m, fn, 0);
	degfromedges(&cm->c->dg[garg], gnn_graph_src(g), gnn_graph_dst(g), gnn_graph_num_nodes(g), gnn_graph_num_edges(g));
	if (!bindgraphs(cm->c, "the schedules' graph")) {
		costmodelfree(cm);
		return NULL;
	}
	return cm;
}

double
costtime(CostModel *cm, const Kernel *k, const Sched *s)
{
	C *c = cm->c;
	int n0 = c->nline;
	double t = 0;

	modelkernel(c, k, s);
	for (int i = n0; i < c->nline; i++)
		t += c->line[i].t + c->gpu->gap * 1e-6;
	c->nline = n0;
	return t;
}

void
costpickgpu(CostModel *cm, const Kernel *k, const SchedTarget *st, const GraphStats *gs, Sched *best)
{
	Sched sp[256];
	int n = schedspace(k, st, sp, 256), b = 0;
	double bt = 0, bc = 0;

	for (int i = 0; i < n; i++) {
		double t = costtime(cm, k, &sp[i]), c = schedcost(k, st, gs, &sp[i]);
		/* equal times (a small graph: every launch at the least
		 * kernel's) go to the rough model's ranking */
		if (i == 0 || t < bt * 0.999 || (t <= bt * 1.001 && c < bc * 0.999)) {
			bt = t;
			bc = c;
			b = i;
		}
	}
	*best = sp[b];
}

void
costmodelfree(CostModel *cm)
{
	if (!cm)
		return;
	cfree(cm->c);
	free(cm);
}

/* ---- --input-density ------------------------------------------------------------ */

/* the entry of list at p: its name's length and its value; the next
 * entry's start, or NULL after a message in err */
static const char *
densityentry(const char *p, size_t *namelen, double *d, char *err, size_t errlen)
{
	char *end;

	*namelen = strcspn(p, "=,");
	if (!*namelen || p[*namelen] != '=') {
		snprintf(err, errlen, "expected NAME=D at '%.32s'", p);
		return NULL;
	}
	*d = strtod(p + *namelen + 1, &end);
	if (end == p + *namelen + 1 || (*end && (*end != ',' || !end[1])) || !(*d > 0 && *d <= 1)) {
		snprintf(err, errlen, "%.*s: a share of non-zeros is a number in (0, 1]", (int)(*namelen > 32 ? 32 : *namelen), p);
		return NULL;
	}
	return *end ? end + 1 : end;
}

int
densitycheck(const char *list, char *err, size_t errlen)
{
	const char *p = list;
	size_t n;
	double d;

	if (!*p) {
		snprintf(err, errlen, "expected NAME=D");
		return -1;
	}
	while (*p)
		if (!(p = densityentry(p, &n, &d, err, errlen)))
			return -1;
	return 0;
}

double
densityof(const char *list, const char *name)
{
	char err[160];
	double found = 0;

	for (const char *p = list; p && name && *p;) {
		size_t len;
		double d;
		const char *q = densityentry(p, &len, &d, err, sizeof err);
		if (!q)
			die("densityof: %s", err);   /* densitycheck passed it */
		if (strlen(name) == len && !strncmp(p, name, len))
			found = d;
		p = q;
	}
	return found;
}

void
setdensities(const Fn *fn, Kernel *ks, int n, const char *list)
{
	for (int j = 0; j < n && list; j++) {
		Ref v;
		if (ks[j].kind != KernelDense)
			continue;
		v = unalias(fn, fn->ins[ks[j].first].arg[0]);
		if (fn->val[v].def < 0)
			ks[j].adensity = densityof(list, fn->val[v].name);
	}
}

int
densitynames(Mod *m, const char *list, char *err, size_t errlen)
{
	const char *p = list;

	while (p && *p) {
		size_t len;
		double d;
		const char *q = densityentry(p, &len, &d, err, errlen);
		bool found = false;
		if (!q)
			return -1;
		for (const Fn *fn = m->fn; fn && !found; fn = fn->link)
			for (int i = 0; i < fn->narg && !found; i++) {
				const Val *v = &fn->val[fn->arg[i]];
				found = v->type.kind == TTensor && v->name && strlen(v->name) == len && !strncmp(v->name, p, len);
			}
		if (!found) {
			snprintf(err, errlen, "no model has a tensor input '%.*s'", (int)(len > 32 ? 32 : len), p);
			return -1;
		}
		p = q;
	}
	return 0;
}
