//===- ArrayDataTest.cpp - training data as arrays of step inputs ---------===//

#include "tandem/Runtime/ArrayData.h"
#include "tandem/Runtime/StepInputs.h"

#include <gtest/gtest.h>

#include <cstring>

using namespace tandem;
using namespace tandem::data;
using namespace tandem::runtime;

namespace {

/// A tensor of `shape` whose element e is `base` + e (f32, or i32).
st::Tensor counting(st::DType dtype, std::vector<int64_t> shape,
                    int32_t base = 0) {
  st::Tensor tensor;
  tensor.dtype = dtype;
  tensor.shape = shape;
  int64_t count = tensor.numElements();
  tensor.data.resize(count * 4);
  for (int64_t e = 0; e < count; ++e) {
    if (dtype == st::DType::F32) {
      float value = static_cast<float>(base + e);
      std::memcpy(tensor.data.data() + 4 * e, &value, 4);
    } else {
      int32_t value = static_cast<int32_t>(base + e);
      std::memcpy(tensor.data.data() + 4 * e, &value, 4);
    }
  }
  return tensor;
}

/// A features input x (step shape [b, 3], f32) and labels y ([b], i32),
/// as a program's manifest lists them.
std::vector<InputInfo> mlpInputs(int64_t b) {
  InputInfo x;
  x.index = 0;
  x.dtype = ElementType::F32;
  x.stepShape = {b, 3};
  x.microbatchShape = {b, 3};
  InputInfo y;
  y.index = 1;
  y.dtype = ElementType::I32;
  y.stepShape = {b};
  y.microbatchShape = {b};
  y.role = InputRole::Targets;
  // Labels count from 1000 (mlpFile), apart from x's values.
  y.vocabulary = 2000;
  return {x, y};
}

/// n batches of mlpInputs(b): x counts from 0, y from 1000.
st::File mlpFile(int64_t n, int64_t b) {
  st::File file;
  file.tensors["input.0"] = counting(st::DType::F32, {n * b, 3});
  file.tensors["input.1"] = counting(st::DType::I32, {n * b}, 1000);
  return file;
}

std::vector<float> floats(const Buffer *buffer) {
  std::vector<float> v(buffer->size() / 4);
  std::memcpy(v.data(), buffer->data(), buffer->size());
  return v;
}

std::vector<int32_t> ints(const Buffer *buffer) {
  std::vector<int32_t> v(buffer->size() / 4);
  std::memcpy(v.data(), buffer->data(), buffer->size());
  return v;
}

std::optional<ArrayData> make(st::File file, const std::vector<InputInfo> &in,
                              std::string &error) {
  return ArrayData::create(std::move(file), "arrays.st", arrayInputsOf(in),
                           error);
}

} // namespace

TEST(ArrayData, StepKReadsBatchKModN) {
  std::string error;
  auto arrays = make(mlpFile(3, 2), mlpInputs(2), error);
  ASSERT_TRUE(arrays) << error;
  EXPECT_EQ(arrays->numBatches(), 3);
  auto inputs = StepInputs::create(mlpInputs(2), *arrays, {}, error);
  ASSERT_TRUE(inputs) << error;
  EXPECT_EQ(inputs->tokensPerStep(), 0);
  for (uint64_t k : {0, 1, 2, 3, 7}) {
    const auto &step = inputs->get(k);
    int64_t batch = k % 3;
    // Rows 2·batch and 2·batch + 1: elements 6·batch .. 6·batch + 5 of x.
    std::vector<float> x = floats(step.at(0));
    ASSERT_EQ(x.size(), 6u);
    for (int e = 0; e < 6; ++e)
      EXPECT_EQ(x[e], 6 * batch + e) << k;
    EXPECT_EQ(ints(step.at(1)),
              (std::vector<int32_t>{static_cast<int32_t>(1000 + 2 * batch),
                                    static_cast<int32_t>(1001 + 2 * batch)}))
        << k;
  }
}

