//===- Passes.h - mpmd dialect passes ---------------------------*- C++ -*-===//

#ifndef TANDEM_DIALECT_MPMD_TRANSFORMS_PASSES_H
#define TANDEM_DIALECT_MPMD_TRANSFORMS_PASSES_H

#include "tandem/Dialect/MPMD/IR/MPMDDialect.h"

#include "mlir/Pass/Pass.h"

namespace tandem::mpmd {

#define GEN_PASS_DECL
#include "tandem/Dialect/MPMD/Transforms/Passes.h.inc"

#define GEN_PASS_REGISTRATION
#include "tandem/Dialect/MPMD/Transforms/Passes.h.inc"

} // namespace tandem::mpmd

#endif // TANDEM_DIALECT_MPMD_TRANSFORMS_PASSES_H
