/*
 * Grammar of the gnncc language (docs/language.md), for bison 3.8.
 *
 * A pure LALR(1) parser with no conflicts (%expect 0).  The precedence
 * ladder is written out as one nonterminal per level rather than with
 * %left/%right, so every level's shape is visible and nothing is
 * resolved silently.
 *
 * Statements have no separators, so an expression statement must not
 * be able to begin with a token that could also continue the previous
 * statement ("x = a" then "-b" or "(b)" or "[b]").  Expression
 * statements therefore start with a name: the n* nonterminals are a
 * copy of the ladder whose leftmost token is a name.
 *
 * "in" is a keyword only between a for variable and its range; the lexer
 * always returns IN and the ident nonterminal accepts it as a name.
 *
 * Errors: a custom yyreport_syntax_error names the token found (with its
 * text) and, when the list is short, what would have been accepted; LAC
 * makes that list exact.  Recovery happens at statement and item level;
 * after an error the lexer skips to the start of the next line (see
 * recover() below and yylex() in lexer.l) so one error gives one message.
 */

%require "3.8"
%define api.pure full
%define api.location.type {Loc}
%define parse.error custom
%define parse.lac full
%locations
%expect 0

%param {yyscan_t scanner}
%parse-param {PState *ps}

%code requires {
#include "ast.h"

#ifndef YY_TYPEDEF_YY_SCANNER_T
#define YY_TYPEDEF_YY_SCANNER_T
typedef void *yyscan_t;
#endif

typedef struct PState PState;

/* Loc is a single point: a node is located at its first token. */
#define YYLLOC_DEFAULT(Cur, Rhs, N)			\
	do {						\
		if (N)					\
			(Cur) = YYRHSLOC(Rhs, 1);	\
		else					\
			(Cur) = YYRHSLOC(Rhs, 0);	\
	} while (0)
}

%code provides {
/* What the parser and the lexer share for one file. */
struct PState {
	Arena *a;
	const char *path;
	const char *src;
	size_t len;
	File *file;
	int nerr;            /* errors reported for this file */

	/* lexer position of the next byte */
	size_t off;
	int line, col;
	int sawnl;           /* a newline since the last token */

	/* the last token returned: bison's lookahead when it reports an error */
	int tok;
	int bol;             /* it was the first token on its line */
	size_t tokoff, toklen;

	/* error recovery: skip tokens up to the next line (SkipStmt) or the
	 * next top-level item (SkipItem), minding nested braces */
	int skip;
	int skipdepth;
};

enum { SkipNone, SkipStmt, SkipItem };

int yylex(YYSTYPE *lval, YYLTYPE *lloc, yyscan_t scanner);
void perr(PState *ps, Loc l, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));
}

%code {
#include <string.h>

static void yyerror(YYLTYPE *loc, yyscan_t scanner, PState *ps, const char *msg);
static Node *bin(PState *ps, int op, Loc l, Node *lhs, Node *rhs);
static Node *un(PState *ps, int op, Loc l, Node *lhs);
static Node *call(PState *ps, Loc l, Node *callee, NodeList args);
static Node *postfix(PState *ps, int kind, Loc l, Node *lhs, NodeList args);
static Node *member(PState *ps, Loc l, Node *lhs, const char *name);
static NodeList list1(PState *ps, Node *n);
static int istuple(const Node *n);
static NodeList edgetypes(PState *ps, NodeList l);
static void recover(PState *ps, int mode, int la, int *clear);
}

%union {
	Node *node;
	NodeList list;
	const char *str;
	int64_t ival;
	double fval;
	int op;
}

%token <str> IDENT "identifier"
%token <ival> INT "integer"
%token <fval> FLOAT "number"
%token <str> STRING "string"
%token <ival> DTYPE "dtype"
%token <ival> SCALARTY "type name"
%token MODEL "'model'" LAYER "'layer'" FN "'fn'" PARAM "'param'"
%token BUFFER "'buffer'" TRAIN "'train'"
%token RETURN "'return'" IF "'if'" ELSE "'else'" FOR "'for'" IN "'in'"
%token IMPORT "'import'" ASSERT "'assert'" AND "'and'" OR "'or'"
%token NOT "'not'" TRUE "'true'" FALSE "'false'" GRAPH "'graph'"
%token BOOL "'bool'"
%token ARROW "'->'" POW "'**'" EQ "'=='" NE "'!='" LE "'<='" GE "'>='"

