"""Compares the held-out losses of training logs (tandem-eval --log-json):

    check_convergence.py F32.json OTHER.json... [--drop D] [--within R]

The f32 run's held-out loss must drop by at least D (relative, from the
first to the last evaluation) and every other run's final held-out loss
must be within R (relative) of the f32 run's. Prints every figure.
"""

import argparse
import json
import sys


def held_out(path):
    with open(path) as f:
        log = json.load(f)
    return log["held_out"][0]["loss"], log["held_out"][-1]["loss"]


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("reference")
    parser.add_argument("others", nargs="+")
    parser.add_argument("--drop", type=float, default=0.30)
    parser.add_argument("--within", type=float, default=0.02)
    args = parser.parse_args()
    first, last = held_out(args.reference)
    drop = (first - last) / first
    ok = drop >= args.drop
    print("f32: held-out %.6f -> %.6f, drop %.2f%% (need >= %.0f%%)" %
          (first, last, 100 * drop, 100 * args.drop))
    for path in args.others:
        start, end = held_out(path)
        gap = abs(end - last) / last
        ok &= gap <= args.within
        print("%s: held-out %.6f -> %.6f, %.3f%% from f32 (need <= %.0f%%)" %
              (path.rsplit("/", 1)[-1], start, end, 100 * gap,
               100 * args.within))
    print("converged" if ok else "FAILED")
    sys.exit(0 if ok else 1)


if __name__ == "__main__":
    main()
