/*
 * The textual IR, printed.  QBE-like, with tensor types:
 *
 *	sym N
 *	sym E
 *	sym E1 derived
 *
 *	func @GCN(%g: graph[N, E], %x: f32[N, 1433]) -> f32[N, 7] {
 *		%w =f32[16, 1433] param {name = "conv1.lin.weight"}
 *		%g.1 =graph[N, E1 + N] add_remaining_self_loops %g {fill = 1.0}
 *		%a =f32[N, 16] scatter_sum %m, %d {n = N}
 *		ret %out
 *	}
 *
 * The grammar, one item per line ('#' starts a comment anywhere):
 *
 *	module := ('sym' NAME ['derived'])* func*       symbols in index order
 *	func   := 'func' '@'ID '(' [%ID ':' type, ...] ')' '->' rets '{'
 *	          ins* 'ret' [%ID, ...] '}'
 *	rets   := type | '(' [type, ...] ')'            one result prints bare
 *	ins    := %ID '=' type OPNAME [%ID, ...] ['{' KEY '=' value, ... '}']
 *	type   := DTYPE '[' [dim, ...] ']' | 'graph' '[' dim ',' dim [',' dim] ']'
 *	        | 'graph' '[' dim '->' dim ',' dim ']'     a relation: sources -> targets, edges
 *	dim    := integers, symbols, + - * and parentheses
 *	value  := INT | FLOAT | 'true' | 'false' | STRING | dim | '[' [dim, ...] ']'
 *
 * ID is [A-Za-z0-9_.]+, NAME and KEY are identifiers.  A dim value that
 * holds a symbol is an ADim (a list, ADims); one that is constant is an
 * AInt (AInts): the IR accepts both where a dim is expected.  Floats
 * always show '.', 'e', inf or nan, so they never read back as ints.
 * Strings escape \" \\ \n \t and other bytes outside 0x20..0x7e as \xHH.
 *
 * parse.c reads this back, and print(parse(print(m))) == print(m) byte
 * for byte.  Two choices here make that hold.  Value names are made
 * unique deterministically (the hint, else hint.1, hint.2, ..., or the
 * next free number for a value without one); a parsed module carries
 * every printed name verbatim as its hint, all distinct, so it prints
 * the same names.  Floats print in the shortest form that reads back as
 * the same double ("%.17g" would turn 0.1 into 0.10000000000000001).
 *
 * The printer is also a debugging aid for broken IR (a pass that fails
 * the verifier), so it prints out-of-range refs, ops, types and dims
 * as <bad ...> instead of trusting them.
 */
#include <inttypes.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "ir.h"

/* A set of names with, per name, the first ".k" suffix not yet known to
 * be taken; that memo keeps many values hinted "h" linear. */
typedef struct Slot {
	char *s;            /* owned; NULL: empty slot */
	int next;
} Slot;

typedef struct NameSet {
	Slot *slot;
	size_t cap, n;
	int num;            /* next number to try for unnamed values */
} NameSet;

static size_t
strhash(const char *s)
{
	size_t h = 2166136261u;

	for (; *s; s++)
		h = (h ^ (unsigned char)*s) * 16777619u;
	return h;
}

static Slot *
nslookup(NameSet *ns, const char *s)
{
	size_t i;

	for (i = strhash(s) & (ns->cap - 1);; i = (i + 1) & (ns->cap - 1))
		if (!ns->slot[i].s || strcmp(ns->slot[i].s, s) == 0)
			return &ns->slot[i];
}

static void
nsinsert(NameSet *ns, char *s)
{
	Slot *old = ns->slot;
	size_t i, oldcap = ns->cap;

	if (2 * (ns->n + 1) > ns->cap) {
		ns->cap = ns->cap ? 2 * ns->cap : 64;
		ns->slot = emalloc(ns->cap * sizeof *ns->slot);
		for (i = 0; i < oldcap; i++)
			if (old[i].s)
				*nslookup(ns, old[i].s) = old[i];
		free(old);
	}
	*nslookup(ns, s) = (Slot){s, 1};
	ns->n++;
}

static bool
nshas(NameSet *ns, const char *s)
{
	return ns->cap && nslookup(ns, s)->s;
}

static bool
namechar(int c)
{
	return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') ||
	       (c >= '0' && c <= '9') || c == '_' || c == '.';
}

/* The unique name for a value hinted h (NULL: none).  The result is also
 * owned by the set. */
