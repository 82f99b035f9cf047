/*
 * Internal to codegen/: the emitter's state and the helpers that emit.c
 * (per-op kernels, bind, the API) and rowkernel.c (fused row kernels)
 * share.
 */
#ifndef GNNCC_EMIT_H
#define GNNCC_EMIT_H

#include <stdio.h>

#include "codegen.h"
#include "plan.h"

typedef struct E {
	FILE *f;
	Plan *p;
	Fn *fn;
	Mod *m;
	const char *nm;      /* model name: the prefix of every symbol */
	bool cuda;
	char **calls;        /* per instruction: the statement that runs it */
	Sched sched;         /* the schedule of the kernel being emitted */
	const char *sfx;     /* its name's suffix: "" or a tuning candidate's "_s3" */
	const CodegenOpts *o;
	const TuneCands *tc; /* this model's candidates in a tuning build, or NULL */
	int *kstart;         /* tuning: per forward kernel, its first instruction */
} E;

/* A kernel's extra arguments: C declarations and the host expressions
 * passed for them. */
typedef struct Args {
	int n;
	char decl[48][64];
	char val[48][600];
} Args;

void out(E *e, const char *fmt, ...);
const char *ctype(int dt);
const char *cdim(E *e, Dim d);          /* C expression over m->sym[] */
Type ty(E *e, Ref v);
const char *cnumel(E *e, Ref v);
const char *cprod(E *e, const Type *t, int from, int to);
void arg(Args *a, const char *decl, const char *fmt, ...);
/* an argument pointing at v's storage (d[] on the device side) */
void ptrarg(E *e, Args *a, const char *name, Ref v, bool isout, bool device);
/* the C expression of an elementwise op: of x (unary), of a and b */
void unaryexpr(char *buf, size_t n, const Ins *in, int dt, int odt);
void binaryexpr(char *buf, size_t n, int op, int dt);

/* rowkernel.c: the kernel of fusion group grp under e->sched; call gets
 * the statement that runs it (a launch for cuda) */
void emitrowkernel(E *e, int grp, char *call, size_t calln);

#endif
