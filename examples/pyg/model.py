"""
model.py: a PyTorch Geometric model as its user writes it -- the
two-layer GCN of PyG's examples/gcn.py -- and `trained()`, the factory
`python -m gnncc.export model:trained` calls: the model in eval mode with
the weights PyG trained on Cora (../gcn/gcn_cora.safetensors, read here
without the safetensors package).
"""
import json
import os
import struct

import numpy as np
import torch
import torch.nn.functional as F
from torch_geometric.nn import GCNConv

HERE = os.path.dirname(os.path.abspath(__file__))


class GCN(torch.nn.Module):
    def __init__(self, fin, hidden, classes):
        super().__init__()
        self.conv1 = GCNConv(fin, hidden)
        self.conv2 = GCNConv(hidden, classes)

    def forward(self, x, edge_index):
        x = F.dropout(x, p=0.5, training=self.training)
        h = F.relu(self.conv1(x, edge_index))
        h = F.dropout(h, p=0.5, training=self.training)
        return F.log_softmax(self.conv2(h, edge_index), dim=1)


def read_state_dict(path):
    with open(path, "rb") as f:
        blob = f.read()
    n = struct.unpack("<Q", blob[:8])[0]
    out = {}
    for name, t in json.loads(blob[8:8 + n]).items():
        if name != "__metadata__":
            b, e = t["data_offsets"]
            out[name] = torch.from_numpy(np.frombuffer(blob[8 + n + b:8 + n + e], dtype="<f4").reshape(t["shape"]).copy())
    return out


def trained():
    model = GCN(1433, 16, 7)
    model.load_state_dict(read_state_dict(os.path.join(HERE, "..", "gcn", "gcn_cora.safetensors")))
    return model.eval()
