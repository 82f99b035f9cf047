/*
 * The textual IR, parsed back (the format is described in print.c).
 *
 * The format is line oriented (a sym, a function header, an instruction,
 * a ret and a closing brace each take one line), so the parser lexes one
 * line at a time into a token array.  That gives free lookahead, keeps
 * errors in line order and makes recovery simple: after an error the
 * rest of the line is dropped.  A value whose instruction failed is
 * remembered as poisoned, so its uses are not reported again; only the
 * first error of a chain is shown.
 *
 * Typing is not decided here: every instruction goes through
 * typecheckop(), like the frontend's, and its result must equal the
 * declared type.  Nothing in the input may crash the parser: numbers and
 * dims are range-checked before they reach dim.c (which dies on misuse),
 * recursion is bounded and every buffer grows on demand.
 */
#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

#include "ir.h"

enum {
	TEnd,               /* end of line; always the last token */
	TIdent = 256,
	TInt,
	TFloat,
	TStr,               /* raw, escapes checked by the lexer */
	TVal,               /* %name */
	TFn,                /* @name */
	TArrow,
	TBad,               /* a lexical error, already reported */
	/* other tokens are their character: = , : ( ) [ ] { } + - * */
};

enum {
	MaxDepth = 64,      /* nesting of dim expressions */
	MaxAttr = 256,      /* attributes per instruction */
	Poison = -2,        /* the Ref of a value whose definition failed */
};

typedef struct Tok {
	int kind;
	const char *p;
	int len;
	int col;
} Tok;

/* Value name -> Ref for the current function. */
typedef struct Entry {
	const char *name;   /* arena string; NULL: empty */
	Ref r;
} Entry;

typedef struct Parser {
	Mod *m;
	const char *file;
	const char *p, *end;    /* the next line starts at p */
	int line;               /* number of the line in tok[] */
	Tok *tok;
	int ntok, tokc, pos;
	bool pending;           /* tok[] holds a line not yet consumed */
	bool lax;               /* the function header failed: undefined
	                           values are its arguments, not news */
	int nerr;
	char *buf;              /* scratch for NUL-terminated token text */
	size_t bufc;
	Entry *ent;
	size_t entc, nent;
} Parser;

/* Scratch arrays grow with erealloc. */
#define GROW(a, n, c) do { \
	if ((n) == (c)) { \
		(c) = (c) ? 2 * (c) : 16; \
		(a) = erealloc((a), (c) * sizeof *(a)); \
	} \
} while (0)

static Loc
loc(Parser *P, const Tok *t)
{
	return (Loc){P->file, P->line, t->col};
}

/* Report at t, unless t is a lexical error that was reported already. */
static bool
err(Parser *P, const Tok *t, const char *fmt, ...)
{
	va_list ap;

	P->nerr++;
	if (t->kind == TBad)
		return false;
	va_start(ap, fmt);
	verrorat(loc(P, t), fmt, ap);
	va_end(ap);
	return false;
}

/* Types and dims for messages, whole (symbol names have no length
 * limit), in the module's arena: only error paths ask for them. */
static const char *
typetext(Parser *P, Type t)
{
	return typestr(P->m->arena, P->m, t);
}

static const char *
dimtext(Parser *P, Dim d)
{
	return dimstr(P->m->arena, P->m, d);
}

/* The text of t, NUL-terminated, valid until the next call. */
static const char *
text(Parser *P, const Tok *t)
{
	if ((size_t)t->len + 1 > P->bufc) {
		P->bufc = t->len + 64;
		P->buf = erealloc(P->buf, P->bufc);
	}
	memcpy(P->buf, t->p, t->len);
	P->buf[t->len] = 0;
	return P->buf;
}

static const char *
describe(const Tok *t)
{
	static char d[64];

	switch (t->kind) {
	case TEnd:
		return "end of line";
	case TStr:
		return "a string";
	default:
		snprintf(d, sizeof d, "'%.*s'%s", t->len > 40 ? 40 : t->len, t->p,
		         t->len > 40 ? "..." : "");
		return d;
	}
}

static bool
experr(Parser *P, const Tok *t, const char *what)
{
	return err(P, t, "expected %s, found %s", what, describe(t));
}

/* lexer ------------------------------------------------------------------ */

static bool
isident(int c, bool first)
{
	return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '_' ||
	       (!first && c >= '0' && c <= '9');
}

static bool
isdigit_(int c)
{
	return c >= '0' && c <= '9';
}

static bool
isname(int c)
{
	return isident(c, false) || c == '.';
}

