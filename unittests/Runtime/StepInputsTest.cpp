//===- StepInputsTest.cpp - a training run's step inputs ------------------===//

#include "tandem/Runtime/StepInputs.h"

#include <gtest/gtest.h>

#include <cstring>
#include <numeric>

using namespace tandem;
using namespace tandem::runtime;

namespace {

InputInfo tokenInput(int64_t index, InputRole role, int64_t batch, int64_t seq,
                     std::optional<int64_t> vocabulary = 64) {
  InputInfo in;
  in.index = index;
  in.dtype = ElementType::I32;
  in.microbatchShape = {batch, seq};
  in.stepShape = {batch, seq};
  in.microbatchBytes = batch * seq * 4;
  in.role = role;
  in.vocabulary = vocabulary;
  return in;
}

std::vector<int32_t> stream(size_t n, int32_t modulo) {
  std::vector<int32_t> v(n);
  for (size_t i = 0; i < n; ++i)
    v[i] = static_cast<int32_t>((i * 7 + 3) % modulo);
  return v;
}

std::vector<int32_t> values(const Buffer *buffer) {
  std::vector<int32_t> v(buffer->size() / 4);
  std::memcpy(v.data(), buffer->data(), buffer->size());
  return v;
}

} // namespace

TEST(StepInputs, TargetsAreTokensShiftedByOne) {
  std::string error;
  auto inputs = StepInputs::create({tokenInput(0, InputRole::Tokens, 4, 8),
                                    tokenInput(1, InputRole::Targets, 4, 8)},
                                   stream(4000, 64), StepInputOptions{}, error);
  ASSERT_TRUE(inputs) << error;
  EXPECT_EQ(inputs->tokensPerStep(), 32);
  const auto &step = inputs->get(5);
  std::vector<int32_t> tokens = values(step.at(0)),
                       targets = values(step.at(1));
  // The stream is i -> (7i + 3) mod 64, so each target follows its token.
  for (size_t i = 0; i < tokens.size(); ++i)
    EXPECT_EQ(targets[i], (tokens[i] + 7) % 64) << i;
}

TEST(StepInputs, StepKDoesNotDependOnEarlierCalls) {
  std::string error;
  std::vector<InputInfo> wanted = {tokenInput(0, InputRole::Tokens, 2, 4),
                                   tokenInput(1, InputRole::Targets, 2, 4)};
  StepInputOptions options;
  options.seed = 11;
  auto a = StepInputs::create(wanted, stream(1000, 50), options, error);
  auto b = StepInputs::create(wanted, stream(1000, 50), options, error);
  ASSERT_TRUE(a && b) << error;
  for (uint64_t k = 0; k < 7; ++k)
    a->get(k);
  EXPECT_EQ(values(a->get(7).at(0)), values(b->get(7).at(0)));
  EXPECT_NE(values(a->get(7).at(0)), values(a->get(8).at(0)));
  // One rank that holds only the targets sees the same batch.
  auto targetsOnly =
      StepInputs::create({tokenInput(1, InputRole::Targets, 2, 4)},
                         stream(1000, 50), options, error);
  ASSERT_TRUE(targetsOnly) << error;
  EXPECT_EQ(values(targetsOnly->get(3).at(1)), values(b->get(3).at(1)));
}

TEST(StepInputs, OtherInputsAreGeneratedDeterministically) {
  InputInfo x;
  x.index = 2;
  x.dtype = ElementType::F32;
  x.microbatchShape = x.stepShape = {3, 5};
  x.microbatchBytes = 60;
  InputInfo labels = tokenInput(3, InputRole::Other, 3, 1, 10);
  std::string error;
  auto inputs = StepInputs::create({x, labels}, stream(100, 10), {}, error);
  ASSERT_TRUE(inputs) << error;
  const auto &first = inputs->get(0);
  std::vector<float> a(15);
  std::memcpy(a.data(), first.at(2)->data(), 60);
  double sumSquares = 0;
  for (float v : a)
    sumSquares += v * v;
  EXPECT_GT(sumSquares, 0.0);
  for (int32_t label : values(first.at(3))) {
    EXPECT_GE(label, 0);
    EXPECT_LT(label, 10);
  }
  // Without token inputs nothing changes from step to step.
  std::vector<float> b(15);
  std::memcpy(b.data(), inputs->get(9).at(2)->data(), 60);
  EXPECT_EQ(a, b);
}

