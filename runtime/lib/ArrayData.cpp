//===- ArrayData.cpp - training data as arrays of step inputs -------------===//

#include "tandem/Runtime/ArrayData.h"

#include <cmath>
#include <cstring>

using namespace tandem;
using namespace tandem::data;

namespace {

std::string shapeText(const std::vector<int64_t> &shape) {
  if (shape.empty())
    return "[] (a scalar)";
  std::string text = "[";
  for (size_t i = 0; i < shape.size(); ++i)
    text += (i ? ", " : "") + std::to_string(shape[i]);
  return text + "]";
}

/// The shape of a tensor of n batches of `batchShape`: "[n*32, 16]".
std::string wantedShape(const std::vector<int64_t> &batchShape) {
  std::string text = "[n*" + std::to_string(batchShape[0]);
  for (size_t i = 1; i < batchShape.size(); ++i)
    text += ", " + std::to_string(batchShape[i]);
  return text + "]";
}

std::string tensorName(int64_t index) {
  return "input." + std::to_string(index);
}

/// Finds `input`'s tensor in `file` and checks its dtype and trailing
/// dimensions; returns it, or null with `error`.
const st::Tensor *findTensor(const st::File &file, const std::string &name,
                             const ArrayInput &input, std::string &error) {
  std::string what = name + ": tensor '" + tensorName(input.index) + "'";
  if (input.batchShape.empty() || input.batchShape[0] <= 0) {
    error = name + ": step input " + std::to_string(input.index) +
            " has shape " + shapeText(input.batchShape) +
            ", which has no batch dimension to take rows of arrays from";
    return nullptr;
  }
  auto it = file.tensors.find(tensorName(input.index));
  if (it == file.tensors.end()) {
    error = name + ": no tensor '" + tensorName(input.index) + "' for step " +
            "input " + std::to_string(input.index) + " (" +
            std::string(st::dtypeName(input.dtype)) + ", shape " +
            wantedShape(input.batchShape) + ": n batches of " +
            shapeText(input.batchShape) + ")";
    return nullptr;
  }
  const st::Tensor &tensor = it->second;
  if (tensor.dtype != input.dtype) {
    error = what + " is " + std::string(st::dtypeName(tensor.dtype)) +
            ", but step input " + std::to_string(input.index) + " is " +
            std::string(st::dtypeName(input.dtype));
    return nullptr;
  }
  bool trailing = tensor.shape.size() == input.batchShape.size();
  for (size_t i = 1; trailing && i < tensor.shape.size(); ++i)
    trailing = tensor.shape[i] == input.batchShape[i];
  if (!trailing) {
    error = what + " has shape " + shapeText(tensor.shape) + ", but step " +
            "input " + std::to_string(input.index) + " needs " +
            wantedShape(input.batchShape) + " (n batches of " +
            shapeText(input.batchShape) + ")";
    return nullptr;
  }
  return &tensor;
}

/// The index of element `e` of a tensor of `shape`: "[3, 1]".
std::string elementIndex(const std::vector<int64_t> &shape, int64_t e) {
  std::vector<int64_t> index(shape.size());
  for (size_t d = shape.size(); d-- > 0;) {
    index[d] = e % shape[d];
    e /= shape[d];
  }
  return shapeText(index);
}

/// Checks that every element of the integer `tensor` (I32 or I64) is in
/// [0, vocabulary); false with `error` naming the first one that is not.
template <typename T>
bool checkIds(const st::Tensor &tensor, const std::string &what,
              const ArrayInput &input, std::string &error) {
  int64_t count = tensor.numElements();
  for (int64_t e = 0; e < count; ++e) {
    T id;
    std::memcpy(&id, tensor.data.data() + e * sizeof(T), sizeof(T));
    if (id >= 0 && static_cast<int64_t>(id) < *input.vocabulary)
      continue;
    error = what + " element " + elementIndex(tensor.shape, e) + " is " +
            std::to_string(id) + ", outside step input " +
            std::to_string(input.index) + "'s vocabulary [0, " +
            std::to_string(*input.vocabulary) + ")";
    return false;
  }
  return true;
}

} // namespace

std::optional<ArrayData> ArrayData::read(const std::string &path,
                                         const std::vector<ArrayInput> &inputs,
                                         std::string &error) {
  std::optional<st::File> file = st::readFile(path, error);
  if (!file)
    return std::nullopt;
  return create(std::move(*file), path, inputs, error);
}

