/*
 * schedule: the schedule space of every kernel of forward, and the cost
 * model that picks one when nothing better is known.
 *
 * Kernels are those of forwardkernels(): a fusion group is a row kernel
 * (aggregation, attention or row epilogue), a lone rank-2 matmul with
 * constant inner and outer widths is a dense transform, anything else is
 * an elementwise kernel with nothing to choose.  The chosen schedule is
 * the typed schedule of the kernel's first instruction (ir/sched.c);
 * the pass only sets schedules, so it never changes what is computed.
 *
 * The space is explicit and small enough to search exhaustively in a
 * tuning run: lanes per row and rows per block for row kernels on the
 * GPU, rows per task and loop order for dense transforms, loop order and
 * OpenMP chunking on the CPU.  Its first entry is the reference schedule
 * every candidate is checked against.
 *
 * The cost model is a rough roofline: bytes moved and work done under the
 * schedule, with penalties for idle lanes, uncoalesced loads and load
 * imbalance from skewed degrees.  Its only job is to rank candidates of
 * one kernel; the numbers are not times.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "../runtime/gnnrt.h"
#include "passes.h"

static int64_t
rowwidth(const Fn *fn, Ref v)
{
	const Type *t = &fn->val[v].type;
	int64_t w = 1;
	int k;

	for (k = 1; k < t->rank; k++)
		w *= dimisconst(t->dim[k]) ? dimconstval(t->dim[k]) : 1;
	return w;
}

/* a rank-2 [M, K] @ [K, P] with constant K and P */
bool
isdense(const Fn *fn, const Ins *in)
{
	const Type *a, *b;

	if (in->op != Omatmul)
		return false;
	a = &fn->val[in->arg[0]].type;
	b = &fn->val[in->arg[1]].type;
	return a->rank == 2 && b->rank == 2 && dimisconst(b->dim[0]) && dimisconst(b->dim[1]) &&
	       dimconstval(b->dim[1]) >= 1 && dimconstval(b->dim[1]) <= 1024;
}

int64_t
matmulweightbytes(const Fn *fn, const Ins *in)
{
	const Type *b = &fn->val[in->arg[1]].type;
	int64_t n = 4;
	int k;

	for (k = 0; k < b->rank; k++)
		n *= dimisconst(b->dim[k]) ? dimconstval(b->dim[k]) : INT64_C(1) << 20;
	return n;
}

bool
rowmatmul(const Fn *fn, const Ins *in)
{
	/* tilegemm's mark: its own GEMM, on the tile unit */
	return matmulweightbytes(fn, in) <= RowWeightBytes && !attrint(in, "tile", 0);
}

/* Does value v, as group grp computes it, read a node row that the group
 * itself makes?  (seen: 0 unknown, 1 no, 2 yes) */
static bool
readsrow(const Fn *fn, const unsigned char *kind, int grp, Ref v, unsigned char *seen)
{
	const Ins *in;
	int d = fn->val[v].def, k;
	bool r = false;

	if (d < 0 || attrint(&fn->ins[d], "group", -1) != grp)
		return false;   /* read from memory */
	if (seen[v])
		return seen[v] == 2;
	in = &fn->ins[d];
	if (kind[v] == RowNode && !(opinfo[in->op].flags & Falias))
		r = true;
	for (k = 0; k < in->narg && !r; k++)
		r = readsrow(fn, kind, grp, in->arg[k], seen);
	seen[v] = r ? 2 : 1;
	return r;
}

