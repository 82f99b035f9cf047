// Helpers for the mutation tests: each input has a bug that the emulator
// must catch, and builds with -DFIXED without it (the test runs both, so
// that it cannot pass for a reason other than the bug).
#include <cuda_runtime.h>
#include <stdio.h>
#include <stdlib.h>

#define CHECK(x) do { cudaError_t e_ = (x); if (e_ != cudaSuccess) { \
	printf("%s failed: %s\n", #x, cudaGetErrorString(e_)); exit(2); } } while (0)
