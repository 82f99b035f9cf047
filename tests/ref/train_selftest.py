#!/usr/bin/env python3
"""Checks train_ref.py (the NumPy training reference) against torch.

usage: train_selftest.py [--data DIR] [--steps 5] [--tol 1e-6] [-v]

1. NumPy only: philox.py's known answers; train_ref's hand-written
   gradient against central finite differences on a small random graph
   (every parameter entry, float64).
2. With torch and torch_geometric: the same GCN built from PyG's GCNConv
   (examples/gcn/gcn.gnn: conv1 -> relu -> dropout -> conv2 ->
   log_softmax), its dropout replaced by the very multiplier train_ref
   draws from Philox (injected), loss F.nll_loss(out[train], y[train]),
   autograd, torch.optim.Adam / AdamW / SGD (lr 0.01, weight_decay 5e-4);
   `--steps` steps on Cora (DIR: data/cora of the checkout by default,
   x normalized as NormalizeFeatures), from the shipped trained weights
   and from a Philox-drawn glorot init.  Compared: every step's loss and
   the final parameters, as max |ref - torch| / max |torch|, in float64
   (must be within --tol) and, for information, against torch in float32
   (within 1e-4: float32 rounding).

Exit status: 0 all passed; 1 a check failed; 77 the NumPy checks passed
but torch or torch_geometric is missing, so the torch comparison was
skipped.
"""
import argparse
import os
import subprocess
import sys
import tempfile

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
sys.path.insert(0, HERE)
import philox  # noqa: E402
import pyg_ref  # noqa: E402
import st  # noqa: E402
import train_ref  # noqa: E402

SKIP = 77


def rel(a, b):
    a, b = np.asarray(a, np.float64), np.asarray(b, np.float64)
    return float(np.max(np.abs(a - b)) / max(np.max(np.abs(b)), 1e-300))


def small_problem(rng, n=9, f=5, hidden=4, classes=3):
    src = rng.integers(0, n, size=24)
    dst = rng.integers(0, n, size=24)
    ei = np.stack([src, dst])          # duplicates and self loops included
    x = rng.normal(size=(n, f))
    y = rng.integers(0, classes, size=n)
    train = rng.random(n) < 0.6
    train[0] = True
    params = {"conv1.lin.weight": rng.normal(size=(hidden, f)) * 0.7,
              "conv1.bias": rng.normal(size=hidden) * 0.3,
              "conv2.lin.weight": rng.normal(size=(classes, hidden)) * 0.7,
              "conv2.bias": rng.normal(size=classes) * 0.3}
    return ei, x, y, train, params


def finite_differences(verbose):
    """the hand gradient against central differences; returns failures"""
    bad = []
    rng = np.random.default_rng(5)
    ei, x, y, train, params = small_problem(rng)
    g = train_ref.Graph(ei, x.shape[0])
    mult = train_ref.dropout_mask((x.shape[0], 4), 77, 3)
    # no pre-activation exactly at 0 (relu's kink) in this problem
    _, grads, _ = train_ref.gcn_loss_grad(params, g, x, y, train, mult)
    h = 1e-6
    worst = 0.0
    for k, p in params.items():
        num = np.zeros_like(p)
        for i in np.ndindex(p.shape):
            old = p[i]
            p[i] = old + h
            lp = train_ref.gcn_loss_grad(params, g, x, y, train, mult)[0]
            p[i] = old - h
            lm = train_ref.gcn_loss_grad(params, g, x, y, train, mult)[0]
            p[i] = old
            num[i] = (lp - lm) / (2 * h)
        r = rel(grads[k], num)
        worst = max(worst, r)
        if r > 1e-6:
            bad.append(f"gradient of {k}: {r:.3g} relative to central differences")
    # the forward is pyg_ref's (the reference the inference tests use)
    out = train_ref.gcn_loss_grad(params, g, x, y, train, np.ones((x.shape[0], 4)))[2]
    r = rel(out, pyg_ref.gcn_forward(x, ei, params))
    if r > 1e-12:
        bad.append(f"train_ref's forward differs from pyg_ref.gcn_forward by {r:.3g}")
    print(f"numpy: hand gradient vs central differences: max rel diff {worst:.2e}; "
          f"forward vs pyg_ref {r:.1e}")
    return bad


def load_cora(d):
    x = pyg_ref.normalize_features(np.load(os.path.join(d, "x.npy")).astype(np.float64))
    ei = np.load(os.path.join(d, "edge_index.npy")).astype(np.int64)
    y = np.load(os.path.join(d, "y.npy")).astype(np.int64)
    m = np.load(os.path.join(d, "train_mask.npy")).astype(bool)
    return x, ei, y, m


def philox_init(f, hidden, classes, seed):
    """glorot bounds through gnn_init_uniform (parameter index = its order);
    biases U(+-0.1) so that they matter"""
    shapes = [("conv1.lin.weight", (hidden, f), np.sqrt(6.0 / (hidden + f))),
              ("conv1.bias", (hidden,), 0.1),
              ("conv2.lin.weight", (classes, hidden), np.sqrt(6.0 / (classes + hidden))),
              ("conv2.bias", (classes,), 0.1)]
    return {k: philox.init_uniform(int(np.prod(s)), b, seed, i).reshape(s)
            for i, (k, s, b) in enumerate(shapes)}


