#!/usr/bin/env python3
"""The calibration record: every launch's measured time beside the cost model's.

usage: calibrate.py [--engine cuda|cuda-emu] [--graphs cora,citeseer,arxiv,products]
                    [--models gcn,sage,gat,gin] [--forwards 5] [--gpu-model h100]
                    [--build DIR] [--results-dir DIR] [--name NAME]
       calibrate.py --import-bench RAW.json [--ncu NCU.json] --commit C --build DIR ...

For each graph and each of the benchmark's models (bench/models/, the
widths of bench/bench.py), compiled at -O2 for the cuda target:
  - measured: the runtime's profile (docs/cli.md "Profiling") of
    --forwards forwards, every launch timed alone by CUDA events
    (engine cuda: bench/gnnbench.cu --profile, which needs a GPU), and the
    forward's time unprofiled (gnnbench's timing: the median of events
    around whole forwards, CUDA Graph replay included);
  - modeled: `gnncc --report=cost --report-graph=EDGE_INDEX --gpu=...`
    for the same model file and graph (docs/cost.md).
The forward's launches are paired in order (the profile's list equals
the report's: tests/cudaemu/profile.test); a launch's measured time is
the median over the profiled forwards.  Writes NAME-kernels.json (format
below) and NAME-kernels.md into --results-dir (default bench/results;
NAME: the GPU's short name, h100).

--engine cuda-emu goes through the same steps on the emulated device
(gnnrun --engine=cuda-emu --profile, random weights), on the graph
"tiny" (600 nodes, one long row, small widths) unless --graphs says
otherwise: a check of the script without a GPU.  Its times are the CPU's
and mean nothing; its launch lists and work counts are real.

--import-bench makes the record from an earlier run's measurements
instead: the forwards of bench.py's raw results (its gnncc-O2 records)
and the per-kernel times of an ncu table (NCU.json: {"kernels": [{model,
kernel suffix, grid, block, us}]}), beside the cost model of the gnncc in
--build (built at --commit, the commit that was measured); launches
without an ncu figure have measured_us null.

The JSON: {"format": "gnncc-kernels/1", "meta": {...}, "entries": [...]},
each entry {"scope": "launch"|"forward", "model", "graph", ...}:
  launch:  kernel, kind (the report's: dense, row, chunk, reduce,
           elementwise), schedule, grid, block, measured_us, modeled_us,
           ratio (measured / modeled), warps, work, busiest (the report's
           work model), index (position in the forward), measured_source
  forward: launches, measured_us (the unprofiled forward; null where not
           timed), profiled_sum_us (the profiled launches' sum),
           modeled_us (the report's forward line: kernels, gaps),
           ratio, measured_source
An entry that could not be measured has "error" instead of the times.
"""
import argparse
import json
import os
import re
import shlex
import statistics
import struct
import subprocess
import sys
import time
from concurrent.futures import ThreadPoolExecutor

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
sys.path.insert(0, HERE)
import bench  # noqa: E402  (graphs, widths, model files, the harness's build)

FORMAT = "gnncc-kernels/1"
TINY = {"name": "tiny", "classes": 5, "F": 24, "N": 600, "E": 5000,
        "widths": {"gcn": {"hidden": 8}, "sage": {"hidden": 16}, "gat": {"hidden": 4, "heads": 2},
                   "gin": {"hidden": 8}}}


def log(msg):
    print(f"calibrate: {msg}", file=sys.stderr, flush=True)


DEADLINE = [float("inf")]   # --budget-s from CALIBRATE_T0 (calibrate.sh's start)


def run(cmd, timeout=None):
    """cmd's exit status and output; one that overruns timeout or the
    budget is killed and reads as a failure (exit status 124), so that its
    cells say so"""
    log("$ " + shlex.join(cmd))
    left = DEADLINE[0] - time.time()
    if timeout is None or left < timeout:
        timeout = max(left, 1) if left != float("inf") else timeout
    try:
        return subprocess.run(cmd, capture_output=True, text=True, timeout=timeout)
    except subprocess.TimeoutExpired:
        return subprocess.CompletedProcess(cmd, 124, "", f"timed out after {timeout} s")


# --- graphs ---------------------------------------------------------------

