"""Independent NumPy float64 reference implementations of PyG 2.8 layers.

Written from the PyG semantics (see shared/notes/pyg-semantics.md beside the checkout,
sections 0-5), not translated from any other implementation.  Everything is
computed in float64; weights stored as float32 are widened on load.

Conventions copied from PyG (``MessagePassing``, default
``flow='source_to_target'``):
  * ``edge_index`` is int [2, E]; row 0 = source j, row 1 = target i;
  * messages travel j -> i and are aggregated at the target, i.e. grouped by
    ``edge_index[1]``;
  * ``Linear``: y = x @ W.T + b with W of shape [out, in].

Aggregations (``torch_geometric.utils.scatter``):
  * sum:  ``scatter_add_`` into zeros -> empty group gives 0;
  * mean: sum / count.clamp(min=1)     -> empty group gives 0;
  * max:  ``scatter_reduce_(amax, include_self=False)`` into zeros
          -> empty group gives 0 (not -inf).
"""

import numpy as np

__all__ = [
    "scatter", "remove_self_loops", "add_self_loops",
    "add_remaining_self_loops", "gcn_norm", "gcn_conv", "sage_conv",
    "gat_conv", "gin_conv", "mlp", "batch_norm_eval", "softmax_by_index",
    "relu", "elu", "leaky_relu", "log_softmax", "l2_normalize",
    "normalize_features", "gcn_forward", "sage_forward", "gat_forward",
    "gat_mean_forward", "gin_forward", "MODELS",
]


# ---------------------------------------------------------------------------
# elementwise / row-wise ops
# ---------------------------------------------------------------------------

def relu(x):
    """torch.relu: max(x, 0)."""
    return np.maximum(x, 0.0)


def elu(x, alpha=1.0):
    """F.elu (alpha=1): x if x > 0 else alpha * (exp(x) - 1)."""
    return np.where(x > 0, x, alpha * np.expm1(np.minimum(x, 0.0)))


def leaky_relu(x, negative_slope=0.2):
    """F.leaky_relu: x if x >= 0 else negative_slope * x."""
    return np.where(x >= 0, x, negative_slope * x)


def log_softmax(x, axis=-1):
    """F.log_softmax(x, dim=-1): x - max - log(sum(exp(x - max)))."""
    m = np.max(x, axis=axis, keepdims=True)
    z = x - m
    return z - np.log(np.sum(np.exp(z), axis=axis, keepdims=True))


def l2_normalize(x, eps=1e-12):
    """F.normalize(x, p=2, dim=-1): x / max(||x||_2, eps)."""
    n = np.sqrt(np.sum(x * x, axis=-1, keepdims=True))
    return x / np.maximum(n, eps)


def normalize_features(x):
    """torch_geometric.transforms.NormalizeFeatures (PyG >= 2.0.4):

        x = x - x.min()                          # global minimum
        x = x / x.sum(-1, keepdim=True).clamp(min=1)

    For Cora (binary features, min 0) this is "divide each row by its sum,
    leave all-zero rows unchanged".  Note the clamp: a row whose sum is in
    (0, 1) is NOT rescaled to sum 1 -- copied from PyG on purpose."""
    x = np.asarray(x, dtype=np.float64)
    if x.size == 0:
        return x.copy()
    x = x - x.min()
    s = np.maximum(x.sum(axis=-1, keepdims=True), 1.0)
    return x / s


def linear(x, weight, bias=None):
    """torch.nn.functional.linear / PyG Linear: x @ W.T (+ b), W [out, in]."""
    y = x @ np.asarray(weight, dtype=np.float64).T
    if bias is not None:
        y = y + np.asarray(bias, dtype=np.float64)
    return y


# ---------------------------------------------------------------------------
# scatter / graph utilities
# ---------------------------------------------------------------------------

