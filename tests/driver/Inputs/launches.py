#!/usr/bin/env python3
"""launches.py SOURCE MODEL: count the kernels the generated forward of
MODEL launches (MODEL_run's body: each GNN_DLAUNCH/GNN_HLAUNCH/GNN_RLAUNCH, and each
call of a sequential scatter, MODEL_kN(...) on a line of its own), the
split rows' chunk kernels (MODEL_gN_cK) and the split-K GEMMs' sums
(MODEL_kN_ksum, MODEL_gN_ksum with an epilogue) apart.
Prints "launches: N", "chunk launches: C" and "ksum launches: S"."""
import re
import sys

src, model = sys.argv[1], sys.argv[2]
body, inside = [], False
for line in open(src):
    if line.startswith(model + "_run("):
        inside = True
    elif inside and line.startswith("}"):
        break
    elif inside:
        body.append(line)
calls = [l for l in body
         if re.search(r"GNN_[DHR]LAUNCH\(", l) or re.match(r"\s+%s_k\d+\(" % model, l)]
chunk = sum(1 for l in calls if re.search(r"\b%s_g\d+_c\d+\b" % model, l))
ksum = sum(1 for l in calls if re.search(r"\b%s_[kg]\d+_ksum\b" % model, l))
print("launches: %d" % (len(calls) - chunk - ksum))
print("chunk launches: %d" % chunk)
print("ksum launches: %d" % ksum)
