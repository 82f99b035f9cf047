#!/usr/bin/env python3
"""pool_ref.py DIR: writes a 3-graph batch (graph 1 has no edges; graph 2
is one isolated node), GCNConv weights, and the NumPy reference of
Inputs/pool.gnn (global add/mean/max pooling, pyg_ref semantics)."""
import os
import sys

import numpy as np

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "..", "ref"))
import pyg_ref  # noqa: E402
import st  # noqa: E402

d = sys.argv[1]
rng = np.random.default_rng(3)
src = np.array([0, 1, 2, 3, 1], dtype=np.int64)
dst = np.array([1, 0, 3, 2, 2], dtype=np.int64)
ei = np.stack([src, dst])
batch = np.array([0, 0, 0, 0, 1, 1, 2], dtype=np.int64)
x = rng.uniform(-1, 1, size=(7, 8))
w = {"conv.lin.weight": rng.uniform(-1, 1, size=(4, 8)).astype(np.float32),
     "conv.bias": rng.uniform(-1, 1, size=4).astype(np.float32)}
np.save(os.path.join(d, "edge_index.npy"), ei)
np.save(os.path.join(d, "batch.npy"), batch)
np.save(os.path.join(d, "x.npy"), x)
st.save(os.path.join(d, "w.safetensors"), w)
h = np.maximum(pyg_ref.gcn_conv(x, ei, w["conv.lin.weight"].astype(np.float64),
                                w["conv.bias"].astype(np.float64)), 0)
for name, red in (("sum", "sum"), ("mean", "mean"), ("max", "max")):
    np.save(os.path.join(d, f"ref_{name}.npy"), pyg_ref.scatter(h, batch, 3, red))
