#!/usr/bin/env python3
"""The benchmark's driver: model files, builds, runs, time budget, raw results.

usage: bench.py run [--quick] [--graphs a,b] [--models a,b] [--systems a,b]
                    [--tasks infer,train] [--train-graphs a,b]
                    [--budget-s 570] [--results-dir DIR] [--pyg-device cuda|cpu]
       bench.py model KIND --in-features F --classes C --hidden H [--heads K]
                    --name NAME [--train] [-o FILE]
       bench.py build-harness -o EXE --object NAME=OBJ [--object ...] [--werror]
                    [--emulate]
       bench.py build-spmm -o EXE [--werror]

`run` (what bench/run.sh calls) does, in order, within one time budget:
  1. graphs: Cora and CiteSeer from data/, the synthetic presets from
     build/gnngen into build/bench/graphs/ (in the background, kept for the
     next run);
  2. gnncc: every model for every graph at -O2 and -O0 from the templates
     in bench/models/ (widths below), and with --systems gnncc-VN at -O2
     with cuBLAS as a candidate (--vendor=cublas, docs/vendor.md: opt in,
     so the default run's budget is unchanged), compiled with `gnncc --target=cuda`
     (nvcc included), its wall time being the compile time; several at once
     (half the cores, said in the report); then per graph one gnnbench
     executable holding all of that graph's models (gnnbench.cu);
  3. the aggregation alone (bench/models/agg.gnn.in, width 128) in the
     same executable, cuSPARSE SpMM and the device-to-device copy (spmm.cu);
  4. PyG eager, torch.compile's default mode (dynamic=False),
     torch.compile(dynamic=True) and torch.compile(mode="max-autotune")
     through pyg_bench.py, one process per graph and mode,
     with a fresh Inductor cache each, so compile times are cold ones;
  5. training rows (--tasks train, on --train-graphs: Cora, arxiv and
     products by default): one full-graph epoch, forward + backward + Adam
     (bench/training.py, as bench/cpu's training rows), gnncc -O2's models
     compiled with a train item and timed by gnnbench --train, PyG's by
     pyg_bench.py --task train in every mode; after the inference cells,
     as far as the budget goes;
  6. bench/results/<gpu>.json (everything, raw) and report.py's .md and .png.
Every model of every configuration runs under its own timeout: the child
prints a line when it starts a model, and a model that overruns is killed
with its process, recorded as "skipped: timeout", and the rest of that
process's models go on in a new one.  Whatever no longer fits in the budget
(default 570 s from when run.sh started, so that the whole command ends
within ten minutes) is recorded as "skipped: time budget" instead of run;
max-autotune is not tried on graphs of more than --autotune-max-edges edges.
The order puts what matters most first: gnncc and the baselines on every
graph, PyG eager on every graph, torch.compile's default mode and
max-autotune on Cora and arxiv (the strongest peers on small graphs),
torch.compile(dynamic=True) on every graph, then the default mode and
max-autotune on the others.

Widths (documented in bench/README.md): on Cora and CiteSeer those of PyG's
examples -- GCN 16 (gcn.py), GraphSAGE 256 (reddit.py, ogbn_products_sage.py),
GAT 8 heads x 8 then 1 head (gat.py), GIN 32 (mutag_gin.py, as
examples/gin/gin.gnn); on the synthetic graphs 128 for all (GAT 8 heads x 16).
"""
import argparse
import json
import os
import queue
import re
import shlex
import shutil
import signal
import subprocess
import sys
import threading
import time
from concurrent.futures import ThreadPoolExecutor

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from training import label_files, train_item  # noqa: E402

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)

# name, source, class count (the real dataset's), and for gnngen presets the
# sizes the preset promises (checked against what it wrote)
GRAPHS = [
    {"name": "cora", "dir": "data/cora", "classes": 7, "widths": "citation"},
    {"name": "citeseer", "dir": "data/citeseer", "classes": 6, "widths": "citation"},
    {"name": "pubmed", "preset": "pubmed", "N": 19717, "E": 88648, "F": 500, "classes": 3,
     "widths": "large"},
    {"name": "arxiv", "preset": "arxiv", "N": 169343, "E": 2315598, "F": 128, "classes": 40,
     "widths": "large"},
    {"name": "reddit", "preset": "reddit", "N": 232965, "E": 114615892, "F": 602,
     "classes": 41, "widths": "large"},
    {"name": "products", "preset": "products", "N": 2449029, "E": 123718280, "F": 100,
     "classes": 47, "widths": "large"},
]
MODELS = ["gcn", "sage", "gat", "gin"]
WIDTHS = {
    "citation": {"gcn": {"hidden": 16}, "sage": {"hidden": 256},
                 "gat": {"hidden": 8, "heads": 8}, "gin": {"hidden": 32}},
    "large": {"gcn": {"hidden": 128}, "sage": {"hidden": 128},
              "gat": {"hidden": 16, "heads": 8}, "gin": {"hidden": 128}},
}
AGG_WIDTH = 128
# gnncc's configurations: the flags each compiles with (VN: cuBLAS as a
# candidate, --vendor=cublas; BF: bfloat16 storage, --precision=bf16; BI:
# the same with the model's features and outputs in bfloat16, bf16_io; a
# model's name ends in its configuration)
OPTS = ["O2", "O0", "VN", "BF", "BI"]
OPT_FLAGS = {"O2": ["-O2"], "O0": ["-O0"], "VN": ["-O2", "--vendor=cublas"],
             "BF": ["-O2", "--precision=bf16"], "BI": ["-O2", "--precision=bf16"]}
