#!/usr/bin/env python3
"""losses.py A B [TOL]: gnnrun --train's two logs give the same loss at
every epoch, to TOL relative (default 1e-4)."""
import re
import sys

def losses(path):
    return [float(m.group(1)) for m in re.finditer(r"epoch \d+ loss (\S+)", open(path).read())]

a, b = losses(sys.argv[1]), losses(sys.argv[2])
tol = float(sys.argv[3]) if len(sys.argv) > 3 else 1e-4
if not a or len(a) != len(b):
    sys.exit(f"FAIL: {len(a)} and {len(b)} losses")
for e, (x, y) in enumerate(zip(a, b), 1):
    if abs(x - y) > tol * max(1.0, abs(y)):
        sys.exit(f"FAIL: epoch {e}: {x} and {y}")
print(f"ok: {len(a)} equal losses")
