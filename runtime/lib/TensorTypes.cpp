//===- TensorTypes.cpp - manifest element types as safetensors types ------===//
//
// Apart from ParameterFiles.cpp, which needs rank programs: the checkpoint
// reader uses this too, and builds (and is fuzzed) without them.
//
//===----------------------------------------------------------------------===//

#include "tandem/Runtime/ParameterFiles.h"

using namespace tandem;
using namespace tandem::runtime;

st::DType tandem::runtime::toSafetensorsType(ElementType type) {
  switch (type) {
  case ElementType::F32:
    return st::DType::F32;
  case ElementType::F64:
    return st::DType::F64;
  case ElementType::I32:
    return st::DType::I32;
  case ElementType::I64:
    return st::DType::I64;
  case ElementType::BF16:
    return st::DType::BF16;
  case ElementType::F16:
    return st::DType::F16;
  case ElementType::I8:
    return st::DType::I8;
  case ElementType::F8E4M3FN:
    return st::DType::F8_E4M3;
  case ElementType::F8E5M2:
    return st::DType::F8_E5M2;
  }
  return st::DType::F32;
}
