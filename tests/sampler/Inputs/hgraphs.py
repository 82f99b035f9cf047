#!/usr/bin/env python3
"""The heterogeneous sampler tests' small inputs: hgraphs.py OUTDIR
  OUTDIR/mixed: types a (40 nodes) and b (60), features [N, 3] and [N, 2];
      relations b__to__a and its reverse a__rev_to__b (timed: a time an
      edge, drawn from few values, so that many equal a seed's time),
      b__link__b (untimed, random, with nodes of no in-edges) and
      a__self__a (untimed); seeds_a: 30 of the a nodes, some of them
      twice at other times; time_a their times
  OUTDIR/future: mixed's graph with every edge time a year earlier (all
      edges eligible), for the checker to catch future edges
  OUTDIR/star: node 0 of a with in-edges from b's nodes 0..9 at times
      0..9 (edge i from b node i), the seed a 0 at time 5: six eligible"""
import os
import shutil
import sys

import numpy as np

d = os.path.join(sys.argv[1], "mixed")
os.makedirs(d, exist_ok=True)
rng = np.random.default_rng(11)
na, nb = 40, 60
np.save(f"{d}/x_a.npy", rng.standard_normal((na, 3)).astype(np.float32))
np.save(f"{d}/x_b.npy", rng.standard_normal((nb, 2)).astype(np.float32))
e = 400
src = rng.integers(0, nb, e)
dst = (rng.zipf(1.5, e) - 1) % na
t = rng.integers(0, 8, e).astype(np.int64)
np.save(f"{d}/b__to__a.npy", np.array([src, dst], np.int64))
np.save(f"{d}/time_b__to__a.npy", t)
np.save(f"{d}/a__rev_to__b.npy", np.array([dst, src], np.int64))
np.save(f"{d}/time_a__rev_to__b.npy", t)
pairs = {(int(a), int(b)) for a, b in zip(rng.integers(0, nb, 300), rng.integers(0, nb // 2, 300)) if a != b}
bb = np.array(sorted(pairs), np.int64).T
np.save(f"{d}/b__link__b.npy", np.ascontiguousarray(bb[:, rng.permutation(bb.shape[1])]))
np.save(f"{d}/a__self__a.npy", np.array([rng.integers(0, na, 50), rng.integers(0, na, 50)], np.int64))
seeds = np.concatenate([rng.permutation(na)[:24], rng.permutation(na)[:6]]).astype(np.int64)
np.save(f"{d}/seeds_a.npy", seeds)
np.save(f"{d}/time_a.npy", rng.integers(0, 8, len(seeds)).astype(np.int64))
f = os.path.join(sys.argv[1], "future")
shutil.copytree(d, f, dirs_exist_ok=True)
for r in ["b__to__a", "a__rev_to__b"]:
    np.save(f"{f}/time_{r}.npy", t - 365 * 86400)
s = os.path.join(sys.argv[1], "star")
os.makedirs(s, exist_ok=True)
np.save(f"{s}/x_a.npy", np.zeros((1, 1), np.float32))
np.save(f"{s}/x_b.npy", np.zeros((10, 1), np.float32))
np.save(f"{s}/b__to__a.npy", np.array([np.arange(10), np.zeros(10)], np.int64))
np.save(f"{s}/time_b__to__a.npy", np.arange(10, dtype=np.int64))
np.save(f"{s}/time_a.npy", np.array([5], np.int64))
