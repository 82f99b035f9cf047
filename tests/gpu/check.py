#!/usr/bin/env python3
"""The GPU correctness check of the cuda target (tests/gpu/run.sh runs it).

usage: check.py --out DIR [--graphs cora,citeseer,pubmed,arxiv]
                [--sanitize-graphs cora] [--jobs N] [--seed S]

Every example model and test model (MODELS below), and the benchmark's
four templates, is compiled by gnncc for the cuda target and run on Cora,
CiteSeer and two synthetic graphs from build/gnngen (PubMed's and
ogbn-arxiv's sizes); on Cora at -O0 as well.  For each (model, graph, -O):
  - the outputs are poisoned (every byte 0xff: NaN) before each forward,
    forward runs twice, and the two results must be bitwise identical and
    every element finite (bench/gnnbench.cu --check);
  - the result must match, within 1e-5 relative to the largest magnitude
    (tests/ref/compare.py), the cpu target on the same weights (gnnrun
    --engine=cpu), PyTorch Geometric itself in float64 on the same weights
    (pyg_check.py), and on the citation graphs the float64 interpreter.
    Where PyG's own float32 result is further than 1e-5 from its float64
    one, the tolerance is 3 times that distance instead (the "tolerance"
    column): float32 sums over the synthetic graphs' hubs (183k in-edges
    on the arxiv-sized one) cannot do better in any order, gnncc's cpu
    target included;
  - on --sanitize-graphs, compute-sanitizer's memcheck (leaks included)
    and initcheck must report nothing, and the output under memcheck must
    equal the first run's bit for bit (a second process).
The four example models (and GCN's trained weights on Cora) also run
through gnnrun --engine=cuda at -O2 on every graph, the model built by
nvcc into a shared object that gnnrun loads, and must match the cpu
engine (gnnrun --engine=cpu) within the same tolerance.
Also: a model with a graph break is rejected for cuda, and the four
example programs build against the static CUDA runtime, run, and GCN
with its trained weights scores 82.0% on Cora.

Models whose input is Cora-shaped (f32[N, 1433] -> f32[N, 7]) are
rewritten for each graph's feature width and class count (and the result
checked in the generated header); the others keep their widths and get
seeded random features.  Weights are random (gnnbench draws them from the
descriptor's shapes and saves them, so every engine loads the same file),
except GCN's trained ones on Cora.

Design: compiles and the cpu-side engines run several at a time; the GPU
runs one at a time (sanitizers a few at a time).  Everything a case makes
is kept under DIR/cases/GRAPH/MODEL[-O0]/; DIR/summary.txt and
DIR/summary.json hold the table printed at the end; the exit status is 1
if any check failed.  A check that cannot run (a tool missing, an earlier
step failed) counts as failed, never as passed.
"""
import argparse
import json
import os
import re
import shutil
import subprocess
import sys
import time
from concurrent.futures import ThreadPoolExecutor

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
sys.path.insert(0, os.path.join(ROOT, "bench"))
sys.path.insert(0, os.path.join(ROOT, "tests", "ref"))
import bench  # noqa: E402  bench/bench.py: templates, harness build
import pyg_ref  # noqa: E402
from compare import compare  # noqa: E402

