"""Checks that pairs of tensors in safetensors files are bitwise identical,
for lit tests that compare a pipelined run with a one-stage reference:

    same-tensors.py FILE_A:NAME_A FILE_B:NAME_B [FILE_C:NAME_C FILE_D:NAME_D ...]

Each pair must agree in dtype, shape and every byte of data. Prints one line
per pair ("same" or "differ" with the first differing byte) and exits 1 if
any pair differs or a tensor is missing.
"""

import json
import struct
import sys


def read(spec):
    path, name = spec.rsplit(":", 1)
    with open(path, "rb") as f:
        data = f.read()
    (size,) = struct.unpack("<Q", data[:8])
    header = json.loads(data[8 : 8 + size])
    if name not in header:
        sys.exit("%s: no tensor '%s' (has %s)" % (path, name, ", ".join(sorted(header))))
    entry = header[name]
    begin, end = entry["data_offsets"]
    return entry["dtype"], entry["shape"], data[8 + size + begin : 8 + size + end]


def main():
    args = sys.argv[1:]
    if not args or len(args) % 2:
        sys.exit(__doc__)
    failed = False
    for a, b in zip(args[0::2], args[1::2]):
        ta, tb = read(a), read(b)
        if ta[:2] != tb[:2]:
            print("differ %s %s: %s%s vs %s%s" % (a, b, ta[0], ta[1], tb[0], tb[1]))
            failed = True
        elif ta[2] != tb[2]:
            first = next(i for i in range(len(ta[2])) if ta[2][i] != tb[2][i])
            print("differ %s %s: first at byte %d" % (a, b, first))
            failed = True
        else:
            print("same %s %s" % (a.rsplit(":", 1)[1], b.rsplit(":", 1)[1]))
    sys.exit(1 if failed else 0)


if __name__ == "__main__":
    main()
