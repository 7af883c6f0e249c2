//===- MixedPrecision.h - the loss-scaling contract -------------*- C++ -*-===//
//
// nn-mixed-precision records its loss-scaling choice on the forward function
// as the dictionary attribute `nn.loss_scale`; nn-autodiff copies it to the
// gradient function and scales its seed by it, nn-optimizer unscales the
// gradients and maintains the dynamic scale. This header is that contract.
//
//===----------------------------------------------------------------------===//

#ifndef TANDEM_DIALECT_NN_TRANSFORMS_MIXEDPRECISION_H
#define TANDEM_DIALECT_NN_TRANSFORMS_MIXEDPRECISION_H

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/BuiltinAttributes.h"
#include "llvm/ADT/StringRef.h"

#include <optional>

namespace tandem::nn {

/// Name of the function attribute holding the loss-scaling choice.
constexpr llvm::StringLiteral kLossScaleAttrName = "nn.loss_scale";

/// Dynamic scaling multiplies the scale by this after `growthInterval`
/// finite steps in a row...
constexpr double kLossScaleGrowth = 2.0;
/// ...and by this after a step with a non-finite gradient.
constexpr double kLossScaleBackoff = 0.5;

/// A function's loss scaling, read from `nn.loss_scale`.
struct LossScale {
  /// The static scale, or the initial one when dynamic.
  double scale = 1.0;
  /// Dynamic only: the rank-0 f32 parameter holding the current scale
  /// divided by `scale` (it starts at 1), and the one counting finite steps
  /// since the last change.
  mlir::FlatSymbolRefAttr factor, goodSteps;
  int64_t growthInterval = 0;

  bool isDynamic() const { return static_cast<bool>(factor); }
};

/// The dictionary to attach for `scale`.
mlir::DictionaryAttr buildLossScaleAttr(mlir::MLIRContext *context,
                                        const LossScale &scale);

/// Reads and checks `func`'s `nn.loss_scale` (std::nullopt when absent);
/// errors are reported on the function, prefixed with `pass`.
mlir::FailureOr<std::optional<LossScale>> readLossScale(mlir::func::FuncOp func,
                                                        llvm::StringRef pass);

} // namespace tandem::nn

#endif // TANDEM_DIALECT_NN_TRANSFORMS_MIXEDPRECISION_H
