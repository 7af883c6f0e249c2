//===- MLP.h - multi-layer perceptron builder -------------------*- C++ -*-===//

#ifndef TANDEM_MODELS_MLP_H
#define TANDEM_MODELS_MLP_H

#include "tandem/Models/Config.h"

#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/OwningOpRef.h"

namespace mlir {
class MLIRContext;
} // namespace mlir

namespace tandem::models {

/// Builds an MLP classifier in the nn dialect:
///
///   func.func @forward(%features: tensor<BxIxf32>, %labels: tensor<Bxi32>)
///       -> tensor<f32>
///
/// Hidden layer i is `gelu(x · fc.i.weight + fc.i.bias)`; GELU rather than
/// ReLU because it is smooth (finite-difference gradient checks have no kink
/// to trip on) and it is the activation the GPT already needs. The output
/// layer `head` has no activation; the loss is the mean cross-entropy.
/// Weights start uniform in ±1/sqrt(fan_in) (PyTorch's nn.Linear bound),
/// biases at zero. `nn.stage_end` markers follow the selected hidden layers.
llvm::Expected<mlir::OwningOpRef<mlir::ModuleOp>>
buildMLP(mlir::MLIRContext &context, const MLPConfig &config);

/// Closed-form parameter count of buildMLP's model.
int64_t mlpParameterCount(const MLPConfig &config);

} // namespace tandem::models

#endif // TANDEM_MODELS_MLP_H