/* canonical text of the kernel's instructions, for its signature */
static uint64_t
signature(Fn *fn, const int *kern, int k)
{
	Mod *m = fn->mod;
	uint64_t h = HashSeed;
	char buf[256];
	int i, j, a, *local = emalloc((fn->nval + 1) * sizeof *local), nl = 0, next = 0;

	for (i = 0; i < fn->nval; i++)
		local[i] = -1;
	for (i = 0; i < fn->nins; i++) {
		const Ins *in = &fn->ins[i];
		if (kern[i] != k)
			continue;
		h = hashstr(h, opinfo[in->op].name);
		for (j = 0; j < in->narg; j++) {
			Ref v = in->arg[j];
			if (local[v] < 0) {
				/* an operand from outside: numbered by first use */
				local[v] = 1000000 + next++;
			}
			snprintf(buf, sizeof buf, "%d:", local[v]);
			h = hashstr(h, buf);
			snprinttype(buf, sizeof buf, m, fn->val[v].type);
			h = hashstr(h, buf);
		}
		local[in->to] = nl++;
		snprinttype(buf, sizeof buf, m, fn->val[in->to].type);
		h = hashstr(h, buf);
		for (a = 0; a < in->nattr; a++) {
			const Attr *at = &in->attr[a];
			if (isschedattr(at->key))
				continue;
			h = hashstr(h, at->key);
			switch (at->kind) {
			case AInt:
			case ABool: snprintf(buf, sizeof buf, "%lld", (long long)at->u.i); break;
			case AFloat: snprintf(buf, sizeof buf, "%.17g", at->u.f); break;
			case AStr: snprintf(buf, sizeof buf, "%s", at->u.s); break;
			case ADim: snprintdim(buf, sizeof buf, m, at->u.d); break;
			default: {
				int q;
				for (q = 0; q < at->n; q++) {
					if (at->kind == AInts)
						snprintf(buf, sizeof buf, "%lld", (long long)at->u.is[q]);
					else
						snprintdim(buf, sizeof buf, m, at->u.ds[q]);
					h = hashstr(h, buf);
				}
				buf[0] = 0;
			}
			}
			h = hashstr(h, buf);
		}
	}
	for (i = 0; i < fn->nret; i++)
		if (local[fn->ret[i]] >= 0 && local[fn->ret[i]] < 1000000) {
			snprintf(buf, sizeof buf, "ret%d", local[fn->ret[i]]);
			h = hashstr(h, buf);
		}
	free(local);
	return h;
}

