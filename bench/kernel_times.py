"""kernel_times.py NCU_CSV [RANK.cu ...]: where a run's GPU time goes, by
kernel.

NCU_CSV is Nsight Compute's raw page of a run profiled for kernel
durations only:

  ncu --metrics gpu__time_duration.sum --csv --page raw --log-file X.csv \\
      tandem-run DIR --transport inproc --device cuda ...

Prints the kernels by total time (all launches of a kernel together): the
share of the run's kernel time, the total, the launches and the kernel.
Tandem's kernels are named by a hash of their text (tk_k...); with the
rank's generated sources given, each is shown with the title comment its
text begins with (the op it computes, e.g. "nn.attention_grad: dk, a key
row per thread"). Other kernels (cuBLASLt's GEMMs, copies) keep their own
names, shortened.

Profiled with the DRAM traffic too (--metrics
gpu__time_duration.sum,dram__bytes_read.sum,dram__bytes_write.sum), each
kernel's achieved bandwidth follows (bytes read and written over its time,
GB/s), and with --copy-gbps (device_peaks.py's device-to-device copy,
measured in the same run) its fraction of that copy. A last line gives the
GEMMs' share of the kernel time: cuBLASLt's kernels (names with gemm,
xmma, cutlass or nvjet).
"""

import argparse
import collections
import csv
import re
import sys

UNITS = {"ns": 1e-3, "us": 1.0, "ms": 1e3, "s": 1e6, "nsecond": 1e-3, "usecond": 1.0, "msecond": 1e3, "second": 1e6}
# ncu's byte units are decimal (1 Gbyte = 10^9 bytes).
BYTES = {"byte": 1, "Kbyte": 1e3, "Mbyte": 1e6, "Gbyte": 1e9, "Tbyte": 1e12, "KB": 1e3, "MB": 1e6, "GB": 1e9, "TB": 1e12}
# cuBLASLt's GEMMs and its helper kernels (split-K reductions, epilogues).
GEMM = re.compile(r"gemm|xmma|cutlass|nvjet|cublas", re.IGNORECASE)


def kernel_titles(sources):
    """tk_k<hash> -> the title comment on the line after its definition
    (TK_KERNEL, or TK_ATTENTION_KERNEL for the attention kernels)."""
    titles = {}
    for path in sources:
        lines = open(path).read().splitlines()
        for at, line in enumerate(lines[:-1]):
            found = re.match(r"TK_[A-Z_]*KERNEL (tk_k[0-9a-f]+)\(", line)
            following = lines[at + 1].strip()
            if found and following.startswith("//"):
                titles[found.group(1)] = following[2:].strip()
    return titles


def read_launches(path):
    """(kernel name, microseconds, DRAM bytes or None) per launch of the
    raw page."""
    text = open(path).read()
    # ncu writes its own messages (==PROF==) before the table.
    rows = list(csv.reader(line for line in text.splitlines() if line.startswith('"')))
    if len(rows) < 2:
        sys.exit("kernel_times.py: no kernel table in %s" % path)
    header, units = rows[0], rows[1]
    try:
        name_at = header.index("Kernel Name")
        time_at = header.index("gpu__time_duration.sum")
    except ValueError as error:
        sys.exit("kernel_times.py: %s: %s" % (path, error))
    scale = UNITS.get(units[time_at])
    if scale is None:
        sys.exit("kernel_times.py: unknown time unit '%s'" % units[time_at])
    traffic = [at for at, name in enumerate(header) if name in ("dram__bytes_read.sum", "dram__bytes_write.sum")]
    for at in traffic:
        if units[at] not in BYTES:
            sys.exit("kernel_times.py: unknown byte unit '%s'" % units[at])

    def number(text):
        """A cell's value, or None for one ncu could not measure (n/a)."""
        try:
            return float(text.replace(",", ""))
        except ValueError:
            return None

    launches = []
    for row in rows[2:]:
        if len(row) > max([name_at, time_at] + traffic) and number(row[time_at]) is not None:
            counts = [number(row[at]) for at in traffic]
            moved = None
            if len(traffic) == 2 and None not in counts:
                moved = sum(c * BYTES[units[at]] for c, at in zip(counts, traffic))
            launches.append((row[name_at], number(row[time_at]) * scale, moved))
    return launches


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("csv")
    parser.add_argument("sources", nargs="*")
    parser.add_argument("--top", type=int, default=25)
    parser.add_argument("--copy-gbps", type=float)
    args = parser.parse_args()
    titles = kernel_titles(args.sources)
    total = collections.Counter()
    calls = collections.Counter()
    moved = collections.Counter()
    has_bytes = True
    for name, micros, traffic in read_launches(args.csv):
        found = re.search(r"tk_k[0-9a-f]+", name)
        key = found.group(0) if found else name
        total[key] += micros
        calls[key] += 1
        if traffic is None:
            has_bytes = False
        else:
            moved[key] += traffic
    grand = sum(total.values())
    if not grand:
        sys.exit("kernel_times.py: no kernel time in %s" % args.csv)
    print("%d launches, %.3f ms of kernel time" % (sum(calls.values()), grand / 1e3))
    for key, micros in total.most_common(args.top):
        label = "%s %s" % (key, titles[key]) if key in titles else key
        rate = ""
        if has_bytes:
            gbps = moved[key] / micros / 1e3 if micros else 0.0
            rate = "  %7.1f GB/s" % gbps
            if args.copy_gbps:
                rate += " %4.0f%% of copy" % (100 * gbps / args.copy_gbps)
        print("%5.1f%%  %10.1f us  %5d%s  %s" % (100 * micros / grand, micros, calls[key], rate, label[:120]))
    gemm = sum(micros for key, micros in total.items() if not key.startswith("tk_k") and GEMM.search(key))
    gemm_calls = sum(calls[key] for key in total if not key.startswith("tk_k") and GEMM.search(key))
    print("GEMMs: %.1f%% of the kernel time (%.3f ms, %d launches)" % (100 * gemm / grand, gemm / 1e3, gemm_calls))


if __name__ == "__main__":
    main()
