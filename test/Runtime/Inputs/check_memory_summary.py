#!/usr/bin/env python3
"""Checks the numbers of tandem-run's "memory per rank" summary against the
rank manifests (usage: check_memory_summary.py LOG DIR [SEPARATE_LOG]).

Deterministic checks: the prediction is the manifest's predicted_memory, the
plan is its arena plus parameters, the runtime's buffer count covers the plan
(and, with separate buffers, allocates at most the arena). Noise-prone ones
(the resident size) only get bounds: at least 80% of the buffers the runtime
touched, and at most 25% and 1 MiB above them. On a GPU (the fake one of
the tests) the device's memory in use, the driver's count, covers the plan
and at most 1 MiB more (step inputs, the status word). Prints "ok N" for N
ranks checked.
"""
import json
import re
import sys

MIB = 1048576.0
LINE = re.compile(
    r"^  rank (\d+): predicted ([0-9.]+) \(.*?\), plan ([0-9.]+) \((?:arena|"
    r"separate buffers at most) ([0-9.]+) \+ parameters and optimizer state "
    r"([0-9.]+)\), buffers ([0-9.]+) \(ratio ([0-9.]+)\), measured ([0-9.]+) "
    r"\(ratio ([0-9.]+)\)(?:, device ([0-9.]+))?; step buffers at most "
    r"([0-9.]+) at ")


def rows(path):
    found = {}
    for line in open(path):
        m = LINE.match(line)
        if m:
            found[int(m.group(1))] = [
                None if x is None else float(x) for x in m.groups()[1:]]
    return found


def fail(message):
    print("error: " + message)
    sys.exit(1)


def near(a, b, what):
    # The summary prints two decimals of MiB.
    if abs(a - b) > 0.006:
        fail("%s: %.4f vs %.4f" % (what, a, b))


def main():
    log, directory = sys.argv[1], sys.argv[2]
    arena = rows(log)
    separate = rows(sys.argv[3]) if len(sys.argv) > 3 else {}
    if not arena:
        fail("no memory lines in " + log)
    for rank, values in sorted(arena.items()):
        (predicted, plan, steps, params, buffers, buffers_ratio, measured,
         measured_ratio, device, peak_live) = values
        m = json.load(open("%s/rank%d.json" % (directory, rank)))
        p = m["predicted_memory"]
        near(predicted, p["peak_bytes"] / MIB, "rank %d prediction" % rank)
        near(steps, m["memory"]["arena_bytes"] / MIB, "rank %d arena" % rank)
        near(params, sum(x["bytes"] for x in m["parameters"]) / MIB,
             "rank %d parameters" % rank)
        near(buffers_ratio, buffers / predicted, "rank %d buffer ratio" % rank)
        if abs(measured_ratio - measured / predicted) > 0.01:
            fail("rank %d: measured ratio %.3f" % (rank, measured_ratio))
        # Every arena byte and parameter is a runtime buffer (plus step
        # inputs and outputs, which are small here).
        if not plan - 0.01 <= buffers <= plan + 1.0:
            fail("rank %d: buffers %.2f, plan %.2f" % (rank, buffers, plan))
        if device is not None and not plan - 0.01 <= device <= plan + 1.0:
            fail("rank %d: device %.2f MiB in use, plan %.2f" %
                 (rank, device, plan))
        if peak_live > steps + 0.01:
            fail("rank %d: %.2f live in an arena of %.2f" %
                 (rank, peak_live, steps))
        if not 0.5 <= buffers_ratio <= 4.0:
            fail("rank %d: buffers / predicted = %.3f" % (rank, buffers_ratio))
        # The measured growth is private memory only (code and shared
        # pages touched after the baseline are left out): the buffers plus
        # the runtime's own bookkeeping and the allocator's rounding.
        if not 0.8 * buffers <= measured <= 1.25 * buffers + 1.0:
            fail("rank %d: measured %.2f MiB for %.2f MiB of buffers" %
                 (rank, measured, buffers))
        if rank in separate:
            sep_steps, sep_buffers = separate[rank][2], separate[rank][4]
            # Separate buffers allocated while used never need more than
            # the arena, which holds the most bytes live at once or more.
            if sep_steps > steps + 0.01 or sep_buffers > buffers + 0.01:
                fail("rank %d: separate buffers %.2f (%.2f in all), arena "
                     "%.2f (%.2f)" % (rank, sep_steps, sep_buffers, steps,
                                      buffers))
            if sep_steps < peak_live - 0.01:
                fail("rank %d: separate buffers %.2f below the %.2f live at "
                     "once" % (rank, sep_steps, peak_live))
    print("ok %d" % len(arena))


if __name__ == "__main__":
    main()
