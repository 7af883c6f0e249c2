//===- MPMDOps.h - mpmd dialect operations ----------------------*- C++ -*-===//

#ifndef TANDEM_DIALECT_MPMD_IR_MPMDOPS_H
#define TANDEM_DIALECT_MPMD_IR_MPMDOPS_H

#include "mlir/Bytecode/BytecodeOpInterface.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/BuiltinTypes.h"
#include "mlir/IR/OpDefinition.h"
#include "mlir/IR/OpImplementation.h"
#include "mlir/IR/SymbolTable.h"
#include "mlir/Interfaces/ControlFlowInterfaces.h"
#include "mlir/Interfaces/FunctionInterfaces.h"
#include "mlir/Interfaces/SideEffectInterfaces.h"

#include "tandem/Dialect/MPMD/IR/MPMDDialect.h"
#include "tandem/Dialect/MPMD/IR/MPMDEnums.h.inc"

namespace tandem::mpmd {

/// True for the fragment kinds that run once per microbatch (fwd, bwd,
/// bwd_input, bwd_weight); false for the once-per-step kinds.
bool isPerMicrobatchKind(FragmentKind kind);

} // namespace tandem::mpmd

#define GET_OP_CLASSES
#include "tandem/Dialect/MPMD/IR/MPMDOps.h.inc"

#endif // TANDEM_DIALECT_MPMD_IR_MPMDOPS_H
