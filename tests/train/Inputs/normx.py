#!/usr/bin/env python3
"""PyG's NormalizeFeatures of a .npy: x - min, rows divided by their sum
clamped to 1, as float32.  usage: normx.py IN.npy OUT.npy"""
import sys

import numpy as np

x = np.load(sys.argv[1]).astype(np.float32)
x = x - x.min()
np.save(sys.argv[2], (x / np.maximum(x.sum(1, keepdims=True), 1)).astype(np.float32))
