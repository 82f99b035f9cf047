#!/usr/bin/env python3
"""The CPU benchmark's heterogeneous rows (cpubench.py run --tasks hetero).

Graph: gnngen --preset=rel-shop --scale=S (docs/hetero.md, "Relational
presets"): customers, products and transactions, four relations (a
transaction by its customer, of its product, and their reverses), cached
under build/bench/cpu/hetero/rel-shop-sS/ with y.npy (gnngen's customer
labels, 4 classes) and a seeded random 10% train_mask.npy of customers.

Models (HMODELS: one entry a row; a conv's PyG constructor and its
gnncc spelling): PyG's to_hetero of a two-layer GNN (conv1 -> relu ->
conv2; hidden 64, 4 classes), aggr="sum" across relations, the output the
customer rows' log_softmax: PyG's model is

    body = to_hetero(GNN(conv1, conv2), metadata, aggr="sum")
    out = log_softmax(body(x_dict, edge_index_dict)["customer"], dim=-1)

and gnncc's the same written out (hetero_source: one layer per relation
and layer, under to_hetero's names, so one safetensors file of the body's
state_dict serves both; only the relations the customer output reads are
called).  A model the language cannot express yet (gnncc's compile ends
in a `file:line:col: error:`) is the cell "not supported by this gnncc",
not a failure of the run.

Systems: gnncc -O2 (cpubench.c with --input/--rel, forward and the
compiled training step), PyG eager, torch.compile(dynamic=True) and
(dynamic=False) of the whole model, and "compile per conv"
(pyg-compile-conv): each conv module of to_hetero's copies compiled on its
own (dynamic=False) and the model run eagerly around them, the usual
workaround for HeteroConv's graph breaks.  Training: one full-graph epoch
as the homogeneous training rows (bench/training.py's torch_epochs:
Adam(lr=0.01, weight_decay=5e-4), nll over the mask's customers; gnncc:
the same train item).  Records: task "hetero-infer" and "hetero-train"
(cpureport.py's heterogeneous section), graph "rel-shop-sS".

Kernel counts (the `prep` step, beside the weights): gnncc's kernels a
forward (`gnncc --report=kernels`, the "kernels:" line) and PyG eager's
operator launches a forward: torch.profiler's CPU events named aten::*
that no other aten::* event encloses (the dispatcher calls Python made,
each one or more kernel launches; the nested ones are their parts).
"""
import json
import os
import re
import shutil
import subprocess
import sys
import time
import zlib

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))

TASKS = ["hetero-infer", "hetero-train"]
SYSTEMS = ["gnncc-O2", "pyg-eager", "pyg-compile-dynamic", "pyg-compile-static",
           "pyg-compile-conv"]
TORCH_MODES = {"pyg-eager": "eager", "pyg-compile-dynamic": "dynamic",
               "pyg-compile-static": "static", "pyg-compile-conv": "conv"}
TIMEOUT = {"gnncc": 120, "pyg-eager": 120, "pyg-compile-dynamic": 240,
           "pyg-compile-static": 240, "pyg-compile-conv": 240}

# rel-shop's tables (gnngen's widths) and foreign keys, in PyG's metadata()
# order
NODE_TYPES = [("customer", 16), ("product", 32), ("transaction", 8)]
RELATIONS = [("transaction", "by", "customer"), ("customer", "rev_by", "transaction"),
             ("transaction", "of", "product"), ("product", "rev_of", "transaction")]
TARGET, CLASSES, HIDDEN = "customer", 4, 64
# gnncc's graph type lists the relations into transaction first: gnncc
# fuses gather, aggregation and epilogue for the first relation's target
# type only (docs/hetero.md, "Limits"), and transaction is the big table
# with two relations into it.  The order is the model's (the harness binds
# in it); PyG's model does not depend on it.
GNNCC_RELATIONS = sorted(RELATIONS, key=lambda r: r[2] != "transaction")

