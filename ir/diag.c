/*
 * Diagnostics in the format of C compilers (cproc's file:line:col, then
 * chibicc's source line and caret).  User errors are counted and the
 * stage goes on, so one run can report several; the driver turns a
 * non-zero count into exit status 1.  Internal bugs take die(), which
 * aborts with the compiler's own source position.
 *
 * The registered sources are diag's own copies, names and texts, kept
 * until exit (one per file name; a name registered again gets the new
 * text): locations (Loc.file) point at the name diag_addsource returns,
 * so they stay valid after the frontend has freed its memory, and a
 * diagnostic printed by a later stage (codegen) can still quote the line.
 */
#include <stdlib.h>
#include <string.h>

#include "ir.h"

typedef struct Source {
	char *file;
	char *text;
	size_t len;
} Source;

static Source *sources;
static int nsources;
static bool caret = true;
static int nerrors;
static int maxerrors = 20;

/* A diagnostic stays readable whatever the input: a message is cut at
 * MsgMax bytes (it may quote a string of any length), and a long source
 * line is shown as a window of LineMax bytes around the caret (a
 * generated or hostile file may hold megabytes on one line). */
enum { MsgMax = 4096, LineMax = 160 };

static char *
copytext(const char *text, size_t len)
{
	char *p = emalloc(len + 1);

	if (len)
		memcpy(p, text, len);
	return p;
}

const char *
diag_addsource(const char *file, const char *text, size_t len)
{
	int i;

	if (!text)
		len = 0;
	for (i = 0; i < nsources; i++)
		if (strcmp(sources[i].file, file) == 0) {
			if (sources[i].len != len || (len && memcmp(sources[i].text, text, len) != 0)) {
				free(sources[i].text);
				sources[i].text = copytext(text, len);
				sources[i].len = len;
			}
			return sources[i].file;
		}
	sources = erealloc(sources, (nsources + 1) * sizeof *sources);
	sources[nsources++] = (Source){estrdup(file), copytext(text, len), len};
	return sources[nsources - 1].file;
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
	const char *p, *end, *lim, *from, *to, *at;
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
	/* the window [from, to) of the line, with the caret's byte at in it */
	at = l.col - 1 < end - p ? p + l.col - 1 : end;
	from = p;
	to = end;
	if (end - p > LineMax) {
		from = at - p > LineMax / 2 ? at - LineMax / 2 : p;
		to = end - from > LineMax ? from + LineMax : end;
		from = to - from < LineMax ? to - LineMax : from;
		/* do not start or end inside a UTF-8 sequence */
		while (from < at && from > p && (*from & 0xc0) == 0x80)
			from++;
		while (to > at + 1 && to < end && (*to & 0xc0) == 0x80)
			to--;
	}
	fputs(from > p ? " ..." : " ", stderr);
	for (const char *q = from; q < to; q++)
		fputc((unsigned char)*q < 0x20 && *q != '\t' ? ' ' : *q, stderr);
	fputs(to < end ? "...\n " : "\n ", stderr);
	if (from > p)
		fputs("   ", stderr);
	for (const char *q = from; q < at; q++)
		fputc(*q == '\t' ? '\t' : ' ', stderr);
	fputs("^\n", stderr);
}

static void
report(Loc l, const char *kind, const char *fmt, va_list ap)
{
	char msg[MsgMax];
	int n;

	if (l.file)
		fprintf(stderr, "%s:%d:%d: %s: ", l.file, l.line, l.col, kind);
	else
		fprintf(stderr, "gnncc: %s: ", kind);
	n = vsnprintf(msg, sizeof msg, fmt, ap);
	fputs(msg, stderr);
	fputs(n >= (int)sizeof msg ? "...\n" : "\n", stderr);
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
