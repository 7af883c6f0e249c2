//===- Device.cpp - Device descriptions for the cost model ----------------===//

#include "tandem/Analysis/Device.h"

#include "llvm/ADT/STLExtras.h"
#include "llvm/ADT/SmallString.h"
#include "llvm/ADT/StringExtras.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/Format.h"
#include "llvm/Support/FormatVariadic.h"
#include "llvm/Support/JSON.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/Path.h"
#include "llvm/Support/Process.h"

#include <cmath>

using namespace llvm;
using namespace tandem::analysis;

ArrayRef<StringRef> tandem::analysis::deviceDTypes() {
  static const StringRef dtypes[] = {"f64", "f32", "tf32", "bf16", "f16", "f8"};
  return dtypes;
}

std::optional<double> Device::peak(StringRef dtype) const {
  auto it = peakFlops.find(dtype.str());
  if (it == peakFlops.end())
    return std::nullopt;
  return it->second;
}

namespace {
/// Reads the fields of one JSON object, remembering the first error.
class Reader {
public:
  Reader(StringRef source) : source(source) {}

  Error fail(const Twine &message) {
    return createStringError(inconvertibleErrorCode(),
                             (source + ": " + message).str());
  }

  /// A number at `path` in `object`; `positive` rejects zero too, since
  /// peaks and bandwidths are divided by.
  Expected<double> number(const json::Object &object, StringRef key,
                          StringRef path, bool positive) {
    const json::Value *value = object.get(key);
    if (!value)
      return fail("missing field '" + path + "'");
    std::optional<double> x = value->getAsNumber();
    if (!x)
      return fail("field '" + path + "' must be a number");
    if (!std::isfinite(*x) || *x < 0 || (positive && *x == 0)) {
      std::string shown;
      raw_string_ostream(shown) << format("%g", *x);
      return fail("field '" + path + "' must be a " +
                  (positive ? "positive" : "non-negative") + " number, got " +
                  shown);
    }
    return *x;
  }

  StringRef source;
};
} // namespace

Expected<Device> tandem::analysis::parseDevice(StringRef text,
                                               StringRef source) {
  Reader reader(source);
  Expected<json::Value> parsed = json::parse(text);
  if (!parsed)
    return reader.fail("not valid JSON: " + toString(parsed.takeError()));
  const json::Object *root = parsed->getAsObject();
  if (!root)
    return reader.fail("expected a JSON object at the top level");

  static const StringRef known[] = {
      "name",       "aliases",          "comment",         "sources",
      "peak_flops", "memory_bandwidth", "launch_overhead", "link"};
  for (const auto &entry : *root)
    if (!is_contained(known, entry.first.str()))
      return reader.fail("unknown field '" + entry.first.str() +
                         "' (expected " +
                         join(ArrayRef<StringRef>(known), ", ") + ")");

  Device device;
  std::optional<StringRef> name = root->getString("name");
  if (!name || name->empty())
    return reader.fail("missing field 'name' (a non-empty string)");
  device.name = name->str();
  if (const json::Value *aliases = root->get("aliases")) {
    const json::Array *list = aliases->getAsArray();
    if (!list)
      return reader.fail("field 'aliases' must be an array of strings");
    for (const json::Value &alias : *list) {
      std::optional<StringRef> s = alias.getAsString();
      if (!s)
        return reader.fail("field 'aliases' must be an array of strings");
      device.aliases.push_back(s->str());
    }
  }
  if (std::optional<StringRef> comment = root->getString("comment"))
    device.comment = comment->str();
  if (const json::Value *sources = root->get("sources"))
    if (!sources->getAsObject())
      return reader.fail("field 'sources' must be an object of strings");

  const json::Object *peaks = root->getObject("peak_flops");
  if (!peaks)
    return reader.fail("missing field 'peak_flops' (an object of FLOP/s per "
                       "dtype)");
  for (const auto &entry : *peaks) {
    std::string dtype = entry.first.str();
    if (!is_contained(deviceDTypes(), dtype))
      return reader.fail("unknown dtype '" + dtype +
                         "' in 'peak_flops' (expected " +
                         join(deviceDTypes(), ", ") + ")");
    Expected<double> x = reader.number(*peaks, dtype, "peak_flops." + dtype,
                                       /*positive=*/true);
    if (!x)
      return x.takeError();
    device.peakFlops[dtype] = *x;
  }
  if (!device.peak("f32"))
    return reader.fail("missing field 'peak_flops.f32' (ops off the matrix "
                       "units run at it)");

  for (auto [key, out, positive] :
       {std::make_tuple("memory_bandwidth", &device.memoryBandwidth, true),
        std::make_tuple("launch_overhead", &device.launchOverhead, false)}) {
    Expected<double> x = reader.number(*root, key, key, positive);
    if (!x)
      return x.takeError();
    *out = *x;
  }

  const json::Object *link = root->getObject("link");
  if (!link)
    return reader.fail("missing field 'link' (an object with bandwidth and "
                       "latency)");
  for (const auto &entry : *link)
    if (!is_contained({"name", "bandwidth", "latency"}, entry.first.str()))
      return reader.fail("unknown field 'link." + entry.first.str() +
                         "' (expected name, bandwidth, latency)");
  Expected<double> linkBandwidth =
      reader.number(*link, "bandwidth", "link.bandwidth", /*positive=*/true);
  if (!linkBandwidth)
    return linkBandwidth.takeError();
  Expected<double> linkLatency =
      reader.number(*link, "latency", "link.latency", /*positive=*/false);
  if (!linkLatency)
    return linkLatency.takeError();
  device.linkBandwidth = *linkBandwidth;
  device.linkLatency = *linkLatency;
  return device;
}

