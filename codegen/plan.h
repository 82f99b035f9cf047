/*
 * Internal to codegen/: the plan of one function (phases of its values)
 * shared by plan.c and emit.c.
 */
#ifndef GNNCC_PLAN_H
#define GNNCC_PLAN_H

#include <stdlib.h>

#include "../ir/ir.h"

enum Phase {
	PhaseNone,
	PhaseInput,     /* a tensor input of forward */
	PhaseParam,     /* a parameter: loaded with the weights */
	PhaseLoad,      /* depends on parameters only: computed on the host at
	                   create and load_weights */
	PhaseBind,      /* computed on the host when a graph is bound */
	PhaseForward,   /* computed by forward (on the device for cuda) */
};

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
Ref storageof(const Plan *p, Ref v);

#endif
