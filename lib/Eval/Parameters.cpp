//===- Parameters.cpp - parameter values for the evaluator ----------------===//

#include "tandem/Eval/Parameters.h"
#include "tandem/Eval/InitSpec.h"
#include "tandem/Eval/Rounding.h"

#include "tandem/Dialect/NN/IR/NNOps.h"
#include "tandem/Runtime/Init.h"
#include "tandem/Runtime/Safetensors.h"

#include "llvm/ADT/APFloat.h"
#include "llvm/Support/raw_ostream.h"

#include <cstring>

using namespace tandem::eval;
using namespace mlir;
namespace nn = tandem::nn;
namespace st = tandem::st;

tandem::rng::InitSpec tandem::eval::initSpecOf(nn::ParameterOp parameter) {
  nn::InitializerAttr init = parameter.getInit();
  tandem::rng::InitSpec spec;
  switch (init.getKind()) {
  case nn::InitKind::Zeros:
    spec.kind = tandem::rng::InitKind::Zeros;
    break;
  case nn::InitKind::Ones:
    spec.kind = tandem::rng::InitKind::Ones;
    break;
  case nn::InitKind::Normal:
    spec.kind = tandem::rng::InitKind::Normal;
    break;
  case nn::InitKind::Uniform:
    spec.kind = tandem::rng::InitKind::Uniform;
    break;
  case nn::InitKind::Orthonormal:
    spec.kind = tandem::rng::InitKind::Orthonormal;
    break;
  }
  spec.a = init.getAValue();
  spec.b = init.getBValue();
  if (auto seed = parameter.getSeedAttr()) {
    spec.hasSeed = true;
    spec.seed = static_cast<uint64_t>(seed.getInt());
  }
  ArrayRef<int64_t> stored = parameter.getTensorType().getShape();
  ArrayRef<int64_t> drawn = parameter.getDrawnShape();
  std::vector<int64_t> shape(stored.begin(), stored.end());
  tandem::rng::setPadding(spec, shape,
                          std::vector<int64_t>(drawn.begin(), drawn.end()));
  tandem::rng::setMatrix(spec, shape);
  return spec;
}

llvm::Expected<ParameterMap> tandem::eval::initializeParameters(ModuleOp module,
                                                                uint64_t seed) {
  ParameterMap parameters;
  for (auto parameter : module.getOps<nn::ParameterOp>()) {
    Tensor tensor(parameter.getTensorType());
    tandem::rng::InitSpec spec = initSpecOf(parameter);
    uint64_t stream = tandem::rng::parameterStream(parameter.getSymName());
    size_t count = tensor.data.size();
    if (tensor.elementType.isF32()) {
      // Exactly the runtime's f32 path.
      std::vector<float> values(count);
      tandem::rng::initFill(spec, seed, stream, 0, values.data(), count);
      std::copy(values.begin(), values.end(), tensor.data.begin());
    } else {
      tandem::rng::initFill(spec, seed, stream, 0, tensor.data.data(), count);
      roundAllToType(tensor.data.data(), count, tensor.elementType);
    }
    parameters[parameter.getSymName().str()] = std::move(tensor);
  }
  return parameters;
}

llvm::Expected<st::DType> tandem::eval::dtypeOf(Type type) {
  if (type.isF64())
    return st::DType::F64;
  if (type.isF32())
    return st::DType::F32;
  if (type.isF16())
    return st::DType::F16;
  if (type.isBF16())
    return st::DType::BF16;
  if (llvm::isa<Float8E4M3FNType>(type))
    return st::DType::F8_E4M3;
  if (llvm::isa<Float8E5M2Type>(type))
    return st::DType::F8_E5M2;
  if (type.isInteger(64))
    return st::DType::I64;
  if (type.isInteger(32))
    return st::DType::I32;
  std::string name;
  llvm::raw_string_ostream os(name);
  os << type;
  return llvm::createStringError("no safetensors dtype for " + name);
}

/// Little-endian stores and loads of `size`-byte words (the hosts Tandem
/// supports are little-endian, so a memcpy is the byte order too).
static void storeBits(uint8_t *out, uint64_t bits, size_t size) {
  std::memcpy(out, &bits, size);
}
static uint64_t loadBits(const uint8_t *in, size_t size) {
  uint64_t bits = 0;
  std::memcpy(&bits, in, size);
  return bits;
}