PYG_MODES = ["eager", "compile-static", "compile-dynamic", "max-autotune"]
SYSTEMS = ["gnncc-O2", "gnncc-O0"] + ["pyg-" + m for m in PYG_MODES] + ["agg"]
# what --systems also takes: opt-in configurations
MORE_SYSTEMS = ["gnncc-VN", "gnncc-BF", "gnncc-BI"]
# per-model caps (seconds); the budget may cut them shorter
TIMEOUT = {"gnncc": 90, "pyg-eager": 60, "pyg-compile-static": 120, "pyg-compile-dynamic": 120,
           "pyg-max-autotune": 150}
# where the strongest peers on small graphs (CUDA Graph replay, tuned
# kernels) are timed before the rest: torch.compile's default mode and
# max-autotune right after eager
COMPILE_FIRST = ("cora", "arxiv")
TASKS = ["infer", "train"]
TRAIN_GRAPHS = ["cora", "arxiv", "products"]   # full-batch training rows
STARTUP_TIMEOUT = 240   # loading the largest graph, before the first model starts


# --- model files ------------------------------------------------------------

def instantiate(kind, fin, classes, name, hidden=None, heads=None):
    """bench/models/KIND.gnn.in with its @...@ names substituted."""
    with open(os.path.join(HERE, "models", kind + ".gnn.in")) as f:
        text = f.read()
    subs = {"NAME": (name, "--name"), "IN": (fin, "--in-features"),
            "CLASSES": (classes, "--classes"), "HIDDEN": (hidden, "--hidden"),
            "HEADS": (heads, "--heads"), "HEAD_HIDDEN": (hidden, "--hidden")}
    for k, (v, opt) in subs.items():
        if "@" + k + "@" in text:
            if v is None:
                raise ValueError(f"{kind}.gnn.in needs {opt}")
            text = text.replace("@" + k + "@", str(v))
    left = re.findall(r"@[A-Z_]+@", text)
    if left:
        raise ValueError(f"{kind}.gnn.in: no value for {', '.join(sorted(set(left)))}")
    return text


def bf16_io(text):
    """a template's model taking its features as bfloat16 words and
    returning bfloat16 (docs/precision.md): x is read through its f32
    view, the returned value cast where it is made"""
    text, n = re.subn(r"\bx: f32\[", "x16: bf16[", text, count=1)
    text, m = re.subn(r"\) -> f32\[(.*)\] \{\n", r') -> bf16[\1] {\n  x = cast(x16, "f32")\n', text, count=1)
    text, k = re.subn(r"(\n\s*)return (.*)\n", r'\1return cast(\2, "bf16")\n', text, count=1)
    if (n, m, k) != (1, 1, 1):
        raise ValueError("bf16_io: not a template's one-input, one-output model")
    return text


def agg_opts(systems):
    """the configurations the aggregation alone is compiled in: -O2 (the
    "agg" system), and the 16-bit ones whose gnncc systems run too"""
    return ["O2"] + [o for o in ["BF", "BI"] if "gnncc-" + o in systems]


def model_name(kind, opt):
    return f"{kind.upper()}_{opt}"


# --- toolchain --------------------------------------------------------------

def find_nvcc():
    env = os.environ.get("NVCC")
    if env:
        return shlex.split(env)
    return [shutil.which("nvcc") or "/usr/local/cuda/bin/nvcc"]


def cuda_libdir(nvcc):
    real = os.path.realpath(shutil.which(nvcc[0]) or nvcc[0])
    return os.path.join(os.path.dirname(os.path.dirname(real)), "lib64")


def gnncc_flags(gnncc, emulate=False, vendor=False):
    """gnncc's compile and link flags for nvcc: -I, -L and -l as they are,
    -Wl, as -Xlinker, anything else (a sanitizer build's -fsanitize=...)
    for the host compiler, which also links; with vendor, what objects
    compiled with --vendor=cublas link too.  emulate: the emulated
    device's, as they are, for the C++ compiler"""
    def nvcc_words(words):
        out = []
        for w in words:
            if w[:2] in ("-I", "-L", "-l"):
                out.append(w)
            elif w.startswith("-Wl,"):   # -Xlinker splits at commas as -Wl, does
                out.append("-Xlinker=" + w[4:])
            else:   # -Xcompiler splits at commas: -fsanitize=a,b as -fsanitize=a -fsanitize=b
                key, eq, vals = w.partition("=")
                out += ["-Xcompiler=" + key + eq + v for v in vals.split(",")] if eq else [
                    "-Xcompiler=" + w]
        return out
    emu = ["--target=cuda", "--emulate"] if emulate else []
    cflags = subprocess.run([gnncc, "--print-cflags", *emu], check=True, capture_output=True,
                            text=True).stdout.split()
    libs = subprocess.run([gnncc, "--print-link-flags", "--target=cuda", *emu] +
                          (["--vendor=cublas"] if vendor else []),
                          check=True, capture_output=True, text=True).stdout.split()
    if emulate:
        return cflags, libs
    return nvcc_words(cflags), nvcc_words(libs)


