/*
 * The options of gnncc, gnnrun and gnngen (options.h): the table, the
 * parser and --help.
 *
 * The table is in --help's order, by section; a section heading is
 * printed only for a tool that takes one of the options under it.  An
 * option is looked up by its exact spelling first, then as NAME=VALUE,
 * then (one dash and letters: -o, -I, -O) with its value joined, so
 * that -MD is never -M with a value and -O2 is -O with 2.
 *
 * Messages name the tool (optstart's prog); a bad option is the user's
 * error: one line (and a pointer to --help for an unknown one), exit 1.
 */
#include <errno.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

#include "options.h"

static const char *const cuda_cpu[] = {"cuda", "cpu", NULL};
static const char *const gnn_ir[] = {"gnn", "ir", NULL};
static const char *const emumodes[] = {"run", "memcheck", "racecheck", NULL};
static const char *const emuchecks[] = {"memcheck", "racecheck", NULL};
static const char *const emits[] = {"obj", "cuda", "c", "header", "ir", NULL};
static const char *const engines[] = {"interp", "cpu", "cuda", "cuda-emu", NULL};
static const char *const interptargets[] = {"cuda", "cpu", NULL};
static const char *const dtypes[] = {"f32", "f64", NULL};
/* --cpu: the portable default first (clones dispatched at run time) */
const char *const optcpus[6] = {"portable", "native", "x86-64-v2", "x86-64-v3", "x86-64-v4", NULL};
const char *const optgpumaths[3] = {"fp32", "tf32", NULL};
const char *const optprecisions[4] = {"fp32", "bf16", "fp16", NULL};
const char *const optprecisionpass[3] = {NULL, "store-bf16", "store-f16"};
static const char *const levels[] = {"0", "1", "2", "3", NULL};
/* the graphs first (optpresetsizes' rows), then the relational ones
 * (gnngen's tables, docs/hetero.md) */
const char *const optpresets[8] = {"cora", "citeseer", "pubmed", "arxiv", "reddit", "products", "rel-shop", NULL};
/* the shapes of the usual benchmark datasets (PyG's Planetoid, OGB,
 * Reddit), in optpresets' order: gnngen's presets, and gnncc's
 * --report-graph=preset:NAME */
const OptPresetSize optpresetsizes[6] = {
	{2708, 10556, 1433},            /* cora */
	{3327, 9104, 3703},             /* citeseer */
	{19717, 88648, 500},            /* pubmed */
	{169343, 2315598, 128},         /* arxiv */
	{232965, 114615892, 602},       /* reddit */
	{2449029, 123718280, 100},      /* products */
};
/* --gpu: the devices the cost report knows (codegen/cost.c's table) */
const char *const optgpus[3] = {"h100", "a100", NULL};
const char *const opttimings[3] = {"forward", "profiler", NULL};
const char *const optoptimizers[4] = {"sgd", "adam", "adamw", NULL};

#define CC ForCc
#define RUN ForRun
#define GEN ForGen
#define SECTION(tools, title) {OptSection, tools, title, NULL, ArgNone, NULL, NULL, NULL, NULL}

