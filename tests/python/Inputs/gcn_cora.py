"""
The Python package's runtime half on Cora: compile the GCN example for
the cpu target (or, with --emulate, the cuda target on the emulated
device), load PyG's trained weights, bind, call; check the outputs
against a NumPy GCN written here (PyG's GCNConv: self loops, symmetric
normalization, aggregation by target), the test accuracy, and that a
wrong dtype, shape, a missing or unknown input, bad weights and a bad
graph raise GnnccError with the runtime's message and leave the model
giving the same outputs.  With --emulate, device arrays in give the
host call's outputs in device memory.  With --torch, torch tensors in give the NumPy
call's outputs bit for bit, as torch tensors.
"""
import argparse
import os

import numpy as np

import gnncc

ap = argparse.ArgumentParser()
ap.add_argument("model")
ap.add_argument("data")
ap.add_argument("weights")
ap.add_argument("--emulate", action="store_true")
ap.add_argument("--torch", action="store_true")
a = ap.parse_args()

x = np.load(os.path.join(a.data, "x.npy")).astype(np.float32)
x = x - x.min()                                        # PyG's NormalizeFeatures
x = (x / np.maximum(x.sum(1, keepdims=True), 1)).astype(np.float32)
ei = np.load(os.path.join(a.data, "edge_index.npy"))
y = np.load(os.path.join(a.data, "y.npy"))
test = np.load(os.path.join(a.data, "test_mask.npy"))
n = x.shape[0]


def reference(w):
    """PyG's two-layer GCN in float64"""
    loops = np.arange(n)
    src, dst = np.concatenate([ei[0], loops]), np.concatenate([ei[1], loops])
    deg = np.bincount(dst, minlength=n).astype(np.float64)
    norm = deg[src] ** -0.5 * deg[dst] ** -0.5

    def conv(h, name):
        h = h @ w[name + ".lin.weight"].astype(np.float64).T
        out = np.zeros((n, h.shape[1]))
        np.add.at(out, dst, norm[:, None] * h[src])
        return out + w[name + ".bias"]
    h = np.maximum(conv(x.astype(np.float64), "conv1"), 0)
    z = conv(h, "conv2")
    z = z - z.max(1, keepdims=True)
    return z - np.log(np.exp(z).sum(1, keepdims=True))


def read_safetensors(path):
    import json
    import struct
    with open(path, "rb") as f:
        blob = f.read()
    k = struct.unpack("<Q", blob[:8])[0]
    hdr = json.loads(blob[8:8 + k])
    out = {}
    for name, t in hdr.items():
        if name != "__metadata__":
            b, e = t["data_offsets"]
            out[name] = np.frombuffer(blob[8 + k + b:8 + k + e], dtype="<f4").reshape(t["shape"])
    return out


if a.emulate:
    m = gnncc.compile(a.model, target="cuda", emulate="run")
else:
    m = gnncc.compile(a.model, target="cpu")
print("model", m.name, m.target, "inputs", m.inputs, "params", len(m.params))
m.load_weights(a.weights)
m.bind(ei, num_nodes=n)
out = m(x=x)
ref = reference(read_safetensors(a.weights))
err = np.abs(out - ref).max() / np.abs(ref).max()
print("output", out.dtype, list(out.shape), "max relative error to NumPy's GCN %s"
      % ("below 1e-5" if err < 1e-5 else "%.3g" % err))
print("test accuracy %.1f%%" % (100 * (out.argmax(1)[test] == y[test]).mean()))


def fails(what, f):
    try:
        f()
    except gnncc.GnnccError as e:
        print("%s: %s: %s" % (what, e.status, e))
    else:
        print("%s: no error" % what)
    again = m(x=x)
    if not np.array_equal(again, out):
        print("%s: the outputs changed after the error" % what)


fails("f64", lambda: m(x=x.astype(np.float64)))
fails("rows", lambda: m(x=x[:100]))
fails("rank", lambda: m(x=x[None]))
fails("missing", lambda: m())
fails("unknown", lambda: m(x=x, h=x))
fails("weights", lambda: m.load_weights({"conv1.bias": np.zeros(3, np.float32)}))
fails("graph", lambda: m.bind(np.array([[0, 1], [1, n]], dtype=np.int64), num_nodes=n))

# a state dict gives the file's outputs; the last good graph stays bound
m.load_weights(read_safetensors(a.weights))
print("state dict:", "same outputs" if np.array_equal(m(x=x), out) else "different outputs")
# a cached object: the second compile links nothing, and gives the same
m2 = gnncc.compile(a.model, target="cuda", emulate="run") if a.emulate else gnncc.compile(a.model, target="cpu")
m2.load_weights(a.weights)
m2.bind(ei.astype(np.int32), num_nodes=n)
print("second model:", "same outputs" if np.array_equal(m2(x=x), out) else "different outputs")

if a.emulate:
    # device memory in and out (__cuda_array_interface__), no host copies:
    # the host call's bits; a device array of the wrong dtype raises
    dx = m.to_device(x)
    o = m(x=dx)
    print("device:", type(o).__name__, o.dtype, list(o.shape),
          "identical" if np.array_equal(o.numpy(), out) else "different")
    fails("device f64", lambda: m(x=m.to_device(x.astype(np.float64))))
    fails("device to cpu", lambda: gnncc.compile(a.model, target="cpu")(x=dx))

if a.torch:
    import torch
    t = m(x=torch.from_numpy(x))
    print("torch:", type(t).__name__, t.dtype, "identical" if np.array_equal(t.numpy(), out) else "different")
    m.load_weights({k: torch.from_numpy(v.copy()) for k, v in read_safetensors(a.weights).items()})
    m.bind(torch.from_numpy(ei), num_nodes=n)
    print("torch state dict and graph:", "identical" if np.array_equal(m(x=torch.from_numpy(x)).numpy(), out)
          else "different")
