/*
 * libFuzzer target: the whole pipeline from model source to generated
 * code, short of the C compiler.
 *
 * The input is one .gnn file (named fuzz.gnn; imports resolve against the
 * current directory, so run the fuzzer in an empty one).  If it compiles,
 * the default passes run with the verifier after each one, then for both
 * targets the code generator checks the module and, if it accepts it,
 * writes the source and the header to memory.  User errors are expected
 * and ignored; a crash, an abort through die() (an internal error), a
 * sanitizer report or a leak is a bug.
 *
 * Diagnostics are global state (diag.c): the error count is reset for
 * every input and the 20-error limit, which calls exit(), is lifted.
 * stderr is line buffered, so that the diagnostics of a failing input cost
 * one write per line; run with -close_fd_mask=2 to silence them, or on one
 * file to read them.
 */
#define _POSIX_C_SOURCE 200809L
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "frontend/frontend.h"
#include "passes/passes.h"
#include "harness.h"

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	PassOpts po = {.olevel = 2, .verifyeach = true};
	char *text;
	Mod *m;

	if (!(text = fuzzinput(data, size)))
		return 0;
	m = compiletext("fuzz.gnn", text, size, NULL);
	if (m && diag_nerrors() == 0 && runpasses(m, &po) == 0) {
		generate(m, TargetCPU, "fuzz.gnn");
		generate(m, TargetCUDA, "fuzz.gnn");
	}
	freemod(m);
	free(text);
	return 0;
}