def tiny_graph(d):
    """600 nodes, 5,000 edges, node 3 holding 600 in-edges (a split row)"""
    import numpy as np
    rng = np.random.default_rng(7)
    n, e = TINY["N"], TINY["E"]
    dst = np.concatenate([rng.integers(0, n, size=e - 600), np.full(600, 3)])
    src = rng.integers(0, n, size=e)
    os.makedirs(d, exist_ok=True)
    np.save(os.path.join(d, "edge_index.npy"), np.stack([src, dst]).astype(np.int64))
    np.save(os.path.join(d, "x.npy"), rng.uniform(-1, 1, size=(n, TINY["F"])).astype(np.float32))


def graph(name, build):
    """(directory, in-features, classes, widths by model) of a graph"""
    if name == "tiny":
        d = os.path.join(build, "calibrate", "graphs", "tiny")
        if not os.path.exists(os.path.join(d, "x.npy")):
            tiny_graph(d)
        return d, TINY["F"], TINY["classes"], TINY["widths"]
    g = next((g for g in bench.GRAPHS if g["name"] == name), None)
    if not g:
        raise SystemExit(f"calibrate: no graph {name!r} (tiny, or one of bench.py's)")
    if "dir" in g:
        d = os.path.join(ROOT, g["dir"])
    else:
        # bench.py's graphs (seed 1, as --report-graph=preset:NAME's), shared with it
        d = os.path.join(build, "bench", "graphs", name)
        stamp, want = os.path.join(d, "stamp.json"), {"preset": g["preset"], "seed": 1}
        try:
            have = json.load(open(stamp))
        except (OSError, ValueError):
            have = None
        if have != want:
            p = run([os.path.join(build, "gnngen"), f"--preset={g['preset']}", "--seed=1", f"--out={d}"])
            if p.returncode:
                raise SystemExit(f"calibrate: gnngen --preset={g['preset']}: {p.stderr.strip()}")
            with open(stamp, "w") as f:
                json.dump(want, f)
    return d, bench.npy_shape(os.path.join(d, "x.npy"))[1], g["classes"], bench.WIDTHS[g["widths"]]


# --- the cost model --------------------------------------------------------

LINE = re.compile(r"^  (\S+)\s+(row|chunk|reduce|dense|elementwise)\s+(\S+)")
GRID = re.compile(r"grid=(\d+)x(\d+) warps=(\d+) work=(\d+) busiest=(\d+)")
TIME = re.compile(r"time=([0-9.]+) us")
FWD = re.compile(r"^forward: (\d+) launches, ([0-9.]+) us")


def modeled(text):
    """the report's launches [{kernel, kind, schedule, grid, block, ...}] and forward us"""
    out, cur, fwd = [], None, None
    for line in text.splitlines():
        m = LINE.match(line)
        if m:
            cur = {"kernel": m.group(1), "kind": m.group(2), "schedule": m.group(3).rstrip(",")}
            out.append(cur)
            continue
        g = GRID.search(line)
        if g and cur is not None:
            cur.update(zip(("grid", "block", "warps", "work", "busiest"), map(int, g.groups())))
        t = TIME.search(line)
        if t and cur is not None and "bytes:" in line:
            cur["modeled_us"] = float(t.group(1))
        f = FWD.match(line)
        if f:
            fwd = (int(f.group(1)), float(f.group(2)))
    return out, fwd


# --- measuring ---------------------------------------------------------------

def param_table(gnncc, src):
    """(name, dtype, dims) of the model's parameters, from the generated C's table"""
    p = run([gnncc, "--target=cpu", "--emit=c", src, "-o", "-"])
    if p.returncode:
        raise RuntimeError(p.stderr.strip())
    m = re.search(r"_params\[\] = \{\n(.*?)\n\};", p.stdout, re.S)
    rows = []
    for line in (m.group(1).splitlines() if m else []):
        f = re.match(r'\s*\{"([^"]+)", GNN_(\w+), (\d+), \{([^}]*)\}', line)
        if f:
            rank = int(f.group(3))
            rows.append((f.group(1), f.group(2), [int(x) for x in f.group(4).split(",")][:rank] if rank else []))
    return rows


def random_weights(params, path, seed=0):
    """a safetensors file of U(-1, 1)/sqrt(fan-in) float32 weights (integer
    buffers, such as BatchNorm's count, zero)"""
    import numpy as np
    rng = np.random.default_rng(seed)
    head, blobs, off = {}, [], 0
    for name, dt, dims in params:
        if dt == "I64":
            a = np.zeros(dims, dtype="<i8")
        else:
            a = (rng.uniform(-1, 1, size=dims) / max(dims[-1] if dims else 1, 1) ** 0.5).astype("<f4")
        if name.endswith("running_var"):
            a = np.abs(a) + 0.5
        b = a.tobytes()
        head[name] = {"dtype": "I64" if dt == "I64" else "F32", "shape": dims, "data_offsets": [off, off + len(b)]}
        blobs.append(b)
        off += len(b)
    h = json.dumps(head).encode()
    h += b" " * (-len(h) % 8)
    with open(path, "wb") as f:
        f.write(struct.pack("<Q", len(h)) + h + b"".join(blobs))


