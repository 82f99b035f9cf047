/*
 * Emission of a model's C (--target=cpu) or CUDA C (--target=cuda)
 * source and of its header.
 *
 * The generated file is standalone: it needs only gnnrt.h (and the CUDA
 * runtime for cuda).  Per model it holds
 *   1. one function per instruction: a parallel loop over independent
 *      tasks (output elements, rows, segments), whose sizes arrive as
 *      arguments.  Bind-time instructions always run on the host; forward
 *      instructions run on the device for cuda, so their functions are
 *      __global__ kernels there and plain loops (OpenMP where available)
 *      for cpu.  Loop bodies are written once, for both;
 *   2. bind: graph ops through the runtime, derived sizes, the other
 *      bind-time values, segment plans for deterministic scatters, and
 *      the memory plan (every forward value gets its offset in one arena,
 *      sized from N, E and the derived sizes; nothing is allocated in
 *      forward);
 *   3. the API (create, load_weights, bind, forward, forward_host,
 *      destroy) and the descriptor that generic tools use.
 */
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
	}
	die("codegen: no C type for %s", dtypename(dt));
}

static const char *
gnndtype(int dt)
{
	switch (dt) {
	case DF32: return "GNN_F32";
	case DF64: return "GNN_F64";
	case DI32: return "GNN_I32";
	case DI64: return "GNN_I64";
	case DBool: return "GNN_BOOL";
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

const char *
storage(E *e, Ref v, bool dev)
{
	return pf(e, "m->%s[%d]", dev ? "d" : "h", v);
}

const char *
segment(E *e, int i, bool dev)
{
	return pf(e, "m->%sseg[%d]", dev ? "d" : "h", i);
}

const char *
segbytes(E *e, int i)
{
	return pf(e, "m->segnb[%d]", i);
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

/* the element count of v as a C expression */
const char *
cnumel(E *e, Ref v)
{
	Type t = ty(e, v);
	bool ok = true;
	Dim n = dimprod(e->m, t.dim, t.rank, &ok);

	if (!ok)
		die("codegen: element count overflows");
	return cdim(e, n);
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
	return in->op == Oreshape || in->op == Odropout;
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
	Fn *fn = e->fn;
	int i, k;

	for (i = 0; i < fn->nret; i++)
		if (storageof(e->p, fn->ret[i]) == v)
			return true;
	for (i = 0; i < fn->nins; i++)
		if (phaseof(e, fn->ins[i].to) == PhaseForward && !isaliasins(&fn->ins[i]))
			for (k = 0; k < fn->ins[i].narg; k++)
				if (storageof(e->p, fn->ins[i].arg[k]) == v)
					return true;
	return false;
}

/* Needs instruction i a segment plan (or, for a serial scatter, counts)? */
static bool
hasseg(E *e, int i)
{
	int op = e->fn->ins[i].op;

	return (opinfo[op].flags & Fscatter) || op == Oedge_softmax;
}

static void
emitstruct(E *e)
{
	Fn *fn = e->fn;

	out(e, "\nstruct %s {\n", e->nm);
	out(e, "\tint64_t sym[%d];\n", e->m->nsym ? e->m->nsym : 1);
	out(e, "\tint bound;\n");
	out(e, "\tvoid *h[%d];          /* host storage: params, bind-time values */\n", fn->nval);
	out(e, "\tvoid *d[%d];          /* what forward reads: %s */\n", fn->nval, e->cuda ? "device pointers" : "the host pointers");
	out(e, "\tsize_t nb[%d];        /* bytes of each h[] */\n", fn->nval);
	out(e, "\tgnn_graph *g[%d];     /* graph values (the input one is borrowed) */\n", fn->nval);
	out(e, "\tvoid *hseg[%d], *dseg[%d];   /* segment plans of scatters */\n", fn->nins ? fn->nins : 1, fn->nins ? fn->nins : 1);
	out(e, "\tsize_t segnb[%d];\n", fn->nins ? fn->nins : 1);
	out(e, "\tunsigned char *arena;   /* forward values%s */\n", e->cuda ? ", device copies and staging" : "");
	out(e, "\tsize_t arenasize;\n");
	if (e->tc)
		out(e, "\tint sel[%d];          /* tuning: the candidate each kernel runs */\n", e->tc->nkernels ? e->tc->nkernels : 1);
	if (e->cuda) {
		out(e, "\tvoid *stage[%d];      /* forward_host: inputs then outputs */\n", fn->narg + fn->nret);
		out(e, "\tcudaStream_t stream;\n");
	}
	out(e, "};\n");
}

static void
emitinfo(E *e, const char *what, Ref v, const char *name)
{
	Type t = ty(e, v);
	char dims[512];
	int k;

	snprinttype(dims, sizeof dims, e->m, t);
	out(e, "\t{\"%s\", %s, %d, {", name, gnndtype(t.dtype), t.rank);
	for (k = 0; k < t.rank; k++)
		out(e, "%s%lld", k ? ", " : "", dimisconst(t.dim[k]) ? (long long)dimconstval(t.dim[k]) : -1LL);
	if (t.rank == 0)
		out(e, "0");
	out(e, "}, \"%s\"},\n", strchr(dims, '['));
	(void)what;
}

static void
emittables(E *e)
{
	Fn *fn = e->fn;
	int i, n = 0;
	char buf[32];

	out(e, "\nstatic const gnn_tensor_info %s_inputs[] = {\n", e->nm);
	for (i = 0; i < fn->narg; i++)
		if (ty(e, fn->arg[i]).kind == TTensor)
			emitinfo(e, "input", fn->arg[i], fn->val[fn->arg[i]].name), n++;
	if (!n)
		out(e, "\t{NULL, GNN_F32, 0, {0}, \"\"},\n");
	out(e, "};\n\nstatic const gnn_tensor_info %s_outputs[] = {\n", e->nm);
	for (i = 0; i < fn->nret; i++) {
		snprintf(buf, sizeof buf, "output%d", i);
		emitinfo(e, "output", fn->ret[i], buf);
	}
	out(e, "};\n\nstatic const gnn_tensor_info %s_params[] = {\n", e->nm);
	for (i = 0; i < fn->nins; i++)
		if (fn->ins[i].op == Oparam)
			emitinfo(e, "param", fn->ins[i].to, attrstr(&fn->ins[i], "name"));
	if (!e->p->nparam)
		out(e, "\t{NULL, GNN_F32, 0, {0}, \"\"},\n");
	out(e, "};\n");
}

static const char *
cbytes(E *e, Ref v)
{
	return pf(e, "((size_t)%s * %zu)", cnumel(e, v), dtypesize(ty(e, v).dtype));
}

/* Parameter-only values (a transposed weight): computed on the host
 * whenever the parameters change, uploaded once for forward. */
static void
emitloadtime(E *e)
{
	Fn *fn = e->fn;
	int i;
	Ref v;

	out(e, "\nstatic gnn_status\n%s_loadtime(%s *m)\n{\n", e->nm, e->nm);
	for (i = 0; i < fn->nins; i++) {
		v = fn->ins[i].to;
		if (phaseof(e, v) != PhaseLoad || !e->calls[i])
			continue;
		out(e, "\t%s\n", e->calls[i]);
		if (e->cuda && usedinforward(e, v))
			out(e, "\tif (m->nb[%d] && cudaMemcpy(m->d[%d], m->h[%d], m->nb[%d], cudaMemcpyHostToDevice) != cudaSuccess)\n\t\treturn gnn_error(GNN_ERR_CUDA, \"%s: upload failed\");\n",
			    v, v, v, v, e->nm);
	}
	out(e, "\t(void)m;\n\treturn GNN_OK;\n}\n");
}

static void
emitcreate(E *e)
{
	Fn *fn = e->fn;
	int i;
	const Ins *in;

	out(e, "\nstatic void %s_unbind(%s *m);\n", e->nm, e->nm);
	emitloadtime(e);
	out(e, "\nvoid\n%s_destroy(%s *m)\n{\n\tint i;\n\n\tif (!m)\n\t\treturn;\n\t%s_unbind(m);\n", e->nm, e->nm, e->nm);
	out(e, "\tfor (i = 0; i < %d; i++) {\n", fn->nval);
	if (e->cuda)
		out(e, "\t\tif (m->d[i] && m->d[i] != m->h[i] && m->h[i])\n\t\t\tcudaFree(m->d[i]);\n");
	out(e, "\t\tgnn_free(m->h[i], m->nb[i]);\n\t}\n");
	if (e->cuda)
		out(e, "\tif (m->arena)\n\t\tcudaFree(m->arena);\n\tif (m->stream)\n\t\tcudaStreamDestroy(m->stream);\n");
	else
		out(e, "\tgnn_free(m->arena, m->arenasize);\n");
	out(e, "\tgnn_free(m, sizeof *m);\n}\n");

	out(e, "\ngnn_status\n%s_create(%s **out)\n{\n\t%s *m;\n\tsize_t i;\n\n", e->nm, e->nm, e->nm);
	out(e, "\tif (!out)\n\t\treturn gnn_error(GNN_ERR_ARG, \"%s_create: out is NULL\");\n\t*out = NULL;\n", e->nm);
	out(e, "\tif (!(m = (%s *)gnn_malloc(sizeof *m)))\n\t\treturn gnn_error(GNN_ERR_MEM, \"%s_create: out of memory\");\n", e->nm, e->nm);
	out(e, "\tmemset(m, 0, sizeof *m);\n");
	if (e->cuda)
		out(e, "\tif (cudaStreamCreateWithFlags(&m->stream, cudaStreamNonBlocking) != cudaSuccess) {\n\t\t%s_destroy(m);\n\t\treturn gnn_error(GNN_ERR_CUDA, \"%s_create: no CUDA device or stream\");\n\t}\n", e->nm, e->nm);
	for (i = 0; i < fn->nins; i++) {
		in = &fn->ins[i];
		if (in->op != Oparam)
			continue;
		out(e, "\t/* %s */\n", attrstr(in, "name"));
		out(e, "\tm->nb[%d] = %s;\n", in->to, cbytes(e, in->to));
		out(e, "\tif (m->nb[%d] && !(m->h[%d] = gnn_malloc(m->nb[%d]))) {\n\t\t%s_destroy(m);\n\t\treturn gnn_error(GNN_ERR_MEM, \"%s_create: out of memory\");\n\t}\n",
		    in->to, in->to, in->to, e->nm, e->nm);
		if (findattr(in, "init"))
			out(e, "\tfor (i = 0; i < m->nb[%d] / sizeof(%s); i++)\n\t\t((%s *)m->h[%d])[i] = (%s)%.17g;\n",
			    in->to, ctype(ty(e, in->to).dtype), ctype(ty(e, in->to).dtype), in->to,
			    ctype(ty(e, in->to).dtype), attrfloat(in, "init", 0));
		else
			out(e, "\tif (m->nb[%d])\n\t\tmemset(m->h[%d], 0, m->nb[%d]);\n", in->to, in->to, in->to);
		if (e->cuda) {
			out(e, "\tif (m->nb[%d] && (cudaMalloc(&m->d[%d], m->nb[%d]) != cudaSuccess ||\n", in->to, in->to, in->to);
			out(e, "\t    cudaMemcpy(m->d[%d], m->h[%d], m->nb[%d], cudaMemcpyHostToDevice) != cudaSuccess)) {\n", in->to, in->to, in->to);
			out(e, "\t\t%s_destroy(m);\n\t\treturn gnn_error(GNN_ERR_CUDA, \"%s_create: cannot allocate parameters on the device\");\n\t}\n", e->nm, e->nm);
		} else
			out(e, "\tm->d[%d] = m->h[%d];\n", in->to, in->to);
	}
	for (i = 0; i < fn->nins; i++) {
		Ref v = fn->ins[i].to;
		if (phaseof(e, v) != PhaseLoad || isaliasins(&fn->ins[i]))
			continue;
		out(e, "\tm->nb[%d] = %s;\n", v, cbytes(e, v));
		out(e, "\tif (m->nb[%d] && !(m->h[%d] = gnn_malloc(m->nb[%d]))) {\n\t\t%s_destroy(m);\n\t\treturn gnn_error(GNN_ERR_MEM, \"%s_create: out of memory\");\n\t}\n",
		    v, v, v, e->nm, e->nm);
		if (e->cuda && usedinforward(e, v))
			out(e, "\tif (m->nb[%d] && cudaMalloc(&m->d[%d], m->nb[%d]) != cudaSuccess) {\n\t\t%s_destroy(m);\n\t\treturn gnn_error(GNN_ERR_CUDA, \"%s_create: out of device memory\");\n\t}\n",
			    v, v, v, e->nm, e->nm);
		else
			out(e, "\tm->d[%d] = m->h[%d];\n", v, v);
	}
	out(e, "\t{\n\t\tgnn_status s = %s_loadtime(m);\n\t\tif (s != GNN_OK) {\n\t\t\t%s_destroy(m);\n\t\t\treturn s;\n\t\t}\n\t}\n", e->nm, e->nm);
	out(e, "\t(void)i;\n\t*out = m;\n\treturn GNN_OK;\n}\n");
}

static void
emitload(E *e)
{
	Fn *fn = e->fn;
	int i, k = 0;

	out(e, "\ngnn_status\n%s_load_weights(%s *m, const char *path)\n{\n", e->nm, e->nm);
	out(e, "\tvoid *dst[%d];\n\tgnn_status s;\n\n", e->p->nparam ? e->p->nparam : 1);
	out(e, "\tif (!m || !path)\n\t\treturn gnn_error(GNN_ERR_ARG, \"%s_load_weights: NULL argument\");\n", e->nm);
	for (i = 0; i < fn->nins; i++)
		if (fn->ins[i].op == Oparam)
			out(e, "\tdst[%d] = m->h[%d];\n", k++, fn->ins[i].to);
	out(e, "\tif ((s = gnn_load_params(path, %s_params, %d, dst)) != GNN_OK)\n\t\treturn s;\n", e->nm, e->p->nparam);
	if (e->cuda)   /* queued forwards read the parameters being replaced */
		out(e, "\tif (cudaStreamSynchronize(m->stream) != cudaSuccess)\n\t\treturn gnn_error(GNN_ERR_CUDA, \"%s_load_weights: an earlier forward failed\");\n", e->nm);
	if (e->cuda)
		for (i = 0; i < fn->nins; i++)
			if (fn->ins[i].op == Oparam)
				out(e, "\tif (m->nb[%d] && cudaMemcpy(m->d[%d], m->h[%d], m->nb[%d], cudaMemcpyHostToDevice) != cudaSuccess)\n\t\treturn gnn_error(GNN_ERR_CUDA, \"%s_load_weights: upload failed\");\n",
				    fn->ins[i].to, fn->ins[i].to, fn->ins[i].to, fn->ins[i].to, e->nm);
	out(e, "\t(void)dst;\n\treturn %s_loadtime(m);\n}\n", e->nm);
}

/* host code computing bind-time value i (a graph op or a tensor) */
static void
emitbindins(E *e, int i)
{
	const Ins *in = &e->fn->ins[i];
	Ref v = in->to, g = in->narg ? in->arg[0] : RNone;
	int s, k;
	bool ok = true;
	Dim rest = 0;

	if (isaliasins(in))
		return;
	if (ty(e, v).kind == TGraph) {
		const char *fnname = in->op == Oadd_self_loops ? "add_self_loops" :
		                     in->op == Oremove_self_loops ? "remove_self_loops" : "add_remaining_self_loops";
		out(e, "\t/* %%%s = %s */\n", e->fn->val[v].name ? e->fn->val[v].name : "", opinfo[in->op].name);
		if (in->op == Oadd_remaining_self_loops)
			out(e, "\tif ((s = gnn_graph_%s(m->g[%d], (float)%.17g, &m->g[%d])) != GNN_OK)\n\t\tgoto fail;\n",
			    fnname, g, attrfloat(in, "fill", 1.0), v);
		else
			out(e, "\tif ((s = gnn_graph_%s(m->g[%d], &m->g[%d])) != GNN_OK)\n\t\tgoto fail;\n", fnname, g, v);
		if (opinfo[in->op].flags & Fdyn) {
			/* the derived size: edges = sym + rest, for the derived
			 * symbol that occurs in the edge count (not merely the
			 * first derived symbol: a model may have several) */
			Type t = ty(e, v);
			const DExp *x = dimisconst(t.dim[1]) ? NULL : &e->m->dexp[~t.dim[1]];
			for (s = 0; x && s < e->m->nsym; s++) {
				if (!e->m->sym[s].derived)
					continue;
				for (k = 0; k < x->nterm; k++)
					if (x->term[k].deg == 1 && x->term[k].sym[0] == s && x->term[k].coef == 1)
						break;
				if (k < x->nterm)
					break;
			}
			rest = x && s < e->m->nsym ? dimsub(e->m, t.dim[1], dimsym(e->m, s), &ok) : 0;
			if (!x || s == e->m->nsym || !ok)
				die("codegen: no derived size in %s", opinfo[in->op].name);
			out(e, "\tm->sym[%d] = gnn_graph_num_edges(m->g[%d]) - %s;\n", s, v, cdim(e, rest));
		}
		return;
	}
	out(e, "\tm->nb[%d] = %s;\n", v, cbytes(e, v));
	out(e, "\tif (m->nb[%d] && !(m->h[%d] = gnn_malloc(m->nb[%d]))) {\n\t\ts = gnn_error(GNN_ERR_MEM, \"%s_bind: out of memory\");\n\t\tgoto fail;\n\t}\n",
	    v, v, v, e->nm);
	switch (in->op) {
	case Osrc:
		out(e, "\tif (m->nb[%d])\n\t\tmemcpy(m->h[%d], gnn_graph_src(m->g[%d]), m->nb[%d]);\n", v, v, g, v);
		return;
	case Odst:
		out(e, "\tif (m->nb[%d])\n\t\tmemcpy(m->h[%d], gnn_graph_dst(m->g[%d]), m->nb[%d]);\n", v, v, g, v);
		return;
	case Obatch:
		out(e, "\tif (m->nb[%d]) {\n\t\tif (gnn_graph_batch(m->g[%d]))\n\t\t\tmemcpy(m->h[%d], gnn_graph_batch(m->g[%d]), m->nb[%d]);\n\t\telse\n\t\t\tmemset(m->h[%d], 0, m->nb[%d]);\n\t}\n",
		    v, g, v, g, v, v, v);
		return;
	case Oin_degree:
	case Oout_degree:
	case Oedge_weight:
	case Ogcn_norm:
		out(e, "\tgnn_graph_%s(m->g[%d], (float *)m->h[%d]);\n", opinfo[in->op].name, g, v);
		return;
	default:
		break;
	}
	if (hasseg(e, i))
		return;   /* run by emitbind once its plan is built */
	out(e, "\t%s\n", e->calls[i]);
}

/* The segment plan (or serial scatter counts) of instruction i. */
static void
emitseg(E *e, int i)
{
	const Ins *in = &e->fn->ins[i];
	Dim n;

	if (in->op == Oedge_softmax) {
		Ref g = in->arg[0];
		out(e, "\t/* edges of %%%s grouped by target */\n", e->fn->val[g].name ? e->fn->val[g].name : "");
		out(e, "\tm->segnb[%d] = (size_t)(2 * gnn_graph_num_nodes(m->g[%d]) + 1 - gnn_graph_num_nodes(m->g[%d]) + gnn_graph_num_edges(m->g[%d])) * sizeof(int64_t);\n", i, g, g, g);
		out(e, "\tif (!(m->hseg[%d] = gnn_malloc(m->segnb[%d]))) {\n\t\ts = gnn_error(GNN_ERR_MEM, \"%s_bind: out of memory\");\n\t\tgoto fail;\n\t}\n", i, i, e->nm);
		out(e, "\tmemcpy(m->hseg[%d], gnn_graph_rowptr(m->g[%d]), (size_t)(gnn_graph_num_nodes(m->g[%d]) + 1) * sizeof(int64_t));\n", i, g, g);
		out(e, "\tif (gnn_graph_num_edges(m->g[%d]))\n\t\tmemcpy((int64_t *)m->hseg[%d] + gnn_graph_num_nodes(m->g[%d]) + 1, gnn_graph_perm(m->g[%d]), (size_t)gnn_graph_num_edges(m->g[%d]) * sizeof(int64_t));\n",
		    g, i, g, g, g);
		return;
	}
	attrdim(in, "n", &n);
	if (phaseof(e, in->arg[1]) != PhaseBind) {
		/* counts of a serial scatter */
		out(e, "\tm->segnb[%d] = (size_t)(%s > 0 ? %s : 1) * sizeof(int64_t);\n", i, cdim(e, n), cdim(e, n));
		out(e, "\tif (!(m->hseg[%d] = gnn_malloc(m->segnb[%d]))) {\n\t\ts = gnn_error(GNN_ERR_MEM, \"%s_bind: out of memory\");\n\t\tgoto fail;\n\t}\n", i, i, e->nm);
		return;
	}
	out(e, "\tm->segnb[%d] = (size_t)(%s + 1 + %s) * sizeof(int64_t);\n", i, cdim(e, n), cnumel(e, in->arg[1]));
	out(e, "\tif (!(m->hseg[%d] = gnn_malloc(m->segnb[%d]))) {\n\t\ts = gnn_error(GNN_ERR_MEM, \"%s_bind: out of memory\");\n\t\tgoto fail;\n\t}\n", i, i, e->nm);
	out(e, "\tif ((s = gnn_segment_plan((const int64_t *)m->h[%d], %s, %s, (int64_t *)m->hseg[%d], (int64_t *)m->hseg[%d] + %s + 1)) != GNN_OK)\n\t\tgoto fail;\n",
	    storageof(e->p, in->arg[1]), cnumel(e, in->arg[1]), cdim(e, n), i, i, cdim(e, n));
}

static void
emitbind(E *e)
{
	Fn *fn = e->fn;
	Type gt = ty(e, e->p->graph);
	const char *what[3] = {"nodes", "edges", "graphs"};
	const char *get[3] = {"gnn_graph_num_nodes", "gnn_graph_num_edges", "gnn_graph_num_graphs"};
	int i, k, s, *buf;
	Ref v, *rep;

	out(e, "\nstatic void\n%s_unbind(%s *m)\n{\n\tint i;\n\n", e->nm, e->nm);
	for (i = 0; i < fn->nins; i++) {
		v = fn->ins[i].to;
		if (phaseof(e, v) != PhaseBind || isaliasins(&fn->ins[i]))
			continue;
		if (ty(e, v).kind == TGraph)
			out(e, "\tgnn_graph_destroy(m->g[%d]);\n\tm->g[%d] = NULL;\n", v, v);
		else
			out(e, "\tgnn_free(m->h[%d], m->nb[%d]);\n\tm->h[%d] = NULL;\n\tm->nb[%d] = 0;\n", v, v, v, v);
	}
	out(e, "\tfor (i = 0; i < %d; i++) {\n\t\tgnn_free(m->hseg[i], m->segnb[i]);\n\t\tm->hseg[i] = m->dseg[i] = NULL;\n\t\tm->segnb[i] = 0;\n\t}\n", fn->nins ? fn->nins : 1);
	out(e, "\t(void)i;\n\tm->bound = 0;\n}\n");

	out(e, "\ngnn_status\n%s_bind(%s *m, gnn_graph *graph)\n{\n\tgnn_status s = GNN_OK;\n\tsize_t off = 0;\n\n", e->nm, e->nm);
	out(e, "\tif (!m || !graph)\n\t\treturn gnn_error(GNN_ERR_ARG, \"%s_bind: NULL argument\");\n", e->nm);
	if (e->cuda)   /* forwards still queued read what bind replaces */
		out(e, "\tif (cudaStreamSynchronize(m->stream) != cudaSuccess)\n\t\treturn gnn_error(GNN_ERR_CUDA, \"%s_bind: an earlier forward failed: %%s\", cudaGetErrorString(cudaGetLastError()));\n", e->nm);
	out(e, "\t%s_unbind(m);\n\tm->g[%d] = graph;\n", e->nm, e->p->graph);
	for (k = 0; k < gt.rank; k++) {
		if ((s = dimassym(e->m, gt.dim[k])) >= 0)
			out(e, "\tm->sym[%d] = %s(graph);\n", s, get[k]);
		else
			/* a constant size (--specialize): plan() allows nothing else */
			out(e, "\tif (%s(graph) != %s)\n\t\treturn gnn_error(GNN_ERR_SHAPE, \"%s_bind: the model was compiled for %lld %s, the graph has %%lld\", (long long)%s(graph));\n",
			    get[k], cdim(e, gt.dim[k]), e->nm, (long long)dimconstval(gt.dim[k]), what[k], get[k]);
	}
	for (i = 0; i < fn->nins; i++) {
		if (phaseof(e, fn->ins[i].to) != PhaseBind)
			continue;
		emitbindins(e, i);
		if (hasseg(e, i)) {
			emitseg(e, i);
			out(e, "\t%s\n", e->calls[i]);
		}
	}
	for (i = 0; i < fn->nins; i++)
		if (phaseof(e, fn->ins[i].to) == PhaseForward && hasseg(e, i))
			emitseg(e, i);
	/* the memory plan: the forward buffers (values with the same memplan
	 * slot share one; values internal to a fusion group have none), and
	 * for cuda the device copies of bind-time values and plans and the
	 * staging of forward_host */
	out(e, "\t/* memory plan */\n");
	buf = emalloc((fn->nval + 1) * sizeof *buf);
	rep = emalloc((fn->nval + 1) * sizeof *rep);
	arenabuffers(fn, e->p->phase, buf, rep);
	for (i = 0; i < fn->nins; i++) {
		v = fn->ins[i].to;
		if (isaliasins(&fn->ins[i]) || ty(e, v).kind == TGraph)
			continue;
		if (phaseof(e, v) == PhaseForward && buf[v] < 0)
			continue;
		if (phaseof(e, v) == PhaseForward && rep[buf[v]] != v) {
			out(e, "\tm->d[%d] = m->d[%d];   /* slot %d */\n", v, rep[buf[v]],
			    (int)attrint(&fn->ins[i], "slot", -1));
		} else if (phaseof(e, v) == PhaseForward || (e->cuda && phaseof(e, v) == PhaseBind && usedinforward(e, v))) {
			out(e, "\tm->d[%d] = (void *)off;\n\toff += (%s + 255) & ~(size_t)255;\n", v, cbytes(e, v));
		} else if (phaseof(e, v) == PhaseBind)
			out(e, "\tm->d[%d] = m->h[%d];\n", v, v);
	}
	for (i = 0; i < fn->nins; i++) {
		if (!hasseg(e, i))
			continue;
		if (e->cuda && phaseof(e, fn->ins[i].to) == PhaseForward)
			out(e, "\tm->dseg[%d] = (void *)off;\n\toff += (m->segnb[%d] + 255) & ~(size_t)255;\n", i, i);
		else
			out(e, "\tm->dseg[%d] = m->hseg[%d];\n", i, i);
	}
	if (e->cuda) {
		for (i = 0; i < fn->narg; i++)
			if (ty(e, fn->arg[i]).kind == TTensor)
				out(e, "\tm->stage[%d] = (void *)off;\n\toff += (%s + 255) & ~(size_t)255;\n", i, cbytes(e, fn->arg[i]));
		for (i = 0; i < fn->nret; i++)
			out(e, "\tm->stage[%d] = (void *)off;\n\toff += (%s + 255) & ~(size_t)255;\n", fn->narg + i, cbytes(e, fn->ret[i]));
	}
	/* grow the arena when this graph needs more than the last one */
	/* never an empty arena: offsets become pointers into it */
	out(e, "\tif (off == 0)\n\t\toff = 256;\n");
	out(e, "\tif (off > m->arenasize) {\n");
	if (e->cuda) {
		out(e, "\t\tif (m->arena)\n\t\t\tcudaFree(m->arena);\n\t\tm->arena = NULL;\n\t\tm->arenasize = 0;\n");
		out(e, "\t\tif (cudaMalloc((void **)&m->arena, off) != cudaSuccess) {\n\t\t\ts = gnn_error(GNN_ERR_CUDA, \"%s_bind: cannot allocate %%zu bytes on the device\", off);\n\t\t\tgoto fail;\n\t\t}\n", e->nm);
	} else {
		out(e, "\t\tgnn_free(m->arena, m->arenasize);\n\t\tm->arenasize = 0;\n");
		out(e, "\t\tif (!(m->arena = (unsigned char *)gnn_malloc(off))) {\n\t\t\ts = gnn_error(GNN_ERR_MEM, \"%s_bind: cannot allocate %%zu bytes\", off);\n\t\t\tgoto fail;\n\t\t}\n", e->nm);
	}
	out(e, "\t\tm->arenasize = off;\n\t}\n");
	/* offsets become pointers */
	for (i = 0; i < fn->nins; i++) {
		v = fn->ins[i].to;
		if (isaliasins(&fn->ins[i]) || ty(e, v).kind == TGraph)
			continue;
		if (phaseof(e, v) == PhaseForward && buf[v] < 0)
			continue;
		if (phaseof(e, v) == PhaseForward || (e->cuda && phaseof(e, v) == PhaseBind && usedinforward(e, v)))
			out(e, "\tm->d[%d] = m->arena + (size_t)m->d[%d];\n", v, v);
		if (e->cuda && phaseof(e, v) == PhaseBind && usedinforward(e, v))
			out(e, "\tif (m->nb[%d] && cudaMemcpy(m->d[%d], m->h[%d], m->nb[%d], cudaMemcpyHostToDevice) != cudaSuccess) {\n\t\ts = gnn_error(GNN_ERR_CUDA, \"%s_bind: upload failed\");\n\t\tgoto fail;\n\t}\n",
			    v, v, v, v, e->nm);
	}
	if (e->cuda) {
		for (i = 0; i < fn->nins; i++)
			if (hasseg(e, i) && phaseof(e, fn->ins[i].to) == PhaseForward)
				out(e, "\tm->dseg[%d] = m->arena + (size_t)m->dseg[%d];\n\tif (cudaMemcpy(m->dseg[%d], m->hseg[%d], m->segnb[%d], cudaMemcpyHostToDevice) != cudaSuccess) {\n\t\ts = gnn_error(GNN_ERR_CUDA, \"%s_bind: upload failed\");\n\t\tgoto fail;\n\t}\n",
				    i, i, i, i, i, e->nm);
		for (i = 0; i < fn->narg + fn->nret; i++)
			if (i >= fn->narg || ty(e, fn->arg[i]).kind == TTensor)
				out(e, "\tm->stage[%d] = m->arena + (size_t)m->stage[%d];\n", i, i);
	}
	out(e, "\tm->bound = 1;\n\treturn GNN_OK;\nfail:\n\t%s_unbind(m);\n\treturn s;\n}\n", e->nm);
	free(buf);
	free(rep);
}

static void
emitrun(E *e)
{
	Fn *fn = e->fn;
	int i, k;
	Ref v;

	out(e, "\nstatic gnn_status\n%s_run(%s *m, const void *const *in, void *const *out)\n{\n", e->nm, e->nm);
	out(e, "\tif (!m || !in || !out)\n\t\treturn gnn_error(GNN_ERR_ARG, \"%s_forward: NULL argument\");\n", e->nm);
	out(e, "\tif (!m->bound)\n\t\treturn gnn_error(GNN_ERR_STATE, \"%s_forward: no graph is bound (call %s_bind first)\");\n", e->nm, e->nm);
	for (i = 0, k = 0; i < fn->narg; i++) {
		v = fn->arg[i];
		if (ty(e, v).kind != TTensor)
			continue;
		out(e, "\tif (!in[%d] && %s != 0)\n\t\treturn gnn_error(GNN_ERR_ARG, \"%s_forward: input '%s' is NULL\");\n", k, cbytes(e, v), e->nm, fn->val[v].name);
		out(e, "\tm->d[%d] = (void *)in[%d];\n", v, k++);
	}
	for (i = 0; i < fn->nret; i++)
		out(e, "\tif (!out[%d] && %s != 0)\n\t\treturn gnn_error(GNN_ERR_ARG, \"%s_forward: output %d is NULL\");\n", i, cbytes(e, fn->ret[i]), e->nm, i);
	for (i = 0; i < fn->nins; i++) {
		if (phaseof(e, fn->ins[i].to) == PhaseForward && e->calls[i])
			out(e, "\t%s\n", e->calls[i]);
	}
	for (i = 0; i < fn->nret; i++) {
		v = storageof(e->p, fn->ret[i]);
		if (e->cuda)
			out(e, "\tif (%s != 0 && cudaMemcpyAsync(out[%d], m->d[%d], %s, cudaMemcpyDefault, m->stream) != cudaSuccess)\n\t\treturn gnn_error(GNN_ERR_CUDA, \"%s_forward: copying output %d failed\");\n",
			    cbytes(e, fn->ret[i]), i, v, cbytes(e, fn->ret[i]), e->nm, i);
		else
			out(e, "\tif (%s != 0)\n\t\tmemcpy(out[%d], m->d[%d], %s);\n", cbytes(e, fn->ret[i]), i, v, cbytes(e, fn->ret[i]));
	}
	if (e->cuda)
		out(e, "\t{\n\t\tcudaError_t err = cudaGetLastError();\n\t\tif (err != cudaSuccess)\n\t\t\treturn gnn_error(GNN_ERR_CUDA, \"%s_forward: %%s\", cudaGetErrorString(err));\n\t}\n", e->nm);
	out(e, "\treturn GNN_OK;\n}\n");

	/* forward_host: the same from host memory */
	out(e, "\nstatic gnn_status\n%s_run_host(%s *m, const void *const *in, void *const *out)\n{\n", e->nm, e->nm);
	if (!e->cuda) {
		out(e, "\treturn %s_run(m, in, out);\n}\n", e->nm);
		return;
	}
	out(e, "\tconst void *din[%d];\n\tvoid *dout[%d];\n\tgnn_status s;\n\n", fn->narg ? fn->narg : 1, fn->nret);
	out(e, "\tif (!m || !in || !out)\n\t\treturn gnn_error(GNN_ERR_ARG, \"%s_forward_host: NULL argument\");\n", e->nm);
	out(e, "\tif (!m->bound)\n\t\treturn gnn_error(GNN_ERR_STATE, \"%s_forward_host: no graph is bound (call %s_bind first)\");\n", e->nm, e->nm);
	for (i = 0, k = 0; i < fn->narg; i++) {
		v = fn->arg[i];
		if (ty(e, v).kind != TTensor)
			continue;
		out(e, "\tif (!in[%d] && %s != 0)\n\t\treturn gnn_error(GNN_ERR_ARG, \"%s_forward_host: input '%s' is NULL\");\n", k, cbytes(e, v), e->nm, fn->val[v].name);
		out(e, "\tdin[%d] = m->stage[%d];\n", k, i);
		out(e, "\tif (%s != 0 && cudaMemcpyAsync(m->stage[%d], in[%d], %s, cudaMemcpyHostToDevice, m->stream) != cudaSuccess)\n\t\treturn gnn_error(GNN_ERR_CUDA, \"%s_forward_host: upload failed\");\n",
		    cbytes(e, v), i, k, cbytes(e, v), e->nm);
		k++;
	}
	for (i = 0; i < fn->nret; i++)
		out(e, "\tdout[%d] = m->stage[%d];\n", i, fn->narg + i);
	out(e, "\tif ((s = %s_run(m, din, dout)) != GNN_OK)\n\t\treturn s;\n", e->nm);
	for (i = 0; i < fn->nret; i++)
		out(e, "\tif (%s != 0 && cudaMemcpyAsync(out[%d], m->stage[%d], %s, cudaMemcpyDeviceToHost, m->stream) != cudaSuccess)\n\t\treturn gnn_error(GNN_ERR_CUDA, \"%s_forward_host: download failed\");\n",
		    cbytes(e, fn->ret[i]), i, fn->narg + i, cbytes(e, fn->ret[i]), e->nm);
	out(e, "\t{\n\t\tcudaError_t err = cudaStreamSynchronize(m->stream);\n\t\tif (err != cudaSuccess)\n\t\t\treturn gnn_error(GNN_ERR_CUDA, \"%s_forward_host: %%s\", cudaGetErrorString(err));\n\t}\n", e->nm);
	out(e, "\treturn GNN_OK;\n}\n");
}

/*
 * A tuning build's NAME_tune: select a candidate per kernel, and time one
 * kernel alone.  Forward has run once with the same inputs, and nothing
 * shares memory in a tuning build, so every kernel's operands are still
 * in place.
 */
static void
emittune(E *e)
{
	const TuneCands *tc = e->tc;
	int k;

	out(e, "\nstatic void\n%s_tune_select(void *mv, int k, int c)\n{\n\t%s *m = (%s *)mv;\n\n", e->nm, e->nm, e->nm);
	out(e, "\tif (m && k >= 0 && k < %d)\n\t\tm->sel[k] = c;\n}\n", tc->nkernels);
	out(e, "\nstatic void\n%s_tune_launch(%s *m, int k)\n{\n\tswitch (k) {\n", e->nm, e->nm);
	for (k = 0; k < tc->nkernels; k++)
		out(e, "\tcase %d: {\n\t%s\n\t\tbreak;\n\t}\n", k, e->calls[e->kstart[k]]);
	out(e, "\tdefault:\n\t\tbreak;\n\t}\n}\n");
	out(e, "\nstatic gnn_status\n%s_tune_time(void *mv, int k, int reps, double *us)\n{\n\t%s *m = (%s *)mv;\n\tdouble t[64], x;\n\tint i, j;\n\n", e->nm, e->nm, e->nm);
	out(e, "\tif (!m || !us || !m->bound || k < 0 || k >= %d)\n\t\treturn gnn_error(GNN_ERR_ARG, \"%s_tune_time: bad arguments\");\n", tc->nkernels, e->nm);
	out(e, "\treps = reps < 1 ? 1 : reps > 64 ? 64 : reps;\n");
	if (e->cuda) {
		out(e, "\tcudaEvent_t a, b;\n\tfloat ms;\n\tif (cudaEventCreate(&a) != cudaSuccess || cudaEventCreate(&b) != cudaSuccess)\n\t\treturn gnn_error(GNN_ERR_CUDA, \"%s_tune_time: no events\");\n", e->nm);
		out(e, "\t%s_tune_launch(m, k);   /* warm */\n", e->nm);
		out(e, "\tfor (i = 0; i < reps; i++) {\n\t\tcudaEventRecord(a, m->stream);\n\t\t%s_tune_launch(m, k);\n\t\tcudaEventRecord(b, m->stream);\n", e->nm);
		out(e, "\t\tcudaEventSynchronize(b);\n\t\tcudaEventElapsedTime(&ms, a, b);\n\t\tt[i] = 1000.0 * ms;\n\t}\n");
		out(e, "\tcudaEventDestroy(a);\n\tcudaEventDestroy(b);\n");
		out(e, "\t{\n\t\tcudaError_t err = cudaGetLastError();\n\t\tif (err != cudaSuccess)\n\t\t\treturn gnn_error(GNN_ERR_CUDA, \"%s_tune_time: %%s\", cudaGetErrorString(err));\n\t}\n", e->nm);
	} else {
		out(e, "\t%s_tune_launch(m, k);   /* warm */\n", e->nm);
		out(e, "\tfor (i = 0; i < reps; i++) {\n\t\tstruct timespec a, b;\n\t\ttimespec_get(&a, TIME_UTC);\n\t\t%s_tune_launch(m, k);\n\t\ttimespec_get(&b, TIME_UTC);\n", e->nm);
		out(e, "\t\tt[i] = (double)(b.tv_sec - a.tv_sec) * 1e6 + (double)(b.tv_nsec - a.tv_nsec) / 1e3;\n\t}\n");
	}
	out(e, "\tfor (i = 1; i < reps; i++)\n\t\tfor (j = i, x = t[i]; j > 0 && t[j - 1] > x; j--)\n\t\t\tt[j] = t[j - 1], t[j - 1] = x;\n");
	out(e, "\t*us = t[reps / 2];\n\treturn GNN_OK;\n}\n");
	out(e, "\nstatic const char *\n%s_tune_arch(void)\n{\n", e->nm);
	if (e->cuda) {
		/* the emulated device's timings are the CPU's: a key of their own,
		 * so that a real GPU's cache entries never meet them */
		out(e, "#ifdef GNN_EMU\n\treturn \"emu\";\n#else\n");
		out(e, "\tstatic char name[32];\n\tcudaDeviceProp p;\n\tint dev;\n\n");
		out(e, "\tif (cudaGetDevice(&dev) != cudaSuccess || cudaGetDeviceProperties(&p, dev) != cudaSuccess)\n\t\treturn NULL;\n");
		out(e, "\tsnprintf(name, sizeof name, \"sm_%%d%%d\", p.major, p.minor);\n\treturn name;\n#endif\n}\n");
	} else
		out(e, "\treturn NULL;\n}\n");
	out(e, "\nstatic const int %s_tune_ncand[%d] = {", e->nm, tc->nkernels ? tc->nkernels : 1);
	for (k = 0; k < tc->nkernels; k++)
		out(e, "%s%d", k ? ", " : "", tc->ncand[k]);
	out(e, "};\n\n%sconst gnn_tune_desc %s_tune = {\n\t%d, %s_tune_ncand, %s_tune_select, %s_tune_time, %s_tune_arch,\n};\n",
	    e->cuda ? "extern \"C\" " : "", e->nm, tc->nkernels, e->nm, e->nm, e->nm, e->nm);
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
			out(e, ", const %s *%s", ctype(ty(e, fn->arg[i]).dtype), fn->val[fn->arg[i]].name);
	for (i = 0; i < fn->nret; i++)
		out(e, ", %s *out%d", ctype(ty(e, fn->ret[i]).dtype), i);
}

static void
emitapi(E *e)
{
	Fn *fn = e->fn;
	int i, k, nin = 0;
	const char *suffix[2] = {"", "_host"};

	for (i = 0; i < fn->narg; i++)
		nin += ty(e, fn->arg[i]).kind == TTensor;
	for (k = 0; k < 2; k++) {
		out(e, "\ngnn_status\n%s_forward%s(", e->nm, suffix[k]);
		forwardparams(e);
		out(e, ")\n{\n\tconst void *in[%d] = {", nin ? nin : 1);
		for (i = 0; i < fn->narg; i++)
			if (ty(e, fn->arg[i]).kind == TTensor)
				out(e, "%s, ", fn->val[fn->arg[i]].name);
		out(e, "};\n\tvoid *out[%d] = {", fn->nret);
		for (i = 0; i < fn->nret; i++)
			out(e, "out%d, ", i);
		out(e, "};\n\n\treturn %s_run%s(m, in, out);\n}\n", e->nm, suffix[k]);
	}
	out(e, "\ngnn_status\n%s_synchronize(%s *m)\n{\n", e->nm, e->nm);
	out(e, "\tif (!m)\n\t\treturn gnn_error(GNN_ERR_ARG, \"%s_synchronize: NULL model\");\n", e->nm);
	if (e->cuda)
		out(e, "\t{\n\t\tcudaError_t err = cudaStreamSynchronize(m->stream);\n\t\tif (err != cudaSuccess)\n\t\t\treturn gnn_error(GNN_ERR_CUDA, \"%s: %%s\", cudaGetErrorString(err));\n\t}\n", e->nm);
	out(e, "\treturn GNN_OK;\n}\n");

	out(e, "\nstatic gnn_status\n%s_output_shape(void *model, int i, int64_t *shape)\n{\n\t%s *m = (%s *)model;\n\n", e->nm, e->nm, e->nm);
	out(e, "\tif (!m || !shape)\n\t\treturn gnn_error(GNN_ERR_ARG, \"%s: output_shape: NULL argument\");\n", e->nm);
	out(e, "\tif (i < 0 || i >= %d)\n\t\treturn gnn_error(GNN_ERR_ARG, \"%s: no output %%d\", i);\n", fn->nret, e->nm);
	out(e, "\tif (!m->bound)\n\t\treturn gnn_error(GNN_ERR_STATE, \"%s: no graph is bound\");\n\tswitch (i) {\n", e->nm);
	for (i = 0; i < fn->nret; i++) {
		Type t = ty(e, fn->ret[i]);
		out(e, "\tcase %d:\n", i);
		for (k = 0; k < t.rank; k++)
			out(e, "\t\tshape[%d] = %s;\n", k, cdim(e, t.dim[k]));
		out(e, "\t\tbreak;\n");
	}
	out(e, "\t}\n\treturn GNN_OK;\n}\n");

	/* the descriptor, through void * wrappers */
	out(e, "\nstatic gnn_status %s_d_create(void **m) { return %s_create((%s **)m); }\n", e->nm, e->nm, e->nm);
	out(e, "static gnn_status %s_d_load(void *m, const char *p) { return %s_load_weights((%s *)m, p); }\n", e->nm, e->nm, e->nm);
	out(e, "static gnn_status %s_d_bind(void *m, gnn_graph *g) { return %s_bind((%s *)m, g); }\n", e->nm, e->nm, e->nm);
	out(e, "static gnn_status %s_d_run(void *m, const void *const *in, void *const *out) { return %s_run((%s *)m, in, out); }\n", e->nm, e->nm, e->nm);
	out(e, "static gnn_status %s_d_run_host(void *m, const void *const *in, void *const *out) { return %s_run_host((%s *)m, in, out); }\n", e->nm, e->nm, e->nm);
	out(e, "static void %s_d_destroy(void *m) { %s_destroy((%s *)m); }\n", e->nm, e->nm, e->nm);
	out(e, "\n%sconst gnn_model_desc %s_desc = {\n\t\"%s\", %s,\n\t%d, %d, %d,\n\t%s_inputs, %s_outputs, %s_params,\n",
	    e->cuda ? "extern \"C\" " : "", e->nm, e->nm, e->cuda ? "GNN_TARGET_CUDA" : "GNN_TARGET_CPU", nin, fn->nret, e->p->nparam, e->nm, e->nm, e->nm);
	out(e, "\t%s_d_create, %s_d_load, %s_d_bind, %s_output_shape,\n\t%s_d_run, %s_d_run_host, %s_d_destroy,\n};\n",
	    e->nm, e->nm, e->nm, e->nm, e->nm, e->nm, e->nm);
}

static void
emitprelude(E *e, const CodegenOpts *o)
{
	out(e, "/*\n * Generated by gnncc from %s for --target=%s; do not edit.\n", o->source ? o->source : "<ir>", e->cuda ? "cuda" : "cpu");
	out(e, " * Bind-time work runs on the host; forward runs %s.\n */\n", e->cuda ? "as CUDA kernels on the model's stream" : "as host loops (OpenMP where enabled)");
	out(e, "#include <math.h>\n#include <stdint.h>\n#include <string.h>\n%s\n", o->tune ? "#include <stdio.h>\n#include <time.h>\n" : "");
	if (e->cuda)
		out(e, "#include <cuda_runtime.h>\n\n");
	out(e, "#include \"gnnrt.h\"\n#include \"%s\"\n\n", o->header ? o->header : "model.h");
	out(e, "#ifdef _OPENMP\n#define GNN_PARFOR _Pragma(\"omp parallel for schedule(static)\")\n#else\n#define GNN_PARFOR\n#endif\n");
	out(e, "#define GNN_PRAGMA(x) _Pragma(#x)\n#ifdef _OPENMP\n#define GNN_PARFOR_DYN(c) GNN_PRAGMA(omp parallel for schedule(dynamic, c))\n#else\n#define GNN_PARFOR_DYN(c)\n#endif\n");
	out(e, "#define GNN_HKERNEL(k) static void k\n#define GNN_HLOOP(t, T) GNN_PARFOR for (int64_t t = 0; t < (T); t++)\n");
	out(e, "#define GNN_HLAUNCH(k, T, ...) k((T), __VA_ARGS__)\n");
	if (e->cuda) {
		/* launches, kernel heads and shared arrays through macros, so
		 * that the emulated device (gnnemu's cuda_runtime.h, which
		 * defines GNN_EMU) compiles this file as C++ on the CPU */
		out(e, "#ifndef GNN_EMU\n");
		out(e, "#define GNN_DKERNEL(k) static __global__ void k\n");
		out(e, "#define GNN_DKERNEL_LB(k, n) static __global__ void __launch_bounds__(n) k\n");
		out(e, "#define GNN_LAUNCH(k, grid, block, shmem, stream) k<<<grid, block, shmem, stream>>>\n");
		out(e, "#define GNN_SHARED(T, name, dims) __shared__ T name dims\n");
		out(e, "#endif\n");
		out(e, "#define GNN_DLOOP(t, T) for (int64_t t = (int64_t)blockIdx.x * blockDim.x + threadIdx.x; t < (T); t += (int64_t)blockDim.x * gridDim.x)\n");
		out(e, "#define GNN_DLAUNCH(k, T, ...) do { \\\n\tint64_t T_ = (T); \\\n\tif (T_ > 0) \\\n\t\tGNN_LAUNCH(k, gnn_blocks(T_, 256), 256, 0, m->stream)(T_, __VA_ARGS__); \\\n} while (0)\n\n");
		out(e, "#define GNN_DFN static __device__ __forceinline__\n");
		out(e, "#define GNN_RLAUNCH(k, L, R, T, ...) do { \\\n\tint64_t T_ = (T); \\\n\tif (T_ > 0) \\\n\t\tGNN_LAUNCH(k, gnn_blocks(T_, (R)), (L) * (R), 0, m->stream)(T_, __VA_ARGS__); \\\n} while (0)\n\n");
		out(e, "/* blocks of per tasks for T tasks: grid-stride loops take the rest */\nstatic unsigned\ngnn_blocks(int64_t T, int64_t per)\n{\n\tint64_t b = (T + per - 1) / per;\n\n\treturn b > (1 << 20) ? (1u << 20) : (unsigned)b;\n}\n");
	} else
		out(e, "#define GNN_DKERNEL GNN_HKERNEL\n#define GNN_DLOOP GNN_HLOOP\n#define GNN_DLAUNCH GNN_HLAUNCH\n#define GNN_DFN static inline\n");
}

void
emitsource(FILE *f, Mod *m, const CodegenOpts *o)
{
	Plan p;
	Fn *fn;
	W w = {.bol = true};
	E e = {.f = f, .w = &w, .m = m, .cuda = o->target == TargetCUDA, .sfx = "", .o = o};
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
		emitstruct(&e);
		emittables(&e);
		emitkernels(&e);
		emitcreate(&e);
		emitload(&e);
		emitbind(&e);
		emitrun(&e);
		emitapi(&e);
		if (e.tc)
			emittune(&e);
		freekernels(&e);
		free(e.kstart);
		e.kstart = NULL;
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
	char guard[128], buf[512];
	int i, k;

	snprintf(guard, sizeof guard, "GNNCC_MODEL_%s", o->header ? o->header : "MODEL_H");
	for (k = 0; guard[k]; k++)
		if (!(guard[k] >= 'A' && guard[k] <= 'Z') && !(guard[k] >= '0' && guard[k] <= '9'))
			guard[k] = guard[k] >= 'a' && guard[k] <= 'z' ? guard[k] - 'a' + 'A' : '_';
	out(&e, "/*\n * Generated by gnncc from %s for --target=%s; do not edit.\n", o->source ? o->source : "<ir>", e.cuda ? "cuda" : "cpu");
	out(&e, " * Every call returns a gnn_status; gnn_errmsg() says what went wrong.\n");
	out(&e, " * forward takes %s pointers; forward_host takes host pointers.\n */\n", e.cuda ? "device" : "host");
	out(&e, "#ifndef %s\n#define %s\n\n#include \"gnnrt.h\"\n\n#ifdef __cplusplus\nextern \"C\" {\n#endif\n", guard, guard);
	for (fn = m->fn; fn; fn = fn->link) {
		e.fn = fn;
		e.nm = fn->name;
		out(&e, "\n/* model %s", fn->name);
		for (i = 0; i < fn->narg; i++) {
			snprinttype(buf, sizeof buf, m, fn->val[fn->arg[i]].type);
			out(&e, "%s %s: %s", i ? "," : "\n *   inputs:", fn->val[fn->arg[i]].name, buf);
		}
		for (i = 0; i < fn->nret; i++) {
			snprinttype(buf, sizeof buf, m, fn->val[fn->ret[i]].type);
			out(&e, "%s out%d: %s", i ? "," : "\n *   outputs:", i, buf);
		}
		out(&e, "\n */\n#define %s_TARGET %s\ntypedef struct %s %s;\n", fn->name, e.cuda ? "GNN_TARGET_CUDA" : "GNN_TARGET_CPU", fn->name, fn->name);
		out(&e, "gnn_status %s_create(%s **model);\n", fn->name, fn->name);
		out(&e, "gnn_status %s_load_weights(%s *model, const char *safetensors_path);\n", fn->name, fn->name);
		out(&e, "gnn_status %s_bind(%s *model, gnn_graph *graph);\n", fn->name, fn->name);
		out(&e, "gnn_status %s_forward(", fn->name);
		forwardparams(&e);
		out(&e, ");\ngnn_status %s_forward_host(", fn->name);
		forwardparams(&e);
		out(&e, ");\ngnn_status %s_synchronize(%s *model);\n", fn->name, fn->name);
		out(&e, "void %s_destroy(%s *model);\nextern const gnn_model_desc %s_desc;\n", fn->name, fn->name, fn->name);
	}
	out(&e, "\n#ifdef __cplusplus\n}\n#endif\n\n#endif\n");
	fputs(sstr(&w.s), f);
	sfree(&w.s);
	poolfree(&e);
}