%type <str> ident
%type <node> item formal opttype optinit type stmt ifstmt
%type <node> expr or_e and_e not_e cmp_e add_e mul_e un_e pow_e post_e primary arg
%type <node> nexpr nor_e nand_e ncmp_e nadd_e nmul_e npow_e npost_e
%type <list> formals formallist rettype typelist block stmts
%type <list> exprlist dimsopt args arglist listopt dictopt dictlist
%type <op> cmpop addop mulop

%%

file:
	  %empty
	| file item	{ if ($2) listpush(ps->a, &ps->file->items, $2); }
	;

item:
	  IMPORT STRING
		{ $$ = newnode(ps->a, ND_IMPORT, @2); $$->str = $2; }
	| MODEL ident '(' formals ')' ARROW rettype block
		{
			$$ = newnode(ps->a, ND_MODEL, @2);
			$$->name = $2;
			$$->params = $4;
			$$->rets = $7;
			$$->body = $8;
		}
	| TRAIN ident '(' formals ')' block
		{
			$$ = newnode(ps->a, ND_TRAIN, @2);
			$$->name = $2;
			$$->params = $4;
			$$->body = $6;
		}
	| LAYER ident '(' formals ')' block
		{
			$$ = newnode(ps->a, ND_LAYER, @2);
			$$->name = $2;
			$$->params = $4;
			$$->body = $6;
		}
	| error
		{
			int clear;

			$$ = NULL;
			recover(ps, SkipItem, yychar, &clear);
			if (clear)
				yyclearin;
		}
	;

ident:
	  IDENT	{ $$ = $1; }
	| IN	{ $$ = "in"; }
	;

formals:
	  %empty		{ $$ = (NodeList){0}; }
	| formallist
	| formallist ','
	;

formallist:
	  formal		{ $$ = list1(ps, $1); }
	| formallist ',' formal	{ $$ = $1; listpush(ps->a, &$$, $3); }
	;

formal:
	  ident opttype optinit
		{
			$$ = newnode(ps->a, ND_PARAM, @1);
			$$->name = $1;
			$$->type = $2;
			$$->init = $3;
		}
	;

opttype:
	  %empty	{ $$ = NULL; }
	| ':' type	{ $$ = $2; }
	;

optinit:
	  %empty	{ $$ = NULL; }
	| '=' expr	{ $$ = $2; }
	;

rettype:
	  type			{ $$ = list1(ps, $1); }
	| '(' typelist ')'	{ $$ = $2; }
	;

typelist:
	  type			{ $$ = list1(ps, $1); }
	| typelist ',' type	{ $$ = $1; listpush(ps->a, &$$, $3); }
	;