int
listkernels(Fn *fn, Kernel **out)
{
	unsigned char *phase = emalloc(fn->nval + 1), *kind = emalloc(fn->nval + 1);
	Ref *eg = emalloc((fn->nval + 1) * sizeof *eg);
	int *kern = emalloc((fn->nins + 1) * sizeof *kern);
	unsigned char *seen = emalloc(fn->nval + 1);
	int i, n;
	Kernel *ks;

	phases(fn, phase);
	rowkinds(fn, kind, eg);
	n = forwardkernels(fn, phase, kern);
	ks = emalloc((n + 1) * sizeof *ks);
	for (i = 0; i < n; i++)
		ks[i].first = -1;
	for (i = 0; i < fn->nins; i++) {
		const Ins *in = &fn->ins[i];
		Kernel *k;
		if (kern[i] < 0)
			continue;
		k = &ks[kern[i]];
		if (k->first < 0) {
			k->first = i;
			k->group = (int)attrint(in, "group", -1);
			/* a GEMM's epilogue group (gemmepilogue.c) is a dense kernel */
			k->epi = k->group >= 0 && epilogueend(fn, i) >= 0;
			k->kind = k->group >= 0 && !k->epi ? KernelRow : denseof(fn, i) ? KernelDense : KernelElem;
			k->what = k->kind == KernelRow ? "epilogue" : k->kind == KernelDense ? "dense" : "elementwise";
			snprintf(k->name, sizeof k->name, k->group >= 0 ? "g%d" : "k%d", k->group >= 0 ? k->group : i);
			k->lanable = k->group >= 0 && !k->epi;
		}
		k->last = i;
		if (k->kind != KernelRow)
			continue;
		if (in->op == Omatmul)
			k->hasmatmul = true;
		if ((opinfo[in->op].flags & Fscatter) && strcmp(k->what, "attention") != 0)
			k->what = "aggregation";
		if (in->op == Oedge_softmax)
			k->what = "attention";
		/* lanes share a row through shared memory; edge values are
		 * computed per element, which only elementwise work allows */
		if (kind[in->to] == RowEdge && !(opinfo[in->op].flags & (Felem | Fbin | Falias)) &&
		    in->op != Ogather && in->op != Oedge_softmax)
			k->lanable = false;
		if (kind[in->to] == RowNode && !(opinfo[in->op].flags & (Falias | Fscatter))) {
			int64_t w = rowwidth(fn, in->to);
			if (w > k->width)
				k->width = w;
		}
		if ((opinfo[in->op].flags & Fscatter)) {
			int64_t w = rowwidth(fn, in->to);
			if (w > k->msgwidth)
				k->msgwidth = w;
		}
		if ((opinfo[in->op].flags & Fscatter) || in->op == Oedge_softmax) {
			Ref m = in->op == Oedge_softmax ? in->arg[1] : in->arg[0];
			memset(seen, 0, fn->nval + 1);
			if (!k->walks)
				k->splittable = true;
			k->walks = true;
			k->nwalk++;
			/* the reduce levels combine float partials */
			if (readsrow(fn, kind, k->group, m, seen) || fn->val[in->to].type.dtype != DF32)
				k->splittable = false;
		}
	}
	free(seen);
	for (i = 0; i < n; i++) {
		ks[i].sig = signature(fn, kern, i);
		if (ks[i].kind == KernelRow)
			ks[i].smem = rowsharedbytes(fn, ks[i].group);
		if (ks[i].kind == KernelDense) {
			const Ins *in = denseof(fn, ks[i].first);
			ks[i].msgwidth = dimconstval(fn->val[in->arg[1]].type.dim[0]);
			ks[i].width = dimconstval(fn->val[in->arg[1]].type.dim[1]);
			ks[i].weightbytes = matmulweightbytes(fn, in);
			ks[i].ahalf = valstoredtype(fn, in->arg[0]) != DNone;
			ks[i].o16 = valstoredtype(fn, ks[i].epi ? fn->ins[ks[i].last].to : in->to) != DNone;
		}
	}
	free(phase);
	free(kind);
	free(eg);
	free(kern);
	*out = ks;
	return n;
}

int64_t
rowsharedbytes(const Fn *fn, int group)
{
	unsigned char *kind = emalloc(fn->nval + 1);
	Ref *eg = emalloc((fn->nval + 1) * sizeof *eg);
	int64_t b = 0;
	int i;

	rowkinds(fn, kind, eg);
	for (i = 0; i < fn->nins; i++) {
		const Ins *in = &fn->ins[i];
		int64_t bytes = rowwidth(fn, in->to) * (int64_t)dtypesize(fn->val[in->to].type.dtype);
		if (attrint(in, "group", -1) != group || (opinfo[in->op].flags & Falias))
			continue;
		/* node rows of the group, and edge_softmax's max and sum */
		if (kind[in->to] == RowNode)
			b += bytes;
		if (in->op == Oedge_softmax)
			b += 2 * bytes;
	}
	free(kind);
	free(eg);
	return b;
}

/* the largest static shared memory a block of row kernel may use */
enum { SharedMax = 48 * 1024 };

int
schedtargetlegal(const SchedTarget *st, const Sched *s, char *err, size_t errlen)
{
	if (st->target == TargetCUDA && s->lanes * s->rows > 1024) {
		snprintf(err, errlen, "lanes * rows is %d, above 1024 threads per block", s->lanes * s->rows);
		return -1;
	}
	if (st->target == TargetCUDA && s->lanes > 1 && (s->lanes * s->rows) % 32) {
		snprintf(err, errlen, "lanes * rows is %d, not a whole number of warps", s->lanes * s->rows);
		return -1;
	}
	return 0;
}

