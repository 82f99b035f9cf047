#!/usr/bin/env python3
"""relations2_check.py DIR: relations2.gnn's four outputs in DIR (h0..h3.npy)
against NumPy on the graph and features relations.test wrote there
(w, c, r: edge_index per relation; xa, xp2: author and paper features)."""
import sys

import numpy as np

d = sys.argv[1]
w, c, r = (np.load(f"{d}/{n}.npy") for n in ("w", "c", "r"))
xa, xp = np.load(f"{d}/xa.npy").astype(np.float64), np.load(f"{d}/xp2.npy").astype(np.float64)
na, npap = len(xa), len(xp)


def scatter(x, ei, n, mean=False):
    out, cnt = np.zeros((n, x.shape[1])), np.zeros((n, 1))
    for s, t in ei.T:
        out[t] += x[s]
        cnt[t] += 1
    return out / np.maximum(cnt, 1) if mean else out


def degree(ei, row, n):
    return np.bincount(ei[row], minlength=n).astype(np.float64).reshape(n, 1)


want = [scatter(xa, w, npap, mean=True) + scatter(xp, c, npap), scatter(xp, r, na), degree(w, 0, na),
        degree(r, 1, na)]
for k, ref in enumerate(want):
    got = np.load(f"{d}/h{k}.npy")
    assert got.shape == ref.shape and np.allclose(got, ref, rtol=1e-6, atol=0), (k, got, ref)
print("relations2 ok")
