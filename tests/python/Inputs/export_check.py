"""
Export PyG models with gnncc.export, compile the .gnn with gnncc.compile
and compare the compiled model's outputs on Cora with PyG's own forward
(the reference), all from one safetensors file: for each model, the
largest difference relative to the largest output, against 1e-5.
Models: the benchmark's four (bench/pyg_models.py) and compositions
defined here, each with random weights (seeded; BatchNorm's running
statistics made non-trivial) in eval mode.

    export_check.py BENCH_DIR DATA_DIR OUTDIR [--targets cpu,emu] MODEL...

Each model is exported once; every target loads the same safetensors file.
"""
import argparse
import os
import sys

import numpy as np
import torch
import torch.nn.functional as F
from torch_geometric.nn import (BatchNorm, GATConv, GCNConv, GINConv, MLP, SAGEConv, TransformerConv,
                                global_add_pool)

import gnncc

ap = argparse.ArgumentParser()
ap.add_argument("bench")
ap.add_argument("data")
ap.add_argument("outdir")
ap.add_argument("--targets", default="cpu")
ap.add_argument("models", nargs="+")
a = ap.parse_args()
sys.path.insert(0, a.bench)
import pyg_models  # noqa: E402


class Sage3(torch.nn.Module):
    """three SAGEConv layers with BatchNorm and residual sums"""

    def __init__(self, fin, hid, classes):
        super().__init__()
        self.conv1 = SAGEConv(fin, hid)
        self.bn1 = BatchNorm(hid)
        self.conv2 = SAGEConv(hid, hid, aggr="max")
        self.bn2 = BatchNorm(hid)
        self.conv3 = SAGEConv(hid, classes, aggr="sum")

    def forward(self, x, edge_index):
        h = F.relu(self.bn1(self.conv1(x, edge_index)))
        h = h + F.relu(self.bn2(self.conv2(h, edge_index)))
        h = F.dropout(h, p=0.3, training=self.training)
        return F.log_softmax(self.conv3(h, edge_index), dim=-1)


class SageList(torch.nn.Module):
    """Sage3 as PyG's examples write it: ModuleLists and a loop"""

    def __init__(self, fin, hid, classes, layers=3):
        super().__init__()
        widths = [fin] + [hid] * (layers - 1) + [classes]
        self.convs = torch.nn.ModuleList(SAGEConv(a, b) for a, b in zip(widths, widths[1:]))
        self.norms = torch.nn.ModuleList(BatchNorm(hid) for _ in range(layers - 1))

    def forward(self, x, edge_index):
        h = F.relu(self.norms[0](self.convs[0](x, edge_index)))
        for conv, norm in zip(self.convs[1:-1], self.norms[1:]):
            h = h + F.relu(norm(conv(h, edge_index)))
        return F.log_softmax(self.convs[-1](h, edge_index), dim=-1)


class GatGcn(torch.nn.Module):
    """GAT with concatenated heads into GCN"""

    def __init__(self, fin, hid, classes):
        super().__init__()
        self.gat = GATConv(fin, hid, heads=4)
        self.gcn = GCNConv(4 * hid, classes)

    def forward(self, x, edge_index):
        return self.gcn(torch.tanh(self.gat(x, edge_index)), edge_index).log_softmax(dim=1)


class GinPool(torch.nn.Module):
    """GIN with sum pooling over a batch of graphs and a Linear head"""

    def __init__(self, fin, hid, classes):
        super().__init__()
        self.conv1 = GINConv(MLP([fin, hid, hid]), train_eps=True)
        self.conv2 = GINConv(MLP([hid, hid, hid], norm=None))
        self.head = torch.nn.Linear(hid, classes)

    def forward(self, x, edge_index, batch):
        h = F.relu(self.conv1(x, edge_index))
        h = self.conv2(h, edge_index)
        return self.head(global_add_pool(h, batch))


class JumpCat(torch.nn.Module):
    """two GCN layers whose outputs are concatenated (jumping knowledge)
    into a Linear classifier"""

    def __init__(self, fin, hid, classes):
        super().__init__()
        self.conv1 = GCNConv(fin, hid)
        self.conv2 = GCNConv(hid, hid)
        self.lin = torch.nn.Linear(2 * hid, classes)

    def forward(self, x, edge_index):
        h1 = F.relu(self.conv1(x, edge_index))
        h2 = F.relu(self.conv2(h1, edge_index))
        return self.lin(torch.cat([h1, h2], dim=-1))


class Transformer(torch.nn.Module):
    """TransformerConv with beta and concatenated heads, then averaged heads"""

    def __init__(self, fin, hid, classes):
        super().__init__()
        self.conv1 = TransformerConv(fin, hid, heads=2, beta=True)
        self.conv2 = TransformerConv(2 * hid, classes, heads=2, concat=False)

    def forward(self, x, edge_index):
        h = F.elu(self.conv1(x, edge_index))
        return F.log_softmax(self.conv2(h, edge_index), dim=-1)


fin, classes = 1433, 7
MODELS = {
    "gcn": lambda: pyg_models.make("gcn", fin, 16, classes),
    "sage": lambda: pyg_models.make("sage", fin, 16, classes),
    "gat": lambda: pyg_models.make("gat", fin, 8, classes),
    "gin": lambda: pyg_models.make("gin", fin, 32, classes),
    "sage3": lambda: Sage3(fin, 32, classes),
    "gatgcn": lambda: GatGcn(fin, 8, classes),
    "ginpool": lambda: GinPool(fin, 32, classes),
    "jumpcat": lambda: JumpCat(fin, 16, classes),
    "sagelist": lambda: SageList(fin, 32, classes),
    "transformer": lambda: Transformer(fin, 8, classes),
}

x = np.load(os.path.join(a.data, "x.npy")).astype(np.float32)
x = (x / np.maximum(x.sum(1, keepdims=True), 1)).astype(np.float32)
ei = np.load(os.path.join(a.data, "edge_index.npy"))
n = x.shape[0]
batch = (np.arange(n) * 5 // n).astype(np.int64)     # five graphs of consecutive nodes

for name in a.models:
    torch.manual_seed(7)
    model = MODELS[name]()
    for m in model.modules():   # running statistics far from (0, 1)
        if isinstance(m, torch.nn.BatchNorm1d):
            m.running_mean.uniform_(-0.5, 0.5)
            m.running_var.uniform_(0.5, 2.0)
            m.weight.data.uniform_(0.5, 1.5)
            m.bias.data.uniform_(-0.5, 0.5)
    model.eval()
    gnn = os.path.join(a.outdir, name + ".gnn")
    st = os.path.join(a.outdir, name + ".safetensors")
    gnncc.export(model, torch.from_numpy(x), torch.from_numpy(ei), out=gnn, weights=st)
    args = (torch.from_numpy(x), torch.from_numpy(ei))
    pooled = name == "ginpool"
    if pooled:
        args += (torch.from_numpy(batch),)
    with torch.no_grad():
        ref = model(*args).numpy().astype(np.float64)
    for target in a.targets.split(","):
        cm = gnncc.compile(gnn, target="cuda", emulate="run") if target == "emu" else gnncc.compile(gnn, target="cpu")
        cm.load_weights(st)
        cm.bind(ei, num_nodes=n, batch=batch if pooled else None)
        out = cm(x=x)
        err = np.abs(out - ref).max() / max(np.abs(ref).max(), 1e-30)
        print("%s: %s %s, %s" % (name, target, list(out.shape),
                                 "within 1e-5 of PyG" if err <= 1e-5 else "relative error %.3g" % err))