static int
hexval(int c)
{
	if (c >= '0' && c <= '9')
		return c - '0';
	if (c >= 'a' && c <= 'f')
		return c - 'a' + 10;
	if (c >= 'A' && c <= 'F')
		return c - 'A' + 10;
	return -1;
}

static void
addtok(Parser *P, int kind, const char *p, int len, int col)
{
	GROW(P->tok, P->ntok, P->tokc);
	P->tok[P->ntok++] = (Tok){kind, p, len, col};
}

/* Report a lexical error at col and end the line's tokens with TBad. */
static void
lexerr(Parser *P, const char *s, int col, const char *fmt, ...)
{
	va_list ap;

	P->nerr++;
	va_start(ap, fmt);
	verrorat((Loc){P->file, P->line, col}, fmt, ap);
	va_end(ap);
	addtok(P, TBad, s, 0, col);
}

/* Scan a string body from s (just after the quote); the end of the
 * token, or NULL after reporting an error. */
static const char *
lexstr(Parser *P, const char *s, const char *eol, const char *bol)
{
	int h1, h2;

	for (; s < eol && *s != '"'; s++) {
		if (*s == 0) {
			lexerr(P, s, s - bol + 1, "NUL byte in string");
			return NULL;
		}
		if (*s != '\\')
			continue;
		if (s + 1 >= eol) {
			lexerr(P, s, s - bol + 1, "unterminated string");
			return NULL;
		}
		switch (s[1]) {
		case '"': case '\\': case 'n': case 't':
			s++;
			continue;
		case 'x':
			h1 = s + 2 < eol ? hexval((unsigned char)s[2]) : -1;
			h2 = s + 3 < eol ? hexval((unsigned char)s[3]) : -1;
			if (h1 >= 0 && h2 >= 0 && (h1 | h2)) {
				s += 3;
				continue;
			}
			break;
		}
		lexerr(P, s, s - bol + 1, "bad escape in string");
		return NULL;
	}
	if (s >= eol) {
		lexerr(P, s, s - bol + 1, "unterminated string");
		return NULL;
	}
	return s + 1;
}

/* Tokenize the next line of input into tok[]. */
static void
lexline(Parser *P)
{
	const char *bol = P->p, *eol, *s, *q;
	int col, kind;

	P->line++;
	P->ntok = P->pos = 0;
	eol = memchr(bol, '\n', P->end - bol);
	if (!eol)
		eol = P->end;
	P->p = eol < P->end ? eol + 1 : eol;
	for (s = bol; s < eol;) {
		col = s - bol + 1;
		if (*s == ' ' || *s == '\t' || *s == '\r' || *s == '\f' || *s == '\v') {
			s++;
			continue;
		}
		if (*s == '#')
			break;
		q = s;
		if (*s == '%' || *s == '@') {
			for (q++; q < eol && isname((unsigned char)*q); q++)
				;
			if (q == s + 1) {
				lexerr(P, s, col, "expected a name after '%c'", *s);
				break;
			}
			kind = *s == '%' ? TVal : TFn;
		} else if (isident((unsigned char)*s, true)) {
			for (q++; q < eol && isident((unsigned char)*q, false); q++)
				;
			kind = TIdent;
		} else if (isdigit_((unsigned char)*s)) {
			kind = TInt;
			while (q < eol && isdigit_((unsigned char)*q))
				q++;
			if (q < eol && *q == '.') {
				kind = TFloat;
				for (q++; q < eol && isdigit_((unsigned char)*q); q++)
					;
			}
			if (q < eol && (*q == 'e' || *q == 'E')) {
				kind = TFloat;
				q++;
				if (q < eol && (*q == '+' || *q == '-'))
					q++;
				if (q == eol || !isdigit_((unsigned char)*q)) {
					lexerr(P, s, col, "bad number");
					break;
				}
				while (q < eol && isdigit_((unsigned char)*q))
					q++;
			}
			if (q < eol && isname((unsigned char)*q)) {
				lexerr(P, s, col, "bad number");
				break;
			}
		} else if (*s == '"') {
			if (!(q = lexstr(P, s + 1, eol, bol)))
				break;
			kind = TStr;
		} else if (*s == '-' && s + 1 < eol && s[1] == '>') {
			q += 2;
			kind = TArrow;
		} else if (*s && strchr("=,:()[]{}+-*", *s)) {
			q++;
			kind = *s;
		} else {
			if ((unsigned char)*s < 0x20 || (unsigned char)*s >= 0x7f)
				lexerr(P, s, col, "unexpected byte 0x%02x", (unsigned char)*s);
			else
				lexerr(P, s, col, "unexpected character '%c'", *s);
			break;
		}
		addtok(P, kind, s, q - s, col);
		s = q;
	}
	addtok(P, TEnd, eol, 0, eol - bol + 1);
	/* a line with only an error still ends with TEnd after the TBad */
}

