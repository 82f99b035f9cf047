/*
 * --report: what the compiled model will do, read off the optimized IR
 * with the analyses code generation uses, so that it is exact rather
 * than estimated.
 *
 *   kernels  the kernels one forward launches, in launch order, each with
 *            its instructions' ops and the source lines they came from
 *            (forwardkernels(): the walk emitkernels makes), with several
 *            graph inputs the relations each walks, and the work
 *            done once per weights (load) and once per graph (bind);
 *   breaks   the graph breaks of forward (breaks.c);
 *   syncs    the host synchronizations inside forward, and those that
 *            are not forward's;
 *   memory   the arena that bind allocates, as a formula in N, E and the
 *            derived sizes: the forward buffers (arenabuffers(): memplan's
 *            slots), and for cuda the device copies of bind-time values,
 *            the segment plans and forward_host's staging -- the same
 *            buffers, in the same order, as emitbind's memory plan.  With
 *            --report-graph, the graph is built by the runtime (and its
 *            derived graphs, which give the derived sizes) and the
 *            arena's exact size for it is printed, alignment included.
 *
 * The report runs before the code generator's checks: it is most useful
 * for a model the target rejects (a graph break on cuda).
 */
#include <string.h>

#include "../runtime/gnnrt.h"
#include "codegen.h"
#include "plan.h"

typedef struct R {
	FILE *f;
	Fn *fn;
	Mod *m;
	const ReportOpts *o;
	bool cuda;
	unsigned char *phase;
	int *kern, nkern;
	int64_t *symval;         /* the sizes of --report-graph's graph, or NULL */
	MemItem *items;          /* cuda: the schedules' buffers on that graph (costmemory) */
	int nitems;
	char **name;             /* value names as printed */
	/* the forward slots as the runtime's arena places them (scratchfloors):
	 * slots[p] the p-th's buffer, floor[k] how many of them kernel k's
	 * scratch lies past, live[k] which of them are live while k runs
	 * (its scratch may lie in a gap); rep[b] buffer b's value that gives
	 * its size */
	int *slots, *floor, nslot;
	uint64_t *live;
	Ref *rep;
	bool *lazy;              /* per memplan buffer: an output with no arena memory (cuda: GNN_BUF_LAZY) */
} R;

/* alias ops (reshape, dropout) launch nothing and have no buffer */
static bool
isalias(const Ins *in)
{
	return opinfo[in->op].flags & Falias;
}

/* ---- kernels --------------------------------------------------------------- */

/* "file:line" of in, appended to the list (k of them so far) unless it
 * is there: the list is the instructions themselves, so nothing is cut */
static void
addloc(const Ins **locs, int *k, const Ins *in)
{
	int j;

	if (!in->loc.file)
		return;
	for (j = 0; j < *k; j++)
		if (locs[j]->loc.line == in->loc.line && strcmp(locs[j]->loc.file, in->loc.file) == 0)
			return;
	locs[(*k)++] = in;
}

/* Does instruction i need a segment plan built at bind? */
static bool
bindplan(R *r, int i)
{
	const Ins *in = &r->fn->ins[i];

	if (in->op == Oedge_softmax)
		return r->phase[in->arg[0]] == PhaseBind;
	return (opinfo[in->op].flags & Fscatter) && r->phase[in->arg[1]] == PhaseBind;
}

/* Is instruction i the first to walk its plan (plans are shared)? */
static bool
firstplan(R *r, int i)
{
	for (int j = 0; j < i; j++)
		if (bindplan(r, j) && sameplan(r->fn, r->phase, i, j))
			return false;
	return true;
}

static void
worklist(R *r, int phase, const char *what, const char *when)
{
	Fn *fn = r->fn;
	const Ins *in;
	int i, n = 0, nplan = 0;

	fprintf(r->f, "  %s:", what);
	for (i = 0; i < fn->nins; i++) {
		in = &fn->ins[i];
		if (phase == PhaseBind && bindplan(r, i) && firstplan(r, i))
			nplan++;
		if (r->phase[in->to] != phase || in->op == Oparam || isalias(in))
			continue;
		fprintf(r->f, "%s %s", n++ ? "," : "", opinfo[in->op].name);
	}
	if (nplan)
		fprintf(r->f, "%s %d segment plan%s", n ? ";" : "", nplan, nplan == 1 ? "" : "s");
	if (!n && !nplan)
		fprintf(r->f, " nothing");
	fprintf(r->f, "  (%s)\n", when);
}

/* Mark in seen the graph inputs v comes from: a graph value's own
 * (through the graphs derived from it), or a bind-time value's (an index,
 * a degree, a norm: bind-time values depend on graphs only) */
static void
graphsof(R *r, Ref v, bool *seen)
{
	const Fn *fn = r->fn;
	const Ins *in;
	int d = fn->val[v].def, k;

	if (seen[v] || (fn->val[v].type.kind != TGraph && r->phase[v] != PhaseBind))
		return;
	seen[v] = true;
	if (d < 0)
		return;
	in = &fn->ins[d];
	for (k = 0; k < in->narg; k++)
		graphsof(r, in->arg[k], seen);
}

/* With several graph inputs (a heterogeneous graph's relations): the
 * ones kernel k walks, "  [author__writes__paper, ...]" */
