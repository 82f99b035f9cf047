/*
 * AST constructors and a debug printer.
 *
 * Lists grow by doubling inside the arena: NodeList has no capacity
 * field, so the capacity is implied by the length (4, then the next
 * power of two), and the old array is simply abandoned to the arena.
 *
 * dumpnode prints an S-expression.  Items and statements put each child
 * on its own indented line with the location of the node; expressions
 * and types stay on one line, without locations unless dumplocs is set,
 * so that tests can match a whole expression tree with one CHECK line.
 */
#include <stdlib.h>
#include <string.h>

#include "ast.h"

bool dumplocs;

Node *
newnode(Arena *a, int kind, Loc loc)
{
	Node *n = arena_alloc(a, sizeof *n);

	n->kind = kind;
	n->loc = loc;
	return n;
}

void
listpush(Arena *a, NodeList *l, Node *n)
{
	if (l->n == 0 || (l->n >= 4 && (l->n & (l->n - 1)) == 0)) {
		int cap = l->n == 0 ? 4 : 2 * l->n;
		Node **v = arena_alloc(a, cap * sizeof *v);

		if (l->n)
			memcpy(v, l->v, l->n * sizeof *v);
		l->v = v;
	}
	l->v[l->n++] = n;
}

static const char *const binname[] = {
	[BAdd] = "+", [BSub] = "-", [BMul] = "*", [BDiv] = "/",
	[BMatmul] = "@", [BPow] = "**",
	[BEq] = "==", [BNe] = "!=", [BLt] = "<", [BLe] = "<=",
	[BGt] = ">", [BGe] = ">=",
	[BAnd] = "and", [BOr] = "or",
};

static const char *const scalarname[] = {
	[SInt] = "int", [SFloat] = "float", [SBool] = "bool", [SStr] = "str",
	[SLayer] = "layer",
};

static const char *const dtnames[] = {
	[DNone] = "none", [DF32] = "f32", [DF64] = "f64", [DF16] = "f16",
	[DBF16] = "bf16", [DI32] = "i32", [DI64] = "i64", [DBool] = "bool",
};

#define NAMEOF(tab, i) \
	((i) >= 0 && (size_t)(i) < sizeof(tab) / sizeof(tab[0]) && (tab)[i] ? \
	    (tab)[i] : "?")

static void dump(FILE *f, const Node *n, int ind);

static void
newline(FILE *f, int ind)
{
	fprintf(f, "\n%*s", ind, "");
}

static void
loc(FILE *f, const Node *n)
{
	fprintf(f, " @%d:%d", n->loc.line, n->loc.col);
}

static void
exprloc(FILE *f, const Node *n)
{
	if (dumplocs)
		loc(f, n);
}

static void
str(FILE *f, const char *s)
{
	fputc('"', f);
	for (; *s; s++) {
		unsigned char c = *s;

		if (c == '"' || c == '\\')
			fprintf(f, "\\%c", c);
		else if (c == '\n')
			fputs("\\n", f);
		else if (c == '\t')
			fputs("\\t", f);
		else if (c < 0x20 || c == 0x7f)
			fprintf(f, "\\x%02x", c);
		else
			fputc(c, f);
	}
	fputc('"', f);
}

/* Integral values in full ("1500", not "1.5e+03"); others as the
 * shortest %g that reads back as the same double. */
static void
flt(FILE *f, double v)
{
	char buf[64];

	if (v > -1e16 && v < 1e16 && v == (double)(int64_t)v) {
		fprintf(f, "%.0f", v);
		return;
	}
	for (int prec = 1; prec <= 17; prec++) {
		snprintf(buf, sizeof buf, "%.*g", prec, v);
		if (strtod(buf, NULL) == v)
			break;
	}
	fputs(buf, f);
}

/* Expressions and types, on one line. */
static void
inlinelist(FILE *f, const NodeList *l, int ind)
{
	for (int i = 0; i < l->n; i++) {
		fputc(' ', f);
		dump(f, l->v[i], ind);
	}
}

/* Statements, one per line. */
static void
block(FILE *f, const char *label, const NodeList *l, int ind)
{
	newline(f, ind);
	fprintf(f, "(%s", label);
	for (int i = 0; i < l->n; i++) {
		newline(f, ind + 2);
		dump(f, l->v[i], ind + 2);
	}
	fputc(')', f);
}

static void
header(FILE *f, const Node *n, int ind)
{
	for (int i = 0; i < n->params.n; i++) {
		newline(f, ind + 2);
		dump(f, n->params.v[i], ind + 2);
	}
	if (n->kind != ND_LAYER && n->kind != ND_TRAIN) {
		newline(f, ind + 2);
		fputs("(returns", f);
		inlinelist(f, &n->rets, ind + 2);
		fputc(')', f);
	}
	block(f, "body", &n->body, ind + 2);
}

