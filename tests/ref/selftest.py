#!/usr/bin/env python3
"""Self-tests for the NumPy references in tests/ref/.

usage: python3 tests/ref/selftest.py [-v]      (exit 0 = all passed)

* st.py: byte-exact vectors taken from huggingface/safetensors' own Rust tests,
  dtype/name ordering, 0-rank and empty tensors, validation errors, and the
  shared GCN weight file.
* pyg_ref.py: every layer is checked against a second, independent
  implementation written with plain Python loops over edges (lists, dicts and
  `math`, no numpy vectorisation) on tiny hand-made graphs that contain a
  pre-existing self-loop, a duplicated edge, a node with in-degree 0, and an
  isolated node.  A few outputs are also checked against numbers worked out by
  hand, and PyG-specific quirks are asserted explicitly.
* CLIs: make_weights.py / reference.py / compare.py / accuracy.py end to end on
  a tiny on-disk graph; if shared/datasets/cora (beside the checkout) and
  the shared GCN weights exist, the reference GCN must reach 82.0% Cora test accuracy.
"""
import math
import os
import struct
import subprocess
import sys
import tempfile

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
import make_weights  # noqa: E402
import pyg_ref as R  # noqa: E402
import st  # noqa: E402

SHARED = os.path.join(os.path.dirname(os.path.dirname(os.path.dirname(HERE))), "shared")
CORA = os.path.join(SHARED, "datasets", "cora")
GCN_W = os.path.join(SHARED, "weights", "gcn_cora.safetensors")
VERBOSE = "-v" in sys.argv
FAILS = []


def check(cond, what):
    if not cond:
        FAILS.append(what)
        print("FAIL:", what)
    elif VERBOSE:
        print("ok:  ", what)


def close(a, b, what, tol=1e-12):
    a = np.asarray(a, dtype=np.float64)
    b = np.asarray(b, dtype=np.float64)
    ok = a.shape == b.shape and np.allclose(a, b, rtol=tol, atol=tol)
    if not ok and a.shape == b.shape:
        what += f" (max diff {np.max(np.abs(a - b)):.3e})"
    elif not ok:
        what += f" (shapes {a.shape} vs {b.shape})"
    check(ok, what)


# ===========================================================================
# Loop ("by hand") implementations -- deliberately share nothing with pyg_ref
# ===========================================================================

def L_mat(x):
    return [[float(v) for v in row] for row in np.asarray(x, dtype=np.float64)]


def L_linear(x, W, b=None):
    """x: list of rows, W: [out][in] -> x W^T + b"""
    W = L_mat(W)
    bb = None if b is None else [float(v) for v in np.asarray(b, dtype=np.float64).reshape(-1)]
    out = []
    for row in x:
        r = []
        for o in range(len(W)):
            s = 0.0
            for k in range(len(row)):
                s += row[k] * W[o][k]
            r.append(s + (bb[o] if bb is not None else 0.0))
        out.append(r)
    return out


def L_edges(ei):
    return [(int(ei[0][e]), int(ei[1][e])) for e in range(len(ei[0]))]


def L_gcn(x, ei, W, b, n, improved=False, self_loops=True, edge_weight=None, normalize=True):
    edges = L_edges(ei)
    if edge_weight is None:
        ws = None
    else:
        ws = [float(v) for v in edge_weight]
    if normalize and self_loops:
        kept, kept_w = [], []
        loop_w = {i: (2.0 if improved else 1.0) for i in range(n)}
        for k, (s, d) in enumerate(edges):
            if s == d:
                if ws is not None:
                    loop_w[s] = ws[k]          # existing loop keeps its weight
                continue
            kept.append((s, d))
            kept_w.append(ws[k] if ws is not None else 1.0)
        for i in range(n):
            kept.append((i, i))
            # PyG >= 2.3: without edge weights the loop weight is 1 (fill ignored)
            kept_w.append(loop_w[i] if ws is not None else 1.0)
        edges, ws = kept, kept_w
    if ws is None:
        ws = [1.0] * len(edges)
    if normalize:
        deg = [0.0] * n
        for (s, d), w in zip(edges, ws):
            deg[d] += w
        inv = [(1.0 / math.sqrt(v)) if v > 0 else 0.0 for v in deg]
        ws = [inv[s] * w * inv[d] for (s, d), w in zip(edges, ws)]
    h = L_linear(L_mat(x), W)
    out = [[0.0] * len(h[0]) for _ in range(n)]
    for (s, d), w in zip(edges, ws):
        for c in range(len(h[0])):
            out[d][c] += w * h[s][c]
    if b is not None:
        bb = [float(v) for v in b]
        out = [[v + bb[c] for c, v in enumerate(r)] for r in out]
    return out


