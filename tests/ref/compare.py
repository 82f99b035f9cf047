#!/usr/bin/env python3
"""Compare two .npy arrays (A = candidate, B = reference).

usage: compare.py A.npy B.npy [--rtol 1e-6]

Both are read as float64.  Prints
  * max_abs   = max |a - b|
  * scaled    = max |a - b| / max |b|           (the robust headline metric)
  * max_rel   = max |a - b| / max(|b|, 1e-300)   (elementwise, informational)
and passes iff the shapes match, A has no NaN/Inf where B is finite, and
np.allclose(a, b, rtol=rtol, atol=rtol * max|b|) holds (which implies
scaled <= 2 * rtol).  Prints PASS or FAIL; exit status 0 on PASS, 1 on FAIL.
"""
import argparse
import sys

import numpy as np


def compare(a, b, rtol, atol=0.0):
    a = np.asarray(a, dtype=np.float64)
    b = np.asarray(b, dtype=np.float64)
    if a.shape != b.shape:
        return False, f"shape mismatch: {list(a.shape)} vs {list(b.shape)}"
    if a.size == 0:
        return True, "empty arrays"
    fin = np.isfinite(b)
    if not np.array_equal(np.isfinite(a), fin) or not np.array_equal(
            np.isnan(a), np.isnan(b)) or not np.array_equal(a[~fin & ~np.isnan(b)],
                                                           b[~fin & ~np.isnan(b)]):
        return False, "non-finite values differ"
    a_f, b_f = a[fin], b[fin]
    if a_f.size == 0:
        return True, "no finite values"
    d = np.abs(a_f - b_f)
    scale = float(np.max(np.abs(b_f)))
    max_abs = float(d.max())
    scaled = max_abs / scale if scale > 0 else (0.0 if max_abs == 0 else float("inf"))
    max_rel = float(np.max(d / np.maximum(np.abs(b_f), 1e-300)))
    ok = bool(np.allclose(a_f, b_f, rtol=rtol, atol=max(rtol * scale, atol)))
    worst = int(np.argmax(d))
    msg = (f"max_abs={max_abs:.3e} scaled={scaled:.3e} (max|b|={scale:.3e}) "
           f"max_rel={max_rel:.3e} worst_flat_index={worst} "
           f"a={a_f[worst]!r} b={b_f[worst]!r} rtol={rtol:g}")
    return ok, msg


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("a")
    ap.add_argument("b")
    ap.add_argument("--rtol", type=float, default=1e-6)
    args = ap.parse_args(argv)
    ok, msg = compare(np.load(args.a), np.load(args.b), args.rtol)
    print(msg)
    print("PASS" if ok else "FAIL")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
