#!/usr/bin/env python3
"""compare-dumps.py REFERENCE_DIR RUN_DIR [SCREEN]: two runs' fragment dumps
(TANDEM_DUMP_FRAGMENTS, docs/runtime.md) side by side, call by call: the
same files and tensors, and per result tensor its relative error
sqrt(sum (a-b)^2 / sum b^2) against the reference and whether it is
bitwise equal.

Made for the GPU check: a GPU run against its emulation. The two runs'
GEMMs sum in different orders, and every later call's arguments inherit
that, so the errors are not a numerical claim (the chained loss
comparison is); this is a screen that names the first call where the GPU
goes wrong: a missing file or tensor, a shape or type that differs, a
non-finite value the reference does not have, or an error above SCREEN
(1e-2 unless given: orders of magnitude above any rounding of these models
in f32; a bf16 run's roundings are 2^-9 each, and its screen is looser)
fails it.
Pure Python: the GPU machine needs nothing installed."""
import math
import os
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "python", "tests"))
from safetensors_file import read, values  # noqa: E402

SCREEN = 1e-2


def main(reference_dir, run_dir, screen=SCREEN):
    problems = []
    reference_files = sorted(os.listdir(reference_dir))
    run_files = set(os.listdir(run_dir))
    bitwise = compared = 0
    for name in reference_files:
        if name not in run_files:
            problems.append("%s: missing from the run" % name)
            continue
        a, b = read(os.path.join(run_dir, name)), read(os.path.join(reference_dir, name))
        for tensor, (dtype, shape, raw) in sorted(b.items()):
            if tensor not in a:
                problems.append("%s %s: missing from the run" % (name, tensor))
                continue
            if a[tensor][:2] != (dtype, shape):
                problems.append("%s %s: %s %s, not %s %s" % (name, tensor, a[tensor][0], a[tensor][1], dtype, shape))
                continue
            if not tensor.startswith("result"):
                continue
            compared += 1
            if a[tensor][2] == raw:
                bitwise += 1
                continue
            got, want = values(dtype, a[tensor][2]), values(dtype, raw)
            if got is None:
                problems.append("%s %s: %s differs (not compared numerically)" % (name, tensor, dtype))
                continue
            if any(not math.isfinite(x) for x in got) and all(math.isfinite(x) for x in want):
                problems.append("%s %s: non-finite values" % (name, tensor))
                continue
            diff = sum((x - y) ** 2 for x, y in zip(got, want) if math.isfinite(x) and math.isfinite(y))
            norm = sum(y * y for y in want if math.isfinite(y))
            error = math.sqrt(diff / norm) if norm > 0 else math.sqrt(diff)
            print("%s %s: relative error %.3g" % (name, tensor, error))
            if error > screen:
                problems.append("%s %s: relative error %.3g above the screen %g" % (name, tensor, error, screen))
    for name in sorted(run_files - set(reference_files)):
        problems.append("%s: not in the reference" % name)
    for line in problems:
        print("problem: " + line)
    print("%d files, %d results: %d bitwise equal, %d problems" % (len(reference_files), compared, bitwise, len(problems)))
    return 1 if problems or not reference_files else 0


if __name__ == "__main__":
    if len(sys.argv) not in (3, 4):
        print(__doc__.splitlines()[0])
        sys.exit(2)
    sys.exit(main(sys.argv[1], sys.argv[2], *(float(a) for a in sys.argv[3:])))
