"""
From a PyTorch Geometric model to gnncc's language: export() traces the
model's forward with torch.fx and writes one model item whose layers are
the layer library's (layers/*.gnn) under the module's own names, so that
PyG's state_dict loads into the compiled model as it is.

The tracer keeps every module of torch.nn and torch_geometric a leaf (one
call_module node), so a layer is translated from its attributes, never
from the code inside it; the model's own modules are traced through.
Each node becomes one line of the model; what has no translation (a layer
the library lacks, an op, a layer's option it does not model, a branch on
a tensor's value, which fx cannot trace) is an ExportError naming it and
the line of the user's Python it comes from.  Widths come from the layers
(the first layer that reads x gives its width), rows are N (nodes) or B
(graphs, after pooling).

    python -m gnncc.export MODULE:FACTORY -o model.gnn [--weights w.safetensors]
"""
import argparse
import importlib
import operator
import os
import re
import sys
import traceback
import types

__all__ = ["ExportError", "export"]


class ExportError(Exception):
    """A model gnncc cannot express; the message names what and where."""


_OWN = os.path.dirname(os.path.abspath(__file__))


def _userline(frames):
    """'file:line: ' of the innermost frame in the user's code (not torch's,
    not this package's), and its source text"""
    for f in reversed(frames):
        fn = os.path.abspath(f[0])
        if os.path.dirname(fn) == _OWN or re.search(r"[/\\](torch|torch_geometric)[/\\]", fn):
            continue
        return "%s:%d: " % (f[0], f[1]), (f[3] or "").strip()
    return "", ""


def _nodeline(node):
    st = node.stack_trace or ""
    frames = [(m.group(1), int(m.group(2)), m.group(3), m.group(4))
              for m in re.finditer(r'File "([^"]+)", line (\d+), in (\S+)\n\s*(.*)', st)]
    return _userline(frames)


def _fail(node, what):
    where, text = _nodeline(node) if node is not None else ("", "")
    raise ExportError("%serror: %s%s" % (where, what, "\n    " + text if text else ""))


def _lit(v):
    if isinstance(v, bool):
        return "true" if v else "false"
    if isinstance(v, str):
        return '"%s"' % v
    if isinstance(v, float):
        return repr(v)
    return str(int(v))


def _args(pos, kw, defaults):
    """positional words, then the keywords that differ from the library's defaults"""
    words = [_lit(v) for v in pos]
    words += ["%s=%s" % (k, _lit(v)) for k, v in kw.items() if defaults.get(k, object()) != v]
    return ", ".join(words)


def _act(node, a):
    import torch
    if a is None:
        return "none"
    for cls, name in ((torch.nn.ReLU, "relu"), (torch.nn.ELU, "elu"), (torch.nn.Tanh, "tanh"),
                      (torch.nn.Sigmoid, "sigmoid")):
        if isinstance(a, cls):
            if name == "elu" and a.alpha != 1.0:
                _fail(node, "MLP's ELU has alpha %g; the layer library's MLP uses 1.0" % a.alpha)
            return name
    _fail(node, "MLP's activation %s has no counterpart in the layer library (relu, elu, tanh, sigmoid)"
          % type(a).__name__)


def _mlp(node, m):
    """PyG's MLP as `MLP([...], ...)`, and its input and output widths"""
    import torch_geometric.nn as pyg
    norms = [type(n).__name__ for n in m.norms]
    if any(n not in ("BatchNorm", "Identity") for n in norms):
        _fail(node, "MLP's norm %s has no counterpart in the layer library (batch_norm or none)" % norms[0])
    if any(isinstance(n, pyg.BatchNorm) and (n.module.eps != 1e-5 or not n.module.affine) for n in m.norms):
        _fail(node, "MLP's BatchNorm options (eps, affine) differ from the layer library's")
    norm = "batch_norm" if "BatchNorm" in norms else "none"
    if getattr(m, "residual", False) or getattr(m, "act_first", False):
        _fail(node, "MLP with act_first or residual has no counterpart in the layer library")
    drop = m.dropout[0] if isinstance(m.dropout, (list, tuple)) else m.dropout
    bias = all(l.bias is not None for l in m.lins)
    text = "MLP([%s]%s)" % (", ".join(map(str, m.channel_list)),
                            "".join(", " + a for a in _args([], {"norm": norm, "act": _act(node, m.act),
                                                             "plain_last": m.plain_last, "dropout": float(drop),
                                                             "bias": bias},
                                                            {"norm": "batch_norm", "act": "relu",
                                                             "plain_last": True, "dropout": 0.0,
                                                             "bias": True}).split(", ") if a))
    return text, m.channel_list[0], m.channel_list[-1]


