#!/usr/bin/env python3
"""A differential fuzzer for gnncc's code generator.

usage: cgfuzz.py [--build DIR] [--seconds S] [--seed S] [--work DIR]
                 [--findings DIR] [--engines LIST] [--prob NAME=P ...]
                 [--known FILE] [--models N] [--only I]
       cgfuzz.py --check MODEL.gnn [--engines LIST] [--build DIR]

Generates random small valid models in the .gnn language (random
elementwise chains that reuse edge values, wide concats, 0- and 1-wide
features, scatters, edge_softmax, gathers, matmul and Linear, reductions,
softmax, reshape and transpose, long identifiers) and random small graphs
(empty ones, isolated nodes, self loops), runs each model through gnnrun
with the float64 interpreter (the oracle) and the compiled engines
(cpu -O0/-O2, the cuda target on the emulated device -O0/-O2) and compares
the outputs (tests/ref/compare.py at 1e-5 of the largest output; NaN and
infinities where the interpreter has them).  Only gnncc's and gnnrun's
command lines are used.

Every model is checked with the interpreter first; a model the
interpreter rejects is a bug of this generator ("INVALID").  A find is
classed: crash (internal error, a codegen die, a signal), cc (the C or
C++ compiler rejects the generated code), emu (gnnemu: error), reject (a
user error from gnncc for a model the interpreter runs), runtime (any
other failure of the compiled model), mismatch (outputs differ).  The
first find of each kind is minimized (statements dropped while the same
engine fails the same way) and written to --findings with a repro.sh.

The run lasts --models N models (env CGFUZZ_MODELS), or --seconds
(env CGFUZZ_SECONDS; default 90 when no model count is given): no model
is started after that.  A run bounded by its model count does the same
work on every machine, however busy (the test suite's run:
tests/cgfuzz/lit.local.cfg).  Model I of seed S is the same on every
machine (--seed S --only I reruns it).  The seed is CGFUZZ_SEED, else
drawn from the clock; it is printed first.  Finds that match a line of --known
(default: known.txt beside this script) are reported as known and do not
fail the run; any other find, or an invalid model, exits 1.

A model file holds its own inputs, parameters and graph on a comment line
"# cgfuzz-spec: {json}", so that --check MODEL.gnn (what repro.sh and
the regression tests in regress/ run) needs nothing else.
"""
import argparse
import json
import os
import random
import re
import shutil
import signal
import subprocess
import sys
import tempfile
import time

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
sys.path.insert(0, os.path.join(ROOT, "tests", "cudaemu", "Inputs"))
sys.path.insert(0, os.path.join(ROOT, "tests", "ref"))
from compare import compare  # noqa: E402
from matrix import weights as random_weights  # noqa: E402

# The engines compute in float32 with the C library's float functions
# (tanhf, expf), the interpreter in double rounded to float32 per value:
# a few ulps per op, which the generator's deep chains (14 ops, with
# cancelling differences like max(a, b) - a * b) can amplify past 1e-5 of
# the output's scale; a wrong kernel is off by far more.
RTOL = 1e-4
# ... and an output that is a difference of O(1) values (inputs and
# weights are O(1)) can be tiny, its float32 rounding not: 1e-5 absolute.
ATOL = 1e-5
ENGINES = {
    "cpu-O0": ["--engine=cpu", "-O0"],
    "cpu-O2": ["--engine=cpu", "-O2"],
    "emu-O0": ["--engine=cuda-emu", "-O0"],
    "emu-O2": ["--engine=cuda-emu", "-O2"],
}
# The generator's knobs: each a probability (or a count), --prob NAME=P.
PROBS = {
    "chain": 0.35,          # a statement is a chain of reused edge values
    "chain_max": 14,        # the longest chain
    "concat": 0.12,         # a statement is a concat
    "concat_max": 60,       # the most operands of one concat
    "concat_wide": 0.15,    # a concat has 2 to concat_max operands (else 2 to 6)
    "zero_width": 0.12,     # a new width is 0
    "one_width": 0.2,       # a new width is 1
    "long_names": 0.15,     # a model names its values with 1000-byte names
    "long_model_name": 0.03,  # the model's own name is 1000 bytes long
    "derived_graph": 0.2,   # the model adds or removes self loops
    "empty_graph": 0.2,     # the second graph has no edges
    "no_nodes": 0.05,       # ... or no nodes at all
    "self_loops": 0.5,      # graphs have self loops
    "statements": 8,        # the most statements besides chains and concats
}


