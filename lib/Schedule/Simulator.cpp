//===- Simulator.cpp - Discrete-event execution of a schedule -------------===//

#include "tandem/Schedule/Simulator.h"

#include "llvm/ADT/STLExtras.h"
#include "llvm/Support/Format.h"
#include "llvm/Support/FormatVariadic.h"
#include "llvm/Support/raw_ostream.h"

#include <algorithm>
#include <map>
#include <optional>
#include <string>

using namespace llvm;
using namespace tandem::schedule;

static double pick(const std::vector<double> &values, int stage) {
  if (values.empty())
    return 0.0;
  if (values.size() == 1)
    return values.front();
  return values[stage];
}

double Costs::duration(ActionKind kind, int stage) const {
  switch (kind) {
  case ActionKind::F:
    return pick(forward, stage);
  case ActionKind::B:
    return pick(inputGrad, stage) + pick(weightGrad, stage);
  case ActionKind::BI:
    return pick(inputGrad, stage);
  case ActionKind::BW:
    return pick(weightGrad, stage);
  default:
    return 0.0;
  }
}

double Costs::transferTime() const {
  double t = latency;
  if (bandwidth > 0.0)
    t += bytesPerMicrobatch / bandwidth;
  return t;
}

double Costs::payloadBytes(ActionKind payload, int stage) const {
  const std::vector<double> &sizes =
      payload == ActionKind::F ? activationBytes : gradientBytes;
  return sizes.empty() ? bytesPerMicrobatch : pick(sizes, stage);
}

double Costs::transferTime(ActionKind payload, int stage) const {
  double t = latency;
  if (bandwidth > 0.0)
    t += payloadBytes(payload, stage) / bandwidth;
  return t;
}

namespace {
constexpr double notYet = -1.0;

class Simulation {
public:
  Simulation(const Schedule &schedule, const Costs &costs)
      : schedule(schedule), shape(schedule.shape), costs(costs),
        explicitTransfers(schedule.hasExplicitTransfers()) {
    int S = shape.stages(), M = shape.microbatches;
    fEnd.assign(S, std::vector<double>(M, notYet));
    gradEnd.assign(S, std::vector<double>(M, notYet));
    splitDone.assign(S, std::vector<double>(M, notYet));
    pc.assign(shape.ranks, 0);
    clock.assign(shape.ranks, 0.0);
    report.ranks.resize(shape.ranks);
  }

  Expected<SimulationReport> run();

private:
  /// When the input of `a` is available on its rank, or nullopt while it is
  /// not. `why` says what is missing.
  std::optional<double> inputsReady(int rank, const Action &a, std::string &why,
                                    bool record);
  bool step(int rank);
  void finish(int rank, const Action &a, double start, double end);
  std::string describeWait(int rank);
  /// " (<table>:<line>)" for a parsed table's rank, else "".
  std::string location(int rank) const {
    if (static_cast<size_t>(rank) >= schedule.rankLines.size())
      return "";
    return formatv(" ({0}:{1})", schedule.source, schedule.rankLines[rank])
        .str();
  }

  const Schedule &schedule;
  const Shape &shape;
  const Costs &costs;
  bool explicitTransfers;
  std::vector<std::vector<double>> fEnd, gradEnd, splitDone;
  std::map<std::tuple<int, int, int>, double> recvEnd;
  std::vector<size_t> pc;
  std::vector<double> clock;
  std::map<std::pair<int, int>, LinkReport> links;
  SimulationReport report;
};
} // namespace

static std::tuple<int, int, int> payloadKey(ActionKind payload, int stage,
                                            int mb) {
  return {static_cast<int>(payload), stage, mb};
}

