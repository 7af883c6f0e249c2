#!/usr/bin/env python3
"""Compile-time benchmark of tandemc --target cpu or cuda.

Generates GPT models of several depths (`tandemc models gpt --config
gpt2-124m --layers L`, width 768), compiles each for S pipeline stages with
--target cpu (or cuda: nvcc for --cuda-arch) and --timing, first with an
empty compile cache (cold: every rank's source is compiled) and then again
with the same cache (warm: no compiler runs), and prints one row per
(layers, cache) with the MLIR time (every phase up to and including the
source emission) and the compile time (the `C++ compile` or `CUDA compile`
step: compiler runs or cache lookups) taken from tandemc's --timing report.
See bench/README.md.

usage: bench/compile_time.py [--build build] [--target cuda] [--layers 12,48,96] ...
"""

import argparse
import os
import re
import resource
import shutil
import subprocess
import sys
import tempfile
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))

# One line of MLIR's text timing report: "   1.2345 ( 12.3%)    name".
REPORT_LINE = re.compile(r"^\s*(\d+\.\d+) \(\s*[\d.]+%\)  (\s*)(\S.*)$")
SUMMARY = re.compile(r"tandemc: (?:C\+\+|CUDA): (\d+) ranks, (\d+) "
                     r"libraries: (\d+) compiled, (\d+) cached")
# Per target: the language in the --timing steps, the cache variable and
# the target's own options.
TARGETS = {
    "cpu": ("C++", "TANDEM_CPU_CACHE", []),
    "cuda": ("CUDA", "TANDEM_CUDA_CACHE", ["--cuda-arch", "sm_90a"]),
}


