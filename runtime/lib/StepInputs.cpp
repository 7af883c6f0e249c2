//===- StepInputs.cpp - a training run's step inputs ----------------------===//

#include "tandem/Runtime/StepInputs.h"
#include "tandem/Runtime/Init.h"
#include "tandem/Runtime/ParameterFiles.h"
#include "tandem/Runtime/Safetensors.h"

#include <algorithm>
#include <cmath>
#include <cstring>

using namespace tandem;
using namespace tandem::runtime;

namespace {

/// tandem-eval's bound for integer inputs that index nothing
/// (kDefaultIntegerBound in include/tandem/Eval/Inputs.h).
constexpr int64_t kDefaultIntegerBound = 256;

uint64_t elementCount(const std::vector<int64_t> &shape) {
  uint64_t count = 1;
  for (int64_t dim : shape)
    count *= static_cast<uint64_t>(dim);
  return count;
}

bool isInteger(ElementType type) {
  return type == ElementType::I32 || type == ElementType::I64;
}

std::string describe(const InputInfo &input) {
  return "step input " + std::to_string(input.index);
}

/// `inputs` (every rank's) by index; an index two ranks describe with a
/// different dtype, step shape or (with `sameRole`) role is an error.
std::optional<std::map<int64_t, const InputInfo *>>
byIndex(const std::vector<InputInfo> &inputs, bool sameRole,
        std::string &error) {
  std::map<int64_t, const InputInfo *> result;
  for (const InputInfo &input : inputs) {
    auto [it, inserted] = result.insert({input.index, &input});
    if (!inserted && (it->second->dtype != input.dtype ||
                      it->second->stepShape != input.stepShape ||
                      (sameRole && it->second->role != input.role))) {
      error = describe(input) + " is described differently by two ranks";
      return std::nullopt;
    }
  }
  return result;
}

std::string shapeText(const std::vector<int64_t> &shape) {
  std::string text;
  for (size_t i = 0; i < shape.size(); ++i)
    text += (i ? "x" : "") + std::to_string(shape[i]);
  return text;
}

/// Writes `values` (B x T) into an integer buffer of `type`.
void storeTokens(const std::vector<int32_t> &values, ElementType type,
                 Buffer &out) {
  if (type == ElementType::I32) {
    std::memcpy(out.data(), values.data(), values.size() * sizeof(int32_t));
    return;
  }
  auto *data = static_cast<int64_t *>(out.data());
  for (size_t i = 0; i < values.size(); ++i)
    data[i] = values[i];
}

} // namespace

bool tandem::runtime::generateInput(const InputInfo &input, uint64_t seed,
                                    Buffer &out, std::string &error) {
  uint64_t count = elementCount(input.stepShape);
  if (out.size() != count * elementTypeSize(input.dtype)) {
    error = describe(input) + ": buffer size does not match its step shape";
    return false;
  }
  // The same stream, distributions and rounding as tandem-eval's
  // generateInput (lib/Eval/Inputs.cpp), so both runners see equal inputs.
  uint64_t stream =
      rng::parameterStream("input." + std::to_string(input.index));
  if (isInteger(input.dtype)) {
    double limit =
        static_cast<double>(input.vocabulary.value_or(kDefaultIntegerBound));
    rng::InitSpec uniform{rng::InitKind::Uniform, 0.0, 1.0};
    for (uint64_t i = 0; i < count; ++i) {
      double u = rng::initValue(uniform, seed, stream, i);
      int64_t value = static_cast<int64_t>(
          std::min<double>(std::floor(u * limit), limit - 1));
      if (input.dtype == ElementType::I32)
        static_cast<int32_t *>(out.data())[i] = static_cast<int32_t>(value);
      else
        static_cast<int64_t *>(out.data())[i] = value;
    }
    return true;
  }
  rng::InitSpec normal{rng::InitKind::Normal, 1.0, 0.0};
  if (input.dtype == ElementType::F32) {
    rng::initFill(normal, seed, stream, 0, static_cast<float *>(out.data()),
                  count);
    return true;
  }
  if (input.dtype == ElementType::F64) {
    rng::initFill(normal, seed, stream, 0, static_cast<double *>(out.data()),
                  count);
    return true;
  }
  error = describe(input) + " has type " + elementTypeName(input.dtype) +
          "; generated inputs support f32, f64, i32 and i64";
  return false;
}

