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


def model_source(aggr, gat, nodes=NODES, edges=EDGES):
    """to_hetero's model in gnncc's language: a heterogeneous graph input,
    per relation a SAGEConv or GATConv on (x_src, x_dst) in a layer array
    keyed by src__rel__dst (to_hetero's names), combined per destination
    type; on the graph of nodes (type: (count, features)) and edges (their
    keys, the edge types)"""
    width1 = {t: f for t, (_, f) in nodes.items()}
    hid = HID * HEADS if gat else HID
    types = ", ".join(nodes)
    ets = ", ".join(f"({s}, {r}, {d})" for s, r, d in edges)
    formals = [f"g: graph[{types}; {ets}]"] + [f"x_{t}: f32[N_{t}, {f}]" for t, (_, f) in nodes.items()]
    outs = ", ".join(f"f32[N_{t}, {OUT}]" for t in nodes)
    src = [f"model HSAGE({', '.join(formals)}) -> ({outs}) {{"]
    for et in edges:
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
                 for et in edges if et[2] == t]
        if combine == "+":
            e = " + ".join(terms)
            return f"({e}) / {len(terms)}.0" if aggr == "mean" and len(terms) > 1 else e
        e = terms[0]
        for term in terms[1:]:
            e = f"{combine}({e}, {term})"
        return e
    for t in nodes:
        src.append(f"  h_{t} = relu({per_dst('conv1', 'x', t)})")
    src.append("  return " + ", ".join(per_dst("conv2", "h", t) for t in nodes))
    src.append("}")
    return "\n".join(src) + "\n"


class Checker:
    """A script's hand-made heterogeneous graph, written to WORK as .npy
    files (features uniform in [-1, 1), seeded), and its cases: each a PyG
    model and its gnncc source, checked on each engine through gnnrun.
    Prints one line per check and `FAIL ...` per failure."""

    def __init__(self, gnnrun, work, nodes, edges, seed, engines, data=None, edge_attrs=None, racecheck=None):
        """nodes: type -> (count, features), or an array of the type's
        features; edges: edge type -> edge_index (a list or an array);
        data: a directory of the graph as gnngen writes it (x_TYPE.npy,
        SRC__REL__DST.npy), taken instead of the features and edges given;
        edge_attrs: edge type -> edge features [E, D] (an array), given to
        the models as edge_attr_dict and to gnnrun as --input ea_REL;
        racecheck: the cases that cuda-emu racechecks (None: all; a
        racecheck build and run cost more than all the case's others)"""
        os.makedirs(work, exist_ok=True)
        rng = np.random.default_rng(seed)
        self.gnnrun, self.work, self.engines, self.bad = gnnrun, work, engines, 0
        self.racecheck = racecheck
        # each compiled model built once per engine and check, reused by its runs
        self.env = dict(os.environ)
        self.env.setdefault("GNNCC_ENGINE_CACHE", os.path.join(work, "cache"))
        os.makedirs(self.env["GNNCC_ENGINE_CACHE"], exist_ok=True)
        self.eas = edge_attrs or {}
        if data:
            self.xs = {t: np.load(os.path.join(data, f"x_{t}.npy")) for t in nodes}
            self.eis = {et: np.load(os.path.join(data, f"{rel(et)}.npy")) for et in edges}
        else:
            self.xs = {t: v if isinstance(v, np.ndarray) else rng.uniform(-1, 1, size=v).astype(np.float32)
                       for t, v in nodes.items()}
            self.eis = {et: np.array(e, dtype=np.int64).reshape(2, -1) for et, e in edges.items()}
        self.base = os.path.join(work, "g")
        self.graphs = [(rel(et), f"{self.base}-{rel(et)}.npy") for et in edges]
        self.inputs = [(f"x_{t}", f"{self.base}-x_{t}.npy") for t in nodes]
        for t, x in self.xs.items():
            np.save(f"{self.base}-x_{t}.npy", x)
        for et, ei in self.eis.items():
            np.save(f"{self.base}-{rel(et)}.npy", ei)
        for et, ea in self.eas.items():
            self.inputs.append((f"ea_{rel(et)}", f"{self.base}-ea_{rel(et)}.npy"))
            np.save(self.inputs[-1][1], ea)

    def fail(self, msg):
        self.bad += 1
        print("FAIL " + msg, flush=True)

    def case(self, case, model, source, outputs, perturb=False):
        """model (a PyG module on (x_dict, edge_index_dict), lazy shapes
        allowed, seeded by the caller) against source, the same model in
        gnncc's language whose outputs are those of the node types
        outputs, in order; PyG's dict must hold exactly those.  perturb:
        add noise to every parameter first (biases start at 0)."""
        xd = {t: torch.from_numpy(x) for t, x in self.xs.items()}
        ed = {et: torch.from_numpy(ei) for et, ei in self.eis.items()}
        # edge_attr_dict where the graph has edge features (every model
        # of such a graph takes it; gnnrun binds each as an input)
        ead = [{et: torch.from_numpy(ea) for et, ea in self.eas.items()}] if self.eas else []
        with torch.no_grad():
            model(xd, ed, *ead)                # lazy parameters take their shapes
            if perturb:
                for p in model.parameters():
                    p.add_(0.1 * torch.randn_like(p))
        sd = {k: v.detach().numpy() for k, v in model.state_dict().items()}
        wpath = os.path.join(self.work, f"{case}.safetensors")
        st.save(wpath, sd)
        mpath = os.path.join(self.work, f"{case}.gnn")
        open(mpath, "w").write(source)
        model = model.double()
        with torch.no_grad():
            out = model({t: x.double() for t, x in xd.items()}, ed, *[{et: a.double() for et, a in d.items()}
                                                                      for d in ead])
        if sorted(out) != sorted(outputs):
            self.fail(f"{case}: PyG's outputs are for {sorted(out)}, expected {sorted(outputs)}")
            return
        refs = [out[t].numpy() for t in outputs]
        for engine in self.engines:
            self.check(case, engine, mpath, wpath, refs)

    def run(self, case, tag, mpath, wpath, nout, engine, extra=(), refused=None):
        """the outputs' paths (None on failure); refused: an error
        message that gnnrun must exit with instead"""
        outs = [f"{self.base}-{case}-{tag}-{k}.npy" for k in range(nout)]
        cmd = [self.gnnrun, mpath, "--weights", wpath, f"--engine={engine}", "--output-dtype=f64", *extra]
        for name, path in self.graphs:
            cmd += ["--graph", f"{name}={path}"]
        for name, path in self.inputs:
            cmd += ["--input", f"{name}={path}"]
        for o in outs:
            cmd += ["--output", o]
        r = subprocess.run(cmd, capture_output=True, text=True, env=self.env)
        if refused is not None:
            if r.returncode and refused in r.stderr:
                print(f"{case} {tag}: refused: {refused}")
            else:
                self.fail(f"{case} {tag}: gnnrun exit {r.returncode}, not refused with '{refused}': {r.stderr}")
            return None
        if r.returncode:
            self.fail(f"{case} {tag}: gnnrun exit {r.returncode}: {r.stderr.strip()[-600:]}")
            return None
        return outs

    def against(self, case, tag, outs, refs):
        """outs within RTOL of refs"""
        ok = True
        for k, (o, ref) in enumerate(zip(outs, refs)):
            good, msg = compare(np.load(o), ref, RTOL)
            if not good:
                self.fail(f"{case} {tag} output {k}: {msg}")
                ok = False
        if ok:
            print(f"{case} {tag}: {len(refs)} node types within 1e-5 of PyG")

    def same(self, case, tag, outs, again, what):
        """again (a run's outputs) bitwise outs"""
        if again is None:
            return
        same = all(open(p, "rb").read() == open(q, "rb").read() for p, q in zip(outs, again))
        print(f"{case} {tag}: {what} " + ("bitwise identical" if same else "DIFFERS"))
        if not same:
            self.fail(f"{case} {tag}: {what} differs bitwise")

    def check(self, case, engine, mpath, wpath, refs):
        """within RTOL of refs, and bitwise the same on a second run.
        cuda-emu runs the emulated device's checks instead of its plain
        build (one build less): under memcheck, then again under memcheck
        with blocks and threads in reverse order and the grid clamped to
        2 blocks, then under racecheck, which must give the same bits"""
        if engine == "cuda-emu":
            return self.check_emu(case, mpath, wpath, refs)
        outs = self.run(case, engine, mpath, wpath, len(refs), engine)
        if outs is None:
            return
        self.against(case, engine, outs, refs)
        self.same(case, engine, outs, self.run(case, engine + "-again", mpath, wpath, len(refs), engine),
                  "second run")

    def check_emu(self, case, mpath, wpath, refs):
        n = len(refs)
        outs = self.run(case, "emu-memcheck", mpath, wpath, n, "cuda-emu", ["--emu-check=memcheck"])
        if outs is None:
            return
        self.against(case, "cuda-emu memcheck", outs, refs)
        again = self.run(case, "emu-reverse", mpath, wpath, n, "cuda-emu",
                         ["--emu-check=memcheck", "--emu-order=reverse", "--emu-grid-max=2"])
        self.same(case, "cuda-emu", outs, again, "second run (reverse order, 2 blocks)")
        if self.racecheck is not None and case not in self.racecheck:
            return
        race = self.run(case, "emu-racecheck", mpath, wpath, n, "cuda-emu", ["--emu-check=racecheck"])
        if race is not None:
            self.against(case, "cuda-emu racecheck", race, refs)
            self.same(case, "cuda-emu racecheck", outs, race, "memcheck's run")

    def done(self, name):
        print(f"{name}: " + ("all ok" if not self.bad else f"{self.bad} FAILED"))
        return 1 if self.bad else 0


