/*
 * The driver's dealings with the system: the executable's location and
 * the runtime's, temporary files, atomic outputs, and child processes.
 *
 * Layout.  CMake tells the compiler where its build tree keeps it, the
 * library and the header (GNNCC_BUILD_BINDIR, GNNCC_BUILD_LIBDIR,
 * GNNCC_RUNTIME_DIR), and where an installation keeps the library and the
 * header relative to bin/ (GNNCC_BIN_TO_LIB, GNNCC_BIN_TO_INCLUDE).  A
 * gnncc whose real path is in the build tree's bin directory uses the
 * build tree; any other uses the installation around it, which must hold
 * libgnnrt.a and gnnrt.h.  Installed trees are relocatable: nothing
 * absolute from the build is trusted there.
 *
 * Temporaries.  Every file gnncc creates before it is complete (the
 * private temporary directory and its files, FILE.tmpXXXXXX beside an
 * output) is registered and removed at exit, and from a handler for
 * SIGINT, SIGTERM, SIGHUP and SIGABRT (an internal error's abort), which
 * passes the signal on to the tool running, if any, and uses only kill,
 * unlink and rmdir before dying of the same signal.
 *
 * Processes.  posix_spawn with the driver's own standard streams: a
 * tool's diagnostics reach the user unchanged, and nothing goes through
 * a shell, so paths with blanks or quotes need no quoting.
 */
#define _XOPEN_SOURCE 700           /* POSIX 2008 with realpath */

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <signal.h>
#include <stdarg.h>
#include <spawn.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "../ir/ir.h"
#include "../codegen/codegen.h"
#include "options.h"
#include "toolchain.h"

extern char **environ;

/* --------------------------------------------------------------- strings */

void
strpush(const char ***v, int *n, const char *s)
{
	*v = erealloc(*v, (*n + 1) * sizeof **v);
	(*v)[(*n)++] = s;
}

/* ---------------------------------------------------------------- layout */

const char *
selfexe(void)
{
	static char *path;
	static int done;

	/* realpath's own allocation: no PATH_MAX to outgrow */
	if (!done)
		done = (path = realpath("/proc/self/exe", NULL)) ? 1 : -1;
	return done > 0 ? path : NULL;
}

/* dir/rel, normalized by realpath; NULL if it does not exist. */
static char *
resolve(const char *dir, const char *rel)
{
	char *p = astrfmt(NULL, "%s/%s", dir, rel), *r;

	r = realpath(p, NULL);
	free(p);
	return r;
}

static bool
hasfile(const char *dir, const char *name)
{
	char *p = astrfmt(NULL, "%s/%s", dir, name);
	bool ok;

	ok = access(p, R_OK) == 0;
	free(p);
	return ok;
}

static bool
locate(Layout *l)
{
	const char *exe = selfexe();
	char *exedir, *slash, *lib, *inc;

	if (!exe) {
		l->where = "the path of the running gnncc (/proc/self/exe) is unknown";
		return false;
	}
	exedir = estrdup(exe);
	if ((slash = strrchr(exedir, '/')))
		*(slash == exedir ? slash + 1 : slash) = '\0';
#ifdef GNNCC_BUILD_BINDIR
	{
		char *build = realpath(GNNCC_BUILD_BINDIR, NULL);
		bool inbuild = build && strcmp(build, exedir) == 0;

		free(build);
		if (inbuild) {
			free(exedir);
			l->libdir = GNNCC_BUILD_LIBDIR;
			l->includedir = GNNCC_RUNTIME_DIR;
			l->emuincludedir = GNNCC_RUNTIME_DIR "/emu";
			return true;
		}
	}
#endif
	lib = resolve(exedir, GNNCC_BIN_TO_LIB);
	inc = resolve(exedir, GNNCC_BIN_TO_INCLUDE);
	if (lib && inc && hasfile(lib, "libgnnrt.a") && hasfile(inc, "gnnrt.h")) {
		free(exedir);
		l->libdir = lib;
		l->includedir = inc;
		l->emuincludedir = astrfmt(NULL, "%s/gnnemu", inc);
		return true;
	}
	free(lib);
	free(inc);
	/* kept for the message: found once per process */
	l->where = astrfmt(NULL, "looked for %s/%s/libgnnrt.a and %s/%s/gnnrt.h",
	                  exedir, GNNCC_BIN_TO_LIB, exedir, GNNCC_BIN_TO_INCLUDE);
	free(exedir);
	return false;
}

