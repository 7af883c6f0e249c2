"""make_arrays.py OUT N [--bad KIND]: an arrays file (tandem-run --arrays)
for examples/tiny-mlp.mlir at 2 microbatches (step batch 32): input.0, N*32
rows of 32 normal f32 features, and input.1, N*32 i32 labels, the argmax of
a fixed linear map of the features over 10 classes, so a model can learn
them. Plain struct/json safetensors (no numpy), a fixed seed. KIND writes a
broken file for the error tests: missing (no input.1), dtype (input.1 as
F32), rows (33 rows of input.0), count (input.1 one batch short), shape
(input.0 with 31 features), label (label 70 of batch 2 is 10, outside the
classes)."""
import json
import random
import struct
import sys

out, n = sys.argv[1], int(sys.argv[2])
bad = sys.argv[4] if len(sys.argv) > 4 and sys.argv[3] == "--bad" else None
b, features, classes = 32, 32, 10
rng = random.Random(1234)
w = [[rng.gauss(0, 1) for _ in range(classes)] for _ in range(features)]
x = [[rng.gauss(0, 1) for _ in range(features)] for _ in range(n * b)]
y = []
for row in x:
    scores = [sum(row[f] * w[f][c] for f in range(features)) for c in range(classes)]
    y.append(max(range(classes), key=lambda c: scores[c]))

# name -> (dtype, shape, struct format, flat values)
tensors = {
    "input.0": ("F32", [n * b, features], "f", [v for row in x for v in row]),
    "input.1": ("I32", [n * b], "i", y),
}
if bad == "missing":
    del tensors["input.1"]
elif bad == "dtype":
    tensors["input.1"] = ("F32", [n * b], "f", [float(v) for v in y])
elif bad == "rows":
    tensors["input.0"] = ("F32", [33, features], "f", [v for row in x[:33] for v in row])
elif bad == "count":
    tensors["input.1"] = ("I32", [(n - 1) * b], "i", y[: (n - 1) * b])
elif bad == "label":
    y[70] = classes
elif bad == "shape":
    tensors["input.0"] = ("F32", [n * b, features - 1], "f", [v for row in x for v in row[:-1]])

header, blobs, offset = {}, [], 0
for name in sorted(tensors):
    dtype, shape, fmt, values = tensors[name]
    data = struct.pack("<%d%s" % (len(values), fmt), *values)
    header[name] = {"dtype": dtype, "shape": shape, "data_offsets": [offset, offset + len(data)]}
    blobs.append(data)
    offset += len(data)
text = json.dumps(header).encode()
text += b" " * (-len(text) % 8)
with open(out, "wb") as f:
    f.write(struct.pack("<Q", len(text)) + text + b"".join(blobs))
