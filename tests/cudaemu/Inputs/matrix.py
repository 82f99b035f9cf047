#!/usr/bin/env python3
"""The cuda target's matrix on the emulated device.

usage: matrix.py --build DIR --work DIR MODEL... [--graphs cora,hubs]
                 [--forced-graphs hubs] [--configs all|quick|NAME,...]
                 [--no-racecheck] [--no-memcheck] [--share all|even|odd]
                 [--race-share all|a|b] [--race-turns K]
                 [--synthetic-width W] [--precision bf16|fp16]

Each MODEL is NAME=PATH.gnn (a bench template PATH.gnn.in is instantiated
for 64 input features, 7 classes), or NAME=PATH.gnn@W: the model with
its Cora width 1433 made W (the test suites' variants of the examples,
which the examples cover at full width, are run at 64).  A model at
1433 runs at 1433 on Cora and at --synthetic-width (281) on the other
graphs: 281 = 4 * 64 + 25 leaves every GEMM tiling (k slabs of 8, 16, 32,
64) the K tail it has at 1433 = 22 * 64 + 25, at a fifth of the work on
the graphs that the forced schedules, memcheck and racecheck run on.  The
configurations are -O0, -O2 with the cost model's schedules, and -O2
under forced schedules of every family (lanes 1/2/4/8/16/32 per row with
rows per block, one of them reading edge arrays through the plan's
permutation (perm=1), and dense tilings).  The graphs are Cora, and "hubs", a
synthetic graph of 2000 nodes whose largest in-degree is above 2000 and
where most nodes have no in-edges (--graphs may add citeseer).  -O0 and
-O2 run on every graph; a forced schedule is a statement about the
kernels, not the graph, so it runs on hubs, the graph that strains it
most (--forced-graphs says otherwise).  gnnrun --engine=cuda-emu runs
the model:

  * once, compared with the float64 interpreter (1e-5 of the largest
    output, tests/ref/compare.py);
  * again with its threads and blocks perturbed, bitwise identical to the
    first run: on hubs in reverse order, or (every other configuration)
    in a seeded random order with grids clamped to 2 blocks, so that
    grid-stride loops wrap; at -O2 on every graph, both, and a second
    run with stream work deferred to the host's synchronizations
    (--emu-defer: a missing one reads poison);
  * under memcheck (AddressSanitizer), clean and equal to the
    interpreter: -O2 (and TF32) on every graph, -O0 on hubs, and every
    configuration on "hubs-small" (150 nodes and 700 edges of the same
    shape: several blocks, a row of 237 in-edges, a third of the rows
    empty);
  * with --tf32 NAME, that model again with its dense transforms on
    tensor cores (--gpu-math=tf32), to 5e-3 of the largest output, with
    the same perturbations and checks as -O2;
  * under racecheck (ThreadSanitizer, whose fibers make it the slowest
    check by far), clean and equal to the interpreter, on hubs-small.

--precision P runs every configuration with 16-bit storage
(docs/precision.md) against the interpreter's 16-bit reference at the
configuration's -O level (which values are stored, so rounded, depends
on the pipeline), to P's tolerance (4e-3 bf16, 5e-4 fp16); the bitwise
checks across orders are unchanged.

A memcheck build gives the plain build's bits, so the runs above use
it (and count as memcheck's) wherever the configuration is memchecked
at that model's width: only -O0 at Cora's width has a plain build.

--share even|odd narrows the forced schedules to half of them (those at
an even or odd place in CONFIGS); the matrix's tests give half their
models each share, so every forced schedule is still run, under memcheck
too, by six models or more.  --race-share a|b racechecks half of a
share's forced schedules (race_here): each is racechecked by three
models or more, -O0, -O2 and TF32 by all.  --race-turns K racechecks one
configuration per model, in turn (the i-th model the (i+K)-th
configuration, modulo their count): the 16-bit matrices run three
configurations on thirteen models, so each is racechecked by four models
or more under each precision, and bf16 and fp16 turn by different K.

Weights are random (PyG-like scales; BatchNorm variances positive) from
the parameter table the model's generated code declares; inputs are
Cora's normalized features where the width is Cora's, else seeded random.
The compiled models are cached ($GNNCC_ENGINE_CACHE), so each is built
once per mode.  Prints one line per failure and a summary:

  matrix: M models x C configurations x G graphs = K cases (R runs): all ok
"""
import argparse
import os
import re
import subprocess
import sys
import time

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(os.path.dirname(HERE)))
sys.path.insert(0, os.path.join(ROOT, "tests", "ref"))
import st  # noqa: E402
from compare import compare  # noqa: E402