llvm::Expected<st::Tensor> tandem::eval::toSafetensors(const Tensor &tensor) {
  auto dtype = dtypeOf(tensor.elementType);
  if (!dtype)
    return dtype.takeError();
  st::Tensor out;
  out.dtype = *dtype;
  out.shape.assign(tensor.shape.begin(), tensor.shape.end());
  size_t size = st::dtypeSize(*dtype);
  out.data.resize(tensor.data.size() * size);
  for (size_t i = 0; i < tensor.data.size(); ++i) {
    double x = roundToType(tensor.data[i], tensor.elementType);
    uint8_t *at = out.data.data() + i * size;
    switch (*dtype) {
    case st::DType::F64:
      std::memcpy(at, &x, 8);
      break;
    case st::DType::F32: {
      float f = static_cast<float>(x);
      std::memcpy(at, &f, 4);
      break;
    }
    case st::DType::I64:
    case st::DType::I32:
    case st::DType::I8:
    case st::DType::U8:
      storeBits(at, static_cast<uint64_t>(static_cast<int64_t>(x)), size);
      break;
    default: {
      llvm::APFloat value(x);
      bool losesInfo = false;
      value.convert(
          llvm::cast<FloatType>(tensor.elementType).getFloatSemantics(),
          llvm::APFloat::rmNearestTiesToEven, &losesInfo);
      storeBits(at, value.bitcastToAPInt().getZExtValue(), size);
      break;
    }
    }
  }
  return out;
}

Tensor tandem::eval::fromSafetensors(const st::Tensor &tensor,
                                     Type elementType) {
  Tensor out(elementType, tensor.shape);
  size_t size = st::dtypeSize(tensor.dtype);
  for (size_t i = 0; i < out.data.size(); ++i) {
    const uint8_t *at = tensor.data.data() + i * size;
    switch (tensor.dtype) {
    case st::DType::F64:
      std::memcpy(&out.data[i], at, 8);
      break;
    case st::DType::F32: {
      float f;
      std::memcpy(&f, at, 4);
      out.data[i] = f;
      break;
    }
    case st::DType::I64:
      out.data[i] = static_cast<double>(static_cast<int64_t>(loadBits(at, 8)));
      break;
    case st::DType::I32:
      out.data[i] = static_cast<int32_t>(loadBits(at, 4));
      break;
    case st::DType::I8:
      out.data[i] = static_cast<int8_t>(at[0]);
      break;
    case st::DType::U8:
      out.data[i] = at[0];
      break;
    default: {
      llvm::APFloat value(
          llvm::cast<FloatType>(elementType).getFloatSemantics(),
          llvm::APInt(size * 8, loadBits(at, size)));
      bool losesInfo = false;
      value.convert(llvm::APFloat::IEEEdouble(),
                    llvm::APFloat::rmNearestTiesToEven, &losesInfo);
      out.data[i] = value.convertToDouble();
      break;
    }
    }
  }
  return out;
}

static std::string shapeString(llvm::ArrayRef<int64_t> shape) {
  std::string text = "[";
  for (auto [i, size] : llvm::enumerate(shape))
    text += (i ? ", " : "") + std::to_string(size);
  return text + "]";
}

llvm::Expected<ParameterMap>
tandem::eval::loadParameters(ModuleOp module, const std::string &path) {
  std::string error;
  std::optional<st::File> file = st::readFile(path, error);
  if (!file)
    return llvm::createStringError(error);
  ParameterMap parameters;
  std::vector<std::string> problems;
  for (auto parameter : module.getOps<nn::ParameterOp>()) {
    std::string name = parameter.getSymName().str();
    RankedTensorType type = parameter.getTensorType();
    auto it = file->tensors.find(name);
    if (it == file->tensors.end()) {
      problems.push_back("missing tensor '" + name + "'");
      continue;
    }
    const st::Tensor &stored = it->second;
    auto dtype = dtypeOf(type.getElementType());
    if (!dtype)
      return dtype.takeError();
    if (stored.dtype != *dtype)
      problems.push_back("tensor '" + name + "' has dtype " +
                         std::string(st::dtypeName(stored.dtype)) +
                         ", the parameter needs " +
                         std::string(st::dtypeName(*dtype)));
    else if (llvm::ArrayRef<int64_t>(stored.shape) != type.getShape())
      problems.push_back("tensor '" + name + "' has shape " +
                         shapeString(stored.shape) + ", the parameter needs " +
                         shapeString(type.getShape()));
    else
      parameters[name] = fromSafetensors(stored, type.getElementType());
  }
  for (const auto &entry : file->tensors)
    if (!module.lookupSymbol<nn::ParameterOp>(entry.first))
      problems.push_back("extra tensor '" + entry.first +
                         "' is not a parameter of the model");
  if (!problems.empty()) {
    std::string message = path + ": does not match the model's parameters:";
    for (const std::string &problem : problems)
      message += "\n  " + problem;
    return llvm::createStringError(message);
  }
  return parameters;
}

llvm::Error tandem::eval::saveParameters(const ParameterMap &parameters,
                                         const std::string &path) {
  st::File file;
  for (const auto &[name, tensor] : parameters) {
    auto encoded = toSafetensors(tensor);
    if (!encoded)
      return encoded.takeError();
    file.tensors[name] = std::move(*encoded);
  }
  std::string error;
  if (!st::writeFile(path, file, error))
    return llvm::createStringError(error);
  return llvm::Error::success();
}
