//===- TokenData.cpp - byte-level token data and batches ------------------===//

#include "tandem/Runtime/TokenData.h"
#include "tandem/Runtime/FileIO.h"
#include "tandem/Runtime/Philox.h"

#include <cstdio>
#include <cstring>
#include <numeric>

using namespace tandem::data;

namespace {
constexpr char kMagic[8] = {'T', 'N', 'D', 'T', 'O', 'K', 'v', '1'};
constexpr size_t kHeaderBytes = 16;
} // namespace

std::optional<std::vector<int32_t>>
tandem::data::readTokens(const std::string &path, std::string &error) {
  std::optional<std::vector<uint8_t>> read = io::readBytes(path, error);
  if (!read)
    return std::nullopt;
  return parseTokens(*read, path, error);
}

std::optional<std::vector<int32_t>>
tandem::data::parseTokens(const std::vector<uint8_t> &bytes,
                          const std::string &path, std::string &error) {
  std::vector<int32_t> tokens;
  if (bytes.size() >= 8 && std::memcmp(bytes.data(), kMagic, 8) == 0) {
    if (bytes.size() < kHeaderBytes) {
      error = path + ": truncated token file header";
      return std::nullopt;
    }
    uint32_t width = 0;
    for (int i = 3; i >= 0; --i)
      width = (width << 8) | bytes[8 + i];
    if (width != 1 && width != 2 && width != 4) {
      error =
          path + ": token width " + std::to_string(width) + " is not 1, 2 or 4";
      return std::nullopt;
    }
    size_t payload = bytes.size() - kHeaderBytes;
    if (payload % width != 0) {
      error = path + ": " + std::to_string(payload) +
              " token bytes is not a multiple of the token width " +
              std::to_string(width) + " (truncated file?)";
      return std::nullopt;
    }
    tokens.reserve(payload / width);
    for (size_t i = kHeaderBytes; i < bytes.size(); i += width) {
      uint32_t value = 0;
      for (int b = width - 1; b >= 0; --b)
        value = (value << 8) | bytes[i + b];
      if (value > static_cast<uint32_t>(INT32_MAX)) {
        error = path + ": token " + std::to_string(value) + " at position " +
                std::to_string(tokens.size()) + " does not fit in int32";
        return std::nullopt;
      }
      tokens.push_back(static_cast<int32_t>(value));
    }
    return tokens;
  }
  tokens.assign(bytes.begin(), bytes.end());
  return tokens;
}

bool tandem::data::writeTokens(const std::string &path,
                               const std::vector<int32_t> &tokens,
                               std::string &error) {
  int32_t maxToken = 0;
  for (size_t i = 0; i < tokens.size(); ++i) {
    if (tokens[i] < 0) {
      error = path + ": negative token " + std::to_string(tokens[i]) +
              " at position " + std::to_string(i);
      return false;
    }
    maxToken = std::max(maxToken, tokens[i]);
  }
  uint32_t width = maxToken < 256 ? 1 : maxToken < 65536 ? 2 : 4;
  std::vector<uint8_t> bytes(kMagic, kMagic + 8);
  for (int i = 0; i < 4; ++i)
    bytes.push_back(static_cast<uint8_t>(width >> (8 * i)));
  bytes.insert(bytes.end(), 4, 0);
  for (int32_t t : tokens)
    for (uint32_t b = 0; b < width; ++b)
      bytes.push_back(
          static_cast<uint8_t>(static_cast<uint32_t>(t) >> (8 * b)));
  return io::writeBytesAtomic(path, bytes, error);
}

bool tandem::data::checkVocabulary(const std::vector<int32_t> &tokens,
                                   int64_t vocab, std::string &error) {
  for (size_t i = 0; i < tokens.size(); ++i) {
    if (tokens[i] < 0 || tokens[i] >= vocab) {
      error = "token " + std::to_string(tokens[i]) + " at position " +
              std::to_string(i) + " is outside the model's vocabulary [0, " +
              std::to_string(vocab) + ")";
      return false;
    }
  }
  return true;
}