def warn_flags(werror, emulate=False):
    # C/CUDA clean under -Wall -Wextra; --werror (the tests) makes it an error
    if emulate:
        return ["-Wall", "-Wextra"] + (["-Werror"] if werror else [])
    flags = ["-Xcompiler=-Wall,-Wextra"]
    if werror:
        flags += ["-Werror", "all-warnings", "-Xcompiler=-Werror"]
    return flags


def emu_cxx():
    """the C++ compiler that builds gnnbench.cu for the emulated device"""
    return shlex.split(os.environ.get("CXX") or "c++")


# the runtime calls gnnbench counts device memory and finds the model's stream by
WRAPPED = ["cudaMalloc", "cudaFree", "cudaStreamCreateWithFlags"]


def harness_compile_cmd(gnncc, names, obj, werror=False, emulate=False):
    """nvcc command line compiling gnnbench.cu for the models NAMES (each
    NAME_desc is linked in later); emulate: the C++ compiler's, against the
    emulated device's cuda_runtime.h (objects built with gnncc --emulate)"""
    cflags, _ = gnncc_flags(gnncc, emulate)
    models = " ".join(f"X({n})" for n in names)
    cc = emu_cxx() + ["-x", "c++", "-std=c++17", "-DGNNBENCH_EMULATED"] if emulate else find_nvcc()
    return cc + ["-O2", "-c"] + warn_flags(werror, emulate) + cflags + [
        f"-DGNNBENCH_MODELS={models}", os.path.join(HERE, "gnnbench.cu"), "-o", obj]


def harness_link_cmd(gnncc, harness_obj, objects, exe, emulate=False, vendor=False):
    """nvcc (or, emulated, the C++ compiler) command line linking the
    compiled harness with the model objects (vendor: some were compiled
    with --vendor=cublas)"""
    _, libs = gnncc_flags(gnncc, emulate, vendor)
    cmd = (emu_cxx() if emulate else find_nvcc()) + [harness_obj] + list(objects)
    for w in [] if emulate else WRAPPED:
        cmd += ["-Xlinker", f"--wrap={w}"]
    return cmd + libs + ["-o", exe]


def build_harness(gnncc, exe, objects, werror=False, verbose=False, emulate=False):
    """gnnbench.cu built into exe with objects [(NAME, OBJ)]; returns
    (exit status, compiler output)"""
    hobj = exe + ".harness.o"
    out = ""
    for cmd in (harness_compile_cmd(gnncc, [n for n, _ in objects], hobj, werror, emulate),
                harness_link_cmd(gnncc, hobj, [o for _, o in objects], exe, emulate,
                                 any(n.endswith("_VN") for n, _ in objects))):
        if verbose:
            print(shlex.join(cmd), file=sys.stderr)
        p = subprocess.run(cmd, capture_output=True, text=True)
        out += p.stdout + p.stderr
        if p.returncode != 0:
            return p.returncode, out
    return 0, out


def spmm_cmd(gnncc, exe, werror=False):
    cflags, libs = gnncc_flags(gnncc)
    nvcc = find_nvcc()
    return nvcc + ["-O2"] + warn_flags(werror) + cflags + [
        os.path.join(HERE, "spmm.cu")] + libs + [
        "-lcusparse", "-Xlinker", "-rpath=" + cuda_libdir(nvcc), "-o", exe]


# --- a child process under per-model timeouts -------------------------------

class Log:
    def __init__(self, path, t0):
        self.t0 = t0
        os.makedirs(os.path.dirname(path), exist_ok=True)
        self.f = open(path, "a")

    def __call__(self, msg):
        line = f"[{time.time() - self.t0:6.1f}s] {msg}"
        print(line, file=sys.stderr, flush=True)
        print(line, file=self.f, flush=True)


def _reader(stream, q):
    for line in stream:
        q.put(line)
    q.put(None)


def run_items(log, what, make_cmd, items, cap_s, deadline, stderr_path, env=None):
    """Run make_cmd(remaining) until each item (a model name the child
    reports as "model") has a result line.  A model that takes longer than
    cap_s (or runs into the deadline) is killed with its process and skipped;
    the others go on in a new process.  Returns (results by item, the
    child's other JSON lines)."""
    results, other = {}, []
    remaining = list(items)
    while remaining:
        left = deadline - time.time()
        if left < 5:
            for it in remaining:
                results[it] = {"status": "skipped", "reason": "time budget"}
            break
        cmd = make_cmd(remaining)
        with open(stderr_path, "a") as err:
            err.write("$ " + shlex.join(cmd) + "\n")
            err.flush()
            p = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=err, text=True,
                                 start_new_session=True, env=env, cwd=ROOT)
        q = queue.Queue()
        threading.Thread(target=_reader, args=(p.stdout, q), daemon=True).start()
        current, started, killed = None, time.time(), None
        progressed = False
        while True:
            limit = (cap_s if current else STARTUP_TIMEOUT) - (time.time() - started)
            limit = min(limit, deadline - time.time())
            try:
                line = q.get(timeout=max(limit, 0.01))
            except queue.Empty:
                os.killpg(p.pid, signal.SIGKILL)
                killed = "time budget" if deadline - time.time() < 1 else (
                    f"timeout ({cap_s:.0f} s)" if current else
                    f"timeout before the first model ({STARTUP_TIMEOUT} s)")
                p.wait()
                break
            if line is None:
                p.wait()
                break
            try:
                rec = json.loads(line)
            except ValueError:
                other.append({"text": line.rstrip()})
                continue
            ev, it = rec.get("event"), rec.get("model")
            if ev == "start" and it in remaining:
                current, started = it, time.time()
            elif ev == "result" and it in remaining:
                results[it] = rec
                remaining.remove(it)
                current, started, progressed = None, time.time(), True
            else:
                other.append(rec)
        if current is not None or killed:
            why = killed or f"crashed (exit status {p.returncode}; see {os.path.relpath(stderr_path, ROOT)})"
            victims = [current] if current else list(remaining)
            for it in victims:
                results[it] = {"status": "skipped" if killed else "error",
                               "reason" if killed else "message": why}
                remaining.remove(it)
            log(f"{what}: {', '.join(victims)}: {why}")
        elif remaining and not progressed:
            # the child ended without a word on these: do not loop forever
            for it in remaining:
                results[it] = {"status": "error", "message": f"no result (exit status "
                               f"{p.returncode}; see {os.path.relpath(stderr_path, ROOT)})"}
            remaining = []
    return results, other


