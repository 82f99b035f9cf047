#!/usr/bin/env python3
"""small_graph.py OUTDIR [--features F]: a 7-node graph that exercises what
Cora does not: an existing self loop (node 2), a duplicated edge (0->1
twice), a node with no incoming edges (node 5) and an isolated node (6,
the last: only the features know it exists).  Writes edge_index.npy
(int64 [2, E]) and x.npy (float64 [7, F], seeded random)."""
import argparse
import os

import numpy as np

ap = argparse.ArgumentParser(description=__doc__)
ap.add_argument("outdir")
ap.add_argument("--features", type=int, default=1433)
a = ap.parse_args()
os.makedirs(a.outdir, exist_ok=True)
src = [0, 0, 1, 2, 2, 3, 4, 5, 5, 1, 3]
dst = [1, 1, 0, 2, 3, 2, 3, 4, 0, 4, 4]
np.save(os.path.join(a.outdir, "edge_index.npy"), np.array([src, dst], dtype=np.int64))
rng = np.random.default_rng(7)
np.save(os.path.join(a.outdir, "x.npy"), rng.uniform(-1, 1, size=(7, a.features)))
