/*
 * gnncc, the compiler driver: gcc-like options in, one input file through
 * the frontend (or the IR parser), the pass pipeline and the code
 * generator, an object file (or an intermediate artefact) out.
 *
 *	gnncc [options] FILE
 *
 * The options and the pipeline are checked before compiling, so a typo
 * costs no work.  User errors print "gnncc: error: ..." and exit 1;
 * diagnostics in the input go through diag.c and also end in exit 1.
 * Compiler bugs abort through die().
 *
 * An object is made in three steps: codegen writes the model's source
 * (NAME.cu or NAME.c) and header (NAME.h) into a private temporary
 * directory; nvcc or cc compiles the source into a temporary file beside
 * the output; then the header and the object are renamed into place.
 * Every output is written that way (FILE.tmpXXXXXX, then rename), so a
 * failed run never leaves a half-written or truncated FILE behind for
 * make to trust, and leaves existing outputs as they were.  When the
 * compiler fails on generated code, the source is kept beside the output
 * (NAME.gnncc.cu) for inspection.  toolchain.c holds the system side:
 * paths, temporaries, atomic files, processes.
 *
 * -MD writes a Make dependency file for whatever was written: the input,
 * every .gnn file it imports (never the embedded layer library, which is
 * not on disk), and the gnncc executable itself, so that upgrading the
 * compiler rebuilds its outputs.
 */
#define _POSIX_C_SOURCE 200809L

#include <errno.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "../codegen/codegen.h"
#include "../frontend/frontend.h"
#include "../frontend/layerlib.h"
#include "../passes/passes.h"
#include "schedules.h"
#include "toolchain.h"

#ifndef GNNCC_VERIFY_DEFAULT
#define GNNCC_VERIFY_DEFAULT 0
#endif
#ifndef GNNCC_VERSION
#define GNNCC_VERSION "0.1.0"
#endif

enum Lang { LNone, LGnn, LIr };
enum Dump { DumpNone, DumpFinal, DumpAll, DumpPass };
enum Emit { EmitNone, EmitObj, EmitCuda, EmitC, EmitHeader, EmitIr };
enum Print { PrintNone, PrintLinkFlags, PrintCflags };

static const char *const emitname[] = {"", "obj", "cuda", "c", "header", "ir"};

typedef struct Opts {
	const char *input;
	const char *output;         /* -o, else derived; "-": standard output */
	int lang;                   /* -x; LNone: by suffix */
	const char **incdir;
	int nincdir;
	int dump;
	int emit;                   /* EmitNone until checkopts decides */
	int target;                 /* TargetCUDA (default) or TargetCPU */
	bool targetset;
	int emu;                    /* --emulate: EmuOff, or the emulated device's mode */
	const char *arch;           /* --arch; NULL: sm_80,sm_90 */
	char **archs;               /* parsed, sorted: "sm_80", ...; or "native" */
	int narch;
	bool md, mdself;            /* -MD, and whether gnncc itself is listed */
	bool mp;
	const char *mf;
	const char **mt;
	int nmt;
	bool keeptemps, verbose, openmp, syntaxonly;
	int print;
	PassOpts po;
	ReportOpts report;          /* --report: what == 0 when not asked */
	SchedOpts so;               /* --schedule, --tune*, the graph schedules are for */
} Opts;

/* The files the frontend read, for -MD. */
typedef struct Deps {
	char **path;
	int n;
	bool fromstdin;
} Deps;

/* two strings: ISO C compilers need only support 4095 characters */
static const char usage2[] =
"Schedules (docs/tuning.md):\n"
"  --schedule=K:FIELDS kernel K (g0, k12, or all) gets this schedule, e.g.\n"
"                      g0:lanes=8,rows=32 (repeatable; all: where legal)\n"
"  --tune              time every candidate schedule on this machine and keep\n"
"                      the fastest (needs a graph); results go to the cache\n"
"  --tune-graph=FILE   the graph schedules are for (.npy edge_index): the cost\n"
"                      model's statistics, the cache's bucket, --tune's input\n"
"  --tune-nodes=N      that graph's node count (default: largest index + 1)\n"
"  --tune-synthetic=N,E  tune on a synthetic power-law graph instead\n"
"  --tune-budget=S     seconds for the whole tuning run (default 60)\n"
"  --tune-cache=FILE   the tuning cache (default $GNNCC_TUNE_CACHE, else\n"
"                      $XDG_CACHE_HOME/gnncc/tune.jsonl or ~/.cache/gnncc/tune.jsonl)\n"
"  --no-tune-cache     neither read nor write a cache\n"
"\n";

