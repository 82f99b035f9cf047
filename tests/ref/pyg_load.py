#!/usr/bin/env python3
"""Loads gnncc-format weights into the PyG model of an example and checks
an expected output against it.

usage: pyg_load.py --model gcn|sage|gat|gin --weights W.safetensors
                   --graph EI.npy --x X.npy --expect OUT.npy [--tol 1e-4]
                   [--numpy | --torch] [--normalize-features] [--aggr mean|max|sum]
                   [--then ARGS ...]

--then starts another run's arguments, run in the same process (PyG is
  imported once); the exit status is the first failing run's.

--torch (the default when torch and torch_geometric import): builds the
  PyG module of examples/<model>/<model>.gnn from torch_geometric.nn layers:
    gcn   GCNConv(F, H) -> relu -> dropout(0.5) -> GCNConv(H, C) -> log_softmax
    sage  SAGEConv(F, H, aggr) -> relu -> dropout(0.5) -> SAGEConv(H, C, aggr)
          -> log_softmax
    gat   dropout(0.6) -> GATConv(F, H, heads, dropout=0.6) -> elu ->
          dropout(0.6) -> GATConv(heads*H, C, heads=1, concat=False,
          dropout=0.6) -> log_softmax
    gin   GINConv(MLP([F, H, H])) -> relu -> GINConv(MLP([H, H, C])) -> log_softmax
  (widths, head counts and concat/mean read off the tensors' shapes: a GAT
  layer averages its heads when its bias has one head's width), loads the
  safetensors with load_state_dict(strict=True) (a missing or unexpected
  name is an error), runs it in eval mode in float64 and compares.
--numpy: the same model through tests/ref/pyg_ref.py (NumPy float64, no
  torch); used automatically when torch or torch_geometric is missing
  (a note on stderr says so).  The weights' names must still be exactly
  the model's (the same strict check, against the names PyG would have).

x is used as given (--normalize-features applies PyG's NormalizeFeatures
first).  Match: max |out - expect| <= tol * max |expect| (tests/ref/
compare.py's rule), and the argmax of every row equal, except rows whose
expected top two are within 2 * tol * max |expect| of each other (a near
tie: counted and reported, not a failure).

Exit status: 0 match; 1 mismatch (or weights that do not fit the model);
2 bad arguments or unreadable inputs; 77 skipped: --torch was asked for
but torch or torch_geometric is missing.
"""
import argparse
import os
import sys

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import pyg_ref  # noqa: E402
import st  # noqa: E402

SKIP = 77
MODELS = ["gcn", "sage", "gat", "gin"]


class Mismatch(Exception):
    pass


# --- the names each model has (for the NumPy path's strict check) ------------

def expected_names(model, sd):
    if model == "gcn":
        return {f"conv{i}.{n}" for i in (1, 2) for n in ("lin.weight", "bias")}
    if model == "sage":
        return {f"conv{i}.{n}" for i in (1, 2)
                for n in ("lin_l.weight", "lin_l.bias", "lin_r.weight")}
    if model == "gat":
        return {f"conv{i}.{n}" for i in (1, 2)
                for n in ("lin.weight", "att_src", "att_dst", "bias")}
    names = set()
    for i in (1, 2):
        p = f"conv{i}.nn."
        k = 0
        while f"{p}lins.{k}.weight" in sd:
            names |= {f"{p}lins.{k}.weight", f"{p}lins.{k}.bias"}
            k += 1
        for j in range(max(k - 1, 1)):
            names |= {f"{p}norms.{j}.module.{n}" for n in
                      ("weight", "bias", "running_mean", "running_var", "num_batches_tracked")}
        names.add(f"conv{i}.eps")
    return names


def numpy_forward(model, sd, x, ei, aggr):
    want = expected_names(model, sd)
    missing, extra = sorted(want - set(sd)), sorted(set(sd) - want)
    if missing or extra:
        raise Mismatch(f"the weights do not fit the {model} model: missing {missing}, "
                       f"unexpected {extra}")
    if model == "sage":
        return pyg_ref.sage_forward(x, ei, sd, aggr=aggr)
    return pyg_ref.MODELS[model](x, ei, sd)


# --- the PyG modules -----------------------------------------------------------

