#!/usr/bin/env python3
"""Test-mask accuracy of a model output.

usage: accuracy.py OUT.npy --data DIR [--mask test|val|train]

OUT.npy holds [N, C] scores (logits or log-probabilities); the prediction is
argmax over the last axis.  Reads DIR/y.npy and DIR/{mask}_mask.npy and
prints e.g. "test accuracy: 82.0%" (one decimal).
"""
import argparse
import os
import sys

import numpy as np


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("out")
    ap.add_argument("--data", required=True)
    ap.add_argument("--mask", choices=["test", "val", "train"], default="test")
    a = ap.parse_args(argv)
    out = np.load(a.out)
    y = np.load(os.path.join(a.data, "y.npy"))
    m = np.load(os.path.join(a.data, f"{a.mask}_mask.npy")).astype(bool)
    if out.ndim != 2 or out.shape[0] != y.shape[0]:
        ap.error(f"output shape {list(out.shape)} does not match {y.shape[0]} nodes")
    pred = out.argmax(axis=-1)
    acc = 100.0 * float(np.mean(pred[m] == y[m]))
    print(f"{a.mask} accuracy: {acc:.1f}%")
    return 0


if __name__ == "__main__":
    sys.exit(main())