static void
dump(FILE *f, const Node *n, int ind)
{
	if (!n) {
		fputs("(null)", f);
		return;
	}
	switch (n->kind) {
	case ND_IMPORT:
		fputs("(import ", f);
		str(f, n->str);
		loc(f, n);
		break;
	case ND_MODEL:
	case ND_LAYER:
	case ND_TRAIN:
	case ND_FN:
		fprintf(f, "(%s %s", n->kind == ND_MODEL ? "model" :
		    n->kind == ND_LAYER ? "layer" : n->kind == ND_TRAIN ? "train" : "fn", n->name);
		loc(f, n);
		header(f, n, ind);
		break;
	case ND_PARAM:
		fprintf(f, "(param %s", n->name);
		loc(f, n);
		if (n->type) {
			fputc(' ', f);
			dump(f, n->type, ind);
		}
		if (n->init) {
			fputs(" (default ", f);
			dump(f, n->init, ind);
			fputc(')', f);
		}
		break;
	case ND_LAYERDECL:
	case ND_PARAMDECL:
		fprintf(f, "(%s %s", n->kind == ND_LAYERDECL ? "layerdecl" :
		    n->ival ? "bufferdecl" : "paramdecl", n->name);
		loc(f, n);
		if (n->index) {
			fputs(" (index ", f);
			dump(f, n->index, ind);
			fputc(')', f);
		}
		if (n->type) {
			fputc(' ', f);
			dump(f, n->type, ind);
		}
		if (n->init) {
			fputs(n->kind == ND_PARAMDECL ? " (init " : " ", f);
			dump(f, n->init, ind);
			if (n->kind == ND_PARAMDECL)
				fputc(')', f);
		}
		break;
	case ND_ASSIGN:
		fprintf(f, "(assign %s", n->name);
		loc(f, n);
		fputc(' ', f);
		dump(f, n->init, ind);
		break;
	case ND_RETURN:
		fputs("(return", f);
		loc(f, n);
		inlinelist(f, &n->args, ind);
		break;
	case ND_IF:
		fputs("(if", f);
		loc(f, n);
		fputc(' ', f);
		dump(f, n->cond, ind);
		block(f, "then", &n->body, ind + 2);
		if (n->els.n)
			block(f, "else", &n->els, ind + 2);
		break;
	case ND_FOR:
		fprintf(f, "(for %s", n->name);
		loc(f, n);
		fputc(' ', f);
		dump(f, n->init, ind);
		block(f, "body", &n->body, ind + 2);
		break;
	case ND_EXPRSTMT:
		fputs("(exprstmt", f);
		loc(f, n);
		fputc(' ', f);
		dump(f, n->init, ind);
		break;

	case ND_NAME:
		fprintf(f, "(name %s", n->name);
		exprloc(f, n);
		break;
	case ND_INT:
		fprintf(f, "(int %lld", (long long)n->ival);
		exprloc(f, n);
		break;
	case ND_FLOAT:
		fputs("(float ", f);
		flt(f, n->fval);
		exprloc(f, n);
		break;
	case ND_STR:
		fputs("(str ", f);
		str(f, n->str);
		exprloc(f, n);
		break;
	case ND_BOOL:
		fprintf(f, "(bool %s", n->ival ? "true" : "false");
		exprloc(f, n);
		break;
	case ND_BINARY:
		fprintf(f, "(binary %s", NAMEOF(binname, n->op));
		exprloc(f, n);
		fputc(' ', f);
		dump(f, n->lhs, ind);
		fputc(' ', f);
		dump(f, n->rhs, ind);
		break;
	case ND_UNARY:
		fprintf(f, "(unary %s", n->op == UNeg ? "-" : n->op == UNot ?
		    "not" : "?");
		exprloc(f, n);
		fputc(' ', f);
		dump(f, n->lhs, ind);
		break;
	case ND_CALL:
		fputs("(call", f);
		exprloc(f, n);
		fputc(' ', f);
		dump(f, n->lhs, ind);
		inlinelist(f, &n->args, ind);
		break;
	case ND_KWARG:
		fprintf(f, "(kwarg %s", n->name);
		exprloc(f, n);
		fputc(' ', f);
		dump(f, n->lhs, ind);
		break;
	case ND_INDEX:
		fputs("(index", f);
		exprloc(f, n);
		fputc(' ', f);
		dump(f, n->lhs, ind);
		inlinelist(f, &n->args, ind);
		break;
	case ND_MEMBER:
		fputs("(member", f);
		exprloc(f, n);
		fputc(' ', f);
		dump(f, n->lhs, ind);
		fprintf(f, " %s", n->name);
		break;
	case ND_LIST:
		fputs(n->ival ? "(tuple" : "(list", f);
		exprloc(f, n);
		inlinelist(f, &n->args, ind);
		break;
	case ND_DICT:
		fputs("(dict", f);
		exprloc(f, n);
		inlinelist(f, &n->args, ind);
		break;

	case ND_TTENSOR:
		fprintf(f, "(tensor %s", NAMEOF(dtnames, n->ival));
		exprloc(f, n);
		inlinelist(f, &n->args, ind);
		break;
	case ND_TGRAPH:
		fputs(n->ival == 2 ? "(hetero" : n->ival ? "(relation" : "(graph", f);
		exprloc(f, n);
		inlinelist(f, &n->args, ind);
		break;
	case ND_TSCALAR:
		fprintf(f, "(scalar %s", NAMEOF(scalarname, n->ival));
		exprloc(f, n);
		break;
	default:
		fprintf(f, "(kind%d", n->kind);
		loc(f, n);
		break;
	}
	fputc(')', f);
}

void
dumpnode(FILE *f, const Node *n, int indent)
{
	fprintf(f, "%*s", indent, "");
	dump(f, n, indent);
	fputc('\n', f);
}
