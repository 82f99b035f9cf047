#!/usr/bin/env python3
"""empty_graphs.py DIR: graphs that have nothing to aggregate, each in its
own folder with x.npy (float64 [N, 1433]) and edge_index.npy (int64
[2, E]) as tests/ref/reference.py reads them:

  n0: no nodes and no edges (N = 0, E = 0);
  e0: five nodes and no edges (E = 0: every node isolated);
  iso: nine nodes where 2, 5 and 8 (the last: only x knows it) have no
       edges at all, 6 has only outgoing ones and 0 only a self loop.

Also the batched version for tests/interp/Inputs/pool.gnn (8 features):
  pool-n0: no nodes, no edges, no graphs;
  pool-gaps: graphs 1 and 3 of a batch of 5 have no nodes (the pools of
       an empty graph are 0, as PyG's scatter gives), graph 4 has one
       isolated node, and there are no edges at all.
Each pool folder holds edge_index.npy, batch.npy, x.npy, w.safetensors
and ref_{sum,mean,max}.npy."""
import os
import sys

import numpy as np

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "..", "ref"))
import pyg_ref  # noqa: E402
import st  # noqa: E402

d = sys.argv[1]
rng = np.random.default_rng(11)


def save(name, x, src, dst, batch=None):
    os.makedirs(os.path.join(d, name), exist_ok=True)
    np.save(os.path.join(d, name, "x.npy"), x)
    np.save(os.path.join(d, name, "edge_index.npy"), np.array([src, dst], dtype=np.int64).reshape(2, -1))
    if batch is not None:
        np.save(os.path.join(d, name, "batch.npy"), np.array(batch, dtype=np.int64))


save("n0", np.zeros((0, 1433)), [], [])
save("e0", rng.uniform(-1, 1, (5, 1433)), [], [])
save("iso", rng.uniform(-1, 1, (9, 1433)), [1, 3, 4, 6, 6, 7, 0], [3, 1, 3, 4, 7, 4, 0])

w = {"conv.lin.weight": rng.uniform(-1, 1, size=(4, 8)).astype(np.float32),
     "conv.bias": rng.uniform(-1, 1, size=4).astype(np.float32)}
for name, n, batch, b in (("pool-n0", 0, [], 0), ("pool-gaps", 4, [0, 0, 2, 4], 5)):
    x = rng.uniform(-1, 1, size=(n, 8))
    save(name, x, [], [], batch)
    st.save(os.path.join(d, name, "w.safetensors"), w)
    ei = np.zeros((2, 0), dtype=np.int64)
    h = np.maximum(pyg_ref.gcn_conv(x, ei, w["conv.lin.weight"].astype(np.float64),
                                    w["conv.bias"].astype(np.float64)), 0)
    for red in ("sum", "mean", "max"):
        np.save(os.path.join(d, name, f"ref_{red}.npy"),
                pyg_ref.scatter(h, np.array(batch, dtype=np.int64), b, red))
