/*
 * The driver's dealings with the system: where gnncc and its runtime
 * live, temporary files and directories, atomic output, and running the
 * C and CUDA compilers.  POSIX, Linux's /proc for the executable's path.
 */
#ifndef GNNCC_TOOLCHAIN_H
#define GNNCC_TOOLCHAIN_H

#include <stdbool.h>
#include <stdio.h>

/* Strings ---------------------------------------------------------------- */

/* printf into a string on the heap, as long as it needs (emalloc'd). */
/* Append s to the array *v of *n strings (grown with erealloc). */
void strpush(const char ***v, int *n, const char *s);

/* Installation layout ---------------------------------------------------- */

/* The running executable's real path (/proc/self/exe); NULL if unknown. */
const char *selfexe(void);

/*
 * Where libgnnrt.a (libdir) and gnnrt.h (includedir) are: the build
 * tree's when gnncc runs from its build directory, the installation's
 * (relative to the executable's bin/) when installed.  NULL when neither
 * layout holds them; *where then says what was looked for.
 */
typedef struct Layout {
	const char *libdir;
	const char *includedir;
	const char *emuincludedir;   /* the emulated device's cuda_runtime.h */
	const char *where;      /* for the message when not found */
} Layout;

bool findlayout(Layout *l);

/* Temporary files -------------------------------------------------------- */

/*
 * A private directory under $TMPDIR (else /tmp), and paths inside it.
 * Everything registered is removed at exit, and on SIGINT, SIGTERM,
 * SIGHUP or SIGABRT, unless forgotten first (renamed away, or kept on
 * purpose).
 */
const char *tempdir(void);           /* made on first use; fatal on error */
char *tempname(const char *base);    /* tempdir()/base, registered */
void tempreg(const char *path);      /* remove path at exit */
void tempforget(const char *path);

/*
 * Writing an output atomically: the text goes to PATH.tmpXXXXXX beside
 * path, which is renamed over path only on commit, so that readers (and
 * make) see the old file or the new one, never a part.  A path that
 * exists and is not a regular file (/dev/null, a pipe) is written in
 * place; "-" is standard output.
 */
typedef struct OutFile {
	const char *path;
	char *tmp;              /* NULL: written in place */
	FILE *f;
} OutFile;

/* 0, or an errno value (nothing is left behind). */
int outopen(OutFile *o, const char *path);
/*
 * Close and rename into place; 0 or an errno value, and then the
 * temporary is gone.  With ifchanged, a path whose contents are already
 * the same is left alone, its time stamp too.
 */
int outcommit(OutFile *o, bool ifchanged);
void outabort(OutFile *o);

/* A temporary name beside path (PATH.tmpXXXXXX, created, registered). */
char *tempbeside(const char *path);
/* rename, or copy and remove across file systems; 0 or an errno value. */
int movefile(const char *from, const char *to);
/* Copy from's contents into to, atomically; 0 or an errno value. */
int copyfile(const char *from, const char *to);
bool isregular(const char *path);    /* exists and is a regular file */
bool samefile(const char *a, const char *b);   /* both exist, and are one file */

/* Tools ------------------------------------------------------------------ */

/*
 * A tool's command: its words ($CC and $NVCC may hold arguments after
 * the program: "ccache gcc"), then arguments appended one at a time.
 */
typedef struct Cmd {
	char **argv;            /* NULL-terminated */
	int argc, cap;
} Cmd;

void cmdadd(Cmd *c, const char *arg);
void cmdwords(Cmd *c, const char *words);   /* split on blanks */
void cmdfree(Cmd *c);
/* The command as a shell would read it back, for -v. */
void cmdprint(FILE *f, const Cmd *c);

/* The program name's path: itself if it holds a '/', else found on PATH;
 * NULL if none is executable. */
char *findprogram(const char *name);

/*
 * Run the command, with the driver's own standard streams (so that the
 * tool's diagnostics reach the user as they are), and wait for it.
 * Returns its exit status, or -1 with *why set ("cannot run",
 * "killed by signal 9"; malloc'd) when it did not exit.
 */
int runcmd(const Cmd *c, char **why);

/*
 * CUDA's library directory (holding libcudart_static.a) for the nvcc at
 * this path: ROOT/lib64 and the like for ROOT/bin/nvcc, as named, else
 * through its symbolic links.  NULL when none: a system directory then.
 */
char *cudalibdir(const char *nvcc);

/*
 * The C compiler's flags for a cpu-target model (after the compiler's
 * name): C11 (so no FMA contraction), -O2, position-independent, the instruction set of --cpu (cpu: codegen.h's
 * Cpu*; portable adds no -march, the source carries its clones), and
 * OpenMP when asked.
 */
void cpuflags(Cmd *c, int cpu, bool openmp);

/* The emulated CUDA device ------------------------------------------------ */

/*
 * --target=cuda on a machine without a GPU: the generated .cu compiled as
 * C++ by the host's C++ compiler ($CXX, else c++) against the emulated
 * device's cuda_runtime.h and linked with libgnnemu.a (runtime/emu), so
 * that its kernels run on the CPU, every GPU thread a fiber.  memcheck
 * builds it with AddressSanitizer, racecheck with ThreadSanitizer.
 */
enum { EmuOff, EmuRun, EmuMemcheck, EmuRacecheck };

/* "" or "run", "memcheck", "racecheck"; -1 for anything else. */
int emumode(const char *name);
/* The C++ compiler's words: $CXX, else c++. */
const char *emucxx(void);
/*
 * The compiler command for mode, ready for "-c SRC -o OBJ" (or -shared):
 * C++17 without exceptions or RTTI, the emulated device's headers first.
 * Returns false with *why set (malloc'd) when it cannot be built here.
 */
bool emucommand(Cmd *c, int mode, const Layout *l, char **why);
/* The sanitizer flags a program linking a mode's object needs ("" none). */
const char *emulinkflags(int mode);
/* The sanitizer runtime library ("libtsan.so") for mode, or NULL. */
const char *emuruntime(int mode);

/* ------------------------------------------------------ vendor libraries */

/* --vendor's value as Vendor* bits (ir.h): none, or a comma-separated
 * list of cublas and cusparse; anything else is the user's error (exit 1) */
unsigned vendorbits(const char *list);
/* the bits as --vendor spells them ("cublas,cusparse"; "none" for 0) */
const char *vendorname(unsigned bits);
/* The link words a program needs for bits: with emu the emulated
 * libraries (libgnnemu_vendor.a, before libgnnemu.a), else, for nvcc,
 * cuBLAS's and cuSPARSE's shared libraries, from cudalib (CUDA's library
 * directory, or NULL: the system's) and found there at run time too.
 * Added to c. */
void vendorlink(Cmd *c, unsigned bits, int emu, const char *libdir, const char *cudalib);

#endif