def torch_modules(torch):
    import torch.nn.functional as F
    from torch_geometric.nn import MLP, GATConv, GCNConv, GINConv, SAGEConv

    class GCN(torch.nn.Module):            # examples/gcn/gcn.gnn
        def __init__(self, f, h, c):
            super().__init__()
            self.conv1 = GCNConv(f, h)
            self.conv2 = GCNConv(h, c)

        def forward(self, x, ei):
            h = F.relu(self.conv1(x, ei))
            h = F.dropout(h, p=0.5, training=self.training)
            return F.log_softmax(self.conv2(h, ei), dim=1)

    class SAGE(torch.nn.Module):           # examples/sage/sage.gnn
        def __init__(self, f, h, c, aggr):
            super().__init__()
            self.conv1 = SAGEConv(f, h, aggr=aggr)
            self.conv2 = SAGEConv(h, c, aggr=aggr)

        def forward(self, x, ei):
            h = F.relu(self.conv1(x, ei))
            h = F.dropout(h, p=0.5, training=self.training)
            return F.log_softmax(self.conv2(h, ei), dim=1)

    class GAT(torch.nn.Module):            # examples/gat/gat.gnn
        def __init__(self, f, h1, heads1, cat1, c, heads2, cat2):
            super().__init__()
            self.conv1 = GATConv(f, h1, heads=heads1, concat=cat1, dropout=0.6)
            self.conv2 = GATConv(heads1 * h1 if cat1 else h1, c, heads=heads2, concat=cat2,
                                 dropout=0.6)

        def forward(self, x, ei):
            h = F.dropout(x, p=0.6, training=self.training)
            h = F.elu(self.conv1(h, ei))
            h = F.dropout(h, p=0.6, training=self.training)
            return F.log_softmax(self.conv2(h, ei), dim=1)

    class GIN(torch.nn.Module):            # examples/gin/gin.gnn
        def __init__(self, ch1, ch2):
            super().__init__()
            self.conv1 = GINConv(MLP(ch1))
            self.conv2 = GINConv(MLP(ch2))

        def forward(self, x, ei):
            h = F.relu(self.conv1(x, ei))
            return F.log_softmax(self.conv2(h, ei), dim=1)

    return GCN, SAGE, GAT, GIN


def _shape(sd, k):
    if k not in sd:
        raise Mismatch(f"the weights have no {k} (is this a {k.split('.')[0]} model?)")
    return sd[k].shape


def _mlp_chans(sd, p):
    k, chans = 0, []
    while f"{p}lins.{k}.weight" in sd:
        s = sd[f"{p}lins.{k}.weight"].shape
        chans = chans or [s[1]]
        chans.append(s[0])
        k += 1
    if not chans:
        raise Mismatch(f"the weights have no {p}lins.0.weight")
    return chans


def build_torch(torch, model, sd, aggr):
    GCN, SAGE, GAT, GIN = torch_modules(torch)
    if model == "gcn":
        o1, f = _shape(sd, "conv1.lin.weight")
        m = GCN(f, o1, _shape(sd, "conv2.lin.weight")[0])
    elif model == "sage":
        o1, f = _shape(sd, "conv1.lin_l.weight")
        m = SAGE(f, o1, _shape(sd, "conv2.lin_l.weight")[0], aggr)
    elif model == "gat":
        def layer(p):
            _, heads, out = _shape(sd, p + "att_src")
            concat = heads == 1 or _shape(sd, p + "bias")[0] == heads * out
            return heads, out, concat
        h1, c1, cat1 = layer("conv1.")
        h2, c2, cat2 = layer("conv2.")
        m = GAT(_shape(sd, "conv1.lin.weight")[1], c1, h1, cat1, c2, h2, cat2)
    else:
        m = GIN(_mlp_chans(sd, "conv1.nn."), _mlp_chans(sd, "conv2.nn."))
    m = m.double()
    state = {}
    for k, v in sd.items():
        t = torch.from_numpy(np.ascontiguousarray(v))
        state[k] = t.double() if t.is_floating_point() else t
    try:
        m.load_state_dict(state, strict=True)
    except RuntimeError as e:
        raise Mismatch(f"load_state_dict(strict=True) failed: {e}") from None
    return m.eval()


def torch_forward(torch, model, sd, x, ei, aggr):
    m = build_torch(torch, model, sd, aggr)
    with torch.no_grad():
        return m(torch.from_numpy(x), torch.from_numpy(ei)).numpy()


# --- the check ---------------------------------------------------------------------