def scatter(src, index, dim_size, reduce="sum"):
    """torch_geometric.utils.scatter along dim 0.

    sum  -> zeros + scatter_add_ (empty group 0)
    mean -> sum / count.clamp(min=1) (empty group 0)
    max  -> scatter_reduce_('amax', include_self=False) on zeros: groups with
            no element stay 0; groups with elements get their true max (which
            may be negative)."""
    src = np.asarray(src, dtype=np.float64)
    index = np.asarray(index, dtype=np.int64)
    shape = (dim_size,) + src.shape[1:]
    if reduce in ("sum", "add"):
        out = np.zeros(shape)
        np.add.at(out, index, src)
        return out
    if reduce == "mean":
        out = np.zeros(shape)
        np.add.at(out, index, src)
        cnt = np.bincount(index, minlength=dim_size).astype(np.float64)
        cnt = np.maximum(cnt, 1.0).reshape((dim_size,) + (1,) * (src.ndim - 1))
        return out / cnt
    if reduce == "max":
        out = np.full(shape, -np.inf)
        np.maximum.at(out, index, src)
        cnt = np.bincount(index, minlength=dim_size)
        out[cnt == 0] = 0.0
        return out
    raise ValueError(f"unknown reduce {reduce!r}")


def remove_self_loops(edge_index, edge_attr=None):
    """torch_geometric.utils.remove_self_loops: keep edges with src != dst
    (order preserved)."""
    ei = np.asarray(edge_index, dtype=np.int64)
    mask = ei[0] != ei[1]
    return ei[:, mask], (None if edge_attr is None else np.asarray(edge_attr)[mask])


def add_self_loops(edge_index, num_nodes):
    """torch_geometric.utils.add_self_loops (no edge_attr): append
    (0,0), (1,1), ..., (N-1,N-1) at the END of edge_index."""
    ei = np.asarray(edge_index, dtype=np.int64)
    loops = np.arange(num_nodes, dtype=np.int64)
    return np.concatenate([ei, np.stack([loops, loops])], axis=1)


_append_self_loops = add_self_loops  # some layers' keyword shadows the name


def add_remaining_self_loops(edge_index, edge_weight, fill_value, num_nodes):
    """torch_geometric.utils.add_remaining_self_loops.

    Drops every existing (i, i) edge and appends exactly one loop per node
    (arange(N)) at the end.
      * edge_weight is None  -> returns None weights; `fill_value` is IGNORED
        (this is why GCN improved=True without weights has loop weight 1).
      * edge_weight given    -> loop weight = fill_value, except for nodes that
        already had a self-loop, which keep that edge's weight
        (``loop_attr[edge_index[0][inv_mask]] = edge_attr[inv_mask]``; with
        several loops on one node the last one in edge order wins here, like
        sequential index_put)."""
    ei = np.asarray(edge_index, dtype=np.int64)
    mask = ei[0] != ei[1]
    loops = np.arange(num_nodes, dtype=np.int64)
    new_ei = np.concatenate([ei[:, mask], np.stack([loops, loops])], axis=1)
    if edge_weight is None:
        return new_ei, None
    w = np.asarray(edge_weight, dtype=np.float64)
    loop_w = np.full(num_nodes, float(fill_value))
    inv = ~mask
    loop_w[ei[0][inv]] = w[inv]
    return new_ei, np.concatenate([w[mask], loop_w])


def gcn_norm(edge_index, edge_weight=None, num_nodes=None, improved=False,
             add_self_loops=True):
    """torch_geometric.nn.conv.gcn_conv.gcn_norm, Tensor edge_index path,
    flow='source_to_target' (PyG >= 2.3):

        fill = 2.0 if improved else 1.0
        if add_self_loops: ei, w = add_remaining_self_loops(ei, w, fill, N)
        if w is None: w = ones(E')          # AFTER adding loops -> loop weight 1
        deg[i] = sum_{e: col[e] = i} w[e]   # col = edge_index[1] (target)
        dis = deg ** -0.5; dis[dis == inf] = 0
        w'[e] = dis[row[e]] * w[e] * dis[col[e]]

    The in-degree (by target) is used for BOTH endpoints."""
    ei = np.asarray(edge_index, dtype=np.int64)
    if num_nodes is None:
        num_nodes = int(ei.max()) + 1 if ei.size else 0
    fill = 2.0 if improved else 1.0
    w = None if edge_weight is None else np.asarray(edge_weight, dtype=np.float64)
    if add_self_loops:
        ei, w = add_remaining_self_loops(ei, w, fill, num_nodes)
    if w is None:
        w = np.ones(ei.shape[1])
    row, col = ei[0], ei[1]
    deg = np.zeros(num_nodes)
    np.add.at(deg, col, w)
    with np.errstate(divide="ignore"):
        dis = deg ** -0.5
    dis[np.isinf(dis)] = 0.0
    return ei, dis[row] * w * dis[col]