def L_aggregate(x, ei, n, aggr):
    edges = L_edges(ei)
    f = len(x[0])
    out = []
    for i in range(n):
        msgs = [x[s] for (s, d) in edges if d == i]
        if not msgs:
            out.append([0.0] * f)
        elif aggr == "sum":
            out.append([sum(m[c] for m in msgs) for c in range(f)])
        elif aggr == "mean":
            out.append([sum(m[c] for m in msgs) / len(msgs) for c in range(f)])
        elif aggr == "max":
            out.append([max(m[c] for m in msgs) for c in range(f)])
        else:
            raise ValueError(aggr)
    return out


def L_sage(x, ei, n, Wl, bl, Wr, aggr, normalize):
    x = L_mat(x)
    agg = L_aggregate(x, ei, n, aggr)
    out = L_linear(agg, Wl, bl)
    if Wr is not None:
        r = L_linear(x, Wr)
        out = [[a + c for a, c in zip(o, rr)] for o, rr in zip(out, r)]
    if normalize:
        res = []
        for row in out:
            nrm = math.sqrt(sum(v * v for v in row))
            res.append([v / max(nrm, 1e-12) for v in row])
        out = res
    return out


def L_gat(x, ei, n, W, att_s, att_d, bias, heads, concat, slope=0.2, self_loops=True):
    x = L_mat(x)
    hflat = L_linear(x, W)
    C = len(hflat[0]) // heads
    h = [[[hflat[v][hd * C + c] for c in range(C)] for hd in range(heads)] for v in range(n)]
    A_s = np.asarray(att_s, dtype=np.float64).reshape(heads, C).tolist()
    A_d = np.asarray(att_d, dtype=np.float64).reshape(heads, C).tolist()
    a_s = [[sum(h[v][hd][c] * A_s[hd][c] for c in range(C)) for hd in range(heads)] for v in range(n)]
    a_d = [[sum(h[v][hd][c] * A_d[hd][c] for c in range(C)) for hd in range(heads)] for v in range(n)]
    edges = L_edges(ei)
    if self_loops:
        edges = [(s, d) for (s, d) in edges if s != d] + [(i, i) for i in range(n)]
    out = []
    for i in range(n):
        inc = [s for (s, d) in edges if d == i]
        per_head = []
        for hd in range(heads):
            sc = []
            for s in inc:
                z = a_s[s][hd] + a_d[i][hd]
                sc.append(z if z >= 0 else slope * z)
            acc = [0.0] * C
            if sc:
                m = max(sc)
                ex = [math.exp(v - m) for v in sc]
                den = sum(ex) + 1e-16
                for s, e in zip(inc, ex):
                    for c in range(C):
                        acc[c] += (e / den) * h[s][hd][c]
            per_head.append(acc)
        if concat:
            row = [per_head[hd][c] for hd in range(heads) for c in range(C)]
        else:
            row = [sum(per_head[hd][c] for hd in range(heads)) / heads for c in range(C)]
        out.append(row)
    if bias is not None:
        bb = [float(v) for v in np.asarray(bias).reshape(-1)]
        out = [[v + bb[c] for c, v in enumerate(r)] for r in out]
    return out


def L_mlp(x, sd, p):
    layers = 0
    while f"{p}lins.{layers}.weight" in sd:
        layers += 1
    for k in range(layers):
        x = L_linear(x, sd[f"{p}lins.{k}.weight"], sd[f"{p}lins.{k}.bias"])
        if k < layers - 1:
            m = f"{p}norms.{k}.module."
            g, bt = sd[m + "weight"], sd[m + "bias"]
            mu, var = sd[m + "running_mean"], sd[m + "running_var"]
            x = [[max(0.0, (v - float(mu[c])) / math.sqrt(float(var[c]) + 1e-5) * float(g[c])
                      + float(bt[c])) for c, v in enumerate(r)] for r in x]
    return x


def L_gin(x, ei, n, sd, p):
    x = L_mat(x)
    agg = L_aggregate(x, ei, n, "sum")
    eps = float(np.asarray(sd[p + "eps"]).reshape(-1)[0])
    z = [[a + (1.0 + eps) * v for a, v in zip(ar, xr)] for ar, xr in zip(agg, x)]
    return L_mlp(z, sd, p + "nn.")


