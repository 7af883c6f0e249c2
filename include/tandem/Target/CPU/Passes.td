//===- Passes.td - CPU target passes ---------------------------*- tablegen -*-===//

#ifndef TANDEM_TARGET_CPU_PASSES_TD
#define TANDEM_TARGET_CPU_PASSES_TD

include "mlir/Pass/PassBase.td"

def TandemEmitCPU : Pass<"tandem-emit-cpu", "::mlir::ModuleOp"> {
  let summary = "Writes C++ for every function and fragment (CPU target)";
  let description = [{
    Emits one C++ translation unit holding an `extern "C"` entry point for
    every `func.func` with a body and every `mpmd.fragment` with a body in
    the module (docs/cpu-backend.md describes the ABI). Every nn op becomes
    a loop nest, matmuls call `cblas_sgemm`, and chains of elementwise ops
    are fused into one loop nest; identical fused groups are written once.
    `nn.attention` must be decomposed first (`nn-decompose-attention`).
    Element types other than f32, f64, i32 and i64 are reported as errors.

    With `compile`, the source is also compiled into a shared library in
    the compile cache (`cache-dir`, else `$TANDEM_CPU_CACHE`, else the
    system temporary directory); a failing or missing compiler is an error
    that carries the compiler's output. The module is left unchanged.
  }];
  let options = [
    Option<"output", "output", "std::string", /*default=*/"\"-\"",
           "Where to write the C++ source ('-': stdout)">,
    Option<"compile", "compile", "bool", /*default=*/"false",
           "Also compile the source into a shared library">,
    Option<"compiler", "compiler", "std::string", /*default=*/"\"\"",
           "The C++ compiler (default: $TANDEM_CXX, else c++)">,
    Option<"cpuArch", "cpu-arch", "std::string", /*default=*/"\"\"",
           "The CPU to compile for, as -march= (default: $TANDEM_CPU_ARCH, "
           "else native)">,
    Option<"cacheDir", "cache-dir", "std::string", /*default=*/"\"\"",
           "The compile cache directory">,
  ];
}

def TandemLowerCPU : Pass<"tandem-lower-cpu", "::mlir::ModuleOp"> {
  let summary = "Writes each rank's C++, shared library and manifest";
  let description = [{
    Lowers a scheduled, lowered and verified `mpmd.program` (after
    `mpmd-schedule`, `mpmd-lower-transfers` and `mpmd-verify`), either whole
    (one output per rank of its grid) or in the per-rank form of
    `mpmd-split-programs`, to `output-dir/rank<N>.cpp` (the fragments the
    rank runs, through the C++ emitter), `rank<N>.so` (compiled through the
    compile cache) and `rank<N>.json`, a manifest in the format
    `tandem-rank-v2` (docs/manifest.md) that a runtime without MLIR can execute: the grid, the
    parameters the rank binds with their initializers, the step inputs, each
    fragment's entry point and argument and result bindings, and the action
    list (docs/cpu-backend.md, "Per-rank libraries and manifests").

    An unscheduled or unlowered program, or a run reading a slot its rank
    neither produces nor receives, is an error; so are ops and types the
    emitter does not support, at the op. The module is left unchanged.
  }];
  let options = [
    Option<"outputDir", "output-dir", "std::string", /*default=*/"\"\"",
           "Directory for rank<N>.cpp, rank<N>.so and rank<N>.json">,
    Option<"compiler", "compiler", "std::string", /*default=*/"\"\"",
           "The C++ compiler (default: $TANDEM_CXX, else c++)">,
    Option<"cpuArch", "cpu-arch", "std::string", /*default=*/"\"\"",
           "The CPU to compile for, as -march= (default: $TANDEM_CPU_ARCH, "
           "else native)">,
    Option<"cacheDir", "cache-dir", "std::string", /*default=*/"\"\"",
           "The compile cache directory">,
  ];
}

#endif // TANDEM_TARGET_CPU_PASSES_TD
