#!/usr/bin/env python3
"""The PyG side of pyg-load.test: pyg_load.py --torch on each trained
model of WORK (exit 77 without torch prints "pyg: skipped, no torch").
usage: pygall.py PYG_LOAD.py WORK EDGE_INDEX.npy"""
import os
import subprocess
import sys

tool, work, ei = sys.argv[1:4]
for m in ("gcn", "gat", "sage", "gin"):
    r = subprocess.run([sys.executable, tool, "--model", m, "--torch", "--weights", os.path.join(work, m + ".safetensors"),
                        "--graph", ei, "--x", os.path.join(work, "x.npy"), "--expect", os.path.join(work, m + ".npy")],
                       capture_output=True, text=True)
    if r.returncode == 77:
        print("pyg: skipped, no torch")
        sys.exit(0)
    if r.returncode != 0:
        print(r.stdout + r.stderr)
        print(f"pyg: {m} FAILED")
        sys.exit(1)
print("pyg: gcn gat sage gin ok")