static void
kernelgraphs(R *r, int k, bool *seen)
{
	Fn *fn = r->fn;
	int i, a, n = 0, ngraph = 0;

	for (a = 0; a < fn->narg; a++)
		ngraph += fn->val[fn->arg[a]].type.kind == TGraph;
	if (ngraph < 2)
		return;
	memset(seen, 0, (fn->nval + 1) * sizeof *seen);
	for (i = 0; i < fn->nins; i++)
		for (a = 0; r->kern[i] == k && a < fn->ins[i].narg; a++)
			graphsof(r, fn->ins[i].arg[a], seen);
	for (a = 0; a < fn->narg; a++)
		if (fn->val[fn->arg[a]].type.kind == TGraph && seen[fn->arg[a]])
			fprintf(r->f, "%s%s", n++ ? ", " : "  [", fn->val[fn->arg[a]].name);
	fprintf(r->f, "%s", n ? "]" : "");
}

static void
reportkernels(R *r)
{
	Fn *fn = r->fn;
	const Ins *in, **locs = emalloc((fn->nins + 1) * sizeof *locs);
	bool *seen = emalloc((fn->nval + 1) * sizeof *seen);
	Kernel *ks;
	int k, i, g, n, nloc, nk = listkernels(fn, &ks), nchunk = 0, nksum = 0, split;

	/* a split row kernel launches one chunk kernel per walk before it
	 * (rowkernel.c); the reduce levels between them depend on the graph */
	for (k = 0; k < nk; k++)
		if (r->cuda && ks[k].walks && fn->ins[ks[k].first].hassched &&
		    fn->ins[ks[k].first].sched.split > 0)
			nchunk += ks[k].nwalk;
		else if (r->cuda && ks[k].kind == KernelDense && fn->ins[ks[k].first].hassched &&
		         fn->ins[ks[k].first].sched.ksplit > 1)
			nksum++;   /* gemmcuda.c: the parts' sum, run when K is split */
	free(ks);
	fprintf(r->f, "kernels: %d per forward", r->nkern);
	if (nchunk)
		fprintf(r->f, ", and %d chunk kernel%s for rows longer than the split, with their reduce levels",
		        nchunk, nchunk == 1 ? "" : "s");
	if (nksum)
		fprintf(r->f, ", and %d split-K sum%s for dense transforms of too few rows to fill the device", nksum,
		        nksum == 1 ? "" : "s");
	fprintf(r->f, "\n");
	for (k = 0; k < r->nkern; k++) {
		fprintf(r->f, "  kernel %d:", k);
		split = 0;
		for (i = 0, n = 0, nloc = 0; i < fn->nins; i++) {
			in = &fn->ins[i];
			if (r->kern[i] != k || isalias(in))
				continue;
			if (in->hassched)
				split = in->sched.split;
			/* readfold's GEMM with its bias (gemmbias): the matmul
			 * runs in the add's kernel */
			if (in->op == Oadd && !r->cuda && (g = viafold(fn, i)) >= 0) {
				fprintf(r->f, "%s %s", n++ ? "," : "", opinfo[fn->ins[g].op].name);
				addloc(locs, &nloc, &fn->ins[g]);
			}
			fprintf(r->f, "%s %s", n++ ? "," : "", opinfo[in->op].name);
			addloc(locs, &nloc, in);
		}
		for (i = 0; i < nloc; i++)
			fprintf(r->f, "%s%s:%d", i ? ", " : "  (", locs[i]->loc.file, locs[i]->loc.line);
		fprintf(r->f, "%s", nloc ? ")" : "");
		if (r->cuda && split > 0)
			fprintf(r->f, "  [split=%d]", split);
		kernelgraphs(r, k, seen);
		fprintf(r->f, "\n");
	}
	free(locs);
	free(seen);
	worklist(r, PhaseLoad, "load", "once per weights");
	worklist(r, PhaseBind, "bind", "once per graph");
	if (r->fn->train)
		worklist(r, PhaseOnce, "step once", "at the first step after a bind, new inputs or new weights");
}

/* ---- breaks and syncs ------------------------------------------------------ */

static void
fprintloc(FILE *f, Loc l)
{
	if (l.file)
		fprintf(f, "%s:%d:%d: ", l.file, l.line, l.col);
}

static int
points(R *r, int **at)
{
	*at = emalloc((r->fn->nins + 1) * sizeof **at);
	return hostpoints(r->fn, r->phase, *at);
}

static void
reportbreaks(R *r)
{
	char why[256];
	int *at, n, i;

	n = points(r, &at);
	if (!r->cuda) {
		fprintf(r->f, "breaks: none (--target=cpu: forward runs on the host)\n");
		for (i = 0; i < n; i++) {
			fprintf(r->f, "  ");
			fprintloc(r->f, r->fn->ins[at[i]].loc);
			fprintf(r->f, "%s runs sequentially: its segments are known only in forward\n",
			        opinfo[r->fn->ins[at[i]].op].name);
		}
	} else if (!n)
		fprintf(r->f, "breaks: none\n");
	else {
		fprintf(r->f, "breaks: %d\n", n);
		for (i = 0; i < n; i++) {
			breakreason(r->fn, r->phase, at[i], why, sizeof why);
			fprintf(r->f, "  ");
			fprintloc(r->f, r->fn->ins[at[i]].loc);
			fprintf(r->f, "%s\n", why);
		}
	}
	free(at);
}