def L_relu(x):
    return [[max(0.0, v) for v in r] for r in x]


def L_elu(x):
    return [[v if v > 0 else math.exp(v) - 1.0 for v in r] for r in x]


def L_log_softmax(x):
    out = []
    for r in x:
        m = max(r)
        lse = m + math.log(sum(math.exp(v - m) for v in r))
        out.append([v - lse for v in r])
    return out


# ===========================================================================
# Test graphs
# ===========================================================================

# 6 nodes, directed:
#   1->1 pre-existing self-loop, 0->2 duplicated, node 3 has in-degree 0
#   (only out-edges), node 5 is isolated (no edges at all),
#   in-degree != out-degree for several nodes.
EI = np.array([[0, 1, 0, 0, 2, 1, 3, 3, 4, 2, 4],
               [1, 0, 2, 2, 1, 1, 0, 2, 2, 4, 1]], dtype=np.int64)
N = 6
# second graph: self-loop on 2 and on 4 (twice), empty edge list variant
EI2 = np.array([[2, 0, 4, 1, 4, 3],
                [2, 1, 4, 0, 4, 0]], dtype=np.int64)
EI_EMPTY = np.zeros((2, 0), dtype=np.int64)


def rnd(rng, *shape, scale=1.0):
    return rng.uniform(-scale, scale, size=shape)


def test_st():
    # --- byte-exact vectors from safetensors/src/tensor.rs tests -------------
    data = np.arange(6, dtype=np.float32).reshape(1, 2, 3)
    expect = bytes([64, 0, 0, 0, 0, 0, 0, 0, 123, 34, 97, 116, 116, 110, 46, 48, 34, 58, 123, 34,
                    100, 116, 121, 112, 101, 34, 58, 34, 70, 51, 50, 34, 44, 34, 115, 104, 97, 112,
                    101, 34, 58, 91, 49, 44, 50, 44, 51, 93, 44, 34, 100, 97, 116, 97, 95, 111,
                    102, 102, 115, 101, 116, 115, 34, 58, 91, 48, 44, 50, 52, 93, 125, 125, 0, 0,
                    0, 0, 0, 0, 128, 63, 0, 0, 0, 64, 0, 0, 64, 64, 0, 0, 128, 64, 0, 0, 160, 64])
    check(st.serialize({"attn.0": data}) == expect, "st: upstream test_serialization bytes")
    expect2 = bytes([72, 0, 0, 0, 0, 0, 0, 0]) + (
        b'{"attn0":{"dtype":"F32","shape":[1,1,2,3],"data_offsets":[0,24]}}' + b" " * 7
    ) + data.tobytes()
    check(st.serialize({"attn0": data.reshape(1, 1, 2, 3)}) == expect2,
          "st: upstream test_serialization_forced_alignement bytes")
    check(st.serialize({}) == bytes([8, 0, 0, 0, 0, 0, 0, 0, 123, 125]) + b" " * 6,
          "st: upstream test_empty bytes")
    check(st.serialize({}, {"framework": "pt"}) ==
          bytes([40, 0, 0, 0, 0, 0, 0, 0]) + b'{"__metadata__":{"framework":"pt"}}' + b" " * 5,
          "st: upstream test_empty with metadata bytes")

    # --- ordering, dtypes, 0-rank, empty, round trip -------------------------
    t = {
        "b_bool": np.array([True, False, True]),
        "a_f16": np.array([1.5, -2.0], dtype=np.float16),
        "z_f32": np.arange(5, dtype=np.float32),
        "a_f32": np.ones((2, 2), dtype=np.float32),
        "i32": np.array([[1, -2]], dtype=np.int32),
        "f64": np.array([np.pi], dtype=np.float64),
        "scalar_i64": np.array(7, dtype=np.int64),
        "empty_f32": np.zeros((0, 3), dtype=np.float32),
        "big_endian_f32": np.array([1.0, 2.0], dtype=">f4"),
    }
    blob = st.serialize(t, {"b": "2", "a": "1"})
    (n,) = struct.unpack("<Q", blob[:8])
    check(n % 8 == 0, "st: header length multiple of 8")
    import json
    hdr = json.loads(blob[8:8 + n].decode())
    names = [k for k in hdr if k != "__metadata__"]
    check(list(hdr)[0] == "__metadata__", "st: __metadata__ first")
    check(names == ["scalar_i64", "f64", "a_f32", "big_endian_f32", "empty_f32", "z_f32",
                    "i32", "a_f16", "b_bool"],
          f"st: order = desc dtype (I64>F64>F32>I32>F16>BOOL) then name: {names}")
    off = 0
    for k in names:
        b, e = hdr[k]["data_offsets"]
        check(b == off, f"st: contiguous offsets at {k}")
        off = e
    check(8 + n + off == len(blob), "st: buffer fully covered")
    check(hdr["scalar_i64"]["shape"] == [], "st: 0-rank shape []")
    back, md = st.deserialize(blob)
    check(md == {"a": "1", "b": "2"}, "st: metadata round trip")
    for k, v in t.items():
        check(back[k].shape == v.shape and back[k].dtype == v.dtype.newbyteorder("=")
              and np.array_equal(back[k], v), f"st: round trip {k}")
    check(back["scalar_i64"].ndim == 0 and int(back["scalar_i64"]) == 7, "st: 0-rank value")

    # --- reader accepts any data order; rejects broken files -----------------
    hb = b'{"b":{"dtype":"I32","shape":[1],"data_offsets":[4,8]},' \
         b'"a":{"dtype":"I32","shape":[1],"data_offsets":[0,4]}}'
    raw = struct.pack("<Q", len(hb)) + hb + struct.pack("<ii", 11, 22)
    r, _ = st.deserialize(raw)
    check(int(r["a"][0]) == 11 and int(r["b"][0]) == 22, "st: unsorted header accepted")

    def bad(buf, what):
        try:
            st.deserialize(buf)
        except st.SafetensorsError:
            check(True, f"st: rejects {what}")
        else:
            check(False, f"st: rejects {what}")

    bad(raw[:-1], "truncated buffer")
    bad(raw + b"\0", "trailing bytes")
    bad(raw[:5], "short file")
    hole = b'{"a":{"dtype":"I32","shape":[1],"data_offsets":[4,8]}}'
    bad(struct.pack("<Q", len(hole)) + hole + b"\0" * 8, "hole at start")
    wrong = b'{"a":{"dtype":"I32","shape":[2],"data_offsets":[0,4]}}'
    bad(struct.pack("<Q", len(wrong)) + wrong + b"\0" * 4, "nbytes mismatch")
    dup = b'{"a":{"dtype":"I32","shape":[1],"data_offsets":[0,4]},' \
          b'"a":{"dtype":"I32","shape":[1],"data_offsets":[0,4]}}'
    bad(struct.pack("<Q", len(dup)) + dup + b"\0" * 4, "duplicate keys")

    if os.path.exists(GCN_W):
        w = st.load(GCN_W)
        check({k: list(v.shape) for k, v in w.items()} == {
            "conv1.lin.weight": [16, 1433], "conv1.bias": [16],
            "conv2.lin.weight": [7, 16], "conv2.bias": [7]}, "st: shared GCN weights load")
        check(all(v.dtype == np.float32 for v in w.values()), "st: GCN weights are F32")


