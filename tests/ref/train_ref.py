#!/usr/bin/env python3
"""NumPy float64 reference of gnncc's full-graph training steps for the GCN
example model (examples/gcn/gcn.gnn); the gradient is written out by hand
(no autograd).  NumPy only.

usage: train_ref.py --model gcn --weights INIT.safetensors --graph EI.npy
                    --x X.npy --labels Y.npy --train-mask M.npy --seed S
                    --steps K [--lr 0.01] [--weight-decay 5e-4]
                    [--optimizer adam|sgd|adamw] [--normalize-features]
                    --out OUT.npz

Exit status: 0 written; 2 bad arguments or inputs (argparse's status).

The model (PyG 2.8 semantics, see pyg_ref.py):
    a1 = A_hat (x @ W1^T) + b1          conv1 = GCNConv(1433, 16)
    h  = relu(a1)
    d  = dropout(h, p=0.5)              stream 0 (the model's first dropout)
    a2 = A_hat (d @ W2^T) + b2          conv2 = GCNConv(16, 7)
    out = log_softmax(a2, dim=1)
A_hat: add_remaining_self_loops, then w_e = deg^-1/2[src] deg^-1/2[dst]
with deg the in-degree (by target) including the loop; (A_hat h)[i] =
sum over edges e with dst_e = i of w_e h[src_e].

A step (the k-th, k = 0, 1, ...): dropout's mask from philox.py with
(seed, step = k, stream 0): element t = n * 16 + j of h is kept iff
u >= float32(0.5), a kept one scaled by float32(1/(1-p)) = 2;
loss = nll_loss(out[train], y[train]) (mean over the training nodes);
gradients by hand; then one optimizer update of every parameter:
  adam   torch.optim.Adam(lr, betas=(0.9, 0.999), eps=1e-8, weight_decay):
         g += wd * p; m = b1 m + (1 - b1) g; v = b2 v + (1 - b2) g^2;
         p -= lr / (1 - b1^t) * m / (sqrt(v) / sqrt(1 - b2^t) + eps), t = k + 1
  adamw  torch.optim.AdamW: p *= 1 - lr * wd first, then Adam without the L2 term
  sgd    torch.optim.SGD (no momentum): p -= lr * (g + wd * p)
Weight decay applies to every parameter, biases included (as
torch.optim.Adam(model.parameters(), weight_decay=...) does).

OUT.npz: loss [K] (the loss of step k's forward, before its update),
the final parameters under their PyG names (conv1.lin.weight [16, 1433],
conv1.bias [16], conv2.lin.weight [7, 16], conv2.bias [7]), float64, and
the optimizer state: exp_avg.NAME, exp_avg_sq.NAME (Adam/AdamW), and
steps, seed, lr, weight_decay.
"""
import argparse
import os
import sys

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import philox  # noqa: E402
import pyg_ref  # noqa: E402
import st  # noqa: E402

GCN_PARAMS = ["conv1.lin.weight", "conv1.bias", "conv2.lin.weight", "conv2.bias"]
DROPOUT_P = 0.5
DROPOUT_STREAM = 0


class Graph:
    """A_hat of gcn_norm as (src, dst, w) over the edges with loops added."""

    def __init__(self, edge_index, n):
        ei, w = pyg_ref.gcn_norm(edge_index, None, n)
        self.n, self.src, self.dst, self.w = n, ei[0], ei[1], w

    def prop(self, h):
        """out[i] = sum_{e: dst_e = i} w_e h[src_e]"""
        out = np.zeros((self.n,) + h.shape[1:])
        np.add.at(out, self.dst, self.w[:, None] * h[self.src])
        return out

    def prop_t(self, g):
        """the transpose: out[j] = sum_{e: src_e = j} w_e g[dst_e]"""
        out = np.zeros((self.n,) + g.shape[1:])
        np.add.at(out, self.src, self.w[:, None] * g[self.dst])
        return out


