/*
 * Internal interface of semantic analysis, shared by load.c (files,
 * imports, the definition table), sema.c (statements, expressions, layer
 * instantiation) and builtins.c (the primitives).
 *
 * Sema is a partial evaluator.  Everything that is not a tensor or a
 * graph (ints, floats, bools, strings, lists, dims, layers) is a
 * compile-time value (CVal) computed while the compiler walks the model;
 * tensor expressions become IR instructions in the model's function.
 * Layers are instantiated by evaluating their bodies with the constructor
 * arguments bound, and their forwards are inlined at each call.
 */
#ifndef GNNCC_SEMA_H
#define GNNCC_SEMA_H

#include "ast.h"
#include "frontend.h"

typedef struct CVal CVal;
typedef struct Scope Scope;
typedef struct Inst Inst;

enum CKind {
	CNone,      /* poison: an error was already reported */
	CInt, CFloat, CBool, CStr,
	CList,      /* elems[0..n) */
	CDimv,      /* a size: symbolic (N, E + N) or a constant */
	CSpec,      /* a layer constructor applied to arguments, not yet built */
	CInst,      /* a layer instance */
	CArr,       /* layer array: layer lins[i] = ... */
	CTensor,    /* an IR value */
	CGraph,     /* an IR value of graph type */
	CHetero,    /* a heterogeneous graph: its relations (het) */
	CDict,      /* keys[0..n) to elems[0..n), in insertion order */
};

typedef struct Spec {
	Node *def;                  /* ND_LAYER */
	Node *call;                 /* ND_CALL, for locations and arg names */
	CVal *args;                 /* evaluated positional then keyword */
	const char **kw;            /* NULL for a positional argument */
	int nargs;
} Spec;

typedef struct InstArr {
	Inst **v;
	int n;
	/* keyed by strings (layer conv1["author__writes__paper"] = ...,
	 * PyG's ModuleDict): key[i] holds kv[i] */
	const char **key;
	Inst **kv;
	int nkey;
} InstArr;

/* A heterogeneous graph (graph[types; (src, rel, dst), ...]): one
 * relation input per edge type, named src__rel__dst */
typedef struct Hetero {
	int nnode, nedge;
	const char **node;          /* node types, in order */
	const char *(*edge)[3];     /* edge types */
	const char **key;           /* src__rel__dst */
	Ref *rel;                   /* the relation inputs */
} Hetero;

struct CVal {
	int kind;
	int64_t i;                  /* CInt, CBool */
	double f;                   /* CFloat */
	const char *s;              /* CStr */
	CVal *elems;                /* CList, CDict */
	CVal *keys;                 /* CDict: strings, ints, bools or tuples of them */
	int n;
	Dim dim;                    /* CDimv */
	Ref ref;                    /* CTensor, CGraph */
	Spec *spec;
	Inst *inst;
	InstArr *arr;
	Hetero *het;                /* CHetero */
};

typedef struct Binding {
	const char *name;
	CVal v;
	int how;                    /* BArg, BDecl, BLocal */
	Loc loc;
	struct Binding *next;
} Binding;
enum { BArg, BDecl, BLocal };

struct Scope {
	Binding *head;
	Scope *parent;
};

struct Inst {
	Node *def;                  /* ND_LAYER */
	const char *path;           /* "conv1.lin": prefix of its param names */
	Scope scope;                /* constructor args and declarations */
	Node *forward;              /* ND_FN, or NULL */
	Loc loc;                    /* where it was declared */
};

/* evaluation context: where names resolve and what values are called */
typedef struct Ctx {
	Scope *sc;
	const char *prefix;         /* "conv1." inside conv1, "" in a model */
	Inst *self;                 /* the instance whose body or forward runs */
	bool intensor;              /* tensor code allowed (fn or model body) */
	bool inlayerbody;           /* declarations allowed */
} Ctx;

/* global state of one compilation */
typedef struct Sema {
	Arena *arena;
	Mod *mod;
	Fn *fn;                     /* the model being lowered */
	const FrontOpts *opts;
	int depth;                  /* instantiation and call depth */
	int nest;                   /* eval and execstmt recursion */
	bool toodeep;               /* nest hit its limit (reported) */
	long unrolled;              /* for iterations in this model */
	long copied;                /* list and dict elements copied by + in this model */
	struct {                    /* for notes after an error */
		const char *what;
		Loc loc;
	} frame[64];
	int nframe;
	/* training (lowertrain): the model's body in training mode */
	bool training;
	Ref key;                    /* the dropout key input, i64[2] */
	int nstream;                /* dropout streams so far */
	struct {                    /* update(buffer, value) */
		const char *name;
		Ref v;
	} upd[64];
	int nupd;
	/* src(g) and dst(g) of relations: the node set their values index,
	 * so that gathering or scattering with them over another node type
	 * is an error at the call (a list in the arena; few per model) */
	struct IdxRange {
		const Fn *fn;
		Ref ref;
		Dim nodes;
		const char *what;   /* "src of graph[N_a -> N_p, E]" */
		struct IdxRange *next;
	} *idxrange;
} Sema;

extern Sema S;

/* load.c */
Node *lookupdef(const char *name);             /* ND_LAYER or ND_MODEL */
const char *closestname(const char *name, const char *const *extra);

/* sema.c */
void serror(Loc l, const char *fmt, ...);      /* errorat + instantiation notes */
CVal eval(Ctx *c, Node *n);
bool binding(Ctx *c, const char *name, CVal *v);
void bind(Scope *sc, const char *name, CVal v, int how, Loc l);
const char *kindname(const CVal *v);
bool todim(Ctx *c, CVal v, Loc l, Dim *d);
CVal tensorval(Ref r);
CVal dictkeys(CVal d);                         /* its keys, a list */
/* false (said why at l) when idx is src/dst of a relation whose node
 * set is not the extent n that op indexes or scatters into */
bool indexfits(Ref idx, Dim n, const char *op, Loc l);
Type vtype(CVal v);
void lowermodel(Node *model);
/* the train items of main, and with o->train every model without one */
void lowertrains(File *main, const FrontOpts *o);
const char *tystr(Type t);                    /* in S.arena: for messages */
/* A formatted string sized to fit, in a: names nest without limit. */

/* builtins.c */
bool isbuiltin(const char *name);
CVal callbuiltin(Ctx *c, Node *call, const char *name);
const char *builtinname(int i);
/* Bind call arguments to formal names.  names: formal names, nreq: how
 * many are required; out/given sized nf.  Reports errors (too many,
 * unknown keyword, duplicates, missing) naming what; false on error. */
bool bindargs(Ctx *c, Node *call, const char *what, const char *const *names,
              int nf, int nreq, CVal *out, bool *given);
/* loss name ("nll", "cross_entropy", "bce", "mse" or a primitive's
 * name) of x against target over mask (hasmask), as a float scalar */
CVal lowerloss(Ctx *c, const char *name, CVal x, CVal target, CVal mask, bool hasmask, Loc l);
/* tensor from a compile-time number, with the dtype of its partner */
Ref scalarconst(Ctx *c, CVal v, int dtype, Loc l);
CVal emitop(Ctx *c, int op, const Ref *arg, int narg, const Attr *attr, int nattr,
            const Type *decl, Loc l);

#endif