def test_hand_numbers():
    # GCN: 2 nodes, undirected edge, W = 1, x = [1, 2]: d^ = 2 for both,
    # every coefficient 1/2 -> out = [1.5, 1.5] (+ bias 0.25)
    ei = np.array([[0, 1], [1, 0]])
    out = R.gcn_conv(np.array([[1.0], [2.0]]), ei, np.array([[1.0]]), np.array([0.25]))
    close(out, [[1.75], [1.75]], "hand: GCN 2-node")
    # directed 0->1 only: node 1 deg 2 (edge + loop), node 0 deg 1 (loop)
    # out1 = x0/sqrt(1*2) + x1/2 ; out0 = x0
    out = R.gcn_conv(np.array([[1.0], [2.0]]), np.array([[0], [1]]), np.array([[1.0]]))
    close(out, [[1.0], [1.0 / math.sqrt(2) + 1.0]], "hand: GCN directed in-degree norm")
    # GAT: 2 nodes, edge 0->1, W=1, att_src=att_dst=1, x = [0, 1]
    # node 0: only its loop -> alpha 1 -> out 0
    # node 1: scores lrelu(0+1)=1 (from 0), lrelu(1+1)=2 (loop) -> out = e^2/(e+e^2)
    out = R.gat_conv(np.array([[0.0], [1.0]]), np.array([[0], [1]]), np.array([[1.0]]),
                     np.ones((1, 1, 1)), np.ones((1, 1, 1)))
    close(out, [[0.0], [1.0 / (1.0 + math.exp(-1.0))]], "hand: GAT 2-node")
    # negative slope: x = [-1, 0]: node1 scores lrelu(-1+0) = -0.2 (from 0), 0 (loop)
    out = R.gat_conv(np.array([[-1.0], [0.0]]), np.array([[0], [1]]), np.array([[1.0]]),
                     np.ones((1, 1, 1)), np.ones((1, 1, 1)))
    a0 = math.exp(-0.2) / (math.exp(-0.2) + 1.0)
    close(out, [[-1.0], [-a0]], "hand: GAT leaky slope 0.2")
    # SAGE max with only negative messages -> true max (negative), not 0
    x = np.array([[-3.0], [-1.0], [5.0]])
    out = R.sage_conv(x, np.array([[0, 1], [2, 2]]), np.array([[1.0]]), None, None, aggr="max")
    close(out, [[0.0], [0.0], [-1.0]], "hand: SAGE max of negatives, empty groups 0")
    out = R.sage_conv(x, np.array([[0, 1], [2, 2]]), np.array([[1.0]]), None, None, aggr="mean")
    close(out, [[0.0], [0.0], [-2.0]], "hand: SAGE mean")
    # GIN: eps 0.5, nn = identity: out_i = 1.5 x_i + sum_j x_j
    out = R.gin_conv(np.array([[1.0], [10.0]]), np.array([[0], [1]]), lambda z: z, eps=0.5)
    close(out, [[1.5], [16.0]], "hand: GIN eps")
    # NormalizeFeatures
    xf = np.array([[1.0, 0.0, 1.0, 1.0], [0.0, 0.0, 0.0, 0.0], [0.0, 1.0, 0.0, 0.0]])
    close(R.normalize_features(xf), [[1 / 3, 0, 1 / 3, 1 / 3], [0, 0, 0, 0], [0, 1, 0, 0]],
          "hand: NormalizeFeatures binary rows")
    close(R.normalize_features(np.array([[0.2, 0.3], [0.0, 0.0]])), [[0.2, 0.3], [0, 0]],
          "hand: NormalizeFeatures clamp(min=1) keeps row sum 0.5")
    close(R.normalize_features(np.array([[1.0, 3.0], [2.0, 2.0]])), [[0, 1], [0.5, 0.5]],
          "hand: NormalizeFeatures subtracts the global min")
    close(np.exp(R.log_softmax(np.array([[1.0, 2.0, 3.0]]))).sum(), 1.0, "hand: log_softmax")
    close(R.elu(np.array([-1.0, 0.0, 2.0])), [math.exp(-1) - 1, 0.0, 2.0], "hand: elu")


