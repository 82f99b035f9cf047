#!/usr/bin/env python3
"""Run a NumPy float64 reference forward pass of one of gnncc's example models.

usage: reference.py MODEL --data DIR --weights W.safetensors --out OUT.npy
                    [--normalize-features] [--aggr mean|max|sum]

MODEL is one of gcn, sage, gat, gat_mean, gin (see pyg_ref.MODELS).
Reads DIR/x.npy (float, [N, F]) and DIR/edge_index.npy (int64 [2, E]).

--normalize-features applies PyG's NormalizeFeatures exactly:
    x = x - x.min();  x = x / x.sum(-1, keepdim=True).clamp(min=1)
For Cora/CiteSeer (0/1 features, global min 0) that is "divide every row by
its sum; all-zero rows stay zero".

The output (log-probabilities, [N, C]) is written as a float64 .npy.
"""
import argparse
import os
import sys

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import pyg_ref  # noqa: E402
import st  # noqa: E402


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("model", choices=sorted(pyg_ref.MODELS))
    ap.add_argument("--data", required=True, help="folder with x.npy and edge_index.npy")
    ap.add_argument("--weights", required=True, help="safetensors state dict")
    ap.add_argument("--out", required=True, help="output .npy (float64)")
    ap.add_argument("--normalize-features", action="store_true",
                    help="PyG NormalizeFeatures: (x - min) / clamp(rowsum, min=1)")
    ap.add_argument("--aggr", choices=["mean", "max", "sum"], default="mean",
                    help="SAGEConv aggregation (sage only; default mean)")
    a = ap.parse_args(argv)

    x = np.load(os.path.join(a.data, "x.npy")).astype(np.float64)
    ei = np.load(os.path.join(a.data, "edge_index.npy")).astype(np.int64)
    if ei.ndim != 2 or ei.shape[0] != 2:
        ap.error(f"edge_index must be [2, E], got {ei.shape}")
    if ei.size and (ei.min() < 0 or ei.max() >= x.shape[0]):
        ap.error("edge_index has out-of-range node ids")
    if a.normalize_features:
        x = pyg_ref.normalize_features(x)
    sd = st.load(a.weights)

    if a.model == "sage":
        out = pyg_ref.sage_forward(x, ei, sd, aggr=a.aggr)
    else:
        out = pyg_ref.MODELS[a.model](x, ei, sd)
    out = np.ascontiguousarray(out, dtype=np.float64)
    if not np.all(np.isfinite(out)):
        print("warning: non-finite values in output", file=sys.stderr)
    np.save(a.out, out)
    print(f"{a.model}: wrote {a.out} shape={list(out.shape)} dtype=float64")
    return 0


if __name__ == "__main__":
    sys.exit(main())
