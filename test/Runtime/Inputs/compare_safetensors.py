"""compare_safetensors.py A B TOL: the same tensor names, dtypes and shapes,
and per tensor the relative error sqrt(sum (a-b)^2 / sum b^2) (the absolute
one when b is all zeros, as unittests/Target/CPU measures) <= TOL; TOL 0:
bitwise equal bytes.
Prints one line per tensor that differs and exits 1; else prints 'ok N'."""
import json
import struct
import sys

FORMATS = {"F32": "f", "F64": "d", "I32": "i", "I64": "q"}


def read(path):
    data = open(path, "rb").read()
    (n,) = struct.unpack("<Q", data[:8])
    header = json.loads(data[8 : 8 + n])
    header.pop("__metadata__", None)
    body = data[8 + n :]
    return {
        name: (t["dtype"], t["shape"], body[t["data_offsets"][0] : t["data_offsets"][1]])
        for name, t in header.items()
    }


a, b, tol = read(sys.argv[1]), read(sys.argv[2]), float(sys.argv[3])
bad = []
if sorted(a) != sorted(b):
    bad.append("names differ: %s vs %s" % (sorted(a), sorted(b)))
for name in sorted(set(a) & set(b)):
    (da, sa, xa), (db, sb, xb) = a[name], b[name]
    if (da, sa) != (db, sb):
        bad.append("%s: %s%s vs %s%s" % (name, da, sa, db, sb))
        continue
    if tol == 0 or da not in ("F32", "F64"):
        if xa != xb:
            bad.append("%s: bytes differ" % name)
        continue
    fmt = "<%d%s" % (len(xa) // struct.calcsize(FORMATS[da]), FORMATS[da])
    va, vb = struct.unpack(fmt, xa), struct.unpack(fmt, xb)
    diff = sum((x - y) ** 2 for x, y in zip(va, vb))
    norm = sum(y * y for y in vb)
    error = (diff / norm) ** 0.5 if norm else diff**0.5
    if not error <= tol:
        bad.append("%s: relative error %g > %g" % (name, error, tol))
for line in bad:
    print(line)
if bad:
    sys.exit(1)
print("ok %d" % len(a))