def _layer(node, m):
    """(declaration, input width, output width, how it is called: 'graph' or 'dense')"""
    import torch
    import torch_geometric.nn as pyg
    name = type(m).__name__
    if isinstance(m, pyg.GCNConv):
        if m.in_channels < 0:
            _fail(node, "GCNConv with lazy in_channels (-1): give the width")
        kw = {"improved": m.improved, "add_self_loops": m.add_self_loops, "normalize": m.normalize,
              "bias": m.bias is not None}
        d = {"improved": False, "add_self_loops": True, "normalize": True, "bias": True}
        return "GCNConv(%s)" % _args([m.in_channels, m.out_channels], kw, d), m.in_channels, m.out_channels, "graph"
    if isinstance(m, pyg.SAGEConv):
        if not isinstance(m.in_channels, int) or m.in_channels < 0:
            _fail(node, "SAGEConv with bipartite or lazy in_channels has no counterpart in the layer library")
        if not isinstance(m.aggr, str) or m.aggr not in ("mean", "max", "sum", "add"):
            _fail(node, "SAGEConv's aggregation %r: the layer library has mean, max and sum" % (m.aggr,))
        kw = {"aggr": "sum" if m.aggr == "add" else m.aggr, "normalize": m.normalize,
              "root_weight": m.root_weight, "project": m.project, "bias": m.lin_l.bias is not None}
        d = {"aggr": "mean", "normalize": False, "root_weight": True, "project": False, "bias": True}
        return "SAGEConv(%s)" % _args([m.in_channels, m.out_channels], kw, d), m.in_channels, m.out_channels, "graph"
    if isinstance(m, pyg.GATConv):
        if not isinstance(m.in_channels, int) or m.in_channels < 0 or m.edge_dim is not None:
            _fail(node, "GATConv with bipartite or lazy in_channels or edge features (edge_dim) has no "
                        "counterpart in the layer library")
        kw = {"heads": m.heads, "concat": m.concat, "negative_slope": float(m.negative_slope),
              "dropout": float(m.dropout), "add_self_loops": m.add_self_loops, "bias": m.bias is not None,
              "residual": bool(getattr(m, "residual", False))}
        d = {"heads": 1, "concat": True, "negative_slope": 0.2, "dropout": 0.0, "add_self_loops": True,
             "bias": True, "residual": False}
        out = m.heads * m.out_channels if m.concat else m.out_channels
        return "GATConv(%s)" % _args([m.in_channels, m.out_channels], kw, d), m.in_channels, out, "graph"
    if isinstance(m, pyg.TransformerConv):
        if not isinstance(m.in_channels, int) or m.in_channels < 0 or m.edge_dim is not None:
            _fail(node, "TransformerConv with bipartite or lazy in_channels or edge features (edge_dim) "
                        "cannot be exported (write it in the language: TransformerConv(..., edge_dim=D) "
                        "called as conv(g, x, edge_attr))")
        kw = {"heads": m.heads, "concat": m.concat, "beta": m.beta, "dropout": float(m.dropout),
              "bias": m.lin_key.bias is not None, "root_weight": m.root_weight}
        d = {"heads": 1, "concat": True, "beta": False, "dropout": 0.0, "bias": True, "root_weight": True}
        out = m.heads * m.out_channels if m.concat else m.out_channels
        return "TransformerConv(%s)" % _args([m.in_channels, m.out_channels], kw, d), m.in_channels, out, "graph"
    if isinstance(m, pyg.GINConv):
        if not isinstance(m.nn, pyg.MLP):
            _fail(node, "GINConv's nn is %s: the layer library's GINConv takes PyG's MLP" % type(m.nn).__name__)
        inner, fin, fout = _mlp(node, m.nn)
        train_eps = isinstance(m.eps, torch.nn.Parameter)
        kw = {"eps": float(m.initial_eps), "train_eps": train_eps}
        rest = _args([], kw, {"eps": 0.0, "train_eps": False})
        return "GINConv(%s%s)" % (inner, ", " + rest if rest else ""), fin, fout, "graph"
    if isinstance(m, pyg.MLP):
        text, fin, fout = _mlp(node, m)
        return text, fin, fout, "dense"
    if isinstance(m, (torch.nn.Linear, pyg.Linear)):
        fin = m.in_features if isinstance(m, torch.nn.Linear) else m.in_channels
        fout = m.out_features if isinstance(m, torch.nn.Linear) else m.out_channels
        if fin < 0:
            _fail(node, "Linear with lazy in_channels (-1): give the width")
        rest = _args([], {"bias": m.bias is not None}, {"bias": True})
        return "Linear(%d, %d%s)" % (fin, fout, ", " + rest if rest else ""), fin, fout, "dense"
    if isinstance(m, (torch.nn.BatchNorm1d, pyg.BatchNorm)):
        bn = m.module if isinstance(m, pyg.BatchNorm) else m
        if not bn.track_running_stats:
            _fail(node, "%s without running statistics cannot run in eval mode" % name)
        kw = {"eps": float(bn.eps), "momentum": float(bn.momentum), "affine": bn.affine}
        rest = _args([], kw, {"eps": 1e-5, "momentum": 0.1, "affine": True})
        return "%s(%d%s)" % ("BatchNorm" if isinstance(m, pyg.BatchNorm) else "BatchNorm1d", bn.num_features,
                             ", " + rest if rest else ""), bn.num_features, bn.num_features, "dense"
    _fail(node, "unsupported layer %s (%s.%s): the layer library has GCNConv, SAGEConv, GATConv, GINConv, "
                "TransformerConv, MLP, Linear and BatchNorm" % (name, type(m).__module__, name))


