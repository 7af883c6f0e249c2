//===- Rounding.cpp - rounding doubles to element types -------------------===//

#include "tandem/Eval/Rounding.h"

#include "mlir/IR/BuiltinTypes.h"
#include "llvm/ADT/APFloat.h"

#include <cfloat>
#include <cmath>

using namespace tandem::eval;

/// Rounds through APFloat, which implements round-to-nearest-even and each
/// format's overflow behaviour (infinity, or NaN for formats without one).
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

/// An IEEE-style binary format with infinities (bf16, f16): `precision`
/// significant bits, smallest normal exponent `minExponent` (value
/// 2^minExponent), largest finite value `largest`.
struct BinaryFormat {
  int precision;
  int minExponent;
  double largest;
};

/// Round-to-nearest-even into `format` with plain double arithmetic: the
/// evaluator rounds every result of every low-precision op, and APFloat's
/// generic conversion made bf16/f16 evaluation several times slower than
/// f32. RoundingTest checks it against APFloat.
static double roundBinary(double value, const BinaryFormat &format,
                          bool saturate) {
  if (std::isinf(value) && saturate)
    return std::copysign(format.largest, value);
  if (std::isnan(value) || std::isinf(value) || value == 0.0)
    return value;
  int exponent;
  std::frexp(value, &exponent); // value = m * 2^exponent, 0.5 <= |m| < 1
  // The unit in the last place: 2^(exponent - precision) for normals, the
  // subnormal step below the smallest normal.
  int ulpExponent =
      std::max(exponent - 1, format.minExponent) - (format.precision - 1);
  // Scaling by a power of two is exact; nearbyint rounds ties to even in
  // the default rounding mode.
  double rounded =
      std::ldexp(std::nearbyint(std::ldexp(value, -ulpExponent)), ulpExponent);
  if (std::fabs(rounded) > format.largest)
    return saturate ? std::copysign(format.largest, value)
                    : std::copysign(HUGE_VAL, value);
  return rounded;
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
  if (elementType.isBF16())
    return roundBinary(value, {8, -126, 0x1.fep127}, options.saturate);
  if (elementType.isF16())
    return roundBinary(value, {11, -14, 65504.0}, options.saturate);
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