# ---- the generator ----------------------------------------------------------

class Model:
    """A model as statements that can be dropped one at a time."""

    def __init__(self, name):
        self.name = name
        self.inputs = []     # (name, width)
        self.params = {}     # name -> dims
        self.layers = {}     # name -> (in, out); params name.weight, name.bias
        self.stmts = []      # dicts: name, text, kind ('N', a graph name, 'G'), w
        self.outs = []
        self.graph = None    # {"n": N, "src": [...], "dst": [...]}

    def used_params(self, body):
        ps = [[p, "F32", d] for p, d in self.params.items() if re.search(r"\b%s\b" % p, body)]
        for ln, (i, o) in self.layers.items():
            if re.search(r"\b%s\(" % ln, body):
                ps += [[ln + ".weight", "F32", [o, i]], [ln + ".bias", "F32", [o]]]
        return ps

    def render(self):
        kinds = {s["name"]: s for s in self.stmts}
        kinds.update({n: {"kind": "N", "w": w} for n, w in self.inputs})
        body = "".join(f"  {s['name']} = {s['text']}\n" for s in self.stmts)
        body += "  return " + ", ".join(self.outs) + "\n"
        decl = "".join(f"  param {p}: f32[{', '.join(map(str, d))}]\n" for p, d in self.params.items()
                       if re.search(r"\b%s\b" % p, body))
        decl += "".join(f"  layer {ln} = Linear({i}, {o})\n" for ln, (i, o) in self.layers.items()
                        if re.search(r"\b%s\(" % ln, body))
        rets = [f"f32[{'N' if kinds[o]['kind'] == 'N' else 'E'}, {kinds[o]['w']}]" for o in self.outs]
        ret = rets[0] if len(rets) == 1 else "(" + ", ".join(rets) + ")"
        args = "".join(f", {n}: f32[N, {w}]" for n, w in self.inputs)
        spec = {"inputs": [[n, [w]] for n, w in self.inputs], "params": self.used_params(body),
                "outputs": len(self.outs), "graph": self.graph}
        return (f"# cgfuzz-spec: {json.dumps(spec, separators=(',', ':'))}\n"
                f"model {self.name}(g: graph{args}) -> {ret} {{\n{decl}{body}}}\n")


