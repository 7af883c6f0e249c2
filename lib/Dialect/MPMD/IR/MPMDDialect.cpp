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

/// Checks the `mpmd.*` attributes of fragment arguments: `mpmd.param` names
/// a parameter, `mpmd.input` a step input; nothing else is known.
LogicalResult MPMDDialect::verifyRegionArgAttribute(Operation *op,
                                                    unsigned regionIndex,
                                                    unsigned argIndex,
                                                    NamedAttribute attribute) {
  StringRef name = attribute.getName().strref();
  if (!isa<FragmentOp>(op))
    return op->emitError() << "'" << name
                           << "' is only meaningful on mpmd.fragment "
                              "arguments, found it on "
                           << op->getName();
  if (name == kParamAttrName) {
    if (!isa<FlatSymbolRefAttr>(attribute.getValue()))
      return op->emitOpError() << "argument " << argIndex << ": '" << name
                               << "' must name an nn.parameter (@name), found "
                               << attribute.getValue();
    return success();
  }
  if (name == kInputAttrName) {
    auto index = dyn_cast<IntegerAttr>(attribute.getValue());
    if (!index || !index.getType().isSignlessInteger(64) || index.getInt() < 0)
      return op->emitOpError()
             << "argument " << argIndex << ": '" << name
             << "' must be a non-negative i64 step-input index, found "
             << attribute.getValue();
    return success();
  }
  return op->emitOpError() << "argument " << argIndex
                           << ": unknown mpmd argument attribute '" << name
                           << "' (expected '" << kParamAttrName << "' or '"
                           << kInputAttrName << "')";
}

/// Checks the `mpmd.*` attributes of fragment results: `mpmd.update` names
/// the parameter the result replaces, `mpmd.output` a step output.
LogicalResult
MPMDDialect::verifyRegionResultAttribute(Operation *op, unsigned regionIndex,
                                         unsigned resultIndex,
                                         NamedAttribute attribute) {
  StringRef name = attribute.getName().strref();
  if (!isa<FragmentOp>(op))
    return op->emitError() << "'" << name
                           << "' is only meaningful on mpmd.fragment "
                              "results, found it on "
                           << op->getName();
  if (name == kUpdateAttrName) {
    if (!isa<FlatSymbolRefAttr>(attribute.getValue()))
      return op->emitOpError() << "result " << resultIndex << ": '" << name
                               << "' must name an nn.parameter (@name), found "
                               << attribute.getValue();
    return success();
  }
  if (name == kOutputAttrName) {
    auto index = dyn_cast<IntegerAttr>(attribute.getValue());
    if (!index || !index.getType().isSignlessInteger(64) || index.getInt() < 0)
      return op->emitOpError()
             << "result " << resultIndex << ": '" << name
             << "' must be a non-negative i64 step-output index, found "
             << attribute.getValue();
    return success();
  }
  return op->emitOpError() << "result " << resultIndex
                           << ": unknown mpmd result attribute '" << name
                           << "' (expected '" << kUpdateAttrName << "' or '"
                           << kOutputAttrName << "')";
}
