#!/usr/bin/env python3
"""The cpu target's e^x (gnn_expf_) element by element against float64.

usage: expcheck.py GNNRUN MODEL WORKDIR

Runs tests/codegen/Inputs/expf.gnn (exp, elu, sigmoid of x) through the
float64 interpreter and the cpu engine on x from -110 to 90 (subnormal,
normal and overflowing results), plus -inf, inf, NaN and signed zeros,
and checks each element: exp within 2 ulp of the float64 value where that
is a normal float, at most an ulp of FLT_MIN below it, inf above
ln(FLT_MAX), NaN for NaN; elu and sigmoid within 1e-7 absolute (they are
bounded by 1 in magnitude where they use e^x).  Prints "expf ok" or the
worst elements.
"""
import os
import subprocess
import sys

import numpy as np

gnnrun, model, work = sys.argv[1:4]
os.makedirs(work, exist_ok=True)
rng = np.random.default_rng(3)
vals = np.concatenate([np.linspace(-110, 90, 20000, dtype=np.float32),
                       rng.uniform(-1e-3, 1e-3, 2000).astype(np.float32),
                       np.array([-np.inf, np.inf, np.nan, 0.0, -0.0, 88.72, 88.73, -87.3, -103.9, -104.1],
                                dtype=np.float32)])
vals = np.concatenate([vals, np.zeros((-len(vals)) % 8, dtype=np.float32)])
x = vals.reshape(-1, 8)
np.save(os.path.join(work, "x.npy"), x)
np.save(os.path.join(work, "edges.npy"), np.zeros((2, 0), dtype=np.int64))
outs = {}
for eng in ("interp", "cpu"):
    o = [os.path.join(work, "%s%d.npy" % (eng, k)) for k in range(3)]
    cmd = [gnnrun, model, "--engine=" + eng, "--graph", os.path.join(work, "edges.npy"), "--input",
           "x=" + os.path.join(work, "x.npy"), "--output-dtype=f64" if eng == "interp" else "--output-dtype=f32"]
    for p in o:
        cmd += ["--output", p]
    subprocess.run(cmd, check=True)
    outs[eng] = [np.load(p).astype(np.float64) for p in o]
bad = []
ulp = np.spacing(np.float32(1)) / 2      # 2^-24: half an ulp of 1 relative
tiny = float(np.finfo(np.float32).tiny)
ref, got = outs["interp"][0], outs["cpu"][0]
with np.errstate(invalid="ignore", over="ignore"):
    err = np.abs(got - ref)
    ok = (np.isnan(ref) & np.isnan(got)) | (np.isinf(ref) & (got == ref)) | \
         (np.isfinite(ref) & (err <= 4 * ulp * np.abs(ref) + tiny))
    # float64 values above FLT_MAX are inf in float32
    ok |= (ref > np.finfo(np.float32).max) & np.isinf(got)
if not ok.all():
    i = np.flatnonzero(~ok.ravel())[:5]
    bad.append("exp: x %s got %s want %s" % (x.ravel()[i], got.ravel()[i], ref.ravel()[i]))
for k, name in ((1, "elu"), (2, "sigmoid")):
    ref, got = outs["interp"][k], outs["cpu"][k]
    fin = np.isfinite(ref)
    same = np.array_equal(np.isnan(ref), np.isnan(got)) and np.array_equal(ref[~fin & ~np.isnan(ref)],
                                                                          got[~fin & ~np.isnan(ref)])
    err = np.abs(got[fin] - ref[fin]) / np.maximum(1.0, np.abs(ref[fin]))
    if not same or err.max() > 1e-7:
        bad.append("%s: worst %.3g" % (name, err.max()))
print("expf ok" if not bad else "expf BAD: " + "; ".join(bad))
sys.exit(1 if bad else 0)
