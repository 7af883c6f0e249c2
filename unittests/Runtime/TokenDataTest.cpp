//===- TokenDataTest.cpp - token data and batches -------------------------===//

#include "tandem/Runtime/TokenData.h"

#include <gtest/gtest.h>

#include <fstream>
#include <numeric>
#include <set>

using namespace tandem::data;

namespace {
std::vector<int32_t> iota(size_t n) {
  std::vector<int32_t> v(n);
  std::iota(v.begin(), v.end(), 0);
  return v;
}
} // namespace

TEST(TokenData, TextFilesAreBytes) {
  std::string path = ::testing::TempDir() + "tandem-text.txt";
  std::ofstream(path) << "Hi\xff";
  std::string error;
  auto tokens = readTokens(path, error);
  ASSERT_TRUE(tokens) << error;
  EXPECT_EQ(*tokens, (std::vector<int32_t>{'H', 'i', 255}));
}

TEST(TokenData, BinaryRoundTripPicksWidth) {
  for (std::vector<int32_t> tokens :
       {std::vector<int32_t>{1, 2, 255}, std::vector<int32_t>{0, 50256, 7},
        std::vector<int32_t>{70000, 3}}) {
    std::string path = ::testing::TempDir() + "tandem-tokens.bin";
    std::string error;
    ASSERT_TRUE(writeTokens(path, tokens, error)) << error;
    auto back = readTokens(path, error);
    ASSERT_TRUE(back) << error;
    EXPECT_EQ(*back, tokens);
  }
}

TEST(TokenData, TruncatedBinaryIsAnError) {
  std::string path = ::testing::TempDir() + "tandem-trunc.bin";
  std::string error;
  ASSERT_TRUE(writeTokens(path, {1000, 2000, 3000}, error));
  {
    std::ifstream in(path, std::ios::binary);
    std::string bytes((std::istreambuf_iterator<char>(in)), {});
    std::ofstream(path, std::ios::binary | std::ios::trunc)
        << bytes.substr(0, bytes.size() - 1);
  }
  EXPECT_FALSE(readTokens(path, error));
  EXPECT_NE(error.find("truncated"), std::string::npos) << error;
  EXPECT_FALSE(readTokens("/nonexistent/tokens.bin", error));
  EXPECT_NE(error.find("cannot open"), std::string::npos);
}

TEST(TokenData, VocabularyCheckNamesTheToken) {
  std::string error;
  EXPECT_TRUE(checkVocabulary({0, 255}, 256, error));
  EXPECT_FALSE(checkVocabulary({0, 300, 1}, 256, error));
  EXPECT_NE(error.find("token 300 at position 1"), std::string::npos) << error;
}

TEST(TokenData, HeldOutIsTheTail) {
  Split split = splitHeldOut(iota(100), 0.1);
  EXPECT_EQ(split.train.size(), 90u);
  EXPECT_EQ(split.heldOut.front(), 90);
  EXPECT_EQ(split.heldOut.back(), 99);
}

TEST(TokenData, WindowsAreShiftedTargets) {
  std::string error;
  auto sampler = BatchSampler::create(iota(33), 2, 8, 0, false, error);
  ASSERT_TRUE(sampler) << error;
  EXPECT_EQ(sampler->numWindows(), 4);
  std::vector<int32_t> in(16), tgt(16);
  sampler->getBatch(1, in.data(), tgt.data());
  // Unshuffled: batch 1 holds windows 2 and 3.
  EXPECT_EQ(in[0], 16);
  EXPECT_EQ(in[8], 24);
  for (int i = 0; i < 16; ++i)
    EXPECT_EQ(tgt[i], in[i] + 1);
}

TEST(TokenData, ShuffleIsAPermutationPerEpochAndDeterministic) {
  std::string error;
  auto a = BatchSampler::create(iota(1001), 5, 10, 42, true, error);
  auto b = BatchSampler::create(iota(1001), 5, 10, 42, true, error);
  auto c = BatchSampler::create(iota(1001), 5, 10, 43, true, error);
  ASSERT_TRUE(a && b && c);
  std::vector<int32_t> in(50), tgt(50), in2(50), in3(50);
  std::set<int32_t> epochStarts;
  bool differs = false;
  for (uint64_t k = 0; k < 20; ++k) { // 20 batches x 5 = one epoch of 100
    a->getBatch(k, in.data(), tgt.data());
    c->getBatch(k, in3.data(), tgt.data());
    differs |= in != in3;
    for (int w = 0; w < 5; ++w)
      epochStarts.insert(in[w * 10]);
  }
  EXPECT_EQ(epochStarts.size(), 100u) << "an epoch visits every window once";
  EXPECT_TRUE(differs) << "a different seed gives a different order";
  // Random access: batch 37 without its predecessors equals the sequential.
  a->getBatch(37, in.data(), tgt.data());
  b->getBatch(37, in2.data(), tgt.data());
  EXPECT_EQ(in, in2);
}

TEST(TokenData, TooLittleDataIsAnError) {
  std::string error;
  EXPECT_FALSE(BatchSampler::create(iota(8), 1, 8, 0, false, error));
  EXPECT_NE(error.find("data too small"), std::string::npos);
  EXPECT_FALSE(BatchSampler::create(iota(100), 0, 8, 0, false, error));
}

TEST(TokenData, RangeOfASharedStreamEqualsACopyOfIt) {
  std::string error;
  std::vector<int32_t> all = iota(1000);
  size_t cut = heldOutStart(all.size(), 0.1);
  EXPECT_EQ(cut, splitHeldOut(all, 0.1).train.size());
  auto stream = std::make_shared<const std::vector<int32_t>>(all);
  auto shared =
      BatchSampler::create(stream, cut, all.size(), 3, 7, 5, true, error);
  auto copied = BatchSampler::create(splitHeldOut(all, 0.1).heldOut, 3, 7, 5,
                                     true, error);
  ASSERT_TRUE(shared && copied) << error;
  // The sampler holds the stream itself: no copy of the tokens.
  EXPECT_EQ(stream.use_count(), 2);
  EXPECT_EQ(shared->numWindows(), copied->numWindows());
  std::vector<int32_t> a(21), b(21), ta(21), tb(21);
  for (uint64_t k = 0; k < 12; ++k) { // past the end of an epoch
    shared->getBatch(k, a.data(), ta.data());
    copied->getBatch(k, b.data(), tb.data());
    EXPECT_EQ(a, b) << k;
    EXPECT_EQ(ta, tb) << k;
  }
  EXPECT_FALSE(BatchSampler::create(stream, 10, 5, 1, 2, 0, false, error));
  EXPECT_NE(error.find("outside the stream"), std::string::npos) << error;
  EXPECT_FALSE(BatchSampler::create(stream, 0, 1001, 1, 2, 0, false, error));
  EXPECT_FALSE(BatchSampler::create(nullptr, 0, 0, 1, 2, 0, false, error));
}
