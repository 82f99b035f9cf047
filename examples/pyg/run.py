"""
run.py: the whole path from Python: export the PyG model (model.py) to
gcn.gnn and gcn.safetensors, compile it with gnncc, load the weights,
bind Cora's graph, call it on NumPy arrays, and compare with PyG.

    python3 run.py [DATA_DIR] [--target cpu|cuda|cuda-emu]
"""
import argparse
import os

import numpy as np
import torch

import gnncc
import model

ap = argparse.ArgumentParser()
ap.add_argument("data", nargs="?", default=os.path.join(model.HERE, "..", "..", "data", "cora"))
ap.add_argument("--target", default="cpu", choices=["cpu", "cuda", "cuda-emu"])
a = ap.parse_args()

# Cora, with PyG's NormalizeFeatures (each row divided by its sum)
x = np.load(os.path.join(a.data, "x.npy")).astype(np.float32)
x = (x / np.maximum(x.sum(1, keepdims=True), 1)).astype(np.float32)
edge_index = np.load(os.path.join(a.data, "edge_index.npy"))
y = np.load(os.path.join(a.data, "y.npy"))
test = np.load(os.path.join(a.data, "test_mask.npy"))

# 1. export: the model in gnncc's language, its weights under PyG's names
pyg = model.trained()
gnncc.export(pyg, out="gcn.gnn", weights="gcn.safetensors")

# 2. compile (cached by content) and load
if a.target == "cuda-emu":
    m = gnncc.compile("gcn.gnn", target="cuda", emulate="run")
else:
    m = gnncc.compile("gcn.gnn", target=a.target)
m.load_weights("gcn.safetensors")
m.bind(edge_index, num_nodes=x.shape[0])

# 3. call it, and check it against PyG's own forward
out = m(x=x)
with torch.no_grad():
    ref = pyg(torch.from_numpy(x), torch.from_numpy(edge_index)).numpy()
err = np.abs(out - ref).max() / np.abs(ref).max()
print("%s (%s target): %d nodes, outputs %s" % (m.name, m.target, x.shape[0], list(out.shape)))
print("largest difference to PyG: %s of the largest output" % ("below 1e-5" if err < 1e-5 else "%.3g" % err))
print("test accuracy: %.1f%%" % (100 * (out.argmax(1)[test] == y[test]).mean()))
