#!/usr/bin/env python3
"""Turn the benchmark's raw results into a Markdown report and a plot.

usage: report.py RESULTS.json [--md OUT.md] [--png OUT.png]

RESULTS.json is what bench/bench.py writes: {"meta": {...}, "records":
[...]}, one record per (system, model, graph) with "status" ok, skipped
(with a "reason") or error (with a "message").  Systems: gnncc-O2,
gnncc-O0, pyg-eager, pyg-compile-static (torch.compile's default mode,
dynamic=False), pyg-compile-dynamic, pyg-max-autotune; for the
aggregation agg-gnncc and agg-cusparse (one record per cuSPARSE algorithm),
and d2d (the device-to-device copy).

Design: the report is for reading, the JSON for anything else, so the
Markdown holds one table of times per model (graphs as rows, ratios
gnncc -O2 / PyG eager and / the faster torch.compile mode: below 1 means
gnncc is faster), one of peak memory and compile times, and the
aggregation's times and effective bandwidth against the copy bandwidth.
Training rows (records with "task": "train": one full-graph epoch,
bench/training.py) get one table of epoch times, gnncc -O2 against PyG
eager and each torch.compile mode, with the speedup over the best of them
(above 1 means gnncc is faster) and its geometric mean.
A configuration that did not run shows why in its cell.  The plot needs
matplotlib; without it the report says so and is written all the same.
Without --md the Markdown goes to standard output.
"""
import argparse
import json
import sys

SYSTEMS = [("gnncc-O2", "gnncc -O2"), ("gnncc-O0", "gnncc -O0"), ("pyg-eager", "PyG eager"),
           ("pyg-compile-static", "compile (static)"), ("pyg-compile-dynamic", "compile (dynamic)"),
           ("pyg-max-autotune", "compile (max-autotune)")]
COMPILED = ["pyg-compile-static", "pyg-compile-dynamic", "pyg-max-autotune"]
MODELS = [("gcn", "GCN"), ("sage", "GraphSAGE (mean)"), ("gat", "GAT"), ("gin", "GIN")]
GRAPH_ORDER = ["cora", "citeseer", "pubmed", "arxiv", "reddit", "products"]


def esc(s):
    return str(s).replace("|", "\\|").replace("\n", " ")


def num(v, digits=3):
    """3 significant digits, no exponent for the usual ranges."""
    if v is None:
        return "—"
    if v == 0:
        return "0"
    if abs(v) >= 10 ** digits:
        return f"{v:,.0f}"
    return f"{v:.{digits}g}"


def count(v):
    return "?" if v is None else f"{v:,}"


def cell(r, value):
    """the cell of record r: value(r) when it ran, else why not"""
    if r is None:
        return "not run"
    st = r.get("status")
    if st == "ok":
        return value(r)
    if st == "skipped":
        return esc("skipped: " + str(r.get("reason", "?")))
    msg = str(r.get("message", "?"))
    return esc("error: " + (msg[:70] + "…" if len(msg) > 70 else msg))


def ms(r):
    return num(r.get("median_ms"))


def mib(r):
    b = r.get("peak_bytes")
    return "—" if b is None else num(b / 2**20)


def secs(r):
    s = r.get("compile_s")
    return "—" if s is None else num(s)


def index(records):
    """(system, model, graph) -> record; for agg-cusparse the fastest algorithm"""
    out = {}
    for r in records:
        key = (r.get("system"), r.get("model"), r.get("graph"))
        old = out.get(key)
        if old is None or (r.get("status") == "ok" and (
                old.get("status") != "ok" or r["median_ms"] < old["median_ms"])):
            out[key] = r
    return out


def graphs_of(records):
    seen = {r["graph"] for r in records if r.get("graph")}
    return [g for g in GRAPH_ORDER if g in seen] + sorted(seen - set(GRAPH_ORDER))


def sizes(records):
    n = {}
    for r in records:
        if r.get("graph") and r.get("N") is not None:
            n[r["graph"]] = (r["N"], r.get("E"))
    return n


def ratio(a, b):
    if not a or not b or a.get("status") != "ok" or b.get("status") != "ok":
        return "—"
    return num(a["median_ms"] / b["median_ms"]) + "×"


def best_compiled(idx, model, graph):
    ok = [idx.get((s, model, graph)) for s in COMPILED]
    ok = [r for r in ok if r and r.get("status") == "ok"]
    return min(ok, key=lambda r: r["median_ms"]) if ok else None


