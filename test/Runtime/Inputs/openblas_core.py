"""openblas_core.py: prints the kernels OpenBLAS (libopenblas.so.0, the
library the generated code links) runs with under this environment; exits 1
when OPENBLAS_CORETYPE is set and OpenBLAS runs other kernels."""
import ctypes
import os
import sys

openblas = ctypes.CDLL("libopenblas.so.0")
openblas.openblas_get_corename.restype = ctypes.c_char_p
core = openblas.openblas_get_corename().decode()
wanted = os.environ.get("OPENBLAS_CORETYPE")
print("openblas core %s (OPENBLAS_CORETYPE %s)" % (core, wanted or "unset"))
if wanted and wanted.lower() != core.lower():
    print("error: OPENBLAS_CORETYPE asks for %s" % wanted)
    sys.exit(1)
