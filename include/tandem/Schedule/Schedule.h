//===- Schedule.h - Pipeline schedules as per-rank action lists -*- C++ -*-===//
//
// A pipeline schedule is data: for each rank, the ordered list of actions it
// runs in one training step. p ranks hold v chunks each; virtual stage
// s = chunk * p + rank (Megatron's interleaved layout), so stage s lives on
// rank s % p. Every stage runs a forward (F) and a backward for each of the
// m microbatches; the backward is either one full action (B) or is split
// into input-gradient (BI) and weight-gradient (BW) work. SEND/RECV actions
// name a payload (the output of F or of B/BI of a stage for a microbatch)
// and the peer rank; schedules without them leave communication implicit.
//
// Plain C++17 with LLVM Support only (no MLIR IR). The text format is
// documented in docs/schedules.md.
//
//===----------------------------------------------------------------------===//

#ifndef TANDEM_SCHEDULE_SCHEDULE_H
#define TANDEM_SCHEDULE_SCHEDULE_H

#include "llvm/ADT/StringRef.h"
#include "llvm/Support/Error.h"

#include <cstdint>
#include <string>
#include <vector>

namespace llvm {
class raw_ostream;
} // namespace llvm

namespace tandem::schedule {

enum class ActionKind : uint8_t {
  F,    ///< forward of (stage, microbatch)
  B,    ///< full backward (input and weight gradients)
  BI,   ///< backward, input-gradient part
  BW,   ///< backward, weight-gradient part (accumulates the stage's grads)
  Send, ///< send a payload to `peer`
  Recv, ///< receive a payload from `peer`
};

/// The token of a kind: "F", "B", "BI", "BW", "SEND", "RECV".
llvm::StringRef kindName(ActionKind kind);

/// True for F, B, BI and BW.
inline bool isCompute(ActionKind kind) {
  return kind != ActionKind::Send && kind != ActionKind::Recv;
}

struct Action {
  ActionKind kind = ActionKind::F;
  int stage = 0;
  int microbatch = 0;
  /// Send/Recv only: the other rank.
  int peer = -1;
  /// Send/Recv only: whose output travels, F (activation, to stage + 1) or
  /// B (input gradient of B or BI, to stage - 1).
  ActionKind payload = ActionKind::F;

  static Action compute(ActionKind kind, int stage, int microbatch) {
    Action a;
    a.kind = kind;
    a.stage = stage;
    a.microbatch = microbatch;
    return a;
  }
  static Action transfer(ActionKind kind, ActionKind payload, int stage,
                         int microbatch, int peer) {
    Action a = compute(kind, stage, microbatch);
    a.payload = payload;
    a.peer = peer;
    return a;
  }
  bool operator==(const Action &o) const {
    return kind == o.kind && stage == o.stage && microbatch == o.microbatch &&
           peer == o.peer && payload == o.payload;
  }
  bool operator!=(const Action &o) const { return !(*this == o); }
};

/// The token of an action in the text format: `F1.3`, `BI0.2`, `SEND_F1.3@2`.
std::string formatAction(const Action &action);

/// The rank grid and microbatch count.
struct Shape {
  int ranks = 1;
  int chunks = 1; ///< v: chunks (virtual stages) per rank
  int microbatches = 1;

  int stages() const { return ranks * chunks; }
  int rankOf(int stage) const { return stage % ranks; }
  int chunkOf(int stage) const { return stage / ranks; }
};

struct Schedule {
  std::string name; ///< "gpipe", "1f1b", ..., or "user"
  Shape shape;
  /// actions[r] is rank r's ordered list.
  std::vector<std::vector<Action>> actions;
  /// Where a parsed table came from: its name and, per rank, the line of
  /// its list (empty for generated schedules). Reports name them.
  std::string source;
  std::vector<unsigned> rankLines;
  /// Optional names of what each action runs (labels[r][i] for
  /// actions[r][i], e.g. the fragment "@s0.bwd"); reports print them.
  std::vector<std::vector<std::string>> labels;

  /// True when some rank has an explicit SEND or RECV.
  bool hasExplicitTransfers() const;
};

/// Prints the text format: a header comment, then `rank r: tok tok ...`.
void printSchedule(const Schedule &schedule, llvm::raw_ostream &os);

/// Parses the text format. The shape comes from an optional
/// `shape ranks=P chunks=V microbatches=M` line, else it is inferred (ranks =
/// number of rank lines, stages and microbatches from the largest indices).
/// Errors read `<bufferName>:<line>:<column>: error: ...`.
llvm::Expected<Schedule> parseSchedule(llvm::StringRef text,
                                       llvm::StringRef bufferName = "<input>");

struct ValidateOptions {
  /// Require the backward that accumulates a stage's weight gradient (B, or
  /// BW when split) to run in microbatch-index order on every stage. Built-in
  /// schedules always satisfy this.
  bool accumulationOrder = true;
};

/// Checks that every (stage, microbatch) has one F and one backward (B, or
/// BI then BW) on the rank that owns the stage; that same-rank dependencies
/// come earlier in the rank's list; the accumulation order; and that
/// explicit SEND/RECV pairs match. Errors name the rank and the action.
llvm::Error validateSchedule(const Schedule &schedule,
                             const ValidateOptions &options = {});

} // namespace tandem::schedule

#endif // TANDEM_SCHEDULE_SCHEDULE_H
