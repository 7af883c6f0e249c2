"""Checks a run with a padded vocabulary against the same run unpadded, for
nn-pad-classes' lit tests:

    check_padded.py UNPADDED.json PADDED.json UNPADDED.st PADDED.st NAME=DIM ...
    check_padded.py --padding PADDED.st NAME=DIM:KEPT ...

The two --log-json files must hold bitwise the same per-step losses. In the
two --save-params files every tensor must be bitwise the same, except each
NAME=DIM, padded along dimension DIM: its leading slice must be bitwise the
unpadded tensor and the rest exactly zero (+0.0). With --padding, only
that: each NAME, padded along DIM, holds exactly zero past its first KEPT
entries there. Exits 1 on a mismatch.
"""

import json
import os
import sys

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "..", "..", "python", "tests"))
import safetensors_file  # noqa: E402

SIZES = {"F64": 8, "F32": 4, "BF16": 2, "F16": 2, "I64": 8, "I32": 4}


read = safetensors_file.read


def unpad(tensor, shape, dim):
    """The leading `shape` slice of a padded row-major tensor, and whether
    every padding byte is zero."""
    dtype, padded_shape, data = tensor
    width = SIZES[dtype]
    inner = width
    for size in padded_shape[dim + 1 :]:
        inner *= size
    outer = 1
    for size in padded_shape[:dim]:
        outer *= size
    kept, stored = shape[dim] * inner, padded_shape[dim] * inner
    sliced, zero = bytearray(), True
    for o in range(outer):
        slab = data[o * stored : (o + 1) * stored]
        sliced += slab[:kept]
        zero = zero and not any(slab[kept:])
    return bytes(sliced), zero


def check_padding(path, specs):
    """The --padding mode: the padding of each NAME=DIM:KEPT is zero."""
    tensors = read(path)
    failed = False
    for spec in specs:
        name, rest = spec.split("=")
        dim, kept = (int(word) for word in rest.split(":"))
        if name not in tensors:
            sys.exit("%s: no tensor %s" % (path, name))
        shape = list(tensors[name][1])
        if not 0 <= dim < len(shape) or not 0 < kept < shape[dim]:
            sys.exit("%s: %s %s is not padded past %d along %d" % (path, name, shape, kept, dim))
        logical = shape[:dim] + [kept] + shape[dim + 1 :]
        _, zero = unpad(tensors[name], logical, dim)
        print("%s: padding %s" % (name, "zero" if zero else "NOT zero"))
        failed = failed or not zero
    sys.exit(1 if failed else 0)


def main():
    args = sys.argv[1:]
    if args[:1] == ["--padding"] and len(args) >= 3:
        check_padding(args[1], args[2:])
    if len(args) < 4:
        sys.exit(__doc__)
    failed = False
    losses = [[s["loss"] for s in json.load(open(p))["steps"]] for p in args[:2]]
    if losses[0] != losses[1] or not losses[0]:
        print("losses differ: %s vs %s" % (losses[0], losses[1]))
        failed = True
    else:
        print("%d losses bitwise equal" % len(losses[0]))
    plain, padded = read(args[2]), read(args[3])
    dims = dict((spec.split("=")[0], int(spec.split("=")[1])) for spec in args[4:])
    if sorted(plain) != sorted(padded):
        sys.exit("tensor names differ: %s vs %s" % (sorted(plain), sorted(padded)))
    for name in sorted(plain):
        a, b = plain[name], padded[name]
        if name in dims:
            if b[1][dims[name]] <= a[1][dims[name]]:
                print("%s: not padded (%s vs %s)" % (name, a[1], b[1]))
                failed = True
                continue
            data, zero = unpad(b, a[1], dims[name])
            if data != a[2] or not zero:
                print("%s: padded %s differs (slice equal: %s, padding zero: %s)"
                      % (name, b[1], data == a[2], zero))
                failed = True
            else:
                print("%s: %s -> %s, slice bitwise equal, padding zero" % (name, a[1], b[1]))
        elif a != b:
            print("%s differs" % name)
            failed = True
    sys.exit(1 if failed else 0)


if __name__ == "__main__":
    main()
