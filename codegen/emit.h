/*
 * Internal to codegen/: the emitter's state, its text helpers, and the
 * interface between the two halves of a generated file:
 *
 *   host half (emit.c): the tables the runtime walks (buffers, parameters,
 *     bind-time graph work), storage, the API, the prelude;
 *   kernel half (kernels.c, rowkernel.c): the loops that compute, and
 *     per instruction the statement that runs them (e->calls).
 *
 * The kernel half reaches storage only through the accessors below, so
 * the host half decides where every value lives.
 */
#ifndef GNNCC_EMIT_H
#define GNNCC_EMIT_H

#include <stdarg.h>
#include <stdio.h>

#include "codegen.h"
#include "plan.h"

#if defined(__GNUC__)
#define GNN_FMT(a, b) __attribute__((format(printf, a, b)))
#else
#define GNN_FMT(a, b)
#endif

/* text.c: a growable string */
typedef struct Str {
	char *s;
	size_t len, cap;
} Str;
void sput(Str *b, const char *fmt, ...) GNN_FMT(2, 3);
void vsput(Str *b, const char *fmt, va_list ap);
const char *sstr(const Str *b);
void sfree(Str *b);

/* text.c: an indenting writer (see text.c) */
typedef struct W {
	Str s;
	int ind;
	bool bol;   /* at the beginning of a line */
} W;
void wput(W *w, const char *fmt, ...) GNN_FMT(2, 3);
void vwput(W *w, const char *fmt, va_list ap);
void wopen(W *w, const char *fmt, ...) GNN_FMT(2, 3);
void wclose(W *w, const char *after);

typedef struct E {
	FILE *f;
	W *w;                /* where out() writes */
	Plan *p;
	Fn *fn;
	Mod *m;
	const char *nm;      /* model name: the prefix of every symbol */
	bool cuda;
	char **calls;        /* per instruction: the statement that runs it (heap) */
	Sched sched;         /* the schedule of the kernel being emitted */
	const char *sfx;     /* its name's suffix: "" or a tuning candidate's "_s3" */
	const CodegenOpts *o;
	const TuneCands *tc; /* this model's candidates in a tuning build, or NULL */
	int *kstart;         /* tuning: per forward kernel, its first instruction */
	char **pool;         /* pf()'s strings */
	size_t npool, capool;
	struct Host *host;   /* the host half's layout (emit.c) */
	bool splitused;      /* a kernel splits its walks: the reduce kernel is needed */
	unsigned vendorused; /* Vendor* bits the model's kernels call (vendor.c) */
} E;

/* formatted text into the current writer */
void out(E *e, const char *fmt, ...) GNN_FMT(2, 3);
/* a formatted string that lives until the model is written (text.c) */
const char *pf(E *e, const char *fmt, ...) GNN_FMT(2, 3);
void poolfree(E *e);

const char *ctype(int dt);
/* the runtime's gnn_dtype for dt, a C name ("GNN_F32") */
const char *gnndtype(int dt);
Type ty(E *e, Ref v);

/* ---- accessors the host half provides (emit.c); all return pf() strings */

/* a size as a C expression (int64_t) over the bound graph's symbols */
const char *cdim(E *e, Dim d);
const char *cnumel(E *e, Ref v);
const char *cprod(E *e, const Type *t, int from, int to);
/* t as the model spells it ("f32[N, 16]") */
const char *typetext(E *e, Type t);
/* v's storage as a void * expression: on the side forward reads (dev) or
 * the host's (bind- and load-time work) */
const char *storage(E *e, Ref v, bool dev);
/* do a and b have one buffer (memplan's slot, or one value)? */
bool samestorage(E *e, Ref a, Ref b);
/* instruction i's segment plan (scatters, edge_softmax; a serial scatter's
 * counts) as a void * expression, and its size in bytes */
const char *segment(E *e, int i, bool dev);
const char *segbytes(E *e, int i);
/* split walks (cuda): the segment of the split plan over instruction i's
 * segment plan with chunk length at least c0, and of a walk's scratch of
 * w floats per item (what: the walk's kind, so that each walk has its
 * own); made on first use with their bind steps */
