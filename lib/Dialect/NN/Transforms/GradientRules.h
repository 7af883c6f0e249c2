//===- GradientRules.h - nn-autodiff's per-op rules (internal) --*- C++ -*-===//
//
// A gradient rule receives the cotangent of each result of a forward op and
// builds, with ordinary nn ops, the contribution to the cotangent of each
// operand. The driver (Autodiff.cpp) sums contributions and tags every op a
// rule creates with #nn.grad.
//
//===----------------------------------------------------------------------===//

#ifndef TANDEM_LIB_DIALECT_NN_TRANSFORMS_GRADIENTRULES_H
#define TANDEM_LIB_DIALECT_NN_TRANSFORMS_GRADIENTRULES_H

#include "tandem/Dialect/NN/IR/NNOps.h"

#include "mlir/IR/Builders.h"
#include "llvm/ADT/StringMap.h"

namespace tandem::nn::autodiff {

/// Builds the ops of one rule at the builder's insertion point.
struct GradBuilder {
  mlir::OpBuilder &b;
  mlir::Location loc;
  /// The normalizations' input gradients as nn.layer_norm_grad and
  /// nn.rms_norm_grad (nn-autodiff{decompose-norms=false}), not as
  /// elementwise ops and reductions.
  bool fusedNorms = false;
  /// GELU's gradient as nn.gelu_grad (nn-autodiff{decompose-gelu=false}).
  bool fusedGelu = false;

  /// A rank-0 constant of `elementType` (broadcasts against any tensor).
  mlir::Value scalar(mlir::Type elementType, double value);
  /// A rank-0 constant with the element type of `like`.
  mlir::Value scalarLike(mlir::Value like, double value);
  /// A zero tensor of `type`.
  mlir::Value zeros(mlir::Type type);

  mlir::Value add(mlir::Value a, mlir::Value c);
  mlir::Value sub(mlir::Value a, mlir::Value c);
  mlir::Value mul(mlir::Value a, mlir::Value c);
  mlir::Value div(mlir::Value a, mlir::Value c);
  mlir::Value neg(mlir::Value a);
  mlir::Value reshape(mlir::Value a, mlir::Type type);
  mlir::Value reduceSum(mlir::Value a, llvm::ArrayRef<int64_t> axes,
                        bool keepdims);
  mlir::Value reduceMean(mlir::Value a, llvm::ArrayRef<int64_t> axes,
                         bool keepdims);
  /// Sums `cotangent` (shaped like a broadcast result) back to `type`, the
  /// shape of the operand that was broadcast: reduce_sum over the added and
  /// the stretched dimensions, then reshape.
  mlir::Value unbroadcast(mlir::Value cotangent, mlir::Type type);
};

/// `resultCotangents` has one entry per result of `op` (null for integer
/// results that carry no gradient; float results without a cotangent are
/// zeros). The rule appends one entry per operand to `operandCotangents`:
/// the contribution, or null for none (integer operands, constants of the
/// rule).
using GradRule = llvm::LogicalResult (*)(
    GradBuilder &gb, mlir::Operation *op,
    llvm::ArrayRef<mlir::Value> resultCotangents,
    llvm::SmallVectorImpl<mlir::Value> &operandCotangents);

using GradRuleMap = llvm::StringMap<GradRule>;

void registerElementwiseGradients(GradRuleMap &rules);
void registerLayerGradients(GradRuleMap &rules);
void registerShapeGradients(GradRuleMap &rules);
void registerCodecGradients(GradRuleMap &rules);

/// Every rule, by op name.
const GradRuleMap &getGradRules();

inline mlir::RankedTensorType tensorType(mlir::Value v) {
  return llvm::cast<mlir::RankedTensorType>(v.getType());
}
inline bool isFloatTensor(mlir::Value v) {
  return llvm::isa<mlir::FloatType>(tensorType(v).getElementType());
}

/// The type of `v`'s cotangent, or null when it carries none: a float
/// tensor's own type; for a codec payload (nn.quantize's first result),
/// the type of the value it encodes (the payload's shape, the quantized
/// input's element type): straight-through, the payload's cotangent is the
/// cotangent of what it stands for. Other integers carry none.
mlir::Type cotangentType(mlir::Value v);

} // namespace tandem::nn::autodiff

#endif // TANDEM_LIB_DIALECT_NN_TRANSFORMS_GRADIENTRULES_H