/* "bool" is a dtype when a '[' follows and the scalar type otherwise. */
type:
	  DTYPE '[' dimsopt ']'
		{ $$ = newnode(ps->a, ND_TTENSOR, @1); $$->ival = $1; $$->args = $3; }
	| BOOL '[' dimsopt ']'
		{ $$ = newnode(ps->a, ND_TTENSOR, @1); $$->ival = DBool; $$->args = $3; }
	| BOOL
		{ $$ = newnode(ps->a, ND_TSCALAR, @1); $$->ival = SBool; }
	| SCALARTY
		{ $$ = newnode(ps->a, ND_TSCALAR, @1); $$->ival = $1; }
	| LAYER
		{ $$ = newnode(ps->a, ND_TSCALAR, @1); $$->ival = SLayer; }
	| GRAPH
		{ $$ = newnode(ps->a, ND_TGRAPH, @1); }
	| GRAPH '[' exprlist ']'
		{
			/* dimensions, or a heterogeneous graph's edge types
			 * (PyG's metadata), which are tuples: an edge type
			 * parses as a tuple expression, so the two share one
			 * rule.  Dimensions are counted here rather than in
			 * the grammar for a clearer message than a syntax
			 * error. */
			$$ = newnode(ps->a, ND_TGRAPH, @1);
			if (istuple($3.v[0])) {
				$$->ival = 2;
				$$->args = edgetypes(ps, $3);
			} else {
				if ($3.n != 2 && $3.n != 3)
					perr(ps, @2, "graph type takes 2 or 3 dimensions "
					    "(nodes, edges[, graphs]), not %d", $3.n);
				$$->args = $3;
			}
		}
	| GRAPH '[' exprlist ';' exprlist ']'
		{
			/* a heterogeneous graph with its node types declared */
			$$ = newnode(ps->a, ND_TGRAPH, @1);
			$$->ival = 2;
			$$->args = edgetypes(ps, $5);
			$$->lhs = newnode(ps->a, ND_LIST, @3);
			$$->lhs->args = $3;
		}
	| GRAPH '[' expr ARROW expr ',' expr ']'
		{
			/* a relation: sources of one node type, targets of another */
			$$ = newnode(ps->a, ND_TGRAPH, @1);
			$$->ival = 1;
			$$->args = list1(ps, $3);
			listpush(ps->a, &$$->args, $5);
			listpush(ps->a, &$$->args, $7);
		}
	;

dimsopt:
	  %empty	{ $$ = (NodeList){0}; }
	| exprlist
	;

block:
	  '{' stmts '}'	{ $$ = $2; }
	;

stmts:
	  %empty	{ $$ = (NodeList){0}; }
	| stmts stmt	{ $$ = $1; if ($2) listpush(ps->a, &$$, $2); }
	| stmts ';'	{ $$ = $1; }
	;

stmt:
	  LAYER ident '=' expr
		{ $$ = newnode(ps->a, ND_LAYERDECL, @2); $$->name = $2; $$->init = $4; }
	| LAYER ident '[' expr ']' '=' expr
		{
			$$ = newnode(ps->a, ND_LAYERDECL, @2);
			$$->name = $2;
			$$->index = $4;
			$$->init = $7;
		}
	| PARAM ident ':' type optinit
		{
			$$ = newnode(ps->a, ND_PARAMDECL, @2);
			$$->name = $2;
			$$->type = $4;
			$$->init = $5;
		}
	| BUFFER ident ':' type optinit
		{
			$$ = newnode(ps->a, ND_PARAMDECL, @2);
			$$->name = $2;
			$$->type = $4;
			$$->init = $5;
			$$->ival = 1;
		}
	| PARAM ident '[' expr ']' ':' type optinit
		{
			$$ = newnode(ps->a, ND_PARAMDECL, @2);
			$$->name = $2;
			$$->index = $4;
			$$->type = $7;
			$$->init = $8;
		}
	| FN ident '(' formals ')' ARROW rettype block
		{
			$$ = newnode(ps->a, ND_FN, @2);
			$$->name = $2;
			$$->params = $4;
			$$->rets = $7;
			$$->body = $8;
		}
	| FN ident '(' formals ')' block
		{
			/* no declared return type: returns any value (a dict
			 * of per-type tensors, HeteroConv's) */
			$$ = newnode(ps->a, ND_FN, @2);
			$$->name = $2;
			$$->params = $4;
			$$->body = $6;
		}
	| ident '=' expr
		{ $$ = newnode(ps->a, ND_ASSIGN, @1); $$->name = $1; $$->init = $3; }
	| RETURN exprlist
		{ $$ = newnode(ps->a, ND_RETURN, @1); $$->args = $2; }
	| ifstmt
	| FOR ident IN expr block
		{
			$$ = newnode(ps->a, ND_FOR, @2);
			$$->name = $2;
			$$->init = $4;
			$$->body = $5;
		}
	| nexpr
		{ $$ = newnode(ps->a, ND_EXPRSTMT, @1); $$->init = $1; }
	| error
		{
			int clear;

			$$ = NULL;
			recover(ps, SkipStmt, yychar, &clear);
			if (clear)
				yyclearin;
		}
	;

