#!/usr/bin/env python3
"""transformer_pyg.py GNNRUN WORKDIR [--engines LIST] [--checks LIST]:
TransformerConv (layers/transformer.gnn) against PyG 2.8's own
torch_geometric.nn.TransformerConv on the same weights.

One model holds six TransformerConv layers side by side on the same
graph, x (5 features) and edge features (3), one output each, so that
every engine compiles once:

  c1  TransformerConv(5, 4)                                  defaults
  c2  TransformerConv(5, 4, heads=2, edge_dim=3)             edge features, concat
  c3  TransformerConv(5, 4, heads=2, concat=false, beta=true)
  c4  TransformerConv(5, 4, heads=2, beta=true, edge_dim=3)  all three
  c5  TransformerConv(5, 4, heads=3, concat=false, beta=true, edge_dim=3, bias=false)
  c6  TransformerConv(5, 4, heads=2, root_weight=false, beta=true)
      (lin_skip is in PyG's state_dict all the same; beta is then off)

PyG builds the layers (its own reset_parameters, seeded), its state_dict
is written as safetensors unchanged (gnnrun rejects missing and
unexpected names, so the parameter sets are checked too), and PyG's
forward in float64 on the float32 weights and inputs is the reference.
Two graphs: "small" (an existing self loop, a duplicated edge, a node
with no in-edges, an isolated node) and "random" (30 nodes, 120 seeded
edges).  Each engine's outputs must be within 1e-5 of PyG's
(tests/ref/compare.py: atol = 1e-5 * max|ref|); the compiled engines run
twice and must agree bitwise (the emulated device's second run with its
threads and blocks in reverse order).  --checks memcheck,racecheck runs
the emulated device under those sanitizers on the small graph, again
within 1e-5 of PyG.

Prints one line per engine and graph, and `transformer: all ok` or the
failures; exit status 1 on any failure.
"""
import argparse
import os
import subprocess
import sys

import numpy as np
import torch
from torch_geometric.nn import TransformerConv

HERE = os.path.dirname(os.path.abspath(__file__))
REFDIR = os.path.join(os.path.dirname(os.path.dirname(HERE)), "ref")
sys.path.insert(0, REFDIR)
import st  # noqa: E402
from compare import compare  # noqa: E402

F, C, D = 5, 4, 3      # input features, out_channels, edge features
RTOL = 1e-5

# (name, PyG keyword arguments, output width, takes edge features)
CASES = [
    ("c1", {}, C, False),
    ("c2", {"heads": 2, "edge_dim": D}, 2 * C, True),
    ("c3", {"heads": 2, "concat": False, "beta": True}, C, False),
    ("c4", {"heads": 2, "beta": True, "edge_dim": D}, 2 * C, True),
    ("c5", {"heads": 3, "concat": False, "beta": True, "edge_dim": D, "bias": False}, C, True),
    ("c6", {"heads": 2, "root_weight": False, "beta": True}, 2 * C, False),
]


def gnn_arg(k, v):
    if isinstance(v, bool):
        return f"{k}={'true' if v else 'false'}"
    return f"{k}={v}"


def model_source():
    outs = ", ".join(f"f32[N, {w}]" for _, _, w, _ in CASES)
    lines = [f"model TC(g: graph, x: f32[N, {F}], ea: f32[E, {D}]) -> ({outs}) {{"]
    for name, kw, _, _ in CASES:
        args = "".join(", " + gnn_arg(k, v) for k, v in kw.items())
        lines.append(f"  layer {name} = TransformerConv({F}, {C}{args})")
    rets = []
    for name, _, _, edges in CASES:
        rets.append(f"{name}(g, x, ea)" if edges else f"{name}(g, x)")
    lines.append("  return " + ", ".join(rets))
    lines.append("}")
    return "\n".join(lines) + "\n"


