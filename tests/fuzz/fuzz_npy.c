/*
 * libFuzzer target: a .npy file through gnn_npy_read, as gnnrun and a
 * user's program read features, masks and labels.
 *
 * An array that reads must be what gnnrt.h promises: a valid dtype, a
 * rank in [0, GNN_MAX_RANK], dims >= 0 and nbytes equal to the shape's
 * size, with every byte there (each is read); gnn_check_finite then scans
 * it and may only pass or name a bad element.  A failure must be a file
 * status with a message and leave the array zeroed (loader.h).
 */
#define _GNU_SOURCE
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "loader.h"

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static const gnn_array zero;
	gnn_array a;
	gnn_status s;

	memset(&a, 0xa5, sizeof a);
	if ((s = gnn_npy_read(fuzzfile(data, size), &a)) != GNN_OK) {
		fuzzfailed(s);
		FUZZ_CHECK(memcmp(&a, &zero, sizeof a) == 0);
		fuzzdone();
		return 0;
	}
	FUZZ_CHECK(gnn_dtype_size(a.dtype) > 0);
	FUZZ_CHECK(a.rank >= 0 && a.rank <= GNN_MAX_RANK);
	for (int i = 0; i < a.rank; i++)
		FUZZ_CHECK(a.shape[i] >= 0);
	FUZZ_CHECK(a.nbytes == (size_t)gnn_array_numel(&a) * gnn_dtype_size(a.dtype));
	FUZZ_CHECK(a.nbytes == 0 || a.data != NULL);
	fuzztouch(a.data, a.nbytes);
	s = gnn_check_finite(&a, "x");
	FUZZ_CHECK(s == GNN_OK || s == GNN_ERR_RANGE);
	gnn_array_free(&a);
	fuzzdone();
	return 0;
}