class Gen:
    def __init__(self, rng, probs):
        self.r = rng
        self.p = probs

    def width(self):
        r = self.r.random()
        if r < self.p["zero_width"]:
            return 0
        if r < self.p["zero_width"] + self.p["one_width"]:
            return 1
        return self.r.choice([2, 3, 4, 5, 7, 8, 16])

    def graph(self, empty=False):
        r = self.r
        n = 0 if empty and r.random() < self.p["no_nodes"] / max(self.p["empty_graph"], 1e-9) else r.randint(1, 12)
        e = 0 if empty or n == 0 else r.randint(0, 3 * n)
        # isolated nodes: the edges touch only some of the nodes
        used = r.sample(range(n), r.randint(1, n)) if n else []
        src = [r.choice(used) for _ in range(e)]
        dst = [r.choice(used) for _ in range(e)]
        if n and r.random() < self.p["self_loops"]:
            for _ in range(r.randint(1, 3)):
                k = r.choice(used)
                src.append(k)
                dst.append(k)
        return {"n": n, "src": src, "dst": dst}

    def model(self, index):
        r, p = self.r, self.p
        name = "M%d" % index
        if r.random() < p["long_model_name"]:
            name = "M" * 1000 + "_%d" % index
        m = Model(name)
        self.m = m
        self.long = r.random() < p["long_names"]
        self.nval = 0
        self.vals = []       # (name, kind, w)
        self.graphs = ["g"]
        for k in range(r.randint(1, 3)):
            m.inputs.append(("x%d" % k, self.width()))
            self.vals.append(("x%d" % k, "N", m.inputs[-1][1]))
        if r.random() < p["derived_graph"]:
            op = r.choice(["add_self_loops(g)", "remove_self_loops(g)", "add_remaining_self_loops(g)"])
            self.emit(op, "G", 0, prefix="g")
        nstmt = r.randint(2, int(p["statements"]))
        for _ in range(nstmt):
            x = r.random()
            if x < p["chain"]:
                self.chain()
            elif x < p["chain"] + p["concat"]:
                self.concat()
            else:
                self.stmt()
        # outputs: the newest values not yet used, node values mostly
        used = set()
        for s in m.stmts:
            used.update(re.findall(r"\w+", s["text"]))
        fresh = [v for v in self.vals if v[0] not in used and (v[1] == "N" or v[1] == "g")]
        outs = fresh[-3:] or [v for v in self.vals if v[1] == "N"][-1:]
        m.outs = [v[0] for v in outs]
        m.graph = self.graph(empty=False)
        return m

    def emit(self, text, kind, w, prefix="v"):
        self.nval += 1
        name = "%s%d" % (prefix, self.nval)
        if self.long:
            name = self.r.choice("abcxyz") * self.r.randint(500, 1000) + "_" + name
        self.m.stmts.append({"name": name, "text": text, "kind": kind, "w": w})
        if kind == "G":
            self.graphs.append(name)
        else:
            self.vals.append((name, kind, w))
        return name

    def pick(self, kind=None, w=None, pred=None):
        c = [v for v in self.vals if (kind is None or v[1] == kind) and (w is None or v[2] == w)
             and (pred is None or pred(v))]
        if not c:
            return None
        # prefer recent values
        return c[-1 - min(int(self.r.expovariate(0.5)), len(c) - 1)]

    def param(self, dims):
        name = "p%d" % (len(self.m.params) + len(self.m.layers))
        self.m.params[name] = dims
        return name

    def edge(self, gname=None):
        """an edge value: one made on graph gname or a new gather"""
        g = gname or self.r.choice(self.graphs)
        v = self.pick(kind=g) if self.r.random() < 0.4 else None
        if v:
            return v
        x = self.pick(kind="N")
        end = self.r.choice(["src", "dst"])
        text = self.r.choice([f"{x[0]}[{end}({g})]", f"gather({x[0]}, {end}({g}))"])
        return (self.emit(text, g, x[2]), g, x[2])

    def chain(self):
        """a chain of edge values, each reused: a = x[src] * w; b = a + a; c = b * b + a ..."""
        r = self.r
        base = self.edge() if r.random() < 0.8 else self.pick(kind="N")
        n, kind, w = base
        s = self.param([w]) if r.random() < 0.6 else "0.5"
        a = self.emit(f"{n} * {s}", kind, w)
        b = self.emit(f"{a} + {a}", kind, w)
        for _ in range(r.randint(1, int(self.p["chain_max"]))):
            c = self.emit(r.choice([f"tanh({b} * {b} + {a})", f"{b} * 0.5 + {a}", f"sigmoid({b}) * {a} - {b}",
                                    f"tanh(maximum({b}, {a}) - {b} * {a})", f"tanh({b} + {a} * {b})"]), kind, w)
            a, b = b, c
        if kind != "N" and r.random() < 0.8:
            self.scatter((b, kind, w))

    def scatter(self, e):
        op = self.r.choice(["scatter_sum", "scatter_mean", "scatter_max"])
        return self.emit(f"{op}({e[0]}, {self.r.choice(['dst', 'src'])}({e[1]}), N)", "N", e[2])

    def concat(self):
        r = self.r
        kind = r.choice(["N", "N", r.choice(self.graphs)])
        k = r.randint(2, int(self.p["concat_max"])) if r.random() < self.p["concat_wide"] else r.randint(2, 6)
        ops = []
        for _ in range(k):
            v = self.pick(kind=kind) if kind == "N" else self.edge(kind)
            if r.random() < 0.5:   # a distinct value of another width
                v = (self.emit(f"{r.choice(['relu', 'tanh', 'abs', 'sigmoid'])}({v[0]})", kind, v[2]), kind, v[2])
            ops.append(v)
        self.emit(f"concat([{', '.join(v[0] for v in ops)}], dim=1)", kind, sum(v[2] for v in ops))

    def stmt(self):
        r = self.r
        x = self.pick()
        n, kind, w = x
        choice = r.choice(["gather", "unary", "binary", "scatter", "edge_softmax", "matmul", "linear", "reduce",
                           "softmax", "reshape", "transpose", "graph", "dim0"])
        if choice == "gather" or (choice in ("scatter", "edge_softmax") and kind == "N"):
            x = self.edge()
            n, kind, w = x
            if choice == "gather":
                return
        if choice == "unary":
            self.emit(r.choice([f"relu({n})", f"sigmoid({n})", f"tanh({n})", f"abs({n})", f"-{n}",
                                f"leaky_relu({n}, negative_slope=0.1)", f"elu({n})", f"exp(tanh({n}))",
                                f"log(abs({n}) + 1)", f"sqrt(abs({n}))", f"rsqrt(abs({n}) + 1)", f"{n} ** 2",
                                f"l2_normalize({n}, dim=-1)", f"dropout({n}, p=0.5)"]), kind, w)
        elif choice == "binary":
            y = self.pick(kind=kind, pred=lambda v: v[2] in (w, 1)) or x
            self.emit(r.choice([f"{n} + {y[0]}", f"{n} - {y[0]}", f"{n} * {y[0]}", f"maximum({n}, {y[0]})",
                                f"minimum({n}, {y[0]})", f"{n} / (abs({y[0]}) + 1)"]), kind, w)
        elif choice == "scatter":
            self.scatter(x)
        elif choice == "edge_softmax":
            self.emit(f"edge_softmax({kind}, {n})", kind, w)
        elif choice == "matmul":
            k = self.width()
            self.emit(f"{n} @ {self.param([w, k])}", kind, k)
        elif choice == "linear":
            k = self.width()
            ln = "lin%d" % (len(self.m.params) + len(self.m.layers))
            self.m.layers[ln] = (w, k)
            self.emit(f"{ln}({n})", kind, k)
        elif choice == "reduce":
            ops = ["sum", "mean"] + (["max"] if w else [])   # the interpreter rejects max over nothing
            self.emit(f"{r.choice(ops)}({n}, dim={r.choice(['1', '-1'])}, keepdim=true)", kind, 1)
        elif choice == "softmax":
            self.emit(f"{r.choice(['softmax', 'log_softmax'])}({n}, dim=1)", kind, w)
        elif choice == "reshape":
            divs = [a for a in range(2, w + 1) if w % a == 0]
            if not divs:
                self.emit(f"reshape({n}, [-1, {w}])" if w else f"dropout({n})", kind, w)
                return
            a = r.choice(divs)
            self.emit(f"reshape(transpose(reshape({n}, [-1, {a}, {w // a}]), 1, 2), [-1, {w}])", kind, w)
        elif choice == "transpose" and kind == "N":
            # [N, w] -> [w, N] -> [w, w]: a product over all nodes (N may be 0)
            t = self.emit(f"tanh({n}.T @ {n})", "W", w)
            self.vals.pop()
            self.emit(f"{n} @ transpose({t})", kind, w)
        elif choice == "graph":
            self.emit(r.choice(["in_degree(g)", "out_degree(g)"]), "N", 1)
            if r.random() < 0.5:
                self.emit(r.choice(["edge_weight(g)", "gcn_norm(g)"]), "g", 1)
        elif choice == "dim0" and kind == "N":
            # a reduction over the nodes (an empty dimension on a graph of no nodes)
            self.emit(f"{n} - {r.choice(['mean', 'sum'])}({n}, dim=0, keepdim=true)", kind, w)
        else:
            self.emit(f"relu({n})", kind, w)