bool
findlayout(Layout *l)
{
	static Layout found;
	static int done;

	if (!done)
		done = locate(&found) ? 1 : -1;
	*l = found;
	return done > 0;
}

/* ----------------------------------------------------------- temporaries */

typedef struct Temp {
	char *path;
	volatile sig_atomic_t live;     /* 0: forgotten */
} Temp;

static Temp *temps;             /* registered paths */
static int ntemps;
static char *tdir;
static volatile pid_t child;    /* the tool running now, if any */

static void
removetemps(void)
{
	int i;

	for (i = ntemps - 1; i >= 0; i--)
		if (temps[i].live)
			unlink(temps[i].path);
	if (tdir)
		rmdir(tdir);
}

static void
onsignal(int sig)
{
	/* the tool first, so that it writes no more into what goes */
	if (child > 0)
		kill(child, sig);
	removetemps();
	signal(sig, SIG_DFL);
	raise(sig);
}

static void
setup(void)
{
	static bool done;
	static const int sigs[] = {SIGINT, SIGTERM, SIGHUP, SIGABRT};
	struct sigaction sa;
	size_t i;

	if (done)
		return;
	done = true;
	atexit(removetemps);
	memset(&sa, 0, sizeof sa);
	sa.sa_handler = onsignal;
	sigemptyset(&sa.sa_mask);
	for (i = 0; i < sizeof sigs / sizeof sigs[0]; i++)
		sigaction(sigs[i], &sa, NULL);
}

void
tempreg(const char *path)
{
	char *p = estrdup(path);
	sigset_t all, old;

	setup();
	/* the handler walks the table: never let it see it half grown */
	sigfillset(&all);
	sigprocmask(SIG_BLOCK, &all, &old);
	temps = erealloc(temps, (ntemps + 1) * sizeof *temps);
	temps[ntemps].path = p;
	temps[ntemps++].live = 1;
	sigprocmask(SIG_SETMASK, &old, NULL);
}

void
tempforget(const char *path)
{
	int i;

	for (i = 0; i < ntemps; i++)
		if (temps[i].live && strcmp(temps[i].path, path) == 0) {
			temps[i].live = 0;
			return;
		}
}

const char *
tempdir(void)
{
	const char *base = getenv("TMPDIR");
	char *t;

	if (tdir)
		return tdir;
	if (!base || !*base)
		base = "/tmp";
	t = astrfmt(NULL, "%s/gnncc-XXXXXX", base);
	setup();
	if (!mkdtemp(t)) {
		fprintf(stderr, "gnncc: error: cannot make a temporary directory in '%s': %s\n",
		        base, strerror(errno));
		exit(1);
	}
	tdir = t;
	return tdir;
}

char *
tempname(const char *base)
{
	char *p = astrfmt(NULL, "%s/%s", tempdir(), base);

	tempreg(p);
	return p;
}

/* A new file gets 0666 less the umask; mkstemp made it 0600. */
static int
fixmode(int fd)
{
	mode_t mask = umask(0);

	umask(mask);
	return fchmod(fd, 0666 & ~mask);
}

char *
tempbeside(const char *path)
{
	char *tmp;
	int fd;

	tmp = astrfmt(NULL, "%s.tmpXXXXXX", path);
	setup();
	if ((fd = mkstemp(tmp)) < 0) {
		int err = errno;

		free(tmp);
		errno = err;
		return NULL;
	}
	tempreg(tmp);
	fixmode(fd);
	close(fd);
	return tmp;
}

bool
isregular(const char *path)
{
	struct stat st;

	return stat(path, &st) == 0 && S_ISREG(st.st_mode);
}

bool
samefile(const char *a, const char *b)
{
	struct stat sa, sb;

	return stat(a, &sa) == 0 && stat(b, &sb) == 0 && sa.st_dev == sb.st_dev &&
	       sa.st_ino == sb.st_ino;
}

