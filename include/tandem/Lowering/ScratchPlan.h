//===- ScratchPlan.h - a fragment's scratch shared by live ranges -*- C++
//-*-===//
//
// Every target's emitter gives each temporary of an entry point a piece of
// the fragment's scratch. Temporaries whose live ranges do not meet share
// bytes: the emitter asks for a piece with a token in its text, says when
// the piece is live, and at the end the plan places every piece and puts
// the offsets in for the tokens.
//
//===----------------------------------------------------------------------===//

#ifndef TANDEM_LOWERING_SCRATCHPLAN_H
#define TANDEM_LOWERING_SCRATCHPLAN_H

#include "llvm/ADT/ArrayRef.h"

#include <cstdint>
#include <string>
#include <vector>

namespace tandem::lowering {

class ScratchPlan {
public:
  /// A piece of `bytes` (rounded up to the plan's alignment) live from step
  /// `start` to step `end`, inclusive; the token that stands for its offset.
  std::string request(uint64_t bytes, unsigned start, unsigned end);
  /// A piece whose live range the emitter gives later (extend): the token.
  std::string request(uint64_t bytes);
  /// Makes `token`'s piece live at `step` too. Ranges are inclusive: a step
  /// reads its inputs while it writes its outputs, so what a step reads
  /// never shares bytes with what it writes.
  void extend(llvm::StringRef token, unsigned step);
  /// Places every piece (largest first, each at the lowest aligned offset
  /// no piece live at the same time overlaps) and replaces the tokens in
  /// `texts` with the offsets. Returns the scratch's size.
  uint64_t place(llvm::ArrayRef<std::string *> texts);

  explicit ScratchPlan(uint64_t alignment) : alignment(alignment) {}

private:
  struct Piece {
    uint64_t bytes;
    unsigned start, end;
    bool live;
  };
  uint64_t alignment;
  std::vector<Piece> pieces;
};

} // namespace tandem::lowering

#endif // TANDEM_LOWERING_SCRATCHPLAN_H
