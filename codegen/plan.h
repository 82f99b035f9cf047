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
/* Do the cuda target's walks read bind-time edge array v only through
 * copies in their plans' order (rowkernel.c's permcopies), so that v
 * itself is not kept on the device?  True where every forward read of v
 * is in a fused row group with a walk over v's graph whose schedule
 * keeps perm=0, and is not a scatter's index or a gather by dst. */
bool copiedonly(const Fn *fn, const unsigned char *phase, int target, Ref v);
/* Does forward (and a step's once-time work) read only the row starts
 * of instruction i's segment plan, not its order?  True on cuda where
 * every walk of the plan is in a row group of perm=0 whose edge arrays
 * are all bind-time values, read through plan-order copies: bind then
 * frees the order once its steps are done. */
bool rowsonly(const Fn *fn, const unsigned char *phase, int target, int i);
/* v through the aliases that row group grp makes */
Ref groupbase(const Fn *fn, Ref v, int grp);
/* the schedule of row group grp (its first instruction's) */
void groupsched(const Fn *fn, int grp, Sched *s);
/* operand k of instruction j, through group grp's aliases, when it is an
 * array of graph g's edges that the group's walk over g reads at each
 * edge (not made in the group, not a scatter's index, not a gather's
 * by dst), else RNone */
Ref walkarray(const Fn *fn, int grp, Ref g, int j, int k);

#endif
