#!/usr/bin/env python3
"""A model's forward under --vendor on the emulated device, checked.

usage: vendor.py GNNRUN MODEL.gnn WEIGHTS EDGE_INDEX X WORK [--vendor LIST] [--memcheck] [--tf32]

Runs the float64 interpreter, then gnnrun --engine=cuda-emu --vendor=LIST
(default cublas) with --profile, and prints one line per check:

  * the forward launches the vendor schedule ran (vendor=1), from the
    profile: a run that calls no vendor library tests nothing, so none
    is a failure;
  * the output against the interpreter's (1e-5 of the largest output,
    5e-3 with --tf32: tests/ref/compare.py);
  * a second run in a seeded random order with grids clamped to 3 blocks,
    bitwise the first;
  * with --memcheck, a run under AddressSanitizer, bitwise the first.
Exit status 1 on any failure.
"""
import os
import subprocess
import sys

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "..", "ref"))
from compare import compare  # noqa: E402


def run(cmd):
    r = subprocess.run(cmd, capture_output=True, text=True)
    if r.returncode:
        sys.stdout.write(r.stdout + r.stderr)
        sys.exit(f"failed: {' '.join(cmd)}")
    return r.stdout + r.stderr


def main():
    argv = sys.argv[1:]
    vendor = "cublas"
    if "--vendor" in argv:
        k = argv.index("--vendor")
        vendor = argv[k + 1]
        del argv[k:k + 2]
    gnnrun, model, weights, ei, x, work = [a for a in argv if not a.startswith("--")]
    extra = ["--gpu-math=tf32"] if "--tf32" in sys.argv else []
    name = os.path.splitext(os.path.basename(model))[0]
    base = [gnnrun, model, "--graph", ei, "--input", "x=" + x, "--weights", weights]
    out = lambda tag: os.path.join(work, f"{name}-{tag}.npy")  # noqa: E731
    run(base + ["--engine=interp", "--output", out("interp"), "--output-dtype=f64"])
    emu = base + ["--engine=cuda-emu", "--vendor=" + vendor] + extra
    prof = run(emu + ["--profile", "--output", out("emu")])
    calls = [ln.split()[1] for ln in prof.splitlines() if ln.startswith("forward ") and " vendor=1 " in ln]
    print(f"{name}: vendor launches: {' '.join(calls) if calls else 'none'}")
    ok = bool(calls)
    good, msg = compare(np.load(out("emu")), np.load(out("interp")), 5e-3 if extra else 1e-5)
    print(f"{name}: against the interpreter: {'PASS' if good else 'FAIL'} ({msg})")
    ok &= good
    checks = [("random order", ["--emu-order=random:7", "--emu-grid-max=3"])]
    if "--memcheck" in sys.argv:
        checks.append(("memcheck", ["--emu-check=memcheck"]))
    for what, flags in checks:
        run(emu + flags + ["--output", out(what[:3])])
        same = np.load(out(what[:3])).tobytes() == np.load(out("emu")).tobytes()
        print(f"{name}: {what}: {'bitwise the same' if same else 'DIFFERENT'}")
        ok &= same
    sys.exit(0 if ok else 1)


if __name__ == "__main__":
    main()
