//===- SafetensorsTest.cpp - safetensors reader and writer ----------------===//

#include "tandem/Runtime/Safetensors.h"

#include <gtest/gtest.h>

#include <cstdio>
#include <cstring>
#include <fstream>

using namespace tandem::st;

namespace {

std::vector<uint8_t> image(const std::string &header,
                           const std::vector<uint8_t> &data) {
  std::vector<uint8_t> bytes;
  uint64_t n = header.size();
  for (int i = 0; i < 8; ++i)
    bytes.push_back(static_cast<uint8_t>(n >> (8 * i)));
  bytes.insert(bytes.end(), header.begin(), header.end());
  bytes.insert(bytes.end(), data.begin(), data.end());
  return bytes;
}

Tensor f32Tensor(std::vector<int64_t> shape, std::vector<float> values) {
  Tensor t;
  t.dtype = DType::F32;
  t.shape = std::move(shape);
  t.data.resize(values.size() * 4);
  std::memcpy(t.data.data(), values.data(), t.data.size());
  return t;
}

std::string parseError(const std::vector<uint8_t> &bytes) {
  std::string error;
  EXPECT_FALSE(parse(bytes, "x.safetensors", error).has_value());
  return error;
}

} // namespace

TEST(Safetensors, ParsesAHandWrittenFile) {
  // 1.0f and 2.0f little-endian, as the format stores them.
  std::vector<uint8_t> data = {0, 0, 0x80, 0x3f, 0, 0, 0, 0x40};
  std::string error;
  auto file = parse(
      image(R"({"__metadata__":{"step":"3"},"a":{"dtype":"F32","shape":[2],)"
            R"("data_offsets":[0,8]}})",
            data),
      "x", error);
  ASSERT_TRUE(file) << error;
  ASSERT_EQ(file->tensors.count("a"), 1u);
  const Tensor &a = file->tensors.at("a");
  EXPECT_EQ(a.shape, std::vector<int64_t>{2});
  float values[2];
  std::memcpy(values, a.data.data(), 8);
  EXPECT_EQ(values[0], 1.0f);
  EXPECT_EQ(values[1], 2.0f);
  EXPECT_EQ(file->metadata.at("step"), "3");
}

TEST(Safetensors, RoundTripsEveryDType) {
  File file;
  file.metadata["format"] = "pt";
  file.tensors["w"] = f32Tensor({2, 3}, {1, 2, 3, 4, 5, 6});
  for (DType dtype :
       {DType::F64, DType::F16, DType::BF16, DType::F8_E4M3, DType::F8_E5M2,
        DType::I64, DType::I32, DType::I8, DType::U8}) {
    Tensor t;
    t.dtype = dtype;
    t.shape = {3};
    for (size_t i = 0; i < 3 * dtypeSize(dtype); ++i)
      t.data.push_back(static_cast<uint8_t>(i * 7 + 1));
    file.tensors[std::string(dtypeName(dtype))] = t;
  }
  std::vector<uint8_t> bytes = serialize(file);
  uint64_t headerSize = 0;
  std::memcpy(&headerSize, bytes.data(), 8);
  EXPECT_EQ((8 + headerSize) % 8, 0u) << "data section must be 8-aligned";
  std::string error;
  auto back = parse(bytes, "mem", error);
  ASSERT_TRUE(back) << error;
  EXPECT_EQ(back->metadata, file.metadata);
  ASSERT_EQ(back->tensors.size(), file.tensors.size());
  for (const auto &[name, t] : file.tensors) {
    EXPECT_EQ(back->tensors.at(name).dtype, t.dtype) << name;
    EXPECT_EQ(back->tensors.at(name).shape, t.shape) << name;
    EXPECT_EQ(back->tensors.at(name).data, t.data) << name;
  }
}

