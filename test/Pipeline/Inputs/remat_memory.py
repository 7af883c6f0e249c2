"""Peak memory per rank under each mpmd-remat policy, from mpmd-memory:

    remat_memory.py TRAIN.mlir --budget BYTES [--stages 4] [--microbatches 8]
        [--schedule 1f1b]

TRAIN.mlir holds @train_step. The script partitions, schedules, applies
each policy (none, selective, full, budget=BYTES), runs mpmd-memory and
prints one line per policy and rank with the peak bytes and the peak of
stashed bytes. It then checks, on every rank, that the stash orders
none > selective > full, and that every rank's peak under the budget policy
is at most BYTES; it prints one line per check and exits non-zero if one
fails.
"""

import argparse
import re
import subprocess
import sys

REMARK = re.compile(r"rank (\d+): peak (\d+) bytes; .* stash (\d+) \(")


def memory(train, grid, schedule, remat):
    """Per rank: (peak, stash) of the program with the remat options."""
    pipeline = ("builtin.module(mpmd-partition{%s},mpmd-schedule{schedule=%s},"
                "mpmd-remat{%s},mpmd-memory)" % (grid, schedule, remat))
    result = subprocess.run(
        ["tandem-opt", train, "--pass-pipeline=" + pipeline, "-o", "/dev/null"],
        capture_output=True, text=True)
    if result.returncode != 0:
        sys.exit("remat %s failed: %s" % (remat, result.stderr.strip()))
    ranks = {}
    for line in result.stderr.splitlines():
        match = REMARK.search(line)
        if match:
            ranks[int(match.group(1))] = (int(match.group(2)),
                                          int(match.group(3)))
    return ranks


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("train")
    parser.add_argument("--budget", type=int, required=True)
    parser.add_argument("--stages", type=int, default=4)
    parser.add_argument("--microbatches", type=int, default=8)
    parser.add_argument("--schedule", default="1f1b")
    args = parser.parse_args()
    grid = "stages=%d microbatches=%d" % (args.stages, args.microbatches)
    policies = [("none", "policy=none"), ("selective", "policy=selective"),
                ("full", "policy=full"),
                ("budget", "policy=budget budget=%d" % args.budget)]
    results = {}
    for name, options in policies:
        results[name] = memory(args.train, grid, args.schedule, options)
        for rank, (peak, stash) in sorted(results[name].items()):
            print("%s rank %d: peak %d, stash %d" % (name, rank, peak, stash))

    failed = False
    for rank in sorted(results["none"]):
        stash = [results[p][rank][1] for p in ("none", "selective", "full")]
        if stash[0] > stash[1] > stash[2]:
            print("rank %d: stash none > selective > full" % rank)
        else:
            print("FAILED: rank %d: stash none %d, selective %d, full %d" %
                  (rank, *stash))
            failed = True
        peak = results["budget"][rank][0]
        if peak <= args.budget:
            print("rank %d: budget peak within %d" % (rank, args.budget))
        else:
            print("FAILED: rank %d: budget peak %d above %d" %
                  (rank, peak, args.budget))
            failed = True
    sys.exit(1 if failed else 0)


if __name__ == "__main__":
    main()
