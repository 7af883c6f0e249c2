//===- NNDialect.h - nn dialect ---------------------------------*- C++ -*-===//

#ifndef TANDEM_DIALECT_NN_IR_NNDIALECT_H
#define TANDEM_DIALECT_NN_IR_NNDIALECT_H

#include "mlir/IR/Dialect.h"

#include "tandem/Dialect/NN/IR/NNDialect.h.inc"

namespace tandem::nn {
/// The discardable unit attribute a model puts on an op whose results the
/// backward pass recomputes rather than keeps (an importer's mark for the
/// ops of a jax.checkpoint region); mpmd-remat's `annotated` policy
/// follows it, the other policies ignore it.
inline constexpr llvm::StringLiteral kRecomputeAttrName = "nn.recompute";
} // namespace tandem::nn

#endif // TANDEM_DIALECT_NN_IR_NNDIALECT_H
