#!/usr/bin/env python3
"""optim_torch.py: the runtime's optimizers against torch.optim.

test_optim --print runs every case of test_optim.c on the cpu device and
prints its configs (before and after gnn_optim_set at the switch step)
and final parameters; this rebuilds the same parameters and gradients
(small multiples of powers of two, so exact in float32), runs
torch.optim.SGD / Adam / AdamW (foreach=False: the single-tensor path)
for the same steps, changing the param group's hyper-parameters at the
switch, and wants every parameter within 1e-6 * (1 + |torch's|): torch's
CPU kernels fuse some multiply-adds (vectorized lanes) and ours round
each operation, so the bits may differ in the last place.
Exit status 77 (skipped) without torch.
Usage: optim_torch.py TEST_OPTIM"""
import subprocess
import sys

try:
    import torch
except ImportError:
    print("torch is not installed: skipped")
    sys.exit(77)

TOL = 1e-6
SGD, ADAM, ADAMW = 1, 2, 3


def p0(k, i):
    return ((i * 11 + k * 3) % 23 - 11) / 16


def grad(k, i, s):
    return ((i * 7 + s * 13 + k * 5) % 17 - 8) / 8 * 2.0 ** (k - 2)


def cfg(f):
    return {"kind": int(f[0]), "lr": float(f[1]), "weight_decay": float(f[2]), "momentum": float(f[3]),
            "dampening": float(f[4]), "nesterov": bool(int(f[5])), "betas": (float(f[6]), float(f[7])),
            "eps": float(f[8])}


def group(c):
    """the param group's fields for c"""
    if c["kind"] == SGD:
        return {k: c[k] for k in ("lr", "weight_decay", "momentum", "dampening", "nesterov")}
    return {k: c[k] for k in ("lr", "weight_decay", "betas", "eps")}


def run(sizes, steps, switch, c, c2):
    ps = [torch.tensor([p0(k, i) for i in range(n)], dtype=torch.float32) for k, n in enumerate(sizes)]
    for p in ps:
        p.requires_grad_(True)
    if c["kind"] == SGD:
        opt = torch.optim.SGD(ps, foreach=False, **group(c))
    else:
        cls = torch.optim.Adam if c["kind"] == ADAM else torch.optim.AdamW
        opt = cls(ps, foreach=False, **group(c))
    for s in range(1, steps + 1):
        for k, p in enumerate(ps):
            p.grad = torch.tensor([grad(k, i, s) for i in range(sizes[k])], dtype=torch.float32)
        if s == switch + 1:
            opt.param_groups[0].update(group(c2))
        opt.step()
    return torch.cat([p.detach() for p in ps])


def main():
    out = subprocess.run([sys.argv[1], "--print"], check=True, capture_output=True, text=True).stdout
    lines = [ln.split() for ln in out.splitlines()]
    sizes = [int(x) for x in lines[0][1:]]
    steps, switch = int(lines[1][1]), int(lines[1][2])
    bad = 0
    ncase = 0
    for i in range(2, len(lines), 3):
        name, c, c2 = lines[i][1], cfg(lines[i][2:]), cfg(lines[i + 1][2:])
        ours = torch.tensor([float(x) for x in lines[i + 2][1:]], dtype=torch.float64)
        want = run(sizes, steps, switch, c, c2).double()
        err = ((ours - want).abs() / (1 + want.abs())).max().item() if len(want) else 0.0
        same = int((ours.float() == want.float()).sum())
        ok = err <= TOL and len(ours) == len(want)
        print(f"{name:20s} worst error {err:.3g}, {same} of {len(want)} equal bit for bit{'' if ok else '  FAIL'}")
        bad += not ok
        ncase += 1
    if ncase == 0:
        print("no cases printed")
        return 1
    print(f"torch {torch.__version__}: {ncase - bad} of {ncase} cases agree")
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
