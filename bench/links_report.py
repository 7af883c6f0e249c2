"""Reads bench/compressed_links.sh's tandem-run logs.

  links_report.py rate DIR LOG
      the link rate (whole Mbit/s, at least 1) at which the busiest link of
      DIR's program needs twice LOG's median step time to carry a step's
      payload
  links_report.py report WORK RATE CORES "CODECS" [SVG]
      the Markdown table of WORK/{open,shaped}-<codec>.log, and the
      held-out loss curves of the shaped runs (against steps and against
      wall-clock) as an SVG file
"""
import glob
import math
import re
import statistics
import sys


ELEMENT_BYTES = {"f64": 8, "f32": 4, "i32": 4, "i64": 8, "bf16": 2,
                 "f16": 2, "i8": 1, "f8E4M3FN": 1, "f8E5M2": 1}


def link_bytes(program_dir):
    """The busiest directed link's bytes a step: the sends of every rank's
    program, each its element count times its wire type's size."""
    links = {}
    for path in glob.glob(program_dir + "/rank*.mlir"):
        rank = int(re.search(r"rank(\d+)\.mlir$", path).group(1))
        for line in open(path):
            m = re.search(r"mpmd\.send .* to (\d+) channel \d+ : "
                          r"tensor<([^>]*)> wire (\S+)", line)
            if not m:
                continue
            count = 1
            for d in m.group(2).split("x")[:-1]:
                count *= int(d)
            key = (rank, int(m.group(1)))
            links[key] = links.get(key, 0) + count * ELEMENT_BYTES[m.group(3)]
    return max(links.values())


def parse(path, program_dir):
    text = open(path).read()
    steps = [(int(k), float(t)) for k, t in
             re.findall(r"^step (\d+) loss \S+ time (\S+) s", text, re.M)]
    held = [(int(k), float(v)) for k, v in
            re.findall(r"^held-out loss at step (\d+): (\S+)", text, re.M)]
    times = [t for k, t in steps]
    return {
        "median": statistics.median(times[1:] if len(times) > 1 else times),
        "times": dict(steps),
        "held": held,
        "edge": link_bytes(program_dir),
    }


def rate(program_dir, log):
    run = parse(log, program_dir)
    mbit = run["edge"] * 8 / (2 * run["median"]) / 1e6
    print(max(1, int(math.floor(mbit))))


def wall_clock(run, step):
    """Seconds of training (held-out evaluations left out) before `step`."""
    return sum(t for k, t in run["times"].items() if k < step)


def reach(run, target):
    for step, loss in run["held"]:
        if loss <= target:
            return step, wall_clock(run, step)
    return None, None


def svg(path, curves, title):
    w, h, pad = 420, 260, 46
    panels = [("step", lambda run, s: s), ("wall-clock (s)", wall_clock)]
    colors = ["#1f77b4", "#d62728", "#2ca02c", "#9467bd", "#ff7f0e"]
    losses = [l for _, run in curves for _, l in run["held"]]
    lo, hi = min(losses), max(losses)
    out = ['<svg xmlns="http://www.w3.org/2000/svg" width="%d" height="%d" '
           'font-family="sans-serif" font-size="11">' % (2 * w, h + 30),
           '<text x="%d" y="16" text-anchor="middle" font-size="13">%s</text>'
           % (w, title)]
    for p, (label, xof) in enumerate(panels):
        x0 = p * w
        xs = [xof(run, s) for _, run in curves for s, _ in run["held"]]
        xmax = max(xs) or 1.0

        def X(x):
            return x0 + pad + (w - 2 * pad) * x / xmax

        def Y(y):
            return 30 + (h - pad) * (hi - y) / ((hi - lo) or 1.0)

        out.append('<rect x="%d" y="30" width="%d" height="%d" fill="none" '
                   'stroke="#888"/>' % (x0 + pad, w - 2 * pad, h - pad))
        for frac in (0, 0.5, 1):
            out.append('<text x="%.1f" y="%d" text-anchor="middle">%.3g</text>'
                       % (X(frac * xmax), h + 0, frac * xmax))
            y = lo + frac * (hi - lo)
            out.append('<text x="%.1f" y="%.1f" text-anchor="end">%.3f</text>'
                       % (x0 + pad - 4, Y(y) + 4, y))
        out.append('<text x="%.1f" y="%d" text-anchor="middle">%s</text>'
                   % (x0 + w / 2, h + 20, label))
        for i, (name, run) in enumerate(curves):
            pts = " ".join("%.1f,%.1f" % (X(xof(run, s)), Y(l))
                           for s, l in run["held"])
            out.append('<polyline fill="none" stroke="%s" stroke-width="1.5" '
                       'points="%s"/>' % (colors[i % len(colors)], pts))
            if p == 0:
                out.append('<text x="%d" y="%d" fill="%s">%s</text>'
                           % (x0 + w - pad - 70, 46 + 14 * i,
                              colors[i % len(colors)], name))
    out.append("</svg>")
    open(path, "w").write("\n".join(out) + "\n")


def report(work, mbit, cores, codecs, svg_path):
    codecs = codecs.split()
    runs = {(link, c): parse("%s/%s-%s.log" % (work, link, c),
                             "%s/%s" % (work, c))
            for link in ("open", "shaped") for c in codecs}
    plain = runs[("shaped", "none")]
    bf16 = runs[("open", "none")]["edge"] / 2
    target = plain["held"][-1][1]
    compute = runs[("open", "none")]["median"]
    print("GPT dim 256, 4 layers, vocab 256, seq 64, batch 2; 4 hosts, 1F1B, "
          "m = 8; %s Mbit/s links; %s cores" % (mbit, cores))
    print("uncompressed busiest link: %.0f bytes a step = %.3f s at the rate, "
          "%.2f x the open-link step (%.3f s)" % (
              runs[("open", "none")]["edge"],
              runs[("open", "none")]["edge"] * 8 / (float(mbit) * 1e6),
              runs[("open", "none")]["edge"] * 8 / (float(mbit) * 1e6) / compute,
              compute))
    print()
    print("| stage edges | bytes/step, busiest edge | vs bf16 | step, shaped (s) | "
          "step, open (s) | shaped / open | final held-out | steps to %.4f | "
          "wall-clock to it (s) |" % target)
    print("|---|---|---|---|---|---|---|---|---|")
    for c in codecs:
        s, o = runs[("shaped", c)], runs[("open", c)]
        step, clock = reach(s, target)
        print("| %s | %.0f | %.3f | %.4f | %.4f | %.2f | %.4f | %s | %s |" % (
            c, s["edge"], s["edge"] / bf16, s["median"], o["median"],
            s["median"] / o["median"], s["held"][-1][1],
            step if step is not None else "not reached",
            "%.1f" % clock if clock is not None else "-"))
    if svg_path:
        svg(svg_path, [(c, runs[("shaped", c)]) for c in codecs],
            "held-out loss, %s Mbit/s links (left: by step, right: by "
            "wall-clock)" % mbit)


if sys.argv[1] == "rate":
    rate(sys.argv[2], sys.argv[3])
else:
    report(*sys.argv[2:6], sys.argv[6] if len(sys.argv) > 6 else "")
