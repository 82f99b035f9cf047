#!/usr/bin/env python3
"""The sampler tests' small inputs: graphs.py OUTDIR
  star_ei.npy, star_seed.npy: nodes 1..10 each with an edge to node 0;
      the seed node 0
  rand_ei.npy, rand_seeds.npy, rand_x.npy: 300 nodes, 3000 distinct
      random edges (degrees from 0 to dozens, some nodes without
      in-edges, no self loops), the seeds 0..99 in a scrambled order,
      features [300, 5]
  bad seeds: out_seeds.npy (node 300 of 300), dup_seeds.npy (3 twice)
  all_seeds.npy: every node of Cora, last first"""
import sys

import numpy as np

d = sys.argv[1]
np.save(f"{d}/star_ei.npy", np.array([np.arange(1, 11), np.zeros(10, np.int64)], np.int64))
np.save(f"{d}/star_seed.npy", np.array([0], np.int64))
rng = np.random.default_rng(5)
n = 300
w = rng.zipf(1.6, size=n).astype(np.float64)
pairs = set()
while len(pairs) < 3000:
    s = int(rng.integers(n))
    t = int(rng.choice(n, p=w / w.sum()))
    if s != t:
        pairs.add((s, t))
pairs = sorted(pairs, key=lambda p: (p[1] * 7919 + p[0]) % 3001)
ei = np.ascontiguousarray(np.array(pairs, np.int64).T)
np.save(f"{d}/rand_ei.npy", ei)
np.save(f"{d}/rand_seeds.npy", rng.permutation(100).astype(np.int64))
np.save(f"{d}/rand_x.npy", rng.standard_normal((n, 5)).astype(np.float32))
np.save(f"{d}/out_seeds.npy", np.array([1, 300], np.int64))
np.save(f"{d}/dup_seeds.npy", np.array([3, 5, 3], np.int64))
np.save(f"{d}/all_seeds.npy", np.arange(2708, dtype=np.int64)[::-1].copy())
