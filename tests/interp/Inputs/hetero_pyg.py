#!/usr/bin/env python3
"""hetero_pyg.py GNNRUN WORKDIR [--engines LIST] [--cases LIST]: a 2-layer
GraphSAGE made heterogeneous by torch_geometric.nn.to_hetero (aggr "sum",
"mean", "max", "min"), and a 2-layer GAT (GATConv((-1, -1), ...,
add_self_loops=False), 2 heads then 1; aggr "sum": case gat-sum) against
gnncc on relations (graph[Ns -> Nd, E]), the same weights.

A hand-made graph of three node types, each with its own feature width
(author 3, paper 5, inst 2), and five relations:

  author__writes__paper       6 edges, a duplicate
  paper__rev_writes__author   the reverse of writes
  paper__cites__paper         same type on both ends (graph[N_paper, E]),
                              with a self loop
  author__member__inst        author 3 is isolated (in no relation)
  inst__rev_member__author    no edges at all

PyG builds the model (lazy (-1, -1) SAGEConvs, initialized by one forward,
seeded), its state_dict goes to safetensors unchanged (gnnrun rejects
missing and unexpected names, so to_hetero's names --
conv1.author__writes__paper.lin_l.weight, ... -- are checked too), and
PyG's forward in float64 is the reference.  The model takes the graph
as one heterogeneous input, graph[author, paper, inst; (author, writes,
paper), ...], which stands for one relation input per edge type, and
gnnrun gets one --graph REL=edge_index.npy per relation.  Each engine's outputs (one per
node type) must be within 1e-5 of PyG's (tests/ref/compare.py), and a
second run must be bitwise the first.  Prints one line per aggregation
and engine, then `hetero: all ok` or the failures.
"""
import argparse
import os
import subprocess
import sys

import numpy as np
import torch
from torch_geometric.nn import GATConv, SAGEConv, to_hetero

HERE = os.path.dirname(os.path.abspath(__file__))
REFDIR = os.path.join(os.path.dirname(os.path.dirname(HERE)), "ref")
sys.path.insert(0, REFDIR)
import st  # noqa: E402
from compare import compare  # noqa: E402

RTOL = 1e-5
HID, OUT = 6, 4
NODES = {"author": (4, 3), "paper": (5, 5), "inst": (2, 2)}   # count, features
EDGES = {
    ("author", "writes", "paper"): [[0, 0, 1, 2, 2, 1], [0, 1, 1, 2, 4, 1]],
    ("paper", "rev_writes", "author"): [[0, 1, 1, 2, 4, 1], [0, 0, 1, 2, 2, 1]],
    ("paper", "cites", "paper"): [[1, 2, 3, 3, 0], [0, 0, 1, 3, 4]],
    ("author", "member", "inst"): [[0, 1, 2], [0, 0, 1]],
    ("inst", "rev_member", "author"): [[], []],
}


def rel(et):
    return "__".join(et)


HEADS = 2   # GAT's first layer, heads concatenated


class GNN(torch.nn.Module):
    def __init__(self, gat):
        super().__init__()
        if gat:
            self.conv1 = GATConv((-1, -1), HID, heads=HEADS, add_self_loops=False)
            self.conv2 = GATConv((-1, -1), OUT, add_self_loops=False)
        else:
            self.conv1 = SAGEConv((-1, -1), HID)
            self.conv2 = SAGEConv((-1, -1), OUT)

    def forward(self, x, edge_index):
        x = self.conv1(x, edge_index).relu()
        return self.conv2(x, edge_index)


