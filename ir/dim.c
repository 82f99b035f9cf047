/*
 * Symbolic dimensions: polynomials over the module's symbols with int64
 * coefficients, interned so that equal polynomials are equal Dims.
 *
 * Canonical term order is higher degree first, then by descending symbol
 * indices, constant last; so a graph with self loops prints "E + N" and
 * "2*N + 1" reads the usual way.  Non-negative constants are plain Dims
 * >= 0 and never enter the table.
 */
#include <stdlib.h>
#include <string.h>

#include "ir.h"

enum { MaxTerms = 64 };

int
symlookup(Mod *m, const char *name)
{
	int i;

	for (i = 0; i < m->nsym; i++)
		if (strcmp(m->sym[i].name, name) == 0)
			return i;
	return -1;
}

int
symadd(Mod *m, const char *name, bool derived)
{
	int i;

	if ((i = symlookup(m, name)) >= 0)
		return i;
	if (m->nsym >= 65535)
		die("too many symbols");
	if (m->nsym == m->symc) {
		m->symc = m->symc ? 2 * m->symc : 8;
		m->sym = erealloc(m->sym, m->symc * sizeof *m->sym);
	}
	m->sym[m->nsym] = (Sym){arena_strdup(m->arena, name), derived};
	return m->nsym++;
}

int
symfresh(Mod *m, const char *base)
{
	size_t n = strlen(base) + 16;   /* base, any int's digits, NUL */
	char *buf = emalloc(n);
	int k, s;

	for (k = 1;; k++) {
		snprintf(buf, n, "%s%d", base, k);
		if (symlookup(m, buf) < 0)
			break;
	}
	s = symadd(m, buf, true);
	free(buf);
	return s;
}

Dim
dimconst(int64_t v)
{
	if (v < 0 || v > DIMMAX)
		die("dimconst(%lld) out of range", (long long)v);
	return (Dim)v;
}

bool
dimisconst(Dim d)
{
	return d >= 0;
}

int64_t
dimconstval(Dim d)
{
	if (d < 0)
		die("dimconstval of a symbolic dim");
	return d;
}

/* a term list, for arithmetic */
typedef struct Poly {
	int n;
	Term t[MaxTerms];
} Poly;

static int
termcmp(const void *pa, const void *pb)
{
	const Term *a = pa, *b = pb;
	int i;

	if (a->deg != b->deg)
		return a->deg > b->deg ? -1 : 1;
	for (i = a->deg - 1; i >= 0; i--)
		if (a->sym[i] != b->sym[i])
			return a->sym[i] > b->sym[i] ? -1 : 1;
	return 0;
}

static void
topoly(const Mod *m, Dim d, Poly *p)
{
	const DExp *e;

	p->n = 0;
	if (d >= 0) {
		if (d > 0)
			p->t[p->n++] = (Term){.coef = d};
		return;
	}
	if (~d >= m->ndexp)
		die("bad dim %d", d);
	e = &m->dexp[~d];
	memcpy(p->t, e->term, e->nterm * sizeof(Term));
	p->n = e->nterm;
}

/* Sort, merge equal monomials, drop zeros, intern.  false on overflow or
 * a negative constant. */
static bool
intern(Mod *m, Poly *p, Dim *out)
{
	int i, j;
	DExp *e;

	qsort(p->t, p->n, sizeof(Term), termcmp);
	for (i = 0, j = 0; i < p->n; i++) {
		if (j > 0 && termcmp(&p->t[j - 1], &p->t[i]) == 0) {
			if (__builtin_add_overflow(p->t[j - 1].coef, p->t[i].coef, &p->t[j - 1].coef))
				return false;
		} else
			p->t[j++] = p->t[i];
	}
	p->n = j;
	for (i = 0, j = 0; i < p->n; i++)
		if (p->t[i].coef != 0)
			p->t[j++] = p->t[i];
	p->n = j;
	if (p->n == 0) {
		*out = 0;
		return true;
	}
	if (p->n == 1 && p->t[0].deg == 0) {
		if (p->t[0].coef < 0 || p->t[0].coef > DIMMAX)
			return false;
		*out = (Dim)p->t[0].coef;
		return true;
	}
	for (i = 0; i < m->ndexp; i++) {
		e = &m->dexp[i];
		if (e->nterm == p->n && memcmp(e->term, p->t, p->n * sizeof(Term)) == 0) {
			*out = ~(Dim)i;
			return true;
		}
	}
	if (m->ndexp == m->dexpc) {
		m->dexpc = m->dexpc ? 2 * m->dexpc : 16;
		m->dexp = erealloc(m->dexp, m->dexpc * sizeof *m->dexp);
	}
	e = &m->dexp[m->ndexp];
	e->nterm = p->n;
	e->term = arena_alloc(m->arena, p->n * sizeof(Term));
	memcpy(e->term, p->t, p->n * sizeof(Term));
	*out = ~(Dim)m->ndexp++;
	return true;
}

