//===- DeviceTest.cpp - device descriptions: parser and shipped files -----===//

#include "tandem/Analysis/Device.h"

#include "llvm/ADT/SmallString.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/Path.h"

#include "gtest/gtest.h"

#include <string>

#ifndef TANDEM_TEST_SOURCE_DIR
#error "TANDEM_TEST_SOURCE_DIR must name the source tree"
#endif

using namespace tandem::analysis;

namespace {

const char *kValid = R"({
  "name": "tiny",
  "aliases": ["t"],
  "comment": "for tests",
  "sources": {"peak_flops": "made up"},
  "peak_flops": {"f32": 1e12, "bf16": 4e12},
  "memory_bandwidth": 1e11,
  "launch_overhead": 2e-6,
  "link": {"name": "wire", "bandwidth": 1e9, "latency": 1e-5}
})";

/// `kValid` with `from` replaced by `to` (which must occur once).
std::string with(const std::string &from, const std::string &to) {
  std::string text = kValid;
  size_t pos = text.find(from);
  EXPECT_NE(pos, std::string::npos) << from;
  EXPECT_EQ(text.find(from, pos + 1), std::string::npos) << from;
  return text.replace(pos, from.size(), to);
}

/// The error parsing `text` gives, or "" if it parses.
std::string parseError(const std::string &text) {
  llvm::Expected<Device> device = parseDevice(text, "t.json");
  if (device)
    return "";
  return llvm::toString(device.takeError());
}

TEST(DeviceParser, ReadsEveryField) {
  llvm::Expected<Device> d = parseDevice(kValid, "t.json");
  ASSERT_TRUE(static_cast<bool>(d)) << llvm::toString(d.takeError());
  EXPECT_EQ(d->name, "tiny");
  EXPECT_EQ(d->aliases, std::vector<std::string>{"t"});
  EXPECT_EQ(*d->peak("f32"), 1e12);
  EXPECT_EQ(*d->peak("bf16"), 4e12);
  EXPECT_FALSE(d->peak("f8").has_value());
  EXPECT_EQ(d->memoryBandwidth, 1e11);
  EXPECT_EQ(d->launchOverhead, 2e-6);
  EXPECT_EQ(d->linkBandwidth, 1e9);
  EXPECT_EQ(d->linkLatency, 1e-5);
}

TEST(DeviceParser, MissingFields) {
  EXPECT_EQ(parseError(with("\"memory_bandwidth\": 1e11,", "")),
            "t.json: missing field 'memory_bandwidth'");
  EXPECT_EQ(parseError(with(", \"latency\": 1e-5", "")),
            "t.json: missing field 'link.latency'");
  EXPECT_EQ(parseError(with("\"name\": \"tiny\",", "")),
            "t.json: missing field 'name' (a non-empty string)");
  EXPECT_EQ(parseError(with("\"f32\": 1e12, ", "")),
            "t.json: missing field 'peak_flops.f32' (ops off the matrix units "
            "run at it)");
}

TEST(DeviceParser, BadNumbers) {
  EXPECT_EQ(parseError(with("\"latency\": 1e-5", "\"latency\": -1")),
            "t.json: field 'link.latency' must be a non-negative number, got "
            "-1");
  // Peaks and bandwidths are divided by: zero is rejected too.
  EXPECT_EQ(
      parseError(with("\"memory_bandwidth\": 1e11", "\"memory_bandwidth\": 0")),
      "t.json: field 'memory_bandwidth' must be a positive number, got 0");
  EXPECT_EQ(parseError(with("\"bf16\": 4e12", "\"bf16\": \"fast\"")),
            "t.json: field 'peak_flops.bf16' must be a number");
}

TEST(DeviceParser, UnknownNames) {
  EXPECT_EQ(parseError(with("\"bf16\": 4e12", "\"fp32\": 4e12")),
            "t.json: unknown dtype 'fp32' in 'peak_flops' (expected f64, f32, "
            "tf32, bf16, f16, f8)");
  EXPECT_EQ(parseError(with("\"comment\"", "\"coment\"")),
            "t.json: unknown field 'coment' (expected name, aliases, comment, "
            "sources, peak_flops, memory_bandwidth, launch_overhead, link)");
  EXPECT_NE(parseError("{\"name\": ").find("t.json: not valid JSON"),
            std::string::npos);
  EXPECT_EQ(parseError("[1]"),
            "t.json: expected a JSON object at the top level");
}

/// Every shipped description parses and is named after its file.
TEST(ShippedDevices, ParseAndAreNamedAfterTheirFiles) {
  llvm::SmallString<256> dir(TANDEM_TEST_SOURCE_DIR);
  llvm::sys::path::append(dir, "devices");
  int count = 0;
  std::error_code ec;
  for (llvm::sys::fs::directory_iterator it(dir, ec), end; it != end && !ec;
       it.increment(ec)) {
    if (llvm::sys::path::extension(it->path()) != ".json")
      continue;
    ++count;
    llvm::Expected<Device> d = loadDevice(it->path());
    ASSERT_TRUE(static_cast<bool>(d)) << llvm::toString(d.takeError());
    EXPECT_EQ(d->name, llvm::sys::path::stem(it->path()).str());
    for (const char *dtype : {"f32", "tf32", "bf16", "f16", "f8"})
      EXPECT_TRUE(d->peak(dtype).has_value()) << d->name << " " << dtype;
  }
  EXPECT_FALSE(ec) << ec.message();
  EXPECT_EQ(count, 3);
}

/// The shorthands resolve through the build tree's share/tandem/devices.
TEST(ShippedDevices, ShorthandsResolve) {
  llvm::Expected<Device> h100 = loadDevice("h100");
  ASSERT_TRUE(static_cast<bool>(h100)) << llvm::toString(h100.takeError());
  EXPECT_EQ(h100->name, "h100-sxm");
  EXPECT_EQ(*h100->peak("bf16"), 989.5e12);
  EXPECT_EQ(h100->memoryBandwidth, 3.35e12);
  llvm::Expected<Device> h200 = loadDevice("h200-sxm");
  ASSERT_TRUE(static_cast<bool>(h200)) << llvm::toString(h200.takeError());
  EXPECT_EQ(h200->memoryBandwidth, 4.8e12);
  llvm::Expected<Device> cpu = loadDevice("cpu");
  ASSERT_TRUE(static_cast<bool>(cpu)) << llvm::toString(cpu.takeError());
  EXPECT_EQ(cpu->name, "cpu-2core");

  llvm::Expected<Device> none = loadDevice("tpu");
  ASSERT_FALSE(static_cast<bool>(none));
  std::string message = llvm::toString(none.takeError());
  EXPECT_NE(message.find("unknown device 'tpu'"), std::string::npos) << message;
  EXPECT_NE(message.find("h100-sxm (h100)"), std::string::npos) << message;

  llvm::Expected<Device> missing = loadDevice("/nonexistent/x.json");
  ASSERT_FALSE(static_cast<bool>(missing));
  EXPECT_NE(llvm::toString(missing.takeError())
                .find("cannot read device description '/nonexistent/x.json'"),
            std::string::npos);
}

} // namespace
