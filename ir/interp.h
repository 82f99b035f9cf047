/*
 * The reference interpreter: runs any IR function on the CPU in double
 * precision.  It is the oracle every pass and backend is checked against,
 * so it favours obviously-correct loops over speed.
 *
 * Values: a tensor is a dense row-major double array with concrete
 * extents; a graph is COO edge lists (+ optional weights and batch).
 * Integer and bool tensors are held as doubles too (exact below 2^53).
 *
 * Errors at run time (an index out of range, a shape that does not match
 * the bound symbols, a missing parameter) are returned as a status with a
 * message naming the value and the source location; nothing aborts.
 */
#ifndef GNNCC_INTERP_H
#define GNNCC_INTERP_H

#include "ir.h"

typedef struct IGraph {
	int64_t nnode, nedge;
	int64_t nsrc;            /* a relation's (graph[Ns -> Nd, E]) source
	                            node count, which src indexes; nnode is
	                            Nd.  Unread for other graphs */
	int64_t *src, *dst;      /* [nedge] */
	double *weight;          /* [nedge] or NULL: unweighted */
	int64_t ngraph;          /* 1 unless batch is set */
	int64_t *batch;          /* [nnode] graph id of each node, or NULL */
} IGraph;

typedef struct ITensor {
	int dtype;               /* the IR dtype it stands for */
	int rank;
	int64_t shape[MaxRank];
	double *data;            /* product(shape) elements */
} ITensor;

typedef struct IValue {
	int kind;                /* TTensor or TGraph */
	ITensor t;
	IGraph g;
} IValue;

/* Parameters by PyG name; return false (and leave *t alone) if absent.
 * On true, t->data (malloc'd, product(shape) doubles) is handed over:
 * the interpreter frees it, after the parameter's last use or when it
 * refuses the tensor.  The shape must be the declared one, and the dtype
 * too unless t->dtype is DNone. */
typedef bool (*IParamFn)(void *ud, const char *name, ITensor *t);

typedef struct IRun {
	Fn *fn;
	const IValue *args;      /* fn->narg inputs, in order; borrowed
	                            (never written or freed).  A tensor's
	                            dtype may be DNone (unchecked); a graph
	                            without batch may leave ngraph 0 (one
	                            graph) */
	IParamFn param;
	void *ud;
	IValue *outs;            /* fn->nret results, owned by the caller
	                            on success (free with interpfree); NULL
	                            after a failure */
	bool checkonly;          /* bind and check the arguments, run
	                            nothing (outs stays NULL): the checks a
	                            compiled model, given bare pointers,
	                            cannot make itself */
	char err[512];           /* message on failure */
} IRun;

/* 0 on success; -1 with run->err set on failure.  Symbols are bound
 * from the argument shapes and graph sizes (and derived ones as graph ops
 * produce them); every bound value is checked against its uses. */
int interp(IRun *run);
/* Free run->outs (each value and the array) and set it to NULL; call it
 * before reusing run for another interp(), which overwrites outs. */
void interpfree(IRun *run);
void ivaluefree(IValue *v);
void itensorfree(ITensor *t);

#endif
