/*
 * Diagnostics in the format of C compilers (cproc's file:line:col, then
 * chibicc's source line and caret).  User errors are counted and the
 * stage goes on, so one run can report several; the driver turns a
 * non-zero count into exit status 1.  Internal bugs take die(), which
 * aborts with the compiler's own source position.
 */
#include <stdlib.h>
#include <string.h>

#include "ir.h"

typedef struct Source {
	const char *file;
	const char *text;
	size_t len;
} Source;

static Source *sources;
static int nsources;
static bool caret = true;
static int nerrors;
static int maxerrors = 20;

void
diag_addsource(const char *file, const char *text, size_t len)
{
	int i;

	for (i = 0; i < nsources; i++)
		if (strcmp(sources[i].file, file) == 0) {
			sources[i].text = text;
			sources[i].len = len;
			return;
		}
	sources = erealloc(sources, (nsources + 1) * sizeof *sources);
	sources[nsources++] = (Source){file, text, len};
}

void
diag_setcaret(bool on)
{
	caret = on;
}

void
diag_setmaxerrors(int n)
{
	maxerrors = n;
}

int
diag_nerrors(void)
{
	return nerrors;
}

void
diag_reset(void)
{
	nerrors = 0;
}

/* Print the source line of l and a caret under its column.  Tabs are
 * copied into the caret line so the caret lines up in any tab width. */
static void
showline(Loc l)
{
	const char *p, *end, *lim;
	int i, line;

	if (!caret || !l.file || l.line <= 0)
		return;
	for (i = 0; i < nsources; i++)
		if (strcmp(sources[i].file, l.file) == 0)
			break;
	if (i == nsources)
		return;
	p = sources[i].text;
	lim = p + sources[i].len;
	for (line = 1; line < l.line && p < lim; p++)
		if (*p == '\n')
			line++;
	if (line != l.line)
		return;
	for (end = p; end < lim && *end != '\n'; end++)
		;
	fputc(' ', stderr);
	for (const char *q = p; q < end; q++)
		fputc((unsigned char)*q < 0x20 && *q != '\t' ? ' ' : *q, stderr);
	fputs("\n ", stderr);
	for (i = 1; i < l.col && p + i - 1 < end; i++)
		fputc(p[i - 1] == '\t' ? '\t' : ' ', stderr);
	fputs("^\n", stderr);
}

static void
report(Loc l, const char *kind, const char *fmt, va_list ap)
{
	if (l.file)
		fprintf(stderr, "%s:%d:%d: %s: ", l.file, l.line, l.col, kind);
	else
		fprintf(stderr, "gnncc: %s: ", kind);
	vfprintf(stderr, fmt, ap);
	fputc('\n', stderr);
	showline(l);
}

void
verrorat(Loc l, const char *fmt, va_list ap)
{
	report(l, "error", fmt, ap);
	if (++nerrors >= maxerrors && maxerrors > 0) {
		fprintf(stderr, "gnncc: too many errors, stopping\n");
		exit(1);
	}
}

void
errorat(Loc l, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	verrorat(l, fmt, ap);
	va_end(ap);
}

void
noteat(Loc l, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	report(l, "note", fmt, ap);
	va_end(ap);
}

void
warnat(Loc l, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	report(l, "warning", fmt, ap);
	va_end(ap);
}

_Noreturn void
die_(const char *file, int line, const char *fmt, ...)
{
	va_list ap;

	fprintf(stderr, "gnncc: internal error at %s:%d: ", file, line);
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputc('\n', stderr);
	abort();
}

void *
emalloc(size_t n)
{
	void *p;

	p = calloc(1, n ? n : 1);
	if (!p)
		die("out of memory (%zu bytes)", n);
	return p;
}

void *
erealloc(void *p, size_t n)
{
	p = realloc(p, n ? n : 1);
	if (!p)
		die("out of memory (%zu bytes)", n);
	return p;
}

char *
estrdup(const char *s)
{
	size_t n = strlen(s) + 1;

	return memcpy(emalloc(n), s, n);
}