int splitplanseg(E *e, int i, int c0);
int permseg(E *e, int i, Ref v, int64_t w, bool index);
int segno(E *e, int i);
int splitscratchseg(E *e, int i, int what, int c0, int64_t w);
/* the device scratch of instruction i's split-K GEMM: floats floats */
/* a split-K GEMM's scratch: at most floats, and at most perrow floats a
 * row of its rows m once bound (perrow 0: no such bound) */
int gemmscratchseg(E *e, int i, int64_t floats, Dim m, int64_t perrow);
/* tuning: the candidate forward kernel k runs (an int lvalue) */
const char *tunesel(E *e, int k);
/* v's name as a C identifier, unique in its function: the IR name, or
 * "v" and the number where it has none */
const char *valname(E *e, Ref v);
/* v's name as --dump-ir prints it (without the '%') */
const char *irname(E *e, Ref v);

/* ---- the kernel half (kernels.c) */

/* every kernel of e->fn, written to e->w, and e->calls[i] for every
 * instruction that runs code; with e->tc, every candidate and e->kstart */
void emitkernels(E *e);
void freekernels(E *e);
/* the launch macros' N and S for kernel k (KNAME, KNAME_c0): the
 * profile's name for the launch, C literals -- the kernel as the cost
 * report names it (KLABEL: kernel() puts the instruction's kernel name
 * there, which a launch of a shared identical kernel keeps) and e->sched
 * as --report=schedules names it */
const char *launchlit(E *e, const char *k);

/* A kernel being built: its parameters (C declarations, and the host
 * expressions passed for them) and the names in it that come from IR
 * values (parameters and locals), which identical kernels may spell
 * differently.  All strings are pf()'s; the arrays grow. */
#define MaxHalf 32
typedef struct Args {
	int n, cap;
	const char **decl, **val, **pname;
	int nname, capname;
	const char **name;
	/* the pointer parameters to 16-bit storage (uint16_t) and their
	 * dtypes: kernel() rewrites every element access through them; and
	 * (halfround) the float outputs rounded to a 16-bit format where
	 * stored (round = "bf16"), whose reads are plain */
	int nhalf;
	const char *half[MaxHalf];
	int halfdt[MaxHalf];
	bool halfround[MaxHalf];
} Args;
void arg(Args *a, const char *decl, const char *fmt, ...) GNN_FMT(3, 4);
/* a parameter pointing at v's storage (the device side with device),
 * called name (NULL: v's valname), declared once however often v is an
 * operand; its name */
const char *ptrarg(E *e, Args *a, const char *name, Ref v, bool isout, bool device);
/* parameter name of a, declared without restrict: it shares memory with
 * another that is written */
void unrestrict(E *e, Args *a, const char *name);
/* the index in a of the pointer parameter called name (a bug if none) */
int argindex(const Args *a, const char *name);
/* the C type of v's elements in memory: its type's, or uint16_t for a
 * value stored in 16 bits */
const char *memctype(E *e, Ref v);
/* x, an element of matmul in's left operand, as the product reads it:
 * rounded to bfloat16 when in's weights are (round, passes/precision.c) */
const char *matmula(E *e, const Ins *in, const char *x);
/* a lone "{" and one level in (wopen's block without a head) */
void blockopen(W *w);
/* a name of the kernel made from an IR value's (recorded in a) */
const char *lname(E *e, Args *a, const char *fmt, ...) GNN_FMT(3, 4);
void argsfree(Args *a);
/* the kernel's name while it is written: emitkernels names it */
#define KNAME "@KERNEL@"
#define KLABEL "@LABEL@"

/*
 * The bodies of the ops, written once (kernels.c) and used by the
 * per-op kernels and the fused row kernels alike.  Operands come as C
 * expressions (of the loop variable k_ where a body loops), results as
 * lvalues; each body writes statements at the writer's indentation.
 */
/* an elementwise op's value over operands a (and b for binary ops) */
const char *elemexpr(E *e, const Ins *in, const char *a, const char *b);
/* gemmcuda.c: a dense transform's epilogue (passes/gemmepilogue.c).  The
 * value the kernel of matmul i stores (its epilogue's last, or its own) */
