#!/usr/bin/env python3
"""The slowest tests of the last ctest run, from its log
(Testing/Temporary/LastTest.log under the directory ctest ran in):
ctest's entries (a lit suite is one) and, inside them, lit's single tests,
which lit lists when run with --time-tests (scripts/test.sh sets that in
LIT_OPTS).  usage: testtimes.py CTEST_DIR [N]"""
import os
import re
import sys


def main():
    d = sys.argv[1]
    n = int(sys.argv[2]) if len(sys.argv) > 2 else 10
    try:
        log = open(os.path.join(d, "Testing", "Temporary", "LastTest.log"), errors="replace").read()
    except OSError as e:
        print(f"testtimes: no ctest log ({e})")
        return 0
    entries, lits = [], []
    # a section: "N/M Testing: NAME" ... "NAME" time elapsed: HH:MM:SS
    for m in re.finditer(r"^\d+/\d+ Testing: (\S+)\n(.*?)^Test time = +([0-9.]+) sec", log, re.S | re.M):
        name, body, secs = m.group(1), m.group(2), float(m.group(3))
        entries.append((secs, name))
        prefix = "asan." if name.startswith("asan.") else ""
        for t, test in re.findall(r"^ *([0-9.]+)s: \S+ :: (\S+)$", body, re.M):
            lits.append((float(t), prefix + test))
    entries.sort(reverse=True)
    lits.sort(reverse=True)
    print(f"The {min(n, len(entries))} slowest of {len(entries)} ctest entries (seconds):")
    for secs, name in entries[:n]:
        print(f"  {secs:8.1f}  {name}")
    if lits:
        print(f"The {min(n, len(lits))} slowest lit tests inside them (asan.: the sanitizer tree's):")
        for secs, name in lits[:n]:
            print(f"  {secs:8.1f}  {name}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