def test_graph_utils():
    ei, w = R.add_remaining_self_loops(EI, None, 2.0, N)
    check(w is None, "utils: add_remaining_self_loops without weights returns None")
    loops = [(int(s), int(d)) for s, d in ei.T if s == d]
    check(loops == [(i, i) for i in range(N)], "utils: exactly one loop per node, appended last")
    check(ei.shape[1] == EI.shape[1] - 1 + N, "utils: pre-existing loop removed")
    w_in = np.arange(1, EI.shape[1] + 1, dtype=np.float64)
    ei, w = R.add_remaining_self_loops(EI, w_in, 2.0, N)
    lw = w[-N:]
    check(lw[1] == w_in[5] and all(lw[i] == 2.0 for i in (0, 2, 3, 4, 5)),
          "utils: existing loop keeps its weight, others get fill_value")
    _, w2 = R.gcn_norm(EI, None, N, improved=True)
    _, w1 = R.gcn_norm(EI, None, N, improved=False)
    close(w2, w1, "PyG>=2.3: improved=True without edge weights == improved=False")
    _, w3 = R.gcn_norm(EI, np.ones(EI.shape[1]), N, improved=True)
    check(not np.allclose(w3, w1), "improved=True with explicit weights uses loop weight 2")
    _, w4 = R.gcn_norm(EI, None, N, add_self_loops=False)
    check(np.isfinite(w4).all(), "gcn_norm: zero in-degree -> 0 coefficient, no inf")
    sm = R.softmax_by_index(np.array([[1.0], [2.0], [3.0]]), np.array([0, 0, 2]), 4)
    close(sm[:2, 0].sum(), 1.0, "softmax groups sum to 1")
    close(sm[2, 0], 1.0, "softmax singleton group -> 1")


