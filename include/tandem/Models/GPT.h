//===- GPT.h - GPT-2-style decoder builder ----------------------*- C++ -*-===//

#ifndef TANDEM_MODELS_GPT_H
#define TANDEM_MODELS_GPT_H

#include "tandem/Models/Config.h"

#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/OwningOpRef.h"

namespace mlir {
class MLIRContext;
} // namespace mlir

namespace tandem::models {

/// Builds a GPT-2-style decoder in the nn dialect: `nn.parameter` symbols
/// with GPT-2's names and initializers, and
///
///   func.func @forward(%tokens: tensor<BxTxi32>, %targets: tensor<BxTxi32>)
///       -> tensor<f32>
///
/// computing the mean next-token cross-entropy. Blocks are pre-LN (ln_1 ->
/// attention -> residual, ln_2 -> MLP with gelu -> residual); `nn.stage_end`
/// markers sit on the residual stream after the layers `config.stages`
/// selects. Loads the nn and func dialects into `context`. Fails if the
/// configuration is invalid or the module does not verify.
llvm::Expected<mlir::OwningOpRef<mlir::ModuleOp>>
buildGPT(mlir::MLIRContext &context, const GPTConfig &config);

/// Closed-form parameter count of buildGPT's model:
/// V·D + T·D + L·(12·D² + 13·D) + 2·D, plus V·D when the head is untied.
/// For gpt2-124m (T = 1024, tied) that is 124,439,808.
int64_t gptParameterCount(const GPTConfig &config);

} // namespace tandem::models

#endif // TANDEM_MODELS_GPT_H