std::vector<std::string> tandem::analysis::deviceSearchPath() {
  std::vector<std::string> dirs;
  if (std::optional<std::string> env =
          sys::Process::GetEnv("TANDEM_DEVICE_PATH")) {
    SmallVector<StringRef> parts;
    StringRef(*env).split(parts, ':', -1, /*KeepEmpty=*/false);
    for (StringRef part : parts)
      dirs.push_back(part.str());
  }
  // Tools live in <prefix>/bin (build tree and install prefix alike) and the
  // gtests in <build>/unittests; the files in <prefix>/share/tandem/devices.
  // The address only identifies this library; on Linux the path comes from
  // /proc/self/exe.
  static int anchor;
  std::string exe = sys::fs::getMainExecutable(nullptr, &anchor);
  if (!exe.empty()) {
    SmallString<256> dir(sys::path::parent_path(sys::path::parent_path(exe)));
    sys::path::append(dir, "share", "tandem", "devices");
    dirs.push_back(std::string(dir));
  }
  return dirs;
}

static Expected<Device> loadFile(StringRef path) {
  ErrorOr<std::unique_ptr<MemoryBuffer>> buffer =
      MemoryBuffer::getFile(path, /*IsText=*/true);
  if (!buffer)
    return createStringError(inconvertibleErrorCode(),
                             "cannot read device description '" + path +
                                 "': " + buffer.getError().message());
  return parseDevice((*buffer)->getBuffer(), path);
}

Expected<Device> tandem::analysis::loadDevice(StringRef nameOrPath) {
  if (nameOrPath.empty())
    return createStringError(inconvertibleErrorCode(), "empty device name");
  if (sys::fs::is_regular_file(nameOrPath) || nameOrPath.ends_with(".json") ||
      nameOrPath.contains('/'))
    return loadFile(nameOrPath);

  std::vector<std::string> dirs = deviceSearchPath();
  for (const std::string &dir : dirs) {
    SmallString<256> path(dir);
    sys::path::append(path, nameOrPath + ".json");
    if (sys::fs::is_regular_file(path))
      return loadFile(path);
  }
  // Aliases: read every shipped description, in a fixed order.
  std::vector<std::string> names;
  for (const std::string &dir : dirs) {
    std::error_code ec;
    std::vector<std::string> files;
    for (sys::fs::directory_iterator it(dir, ec), end; it != end && !ec;
         it.increment(ec))
      if (StringRef(it->path()).ends_with(".json"))
        files.push_back(it->path());
    sort(files);
    for (const std::string &file : files) {
      Expected<Device> device = loadFile(file);
      if (!device)
        return device.takeError();
      if (is_contained(device->aliases, nameOrPath))
        return device;
      std::string entry = device->name;
      if (!device->aliases.empty())
        entry += " (" + join(device->aliases, ", ") + ")";
      names.push_back(entry);
    }
  }
  return createStringError(
      inconvertibleErrorCode(),
      formatv("unknown device '{0}': not a file, and no description in [{1}] "
              "has that name or alias (known: {2})",
              nameOrPath, join(dirs, ", "),
              names.empty() ? std::string("none") : join(names, ", "))
          .str());
}
