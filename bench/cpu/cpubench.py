#!/usr/bin/env python3
"""gnncc's cpu target against PyG eager and torch.compile on this machine's CPU.

usage: cpubench.py run [--quick] [--graphs a,b] [--models a,b] [--systems a,b]
                       [--tasks infer,train,hetero] [--train-graphs cora]
                       [--hetero-scale 0.25] [--hetero-models sage,gat,transformer]
                       [--threads 1,2] [--budget-s 870] [--results-dir DIR]
       cpubench.py weights --out DIR SPEC...   (internal: the shared random weights)
       cpubench.py worker --threads T          (internal: the torch side)
       cpubench.py quiet                       (the quiet-machine check alone)

`run` (what bench/cpu/run.sh calls) does, within one time budget counted
from when run.sh started (BENCH_T0):
  1. a quiet-machine check (/proc/stat over 2 s, /proc/loadavg, the busiest
     other processes), again at the end;
  2. graphs: Cora and CiteSeer from data/ (x normalized as PyG's
     NormalizeFeatures, by pyg_bench.load_graph), PubMed- and arxiv-shaped
     ones from build/gnngen (bench.py's code, cached in build/bench/graphs/);
     each as float32 x.npy and int64 edge_index.npy in build/bench/cpu/graphs/,
     the very arrays both sides read;
  3. weights: per graph and model one safetensors file of seeded random
     values under PyG's state_dict names (`weights`, one process with torch);
  4. gnncc: every model at -O2 and -O0, `gnncc --target=cpu -fopenmp`, one
     at a time, the command's wall time (cc included) being the compile time;
     per graph one cpubench executable (cpubench.c) linking its models;
  5. the cells, one at a time, in order of importance: on each graph PyG
     eager (the reference) and gnncc -O2 at every thread count; the
     torch.compile(dynamic=True) groups; dynamic=False; last gnncc -O0
     (seconds a call on PubMed, 15-60 s on arxiv: as far as the budget
     goes, one thread first).  A dynamic
     group is one (model, thread count) on every graph in turn in one
     child (the mode exists to serve many shapes with one compile): the
     first graph's compile time is the cold compile, a later graph's what
     its shapes recompiled, its peak RSS the child's running peak then.  A gnncc cell is one cpubench
     process; a torch cell is a child forked by the worker of its thread
     count (one `worker` process per thread count, started at the beginning:
     OMP_NUM_THREADS set, torch imported once, Inductor warmed up on a toy),
     so every cell is a process of its own: its peak RSS is its ru_maxrss
     (wait4), and nothing (threads, Inductor state) carries over between
     cells.  Every cell has a timeout; what the budget no longer allows is
     "skipped: time budget";
  6. each output compared with PyG eager's (max |a - b| within 1e-4 of
     max |eager|), then bench/results/cpu-<machine>.{json,md,png}
     (cpureport.py).  Exit status 1 if an output disagrees or nothing ran.

Timing (the same rule on both sides): warm-up calls (gnncc 3, eager 2,
torch.compile 3: GCNConv's cache fills on the first call and Dynamo
recompiles on the second), fewer when one call takes over a quarter of
--cap-s; then at least --min-runs timed calls, more (up to --max-runs)
while they fit in --target-s, but if --min-runs calls would take longer
than --cap-s, as many as fit in it and at least --floor-runs, and if those
would take longer than --slow-cap-s, as many as fit in that, at least 1
(the record's "runs" says how many; the report marks and lists such cells).
The weights are kept between runs (a stamp of specs, seed and code).  The median is
reported.  torch.compile's compile time: the warm-up calls' time less as
many steady calls, with a fresh TORCHINDUCTOR_CACHE_DIR per cell.

Training rows (--tasks train, on the --train-graphs, Cora by default): one
training epoch, full graph, as PyG's examples train:
    model.train(); optimizer.zero_grad(); out = model(x, edge_index)
    loss = F.nll_loss(out[train_mask], y[train_mask]); loss.backward()
    optimizer.step()
with torch.optim.Adam(model.parameters(), lr=0.01, weight_decay=5e-4),
dropout active; PyG eager, and torch.compile(model, dynamic=True / False)
(the model compiled, the loss and the optimizer step eager, as PyG's own
benchmark does).  Same warm-up and run-count rules and the same
statistics as inference (the warm-up epochs train too; the parameters
keep changing, the work per epoch does not).  Labels and the training
mask: the graph's own y.npy and train_mask.npy (Cora, CiteSeer: the
public split); a gnngen graph has none, so it gets seeded random labels
and a random 10% training mask (written beside its x.npy).  No output is
compared: dropout draws differ between systems.

The JSON records (one per cell; cpureport.py reads them).  Every record:
  system   "gnncc-O2", "gnncc-bf16" (-O2 --precision=bf16), "gnncc-O0",
           "pyg-eager", "pyg-compile-dynamic", "pyg-compile-static"
  model, graph, threads, N, E
  status   "ok", "skipped" (+ "reason") or "error" (+ "message")
  task     "train" for a training-epoch row; absent (or "infer") for an
           inference row (the records written before training rows existed
           have no task)
and when ok: median_ms, min_ms, mean_ms (the timed calls: one forward, or
one training epoch), first_ms (the first warm-up call), runs, warmup,
maxrss_kb; torch: torch_threads, compile_s (torch.compile); inference:
out (.npy), agree, max_abs_diff, ref_max_abs, rel_diff, tolerance (the
bound agree used: 1e-4 of max |eager|, gnncc-bf16 1.6e-2); training:
loss_first (the first warm-up epoch's loss), loss_last (the last timed
epoch's), optimizer ("adam lr=0.01 weight_decay=0.0005").
gnncc's training rows (system "gnncc-O2", task "train"): per training
graph and model one more object, NAME_O2T (e.g. GCN_O2T: no clash with
the inference objects), from the instantiated template plus a train item
with exactly the PyG cells' settings:
    train GCN_O2T(out, y: i64[N], mask: bool[N]) {
      optimizer = "adam"; lr = 0.01; weight_decay = 5e-4
      return nll_loss(out, y, mask) }
linked into the graph's cpubench executable and run as `cpubench --train
--y=y.npy --mask=train_mask.npy --seed=0` (the files PyG's cells read):
the weights start from gnn_prog_init(0) (the model's declared init, PyG's
scheme), not from the shared weights file; one epoch is forward with
dropout, nll over the mask, backward, Adam in place.  Records as above:
median_ms/min_ms/mean_ms/first_ms/runs/warmup per epoch, compile_s (the
gnncc command's wall time), loss_first/loss_last, optimizer, seed.

Heterogeneous rows (--tasks hetero, or hetero-infer / hetero-train):
bench/cpu/hetero.py's, after the others and merged into their results,
on gnngen's rel-shop (--hetero-scale, --hetero-models); their cells go
through this file's worker and cpubench.c (--input, --rel), their
records have task "hetero-infer" or "hetero-train", and one more torch
system, "pyg-compile-conv" (each conv compiled on its own).

--merge: this run's records go into the existing results file instead of
replacing it: a record of the same (system, model, graph, threads, task)
is replaced, every other one kept, and so is the file's meta (its date,
versions, quiet checks: the run that made it); this run's meta is added
under meta["merged_runs"] (cpureport.py names each in the header).  So
`--tasks train --merge` adds training rows to a full inference run.
"""
import argparse
import json
import os
import platform
import re
import select
import shlex
import shutil
import signal
import subprocess
import sys
import time
import zlib
from types import SimpleNamespace

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
BENCH = os.path.dirname(HERE)
ROOT = os.path.dirname(BENCH)
sys.path.insert(0, BENCH)