def softmax_by_index(src, index, num_nodes):
    """torch_geometric.utils.softmax(src, index, num_nodes=N), dim 0:

        out = exp(src - max_group(src)[index])
        out = out / (sum_group(out)[index] + 1e-16)"""
    m = scatter(src, index, num_nodes, "max")
    ex = np.exp(src - m[index])
    s = scatter(ex, index, num_nodes, "sum") + 1e-16
    return ex / s[index]


# ---------------------------------------------------------------------------
# layers
# ---------------------------------------------------------------------------

def gcn_conv(x, edge_index, weight, bias=None, edge_weight=None, improved=False,
             add_self_loops=None, normalize=True):
    """GCNConv(in, out, improved, add_self_loops, normalize, bias).forward.

        if normalize: ei, w = gcn_norm(ei, w, N, improved, add_self_loops)
        h = x @ W.T                           # lin (no bias) BEFORE propagation
        out[i] = sum_{e: ei[1,e] = i} w[e] * h[ei[0,e]]   (w = 1 if None)
        out += bias

    add_self_loops=None means "same as normalize" (PyG default); asking for
    self loops without normalisation raises ValueError, like PyG."""
    x = np.asarray(x, dtype=np.float64)
    n = x.shape[0]
    if add_self_loops is None:
        add_self_loops = normalize
    if add_self_loops and not normalize:
        raise ValueError("GCNConv: add_self_loops=True requires normalize=True")
    ei = np.asarray(edge_index, dtype=np.int64)
    w = None if edge_weight is None else np.asarray(edge_weight, dtype=np.float64)
    if normalize:
        ei, w = gcn_norm(ei, w, n, improved, add_self_loops)
    h = linear(x, weight)
    msg = h[ei[0]] if w is None else w[:, None] * h[ei[0]]
    out = scatter(msg, ei[1], n, "sum")
    if bias is not None:
        out = out + np.asarray(bias, dtype=np.float64)
    return out


def sage_conv(x, edge_index, lin_l_weight, lin_l_bias=None, lin_r_weight=None,
              aggr="mean", normalize=False):
    """SAGEConv(in, out, aggr, normalize, root_weight, bias).forward
    (project=False):

        agg[i] = AGGR_{e: ei[1,e] = i} x[ei[0,e]]   (no self loops; empty -> 0)
        out = lin_l(agg)                            (lin_l carries the bias)
        if root_weight: out += lin_r(x)             (lin_r has NO bias)
        if normalize: out = F.normalize(out, p=2, dim=-1)

    root_weight=False is expressed as lin_r_weight=None."""
    x = np.asarray(x, dtype=np.float64)
    ei = np.asarray(edge_index, dtype=np.int64)
    agg = scatter(x[ei[0]], ei[1], x.shape[0], aggr)
    out = linear(agg, lin_l_weight, lin_l_bias)
    if lin_r_weight is not None:
        out = out + linear(x, lin_r_weight)
    if normalize:
        out = l2_normalize(out)
    return out


