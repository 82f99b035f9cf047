#!/usr/bin/env python3
"""normalize.py X.npy OUT.npy: PyG's NormalizeFeatures (pyg_ref.normalize_features)
applied to a feature matrix, written as float64 so that the model under
test and the reference see bit-identical inputs."""
import sys

import numpy as np

import pyg_ref

if len(sys.argv) != 3:
    sys.exit(__doc__)
np.save(sys.argv[2], pyg_ref.normalize_features(np.load(sys.argv[1])))
