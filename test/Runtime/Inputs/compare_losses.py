"""compare_losses.py RUNTIME_LOG REFERENCE TOL [--narrow M PARAMS]: the
per-step losses of a tandem-run --data log ('step K loss X ...' lines)
against those of REFERENCE, tandem-eval --train --log-json's file (.json)
or another such log, for every step both ran: the relative error
|a-b|/|b| <= TOL, a number or KIND:MODEL.mlir:FUNCTION, the bound
python/tests/tolerance.py derives from that function's arithmetic. Prints
'ok N' (N compared steps) or one line per step that differs and exits 1.

With --narrow M PARAMS, TOL (KIND:MODEL.mlir:FUNCTION, FUNCTION with bf16
or f16 results) leaves out the narrow roundings, and step K's loss may
differ by tolerance.narrow_loss_bound for M sequences a step more: its
logits bounded from the parameters step K started from, PARAMS with {}
for K (a safetensors file); with a KIND of cuda, the CUDA target's
tensor-core attention's rounding of its probabilities among them."""
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


args = sys.argv[1:]
narrow = None
if "--narrow" in args:
    i = args.index("--narrow")
    narrow = int(args[i + 1]), args[i + 2]
    del args[i : i + 3]
runtime = read_log(args[0])
if args[1].endswith(".json"):
    reference = {s["step"]: s["loss"] for s in json.load(open(args[1]))["steps"]}
else:
    reference = read_log(args[1])
tol = tolerance.from_spec(args[2], narrow=narrow is None)
common = sorted(set(runtime) & set(reference))


def allowed(k):
    """The difference step k's loss may have."""
    limit = tol * abs(reference[k])
    if narrow:
        _, path, function = args[2].split(":")
        text = open(path).read()
        params = tolerance.read_params(narrow[1].replace("{}", str(k)))
        logits = tolerance.logits_norm_bound(text, function, params)
        kinds = args[2].split(":")[0].split("+")
        limit += tolerance.narrow_loss_bound(text, function, narrow[0], logits, tensor_cores="cuda" in kinds)
    return limit


bad = []
for k in common:
    limit = allowed(k)
    error = abs(runtime[k] - reference[k])
    if error > limit:
        scale = abs(reference[k])
        bad.append("step %d: loss %.9g vs %.9g: relative error %.3g, bound %.3g" % (k, runtime[k], reference[k], error / scale, limit / scale))
if not common:
    bad.append("no step in common")
for line in bad:
    print(line)
if bad:
    sys.exit(1)
print("ok %d" % len(common))