/* ELSE cannot start a statement, so there is no dangling-else conflict. */
ifstmt:
	  IF expr block
		{ $$ = newnode(ps->a, ND_IF, @1); $$->cond = $2; $$->body = $3; }
	| IF expr block ELSE block
		{
			$$ = newnode(ps->a, ND_IF, @1);
			$$->cond = $2;
			$$->body = $3;
			$$->els = $5;
		}
	| IF expr block ELSE ifstmt
		{
			$$ = newnode(ps->a, ND_IF, @1);
			$$->cond = $2;
			$$->body = $3;
			$$->els = list1(ps, $5);
		}
	;

exprlist:
	  expr			{ $$ = list1(ps, $1); }
	| exprlist ',' expr	{ $$ = $1; listpush(ps->a, &$$, $3); }
	;

/* The precedence ladder, lowest first. */
expr: or_e;

or_e:
	  or_e OR and_e		{ $$ = bin(ps, BOr, @2, $1, $3); }
	| and_e
	;

and_e:
	  and_e AND not_e	{ $$ = bin(ps, BAnd, @2, $1, $3); }
	| not_e
	;

not_e:
	  NOT not_e		{ $$ = un(ps, UNot, @1, $2); }
	| cmp_e
	;

/* Comparisons do not associate: "a < b < c" is a syntax error. */
cmp_e:
	  add_e cmpop add_e	{ $$ = bin(ps, $2, @2, $1, $3); }
	| add_e
	;

cmpop:
	  EQ	{ $$ = BEq; }
	| NE	{ $$ = BNe; }
	| '<'	{ $$ = BLt; }
	| LE	{ $$ = BLe; }
	| '>'	{ $$ = BGt; }
	| GE	{ $$ = BGe; }
	;

add_e:
	  add_e addop mul_e	{ $$ = bin(ps, $2, @2, $1, $3); }
	| mul_e
	;

addop:
	  '+'	{ $$ = BAdd; }
	| '-'	{ $$ = BSub; }
	;

mul_e:
	  mul_e mulop un_e	{ $$ = bin(ps, $2, @2, $1, $3); }
	| un_e
	;

mulop:
	  '*'	{ $$ = BMul; }
	| '/'	{ $$ = BDiv; }
	| '@'	{ $$ = BMatmul; }
	;

un_e:
	  '-' un_e		{ $$ = un(ps, UNeg, @1, $2); }
	| pow_e
	;

/* Right-associative, and the exponent may be negated: 2 ** -x ** 2. */
pow_e:
	  post_e POW un_e	{ $$ = bin(ps, BPow, @2, $1, $3); }
	| post_e
	;

post_e:
	  primary
	| post_e '(' args ')'		{ $$ = call(ps, @1, $1, $3); }
	| post_e '[' exprlist ']'	{ $$ = postfix(ps, ND_INDEX, @2, $1, $3); }
	| post_e '.' ident		{ $$ = member(ps, @3, $1, $3); }
	;

primary:
	  ident
		{ $$ = newnode(ps->a, ND_NAME, @1); $$->name = $1; }
	| ASSERT
		{ $$ = newnode(ps->a, ND_NAME, @1); $$->name = "assert"; }
	| INT
		{ $$ = newnode(ps->a, ND_INT, @1); $$->ival = $1; }
	| FLOAT
		{ $$ = newnode(ps->a, ND_FLOAT, @1); $$->fval = $1; }
	| STRING
		{ $$ = newnode(ps->a, ND_STR, @1); $$->str = $1; }
	| TRUE
		{ $$ = newnode(ps->a, ND_BOOL, @1); $$->ival = 1; }
	| FALSE
		{ $$ = newnode(ps->a, ND_BOOL, @1); $$->ival = 0; }
	| '(' expr ')'
		{ $$ = $2; }
	| '(' expr ',' listopt ')'
		{
			/* a tuple: a list (ival 1 remembers the parentheses,
			 * for edge types in graph[...]) */
			$$ = newnode(ps->a, ND_LIST, @1);
			$$->ival = 1;
			$$->args = list1(ps, $2);
			for (int i = 0; i < $4.n; i++)
				listpush(ps->a, &$$->args, $4.v[i]);
		}
	| '[' listopt ']'
		{ $$ = newnode(ps->a, ND_LIST, @1); $$->args = $2; }
	| '{' dictopt '}'
		{ $$ = newnode(ps->a, ND_DICT, @1); $$->args = $2; }
	;

