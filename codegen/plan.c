/*
 * Planning before emission: which instructions run when a graph is bound
 * and which in forward, where each value lives, and whether the target
 * can compile the function at all.
 *
 * A value is bind-time when it depends on no tensor input and no
 * parameter: graph ops, degrees, normalizations, index tensors, and any
 * arithmetic on them (PyG's cached=True, but always correct, since it is
 * recomputed for every bound graph).  Everything else is forward work.
 * Reshape and dropout produce no code: their value is their operand.
 */
#include <string.h>

#include "codegen.h"
#include "plan.h"

/* The value whose storage v shares: the IR's one walk (storageroot). */
Ref
storageof(const Plan *p, Ref v)
{
	return storageroot(p->fn, v);
}

static bool
checkdtype(Fn *fn, Ref v, Loc loc)
{
	Type t = fn->val[v].type;

	if (t.kind != TTensor || (t.dtype != DF16 && t.dtype != DBF16))
		return true;
	/* a 16-bit input is read as its f32 view (cast(x, "f32"), a
	 * widen): kernels load its words (valstoredtype) */
	if (fn->val[v].def < 0) {
		bool ok = true;

		for (int i = 0; i < fn->nins; i++)
			for (int k = 0; k < fn->ins[i].narg; k++)
				if (fn->ins[i].arg[k] == v && fn->ins[i].op != Owiden)
					ok = false;
		for (int i = 0; i < fn->nret; i++)
			ok &= fn->ret[i] != v;
		if (ok)
			return true;
		errorat(loc, "model %s: input '%s' is %s, which code generation reads only as f32: "
		        "write cast(%s, \"f32\") where the model uses it", fn->name, fn->val[v].name,
		        dtypename(t.dtype), fn->val[v].name);
		return false;
	}
	/* a 16-bit output: a cast of an f32 value that only the caller
	 * reads, whose kernel writes the words (memctype) */
	{
		const Ins *d = &fn->ins[fn->val[v].def];
		int at, n = usecount(fn, v, &at);

		if (d->op == Ocast && fn->val[d->arg[0]].type.dtype == DF32 && n > 0 && at < 0)
			return true;
	}
	errorat(loc, "code generation does not support %s tensors yet, except a model's inputs and its outputs "
	        "cast from f32 (f32 values with --precision=%s store them in 16 bits)", dtypename(t.dtype),
	        t.dtype == DBF16 ? "bf16" : "fp16");
	return false;
}

/* A 16-bit store (passes/precision.c) is one the target makes: the cpu
 * target rounds what a kernel writes to memory; a value a fused kernel
 * keeps in registers is never written, so it cannot be stored rounded */
static bool
checkstore(Fn *fn, const unsigned char *phase, const Ins *in)
{
	int sdt = storedtype(in), rdt = rounddtype(in);

	if (rdt != DNone) {   /* rounded where a kernel makes it, kept float32 */
		if (in->op == Oparam || (opinfo[in->op].flags & Falias)) {
			errorat(in->loc, "round = \"%s\" on a value no kernel writes", dtypename(rdt));
			return false;
		}
	}
	if (sdt == DNone)
		return true;
	/* forward's kernels, or a weight a load-time kernel writes (a dense
	 * transform's rounded weights, passes/precision.c) */
	if (!needsstorage(fn, phase, in->to) &&
	    !(phase[in->to] == PhaseLoad && !(opinfo[in->op].flags & Falias) && fn->val[in->to].type.kind == TTensor)) {
		errorat(in->loc, "store = \"%s\" on a value no forward kernel writes to memory", dtypename(sdt));
		return false;
	}
	return true;
}

/* Every symbol of d is known after bind: graph sizes or derived ones. */
static bool
dimbound(const Plan *p, Dim d)
{
	const DExp *e;
	int i, k;

	if (dimisconst(d))
		return true;
	e = &p->fn->mod->dexp[~d];
	for (i = 0; i < e->nterm; i++)
		for (k = 0; k < e->term[i].deg; k++)
			if (!p->symknown[e->term[i].sym[k]])
				return false;
	return true;
}

