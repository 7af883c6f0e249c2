//===- SafetensorsFuzzer.cpp - the safetensors reader on any bytes --------===//
//
// libFuzzer target (scripts/fuzz.sh). Invariants: st::parse never crashes,
// hangs, over-allocates or trips a sanitizer; a rejected input has a
// message naming the file; an accepted one serializes to bytes that parse
// back to the same tensors and metadata.
//
//===----------------------------------------------------------------------===//

#include "tandem/Runtime/Safetensors.h"

#include <cstdint>
#include <cstdio>
#include <cstdlib>

namespace st = tandem::st;

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  std::vector<uint8_t> bytes(data, data + size);
  std::string error;
  std::optional<st::File> file = st::parse(bytes, "fuzz.st", error);
  if (!file) {
    if (error.rfind("fuzz.st", 0) != 0) {
      std::fprintf(stderr, "rejected without naming the file: %s\n",
                   error.c_str());
      std::abort();
    }
    return 0;
  }
  std::string again;
  std::optional<st::File> read =
      st::parse(st::serialize(*file), "fuzz.st", again);
  bool same = read && read->metadata == file->metadata &&
              read->tensors.size() == file->tensors.size();
  if (same)
    for (const auto &[name, tensor] : file->tensors) {
      auto it = read->tensors.find(name);
      same &= it != read->tensors.end() && it->second.dtype == tensor.dtype &&
              it->second.shape == tensor.shape &&
              it->second.data == tensor.data;
    }
  if (!same) {
    std::fprintf(stderr, "accepted file does not round-trip: %s\n",
                 again.c_str());
    std::abort();
  }
  return 0;
}
