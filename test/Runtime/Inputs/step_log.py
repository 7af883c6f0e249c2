"""Reads tandem-run's step lines ("step K loss L time T s ...")."""
import re
import statistics
import sys


def step_times(path):
    """The log's text, its median step time over the steps after the first
    (which carries the warm-up), and its step count."""
    text = open(path).read()
    times = [float(t) for t in
             re.findall(r"^step \d+ loss \S+ time (\S+) s", text, re.M)]
    if len(times) < 2:
        sys.exit("%s: fewer than two steps" % path)
    return text, statistics.median(times[1:]), len(times)
