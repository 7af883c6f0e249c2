//===- ArrayData.h - training data as arrays of step inputs ----*- C++ -*-===//
//
// Training data for models whose inputs are not token streams (regression,
// images, precomputed features): a safetensors file that holds, for every
// step input i, a tensor `input.<i>` of the input's type whose shape is
// [n·b, rest...] where [b, rest...] is the input's step shape, n >= 1 step
// batches, the same n for every input. Batches are read in file order, no
// shuffling: step k of a run reads batch (k mod c) of the c batches it
// cycles over, rows [(k mod c)·b, (k mod c + 1)·b) of every input. So step
// k's inputs are known without replaying steps 0..k-1 (resume needs nothing
// more than k) and do not depend on the seed. The reference evaluator and
// the runtime both slice batches through this file. No MLIR.
//
//===----------------------------------------------------------------------===//

#ifndef TANDEM_RUNTIME_ARRAYDATA_H
#define TANDEM_RUNTIME_ARRAYDATA_H

#include "tandem/Runtime/Safetensors.h"

#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

namespace tandem::data {

/// An input an arrays file feeds: tensor `input.<index>` of `dtype`; one
/// batch of it has shape `batchShape` ([rows, rest...]). Integer ids that
/// index a table or classes have a `vocabulary`: every element must be in
/// [0, vocabulary).
struct ArrayInput {
  int64_t index = 0;
  st::DType dtype = st::DType::F32;
  std::vector<int64_t> batchShape;
  std::optional<int64_t> vocabulary;
};

/// An arrays file checked against the step inputs it feeds.
class ArrayData {
public:
  /// Reads `path` and checks it with create().
  static std::optional<ArrayData> read(const std::string &path,
                                       const std::vector<ArrayInput> &inputs,
                                       std::string &error);
  /// Checks `file` (`name` in errors, usually its path) against the step
  /// inputs `inputs` (batchShape: the step shape [b, rest...]; an index
  /// listed twice is checked twice): each needs a tensor `input.<index>` of
  /// its dtype and shape [n·b, rest...] with n >= 1, the same n for all,
  /// and ids within the input's vocabulary (every element, so that no
  /// step fails later, and no target does on a GPU, whose kernels give an
  /// out-of-range id's row NaN instead of an error). Errors name the file,
  /// the tensor and what was expected.
  static std::optional<ArrayData> create(st::File file, const std::string &name,
                                         const std::vector<ArrayInput> &inputs,
                                         std::string &error);

  /// n: the step batches every input holds.
  int64_t numBatches() const { return numBatches_; }
  const std::string &name() const { return name_; }
  /// The bytes of every tensor of the file.
  uint64_t bytes() const;

private:
  friend class ArrayBatches;
  ArrayData() = default;
  std::shared_ptr<const st::File> file_;
  std::string name_;
  int64_t numBatches_ = 0;
};

/// Which of a file's n step batches a run trains on and which it holds out.
struct ArraySplit {
  /// Training cycles over batches [0, trainBatches) ...
  int64_t trainBatches = 0;
  /// ... and the held-out loss reads batches [trainBatches, n).
  int64_t heldOutBatches = 0;
};

/// Without `holdOut`, every batch trains. With it (a run that measures a
/// held-out loss), the last max(1, round(fraction·n)) batches are held out;
/// fails when `fraction` is not in (0, 1) or no training batch is left.
std::optional<ArraySplit> splitArrays(const ArrayData &data, bool holdOut,
                                      double fraction, std::string &error);

/// The batches one consumer reads (a program's step inputs, or a function
/// whose batch is smaller), cycling over step batches [first, first +
/// count) of an arrays file.
class ArrayBatches {
public:
  /// Batch k of input i (of shape `batchShape` = [r, rest...]) is rows
  /// first·b + (k mod c)·r .. + r of `input.<i>`, where b = the tensor's
  /// rows / n and c = count·b / r: c must be a whole number, the same for
  /// every input, and the tensor must have the input's dtype and trailing
  /// dimensions. `part` names the batches in errors ("training batches").
  static std::optional<ArrayBatches>
  create(const ArrayData &data, const std::vector<ArrayInput> &inputs,
         int64_t first, int64_t count, const std::string &part,
         std::string &error);

  /// c: the batches of one cycle (an epoch).
  int64_t numBatches() const { return numBatches_; }
  /// The bytes of batch `k` (k mod c) of input `index`, row-major, in the
  /// file's memory (batchBytes(index) of them).
  const uint8_t *batch(uint64_t k, int64_t index) const;
  size_t batchBytes(int64_t index) const;

private:
  ArrayBatches() = default;
  struct Slice {
    const st::Tensor *tensor = nullptr;
    /// The byte where the cycle's first batch starts, and a batch's bytes.
    size_t start = 0, bytes = 0;
  };
  std::shared_ptr<const st::File> file_;
  std::map<int64_t, Slice> slices_;
  int64_t numBatches_ = 0;
};

} // namespace tandem::data

#endif // TANDEM_RUNTIME_ARRAYDATA_H