import bench as B            # noqa: E402  (bench/bench.py: graphs, widths, templates)
from pyg_bench import load_graph   # noqa: E402  (NormalizeFeatures as gnnbench does it)
import hetero                # noqa: E402  (the heterogeneous rows)
from training import (TRAIN_LR, TRAIN_SEED, TRAIN_WD, label_files,  # noqa: E402
                      torch_epochs, train_item)

SYSTEMS = ["gnncc-O2", "gnncc-bf16", "gnncc-O0", "pyg-eager", "pyg-compile-dynamic",
           "pyg-compile-static", "pyg-compile-conv"]
# gnncc's objects per system suffix: its options (bf16: -O2 with bfloat16
# storage, docs/precision.md)
GNNCC_OPTS = {"O2": ["-O2"], "O0": ["-O0"], "bf16": ["-O2", "--precision=bf16"]}
TORCH_MODES = {"pyg-eager": "eager", "pyg-compile-dynamic": "dynamic",
               "pyg-compile-static": "static",
               "pyg-compile-conv": "conv"}   # the heterogeneous rows' (hetero.py)
GRAPHS = [g for g in B.GRAPHS if g["name"] in ("cora", "citeseer", "pubmed", "arxiv")]
# per-cell caps in seconds (the budget may cut them shorter)
TIMEOUT = {"gnncc": 60, "pyg-eager": 90, "pyg-compile-dynamic": 180,
           "pyg-compile-static": 180}
TOL = 1e-4
# per system: bf16 storage is compared at docs/precision.md's tolerance
# against float32 (2^-6 of the largest |value|: bfloat16's 8 significant
# bits, rounded at every stored value)
TOLS = {"gnncc-bf16": 1.6e-2}
TASKS = ["infer", "train", "hetero", "hetero-infer", "hetero-train"]
# rel-shop's scale for the heterogeneous rows and their share of the
# default budget: see bench/README.md, "Heterogeneous rows"
HETERO_SCALE = 0.25
HETERO_BUDGET_S = 3600
DEFAULT_TASKS = ["infer", "train"]   # hetero: the heterogeneous rows (hetero.py), on request
# the training epoch and its settings: bench/training.py (the GPU benchmark's too)


def train_name(m):
    """gnncc's training object's model: GCN_O2T beside the inference GCN_O2"""
    return B.model_name(m, "O2") + "T"


# --- small helpers -------------------------------------------------------------

def emit(rec, f=sys.stdout):
    f.write(json.dumps(rec) + "\n")
    f.flush()


def wait_child(pid, timeout, fd=None):
    """Waits for child pid (its own process group) at most timeout seconds,
    reading fd (a pipe it writes its result to) meanwhile.  Kills the group
    on timeout, and always afterwards (helpers it left behind).  Returns
    (exit status or None if killed, rusage or None, bytes read from fd)."""
    end = time.time() + max(timeout, 0.1)
    data, status, ru = b"", None, None
    while True:
        if fd is not None:
            r, _, _ = select.select([fd], [], [], 0.05)
            if r:
                chunk = os.read(fd, 1 << 16)
                if chunk:
                    data += chunk
                    continue
                os.close(fd)
                fd = None
        else:
            time.sleep(0.02)
        got, st, rusage = os.wait4(pid, os.WNOHANG)
        if got == pid:
            status, ru = st, rusage
            break
        if time.time() > end:
            _killpg(pid)
            _, st, ru = os.wait4(pid, 0)
            status = None
            break
    if fd is not None:   # the rest of what it wrote
        while True:
            r, _, _ = select.select([fd], [], [], 0)
            chunk = os.read(fd, 1 << 16) if r else b""
            if not chunk:
                break
            data += chunk
        os.close(fd)
    _killpg(pid)
    return status, ru, data


def _killpg(pgid):
    try:
        os.killpg(pgid, signal.SIGKILL)
    except (ProcessLookupError, PermissionError):
        pass


def exit_text(status):
    if status is None:
        return "killed"
    if os.WIFSIGNALED(status):
        return f"killed by signal {os.WTERMSIG(status)}"
    return f"exit status {os.waitstatus_to_exitcode(status)}"


def stamp_fresh(stamp, want):
    """whether the stamp file (JSON) says its folder was made from want:
    a missing or unreadable stamp is not fresh"""
    try:
        with open(stamp) as f:
            return json.load(f) == want
    except (OSError, ValueError):
        return False


def run_counts(est, a):
    """timed calls for a call of est seconds (the rule in the docstring)"""
    runs = a.min_runs
    if est > 0:
        runs = int(min(a.max_runs, max(a.min_runs, a.target_s / est)))
        if est * a.min_runs > a.cap_s:
            runs = max(a.floor_runs, int(a.cap_s / est))
            if est * runs > a.slow_cap_s:
                runs = max(1, int(a.slow_cap_s / est))
    return runs


# --- safetensors (the package when there, else by hand: the format is simple) --

ST_DTYPES = {np.dtype("float32"): "F32", np.dtype("float64"): "F64",
             np.dtype("int64"): "I64", np.dtype("int32"): "I32"}


def st_write(path, tensors):
    """tensors: name -> numpy array.  An 8-byte little-endian header length,
    the JSON header padded with spaces to a multiple of 8, the data."""
    try:
        from safetensors.numpy import save_file
        save_file({k: np.asarray(v, order="C") for k, v in tensors.items()}, path)
        return
    except ImportError:
        pass
    header, blobs, off = {}, [], 0
    # as the reference writer: descending alignment, then name (so every
    # tensor's data is aligned to its element size, which gnncc checks)
    for name in sorted(tensors, key=lambda k: (-tensors[k].dtype.itemsize, k)):
        a = np.asarray(tensors[name], order="C")   # (ascontiguousarray makes 0-d 1-d)
        b = a.astype(a.dtype.newbyteorder("<"), copy=False).tobytes()
        header[name] = {"dtype": ST_DTYPES[a.dtype], "shape": list(a.shape),
                        "data_offsets": [off, off + len(b)]}
        blobs.append(b)
        off += len(b)
    h = json.dumps(header, separators=(",", ":")).encode()
    h += b" " * (-len(h) % 8)
    with open(path + ".tmp", "wb") as f:
        f.write(len(h).to_bytes(8, "little"))
        f.write(h)
        for b in blobs:
            f.write(b)
    os.replace(path + ".tmp", path)


def st_read(path):
    try:
        from safetensors.numpy import load_file
        return load_file(path)
    except ImportError:
        pass
    with open(path, "rb") as f:
        raw = f.read()
    n = int.from_bytes(raw[:8], "little")
    header = json.loads(raw[8:8 + n])
    names = {v: k for k, v in ST_DTYPES.items()}
    out = {}
    for name, t in header.items():
        if name == "__metadata__":
            continue
        a, b = t["data_offsets"]
        out[name] = np.frombuffer(raw[8 + n + a:8 + n + b], dtype=names[t["dtype"]].newbyteorder(
            "<")).reshape(t["shape"]).astype(names[t["dtype"]])
    return out


def random_weights(state, seed):
    """Seeded values for a state dict (name -> numpy array), seeded by name,
    on the scales gnnbench.cu uses: U(+-1/sqrt(fan_in)) for matrices,
    BatchNorm weights and running variances in [0.5, 1.5), integer counters
    0, anything else (biases, running means, GIN's eps) U(+-0.1)."""
    out = {}
    for name, v in state.items():
        rng = np.random.default_rng([seed, zlib.crc32(name.encode())])
        if v.dtype.kind != "f":
            out[name] = np.zeros(v.shape, dtype=v.dtype)
            continue
        lo, hi = -0.1, 0.1
        if name.endswith("running_var") or re.search(r"norms\.\d+\.(module\.)?weight$", name):
            lo, hi = 0.5, 1.5
        elif v.ndim >= 2:
            hi = 1.0 / np.sqrt(max(v.shape[-1], 1))
            lo = -hi
        out[name] = rng.uniform(lo, hi, size=v.shape).astype(v.dtype)
    return out


