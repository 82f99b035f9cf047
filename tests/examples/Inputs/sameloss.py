#!/usr/bin/env python3
"""sameloss.py A.txt B.txt [--atol T]: two runs of the training example
(examples/train) printed the same epochs with losses within T (default
2e-4: both print 4 decimals of float32 losses whose sums run in different
orders) and test accuracies within 0.2 points; exit 1 with the first
difference otherwise."""
import re
import sys


def read(path):
    text = open(path).read()
    losses = [(int(e), float(l)) for e, l in re.findall(r"^epoch +(\d+) +loss ([0-9.eE+-]+)$", text, re.M)]
    acc = re.findall(r"^test accuracy: ([0-9.]+)%$", text, re.M)
    return losses, float(acc[0]) if acc else None


def main():
    args = sys.argv[1:]
    atol = 2e-4
    if "--atol" in args:
        i = args.index("--atol")
        atol = float(args[i + 1])
        del args[i:i + 2]
    (la, aa), (lb, ab) = read(args[0]), read(args[1])
    if not la or [e for e, _ in la] != [e for e, _ in lb]:
        print(f"sameloss: the epochs differ: {[e for e, _ in la]} against {[e for e, _ in lb]}")
        return 1
    for (e, a), (_, b) in zip(la, lb):
        if abs(a - b) > atol:
            print(f"sameloss: epoch {e}: loss {a} against {b}")
            return 1
    if aa is None or ab is None or abs(aa - ab) > 0.2:
        print(f"sameloss: test accuracy {aa} against {ab}")
        return 1
    print(f"sameloss: {len(la)} epochs agree (largest difference "
          f"{max(abs(a - b) for (_, a), (_, b) in zip(la, lb)):.1e}), accuracy {aa}% and {ab}%")
    return 0


if __name__ == "__main__":
    sys.exit(main())
