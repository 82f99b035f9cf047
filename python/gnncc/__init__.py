"""
gnncc from Python: compile a model file with the gnncc compiler and call
the compiled model on NumPy arrays and torch tensors.

compile() runs gnncc (found as $GNNCC, else on PATH) on a .gnn file and
links the object into a shared object against libgnnrt_shared.so, the
runtime as a shared library; load() opens such an object.  Objects are
cached by content, as gnnrun's engines are: the key is a hash of the code
gnncc generates (its --emit=c or --emit=cuda text and header), the build's
flags and the runtime library's size and time, so an unchanged model is
linked once, and an edited import is a new build.

The model is driven through the descriptor every compiled model exports
(NAME_desc, docs/codegen.md): the same path gnnrun's engines take, no ABI
of the package's own.  Every runtime failure is a GnnccError carrying the
runtime's message (gnn_errmsg); the model stays usable after it.
"""
import ctypes as C
import hashlib
import os
import re
import shlex
import shutil
import subprocess
import tempfile

import numpy as np

from . import _rt, _safetensors

__all__ = ["DeviceArray", "GnnccError", "ExportError", "Model", "compile", "export", "load", "save_safetensors"]


class GnnccError(RuntimeError):
    """A failure of gnncc or the runtime; status is the runtime's status
    name ("GNN_ERR_SHAPE"), or None for the compiler's and the package's."""

    def __init__(self, message, status=None):
        super().__init__(message)
        self.status = status


def __getattr__(name):
    # gnncc.export (callable: export.py) imports on first use, so that
    # `python -m gnncc.export` runs the module once, as __main__
    if name in ("export", "ExportError"):
        import importlib
        mod = importlib.import_module(__name__ + ".export")
        return mod if name == "export" else mod.ExportError
    raise AttributeError("module 'gnncc' has no attribute %r" % name)


def save_safetensors(path, tensors):
    """Write tensors (a state_dict: name -> torch tensor or NumPy array) to
    path as safetensors, the names unchanged: what NAME_load_weights,
    gnnrun --weights and Model.load_weights read.  The safetensors
    package's save_file writes the same format."""
    _safetensors.save(path, tensors)


def _gnncc():
    exe = os.environ.get("GNNCC") or shutil.which("gnncc")
    if not exe:
        raise GnnccError("gnncc not found: set $GNNCC or put gnncc on PATH")
    return exe