static void
reportsyncs(R *r)
{
	int *at, n, i;

	n = points(r, &at);
	if (!r->cuda)
		fprintf(r->f, "syncs: none (--target=cpu: forward runs on the host)\n");
	else {
		if (!n)
			fprintf(r->f, "syncs: none in forward\n");
		else
			fprintf(r->f, "syncs: %d in forward\n", n);
		for (i = 0; i < n; i++) {
			fprintf(r->f, "  ");
			fprintloc(r->f, r->fn->ins[at[i]].loc);
			fprintf(r->f, "%s: the stream waits while its %s goes to the host (a graph break)\n",
			        opinfo[r->fn->ins[at[i]].op].name,
			        r->fn->ins[at[i]].op == Oedge_softmax ? "graph" : "index");
		}
		fprintf(r->f, "  not forward's: forward_host waits for its outputs once forward is queued "
		        "(the API's synchronization); bind and load_weights wait for queued forwards "
		        "before replacing memory they read\n");
	}
	free(at);
}

/* ---- memory ---------------------------------------------------------------- */

/* A sum of buffers: the formula, and with a graph the bytes bind
 * allocates (each buffer rounded up to 256, as emitbind does). */
typedef struct Sum {
	Dim bytes;
	bool ok;                 /* the formula is a Dim */
	int n;
	int64_t val;             /* -1: not known */
	bool exact;              /* val of allocations not rounded up (host memory) */
} Sum;

/* bytes as the runtime allocates them: rounded up to 256 (program.c) */
static int64_t
allocbytes(int64_t n)
{
	return (n + 255) & ~(int64_t)255;
}

/* the schedules' buffers on --report-graph's graph (costmemory), as
 * allocated: the split plans, or (splitplans false) the arena's scratch */
/* the kernel (its first instruction) whose scratch item i is: split
 * partials are keyed by kernel and walk (cost.c's ledger) */
static int64_t
itemkernel(const MemItem *it)
{
	return it->kind == MemSplitPartials ? it->key[0] / 64 : it->key[0];
}

static bool valbytes(const R *r, Ref v, Dim *b);

/* the p-th forward slot's bytes with the graph, as allocated; -1 unknown */
static int64_t
slotbytes(const R *r, int p)
{
	Dim b;
	int64_t v = valbytes(r, r->rep[r->slots[p]], &b) && r->symval ? dimeval(r->m, b, r->symval) : -1;

	if (r->lazy[r->slots[p]])
		return 0;   /* not in the arena (program.c's lazyout) */
	return v < 0 ? -1 : allocbytes(v);
}

/* where item it's kernel's scratch starts among the forward slots (as
 * program.c's scratchat): in the first gap between the slots live while
 * the kernel runs where it fits, else past the last of them; -1 unknown */
static int64_t
scratchstart(const R *r, const MemItem *it)
{
	int64_t first = itemkernel(it), at = 0, o = 0, b, need = 0;
	int k = first >= 0 && first < r->fn->nins ? r->kern[first] : -1, n = k >= 0 ? r->floor[k] : r->nslot;

	for (int j = 0; k >= 0 && j < r->nitems; j++)
		if (r->items[j].kind != MemSplitPlan && itemkernel(&r->items[j]) == first)
			need += allocbytes(r->items[j].bytes);
	for (int p = 0; p < n; p++) {
		if ((b = slotbytes(r, p)) < 0)
			return -1;
		if (!r->lazy[r->slots[p]] && (k < 0 || p >= 64 || (r->live[k] >> p & 1))) {
			if (k >= 0 && o + need <= at)
				return o;
			o = at + b;
		}
		at += b;
	}
	return o;
}

/* the split plans' bytes, or the scratch's as the runtime lays it out
 * (program.c's arenaplan): each kernel's together, the kernels' over one
 * another, so the most any one kernel takes; placed: the most any
 * kernel's reaches from the forward slots' start, its own start
 * (scratchstart) included */
static int64_t
itembytes(const R *r, bool splitplans, bool placed)
{
	int64_t n = 0, most = 0, at;
	int i, j;

	for (i = 0; r->items && i < r->nitems; i++) {
		const MemItem *it = &r->items[i];
		bool first = true;
		if ((it->kind == MemSplitPlan) != splitplans)
			continue;
		if (splitplans) {
			n += allocbytes(it->bytes);
			continue;
		}
		for (j = 0; j < i && first; j++)
			first = !(r->items[j].kind != MemSplitPlan && itemkernel(&r->items[j]) == itemkernel(it));
		if (!first)
			continue;
		n = 0;
		if (placed && (at = scratchstart(r, it)) >= 0)
			n = at;
		for (j = i; j < r->nitems; j++)
			if (r->items[j].kind != MemSplitPlan && itemkernel(&r->items[j]) == itemkernel(it))
				n += allocbytes(r->items[j].bytes);
		if (n > most)
			most = n;
	}
	return splitplans ? n : most;
}

/* the arena's bytes beyond the forward values: what the scratch that
 * lies past the slots adds (fwd: the slots' bytes, -1 unknown) */
static int64_t
scratchover(const R *r, int64_t fwd)
{
	int64_t end = itembytes(r, false, true);

	if (fwd < 0)
		return itembytes(r, false, false);
	return end > fwd ? end - fwd : 0;
}

