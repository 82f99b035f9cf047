#!/usr/bin/env bash
# Installs what building and testing gnncc needs, if it is missing:
# a C compiler, CMake, flex, bison, valgrind, LLVM's FileCheck, lit and
# NumPy (the tests' independent reference), and clang with libFuzzer and
# the sanitizer runtimes (scripts/fuzz.sh, the fuzz tree of
# scripts/test.sh).  Safe to run again; does nothing when everything is
# present.
set -euo pipefail

# clang links a libFuzzer target with ASan and UBSan (Debian keeps the
# runtimes in libclang-rt-N-dev, apart from clang-N)
fuzzer_links() {
  local d rc
  d=$(mktemp -d)
  printf 'int LLVMFuzzerTestOneInput(const unsigned char *d, unsigned long n);\nint LLVMFuzzerTestOneInput(const unsigned char *d, unsigned long n) { (void)d; (void)n; return 0; }\n' > "$d/f.c"
  rc=0
  clang -fsanitize=fuzzer,address,undefined "$d/f.c" -o "$d/f" >/dev/null 2>&1 || rc=1
  rm -rf "$d"
  return $rc
}

need_apt=()
command -v cc >/dev/null || need_apt+=(gcc)
command -v cmake >/dev/null || need_apt+=(cmake)
command -v flex >/dev/null || need_apt+=(flex)
command -v bison >/dev/null || need_apt+=(bison)
command -v valgrind >/dev/null || need_apt+=(valgrind)
command -v python3 >/dev/null || need_apt+=(python3 python3-pip)
if ! command -v FileCheck >/dev/null && ! ls /usr/lib/llvm-*/bin/FileCheck >/dev/null 2>&1; then
  need_apt+=(llvm-14-tools)
fi
if ! command -v clang >/dev/null; then
  need_apt+=(clang libclang-rt-dev)
elif ! fuzzer_links; then
  need_apt+=("libclang-rt-$(clang -dumpversion | cut -d. -f1)-dev")
fi
if ((${#need_apt[@]})); then
  echo "setup: installing ${need_apt[*]}"
  SUDO=""
  [ "$(id -u)" = 0 ] || SUDO=sudo
  $SUDO apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq "${need_apt[@]}" >/dev/null
fi

need_pip=()
python3 -c 'import numpy' 2>/dev/null || need_pip+=(numpy)
python3 -c 'import lit' 2>/dev/null || need_pip+=(lit)
if ((${#need_pip[@]})); then
  echo "setup: installing Python packages ${need_pip[*]}"
  python3 -m pip install -q "${need_pip[@]}" 2>&1 | grep -v -i "warning: running pip as" || true
fi

# torch and torch_geometric: the Python package's tests (tests/python:
# gnncc.export checks its models against PyG's own outputs) and
# unit.optim_torch run with them; bench/cpu/setup.sh installs the CPU
# builds (a few minutes the first time, nothing once they import)
"$(dirname "$0")/../bench/cpu/setup.sh"
