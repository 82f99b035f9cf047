#!/usr/bin/env python3
"""hetero_transformer_pyg.py GNNRUN WORKDIR [--engines LIST] [--cases LIST]
[--gnngen GNNGEN]: TransformerConv between node types, and edge features
per relation (PyG's edge_attr_dict), against PyG 2.8 on the same weights.

Cases (hetero_pyg.Checker: each engine's outputs within 1e-5 of PyG's
forward in float64, a second run bitwise the first):

  tr        to_hetero of a 2-layer TransformerConv((-1, -1)) GNN (2 heads
            concatenated, then 1), aggr "sum", no edge features
  tr-edge   the same with edge_dim=3 and beta=True, aggr "mean": forward
            takes edge_attr, to_hetero's model edge_attr_dict
  hc-edge   two HeteroConv layers, aggr "sum", mixing TransformerConv with
            edge features (a bipartite one, and one on the relation within
            one node type, called with a tensor), a TransformerConv without
            them, a SAGEConv and a GATConv; edge_attr_dict holds only the
            relations whose conv takes edge features
  rel-tr-edge, rel-hc-edge   tr-edge and hc-edge's shapes on rel-shop

The hand-made graph is hetero_pyg.py's (three node types of different
widths, five relations: a duplicate edge, a relation within one type with
a self loop, an isolated node, a relation with no edges), its edge
features uniform in [-1, 1), [E, 3] per relation.  rel-shop is `gnngen
--preset=rel-shop --scale=0.005` (300 customers, 75 products, 1500
transactions; four relations of 1500 edges, a product in 185 of them, a
customer in 123); its edge features, [E, 2] per
relation, are made here from the relation's time_REL.npy: the time scaled
to [0, 1] over the year (t - t0) / (t1 - t0), and the time of day as a
fraction of a day (t mod 86400) / 86400.

The model in gnncc's language takes one input per relation's edge
features, ea_REL: f32[E_src_rel_dst, D] (gnnrun --input ea_REL=FILE), and
builds the dict for HeteroConv from them; after tr-edge and rel-tr-edge,
gnnrun must refuse one relation's edge features one row short.  Prints `hetero-transformer:
all ok` or the failures.
"""
import argparse
import os
import subprocess
import sys
import warnings

import numpy as np
import torch
from torch_geometric.nn import GATConv, HeteroConv, SAGEConv, TransformerConv, to_hetero

from hetero_pyg import EDGES, NODES, Checker, racecheck_arg, rel

warnings.filterwarnings("ignore")   # HeteroConv warns of a type no relation targets

HID, OUT, HEADS, D = 6, 4, 2, 3
REL_SCALE = "0.005"


class GNN(torch.nn.Module):
    """to_hetero's input: TransformerConv((-1, -1)), HEADS heads then 1"""

    def __init__(self, edge_dim):
        super().__init__()
        kw = dict(edge_dim=edge_dim, beta=True) if edge_dim else {}
        self.conv1 = TransformerConv((-1, -1), HID, heads=HEADS, **kw)
        self.conv2 = TransformerConv((-1, -1), OUT, **kw)

    def forward(self, x, edge_index, edge_attr=None):
        x = self.conv1(x, edge_index, edge_attr).relu()
        return self.conv2(x, edge_index, edge_attr)


def edge_dim(eas):
    """the edge features' width (0: none)"""
    return next(iter(eas.values())).shape[1] if eas else 0


def graph_type(nodes, edges):
    ets = ", ".join(f"({s}, {r}, {d})" for s, r, d in edges)
    return f"graph[{', '.join(nodes)}; {ets}]"


def formals(nodes, edges, eas):
    """the model's inputs: the graph, x_TYPE per node type, ea_REL per
    relation with edge features"""
    return ([f"g: {graph_type(nodes, edges)}"] + [f"x_{t}: f32[N_{t}, {f}]" for t, f in nodes.items()]
            + [f"ea_{rel(et)}: f32[E_{'_'.join(et)}, {eas[et].shape[1]}]" for et in eas])


def to_hetero_source(nodes, edges, eas, aggr):
    """to_hetero(GNN) in gnncc's language: layer arrays keyed src__rel__dst,
    each relation's conv on (x_src, x_dst[, its edge features]), combined
    per destination type by aggr ("sum" or "mean")"""
    dsts = [t for t in nodes if any(et[2] == t for et in edges)]
    outs = ", ".join(f"f32[N_{t}, {OUT}]" for t in dsts)
    src = [f"model HTR({', '.join(formals(nodes, edges, eas))}) -> ({outs}) {{"]
    kw = f", edge_dim={edge_dim(eas)}, beta=true" if eas else ""
    for et in edges:
        src.append(f'  layer conv1["{rel(et)}"] = TransformerConv({nodes[et[0]]}, {HID}, heads={HEADS}, '
                   f'in_dst={nodes[et[2]]}{kw})')
        src.append(f'  layer conv2["{rel(et)}"] = TransformerConv({HID * HEADS}, {OUT}, '
                   f'in_dst={HID * HEADS}{kw})')

    def per_dst(conv, x, t):
        terms = [f'{conv}["{rel(et)}"](g["{et[0]}", "{et[1]}", "{et[2]}"], {x}_{et[0]}, {x}_{t}'
                 + (f", ea_{rel(et)})" if eas else ")") for et in edges if et[2] == t]
        e = " + ".join(terms)
        return f"({e}) / {len(terms)}.0" if aggr == "mean" and len(terms) > 1 else e
    for t in dsts:
        src.append(f"  h_{t} = relu({per_dst('conv1', 'x', t)})")
    src.append("  return " + ", ".join(per_dst("conv2", "h", t) for t in dsts))
    src.append("}")
    return "\n".join(src) + "\n", dsts


