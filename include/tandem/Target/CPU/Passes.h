//===- Passes.h - CPU target passes -----------------------------*- C++ -*-===//

#ifndef TANDEM_TARGET_CPU_PASSES_H
#define TANDEM_TARGET_CPU_PASSES_H

#include "mlir/Pass/Pass.h"

namespace tandem::cpu {

#define GEN_PASS_DECL
#include "tandem/Target/CPU/Passes.h.inc"

#define GEN_PASS_REGISTRATION
#include "tandem/Target/CPU/Passes.h.inc"

} // namespace tandem::cpu

#endif // TANDEM_TARGET_CPU_PASSES_H