# ---- running ------------------------------------------------------------------

def classify(rc, err):
    if err.startswith("timed out after"):
        return "hang"
    if rc < 0 or rc == 134 or "internal error" in err or re.search(r"\bcodegen: |rowkernel: ", err):
        return "crash"
    if "compiling the generated" in err:
        return "cc"
    if "gnnemu: error" in err:
        return "emu"
    if "gnncc: error" in err or re.search(r"\.gnn:\d+:\d+: error", err):
        return "reject"
    return "runtime"


def signature(kind, engine, err):
    """what makes two finds the same: the class and the message without numbers"""
    if kind == "mismatch":
        what = "non-finite values differ" if "non-finite" in err else "shape" if "shape" in err else "values differ"
        return f"mismatch {engine}: {what}"
    line = next((l for l in err.splitlines() if "error" in l), err.strip().splitlines()[-1] if err.strip() else "")
    line = re.sub(r"\d+", "#", re.sub(r"/\S+/", "", line))[:160]
    return f"{kind} {engine.split('-')[0]}: {line}"


class Runner:
    def __init__(self, build, work, rtol, timeout):
        self.timeout = timeout
        self.gnnrun = os.path.join(os.path.abspath(build), "gnnrun")
        self.work = work
        self.rtol = rtol
        self.env = dict(os.environ)
        self.env.setdefault("GNNCC_ENGINE_CACHE", os.path.join(work, "cache"))
        os.makedirs(self.env["GNNCC_ENGINE_CACHE"], exist_ok=True)
        self.count = {}       # runs by engine, minimization not counted
        self.counting = True

    def prepare(self, text, d, graph=None, seed=0):
        """model.gnn, edge_index.npy, inputs and weights in d from the model's spec"""
        os.makedirs(d, exist_ok=True)
        spec = json.loads(re.search(r"^# cgfuzz-spec: (.*)$", text, re.M).group(1))
        g = graph or spec["graph"]
        open(os.path.join(d, "model.gnn"), "w").write(text)
        np.save(os.path.join(d, "edge_index.npy"), np.array([g["src"], g["dst"]], dtype=np.int64).reshape(2, -1))
        rng = np.random.default_rng(seed)
        args = ["--graph", "edge_index.npy", "--num-nodes", str(g["n"]), "--output-dtype=f64"]
        for name, dims in spec["inputs"]:
            np.save(os.path.join(d, name + ".npy"), rng.uniform(-1, 1, size=[g["n"]] + dims).astype(np.float32))
            args += ["--input", f"{name}={name}.npy"]
        if spec["params"]:
            random_weights(spec["params"], os.path.join(d, "w.safetensors"), seed)
            args += ["--weights", "w.safetensors"]
        return args, spec["outputs"]

    def run(self, d, args, nout, engine):
        out = [f"{engine}-{k}.npy" for k in range(nout)]
        cmd = [self.gnnrun, "model.gnn", *args, *ENGINES.get(engine, ["--engine=interp"])]
        for o in out:
            cmd += ["--output", o]
        if self.counting:
            self.count[engine] = self.count.get(engine, 0) + 1
        # its own process group, so that a timeout ends the compilers it started too
        p = subprocess.Popen(cmd, cwd=d, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True,
                             env=self.env, start_new_session=True)
        try:
            err = p.communicate(timeout=self.timeout)[1]
            return p.returncode, err, out
        except subprocess.TimeoutExpired:
            os.killpg(p.pid, signal.SIGKILL)
            p.communicate()
            return -9, f"timed out after {self.timeout:g} s", out

    def check(self, d, args, nout, engine, ref):
        """None when the engine agrees with the interpreter's outputs ref, else (kind, message)"""
        rc, err, out = self.run(d, args, nout, engine)
        if rc:
            return classify(rc, err), err.strip()[-2000:]
        for k, (a, b) in enumerate(zip(out, ref)):
            ok, msg = compare(np.load(os.path.join(d, a)), np.load(os.path.join(d, b)), self.rtol, ATOL)
            if not ok:
                return "mismatch", f"output {k}: {msg}"
        return None

    def oracle(self, d, args, nout):
        rc, err, out = self.run(d, args, nout, "interp")
        return (out, None) if rc == 0 else (None, err.strip()[-2000:])

    def trial(self, text, d, engines, graph=None, seed=0):
        """{engine: (kind, message)} for the engines that fail; 'interp' when the model is invalid"""
        args, nout = self.prepare(text, d, graph, seed)
        ref, err = self.oracle(d, args, nout)
        if ref is None:
            return {"interp": ("invalid", err)}
        fails = {}
        for e in engines:
            f = self.check(d, args, nout, e, ref)
            if f:
                fails[e] = f
        return fails


