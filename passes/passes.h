/*
 * The optimization passes and the pass manager that runs them.
 *
 * A pass is a function over one Fn; it may rewrite instructions and
 * operands freely and need not keep val[].nuse/def current: the pass
 * manager calls filluse() after each pass, and verifies the result
 * under --verify-each (always in debug builds).  Passes are named in a
 * table (pipeline.c) so that --passes, --dump-ir=PASS and the lit tests
 * can run any of them alone, the way LLVM's opt does.
 */
#ifndef GNNCC_PASSES_H
#define GNNCC_PASSES_H

#include <stdbool.h>
#include <stdio.h>

#include "../ir/ir.h"

typedef struct Pass {
	const char *name;
	void (*run)(Fn *fn);
	const char *help;           /* one line, for --help */
} Pass;

extern const Pass passtab[];    /* ends with a {NULL} entry */
const Pass *findpass(const char *name);   /* NULL if unknown */
/* "canonicalize, cse, dce": for error messages and --help */
void fprintpassnames(FILE *f);

typedef struct PassOpts {
	const char *pipeline;       /* "a,b,c"; "" runs none; NULL: default for olevel */
	int olevel;                 /* 0: no passes; >= 1: the default pipeline */
	bool verifyeach;            /* verify after every pass (always with GNNCC_VERIFY_DEFAULT) */
	const char *dumpafter;      /* NULL, "all", or a pass name */
	FILE *dumpto;               /* where dumps go; NULL: stdout */
} PassOpts;

/* The pipeline runpasses would run, as a comma list (for messages). */
const char *defaultpipeline(int olevel);
/*
 * Check a pipeline and a dump request without running anything: unknown
 * pass names are user errors, reported on stderr ("gnncc: error: ...").
 * Returns 0 if all is well, -1 otherwise.
 */
int checkpassopts(const PassOpts *o);
/*
 * Run the pipeline over every function of m, pass by pass (all functions
 * through one pass before the next pass starts, so a dump after a pass
 * shows the whole module).  Returns 0, or -1 on a user error (an unknown
 * pass), in which case nothing has run.  A pass that leaves invalid IR
 * is a compiler bug: the IR is printed to stderr and the process aborts.
 */
int runpasses(Mod *m, const PassOpts *o);

/* phase.c: when each value can be computed --------------------------------- */

enum Phase {
	PhaseNone,
	PhaseInput,     /* a tensor input of forward */
	PhaseParam,     /* a parameter: loaded with the weights */
	PhaseLoad,      /* parameters only: computed when weights are loaded */
	PhaseBind,      /* the graph only: computed when a graph is bound */
	PhaseForward,   /* computed by forward (on the device for cuda) */
};
/* phase[v] for every value of fn (sized fn->nval); instructions must be
 * in dependency order, as they always are. */
void phases(const Fn *fn, unsigned char *phase);

/* pipeline.c: the shared rewriting helper ---------------------------------- */

/*
 * Make every use of from (instruction operands and fn->ret) a use of to.
 * The definition of from stays, now dead, for dce.  The survivor keeps
 * its name hint; if it has none, it takes from's, so dumps stay readable.
 */
void replaceuses(Fn *fn, Ref from, Ref to);

/* The passes, one per file -------------------------------------------------- */

void canonicalize(Fn *fn);      /* canonicalize.c: exact algebraic identities */
void cse(Fn *fn);               /* cse.c: merge equal instructions */
void dce(Fn *fn);               /* dce.c: drop unused instructions, keep params */
void hoist(Fn *fn);             /* hoist.c: load-, bind- and forward-time work in that order */

#endif
