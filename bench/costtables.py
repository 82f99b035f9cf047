#!/usr/bin/env python3
"""costtables.py GNNCC [--graphs arxiv,products] [--gpu h100] [--tune-dir DIR]
   costtables.py GNNCC --train [--graphs cora,citeseer,...] [--gpu h100] [--measured RESULTS.json]
   costtables.py GNNCC --precision [--graphs products] [--gpu h100] [--measured RESULTS.json]

The modeled forward of the benchmark's models (bench.py's instantiation
for the synthetic graphs) on gnngen's presets, from
`gnncc --target=cuda --report=cost --report-graph=preset:NAME`, as the
markdown tables of docs/cost.md: a summary line per model and graph,
then per kernel launch its schedule, busiest/mean warp work, modeled
time, bound and fraction of its DRAM lower bound (reduce levels summed
per walk).  With --tune-dir, DIR/NAME/edge_index.npy (gnngen's output)
is also given as --tune-graph, so the schedules are chosen on the graph.
Needs no GPU; products takes about 20 s and 2 GB a model.

--train: the training rows instead (bench.py's: each model with the
benchmark's train item, bench/training.py; Cora and CiteSeer at their
examples' widths from data/, the presets at the large ones), one
markdown table of the modeled training step -- forward, backward and
the optimizer's update, `gnncc --report=cost`'s step line -- and its
launches, beside the modeled forward.  With --measured, a bench.py
results JSON: its training records (task "train") give gnncc -O2's
measured step and the best torch system's (PyG eager or torch.compile)
beside the model's; rows it has none for say so.

--precision: each model (and the aggregation alone) in float32, under
--precision=bf16, and under bf16 with bfloat16 features and outputs
(bench.py's bf16_io): the modeled forward and the modeled device peak of
a forward (`--report=memory`); with --measured, torch.compile(dynamic)'s
measured peaks and cuSPARSE's measured SpMM beside them."""
import argparse
import os
import re
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
import bench  # noqa: E402


def parse(text):
    """the launches (name, kind, schedule, busiest/mean, time, bound, %)
    and the forward line of one report"""
    ks, cur = [], None
    for line in text.splitlines():
        m = re.match(r"^  (\S+)\s+(row|chunk|reduce|dense|elementwise)\s+(.*)$", line)
        if m:
            cur = {"name": m.group(1), "kind": m.group(2), "sched": m.group(3).strip()}
            ks.append(cur)
            continue
        m = re.search(r"busiest/mean=([\d.]+)", line)
        if m and cur:
            cur["bm"] = float(m.group(1))
        m = re.search(r"time=([\d.]+) us \(([^)]+)\)\s+dram-lower-bound=(\d+)%", line)
        if m and cur:
            cur.update(t=float(m.group(1)), bound=m.group(2), lb=int(m.group(3)))
    fw = re.search(r"forward: (\d+) launches, ([\d.]+) us.*dram-lower-bound=(\d+)%", text)
    if not fw:
        raise SystemExit("costtables.py: no forward line in the report:\n" + text)
    return ks, fw


def step_line(text):
    """(launches, us) of the report's training step (the model's
    NAME_train), and the forward's us"""
    st = re.search(r"^step: (\d+) launches.*?, ([\d.]+) us \(", text, re.M)
    fw = re.search(r"^forward: \d+ launches, ([\d.]+) us", text, re.M)
    if not st or not fw:
        raise SystemExit("costtables.py: no step or forward line in the report:\n" + text)
    return int(st.group(1)), float(st.group(2)), float(fw.group(1))


def measured_train(path):
    """{(model, graph): (gnncc -O2 ms, best torch ms, its system)} of a
    bench.py results JSON's training records"""
    import json
    with open(path) as f:
        recs = json.load(f)["records"]
    out = {}
    for r in recs:
        if r.get("task") != "train" or r.get("status") != "ok":
            continue
        row, t = out.setdefault((r["model"], r["graph"]), [None, None, None]), r["median_ms"]
        if r["system"] == "gnncc-O2":
            row[0] = t
        elif r["system"].startswith("pyg-") and (row[1] is None or t < row[1]):
            row[1], row[2] = t, r["system"][4:]
    return out


def graph_ref(g):
    """(input features, --report-graph) of bench.py's graph g"""
    if "preset" in g:
        return g["F"], "preset:" + g["preset"]
    d = os.path.join(bench.ROOT, g["dir"])
    return bench.npy_shape(os.path.join(d, "x.npy"))[1], os.path.join(d, "edge_index.npy")