def minimize(runner, model, engine, kind, sig, d, graph, seed, deadline):
    """drop statements (a dropped value's uses take another value of its shape) and outputs while
    engine still fails with the same signature; returns the smallest model text"""
    def fails(m):
        f = runner.trial(m.render(), d, [engine], graph, seed)
        return engine in f and f[engine][0] == kind and signature(kind, engine, f[engine][1]) == sig

    def subst(m, i):
        s = m.stmts[i]
        alt = [t["name"] for t in m.stmts[:i] if t["kind"] == s["kind"] and t["w"] == s["w"]]
        alt += [n for n, w in m.inputs if s["kind"] == "N" and w == s["w"]]
        alt += ["g"] if s["kind"] == "G" else []
        pat = re.compile(r"\b%s\b" % re.escape(s["name"]))
        later = " ".join(t["text"] for t in m.stmts[i + 1:])
        if not alt and pat.search(later):
            return None
        # an output may become any other value (the return type follows)
        anyv = [t["name"] for t in m.stmts[:i] if t["kind"] in ("N", "g")] + [n for n, _ in m.inputs]
        orep = alt[-1] if alt else anyv[-1]
        new = Model(m.name)
        new.__dict__.update({k: v for k, v in m.__dict__.items() if k not in ("stmts", "outs")})
        new.stmts = [dict(t, text=pat.sub(alt[-1], t["text"]) if alt else t["text"])
                     for t in m.stmts[:i] + m.stmts[i + 1:]]
        new.outs = list(dict.fromkeys(orep if o == s["name"] else o for o in m.outs))
        return new

    changed = True
    while changed and time.time() < deadline:
        changed = False
        for k in range(len(model.outs)):
            if len(model.outs) > 1 and time.time() < deadline:
                new = Model(model.name)
                new.__dict__.update(dict(model.__dict__, outs=model.outs[:k] + model.outs[k + 1:]))
                if fails(new):
                    model, changed = new, True
                    break
        for i in reversed(range(len(model.stmts))):
            if time.time() >= deadline:
                break
            if i >= len(model.stmts):
                continue
            new = subst(model, i)
            if new is not None and fails(new):
                model, changed = new, True
    return model