/* key, value, key, value, ... */
dictopt:
	  %empty	{ $$ = (NodeList){0}; }
	| dictlist
	| dictlist ','
	;

dictlist:
	  expr ':' expr
		{ $$ = list1(ps, $1); listpush(ps->a, &$$, $3); }
	| dictlist ',' expr ':' expr
		{ $$ = $1; listpush(ps->a, &$$, $3); listpush(ps->a, &$$, $5); }
	;

listopt:
	  %empty	{ $$ = (NodeList){0}; }
	| exprlist
	| exprlist ','
	;

args:
	  %empty	{ $$ = (NodeList){0}; }
	| arglist
	| arglist ','
	;

arglist:
	  arg			{ $$ = list1(ps, $1); }
	| arglist ',' arg	{ $$ = $1; listpush(ps->a, &$$, $3); }
	;

arg:
	  expr
	| ident '=' expr
		{ $$ = newnode(ps->a, ND_KWARG, @1); $$->name = $1; $$->lhs = $3; }
	;

/* The ladder again for expression statements, which start with a name:
 * no unary minus, no not, no literal, no parenthesis or list first. */
nexpr: nor_e;

nor_e:
	  nor_e OR and_e	{ $$ = bin(ps, BOr, @2, $1, $3); }
	| nand_e
	;

nand_e:
	  nand_e AND not_e	{ $$ = bin(ps, BAnd, @2, $1, $3); }
	| ncmp_e
	;

ncmp_e:
	  nadd_e cmpop add_e	{ $$ = bin(ps, $2, @2, $1, $3); }
	| nadd_e
	;

nadd_e:
	  nadd_e addop mul_e	{ $$ = bin(ps, $2, @2, $1, $3); }
	| nmul_e
	;

nmul_e:
	  nmul_e mulop un_e	{ $$ = bin(ps, $2, @2, $1, $3); }
	| npow_e
	;

npow_e:
	  npost_e POW un_e	{ $$ = bin(ps, BPow, @2, $1, $3); }
	| npost_e
	;

npost_e:
	  ident
		{ $$ = newnode(ps->a, ND_NAME, @1); $$->name = $1; }
	| ASSERT
		{ $$ = newnode(ps->a, ND_NAME, @1); $$->name = "assert"; }
	| npost_e '(' args ')'		{ $$ = call(ps, @1, $1, $3); }
	| npost_e '[' exprlist ']'	{ $$ = postfix(ps, ND_INDEX, @2, $1, $3); }
	| npost_e '.' ident		{ $$ = member(ps, @3, $1, $3); }
	;

%%

void
perr(PState *ps, Loc l, const char *fmt, ...)
{
	va_list ap;

	ps->nerr++;
	va_start(ap, fmt);
	verrorat(l, fmt, ap);
	va_end(ap);
}

static Node *
bin(PState *ps, int op, Loc l, Node *lhs, Node *rhs)
{
	Node *n = newnode(ps->a, ND_BINARY, l);

	n->op = op;
	n->lhs = lhs;
	n->rhs = rhs;
	return n;
}

static Node *
un(PState *ps, int op, Loc l, Node *lhs)
{
	Node *n = newnode(ps->a, ND_UNARY, l);

	n->op = op;
	n->lhs = lhs;
	return n;
}

/* A call is located at the start of its callee (YYLLOC_DEFAULT makes @1
 * of a nonterminal its first token), so "f(x)(y)" reports at f. */
static Node *
call(PState *ps, Loc l, Node *callee, NodeList args)
{
	Node *n = newnode(ps->a, ND_CALL, l);

	n->lhs = callee;
	n->args = args;
	return n;
}

static Node *
postfix(PState *ps, int kind, Loc l, Node *lhs, NodeList args)
{
	Node *n = newnode(ps->a, kind, l);

	n->lhs = lhs;
	n->args = args;
	return n;
}