def train_table(a, graphs, tmp):
    """the training rows' markdown table (--train)"""
    meas = measured_train(a.measured) if a.measured else {}
    rows = ["| model | graph | modeled step | launches | modeled forward | measured gnncc -O2 | "
            "measured best torch |", "|---|---|---|---|---|---|---|"]
    for gname in a.graphs.split(","):
        g = graphs[gname]
        fin, ref = graph_ref(g)
        for kind in bench.MODELS:
            name = bench.model_name(kind, "O2T")
            src = os.path.join(tmp, f"{kind}_{gname}.gnn")
            with open(src, "w") as f:
                f.write(bench.instantiate(kind, fin, g["classes"], name, **bench.WIDTHS[g["widths"]][kind]) +
                        bench.train_item(name))
            text = subprocess.run([a.gnncc, "--target=cuda", "-O2", "--report=cost", "--report-graph=" + ref,
                                   f"--gpu={a.gpu}", "--no-tune-cache", src],
                                  check=True, capture_output=True, text=True).stdout
            n, st, fw = step_line(text)
            gm, tm, sysname = meas.get((kind, gname), (None, None, None))
            rows.append(f"| {kind.upper()} | {gname} | {st / 1000:.3f} ms | {n} | {fw / 1000:.3f} ms | "
                        f"{f'{gm:.3f} ms' if gm is not None else 'not measured'} | "
                        f"{f'{tm:.3f} ms ({sysname})' if tm is not None else 'not measured'} |")
    return "\n".join(rows)


def forward_peak(text):
    """(modeled forward us, modeled peak bytes of a forward on the
    caller's device inputs and outputs) of a --report=cost,memory"""
    fw = re.search(r"^forward: \d+ launches, ([\d.]+) us", text, re.M)
    pk = re.search(r"peak of a forward on the caller's device inputs and outputs: .*; (\d+) with the graph", text)
    if not fw or not pk:
        raise SystemExit("costtables.py: no forward or peak line in the report:\n" + text)
    return float(fw.group(1)), int(pk.group(1))


def measured_peers(path):
    """{(model, graph): record} of a bench.py results JSON's
    torch.compile(dynamic) forwards, and {graph: cuSPARSE's SpMM ms}"""
    import json
    with open(path) as f:
        recs = json.load(f)["records"]
    comp, sp = {}, {}
    for r in recs:
        if r.get("status") != "ok" or r.get("task", "infer") != "infer":
            continue
        if r["system"] == "pyg-compile-dynamic":
            comp[(r["model"], r["graph"])] = r
        elif r["system"] == "agg-cusparse":
            sp[r["graph"]] = min(sp.get(r["graph"], r["median_ms"]), r["median_ms"])
    return comp, sp


def precision_table(a, graphs, tmp):
    """--precision: each model's forward and device peak in float32, under
    --precision=bf16, and under bf16 with bfloat16 features and outputs
    (bench.py's bf16_io), beside torch.compile(dynamic)'s measured peak
    and, for the aggregation, cuSPARSE's measured SpMM"""
    comp, sp = measured_peers(a.measured) if a.measured else ({}, {})
    rows = ["| model | graph | forward fp32 | bf16 | bf16 I/O | bf16 / fp32 | bf16 I/O / fp32 | "
            "peak fp32 | peak bf16 | peak bf16 I/O | torch.compile(dynamic) peak, measured | "
            "fp32 / compile | bf16 I/O / compile |", "|---" * 13 + "|"]
    agg = []
    for gname in a.graphs.split(","):
        g = graphs[gname]
        fin, ref = graph_ref(g)
        for kind in bench.MODELS + ["agg"]:
            w = bench.WIDTHS[g["widths"]].get(kind, {})
            fin, classes = (bench.AGG_WIDTH, bench.AGG_WIDTH) if kind == "agg" else (fin, g["classes"])
            text = bench.instantiate(kind, fin, classes, f"{kind}_{gname}", **w)
            res = []
            for prec, io16 in (("fp32", False), ("bf16", False), ("bf16", True)):
                src = os.path.join(tmp, f"{kind}_{gname}_{prec}{'_io' if io16 else ''}.gnn")
                with open(src, "w") as f:
                    f.write(bench.bf16_io(text) if io16 else text)
                out = subprocess.run([a.gnncc, "--target=cuda", "-O2", f"--precision={prec}", "--report=cost,memory",
                                      "--report-graph=" + ref, f"--gpu={a.gpu}", "--no-tune-cache", src],
                                     check=True, capture_output=True, text=True).stdout
                res.append(forward_peak(out))
            (f32, p32), (b16, pb), (bio, pio) = res
            if kind == "agg":
                c = sp.get(gname)
                agg.append(f"| {gname} | {fmt(f32)} | {fmt(b16)} | {fmt(bio)} | "
                           f"{f'{c:.4g} ms' if c else 'not measured'} | "
                           f"{f'{c * 1000 / bio:.2f}x' if c else ''} |")
                continue
            r = comp.get((kind, gname))
            cp = r["peak_bytes"] if r else None
            rows.append(f"| {kind.upper()} | {gname} | {fmt(f32)} | {fmt(b16)} | {fmt(bio)} | {b16 / f32:.3f} | "
                        f"{bio / f32:.3f} | {p32:,} | {pb:,} | {pio:,} | "
                        f"{f'{cp:,}' if cp else 'not measured'} | {f'{p32 / cp:.3f}x' if cp else ''} | "
                        f"{f'{pio / cp:.4f}x' if cp else ''} |")
    rows += ["", "| aggregation (sum over in-edges, width 128) | forward fp32 | bf16 | bf16 I/O | "
             "cuSPARSE SpMM fp32, measured | cuSPARSE / bf16 I/O |", "|---|---|---|---|---|---|"] + agg
    return "\n".join(rows)