def gat_conv(x, edge_index, lin_weight, att_src, att_dst, bias=None, heads=1,
             concat=True, negative_slope=0.2, add_self_loops=True,
             return_attention=False):
    """GATConv(in, out, heads, concat, negative_slope, dropout=0 / eval,
    add_self_loops, edge_dim=None, bias, residual=False).forward (PyG >= 2.5,
    int in_channels, single ``lin`` without bias):

        h = (x @ lin.weight.T).view(N, H, C)
        a_s[n,h] = sum_c h[n,h,c] * att_src[0,h,c];  a_d likewise with att_dst
        if add_self_loops: ei = add_self_loops(remove_self_loops(ei))
                           (existing loops dropped, one loop per node appended)
        e = leaky_relu(a_s[src] + a_d[dst], negative_slope)       # [E', H]
        alpha = softmax(e, index=dst)  (exp(e - max) / (sum + 1e-16))
        out[i,h,:] = sum_{e: dst = i} alpha[e,h] * h[src[e],h,:]
        out = out.reshape(N, H*C) (index h*C + c) if concat else out.mean(1)
        out += bias"""
    x = np.asarray(x, dtype=np.float64)
    n = x.shape[0]
    W = np.asarray(lin_weight, dtype=np.float64)
    hc = W.shape[0]
    assert hc % heads == 0, "lin.weight rows must be heads * out_channels"
    c = hc // heads
    h = linear(x, W).reshape(n, heads, c)
    a_s = np.sum(h * np.asarray(att_src, dtype=np.float64).reshape(1, heads, c), axis=-1)
    a_d = np.sum(h * np.asarray(att_dst, dtype=np.float64).reshape(1, heads, c), axis=-1)
    ei = np.asarray(edge_index, dtype=np.int64)
    if add_self_loops:
        ei, _ = remove_self_loops(ei)
        ei = _append_self_loops(ei, n)
    src, dst = ei[0], ei[1]
    e = leaky_relu(a_s[src] + a_d[dst], negative_slope)          # [E', H]
    alpha = softmax_by_index(e, dst, n)                            # [E', H]
    out = scatter(alpha[:, :, None] * h[src], dst, n, "sum")       # [N, H, C]
    out = out.reshape(n, heads * c) if concat else out.mean(axis=1)
    if bias is not None:
        out = out + np.asarray(bias, dtype=np.float64)
    if return_attention:
        return out, (ei, alpha)
    return out


def batch_norm_eval(x, weight, bias, running_mean, running_var, eps=1e-5):
    """torch.nn.BatchNorm1d in eval mode (track_running_stats=True), as
    wrapped by PyG's ``BatchNorm`` (``.module``):
        (x - running_mean) / sqrt(running_var + eps) * weight + bias"""
    f = lambda a: np.asarray(a, dtype=np.float64)
    return (x - f(running_mean)) / np.sqrt(f(running_var) + eps) * f(weight) + f(bias)


def mlp(x, sd, prefix):
    """torch_geometric.nn.models.MLP(channel_list) with defaults
    (act='relu', norm='batch_norm', plain_last=True, dropout=0, bias=True,
    act_first=False), eval mode:

        for k < L-1: x = lins[k](x); x = norms[k](x); x = relu(x)
        x = lins[L-1](x)              # plain last layer: no norm / act

    Keys: {prefix}lins.{k}.weight/bias,
          {prefix}norms.{k}.module.weight/bias/running_mean/running_var."""
    k = 0
    while f"{prefix}lins.{k}.weight" in sd:
        k += 1
    num = k
    if num == 0:
        raise KeyError(f"no MLP layers under {prefix!r}")
    for k in range(num):
        x = linear(x, sd[f"{prefix}lins.{k}.weight"], sd.get(f"{prefix}lins.{k}.bias"))
        if k < num - 1:
            p = f"{prefix}norms.{k}.module."
            x = batch_norm_eval(x, sd[p + "weight"], sd[p + "bias"],
                                sd[p + "running_mean"], sd[p + "running_var"])
            x = relu(x)
    return x


def gin_conv(x, edge_index, nn, eps=0.0):
    """GINConv(nn, eps).forward:  nn( sum_{j->i} x_j + (1 + eps) * x_i ).
    Sum aggregation at the target, no self loops added; `nn` is a callable."""
    x = np.asarray(x, dtype=np.float64)
    ei = np.asarray(edge_index, dtype=np.int64)
    agg = scatter(x[ei[0]], ei[1], x.shape[0], "sum")
    return nn(agg + (1.0 + float(np.asarray(eps).reshape(-1)[0])) * x)


