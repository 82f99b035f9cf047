#!/usr/bin/env python3
"""layer_options.py GNNRUN WORKDIR [ENGINE]: every standard layer's constructor
options, one layer at a time, against the NumPy references of PyG 2.8.

The Cora tests only cover each layer's defaults.  Here every case is a
one-layer model

    model M(g: graph, x: f32[N, 8]) -> f32[N, OUT] {
      layer conv = CTOR(...)
      return conv(g, x)
    }

with seeded random float32 weights uniform in [-1, 1] (large enough that
the outputs are far from constant, so a wrong option shows), named exactly
as PyG's state_dict (prefix ``conv.``; gnnrun rejects both missing and
unexpected names, so the set of parameters a constructor option creates is
checked too).  Each case runs under gnnrun (the float64 interpreter) on two
graphs and is compared with the reference as tests/ref/compare.py does
(rtol 1e-6, atol = 1e-6 * max|ref|):

  * "small": tests/ref/small_graph.py with 8 features -- an existing self
    loop (2->2), a duplicated edge (0->1 twice), a node with no in-edges
    (5) and an isolated last node (6);
  * "random": 30 nodes, 120 seeded random unweighted edges (which include
    self loops and duplicates of their own).

Prints one line per failure and then `layer options: K cases, F failed`
(a case is one option combination, checked on both graphs); exit status 1
if anything failed.
"""
import os
import subprocess
import sys

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
REFDIR = os.path.join(os.path.dirname(HERE), "ref")
sys.path.insert(0, REFDIR)

import pyg_ref as R  # noqa: E402
import st  # noqa: E402
from compare import compare  # noqa: E402

F = 8        # input features
RTOL = 1e-6


# ---------------------------------------------------------------------------
# references the shared pyg_ref.py does not have (built from its pieces)
# ---------------------------------------------------------------------------

def mlp_ref(x, sd, prefix, norm="batch_norm", act="relu", plain_last=True):
    """Mirrors torch_geometric.nn.models.MLP(channel_list, norm, act,
    plain_last, dropout=0, bias, act_first=False) in eval mode:

        for k in range(L):
            x = lins[k](x)
            if k < L - 1 or not plain_last:
                x = norms[k](x)        # BatchNorm eval; Identity if norm=None
                x = act(x)
                x = dropout(x)         # identity

    pyg_ref.mlp covers the defaults only (batch_norm, relu, plain_last)."""
    acts = {"relu": R.relu, "elu": R.elu, "tanh": np.tanh,
            "sigmoid": lambda v: 1.0 / (1.0 + np.exp(-v)), "none": lambda v: v}
    num = 0
    while f"{prefix}lins.{num}.weight" in sd:
        num += 1
    for k in range(num):
        x = R.linear(x, sd[f"{prefix}lins.{k}.weight"], sd.get(f"{prefix}lins.{k}.bias"))
        if k < num - 1 or not plain_last:
            if norm == "batch_norm":
                p = f"{prefix}norms.{k}.module."
                x = R.batch_norm_eval(x, sd[p + "weight"], sd[p + "bias"],
                                      sd[p + "running_mean"], sd[p + "running_var"])
            x = acts[act](x)
    return x


def sage_project_ref(x, ei, sd):
    """SAGEConv(project=True): neighbours are aggregated from
    relu(lin(x)) but the root term uses the *unprojected* x
    (``x = (self.lin(x[0]).relu(), x[1])``; ``lin_r(x[1])``)."""
    xs = R.relu(R.linear(x, sd["conv.lin.weight"], sd["conv.lin.bias"]))
    agg = R.scatter(xs[ei[0]], ei[1], x.shape[0], "mean")
    return R.linear(agg, sd["conv.lin_l.weight"], sd.get("conv.lin_l.bias")) + \
        R.linear(x, sd["conv.lin_r.weight"])