/* item i's place: its offset from the forward slots' start, and the
 * slots (report's numbers) it lies over */
static void
printplace(R *r, int i)
{
	const MemItem *it = &r->items[i];
	int64_t at = scratchstart(r, it), end, s = 0, b;
	int j, p, k = 0, over[2] = {0, 0};

	if (at < 0)
		return;
	for (j = 0; j < i; j++)
		if (r->items[j].kind != MemSplitPlan && itemkernel(&r->items[j]) == itemkernel(it))
			at += allocbytes(r->items[j].bytes);
	end = at + allocbytes(it->bytes);
	fprintf(r->f, ", at byte %lld of the forward slots", (long long)at);
	/* twice over the slots: count, then name them */
	for (j = 0; j < 2; j++)
		for (p = 0, s = 0; p < r->nslot && (b = slotbytes(r, p)) >= 0; s += b, p++)
			if (b > 0 && s < end && at < s + b) {
				if (j)
					fprintf(r->f, "%s%d", k++ ? ", " : over[0] > 1 ? ", over dead slots " : ", over dead slot ",
					        r->slots[p]);
				over[j]++;
			}
	if (at + allocbytes(it->bytes) > s)
		fprintf(r->f, "%s past them", over[0] ? " and" : ",");
}

static void
addbytes(R *r, Sum *s, Dim b, bool okb)
{
	int64_t v;

	if (s->n++ == 0) {
		s->ok = true;
		s->bytes = 0;
		s->val = r->symval ? 0 : -1;
	}
	if (okb)
		s->bytes = dimadd(r->m, s->bytes, b, &s->ok);
	s->ok &= okb;
	if (s->val < 0)
		return;
	v = okb ? dimeval(r->m, b, r->symval) : -1;
	s->val = v < 0 ? -1 : s->val + (s->exact ? v : allocbytes(v));
}

static void
addsum(R *r, Sum *to, const Sum *s)
{
	if (!s->n)
		return;
	if (to->n == 0) {
		*to = *s;
		return;
	}
	to->n += s->n;
	to->bytes = dimadd(r->m, to->bytes, s->bytes, &to->ok);
	to->ok &= s->ok;
	to->val = to->val < 0 || s->val < 0 ? -1 : to->val + s->val;
}

static bool
valbytes(const R *r, Ref v, Dim *b)
{
	const Type *t = &r->fn->val[v].type;
	bool ok = true;

	*b = dimprod(r->m, t->dim, t->rank, &ok);
	*b = dimmul(r->m, *b, dimconst((int64_t)valelemsize(r->fn, v)), &ok);
	return ok;
}

static void
addval(R *r, Sum *s, Ref v)
{
	Dim b;
	bool ok = valbytes(r, v, &b);

	addbytes(r, s, b, ok);
}

static void
printsum(R *r, const char *what, const Sum *s, const char *unit)
{
	char buf[1024];

	if (!s->n)
		return;
	fprintf(r->f, "  %s: ", what);
	if (!s->ok)
		fprintf(r->f, "too large for a formula");
	else if (snprintdim(buf, sizeof buf, r->m, s->bytes) < (int)sizeof buf)
		fputs(buf, r->f);
	else
		fprintdim(r->f, r->m, s->bytes);
	fprintf(r->f, " bytes in %d %s%s", s->n, unit, s->n == 1 ? "" : "s");
	if (s->val >= 0)
		fprintf(r->f, "; %lld with the graph", (long long)s->val);
	fputc('\n', r->f);
}

/* The bytes of instruction i's segment plan, as runtime/program.c's bind sizes it. */
static void
addplan(R *r, Sum *s, int i)
{
	const Ins *in = &r->fn->ins[i];
	const Type *t;
	bool ok = true;
	Dim n, b;

	if (rowsonly(r->fn, r->phase, r->cuda ? TargetCUDA : TargetCPU, i)) {
		/* its walks read plan-order copies: bind keeps the row starts */
		const Type *g = &r->fn->val[plangraph(r->fn, i)].type;
		b = dimadd(r->m, g->dim[0], 1, &ok);
	} else if (in->op == Oedge_softmax) {
		t = &r->fn->val[in->arg[0]].type;
		b = dimadd(r->m, dimadd(r->m, t->dim[0], 1, &ok), t->dim[1], &ok);
	} else {
		attrdim(in, "n", &n);
		t = &r->fn->val[in->arg[1]].type;
		b = dimadd(r->m, dimadd(r->m, n, 1, &ok), dimprod(r->m, t->dim, t->rank, &ok), &ok);
	}
	b = dimmul(r->m, b, 8, &ok);
	addbytes(r, s, b, ok);
}

/*
 * The walks' plan-order copies (rowkernel.c's permcopies, and on the cpu
 * a folded gather's index under its scatter, kernels.c): per plan and
 * bind-time edge array that a row group with a walk of that plan reads,
 * one copy of its E rows (on cuda a src index as int32: ids that do not
 * fit take int64, GNN_STEP_PERMUTE_INDEX; none under perm=1).  Calls f
 * for each, once.
 */
typedef struct Copies {
	struct { int w; Ref v; } *seen;
	int n, cap;
} Copies;

