/*
 * libFuzzer target: IR text through the parser, the verifier, the passes,
 * the printer and the code generator, as `gnncc -x ir` takes it.
 *
 * Text that parses and verifies goes through the default passes (the
 * verifier after each one), is printed, and the print must parse and
 * verify again: the printer and the parser are each other's inverse, so
 * a print that does not read back is a bug, reported by abort() like a
 * crash.  Then both targets' code generators check the module and, if
 * they accept it, write the source and the header to memory.
 *
 * Diagnostics are handled as in fuzz_frontend.c: the error count is reset
 * per input, the error limit lifted, stderr line buffered.
 */
#define _POSIX_C_SOURCE 200809L
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ir/ir.h"
#include "passes/passes.h"
#include "harness.h"

/* The module printed and parsed back: must read without an error. */
static void
roundtrip(Mod *m)
{
	char *buf = NULL;
	size_t len = 0;
	FILE *f;
	Mod *back;

	if (!(f = open_memstream(&buf, &len)))
		abort();
	printmod(f, m);
	fclose(f);
	back = parseir("fuzz.printed.ir", buf, len);
	if (!back || diag_nerrors() > 0 || !verifymod(back, "print")) {
		fprintf(stderr, "fuzz_ir: the printed IR does not read back:\n%s", buf);
		abort();
	}
	freemod(back);
	free(buf);
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	PassOpts po = {.olevel = 2, .verifyeach = true};
	char *text;
	Mod *m;

	if (!(text = fuzzinput(data, size)))
		return 0;
	m = parseir("fuzz.ir", text, size);
	if (m && diag_nerrors() == 0 && verifymod(m, NULL) && runpasses(m, &po) == 0) {
		roundtrip(m);
		generate(m, TargetCPU, "fuzz.ir");
		generate(m, TargetCUDA, "fuzz.ir");
	}
	freemod(m);
	free(text);
	return 0;
}