def torch_train(torch, params, x, ei, y, m, masks, opt_kind, lr, wd, dtype):
    import torch.nn.functional as F
    from torch_geometric.nn import GCNConv

    class GCN(torch.nn.Module):
        def __init__(self, fin, hidden, classes):
            super().__init__()
            self.conv1 = GCNConv(fin, hidden)
            self.conv2 = GCNConv(hidden, classes)

        def forward(self, x, ei, mult):
            h = F.relu(self.conv1(x, ei))
            h = h * mult            # dropout, its Philox mask injected
            return F.log_softmax(self.conv2(h, ei), dim=1)

    W1 = params["conv1.lin.weight"]
    model = GCN(W1.shape[1], W1.shape[0], params["conv2.lin.weight"].shape[0]).to(dtype)
    model.load_state_dict({k: torch.tensor(np.asarray(v), dtype=dtype)
                           for k, v in params.items()}, strict=True)
    cls = {"adam": torch.optim.Adam, "adamw": torch.optim.AdamW,
           "sgd": torch.optim.SGD}[opt_kind]
    opt = cls(model.parameters(), lr=lr, weight_decay=wd)
    xt = torch.tensor(x, dtype=dtype)
    eit = torch.tensor(ei)
    yt = torch.tensor(y)
    mt = torch.tensor(m)
    losses = []
    model.train()
    for mult in masks:
        opt.zero_grad()
        out = model(xt, eit, torch.tensor(mult, dtype=dtype))
        loss = F.nll_loss(out[mt], yt[mt])
        loss.backward()
        opt.step()
        losses.append(loss.item())
    return np.array(losses), {k: v.detach().double().numpy()
                              for k, v in model.state_dict().items()}


def torch_checks(torch, a):
    bad = []
    x, ei, y, m = load_cora(a.data)
    inits = [("trained", st.load(os.path.join(ROOT, "examples", "gcn", "gcn_cora.safetensors"))),
             ("philox-init", philox_init(x.shape[1], 16, 7, 2024))]
    seed = 0x1234567890
    for name, init in inits:
        hidden = init["conv1.lin.weight"].shape[0]
        masks = [train_ref.dropout_mask((x.shape[0], hidden), seed, k) for k in range(a.steps)]
        for opt in ("adam", "adamw", "sgd"):
            lr, wd = 0.01, 5e-4
            l_ref, p_ref, _ = train_ref.train(init, ei, x, y, m, seed, a.steps, lr, wd, opt)
            for dtype, tol in ((torch.float64, a.tol), (torch.float32, 1e-4)):
                l_t, p_t = torch_train(torch, init, x, ei, y, m, masks, opt, lr, wd, dtype)
                dl = rel(l_ref, l_t)
                dp = max(rel(p_ref[k], p_t[k]) for k in train_ref.GCN_PARAMS)
                # how far the weights moved, to show the comparison is not trivial
                moved = max(rel(p_ref[k], init[k]) for k in train_ref.GCN_PARAMS)
                tag = f"{name:11s} {opt:5s} torch {str(dtype).split('.')[-1]}"
                print(f"{tag}: {a.steps} steps, losses {l_ref[0]:.6f} .. {l_ref[-1]:.6f}; "
                      f"rel diff loss {dl:.2e}, params {dp:.2e} (params moved {moved:.2e})")
                if not (dl <= tol and dp <= tol):
                    bad.append(f"{tag}: loss {dl:.3g}, params {dp:.3g} > {tol:g}")
    # the CLI writes what train() computes
    with tempfile.TemporaryDirectory() as d:
        w = os.path.join(d, "init.safetensors")
        st.save(w, inits[1][1])
        for nm, arr in (("x", x), ("ei", ei), ("y", y), ("m", m)):
            np.save(os.path.join(d, nm + ".npy"), arr)
        out = os.path.join(d, "out.npz")
        p = subprocess.run([sys.executable, os.path.join(HERE, "train_ref.py"), "--model", "gcn",
                            "--weights", w, "--graph", os.path.join(d, "ei.npy"),
                            "--x", os.path.join(d, "x.npy"), "--labels",
                            os.path.join(d, "y.npy"), "--train-mask", os.path.join(d, "m.npy"),
                            "--seed", hex(seed), "--steps", str(a.steps), "--out", out],
                           capture_output=True, text=True)
        if p.returncode != 0:
            bad.append("train_ref.py CLI failed: " + p.stderr.strip())
        else:
            z = np.load(out)
            l_ref, p_ref, _ = train_ref.train(inits[1][1], ei, x, y, m, seed, a.steps)
            if not (np.array_equal(z["loss"], l_ref) and
                    all(np.array_equal(z[k], p_ref[k]) for k in train_ref.GCN_PARAMS)):
                bad.append("train_ref.py's OUT.npz differs from train_ref.train()")
            else:
                print("cli: train_ref.py's npz equals train_ref.train() bit for bit")
    return bad


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--data", default=os.path.join(ROOT, "data", "cora"))
    ap.add_argument("--steps", type=int, default=5)
    ap.add_argument("--tol", type=float, default=1e-6,
                    help="relative tolerance against torch float64 (default 1e-6)")
    a = ap.parse_args(argv)
    bad = ["philox: " + b for b in philox.selftest()]
    print("philox: known answers " + ("ok" if not bad else "FAILED"))
    bad += finite_differences(False)
    if bad:
        for b in bad:
            print("FAIL:", b)
        return 1
    try:
        import warnings
        with warnings.catch_warnings():   # torch.jit.script's deprecation, in PyG
            warnings.simplefilter("ignore")
            import torch
            import torch_geometric  # noqa: F401
    except ImportError as e:
        print(f"skipped: the torch comparison needs torch and torch_geometric ({e}); "
              "the NumPy checks passed")
        return SKIP
    torch.manual_seed(0)
    bad += torch_checks(torch, a)
    for b in bad:
        print("FAIL:", b)
    print("train_selftest: " + ("PASS" if not bad else f"{len(bad)} failures"))
    return 0 if not bad else 1


if __name__ == "__main__":
    sys.exit(main())
