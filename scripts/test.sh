#!/usr/bin/env bash
# The whole test suite: install what is missing, build with warnings as
# errors, and run every test through ctest (unit tests and lit suites).
set -euo pipefail
cd "$(dirname "$0")/.."
./scripts/setup.sh
CMAKE_ARGS="-DGNNCC_WERROR=ON ${CMAKE_ARGS:-}" ./scripts/build.sh
cd "${BUILD_DIR:-build}"
ctest --output-on-failure -j"$(nproc)"