def write_find(findings, n, text, engine, kind, msg, graph, seed):
    d = os.path.join(findings, f"{n:03d}-{kind}-{engine}")
    os.makedirs(d, exist_ok=True)
    spec = json.loads(re.search(r"^# cgfuzz-spec: (.*)$", text, re.M).group(1))
    spec["graph"] = graph
    text = re.sub(r"^# cgfuzz-spec: .*$", lambda _: "# cgfuzz-spec: " + json.dumps(spec, separators=(",", ":")),
                  text, flags=re.M)
    open(os.path.join(d, "model.gnn"), "w").write(text)
    open(os.path.join(d, "message.txt"), "w").write(f"{kind} on {engine}\n{msg}\n")
    open(os.path.join(d, "repro.sh"), "w").write(
        "#!/bin/sh\n# BUILD: gnncc's build directory\n"
        f"exec python3 tests/cgfuzz/cgfuzz.py --build \"${{BUILD:-build}}\" --check \"{d}/model.gnn\" "
        f"--engines {engine} --input-seed {seed}\n")
    return d


# ---- the driver -----------------------------------------------------------------

def load_known(path):
    known = []
    for line in open(path) if path and os.path.exists(path) else []:
        line = line.split("#", 1)[0].strip() if not line.lstrip().startswith("#") else ""
        if line:
            known.append(re.compile(line, re.S))
    return known


