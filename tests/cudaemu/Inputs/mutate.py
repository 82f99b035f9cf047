#!/usr/bin/env python3
"""Mutation tests of the emulated device's checks on gnncc's own CUDA.

usage: mutate.py --gnncc GNNCC --cxx CXX --emuinc DIR --runtime DIR
                 --lib DIR --examples DIR --data DIR --work DIR MUTATION

Generates the GCN example's CUDA (examples/gcn, a lane schedule so that
its row kernels share rows through shared memory and __syncwarp), applies
one MUTATION to the generated source, compiles it for the emulated device
(with AddressSanitizer for 'offbyone', ThreadSanitizer for 'syncwarp'),
links it with the example's own main.c, and runs it on Cora; the run's
output and exit status go to standard output for FileCheck.  'none'
applies nothing (the control: every check passes).

  syncwarp   every __syncwarp() of GCN_g0 removed: lanes read the row
             other lanes wrote (racecheck)
  offbyone   the dense kernel's (a tiled GEMM's) last slab of K starts
             one k late: it loads one row past the weight matrix
             (memcheck)
  divergent  GCN_g0's first __syncwarp() only where the row is live: the
             last warp's idle lanes skip it (synccheck)
  arena      GCN_g0's gather (by the src index's plan-order copy) reads
             the next node's row of conv1.lin.y:
             the last node's row is one past the buffer, which fills
             its 256-byte arena slot exactly, so the read lands in the
             next buffer of the arena unless the runtime keeps redzones
             between them (memcheck)
  uninit     a bind-time value that forward reads gets its device copy in
             the arena but is never uploaded (its buffer-table row says
             forward makes it): kernels read device memory nothing wrote
             (initcheck); under perm=1, so that the walks read GCN's norm
             itself rather than its plan-order copy

A mutation whose site is not found in the generated code is an error, so
that a change in code generation cannot make a test pass vacuously.
"""
import argparse
import os
import re
import subprocess
import sys


def kernel_span(src, name):
    """The text of kernel `name`: its head to the next kernel or function."""
    m = re.search(r"^GNN_DKERNEL(?:_LB)?\(%s(?:,[^)]*)?\)" % re.escape(name), src, re.M)
    if not m:
        sys.exit(f"mutate.py: kernel {name} not in the generated code")
    end = src.find("\n}\n", m.start())
    return m.start(), end + 3


def mutate(src, what):
    if what == "none":
        return src
    if what in ("syncwarp", "divergent"):
        a, b = kernel_span(src, "GCN_g0")
        body = src[a:b]
        n = body.count("__syncwarp();")
        if n < 2:
            sys.exit("mutate.py: GCN_g0 has no __syncwarp() to remove")
        if what == "syncwarp":
            body = body.replace("__syncwarp();", ";")
        else:
            body = body.replace("__syncwarp();", "if (live_) __syncwarp();", 1)
        return src[:a] + body + src[b:]
    if what == "offbyone":
        a, b = kernel_span(src, "GCN_k10")
        body = src[a:b]
        m = re.search(r"const int64_t k0_ = (\d+);", body)
        if not m:
            sys.exit("mutate.py: GCN_k10 has no last slab of K")
        return src[:a] + body[:m.start(1)] + str(int(m.group(1)) + 1) + body[m.end(1):] + src[b:]
    if what == "arena":
        a, b = kernel_span(src, "GCN_g0")
        body = src[a:b]
        # the src index's plan-order copy, read at the walk's position
        pat = re.compile(r"conv1_lin_y\[(GNN_IXAT\(\w+, ix32_, k_\)) \* 16 \+ \(j_\)\]")
        if len(pat.findall(body)) != 1:
            sys.exit("mutate.py: GCN_g0 does not gather conv1_lin_y by v2's copy")
        return src[:a] + pat.sub(r"conv1_lin_y[(\1 + 1) * 16 + (j_)]", body) + src[b:]
    if what == "uninit":
        table = src.find("GCN_buffers[] = {")
        pat = re.compile(r'(\{"[^"]*", )GNN_BUF_BIND(, GNN_F32, GNN_BUF_DEVICE,)')
        m = pat.search(src, table)
        if table < 0 or not m:
            sys.exit("mutate.py: no bind-time buffer that forward reads in GCN_buffers")
        return src[:m.start()] + m.group(1) + "GNN_BUF_FWD" + m.group(2) + src[m.end():]
    sys.exit(f"mutate.py: unknown mutation {what}")


def main():
    ap = argparse.ArgumentParser()
    for k in ("gnncc", "cxx", "emuinc", "runtime", "lib", "examples", "data", "work"):
        ap.add_argument("--" + k, required=True)
    ap.add_argument("mutation")
    a = ap.parse_args()
    os.makedirs(a.work, exist_ok=True)
    w = lambda f: os.path.join(a.work, f)
    model = os.path.join(a.examples, "gcn", "gcn.gnn")
    # lanes=4: 8 rows per warp, so Cora's 2708 rows leave the last warp half idle
    # uninit: perm=1, so that forward reads GCN's norm itself, not its
    # plan-order copy (which bind makes on the device)
    rows = "--schedule=all:lanes=4,rows=8" + (",perm=1" if a.mutation == "uninit" else "")
    sched = ["--no-tune-cache", rows, "--schedule=k10:bm=64,bn=16,bk=32,tm=4,tn=4"]
    for emit, out in (("cuda", "gcn.cu"), ("header", "gcn.h")):
        subprocess.run([a.gnncc, "--target=cuda", f"--emit={emit}", *sched, model, "-o", w(out)], check=True)
    src = open(w("gcn.cu")).read()
    open(w("gcn.cu"), "w").write(mutate(src, a.mutation))
    san = {"offbyone": ["-fsanitize=address"], "arena": ["-fsanitize=address"],
           "syncwarp": ["-fsanitize=thread"]}.get(a.mutation, [])
    if a.mutation == "none":
        san = []
    flags = ["-g", "-O1", *san]
    cc = [a.cxx, "-std=c++17", "-fno-exceptions", "-fno-rtti", *flags, f"-I{a.emuinc}", f"-I{a.runtime}",
          f"-I{a.work}", f"-I{os.path.join(a.examples, 'common')}"]
    subprocess.run([*cc, "-x", "c++", w("gcn.cu"), "-c", "-o", w("gcn.o")], check=True)
    for c in (os.path.join(a.examples, "gcn", "main.c"), os.path.join(a.examples, "common", "cora.c")):
        subprocess.run(["cc", "-std=c11", *flags, f"-I{a.runtime}", f"-I{a.work}",
                        f"-I{os.path.join(a.examples, 'common')}", "-c", c, "-o", w(os.path.basename(c) + ".o")],
                       check=True)
    subprocess.run([a.cxx, *san, w("main.c.o"), w("cora.c.o"), w("gcn.o"), f"-L{a.lib}", "-lgnnemu", "-lgnnrt",
                    "-lm", "-o", w("gcn")], check=True)
    env = dict(os.environ)
    env.setdefault("TSAN_OPTIONS", "halt_on_error=1")
    r = subprocess.run([w("gcn"), a.data, os.path.join(a.examples, "gcn", "gcn_cora.safetensors")],
                       capture_output=True, text=True, env=env)
    sys.stdout.write(r.stdout + r.stderr)
    print(f"exit status {r.returncode}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
