#!/usr/bin/env python3
"""randweights.py MODEL.ir NODES OUTDIR: seeded random weights and features.

Reads the -O0 IR of a model (gnncc -O0 --dump-ir) and writes
  OUTDIR/weights.safetensors  every param, by its name: float32 uniform in
                              [-0.5, 0.5] (a batch norm's running_var in
                              [0.5, 1.5]), integers 0;
  OUTDIR/x.npy                float32 uniform in [0, 1], [NODES, F] for the
                              model's input %x: f32[N, F].
Param dims must be constants.  For models that have no trained weights,
so that -O2 and -O0 can be compared on a real graph.
"""
import os
import re
import sys

import numpy as np

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "ref"))
import st  # noqa: E402

DTYPES = {"f32": np.float32, "f64": np.float64, "i64": np.int64, "i32": np.int32}


def main():
    path, nodes, out = sys.argv[1], int(sys.argv[2]), sys.argv[3]
    text = open(path).read()
    rng = np.random.RandomState(0)
    tensors = {}
    for dt, dims, name in re.findall(r"=(\w+)\[([^\]]*)\] param \{name = \"([^\"]+)\"", text):
        shape = [int(d) for d in dims.split(",") if d.strip()]
        if dt.startswith("f"):
            lo, hi = (0.5, 1.5) if name.endswith("running_var") else (-0.5, 0.5)
            tensors[name] = rng.uniform(lo, hi, shape).astype(DTYPES[dt])
        else:
            tensors[name] = np.zeros(shape, DTYPES[dt])
    st.save(os.path.join(out, "weights.safetensors"), tensors)
    width = int(re.search(r"%x: f32\[N, (\d+)\]", text).group(1))
    np.save(os.path.join(out, "x.npy"), rng.uniform(0, 1, (nodes, width)).astype(np.float32))


if __name__ == "__main__":
    main()
