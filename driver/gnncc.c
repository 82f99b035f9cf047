/*
 * gnncc, the compiler driver: gcc-like options in, one input file through
 * the frontend (or the IR parser) and the pass pipeline, IR text out.
 *
 *	gnncc [options] FILE
 *
 * The options and the pipeline are checked before compiling, so a typo
 * costs no work; the input is compiled before "code generation is not
 * available" is reported, so that the model's own errors come first.  User errors print
 * "gnncc: error: ..." and exit 1; diagnostics in the input go through
 * diag.c and also end in exit 1.  Compiler bugs abort through die().
 *
 * Code generation does not exist yet, so the only artefact is IR text:
 * --dump-ir prints it, --emit=ir writes it, atomically when written to a
 * file (FILE.tmpXXXXXX, then rename), so a failed run never leaves a
 * half-written or truncated FILE behind for make to trust.
 */
#define _POSIX_C_SOURCE 200809L

#include <errno.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "../frontend/frontend.h"
#include "../passes/passes.h"

#ifndef GNNCC_VERIFY_DEFAULT
#define GNNCC_VERIFY_DEFAULT 0
#endif

#define VERSION "0.1.0"

enum Lang { LNone, LGnn, LIr };
enum Dump { DumpNone, DumpFinal, DumpAll, DumpPass };

typedef struct Opts {
	const char *input;
	const char *output;         /* -o; NULL: none */
	int lang;                   /* -x; LNone: by suffix */
	const char **incdir;
	int nincdir;
	int dump;
	const char *emit;           /* --emit=KIND; NULL: none */
	bool syntaxonly;
	PassOpts po;
} Opts;