int
plan(Plan *p, Fn *fn, int target)
{
	Mod *m = fn->mod;
	int i, k, nerr = 0;
	Ins *in;
	Type t;
	int s;

	memset(p, 0, sizeof *p);
	p->fn = fn;
	p->target = target;
	p->phase = emalloc((fn->nval + 1) * sizeof *p->phase);
	p->symknown = emalloc((m->nsym + 1) * sizeof *p->symknown);
	p->graph = RNone;
	filluse(fn);
	phases(fn, p->phase);
	for (i = 0; i < fn->narg; i++) {
		Ref a = fn->arg[i];
		t = fn->val[a].type;
		if (t.kind != TGraph)
			continue;
		/* the first graph input; every graph input (a heterogeneous
		 * graph's relations) is bound, each with its own sizes */
		if (p->graph == RNone)
			p->graph = a;
		for (k = 0; k < t.rank; k++) {
			if (dimisconst(t.dim[k]))
				continue;
			if ((s = dimassym(m, t.dim[k])) < 0) {
				errorat(fn->loc, "model %s: a graph size must be a symbol or a constant", fn->name);
				nerr++;
				continue;
			}
			p->symknown[s] = true;
		}
	}
	if (p->graph == RNone) {
		errorat(fn->loc, "model %s has no graph input; code generation needs one", fn->name);
		nerr++;
	}
	for (i = 0; i < m->nsym; i++)
		if (m->sym[i].derived)
			p->symknown[i] = true;
	for (i = 0; i < fn->narg; i++) {
		t = fn->val[fn->arg[i]].type;
		nerr += !checkdtype(fn, fn->arg[i], fn->loc);
		for (k = 0; t.kind == TTensor && k < t.rank; k++)
			if (!dimbound(p, t.dim[k])) {
				char *buf = typestr(NULL, m, t);
				errorat(fn->loc, "model %s: input '%s' is %s, whose size is not determined by the graph",
				        fn->name, fn->val[fn->arg[i]].name, buf);
				free(buf);
				nerr++;
				break;
			}
	}
	/* the API hands back tensors (gnn_tensor_info has no graphs) */
	for (i = 0; i < fn->nret; i++)
		if (fn->val[fn->ret[i]].type.kind != TTensor) {
			errorat(fn->loc, "model %s: output %d is a graph; code generation returns tensors only",
			        fn->name, i);
			nerr++;
		}
	for (i = 0; i < fn->nins; i++) {
		in = &fn->ins[i];
		nerr += !checkdtype(fn, in->to, in->loc);
		nerr += !checkstore(fn, p->phase, in);
		if (in->op == Oparam) {
			p->nparam++;
			continue;
		}
		if ((opinfo[in->op].flags & Fscatter) && p->phase[in->arg[1]] != PhaseBind &&
		    target == TargetCUDA) {
			/* the break path (index to the host, sort, upload) is future work */
			errorat(in->loc, "the cuda target needs a scatter index that depends only on the graph; "
			        "this one is a graph break (gnncc --report=breaks says why)");
			nerr++;
		}
	}
	return nerr;
}

void
planfree(Plan *p)
{
	free(p->phase);
	free(p->symknown);
	memset(p, 0, sizeof *p);
}

/* every schedule (sched = "..." in IR text) starts a kernel and is legal for it */
static int
checkscheds(Fn *fn, int target, unsigned vendor)
{
	SchedTarget st = {.target = target, .vendor = vendor};
	Kernel *ks;
	int i, nk = listkernels(fn, &ks), nerr = 0, k;
	char err[256], text[128];
	Sched s;

	for (i = 0; i < fn->nins; i++) {
		if (!hassched(&fn->ins[i]))
			continue;
		for (k = 0; k < nk && ks[k].first != i; k++)
			;
		if (k == nk) {
			errorat(fn->ins[i].loc, "a 'sched' attribute belongs on the first instruction of a forward kernel");
			nerr++;
			continue;
		}
		schedof(&fn->ins[i], &s);
		if (schedlegal(&ks[k], &st, &s, err, sizeof err) < 0) {
			schedprint(text, sizeof text, &s);
			errorat(fn->ins[i].loc, "schedule '%s' for --target=%s: %s", text, target == TargetCUDA ? "cuda" : "cpu", err);
			nerr++;
		}
	}
	free(ks);
	return nerr;
}