static const char usage[] =
"usage: gnncc [options] FILE\n"
"\n"
"Compile the models of FILE, a .gnn source, or IR text with -x ir or a\n"
".ir suffix, into an object file for the GPU (CUDA) or the CPU; FILE '-'\n"
"is standard input.  A C program links the object with libgnnrt.a\n"
"(gnncc --print-link-flags) and includes the header written beside it.\n"
"\n"
"Input:\n"
"  -x gnn|ir           the language of FILE (default: by suffix, else gnn)\n"
"  -I DIR, -IDIR       search DIR for imports (repeatable)\n"
"\n"
"Target:\n"
"  --target=cuda|cpu   CUDA kernels compiled by nvcc (default), or portable C\n"
"  --emulate[=MODE]    cuda: compile the CUDA C with the host's C++ compiler for\n"
"                      the emulated device (runs on the CPU, checked; see\n"
"                      docs/emulator.md); MODE: run (default), memcheck\n"
"                      (AddressSanitizer) or racecheck (ThreadSanitizer)\n"
"  --arch=LIST         GPU architectures, e.g. sm_90 or sm_80,sm_90 (default);\n"
"                      machine code for each, plus PTX for the newest; or native\n"
"  -fopenmp            cpu: compile with OpenMP (then link with -fopenmp too)\n"
"\n"
"Optimization:\n"
"  -O0                 run no passes\n"
"  -O1, -O2, -O3       run the default pipeline (-O2 is the default; docs/passes.md)\n"
"  --passes=P1,P2,...  run exactly these passes, in this order; --passes= runs none\n"
"  --verify-each       verify the IR after every pass\n"
"  --specialize=N=2708,E=10556\n"
"                      compile for these graph sizes only (any -O level); bind\n"
"                      rejects graphs of other sizes\n"
"  --no-graph-breaks   a graph break (a host sync inside forward) is an error\n"
"\n"
"Reports (to standard output, after the passes):\n"
"  --report[=LIST]     per model: kernels (what one forward launches), breaks,\n"
"                      syncs, memory (the arena as a formula in N, E, ...),\n"
"                      schedules (each kernel's, and why);\n"
"                      LIST is a comma list of these (default: all).  Alone,\n"
"                      without -o or --emit, nothing else is written\n"
"  --report-graph=FILE the arena's size for this edge_index (.npy, [2, E])\n"
"  --report-nodes=N    that graph's node count (default: largest index + 1)\n"
"\n"
"Output:\n"
"  -o FILE             the output (default for objects: FILE's base name with .o)\n"
"  --emit=KIND         obj: an object and its header beside it (default)\n"
"                      cuda, c: the generated source (cuda needs --target=cuda,\n"
"                      c needs --target=cpu); header: the model's header;\n"
"                      ir: the optimized IR.  Without -o these go to standard output\n"
"  --keep-temps        keep the generated source beside the object (NAME.gnncc.cu)\n"
"  -MD                 also write a Make dependency file (-o's name with .d)\n"
"  -MMD                the same, without the gnncc executable among the dependencies\n"
"  -MF FILE            the dependency file's name\n"
"  -MT TARGET          the rule's target (default: the output; repeatable)\n"
"  -MP                 add an empty rule for each dependency but the input\n"
"  --dump-ir           print the final IR to standard output (alone: write nothing else)\n"
"  --dump-ir=all       print the IR after the frontend and after every pass\n"
"  --dump-ir=PASS      print the IR after pass PASS\n"
"  -fsyntax-only       check FILE only: run no passes, write nothing\n"
"  -v                  show the commands that compile the generated source\n"
"\n"
"Building programs:\n"
"  --print-link-flags  print the linker flags a program needs for --target\n"
"  --print-cflags      print the compiler flags that find gnnrt.h\n"
"\n"
"Diagnostics:\n"
"  -fno-caret          do not show the source line and a caret under errors\n"
"  -fmax-errors=N      stop after N errors (default 20; 0: no limit)\n"
"\n"
"  --help              print this help;  --version: print the version\n"
"\n"
"Environment: CC (default cc) compiles --target=cpu; NVCC (default nvcc on\n"
"PATH, else /usr/local/cuda/bin/nvcc) compiles --target=cuda; CXX (default\n"
"c++) compiles --target=cuda --emulate.\n"
"\n"
"Passes:\n";

static _Noreturn void
fatal(const char *fmt, ...)
{
	va_list ap;

	fputs("gnncc: error: ", stderr);
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputc('\n', stderr);
	exit(1);
}

static void
warn(const char *fmt, ...)
{
	va_list ap;

	fputs("gnncc: warning: ", stderr);
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputc('\n', stderr);
}

static void
printusage(void)
{
	const Pass *p;

	fputs(usage, stdout);
	for (p = passtab; p->name; p++)
		printf("  %-18s  %s\n", p->name, p->help);
	fputs("\n", stdout);
	fputs(usage2, stdout);
}

/* The argument of an option that takes one, joined (-oFILE) or next. */
static const char *
optarg_(int argc, char **argv, int *i, const char *opt)
{
	const char *a = argv[*i] + strlen(opt);

	if (*a)
		return a;
	if (*i + 1 >= argc)
		fatal("missing argument to '%s'", opt);
	return argv[++*i];
}

static bool
hasprefix(const char *s, const char *p)
{
	return strncmp(s, p, strlen(p)) == 0;
}

static int
langof(const char *name)
{
	if (strcmp(name, "gnn") == 0)
		return LGnn;
	if (strcmp(name, "ir") == 0)
		return LIr;
	fatal("unknown language '%s' for -x; expected gnn or ir", name);
}

static int
emitof(const char *name)
{
	int k;

	for (k = EmitObj; k <= EmitIr; k++)
		if (strcmp(name, emitname[k]) == 0)
			return k;
	fatal("unknown --emit kind '%s'; expected obj, cuda, c, header or ir", name);
}