/* --------------------------------------------------------------- outputs */

int
outopen(OutFile *o, const char *path)
{
	struct stat st;
	int fd, err;

	memset(o, 0, sizeof *o);
	o->path = path;
	if (strcmp(path, "-") == 0) {
		o->f = stdout;
		return 0;
	}
	if (stat(path, &st) == 0 && !S_ISREG(st.st_mode)) {
		if (S_ISDIR(st.st_mode))
			return EISDIR;
		/* renaming over /dev/null would replace the device node */
		return (o->f = fopen(path, "w")) ? 0 : errno;
	}
	if (!(o->tmp = tempbeside(path)))
		return errno;
	if ((fd = open(o->tmp, O_WRONLY | O_TRUNC)) < 0 || !(o->f = fdopen(fd, "w"))) {
		err = errno;
		if (fd >= 0)
			close(fd);
		unlink(o->tmp);
		tempforget(o->tmp);
		free(o->tmp);
		o->tmp = NULL;
		return err;
	}
	return 0;
}

static bool
samecontents(const char *a, const char *b)
{
	char ba[8192], bb[8192];
	FILE *fa, *fb;
	size_t na, nb;
	bool same = false;

	if (!(fa = fopen(a, "rb")))
		return false;
	if ((fb = fopen(b, "rb"))) {
		do {
			na = fread(ba, 1, sizeof ba, fa);
			nb = fread(bb, 1, sizeof bb, fb);
			same = na == nb && memcmp(ba, bb, na) == 0;
		} while (same && na == sizeof ba);
		same = same && !ferror(fa) && !ferror(fb);
		fclose(fb);
	}
	fclose(fa);
	return same;
}

int
outcommit(OutFile *o, bool ifchanged)
{
	int err;

	if (o->f == stdout)
		return fflush(stdout) != 0 || ferror(stdout) ? errno ? errno : EIO : 0;
	err = ferror(o->f) || fflush(o->f) != 0 ? (errno ? errno : EIO) : 0;
	if (fclose(o->f) != 0 && !err)
		err = errno;
	o->f = NULL;
	if (!o->tmp)
		return err;
	if (!err && ifchanged && samecontents(o->tmp, o->path))
		unlink(o->tmp);
	else if (!err && rename(o->tmp, o->path) != 0)
		err = errno;
	if (err)
		unlink(o->tmp);
	tempforget(o->tmp);
	free(o->tmp);
	o->tmp = NULL;
	return err;
}

void
outabort(OutFile *o)
{
	if (o->f && o->f != stdout)
		fclose(o->f);
	o->f = NULL;
	if (o->tmp) {
		unlink(o->tmp);
		tempforget(o->tmp);
		free(o->tmp);
		o->tmp = NULL;
	}
}

int
copyfile(const char *from, const char *to)
{
	char buf[65536];
	OutFile o;
	FILE *f;
	size_t n;
	int err;

	if (!(f = fopen(from, "rb")))
		return errno;
	if ((err = outopen(&o, to)) != 0) {
		fclose(f);
		return err;
	}
	while ((n = fread(buf, 1, sizeof buf, f)) > 0)
		fwrite(buf, 1, n, o.f);
	if (ferror(f)) {
		err = errno ? errno : EIO;
		fclose(f);
		outabort(&o);
		return err;
	}
	fclose(f);
	return outcommit(&o, false);
}

int
movefile(const char *from, const char *to)
{
	int err;

	if (rename(from, to) == 0)
		return 0;
	if (errno != EXDEV)
		return errno;
	if ((err = copyfile(from, to)) != 0)
		return err;
	unlink(from);
	return 0;
}

/* ----------------------------------------------------------------- tools */

void
cmdadd(Cmd *c, const char *arg)
{
	if (c->argc + 2 > c->cap) {
		c->cap = c->cap ? 2 * c->cap : 16;
		c->argv = erealloc(c->argv, c->cap * sizeof *c->argv);
	}
	c->argv[c->argc++] = estrdup(arg);
	c->argv[c->argc] = NULL;
}

