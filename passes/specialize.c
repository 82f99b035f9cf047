/*
 * specialize: shape specialization for one graph size.
 *
 * `--specialize N=2708,E=10556` replaces the named symbols by constants
 * everywhere a dim lives: value types (function arguments, graphs and
 * tensors) and the attributes that hold dims (`n` of the scatters,
 * `shape` of reshape).  Each dim is rebuilt by substitution and
 * re-interned, so `E1 + N` becomes `E1 + 2708` and `2*N` becomes `5416`,
 * and a dim attribute that becomes constant takes the form the IR parser
 * gives a constant (AInt, AInts), so the printed IR reads back the same.
 *
 * Widths are constants already; what this buys is constant loop bounds
 * for the node and edge loops, and a model that refuses other graphs:
 * bind checks a constant graph size against the graph it is given.
 * Derived sizes (E1, the edge count after remove_self_loops) stay
 * symbolic: they are measured at bind, and the IR types each
 * data-dependent graph op with a derived symbol of its own, so naming
 * one is a user error.  `E1 + N` with N fixed becomes `E1 + 2708`.
 *
 * The values are module-wide (symbols belong to the module), set by
 * specializeprep() from the driver's option before the pass runs; the
 * pass manager runs it first whenever the option is given, at every -O
 * level, since it changes what the compiled model accepts rather than
 * how fast it runs.  Without values the pass changes nothing.
 */
#include <ctype.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "passes.h"

static Mod *specmod;         /* the module the values are for */
static int64_t *specval;     /* per symbol of specmod: its value, or -1 */

/*
 * Split "N=2708, E=10556" into names and values.  Calls each(ud, name,
 * namelen, value) per pair; returns 0, or -1 after a message.
 */
static int
parsespec(const char *s, int (*each)(void *, const char *, size_t, int64_t), void *ud)
{
	const char *name, *p = s;
	size_t len;
	char *end;
	long long v;

	for (;;) {
		while (*p == ' ' || *p == '\t')
			p++;
		name = p;
		while (isalnum((unsigned char)*p) || *p == '_')
			p++;
		len = p - name;
		while (*p == ' ' || *p == '\t')
			p++;
		if (len == 0 || isdigit((unsigned char)*name) || *p != '=') {
			fprintf(stderr, "gnncc: error: --specialize takes SIZE=VALUE pairs separated by commas "
			        "(N=2708,E=10556), not '%s'\n", s);
			return -1;
		}
		p++;
		while (*p == ' ' || *p == '\t')
			p++;
		errno = 0;
		v = isdigit((unsigned char)*p) ? strtoll(p, &end, 10) : -1;
		if (v < 0 || errno || v > DIMMAX) {
			fprintf(stderr, "gnncc: error: --specialize: %.*s takes an integer from 0 to %d\n",
			        (int)len, name, DIMMAX);
			return -1;
		}
		p = end;
		while (*p == ' ' || *p == '\t')
			p++;
		if (each && each(ud, name, len, v) < 0)
			return -1;
		if (!*p)
			return 0;
		if (*p != ',') {
			fprintf(stderr, "gnncc: error: --specialize: unexpected '%s' after %.*s's value\n",
			        p, (int)len, name);
			return -1;
		}
		p++;
	}
}

int
checkspecialize(const char *spec)
{
	return parsespec(spec, NULL, NULL);
}

static int
setone(void *ud, const char *name, size_t len, int64_t v)
{
	Mod *m = ud;
	char buf[128];
	int s, k, n;

	snprintf(buf, sizeof buf, "%.*s", (int)len, name);
	if ((s = symlookup(m, buf)) < 0) {
		fprintf(stderr, "gnncc: error: --specialize: the model has no size '%s'", buf);
		for (k = 0, n = 0; k < m->nsym; k++)
			if (!m->sym[k].derived)
				fprintf(stderr, "%s%s", n++ ? ", " : " (its sizes: ", m->sym[k].name);
		fprintf(stderr, "%s\n", n ? ")" : "");
		return -1;
	}
	/* the IR types a data-dependent graph op with a fresh derived
	 * symbol (typecheck.c): its size is measured at bind, never fixed */
	if (m->sym[s].derived) {
		fprintf(stderr, "gnncc: error: --specialize: %s is a derived size, measured when a graph is "
		        "bound (the edge count after a self-loop operation); only the graph's own sizes "
		        "can be fixed\n", buf);
		return -1;
	}
	if (specval[s] >= 0) {
		fprintf(stderr, "gnncc: error: --specialize: %s is given twice\n", buf);
		return -1;
	}
	specval[s] = v;
	return 0;
}