def hc_plan(edges, eas):
    """HeteroConv's conv per relation, as (PyG's conv of width o, gnncc's
    source of it from widths s to d, o wide):
    a TransformerConv with edge features where the relation has them,
    then in turn one without, a GATConv and a SAGEConv"""
    plan, others, ed = {}, 0, edge_dim(eas)
    for et in edges:
        one = et[0] == et[2]
        if et in eas:
            plan[et] = (lambda o, one=one: TransformerConv(-1 if one else (-1, -1), o, heads=HEADS,
                                                           concat=False, edge_dim=ed, beta=one),
                        lambda s, d, o, one=one: f"TransformerConv({s}, {o}, heads={HEADS}, concat=false, "
                                                 f"edge_dim={ed}, beta={'true' if one else 'false'}"
                                                 + ("" if one else f", in_dst={d}") + ")")
            continue
        k, others = others % 3, others + 1
        if k == 0:
            plan[et] = (lambda o: TransformerConv((-1, -1), o // HEADS, heads=HEADS),
                        lambda s, d, o: f"TransformerConv({s}, {o // HEADS}, heads={HEADS}, in_dst={d})")
        elif k == 1:
            plan[et] = (lambda o: GATConv((-1, -1), o, add_self_loops=False),
                        lambda s, d, o: f"GATConv({s}, {o}, add_self_loops=false, in_dst={d})")
        else:
            plan[et] = (lambda o: SAGEConv((-1, -1), o), lambda s, d, o: f"SAGEConv({s}, {o}, in_dst={d})")
    return plan


class HC(torch.nn.Module):
    """two HeteroConv layers (aggr "sum") and a relu between; a type no
    relation targets keeps its features for the second"""

    def __init__(self, plan, with_ea):
        super().__init__()
        self.with_ea = with_ea
        self.conv1 = HeteroConv({et: f(HID) for et, (f, _) in plan.items()}, aggr="sum")
        self.conv2 = HeteroConv({et: f(OUT) for et, (f, _) in plan.items()}, aggr="sum")

    def forward(self, x, ei, ea):
        ea = {et: v for et, v in ea.items() if et in self.with_ea}
        h = {t: v.relu() for t, v in self.conv1(x, ei, edge_attr_dict=ea).items()}
        return self.conv2(dict(x, **h), ei, edge_attr_dict=ea)


def hc_source(nodes, edges, inputs, eas, plan):
    """HC in gnncc's language: the graph's edge features inputs, those of
    eas in HeteroConv's edge_attr dict"""
    dsts = []
    for et in edges:
        if et[2] not in dsts:
            dsts.append(et[2])
    w2 = dict(nodes, **{t: HID for t in dsts})

    def convs(w, o):
        items = ",\n".join(f'      ("{et[0]}", "{et[1]}", "{et[2]}"): {plan[et][1](w[et[0]], w[et[2]], o)}'
                           for et in edges)
        return "{\n" + items + ",\n    }"
    outs = ", ".join(f"f32[N_{t}, {OUT}]" for t in dsts)
    x = "{" + ", ".join(f'"{t}": x_{t}' for t in nodes) + "}"
    ea = "{" + ", ".join(f'("{et[0]}", "{et[1]}", "{et[2]}"): ea_{rel(et)}' for et in eas) + "}"
    src = [f"model HC({', '.join(formals(nodes, edges, inputs))}) -> ({outs}) {{",
           f'  layer conv1 = HeteroConv({convs(nodes, HID)}, aggr="sum")',
           f'  layer conv2 = HeteroConv({convs(w2, OUT)}, aggr="sum")',
           f"  ea = {ea}",
           f"  h = conv1(g, {x}, ea)",
           "  for t in h {",
           "    h = h + {t: relu(h[t])}",
           "  }",
           f"  out = conv2(g, {x} + h, edge_attr=ea)",
           "  return " + ", ".join(f'out["{t}"]' for t in dsts),
           "}"]
    return "\n".join(src) + "\n", dsts


def wrong_rows(ck, case, engine, nout):
    """gnnrun refuses edge features of a row count other than their
    relation's edge count (here one row short)"""
    et = next(et for et, ea in ck.eas.items() if len(ea))
    name = f"ea_{rel(et)}"
    bad = os.path.join(ck.work, f"{name}-short.npy")
    np.save(bad, ck.eas[et][:-1])
    good, ck.inputs = ck.inputs, [(n, bad if n == name else p) for n, p in ck.inputs]
    n = len(ck.eas[et])
    ck.run(case, "short", os.path.join(ck.work, f"{case}.gnn"), os.path.join(ck.work, f"{case}.safetensors"), nout,
           engine, refused=f"input '{name}': dim 0 is {n - 1} but E_{'_'.join(et)} = {n}")
    ck.inputs = good


def rel_shop(gnngen, work, engines):
    """Checker's arguments past its work folder for gnngen's rel-shop at
    REL_SCALE: nodes' features, edge_index per relation, seed, engines,
    edge features per relation (made from the relation's times)"""
    out = os.path.join(work, "rel-shop")
    os.makedirs(work, exist_ok=True)
    subprocess.run([gnngen, "--preset=rel-shop", f"--scale={REL_SCALE}", f"--out={out}"], check=True,
                   stdout=subprocess.DEVNULL)
    xs = {t: np.load(os.path.join(out, f"x_{t}.npy")) for t in ("customer", "product", "transaction")}
    ets = [("transaction", "by", "customer"), ("customer", "rev_by", "transaction"),
           ("transaction", "of", "product"), ("product", "rev_of", "transaction")]
    eis = {et: np.load(os.path.join(out, f"{rel(et)}.npy")) for et in ets}
    times = {et: np.load(os.path.join(out, f"time_{rel(et)}.npy")) for et in ets}
    t0 = min(int(t.min()) for t in times.values())
    t1 = max(int(t.max()) for t in times.values())
    eas = {et: np.stack([(t - t0) / max(t1 - t0, 1), (t % 86400) / 86400.0], axis=1).astype(np.float32)
           for et, t in times.items()}
    return xs, eis, 0, engines, None, eas


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("gnnrun")
    ap.add_argument("work")
    ap.add_argument("--engines", default="interp")
    ap.add_argument("--cases", default="tr,tr-edge,hc-edge,rel-tr-edge,rel-hc-edge")
    ap.add_argument("--gnngen", default="gnngen")
    ap.add_argument("--racecheck", help="the cases that cuda-emu racechecks (default: all)")
    a = ap.parse_args()
    race = racecheck_arg(a.racecheck)
    engines = a.engines.split(",")
    todo = a.cases.split(",")
    rng = np.random.default_rng(7)
    hand_eas = {et: rng.uniform(-1, 1, size=(len(e[0]), D)).astype(np.float32) for et, e in EDGES.items()}
    checkers = {
        "hand": lambda: Checker(a.gnnrun, os.path.join(a.work, "hand"), NODES, EDGES, 3, engines, racecheck=race),
        "hand-edge": lambda: Checker(a.gnnrun, os.path.join(a.work, "hand-edge"), NODES, EDGES, 3, engines,
                                     edge_attrs=hand_eas, racecheck=race),
        "rel": lambda: Checker(a.gnnrun, os.path.join(a.work, "rel"), *rel_shop(a.gnngen, a.work, engines), racecheck=race),
    }
    made = {}
    bad = 0
    for case in todo:
        which = "rel" if case.startswith("rel-") else "hand-edge" if case.endswith("-edge") else "hand"
        if which not in made:
            made[which] = checkers[which]()
        ck = made[which]
        nodes = {t: x.shape[1] for t, x in ck.xs.items()}
        edges = list(ck.eis)
        kind = case[4:] if case.startswith("rel-") else case
        torch.manual_seed(0)
        if kind in ("tr", "tr-edge"):
            aggr = "mean" if ck.eas else "sum"
            source, dsts = to_hetero_source(nodes, edges, ck.eas, aggr)
            model = to_hetero(GNN(edge_dim(ck.eas)), (list(nodes), edges), aggr=aggr)
            ck.case(case, model, source, dsts, perturb=True)
            if ck.eas and engines[0] != "cuda-emu":
                wrong_rows(ck, case, engines[0], len(dsts))
        elif kind == "hc-edge":
            # edge features for the relations within one type and every
            # other one: their convs are TransformerConvs with edge_dim
            eas = {et: ea for k, (et, ea) in enumerate(ck.eas.items()) if et[0] == et[2] or k % 2 == 0}
            plan = hc_plan(edges, eas)
            source, dsts = hc_source(nodes, edges, ck.eas, eas, plan)
            ck.case(case, HC(plan, list(eas)), source, dsts, perturb=True)
        else:
            print(f"FAIL unknown case {case}")
            bad += 1
    for ck in made.values():
        bad += ck.bad
    print("hetero-transformer: " + ("all ok" if not bad else f"{bad} FAILED"))
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
