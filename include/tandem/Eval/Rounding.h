//===- Rounding.h - rounding doubles to element types -----------*- C++ -*-===//
//
// The evaluator computes every op in double and rounds each result element
// to the op's result element type. Floats round to nearest, ties to even;
// values beyond the type's range overflow as IEEE does (infinity, or NaN for
// f8E4M3FN, which has no infinity) unless `saturate` asks to clamp them to
// the largest finite value (nn.cast's choice for f8). Integers round to
// nearest even and clamp to the type's range (only nn.cast produces them
// from floats; elsewhere they are copied exactly).
//
//===----------------------------------------------------------------------===//

#ifndef TANDEM_EVAL_ROUNDING_H
#define TANDEM_EVAL_ROUNDING_H

#include "mlir/IR/Types.h"

namespace tandem::eval {

struct RoundingOptions {
  /// Clamp out-of-range finite values and infinities to the largest finite
  /// value of the type instead of overflowing (NaN stays NaN).
  bool saturate = false;
  /// The f64 mode: f32 results keep their double value (an f32 program is
  /// evaluated in f64). Narrower types still round.
  bool keepF32AsF64 = false;
};

/// `value` rounded to `elementType`, returned as the double it represents.
double roundToType(double value, mlir::Type elementType,
                   RoundingOptions options = {});

/// Rounds every element of `data` in place.
void roundAllToType(double *data, size_t count, mlir::Type elementType,
                    RoundingOptions options = {});

} // namespace tandem::eval

#endif // TANDEM_EVAL_ROUNDING_H