int
schedlegal(const Kernel *k, const SchedTarget *st, const Sched *s, char *err, size_t errlen)
{
	Sched d;

	/* first whether s is for this kind of kernel on this target at all
	 * (--schedule=all: passes over those kernels), then whether this
	 * kernel can take it */
	scheddefault(&d);
	if (k->kind == KernelElem && !schedequal(s, &d)) {
		snprintf(err, errlen, "kernel %s (%s) has no schedule to choose", k->name, k->what);
		return SchedNotFor;
	}
	if (k->kind == KernelDense && (s->lanes != 1 || s->rows != 1)) {
		snprintf(err, errlen, "kernel %s (dense): lanes and rows apply to row kernels", k->name);
		return SchedNotFor;
	}
	if (k->kind == KernelRow && (s->tile != 1 || s->gemm)) {
		snprintf(err, errlen, "kernel %s (%s): %s applies to dense transforms", k->name, k->what, s->gemm ? "gemm" : "tile");
		return SchedNotFor;
	}
	if (st->target == TargetCUDA && s->gemm) {
		snprintf(err, errlen, "kernel %s: gemm is a cpu schedule", k->name);
		return SchedNotFor;
	}
	if (st->target == TargetCUDA && (s->chunk || (k->kind == KernelDense && s->axpy))) {
		snprintf(err, errlen, "kernel %s: %s is a cpu schedule", k->name, s->chunk ? "chunk" : "axpy");
		return SchedNotFor;
	}
	if (s->bm && (st->target != TargetCUDA || k->kind != KernelDense)) {
		snprintf(err, errlen, "kernel %s (%s): bm, bn, bk, tm and tn tile cuda's dense transforms", k->name, k->what);
		return SchedNotFor;
	}
	if (s->sparse && (st->target != TargetCUDA || k->kind != KernelDense)) {
		snprintf(err, errlen, "kernel %s (%s): sparse applies to cuda's dense transforms", k->name, k->what);
		return SchedNotFor;
	}
	if (s->sparse && k->width > SparseMaxP) {
		snprintf(err, errlen, "kernel %s: sparse keeps a row's %lld outputs in a warp's registers, at most %d", k->name,
		         (long long)k->width, SparseMaxP);
		return SchedIllegal;
	}
	if (s->vendor && (st->target != TargetCUDA || k->kind != KernelDense || !(st->vendor & VendorCublas))) {
		snprintf(err, errlen, "kernel %s (%s): vendor=1 is cuBLAS for cuda's dense transforms, with --vendor=cublas",
		         k->name, k->what);
		return SchedNotFor;
	}
	if (s->split && (st->target != TargetCUDA || k->kind != KernelRow || !k->walks)) {
		snprintf(err, errlen, "kernel %s (%s): split applies to the edge walks of cuda row kernels", k->name, k->what);
		return SchedNotFor;
	}
	if (s->slices && (st->target != TargetCUDA || k->kind != KernelRow || !k->walks)) {
		snprintf(err, errlen, "kernel %s (%s): slices applies to the edge walks of cuda row kernels", k->name, k->what);
		return SchedNotFor;
	}
	if (s->perm && (st->target != TargetCUDA || k->kind != KernelRow)) {
		/* (a row kernel without walks has nothing to copy: a no-op) */
		snprintf(err, errlen, "kernel %s (%s): perm applies to cuda row kernels", k->name, k->what);
		return SchedNotFor;
	}
	if (s->single && (st->target != TargetCUDA || k->kind != KernelRow)) {
		/* (a row kernel without walks has nothing to pair: a no-op) */
		snprintf(err, errlen, "kernel %s (%s): single applies to cuda row kernels", k->name, k->what);
		return SchedNotFor;
	}
	if (s->split && !k->splittable) {
		snprintf(err, errlen, "kernel %s (%s): its messages read rows the kernel makes, so a chunk of edges cannot be walked alone",
		         k->name, k->what);
		return SchedIllegal;
	}
	if (k->kind == KernelRow && s->lanes > 1 && !k->lanable) {
		snprintf(err, errlen, "kernel %s (%s): its edge values are not elementwise, so lanes cannot share a row", k->name, k->what);
		return SchedIllegal;
	}
	if (k->kind == KernelRow && schedtargetlegal(st, s, err, errlen) < 0)
		return SchedIllegal;
	if (k->kind == KernelRow && st->target == TargetCUDA && s->lanes > 1 && k->smem * s->rows > SharedMax) {
		snprintf(err, errlen, "kernel %s: %d rows of %lld bytes exceed %d bytes of shared memory", k->name, s->rows,
		         (long long)k->smem, SharedMax);
		return SchedIllegal;
	}
	if (k->epi && !s->bm && !s->vendor && !s->sparse) {
		snprintf(err, errlen, "kernel %s (dense): its epilogue runs in the tiled GEMM (bm, bn, bk, tm, tn), the sparse-input GEMM or after cuBLAS's",
		         k->name);
		return SchedIllegal;
	}
	if ((s->vendor && (k->ahalf || k->o16)) || (s->sparse && k->ahalf)) {
		snprintf(err, errlen, "kernel %s (dense): %s reads float32%s, and this transform's %s stored in 16 bits", k->name,
		         s->vendor ? "cuBLAS's SGEMM" : "the sparse-input GEMM", s->vendor ? " and writes float32" : "",
		         k->ahalf ? "input is" : "output is");
		return SchedIllegal;
	}
	if (k->kind == KernelDense && s->axpy && (int64_t)s->tile * k->width > 4096) {
		snprintf(err, errlen, "kernel %s: axpy keeps tile * %lld outputs per task, above 4096", k->name, (long long)k->width);
		return SchedIllegal;
	}
	return 0;
}

