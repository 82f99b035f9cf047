#!/usr/bin/env python3
"""train_ops.py: NumPy references for the IR ops that reverse-mode autodiff
needs (gt, eq, slice, dropout_train, take, put), for
tests/interp/Inputs/train_ops.ir.

  train_ops.py kat                 Philox4x32-10 against Random123's answers
  train_ops.py inputs DIR [--nodes N] [--oob]
                                   x, y (float32 [N, 6]), idx (int64 [N]),
                                   key (int64 [2]), edge_index.npy; --oob
                                   puts indices -1, 6 and 7 into idx
  train_ops.py check DIR OUT0 ... OUT7
                                   @train's eight outputs against NumPy
  train_ops.py checkoob DIR T P    @oob's outputs from generated code: NaN
                                   where idx is out of range, rows of zeros
  train_ops.py compare A B K [--rtol R]
                                   A.0.npy .. A.(K-1).npy against B.*.npy
                                   with compare.py; exit 1 if any differs

The dropout mask comes from a Philox4x32-10 written here from the paper
(Salmon et al., SC'11) and Random123's constants, not from
runtime/philox.h: element t of stream s under key (seed, step) is word
t % 4 of the block with counter (t // 4 low, t // 4 high, s, step) and key
(seed low, seed high), its top 24 bits as a multiple of 2^-24, kept when at least
float32(p).
"""
import os
import sys

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import compare as cmp  # noqa: E402

MASK = 0xFFFFFFFF


def philox(ctr, key):
    """Philox4x32-10 on arrays: ctr a list of 4 uint64 arrays of 32-bit
    words, key a list of 2; the 4 output words."""
    x0, x1, x2, x3 = (np.asarray(c, dtype=np.uint64) for c in ctr)
    k0, k1 = (np.asarray(k, dtype=np.uint64) for k in key)
    for _ in range(10):
        p0 = np.uint64(0xD2511F53) * x0
        p1 = np.uint64(0xCD9E8D57) * x2
        x0, x1, x2, x3 = ((p1 >> np.uint64(32)) ^ x1 ^ k0, p1 & np.uint64(MASK),
                          (p0 >> np.uint64(32)) ^ x3 ^ k1, p0 & np.uint64(MASK))
        k0 = (k0 + np.uint64(0x9E3779B9)) & np.uint64(MASK)
        k1 = (k1 + np.uint64(0xBB67AE85)) & np.uint64(MASK)
    return x0, x1, x2, x3


def keep(seed, step, stream, n, p):
    """The keep mask of n elements (flat indices 0..n-1)."""
    t = np.arange(n, dtype=np.uint64)
    b = t >> np.uint64(2)
    seed &= (1 << 64) - 1
    words = philox([b & np.uint64(MASK), b >> np.uint64(32), np.full(n, stream, np.uint64),
                    np.full(n, step & MASK, np.uint64)], [seed & MASK, seed >> 32])
    w = np.choose((t & np.uint64(3)).astype(np.int64), words)
    u = (w >> np.uint64(8)).astype(np.float64) * 2.0 ** -24
    return u >= float(np.float32(p))


def kat():
    cases = [((0, 0, 0, 0), (0, 0), (0x6627e8d5, 0xe169c58d, 0xbc57ac4c, 0x9b00dbd8)),
             ((MASK,) * 4, (MASK, MASK), (0x408f276d, 0x41c83b0e, 0xa20bc7c6, 0x6d5451fd)),
             ((0x243f6a88, 0x85a308d3, 0x13198a2e, 0x03707344), (0xa4093822, 0x299f31d0),
              (0xd16cfe09, 0x94fdcceb, 0x5001e420, 0x24126ea1))]
    for ctr, key, want in cases:
        got = tuple(int(w[0]) for w in philox([[c] for c in ctr], [[k] for k in key]))
        print(" ".join(f"{w:08x}" for w in got), "ok" if got == want else "WRONG")


def inputs(d, n, oob):
    r = np.random.default_rng(11)
    x = r.uniform(-2, 2, (n, 6)).astype(np.float32)
    y = r.uniform(-2, 2, (n, 6)).astype(np.float32)
    y[::4] = x[::4]                 # rows where eq holds
    x[3, 1] = np.nan                # NaN compares false both ways
    y[5, 2] = np.nan
    idx = r.integers(0, 6, n).astype(np.int64)
    if oob:
        idx[1], idx[4], idx[n - 1] = -1, 6, 7
    np.save(f"{d}/x.npy", x)
    np.save(f"{d}/y.npy", y)
    np.save(f"{d}/idx.npy", idx)
    np.save(f"{d}/key.npy", np.array([0x12345678abcd, 41], dtype=np.int64))
    np.save(f"{d}/edge_index.npy", np.array([[0, 1, 2], [1, 2, 0]], dtype=np.int64))