def check_file(a, runner):
    text = open(a.check).read()
    d = os.path.join(a.work, "check")
    fails = runner.trial(text, d, a.engines, seed=a.input_seed)
    for e, (kind, msg) in fails.items():
        print(f"FIND {kind} on {e}: {signature(kind, e, msg) if kind != 'mismatch' else msg}")
        print("  " + "\n  ".join(msg.splitlines()[-8:])[:3000])
    print(f"cgfuzz: {a.check}: {', '.join(a.engines)}: {'all ok' if not fails else f'{len(fails)} failing'}")
    return 1 if fails else 0


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--build", default=os.environ.get("CGFUZZ_BUILD", os.path.join(ROOT, "build")))
    ap.add_argument("--seconds", type=float,
                    default=float(os.environ["CGFUZZ_SECONDS"]) if os.environ.get("CGFUZZ_SECONDS") else None)
    ap.add_argument("--seed", type=int, default=None)
    ap.add_argument("--work", default=None)
    ap.add_argument("--findings", default="cgfuzz-findings")
    ap.add_argument("--engines", default=",".join(ENGINES))
    ap.add_argument("--prob", action="append", default=[], metavar="NAME=P")
    ap.add_argument("--known", default=os.path.join(HERE, "known.txt"))
    ap.add_argument("--models", type=int, default=int(os.environ.get("CGFUZZ_MODELS") or 0),
                    help="stop after this many models")
    ap.add_argument("--only", type=int, default=None, help="run only model I of the seed")
    ap.add_argument("--print", action="store_true", help="print the models (with --only: that one) and run none")
    ap.add_argument("--check", default=None, help="run one model file (with its cgfuzz-spec line)")
    ap.add_argument("--input-seed", type=int, default=0)
    ap.add_argument("--rtol", type=float, default=RTOL)
    ap.add_argument("--timeout", type=float, default=None,
                    help="seconds for one gnnrun (a longer one is a hang); default 300: a model "
                         "runs in well under a second, so only a hang meets it, on a loaded machine "
                         "and in the slower sanitizer build too")
    ap.add_argument("--min-seconds", type=float, default=20, help="most seconds spent minimizing one find")
    a = ap.parse_args()
    a.engines = [e for e in a.engines.split(",") if e]
    for e in a.engines:
        if e not in ENGINES:
            ap.error(f"unknown engine {e} (known: {', '.join(ENGINES)})")
    probs = dict(PROBS)
    for kv in a.prob:
        k, v = kv.split("=", 1)
        if k not in probs:
            ap.error(f"unknown knob {k} (known: {', '.join(probs)})")
        probs[k] = float(v)
    tmp = None
    if a.work is None:
        a.work = tmp = tempfile.mkdtemp(prefix="cgfuzz-")
    a.work = os.path.abspath(a.work)
    os.makedirs(a.work, exist_ok=True)
    if a.timeout is None:
        a.timeout = 300
    if a.seconds is None and not a.models:
        a.seconds = 90
    runner = Runner(a.build, a.work, a.rtol, a.timeout)
    try:
        if a.check:
            return check_file(a, runner)
        return fuzz(a, probs, runner)
    finally:
        if tmp:
            shutil.rmtree(tmp, ignore_errors=True)