static int
add(Sched *out, int n, int max, const Kernel *k, const SchedTarget *st, Sched s)
{
	char err[160];
	int i;

	if (n >= max || schedlegal(k, st, &s, err, sizeof err) < 0)
		return n;
	for (i = 0; i < n; i++)
		if (schedequal(&out[i], &s))
			return n;
	out[n] = s;
	return n + 1;
}

/*
 * cuda's tiled GEMMs for a dense transform of width P (k->width): the
 * block's columns bn cover P (a multiple of 8, at most 128), or 64 of a
 * wider P; under them a few block heights, slab depths and register
 * tiles that make 64 to 256 threads.  All are legal in both the FP32
 * and the tensor-core form (sched.c's rules).  Each may split K into up
 * to KSplit parts: where M leaves fewer tiles than two waves, parts of
 * K's slabs fill the device instead of leaving it idle (gemmcuda.c).
 */
enum { KSplit = 16 };

static const int gemmtiles[][4] = {   /* bm, bk, tm, tn */
	{64, 32, 4, 4}, {32, 32, 2, 4}, {128, 16, 8, 4}, {64, 16, 4, 2}, {128, 32, 8, 8}, {32, 16, 2, 2},
};

/* tile a of gemmtiles over columns bn */
static Sched
gemmtile(int a, int bn)
{
	Sched g;

	scheddefault(&g);
	g.bm = gemmtiles[a][0];
	g.bn = bn;
	g.bk = gemmtiles[a][1];
	g.tm = gemmtiles[a][2];
	g.tn = gemmtiles[a][3];
	/* K split where the tiles are too few (the launch decides from M;
	 * large M runs unsplit) */
	g.ksplit = KSplit;
	return g;
}

void
gemmreference(int64_t P, Sched *s)
{
	*s = gemmtile(0, (int)((P < 128 ? P : 128) + 7) / 8 * 8);
}