/* Next line, or the one pushed back; false at the end of input. */
static bool
nextline(Parser *P)
{
	if (P->pending) {
		P->pending = false;
		return true;
	}
	if (P->p >= P->end)
		return false;
	lexline(P);
	return true;
}

/* The line had a lexical error, which was reported; the parser skips
 * it rather than report a second, confused error. */
static bool
lexbad(Parser *P)
{
	return P->ntok >= 2 && P->tok[P->ntok - 2].kind == TBad;
}

static Tok *
peek(Parser *P)
{
	return &P->tok[P->pos];
}

static Tok *
next(Parser *P)
{
	Tok *t = &P->tok[P->pos];

	if (t->kind != TEnd && t->kind != TBad)
		P->pos++;
	return t;
}

static bool
accept(Parser *P, int kind)
{
	if (peek(P)->kind != kind)
		return false;
	next(P);
	return true;
}

static bool
expect(Parser *P, int kind, const char *what)
{
	if (accept(P, kind))
		return true;
	return experr(P, peek(P), what);
}

static bool
iskw(const Tok *t, const char *kw)
{
	return t->kind == TIdent && (size_t)t->len == strlen(kw) &&
	       memcmp(t->p, kw, t->len) == 0;
}

/* value names ------------------------------------------------------------ */

static size_t
hashn(const char *s, size_t n)
{
	size_t h = 2166136261u;

	while (n--)
		h = (h ^ (unsigned char)*s++) * 16777619u;
	return h;
}

static Entry *
lookup(Parser *P, const char *s, size_t n)
{
	size_t i;

	if (!P->entc)
		return NULL;
	for (i = hashn(s, n) & (P->entc - 1);; i = (i + 1) & (P->entc - 1))
		if (!P->ent[i].name || (strncmp(P->ent[i].name, s, n) == 0 && !P->ent[i].name[n]))
			return &P->ent[i];
}

static void
define(Parser *P, const char *name, Ref r)
{
	Entry *old = P->ent, *e;
	size_t i, oldc = P->entc;

	if (2 * (P->nent + 1) > P->entc) {
		P->entc = P->entc ? 2 * P->entc : 64;
		P->ent = emalloc(P->entc * sizeof *P->ent);
		for (i = 0; i < oldc; i++)
			if (old[i].name)
				*lookup(P, old[i].name, strlen(old[i].name)) = old[i];
		free(old);
	}
	e = lookup(P, name, strlen(name));
	if (!e->name)
		P->nent++;
	*e = (Entry){name, r};
}

/* The value t names: its Ref, Poison, or RNone after reporting it. */
static Ref
use(Parser *P, const Tok *t)
{
	Entry *e = lookup(P, t->p + 1, t->len - 1);

	if (!e || !e->name) {
		if (P->lax)
			return Poison;
		err(P, t, "use of undefined value %s", text(P, t));
		return RNone;
	}
	return e->r;
}

static bool
known(Parser *P, const Tok *t)
{
	Entry *e = lookup(P, t->p + 1, t->len - 1);

	return e && e->name;
}

/* Report a redefinition of the value t names. */
static bool
isdefined(Parser *P, const Tok *t)
{
	return known(P, t) && !err(P, t, "value %s defined twice", text(P, t));
}

/* dim expressions -------------------------------------------------------- */

/*
 * A dim expression is evaluated as it is parsed.  While it holds no
 * symbol it is an int64 (attributes such as dim = -1 are negative); once
 * a symbol enters it becomes a Dim.  A Dim that folds to a constant
 * turns back into an int64, so "N - N - 1" is -1 and not an error.
 */
typedef struct Ev {
	bool sym;
	int64_t c;
	Dim d;
} Ev;

static bool expr(Parser *P, Ev *v, int depth);

static bool
todim(Parser *P, const Tok *at, int64_t c, Dim *d)
{
	if (c < 0 || c > DIMMAX)
		return err(P, at, "dimension %" PRId64 " out of range", c);
	*d = dimconst(c);
	return true;
}

static bool
dimres(Parser *P, const Tok *at, Ev *v, Dim d, bool ok)
{
	if (!ok)
		return err(P, at, "dimension arithmetic overflows or is negative");
	*v = d >= 0 ? (Ev){false, d, 0} : (Ev){true, 0, d};
	return true;
}

