//===- Safetensors.h - safetensors reader and writer ------------*- C++ -*-===//
//
// The safetensors format: an 8-byte little-endian header length N, N bytes
// of JSON mapping tensor names to {dtype, shape, data_offsets} (plus an
// optional "__metadata__" string map), then the tensor bytes. Parameters,
// optimizer state and checkpoints use it so that other tools (PyTorch, JAX,
// the `safetensors` Python package) read what Tandem writes. Everything in a
// file is validated before it is used: a truncated or hand-edited file is an
// error naming the file and what is wrong, never a crash. No MLIR
// dependency.
//
//===----------------------------------------------------------------------===//

#ifndef TANDEM_RUNTIME_SAFETENSORS_H
#define TANDEM_RUNTIME_SAFETENSORS_H

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace tandem::st {

/// The element types Tandem reads and writes, by their safetensors names.
enum class DType { F64, F32, F16, BF16, F8_E4M3, F8_E5M2, I64, I32, I8, U8 };

/// "F32", "BF16", "F8_E4M3", ...
std::string_view dtypeName(DType dtype);
std::optional<DType> parseDType(std::string_view name);
size_t dtypeSize(DType dtype);

struct Tensor {
  DType dtype = DType::F32;
  std::vector<int64_t> shape;
  /// Raw little-endian element bytes, row-major.
  std::vector<uint8_t> data;

  int64_t numElements() const;
};

/// A whole file in memory: tensors by name (sorted, as the format stores
/// them) and the free-form string metadata.
struct File {
  std::map<std::string, Tensor> tensors;
  std::map<std::string, std::string> metadata;
};

/// A tensor whose bytes live elsewhere: what a writer streams to a file
/// without copying them first.
struct TensorRef {
  DType dtype = DType::F32;
  std::vector<int64_t> shape;
  const void *data = nullptr;
  size_t size = 0;
};

/// A reference to `tensor`'s bytes (valid while it is).
TensorRef refTo(const Tensor &tensor);

/// The bytes before the data section for `tensors` laid out in name order:
/// the 8-byte header length and the JSON header, padded so the data starts
/// 8-byte aligned. The tensors' bytes follow it in name order.
std::string serializeHeader(const std::map<std::string, TensorRef> &tensors,
                            const std::map<std::string, std::string> &metadata);

/// Parses a safetensors image. On failure returns nullopt and sets `error`
/// to a message that starts with `what` (usually the file name).
std::optional<File> parse(const std::vector<uint8_t> &bytes,
                          std::string_view what, std::string &error);

/// Serializes `file`; tensors are laid out in name order, 8-byte aligned
/// header as the format recommends.
std::vector<uint8_t> serialize(const File &file);

/// Reads a file from disk (parse + I/O errors).
std::optional<File> readFile(const std::string &path, std::string &error);

/// Writes atomically: to `path` + ".tmp", then renames over `path`, so a
/// crash never leaves a half-written file under the final name.
bool writeFile(const std::string &path, const File &file, std::string &error);

} // namespace tandem::st

#endif // TANDEM_RUNTIME_SAFETENSORS_H