def gat_ref(x, ei, sd, heads=1, concat=True, negative_slope=0.2, add_self_loops=True):
    """GATConv forward; with residual (PyG >= 2.6) ``out = out + res(x)``
    is added before the bias, res = Linear(in, H*C or C, bias=False)."""
    out = R.gat_conv(x, ei, sd["conv.lin.weight"], sd["conv.att_src"], sd["conv.att_dst"],
                     None, heads=heads, concat=concat, negative_slope=negative_slope,
                     add_self_loops=add_self_loops)
    if "conv.res.weight" in sd:
        out = out + R.linear(x, sd["conv.res.weight"])
    if "conv.bias" in sd:
        out = out + sd["conv.bias"]
    return out


# ---------------------------------------------------------------------------
# cases: (name, constructor, output width, {param: shape}, reference)
# reference(x, edge_index, sd) -> float64 [N, out]; sd holds float64 copies
# ---------------------------------------------------------------------------

def gcn_cases():
    """GCNConv (PyG 2.8): transform, then D^-1/2 (A + I) D^-1/2 with
    in-degrees by target.  Pins down: add_remaining_self_loops replacing the
    existing loop (small graph node 2) and keeping duplicates; a node with
    no in-edges under add_self_loops=False (deg 0 -> weight 0, not inf/NaN);
    improved=True on an UNWEIGHTED graph (since PyG 2.3 the new loops weigh
    1, not 2, because fill_value is ignored when edge_weight is None);
    normalize=False (add_self_loops defaults to normalize, so no loops and
    a plain sum); cached=True is accepted and changes nothing; bias=False
    drops conv.bias."""
    W = {"conv.lin.weight": (6, F), "conv.bias": (6,)}
    nob = {"conv.lin.weight": (6, F)}

    def ref(**kw):
        return lambda x, ei, sd: R.gcn_conv(x, ei, sd["conv.lin.weight"], sd.get("conv.bias"), **kw)

    return [
        ("gcn default", "GCNConv(8, 6)", 6, W, ref()),
        ("gcn improved=true", "GCNConv(8, 6, improved=true)", 6, W, ref(improved=True)),
        ("gcn cached=true", "GCNConv(8, 6, cached=true)", 6, W, ref()),
        ("gcn add_self_loops=false", "GCNConv(8, 6, add_self_loops=false)", 6, W,
         ref(add_self_loops=False)),
        ("gcn normalize=false", "GCNConv(8, 6, normalize=false)", 6, W, ref(normalize=False)),
        ("gcn normalize=false add_self_loops=false",
         "GCNConv(8, 6, add_self_loops=false, normalize=false)", 6, W,
         ref(add_self_loops=False, normalize=False)),
        ("gcn bias=false", "GCNConv(8, 6, bias=false)", 6, nob, ref()),
    ]


def sage_cases():
    """SAGEConv (PyG 2.8): lin_l(aggr_j x_j) + lin_r(x_i), no self loops.
    Pins down: mean/max/sum over duplicate edges and an existing loop,
    empty neighbourhoods giving 0 (also for max, where the true maximum of
    a non-empty group may be negative); "add" as a synonym of "sum";
    normalize=True (F.normalize after the root term); root_weight=False
    (no lin_r); bias=False (lin_l without bias; lin_r never has one);
    project=True (lin: Linear(in, in, bias=True), relu, neighbours only)."""
    def W(root=True, bias=True, project=False):
        w = {"conv.lin_l.weight": (5, F)}
        if bias:
            w["conv.lin_l.bias"] = (5,)
        if root:
            w["conv.lin_r.weight"] = (5, F)
        if project:
            w["conv.lin.weight"] = (F, F)
            w["conv.lin.bias"] = (F,)
        return w

    def ref(aggr="mean", normalize=False):
        return lambda x, ei, sd: R.sage_conv(
            x, ei, sd["conv.lin_l.weight"], sd.get("conv.lin_l.bias"),
            sd.get("conv.lin_r.weight"), aggr=aggr, normalize=normalize)

    return [
        ("sage aggr=mean", 'SAGEConv(8, 5, aggr="mean")', 5, W(), ref("mean")),
        ("sage aggr=max", 'SAGEConv(8, 5, aggr="max")', 5, W(), ref("max")),
        ("sage aggr=sum", 'SAGEConv(8, 5, aggr="sum")', 5, W(), ref("sum")),
        ("sage aggr=add", 'SAGEConv(8, 5, aggr="add")', 5, W(), ref("sum")),
        ("sage normalize=true", "SAGEConv(8, 5, normalize=true)", 5, W(),
         ref(normalize=True)),
        ("sage root_weight=false", "SAGEConv(8, 5, root_weight=false)", 5, W(root=False), ref()),
        ("sage bias=false", "SAGEConv(8, 5, bias=false)", 5, W(bias=False), ref()),
        ("sage project=true", "SAGEConv(8, 5, project=true)", 5, W(project=True),
         sage_project_ref),
    ]


