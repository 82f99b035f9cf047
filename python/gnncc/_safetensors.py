"""
safetensors files from Python, without the safetensors package: a name ->
array map written as the format says (8-byte little-endian header length,
the JSON header, the tensors' bytes back to back), for export's weights
and load_weights' state dicts.  Arrays are NumPy arrays or torch tensors
(copied to the host).
"""
import json
import os
import struct

import numpy as np

_DT = {"float32": "F32", "float64": "F64", "float16": "F16", "int64": "I64", "int32": "I32",
       "int16": "I16", "int8": "I8", "uint8": "U8", "bool": "BOOL"}


def host(v):
    """v as a C-ordered NumPy array (a torch tensor is detached and copied to the host)"""
    if hasattr(v, "detach"):
        v = v.detach().cpu().numpy()
    return np.asarray(v, order="C")   # not ascontiguousarray, which makes a scalar [1]


def save(path, tensors):
    """Write tensors (name -> array) to path, atomically."""
    # the reference's order, which keeps every tensor aligned to its elements:
    # descending alignment, then name
    arrays = {k: host(v) for k, v in tensors.items()}
    arrays = dict(sorted(arrays.items(), key=lambda kv: (-kv[1].dtype.itemsize, kv[0])))
    header, off = {}, 0
    for k, a in arrays.items():
        if a.dtype.name not in _DT:
            raise ValueError("%s: dtype %s cannot be saved in safetensors" % (k, a.dtype))
        header[k] = {"dtype": _DT[a.dtype.name], "shape": list(a.shape), "data_offsets": [off, off + a.nbytes]}
        off += a.nbytes
    h = json.dumps(header, separators=(",", ":")).encode()
    h += b" " * (-len(h) % 8)
    tmp = "%s.tmp%d" % (path, os.getpid())
    with open(tmp, "wb") as f:
        f.write(struct.pack("<Q", len(h)) + h)
        for a in arrays.values():
            f.write(a.astype(a.dtype.newbyteorder("<"), copy=False).tobytes())
    os.replace(tmp, path)
