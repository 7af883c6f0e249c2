"""device_peaks.py: the GPU's own ceilings, measured in the same run as the
benchmarks they judge: a bf16 GEMM of 8192 x 8192 x 8192 (torch.matmul,
f32 accumulation; TFLOP/s = 2 * 8192^3 / time) and a device-to-device copy
of 256 MiB (GB/s = bytes read + bytes written over time, the convention the
kernels' bandwidth is measured in). Each is the median of 20 timed runs
after 5 untimed. Prints two parseable lines:

  peak gemm_bf16_8192 TFLOPS
  peak copy_gbps GBPS
"""

import statistics

import torch


def median_seconds(run, warmup=5, timed=20):
    for _ in range(warmup):
        run()
    torch.cuda.synchronize()
    times = []
    for _ in range(timed):
        start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        start.record()
        run()
        end.record()
        end.synchronize()
        times.append(start.elapsed_time(end) / 1e3)
    return statistics.median(times)


def main():
    n = 8192
    a = torch.randn(n, n, device="cuda", dtype=torch.bfloat16)
    b = torch.randn(n, n, device="cuda", dtype=torch.bfloat16)
    out = torch.empty(n, n, device="cuda", dtype=torch.bfloat16)
    gemm = median_seconds(lambda: torch.matmul(a, b, out=out))
    print("peak gemm_bf16_8192 %.1f" % (2 * n ** 3 / gemm / 1e12))
    size = 256 << 20
    src = torch.empty(size, device="cuda", dtype=torch.uint8)
    dst = torch.empty_like(src)
    copy = median_seconds(lambda: dst.copy_(src))
    print("peak copy_gbps %.1f" % (2 * size / copy / 1e9))


if __name__ == "__main__":
    main()
