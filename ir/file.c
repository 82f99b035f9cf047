/*
 * Reading whole source files, for the frontend, the IR parser and the
 * tools.  "-" is standard input.  The text is NUL-terminated (the lexers
 * rely on it) but may itself hold NUL bytes: *len is authoritative.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "ir.h"

char *
readfile(const char *path, size_t *len)
{
	FILE *f;
	char *buf = NULL;
	size_t n = 0, cap = 0, r;
	int err;

	f = strcmp(path, "-") == 0 ? stdin : fopen(path, "rb");
	if (!f)
		return NULL;
	for (;;) {
		if (cap - n < 4096) {
			cap = cap ? 2 * cap : 65536;
			buf = erealloc(buf, cap + 1);
		}
		r = fread(buf + n, 1, cap - n, f);
		n += r;
		if (r == 0)
			break;
	}
	err = ferror(f) ? (errno ? errno : EIO) : 0;
	if (f != stdin)
		fclose(f);
	if (err) {
		free(buf);
		errno = err;
		return NULL;
	}
	buf[n] = 0;
	*len = n;
	return buf;
}
