#!/usr/bin/env python3
"""badfiles.py WEIGHTS OUTDIR: broken inputs for the 7-node GCN graph of
tests/ref/small_graph.py (which must already be in OUTDIR/g), one file
per way a user's export can go wrong:

  .npy: truncated data (x-trunc), a header whose shape claims more data
  than the file holds (x-lie), a header length past the end of the file
  (x-hlen), wrong dtype (x-f16) and shape (x-wide: 100 features, x-few:
  3 nodes), NaN and infinity (x-nan, x-inf), and an edge_index that is
  truncated (ei-trunc), of the wrong shape or dtype (ei-3xE, ei-f32,
  ei-1d), or out of range (ei-big, ei-neg);
  safetensors: truncated (w-trunc), a header length past the end
  (w-hlen), data_offsets past the buffer (w-lie), a repeated tensor name
  (w-dup), an infinity in a weight (w-nan), a weight missing (w-missing),
  one the model does not have (w-extra), one transposed (w-shape) and one
  of an integer dtype (w-dtype)."""
import json
import os
import struct
import sys

import numpy as np

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "..", "ref"))
import st  # noqa: E402

wpath, d = sys.argv[1], sys.argv[2]
x = np.load(os.path.join(d, "g", "x.npy")).astype(np.float32)
ei = np.load(os.path.join(d, "g", "edge_index.npy"))


def path(name):
    return os.path.join(d, name)


def raw(name, data):
    with open(path(name), "wb") as f:
        f.write(data)


np.save(path("x.npy"), x)
good = open(path("x.npy"), "rb").read()
raw("x-trunc.npy", good[:-100])
# the header says 8 nodes, the data holds 7
hdr_end = good.index(b"\n") + 1
lie = good[:hdr_end].replace(b"(7, 1433)", b"(8, 1433)")
raw("x-lie.npy", lie + good[hdr_end:])
# a version 1.0 header length of 0xffff: past the end of a 200-byte file
raw("x-hlen.npy", b"\x93NUMPY\x01\x00\xff\xff" + good[10:200])
np.save(path("x-f16.npy"), x.astype(np.float16))
np.save(path("x-wide.npy"), x[:, :100])
np.save(path("x-few.npy"), x[:3])
xn = x.copy()
xn[3, 17] = np.nan
xn[5, 2] = np.nan
np.save(path("x-nan.npy"), xn)
xi = x.copy()
xi[6, 1432] = -np.inf
np.save(path("x-inf.npy"), xi)

np.save(path("ei.npy"), ei)
raw("ei-trunc.npy", open(path("ei.npy"), "rb").read()[:-8])
np.save(path("ei-3xE.npy"), np.zeros((3, 4), np.int64))
np.save(path("ei-f32.npy"), ei.astype(np.float32))
np.save(path("ei-1d.npy"), ei.reshape(-1))
big = ei.copy()
big[1, 4] = 7
np.save(path("ei-big.npy"), big)
neg = ei.copy()
neg[0, 2] = -1
np.save(path("ei-neg.npy"), neg)

w = st.load(wpath)
st.save(path("w.safetensors"), w)
good = open(path("w.safetensors"), "rb").read()
raw("w-trunc.safetensors", good[:-64])
raw("w-hlen.safetensors", struct.pack("<Q", len(good)) + good[8:])
n = struct.unpack("<Q", good[:8])[0]
h = json.loads(good[8:8 + n])
h["conv2.bias"]["data_offsets"][1] += 4   # conv2.bias claims 8 floats
hb = json.dumps(h).encode()
hb += b" " * (-len(hb) % 8)
raw("w-lie.safetensors", struct.pack("<Q", len(hb)) + hb + good[8 + n:])
# json cannot write a key twice: splice a second conv1.bias entry in by hand
entry = '"conv1.bias": ' + json.dumps(h["conv1.bias"])
hd = good[8:8 + n].decode().rstrip()
assert hd.endswith("}")
hd = hd[:-1] + ", " + entry + "}"
hb = hd.encode() + b" " * (-len(hd) % 8)
raw("w-dup.safetensors", struct.pack("<Q", len(hb)) + hb + good[8 + n:])
wn = dict(w)
wn["conv1.bias"] = wn["conv1.bias"].copy()
wn["conv1.bias"][9] = np.inf
st.save(path("w-nan.safetensors"), wn)
for name, edit in (("w-missing", lambda t: t.pop("conv1.bias")),
                   ("w-extra", lambda t: t.__setitem__("conv3.bias", np.zeros(3, np.float32))),
                   ("w-shape", lambda t: t.__setitem__(
                       "conv2.lin.weight", np.ascontiguousarray(t["conv2.lin.weight"].T))),
                   ("w-dtype", lambda t: t.__setitem__("conv2.bias", t["conv2.bias"].astype(np.int32)))):
    t = dict(w)
    edit(t)
    st.save(path(name + ".safetensors"), t)
