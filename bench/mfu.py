"""mfu.py: model FLOPs utilization of a GPT training run, with llm.c's
formula (gpt2_estimate_mfu in llm.c's train_gpt2.cu): a token costs
6 N + 6 L C T FLOPs, N the parameter count (every parameter, embeddings
included, the tied head once), L layers, C the width, T the sequence (the
attention's score and value products, forward and backward).

  mfu.py --manifest DIR/rank0.json [DIR/rank1.json ...] --layers L --width C
         --seq T --tokens-per-s R [--peak-tflops 989] [--gemm-tflops G]

N is read off the rank manifests' parameters (their element counts, so the
padded vocabulary counts as it is stored), less the optimizer's state that
the manifests list among them (names starting with "opt."). Prints one
parseable line:

  mfu params N flops_per_token F tflops A peak P mfu M [gemm G of_gemm X]

A is the achieved rate, M = A / P (989 TFLOP/s: the H100 and H200
datasheets' dense bf16 peak), and with G, the rate of a large bf16 GEMM
measured on the same GPU in the same run (device_peaks.py), X = A / G.
"""

import argparse
import json


def parameter_count(manifests):
    total = 0
    seen = set()
    for path in manifests:
        for parameter in json.load(open(path))["parameters"]:
            if parameter["name"] in seen or parameter["name"].startswith("opt."):
                continue
            seen.add(parameter["name"])
            elements = 1
            for extent in parameter["shape"]:
                elements *= extent
            total += elements
    return total


def flops_per_token(params, layers, width, seq):
    return 6 * params + 6 * layers * width * seq


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--manifest", nargs="+", required=True)
    parser.add_argument("--layers", type=int, required=True)
    parser.add_argument("--width", type=int, required=True)
    parser.add_argument("--seq", type=int, required=True)
    parser.add_argument("--tokens-per-s", type=float, required=True)
    parser.add_argument("--peak-tflops", type=float, default=989.0)
    parser.add_argument("--gemm-tflops", type=float)
    args = parser.parse_args()
    params = parameter_count(args.manifest)
    per_token = flops_per_token(params, args.layers, args.width, args.seq)
    achieved = args.tokens_per_s * per_token / 1e12
    line = "mfu params %d flops_per_token %d tflops %.1f peak %.0f mfu %.4f" % (
        params, per_token, achieved, args.peak_tflops, achieved / args.peak_tflops)
    if args.gemm_tflops:
        line += " gemm %.1f of_gemm %.4f" % (args.gemm_tflops, achieved / args.gemm_tflops)
    print(line)


if __name__ == "__main__":
    main()
