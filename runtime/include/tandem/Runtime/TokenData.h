//===- TokenData.h - byte-level token data and batches ----------*- C++ -*-===//
//
// Training data as a stream of integer tokens: the bytes of a text file
// (byte-level tokens, vocabulary 256) or a binary token file. The end of the
// stream is held out for evaluation; training batches are windows of seq+1
// tokens (inputs and next-token targets) drawn in a per-epoch order that is a
// pure function of the seed. Batch k of a run is therefore known without
// replaying batches 0..k-1, which is what bitwise resume needs. The reference
// evaluator and the runtime both read data through this file. No MLIR.
//
// Binary token files: the 8 bytes "TNDTOKv1", a little-endian uint32 token
// width in bytes (1, 2 or 4), a uint32 of zero, then the tokens as unsigned
// little-endian integers of that width.
//
//===----------------------------------------------------------------------===//

#ifndef TANDEM_RUNTIME_TOKENDATA_H
#define TANDEM_RUNTIME_TOKENDATA_H

#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

namespace tandem::data {

/// Reads tokens from a binary token file (recognized by its magic) or,
/// otherwise, the bytes of a text file. Errors name the file.
std::optional<std::vector<int32_t>> readTokens(const std::string &path,
                                               std::string &error);
/// The tokens of a file's bytes; `what` (the path) starts every error.
std::optional<std::vector<int32_t>>
parseTokens(const std::vector<uint8_t> &bytes, const std::string &what,
            std::string &error);

/// Writes a binary token file with the narrowest width that holds them.
bool writeTokens(const std::string &path, const std::vector<int32_t> &tokens,
                 std::string &error);

/// Checks that every token is in [0, vocab); the error names the first bad
/// token and its position.
bool checkVocabulary(const std::vector<int32_t> &tokens, int64_t vocab,
                     std::string &error);

struct Split {
  std::vector<int32_t> train;
  std::vector<int32_t> heldOut;
};

/// Holds out the last `heldOutFraction` of the stream (a contiguous tail, so
/// no training window overlaps an evaluation window).
Split splitHeldOut(const std::vector<int32_t> &tokens, double heldOutFraction);

/// Where splitHeldOut's held-out tail of a stream of `size` tokens starts.
size_t heldOutStart(size_t size, double heldOutFraction);

/// A token stream that samplers read parts of without copying it: a
/// training run's data is held once however many readers it has.
using TokenStream = std::shared_ptr<const std::vector<int32_t>>;

/// Batches of `batch` windows of `seq + 1` tokens from a token stream.
/// Windows start at multiples of `seq`; with `shuffle`, each epoch visits
/// them in its own seed-determined order.
class BatchSampler {
public:
  /// Fails (with a message) when the stream holds no complete window.
  static std::optional<BatchSampler> create(std::vector<int32_t> tokens,
                                            int64_t batch, int64_t seq,
                                            uint64_t seed, bool shuffle,
                                            std::string &error);
  /// The same over tokens [begin, end) of `stream`, which the sampler
  /// shares.
  static std::optional<BatchSampler> create(TokenStream stream, size_t begin,
                                            size_t end, int64_t batch,
                                            int64_t seq, uint64_t seed,
                                            bool shuffle, std::string &error);

  /// Fills `inputs` and `targets` (each batch × seq, row-major) for the
  /// `index`-th batch of the run.
  void getBatch(uint64_t index, int32_t *inputs, int32_t *targets);

  int64_t numWindows() const { return numWindows_; }

private:
  BatchSampler() = default;
  const std::vector<int64_t> &epochOrder(uint64_t epoch);

  TokenStream stream_;
  size_t begin_ = 0;
  int64_t batch_ = 0, seq_ = 0, numWindows_ = 0;
  uint64_t seed_ = 0;
  bool shuffle_ = false;
  std::map<uint64_t, std::vector<int64_t>> orders_;
};

} // namespace tandem::data

#endif // TANDEM_RUNTIME_TOKENDATA_H