SHARED = os.path.join(os.path.dirname(ROOT), "shared")
RTOL = 1e-5

# Schedule families: every forced schedule applies to each kernel where it
# is legal (all:), the others keep the cost model's.
CONFIGS = [
    ("O0", ["-O0"]),
    ("O2", []),
    ("lanes1-rows64-split3", ["--schedule=all:lanes=1,rows=64,split=3"]),
    ("lanes2-rows16-split2", ["--schedule=all:lanes=2,rows=16,split=2"]),
    ("lanes4-rows64", ["--schedule=all:lanes=4,rows=64"]),
    # perm=1: the walks read their edge arrays through the plan's
    # permutation, not plan-order copies (the other families' form)
    ("lanes8-rows4-perm1", ["--schedule=all:lanes=8,rows=4,perm=1"]),
    ("lanes16-rows8", ["--schedule=all:lanes=16,rows=8"]),
    ("lanes32-rows32-split8", ["--schedule=all:lanes=32,rows=32,split=8"]),
    # cuda's tiled GEMMs: 64 threads, float4 staging and stores, K unsplit;
    # 32 threads over 8-wide column tiles, k in slabs of 8 (K's tail of 1),
    # K split in up to 4 parts where the tiles are few (O2's GEMMs split
    # in up to 16)
    ("gemm64", ["--schedule=all:bm=64,bn=16,bk=32,tm=4,tn=4"]),
    ("gemm32-bk8-ksplit4", ["--schedule=all:bm=32,bn=8,bk=8,tm=2,tn=4,ksplit=4"]),
]
# --tf32 NAME: that model also under --gpu-math=tf32 (the cost model's
# schedules: its dense transforms on tensor cores), to TF32's tolerance
# (codegen.h's TF32Tol, docs/cli.md)
TF32 = ("tf32", ["--gpu-math=tf32"])
RTOL_TF32 = 5e-3
# --precision: the 16-bit reference's tolerance (unit roundoff 2^-8, 2^-11;
# tests/codegen/precision-models.test)
RTOL16 = {"bf16": 4e-3, "fp16": 5e-4}
QUICK = ["O0", "O2", "lanes4-rows64", "gemm32-bk8-ksplit4"]


# the forced families: the configurations after -O0 and -O2, which the
# shares and the race shares divide
FORCED = [c[0] for c in CONFIGS[2:]]


def race_here(cname, race_share):
    """Does configuration cname run under racecheck with --race-share?
    A forced family's synchronization is the same code whichever model
    it schedules, so each is racechecked by half the models of its share
    (a: the first and third family of the share, b: the second and
    fourth); -O0, -O2 and TF32 by every model"""
    if race_share == "all" or cname not in FORCED:
        return True
    return FORCED.index(cname) // 2 % 2 == (0 if race_share == "a" else 1)


def in_share(cname, share):
    """Does configuration cname run under share?"""
    if share == "all" or cname not in FORCED:
        return True
    return FORCED.index(cname) % 2 == (0 if share == "even" else 1)


def sh(cmd, **kw):
    return subprocess.run(cmd, capture_output=True, text=True, **kw)