# --- the benchmark ----------------------------------------------------------

def gpu_info():
    try:
        out = subprocess.run(["nvidia-smi", "--query-gpu=name,driver_version,memory.total",
                              "--format=csv,noheader"], capture_output=True, text=True,
                             timeout=30)
    except (OSError, subprocess.TimeoutExpired):
        return None
    if out.returncode != 0 or not out.stdout.strip():
        return None
    name, driver, mem = [s.strip() for s in out.stdout.strip().splitlines()[0].split(",")]
    return {"gpu": name, "driver": driver, "gpu_memory": mem}


def npy_shape(path):
    import numpy as np
    return tuple(np.load(path, mmap_mode="r").shape)


class Bench:
    def __init__(self, a):
        self.a = a
        self.t0 = float(os.environ.get("BENCH_T0") or time.time())
        self.deadline = self.t0 + a.budget_s
        self.build = os.path.abspath(a.build_dir)
        os.makedirs(self.build, exist_ok=True)
        self.log = Log(os.path.join(self.build, "log.txt"), self.t0)
        self.records = []
        self.gpu = gpu_info()
        self.gnncc = os.path.join(ROOT, "build", "gnncc")
        self.gnngen = os.path.join(ROOT, "build", "gnngen")
        self.jobs = max(1, min(8, (os.cpu_count() or 2) // 2))

    def left(self):
        return self.deadline - time.time()

    def add(self, **rec):
        self.records.append(rec)

    def skip(self, system, model, graph, reason, **extra):
        self.add(system=system, model=model, graph=graph, status="skipped", reason=reason,
                 **extra)

    def skip_cells(self, g, systems, models, reason):
        """a skipped record for each cell of g not recorded yet ("agg":
        gnncc's and cuSPARSE's; the training cells of gnncc -O2 and PyG
        where g has training rows), with gnncc's compile time where it
        compiled"""
        done = {(r.get("system"), r.get("model"), r.get("task", "infer")) for r in self.records
                if r.get("graph") == g["name"]}
        for task in [t for t in TASKS if t in self.a.tasks and (t == "infer" or self.trains(g))]:
            for s in systems:
                if task == "train" and (s == "agg" or s == "gnncc-O0"):
                    continue
                cells = [(self.system_of("AGG_" + o), "agg", "AGG_" + o) for o in agg_opts(systems)] + [
                    ("agg-cusparse", "agg", None)] \
                    if s == "agg" else [(s, m, model_name(m, s[-2:] + ("T" if task == "train"
                                                                        else ""))
                                         if s.startswith("gnncc") else None) for m in models]
                for system, m, name in cells:
                    if (system, m, task) not in done:
                        self.skip(system, m, g["name"], reason,
                                  compile_s=g.get("compile_s", {}).get(name),
                                  **({"task": "train"} if task == "train" else {}))

    # 1. graphs
    def start_graphs(self, graphs):
        self.gen = {}
        for g in graphs:
            if "preset" not in g:
                g["path"] = os.path.join(ROOT, g["dir"])
                continue
            d = os.path.join(self.build, "graphs", g["name"])
            g["path"] = d
            stamp = os.path.join(d, "stamp.json")
            want = {"preset": g["preset"], "seed": self.a.seed}
            try:
                with open(stamp) as f:
                    if json.load(f) == want:
                        continue
            except (OSError, ValueError):
                pass
            if not os.path.exists(self.gnngen):
                g["missing"] = "build/gnngen not found"
                continue
            tmp = d + ".tmp"
            shutil.rmtree(tmp, ignore_errors=True)
            shutil.rmtree(d, ignore_errors=True)
            os.makedirs(tmp)
            cmd = [self.gnngen, f"--preset={g['preset']}", f"--seed={self.a.seed}",
                   f"--out={tmp}"]
            errf = open(os.path.join(self.build, f"gnngen-{g['name']}.log"), "w")
            self.log("generating " + shlex.join(cmd))
            self.gen[g["name"]] = (subprocess.Popen(cmd, stdout=errf, stderr=errf,
                                                    start_new_session=True), tmp, d, want)

    def wait_graph(self, g):
        """True once g's files are there (waits for gnngen)."""
        if g.get("missing"):
            return False
        if g["name"] in self.gen:
            p, tmp, d, want = self.gen.pop(g["name"])
            try:
                rc = p.wait(timeout=max(1, min(self.a.gen_timeout_s, self.left() - 30)))
            except subprocess.TimeoutExpired:
                os.killpg(p.pid, signal.SIGKILL)
                g["missing"] = "gnngen did not finish in time"
                return False
            if rc != 0:
                g["missing"] = f"gnngen failed (exit status {rc}; build/bench/gnngen-{g['name']}.log)"
                return False
            with open(os.path.join(tmp, "stamp.json"), "w") as f:
                json.dump(want, f)
            os.rename(tmp, d)
        try:
            n, f = npy_shape(os.path.join(g["path"], "x.npy"))
            two, e = npy_shape(os.path.join(g["path"], "edge_index.npy"))
        except (OSError, ValueError) as ex:
            g["missing"] = f"cannot read the graph: {ex}"
            return False
        g.update(N=n, E=e, F_actual=f)
        if "F" in g and f != g["F"]:
            g["missing"] = f"x.npy has {f} features, the preset promises {g['F']}"
            return False
        return True

    def in_features(self, g):
        if "F" in g:
            return g["F"]
        return npy_shape(os.path.join(g["path"], "x.npy"))[1]

    # 2. gnncc
    def compile_all(self, graphs, models):
        want_o = [o for o in OPTS if "gnncc-" + o in self.a.systems]
        jobs = []
        for g in graphs:
            g["objects"] = []
            if g.get("missing"):
                continue
            fin = self.in_features(g)
            d = os.path.join(self.build, "models", g["name"])
            os.makedirs(d, exist_ok=True)
            todo = [(k, o) for o in want_o for k in models] if "infer" in self.a.tasks else []
            if "agg" in self.a.systems and "infer" in self.a.tasks:
                todo += [("agg", o) for o in agg_opts(self.a.systems)]
            if self.trains(g):
                todo += [(k, "O2T") for k in models]
            for kind, opt in todo:
                name = model_name(kind, opt)
                if kind == "agg":
                    text = instantiate("agg", AGG_WIDTH, None, name)
                else:
                    w = WIDTHS[g["widths"]][kind]
                    text = instantiate(kind, fin, g["classes"], name, **w)
                    if opt == "O2T":   # a training object: the model and its train item
                        text += train_item(name)
                if opt == "BI":
                    text = bf16_io(text)
                src = os.path.join(d, name.lower() + ".gnn")
                with open(src, "w") as f:
                    f.write(text)
                jobs.append((g, kind, opt, name, src, os.path.join(d, name.lower() + ".o")))
        arch = [f"--arch={self.a.arch}"] if self.a.arch else (
            ["--arch=native"] if self.gpu else [])
        self.log(f"gnncc: compiling {len(jobs)} models, {self.jobs} at a time")

        def one(job):
            g, kind, opt, name, src, obj = job
            # a training object (O2T) compiles as -O2's
            cmd = [self.gnncc, "--target=cuda"] + OPT_FLAGS[opt[:2]] + arch + [src, "-o", obj]
            t = time.time()
            p = subprocess.run(cmd, capture_output=True, text=True)
            return job, time.time() - t, p

        with ThreadPoolExecutor(self.jobs) as ex:
            for (g, kind, opt, name, src, obj), secs, p in ex.map(one, jobs):
                if p.returncode == 0:
                    g["objects"].append((name, obj))
                    g.setdefault("compile_s", {})[name] = secs
                else:
                    msg = (p.stderr.strip().splitlines() or ["?"])[-1]
                    self.add(system=self.system_of(name),
                             model=kind, graph=g["name"], status="error",
                             message="gnncc failed: " + msg, compile_s=secs,
                             **({"task": "train"} if opt == "O2T" else {}))
        def link(g):
            exe = os.path.join(self.build, f"gnnbench-{g['name']}")
            return g, exe, build_harness(self.gnncc, exe, g["objects"])

        with ThreadPoolExecutor(self.jobs) as ex:
            for g, exe, (rc, out) in ex.map(link, [g for g in graphs if g["objects"]]):
                g["harness"] = exe
                if rc == 0:
                    continue
                self.log(f"building {exe} failed:\n{out}")
                for name, _ in g["objects"]:
                    self.add(system=self.system_of(name), model=name.lower().rsplit("_", 1)[0],
                             graph=g["name"], status="error", message="building gnnbench failed")
                g["objects"] = []

    @staticmethod
    def system_of(name):
        kind, opt = name.lower().rsplit("_", 1)
        if kind == "agg":
            return "agg-gnncc" + ("" if opt == "o2" else "-" + opt.upper())
        return "gnncc-" + opt[:2].upper()

    def trains(self, g):
        """are there training rows on graph g?"""
        return "train" in self.a.tasks and g["name"] in self.a.train_graphs

    def labels(self, g):
        """the directory of g's y.npy and train_mask.npy (bench/training.py)"""
        d = os.path.join(self.build, "labels", g["name"])
        os.makedirs(d, exist_ok=True)
        label_files(g["path"], d, g["classes"], self.a.seed,
                    x_path=os.path.join(g["path"], "x.npy"))
        return d

    # 3. gnncc runs and the aggregation baselines
    def run_gnncc(self, g, train=False):
        names = [n for n, _ in g["objects"] if n.endswith("T") == train]
        if not names:
            return
        x = os.path.join(g["path"], "x.npy")
        ei = os.path.join(g["path"], "edge_index.npy")
        extra, task, what = [], {}, "gnncc"
        if train:
            lab = self.labels(g)
            extra = ["--train", f"--y={os.path.join(lab, 'y.npy')}",
                     f"--mask={os.path.join(lab, 'train_mask.npy')}", "--seed=0"]
            task, what = {"task": "train"}, "gnncc training"

        def cmd(rest):
            return [g["harness"], f"--graph={ei}", f"--x={x}", f"--label={g['name']}",
                    f"--seed={self.a.seed}"] + extra + rest

        self.log(f"{what} on {g['name']}: {', '.join(names)}")
        res, _ = run_items(self.log, f"{what} on {g['name']}", cmd, names, TIMEOUT["gnncc"],
                           self.deadline, os.path.join(
                               self.build, f"gnnbench-{g['name']}{'-train' if train else ''}.log"))
        for name in names:
            r = dict(res.get(name, {"status": "error", "message": "no result"}))
            kind = name.lower().rsplit("_", 1)[0]
            msg = r.get("message", "")
            if r.get("status") == "error" and ("cannot allocate" in msg or "out of memory" in msg):
                r = {"status": "skipped", "reason": "out of memory", "message": msg}
            r.update(system=self.system_of(name), model=kind, graph=g["name"],
                     compile_s=g["compile_s"].get(name), N=g["N"], E=g["E"], **task)
            if kind == "agg":
                r["width"] = AGG_WIDTH
            r.pop("event", None)
            r.pop("tool", None)
            self.records.append(r)

    def run_spmm(self, g, first):
        if "agg" not in self.a.systems or not self.spmm_exe:
            return
        cmd = [self.spmm_exe, f"--graph={os.path.join(g['path'], 'edge_index.npy')}",
               f"--num-nodes={g['N']}", f"--width={AGG_WIDTH}", f"--label={g['name']}"]
        if first:
            cmd.append(f"--d2d-mib={self.a.d2d_mib}")
        limit = min(TIMEOUT["gnncc"] + STARTUP_TIMEOUT / 2, self.left())
        if limit < 5:
            self.skip("agg-cusparse", "agg", g["name"], "time budget")
            return
        try:
            p = subprocess.run(cmd, capture_output=True, text=True, timeout=limit, cwd=ROOT)
        except subprocess.TimeoutExpired:
            self.skip("agg-cusparse", "agg", g["name"], f"timeout ({limit:.0f} s)")
            return
        got = False
        for line in p.stdout.splitlines():
            try:
                r = json.loads(line)
            except ValueError:
                continue
            r.pop("event", None)
            r.pop("tool", None)
            if r.get("system") == "agg-cusparse":
                r.update(model="agg", graph=g["name"], N=g["N"], E=g["E"], width=AGG_WIDTH)
                got = True
            self.records.append(r)
        if not got:
            self.add(system="agg-cusparse", model="agg", graph=g["name"], status="error",
                     message=(p.stderr.strip().splitlines() or [f"exit status {p.returncode}"])[-1])

    # 4. PyG
    def run_pyg(self, g, mode, models, train=False):
        system = "pyg-" + mode
        if system not in self.a.systems:
            return
        task = {"task": "train"} if train else {}
        if mode == "max-autotune" and g["E"] > self.a.autotune_max_edges:
            for m in models:
                self.skip(system, m, g["name"], f"max-autotune not tried above "
                          f"{self.a.autotune_max_edges:.0e} edges (time budget)", **task)
            return
        specs = {}
        for m in models:
            w = WIDTHS[g["widths"]][m]
            specs[m] = f"{m}:{w['hidden']}" + (f":{w['heads']}" if "heads" in w else "")
        env = dict(os.environ, PYTHONUNBUFFERED="1")
        if mode != "eager":
            cache = os.path.join(self.build, "inductor", f"{g['name']}-{mode}")
            shutil.rmtree(cache, ignore_errors=True)
            env["TORCHINDUCTOR_CACHE_DIR"] = cache
            env["TRITON_CACHE_DIR"] = os.path.join(cache, "triton")

        def cmd(rest):
            c = [self.a.python, os.path.join(HERE, "pyg_bench.py"), "--graph-dir", g["path"],
                 "--label", g["name"], "--classes", str(g["classes"]), "--mode", mode,
                 "--device", self.a.pyg_device]
            if train:
                c += ["--task", "train", "--labels-dir", lab]
            for m in rest:
                c += ["--model", specs[m]]
            return c

        lab = self.labels(g) if train else None
        what = f"{system}{' training' if train else ''} on {g['name']}"
        self.log(what)
        res, _ = run_items(self.log, what, cmd, models, TIMEOUT[system], self.deadline,
                           os.path.join(self.build, f"pyg-{g['name']}-{mode}"
                                        f"{'-train' if train else ''}.log"), env=env)
        for m in models:
            r = dict(res.get(m, {"status": "error", "message": "no result"}))
            r.pop("event", None)
            r.pop("tool", None)
            r.update(system=system, model=m, graph=g["name"], N=g["N"], E=g["E"], **task)
            self.records.append(r)

    def meta(self):
        m = {"date": time.strftime("%Y-%m-%d %H:%M:%S %Z"), "quick": self.a.quick,
             "budget_s": self.a.budget_s, "compile_jobs": self.jobs,
             "host_cpus": os.cpu_count(), "widths": WIDTHS, "agg_width": AGG_WIDTH,
             "seed": self.a.seed, "pyg_device": self.a.pyg_device}
        m.update(self.gpu or {"gpu": "no GPU"})
        try:
            v = subprocess.run(find_nvcc() + ["--version"], capture_output=True, text=True)
            rel = [ln for ln in v.stdout.splitlines() if "release" in ln]
            m["cuda_toolkit"] = rel[-1].split("release", 1)[1].strip() if rel else "?"
        except OSError:
            m["cuda_toolkit"] = "nvcc not found"
        try:
            p = subprocess.run([self.a.python, os.path.join(HERE, "pyg_bench.py"), "--info"],
                               capture_output=True, text=True, timeout=120)
            info = json.loads(p.stdout.strip().splitlines()[-1])
            info.pop("event", None)
            m.update({k: v for k, v in info.items() if k != "gpu"})
        except (OSError, ValueError, IndexError, subprocess.TimeoutExpired) as e:
            m["torch_error"] = str(e)
        return m

    def run(self):
        a = self.a
        graphs = [dict(g) for g in GRAPHS if g["name"] in a.graphs]
        models = [m for m in MODELS if m in a.models]
        self.log(f"GPU: {self.gpu['gpu'] if self.gpu else 'none found (nvidia-smi -L)'}; "
                 f"graphs {', '.join(g['name'] for g in graphs)}; budget {a.budget_s:.0f} s "
                 f"from the start")
        meta = self.meta()
        self.start_graphs(graphs)
        self.compile_all(graphs, models)
        self.spmm_exe = None
        if "agg" in a.systems:
            exe = os.path.join(self.build, "spmm")
            p = subprocess.run(spmm_cmd(self.gnncc, exe), capture_output=True, text=True)
            if p.returncode == 0:
                self.spmm_exe = exe
            else:
                self.log("building spmm failed:\n" + p.stderr)
        gpu_systems = [s for s in a.systems if s.startswith("gnncc") or s == "agg"]
        pyg_systems = [s for s in a.systems if s.startswith("pyg-")]
        ready = []
        for g in graphs:
            if self.wait_graph(g):
                ready.append(g)
            else:
                self.log(f"{g['name']}: skipped: {g['missing']}")
                self.skip_cells(g, gpu_systems + pyg_systems, models, g["missing"])
        nogpu = "no GPU (nvidia-smi -L found none)"
        for i, g in enumerate(ready):
            if self.gpu:
                self.run_spmm(g, i == 0)
                self.run_gnncc(g)
                if self.trains(g):
                    self.run_gnncc(g, train=True)
            else:
                self.skip_cells(g, gpu_systems, models, nogpu)
        trained = [g for g in ready if self.trains(g)]
        if self.a.pyg_device == "cuda" and not self.gpu:
            for g in ready:
                self.skip_cells(g, pyg_systems, models, nogpu)
        else:
            if "infer" in a.tasks:
                for g, mode in pyg_order(ready):
                    self.run_pyg(g, mode, models)
            for g, mode in pyg_order(trained):
                self.run_pyg(g, mode, models, train=True)
        meta["elapsed_s"] = round(time.time() - self.t0, 1)
        return self.write(meta)

    def write(self, meta):
        name = re.sub(r"[^A-Za-z0-9._-]+", "-", meta["gpu"]).strip("-") or "gpu"
        os.makedirs(self.a.results_dir, exist_ok=True)
        base = os.path.join(self.a.results_dir, name)
        with open(base + ".json", "w") as f:
            json.dump({"meta": meta, "records": self.records}, f, indent=1)
            f.write("\n")
        self.log(f"raw results: {base}.json")
        p = subprocess.run([self.a.python, os.path.join(HERE, "report.py"), base + ".json",
                            "--md", base + ".md", "--png", base + ".png"])
        if self.a.copy_to:
            os.makedirs(self.a.copy_to, exist_ok=True)
            for path in [base + ".md", base + ".json", base + ".png",
                         os.path.join(self.build, "log.txt")]:
                if os.path.exists(path):
                    shutil.copy(path, os.path.join(self.a.copy_to, "bench-" + os.path.basename(path)
                                                   if path.endswith("log.txt") else
                                                   os.path.basename(path)))
        ok = [r for r in self.records if r.get("status") == "ok" and
              r.get("system", "").startswith("gnncc")]
        if p.returncode != 0:
            return p.returncode
        if not ok:
            self.log("no gnncc configuration was measured")
            return 1
        return 0


def pyg_order(ready):
    """(graph, mode) in the order PyG runs: what tells most first -- eager
    everywhere; torch.compile's default mode and max-autotune on Cora and
    arxiv (or the first graph); dynamic everywhere; then the other modes
    on the rest"""
    first = [g for g in ready if g["name"] in COMPILE_FIRST] or ready[:1]
    rest = [g for g in ready if g not in first]
    order = [(g, "eager") for g in ready]
    order += [(g, m) for g in first for m in ("compile-static", "max-autotune")]
    order += [(g, "compile-dynamic") for g in ready]
    order += [(g, m) for m in ("compile-static", "max-autotune") for g in rest]
    return order


def csv_list(allowed):
    def parse(s):
        items = [x for x in s.split(",") if x]
        bad = [x for x in items if x not in allowed]
        if bad:
            raise argparse.ArgumentTypeError(f"unknown {', '.join(bad)} (choose from "
                                             f"{', '.join(allowed)})")
        return items
    return parse


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    sub = ap.add_subparsers(dest="cmd", required=True)
    r = sub.add_parser("run", help="the benchmark (bench/run.sh)")
    r.add_argument("--quick", action="store_true", help="Cora only: a smoke test")
    r.add_argument("--graphs", type=csv_list([g["name"] for g in GRAPHS]))
    r.add_argument("--models", type=csv_list(MODELS), default=MODELS)
    r.add_argument("--systems", type=csv_list(SYSTEMS + MORE_SYSTEMS), default=SYSTEMS)
    r.add_argument("--tasks", type=csv_list(TASKS), default=TASKS,
                   help="inference rows, training rows (default both)")
    r.add_argument("--train-graphs", type=csv_list([g["name"] for g in GRAPHS]),
                   default=TRAIN_GRAPHS, help="the graphs of the training rows")
    r.add_argument("--budget-s", type=float, default=570)
    r.add_argument("--gen-timeout-s", type=float, default=240)
    r.add_argument("--autotune-max-edges", type=float, default=3e6)
    r.add_argument("--d2d-mib", type=int, default=1024)
    r.add_argument("--seed", type=int, default=1)
    r.add_argument("--results-dir", default=os.path.join(HERE, "results"))
    r.add_argument("--build-dir", default=os.path.join(ROOT, "build", "bench"))
    r.add_argument("--python", default=sys.executable, help="the Python with torch and PyG")
    r.add_argument("--pyg-device", default="cuda")
    r.add_argument("--copy-to", metavar="DIR", help="also copy the results and the log here")
    r.add_argument("--arch", help="gnncc --arch for the models (default: native with a GPU, "
                   "else gnncc's default)")

    m = sub.add_parser("model", help="print a model file from bench/models/KIND.gnn.in")
    m.add_argument("kind", choices=MODELS + ["agg"])
    m.add_argument("--in-features", type=int, required=True)
    m.add_argument("--classes", type=int)
    m.add_argument("--hidden", type=int)
    m.add_argument("--heads", type=int)
    m.add_argument("--name", required=True)
    m.add_argument("--train", action="store_true",
                   help="with the benchmark's train item (bench/training.py)")
    m.add_argument("--bf16-io", action="store_true",
                   help="features and outputs in bfloat16 (the gnncc-BI configuration)")
    m.add_argument("-o", dest="out")

    h = sub.add_parser("build-harness", help="link gnnbench.cu with model objects")
    h.add_argument("-o", dest="out", required=True)
    h.add_argument("--object", action="append", required=True, metavar="NAME=OBJ")
    h.add_argument("--gnncc", default=os.path.join(ROOT, "build", "gnncc"))
    h.add_argument("--werror", action="store_true")
    h.add_argument("--emulate", action="store_true",
                   help="for objects built with gnncc --emulate: the emulated device")
    h.add_argument("-v", action="store_true", help="print the command")

    s = sub.add_parser("build-spmm", help="build spmm.cu (cuSPARSE, device copy)")
    s.add_argument("-o", dest="out", required=True)
    s.add_argument("--gnncc", default=os.path.join(ROOT, "build", "gnncc"))
    s.add_argument("--werror", action="store_true")
    s.add_argument("-v", action="store_true", help="print the command")
    a = ap.parse_args(argv)

    if a.cmd == "model":
        try:
            text = instantiate(a.kind, a.in_features, a.classes, a.name, hidden=a.hidden,
                               heads=a.heads)
        except ValueError as e:
            ap.error(str(e))
        if a.train:
            text += train_item(a.name)
        if a.bf16_io:
            text = bf16_io(text)
        if a.out:
            with open(a.out, "w") as f:
                f.write(text)
        else:
            sys.stdout.write(text)
        return 0
    if a.cmd == "build-harness":
        objs = []
        for o in a.object:
            name, sep, path = o.partition("=")
            if not sep or not re.fullmatch(r"[A-Za-z_]\w*", name):
                ap.error(f"--object NAME=OBJ, not {o!r}")
            objs.append((name, path))
        rc, out = build_harness(a.gnncc, a.out, objs, a.werror, a.v, a.emulate)
        sys.stderr.write(out)
        return rc
    if a.cmd == "build-spmm":
        cmd = spmm_cmd(a.gnncc, a.out, a.werror)
        if a.v:
            print(shlex.join(cmd), file=sys.stderr)
        return subprocess.run(cmd).returncode
    if a.graphs is None:
        a.graphs = ["cora"] if a.quick else [g["name"] for g in GRAPHS]
    return Bench(a).run()


if __name__ == "__main__":
    sys.exit(main())