Ref gemmstored(const E *e, int i);
/* the epilogue's operands as parameters of a (opnd[k] NULL: step k has
 * none; bias[k]: a row vector of P); the step count (0: no epilogue) */
int epioperands(E *e, int i, Args *a, const char **opnd, bool *bias);
/* ", P1, P2 ..." of the operands' declarations (val: the host values
 * passed for them), to follow a kernel's other parameters */
const char *epiargs(E *e, const Args *a, const char *const *opnd, int nepi, bool val);
/* statements taking v, an output's complete sum, through the steps: elem
 * indexes an operand of the output's shape at that output, col a bias */
void epiemit(E *e, int i, const char *const *opnd, const bool *bias, const char *v, const char *elem, const char *col);
/* dst = the op over operands a (b), each read once */
void elembody(E *e, const Ins *in, const char *a, const char *b, const char *dst);
/* sum/mean/max/softmax/log_softmax/l2_normalize over D elements x (of
 * k_): the result into o (reductions) or element k_ into ok */
void reducebody(E *e, const Ins *in, int dt, const char *x, const char *D, const char *o, const char *ok);
void sumbody(E *e, const char *T, const char *x, const char *D);
/* a scatter: message x into acc (first: the row's first message), and
 * the row's result from acc and its message count cnt */
void scatterstep(E *e, const Ins *in, const char *first, const char *x, const char *acc);
void scatterfinish(E *e, const Ins *in, const char *cnt, const char *acc);
/* edge_softmax as PyG computes it: the column maximum and sum over the
 * segment, then each weight */
void esmaxstep(E *e, const char *first, const char *s, const char *mx);
void essumstep(E *e, int dt, const char *s, const char *mx, const char *sum);
void esonlinestep(E *e, int dt, const char *first, const char *s, const char *mx, const char *sum);
void esonlinemerge(E *e, int dt, const char *mx, const char *sum, const char *m2, const char *s2);
const char *esweight(E *e, int dt, const char *s, const char *mx, const char *sum);
/* a dot product over k_ < K in k order into a new local acc */
void dotbody(E *e, const char *T, const char *acc, const char *a, const char *b, const char *K);
/* nrows rows (i_) times the matrix B [K, P], accumulating into acc (an
 * lvalue of i_ and p_) over k_ in order; a: element (i_, k_) */
void axpybody(E *e, const char *T, long long nrows, const char *a, const char *B, long long K, long long P, const char *acc);
/* concat: the index into input k (n of the dim) of output (o_, c_, i_) */
const char *concatsrc(E *e, const char *n, const char *inner);

/* gemmcuda.c: instruction i, a dense transform under a tiled-GEMM
 * schedule (e->sched.bm set), as cuda's GEMM kernel named KNAME, its
 * parameters into a, and its launch into call */
void emitgemmcuda(E *e, int i, Args *a, Str *call);
/* spgemmcuda.c: the same under a sparse-input schedule (e->sched.sparse) */
void emitspgemmcuda(E *e, int i, Args *a, Str *call);
/*
 * vendor.c: a dense transform under vendor=1 as cuBLAS's SGEMM (its
 * operands into a, the call into call); the prelude's includes for the
 * build's --vendor; and the model's vendor hook (NAME_vendor: handles at
 * create, on the model's stream) and forward's check of the calls' status
 */
void emitvendorgemm(E *e, int i, Args *a, Str *call);
void emitvendorprelude(E *e);
void emitvendorhook(E *e);
/* forward's return: gnn_prog_end's status, or the first vendor call's failure */
const char *vendorend(E *e, const char *status);

/* rowkernel.c: the kernel of fusion group grp under e->sched, named
 * KNAME, its parameters into a, and the statement that runs it (a launch
 * for cuda) into call */
void emitrowkernel(E *e, int grp, Args *a, Str *call);
/* the reduce kernel of split walks and the function launching its levels
 * (after the kernels, where one of them splits) */
void emitsplitreduce(E *e);

#endif
