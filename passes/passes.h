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
	const char *specialize;     /* --specialize "N=2708,E=10556"; NULL: none */
	bool nographbreaks;         /* --no-graph-breaks: a graph break is an error */
	bool hostforward;           /* forward runs on the host (cpu target): no breaks */
	const char *precision;      /* --precision's pass (store-bf16, store-f16), or NULL */
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

/* autodiff.c: reverse mode ----------------------------------------------- */

/*
 * Append to fn the gradient of loss (a float scalar of fn) with respect
 * to each of wrt[0..n), built from the forward's ops (docs/training.md);
 * grad[k] receives wrt[k]'s (zeros when the loss does not depend on it).
 * Returns 0, or -1 after reporting an op it cannot differentiate.
 */
int autodiff(Fn *fn, Ref loss, const Ref *wrt, int n, Ref *grad);

/* phase.c: when each value can be computed --------------------------------- */

enum Phase {
	PhaseNone,
	PhaseInput,     /* a tensor input of forward */
	PhaseParam,     /* a parameter: loaded with the weights */
	PhaseLoad,      /* parameters only: computed when weights are loaded */
	PhaseBind,      /* the graph only: computed when a graph is bound */
	PhaseForward,   /* computed by forward (on the device for cuda) */
	/* a training step's work on the graph and its constant inputs only
	 * (invariant.c marks it "once"): computed by the first step after a bind or new
	 * inputs, kept for the steps after */
	PhaseOnce,
};
/* phase[v] for every value of fn (sized fn->nval); instructions must be
 * in dependency order, as they always are. */
void phases(const Fn *fn, unsigned char *phase);
/* v is a parameter that fn, a training step, neither trains nor updates
 * (a buffer such as GIN's eps): constant from step to step */
bool frozenparam(const Fn *fn, Ref v);

/* pipeline.c: the shared rewriting helper ---------------------------------- */

/*
 * Make every use of from (instruction operands and fn->ret) a use of to.
 * The definition of from stays, now dead, for dce.  The survivor keeps
 * its name hint; if it has none, it takes from's, so dumps stay readable.
 */
void replaceuses(Fn *fn, Ref from, Ref to);

/* The passes, one per file -------------------------------------------------- */

void canonicalize(Fn *fn);      /* canonicalize.c: exact algebraic identities */
void fold(Fn *fn);              /* fold.c: constant folding */
void cse(Fn *fn);               /* cse.c: merge equal instructions */
void dce(Fn *fn);               /* dce.c: drop unused instructions, keep params */
void reorder(Fn *fn);           /* reorder.c: transform before or after aggregation, whichever is narrower */
void invariant(Fn *fn);         /* invariant.c: a training step's work on the graph and constant inputs */
void hoist(Fn *fn);             /* hoist.c: load-, bind-, once- and forward-time work in that order */
void fuse(Fn *fn);              /* fuse.c: row kernels (SpMM, attention, epilogues) */
void specialize(Fn *fn);        /* specialize.c: --specialize's sizes become constants */
void memplan(Fn *fn);           /* memplan.c: arena slots by liveness */
void readfold(Fn *fn);          /* readfold.c: cpu kernels read through a gather, a transpose, a product */
void sinkreduce(Fn *fn);        /* sinkreduce.c: sums over rows move down to their first use */
void sinkelem(Fn *fn);          /* sinkelem.c: lone elementwise row work moves down to its first use */
void tilegemm(Fn *fn);          /* tilegemm.c: cpu bf16: deep dense transforms stay GEMMs (AMX) */
void tcgemm(Fn *fn);            /* tcgemm.c: cuda bf16: dense transforms stay GEMMs (tensor cores) */
/* tilegemm.c: whether in is a forward dense transform by loaded float32
 * weights (the products --precision=bf16 rounds) */
bool weightproduct(const Fn *fn, const Ins *in, const unsigned char *phase);
void colscale(Fn *fn);          /* colscale.c: a column's scale leaves a sum over rows */
void gemmepilogue(Fn *fn);      /* gemmepilogue.c: cuda: elementwise work after a GEMM joins it */
/* the GEMM at instruction i heads an epilogue group (gemmepilogue.c) of at
 * most EpilogueMax steps: the group's last instruction, or -1 */
enum { EpilogueMax = 8 };
int epilogueend(const Fn *fn, int i);
/* memplan.c: may v, the value a tiled GEMM's epilogue group stores, take
 * u's memory where that kernel reads u last?  Only u an epilogue operand
 * (not the product's), read element by element where that element of v
 * is written, of v's type, and both stored in 16 bits (a float32 output's
 * split-K part 0 is written before the parts' sum reads u) */
bool inplaceover(const Fn *fn, Ref u, Ref v);
int viafold(const Fn *fn, int j);         /* the instruction j reads through, or -1 */
bool folded(const Fn *fn, int i);         /* instruction i is read through by its one use */
bool wgradmatmul(const Fn *fn, const Ins *in);   /* a weight gradient's matmul (gnn_sgemm_wgrad) */
bool colsum(const Fn *fn, const Ins *in);        /* a float sum or mean over a dim before the last */
void storebf16(Fn *fn);         /* precision.c: forward's stored values in bfloat16 */
void storef16(Fn *fn);          /* precision.c: ... in IEEE half */

