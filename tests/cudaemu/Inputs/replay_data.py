#!/usr/bin/env python3
"""Inputs for replay.test: two graphs of different sizes (a hub holding a
tenth of the edges, empty rows), their features, two sets of weights.

usage: replay_data.py DIR
"""
import os
import sys

import numpy as np

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "ref"))
import st  # noqa: E402


def graph(r, n, e):
    src = r.integers(0, n, e)
    dst = r.integers(0, n - n // 4, e)    # the last quarter: no in-edges
    dst[: e // 10] = 3                    # a hub
    return np.stack([src, dst]).astype(np.int64)


def weights(r):
    return {"conv1.lin.weight": r.normal(0, 0.4, (8, 16)).astype(np.float32),
            "conv1.bias": r.normal(0, 0.1, 8).astype(np.float32),
            "conv2.lin.weight": r.normal(0, 0.4, (7, 8)).astype(np.float32),
            "conv2.bias": r.normal(0, 0.1, 7).astype(np.float32)}


def main():
    d = sys.argv[1]
    r = np.random.default_rng(15)
    for name, n, e in (("a", 400, 3000), ("b", 150, 900)):
        np.save(os.path.join(d, "ei_%s.npy" % name), graph(r, n, e))
        np.save(os.path.join(d, "x_%s.npy" % name), r.uniform(-1, 1, (n, 16)).astype(np.float32))
    st.save(os.path.join(d, "w1.safetensors"), weights(r))
    st.save(os.path.join(d, "w2.safetensors"), weights(r))


if __name__ == "__main__":
    main()