static char *
nsname(NameSet *ns, const char *h)
{
	char buf[32], *s, *b;
	size_t len, i;
	int k;

	if (!h || !*h) {
		do
			snprintf(buf, sizeof buf, "%d", ns->num++);
		while (nshas(ns, buf));
		s = estrdup(buf);
		nsinsert(ns, s);
		return s;
	}
	/* a hint from the frontend may hold characters %name cannot */
	b = estrdup(h);
	for (i = 0; b[i]; i++)
		if (!namechar((unsigned char)b[i]))
			b[i] = '_';
	if (!nshas(ns, b)) {
		nsinsert(ns, b);
		return b;
	}
	len = strlen(b);
	s = emalloc(len + 24);
	for (k = nslookup(ns, b)->next;; k++) {
		snprintf(s, len + 24, "%s.%d", b, k);
		if (!nshas(ns, s))
			break;
	}
	nslookup(ns, b)->next = k + 1;
	free(b);
	nsinsert(ns, s);
	return s;
}

static void
nameval(NameSet *ns, Fn *fn, char **name, Ref r)
{
	if (r >= 0 && r < fn->nval && !name[r])
		name[r] = nsname(ns, fn->val[r].name);
}

char **
valnames(Fn *fn)
{
	NameSet ns = {0};
	char **name;
	int i;

	name = emalloc((fn->nval + 1) * sizeof *name);
	for (i = 0; i < fn->narg; i++)
		nameval(&ns, fn, name, fn->arg[i]);
	for (i = 0; i < fn->nins; i++)
		nameval(&ns, fn, name, fn->ins[i].to);
	/* values no instruction defines: only broken IR refers to them */
	for (i = 0; i < fn->nval; i++)
		nameval(&ns, fn, name, i);
	free(ns.slot);      /* the strings now belong to name[] */
	return name;
}

void
freevalnames(char **name)
{
	char **p;

	if (!name)
		return;
	for (p = name; *p; p++)
		free(*p);
	free(name);
}

int
snprintfloat(char *buf, size_t n, double v)
{
	char tmp[64];
	int prec;

	if (isnan(v))
		return snprintf(buf, n, "%s", signbit(v) ? "-nan" : "nan");
	if (isinf(v))
		return snprintf(buf, n, "%s", v < 0 ? "-inf" : "inf");
	for (prec = 15; prec < 17; prec++) {
		snprintf(tmp, sizeof tmp, "%.*g", prec, v);
		if (strtod(tmp, NULL) == v)
			break;
	}
	if (prec == 17)
		snprintf(tmp, sizeof tmp, "%.17g", v);
	/* tmp holds at most 24 characters of %.17g */
	return snprintf(buf, n, "%s%s", tmp, strpbrk(tmp, ".en") ? "" : ".0");
}

static bool
dimok(const Mod *m, Dim d)
{
	return d >= 0 || ~d < m->ndexp;
}

static void
printdim(FILE *f, const Mod *m, Dim d)
{
	if (dimok(m, d))
		fprintdim(f, m, d);
	else
		fprintf(f, "<bad dim %" PRId32 ">", d);
}

static void
printtype(FILE *f, const Mod *m, Type t)
{
	int i;

	if (t.rank > MaxRank || (t.kind != TTensor && t.kind != TGraph) ||
	    (t.kind == TTensor && (t.dtype <= DNone || t.dtype >= NDType))) {
		fputs("<bad type>", f);
		return;
	}
	for (i = 0; i < t.rank; i++)
		if (!dimok(m, t.dim[i]))
			break;
	if (i == t.rank) {
		fprinttype(f, m, t);
		return;
	}
	fprintf(f, "%s[", t.kind == TGraph ? "graph" : dtypename(t.dtype));
	for (i = 0; i < t.rank; i++) {
		fputs(i ? ", " : "", f);
		printdim(f, m, t.dim[i]);
	}
	fputc(']', f);
}

static void
printref(FILE *f, Fn *fn, char **name, Ref r)
{
	if (r >= 0 && r < fn->nval)
		fprintf(f, "%%%s", name[r]);
	else
		fprintf(f, "%%<bad ref %" PRId32 ">", r);
}

static void
printstr(FILE *f, const char *s)
{
	unsigned char c;

	fputc('"', f);
	for (; (c = *s); s++)
		if (c == '"' || c == '\\')
			fprintf(f, "\\%c", c);
		else if (c == '\n')
			fputs("\\n", f);
		else if (c == '\t')
			fputs("\\t", f);
		else if (c < 0x20 || c >= 0x7f)
			fprintf(f, "\\x%02x", c);
		else
			fputc(c, f);
	fputc('"', f);
}

