#!/usr/bin/env bash
# The main job: install what is missing, build gnncc, compile the GCN
# example (examples/gcn) to an object with gnncc, link it with its C
# program and the runtime, and run it on Cora (data/cora) with the
# PyG-trained weights: it prints the test accuracy.
# TARGET=cpu (the default here) or TARGET=cuda on a machine with a GPU.
set -euo pipefail
cd "$(dirname "$0")/.."
./scripts/setup.sh
./scripts/build.sh
TARGET=${TARGET:-cpu}
make -s -C examples/gcn TARGET="$TARGET" GNNCC="$PWD/build/gnncc" run