TEST(ArrayData, IndependentOfSeedAndOfEarlierSteps) {
  std::string error;
  auto arrays = make(mlpFile(4, 2), mlpInputs(2), error);
  ASSERT_TRUE(arrays) << error;
  StepInputOptions seeded;
  seeded.seed = 99;
  auto a = StepInputs::create(mlpInputs(2), *arrays, {}, error);
  auto b = StepInputs::create(mlpInputs(2), *arrays, seeded, error);
  ASSERT_TRUE(a && b) << error;
  std::vector<float> direct = floats(b->get(6).at(0));
  for (uint64_t k = 0; k < 6; ++k)
    a->get(k);
  EXPECT_EQ(floats(a->get(6).at(0)), direct);
  // One rank that holds only the labels sees the same batch.
  auto labelsOnly =
      StepInputs::create({mlpInputs(2)[1]}, *arrays, StepInputOptions{}, error);
  ASSERT_TRUE(labelsOnly) << error;
  EXPECT_EQ(ints(labelsOnly->get(5).at(1)), ints(a->get(5).at(1)));
}

TEST(ArrayData, HeldOutBatchesAreTheLastRoundFN) {
  std::string error;
  // n = 10, F = 0.25: round(2.5) = 3 (half away from zero) held out.
  auto arrays = make(mlpFile(10, 1), mlpInputs(1), error);
  ASSERT_TRUE(arrays) << error;
  auto split = splitArrays(*arrays, /*holdOut=*/true, 0.25, error);
  ASSERT_TRUE(split) << error;
  EXPECT_EQ(split->trainBatches, 7);
  EXPECT_EQ(split->heldOutBatches, 3);
  // Without a held-out loss every batch trains.
  split = splitArrays(*arrays, /*holdOut=*/false, 0.25, error);
  ASSERT_TRUE(split) << error;
  EXPECT_EQ(split->trainBatches, 10);
  EXPECT_EQ(split->heldOutBatches, 0);
  // A small fraction still holds out one batch.
  split = splitArrays(*arrays, true, 0.01, error);
  ASSERT_TRUE(split) << error;
  EXPECT_EQ(split->heldOutBatches, 1);

  StepInputOptions train;
  train.holdOut = true;
  train.heldOutFraction = 0.25;
  StepInputOptions heldOut = train;
  heldOut.heldOut = true;
  auto t = StepInputs::create(mlpInputs(1), *arrays, train, error);
  auto h = StepInputs::create(mlpInputs(1), *arrays, heldOut, error);
  ASSERT_TRUE(t && h) << error;
  // Training cycles over batches 0..6, the held-out loss over 7..9.
  EXPECT_EQ(ints(t->get(6).at(1)), std::vector<int32_t>{1006});
  EXPECT_EQ(ints(t->get(7).at(1)), std::vector<int32_t>{1000});
  EXPECT_EQ(ints(h->get(0).at(1)), std::vector<int32_t>{1007});
  EXPECT_EQ(ints(h->get(2).at(1)), std::vector<int32_t>{1009});
  EXPECT_EQ(ints(h->get(3).at(1)), std::vector<int32_t>{1007});
}

TEST(ArrayData, NoTrainingBatchLeftIsAnError) {
  std::string error;
  auto arrays = make(mlpFile(1, 2), mlpInputs(2), error);
  ASSERT_TRUE(arrays) << error;
  EXPECT_FALSE(splitArrays(*arrays, true, 0.1, error));
  EXPECT_EQ(error, "arrays.st holds 1 step batch: holding out the last 1 for "
                   "the held-out loss (fraction 0.100000) leaves none to "
                   "train on");
  StepInputOptions options;
  options.holdOut = true;
  EXPECT_FALSE(StepInputs::create(mlpInputs(2), *arrays, options, error));
  EXPECT_NE(error.find("leaves none to train on"), std::string::npos);
  arrays = make(mlpFile(4, 2), mlpInputs(2), error);
  ASSERT_TRUE(arrays) << error;
  EXPECT_FALSE(splitArrays(*arrays, true, 0.9, error));
  EXPECT_NE(error.find("holds 4 step batches: holding out the last 4"),
            std::string::npos)
      << error;
  EXPECT_FALSE(splitArrays(*arrays, true, 1.0, error));
  EXPECT_EQ(error, "the held-out fraction must be in (0, 1), found 1.000000");
}

