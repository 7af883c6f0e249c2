//===- ParameterFiles.cpp - rank parameters to and from safetensors -------===//

#include "tandem/Runtime/ParameterFiles.h"

using namespace tandem;
using namespace tandem::runtime;

st::Tensor tandem::runtime::tensorOf(ElementType type,
                                     const std::vector<int64_t> &shape,
                                     const Buffer &buffer) {
  st::Tensor tensor;
  tensor.dtype = toSafetensorsType(type);
  tensor.shape = shape;
  const uint8_t *data = static_cast<const uint8_t *>(buffer.data());
  tensor.data.assign(data, data + buffer.size());
  return tensor;
}

bool tandem::runtime::addParameters(const RankProgram &rank, st::File &file,
                                    std::string &error) {
  std::vector<uint8_t> staging;
  for (const ParameterInfo &p : rank.manifest().parameters) {
    if (file.tensors.count(p.name) || !rank.parameter(p.name))
      continue;
    const void *host = rank.hostParameter(p.name, staging, error);
    if (!host)
      return false;
    st::Tensor &tensor = file.tensors[p.name];
    tensor.dtype = toSafetensorsType(p.dtype);
    tensor.shape = p.shape;
    const uint8_t *data = static_cast<const uint8_t *>(host);
    tensor.data.assign(data, data + p.bytes);
  }
  return true;
}

bool tandem::runtime::loadParameters(RankProgram &rank, const st::File &file,
                                     const std::string &path,
                                     std::string &error) {
  for (const ParameterInfo &p : rank.manifest().parameters) {
    auto it = file.tensors.find(p.name);
    if (it == file.tensors.end()) {
      error = path + ": no tensor '" + p.name + "'";
      return false;
    }
    if (it->second.dtype != toSafetensorsType(p.dtype) ||
        it->second.shape != p.shape) {
      error =
          path + ": tensor '" + p.name + "' differs from the parameter's type";
      return false;
    }
    if (!rank.setParameter(p.name, it->second.data.data(),
                           it->second.data.size(), error))
      return false;
  }
  return true;
}