static void
printattr(FILE *f, const Mod *m, const Attr *a)
{
	char buf[64];
	int k;

	fprintf(f, "%s = ", a->key ? a->key : "<bad key>");
	switch (a->kind) {
	case AInt:
		fprintf(f, "%" PRId64, a->u.i);
		break;
	case AFloat:
		snprintfloat(buf, sizeof buf, a->u.f);
		fputs(buf, f);
		break;
	case ABool:
		fputs(a->u.i ? "true" : "false", f);
		break;
	case AStr:
		if (a->u.s)
			printstr(f, a->u.s);
		else
			fputs("<bad string>", f);
		break;
	case ADim:
		printdim(f, m, a->u.d);
		break;
	case AInts:
	case ADims:
		if (a->n < 0 || (a->n > 0 && !a->u.is)) {
			fputs("<bad list>", f);
			break;
		}
		fputc('[', f);
		for (k = 0; k < a->n; k++) {
			fputs(k ? ", " : "", f);
			if (a->kind == AInts)
				fprintf(f, "%" PRId64, a->u.is[k]);
			else
				printdim(f, m, a->u.ds[k]);
		}
		fputc(']', f);
		break;
	default:
		fprintf(f, "<bad attr kind %d>", a->kind);
	}
}

static void
printins(FILE *f, Fn *fn, char **name, const Ins *i)
{
	int k;

	fputc('\t', f);
	printref(f, fn, name, i->to);
	fputs(" =", f);
	if (i->to >= 0 && i->to < fn->nval)
		printtype(f, fn->mod, fn->val[i->to].type);
	else
		fputs("<bad type>", f);
	if (i->op > Oxxx && i->op < NOp)
		fprintf(f, " %s", opinfo[i->op].name);
	else
		fprintf(f, " <bad op %d>", i->op);
	for (k = 0; k < i->narg; k++) {
		fputs(k ? ", " : " ", f);
		printref(f, fn, name, i->arg[k]);
	}
	if (i->nattr > 0 || i->hassched) {
		fputs(" {", f);
		for (k = 0; k < i->nattr; k++) {
			fputs(k ? ", " : "", f);
			printattr(f, fn->mod, &i->attr[k]);
		}
		if (i->hassched) {   /* the typed schedule's text form, last */
			char text[128];
			schedprint(text, sizeof text, &i->sched);
			fprintf(f, "%ssched = \"%s\"", i->nattr ? ", " : "", text);
		}
		fputc('}', f);
	}
	fputc('\n', f);
}

static void
printrettype(FILE *f, Fn *fn, Ref r)
{
	if (r >= 0 && r < fn->nval)
		printtype(f, fn->mod, fn->val[r].type);
	else
		fputs("<bad type>", f);
}

/* Like value names, a function name may only hold [A-Za-z0-9_.]. */
static void
printfnname(FILE *f, const char *s)
{
	if (!s || !*s) {
		fputc('_', f);
		return;
	}
	for (; *s; s++)
		fputc(namechar((unsigned char)*s) ? *s : '_', f);
}

void
printfn(FILE *f, Fn *fn)
{
	char **name;
	int i;

	name = valnames(fn);
	fputs("func @", f);
	printfnname(f, fn->name);
	fputc('(', f);
	for (i = 0; i < fn->narg; i++) {
		fputs(i ? ", " : "", f);
		printref(f, fn, name, fn->arg[i]);
		fputs(": ", f);
		printrettype(f, fn, fn->arg[i]);
	}
	fputs(") -> ", f);
	/* one result prints bare, any other count in parentheses */
	if (fn->nret == 1)
		printrettype(f, fn, fn->ret[0]);
	else {
		fputc('(', f);
		for (i = 0; i < fn->nret; i++) {
			fputs(i ? ", " : "", f);
			printrettype(f, fn, fn->ret[i]);
		}
		fputc(')', f);
	}
	fputs(" {\n", f);
	for (i = 0; i < fn->nins; i++)
		printins(f, fn, name, &fn->ins[i]);
	fputs("\tret", f);
	for (i = 0; i < fn->nret; i++) {
		fputs(i ? ", " : " ", f);
		printref(f, fn, name, fn->ret[i]);
	}
	fputs("\n}\n", f);
	freevalnames(name);
}

void
printmod(FILE *f, Mod *m)
{
	Fn *fn;
	int i;

	for (i = 0; i < m->nsym; i++)
		fprintf(f, "sym %s%s\n", m->sym[i].name,
		        m->sym[i].derived ? " derived" : "");
	for (fn = m->fn; fn; fn = fn->link) {
		if (fn != m->fn || m->nsym > 0)
			fputc('\n', f);
		printfn(f, fn);
	}
}