static int
gemmspace(const Kernel *k, const SchedTarget *st, Sched *out, int n, int max)
{
	int64_t P = k->width > 0 ? k->width : 1;
	int bns[2] = {(int)((P < 128 ? P : 128) + 7) / 8 * 8, 64}, a, b;
	char err[160];

	for (b = 0; b < (P > 64 ? 2 : 1); b++)
		for (a = 0; a < (int)(sizeof gemmtiles / sizeof gemmtiles[0]); a++) {
			Sched g = gemmtile(a, bns[b]);
			if (schedvalid(&g, err, sizeof err) == 0)
				n = add(out, n, max, k, st, g);
		}
	/* cuBLAS's SGEMM, where the build may call it (add checks) */
	{
		Sched v;
		scheddefault(&v);
		v.vendor = 1;
		n = add(out, n, max, k, st, v);
	}
	return n;
}

/*
 * The tiled GEMM's cost, in the tile loops' units (a multiply-add a
 * lane): the padded multiply-adds over the register tile's efficiency
 * (shared-memory loads a k-step: ceil(tm/4) + ceil(tn/4) vectors for
 * tm * tn / 4 cycles of FMAs), or DRAM traffic at about 9 multiply-adds
 * a byte (an H100's FP32 rate over its bandwidth), A read once per
 * column tile, B once per row tile from L2; idle SMs when the grid has
 * fewer than two blocks for each of 132, counting the blocks of split
 * K's parts (gnn_gemm_ksplit) and then their sum's traffic.
 */
static double
gemmcost(const Kernel *k, const GraphStats *gs, const Sched *s)
{
	double N = gs->nodes > 0 ? (double)gs->nodes : 1, K = k->msgwidth > 0 ? (double)k->msgwidth : 1,
	       P = k->width > 0 ? (double)k->width : 1;
	double mt = ceil(N / s->bm), nt = ceil(P / s->bn), kp = ceil(K / s->bk) * s->bk;
	double fmas = mt * s->bm * kp * nt * s->bn, eff = (s->tm * s->tn / 4.0) / (ceil(s->tm / 4.0) + ceil(s->tn / 4.0));
	double bytes = 4 * (N * K * nt + mt * K * P * 0.25 + N * P), t, blocks = mt * nt, parts = 1;

	if (s->ksplit > 1 && K >= 2 * s->bk)
		parts = gnn_gemm_ksplit((int64_t)blocks, (int64_t)K / s->bk, s->ksplit, (int64_t)(N * P), INT64_MAX);
	blocks *= parts;
	bytes += parts > 1 ? 4 * 2 * parts * N * P : 0;
	t = fmas / (eff < 1 ? eff : 1);
	if (bytes * 9 > t)
		t = bytes * 9;
	return t * (blocks < 264 ? 264 / blocks : 1);
}

int
schedspace(const Kernel *k, const SchedTarget *st, Sched *out, int max)
{
	static const int tiles[] = {1, 2, 4, 8, 16}, lanes[] = {1, 2, 4, 8, 16, 32}, blocks[] = {64, 128, 256},
	                 chunks[] = {0, 16, 256}, gemmrows[] = {64, 16, 256}, kcs[] = {0, 128, 512};
	Sched s;
	int n = 0, a, b, c;

	scheddefault(&s);
	n = add(out, n, max, k, st, s);   /* the reference */
	switch (k->kind) {
	case KernelDense:
		if (st->target == TargetCPU)
			for (a = 0; a < 3; a++)
				for (b = 0; b < 3; b++) {
					Sched g = s;
					g.gemm = gemmrows[a];
					g.kc = kcs[b];
					n = add(out, n, max, k, st, g);
				}
		if (st->target == TargetCUDA)
			n = gemmspace(k, st, out, n, max);
		/* the sparse-input GEMM, 4 and 8 rows a block, where the
		 * options state A's density (--input-density): for a dense A
		 * it is only slower */
		for (a = 4; a <= 8 && st->target == TargetCUDA && k->adensity > 0; a *= 2) {
			Sched g = s;
			g.sparse = a;
			n = add(out, n, max, k, st, g);
		}
		for (a = 0; a < 5; a++)
			for (b = 0; b < (st->target == TargetCPU ? 2 : 1); b++) {
				s.tile = tiles[a];
				s.axpy = b;
				n = add(out, n, max, k, st, s);
			}
		break;
	case KernelRow:
		if (st->target == TargetCPU) {
			for (a = 0; a < (k->hasmatmul ? 2 : 1); a++)
				for (c = 0; c < (st->openmp ? 3 : 1); c++) {
					s.axpy = a;
					s.chunk = chunks[c];
					n = add(out, n, max, k, st, s);
				}
			break;
		}
		/* each block shape unsplit, and with long rows' walks split
		 * (where the kernel can be) */
		for (c = 0; c < (k->splittable ? 2 : 1); c++)
			for (a = 0; a < 6; a++)
				for (b = 0; b < 3; b++) {
					s.lanes = lanes[a];
					s.rows = blocks[b] / lanes[a];
					s.split = c ? SplitDefault : 0;
					n = add(out, n, max, k, st, s);
				}
		break;
	default:
		break;
	}
	return n;
}

