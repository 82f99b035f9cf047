#!/usr/bin/env python3
"""Runs a model with gnnrun on a small graph under several engine and
optimization settings and compares every output with the interpreter's
(NaN where the interpreter has NaN, else 1e-5 of the largest output).

usage: engines.py GNNRUN MODEL.gnn WORKDIR INPUT=D0xD1...[,INPUT=...] [--nodes N] SETTING...

A SETTING is gnnrun options joined by commas (--engine=cpu,-O0); an
item NAME=VALUE not starting with "-" sets an environment variable for
that run (OMP_NUM_THREADS=3) where NAME is upper case, and is else the
previous option's, whose value had a comma (--schedule=all:lanes=4,rows=8).  A SETTING starting with "=" must also give
the outputs of the last setting before it without "=" bit for bit (one
must come before it).  Prints one line per setting: "SETTING ok" or
"SETTING MISMATCH ...".  The graph has 6 nodes, or with --nodes N a
random one of N nodes and 6 N edges.
"""
import os
import subprocess
import sys

import numpy as np


def run(gnnrun, model, work, tag, inputs, opts):
    env = dict(os.environ)
    env.update(o.split("=", 1) for o in opts if not o.startswith("-"))
    opts = [o for o in opts if o.startswith("-")]
    outs = [os.path.join(work, "%s.out%d.npy" % (tag, k)) for k in range(8)]
    cmd = [gnnrun, model, "--graph", os.path.join(work, "edges.npy")]
    for name, path in inputs:
        cmd += ["--input", "%s=%s" % (name, path)]
    n = 1
    while True:   # as many --output as the model has outputs
        r = subprocess.run(cmd + sum((["--output", o] for o in outs[:n]), []) + opts, capture_output=True, text=True, env=env)
        if r.returncode == 0:
            return [np.load(o) for o in outs[:n]]
        if n == len(outs) or "output" not in r.stderr:
            sys.exit("engines.py: %s failed:\n%s" % (" ".join(cmd + opts), r.stderr))
        n += 1


def items(setting):
    """a SETTING's options and environment items"""
    out = []
    for it in setting.split(","):
        if out and not it.startswith("-") and not it.split("=", 1)[0].isupper():
            out[-1] += "," + it
        else:
            out.append(it)
    return out


def main():
    gnnrun, model, work, spec = sys.argv[1:5]
    settings = sys.argv[5:]
    os.makedirs(work, exist_ok=True)
    rng = np.random.default_rng(7)
    if settings[:1] == ["--nodes"]:
        nodes = int(settings[1])
        settings = settings[2:]
        edges = rng.integers(0, nodes, size=(2, 6 * nodes), dtype=np.int64)
    else:
        nodes = 6
        # a small graph: a node without in-edges, one with several
        edges = np.array([[0, 1, 2, 3, 4, 0, 2], [1, 2, 3, 1, 1, 4, 4]], dtype=np.int64)
    np.save(os.path.join(work, "edges.npy"), edges)
    inputs = []
    for item in spec.split(","):
        name, dims = item.split("=")
        shape = [nodes] + [int(d) for d in dims.split("x")]
        path = os.path.join(work, "%s.npy" % name)
        np.save(path, rng.uniform(0.5, 1.0, size=shape).astype(np.float32))
        inputs.append((name, path))
    if settings[:1] and settings[0].startswith("="):
        sys.exit("engines.py: %s: no setting before it to give the bits of" % settings[0])
    ref = run(gnnrun, model, work, "ref", inputs, ["--engine=interp"])
    for k, setting in enumerate(settings):
        got = run(gnnrun, model, work, "s%d" % k, inputs, items(setting.lstrip("=")))
        bad = []
        for j, (a, b) in enumerate(zip(ref, got)):
            a = a.astype(np.float64)
            b = b.astype(np.float64)
            tol = 1e-5 * max(1.0, float(np.nanmax(np.abs(a))) if a.size and not np.all(np.isnan(a)) else 1.0)
            if a.shape != b.shape or not np.array_equal(np.isnan(a), np.isnan(b)) or \
                    np.any(np.abs(np.nan_to_num(a) - np.nan_to_num(b)) > tol):
                bad.append("output %d: %s vs %s" % (j, a.ravel()[:6], b.ravel()[:6]))
        if setting.startswith("="):
            for j, (a, b) in enumerate(zip(first, got)):
                if a.tobytes() != b.tobytes():
                    bad.append("output %d: not the bits of %s" % (j, firstname))
        if not setting.startswith("="):
            first, firstname = got, setting
        print("%s %s" % (setting, "ok" if not bad else "MISMATCH " + "; ".join(bad)))


main()
