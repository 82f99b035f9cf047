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
#include "options.h"
#include "schedules.h"
#include "toolchain.h"

#ifndef GNNCC_VERIFY_DEFAULT
#define GNNCC_VERIFY_DEFAULT 0
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
	int cpu;                    /* --cpu: codegen.h's Cpu* */
	int gpumath;                /* --gpu-math: codegen.h's GpuMath* */
	unsigned vendor;            /* --vendor: Vendor* (ir.h) bits */
	int precision;              /* --precision: optprecisions' index */
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

static const char usage[] =
"usage: gnncc [options] FILE\n"
"\n"
"Compile the models of FILE, a .gnn source, or IR text with -x ir or a\n"
".ir suffix, into an object file for the GPU (CUDA) or the CPU; FILE '-'\n"
"is standard input.  A C program links the object with libgnnrt.a\n"
"(gnncc --print-link-flags) and includes the header written beside it.\n"
"\n";

static const char epilogue[] =
"\n"
"Environment: CC (default cc) compiles --target=cpu; NVCC (default nvcc on\n"
"PATH, else /usr/local/cuda/bin/nvcc) compiles --target=cuda; CXX (default\n"
"c++) compiles --target=cuda --emulate.\n"
"\n"
"Passes:\n";

static void
printusage(void)
{
	const Pass *p;

	fputs(usage, stdout);
	opthelp(stdout, ForCc);
	fputs(epilogue, stdout);
	for (p = passtab; p->name; p++)
		printf("  %-18s  %s\n", p->name, p->help);
}

static bool
hasprefix(const char *s, const char *p)
{
	return strncmp(s, p, strlen(p)) == 0;
}

/* "kernels,memory": the Report* bits */
static unsigned
reportof(const char *list)
{
	static const char *const name[] = {"kernels", "breaks", "syncs", "memory", "schedules", "cost"};
	enum { NReport = sizeof name / sizeof name[0] };
	const char *p = list, *q;
	unsigned what = 0;
	size_t n;
	int k;

	for (;;) {
		q = p + strcspn(p, ",");
		n = q - p;
		for (k = 0; k < NReport; k++)
			if (strlen(name[k]) == n && strncmp(p, name[k], n) == 0)
				break;
		if (k == NReport)
			optfatal("unknown report '%.*s' in '--report=%s'; expected kernels, breaks, syncs, memory, schedules or cost",
			         (int)n, p, list);
		what |= 1u << k;
		if (!*q)
			return what;
		p = q + 1;
	}
}

/* --tune-synthetic=NODES,EDGES */
static void
synthetic(Opts *o, const char *v)
{
	const char *comma = strchr(v, ',');
	char *nodes;

	if (!comma)
		optfatal("--tune-synthetic: expected NODES,EDGES, not '%s'", v);
	nodes = estrdup(v);
	nodes[comma - v] = '\0';
	o->so.synnodes = optint("--tune-synthetic", nodes, 0, (int64_t)1 << 32, "a node count");
	o->so.synedges = optint("--tune-synthetic", comma + 1, 0, (int64_t)1 << 34, "an edge count");
	free(nodes);
	if (o->so.synnodes < 1)
		optfatal("--tune-synthetic: a graph needs at least one node");
}