def _run(args):
    p = subprocess.run(args, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    if p.returncode != 0:
        raise GnnccError(p.stderr.decode(errors="replace").strip() or
                         "%s failed (exit %d)" % (shlex.join(args), p.returncode))
    return p.stdout


def _linkflags(exe, target, emulate):
    """gnncc's own link flags for a program, with the shared runtime in
    place of libgnnrt.a; and the runtime library's path."""
    args = [exe, "--print-link-flags", "--target=" + target]
    if emulate:
        args.append("--emulate=" + emulate)
    words = shlex.split(_run(args).decode())
    libdir = next((w[2:] for w in words if w.startswith("-L")), None)
    if not libdir:
        raise GnnccError("gnncc --print-link-flags names no library directory")
    lib = os.path.join(libdir, "libgnnrt_shared.so")
    if not os.path.exists(lib):
        raise GnnccError("%s not found (build the gnnrt_shared target)" % lib)
    words = ["-lgnnrt_shared" if w == "-lgnnrt" else w for w in words]
    return words + ["-Wl,-rpath," + libdir], lib


def _cachedir():
    d = os.environ.get("GNNCC_PY_CACHE")
    if not d:
        base = os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache")
        d = os.path.join(base, "gnncc", "python")
    os.makedirs(d, exist_ok=True)
    return d


def compile(path, target="cpu", opt=2, emulate=None, model=None, include=(), cache=True, precision="fp32"):
    """Compile the .gnn file at path for target "cpu" or "cuda" (emulate:
    None, or "run", "memcheck", "racecheck" for the emulated device) at
    -O{opt}, and load its model named model (default: the file's first).
    include: directories searched for imports (gnncc -I).  precision:
    "fp32", or "bf16" / "fp16": activations stored in 16 bits (gnncc
    --precision)."""
    if target not in ("cpu", "cuda"):
        raise GnnccError("target must be 'cpu' or 'cuda', not %r" % (target,))
    if precision not in ("fp32", "bf16", "fp16"):
        raise GnnccError("precision must be 'fp32', 'bf16' or 'fp16', not %r" % (precision,))
    if emulate and target != "cuda":
        raise GnnccError("emulate runs the cuda target; it needs target='cuda'")
    exe = _gnncc()
    flags = ["--target=" + target, "-O%d" % int(opt)] + ([] if precision == "fp32" else ["--precision=" + precision])
    if emulate:
        flags.append("--emulate=" + emulate)
    for d in include:
        flags += ["-I", str(d)]
    path = os.fspath(path)
    link, lib = _linkflags(exe, target, emulate)
    # the emulated device's object is C++ (libgnnemu.a inside), as gnnrun's
    cc = shlex.split(os.environ.get("CXX", "c++") if emulate else os.environ.get("CC", "cc"))
    # the key: what gnncc generates (imports included), and how it is built
    h = hashlib.sha256()
    for kind in ("c" if target == "cpu" else "cuda", "header"):
        h.update(_run([exe, path, *flags, "--emit=" + kind, "-o", "-"]))
    for w in flags + link + cc:
        h.update(w.encode() + b"\0")
    for f in (exe, lib):
        st = os.stat(f)
        h.update(("%s:%d:%d" % (os.path.realpath(f), st.st_size, st.st_mtime_ns)).encode())
    so = os.path.join(_cachedir(), h.hexdigest()[:24] + ".so")
    if not (cache and os.path.exists(so)):
        with tempfile.TemporaryDirectory(prefix="gnncc-") as tmp:
            obj = os.path.join(tmp, "model.o")
            _run([exe, path, *flags, "-o", obj])
            out = os.path.join(tmp, "model.so")
            _run(cc + ["-shared", obj, "-o", out] + link)
            # each file atomically, the header first: a reader looks for the object
            for src, dst in ((os.path.join(tmp, "model.h"), so[:-3] + ".h"), (out, so)):
                os.replace(shutil.copy(src, "%s.%d.tmp" % (dst, os.getpid())), dst)
    return load(so, model)


def load(path, model=None):
    """Load a shared object made by compile() (its header NAME.h beside it
    names the models), the model named model, default the first."""
    path = os.fspath(path)
    hdr = path[:-3] + ".h" if path.endswith(".so") else None
    names = []
    if hdr and os.path.exists(hdr):
        with open(hdr) as f:
            names = re.findall(r"extern\s+const\s+gnn_model_desc\s+(\w+)_desc\b", f.read())
    name = model or (names[0] if names else None)
    if not name:
        raise GnnccError("%s: which model? (no header beside it names one; pass model=)" % path)
    return Model(path, name)


GNN_F16, GNN_BF16 = _rt.CODES["float16"], _rt.CODES["bfloat16"]


def _bf16words(a):
    """bfloat16 words (uint16, host memory) of a: a torch.bfloat16 tensor
    or an ml_dtypes bfloat16 array as they are, any other float array
    rounded to nearest, ties to even (the runtime's gnn_st_bf16), NaN kept
    quiet"""
    if type(a).__module__.startswith("torch") and str(a.dtype) == "torch.bfloat16":
        import torch
        return a.detach().contiguous().view(torch.int16).numpy().view(np.uint16)
    a = np.asarray(a)
    if a.dtype.name == "bfloat16":
        return np.ascontiguousarray(a).view(np.uint16)
    u = np.ascontiguousarray(a, dtype=np.float32).view(np.uint32)
    w = ((u + 0x7FFF + ((u >> 16) & 1)) >> 16).astype(np.uint16)
    nan = np.isnan(u.view(np.float32))
    w[nan] = ((u[nan] >> 16) | 0x40).astype(np.uint16)
    return w


def _tensor(a):
    """(NumPy array sharing a's memory, "torch" or None) for host memory;
    (a, "device") for device memory (__cuda_array_interface__: a torch
    tensor on a GPU, a DeviceArray)"""
    if hasattr(a, "__cuda_array_interface__"):
        return a, "device"
    if type(a).__module__.startswith("torch"):
        return a.detach().numpy(), "torch"
    return np.asarray(a), None


class DeviceArray:
    """An array in a cuda model's device memory (Model.to_device, or a
    forward's output on device inputs that are not torch tensors); it
    exports __cuda_array_interface__ and frees its memory when collected."""

    def __init__(self, model, ptr, shape, dtype):
        self._model, self.ptr = model, ptr
        self.shape, self.dtype = tuple(shape), np.dtype(dtype)
        self.nbytes = int(np.prod(self.shape, dtype=np.int64)) * self.dtype.itemsize

    @property
    def __cuda_array_interface__(self):
        return {"version": 3, "shape": self.shape, "typestr": self.dtype.str, "data": (self.ptr or 0, False),
                "strides": None}

    def numpy(self):
        """A host copy."""
        out = np.empty(self.shape, self.dtype)
        m = self._model
        m._check(m._rt.gnn_prog_from_device(m._m, out.ctypes.data, self.ptr, self.nbytes))
        return out

    def __del__(self):
        m = getattr(self, "_model", None)
        if m is not None and getattr(m, "_m", None) and self.ptr:
            m._rt.gnn_prog_free_device(m._m, self.ptr)
            self.ptr = None


class Model:
    """A compiled model: load_weights, bind, then call it."""

    def __init__(self, so_path, name):
        self._lib = C.CDLL(os.path.abspath(so_path))
        try:
            self._desc = _rt.ModelDesc.in_dll(self._lib, name + "_desc")
        except ValueError:
            raise GnnccError("%s: no model %s in it" % (so_path, name)) from None
        # the runtime's functions through the model's own handle: dlsym
        # searches the object's dependencies, so this is the
        # libgnnrt_shared.so the model links, whose gnn_errmsg() holds the
        # model's messages
        self._rt = _rt.declare(self._lib)
        self.name = name
        d = self._desc
        self.inputs = [d.inputs[i].name.decode() for i in range(d.ninputs)]
        self.outputs = [d.outputs[i].name.decode() for i in range(d.noutputs)]
        self.params = [d.params[i].name.decode() for i in range(d.nparams)]
        self.target = "cuda" if d.target == _rt.TARGET_CUDA else "cpu"
        self._graph = None
        m = C.c_void_p()
        self._check(d.create(C.byref(m)))
        self._m = m

    def _check(self, s):
        if s != _rt.OK:
            status = _rt.STATUS[s] if 0 <= s < len(_rt.STATUS) else str(s)
            raise GnnccError(self._rt.gnn_errmsg().decode(errors="replace"), status)

    def __del__(self):
        m = getattr(self, "_m", None)
        if m:
            self._desc.destroy(m)
            self._m = None
        if getattr(self, "_graph", None):
            self._rt.gnn_graph_destroy(self._graph)
            self._graph = None

    def load_weights(self, weights):
        """weights: a safetensors path, or a state dict (name -> array or
        tensor) written to a temporary safetensors file by the runtime."""
        if isinstance(weights, (str, os.PathLike)):
            self._check(self._desc.load_weights(self._m, os.fsencode(weights)))
            return self
        with tempfile.TemporaryDirectory(prefix="gnncc-") as tmp:
            f = os.path.join(tmp, "weights.safetensors")
            try:
                _safetensors.save(f, weights)
            except ValueError as e:
                raise GnnccError("state dict: %s" % e, "GNN_ERR_DTYPE") from None
            try:
                self._check(self._desc.load_weights(self._m, os.fsencode(f)))
            except GnnccError as e:   # the messages name the state dict, not the file
                raise GnnccError(str(e).replace(f, "state dict"), e.status) from None
        return self

    def _array(self, a, what, code=None):
        """a gnn_array for host array a (code: its gnn_dtype, where a holds
        another type's words: bfloat16 as uint16)"""
        code = code or _rt.CODES.get(a.dtype.name)
        if code is None:
            raise GnnccError("%s: dtype %s has no gnncc dtype" % (what, a.dtype), "GNN_ERR_DTYPE")
        if a.ndim > _rt.MAX_RANK:
            raise GnnccError("%s: rank %d is over %d" % (what, a.ndim, _rt.MAX_RANK), "GNN_ERR_SHAPE")
        r = _rt.Array(dtype=code, rank=a.ndim, data=a.ctypes.data, nbytes=a.nbytes)
        for k, n in enumerate(a.shape):
            r.shape[k] = n
        return r

    def _devarray(self, a, what):
        """a gnn_array for device memory described by __cuda_array_interface__"""
        if self.target != "cuda":
            raise GnnccError("%s is in device memory: a cpu model takes host arrays" % what, "GNN_ERR_ARG")
        cai = a.__cuda_array_interface__
        dt = np.dtype(cai["typestr"])
        shape = tuple(cai["shape"])
        c = [dt.itemsize * int(np.prod(shape[k + 1:], dtype=np.int64)) for k in range(len(shape))]
        if cai.get("strides") not in (None, tuple(c), list(c)):
            raise GnnccError("%s is not contiguous (strides %s)" % (what, cai["strides"]), "GNN_ERR_SHAPE")
        r = self._array(np.empty((0,) * len(shape), dt), what)
        for k, n in enumerate(shape):
            r.shape[k] = n
        r.data = cai["data"][0]
        r.nbytes = int(np.prod(shape, dtype=np.int64)) * dt.itemsize
        return r

    def to_device(self, a):
        """A copy of host array a in a cuda model's device memory, a DeviceArray."""
        a = _safetensors.host(a)
        p = C.c_void_p()
        self._check(self._rt.gnn_prog_to_device(self._m, a.ctypes.data, a.nbytes, C.byref(p)))
        return DeviceArray(self, p.value, a.shape, a.dtype)

    def bind(self, edge_index, num_nodes=None, batch=None, num_graphs=None):
        """Bind the graph: edge_index int32 or int64 [2, E]; num_nodes
        defaults to the largest index + 1; batch: the node-to-graph vector."""
        ei = _safetensors.host(edge_index)
        if ei.ndim != 2 or ei.shape[0] != 2 or ei.dtype.name not in ("int32", "int64"):
            raise GnnccError("edge_index must be int32 or int64 of shape [2, E], got %s %s"
                             % (ei.dtype, list(ei.shape)), "GNN_ERR_SHAPE")
        if num_nodes is None:
            num_nodes = int(ei.max()) + 1 if ei.size else 0
        g = C.c_void_p()
        self._check(self._rt.gnn_graph_from_edge_index(C.byref(g), ei.ctypes.data, _rt.CODES[ei.dtype.name],
                                                         ei.shape[1], num_nodes))
        try:
            if batch is not None:
                b = _safetensors.host(batch)
                if num_graphs is None:
                    num_graphs = int(b.max()) + 1 if b.size else 0
                self._check(self._rt.gnn_graph_set_batch(g, b.ctypes.data, _rt.CODES.get(b.dtype.name, 0),
                                                         num_graphs))
            self._check(self._desc.bind(self._m, g))
        except BaseException:
            self._rt.gnn_graph_destroy(g)
            raise
        # the model borrows the graph: the old one goes once the new is bound
        if self._graph:
            self._rt.gnn_graph_destroy(self._graph)
        self._graph = g
        return self

    def _inputs(self, infos, n, given, first=0):
        """The arrays for inputs infos[0..n) from given (name -> value),
        each checked by the runtime against its declaration."""
        ptrs, keep, kind = (C.c_void_p * max(n, 1))(), [], None
        for i in range(n):
            nm = infos[i].name.decode()
            if nm not in given:
                raise GnnccError("%s: missing input '%s' (inputs: %s)"
                                 % (self.name, nm, ", ".join(infos[j].name.decode() for j in range(n))),
                                 "GNN_ERR_ARG")
            v, dt16 = given[nm], infos[i].dtype if infos[i].dtype in (GNN_F16, GNN_BF16) else 0
            if dt16 and hasattr(v, "__cuda_array_interface__"):
                raise GnnccError("%s: input '%s' is %s: from Python it is given in host memory"
                                 % (self.name, nm, _rt.DTYPES[dt16]), "GNN_ERR_ARG")
            if dt16 == GNN_BF16:   # the words; other floats rounded to them
                v = _bf16words(v)
            elif dt16 == GNN_F16 and type(v).__module__.startswith("torch"):
                v = v.detach().half()
            elif dt16 == GNN_F16:
                v = np.asarray(v, dtype=np.float16)
            a, where = _tensor(v)
            if dt16 and where is None and type(given[nm]).__module__.startswith("torch"):
                where = "torch"
            if i and (where == "device") != (kind == "device"):
                raise GnnccError("%s: input '%s': the inputs are all in host memory or all in device "
                                 "memory" % (self.name, nm), "GNN_ERR_ARG")
            kind = kind or where
            if where == "device":
                arr = self._devarray(a, "%s: input '%s'" % (self.name, nm))
            else:
                a = np.asarray(a, order="C")
                arr = self._array(a, "%s: input '%s'" % (self.name, nm), GNN_BF16 if dt16 == GNN_BF16 else None)
            keep.append(a)
            if first is not None:
                self._check(self._rt.gnn_prog_check_input(self._m, first + i, C.byref(arr)))
            else:
                self._checktrain(infos[i], a)
            ptrs[i] = arr.data
        return ptrs, keep, kind

    def _checktrain(self, t, a):
        """A train item's input (labels, mask) against its declaration, in
        the runtime's words: the runtime checks the model's inputs
        (gnn_prog_check_input), but these belong to the step's program.
        Dims are constants or the graph's N; anything else is refused."""
        dims = [d.strip() for d in t.dims.decode().strip("[]").split(",") if d.strip()]
        want = []
        for k in range(t.rank):
            if t.shape[k] >= 0:
                want.append(t.shape[k])
            elif dims[k] == "N" and self._graph:
                want.append(self._rt.gnn_graph_num_nodes(self._graph))
            else:
                raise GnnccError("%s: input '%s' %s: train_step from Python takes constant and N dims only"
                                 % (self.name, t.name.decode(), t.dims.decode()), "GNN_ERR_ARG")
        if _rt.CODES.get(a.dtype.name) != t.dtype or list(a.shape) != want:
            raise GnnccError("%s: input '%s': expected %s %s = %s, got %s %s"
                             % (self.name, t.name.decode(), _rt.DTYPES[t.dtype], t.dims.decode(), want,
                                a.dtype, list(a.shape)),
                             "GNN_ERR_DTYPE" if _rt.CODES.get(a.dtype.name) != t.dtype else "GNN_ERR_SHAPE")

    def __call__(self, **inputs):
        """Forward on the bound graph; the outputs as NumPy arrays (torch
        tensors when the inputs are), one value for one output."""
        d = self._desc
        extra = sorted(set(inputs) - set(self.inputs))
        if extra:
            raise GnnccError("%s: no input named %s (inputs: %s)"
                             % (self.name, ", ".join(map(repr, extra)), ", ".join(self.inputs)), "GNN_ERR_ARG")
        ptrs, keep, kind = self._inputs(d.inputs, d.ninputs, inputs)
        outs, optrs = [], (C.c_void_p * max(d.noutputs, 1))()
        shape = (C.c_int64 * _rt.MAX_RANK)()
        first = next(iter(inputs.values()), None)
        ondev = kind == "device" and type(first).__module__.startswith("torch")
        for i in range(d.noutputs):
            self._check(d.output_shape(self._m, i, shape))
            sh, dt = [shape[k] for k in range(d.outputs[i].rank)], _rt.DTYPES[d.outputs[i].dtype]
            if dt == "bfloat16" and not ondev:   # NumPy's memory holds the words
                dt = "uint16"
            if ondev:        # torch's memory on the inputs' device
                import torch
                o = torch.empty(sh, dtype=getattr(torch, dt), device=first.device)
                optrs[i] = o.data_ptr()
            elif kind == "device":
                o = self.to_device(np.zeros(sh, dt))
                optrs[i] = o.ptr
            else:
                o = np.empty(sh, dtype=dt)
                optrs[i] = o.ctypes.data
            outs.append(o)
        if kind == "device":
            # device pointers in and out, no copies: torch's pending work on
            # the inputs first, and the outputs complete on return
            if ondev:
                import torch
                torch.cuda.current_stream(first.device).synchronize()
            self._check(d.forward(self._m, ptrs, optrs))
            self._check(self._rt.gnn_prog_sync(self._m))
        else:
            self._check(d.forward_host(self._m, ptrs, optrs))
        # bfloat16 outputs in host memory: torch's bfloat16, else their
        # values as float32 (exact: NumPy has no bfloat16)
        bf = [d.outputs[i].dtype == GNN_BF16 and kind != "device" for i in range(d.noutputs)]
        if kind == "torch":
            import torch
            outs = [torch.from_numpy(o.view(np.int16)).view(torch.bfloat16) if b else torch.from_numpy(o)
                    for o, b in zip(outs, bf)]
        else:
            outs = [(o.astype(np.uint32) << 16).view(np.float32) if b else o for o, b in zip(outs, bf)]
        return outs[0] if len(outs) == 1 else tuple(outs)

    def init_weights(self, seed=None):
        """Every parameter as the model declares its init (PyG's), drawn
        from seed (default: the train item's seed, else 0)."""
        if seed is None:
            seed = _rt.TrainProg.from_address(self._desc.train).seed if self._desc.train else 0
        self._check(self._rt.gnn_prog_init(self._m, seed))
        return self

    def save_weights(self, path):
        """The weights as safetensors under the parameters' (PyG's) names."""
        self._check(self._rt.gnn_prog_save(self._m, os.fsencode(path)))

    @property
    def epochs(self):
        """The train item's epoch count (None without one)."""
        return _rt.TrainProg.from_address(self._desc.train).epochs if self._desc.train else None

    def train_step(self, **inputs):
        """One training step (a model compiled with a train item) on the
        bound graph: the model's inputs and the train item's (labels,
        mask) by name; the weights update in place; returns the loss."""
        if not self._desc.train:
            raise GnnccError("%s has no training step (no train item)" % self.name, "GNN_ERR_STATE")
        if self.target != "cpu":
            raise GnnccError("train_step: only the cpu target from Python (the step reads device memory)",
                             "GNN_ERR_ARG")
        d = self._desc
        tp = _rt.TrainProg.from_address(d.train)
        given = dict(inputs)
        ptrs, keep, _ = self._inputs(d.inputs, d.ninputs, given)
        tptrs, tkeep, _ = self._inputs(tp.inputs, tp.ninputs, given, first=None)
        n = d.ninputs + tp.ninputs
        allp = (C.c_void_p * max(n, 1))(*(list(ptrs)[:d.ninputs] + list(tptrs)[:tp.ninputs]))
        loss = C.c_float()
        # the arrays may be new, or written in place, at the same
        # addresses: what the step keeps of its inputs is made again
        self._check(self._rt.gnn_prog_train_inputs_changed(self._m))
        self._check(self._rt.gnn_prog_train_step(self._m, d.train, allp, C.byref(loss)))
        return float(loss.value)
