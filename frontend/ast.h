/*
 * The abstract syntax tree of the gnncc language, as the parser builds it.
 *
 * One Node type for everything, in chibicc's manner: a kind, a location,
 * and the few fields that kind uses (documented per kind below).  Lists
 * are arrays of Node pointers in the module's arena.  The parser makes no
 * semantic decisions: names, layers, shapes and dtypes are resolved by
 * sema.c, which also evaluates every compile-time expression.
 */
#ifndef GNNCC_AST_H
#define GNNCC_AST_H

#include "../ir/ir.h"

typedef struct Node Node;

typedef struct NodeList {
	Node **v;
	int n;
} NodeList;

enum NodeKind {
	/* top level (File.items) */
	ND_IMPORT,   /* str: the path as written */
	ND_MODEL,    /* name, params (ND_PARAM), rets (type nodes), body */
	ND_LAYER,    /* name, params (ND_PARAM: constructor args), body */
	ND_TRAIN,    /* name (the model's), params (its outputs, then targets), body */

	/* a formal parameter: name, type (may be NULL in a layer constructor:
	 * then any compile-time value), init (default; may be NULL) */
	ND_PARAM,

	/* statements (body lists) */
	ND_FN,       /* name, params, rets, body   ("fn forward(...) -> T { }") */
	ND_LAYERDECL,/* name, index (NULL or expr: "layer lins[i] = ..."), init (expr) */
	ND_PARAMDECL,/* name, index (NULL or expr), type, init (NULL or expr); ival 1: a buffer */
	ND_ASSIGN,   /* name, init (expr) */
	ND_RETURN,   /* args: one or more exprs */
	ND_IF,       /* cond, body (then), els (NULL, or a list holding one ND_IF or statements) */
	ND_FOR,      /* name (loop var), init (iterable expr), body */
	ND_EXPRSTMT, /* init: the expression (a call such as assert(...)) */

	/* expressions */
	ND_NAME,     /* name */
	ND_INT,      /* ival */
	ND_FLOAT,    /* fval */
	ND_STR,      /* str (unescaped) */
	ND_BOOL,     /* ival 0/1 */
	ND_BINARY,   /* op (a BinOp), lhs, rhs */
	ND_UNARY,    /* op (UNeg / UNot), lhs */
	ND_CALL,     /* lhs: callee expression (usually ND_NAME), args; each arg
	                may be an ND_KWARG */
	ND_KWARG,    /* name = lhs */
	ND_INDEX,    /* lhs [ args ] */
	ND_MEMBER,   /* lhs . name   (".T") */
	ND_LIST,     /* [ args ], or a tuple ( a, ... ) with ival 1 */
	ND_DICT,     /* { args: key, value, key, value, ... } */

	/* types */
	ND_TTENSOR,  /* ival: dtype (enum DType); args: dim exprs (may be empty) */
	ND_TGRAPH,   /* args: 0, 2 or 3 dim exprs; ival 1: a relation, args Ns, Nd, E;
	                ival 2: heterogeneous, args its edge types (ND_LIST of 3
	                ND_STR), lhs NULL or an ND_LIST of node type names */
	ND_TSCALAR,  /* ival: a ScalarKind (int/float/bool/str/layer) */
};

enum BinOp {
	BAdd, BSub, BMul, BDiv, BMatmul, BPow,
	BEq, BNe, BLt, BLe, BGt, BGe,
	BAnd, BOr,
};
enum UnOp { UNeg, UNot };
enum ScalarKind { SInt, SFloat, SBool, SStr, SLayer };

struct Node {
	int kind;
	Loc loc;             /* the token that best names the node: for a
	                        binary op its operator, for a call the callee */
	const char *name;
	const char *str;
	int64_t ival;
	double fval;
	int op;
	Node *lhs, *rhs;
	Node *cond;
	Node *index;
	Node *type;
	Node *init;
	NodeList params;
	NodeList rets;
	NodeList args;
	NodeList body;
	NodeList els;
};

typedef struct File {
	const char *path;    /* as opened */
	const char *text;    /* whole source, NUL-terminated */
	size_t len;
	NodeList items;
} File;

/*
 * Parse one source file.  Syntax errors are reported through errorat
 * (several per file where bison can recover); returns NULL if there was
 * any.  Nodes live in arena a.
 */
File *parsefile(Arena *a, const char *path, const char *text, size_t len);

/* ast.c: constructors and a debug printer, used by the parser and tests */
Node *newnode(Arena *a, int kind, Loc loc);
void listpush(Arena *a, NodeList *l, Node *n);
void dumpnode(FILE *f, const Node *n, int indent);
/* dumpnode prints the locations of items and statements; set this to
 * print those of expressions and types too. */
extern bool dumplocs;

#endif