/* "kernels,memory": the Report* bits */
static unsigned
reportof(const char *list)
{
	static const char *const name[] = {"kernels", "breaks", "syncs", "memory", "schedules"};
	const char *p = list, *q;
	unsigned what = 0;
	size_t n;
	int k;

	for (;;) {
		q = p + strcspn(p, ",");
		n = q - p;
		for (k = 0; k < 5; k++)
			if (strlen(name[k]) == n && strncmp(p, name[k], n) == 0)
				break;
		if (k == 5)
			fatal("unknown report '%.*s' in '--report=%s'; expected kernels, breaks, syncs, memory or schedules",
			      (int)n, p, list);
		what |= 1u << k;
		if (!*q)
			return what;
		p = q + 1;
	}
}

/* a non-negative integer option value, at most max */
static int64_t
number(const char *v, const char *opt, int64_t max)
{
	char *end;
	long long n;

	errno = 0;
	n = strtoll(v, &end, 10);
	if (!*v || *end || errno || n < 0 || n > max)
		fatal("bad number '%s' for %s", v, opt);
	return n;
}

static void
push(const char ***v, int *n, const char *s)
{
	*v = erealloc(*v, (*n + 1) * sizeof **v);
	(*v)[(*n)++] = s;
}

static void
parseargs(Opts *o, int argc, char **argv)
{
	const char *a, *v;
	char *end;
	long n;
	int i;
	bool noopts = false;

	o->po.olevel = 2;
	o->target = TargetCUDA;
	o->report.nodes = -1;
	o->so.nodes = -1;
	for (i = 1; i < argc; i++) {
		a = argv[i];
		if (noopts || a[0] != '-' || strcmp(a, "-") == 0) {
			if (o->input)
				fatal("more than one input file ('%s' and '%s')", o->input, a);
			o->input = a;
		} else if (strcmp(a, "--") == 0)
			noopts = true;
		else if (strcmp(a, "--help") == 0 || strcmp(a, "-h") == 0) {
			printusage();
			exit(0);
		} else if (strcmp(a, "--version") == 0) {
			puts("gnncc " GNNCC_VERSION);
			exit(0);
		} else if (hasprefix(a, "-o"))
			o->output = optarg_(argc, argv, &i, "-o");
		else if (hasprefix(a, "-I"))
			push(&o->incdir, &o->nincdir, optarg_(argc, argv, &i, "-I"));
		else if (hasprefix(a, "-x"))
			o->lang = langof(optarg_(argc, argv, &i, "-x"));
		else if (strcmp(a, "-O0") == 0)
			o->po.olevel = 0;
		else if (strcmp(a, "-O") == 0 || strcmp(a, "-O1") == 0)
			o->po.olevel = 1;
		else if (strcmp(a, "-O2") == 0 || strcmp(a, "-O3") == 0)
			o->po.olevel = 2;
		else if (hasprefix(a, "--passes="))
			o->po.pipeline = a + strlen("--passes=");
		else if (strcmp(a, "--verify-each") == 0)
			o->po.verifyeach = true;
		else if (strcmp(a, "--specialize") == 0 || hasprefix(a, "--specialize=")) {
			v = a[strlen("--specialize")] == '=' ? a + strlen("--specialize=") :
			    optarg_(argc, argv, &i, "--specialize");
			if (checkspecialize(v) < 0)
				exit(1);
			o->po.specialize = v;
		} else if (strcmp(a, "--no-graph-breaks") == 0)
			o->po.nographbreaks = true;
		else if (strcmp(a, "--report") == 0)
			o->report.what = ReportKernels | ReportBreaks | ReportSyncs | ReportMemory;
		else if (hasprefix(a, "--report="))
			o->report.what = reportof(a + strlen("--report="));
		else if (hasprefix(a, "--report-graph="))
			o->report.graph = a + strlen("--report-graph=");
		else if (hasprefix(a, "--report-nodes=")) {
			v = a + strlen("--report-nodes=");
			errno = 0;
			o->report.nodes = strtoll(v, &end, 10);
			if (!*v || *end || errno || o->report.nodes < 0)
				fatal("bad number '%s' in '--report-nodes='", v);
		}
		else if (strcmp(a, "--dump-ir") == 0) {
			o->dump = DumpFinal;
			o->po.dumpafter = NULL;
		} else if (hasprefix(a, "--dump-ir=")) {
			v = a + strlen("--dump-ir=");
			if (!*v)
				fatal("'--dump-ir=' needs 'all' or a pass name");
			o->dump = strcmp(v, "all") == 0 ? DumpAll : DumpPass;
			o->po.dumpafter = v;
		} else if (hasprefix(a, "--emit="))
			o->emit = emitof(a + strlen("--emit="));
		else if (hasprefix(a, "--target=")) {
			v = a + strlen("--target=");
			if (strcmp(v, "cuda") == 0)
				o->target = TargetCUDA;
			else if (strcmp(v, "cpu") == 0)
				o->target = TargetCPU;
			else
				fatal("unknown target '%s' for --target; expected cuda or cpu", v);
			o->targetset = true;
		} else if (strcmp(a, "--emulate") == 0 || hasprefix(a, "--emulate=")) {
			v = a[strlen("--emulate")] == '=' ? a + strlen("--emulate=") : "";
			if ((o->emu = emumode(v)) < 0)
				fatal("unknown mode '%s' for --emulate; expected run, memcheck or racecheck", v);
		} else if (hasprefix(a, "--arch="))
			o->arch = a + strlen("--arch=");
		else if (strcmp(a, "-MD") == 0 || strcmp(a, "-MMD") == 0) {
			o->md = true;
			o->mdself = strcmp(a, "-MD") == 0;
		} else if (strcmp(a, "-MP") == 0)
			o->mp = true;
		else if (hasprefix(a, "-MF"))
			o->mf = optarg_(argc, argv, &i, "-MF");
		else if (hasprefix(a, "-MT"))
			push(&o->mt, &o->nmt, optarg_(argc, argv, &i, "-MT"));
		else if (strcmp(a, "--keep-temps") == 0)
			o->keeptemps = true;
		else if (strcmp(a, "-v") == 0)
			o->verbose = true;
		else if (hasprefix(a, "--schedule=")) {
			char err[256];
			o->so.force = realloc(o->so.force, (o->so.nforce + 1) * sizeof *o->so.force);
			if (!o->so.force)
				fatal("out of memory");
			if (parseforce(a + strlen("--schedule="), &o->so.force[o->so.nforce++], err, sizeof err) < 0)
				fatal("%s", err);
		} else if (strcmp(a, "--tune") == 0)
			o->so.tune = true;
		else if (hasprefix(a, "--tune-graph="))
			o->so.graph = a + strlen("--tune-graph=");
		else if (hasprefix(a, "--tune-nodes="))
			o->so.nodes = number(a + strlen("--tune-nodes="), "--tune-nodes", (int64_t)1 << 40);
		else if (hasprefix(a, "--tune-synthetic=")) {
			char *comma;
			v = a + strlen("--tune-synthetic=");
			if (!(comma = strchr(v, ',')))
				fatal("--tune-synthetic: expected NODES,EDGES, not '%s'", v);
			*comma = 0;
			o->so.synnodes = number(v, "--tune-synthetic", (int64_t)1 << 32);
			o->so.synedges = number(comma + 1, "--tune-synthetic", (int64_t)1 << 34);
			if (o->so.synnodes < 1)
				fatal("--tune-synthetic: a graph needs at least one node");
		} else if (hasprefix(a, "--tune-budget="))
			o->so.budget = (double)number(a + strlen("--tune-budget="), "--tune-budget", 86400);
		else if (hasprefix(a, "--tune-cache="))
			o->so.cache = a + strlen("--tune-cache=");
		else if (strcmp(a, "--no-tune-cache") == 0)
			o->so.cache = "";
		else if (strcmp(a, "-fopenmp") == 0)
			o->openmp = true;
		else if (strcmp(a, "-fno-openmp") == 0)
			o->openmp = false;
		else if (strcmp(a, "--print-link-flags") == 0)
			o->print = PrintLinkFlags;
		else if (strcmp(a, "--print-cflags") == 0)
			o->print = PrintCflags;
		else if (strcmp(a, "-fsyntax-only") == 0)
			o->syntaxonly = true;
		else if (strcmp(a, "-fno-caret") == 0)
			diag_setcaret(false);
		else if (strcmp(a, "-fcaret") == 0)
			diag_setcaret(true);
		else if (hasprefix(a, "-fmax-errors=")) {
			v = a + strlen("-fmax-errors=");
			errno = 0;
			n = strtol(v, &end, 10);
			if (!*v || *end || errno || n < 0 || n > 1000000)
				fatal("bad number '%s' in '-fmax-errors='", v);
			diag_setmaxerrors((int)n);
		} else {
			fprintf(stderr, "gnncc: error: unknown option '%s'\n", a);
			fprintf(stderr, "gnncc: note: 'gnncc --help' lists the options\n");
			exit(1);
		}
	}
}

