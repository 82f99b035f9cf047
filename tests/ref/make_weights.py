#!/usr/bin/env python3
"""Write deterministic random float32 weights for gnncc's example models.

usage: make_weights.py OUTDIR [--in-features 1433] [--classes 7] [--seed 0]

Files (PyG state_dict key names, all float32 except num_batches_tracked):
  sage.safetensors      SAGEConv(F,16) / SAGEConv(16,C); one file for every aggr
                        conv{1,2}.lin_l.weight, conv{1,2}.lin_l.bias, conv{1,2}.lin_r.weight
  gat.safetensors       GATConv(F,8,heads=8) / GATConv(64,C,heads=1,concat=False)
  gat_mean.safetensors  GATConv(F,8,heads=4,concat=False) / GATConv(8,C,heads=2,concat=False)
                        conv{1,2}.lin.weight [H*C,in], conv{1,2}.att_src/att_dst [1,H,C],
                        conv{1,2}.bias [H*C] (concat) or [C]
  gin.safetensors       GINConv(MLP([F,32,32])) / GINConv(MLP([32,32,C]))
                        conv{1,2}.nn.lins.{0,1}.weight/bias,
                        conv{1,2}.nn.norms.0.module.{weight,bias,running_mean,running_var},
                        conv{1,2}.nn.norms.0.module.num_batches_tracked (int64, shape []),
                        conv{1,2}.eps (float32 [1])

Initialisation follows PyG roughly: Linear weights/biases U(+-1/sqrt(in))
(kaiming_uniform a=sqrt(5)), GAT lin/att glorot.  Parameters PyG would
initialise to constants are randomised so that they matter in tests: GAT
bias U(+-0.1), BatchNorm weight U(0.5,1.5), bias U(+-0.2), running_mean
U(+-0.1), running_var U(0.5,1.5), GIN eps 0.1 / -0.05.
Every file gets its own RandomState(seed + k), so the files are independent of
each other and reproducible byte for byte.
"""
import argparse
import os
import sys

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import st  # noqa: E402


def _f32(a):
    return np.asarray(a, dtype=np.float32)


def lin_default(rng, out_c, in_c, bias=True):
    """PyG Linear default init: kaiming_uniform(a=sqrt 5) = U(+-1/sqrt(in));
    bias U(+-1/sqrt(in))."""
    b = 1.0 / np.sqrt(in_c)
    w = _f32(rng.uniform(-b, b, size=(out_c, in_c)))
    return (w, _f32(rng.uniform(-b, b, size=(out_c,)))) if bias else (w, None)


def glorot(rng, shape):
    """torch_geometric.nn.inits.glorot: U(+-sqrt(6 / (size(-2) + size(-1))))."""
    a = np.sqrt(6.0 / (shape[-2] + shape[-1]))
    return _f32(rng.uniform(-a, a, size=shape))


def sage_weights(rng, f, c, hidden=16):
    sd = {}
    for p, i, o in (("conv1.", f, hidden), ("conv2.", hidden, c)):
        sd[p + "lin_l.weight"], sd[p + "lin_l.bias"] = lin_default(rng, o, i)
        sd[p + "lin_r.weight"], _ = lin_default(rng, o, i, bias=False)
    return sd


def gat_weights(rng, layers):
    """layers: list of (prefix, in, out_channels, heads, concat)."""
    sd = {}
    for p, i, o, h, concat in layers:
        sd[p + "lin.weight"] = glorot(rng, (h * o, i))
        sd[p + "att_src"] = glorot(rng, (1, h, o))
        sd[p + "att_dst"] = glorot(rng, (1, h, o))
        sd[p + "bias"] = _f32(rng.uniform(-0.1, 0.1, size=(h * o if concat else o,)))
    return sd


def gin_weights(rng, f, c, hidden=32):
    sd = {}
    for p, chans, eps in (("conv1.", (f, hidden, hidden), 0.1),
                          ("conv2.", (hidden, hidden, c), -0.05)):
        for k in range(len(chans) - 1):
            w, b = lin_default(rng, chans[k + 1], chans[k])
            sd[f"{p}nn.lins.{k}.weight"], sd[f"{p}nn.lins.{k}.bias"] = w, b
        for k in range(len(chans) - 2):
            m = f"{p}nn.norms.{k}.module."
            n = chans[k + 1]
            sd[m + "weight"] = _f32(rng.uniform(0.5, 1.5, size=(n,)))
            sd[m + "bias"] = _f32(rng.uniform(-0.2, 0.2, size=(n,)))
            sd[m + "running_mean"] = _f32(rng.uniform(-0.1, 0.1, size=(n,)))
            sd[m + "running_var"] = _f32(rng.uniform(0.5, 1.5, size=(n,)))
            sd[m + "num_batches_tracked"] = np.array(200, dtype=np.int64)  # shape []
        sd[p + "eps"] = _f32([eps])
    return sd


def build_all(f=1433, c=7, seed=0):
    """dict filename -> state dict."""
    return {
        "sage.safetensors": sage_weights(np.random.RandomState(seed + 1), f, c),
        "gat.safetensors": gat_weights(np.random.RandomState(seed + 2), [
            ("conv1.", f, 8, 8, True), ("conv2.", 64, c, 1, False)]),
        "gat_mean.safetensors": gat_weights(np.random.RandomState(seed + 3), [
            ("conv1.", f, 8, 4, False), ("conv2.", 8, c, 2, False)]),
        "gin.safetensors": gin_weights(np.random.RandomState(seed + 4), f, c),
    }


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("outdir")
    ap.add_argument("--in-features", type=int, default=1433)
    ap.add_argument("--classes", type=int, default=7)
    ap.add_argument("--seed", type=int, default=0)
    a = ap.parse_args(argv)
    os.makedirs(a.outdir, exist_ok=True)
    for name, sd in build_all(a.in_features, a.classes, a.seed).items():
        path = os.path.join(a.outdir, name)
        st.save(path, sd)
        print(f"wrote {path} ({len(sd)} tensors)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
