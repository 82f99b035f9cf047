"""One line on a training record of the benchmark (gnnbench --train or
pyg_bench.py --task train): its model, graph and task, and what the test
checks of it -- status, the epochs timed, whether the loss fell from the
first warm-up epoch to the last timed one, the optimizer, and (gnncc's)
that device bytes were counted.

    trainrec.py RECORDS.jsonl MODEL
"""
import json
import sys

path, model = sys.argv[1], sys.argv[2]
recs = [json.loads(line) for line in open(path) if line.strip()]
recs = [r for r in recs if r.get("event") == "result" and r.get("model") == model]
if len(recs) != 1:
    sys.exit(f"{len(recs)} results for {model} in {path}")
r = recs[0]
if r.get("status") != "ok":
    sys.exit(f"{model}: {r.get('status')}: {r.get('message') or r.get('reason')}")
falls = r["loss_last"] < r["loss_first"]
line = (f"{model} {r['graph']} {r['task']}: ok, {r['runs']} timed epochs after {r['warmup']}, "
        f"loss {'falls' if falls else 'does not fall'} ({r['loss_first']:.4g} -> "
        f"{r['loss_last']:.4g}), optimizer {r['optimizer']}")
if "peak_bytes" in r and r.get("tool") == "gnncc":
    line += ", peak bytes > 0" if r["peak_bytes"] > 0 else ", peak bytes 0"
print(line)
