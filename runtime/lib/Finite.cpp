//===- Finite.cpp - finding NaN and Inf in a tensor -----------------------===//

#include "tandem/Runtime/Finite.h"

#include <cstring>

using namespace tandem::runtime;

namespace {

/// An element type's bits as an unsigned integer, its exponent mask and
/// mantissa mask: non-finite when the exponent bits are all ones.
struct Encoding {
  unsigned width = 0; // bytes
  uint64_t exponent = 0, mantissa = 0;
};

Encoding encodingOf(ElementType type) {
  switch (type) {
  case ElementType::F64:
    return {8, 0x7ff0000000000000ull, 0x000fffffffffffffull};
  case ElementType::F32:
    return {4, 0x7f800000u, 0x007fffffu};
  case ElementType::BF16:
    return {2, 0x7f80u, 0x007fu};
  case ElementType::F16:
    return {2, 0x7c00u, 0x03ffu};
  case ElementType::F8E5M2:
    return {1, 0x7cu, 0x03u};
  case ElementType::F8E4M3FN:
    // Only S.1111.111 is special (NaN): exponent and mantissa all ones.
    return {1, 0x7fu, 0x00u};
  case ElementType::I32:
  case ElementType::I64:
  case ElementType::I8:
    return {};
  }
  return {};
}

uint64_t load(const uint8_t *at, unsigned width) {
  uint64_t bits = 0;
  std::memcpy(&bits, at, width); // x86-64 and the GPUs are little-endian.
  return bits;
}

} // namespace

int64_t tandem::runtime::firstNonFinite(ElementType type, const void *data,
                                        uint64_t bytes) {
  Encoding e = encodingOf(type);
  if (e.width == 0)
    return -1;
  const uint8_t *p = static_cast<const uint8_t *>(data);
  uint64_t count = bytes / e.width;
  for (uint64_t i = 0; i < count; ++i)
    if ((load(p + i * e.width, e.width) & e.exponent) == e.exponent)
      return static_cast<int64_t>(i);
  return -1;
}

std::string tandem::runtime::nonFiniteName(ElementType type, const void *data,
                                           int64_t index) {
  Encoding e = encodingOf(type);
  if (e.width == 0 || index < 0)
    return "finite";
  uint64_t bits =
      load(static_cast<const uint8_t *>(data) + index * e.width, e.width);
  if (type == ElementType::F8E4M3FN || (bits & e.mantissa) != 0)
    return "NaN";
  bool negative = bits >> (8 * e.width - 1);
  return negative ? "-Inf" : "+Inf";
}
