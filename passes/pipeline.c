/*
 * The pass manager: a table of named passes, the default pipelines per
 * optimization level, and the loop that runs a pipeline over a module
 * with dumps and verification in between.
 *
 * A pipeline is checked whole before anything runs, so a typo in the
 * last name of --passes=... is reported without doing half the work.
 * Passes run pass-major (every function through one pass, then the next
 * pass) so that "# after pass 'cse'" is a dump of the whole module.
 *
 * replaceuses() lives here because every rewriting pass needs it and it
 * is the one place that must know all the places a value is used.
 */
#include <stdlib.h>
#include <string.h>

#include "passes.h"

#ifndef GNNCC_VERIFY_DEFAULT
#define GNNCC_VERIFY_DEFAULT 0
#endif

const Pass passtab[] = {
	{"canonicalize", canonicalize, "exact algebraic identities (dropout, x*1, transpose/reshape)"},
	{"fold", fold, "fold elementwise ops and reductions of constants into constants"},
	{"cse", cse, "merge instructions that compute the same value"},
	{"dce", dce, "remove instructions whose values are unused (params stay)"},
	{"reorder", reorder, "move dense transforms across sum/mean aggregation to the narrower side"},
	{"invariant", invariant, "training steps: mark the work on the graph and constant inputs alone, done once per bind"},
	{"hoist", hoist, "order work by when it runs: weights loaded, graph bound, once per bind (training), forward"},
	{"fuse", fuse, "fuse message passing and its epilogues into row kernels"},
	{"memplan", memplan, "arena slots: forward values share memory when their lifetimes are disjoint"},
	{"readfold", readfold, "cpu target: a scatter, a weight gradient or a column sum reads through the gather, transpose or product that made its operand"},
	{"sinkreduce", sinkreduce, "cpu target: a sum over rows (and a product only it reads) moves down past the elementwise row work after it, to at most its first use"},
	{"colscale", colscale, "cpu target: a sum over rows of a product with a column-scaled factor sums unscaled and scales once"},
	{"sinkelem", sinkelem, "cpu target: elementwise row work that would run alone moves down to its first use, into that use's row kernel"},
	{"gemmepilogue", gemmepilogue, "cuda target: the elementwise work after a tiled GEMM (bias, a sum, an activation) joins it as its epilogue"},
	{"tilegemm", tilegemm, "cpu target, --precision=bf16: a dense transform of depth a multiple of 32 stays its own GEMM (AMX tiles) instead of a row kernel's row-at-a-time product"},
	{"tcgemm", tcgemm, "cuda target, --precision=bf16: a dense transform by weights of 1024 elements or more stays its own GEMM (bfloat16 tensor cores) instead of a row kernel's row-at-a-time product, moved up to just after its operands"},
	{"store-bf16", storebf16, "--precision=bf16: values forward writes are stored in bfloat16 (rounded), arithmetic f32"},
	{"store-f16", storef16, "--precision=fp16: values forward writes are stored in IEEE half (rounded), arithmetic f32"},
	{"specialize", specialize, "--specialize's graph sizes become constants (run first when given)"},
	{NULL, NULL, NULL},
};

/* -O1 and -O2 are the same until there are passes that differ */
static const char o2pipeline[] = "canonicalize,fold,cse,dce,reorder,cse,dce,invariant,hoist,fuse,memplan";

const Pass *
findpass(const char *name)
{
	const Pass *p;

	for (p = passtab; p->name; p++)
		if (strcmp(p->name, name) == 0)
			return p;
	return NULL;
}

void
fprintpassnames(FILE *f)
{
	const Pass *p;

	for (p = passtab; p->name; p++)
		fprintf(f, "%s%s", p == passtab ? "" : ", ", p->name);
}

const char *
defaultpipeline(int olevel)
{
	return olevel <= 0 ? "" : o2pipeline;
}

static void
unknownpass(const char *what, const char *name, size_t len)
{
	fprintf(stderr, "gnncc: error: %s '%.*s'; passes: ", what, (int)len, name);
	fprintpassnames(stderr);
	fputc('\n', stderr);
}

static bool
isspacec(char c)
{
	return c == ' ' || c == '\t' || c == '\n';
}

