#!/usr/bin/env python3
"""Makes the loader fuzzers' seed corpus (tests/fuzz/seeds/) from real files.

    make.py DATASETS [OUTDIR]

DATASETS is the folder that holds cora/edge_index.npy, cora/x.npy, ...
(the project's shared data sets); OUTDIR defaults to this script's folder.
Every seed is a slice of a real file, kept small (a few KB) so that it fits
the fuzzers' -max_len and the repository: the first edges of Cora's
edge_index (int64 as PyG saves it, int32, big-endian, .npy version 2.0),
slices of its features, labels and masks, and the weights of examples/gcn
and examples/gin with the 1433-wide input dimension cut to 8, written as
the safetensors package writes them (the second with __metadata__ and
tensors of other dtypes).
"""
import json
import os
import struct
import sys

import numpy as np

here = os.path.dirname(os.path.abspath(__file__))
root = os.path.dirname(os.path.dirname(os.path.dirname(here)))
data = sys.argv[1]
out = sys.argv[2] if len(sys.argv) > 2 else here
cora = os.path.join(data, "cora")


def save(name, a):
    np.save(os.path.join(out, name), a, allow_pickle=False)


def save_v2(name, a):
    with open(os.path.join(out, name), "wb") as f:
        np.lib.format.write_array(f, a, version=(2, 0), allow_pickle=False)


ei = np.load(os.path.join(cora, "edge_index.npy"))
save("cora-edges.npy", np.ascontiguousarray(ei[:, :64]))
save("cora-edges-i32.npy", np.ascontiguousarray(ei[:, 64:128].astype("<i4")))
save("cora-edges-be.npy", np.ascontiguousarray(ei[:, 128:160].astype(">i8")))
save_v2("cora-edges-v2.npy", np.ascontiguousarray(ei[:, 160:176]))
save("cora-edges-empty.npy", np.zeros((2, 0), dtype="<i8"))
x = np.load(os.path.join(cora, "x.npy"), mmap_mode="r")
save("cora-x.npy", np.ascontiguousarray(x[:4, :16]))
save("cora-x-f64-be.npy", np.ascontiguousarray(x[4:6, :8].astype(">f8")))
save("cora-x-f16.npy", np.ascontiguousarray(x[6:8, :8].astype("<f2")))
save("cora-y.npy", np.load(os.path.join(cora, "y.npy"))[:32])
save("cora-mask.npy", np.load(os.path.join(cora, "train_mask.npy"))[:64])
save("scalar.npy", np.array(3.5, dtype="<f4"))
save("rank3.npy", np.arange(24, dtype="<u2").reshape(2, 3, 4))

dtypes = {np.dtype("<f4"): "F32", np.dtype("<f8"): "F64", np.dtype("<i8"): "I64",
          np.dtype("<i4"): "I32", np.dtype("bool"): "BOOL", np.dtype("<f2"): "F16",
          np.dtype("u1"): "U8"}


def safetensors(name, tensors, metadata=None):
    """the reference's layout: data by descending alignment, then name"""
    order = sorted(tensors, key=lambda k: (-tensors[k].dtype.itemsize, k))
    head, at, blobs = {}, 0, []
    if metadata:
        head["__metadata__"] = metadata
    for k in order:
        b = np.ascontiguousarray(tensors[k]).tobytes()
        head[k] = {"dtype": dtypes[tensors[k].dtype], "shape": list(tensors[k].shape),
                   "data_offsets": [at, at + len(b)]}
        at += len(b)
        blobs.append(b)
    h = json.dumps(head, separators=(",", ":")).encode()
    h += b" " * (-len(h) % 8)
    with open(os.path.join(out, name), "wb") as f:
        f.write(struct.pack("<Q", len(h)) + h + b"".join(blobs))


def weights(path):
    with open(path, "rb") as f:
        b = f.read()
    n = struct.unpack("<Q", b[:8])[0]
    ts = {}
    for k, v in json.loads(b[8:8 + n]).items():
        if k == "__metadata__":
            continue
        dt = {v2: k2 for k2, v2 in dtypes.items()}[v["dtype"]]
        s, e = v["data_offsets"]
        ts[k] = np.frombuffer(b[8 + n + s:8 + n + e], dtype=dt).reshape(v["shape"])
    return ts


def cut(ts):
    """the input dimension 1433 cut to 8"""
    return {k: v[..., :8] if v.shape and v.shape[-1] == 1433 else v for k, v in ts.items()}


gcn = cut(weights(os.path.join(root, "examples", "gcn", "gcn_cora.safetensors")))
safetensors("gcn-small.safetensors", gcn)
gin = cut(weights(os.path.join(root, "examples", "gin", "gin.safetensors")))
gin = {k: v for k, v in gin.items() if k.startswith("conv1.")}
gin["conv1.eps"] = gin["conv1.eps"].astype("<f8")
gin["conv1.nn.lins.0.bias"] = gin["conv1.nn.lins.0.bias"].astype("<f2")
gin["mask"] = np.array([True, False, True])
gin["ids"] = np.arange(5, dtype="<i4")
gin["bytes"] = np.arange(3, dtype="u1")
safetensors("gin-small.safetensors", gin, {"format": "pt", "source": "examples/gin"})
safetensors("empty.safetensors", {})
