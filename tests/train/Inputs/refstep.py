#!/usr/bin/env python3
"""gnnrun --train against the NumPy reference of the same steps.

usage: refstep.py --build DIR --work DIR [--engine cpu] [--steps 3] [--optimizer adam]

From one seeded init (gnnrun --train --epochs 0), the GCN example trains
for --steps epochs on Cora with dropout, nll over the train mask and the
optimizer (lr 0.01, weight decay 5e-4), in gnnrun on the engine and in
tests/ref/train_ref.py (float64 NumPy, backprop by hand, the same Philox
masks).  Every step's loss must agree to 1e-6, the final weights to 1e-4
of each tensor's largest element or a thousandth of lr a step, the larger
(Adam's first steps move every weight by about lr whatever its
gradient's size, so float32 rounding of a tiny gradient shows at that
scale).  Prints the differences; exit 1 on a
mismatch.
"""
import argparse
import os
import re
import sys

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(os.path.dirname(HERE)))
sys.path.insert(0, os.path.join(ROOT, "tests", "ref"))
sys.path.insert(0, HERE)
import st  # noqa: E402
import normx  # noqa: E402


def run(cmd):
    return normx.run(cmd, "refstep")


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--build", required=True)
    ap.add_argument("--work", required=True)
    ap.add_argument("--engine", default="cpu")
    ap.add_argument("--steps", type=int, default=3)
    ap.add_argument("--optimizer", default="adam")
    ap.add_argument("--nodes", type=int, default=0,
                    help="Cora's first N nodes only (tests/ref/subgraph.py; default: the whole graph)")
    a = ap.parse_args()
    os.makedirs(a.work, exist_ok=True)
    # each model compiled once per engine and level, whatever the runs
    os.environ.setdefault("GNNCC_ENGINE_CACHE", os.path.join(a.work, "engines"))
    os.makedirs(os.environ["GNNCC_ENGINE_CACHE"], exist_ok=True)
    data = normx.cora(ROOT, a.work, a.nodes)
    xp = normx.normalize(os.path.join(data, "x.npy"), os.path.join(a.work, "x.npy"))
    ei, y, mask = (os.path.join(data, f) for f in ("edge_index.npy", "y.npy", "train_mask.npy"))
    gnnrun = os.path.join(a.build, "gnnrun")
    model = os.path.join(ROOT, "examples", "gcn", "gcn.gnn")
    common = ["--graph", ei, "--input", f"x={xp}", "--labels", y, "--train-mask", mask, "--seed", "9"]
    init = os.path.join(a.work, "init.safetensors")
    run([gnnrun, model, "--train", "--epochs", "0", "--save-weights", init] + common)
    out = os.path.join(a.work, "trained.safetensors")
    log = run([gnnrun, model, "--train", f"--engine={a.engine}", "--weights", init, "--epochs", str(a.steps),
               "--optimizer", a.optimizer, "--lr", "0.01", "--weight-decay", "5e-4", "--save-weights", out] + common)
    losses = [float(m) for m in re.findall(r"loss ([-0-9.e]+)", log)]
    ref = os.path.join(a.work, "ref.npz")
    run([sys.executable, os.path.join(ROOT, "tests", "ref", "train_ref.py"), "--model", "gcn", "--weights", init,
         "--graph", ei, "--x", xp, "--labels", y, "--train-mask", mask, "--seed", "9", "--steps", str(a.steps),
         "--lr", "0.01", "--weight-decay", "5e-4", "--optimizer", a.optimizer, "--out", ref])
    r = np.load(ref)
    bad = 0
    for k, (l, lr) in enumerate(zip(losses, r["loss"])):
        ok = abs(l - lr) <= 1e-6 * max(1.0, abs(lr))
        print(f"step {k + 1}: loss {l:.6f}, reference {lr:.9f}: {'ok' if ok else 'FAIL'}")
        bad += not ok
    if len(losses) != a.steps:
        print(f"FAIL: {len(losses)} losses printed for {a.steps} steps")
        bad += 1
    w = st.load(out)
    # Adam's update is lr * m / (sqrt(v) + eps) whatever the gradient's
    # size: a gradient at float32's noise floor (a cancellation, ~1e-6)
    # moves its weight by about lr either way, so a weight may also be
    # off by a thousandth of the steps' lr (a wrong moment, decay or step
    # size moves weights by about lr, hundreds of times more)
    floor = 1e-3 * 0.01 * a.steps
    for name, v in w.items():
        big = float(np.max(np.abs(r[name])))
        d = float(np.max(np.abs(v - r[name]))) / big
        ok = d <= max(1e-4, floor / big)
        print(f"{name}: {d:.2e} of its largest weight: {'ok' if ok else 'FAIL'}")
        bad += not ok
    print("refstep: FAILED" if bad else "refstep: all ok")
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
