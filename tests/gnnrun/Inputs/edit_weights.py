#!/usr/bin/env python3
"""edit_weights.py IN OUT: the GCN weights with one tensor dropped
(conv1.bias), one transposed (conv2.lin.weight), one of the wrong dtype
(conv2.bias as f64) and one extra (conv3.bias)."""
import os
import sys

import numpy as np

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "..", "ref"))
import st  # noqa: E402

w = st.load(sys.argv[1])
del w["conv1.bias"]
w["conv2.lin.weight"] = np.ascontiguousarray(w["conv2.lin.weight"].T)
w["conv2.bias"] = w["conv2.bias"].astype(np.float64)
w["conv3.bias"] = np.zeros(3, dtype=np.float32)
st.save(sys.argv[2], w)
