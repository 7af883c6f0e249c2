"""bits_record.py RECORD KEY LOG PARAMS [--write]: checks one training run
against the checked-in record of its bits (test/Runtime/bits-record.test).

KEY names the run's model and precision (e.g. tiny-f32); LOG is
tandem-run's output ('step K loss X ...' lines); PARAMS the
safetensors file its --save-params wrote (parameters and optimizer state).
The run's bits are its per-step losses as printed and the SHA-256 of every
tensor's name, dtype, shape and bytes in name order. Prints 'KEY: matches
the record (N steps, sha256 ...)' or what differs and exits 1. With
--write, stores the run under KEY instead (only when the arithmetic is
meant to change; say so in the commit).
"""
import hashlib
import json
import struct
import sys

record_path, key, log_path, params_path = sys.argv[1:5]
write = "--write" in sys.argv[5:]

losses = []
for line in open(log_path):
    words = line.split()
    if len(words) >= 4 and words[0] == "step" and words[2] == "loss":
        losses.append("%s %s" % (words[1], words[3]))

data = open(params_path, "rb").read()
(n,) = struct.unpack("<Q", data[:8])
header = json.loads(data[8 : 8 + n])
header.pop("__metadata__", None)
body = data[8 + n :]
digest = hashlib.sha256()
for name in sorted(header):
    t = header[name]
    digest.update(("%s %s %s\n" % (name, t["dtype"], t["shape"])).encode())
    digest.update(body[t["data_offsets"][0] : t["data_offsets"][1]])
run = {"losses": losses, "sha256": digest.hexdigest(), "tensors": len(header)}

try:
    record = json.load(open(record_path))
except FileNotFoundError:
    record = {}
if write:
    record[key] = run
    with open(record_path, "w") as out:
        json.dump(record, out, indent=1, sort_keys=True)
        out.write("\n")
    print("%s: recorded (%d steps, sha256 %s)" % (key, len(losses), run["sha256"]))
    sys.exit(0)
if key not in record:
    print("%s: not in the record %s" % (key, record_path))
    sys.exit(1)
want = record[key]
bad = []
if not losses:
    bad.append("no step lines in %s" % log_path)
for mine, theirs in zip(losses, want["losses"]):
    if mine != theirs:
        bad.append("step loss %s, recorded %s" % (mine, theirs))
if len(losses) != len(want["losses"]):
    bad.append("%d steps, recorded %d" % (len(losses), len(want["losses"])))
if run["sha256"] != want["sha256"]:
    bad.append("parameters and optimizer state sha256 %s, recorded %s" % (run["sha256"], want["sha256"]))
for line in bad:
    print("%s: %s" % (key, line))
if bad:
    sys.exit(1)
print("%s: matches the record (%d steps, sha256 %s)" % (key, len(losses), run["sha256"][:16]))
