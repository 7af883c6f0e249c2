//===- NNDialect.cpp - nn dialect registration and attributes -------------===//

#include "tandem/Dialect/NN/IR/NNDialect.h"
#include "tandem/Dialect/NN/IR/NNAttrs.h"
#include "tandem/Dialect/NN/IR/NNOps.h"

#include "mlir/IR/Builders.h"
#include "mlir/IR/DialectImplementation.h"
#include "llvm/ADT/TypeSwitch.h"

#include <cmath>

using namespace mlir;
using namespace tandem::nn;

#include "tandem/Dialect/NN/IR/NNDialect.cpp.inc"
#include "tandem/Dialect/NN/IR/NNEnums.cpp.inc"

#define GET_ATTRDEF_CLASSES
#include "tandem/Dialect/NN/IR/NNAttrs.cpp.inc"

void NNDialect::initialize() {
  addAttributes<
#define GET_ATTRDEF_LIST
#include "tandem/Dialect/NN/IR/NNAttrs.cpp.inc"
      >();
  addOperations<
#define GET_OP_LIST
#include "tandem/Dialect/NN/IR/NNOps.cpp.inc"
      >();
}

/// The discardable nn.* attributes the dialect owns a meaning for: today
/// `nn.recompute`, a unit attribute on an nn op that computes (a
/// declaration or a constant has nothing to recompute). The others (nn.id,
/// nn.grad, ...) are checked by the passes that read them.
LogicalResult NNDialect::verifyOperationAttribute(Operation *op,
                                                  NamedAttribute attr) {
  if (attr.getName() != kRecomputeAttrName)
    return success();
  if (!isa<UnitAttr>(attr.getValue()))
    return op->emitOpError()
           << "expects '" << kRecomputeAttrName
           << "' to be a unit attribute, found " << attr.getValue();
  if (op->getDialect() != this || isa<ParameterOp, ParamOp, ConstantOp>(op))
    return op->emitOpError()
           << "cannot be marked '" << kRecomputeAttrName
           << "': only nn ops that compute have results to recompute";
  return success();
}

Operation *NNDialect::materializeConstant(OpBuilder &builder, Attribute value,
                                          Type type, Location loc) {
  auto elements = dyn_cast<ElementsAttr>(value);
  if (!elements || elements.getType() != type)
    return nullptr;
  return ConstantOp::create(builder, loc, type, elements);
}

//===----------------------------------------------------------------------===//
// InitializerAttr
//===----------------------------------------------------------------------===//

LogicalResult
InitializerAttr::verify(function_ref<InFlightDiagnostic()> emitError,
                        InitKind kind, llvm::APFloat apA, llvm::APFloat apB) {
  double a = apA.convertToDouble(), b = apB.convertToDouble();
  if (!std::isfinite(a) || !std::isfinite(b))
    return emitError() << "initializer parameters must be finite, found " << a
                       << " and " << b;
  switch (kind) {
  case InitKind::Zeros:
  case InitKind::Ones:
  case InitKind::Orthonormal:
    return success();
  case InitKind::Normal:
    if (a <= 0.0)
      return emitError() << "normal initializer needs a positive standard "
                            "deviation, found "
                         << a;
    return success();
  case InitKind::Uniform:
    if (!(a < b))
      return emitError() << "uniform initializer needs low < high, found low "
                         << a << " and high " << b;
    return success();
  }
  return emitError() << "unknown initializer kind";
}

Attribute InitializerAttr::parseBody(AsmParser &parser) {
  SMLoc loc = parser.getCurrentLocation();
  StringRef keyword;
  if (parser.parseKeyword(&keyword))
    return {};
  std::optional<InitKind> kind = symbolizeInitKind(keyword);
  if (!kind) {
    parser.emitError(loc)
        << "expected an initializer (zeros, ones, "
           "normal(std), uniform(low, high), orthonormal), found '"
        << keyword << "'";
    return {};
  }
  double a = 0.0, b = 0.0;
  if (*kind == InitKind::Normal) {
    if (parser.parseLParen() || parser.parseFloat(a) || parser.parseRParen())
      return {};
  } else if (*kind == InitKind::Uniform) {
    if (parser.parseLParen() || parser.parseFloat(a) || parser.parseComma() ||
        parser.parseFloat(b) || parser.parseRParen())
      return {};
  }
  // -0.0 and 0.0 compare equal as APFloats but hash differently; store one
  // zero so equal initializers are one attribute.
  a += 0.0;
  b += 0.0;
  return getChecked([&] { return parser.emitError(loc); }, parser.getContext(),
                    *kind, llvm::APFloat(a), llvm::APFloat(b));
}

void InitializerAttr::printBody(AsmPrinter &printer) const {
  printer << stringifyInitKind(getKind());
  // printFloat picks the shortest form that parses back to the same double.
  if (getKind() == InitKind::Normal) {
    printer << "(";
    printer.printFloat(getA());
    printer << ")";
  } else if (getKind() == InitKind::Uniform) {
    printer << "(";
    printer.printFloat(getA());
    printer << ", ";
    printer.printFloat(getB());
    printer << ")";
  }
}

Attribute InitializerAttr::parse(AsmParser &parser, Type) {
  if (parser.parseLess())
    return {};
  Attribute attr = parseBody(parser);
  if (!attr || parser.parseGreater())
    return {};
  return attr;
}

void InitializerAttr::print(AsmPrinter &printer) const {
  printer << "<";
  printBody(printer);
  printer << ">";
}
