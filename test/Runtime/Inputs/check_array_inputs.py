"""check_array_inputs.py SAVED ARRAYS TRAIN: the step inputs tandem-eval
--train --save-inputs wrote (step.<k>.input.<i>) against the arrays file
they came from: step k's input i must be, byte for byte, batch k mod TRAIN
of input.<i> (rows [(k mod TRAIN)*b, (k mod TRAIN + 1)*b), b its rows per
step). Prints 'ok S steps' or the first difference and exits 1."""
import json
import re
import struct
import sys


def read(path):
    data = open(path, "rb").read()
    (size,) = struct.unpack("<Q", data[:8])
    header = json.loads(data[8 : 8 + size])
    header.pop("__metadata__", None)
    body = data[8 + size :]
    return {name: (t["dtype"], t["shape"], body[t["data_offsets"][0] : t["data_offsets"][1]]) for name, t in header.items()}


saved, arrays, train = read(sys.argv[1]), read(sys.argv[2]), int(sys.argv[3])
steps = set()
for name, (dtype, shape, data) in saved.items():
    k, i = map(int, re.match(r"step\.(\d+)\.input\.(\d+)$", name).groups())
    steps.add(k)
    adtype, ashape, adata = arrays["input.%d" % i]
    b = shape[0]
    batch = len(data)
    start = (k % train) * batch
    if dtype != adtype or shape[1:] != ashape[1:] or data != adata[start : start + batch]:
        print("step %d input %d: not batch %d of the arrays" % (k, i, k % train))
        sys.exit(1)
print("ok %d steps" % len(steps))
