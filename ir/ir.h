/*
 * gnncc's IR: typed SSA over whole tensors.
 *
 * A module (Mod) owns one arena, the symbol table (N, E, user dims) and
 * the table of interned symbolic dimension expressions.  A function (Fn)
 * is one straight-line block of instructions; every instruction defines
 * at most one value, every value is defined once.  Values are indices
 * into fn->val (Ref), not pointers, so passes may grow tables freely.
 *
 * Dimensions are polynomials over symbols with integer coefficients,
 * interned per module so that equal expressions compare equal as ints.
 * Types are small structs passed by value.
 *
 * Everything that the IR knows about an op (arity, typing, attributes)
 * lives in ops.h and typecheck.c, so the frontend, the IR parser and the
 * verifier share one definition of what is well typed.
 *
 * The header is divided by source file, like QBE's all.h.
 */
#ifndef GNNCC_IR_H
#define GNNCC_IR_H

#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

typedef struct Arena Arena;
typedef struct Mod Mod;
typedef struct Fn Fn;

/* diag.c ---------------------------------------------------------------- */

typedef struct Loc {
	const char *file;   /* NULL: no location */
	int line, col;      /* 1-based; col counts bytes */
} Loc;

/* Source text is registered so that diagnostics can print the line.
 * diag keeps copies of the name and the text until exit; the name it
 * returns is the one for Loc.file, valid as long as the process. */
const char *diag_addsource(const char *file, const char *text, size_t len);
void diag_setcaret(bool on);            /* default on; -fno-caret turns off */
void diag_setmaxerrors(int n);          /* stop after n errors; default 20 */
/* User errors: print "file:line:col: error: msg", the line, a caret.
 * errorat counts and returns, so a stage can report several errors. */
void errorat(Loc l, const char *fmt, ...);
void verrorat(Loc l, const char *fmt, va_list ap);
void noteat(Loc l, const char *fmt, ...);
void warnat(Loc l, const char *fmt, ...);
int diag_nerrors(void);
void diag_reset(void);
/* Internal bugs: abort loudly with the compiler's own source position. */
_Noreturn void die_(const char *file, int line, const char *fmt, ...);
#define die(...) die_(__FILE__, __LINE__, __VA_ARGS__)
void *emalloc(size_t n);               /* dies on exhaustion */
void *erealloc(void *p, size_t n);
char *estrdup(const char *s);

/* file.c ---------------------------------------------------------------- */

/* A whole file ("-": stdin), NUL-terminated; NULL with errno set. */
char *readfile(const char *path, size_t *len);

/* arena.c --------------------------------------------------------------- */

Arena *arena_new(void);
void *arena_alloc(Arena *a, size_t n);   /* zeroed, 16-byte aligned */
/* printf into memory sized to fit: a's, or with a NULL the heap's (the
 * caller frees it).  Text built from names (any length) goes here, never
 * into a fixed buffer. */
