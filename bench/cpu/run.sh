#!/usr/bin/env bash
# bench/cpu/run.sh: times forward inference of GCN, GraphSAGE, GAT and GIN
# compiled by gnncc for the cpu target (-O2, -O0, -fopenmp) against PyTorch
# Geometric (eager, torch.compile dynamic=True and dynamic=False) on this
# machine's CPU, at 1 and 2 threads, on Cora, CiteSeer and PubMed- and
# ogbn-arxiv-shaped synthetic graphs; checks every output against PyG
# eager's; writes bench/results/cpu-<machine>.{md,json,png}.  Within 15
# minutes, set-up and build included (bench/README.md, "CPU benchmark").
#
#   bench/cpu/run.sh            everything the time budget allows
#   bench/cpu/run.sh --quick    Cora only (a smoke test)
#   bench/cpu/run.sh --tasks hetero --merge
#                               the heterogeneous rows (rel-shop, forward and
#                               training; bench/cpu/hetero.py), added to the
#                               results; their own budget (3600 s)
#   bench/cpu/run.sh --help     the options: --graphs, --models, --systems,
#                               --threads, --budget-s, the run counts
#
# Design: set-up (bench/cpu/setup.sh: torch, PyG, matplotlib when missing)
# and gnncc's build (scripts/build.sh), then bench/cpu/cpubench.py, which
# owns the budget; BENCH_T0 tells it when the command started, so set-up
# and build count against the 15 minutes.  Exit status 1 when an output
# disagrees with PyG eager's (after the results are written).
set -euo pipefail
export BENCH_T0=${BENCH_T0:-$(date +%s.%N)}
cd "$(dirname "$0")/../.."
PY=${PYTHON:-python3}

case "${1:-}" in
-h|--help)
	sed -n '2,/^set -e/p' "$0" | sed '$d; s/^# \{0,1\}//'
	exec "$PY" bench/cpu/cpubench.py run --help ;;
esac

PYTHON=$PY bench/cpu/setup.sh
mkdir -p build/bench/cpu
if ! ./scripts/build.sh >build/bench/cpu/build.log 2>&1; then
	tail -n 30 build/bench/cpu/build.log >&2
	echo "bench/cpu/run.sh: building gnncc failed (build/bench/cpu/build.log)" >&2
	exit 1
fi
echo "[$(awk "BEGIN { printf \"%6.1f\", $(date +%s.%N) - $BENCH_T0 }")s] set-up and build done" >&2
exec "$PY" bench/cpu/cpubench.py run --python "$PY" "$@"