TEST(StepInputs, Errors) {
  std::string error;
  EXPECT_FALSE(StepInputs::create({tokenInput(0, InputRole::Tokens, 2, 4, 8)},
                                  stream(100, 64), {}, error));
  EXPECT_NE(error.find("outside the model's vocabulary [0, 8)"),
            std::string::npos)
      << error;

  EXPECT_FALSE(StepInputs::create({tokenInput(0, InputRole::Tokens, 2, 4),
                                   tokenInput(1, InputRole::Targets, 2, 5)},
                                  stream(100, 64), {}, error));
  EXPECT_NE(error.find("tokens and targets must agree"), std::string::npos)
      << error;

  EXPECT_FALSE(StepInputs::create({tokenInput(0, InputRole::Ambiguous, 2, 4)},
                                  stream(100, 64), {}, error));
  EXPECT_NE(error.find("feeds both an embedding"), std::string::npos) << error;

  EXPECT_FALSE(StepInputs::create({tokenInput(0, InputRole::Tokens, 2, 4)},
                                  stream(3, 64), {}, error));
  EXPECT_NE(error.find("training part"), std::string::npos) << error;

  InputInfo a = tokenInput(0, InputRole::Tokens, 2, 4);
  InputInfo b = a;
  b.role = InputRole::Targets;
  EXPECT_FALSE(StepInputs::create({a, b}, stream(100, 64), {}, error));
  EXPECT_NE(error.find("described differently by two ranks"), std::string::npos)
      << error;
}

TEST(StepInputs, HeldOutBatchesAreTheTailInOrder) {
  std::vector<int32_t> stream(1000);
  std::iota(stream.begin(), stream.end(), 0);
  StepInputOptions options;
  options.heldOut = true;
  std::string error;
  auto inputs =
      StepInputs::create({tokenInput(0, InputRole::Tokens, 2, 4, std::nullopt)},
                         stream, options, error);
  ASSERT_TRUE(inputs) << error;
  auto heldOut = data::splitHeldOut(stream, 0.1).heldOut;
  // Batch 1 holds windows 2 and 3 of the tail, unshuffled.
  std::vector<int32_t> tokens = values(inputs->get(1).at(0));
  for (size_t i = 0; i < tokens.size(); ++i)
    EXPECT_EQ(tokens[i], heldOut[2 * 4 + i]) << i;
}

TEST(StepInputs, TrainingAndHeldOutShareOneStream) {
  auto stream = std::make_shared<const std::vector<int32_t>>([] {
    std::vector<int32_t> tokens(1000);
    std::iota(tokens.begin(), tokens.end(), 0);
    return tokens;
  }());
  std::string error;
  StepInputOptions train, heldOut;
  heldOut.heldOut = true;
  std::vector<InputInfo> wanted = {
      tokenInput(0, InputRole::Tokens, 2, 4, std::nullopt)};
  auto a = StepInputs::create(wanted, stream, train, error);
  auto b = StepInputs::create(wanted, stream, heldOut, error);
  ASSERT_TRUE(a && b) << error;
  EXPECT_EQ(stream.use_count(), 3) << "each sampler holds the stream, no copy";
  // The same batches as from a copy of the tokens.
  auto copyA = StepInputs::create(wanted, *stream, train, error);
  auto copyB = StepInputs::create(wanted, *stream, heldOut, error);
  ASSERT_TRUE(copyA && copyB) << error;
  for (uint64_t step = 0; step < 5; ++step) {
    EXPECT_EQ(values(a->get(step).at(0)), values(copyA->get(step).at(0)));
    EXPECT_EQ(values(b->get(step).at(0)), values(copyB->get(step).at(0)));
  }
}
