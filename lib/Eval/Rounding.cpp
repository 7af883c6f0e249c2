//===- Rounding.cpp - rounding doubles to element types -------------------===//

#include "tandem/Eval/Rounding.h"
#include "tandem/Support/Rounding.h"

#include "mlir/IR/BuiltinTypes.h"
#include "llvm/ADT/APFloat.h"

#include <cfloat>
#include <cmath>

using namespace tandem::eval;

/// Rounds through APFloat, which implements round-to-nearest-even and each
/// format's overflow behaviour (infinity, or NaN for formats without one):
/// the float formats no generated code stores (f8E4M3, f8E4M3FNUZ, ...).
static double roundFloat(double value, const llvm::fltSemantics &semantics,
                         bool saturate) {
  llvm::APFloat x(value);
  bool losesInfo = false;
  x.convert(semantics, llvm::APFloat::rmNearestTiesToEven, &losesInfo);
  if (saturate && !std::isnan(value) && (x.isInfinity() || x.isNaN()))
    x = llvm::APFloat::getLargest(semantics, /*Negative=*/value < 0);
  // Back to double (exact: every narrower format is a subset of double).
  x.convert(llvm::APFloat::IEEEdouble(), llvm::APFloat::rmNearestTiesToEven,
            &losesInfo);
  return x.convertToDouble();
}

static double roundInteger(double value, unsigned width) {
  if (std::isnan(value))
    return 0.0;
  double rounded = std::nearbyint(value);
  double limit = std::ldexp(1.0, static_cast<int>(width) - 1);
  if (rounded >= limit)
    return limit - 1.0;
  if (rounded < -limit)
    return -limit;
  return rounded;
}

double tandem::eval::roundToType(double value, mlir::Type elementType,
                                 RoundingOptions options) {
  if (elementType.isF64())
    return value;
  if (elementType.isF32()) {
    if (options.keepF32AsF64)
      return value;
    double rounded = static_cast<float>(value);
    if (options.saturate && std::isinf(rounded) && !std::isnan(value))
      return std::copysign(static_cast<double>(FLT_MAX), value);
    return rounded;
  }
  // The formats the generated code stores round with the code it pastes
  // in (tandem/Support/Rounding.h), so both give the same bits.
  if (elementType.isBF16())
    return tandem_round::roundBinary(value, tandem_round::kBF16,
                                     options.saturate);
  if (elementType.isF16())
    return tandem_round::roundBinary(value, tandem_round::kF16,
                                     options.saturate);
  if (llvm::isa<mlir::Float8E4M3FNType>(elementType))
    return tandem_round::roundBinary(value, tandem_round::kF8E4M3FN,
                                     options.saturate);
  if (llvm::isa<mlir::Float8E5M2Type>(elementType))
    return tandem_round::roundBinary(value, tandem_round::kF8E5M2,
                                     options.saturate);
  if (auto floatType = llvm::dyn_cast<mlir::FloatType>(elementType))
    return roundFloat(value, floatType.getFloatSemantics(), options.saturate);
  if (auto intType = llvm::dyn_cast<mlir::IntegerType>(elementType))
    return roundInteger(value, intType.getWidth());
  return value;
}

void tandem::eval::roundAllToType(double *data, size_t count,
                                  mlir::Type elementType,
                                  RoundingOptions options) {
  if (elementType.isF64() || (elementType.isF32() && options.keepF32AsF64))
    return;
  if (elementType.isF32() && !options.saturate) {
    for (size_t i = 0; i < count; ++i)
      data[i] = static_cast<float>(data[i]);
    return;
  }
  for (size_t i = 0; i < count; ++i)
    data[i] = roundToType(data[i], elementType, options);
}
