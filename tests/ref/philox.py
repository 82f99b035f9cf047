#!/usr/bin/env python3
"""Philox4x32-10 in NumPy (vectorized over counters), and gnncc's rules
for dropout masks and parameter init drawn from it.  NumPy only.

Written from the algorithm (Salmon et al., SC'11; the Random123 constants),
independently of runtime/philox.h, whose C it must agree with bit for bit.

    round (10 of them), with M0 = 0xD2511F53 on x0 and M1 = 0xCD9E8D57 on x2:
        y0 = hi(M1*x2) ^ x1 ^ k0     y1 = lo(M1*x2)
        y2 = hi(M0*x0) ^ x3 ^ k1     y3 = lo(M0*x0)
    and after each round k0 += 0x9E3779B9, k1 += 0xBB67AE85 (mod 2^32).

gnncc's draws (runtime/philox.h):
  * uniform(seed, step, stream s, element t): word 0 of the block with
    counter (t & 0xffffffff, t >> 32, s, step & 0xffffffff) and key
    (seed & 0xffffffff, seed >> 32); u = (word0 >> 8) * 2^-24, a float32
    multiple of 2^-24 in [0, 1);
  * dropout_uniform(seed, step, stream s, element t): word t % 4 of the
    block with counter (t // 4 low, t // 4 high, s, step), scaled as above
    (four elements a block);
  * dropout(x, p) as the k-th dropout in program order (stream k), at
    training step `step` (the number of steps taken before): t is the flat
    row-major index into x; kept iff dropout_uniform >= float32(p); a kept element is
    x * float32(1 / (1 - p)), a dropped one 0;
  * gnn_init_uniform(dst, n, bound, seed, index): stream 0x80000000 | index,
    step 0, t = element; value = float32((2u - 1) * bound).

usage: philox.py                 the self-test (known answers), exit 0 / 1
       philox.py CTR0 CTR1 CTR2 CTR3 KEY0 KEY1   (hex) prints the 4 words
       philox.py --uniform SEED STEP STREAM N [T0]
                                 prints the draws of elements T0 .. T0+N-1
                                 (%.9g, one a line; numbers may be 0x...)
       philox.py --dropout SEED STEP STREAM N [T0]
                                 the same for dropout_uniform
"""
import sys

import numpy as np

__all__ = ["philox4x32", "uniform", "dropout_uniform", "dropout_mask", "dropout_scale", "dropout",
           "init_uniform", "KNOWN_ANSWERS", "selftest"]

M0 = np.uint64(0xD2511F53)
M1 = np.uint64(0xCD9E8D57)
W0 = 0x9E3779B9
W1 = 0xBB67AE85
MASK32 = np.uint64(0xFFFFFFFF)
SH32 = np.uint64(32)

# (counter, key, output): Random123's kat_vectors for philox4x32_10
KNOWN_ANSWERS = [
    ((0, 0, 0, 0), (0, 0), (0x6627E8D5, 0xE169C58D, 0xBC57AC4C, 0x9B00DBD8)),
    ((0xFFFFFFFF,) * 4, (0xFFFFFFFF,) * 2, (0x408F276D, 0x41C83B0E, 0xA20BC7C6, 0x6D5451FD)),
    ((0x243F6A88, 0x85A308D3, 0x13198A2E, 0x03707344), (0xA4093822, 0x299F31D0),
     (0xD16CFE09, 0x94FDCCEB, 0x5001E420, 0x24126EA1)),
]


def _u32(a):
    """as uint64 arrays holding 32-bit values (room for the 64-bit products)"""
    return np.asarray(a, dtype=np.uint64) & MASK32


