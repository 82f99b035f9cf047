#!/usr/bin/env python3
"""The PyG side of pyg-load.test: pyg_load.py --torch on each trained
model of WORK (exit 77 without torch prints "pyg: skipped, no torch").
usage: pygall.py PYG_LOAD.py WORK EDGE_INDEX.npy"""
import contextlib
import importlib.util
import io
import os
import sys

tool, work, ei = sys.argv[1:4]
# one process for the four (torch and PyG imported once): pyg_load.py's
# own --then runs
spec = importlib.util.spec_from_file_location("pyg_load", tool)
pyg_load = importlib.util.module_from_spec(spec)
sys.path.insert(0, os.path.dirname(os.path.abspath(tool)))
spec.loader.exec_module(pyg_load)
args = []
for m in ("gcn", "gat", "sage", "gin"):
    args += ["--then"] if args else []
    args += ["--model", m, "--torch", "--weights", os.path.join(work, m + ".safetensors"),
             "--graph", ei, "--x", os.path.join(work, "x.npy"), "--expect", os.path.join(work, m + ".npy")]
out = io.StringIO()
with contextlib.redirect_stdout(out):
    rc = pyg_load.main_all(args)
if rc == 77:
    print("pyg: skipped, no torch")
    sys.exit(0)
if rc != 0:
    print(out.getvalue())
    print("pyg: FAILED")
    sys.exit(1)
print("pyg: gcn gat sage gin ok")
