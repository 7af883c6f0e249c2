"""Checks a two-host tandem-run log against its shaped link.

  link_rate.py LOG MBIT TX_BYTES

The run is bound by its links: each step, rank 0 sends rank 1 its
activations (and rank 1 as many gradient bytes back, on the other
direction's own bucket), so a step takes its payload over the rate.
Prints the median step time (steps 1 on; step 0 warms up) over payload
bytes / rate, and fails outside [0.95, 1.15]: TCP/IP adds 66 header bytes
per 1448-byte segment (4.6%), and the step's compute and the ranks' waits
for each other add the rest; the tbf bucket (32 KiB, refilled only while
the link idles, which a link-bound run hardly does) lets little through
faster than the rate. TX_BYTES, rank 0's interface counter, must
hold the payload plus the 256 KiB start-up exchange (MPIRank.cpp) and at
most 10% + 64 KiB more (headers, MPI's own messages)."""
import re
import statistics
import sys

log, mbit, tx = sys.argv[1], float(sys.argv[2]), int(sys.argv[3])
text = open(log).read()
times = [float(t) for t in re.findall(r"^step \d+ loss \S+ time (\S+) s", text, re.M)]
sent = int(re.search(r"rank 0: sent (\d+) to rank 1", text).group(1))
steps = len(times)
per_step = sent / steps
expected = per_step * 8 / (mbit * 1e6)
ratio = statistics.median(times[1:]) / expected
ok = 0.95 <= ratio <= 1.15
floor = sent + 262144
ok_tx = floor <= tx <= 1.10 * floor + 65536
print("%g Mbit/s: %d payload bytes a step, step time / (bytes / rate) %s, "
      "interface bytes %s" % (mbit, per_step, "ok" if ok else "%.3f" % ratio,
                              "ok" if ok_tx else "%d for %d" % (tx, floor)))
sys.exit(0 if ok and ok_tx else 1)
