#!/usr/bin/env python3
"""The CPU benchmark's raw results as Markdown tables and a plot.

usage: cpureport.py RESULTS.json [--md OUT.md] [--png OUT.png]

RESULTS.json is what cpubench.py writes: {"meta": {...}, "records": [...]},
one record per (system, model, graph, threads) with "status" ok, skipped
(with a "reason") or error (with a "message"), and for those that ran
"agree" (the output within 1e-4 of the largest |value| of PyG eager's).
The Markdown: the machine and versions, the quiet check, one table of
median times per thread count (rows model x graph; gnncc -O2's speedup
over the best of PyG eager and both torch.compile modes; a geometric
mean), the compile times, the peak RSS, and how long each part of the run
took.  A cell that did not run says why; a time whose output disagrees
with PyG eager's is marked ✗, one from fewer than the minimum number of
timed runs (slow cells under the time cap) carries its count as (n=3).
The plot needs matplotlib; without it the report says so.

Training rows (records with "task": "train", see cpubench.py's docstring):
a separate table per thread count, "training epoch (forward + backward +
Adam)": median ms of one epoch for gnncc -O2 (the compiled C training
step: "n/a" where no record for it exists), PyG eager and both
torch.compile modes, gnncc's speedup over the best of them, the compile
times (gnncc's training object; the torch.compile modes' forward and
backward graphs), and PyG eager's and gnncc's loss over the cell's
epochs (first -> last, a sanity check).
Inference records have no "task" (or "infer").
"""
import argparse
import json
import math
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
from report import cell, esc, num   # noqa: E402  (bench/report.py's cell formatting)

SYSTEMS = [("gnncc-O2", "gnncc -O2"), ("gnncc-bf16", "gnncc bf16"), ("gnncc-O0", "gnncc -O0"),
           ("pyg-eager", "PyG eager"),
           ("pyg-compile-dynamic", "compile dynamic"), ("pyg-compile-static", "compile static")]
BASELINES = ["pyg-eager", "pyg-compile-dynamic", "pyg-compile-static"]
MODELS = [("gcn", "GCN"), ("sage", "SAGE"), ("gat", "GAT"), ("gin", "GIN")]
GRAPH_ORDER = ["cora", "citeseer", "pubmed", "arxiv"]
# the training table's columns.  GNNCC TRAINING: "gnncc-O2" is the compiled
# C training step's column, fed by records with task "train" of the same
# format as PyG's (cpubench.py's docstring); "n/a" while there are none.
TRAIN_GNNCC = "gnncc-O2"
TRAIN_SYSTEMS = [(TRAIN_GNNCC, "gnncc -O2"), ("pyg-eager", "PyG eager"),
                 ("pyg-compile-dynamic", "compile dynamic"),
                 ("pyg-compile-static", "compile static")]


def task(r):
    return r.get("task") or "infer"


def index(records):
    return {(r["system"], r["model"], r["graph"], r.get("threads")): r for r in records}


def rows(records):
    graphs = {r["graph"] for r in records}
    gs = [g for g in GRAPH_ORDER if g in graphs] + sorted(graphs - set(GRAPH_ORDER))
    ms = {r["model"] for r in records}
    return [(m, label, g) for m, label in MODELS if m in ms for g in gs]


def ok(r):
    return r is not None and r.get("status") == "ok"


def timecell(r, min_runs):
    def v(r):
        s = num(r["median_ms"])
        if r.get("runs", min_runs) < min_runs:
            s += f" (n={r['runs']})"
        if r.get("agree") is False:
            s += " ✗"
        return s
    return cell(r, v)


def best_baseline(idx, m, g, t):
    c = [idx.get((s, m, g, t)) for s in BASELINES]
    c = [r for r in c if ok(r)]
    return min(c, key=lambda r: r["median_ms"]) if c else None


def speedup(idx, m, g, t):
    a, b = idx.get(("gnncc-O2", m, g, t)), best_baseline(idx, m, g, t)
    if not ok(a) or b is None:
        return None, None
    return b["median_ms"] / a["median_ms"], b["system"]


def agreement(idx, m, g, t):
    return agreement_of([idx.get((s, m, g, t)) for s, _ in SYSTEMS])