# ---------------------------------------------------------------------------
# models (eval mode: dropout is the identity)
# ---------------------------------------------------------------------------

def _f64(sd):
    return {k: np.asarray(v, dtype=np.float64) for k, v in sd.items()}


def gcn_forward(x, edge_index, sd, improved=False, add_self_loops=True, normalize=True):
    """PyG examples/gcn.py Net (eval):
    log_softmax(conv2(relu(conv1(x)))), conv1 = GCNConv(F, 16),
    conv2 = GCNConv(16, C).  Keys conv{1,2}.lin.weight, conv{1,2}.bias."""
    sd = _f64(sd)
    kw = dict(improved=improved, add_self_loops=add_self_loops, normalize=normalize)
    h = relu(gcn_conv(x, edge_index, sd["conv1.lin.weight"], sd.get("conv1.bias"), **kw))
    h = gcn_conv(h, edge_index, sd["conv2.lin.weight"], sd.get("conv2.bias"), **kw)
    return log_softmax(h)


def sage_forward(x, edge_index, sd, aggr="mean", normalize=False):
    """conv1 = SAGEConv(F, 16, aggr) -> relu -> conv2 = SAGEConv(16, C, aggr)
    -> log_softmax.  Keys conv{1,2}.lin_l.weight/.bias, conv{1,2}.lin_r.weight."""
    sd = _f64(sd)

    def conv(h, p):
        return sage_conv(h, edge_index, sd[p + "lin_l.weight"], sd.get(p + "lin_l.bias"),
                         sd.get(p + "lin_r.weight"), aggr=aggr, normalize=normalize)

    h = relu(conv(x, "conv1."))
    return log_softmax(conv(h, "conv2."))


def _gat_layer(h, edge_index, sd, p, heads, concat):
    return gat_conv(h, edge_index, sd[p + "lin.weight"], sd[p + "att_src"],
                    sd[p + "att_dst"], sd.get(p + "bias"), heads=heads, concat=concat)


def gat_forward(x, edge_index, sd):
    """PyG examples/gat.py (eval): conv1 = GATConv(F, 8, heads=8) (concat ->
    64) -> elu -> conv2 = GATConv(64, C, heads=1, concat=False) -> log_softmax.
    Heads are inferred from att_src's shape [1, H, C]."""
    sd = _f64(sd)
    h1 = sd["conv1.att_src"].shape[1]
    h2 = sd["conv2.att_src"].shape[1]
    h = elu(_gat_layer(x, edge_index, sd, "conv1.", h1, True))
    return log_softmax(_gat_layer(h, edge_index, sd, "conv2.", h2, False))


def gat_mean_forward(x, edge_index, sd):
    """Head-averaging variant: conv1 = GATConv(F, 8, heads=4, concat=False)
    -> elu -> conv2 = GATConv(8, C, heads=2, concat=False) -> log_softmax."""
    sd = _f64(sd)
    h1 = sd["conv1.att_src"].shape[1]
    h2 = sd["conv2.att_src"].shape[1]
    h = elu(_gat_layer(x, edge_index, sd, "conv1.", h1, False))
    return log_softmax(_gat_layer(h, edge_index, sd, "conv2.", h2, False))


def gin_forward(x, edge_index, sd):
    """conv1 = GINConv(MLP([F, 32, 32]), eps) -> relu ->
    conv2 = GINConv(MLP([32, 32, C]), eps) -> log_softmax.
    Keys conv{1,2}.nn.lins.*, conv{1,2}.nn.norms.0.module.*, conv{1,2}.eps."""
    sd = {k: np.asarray(v, dtype=np.float64) for k, v in sd.items()
          if not k.endswith("num_batches_tracked")}

    def conv(h, p):
        return gin_conv(h, edge_index, lambda z: mlp(z, sd, p + "nn."), sd.get(p + "eps", 0.0))

    h = relu(conv(x, "conv1."))
    return log_softmax(conv(h, "conv2."))


MODELS = {
    "gcn": gcn_forward,
    "sage": sage_forward,
    "gat": gat_forward,
    "gat_mean": gat_mean_forward,
    "gin": gin_forward,
}