def philox4x32(ctr, key, rounds=10):
    """Philox4x32-`rounds`.  ctr: 4 counter words, each a scalar or an array
    (broadcast together); key: 2 words (scalars or arrays, broadcast too).
    Returns a uint32 array of shape broadcast + (4,)."""
    x0, x1, x2, x3 = (_u32(c) for c in ctr)
    k0, k1 = (_u32(k) for k in key)
    x0, x1, x2, x3, k0, k1 = np.broadcast_arrays(x0, x1, x2, x3, k0, k1)
    x0, x1, x2, x3 = (a.copy() for a in (x0, x1, x2, x3))
    k0, k1 = k0.copy(), k1.copy()
    for _ in range(rounds):
        p0 = M0 * x0          # < 2^64: exact in uint64
        p1 = M1 * x2
        y0 = (p1 >> SH32) ^ x1 ^ k0
        y1 = p1 & MASK32
        y2 = (p0 >> SH32) ^ x3 ^ k1
        y3 = p0 & MASK32
        x0, x1, x2, x3 = y0, y1, y2, y3
        k0 = (k0 + np.uint64(W0)) & MASK32
        k1 = (k1 + np.uint64(W1)) & MASK32
    return np.stack([x0, x1, x2, x3], axis=-1).astype(np.uint32)


def _split64(v):
    v = np.asarray(v, dtype=np.uint64)
    return v & MASK32, v >> SH32


def uniform(seed, step, stream, t):
    """gnn_philox_uniform: float32 array, one draw per element of t (any
    integer array, e.g. np.arange(n)); seed, step, stream scalars."""
    t = np.asarray(t, dtype=np.uint64)
    tlo, thi = _split64(t)
    klo, khi = _split64(int(seed) & 0xFFFFFFFFFFFFFFFF)
    w = philox4x32((tlo, thi, int(stream) & 0xFFFFFFFF, int(step) & 0xFFFFFFFF),
                   (klo, khi))[..., 0]
    # (w >> 8) < 2^24: exact in float32, and so is the product by 2^-24
    return (w >> np.uint32(8)).astype(np.float32) * np.float32(2.0 ** -24)


def dropout_uniform(seed, step, stream, t):
    """gnn_dropout_uniform: element t's draw is word t % 4 of the block
    whose counter is (t // 4 low, t // 4 high, stream, step)."""
    t = np.asarray(t, dtype=np.uint64)
    blo, bhi = _split64(t >> np.uint64(2))
    klo, khi = _split64(int(seed) & 0xFFFFFFFFFFFFFFFF)
    words = philox4x32((blo, bhi, int(stream) & 0xFFFFFFFF, int(step) & 0xFFFFFFFF),
                       (klo, khi))
    w = np.take_along_axis(words, (t & np.uint64(3)).astype(np.int64)[..., None], axis=-1)[..., 0]
    return (w >> np.uint32(8)).astype(np.float32) * np.float32(2.0 ** -24)


def dropout_mask(shape, p, seed, step, stream):
    """bool array of `shape`: True where the element is kept
    (u >= float32(p), u = dropout_uniform, t = the flat row-major index)."""
    n = int(np.prod(shape, dtype=np.int64))
    u = dropout_uniform(seed, step, stream, np.arange(n, dtype=np.uint64))
    return (u >= np.float32(p)).reshape(shape)


def dropout_scale(p):
    """the factor a kept element is multiplied by: float32(1 / (1 - p))"""
    return np.float32(1.0 / (1.0 - p))


def dropout(x, p, seed, step, stream):
    """gnncc's training-mode dropout of x (any float array): x * mask *
    float32(1/(1-p)) in x's dtype (float32 x: a float32 product, as the C
    code; float64 x: the float32 scale widened).  Returns (y, mask)."""
    x = np.asarray(x)
    mask = dropout_mask(x.shape, p, seed, step, stream)
    s = dropout_scale(p)
    y = np.where(mask, x * x.dtype.type(s), x.dtype.type(0))
    return y, mask


def init_uniform(n, bound, seed, index):
    """gnn_init_uniform(dst, n, bound, seed, index): float32 [n] with
    value = float32((2u - 1) * bound), u from stream 0x80000000 | index,
    step 0, t = element.  (2u - 1 is exact in float32; the product by the
    float32 bound is rounded once, as float32 arithmetic in C does.)"""
    u = uniform(seed, 0, 0x80000000 | (int(index) & 0x7FFFFFFF), np.arange(n, dtype=np.uint64))
    return (np.float32(2.0) * u - np.float32(1.0)) * np.float32(bound)