static Dim
result(Mod *m, Poly *p, bool *ok)
{
	Dim d;

	if (!intern(m, p, &d)) {
		if (ok)
			*ok = false;
		else
			die("dimension arithmetic overflow");
		return 0;
	}
	return d;
}

Dim
dimsym(Mod *m, int sym)
{
	Poly p = {1, {{.coef = 1, .deg = 1, .sym = {(uint16_t)sym}}}};

	if (sym < 0 || sym >= m->nsym)
		die("bad symbol %d", sym);
	return result(m, &p, NULL);
}

static Dim
addsub(Mod *m, Dim a, Dim b, int sign, bool *ok)
{
	Poly p, q;
	int i;

	topoly(m, a, &p);
	topoly(m, b, &q);
	if (p.n + q.n > MaxTerms)
		goto fail;
	for (i = 0; i < q.n; i++) {
		p.t[p.n] = q.t[i];
		if (sign < 0 && __builtin_mul_overflow(q.t[i].coef, -1, &p.t[p.n].coef))
			goto fail;
		p.n++;
	}
	return result(m, &p, ok);
fail:
	if (ok)
		*ok = false;
	return 0;
}

bool
dimle(const Mod *m, Dim a, Dim b)
{
	Poly p, q;
	int i, j;

	if (a == b)
		return true;
	topoly(m, a, &p);
	topoly(m, b, &q);
	for (i = 0; i < p.n; i++) {
		for (j = 0; j < q.n && termcmp(&p.t[i], &q.t[j]) != 0; j++)
			;
		if (p.t[i].coef < 0 || (j < q.n ? q.t[j].coef : 0) < p.t[i].coef)
			return false;
	}
	for (j = 0; j < q.n; j++)
		if (q.t[j].coef < 0)
			return false;
	return true;
}

bool
dimlike(const Mod *m, Dim a, Dim b)
{
	Poly p, q;
	int i;

	if (a == b)
		return true;
	topoly(m, a, &p);
	topoly(m, b, &q);
	if (p.n != q.n)
		return false;
	for (i = 0; i < p.n; i++)   /* both sorted by termcmp */
		if (termcmp(&p.t[i], &q.t[i]) != 0)
			return false;
	return true;
}

Dim
dimadd(Mod *m, Dim a, Dim b, bool *ok)
{
	return addsub(m, a, b, 1, ok);
}

Dim
dimsub(Mod *m, Dim a, Dim b, bool *ok)
{
	return addsub(m, a, b, -1, ok);
}

Dim
dimmul(Mod *m, Dim a, Dim b, bool *ok)
{
	Poly p, q, r;
	Term t;
	int i, j, k, l;

	topoly(m, a, &p);
	topoly(m, b, &q);
	r.n = 0;
	for (i = 0; i < p.n; i++)
		for (j = 0; j < q.n; j++) {
			if (r.n == MaxTerms || p.t[i].deg + q.t[j].deg > MaxDeg)
				goto fail;
			t = (Term){0};
			if (__builtin_mul_overflow(p.t[i].coef, q.t[j].coef, &t.coef))
				goto fail;
			/* merge the two sorted symbol lists */
			for (k = 0, l = 0; k < p.t[i].deg || l < q.t[j].deg;)
				if (l == q.t[j].deg || (k < p.t[i].deg && p.t[i].sym[k] <= q.t[j].sym[l]))
					t.sym[t.deg++] = p.t[i].sym[k++];
				else
					t.sym[t.deg++] = q.t[j].sym[l++];
			r.t[r.n++] = t;
		}
	return result(m, &r, ok);
fail:
	if (ok)
		*ok = false;
	return 0;
}

Dim
dimprod(Mod *m, const Dim *d, int n, bool *ok)
{
	Dim r = 1;
	int i;

	for (i = 0; i < n; i++)
		r = dimmul(m, r, d[i], ok);
	return r;
}

/* a / b for b a single term c*s1*...*sk: every term of a must hold the
 * symbols and a multiple of c. */
bool
dimdiv(Mod *m, Dim a, Dim b, Dim *q)
{
	Poly p, d;
	Term *t;
	int i, j, k, l;

	topoly(m, b, &d);
	if (d.n != 1 || d.t[0].coef <= 0)
		return false;
	topoly(m, a, &p);
	for (i = 0; i < p.n; i++) {
		t = &p.t[i];
		if (t->coef % d.t[0].coef != 0)
			return false;
		t->coef /= d.t[0].coef;
		for (k = 0; k < d.t[0].deg; k++) {
			for (j = 0; j < t->deg && t->sym[j] != d.t[0].sym[k]; j++)
				;
			if (j == t->deg)
				return false;
			for (l = j; l + 1 < t->deg; l++)
				t->sym[l] = t->sym[l + 1];
			t->deg--;
		}
	}
	return intern(m, &p, q);
}

