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

With --train (cuda-emu), the models train two steps (gnnrun --train,
random labels of the output's classes, every third node in the mask) and
the second step's records -- the step's body after the first step kept
its once-time values, then the optimizer's opt_step -- must equal the
cost report's launches of the step (the model's NAME_train), the same
way.

Prints one line per model; FAIL when a launch is missing, extra or
different.

    profilecost.py --build BUILD --work DIR --engine=cuda-emu|cpu [--train] NAME=MODEL.gnn ...
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
from matrix import cost_launches, run_args, tables  # noqa: E402


def graph(path, n=3000, e=20000, hub=5, seed=11):
    rng = np.random.default_rng(seed)
    dst = np.concatenate([rng.integers(0, n, size=e - 2000), np.full(2000, hub)])
    src = rng.integers(0, n, size=e)
    np.save(path, np.stack([src, dst]).astype(np.int64))
    return n


def modeled(text, train=False):
    """(name, grid, block, work or None) of every launch of the cost
    report: the forward's, or with train the training step's"""
    sections = re.split(r"^model ", text, flags=re.M)
    text = "".join(t for t in sections if bool(re.match(r"\w+_train ", t)) == train)
    return [(c[0], c[2], c[3], c[4:] if c[1] in ("row", "chunk", "reduce") else None) for c in cost_launches(text)]


def second_step(recs):
    """the train phase's records of the second step: after the first
    opt_step, up to the second"""
    tr = [r for r in recs if r["phase"] == "train"]
    ends = [k for k, r in enumerate(tr) if r["kernel"] == "opt_step"]
    return tr[ends[0] + 1:ends[1] + 1] if len(ends) >= 2 else []


def train_args(gnncc, model, inc, work, name, n):
    """gnnrun --train's arguments: labels of the first output's classes,
    a mask of every third node, two epochs"""
    classes = tables(gnncc, model, inc)["outputs"][0][2][-1]
    y, mask = os.path.join(work, name + "-y.npy"), os.path.join(work, name + "-mask.npy")
    np.save(y, np.random.default_rng(3).integers(0, classes, size=n, dtype=np.int64))
    np.save(mask, np.arange(n) % 3 == 0)
    return ["--train", "--labels", y, "--train-mask", mask, "--epochs", "2"]


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
    ap.add_argument("--train", action="store_true", help="the second training step's launches (cuda-emu)")
    ap.add_argument("models", nargs="+")
    a = ap.parse_args()
    if a.train and a.engine != "cuda-emu":
        ap.error("--train compares the cost report: --engine=cuda-emu")
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
        if a.train:
            cmd += train_args(gnncc, model, inc, a.work, label, n)
        run = subprocess.run(cmd, capture_output=True, text=True, env=env)
        if run.returncode:
            print(f"FAIL {label}: gnnrun: {run.stderr.strip()[-400:]}")
            bad += 1
            continue
        recs = [json.loads(line) for line in open(prof)]
        fwd = second_step(recs) if a.train else [r for r in recs if r["phase"] == "forward"]
        what = "step" if a.train else "forward"
        if not fwd:
            print(f"FAIL {label}: no {what} launches profiled")
            bad += 1
            continue
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
            want = modeled(rep.stdout, a.train)
            got = [(r["kernel"], r["grid"], r["block"],
                    (r["warps"], r["work"], r["busiest"]) if m[3] is not None and "warps" in r else None)
                   for r, m in zip(fwd, want)]
            got += [(r["kernel"],) for r in fwd[len(want):]]
        if got != want:
            print(f"FAIL {label}: {len(fwd)} {what} launches profiled, {len(want)} expected")
            for k in range(max(len(got), len(want))):
                g, w = got[k] if k < len(got) else "-", want[k] if k < len(want) else "-"
                print(f"  {'==' if g == w else '!='} profiled {g} expected {w}")
            bad += 1
            continue
        print(f"{label}: {len(fwd)} {what} launches as expected"
              + (f", {sum(1 for w in want if w[3] is not None)} counting work" if a.engine != "cpu" else ""))
        if a.engine != "cpu" and not a.train:
            # bind runs on the device: its own kernels (runtime/devbind.cu), the model's name
            bind = [r for r in recs if r["phase"] == "bind"]
            ok = bind and all(r["kernel"].startswith("db_") and r["model"] == fwd[0]["model"] for r in bind)
            print(f"{'' if ok else 'FAIL '}{label}: bind {'on the device' if ok else bind[:3]}")
            bad += not ok
    print(f"profilecost: {len(a.models)} models, {'all ok' if not bad else f'{bad} FAIL'}")
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
