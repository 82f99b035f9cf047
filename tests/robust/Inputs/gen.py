#!/usr/bin/env python3
"""gen.py CASE: write a hostile model source to stdout (bytes), so that
tests need not commit megabytes.  The cases:

  parens     100000 nested parentheses
  ifs        10000 nested ifs
  sum        x + x + ... + x, 100000 terms (a left-deep tree the parser
             builds without nesting)
  members    x.T.T ... .T, 100000 times
  consts     1 + 1 + ... + 1 in a constant, 100000 terms
  dimexpr    the same inside a dimension
  unary      5000 nested unary minus (within the parser's limit)
  recursive  a layer that instantiates itself 100000 levels deep
  chain      10000 layers, each instantiating the next
  crossif    40 layers calling each other, each call under 2400 nested ifs
  crossneg   40 layers calling each other, each call under 900 minus signs
  loops      two nested loops of 10000 iterations each
  growlist   a list grown by + in a loop of 10000 iterations (each + copies)
  growdict   the same with a dict
  deepkey    a dict key 10000 lists deep, in an error message
  longname   a 1 MiB identifier
  longline   a 1 MiB line with an error at its end
  longstr    an error message quoting a 1 MiB string
  nul        a NUL byte in the middle of a model
  nuls       a file of 100 NUL bytes
  latin1     bytes that are not UTF-8 (Latin-1 text)
  empty      an empty file
"""
import sys

H = "model M(g: graph, x: f32[N, 4]) -> f32[N, 4] {\n"
N = 100000


def layers(depth, body):
    """depth layers L0..L{depth-1}, L{i}'s forward calling L{i+1} via body(call)."""
    s = ""
    for i in range(depth):
        s += ("layer L%d() {\n  layer s = L%d()\n  fn forward(x: f32[N, 4]) -> f32[N, 4] {\n"
              % (i, i + 1)) + body("s(x)") + "  }\n}\n"
    s += "layer L%d() {\n  fn forward(x: f32[N, 4]) -> f32[N, 4] {\n    return x\n  }\n}\n" % depth
    return s + H + "  layer r = L0()\n  return r(x)\n}\n"


cases = {
    "parens": lambda: H + "  return " + "(" * N + "x" + ")" * N + "\n}\n",
    "ifs": lambda: H + "  h = x\n" + "if true {\n" * 10000 + "h = relu(h)\n" + "}\n" * 10000
    + "  return h\n}\n",
    "sum": lambda: H + "  return " + " + ".join(["x"] * N) + "\n}\n",
    "members": lambda: H + "  return x" + ".T" * N + "\n}\n",
    "consts": lambda: H + "  k = " + " + ".join(["1"] * N) + "\n  return x\n}\n",
    "dimexpr": lambda: "model M(g: graph, x: f32[N, " + " + ".join(["1"] * N)
    + "]) -> f32[N, 4] {\n  return x\n}\n",
    "unary": lambda: H + "  return " + "-" * 5000 + "x\n}\n",
    "recursive": lambda: "layer R(n: int) {\n  if n > 0 {\n    layer sub = R(n - 1)\n  }\n"
    "  fn forward(x: f32[N, 4]) -> f32[N, 4] {\n    if n > 0 {\n      return sub(x)\n    }\n"
    "    return x\n  }\n}\n" + H + "  layer r = R(100000)\n  return r(x)\n}\n",
    "chain": lambda: layers(10000, lambda call: "    return " + call + "\n"),
    "crossif": lambda: layers(40, lambda call: "    h = x\n" + "if true {\n" * 2400 + "h = "
                              + call.replace("x", "h") + "\n" + "}\n" * 2400 + "    return h\n"),
    "crossneg": lambda: layers(40, lambda call: "    return " + "-" * 900 + call + "\n"),
    "loops": lambda: H + "  for i in range(10000) {\n    for j in range(10000) {\n"
    "      k = i\n    }\n  }\n  return x\n}\n",
    "growlist": lambda: H + "  l = []\n  for i in range(10000) {\n    l = l + [i]\n  }\n  return x\n}\n",
    "growdict": lambda: H + "  d = {}\n  for i in range(10000) {\n    d = d + {i: i}\n  }\n  return x\n}\n",
    "deepkey": lambda: H + "  k = 1\n  for i in range(10000) {\n    k = [k]\n  }\n  y = {k: 1}[2]\n  return x\n}\n",
    "longname": lambda: H + "  " + "a" * (1 << 20) + " = relu(x)\n  return " + "a" * (1 << 20)
    + "\n}\n",
    "longline": lambda: H + "  return " + "x + " * (1 << 18) + "y\n}\n",
    "longstr": lambda: H + '  assert(false, "' + "s" * (1 << 20) + '")\n  return x\n}\n',
    "nul": lambda: H + "  return x\0\n}\n",
    "nuls": lambda: "\0" * 100,
    "latin1": lambda: "# caf\xe9\n" + H + "  r\xe9sultat = relu(x)\n  return x\n}\n",
    "empty": lambda: "",
}

if len(sys.argv) != 2 or sys.argv[1] not in cases:
    sys.exit("usage: gen.py " + "|".join(cases))
sys.stdout.buffer.write(cases[sys.argv[1]]().encode("latin-1"))
