"""Checks tandem-run --link-delay's step times against the delay.

  link_delay.py DELAY_MS DELAYED_LOG PLAIN_LOG PROGRAM_DIR

Every step of a 2-stage program with one microbatch sends the activation
forward and its gradient back, and the backward waits for that gradient:
at least two link crossings, so a step takes at least 2 x the delay. Each
wait holds its messages until their send time plus the delay, so no step
takes longer than the plain step's compute plus one delay per message the
ranks exchange in a step (the sends in the programs), with the plain step
counted twice for ranks sharing cores and 0.1 s for the scheduler. Medians
over the steps after the first. Prints "ok" or what is off.
"""
import glob
import re
import sys

from step_log import step_times


delay = float(sys.argv[1]) / 1000.0
_, delayed, _ = step_times(sys.argv[2])
_, plain, _ = step_times(sys.argv[3])
messages = sum(len(re.findall(r"mpmd\.send ", open(p).read()))
               for p in glob.glob(sys.argv[4] + "/rank*.mlir"))
lower = 2 * delay
upper = messages * delay + 2 * plain + 0.1
if lower <= delayed <= upper:
    print("ok")
else:
    print("step %.4f s outside [%.4f, %.4f] (delay %.3f s, %d messages a "
          "step, plain step %.4f s)" % (delayed, lower, upper, delay,
                                        messages, plain))