static void
onecopy(R *r, Copies *c, int w, Ref x, void (*f)(R *, int, Ref, bool, void *), void *ctx)
{
	Fn *fn = r->fn;
	const Ins *d = fn->val[x].def >= 0 ? &fn->ins[fn->val[x].def] : NULL;

	for (int q = 0; q < c->n; q++)
		if (c->seen[q].v == storageroot(fn, x) && (c->seen[q].w == w || sameplan(fn, r->phase, c->seen[q].w, w)))
			return;
	if (c->n == c->cap) {
		c->cap = c->cap ? 2 * c->cap : 8;
		c->seen = erealloc(c->seen, c->cap * sizeof *c->seen);
	}
	c->seen[c->n].w = w;
	c->seen[c->n++].v = storageroot(fn, x);
	f(r, w, x, r->cuda && d && d->op == Osrc, ctx);
}

static void
eachcopy(R *r, void (*f)(R *, int, Ref, bool, void *), void *ctx)
{
	Fn *fn = r->fn;
	Copies c = {0};

	for (int w = 0; w < fn->nins; w++) {
		const Ins *wi = &fn->ins[w];
		int grp = (int)attrint(wi, "group", -1), gi;
		Ref g;
		Sched sc;
		if (!((opinfo[wi->op].flags & Fscatter) || wi->op == Oedge_softmax) ||
		    (r->phase[wi->to] != PhaseForward && r->phase[wi->to] != PhaseOnce))
			continue;
		if (grp < 0 && !r->cuda && (opinfo[wi->op].flags & Fscatter) && (gi = viafold(fn, w)) >= 0 &&
		    r->phase[wi->arg[1]] == PhaseBind && r->phase[fn->ins[gi].arg[1]] == PhaseBind &&
		    valstoredtype(fn, wi->arg[0]) == DNone)
			onecopy(r, &c, w, fn->ins[gi].arg[1], f, ctx);   /* a folded gather's index */
		if (grp < 0 || (g = plangraph(fn, w)) == RNone)
			continue;
		groupsched(fn, grp, &sc);
		if (sc.perm && r->cuda)
			continue;
		for (int j = 0; j < fn->nins; j++)
			for (int k = 0; k < fn->ins[j].narg; k++) {
				Ref x = walkarray(fn, grp, g, j, k);
				if (x != RNone && r->phase[x] == PhaseBind)
					onecopy(r, &c, w, x, f, ctx);
			}
	}
	free(c.seen);
}

/* a copy's bytes: E rows of the array's, an index's as int32 */
static bool
copybytes(R *r, Ref x, bool index, Dim *b)
{
	const Type *t = &r->fn->val[x].type;
	bool ok = true;

	*b = dimprod(r->m, t->dim, t->rank, &ok);
	*b = dimmul(r->m, *b, dimconst(index ? 4 : (int64_t)valelemsize(r->fn, x)), &ok);
	return ok;
}

static void
sumcopy(R *r, int w, Ref x, bool index, void *ctx)
{
	Dim b;
	bool ok = copybytes(r, x, index, &b);

	(void)w;
	addbytes(r, (Sum *)ctx, b, ok);
}

/* a buffer line's bytes: the formula and, with the graph, the count */
static void
printbytes(R *r, Dim b, bool ok)
{
	int64_t n = ok && r->symval ? dimeval(r->m, b, r->symval) : -1;

	if (ok)
		fprintdim(r->f, r->m, b);
	else
		fprintf(r->f, "(too large)");
	fprintf(r->f, " bytes");
	if (n >= 0)
		fprintf(r->f, "; %lld", (long long)n);
	fputc('\n', r->f);
}

static void
printcopy(R *r, int w, Ref x, bool index, void *ctx)
{
	Dim b;
	bool ok = copybytes(r, x, index, &b);

	(void)ctx;
	fprintf(r->f, "      %%%s in the order of %%%s's plan%s: ", r->name[x], r->name[r->fn->ins[w].to], index ? ", int32" : "");
	printbytes(r, b, ok);
}

/* one buffer's line: its formula and, with the graph, its bytes */
static void
printval(R *r, Ref v, const char *what)
{
	Dim b;
	bool ok = valbytes(r, v, &b);

	fprintf(r->f, "      %s%%%s: ", what, r->name[v]);
	printbytes(r, b, ok);
}

/* a total's line: its formula (if every part has one) and its bytes */
static void
printtotal(R *r, const char *what, const Sum *s, int64_t extra)
{
	char buf[1024];

	fprintf(r->f, "  %s: ", what);
	if (!s->n)
		fprintf(r->f, "0");
	else if (!s->ok)
		fprintf(r->f, "too large for a formula");
	else if (snprintdim(buf, sizeof buf, r->m, s->bytes) < (int)sizeof buf)
		fputs(buf, r->f);
	else
		fprintdim(r->f, r->m, s->bytes);
	if (extra > 0)
		fprintf(r->f, " + the schedules' buffers (beside the forward slots)");
	fprintf(r->f, " bytes");
	if (s->val >= 0 && r->symval)
		fprintf(r->f, "; %lld with the graph", (long long)(s->val + extra));
	fputc('\n', r->f);
}

/* a parameter or load-time value with a device copy (forward reads it) */
static bool
weightval(R *r, Ref v)
{
	const Fn *fn = r->fn;

	return (r->phase[v] == PhaseParam || r->phase[v] == PhaseLoad) && fn->val[v].def >= 0 &&
	       !isalias(&fn->ins[fn->val[v].def]) && fn->val[v].type.kind == TTensor && readinforward(fn, r->phase, v);
}