# elementwise modules and functions: the language's name, and how to read
# their options
def _unary():
    import torch
    import torch.nn.functional as F
    return {torch.relu: "relu", F.relu: "relu", torch.sigmoid: "sigmoid", F.sigmoid: "sigmoid",
            torch.tanh: "tanh", F.tanh: "tanh", torch.exp: "exp", F.elu: "elu", F.leaky_relu: "leaky_relu",
            torch.nn.functional.log_softmax: "log_softmax", torch.log_softmax: "log_softmax",
            F.softmax: "softmax", torch.softmax: "softmax", F.dropout: "dropout",
            torch.nn.ReLU: "relu", torch.nn.Sigmoid: "sigmoid", torch.nn.Tanh: "tanh", torch.nn.ELU: "elu",
            torch.nn.LeakyReLU: "leaky_relu", torch.nn.Dropout: "dropout", torch.nn.Identity: "",
            torch.nn.LogSoftmax: "log_softmax", torch.nn.Softmax: "softmax"}


_BINARY = {operator.add: "+", operator.sub: "-", operator.mul: "*", "add": "+", "sub": "-", "mul": "*"}
_METHODS = {"relu": "relu", "sigmoid": "sigmoid", "tanh": "tanh", "exp": "exp",
            "log_softmax": "log_softmax", "softmax": "softmax"}


