"""Checks that pipelined programs compute bitwise what the one-stage program
with the same microbatching computes, for every valid combination of stage
count, schedule and microbatch count:

    check_bitwise.py MODEL.mlir DATA WORKDIR [--optimizer OPTS]
        [--stages 1,2,4] [--microbatches 1,4,8] [--steps 2]
        [--schedules gpipe,1f1b,...] [--remat POLICY]

MODEL.mlir holds a @forward function (microbatch-sized inputs). The script
derives @forward_grad and @train_step (nn-autodiff, nn-optimizer), then for
each microbatch count m:

  - the reference: both functions partitioned for 1 stage, scheduled with
    gpipe, lowered, verified and run by tandem-eval (all ranks in-process);
  - every (stages, schedule) combination: the same, with 1f1b, gpipe,
    interleaved-1f1b (2 chunks per stage) and zb-h1 (split backward).

With `--remat POLICY` (none, full, selective, or budget=BYTES), every
combination runs mpmd-remat with that policy right after mpmd-schedule,
while the reference stays without it: rematerialization must not change a
single bit.

With token data and m = 1, the reference must also equal @train_step run as
a function. It compares, byte for byte: the gradient program's outputs (the loss and
every parameter's gradient, averaged over microbatches) on training batch 0,
and the parameters (with optimizer state) after `steps` training steps, plus
the per-step losses and held-out losses of the training log. A combination a
pass rejects as invalid for this model (too few stage markers, a schedule's
divisibility condition) is listed as skipped with the reason; any other
failure, or any difference, fails the check.
"""

import argparse
import filecmp
import json
import os
import subprocess
import sys

SCHEDULES = ["gpipe", "1f1b", "interleaved-1f1b", "zb-h1"]

# Messages of passes that reject a combination for this model: not errors
# of the pipeline, which the check must report.
INVALID_COMBINATION = [
    "fewer than the",  # mpmd-partition: not enough stage markers
    "cannot use schedule",  # mpmd-schedule: a generator's condition
]


def run(command):
    result = subprocess.run(command, capture_output=True, text=True)
    if result.returncode != 0:
        return result.stderr.strip() or result.stdout.strip() or "failed"
    return None


def remat_pass(policy):
    """The mpmd-remat pass for POLICY (none, full, selective, budget=N)."""
    if policy.startswith("budget="):
        return "mpmd-remat{policy=budget budget=%s}," % policy[len("budget="):]
    return "mpmd-remat{policy=%s}," % policy


def compile_both(train, stages, schedule, microbatches, out, remat=None):
    """Partitions the gradient function and the training step into the
    programs @grads and @train, then schedules, rematerializes (if `remat`
    names a policy), lowers and verifies both; returns None or an error."""
    chunks = 2 if schedule == "interleaved-1f1b" else 1
    split = "true" if schedule == "zb-h1" else "false"
    grid = "stages=%d chunks=%d microbatches=%d split-backward=%s" % (
        stages, chunks, microbatches, split)
    pipeline = ("builtin.module(mpmd-partition{function=forward_grad "
                "program=grads %s},mpmd-partition{function=train_step "
                "program=train %s},mpmd-schedule{schedule=%s},%s"
                "mpmd-lower-transfers,mpmd-verify)" %
                (grid, grid, schedule, remat_pass(remat) if remat else ""))
    return run(["tandem-opt", train, "--pass-pipeline=" + pipeline, "-o", out])


def evaluate(program_file, data, steps, prefix):
    """Runs the gradient program once, and the training program `steps`
    times on `data` (token data) or, without data, once on generated
    inputs; returns None or an error."""
    inputs = ["--data", data, "--batch-index", "0"] if data else ["--seed", "7"]
    error = run(["tandem-eval", program_file, "--program", "grads"] + inputs +
                ["--save-outputs", prefix + ".grads"])
    if error:
        return error
    if not data:
        return run(["tandem-eval", program_file, "--program", "train"] +
                   inputs + ["--save-outputs", prefix + ".loss",
                             "--save-params", prefix + ".params"])
    return run([
        "tandem-eval", program_file, "--train", "--program", "train",
        "--steps", str(steps), "--data", data, "--save-params",
        prefix + ".params", "--log-json", prefix + ".json"
    ])


