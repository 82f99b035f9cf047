#!/usr/bin/env python3
"""A small graph for tests/train/gnnrun.test: 40 nodes of 1433 features,
labels in range and one out of range, masks good, short and of ints."""
import os
import sys

import numpy as np

d = sys.argv[1]
rng = np.random.default_rng(3)
n = 40
np.save(os.path.join(d, "ei.npy"), rng.integers(0, n, (2, 160)).astype(np.int64))
np.save(os.path.join(d, "x.npy"), (rng.random((n, 1433)) < 0.02).astype(np.float32))
y = rng.integers(0, 7, n).astype(np.int64)
np.save(os.path.join(d, "y.npy"), y)
y[5] = 7
np.save(os.path.join(d, "ybad.npy"), y)
mask = np.zeros(n, bool)
mask[:20] = True
np.save(os.path.join(d, "mask.npy"), mask)
np.save(os.path.join(d, "mshort.npy"), mask[:30])
np.save(os.path.join(d, "mint.npy"), mask.astype(np.int64))