/*
 * The cuda target's device buffers, as the runtime (program.c) holds
 * them once bind is done: the weights (each parameter and load-time
 * value forward reads, one allocation each), the graph tensors forward
 * reads (bind makes each on the device; the graph values' edge indexes
 * and the tensors only bind reads are gone by then), the segment plans,
 * the split plans, and the arena (forward's values, the split walks'
 * partials and split-K GEMMs' parts).  forward_host's staging is made
 * by its first call; the caller's inputs and outputs are the caller's.
 * With the graph, the schedules' buffers come from the cost model's
 * walk of the kernels (costmemory), sized as bind sizes them.
 */
static void
devicememory(R *r, const Sum *fwd, const Sum *copies, const Sum *plans, const Sum *stage)
{
	Fn *fn = r->fn;
	Sum w = {0}, held = {0}, arena = {0}, io = {0};
	int64_t ext, extarena, over;
	Ref v;
	int i;

	for (v = 0; v < fn->nval; v++)
		if (weightval(r, v))
			addval(r, &w, v);
	fprintf(r->f, "  device (each allocation rounded up to 256 bytes):\n");
	printsum(r, "  weights", &w, "buffer");
	for (v = 0; v < fn->nval; v++)
		if (weightval(r, v))
			printval(r, v, fn->ins[fn->val[v].def].op == Oparam ? "" : "load-time ");
	printsum(r, "  graph tensors", copies, "buffer");
	for (i = 0; i < fn->nins; i++) {
		v = fn->ins[i].to;
		if (r->phase[v] == PhaseBind && !isalias(&fn->ins[i]) && fn->val[v].type.kind == TTensor &&
		    readinforward(fn, r->phase, v) && !copiedonly(fn, r->phase, TargetCUDA, v))
			printval(r, v, "");
	}
	printsum(r, "  segment plans", plans, "buffer");
	eachcopy(r, printcopy, NULL);
	for (i = 0; r->items && i < r->nitems; i++)
		if (r->items[i].kind == MemSplitPlan)
			fprintf(r->f, "      %s: %lld bytes\n", r->items[i].what, (long long)r->items[i].bytes);
	ext = itembytes(r, true, false);
	addsum(r, &arena, fwd);
	extarena = itembytes(r, false, false);
	over = scratchover(r, fwd->val);
	fprintf(r->f, "    arena: forward values");
	if (r->items && extarena)
		fprintf(r->f, " and the schedules' scratch (each kernel's over the others' and over the forward slots "
		        "that hold nothing live while it runs), %lld bytes, %lld past the forward slots", (long long)extarena,
		        (long long)over);
	else if (!r->symval)
		fprintf(r->f, ", and the schedules' scratch (split walks' partials, split-K parts), sized by the graph");
	fputc('\n', r->f);
	for (i = 0; r->items && i < r->nitems; i++)
		if (r->items[i].kind != MemSplitPlan) {
			fprintf(r->f, "      %s: %lld bytes", r->items[i].what, (long long)r->items[i].bytes);
			printplace(r, i);
			fputc('\n', r->f);
		}
	if (!r->symval)
		fprintf(r->f, "    split plans: sized by the graph's degrees (--report-graph)\n");
	addsum(r, &held, &w);
	addsum(r, &held, copies);
	addsum(r, &held, plans);
	addsum(r, &held, &arena);
	addsum(r, &io, stage);
	printtotal(r, "held after bind", &held, ext + over);
	printtotal(r, "forward_host's staging (made by its first call, freed at unbind)", stage, 0);
	{
		Sum peak = held;
		addsum(r, &peak, &io);
		printtotal(r, "peak of a forward on the caller's device inputs and outputs", &peak, ext + over);
		addsum(r, &held, stage);
		printtotal(r, "peak of forward_host", &held, ext + over);
	}
	fprintf(r->f, "  not counted: bind's scratch while a step runs (its CSR sort: 32 bytes an edge), "
	        "the graph values until their last step\n");
}

