//===- KernelGroups.cpp - the kernels the CPU emitter prints --------------===//
//
// The CPU emitter does not decide what fuses: it prints the kernels
// recorded in the IR (tandem/Lowering/Kernels.h, tandem-form-kernels; the
// rank lowering records them with the target's fusion policy) as its
// groups. A function without recorded kernels (emitCpp called directly, as
// the unit tests do) gets the same formation under EmitOptions, computed
// without touching the IR. docs/cpu-backend.md ("Fusion") and
// docs/targets.md ("Kernels") state the rules.
//
//===----------------------------------------------------------------------===//

#include "FunctionEmitter.h"

#include "tandem/Lowering/Kernels.h"

#include "llvm/ADT/STLExtras.h"

using namespace mlir;
namespace nn = tandem::nn;

namespace tandem::cpu::detail {

/// Where a value's data comes into existence: parameters and constants exist
/// from the start, views when their source does.
unsigned FunctionEmitter::definedAt(Value value) {
  Operation *def = value.getDefiningOp();
  if (!def || isa<nn::ParamOp, nn::ConstantOp>(def))
    return 0;
  if (isa<nn::ReshapeOp, nn::StageEndOp>(def))
    return definedAt(def->getOperand(cast<OpResult>(value).getResultNumber()));
  return position[def];
}

LogicalResult FunctionEmitter::loadKernels() {
  unsigned index = 0;
  for (Operation &op : body->getOperations())
    position[&op] = ++index; // Arguments are at position 0.
  FailureOr<std::optional<lowering::KernelPlan>> recorded =
      lowering::readKernels(function);
  if (failed(recorded))
    return failure();
  lowering::KernelPlan plan;
  if (*recorded) {
    plan = std::move(**recorded);
  } else {
    lowering::FusionPolicy policy;
    policy.fuseReductions = options.fuseReductions;
    policy.fuseGemmEpilogues = options.fuseGemmEpilogues;
    policy.mergeGroups = options.mergeGroups;
    plan = lowering::formKernels(function, policy);
  }
  for (auto [id, kernel] : llvm::enumerate(plan.kernels)) {
    if (kernel.row)
      return kernel.row->emitError(
          "the CPU emitter has no row kernels to run a row epilogue "
          "('nn.kernel_row'): form the kernels for the cpu target");
    if (kernel.rowInput)
      return kernel.rowInput->emitError(
          "the CPU emitter has no row kernels to compute a row op's rows "
          "('nn.kernel_row_input'): form the kernels for the cpu target");
    Group group;
    group.members = kernel.members;
    group.shape = kernel.shape;
    group.first = kernel.members.empty() ? 0 : position[kernel.members.front()];
    group.reduction = kernel.reduction;
    group.gemm = kernel.gemm;
    for (Operation *member : kernel.members)
      groupOf[member] = static_cast<int>(id);
    groups.push_back(std::move(group));
  }
  // In-place updates: the kernel computing the result reads the argument's
  // element i before writing the result's element i, so its pointers lose
  // `__restrict` (its `omp simd` loop stays vectorized). A value returned
  // more than once is computed into scratch and copied into every result
  // at the end, after the kernel has read the argument: no aliasing inside
  // the loop.
  Operation *terminator = body->getTerminator();
  for (auto [result, argument] : plan.inPlace) {
    Value value = terminator->getOperand(result);
    bool copiedAtEnd = llvm::count(terminator->getOperands(), value) > 1;
    groups[groupOf.lookup(value.getDefiningOp())].mayAlias |= !copiedAtEnd;
    info.inPlaceResults.push_back({result, argument});
  }
  return success();
}

} // namespace tandem::cpu::detail
