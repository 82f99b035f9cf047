#!/usr/bin/env python3
"""special.py N DIR: inputs x and y (N x 4, float32) for
softmax-special.gnn: x zero (a -inf score) at one entry in five, y zero
(+inf) at one in twenty, both at a few (NaN); the rest in [0.1, 2)."""
import sys

import numpy as np

n, d = int(sys.argv[1]), sys.argv[2]
rng = np.random.default_rng(3)
x = rng.uniform(0.1, 2, (n, 4)).astype(np.float32)
y = rng.uniform(0.1, 2, (n, 4)).astype(np.float32)
x[rng.random((n, 4)) < 0.2] = 0
y[rng.random((n, 4)) < 0.05] = 0
np.save(f"{d}/x.npy", x)
np.save(f"{d}/y.npy", y)
