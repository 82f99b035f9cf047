#!/usr/bin/env bash
# Runs one of gnncc's fuzzers (tests/fuzz): run.sh FUZZER SECONDS OUTDIR
#
# FUZZER is fuzz_frontend, fuzz_ir, fuzz_safetensors, fuzz_npy or
# fuzz_graph (a path); SECONDS 0 replays the seeds once and fuzzes nothing;
# runs=N instead of SECONDS runs every seed once, then fuzzes N inputs from
# libFuzzer's seed 1, the same work on every machine however busy (the
# test suite's smoke runs).  Under OUTDIR it keeps:
#   seeds-KIND/    the seed corpus, collected afresh from the repository:
#                  every .gnn (frontend), .ir (ir), .safetensors
#                  (safetensors) or .npy (npy, graph) file under examples/,
#                  layers/ and tests/ (so the regression inputs of
#                  tests/fuzz/regress/ and the loaders' seeds of
#                  tests/fuzz/seeds/), and for ir, what gnncc -O0
#                  --emit=ir makes of every .gnn file it compiles (when the
#                  gnncc of the fuzzer's build tree is there)
#   corpus-KIND/   what the fuzzer found interesting; kept between runs
#   crashes/       KIND-crash-*, KIND-leak-*, KIND-timeout-*: failing inputs
#   KIND.log       libFuzzer's output
#   work-KIND/     the (empty) directory the fuzzer runs in, where the
#                  inputs' imports resolve
# Prints the number of executions and the failing inputs; exits non-zero
# if libFuzzer failed (a crash, an abort, a sanitizer report, a leak, a
# timeout, running out of memory).  FUZZ_FLAGS adds libFuzzer flags.
set -euo pipefail

if [ $# -ne 3 ]; then
  echo "usage: $0 FUZZER SECONDS OUTDIR" >&2
  exit 2
fi
fuzzer=$(realpath "$1")
secs=$2
mkdir -p "$3"
out=$(realpath "$3")
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../.." && pwd)
case $(basename "$fuzzer") in
  fuzz_frontend*) kind=frontend ext=gnn dict=$here/gnn.dict ;;
  fuzz_ir*) kind=ir ext=ir dict=$here/ir.dict ;;
  fuzz_safetensors*) kind=safetensors ext=safetensors dict=$here/safetensors.dict ;;
  fuzz_npy*) kind=npy ext=npy dict=$here/npy.dict ;;
  fuzz_graph*) kind=graph ext=npy dict=$here/npy.dict ;;
  *) echo "$0: unknown fuzzer $fuzzer" >&2; exit 2 ;;
esac

seeds=$out/seeds-$kind
corpus=$out/corpus-$kind
work=$out/work-$kind
crashes=$out/crashes
log=$out/$kind.log
rm -rf "$seeds" "$work"
mkdir -p "$seeds" "$corpus" "$work" "$crashes"

# the seeds: flattened names, so that equal base names do not collide
while IFS= read -r -d '' f; do
  rel=${f#"$root"/}
  cp "$f" "$seeds/${rel//\//_}"
done < <(find "$root/examples" "$root/layers" "$root/tests" -name "*.$ext" -type f -print0)
gnncc=$(dirname "$fuzzer")/../../gnncc
if [ $kind = ir ] && [ -x "$gnncc" ]; then
  while IFS= read -r -d '' f; do
    rel=${f#"$root"/}
    "$gnncc" -O0 --emit=ir -o "$seeds/${rel//\//_}.ir" "$f" 2>/dev/null ||
      rm -f "$seeds/${rel//\//_}.ir"
  done < <(find "$root/examples" "$root/layers" "$root/tests" -name "*.gnn" -type f -print0)
fi
nseeds=$(find "$seeds" -type f | wc -l)

flags=(-max_len=8192 -timeout=10 -rss_limit_mb=2048 -dict="$dict"
       -artifact_prefix="$crashes/$kind-" -print_final_stats=1 -close_fd_mask=2)
if [ "$secs" = 0 ]; then
  flags+=(-runs=0)
  dirs=("$seeds")
elif [ "${secs#runs=}" != "$secs" ]; then
  flags+=(-runs="${secs#runs=}" -seed=1)
  dirs=("$corpus" "$seeds")
else
  flags+=(-max_total_time="$secs")
  dirs=("$corpus" "$seeds")
fi
before=$(find "$crashes" -name "$kind-*" -type f | sort)
rc=0
(cd "$work" && exec "$fuzzer" "${flags[@]}" ${FUZZ_FLAGS:-} "${dirs[@]}") > "$log" 2>&1 || rc=$?
after=$(find "$crashes" -name "$kind-*" -type f | sort)
new=$(comm -13 <(echo "$before") <(echo "$after") | sed '/^$/d')

execs=$(sed -n 's/^stat::number_of_executed_units: *//p' "$log" | tail -1)
time=$(sed -n 's/^Done [0-9]* runs in \([0-9]*\) second.*/\1/p' "$log" | tail -1)
size=$(find "$corpus" -type f | wc -l)
echo "fuzz_$kind: ${execs:-?} executions${time:+ in $time s}, $nseeds seeds, corpus $size inputs"
if [ $rc -ne 0 ] || [ -n "$new" ]; then
  echo "fuzz_$kind: FAILED (libFuzzer exit status $rc); the end of $log:"
  tail -n 60 "$log"
  for f in $new; do
    echo "fuzz_$kind: failing input $f; its diagnostics:"
    (cd "$work" && "$fuzzer" -runs=1 "$f" 2>&1 | grep -v '^INFO:' | head -n 40) || true
  done
  exit 1
fi
echo "fuzz_$kind: no crashes"
