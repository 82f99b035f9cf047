#!/usr/bin/env bash
# GPU check of the cuda target: every example and test model, and the
# benchmark's models, compiled for cuda and run on Cora, CiteSeer and two
# synthetic graphs (build/gnngen: PubMed's and ogbn-arxiv's sizes), with
# outputs poisoned with NaN before each run, two runs bitwise identical,
# compared (1e-5 relative, float32; wider only where PyG's own float32
# misses its float64 by more) with the cpu target, with PyTorch Geometric
# on the same weights and with the float64 interpreter; the four examples
# through gnnrun --engine=cuda too (nvcc's shared object loaded by
# gnnrun), against gnnrun's cpu engine; under compute-sanitizer
# (memcheck, initcheck) on Cora; the example programs
# built and run (GCN must print 82.0%).  tests/gpu/check.py does the work
# and says how.  Needs a GPU, nvcc, compute-sanitizer, Python with NumPy,
# torch and torch_geometric; the data is in the repo.
#
#   tests/gpu/run.sh [check.py options]     (--graphs, --sanitize-graphs, --jobs)
#
# Writes everything under $OUT (default build/gpu-check): log.txt,
# summary.txt and summary.json at the top, each case's files under
# cases/; prints the summary table at the end and exits non-zero on any
# failure.  bench/build.sh builds gnncc without scripts/setup.sh (the GPU
# machine may have no network) and says what it does without lit or
# flex and bison.
set -euo pipefail
cd "$(dirname "$0")/../.."
ROOT=$PWD
OUT=${OUT:-$ROOT/build/gpu-check}
mkdir -p "$OUT"
OUT=$(cd "$OUT" && pwd)
exec > >(tee "$OUT/log.txt") 2>&1

nvidia-smi -L
bench/build.sh "$OUT/build.log" || { echo "gpu check: FAILED: no gnncc"; exit 1; }
exec python3 tests/gpu/check.py --out "$OUT" "$@"
