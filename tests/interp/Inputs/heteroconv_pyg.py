#!/usr/bin/env python3
"""heteroconv_pyg.py GNNRUN WORKDIR [--engines LIST] [--cases LIST]:
torch_geometric.nn.HeteroConv against gnncc's HeteroConv (layers/hetero.gnn)
on the same weights.

A hand-made graph of three node types (author 4 x 3 features, paper 5 x 5,
inst 2 x 2) and four relations, each with its own conv:

  author__writes__paper      SAGEConv((-1, -1))        6 edges, a duplicate
  paper__cites__paper        GCNConv(-1)               one node type, a self loop
  paper__rev_writes__author  GATConv((-1, -1), 2 heads averaged, add_self_loops=False)
  inst__employs__author      SAGEConv((-1, -1), aggr="max")   author 3 gets none

Two relations target paper and two author, combined by aggr; inst is no
relation's target, so HeteroConv gives it no output (the model feeds
x_inst to the second layer, as a PyG user merges it back).  Cases: AGGR
(sum, mean, max, min, cat: two HeteroConv layers with a relu between),
stack (PyG's aggr=None: one layer, [N, 2, F] per type), and gat-AGGR,
where every conv is a GATConv((-1, -1), add_self_loops=False), the one on
paper__cites__paper too (a bipartite GATConv called with one tensor).

PyG's state_dict goes to safetensors unchanged (conv1.convs.<author___writes
___paper>.lin_l.weight, ...: gnnrun rejects missing and unexpected names)
and PyG's forward in float64 is the reference; each engine's outputs must
be within 1e-5 of it and a second run bitwise the first
(hetero_pyg.Checker).  Prints `heteroconv: all ok` or the failures.
"""
import sys
import warnings

import torch
from torch_geometric.nn import GATConv, GCNConv, HeteroConv, SAGEConv

from hetero_pyg import cases

warnings.filterwarnings("ignore")   # HeteroConv warns that inst is no relation's target

HID, OUT = 6, 4
NODES = {"author": (4, 3), "paper": (5, 5), "inst": (2, 2)}   # count, features
EDGES = {
    ("author", "writes", "paper"): [[0, 0, 1, 2, 2, 1], [0, 1, 1, 2, 4, 1]],
    ("paper", "cites", "paper"): [[1, 2, 3, 3, 0], [0, 0, 1, 3, 4]],
    ("paper", "rev_writes", "author"): [[0, 1, 1, 2, 4, 1], [0, 0, 1, 2, 2, 1]],
    ("inst", "employs", "author"): [[0, 1, 1], [0, 1, 2]],
}
DSTS = ["paper", "author"]     # in the order they first occur as targets


# each relation's conv: sage, sagemax (aggr="max"), gcn (one node type),
# gat2 (2 heads averaged, add_self_loops=False)
KINDS = {
    ("author", "writes", "paper"): "sage",
    ("paper", "cites", "paper"): "gcn",
    ("paper", "rev_writes", "author"): "gat2",
    ("inst", "employs", "author"): "sagemax",
}


def nrel(t, edges=EDGES):
    return sum(1 for et in edges if et[2] == t)


def pyg_convs(out, gat, kinds=KINDS):
    """PyG's convs of width out, keyed by edge type (kinds' keys)"""
    mk = {
        "sage": lambda: SAGEConv((-1, -1), out),
        "sagemax": lambda: SAGEConv((-1, -1), out, aggr="max"),
        "gcn": lambda: GCNConv(-1, out),
        "gat2": lambda: GATConv((-1, -1), out, heads=2, concat=False, add_self_loops=False),
        "gat": lambda: GATConv((-1, -1), out, add_self_loops=False),
    }
    return {et: mk["gat" if gat else k]() for et, k in kinds.items()}