int
codegencheck(Mod *m, const CodegenOpts *o)
{
	Plan p;
	Fn *fn;
	int nerr = 0;

	for (fn = m->fn; fn; fn = fn->link) {
		nerr += plan(&p, fn, o->target);
		planfree(&p);
	}
	for (fn = m->fn; fn; fn = fn->link) {
		char err[256];
		Loc where;
		if (checkgroups(fn, &where, err, sizeof err) < 0) {
			errorat(where, "%s", err);
			nerr++;
		} else
			nerr += checkscheds(fn, o->target, o->vendor);
		/* a GEMM's epilogue group is cuda's tiled GEMM */
		for (int i = 0; o->target == TargetCPU && i < fn->nins; i++)
			if (epilogueend(fn, i) >= 0) {
				errorat(fn->ins[i].loc, "'epilogue' (a GEMM's fusion group) is for --target=cuda: the cpu target's GEMMs take no epilogue group");
				nerr++;
			}
		/* readfold's reads-through are the cpu target's kernels */
		for (int i = 0; o->target == TargetCUDA && i < fn->nins; i++)
			if (viafold(fn, i) >= 0) {
				errorat(fn->ins[i].loc, "'via' (readfold) is for --target=cpu: the cuda target's kernels do not read through '%s'",
				        opinfo[fn->ins[fn->val[fn->ins[i].arg[0]].def].op].name);
				nerr++;
			}
	}
	if (!m->fn) {
		errorat((Loc){0}, "no model to compile");
		nerr++;
	}
	return nerr;
}

bool
readinforward(const Fn *fn, const unsigned char *phase, Ref v)
{
	int i, k;

	for (i = 0; i < fn->nret; i++)
		if (storageroot(fn, fn->ret[i]) == v)
			return true;
	for (i = 0; i < fn->nins; i++)
		if ((phase[fn->ins[i].to] == PhaseForward || phase[fn->ins[i].to] == PhaseOnce) &&
		    !(opinfo[fn->ins[i].op].flags & Falias))
			for (k = 0; k < fn->ins[i].narg; k++) {
				/* a scatter by a bind-time index walks its segment plan
				 * and never reads the index (kernels.c, rowkernel.c) */
				if (k == 1 && (opinfo[fn->ins[i].op].flags & Fscatter) && phase[fn->ins[i].arg[1]] == PhaseBind)
					continue;
				if (storageroot(fn, fn->ins[i].arg[k]) == v)
					return true;
			}
	return false;
}

/* the schedule of row group grp (its first instruction's) */
void
groupsched(const Fn *fn, int grp, Sched *s)
{
	scheddefault(s);
	for (int i = 0; i < fn->nins; i++)
		if (attrint(&fn->ins[i], "group", -1) == grp) {
			schedof(&fn->ins[i], s);
			return;
		}
}

bool
copiedonly(const Fn *fn, const unsigned char *phase, int target, Ref v)
{
	const Type *t = &fn->val[v].type;
	bool any = false;

	if (target != TargetCUDA || phase[v] != PhaseBind || t->kind != TTensor || t->rank < 1)
		return false;
	for (int i = 0; i < fn->nret; i++)
		if (storageroot(fn, fn->ret[i]) == v)
			return false;
	for (int i = 0; i < fn->nins; i++) {
		const Ins *in = &fn->ins[i];
		int grp;
		if ((phase[in->to] != PhaseForward && phase[in->to] != PhaseOnce) || (opinfo[in->op].flags & Falias))
			continue;
		for (int k = 0; k < in->narg; k++) {
			const Ins *d;
			bool walked = false;
			Sched s;
			if (storageroot(fn, in->arg[k]) != v)
				continue;
			if (k == 1 && (opinfo[in->op].flags & Fscatter) && phase[in->arg[1]] == PhaseBind)
				continue;   /* its plan is what the walk reads */
			d = fn->val[in->arg[k]].def >= 0 ? &fn->ins[fn->val[in->arg[k]].def] : NULL;
			if ((grp = (int)attrint(in, "group", -1)) < 0 || (in->op == Ogather && k == 1 && d && d->op == Odst))
				return false;
			for (int w = 0; w < fn->nins && !walked; w++) {
				Ref g;
				if (((opinfo[fn->ins[w].op].flags & Fscatter) || fn->ins[w].op == Oedge_softmax) &&
				    attrint(&fn->ins[w], "group", -1) == grp && (g = plangraph(fn, w)) != RNone &&
				    fn->val[g].type.dim[1] == t->dim[0])
					walked = true;
			}
			groupsched(fn, grp, &s);
			if (!walked || s.perm)
				return false;
			any = true;
		}
	}
	return any;
}