/* ------------------------------------------------------------------ names */

static const char *
basename_(const char *path)
{
	const char *s = strrchr(path, '/');

	return s ? s + 1 : path;
}

/* path with the suffix of its last component replaced: gcn.o -> gcn.h;
 * a name without one gets the suffix appended. */
static char *
withsuffix(const char *path, const char *suffix)
{
	const char *base = basename_(path), *dot = strrchr(base, '.');
	size_t n = dot && dot > base ? (size_t)(dot - path) : strlen(path);
	char *s;

	s = emalloc(n + strlen(suffix) + 1);
	memcpy(s, path, n);
	strcpy(s + n, suffix);
	return s;
}

/* ----------------------------------------------------------- architecture */

/* "sm_NN" or "sm_NNa" (a: arch-specific, f: family): 2 or 3 digits. */
static bool
validarch(const char *s)
{
	size_t nd;

	if (!hasprefix(s, "sm_"))
		return false;
	s += 3;
	nd = strspn(s, "0123456789");
	if (nd < 2 || nd > 3 || s[0] == '0')
		return false;
	s += nd;
	return !*s || ((*s == 'a' || *s == 'f') && !s[1]);
}

static int
archcmp(const void *a, const void *b)
{
	const char *x = *(char *const *)a + 3, *y = *(char *const *)b + 3;
	long nx = strtol(x, NULL, 10), ny = strtol(y, NULL, 10);

	if (nx != ny)
		return nx < ny ? -1 : 1;
	return strcmp(x, y);
}

