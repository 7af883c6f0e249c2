"""check-isa.py MODE: asserts that scripts/test.sh's ISA restriction for MODE
(avx2 or avx512) took effect in the two libraries whose kernels differ by
CPU, before any suite runs under it (docs/testing.md, "ISA modes").

- OpenBLAS (the library the generated code links, libopenblas.so.0, a
  DYNAMIC_ARCH build that picks its kernels when it loads): its
  openblas_get_corename() must name the core type OPENBLAS_CORETYPE asks for.
  A misspelt core type is silently ignored, so the name is the proof.
- XLA (JAX's CPU compiler): with --xla_cpu_max_isa=AVX2, a jitted reduction
  must compile without XLA's "Unknown CPU ISA" warning (for a bad value XLA
  warns and runs unrestricted), the dumped debug options must carry the
  value, and, on a CPU with AVX-512, the dumped object code must not touch a
  zmm register.

Prints one line per check; exits 1 on the first that fails.
"""

import ctypes
import os
import pathlib
import subprocess
import sys
import tempfile

MODE = sys.argv[1]
CORE = os.environ.get("OPENBLAS_CORETYPE", "")
XLA_FLAGS = os.environ.get("XLA_FLAGS", "")


def fail(message):
    print(f"check-isa: {MODE}: {message}")
    sys.exit(1)


def cpu_has_avx512():
    with open("/proc/cpuinfo") as cpuinfo:
        for line in cpuinfo:
            if line.startswith("flags"):
                return "avx512f" in line.split()
    return False


openblas = ctypes.CDLL("libopenblas.so.0")
openblas.openblas_get_corename.restype = ctypes.c_char_p
openblas.openblas_get_config.restype = ctypes.c_char_p
core = openblas.openblas_get_corename().decode()
if not CORE:
    fail("OPENBLAS_CORETYPE is not set")
if core.lower() != CORE.lower():
    fail(f"OpenBLAS runs its {core} kernels, not the {CORE} kernels OPENBLAS_CORETYPE asks for")
print(f"check-isa: {MODE}: OpenBLAS core {core} ({openblas.openblas_get_config().decode()})")

restricted = "--xla_cpu_max_isa=AVX2" in XLA_FLAGS.split()
if MODE == "avx2" and not restricted:
    fail(f"XLA_FLAGS ({XLA_FLAGS!r}) does not restrict XLA to AVX2")
with tempfile.TemporaryDirectory() as dump:
    program = (
        "import jax, jax.numpy as jnp\n"
        "x = jnp.arange(8 * 16 * 256, dtype=jnp.float32).reshape(8, 16, 256)\n"
        "print(float(jax.jit(lambda a: jax.nn.logsumexp(a * 1e-3, axis=-1).mean())(x)))\n"
    )
    env = dict(os.environ, XLA_FLAGS=f"{XLA_FLAGS} --xla_dump_to={dump}".strip(), JAX_PLATFORMS="cpu")
    done = subprocess.run([sys.executable, "-c", program], env=env, capture_output=True, text=True)
    if done.returncode != 0:
        fail(f"the JAX probe failed:\n{done.stderr}")
    if "Unknown CPU ISA" in done.stderr:
        fail(f"XLA ignored its ISA flag:\n{done.stderr}")
    options = "".join(p.read_text() for p in pathlib.Path(dump).glob("*.debug_options"))
    if not options:
        fail("XLA dumped no debug options")
    if restricted and 'xla_cpu_max_isa: "AVX2"' not in options:
        fail("XLA's debug options do not carry xla_cpu_max_isa: AVX2")
    objects = sorted(pathlib.Path(dump).glob("*.o"))
    if not objects:
        fail("XLA dumped no object code")
    if restricted and cpu_has_avx512():
        for obj in objects:
            text = subprocess.run(["objdump", "-d", str(obj)], capture_output=True, text=True).stdout
            if "%zmm" in text:
                fail(f"XLA's code uses zmm registers under --xla_cpu_max_isa=AVX2 ({obj.name})")
        print(f"check-isa: {MODE}: XLA restricted to AVX2 ({len(objects)} objects, no zmm register)")
    elif restricted:
        print(f"check-isa: {MODE}: XLA restricted to AVX2 (flag accepted; this CPU has no AVX-512)")
    else:
        print(f"check-isa: {MODE}: XLA unrestricted ({len(objects)} objects)")
