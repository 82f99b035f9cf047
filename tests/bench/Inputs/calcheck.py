"""calcheck.py RECORD.json [OTHER.json]: the calibration record's shape (bench/calibrate.py).

Per model: its launch entries in order (index 0..n-1), each with a time
measured and modeled and their ratio, and for the launches that count
work the emulated device's counters equal to the cost model's (the same
launch, so the same warps, total and busiest warp); then one forward
entry whose launch count is n.  Prints a line per model; FAIL on any
difference.  With OTHER (a committed record), also that OTHER has the
same format: its tag, and the fields of each scope's entries (the work
fields apart, which only the emulated device has), and a line per
scope."""
import json
import os
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
if len(sys.argv) > 2:
    other = json.load(open(sys.argv[2]))
    bad += other["format"] != rec["format"] or set(other["meta"]) - {"note"} != set(rec["meta"])
    for scope in ("launch", "forward"):
        mine = set().union(*(set(e) for e in rec["entries"] if e["scope"] == scope)) - {"emu_work"}
        theirs = [set(e) for e in other["entries"] if e["scope"] == scope and "error" not in e]
        same = bool(theirs) and all(t == mine | ({"measured_status"} & t) for t in theirs)
        print(f"{'' if same else 'FAIL '}{os.path.basename(sys.argv[2])}: {len(theirs)} {scope} entries, "
              f"{'the same fields' if same else 'other fields'}")
        bad += not same
print(f"calcheck: {len(models)} models, {'all ok' if not bad else f'{bad} FAIL'}")
sys.exit(1 if bad else 0)