static void
parsearch(Opts *o)
{
	const char *list = o->arch ? o->arch : "sm_80,sm_90", *p, *q;
	char *a;
	int i;

	if (strcmp(list, "native") == 0) {
		o->archs = emalloc(sizeof *o->archs);
		o->archs[o->narch++] = estrdup("native");
		return;
	}
	for (p = list;; p = q + 1) {
		q = p + strcspn(p, ",");
		a = emalloc(q - p + 1);
		memcpy(a, p, q - p);
		a[q - p] = '\0';
		if (!validarch(a))
			fatal("unknown architecture '%s' in '--arch=%s'; expected sm_NN "
			      "(sm_80, sm_90, sm_90a, ...), a comma-separated list of them, or native",
			      a, list);
		for (i = 0; i < o->narch && strcmp(o->archs[i], a) != 0; i++)
			;
		if (i == o->narch) {
			o->archs = erealloc(o->archs, (o->narch + 1) * sizeof *o->archs);
			o->archs[o->narch++] = a;
		} else
			free(a);
		if (!*q)
			break;
	}
	qsort(o->archs, o->narch, sizeof *o->archs, archcmp);
}

/*
 * nvcc's flags for the architectures: machine code (SASS) for each, and
 * PTX for the newest, which the driver can JIT for GPUs newer than all:
 *	-gencode arch=compute_80,code=sm_80
 *	-gencode arch=compute_90,code=[sm_90,compute_90]
 */
static void
addgencode(Cmd *c, const Opts *o)
{
	char buf[64];
	const char *n;
	int i;

	if (strcmp(o->archs[0], "native") == 0) {
		cmdadd(c, "-arch=native");
		return;
	}
	for (i = 0; i < o->narch; i++) {
		n = o->archs[i] + 3;
		if (i < o->narch - 1)
			snprintf(buf, sizeof buf, "arch=compute_%s,code=sm_%s", n, n);
		else
			snprintf(buf, sizeof buf, "arch=compute_%s,code=[sm_%s,compute_%s]", n, n, n);
		cmdadd(c, "-gencode");
		cmdadd(c, buf);
	}
}

/* ------------------------------------------------------------ the options */

/* Reject what cannot be done before doing any of it. */
static void
checkopts(Opts *o)
{
	bool dumponly;

	if (!o->input)
		fatal("no input file");
	if (o->lang == LNone) {
		size_t n = strlen(o->input);
		o->lang = n > 3 && strcmp(o->input + n - 3, ".ir") == 0 ? LIr : LGnn;
	}
	if (o->emit == EmitCuda && o->target != TargetCUDA)
		fatal("--emit=cuda needs --target=cuda; use --emit=c for --target=cpu");
	if (o->emit == EmitC && o->target != TargetCPU)
		fatal("--emit=c needs --target=cpu (the default target is cuda; its source is --emit=cuda)");
	parsearch(o);
	if (o->emu && o->target != TargetCUDA)
		fatal("--emulate runs the cuda target's code on the CPU; it needs --target=cuda");
	if (o->emu && o->arch)
		warn("'--arch=%s' has no effect with --emulate", o->arch);
	if (o->arch && o->target == TargetCPU)
		warn("'--arch=%s' has no effect with --target=cpu", o->arch);
	if (o->openmp && o->target == TargetCUDA)
		warn("'-fopenmp' has no effect with --target=cuda");
	/* breaks and the report depend on where forward runs */
	o->po.hostforward = o->target == TargetCPU;
	o->report.target = o->target;
	if (o->report.graph && !(o->report.what & ReportMemory))
		warn("'--report-graph' has no effect without --report=memory");
	if (o->report.nodes >= 0 && !o->report.graph)
		warn("'--report-nodes' has no effect without --report-graph");

	/* --dump-ir alone, and -fsyntax-only, write nothing else */
	dumponly = (o->dump != DumpNone || o->report.what) && !o->output;
	if (o->syntaxonly)
		o->emit = EmitNone;
	else if (o->emit == EmitNone && !dumponly)
		o->emit = EmitObj;
	if (o->emit == EmitObj) {
		if (!o->output && strcmp(o->input, "-") == 0)
			fatal("an object from standard input needs '-o FILE'");
		if (!o->output)
			o->output = withsuffix(basename_(o->input), ".o");
		if (strcmp(o->output, "-") == 0)
			fatal("cannot write an object file to standard output; use --emit=%s for the source",
			      o->target == TargetCUDA ? "cuda" : "c");
	} else if (o->emit != EmitNone && !o->output)
		o->output = "-";

	if (o->emit != EmitNone && strcmp(o->input, "-") != 0 && samefile(o->input, o->output))
		fatal("'%s' is both the input and the output", o->input);
	if (o->emit == EmitObj) {
		char *hdr = withsuffix(o->output, ".h");

		if (samefile(o->input, hdr))
			fatal("'%s' is the input and would be the header beside '%s'", o->input, o->output);
		free(hdr);
	}
	if (o->emit == EmitNone && (o->md || o->keeptemps))
		warn("'%s' has no effect when nothing is written", o->md ? "-MD" : "--keep-temps");
	if (!o->md && (o->mf || o->nmt || o->mp))
		warn("'%s' has no effect without -MD", o->mf ? "-MF" : o->nmt ? "-MT" : "-MP");
	if (o->md && o->emit != EmitNone && strcmp(o->output, "-") == 0 && (!o->mf || !o->nmt))
		fatal("-MD with output to standard output needs -MF FILE and -MT TARGET");
	if (o->keeptemps && o->emit != EmitObj && o->emit != EmitNone)
		warn("'--keep-temps' has no effect with --emit=%s", emitname[o->emit]);
	if (checkpassopts(&o->po) < 0)
		exit(1);
}