void
cmdwords(Cmd *c, const char *words)
{
	const char *p = words, *q;
	char *w;

	for (;;) {
		p += strspn(p, " \t\n");
		if (!*p)
			break;
		q = p + strcspn(p, " \t\n");
		w = emalloc(q - p + 1);
		memcpy(w, p, q - p);
		w[q - p] = '\0';
		cmdadd(c, w);
		free(w);
		p = q;
	}
}

void
cmdfree(Cmd *c)
{
	int i;

	for (i = 0; i < c->argc; i++)
		free(c->argv[i]);
	free(c->argv);
	memset(c, 0, sizeof *c);
}

void
cmdprint(FILE *f, const Cmd *c)
{
	const char *a, *p;
	int i;

	for (i = 0; i < c->argc; i++) {
		a = c->argv[i];
		if (i)
			fputc(' ', f);
		if (*a && strspn(a, "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz"
		                    "0123456789_-+./=,:@%") == strlen(a)) {
			fputs(a, f);
			continue;
		}
		fputc('\'', f);
		for (p = a; *p; p++)
			if (*p == '\'')
				fputs("'\\''", f);
			else
				fputc(*p, f);
		fputc('\'', f);
	}
	fputc('\n', f);
}

static bool
isexec(const char *path)
{
	struct stat st;

	return stat(path, &st) == 0 && S_ISREG(st.st_mode) && access(path, X_OK) == 0;
}

char *
findprogram(const char *name)
{
	const char *path = getenv("PATH"), *p, *q;
	char *cand;
	size_t n;

	if (!*name)
		return NULL;
	if (strchr(name, '/'))
		return isexec(name) ? estrdup(name) : NULL;
	if (!path)
		path = "/usr/bin:/bin";
	for (p = path;; p = q + 1) {
		q = p + strcspn(p, ":");
		n = q - p;
		/* an empty entry is the current directory, as in execvp */
		cand = astrfmt(NULL, "%.*s/%s", (int)n, n ? p : ".", name);
		if (isexec(cand))
			return cand;
		free(cand);
		if (!*q)
			return NULL;
	}
}

int
runcmd(const Cmd *c, char **why)
{
	pid_t pid;
	int err, st;

	*why = NULL;
	fflush(stdout);
	fflush(stderr);
	if ((err = posix_spawn(&pid, c->argv[0], NULL, NULL, c->argv, environ)) != 0) {
		*why = astrfmt(NULL, "cannot run '%s': %s", c->argv[0], strerror(err));
		return -1;
	}
	child = pid;
	while (waitpid(pid, &st, 0) < 0)
		if (errno != EINTR) {
			*why = astrfmt(NULL, "cannot wait for '%s': %s", c->argv[0], strerror(errno));
			child = 0;
			return -1;
		}
	child = 0;
	if (WIFEXITED(st))
		return WEXITSTATUS(st);
	if (WIFSIGNALED(st))
		*why = astrfmt(NULL, "'%s' was killed by signal %d", c->argv[0], WTERMSIG(st));
	else
		*why = astrfmt(NULL, "'%s' stopped abnormally", c->argv[0]);
	return -1;
}

char *
cudalibdir(const char *nvcc)
{
	static const char *const sub[] = {"lib64", "lib", "targets/x86_64-linux/lib",
	                                  "targets/sbsa-linux/lib"};
	char *root[2], *dir = NULL, *s;
	size_t i;
	int k, up;

	root[0] = estrdup(nvcc);
	root[1] = realpath(nvcc, NULL);
	for (k = 0; k < 2; k++) {
		for (up = 0; up < 2 && root[k] && (s = strrchr(root[k], '/')); up++)
			*s = '\0';
		for (i = 0; !dir && root[k] && i < sizeof sub / sizeof sub[0]; i++) {
			dir = astrfmt(NULL, "%s/%s/libcudart_static.a", root[k], sub[i]);
			if (access(dir, R_OK) == 0)
				*strrchr(dir, '/') = '\0';
			else {
				free(dir);
				dir = NULL;
			}
		}
		free(root[k]);
	}
	return dir;
}

/* ------------------------------------------------------ emulated device */

