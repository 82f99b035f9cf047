#!/usr/bin/env python3
"""doc_run.py PAGE.md EXAMPLE_DIR BIN_DIR: run a docs page's example as
the page shows it.  Every ```sh block runs, in order, in EXAMPLE_DIR
(bash -e -o pipefail, BIN_DIR first on PATH: gnncc and gnnrun), its
commands and output printed; every other fenced block (python, gnn, c)
must occur verbatim in one of EXAMPLE_DIR's files of that language, so
the page's excerpts are the example's code.  Prints `doc: all ok` or the
failures, and exits non-zero on any."""
import glob
import os
import re
import subprocess
import sys

EXT = {"python": "py", "gnn": "gnn", "c": "c"}


def main():
    page, work, bindir = sys.argv[1:4]
    text = open(page).read()
    blocks = re.findall(r"^```(\w+)\n(.*?)^```$", text, re.S | re.M)
    env = dict(os.environ, PATH=os.path.abspath(bindir) + os.pathsep + os.environ.get("PATH", ""))
    bad = 0
    for k, (lang, body) in enumerate(blocks):
        if lang == "sh":
            print("$ " + body.rstrip().replace("\n", "\n$ "), flush=True)
            r = subprocess.run(["bash", "-e", "-o", "pipefail", "-c", body], cwd=work, env=env,
                               stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
            print(r.stdout, end="", flush=True)
            if r.returncode:
                print(f"FAIL block {k} (sh) exits {r.returncode}")
                bad += 1
            continue
        if lang not in EXT:
            print(f"FAIL block {k}: no files of language {lang}")
            bad += 1
            continue
        files = sorted(glob.glob(os.path.join(work, "*." + EXT[lang])))
        where = [os.path.basename(f) for f in files if body in open(f).read()]
        if where:
            print(f"excerpt {k} ({lang}): from {where[0]}")
        else:
            print(f"FAIL excerpt {k} ({lang}) is in none of " + ", ".join(os.path.basename(f) for f in files))
            bad += 1
    print("doc: " + ("all ok" if not bad else f"{bad} FAILED"))
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
