"""matmul_flops.py RANK.mlir... : the FLOPs of every nn.matmul in the
mpmd.fragment bodies of per-rank modules (2 x result elements x contracted
size; a per-microbatch fragment counts once, so pass m = 1 programs), the
work bench/throughput.sh divides by the step time."""
import re
import sys

MATMUL = re.compile(
    r"nn\.matmul [^:]*?(\{[^}]*\})?\s*:\s*tensor<([0-9x]+)x\w+>,\s*tensor<([0-9x]+)x\w+>\s*->\s*tensor<([0-9x]+)x\w+>")

total = 0
for path in sys.argv[1:]:
    for line in open(path):
        match = MATMUL.search(line)
        if not match:
            continue
        attrs, lhs, _, result = match.groups()
        lhs = [int(d) for d in lhs.split("x")]
        k = lhs[-2] if attrs and "transpose_lhs" in attrs else lhs[-1]
        elements = 1
        for d in result.split("x"):
            elements *= int(d)
        total += 2 * elements * k
print(total)
