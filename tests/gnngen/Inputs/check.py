"""Checks a gnngen output directory with NumPy, independently of gnngen.

    check.py DIR N E F STATS

DIR/edge_index.npy must be int64 [2, E] with every index in [0, N) and no
self loops (N >= 2); DIR/x.npy float32 [N, F] in [-1, 1) when F > 0, and
absent when F == 0; the file STATS must hold the statistics line that
gnngen printed, which is recomputed here.  Prints "ok" and the line.
"""
import os
import sys

import numpy as np

d, n, e, f, stats = sys.argv[1], int(sys.argv[2]), int(sys.argv[3]), int(sys.argv[4]), sys.argv[5]
ei = np.load(os.path.join(d, "edge_index.npy"))
assert ei.dtype == np.int64 and ei.shape == (2, e), (ei.dtype, ei.shape)
assert e == 0 or (ei.min() >= 0 and ei.max() < n), "index out of range"
assert n < 2 or not np.any(ei[0] == ei[1]), "self loop"
xpath = os.path.join(d, "x.npy")
if f > 0:
    x = np.load(xpath)
    assert x.dtype == np.float32 and x.shape == (n, f), (x.dtype, x.shape)
    assert x.min() >= -1 and x.max() < 1, (x.min(), x.max())
else:
    assert not os.path.exists(xpath), "x.npy without features"
indeg = np.bincount(ei[1], minlength=n)
outdeg = np.bincount(ei[0], minlength=n)
want = "nodes=%d edges=%d in_degree_mean=%.2f in_degree_max=%d out_degree_max=%d" % (
    n, e, e / n if n else 0.0, indeg.max() if n else 0, outdeg.max() if n else 0)
got = open(stats).read().strip()
assert got == want, (got, want)
print("ok", got)