def graphs():
    rng = np.random.default_rng(7)
    # tests/ref/small_graph.py's 7 nodes: loop 2->2, 0->1 twice, node 5
    # with no in-edges, node 6 isolated
    small = np.array([[0, 0, 1, 2, 2, 3, 4, 5, 5, 1, 3],
                      [1, 1, 0, 2, 3, 2, 3, 4, 0, 4, 4]], dtype=np.int64)
    rand = rng.integers(0, 30, size=(2, 120)).astype(np.int64)
    return {"small": (small, 7), "random": (rand, 30)}


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("gnnrun")
    ap.add_argument("work")
    ap.add_argument("--engines", default="interp,cpu,cuda-emu")
    ap.add_argument("--checks", default="")
    a = ap.parse_args()
    os.makedirs(a.work, exist_ok=True)
    torch.manual_seed(0)
    mods = torch.nn.ModuleDict({name: TransformerConv(F, C, **kw) for name, kw, _, _ in CASES}).eval()
    sd = {k: v.detach().numpy() for k, v in mods.state_dict().items()}
    wpath = os.path.join(a.work, "tc.safetensors")
    st.save(wpath, sd)
    mpath = os.path.join(a.work, "tc.gnn")
    open(mpath, "w").write(model_source())
    mods64 = mods.double()

    env = dict(os.environ)
    env.setdefault("GNNCC_ENGINE_CACHE", os.path.join(a.work, "cache"))
    bad = 0

    def fail(msg):
        nonlocal bad
        bad += 1
        print("FAIL " + msg, flush=True)

    for gname, (ei, n) in graphs().items():
        rng = np.random.default_rng(len(gname))
        x = rng.uniform(-1, 1, size=(n, F)).astype(np.float32)
        ea = rng.uniform(-1, 1, size=(ei.shape[1], D)).astype(np.float32)
        base = os.path.join(a.work, gname)
        for suffix, arr in (("ei", ei), ("x", x), ("ea", ea)):
            np.save(f"{base}-{suffix}.npy", arr)
        with torch.no_grad():
            x64, ea64, eit = torch.from_numpy(x).double(), torch.from_numpy(ea).double(), torch.from_numpy(ei)
            refs = [mods64[name](x64, eit, ea64 if edges else None).numpy() for name, _, _, edges in CASES]

        def run(engine, tag, extra=()):
            outs = [f"{base}-{tag}-{k}.npy" for k in range(len(CASES))]
            cmd = [a.gnnrun, mpath, "--graph", f"{base}-ei.npy", "--input", f"x={base}-x.npy",
                   "--input", f"ea={base}-ea.npy", "--weights", wpath, f"--engine={engine}",
                   "--output-dtype=f64", *extra]
            for o in outs:
                cmd += ["--output", o]
            r = subprocess.run(cmd, capture_output=True, text=True, env=env)
            if r.returncode:
                fail(f"{gname} {tag}: gnnrun exit {r.returncode}: {r.stderr.strip()[-600:]}")
                return None
            return outs

        def against_pyg(outs, tag):
            worst = 0.0
            for (name, _, _, _), o, ref in zip(CASES, outs, refs):
                got = np.load(o)
                ok, msg = compare(got, ref, RTOL)
                if not ok:
                    fail(f"{gname} {tag} {name}: {msg}")
                    return False
                worst = max(worst, float(np.abs(got - ref).max() / max(np.abs(ref).max(), 1e-30)))
            print(f"{gname} {tag}: {len(CASES)} layers within 1e-5 of PyG (worst {worst:.1e} of max|ref|)")
            return True

        def raw(outs):
            return b"".join(open(o, "rb").read() for o in outs)

        for engine in a.engines.split(","):
            outs = run(engine, engine)
            if outs is None or not against_pyg(outs, engine) or engine == "interp":
                continue
            extra = ["--emu-order=reverse"] if engine == "cuda-emu" else []
            again = run(engine, engine + "-again", extra)
            if again is not None and raw(again) != raw(outs):
                fail(f"{gname} {engine}: second run differs bitwise from the first")
            elif again is not None:
                print(f"{gname} {engine}: second run bitwise identical")
        if gname == "small":
            for tool in filter(None, a.checks.split(",")):
                outs = run("cuda-emu", "emu-" + tool, [f"--emu-check={tool}"])
                if outs is not None:
                    against_pyg(outs, "cuda-emu " + tool)
    print("transformer: " + ("all ok" if not bad else f"{bad} FAILED"))
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
