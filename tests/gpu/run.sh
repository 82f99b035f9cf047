#!/usr/bin/env bash
# GPU check of the cuda target: builds the project and the examples for
# --target=cuda, runs every example model on Cora through the compiled
# CUDA code, and compares it with the cpu target and with the float64
# interpreter (1e-5 relative to the largest output); then builds and runs
# the CUDA example programs (GCN must print 82.0%).  Needs a GPU, nvcc,
# Python with NumPy, and the data and weights shipped in the repo.
# Writes a log and the outputs under $OUT (default build/gpu-check) and
# exits non-zero on any mismatch.
set -euo pipefail
cd "$(dirname "$0")/../.."
ROOT=$PWD
OUT=${OUT:-$ROOT/build/gpu-check}
mkdir -p "$OUT"
exec > >(tee "$OUT/log.txt") 2>&1

nvidia-smi -L
./scripts/setup.sh
./scripts/build.sh >/dev/null
GNNRUN=$ROOT/build/gnnrun
DATA=$ROOT/data/cora
python3 tests/ref/make_weights.py "$OUT/w" >/dev/null
python3 tests/ref/normalize.py "$DATA/x.npy" "$OUT/x.npy"

fail=0
check() {   # name model weights
  local name=$1 model=$2 weights=$3 e
  for e in interp cpu cuda; do
    "$GNNRUN" "$model" --engine=$e --graph "$DATA/edge_index.npy" --input x="$OUT/x.npy" \
      --weights "$weights" --output "$OUT/$name-$e.npy" --output-dtype=f64
  done
  # twice on the GPU: the same bits (no atomics anywhere)
  "$GNNRUN" "$model" --engine=cuda --graph "$DATA/edge_index.npy" --input x="$OUT/x.npy" \
    --weights "$weights" --output "$OUT/$name-cuda2.npy" --output-dtype=f64
  printf '%-10s cuda vs interp: ' "$name"
  python3 tests/ref/compare.py "$OUT/$name-cuda.npy" "$OUT/$name-interp.npy" --rtol 1e-5 | tail -1 || fail=1
  printf '%-10s cuda vs cpu:    ' "$name"
  python3 tests/ref/compare.py "$OUT/$name-cuda.npy" "$OUT/$name-cpu.npy" --rtol 1e-5 | tail -1 || fail=1
  printf '%-10s cuda run twice: ' "$name"
  if cmp -s "$OUT/$name-cuda.npy" "$OUT/$name-cuda2.npy"; then echo identical; else echo DIFFERENT; fail=1; fi
}
check gcn examples/gcn/gcn.gnn examples/gcn/gcn_cora.safetensors
check sage examples/sage/sage.gnn "$OUT/w/sage.safetensors"
check sage-max tests/interp/Inputs/sage_max.gnn "$OUT/w/sage.safetensors"
check sage-sum tests/interp/Inputs/sage_sum.gnn "$OUT/w/sage.safetensors"
check gat examples/gat/gat.gnn "$OUT/w/gat.safetensors"
check gat-mean tests/interp/Inputs/gat_mean.gnn "$OUT/w/gat_mean.safetensors"
check gin examples/gin/gin.gnn "$OUT/w/gin.safetensors"

# the example programs, linked against the static CUDA runtime
for m in gcn sage gat gin; do
  make -s -C examples/$m TARGET=cuda GNNCC="$ROOT/build/gnncc" >/dev/null
  if ldd examples/$m/build-cuda/$m | grep -q libcudart; then echo "$m: links libcudart.so"; fail=1; fi
  echo "== examples/$m (cuda)"
  make -s -C examples/$m TARGET=cuda GNNCC="$ROOT/build/gnncc" run | tee "$OUT/$m-example.txt"
done
grep -q "test accuracy: 82.0%" "$OUT/gcn-example.txt" || { echo "GCN accuracy is not 82.0%"; fail=1; }

if command -v compute-sanitizer >/dev/null; then
  echo "== compute-sanitizer memcheck (GCN example)"
  compute-sanitizer --tool memcheck --error-exitcode 1 examples/gcn/build-cuda/gcn >/dev/null || fail=1
fi
if [ $fail = 0 ]; then echo "gpu check: all passed"; else echo "gpu check: FAILED"; fi
exit $fail