/*
 * Split a comma list into passes.  Blanks around names are allowed
 * ("cse, dce" from a quoted shell argument); an empty list is no passes;
 * an empty name inside a list ("cse,,dce") is an error, since it is
 * most likely a typo.  *out is malloc'd; returns the count or -1.
 */
static int
parsepipeline(const char *s, const Pass ***out)
{
	const Pass **v = NULL, *p;
	const char *b, *e;
	char name[64];
	int n = 0;

	*out = NULL;
	for (b = s; isspacec(*b); b++)
		;
	if (!*b)
		return 0;
	for (;;) {
		while (isspacec(*s))
			s++;
		for (e = s; *e && *e != ','; e++)
			;
		b = e;
		while (b > s && isspacec(b[-1]))
			b--;
		if (b == s) {
			fprintf(stderr, "gnncc: error: empty pass name in pipeline\n");
			goto fail;
		}
		p = NULL;
		if ((size_t)(b - s) < sizeof name) {
			memcpy(name, s, b - s);
			name[b - s] = 0;
			p = findpass(name);
		}
		if (!p) {
			unknownpass("unknown pass", s, b - s);
			goto fail;
		}
		v = erealloc(v, (n + 1) * sizeof *v);
		v[n++] = p;
		if (!*e)
			break;
		s = e + 1;
	}
	*out = v;
	return n;
fail:
	free(v);
	return -1;
}

static const char *
pipelineof(const PassOpts *o)
{
	return o->pipeline ? o->pipeline : defaultpipeline(o->olevel);
}

/*
 * A pass the options add (--precision's, the cpu target's readfold)
 * goes before memplan (after fusion: which values are written depends
 * on the kernels), or last when there is no memplan (-O0, a --passes
 * list), unless the pipeline names it itself; the cpu target's
 * colscale, sinkreduce and sinkelem go before fuse, whose runs they
 * lengthen.
 */
static int
addbefore(const char *name, void (*next)(Fn *), const Pass ***out, int n)
{
	const Pass *p = findpass(name), **v;
	int i, at = n;

	if (!p)
		die("no pass '%s'", name);
	for (i = 0; i < n; i++) {
		if ((*out)[i] == p)
			return n;
		if ((*out)[i]->run == next && at == n)
			at = i;
	}
	v = emalloc((n + 1) * sizeof *v);
	if (at)
		memcpy(v, *out, at * sizeof *v);
	v[at] = p;
	if (n > at)
		memcpy(v + at + 1, *out + at, (n - at) * sizeof *v);
	free(*out);
	*out = v;
	return n + 1;
}

/*
 * The pipeline to run: --specialize puts specialize first (at every -O
 * level: it changes what the model accepts), unless the pipeline names
 * it itself.  Returns the count or -1, as parsepipeline.
 */
static int
passlist(const PassOpts *o, const Pass ***out)
{
	const Pass **v;
	int n, i;
	bool bf16;

	if ((n = parsepipeline(pipelineof(o), out)) < 0)
		return n;
	if (o->precision && (n = addbefore(o->precision, memplan, out, n)) < 0)
		return n;
	/* the cpu target's: colscale, sinkreduce and sinkelem before fuse,
	 * whose runs they lengthen; under bf16 tilegemm before fuse, which
	 * reads its marks; readfold (kernels read through a gather, a transpose
	 * or a product) before memplan, after the precision pass (which
	 * decides what is stored in 16 bits) */
	bf16 = o->precision && strcmp(o->precision, "store-bf16") == 0;
	if (o->hostforward && o->olevel >= 1 && !o->pipeline &&
	    ((n = addbefore("colscale", fuse, out, n)) < 0 || (n = addbefore("sinkreduce", fuse, out, n)) < 0 ||
	     (n = addbefore("sinkelem", fuse, out, n)) < 0 ||
	     (bf16 && (n = addbefore("tilegemm", fuse, out, n)) < 0) ||
	     (n = addbefore("readfold", memplan, out, n)) < 0))
		return n;
	/* cuda's: under bf16 tcgemm before fuse, which reads its marks;
	 * the GEMM epilogues after fuse, whose groups a step may leave, and
	 * before the precision pass, which must not round what the group
	 * keeps in registers */
	if (!o->hostforward && o->olevel >= 1 && !o->pipeline && bf16 && (n = addbefore("tcgemm", fuse, out, n)) < 0)
		return n;
	if (!o->hostforward && o->olevel >= 1 && !o->pipeline &&
	    (n = addbefore("gemmepilogue", o->precision ? findpass(o->precision)->run : memplan, out, n)) < 0)
		return n;
	if (!o->specialize)
		return n;
	if (checkspecialize(o->specialize) < 0) {
		free(*out);
		*out = NULL;
		return -1;
	}
	for (i = 0; i < n; i++)
		if ((*out)[i]->run == specialize)
			return n;
	v = emalloc((n + 1) * sizeof *v);
	v[0] = findpass("specialize");
	if (n)
		memcpy(v + 1, *out, n * sizeof *v);
	free(*out);
	*out = v;
	return n + 1;
}

