//===- NNDialect.h - nn dialect ---------------------------------*- C++ -*-===//

#ifndef TANDEM_DIALECT_NN_IR_NNDIALECT_H
#define TANDEM_DIALECT_NN_IR_NNDIALECT_H

#include "mlir/IR/Dialect.h"

#include "tandem/Dialect/NN/IR/NNDialect.h.inc"

#endif // TANDEM_DIALECT_NN_IR_NNDIALECT_H