/* ---------------------------------------------------------------- loading */

static void
ondep(void *ud, const char *path)
{
	Deps *d = ud;
	const LayerSource *ls;
	int i;

	/* the embedded library: its names ("layers/gcn.gnn") are not files */
	for (ls = layerlib; ls->name; ls++)
		if (path == ls->name)
			return;
	if (d->fromstdin && strcmp(path, "<stdin>") == 0)
		return;
	for (i = 0; i < d->n; i++)
		if (strcmp(d->path[i], path) == 0)
			return;
	d->path = erealloc(d->path, (d->n + 1) * sizeof *d->path);
	d->path[d->n++] = estrdup(path);
}

static Mod *
loadir(const Opts *o, const char *name, Deps *deps)
{
	char *text;
	size_t len;
	Mod *m;

	if (!(text = readfile(o->input, &len)))
		fatal("cannot open '%s': %s", o->input, strerror(errno));
	ondep(deps, name);
	/* diagnostics quote diag's copy of the text */
	m = parseir(name, text, len);
	free(text);
	if (!m || diag_nerrors() > 0)
		exit(1);
	/* the parser types each instruction; this checks the rest (SSA) */
	if (!verifymod(m, NULL))
		fatal("'%s' is not valid IR", name);
	return m;
}

static Mod *
loadgnn(const Opts *o, const char *name, Deps *deps)
{
	FrontOpts fo = {.incdir = o->incdir, .nincdir = o->nincdir, .ondep = ondep, .ud = deps};
	char *text;
	size_t len;
	Mod *m;

	if (strcmp(o->input, "-") == 0) {
		if (!(text = readfile("-", &len)))
			fatal("cannot read standard input: %s", strerror(errno));
		m = compiletext(name, text, len, &fo);
		free(text);
	} else
		m = compilefile(o->input, &fo);
	if (!m || diag_nerrors() > 0)
		exit(1);
	/* the frontend's output is ours: invalid IR from it is a bug */
	if ((o->po.verifyeach || GNNCC_VERIFY_DEFAULT) && !verifymod(m, "frontend")) {
		fprintf(stderr, "gnncc: IR after the frontend:\n");
		printmod(stderr, m);
		die("the frontend produced invalid IR");
	}
	return m;
}

/* ---------------------------------------------------------------- outputs */

typedef void Emitter(FILE *f, Mod *m, const CodegenOpts *co);

static void
emitir(FILE *f, Mod *m, const CodegenOpts *co)
{
	(void)co;
	printmod(f, m);
}

/* Write one artefact to path ("-": standard output), atomically. */
static void
writeout(const char *path, Emitter *emit, Mod *m, const CodegenOpts *co, bool ifchanged)
{
	OutFile out;
	int err;

	if ((err = outopen(&out, path)) != 0)
		fatal("cannot write '%s': %s", path, strerror(err));
	emit(out.f, m, co);
	if ((err = outcommit(&out, ifchanged)) != 0) {
		if (strcmp(path, "-") == 0)
			fatal("cannot write to standard output: %s", strerror(err));
		fatal("cannot write '%s': %s", path, strerror(err));
	}
}

static void
escapedep(FILE *f, const char *s)
{
	for (; *s; s++) {
		if (*s == ' ' || *s == '\t' || *s == '#' || *s == '\\')
			fputc('\\', f);
		else if (*s == '$')
			fputc('$', f);
		fputc(*s, f);
	}
}

/*
 * The Make rule, as gcc -MD writes it:
 *	gcn.o: gcn.gnn lib/pool.gnn /usr/local/bin/gnncc
 * one dependency a line; -MP adds "dep:" for each but the input.
 */
static void
writedeps(const Opts *o, Deps *d)
{
	char *path = o->mf ? estrdup(o->mf) : withsuffix(o->output, ".d");
	const char *exe;
	OutFile out;
	int err, i;

	if (o->mdself && (exe = selfexe()))
		ondep(d, exe);
	if ((err = outopen(&out, path)) != 0)
		fatal("cannot write '%s': %s", path, strerror(err));
	if (o->nmt)
		for (i = 0; i < o->nmt; i++)
			fprintf(out.f, "%s%s", i ? " " : "", o->mt[i]);
	else
		escapedep(out.f, o->output);
	fputc(':', out.f);
	for (i = 0; i < d->n; i++) {
		fputs(i ? " \\\n " : " ", out.f);
		escapedep(out.f, d->path[i]);
	}
	fputc('\n', out.f);
	for (i = 1; o->mp && i < d->n; i++) {
		fputc('\n', out.f);
		escapedep(out.f, d->path[i]);
		fputs(":\n", out.f);
	}
	if ((err = outcommit(&out, false)) != 0)
		fatal("cannot write '%s': %s", path, strerror(err));
	free(path);
}

/* ------------------------------------------------------------ the compile */

static const char *
runtimeinclude(void)
{
	Layout l;

	if (!findlayout(&l))
		fatal("cannot find the gnncc runtime (gnnrt.h, libgnnrt.a): %s", l.where);
	return l.includedir;
}