def read_profile(path):
    try:
        return [json.loads(line) for line in open(path) if line.strip()]
    except (OSError, ValueError) as e:
        return {"error": f"the profile {path}: {e}"}


def measure_emu(a, jobs, gdir):
    """{model name: (profile records, None)} on the emulated device: one
    forward each (gnnrun's)"""
    out = {}
    for kind, name, src in jobs:
        prof = os.path.join(a.work, f"{name}.jsonl")
        w = os.path.join(a.work, f"{name}.safetensors")
        try:
            random_weights(param_table(a.gnncc, src), w)
        except RuntimeError as e:
            out[name] = ({"error": f"gnncc: {e}"}, None)
            continue
        cmd = [a.gnnrun, src, "-O2", f"--graph={os.path.join(gdir, 'edge_index.npy')}",
               f"--input=x={os.path.join(gdir, 'x.npy')}", f"--weights={w}", "--engine=cuda-emu",
               "--no-tune-cache", f"--profile={prof}", f"--output={os.path.join(a.work, name + '.npy')}"]
        p = run(cmd)
        out[name] = (read_profile(prof) if p.returncode == 0 else
                     {"error": "gnnrun: " + (p.stderr.strip().splitlines() or ["?"])[-1]}, None)
    return out


def measure_gpu(a, jobs, gdir, gname):
    """{model name: (profile records, unprofiled forward ms)} through gnnbench"""
    objs, out = [], {}

    def compile_one(job):
        kind, name, src = job
        obj = os.path.join(a.work, name.lower() + ".o")
        return name, obj, run([a.gnncc, "--target=cuda", "-O2", "--arch=native", src, "-o", obj])

    with ThreadPoolExecutor(len(jobs)) as ex:
        for name, obj, p in ex.map(compile_one, jobs):
            if p.returncode:
                out[name] = ({"error": "gnncc: " + (p.stderr.strip().splitlines() or ["?"])[-1]}, None)
            else:
                objs.append((name, obj))
    if not objs:
        return out
    exe = os.path.join(a.work, "gnnbench")
    rc, msg = bench.build_harness(a.gnncc, exe, objs)
    if rc:
        for name, _ in objs:
            out[name] = ({"error": "building gnnbench: " + msg.strip()[-300:]}, None)
        return out
    base = [exe, f"--graph={os.path.join(gdir, 'edge_index.npy')}", f"--x={os.path.join(gdir, 'x.npy')}",
            f"--label={gname}"]
    timed = {}
    p = run(base + ["--runs=20", "--max-runs=50", "--target-seconds=0.3"], timeout=120)
    for line in p.stdout.splitlines():
        try:
            r = json.loads(line)
        except ValueError:
            continue
        if r.get("event") == "result" and r.get("status") == "ok":
            timed[r["model"]] = r.get("median_ms")
    prof = os.path.join(a.work, "profile.jsonl")
    p = run(base + [f"--profile={prof}", f"--runs={a.forwards}"], timeout=120)
    recs = read_profile(prof) if p.returncode != 124 else {"error": "gnnbench --profile: " + p.stderr}
    for name, _ in objs:
        if isinstance(recs, dict):
            out[name] = (recs, timed.get(name))
        else:
            out[name] = ([r for r in recs if r["model"] == name], timed.get(name))
    return out


# --- pairing -----------------------------------------------------------------

