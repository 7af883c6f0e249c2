"""Reads safetensors files in pure Python (no numpy, no safetensors
package), for the lit tests' comparison scripts and scripts/ that run on
machines with nothing installed (the GPU check)."""
import json
import struct


def read_file(path):
    """(metadata, tensors): the header's __metadata__ (a dict, empty when
    absent) and {name: (dtype, shape, raw bytes)}."""
    with open(path, "rb") as f:
        data = f.read()
    (size,) = struct.unpack("<Q", data[:8])
    header = json.loads(data[8 : 8 + size])
    metadata = header.pop("__metadata__", {})
    body = data[8 + size :]
    tensors = {
        name: (entry["dtype"], entry["shape"], body[entry["data_offsets"][0] : entry["data_offsets"][1]])
        for name, entry in header.items()
    }
    return metadata, tensors


def read(path):
    """{name: (dtype, shape, raw bytes)} of the file's tensors."""
    return read_file(path)[1]


_FORMATS = {"F32": "f", "F64": "d", "I32": "i", "I64": "q", "F16": "e"}


def values(dtype, raw):
    """The elements of a tensor's raw bytes as Python numbers (BF16 widened
    exactly to float), or None for a dtype this does not decode."""
    if dtype == "BF16":
        halves = struct.unpack("<%dH" % (len(raw) // 2), raw)
        return struct.unpack("<%df" % len(halves), struct.pack("<%dI" % len(halves), *[h << 16 for h in halves]))
    code = _FORMATS.get(dtype)
    if code is None:
        return None
    return struct.unpack("<%d%s" % (len(raw) // struct.calcsize(code), code), raw)
