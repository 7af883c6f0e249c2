//===- NNAttrs.h - nn dialect attributes ------------------------*- C++ -*-===//

#ifndef TANDEM_DIALECT_NN_IR_NNATTRS_H
#define TANDEM_DIALECT_NN_IR_NNATTRS_H

#include "mlir/IR/Attributes.h"
#include "mlir/IR/BuiltinAttributes.h"
#include "mlir/IR/DialectImplementation.h"

#include "tandem/Dialect/NN/IR/NNEnums.h.inc"

#define GET_ATTRDEF_CLASSES
#include "tandem/Dialect/NN/IR/NNAttrs.h.inc"

#endif // TANDEM_DIALECT_NN_IR_NNATTRS_H
