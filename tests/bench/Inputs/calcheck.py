"""calcheck.py RECORD.json: the calibration record's shape (bench/calibrate.py).

Per model: its launch entries in order (index 0..n-1), each with a time
measured and modeled and their ratio, and for the launches that count
work the emulated device's counters equal to the cost model's (the same
launch, so the same warps, total and busiest warp); then one forward
entry whose launch count is n.  Prints a line per model; FAIL on any
difference."""
import json
import sys

rec = json.load(open(sys.argv[1]))
assert rec["format"] == "gnncc-kernels/1", rec["format"]
bad = 0
models = list(dict.fromkeys((e["graph"], e["model"]) for e in rec["entries"]))
for g, m in models:
    es = [e for e in rec["entries"] if (e["graph"], e["model"]) == (g, m)]
    launches = [e for e in es if e["scope"] == "launch"]
    fwd = [e for e in es if e["scope"] == "forward"]
    why = []
    if len(fwd) != 1 or "error" in fwd[0] or fwd[0]["launches"] != len(launches):
        why.append(f"forward entry {fwd}")
    counted = 0
    for i, e in enumerate(launches):
        if e["index"] != i or not e["measured_us"] >= 0 or not e["modeled_us"] > 0 or e["ratio"] is None:
            why.append(f"launch {i}: {e}")
        if e["kind"] in ("row", "chunk", "reduce"):
            counted += 1
            if e.get("emu_work") != [e["warps"], e["work"], e["busiest"]]:
                why.append(f"{e['kernel']}: emulated work {e.get('emu_work')}, modeled "
                           f"{[e['warps'], e['work'], e['busiest']]}")
    print(f"{'FAIL ' if why else ''}{g} {m}: {len(launches)} launches, {counted} counting work"
          + ("".join("\n  " + w for w in why)))
    bad += bool(why)
print(f"calcheck: {len(models)} models, {'all ok' if not bad else f'{bad} FAIL'}")
sys.exit(1 if bad else 0)