size_t tandem::data::heldOutStart(size_t size, double heldOutFraction) {
  double fraction = std::min(std::max(heldOutFraction, 0.0), 1.0);
  return size - static_cast<size_t>(size * fraction);
}

Split tandem::data::splitHeldOut(const std::vector<int32_t> &tokens,
                                 double heldOutFraction) {
  size_t cut = heldOutStart(tokens.size(), heldOutFraction);
  return {std::vector<int32_t>(tokens.begin(), tokens.begin() + cut),
          std::vector<int32_t>(tokens.begin() + cut, tokens.end())};
}

std::optional<BatchSampler> BatchSampler::create(std::vector<int32_t> tokens,
                                                 int64_t batch, int64_t seq,
                                                 uint64_t seed, bool shuffle,
                                                 std::string &error) {
  size_t size = tokens.size();
  return create(std::make_shared<const std::vector<int32_t>>(std::move(tokens)),
                0, size, batch, seq, seed, shuffle, error);
}

std::optional<BatchSampler> BatchSampler::create(TokenStream stream,
                                                 size_t begin, size_t end,
                                                 int64_t batch, int64_t seq,
                                                 uint64_t seed, bool shuffle,
                                                 std::string &error) {
  if (batch <= 0 || seq <= 0) {
    error = "batch and sequence length must be positive, found batch " +
            std::to_string(batch) + " and sequence " + std::to_string(seq);
    return std::nullopt;
  }
  if (!stream || begin > end || end > stream->size()) {
    error = "the token range is outside the stream";
    return std::nullopt;
  }
  size_t size = end - begin;
  int64_t windows = size > 0 ? (static_cast<int64_t>(size) - 1) / seq : 0;
  if (windows < 1) {
    error = "data too small: " + std::to_string(size) +
            " tokens, a window needs " + std::to_string(seq + 1);
    return std::nullopt;
  }
  BatchSampler sampler;
  sampler.stream_ = std::move(stream);
  sampler.begin_ = begin;
  sampler.batch_ = batch;
  sampler.seq_ = seq;
  sampler.numWindows_ = windows;
  sampler.seed_ = seed;
  sampler.shuffle_ = shuffle;
  return sampler;
}

const std::vector<int64_t> &BatchSampler::epochOrder(uint64_t epoch) {
  auto it = orders_.find(epoch);
  if (it != orders_.end())
    return it->second;
  // Keep only the current epoch's order: a run moves forward.
  if (orders_.size() > 2)
    orders_.erase(orders_.begin());
  std::vector<int64_t> order(numWindows_);
  std::iota(order.begin(), order.end(), 0);
  if (shuffle_) {
    // Fisher-Yates with Philox words keyed by (seed, epoch).
    rng::PhiloxKey key = {static_cast<uint32_t>(seed_),
                          static_cast<uint32_t>(seed_ >> 32)};
    for (int64_t i = numWindows_ - 1; i > 0; --i) {
      rng::PhiloxCounter counter = {
          static_cast<uint32_t>(i), static_cast<uint32_t>(i >> 32),
          static_cast<uint32_t>(epoch), 0x5348u /* "SH": the shuffle stream */};
      rng::PhiloxCounter bits = rng::philox4x32(counter, key);
      uint64_t r = (static_cast<uint64_t>(bits[0]) << 32) | bits[1];
      std::swap(order[i], order[r % static_cast<uint64_t>(i + 1)]);
    }
  }
  return orders_.emplace(epoch, std::move(order)).first->second;
}

void BatchSampler::getBatch(uint64_t index, int32_t *inputs, int32_t *targets) {
  for (int64_t b = 0; b < batch_; ++b) {
    uint64_t sample = index * batch_ + b;
    uint64_t epoch = sample / numWindows_;
    int64_t window = epochOrder(epoch)[sample % numWindows_];
    const int32_t *start = stream_->data() + begin_ + window * seq_;
    std::memcpy(inputs + b * seq_, start, seq_ * sizeof(int32_t));
    std::memcpy(targets + b * seq_, start + 1, seq_ * sizeof(int32_t));
  }
}