class _Export:
    def __init__(self, model, name):
        self.model, self.name = model, name
        self.lines, self.layers = [], []
        self.val = {}       # node -> (expression name, rows "N" or "B", width or None)
        self.fin = None     # x's width, from the first layer that reads it
        self.x = self.ei = self.batch = None

    def width(self, node, w):
        v = self.val[node]
        if v[2] is None:
            # only x and what is computed from it alone lack a width
            if self.fin is not None and self.fin != w:
                _fail(node, "a layer of width %s reads x, whose width is %s" % (w, self.fin))
            self.fin = w
            self.val[node] = (v[0], v[1], w)
        elif v[2] != w:
            _fail(node, "a layer of width %s reads a value of width %s" % (w, v[2]))

    def arg(self, n, a):
        if not hasattr(a, "op"):
            _fail(n, "argument %r: only the model's values are supported here" % (a,))
        if a is self.ei or a is self.batch:
            _fail(n, "%s is used as a tensor: only layers and pooling read the graph" % a.name)
        return self.val[a]

    def emit(self, n, expr, rows, w):
        v = "h_" + n.name
        self.lines.append("  %s = %s" % (v, expr))
        self.val[n] = (v, rows, w)

    def module(self, n):
        m = self.model.get_submodule(n.target)
        kind = _unary().get(type(m))
        if kind is not None:
            return self.unary(n, kind, self.arg(n, n.args[0]), m)
        # a layer of the model (conv1) or of a ModuleList of the model
        # (convs.0, declared as the layer array element convs[0]: the same
        # parameter names); a layer inside a module of the user's has no
        # declaration in a model item
        path = re.fullmatch(r"([A-Za-z_]\w*)(?:\.(\d+))?", n.target)
        if not path:
            _fail(n, "layer '%s' is inside a module of the model's own: gnncc's exporter takes the model's "
                     "layers and ModuleLists of layers" % n.target)
        name = path.group(1) + ("[%s]" % path.group(2) if path.group(2) else "")
        decl, fin, fout, call = _layer(n, m)
        if name not in [l for l, _ in self.layers]:
            self.layers.append((name, decl))
        if call == "graph":
            if len(n.args) < 2 or n.args[1] is not self.ei or len(n.args) > 2 or n.kwargs:
                _fail(n, "%s '%s' is called with other arguments than (x, edge_index)" % (type(m).__name__, n.target))
        elif len(n.args) != 1 or n.kwargs:
            _fail(n, "%s '%s' takes one tensor here" % (type(m).__name__, n.target))
        x = n.args[0]
        xv = self.arg(n, x)
        self.width(x, fin)
        self.emit(n, "%s(%s%s)" % (name, "g, " if call == "graph" else "", xv[0]), xv[1], fout)

    def unary(self, n, kind, xv, m=None):
        kw = dict(n.kwargs)
        if kind == "":
            self.val[n] = xv
            return
        opts = ""
        if kind == "dropout":
            p = m.p if m is not None else kw.get("p", n.args[1] if len(n.args) > 1 else 0.5)
            opts = ", p=%s" % float(p)
        elif kind in ("log_softmax", "softmax"):
            dim = m.dim if m is not None else kw.get("dim", n.args[1] if len(n.args) > 1 else None)
            if dim not in (1, -1):
                _fail(n, "%s over dim %r: gnncc's node features are [rows, width]; use dim=1 or -1" % (kind, dim))
            opts = ", dim=1"
        elif kind == "elu":
            alpha = m.alpha if m is not None else kw.get("alpha", n.args[1] if len(n.args) > 1 else 1.0)
            opts = "" if alpha == 1.0 else ", alpha=%s" % float(alpha)
        elif kind == "leaky_relu":
            s = m.negative_slope if m is not None else kw.get("negative_slope", n.args[1] if len(n.args) > 1 else 0.01)
            opts = ", negative_slope=%s" % float(s)
        self.emit(n, "%s(%s%s)" % (kind, xv[0], opts), xv[1], xv[2])

    def function(self, n):
        import torch
        import torch_geometric.nn as pyg
        f = n.target
        kind = _unary().get(f)
        if kind is not None:
            return self.unary(n, kind, self.arg(n, n.args[0]))
        if f in _BINARY or f in (torch.add, torch.sub, torch.mul):
            op = _BINARY.get(f) or _BINARY[f.__name__]
            a, b = n.args[0], n.args[1]
            if "alpha" in n.kwargs:
                _fail(n, "%s with alpha" % f.__name__)
            av = self.arg(n, a) if hasattr(a, "op") else (_lit(float(a)), None, None)
            bv = self.arg(n, b) if hasattr(b, "op") else (_lit(float(b)), None, None)
            rows = av[1] or bv[1]
            if av[1] and bv[1] and av[1] != bv[1]:
                _fail(n, "%s of a node value and a graph value" % op)
            w = av[2] if av[2] is not None else bv[2]
            return self.emit(n, "%s %s %s" % (av[0], op, bv[0]), rows, w)
        if f is torch.cat:
            parts = n.args[0] if n.args else n.kwargs.get("tensors")
            dim = n.kwargs.get("dim", n.args[1] if len(n.args) > 1 else 0)
            if dim not in (1, -1) or not isinstance(parts, (list, tuple)):
                _fail(n, "torch.cat over dim %r: gnncc concatenates features, dim=1 or -1" % (dim,))
            vals = [self.arg(n, v) for v in parts]
            if any(v[2] is None for v in vals) or len({v[1] for v in vals}) != 1:
                _fail(n, "torch.cat of values of unknown widths or of node and graph values")
            return self.emit(n, "concat([%s], dim=1)" % ", ".join(v[0] for v in vals), vals[0][1],
                             sum(v[2] for v in vals))
        pools = {pyg.global_add_pool: "segment_sum", pyg.global_mean_pool: "segment_mean",
                 pyg.global_max_pool: "segment_max"}
        if f in pools:
            b = n.args[1] if len(n.args) > 1 else n.kwargs.get("batch")
            if b is None or b is not self.batch:
                _fail(n, "%s needs the model's batch argument" % f.__name__)
            xv = self.arg(n, n.args[0])
            return self.emit(n, "%s(%s, batch(g), B)" % (pools[f], xv[0]), "B", xv[2])
        _fail(n, "unsupported operation %s: gnncc's exporter translates layers, activations, dropout, "
                 "softmax, +, -, *, torch.cat and global pooling" % getattr(f, "__name__", f))

    def method(self, n):
        kind = _METHODS.get(n.target)
        if kind is None:
            _fail(n, "unsupported tensor method .%s()" % n.target)
        xv = self.arg(n, n.args[0])
        if kind in ("log_softmax", "softmax"):
            dim = n.kwargs.get("dim", n.args[1] if len(n.args) > 1 else None)
            if dim not in (1, -1):
                _fail(n, "%s over dim %r: use dim=1 or -1" % (kind, dim))
            return self.emit(n, "%s(%s, dim=1)" % (kind, xv[0]), xv[1], xv[2])
        self.emit(n, "%s(%s)" % (kind, xv[0]), xv[1], xv[2])

    def run(self, graph):
        ph = [n for n in graph.nodes if n.op == "placeholder"]
        if len(ph) not in (2, 3):
            _fail(ph[0] if ph else None, "forward takes (x, edge_index) or (x, edge_index, batch), not %d "
                  "arguments" % len(ph))
        self.x, self.ei = ph[0], ph[1]
        self.batch = ph[2] if len(ph) == 3 else None
        self.val[self.x] = ("x", "N", None)
        out = None
        for n in graph.nodes:
            if n.op == "placeholder":
                continue
            if n.op == "call_module":
                self.module(n)
            elif n.op == "call_function":
                self.function(n)
            elif n.op == "call_method":
                self.method(n)
            elif n.op == "output":
                out = n
            else:
                _fail(n, "unsupported %s %s" % (n.op, n.target))
        res = out.args[0]
        res = list(res) if isinstance(res, (tuple, list)) else [res]
        vals = [self.arg(out, r) for r in res]
        if self.fin is None:
            _fail(out, "no layer reads x: its width is unknown")
        if any(v[2] is None for v in vals):
            _fail(out, "an output's width is unknown")
        g = "graph[N, E, B]" if self.batch is not None else "graph"
        rets = ["f32[%s, %d]" % (v[1], v[2]) for v in vals]
        sig = "model %s(g: %s, x: f32[N, %d]) -> %s {" % (self.name, g, self.fin,
                                                         rets[0] if len(rets) == 1 else "(%s)" % ", ".join(rets))
        body = ["  layer %s = %s" % l for l in self.layers] + [""] + self.lines
        body.append("  return %s" % ", ".join(v[0] for v in vals))
        return "\n".join(["# exported from PyTorch Geometric (%s.%s) by gnncc.export"
                          % (type(self.model).__module__, type(self.model).__qualname__), sig] + body + ["}", ""])


