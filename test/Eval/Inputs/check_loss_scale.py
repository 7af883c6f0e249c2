"""Compares parameter checkpoints (safetensors) around fp16 loss-scaling
steps:

    check_loss_scale.py skipped BEFORE AFTER
        every tensor except the loss-scale state is bitwise unchanged (the
        weights, the optimizer moments and the step counter), and the scale
        factor halved: the step was skipped.
    check_loss_scale.py updated BEFORE AFTER
        the step counter advanced and some weight changed.

Prints what it found (FileCheck reads it) and exits non-zero on a mismatch.
The safetensors reader is inline so the test needs no package.
"""

import json
import struct
import sys

STATE = ("opt.loss_scale", "opt.good_steps")


def load(path):
    with open(path, "rb") as f:
        data = f.read()
    (size,) = struct.unpack("<Q", data[:8])
    header = json.loads(data[8:8 + size])
    body = data[8 + size:]
    tensors = {}
    for name, entry in header.items():
        if name == "__metadata__":
            continue
        begin, end = entry["data_offsets"]
        tensors[name] = (entry["dtype"], body[begin:end])
    return tensors


def scalar(tensors, name):
    dtype, raw = tensors[name]
    assert dtype == "F32", (name, dtype)
    return struct.unpack("<f", raw)[0]


def main():
    mode, before_path, after_path = sys.argv[1:4]
    before, after = load(before_path), load(after_path)
    if sorted(before) != sorted(after):
        sys.exit("the checkpoints hold different tensors")
    changed = [n for n in sorted(before)
               if n not in STATE and before[n] != after[n]]
    print("tensors: %d, changed besides the loss-scale state: %d" %
          (len(before), len(changed)))
    for name in ("opt.loss_scale", "opt.good_steps", "opt.step"):
        print("%s: %g -> %g" % (name, scalar(before, name),
                                scalar(after, name)))
    if mode == "skipped":
        ok = (not changed and scalar(after, "opt.loss_scale") ==
              scalar(before, "opt.loss_scale") / 2 and
              scalar(after, "opt.good_steps") == 0)
        print("skipped" if ok else "NOT skipped: " + ", ".join(changed[:5]))
    else:
        ok = (scalar(after, "opt.step") > scalar(before, "opt.step") and
              any(not n.startswith("opt.") for n in changed))
        print("updated" if ok else "NOT updated")
    sys.exit(0 if ok else 1)


if __name__ == "__main__":
    main()
