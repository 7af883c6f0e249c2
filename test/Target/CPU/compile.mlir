// The source written to a file and compiled into the cache; a second run
// finds the library there. A missing compiler, named by the option or by
// TANDEM_CXX, is an error that names it.
//
// RUN: rm -rf %t.cache %t.cpp
// RUN: tandem-opt %s --tandem-emit-cpu="output=%t.cpp compile=true cache-dir=%t.cache" -o /dev/null 2>&1 | FileCheck %s --check-prefix=FIRST
// RUN: FileCheck %s --check-prefix=SOURCE --input-file=%t.cpp
// RUN: tandem-opt %s --tandem-emit-cpu="output=%t.cpp compile=true cache-dir=%t.cache" -o /dev/null 2>&1 | FileCheck %s --check-prefix=SECOND
// RUN: not tandem-opt %s --tandem-emit-cpu="output=%t.cpp compile=true compiler=/nonexistent/bin/c++ cache-dir=%t.cache" -o /dev/null 2>&1 | FileCheck %s --check-prefix=OPTION
// RUN: env TANDEM_CXX=tandem-no-such-compiler not tandem-opt %s --tandem-emit-cpu="output=%t.cpp compile=true cache-dir=%t.cache" -o /dev/null 2>&1 | FileCheck %s --check-prefix=ENV
// RUN: env TANDEM_CXX=false not tandem-opt %s --tandem-emit-cpu="output=%t.cpp compile=true cache-dir=%t.cache" -o /dev/null 2>&1 | FileCheck %s --check-prefix=FAILS

// FIRST: remark: tandem-emit-cpu: compiled {{.*}}.cache/tandem-{{[0-9a-f]+}}.so{{$}}
// SOURCE: const float t0 = (float)tandem_math::exp((double)t_i0);
// SOURCE-LABEL: extern "C" int tandem_scale(
// SECOND: remark: tandem-emit-cpu: compiled {{.*}}.cache/tandem-{{[0-9a-f]+}}.so (cached)
// OPTION: error: tandem-emit-cpu: C++ compiler '/nonexistent/bin/c++' not found or not executable (set TANDEM_CXX or the compiler option)
// ENV: error: tandem-emit-cpu: C++ compiler 'tandem-no-such-compiler' not found in PATH (set TANDEM_CXX or the compiler option)
// FAILS: error: tandem-emit-cpu: C++ compilation failed (exit status 1)
// FAILS-NEXT: command: {{.*}}false -std=c++17 -O3 -fPIC -shared -fno-fast-math -ffp-contract=off -fno-math-errno -fno-trapping-math -fopenmp -Wl,-z,nodelete -march=native -o
func.func @scale(%x: tensor<8xf32>) -> tensor<8xf32> {
  %y = nn.exp %x : tensor<8xf32>
  return %y : tensor<8xf32>
}
