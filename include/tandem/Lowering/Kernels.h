//===- Kernels.h - kernels formed in IR before emission ---------*- C++ -*-===//
//
// What fuses is decided once, target-neutrally, and recorded in the IR
// before any emitter runs (as CIRCT's PrepareForEmission does before
// ExportVerilog): elementwise ops of one iteration shape form a kernel; a
// reduction takes the kernel producing its input as its prologue and the
// elementwise consumers of its result as its epilogue; a kernel that is the
// only reader of a matmul becomes its epilogue, run over the GEMM's output,
// and a target may take a kernel reading a row op's result (a norm
// gradient's dx) into that op's row kernel, or a kernel computing a row
// op's rows (a residual add before a norm) into it;
// an optimizer update that a flat elementwise kernel computes may be
// written over the parameter it replaces. Op traits (nn::ElementwiseKernel,
// nn::ReductionKernel) say what may fuse; a target's FusionPolicy says
// which fusions it wants. docs/targets.md, "Kernels".
//
// Recorded form: `nn.kernel = K : i64` on every member of kernel K,
// `nn.kernel_gemm = K : i64` on the matmul whose epilogue K is,
// `nn.kernel_row = K : i64` on the row op whose epilogue K is,
// `nn.kernel_row_input = K : i64` on the row op whose rows K computes, and
// `nn.in_place = array<i64: r0, a0, r1, a1, ...>` on a fragment whose
// result r may share the buffer of argument a. Emitters read it back with
// readKernels, which checks it, and print; they never change the IR.
//
//===----------------------------------------------------------------------===//

#ifndef TANDEM_LOWERING_KERNELS_H
#define TANDEM_LOWERING_KERNELS_H

#include "mlir/IR/Block.h"
#include "mlir/IR/Operation.h"
#include "llvm/ADT/SmallVector.h"

#include <functional>
#include <optional>
#include <utility>
#include <vector>

namespace tandem::lowering {

/// One kernel: elementwise ops with one iteration shape, optionally around
/// one reduction, optionally the epilogue of one matmul.
struct Kernel {
  /// In program order.
  llvm::SmallVector<mlir::Operation *> members;
  /// The reduction member, if any: the members before it (its prologue)
  /// iterate over its input's shape, the members after it (its epilogue)
  /// over its result's shape.
  mlir::Operation *reduction = nullptr;
  /// A matmul whose result only this kernel reads.
  mlir::Operation *gemm = nullptr;
  /// A row op (neither elementwise nor a reduction) whose first result only
  /// this kernel reads: the kernel runs inside the op's row kernel, at the
  /// op, so everything else it reads is defined before the op.
  mlir::Operation *row = nullptr;
  /// A row op whose first operand is this kernel's last value, which only
  /// ops after the row op read besides: the kernel runs inside the op's row
  /// kernel, at the op, computing each element where the op reads it (and
  /// storing it there when others read it).
  mlir::Operation *rowInput = nullptr;
  /// The iteration shape: the members' result shape, or for a kernel with a
  /// reduction its result's shape.
  llvm::SmallVector<int64_t> shape;
};

/// Which fusions a target's kernels may make.
struct FusionPolicy {
  /// Fold elementwise producers and consumers into reductions.
  bool fuseReductions = true;
  /// Run elementwise consumers of a matmul over its output after the GEMM.
  bool fuseGemmEpilogues = true;
  /// Unite the elementwise kernels an op reads into one kernel.
  bool mergeGroups = true;
  /// When set, a kernel becomes a matmul's epilogue only when this accepts
  /// it (a target whose GEMM library runs a fixed set of epilogues).
  std::function<bool(mlir::Operation *matmul, const Kernel &kernel)>
      acceptsGemmEpilogue;
  /// When set, a kernel becomes a row op's epilogue when this accepts it;
  /// unset, no kernel does (a target with no row kernels).
  std::function<bool(mlir::Operation *row, const Kernel &kernel)>
      acceptsRowEpilogue;
  /// When set, a kernel becomes the computation of a row op's rows (its
  /// first operand) when this accepts it; unset, no kernel does.
  std::function<bool(mlir::Operation *row, const Kernel &kernel)>
      acceptsRowPrologue;
  /// Without fuseReductions, an elementwise op still joins a reduction's
  /// kernel (as its epilogue) when this is set and accepts it (a target
  /// whose reductions take a fixed set of epilogues).
  std::function<bool(const Kernel &kernel, mlir::Operation *op)>
      acceptsReductionEpilogue;
};

struct KernelPlan {
  /// By id; a kernel merged into another is left empty.
  std::vector<Kernel> kernels;
  /// (result, argument) pairs of an mpmd.fragment: the result updates the
  /// parameter the argument binds, one flat elementwise kernel computes it
  /// and is the argument's only reader, so both may be one buffer.
  std::vector<std::pair<unsigned, unsigned>> inPlace;
};

/// Forms the kernels of `function` (a func.func or mpmd.fragment with a
/// single-block body): greedily, in program order. Changes nothing.
KernelPlan formKernels(mlir::Operation *function, const FusionPolicy &policy);

/// Writes `plan` into `function` (replacing what was recorded before).
void recordKernels(mlir::Operation *function, const KernelPlan &plan);

/// The plan recorded in `function`, or nullopt when it holds none. A
/// recorded plan that formKernels could not have made (a member that does
/// not fuse, shapes that differ, a value read outside its kernel before the
/// kernel runs, an in-place pair that is not safe) is an error at the op.
mlir::FailureOr<std::optional<KernelPlan>>
readKernels(mlir::Operation *function);

/// Records that `function` adds the results `results` (indices, sorted)
/// into their buffers when its call has TANDEM_FRAGMENT_ACCUMULATE set
/// (FragmentABI.h): the rank lowering's choice of the microbatch sums the
/// fragment accumulates itself, which the target's code follows.
void recordAccumulated(mlir::Operation *function,
                       llvm::ArrayRef<int64_t> results);

/// The results recorded by recordAccumulated (none when there is no
/// record); an index that is no result, or out of order, is an error.
mlir::FailureOr<llvm::SmallVector<int64_t>>
readAccumulated(mlir::Operation *function);

} // namespace tandem::lowering

#endif // TANDEM_LOWERING_KERNELS_H