std::optional<ArrayData>
ArrayData::create(st::File file, const std::string &name,
                  const std::vector<ArrayInput> &inputs, std::string &error) {
  if (inputs.empty()) {
    error = name + ": the program has no step inputs for arrays to fill";
    return std::nullopt;
  }
  // The first input that fixed n, for the error about one that differs.
  const ArrayInput *first = nullptr;
  int64_t batches = 0, firstRows = 0;
  for (const ArrayInput &input : inputs) {
    const st::Tensor *tensor = findTensor(file, name, input, error);
    if (!tensor)
      return std::nullopt;
    int64_t rows = tensor->shape[0], b = input.batchShape[0];
    std::string what = name + ": tensor '" + tensorName(input.index) + "'";
    if (rows == 0 || rows % b != 0) {
      error = what + " has " + std::to_string(rows) +
              " rows, not a positive multiple of step input " +
              std::to_string(input.index) + "'s step batch of " +
              std::to_string(b) + " rows (step shape " +
              shapeText(input.batchShape) + ")";
      return std::nullopt;
    }
    if (input.vocabulary &&
        !(tensor->dtype == st::DType::I32
              ? checkIds<int32_t>(*tensor, what, input, error)
          : tensor->dtype == st::DType::I64
              ? checkIds<int64_t>(*tensor, what, input, error)
              : true))
      return std::nullopt;
    int64_t n = rows / b;
    if (first && n != batches) {
      error = what + " holds " + std::to_string(n) + " step batches (" +
              std::to_string(rows) + " rows of " + std::to_string(b) +
              "), but '" + tensorName(first->index) + "' holds " +
              std::to_string(batches) + " (" + std::to_string(firstRows) +
              " rows of " + std::to_string(first->batchShape[0]) +
              "): every input needs the same number of batches";
      return std::nullopt;
    }
    if (!first) {
      first = &input;
      batches = n;
      firstRows = rows;
    }
  }
  ArrayData data;
  data.file_ = std::make_shared<const st::File>(std::move(file));
  data.name_ = name;
  data.numBatches_ = batches;
  return data;
}

uint64_t ArrayData::bytes() const {
  uint64_t total = 0;
  for (const auto &[name, tensor] : file_->tensors)
    total += tensor.data.size();
  return total;
}

std::optional<ArraySplit> tandem::data::splitArrays(const ArrayData &data,
                                                    bool holdOut,
                                                    double fraction,
                                                    std::string &error) {
  int64_t n = data.numBatches();
  ArraySplit split;
  split.trainBatches = n;
  if (!holdOut)
    return split;
  if (!(fraction > 0.0 && fraction < 1.0)) {
    error = "the held-out fraction must be in (0, 1), found " +
            std::to_string(fraction);
    return std::nullopt;
  }
  int64_t held = std::max<int64_t>(
      1, static_cast<int64_t>(std::llround(fraction * static_cast<double>(n))));
  if (held >= n) {
    error = data.name() + " holds " + std::to_string(n) + " step batch" +
            (n == 1 ? "" : "es") + ": holding out the last " +
            std::to_string(held) + " for the held-out loss (fraction " +
            std::to_string(fraction) + ") leaves none to train on";
    return std::nullopt;
  }
  split.trainBatches = n - held;
  split.heldOutBatches = held;
  return split;
}

std::optional<ArrayBatches> ArrayBatches::create(
    const ArrayData &data, const std::vector<ArrayInput> &inputs, int64_t first,
    int64_t count, const std::string &part, std::string &error) {
  int64_t n = data.numBatches();
  if (first < 0 || count < 1 || first + count > n) {
    error = data.name() + ": " + part + " [" + std::to_string(first) + ", " +
            std::to_string(first + count) + ") are not among its " +
            std::to_string(n) + " step batches";
    return std::nullopt;
  }
  ArrayBatches result;
  result.file_ = data.file_;
  const ArrayInput *fixedBy = nullptr;
  for (const ArrayInput &input : inputs) {
    const st::Tensor *tensor =
        findTensor(*data.file_, data.name(), input, error);
    if (!tensor)
      return std::nullopt;
    std::string what =
        data.name() + ": tensor '" + tensorName(input.index) + "'";
    int64_t rows = tensor->shape[0];
    if (rows % n != 0) {
      error = what + " has " + std::to_string(rows) +
              " rows, not a multiple of the file's " + std::to_string(n) +
              " step batches";
      return std::nullopt;
    }
    int64_t b = rows / n, r = input.batchShape[0];
    if ((count * b) % r != 0) {
      error = what + ": the " + part + " (" + std::to_string(count * b) +
              " rows) do not split into batches of " + std::to_string(r) +
              " rows";
      return std::nullopt;
    }
    int64_t c = count * b / r;
    if (fixedBy && c != result.numBatches_) {
      error = data.name() + ": the " + part + " hold " + std::to_string(c) +
              " batches of '" + tensorName(input.index) + "' but " +
              std::to_string(result.numBatches_) + " of '" +
              tensorName(fixedBy->index) + "'";
      return std::nullopt;
    }
    fixedBy = &input;
    result.numBatches_ = c;
    size_t rowBytes = rows ? tensor->data.size() / rows : 0;
    Slice slice;
    slice.tensor = tensor;
    slice.start = static_cast<size_t>(first * b) * rowBytes;
    slice.bytes = static_cast<size_t>(r) * rowBytes;
    result.slices_[input.index] = slice;
  }
  if (!fixedBy) {
    error = data.name() + ": no inputs to read " + part + " for";
    return std::nullopt;
  }
  return result;
}

const uint8_t *ArrayBatches::batch(uint64_t k, int64_t index) const {
  const Slice &slice = slices_.at(index);
  uint64_t within = k % static_cast<uint64_t>(numBatches_);
  return slice.tensor->data.data() + slice.start + within * slice.bytes;
}

size_t ArrayBatches::batchBytes(int64_t index) const {
  return slices_.at(index).bytes;
}