def entries_for(kind, gname, name, recs, fwd_ms, rep, fwd_model, source):
    """the record's entries of one model on one graph"""
    head = {"model": kind, "graph": gname, "program": name}
    if isinstance(recs, dict):
        return [dict(head, scope="forward", **recs)]
    fwd = [r for r in recs if r["model"] == name and r["phase"] == "forward"]
    n = len(rep)
    if not n or len(fwd) % n or [r["kernel"] for r in fwd[:n]] != [m["kernel"] for m in rep]:
        return [dict(head, scope="forward", error=f"the profile's {len(fwd)} forward launches do not "
                     f"repeat the report's {n}: " + " ".join(r["kernel"] for r in fwd[:n + 2]))]
    k = len(fwd) // n
    out, total = [], 0.0
    for i, m in enumerate(rep):
        us = statistics.median(fwd[j * n + i]["us"] for j in range(k))
        total += us
        rec = fwd[i]
        e = dict(head, scope="launch", index=i, kernel=m["kernel"], kind=m["kind"], schedule=rec["schedule"],
                 grid=rec["grid"], block=rec["block"], measured_us=round(us, 3), modeled_us=m.get("modeled_us"),
                 ratio=round(us / m["modeled_us"], 3) if m.get("modeled_us") else None,
                 warps=m.get("warps"), work=m.get("work"), busiest=m.get("busiest"),
                 measured_source=source, forwards=k)
        if "warps" in rec:
            e["emu_work"] = [rec["warps"], rec["work"], rec["busiest"]]
        out.append(e)
    meas = fwd_ms * 1e3 if fwd_ms is not None else None
    out.append(dict(head, scope="forward", launches=n, measured_us=round(meas, 3) if meas is not None else None,
                    profiled_sum_us=round(total, 3), modeled_us=fwd_model[1] if fwd_model else None,
                    ratio=round(meas / fwd_model[1], 3) if meas is not None and fwd_model else None,
                    measured_source="gnnbench: median of CUDA events around whole forwards" if meas is not None
                    else None))
    return out


# --- the readable table --------------------------------------------------------

def fmt(v):
    return "—" if v is None else f"{v:.3g}" if isinstance(v, float) else str(v)


def markdown(rec):
    m = rec["meta"]
    lines = [f"# Kernel calibration: {m['gpu']}", "",
             f"- source: {m['source']}", f"- gnncc commit: {m.get('commit', '?')}",
             f"- cost model: `gnncc --report=cost --gpu={m['cost_model_gpu']}`",
             f"- measured: {m['measured']}", ""]
    if m.get("note"):
        lines += [m["note"], ""]
    graphs = list(dict.fromkeys(e["graph"] for e in rec["entries"]))
    for g in graphs:
        lines += [f"## {g}", "", "| model | launch | kind | schedule | grid × block | measured us | "
                  "modeled us | measured / modeled |", "|---|---|---|---|---|---|---|---|"]
        for e in rec["entries"]:
            if e["graph"] != g:
                continue
            if "error" in e:
                lines.append(f"| {e['model']} | error: {e['error'].replace('|', '/')} | | | | | | |")
            elif e["scope"] == "launch":
                gb = f"{e['grid']} × {e['block']}" if e.get("grid") is not None else "—"
                lines.append(f"| {e['model']} | {e['kernel']} | {e['kind']} | {e.get('schedule') or '—'} | {gb} | "
                             f"{fmt(e['measured_us'])} | {fmt(e['modeled_us'])} | {fmt(e['ratio'])} |")
            else:
                lines.append(f"| {e['model']} | **forward** ({e['launches']} launches; profiled sum "
                             f"{fmt(e.get('profiled_sum_us'))} us) | | | | {fmt(e['measured_us'])} | "
                             f"{fmt(e['modeled_us'])} | {fmt(e['ratio'])} |")
        lines.append("")
    return "\n".join(lines) + "\n"


def gpu_short(name):
    m = re.search(r"\b([A-Z]{1,2}\d{2,4})\b", name or "")
    return m.group(1).lower() if m else re.sub(r"[^a-z0-9]+", "-", (name or "gpu").lower()).strip("-")


def report_graph(gname, build):
    """what --report-graph takes for a graph: its edge_index, or preset:NAME"""
    g = next((g for g in bench.GRAPHS if g["name"] == gname), None)
    if g and "dir" in g:
        return os.path.join(ROOT, g["dir"], "edge_index.npy")
    return "preset:" + gname


