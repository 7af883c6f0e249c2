//===- Passes.td - target-neutral lowering passes ------------*- tablegen -*-===//

#ifndef TANDEM_LOWERING_PASSES_TD
#define TANDEM_LOWERING_PASSES_TD

include "mlir/Pass/PassBase.td"

def TandemFormKernels : Pass<"tandem-form-kernels", "::mlir::ModuleOp"> {
  let summary = "Decides the kernels and records them in the IR";
  let description = [{
    Forms the kernels of every `func.func` and `mpmd.fragment` with a
    single-block body, greedily in program order (docs/targets.md,
    "Kernels"): elementwise ops (trait `ElementwiseKernel`) of one iteration
    shape form a kernel; a reduction (trait `ReductionKernel`) takes the
    unsealed kernel producing its input as its prologue and later
    elementwise consumers of its result's shape as its epilogue; an op
    reading two unsealed kernels of its shape unites them; a kernel that is
    a matmul's only reader becomes its epilogue; a fragment's update that a
    flat elementwise kernel computes, reading the parameter's argument only
    there, may be written over that argument.

    Records `nn.kernel = K : i64` on every member of kernel K,
    `nn.kernel_gemm = K : i64` on the matmul whose epilogue K is, and
    `nn.in_place = array<i64: result, argument, ...>` on the fragment;
    emitters read and check them, and never change the IR. Running it again
    replaces what it recorded. The rank lowering runs the same formation
    with the target's fusion policy before emitting each rank; `target=`
    chooses that policy here (a CUDA GEMM, for instance, takes only the
    epilogues cuBLASLt runs).
  }];
  let options = [
    Option<"fuseReductions", "fuse-reductions", "bool", "true",
           "Fold elementwise producers and consumers into reductions">,
    Option<"fuseGemmEpilogues", "fuse-gemm-epilogues", "bool", "true",
           "Run a matmul's elementwise consumers over its output">,
    Option<"mergeGroups", "merge-groups", "bool", "true",
           "Unite the kernels an elementwise op reads into one">,
    Option<"target", "target", "std::string", "\"\"",
           "Form kernels under this target's fusion policy (cpu, cuda) "
           "instead of the flags above">,
  ];
}

#endif // TANDEM_LOWERING_PASSES_TD
