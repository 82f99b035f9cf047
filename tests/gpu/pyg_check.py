#!/usr/bin/env python3
"""Run PyTorch Geometric itself on the weights a gnncc model was checked with.

usage: pyg_check.py MANIFEST.json [--device cuda|cpu]

MANIFEST: {"edge_index": FILE, "batch": FILE or null, "cases": [{"id": ...,
"kind": ..., "weights": W.safetensors, "x": X.npy, "out": PREFIX}, ...]}.
For each case the module of that kind (bench/pyg_models.py) is built from
the safetensors file's shapes, its weights loaded with strict=True, and run
in eval mode on x as float32 values (what the compiled model reads):
in float64, PyG's own layers as the reference without float32's rounding,
written to PREFIX.npy (PREFIX.K.npy for each of several outputs); and in
float32, to measure how far PyG itself lands from that reference in the
precision gnncc computes in.  One JSON line per case says ok or why not,
with "noise": the float32 run's largest error over the largest magnitude
(as tests/ref/compare.py's "scaled"), the largest over the outputs.
Sums over hubs with hundreds of thousands of in-edges (the synthetic
graphs' power law) lose far more than 1e-5 in float32 in any order, in
PyG as in gnncc; check.py widens its tolerance to a multiple of this noise
where it exceeds 1e-5.

Design: one process per graph runs all of its cases, so torch and the
graph load once; a failing case is reported and the others still run.
"""
import argparse
import json
import os
import sys

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
sys.path.insert(0, os.path.join(ROOT, "bench"))
sys.path.insert(0, os.path.join(ROOT, "tests", "ref"))   # st.py


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("manifest")
    ap.add_argument("--device", default=None, help="default: cuda when available")
    a = ap.parse_args(argv)
    with open(a.manifest) as f:
        man = json.load(f)

    import torch

    import pyg_models
    import st

    dev = torch.device(a.device or ("cuda" if torch.cuda.is_available() else "cpu"))
    ei = torch.from_numpy(np.load(man["edge_index"]).astype(np.int64)).to(dev)
    batch = None
    if man.get("batch"):
        batch = torch.from_numpy(np.load(man["batch"]).astype(np.int64)).to(dev)
    fails = 0
    for case in man["cases"]:
        rec = {"id": case["id"], "device": str(dev)}
        try:
            sd = st.load(case["weights"])
            x32 = np.load(case["x"]).astype(np.float32)
            res = {}
            for dtype in (torch.float64, torch.float32):
                model = pyg_models.from_state_dict(case["kind"], sd).to(dtype).to(dev).eval()
                x = torch.from_numpy(x32).to(dtype).to(dev)
                with torch.inference_mode():
                    out = model(x, ei, batch) if case["kind"] == "pool" else model(x, ei)
                out = out if isinstance(out, tuple) else (out,)
                res[dtype] = [o.detach().cpu().numpy().astype(np.float64) for o in out]
            noise = 0.0
            for k, (o64, o32) in enumerate(zip(res[torch.float64], res[torch.float32])):
                path = case["out"] + (f".{k}.npy" if len(res[torch.float64]) > 1 else ".npy")
                np.save(path, o64)
                scale = float(np.max(np.abs(o64))) if o64.size else 0.0
                if scale > 0:
                    noise = max(noise, float(np.max(np.abs(o32 - o64))) / scale)
            rec.update(status="ok", outputs=len(res[torch.float64]), noise=noise)
        except Exception as e:  # noqa: BLE001 -- reported per case, the others run
            fails += 1
            rec.update(status="error", message=f"{type(e).__name__}: {e}"[:500])
        print(json.dumps(rec), flush=True)
    return 1 if fails else 0


if __name__ == "__main__":
    sys.exit(main())
