"""Checks mpmd-memory's stash against an independent count.

Usage: memory_stash.py PROGRAM.mlir MEMORY.json SIMULATE.txt IN_FLIGHT

PROGRAM.mlir is a scheduled program, MEMORY.json what mpmd-memory's json=
wrote for it, SIMULATE.txt mpmd-simulate's remarks on it, IN_FLIGHT the
expected peak in-flight microbatches per rank ("4,3,2,1").

The stash of one microbatch on stage s is counted here from the program
text alone: every distinct forward result (fwd fragment, result index) that
a transfer carries into a backward fragment (bwd, bwd_input, bwd_weight) of
stage s, plus every step input a backward fragment of stage s binds
(mpmd.input), at the bytes of its type. The peak number of microbatches in
flight comes from the schedule simulator. The script checks that the
analysis reports the same bytes per microbatch, the simulator's in-flight
count (and the expected one), and a stash of exactly their product (one
chunk per stage: every stashed value of a microbatch lives from its forward
run to its backward run).
"""

import json
import re
import sys

WIDTH = {"f64": 8, "i64": 8, "f32": 4, "i32": 4, "bf16": 2, "f16": 2,
         "i16": 2, "i8": 1, "i1": 1}


def tensor_bytes(text):
    parts = text[len("tensor<"):-1].split("x")
    elements = 1
    for dim in parts[:-1]:
        elements *= int(dim)
    return elements * WIDTH[parts[-1]]


def main():
    program, memory_json, simulate, expected = sys.argv[1:5]
    text = open(program).read()
    fragments = {}
    for m in re.finditer(
            r"mpmd\.fragment @(\S+) stage (\d+) chunk (\d+) kind (\w+) "
            r"\((.*?)\) ->", text):
        name, stage, _, kind, args = m.groups()
        inputs = {}
        for a in re.finditer(r"%arg\d+: (tensor<[^>]*>)( \{[^}]*\})?", args):
            attrs = a.group(2) or ""
            im = re.search(r"mpmd\.input = (\d+)", attrs)
            if im:
                inputs[int(im.group(1))] = tensor_bytes(a.group(1))
        fragments[name] = (int(stage), kind, inputs)
    backward = ("bwd", "bwd_input", "bwd_weight")
    stash = {}  # stage -> {key: bytes}
    for m in re.finditer(r"mpmd\.transfer @(\S+)\[(\d+)\] -> @(\S+)\[\d+\] "
                         r": (tensor<[^>]*>)", text):
        src, result, dst, type_ = m.groups()
        if fragments[src][1] == "fwd" and fragments[dst][1] in backward:
            stash.setdefault(fragments[dst][0], {})[(src, result)] = \
                tensor_bytes(type_)
    for name, (stage, kind, inputs) in fragments.items():
        if kind in backward:
            for index, size in inputs.items():
                stash.setdefault(stage, {})[("input", index)] = size

    in_flight = {}
    for m in re.finditer(r"rank (\d+): busy .*?peak in-flight microbatches "
                         r"(\d+)", open(simulate).read()):
        in_flight[int(m.group(1))] = int(m.group(2))

    ranks = json.load(open(memory_json))["programs"][0]["ranks"]
    expected = [int(x) for x in expected.split(",")]
    errors = []
    for rank in ranks:
        r = rank["rank"]
        per_microbatch = sum(stash.get(r, {}).values())
        want = {"stashPerMicrobatch": per_microbatch,
                "peakInFlight": in_flight[r],
                "stash": per_microbatch * in_flight[r]}
        for key, value in want.items():
            if rank[key] != value:
                errors.append(f"rank {r}: {key} {rank[key]}, expected {value}")
        if in_flight[r] != expected[r % len(expected)]:
            errors.append(f"rank {r}: simulator in flight {in_flight[r]}, "
                          f"expected {expected[r % len(expected)]}")
        print(f"rank {r}: stash {rank['stash']} = {in_flight[r]} x "
              f"{per_microbatch}")
    if len(ranks) != len(in_flight):
        errors.append(f"{len(ranks)} ranks analysed, {len(in_flight)} "
                      "simulated")
    for error in errors:
        print("error:", error)
    sys.exit(1 if errors else 0)


main()
