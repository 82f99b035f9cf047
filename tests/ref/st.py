"""Minimal safetensors reader/writer in pure Python (struct + json + numpy).

File layout (huggingface/safetensors, ``safetensors/src/tensor.rs``):

    [0, 8)        u64 little-endian N: length of the JSON header in bytes
    [8, 8+N)      UTF-8 JSON object, starts with '{', right-padded with ' '
                  {"__metadata__": {"k": "v"},            (optional, str -> str)
                   "name": {"dtype": "F32", "shape": [o, i],
                            "data_offsets": [BEGIN, END]}, ...}
    [8+N, EOF)    byte buffer; offsets are relative to its start,
                  little-endian, C order, END - BEGIN == nbytes

Writer behaviour copied from the Rust ``prepare``/``serialize``:
  * tensors sorted by *descending* dtype rank (the ``Dtype`` enum is declared
    in increasing alignment order and the sort is
    ``right.dtype().cmp(&left.dtype()).then(lname.cmp(rname))``), then by name
    (byte-wise ascending);
  * data_offsets are contiguous, starting at 0, in that order;
  * the header is compact JSON (serde_json::to_string: no spaces),
    ``__metadata__`` first, then the tensors in data order, each entry's fields
    in the order dtype, shape, data_offsets;
  * the header is padded with spaces (0x20) to a multiple of 8 bytes.

Reader checks (``SafeTensors::read_metadata`` + ``Metadata::validate``):
  * header length <= 100_000_000 and 8 + N <= file length;
  * valid UTF-8, valid JSON object starting with '{', no duplicate keys;
  * after sorting the entries by data_offsets, each BEGIN equals the previous
    END (first is 0), END - BEGIN == prod(shape) * itemsize;
  * last END + 8 + N == file length (``MetadataIncompleteBuffer``).

Supported dtypes: BOOL, U8, I8, I16, U16, F16, I32, U32, F32, F64, I64, U64
(load and save) and BF16 (load only; widened to float32). 0-rank tensors
(shape []) and empty tensors are supported.

API:
    load(path) -> dict[str, np.ndarray]
    load_with_metadata(path) -> (dict[str, np.ndarray], dict[str, str] | None)
    save(path, tensors: dict[str, array-like], metadata: dict[str, str] | None)
    serialize(tensors, metadata=None) -> bytes
    deserialize(buf: bytes) -> (dict, metadata)
"""

import json
import struct

import numpy as np

MAX_HEADER_SIZE = 100_000_000

# Declaration order of safetensors' `Dtype` enum (increasing alignment); the
# writer sorts by the *descending* position in this list.
_DTYPE_RANK = [
    "BOOL", "F4", "F6_E2M3", "F6_E3M2", "U8", "I8", "F8_E5M2", "F8_E4M3",
    "F8_E8M0", "I16", "U16", "F16", "BF16", "I32", "U32", "F32", "C64", "F64",
    "I64", "U64",
]
_RANK = {name: i for i, name in enumerate(_DTYPE_RANK)}

# safetensors dtype name -> little-endian numpy dtype
_ST_TO_NP = {
    "BOOL": np.dtype("?"),
    "U8": np.dtype("u1"),
    "I8": np.dtype("i1"),
    "I16": np.dtype("<i2"),
    "U16": np.dtype("<u2"),
    "F16": np.dtype("<f2"),
    "I32": np.dtype("<i4"),
    "U32": np.dtype("<u4"),
    "F32": np.dtype("<f4"),
    "F64": np.dtype("<f8"),
    "I64": np.dtype("<i8"),
    "U64": np.dtype("<u8"),
}
_ITEMSIZE = {k: v.itemsize for k, v in _ST_TO_NP.items()}
_ITEMSIZE["BF16"] = 2

# numpy dtype (kind, itemsize) -> safetensors name
_NP_TO_ST = {(v.kind, v.itemsize): k for k, v in _ST_TO_NP.items()}


class SafetensorsError(ValueError):
    pass


def _no_dup_pairs(pairs):
    d = {}
    for k, v in pairs:
        if k in d:
            raise SafetensorsError(f"duplicate key in header: {k!r}")
        d[k] = v
    return d