char *astrfmt(Arena *a, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
char *vastrfmt(Arena *a, const char *fmt, va_list ap);
char *arena_strdup(Arena *a, const char *s);
char *arena_strndup(Arena *a, const char *s, size_t n);
void arena_free(Arena *a);

/* dtype ------------------------------------------------------------------ */

enum DType {
	DNone,
	DF32, DF64, DF16, DBF16,
	DI32, DI64,
	DBool,
	NDType
};
const char *dtypename(int dt);          /* "f32", ... */
int dtypefromname(const char *s);       /* DNone if unknown */
size_t dtypesize(int dt);
bool dtypeisfloat(int dt);
bool dtypeisint(int dt);
/* 16-bit storage (--precision, docs/precision.md): x rounded to the
 * nearest value of dt (DBF16 or DF16), ties to even, as a double; NaN
 * and Inf kept, a value beyond dt's largest finite one (after rounding)
 * the infinity of its sign, subnormals of dt kept.  The interpreter's
 * reference at every 16-bit store. */
double round16(double x, int dt);

/* dim.c ----------------------------------------------------------------- */

/*
 * A Dim >= 0 is that constant extent.  A Dim < 0 is a symbolic
 * expression: ~d indexes mod->dexp.  Interning makes equal polynomials
 * equal ints, so dims compare with ==.
 */
typedef int32_t Dim;
#define DIMMAX INT32_MAX
enum { MaxRank = 6, MaxDeg = 4 };

typedef struct Term {
	int64_t coef;               /* never 0 */
	uint8_t deg;                /* 0: the constant term */
	uint16_t sym[MaxDeg];       /* ascending symbol indices */
} Term;

typedef struct DExp {           /* canonical: terms sorted, merged */
	int nterm;
	Term *term;
} DExp;

typedef struct Sym {
	const char *name;
	bool derived;     /* size set by a data-dependent graph op at bind */
} Sym;

int symlookup(Mod *m, const char *name);    /* -1 if absent */
int symadd(Mod *m, const char *name, bool derived); /* existing index if present */
int symfresh(Mod *m, const char *base);     /* new derived symbol: base1, base2.. */
Dim dimconst(int64_t v);                    /* v must be in [0, DIMMAX] */
Dim dimsym(Mod *m, int sym);
/* Arithmetic; returns false through *ok (if not NULL) on overflow or a
 * negative constant result, and then the returned Dim is 0. */
Dim dimadd(Mod *m, Dim a, Dim b, bool *ok);
Dim dimsub(Mod *m, Dim a, Dim b, bool *ok);
Dim dimmul(Mod *m, Dim a, Dim b, bool *ok);
/* a / b when b is one term (2*N) dividing every term of a */
bool dimdiv(Mod *m, Dim a, Dim b, Dim *q);
/* a <= b for every value of the symbols (each term of a at most b's
 * term of that monomial, every coefficient non-negative) */
bool dimle(const Mod *m, Dim a, Dim b);
/* a and b have the same monomials (8*N + 2*E and 4*N + E; not 8*N and
 * 4*N + E, nor 512 and 4*N) */
bool dimlike(const Mod *m, Dim a, Dim b);
bool dimisconst(Dim d);
int64_t dimconstval(Dim d);
/* Value of d under symval[sym] (-1 = unbound); -1 if any symbol unbound. */
int64_t dimeval(const Mod *m, Dim d, const int64_t *symval);
/* If d is exactly one symbol with coefficient 1, its index; else -1. */
int dimassym(const Mod *m, Dim d);
/* Text: "N", "E + N", "2*N + 1", "N*M".  Returns chars written
 * (snprintf-style, may exceed n). */
int snprintdim(char *buf, size_t n, const Mod *m, Dim d);
void fprintdim(FILE *f, const Mod *m, Dim d);
/* Make dimeval(d) == v by binding the one unbound symbol of d, if d is
 * linear in it (coefficient c: sym = (v - rest) / c).  Returns false if
 * d is already bound to another value, has several unbound symbols, or
 * has no non-negative integral solution. */
bool dimbind(const Mod *m, Dim d, int64_t v, int64_t *symval);
/* Product of dims (element count); ok as dimmul. */
Dim dimprod(Mod *m, const Dim *d, int n, bool *ok);
/* d with each symbol s that has symval[s] >= 0 replaced by that value,
 * re-canonicalized; ok as dimmul.  (--specialize) */
Dim dimsubst(Mod *m, Dim d, const int64_t *symval, bool *ok);

/* type.c ---------------------------------------------------------------- */

enum TKind { TTensor, TGraph };

/*
 * Tensor: dtype, rank, dim[0..rank).  Graph: dtype DNone, rank 2 or 3,
 * dim[0] nodes, dim[1] edges, dim[2] graphs in a batch (rank 3 only).
 * A relation (a bipartite graph, graph[Ns -> Nd, E]: src indexes Ns
 * source nodes, dst Nd destination nodes) is rank 4: dim[0] Nd, dim[1]
 * E, dim[2] the constant 1 (one graph), dim[3] Ns.  Keeping Ns among the
 * dims lets every pass that rewrites or binds dims treat it as any other;
 * dim[0] stays the node count that targets index, so in-degrees,
 * scatters into targets and edge_softmax need no case of their own.
 * relationtype() with Ns == Nd is the homogeneous graph[Nd, E].
 */
typedef struct Type {
	uint8_t kind, dtype, rank;
	Dim dim[MaxRank];
} Type;

Type tensortype(int dtype, int rank, const Dim *dim);
Type graphtype(Dim nodes, Dim edges);
Type batchgraphtype(Dim nodes, Dim edges, Dim graphs);
Type relationtype(Dim srcnodes, Dim dstnodes, Dim edges);
bool isrelation(Type t);                /* a graph whose src and dst index different node sets */
Dim graphsrcnodes(Type t);              /* the node count src indexes: dim[3] or dim[0] */
bool typeeq(Type a, Type b);
/* Whether t's element count is a Dim (a tensor's may not be: a constant
 * product above DIMMAX, a coefficient that overflows, degree above
 * MaxDeg), so that code can be generated for it; constant zero dims are
 * left out, so every product of some of the dims is one too.  Graphs:
 * true. */
bool typenumelok(Mod *m, Type t);
int snprinttype(char *buf, size_t n, const Mod *m, Type t); /* "f32[N, 16]", "graph[N, E]" */
/* the same, whole, in a's memory (a NULL: the heap's, which the caller frees) */
char *typestr(Arena *a, const Mod *m, Type t);
char *dimstr(Arena *a, const Mod *m, Dim d);
void fprinttype(FILE *f, const Mod *m, Type t);

/* ir.c: module, functions, builder -------------------------------------- */

typedef int32_t Ref;            /* index into fn->val; RNone = no value */
#define RNone (-1)

enum AttrKind { AInt, AFloat, ABool, AStr, ADim, AInts, ADims };

typedef struct Attr {
	const char *key;            /* arena string */
	uint8_t kind;
	int n;                      /* element count for AInts / ADims */
	union {
		int64_t i;          /* AInt, ABool */
		double f;           /* AFloat */
		const char *s;      /* AStr */
		Dim d;              /* ADim */
		int64_t *is;        /* AInts */
		Dim *ds;            /* ADims */
	} u;
} Attr;

enum Op {
	Oxxx,
#define O(name, mn, mx, fl) O##name,
#include "ops.h"
#undef O
	NOp
};

enum OpFlag {
	Fpure    = 1 << 0,
	Fleaf    = 1 << 1,  /* no operands; result type declared */
	Fgraph   = 1 << 2,  /* reads only graph operands */
	Fdyn     = 1 << 3,  /* result size is data-dependent (fresh symbol) */
	Fmsg     = 1 << 4,  /* message passing: gathers or scatters along edges */
	Fscatter = 1 << 5,  /* scatter_* reductions into {n} rows */
	Felem    = 1 << 6,  /* elementwise */
	Fbin     = 1 << 7,  /* binary elementwise with broadcasting */
	Freduce  = 1 << 8,  /* reduction over {dim} */
	Fnorm    = 1 << 9,  /* normalization over {dim}, shape kept */
	Fshape   = 1 << 10, /* data movement only */
	Falias   = 1 << 11, /* result is a view of arg[0]'s storage: no code, no buffer */
};

typedef struct OpInfo {
	const char *name;
	int minargs, maxargs;       /* maxargs -1: variadic */
	unsigned flags;
} OpInfo;
extern const OpInfo opinfo[NOp];
int opfromname(const char *s);  /* Oxxx if unknown */

/* A kernel's schedule, kept on its first instruction (Ins.sched): see
 * sched.c for the fields.  Plain ints so that tables can list them. */
typedef struct Sched {
	int lanes, rows, tile, axpy, chunk, gemm, kc, split;
	int bm, bn, bk, tm, tn;          /* cuda's tiled GEMM (sched.c) */
	int ksplit;                      /* its K split into at most this many parts */
	int sparse;                      /* cuda's sparse-input GEMM: warps a block */
	int vendor;                      /* a vendor library's call instead (sched.c) */
	int slices;                      /* the most edge slices of a sum's walk (cuda lanes) */
	int perm;                        /* 1: cuda walks read edge arrays through the plan's permutation */
	int single;                      /* 1: cuda walks take one edge a step where they would pair */
} Sched;
/* the vendor libraries a cuda build may call (gnncc --vendor), as bits */
enum { VendorCublas = 1, VendorCusparse = 2 };

typedef struct Ins {
	uint16_t op;
	Ref to;                     /* RNone never happens today: all ops define */
	int narg;
	Ref *arg;
	int nattr;
	Attr *attr;
	Loc loc;
	/* the kernel schedule when hassched (sched.c's accessors); IR text
	 * spells it as the attribute sched = "...", which is not in attr */
	bool hassched;
	Sched sched;
} Ins;

typedef struct Val {
	const char *name;           /* hint for printing: "h", "conv1.x"; may be NULL */
	Type type;
	int def;                    /* index into fn->ins; -1 for a function argument */
	int nuse;                   /* filled by filluse() */
} Val;

/* A training step's function (frontend/sema.c's lowertrain): its outputs
 * are the loss, the gradient of each param[k], then the new value of each
 * buffer update[k]; the rest are the train item's settings. */
typedef struct TrainInfo {
	const char *model;          /* the forward function's name */
	const char *loss;           /* a loss name given for it, or NULL */
	int nparam, nupdate;
	const char **param, **update;
	const char *optimizer;      /* "sgd", "adam", "adamw" */
	double lr, weight_decay, momentum, dampening, beta1, beta2, eps;
	bool nesterov;
	int64_t epochs, seed;
} TrainInfo;

struct Fn {
	Mod *mod;
	const char *name;
	Loc loc;
	Ref *arg; int narg;         /* inputs: graphs and tensors */
	Ref *ret; int nret;
	Ins *ins; int nins, insc;
	Val *val; int nval, valc;
	TrainInfo *train;           /* a training step's, or NULL */
	Fn *link;
};

struct Mod {
	Arena *arena;
	Sym *sym; int nsym, symc;
	DExp *dexp; int ndexp, dexpc;
	Fn *fn, **fnlast;           /* functions in order */
};

Mod *newmod(void);
void freemod(Mod *m);
Fn *newfn(Mod *m, const char *name, Loc loc);
Ref newval(Fn *fn, const char *name, Type t);              /* no def yet */
Ref addarg(Fn *fn, const char *name, Type t);              /* function input */
void addret(Fn *fn, Ref r);
/* Append an instruction defining a new value of type t.  Attributes and
 * args are copied into the arena.  No checking: see buildop(). */
Ref emit(Fn *fn, int op, Type t, const Ref *arg, int narg,
         const Attr *attr, int nattr, const char *name, Loc loc);
/*
 * Checked build: computes the result type with typecheckop(), reports a
 * user error at loc and returns RNone if ill-typed.  decl is the declared
 * type for Fleaf/Fdyn/cast ops, NULL otherwise.
 */
Ref buildop(Fn *fn, int op, const Ref *arg, int narg,
            const Attr *attr, int nattr, const Type *decl,
            const char *name, Loc loc);
Type valtype(const Fn *fn, Ref r);
/* Attribute helpers: lookup by key; NULL if absent. */
const Attr *findattr(const Ins *i, const char *key);
int64_t attrint(const Ins *i, const char *key, int64_t dflt);
double attrfloat(const Ins *i, const char *key, double dflt);
const char *attrstr(const Ins *i, const char *key);
/* The dtype in's value is stored in when a pass chose 16 bits for it
 * (the attribute store = "bf16" or "f16": passes/precision.c), else
 * DNone: its type's.  Arithmetic stays in the type's dtype; the value
 * is rounded to the stored one where it is written. */
int storedtype(const Ins *in);
/* The 16-bit format in's value is rounded to but kept in float32 (the
 * attribute round = "bf16": a dense transform's weights under bf16,
 * passes/precision.c), else DNone. */
int rounddtype(const Ins *in);
const Attr *attrfind(const Attr *a, int n, const char *key);
bool attrgetdim(const Attr *a, Dim *d);              /* a may be NULL */
int attrgetdims(const Attr *a, Dim *d, int max);     /* count or -1 */
/* A dim attribute may be stored as ADim or, when constant, as AInt (the
 * IR parser cannot tell them apart); these accept both. */
bool attrdim(const Ins *i, const char *key, Dim *d);
int attrdims(const Ins *i, const char *key, Dim *d, int max); /* count or -1 */
Attr mkattrint(Arena *a, const char *key, int64_t v);
Attr mkattrbool(Arena *a, const char *key, bool v);
Attr mkattrfloat(Arena *a, const char *key, double v);
Attr mkattrstr(Arena *a, const char *key, const char *s);
Attr mkattrdim(Arena *a, const char *key, Dim d);
Attr mkattrints(Arena *a, const char *key, const int64_t *v, int n);
Attr mkattrdims(Arena *a, const char *key, const Dim *v, int n);
/* Set attribute a.key of in (replacing it, or appending), or remove key.
 * Both copy the array first: it may be shared with another instruction. */
void putattr(Fn *fn, Ins *in, Attr a);
/* 64-bit FNV-1a of the string s and a separator, continuing from h
 * (HashSeed to start): for keys that are sequences of fields. */
#define HashSeed 1469598103934665603ull
uint64_t hashstr(uint64_t h, const char *s);
void dropattr(Fn *fn, Ins *in, const char *key);
void filluse(Fn *fn);          /* recompute val[].nuse and val[].def */
/* How often v is read, as an instruction's operand or a returned value,
 * counted now (val[].nuse is filluse's, perhaps stale); *at (if not
 * NULL) the last instruction that reads it, -1 for none. */
int usecount(const Fn *fn, Ref v, int *at);
void moveins(Fn *fn, int from, int to);   /* instruction from to index to, those between shifted; val[].def kept */
/* The value whose storage v is: v followed through the definitions of
 * alias ops (Falias: reshape, dropout) to the first value that is not
 * one; v itself when it is not an alias.  The one such walk: memplan,
 * codegen and the reports must agree on it. */
Ref storageroot(const Fn *fn, Ref v);
/* The dtype v's memory holds: a 16-bit type's own (a model's input or
 * output in 16 bits), else storedtype() of the instruction that makes
 * v's storage (storageroot), or DNone (its type's dtype); and the bytes
 * an element of that memory takes.  memplan, codegen and the reports
 * size and read 16-bit values through these.  fn's val[].def must be
 * current (filluse). */
int valstoredtype(const Fn *fn, Ref v);
int valelemsize(const Fn *fn, Ref v);

/* typecheck.c ----------------------------------------------------------- */

/*
 * Result type of op applied to operands of types at[0..n) with attributes.
 * decl: declared result type for ops that need one (leaves, Fdyn, cast),
 * else NULL.  On error returns false and writes a one-line message
 * (without location) to err.  Shared by the frontend, the IR parser and
 * the verifier, so all three agree on what is well typed.
 */
bool typecheckop(Mod *m, int op, const Type *at, int n,
                 const Attr *attr, int nattr, const Type *decl,
                 Type *out, char *err, size_t errlen);
/* "group" (fusion group) and "slot" (memory slot): scheduling attributes
 * any op may carry; set by passes, read by codegen, ignored by the
 * interpreter.  ("store", the 16-bit storage of a float value, any op
 * may carry too; the interpreter rounds to it: storedtype().)  (The schedule is a typed field, Ins.sched, not an
 * attribute.) */
bool isschedattr(const char *key);
/* NumPy broadcast of two shapes; false if incompatible. */
bool broadcast(const Type *a, const Type *b, Type *out);

/* print.c --------------------------------------------------------------- */

void printmod(FILE *f, Mod *m);
void printfn(FILE *f, Fn *fn);
/* The names printfn gives fn's values, without the '%': the hint, else
 * hint.1, hint.2, ..., or the next free number; unique within fn.  An
 * array of fn->nval strings and a NULL; free with freevalnames(). */
char **valnames(Fn *fn);
void freevalnames(char **name);
/* A float as the IR prints it: the shortest form that reads back as the
 * same double, always with '.', 'e', inf or nan.  snprintf-style. */
int snprintfloat(char *buf, size_t n, double v);

/* parse.c --------------------------------------------------------------- */

/* Parse IR text; errors go through errorat with file/line/col of the
 * text.  Returns NULL if any error was reported. */
Mod *parseir(const char *file, const char *text, size_t len);

/* sched.c --------------------------------------------------------------- */

void scheddefault(Sched *s);
bool schedequal(const Sched *a, const Sched *b);
/* every field in its range, lanes a power of two: 0, or -1 and why */
int schedvalid(const Sched *s, char *err, size_t errlen);
/* the shared memory bytes of a tiled-GEMM schedule (bm..tn set) */
int gemmsharedbytes(const Sched *s);
/* "lanes=8,rows=32" or "default": 0, or -1 with a message in err.  The
 * text form exists only at the boundaries (IR text, --schedule, the
 * tuning cache). */
int schedparse(const char *text, Sched *s, char *err, size_t errlen);
/* the canonical text: non-default fields in a fixed order, or "default" */
void schedprint(char *buf, size_t n, const Sched *s);
/* in's schedule (the reference when it has none) */
void schedof(const Ins *in, Sched *s);
/* whether in carries a schedule (IR text or a pass put one there) */
bool hassched(const Ins *in);
void putsched(Ins *in, const Sched *s);
void dropsched(Ins *in);
/* For the IR parser: take the attribute "sched" out of attr[0..*nattr)
 * and parse it into *s (*has: whether there was one).  0, or -1 with a
 * message in err (not a string, a bad field: a parse error). */
int schedtake(Attr *attr, int *nattr, Sched *s, bool *has, char *err, size_t errlen);

/* verify.c -------------------------------------------------------------- */

/* Checks SSA form, operand counts, attributes and types (through
 * typecheckop).  On failure prints "after pass 'P': msg" to stderr for
 * each problem and returns false. */
bool verifyfn(Fn *fn, const char *after);
bool verifymod(Mod *m, const char *after);

#endif
