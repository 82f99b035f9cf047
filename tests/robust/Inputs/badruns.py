#!/usr/bin/env python3
"""badruns.py GNNRUN MODEL DIR ENGINE: run gnnrun on each broken input
that badfiles.py wrote into DIR, twice: once with an output path that
does not exist, once over DIR/old.npy.  Each run must exit with status 1
(not a crash), leave the new path absent and old.npy byte-identical to
DIR/before.npy.  Prints "CASE: " and the first error line of each case,
then a summary line; exits 1 if any run broke the rules."""
import os
import subprocess
import sys

gnnrun, model, d, engine = sys.argv[1:5]


def p(name):
    return os.path.join(d, name)


good = {"graph": p("ei.npy"), "x": p("x.npy"), "weights": p("w.safetensors")}
cases = [
    ("x-trunc", {"x": p("x-trunc.npy")}, []),
    ("x-lie", {"x": p("x-lie.npy")}, []),
    ("x-hlen", {"x": p("x-hlen.npy")}, []),
    ("x-f16", {"x": p("x-f16.npy")}, []),
    ("x-wide", {"x": p("x-wide.npy")}, []),
    ("x-few", {"x": p("x-few.npy")}, []),
    ("x-nan", {"x": p("x-nan.npy")}, ["--check-finite"]),
    ("x-inf", {"x": p("x-inf.npy")}, ["--check-finite"]),
    ("ei-trunc", {"graph": p("ei-trunc.npy")}, []),
    ("ei-3xE", {"graph": p("ei-3xE.npy")}, []),
    ("ei-f32", {"graph": p("ei-f32.npy")}, []),
    ("ei-1d", {"graph": p("ei-1d.npy")}, []),
    ("ei-big", {"graph": p("ei-big.npy")}, []),
    ("ei-neg", {"graph": p("ei-neg.npy")}, []),
    ("w-trunc", {"weights": p("w-trunc.safetensors")}, []),
    ("w-hlen", {"weights": p("w-hlen.safetensors")}, []),
    ("w-lie", {"weights": p("w-lie.safetensors")}, []),
    ("w-dup", {"weights": p("w-dup.safetensors")}, []),
    ("w-nan", {"weights": p("w-nan.safetensors")}, ["--check-finite"]),
    ("w-missing", {"weights": p("w-missing.safetensors")}, []),
    ("w-extra", {"weights": p("w-extra.safetensors")}, []),
    ("w-shape", {"weights": p("w-shape.safetensors")}, []),
    ("w-dtype", {"weights": p("w-dtype.safetensors")}, []),
    ("nodes", {}, ["--num-nodes", "9"]),
    ("missing-input", {"x": p("nothere.npy")}, []),
    ("missing-graph", {"graph": p("nothere.npy")}, []),
    ("missing-weights", {"weights": p("nothere.safetensors")}, []),
    ("dir-input", {"x": d}, []),
    ("twice", {}, ["--output", "OUT"]),
]
before = open(p("before.npy"), "rb").read()
bad = 0
for name, files, extra in cases:
    f = dict(good, **files)
    for out in (p("new-" + name + ".npy"), p("old.npy")):
        args = [gnnrun, model, "--engine=" + engine, "--graph", f["graph"],
                "--input", "x=" + f["x"], "--weights", f["weights"], "--output", out]
        args += [out if a == "OUT" else a for a in extra]
        r = subprocess.run(args, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
        errs = [line for line in r.stdout.splitlines() if line.startswith("gnnrun: error:")]
        if out.endswith("old.npy"):
            print(f"{name}: {errs[0] if errs else '(no error message)'}")
        if r.returncode != 1:
            print(f"FAIL {name}: exit status {r.returncode}\n{r.stdout}")
            bad += 1
        if not out.endswith("old.npy") and os.path.exists(out):
            print(f"FAIL {name}: {out} was created")
            bad += 1
        if open(p("old.npy"), "rb").read() != before:
            print(f"FAIL {name}: old.npy was changed")
            bad += 1
        leftovers = [n for n in os.listdir(d) if ".tmp" in n]
        if leftovers:
            print(f"FAIL {name}: temporaries left: {leftovers}")
            bad += 1
print("all cases: exit status 1, no output written" if not bad else f"{bad} failures")
sys.exit(1 if bad else 0)
