"""
The runtime's C API through ctypes: the structures of runtime/gnnrt.h that
the package reads (gnn_array, gnn_tensor_info, gnn_model_desc) and the
functions it calls in libgnnrt_shared.so, the runtime built as a shared
library.  A model object the package builds links that library, so the
model and this module share one runtime, and gnn_errmsg() here gives the
message of a failure inside the model.
"""
import ctypes as C

MAX_RANK = 8
OK = 0
STATUS = ["GNN_OK", "GNN_ERR_ARG", "GNN_ERR_MEM", "GNN_ERR_IO", "GNN_ERR_FORMAT",
          "GNN_ERR_DTYPE", "GNN_ERR_SHAPE", "GNN_ERR_RANGE", "GNN_ERR_CUDA", "GNN_ERR_STATE"]
TARGET_CPU, TARGET_CUDA = 1, 2

# gnn_dtype's values and NumPy's names for them (bfloat16: torch's and
# ml_dtypes' name; NumPy itself has none, so its words travel as uint16)
DTYPES = {1: "float32", 2: "float64", 3: "float16", 4: "bfloat16", 5: "int32", 6: "int64", 7: "bool",
          8: "uint8", 9: "int8", 10: "int16", 11: "uint16", 12: "uint32", 13: "uint64"}
CODES = {v: k for k, v in DTYPES.items()}


class Array(C.Structure):
    _fields_ = [("dtype", C.c_int), ("rank", C.c_int), ("shape", C.c_int64 * MAX_RANK),
                ("data", C.c_void_p), ("nbytes", C.c_size_t)]


class TensorInfo(C.Structure):
    _fields_ = [("name", C.c_char_p), ("dtype", C.c_int), ("rank", C.c_int),
                ("shape", C.c_int64 * MAX_RANK), ("dims", C.c_char_p)]


VP = C.POINTER(C.c_void_p)


class ModelDesc(C.Structure):
    _fields_ = [("name", C.c_char_p), ("target", C.c_int),
                ("ninputs", C.c_int), ("noutputs", C.c_int), ("nparams", C.c_int),
                ("inputs", C.POINTER(TensorInfo)), ("outputs", C.POINTER(TensorInfo)),
                ("params", C.POINTER(TensorInfo)),
                ("create", C.CFUNCTYPE(C.c_int, VP)),
                ("load_weights", C.CFUNCTYPE(C.c_int, C.c_void_p, C.c_char_p)),
                ("bind", C.CFUNCTYPE(C.c_int, C.c_void_p, C.c_void_p)),
                ("output_shape", C.CFUNCTYPE(C.c_int, C.c_void_p, C.c_int, C.POINTER(C.c_int64))),
                ("forward", C.CFUNCTYPE(C.c_int, C.c_void_p, VP, VP)),
                ("forward_host", C.CFUNCTYPE(C.c_int, C.c_void_p, VP, VP)),
                ("destroy", C.CFUNCTYPE(None, C.c_void_p)),
                ("train", C.c_void_p)]


class OptimConfig(C.Structure):
    _fields_ = [("kind", C.c_int), ("lr", C.c_double), ("weight_decay", C.c_double),
                ("momentum", C.c_double), ("dampening", C.c_double), ("nesterov", C.c_int),
                ("beta1", C.c_double), ("beta2", C.c_double), ("eps", C.c_double)]


class TrainProg(C.Structure):
    _fields_ = [("prog", C.c_void_p), ("nparam", C.c_int), ("param", C.c_void_p),
                ("nupdate", C.c_int), ("update", C.c_void_p), ("ninputs", C.c_int),
                ("inputs", C.POINTER(TensorInfo)), ("cfg", OptimConfig), ("seed", C.c_uint64),
                ("epochs", C.c_int64)]


def declare(lib):
    """Give the runtime's functions that the package calls their types."""
    sigs = {
        "gnn_errmsg": (C.c_char_p, []),
        "gnn_status_name": (C.c_char_p, [C.c_int]),
        "gnn_graph_from_edge_index": (C.c_int, [C.POINTER(C.c_void_p), C.c_void_p, C.c_int,
                                                C.c_int64, C.c_int64]),
        "gnn_graph_set_batch": (C.c_int, [C.c_void_p, C.c_void_p, C.c_int, C.c_int64]),
        "gnn_graph_destroy": (None, [C.c_void_p]),
        "gnn_graph_num_nodes": (C.c_int64, [C.c_void_p]),
        "gnn_prog_check_input": (C.c_int, [C.c_void_p, C.c_int, C.POINTER(Array)]),
        "gnn_prog_train_step": (C.c_int, [C.c_void_p, C.c_void_p, VP, C.POINTER(C.c_float)]),
        "gnn_prog_train_inputs_changed": (C.c_int, [C.c_void_p]),
        "gnn_prog_init": (C.c_int, [C.c_void_p, C.c_uint64]),
        "gnn_prog_sync": (C.c_int, [C.c_void_p]),
        "gnn_prog_to_device": (C.c_int, [C.c_void_p, C.c_void_p, C.c_size_t, C.POINTER(C.c_void_p)]),
        "gnn_prog_from_device": (C.c_int, [C.c_void_p, C.c_void_p, C.c_void_p, C.c_size_t]),
        "gnn_prog_free_device": (None, [C.c_void_p, C.c_void_p]),
        "gnn_prog_save": (C.c_int, [C.c_void_p, C.c_char_p]),
    }
    for name, (res, args) in sigs.items():
        f = getattr(lib, name)
        f.restype, f.argtypes = res, args
    return lib