def selftest(verbose=False):
    """Known answers plus the draws' invariants; returns the failures."""
    bad = []
    for ctr, key, want in KNOWN_ANSWERS:
        got = tuple(int(v) for v in philox4x32(ctr, key))
        if got != want:
            bad.append(f"philox4x32({', '.join('%08x' % c for c in ctr)}; "
                       f"{', '.join('%08x' % k for k in key)}) = "
                       f"{' '.join('%08x' % g for g in got)}, want "
                       f"{' '.join('%08x' % w for w in want)}")
        elif verbose:
            print(" ".join("%08x" % g for g in got))
    # vectorized == scalar, over counters and over keys
    ctrs = np.array([c for c, _, _ in KNOWN_ANSWERS], dtype=np.uint64)
    keys = np.array([k for _, k, _ in KNOWN_ANSWERS], dtype=np.uint64)
    vec = philox4x32(ctrs.T, keys.T)
    if not np.array_equal(vec, np.array([w for _, _, w in KNOWN_ANSWERS], dtype=np.uint32)):
        bad.append("vectorized philox4x32 differs from the known answers")
    # uniform: t splits into the two low counter words; u a multiple of 2^-24 in [0, 1)
    t = np.array([0, 1, 2**32 - 1, 2**32, 2**32 + 5, 2**63 + 7], dtype=np.uint64)
    u = uniform(2**40 + 3, 7, 5, t)
    for ti, ui in zip(t.tolist(), u.tolist()):
        w = philox4x32((ti & 0xFFFFFFFF, ti >> 32, 5, 7), (3, 2**8))[0]
        if ui != float(int(w) >> 8) / 2**24:
            bad.append(f"uniform(t={ti}) = {ui}, not word0 >> 8 scaled")
    if u.dtype != np.float32 or not np.all((u >= 0) & (u < 1)):
        bad.append("uniform is not float32 in [0, 1)")
    # step wraps at 2^32, seed's high half is the second key word
    if uniform(1, 2**32 + 3, 0, [9])[0] != uniform(1, 3, 0, [9])[0]:
        bad.append("step is not taken mod 2^32")
    # dropout: mask rule and a plausible keep rate
    m = dropout_mask((300, 100), 0.5, 1234, 0, 0)
    if not 0.48 < m.mean() < 0.52:
        bad.append(f"dropout p=0.5 keeps {m.mean():.3f}")
    x = np.linspace(-1, 1, 12, dtype=np.float32).reshape(3, 4)
    y, m = dropout(x, 0.25, 99, 3, 1)
    # dropout's draw of element t: word t % 4 of block t // 4, spelled out
    blocks = philox4x32((np.arange(3), 0, 1, 3), (99, 0))
    uu = ((blocks.reshape(12) >> np.uint32(8)).astype(np.float32) * np.float32(2.0 ** -24)).reshape(3, 4)
    if not (np.array_equal(m, uu >= np.float32(0.25)) and
            np.array_equal(y, np.where(m, x * np.float32(1 / 0.75), 0).astype(np.float32))):
        bad.append("dropout does not follow u >= float32(p), x * float32(1/(1-p))")
    iv = init_uniform(1000, 0.3, 42, 2)
    if iv.dtype != np.float32 or not np.all(np.abs(iv) <= np.float32(0.3)):
        bad.append("init_uniform out of bounds")
    if np.array_equal(iv, init_uniform(1000, 0.3, 42, 3)):
        bad.append("init_uniform: parameters share a stream")
    return bad


def main(argv):
    if not argv or argv == ["-v"]:
        bad = selftest(verbose=bool(argv))
        for b in bad:
            print("FAIL:", b)
        print("philox selftest: " + ("PASS" if not bad else f"{len(bad)} failures"))
        return 0 if not bad else 1
    if argv[0] in ("--uniform", "--dropout"):
        seed, step, stream, n = (int(v, 0) for v in argv[1:5])
        t0 = int(argv[5], 0) if len(argv) > 5 else 0
        t = np.uint64(t0) + np.arange(n, dtype=np.uint64)
        draw = uniform if argv[0] == "--uniform" else dropout_uniform
        for v in draw(seed, step, stream, t):
            print("%.9g" % v)
        return 0
    if len(argv) == 6:
        w = [int(v, 16) for v in argv]
        print(" ".join("%08x" % int(g) for g in philox4x32(w[:4], w[4:])))
        return 0
    print(__doc__, file=sys.stderr)
    return 2


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
