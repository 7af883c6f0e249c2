//===- Device.h - Device descriptions for the cost model --------*- C++ -*-===//
//
// A device description: what the cost model needs to know about one
// accelerator (or CPU) and the link between two of them. Descriptions are
// JSON files (devices/*.json in the source tree, share/tandem/devices in the
// build tree and the install prefix); docs/cost-model.md describes the
// format.
//
//===----------------------------------------------------------------------===//

#ifndef TANDEM_ANALYSIS_DEVICE_H
#define TANDEM_ANALYSIS_DEVICE_H

#include "llvm/ADT/StringRef.h"
#include "llvm/Support/Error.h"

#include <map>
#include <optional>
#include <string>
#include <vector>

namespace tandem::analysis {

/// The dtype keys a description may give a peak for.
llvm::ArrayRef<llvm::StringRef> deviceDTypes();

struct Device {
  /// Short canonical name ("h100-sxm").
  std::string name;
  /// Other names `loadDevice` accepts for the shipped file ("h100").
  std::vector<std::string> aliases;
  /// Where the numbers come from (free text).
  std::string comment;
  /// Peak dense FLOP/s per dtype key (f32, tf32, bf16, f16, f8; f64
  /// optional). f32 is required: ops off the matrix units use it.
  std::map<std::string, double> peakFlops;
  /// Device memory bandwidth, bytes/s.
  double memoryBandwidth = 0.0;
  /// Fixed cost of one kernel (op), seconds.
  double launchOverhead = 0.0;
  /// One direction of the link between two devices: bytes/s and seconds.
  double linkBandwidth = 0.0;
  double linkLatency = 0.0;

  /// Peak FLOP/s for a dtype key, if the description has one.
  std::optional<double> peak(llvm::StringRef dtype) const;
};

/// Parses a description; errors start with `source` and name the field.
llvm::Expected<Device> parseDevice(llvm::StringRef json,
                                   llvm::StringRef source);

/// Directories searched for shipped descriptions, in order: the entries of
/// $TANDEM_DEVICE_PATH (colon-separated), then share/tandem/devices next to
/// the running executable's bin/ (or unittests/) directory.
std::vector<std::string> deviceSearchPath();

/// Loads a description by path (anything naming an existing file, or ending
/// in .json) or by name: `<dir>/<name>.json`, else the file in the search
/// path that lists `name` among its aliases.
llvm::Expected<Device> loadDevice(llvm::StringRef nameOrPath);

} // namespace tandem::analysis

#endif // TANDEM_ANALYSIS_DEVICE_H