static const OptSpec table[] = {
	SECTION(CC | RUN, "Input:"),
	{OptLang, CC, "-x", NULL, ArgRequired, NULL, gnn_ir, "language",
	 "the language of FILE (default: .ir is IR, else gnn)"},
	{OptInclude, CC | RUN, "-I", NULL, ArgRequired, "DIR", NULL, NULL,
	 "search DIR for imports, after the importing file's\ndirectory (repeatable; -IDIR too)"},
	{OptGraph, RUN, "--graph", NULL, ArgRequired, "FILE", NULL, NULL,
	 "edge_index, int32 or int64 [2, E] (row 0 source,\nrow 1 target); NAME=FILE: of graph input NAME\n(a relation, src__rel__dst; repeatable)"},
	{OptBatch, RUN, "--batch", NULL, ArgRequired, "FILE", NULL, NULL,
	 "node-to-graph ids for a batched graph[N, E, B] input"},
	{OptNumNodes, RUN, "--num-nodes", NULL, ArgRequired, "N", NULL, NULL,
	 "node count when no node input fixes it"},
	{OptInput, RUN, "--input", NULL, ArgRequired, "NAME=FILE", NULL, NULL,
	 "a tensor input of the model, by name (repeatable)"},
	{OptWeights, RUN, "--weights", NULL, ArgRequired, "FILE", NULL, NULL,
	 "parameters by PyG state_dict name (safetensors)"},
	{OptModelName, RUN, "--model-name", NULL, ArgRequired, "NAME", NULL, NULL,
	 "which model of the file (default: the first)"},
	{OptCheckFinite, RUN, "--check-finite", NULL, ArgNone, NULL, NULL, NULL,
	 "reject inputs and weights holding NaN or infinity"},

	SECTION(CC | RUN, "Target:"),
	{OptTarget, CC, "--target", NULL, ArgRequired, NULL, cuda_cpu, "target",
	 "CUDA kernels compiled by nvcc (default), or portable C"},
	{OptEmulate, CC, "--emulate", NULL, ArgOptional, "MODE", emumodes, "mode",
	 "cuda: compile the CUDA C with the host's C++ compiler for\n"
	 "the emulated device (runs on the CPU, checked; see\n"
	 "docs/emulator.md); MODE: run (default), memcheck\n"
	 "(AddressSanitizer) or racecheck (ThreadSanitizer)"},
	{OptArch, CC, "--arch", NULL, ArgRequired, "LIST", NULL, NULL,
	 "GPU architectures, e.g. sm_90 or sm_80,sm_90 (default);\n"
	 "machine code for each, plus PTX for the newest; or native"},
	{OptOpenmp, CC, "-fopenmp", NULL, ArgNone, NULL, NULL, NULL,
	 "cpu: compile with OpenMP (then link with -fopenmp too)"},
	{OptNoOpenmp, CC, "-fno-openmp", NULL, ArgNone, NULL, NULL, NULL, NULL},
	{OptCpu, CC | RUN, "--cpu", NULL, ArgRequired, NULL, optcpus, "cpu",
	 "cpu: the instruction set, as -march: portable (gnncc's\n"
	 "default: x86-64-v4, v3 and baseline clones of every\n"
	 "kernel, chosen when the program starts), native (this\n"
	 "machine; gnnrun's default), x86-64-v2, x86-64-v3 or\n"
	 "x86-64-v4 (the object needs it)"},
	{OptGpuMath, CC | RUN, "--gpu-math", NULL, ArgRequired, NULL, optgpumaths, "mode",
	 "cuda: the dense transforms' tiled GEMMs multiply in\n"
	 "fp32 (default) or tf32: tensor cores, operands rounded\n"
	 "to 10-bit mantissas, FP32 sums (sm_80 and later;\n"
	 "about 1e-3 relative, docs/cli.md)"},
	{OptVendor, CC | RUN, "--vendor", NULL, ArgRequired, "LIST", NULL, NULL,
	 "cuda: vendor libraries the schedules may call: none\n"
	 "(default), cublas, cusparse, or cublas,cusparse; the\n"
	 "program then links them (--print-link-flags with the\n"
	 "same --vendor; docs/vendor.md)"},
	{OptPrecision, CC | RUN, "--precision", NULL, ArgRequired, NULL, optprecisions, "precision",
	 "fp32 (default), or bf16 / fp16: features, activations\n"
	 "and messages stored in 16 bits (rounded to nearest\n"
	 "even), arithmetic and sums in f32, weights f32\n"
	 "(docs/precision.md)"},
	{OptEngine, RUN, "--engine", NULL, ArgRequired, "ENGINE", engines, "engine",
	 "interp: the reference interpreter (float64; the default);\n"
	 "cpu: the model compiled for the cpu target (cc);\n"
	 "cuda: compiled for the cuda target (nvcc; needs a GPU);\n"
	 "cuda-emu: the cuda target's code on the emulated device\n"
	 "(c++; the CPU runs every GPU thread, CUDA's semantics\n"
	 "checked)"},
	{OptInterpTarget, RUN, "--interp-target", NULL, ArgRequired, "cuda|cpu", interptargets, "target",
	 "interp: run that target's passes (default cuda's): the\n"
	 "cpu target adds colscale, sinkreduce, sinkelem and\n"
	 "readfold, which change what is stored, so under\n"
	 "--precision the values rounded to 16 bits are\n"
	 "--engine=cpu's (its reference)"},
	{OptEmuCheck, RUN, "--emu-check", NULL, ArgRequired, "MODE", emuchecks, "mode",
	 "cuda-emu under memcheck (AddressSanitizer) or racecheck\n"
	 "(ThreadSanitizer); gnnrun loads the sanitizer itself"},
	{OptEmuOrder, RUN, "--emu-order", NULL, ArgRequired, "ORDER", NULL, NULL,
	 "cuda-emu: blocks and threads run forward (default),\nreverse or random[:SEED]"},
	{OptEmuGridMax, RUN, "--emu-grid-max", NULL, ArgRequired, "N", NULL, NULL,
	 "cuda-emu: at most N blocks per grid dimension, so that\ngrid-stride loops wrap"},
	{OptEmuDefer, RUN, "--emu-defer", NULL, ArgNone, NULL, NULL, NULL,
	 "cuda-emu: stream work waits for the host to synchronize,\nso that a missing synchronization reads stale data"},
	{OptEmuWork, RUN, "--emu-work", NULL, ArgRequired, "FILE", NULL, NULL,
	 "cuda-emu: write each launch's per-warp work to FILE\n(the kernel, its warps, total and busiest warp's work;\ndocs/cost.md)"},

	SECTION(CC | RUN, "Optimization:"),
	{OptLevel, CC | RUN, "-O", NULL, ArgOptional, "0..3", levels, "level",
	 "-O0 runs no passes; -O, -O1, -O2, -O3 the default pipeline\n"
	 "(-O2 is the default; docs/passes.md)"},
	{OptPasses, CC, "--passes", NULL, ArgRequired, "P1,P2,...", NULL, NULL,
	 "run exactly these passes, in this order;\n--passes= runs none"},
	{OptVerifyEach, CC, "--verify-each", NULL, ArgNone, NULL, NULL, NULL,
	 "verify the IR after every pass"},
	{OptSpecialize, CC | RUN, "--specialize", NULL, ArgRequired, "N=2708,E=10556", NULL, NULL,
	 "compile for these graph sizes only (any -O level); bind\nrejects graphs of other sizes"},
	{OptNoGraphBreaks, CC, "--no-graph-breaks", NULL, ArgNone, NULL, NULL, NULL,
	 "a graph break (a host sync inside forward) is an error"},

	SECTION(CC | RUN, "Schedules (docs/tuning.md):"),
	{OptSchedule, CC | RUN, "--schedule", NULL, ArgRequired, "K:FIELDS", NULL, NULL,
	 "kernel K (g0, k12, or all) gets this schedule, e.g.\n"
	 "g0:lanes=8,rows=32 (repeatable; all: where legal)"},
	{OptTune, CC, "--tune", NULL, ArgNone, NULL, NULL, NULL,
	 "time every candidate schedule on this machine and keep\n"
	 "the fastest (needs a graph); results go to the cache"},
	{OptTuneGraph, CC, "--tune-graph", NULL, ArgRequired, "FILE", NULL, NULL,
	 "the graph schedules are for (.npy edge_index): the cost\n"
	 "model's statistics, the cache's bucket, --tune's input"},
	{OptTuneNodes, CC, "--tune-nodes", NULL, ArgRequired, "N", NULL, NULL,
	 "that graph's node count (default: largest index + 1)"},
	{OptTuneSynthetic, CC, "--tune-synthetic", NULL, ArgRequired, "N,E", NULL, NULL,
	 "tune on a synthetic power-law graph instead"},
	{OptTuneBudget, CC, "--tune-budget", NULL, ArgRequired, "S", NULL, NULL,
	 "seconds for the whole tuning run (default 60; 0: no\n"
	 "limit, every kernel is tuned however long it takes)"},
	{OptTuneRepeats, CC, "--tune-repeats", NULL, ArgRequired, "R", NULL, NULL,
	 "time each candidate exactly R times (default: 3, then\n"
	 "up to 31 for short kernels)"},
	{OptTuneCandidates, CC, "--tune-candidates", NULL, ArgRequired, "K", NULL, NULL,
	 "try at most K candidates per kernel, the reference\n"
	 "schedule first (default: the whole space)"},
	{OptTuneCache, CC | RUN, "--tune-cache", NULL, ArgRequired, "FILE", NULL, NULL,
	 "the tuning cache (default $GNNCC_TUNE_CACHE, else\n"
	 "$XDG_CACHE_HOME/gnncc/tune.jsonl or\n"
	 "~/.cache/gnncc/tune.jsonl)"},
	{OptNoTuneCache, CC | RUN, "--no-tune-cache", NULL, ArgNone, NULL, NULL, NULL,
	 "neither read nor write a cache"},

	SECTION(CC, "Reports (to standard output, after the passes):"),
	{OptReport, CC, "--report", NULL, ArgOptional, "LIST", NULL, NULL,
	 "per model: kernels (what one forward launches), breaks,\n"
	 "syncs, memory (the arena as a formula in N, E, ...),\n"
	 "schedules (each kernel's, and why), cost (one forward\n"
	 "modeled on --gpu for --report-graph; cuda); LIST is a\n"
	 "comma list of these (default: the first four).  Alone,\n"
	 "without -o or --emit, nothing else is written"},
	{OptReportGraph, CC, "--report-graph", NULL, ArgRequired, "FILE", NULL, NULL,
	 "the arena's size and the cost report for this\nedge_index (.npy, [2, E]), or preset:NAME (a gnngen\npreset's graph, seed 1)"},
	{OptReportNodes, CC, "--report-nodes", NULL, ArgRequired, "N", NULL, NULL,
	 "that graph's node count (default: largest index + 1)"},
	{OptGpu, CC, "--gpu", NULL, ArgRequired, NULL, optgpus, "gpu",
	 "the device --report=cost models (default h100;\ndocs/cost.md states its constants)"},
	{OptInputDensity, CC, "--input-density", NULL, ArgRequired, "LIST", NULL, NULL,
	 "inputs' shares of non-zeros for the cost models\n(--report=cost and -O's schedules): NAME=D, comma-\n"
	 "separated, 0 < D <= 1 (default: dense)"},
	{OptReportTiming, CC, "--report-timing", NULL, ArgRequired, NULL, opttimings, "timing",
	 "what --report=cost's times are: forward (a forward's\nlaunches back to back, warm caches, sustained clock;\nthe default) or profiler (each launch alone as a\nprofiler replays it: caches flushed, base clock)"},

	SECTION(CC | RUN, "Output:"),
	{OptOut, CC, "-o", NULL, ArgRequired, "FILE", NULL, NULL,
	 "the output (default for objects: FILE's base name with .o)"},
	{OptEmit, CC, "--emit", NULL, ArgRequired, "KIND", emits, "kind",
	 "obj: an object and its header beside it (default)\n"
	 "cuda, c: the generated source (cuda needs --target=cuda,\n"
	 "c needs --target=cpu); header: the model's header;\n"
	 "ir: the optimized IR.  Without -o these go to\n"
	 "standard output"},
	{OptKeepTemps, CC, "--keep-temps", NULL, ArgNone, NULL, NULL, NULL,
	 "keep the generated source beside the object\n(NAME.gnncc.cu)"},
	{OptMD, CC, "-MD", NULL, ArgNone, NULL, NULL, NULL,
	 "also write a Make dependency file (-o's name with .d)"},
	{OptMMD, CC, "-MMD", NULL, ArgNone, NULL, NULL, NULL,
	 "the same, without the gnncc executable among the\ndependencies"},
	{OptMF, CC, "-MF", NULL, ArgRequired, "FILE", NULL, NULL,
	 "the dependency file's name"},
	{OptMT, CC, "-MT", NULL, ArgRequired, "TARGET", NULL, NULL,
	 "the rule's target (default: the output; repeatable)"},
	{OptMP, CC, "-MP", NULL, ArgNone, NULL, NULL, NULL,
	 "add an empty rule for each dependency but the input"},
	{OptDumpIr, CC, "--dump-ir", NULL, ArgOptional, "WHEN", NULL, NULL,
	 "print the final IR to standard output (alone: write\n"
	 "nothing else); --dump-ir=all: after the frontend and\n"
	 "after every pass; --dump-ir=PASS: after pass PASS"},
	{OptSyntaxOnly, CC, "-fsyntax-only", NULL, ArgNone, NULL, NULL, NULL,
	 "check FILE only: run no passes, write nothing"},
	{OptVerbose, CC, "-v", NULL, ArgNone, NULL, NULL, NULL,
	 "show the commands that compile the generated source"},
	{OptOutput, RUN, "--output", NULL, ArgRequired, "FILE", NULL, NULL,
	 "one per model output, written as float32 .npy"},
	{OptOutputDtype, RUN, "--output-dtype", NULL, ArgRequired, NULL, dtypes, "dtype",
	 "f64: write float64 instead (the interpreter's precision)"},
	{OptProfile, RUN, "--profile", NULL, ArgOptional, "FILE", NULL, NULL,
	 "compiled engines: time every launch (load, bind, forward,\n"
	 "training steps) and print a table of them after the run;\n"
	 "FILE: also each launch as a JSON line (docs/cli.md)"},

	SECTION(RUN, "Training (docs/training.md):"),
	{OptTrain, RUN, "--train", NULL, ArgNone, NULL, NULL, NULL,
	 "train the model (its train item, else nll of its output)\n"
	 "on the graph, then write --output and --save-weights"},
	{OptLabels, RUN, "--labels", NULL, ArgRequired, "FILE", NULL, NULL,
	 "the targets (class indices, int64 [N]): the step's first\ninput after the model's"},
	{OptTrainMask, RUN, "--train-mask", NULL, ArgRequired, "FILE", NULL, NULL,
	 "the nodes the loss is over (bool [N]): its next input"},
	{OptTestMask, RUN, "--test-mask", NULL, ArgRequired, "FILE", NULL, NULL,
	 "print the accuracy of the trained model over these nodes"},
	{OptLoss, RUN, "--loss", NULL, ArgRequired, "LOSS", NULL, NULL,
	 "nll, cross_entropy, bce or mse (default: the file's)"},
	{OptEpochs, RUN, "--epochs", NULL, ArgRequired, "N", NULL, NULL,
	 "steps of full-graph training (default: the file's, 200)"},
	{OptOptimizer, RUN, "--optimizer", NULL, ArgRequired, NULL, optoptimizers, "optimizer",
	 "sgd, adam or adamw, as torch.optim (default: the file's)"},
	{OptLr, RUN, "--lr", NULL, ArgRequired, "X", NULL, NULL, "the learning rate"},
	{OptWeightDecay, RUN, "--weight-decay", NULL, ArgRequired, "X", NULL, NULL,
	 "L2 (sgd, adam) or decoupled (adamw) weight decay"},
	{OptMomentum, RUN, "--momentum", NULL, ArgRequired, "X", NULL, NULL, "sgd's momentum"},
	{OptNesterov, RUN, "--nesterov", NULL, ArgNone, NULL, NULL, NULL, "sgd: Nesterov momentum"},
	{OptSaveWeights, RUN, "--save-weights", NULL, ArgRequired, "FILE", NULL, NULL,
	 "the trained weights as safetensors, PyG's names (only\nwhen training succeeds)"},
	{OptBatchSize, RUN, "--batch-size", NULL, ArgRequired, "B", NULL, NULL,
	 "mini-batch training (docs/sampling.md): B seed nodes of\n"
	 "--train-mask a step, with their sampled neighbourhoods"},
	{OptFanout, RUN, "--fanout", NULL, ArgRequired, "[REL=]K1,K2,...", NULL, NULL,
	 "in-neighbours sampled per node at each hop (PyG's\nnum_neighbors; default 10,10); REL=: relation REL's\n"
	 "(0 draws none), over the one for every relation"},
	{OptShuffle, RUN, "--shuffle", NULL, ArgNone, NULL, NULL, NULL,
	 "the seed nodes in a new order each epoch (from --seed)"},
	{OptSampleThreads, RUN, "--sample-threads", NULL, ArgRequired, "T", NULL, NULL,
	 "threads that sample a batch (default 1), beside the\ntraining; any T gives the same batches"},
	{OptDumpBatches, RUN, "--dump-batches", NULL, ArgRequired, "DIR", NULL, NULL,
	 "a heterogeneous model's batches written into DIR as\n.npy (gnn_hsampler_save_batch), batch K as bK_*.npy"},
	{OptEdgeTime, RUN, "--edge-time", NULL, ArgRequired, "REL=FILE", NULL, NULL,
	 "temporal sampling: relation REL's edge times (int64\n[E]); a seed reaches only edges at or before its time"},
	{OptSeedTime, RUN, "--seed-time", NULL, ArgRequired, "FILE", NULL, NULL,
	 "with --edge-time: each seed-type node's time (int64 [N])"},

	SECTION(CC, "Building programs:"),
	{OptPrintLinkFlags, CC, "--print-link-flags", NULL, ArgNone, NULL, NULL, NULL,
	 "print the linker flags a program needs for --target"},
	{OptPrintCflags, CC, "--print-cflags", NULL, ArgNone, NULL, NULL, NULL,
	 "print the compiler flags that find gnnrt.h"},

	SECTION(CC, "Diagnostics:"),
	{OptNoCaret, CC, "-fno-caret", NULL, ArgNone, NULL, NULL, NULL,
	 "do not show the source line and a caret under errors"},
	{OptCaret, CC, "-fcaret", NULL, ArgNone, NULL, NULL, NULL, NULL},
	{OptMaxErrors, CC, "-fmax-errors", NULL, ArgRequired, "N", NULL, NULL,
	 "stop after N errors (default 20; 0: no limit)"},

	SECTION(GEN, "Graphs:"),
	{OptNodes, GEN, "--nodes", NULL, ArgRequired, "N", NULL, NULL,
	 "number of nodes (below 2^32)"},
	{OptEdges, GEN, "--edges", NULL, ArgRequired, "E", NULL, NULL,
	 "number of edges (no self loops when N >= 2)"},
	{OptFeatures, GEN, "--features", NULL, ArgRequired, "F", NULL, NULL,
	 "columns of x.npy, uniform in [-1, 1) (default 0: no x.npy)"},
	{OptAlpha, GEN, "--alpha", NULL, ArgRequired, "A", NULL, NULL,
	 "Zipf exponent of the degrees over ranks, 0..8 (default 1)"},
	{OptSeed, GEN | RUN, "--seed", NULL, ArgRequired, "S", NULL, NULL,
	 "an unsigned 64-bit seed (default 0; gnnrun --train: the\ninit's and dropout's)"},
	{OptPreset, GEN, "--preset", NULL, ArgRequired, "NAME", optpresets, "preset",
	 "N, E and F of a dataset (below); --nodes, --edges and\n"
	 "--features given beside it override them; rel-*: the\n"
	 "tables of a relational database (below)"},
	{OptScale, GEN, "--scale", NULL, ArgRequired, "S", NULL, NULL,
	 "a relational preset's rows times S, 0 < S <= 16\n(default 1)"},
	{OptGenOut, GEN, "--out", NULL, ArgRequired, "DIR", NULL, NULL,
	 "output directory (created if missing)"},
	{OptStats, GEN, "--stats", NULL, ArgRequired, "FILE", NULL, NULL,
	 "print the statistics of an existing edge_index.npy\n"
	 "(--nodes: its node count, else the largest index + 1)"},

	SECTION(ForAll, "General:"),
	{OptHelp, ForAll, "--help", "-h", ArgNone, NULL, NULL, NULL,
	 "print this help and exit"},
	{OptVersion, ForAll, "--version", NULL, ArgNone, NULL, NULL, NULL,
	 "print the version and exit"},
	{OptEnd, 0, NULL, NULL, ArgNone, NULL, NULL, NULL, NULL},
};

