"""The PyTorch Geometric side of every model gnncc is timed or checked against.

Design: one module per .gnn model, built from torch_geometric.nn layers
the way the model file composes gnncc's layer library, with PyG's
state_dict names equal to gnncc's parameter names, so one safetensors file
loads into both.  bench/pyg_bench.py builds the benchmark's four models
from widths (``make``); tests/gpu/pyg_check.py rebuilds any checked model
from a state dict (``from_state_dict``: the widths, head counts and MLP
channels are read off the tensors' shapes, then the weights are loaded
with strict=True, so a missing or extra name fails loudly).

Kinds (the .gnn file each mirrors):
  gcn        examples/gcn/gcn.gnn, bench/models/gcn.gnn.in
  gcn_block  tests/examples/Inputs/gcn.gnn (conv1 wrapped as conv1.conv)
  sage, sage_max, sage_sum
             examples/sage/sage.gnn, tests/interp/Inputs/sage_{max,sum}.gnn,
             bench/models/sage.gnn.in
  gat        examples/gat/gat.gnn, tests/interp/Inputs/gat_mean.gnn,
             bench/models/gat.gnn.in (concat or mean per layer, from the bias)
  gin        examples/gin/gin.gnn, bench/models/gin.gnn.in
  gin_eps    tests/passes/Inputs/gin_eps.gnn (trained eps, no log_softmax)
  sage_variants  tests/passes/Inputs/sage_variants.gnn
  widen      tests/passes/Inputs/widen.gnn
  pool       tests/interp/Inputs/pool.gnn (three graph-level outputs)
  agg        bench/models/agg.gnn.in (sum over in-edges, no parameters)
"""
import torch
import torch.nn.functional as F
from torch_geometric.nn import (MLP, GATConv, GCNConv, GINConv, SAGEConv, global_add_pool,
                                global_max_pool, global_mean_pool)
from torch_geometric.utils import scatter

KINDS = ["gcn", "gcn_block", "sage", "sage_max", "sage_sum", "gat", "gin", "gin_eps",
         "sage_variants", "widen", "pool", "agg"]


class GCN(torch.nn.Module):
    """GCNConv -> relu -> GCNConv -> log_softmax (dropout: identity in eval)."""

    def __init__(self, fin, hidden, classes, cached=True):
        super().__init__()
        self.conv1 = GCNConv(fin, hidden, cached=cached)
        self.conv2 = GCNConv(hidden, classes, cached=cached)

    def forward(self, x, edge_index):
        x = F.dropout(x, p=0.5, training=self.training)
        h = F.relu(self.conv1(x, edge_index))
        h = F.dropout(h, p=0.5, training=self.training)
        return F.log_softmax(self.conv2(h, edge_index), dim=1)


class _Block(torch.nn.Module):
    """tests/examples/Inputs/block.gnn's GCNBlock: relu(GCNConv)."""

    def __init__(self, fin, out):
        super().__init__()
        self.conv = GCNConv(fin, out)

    def forward(self, x, edge_index):
        return F.relu(self.conv(x, edge_index))


class GCNBlock(torch.nn.Module):
    def __init__(self, fin, hidden, classes):
        super().__init__()
        self.conv1 = _Block(fin, hidden)
        self.conv2 = GCNConv(hidden, classes)

    def forward(self, x, edge_index):
        return F.log_softmax(self.conv2(self.conv1(x, edge_index), edge_index), dim=1)


class SAGE(torch.nn.Module):
    def __init__(self, fin, hidden, classes, aggr="mean"):
        super().__init__()
        self.conv1 = SAGEConv(fin, hidden, aggr=aggr)
        self.conv2 = SAGEConv(hidden, classes, aggr=aggr)

    def forward(self, x, edge_index):
        h = F.relu(self.conv1(x, edge_index))
        h = F.dropout(h, p=0.5, training=self.training)
        return F.log_softmax(self.conv2(h, edge_index), dim=1)


class GAT(torch.nn.Module):
    """PyG's examples/gat.py shape: GATConv -> elu -> GATConv -> log_softmax."""

    def __init__(self, fin, hidden, heads, classes, out_heads=1, concat1=True,
                 concat2=False):
        super().__init__()
        self.conv1 = GATConv(fin, hidden, heads=heads, concat=concat1, dropout=0.6)
        width = heads * hidden if concat1 else hidden
        self.conv2 = GATConv(width, classes, heads=out_heads, concat=concat2, dropout=0.6)

    def forward(self, x, edge_index):
        x = F.dropout(x, p=0.6, training=self.training)
        h = F.elu(self.conv1(x, edge_index))
        h = F.dropout(h, p=0.6, training=self.training)
        return F.log_softmax(self.conv2(h, edge_index), dim=1)


class GIN(torch.nn.Module):
    """Two GINConv(MLP) layers with relu between, as examples/gin/gin.gnn:
    each nn is PyG's MLP (Linear, BatchNorm, ReLU, Linear)."""

    def __init__(self, chans1, chans2, log_softmax=True, eps1=0.0, train_eps1=False):
        super().__init__()
        self.conv1 = GINConv(MLP(chans1), eps=eps1, train_eps=train_eps1)
        self.conv2 = GINConv(MLP(chans2))
        self.log_softmax = log_softmax

    def forward(self, x, edge_index):
        h = self.conv2(F.relu(self.conv1(x, edge_index)), edge_index)
        return F.log_softmax(h, dim=1) if self.log_softmax else h