static const char *const emunames[] = {"", "run", "memcheck", "racecheck"};

int
emumode(const char *name)
{
	int i;

	if (!*name)
		return EmuRun;
	for (i = EmuRun; i <= EmuRacecheck; i++)
		if (strcmp(name, emunames[i]) == 0)
			return i;
	return -1;
}

/* whether the compiler at path is GCC's: the program it resolves to
 * (cc and c++ are links to one) is named gcc, gcc-12,
 * x86_64-linux-gnu-gcc-12, g++-12; anything else (clang, a wrapper) is
 * taken as not gcc */
static bool
compilerisgcc(const char *path)
{
	char *real = realpath(path, NULL);
	const char *b;
	bool gcc;

	if (!real)
		return false;
	b = strrchr(real, '/');
	b = b ? b + 1 : real;
	gcc = (strstr(b, "gcc") || strstr(b, "g++")) && !strstr(b, "clang");
	free(real);
	return gcc;
}

void
cpuflags(Cmd *c, int cpu, bool openmp)
{
	char *march;

	/* -O2, not -O3: gcc's -O3 unrolls a segment loop into its feature
	 * loop (unroll-and-jam), which leaves the pair scalar (a 2.5x slower
	 * aggregation at width 128), and -O2 vectorizes the feature loops of
	 * our constant widths all the same.  No FMA contraction (-std=c11
	 * turns it off): where a compiler contracts
	 * depends on the shape of the code, so two schedules of one kernel
	 * would differ in the last bits; the dense transforms, where FMA pays,
	 * use gnn_sgemm's explicit FMAs.  A pointer of the wrong type is an
	 * error, not a warning: a 16-bit buffer (uint16_t) read as float
	 * would be a silent miscomputation */
	cmdwords(c, "-std=c11 -O2 -fPIC -Werror=incompatible-pointer-types");
	/* gcc's -O2 vectorizes only loops that need no scalar remainder
	 * (its very-cheap cost model): a 40-wide feature loop ran 32 lanes
	 * and 8 scalar steps, and an elementwise kernel over N*F elements
	 * (a 16-bit input's cast) not at all.  The dynamic model vectorizes
	 * them, with the same arithmetic in the same order, so the same bits:
	 * GCN's forward on the arxiv-shaped graph went from 325 to 239 ms at
	 * one thread.  Clang, which rejects the option, vectorizes them at
	 * -O2 already */
	if (c->argc > 0 && compilerisgcc(c->argv[0]))
		cmdadd(c, "-fvect-cost-model=dynamic");
	if (cpu != CpuPortable) {
		cmdadd(c, march = astrfmt(NULL, "-march=%s", optcpus[cpu]));
		free(march);
	}
	if (openmp)
		cmdadd(c, "-fopenmp");
}

const char *
emucxx(void)
{
	const char *cxx = getenv("CXX");

	return cxx && *cxx ? cxx : "c++";
}