def gat_cases():
    """GATConv (PyG 2.8, single `lin`): per-head attention, softmax over
    each target's incoming edges.  Pins down: heads concatenated (index
    h*C + c) vs averaged; negative_slope; add_self_loops (existing loops
    replaced by exactly one per node) and add_self_loops=False (a target
    with no in-edges gets 0 + bias; the existing loop 2->2 and the
    duplicated edge both count); bias=False; residual=True (res.weight
    [H*C, in] when concatenating, [C, in] when averaging, no bias);
    heads=1."""
    def W(h, c, concat=True, bias=True, residual=False):
        width = h * c if concat else c
        w = {"conv.lin.weight": (h * c, F), "conv.att_src": (1, h, c),
             "conv.att_dst": (1, h, c)}
        if bias:
            w["conv.bias"] = (width,)
        if residual:
            w["conv.res.weight"] = (width, F)
        return w

    def ref(**kw):
        return lambda x, ei, sd: gat_ref(x, ei, sd, **kw)

    return [
        ("gat heads=3 concat=true", "GATConv(8, 4, heads=3, concat=true)", 12, W(3, 4),
         ref(heads=3)),
        ("gat heads=3 concat=false", "GATConv(8, 4, heads=3, concat=false)", 4,
         W(3, 4, concat=False), ref(heads=3, concat=False)),
        ("gat negative_slope=0.1", "GATConv(8, 4, heads=2, negative_slope=0.1)", 8, W(2, 4),
         ref(heads=2, negative_slope=0.1)),
        ("gat add_self_loops=false", "GATConv(8, 4, heads=2, add_self_loops=false)", 8,
         W(2, 4), ref(heads=2, add_self_loops=False)),
        ("gat bias=false", "GATConv(8, 4, heads=2, bias=false)", 8, W(2, 4, bias=False),
         ref(heads=2)),
        ("gat residual=true concat=true", "GATConv(8, 4, heads=3, residual=true)", 12,
         W(3, 4, residual=True), ref(heads=3)),
        ("gat residual=true concat=false",
         "GATConv(8, 4, heads=3, concat=false, residual=true)", 4,
         W(3, 4, concat=False, residual=True), ref(heads=3, concat=False)),
        ("gat heads=1", "GATConv(8, 6, heads=1)", 6, W(1, 6), ref()),
        ("gat dropout=0.6 (identity at inference)", "GATConv(8, 4, heads=2, dropout=0.6)", 8,
         W(2, 4), ref(heads=2)),
    ]