/*
 * c's program from an environment variable (which may hold arguments
 * too), else dflt on PATH, else fallback; false when it is not found.
 */
static bool
findtool(Cmd *c, const char *var, const char *dflt, const char *fallback)
{
	const char *env = getenv(var);
	char *path;

	cmdwords(c, env && *env ? env : dflt);
	if (c->argc == 0)
		fatal("$%s is blank", var);
	path = findprogram(c->argv[0]);
	if (!path && !(env && *env) && fallback && access(fallback, X_OK) == 0)
		path = estrdup(fallback);
	if (!path)
		return false;
	free(c->argv[0]);
	c->argv[0] = path;
	return true;
}

static void
findnvcc(Cmd *c)
{
	if (findtool(c, "NVCC", "nvcc", "/usr/local/cuda/bin/nvcc"))
		return;
	if (getenv("NVCC") && *getenv("NVCC"))
		fatal("nvcc '%s' (from $NVCC) not found", c->argv[0]);
	fatal("nvcc not found: set $NVCC, put nvcc on PATH, or install the CUDA "
	      "toolkit in /usr/local/cuda (or compile with --target=cpu)");
}

static void
findcc(Cmd *c)
{
	if (findtool(c, "CC", "cc", NULL))
		return;
	if (getenv("CC") && *getenv("CC"))
		fatal("C compiler '%s' (from $CC) not found", c->argv[0]);
	fatal("C compiler 'cc' not found: set $CC or put cc on PATH");
}

/*
 * The object: source and header into the temporary directory, the
 * compiler's output into OUT.tmpXXXXXX beside the output, then the
 * header (only if changed, so that programs including it are not
 * rebuilt for nothing) and the object into place.
 */
static void
compileobj(const Opts *o, Mod *m, CodegenOpts *co)
{
	bool cuda = o->target == TargetCUDA, inplace;
	const char *ext = cuda ? ".cu" : ".c", *tool;
	char *stem, *src, *hdr, *obj, *keep, *name, why[256];
	Cmd c = {0};
	int st, err;

	hdr = withsuffix(o->output, ".h");
	if (strcmp(hdr, o->output) == 0)
		fatal("the object '%s' would be overwritten by its header; name it .o", o->output);
	stem = withsuffix(basename_(o->output), "");
	keep = withsuffix(o->output, cuda ? ".gnncc.cu" : ".gnncc.c");

	/* the tool first: a missing nvcc needs no generated code to report */
	if (cuda && o->emu) {
		Layout l;

		if (!findlayout(&l))
			fatal("cannot find the gnncc runtime (gnnrt.h, libgnnrt.a): %s", l.where);
		if (!emucommand(&c, o->emu, &l, why, sizeof why))
			fatal("--emulate: %s", why);
	} else if (cuda) {
		findnvcc(&c);
		cmdadd(&c, "-O2");
		/* no C++ runtime in the object: a C program links it with cc
		 * and needs neither libstdc++ nor exceptions */
		cmdadd(&c, "-Xcompiler");
		cmdadd(&c, "-fPIC,-fno-exceptions,-fno-threadsafe-statics");
		addgencode(&c, o);
	} else {
		findcc(&c);
		cmdadd(&c, "-std=c11");
		cmdadd(&c, "-O2");
		cmdadd(&c, "-fPIC");
		if (o->openmp)
			cmdadd(&c, "-fopenmp");
	}
	if (!o->emu) {
		cmdadd(&c, "-I");
		cmdadd(&c, runtimeinclude());
	}
	tool = basename_(c.argv[0]);

	name = withsuffix(stem, ext);
	src = tempname(name);
	free(name);
	writeout(src, emitsource, m, co, false);
	name = tempname(co->header);
	writeout(name, emitheader, m, co, false);
	free(name);

	/* /dev/null and the like are written in place, and get no header */
	inplace = access(o->output, F_OK) == 0 && !isregular(o->output);
	if (inplace)
		obj = (char *)o->output;
	else if (!(obj = tempbeside(o->output)))
		fatal("cannot write '%s': %s", o->output, strerror(errno));
	cmdadd(&c, "-c");
	cmdadd(&c, src);
	cmdadd(&c, "-o");
	cmdadd(&c, obj);
#ifdef GNNCC_SANITIZE_CFLAGS
	/* a sanitized gnncc makes sanitized cpu objects (last, after -o) */
	if (!cuda)
		cmdwords(&c, GNNCC_SANITIZE_CFLAGS);
#endif
	if (o->verbose)
		cmdprint(stderr, &c);
	if ((st = runcmd(&c, why, sizeof why)) != 0) {
		if ((err = movefile(src, keep)) == 0)
			tempforget(src);
		if (st < 0)
			fprintf(stderr, "gnncc: error: %s\n", why);
		else
			fprintf(stderr, "gnncc: error: %s failed (exit status %d) on the generated source\n",
			        tool, st);
		if (err == 0)
			fprintf(stderr, "gnncc: note: the generated source is kept as '%s'\n", keep);
		else
			fprintf(stderr, "gnncc: note: cannot keep the generated source as '%s': %s\n",
			        keep, strerror(err));
		exit(1);
	}
	cmdfree(&c);

	if (!inplace) {
		writeout(hdr, emitheader, m, co, true);
		if (rename(obj, o->output) != 0)
			fatal("cannot write '%s': %s", o->output, strerror(errno));
		tempforget(obj);
		free(obj);
	}
	if (o->keeptemps) {
		if ((err = copyfile(src, keep)) != 0)
			fatal("cannot keep the generated source as '%s': %s", keep, strerror(err));
		fprintf(stderr, "gnncc: note: the generated source is kept as '%s'\n", keep);
	}
	free(src);
	free(keep);
	free(stem);
	free(hdr);
}

