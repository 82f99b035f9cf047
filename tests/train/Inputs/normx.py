#!/usr/bin/env python3
"""PyG's NormalizeFeatures of a .npy: x - min, rows divided by their sum
clamped to 1, as float32.  usage: normx.py IN.npy OUT.npy

Also the helpers tests/train's scripts share (stepcheck.py, refstep.py):
normalize() and run()."""
import subprocess
import sys

import numpy as np


def normalize(src, dst):
    """src's features normalized as PyG's NormalizeFeatures, saved at dst"""
    x = np.load(src).astype(np.float32)
    x = x - x.min()
    np.save(dst, (x / np.maximum(x.sum(1, keepdims=True), 1)).astype(np.float32))
    return dst


def run(cmd, who):
    """cmd's standard output; on failure its output and exit naming it"""
    r = subprocess.run(cmd, capture_output=True, text=True)
    if r.returncode != 0:
        sys.stdout.write(r.stdout + r.stderr)
        raise SystemExit(f"{who}: failed: {' '.join(cmd)}")
    return r.stdout


if __name__ == "__main__":
    normalize(sys.argv[1], sys.argv[2])
