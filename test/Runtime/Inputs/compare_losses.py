"""compare_losses.py RUNTIME_LOG REFERENCE TOL: the per-step losses of a
tandem-run --data log ('step K loss X ...' lines) against those of
REFERENCE, tandem-eval --train --log-json's file (.json) or another such
log, for every step both ran: the relative error
|a-b|/|b| <= TOL, a number or KIND:MODEL.mlir:FUNCTION, the bound
python/tests/tolerance.py derives from that function's arithmetic. Prints
'ok N' (N compared steps) or one line per step that differs and exits 1."""
import json
import os
import sys

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "..", "..", "python", "tests"))
import tolerance  # noqa: E402



def read_log(path):
    losses = {}
    for line in open(path):
        words = line.split()
        if len(words) >= 4 and words[0] == "step" and words[2] == "loss":
            losses[int(words[1])] = float(words[3])
    return losses


runtime = read_log(sys.argv[1])
if sys.argv[2].endswith(".json"):
    reference = {s["step"]: s["loss"] for s in json.load(open(sys.argv[2]))["steps"]}
else:
    reference = read_log(sys.argv[2])
tol = tolerance.from_spec(sys.argv[3])
common = sorted(set(runtime) & set(reference))
bad = [
    "step %d: loss %.9g vs %.9g: relative error %.3g" % (k, runtime[k], reference[k], abs(runtime[k] - reference[k]) / abs(reference[k]))
    for k in common
    if abs(runtime[k] - reference[k]) > tol * abs(reference[k])
]
if not common:
    bad.append("no step in common")
for line in bad:
    print(line)
if bad:
    sys.exit(1)
print("ok %d" % len(common))