def dropout_mask(shape, seed, step, p=DROPOUT_P, stream=DROPOUT_STREAM):
    """float64 multiplier: float32(1/(1-p)) where kept, 0 where dropped"""
    keep = philox.dropout_mask(shape, p, seed, step, stream)
    return np.where(keep, float(philox.dropout_scale(p)), 0.0)


def gcn_loss_grad(params, g, x, y, train, mult):
    """One forward and backward.  params: name -> float64 array; mult: the
    dropout multiplier of h ([N, hidden]; ones for no dropout).
    Returns (loss, grads name -> array, out = log-probabilities)."""
    W1, b1 = params["conv1.lin.weight"], params["conv1.bias"]
    W2, b2 = params["conv2.lin.weight"], params["conv2.bias"]
    # forward
    z1 = x @ W1.T
    a1 = g.prop(z1) + b1
    h = np.maximum(a1, 0.0)
    d = h * mult
    z2 = d @ W2.T
    a2 = g.prop(z2) + b2
    out = pyg_ref.log_softmax(a2)
    idx = np.flatnonzero(train)
    nt = len(idx)
    loss = -np.mean(out[idx, y[idx]])
    # backward
    g_out = np.zeros_like(out)
    g_out[idx, y[idx]] = -1.0 / nt
    g_a2 = g_out - np.exp(out) * g_out.sum(axis=1, keepdims=True)   # log_softmax
    g_b2 = g_a2.sum(axis=0)
    g_z2 = g.prop_t(g_a2)
    g_W2 = g_z2.T @ d
    g_d = g_z2 @ W2
    g_h = g_d * mult
    g_a1 = g_h * (a1 > 0)             # relu: the gradient passes where the output > 0
    g_b1 = g_a1.sum(axis=0)
    g_z1 = g.prop_t(g_a1)
    g_W1 = g_z1.T @ x
    grads = {"conv1.lin.weight": g_W1, "conv1.bias": g_b1,
             "conv2.lin.weight": g_W2, "conv2.bias": g_b2}
    return loss, grads, out


class Optimizer:
    """torch.optim.Adam / AdamW / SGD (no momentum), float64, per parameter."""

    def __init__(self, kind, lr, weight_decay, betas=(0.9, 0.999), eps=1e-8):
        self.kind, self.lr, self.wd, self.betas, self.eps = kind, lr, weight_decay, betas, eps
        self.t = 0
        self.m, self.v = {}, {}

    def step(self, params, grads):
        self.t += 1
        b1, b2 = self.betas
        for k in params:
            p, gr = params[k], grads[k]
            if self.kind == "sgd":
                params[k] = p - self.lr * (gr + self.wd * p)
                continue
            if self.kind == "adam":
                gr = gr + self.wd * p
            else:   # adamw: decoupled decay first
                p = p * (1.0 - self.lr * self.wd)
            m = self.m.get(k, np.zeros_like(p))
            v = self.v.get(k, np.zeros_like(p))
            m = b1 * m + (1.0 - b1) * gr
            v = b2 * v + (1.0 - b2) * gr * gr
            self.m[k], self.v[k] = m, v
            bc1 = 1.0 - b1 ** self.t
            bc2 = 1.0 - b2 ** self.t
            denom = np.sqrt(v) / np.sqrt(bc2) + self.eps
            params[k] = p - (self.lr / bc1) * m / denom