def same(name, got, want):
    """Equal to float64 rounding (the interpreter's doubles from float32
    inputs), NaN where want is NaN."""
    ok = got.shape == want.shape and np.array_equal(np.isnan(got), np.isnan(want)) and \
        np.allclose(got[~np.isnan(want)], want[~np.isnan(want)], rtol=1e-12, atol=0)
    print(f"{name}: {'ok' if ok else 'WRONG'}")
    if not ok:
        print("  got ", got.ravel()[:12], got.shape)
        print("  want", want.ravel()[:12], want.shape)
    return ok


def check(d, outs):
    x = np.load(f"{d}/x.npy").astype(np.float64)
    y = np.load(f"{d}/y.npy").astype(np.float64)
    idx = np.load(f"{d}/idx.npy")
    seed, step = (int(v) for v in np.load(f"{d}/key.npy"))
    o = [np.load(f).astype(np.float64) for f in outs]
    n = x.shape[0]
    with np.errstate(invalid="ignore"):
        m = (x > y).astype(np.float64) + (x == y).astype(np.float64)
    z = m * y
    ok = same("slice of concat (dim 0, start N)", o[0], z)
    ok &= same("gt + eq", o[1], m)
    ok &= same("slice (dim 1, start 2, len 3)", o[2], x[:, 2:5])
    ok &= same("take", o[4], x[np.arange(n), idx])
    p = np.zeros((n, 6))
    p[np.arange(n), idx] = x[np.arange(n), idx]
    ok &= same("put", o[5], p)
    ok &= same("relu", o[6], np.maximum(z, 0))
    for k, src, prob, stream in ((3, x, 0.3, 7), (7, y, 0.5, 8)):
        kp = keep(seed, step, stream, src.size, prob).reshape(src.shape)
        ok &= same(f"dropout_train p={prob} stream={stream}", o[k], np.where(kp, src * (1 / (1 - prob)), 0))
        frac = kp.mean()
        # 4 sigma of a binomial fraction
        tol = 4 * np.sqrt(prob * (1 - prob) / src.size)
        good = abs(frac - (1 - prob)) < tol
        print(f"kept fraction {1 - prob}: {'ok' if good else f'WRONG ({frac:.4f})'}")
        ok &= good
    # the two streams draw different masks under one key
    a, b = keep(seed, step, 7, x.size, 0.5), keep(seed, step, 8, x.size, 0.5)
    good = (a != b).mean() > 0.4
    print(f"streams differ: {'ok' if good else 'WRONG'}")
    ok &= good
    return ok


def checkoob(d, tf, pf):
    x = np.load(f"{d}/x.npy").astype(np.float64)
    idx = np.load(f"{d}/idx.npy")
    n = x.shape[0]
    inr = (idx >= 0) & (idx < 6)
    t = np.full(n, np.nan)
    t[inr] = x[np.arange(n)[inr], idx[inr]]
    p = np.zeros((n, 6))
    p[np.arange(n)[inr], idx[inr]] = t[inr]
    # generated code is float32: compare at its precision
    t32, p32 = t.astype(np.float32).astype(np.float64), p.astype(np.float32).astype(np.float64)
    return same("take out of range: NaN", np.load(tf).astype(np.float64), t32) & \
        same("put out of range: zero row", np.load(pf).astype(np.float64), p32)


def compareall(a, b, k, rtol):
    ok = True
    for i in range(k):
        good, msg = cmp.compare(np.load(f"{a}.{i}.npy"), np.load(f"{b}.{i}.npy"), rtol)
        print(f"output {i}: {'PASS' if good else 'FAIL'} {msg}")
        ok &= good
    return ok


if __name__ == "__main__":
    a = sys.argv[1:]
    if a[0] == "kat":
        kat()
    elif a[0] == "inputs":
        nodes = int(a[a.index("--nodes") + 1]) if "--nodes" in a else 2000
        inputs(a[1], nodes, "--oob" in a)
    elif a[0] == "check":
        sys.exit(0 if check(a[1], a[2:]) else 1)
    elif a[0] == "checkoob":
        sys.exit(0 if checkoob(a[1], a[2], a[3]) else 1)
    elif a[0] == "compare":
        rtol = float(a[a.index("--rtol") + 1]) if "--rtol" in a else 1e-6
        sys.exit(0 if compareall(a[1], a[2], int(a[3]), rtol) else 1)
    else:
        sys.exit(__doc__)
