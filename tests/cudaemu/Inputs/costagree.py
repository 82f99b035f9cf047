"""The cost report's work model against the emulated device's counters.

A graph of 200,000 edges on 20,000 nodes where node 7 holds 10% of the
in-edges, the rest drawn from a power law, and a fifth of the nodes have
no in-edges; the benchmark's GCN, SAGE, GAT and GIN at small widths,
under a schedule that splits long rows.  For each model, `gnncc
--report=cost` predicts every launch's warps, total work and busiest
warp (docs/cost.md), and `gnnrun --engine=cuda-emu --emu-work` measures
them (docs/emulator.md); the launches that count work (row kernels,
their chunk kernels and reduce levels) are paired in launch order.

Prints one line per launch (modeled and measured busiest-warp share of
the launch's work) and per model; FAIL when the counts of launches
differ or a share differs by more than 1.5x, and "exact" when every
figure is equal.

    costagree.py --build BUILD --work DIR NAME=MODEL.gnn.in ...
"""
import argparse
import os
import re
import subprocess
import sys

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
from matrix import cost_launches, run_args  # noqa: E402

SUBST = {"IN": "16", "CLASSES": "8", "HIDDEN": "16", "HEADS": "2", "HEAD_HIDDEN": "4"}


def graph(path, n=20000, e=200000, hub=7, seed=3):
    rng = np.random.default_rng(seed)
    nhub = e // 10
    # targets: a power law over a random ranking of 80% of the nodes (the
    # rest have no in-edges), the hub's 10% apart
    have = rng.permutation(n)[: n * 4 // 5]
    have = have[have != hub]
    w = 1.0 / np.arange(1, len(have) + 1) ** 0.8
    dst = rng.choice(have, size=e - nhub, p=w / w.sum())
    dst = np.concatenate([dst, np.full(nhub, hub)])
    rng.shuffle(dst)
    src = rng.integers(0, n, size=e)
    np.save(path, np.stack([src, dst]).astype(np.int64))
    return n


def instantiate(path, work):
    text = open(path).read()
    name = os.path.basename(path)[: -len(".gnn.in")]
    subst = dict(SUBST, NAME=name.upper() + "_cost")
    for k, v in subst.items():
        text = text.replace(f"@{k}@", v)
    out = os.path.join(work, f"cost_{name}.gnn")
    open(out, "w").write(text)
    return out


EMU = re.compile(r"^(\S+) warps=(\d+) work=(\d+) busiest=(\d+)")


def modeled(text):
    """(name, warps, work, busiest) of each counting launch of the report"""
    return [(c[0],) + c[4:] for c in cost_launches(text) if c[1] in ("row", "chunk", "reduce")]


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--build", required=True)
    ap.add_argument("--work", required=True)
    ap.add_argument("--schedule", default="all:split=4")
    ap.add_argument("models", nargs="+")
    a = ap.parse_args()
    os.makedirs(a.work, exist_ok=True)
    gnnrun, gnncc = os.path.join(a.build, "gnnrun"), os.path.join(a.build, "gnncc")
    ei = os.path.join(a.work, "skew.npy")
    n = graph(ei)
    env = dict(os.environ, GNNCC_ENGINE_CACHE=os.path.join(a.work, "cache"))
    os.makedirs(env["GNNCC_ENGINE_CACHE"], exist_ok=True)
    bad = 0
    for spec in a.models:
        name, path = spec.split("=", 1)
        model = instantiate(path, a.work)
        inc = ["-I", os.path.dirname(os.path.abspath(path))]
        sched = ["--schedule=" + a.schedule]
        rep = subprocess.run([gnncc, "--target=cuda", *inc, *sched, "--report=cost", "--report-graph=" + ei, model],
                             capture_output=True, text=True)
        if rep.returncode:
            print(f"FAIL {name}: gnncc --report=cost: {rep.stderr.strip()[-400:]}")
            bad += 1
            continue
        cmd = [gnnrun, model, *inc, "--graph", ei, "--engine=cuda-emu", "--no-tune-cache", *sched,
               "--emu-work=" + os.path.join(a.work, name + ".work"), *run_args(gnncc, model, inc, a.work, name, n)]
        run = subprocess.run(cmd, capture_output=True, text=True, env=env)
        if run.returncode:
            print(f"FAIL {name}: gnnrun: {run.stderr.strip()[-400:]}")
            bad += 1
            continue
        meas = [tuple([m.group(1)] + [int(x) for x in m.groups()[1:]])
                for m in map(EMU.match, open(os.path.join(a.work, name + ".work")))]
        mod = modeled(rep.stdout)
        if len(meas) != len(mod):
            print(f"FAIL {name}: {len(mod)} counting launches modeled, {len(meas)} measured")
            print("  modeled: " + " ".join(x[0] for x in mod))
            print("  measured: " + " ".join(x[0] for x in meas))
            bad += 1
            continue
        exact = True
        for mo, me in zip(mod, meas):
            ms, es = mo[3] / max(mo[2], 1), me[3] / max(me[2], 1)
            ratio = max(ms, es) / max(min(ms, es), 1e-300)
            same = mo[1:] == me[1:]
            exact &= same
            verdict = "ok" if ratio <= 1.5 else "FAIL"
            bad += verdict == "FAIL"
            print(f"{verdict} {name} {mo[0]} ({me[0]}): busiest share modeled {100 * ms:.4g}% measured {100 * es:.4g}% "
                  f"(warps {mo[1]}/{me[1]}, work {mo[2]}/{me[2]}, busiest {mo[3]}/{me[3]})"
                  + ("" if same else " inexact"))
        print(f"{name}: {len(mod)} launches {'exact' if exact else 'within 1.5x' if not bad else 'off'}")
    print(f"costagree: {len(a.models)} models, {'all ok' if not bad else f'{bad} FAIL'}")
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