Ref
groupbase(const Fn *fn, Ref v, int grp)
{
	const Ins *d;

	while (fn->val[v].def >= 0 && (opinfo[(d = &fn->ins[fn->val[v].def])->op].flags & Falias) &&
	       attrint(d, "group", -1) == grp)
		v = d->arg[0];
	return v;
}

bool
rowsonly(const Fn *fn, const unsigned char *phase, int target, int i)
{
	if (target != TargetCUDA)
		return false;
	for (int w = 0; w < fn->nins; w++) {
		const Ins *wi = &fn->ins[w];
		int grp;
		Ref g;
		Sched sc;
		if (!((opinfo[wi->op].flags & Fscatter) || wi->op == Oedge_softmax) ||
		    (phase[wi->to] != PhaseForward && phase[wi->to] != PhaseOnce) || (w != i && !sameplan(fn, phase, i, w)))
			continue;
		/* a walk of the plan: a row group's, reading no edge array but
		 * through its copies (rowkernel.c's compute reads e_ else) */
		if ((grp = (int)attrint(wi, "group", -1)) < 0 || (g = plangraph(fn, w)) == RNone)
			return false;
		groupsched(fn, grp, &sc);
		if (sc.perm)
			return false;
		for (int j = 0; j < fn->nins; j++)
			for (int k = 0; k < fn->ins[j].narg; k++) {
				Ref x = walkarray(fn, grp, g, j, k);
				if (x != RNone && phase[x] != PhaseBind)
					return false;
			}
	}
	return true;
}

Ref
walkarray(const Fn *fn, int grp, Ref g, int j, int k)
{
	const Ins *in = &fn->ins[j], *d;
	const Type *t;
	Ref x;

	if (attrint(in, "group", -1) != grp)
		return RNone;
	x = groupbase(fn, in->arg[k], grp);
	t = &fn->val[x].type;
	d = fn->val[x].def >= 0 ? &fn->ins[fn->val[x].def] : NULL;
	if ((d && attrint(d, "group", -1) == grp) || t->kind != TTensor || t->rank < 1 || t->dim[0] != fn->val[g].type.dim[1] ||
	    ((opinfo[in->op].flags & Fscatter) && k == 1) || (in->op == Ogather && k == 1 && d && d->op == Odst))
		return RNone;
	return x;
}

/* the graph whose edges instruction i walks by target, or RNone */
Ref
plangraph(const Fn *fn, int i)
{
	const Ins *in = &fn->ins[i], *ix;
	Dim n;

	if (in->op == Oedge_softmax)
		return in->arg[0];
	ix = fn->val[in->arg[1]].def >= 0 ? &fn->ins[fn->val[in->arg[1]].def] : NULL;
	if (ix && ix->op == Odst && attrdim(in, "n", &n) && n == fn->val[ix->arg[0]].type.dim[0])
		return ix->arg[0];
	return RNone;
}

bool
sameplan(const Fn *fn, const unsigned char *phase, int i, int j)
{
	const Ins *a = &fn->ins[i], *b = &fn->ins[j];
	Ref ga, gb;
	Dim na, nb;

	if ((a->op != Oedge_softmax && phase[a->arg[1]] != PhaseBind) || (b->op != Oedge_softmax && phase[b->arg[1]] != PhaseBind))
		return false;
	ga = plangraph(fn, i);
	gb = plangraph(fn, j);
	if (ga != RNone || gb != RNone)
		return ga == gb;
	return storageroot(fn, a->arg[1]) == storageroot(fn, b->arg[1]) && attrdim(a, "n", &na) && attrdim(b, "n", &nb) && na == nb;
}
