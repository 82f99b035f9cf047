"""The profiling mode's launch list against the compiler's own.

For each NAME=MODEL.gnn, runs `gnnrun --profile=FILE` on a 3,000-node
graph whose node 5 holds 2,000 in-edges (so that rows split: chunk and
reduce launches too) and reads the forward's records (docs/cli.md
"Profiling").  With --engine=cuda-emu they must equal `gnncc
--target=cuda --report=cost --report-graph` launch for launch: kernel
name, blocks, threads a block and, for the launches that count work
(row, chunk and reduce kernels), warps, total and busiest warp's work
(docs/cost.md), and bind's launches must be the device bind's own
kernels (runtime/devbind.cu).  With --engine=cpu they must equal the launches in the
generated C's forward (MODEL_run's body), in order.  Times are printed
by neither check and never compared.

Prints one line per model; FAIL when a launch is missing, extra or
different.

    profilecost.py --build BUILD --work DIR --engine=cuda-emu|cpu NAME=MODEL.gnn ...
"""
import argparse
import json
import os
import re
import subprocess
import sys

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
from matrix import cost_launches, run_args  # noqa: E402


def graph(path, n=3000, e=20000, hub=5, seed=11):
    rng = np.random.default_rng(seed)
    dst = np.concatenate([rng.integers(0, n, size=e - 2000), np.full(2000, hub)])
    src = rng.integers(0, n, size=e)
    np.save(path, np.stack([src, dst]).astype(np.int64))
    return n


def modeled(text):
    """(name, grid, block, work or None) of every launch of the cost report"""
    return [(c[0], c[2], c[3], c[4:] if c[1] in ("row", "chunk", "reduce") else None) for c in cost_launches(text)]


def generated(gnncc, model, inc, name):
    """the kernels the generated C's forward launches, in order, by the
    names the launches give the profile"""
    src = subprocess.run([gnncc, "--target=cpu", "--emit=c", *inc, model, "-o", "-"], capture_output=True,
                         text=True, check=True).stdout
    body = src[src.index("\n%s_run(" % name):]
    body = body[:body.index("\n}\n")]
    return re.findall(r"GNN_(?:(?:HLAUNCH_DYN|HLAUNCH|DLAUNCH|RLAUNCH)\(\w+, |HPROF\()\"(\w+)\"", body)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--build", required=True)
    ap.add_argument("--work", required=True)
    ap.add_argument("--engine", required=True, choices=["cuda-emu", "cpu"])
    ap.add_argument("models", nargs="+")
    a = ap.parse_args()
    os.makedirs(a.work, exist_ok=True)
    gnnrun, gnncc = os.path.join(a.build, "gnnrun"), os.path.join(a.build, "gnncc")
    ei = os.path.join(a.work, "hub.npy")
    n = graph(ei)
    env = dict(os.environ, GNNCC_ENGINE_CACHE=os.path.join(a.work, "cache"))
    os.makedirs(env["GNNCC_ENGINE_CACHE"], exist_ok=True)
    bad = 0
    for spec in a.models:
        label, model = spec.split("=", 1)
        inc = ["-I", os.path.dirname(os.path.abspath(model))]
        prof = os.path.join(a.work, label + ".jsonl")
        cmd = [gnnrun, model, *inc, "--graph", ei, "--engine=" + a.engine, "--no-tune-cache", "--profile=" + prof,
               *run_args(gnncc, model, inc, a.work, label, n)]
        run = subprocess.run(cmd, capture_output=True, text=True, env=env)
        if run.returncode:
            print(f"FAIL {label}: gnnrun: {run.stderr.strip()[-400:]}")
            bad += 1
            continue
        recs = [json.loads(line) for line in open(prof)]
        fwd = [r for r in recs if r["phase"] == "forward"]
        if a.engine == "cpu":
            name = re.search(r"^model (\w+)", open(model).read(), re.M).group(1)
            want = generated(gnncc, model, inc, name)
            got = [r["kernel"] for r in fwd]
        else:
            rep = subprocess.run([gnncc, "--target=cuda", *inc, "--report=cost", "--report-graph=" + ei, model],
                                 capture_output=True, text=True)
            if rep.returncode:
                print(f"FAIL {label}: gnncc --report=cost: {rep.stderr.strip()[-400:]}")
                bad += 1
                continue
            want = modeled(rep.stdout)
            got = [(r["kernel"], r["grid"], r["block"],
                    (r["warps"], r["work"], r["busiest"]) if m[3] is not None and "warps" in r else None)
                   for r, m in zip(fwd, want)]
            got += [(r["kernel"],) for r in fwd[len(want):]]
        if got != want:
            print(f"FAIL {label}: {len(fwd)} forward launches profiled, {len(want)} expected")
            for k in range(max(len(got), len(want))):
                g, w = got[k] if k < len(got) else "-", want[k] if k < len(want) else "-"
                print(f"  {'==' if g == w else '!='} profiled {g} expected {w}")
            bad += 1
            continue
        print(f"{label}: {len(fwd)} forward launches as expected"
              + (f", {sum(1 for w in want if w[3] is not None)} counting work" if a.engine != "cpu" else ""))
        if a.engine != "cpu":
            # bind runs on the device: its own kernels (runtime/devbind.cu), the model's name
            bind = [r for r in recs if r["phase"] == "bind"]
            ok = bind and all(r["kernel"].startswith("db_") and r["model"] == fwd[0]["model"] for r in bind)
            print(f"{'' if ok else 'FAIL '}{label}: bind {'on the device' if ok else bind[:3]}")
            bad += not ok
    print(f"profilecost: {len(a.models)} models, {'all ok' if not bad else f'{bad} FAIL'}")
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