def check(out, expect, tol):
    """returns (ok, lines of report)"""
    out = np.asarray(out, np.float64)
    exp = np.asarray(expect, np.float64)
    if out.shape != exp.shape:
        return False, [f"shape: the model gives {list(out.shape)}, expected {list(exp.shape)}"]
    if not np.all(np.isfinite(exp)):
        return False, ["the expected output has non-finite values"]
    scale = float(np.max(np.abs(exp))) if exp.size else 0.0
    atol = tol * scale
    diff = np.abs(out - exp)
    worst = float(np.max(diff)) if diff.size else 0.0
    lines = [f"max |out - expect| = {worst:.3g} (allowed {atol:.3g} = {tol:g} * max |expect| "
             f"{scale:.4g})"]
    ok = worst <= atol and bool(np.all(np.isfinite(out)))
    if not np.all(np.isfinite(out)):
        lines.append("the model's output has non-finite values")
    if worst > atol:
        r, c = np.unravel_index(int(np.argmax(diff)), diff.shape) if diff.ndim == 2 else (0, 0)
        lines.append(f"worst at [{r}, {c}]: model {out[r, c]:.9g}, expected {exp[r, c]:.9g}"
                     if diff.ndim == 2 else "")
    if exp.ndim == 2 and exp.shape[1] > 0 and exp.shape[0] > 0:
        pa, pe = out.argmax(axis=1), exp.argmax(axis=1)
        srt = np.sort(exp, axis=1)
        margin = srt[:, -1] - (srt[:, -2] if exp.shape[1] > 1 else -np.inf)
        differ = pa != pe
        ties = differ & (margin <= 2 * atol)
        hard = differ & ~ties
        lines.append(f"argmax: {int((~differ).sum())} of {len(pe)} rows agree"
                     + (f"; {int(ties.sum())} differ on near ties" if ties.any() else "")
                     + (f"; {int(hard.sum())} DIFFER (first rows "
                        f"{np.flatnonzero(hard)[:5].tolist()})" if hard.any() else ""))
        ok = ok and not hard.any()
    return ok, lines


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--model", choices=MODELS, required=True)
    ap.add_argument("--weights", required=True)
    ap.add_argument("--graph", required=True, help="edge_index.npy, int [2, E]")
    ap.add_argument("--x", required=True, help="features .npy [N, F] (used as given)")
    ap.add_argument("--expect", required=True, help="expected log-probabilities .npy [N, C]")
    ap.add_argument("--tol", type=float, default=1e-4)
    g = ap.add_mutually_exclusive_group()
    g.add_argument("--numpy", dest="backend", action="store_const", const="numpy",
                   help="the NumPy reference (tests/ref/pyg_ref.py), no torch")
    g.add_argument("--torch", dest="backend", action="store_const", const="torch",
                   help="PyG itself; exit 77 (skipped) without torch")
    ap.add_argument("--normalize-features", action="store_true")
    ap.add_argument("--aggr", choices=["mean", "max", "sum"], default="mean",
                    help="SAGEConv's aggregation (sage only)")
    a = ap.parse_args(argv)

    try:
        x = np.load(a.x).astype(np.float64)
        ei = np.load(a.graph).astype(np.int64)
        expect = np.load(a.expect)
        sd = st.load(a.weights)
    except (OSError, ValueError) as e:
        print(f"pyg_load: {e}", file=sys.stderr)
        return 2
    if ei.ndim != 2 or ei.shape[0] != 2:
        ap.error(f"edge_index must be [2, E], got {list(ei.shape)}")
    if x.ndim != 2 or (ei.size and (ei.min() < 0 or ei.max() >= x.shape[0])):
        ap.error("x must be [N, F] and edge_index's node ids below N")
    if a.normalize_features:
        x = pyg_ref.normalize_features(x)

    backend, torch = a.backend, None
    if backend != "numpy":
        try:
            import warnings
            with warnings.catch_warnings():   # torch.jit.script's deprecation, in PyG
                warnings.simplefilter("ignore")
                import torch
                import torch_geometric  # noqa: F401
            backend = "torch"
        except ImportError as e:
            if backend == "torch":
                print(f"pyg_load: skipped: --torch needs torch and torch_geometric ({e})")
                return SKIP
            print(f"pyg_load: torch_geometric unavailable ({e}): using the NumPy reference",
                  file=sys.stderr)
            backend = "numpy"
    try:
        if backend == "torch":
            out = torch_forward(torch, a.model, sd, x, ei, a.aggr)
            what = f"PyG {__import__('torch_geometric').__version__} (torch {torch.__version__})"
        else:
            out = numpy_forward(a.model, sd, x, ei, a.aggr)
            what = "the NumPy reference (pyg_ref.py)"
    except Mismatch as e:
        print(f"pyg_load: MISMATCH: {a.model}: {e}")
        return 1
    ok, lines = check(out, expect, a.tol)
    print(f"pyg_load: {a.model} through {what}: " + ("match" if ok else "MISMATCH"))
    for ln in lines:
        if ln:
            print("  " + ln)
    return 0 if ok else 1


def main_all(argv):
    """ARGS [--then ARGS ...]: each run of main in turn, in one process
    (torch and PyG imported once, seconds saved per run); the exit
    status is the first failing run's"""
    groups = [[]]
    for w in argv:
        if w == "--then":
            groups.append([])
        else:
            groups[-1].append(w)
    rc = 0
    for g in groups:
        r = main(g)
        sys.stdout.flush()
        rc = rc or r
    return rc


if __name__ == "__main__":
    sys.exit(main_all(sys.argv[1:]))