def agreement_of(rs):
    """the agreement cell of one row's records rs"""
    bad = [r for r in rs if ok(r) and r.get("agree") is False]
    if bad:
        return "✗ " + ", ".join(f"{r['system']} ({num(r.get('rel_diff'), 2)} rel)"
                                if r.get("rel_diff") is not None else
                                f"{r['system']} ({esc(r.get('agree_note', '?'))})" for r in bad)
    checked = [r for r in rs if ok(r) and r.get("agree") is True]
    if not checked:
        return "—"
    worst = max(r.get("rel_diff", 0) for r in checked)
    return f"ok ({len(checked)}, ≤ {num(worst, 2)})"


SHORT = {"pyg-eager": "eager", "pyg-compile-dynamic": "dyn", "pyg-compile-static": "static"}


def header(meta):
    m = meta
    q = "yes" if m.get("quiet") else "**NO**"
    lines = [f"# gnncc (cpu target) vs PyTorch Geometric on {m.get('cpu', '?')}", ""]
    lines += [
        f"- CPU: {m.get('cpu', '?')} (family {m.get('cpu_family', '?')}, model "
        f"{m.get('cpu_model', '?')}), {m.get('cores', '?')} logical CPUs; ISA: "
        f"{', '.join(m.get('isa', [])) or '?'}",
        f"- compiler: {m.get('cc', '?')}; gnncc commit {m.get('gnncc_commit', '?')}",
        f"- torch {m.get('torch', '?')}, torch_geometric {m.get('pyg', '?')}, Python "
        f"{m.get('python', '?')}, NumPy {m.get('numpy', '?')}, Linux {m.get('kernel', '?')}",
        f"- date: {m.get('date', '?')}; the whole run took {num(m.get('elapsed_s'))} s "
        f"(budget {num(m.get('budget_s'))} s)",
        f"- quiet: {q} (before: {esc(m.get('quiet_before', {}).get('details', '?'))}; after: "
        f"{esc(m.get('quiet_after', {}).get('details', '?'))})",
    ]
    for r in m.get("merged_runs", []):   # cpubench.py run --merge: rows of later runs
        lines.append(
            f"- merged in: the {', '.join(r.get('tasks', []))} rows on "
            f"{', '.join(r.get('train_graphs', []) if r.get('tasks') == ['train'] else r.get('graphs', []) or [])}"
            f" from a run of {r.get('date', '?')} (gnncc commit {r.get('gnncc_commit', '?')}; "
            f"torch {r.get('torch', '?')}, torch_geometric {r.get('pyg', '?')}; "
            f"{num(r.get('elapsed_s'))} s); quiet: {'yes' if r.get('quiet') else '**NO**'} "
            f"(before: {esc(r.get('quiet_before', {}).get('details', '?'))}; after: "
            f"{esc(r.get('quiet_after', {}).get('details', '?'))})")
    if not m.get("quiet"):
        lines += ["", "**Warning: other processes were using the CPU during this run; the "
                  "times are not fit to compare.**"]
    tm = m.get("timing", {})
    lines += ["", "Forward inference, float32, batch = the whole graph.  Times: the median "
              f"of at least {tm.get('min_runs', '?')} timed calls after warm-up (fewer, at "
              f"least {tm.get('floor_runs', '?')}, where {tm.get('min_runs', '?')} would take "
              f"over {num(tm.get('cap_s'))} s, and as many as fit in "
              f"{num(tm.get('slow_cap_s'))} s, at least 1, where "
              f"{tm.get('floor_runs', '?')} would take longer: marked (n=…)), in ms.  Speedup: the best of "
              "PyG eager and both torch.compile modes over gnncc -O2 (above 1: gnncc is "
              "faster).  gnncc bf16: -O2 with --precision=bf16 (features, activations and "
              "messages stored in bfloat16, float32 arithmetic; docs/precision.md).  "
              "Agreement: every system's output against PyG eager's, within "
              f"{m.get('tolerance', 1e-4):g} of the largest |value| (gnncc bf16: within "
              "1.6e-2, bfloat16's documented tolerance; ✗: outside it); the "
              "number checked and the largest relative difference.  See bench/README.md, "
              "\"CPU benchmark\"."]
    return lines