static void
reportmemory(R *r)
{
	Fn *fn = r->fn;
	Sum fwd = {0}, noreuse = {0}, copies = {0}, plans = {0}, stage = {0}, arena = {0}, once = {0}, lazy = {0};
	int *buf, nbuf, b, i, k;
	Ref *rep, v;
	Dim bytes;
	bool ok;

	buf = emalloc((fn->nval + 1) * sizeof *buf);
	rep = emalloc((fn->nval + 1) * sizeof *rep);
	nbuf = arenabuffers(fn, r->phase, buf, rep, r->cuda);
	r->slots = emalloc((fn->nval + 1) * sizeof *r->slots);
	r->floor = emalloc((fn->nins + 1) * sizeof *r->floor);
	r->live = emalloc((fn->nins + 1) * sizeof *r->live);
	r->nslot = scratchfloors(fn, r->phase, buf, r->slots, r->floor, r->live, r->cuda);
	r->rep = rep;
	r->lazy = emalloc(nbuf + 1);
	for (b = 0; b < nbuf; b++) {
		r->lazy[b] = r->cuda && lazybuffer(fn, buf, rep, b);
		addval(r, r->lazy[b] ? &lazy : &fwd, rep[b]);
	}
	for (v = 0; v < fn->nval; v++)
		if (buf[v] >= 0)
			addval(r, &noreuse, v);
	/* a training step's once-time values: memory of their own, kept from
	 * step to step (bind allocates it) */
	for (i = 0; i < fn->nins; i++) {
		v = fn->ins[i].to;
		if (r->phase[v] == PhaseOnce && !isalias(&fn->ins[i]) && fn->val[v].type.kind == TTensor &&
		    !groupinternal(fn, v))
			addval(r, &once, v);
	}
	if (r->cuda) {
		for (i = 0; i < fn->nins; i++) {
			v = fn->ins[i].to;
			if (r->phase[v] == PhaseBind && !isalias(&fn->ins[i]) && fn->val[v].type.kind == TTensor &&
			    readinforward(r->fn, r->phase, v) && !copiedonly(fn, r->phase, TargetCUDA, v))
				addval(r, &copies, v);
		}
		for (i = 0; i < fn->nins; i++)
			if (r->phase[fn->ins[i].to] == PhaseForward &&
			    ((opinfo[fn->ins[i].op].flags & Fscatter) || fn->ins[i].op == Oedge_softmax) &&
			    (!bindplan(r, i) || firstplan(r, i)))
				addplan(r, &plans, i);
		/* the walks' plan-order copies: segments, as the plans */
		eachcopy(r, sumcopy, &plans);
		for (i = 0; i < fn->narg; i++)
			if (fn->val[fn->arg[i]].type.kind == TTensor)
				addval(r, &stage, fn->arg[i]);
		for (i = 0; i < fn->nret; i++)
			addval(r, &stage, fn->ret[i]);
	}
	/* the cpu's arena holds the bind-time values too; the cuda target's
	 * only forward's (bind makes the rest on the device, devicememory) */
	addsum(r, &arena, &fwd);
	if (!r->cuda) {
		addsum(r, &arena, &copies);
		addsum(r, &arena, &plans);
		addsum(r, &arena, &stage);
	}

	fprintf(r->f, "memory:\n");
	if (!arena.n)
		fprintf(r->f, "  arena: none (forward stores nothing)\n");
	else {
		fprintf(r->f, "  arena: ");
		if (arena.ok)
			fprintdim(r->f, r->m, arena.bytes);
		else
			fprintf(r->f, "too large for a formula");
		fprintf(r->f, " bytes (%d buffer%s, each rounded up to 256 bytes)%s\n", arena.n, arena.n == 1 ? "" : "s",
		        r->cuda ? ", and the schedules' scratch" : "");
	}
	printsum(r, "forward values", &fwd, "buffer");
	if (noreuse.n > fwd.n) {
		fprintf(r->f, "    without reuse: ");
		if (noreuse.ok)
			fprintdim(r->f, r->m, noreuse.bytes);
		else
			fprintf(r->f, "too large for a formula");
		fprintf(r->f, " bytes for %d values\n", noreuse.n);
	}
	for (b = 0; b < nbuf; b++) {
		ok = valbytes(r, rep[b], &bytes);
		fprintf(r->f, "    %s %d: ", attrint(&fn->ins[fn->val[rep[b]].def], "slot", -1) >= 0 ? "slot" : "buffer", b);
		if (ok)
			fprintdim(r->f, r->m, bytes);
		else
			fprintf(r->f, "(too large)");
		fprintf(r->f, " bytes:");
		for (v = 0, k = 0; v < fn->nval; v++)
			if (buf[v] == b)
				fprintf(r->f, "%s %%%s", k++ ? "," : "", r->name[v]);
		if (r->lazy[b])
			fprintf(r->f, " (returned: not in the arena)");
		fputc('\n', r->f);
	}
	printsum(r, "returned values not in the arena (forward writes them into the caller's device buffers, or into a "
	         "buffer of their own made by the first forward that cannot)", &lazy, "buffer");
	printsum(r, "kept by the step (computed once per bind and inputs)", &once, "buffer");
	if (r->cuda)
		devicememory(r, &fwd, &copies, &plans, &stage);
	else {
		Sum pc = {.exact = true};   /* host allocations of their size */
		printsum(r, "device copies of bind-time values", &copies, "buffer");
		printsum(r, "segment plans", &plans, "buffer");
		printsum(r, "forward_host staging", &stage, "buffer");
		/* the walks' copies: host memory of their own, not the arena's */
		eachcopy(r, sumcopy, &pc);
		printsum(r, "plan-order copies of edge arrays (bind makes them, beside the arena)", &pc, "buffer");
		eachcopy(r, printcopy, NULL);
	}
	if (r->cuda)
		vendormemory(r->f, fn);
	if (r->symval) {
		fprintf(r->f, "  with %s (", r->o->graph);
		for (i = 0, k = 0; i < r->m->nsym; i++)
			if (r->symval[i] >= 0)
				fprintf(r->f, "%s%s = %lld", k++ ? ", " : "", r->m->sym[i].name, (long long)r->symval[i]);
		if (arena.val >= 0)
			fprintf(r->f, "): arena %lld bytes\n", (long long)(arena.val + scratchover(r, fwd.val)));
		else
			fprintf(r->f, "): arena size unknown (a size the graph does not fix)\n");
	}
	free(buf);
	free(rep);
	free(r->slots);
	free(r->floor);
	free(r->live);
	free(r->lazy);
}