def imported(a):
    """entries from an earlier run's raw results and ncu table (--import-bench)"""
    raw = json.load(open(a.import_bench))
    ncu = json.load(open(a.ncu)) if a.ncu else {"kernels": []}
    widths = raw["meta"]["widths"]
    entries = []
    for r in raw["records"]:
        if r.get("system") != "gnncc-O2" or r.get("model") not in a.models.split(","):
            continue
        kind, gname = r["model"], r["graph"]
        g = next(g for g in bench.GRAPHS if g["name"] == gname)
        fin = g.get("F") or bench.npy_shape(os.path.join(ROOT, g["dir"], "x.npy"))[1]
        pname = bench.model_name(kind, "O2")
        work = os.path.join(a.build, "calibrate", gname)
        os.makedirs(work, exist_ok=True)
        src = os.path.join(work, pname.lower() + ".gnn")
        with open(src, "w") as f:
            f.write(bench.instantiate(kind, fin, g["classes"], pname, **widths[g["widths"]][kind]))
        p = run([a.gnncc, "--target=cuda", "-O2", "--report=cost", f"--gpu={a.gpu_model}",
                 "--report-graph=" + report_graph(gname, a.build), src])
        head = {"model": kind, "graph": gname, "program": pname}
        if p.returncode:
            entries.append(dict(head, scope="forward", error="gnncc --report=cost: " +
                                (p.stderr.strip().splitlines() or ["?"])[-1]))
            continue
        rep, fwd = modeled(p.stdout)
        used = set()
        for i, m in enumerate(rep):
            k = next((j for j, n in enumerate(ncu["kernels"]) if j not in used and n["model"] == kind and
                      gname == ncu.get("graph") and m["kernel"].endswith("_" + n["kernel"]) and
                      n["grid"] in (None, m.get("grid"))), None)
            us = ncu["kernels"][k]["us"] if k is not None else None
            if k is not None:
                used.add(k)
            entries.append(dict(head, scope="launch", index=i, kernel=m["kernel"], kind=m["kind"],
                                schedule=m["schedule"], grid=m.get("grid"), block=m.get("block"), measured_us=us,
                                modeled_us=m.get("modeled_us"),
                                ratio=round(us / m["modeled_us"], 3) if us and m.get("modeled_us") else None,
                                warps=m.get("warps"), work=m.get("work"), busiest=m.get("busiest"),
                                measured_source="ncu gpu__time_duration" if us is not None else None,
                                forwards=None))
        meas = r["median_ms"] * 1e3 if r.get("status") == "ok" else None
        e = dict(head, scope="forward", launches=len(rep), measured_us=round(meas, 3) if meas else None,
                 profiled_sum_us=None, modeled_us=fwd[1] if fwd else None,
                 ratio=round(meas / fwd[1], 3) if meas and fwd else None,
                 measured_source="gnnbench: median of CUDA events around whole forwards" if meas else None)
        if r.get("status") != "ok":
            e["measured_status"] = r.get("status") + ": " + (r.get("reason") or r.get("message") or "")
        entries.append(e)
    return raw, entries