def instantiate(path, work):
    """A bench template with its @...@ names filled in, a model at another
    width, else the file itself."""
    if "@" in path:
        path, w = path.rsplit("@", 1)
        out = os.path.join(work, f"w{w}_" + os.path.basename(path))
        open(out, "w").write(open(path).read().replace("1433", w))
        return out
    if not path.endswith(".in"):
        return path
    text = open(path).read()
    name = os.path.basename(path)[:-len(".gnn.in")]
    subst = {"NAME": name.upper() + "_bench", "IN": "64", "CLASSES": "7", "HIDDEN": "32" if name == "gin" else "16",
             "HEADS": "8", "HEAD_HIDDEN": "8"}
    for k, v in subst.items():
        text = text.replace(f"@{k}@", v)
    out = os.path.join(work, f"bench_{name}.gnn")
    open(out, "w").write(text)
    return out


def tables(gnncc, model, inc):
    """The model's inputs, outputs and parameters, from the generated code's tables."""
    r = sh([gnncc, "--target=cpu", "--emit=c", *inc, model, "-o", "-"])
    if r.returncode:
        raise RuntimeError(f"gnncc --emit=c {model}: {r.stderr}")
    found = {}
    for kind in ("inputs", "outputs", "params"):
        m = re.search(r"_%s\[\] = \{\n(.*?)\n\};" % kind, r.stdout, re.S)
        rows = []
        for line in (m.group(1).splitlines() if m else []):
            f = re.match(r'\s*\{"([^"]+)", GNN_(\w+), (\d+), \{([^}]*)\}, "([^"]*)"', line)
            if f:
                dims = [int(d) for d in f.group(4).split(",") if d.strip()] if int(f.group(3)) else []
                # a per-edge input's first dim (edge features): "E" for
                # the graph's edge count, the others' "-1" the node count
                if f.group(5).startswith("[E,") or f.group(5) == "[E]":
                    dims[0] = "E"
                rows.append((f.group(1), f.group(2), dims))
        found[kind] = rows
    return found


def weights(params, path, seed):
    rng = np.random.default_rng(seed)
    out = {}
    for name, dt, dims in params:
        if dt == "I64":
            out[name] = np.zeros(dims, dtype=np.int64)
            continue
        fan = dims[-1] if dims else 1
        a = rng.uniform(-1, 1, size=dims) / np.sqrt(max(fan, 1))
        if name.endswith("running_var") or name.endswith(".weight") and len(dims) == 1 and "norm" in name:
            a = rng.uniform(0.5, 1.5, size=dims)
        out[name] = np.asarray(a, dtype=np.float32)
    st.save(path, out)


COSTLINE = re.compile(r"^  (\S+)\s+(row|chunk|reduce|dense|elementwise|optimizer)\s")
COSTGRID = re.compile(r"grid=(\d+)x(\d+) warps=(\d+) work=(\d+) busiest=(\d+)")


def cost_launches(text):
    """every launch of gnncc --report=cost's text: (name, kind, blocks,
    threads a block, warps, work, busiest warp's work)"""
    out, cur = [], None
    for line in text.splitlines():
        m = COSTLINE.match(line)
        if m:
            cur = (m.group(1), m.group(2))
            continue
        g = COSTGRID.search(line)
        if g and cur:
            out.append(cur + tuple(int(x) for x in g.groups()))
            cur = None
    return out


def run_args(gnncc, model, inc, work, name, n):
    """gnnrun's arguments for model's values: random weights (seeded by
    name), U(-1, 1) inputs of n rows, an output file each, under work"""
    tab = tables(gnncc, model, inc)
    args = []
    if tab["params"]:
        w = os.path.join(work, name + ".safetensors")
        weights(tab["params"], w, seed=len(name))
        args += ["--weights", w]
    for k, (iname, _, dims) in enumerate(tab["inputs"]):
        p = os.path.join(work, f"{name}-{iname}.npy")
        np.save(p, np.random.default_rng(k).uniform(-1, 1, size=[n] + dims[1:]).astype(np.float32))
        args += ["--input", f"{iname}={p}"]
    for k in range(len(tab["outputs"])):
        args += ["--output", os.path.join(work, f"{name}-out{k}.npy")]
    return args