static bool
evneg(Parser *P, const Tok *at, Ev *v)
{
	bool ok = true;
	Dim d;

	if (!v->sym) {
		if (v->c == INT64_MIN)
			return err(P, at, "integer overflow");
		v->c = -v->c;
		return true;
	}
	d = dimsub(P->m, 0, v->d, &ok);
	return dimres(P, at, v, d, ok);
}

static bool
evbin(Parser *P, const Tok *at, int op, Ev *a, Ev b)
{
	Ev t;
	Dim d, e;
	bool ok = true, neg;

	if (!a->sym && !b.sym) {
		if (op == '+' ? __builtin_add_overflow(a->c, b.c, &a->c) :
		    op == '-' ? __builtin_sub_overflow(a->c, b.c, &a->c) :
		    __builtin_mul_overflow(a->c, b.c, &a->c))
			return err(P, at, "integer overflow");
		return true;
	}
	if (op == '-') {
		if (!evneg(P, at, &b))
			return false;
		op = '+';
		if (!b.sym && !a->sym)
			return evbin(P, at, op, a, b);
	}
	if (!a->sym) {      /* + and * commute: make a the symbolic one */
		t = *a, *a = b, b = t;
	}
	if (b.sym) {
		d = op == '+' ? dimadd(P->m, a->d, b.d, &ok) : dimmul(P->m, a->d, b.d, &ok);
		return dimres(P, at, a, d, ok);
	}
	/* a symbolic, b a constant that may be negative */
	if (b.c == INT64_MIN)
		return err(P, at, "integer overflow");
	neg = b.c < 0;
	e = 0;
	if (!todim(P, at, neg ? -b.c : b.c, &e))
		return false;
	if (op == '+') {
		d = neg ? dimsub(P->m, a->d, e, &ok) : dimadd(P->m, a->d, e, &ok);
		return dimres(P, at, a, d, ok);
	}
	d = dimmul(P->m, a->d, e, &ok);
	if (!dimres(P, at, a, d, ok))
		return false;
	return neg ? evneg(P, at, a) : true;
}

/* An integer literal; 2^63 is allowed only under a unary minus. */
static bool
intlit(Parser *P, const Tok *t, bool negated, int64_t *v)
{
	uint64_t u = 0, lim = negated ? (uint64_t)INT64_MAX + 1 : INT64_MAX;
	int k;

	for (k = 0; k < t->len; k++) {
		if (u > (lim - (t->p[k] - '0')) / 10)
			return err(P, t, "integer %s out of range", text(P, t));
		u = 10 * u + (t->p[k] - '0');
	}
	*v = negated ? (u == (uint64_t)INT64_MAX + 1 ? INT64_MIN : -(int64_t)u) : (int64_t)u;
	return true;
}

static bool
primary(Parser *P, Ev *v, int depth)
{
	Tok *t = next(P);
	int s;

	if (depth > MaxDepth)
		return err(P, t, "expression nested too deeply");
	switch (t->kind) {
	case '-':
		if (peek(P)->kind == TInt) {
			*v = (Ev){0};
			return intlit(P, next(P), true, &v->c);
		}
		return primary(P, v, depth + 1) && evneg(P, t, v);
	case TInt:
		*v = (Ev){0};
		return intlit(P, t, false, &v->c);
	case TIdent:
		if ((s = symlookup(P->m, text(P, t))) < 0)
			return err(P, t, "unknown symbol '%s'", text(P, t));
		*v = (Ev){true, 0, dimsym(P->m, s)};
		return true;
	case '(':
		return expr(P, v, depth + 1) && expect(P, ')', "')'");
	default:
		return experr(P, t, "a dimension");
	}
}

static bool
term(Parser *P, Ev *v, int depth)
{
	Tok *op;
	Ev b;

	if (!primary(P, v, depth))
		return false;
	while (peek(P)->kind == '*') {
		op = next(P);
		if (!primary(P, &b, depth) || !evbin(P, op, '*', v, b))
			return false;
	}
	return true;
}

static bool
expr(Parser *P, Ev *v, int depth)
{
	Tok *op;
	Ev b;

	if (!term(P, v, depth))
		return false;
	while (peek(P)->kind == '+' || peek(P)->kind == '-') {
		op = next(P);
		if (!term(P, &b, depth) || !evbin(P, op, op->kind, v, b))
			return false;
	}
	return true;
}

/* A dim in a type or in a list of dims: a non-negative constant or a
 * polynomial with some positive term ("E - N" may be a size, "-N" not). */
