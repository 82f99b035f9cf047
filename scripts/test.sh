#!/usr/bin/env bash
# The whole test suite: install what is missing, build three trees with
# warnings as errors, and run all their tests in one ctest run, whose
# summary is the last thing printed (CI reads it).
#
#   build/       the plain build (RelWithDebInfo, the default compiler;
#                BUILD_DIR overrides): unit tests and lit suites
#   build-asan/  the same built as Debug with ASan and UBSan
#                (GNNCC_SANITIZE): every test again as asan.*, and what the
#                tests compile with the sanitized gnncc (generated C, the
#                examples, gnnrun's cpu engine) is sanitized too, so a leak,
#                an invalid access or undefined behaviour anywhere fails
#   build-fuzz/  clang with GNNCC_FUZZ: fuzz.smoke fuzzes the frontend for
#                60 s (FUZZ_SECONDS), fuzz.ir-replay runs the IR fuzzer
#                over its seeds; failing inputs land in build-fuzz/crashes/
#
# build/all/CTestTestfile.cmake gathers the three (only the fuzz tests of
# build-fuzz), so ctest runs them side by side, the fuzzer first.
set -euo pipefail
cd "$(dirname "$0")/.."
./scripts/setup.sh
BUILD_DIR=${BUILD_DIR:-build}
CMAKE_ARGS="-DGNNCC_WERROR=ON ${CMAKE_ARGS:-}" BUILD_DIR=$BUILD_DIR ./scripts/build.sh
CMAKE_ARGS="-DGNNCC_WERROR=ON -DGNNCC_SANITIZE=ON ${CMAKE_ARGS:-}" BUILD_DIR=build-asan \
  BUILD_TYPE=Debug ./scripts/build.sh
CC=${FUZZ_CC:-clang} CMAKE_ARGS="-DGNNCC_WERROR=ON -DGNNCC_FUZZ=ON -DGNNCC_FUZZ_SMOKE_SECONDS=${FUZZ_SECONDS:-60} ${CMAKE_ARGS:-}" \
  BUILD_DIR=build-fuzz ./scripts/build.sh

all=$BUILD_DIR/all
mkdir -p "$all"
cat > "$all/CTestTestfile.cmake" <<EOT
# written by scripts/test.sh: the fuzz tests, the sanitizer tree, the plain tree
subdirs("$PWD/build-fuzz/tests/fuzz")
subdirs("$PWD/build-asan")
subdirs("$(cd "$BUILD_DIR" && pwd)")
EOT
cd "$all"
ctest --output-on-failure -j"$(nproc)"
