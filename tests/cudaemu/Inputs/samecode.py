#!/usr/bin/env python3
"""samecode.py GNNCC: the benchmark's SAGE, GAT and GIN (bench/models,
instantiated at the examples' sizes) compile to the same CUDA as the
examples' models, comments and file names aside, at -O0 and -O2 under
several schedules; the cuda matrix (matrix/) runs the examples' models
only, and this is why that covers these three of the benchmark's (its
GCN drops out its input, a kernel of its own at -O0: matrix/bench-gcn).  Prints one line per
model and level; exit 1 when any differs (the benchmark's model then
needs a matrix test of its own)."""
import os
import re
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(os.path.dirname(HERE)))
SIZES = {"sage": {"HIDDEN": "16"}, "gin": {"HIDDEN": "32"}, "gat": {"HEADS": "8", "HEAD_HIDDEN": "8"}}
FLAGS = [["-O0"], ["-O2"], ["-O2", "--schedule=all:lanes=2,rows=16,split=2"],
         ["-O2", "--schedule=all:bm=32,bn=8,bk=8,tm=2,tn=4"]]


def cuda(gnncc, path, flags):
    r = subprocess.run([gnncc, "--target=cuda", "--emit=cuda", *flags, path, "-o", "-"], capture_output=True, text=True)
    if r.returncode:
        raise SystemExit(f"samecode: gnncc {path}: {r.stderr}")
    text = re.sub(r"/\*.*?\*/", "", r.stdout, flags=re.S)          # comments: source lines, the banner
    return [l for l in text.splitlines() if l.strip() and not l.startswith("#include")]


def main():
    gnncc = sys.argv[1]
    bad = 0
    with tempfile.TemporaryDirectory() as d:
        for name, sizes in SIZES.items():
            text = open(os.path.join(ROOT, "bench", "models", name + ".gnn.in")).read()
            for k, v in dict(NAME=name.upper(), IN="1433", CLASSES="7", **sizes).items():
                text = text.replace(f"@{k}@", v)
            bench = os.path.join(d, name + ".gnn")
            open(bench, "w").write(text)
            example = os.path.join(ROOT, "examples", name, name + ".gnn")
            for flags in FLAGS:
                same = cuda(gnncc, bench, flags) == cuda(gnncc, example, flags)
                bad += not same
                print(f"{name} {' '.join(flags)}: {'same' if same else 'DIFFERENT'}")
    print("samecode: " + ("all the same" if not bad else f"{bad} differ"))
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