def few_runs(recs, tm):
    """one line: the cells with fewer than min_runs timed calls, and why"""
    mr, fl = tm.get("min_runs", 20), tm.get("floor_runs", 3)
    few = [r for r in recs if ok(r) and r.get("runs", mr) < mr]
    if not few:
        return [f"All cells that ran had at least {mr} timed calls."]
    def key(r):
        return (GRAPH_ORDER.index(r["graph"]) if r["graph"] in GRAPH_ORDER else 9,
                r["system"], r["model"], r.get("threads") or 0)
    capped = [r for r in few if r["runs"] >= fl]
    slow = [r for r in few if r["runs"] < fl]
    def names(rs):
        return ", ".join(f"{r['system'].replace('pyg-compile-', 'compile-')} {r['model']} "
                         f"{r['graph']} t{r['threads']}{' train' if task(r) == 'train' else ''}"
                         f" (n={r['runs']})"
                         for r in sorted(rs, key=key))
    out = f"Fewer than {mr} timed calls ({len(few)} cells): "
    parts = []
    if capped:
        parts.append(f"{mr} calls would have taken over {num(tm.get('cap_s'))} s: "
                     + names(capped))
    if slow:
        parts.append(f"one call takes so long that {fl} would have taken over "
                     f"{num(tm.get('slow_cap_s'))} s: " + names(slow))
    return [out + "; ".join(parts) + "."]


def time_table(idx, rs, t, min_runs):
    lines = [f"## {t} thread{'s' if t != 1 else ''}", "",
             "| model | graph | " + " | ".join(lab for _, lab in SYSTEMS) +
             " | speedup (vs best) | agreement |",
             "|---|---|" + "---:|" * len(SYSTEMS) + "---|---|"]
    logs = []
    for m, label, g in rs:
        cells = [timecell(idx.get((s, m, g, t)), min_runs) for s, _ in SYSTEMS]
        sp, who = speedup(idx, m, g, t)
        if sp is not None:
            logs.append(math.log(sp))
        lines.append(f"| {label} | {g} | " + " | ".join(cells) + " | " +
                     (f"{num(sp)}× (vs {SHORT[who]})" if sp is not None else "—") + " | " +
                     agreement(idx, m, g, t) + " |")
    if logs:
        gm = math.exp(sum(logs) / len(logs))
        lines.append(f"| **geometric mean** | ({len(logs)} rows) |" + " |" * len(SYSTEMS) +
                     f" **{num(gm)}×** | |")
    return lines


def bf16_table(idx, rs, threads):
    """gnncc -O2 (float32) over gnncc bf16: what 16-bit storage gains"""
    lines = ["## bfloat16 storage: gnncc -O2 time over gnncc bf16", "",
             "| model | graph | " + " | ".join(f"{t} thr" for t in threads) + " |",
             "|---|---|" + "---:|" * len(threads)]
    any_ = False
    for m, label, g in rs:
        cs = []
        for t in threads:
            a, b = idx.get(("gnncc-O2", m, g, t)), idx.get(("gnncc-bf16", m, g, t))
            if ok(a) and ok(b):
                cs.append(f"{num(a['median_ms'] / b['median_ms'])}×")
                any_ = True
            else:
                cs.append("—")
        lines.append(f"| {label} | {g} | " + " | ".join(cs) + " |")
    return lines if any_ else []


def compile_table(idx, rs, threads):
    cols = [("gnncc-O2", None, "gnncc -O2"), ("gnncc-bf16", None, "gnncc bf16"),
            ("gnncc-O0", None, "gnncc -O0")]
    for s in ("pyg-compile-dynamic", "pyg-compile-static"):
        cols += [(s, t, f"{SHORT[s]}, {t} thr") for t in threads]
    lines = ["## Compile times (s)", "",
             "gnncc: the wall time of `gnncc --target=cpu -fopenmp` (cc included; the same "
             "object serves every thread count).  torch.compile: the warm-up calls' time "
             "less as many steady calls, cold Inductor cache, per thread count (Inductor "
             "compiles for the thread count).  compile dynamic: one process per model and "
             "thread count runs every graph in turn (dynamic=True is meant to serve many "
             "shapes from one compile): the first graph's number is the cold compile, a later "
             "graph's what its shapes made Dynamo and Inductor recompile.", "",
             "| model | graph | " + " | ".join(c[2] for c in cols) + " |",
             "|---|---|" + "---:|" * len(cols)]

    def secs(r):
        return "—" if r.get("compile_s") is None else num(r["compile_s"])

    for m, label, g in rs:
        cs = []
        for s, t, _ in cols:
            if t is None:   # any thread count's record holds gnncc's compile time
                r = next((idx[k] for k in idx if k[:3] == (s, m, g) and
                          idx[k].get("compile_s") is not None), None)
                cs.append("—" if r is None else num(r["compile_s"]))
            else:
                cs.append(cell(idx.get((s, m, g, t)), secs))
        lines.append(f"| {label} | {g} | " + " | ".join(cs) + " |")
    return lines


