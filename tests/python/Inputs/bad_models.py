"""
Models gnncc.export must refuse, each with its error and the line of
this file it names (the CHECK lines are FileCheck's: export-errors.test).
Each factory returns the model in eval mode, as `python -m gnncc.export
bad_models:FACTORY` wants.
"""
import torch
import torch.nn.functional as F
from torch_geometric.nn import ChebConv, GCNConv, SAGEConv


class Cheb(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.conv = ChebConv(8, 4, K=2)

    def forward(self, x, edge_index):
        return self.conv(x, edge_index)  # CHEB: {{.*}}bad_models.py:[[@LINE]]: error: unsupported layer ChebConv (torch_geometric.nn.conv.cheb_conv.ChebConv)
# CHEB-NEXT: return self.conv(x, edge_index)


class Branch(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.conv = GCNConv(8, 4)

    def forward(self, x, edge_index):
        h = self.conv(x, edge_index)
        if h.sum() > 0:  # BRANCH: {{.*}}bad_models.py:[[@LINE]]: error: data-dependent control flow (a branch or loop on a tensor's value) cannot be exported
            h = -h
        return h


class Op(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.conv = GCNConv(8, 4)

    def forward(self, x, edge_index):
        h = F.relu(self.conv(x, edge_index))
        return torch.cumsum(h, dim=0)  # OP: {{.*}}bad_models.py:[[@LINE]]: error: unsupported operation cumsum


class Norm(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.conv = GCNConv(8, 4)
        self.norm = torch.nn.LayerNorm(4)

    def forward(self, x, edge_index):
        return self.norm(self.conv(x, edge_index))  # NORM: {{.*}}bad_models.py:[[@LINE]]: error: unsupported layer LayerNorm (torch.nn.modules.normalization.LayerNorm)


class Lstm(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.conv = SAGEConv(8, 4, aggr="lstm")

    def forward(self, x, edge_index):
        return self.conv(x, edge_index)  # LSTM: {{.*}}bad_models.py:[[@LINE]]: error: SAGEConv's aggregation 'lstm': the layer library has mean, max and sum


class Weighted(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.conv = GCNConv(8, 4)

    def forward(self, x, edge_index, edge_weight):
        return self.conv(x, edge_index, edge_weight)  # WEIGHTED: {{.*}}bad_models.py:[[@LINE]]: error: GCNConv 'conv' is called with other arguments than (x, edge_index)


def cheb():
    return Cheb().eval()


def branch():
    return Branch().eval()


def op():
    return Op().eval()


def norm():
    return Norm().eval()


def lstm():
    return Lstm().eval()


def weighted():
    return Weighted().eval()


def training():
    return Cheb()   # TRAINING: error: the model is in training mode: call model.eval() first


if __name__ == "__main__":
    # every factory through gnncc.export, each error on stderr
    import sys
    import gnncc
    for name in sys.argv[1:]:
        try:
            gnncc.export(globals()[name]())
        except gnncc.ExportError as e:
            print(e, file=sys.stderr)
        else:
            print("%s: exported" % name, file=sys.stderr)
