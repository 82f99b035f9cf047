/*
 * The emulated device's CUDA runtime API for C++ code that includes only
 * the API header (the runtime's device layer, device_cuda.c): the same
 * functions as cuda_runtime.h, which holds them all.
 */
#include "cuda_runtime.h"