std::optional<StepInputs>
StepInputs::create(const std::vector<InputInfo> &inputs,
                   const std::vector<int32_t> &tokens,
                   const StepInputOptions &options, std::string &error) {
  return create(inputs, std::make_shared<const std::vector<int32_t>>(tokens),
                options, error);
}

std::optional<StepInputs>
StepInputs::create(const std::vector<InputInfo> &inputs,
                   data::TokenStream stream, const StepInputOptions &options,
                   std::string &error) {
  const std::vector<int32_t> &tokens = *stream;
  StepInputs result;
  std::optional<std::map<int64_t, const InputInfo *>> merged =
      byIndex(inputs, /*sameRole=*/true, error);
  if (!merged)
    return std::nullopt;
  const std::map<int64_t, const InputInfo *> &byIndex = *merged;

  // The token inputs fix the batch shape; the smallest vocabulary any of
  // them indexes bounds every token of the stream.
  const InputInfo *tokenShape = nullptr;
  std::optional<int64_t> vocabulary;
  for (auto &[index, input] : byIndex) {
    result.inputs.push_back(*input);
    if (input->role == InputRole::Ambiguous) {
      error = describe(*input) +
              " feeds both an embedding and a cross-entropy's targets, so "
              "token data cannot fill it";
      return std::nullopt;
    }
    if (input->role != InputRole::Tokens && input->role != InputRole::Targets)
      continue;
    if (!isInteger(input->dtype) || input->stepShape.size() != 2) {
      error = describe(*input) + " (" +
              (input->role == InputRole::Tokens ? "tokens" : "targets") +
              ") must be an integer B x T tensor to take token data, found " +
              elementTypeName(input->dtype) + " " + shapeText(input->stepShape);
      return std::nullopt;
    }
    if (tokenShape && tokenShape->stepShape != input->stepShape) {
      error = describe(*input) + " has shape " + shapeText(input->stepShape) +
              ", but step input " + std::to_string(tokenShape->index) +
              " has " + shapeText(tokenShape->stepShape) +
              "; tokens and targets must agree";
      return std::nullopt;
    }
    tokenShape = input;
    if (input->vocabulary)
      vocabulary =
          std::min(vocabulary.value_or(*input->vocabulary), *input->vocabulary);
  }
  if (vocabulary && !data::checkVocabulary(tokens, *vocabulary, error)) {
    error = options.dataName + ": " + error;
    return std::nullopt;
  }

  for (auto &[index, input] : byIndex) {
    Buffer buffer(elementCount(input->stepShape) *
                  elementTypeSize(input->dtype));
    if (!generateInput(*input, options.seed, buffer, error))
      return std::nullopt;
    result.buffers[index] = std::move(buffer);
  }
  if (tokenShape) {
    if (!(options.heldOutFraction > 0.0 && options.heldOutFraction < 1.0)) {
      error = "the held-out fraction must be in (0, 1), found " +
              std::to_string(options.heldOutFraction);
      return std::nullopt;
    }
    size_t cut = data::heldOutStart(tokens.size(), options.heldOutFraction);
    size_t begin = options.heldOut ? cut : 0;
    size_t end = options.heldOut ? tokens.size() : cut;
    int64_t batch = tokenShape->stepShape[0], seq = tokenShape->stepShape[1];
    std::optional<data::BatchSampler> sampler = data::BatchSampler::create(
        std::move(stream), begin, end, batch, seq, options.seed,
        /*shuffle=*/!options.heldOut, error);
    if (!sampler) {
      error = options.dataName +
              (options.heldOut ? " (held-out part): " : " (training part): ") +
              error;
      return std::nullopt;
    }
    result.sampler = std::move(sampler);
    result.tokenScratch.resize(batch * seq);
    result.targetScratch.resize(batch * seq);
    result.tokensPerStep_ = batch * seq;
  }
  return result;
}