def gnn_convs(out, gat, w, kinds=KINDS):
    def one(et):
        s, d = w[et[0]], w[et[2]]
        return {
            "gat": f"GATConv({s}, {out}, add_self_loops=false, in_dst={d})",
            "sage": f"SAGEConv({s}, {out}, in_dst={d})",
            "sagemax": f"SAGEConv({s}, {out}, aggr=\"max\", in_dst={d})",
            "gcn": f"GCNConv({s}, {out})",
            "gat2": f"GATConv({s}, {out}, heads=2, concat=false, add_self_loops=false, in_dst={d})",
        }["gat" if gat else kinds[et]]
    items = ",\n".join(f'      ("{et[0]}", "{et[1]}", "{et[2]}"): {one(et)}' for et in kinds)
    return "{\n" + items + ",\n    }"


class Net(torch.nn.Module):
    """two HeteroConv layers with a relu between (the types no relation
    targets fed to the second as they are), or one for aggr None"""

    def __init__(self, aggr, gat, kinds=KINDS):
        super().__init__()
        self.layers = 1 if aggr is None else 2
        self.conv1 = HeteroConv(pyg_convs(HID, gat, kinds), aggr=aggr)
        if self.layers == 2:
            self.conv2 = HeteroConv(pyg_convs(OUT, gat, kinds), aggr=aggr)

    def forward(self, x, ei):
        h = self.conv1(x, ei)
        if self.layers == 1:
            return h
        h = {t: v.relu() for t, v in h.items()}
        for t in x:
            h.setdefault(t, x[t])
        return self.conv2(h, ei)


def model_source(aggr, gat, nodes=NODES, kinds=KINDS, dsts=DSTS):
    """Net in gnncc's language, on the graph of nodes (type: (count,
    features)) and kinds' edge types, its outputs those of dsts"""
    edges = list(kinds)
    w1 = {t: f for t, (_, f) in nodes.items()}
    if aggr == "stack":
        outs = [f"f32[N_{t}, {nrel(t, edges)}, {HID}]" for t in dsts]
    else:
        width = {t: (HID * nrel(t, edges) if aggr == "cat" else HID) for t in dsts}
        w2 = dict(w1, **width)
        outs = [f"f32[N_{t}, {OUT * nrel(t, edges) if aggr == 'cat' else OUT}]" for t in dsts]
    ets = ", ".join(f"({s}, {r}, {d})" for s, r, d in edges)
    formals = [f"g: graph[{', '.join(nodes)}; {ets}]"] + [f"x_{t}: f32[N_{t}, {f}]" for t, f in w1.items()]
    src = [f"model HC({', '.join(formals)}) -> ({', '.join(outs)}) {{",
           f'  layer conv1 = HeteroConv({gnn_convs(HID, gat, w1, kinds)}, aggr="{aggr}")']
    x = "{" + ", ".join(f'"{t}": x_{t}' for t in nodes) + "}"
    if aggr == "stack":
        src += [f"  out = conv1(g, {x})"]
    else:
        rest = ", ".join(f'"{t}": x_{t}' for t in nodes if t not in dsts)
        src += [f'  layer conv2 = HeteroConv({gnn_convs(OUT, gat, w2, kinds)}, aggr="{aggr}")',
                f"  h = conv1(g, {x})",
                "  for t in h {",
                "    h = h + {t: relu(h[t])}",
                "  }",
                f"  out = conv2(g, h + {{{rest}}})" if rest else "  out = conv2(g, h)"]
    src += ["  return " + ", ".join(f'out["{t}"]' for t in dsts), "}"]
    return "\n".join(src) + "\n"


def main():
    ck, todo = cases("sum,mean,max,min,cat,stack,gat-sum,gat-cat",
                     "HeteroConv aggregations (stack: PyG's None); gat-AGGR: every conv a GATConv", NODES, EDGES, 5)
    for case, gat, aggr in todo:
        torch.manual_seed(0)
        ck.case(case, Net(None if aggr == "stack" else aggr, gat), model_source(aggr, gat), DSTS, perturb=True)
    return ck.done("heteroconv")


if __name__ == "__main__":
    sys.exit(main())