def _trace(model):
    import torch.fx

    class Tracer(torch.fx.Tracer):
        def is_leaf_module(self, m, qualname):
            mod = type(m).__module__
            return mod.startswith("torch.nn") or mod.startswith("torch_geometric")

    # pooling reads batch's values (its size), which fx cannot trace: one node each
    import torch_geometric.nn as pyg
    t = Tracer(autowrap_functions=(pyg.global_add_pool, pyg.global_mean_pool, pyg.global_max_pool))
    t.record_stack_traces = True
    try:
        return t.trace(model)
    except Exception as e:   # fx's own: a branch or loop on a traced value, an op it cannot trace
        where, text = _userline(traceback.extract_tb(e.__traceback__))
        what = str(e).splitlines()[0] if str(e) else type(e).__name__
        if isinstance(e, torch.fx.proxy.TraceError):
            what = "data-dependent control flow (a branch or loop on a tensor's value) cannot be " \
                   "exported: " + what
        raise ExportError("%serror: %s%s" % (where, what, "\n    " + text if text else "")) from None


def export(model, example_x=None, example_edge_index=None, out=None, weights=None, name=None):
    """Model source for the PyG module model (in eval mode), returned and,
    with out, written there; with weights, its state_dict as safetensors
    under PyG's names.  example_x, when given, checks x's width."""
    if model.training:
        raise ExportError("error: the model is in training mode: call model.eval() first")
    name = name or type(model).__name__
    if not re.fullmatch(r"[A-Za-z_]\w*", name):
        raise ExportError("error: model name %r is not an identifier" % name)
    e = _Export(model, name)
    text = e.run(_trace(model))
    if example_x is not None and tuple(example_x.shape[1:]) != (e.fin,):
        raise ExportError("error: example_x has shape %s; the model's first layer reads width %d"
                          % (list(example_x.shape), e.fin))
    if out:
        with open(out, "w") as f:
            f.write(text)
    if weights:
        from . import _safetensors
        _safetensors.save(weights, model.state_dict())
    return text


class _Callable(types.ModuleType):
    # gnncc.export(model, ...) calls export() though gnncc.export is this module
    def __call__(self, *args, **kwargs):
        return export(*args, **kwargs)


sys.modules[__name__].__class__ = _Callable


def main(argv=None):
    ap = argparse.ArgumentParser(prog="python -m gnncc.export",
                                 description="Write a PyTorch Geometric model in gnncc's language.")
    ap.add_argument("factory", metavar="MODULE:FACTORY",
                    help="a function of no arguments on the Python path that returns the model in eval mode")
    ap.add_argument("-o", dest="out", required=True, help="the .gnn file to write")
    ap.add_argument("--weights", help="also write the model's state_dict as safetensors")
    ap.add_argument("--name", help="the model's name (default: its class's)")
    a = ap.parse_args(argv)
    mod, _, fn = a.factory.partition(":")
    if not fn:
        ap.error("MODULE:FACTORY: name the function after a colon")
    sys.path.insert(0, os.getcwd())
    try:
        model = getattr(importlib.import_module(mod), fn)()
        export(model, out=a.out, weights=a.weights, name=a.name)
    except ExportError as e:
        print("python -m gnncc.export: %s" % e, file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
