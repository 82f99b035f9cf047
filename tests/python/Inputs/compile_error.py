"""gnncc.compile(MODEL, target=TARGET), which creates the model;
prints the GnnccError's status and message, or "no error"."""
import sys

import gnncc

try:
    gnncc.compile(sys.argv[1], target=sys.argv[2])
except gnncc.GnnccError as e:
    print("%s: %s" % (e.status, e))
else:
    print("no error")