RTOL = 1e-5
GRAPHS = {
    "cora": {"dir": "data/cora", "classes": 7, "widths": "citation"},
    "citeseer": {"dir": "data/citeseer", "classes": 6, "widths": "citation"},
    "pubmed": {"preset": "pubmed", "classes": 3, "widths": "large"},
    "arxiv": {"preset": "arxiv", "classes": 40, "widths": "large"},
}
INTERP_GRAPHS = {"cora", "citeseer"}   # the float64 interpreter is slow beyond
O0_GRAPHS = {"cora"}
# id: (source, PyG kind); "bench:KIND" is a bench/models template
MODELS = {
    "gcn": ("examples/gcn/gcn.gnn", "gcn"),
    "sage": ("examples/sage/sage.gnn", "sage"),
    "gat": ("examples/gat/gat.gnn", "gat"),
    "gin": ("examples/gin/gin.gnn", "gin"),
    "sage_max": ("tests/interp/Inputs/sage_max.gnn", "sage_max"),
    "sage_sum": ("tests/interp/Inputs/sage_sum.gnn", "sage_sum"),
    "gat_mean": ("tests/interp/Inputs/gat_mean.gnn", "gat"),
    "gcn_block": ("tests/examples/Inputs/gcn.gnn", "gcn_block"),
    "gin_eps": ("tests/passes/Inputs/gin_eps.gnn", "gin_eps"),
    "sage_variants": ("tests/passes/Inputs/sage_variants.gnn", "sage_variants"),
    "widen": ("tests/passes/Inputs/widen.gnn", "widen"),
    "pool": ("tests/interp/Inputs/pool.gnn", "pool"),
    "bench_gcn": ("bench:gcn", "gcn"),
    "bench_sage": ("bench:sage", "sage"),
    "bench_gat": ("bench:gat", "gat"),
    "bench_gin": ("bench:gin", "gin"),
}
TRAINED = ("gcn_trained", "examples/gcn/gcn.gnn", "gcn", "examples/gcn/gcn_cora.safetensors")
BATCH_GRAPHS = 4   # pool's batch: the nodes split into this many graphs, in order
# gnnrun --engine=cuda (an nvcc-built shared object dlopen'd by gnnrun,
# the runtime resolved from gnnrun) on the four examples, against the cpu
# engine: a path that no program linked with the model takes
GNNRUN_CUDA = {"gcn", "sage", "gat", "gin", TRAINED[0]}
CHECKS = ["build", "twice", "finite", "cpu", "pyg", "interp", "gnnrun cuda", "memcheck",
          "initcheck", "2nd process"]


def run(cmd, log, **kw):
    """cmd with its output appended to log; the CompletedProcess"""
    with open(log, "a") as f:
        f.write("$ " + " ".join(cmd) + "\n")
        f.flush()
        return subprocess.run(cmd, stdout=f, stderr=subprocess.STDOUT, cwd=ROOT, **kw)


def tail(log, n=3):
    try:
        with open(log) as f:
            lines = [ln.rstrip() for ln in f if ln.strip() and not ln.startswith("$ ")]
        return " / ".join(lines[-n:])
    except OSError:
        return "?"


def retarget(text, fin, classes):
    """A Cora-shaped model (f32[N, 1433] -> f32[N, 7]) for another width and
    class count: every 1433 and every stand-alone 7 outside comments."""
    out = []
    for line in text.splitlines(keepends=True):
        code, hash_, comment = line.partition("#")
        code = re.sub(r"\b1433\b", str(fin), code)
        code = re.sub(r"(?<![\w.])7(?![\w.])", str(classes), code)
        out.append(code + hash_ + comment)
    return "".join(out)


def header_info(path):
    """(model name, inputs line, outputs line, output count) from a model header"""
    with open(path) as f:
        text = f.read()
    name = re.search(r"^#define (\w+)_TARGET GNN_TARGET_CUDA$", text, re.M).group(1)
    ins = re.search(r"^ \* +inputs: (.*)$", text, re.M).group(1)
    outs = re.search(r"^ \* +outputs: (.*)$", text, re.M).group(1)
    return name, ins, outs, len(re.findall(r"\bout\d+:", outs))


def same_bytes(a, b):
    with open(a, "rb") as fa, open(b, "rb") as fb:
        return fa.read() == fb.read()