def header(meta):
    m = meta
    lines = [f"# gnncc vs PyTorch Geometric: {m.get('gpu', '?')}", ""]
    lines.append(f"- GPU: {m.get('gpu', '?')} ({m.get('gpu_memory', '?')}), "
                 f"driver {m.get('driver', '?')}")
    lines.append(f"- CUDA: toolkit {m.get('cuda_toolkit', '?')}; torch {m.get('torch', '?')} "
                 f"(CUDA {m.get('torch_cuda', '?')}); PyG {m.get('pyg', '?')}; "
                 f"Python {m.get('python', '?')}")
    lines.append(f"- Run: {m.get('date', '?')}, {'--quick, ' if m.get('quick') else ''}"
                 f"{m.get('elapsed_s', '?')} s of a {m.get('budget_s', '?')} s budget; "
                 f"{m.get('host_cpus', '?')} CPUs, gnncc compiled {m.get('compile_jobs', '?')} "
                 f"models at a time")
    w = m.get("widths", {})
    if w:
        def desc(ws):
            return ", ".join(
                f"{k.upper()} {v['heads']}×{v['hidden']}" if "heads" in v else
                f"{k.upper()} {v['hidden']}" for k, v in ws.items())
        lines.append(f"- Hidden widths: Cora, CiteSeer: {desc(w.get('citation', {}))}; "
                     f"synthetic graphs: {desc(w.get('large', {}))}")
    lines += [
        "",
        "Forward inference, float32, eval mode (dropout off), 2 layers, one full graph.",
        "Times are medians of at least 20 forwards after warm-up, each bracketed by CUDA",
        "events on the stream the model runs on and waited for (milliseconds).  Peak memory",
        "is everything allocated on the device for the inference: x, the graph as each",
        "system holds it, weights, intermediates, outputs (gnncc: bytes cudaMalloc'd, its",
        "arena included; PyG: torch.cuda.max_memory_allocated).  Compile time: gnncc's",
        "is the wall time of `gnncc --target=cuda` (nvcc included); torch.compile's is the",
        "warm-up calls' time less as many steady calls, from a fresh Inductor cache.",
        "Ratios are gnncc -O2's time over the other's: below 1, gnncc is faster.",
        "",
    ]
    return lines


# columns only where a run has them (bench.py run --systems ...): gnncc
# with cuBLAS as a candidate, with bfloat16 storage, and with bfloat16
# storage, features and outputs
OPTIONAL = [("gnncc-VN", "gnncc -O2 --vendor=cublas"), ("gnncc-BF", "gnncc bf16"),
            ("gnncc-BI", "gnncc bf16, bf16 in/out")]


def model_tables(idx, records, graphs, n):
    lines = []
    systems = SYSTEMS[:2] + [o for o in OPTIONAL if any(r.get("system") == o[0] for r in records)] + SYSTEMS[2:]
    for model, title in MODELS:
        if not any(r.get("model") == model for r in records):
            continue
        lines += [f"## {title}", "", "Time (ms):", ""]
        cols = ["graph", "N", "E"] + [t for _, t in systems] + [
            "-O2 / eager", "-O2 / best compile"]
        lines.append("| " + " | ".join(cols) + " |")
        lines.append("|" + "---|" * len(cols))
        for g in graphs:
            nn, ee = n.get(g, (None, None))
            row = [g, count(nn), count(ee)]
            row += [cell(idx.get((s, model, g)), ms) for s, _ in systems]
            o2 = idx.get(("gnncc-O2", model, g))
            row.append(ratio(o2, idx.get(("pyg-eager", model, g))))
            row.append(ratio(o2, best_compiled(idx, model, g)))
            lines.append("| " + " | ".join(row) + " |")
        lines += ["", "Peak device memory (MiB) and compile time (s):", ""]
        cols = ["graph"] + [f"MiB: {t}" for _, t in systems] + [
            "s: gnncc -O2", "s: gnncc -O0", "s: compile (static)", "s: compile (dynamic)",
            "s: compile (max-autotune)"]
        lines.append("| " + " | ".join(cols) + " |")
        lines.append("|" + "---|" * len(cols))
        for g in graphs:
            row = [g] + [cell(idx.get((s, model, g)), mib) for s, _ in systems]
            for s in ["gnncc-O2", "gnncc-O0"] + COMPILED:
                r = idx.get((s, model, g))
                # gnncc compiles whether or not the model could run
                row.append(secs(r) if r and r.get("compile_s") is not None else
                           cell(r, secs))
            lines.append("| " + " | ".join(row) + " |")
        lines.append("")
    return lines


# the aggregation's 16-bit rows (bench.py: with --systems gnncc-BF, gnncc-BI)
AGG16 = [("agg-gnncc-BF", "gnncc bf16"), ("agg-gnncc-BI", "gnncc bf16 I/O")]


