/*
 * parsedump [-l] FILE: parse FILE and print the AST of each item with
 * dumpnode, for the tests in this directory.  -l also prints the
 * locations of expressions.  Exit status 1 if any error was reported.
 */
#include <stdlib.h>
#include <string.h>

#include "../../frontend/ast.h"


int
main(int argc, char **argv)
{
	const char *path;
	char *text;
	size_t len;
	Arena *a;
	File *file;
	int i;

	if (argc == 3 && strcmp(argv[1], "-l") == 0) {
		dumplocs = true;
		path = argv[2];
	} else if (argc == 2) {
		path = argv[1];
	} else {
		fprintf(stderr, "usage: parsedump [-l] FILE\n");
		return 2;
	}
	if (!(text = readfile(path, &len))) {
		perror(path);
		return 2;
	}
	a = arena_new();
	file = parsefile(a, path, text, len);
	if (!file) {
		arena_free(a);
		free(text);
		return 1;
	}
	for (i = 0; i < file->items.n; i++)
		dumpnode(stdout, file->items.v[i], 0);
	arena_free(a);
	free(text);
	return 0;
}