def gin_cases():
    """GINConv (PyG 2.8): nn((1 + eps) x_i + sum_j x_j), no self loops,
    eps a [1] tensor in the state_dict (buffer, or parameter with
    train_eps).  Pins down: eps taken from the weights file (always 0.3
    here: PyG's load_state_dict overrides the constructor's value, which is
    only the initial one); the MLP's key paths (lins.k, norms.k.module.*
    including num_batches_tracked); norm="none" (no norms.* at all);
    act="elu" with plain_last=False (norm + act after the LAST Linear too,
    so norms.1 exists)."""
    def W(channels, norm=True, plain_last=True):
        w = {"conv.eps": (1,)}
        n = len(channels) - 1
        for k in range(n):
            w[f"conv.nn.lins.{k}.weight"] = (channels[k + 1], channels[k])
            w[f"conv.nn.lins.{k}.bias"] = (channels[k + 1],)
        inner = n - 1 if plain_last else n
        if norm:
            for k in range(inner):
                p = f"conv.nn.norms.{k}.module."
                for s in ("weight", "bias", "running_mean", "running_var"):
                    w[p + s] = (channels[k + 1],)
                w[p + "num_batches_tracked"] = ()
        return w

    def ref(**kw):
        return lambda x, ei, sd: R.gin_conv(
            x, ei, lambda z: mlp_ref(z, sd, "conv.nn.", **kw), sd["conv.eps"])

    return [
        ("gin eps=0.3 MLP([8,16,6])", "GINConv(MLP([8, 16, 6]), eps=0.3)", 6,
         W([8, 16, 6]), ref()),
        ("gin eps from the weights file (constructor eps=0)", "GINConv(MLP([8, 16, 6]))", 6,
         W([8, 16, 6]), ref()),
        ("gin train_eps=true", "GINConv(MLP([8, 16, 6]), eps=0.3, train_eps=true)", 6,
         W([8, 16, 6]), ref()),
        ('gin MLP norm="none"', 'GINConv(MLP([8, 16, 6], norm="none"), eps=0.3)', 6,
         W([8, 16, 6], norm=False), ref(norm="none")),
        ('gin MLP act="elu" plain_last=false',
         'GINConv(MLP([8, 16, 6], act="elu", plain_last=false), eps=0.3)', 6,
         W([8, 16, 6], plain_last=False), ref(act="elu", plain_last=False)),
        ('gin MLP 3 layers act="tanh"', 'GINConv(MLP([8, 16, 12, 6], act="tanh"), eps=0.3)', 6,
         W([8, 16, 12, 6]), ref(act="tanh")),
    ]


def linear_cases():
    """Linear alone: y = x W^T + b, W [out, in]; bias=False drops
    conv.bias.  (No graph: the model's forward ignores g.)"""
    ref = lambda x, ei, sd: R.linear(x, sd["conv.weight"], sd.get("conv.bias"))  # noqa: E731
    return [
        ("linear bias=true", "Linear(8, 6)", 6,
         {"conv.weight": (6, F), "conv.bias": (6,)}, ref),
        ("linear bias=false", "Linear(8, 6, bias=false)", 6, {"conv.weight": (6, F)}, ref),
    ]


# ---------------------------------------------------------------------------
# driver
# ---------------------------------------------------------------------------

def make_weights(shapes, seed):
    """float32 weights uniform in [-1, 1]; BatchNorm running_var in
    [0.5, 1.5] (must be positive), num_batches_tracked an i64 scalar,
    GIN's eps = 0.3 (the constructor's value, as PyG's buffer would hold)."""
    rng = np.random.default_rng(seed)
    w = {}
    for name, shape in shapes.items():
        if name.endswith("num_batches_tracked"):
            w[name] = np.array(10, dtype=np.int64)
        elif name.endswith("running_var"):
            w[name] = rng.uniform(0.5, 1.5, size=shape).astype(np.float32)
        elif name == "conv.eps":
            w[name] = np.full(shape, 0.3, dtype=np.float32)
        else:
            w[name] = rng.uniform(-1.0, 1.0, size=shape).astype(np.float32)
    return w


def make_graphs(workdir):
    """{name: (edge_index path, x path)} for the two graphs."""
    small = os.path.join(workdir, "small")
    subprocess.run([sys.executable, os.path.join(REFDIR, "small_graph.py"), small,
                    "--features", str(F)], check=True)
    rnd = os.path.join(workdir, "random")
    os.makedirs(rnd, exist_ok=True)
    rng = np.random.default_rng(2024)
    n, e = 30, 120
    ei = rng.integers(0, n, size=(2, e)).astype(np.int64)
    np.save(os.path.join(rnd, "edge_index.npy"), ei)
    np.save(os.path.join(rnd, "x.npy"), rng.uniform(-1, 1, size=(n, F)))
    return {g: (os.path.join(d, "edge_index.npy"), os.path.join(d, "x.npy"))
            for g, d in (("small", small), ("random", rnd))}