def train(params, edge_index, x, y, train_mask, seed, steps, lr=0.01, weight_decay=5e-4,
          optimizer="adam", masks=None):
    """K steps from `params` (name -> array; copied, float64).  masks: None
    (gnncc's Philox dropout) or a list of K multipliers to use instead.
    Returns (losses [K], final params, the Optimizer)."""
    x = np.asarray(x, dtype=np.float64)
    y = np.asarray(y, dtype=np.int64)
    train_mask = np.asarray(train_mask).astype(bool)
    params = {k: np.array(params[k], dtype=np.float64) for k in GCN_PARAMS}
    g = Graph(edge_index, x.shape[0])
    opt = Optimizer(optimizer, lr, weight_decay)
    hidden = params["conv1.lin.weight"].shape[0]
    losses = []
    for k in range(steps):
        mult = masks[k] if masks is not None else dropout_mask((x.shape[0], hidden), seed, k)
        loss, grads, _ = gcn_loss_grad(params, g, x, y, train_mask, mult)
        losses.append(loss)
        opt.step(params, grads)
    return np.array(losses), params, opt


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--model", choices=["gcn"], required=True)
    ap.add_argument("--weights", required=True, help="initial parameters (safetensors)")
    ap.add_argument("--graph", required=True, help="edge_index.npy, int [2, E]")
    ap.add_argument("--x", required=True, help="features .npy [N, F] (used as given)")
    ap.add_argument("--labels", required=True, help="int labels .npy [N]")
    ap.add_argument("--train-mask", required=True, help="bool (or 0/1) mask .npy [N]")
    ap.add_argument("--seed", type=lambda s: int(s, 0), required=True)
    ap.add_argument("--steps", type=int, required=True)
    ap.add_argument("--lr", type=float, default=0.01)
    ap.add_argument("--weight-decay", type=float, default=5e-4)
    ap.add_argument("--optimizer", choices=["adam", "sgd", "adamw"], default="adam")
    ap.add_argument("--normalize-features", action="store_true",
                    help="apply PyG's NormalizeFeatures to x first")
    ap.add_argument("--out", required=True, help="output .npz")
    a = ap.parse_args(argv)

    x = np.load(a.x).astype(np.float64)
    ei = np.load(a.graph).astype(np.int64)
    y = np.load(a.labels).astype(np.int64)
    m = np.load(a.train_mask)
    if ei.ndim != 2 or ei.shape[0] != 2:
        ap.error(f"edge_index must be [2, E], got {ei.shape}")
    n = x.shape[0]
    if ei.size and (ei.min() < 0 or ei.max() >= n):
        ap.error("edge_index has out-of-range node ids")
    if y.shape != (n,) or m.shape != (n,):
        ap.error(f"labels {y.shape} and train mask {m.shape} must be [{n}]")
    if m.dtype != np.bool_ and not np.isin(m, (0, 1)).all():
        ap.error("the train mask must be bool or 0/1")
    m = m.astype(bool)
    if not m.any():
        ap.error("the train mask selects no node")
    if a.steps < 0:
        ap.error("--steps must be >= 0")
    if a.normalize_features:
        x = pyg_ref.normalize_features(x)
    sd = st.load(a.weights)
    missing = [k for k in GCN_PARAMS if k not in sd]
    extra = sorted(set(sd) - set(GCN_PARAMS))
    if missing or extra:
        ap.error(f"{a.weights}: missing {missing}, unexpected {extra}")
    if sd["conv1.lin.weight"].shape[1] != x.shape[1]:
        ap.error(f"conv1.lin.weight is {list(sd['conv1.lin.weight'].shape)}, x has "
                 f"{x.shape[1]} features")
    classes = sd["conv2.lin.weight"].shape[0]
    if m.any() and (y[m].min() < 0 or y[m].max() >= classes):
        ap.error(f"training labels outside 0..{classes - 1}")

    losses, params, opt = train(sd, ei, x, y, m, a.seed, a.steps, a.lr, a.weight_decay,
                                a.optimizer)
    out = {"loss": losses, "steps": np.int64(a.steps), "seed": np.uint64(a.seed),
           "lr": np.float64(a.lr), "weight_decay": np.float64(a.weight_decay)}
    out.update(params)
    for k in opt.m:
        out["exp_avg." + k] = opt.m[k]
        out["exp_avg_sq." + k] = opt.v[k]
    np.savez(a.out, **out)
    for k, l in enumerate(losses):
        print(f"step {k}: loss {l:.10f}")
    print(f"wrote {a.out}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
