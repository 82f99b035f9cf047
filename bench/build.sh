#!/usr/bin/env bash
# bench/build.sh LOG: builds gnncc, gnnrun and gnngen into build/ for the
# scripts that run on a GPU machine (bench/run.sh, tests/gpu/run.sh), the
# output going to LOG.
#
# Design: scripts/build.sh, not scripts/setup.sh, since such a machine may
# have no network to install from.  Two things it may lack are handled:
# lit (only the test suites need it: CMake is given a stand-in, so the
# project configures) and a working build altogether (flex or bison
# missing, say): if build/ already holds gnncc, gnnrun and gnngen, built
# elsewhere from this tree, they are used as they are, with a warning.
set -euo pipefail
cd "$(dirname "$0")/.."
log=${1:?usage: bench/build.sh LOG}
mkdir -p "$(dirname "$log")"
if ! command -v lit >/dev/null && ! command -v llvm-lit >/dev/null; then
  export CMAKE_ARGS="${CMAKE_ARGS:-} -DLIT=$(command -v true)"
fi
if ./scripts/build.sh >"$log" 2>&1; then
  exit 0
fi
tail -n 20 "$log"
if [ -x build/gnncc ] && [ -x build/gnnrun ] && [ -x build/gnngen ]; then
  echo "warning: building gnncc failed (log: $log); using the programs already in build/" >&2
  exit 0
fi
echo "error: building gnncc failed (log: $log)" >&2
exit 1