def same_files(a, b):
    return filecmp.cmp(a, b, shallow=False)


def losses(path):
    with open(path) as f:
        log = json.load(f)
    return ([e["loss"] for e in log["steps"]],
            [e["loss"] for e in log["held_out"]])


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("model")
    parser.add_argument("data", help="token data, or '-' for generated "
                        "inputs (one training step)")
    parser.add_argument("workdir")
    parser.add_argument("--optimizer", default="optimizer=adamw clip-norm=1.0")
    parser.add_argument("--stages", default="1,2,4")
    parser.add_argument("--microbatches", default="1,4,8")
    parser.add_argument("--steps", type=int, default=2)
    parser.add_argument("--schedules", default=",".join(SCHEDULES))
    parser.add_argument("--remat", default=None,
                        help="mpmd-remat policy for the combinations: none, "
                        "full, selective or budget=BYTES")
    args = parser.parse_args()
    os.makedirs(args.workdir, exist_ok=True)
    data = None if args.data == "-" else args.data
    work = lambda name: os.path.join(args.workdir, name)

    train = work("train.mlir")
    error = run([
        "tandem-opt", args.model, "--nn-autodiff",
        "--nn-optimizer=" + args.optimizer, "-o", train
    ])
    if error:
        sys.exit("cannot build the training step: " + error)

    same, skipped, failures = 0, [], []
    for m in [int(x) for x in args.microbatches.split(",")]:
        reference = work("ref-m%d" % m)
        error = compile_both(train, 1, "gpipe", m, reference + ".mlir")
        error = error or evaluate(reference + ".mlir", data, args.steps,
                                  reference)
        if error:
            failures.append("m=%d reference: %s" % (m, error))
            continue
        ref_losses = losses(reference + ".json") if data else None
        if data and m == 1:
            # One stage, one microbatch: the program is the training step
            # itself, cut into fragments.
            error = run([
                "tandem-eval", train, "--train", "--steps", str(args.steps),
                "--data", data, "--save-params", work("function.params"),
                "--log-json", work("function.json")
            ])
            if error:
                failures.append("the training-step function: " + error)
            elif not same_files(work("function.params"),
                                reference + ".params") or losses(
                                    work("function.json")) != ref_losses:
                failures.append("m=1 reference: differs from @train_step")
            else:
                print("same: m=1 S=1 reference and @train_step itself")
        for stages in [int(x) for x in args.stages.split(",")]:
            for schedule in args.schedules.split(","):
                name = "m=%d S=%d %s" % (m, stages, schedule)
                prefix = work("m%d-s%d-%s" % (m, stages, schedule))
                error = compile_both(train, stages, schedule, m,
                                     prefix + ".mlir", args.remat)
                if error and any(r in error for r in INVALID_COMBINATION):
                    skipped.append("%s: %s" % (name, error.splitlines()[0]))
                    continue
                error = error or evaluate(prefix + ".mlir", data,
                                          args.steps, prefix)
                if error:
                    failures.append("%s: %s" % (name, error))
                    continue
                differs = []
                if not same_files(reference + ".grads", prefix + ".grads"):
                    differs.append("loss and gradients")
                if not same_files(reference + ".params", prefix + ".params"):
                    differs.append("parameters after the training step(s)")
                if data and losses(prefix + ".json") != ref_losses:
                    differs.append("training or held-out losses")
                if not data and not same_files(reference + ".loss",
                                               prefix + ".loss"):
                    differs.append("the training step's loss")
                if differs:
                    failures.append("%s: differs from the 1-stage reference "
                                    "in %s" % (name, ", ".join(differs)))
                else:
                    same += 1
                    if args.remat:
                        # What the policy did, so that a test can tell a
                        # rematerializing run from one that changed nothing.
                        with open(prefix + ".mlir") as f:
                            recomputed = f.read().count("mpmd.remat")
                        print("same: %s, %d ops recomputed" % (name,
                                                               recomputed))
                    else:
                        print("same: %s" % name)

    for line in skipped:
        print("skipped (invalid for this model): " + line)
    for line in failures:
        print("FAILED: " + line)
    print("%d combinations bitwise equal to the 1-stage reference, %d "
          "skipped, %d failed" % (same, len(skipped), len(failures)))
    sys.exit(1 if failures else 0)


if __name__ == "__main__":
    main()
