/*
 * Code generation: an optimized IR module in, C source out.
 *
 * One emitter serves both targets.  Work that depends only on the graph
 * (graph ops, degrees, normalizations, segment plans for scatters) runs
 * on the host when a graph is bound; everything else runs in forward, as
 * a sequence of parallel loops over independent tasks: host `for` loops
 * for --target=cpu (OpenMP where available), grid-stride CUDA kernels for
 * --target=cuda.  Every model's symbols carry its name as a prefix, so
 * several models link into one program.
 */
#ifndef GNNCC_CODEGEN_H
#define GNNCC_CODEGEN_H

#include <stdio.h>

#include "../ir/ir.h"
#include "../passes/passes.h"

/* A tuning build's candidates: per forward kernel of one model (in launch
 * order), ncand schedules, cand[k][0] the reference. */
typedef struct TuneCands {
	int nkernels;
	int *ncand;
	Sched **cand;
} TuneCands;

/* --cpu: the instruction set of a cpu-target object (options.c's optcpus
 * order).  CpuPortable compiles every kernel three times (x86-64-v4, v3
 * and baseline) and picks one when the program starts; the others are
 * -march. */
enum Cpu { CpuPortable, CpuNative, CpuV2, CpuV3, CpuV4 };

/* --gpu-math: how cuda's tiled GEMMs multiply (options.c's optgpumaths
 * order).  TF32 rounds their operands to TF32 (10-bit mantissas) for
 * the tensor cores' mma.sync, FP32 accumulation. */
enum GpuMath { GpuMathFP32, GpuMathTF32 };
/* how far a model under TF32 may be from the float64 reference, a
 * fraction of its largest output (docs/cli.md says why) */
#define TF32Tol 5e-3

typedef struct CodegenOpts {
	int target;              /* TargetCPU or TargetCUDA */
	int cpu;                 /* Cpu*, for TargetCPU */
	int gpumath;             /* GpuMath*, for TargetCUDA (--gpu-math) */
	unsigned vendor;         /* Vendor* (ir.h) bits a cuda build may call (--vendor) */
	const char *source;      /* the .gnn path, for the banner */
	const char *header;      /* the header's file name as included ("gcn.h") */
	/* a tuning build: per model, in module order, its candidates; every
	 * one is compiled, forward runs the selected ones, and NAME_tune
	 * (gnn_tune_desc) selects and times them.  NULL: a normal build. */
	const TuneCands *tune;
} CodegenOpts;

/*
 * Check that every function of m can be compiled for the target (one
 * graph input; sizes determined by the graph; supported dtypes and ops).
 * Problems are user errors reported with errorat at the source location;
 * returns the number of errors.
 */
int codegencheck(Mod *m, const CodegenOpts *o);
/* The model's source (.c or .cu) and its public header. */
void emitsource(FILE *f, Mod *m, const CodegenOpts *o);
void emitheader(FILE *f, Mod *m, const CodegenOpts *o);

/* report.c: --report=kernels,breaks,syncs,memory */
enum { ReportKernels = 1, ReportBreaks = 2, ReportSyncs = 4, ReportMemory = 8, ReportSchedules = 16, ReportCost = 32 };
typedef struct ReportOpts {
	unsigned what;           /* Report* bits */
	int target;              /* TargetCPU or TargetCUDA */
	const char *graph;       /* --report-graph: an edge_index .npy, or NULL */
	int64_t nodes;           /* --report-nodes; -1: the largest index + 1 */
	int gpu;                 /* --gpu: cost.c's device table (optgpus' order) */
	const char *density;     /* --input-density's list, or NULL */
	bool profiler;           /* --report-timing=profiler: each launch alone, cold, at base clock */
} ReportOpts;
/*
 * Print what each model of m (optimized) will do: the kernels of one
 * forward, the graph breaks and host syncs, the arena as a formula in N,
 * E and the derived sizes (with o->graph, also its size for that graph).
 * Returns 0, or -1 after a message on stderr (a graph that cannot be
 * read or does not fit the model).
 */
int report(FILE *f, Mod *m, const ReportOpts *o);
/* vendor.c: --report=memory's line for the device memory fn's vendor
 * calls hold outside the arena (cuBLAS's workspace), if it has any */
void vendormemory(FILE *f, const Fn *fn);

/* cost.c: the device buffers forward's schedules add on a graph (split
 * plans, their partials, split-K parts), sized as bind sizes them, for
 * --report=memory; and the graph's sizes (per symbol, -1: not the
 * graph's).  Returns 0, or -1 after a message (a graph that cannot be
 * read or does not fit fn). */
enum { MemSplitPlan, MemSplitPartials, MemKsplit };
typedef struct MemItem {
	int kind;                /* Mem* */
	char what[96];
	int64_t bytes;
	int64_t key[2];          /* one buffer per kind and key (a split plan: segment plan, C) */
} MemItem;
int costmemory(Mod *m, Fn *fn, const ReportOpts *o, int64_t **symval, MemItem **items, int *nitems);

