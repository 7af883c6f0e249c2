//===- Safetensors.cpp - safetensors reader and writer --------------------===//

#include "tandem/Runtime/Safetensors.h"
#include "tandem/Runtime/FileIO.h"

#include <nlohmann/json.hpp>

#include <algorithm>
#include <sstream>

using namespace tandem::st;
using Json = nlohmann::json;

namespace {

struct DTypeInfo {
  DType dtype;
  std::string_view name;
  size_t size;
};

constexpr DTypeInfo kDTypes[] = {
    {DType::F64, "F64", 8},         {DType::F32, "F32", 4},
    {DType::F16, "F16", 2},         {DType::BF16, "BF16", 2},
    {DType::F8_E4M3, "F8_E4M3", 1}, {DType::F8_E5M2, "F8_E5M2", 1},
    {DType::I64, "I64", 8},         {DType::I32, "I32", 4},
    {DType::I8, "I8", 1},           {DType::U8, "U8", 1},
};

// Headers beyond this are rejected before allocating: a corrupted length
// field must not turn into a 2^60-byte allocation.
constexpr uint64_t kMaxHeaderBytes = 100ull << 20;

std::string shapeString(const std::vector<int64_t> &shape) {
  std::ostringstream os;
  os << "[";
  for (size_t i = 0; i < shape.size(); ++i)
    os << (i ? ", " : "") << shape[i];
  os << "]";
  return os.str();
}

} // namespace

std::string_view tandem::st::dtypeName(DType dtype) {
  for (const DTypeInfo &info : kDTypes)
    if (info.dtype == dtype)
      return info.name;
  return "?";
}

std::optional<DType> tandem::st::parseDType(std::string_view name) {
  for (const DTypeInfo &info : kDTypes)
    if (info.name == name)
      return info.dtype;
  return std::nullopt;
}

size_t tandem::st::dtypeSize(DType dtype) {
  for (const DTypeInfo &info : kDTypes)
    if (info.dtype == dtype)
      return info.size;
  return 0;
}

int64_t Tensor::numElements() const {
  int64_t n = 1;
  for (int64_t d : shape)
    n *= d;
  return n;
}

std::optional<File> tandem::st::parse(const std::vector<uint8_t> &bytes,
                                      std::string_view what,
                                      std::string &error) {
  auto fail = [&](const std::string &message) -> std::optional<File> {
    error = std::string(what) + ": " + message;
    return std::nullopt;
  };
  if (bytes.size() < 8)
    return fail("truncated: " + std::to_string(bytes.size()) +
                " bytes, too short for the 8-byte header length");
  uint64_t headerSize = 0;
  for (int i = 7; i >= 0; --i)
    headerSize = (headerSize << 8) | bytes[i];
  if (headerSize > kMaxHeaderBytes)
    return fail("header length " + std::to_string(headerSize) +
                " exceeds the 100 MiB limit (corrupted file?)");
  if (headerSize > bytes.size() - 8)
    return fail("truncated: header length " + std::to_string(headerSize) +
                " but only " + std::to_string(bytes.size() - 8) +
                " bytes follow");
  const char *headerBegin = reinterpret_cast<const char *>(bytes.data() + 8);
  Json header = Json::parse(headerBegin, headerBegin + headerSize,
                            /*cb=*/nullptr, /*allow_exceptions=*/false);
  if (header.is_discarded() || !header.is_object())
    return fail("header is not a JSON object");

  const uint64_t dataSize = bytes.size() - 8 - headerSize;
  const uint8_t *data = bytes.data() + 8 + headerSize;
  File file;
  // (begin, end, name) of every tensor, to check the buffer is covered
  // exactly once.
  std::vector<std::tuple<uint64_t, uint64_t, std::string>> extents;
  for (auto it = header.begin(); it != header.end(); ++it) {
    const std::string &name = it.key();
    const Json &entry = it.value();
    if (name == "__metadata__") {
      if (!entry.is_object())
        return fail("__metadata__ must be an object of strings");
      for (auto m = entry.begin(); m != entry.end(); ++m) {
        if (!m.value().is_string())
          return fail("__metadata__ value for '" + m.key() +
                      "' is not a string");
        file.metadata[m.key()] = m.value().get<std::string>();
      }
      continue;
    }
    std::string where = "tensor '" + name + "': ";
    if (!entry.is_object())
      return fail(where + "entry is not an object");
    auto dtypeIt = entry.find("dtype");
    auto shapeIt = entry.find("shape");
    auto offsetsIt = entry.find("data_offsets");
    if (dtypeIt == entry.end() || !dtypeIt->is_string())
      return fail(where + "missing string field 'dtype'");
    if (shapeIt == entry.end() || !shapeIt->is_array())
      return fail(where + "missing array field 'shape'");
    if (offsetsIt == entry.end() || !offsetsIt->is_array() ||
        offsetsIt->size() != 2)
      return fail(where + "'data_offsets' must be [begin, end]");
    std::string dtypeStr = dtypeIt->get<std::string>();
    std::optional<DType> dtype = parseDType(dtypeStr);
    if (!dtype)
      return fail(where + "unknown dtype '" + dtypeStr +
                  "' (supported: F64, F32, F16, BF16, F8_E4M3, F8_E5M2, I64, "
                  "I32, I8, U8)");
    Tensor tensor;
    tensor.dtype = *dtype;
    uint64_t elements = 1;
    for (const Json &dim : *shapeIt) {
      if (!dim.is_number_unsigned())
        return fail(where + "shape entries must be non-negative integers");
      uint64_t d = dim.get<uint64_t>();
      if (d != 0 && elements > (uint64_t(1) << 62) / d)
        return fail(where + "shape is too large");
      elements *= d;
      tensor.shape.push_back(static_cast<int64_t>(d));
    }
    const Json &b = (*offsetsIt)[0], &e = (*offsetsIt)[1];
    if (!b.is_number_unsigned() || !e.is_number_unsigned())
      return fail(where + "data offsets must be non-negative integers");
    uint64_t begin = b.get<uint64_t>(), end = e.get<uint64_t>();
    if (begin > end || end > dataSize)
      return fail(where + "data offsets [" + std::to_string(begin) + ", " +
                  std::to_string(end) + ") lie outside the " +
                  std::to_string(dataSize) + "-byte data section" +
                  (end > dataSize ? " (truncated file?)" : ""));
    uint64_t expected = elements * dtypeSize(*dtype);
    if (end - begin != expected)
      return fail(where + "shape " + shapeString(tensor.shape) + " of " +
                  dtypeStr + " needs " + std::to_string(expected) +
                  " bytes, offsets give " + std::to_string(end - begin));
    tensor.data.assign(data + begin, data + end);
    extents.emplace_back(begin, end, name);
    file.tensors.emplace(name, std::move(tensor));
  }
  std::sort(extents.begin(), extents.end());
  uint64_t cursor = 0;
  for (const auto &[begin, end, name] : extents) {
    if (begin != cursor)
      return fail("tensor '" + name + "' starts at byte " +
                  std::to_string(begin) + ", expected " +
                  std::to_string(cursor) +
                  " (tensors must tile the data section without gaps or "
                  "overlaps)");
    cursor = end;
  }
  if (cursor != dataSize)
    return fail(std::to_string(dataSize - cursor) +
                " trailing bytes after the last tensor");
  return file;
}

