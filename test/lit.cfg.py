# -*- Python -*-
# lit configuration for Tandem's FileCheck tests.

import os
import platform

import lit.formats
from lit.llvm import llvm_config
from lit.llvm.subst import ToolSubst

config.name = "TANDEM"
config.test_format = lit.formats.ShTest(not llvm_config.use_lit_shell)
config.suffixes = [".mlir", ".test"]
config.excludes = ["CMakeLists.txt", "README.md", "lit.cfg.py", "lit.site.cfg.py", "Inputs"]
config.test_source_root = os.path.dirname(__file__)
config.test_exec_root = os.path.join(config.tandem_obj_root, "test")

# Tests use FileCheck's variable scoping: names without '$' die at each
# CHECK-LABEL.
config.environment["FILECHECK_OPTS"] = "--enable-var-scope"

config.substitutions.append(("%PATH%", config.environment["PATH"]))
config.substitutions.append(("%tandem_src_root", config.tandem_src_root))
config.substitutions.append(("%python", config.python_executable))
config.substitutions.append(("%tandem_bin", config.tandem_tools_dir))

llvm_config.with_system_environment(["HOME", "INCLUDE", "LIB", "TMP", "TEMP"])
# lit runs tests in a cleaned environment: the kernel choice of OpenBLAS (its
# core type, scripts/test.sh --isa) and the thread counts the caller set must
# reach the tools, or a restricted run would test the unrestricted kernels.
llvm_config.with_system_environment(
    ["OPENBLAS_CORETYPE", "OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS", "XLA_FLAGS"])
llvm_config.use_default_substitutions()

tool_dirs = [config.tandem_tools_dir, config.llvm_tools_dir]
tools = ["tandem-eval", "tandem-opt", "tandem-translate", "tandemc", "tandem-run"]
llvm_config.add_tool_substitutions(
    [t for t in tools if os.path.exists(os.path.join(config.tandem_tools_dir, t))],
    tool_dirs)
llvm_config.with_environment("PATH", config.tandem_tools_dir, append_path=True)
llvm_config.with_environment("PATH", config.llvm_tools_dir, append_path=True)

config.substitutions.append(("%tandem_lib_dir", config.tandem_lib_dir))
# The tests' stand-in for libcuda.so.1 (unittests/Runtime/FakeCudaDriver.cpp).
config.substitutions.append(("%fake_cuda_driver", os.path.join(
    config.tandem_obj_root, "unittests", "libTandemFakeCudaDriver.so")))
# The tests' stand-in for libnccl.so.2 (unittests/Runtime/FakeNccl.cpp).
config.substitutions.append(("%fake_nccl", os.path.join(
    config.tandem_obj_root, "unittests", "libTandemFakeNccl.so")))

# The example pass plugin (examples/plugin), built against the build tree's
# Tandem package: tests that load it say `REQUIRES: plugin`.
tandem_plugin = os.path.join(config.tandem_lib_dir, "TandemExamplePlugin.so")
if os.path.exists(tandem_plugin):
    config.available_features.add("plugin")
    config.substitutions.append(("%tandem_plugin", tandem_plugin))


# x86-64 CPUs without AVX-512: a library compiled for one with it must be
# refused (test/Runtime/cpu-arch.test).
def _cpu_flags():
    try:
        with open("/proc/cpuinfo") as cpuinfo:
            for line in cpuinfo:
                if line.startswith("flags"):
                    return set(line.split(":", 1)[1].split())
    except OSError:
        pass
    return None

_flags = _cpu_flags()
if platform.machine() == "x86_64" and _flags is not None:
    config.available_features.add("x86_64")
    if "avx512f" not in _flags:
        config.available_features.add("no-avx512")

# A sanitizer build (scripts/sanitize.sh passes --param sanitize=1): ASan's
# shadow memory and red zones inflate the resident size, so a test that
# bounds measured memory by the planned buffers skips that check.
if lit_config.params.get("sanitize"):
    config.available_features.add("sanitize")

# nvcc (the CUDA toolkit): tests that compile emitted CUDA for the GPU say
# `REQUIRES: nvcc`. scripts/test.sh sets TANDEM_REQUIRE_NVCC=1 where the
# toolkit is installed, so those tests cannot turn unsupported unnoticed.
import shutil

_nvcc = os.environ.get("TANDEM_NVCC") or shutil.which("nvcc")
if not _nvcc and os.access("/usr/local/cuda/bin/nvcc", os.X_OK):
    _nvcc = "/usr/local/cuda/bin/nvcc"
if _nvcc:
    config.available_features.add("nvcc")
    config.substitutions.append(("%nvcc", _nvcc))
elif os.environ.get("TANDEM_REQUIRE_NVCC") == "1":
    lit_config.fatal("TANDEM_REQUIRE_NVCC=1 but no nvcc found (TANDEM_NVCC, "
                     "PATH, /usr/local/cuda/bin)")
llvm_config.with_system_environment(["TANDEM_NVCC"])

# Hosts made of network namespaces (scripts/hosts.sh): root and iproute2's
# ip and tc. Development machines and CI run as root, so there a test that
# needs them must run: `REQUIRES: netns`.
if (hasattr(os, "geteuid") and os.geteuid() == 0 and shutil.which("ip")
        and shutil.which("tc")):
    config.available_features.add("netns")
