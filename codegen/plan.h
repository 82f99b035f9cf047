/*
 * Internal to codegen/: the plan of one function (phases of its values)
 * shared by plan.c and emit.c.
 */
#ifndef GNNCC_PLAN_H
#define GNNCC_PLAN_H

#include <stdlib.h>

#include "../ir/ir.h"
#include "../passes/passes.h"


typedef struct Plan {
	Fn *fn;
	int target;
	unsigned char *phase;   /* per value */
	bool *symknown;         /* per symbol: known once a graph is bound */
	Ref graph;              /* the graph input */
	int nparam;
} Plan;

int plan(Plan *p, Fn *fn, int target);   /* returns the number of errors */
void planfree(Plan *p);
/* storageroot(p->fn, v), for emit.c */
Ref storageof(const Plan *p, Ref v);
/* Do instructions i and j (scatters or edge_softmax) walk the same
 * segment plan?  Then they share it: one sort at bind, one copy in
 * memory.  The graph's edges by target are one plan however reached
 * (edge_softmax, a scatter by dst into its nodes); other scatters share
 * by index value and row count; a serial scatter's counters are its own. */
bool sameplan(const Fn *fn, const unsigned char *phase, int i, int j);
/* the graph whose edges instruction i walks by target, or RNone */
Ref plangraph(const Fn *fn, int i);
/* Does forward read storage root v (or return it)?  phase: per value. */
bool readinforward(const Fn *fn, const unsigned char *phase, Ref v);

#endif
