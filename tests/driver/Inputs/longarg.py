#!/usr/bin/env python3
"""longarg.py COMMAND ARGS...: run COMMAND with every @LONG@ in its arguments
replaced by 5000 'a's (lit's shell has no $(...) to build one); its output
and exit status pass through."""
import subprocess
import sys

long = "a" * 5000
sys.exit(subprocess.call([a.replace("@LONG@", long) for a in sys.argv[1:]]))
