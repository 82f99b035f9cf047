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
/* Does forward read storage root v (or return it)?  phase: per value. */
bool readinforward(const Fn *fn, const unsigned char *phase, Ref v);

#endif
