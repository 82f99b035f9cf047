"""
export.py [DIR]: model.py's graph and models to files gnncc reads, in DIR
(default out/): each model's weights (its state_dict, unchanged, as
safetensors), one edge_index .npy per relation (named src__rel__dst),
one feature .npy per node type (x_TYPE), and PyG's outputs for checking
(pyg_MODEL_TYPE.npy).
"""
import os
import sys

import numpy as np
import torch

import gnncc
from model import data, heteroconv, sage

out = sys.argv[1] if len(sys.argv) > 1 else "out"
os.makedirs(out, exist_ok=True)
d = data()
for t in d.node_types:
    np.save(f"{out}/x_{t}.npy", d[t].x.numpy())
for et in d.edge_types:
    np.save(f"{out}/{'__'.join(et)}.npy", d[et].edge_index.numpy())
for name, model in [("sage", sage(d)), ("heteroconv", heteroconv(d))]:
    gnncc.save_safetensors(f"{out}/{name}.safetensors", model.state_dict())
    with torch.no_grad():
        y = model(d.x_dict, d.edge_index_dict)
    for t, v in y.items():
        np.save(f"{out}/pyg_{name}_{t}.npy", v.numpy())
    print(f"{name}: {len(model.state_dict())} tensors; outputs " +
          ", ".join(f"{t} {list(v.shape)}" for t, v in y.items()))