static const char usage[] =
"usage: gnncc [options] FILE\n"
"\n"
"Compile the models of FILE, a .gnn source, or IR text with -x ir or a\n"
".ir suffix; FILE '-' is standard input.  Code generation is not\n"
"available yet: --dump-ir and --emit=ir show the optimized IR.\n"
"\n"
"Input:\n"
"  -x gnn|ir           the language of FILE (default: by suffix, else gnn)\n"
"  -I DIR, -IDIR       search DIR for imports (repeatable)\n"
"\n"
"Optimization:\n"
"  -O0                 run no passes\n"
"  -O1, -O2, -O3       run the default pipeline: canonicalize,cse,dce (-O2 is the default)\n"
"  --passes=P1,P2,...  run exactly these passes, in this order; --passes= runs none\n"
"  --verify-each       verify the IR after every pass\n"
"\n"
"Output:\n"
"  --dump-ir           print the final IR to standard output\n"
"  --dump-ir=all       print the IR after the frontend and after every pass\n"
"  --dump-ir=PASS      print the IR after pass PASS\n"
"  --emit=ir           write the final IR to the -o file, or standard output\n"
"  -o FILE             the output file\n"
"  -fsyntax-only       check FILE only: run no passes, write nothing\n"
"\n"
"Diagnostics:\n"
"  -fno-caret          do not show the source line and a caret under errors\n"
"  -fmax-errors=N      stop after N errors (default 20; 0: no limit)\n"
"\n"
"  --help              print this help;  --version: print the version\n"
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
printusage(void)
{
	const Pass *p;

	fputs(usage, stdout);
	for (p = passtab; p->name; p++)
		printf("  %-18s  %s\n", p->name, p->help);
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

static void
parseargs(Opts *o, int argc, char **argv)
{
	const char *a, *v;
	char *end;
	long n;
	int i;
	bool noopts = false;

	o->po.olevel = 2;
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
			puts("gnncc " VERSION);
			exit(0);
		} else if (hasprefix(a, "-o"))
			o->output = optarg_(argc, argv, &i, "-o");
		else if (hasprefix(a, "-I")) {
			o->incdir = erealloc(o->incdir, (o->nincdir + 1) * sizeof *o->incdir);
			o->incdir[o->nincdir++] = optarg_(argc, argv, &i, "-I");
		} else if (hasprefix(a, "-x"))
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
			o->emit = a + strlen("--emit=");
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

/* Reject what cannot be done before doing any of it. */
static void
checkopts(Opts *o)
{
	if (!o->input)
		fatal("no input file");
	if (o->emit && strcmp(o->emit, "ir") != 0) {
		if (strcmp(o->emit, "cuda") == 0 || strcmp(o->emit, "c") == 0 || strcmp(o->emit, "header") == 0)
			fatal("--emit=%s: code generation is not available yet; use --dump-ir or --emit=ir", o->emit);
		fatal("unknown --emit kind '%s'; expected cuda, c, header or ir", o->emit);
	}
	/* --dump-ir -o x.o: the dump is made, the object cannot be */
	if (o->output && !o->emit && o->dump != DumpNone)
		fprintf(stderr, "gnncc: warning: code generation is not available yet; '-o %s' ignored\n",
		        o->output);
	if (o->lang == LNone) {
		size_t n = strlen(o->input);
		o->lang = n > 3 && strcmp(o->input + n - 3, ".ir") == 0 ? LIr : LGnn;
	}
	if (checkpassopts(&o->po) < 0)
		exit(1);
}


static Mod *
loadir(const Opts *o, const char *name)
{
	char *text;
	size_t len;
	Mod *m;

	if (!(text = readfile(o->input, &len)))
		fatal("cannot open '%s': %s", o->input, strerror(errno));
	/* text is never freed: diagnostics may quote it until exit */
	m = parseir(name, text, len);
	if (!m || diag_nerrors() > 0)
		exit(1);
	/* the parser types each instruction; this checks the rest (SSA) */
	if (!verifymod(m, NULL))
		fatal("'%s' is not valid IR", name);
	return m;
}

static Mod *
loadgnn(const Opts *o, const char *name)
{
	FrontOpts fo = {.incdir = o->incdir, .nincdir = o->nincdir};
	char *text;
	size_t len;
	Mod *m;

	if (strcmp(o->input, "-") == 0) {
		if (!(text = readfile("-", &len)))
			fatal("cannot read standard input: %s", strerror(errno));
		m = compiletext(name, text, len, &fo);
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

/*
 * Write the IR to path atomically: into a temporary file beside it, then
 * rename over it, so readers see the old file or the new, never a part.
 * Something other than a regular file (/dev/null, a pipe) is written in
 * place: renaming over it would replace the device node.
 */
static void
writeir(const char *path, Mod *m)
{
	struct stat st;
	char *tmp;
	FILE *f;
	mode_t mask;
	int fd, err;

	if (strcmp(path, "-") == 0) {
		printmod(stdout, m);
		return;
	}
	if (stat(path, &st) == 0 && !S_ISREG(st.st_mode)) {
		if (S_ISDIR(st.st_mode))
			fatal("cannot write '%s': %s", path, strerror(EISDIR));
		if (!(f = fopen(path, "w")))
			fatal("cannot write '%s': %s", path, strerror(errno));
		printmod(f, m);
		if (fclose(f) != 0)
			fatal("cannot write '%s': %s", path, strerror(errno));
		return;
	}
	tmp = emalloc(strlen(path) + sizeof ".tmpXXXXXX");
	strcpy(tmp, path);
	strcat(tmp, ".tmpXXXXXX");
	if ((fd = mkstemp(tmp)) < 0)
		fatal("cannot write '%s': %s", path, strerror(errno));
	/* mkstemp makes it 0600; give it the mode a new file would get */
	mask = umask(0);
	umask(mask);
	if (fchmod(fd, 0666 & ~mask) != 0 || !(f = fdopen(fd, "w"))) {
		err = errno;
		close(fd);
		goto fail;
	}
	printmod(f, m);
	err = ferror(f) || fflush(f) != 0 ? (errno ? errno : EIO) : 0;
	if (fclose(f) != 0 && !err)
		err = errno;
	if (err)
		goto fail;
	if (rename(tmp, path) != 0) {
		err = errno;
		goto fail;
	}
	free(tmp);
	return;
fail:
	unlink(tmp);
	fatal("cannot write '%s': %s", path, strerror(err));
}

int
main(int argc, char **argv)
{
	Opts o = {0};
	const char *name;
	Mod *m;

	parseargs(&o, argc, argv);
	checkopts(&o);
	name = strcmp(o.input, "-") == 0 ? "<stdin>" : o.input;
	m = o.lang == LIr ? loadir(&o, name) : loadgnn(&o, name);
	/* after loading, so that the input's own errors come first */
	if (!o.syntaxonly && !o.emit && o.dump == DumpNone)
		fatal("code generation is not available yet; use --dump-ir or --emit=ir");
	if (o.syntaxonly) {
		freemod(m);
		return 0;
	}
	o.po.dumpto = stdout;
	if (o.dump == DumpAll) {
		printf("# after frontend\n");
		printmod(stdout, m);
	}
	if (runpasses(m, &o.po) < 0)
		return 1;
	if (o.dump == DumpFinal)
		printmod(stdout, m);
	if (o.emit)
		writeir(o.output ? o.output : "-", m);
	freemod(m);
	free(o.incdir);
	if (fflush(stdout) != 0 || ferror(stdout))
		fatal("cannot write to standard output: %s", strerror(errno));
	return diag_nerrors() > 0;
}
