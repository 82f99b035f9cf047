#!/usr/bin/env python3
"""rc.py CODES CMD ARGS...: run CMD, pass its stdout and stderr through
(both to stdout, in order), and fail unless it exits with one of CODES
(comma-separated).  lit's `not` accepts any failure; these tests must
tell a clean exit 1 from a crash (a signal) or an abort (134)."""
import subprocess
import sys

codes = {int(c) for c in sys.argv[1].split(",")}
p = subprocess.run(sys.argv[2:], stdout=subprocess.PIPE, stderr=subprocess.STDOUT)
sys.stdout.buffer.write(p.stdout)
sys.stdout.flush()
if p.returncode not in codes:
    how = f"signal {-p.returncode}" if p.returncode < 0 else f"exit status {p.returncode}"
    sys.stderr.write(f"rc.py: {sys.argv[2]} ended with {how}, expected {sys.argv[1]}\n")
    sys.exit(1)
