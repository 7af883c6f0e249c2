//===- Simulator.h - Discrete-event execution of a schedule -----*- C++ -*-===//
//
// Runs the per-rank action lists: each rank executes its actions in order;
// an action starts when the rank is free and its inputs exist. Inputs from
// another rank arrive one transfer later (latency + bytes / bandwidth) after
// the producer finishes; with explicit SEND/RECV actions the transfer is a
// rendezvous instead: it starts once both sides have reached their action,
// and both ranks are blocked until it completes. A schedule in which no rank
// can make progress is reported as a deadlock, naming what each rank waits
// on.
//
//===----------------------------------------------------------------------===//

#ifndef TANDEM_SCHEDULE_SIMULATOR_H
#define TANDEM_SCHEDULE_SIMULATOR_H

#include "tandem/Schedule/Schedule.h"

#include <vector>

namespace tandem::schedule {

/// Durations per stage (one entry applies to every stage) and the links.
struct Costs {
  std::vector<double> forward{1.0};
  /// Input-gradient work (BI); a full B takes inputGrad + weightGrad.
  std::vector<double> inputGrad{1.0};
  /// Weight-gradient work (BW).
  std::vector<double> weightGrad{1.0};
  /// Per transfer, in time units.
  double latency = 0.0;
  /// Bytes per time unit; 0 means infinitely fast.
  double bandwidth = 0.0;
  /// Bytes of one microbatch's activation (and of its gradient) on a stage
  /// edge.
  double bytesPerMicrobatch = 0.0;
  /// Per-stage payload sizes, when they differ (one entry applies to every
  /// stage; empty: bytesPerMicrobatch): what F(s) sends to stage s+1, and
  /// what B/BI(s) sends to stage s-1.
  std::vector<double> activationBytes;
  std::vector<double> gradientBytes;
  /// Per stage, the bytes one microbatch keeps alive from its F until its
  /// last backward (the stash); empty: not accounted (peakInFlightBytes 0).
  std::vector<double> stashBytes;

  /// Duration of a compute action on `stage`.
  double duration(ActionKind kind, int stage) const;
  /// Time one payload spends on a link (the bytesPerMicrobatch payload).
  double transferTime() const;
  /// Bytes of the payload of `payload` (F or B) produced on `stage`.
  double payloadBytes(ActionKind payload, int stage) const;
  /// Time that payload spends on a link.
  double transferTime(ActionKind payload, int stage) const;
};

struct TimedAction {
  Action action;
  double start = 0.0;
  double end = 0.0;
};

struct RankReport {
  double busy = 0.0;          ///< time in F/B/BI/BW
  double communicating = 0.0; ///< time blocked in explicit SEND/RECV
  double idle = 0.0;          ///< step time - busy
  double bubble = 0.0;        ///< idle / step time
  /// Most (stage, microbatch) pairs with activations stashed at once: F done,
  /// last backward (B, or BW when split) not yet done.
  int peakInFlight = 0;
  /// Most stash bytes (Costs::stashBytes) alive at once.
  double peakInFlightBytes = 0.0;
  std::vector<TimedAction> timeline;
};

struct LinkReport {
  int from = 0;
  int to = 0;
  int transfers = 0;
  double bytes = 0.0;
};

struct SimulationReport {
  double stepTime = 0.0;
  std::vector<RankReport> ranks;
  /// Directed links that carried at least one payload, sorted by (from, to).
  std::vector<LinkReport> links;
};

/// Simulates a schedule. Every per-stage list of Costs must have one entry
/// or one per stage (byte lists may also be empty). The
/// schedule should pass validateSchedule first; a deadlock (or a missing
/// producer) is returned as an error whose message starts with "deadlock".
llvm::Expected<SimulationReport> simulate(const Schedule &schedule,
                                          const Costs &costs);

/// Prints the report as a table (step time, per-rank busy / idle / bubble /
/// peak in-flight, links).
void printReport(const Schedule &schedule, const SimulationReport &report,
                 llvm::raw_ostream &os);

} // namespace tandem::schedule

#endif // TANDEM_SCHEDULE_SIMULATOR_H