static int64_t
evalterms(const Term *t, int n, const int64_t *symval, int skip, bool *unbound)
{
	int64_t s = 0, v;
	int i, k;

	for (i = 0; i < n; i++) {
		if (i == skip)
			continue;
		v = t[i].coef;
		for (k = 0; k < t[i].deg; k++) {
			if (!symval || symval[t[i].sym[k]] < 0) {
				*unbound = true;
				return -1;
			}
			if (__builtin_mul_overflow(v, symval[t[i].sym[k]], &v))
				return -1;
		}
		if (__builtin_add_overflow(s, v, &s))
			return -1;
	}
	return s;
}

int64_t
dimeval(const Mod *m, Dim d, const int64_t *symval)
{
	const DExp *e;
	bool unbound = false;
	int64_t v;

	if (d >= 0)
		return d;
	e = &m->dexp[~d];
	v = evalterms(e->term, e->nterm, symval, -1, &unbound);
	return unbound || v < 0 ? -1 : v;
}

bool
dimbind(const Mod *m, Dim d, int64_t v, int64_t *symval)
{
	const DExp *e;
	int i, k, which = -1, s = -1;
	bool unbound = false;
	int64_t rest;

	if (d >= 0)
		return d == v;
	e = &m->dexp[~d];
	for (i = 0; i < e->nterm; i++)
		for (k = 0; k < e->term[i].deg; k++)
			if (symval[e->term[i].sym[k]] < 0) {
				if (which >= 0 && (which != i || s != e->term[i].sym[k]))
					return false;
				which = i;
				s = e->term[i].sym[k];
			}
	if (which < 0)
		return dimeval(m, d, symval) == v;
	if (e->term[which].deg != 1)
		return false;
	rest = evalterms(e->term, e->nterm, symval, which, &unbound);
	if (unbound)
		return false;
	rest = v - rest;
	if (rest % e->term[which].coef != 0 || rest / e->term[which].coef < 0)
		return false;
	symval[s] = rest / e->term[which].coef;
	return true;
}

/*
 * d with every symbol s that has symval[s] >= 0 replaced by that value,
 * re-canonicalized (terms that become equal merge, a polynomial that
 * becomes constant is a constant Dim).  symval may be NULL (no change).
 * false through *ok (if not NULL) on overflow or a negative constant,
 * as for the arithmetic above.
 */
Dim
dimsubst(Mod *m, Dim d, const int64_t *symval, bool *ok)
{
	Poly p;
	Term *t;
	int i, k, j;

	topoly(m, d, &p);
	if (d >= 0 || !symval)
		return d;
	for (i = 0; i < p.n; i++) {
		t = &p.t[i];
		for (k = 0, j = 0; k < t->deg; k++) {
			if (symval[t->sym[k]] < 0) {
				t->sym[j++] = t->sym[k];
				continue;
			}
			if (__builtin_mul_overflow(t->coef, symval[t->sym[k]], &t->coef)) {
				if (ok)
					*ok = false;
				return 0;
			}
		}
		for (k = j; k < t->deg; k++)
			t->sym[k] = 0;
		t->deg = (uint8_t)j;
	}
	return result(m, &p, ok);
}

int
dimassym(const Mod *m, Dim d)
{
	const DExp *e;

	if (d >= 0)
		return -1;
	e = &m->dexp[~d];
	if (e->nterm == 1 && e->term[0].deg == 1 && e->term[0].coef == 1)
		return e->term[0].sym[0];
	return -1;
}

int
snprintdim(char *buf, size_t n, const Mod *m, Dim d)
{
	const DExp *e;
	const Term *t;
	size_t len = 0;
	int i, k, w;
	int64_t c;

	char dummy[1];

	/* like snprintf: count everything, write what fits */
	if (!buf)
		buf = dummy, n = 0;
#define PUT(...) do { \
	w = snprintf(buf + (len < n ? len : n), len < n ? n - len : 0, __VA_ARGS__); \
	len += w; \
} while (0)
	if (n)
		buf[0] = 0;
	if (d >= 0) {
		PUT("%d", d);
		return (int)len;
	}
	e = &m->dexp[~d];
	for (i = 0; i < e->nterm; i++) {
		t = &e->term[i];
		c = t->coef;
		if (i > 0) {
			PUT(c < 0 ? " - " : " + ");
			if (c < 0)
				c = -c;
		} else if (c < 0 && t->deg > 0) {
			PUT("-");
			c = -c;
		}
		if (t->deg == 0 || c != 1)
			PUT("%lld%s", (long long)c, t->deg ? "*" : "");
		for (k = 0; k < t->deg; k++)
			PUT("%s%s", k ? "*" : "", m->sym[t->sym[k]].name);
	}
#undef PUT
	return (int)len;
}

void
fprintdim(FILE *f, const Mod *m, Dim d)
{
	char buf[256];
	int n;
	char *p;

	n = snprintdim(buf, sizeof buf, m, d);
	if ((size_t)n < sizeof buf) {
		fputs(buf, f);
		return;
	}
	p = emalloc(n + 1);
	snprintdim(p, n + 1, m, d);
	fputs(p, f);
	free(p);
}