def write(a, rec):
    os.makedirs(a.results_dir, exist_ok=True)
    base = os.path.join(a.results_dir, f"{rec['meta']['name']}-kernels")
    with open(base + ".json", "w") as f:
        json.dump(rec, f, indent=1)
        f.write("\n")
    with open(base + ".md", "w") as f:
        f.write(markdown(rec))
    bad = sum(1 for e in rec["entries"] if "error" in e)
    log(f"{len(rec['entries'])} entries ({bad} errors) in {base}.json and .md")
    return 1 if bad else 0


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--engine", choices=["cuda", "cuda-emu"], default="cuda")
    ap.add_argument("--graphs", default=None, help="default: cora,citeseer,arxiv,products (cuda-emu: tiny)")
    ap.add_argument("--models", default="gcn,sage,gat,gin")
    ap.add_argument("--forwards", type=int, default=5, help="profiled forwards (medians per launch)")
    ap.add_argument("--gpu-model", default="h100", help="the device --report=cost models (gnncc --gpu)")
    ap.add_argument("--build", default=os.path.join(ROOT, "build"))
    ap.add_argument("--results-dir", default=os.path.join(HERE, "results"))
    ap.add_argument("--name", help="the record's name (default: the GPU's, e.g. h100; emu)")
    ap.add_argument("--budget-s", type=float, default=280,
                    help="stop measuring this long after $CALIBRATE_T0 (else now); what is left is an error entry")
    ap.add_argument("--import-bench", help="an earlier run's bench.py raw results (no measuring)")
    ap.add_argument("--ncu", help="with --import-bench: that run's per-kernel ncu times")
    ap.add_argument("--commit", help="with --import-bench: the commit that was measured (and --build built)")
    a = ap.parse_args(argv)
    t0 = time.time()
    DEADLINE[0] = float(os.environ.get("CALIBRATE_T0", t0)) + a.budget_s
    a.gnncc, a.gnnrun = os.path.join(a.build, "gnncc"), os.path.join(a.build, "gnnrun")
    if a.import_bench:
        raw, entries = imported(a)
        m = raw["meta"]
        return write(a, {"format": FORMAT, "meta": {
            "gpu": m["gpu"], "name": a.name or gpu_short(m["gpu"]), "engine": "cuda",
            "source": f"imported from the run of {m['date']} ({os.path.basename(a.import_bench)}"
                      + (f", {os.path.basename(a.ncu)}" if a.ncu else "") + ")",
            "commit": a.commit, "date": m["date"][:10], "cost_model_gpu": a.gpu_model,
            "graphs": list(dict.fromkeys(e["graph"] for e in entries)), "models": a.models.split(","),
            "elapsed_s": m.get("elapsed_s"),
            "measured": "forwards: gnnbench's median of CUDA events around whole forwards (" +
                        os.path.basename(a.import_bench) + "); launches: ncu gpu__time_duration where the "
                        "ncu table has the kernel, else null",
            "note": f"Measured at gnncc {a.commit} on {m['gpu']}; modeled by that commit's "
                    f"--report=cost (--report-graph: Cora's edge_index, preset:NAME for the synthetic graphs: "
                    f"gnngen's seed 1, the run's was {m.get('seed')}). Not a calibrate.sh run: per-launch "
                    "figures exist only for the kernels ncu was run on."}, "entries": entries})
    emu = a.engine == "cuda-emu"
    info = None if emu else bench.gpu_info()
    if not emu and not info:
        raise SystemExit("calibrate: no GPU (nvidia-smi -L found none); --engine=cuda-emu checks the script")
    gpu = "emulated device (times are the CPU's)" if emu else info["gpu"]
    name = a.name or ("emu" if emu else gpu_short(info["gpu"]))
    graphs = (a.graphs or ("tiny" if emu else "cora,citeseer,arxiv,products")).split(",")
    models = a.models.split(",")
    entries = []
    for gname in graphs:
        if time.time() > DEADLINE[0] - 20:
            entries += [{"scope": "forward", "model": k, "graph": gname, "program": bench.model_name(k, "O2"),
                         "error": "skipped: time budget"} for k in models]
            continue
        gdir, fin, classes, widths = graph(gname, a.build)
        a.work = os.path.join(a.build, "calibrate", gname)
        os.makedirs(a.work, exist_ok=True)
        jobs = []
        for kind in models:
            pname = bench.model_name(kind, "O2")
            src = os.path.join(a.work, pname.lower() + ".gnn")
            with open(src, "w") as f:
                f.write(bench.instantiate(kind, fin, classes, pname, **widths[kind]))
            jobs.append((kind, pname, src))
        meas = measure_emu(a, jobs, gdir) if emu else measure_gpu(a, jobs, gdir, gname)
        for kind, pname, src in jobs:
            p = run([a.gnncc, "--target=cuda", "-O2", "--report=cost", f"--gpu={a.gpu_model}",
                     "--report-graph=" + os.path.join(gdir, "edge_index.npy"), src])
            if p.returncode:
                entries.append({"scope": "forward", "model": kind, "graph": gname, "program": pname,
                                "error": "gnncc --report=cost: " + (p.stderr.strip().splitlines() or ["?"])[-1]})
                continue
            rep, fwd = modeled(p.stdout)
            recs, fwd_ms = meas.get(pname, ({"error": "not measured"}, None))
            src_name = ("the emulated device's profile (CPU time: meaningless)" if emu else
                        "gnnbench --profile: CUDA events around each launch, median of the profiled forwards")
            entries += entries_for(kind, gname, pname, recs, fwd_ms, rep, fwd, src_name)
    commit = subprocess.run(["git", "-C", ROOT, "rev-parse", "--short", "HEAD"], capture_output=True,
                            text=True).stdout.strip() or None
    rec = {"format": FORMAT,
           "meta": {"gpu": gpu, "name": name, "engine": a.engine, "source": "bench/calibrate.sh",
                    "commit": commit, "date": time.strftime("%Y-%m-%d", time.gmtime()),
                    "cost_model_gpu": a.gpu_model, "graphs": graphs, "models": models,
                    "measured": ("launches: the runtime's profile (CUDA events around each launch, the host "
                                 "waiting for each); forwards: gnnbench's median of events around whole "
                                 "forwards"),
                    "elapsed_s": round(time.time() - t0, 1)},
           "entries": entries}
    return write(a, rec)


if __name__ == "__main__":
    sys.exit(main())
