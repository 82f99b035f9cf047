#!/usr/bin/env python3
"""The cost model against every committed calibration record.

usage: costfit.py --gnncc GNNCC --work DIR [--graphs cora,arxiv,...] [--strict] RECORD.json ...

A record (bench/results/NAME-kernels.json, format gnncc-kernels/1,
bench/calibrate.py) holds launches and forwards measured on a GPU at
some commit with that commit's kernels.  For each forward of the record
this recompiles the same model (bench/models/KIND.gnn.in, instantiated
as bench/bench.py does for the graph) for the cuda target at -O2 with
the record's schedules forced (--schedule=KERNEL:...) and the switches
that make today's code generator emit the kernels measured then: an
unsplit tiled GEMM (ksplit=1) where the record's schedule names none,
and walks without edge slices (slices=1) where it names none (a kernel
that walks edges: a split one), row kernels that read their edge
arrays through the plan's permutation (perm=1), not plan-order copies,
and walks that take one edge a step (single=1), not two;
and the -O2 pipeline without gemmepilogue (a GEMM's bias, sums and
activation in its store), which the records predate.
Then:

- the modeled launch list (kernel, kind, blocks, threads a block) must
  equal the record's, else the record is not being modeled and the check
  FAILs;
- every launch measured at 20 us or more must be modeled within 1.5x,
  by `gnncc --report=cost` under the measurement's conditions: a
  profiler's replay of each launch alone (ncu: caches flushed, clocks
  at base) by --report-timing=profiler, a whole forward's launches by
  the default;
- every forward's total within 1.3x of the forward's measured time.

Prints a line per launch and forward compared: "ok", or "OUT" where it
misses its bound; FAIL where a launch list differs.  Exits non-zero on a
FAIL, and with --strict on an OUT too.
"""
import argparse
import json
import os
import re
import subprocess
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(os.path.dirname(HERE)))
sys.path.insert(0, os.path.join(ROOT, "bench"))
import bench  # noqa: E402  (graphs, widths, model templates)

LINE = re.compile(r"^  (\S+)\s+(dense|row|chunk|reduce|elementwise)\s+(.*)$")
GRID = re.compile(r"grid=(\d+)x(\d+)")
TIME = re.compile(r"time=([0-9.]+) us")
FWD = re.compile(r"^forward: (\d+) launches, ([0-9.]+) us")
LAUNCH_BOUND, FORWARD_BOUND, LEAST_US = 1.5, 1.3, 20.0


def pipeline(gnncc, src):
    """The cuda -O2 pipeline as gnncc runs it, less gemmepilogue."""
    p = subprocess.run([gnncc, "--target=cuda", "-O2", "--dump-ir=all", src], capture_output=True, text=True)
    if p.returncode:
        sys.exit(f"costfit: {gnncc} --dump-ir=all {src}: {p.stderr.strip()}")
    names = re.findall(r"^# after pass '([^']+)'$", p.stdout, re.M)
    if "gemmepilogue" not in names:
        sys.exit("costfit: the cuda -O2 pipeline has no gemmepilogue to leave out")
    return ",".join(n for n in names if n != "gemmepilogue")


def report(gnncc, src, graph, scheds, timing):
    cmd = [gnncc, "--target=cuda", "-O2", "--passes=" + pipeline(gnncc, src), "--report=cost", "--gpu=h100",
           "--report-graph=" + graph, "--report-timing=" + timing, *("--schedule=" + s for s in scheds), src]
    p = subprocess.run(cmd, capture_output=True, text=True)
    if p.returncode:
        sys.exit(f"costfit: {' '.join(cmd)}: {p.stderr.strip()}")
    launches, fwd, cur = [], None, None
    for line in p.stdout.splitlines():
        m = LINE.match(line)
        if m:
            cur = {"kernel": m.group(1), "kind": m.group(2)}
            launches.append(cur)
            continue
        g = GRID.search(line)
        if g and cur is not None and "grid" not in cur:
            cur["grid"], cur["block"] = int(g.group(1)), int(g.group(2))
        t = TIME.search(line)
        if t and cur is not None and "bytes:" in line:
            cur["us"] = float(t.group(1))
        f = FWD.match(line)
        if f:
            fwd = float(f.group(2))
    return launches, fwd