static Node *
member(PState *ps, Loc l, Node *lhs, const char *name)
{
	Node *n = newnode(ps->a, ND_MEMBER, l);

	n->lhs = lhs;
	n->name = name;
	return n;
}

static NodeList
list1(PState *ps, Node *n)
{
	NodeList l = {0};

	listpush(ps->a, &l, n);
	return l;
}

static int
istuple(const Node *n)
{
	return n->kind == ND_LIST && n->ival == 1;
}

/* The edge types of graph[...], tuples of three names (src_type,
 * relation, dst_type), as lists of three ND_STR. */
static NodeList
edgetypes(PState *ps, NodeList l)
{
	NodeList out = {0};

	for (int i = 0; i < l.n; i++) {
		Node *t = l.v[i], *et;
		int ok = istuple(t) && t->args.n == 3;

		for (int k = 0; ok && k < 3; k++)
			ok = t->args.v[k]->kind == ND_NAME;
		if (!ok) {
			perr(ps, t->loc, "an edge type is a tuple of three names, (src_type, relation, dst_type)");
			continue;
		}
		et = newnode(ps->a, ND_LIST, t->loc);
		for (int k = 0; k < 3; k++) {
			Node *s = newnode(ps->a, ND_STR, t->args.v[k]->loc);
			s->str = t->args.v[k]->name;
			listpush(ps->a, &et->args, s);
		}
		listpush(ps->a, &out, et);
	}
	return out;
}

/*
 * Called from an error rule once bison has popped back to a statement
 * list (SkipStmt) or the item list (SkipItem) with lookahead la.  If the
 * lookahead begins a line, or closes the block, it is likely the start
 * of the next good statement: keep it.  Otherwise drop it and let the
 * lexer skip to the next line (or the next item keyword at brace depth
 * 0), so the rest of the broken line does not cause more errors.
 */
static void
recover(PState *ps, int mode, int la, int *clear)
{
	*clear = 0;
	if (la == YYEOF)
		return;
	if (la != YYEMPTY) {
		if (mode == SkipStmt && (la == '}' || la == ';' || ps->bol))
			return;
		if (mode == SkipItem && ps->bol &&
		    (la == MODEL || la == LAYER || la == IMPORT || la == TRAIN))
			return;
		*clear = 1;
	}
	ps->skip = mode;
	ps->skipdepth = la == '{';
}

/* Only "memory exhausted" comes here: parse.error custom reports the
 * syntax errors.  Bison's stack is bounded by YYMAXDEPTH. */
static void
yyerror(YYLTYPE *loc, yyscan_t scanner, PState *ps, const char *msg)
{
	(void)scanner;
	if (strcmp(msg, "memory exhausted") == 0)
		perr(ps, *loc, "nesting too deep (parser stack exhausted)");
	else
		perr(ps, *loc, "%s", msg);
}

static int
isin(const yysymbol_kind_t *v, int n, yysymbol_kind_t k)
{
	for (int i = 0; i < n; i++)
		if (v[i] == k)
			return 1;
	return 0;
}

/* Tokens that could continue an expression: when one of them is
 * expected, the others are too, and listing them helps nobody. */
static int
iscontinuation(yysymbol_kind_t k)
{
	static const char *const ops[] = {
		"'+'", "'-'", "'*'", "'/'", "'@'", "'**'", "'=='", "'!='",
		"'<'", "'<='", "'>'", "'>='", "'and'", "'or'", "'('", "'['",
		"'.'",
	};
	const char *s = yysymbol_name(k);

	for (size_t i = 0; i < sizeof ops / sizeof ops[0]; i++)
		if (strcmp(s, ops[i]) == 0)
			return 1;
	return 0;
}

