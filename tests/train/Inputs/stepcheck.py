#!/usr/bin/env python3
"""Compiled training steps against the interpreter's.

usage: stepcheck.py --build DIR --work DIR [--engines cpu,cuda-emu] [--nodes N]
                    [--precision bf16|fp16] MODEL...

Each MODEL is NAME=FILE.gnn holding a train item for model NAME.  On Cora
(normalized features, its labels and train mask) with weights drawn by
gnnrun --train --epochs 0 (the seeded PyG-style init), the training step
NAME_train (the loss, then every trained parameter's gradient) runs as a
model through gnnrun: in the float64 interpreter, then compiled for each
engine at -O0 and -O2.  The loss must equal the interpreter's to 1e-5,
and every gradient to 1e-5 of the largest gradient element of the step
(tests/ref/compare.py's rule with that scale): a bias's gradient is a
sum over the rows that cancels to a small value, whose float32 rounding
is then large beside it (about 1e-5 of it for GCN's conv2.bias on Cora,
while 1e-7 of the step's largest gradient).  Two keys (seed,
step) give two dropout masks.  --precision P: mixed precision, the
activations stored in 16 bits (docs/precision.md), against the
interpreter's 16-bit reference at the same -O level (which values are
stored depends on the pipeline), to RTOL16 of the largest gradient
element.  Prints a line per output and engine and
"stepcheck: all ok" at the end; exit 1 on any mismatch.
"""
import argparse
import os
import sys

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(os.path.dirname(HERE)))
sys.path.insert(0, os.path.join(ROOT, "tests", "ref"))
sys.path.insert(0, HERE)
from compare import compare  # noqa: E402
import normx  # noqa: E402

RTOL = 1e-5
# --precision: of the largest gradient element (the steps of GCN, GAT,
# SAGE and GIN on Cora differ from the 16-bit reference by at most 2.7e-5
# under bf16, 2.1e-5 under fp16; a float32 step differs by 2.8e-2, and a
# fused row read before its 16-bit rounding by 1e-3 to 5e-2)
RTOL16 = {"bf16": 2e-4, "fp16": 1e-4}


def run(cmd):
    return normx.run(cmd, "stepcheck")


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--build", required=True)
    ap.add_argument("--work", required=True)
    ap.add_argument("--engines", default="cpu,cuda-emu")
    ap.add_argument("--nodes", type=int, default=0,
                    help="Cora's first N nodes only (tests/ref/subgraph.py; default: the whole graph)")
    ap.add_argument("--precision", choices=["bf16", "fp16"])
    ap.add_argument("models", nargs="+")
    a = ap.parse_args()
    gnnrun = os.path.join(a.build, "gnnrun")
    os.makedirs(a.work, exist_ok=True)
    # each model compiled once per engine and level, whatever the runs
    os.environ.setdefault("GNNCC_ENGINE_CACHE", os.path.join(a.work, "engines"))
    os.makedirs(os.environ["GNNCC_ENGINE_CACHE"], exist_ok=True)
    data = normx.cora(ROOT, a.work, a.nodes)
    xp = normx.normalize(os.path.join(data, "x.npy"), os.path.join(a.work, "x.npy"))
    ei, y, mask = (os.path.join(data, f) for f in ("edge_index.npy", "y.npy", "train_mask.npy"))
    bad = 0
    for spec in a.models:
        name, path = spec.split("=", 1)
        w = os.path.join(a.work, f"{name}.safetensors")
        run([gnnrun, path, "--train", "--epochs", "0", "--seed", "5", "--graph", ei, "--input", f"x={xp}",
             "--labels", y, "--train-mask", mask, "--save-weights", w])
        ir = run([os.path.join(a.build, "gnncc"), "--emit=ir", "-O0", path, "-o", "-"])
        head = next(l for l in ir.splitlines() if l.startswith(f"func @{name}_train("))
        nout = head.split("->", 1)[1].count("[")
        for key in ([5, 0], [5, 7]):
            kp = os.path.join(a.work, "key.npy")
            np.save(kp, np.array(key, dtype=np.int64))
            base = [gnnrun, path, "--model-name", f"{name}_train", "--weights", w, "--graph", ei,
                    "--input", f"x={xp}", "--input", f"y={y}", "--input", f"mask={mask}", "--input", f"key={kp}"]
            def outs(tag):
                return [os.path.join(a.work, f"{name}-{tag}-{k}.npy") for k in range(nout)]
            pf = [f"--precision={a.precision}"] if a.precision else []
            rtol = RTOL16[a.precision] if a.precision else RTOL
            refs = {}
            # under --precision the reference runs the engine's target's
            # passes, which decide what is stored in 16 bits
            tgts = sorted({"cpu" if e == "cpu" else "cuda" for e in a.engines.split(",")}) if a.precision else ["cuda"]
            for lvl in ("-O0", "-O2") if a.precision else ("-O2",):
                for t in tgts:
                    refs[lvl, t] = outs(f"interp{lvl}{t}")
                    run(base + pf + [lvl, "--output-dtype=f64", f"--interp-target={t}"] +
                        [f"--output={o}" for o in refs[lvl, t]])
            for eng in a.engines.split(","):
                for lvl in ("-O0", "-O2"):
                    got = outs(f"{eng}{lvl}")
                    t = "cpu" if eng == "cpu" and a.precision else "cuda"
                    ref = refs.get((lvl, t), refs["-O2", t])
                    run(base + pf + [f"--engine={eng}", lvl] + [f"--output={o}" for o in got])
                    gmax = max(float(np.max(np.abs(np.load(r)))) for r in ref[1:])
                    for k in range(nout):
                        ok, msg = compare(np.load(got[k]), np.load(ref[k]), rtol, 0.0 if k == 0 else rtol * gmax)
                        what = "loss" if k == 0 else f"output {k}"
                        print(f"{name} key {key} {eng} {lvl} {what}: {'ok' if ok else 'FAIL'} ({msg})")
                        bad += not ok
    print("stepcheck: FAILED" if bad else "stepcheck: all ok")
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
