#!/usr/bin/env bash
# The whole test suite: install what is missing, build three trees with
# warnings as errors, and run all their tests in one ctest run.  It ends
# with the slowest tests (ctest's entries and the lit tests inside them,
# scripts/testtimes.py) and then ctest's summary, the last lines printed
# (CI reads them).
#
#   build/       the plain build (RelWithDebInfo, the default compiler;
#                BUILD_DIR overrides): unit tests and lit suites
#   build-asan/  the same built as Debug with ASan and UBSan
#                (GNNCC_SANITIZE): every test again as asan.*, and what the
#                tests compile with the sanitized gnncc (generated C, the
#                examples, gnnrun's cpu engine) is sanitized too, so a leak,
#                an invalid access or undefined behaviour anywhere fails;
#                tests whose cost is numerics run smaller inputs there
#                (lit's feature asan), and the cuda matrix runs only in
#                the plain tree (ThreadSanitizer cannot join ASan)
#   build-fuzz/  clang with GNNCC_FUZZ: fuzz.smoke fuzzes the frontend, and
#                fuzz.safetensors, fuzz.npy and fuzz.graph the loaders of
#                weight and graph files, for a fixed number of inputs each
#                (FUZZ_RUNS, default 2000: the same work however busy the
#                machine is; a few seconds for a loader), fuzz.ir-replay
#                runs the IR fuzzer over its seeds; failing inputs land in
#                build-fuzz/crashes/
#
# build/all/CTestTestfile.cmake gathers the three (only the fuzz tests of
# build-fuzz), so ctest runs them side by side, the longest first.
#
#   ./scripts/test.sh --quick
#
# is the development loop: the plain tree only, no sanitizers and no fuzz
# tree, lit's quick subset (--param quick=1: the slowest tests skipped,
# the cuda matrix on three models, four configurations and two graphs).
# CI runs the whole suite (.ci/run).
set -euo pipefail
cd "$(dirname "$0")/.."
root=$PWD
quick=0
case "${1:-}" in
  --quick) quick=1 ;;
  "") ;;
  *) echo "usage: $0 [--quick]" >&2; exit 2 ;;
esac
./scripts/setup.sh
BUILD_DIR=${BUILD_DIR:-build}
CMAKE_ARGS="-DGNNCC_WERROR=ON ${CMAKE_ARGS:-}" BUILD_DIR=$BUILD_DIR ./scripts/build.sh

# lit lists each suite's slowest tests (scripts/testtimes.py reads them)
export LIT_OPTS="--time-tests ${LIT_OPTS:-}"
if [ $quick = 1 ]; then
  export LIT_OPTS="--param quick=1 $LIT_OPTS"
  cd "$BUILD_DIR"
  rc=0
  # the unit tests' second runs in shuffled orders are the full suite's
  mkdir -p Testing
  ctest --output-on-failure -j"$(nproc)" -E 'unit\.[a-z_]+\.random$' | tee Testing/quick.log || rc=$?
  python3 "$root/scripts/testtimes.py" . 5
  grep -E '^(100|[0-9]+)% tests passed|^Total Test time' Testing/quick.log || true
  exit $rc
fi

CMAKE_ARGS="-DGNNCC_WERROR=ON -DGNNCC_SANITIZE=ON ${CMAKE_ARGS:-}" BUILD_DIR=build-asan \
  BUILD_TYPE=Debug ./scripts/build.sh
CC=${FUZZ_CC:-clang} CMAKE_ARGS="-DGNNCC_WERROR=ON -DGNNCC_FUZZ=ON -DGNNCC_FUZZ_SMOKE_RUNS=${FUZZ_RUNS:-2000} ${CMAKE_ARGS:-}" \
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
mkdir -p Testing
rc=0
ctest --output-on-failure -j"$(nproc)" | tee Testing/full.log || rc=$?
python3 "$root/scripts/testtimes.py" . 10
# the CPU the builds and tests took (user, system): unlike the wall
# time, it does not grow with the machine's other load
times > Testing/cpu.txt; echo "CPU time (user system): $(tail -n 1 Testing/cpu.txt)"
grep -E '^(100|[0-9]+)% tests passed|^Total Test time' Testing/full.log || true
exit $rc
