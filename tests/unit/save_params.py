#!/usr/bin/env python3
"""save_params.py: a file of gnn_save_params (test_save --emit) read by
Python: the format parsed here with the standard library and numpy (the
8-byte header length, the JSON header in the saver's order, contiguous
data_offsets covering the whole buffer), every value against the one
test_save.c wrote, and, when the safetensors package is installed, the
same file loaded by safetensors.numpy (and safetensors.torch with torch).
Exit status 77 (skipped) without numpy.
Usage: save_params.py TEST_SAVE"""
import json
import os
import struct
import subprocess
import sys
import tempfile

try:
    import numpy as np
except ImportError:
    print("numpy is not installed: skipped")
    sys.exit(77)

DTYPES = {"F32": np.float32, "F64": np.float64, "I64": np.int64, "I32": np.int32, "BOOL": np.bool_}
ORDER = ["mask", "layer.w", "idx", "d", "step", "layer.b", "empty"]
EXPECT = {
    "mask": np.array([i % 2 for i in range(5)], dtype=np.bool_),
    "layer.w": (np.arange(12, dtype=np.float32) * np.float32(0.25) - 1).reshape(3, 4),
    "idx": np.array([i * 3 - 1 for i in range(3)], dtype=np.int32),
    "d": (np.arange(4) * 0.125 + 100).reshape(2, 2),
    "step": np.array(42, dtype=np.int64),
    "layer.b": np.arange(4, dtype=np.float32) * np.float32(0.5),
    "empty": np.zeros((0, 3), dtype=np.float32),
}


def check(tensors, who):
    bad = 0
    for name, want in EXPECT.items():
        got = np.asarray(tensors[name])
        if got.dtype != want.dtype or got.shape != want.shape or not np.array_equal(got, want):
            print(f"{who}: {name}: got {got.dtype} {got.shape} {got!r}, want {want.dtype} {want.shape} {want!r}")
            bad += 1
    return bad


def main():
    with tempfile.TemporaryDirectory() as d:
        path = os.path.join(d, "p.safetensors")
        subprocess.run([sys.argv[1], "--emit", path], check=True)
        raw = open(path, "rb").read()
    (n,) = struct.unpack("<Q", raw[:8])
    bad = 0
    if n % 8:
        print(f"header length {n} is not a multiple of 8")
        bad += 1
    hdr = json.loads(raw[8:8 + n].decode("utf-8"), object_pairs_hook=lambda kv: kv)
    names = [k for k, _ in hdr]
    if names != ORDER:
        print(f"header order {names}, want {ORDER}")
        bad += 1
    data = raw[8 + n:]
    info = dict(hdr)
    end = 0
    for name, t in sorted(info.items(), key=lambda kv: tuple(dict(kv[1])["data_offsets"])):
        t = dict(t)
        b, e = t["data_offsets"]
        if b != end:
            print(f"{name}: data starts at {b}, want {end} (a gap or an overlap)")
            bad += 1
        end = e
    if end != len(data):
        print(f"the offsets cover {end} bytes of {len(data)}")
        bad += 1
    tensors = {}
    for name, t in info.items():
        t = dict(t)
        b, e = t["data_offsets"]
        dt = np.dtype(DTYPES[t["dtype"]])
        if b % dt.itemsize:
            print(f"{name}: offset {b} not aligned to {dt.itemsize}")
            bad += 1
        tensors[name] = np.frombuffer(data[b:e], dtype=dt).reshape(t["shape"])
    bad += check(tensors, "parsed")
    try:
        import safetensors.numpy
    except ImportError:
        print("safetensors is not installed: parsed with numpy only")
    else:
        bad += check(safetensors.numpy.load(raw), "safetensors.numpy")
        try:
            import torch
            import safetensors.torch
        except ImportError:
            pass
        else:
            t = safetensors.torch.load(raw)
            bad += check({k: v.numpy() for k, v in t.items()}, "safetensors.torch")
    print("ok" if not bad else f"{bad} problems")
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