def rss_table(idx, rs, threads):
    lines = ["## Peak RSS (MiB)", "",
             "ru_maxrss of the process that ran the one cell (gnncc: the cpubench "
             "process; PyG: a child forked from a process that had imported torch and PyG, "
             "so torch's own footprint is included; compile dynamic: the running peak of the "
             "process that runs every graph in turn, after that graph).  Cells: " +
             " / ".join(f"{t} thr" for t in threads) + ".", "",
             "| model | graph | " + " | ".join(lab for _, lab in SYSTEMS) + " |",
             "|---|---|" + "---:|" * len(SYSTEMS)]

    def mib(r):
        return "—" if r.get("maxrss_kb") is None else num(r["maxrss_kb"] / 1024)

    for m, label, g in rs:
        cs = [" / ".join(cell(idx.get((s, m, g, t)), mib) for t in threads) for s, _ in SYSTEMS]
        lines.append(f"| {label} | {g} | " + " | ".join(cs) + " |")
    return lines


def train_table(idx, rs, t, min_runs):
    """training epochs at t threads; idx: the training records' index"""
    lines = [f"## Training epoch (forward + backward + Adam), {t} thread"
             f"{'s' if t != 1 else ''}", "",
             "| model | graph | " + " | ".join(lab for _, lab in TRAIN_SYSTEMS) +
             " | speedup (vs best) | compile s (gnncc / dyn / static) | loss, first → last (eager; gnncc) |",
             "|---|---|" + "---:|" * len(TRAIN_SYSTEMS) + "---|---:|---|"]
    logs = []
    for m, label, g in rs:
        cells = []
        for s, _ in TRAIN_SYSTEMS:
            r = idx.get((s, m, g, t))
            cells.append("n/a" if r is None and s == TRAIN_GNNCC else timecell(r, min_runs))
        sp, who = speedup(idx, m, g, t)
        if sp is not None:
            logs.append(math.log(sp))

        def comp(s):
            r = idx.get((s, m, g, t))
            return num(r["compile_s"]) if ok(r) and r.get("compile_s") is not None else "—"

        def loss(s):
            r = idx.get((s, m, g, t))
            return (f"{r['loss_first']:.4g} → {r['loss_last']:.4g}"
                    if ok(r) and r.get("loss_first") is not None else "—")
        lines.append(f"| {label} | {g} | " + " | ".join(cells) + " | " +
                     (f"{num(sp)}× (vs {SHORT[who]})" if sp is not None else "—") + " | " +
                     f"{comp(TRAIN_GNNCC)} / {comp('pyg-compile-dynamic')} / "
                     f"{comp('pyg-compile-static')} | {loss('pyg-eager')}; {loss(TRAIN_GNNCC)} |")
    if logs:
        gm = math.exp(sum(logs) / len(logs))
        lines.append(f"| **geometric mean** | ({len(logs)} rows) |" + " |" * len(TRAIN_SYSTEMS) +
                     f" **{num(gm)}×** | | |")
    return lines



# --- the heterogeneous rows (records with task hetero-infer / hetero-train) --------

HETERO_SYSTEMS = [("gnncc-O2", "gnncc -O2"), ("pyg-eager", "PyG eager"),
                  ("pyg-compile-dynamic", "compile dynamic"),
                  ("pyg-compile-static", "compile static"),
                  ("pyg-compile-conv", "compile per conv")]
HETERO_BASELINES = [s for s, _ in HETERO_SYSTEMS[1:]]
HETERO_MODELS = [("sage", "to_hetero(GraphSAGE)"), ("gat", "to_hetero(GAT)"),
                 ("transformer", "to_hetero(TransformerConv)")]
