#!/usr/bin/env bash
# bench/calibrate.sh: the calibration record -- every launch of the
# benchmark's GCN, SAGE, GAT and GIN (-O2) on Cora, CiteSeer and the
# arxiv- and products-shaped graphs, its time measured by the runtime's
# profile beside the cost model's (gnncc --report=cost), and each
# forward's; writes bench/results/<gpu>-kernels.{json,md} (bench/README.md
# "Calibration"; the format in bench/calibrate.py).  Five minutes on one
# H100 at most.
#
#   bench/calibrate.sh               on a GPU: builds gnncc, then measures
#   bench/calibrate.sh --dry-run     no GPU: the same steps on the emulated
#                                    device, on a tiny graph (no build:
#                                    build/ must hold gnncc and gnnrun)
#   bench/calibrate.sh --help        bench/calibrate.py's options (graphs,
#                                    models, forwards, --build, --results-dir)
#
# Design: as bench/run.sh, this script only builds (bench/build.sh) and
# hands over to bench/calibrate.py, which owns the budget (280 s from
# CALIBRATE_T0, this script's start, so that the build counts): whatever
# no longer fits is an error entry of the record, which is always
# written.  With $OUT set, the record is copied there too.
set -euo pipefail
export CALIBRATE_T0=${CALIBRATE_T0:-$(date +%s.%N)}
cd "$(dirname "$0")/.."

dry=0
args=()
for a in "$@"; do
  case "$a" in
  --dry-run) dry=1 ;;
  -h|--help) exec python3 bench/calibrate.py --help ;;
  *) args+=("$a") ;;
  esac
done
if [ "$dry" = 1 ]; then
  exec python3 bench/calibrate.py --engine=cuda-emu ${args[@]+"${args[@]}"}
fi

bench/build.sh build/calibrate-build.log
rc=0
python3 bench/calibrate.py --engine=cuda ${args[@]+"${args[@]}"} || rc=$?
if [ -n "${OUT:-}" ]; then
  mkdir -p "$OUT"
  cp bench/results/*-kernels.json bench/results/*-kernels.md "$OUT"/ 2>/dev/null || true
fi
exit "$rc"
