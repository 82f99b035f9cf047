/*
 * irtool FILE: parse IR text, verify it and print it back.  A stand-in
 * for `gnncc -x ir FILE --dump-ir` in the IR lit tests, so they do not
 * depend on the driver.  Exit 1 on any error.  "-" reads stdin.
 */
#include <stdlib.h>
#include <string.h>

#include "ir.h"

static char *
readall(FILE *f, size_t *len)
{
	size_t n = 0, c = 1 << 16, k;
	char *buf = emalloc(c);

	while ((k = fread(buf + n, 1, c - n, f)) > 0) {
		n += k;
		if (n == c)
			buf = erealloc(buf, c *= 2);
	}
	*len = n;
	return buf;
}

int
main(int argc, char **argv)
{
	const char *path = NULL;
	size_t len;
	char *text;
	FILE *f;
	Mod *m;
	int i;

	for (i = 1; i < argc; i++)
		if (strcmp(argv[i], "-fno-caret") == 0)
			diag_setcaret(false);
		else if (!path)
			path = argv[i];
		else {
			fprintf(stderr, "usage: irtool [-fno-caret] FILE\n");
			return 2;
		}
	if (!path) {
		fprintf(stderr, "usage: irtool [-fno-caret] FILE\n");
		return 2;
	}
	f = strcmp(path, "-") == 0 ? stdin : fopen(path, "rb");
	if (!f) {
		perror(path);
		return 1;
	}
	text = readall(f, &len);
	if (f != stdin)
		fclose(f);
	m = parseir(path, text, len);
	if (!m)
		return 1;
	if (!verifymod(m, NULL)) {
		freemod(m);
		return 1;
	}
	printmod(stdout, m);
	freemod(m);
	free(text);
	return 0;
}
