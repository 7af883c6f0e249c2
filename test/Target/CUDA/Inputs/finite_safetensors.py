"""finite_safetensors.py FILE: prints 'finite N' when every element of
every f32 tensor of FILE (N tensors) is finite, else the first tensor with
a NaN or an infinity, and exits 1."""
import array
import json
import math
import struct
import sys

data = open(sys.argv[1], "rb").read()
(n,) = struct.unpack("<Q", data[:8])
header = json.loads(data[8 : 8 + n])
header.pop("__metadata__", None)
body = data[8 + n :]
for name, t in sorted(header.items()):
    assert t["dtype"] == "F32", (name, t["dtype"])
    begin, end = t["data_offsets"]
    values = array.array("f", body[begin:end])
    bad = next((v for v in values if not math.isfinite(v)), None)
    if bad is not None:
        print("%s: %s" % (name, bad))
        sys.exit(1)
print("finite %d" % len(header))
