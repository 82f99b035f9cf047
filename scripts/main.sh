#!/usr/bin/env bash
# The main job: install what is missing, build gnncc, compile the GCN
# example and run it on Cora with the PyG-trained weights, and report the
# test accuracy.  Cora and the weights are read from the shared data
# folder beside the checkout (SHARED overrides).
set -euo pipefail
cd "$(dirname "$0")/.."
./scripts/setup.sh
./scripts/build.sh
SHARED=${SHARED:-../shared}
CORA=$SHARED/datasets/cora
WEIGHTS=$SHARED/weights/gcn_cora.safetensors
OUT=build/run/gcn
mkdir -p "$OUT"

echo "== gnncc --dump-ir examples/gcn/gcn.gnn"
build/gnncc --dump-ir examples/gcn/gcn.gnn
# PyG's NormalizeFeatures: each row divided by its sum
python3 tests/ref/normalize.py "$CORA/x.npy" "$OUT/x.npy"
echo "== gnnrun examples/gcn/gcn.gnn on Cora (--engine=interp)"
build/gnnrun examples/gcn/gcn.gnn --engine=interp --graph "$CORA/edge_index.npy" \
  --input x="$OUT/x.npy" --weights "$WEIGHTS" --output "$OUT/logprobs.npy"
python3 tests/ref/accuracy.py "$OUT/logprobs.npy" --data "$CORA"
