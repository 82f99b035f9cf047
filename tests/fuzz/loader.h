/*
 * What the three loader fuzz targets share (fuzz_safetensors.c,
 * fuzz_npy.c, fuzz_graph.c): the input as a file, a checking allocator,
 * and the runtime's failure contract.
 *
 * The loaders take a path, as a user's program calls them, so each input
 * is written to one memfd (a file in memory, reopened through
 * /proc/self/fd/N): the fuzzers go through fopen, fstat and fread like a
 * downloaded file does, with no disk traffic per input.
 *
 * Every runtime allocation goes through the allocator hook (gnnrt.h), so
 * the hook installed here checks its contract: a block is freed or resized
 * with the size it was allocated with (kept in a 16-byte header, which
 * keeps malloc's alignment), and when an input is done everything the
 * runtime allocated for it is freed, whether the call failed or not.  A
 * request above FUZZ_ALLOC_MAX gets NULL, as a real allocator gives at some
 * size: the loaders then fail with GNN_ERR_MEM, and a graph of 2^40 nodes
 * tests that path instead of exhausting the machine.
 */
#ifndef GNNCC_FUZZ_LOADER_H
#define GNNCC_FUZZ_LOADER_H

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "gnnrt.h"

/* a target may lower it: the graph's, whose work grows with the node count
 * that two bytes of an index set, so that a big graph is a quick failure */
#ifndef FUZZ_ALLOC_MAX
#define FUZZ_ALLOC_MAX (64u << 20)
#endif

int LLVMFuzzerInitialize(int *argc, char ***argv);
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static size_t fuzzlive;      /* bytes the runtime holds */
static char fuzzpath[64];    /* the input's file */
static int fuzzfd = -1;

/* prints why and aborts: a broken invariant is a find, like a crash */
#define FUZZ_CHECK(cond) \
	((cond) ? (void)0 : (fprintf(stderr, "%s:%d: check failed: %s (gnn_errmsg: %s)\n", \
		__FILE__, __LINE__, #cond, gnn_errmsg()), abort()))

static void *
fuzzalloc(void *ud, void *ptr, size_t osize, size_t nsize)
{
	size_t *h = ptr ? (size_t *)ptr - 2 : NULL;

	(void)ud;
	if (h && h[0] != osize) {
		fprintf(stderr, "fuzz: a block of %zu bytes freed or resized as %zu bytes\n", h[0], osize);
		abort();
	}
	if (nsize == 0) {
		free(h);
		fuzzlive -= osize;
		return NULL;
	}
	if (nsize > FUZZ_ALLOC_MAX)
		return NULL;
	if (!(h = realloc(h, nsize + 2 * sizeof *h)))
		return NULL;
	h[0] = nsize;
	fuzzlive += nsize - osize;
	return h + 2;
}

int
LLVMFuzzerInitialize(int *argc, char ***argv)
{
	(void)argc;
	(void)argv;
	setvbuf(stderr, NULL, _IOLBF, BUFSIZ);
	gnn_set_allocator(fuzzalloc, NULL);
	if ((fuzzfd = memfd_create("fuzz-input", MFD_CLOEXEC)) < 0) {
		perror("fuzz: memfd_create");
		abort();
	}
	snprintf(fuzzpath, sizeof fuzzpath, "/proc/self/fd/%d", fuzzfd);
	return 0;
}

/* the input as the file at fuzzpath */
static const char *
fuzzfile(const uint8_t *data, size_t size)
{
	size_t done = 0;

	if (ftruncate(fuzzfd, 0) != 0)
		abort();
	while (done < size) {
		ssize_t k = pwrite(fuzzfd, data + done, size - done, (off_t)done);
		if (k <= 0)
			abort();
		done += (size_t)k;
	}
	return fuzzpath;
}

/* a load that failed on a file's content: a status that says what is wrong
 * with the file (never GNN_ERR_ARG, a caller bug) and a message saying why */
static void
fuzzfailed(gnn_status s)
{
	FUZZ_CHECK(s == GNN_ERR_MEM || s == GNN_ERR_IO || s == GNN_ERR_FORMAT || s == GNN_ERR_DTYPE
		|| s == GNN_ERR_SHAPE || s == GNN_ERR_RANGE);
	FUZZ_CHECK(gnn_errmsg()[0] != '\0');
}

/* the end of an input: the runtime holds nothing */
static void
fuzzdone(void)
{
	if (fuzzlive != 0) {
		fprintf(stderr, "fuzz: the runtime still holds %zu bytes after the input\n", fuzzlive);
		abort();
	}
}

/* reads every byte of a view, so that a view past its buffer's end is reported */
volatile unsigned fuzzsink;

__attribute__((unused)) static void
fuzztouch(const void *p, size_t n)
{
	const unsigned char *b = p;
	unsigned sum = 0;

	for (size_t i = 0; i < n; i++)
		sum += b[i];
	fuzzsink += sum;
}

#endif
