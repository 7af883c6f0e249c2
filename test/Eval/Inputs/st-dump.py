"""Prints the tensors of a safetensors file, one per line, for lit tests:

    <name> <dtype> [<shape>]: <values>

Floats print with %.9g. With --select PREFIX only tensors whose name starts
with PREFIX print, with PREFIX removed, so tensors saved under different
names can be compared with diff.
"""

import json
import struct
import sys

FORMATS = {"F64": "d", "F32": "f", "I64": "q", "I32": "i", "U8": "B"}


def main():
    args = sys.argv[1:]
    select = ""
    if args[0] == "--select":
        select, args = args[1], args[2:]
    with open(args[0], "rb") as f:
        data = f.read()
    (size,) = struct.unpack("<Q", data[:8])
    header = json.loads(data[8 : 8 + size])
    body = data[8 + size :]
    for name in sorted(header):
        if name == "__metadata__" or not name.startswith(select):
            continue
        entry = header[name]
        begin, end = entry["data_offsets"]
        code = FORMATS[entry["dtype"]]
        count = (end - begin) // struct.calcsize(code)
        values = struct.unpack("<%d%s" % (count, code), body[begin:end])
        text = ", ".join(
            "%.9g" % v if isinstance(v, float) else str(v) for v in values
        )
        shape = ",".join(str(s) for s in entry["shape"])
        print("%s %s [%s]: %s" % (name[len(select) :], entry["dtype"], shape, text))


if __name__ == "__main__":
    main()