static int
isexprstart(yysymbol_kind_t k)
{
	switch (k) {
	case YYSYMBOL_IDENT: case YYSYMBOL_IN: case YYSYMBOL_ASSERT:
	case YYSYMBOL_INT: case YYSYMBOL_FLOAT: case YYSYMBOL_STRING:
	case YYSYMBOL_TRUE: case YYSYMBOL_FALSE: case YYSYMBOL_NOT:
		return 1;
	default:
		return strcmp(yysymbol_name(k), "'('") == 0 ||
		    strcmp(yysymbol_name(k), "'['") == 0 ||
		    strcmp(yysymbol_name(k), "'{'") == 0 ||
		    strcmp(yysymbol_name(k), "'-'") == 0;
	}
}

static int
istypestart(yysymbol_kind_t k)
{
	return k == YYSYMBOL_DTYPE || k == YYSYMBOL_BOOL ||
	    k == YYSYMBOL_SCALARTY || k == YYSYMBOL_GRAPH ||
	    k == YYSYMBOL_LAYER;
}

/*
 * "syntax error: unexpected identifier 'x', expected ',' or ')'".  The
 * expected list is condensed: operators are left out, expression and
 * type starts become "expression" and "type", and a list still longer
 * than five is not printed at all.
 */
static int
yyreport_syntax_error(const yypcontext_t *ctx, yyscan_t scanner, PState *ps)
{
	yysymbol_kind_t tok, exp[YYNTOKENS];
	const char *what[YYNTOKENS];
	char found[128], expected[256];
	int n, m, i, hasops, hasexpr, hastype, hasident, saidexpr, saidtype;
	size_t len;

	(void)scanner;
	tok = yypcontext_token(ctx);
	if (tok == YYSYMBOL_YYEMPTY) {
		perr(ps, *yypcontext_location(ctx), "syntax error");
		return 0;
	}
	switch (tok) {
	case YYSYMBOL_IDENT: case YYSYMBOL_INT: case YYSYMBOL_FLOAT:
	case YYSYMBOL_STRING: case YYSYMBOL_DTYPE: case YYSYMBOL_SCALARTY:
		len = ps->toklen;
		if (len > 40)
			snprintf(found, sizeof found, "%s %s%.*s...%s",
			    yysymbol_name(tok), tok == YYSYMBOL_STRING ? "" : "'",
			    36, ps->src + ps->tokoff,
			    tok == YYSYMBOL_STRING ? "" : "'");
		else if (tok == YYSYMBOL_STRING)
			snprintf(found, sizeof found, "string %.*s",
			    (int)len, ps->src + ps->tokoff);
		else
			snprintf(found, sizeof found, "%s '%.*s'",
			    yysymbol_name(tok), (int)len, ps->src + ps->tokoff);
		break;
	default:
		snprintf(found, sizeof found, "%s", yysymbol_name(tok));
	}

	n = yypcontext_expected_tokens(ctx, exp, YYNTOKENS);
	if (n < 0)
		return 2;	/* LAC ran out of stack: report exhaustion */
	hasops = 0;
	for (i = 0; i < n; i++)
		if (strcmp(yysymbol_name(exp[i]), "'+'") == 0)
			hasops = 1;
	hasexpr = isin(exp, n, YYSYMBOL_INT);
	hastype = isin(exp, n, YYSYMBOL_DTYPE);
	hasident = isin(exp, n, YYSYMBOL_IDENT);
	saidexpr = saidtype = 0;
	m = 0;
	for (i = 0; i < n; i++) {
		yysymbol_kind_t k = exp[i];

		if (hasops && iscontinuation(k))
			continue;
		if (hasexpr && isexprstart(k)) {
			if (!saidexpr++)
				what[m++] = "expression";
			continue;
		}
		if (hastype && istypestart(k)) {
			if (!saidtype++)
				what[m++] = "type";
			continue;
		}
		if (hasident && k == YYSYMBOL_IN)
			continue;
		what[m++] = yysymbol_name(k);
	}

	expected[0] = 0;
	if (m > 0 && m <= 5) {
		len = 0;
		for (i = 0; i < m && len < sizeof expected; i++)
			len += snprintf(expected + len, sizeof expected - len, "%s%s",
			    i == 0 ? ", expected " : i == m - 1 ? " or " : ", ",
			    what[i]);
	}
	perr(ps, *yypcontext_location(ctx), "syntax error: unexpected %s%s",
	    found, expected);
	return 0;
}