bool
emucommand(Cmd *c, int mode, const Layout *l, char **why)
{
	const char *cxx = getenv("CXX");
	char *prog, *inc;

#ifdef GNNCC_SANITIZE_CFLAGS
	/* this tool's sanitizers come with what it builds: ASan, which
	 * ThreadSanitizer cannot share a process with */
	if (mode == EmuRacecheck) {
		*why = astrfmt(NULL, "racecheck (ThreadSanitizer) needs a gnncc built without sanitizers");
		return false;
	}
#endif
	cmdwords(c, emucxx());
	if (c->argc == 0 || !(prog = findprogram(c->argv[0]))) {
		*why = astrfmt(NULL, "the C++ compiler '%s'%s is not found (the emulated device needs one)",
		              c->argc ? c->argv[0] : "", cxx && *cxx ? " (from $CXX)" : "");
		cmdfree(c);
		return false;
	}
	free(c->argv[0]);
	c->argv[0] = prog;      /* runcmd does not search PATH */
	/* C++ without its runtime: a C program links the object with cc */
	cmdwords(c, "-x c++ -std=c++17 -fPIC -fno-exceptions -fno-rtti -fno-threadsafe-statics");
	/* -O1, the sanitizers' own advice, for all: an emulated model is
	 * compiled far more often than it runs for long (-O2 took half as
	 * long again); line tables for reports and debuggers.  These flags
	 * and the sanitizers' below are also runtime/emu/CMakeLists.txt's,
	 * which precompiles the prelude with them */
	cmdwords(c, "-O1 -g1");
	/* without use-after-scope, whose poisoning of every scoped local
	 * tripled a hetero model's compile (7.3 s to 2.4) and which checks
	 * nothing a kernel's device memory holds */
	if (mode == EmuMemcheck)
		cmdwords(c, "-fsanitize=address -fno-omit-frame-pointer -fno-sanitize-address-use-after-scope");
	else if (mode == EmuRacecheck)
		cmdwords(c, "-fsanitize=thread");
#ifdef GNNCC_SANITIZE_CFLAGS
	cmdwords(c, GNNCC_SANITIZE_CFLAGS);
#else
	/* the generated prelude precompiled for this mode, where the build
	 * made one (runtime/emu/CMakeLists.txt): gcc reads the .gch beside
	 * the header if it fits this compile, else the header's text */
	if (compilerisgcc(prog)) {
		char *pch = astrfmt(NULL, "%s/emupch/%s/gnnemu_pch.h", l->libdir, emunames[mode]);
		char *gch = astrfmt(NULL, "%s.gch", pch);
		if (access(gch, R_OK) == 0) {
			cmdadd(c, "-include");
			cmdadd(c, pch);
		}
		free(gch);
		free(pch);
	}
#endif
	/* the emulated device's cuda_runtime.h before any real one */
	cmdadd(c, inc = astrfmt(NULL, "-I%s", l->emuincludedir));
	free(inc);
	cmdadd(c, inc = astrfmt(NULL, "-I%s", l->includedir));
	free(inc);
	return true;
}

const char *
emulinkflags(int mode)
{
	switch (mode) {
	case EmuMemcheck: return "-fsanitize=address";
	case EmuRacecheck: return "-fsanitize=thread";
	default: return "";
	}
}

const char *
emuruntime(int mode)
{
	switch (mode) {
	case EmuMemcheck: return "libasan.so";
	case EmuRacecheck: return "libtsan.so";
	default: return NULL;
	}
}

/* ------------------------------------------------------ vendor libraries */

static const char *const vendornames[] = {"cublas", "cusparse"};

unsigned
vendorbits(const char *list)
{
	unsigned bits = 0;
	const char *p = list;
	size_t n, i;

	if (strcmp(list, "none") == 0)
		return 0;
	for (;;) {
		n = strcspn(p, ",");
		for (i = 0; i < 2 && (strlen(vendornames[i]) != n || strncmp(p, vendornames[i], n) != 0); i++)
			;
		if (i == 2)
			optfatal("--vendor takes none, cublas, cusparse or cublas,cusparse, not '%s'", list);
		bits |= 1u << i;
		if (!p[n])
			return bits;
		p += n + 1;
	}
}

const char *
vendorname(unsigned bits)
{
	switch (bits & (VendorCublas | VendorCusparse)) {
	case VendorCublas: return "cublas";
	case VendorCusparse: return "cusparse";
	case VendorCublas | VendorCusparse: return "cublas,cusparse";
	default: return "none";
	}
}

void
vendorlink(Cmd *c, unsigned bits, int emu, const char *libdir, const char *cudalib)
{
	char *w;

	if (!bits)
		return;
	if (emu) {
		cmdadd(c, w = astrfmt(NULL, "%s/libgnnemu_vendor.a", libdir));
		free(w);
		return;
	}
	if (cudalib) {
		cmdadd(c, w = astrfmt(NULL, "-L%s", cudalib));
		free(w);
		cmdadd(c, "-Xlinker");      /* nvcc's spelling of -Wl, */
		cmdadd(c, w = astrfmt(NULL, "-rpath,%s", cudalib));
		free(w);
	}
	if (bits & VendorCublas)
		cmdadd(c, "-lcublas");
	if (bits & VendorCusparse)
		cmdadd(c, "-lcusparse");
}
