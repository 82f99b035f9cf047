#!/usr/bin/env python3
"""Time forward inference of PyG models on one graph, one JSON line per model.

usage: pyg_bench.py --graph-dir DIR --label NAME --classes C --mode MODE
                    --model KIND:HIDDEN[:HEADS] [--model ...] [--device cuda|cpu]
                    [--warmup K] [--runs R] [--max-runs R] [--target-seconds T]
                    [--task infer|train]
       pyg_bench.py --info

MODE: eager, compile-static (torch.compile's default mode, dynamic=False: shapes
specialized, a recompile for each graph), compile-dynamic
(torch.compile(dynamic=True)) or max-autotune (torch.compile(mode=
"max-autotune")).  KIND: gcn, sage, gat (HEADS heads of
HIDDEN units, then one averaged head), gin (bench/pyg_models.py).
DIR holds edge_index.npy (int [2, E]) and x.npy ([N, F]; uint8 or bool is
row-normalized as PyG's NormalizeFeatures, as gnnbench does).

Design: the counterpart of gnnbench.cu, measured the same way.  The graph
and features go to the device once; each model is built, put in eval mode
and run under torch.inference_mode on the edge_index tensor.  Warm-up calls
come first (they include torch.compile's compilation and any recompilation,
e.g. GCNConv's cache filling on the first call); then each timed call is
bracketed by CUDA events on the current stream and waited for, and the
median of at least --runs calls (more while they fit in --target-seconds)
is reported, with the host time of the same calls.  compile_s is the
warm-up calls' time minus as many steady calls.  peak_bytes is
torch.cuda.max_memory_allocated over the model's life, x and edge_index
included (gnnbench counts the same things).  A CUDA out-of-memory error
becomes {"status": "skipped", "reason": "out of memory"} and the next
model runs.  Progress lines ({"event": "start"}) let bench/bench.py time
out one model and go on with the rest in a new process.

--task train times training epochs instead (bench/training.py: PyG's
examples' full-graph step with Adam, dropout on; DIR holds y.npy and
train_mask.npy too, or --labels-dir does), each waited for with torch.cuda.synchronize, from
PyG's init under torch.manual_seed(0); the record has "task": "train",
the first and last losses and the peak of device bytes.
"""
import argparse
import gc
import json
import os
import platform
import sys
import time

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)


def emit(rec):
    print(json.dumps(rec), flush=True)


def info():
    """Versions for the report's header."""
    rec = {"event": "info", "python": platform.python_version(), "numpy": np.__version__}
    try:
        import torch
        rec["torch"] = torch.__version__
        rec["torch_cuda"] = torch.version.cuda
        if torch.cuda.is_available():
            p = torch.cuda.get_device_properties(0)
            rec["gpu"] = p.name
            rec["gpu_memory_bytes"] = p.total_memory
            rec["sm_count"] = p.multi_processor_count
    except Exception as e:  # noqa: BLE001 -- a missing torch is a fact to report
        rec["torch_error"] = f"{type(e).__name__}: {e}"
    try:
        import torch_geometric
        rec["pyg"] = torch_geometric.__version__
    except Exception as e:  # noqa: BLE001
        rec["pyg_error"] = f"{type(e).__name__}: {e}"
    emit(rec)


def load_graph(d):
    ei = np.load(os.path.join(d, "edge_index.npy"))
    x = np.load(os.path.join(d, "x.npy"))
    if x.dtype in (np.uint8, np.bool_):
        # NormalizeFeatures: (x - min) / clamp(row sum, min=1), in float64
        # and rounded once, exactly as gnnbench.cu does for 0/1 features
        x = x.astype(np.float64)
        x -= x.min() if x.size else 0
        x = x / np.maximum(x.sum(axis=1, keepdims=True), 1.0)
    return np.ascontiguousarray(ei.astype(np.int64)), np.ascontiguousarray(x, dtype=np.float32)