class Check:
    def __init__(self, a):
        self.a = a
        self.out = os.path.abspath(a.out)
        self.gnncc = os.path.join(ROOT, "build", "gnncc")
        self.gnnrun = os.path.join(ROOT, "build", "gnnrun")
        self.gnngen = os.path.join(ROOT, "build", "gnngen")
        self.cases = []
        self.extra = []       # rows of whole-program checks: (what, result, detail)
        self.arch = ["--arch=native"] if shutil.which("nvidia-smi") else []
        self.t0 = time.time()

    def say(self, msg):
        print(f"[{time.time() - self.t0:6.1f}s] {msg}", flush=True)

    # --- graphs ---------------------------------------------------------
    def graph(self, name):
        g = dict(GRAPHS[name], name=name)
        d = os.path.join(self.out, "graphs", name)
        os.makedirs(d, exist_ok=True)
        g["dirpath"] = d
        if "preset" in g:
            if not (os.path.exists(os.path.join(d, "x.npy")) and
                    os.path.exists(os.path.join(d, "edge_index.npy"))):
                if not os.path.exists(self.gnngen):
                    g["missing"] = "build/gnngen not found"
                    return g
                p = run([self.gnngen, f"--preset={g['preset']}", f"--seed={self.a.seed}",
                         f"--out={d}"], os.path.join(d, "gnngen.log"))
                if p.returncode != 0:
                    g["missing"] = "gnngen failed: " + tail(os.path.join(d, "gnngen.log"))
                    return g
            g["edge_index"] = os.path.join(d, "edge_index.npy")
            x = np.load(os.path.join(d, "x.npy"))
        else:
            g["edge_index"] = os.path.join(ROOT, g["dir"], "edge_index.npy")
            x = pyg_ref.normalize_features(np.load(os.path.join(ROOT, g["dir"], "x.npy")))
        # float32 values, stored as float64: every engine reads the same numbers
        g["x"] = os.path.join(d, "x_f64.npy")
        np.save(g["x"], x.astype(np.float32).astype(np.float64))
        g["N"], g["F"] = x.shape
        g["batch"] = os.path.join(d, "batch.npy")
        np.save(g["batch"], (np.arange(g["N"], dtype=np.int64) * BATCH_GRAPHS) // max(g["N"], 1))
        return g

    def random_x(self, g, width):
        path = os.path.join(g["dirpath"], f"x_random{width}.npy")
        if not os.path.exists(path):
            rng = np.random.default_rng(self.a.seed + width)
            x = rng.uniform(-1, 1, size=(g["N"], width)).astype(np.float32)
            np.save(path, x.astype(np.float64))
        return path

    # --- cases ----------------------------------------------------------
    def make_cases(self, graphs):
        for g in graphs:
            opts = ["O2"] + (["O0"] if g["name"] in O0_GRAPHS else [])
            ids = list(MODELS) + ([TRAINED[0]] if g["name"] == "cora" else [])
            for mid in ids:
                for opt in opts:
                    self.cases.append(self.case(g, mid, opt))

    def case(self, g, mid, opt):
        if mid == TRAINED[0]:
            src, kind, weights = TRAINED[1], TRAINED[2], os.path.join(ROOT, TRAINED[3])
        else:
            (src, kind), weights = MODELS[mid], None
        c = {"id": mid, "graph": g["name"], "opt": opt, "kind": kind, "g": g,
             "weights": weights, "res": {}, "why": {}}
        c["dir"] = os.path.join(self.out, "cases", g["name"], mid + ("" if opt == "O2" else "-O0"))
        os.makedirs(c["dir"], exist_ok=True)
        c["log"] = os.path.join(c["dir"], "log.txt")
        if g.get("missing"):
            c["skip"] = g["missing"]
            return c
        c["include"] = []
        if src.startswith("bench:"):
            b = src.split(":", 1)[1]
            w = bench.WIDTHS[g["widths"]][b]
            text = bench.instantiate(b, g["F"], g["classes"], "Bench" + b.upper(), **w)
            c["width"] = (g["F"], g["classes"])
        else:
            with open(os.path.join(ROOT, src)) as f:
                text = f.read()
            c["include"] = ["-I", os.path.join(ROOT, os.path.dirname(src))]
            if "f32[N, 1433]" in text:
                text = retarget(text, g["F"], g["classes"])
                c["width"] = (g["F"], g["classes"])
        c["gnn"] = os.path.join(c["dir"], "model.gnn")
        with open(c["gnn"], "w") as f:
            f.write(text)
        return c

    def fail(self, c, check, why):
        c["res"][check] = False
        c["why"][check] = why

    # --- steps ----------------------------------------------------------
    def compile_case(self, c):
        obj = os.path.join(c["dir"], "model.o")
        p = run([self.gnncc, "--target=cuda", "-" + c["opt"]] + self.arch + c["include"] +
                [c["gnn"], "-o", obj], c["log"])
        if p.returncode != 0:
            return self.fail(c, "build", "gnncc: " + tail(c["log"]))
        name, ins, outs, nout = header_info(os.path.join(c["dir"], "model.h"))
        c.update(name=name, nout=nout, obj=obj)
        m = re.search(r"x: f32\[N, (\d+)\]", ins)
        if not m:
            return self.fail(c, "build", f"unexpected inputs: {ins}")
        c["fin"] = int(m.group(1))
        if "width" in c:
            want = f"f32[N, {c['width'][1]}]"
            if c["fin"] != c["width"][0] or outs.split(": ", 1)[1] != want:
                return self.fail(c, "build", f"rewritten for {c['width']}, the header says "
                                 f"{ins} -> {outs}")
            c["x"] = c["g"]["x"]
        else:
            c["x"] = self.random_x(c["g"], c["fin"])

    def link_case(self, c, harness_objs):
        exe = os.path.join(c["dir"], "gnnbench")
        hobj = harness_objs.get(c["name"])
        if not hobj:
            return self.fail(c, "build", "the harness did not compile")
        p = run(bench.harness_link_cmd(self.gnncc, hobj, [c["obj"]], exe), c["log"])
        if p.returncode != 0:
            return self.fail(c, "build", "link: " + tail(c["log"]))
        c["exe"] = exe
        c["res"]["build"] = True

    def harness(self, c, prefix, tool=None):
        """gnnbench --check under an optional sanitizer; (ok, JSON result or why)"""
        g = c["g"]
        w = os.path.join(c["dir"], "weights.safetensors")
        cmd = [c["exe"], "--check", f"--graph={g['edge_index']}", f"--x={c['x']}",
               f"--label={g['name']}", f"--seed={self.a.seed}", f"--out={prefix}"]
        if c["kind"] == "pool":
            cmd.append(f"--batch={g['batch']}")
        cmd.append(f"--weights={c['weights'] or w}" if c["weights"] or tool else
                   f"--save-weights={w}")
        if tool:
            cmd = [self.sanitizer, f"--tool={tool}", "--error-exitcode=99"] + (
                ["--leak-check=full"] if tool == "memcheck" else []) + cmd
        with open(c["log"], "a") as f:
            f.write("$ " + " ".join(cmd) + "\n")
        p = subprocess.run(cmd, capture_output=True, text=True, cwd=ROOT)
        with open(c["log"], "a") as f:
            f.write(p.stdout + p.stderr)
        res = None
        for line in p.stdout.splitlines():
            if line.startswith("{") and '"event": "result"' in line:
                res = json.loads(line)
        if p.returncode != 0 or not res or res.get("status") != "ok":
            why = (res or {}).get("message") or tail(c["log"], 2)
            return False, f"exit status {p.returncode}: {why}"
        return True, res

    def run_cuda(self, c):
        ok, res = self.harness(c, os.path.join(c["dir"], "cuda"))
        if not ok:
            self.fail(c, "twice", res)
            return
        c["cuda_ok"] = True
        c["res"]["twice"] = bool(res["identical"])
        if not res["identical"]:
            c["why"]["twice"] = "two forwards gave different bits"
        c["res"]["finite"] = res["nonfinite"] == 0
        if res["nonfinite"]:
            c["why"]["finite"] = f"{res['nonfinite']} elements not finite (NaN poison left?)"

    def outputs(self, c, prefix):
        return [prefix + (f".{k}.npy" if c["nout"] > 1 else ".npy") for k in range(c["nout"])]

    def run_gnnrun(self, c, engine):
        check = {"cpu": "cpu", "interp": "interp", "cuda": "gnnrun cuda"}[engine]
        w = c["weights"] or os.path.join(c["dir"], "weights.safetensors")
        cmd = [self.gnnrun, c["gnn"], f"--engine={engine}", "-" + c["opt"], "--graph",
               c["g"]["edge_index"], "--input", f"x={c['x']}", "--weights", w,
               "--output-dtype=f64"] + c["include"]
        if c["kind"] == "pool":
            cmd += ["--batch", c["g"]["batch"]]
        # cuda.npy is gnnbench's
        outs = self.outputs(c, os.path.join(c["dir"], "gnnrun-cuda" if engine == "cuda" else engine))
        for o in outs:
            cmd += ["--output", o]
        p = run(cmd, c["log"])
        if p.returncode != 0:
            return self.fail(c, check, f"gnnrun --engine={engine}: " + tail(c["log"]))
        if engine == "cuda":
            c["gnnrun_cuda"] = outs   # compared with the cpu engine's
        else:
            c.setdefault("refs", {})[check] = outs

    def compare(self, c, check, refs, cands=None):
        """cands (default: gnnbench's cuda outputs) against refs, within the
        case's tolerance"""
        msgs, ok = [], True
        for cand, ref in zip(cands or self.outputs(c, os.path.join(c["dir"], "cuda")), refs):
            good, msg = compare(np.load(cand), np.load(ref), c["tol"])
            ok &= good
            msgs.append(msg)
        c["res"][check] = ok
        if not ok:
            c["why"][check] = "; ".join(msgs)

    def compare_all(self, c):
        """1e-5, or 3 times PyG's own float32 error where that is larger
        (pyg_check.py: sums over huge hubs)"""
        c["tol"] = max(RTOL, 3 * c.get("noise", 0.0))
        for check, refs in c.get("refs", {}).items():
            self.compare(c, check, refs)
        if "gnnrun_cuda" in c:
            if "cpu" in c.get("refs", {}):
                self.compare(c, "gnnrun cuda", c["refs"]["cpu"], c["gnnrun_cuda"])
            else:
                self.fail(c, "gnnrun cuda", "no cpu engine result to compare with")

    def run_pyg(self, graph, cases):
        man = {"edge_index": graph["edge_index"], "batch": graph["batch"], "cases": []}
        for c in cases:
            man["cases"].append({"id": c["dir"], "kind": c["kind"], "x": c["x"],
                                 "weights": c["weights"] or os.path.join(c["dir"],
                                                                         "weights.safetensors"),
                                 "out": os.path.join(c["dir"], "pyg")})
        path = os.path.join(graph["dirpath"], "pyg_manifest.json")
        with open(path, "w") as f:
            json.dump(man, f, indent=1)
        log = os.path.join(graph["dirpath"], "pyg.log")
        with open(log, "w") as f:
            p = subprocess.run([sys.executable, os.path.join(HERE, "pyg_check.py"), path],
                               stdout=subprocess.PIPE, stderr=f, text=True, cwd=ROOT)
        got = {}
        for line in p.stdout.splitlines():
            try:
                r = json.loads(line)
                got[r["id"]] = r
            except (ValueError, KeyError):
                pass
        for c in cases:
            r = got.get(c["dir"])
            if not r:
                self.fail(c, "pyg", "pyg_check.py gave no result: " + tail(log, 2))
            elif r["status"] != "ok":
                self.fail(c, "pyg", r["message"])
            else:
                c["noise"] = r["noise"]
                c.setdefault("refs", {})["pyg"] = self.outputs(c, os.path.join(c["dir"], "pyg"))

    def run_sanitizers(self, c):
        for tool in ("memcheck", "initcheck"):
            if not self.sanitizer:
                self.fail(c, tool, "compute-sanitizer not found")
                continue
            prefix = os.path.join(c["dir"], tool)
            ok, res = self.harness(c, prefix, tool)
            c["res"][tool] = ok
            if not ok:
                c["why"][tool] = res
                continue
            if tool == "memcheck":
                same = all(same_bytes(a, b) for a, b in zip(
                    self.outputs(c, prefix), self.outputs(c, os.path.join(c["dir"], "cuda"))))
                c["res"]["2nd process"] = same
                if not same:
                    c["why"]["2nd process"] = "a second process gave different bits"

    # --- whole programs -------------------------------------------------
    def break_rejected(self):
        log = os.path.join(self.out, "break.log")
        p = run([self.gnncc, "--target=cuda", "tests/passes/Inputs/break.gnn", "-o",
                 os.path.join(self.out, "break.o")], log)
        ok = p.returncode != 0 and "graph break" in tail(log, 5)
        self.extra.append(("graph break rejected for cuda (tests/passes/Inputs/break.gnn)",
                           ok, "" if ok else "gnncc: " + tail(log)))

    def examples(self):
        """the example programs, built in a copy of examples/ (as
        tests/examples does) so that the checkout stays clean"""
        ex = os.path.join(self.out, "examples")
        shutil.rmtree(ex, ignore_errors=True)
        for d in ["common", "gcn", "sage", "gat", "gin"]:
            shutil.copytree(os.path.join(ROOT, "examples", d), os.path.join(ex, d),
                            ignore=shutil.ignore_patterns("build-*"))
        cora = os.path.join(ROOT, "data", "cora")
        for m in ["gcn", "sage", "gat", "gin"]:
            log = os.path.join(self.out, f"example-{m}.txt")
            what = f"examples/{m} program (cuda)"
            make = ["make", "-s", "-C", os.path.join(ex, m), "TARGET=cuda", f"GNNCC={self.gnncc}"]
            p = run(make, log)
            exe = os.path.join(ex, m, "build-cuda", m)
            if p.returncode != 0:
                self.extra.append((what, False, "make: " + tail(log)))
                continue
            ldd = subprocess.run(["ldd", exe], capture_output=True, text=True).stdout
            if "libcudart" in ldd:
                self.extra.append((what, False, "links libcudart.so"))
                continue
            p = run(make + ["run", f"ARGS={cora}"], log)
            with open(log) as f:
                text = f.read()
            ok = p.returncode == 0 and "test accuracy:" in text
            if m == "gcn":
                ok = ok and "test accuracy: 82.0%" in text
            self.extra.append((what + (": 82.0% on Cora" if m == "gcn" else ""), ok,
                               "" if ok else tail(log)))
        log = os.path.join(self.out, "example-gcn-memcheck.txt")
        what = "examples/gcn under compute-sanitizer memcheck"
        if not self.sanitizer:
            self.extra.append((what, False, "compute-sanitizer not found"))
            return
        p = run([self.sanitizer, "--tool=memcheck", "--leak-check=full", "--error-exitcode=99",
                 os.path.join(ex, "gcn", "build-cuda", "gcn"), cora,
                 os.path.join(ex, "gcn", "gcn_cora.safetensors")], log)
        self.extra.append((what, p.returncode == 0, "" if p.returncode == 0 else tail(log)))

    # --- all ------------------------------------------------------------
    def main(self):
        a = self.a
        os.makedirs(self.out, exist_ok=True)
        self.sanitizer = shutil.which("compute-sanitizer") or (
            "/usr/local/cuda/bin/compute-sanitizer"
            if os.path.exists("/usr/local/cuda/bin/compute-sanitizer") else None)
        graphs = [self.graph(n) for n in a.graphs]
        for g in graphs:
            self.say(f"graph {g['name']}: " + (f"N={g['N']} F={g['F']}" if "N" in g else
                                               "skipped: " + g["missing"]))
        self.make_cases(graphs)
        live = [c for c in self.cases if "skip" not in c]
        for c in self.cases:
            if "skip" in c:
                self.fail(c, "build", c["skip"])
        self.say(f"compiling {len(live)} models for cuda, {a.jobs} at a time")
        with ThreadPoolExecutor(a.jobs) as ex:
            list(ex.map(self.compile_case, live))
        live = [c for c in live if "obj" in c and "build" not in c["res"]]
        names = sorted({c["name"] for c in live})
        hdir = os.path.join(self.out, "harness")
        os.makedirs(hdir, exist_ok=True)

        def harness_obj(name):
            obj = os.path.join(hdir, name + ".o")
            p = run(bench.harness_compile_cmd(self.gnncc, [name], obj, werror=True),
                    os.path.join(hdir, "log.txt"))
            return name, obj if p.returncode == 0 else None

        with ThreadPoolExecutor(a.jobs) as ex:
            hobjs = dict(ex.map(harness_obj, names))
            list(ex.map(lambda c: self.link_case(c, hobjs), live))
        live = [c for c in live if c["res"].get("build")]

        self.say(f"running {len(live)} cases on the GPU")
        for c in live:
            self.run_cuda(c)
        ran = [c for c in live if c.get("cuda_ok")]
        self.say("cpu target and interpreter")
        jobs = [(c, "cpu") for c in ran]
        jobs += [(c, "interp") for c in ran if c["graph"] in INTERP_GRAPHS and c["opt"] == "O2"]
        with ThreadPoolExecutor(a.jobs) as ex:
            list(ex.map(lambda j: self.run_gnnrun(*j), jobs))
        self.say("gnnrun --engine=cuda on the examples")
        for c in ran:   # the GPU: one at a time
            if c["id"] in GNNRUN_CUDA and c["opt"] == "O2":
                self.run_gnnrun(c, "cuda")
        self.say("PyTorch Geometric")
        for g in graphs:
            cs = [c for c in ran if c["graph"] == g["name"]]
            if cs:
                self.run_pyg(g, cs)
        for c in ran:
            self.compare_all(c)
        san = [c for c in ran if c["graph"] in a.sanitize_graphs and c["opt"] == "O2"]
        self.say(f"compute-sanitizer on {len(san)} cases")
        with ThreadPoolExecutor(max(1, min(4, a.jobs))) as ex:
            list(ex.map(self.run_sanitizers, san))
        self.say("graph break, example programs")
        self.break_rejected()
        self.examples()
        return self.summary()

    def summary(self):
        rows, fails, passes, details = [], 0, 0, []
        for c in self.cases:
            want = {"build", "twice", "finite", "cpu", "pyg"}
            if c["graph"] in INTERP_GRAPHS and c["opt"] == "O2":
                want.add("interp")
            if c["id"] in GNNRUN_CUDA and c["opt"] == "O2":
                want.add("gnnrun cuda")
            if c["graph"] in self.a.sanitize_graphs and c["opt"] == "O2":
                want |= {"memcheck", "initcheck", "2nd process"}
            cells, notrun = [], 0
            for k in CHECKS:
                if k not in want:
                    cells.append("-")
                    continue
                v = c["res"].get(k)
                if v is True:
                    passes += 1
                    cells.append("ok")
                    continue
                fails += 1
                if k in c["why"]:
                    cells.append("FAIL")
                    details.append(f"{c['id']} on {c['graph']} -{c['opt']}, {k}: {c['why'][k]}")
                else:   # an earlier step failed: one line says why
                    cells.append("not run")
                    notrun += 1
            if notrun:
                details.append(f"{c['id']} on {c['graph']} -{c['opt']}: {notrun} more checks "
                               "could not run")
            tol = c.get("tol")
            rows.append([c["id"], c["graph"], "-" + c["opt"]] + cells +
                        [f"{tol:.1e}" if tol else "-"])
        for what, ok, why in self.extra:
            passes += ok
            fails += not ok
            if not ok:
                details.append(f"{what}: {why}")
        cols = ["model", "graph", "opt"] + CHECKS + ["tolerance"]
        widths = [max(len(str(r[i])) for r in rows + [cols]) for i in range(len(cols))]
        lines = ["  ".join(str(v).ljust(w) for v, w in zip(cols, widths))]
        lines += ["  ".join(str(v).ljust(w) for v, w in zip(r, widths)) for r in rows]
        lines.append("")
        lines += [f"{'ok  ' if ok else 'FAIL'}  {what}" for what, ok, _ in self.extra]
        if details:
            lines += ["", "failures:"] + ["  " + d for d in details]
        lines += ["", f"summary: {passes} passed, {fails} failed"]
        text = "\n".join(lines) + "\n"
        print("\n" + text, end="")
        with open(os.path.join(self.out, "summary.txt"), "w") as f:
            f.write(text)
        with open(os.path.join(self.out, "summary.json"), "w") as f:
            json.dump({"passed": passes, "failed": fails, "checks": CHECKS,
                       "cases": [{"model": c["id"], "graph": c["graph"], "opt": c["opt"],
                                  "results": c["res"], "why": c["why"], "tolerance": c.get("tol"),
                                  "pyg_float32_noise": c.get("noise")} for c in self.cases],
                       "programs": [{"what": w, "ok": ok, "why": y} for w, ok, y in self.extra]},
                      f, indent=1)
        return 1 if fails else 0


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--out", required=True)
    ap.add_argument("--graphs", type=bench.csv_list(list(GRAPHS)), default=list(GRAPHS))
    ap.add_argument("--sanitize-graphs", type=bench.csv_list(list(GRAPHS)), default=["cora"])
    ap.add_argument("--jobs", type=int, default=max(1, min(8, (os.cpu_count() or 2) // 2)))
    ap.add_argument("--seed", type=int, default=7)
    return Check(ap.parse_args(argv)).main()


if __name__ == "__main__":
    sys.exit(main())
