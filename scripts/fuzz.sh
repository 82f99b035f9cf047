#!/usr/bin/env bash
# Fuzzes gnncc: scripts/fuzz.sh [SECONDS] [TARGET]
#
# Builds the libFuzzer targets of tests/fuzz with clang into build-fuzz/
# (GNNCC_FUZZ=ON: coverage, ASan, UBSan; BUILD_DIR overrides), then runs
# each TARGET (frontend, ir, safetensors, npy, graph; loaders: the last
# three; all, the default: the five) for SECONDS (default 60) each, one
# after the other, through tests/fuzz/run.sh, which collects the seed
# corpus (every .gnn, .ir, .safetensors or .npy of examples/, layers/ and
# tests/) and keeps what the fuzzer finds in build-fuzz/corpus-TARGET/ for
# the next run.  Prints each target's
# execution count; failing inputs go to build-fuzz/crashes/ and make the
# script exit non-zero.  Reproduce one with
#   build-fuzz/tests/fuzz/fuzz_TARGET build-fuzz/crashes/FILE
# (its diagnostics and the report on stderr), or feed it to gnncc.
set -euo pipefail
cd "$(dirname "$0")/.."
SECONDS_=${1:-60}
TARGET=${2:-all}
BUILD_DIR=${BUILD_DIR:-build-fuzz}
usage="usage: $0 [SECONDS] [frontend|ir|safetensors|npy|graph|loaders|all]"
case $TARGET in
  all) targets=(frontend ir safetensors npy graph) ;;
  loaders) targets=(safetensors npy graph) ;;
  frontend|ir|safetensors|npy|graph) targets=("$TARGET") ;;
  *) echo "$usage" >&2; exit 2 ;;
esac
case $SECONDS_ in
  ''|*[!0-9]*) echo "$usage" >&2; exit 2 ;;
esac

./scripts/setup.sh
CC=${FUZZ_CC:-clang} cmake -S . -B "$BUILD_DIR" -DGNNCC_FUZZ=ON >/dev/null
# gnncc too: run.sh turns the .gnn files into IR seeds with it
cmake --build "$BUILD_DIR" -j"$(nproc)" --target gnncc "${targets[@]/#/fuzz_}"

status=0
for t in "${targets[@]}"; do
  tests/fuzz/run.sh "$BUILD_DIR/tests/fuzz/fuzz_$t" "$SECONDS_" "$BUILD_DIR" || status=1
done
crashes=$(find "$BUILD_DIR/crashes" -type f 2>/dev/null | wc -l)
echo "fuzz: $crashes file(s) in $BUILD_DIR/crashes (this run's and earlier ones)"
exit $status