def parse_model(s):
    parts = s.split(":")
    if len(parts) not in (2, 3) or not all(p.isdigit() for p in parts[1:]):
        raise argparse.ArgumentTypeError(f"--model KIND:HIDDEN[:HEADS], not {s!r}")
    return parts[0], int(parts[1]), int(parts[2]) if len(parts) == 3 else 8


def bench_one(torch, args, kind, hidden, heads, x, ei, base):
    import pyg_models
    dev = torch.device(args.device)
    cuda = dev.type == "cuda"
    model = pyg_models.make(kind, x.shape[1], hidden, args.classes, heads=heads)
    model = model.to(dev).eval()
    if args.mode == "compile-static":
        fn = torch.compile(model, dynamic=False)
    elif args.mode == "compile-dynamic":
        fn = torch.compile(model, dynamic=True)
    elif args.mode == "max-autotune":
        fn = torch.compile(model, mode="max-autotune")
    else:
        fn = model

    def sync():
        if cuda:
            torch.cuda.synchronize()

    warm = []
    with torch.inference_mode():
        for _ in range(args.warmup):
            sync()
            t0 = time.perf_counter()
            fn(x, ei)
            sync()
            warm.append(time.perf_counter() - t0)
        steady = float(np.median(warm[-2:])) if warm else 0.0
        runs = args.runs
        if steady > 0:
            runs = int(min(args.max_runs, max(args.runs, args.target_seconds / steady)))
        ev, host = [], []
        if cuda:
            start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        for _ in range(runs):
            t0 = time.perf_counter()
            if cuda:
                start.record()
            fn(x, ei)
            if cuda:
                end.record()
                end.synchronize()
            host.append((time.perf_counter() - t0) * 1e3)
            ev.append(start.elapsed_time(end) if cuda else host[-1])
    med_host = float(np.median(host))
    rec = {"tool": "pyg", "event": "result", "system": "pyg-" + args.mode, "model": kind,
           "graph": args.label, "status": "ok", "timer": "events" if cuda else "host",
           "median_ms": float(np.median(ev)), "min_ms": float(np.min(ev)),
           "mean_ms": float(np.mean(ev)), "host_median_ms": med_host, "runs": runs,
           "warmup": args.warmup,
           "first_call_s": warm[0] if warm else None,
           "compile_s": max(0.0, sum(warm) - len(warm) * med_host / 1e3) if warm else None}
    if cuda:
        rec["peak_bytes"] = int(torch.cuda.max_memory_allocated() - base)
    return rec


def train_one(torch, args, kind, hidden, heads, x, ei, base):
    """--task train: bench_one's record for training epochs"""
    import pyg_models
    from training import TRAIN_SEED, torch_epochs
    dev = torch.device(args.device)
    cuda = dev.type == "cuda"
    lab = args.labels_dir or args.graph_dir
    y = torch.from_numpy(np.load(os.path.join(lab, "y.npy")).astype(np.int64)).to(dev)
    mask = torch.from_numpy(np.load(os.path.join(lab, "train_mask.npy")).astype(bool)).to(dev)
    torch.manual_seed(TRAIN_SEED)
    model = pyg_models.make(kind, x.shape[1], hidden, args.classes, heads=heads).to(dev)
    mode = {"eager": "eager", "compile-static": "static", "compile-dynamic": "dynamic",
            "max-autotune": "max-autotune"}[args.mode]

    def runs_for(est):
        runs = args.runs
        if est > 0:
            runs = int(min(args.max_runs, max(args.runs, args.target_seconds / est)))
            if est * runs > TRAIN_CAP_S:   # a slow epoch: fewer, at least 3
                runs = max(3, int(TRAIN_CAP_S / est))
        return runs

    rec = torch_epochs(torch, model, x, ei, y, mask, mode, TRAIN_CAP_S, runs_for,
                       sync=torch.cuda.synchronize if cuda else (lambda: None))
    rec = {"tool": "pyg", "event": "result", "system": "pyg-" + args.mode, "model": kind,
           "graph": args.label, "task": "train", "timer": "host", **rec}
    if cuda:
        rec["peak_bytes"] = int(torch.cuda.max_memory_allocated() - base)
    return rec