static bool
evdim(Parser *P, const Tok *at, Ev v, Dim *d)
{
	const DExp *e;
	int i;

	if (!v.sym)
		return todim(P, at, v.c, d);
	e = &P->m->dexp[~v.d];
	for (i = 0; i < e->nterm; i++)
		if (e->term[i].coef > 0) {
			*d = v.d;
			return true;
		}
	return err(P, at, "dimension %s is negative", dimtext(P, v.d));
}

/* types ------------------------------------------------------------------ */

static bool
parsetype(Parser *P, Type *ty)
{
	Tok *k = next(P), *at;
	Dim dim[MaxRank];
	int rank = 0, dt = DNone;
	bool graph, arrow = false;
	Ev v;

	if (k->kind != TIdent)
		return experr(P, k, "a type");
	graph = iskw(k, "graph");
	if (!graph && (dt = dtypefromname(text(P, k))) == DNone)
		return err(P, k, "unknown type '%s'", text(P, k));
	if (!expect(P, '[', "'['"))
		return false;
	if (peek(P)->kind != ']')
		for (;;) {
			at = peek(P);
			if (rank == MaxRank)
				return err(P, at, "too many dimensions (at most %d)", MaxRank);
			if (!expr(P, &v, 0) || !evdim(P, at, v, &dim[rank]))
				return false;
			rank++;
			/* a relation: graph[Ns -> Nd, E] */
			if (graph && rank == 1 && accept(P, TArrow))
				arrow = true;
			else if (!accept(P, ','))
				break;
		}
	if (!expect(P, ']', "',' or ']'"))
		return false;
	if (arrow) {
		if (rank != 3)
			return err(P, k, "a relation type is graph[Ns -> Nd, E]");
		*ty = relationtype(dim[0], dim[1], dim[2]);
		return true;
	}
	if (!graph) {
		*ty = tensortype(dt, rank, dim);
		if (!typenumelok(P->m, *ty))
			return err(P, k, "%s is too large: its element count overflows or has "
			           "degree above %d", typetext(P, *ty), MaxDeg);
		return true;
	}
	if (rank == 2)
		*ty = graphtype(dim[0], dim[1]);
	else if (rank == 3)
		*ty = batchgraphtype(dim[0], dim[1], dim[2]);
	else
		return err(P, k, "a graph type has 2 or 3 dimensions, not %d", rank);
	return true;
}

/* attributes ------------------------------------------------------------- */

static bool
floatlit(Parser *P, const Tok *t, bool negated, double *f)
{
	const char *s = text(P, t);
	char *end;

	if (t->kind == TIdent)
		*f = strcmp(s, "inf") == 0 ? INFINITY : NAN;
	else {
		errno = 0;
		*f = strtod(s, &end);
		if (*end || (errno == ERANGE && isinf(*f)))
			return err(P, t, "float %s out of range", s);
	}
	if (negated)
		*f = -*f;
	return true;
}

static bool
isfloattok(const Tok *t)
{
	return t->kind == TFloat || iskw(t, "inf") || iskw(t, "nan");
}

static char *
decodestr(Parser *P, const Tok *t)
{
	char *s = arena_alloc(P->m->arena, t->len), *o = s;
	const char *p = t->p + 1, *e = t->p + t->len - 1;

	/* the lexer has checked every escape */
	for (; p < e; p++) {
		if (*p != '\\') {
			*o++ = *p;
			continue;
		}
		switch (*++p) {
		case 'n': *o++ = '\n'; break;
		case 't': *o++ = '\t'; break;
		case 'x':
			*o++ = (char)(hexval((unsigned char)p[1]) << 4 | hexval((unsigned char)p[2]));
			p += 2;
			break;
		default: *o++ = *p; break;
		}
	}
	*o = 0;
	return s;
}

