//===- Finite.h - finding NaN and Inf in a tensor ---------------*- C++ -*-===//
//
// tandem-run stops a run whose loss or gradients are not finite
// (docs/runtime.md, "Non-finite values"); this finds the first such element
// by the element type's own encoding (an exponent of all ones), so bf16,
// f16 and the fp8 types need no conversion.
//
//===----------------------------------------------------------------------===//

#ifndef TANDEM_RUNTIME_FINITE_H
#define TANDEM_RUNTIME_FINITE_H

#include "tandem/Runtime/Manifest.h"

#include <cstdint>
#include <string>

namespace tandem::runtime {

/// The index of the first NaN or infinite element among the `bytes` bytes
/// at `data` (host memory) holding `type`s, or -1 when all are finite or
/// `type` is an integer type. f8E4M3FN has no infinity: only its NaN
/// (S.1111.111) counts.
int64_t firstNonFinite(ElementType type, const void *data, uint64_t bytes);

/// "NaN", "+Inf" or "-Inf": the element at `index`, which firstNonFinite
/// found.
std::string nonFiniteName(ElementType type, const void *data, int64_t index);

} // namespace tandem::runtime

#endif // TANDEM_RUNTIME_FINITE_H