int
checkpassopts(const PassOpts *o)
{
	const Pass **v;
	int n, i;

	if ((n = passlist(o, &v)) < 0)
		return -1;
	if (o->dumpafter && strcmp(o->dumpafter, "all") != 0) {
		if (!findpass(o->dumpafter)) {
			unknownpass("--dump-ir: unknown pass", o->dumpafter, strlen(o->dumpafter));
			free(v);
			return -1;
		}
		for (i = 0; i < n; i++)
			if (strcmp(v[i]->name, o->dumpafter) == 0)
				break;
		/* not an error: -O0 --dump-ir=cse is a fair thing to try */
		if (i == n)
			fprintf(stderr, "gnncc: warning: pass '%s' is not in the pipeline; nothing to dump\n",
			        o->dumpafter);
	}
	free(v);
	return 0;
}

/* A pass broke the IR: that is our bug, not the user's. */
static _Noreturn void
brokenir(Fn *fn, const char *pass)
{
	fprintf(stderr, "gnncc: IR after pass '%s':\n", pass);
	printfn(stderr, fn);
	die("pass '%s' produced invalid IR in @%s", pass, fn->name);
}

int
runpasses(Mod *m, const PassOpts *o)
{
	const Pass **v;
	FILE *out = o->dumpto ? o->dumpto : stdout;
	bool verify = o->verifyeach || GNNCC_VERIFY_DEFAULT;
	bool all = o->dumpafter && strcmp(o->dumpafter, "all") == 0;
	int n, i, nerr = diag_nerrors(), rc = 0;
	Fn *fn;

	if ((n = passlist(o, &v)) < 0 || specializeprep(m, o->specialize) < 0) {
		free(v);
		return -1;
	}
	for (i = 0; i < n; i++) {
		for (fn = m->fn; fn; fn = fn->link) {
			v[i]->run(fn);
			/* a pass may find a user error (specialize: a size
			 * that overflows); the IR is then not to be trusted */
			if (diag_nerrors() > nerr) {
				rc = -1;
				goto out;
			}
			filluse(fn);
			if (verify && !verifyfn(fn, v[i]->name))
				brokenir(fn, v[i]->name);
		}
		if (all || (o->dumpafter && strcmp(o->dumpafter, v[i]->name) == 0)) {
			fprintf(out, "# after pass '%s'\n", v[i]->name);
			printmod(out, m);
		}
	}
	/* breaks are whatever the pipeline left */
	if (o->nographbreaks && checkbreaks(m, o->hostforward) > 0)
		rc = -1;
out:
	specializedone();
	free(v);
	return rc;
}

void
replaceuses(Fn *fn, Ref from, Ref to)
{
	Ins *in;
	int i, k;

	if (from == to)
		return;
	for (i = 0; i < fn->nins; i++) {
		in = &fn->ins[i];
		for (k = 0; k < in->narg; k++)
			if (in->arg[k] == from)
				in->arg[k] = to;
	}
	for (i = 0; i < fn->nret; i++)
		if (fn->ret[i] == from)
			fn->ret[i] = to;
	if (!fn->val[to].name)
		fn->val[to].name = fn->val[from].name;
}
