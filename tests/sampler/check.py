#!/usr/bin/env python3
"""Checks sampledump's batches (the runtime's neighbour sampler) against
PyG NeighborLoader's semantics, recomputed here with NumPy alone:

  check.py batches EI SEEDS DIR NBATCH BATCH FANOUTS SHUFFLE [X]
      every edge is an edge of the graph (its edge id's source and
      target, in the batch's numbering); no edge id twice in a batch
      (and no (dst, src) pair twice, the graph having no repeated edge);
      the seeds first, in order (SHUFFLE 0) or each epoch a permutation
      of them; nodes distinct, the new ones in order of first appearance
      as sources; edges grouped by target in node order; each node of hop
      h (seeds 0) has min(fanout[h], in-degree) in-edges, nodes of the
      last hop none; the mask marks the seeds; X's rows gathered.
  check.py same DIR1 DIR2 NBATCH
      the two runs' batches are equal, file by file.
  check.py uniform DEG K < LINES
      sampledump's lines (OUTDIR "-") for a node of in-degree DEG (its
      in-neighbours 1..DEG) sampled K at a time, a line a batch: each
      in-neighbour's count within 5 standard deviations of NBATCH*K/DEG,
      and the draws' pairs too (uniform subsets, not just marginals).
"""
import sys

import numpy as np


def load(d, k, what):
    return np.load(f"{d}/b{k}_{what}.npy")


def fail(msg):
    print("FAIL:", msg)
    sys.exit(1)