/* [a, b, ...]: AInts when every element is constant, else ADims. */
static bool
parselist(Parser *P, const char *key, Attr *a)
{
	int64_t *iv = NULL;
	Tok **at = NULL;
	Ev *ev = NULL;
	Dim *dv;
	int n = 0, c = 0, k;
	bool anysym = false, ok = false;

	if (peek(P)->kind != ']')
		for (;;) {
			if (n == c) {
				c = c ? 2 * c : 8;
				ev = erealloc(ev, c * sizeof *ev);
				at = erealloc(at, c * sizeof *at);
			}
			at[n] = peek(P);
			if (!expr(P, &ev[n], 0))
				goto out;
			anysym |= ev[n].sym;
			n++;
			if (!accept(P, ','))
				break;
		}
	if (!expect(P, ']', "',' or ']'"))
		goto out;
	if (anysym) {
		dv = emalloc((n ? n : 1) * sizeof *dv);
		for (k = 0; k < n; k++)
			if (!evdim(P, at[k], ev[k], &dv[k])) {
				free(dv);
				goto out;
			}
		*a = mkattrdims(P->m->arena, key, dv, n);
		free(dv);
	} else {
		iv = emalloc((n ? n : 1) * sizeof *iv);
		for (k = 0; k < n; k++)
			iv[k] = ev[k].c;
		*a = mkattrints(P->m->arena, key, iv, n);
		free(iv);
	}
	ok = true;
out:
	free(ev);
	free(at);
	return ok;
}

static bool
parseattr(Parser *P, Attr *a)
{
	Tok *k = next(P), *t;
	const char *key;
	double f;
	Ev v;

	if (k->kind != TIdent)
		return experr(P, k, "an attribute name");
	key = arena_strndup(P->m->arena, k->p, k->len);
	if (!expect(P, '=', "'='"))
		return false;
	t = peek(P);
	if (t->kind == TStr) {
		next(P);
		*a = (Attr){.key = key, .kind = AStr, .u.s = decodestr(P, t)};
		return true;
	}
	if (iskw(t, "true") || iskw(t, "false")) {
		next(P);
		*a = mkattrbool(P->m->arena, key, iskw(t, "true"));
		return true;
	}
	if (isfloattok(t) || (t->kind == '-' && isfloattok(t + 1))) {
		if (t->kind == '-')
			next(P);
		if (!floatlit(P, next(P), t->kind == '-', &f))
			return false;
		*a = mkattrfloat(P->m->arena, key, f);
		return true;
	}
	if (accept(P, '['))
		return parselist(P, key, a);
	if (!expr(P, &v, 0))
		return false;
	*a = v.sym ? mkattrdim(P->m->arena, key, v.d) : mkattrint(P->m->arena, key, v.c);
	return true;
}

/* {key = value, ...}; *attr is a scratch array owned by the caller. */
static bool
parseattrs(Parser *P, Attr **attr, int *nattr, int *attrc)
{
	Tok *k;
	int i;

	if (accept(P, '}'))
		return true;
	for (;;) {
		k = peek(P);
		if (*nattr == MaxAttr)
			return err(P, k, "too many attributes (at most %d)", MaxAttr);
		GROW(*attr, *nattr, *attrc);
		if (!parseattr(P, &(*attr)[*nattr]))
			return false;
		for (i = 0; i < *nattr; i++)
			if (strcmp((*attr)[i].key, (*attr)[*nattr].key) == 0)
				return err(P, k, "attribute '%s' given twice", (*attr)[i].key);
		++*nattr;
		if (accept(P, '}'))
			return true;
		if (!expect(P, ',', "',' or '}'"))
			return false;
	}
}

/* functions -------------------------------------------------------------- */

typedef struct Scratch {
	Ref *arg;
	int narg, argc;
	Attr *attr;
	int nattr, attrc;
	Type *at;
	int atc;
	Type *ret;
	int nret, retc;
	bool hdrok;         /* the header parsed: ret is checked against it */
} Scratch;