TEST(ArrayData, MissingTensor) {
  std::string error;
  st::File file = mlpFile(2, 2);
  file.tensors.erase("input.1");
  EXPECT_FALSE(make(std::move(file), mlpInputs(2), error));
  EXPECT_EQ(error, "arrays.st: no tensor 'input.1' for step input 1 (I32, "
                   "shape [n*2]: n batches of [2])");
}

TEST(ArrayData, WrongDtype) {
  std::string error;
  st::File file = mlpFile(2, 2);
  file.tensors["input.1"] = counting(st::DType::F32, {4});
  EXPECT_FALSE(make(std::move(file), mlpInputs(2), error));
  EXPECT_EQ(error,
            "arrays.st: tensor 'input.1' is F32, but step input 1 is I32");
}

TEST(ArrayData, WrongTrailingShape) {
  std::string error;
  st::File file = mlpFile(2, 2);
  file.tensors["input.0"] = counting(st::DType::F32, {4, 4});
  EXPECT_FALSE(make(std::move(file), mlpInputs(2), error));
  EXPECT_EQ(error, "arrays.st: tensor 'input.0' has shape [4, 4], but step "
                   "input 0 needs [n*2, 3] (n batches of [2, 3])");
  file = mlpFile(2, 2);
  file.tensors["input.0"] = counting(st::DType::F32, {12});
  EXPECT_FALSE(make(std::move(file), mlpInputs(2), error));
  EXPECT_NE(error.find("has shape [12], but step input 0 needs [n*2, 3]"),
            std::string::npos)
      << error;
}

TEST(ArrayData, RowsNotAMultipleOfTheStepBatch) {
  std::string error;
  st::File file = mlpFile(2, 2);
  file.tensors["input.0"] = counting(st::DType::F32, {5, 3});
  EXPECT_FALSE(make(std::move(file), mlpInputs(2), error));
  EXPECT_EQ(error, "arrays.st: tensor 'input.0' has 5 rows, not a positive "
                   "multiple of step input 0's step batch of 2 rows (step "
                   "shape [2, 3])");
  file = mlpFile(2, 2);
  file.tensors["input.0"] = counting(st::DType::F32, {0, 3});
  EXPECT_FALSE(make(std::move(file), mlpInputs(2), error));
  EXPECT_NE(error.find("has 0 rows, not a positive multiple"),
            std::string::npos)
      << error;
}

TEST(ArrayData, DifferingBatchCounts) {
  std::string error;
  st::File file = mlpFile(2, 2);
  file.tensors["input.1"] = counting(st::DType::I32, {6});
  EXPECT_FALSE(make(std::move(file), mlpInputs(2), error));
  EXPECT_EQ(error, "arrays.st: tensor 'input.1' holds 3 step batches (6 rows "
                   "of 2), but 'input.0' holds 2 (4 rows of 2): every input "
                   "needs the same number of batches");
}

TEST(ArrayData, ScalarInputHasNoBatch) {
  std::string error;
  std::vector<InputInfo> inputs = mlpInputs(2);
  inputs[1].stepShape = {};
  EXPECT_FALSE(make(mlpFile(2, 2), inputs, error));
  EXPECT_EQ(error, "arrays.st: step input 1 has shape [] (a scalar), which "
                   "has no batch dimension to take rows of arrays from");
}

TEST(ArrayData, ExtraTensorsAreIgnored) {
  std::string error;
  st::File file = mlpFile(2, 2);
  file.tensors["input.7"] = counting(st::DType::F32, {3});
  file.tensors["notes"] = counting(st::DType::I32, {1});
  auto arrays = make(std::move(file), mlpInputs(2), error);
  ASSERT_TRUE(arrays) << error;
  EXPECT_EQ(arrays->numBatches(), 2);
}

