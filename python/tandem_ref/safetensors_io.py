"""Reading and writing the safetensors files tandem-eval saves.

Reading goes through the `safetensors` package's numpy API; `read_header`
parses the format by hand (8-byte little-endian header length, JSON
header, raw little-endian data) so the tests can check what tandem-eval
wrote independently of that package.
"""

import json
import struct

import numpy as np
from safetensors.numpy import load_file, save_file

_DTYPES = {
    "F64": np.float64,
    "F32": np.float32,
    "F16": np.float16,
    "I64": np.int64,
    "I32": np.int32,
    "I16": np.int16,
    "I8": np.int8,
    "U8": np.uint8,
    "BOOL": np.bool_,
}


def load_params(path):
    """name -> numpy array, for every tensor in the file."""
    return dict(load_file(str(path)))


def save_params(params, path):
    # np.array, not np.ascontiguousarray: the latter turns rank-0 into [1].
    save_file({k: np.array(v, order="C") for k, v in params.items()}, str(path))


def read_header(path):
    """The parsed JSON header (without __metadata__) and the data offset."""
    with open(path, "rb") as f:
        raw = f.read(8)
        if len(raw) != 8:
            raise ValueError(f"{path}: shorter than the 8-byte header length")
        (length,) = struct.unpack("<Q", raw)
        header = json.loads(f.read(length).decode("utf-8"))
    header.pop("__metadata__", None)
    return header, 8 + length


def read_by_hand(path):
    """name -> numpy array, decoded from the header without the package."""
    header, start = read_header(path)
    with open(path, "rb") as f:
        blob = f.read()
    out = {}
    for name, info in header.items():
        dtype = np.dtype(_DTYPES[info["dtype"]]).newbyteorder("<")
        begin, end = info["data_offsets"]
        data = np.frombuffer(blob[start + begin : start + end], dtype=dtype)
        out[name] = data.reshape(info["shape"]).astype(dtype.newbyteorder("="))
    return out