/* ---- the graph ------------------------------------------------------------- */

/*
 * The sizes of fn's symbols for the edge_index in o->graph: N and E from
 * the graph itself, the derived sizes from the derived graphs the
 * runtime builds (as bind does).  Returns NULL after a message.
 */
static int64_t *
graphsizes(R *r)
{
	Fn *fn = r->fn;
	const Ins *in;
	gnn_graph **g = NULL, *out;
	int64_t *sv = NULL, nodes = r->o->nodes, have[3];
	const char *what[3] = {"nodes", "edges", "graphs"};
	int i, k, s;
	Type t;
	Ref garg = reportgraphinput(fn);
	bool ok = false;

	if (garg == RNone)
		return NULL;
	g = emalloc((fn->nval + 1) * sizeof *g);
	memset(g, 0, (fn->nval + 1) * sizeof *g);
	if (gnn_graph_read_npy(&g[garg], r->o->graph, nodes) != GNN_OK) {
		fprintf(stderr, "gnncc: error: --report-graph: %s\n", gnn_errmsg());
		goto out;
	}
	sv = emalloc((r->m->nsym + 1) * sizeof *sv);
	for (s = 0; s < r->m->nsym; s++)
		sv[s] = -1;
	t = fn->val[garg].type;
	have[0] = gnn_graph_num_nodes(g[garg]);
	have[1] = gnn_graph_num_edges(g[garg]);
	have[2] = gnn_graph_num_graphs(g[garg]);
	for (k = 0; k < t.rank; k++)
		if (!dimbind(r->m, t.dim[k], have[k], sv)) {
			fprintf(stderr, "gnncc: error: --report-graph: model %s takes ", fn->name);
			fprintdim(stderr, r->m, t.dim[k]);
			fprintf(stderr, " %s, %s has %lld\n", what[k], r->o->graph, (long long)have[k]);
			goto out;
		}
	/* the derived graphs, in order, as bind builds them */
	for (i = 0; i < fn->nins; i++) {
		in = &fn->ins[i];
		if (fn->val[in->to].type.kind != TGraph || !in->narg || !g[in->arg[0]])
			continue;
		out = NULL;
		if (in->op == Oadd_self_loops && gnn_graph_add_self_loops(g[in->arg[0]], &out) != GNN_OK)
			goto rterr;
		if (in->op == Oremove_self_loops && gnn_graph_remove_self_loops(g[in->arg[0]], &out) != GNN_OK)
			goto rterr;
		if (in->op == Oadd_remaining_self_loops &&
		    gnn_graph_add_remaining_self_loops(g[in->arg[0]], (float)attrfloat(in, "fill", 1.0), &out) != GNN_OK)
			goto rterr;
		if (!(g[in->to] = out))
			continue;
		t = fn->val[in->to].type;
		if (!dimbind(r->m, t.dim[1], gnn_graph_num_edges(out), sv)) {
			fprintf(stderr, "gnncc: error: --report-graph: %s of %s has %lld edges, which the model's ",
			        opinfo[in->op].name, r->o->graph, (long long)gnn_graph_num_edges(out));
			fprintdim(stderr, r->m, t.dim[1]);
			fprintf(stderr, " does not fit\n");
			goto out;
		}
	}
	ok = true;
	goto out;
rterr:
	fprintf(stderr, "gnncc: error: --report-graph: %s\n", gnn_errmsg());
out:
	for (i = 0; i < fn->nval; i++)
		gnn_graph_destroy(g[i]);
	free(g);
	if (!ok) {
		free(sv);
		return NULL;
	}
	return sv;
}

/* ---- the report ------------------------------------------------------------ */

int
report(FILE *f, Mod *m, const ReportOpts *o)
{
	R r = {.f = f, .m = m, .o = o, .cuda = o->target == TargetCUDA};
	int rc = 0;
	Fn *fn;

	for (fn = m->fn; fn; fn = fn->link) {
		r.fn = fn;
		filluse(fn);
		r.phase = emalloc(fn->nval + 1);
		r.kern = emalloc((fn->nins + 1) * sizeof *r.kern);
		phases(fn, r.phase);
		r.nkern = forwardkernels(fn, r.phase, r.kern);
		r.name = valnames(fn);
		r.symval = NULL;
		r.items = NULL;
		r.nitems = 0;
		if ((o->what & ReportMemory) && o->graph) {
			if (r.cuda ? costmemory(m, fn, o, &r.symval, &r.items, &r.nitems) < 0 : !(r.symval = graphsizes(&r)))
				rc = -1;
		}
		fprintf(f, "model %s (--target=%s)\n", fn->name, r.cuda ? "cuda" : "cpu");
		if (o->what & ReportKernels)
			reportkernels(&r);
		if (o->what & ReportBreaks)
			reportbreaks(&r);
		if (o->what & ReportSyncs)
			reportsyncs(&r);
		if (o->what & ReportMemory)
			reportmemory(&r);
		if ((o->what & ReportCost) && reportcost(f, m, fn, o) < 0)
			rc = -1;
		freevalnames(r.name);
		free(r.symval);
		free(r.items);
		free(r.kern);
		free(r.phase);
	}
	return rc;
}