std::optional<double> Simulation::inputsReady(int rank, const Action &a,
                                              std::string &why, bool record) {
  int s = a.stage, i = a.microbatch, S = shape.stages();
  double ready = 0.0;
  // An input produced by stage `src` (F output when forward, else the input
  // gradient).
  auto edge = [&](bool forward, int src) -> bool {
    double produced = forward ? fEnd[src][i] : gradEnd[src][i];
    int from = shape.rankOf(src);
    Action producer =
        Action::compute(forward ? ActionKind::F : ActionKind::B, src, i);
    if (from == rank) {
      if (produced == notYet) {
        why = formatv("{0}{1}.{2} (same rank, later in its list)",
                      forward ? "F" : "B/BI", src, i);
        return false;
      }
      ready = std::max(ready, produced);
      return true;
    }
    if (explicitTransfers) {
      auto it = recvEnd.find(payloadKey(producer.kind, src, i));
      if (it == recvEnd.end()) {
        why = formatAction(Action::transfer(ActionKind::Recv, producer.kind,
                                            src, i, from)) +
              " (no earlier RECV on this rank)";
        return false;
      }
      ready = std::max(ready, it->second);
      return true;
    }
    if (produced == notYet) {
      why = formatv("{0}{1}.{2} on rank {3}", forward ? "F" : "B/BI", src, i,
                    from);
      return false;
    }
    ready = std::max(ready, produced + costs.transferTime(producer.kind, src));
    if (record) {
      LinkReport &link = links[{from, rank}];
      link.from = from;
      link.to = rank;
      ++link.transfers;
      link.bytes += costs.payloadBytes(producer.kind, src);
    }
    return true;
  };
  switch (a.kind) {
  case ActionKind::F:
    if (s > 0 && !edge(true, s - 1))
      return std::nullopt;
    break;
  case ActionKind::B:
  case ActionKind::BI:
    if (fEnd[s][i] == notYet) {
      why = formatv("F{0}.{1} (same rank, later in its list)", s, i);
      return std::nullopt;
    }
    ready = std::max(ready, fEnd[s][i]);
    if (s + 1 < S && !edge(false, s + 1))
      return std::nullopt;
    break;
  case ActionKind::BW:
    if (splitDone[s][i] == notYet) {
      why = formatv("BI{0}.{1} (same rank, later in its list)", s, i);
      return std::nullopt;
    }
    ready = std::max(ready, splitDone[s][i]);
    break;
  default:
    break;
  }
  return ready;
}

void Simulation::finish(int rank, const Action &a, double start, double end) {
  RankReport &rr = report.ranks[rank];
  rr.timeline.push_back({a, start, end});
  clock[rank] = end;
  ++pc[rank];
  switch (a.kind) {
  case ActionKind::F:
    fEnd[a.stage][a.microbatch] = end;
    rr.busy += end - start;
    break;
  case ActionKind::B:
    gradEnd[a.stage][a.microbatch] = end;
    rr.busy += end - start;
    break;
  case ActionKind::BI:
    gradEnd[a.stage][a.microbatch] = end;
    splitDone[a.stage][a.microbatch] = end;
    rr.busy += end - start;
    break;
  case ActionKind::BW:
    rr.busy += end - start;
    break;
  case ActionKind::Send:
  case ActionKind::Recv:
    rr.communicating += end - start;
    break;
  }
}

bool Simulation::step(int rank) {
  const auto &list = schedule.actions[rank];
  if (pc[rank] >= list.size())
    return false;
  const Action &a = list[pc[rank]];
  if (isCompute(a.kind)) {
    std::string why;
    auto ready = inputsReady(rank, a, why, /*record=*/true);
    if (!ready)
      return false;
    double start = std::max(clock[rank], *ready);
    finish(rank, a, start, start + costs.duration(a.kind, a.stage));
    return true;
  }
  // Rendezvous: both sides must have reached their halves.
  int peer = a.peer;
  if (peer < 0 || peer >= shape.ranks || peer == rank)
    return false;
  const auto &peerList = schedule.actions[peer];
  if (pc[peer] >= peerList.size())
    return false;
  const Action &other = peerList[pc[peer]];
  ActionKind want =
      a.kind == ActionKind::Send ? ActionKind::Recv : ActionKind::Send;
  if (other.kind != want || other.payload != a.payload ||
      other.stage != a.stage || other.microbatch != a.microbatch ||
      other.peer != rank)
    return false;
  const Action &send = a.kind == ActionKind::Send ? a : other;
  int sender = a.kind == ActionKind::Send ? rank : peer;
  int receiver = a.kind == ActionKind::Send ? peer : rank;
  // The sender must have the payload.
  double produced = send.payload == ActionKind::F
                        ? fEnd[send.stage][send.microbatch]
                        : gradEnd[send.stage][send.microbatch];
  if (produced == notYet)
    return false;
  double start = std::max({clock[rank], clock[peer], produced});
  double end = start + costs.transferTime(send.payload, send.stage);
  recvEnd[payloadKey(send.payload, send.stage, send.microbatch)] = end;
  LinkReport &link = links[{sender, receiver}];
  link.from = sender;
  link.to = receiver;
  ++link.transfers;
  link.bytes += costs.payloadBytes(send.payload, send.stage);
  Action sendAction = send;
  Action recvAction = a.kind == ActionKind::Send ? other : a;
  finish(sender, sendAction, start, end);
  finish(receiver, recvAction, start, end);
  return true;
}