def graphs(names, gnngen, work):
    """name -> (edge_index.npy, node count, x.npy of Cora's width or None)"""
    res = {}
    for g in names:
        d = os.path.join(work, "g-" + g)
        os.makedirs(d, exist_ok=True)
        if g in ("cora", "citeseer"):
            src = os.path.join(ROOT, "data", g)
            ei = os.path.join(src, "edge_index.npy")
            n = np.load(os.path.join(src, "x.npy"), mmap_mode="r").shape[0]
            x = None
            if g == "cora":
                x = os.path.join(d, "x.npy")
                sh([sys.executable, os.path.join(ROOT, "tests", "ref", "normalize.py"), os.path.join(src, "x.npy"), x])
        else:
            # heavy hubs (in-degrees in the hundreds and thousands: many
            # warps' worth of edges on one row) and nodes with no in-edges
            n, e = (2000, 8000) if g == "hubs" else (150, 700)
            r = sh([gnngen, f"--nodes={n}", f"--edges={e}", "--alpha=1.3", "--seed=5", f"--out={d}"])
            if r.returncode:
                raise RuntimeError(r.stderr)
            ei = os.path.join(d, "edge_index.npy")
            indeg = np.bincount(np.load(ei)[1], minlength=n)
            assert indeg.max() > n // 2 and indeg.max() >= e // 10 and (indeg == 0).sum() > n // 3, \
                "a hub of 10% of the edges, and empty rows"
            x = None
        res[g] = (ei, n, x)
    return res


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--build", required=True)
    ap.add_argument("--work", required=True)
    ap.add_argument("--graphs", default="cora,hubs")
    ap.add_argument("--race-graph", default="hubs-small")
    ap.add_argument("--forced-graphs", default="hubs",
                    help="the graphs (of --graphs) that the forced schedules run on")
    ap.add_argument("--configs", default="all")
    ap.add_argument("--no-memcheck", action="store_true")
    ap.add_argument("--no-racecheck", action="store_true")
    ap.add_argument("--share", choices=["all", "even", "odd"], default="all")
    ap.add_argument("--race-share", choices=["all", "a", "b"], default="all",
                    help="racecheck half the share's forced families (race_here)")
    ap.add_argument("--race-turns", type=int, metavar="K",
                    help="racecheck one configuration per model, in turn (the i-th model the (i+K)-th, modulo their count)")
    ap.add_argument("--tf32", default="", help="models (NAME,...) also run under --gpu-math=tf32")
    ap.add_argument("--synthetic-width", type=int, default=281,
                    help="the width that a model at Cora's 1433 runs at on the other graphs (0: 1433)")
    ap.add_argument("--precision", choices=["bf16", "fp16"], help="16-bit storage, against the 16-bit reference")
    ap.add_argument("models", nargs="+")
    a = ap.parse_args()
    os.makedirs(a.work, exist_ok=True)
    env = dict(os.environ)
    env["GNNCC_ENGINE_CACHE"] = os.path.join(a.work, "cache")
    os.makedirs(env["GNNCC_ENGINE_CACHE"], exist_ok=True)
    gnnrun, gnncc = os.path.join(a.build, "gnnrun"), os.path.join(a.build, "gnncc")
    main_graphs = a.graphs.split(",")
    forced_graphs = [g for g in a.forced_graphs.split(",") if g in main_graphs] or main_graphs
    gs = graphs(main_graphs + [a.race_graph], os.path.join(a.build, "gnngen"), a.work)
    picked = CONFIGS if a.configs == "all" else [c for c in CONFIGS if c[0] in (QUICK if a.configs == "quick" else a.configs.split(","))]
    configs = [c for c in picked if in_share(c[0], a.share)]
    t0 = time.time()
    cases = runs = bad = tf32cases = 0
    checked = {"memcheck": 0, "racecheck": 0}

    spent = {}

    def run(extra, g, out, mode=()):
        """gnnrun of the model at g's width, with outputs OUT-0.npy ...
        (one per model output)"""
        nonlocal runs
        runs += 1
        t = time.time()
        key = next((m.split("=")[1] for m in mode if m.startswith("--emu-check=")), "plain")
        ei, n, xin = gs[g]
        cmd = [gnnrun, models[g], *inc, "--graph", ei, "--output-dtype=f64", "--no-tune-cache", *extra, *mode]
        for k in range(nout):
            cmd += ["--output", f"{out}-{k}.npy"]
        for name, path in inputs[g]:
            cmd += ["--input", f"{name}={path}"]
        if batch[g]:
            cmd += ["--batch", batch[g]]
        if wpaths[g]:
            cmd += ["--weights", wpaths[g]]
        r = sh(cmd, env=env)
        spent[key] = spent.get(key, 0) + time.time() - t
        return r

    def same(a, b, rtol=RTOL):
        """the outputs of runs a and b agree to rtol (b: the reference)"""
        for k in range(nout):
            ok, msg = compare(np.load(f"{a}-{k}.npy"), np.load(f"{b}-{k}.npy"), rtol)
            if not ok:
                return False, f"output {k}: {msg}"
        return True, ""

    def raw(a):
        return b"".join(open(f"{a}-{k}.npy", "rb").read() for k in range(nout))

    def fail(what, detail):
        nonlocal bad
        bad += 1
        tail = " ".join(detail.strip().splitlines()[-6:])[-600:]
        print(f"FAIL {what}: {tail}", flush=True)

    for mi, spec in enumerate(a.models):
        name, path = spec.split("=", 1)
        model = instantiate(path, a.work)
        inc = ["-I", os.path.dirname(os.path.abspath(path.split("@")[0]))]   # its imports
        # a model at Cora's width runs at --synthetic-width on the other graphs
        narrow = model
        if a.synthetic_width and "@" not in path and "1433" in open(model).read():
            narrow = instantiate(f"{path}@{a.synthetic_width}", a.work)
        models = {g: model if g == "cora" else narrow for g in gs}
        tabs, wpaths = {}, {}
        for m in set(models.values()):
            tabs[m] = tables(gnncc, m, inc)
            wpaths[m] = None
            if tabs[m]["params"]:
                wpaths[m] = os.path.join(a.work, f"{name}-{os.path.basename(m)}.safetensors")
                weights(tabs[m]["params"], wpaths[m], seed=len(name))
        wpaths = {g: wpaths[m] for g, m in models.items()}
        batched = "graph[N, E, B]" in open(model).read()
        nout = len(tabs[models[next(iter(gs))]]["outputs"])
        inputs, batch = {}, {}
        for g, (ei, n, xcora) in gs.items():
            inputs[g] = []
            for k, (iname, _, dims) in enumerate(tabs[models[g]]["inputs"]):
                if xcora and dims[1:] == [1433]:
                    inputs[g].append((iname, xcora))
                    continue
                p = os.path.join(a.work, f"{name}-{g}-{iname}.npy")
                rng = np.random.default_rng(1000 + k)
                rows = np.load(ei, mmap_mode="r").shape[1] if dims[:1] == ["E"] else n
                np.save(p, rng.uniform(-1, 1, size=[rows] + dims[1:]).astype(np.float32))
                inputs[g].append((iname, p))
            batch[g] = None
            if batched:
                batch[g] = os.path.join(a.work, f"batch-{g}.npy")
                np.save(batch[g], (np.arange(n) * 8 // max(n, 1)).astype(np.int64))
        # the reference of each -O level that matters: under
        # --precision the pipeline decides what is rounded
        refs, pflags = {}, [f"--precision={a.precision}"] if a.precision else []
        for g in gs:
            for olevel in (["-O2", "-O0"] if a.precision else ["-O2"]):
                refs[g, olevel] = os.path.join(a.work, f"{name}-{g}{olevel}-ref")
                r = run(["--engine=interp", olevel, *pflags], g, refs[g, olevel])
                if r.returncode:
                    fail(f"{name} {g} interp {olevel}", r.stderr)
        mconfigs = configs + ([TF32] if name in a.tf32.split(",") else [])
        for ci, (cname, flags) in enumerate(mconfigs):
            emu = ["--engine=cuda-emu", *pflags, *flags]
            rtol = max(RTOL_TF32 if cname == "tf32" else RTOL, RTOL16.get(a.precision, 0))
            ref = {g: refs[g, "-O0" if a.precision and cname == "O0" else "-O2"] for g in gs}
            forced = cname not in ("O0", "O2", "tf32")

            def memchecked(g):
                return not a.no_memcheck and (g == a.race_graph or not forced and g in main_graphs
                                              and (cname != "O0" or g in forced_graphs))

            # a model's memcheck build gives its plain build's bits, so
            # the runs use it wherever this configuration is memchecked
            # at that model's width (one build less)
            viamem = {g: any(memchecked(h) and models[h] == models[g] for h in gs) for g in gs}
            for g in gs:
                base = os.path.join(a.work, f"{name}-{cname}-{g}")
                what = f"{name} {cname} {g}"
                tools = []
                if memchecked(g):
                    tools.append("memcheck")
                if g == a.race_graph and not a.no_racecheck and race_here(cname, a.race_share if a.configs == "all" else "all") \
                        and (a.race_turns is None or ci == (mi + a.race_turns) % len(mconfigs)):
                    tools.append("racecheck")
                base_mode = ["--emu-check=memcheck"] if viamem[g] else []
                if g in main_graphs and (not forced or g in forced_graphs):
                    if cname == "tf32":
                        tf32cases += 1
                    else:
                        cases += 1
                    r = run(emu, g, base, base_mode)
                    if r.returncode:
                        fail(what, r.stderr)
                        continue
                    ok, msg = same(base, ref[g], rtol)
                    if not ok:
                        fail(what + " against the interpreter", msg)
                        continue
                    first = raw(base)
                    rev = ("reverse order", ["--emu-order=reverse"])
                    rnd = ("random order, 2 blocks", ["--emu-order=random:%d" % (cases * 7919), "--emu-grid-max=2"])
                    k = [c[0] for c in mconfigs].index(cname)
                    again = [rev, rnd, ("second run, deferred", ["--emu-defer"])] if cname == "O2" else [] if g != "hubs" else \
                        [rev] if k % 2 else [rnd]
                    if "memcheck" in tools and base_mode:
                        tools.remove("memcheck")     # the run above was memcheck's
                        checked["memcheck"] += 1
                    for tag, mode in again:
                        r = run(emu, g, base + "-p", base_mode + mode)
                        if r.returncode:
                            fail(f"{what} {tag}", r.stderr)
                        elif raw(base + "-p") != first:
                            fail(f"{what} {tag}", "output differs bitwise from the first run")
                for tool in tools:
                    checked[tool] += 1
                    r = run(emu, g, base + "-s", [f"--emu-check={tool}"])
                    if r.returncode:
                        fail(f"{what} {tool}", r.stderr)
                        continue
                    ok, msg = same(base + "-s", ref[g], rtol)
                    if not ok:
                        fail(f"{what} {tool} against the interpreter", msg)
    print(f"matrix: {len(a.models)} models x {len(configs)} configurations on {','.join(main_graphs)} "
          + (f"under {a.precision} " if a.precision else "") +
          f"(forced schedules on {','.join(forced_graphs)}) = {cases} cases, "
          + (f"{tf32cases} under TF32, " if tf32cases else "") +
          f"{checked['memcheck']} under memcheck, {checked['racecheck']} under racecheck "
          f"({runs} runs, {time.time() - t0:.0f} s): {'all ok' if not bad else f'{bad} FAILED'}")
    print("seconds by check: " + ", ".join(f"{k} {v:.0f}" for k, v in sorted(spent.items())))
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
