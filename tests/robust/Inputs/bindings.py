#!/usr/bin/env python3
"""Where the symbols of gnnrun's engine objects bind (driver/engine.c).

bindings.py exports LIBGNNRT PROGRAM...
    every symbol each PROGRAM exports (the defined ones in its .dynsym)
    is the runtime's (defined in LIBGNNRT), a name reserved to the C
    library and the linker (a leading underscore), or a library's data
    copied into the program (versioned: stdout@GLIBC_2.2.5).  Anything
    else sits in the process's global scope ahead of every shared
    library, so a library that loads later (the CUDA runtime inside a
    cuda engine object, the driver it opens) binds its own references
    to it.

bindings.py loaded LIBGNNRT PROGRAM OBJECT LDDEBUG_DIR
    OBJECT (or the one .so in the directory OBJECT: an engine cache,
    $GNNCC_ENGINE_CACHE) was dlopen'd by PROGRAM with LD_DEBUG=bindings
    writing to LDDEBUG_DIR/*: every reference of OBJECT to a symbol it
    defines (the device layer's tables, the model's) binds to OBJECT
    itself, and every one that binds to PROGRAM finds there a definition
    PROGRAM may export (above) with the reference's version: a versioned
    reference such as `bind' [GLIBC_2.2.5] is a library's, and an
    unversioned definition of the program's in its place calls
    something else.

Prints what it found, errors to stderr, and exits 1 if a check fails.
"""
import glob
import os
import re
import subprocess
import sys

LINE = re.compile(r"^\s*\d+:\s+binding file (\S+) \[\d+\] to (\S+) \[\d+\]: "
                  r"(?:normal|protected) symbol `([^']+)'(?: \[([^\]]+)\])?")


def err(msg):
    print("bindings.py: error: " + msg, file=sys.stderr)


def defined(path, dynamic):
    """{name: version or None} of the global symbols path defines (its
    dynamic ones for an ELF object)"""
    cmd = ["nm", "--defined-only", "-D" if dynamic else "-g", path]
    out = subprocess.run(cmd, capture_output=True, text=True, check=True).stdout
    syms = {}
    for f in (ln.split() for ln in out.splitlines()):
        if len(f) == 3:
            name, _, ver = f[2].partition("@")
            syms[name] = ver.lstrip("@") or None
    return syms


def exportable(name, ver, runtime):
    """may a program export this definition: the runtime's API, a name
    reserved to the C library and the linker, or a library's data copied
    into the program (versioned: stdout@GLIBC_2.2.5)"""
    return ver is not None or name in runtime or name.startswith("_")


def same(a, b):
    try:
        return os.path.samefile(a, b)
    except OSError:
        return False


def exports(runtime, programs):
    bad = 0
    for prog in programs:
        extra = sorted(n for n, v in defined(prog, True).items() if not exportable(n, v, runtime))
        name = os.path.basename(prog)
        if extra:
            bad += 1
            err(f"{name} exports {len(extra)} symbols that are not the runtime's: "
                  + " ".join(extra[:12]) + (" ..." if len(extra) > 12 else ""))
        else:
            print(f"{name}: exports the runtime's symbols only")
    return bad


def loaded(runtime, prog, obj, ddir):
    if os.path.isdir(obj):
        objs = glob.glob(os.path.join(obj, "*.so"))
        if len(objs) != 1:
            err(f"{obj} holds {len(objs)} objects, not one")
            return 1
        obj = objs[0]
    mine, theirs = defined(obj, True), defined(prog, True)
    seen, bad = set(), []
    for path in glob.glob(os.path.join(ddir, "*")):
        with open(path, errors="replace") as f:
            for ln in f:
                m = LINE.match(ln)
                if m and same(m.group(1), obj):
                    seen.add((m.group(3), m.group(4), m.group(2)))
    if not seen:
        err(f"no binding of {obj} was logged (LD_DEBUG=bindings not honoured?)")
        return 1
    for sym, ver, to in sorted(seen, key=lambda t: (t[0], t[1] or "", t[2])):
        what = f"`{sym}'" + (f" [{ver}]" if ver else "")
        if sym in mine and not same(to, obj):
            bad.append(f"{what}, defined in the object, binds to {to}")
        elif same(to, prog) and (sym not in theirs or theirs[sym] != ver or
                                 not exportable(sym, ver, runtime)):
            bad.append(f"{what} binds to {os.path.basename(prog)}, which is not its provider")
    for b in bad:
        err(b)
    own = sorted({s for s, _, _ in seen if s in mine and s.startswith("gnn_dev")})
    toprog = sum(same(to, prog) for _, _, to in seen)
    print(f"device layer bound to the object: {' '.join(own) or 'none'}")
    print(f"{len(seen)} references bound, {toprog} to {os.path.basename(prog)}, "
          f"{'all' if not bad else 'not all'} where they belong")
    return 1 if bad else 0


def main(argv):
    if len(argv) >= 3 and argv[0] == "exports":
        return 1 if exports(defined(argv[1], False), argv[2:]) else 0
    if len(argv) == 5 and argv[0] == "loaded":
        return loaded(defined(argv[1], False), *argv[2:])
    sys.exit(__doc__)


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
