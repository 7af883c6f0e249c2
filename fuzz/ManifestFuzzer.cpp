//===- ManifestFuzzer.cpp - the manifest reader on any bytes --------------===//
//
// libFuzzer target (scripts/fuzz.sh). Invariants: parseManifest never
// crashes, hangs or trips a sanitizer; a rejected input has a message
// naming the file; an accepted one writes back to text that reads back
// equal (the writer and the reader are one schema), and its memory plan
// passes the runtime's check.
//
//===----------------------------------------------------------------------===//

#include "tandem/Runtime/Manifest.h"
#include "tandem/Runtime/MemoryPlan.h"

#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <string>

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  std::string text(reinterpret_cast<const char *>(data), size);
  std::string error;
  std::optional<tandem::runtime::Manifest> m =
      tandem::runtime::parseManifest(text, "fuzz.json", error);
  if (!m) {
    if (error.rfind("fuzz.json", 0) != 0) {
      std::fprintf(stderr, "rejected without naming the file: %s\n",
                   error.c_str());
      std::abort();
    }
    return 0;
  }
  std::string again;
  std::optional<tandem::runtime::Manifest> read =
      tandem::runtime::parseManifest(tandem::runtime::writeManifest(*m),
                                     "fuzz.json", again);
  if (!read || *read != *m) {
    std::fprintf(stderr, "accepted manifest does not round-trip: %s\n",
                 again.c_str());
    std::abort();
  }
  return 0;
}
