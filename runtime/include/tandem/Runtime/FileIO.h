//===- FileIO.h - whole-file reads and atomic writes ------------*- C++ -*-===//
//
// The runtime's data, parameter and checkpoint files are read whole and
// written atomically (temporary file + rename), so a process killed mid-write
// never leaves a half-written file under the final name. Errors name the
// file. No MLIR dependency.
//
//===----------------------------------------------------------------------===//

#ifndef TANDEM_RUNTIME_FILEIO_H
#define TANDEM_RUNTIME_FILEIO_H

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace tandem::io {

/// The bytes of `path`, or nullopt with `error` set.
std::optional<std::vector<uint8_t>> readBytes(const std::string &path,
                                              std::string &error);

/// Writes `bytes` to `path` + ".tmp" and renames it over `path`.
bool writeBytesAtomic(const std::string &path,
                      const std::vector<uint8_t> &bytes, std::string &error);

} // namespace tandem::io

#endif // TANDEM_RUNTIME_FILEIO_H