std::string Simulation::describeWait(int rank) {
  const Action &a = schedule.actions[rank][pc[rank]];
  std::string label;
  if (static_cast<size_t>(rank) < schedule.labels.size() &&
      pc[rank] < schedule.labels[rank].size() &&
      !schedule.labels[rank][pc[rank]].empty())
    label = ", " + schedule.labels[rank][pc[rank]];
  std::string head =
      formatv("rank {0}{1} waits at action {2} ({3}{4}) for ", rank,
              location(rank), pc[rank], formatAction(a), label);
  if (isCompute(a.kind)) {
    std::string why;
    (void)inputsReady(rank, a, why, /*record=*/false);
    return head + why;
  }
  Action match = a;
  match.kind = a.kind == ActionKind::Send ? ActionKind::Recv : ActionKind::Send;
  match.peer = rank;
  std::string at = "its end";
  if (a.peer >= 0 && a.peer < shape.ranks &&
      pc[a.peer] < schedule.actions[a.peer].size())
    at = formatAction(schedule.actions[a.peer][pc[a.peer]]);
  return head + formatv("rank {0} to reach {1} (it is at {2})", a.peer,
                        formatAction(match), at)
                    .str();
}

Expected<SimulationReport> Simulation::run() {
  for (const auto &values : {costs.forward, costs.inputGrad, costs.weightGrad})
    if (values.size() != 1 &&
        values.size() != static_cast<size_t>(shape.stages()))
      return createStringError(
          inconvertibleErrorCode(),
          formatv("costs need 1 or {0} per-stage durations, got {1}",
                  shape.stages(), values.size())
              .str());
  for (const auto &values :
       {costs.activationBytes, costs.gradientBytes, costs.stashBytes})
    if (values.size() > 1 &&
        values.size() != static_cast<size_t>(shape.stages()))
      return createStringError(
          inconvertibleErrorCode(),
          formatv("costs need 0, 1 or {0} per-stage byte counts, got {1}",
                  shape.stages(), values.size())
              .str());
  bool progress = true;
  while (progress) {
    progress = false;
    for (int r = 0; r < shape.ranks; ++r)
      while (step(r))
        progress = true;
  }
  std::string waits;
  for (int r = 0; r < shape.ranks; ++r)
    if (pc[r] < schedule.actions[r].size())
      waits += "\n  " + describeWait(r);
  if (!waits.empty())
    return createStringError(inconvertibleErrorCode(),
                             "deadlock: no rank can make progress" + waits);
  for (double c : clock)
    report.stepTime = std::max(report.stepTime, c);
  for (int r = 0; r < shape.ranks; ++r) {
    RankReport &rr = report.ranks[r];
    rr.idle = report.stepTime - rr.busy;
    rr.bubble = report.stepTime > 0 ? rr.idle / report.stepTime : 0.0;
    // In flight: from F until the last backward of (stage, microbatch).
    int live = 0;
    double liveBytes = 0.0;
    for (const TimedAction &t : rr.timeline) {
      double stash = costs.stashBytes.empty()
                         ? 0.0
                         : pick(costs.stashBytes, t.action.stage);
      if (t.action.kind == ActionKind::F) {
        rr.peakInFlight = std::max(rr.peakInFlight, ++live);
        liveBytes += stash;
        rr.peakInFlightBytes = std::max(rr.peakInFlightBytes, liveBytes);
      } else if (t.action.kind == ActionKind::B ||
                 t.action.kind == ActionKind::BW) {
        --live;
        liveBytes -= stash;
      }
    }
  }
  for (auto &[key, link] : links)
    report.links.push_back(link);
  return std::move(report);
}

Expected<SimulationReport> tandem::schedule::simulate(const Schedule &schedule,
                                                      const Costs &costs) {
  if (static_cast<int>(schedule.actions.size()) != schedule.shape.ranks)
    return createStringError(inconvertibleErrorCode(),
                             "schedule has %zu rank lists for %d ranks",
                             schedule.actions.size(), schedule.shape.ranks);
  Simulation sim(schedule, costs);
  return sim.run();
}

/// Integers print without a fraction; other values with 6 significant
/// digits.
static std::string number(double x) {
  std::string s;
  raw_string_ostream os(s);
  os << format("%.6g", x);
  return s;
}

void tandem::schedule::printReport(const Schedule &schedule,
                                   const SimulationReport &report,
                                   raw_ostream &os) {
  os << "step time: " << number(report.stepTime) << "\n";
  os << "rank  busy        idle        bubble    peak-in-flight\n";
  for (auto [r, rr] : enumerate(report.ranks))
    os << format("%4zu  %-10s  %-10s  %-8s  %d\n", r, number(rr.busy).c_str(),
                 number(rr.idle).c_str(), number(rr.bubble).c_str(),
                 rr.peakInFlight);
  double busy = 0.0;
  for (const RankReport &rr : report.ranks)
    busy += rr.busy;
  double total = report.stepTime * report.ranks.size();
  os << "mean bubble: " << number(total > 0 ? (total - busy) / total : 0.0)
     << "\n";
  if (report.links.empty())
    return;
  os << "links:\n";
  for (const LinkReport &l : report.links)
    os << "  " << l.from << " -> " << l.to << ": " << l.transfers
       << " transfers, " << number(l.bytes) << " bytes\n";
  (void)schedule;
}
