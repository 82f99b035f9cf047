#!/usr/bin/env python3
"""longnames.py DIR: write IR text with very long names into DIR.  The
IR has no limit on names (the source language's 1024 does not apply),
so these run to 5000 characters, and each error message below quotes
names of 1500 (within the 4096 bytes at which diagnostics are cut):

  ok.ir        a function, its inputs, values, a param's name attribute
               and a size symbol of 5000 characters each
  mismatch.ir  a declared type that differs from the operands'
  ret.ir       a ret whose value does not have the declared result type
  neg.ir       a negative dimension
  big.ir       a type whose element count overflows
"""
import os
import sys

out = sys.argv[1]


def n(c, k):
    return c * (k - 1) + "0"


def write(name, text):
    with open(os.path.join(out, name), "w") as f:
        f.write(text)


S, F, X, P, V = (n(c, 5000) for c in "SFXPV")
write("ok.ir", f"""sym {S}

func @{F}(%{X}: f32[{S}, 4]) -> f32[{S}, 4] {{
	%{P} =f32[4] param {{name = "{P}"}}
	%{V} =f32[{S}, 4] add %{X}, %{P}
	%{V}1 =f32[{S}, 4] relu %{V}
	ret %{V}1
}}
""")

S, X, V = (n(c, 1500) for c in "SXV")
head = f"sym {S}\n\nfunc @f(%{X}: f32[{S}, 4]) -> f32[{S}, 4] {{\n"
write("mismatch.ir", head + f"\t%{V} =f32[{S}, 5] relu %{X}\n\tret %{V}\n}}\n")
write("ret.ir", head + f"\t%v =f32[{S}, 4, 1] reshape %{X} {{shape = [{S}, 4, 1]}}\n\tret %v\n}}\n")
write("neg.ir", head + f"\t%{V} =f32[0 - {S}, 4] relu %{X}\n\tret %{X}\n}}\n")
write("big.ir", head + f"\t%{V} =f32[{S}, 2147483647, 2147483647, 2147483647] relu %{X}\n\tret %{X}\n}}\n")
