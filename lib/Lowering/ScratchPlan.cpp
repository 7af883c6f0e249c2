//===- ScratchPlan.cpp - a fragment's scratch shared by live ranges -------===//

#include "tandem/Lowering/ScratchPlan.h"

#include "llvm/ADT/STLExtras.h"
#include "llvm/ADT/StringRef.h"

#include <algorithm>

using namespace tandem::lowering;

namespace {
constexpr llvm::StringLiteral kMarker = "@TK_SCRATCH_";

/// The piece a token names.
size_t pieceOf(llvm::StringRef token) {
  size_t piece = 0;
  token.drop_front(kMarker.size())
      .take_until([](char c) { return c == '@'; })
      .getAsInteger(10, piece);
  return piece;
}
} // namespace

std::string ScratchPlan::request(uint64_t bytes, unsigned start, unsigned end) {
  std::string token = request(bytes);
  pieces.back() = {pieces.back().bytes, start, std::max(start, end), true};
  return token;
}

std::string ScratchPlan::request(uint64_t bytes) {
  uint64_t rounded = (bytes + alignment - 1) / alignment * alignment;
  pieces.push_back({rounded, 0, 0, false});
  return kMarker.str() + std::to_string(pieces.size() - 1) + "@";
}

void ScratchPlan::extend(llvm::StringRef token, unsigned step) {
  Piece &piece = pieces[pieceOf(token)];
  if (!piece.live) {
    piece.start = piece.end = step;
    piece.live = true;
    return;
  }
  piece.start = std::min(piece.start, step);
  piece.end = std::max(piece.end, step);
}

uint64_t ScratchPlan::place(llvm::ArrayRef<std::string *> texts) {
  size_t count = pieces.size();
  std::vector<size_t> order(count);
  for (size_t i = 0; i < count; ++i)
    order[i] = i;
  llvm::stable_sort(order, [&](size_t a, size_t b) {
    return pieces[a].bytes > pieces[b].bytes;
  });
  std::vector<uint64_t> offsets(count, 0);
  std::vector<size_t> placed;
  uint64_t total = 0;
  for (size_t i : order) {
    const Piece &piece = pieces[i];
    // A piece no step uses takes no bytes another might want.
    if (!piece.live)
      continue;
    std::vector<std::pair<uint64_t, uint64_t>> busy;
    for (size_t j : placed) {
      const Piece &other = pieces[j];
      if (other.start <= piece.end && piece.start <= other.end)
        busy.push_back({offsets[j], offsets[j] + other.bytes});
    }
    llvm::sort(busy);
    uint64_t offset = 0;
    for (auto [begin, end] : busy) {
      if (offset + piece.bytes <= begin)
        break;
      offset = std::max(offset, end);
    }
    offsets[i] = offset;
    total = std::max(total, offset + piece.bytes);
    placed.push_back(i);
  }
  for (std::string *text : texts) {
    std::string resolved;
    resolved.reserve(text->size());
    llvm::StringRef rest = *text;
    while (true) {
      size_t at = rest.find(kMarker);
      resolved += rest.take_front(at).str();
      if (at == llvm::StringRef::npos)
        break;
      rest = rest.drop_front(at);
      size_t close = rest.find('@', kMarker.size());
      resolved += std::to_string(offsets[pieceOf(rest)]);
      rest = rest.drop_front(close + 1);
    }
    *text = std::move(resolved);
  }
  return total;
}