def model_spec(g, kind):
    w = B.WIDTHS[g["widths"]][kind]
    return {"kind": kind, "hidden": w["hidden"], "heads": w.get("heads", 8)}


# --- `weights`: one file per graph and model, from PyG's state_dict names ------

def cmd_weights(a):
    import torch
    import pyg_models
    torch.manual_seed(a.seed)
    for s in a.spec:   # NAME:KIND:FIN:HIDDEN:HEADS:CLASSES
        name, kind, fin, hidden, heads, classes = s.split(":")
        m = pyg_models.make(kind, int(fin), int(hidden), int(classes), heads=int(heads))
        state = {k: v.detach().numpy() for k, v in m.state_dict().items()}
        st_write(os.path.join(a.out, name + ".safetensors"), random_weights(state, a.seed))
    return 0


# --- `worker`: the torch side, one process per thread count --------------------

def torch_cell(c, g):
    """Runs in a forked child: one system and model on graph g (a dict of
    c["graphs"]).  Returns its record."""
    import torch
    import pyg_models
    if c.get("task", "").startswith("hetero"):
        import hetero
        return hetero.torch_cell(c, g)
    if c.get("task") == "train":
        return torch_train_cell(c, g)
    mode = TORCH_MODES[c["system"]]
    torch.set_num_threads(c["threads"])
    torch.set_float32_matmul_precision("highest")
    x = torch.from_numpy(np.load(os.path.join(g["dir"], "x.npy")))
    ei = torch.from_numpy(np.load(os.path.join(g["dir"], "edge_index.npy")))
    m = pyg_models.make(c["kind"], x.shape[1], g["hidden"], g["classes"], heads=g["heads"])
    m.load_state_dict({k: torch.from_numpy(v) for k, v in st_read(g["weights"]).items()},
                      strict=True)
    m.eval()
    fn = m if mode == "eager" else torch.compile(m, dynamic=mode == "dynamic")
    return time_forwards(torch, fn, (x, ei), mode, c["timing"], g["out"])


def time_forwards(torch, fn, args, mode, timing, out_path):
    """the inference cell's timing (the docstring's rule) of fn(*args)
    under torch mode MODE (eager: fn runs as it is); the last output to
    out_path; the record's fields"""
    a = SimpleNamespace(**timing)
    nwarm = 2 if mode == "eager" else 3
    least = 1 if mode == "eager" else 2   # compile: the second call may recompile
    warm = []
    with torch.inference_mode():
        for i in range(nwarm):
            t0 = time.perf_counter()
            out = fn(*args)
            warm.append(time.perf_counter() - t0)
            if i + 1 >= least and warm[-1] * 4 > a.cap_s:
                break
        runs = run_counts(warm[-1], a)
        t = []
        for _ in range(runs):
            t0 = time.perf_counter()
            out = fn(*args)
            t.append((time.perf_counter() - t0) * 1e3)
    np.save(out_path, out.numpy())
    med = float(np.median(t))
    rec = {"status": "ok", "median_ms": med, "min_ms": float(np.min(t)),
           "mean_ms": float(np.mean(t)), "first_ms": warm[0] * 1e3, "runs": runs,
           "warmup": len(warm), "torch_threads": torch.get_num_threads()}
    if mode != "eager":
        # the first graph's: the cold compile; a later graph's (a dynamic
        # group): what its shapes made Dynamo and Inductor recompile
        rec["compile_s"] = max(0.0, sum(warm) - len(warm) * med / 1e3)
    return rec


def torch_train_cell(c, g):
    """torch_cell's training epoch (the docstring's "Training rows")."""
    import torch
    import pyg_models
    mode = TORCH_MODES[c["system"]]
    torch.set_num_threads(c["threads"])
    torch.set_float32_matmul_precision("highest")
    torch.manual_seed(TRAIN_SEED)
    x = torch.from_numpy(np.load(os.path.join(g["dir"], "x.npy")))
    ei = torch.from_numpy(np.load(os.path.join(g["dir"], "edge_index.npy")))
    y = torch.from_numpy(np.load(os.path.join(g["dir"], "y.npy")).astype(np.int64))
    mask = torch.from_numpy(np.load(os.path.join(g["dir"], "train_mask.npy")).astype(bool))
    m = pyg_models.make(c["kind"], x.shape[1], g["hidden"], g["classes"], heads=g["heads"])
    m.load_state_dict({k: torch.from_numpy(v) for k, v in st_read(g["weights"]).items()},
                      strict=True)
    a = SimpleNamespace(**c["timing"])
    rec = torch_epochs(torch, m, x, ei, y, mask, mode, a.cap_s, lambda est: run_counts(est, a))
    rec["torch_threads"] = torch.get_num_threads()
    return rec


def torch_child(c, wr):
    """The forked child: c["graphs"] one after another (one graph, or a
    torch.compile(dynamic=True) group: every graph through the one process,
    as that mode is meant to serve many shapes), one JSON line per graph
    down wr as each ends, with the process's running peak RSS then."""
    import resource
    if TORCH_MODES[c["system"]] != "eager":
        shutil.rmtree(c["cache"], ignore_errors=True)
        os.environ["TORCHINDUCTOR_CACHE_DIR"] = c["cache"]
    for g in c["graphs"]:
        try:
            rec = torch_cell(c, g)
        except Exception as e:  # noqa: BLE001 -- reported as the cell's error
            msg = f"{type(e).__name__}: {e}".strip().splitlines()
            rec = {"status": "error", "message": msg[0][:300] if msg else "?"}
        rec["maxrss_kb"] = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
        os.write(wr, (json.dumps(rec) + "\n").encode())


def wait_lines(pid, fd, n, timeout, end):
    """wait_child for a child that writes n JSON lines: each line gives the
    next one `timeout` seconds more (never past `end`).  Returns (exit
    status or None if killed, rusage or None, the records read)."""
    buf, recs, status, ru = b"", [], None, None
    deadline = min(time.time() + max(timeout, 0.1), end)
    while True:
        r, _, _ = select.select([fd], [], [], 0.05) if fd is not None else ([], [], [])
        if r:
            chunk = os.read(fd, 1 << 16)
            if chunk:
                buf += chunk
                while b"\n" in buf:
                    ln, buf = buf.split(b"\n", 1)
                    try:
                        recs.append(json.loads(ln))
                    except ValueError:
                        recs.append(None)
                    deadline = min(time.time() + max(timeout, 0.1), end)
                continue
            os.close(fd)
            fd = None
        elif fd is None:
            time.sleep(0.02)
        got, st, rusage = os.wait4(pid, os.WNOHANG)
        if got == pid:
            status, ru = st, rusage
            break
        if time.time() > deadline and len(recs) < n:
            _killpg(pid)
            _, st, ru = os.wait4(pid, 0)
            status = None
            break
    if fd is not None:
        os.close(fd)
    _killpg(pid)
    return status, ru, recs


def prewarm(torch, cache):
    """torch.compile once on a toy function, single-threaded (no OpenMP
    pool: the children are forked from this process) with its own cache
    dir: Inductor's one-time set-up (its modules, the C++ toolchain and ISA
    checks, ~15 s here) is then done before any cell, so a cell's compile
    time is its model's alone.  The models still compile from a cold cache."""
    old = torch.get_num_threads()
    torch.set_num_threads(1)
    shutil.rmtree(cache, ignore_errors=True)
    os.environ["TORCHINDUCTOR_CACHE_DIR"] = cache
    for dyn in (False, True):
        f = torch.compile(lambda a, b, i: torch.zeros_like(a).index_add_(
            0, i, (a @ b).relu()).log_softmax(1), dynamic=dyn)
        with torch.inference_mode():
            f(torch.ones(8, 4), torch.ones(4, 4), torch.zeros(8, dtype=torch.int64))
    torch._dynamo.reset()
    torch.set_num_threads(old)


