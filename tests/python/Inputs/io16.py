"""
16-bit inputs and outputs from Python (docs/python.md): a model taking
bfloat16 and half features (input16.gnn) and one returning bfloat16 and
half outputs (output16.gnn), compiled for the cpu target, called with
NumPy float32 arrays (rounded to the inputs' formats as gnnrun rounds
them) and with torch's bfloat16 and float16 tensors; the outputs saved
as float32 for the test to compare with gnnrun's.
"""
import argparse
import os

import numpy as np
import torch

import gnncc

ap = argparse.ArgumentParser()
ap.add_argument("dir")
ap.add_argument("models")
a = ap.parse_args()
x = np.load(os.path.join(a.dir, "x.npy"))
y = np.load(os.path.join(a.dir, "y.npy"))
ei = np.load(os.path.join(a.dir, "ei.npy"))

m = gnncc.compile(os.path.join(a.models, "input16.gnn"), target="cpu")
m.load_weights(os.path.join(a.dir, "w.safetensors"))
m.bind(ei, num_nodes=x.shape[0])
o0, o1 = m(x=x, y=y)
np.save(os.path.join(a.dir, "p0.npy"), o0)
np.save(os.path.join(a.dir, "p1.npy"), o1)
t0, t1 = m(x=torch.from_numpy(x).to(torch.bfloat16), y=torch.from_numpy(y).to(torch.float16))
print("torch inputs:", "identical" if np.array_equal(t0.numpy(), o0) and np.array_equal(t1.numpy(), o1) else "differ")

m = gnncc.compile(os.path.join(a.models, "output16.gnn"), target="cpu")
m.load_weights(os.path.join(a.dir, "w2.safetensors"))
m.bind(ei, num_nodes=x.shape[0])
b0, b1 = m(x=x)
print("numpy outputs:", b0.dtype, b1.dtype)
np.save(os.path.join(a.dir, "q0.npy"), b0)
np.save(os.path.join(a.dir, "q1.npy"), b1.astype(np.float32))
c0, c1 = m(x=torch.from_numpy(x).to(torch.bfloat16))
print("torch outputs:", c0.dtype, c1.dtype, "identical" if np.array_equal(c0.float().numpy(), b0) and
      np.array_equal(c1.float().numpy(), b1.astype(np.float32)) else "differ")
try:
    m(x=np.zeros((x.shape[0], 39), np.float32))
except gnncc.GnnccError as e:
    print("wrong shape:", str(e).splitlines()[0])