# one entry a row: layers [(out per head, heads)], PyG's conv (nn: the
# module torch_geometric.nn; lazy widths, as to_hetero wants them) and
# gnncc's (src, dst: the input widths)
HMODELS = {
    "sage": {"label": "to_hetero(GraphSAGE)", "layers": [(HIDDEN, 1), (CLASSES, 1)],
             "pyg": lambda nn, out, heads: nn.SAGEConv((-1, -1), out),
             "gnn": "SAGEConv({src}, {out}, in_dst={dst})"},
    "gat": {"label": "to_hetero(GAT)", "layers": [(HIDDEN // 8, 8), (CLASSES, 1)],
            "pyg": lambda nn, out, heads: nn.GATConv((-1, -1), out, heads=heads,
                                                     add_self_loops=False),
            "gnn": "GATConv({src}, {out}, heads={heads}, add_self_loops=false, in_dst={dst})"},
    "transformer": {"label": "to_hetero(TransformerConv)", "layers": [(HIDDEN, 1), (CLASSES, 1)],
                    "pyg": lambda nn, out, heads: nn.TransformerConv((-1, -1), out, heads=heads),
                    "gnn": "TransformerConv({src}, {out}, heads={heads}, in_dst={dst})"},
}
MODEL_NAMES = list(HMODELS)


def key(rel):
    return "__".join(rel)


def graph_name(scale):
    return f"rel-shop-s{scale:g}"


def gnn_name(m, train=False):
    return "H" + m.upper() + ("_O2T" if train else "_O2")


# --- gnncc's side ------------------------------------------------------------------

def hetero_source(m, name, train_item=""):
    """model m (HMODELS) in gnncc's language: to_hetero's layers, one per
    relation and layer under its key, and the sums per destination type
    that the customer output needs"""
    spec, width = HMODELS[m], dict(NODE_TYPES)
    (h1, k1), (h2, k2) = spec["layers"]
    w1 = h1 * k1
    gtype = ", ".join(t for t, _ in NODE_TYPES) + ";\n                 " + \
        ", ".join(f"({s}, {r}, {d})" for s, r, d in GNNCC_RELATIONS)
    xs = ", ".join(f"x_{t}: f32[N_{t}, {w}]" for t, w in NODE_TYPES)
    lines = [f"# {spec['label']} on gnngen's rel-shop (bench/cpu/hetero.py): to_hetero's",
             "# copies of conv1 and conv2 under their relation's key, summed per",
             "# destination type; the customer rows' log_softmax.",
             f"model {name}(g: graph[{gtype}],",
             f"    {xs})",
             f"    -> f32[N_{TARGET}, {h2 * k2}] {{"]
    for rel in RELATIONS:
        lines.append(f"  layer conv1[\"{key(rel)}\"] = " + spec["gnn"].format(
            src=width[rel[0]], dst=width[rel[2]], out=h1, heads=k1))
    for rel in RELATIONS:
        lines.append(f"  layer conv2[\"{key(rel)}\"] = " + spec["gnn"].format(
            src=w1, dst=w1, out=h2, heads=k2))
    for rel in RELATIONS:
        lines.append(f"  r_{rel[1]} = g[\"{rel[0]}\", \"{rel[1]}\", \"{rel[2]}\"]")
    into = {t: [r for r in RELATIONS if r[2] == t] for t, _ in NODE_TYPES}
    need = [t for t, _ in NODE_TYPES if t == TARGET or any(r[0] == t for r in into[TARGET])]
    for t in need:
        lines.append(f"  h_{t} = relu(" + " + ".join(
            f"conv1[\"{key(r)}\"](r_{r[1]}, x_{r[0]}, x_{t})" for r in into[t]) + ")")
    lines.append("  return log_softmax(" + " + ".join(
        f"conv2[\"{key(r)}\"](r_{r[1]}, h_{r[0]}, h_{TARGET})" for r in into[TARGET]) +
        ", dim=1)")
    lines.append("}")
    return "\n".join(lines) + "\n" + train_item


def is_language_error(msg):
    """gnncc's user error (file:line:col: error: ...): the model uses what
    this gnncc's language lacks"""
    return re.search(r"\.gnn:\d+:\d+: error:", msg) is not None


# --- PyG's side (in the torch processes) ------------------------------------------

def metadata():
    return [t for t, _ in NODE_TYPES], list(RELATIONS)


def make(m):
    """PyG's model for HMODELS[m], its lazy widths set on a toy graph:
    (net, body); body's state_dict is the weights file's"""
    import torch
    import torch.nn.functional as F
    import torch_geometric.nn as nn
    spec = HMODELS[m]
    convs = [spec["pyg"](nn, h, k) for h, k in spec["layers"]]

    class GNN(torch.nn.Module):
        def __init__(self, conv1, conv2):
            super().__init__()
            self.conv1, self.conv2 = conv1, conv2

        def forward(self, x, edge_index):
            x = self.conv1(x, edge_index).relu()
            return self.conv2(x, edge_index)

    class Net(torch.nn.Module):
        def __init__(self, body):
            super().__init__()
            self.body = body

        def forward(self, x_dict, edge_index_dict):
            return F.log_softmax(self.body(x_dict, edge_index_dict)[TARGET], dim=-1)

    net = Net(nn.to_hetero(GNN(*convs), metadata(), aggr="sum"))
    toy_x = {t: torch.zeros(2, w) for t, w in NODE_TYPES}
    toy_e = {r: torch.zeros(2, 1, dtype=torch.int64) for r in RELATIONS}
    with torch.no_grad():
        net(toy_x, toy_e)
    return net


def load_inputs(torch, d):
    xs = {t: torch.from_numpy(np.load(os.path.join(d, f"x_{t}.npy"))) for t, _ in NODE_TYPES}
    eis = {r: torch.from_numpy(np.load(os.path.join(d, key(r) + ".npy"))) for r in RELATIONS}
    return xs, eis


def compile_convs(torch, body, dynamic=False):
    """each conv of to_hetero's copies compiled on its own (the model runs
    eagerly around them)"""
    n = 0
    for name in ("conv1", "conv2"):
        md = getattr(body, name)
        for k in list(md.keys()):
            md[k] = torch.compile(md[k], dynamic=dynamic)
            n += 1
    # one code object (the conv's forward) compiled for every copy
    torch._dynamo.config.cache_size_limit = max(torch._dynamo.config.cache_size_limit, 4 * n)
    return n


def torch_cell(c, g):
    """cpubench.py's worker child runs this for a heterogeneous cell
    (c["task"] hetero-*): one system, model and thread count on graph g"""
    import torch
    from types import SimpleNamespace
    from cpubench import run_counts, st_read, time_forwards
    from training import TRAIN_SEED, torch_epochs
    mode = TORCH_MODES[c["system"]]
    torch.set_num_threads(c["threads"])
    torch.set_float32_matmul_precision("highest")
    torch.manual_seed(TRAIN_SEED)
    xs, eis = load_inputs(torch, g["dir"])
    net = make(c["kind"])
    net.body.load_state_dict({k: torch.from_numpy(v) for k, v in st_read(g["weights"]).items()},
                             strict=True)
    if mode == "conv":
        compile_convs(torch, net.body)
    a = SimpleNamespace(**c["timing"])
    if c["task"] == "hetero-train":
        y = torch.from_numpy(np.load(os.path.join(g["dir"], "y.npy")))
        mask = torch.from_numpy(np.load(os.path.join(g["dir"], "train_mask.npy")))
        rec = torch_epochs(torch, net, xs, eis, y, mask, mode, a.cap_s,
                           lambda est: run_counts(est, a))
        rec["torch_threads"] = torch.get_num_threads()
        return rec
    net.eval()
    fn = torch.compile(net, dynamic=mode == "dynamic") if mode in ("dynamic", "static") else net
    return time_forwards(torch, fn, (xs, eis), mode, c["timing"], g["out"])


def count_launches(torch, net, xs, eis):
    """PyG eager's operator launches in one forward: the profiler's aten::*
    CPU events no other aten::* event encloses"""
    from torch.profiler import ProfilerActivity, profile
    with torch.inference_mode():
        net(xs, eis)
        with profile(activities=[ProfilerActivity.CPU]) as prof:
            net(xs, eis)
    n = 0
    for e in prof.events():
        if not e.name.startswith("aten::"):
            continue
        p = e.cpu_parent
        while p is not None and not p.name.startswith("aten::"):
            p = p.cpu_parent
        n += p is None
    return n


def cmd_prep(a):
    """`hetero.py prep`: per model the weights file (the body's state_dict,
    seeded random values) and PyG eager's launches per forward (JSON on
    stdout: model -> count or an error)"""
    import torch
    sys.path.insert(0, HERE)
    from cpubench import random_weights, st_write
    torch.set_num_threads(1)
    torch.manual_seed(a.seed)
    xs, eis = load_inputs(torch, a.graph_dir)
    counts = {}
    for m in a.models:
        try:
            net = make(m)
            state = {k: v.detach().numpy() for k, v in net.body.state_dict().items()}
            st_write(os.path.join(a.out, f"{m}.safetensors"), random_weights(state, a.seed))
            counts[m] = count_launches(torch, net.eval(), xs, eis)
        except Exception as e:  # noqa: BLE001 -- the model's cells report it
            msg = f"{type(e).__name__}: {e}".strip().splitlines()
            counts[m] = {"error": msg[0][:300] if msg else "?"}
    print(json.dumps(counts))
    return 0


# --- the run (cpubench.py run --tasks hetero) ----------------------------------------

def hetero_run(run_cls):
    """the Run subclass for the heterogeneous rows (cpubench.Run given, so
    that this module imports without cpubench's side)"""
    import cpubench as C

    class HeteroRun(run_cls):
        def graph(self):
            t = time.time()
            a, sc = self.a, self.a.hetero_scale
            name = graph_name(sc)
            d = os.path.join(self.build, "hetero", name)
            g = {"name": name, "dir": d, "scale": sc}
            stamp = os.path.join(d, "stamp.json")
            gen = os.path.join(os.path.dirname(self.gnncc), "gnngen")
            want = {"scale": sc, "seed": a.graph_seed, "gnngen": os.stat(gen).st_mtime
                    if os.path.exists(gen) else None, "mask_seed": a.seed}
            if not C.stamp_fresh(stamp, want):
                shutil.rmtree(d, ignore_errors=True)
                os.makedirs(d)
                p = subprocess.run([gen, "--preset=rel-shop", f"--scale={sc:g}",
                                    f"--seed={a.graph_seed}", f"--out={d}"],
                                   capture_output=True, text=True, timeout=600)
                if p.returncode != 0:
                    raise SystemExit(f"cpubench: gnngen --preset=rel-shop failed: {p.stderr}")
                shutil.copyfile(os.path.join(d, f"y_{TARGET}.npy"), os.path.join(d, "y.npy"))
                n = np.load(os.path.join(d, f"x_{TARGET}.npy"), mmap_mode="r").shape[0]
                rng = np.random.default_rng([a.seed, zlib.crc32(b"train_mask")])
                from training import TRAIN_FRACTION
                np.save(os.path.join(d, "train_mask.npy"), rng.random(n) < TRAIN_FRACTION)
                with open(stamp, "w") as f:
                    json.dump(want, f)
            g["nodes"] = {t: int(np.load(os.path.join(d, f"x_{t}.npy"), mmap_mode="r").shape[0])
                          for t, _ in NODE_TYPES}
            g["N"] = sum(g["nodes"].values())
            g["E"] = sum(int(np.load(os.path.join(d, key(r) + ".npy"), mmap_mode="r").shape[1])
                         for r in RELATIONS)
            self.phase("graphs", t)
            return g

        def prep(self, g):
            """weights and PyG's launch counts (one torch process)"""
            t = time.time()
            wdir = os.path.join(self.build, "hetero", "weights-" + g["name"])
            os.makedirs(wdir, exist_ok=True)
            g["weights"] = {m: os.path.join(wdir, f"{m}.safetensors") for m in self.a.hmodels}
            p = subprocess.run([self.a.python, os.path.abspath(__file__), "prep", "--graph-dir",
                                g["dir"], "--out", wdir, "--seed", str(self.a.seed)] +
                               self.a.hmodels, capture_output=True, text=True, timeout=600,
                               env=dict(os.environ, PYTHONWARNINGS="ignore"))
            try:
                g["pyg_launches"] = json.loads(p.stdout.strip().splitlines()[-1])
            except (ValueError, IndexError):
                g["pyg_launches"] = {m: {"error": "prep failed: " + (
                    p.stderr.strip().splitlines() or ["?"])[-1]} for m in self.a.hmodels}
            self.phase("weights", t)

        def compile_gnncc(self, g):
            from training import train_item
            t = time.time()
            d = os.path.join(self.build, "hetero", "models")
            os.makedirs(d, exist_ok=True)
            g["objects"], g["compile_s"], g["gnncc_error"], g["kernels"] = [], {}, {}, {}
            g["unsupported"] = set()
            if "gnncc-O2" not in self.a.hsystems:
                g["exe"] = None
                return
            for m in self.a.hmodels:
                for tr in ([False] if "hetero-train" not in self.a.htasks else [False, True]) \
                        if "hetero-infer" in self.a.htasks else [True]:
                    name = gnn_name(m, tr)
                    src = os.path.join(d, name.lower() + ".gnn")
                    with open(src, "w") as f:
                        f.write(hetero_source(m, name, train_item(name, f"N_{TARGET}")
                                              if tr else ""))
                    obj = os.path.join(d, name.lower() + ".o")
                    cmd = [self.gnncc, "--target=cpu", "-O2", *self.gnncc_cpu(), "-fopenmp", src, "-o", obj]
                    t1 = time.time()
                    try:
                        p = subprocess.run(cmd, capture_output=True, text=True, timeout=300)
                        ok = p.returncode == 0
                        msg = (p.stderr.strip().splitlines() or ["?"])[0 if not ok else -1]
                    except subprocess.TimeoutExpired:
                        ok, msg = False, "gnncc timed out (300 s)"
                    g["compile_s"][name] = round(time.time() - t1, 3)
                    if ok:
                        g["objects"].append((name, obj))
                    elif is_language_error(msg):
                        g["unsupported"].add(name)
                        g["gnncc_error"][name] = "not supported by this gnncc: " + \
                            msg.split("error:", 1)[1].strip()
                    else:
                        g["gnncc_error"][name] = "gnncc failed: " + msg
                    if not ok:
                        self.log(f"{C.shlex.join(cmd)}: {msg}")
                    if ok and not tr:
                        p = subprocess.run([self.gnncc, "--target=cpu", "-O2",
                                            "--report=kernels", src], capture_output=True,
                                           text=True, timeout=300)
                        k = re.search(r"^kernels:\s*(\d+)", p.stdout, re.M)
                        if k:
                            g["kernels"][m] = int(k.group(1))
            g["exe"] = self.link(g, os.path.join(self.build, f"cpubench-{g['name']}"))
            self.phase("gnncc compile", t)

        def cell_gnncc(self, system, m, g, threads, task):
            train = task == "hetero-train"
            name = gnn_name(m, train)
            base = dict(task=task, compile_s=g["compile_s"].get(name))
            if name in g["gnncc_error"] or not g.get("exe"):
                st = "unsupported" if name in g["unsupported"] else "error"
                return self.add(system, m, g, threads, status=st,
                                message=g["gnncc_error"].get(name, "not compiled"), **base)
            out = self.out_path(system, m, g, threads)
            if os.path.exists(out) and not train:
                os.unlink(out)
            d = g["dir"]
            what = (["--train", f"--y={os.path.join(d, 'y.npy')}",
                     f"--mask={os.path.join(d, 'train_mask.npy')}", "--seed=0"]
                    if train else [f"--weights={g['weights'][m]}", f"--out={out}"])
            cmd = [g["exe"]] + [f"--input={os.path.join(d, f'x_{t}.npy')}"
                                for t, _ in NODE_TYPES] + \
                [f"--rel={os.path.join(d, key(r) + '.npy')}:{g['nodes'][r[0]]}:"
                 f"{g['nodes'][r[2]]}" for r in GNNCC_RELATIONS] + what
            rec = self.run_cpubench(cmd, name, g, threads, TIMEOUT["gnncc"])
            if rec.get("status") == "ok" and not train:
                rec["out"] = out
            return self.add(system, m, g, threads, **base, **rec)

        def cell_torch(self, system, m, g, threads, task):
            limit = min(TIMEOUT[system], self.left())
            c = {"system": system, "threads": threads, "kind": m, "timing": self.timing,
                 "task": task, "cache": os.path.join(self.build, "inductor",
                                                     f"{g['name']}-{m}-{system}-{task}-t{threads}"),
                 "timeout": limit, "left_s": self.left(),
                 "graphs": [{"name": g["name"], "dir": g["dir"], "weights": g["weights"][m],
                             "out": self.out_path(system, m, g, threads)}]}
            return self.torch_records(c, [g], task)

        def add(self, system, model, g, threads, **rec):
            r = super().add(system, model, g, threads, **rec)
            r["nodes"], r["scale"] = g.get("nodes"), g.get("scale")
            if r.get("task") == "hetero-infer":
                r["gnncc_kernels"] = g.get("kernels", {}).get(model)
                r["pyg_launches"] = g.get("pyg_launches", {}).get(model)
            return r

        def run(self):
            a = self.a
            info = C.cpu_info()
            self.log(f"heterogeneous rows: {', '.join(a.hmodels)} on rel-shop at scale "
                     f"{a.hetero_scale:g}; threads {', '.join(map(str, a.threads))}")
            t = time.time()
            q0 = C.quiet_check()
            self.phase("quiet checks", t)
            self.log(("quiet: yes (" if q0["quiet"] else "NOT QUIET: ") + q0["details"] +
                     (")" if q0["quiet"] else ""))
            torch_sys = [s for s in a.hsystems if s.startswith("pyg-")]
            if torch_sys:
                for th in a.threads:
                    self.start_worker(th)
            g = self.graph()
            self.prep(g)
            t = time.time()
            for th in a.threads if torch_sys else []:
                try:
                    self.worker(th)
                except RuntimeError as e:
                    self.log(str(e))
            self.phase("torch workers (import, warm-up)", t)
            self.compile_gnncc(g)
            # by importance: gnncc and PyG eager everywhere, then the
            # torch.compile modes (the slow cells: a cold compile each)
            order = [(s, m, t, task) for ss in (("gnncc-O2", "pyg-eager"),
                                                ("pyg-compile-static", "pyg-compile-dynamic",
                                                 "pyg-compile-conv"))
                     for task in a.htasks for t in a.threads for s in ss for m in a.hmodels
                     if s in a.hsystems]
            for i, (s, m, th, task) in enumerate(order):
                t1 = time.time()
                if self.left() < 3:
                    r = self.add(s, m, g, th, task=task, status="skipped", reason="time budget")
                elif s.startswith("gnncc"):
                    r = self.cell_gnncc(s, m, g, th, task)
                else:
                    r = self.cell_torch(s, m, g, th, task)[0]
                what = (f"{r['median_ms']:.3g} ms x{r['runs']}" if r["status"] == "ok" else
                        r["status"] + ": " + str(r.get("reason") or r.get("message")))
                self.log(f"[{i + 1}/{len(order)}] {s} {m} {g['name']} t{th} {task}: {what} "
                         f"({time.time() - t1:.1f} s)")
                k = "cells: hetero " + ("gnncc" if s.startswith("gnncc") else s)
                self.phase_s[k] = round(self.phase_s.get(k, 0) + time.time() - t1, 1)
            self.stop_workers()
            t = time.time()
            self.compare("hetero-infer")
            self.phase("comparison", t)
            q1 = C.quiet_check()
            self.log(("quiet after: yes (" if q1["quiet"] else "NOT QUIET after: ") +
                     q1["details"] + (")" if q1["quiet"] else ""))
            meta = dict(info)
            meta.update(date=time.strftime("%Y-%m-%d %H:%M:%S %Z"), budget_s=a.budget_s,
                        threads=a.threads, seed=a.seed, tolerance=C.TOL, tasks=a.htasks,
                        graphs=[g["name"]], hetero={"graph": g["name"], "scale": a.hetero_scale,
                                                    "nodes": g["nodes"], "E": g["E"],
                                                    "models": a.hmodels},
                        timing=self.timing, quiet_before=q0, quiet_after=q1,
                        quiet=q0["quiet"] and q1["quiet"])
            meta.update(self.versions())
            meta["phases_s"] = self.phase_s
            meta["elapsed_s"] = round(time.time() - self.t0, 1)
            return self.write(meta)

    return HeteroRun


def main(argv=None):
    import argparse
    ap = argparse.ArgumentParser(description=__doc__,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    sub = ap.add_subparsers(dest="cmd", required=True)
    p = sub.add_parser("prep", help="weights and PyG's launch counts (internal)")
    p.add_argument("--graph-dir", required=True)
    p.add_argument("--out", required=True)
    p.add_argument("--seed", type=int, default=1)
    p.add_argument("models", nargs="+", choices=MODEL_NAMES)
    s = sub.add_parser("source", help="print a model's gnncc source")
    s.add_argument("model", choices=MODEL_NAMES)
    s.add_argument("--train", action="store_true")
    a = ap.parse_args(argv)
    if a.cmd == "source":
        from training import train_item
        name = gnn_name(a.model, a.train)
        sys.stdout.write(hetero_source(a.model, name, train_item(name, f"N_{TARGET}")
                                       if a.train else ""))
        return 0
    return cmd_prep(a)


if __name__ == "__main__":
    sys.path.insert(0, os.path.dirname(HERE))
    sys.exit(main())