def cmd_worker(a):
    """Reads cells (JSON lines) on stdin; runs each in a forked child of its
    own process group under the cell's timeout; answers one JSON line each,
    with the child's ru_maxrss.  The parent runs no torch op (a fork after
    an OpenMP parallel region is unsafe with libgomp), only imports."""
    t0 = time.time()
    import torch   # noqa: F401 -- imported once, inherited by every child
    import torch_geometric  # noqa: F401
    import pyg_models  # noqa: F401
    import torch._inductor.config  # noqa: F401 -- the compiler's modules too
    t1 = time.time()
    if a.prewarm:
        prewarm(torch, a.prewarm)
    emit({"event": "ready", "import_s": round(t1 - t0, 2),
          "prewarm_s": round(time.time() - t1, 2), "torch": torch.__version__,
          "pyg": torch_geometric.__version__})
    for line in sys.stdin:
        c = json.loads(line)
        rd, wr = os.pipe()
        pid = os.fork()
        if pid == 0:   # the child
            os.close(rd)
            os.setpgid(0, 0)
            try:
                torch_child(c, wr)
            finally:
                os._exit(0)
        try:
            os.setpgid(pid, pid)
        except OSError:
            pass
        os.close(wr)
        n = len(c["graphs"])
        status, ru, recs = wait_lines(pid, rd, n, c["timeout"], time.time() + c["left_s"])
        out = []
        for i in range(n):
            rec = recs[i] if i < len(recs) else None
            if rec is None and status is None:
                rec = {"status": "skipped", "reason": f"timeout ({c['timeout']:.0f} s)"}
            elif rec is None:
                rec = {"status": "error", "message": f"crashed ({exit_text(status)})"}
            elif n == 1 and ru is not None:   # a cell of its own: its process's peak
                rec["maxrss_kb"] = ru.ru_maxrss
            out.append(rec)
        emit({"records": out})
    return 0


# --- the quiet-machine check ---------------------------------------------------

def _cpu_times():
    with open("/proc/stat") as f:
        v = [int(x) for x in f.readline().split()[1:]]
    idle = v[3] + (v[4] if len(v) > 4 else 0)
    return sum(v[:8]), idle


def _proc_ticks():
    out = {}
    for p in os.listdir("/proc"):
        if not p.isdigit():
            continue
        try:
            with open(f"/proc/{p}/stat") as f:
                s = f.read()
            name = s[s.index("(") + 1:s.rindex(")")]
            rest = s[s.rindex(")") + 2:].split()
            out[int(p)] = (name, int(rest[11]) + int(rest[12]), int(rest[1]))
        except (OSError, ValueError, IndexError):
            continue
    return out


def quiet_check(seconds=2.0):
    """CPU use of the whole machine over `seconds`, the load average and the
    busiest processes other than this one; quiet: under 10 % busy and no
    other process above 10 % of a core."""
    hz = os.sysconf("SC_CLK_TCK")
    ncpu = os.cpu_count() or 1
    tot0, idle0 = _cpu_times()
    p0 = _proc_ticks()
    t0 = time.time()
    time.sleep(seconds)
    tot1, idle1 = _cpu_times()
    p1 = _proc_ticks()
    dt = time.time() - t0
    busy = 100.0 * (1 - (idle1 - idle0) / max(tot1 - tot0, 1))
    me = os.getpid()
    top = []
    for pid, (name, ticks, ppid) in p1.items():
        if pid == me or pid not in p0:
            continue
        pct = 100.0 * (ticks - p0[pid][1]) / hz / dt
        if pct >= 1:
            top.append({"pid": pid, "name": name, "cpu_pct": round(pct, 1)})
    top.sort(key=lambda r: -r["cpu_pct"])
    with open("/proc/loadavg") as f:
        load = [float(x) for x in f.read().split()[:3]]
    quiet = busy < 10 and not any(r["cpu_pct"] > 10 for r in top)
    details = f"{busy:.0f}% of {ncpu} CPUs busy over {seconds:.0f} s, load {load[0]:.2f} " \
              f"{load[1]:.2f} {load[2]:.2f}"
    if top:
        details += "; busiest: " + ", ".join(f"{r['name']} ({r['pid']}) {r['cpu_pct']:.0f}%"
                                             for r in top[:5])
    return {"quiet": quiet, "busy_pct": round(busy, 1), "loadavg": load, "top": top[:8],
            "details": details}


# --- machine facts ---------------------------------------------------------------

def cpu_info():
    model, flags, fam, mod = "?", set(), "?", "?"
    try:
        with open("/proc/cpuinfo") as f:
            for line in f:
                k, _, v = line.partition(":")
                k, v = k.strip(), v.strip()
                if k == "model name" and model == "?":
                    model = v
                elif k == "flags" and not flags:
                    flags = set(v.split())
                elif k == "cpu family" and fam == "?":
                    fam = v
                elif k == "model" and mod == "?":
                    mod = v
    except OSError:
        pass
    isa = [f for f in ["sse4_2", "avx", "avx2", "fma", "avx512f", "avx512bw", "avx512vl",
                       "avx512_vnni", "avx512_bf16", "avx512_fp16", "amx_tile", "amx_bf16",
                       "amx_int8", "asimd", "sve"] if f in flags]
    cc = subprocess.run(["cc", "--version"], capture_output=True, text=True).stdout
    try:
        sha = subprocess.run(["git", "-C", ROOT, "rev-parse", "--short", "HEAD"],
                             capture_output=True, text=True).stdout.strip()
        dirty = subprocess.run(["git", "-C", ROOT, "status", "--porcelain", "--untracked-files=no",
                                "--", "codegen", "runtime", "driver", "passes", "frontend", "ir",
                                "layers"], capture_output=True, text=True).stdout.strip()
    except OSError:
        sha, dirty = "?", ""
    slug = re.sub(r"\((R|TM)\)|\bCPU\b|@.*$|\bProcessor\b", " ", model, flags=re.I)
    slug = re.sub(r"[^a-z0-9]+", "-", slug.lower()).strip("-") or "cpu"
    return {"cpu": model, "cpu_family": fam, "cpu_model": mod, "isa": isa,
            "cores": os.cpu_count(), "cc": (cc.splitlines() or ["?"])[0],
            "gnncc_commit": sha + (" (compiler sources modified)" if dirty else ""),
            "machine": f"{slug}-{os.cpu_count()}c", "python": platform.python_version(),
            "numpy": np.__version__, "kernel": platform.release()}


# --- the run ---------------------------------------------------------------------