def model_source(aggr, gat):
    """to_hetero's model in gnncc's language: a heterogeneous graph input,
    per relation a SAGEConv or GATConv on (x_src, x_dst) in a layer array
    keyed by src__rel__dst (to_hetero's names), combined per destination
    type"""
    width1 = {t: f for t, (_, f) in NODES.items()}
    hid = HID * HEADS if gat else HID
    types = ", ".join(NODES)
    ets = ", ".join(f"({s}, {r}, {d})" for s, r, d in EDGES)
    formals = [f"g: graph[{types}; {ets}]"] + [f"x_{t}: f32[N_{t}, {f}]" for t, (_, f) in NODES.items()]
    outs = ", ".join(f"f32[N_{t}, {OUT}]" for t in NODES)
    src = [f"model HSAGE({', '.join(formals)}) -> ({outs}) {{"]
    for et in EDGES:
        s, d = et[0], et[2]
        if gat:
            src.append(f'  layer conv1["{rel(et)}"] = GATConv({width1[s]}, {HID}, heads={HEADS}, '
                       f'add_self_loops=false, in_dst={width1[d]})')
            src.append(f'  layer conv2["{rel(et)}"] = GATConv({hid}, {OUT}, add_self_loops=false, in_dst={hid})')
        else:
            src.append(f'  layer conv1["{rel(et)}"] = SAGEConv({width1[s]}, {HID}, in_dst={width1[d]})')
            src.append(f'  layer conv2["{rel(et)}"] = SAGEConv({HID}, {OUT}, in_dst={HID})')
    combine = {"sum": "+", "mean": "+", "max": "maximum", "min": "minimum"}[aggr]

    def per_dst(conv, x, t):
        terms = [f'{conv}["{rel(et)}"](g["{et[0]}", "{et[1]}", "{et[2]}"], {x}_{et[0]}, {x}_{t})'
                 for et in EDGES if et[2] == t]
        if combine == "+":
            e = " + ".join(terms)
            return f"({e}) / {len(terms)}.0" if aggr == "mean" and len(terms) > 1 else e
        e = terms[0]
        for term in terms[1:]:
            e = f"{combine}({e}, {term})"
        return e
    for t in NODES:
        src.append(f"  h_{t} = relu({per_dst('conv1', 'x', t)})")
    src.append("  return " + ", ".join(per_dst("conv2", "h", t) for t in NODES))
    src.append("}")
    return "\n".join(src) + "\n"


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("gnnrun")
    ap.add_argument("work")
    ap.add_argument("--engines", default="interp")
    ap.add_argument("--cases", default="sum,mean,max,min,gat-sum",
                    help="to_hetero aggregations of SAGE; gat-AGGR: of GAT")
    a = ap.parse_args()
    os.makedirs(a.work, exist_ok=True)
    rng = np.random.default_rng(3)
    xs = {t: rng.uniform(-1, 1, size=(n, f)).astype(np.float32) for t, (n, f) in NODES.items()}
    eis = {et: np.array(e, dtype=np.int64).reshape(2, -1) for et, e in EDGES.items()}
    base = os.path.join(a.work, "g")
    for t, x in xs.items():
        np.save(f"{base}-x_{t}.npy", x)
    for et, ei in eis.items():
        np.save(f"{base}-{rel(et)}.npy", ei)
    metadata = (list(NODES), list(EDGES))
    bad = 0

    def fail(msg):
        nonlocal bad
        bad += 1
        print("FAIL " + msg, flush=True)

    for case in a.cases.split(","):
        gat = case.startswith("gat-")
        aggr = case[4:] if gat else case
        torch.manual_seed(0)
        model = to_hetero(GNN(gat), metadata, aggr=aggr)
        xd = {t: torch.from_numpy(x) for t, x in xs.items()}
        ed = {et: torch.from_numpy(ei) for et, ei in eis.items()}
        with torch.no_grad():
            model(xd, ed)                      # lazy parameters take their shapes
        sd = {k: v.detach().numpy() for k, v in model.state_dict().items()}
        wpath = os.path.join(a.work, f"{case}.safetensors")
        st.save(wpath, sd)
        mpath = os.path.join(a.work, f"{case}.gnn")
        open(mpath, "w").write(model_source(aggr, gat))
        model = model.double()
        with torch.no_grad():
            out = model({t: x.double() for t, x in xd.items()}, ed)
        refs = [out[t].numpy() for t in NODES]

        def run(engine, tag):
            outs = [f"{base}-{case}-{tag}-{t}.npy" for t in NODES]
            cmd = [a.gnnrun, mpath, "--weights", wpath, f"--engine={engine}", "--output-dtype=f64"]
            for et in EDGES:
                cmd += ["--graph", f"{rel(et)}={base}-{rel(et)}.npy"]
            for t in NODES:
                cmd += ["--input", f"x_{t}={base}-x_{t}.npy"]
            for o in outs:
                cmd += ["--output", o]
            r = subprocess.run(cmd, capture_output=True, text=True)
            if r.returncode:
                fail(f"{case} {tag}: gnnrun exit {r.returncode}: {r.stderr.strip()[-600:]}")
                return None
            return outs

        for engine in a.engines.split(","):
            outs = run(engine, engine)
            if outs is None:
                continue
            ok = True
            for t, o, ref in zip(NODES, outs, refs):
                good, msg = compare(np.load(o), ref, RTOL)
                if not good:
                    fail(f"{case} {engine} {t}: {msg}")
                    ok = False
            if ok:
                print(f"{case} {engine}: {len(NODES)} node types within 1e-5 of PyG")
            again = run(engine, engine + "-again")
            if again is not None:
                same = all(open(p, "rb").read() == open(q, "rb").read() for p, q in zip(outs, again))
                print(f"{case} {engine}: second run " + ("bitwise identical" if same else "DIFFERS"))
                if not same:
                    fail(f"{case} {engine}: second run differs bitwise")
    print("hetero: " + ("all ok" if not bad else f"{bad} FAILED"))
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
