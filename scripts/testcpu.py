#!/usr/bin/env python3
"""The CPU each lit test takes, where the suite's time goes: every test
file of tests/ run alone by lit (-j1) against one build tree, JOBS at a
time, and the user + system seconds of its whole process tree (the
compilers, gnnrun, Python) recorded, which, unlike lit's --time-tests
wall times, does not grow with the machine's other load.

usage: testcpu.py BUILD_DIR [-j JOBS] [-o OUT] [PATH ...]

PATHs (test files or folders under tests/) narrow the set; the longest
tests of the last lit run start first.  OUT (default: stdout) gets one
line per test, "CPU WALL STATUS TEST", as each ends; a summary goes to
stderr.  The whole tree takes as long as the suite's share of it: run
it on a quiet machine."""
import argparse
import os
import subprocess
import sys
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
TESTS = os.path.join(ROOT, "tests")
SKIP = {"Inputs", "ref", "unit", "models", "data"}    # lit.cfg.py's excludes


def tests_under(paths):
    found = []
    for p in paths:
        p = os.path.abspath(p)
        if os.path.isfile(p):
            found.append(p)
            continue
        for d, dirs, files in os.walk(p):
            dirs[:] = sorted(x for x in dirs if x not in SKIP)
            found += [os.path.join(d, f) for f in sorted(files) if f.endswith((".test", ".gnn", ".ir"))]
    return found


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("build")
    ap.add_argument("-j", "--jobs", type=int, default=2)
    ap.add_argument("-o", "--out")
    ap.add_argument("paths", nargs="*")
    a = ap.parse_args()
    build = os.path.abspath(a.build)
    todo = tests_under(a.paths or [TESTS])
    last = {}
    try:
        with open(os.path.join(build, "lit", ".lit_test_times.txt")) as f:
            for line in f:
                t, name = line.split()
                last[name] = float(t)
    except (OSError, ValueError):
        pass
    todo.sort(key=lambda p: -last.get(os.path.relpath(p, TESTS), 0))
    out = open(a.out, "w") if a.out else sys.stdout
    running, total, bad = {}, 0.0, 0
    while todo or running:
        while todo and len(running) < a.jobs:
            p = todo.pop(0)
            pr = subprocess.Popen(["lit", "-q", "-j1", "--param", f"build={build}", p],
                                  stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
            running[pr.pid] = (p, time.time())
        # wait4: the rusage of the child and every descendant it reaped
        pid, status, ru = os.wait4(-1, 0)
        if pid not in running:
            continue
        p, t0 = running.pop(pid)
        cpu = ru.ru_utime + ru.ru_stime
        total += cpu
        rc = os.waitstatus_to_exitcode(status)
        bad += rc != 0
        out.write(f"{cpu:.1f} {time.time() - t0:.1f} {rc} {os.path.relpath(p, TESTS)}\n")
        out.flush()
    print(f"testcpu: {total:.0f} CPU seconds, {bad} failed", file=sys.stderr)
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