/* The flags a C program needs to use compiled models: -I, or the link
 * line for the target. */
static void
printflags(const Opts *o)
{
	Layout l;
	Cmd c = {0};
	char *cuda = NULL;

	if (!findlayout(&l))
		fatal("cannot find the gnncc runtime (gnnrt.h, libgnnrt.a): %s", l.where);
	if (o->print == PrintCflags) {
		printf("-I%s", l.includedir);
#ifdef GNNCC_SANITIZE_CFLAGS
		printf(" %s", GNNCC_SANITIZE_CFLAGS);
#endif
		printf("\n");
		return;
	}
	printf("-L%s -lgnnrt", l.libdir);
	if (o->target == TargetCUDA && o->emu) {
		/* the emulated device instead of the CUDA runtime */
		printf(" -lgnnemu");
		if (*emulinkflags(o->emu))
			printf(" %s", emulinkflags(o->emu));
	} else if (o->target == TargetCUDA) {
		/* without nvcc, the system's directories are all there is */
		if (findtool(&c, "NVCC", "nvcc", "/usr/local/cuda/bin/nvcc") &&
		    (cuda = cudalibdir(c.argv[0])))
			printf(" -L%s", cuda);
		cmdfree(&c);
		/* the runtime's CUDA device layer, then CUDA's runtime;
		 * nvcc's host code needs no C++ runtime (static guards off) */
		printf(" -lgnnrt_cuda -lcudart_static -ldl -lpthread -lrt");
		free(cuda);
	} else if (o->openmp)
		printf(" -fopenmp");
#ifdef GNNCC_RUNTIME_LINK_FLAGS
	printf(" %s", GNNCC_RUNTIME_LINK_FLAGS);
#endif
	printf(" -lm\n");
}

int
main(int argc, char **argv)
{
	/* static: what the options and dependencies hold lives until exit */
	static Opts o;
	static Deps deps;
	CodegenOpts co = {0};
	Choices choices;
	const char *name, *hname;
	char *header = NULL;
	Mod *m;

	parseargs(&o, argc, argv);
	if (o.print) {
		printflags(&o);
		return fflush(stdout) != 0 || ferror(stdout);
	}
	checkopts(&o);
	name = strcmp(o.input, "-") == 0 ? "<stdin>" : o.input;
	deps.fromstdin = strcmp(o.input, "-") == 0;
	m = o.lang == LIr ? loadir(&o, name, &deps) : loadgnn(&o, name, &deps);
	if (o.syntaxonly) {
		freemod(m);
		return 0;
	}
	o.po.dumpto = stdout;
	if (o.dump == DumpAll) {
		printf("# after frontend\n");
		printmod(stdout, m);
	}
	/* a user error in a pass (--specialize, --no-graph-breaks) or the
	 * report's graph: the module goes, so that leak checkers see none */
	if (runpasses(m, &o.po) < 0) {
		freemod(m);
		return 1;
	}
	/* schedules: forced, cached, tuned, or the cost model's */
	o.so.who = "gnncc";
	o.so.target = o.target;
	o.so.emu = o.emu;
	o.so.openmp = o.openmp;
	o.so.olevel = o.po.olevel;
	o.so.arch = o.arch;
	o.so.source = name;
	/* --passes= runs exactly the passes named: no schedules then */
	if (o.po.pipeline && !o.so.nforce && !o.so.tune)
		o.so.olevel = 0;
	if (pickschedules(m, &o.so, &choices) < 0) {
		freemod(m);
		return 1;
	}
	if (o.dump == DumpFinal)
		printmod(stdout, m);
	if ((o.report.what & ~(unsigned)ReportSchedules) && report(stdout, m, &o.report) < 0) {
		freemod(m);
		return 1;
	}
	if (o.report.what & ReportSchedules)
		reportschedules(stdout, &choices);
	freechoices(&choices);

	if (o.emit != EmitNone && o.emit != EmitIr) {
		/* the header's name as the source includes it: beside the output */
		hname = strcmp(o.output, "-") != 0 ? o.output : deps.fromstdin ? "model" : o.input;
		co.target = o.target;
		co.source = name;
		header = withsuffix(hname, ".h");
		co.header = basename_(header);
		if (codegencheck(m, &co) > 0)
			return 1;
	}
	switch (o.emit) {
	case EmitIr:
		writeout(o.output, emitir, m, &co, false);
		break;
	case EmitCuda:
	case EmitC:
		writeout(o.output, emitsource, m, &co, false);
		break;
	case EmitHeader:
		writeout(o.output, emitheader, m, &co, false);
		break;
	case EmitObj:
		compileobj(&o, m, &co);
		break;
	}
	if (o.md && o.emit != EmitNone)
		writedeps(&o, &deps);
	freemod(m);
	free(header);
	if (fflush(stdout) != 0 || ferror(stdout))
		fatal("cannot write to standard output: %s", strerror(errno));
	return diag_nerrors() > 0;
}