def test_layers():
    rng = np.random.RandomState(1234)
    F, O = 5, 4
    for gname, ei in (("G1", EI), ("G2", EI2), ("empty", EI_EMPTY)):
        x = rnd(rng, N, F)
        W, b = rnd(rng, O, F), rnd(rng, O)
        ew = rng.uniform(0.5, 2.0, size=ei.shape[1])
        for improved in (False, True):
            for use_w in (False, True):
                e_w = ew if use_w else None
                close(R.gcn_conv(x, ei, W, b, edge_weight=e_w, improved=improved),
                      L_gcn(x, ei, W, b, N, improved=improved, edge_weight=e_w),
                      f"GCN {gname} improved={improved} weights={use_w}")
        close(R.gcn_conv(x, ei, W, b, add_self_loops=False),
              L_gcn(x, ei, W, b, N, self_loops=False), f"GCN {gname} no self loops")
        close(R.gcn_conv(x, ei, W, None, normalize=False),
              L_gcn(x, ei, W, None, N, self_loops=False, normalize=False),
              f"GCN {gname} normalize=False")
        close(R.gcn_conv(x, ei, W, b, edge_weight=ew, normalize=False),
              L_gcn(x, ei, W, b, N, self_loops=False, normalize=False, edge_weight=ew),
              f"GCN {gname} normalize=False weighted")

        Wl, bl, Wr = rnd(rng, O, F), rnd(rng, O), rnd(rng, O, F)
        for aggr in ("mean", "max", "sum"):
            for norm in (False, True):
                close(R.sage_conv(x, ei, Wl, bl, Wr, aggr=aggr, normalize=norm),
                      L_sage(x, ei, N, Wl, bl, Wr, aggr, norm),
                      f"SAGE {gname} aggr={aggr} normalize={norm}")
            close(R.sage_conv(x, ei, Wl, None, None, aggr=aggr),
                  L_sage(x, ei, N, Wl, None, None, aggr, False),
                  f"SAGE {gname} aggr={aggr} root_weight=False bias=False")

        for heads, C, concat in ((1, 3, True), (3, 2, True), (3, 2, False), (2, 4, False)):
            Wg = rnd(rng, heads * C, F)
            a_s, a_d = rnd(rng, 1, heads, C, scale=2), rnd(rng, 1, heads, C, scale=2)
            bg = rnd(rng, heads * C if concat else C)
            for loops in (True, False):
                close(R.gat_conv(x, ei, Wg, a_s, a_d, bg, heads=heads, concat=concat,
                                 add_self_loops=loops),
                      L_gat(x, ei, N, Wg, a_s, a_d, bg, heads, concat, self_loops=loops),
                      f"GAT {gname} H={heads} C={C} concat={concat} loops={loops}")
            _, (ei_l, alpha) = R.gat_conv(x, ei, Wg, a_s, a_d, bg, heads=heads,
                                          concat=concat, return_attention=True)
            sums = np.zeros((N, heads))
            np.add.at(sums, ei_l[1], alpha)
            close(sums, np.ones((N, heads)), f"GAT {gname} H={heads} alpha sums to 1 per target")

        sd = make_weights.gin_weights(np.random.RandomState(7), F, 3, hidden=6)
        sd = {k: np.asarray(v, dtype=np.float64) for k, v in sd.items()}
        out = R.gin_conv(x, ei, lambda z: R.mlp(z, sd, "conv1.nn."), sd["conv1.eps"])
        close(out, L_gin(x, ei, N, sd, "conv1."), f"GIN {gname} conv1 (eps=0.1, BN eval)")