# the timed training epochs of one model take about this long at most
TRAIN_CAP_S = 20.0


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--info", action="store_true", help="print versions as JSON and exit")
    ap.add_argument("--graph-dir")
    ap.add_argument("--label", default="graph")
    ap.add_argument("--classes", type=int)
    ap.add_argument("--mode", choices=["eager", "compile-static", "compile-dynamic", "max-autotune"],
                    default="eager")
    ap.add_argument("--model", type=parse_model, action="append", default=[])
    ap.add_argument("--device", default="cuda")
    ap.add_argument("--warmup", type=int, default=None,
                    help="untimed calls first (default 3, 6 under torch.compile)")
    ap.add_argument("--runs", type=int, default=20)
    ap.add_argument("--max-runs", type=int, default=200)
    ap.add_argument("--target-seconds", type=float, default=0.5)
    ap.add_argument("--task", choices=["infer", "train"], default="infer")
    ap.add_argument("--labels-dir", help="--task train: y.npy and train_mask.npy (default "
                    "--graph-dir)")
    args = ap.parse_args(argv)
    if args.info:
        info()
        return 0
    if not args.graph_dir or not args.classes or not args.model:
        ap.error("--graph-dir, --classes and at least one --model are required")
    if args.warmup is None:
        # max-autotune records CUDA graphs on the first calls after compiling
        args.warmup = 3 if args.mode == "eager" else 6
    args.warmup = max(args.warmup, 1)

    task = {"task": "train"} if args.task == "train" else {}
    import torch
    # float32 matmuls in float32 (no TF32), as gnncc computes them
    torch.set_float32_matmul_precision("highest")
    ei_np, x_np = load_graph(args.graph_dir)
    dev = torch.device(args.device)
    cuda = dev.type == "cuda"
    if cuda and not torch.cuda.is_available():
        for kind, _, _ in args.model:
            emit({"tool": "pyg", "event": "result", "system": "pyg-" + args.mode,
                  "model": kind, "graph": args.label, **task, "status": "error",
                  "message": "torch.cuda.is_available() is False"})
        return 1
    if cuda:
        torch.cuda.reset_peak_memory_stats()
    base = torch.cuda.memory_allocated() if cuda else 0
    x = torch.from_numpy(x_np).to(dev)
    ei = torch.from_numpy(ei_np).to(dev)
    emit({"tool": "pyg", "event": "graph", "graph": args.label, "N": x.shape[0],
          "E": ei.shape[1], "F": x.shape[1]})
    fails = 0
    for kind, hidden, heads in args.model:
        emit({"tool": "pyg", "event": "start", "system": "pyg-" + args.mode, "model": kind,
              "graph": args.label, **task})
        if cuda:
            torch.cuda.reset_peak_memory_stats()
        try:
            rec = (train_one if args.task == "train" else bench_one)(
                torch, args, kind, hidden, heads, x, ei, base)
        except torch.cuda.OutOfMemoryError:
            rec = {"status": "skipped", "reason": "out of memory"}
        except Exception as e:  # noqa: BLE001 -- reported, and the next model runs
            msg = f"{type(e).__name__}: {e}"
            oom = "out of memory" in msg.lower()
            rec = ({"status": "skipped", "reason": "out of memory"} if oom else
                   {"status": "error", "message": msg.strip().splitlines()[0][:300]})
            fails += not oom
        if rec.get("status") != "ok":
            rec = {"tool": "pyg", "event": "result", "system": "pyg-" + args.mode,
                   "model": kind, "graph": args.label, **task, **rec}
        emit(rec)
        if rec.get("status") == "error" and "cuda" in rec.get("message", "").lower():
            # a CUDA error can leave the context unusable (products' GAT
            # under torch.compile: "CUDA driver error: invalid argument"):
            # this cell says so, and bench.py runs the rest in a new process
            return 1
        if args.mode != "eager":
            torch._dynamo.reset()
        gc.collect()
        if cuda:
            torch.cuda.empty_cache()
    return 1 if fails else 0


if __name__ == "__main__":
    sys.exit(main())
