"""
gnncc.compile(..., precision=): the GCN example compiled for the cpu
target and for the emulated device with 16-bit activations, run on Cora
(x normalized as PyG's NormalizeFeatures; the outputs saved for the test
to compare with the interpreter's 16-bit reference), and the error for a
precision the package does not know.
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
for p, kw in (("bf16", {}), ("fp16", {}), ("bf16-emu", {"target": "cuda", "emulate": "run"})):
    m = gnncc.compile(a.model, precision=p[:4], **({"target": "cpu"} | kw))
    m.load_weights(a.weights)
    m.bind(ei, num_nodes=x.shape[0])
    np.save(os.path.join(a.out, p + ".npy"), m(x=x))
    print(p, "ran")
for what, kw in (("fp8", {"precision": "fp8"}),):
    try:
        gnncc.compile(a.model, **kw)
    except gnncc.GnnccError as e:
        print("%s: %s" % (what, str(e).strip().splitlines()[0]))
    else:
        print("%s: no error" % what)
