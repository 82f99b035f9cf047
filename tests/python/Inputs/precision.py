"""
gnncc.compile(..., precision=): the GCN example compiled for the cpu
target with 16-bit activations, run on Cora (x normalized as PyG's
NormalizeFeatures; the outputs saved for the test to compare with the
interpreter's 16-bit reference), and the errors: a precision the package
does not know, and the cuda target, which gnncc refuses.
"""
import argparse
import os

import numpy as np

import gnncc

ap = argparse.ArgumentParser()
ap.add_argument("model")
ap.add_argument("data")
ap.add_argument("weights")
ap.add_argument("out")
a = ap.parse_args()

x = np.load(os.path.join(a.data, "x.npy")).astype(np.float32)
x = x - x.min()
x = (x / np.maximum(x.sum(1, keepdims=True), 1)).astype(np.float32)
ei = np.load(os.path.join(a.data, "edge_index.npy"))
for p in ("bf16", "fp16"):
    m = gnncc.compile(a.model, target="cpu", precision=p)
    m.load_weights(a.weights)
    m.bind(ei, num_nodes=x.shape[0])
    np.save(os.path.join(a.out, p + ".npy"), m(x=x))
    print(p, "ran")
for what, kw in (("fp8", {"precision": "fp8"}), ("cuda", {"target": "cuda", "precision": "bf16"})):
    try:
        gnncc.compile(a.model, **kw)
    except gnncc.GnnccError as e:
        print("%s: %s" % (what, str(e).strip().splitlines()[0]))
    else:
        print("%s: no error" % what)
