"""The benchmark scripts' arithmetic (bench/), on inputs written here: the
GPU check runs them on a GPU's figures, where a wrong formula would pass
unnoticed."""

import json
import pathlib
import subprocess
import sys

BENCH = pathlib.Path(__file__).resolve().parents[2] / "bench"

NCU_CSV = """==PROF== Connected to process 1
"ID","Kernel Name","dram__bytes_read.sum","dram__bytes_write.sum","gpu__time_duration.sum"
"","","Mbyte","Kbyte","usecond"
"0","tk_k0123abcd(int)","64","32000","40"
"1","nvjet_hsh_128x256_64x4_1x2_h_bz_coopA_NTN","8","8000","100"
"2","tk_k0123abcd(int)","64","32,000","40"
"3","void cutlass::Kernel2<cutlass_80_tensorop>(Params)","1","1000","20"
"""


def run(*args):
    return subprocess.run([sys.executable, *map(str, args)], check=True, capture_output=True, text=True).stdout


def test_kernel_times_bandwidth_and_gemm_share(tmp_path):
    (tmp_path / "run.csv").write_text(NCU_CSV)
    source = tmp_path / "rank0.cu"
    source.write_text("TK_KERNEL tk_k0123abcd(int n) {\n  // nn.gelu: a thread per element\n}\n")
    lines = run(BENCH / "kernel_times.py", tmp_path / "run.csv", source, "--copy-gbps", "4000").splitlines()
    assert lines[0] == "4 launches, 0.200 ms of kernel time"
    # 100 us of a 16 MB GEMM: 160 GB/s, 4% of the copy's 4000.
    assert lines[1].split() == ["50.0%", "100.0", "us", "1", "160.0", "GB/s", "4%", "of", "copy",
                                "nvjet_hsh_128x256_64x4_1x2_h_bz_coopA_NTN"]
    # Two launches of 96 MB in 40 us each: 2400 GB/s, titled by its source.
    assert lines[2].split()[:9] == ["40.0%", "80.0", "us", "2", "2400.0", "GB/s", "60%", "of", "copy"]
    assert lines[2].endswith("tk_k0123abcd nn.gelu: a thread per element")
    assert lines[-1] == "GEMMs: 60.0% of the kernel time (0.120 ms, 2 launches)"


def test_kernel_titles_of_attention_kernels(tmp_path):
    """The attention kernels are declared with TK_ATTENTION_KERNEL
    (AttentionPrelude.h), the others with TK_KERNEL."""
    sys.path.insert(0, str(BENCH))
    import kernel_times

    source = tmp_path / "rank0.cu"
    source.write_text("TK_KERNEL tk_k01(int n) {\n  // nn.gelu: a thread per element\n}\n"
                      "TK_ATTENTION_KERNEL tk_k89ab(int n) {\n  // nn.attention: a query row per thread\n}\n")
    assert kernel_times.kernel_titles([source]) == {"tk_k01": "nn.gelu: a thread per element",
                                                    "tk_k89ab": "nn.attention: a query row per thread"}


def test_kernel_times_without_traffic(tmp_path):
    csv = "\n".join(line.replace(',"dram__bytes_read.sum","dram__bytes_write.sum"', "")
                    for line in NCU_CSV.splitlines())
    rows = ['"ID","Kernel Name","gpu__time_duration.sum"', '"","","nsecond"', '"0","tk_k1(int)","2,000"']
    (tmp_path / "run.csv").write_text(csv.splitlines()[0] + "\n" + "\n".join(rows) + "\n")
    lines = run(BENCH / "kernel_times.py", tmp_path / "run.csv").splitlines()
    assert lines == ["1 launches, 0.002 ms of kernel time", "100.0%         2.0 us      1  tk_k1",
                     "GEMMs: 0.0% of the kernel time (0.000 ms, 0 launches)"]


def test_kernel_times_unmeasured_cells_and_cublas_helpers(tmp_path):
    """A launch whose time ncu could not measure (n/a) is left out, one
    whose bytes it could not measure drops the bandwidth table instead of
    failing, and cuBLASLt's helper kernels (split-K reduction) count as
    GEMM time."""
    rows = ['"ID","Kernel Name","dram__bytes_read.sum","dram__bytes_write.sum","gpu__time_duration.sum"',
            '"","","Tbyte","byte","usecond"',
            '"0","tk_k1(int)","n/a","n/a","10"',
            '"1","cublasLt::splitKreduce_kernel<float>(Params)","0","0","30"',
            '"2","tk_k1(int)","0","0","n/a"']
    (tmp_path / "run.csv").write_text("\n".join(rows) + "\n")
    lines = run(BENCH / "kernel_times.py", tmp_path / "run.csv").splitlines()
    assert lines[0] == "2 launches, 0.040 ms of kernel time"
    assert "GB/s" not in "\n".join(lines)
    assert lines[-1] == "GEMMs: 75.0% of the kernel time (0.030 ms, 1 launches)"


def test_mfu_is_llm_c_formula(tmp_path):
    # Two ranks sharing a tied embedding, counted once; the optimizer's
    # moments and loss scale are not parameters of the model.
    ranks = [{"parameters": [{"name": "wte", "shape": [50304, 768]}, {"name": "h.0.w", "shape": [768, 2304]},
                             {"name": "opt.m.h.0.w", "shape": [768, 2304]}]},
             {"parameters": [{"name": "wte", "shape": [50304, 768]}, {"name": "h.1.w", "shape": [768, 768]},
                             {"name": "opt.loss_scale", "shape": []}]}]
    paths = []
    for k, rank in enumerate(ranks):
        paths.append(tmp_path / ("rank%d.json" % k))
        paths[-1].write_text(json.dumps(rank))
    n = 50304 * 768 + 768 * 2304 + 768 * 768
    per_token = 6 * n + 6 * 12 * 768 * 1024
    out = run(BENCH / "mfu.py", "--manifest", *paths, "--layers", "12", "--width", "768", "--seq", "1024",
              "--tokens-per-s", "100000", "--gemm-tflops", "700").split()
    fields = dict(zip(out[1::2], out[2::2]))
    assert out[0] == "mfu"
    assert int(fields["params"]) == n
    assert int(fields["flops_per_token"]) == per_token
    achieved = 1e5 * per_token / 1e12
    assert fields["tflops"] == "%.1f" % achieved
    assert fields["mfu"] == "%.4f" % (achieved / 989)
    assert fields["of_gemm"] == "%.4f" % (achieved / 700)
