# lit configuration for gnncc's text tests: each test file holds its RUN
# lines and its expected output (CHECK lines), as in LLVM and MLIR.
import os
import shutil
import platform

import lit.formats

config.name = "gnncc"
config.test_format = lit.formats.ShTest(execute_external=False)
config.suffixes = [".gnn", ".ir", ".test"]
config.excludes = ["Inputs", "ref", "unit", "models", "data", "lit.cfg.py", "CMakeLists.txt"]
config.test_source_root = os.path.dirname(__file__)

root = os.path.dirname(config.test_source_root)
build = lit_config.params.get("build", os.path.join(root, "build"))
config.test_exec_root = os.path.join(build, "lit")

# FileCheck and not come with LLVM's tools; Debian keeps them off PATH.
path = os.environ.get("PATH", "")
for d in ["/usr/lib/llvm-14/bin", "/usr/lib/llvm-15/bin", "/usr/lib/llvm-16/bin"]:
    if os.path.exists(os.path.join(d, "FileCheck")):
        path = d + os.pathsep + path
        break
config.environment["PATH"] = path
for var in ["HOME", "TMPDIR", "LANG", "ASAN_OPTIONS", "LSAN_OPTIONS", "UBSAN_OPTIONS"]:
    if var in os.environ:
        config.environment[var] = os.environ[var]
if shutil.which("FileCheck", path=path) is None:
    lit_config.fatal("FileCheck not found: run scripts/setup.sh")

shared = os.path.join(os.path.dirname(root), "shared")
python = shutil.which("python3") or "python3"
config.substitutions += [
    ("%gnncc", os.path.join(build, "gnncc")),
    ("%build", build),
    ("%gnnrun", os.path.join(build, "gnnrun")),
    ("%gnngen", os.path.join(build, "gnngen")),
    ("%parsedump", os.path.join(build, "tests", "parsedump")),
    ("%irtool", os.path.join(build, "tests", "irtool")),
    ("%passcheck", os.path.join(build, "tests", "passcheck")),
    ("%gradcheck", os.path.join(build, "tests", "gradcheck")),
    ("%sampledump", os.path.join(build, "tests", "sampledump")),
    ("%hsampledump", os.path.join(build, "tests", "hsampledump")),
    ("%python", python),
    ("%refdir", os.path.join(root, "tests", "ref")),
    ("%examples", os.path.join(root, "examples")),
    ("%shared", shared),
    ("%cora", os.path.join(shared, "datasets", "cora")),
]
# nvcc compiles and links the cuda target even where no GPU runs it
if shutil.which("nvcc", path=path) or os.path.exists("/usr/local/cuda/bin/nvcc"):
    config.available_features.add("nvcc")
# a GPU to run the cuda target on
if shutil.which("nvidia-smi", path=path) and os.system("nvidia-smi -L >/dev/null 2>&1") == 0:
    config.available_features.add("cuda")
# --cpu's instruction sets are x86-64's
if platform.machine() in ("x86_64", "AMD64"):
    config.available_features.add("x86_64")
# scripts/test.sh --quick (lit --param quick=1): the development loop's
# subset; the slowest tests say UNSUPPORTED: quick, the cuda matrix runs
# a few models on fewer configurations
if lit_config.params.get("quick"):
    config.available_features.add("quick")
if os.path.isdir(os.path.join(shared, "datasets", "cora")):
    config.available_features.add("cora")

# A sanitizer build (GNNCC_SANITIZE): its gnncc and gnnrun compile what
# they generate with -fsanitize=address,undefined, and --print-cflags and
# --print-link-flags say so, so programs built in the tests are checked by
# ASan, LSan and UBSan as they run.  Valgrind cannot run those: %valgrind
# is valgrind (leaks and invalid accesses fail the test) in a plain build
# and nothing in a sanitizer build, where the sanitizers do that job.
sanitize = False
try:
    with open(os.path.join(build, "CMakeCache.txt")) as f:
        sanitize = any(l.strip() == "GNNCC_SANITIZE:BOOL=ON" for l in f)
except OSError:
    pass
if sanitize:
    config.available_features.add("asan")
    config.environment.setdefault("UBSAN_OPTIONS", "print_stacktrace=1")
    config.substitutions.append(("%valgrind", ""))
else:
    config.substitutions.append(
        ("%valgrind", "valgrind -q --error-exitcode=9 --leak-check=full"))

# Compiled engines (gnnrun's, driver/engine.c) are kept for the whole
# run, so that the many tests that run one model under one set of flags
# compile it once.  The key is the generated source, the compiler's
# command and the runtime's files, so a rebuilt runtime misses; a test
# or script that names its own cache keeps it.
engines = os.path.join(build, "lit", "engine-cache")
os.makedirs(engines, exist_ok=True)
config.environment.setdefault("GNNCC_ENGINE_CACHE", engines)

# The emulated CUDA device (tests/emu): %cxx compiles CUDA C++ against
# runtime/emu and links %libgnnemu; %emuflags are the sanitizer flags the
# library was built with (it is instrumented in a sanitizer build).
# Feature tsan: ThreadSanitizer for the racecheck tests (not in a
# sanitizer build, whose library is built for ASan).
cxx = os.environ.get("CXX") or shutil.which("c++") or "c++"
config.substitutions += [
    ("%cxx", cxx),
    ("%emuinc", os.path.join(root, "runtime", "emu")),
    ("%libgnnemu", os.path.join(build, "libgnnemu.a")),
    ("%emuflags", "-fsanitize=address,undefined -fno-sanitize-recover=all" if sanitize else ""),
]
if not sanitize:
    import subprocess
    try:
        libtsan = subprocess.run([cxx, "-print-file-name=libtsan.so"], capture_output=True,
                                 text=True).stdout.strip()
    except OSError:
        libtsan = ""
    if libtsan and os.path.isabs(libtsan) and os.path.exists(libtsan):
        config.available_features.add("tsan")
        config.substitutions.append(("%libtsan", libtsan))
        # the runtime built with ThreadSanitizer (CMakeLists.txt's
        # gnnrt_tsan), for programs that link it under TSan
        config.substitutions.append(("%libgnnrt_tsan", os.path.join(build, "libgnnrt_tsan.a")))

# The Python package (python/gnncc): %pyenv runs a program with it on the
# path and this tree's gnncc as its compiler (the test names the cache:
# %pyenv GNNCC_PY_CACHE=%t/cache %python ...).  Feature torch: torch and
# torch_geometric are installed (scripts/setup.sh), found without the
# seconds that importing torch takes.
config.substitutions.append(
    ("%pyenv", "env GNNCC=%s PYTHONPATH=%s" % (os.path.join(build, "gnncc"), os.path.join(root, "python"))))
import subprocess
if subprocess.run([python, "-c", "import importlib.util as u, sys; "
                   "sys.exit(not (u.find_spec('torch') and u.find_spec('torch_geometric')))"]).returncode == 0:
    config.available_features.add("torch")
