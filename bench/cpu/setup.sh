#!/usr/bin/env bash
# Installs what the CPU benchmark needs when it is missing: NumPy, torch
# 2.15.0, torch_geometric 2.8.1, matplotlib.  Idempotent, and fast when
# everything imports already (one Python start).  PYTHON overrides python3.
#
# torch comes without its dependency resolution (--no-deps): its wheel asks
# for the whole CUDA stack (cuda-toolkit, cudnn, triton, ...), which a CPU
# run does not use.  What it does need: its pure-Python requirements, and,
# since libtorch_cuda.so is always loaded, the CUDA libraries it links --
# the CUDA toolkit on the machine (/usr/local/cuda, found through ldconfig)
# has most of them; the rest are small wheels, installed --no-deps at the
# versions torch 2.15.0's METADATA pins (cufile: its cuda-toolkit==13.2.2's pin).
set -euo pipefail
PY=${PYTHON:-python3}
pip() { "$PY" -m pip install --disable-pip-version-check -q "$@"; }

if "$PY" -c 'import numpy, torch, torch_geometric, matplotlib' >/dev/null 2>&1; then
	exit 0
fi
echo "bench/cpu/setup.sh: installing the benchmark's Python packages" >&2
"$PY" -c 'import numpy' >/dev/null 2>&1 || pip numpy
if ! "$PY" -c 'import torch' >/dev/null 2>&1; then
	pip filelock 'typing-extensions>=4.13.0' 'sympy>=1.13.3' 'networkx>=2.5.1' jinja2 \
		'fsspec>=0.8.5' 'setuptools>=77.0.3'
	pip --no-deps nvidia-nccl-cu13==2.30.7 nvidia-nvshmem-cu13==3.7.2 \
		nvidia-cusparselt-cu13==0.8.1 'nvidia-cufile==1.17.1.22.*'
	pip --no-deps torch==2.15.0
fi
"$PY" -c 'import torch_geometric' >/dev/null 2>&1 || pip torch_geometric==2.8.1
"$PY" -c 'import matplotlib' >/dev/null 2>&1 || pip matplotlib
if ! "$PY" -c 'import torch, torch_geometric' >/dev/null 2>&1; then
	"$PY" -c 'import torch, torch_geometric' >&2 || true
	echo "bench/cpu/setup.sh: torch and torch_geometric do not import (above)" >&2
	exit 1
fi
"$PY" -c 'import torch, torch_geometric; print("torch", torch.__version__, "torch_geometric", torch_geometric.__version__)' 2>/dev/null >&2