/* %name =TYPE op %a, %b {attrs} */
static void
parseins(Parser *P, Fn *fn, Scratch *S)
{
	Tok *nt = next(P), *tt, *ot, *t;
	const char *name;
	char msg[512];      /* typecheckop's message: bounded by typecheck.c */
	bool poisoned = false, braces, hassc;
	Sched sc;
	Type ty, out;
	Ref r = Poison;
	int op, k;
	unsigned fl;

	if (isdefined(P, nt))
		return;
	name = arena_strndup(P->m->arena, nt->p + 1, nt->len - 1);
	S->narg = S->nattr = 0;
	if (!expect(P, '=', "'='"))
		goto done;
	tt = peek(P);
	if (!parsetype(P, &ty))
		goto done;
	ot = next(P);
	if (ot->kind != TIdent) {
		experr(P, ot, "an op name");
		goto done;
	}
	if ((op = opfromname(text(P, ot))) == Oxxx) {
		err(P, ot, "unknown op '%s'", text(P, ot));
		goto done;
	}
	if (peek(P)->kind == TVal)
		for (;;) {
			t = next(P);
			if ((r = use(P, t)) == RNone) {
				r = Poison;
				goto done;
			}
			if (r == Poison)
				poisoned = true;
			GROW(S->arg, S->narg, S->argc);
			S->arg[S->narg++] = r;
			r = Poison;
			if (!accept(P, ','))
				break;
			if (peek(P)->kind != TVal) {
				experr(P, peek(P), "a value");
				goto done;
			}
		}
	if ((braces = accept(P, '{')) && !parseattrs(P, &S->attr, &S->nattr, &S->attrc))
		goto done;
	if (peek(P)->kind != TEnd) {
		experr(P, peek(P), braces ? "end of line" : "'{' or end of line");
		goto done;
	}
	if (poisoned)   /* the operand's own error was reported */
		goto done;
	/* the schedule is a typed field, not an attribute: parsed here */
	if (schedtake(S->attr, &S->nattr, &sc, &hassc, msg, sizeof msg) < 0) {
		err(P, ot, "%s: %s", opinfo[op].name, msg);
		goto done;
	}
	if (S->narg > S->atc) {
		S->atc = S->narg;
		S->at = erealloc(S->at, S->atc * sizeof *S->at);
	}
	for (k = 0; k < S->narg; k++)
		S->at[k] = fn->val[S->arg[k]].type;
	fl = opinfo[op].flags;
	if (!typecheckop(P->m, op, S->at, S->narg, S->attr, S->nattr,
	                 (fl & (Fleaf | Fdyn)) || op == Ocast ? &ty : NULL,
	                 &out, msg, sizeof msg)) {
		err(P, ot, "%s", msg);
		goto done;
	}
	if (!typeeq(out, ty)) {
		err(P, tt, "type mismatch: declared %s, operands give %s", typetext(P, ty), typetext(P, out));
		goto done;
	}
	r = emit(fn, op, ty, S->arg, S->narg, S->attr, S->nattr, name, loc(P, ot));
	if (hassc)
		putsched(&fn->ins[fn->nins - 1], &sc);
done:
	define(P, name, r);
}

/* ret %a, %b: the values must have the declared result types. */
static void
parseret(Parser *P, Fn *fn, Scratch *S)
{
	Tok *rt = next(P), *t;
	int n = 0;
	Ref r;

	if (peek(P)->kind != TEnd)
		for (;;) {
			t = next(P);
			if (t->kind != TVal) {
				experr(P, t, "a value");
				return;
			}
			if ((r = use(P, t)) == RNone)
				return;
			if (r != Poison && S->hdrok && n < S->nret &&
			    !typeeq(fn->val[r].type, S->ret[n])) {
				err(P, t, "return type mismatch: declared %s, %s has %s", typetext(P, S->ret[n]),
				    text(P, t), typetext(P, fn->val[r].type));
			}
			if (r != Poison)
				addret(fn, r);
			n++;
			if (!accept(P, ','))
				break;
		}
	if (peek(P)->kind != TEnd) {
		experr(P, peek(P), "',' or end of line");
		return;
	}
	if (n != S->nret && S->hdrok)
		err(P, rt, "ret gives %d value%s, @%s returns %d", n, n == 1 ? "" : "s",
		    fn->name, S->nret);
}

/* -> T  or  -> (T, ...) */
static bool
parserettypes(Parser *P, Scratch *S)
{
	bool paren;

	S->nret = 0;
	if (!expect(P, TArrow, "'->'"))
		return false;
	if (!(paren = accept(P, '('))) {
		GROW(S->ret, S->nret, S->retc);
		return parsetype(P, &S->ret[S->nret++]);
	}
	if (accept(P, ')'))
		return true;
	for (;;) {
		GROW(S->ret, S->nret, S->retc);
		if (!parsetype(P, &S->ret[S->nret++]))
			return false;
		if (accept(P, ')'))
			return true;
		if (!expect(P, ',', "',' or ')'"))
			return false;
	}
}

