#!/usr/bin/env bash
# bench/run.sh: times forward inference of GCN, GraphSAGE, GAT and GIN
# compiled by gnncc (-O2, -O0) against PyTorch Geometric (eager,
# torch.compile dynamic and max-autotune) on Cora, CiteSeer and four
# synthetic graphs of PubMed's, ogbn-arxiv's, Reddit's and ogbn-products'
# sizes, plus the aggregation alone against cuSPARSE; writes
# bench/results/<gpu>.{md,json,png}.  Ten minutes on one H100 at most.
#
#   bench/run.sh            everything the time budget allows
#   bench/run.sh --quick    Cora only (a smoke test)
#   bench/run.sh --help     bench/bench.py's options (graphs, models, systems, budget)
#
# Design: this script only builds gnncc (bench/build.sh: the GPU machine
# may have no network, and no lit) and hands over to bench/bench.py, which
# owns the budget; BENCH_T0 tells it when the command started, so the
# build counts against the ten minutes.  With $OUT set to a folder (as
# tests/gpu/run.sh writes its results under $OUT), the report, the raw
# JSON, the plot and the log are copied there too.
set -euo pipefail
export BENCH_T0=${BENCH_T0:-$(date +%s.%N)}
cd "$(dirname "$0")/.."

case "${1:-}" in
-h|--help) exec python3 bench/bench.py run --help ;;
esac

bench/build.sh build/bench-build.log

copy=()
if [ -n "${OUT:-}" ]; then
  mkdir -p "$OUT"
  copy=(--copy-to "$OUT")
fi
exec python3 bench/bench.py run "${copy[@]}" "$@"
