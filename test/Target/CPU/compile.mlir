// tandem-translate writes the CPU target's source (--tandem-to-source) and
// the library compiled from it (--tandem-to-library), through the compile
// cache ($TANDEM_CPU_CACHE): a second run finds the library there. The
// library's bytes go to -o and export the entry point. A missing or failing
// compiler ($TANDEM_CXX), a bad --cpu-arch and a target that writes no code
// are errors that name them.
//
// RUN: rm -rf %t.cache %t.cpp %t.so
// RUN: tandem-translate %s --tandem-to-source -o %t.cpp
// RUN: FileCheck %s --check-prefix=SOURCE --input-file=%t.cpp
// RUN: env TANDEM_CPU_CACHE=%t.cache tandem-translate %s --tandem-to-library -o %t.so 2>&1 | FileCheck %s --check-prefix=FIRST
// RUN: llvm-nm -D --defined-only %t.so | FileCheck %s --check-prefix=SYMBOLS
// RUN: env TANDEM_CPU_CACHE=%t.cache tandem-translate %s --tandem-to-library --target cpu -o %t.so 2>&1 | FileCheck %s --check-prefix=SECOND
// RUN: env TANDEM_CPU_CACHE=%t.cache not tandem-translate %s --tandem-to-library --cpu-arch=-O0 -o %t.so 2>&1 | FileCheck %s --check-prefix=ARCH
// RUN: env TANDEM_CPU_CACHE=%t.cache TANDEM_CXX=/nonexistent/bin/c++ not tandem-translate %s --tandem-to-library -o %t.so 2>&1 | FileCheck %s --check-prefix=ABSENT
// RUN: env TANDEM_CPU_CACHE=%t.cache TANDEM_CXX=tandem-no-such-compiler not tandem-translate %s --tandem-to-library -o %t.so 2>&1 | FileCheck %s --check-prefix=NOTINPATH
// RUN: env TANDEM_CPU_CACHE=%t.cache TANDEM_CXX=false not tandem-translate %s --tandem-to-library -o %t.so 2>&1 | FileCheck %s --check-prefix=FAILS
// RUN: not tandem-translate %s --tandem-to-source --target none 2>&1 | FileCheck %s --check-prefix=NONE
// RUN: not tandem-translate %s --tandem-to-source --target gpu 2>&1 | FileCheck %s --check-prefix=UNKNOWN

// SOURCE: const float t0 = (float)tandem_math::exp((double)t_i0);
// SOURCE-LABEL: extern "C" int tandem_scale(
// FIRST: remark: compiled {{.*}}.cache/tandem-{{[0-9a-f]+}}.so{{$}}
// SYMBOLS: T tandem_scale{{$}}
// SECOND: remark: compiled {{.*}}.cache/tandem-{{[0-9a-f]+}}.so (cached)
// ARCH: error: invalid CPU architecture '-O0' (--cpu-arch or TANDEM_CPU_ARCH: a -march= value such as native or x86-64-v3)
// ABSENT: error: C++ compiler '/nonexistent/bin/c++' not found or not executable (set TANDEM_CXX)
// NOTINPATH: error: C++ compiler 'tandem-no-such-compiler' not found in PATH (set TANDEM_CXX)
// FAILS: error: C++ compilation failed (exit status 1)
// FAILS-NEXT: command: {{.*}}false -std=c++17 -O3 -fPIC -shared -fno-fast-math -ffp-contract=off -fno-math-errno -fno-trapping-math -fopenmp -Wl,-z,nodelete -march=native -o
// NONE: error: --target none writes no code: give one of cpu, cuda
// UNKNOWN: error: --target must be none or cpu, cuda, found 'gpu'
func.func @scale(%x: tensor<8xf32>) -> tensor<8xf32> {
  %y = nn.exp %x : tensor<8xf32>
  return %y : tensor<8xf32>
}
