#!/usr/bin/env python3
"""longnames.py DIR: write a model whose names are as long as the language
allows (identifiers of 1000 characters; the limit is 1024) and whose
composed names -- the state_dict paths of nested layers' parameters, the
IR's value names -- run to about 8000 characters, with the files to run
it, into DIR:

  m.gnn          the model: long model, input, size symbol, layer
                 definition, layer instance (also a layer array),
                 nested layer, param and variable names, six layers
                 deep; it imports
  lib.gnn        (through a path of nested directories about 3500
                 characters long) the layers it uses
  bad.gnn        an import of a path longer than the system allows
  err.gnn        a shape mismatch whose message names a layer instance, a
                 layer and a size symbol of 600 characters each (within
                 the 4096 bytes at which diagnostics are cut)
  ei.npy, x.npy  a 5-node graph and its features
  x7.npy         features of 7 nodes, which do not fit the graph
  input.arg      gnnrun's --input option for x.npy (input7.arg: x7.npy),
                 for xargs -a: the input's name is too long to write in a
                 test
  w.safetensors  the model's weights under their long state_dict names

Names differ only in their last characters, far past any fixed buffer a
compiler might have had, so a truncation would merge them."""
import json
import os
import struct
import sys

import numpy as np

out = sys.argv[1]
L = 1000
DEPTH = 6


def name(c, k=0):
    return c * (L - 1) + str(k)


inner, par, inst, var, sym, mod, inp = (name(c) for c in "IPCVSMX")

# about 3500 characters of directories, each within NAME_MAX
sub = "/".join(["d" * 200] * 17)
os.makedirs(os.path.join(out, sub), exist_ok=True)
lib = f"""layer {name("L", 0)}(k: int) {{
  layer {inner} = Linear(k, k)
  param {par}: f32[k]
  fn forward(g: graph[{sym}, E], x: f32[{sym}, k]) -> f32[{sym}, k] {{
    {var} = {inner}(x)
    return {var} + {par}
  }}
}}
"""
# each level wraps the one below under a long instance name
for d in range(1, DEPTH):
    lib += f"""layer {name("L", d)}(k: int) {{
  layer {name("W", d)} = {name("L", d - 1)}(k)
  fn forward(g: graph[{sym}, E], x: f32[{sym}, k]) -> f32[{sym}, k] {{
    {var} = {name("W", d)}(g, x)
    return {var}
  }}
}}
"""
with open(os.path.join(out, sub, "lib.gnn"), "w") as f:
    f.write(lib)

top = name("L", DEPTH - 1)
with open(os.path.join(out, "m.gnn"), "w") as f:
    f.write(f"""import "{sub}/lib.gnn"
model {mod}(g: graph[{sym}, E], {inp}: f32[{sym}, 4]) -> f32[{sym}, 4] {{
  layer {inst} = {top}(4)
  for i in range(2) {{
    layer {name("A")}[i] = {top}(4)
  }}
  {var} = {inst}(g, {inp})
  {name("V", 1)} = {name("A")}[1](g, {var})
  return relu({name("V", 1)})
}}
""")

with open(os.path.join(out, "bad.gnn"), "w") as f:
    f.write(f'import "{"./" * 3000}lib.gnn"\n')

e = {c: c * 599 + "0" for c in "LCS"}
with open(os.path.join(out, "err.gnn"), "w") as f:
    f.write(f"""layer {e["L"]}(k: int) {{
  fn forward(x: f32[{e["S"]}, k]) -> f32[{e["S"]}, k] {{ return x }}
}}
model M(g: graph[{e["S"]}, E], x: f32[{e["S"]}, 5]) -> f32[{e["S"]}, 4] {{
  layer {e["C"]} = {e["L"]}(4)
  return {e["C"]}(x)
}}
""")

np.save(os.path.join(out, "ei.npy"), np.array([[0, 1, 2, 3, 4], [1, 2, 3, 4, 0]], np.int64))
np.save(os.path.join(out, "x.npy"), np.arange(20, dtype=np.float32).reshape(5, 4) / 10)

# conv paths: instance, then each wrapper's instance name, top down
mid = ".".join(name("W", d) for d in range(DEPTH - 1, 0, -1))
tensors = {}
for p in [inst, name("A") + ".0", name("A") + ".1"]:
    tensors[f"{p}.{mid}.{inner}.weight"] = np.eye(4, dtype=np.float32)
    tensors[f"{p}.{mid}.{inner}.bias"] = np.full(4, 0.5, np.float32)
    tensors[f"{p}.{mid}.{par}"] = np.ones(4, np.float32)
hdr, data = {}, b""
for k, v in tensors.items():
    hdr[k] = {"dtype": "F32", "shape": list(v.shape), "data_offsets": [len(data), len(data) + v.nbytes]}
    data += v.tobytes()
h = json.dumps(hdr).encode()
with open(os.path.join(out, "w.safetensors"), "wb") as f:
    f.write(struct.pack("<Q", len(h)) + h + data)
np.save(os.path.join(out, "x7.npy"), np.zeros((7, 4), np.float32))
for arg, x in [("input.arg", "x.npy"), ("input7.arg", "x7.npy")]:
    with open(os.path.join(out, arg), "w") as f:
        f.write(f"--input {inp}={os.path.join(out, x)}\n")