class Run:
    def __init__(self, a):
        self.a = a
        self.t0 = float(os.environ.get("BENCH_T0") or time.time())
        self.deadline = self.t0 + a.budget_s
        self.build = os.path.abspath(a.build_dir)
        os.makedirs(self.build, exist_ok=True)
        self.log = B.Log(os.path.join(self.build, "log.txt"), self.t0)
        self.records = []
        self.workers = {}
        self.gnncc = os.path.abspath(a.gnncc)
        self.timing = {k: getattr(a, k) for k in
                       ("min_runs", "max_runs", "target_s", "cap_s", "floor_runs",
                        "slow_cap_s")}
        self.phase_s = {}

    def left(self):
        return self.deadline - time.time()

    def gnncc_cpu(self):
        """gnncc's --cpu for the models' objects (--gnncc-cpu), if given"""
        cpu = getattr(self.a, "gnncc_cpu", None)
        return [f"--cpu={cpu}"] if cpu else []

    def phase(self, name, t):
        self.phase_s[name] = round(self.phase_s.get(name, 0) + time.time() - t, 1)

    # graphs
    def graphs(self):
        t = time.time()
        gs = [dict(g) for g in GRAPHS if g["name"] in self.a.graphs]
        # bench.py's generator and cache (build/bench/graphs), through a stand-in
        shim = SimpleNamespace(a=SimpleNamespace(seed=self.a.graph_seed, gen_timeout_s=240),
                               build=os.path.join(ROOT, "build", "bench"),
                               gnngen=os.path.join(ROOT, "build", "gnngen"), log=self.log,
                               left=self.left)
        B.Bench.start_graphs(shim, gs)
        ready = []
        for g in gs:
            if not B.Bench.wait_graph(shim, g):
                self.log(f"{g['name']}: {g['missing']}")
                for s in self.a.systems:
                    for m in self.a.models:
                        self.add(s, m, g, None, status="error", message=g["missing"])
                continue
            d = os.path.join(self.build, "graphs", g["name"])
            os.makedirs(d, exist_ok=True)
            stamp = os.path.join(d, "stamp.json")
            src = {f: os.stat(os.path.join(g["path"], f + ".npy")).st_mtime
                   for f in ("x", "edge_index")}
            if not stamp_fresh(stamp, src):
                ei, x = load_graph(g["path"])
                np.save(os.path.join(d, "x.npy"), x)
                np.save(os.path.join(d, "edge_index.npy"), ei)
                with open(stamp, "w") as f:
                    json.dump(src, f)
            self.labels(g, d)
            g["dir"] = d
            g["F"] = int(g["F_actual"])
            ready.append(g)
        self.phase("graphs", t)
        return ready

    def labels(self, g, d):
        """y.npy and train_mask.npy beside x.npy for the training rows: the
        graph's own, else seeded random ones (gnngen graphs have none)"""
        if "train" in self.a.tasks:
            label_files(g["path"], d, g["classes"], self.a.seed)

    def add(self, system, model, g, threads, **rec):
        r = {"system": system, "model": model, "graph": g["name"], "threads": threads}
        if g.get("N") is not None:
            r.update(N=g["N"], E=g["E"])
        r.update(rec)
        self.records.append(r)
        return r

    def weights(self, gs):
        t = time.time()
        wdir = os.path.join(self.build, "weights")
        os.makedirs(wdir, exist_ok=True)
        specs = []
        for g in gs:
            for m in self.a.models:
                s = model_spec(g, m)
                specs.append(f"{g['name']}-{m}:{m}:{g['F']}:{s['hidden']}:{s['heads']}:"
                             f"{g['classes']}")
                g.setdefault("weights", {})[m] = os.path.join(wdir, f"{g['name']}-{m}.safetensors")
        # written again only when the specs, the seed or the code that makes
        # them changed (a stamp beside them)
        h = zlib.crc32(json.dumps([specs, self.a.seed]).encode())
        for f in (os.path.abspath(__file__), os.path.join(BENCH, "pyg_models.py")):
            with open(f, "rb") as fh:
                h = zlib.crc32(fh.read(), h)
        stamp = os.path.join(wdir, "stamp-%08x" % h)
        if not (os.path.exists(stamp) and all(os.path.exists(w) for g in gs
                                              for w in g["weights"].values())):
            p = subprocess.run([self.a.python, os.path.abspath(__file__), "weights", "--out",
                                wdir, "--seed", str(self.a.seed)] + specs, capture_output=True,
                               text=True, timeout=300)
            if p.returncode != 0:
                raise SystemExit("cpubench: writing the weights failed:\n" + p.stderr)
            with open(stamp, "w"):
                pass
        self.phase("weights", t)

    # gnncc
    def compile_gnncc(self, gs):
        t = time.time()
        opts = [o for o in GNNCC_OPTS if "gnncc-" + o in self.a.systems] \
            if "infer" in self.a.tasks else []
        # the training objects (-O2 only): on the training graphs
        train = "train" in self.a.tasks and "gnncc-O2" in self.a.systems
        if not opts and not train:
            for g in gs:
                g["objects"], g["compile_s"], g["gnncc_error"], g["exe"] = [], {}, {}, None
            return
        for g in gs:
            d = os.path.join(self.build, "models", g["name"])
            os.makedirs(d, exist_ok=True)
            g["objects"], g["compile_s"], g["gnncc_error"] = [], {}, {}
            todo = [(opt, m, B.model_name(m, opt)) for opt in opts for m in self.a.models]
            if train and g["name"] in self.a.train_graphs:
                todo += [("O2", m, train_name(m)) for m in self.a.models]
            for opt, m, name in todo:
                s = model_spec(g, m)
                w = {"hidden": s["hidden"]} if m != "gat" else {"hidden": s["hidden"],
                                                                "heads": s["heads"]}
                src = os.path.join(d, name.lower() + ".gnn")
                text = B.instantiate(m, g["F"], g["classes"], name, **w)
                if name == train_name(m):   # a training object: the PyG cells' settings
                    text += train_item(name)
                with open(src, "w") as f:
                    f.write(text)
                obj = os.path.join(d, name.lower() + ".o")
                cmd = [self.gnncc, "--target=cpu"] + GNNCC_OPTS[opt] + self.gnncc_cpu() + ["-fopenmp", src, "-o", obj]
                t1 = time.time()
                try:
                    p = subprocess.run(cmd, capture_output=True, text=True, timeout=120)
                    ok, msg = p.returncode == 0, (p.stderr.strip().splitlines() or ["?"])[-1]
                except subprocess.TimeoutExpired:
                    ok, msg = False, "gnncc timed out (120 s)"
                secs = round(time.time() - t1, 3)
                g["compile_s"][name] = secs
                if ok:
                    g["objects"].append((name, obj))
                else:
                    g["gnncc_error"][name] = "gnncc failed: " + msg
                    self.log(f"{shlex.join(cmd)}: {msg}")
            g["exe"] = self.link(g, os.path.join(self.build, f"cpubench-{g['name']}"))
        self.phase("gnncc compile", t)

    def link(self, g, exe):
        """the cpubench executable of g["objects"] ((name, object) pairs):
        its path, or None (each object's g["gnncc_error"] then says so)"""
        if not g["objects"]:
            return None
        cflags = subprocess.run([self.gnncc, "--print-cflags"], capture_output=True, text=True,
                                check=True).stdout.split()
        libs = subprocess.run([self.gnncc, "--print-link-flags", "--target=cpu", "-fopenmp"],
                              capture_output=True, text=True, check=True).stdout.split()
        xm = " ".join(f"X({n})" for n, _ in g["objects"])
        cmd = ["cc", "-std=c11", "-O2", "-Wall", "-Wextra", "-fopenmp",
               f"-DCPUBENCH_MODELS={xm}", os.path.join(HERE, "cpubench.c")] + \
            [o for _, o in g["objects"]] + cflags + libs + ["-lm", "-o", exe]
        p = subprocess.run(cmd, capture_output=True, text=True)
        if p.returncode == 0:
            return exe
        self.log("building cpubench failed:\n" + p.stderr)
        for n, _ in g["objects"]:
            g["gnncc_error"][n] = "building cpubench failed"
        return None

    def out_path(self, system, m, g, threads):
        d = os.path.join(self.build, "out")
        os.makedirs(d, exist_ok=True)
        return os.path.join(d, f"{g['name']}-{m}-{system}-t{threads}.npy")

    def cell_gnncc(self, system, m, g, threads, task="infer"):
        """one gnncc cell: a cpubench process; task "train" times the
        training object's steps (--train, the y and mask PyG's cells read)"""
        train = task == "train"
        name = train_name(m) if train else B.model_name(m, system.split("-")[1])
        base = dict(compile_s=g["compile_s"].get(name))
        if train:
            base["task"] = "train"
        if name in g["gnncc_error"] or not g.get("exe") or name not in dict(g["objects"]):
            return self.add(system, m, g, threads, status="error",
                            message=g["gnncc_error"].get(name, "not compiled"), **base)
        out = self.out_path(system, m, g, threads)
        # a training cell writes no output: the inference cell's stays
        if os.path.exists(out) and not train:
            os.unlink(out)
        what = ([f"--train", f"--y={os.path.join(g['dir'], 'y.npy')}",
                 f"--mask={os.path.join(g['dir'], 'train_mask.npy')}", f"--seed={TRAIN_SEED}"]
                if train else [f"--weights={g['weights'][m]}", f"--out={out}"])
        cmd = [g["exe"], f"--graph={os.path.join(g['dir'], 'edge_index.npy')}",
               f"--x={os.path.join(g['dir'], 'x.npy')}"] + what
        rec = self.run_cpubench(cmd, name, g, threads, TIMEOUT["gnncc"])
        if rec.get("status") == "ok" and not train:
            rec["out"] = out
        return self.add(system, m, g, threads, **base, **rec)

    def run_cpubench(self, cmd, name, g, threads, limit):
        """one cpubench process: cmd (the executable and its inputs) with
        the timing options and model name added, at most limit seconds;
        its record's fields"""
        cmd = cmd + [f"--label={g['name']}", f"--runs={self.a.min_runs}",
                     f"--max-runs={self.a.max_runs}", f"--target-seconds={self.a.target_s}",
                     f"--cap-seconds={self.a.cap_s}", f"--floor-runs={self.a.floor_runs}",
                     f"--slow-cap-seconds={self.a.slow_cap_s}", name]
        env = dict(os.environ, OMP_NUM_THREADS=str(threads), OMP_PROC_BIND="false")
        limit = min(limit, self.left())
        errpath = os.path.join(self.build, "cpubench-stderr.log")
        with open(errpath, "a") as err, open(os.path.join(self.build, "cell.out"), "w+") as so:
            err.write("$ OMP_NUM_THREADS=%d %s\n" % (threads, shlex.join(cmd)))
            err.flush()
            p = subprocess.Popen(cmd, stdout=so, stderr=err, env=env, start_new_session=True)
            status, ru, _ = wait_child(p.pid, limit)
            p.returncode = 0   # reaped by wait4: keep Popen from waiting again
            so.seek(0)
            lines = so.read().splitlines()
        rec = None
        for ln in lines:
            try:
                rec = json.loads(ln)
            except ValueError:
                continue
        if status is None:
            rec = {"status": "skipped", "reason": "time budget" if self.left() < 1
                   else f"timeout ({limit:.0f} s)"}
        elif rec is None:
            rec = {"status": "error", "message": f"crashed ({exit_text(status)}; see "
                   f"{os.path.relpath(errpath, ROOT)})"}
        for k in ("tool", "event", "model", "graph", "task"):
            rec.pop(k, None)
        if ru is not None:
            rec["maxrss_kb"] = ru.ru_maxrss
        return rec

    def start_worker(self, threads):
        """the torch worker for a thread count, started (it imports and
        pre-warms in the background); worker() waits for it to be ready"""
        w = self.workers.get(threads)
        if w and w.poll() is None:
            return w
        env = dict(os.environ, OMP_NUM_THREADS=str(threads), PYTHONUNBUFFERED="1",
                   PYTHONWARNINGS="ignore")
        # one compile thread: Inductor's subprocess pool is not fork-safe (the
        # children would share it) and has little to gain on a few cores
        env["TORCHINDUCTOR_COMPILE_THREADS"] = "1"
        cache = os.path.join(self.build, "inductor", f"prewarm-t{threads}")
        # Inductor's set-up only where a cell will compile
        pre = ["--prewarm", cache] if any(s.startswith("pyg-compile")
                                          for s in self.a.systems) else []
        with open(os.path.join(self.build, f"worker-t{threads}.log"), "a") as err:
            w = subprocess.Popen([self.a.python, os.path.abspath(__file__), "worker",
                                  "--threads", str(threads)] + pre,
                                 stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=err,
                                 text=True, env=env, start_new_session=True, cwd=ROOT)
        w.ready = False
        self.workers[threads] = w
        return w

    def worker(self, threads):
        w = self.start_worker(threads)
        if not w.ready:
            line = self._readline(w, 240)
            if not line:
                _killpg(self.workers.pop(threads).pid)
                raise RuntimeError(f"the torch worker for {threads} threads did not start "
                                   f"(see build/bench/cpu/worker-t{threads}.log)")
            self.log(f"torch worker, {threads} threads: {line.strip()}")
            try:
                ready = json.loads(line)
                self.torch_versions = {k: ready[k] for k in ("torch", "pyg")}
            except (ValueError, KeyError):
                pass
            w.ready = True
        return w

    @staticmethod
    def _readline(w, timeout):
        r, _, _ = select.select([w.stdout], [], [], max(timeout, 0.1))
        return w.stdout.readline() if r else ""

    def cell_torch(self, system, m, gs, threads, task="infer"):
        """one torch cell, or a dynamic group (gs: the graphs it runs in
        turn in one process); returns their records"""
        limit = min(TIMEOUT[system], self.left())
        name = gs[0]["name"] if len(gs) == 1 else "all"
        tag = "-train" if task == "train" else ""
        c = {"system": system, "threads": threads, "kind": m, "timing": self.timing,
             "task": task,
             "cache": os.path.join(self.build, "inductor",
                                   f"{name}-{m}-{system}{tag}-t{threads}"),
             "timeout": limit, "left_s": self.left(), "graphs": []}
        for g in gs:
            out = self.out_path(system, m, g, threads)
            if os.path.exists(out) and task == "infer":
                os.unlink(out)
            s = model_spec(g, m)
            c["graphs"].append({"name": g["name"], "dir": g["dir"], "classes": g["classes"],
                                "weights": g["weights"][m], "out": out,
                                "hidden": s["hidden"], "heads": s["heads"]})
        return self.torch_records(c, gs, task)

    def torch_records(self, c, gs, task):
        """cell c (cell_torch's) through the worker of its thread count;
        the records of its graphs gs, added"""
        system, m, threads, limit = c["system"], c["kind"], c["threads"], c["timeout"]
        try:
            w = self.worker(threads)
            w.stdin.write(json.dumps(c) + "\n")
            w.stdin.flush()
            line = self._readline(w, min(limit * len(gs), self.left()) + 30)
            recs = json.loads(line)["records"] if line else None
        except (RuntimeError, OSError, ValueError, KeyError, TypeError) as e:
            recs = [{"status": "error", "message": str(e)}] * len(gs)
        if recs is None:   # the worker itself hung: start over with a new one
            _killpg(self.workers.pop(threads).pid)
            recs = [{"status": "error", "message": "the torch worker did not answer"}] * len(gs)
        out = []
        for g, cg, rec in zip(gs, c["graphs"], recs):
            rec = dict(rec)
            if rec.get("status") == "skipped" and self.left() < 1:
                rec["reason"] = "time budget"
            if rec.get("status") == "ok" and task.endswith("infer"):
                rec["out"] = cg["out"]
            if len(gs) > 1:
                rec["group"] = [x["name"] for x in gs]
            rec.pop("system", None)
            if task != "infer":
                rec["task"] = task
            out.append(self.add(system, m, g, threads, **rec))
        return out

    def cells(self, gs):
        """(system, model, graphs, threads, task) in order of importance;
        graphs is one graph, or for torch.compile(dynamic=True) all of them
        (a group: one process, in turn); task "infer" or "train".  The
        training rows come after each inference stage they mirror: eager
        after the eager and -O2 cells, the compiled ones after the
        compiled inference cells, all before -O0."""
        T, M, S = self.a.threads, self.a.models, self.a.systems
        tg = [g for g in gs if g["name"] in self.a.train_graphs]
        gs = [g for g in gs if g["name"] in self.a.infer_graphs]
        inf = bool(gs)
        order = []
        if inf:
            for g in gs:
                for t in T:
                    order += [(s, m, [g], t, "infer")
                              for s in ("pyg-eager", "gnncc-O2", "gnncc-bf16") for m in M]
        # gnncc's training steps beside PyG eager's (cell_gnncc, task "train")
        order += [(s, m, [g], t, "train") for g in tg for t in T
                  for s in ("pyg-eager", "gnncc-O2") for m in M]
        if gs and inf:
            order += [("pyg-compile-dynamic", m, gs, t, "infer") for t in T for m in M]
        if inf:
            order += [("pyg-compile-static", m, [g], t, "infer") for g in gs for t in T
                      for m in M]
        if tg:
            order += [("pyg-compile-dynamic", m, tg, t, "train") for t in T for m in M]
            order += [("pyg-compile-static", m, [g], t, "train") for g in tg for t in T
                      for m in M]
        # last: -O0, the debugging level (one kernel per primitive, every
        # E x F message stored, the reference loops for dense transforms;
        # seconds a call on PubMed, 15-60 s on arxiv), as far as the budget
        # goes, one thread first
        if inf:
            order += [("gnncc-O0", m, [g], t, "infer") for t in T for g in gs for m in M]
        return [c for c in order if c[0] in S]

    def run(self):
        a = self.a
        info = cpu_info()
        self.log(f"{info['cpu']}, {info['cores']} CPUs; graphs {', '.join(a.graphs)}; threads "
                 f"{', '.join(map(str, a.threads))}; budget {a.budget_s:.0f} s from the start")
        t = time.time()
        q0 = quiet_check()
        self.phase("quiet checks", t)
        self.log(("quiet: yes (" if q0["quiet"] else "NOT QUIET: ") + q0["details"] +
                 (")" if q0["quiet"] else ""))
        if not q0["quiet"]:
            self.log("WARNING: the machine is busy: these numbers are not fit to publish")
        if any(s.startswith("pyg-") for s in a.systems):
            for th in a.threads:   # they import torch and warm up meanwhile
                self.start_worker(th)
        gs = self.graphs()
        self.weights(gs)
        t = time.time()
        if any(s.startswith("pyg-") for s in a.systems):
            for th in a.threads:   # ready before gnncc compiles, which are timed
                try:
                    self.worker(th)
                except RuntimeError as e:
                    self.log(str(e))
        self.phase("torch workers (import, warm-up)", t)
        self.compile_gnncc(gs)
        t = time.time()
        todo = self.cells(gs)
        self.log(f"{sum(len(c[2]) for c in todo)} cells in {len(todo)} processes")
        for i, (system, m, group, threads, task) in enumerate(todo):
            if self.left() < 3:
                for g in group:
                    extra = {"task": "train"} if task == "train" else {}
                    self.add(system, m, g, threads, status="skipped", reason="time budget",
                             compile_s=g.get("compile_s", {}).get(
                                 train_name(m) if task == "train" else
                                 B.model_name(m, system.split("-")[1]))
                             if system.startswith("gnncc") else None,
                             **extra)
                continue
            t1 = time.time()
            if system.startswith("gnncc"):
                rs = [self.cell_gnncc(system, m, group[0], threads, task)]
            else:
                rs = self.cell_torch(system, m, group, threads, task)
            for r in rs:
                what = (f"{r['median_ms']:.3g} ms x{r['runs']}" if r["status"] == "ok" else
                        r["status"] + ": " + str(r.get("reason") or r.get("message")))
                if r.get("compile_s") is not None and not system.startswith("gnncc"):
                    what += f", compile {r['compile_s']:.1f} s"
                if r["status"] == "ok" and r.get("loss_first") is not None:
                    what += f", loss {r['loss_first']:.4g} -> {r['loss_last']:.4g}"
                self.log(f"[{i + 1}/{len(todo)}] {system} {m} {r['graph']} t{threads}"
                         f"{' train' if task == 'train' else ''}: {what}"
                         + (f" ({time.time() - t1:.1f} s)" if r is rs[-1] else ""))
            key = "cells: " + ("gnncc" if system.startswith("gnncc") else system) + \
                (" (training)" if task == "train" else "")
            self.phase_s[key] = round(self.phase_s.get(key, 0) + time.time() - t1, 1)
        self.stop_workers()
        t = time.time()
        self.compare()
        self.phase("comparison", t)
        t = time.time()
        q1 = quiet_check()
        self.phase("quiet checks", t)
        self.log(("quiet after: yes (" if q1["quiet"] else "NOT QUIET after: ") + q1["details"]
                 + (")" if q1["quiet"] else ""))
        meta = dict(info)
        meta.update(date=time.strftime("%Y-%m-%d %H:%M:%S %Z"), quick=a.quick,
                    budget_s=a.budget_s, threads=a.threads, seed=a.seed, tolerance=TOL,
                    tasks=a.tasks, graphs=list(a.graphs), train_graphs=a.train_graphs,
                    train_optimizer={"name": "adam", "lr": TRAIN_LR,
                                     "weight_decay": TRAIN_WD},
                    widths=B.WIDTHS, timing=self.timing, quiet_before=q0, quiet_after=q1,
                    quiet=q0["quiet"] and q1["quiet"])
        meta.update(self.versions())
        meta["phases_s"] = self.phase_s
        meta["elapsed_s"] = round(time.time() - self.t0, 1)
        return self.write(meta)

    def stop_workers(self):
        for w in self.workers.values():
            w.stdin.close()
            try:
                w.wait(timeout=10)
            except subprocess.TimeoutExpired:
                _killpg(w.pid)

    def versions(self):
        if getattr(self, "torch_versions", None):   # the torch worker said
            return self.torch_versions
        try:
            p = subprocess.run([self.a.python, os.path.join(BENCH, "pyg_bench.py"), "--info"],
                               capture_output=True, text=True, timeout=120)
            info = json.loads(p.stdout.strip().splitlines()[-1])
            return {k: info.get(k) for k in ("torch", "pyg") if k in info}
        except (OSError, ValueError, IndexError, subprocess.TimeoutExpired) as e:
            return {"torch_error": str(e)}

    def compare(self, task="infer"):
        """every output of task's records against PyG eager's (same graph
        and model; the same thread count when it ran, else another)"""
        ref = {}
        infer = [r for r in self.records if r.get("task", "infer") == task]
        for r in infer:
            if r["system"] == "pyg-eager" and r["status"] == "ok":
                ref.setdefault((r["model"], r["graph"]), {})[r["threads"]] = r["out"]
        for r in infer:
            if r.get("status") != "ok":
                continue
            refs = ref.get((r["model"], r["graph"]), {})
            path = refs.get(r["threads"]) or next(iter(refs.values()), None)
            if path is None:
                r["agree"] = None
                continue
            try:
                a, b = np.load(r["out"]), np.load(path)
                scale = float(np.max(np.abs(b))) if b.size else 0.0
                if a.shape != b.shape:
                    r.update(agree=False, agree_note=f"shape {a.shape}, eager {b.shape}")
                    continue
                diff = float(np.max(np.abs(a.astype(np.float64) - b))) if a.size else 0.0
                finite = bool(np.isfinite(a).all())
                tol = TOLS.get(r["system"], TOL)
                r.update(max_abs_diff=diff, ref_max_abs=scale, rel_diff=diff / max(scale, 1e-30),
                         agree=finite and diff <= tol * max(scale, 1e-30), tolerance=tol)
                if not finite:
                    r["agree_note"] = "non-finite values"
            except (OSError, ValueError) as e:
                r.update(agree=False, agree_note=str(e))

    def write(self, meta):
        os.makedirs(self.a.results_dir, exist_ok=True)
        base = os.path.join(self.a.results_dir, "cpu-" + meta["machine"])
        for r in self.records:
            if r.get("out"):
                r["out"] = os.path.relpath(r["out"], ROOT)
        records = self.records
        if self.a.merge and os.path.exists(base + ".json"):
            # into the existing results (the module docstring, --merge)
            with open(base + ".json") as f:
                old = json.load(f)

            def key(r):
                return (r["system"], r["model"], r["graph"], r.get("threads"),
                        r.get("task") or "infer")
            new = {key(r) for r in records}
            records = [r for r in old["records"] if key(r) not in new] + records
            meta = dict(old["meta"], merged_runs=[
                m for m in old["meta"].get("merged_runs", [])] + [meta])
            self.log(f"merged into {os.path.relpath(base, ROOT)}.json: {len(self.records)} "
                     f"records of this run, {len(records) - len(self.records)} kept")
        # paths relative to the checkout: no path of this machine in the results
        text = json.dumps({"meta": meta, "records": records}, indent=1)
        with open(base + ".json", "w") as f:
            f.write(text.replace(ROOT + os.sep, "") + "\n")
        self.log(f"raw results: {os.path.relpath(base, ROOT)}.json")
        p = subprocess.run([self.a.python, os.path.join(HERE, "cpureport.py"), base + ".json",
                            "--md", base + ".md", "--png", base + ".png"])
        bad = [r for r in self.records if r.get("agree") is False]
        for r in bad:
            self.log(f"MISMATCH: {r['system']} {r['model']} {r['graph']} t{r['threads']}: "
                     f"max |diff| {r.get('max_abs_diff', '?')} of max |eager| "
                     f"{r.get('ref_max_abs', '?')} {r.get('agree_note', '')}")
        if not (meta.get("merged_runs") or [meta])[-1]["quiet"]:
            self.log("WARNING: the machine was not quiet (see the report's header)")
        self.log(f"done in {(meta.get('merged_runs') or [meta])[-1]['elapsed_s']:.0f} s: "
                 f"{os.path.relpath(base, ROOT)}.md")
        if p.returncode != 0:
            return p.returncode
        if bad:
            self.log(f"{len(bad)} outputs disagree with PyG eager")
            return 1
        if "infer" in self.a.tasks and not any(
                r["status"] == "ok" and r["system"].startswith("gnncc") for r in self.records):
            self.log("no gnncc configuration was measured")
            return 1
        return 0


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    sub = ap.add_subparsers(dest="cmd", required=True)
    r = sub.add_parser("run", help="the benchmark (bench/cpu/run.sh)")
    r.add_argument("--quick", action="store_true", help="Cora only: a smoke test")
    r.add_argument("--graphs", type=B.csv_list([g["name"] for g in GRAPHS]))
    r.add_argument("--models", type=B.csv_list(B.MODELS), default=B.MODELS)
    r.add_argument("--systems", type=B.csv_list(SYSTEMS), default=SYSTEMS)
    r.add_argument("--tasks", type=B.csv_list(TASKS), default=DEFAULT_TASKS,
                   help="infer (forward inference) and/or train (one training epoch: "
                   "forward, backward, Adam), default both; hetero: the heterogeneous rows "
                   "(hetero.py: rel-shop, forward and training; hetero-infer or hetero-train "
                   "for one of them)")
    r.add_argument("--hetero-scale", type=float, default=HETERO_SCALE,
                   help=f"the heterogeneous rows' gnngen --preset=rel-shop --scale "
                   f"(default {HETERO_SCALE:g})")
    r.add_argument("--hetero-models", type=B.csv_list(hetero.MODEL_NAMES),
                   default=hetero.MODEL_NAMES,
                   help="the heterogeneous rows' models (default all: " +
                   ",".join(hetero.MODEL_NAMES) + ")")
    r.add_argument("--train-graphs", type=B.csv_list([g["name"] for g in GRAPHS]),
                   default=["cora"], help="the graphs of the training rows (default cora)")
    r.add_argument("--threads", type=lambda s: [int(t) for t in s.split(",") if t],
                   default=[1, 2], help="thread counts, e.g. 1,2 (default)")
    r.add_argument("--budget-s", type=float,
                   help="seconds from when run.sh started (default 870: the whole command "
                   f"within 15 minutes; {HETERO_BUDGET_S:.0f} more with the hetero rows)")
    r.add_argument("--min-runs", type=int, default=20)
    r.add_argument("--max-runs", type=int, default=200)
    r.add_argument("--target-s", type=float, default=0.5,
                   help="time spent on timed calls per cell, within the run bounds")
    r.add_argument("--cap-s", type=float, default=6.0,
                   help="when --min-runs calls would take longer, as many as fit (default 6)")
    r.add_argument("--floor-runs", type=int, default=3)
    r.add_argument("--slow-cap-s", type=float, default=12.0,
                   help="unless --floor-runs calls would take longer: as many as fit, at "
                   "least 1 (default 12: gnncc -O0 on the arxiv-shaped graph)")
    r.add_argument("--seed", type=int, default=1, help="the weights' seed")
    r.add_argument("--graph-seed", type=int, default=1, help="gnngen's seed (bench.py's too)")
    r.add_argument("--results-dir", default=os.path.join(BENCH, "results"))
    r.add_argument("--build-dir", default=os.path.join(ROOT, "build", "bench", "cpu"))
    r.add_argument("--python", default=sys.executable, help="the Python with torch and PyG")
    r.add_argument("--gnncc", default=os.environ.get("GNNCC") or os.path.join(ROOT, "build",
                                                                              "gnncc"),
                   help="the compiler (default $GNNCC, else build/gnncc)")
    r.add_argument("--gnncc-cpu", help="gnncc's --cpu for the models (default gnncc's: portable, "
                   "every kernel for three instruction sets; native: one, a third of the compile)")
    r.add_argument("--merge", action="store_true",
                   help="add this run's records to the existing results file, replacing "
                   "those of the same system, model, graph, threads and task")

    w = sub.add_parser("weights")
    w.add_argument("--out", required=True)
    w.add_argument("--seed", type=int, default=1)
    w.add_argument("spec", nargs="+", help="NAME:KIND:FIN:HIDDEN:HEADS:CLASSES")
    k = sub.add_parser("worker")
    k.add_argument("--threads", type=int, required=True)
    k.add_argument("--prewarm", metavar="CACHE_DIR", help="torch.compile a toy first (below)")
    sub.add_parser("quiet")
    a = ap.parse_args(argv)
    if a.cmd == "weights":
        return cmd_weights(a)
    if a.cmd == "worker":
        return cmd_worker(a)
    if a.cmd == "quiet":
        q = quiet_check()
        print(("quiet: yes (" if q["quiet"] else "quiet: NO (") + q["details"] + ")")
        return 0 if q["quiet"] else 1
    # the heterogeneous rows: a run of their own after the others, merged
    # into the results the others wrote
    a.htasks = [t for t in hetero.TASKS if t in a.tasks or "hetero" in a.tasks]
    a.hsystems = [s for s in hetero.SYSTEMS if s in a.systems]
    a.hmodels = a.hetero_models
    a.tasks = [t for t in a.tasks if t in DEFAULT_TASKS]
    if a.budget_s is None:
        a.budget_s = (870 if a.tasks else 0) + (HETERO_BUDGET_S if a.htasks else 0)
    rc = 0
    if a.tasks:
        if a.graphs is None:
            a.graphs = ["cora"] if a.quick else [g["name"] for g in GRAPHS]
        if "infer" not in a.tasks:
            a.graphs = []
        a.infer_graphs = a.graphs
        if "train" in a.tasks:   # the training graphs are loaded with the others
            a.graphs = [g["name"] for g in GRAPHS if g["name"] in a.graphs + a.train_graphs]
        else:
            a.train_graphs = []
        rc = Run(a).run()
        a.merge = True
    if a.htasks:
        rc = max(rc, hetero.hetero_run(Run)(a).run())
    return rc


if __name__ == "__main__":
    sys.exit(main())