class SAGEVariants(torch.nn.Module):
    def __init__(self, w):
        super().__init__()
        self.conv1 = SAGEConv(w[0], w[1], aggr="sum")
        self.conv2 = SAGEConv(w[1], w[2], aggr="mean", project=True)
        self.conv3 = SAGEConv(w[2], w[3], aggr="max")
        self.conv4 = SAGEConv(w[3], w[4], aggr="mean", normalize=True, root_weight=False)

    def forward(self, x, edge_index):
        h = F.relu(self.conv1(x, edge_index))
        h = F.relu(self.conv2(h, edge_index))
        h = F.relu(self.conv3(h, edge_index))
        return self.conv4(h, edge_index)


class Widen(torch.nn.Module):
    def __init__(self, fin, out):
        super().__init__()
        self.conv = GCNConv(fin, out)

    def forward(self, x, edge_index):
        return self.conv(x, edge_index)


class Pool(torch.nn.Module):
    def __init__(self, fin, out):
        super().__init__()
        self.conv = GCNConv(fin, out)

    def forward(self, x, edge_index, batch):
        h = F.relu(self.conv(x, edge_index))
        b = int(batch.max()) + 1 if batch.numel() else 0
        return (global_add_pool(h, batch, b), global_mean_pool(h, batch, b),
                global_max_pool(h, batch, b))


class Agg(torch.nn.Module):
    def forward(self, x, edge_index):
        return scatter(x[edge_index[0]], edge_index[1], dim=0, dim_size=x.size(0),
                       reduce="sum")


def make(kind, fin, hidden, classes, heads=8):
    """The benchmark's models from widths (PyG's own initialization).
    gat: `heads` heads of `hidden` units each, then one averaged head."""
    if kind == "gcn":
        return GCN(fin, hidden, classes)
    if kind == "sage":
        return SAGE(fin, hidden, classes)
    if kind == "gat":
        return GAT(fin, hidden, heads, classes)
    if kind == "gin":
        return GIN([fin, hidden, hidden], [hidden, hidden, classes])
    if kind == "agg":
        return Agg()
    raise ValueError(f"no benchmark model {kind!r}")


def _mlp_chans(sd, prefix):
    k, chans = 0, []
    while f"{prefix}lins.{k}.weight" in sd:
        w = sd[f"{prefix}lins.{k}.weight"]
        if not chans:
            chans.append(w.shape[1])
        chans.append(w.shape[0])
        k += 1
    return chans


def _gat_layer(sd, p):
    _, heads, out = sd[p + "att_src"].shape
    concat = heads == 1 or sd[p + "bias"].shape[0] == heads * out
    return heads, out, concat


def from_state_dict(kind, sd):
    """A module of `kind` with the widths of state dict `sd` (name -> tensor
    or array) and its weights loaded (strict: every name must match)."""
    sd = {k: torch.as_tensor(v) for k, v in sd.items()}
    if kind == "gcn":
        m = GCN(sd["conv1.lin.weight"].shape[1], sd["conv1.lin.weight"].shape[0],
                sd["conv2.lin.weight"].shape[0], cached=False)
    elif kind == "gcn_block":
        m = GCNBlock(sd["conv1.conv.lin.weight"].shape[1], sd["conv1.conv.lin.weight"].shape[0],
                     sd["conv2.lin.weight"].shape[0])
    elif kind in ("sage", "sage_max", "sage_sum"):
        aggr = {"sage": "mean", "sage_max": "max", "sage_sum": "sum"}[kind]
        m = SAGE(sd["conv1.lin_l.weight"].shape[1], sd["conv1.lin_l.weight"].shape[0],
                 sd["conv2.lin_l.weight"].shape[0], aggr=aggr)
    elif kind == "gat":
        h1, c1, cat1 = _gat_layer(sd, "conv1.")
        h2, c2, cat2 = _gat_layer(sd, "conv2.")
        m = GAT(sd["conv1.lin.weight"].shape[1], c1, h1, c2, out_heads=h2, concat1=cat1,
                concat2=cat2)
    elif kind in ("gin", "gin_eps"):
        eps = float(sd["conv1.eps"].reshape(-1)[0])
        m = GIN(_mlp_chans(sd, "conv1.nn."), _mlp_chans(sd, "conv2.nn."),
                log_softmax=kind == "gin", eps1=eps, train_eps1=kind == "gin_eps")
    elif kind == "sage_variants":
        w = [sd["conv1.lin_l.weight"].shape[1]] + [
            sd[f"conv{i}.lin_l.weight"].shape[0] for i in range(1, 5)]
        m = SAGEVariants(w)
    elif kind == "widen":
        m = Widen(sd["conv.lin.weight"].shape[1], sd["conv.lin.weight"].shape[0])
    elif kind == "pool":
        m = Pool(sd["conv.lin.weight"].shape[1], sd["conv.lin.weight"].shape[0])
    elif kind == "agg":
        m = Agg()
    else:
        raise ValueError(f"unknown model kind {kind!r} (known: {', '.join(KINDS)})")
    m.load_state_dict(sd, strict=True)
    return m