/* the expected largest of g draws from the degree distribution (a
 * normal approximation, capped by the largest degree) */
static double
maxof(const GraphStats *gs, double g)
{
	double m = gs->meandeg, sd = gs->cvdeg * gs->meandeg, x;

	if (g <= 1)
		return m;
	x = m + sd * sqrt(2 * log(g));
	return x < (double)gs->maxdeg || gs->maxdeg <= 0 ? x : (double)gs->maxdeg;
}

double
schedcost(const Kernel *k, const SchedTarget *st, const GraphStats *gs, const Sched *s)
{
	double N = gs->nodes > 0 ? (double)gs->nodes : 1, W = k->width > 0 ? (double)k->width : 1,
	       M = k->msgwidth > 0 ? (double)k->msgwidth : W, deg = gs->meandeg > 0 ? gs->meandeg : 1;

	if (k->kind == KernelElem)
		return N * W;
	if (k->kind == KernelDense) {
		double K = M, P = W, t = s->tile;
		if (st->target == TargetCPU && s->gemm)
			/* register-blocked vector FMAs with B's panel in cache: about
			 * a tenth of the loops' cost per multiply (gnn_sgemm's
			 * measured rate against theirs); the library's own K block
			 * and 64-row tasks are the model's favourites, the tuner
			 * measures the rest */
			return N * K * P * 0.1 * (s->kc ? 1.05 : 1.0) * (s->gemm == 64 ? 1.0 : 1.02);
		if (st->target == TargetCPU)
			/* dot walks B by columns (a cache line per multiply once B
			 * outgrows L1); axpy streams rows of B, reused tile times */
			return N * K * P * (s->axpy ? 1.0 + 1.0 / t : (K * P * 4 > 32768 ? 4.0 : 2.0) + 0.5 / t);
		if (s->vendor)
			/* cuBLAS's SGEMM: the FP32 peak at 80% (it splits K and
			 * picks its tiles itself, so no idle SMs), or A, B and C
			 * once from DRAM at 9 multiply-adds a byte, as gemmcost */
			return fmax(N * K * P / 0.8, 9 * 4 * (N * K + K * P + N * P));
		if (s->bm)
			return gemmcost(k, gs, s);
		if (s->sparse) {
			/* A streamed once, eight loads a lane in flight, where the
			 * tiled GEMM stages it through shared memory between two
			 * barriers a slab: half its cost a byte (this model has no
			 * latencies; the factor stands for them); then for each
			 * non-zero (unknown: all are) a dependent L2 round trip of
			 * the warp, four times its lanes' multiply-adds */
			double d = k->adensity > 0 ? k->adensity : 1;
			return 0.5 * 9 * 4 * (N * K + N * P) + N * d * K * 128 * ceil(P / 32);
		}
		/* one thread per tile x column: B loads shared by t rows, but
		 * fewer threads to hide latency once N * P / t gets small; a
		 * load of A per multiply-add keeps it at about a third of what
		 * the tiled GEMM reaches (the load/store units' bound) */
		{
			double threads = N * P / t, occ = threads < 65536 ? 65536 / threads : 1;
			return 3 * N * K * P * (1.0 + 2.0 / t) * occ;
		}
	}
	/* row kernels */
	if (st->target == TargetCPU) {
		double c = N * deg * M + N * W, imb = 1;
		if (k->hasmatmul)
			c += N * W * W * (s->axpy ? 1.0 : 2.0);
		if (st->openmp)
			imb = s->chunk ? 1.0 + 0.05 * 256.0 / s->chunk : 1.0 + 0.5 * gs->cvdeg;
		return c * imb;
	}
	{
		double L = s->lanes, perwarp = 32 / L, steps, eff, warps;
		/* each lane walks every edge of its row; a warp waits for its
		 * longest row; loads are coalesced over L lanes (32-byte
		 * sectors: 8 floats) */
		steps = maxof(gs, perwarp) * ceil(M / L) + ceil(W / L) * (k->hasmatmul ? W : 1);
		eff = L * 4 >= 32 ? 1.0 : L * 4 / 32.0;
		warps = N / perwarp;
		double bulk, crit, C;
		/* blocks too large for the rows there are leave SMs idle */
		if (N / s->rows < 264)
			warps *= 264.0 / (N / s->rows);
		/* and a block costs something to start */
		bulk = warps * steps / eff + (L > 1 ? warps * 4 : 0) + N / s->rows * 2;
		/* The longest row is one lane group's serial walk, however many
		 * warps are free: in these units (steps summed over warps) it
		 * costs as much as the GPU's resident warps (132 SMs x 64) all
		 * walking that long.  split bounds it by a chunk (the runtime
		 * takes at least twice the mean degree) for a launch of chunks
		 * and a few of reduce levels per walk, about 2.5 us each: 25
		 * steps of every resident warp. */
		C = s->split ? fmax((double)s->split, 2 * deg) : (double)(gs->maxdeg > 0 ? gs->maxdeg : deg);
		crit = C * ceil(M / L) * ResidentWarps;
		return fmax(bulk, crit) + (s->split ? k->nwalk * 3 * 25.0 * ResidentWarps : 0);
	}
}

