"""The training epoch both benchmarks time (bench/ on the GPU, bench/cpu/ on
the CPU), so that their training rows mean the same thing.

One epoch is PyG's examples' full-graph step:

    model.train(); optimizer.zero_grad(); out = model(x, edge_index)
    loss = F.nll_loss(out[train_mask], y[train_mask]); loss.backward()
    optimizer.step()

with torch.optim.Adam(lr=0.01, weight_decay=5e-4) and dropout on;
torch.compile compiles the model (forward and backward), the loss and the
optimizer step stay eager.  gnncc's counterpart is the model compiled with
TRAIN_ITEM (forward, nll over the mask, backward, Adam: one call of
gnn_prog_train_step, bench/benchtrain.h).  Labels and the training mask
are the graph's own (Cora, CiteSeer) or seeded random ones (label_files:
the synthetic graphs have none).
"""
import os
import shutil
import time
import zlib

import numpy as np

# the training epoch's optimizer (torch.optim.Adam), as PyG's examples/gcn.py
TRAIN_LR, TRAIN_WD = 0.01, 5e-4
TRAIN_FRACTION = 0.1     # a synthetic graph's random training mask
TRAIN_SEED = 0           # gnncc's init and dropout seed (PyG's cells: torch.manual_seed(0))
# gnncc's training objects: the inference template plus this train item
TRAIN_ITEM = """
train {name}(out, y: i64[{n}], mask: bool[{n}]) {{
  optimizer = "adam"
  lr = {lr:g}
  weight_decay = {wd:g}
  return nll_loss(out, y, mask)
}}
"""


def train_item(name, n="N"):
    """the train item for the model NAME, with the PyG cells' settings; n:
    the loss's rows (a heterogeneous model's: its output type's, N_customer)"""
    return TRAIN_ITEM.format(name=name, n=n, lr=TRAIN_LR, wd=TRAIN_WD)


def label_files(src_dir, dst_dir, classes, seed, x_path=None):
    """y.npy and train_mask.npy in dst_dir: src_dir's own when it has them,
    else seeded random ones for the nodes of x_path (default dst_dir's
    x.npy); kept while newer than their source"""
    x_path = x_path or os.path.join(dst_dir, "x.npy")
    for f in ("y", "train_mask"):
        src = os.path.join(src_dir, f + ".npy")
        dst = os.path.join(dst_dir, f + ".npy")
        if os.path.exists(src):
            if not os.path.exists(dst) or os.path.getmtime(dst) < os.path.getmtime(src):
                shutil.copyfile(src, dst)
        elif not os.path.exists(dst) or os.path.getmtime(dst) < os.path.getmtime(x_path):
            n = np.load(x_path, mmap_mode="r").shape[0]
            rng = np.random.default_rng([seed, zlib.crc32(f.encode())])
            a = (rng.integers(0, classes, size=n, dtype=np.int64) if f == "y" else
                 rng.random(n) < TRAIN_FRACTION)
            np.save(dst, a)


def torch_epochs(torch, m, x, ei, y, mask, mode, cap_s, runs_for, sync=lambda: None):
    """Times training epochs of PyG model m (on x's device) under MODE
    (eager, static, dynamic or max-autotune: torch.compile's; conv: m
    runs eagerly around convs the caller compiled, bench/cpu/hetero.py's
    per-conv mode).  Warm-up
    epochs first (2 eager, 3 compiled: the compile and any recompile),
    fewer when one takes a quarter of cap_s; then runs_for(the last
    warm-up's seconds) timed epochs, each waited for with sync().  Returns
    the record's fields (milliseconds)."""
    import torch.nn.functional as F
    m.train()
    opt = torch.optim.Adam(m.parameters(), lr=TRAIN_LR, weight_decay=TRAIN_WD)
    fn = m if mode in ("eager", "conv") else torch.compile(
        m, dynamic=mode == "dynamic",
        **({"mode": "max-autotune"} if mode == "max-autotune" else {}))

    def epoch():
        m.train()
        opt.zero_grad()
        out = fn(x, ei)
        loss = F.nll_loss(out[mask], y[mask])
        loss.backward()
        opt.step()
        return loss

    nwarm = 2 if mode == "eager" else 3
    least = 1 if mode == "eager" else 2
    warm = []
    for i in range(nwarm):
        sync()
        t0 = time.perf_counter()
        loss = epoch()
        sync()
        warm.append(time.perf_counter() - t0)
        if i == 0:
            first_loss = float(loss.detach())
        if i + 1 >= least and warm[-1] * 4 > cap_s:
            break
    runs = runs_for(warm[-1])
    t = []
    for _ in range(runs):
        sync()
        t0 = time.perf_counter()
        loss = epoch()
        sync()
        t.append((time.perf_counter() - t0) * 1e3)
    last_loss = float(loss.detach())
    if not (np.isfinite(first_loss) and np.isfinite(last_loss)):
        return {"status": "error", "message": f"non-finite loss ({first_loss}, {last_loss})"}
    med = float(np.median(t))
    rec = {"status": "ok", "median_ms": med, "min_ms": float(np.min(t)),
           "mean_ms": float(np.mean(t)), "first_ms": warm[0] * 1e3, "runs": runs,
           "warmup": len(warm), "loss_first": first_loss, "loss_last": last_loss,
           "optimizer": f"adam lr={TRAIN_LR:g} weight_decay={TRAIN_WD:g}"}
    if mode != "eager":
        rec["compile_s"] = max(0.0, sum(warm) - len(warm) * med / 1e3)
    return rec