def forced(program, launches):
    """--schedule arguments giving each kernel the record's schedule and
    the kernel shapes of the record's commit"""
    out, seen = [], set()
    for e in launches:
        name = e["kernel"][len(program) + 1:]
        if e["kind"] not in ("dense", "row") or name in seen or e["schedule"] == "default":
            continue
        seen.add(name)
        s = e["schedule"]
        if e["kind"] == "dense" and "bm=" in s and "ksplit=" not in s:
            s += ",ksplit=1"
        if e["kind"] == "row" and "split=" in s and "slices=" not in s:
            s += ",slices=1"
        if e["kind"] == "row" and "perm=" not in s:
            s += ",perm=1"
        if e["kind"] == "row" and "single=" not in s:
            s += ",single=1"
        out.append(f"{name}:{s}")
    return out


def graph_of(name, work):
    g = next(g for g in bench.GRAPHS if g["name"] == name)
    if "dir" in g:
        d = os.path.join(ROOT, g["dir"])
        return g, os.path.join(d, "edge_index.npy"), bench.npy_shape(os.path.join(d, "x.npy"))[1]
    return g, "preset:" + g["preset"], g["F"]


def check(path, gnncc, work, graphs):
    rec = json.load(open(path))
    if rec.get("format") != "gnncc-kernels/1":
        return 0, 0
    widths = bench.WIDTHS
    fails = outs = n = 0
    forwards = [e for e in rec["entries"] if e["scope"] == "forward" and "error" not in e and
                (not graphs or e["graph"] in graphs)]
    for f in forwards:
        kind, gname, program = f["model"], f["graph"], f["program"]
        launches = sorted((e for e in rec["entries"] if e["scope"] == "launch" and e["model"] == kind and
                           e["graph"] == gname), key=lambda e: e["index"])
        g, graph, fin = graph_of(gname, work)
        src = os.path.join(work, f"{gname}-{kind}.gnn")
        with open(src, "w") as fh:
            fh.write(bench.instantiate(kind, fin, g["classes"], program, **widths[g["widths"]][kind]))
        scheds = forced(program, launches)
        got, fwd = report(gnncc, src, graph, scheds, "forward")
        tag = f"{os.path.basename(path)} {gname} {kind}"
        want = [(e["kernel"], e["kind"], e["grid"], e["block"]) for e in launches]
        have = [(m["kernel"], m["kind"], m.get("grid"), m.get("block")) for m in got]
        if want != have:
            print(f"FAIL {tag}: the modeled launches are not the record's:\n  record:  {want}\n  modeled: {have}")
            fails += 1
            continue
        cold = None
        for e, m in zip(launches, got):
            us = e.get("measured_us")
            if us is None or us < LEAST_US:
                continue
            src_ = e.get("measured_source") or ""
            if src_.startswith("ncu"):
                if cold is None:
                    cold = report(gnncc, src, graph, scheds, "profiler")[0]
                mod = cold[e["index"]]["us"]
            else:
                mod = m["us"]
            r = us / mod
            ok = 1 / LAUNCH_BOUND <= r <= LAUNCH_BOUND
            n += 1
            outs += not ok
            print(f"{'ok  ' if ok else 'OUT '} {tag} {e['kernel']} [{e['index']}] measured {us:g} us "
                  f"({src_ or 'events'}), modeled {mod:.2f} us, ratio {r:.2f}")
        r = f["measured_us"] / fwd
        ok = 1 / FORWARD_BOUND <= r <= FORWARD_BOUND
        n += 1
        outs += not ok
        print(f"{'ok  ' if ok else 'OUT '} {tag} forward: {len(got)} launches, measured {f['measured_us']:g} us, "
              f"modeled {fwd:.2f} us, ratio {r:.2f}")
    return n, fails, outs


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--gnncc", required=True)
    ap.add_argument("--work", required=True)
    ap.add_argument("--graphs", default="")
    ap.add_argument("--strict", action="store_true")
    ap.add_argument("records", nargs="+")
    a = ap.parse_args()
    os.makedirs(a.work, exist_ok=True)
    graphs = set(filter(None, a.graphs.split(",")))
    total = fails = outs = recs = 0
    for p in a.records:
        n, f, o = check(p, a.gnncc, a.work, graphs)
        recs += n > 0 or f > 0
        total += n
        fails += f
        outs += o
    print(f"costfit: {recs} records, {total} comparisons, {outs} out of bounds, {fails} launch lists differ")
    return 1 if fails or not total or (a.strict and outs) else 0


if __name__ == "__main__":
    sys.exit(main())
