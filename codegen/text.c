/*
 * Text for the code generator: growable strings, an indenting writer,
 * and formatted strings that live until the model's source is written.
 *
 * Nothing here has a fixed size: generated expressions, argument lists and
 * names grow with the model (a long name or a wide concat is only more
 * text).  The writer indents for the emitters: they write lines without
 * leading tabs and open and close blocks, so nesting shows in the output
 * as it is in the emitter's calls.
 */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "emit.h"

void
vsput(Str *b, const char *fmt, va_list ap)
{
	va_list aq;
	int n;

	va_copy(aq, ap);
	n = vsnprintf(b->s ? b->s + b->len : NULL, b->s ? b->cap - b->len : 0, fmt, aq);
	va_end(aq);
	if (n < 0)
		die("codegen: bad format '%s'", fmt);
	if (!b->s || b->len + (size_t)n + 1 > b->cap) {
		size_t cap = b->cap ? b->cap : 64;
		while (cap < b->len + (size_t)n + 1)
			cap *= 2;
		b->s = erealloc(b->s, cap);
		b->cap = cap;
		vsnprintf(b->s + b->len, b->cap - b->len, fmt, ap);
	}
	b->len += (size_t)n;
}

void
sput(Str *b, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vsput(b, fmt, ap);
	va_end(ap);
}

/* the string so far ("" when nothing was written) */
const char *
sstr(const Str *b)
{
	return b->s ? b->s : "";
}

void
sfree(Str *b)
{
	free(b->s);
	memset(b, 0, sizeof *b);
}

/*
 * The writer: each line of text gets w->ind tabs in front of it (blank
 * lines none).  Lines that begin with '#' (preprocessor) start at column 0.
 */
void
vwput(W *w, const char *fmt, va_list ap)
{
	Str t = {0};
	const char *p, *nl;
	int k;

	vsput(&t, fmt, ap);
	for (p = sstr(&t); *p; p = nl) {
		nl = strchr(p, '\n');
		nl = nl ? nl + 1 : p + strlen(p);
		if (w->bol && *p != '\n' && *p != '#')
			for (k = 0; k < w->ind; k++)
				sput(&w->s, "\t");
		sput(&w->s, "%.*s", (int)(nl - p), p);
		w->bol = nl[-1] == '\n';
	}
	sfree(&t);
}

void
wput(W *w, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vwput(w, fmt, ap);
	va_end(ap);
}

/* a line ending in " {", then one level in */
void
wopen(W *w, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vwput(w, fmt, ap);
	va_end(ap);
	wput(w, " {\n");
	w->ind++;
}

/* one level out, and the closing brace (with what follows it: "" or ";") */
void
wclose(W *w, const char *after)
{
	if (w->ind <= 0)
		die("codegen: unbalanced blocks");
	w->ind--;
	wput(w, "}%s\n", after);
}

/* A formatted string that lives as long as e's model is being written. */
const char *
pf(E *e, const char *fmt, ...)
{
	Str b = {0};
	va_list ap;

	va_start(ap, fmt);
	vsput(&b, fmt, ap);
	va_end(ap);
	if (e->npool == e->capool) {
		e->capool = e->capool ? 2 * e->capool : 64;
		e->pool = erealloc(e->pool, e->capool * sizeof *e->pool);
	}
	return e->pool[e->npool++] = b.s ? b.s : estrdup("");
}

void
poolfree(E *e)
{
	size_t i;

	for (i = 0; i < e->npool; i++)
		free(e->pool[i]);
	free(e->pool);
	e->pool = NULL;
	e->npool = e->capool = 0;
}