/* fuse.c: the analysis behind fusion groups, for codegen ------------------- */

enum { RowNone, RowNode, RowEdge, RowUniform };
/* 0 if every "group" attribute of fn names a valid row kernel; else -1
 * with a message and the offending instruction's location. */
int checkgroups(const Fn *fn, Loc *where, char *err, size_t errlen);
/* kind[v]: how a row kernel sees value v (node row, edge value, uniform,
 * none); egraph[v]: for an edge value, the graph of its edges. */
void rowkinds(const Fn *fn, unsigned char *kind, Ref *egraph);
/* the node count of fusion group grp's rows (one node type's) */
Dim groupnodes(const Fn *fn, int grp);
/*
 * Does v escape the fusion group made of instructions [a, b): is it
 * returned, or read by an instruction outside [a, b), directly or
 * through alias ops (Falias) made inside [a, b)?  The one escape test:
 * fusion, memory planning and the row kernels must agree on which
 * values a group stores.
 */
bool escapesgroup(const Fn *fn, Ref v, int a, int b);


/* schedule.c: kernels, their schedule spaces and the cost model ------------- */

enum { KernelElem, KernelDense, KernelRow };
/* The targets code is generated for (codegen.h says more). */
enum Target { TargetCPU, TargetCUDA };
typedef struct SchedTarget {
	int target;              /* TargetCPU or TargetCUDA */
	bool openmp;             /* cpu: compiled with OpenMP */
	unsigned vendor;         /* cuda: Vendor* bits the build may call (--vendor) */
} SchedTarget;
/* What the cost model knows of the graph (defaultstats: a typical one). */
typedef struct GraphStats {
	int64_t nodes, edges, maxdeg;
	double meandeg, cvdeg;   /* in-degree mean and coefficient of variation */
} GraphStats;
typedef struct Kernel {
	int first, last;         /* its first and last instruction */
	int group;               /* fusion group, or -1 */
	int kind;                /* Kernel* */
	const char *what;        /* "aggregation", "attention", "epilogue", "dense", "elementwise" */
	char name[16];           /* codegen's: "g0" (group 0), "k12" (instruction 12) */
	uint64_t sig;            /* hash of its instructions' text */
	int64_t width;           /* widest node row made (dense: P) */
	int64_t msgwidth;        /* widest aggregated row (dense: K) */
	int64_t smem;            /* row kernels: shared bytes per row with lanes */
	int64_t weightbytes;     /* dense: B's bytes (matmulweightbytes) */
	bool lanable, hasmatmul;
	bool epi;                /* dense: its group's elementwise epilogue (gemmepilogue.c) */
	bool ahalf, o16;         /* dense: A, the value it stores, in 16 bits (passes/precision.c) */
	/* row kernels: walks edges; and every walk's messages come from
	 * memory, not from rows the kernel makes, so a chunk of a row's
	 * edges can be walked without the row (the `split` schedule) */
	bool walks, splittable;
	int nwalk;               /* edge walks: one per scatter and per edge_softmax */
	/* dense: A's share of non-zeros where the options state it for the
	 * input A is (--input-density; 0: not stated, modeled as dense) */
	double adensity;
} Kernel;
/* split=SplitDefault is the split the cost model offers (ir/sched.c):
 * 64 lane steps, since a split costs its chunk and reduce launches (about
 * 7 us each on an H100, docs/cost.md) and a row under 64 steps does not;
 * ResidentWarps: warps an H100 keeps resident (132 SMs x 64), the
 * parallelism the cost model sets a serial walk against */
enum { SplitDefault = 64, ResidentWarps = 132 * 64 };
/* the widest output the sparse-input GEMM keeps in a warp's registers
 * (4 columns a lane) */
enum { SparseMaxP = 128 };
/* forward's kernels in launch order (free *out) */
int listkernels(Fn *fn, Kernel **out);
int64_t rowsharedbytes(const Fn *fn, int group);
/*
 * Whether a matmul may join a row kernel: one row at a time re-reads the
 * whole weight matrix per row, which is cheap only while the weights
 * stay in the nearest cache (RowWeightBytes: a core's L1 data cache, or
 * a block's shared memory).  A larger one stays a dense transform of its
 * own, a GEMM that reads each weight once per tile of rows.  One rule for
 * both targets.
 */
enum { RowWeightBytes = 32 * 1024 };
int64_t matmulweightbytes(const Fn *fn, const Ins *in);
bool rowmatmul(const Fn *fn, const Ins *in);
bool isdense(const Fn *fn, const Ins *in);       /* schedule.c: [M, K] @ [K, P], K and P constant */
const Ins *denseof(const Fn *fn, int i);         /* readfold.c: the dense matmul kernel i runs, or NULL */
/* 0 if s may run kernel k on st's target; else why, and SchedNotFor (s
 * sets fields that are not this kind of kernel's on this target: lanes
 * for a dense transform, chunk on cuda) or SchedIllegal (they are its,
 * but this kernel cannot take these values: lanes x rows not whole
 * warps, too much shared memory, edge values not elementwise, ...). */
