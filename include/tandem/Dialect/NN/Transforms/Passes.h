//===- Passes.h - nn dialect passes -----------------------------*- C++ -*-===//

#ifndef TANDEM_DIALECT_NN_TRANSFORMS_PASSES_H
#define TANDEM_DIALECT_NN_TRANSFORMS_PASSES_H

#include "mlir/Pass/Pass.h"

namespace mlir {
class RewritePatternSet;
} // namespace mlir

namespace tandem::nn {

#define GEN_PASS_DECL
#include "tandem/Dialect/NN/Transforms/Passes.h.inc"

/// Adds the pattern that rewrites nn.attention into its definition.
void populateDecomposeAttentionPatterns(mlir::RewritePatternSet &patterns);

#define GEN_PASS_REGISTRATION
#include "tandem/Dialect/NN/Transforms/Passes.h.inc"

} // namespace tandem::nn

#endif // TANDEM_DIALECT_NN_TRANSFORMS_PASSES_H