HETERO_TARGET = 3.0   # the speedup the heterogeneous rows are meant to reach
SHORT["pyg-compile-conv"] = "per conv"


def hcell(r, min_runs):
    """a heterogeneous cell: the time, or why there is none"""
    if r is not None and r.get("status") == "unsupported":
        return "not supported by this gnncc"
    if r is not None and r.get("status") == "error":
        msg = str(r.get("message", "?"))
        return esc("failed: " + (msg[:70] + "…" if len(msg) > 70 else msg))
    return timecell(r, min_runs)


def hetero_speedup(idx, m, g, t):
    a = idx.get(("gnncc-O2", m, g, t))
    c = [r for r in (idx.get((s, m, g, t)) for s in HETERO_BASELINES) if ok(r)]
    if not ok(a) or not c:
        return None, None
    b = min(c, key=lambda r: r["median_ms"])
    return b["median_ms"] / a["median_ms"], b["system"]


def hetero_table(recs, tk, t, min_runs):
    """one task's (hetero-infer or hetero-train) times at t threads"""
    idx = index(recs)
    infer = tk == "hetero-infer"
    graphs = sorted({r["graph"] for r in recs})
    ms = {r["model"] for r in recs}
    last = "agreement" if infer else "loss, first → last (eager; gnncc)"
    lines = [f"## Heterogeneous, {'forward' if infer else 'training epoch'}, {t} thread"
             f"{'s' if t != 1 else ''}", "",
             "| model | graph | " + " | ".join(lab for _, lab in HETERO_SYSTEMS) +
             f" | speedup (vs best) | ≥ {HETERO_TARGET:g}× | {last} |",
             "|---|---|" + "---:|" * len(HETERO_SYSTEMS) + "---|---|---|"]
    logs = []
    for m, label in HETERO_MODELS:
        if m not in ms:
            continue
        for g in graphs:
            cells = [hcell(idx.get((s, m, g, t)), min_runs) for s, _ in HETERO_SYSTEMS]
            sp, who = hetero_speedup(idx, m, g, t)
            if sp is not None:
                logs.append(math.log(sp))
            if infer:
                tail = agreement_of([idx.get((s, m, g, t)) for s, _ in HETERO_SYSTEMS])
            else:
                def loss(s):
                    r = idx.get((s, m, g, t))
                    return (f"{r['loss_first']:.4g} → {r['loss_last']:.4g}"
                            if ok(r) and r.get("loss_first") is not None else "—")
                tail = f"{loss('pyg-eager')}; {loss('gnncc-O2')}"
            lines.append(f"| {label} | {g} | " + " | ".join(cells) + " | " +
                         (f"{num(sp)}× (vs {SHORT[who]})" if sp is not None else "—") + " | " +
                         ("—" if sp is None else "yes" if sp >= HETERO_TARGET else
                          f"**no** ({num(HETERO_TARGET / sp)}× short)") + f" | {tail} |")
    if logs:
        gm = math.exp(sum(logs) / len(logs))
        lines.append(f"| **geometric mean** | ({len(logs)} rows) |" + " |" * len(HETERO_SYSTEMS) +
                     f" **{num(gm)}×** | | |")
    return lines


def hetero_kernels(recs):
    """kernels a forward: gnncc's beside PyG eager's operator launches"""
    lines = ["## Heterogeneous: kernels per forward", "",
             "gnncc: `gnncc --target=cpu -O2 --report=kernels` (the kernels one forward "
             "runs).  PyG eager: torch.profiler's CPU events named `aten::*` that no other "
             "`aten::*` event encloses, in one forward after a warm one (the operators "
             "Python dispatched, each one or more kernels; their nested parts not "
             "counted).", "",
             "| model | graph | gnncc kernels | PyG eager aten ops |", "|---|---|---:|---:|"]
    seen = set()
    for m, label in HETERO_MODELS:
        for r in recs:
            if r["model"] != m or (m, r["graph"]) in seen:
                continue
            seen.add((m, r["graph"]))
            pl = r.get("pyg_launches")
            pl = esc("failed: " + pl["error"][:60]) if isinstance(pl, dict) else num(pl)
            gk = r.get("gnncc_kernels")
            lines.append(f"| {label} | {r['graph']} | "
                         f"{'—' if gk is None else num(gk)} | {pl} |")
    return lines