/* ------------------------------------------------------------- messages */

static const char *prog = "gnncc";
static int nerrors;             /* opterror's count */

static void
voptmsg(const char *kind, const char *fmt, va_list ap)
{
	fprintf(stderr, "%s: %s: ", prog, kind);
	vfprintf(stderr, fmt, ap);
	fputc('\n', stderr);
}

int
optnerrors(void)
{
	return nerrors;
}

void
opterror(const char *fmt, ...)
{
	va_list ap;

	nerrors++;
	va_start(ap, fmt);
	voptmsg("error", fmt, ap);
	va_end(ap);
}

_Noreturn void
optfatal(const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	voptmsg("error", fmt, ap);
	va_end(ap);
	exit(1);
}

void
optwarn(const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	voptmsg("warning", fmt, ap);
	va_end(ap);
}

/* -------------------------------------------------------------- parsing */

void
optstart(OptParser *p, const char *name, unsigned tool, int argc, char **argv)
{
	prog = name;
	*p = (OptParser){.tool = tool, .argc = argc, .i = 1, .argv = argv, .choice = -1};
}

/* -o, -MF, -O: one dash and letters, a value joined to them */
static bool
joins(const OptSpec *s)
{
	return s->arg != ArgNone && s->name[0] == '-' && s->name[1] != '-' && !strchr(s->name + 1, '-');
}

