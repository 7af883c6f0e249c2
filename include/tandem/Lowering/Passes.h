//===- Passes.h - target-neutral lowering passes ----------------*- C++ -*-===//

#ifndef TANDEM_LOWERING_PASSES_H
#define TANDEM_LOWERING_PASSES_H

#include "mlir/Pass/Pass.h"

namespace tandem::lowering {

#define GEN_PASS_DECL
#include "tandem/Lowering/Passes.h.inc"

#define GEN_PASS_REGISTRATION
#include "tandem/Lowering/Passes.h.inc"

} // namespace tandem::lowering

#endif // TANDEM_LOWERING_PASSES_H
