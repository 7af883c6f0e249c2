"""Reads a tandem-run trace and prints, per rank, how many transfer spans
(a group from its post until a wait saw it complete) contain a whole
compute span of the same rank and step: sends in flight over compute.

  transfer_overlap.py TRACE
prints "rank R: T transfers, O over compute" per rank in rank order."""
import json
import sys

events = json.load(open(sys.argv[1]))["traceEvents"]
ranks = sorted({e["pid"] for e in events if e.get("cat") == "transfer"})
for rank in ranks:
    mine = [e for e in events if e["pid"] == rank and "dur" in e]
    transfers = [e for e in mine if e["cat"] == "transfer"]
    compute = [e for e in mine if e["cat"] == "compute"]
    over = 0
    for t in transfers:
        end = t["ts"] + t["dur"]
        if any(c["args"]["step"] == t["args"]["step"] and
               t["ts"] <= c["ts"] and c["ts"] + c["dur"] <= end
               for c in compute):
            over += 1
    print("rank %d: %d transfers, %d over compute" %
          (rank, len(transfers), over))