int
specializeprep(Mod *m, const char *spec)
{
	int k;

	specializedone();
	if (!spec)
		return 0;
	specmod = m;
	specval = emalloc((m->nsym + 1) * sizeof *specval);
	for (k = 0; k < m->nsym; k++)
		specval[k] = -1;
	if (parsespec(spec, setone, m) < 0) {
		specializedone();
		return -1;
	}
	return 0;
}

void
specializedone(void)
{
	free(specval);
	specval = NULL;
	specmod = NULL;
}

/* The substituted dim; false (after an error at loc) if it overflows. */
static bool
subst(Fn *fn, Dim *d, Loc loc, const char *what)
{
	bool ok = true;
	Dim r = dimsubst(fn->mod, *d, specval, &ok);
	char buf[256];

	if (!ok) {
		snprintdim(buf, sizeof buf, fn->mod, *d);
		errorat(loc, "--specialize: %s: %s overflows with the given sizes", what, buf);
		return false;
	}
	*d = r;
	return true;
}

static bool
substtype(Fn *fn, Type *t, Loc loc, const char *what)
{
	char buf[256];
	int k;

	for (k = 0; k < t->rank; k++)
		if (!subst(fn, &t->dim[k], loc, what))
			return false;
	if (!typenumelok(fn->mod, *t)) {
		snprinttype(buf, sizeof buf, fn->mod, *t);
		errorat(loc, "--specialize: %s becomes %s, too large to compile", what, buf);
		return false;
	}
	return true;
}

/* A dim attribute, in the form the parser gives it: AInt once constant,
 * AInts once every element is. */
static bool
substattr(Fn *fn, Attr *a, Loc loc)
{
	Arena *ar = fn->mod->arena;
	bool allconst = true;
	int64_t *is;
	Dim *ds;
	int k;

	if (a->kind == ADim) {
		if (!subst(fn, &a->u.d, loc, a->key))
			return false;
		if (dimisconst(a->u.d))
			*a = mkattrint(ar, a->key, dimconstval(a->u.d));
		return true;
	}
	if (a->kind != ADims)
		return true;
	/* a fresh array: attributes may share storage with a copy */
	ds = emalloc((a->n + 1) * sizeof *ds);
	for (k = 0; k < a->n; k++) {
		ds[k] = a->u.ds[k];
		if (!subst(fn, &ds[k], loc, a->key)) {
			free(ds);
			return false;
		}
		allconst &= dimisconst(ds[k]);
	}
	if (allconst) {
		is = emalloc((a->n + 1) * sizeof *is);
		for (k = 0; k < a->n; k++)
			is[k] = dimconstval(ds[k]);
		*a = mkattrints(ar, a->key, is, a->n);
		free(is);
	} else
		*a = mkattrdims(ar, a->key, ds, a->n);
	free(ds);
	return true;
}

void
specialize(Fn *fn)
{
	Ins *in;
	bool *done;
	int i, k;
	char what[160];
	Ref v;

	if (!specval || specmod != fn->mod)
		return;
	done = emalloc(fn->nval + 1);
	memset(done, 0, fn->nval + 1);
	/* results at their instruction's location, inputs at the function's */
	for (i = 0; i < fn->nins; i++) {
		in = &fn->ins[i];
		if ((v = in->to) >= 0 && !done[v]) {
			done[v] = true;
			snprintf(what, sizeof what, "%%%s", fn->val[v].name ? fn->val[v].name : "value");
			if (!substtype(fn, &fn->val[v].type, in->loc, what))
				goto out;
		}
		for (k = 0; k < in->nattr; k++)
			if (!substattr(fn, &in->attr[k], in->loc))
				goto out;
	}
	for (v = 0; v < fn->nval; v++) {
		if (done[v])
			continue;
		snprintf(what, sizeof what, "%%%s", fn->val[v].name ? fn->val[v].name : "value");
		if (!substtype(fn, &fn->val[v].type, fn->loc, what))
			goto out;
	}
out:
	free(done);
}