def racecheck_arg(v):
    """--racecheck LIST as Checker's racecheck"""
    return None if v is None else set(v.split(","))


def cases(default, help, nodes, edges, seed, data=False):
    """GNNRUN WORKDIR [DATA] [--engines LIST] [--cases LIST]: a Checker and
    the cases as (case, gat, aggr): gat-AGGR is (gat-AGGR, True, AGGR).
    data: the graph is DATA's (Checker's data)"""
    ap = argparse.ArgumentParser()
    ap.add_argument("gnnrun")
    ap.add_argument("work")
    if data:
        ap.add_argument("data")
    ap.add_argument("--engines", default="interp")
    ap.add_argument("--cases", default=default, help=help)
    ap.add_argument("--racecheck", help="the cases that cuda-emu racechecks (default: all)")
    a = ap.parse_args()
    ck = Checker(a.gnnrun, a.work, nodes, edges, seed, a.engines.split(","), a.data if data else None,
                 racecheck=racecheck_arg(a.racecheck))
    return ck, [(c, c.startswith("gat-"), c[4:] if c.startswith("gat-") else c) for c in a.cases.split(",")]


def main():
    ck, todo = cases("sum,mean,max,min,gat-sum", "to_hetero aggregations of SAGE; gat-AGGR: of GAT", NODES, EDGES, 3)
    metadata = (list(NODES), list(EDGES))
    for case, gat, aggr in todo:
        torch.manual_seed(0)
        ck.case(case, to_hetero(GNN(gat), metadata, aggr=aggr), model_source(aggr, gat), list(NODES))
    return ck.done("hetero")


if __name__ == "__main__":
    sys.exit(main())
