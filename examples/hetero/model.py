"""
A heterogeneous graph (PyG's HeteroData) and two PyG models over it, as a
PyG user writes them; nothing here knows about gnncc.

The graph: authors write papers, papers cite papers, authors are
affiliated with institutions; each relation has its reverse where the
models need one.  Random and seeded, the size of a small example.

- sage(): PyG's to_hetero tutorial model, a two-layer GraphSAGE turned
  heterogeneous by torch_geometric.nn.to_hetero (aggr "sum").
- heteroconv(): one HeteroConv with a different conv per relation, its
  results concatenated per node type (aggr "cat").
"""
import torch
from torch_geometric.data import HeteroData
from torch_geometric.nn import GATConv, GCNConv, HeteroConv, SAGEConv, to_hetero


def data(seed=0):
    g = torch.Generator().manual_seed(seed)
    d = HeteroData()
    d["author"].x = torch.randn(40, 8, generator=g)
    d["paper"].x = torch.randn(60, 12, generator=g)
    d["institution"].x = torch.randn(5, 4, generator=g)
    writes = torch.stack([torch.randint(0, 40, (120,), generator=g), torch.randint(0, 60, (120,), generator=g)])
    affiliated = torch.stack([torch.arange(40), torch.randint(0, 5, (40,), generator=g)])
    d["author", "writes", "paper"].edge_index = writes
    d["paper", "rev_writes", "author"].edge_index = writes.flip(0)
    d["paper", "cites", "paper"].edge_index = torch.randint(0, 60, (2, 150), generator=g)
    d["author", "affiliated_with", "institution"].edge_index = affiliated
    d["institution", "employs", "author"].edge_index = affiliated.flip(0)
    return d


class GNN(torch.nn.Module):
    def __init__(self, hidden, out):
        super().__init__()
        self.conv1 = SAGEConv((-1, -1), hidden)
        self.conv2 = SAGEConv((-1, -1), out)

    def forward(self, x, edge_index):
        x = self.conv1(x, edge_index).relu()
        return self.conv2(x, edge_index)


def sage(d):
    torch.manual_seed(0)
    model = to_hetero(GNN(16, 4), d.metadata(), aggr="sum")
    with torch.no_grad():
        model(d.x_dict, d.edge_index_dict)    # lazy (-1, -1) shapes are set by a first forward
    return model.eval()


class HC(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.conv = HeteroConv({
            ("author", "writes", "paper"): SAGEConv((-1, -1), 16),
            ("paper", "cites", "paper"): GCNConv(-1, 16),
            ("paper", "rev_writes", "author"): GATConv((-1, -1), 16, heads=2, concat=False, add_self_loops=False),
            ("institution", "employs", "author"): SAGEConv((-1, -1), 16, aggr="max"),
        }, aggr="cat")

    def forward(self, x, edge_index):
        return {t: h.relu() for t, h in self.conv(x, edge_index).items()}


def heteroconv(d):
    torch.manual_seed(0)
    model = HC()
    with torch.no_grad():
        model(d.x_dict, d.edge_index_dict)
    return model.eval()
