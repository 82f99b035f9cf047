#!/usr/bin/env python3
"""hetero_rel.py GNNRUN WORKDIR DATA [--engines LIST] [--cases LIST]: the
heterogeneous models of hetero_pyg.py and heteroconv_pyg.py against PyG
on a relational graph, gnngen's rel-shop (DATA, from --preset=rel-shop):
customers (16 features), products (32) and transactions (8), each
transaction by a customer and of a product, and the reverse relations,
the keys Zipf-like (a few customers with many transactions, many with
none).

Cases: sage-AGGR, to_hetero's 2-layer GraphSAGE with AGGR across
relations (sum, mean, max, min); gat-sum, its 2-layer GAT
(hetero_pyg.GNN); hc-AGGR, two HeteroConv layers (sum, mean, max, min,
cat; hc-stack, PyG's aggr=None, one layer) whose convs are a SAGEConv
into customers, a GATConv (2 heads averaged) and a SAGEConv into
transactions, a max-SAGEConv into products (heteroconv_pyg.Net); hc-gat-AGGR
every conv a GATConv.  Each engine's outputs, one per node type, within
1e-5 of PyG's forward in float64 on the same weights, and bitwise the
same again (hetero_pyg.Checker; on cuda-emu under memcheck, in reverse
order on 2 blocks, and racecheck).  Prints `hetero-rel: all ok` or the
failures.
"""
import sys
import warnings

import torch
from torch_geometric.nn import to_hetero

import hetero_pyg
import heteroconv_pyg

warnings.filterwarnings("ignore")

# counts are the data's; the features are gnngen's widths
NODES = {"customer": (0, 16), "product": (0, 32), "transaction": (0, 8)}
KINDS = {
    ("transaction", "by", "customer"): "sage",
    ("customer", "rev_by", "transaction"): "gat2",
    ("transaction", "of", "product"): "sagemax",
    ("product", "rev_of", "transaction"): "sage",
}
EDGES = {et: None for et in KINDS}
DSTS = ["customer", "transaction", "product"]   # in the order they first occur as targets


def main():
    ck, todo = hetero_pyg.cases(
        "sage-sum,sage-mean,sage-max,sage-min,gat-sum,hc-sum,hc-mean,hc-max,hc-min,hc-cat,hc-stack,hc-gat-sum",
        "sage-AGGR, gat-sum: to_hetero; hc-AGGR, hc-gat-AGGR: HeteroConv", NODES, EDGES, 0, data=True)
    metadata = (list(NODES), list(EDGES))
    for case, _, _ in todo:
        torch.manual_seed(0)
        kind, aggr = case.rsplit("-", 1)
        if kind in ("sage", "gat"):
            gat = kind == "gat"
            model = to_hetero(hetero_pyg.GNN(gat), metadata, aggr=aggr)
            ck.case(case, model, hetero_pyg.model_source(aggr, gat, NODES, EDGES), list(NODES))
        else:
            gat = kind == "hc-gat"
            net = heteroconv_pyg.Net(None if aggr == "stack" else aggr, gat, KINDS)
            ck.case(case, net, heteroconv_pyg.model_source(aggr, gat, NODES, KINDS, DSTS), DSTS, perturb=True)
    return ck.done("hetero-rel")


if __name__ == "__main__":
    sys.exit(main())