/* "a, b or c" */
static void
printchoices(FILE *f, const char *const *c)
{
	int i;

	for (i = 0; c[i]; i++)
		fprintf(f, "%s%s", i == 0 ? "" : c[i + 1] ? ", " : " or ", c[i]);
}

/* s's spec for argument a, with the value's start in *val (NULL: none) */
static const OptSpec *
lookup(const OptParser *p, const char *a, const char **val)
{
	const OptSpec *s;
	size_t n;
	int pass;

	/* exact, then NAME=VALUE, then joined: see the top of the file */
	for (pass = 0; pass < 3; pass++)
		for (s = table; s->id != OptEnd; s++) {
			if (s->id == OptSection || !(s->tools & p->tool))
				continue;
			n = strlen(s->name);
			*val = NULL;
			if (pass == 0 && (strcmp(a, s->name) == 0 || (s->alias && strcmp(a, s->alias) == 0)))
				return s;
			if (strncmp(a, s->name, n) != 0)
				continue;
			if (pass == 1 && !joins(s) && a[n] == '=') {
				*val = a + n + 1;
				return s;
			}
			if (pass == 2 && joins(s) && a[n]) {
				*val = a + n;
				return s;
			}
		}
	return NULL;
}

Opt
optnext(OptParser *p, const char **val)
{
	const OptSpec *s;
	const char *a;
	int k;

	p->spec = NULL;
	p->choice = -1;
	*val = NULL;
	if (p->i >= p->argc)
		return OptEnd;
	a = p->argv[p->i++];
	if (p->operands || a[0] != '-' || strcmp(a, "-") == 0) {
		*val = a;
		return OptOperand;
	}
	if (strcmp(a, "--") == 0) {
		p->operands = true;
		return optnext(p, val);
	}
	if (!(s = lookup(p, a, val))) {
		opterror("unknown option '%s'", a);
		fprintf(stderr, "%s: note: '%s --help' lists the options\n", prog, prog);
		exit(1);
	}
	if (*val && s->arg == ArgNone)
		optfatal("option '%s' takes no value, not '%s'", s->name, *val);
	if (!*val && s->arg == ArgRequired) {
		if (p->i >= p->argc)
			optfatal("missing argument to '%s'", s->name);
		*val = p->argv[p->i++];
	}
	if (*val && s->choices) {
		for (k = 0; s->choices[k] && strcmp(s->choices[k], *val) != 0; k++)
			;
		if (!s->choices[k]) {
			fprintf(stderr, "%s: error: unknown %s '%s' for %s; expected ", prog, s->what, *val, s->name);
			printchoices(stderr, s->choices);
			fputc('\n', stderr);
			exit(1);
		}
		p->choice = k;
	}
	p->spec = s;
	return s->id;
}