def batches(ei_path, seeds_path, d, nbatch, bsize, fanouts, shuffle, x_path=None):
    ei = np.load(ei_path)
    src, dst = ei[0].astype(np.int64), ei[1].astype(np.int64)
    seeds = np.load(seeds_path)
    if seeds.dtype == np.bool_:
        seeds = np.nonzero(seeds)[0]
    seeds = seeds.astype(np.int64)
    n = int(max(src.max(), dst.max(), seeds.max())) + 1
    indeg = np.bincount(dst, minlength=n)
    fan = [int(f) for f in fanouts.split(",")]
    x = np.load(x_path) if x_path else None
    per_epoch = -(-len(seeds) // bsize)
    pairs_unique = len(set(zip(src.tolist(), dst.tolist()))) == len(src)
    epoch_seen = {}
    total_edges = 0
    for k in range(nbatch):
        node, bei, eid = load(d, k, "node"), load(d, k, "ei"), load(d, k, "eid")
        mask, meta = load(d, k, "mask"), load(d, k, "meta")
        epoch, index, ns = (int(v) for v in meta[:3])
        if (epoch, index) != divmod(k, per_epoch):
            fail(f"batch {k} says epoch {epoch} index {index}")
        want = seeds[index * bsize:(index + 1) * bsize]
        if ns != len(want):
            fail(f"batch {k}: {ns} seeds, expected {len(want)}")
        if shuffle:
            epoch_seen.setdefault(epoch, []).extend(node[:ns].tolist())
        elif not np.array_equal(node[:ns], want):
            fail(f"batch {k}: the seeds are not the batch's seeds in order")
        if len(np.unique(node)) != len(node):
            fail(f"batch {k}: a node twice")
        if not np.array_equal(mask, np.arange(len(node)) < ns):
            fail(f"batch {k}: the mask is not the seeds'")
        ne = bei.shape[1] if bei.ndim == 2 else 0
        total_edges += ne
        if bei.shape != (2, ne) or eid.shape != (ne,):
            fail(f"batch {k}: edge arrays of shapes {bei.shape} {eid.shape}")
        if ne and (bei.min() < 0 or bei.max() >= len(node) or eid.min() < 0 or eid.max() >= len(src)):
            fail(f"batch {k}: an index out of range")
        # every sampled edge is the graph's edge eid, relabelled
        if not (np.array_equal(node[bei[0]], src[eid]) and np.array_equal(node[bei[1]], dst[eid])):
            fail(f"batch {k}: an edge is not the graph's edge it names")
        if len(np.unique(eid)) != ne:
            fail(f"batch {k}: an edge sampled twice")
        if pairs_unique and len(set(zip(bei[0].tolist(), bei[1].tolist()))) != ne:
            fail(f"batch {k}: a (dst, src) pair twice")
        if ne and np.any(np.diff(bei[1]) < 0):
            fail(f"batch {k}: edges not grouped by target in node order")
        # hops and first appearance, by walking the edges in order
        hop = np.full(len(node), -1)
        hop[:ns] = 0
        order = list(range(ns))
        for s, t in zip(bei[0].tolist(), bei[1].tolist()):
            if hop[s] < 0:
                hop[s] = hop[t] + 1
                order.append(s)
        if order != list(range(len(node))):
            fail(f"batch {k}: nodes not in order of first appearance")
        cnt = np.bincount(bei[1], minlength=len(node)) if ne else np.zeros(len(node), np.int64)
        for j in range(len(node)):
            h = hop[j]
            want_c = min(fan[h], indeg[node[j]]) if h < len(fan) else 0
            if cnt[j] != want_c:
                fail(f"batch {k}: node {j} (graph node {node[j]}, hop {h}, in-degree {indeg[node[j]]}) "
                     f"has {cnt[j]} sampled in-edges, expected {want_c}")
        if x is not None and not np.array_equal(load(d, k, "x"), x[node]):
            fail(f"batch {k}: the gathered rows are not x's")
    for e, got in epoch_seen.items():
        if len(got) == len(seeds) and sorted(got) != sorted(seeds.tolist()):
            fail(f"epoch {e}: the seeds are not a permutation of the seed nodes")
        if len(got) == len(seeds) and got == seeds.tolist() and len(seeds) > 3:
            fail(f"epoch {e}: --shuffle kept the given order")
    print(f"ok: {nbatch} batches, {total_edges} edges checked")


def same(d1, d2, nbatch):
    for k in range(nbatch):
        for what in ("node", "ei", "eid", "mask", "meta"):
            a, b = load(d1, k, what), load(d2, k, what)
            if what == "meta":
                a, b = a[:3], b[:3]
            if a.shape != b.shape or not np.array_equal(a, b):
                fail(f"batch {k}: {what} differs between {d1} and {d2}")
    print(f"ok: {nbatch} batches equal")


def uniform(lines, deg, kk):
    counts = np.zeros(deg + 1)
    pair = np.zeros((deg + 1, deg + 1))
    nbatch = 0
    for k, line in enumerate(lines):
        if not line.strip() or line.startswith("batches"):
            continue
        nbatch += 1
        got = [int(v) for v in line.split()]
        if len(set(got)) != len(got):
            fail(f"batch {k}: a neighbour twice: {got}")
        if len(got) != kk:
            fail(f"batch {k}: {len(got)} draws, expected {kk}")
        counts[got] += 1
        for a in got:
            for b in got:
                if a < b:
                    pair[a, b] += 1
    p = kk / deg
    mean, sd = nbatch * p, np.sqrt(nbatch * p * (1 - p))
    bad = [(v, c) for v, c in enumerate(counts[1:], 1) if abs(c - mean) > 5 * sd]
    if bad:
        fail(f"counts far from {mean:.1f} +- {sd:.1f}: {bad}")
    q = kk * (kk - 1) / (deg * (deg - 1))
    pm, psd = nbatch * q, np.sqrt(nbatch * q * (1 - q))
    pb = [(a, b, pair[a, b]) for a in range(1, deg + 1) for b in range(a + 1, deg + 1)
          if abs(pair[a, b] - pm) > 5 * psd]
    if pb:
        fail(f"pair counts far from {pm:.1f} +- {psd:.1f}: {pb[:5]}")
    print(f"ok: uniform over {deg} in-neighbours ({nbatch} draws of {kk})")


if __name__ == "__main__":
    cmd, a = sys.argv[1], sys.argv[2:]
    if cmd == "batches":
        batches(a[0], a[1], a[2], int(a[3]), int(a[4]), a[5], int(a[6]), a[7] if len(a) > 7 else None)
    elif cmd == "same":
        same(a[0], a[1], int(a[2]))
    elif cmd == "uniform":
        uniform(sys.stdin.readlines(), int(a[0]), int(a[1]))
    else:
        fail(f"unknown command {cmd}")