std::string tandem::st::serializeHeader(
    const std::map<std::string, TensorRef> &tensors,
    const std::map<std::string, std::string> &metadata) {
  Json header = Json::object();
  if (!metadata.empty())
    header["__metadata__"] = metadata;
  uint64_t offset = 0;
  for (const auto &[name, tensor] : tensors) {
    header[name] = {{"dtype", std::string(dtypeName(tensor.dtype))},
                    {"shape", tensor.shape},
                    {"data_offsets", {offset, offset + tensor.size}}};
    offset += tensor.size;
  }
  std::string text = header.dump();
  // Pad with spaces so the data section starts 8-byte aligned.
  while ((8 + text.size()) % 8 != 0)
    text.push_back(' ');
  std::string bytes;
  uint64_t n = text.size();
  for (int i = 0; i < 8; ++i)
    bytes.push_back(static_cast<char>(n >> (8 * i)));
  return bytes + text;
}

tandem::st::TensorRef tandem::st::refTo(const Tensor &tensor) {
  return {tensor.dtype, tensor.shape, tensor.data.data(), tensor.data.size()};
}

std::vector<uint8_t> tandem::st::serialize(const File &file) {
  std::map<std::string, TensorRef> refs;
  uint64_t dataSize = 0;
  for (const auto &[name, tensor] : file.tensors) {
    refs[name] = refTo(tensor);
    dataSize += tensor.data.size();
  }
  std::string header = serializeHeader(refs, file.metadata);
  std::vector<uint8_t> bytes;
  bytes.reserve(header.size() + dataSize);
  bytes.insert(bytes.end(), header.begin(), header.end());
  for (const auto &[name, tensor] : file.tensors)
    bytes.insert(bytes.end(), tensor.data.begin(), tensor.data.end());
  return bytes;
}

std::optional<File> tandem::st::readFile(const std::string &path,
                                         std::string &error) {
  std::optional<std::vector<uint8_t>> bytes = io::readBytes(path, error);
  if (!bytes)
    return std::nullopt;
  return parse(*bytes, path, error);
}

bool tandem::st::writeFile(const std::string &path, const File &file,
                           std::string &error) {
  for (const auto &[name, tensor] : file.tensors) {
    if (tensor.data.size() !=
        static_cast<uint64_t>(tensor.numElements()) * dtypeSize(tensor.dtype)) {
      error = path + ": tensor '" + name + "' has " +
              std::to_string(tensor.data.size()) + " bytes, its shape " +
              shapeString(tensor.shape) + " of " +
              std::string(dtypeName(tensor.dtype)) + " needs " +
              std::to_string(tensor.numElements() * dtypeSize(tensor.dtype));
      return false;
    }
  }
  return io::writeBytesAtomic(path, serialize(file), error);
}