def test_models():
    """Full model forwards from make_weights' state dicts (small F, C) vs loops."""
    rng = np.random.RandomState(99)
    F, C = 9, 3
    x = rng.uniform(0, 1, size=(N, F))
    x[5] = 0.0
    ws = make_weights.build_all(F, C, seed=5)
    for gname, ei in (("G1", EI), ("G2", EI2)):
        sd = {k: np.asarray(v, dtype=np.float64) for k, v in ws["sage.safetensors"].items()}
        for aggr in ("mean", "max", "sum"):
            h = L_relu(L_sage(x, ei, N, sd["conv1.lin_l.weight"], sd["conv1.lin_l.bias"],
                              sd["conv1.lin_r.weight"], aggr, False))
            ref = L_log_softmax(L_sage(h, ei, N, sd["conv2.lin_l.weight"],
                                       sd["conv2.lin_l.bias"], sd["conv2.lin_r.weight"],
                                       aggr, False))
            close(R.sage_forward(x, ei, ws["sage.safetensors"], aggr=aggr), ref,
                  f"model SAGE {gname} {aggr}")

        for fname, c1, fwd in (("gat.safetensors", True, R.gat_forward),
                               ("gat_mean.safetensors", False, R.gat_mean_forward)):
            sd = {k: np.asarray(v, dtype=np.float64) for k, v in ws[fname].items()}
            H1, H2 = sd["conv1.att_src"].shape[1], sd["conv2.att_src"].shape[1]
            h = L_elu(L_gat(x, ei, N, sd["conv1.lin.weight"], sd["conv1.att_src"],
                            sd["conv1.att_dst"], sd["conv1.bias"], H1, c1))
            ref = L_log_softmax(L_gat(h, ei, N, sd["conv2.lin.weight"], sd["conv2.att_src"],
                                      sd["conv2.att_dst"], sd["conv2.bias"], H2, False))
            close(fwd(x, ei, ws[fname]), ref, f"model {fname} {gname}")

        sd = {k: np.asarray(v, dtype=np.float64) for k, v in ws["gin.safetensors"].items()}
        ref = L_log_softmax(L_gin(L_relu(L_gin(x, ei, N, sd, "conv1.")), ei, N, sd, "conv2."))
        close(R.gin_forward(x, ei, ws["gin.safetensors"]), ref, f"model GIN {gname}")

        gsd = {"conv1.lin.weight": rng.uniform(-1, 1, (4, F)), "conv1.bias": rng.uniform(-1, 1, 4),
               "conv2.lin.weight": rng.uniform(-1, 1, (C, 4)), "conv2.bias": rng.uniform(-1, 1, C)}
        ref = L_log_softmax(L_gcn(L_relu(L_gcn(x, ei, gsd["conv1.lin.weight"], gsd["conv1.bias"],
                                               N)), ei, gsd["conv2.lin.weight"],
                                  gsd["conv2.bias"], N))
        close(R.gcn_forward(x, ei, gsd), ref, f"model GCN {gname}")

    # key names / shapes written by make_weights for the real sizes
    full = make_weights.build_all()
    shapes = {f: {k: list(v.shape) for k, v in sd.items()} for f, sd in full.items()}
    check(shapes["gat.safetensors"] == {
        "conv1.lin.weight": [64, 1433], "conv1.att_src": [1, 8, 8], "conv1.att_dst": [1, 8, 8],
        "conv1.bias": [64], "conv2.lin.weight": [7, 64], "conv2.att_src": [1, 1, 7],
        "conv2.att_dst": [1, 1, 7], "conv2.bias": [7]}, "make_weights: gat shapes")
    check(shapes["gat_mean.safetensors"] == {
        "conv1.lin.weight": [32, 1433], "conv1.att_src": [1, 4, 8], "conv1.att_dst": [1, 4, 8],
        "conv1.bias": [8], "conv2.lin.weight": [14, 8], "conv2.att_src": [1, 2, 7],
        "conv2.att_dst": [1, 2, 7], "conv2.bias": [7]}, "make_weights: gat_mean shapes")
    check(shapes["sage.safetensors"] == {
        "conv1.lin_l.weight": [16, 1433], "conv1.lin_l.bias": [16], "conv1.lin_r.weight": [16, 1433],
        "conv2.lin_l.weight": [7, 16], "conv2.lin_l.bias": [7], "conv2.lin_r.weight": [7, 16]},
        "make_weights: sage shapes")
    g = shapes["gin.safetensors"]
    check(g["conv1.nn.lins.0.weight"] == [32, 1433] and g["conv2.nn.lins.1.weight"] == [7, 32]
          and g["conv1.eps"] == [1] and g["conv1.nn.norms.0.module.num_batches_tracked"] == []
          and full["gin.safetensors"]["conv1.nn.norms.0.module.num_batches_tracked"].dtype
          == np.int64 and len(g) == 20, "make_weights: gin keys/shapes")


def run(cmd):
    p = subprocess.run([sys.executable] + cmd, capture_output=True, text=True)
    return p.returncode, p.stdout + p.stderr


