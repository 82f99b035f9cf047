#!/usr/bin/env python3
"""roundtrip_all.py GNNCC ROOT...: for every .gnn under the ROOTs that
compiles, print(parse(print(m))) must equal print(m) for the IR after the
frontend and after every pass, at -O2 and -O0.  Files that do not compile
(the diagnostic tests) are skipped; at least one must round-trip.  A
text met before (a pass that changed nothing, the same model at both
levels) is checked once: 962 sections are 370 texts, a gnncc process
each."""
import os
import subprocess
import sys
import tempfile

gnncc, roots = sys.argv[1], sys.argv[2:]
checked = failed = 0
seen = set()
with tempfile.TemporaryDirectory() as tmp:
    ir = os.path.join(tmp, "m.ir")
    for root in roots:
        for dirpath, _, files in sorted(os.walk(root)):
            for f in sorted(files):
                if not f.endswith(".gnn"):
                    continue
                path = os.path.join(dirpath, f)
                incdir = os.path.join(dirpath, "Inputs")
                for olevel in ("-O2", "-O0"):
                    r = subprocess.run([gnncc, olevel, "--dump-ir=all", "-I", incdir, path],
                                       capture_output=True, text=True)
                    if r.returncode != 0:
                        break
                    sections = r.stdout.split("# after ")[1:]
                    for sec in sections:
                        header, text = sec.split("\n", 1)
                        if text in seen:
                            continue
                        seen.add(text)
                        with open(ir, "w") as fh:
                            fh.write(text)
                        back = subprocess.run([gnncc, "-x", "ir", "--passes=", "--dump-ir", ir],
                                              capture_output=True, text=True)
                        checked += 1
                        if back.returncode != 0 or back.stdout != text:
                            failed += 1
                            print(f"FAIL: {path} {olevel} after {header}:\n{back.stderr}")
print(f"round trip: {checked} modules checked, {failed} failed")
sys.exit(1 if failed or checked == 0 else 0)