TEST(ArrayData, SmallerBatchesOfOneStepBatch) {
  // The evaluator's held-out loss runs a function on microbatches: batches
  // of 1 row cycling over the held-out step batches (rows 4..5 of n = 3
  // batches of 2).
  std::string error;
  auto arrays = make(mlpFile(3, 2), mlpInputs(2), error);
  ASSERT_TRUE(arrays) << error;
  std::vector<ArrayInput> micro = arrayInputsOf(mlpInputs(1));
  auto batches = ArrayBatches::create(*arrays, micro, 2, 1, "held-out", error);
  ASSERT_TRUE(batches) << error;
  EXPECT_EQ(batches->numBatches(), 2);
  int32_t label;
  std::memcpy(&label, batches->batch(1, 1), 4);
  EXPECT_EQ(label, 1005);
  std::memcpy(&label, batches->batch(2, 1), 4);
  EXPECT_EQ(label, 1004);
  EXPECT_EQ(batches->batchBytes(0), 12u);
  // Batches of 4 rows do not divide one step batch of 2.
  EXPECT_FALSE(ArrayBatches::create(*arrays, arrayInputsOf(mlpInputs(4)), 2, 1,
                                    "held-out batches", error));
  EXPECT_EQ(error, "arrays.st: tensor 'input.0': the held-out batches (2 "
                   "rows) do not split into batches of 4 rows");
}

TEST(ArrayData, IdsOutsideTheVocabularyAreRefused) {
  std::string error;
  // 3 batches of 2 labels, 1000..1005: the vocabulary must exceed 1005.
  std::vector<InputInfo> inputs = mlpInputs(2);
  inputs[1].vocabulary = 1005;
  EXPECT_FALSE(make(mlpFile(3, 2), inputs, error));
  EXPECT_EQ(error, "arrays.st: tensor 'input.1' element [5] is 1005, outside "
                   "step input 1's vocabulary [0, 1005)");
  inputs[1].vocabulary = 1006;
  EXPECT_TRUE(make(mlpFile(3, 2), inputs, error)) << error;
  // A negative id, in an i64 tensor of two dimensions.
  st::File file = mlpFile(1, 2);
  st::Tensor ids;
  ids.dtype = st::DType::I64;
  ids.shape = {2, 2};
  std::vector<int64_t> values = {0, 1, -1, 2};
  ids.data.resize(values.size() * 8);
  std::memcpy(ids.data.data(), values.data(), ids.data.size());
  file.tensors["input.1"] = ids;
  inputs[1].dtype = ElementType::I64;
  inputs[1].stepShape = inputs[1].microbatchShape = {2, 2};
  EXPECT_FALSE(make(std::move(file), inputs, error));
  EXPECT_EQ(error, "arrays.st: tensor 'input.1' element [1, 0] is -1, "
                   "outside step input 1's vocabulary [0, 1006)");
  // Float inputs and integers without a vocabulary are not ids.
  inputs = mlpInputs(2);
  inputs[1].vocabulary.reset();
  EXPECT_TRUE(make(mlpFile(3, 2), inputs, error)) << error;
}

TEST(ArrayData, AnIndexSeveralRanksReadTakesTheSmallestVocabulary) {
  std::vector<InputInfo> inputs = mlpInputs(2);
  InputInfo again = inputs[1];
  again.vocabulary = 1003;
  inputs.push_back(again);
  std::vector<ArrayInput> merged = arrayInputsOf(inputs);
  ASSERT_EQ(merged.size(), 2u);
  EXPECT_EQ(merged[1].vocabulary, 1003);
  EXPECT_EQ(merged[0].vocabulary, std::nullopt);
  std::string error;
  EXPECT_FALSE(make(mlpFile(3, 2), inputs, error));
  EXPECT_EQ(error, "arrays.st: tensor 'input.1' element [3] is 1003, outside "
                   "step input 1's vocabulary [0, 1003)");
}

TEST(ArrayData, ReadNamesTheFile) {
  std::string error;
  EXPECT_FALSE(ArrayData::read("/nonexistent/arrays.st",
                               arrayInputsOf(mlpInputs(2)), error));
  EXPECT_NE(error.find("/nonexistent/arrays.st"), std::string::npos) << error;
}
