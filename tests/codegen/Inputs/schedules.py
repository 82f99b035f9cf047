"""Run every example model under several forced schedules (gnnrun
--engine=cpu --schedule=...) and compare each with the interpreter.

usage: schedules.py GNNRUN EDGE_INDEX X OUTDIR REFDIR EXAMPLES INTERP_INPUTS WEIGHTS [MODEL,...]

MODEL,...: only these (the sanitizer build's run: one model per kind of
row kernel, each under every schedule).
"""
import subprocess
import sys

import numpy as np

gnnrun, graph, x, out, refdir, examples, inputs, weights = sys.argv[1:9]
sys.path.insert(0, refdir)
from compare import compare  # noqa: E402  (in this process: no interpreter start per run)
models = [
    ("gcn", f"{examples}/gcn/gcn.gnn", f"{weights}/gcn_cora.safetensors"),
    ("sage", f"{examples}/sage/sage.gnn", f"{out}/sage.safetensors"),
    ("sage_max", f"{inputs}/sage_max.gnn", f"{out}/sage.safetensors"),
    ("gat", f"{examples}/gat/gat.gnn", f"{out}/gat.safetensors"),
    ("gat_mean", f"{inputs}/gat_mean.gnn", f"{out}/gat_mean.safetensors"),
    ("gin", f"{examples}/gin/gin.gnn", f"{out}/gin.safetensors"),
]
if len(sys.argv) > 9:
    models = [m for m in models if m[0] in sys.argv[9].split(",")]
schedules = ["all:lanes=1", "all:lanes=2", "all:lanes=4", "all:lanes=8", "all:lanes=32",
             "all:tile=4", "all:tile=16,axpy=1", "all:axpy=1", "all:chunk=16", "all:gemm=16,kc=128"]


def run(model, w, engine, o, extra=()):
    subprocess.run([gnnrun, model, f"--engine={engine}", "--graph", graph, "--input", f"x={x}",
                    "--weights", w, "--output", o, "--output-dtype=f64", "--no-tune-cache", *extra], check=True)


bad = 0
for name, model, w in models:
    ref = f"{out}/{name}-i.npy"
    run(model, w, "interp", ref)
    for s in schedules:
        o = f"{out}/{name}-{s.replace(':', '_').replace(',', '_').replace('=', '')}.npy"
        run(model, w, "cpu", o, [f"--schedule={s}"])
        good, msg = compare(np.load(o), np.load(ref), 1e-5)
        print(f"{name} {s} {'ok' if good else 'MISMATCH ' + msg[-200:]}")
        bad += not good
    if name == "gat":
        # lanes change nothing in the row kernels' arithmetic.  The
        # reference keeps the dense transform's GEMM (which all:lanes=8
        # leaves to the cost model), since gnn_sgemm's FMAs round
        # differently from the reference loops' multiply-adds
        ref1 = f"{out}/gat-lanes1-gemm.npy"
        run(model, w, "cpu", ref1, ["--schedule=all:lanes=1", "--schedule=all:gemm=64"])
        a = open(f"{out}/gat-all_lanes8.npy", "rb").read()
        b = open(ref1, "rb").read()
        print(f"gat all:lanes=8 {'bitwise equal to' if a == b else 'MISMATCH: differs from'} the reference schedule")
        bad += a != b
print("all schedules agree" if not bad else f"{bad} MISMATCHES")
sys.exit(1 if bad else 0)