void
defaultstats(GraphStats *gs)
{
	/* a typical graph when nothing is known: mid-sized, mean in-degree
	 * 8, heavy-tailed, and a hub holding a tenth of the edges: the
	 * object runs on whatever graph is bound, and one unsplit walk of a
	 * hub is the whole kernel's time, while a split plan costs little
	 * where there is none (bind finds no long rows; their launches are
	 * empty) */
	gs->nodes = 100000;
	gs->edges = 800000;
	gs->meandeg = 8;
	gs->cvdeg = 1.5;
	gs->maxdeg = gs->edges / 10;
}

int
costpick(const Kernel *k, const SchedTarget *st, const GraphStats *gs, Sched *best)
{
	Sched sp[256];
	int n = schedspace(k, st, sp, 256), i, b = 0;
	double c, bc = 0;

	for (i = 0; i < n; i++) {
		c = schedcost(k, st, gs, &sp[i]);
		if (i == 0 || c < bc * 0.999) {
			bc = c;
			b = i;
		}
	}
	*best = sp[b];
	return n;
}

void
setsched(Fn *fn, const Kernel *k, const Sched *s)
{
	Ins *in = &fn->ins[k->first];
	Sched d;

	/* the reference is no schedule, so -O0's IR and the cost model's
	 * default choice print alike */
	scheddefault(&d);
	if (schedequal(s, &d))
		dropsched(in);
	else
		putsched(in, s);
}