def fuzz(a, probs, runner):
    seed = a.seed if a.seed is not None else int(os.environ.get("CGFUZZ_SEED") or time.time() % 1000000)
    say = (lambda *x, **k: None) if a.print else print
    say(f"cgfuzz: seed {seed}, {f'{a.models} models' if a.seconds is None else f'{a.seconds:g} s'}, engines {','.join(a.engines)} "
          f"(rerun: cgfuzz.py --seed {seed} [--only I])", flush=True)
    known = load_known(a.known)
    t0 = time.time()
    deadline = t0 + a.seconds if a.seconds is not None else float("inf")
    seen = {}
    finds = {"new": 0, "known": 0, "invalid": 0}
    bykind = {}
    index = a.only or 0
    models = 0
    while time.time() < deadline or models == 0:
        if a.models and models >= a.models or a.only is not None and models == 1:
            break
        rng = random.Random(f"{seed}:{index}")
        gen = Gen(rng, probs)
        m = gen.model(index)
        graphs = [m.graph, gen.graph(empty=rng.random() < probs["empty_graph"])]
        text = m.render()
        if a.print:
            print(text)
            index += 1
            models += 1
            continue
        d = os.path.join(a.work, "m%d" % index)
        for gi, graph in enumerate(graphs):
            fails = runner.trial(text, d, a.engines, graph, seed=index)
            for e, (kind, msg) in fails.items():
                sig = signature(kind, e, msg)
                if kind == "invalid":
                    finds["invalid"] += 1
                    print(f"INVALID model {index} (seed {seed}): the interpreter rejects it: {msg[-600:]}\n{text}",
                          flush=True)
                    continue
                bykind[kind] = bykind.get(kind, 0) + 1
                if sig in seen:
                    seen[sig][1] += 1
                    finds[seen[sig][0]] += 1
                    continue
                # a known find is written as it is; a new one minimized first
                status = "known" if any(k.search(f"{sig}\n{text}") for k in known) else "new"
                stext = text
                if status == "new":
                    runner.counting = False
                    stext = minimize(runner, m, e, kind, sig, os.path.join(a.work, "min"), graph, index,
                                     min(time.time() + a.min_seconds, max(deadline, time.time() + 3))).render()
                    runner.counting = True
                seen[sig] = [status, 1]
                finds[status] += 1
                where = write_find(a.findings, len(seen), stext, e, kind, msg, graph, index)
                print(f"{'KNOWN' if status == 'known' else 'NEW'} FIND {sig}\n  model {index} of seed {seed}, "
                      f"graph {gi}; minimized: {where}/model.gnn; "
                      f"rerun: {where}/repro.sh", flush=True)
                if status == "new":
                    print("  " + "\n  ".join(msg.splitlines()[-6:])[:2000])
                    print(stext, flush=True)
            if "interp" in fails:
                break
        index += 1
        models += 1
    secs = time.time() - t0
    runs = ", ".join(f"{e} {runner.count.get(e, 0)}" for e in ["interp"] + a.engines)
    if a.print:
        return 0
    print(f"cgfuzz: seed {seed}: {models} models in {secs:.0f} s; runs: {runs}")
    print(f"cgfuzz: finds: {finds['new']} new, {finds['known']} known, {finds['invalid']} invalid models"
          + (" (" + ", ".join(f"{k} {v}" for k, v in sorted(bykind.items())) + ")" if bykind else ""))
    for sig, (status, n) in seen.items():
        print(f"  {status:5} x{n}: {sig}")
    return 1 if finds["new"] or finds["invalid"] else 0


if __name__ == "__main__":
    sys.exit(main())