def agg_table(idx, records, graphs, n):
    d2d = [r for r in records if r.get("system") == "d2d" and r.get("status") == "ok"]
    aggs = [g for g in graphs if any(r.get("model") == "agg" and r.get("graph") == g
                                     for r in records)]
    if not aggs and not d2d:
        return []
    width = next((r["width"] for r in records if r.get("model") == "agg" and "width" in r), 128)
    bw = d2d[0]["gbps"] if d2d else None
    lines = [f"## Aggregation alone: sum over in-edges, width {width}", ""]
    if bw:
        lines.append(f"Device-to-device copy: {num(bw)} GB/s ({d2d[0]['bytes'] / 2**20:.0f} "
                     f"MiB by cudaMemcpy, bytes read + written over its median time).")
    else:
        bad = [r for r in records if r.get("system") == "d2d"]
        lines.append("Device-to-device copy: not measured" + (
            f" ({cell(bad[0], ms)})." if bad else "."))
    lines += [
        "Effective bandwidth counts the bytes an ideal kernel moves: x read once, y written",
        f"once (8·N·{width}), and a CSR with int32 indices (4·(N+1) + 4·E); cuSPARSE is its",
        "fastest of ALG_DEFAULT, CSR_ALG2 and CSR_ALG3 (deterministic).",
        "",
    ]
    cols = ["graph", "N", "E", "gnncc -O2 (ms)", "cuSPARSE (ms)", "gnncc / cuSPARSE",
            "gnncc GB/s", "gnncc % of copy", "cuSPARSE GB/s", "cuSPARSE % of copy"]
    lines.append("| " + " | ".join(cols) + " |")
    lines.append("|" + "---|" * len(cols))
    for g in aggs:
        a = idx.get(("agg-gnncc", "agg", g))
        c = idx.get(("agg-cusparse", "agg", g))
        nn, ee = n.get(g, (None, None))
        row = [g, count(nn), count(ee), cell(a, ms),
               cell(c, lambda r: f"{num(r['median_ms'])} ({r.get('alg', '?')})"),
               ratio(a, c)]
        for r in (a, c):
            if r and r.get("status") == "ok" and nn is not None and ee is not None:
                gbs = (8 * nn * width + 4 * (nn + 1) + 4 * ee) / (r["median_ms"] * 1e-3) / 1e9
                row += [num(gbs), num(100 * gbs / bw) + "%" if bw else "—"]
            else:
                row += ["—", "—"]
        lines.append("| " + " | ".join(row) + " |")
    lines.append("")
    half = [(s, t) for s, t in AGG16 if any(r.get("system") == s for r in records)]
    if half:
        lines += ["bfloat16 storage, against cuSPARSE's float32 SpMM: gnncc bf16 (gnncc-BF, "
                  "`--precision=bf16`) gathers a bfloat16 copy of the features and sums in float32; "
                  "bf16 I/O (gnncc-BI) takes the features and returns the sums in bfloat16:", ""]
        cols = ["graph", "gnncc -O2 (ms)"] + [f"{t} (ms)" for _, t in half] + ["cuSPARSE (ms)"] + [
            f"cuSPARSE / {t}" for _, t in half]
        lines.append("| " + " | ".join(cols) + " |")
        lines.append("|" + "---|" * len(cols))
        for g in aggs:
            c = idx.get(("agg-cusparse", "agg", g))
            row = [g, cell(idx.get(("agg-gnncc", "agg", g)), ms)] + [
                cell(idx.get((s, "agg", g)), ms) for s, _ in half] + [cell(c, ms)] + [
                ratio(c, idx.get((s, "agg", g))) for s, _ in half]
            lines.append("| " + " | ".join(row) + " |")
        lines.append("")
    return lines


def train_table(records, graphs, n):
    """the training epochs: a row per (model, graph), the speedup of gnncc
    -O2 over the best torch system and the geometric mean of it"""
    train = [r for r in records if r.get("task") == "train"]
    if not train:
        return []
    idx = index(train)
    peers = [s for s, _ in SYSTEMS if s.startswith("pyg-")]
    cols = ["model", "graph", "N", "E"] + [t for s, t in SYSTEMS if s == "gnncc-O2" or s in peers] + [
        "speedup (vs best)", "peak MiB: gnncc / best", "loss first → last (gnncc)"]
    lines = ["## Training epoch (forward + backward + Adam, full graph)", "",
             "Time (ms) of one epoch (bench/training.py); speedup: the best of PyG eager and the "
             "torch.compile modes over gnncc -O2 (above 1: gnncc is faster).", "",
             "| " + " | ".join(cols) + " |", "|" + "---|" * len(cols)]
    logs = []
    for model, title in MODELS:
        for g in graphs:
            if not any(r.get("model") == model and r.get("graph") == g for r in train):
                continue
            nn, ee = n.get(g, (None, None))
            o2 = idx.get(("gnncc-O2", model, g))
            ok = [idx.get((s, model, g)) for s in peers]
            ok = [r for r in ok if r and r.get("status") == "ok"]
            best = min(ok, key=lambda r: r["median_ms"]) if ok else None
            row = [title, g, count(nn), count(ee), cell(o2, ms)]
            row += [cell(idx.get((s, model, g)), ms) for s in peers]
            if best and o2 and o2.get("status") == "ok":
                sp = best["median_ms"] / o2["median_ms"]
                logs.append(sp)
                row.append(f"{num(sp)}× (vs {dict(SYSTEMS)[best['system']]})")
            else:
                row.append("—")
            row.append(f"{cell(o2, mib)} / {cell(best, mib)}")
            row.append(f"{num(o2['loss_first'])} → {num(o2['loss_last'])}"
                       if o2 and o2.get("status") == "ok" and "loss_first" in o2 else "—")
            lines.append("| " + " | ".join(row) + " |")
    if logs:
        import math
        gm = math.exp(sum(math.log(v) for v in logs) / len(logs))
        lines.append(f"| **geometric mean** | ({len(logs)} rows) | | |" + " |" * (len(peers) + 1)
                     + f" **{num(gm)}×** | | |")
    return lines + [""]


