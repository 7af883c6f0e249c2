//===- TokensFuzzer.cpp - the token-file reader on any bytes --------------===//
//
// libFuzzer target (scripts/fuzz.sh). Invariants: parseTokens never
// crashes or trips a sanitizer; a rejected input has a message naming the
// file; accepted tokens are non-negative, and a binary token file's tokens
// write back to a file that reads back the same.
//
//===----------------------------------------------------------------------===//

#include "tandem/Runtime/TokenData.h"

#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <unistd.h>

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  std::vector<uint8_t> bytes(data, data + size);
  std::string error;
  std::optional<std::vector<int32_t>> tokens =
      tandem::data::parseTokens(bytes, "fuzz.tok", error);
  if (!tokens) {
    if (error.rfind("fuzz.tok", 0) != 0) {
      std::fprintf(stderr, "rejected without naming the file: %s\n",
                   error.c_str());
      std::abort();
    }
    return 0;
  }
  for (int32_t token : *tokens)
    if (token < 0) {
      std::fprintf(stderr, "negative token accepted\n");
      std::abort();
    }
  // Binary files round-trip through the writer (text files are bytes).
  if (size >= 8 && std::memcmp(data, "TNDTOKv1", 8) == 0) {
    static const std::string path =
        "/tmp/tandem-tokens-fuzz-" + std::to_string(getpid()) + ".tok";
    std::string again;
    std::optional<std::vector<int32_t>> read;
    if (tandem::data::writeTokens(path, *tokens, again))
      read = tandem::data::readTokens(path, again);
    if (!read || *read != *tokens) {
      std::fprintf(stderr, "tokens do not round-trip: %s\n", again.c_str());
      std::abort();
    }
  }
  return 0;
}
