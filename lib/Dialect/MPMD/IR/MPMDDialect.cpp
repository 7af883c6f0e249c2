//===- MPMDDialect.cpp - mpmd dialect registration ------------------------===//

#include "tandem/Dialect/MPMD/IR/MPMDDialect.h"
#include "tandem/Dialect/MPMD/IR/MPMDOps.h"

#include "mlir/IR/Builders.h"
#include "mlir/IR/BuiltinAttributes.h"

using namespace mlir;
using namespace tandem::mpmd;

#include "tandem/Dialect/MPMD/IR/MPMDDialect.cpp.inc"
#include "tandem/Dialect/MPMD/IR/MPMDEnums.cpp.inc"

void MPMDDialect::initialize() {
  addOperations<
#define GET_OP_LIST
#include "tandem/Dialect/MPMD/IR/MPMDOps.cpp.inc"
      >();
}

/// Checks one `mpmd.*` attribute of fragment argument or result `index`
/// (`what`): `symbolName` must name an nn.parameter, `indexName` be a
/// non-negative i64 index of a step input or output (`indexWhat`).
static LogicalResult verifyBinding(Operation *op, StringRef what,
                                   unsigned index, NamedAttribute attribute,
                                   StringRef symbolName, StringRef indexName,
                                   StringRef indexWhat) {
  StringRef name = attribute.getName().strref();
  if (!isa<FragmentOp>(op))
    return op->emitError() << "'" << name
                           << "' is only meaningful on mpmd.fragment " << what
                           << "s, found it on " << op->getName();
  if (name == symbolName) {
    if (!isa<FlatSymbolRefAttr>(attribute.getValue()))
      return op->emitOpError() << what << " " << index << ": '" << name
                               << "' must name an nn.parameter (@name), found "
                               << attribute.getValue();
    return success();
  }
  if (name == indexName) {
    auto value = dyn_cast<IntegerAttr>(attribute.getValue());
    if (!value || !value.getType().isSignlessInteger(64) || value.getInt() < 0)
      return op->emitOpError() << what << " " << index << ": '" << name
                               << "' must be a non-negative i64 " << indexWhat
                               << " index, found " << attribute.getValue();
    return success();
  }
  return op->emitOpError() << what << " " << index << ": unknown mpmd " << what
                           << " attribute '" << name << "' (expected '"
                           << symbolName << "' or '" << indexName << "')";
}

/// `mpmd.param` names a parameter, `mpmd.input` a step input.
LogicalResult MPMDDialect::verifyRegionArgAttribute(Operation *op,
                                                    unsigned regionIndex,
                                                    unsigned argIndex,
                                                    NamedAttribute attribute) {
  return verifyBinding(op, "argument", argIndex, attribute, kParamAttrName,
                       kInputAttrName, "step-input");
}

/// `mpmd.update` names the parameter a result replaces, `mpmd.output` a step
/// output.
LogicalResult
MPMDDialect::verifyRegionResultAttribute(Operation *op, unsigned regionIndex,
                                         unsigned resultIndex,
                                         NamedAttribute attribute) {
  return verifyBinding(op, "result", resultIndex, attribute, kUpdateAttrName,
                       kOutputAttrName, "step-output");
}
