//===- MPMDDialect.h - mpmd dialect -----------------------------*- C++ -*-===//

#ifndef TANDEM_DIALECT_MPMD_IR_MPMDDIALECT_H
#define TANDEM_DIALECT_MPMD_IR_MPMDDIALECT_H

#include "mlir/IR/Dialect.h"

#include "tandem/Dialect/MPMD/IR/MPMDDialect.h.inc"

#endif // TANDEM_DIALECT_MPMD_IR_MPMDDIALECT_H
