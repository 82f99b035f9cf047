/*
 * What every generated CUDA source includes first (codegen/emit.c's
 * prelude), in its order: precompiled once per emulated build mode by
 * CMakeLists.txt here, and put before each model's compile
 * (driver/toolchain.c's emucommand), whose own includes of these then
 * find them done.  The C++ library headers cuda_runtime.h brings were a
 * seventh of a model's compile.
 */
#include <math.h>
#include <stdint.h>
#include <string.h>

#include <cuda_runtime.h>

#include "gnnrt.h"