def markdown(data):
    meta, records = data.get("meta", {}), data.get("records", [])
    infer = [r for r in records if r.get("task", "infer") != "train"]
    idx = index(infer)
    graphs = graphs_of(records)
    n = sizes(records)
    lines = header(meta)
    lines += model_tables(idx, infer, graphs, n)
    lines += agg_table(idx, infer, graphs, n)
    lines += train_table(records, graphs, n)
    skipped = sum(r.get("status") == "skipped" for r in records)
    errors = sum(r.get("status") == "error" for r in records)
    lines.append(f"{sum(r.get('status') == 'ok' for r in records)} measured, {skipped} skipped, "
                 f"{errors} failed; the raw records are in the .json beside this file.")
    return "\n".join(lines) + "\n"


def plot(data, path):
    try:
        import matplotlib
        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
        from matplotlib.patches import Patch
    except ImportError:
        print("report.py: plot skipped: matplotlib is not installed", file=sys.stderr)
        return False
    records = [r for r in data.get("records", []) if r.get("task", "infer") != "train"]
    idx = index(records)
    graphs = graphs_of(records)
    panels = [(m, t, SYSTEMS) for m, t in MODELS if any(r.get("model") == m for r in records)]
    if any(r.get("model") == "agg" for r in records):
        panels.append(("agg", "aggregation (width 128)",
                       [("agg-gnncc", "gnncc -O2"), ("agg-cusparse", "cuSPARSE")]))
    if not panels:
        print("report.py: plot skipped: no models in the results", file=sys.stderr)
        return False
    cols = 3 if len(panels) > 4 else 2
    rows = (len(panels) + cols - 1) // cols
    fig, axes = plt.subplots(rows, cols, figsize=(6 * cols, 3.6 * rows), squeeze=False)
    colors = plt.get_cmap("tab10").colors
    for ax, (model, title, systems) in zip(axes.flat, panels):
        width, drawn = 0.8 / len(systems), False
        for k, (s, label) in enumerate(systems):
            xs, ys = [], []
            for i, g in enumerate(graphs):
                r = idx.get((s, model, g))
                if r and r.get("status") == "ok":
                    xs.append(i + (k - (len(systems) - 1) / 2) * width)
                    ys.append(r["median_ms"])
            ax.bar(xs, ys, width, color=colors[k % len(colors)])
            drawn |= bool(ys)
        ax.set_xlim(-0.5, len(graphs) - 0.5)
        if drawn:
            ax.set_yscale("log")
        else:
            ax.text(0.5, 0.5, "nothing measured", ha="center", transform=ax.transAxes)
        ax.set_xticks(range(len(graphs)))
        ax.set_xticklabels(graphs, fontsize=8)
        ax.set_ylabel("ms (log)")
        ax.set_title(title)
        # handles of their own: a system with no bar still gets its colour
        ax.legend(handles=[Patch(color=colors[k % len(colors)], label=label)
                           for k, (_, label) in enumerate(systems)], fontsize=7)
    for ax in list(axes.flat)[len(panels):]:
        ax.axis("off")
    fig.suptitle(f"forward time, {data.get('meta', {}).get('gpu', '?')} "
                 "(no bar: skipped or failed; see the report)")
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    plt.close(fig)
    return True


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("results")
    ap.add_argument("--md")
    ap.add_argument("--png")
    a = ap.parse_args(argv)
    with open(a.results) as f:
        data = json.load(f)
    text = markdown(data)
    if a.md:
        with open(a.md, "w") as f:
            f.write(text)
        print(f"report.py: wrote {a.md}", file=sys.stderr)
    else:
        sys.stdout.write(text)
    try:
        if a.png and plot(data, a.png):
            print(f"report.py: wrote {a.png}", file=sys.stderr)
    except Exception as e:  # noqa: BLE001 -- the tables matter more than the picture
        print(f"report.py: plot failed: {type(e).__name__}: {e}", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