enum { SchedNotFor = -1, SchedIllegal = -2 };
int schedlegal(const Kernel *k, const SchedTarget *st, const Sched *s, char *err, size_t errlen);
/* The target's rules for a row kernel's block that hold whatever the
 * kernel (cuda: lanes x rows whole warps, at most 1024 threads): 0, or
 * -1 and why.  schedlegal applies them; --schedule checks them first. */
int schedtargetlegal(const SchedTarget *st, const Sched *s, char *err, size_t errlen);
/* cuda's first tiled GEMM for a width P: the reference of a GEMM with an
 * epilogue, which has no untiled form */
void gemmreference(int64_t P, Sched *s);
/* the candidates (out[0] the reference); their count */
int schedspace(const Kernel *k, const SchedTarget *st, Sched *out, int max);
double schedcost(const Kernel *k, const SchedTarget *st, const GraphStats *gs, const Sched *s);
void defaultstats(GraphStats *gs);
/* the cost model's choice; returns the size of the space */
int costpick(const Kernel *k, const SchedTarget *st, const GraphStats *gs, Sched *best);
/* k's "sched" attribute (removed for the reference) */
void setsched(Fn *fn, const Kernel *k, const Sched *s);

/* specialize.c: the sizes the pass substitutes ------------------------------ */

/* Syntax of --specialize ("N=2708,E=10556"): 0, or -1 after a message. */
int checkspecialize(const char *spec);
/* Set the sizes for m's symbols (an unknown name is a user error: -1
 * after a message); spec NULL clears them.  runpasses does this. */
int specializeprep(Mod *m, const char *spec);
void specializedone(void);

/* memplan.c: forward's kernels and the values that need storage ------------- */

/*
 * kern[i] (sized fn->nins): the kernel of forward that runs instruction i,
 * numbered in launch order (a fusion group is one kernel, at its start;
 * an ungrouped forward instruction is one), or -1 when i launches
 * nothing in forward (aliases, load- and bind-time work).  Returns the
 * number of kernels.  Codegen's emitkernels makes the same walk.
 */
int forwardkernels(const Fn *fn, const unsigned char *phase, int *kern);
/* v is made by a fusion group, read only inside it (through the group's
 * own aliases) and not returned: the fused kernel stores it nowhere. */
bool groupinternal(const Fn *fn, Ref v);
/* v needs arena storage: a forward tensor, not an alias, not group-internal */
bool needsstorage(const Fn *fn, const unsigned char *phase, Ref v);
/*
 * The arena's forward buffers: buf[v] (sized fn->nval) is the buffer of
 * value v or -1; values with the same valid "slot" share one.  rep[b]
 * (sized fn->nval) is buffer b's largest value, which gives its size.
 * Buffers are numbered in order of their first values' definitions;
 * outalone (the cuda target): a returned value has a buffer of its own
 * (lazybuffer).  Returns their count.
 */
int arenabuffers(Fn *fn, const unsigned char *phase, int *buf, Ref *rep, bool outalone);
/*
 * Buffer b holds one value, which forward returns (a model's, not a
 * training step's): on a device with separate memory it takes no arena
 * memory (GNN_BUF_LAZY): forward writes it into the caller's buffer, or
 * into one made by the first forward that cannot (runtime/program.c).
 */
bool lazybuffer(const Fn *fn, const int *buf, const Ref *rep, int b);
/*
 * What a kernel's scratch may overlap: the arena places the buffers that
 * own memory (codegen's GNN_BUF_FWD with share -1) in the order of their
 * first values' definitions, order[p] (sized fn->nval) the p-th;
 * floor[k] (sized fn->nins + 1) is 1 + the place of the last of them live
 * during forward kernel k, 0 if none is (outalone: a returned value's own
 * buffer, which is not in the arena, does not count).  The rest hold
 * nothing k reads or writes; so do the places below floor[k] whose bit
 * in live[k] (sized as floor; NULL: not wanted) is clear: bit p is set
 * where place p is live during k (places past 64 have no bit: users take
 * them as live).  Returns the number of buffers placed.
 */
int scratchfloors(Fn *fn, const unsigned char *phase, const int *buf, int *order, int *floor, uint64_t *live, bool outalone);

/* breaks.c: graph breaks and host syncs ------------------------------------- */

/*
 * The instructions whose segment plan depends on more than the graph: a
 * scatter whose index, or an edge_softmax whose graph, is not bind-time.
 * On the cuda target each is a graph break (a device-to-host sync); on
 * the cpu target it runs sequentially.  Writes their indices to at
 * (sized fn->nins); returns the count.
 */
int hostpoints(const Fn *fn, const unsigned char *phase, int *at);
/* Why instruction i is a break: "scatter_sum's index depends on the
 * model's inputs, so its segment plan must be built on the host (...)". */
void breakreason(const Fn *fn, const unsigned char *phase, int i, char *buf, size_t n);
/* --no-graph-breaks: an error at each break of m (none when
 * hostforward); returns the number of errors. */
int checkbreaks(Mod *m, bool hostforward);

#endif