std::vector<data::ArrayInput>
tandem::runtime::arrayInputsOf(const std::vector<InputInfo> &inputs) {
  // One entry an index; where ranks disagree on its vocabulary (a token
  // input several stages read), the smallest holds for all.
  std::vector<data::ArrayInput> result;
  std::map<int64_t, size_t> at;
  for (const InputInfo &input : inputs) {
    auto [it, added] = at.try_emplace(input.index, result.size());
    if (added) {
      result.push_back({input.index, toSafetensorsType(input.dtype),
                        input.stepShape, input.vocabulary});
      continue;
    }
    std::optional<int64_t> &vocabulary = result[it->second].vocabulary;
    if (input.vocabulary)
      vocabulary =
          std::min(vocabulary.value_or(*input.vocabulary), *input.vocabulary);
  }
  return result;
}

std::optional<StepInputs>
StepInputs::create(const std::vector<InputInfo> &inputs,
                   const data::ArrayData &arrays,
                   const StepInputOptions &options, std::string &error) {
  StepInputs result;
  // Roles do not matter here: every input comes from the file.
  std::optional<std::map<int64_t, const InputInfo *>> merged =
      byIndex(inputs, /*sameRole=*/false, error);
  if (!merged)
    return std::nullopt;
  std::optional<data::ArraySplit> split = data::splitArrays(
      arrays, options.holdOut, options.heldOutFraction, error);
  if (!split)
    return std::nullopt;
  int64_t first = options.heldOut ? split->trainBatches : 0;
  int64_t count = options.heldOut ? split->heldOutBatches : split->trainBatches;
  std::optional<data::ArrayBatches> batches = data::ArrayBatches::create(
      arrays, arrayInputsOf(inputs), first, count,
      options.heldOut ? "held-out batches" : "training batches", error);
  if (!batches)
    return std::nullopt;
  // ArrayBatches checked each tensor's dtype and trailing dimensions
  // against the step shape: a batch is exactly one step input's bytes.
  for (auto &[index, input] : *merged) {
    result.inputs.push_back(*input);
    result.buffers[index] = Buffer(batches->batchBytes(index));
  }
  result.arrays = std::move(batches);
  return result;
}

const std::map<int64_t, const Buffer *> &StepInputs::get(uint64_t step) {
  // Rebuilt on every call, so moving a StepInputs never leaves stale views.
  views.clear();
  for (auto &[index, buffer] : buffers)
    views[index] = &buffer;
  if (arrays) {
    for (auto &[index, buffer] : buffers)
      std::memcpy(buffer.data(), arrays->batch(step, index), buffer.size());
    return views;
  }
  if (!sampler)
    return views;
  sampler->getBatch(step, tokenScratch.data(), targetScratch.data());
  for (const InputInfo &input : inputs) {
    if (input.role == InputRole::Tokens)
      storeTokens(tokenScratch, input.dtype, buffers.at(input.index));
    else if (input.role == InputRole::Targets)
      storeTokens(targetScratch, input.dtype, buffers.at(input.index));
  }
  return views;
}

bool tandem::runtime::readSavedInputs(const std::string &path,
                                      const std::vector<InputInfo> &inputs,
                                      std::map<int64_t, Buffer> &buffers,
                                      std::string &error) {
  std::optional<st::File> file = st::readFile(path, error);
  if (!file)
    return false;
  for (const InputInfo &in : inputs) {
    if (buffers.count(in.index))
      continue;
    std::string name = "input." + std::to_string(in.index);
    auto it = file->tensors.find(name);
    if (it == file->tensors.end()) {
      error = path + ": no tensor '" + name + "'";
      return false;
    }
    if (it->second.dtype != toSafetensorsType(in.dtype) ||
        it->second.shape != in.stepShape) {
      error = path + ": tensor '" + name + "' is not the step input's type (" +
              elementTypeName(in.dtype) + ", step_shape)";
      return false;
    }
    Buffer buffer(it->second.data.size());
    std::memcpy(buffer.data(), it->second.data.data(), it->second.data.size());
    buffers[in.index] = std::move(buffer);
  }
  return true;
}
