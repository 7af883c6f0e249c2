//===- Generators.h - Built-in pipeline schedules ---------------*- C++ -*-===//
//
// gpipe, 1f1b, interleaved-1f1b and zb-h1 as per-rank action lists. Every
// generator checks its conditions and returns an llvm::Error that says which
// one failed; the lists it returns pass validateSchedule (accumulation in
// microbatch order included). See docs/schedules.md.
//
//===----------------------------------------------------------------------===//

#ifndef TANDEM_SCHEDULE_GENERATORS_H
#define TANDEM_SCHEDULE_GENERATORS_H

#include "tandem/Schedule/Schedule.h"

#include <optional>

namespace tandem::schedule {

enum class ScheduleKind { GPipe, OneFOneB, Interleaved1F1B, ZBH1 };

/// "gpipe", "1f1b", "interleaved-1f1b", "zb-h1".
llvm::StringRef scheduleKindName(ScheduleKind kind);
/// The kind with that name, or nullopt.
std::optional<ScheduleKind> parseScheduleKind(llvm::StringRef name);

struct GenerateOptions {
  int ranks = 1;
  int microbatches = 1;
  int chunks = 1; ///< v; only interleaved-1f1b (and gpipe) take v > 1
  /// Layers (or stage markers' segments) available to split; 0 = unchecked.
  /// There must be at least ranks * chunks of them.
  int layers = 0;
};

/// All forwards, then all backwards (reverse chunk order, microbatch order).
llvm::Expected<Schedule> generateGPipe(const GenerateOptions &options);
/// One forward, one backward: rank r runs min(p - r - 1, m) warm-up
/// forwards. With m < p this degenerates gracefully (documented fallback):
/// the warm-up is capped at m, which is GPipe's order on the first ranks.
llvm::Expected<Schedule> generate1F1B(const GenerateOptions &options);
/// Megatron's interleaved 1F1B: v >= 2 chunks per rank, m % p == 0.
llvm::Expected<Schedule>
generateInterleaved1F1B(const GenerateOptions &options);
/// Zero-bubble H1: backward split into BI and BW; BW deferred into the
/// bubbles, at most p - r microbatches in flight on rank r (as in 1F1B).
llvm::Expected<Schedule> generateZBH1(const GenerateOptions &options);

llvm::Expected<Schedule> generateSchedule(ScheduleKind kind,
                                          const GenerateOptions &options);

} // namespace tandem::schedule

#endif // TANDEM_SCHEDULE_GENERATORS_H
