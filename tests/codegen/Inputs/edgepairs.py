"""Inputs and an exact reference for edgepairs.test.

    edgepairs.py gen DIR            ei.npy, x.npy, y.npy, z.npy in DIR
    edgepairs.py check DIR OUT Q    OUT's a and b (edgepairs.gnn) against
                                    float32 sums in the kernels' order

The graph's rows have 0, 1, 2, 3 and 237 edges, then 0 to 9 (odd counts
leave a pair walk its last edge alone), sorted by (dst, src): the plans'
order, whichever they keep within a row.  The reference adds each row's
messages one by one in that order, as a walk does; b's walk in Q slices
of its edges (edge q, q + Q, ...), the slices' sums then meeting in a
butterfly (rowkernel.c's emitsliced).  Prints ok, or the first row
that differs.
"""
import sys

import numpy as np

N = 64


def gen(d):
    r = np.random.default_rng(3)
    deg = r.integers(0, 10, N)
    deg[:5] = [0, 1, 2, 3, 237]
    dst = np.repeat(np.arange(N), deg)
    src = r.integers(0, N, dst.size)
    o = np.lexsort((src, dst))
    np.save(f"{d}/ei.npy", np.stack([src[o], dst[o]]).astype(np.int64))
    np.save(f"{d}/x.npy", r.standard_normal((N, 100)).astype(np.float32))
    np.save(f"{d}/y.npy", r.standard_normal((N, 13)).astype(np.float32))
    np.save(f"{d}/z.npy", r.standard_normal((N, 2)).astype(np.float32))


def walk(m, start, deg, Q):
    acc = np.zeros((Q, N, m.shape[1]), np.float32)
    for t in range(int(deg.max())):
        rows = np.nonzero(deg > t)[0]
        acc[t % Q, rows] += m[start[rows] + t]
    s = 1
    while s < Q:
        acc = acc + acc[np.arange(Q) ^ s]
        s *= 2
    return acc[0]


def check(d, out, Q):
    src, dst = np.load(f"{d}/ei.npy")
    x, y = np.load(f"{d}/x.npy"), np.load(f"{d}/y.npy")
    deg = np.bincount(dst, minlength=N)
    start = np.searchsorted(dst, np.arange(N))
    a = walk(x[src], start, deg, 1)
    b = walk(y[src] * np.float32(0.5), start, deg, Q)
    b = np.where(deg[:, None] > 1, b / np.maximum(deg, 1).astype(np.float32)[:, None], b)
    o = np.load(out)
    for name, got, want in (("a", o[:, :100], a), ("b", o[:, 200:], b)):
        bad = np.nonzero((got.view(np.uint32) != want.view(np.uint32)).any(axis=1))[0]
        if bad.size:
            print(f"{out}: {name} differs at row {bad[0]} ({deg[bad[0]]} edges)")
            return 1
    print("ok")
    return 0


if __name__ == "__main__":
    if sys.argv[1] == "gen":
        gen(sys.argv[2])
    else:
        sys.exit(check(sys.argv[2], sys.argv[3], int(sys.argv[4])))
