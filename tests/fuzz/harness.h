/*
 * What the two fuzz targets share: libFuzzer's entry points, the
 * diagnostics set-up (line-buffered stderr, no error limit), and code
 * generation for one target into a memory stream.  Included by each
 * target's single source file.
 */
#ifndef GNNCC_FUZZ_HARNESS_H
#define GNNCC_FUZZ_HARNESS_H

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "codegen/codegen.h"

int LLVMFuzzerInitialize(int *argc, char ***argv);
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int
LLVMFuzzerInitialize(int *argc, char ***argv)
{
	(void)argc;
	(void)argv;
	setvbuf(stderr, NULL, _IOLBF, BUFSIZ);
	diag_setmaxerrors(0);
	return 0;
}

/* A fresh input: the bytes NUL-terminated (the lexers want it) and no
 * diagnostics counted yet.  NULL if out of memory. */
static char *
fuzzinput(const uint8_t *data, size_t size)
{
	char *text = malloc(size + 1);

	if (!text)
		return NULL;
	memcpy(text, data, size);
	text[size] = 0;
	diag_reset();
	return text;
}

/* codegencheck, then the source and the header into a memory stream */
static void
generate(Mod *m, int target, const char *source)
{
	CodegenOpts co = {.target = target, .source = source, .header = "fuzz.h"};
	char *buf = NULL;
	size_t len = 0;
	FILE *f;

	if (codegencheck(m, &co) > 0)
		return;
	if (!(f = open_memstream(&buf, &len)))
		abort();
	emitsource(f, m, &co);
	emitheader(f, m, &co);
	fclose(f);
	free(buf);
}

#endif