/* cost.c: --report=cost, the cuda target's cost model (docs/cost.md) */
typedef struct CostGpu {
	const char *name, *what;
	int sms;
	double ghz;              /* sustained SM clock */
	double fp32, tf32;       /* FLOP/s: FFMA, dense tensor cores */
	double hbm, gather;      /* DRAM bytes/s: streaming, row gathers */
	double l2bw, l2;         /* L2 hit bandwidth (bytes/s), size (bytes) */
	double launch, gap, kmin;   /* us: host launch, GPU gap between kernels, least kernel */
	double l2ns, dramns;     /* a dependent load's latency */
	int warps;               /* resident warps an SM */
	int smemkb;              /* shared memory an SM (KB) */
	double prof;             /* a profiler's replay of one launch: its latencies times this */
	double loaded;           /* a dependent load's latency when every resident warp waits on one */
} CostGpu;
extern const CostGpu costgpus[];   /* optgpus' order */
/* gemmcuda.c: a tiled GEMM's split-K scratch (floats) for [., K] @ [K, P]
 * under s, and the parts its launch takes for M rows (1: unsplit) */
int64_t gemmkscratch(const Sched *s, int64_t K, int64_t P);
int gemmparts(const Sched *s, int64_t M, int64_t K, int64_t P, bool o16);
/* whether matmul in under schedule s runs on bfloat16 tensor cores
 * (gemmcuda.c): its weights rounded to bfloat16 (--precision=bf16), so
 * both operands are bfloat16 values, and slabs a multiple of 16 deep */
bool gemmbf16(const Fn *fn, const Ins *in, const Sched *s);
/* rowkernel.c, for the emitter and the model: how many slices of a row's
 * edges the L lanes of a cuda row kernel walk side by side (slice q takes
 * edges q, q + Q, ...) in a walk of op (Oedge_softmax: its statistics;
 * a scatter) over w columns; 1: the lanes share the columns only.  A
 * scatter takes at most `most` slices (the schedule's slices; 0: no cap).
 * A split kernel's plans cut rows at C times the least slices of its walks.
 * esize: the bytes of the rows the walk gathers (msgreads; 2 slices a
 * 16-bit row more coarsely). */
int rowslices(int op, int64_t w, int L, int most, int esize);
/* rowkernel.c, for the emitter and the model: what a scatter's message v
 * (made in group grp) reads inside the group: the narrowest edge_softmax
 * (its width; 0: none) and the widest element of the tables it gathers
 * (bytes; 0: none) */
typedef struct MsgReads {
	int64_t heads;
	int esize;
} MsgReads;
MsgReads msgreads(const Fn *fn, int grp, Ref v);
/* rowkernel.c, for the emitter and the model: whether the cuda lane walk
 * of scatter op over w columns, its L lanes in Q slices (rowslices),
 * takes its edges two a step, both edges' loads in flight before either
 * is added: where some lane leaves the column loop every edge (P = L / Q
 * does not divide w), around which nvcc keeps only one edge in flight.
 * Sums and means, and not where the message's edge_softmax weights go
 * between the lanes by shuffle (unsliced, heads < L: heads is the
 * narrowest edge_softmax the message reads, 0 none). */
bool pairededges(int op, int64_t w, int L, int Q, int64_t heads);
/* fn's forward on o->gpu for the graph o->graph: 0, or -1 after a message */
int reportcost(FILE *f, Mod *m, Fn *fn, const ReportOpts *o);
/* fn's one graph input for --report-graph, or RNone after a message (no
 * graph input, or several: a heterogeneous graph's relations) */
Ref reportgraphinput(const Fn *fn);
/* The same model for choosing schedules (the cuda target's, when the
 * schedules have a graph): fn on an H100 for graph g (NULL
 * when fn has no graph input or g does not fit it, after a message);
 * costtime: kernel k's launches under s, in seconds, gaps included. */
typedef struct CostModel CostModel;
struct gnn_graph;
CostModel *costmodel(Mod *m, Fn *fn, const struct gnn_graph *g);
double costtime(CostModel *cm, const Kernel *k, const Sched *s);
/* the candidate of k's schedule space with the least costtime (equal
 * times: the least schedcost under gs) */
void costpickgpu(CostModel *cm, const Kernel *k, const SchedTarget *st, const GraphStats *gs, Sched *best);
void costmodelfree(CostModel *cm);
/* --input-density's LIST, "NAME=D,...": 0, or -1 with why in err */
int densitycheck(const char *list, char *err, size_t errlen);
/* whether every name of list is a tensor input of a model of m: 0, or
 * -1 with why in err */
int densitynames(Mod *m, const char *list, char *err, size_t errlen);
/* the density list gives input name (the last entry for it), or 0 */
double densityof(const char *list, const char *name);
/* the adensity of each dense kernel of ks whose A is (an alias of) an
 * input of fn that list names (NULL: none) */
void setdensities(const Fn *fn, Kernel *ks, int n, const char *list);

#endif