def hetero_compile(recs, threads):
    cols = [("gnncc-O2", "gnncc -O2")] + [(s, lab) for s, lab in HETERO_SYSTEMS[2:]]
    lines = ["## Heterogeneous: compile times (s)", "",
             "gnncc: `gnncc --target=cpu -O2 -fopenmp` (forward; training: forward, backward "
             "and Adam), cc included.  torch.compile: the warm-up calls' time less as many "
             "steady calls.  Cells: " + " / ".join(f"{t} thr" for t in threads) + ".", "",
             "| model | task | " + " | ".join(lab for _, lab in cols) + " |",
             "|---|---|" + "---:|" * len(cols)]
    for m, label in HETERO_MODELS:
        for tk in ("hetero-infer", "hetero-train"):
            rs = [r for r in recs if r["model"] == m and task(r) == tk]
            if not rs:
                continue
            idx = index(rs)
            cs = []
            for s, _ in cols:
                v = [idx.get((s, m, r["graph"], t)) for r in rs[:1] for t in threads]
                cs.append(" / ".join("—" if not ok(r) or r.get("compile_s") is None
                                     else num(r["compile_s"]) for r in v))
            lines.append(f"| {label} | {'forward' if tk == 'hetero-infer' else 'training'} | "
                         + " | ".join(cs) + " |")
    return lines


def hetero_section(meta, allrecs, min_runs):
    recs = [r for r in allrecs if task(r).startswith("hetero")]
    if not recs:
        return []
    h = next((r.get("hetero") for r in [meta] + meta.get("merged_runs", [])[::-1]
              if r.get("hetero")), {}) or {}
    nodes = h.get("nodes") or {}
    threads = sorted({r.get("threads") for r in recs if r.get("threads") is not None})
    out = ["", "## Heterogeneous rows (rel-shop)", "",
           f"gnngen `--preset=rel-shop --scale={h.get('scale', '?')}` "
           f"({', '.join(f'{num(v)} {k}s' for k, v in nodes.items()) or '?'}; "
           f"{num(h.get('E'))} edges in 4 relations).  PyG: `to_hetero(GNN, metadata, "
           "aggr=\"sum\")` of a two-layer GNN (conv1, relu, conv2; hidden 64, 4 classes), "
           "the customer rows' log_softmax; gnncc: the same model in its language "
           "(bench/cpu/hetero.py), the same weights.  Systems: gnncc -O2, PyG eager, "
           "torch.compile of the whole model (dynamic=True, dynamic=False) and compile per "
           "conv (each conv of to_hetero's copies compiled on its own, dynamic=False, the "
           "model eager around them).  Speedup: the best of the four torch systems over gnncc "
           f"-O2; ≥ {HETERO_TARGET:g}×: whether it reaches that.  Forward outputs against PyG "
           "eager's as above; training: one full-graph epoch (Adam, nll over a random 10% of "
           "customers), not compared.  See bench/README.md, \"Heterogeneous rows\"."]
    for tk in ("hetero-infer", "hetero-train"):
        trs = [r for r in recs if task(r) == tk]
        for t in threads if trs else []:
            out += [""] + hetero_table(trs, tk, t, min_runs)
    inf = [r for r in recs if task(r) == "hetero-infer"]
    if inf:
        out += [""] + hetero_kernels(inf)
    out += [""] + hetero_compile(recs, threads)
    return out