def deserialize(buf):
    """Parse a whole safetensors file held in `buf` (bytes-like).

    Returns (tensors, metadata) where tensors maps name -> a fresh, writable,
    native-byte-order C-contiguous ndarray and metadata is the
    ``__metadata__`` dict or None."""
    buf = memoryview(buf)
    total = len(buf)
    if total < 8:
        raise SafetensorsError("HeaderTooSmall")
    (n,) = struct.unpack("<Q", bytes(buf[:8]))
    if n > MAX_HEADER_SIZE:
        raise SafetensorsError("HeaderTooLarge")
    if 8 + n > total:
        raise SafetensorsError("InvalidHeaderLength")
    try:
        text = bytes(buf[8:8 + n]).decode("utf-8")
    except UnicodeDecodeError as e:
        raise SafetensorsError("InvalidHeader (not UTF-8)") from e
    if not text.startswith("{"):
        raise SafetensorsError("InvalidHeaderStart")
    try:
        header = json.loads(text, object_pairs_hook=_no_dup_pairs)
    except json.JSONDecodeError as e:
        raise SafetensorsError("InvalidHeaderDeserialization") from e
    if not isinstance(header, dict):
        raise SafetensorsError("InvalidHeaderDeserialization")

    metadata = header.pop("__metadata__", None)
    if metadata is not None:
        if not isinstance(metadata, dict) or not all(
                isinstance(k, str) and isinstance(v, str) for k, v in metadata.items()):
            raise SafetensorsError("__metadata__ must map str -> str")

    entries = []
    for name, info in header.items():
        if not isinstance(info, dict) or set(info) != {"dtype", "shape", "data_offsets"}:
            raise SafetensorsError(f"bad tensor entry for {name!r}: {info!r}")
        dt = info["dtype"]
        shape = info["shape"]
        offs = info["data_offsets"]
        if dt not in _ITEMSIZE:
            raise SafetensorsError(f"unsupported dtype {dt!r} for {name!r}")
        if not isinstance(shape, list) or not all(
                isinstance(s, int) and not isinstance(s, bool) and s >= 0 for s in shape):
            raise SafetensorsError(f"bad shape for {name!r}: {shape!r}")
        if (not isinstance(offs, list) or len(offs) != 2 or not all(
                isinstance(o, int) and not isinstance(o, bool) and o >= 0 for o in offs)):
            raise SafetensorsError(f"bad data_offsets for {name!r}: {offs!r}")
        entries.append((tuple(offs), name, dt, tuple(shape)))

    entries.sort(key=lambda e: e[0])
    # Metadata::validate: contiguous offsets from 0, sizes match shapes
    start = 0
    for (b, e), name, dt, shape in entries:
        if b != start or e < b:
            raise SafetensorsError(f"InvalidOffset({name})")
        start = e
        count = 1
        for s in shape:
            count *= s
        if e - b != count * _ITEMSIZE[dt]:
            raise SafetensorsError(f"TensorInvalidInfo({name})")
    if start + 8 + n != total:
        raise SafetensorsError("MetadataIncompleteBuffer")

    data = buf[8 + n:]
    out = {}
    for (b, e), name, dt, shape in entries:
        raw = bytes(data[b:e])
        if dt == "BF16":
            u16 = np.frombuffer(raw, dtype="<u2").astype(np.uint32) << 16
            arr = u16.view(np.float32).reshape(shape)
        else:
            arr = np.frombuffer(raw, dtype=_ST_TO_NP[dt]).reshape(shape)
            arr = arr.astype(arr.dtype.newbyteorder("="), copy=True)
        out[name] = arr
    return out, metadata


def load_with_metadata(path):
    with open(path, "rb") as f:
        return deserialize(f.read())


def load(path):
    """Load every tensor of a .safetensors file: dict name -> ndarray."""
    return load_with_metadata(path)[0]


def _st_dtype(arr):
    key = (arr.dtype.kind, arr.dtype.itemsize)
    if key not in _NP_TO_ST:
        raise SafetensorsError(f"unsupported numpy dtype {arr.dtype}")
    return _NP_TO_ST[key]


def serialize(tensors, metadata=None):
    """Bytes of a safetensors file holding `tensors` (name -> array-like)."""
    if metadata is not None:
        if not isinstance(metadata, dict) or not all(
                isinstance(k, str) and isinstance(v, str) for k, v in metadata.items()):
            raise SafetensorsError("metadata must map str -> str")
    items = []
    for name, a in tensors.items():
        if not isinstance(name, str):
            raise SafetensorsError(f"tensor name must be str, got {name!r}")
        if name == "__metadata__":
            raise SafetensorsError("'__metadata__' is reserved")
        arr = np.asarray(a)
        dt = _st_dtype(arr)
        # little-endian, C order; np.array keeps 0-d arrays 0-d
        # (np.ascontiguousarray would turn shape [] into [1])
        le = np.array(arr, dtype=_ST_TO_NP[dt], order="C", copy=True)
        items.append((name, dt, le))
    # descending dtype rank, then name (Rust String Ord == byte-wise order)
    items.sort(key=lambda t: (-_RANK[t[1]], t[0].encode("utf-8")))

    header = {}
    if metadata is not None:
        header["__metadata__"] = {k: metadata[k] for k in sorted(metadata)}
    off = 0
    for name, dt, le in items:
        nb = le.nbytes
        header[name] = {"dtype": dt, "shape": [int(s) for s in le.shape],
                        "data_offsets": [off, off + nb]}
        off += nb
    hb = json.dumps(header, separators=(",", ":"), ensure_ascii=False).encode("utf-8")
    hb += b" " * ((8 - len(hb) % 8) % 8)
    if len(hb) > MAX_HEADER_SIZE:
        raise SafetensorsError("HeaderTooLarge")
    parts = [struct.pack("<Q", len(hb)), hb]
    parts.extend(le.tobytes(order="C") for _, _, le in items)
    return b"".join(parts)


def save(path, tensors, metadata=None):
    """Write `tensors` (dict name -> array) to `path` in safetensors format."""
    blob = serialize(tensors, metadata)
    with open(path, "wb") as f:
        f.write(blob)


if __name__ == "__main__":
    import sys
    for p in sys.argv[1:]:
        t, md = load_with_metadata(p)
        print(p)
        if md:
            print("  __metadata__:", md)
        for k, v in t.items():
            print(f"  {k}: {v.dtype} {list(v.shape)}")