def parse_report(stderr):
    """(name, depth, seconds) for every line of the --timing report, and the
    compile summary (compiled, cached) from tandemc's remark."""
    entries = []
    in_report = False
    for line in stderr.splitlines():
        if "Execution time report" in line:
            in_report = True
            continue
        if not in_report:
            continue
        match = REPORT_LINE.match(line)
        if match:
            seconds, indent, name = match.groups()
            entries.append((name.strip(), len(indent) // 2, float(seconds)))
    summary = SUMMARY.search(stderr)
    if not entries or not summary:
        raise RuntimeError("no --timing report or C++ summary in tandemc's "
                           "output:\n" + stderr[-4000:])
    return entries, (int(summary.group(3)), int(summary.group(4)))


def children_cpu():
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    return usage.ru_utime + usage.ru_stime


def run(command, env=None):
    """Runs a command; returns its result, wall seconds and CPU seconds (its
    own and its children's: tandemc and every compiler it ran), the figure
    that a shared, loaded machine distorts least."""
    start, cpu = time.monotonic(), children_cpu()
    result = subprocess.run(command, env=env, capture_output=True, text=True)
    wall = time.monotonic() - start
    cpu = children_cpu() - cpu
    if result.returncode != 0:
        sys.exit(f"compile_time.py: {' '.join(command)} failed "
                 f"(exit {result.returncode}):\n{result.stderr[-4000:]}")
    return result, wall, cpu


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--build", default=os.path.join(ROOT, "build"),
                        help="build directory with bin/tandemc")
    parser.add_argument("--layers", default="12,48,96",
                        help="comma-separated depths")
    parser.add_argument("--target", default="cpu", choices=sorted(TARGETS))
    parser.add_argument("--precision", default="f32")
    parser.add_argument("--width", type=int, default=768)
    parser.add_argument("--seq", type=int, default=64,
                        help="sequence length (the causal mask is a "
                        "seq x seq constant per layer in the C++)")
    parser.add_argument("--stages", type=int, default=4)
    parser.add_argument("--microbatches", type=int, default=8)
    parser.add_argument("--schedule", default="1f1b")
    parser.add_argument("--jobs", type=int, default=0,
                        help="tandemc --jobs (0: one per core)")
    parser.add_argument("--no-cold", action="store_true",
                        help="skip the cold-cache runs and keep the caches "
                        "in --workdir from an earlier run (without them the "
                        "first warm run compiles: see the compiled column)")
    parser.add_argument("--repeat", type=int, default=3,
                        help="warm runs per depth; the row is the fastest "
                        "(the machine may be shared)")
    parser.add_argument("--passes", type=int, default=5,
                        help="print the N slowest passes of each warm run")
    parser.add_argument("--workdir", help="keep models and outputs here")
    args = parser.parse_args()

    tandemc = os.path.join(args.build, "bin", "tandemc")
    if not os.access(tandemc, os.X_OK):
        sys.exit(f"compile_time.py: no {tandemc}; build first or pass --build")
    layers = [int(x) for x in args.layers.split(",")]
    for n in layers:
        if n % args.stages:
            sys.exit(f"compile_time.py: {n} layers do not split into "
                     f"{args.stages} equal stages")

    workdir = args.workdir or tempfile.mkdtemp(prefix="tandem-bench-")
    os.makedirs(workdir, exist_ok=True)
    language, cache_variable, target_options = TARGETS[args.target]
    print(f"# tandemc --target {args.target} --precision {args.precision}, "
          f"GPT width {args.width} seq {args.seq}, "
          f"{args.stages} stages, {args.schedule}, m={args.microbatches}; "
          f"work in {workdir}")
    print(f"# {os.cpu_count()} cores; times in seconds")
    header = ("layers", "cache", "MLIR", f"(emit {language})", language,
              "total",
              "wall", "CPU", "compiled", "cached")
    rows = []
    slowest = {}
    for n in layers:
        model = os.path.join(workdir, f"gpt-{n}.mlir")
        run([tandemc, "models", "gpt", "--config", "gpt2-124m", "--layers",
             str(n), "--dim", str(args.width), "--seq", str(args.seq),
             "--stage-every", str(n // args.stages), "-o", model])
        cache = os.path.join(workdir, f"cache-{n}")
        if not args.no_cold:
            shutil.rmtree(cache, ignore_errors=True)
        os.makedirs(cache, exist_ok=True)
        env = dict(os.environ, **{cache_variable: cache})
        kinds = [] if args.no_cold else ["cold"]
        kinds += ["warm"] * max(1, args.repeat)
        best = None
        for kind in kinds:
            out = os.path.join(workdir, f"out-{n}-{kind}")
            shutil.rmtree(out, ignore_errors=True)
            result, wall, cpu = run(
                [tandemc, model, "-o", out, "--stages", str(args.stages),
                 "--microbatches", str(args.microbatches), "--schedule",
                 args.schedule, "--precision", args.precision, "--target",
                 args.target, *target_options, "--timing", "--jobs",
                 str(args.jobs)], env)
            entries, (compiled, cached) = parse_report(result.stderr)
            times = {}
            for name, depth, seconds in entries:
                times.setdefault((name, depth), 0.0)
                times[(name, depth)] += seconds
            total = times[("Total", 0)]
            cxx = times[(f"{language} compile", 1)]
            emit = times[(f"emit {language}", 1)]
            row = (n, kind, total - cxx, emit, cxx, total, wall, cpu,
                   compiled, cached)
            if kind == "cold":
                rows.append(row)
            elif best is None or total < best[0][5]:
                best = (row, times)
        rows.append(best[0])
        # Passes and steps nested one level under a phase.
        passes = [(s, name) for (name, depth), s in best[1].items()
                  if depth == 1 and name != f"{language} compile"]
        slowest[n] = sorted(passes, reverse=True)[:args.passes]

    print("| " + " | ".join(header) + " |")
    print("|" + "---|" * len(header))
    for row in rows:
        n, kind, mlir, emit, cxx, total, wall, cpu, compiled, cached = row
        print(f"| {n} | {kind} | {mlir:.2f} | {emit:.2f} | {cxx:.2f} | "
              f"{total:.2f} | {wall:.2f} | {cpu:.2f} | {compiled} | "
              f"{cached} |")
    warm = [(r[0], r[2]) for r in rows if r[1] == "warm"]
    if len(warm) > 1:
        (n0, t0), (n1, t1) = warm[0], warm[-1]
        print(f"# warm MLIR time x{t1 / t0:.1f} for layers x{n1 / n0:.1f}")
    for n, passes in slowest.items():
        print(f"# slowest steps at {n} layers (warm): " +
              ", ".join(f"{name} {s:.2f}" for s, name in passes))
    if not args.workdir:
        shutil.rmtree(workdir, ignore_errors=True)


if __name__ == "__main__":
    main()
