"""compare.py A.npy B.npy [A.npy B.npy ...]: the largest difference of
each pair, relative to B's largest magnitude; fails above 1e-5."""
import sys

import numpy as np

bad = 0
for a, b in zip(sys.argv[1::2], sys.argv[2::2]):
    x, y = np.load(a), np.load(b)
    err = float(np.abs(x - y).max() / max(np.abs(y).max(), 1e-30)) if x.shape == y.shape else float("inf")
    print(f"{a}: {list(x.shape)}, " + ("within 1e-5 of PyG" if err <= 1e-5 else f"DIFFERS ({err:.3g})"))
    bad += err > 1e-5
sys.exit(1 if bad else 0)
