#!/usr/bin/env python3
"""PyG's NormalizeFeatures of a .npy: x - min, rows divided by their sum
clamped to 1, as float32.  usage: normx.py IN.npy OUT.npy

Also the helpers tests/train's scripts share (stepcheck.py, refstep.py):
normalize(), cora() and run()."""
import os
import subprocess
import sys

import numpy as np


def normalize(src, dst):
    """src's features normalized as PyG's NormalizeFeatures, saved at dst"""
    x = np.load(src).astype(np.float32)
    x = x - x.min()
    np.save(dst, (x / np.maximum(x.sum(1, keepdims=True), 1)).astype(np.float32))
    return dst


def cora(root, work, nodes=0):
    """the repository's Cora, or (nodes > 0) its first nodes nodes made
    into a dataset under work by tests/ref/subgraph.py"""
    data = os.path.join(root, "data", "cora")
    if not nodes:
        return data
    out = os.path.join(work, "cora")
    run([sys.executable, os.path.join(root, "tests", "ref", "subgraph.py"), data, out, str(nodes)], "cora")
    return out


def run(cmd, who):
    """cmd's standard output; on failure its output and exit naming it"""
    r = subprocess.run(cmd, capture_output=True, text=True)
    if r.returncode != 0:
        sys.stdout.write(r.stdout + r.stderr)
        raise SystemExit(f"{who}: failed: {' '.join(cmd)}")
    return r.stdout


if __name__ == "__main__":
    normalize(sys.argv[1], sys.argv[2])