def test_cli():
    with tempfile.TemporaryDirectory() as d:
        rng = np.random.RandomState(3)
        data = os.path.join(d, "data")
        os.makedirs(data)
        F, C = 11, 7
        x = (rng.uniform(size=(N, F)) < 0.4).astype(np.float32)
        x[5] = 0
        np.save(os.path.join(data, "x.npy"), x)
        np.save(os.path.join(data, "edge_index.npy"), EI)
        np.save(os.path.join(data, "y.npy"), np.array([0, 1, 2, 3, 4, 5], dtype=np.int64))
        np.save(os.path.join(data, "test_mask.npy"), np.ones(N, dtype=bool))
        wd = os.path.join(d, "w")
        rc, out = run([os.path.join(HERE, "make_weights.py"), wd, "--in-features", str(F),
                       "--classes", str(C)])
        check(rc == 0, "cli: make_weights " + out.strip())
        st_w = st.load(os.path.join(wd, "sage.safetensors"))
        xn = R.normalize_features(x)
        for model, extra, fn in (
                ("sage", ["--aggr", "max"], lambda sd: R.sage_forward(xn, EI, sd, aggr="max")),
                ("gat", [], lambda sd: R.gat_forward(xn, EI, sd)),
                ("gat_mean", [], lambda sd: R.gat_mean_forward(xn, EI, sd)),
                ("gin", [], lambda sd: R.gin_forward(xn, EI, sd))):
            o = os.path.join(d, model + ".npy")
            wf = os.path.join(wd, model + ".safetensors")
            rc, out = run([os.path.join(HERE, "reference.py"), model, "--data", data,
                           "--weights", wf, "--out", o, "--normalize-features"] + extra)
            check(rc == 0, f"cli: reference {model}: {out.strip()}")
            got = np.load(o)
            check(got.dtype == np.float64, f"cli: reference {model} writes float64")
            close(got, fn(st.load(wf)), f"cli: reference {model} output")
            rc, _ = run([os.path.join(HERE, "compare.py"), o, o])
            check(rc == 0, f"cli: compare {model} identical -> PASS")
            pert = os.path.join(d, "pert.npy")
            np.save(pert, got * (1 + 1e-7))
            rc, _ = run([os.path.join(HERE, "compare.py"), pert, o, "--rtol", "1e-6"])
            check(rc == 0, f"cli: compare {model} 1e-7 relative -> PASS")
            bump = got.copy()
            bump[2, 1] += 1e-4 * np.abs(got).max()
            np.save(pert, bump)
            rc, out = run([os.path.join(HERE, "compare.py"), pert, o, "--rtol", "1e-6"])
            check(rc == 1 and "FAIL" in out, f"cli: compare {model} 1e-4 bump -> FAIL")
        del st_w
        np.save(os.path.join(d, "short.npy"), np.zeros((N, C - 1)))
        rc, _ = run([os.path.join(HERE, "compare.py"), os.path.join(d, "short.npy"),
                     os.path.join(d, "gin.npy")])
        check(rc == 1, "cli: compare shape mismatch -> FAIL")
        nan = np.load(os.path.join(d, "gin.npy"))
        nan[0, 0] = np.nan
        np.save(os.path.join(d, "nan.npy"), nan)
        rc, _ = run([os.path.join(HERE, "compare.py"), os.path.join(d, "nan.npy"),
                     os.path.join(d, "gin.npy")])
        check(rc == 1, "cli: compare NaN -> FAIL")
        onehot = np.log(np.eye(C)[[0, 1, 2, 3, 0, 0]] + 1e-9)  # 4 of 6 right
        np.save(os.path.join(d, "oh.npy"), onehot)
        rc, out = run([os.path.join(HERE, "accuracy.py"), os.path.join(d, "oh.npy"),
                       "--data", data])
        check(rc == 0 and out.strip() == "test accuracy: 66.7%", f"cli: accuracy ({out.strip()})")

    if os.path.isdir(CORA) and os.path.exists(GCN_W):
        with tempfile.TemporaryDirectory() as d:
            o = os.path.join(d, "gcn.npy")
            rc, out = run([os.path.join(HERE, "reference.py"), "gcn", "--data", CORA,
                           "--weights", GCN_W, "--out", o, "--normalize-features"])
            check(rc == 0, "cli: reference gcn on Cora")
            rc, out = run([os.path.join(HERE, "accuracy.py"), o, "--data", CORA])
            check(rc == 0 and out.strip() == "test accuracy: 82.0%",
                  f"Cora GCN with shared weights: {out.strip()} (expect 82.0%)")
    else:
        print("skip: Cora / shared GCN weights not found")


def main():
    for t in (test_st, test_hand_numbers, test_graph_utils, test_layers, test_models, test_cli):
        t()
    if FAILS:
        print(f"{len(FAILS)} check(s) FAILED")
        return 1
    print("all reference self-tests passed")
    return 0


if __name__ == "__main__":
    sys.exit(main())