def markdown(data):
    meta, allrecs = data["meta"], data["records"]
    recs = [r for r in allrecs if task(r) == "infer"]
    trecs = [r for r in allrecs if task(r) == "train"]
    idx = index(recs)
    rs = rows(recs)
    threads = meta.get("threads") or sorted({r.get("threads") for r in recs
                                             if r.get("threads") is not None})
    min_runs = meta.get("timing", {}).get("min_runs", 20)
    out = header(meta)
    if recs:
        for t in threads:
            out += [""] + time_table(idx, rs, t, min_runs)
    if trecs:
        tidx, trs = index(trecs), rows(trecs)
        opt = meta.get("train_optimizer") or {"lr": 0.01, "weight_decay": 5e-4}
        out += ["", "Training: one full-graph epoch, `model.train(); optimizer.zero_grad(); "
                "out = model(x, edge_index); loss = F.nll_loss(out[train_mask], "
                "y[train_mask]); loss.backward(); optimizer.step()`, torch.optim.Adam(lr="
                f"{opt.get('lr', 0.01):g}, weight_decay={opt.get('weight_decay', 5e-4):g}), "
                "dropout on; torch.compile compiles the model (forward and backward), the loss "
                "and the optimizer step stay eager.  Same timing rule and statistics as "
                "inference (median ms).  gnncc -O2: the compiled C training step (n/a: no "
                "record of it).  Speedup: the best of PyG eager and both torch.compile modes over "
                "gnncc -O2.  Outputs are not compared (dropout draws differ); the loss column "
                "shows PyG eager's and gnncc's first (warm-up) and last (timed) epoch's loss: "
                "PyG's cells start from the shared seeded weights file, gnncc's from its "
                "seeded init (`gnn_prog_init`, PyG's scheme), so the first losses differ.  "
                "gnncc's compile time: `gnncc --target=cpu -O2 -fopenmp` of the model with its "
                "train item (forward, backward, Adam), cc included."]
        tthreads = [t for t in threads if any(r.get("threads") == t for r in trecs)] or \
            sorted({r.get("threads") for r in trecs if r.get("threads") is not None})
        for t in tthreads:
            out += [""] + train_table(tidx, trs, t, min_runs)
    out += hetero_section(meta, allrecs, min_runs)
    out += [""] + few_runs(allrecs, meta.get("timing", {}))
    if recs and bf16_table(idx, rs, threads):
        out += [""] + bf16_table(idx, rs, threads)
    if recs:
        out += [""] + compile_table(idx, rs, threads)
        out += [""] + rss_table(idx, rs, threads)
    ph = meta.get("phases_s", {})
    if ph:
        out += ["", "## Where the time went (s)", "", "| part | s |", "|---|---:|"]
        out += [f"| {esc(k)} | {num(v)} |" for k, v in ph.items()]
        out.append(f"| **total, run.sh included** | {num(meta.get('elapsed_s'))} |")
    return "\n".join(out) + "\n"


def plot(data, path):
    try:
        import matplotlib
        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        return "matplotlib is not installed: no plot"
    meta = data["meta"]
    recs = [r for r in data["records"] if task(r) == "infer"]
    if not recs:
        return "no inference records: no plot"
    idx = index(recs)
    rs = rows(recs)
    threads = meta.get("threads") or [1, 2]
    fig, axes = plt.subplots(len(threads), 1, figsize=(max(8, 0.9 * len(rs) + 2),
                                                       3.6 * len(threads)), squeeze=False)
    width = 0.8 / len(SYSTEMS)
    for ax, t in zip(axes[:, 0], threads):
        for k, (s, lab) in enumerate(SYSTEMS):
            xs, ys = [], []
            for i, (m, _, g) in enumerate(rs):
                r = idx.get((s, m, g, t))
                if ok(r):
                    xs.append(i + (k - (len(SYSTEMS) - 1) / 2) * width)
                    ys.append(r["median_ms"])
            ax.bar(xs, ys, width, label=lab)
        ax.set_yscale("log")
        ax.set_ylabel("median forward (ms)")
        ax.set_title(f"{meta.get('cpu', '?')}, {t} thread{'s' if t != 1 else ''}")
        ax.set_xticks(range(len(rs)))
        ax.set_xticklabels([f"{lab}\n{g}" for _, lab, g in rs], fontsize=8)
        ax.grid(axis="y", which="both", alpha=0.3)
    axes[0, 0].legend(fontsize=8, ncol=len(SYSTEMS))
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    return None


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("results")
    ap.add_argument("--md")
    ap.add_argument("--png")
    a = ap.parse_args(argv)
    with open(a.results) as f:
        data = json.load(f)
    md = markdown(data)
    if a.png:
        why = plot(data, a.png)
        if why:
            md += f"\n({why})\n"
            print(f"cpureport: {why}", file=sys.stderr)
    if a.md:
        with open(a.md, "w") as f:
            f.write(md)
    else:
        sys.stdout.write(md)
    return 0


if __name__ == "__main__":
    sys.exit(main())
