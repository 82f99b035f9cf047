#!/usr/bin/env python3
"""emptyruns.py GNNRUN ENGINE DIR WEIGHTS: run the example models (and the
SAGE-max, GAT-mean and pooling variants) on the graphs empty_graphs.py
wrote into DIR, with gnnrun --engine=ENGINE, and compare each output with
the NumPy reference (tests/ref): shape first, then values (rtol 1e-5, the
float32 engines against float64).  WEIGHTS holds make_weights.py's files.
Prints one line per run and exits 1 if any differs."""
import os
import subprocess
import sys

import numpy as np

here = os.path.dirname(os.path.abspath(__file__))
root = os.path.join(here, "..", "..", "..")
sys.path.insert(0, os.path.join(root, "tests", "ref"))
import compare  # noqa: E402

gnnrun, engine, d, wdir = sys.argv[1:5]
ex = os.path.join(root, "examples")
inp = os.path.join(root, "tests", "interp", "Inputs")
models = [
    # name, source, weights, reference.py arguments
    ("gcn", os.path.join(ex, "gcn", "gcn.gnn"), os.path.join(ex, "gcn", "gcn_cora.safetensors"), ["gcn"]),
    ("sage", os.path.join(ex, "sage", "sage.gnn"), os.path.join(wdir, "sage.safetensors"), ["sage"]),
    ("sage-max", os.path.join(inp, "sage_max.gnn"), os.path.join(wdir, "sage.safetensors"),
     ["sage", "--aggr", "max"]),
    ("gat", os.path.join(ex, "gat", "gat.gnn"), os.path.join(wdir, "gat.safetensors"), ["gat"]),
    ("gat-mean", os.path.join(inp, "gat_mean.gnn"), os.path.join(wdir, "gat_mean.safetensors"),
     ["gat_mean"]),
    ("gin", os.path.join(ex, "gin", "gin.gnn"), os.path.join(wdir, "gin.safetensors"), ["gin"]),
]
bad = 0


def check(label, out, ref):
    global bad
    a, b = np.load(out), np.load(ref)
    ok, msg = compare.compare(a, b, 1e-5)
    print(f"{label}: shape {list(a.shape)} {'PASS' if ok else 'FAIL ' + msg}")
    bad += not ok


def run(args):
    global bad
    r = subprocess.run(args, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    if r.returncode != 0:
        print(f"FAIL: {' '.join(args)}: exit status {r.returncode}\n{r.stdout}")
        bad += 1
    return r.returncode == 0


for graph in ("n0", "e0", "iso"):
    g = os.path.join(d, graph)
    for name, src, w, refargs in models:
        ref = os.path.join(g, name + "-ref.npy")
        out = os.path.join(g, f"{name}-{engine}.npy")
        if not os.path.exists(ref):
            subprocess.run([sys.executable, os.path.join(root, "tests", "ref", "reference.py")]
                           + refargs + ["--data", g, "--weights", w, "--out", ref],
                           check=True, stdout=subprocess.DEVNULL)
        if run([gnnrun, src, "--engine=" + engine, "--graph", os.path.join(g, "edge_index.npy"),
                "--input", "x=" + os.path.join(g, "x.npy"), "--weights", w, "--output", out]):
            check(f"{name} {graph} {engine}", out, ref)

for graph in ("pool-n0", "pool-gaps"):
    g = os.path.join(d, graph)
    outs = [os.path.join(g, f"{r}-{engine}.npy") for r in ("sum", "mean", "max")]
    if run([gnnrun, os.path.join(inp, "pool.gnn"), "--engine=" + engine,
            "--graph", os.path.join(g, "edge_index.npy"), "--batch", os.path.join(g, "batch.npy"),
            "--input", "x=" + os.path.join(g, "x.npy"), "--weights", os.path.join(g, "w.safetensors"),
            "--output", outs[0], "--output", outs[1], "--output", outs[2]]):
        for r, out in zip(("sum", "mean", "max"), outs):
            check(f"pool-{r} {graph} {engine}", out, os.path.join(g, f"ref_{r}.npy"))
sys.exit(1 if bad else 0)
