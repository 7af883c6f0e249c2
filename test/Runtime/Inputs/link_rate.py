"""Checks a two-host tandem-run log against its shaped link.

  link_rate.py LOG MBIT TX_BYTES PLAIN_LOG

Each step rank 0 sends rank 1 its activations, and rank 1 as many
gradient bytes back on the other direction's own token bucket, so a step
cannot be shorter than its payload over the rate, nor much longer than
that plus the step's compute. With P the payload a step (the transport's
count) and W = P * (1 + 66 / 1448) the bytes on the wire (TCP/IP adds 66
header bytes per 1448-byte segment), the median step time (steps 1 on;
step 0 warms up) must lie in

  lower = (W - burst) * 8 / rate: the bucket (hosts.sh: 32 KiB at these
          rates) lets at most its depth through faster than the rate,
          and only after the link idled, so once a step;
  upper = W * 8 / rate + 2 * C: no transfer overlapping compute at all,
          where C is the median step of PLAIN_LOG, the same program run
          without hosts (threads), and the factor 2 lets the two ranks
          share one core while another test runs on the other.

TX_BYTES, rank 0's interface counter, must hold the payload plus the
256 KiB start-up exchange (MPIRank.cpp) and at most 10% + 64 KiB more
(headers, MPI's own messages)."""
import re
import sys

from step_log import step_times

BURST = 32768
HEADER_FACTOR = 1 + 66 / 1448


log, mbit, tx, plain = (sys.argv[1], float(sys.argv[2]), int(sys.argv[3]),
                        sys.argv[4])
text, step, steps = step_times(log)
_, compute, _ = step_times(plain)
sent = int(re.search(r"rank 0: sent (\d+) to rank 1", text).group(1))
per_step = sent / steps
rate = mbit * 1e6
wire = per_step * HEADER_FACTOR
lower = (wire - BURST) * 8 / rate
upper = wire * 8 / rate + 2 * compute
ok = lower <= step <= upper
floor = sent + 262144
ok_tx = floor <= tx <= 1.10 * floor + 65536
print("%g Mbit/s: %d payload bytes a step, step time %s, interface bytes %s"
      % (mbit, per_step,
         "within its bounds" if ok else
         "%.4f s outside [%.4f, %.4f]" % (step, lower, upper),
         "ok" if ok_tx else "%d for %d" % (tx, floor)))
sys.exit(0 if ok and ok_tx else 1)
