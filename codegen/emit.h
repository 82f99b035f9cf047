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
} E;

/* formatted text into the current writer */
void out(E *e, const char *fmt, ...) GNN_FMT(2, 3);
/* a formatted string that lives until the model is written (text.c) */
const char *pf(E *e, const char *fmt, ...) GNN_FMT(2, 3);
void poolfree(E *e);

const char *ctype(int dt);
Type ty(E *e, Ref v);

/* ---- accessors the host half provides (emit.c); all return pf() strings */

/* a size as a C expression (int64_t) over the bound graph's symbols */
const char *cdim(E *e, Dim d);
const char *cnumel(E *e, Ref v);
const char *cprod(E *e, const Type *t, int from, int to);
/* v's storage as a void * expression: on the side forward reads (dev) or
 * the host's (bind- and load-time work) */
const char *storage(E *e, Ref v, bool dev);
/* instruction i's segment plan (scatters, edge_softmax; a serial scatter's
 * counts) as a void * expression, and its size in bytes */
const char *segment(E *e, int i, bool dev);
const char *segbytes(E *e, int i);
/* tuning: the candidate forward kernel k runs (an int lvalue) */
const char *tunesel(E *e, int k);
/* v's name as a C identifier, unique in its function: the IR name, or
 * "v" and the number where it has none */
const char *valname(E *e, Ref v);

/* ---- the kernel half (kernels.c) */

/* every kernel of e->fn, written to e->w, and e->calls[i] for every
 * instruction that runs code; with e->tc, every candidate and e->kstart */
void emitkernels(E *e);
void freekernels(E *e);

/* A kernel's extra arguments: C declarations and the host expressions
 * passed for them. */
typedef struct Args {
	int n;
	char decl[48][64];
	char val[48][600];
} Args;
void arg(Args *a, const char *decl, const char *fmt, ...);
/* an argument pointing at v's storage (the device side with device) */
void ptrarg(E *e, Args *a, const char *name, Ref v, bool isout, bool device);
/* the C expression of an elementwise op: of x (unary), of a and b */
void unaryexpr(char *buf, size_t n, const Ins *in, int dt, int odt);
void binaryexpr(char *buf, size_t n, int op, int dt);

/* rowkernel.c: the kernel of fusion group grp under e->sched; call gets
 * the statement that runs it (a launch for cuda) */
void emitrowkernel(E *e, int grp, char *call, size_t calln);

#endif