int
optlevel(const char *val)
{
	/* every level from 1 up runs the one default pipeline */
	return !val ? 1 : val[0] == '0' ? 0 : val[0] == '1' ? 1 : 2;
}

int64_t
optint(const char *opt, const char *val, int64_t min, int64_t max, const char *noun)
{
	char *end;
	long long n;

	errno = 0;
	n = strtoll(val, &end, 10);
	if (!*val || *end || errno || n < min || n > max)
		optfatal("%s takes %s from %lld to %lld, not '%s'", opt, noun ? noun : "an integer",
		         (long long)min, (long long)max, val);
	return n;
}

/* ----------------------------------------------------------------- help */

/* the option as --help shows it: "--target=cuda|cpu", "-o FILE", "-O[0..3]" */
static void
spelling(char *buf, size_t n, const OptSpec *s)
{
	char meta[128] = "";
	size_t len = 0;
	int k;

	if (s->meta)
		snprintf(meta, sizeof meta, "%s", s->meta);
	else
		for (k = 0; s->choices && s->choices[k]; k++)
			len += snprintf(meta + len, sizeof meta - len, "%s%s", k ? "|" : "", s->choices[k]);
	if (s->arg == ArgNone)
		snprintf(buf, n, "%s", s->name);
	else if (s->arg == ArgOptional)
		snprintf(buf, n, joins(s) ? "%s[%s]" : "%s[=%s]", s->name, meta);
	else
		snprintf(buf, n, joins(s) ? "%s %s" : "%s=%s", s->name, meta);
	if (s->alias)
		snprintf(buf + strlen(buf), n - strlen(buf), ", %s", s->alias);
}

void
opthelp(FILE *f, unsigned tool)
{
	const OptSpec *s, *t;
	const char *h, *nl;
	char left[160];
	bool any;

	for (s = table; s->id != OptEnd; s++) {
		if (!(s->tools & tool))
			continue;
		if (s->id == OptSection) {
			/* a heading with nothing of this tool's under it is left out */
			for (any = false, t = s + 1; t->id != OptEnd && t->id != OptSection; t++)
				any = any || ((t->tools & tool) && t->help);
			if (any)
				fprintf(f, "%s%s\n", s == table ? "" : "\n", s->name);
			continue;
		}
		if (!s->help)
			continue;
		spelling(left, sizeof left, s);
		fprintf(f, strlen(left) > 19 ? "  %s\n%22s" : "  %-19s ", left, "");
		for (h = s->help;; h = nl + 1) {
			nl = strchr(h, '\n');
			fprintf(f, "%.*s\n", nl ? (int)(nl - h) : (int)strlen(h), h);
			if (!nl)
				break;
			fprintf(f, "%22s", "");
		}
	}
}
