#!/usr/bin/env python3
"""precision_models.py [--engine=E] GNNRUN WORK CORA SHARED EXAMPLES INTERP PRECISION...

Every example model (and the interpreter suite's SAGE and GAT variants)
under each --precision given, on Cora, compiled for engine E (gnnrun's
--engine, default cpu; "cuda-emu:memcheck" adds --emu-check=memcheck):
against the interpreter's 16-bit reference at the same -O level (which
rounds the values the same pipeline writes to memory, in float64) within
PRECISION's tolerance, and against the float32 model run by the
interpreter within a wider one (docs/precision.md; the float32 runs are
made once for every precision).  GCN, GAT and GIN again at -O0, which
stores every value.  WORK holds x.npy (normalized features) and
make_weights.py's weights.  The interpreter's references are made once
per WORK: a second engine's run (precision-models.test runs cpu, then
cuda-emu, on one WORK) reads the first one's, which are the same
commands' outputs.  Prints a line per check, the GCN accuracies
(PyG's trained weights) as accuracy.py does, and "FAIL ..." for every
failure; exit status 1 if any.
"""
import os
import subprocess
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "..", "ref"))
import numpy as np  # noqa: E402
from compare import compare  # noqa: E402

# (against the 16-bit reference, against float32): unit roundoff 2^-8 and 2^-11
TOL = {"bf16": (4e-3, 1.6e-2), "fp16": (5e-4, 2e-3)}


def main():
    args = sys.argv[1:]
    engine, check = "cpu", None
    if args and args[0].startswith("--engine="):
        engine, _, check = args.pop(0)[len("--engine="):].partition(":")
    eflags = [f"--engine={engine}"] + ([f"--emu-check={check}"] if check else [])
    gnnrun, work, cora, shared, examples, interp = args[:6]
    precisions = args[6:]
    models = [("gcn", f"{examples}/gcn/gcn.gnn", f"{shared}/weights/gcn_cora.safetensors"),
              ("sage", f"{examples}/sage/sage.gnn", f"{work}/sage.safetensors"),
              ("sagemax", f"{interp}/sage_max.gnn", f"{work}/sage.safetensors"),
              ("sagesum", f"{interp}/sage_sum.gnn", f"{work}/sage.safetensors"),
              ("gat", f"{examples}/gat/gat.gnn", f"{work}/gat.safetensors"),
              ("gatm", f"{interp}/gat_mean.gnn", f"{work}/gat_mean.safetensors"),
              ("gin", f"{examples}/gin/gin.gnn", f"{work}/gin.safetensors")]
    bad = 0

    def run(path, weights, out, *flags):
        cmd = [gnnrun, path, *flags, "--graph", f"{cora}/edge_index.npy", "--input", f"x={work}/x.npy",
               "--weights", weights, "--output", out]
        r = subprocess.run(cmd, capture_output=True, text=True)
        if r.returncode:
            raise SystemExit(f"FAIL {' '.join(cmd)}: {r.stderr}")

    def ref(path, weights, out, *flags):
        """the interpreter's output at out, unless this WORK has it"""
        if not os.path.exists(out):
            run(path, weights, out, *flags, "--engine=interp", "--output-dtype=f64")

    def check(what, a, b, rtol):
        nonlocal bad
        ok, msg = compare(np.load(a), np.load(b), rtol)
        print(f"{'ok  ' if ok else 'FAIL'} {what}: {msg}", flush=True)
        bad += not ok

    def accuracy(what, out):
        r = subprocess.run([sys.executable, os.path.join(HERE, "..", "..", "ref", "accuracy.py"), out,
                            "--data", cora], capture_output=True, text=True)
        print(f"{what} {r.stdout.strip()}", flush=True)

    for name, path, w in models:
        ref(path, w, f"{work}/{name}-f.npy")
    for p in precisions:
        tol16, tol32 = TOL[p]
        for name, path, w in models:
            i, c = f"{work}/{name}-{p}-i.npy", f"{work}/{name}-{p}-c.npy"
            ref(path, w, i, f"--precision={p}")
            run(path, w, c, f"--precision={p}", *eflags)
            check(f"{p} {name} against the 16-bit reference", c, i, tol16)
            check(f"{p} {name} against float32", c, f"{work}/{name}-f.npy", tol32)
            if name == "gcn":
                accuracy(f"{p} gcn interp", i)
                accuracy(f"{p} gcn {engine}", c)
        for name, path, w in models:
            if name not in ("gcn", "gat", "gin"):
                continue
            i, c = f"{work}/{name}-{p}-i0.npy", f"{work}/{name}-{p}-c0.npy"
            ref(path, w, i, "-O0", f"--precision={p}")
            run(path, w, c, "-O0", f"--precision={p}", *eflags)
            check(f"{p} {name} -O0 against the 16-bit reference at -O0", c, i, tol16)
            if name == "gcn":
                accuracy(f"{p} gcn {engine} -O0", c)
    print(f"precision models: {len(precisions)} precisions x {len(models)} models: "
          + ("all ok" if not bad else f"{bad} FAILED"))
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