/* func @name(%a: T, ...) -> R {   -- the header, then the body lines */
static void
parsefn(Parser *P, Scratch *S)
{
	Tok *ft = next(P), *nt, *at, *t;
	const char *name;
	bool seenret = false, complained = false;
	Fn *fn, *f;
	Type ty;

	nt = next(P);
	if (nt->kind != TFn) {
		experr(P, nt, "a function name");
		name = "?";
	} else {
		name = text(P, nt) + 1;
		for (f = P->m->fn; f; f = f->link)
			if (strcmp(f->name, name) == 0) {
				err(P, nt, "function @%s defined twice", name);
				break;
			}
	}
	fn = newfn(P->m, name, loc(P, ft));
	P->nent = 0;
	if (P->ent)
		memset(P->ent, 0, P->entc * sizeof *P->ent);
	S->nret = 0;
	S->hdrok = false;
	P->lax = true;
	if (lexbad(P) || nt->kind != TFn || !expect(P, '(', "'('"))
		goto body;
	if (peek(P)->kind != ')')
		for (;;) {
			at = next(P);
			if (at->kind != TVal) {
				experr(P, at, "an argument");
				goto body;
			}
			if (isdefined(P, at))
				goto body;
			name = arena_strndup(P->m->arena, at->p + 1, at->len - 1);
			if (!expect(P, ':', "':'") || !parsetype(P, &ty)) {
				define(P, name, Poison);
				goto body;
			}
			define(P, name, addarg(fn, name, ty));
			if (!accept(P, ','))
				break;
		}
	if (!expect(P, ')', "',' or ')'") || !parserettypes(P, S) ||
	    !expect(P, '{', "'{'"))
		goto body;
	if (peek(P)->kind != TEnd)
		experr(P, peek(P), "end of line");
	else
		S->hdrok = true;
	P->lax = !S->hdrok;
body:
	/* on a bad header the body is still read, for its own errors */
	for (;;) {
		if (!nextline(P)) {
			err(P, &P->tok[P->ntok - 1], "missing '}' at the end of @%s", fn->name);
			return;
		}
		t = peek(P);
		if (t->kind == TEnd)
			continue;
		if (lexbad(P)) {
			/* later uses of the value are not news either */
			if (t->kind == TVal && !known(P, t))
				define(P, arena_strndup(P->m->arena, t->p + 1, t->len - 1), Poison);
			continue;
		}
		if (iskw(t, "func") || iskw(t, "sym")) {
			err(P, t, "missing '}' at the end of @%s", fn->name);
			P->pending = true;
			return;
		}
		if (t->kind == '}') {
			next(P);
			if (peek(P)->kind != TEnd)
				experr(P, peek(P), "end of line");
			if (!seenret)
				err(P, t, "function @%s has no ret", fn->name);
			return;
		}
		if (seenret && (t->kind == TVal || iskw(t, "ret"))) {
			if (!complained)
				err(P, t, "instruction after ret");
			complained = true;
			continue;
		}
		if (t->kind == TVal)
			parseins(P, fn, S);
		else if (iskw(t, "ret")) {
			parseret(P, fn, S);
			seenret = true;
		} else
			experr(P, t, "an instruction, 'ret' or '}'");
	}
}

/* sym NAME [derived] */
static void
parsesym(Parser *P)
{
	Tok *t;
	const char *name;
	bool derived;

	next(P);
	t = next(P);
	if (t->kind != TIdent) {
		experr(P, t, "a symbol name");
		return;
	}
	name = text(P, t);
	/* these spell attribute values, so a symbol could never be used */
	if (!strcmp(name, "true") || !strcmp(name, "false") ||
	    !strcmp(name, "inf") || !strcmp(name, "nan")) {
		err(P, t, "'%s' cannot name a symbol", name);
		return;
	}
	if (symlookup(P->m, name) >= 0) {
		err(P, t, "symbol %s declared twice", name);
		return;
	}
	if (P->m->nsym >= 65535) {
		err(P, t, "too many symbols");
		return;
	}
	derived = iskw(peek(P), "derived");
	if (derived)
		next(P);
	if (peek(P)->kind != TEnd) {
		experr(P, peek(P), derived ? "end of line" : "'derived' or end of line");
		return;
	}
	symadd(P->m, text(P, t), derived);
}

Mod *
parseir(const char *file, const char *text_, size_t len)
{
	Parser P = {0};
	Scratch S = {0};
	Tok *t;

	file = diag_addsource(file, text_, len);
	if (len > INT32_MAX / 2) {     /* columns are ints */
		errorat((Loc){file, 1, 1}, "input too large");
		return NULL;
	}
	P.m = newmod();
	P.file = file;
	P.p = text_;
	P.end = text_ + len;
	while (nextline(&P)) {
		t = peek(&P);
		if (t->kind == TEnd || lexbad(&P))
			continue;
		if (iskw(t, "sym"))
			parsesym(&P);
		else if (iskw(t, "func"))
			parsefn(&P, &S);
		else
			experr(&P, t, "'sym' or 'func'");
	}
	free(P.tok);
	free(P.buf);
	free(P.ent);
	free(S.arg);
	free(S.attr);
	free(S.at);
	free(S.ret);
	if (P.nerr) {
		freemod(P.m);
		return NULL;
	}
	return P.m;
}
