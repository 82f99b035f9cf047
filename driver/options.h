/*
 * The command line of gnncc, gnnrun and gnngen: one table of options
 * (options.c) and one parser, so that the three tools spell, check and
 * document their options the same way.
 *
 * An option that means the same in two tools (-O, -I, --specialize,
 * --schedule, --tune-cache, --help, ...) is one entry, marked for each
 * tool that takes it.  The spelling rules, for every option:
 *
 *	--name=VALUE, --name VALUE      (a required value)
 *	--name[=VALUE]                  (an optional one: only with '=')
 *	-xVALUE, -x VALUE               (one dash and letters: -o, -I, -MF)
 *	-O, -O0 .. -O3                  (the same, optional: joined only)
 *	-fname=VALUE, -fname VALUE      (one dash, other names: -fmax-errors)
 *	--                              (what follows are operands)
 *
 * Errors print "PROG: error: ..." and exit 1: an unknown option, a
 * missing value, a value where none is taken, a value not among an
 * option's choices.  --help is printed from the table.  Only libc is
 * used, and nothing is allocated: values point into argv, so gnngen,
 * which links the runtime alone, shares the parser too.
 */
#ifndef GNNCC_OPTIONS_H
#define GNNCC_OPTIONS_H

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

#ifndef GNNCC_VERSION
#define GNNCC_VERSION "0.1.0"
#endif

/* the tools, as bits: which take an option */
enum { ForCc = 1, ForRun = 2, ForGen = 4, ForAll = ForCc | ForRun | ForGen };

/* what follows an option's name */
enum { ArgNone, ArgRequired, ArgOptional };

typedef enum Opt {
	OptOperand = -1,        /* not an option: a file name, "-" */
	OptEnd = 0,             /* no more arguments; ends the table */
	OptSection,             /* a heading in --help */
	/* every tool */
	OptHelp, OptVersion,
	/* gnncc and gnnrun */
	OptInclude, OptLevel, OptSpecialize, OptSchedule, OptTuneCache, OptNoTuneCache,
	/* gnncc */
	OptLang, OptTarget, OptEmulate, OptArch, OptOpenmp, OptNoOpenmp, OptCpu, OptGpuMath, OptVendor, OptPrecision,
	OptPasses, OptVerifyEach, OptNoGraphBreaks,
	OptTune, OptTuneGraph, OptTuneNodes, OptTuneSynthetic, OptTuneBudget,
	OptTuneRepeats, OptTuneCandidates,
	OptReport, OptReportGraph, OptReportNodes, OptGpu, OptInputDensity, OptReportTiming,
	OptOut, OptEmit, OptKeepTemps, OptMD, OptMMD, OptMF, OptMT, OptMP, OptDumpIr,
	OptSyntaxOnly, OptVerbose, OptPrintLinkFlags, OptPrintCflags,
	OptNoCaret, OptCaret, OptMaxErrors,
	/* gnnrun */
	OptGraph, OptBatch, OptNumNodes, OptInput, OptWeights, OptModelName, OptCheckFinite,
	OptEngine, OptInterpTarget, OptEmuCheck, OptEmuOrder, OptEmuGridMax, OptEmuDefer, OptEmuWork, OptOutput, OptOutputDtype,
	OptProfile,
	OptTrain, OptLabels, OptTrainMask, OptTestMask, OptLoss, OptEpochs, OptOptimizer, OptLr,
	OptWeightDecay, OptMomentum, OptNesterov, OptSaveWeights,
	OptBatchSize, OptFanout, OptShuffle, OptSampleThreads, OptEdgeTime, OptSeedTime, OptDumpBatches,
	/* gnngen */
	OptNodes, OptEdges, OptFeatures, OptAlpha, OptSeed, OptPreset, OptScale, OptGenOut, OptStats,
} Opt;

typedef struct OptSpec {
	Opt id;
	unsigned tools;                 /* For* bits */
	const char *name;               /* "--target", "-o"; a heading for OptSection */
	const char *alias;              /* another spelling ("-h"), or NULL */
	int arg;                        /* Arg* */
	const char *meta;               /* the value in --help ("FILE"); NULL: the choices */
	const char *const *choices;     /* NULL-terminated; NULL: any value */
	const char *what;               /* with choices, the value's noun in errors ("target") */
	const char *help;               /* lines split by '\n'; NULL: not listed */
} OptSpec;

/* gnngen's presets: the graphs, in the order of their sizes table
 * (checked there), then the relational ones (no single graph) */
extern const char *const optpresets[8];
/* their node, edge and feature counts, in the same order */
typedef struct OptPresetSize {
	int64_t nodes, edges, features;
} OptPresetSize;
extern const OptPresetSize optpresetsizes[6];
/* --gpu's choices (codegen/cost.c's device table, in its order) */
extern const char *const optgpus[3];
extern const char *const opttimings[3];
/* gnnrun --optimizer: sgd, adam, adamw (GNN_OPTIM_* - 1) */
extern const char *const optoptimizers[4];
/* --cpu's choices, CpuPortable first (codegen.h's Cpu* order) */
extern const char *const optcpus[6];
/* --gpu-math's choices (codegen.h's GpuMath* order) */
extern const char *const optgpumaths[3];
/* --precision's choices, and the pass each names (NULL: none) */
extern const char *const optprecisions[4];
extern const char *const optprecisionpass[3];

typedef struct OptParser {
	unsigned tool;
	int argc, i;
	char **argv;
	bool operands;                  /* after "--" */
	const OptSpec *spec;            /* of the option optnext returned */
	int choice;                     /* its value's index in spec->choices; -1: none */
} OptParser;

/* Start parsing argv for tool (one For* bit), named prog in messages. */
void optstart(OptParser *p, const char *prog, unsigned tool, int argc, char **argv);
/*
 * The next option, with its value in *val (NULL when it has none), or
 * OptOperand with the operand in *val, or OptEnd.  A bad option is
 * reported and the process exits with status 1.
 */
Opt optnext(OptParser *p, const char **val);
/* The options of tool, by section, as --help lists them. */
void opthelp(FILE *f, unsigned tool);

/* -O's level: 0 for -O0, 1 for -O and -O1, 2 for -O2 and -O3. */
int optlevel(const char *val);
/*
 * An integer value in [min, max], else "OPT takes NOUN from MIN to MAX,
 * not 'VAL'" and exit 1; noun NULL is "an integer".
 */
int64_t optint(const char *opt, const char *val, int64_t min, int64_t max, const char *noun);

/* Messages as "PROG: error: ...", one line each, on stderr; a tool
 * that reports several errors before giving up counts them here. */
void opterror(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
int optnerrors(void);
_Noreturn void optfatal(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
void optwarn(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

#endif