static void
parseargs(Opts *o, int argc, char **argv)
{
	OptParser p;
	const char *v;
	Opt id;

	o->po.olevel = 2;
	o->target = TargetCUDA;
	o->report.nodes = -1;
	o->so.nodes = -1;
	o->so.budget = 60;
	optstart(&p, "gnncc", ForCc, argc, argv);
	while ((id = optnext(&p, &v)) != OptEnd)
		switch (id) {
		case OptOperand:
			if (o->input)
				optfatal("more than one input file ('%s' and '%s')", o->input, v);
			o->input = v;
			break;
		case OptHelp:
			printusage();
			exit(0);
		case OptVersion:
			puts("gnncc " GNNCC_VERSION);
			exit(0);
		case OptOut: o->output = v; break;
		case OptInclude: strpush(&o->incdir, &o->nincdir, v); break;
		case OptLang: o->lang = p.choice == 0 ? LGnn : LIr; break;
		case OptLevel: o->po.olevel = optlevel(v); break;
		case OptPasses: o->po.pipeline = v; break;
		case OptVerifyEach: o->po.verifyeach = true; break;
		case OptSpecialize:
			if (checkspecialize(v) < 0)
				exit(1);
			o->po.specialize = v;
			break;
		case OptNoGraphBreaks: o->po.nographbreaks = true; break;
		case OptReport:
			o->report.what = v ? reportof(v) : ReportKernels | ReportBreaks | ReportSyncs | ReportMemory;
			break;
		case OptReportGraph: o->report.graph = v; break;
		case OptReportNodes: o->report.nodes = optint("--report-nodes", v, 0, INT64_MAX, NULL); break;
		case OptGpu: o->report.gpu = p.choice; break;
		case OptInputDensity: {
			char why[160];
			if (densitycheck(v, why, sizeof why) < 0)
				optfatal("--input-density=%s: %s", v, why);
			o->report.density = o->so.density = v;
			break;
		}
		case OptReportTiming: o->report.profiler = p.choice == 1; break;
		case OptDumpIr:
			if (v && !*v)
				optfatal("'--dump-ir=' needs 'all' or a pass name");
			o->dump = !v ? DumpFinal : strcmp(v, "all") == 0 ? DumpAll : DumpPass;
			o->po.dumpafter = v;
			break;
		case OptEmit: o->emit = EmitObj + p.choice; break;
		case OptTarget:
			o->target = p.choice == 0 ? TargetCUDA : TargetCPU;
			o->targetset = true;
			break;
		case OptEmulate: o->emu = emumode(v ? v : ""); break;
		case OptArch: o->arch = v; break;
		case OptMD:
		case OptMMD:
			o->md = true;
			o->mdself = id == OptMD;
			break;
		case OptMP: o->mp = true; break;
		case OptMF: o->mf = v; break;
		case OptMT: strpush(&o->mt, &o->nmt, v); break;
		case OptKeepTemps: o->keeptemps = true; break;
		case OptVerbose: o->verbose = true; break;
		case OptSchedule:
			o->so.force = erealloc(o->so.force, (o->so.nforce + 1) * sizeof *o->so.force);
			if (parseforce(v, &o->so.force[o->so.nforce++]) < 0)
				exit(1);
			break;
		case OptTune: o->so.tune = true; break;
		case OptTuneGraph: o->so.graph = v; break;
		case OptTuneNodes: o->so.nodes = optint("--tune-nodes", v, 0, (int64_t)1 << 40, NULL); break;
		case OptTuneSynthetic: synthetic(o, v); break;
		case OptTuneBudget: o->so.budget = (double)optint("--tune-budget", v, 0, 86400, NULL); break;
		case OptTuneRepeats: o->so.repeats = (int)optint("--tune-repeats", v, 1, 1000, NULL); break;
		case OptTuneCandidates: o->so.maxcand = (int)optint("--tune-candidates", v, 2, 256, NULL); break;
		case OptTuneCache: o->so.cache = v; break;
		case OptNoTuneCache: o->so.cache = ""; break;
		case OptOpenmp: o->openmp = true; break;
		case OptNoOpenmp: o->openmp = false; break;
		case OptCpu: o->cpu = p.choice; break;
		case OptGpuMath: o->gpumath = p.choice; break;
		case OptVendor: o->vendor = vendorbits(v); break;
		case OptPrecision: o->precision = p.choice; break;
		case OptPrintLinkFlags: o->print = PrintLinkFlags; break;
		case OptPrintCflags: o->print = PrintCflags; break;
		case OptSyntaxOnly: o->syntaxonly = true; break;
		case OptNoCaret: diag_setcaret(false); break;
		case OptCaret: diag_setcaret(true); break;
		case OptMaxErrors: diag_setmaxerrors((int)optint("-fmax-errors", v, 0, 1000000, NULL)); break;
		default:
			die("option %d has no case", (int)id);
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

	return astrfmt(NULL, "%.*s%s", (int)n, path, suffix);
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
			optfatal("unknown architecture '%s' in '--arch=%s'; expected sm_NN "
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
	char *flag;
	const char *n;
	int i;

	if (strcmp(o->archs[0], "native") == 0) {
		cmdadd(c, "-arch=native");
		return;
	}
	for (i = 0; i < o->narch; i++) {
		n = o->archs[i] + 3;
		if (i < o->narch - 1)
			flag = astrfmt(NULL, "arch=compute_%s,code=sm_%s", n, n);
		else
			flag = astrfmt(NULL, "arch=compute_%s,code=[sm_%s,compute_%s]", n, n, n);
		cmdadd(c, "-gencode");
		cmdadd(c, flag);
		free(flag);
	}
}

/* ------------------------------------------------------------ the options */

/* Reject what cannot be done before doing any of it. */
static void
checkopts(Opts *o)
{
	bool dumponly;

	if (!o->input)
		optfatal("no input file");
	if (o->lang == LNone) {
		size_t n = strlen(o->input);
		o->lang = n > 3 && strcmp(o->input + n - 3, ".ir") == 0 ? LIr : LGnn;
	}
	if (o->emit == EmitCuda && o->target != TargetCUDA)
		optfatal("--emit=cuda needs --target=cuda; use --emit=c for --target=cpu");
	if (o->emit == EmitC && o->target != TargetCPU)
		optfatal("--emit=c needs --target=cpu (the default target is cuda; its source is --emit=cuda)");
	parsearch(o);
	if (o->emu && o->target != TargetCUDA)
		optfatal("--emulate runs the cuda target's code on the CPU; it needs --target=cuda");
	if (o->emu && o->arch)
		optwarn("'--arch=%s' has no effect with --emulate", o->arch);
	if (o->arch && o->target == TargetCPU)
		optwarn("'--arch=%s' has no effect with --target=cpu", o->arch);
	if (o->openmp && o->target == TargetCUDA)
		optwarn("'-fopenmp' has no effect with --target=cuda");
	if (o->cpu != CpuPortable && o->target == TargetCUDA)
		optwarn("'--cpu=%s' has no effect with --target=cuda", optcpus[o->cpu]);
	if (o->gpumath != GpuMathFP32 && o->target == TargetCPU)
		optwarn("'--gpu-math=%s' has no effect with --target=cpu", optgpumaths[o->gpumath]);
	if (o->vendor && o->target == TargetCPU)
		optwarn("'--vendor=%s' has no effect with --target=cpu", vendorname(o->vendor));
	o->po.precision = optprecisionpass[o->precision];
	/* breaks and the report depend on where forward runs */
	o->po.hostforward = o->target == TargetCPU;
	o->report.target = o->target;
	if (o->report.graph && !(o->report.what & (ReportMemory | ReportCost)))
		optwarn("'--report-graph' has no effect without --report=memory or --report=cost");
	if ((o->report.what & ReportCost) && o->target != TargetCUDA)
		optfatal("'--report=cost' models the cuda target's kernels; add --target=cuda");
	if ((o->report.what & ReportMemory) && o->report.graph && hasprefix(o->report.graph, "preset:") &&
	    o->target != TargetCUDA)
		optfatal("'--report=memory' on --target=cpu sizes the arena of an edge_index .npy, not of '%s'",
		         o->report.graph);
	if (o->report.nodes >= 0 && !o->report.graph)
		optwarn("'--report-nodes' has no effect without --report-graph");

	/* --dump-ir alone, and -fsyntax-only, write nothing else */
	dumponly = (o->dump != DumpNone || o->report.what) && !o->output;
	if (o->syntaxonly)
		o->emit = EmitNone;
	else if (o->emit == EmitNone && !dumponly)
		o->emit = EmitObj;
	if (o->emit == EmitObj) {
		if (!o->output && strcmp(o->input, "-") == 0)
			optfatal("an object from standard input needs '-o FILE'");
		if (!o->output)
			o->output = withsuffix(basename_(o->input), ".o");
		if (strcmp(o->output, "-") == 0)
			optfatal("cannot write an object file to standard output; use --emit=%s for the source",
			      o->target == TargetCUDA ? "cuda" : "c");
	} else if (o->emit != EmitNone && !o->output)
		o->output = "-";

	if (o->emit != EmitNone && strcmp(o->input, "-") != 0 && samefile(o->input, o->output))
		optfatal("'%s' is both the input and the output", o->input);
	if (o->emit == EmitObj) {
		char *hdr = withsuffix(o->output, ".h");

		if (samefile(o->input, hdr))
			optfatal("'%s' is the input and would be the header beside '%s'", o->input, o->output);
		free(hdr);
	}
	if (o->emit == EmitNone && (o->md || o->keeptemps))
		optwarn("'%s' has no effect when nothing is written", o->md ? "-MD" : "--keep-temps");
	if (!o->md && (o->mf || o->nmt || o->mp))
		optwarn("'%s' has no effect without -MD", o->mf ? "-MF" : o->nmt ? "-MT" : "-MP");
	if (o->md && o->emit != EmitNone && strcmp(o->output, "-") == 0 && (!o->mf || !o->nmt))
		optfatal("-MD with output to standard output needs -MF FILE and -MT TARGET");
	if (o->keeptemps && o->emit != EmitObj && o->emit != EmitNone)
		optwarn("'--keep-temps' has no effect with --emit=%s", emitname[o->emit]);
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
		optfatal("cannot open '%s': %s", o->input, strerror(errno));
	ondep(deps, name);
	/* diagnostics quote diag's copy of the text */
	m = parseir(name, text, len);
	free(text);
	if (!m || diag_nerrors() > 0)
		exit(1);
	/* the parser types each instruction; this checks the rest (SSA) */
	if (!verifymod(m, NULL))
		optfatal("'%s' is not valid IR", name);
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
			optfatal("cannot read standard input: %s", strerror(errno));
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
		optfatal("cannot write '%s': %s", path, strerror(err));
	emit(out.f, m, co);
	if ((err = outcommit(&out, ifchanged)) != 0) {
		if (strcmp(path, "-") == 0)
			optfatal("cannot write to standard output: %s", strerror(err));
		optfatal("cannot write '%s': %s", path, strerror(err));
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
		optfatal("cannot write '%s': %s", path, strerror(err));
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
		optfatal("cannot write '%s': %s", path, strerror(err));
	free(path);
}

/* ------------------------------------------------------------ the compile */

static const char *
runtimeinclude(void)
{
	Layout l;

	if (!findlayout(&l))
		optfatal("cannot find the gnncc runtime (gnnrt.h, libgnnrt.a): %s", l.where);
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
		optfatal("$%s is blank", var);
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
		optfatal("nvcc '%s' (from $NVCC) not found", c->argv[0]);
	optfatal("nvcc not found: set $NVCC, put nvcc on PATH, or install the CUDA "
	      "toolkit in /usr/local/cuda (or compile with --target=cpu)");
}

static void
findcc(Cmd *c)
{
	if (findtool(c, "CC", "cc", NULL))
		return;
	if (getenv("CC") && *getenv("CC"))
		optfatal("C compiler '%s' (from $CC) not found", c->argv[0]);
	optfatal("C compiler 'cc' not found: set $CC or put cc on PATH");
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
	char *stem, *src, *hdr, *obj, *keep, *name, *why;
	Cmd c = {0};
	int st, err;

	hdr = withsuffix(o->output, ".h");
	if (strcmp(hdr, o->output) == 0)
		optfatal("the object '%s' would be overwritten by its header; name it .o", o->output);
	stem = withsuffix(basename_(o->output), "");
	keep = withsuffix(o->output, cuda ? ".gnncc.cu" : ".gnncc.c");

	/* the tool first: a missing nvcc needs no generated code to report */
	if (cuda && o->emu) {
		Layout l;

		if (!findlayout(&l))
			optfatal("cannot find the gnncc runtime (gnnrt.h, libgnnrt.a): %s", l.where);
		if (!emucommand(&c, o->emu, &l, &why))
			optfatal("--emulate: %s", why);
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
		cpuflags(&c, o->cpu, o->openmp);
	}
	if (!o->emu) {
		cmdadd(&c, "-I");
		cmdadd(&c, runtimeinclude());
	}
	tool = basename_(c.argv[0]);

	/* /dev/null and the like are written in place, and get no header;
	 * an output that cannot be made is named before any other work */
	inplace = access(o->output, F_OK) == 0 && !isregular(o->output);
	if (inplace)
		obj = (char *)o->output;
	else if (!(obj = tempbeside(o->output)))
		optfatal("cannot write '%s': %s", o->output, strerror(errno));

	name = withsuffix(stem, ext);
	src = tempname(name);
	free(name);
	writeout(src, emitsource, m, co, false);
	name = tempname(co->header);
	writeout(name, emitheader, m, co, false);
	free(name);
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
	if ((st = runcmd(&c, &why)) != 0) {
		if ((err = movefile(src, keep)) == 0)
			tempforget(src);
		if (st < 0)
			opterror("%s", why);
		else
			opterror("%s failed (exit status %d) on the generated source", tool, st);
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
			optfatal("cannot write '%s': %s", o->output, strerror(errno));
		tempforget(obj);
		free(obj);
	}
	if (o->keeptemps) {
		if ((err = copyfile(src, keep)) != 0)
			optfatal("cannot keep the generated source as '%s': %s", keep, strerror(err));
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
		optfatal("cannot find the gnncc runtime (gnnrt.h, libgnnrt.a): %s", l.where);
	if (o->print == PrintCflags) {
		/* the emulated device's cuda_runtime.h first, for a program
		 * compiled as C++ that calls the CUDA runtime itself */
		if (o->target == TargetCUDA && o->emu)
			printf("-I%s ", l.emuincludedir);
		printf("-I%s", l.includedir);
#ifdef GNNCC_SANITIZE_CFLAGS
		printf(" %s", GNNCC_SANITIZE_CFLAGS);
#endif
		printf("\n");
		return;
	}
	printf("-L%s -lgnnrt", l.libdir);
	if (o->target == TargetCUDA && o->emu) {
		/* the emulated device instead of the CUDA runtime (and its
		 * vendor libraries instead of cuBLAS's and cuSPARSE's) */
		if (o->vendor)
			printf(" -lgnnemu_vendor");
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
		printf(" -lgnnrt_cuda");
		/* CUDA 13 ships cuBLAS and cuSPARSE as shared libraries only:
		 * found at run time where they were at link time */
		if (o->vendor)
			printf("%s%s%s%s", cuda ? " -Wl,-rpath," : "", cuda ? cuda : "", o->vendor & VendorCublas ? " -lcublas" : "",
			       o->vendor & VendorCusparse ? " -lcusparse" : "");
		printf(" -lcudart_static -ldl -lpthread -lrt");
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
	if (o.report.density) {
		char why[160];
		if (densitynames(m, o.report.density, why, sizeof why) < 0) {
			fprintf(stderr, "gnncc: error: --input-density=%s: %s\n", o.report.density, why);
			freemod(m);
			return 1;
		}
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
	o.so.cpu = o.cpu;
	o.so.gpumath = o.gpumath;
	o.so.vendor = o.target == TargetCUDA ? o.vendor : 0;
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
		co.cpu = o.cpu;
		co.gpumath = o.gpumath;
		co.vendor = o.target == TargetCUDA ? o.vendor : 0;
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
		optfatal("cannot write to standard output: %s", strerror(errno));
	return diag_nerrors() > 0;
}