def run_case(gnnrun, workdir, graphs, idx, case):
    """Returns a list of failure messages (empty if the case passed)."""
    name, ctor, width, shapes, ref = case
    call = "conv(x)" if ctor.startswith("Linear") else "conv(g, x)"
    model = os.path.join(workdir, f"case{idx:02d}.gnn")
    with open(model, "w") as f:
        f.write(f"# {name}\nmodel M(g: graph, x: f32[N, {F}]) -> f32[N, {width}] {{\n"
                f"  layer conv = {ctor}\n  return {call}\n}}\n")
    weights = os.path.join(workdir, f"case{idx:02d}.safetensors")
    w = make_weights(shapes, seed=100 + idx)
    st.save(weights, w)
    sd = {k: np.asarray(v, dtype=np.float64) for k, v in w.items()}
    failures = []
    for gname, (ei_path, x_path) in graphs.items():
        out = os.path.join(workdir, f"case{idx:02d}-{gname}.npy")
        p = subprocess.run([gnnrun, model, "--engine=" + ENGINE, "--graph", ei_path, "--input", "x=" + x_path,
                            "--weights", weights, "--output", out, "--output-dtype=f64"],
                           capture_output=True, text=True)
        if p.returncode != 0:
            failures.append(f"{name} [{gname}]: gnnrun exit {p.returncode}: "
                            f"{p.stderr.strip()}")
            continue
        x = np.load(x_path).astype(np.float64)
        ei = np.load(ei_path)
        expect = ref(x, ei, sd)
        ok, msg = compare(np.load(out), expect, RTOL if ENGINE == "interp" else RTOL_F32)
        if ok and np.ptp(expect) < 1e-3:   # guard the test itself: outputs must vary
            ok, msg = False, "reference output is (near) constant: the case proves nothing"
        if not ok:
            failures.append(f"{name} [{gname}]: {msg}")
    return failures


def error_case(gnnrun, workdir, graphs):
    """GCNConv(add_self_loops=true, normalize=false) is PyG's ValueError:
    gnnrun must refuse the model with the library's assert message."""
    model = os.path.join(workdir, "gcn_bad.gnn")
    with open(model, "w") as f:
        f.write(f"model M(g: graph, x: f32[N, {F}]) -> f32[N, 6] {{\n"
                "  layer conv = GCNConv(8, 6, add_self_loops=true, normalize=false)\n"
                "  return conv(g, x)\n}\n")
    weights = os.path.join(workdir, "gcn_bad.safetensors")
    st.save(weights, make_weights({"conv.lin.weight": (6, F), "conv.bias": (6,)}, seed=1))
    ei_path, x_path = graphs["small"]
    p = subprocess.run([gnnrun, model, "--graph", ei_path, "--input", "x=" + x_path,
                        "--weights", weights, "--output", os.path.join(workdir, "bad.npy")],
                       capture_output=True, text=True)
    want = "GCNConv: add_self_loops=true requires normalize=true"
    if p.returncode == 0 or want not in p.stderr:
        return [f"gcn add_self_loops=true normalize=false: expected failure with {want!r}, "
                f"got exit {p.returncode}: {p.stderr.strip()!r}"]
    return []


ENGINE = "interp"
RTOL_F32 = 1e-5   # compiled engines compute in float32


def main():
    global ENGINE
    if len(sys.argv) not in (3, 4):
        sys.exit(__doc__)
    gnnrun, workdir = sys.argv[1], sys.argv[2]
    if len(sys.argv) == 4:
        ENGINE = sys.argv[3]
    os.makedirs(workdir, exist_ok=True)
    graphs = make_graphs(workdir)
    cases = gcn_cases() + sage_cases() + gat_cases() + gin_cases() + linear_cases()
    failed = 0
    for idx, case in enumerate(cases):
        msgs = run_case(gnnrun, workdir, graphs, idx, case)
        for m in msgs:
            print("FAIL:", m)
        failed += bool(msgs)
    msgs = error_case(gnnrun, workdir, graphs)
    for m in msgs:
        print("FAIL:", m)
    failed += bool(msgs)
    print(f"layer options: {len(cases) + 1} cases, {failed} failed")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