def fmt(us):
    return f"{us / 1000:.2f} ms" if us >= 1000 else f"{us:.0f} us"


def table(title, ks, fw):
    out = [f"{title}: {fw.group(1)} launches, **{fmt(float(fw.group(2)))}**, "
           f"{fw.group(3)}% of the forward's DRAM lower bound", "",
           "| kernel | schedule | busiest/mean | time | bound | of DRAM bound |",
           "|---|---|---|---|---|---|"]
    red = []

    def flush():
        if red:
            out.append(f"| {len(red)} reduce levels | | {min(k['bm'] for k in red):.2f}-"
                       f"{max(k['bm'] for k in red):.2f} | {fmt(sum(k['t'] for k in red))} | | "
                       f"{min(k['lb'] for k in red)}-{max(k['lb'] for k in red)}% |")
            red.clear()
    for k in ks:
        if k["kind"] == "reduce":
            red.append(k)
            continue
        flush()
        out.append(f"| {k['name'].split('_', 2)[-1]} ({k['kind']}) | `{k['sched']}` | {k['bm']:.2f} | "
                   f"{fmt(k['t'])} | {k['bound']} | {k['lb']}% |")
    flush()
    return "\n".join(out)


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("gnncc")
    ap.add_argument("--graphs", default="arxiv,products")
    ap.add_argument("--gpu", default="h100")
    ap.add_argument("--tune-dir")
    ap.add_argument("--train", action="store_true", help="the training rows' modeled step (see above)")
    ap.add_argument("--measured", metavar="RESULTS.json",
                    help="with --train: bench.py's results, for measured steps; with --precision: "
                    "for torch.compile(dynamic)'s peaks and cuSPARSE's SpMM")
    ap.add_argument("--precision", action="store_true",
                    help="float32 against bfloat16: forward and device peak (see above)")
    a = ap.parse_args()
    graphs = {g["name"]: g for g in bench.GRAPHS}
    bad = [g for g in a.graphs.split(",") if g not in graphs]
    if bad:
        ap.error(f"--graphs: no graph {', '.join(bad)} (bench.py's: {', '.join(graphs)})")
    if a.precision:
        with tempfile.TemporaryDirectory() as tmp:
            print(precision_table(a, graphs, tmp))
        return
    if a.train:
        with tempfile.TemporaryDirectory() as tmp:
            print(train_table(a, graphs, tmp))
        return
    summary, tables = [], []
    with tempfile.TemporaryDirectory() as tmp:
        for gname in a.graphs.split(","):
            g = graphs[gname]
            for kind in bench.MODELS:
                w = bench.WIDTHS["large"][kind]
                name = f"{kind}_{gname}"
                src = os.path.join(tmp, name + ".gnn")
                with open(src, "w") as f:
                    f.write(bench.instantiate(kind, g["F"], g["classes"], name, **w))
                cmd = [a.gnncc, "--target=cuda", "--report=cost", f"--report-graph=preset:{gname}",
                       f"--gpu={a.gpu}", "--no-tune-cache", src]
                if a.tune_dir:
                    cmd.insert(1, "--tune-graph=" + os.path.join(a.tune_dir, gname, "edge_index.npy"))
                text = subprocess.run(cmd, check=True, capture_output=True, text=True).stdout
                ks, fw = parse(text)
                worst = max(k["bm"] for k in ks)
                summary.append(f"| {kind.upper()} | {gname} | {fmt(float(fw.group(2)))} | {fw.group(3)}% | "
                               f"{worst:.2f} |")
                tables.append(table(f"{kind.upper()}, {gname}", ks, fw))
    print("| model | graph | forward | of its DRAM lower bound | largest busiest/mean |")
    print("|---|---|---|---|---|")
    print("\n".join(summary))
    print()
    print("\n\n".join(tables))


if __name__ == "__main__":
    main()
