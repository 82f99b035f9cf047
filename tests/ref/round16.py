#!/usr/bin/env python3
"""Rounding to 16-bit floats: inputs that find its corners, and the check.

usage: round16.py gen DIR
       round16.py check IN.npy OUT.npy --dtype bf16|f16

gen writes DIR/x32.npy (float32) and DIR/x64.npy (float64), one column
each: ties (to even, up and down), one ulp either side of them, zeros of
both signs, float32 and 16-bit subnormals, the largest finite values and
what rounds past them, infinities, NaN and random values.  x64 adds
doubles whose direct rounding differs from rounding through float32
first (the reference rounds once); DIR/edge_index.npy is one edge.

check passes iff OUT == -round(IN) element for element, bit for bit
(the sign of zero included; NaN where NaN is expected).  The reference
is exact: rational arithmetic (fractions.Fraction), ties to even, written
here from the formats' definitions; for f16 NumPy's float16 is checked
too, and torch.bfloat16 for bf16 inputs that are float32.
"""
import argparse
import math
import os
import sys
from fractions import Fraction

import numpy as np

FMT = {"bf16": (7, -126, 127), "f16": (10, -14, 15)}   # mantissa bits, emin, emax


def ref(x, dtype):
    """x (a Python float) rounded to dtype: a float."""
    mant, emin, emax = FMT[dtype]
    if math.isnan(x) or math.isinf(x) or x == 0:
        return x
    e = max(math.frexp(abs(x))[1] - 1, emin)
    quantum = Fraction(2) ** (e - mant)
    q = round(Fraction(x) / quantum) * quantum      # round() on a Fraction: ties to even
    biggest = (2 - Fraction(2) ** -mant) * Fraction(2) ** emax
    if abs(q) > biggest:
        return math.copysign(math.inf, x)
    if q == 0:
        return math.copysign(0.0, x)
    return float(q)


def corners(dtype, wide):
    mant, emin, emax = FMT[dtype]
    v = [0.0, -0.0, 1.0, -1.0, math.inf, -math.inf, math.nan, 3.0, 1 / 3]
    for e in list(range(emin - mant - 2, emin + 3)) + [-1, 0, 1, 5, emax - 1, emax]:
        q = 2.0 ** (e - mant)                       # the quantum at 2^e
        for k in (1, 2, 3):                         # 2^e + k quanta, and half-way
            base = 2.0 ** e + k * q
            for d in (0.0, 0.5, -0.5):
                v += [base + d * q, -(base + d * q)]
            for d in (0.5, -0.5):                   # one float ulp either side of a tie
                t = base + d * q
                v += [float(np.nextafter(np.float32(t), np.float32(np.inf))),
                      float(np.nextafter(np.float32(t), np.float32(-np.inf)))]
        v += [q * 0.5, q * 0.25, q * 1.5, q * 0.75]   # subnormal ties, below the least
    top = (2 - 2.0 ** -mant) * 2.0 ** emax
    half = 2.0 ** (emax - mant - 1)
    v += [top, top + half * 0.5, top + half, top + half * 1.0001, -(top + half), 2.0 ** (emax + 1)]
    v += [1.17549435e-38, 1.4e-45, 5e-39, float(np.finfo(np.float32).max)]
    if wide:
        # a double just past a 16-bit tie rounds up at once, but through
        # float32 it lands on the tie and goes to even
        v += [1 + 2.0 ** -(mant + 1) + 2.0 ** -40, 1 + 3 * 2.0 ** -(mant + 1) - 2.0 ** -40,
              -(1 + 2.0 ** -(mant + 1) + 2.0 ** -40), 1e-300, -1e-300, 1e300]
    return v


def gen(d):
    rng = np.random.default_rng(24)
    v = corners("bf16", False) + corners("f16", False)
    r = rng.standard_normal(2000) * np.exp2(rng.integers(-30, 30, 2000))
    x32 = np.concatenate([np.array(v, dtype=np.float32), r.astype(np.float32)])
    w = corners("bf16", True) + corners("f16", True)
    x64 = np.concatenate([np.array(w, dtype=np.float64), r])
    np.save(os.path.join(d, "x32.npy"), x32.reshape(-1, 1))
    np.save(os.path.join(d, "x64.npy"), x64.reshape(-1, 1))
    np.save(os.path.join(d, "edge_index.npy"), np.zeros((2, 1), dtype=np.int64))


def check(inp, outp, dtype):
    x = np.load(inp).astype(np.float64).ravel()
    y = np.load(outp).astype(np.float64).ravel()
    want = np.array([-ref(float(a), dtype) for a in x])
    if dtype == "f16":
        npw = -x.astype(np.float16).astype(np.float64)
        bad = ~((npw == want) | (np.isnan(npw) & np.isnan(want)))
        if bad.any():
            i = int(np.argmax(bad))
            print(f"reference and numpy disagree at {i}: x={x[i]!r} ref={want[i]!r} numpy={npw[i]!r}")
            return 1
    elif np.load(inp).dtype == np.float32:
        import torch
        tw = -torch.from_numpy(x.astype(np.float32)).to(torch.bfloat16).double().numpy()
        bad = ~((tw == want) | (np.isnan(tw) & np.isnan(want)))
        if bad.any():
            i = int(np.argmax(bad))
            print(f"reference and torch disagree at {i}: x={x[i]!r} ref={want[i]!r} torch={tw[i]!r}")
            return 1
    if y.shape != want.shape:
        print(f"shape {y.shape}, want {want.shape}")
        return 1
    same = (y == want) & (np.signbit(y) == np.signbit(want))
    same |= np.isnan(y) & np.isnan(want)
    if not same.all():
        i = int(np.argmin(same))
        print(f"{int((~same).sum())} of {len(y)} differ; first at {i}: x={x[i]!r} got {-y[i]!r} want {-want[i]!r}")
        return 1
    print(f"{len(y)} values rounded to {dtype} as the reference")
    return 0


def main():
    np.seterr(over="ignore")   # float16 and float32 casts that overflow are cases
    ap = argparse.ArgumentParser()
    ap.add_argument("what", choices=["gen", "check"])
    ap.add_argument("args", nargs="+")
    ap.add_argument("--dtype", choices=list(FMT))
    a = ap.parse_args()
    if a.what == "gen":
        gen(a.args[0])
        return 0
    return check(a.args[0], a.args[1], a.dtype)


if __name__ == "__main__":
    sys.exit(main())