TEST(Safetensors, FileRoundTripIsAtomic) {
  std::string path = ::testing::TempDir() + "tandem-st-test.safetensors";
  File file;
  file.tensors["x"] = f32Tensor({1}, {42.0f});
  std::string error;
  ASSERT_TRUE(writeFile(path, file, error)) << error;
  std::ifstream tmp(path + ".tmp");
  EXPECT_FALSE(tmp.good()) << "temporary file left behind";
  auto back = readFile(path, error);
  ASSERT_TRUE(back) << error;
  EXPECT_EQ(back->tensors.at("x").data, file.tensors.at("x").data);
  std::remove(path.c_str());
}

TEST(Safetensors, RejectsTruncatedFiles) {
  File file;
  file.tensors["x"] = f32Tensor({4}, {1, 2, 3, 4});
  std::vector<uint8_t> bytes = serialize(file);
  std::vector<uint8_t> cut(bytes.begin(), bytes.end() - 3);
  EXPECT_NE(parseError(cut).find("truncated"), std::string::npos);
  EXPECT_NE(parseError({1, 2, 3}).find("truncated"), std::string::npos);
  std::vector<uint8_t> headerCut(bytes.begin(), bytes.begin() + 12);
  EXPECT_NE(parseError(headerCut).find("truncated"), std::string::npos);
}

TEST(Safetensors, RejectsBadHeaders) {
  std::vector<uint8_t> huge = {0, 0, 0, 0, 0, 0, 0, 0x10};
  EXPECT_NE(parseError(huge).find("exceeds"), std::string::npos);
  EXPECT_NE(parseError(image("[1,2]", {})).find("not a JSON object"),
            std::string::npos);
  EXPECT_NE(parseError(image("{\"a\":", {})).find("not a JSON object"),
            std::string::npos);
  EXPECT_NE(
      parseError(
          image(R"({"a":{"dtype":"F17","shape":[1],"data_offsets":[0,4]}})",
                {0, 0, 0, 0}))
          .find("unknown dtype 'F17'"),
      std::string::npos);
  EXPECT_NE(parseError(image(R"({"a":{"shape":[1],"data_offsets":[0,4]}})",
                             {0, 0, 0, 0}))
                .find("'dtype'"),
            std::string::npos);
  EXPECT_NE(
      parseError(
          image(R"({"a":{"dtype":"F32","shape":[2],"data_offsets":[0,4]}})",
                {0, 0, 0, 0}))
          .find("needs 8 bytes"),
      std::string::npos);
  EXPECT_NE(
      parseError(
          image(R"({"a":{"dtype":"F32","shape":[-1],"data_offsets":[0,4]}})",
                {0, 0, 0, 0}))
          .find("non-negative"),
      std::string::npos);
  EXPECT_NE(
      parseError(image(R"({"__metadata__":{"k":1}})", {})).find("not a string"),
      std::string::npos);
}

TEST(Safetensors, RejectsGapsOverlapsAndTrailingBytes) {
  std::string two = R"({"a":{"dtype":"U8","shape":[2],"data_offsets":[0,2]},)"
                    R"("b":{"dtype":"U8","shape":[2],"data_offsets":[1,3]}})";
  EXPECT_NE(parseError(image(two, {1, 2, 3})).find("without gaps or overlaps"),
            std::string::npos);
  std::string one = R"({"a":{"dtype":"U8","shape":[2],"data_offsets":[0,2]}})";
  EXPECT_NE(parseError(image(one, {1, 2, 3})).find("trailing"),
            std::string::npos);
  EXPECT_NE(parseError(image(one, {1})).find("outside"), std::string::npos);
}

TEST(Safetensors, WriteRejectsInconsistentTensor) {
  File file;
  Tensor t = f32Tensor({3}, {1, 2});
  file.tensors["bad"] = t;
  std::string error;
  EXPECT_FALSE(
      writeFile(::testing::TempDir() + "never.safetensors", file, error));
  EXPECT_NE(error.find("tensor 'bad'"), std::string::npos);
}

TEST(Safetensors, MissingFileIsAnError) {
  std::string error;
  EXPECT_FALSE(readFile("/nonexistent/dir/x.safetensors", error));
  EXPECT_NE(error.find("cannot open"), std::string::npos);
}
