//===- LowerTransfers.cpp - mpmd-lower-transfers --------------------------===//
//
// Turns the cross-rank mpmd.transfer edges of a scheduled mpmd.program into
// mpmd.send / mpmd.recv actions. The rank lists are first executed in a
// simulation with free links (F, BI, BW one unit, B two, once-per-step runs
// an infinitesimal tick). Every message (a slot needed on another rank) is
// exchanged at a time t: the first time from its arrival (its producer's
// finish) on, by the start of its consumer, at which neither rank is inside
// a run. Its send and receive go before the first run of their rank that
// starts at or after t. Receiving as soon as the value arrives, rather than
// right before the consumer, is what a nonblocking irecv posted early
// achieves: a sender does not wait for a receiver busy with runs that do
// not need the value, and the lists execute with the simulated timing, the
// schedule's own. All messages are posted in order of t, one global order
// that every rank's sequence of groups respects, so no rank can wait on
// another in a cycle under rendezvous semantics (docs/mpmd.md has the
// argument). Channels: one per cross-stage edge (producer slot, consumer
// stage), numbered in the order of the program's transfers.
//
//===----------------------------------------------------------------------===//

#include "tandem/Dialect/MPMD/IR/MPMDOps.h"
#include "tandem/Dialect/MPMD/Transforms/Passes.h"

#include "mlir/IR/Builders.h"
#include "mlir/IR/BuiltinOps.h"
#include "llvm/ADT/STLExtras.h"
#include "llvm/ADT/Sequence.h"
#include "llvm/ADT/SmallVector.h"
#include "llvm/ADT/StringMap.h"

#include <algorithm>
#include <map>
#include <optional>
#include <tuple>
#include <utility>

namespace tandem::mpmd {
#define GEN_PASS_DEF_MPMDLOWERTRANSFERS
#include "tandem/Dialect/MPMD/Transforms/Passes.h.inc"
} // namespace tandem::mpmd

using namespace mlir;
using namespace tandem::mpmd;

namespace {

/// Microbatch of a run instance; -1 for once-per-step fragments.
constexpr int64_t kNoMicrobatch = -1;

/// A point of the simulated timeline: (compute units, ticks), ordered
/// lexicographically. Once-per-step runs take one tick, which is less than
/// any compute unit: they take no time, as in mpmd-simulate, yet every run
/// still ends strictly after it starts, which the deadlock-freedom argument
/// needs (docs/mpmd.md).
using Time = std::pair<int64_t, int64_t>;

Time plus(Time a, Time b) { return {a.first + b.first, a.second + b.second}; }

struct Message {
  FragmentOp producer;
  int64_t result;
  int64_t microbatch; ///< kNoMicrobatch for once-per-step producers
  int64_t from, to;   ///< ranks
  int64_t channel;
  RankedTensorType type;
  Time arrival;       ///< simulated finish of the producer
  Time consumerStart; ///< simulated start of the first consumer
  /// When the message is exchanged in the simulated timeline: the first
  /// time at or after `arrival` (and by `consumerStart`) at which neither
  /// rank is inside a run, if there is one, else `arrival`.
  Time at;
  /// The send and the receive go right before run sendGroup / recvGroup of
  /// their ranks (or at the end): before the first run that starts at or
  /// after `at`.
  int64_t sendGroup = 0;
  int64_t recvGroup = 0;
};

class Lowering {
public:
  explicit Lowering(ProgramOp program) : program(program) {}
  LogicalResult run();

private:
  LogicalResult collect();
  LogicalResult simulate();
  LogicalResult buildMessages();
  /// Chooses each message's time and groups.
  void place();
  /// Orders the messages globally (`position`) by time and checks that
  /// every rank's groups respect the order.
  LogicalResult order();
  void emit();

  /// The producer run instances that `consumer` (fragment, microbatch) reads
  /// through `transfer`, as (rank, index in that rank's runs); fails after
  /// reporting a producer that never runs.
  LogicalResult producersOf(TransferOp transfer, int64_t consumerRank,
                            RunOp consumerRun, int64_t microbatch,
                            SmallVectorImpl<std::pair<int64_t, int64_t>> &out);

  ProgramOp program;
  int64_t numRanks = 0;
  llvm::StringMap<FragmentOp> fragments;
  SmallVector<TransferOp> transfers;
  llvm::StringMap<SmallVector<TransferOp>> incoming;
  SmallVector<RankOp> rankOps;
  /// runs[r]: rank r's runs in order.
  SmallVector<SmallVector<RunOp>> runs;
  /// (rank, fragment, microbatch) -> index in runs[rank].
  std::map<std::tuple<int64_t, StringRef, int64_t>, int64_t> runIndex;
  /// Simulated start and finish of runs[r][i] (free links).
  SmallVector<SmallVector<Time>> start, finish;
  std::vector<Message> messages;
  /// Position of each message in the global order.
  std::vector<int64_t> position;
};

int64_t microbatchOf(RunOp run) {
  if (std::optional<uint64_t> mb = run.getMicrobatch())
    return static_cast<int64_t>(*mb);
  return kNoMicrobatch;
}

/// Simulated duration of `run` of `fragment`: the unit costs of
/// mpmd-simulate's defaults (F = BI = BW = 1, B = BI + BW), one tick for
/// runs the schedule model gives no time.
Time durationOf(RunOp run, FragmentOp fragment) {
  if (run.getMicrobatch()) {
    switch (fragment.getKind()) {
    case FragmentKind::Fwd:
    case FragmentKind::BwdInput:
    case FragmentKind::BwdWeight:
      return {1, 0};
    case FragmentKind::Bwd:
      return {2, 0};
    default:
      break;
    }
  }
  return {0, 1};
}

LogicalResult Lowering::collect() {
  Block &body = program.getBodyBlock();
  numRanks = program.getNumRanks();
  for (FragmentOp fragment : body.getOps<FragmentOp>())
    fragments[fragment.getSymName()] = fragment;
  for (TransferOp transfer : body.getOps<TransferOp>()) {
    transfers.push_back(transfer);
    incoming[transfer.getDst()].push_back(transfer);
  }
  rankOps.assign(numRanks, RankOp());
  for (RankOp rank : body.getOps<RankOp>())
    rankOps[rank.getRank()] = rank;
  if (body.getOps<RankOp>().empty())
    return program.emitOpError()
           << "has no rank action lists; run mpmd-schedule first";
  for (int64_t r = 0; r < numRanks; ++r)
    if (!rankOps[r])
      return program.emitOpError()
             << "has no action list for rank " << r
             << "; mpmd-lower-transfers needs one per rank";

  runs.resize(numRanks);
  for (int64_t r = 0; r < numRanks; ++r) {
    for (Operation &op : rankOps[r].getBodyBlock()) {
      if (isa<SendOp, RecvOp>(op))
        return op.emitOpError()
               << "is explicit communication; mpmd-lower-transfers expects "
                  "action lists with runs only (already lowered?)";
      auto run = dyn_cast<RunOp>(op);
      if (!run)
        continue;
      auto key = std::make_tuple(r, run.getFragment(), microbatchOf(run));
      if (!runIndex.try_emplace(key, runs[r].size()).second)
        return run.emitOpError()
               << "runs @" << run.getFragment()
               << " for the same microbatch twice on rank " << r;
      runs[r].push_back(run);
    }
  }
  return success();
}

LogicalResult
Lowering::producersOf(TransferOp transfer, int64_t consumerRank,
                      RunOp consumerRun, int64_t microbatch,
                      SmallVectorImpl<std::pair<int64_t, int64_t>> &out) {
  FragmentOp src = fragments.lookup(transfer.getSrc());
  FragmentOp dst = fragments.lookup(transfer.getDst());
  int64_t replica = program.getReplicaOfRank(consumerRank);
  int64_t rank = program.getRank(src.getStage(), replica);
  SmallVector<int64_t> mbs;
  if (!src.isPerMicrobatch())
    mbs.push_back(kNoMicrobatch);
  else if (dst.isPerMicrobatch())
    mbs.push_back(microbatch);
  else
    for (int64_t k = 0, m = program.getMicrobatches(); k < m; ++k)
      mbs.push_back(k);
  for (int64_t mb : mbs) {
    auto it = runIndex.find(std::make_tuple(rank, src.getSymName(), mb));
    if (it == runIndex.end()) {
      InFlightDiagnostic diag = consumerRun.emitOpError()
                                << "reads @" << src.getSymName() << "["
                                << transfer.getResult() << "]";
      if (mb != kNoMicrobatch)
        diag << " microbatch " << mb;
      diag << ", but rank " << rank << " never runs @" << src.getSymName();
      if (mb != kNoMicrobatch)
        diag << " for that microbatch";
      return failure();
    }
    out.push_back({rank, it->second});
  }
  return success();
}

LogicalResult Lowering::simulate() {
  // Dependencies of every run (local ones included, so that a list that
  // runs a consumer before its producer is caught as well).
  SmallVector<SmallVector<SmallVector<std::pair<int64_t, int64_t>>>> deps(
      numRanks);
  for (int64_t r = 0; r < numRanks; ++r) {
    deps[r].resize(runs[r].size());
    for (auto [i, run] : llvm::enumerate(runs[r]))
      for (TransferOp transfer : incoming.lookup(run.getFragment()))
        if (failed(
                producersOf(transfer, r, run, microbatchOf(run), deps[r][i])))
          return failure();
  }

  start.assign(numRanks, {});
  finish.assign(numRanks, {});
  for (int64_t r = 0; r < numRanks; ++r) {
    start[r].resize(runs[r].size());
    finish[r].resize(runs[r].size());
  }
  SmallVector<size_t> next(numRanks, 0);
  SmallVector<Time> clock(numRanks, Time{0, 0});
  for (bool progress = true; progress;) {
    progress = false;
    for (int64_t r = 0; r < numRanks; ++r) {
      while (next[r] < runs[r].size()) {
        size_t i = next[r];
        Time at = clock[r];
        bool ready = true;
        for (auto [pr, pi] : deps[r][i]) {
          if (next[pr] <= size_t(pi)) {
            ready = false;
            break;
          }
          at = std::max(at, finish[pr][pi]);
        }
        if (!ready)
          break;
        RunOp run = runs[r][i];
        start[r][i] = at;
        finish[r][i] = clock[r] =
            plus(at, durationOf(run, fragments.lookup(run.getFragment())));
        ++next[r];
        progress = true;
      }
    }
  }
  for (int64_t r = 0; r < numRanks; ++r)
    if (next[r] < runs[r].size())
      return runs[r][next[r]].emitOpError()
             << "waits for an input that is never produced: the action "
                "lists of ranks wait on each other in a cycle (rank "
             << r << ")";
  return success();
}

LogicalResult Lowering::buildMessages() {
  // Channels: one per (producer, result, consumer stage), in program order.
  std::map<std::tuple<StringRef, int64_t, int64_t>, int64_t> channels;
  // Messages: one per (producer slot, receiving rank).
  std::map<std::tuple<StringRef, int64_t, int64_t, int64_t>, size_t> index;
  for (TransferOp transfer : transfers) {
    FragmentOp src = fragments.lookup(transfer.getSrc());
    FragmentOp dst = fragments.lookup(transfer.getDst());
    if (src.getStage() == dst.getStage())
      continue; // same rank: the slot stays where it is
    auto [channelIt, unused] = channels.try_emplace(
        std::make_tuple(src.getSymName(), int64_t(transfer.getResult()),
                        int64_t(dst.getStage())),
        channels.size());
    (void)unused;
    for (int64_t replica = 0; replica < int64_t(program.getReplicas());
         ++replica) {
      int64_t to = program.getRank(dst.getStage(), replica);
      for (auto [i, run] : llvm::enumerate(runs[to])) {
        if (run.getFragment() != dst.getSymName())
          continue;
        SmallVector<std::pair<int64_t, int64_t>> producers;
        if (failed(
                producersOf(transfer, to, run, microbatchOf(run), producers)))
          return failure();
        for (auto [from, producerIndex] : producers) {
          int64_t mb = microbatchOf(runs[from][producerIndex]);
          auto key = std::make_tuple(src.getSymName(),
                                     int64_t(transfer.getResult()), mb, to);
          auto [it, inserted] = index.try_emplace(key, messages.size());
          if (inserted) {
            Message message;
            message.producer = src;
            message.result = transfer.getResult();
            message.microbatch = mb;
            message.from = from;
            message.to = to;
            message.channel = channelIt->second;
            message.type = cast<RankedTensorType>(transfer.getType());
            message.arrival = finish[from][producerIndex];
            message.consumerStart = start[to][i];
            messages.push_back(message);
            continue;
          }
          Message &message = messages[it->second];
          message.consumerStart = std::min(message.consumerStart, start[to][i]);
        }
      }
    }
  }
  return success();
}

void Lowering::place() {
  // The group of rank r that time t falls into: before the first run that
  // starts at or after t (start times on a rank do not decrease).
  auto groupAt = [&](int64_t r, Time t) -> int64_t {
    return llvm::lower_bound(start[r], t) - start[r].begin();
  };
  auto idleAt = [&](int64_t r, Time t) {
    int64_t group = groupAt(r, t);
    return group == 0 || finish[r][group - 1] <= t;
  };
  for (Message &message : messages) {
    // The earliest time from the arrival on at which both ranks are between
    // runs: a run of either rank that is in progress at the arrival would
    // otherwise make the other rank wait for its end in the rendezvous.
    // Such a time is the arrival or the end of a run.
    SmallVector<Time> candidates{message.arrival};
    for (int64_t r : {message.from, message.to})
      for (Time end : finish[r])
        if (message.arrival < end && end <= message.consumerStart)
          candidates.push_back(end);
    llvm::sort(candidates);
    message.at = message.arrival;
    for (Time t : candidates)
      if (idleAt(message.from, t) && idleAt(message.to, t)) {
        message.at = t;
        break;
      }
    // The producer starts before the arrival and the consumer no earlier
    // than `at`: the send follows the producer, the receive precedes the
    // consumer.
    message.sendGroup = groupAt(message.from, message.at);
    message.recvGroup = groupAt(message.to, message.at);
  }
}

LogicalResult Lowering::order() {
  // By time; ties (which never fall into different groups of one rank) by
  // the first consumer's start, then the receiving rank, then creation
  // order.
  SmallVector<size_t> sorted =
      llvm::to_vector(llvm::seq<size_t>(0, messages.size()));
  llvm::sort(sorted, [&](size_t a, size_t b) {
    const Message &x = messages[a], &y = messages[b];
    return std::make_tuple(x.at, x.consumerStart, x.to, a) <
           std::make_tuple(y.at, y.consumerStart, y.to, b);
  });
  position.assign(messages.size(), -1);
  for (auto [k, id] : llvm::enumerate(sorted))
    position[id] = k;

  // Every message of a rank's earlier group must come before every message
  // of its later groups (docs/mpmd.md proves that time order does this);
  // checked, since the whole deadlock-freedom argument rests on it.
  for (int64_t r = 0; r < numRanks; ++r) {
    std::map<int64_t, std::pair<int64_t, int64_t>> span; // group -> min, max
    auto note = [&](int64_t group, int64_t pos) {
      auto [it, inserted] = span.try_emplace(group, pos, pos);
      if (!inserted) {
        it->second.first = std::min(it->second.first, pos);
        it->second.second = std::max(it->second.second, pos);
      }
    };
    for (auto [id, message] : llvm::enumerate(messages)) {
      if (message.from == r)
        note(message.sendGroup, position[id]);
      if (message.to == r)
        note(message.recvGroup, position[id]);
    }
    int64_t previousMax = -1;
    for (auto &[group, minMax] : span) {
      if (minMax.first < previousMax)
        return program.emitOpError()
               << "cannot order the sends and receives of rank " << r
               << " without a deadlock under rendezvous semantics (internal "
                  "error: group before run "
               << group << " is out of time order)";
      previousMax = minMax.second;
    }
  }
  return success();
}

void Lowering::emit() {
  OpBuilder builder(program.getContext());
  Location loc = program.getLoc();
  for (int64_t r = 0; r < numRanks; ++r) {
    // (group, position, message, is send)
    std::vector<std::tuple<int64_t, int64_t, size_t, bool>> ops;
    for (auto [id, message] : llvm::enumerate(messages)) {
      if (message.from == r)
        ops.emplace_back(message.sendGroup, position[id], id, true);
      if (message.to == r)
        ops.emplace_back(message.recvGroup, position[id], id, false);
    }
    std::sort(ops.begin(), ops.end());
    int64_t currentGroup = -1;
    for (auto [group, unusedPosition, id, isSend] : ops) {
      (void)unusedPosition;
      if (group != currentGroup) {
        currentGroup = group;
        if (group == 0)
          builder.setInsertionPointToStart(&rankOps[r].getBodyBlock());
        else
          builder.setInsertionPointAfter(runs[r][group - 1]);
      }
      Message &message = messages[id];
      IntegerAttr mb = message.microbatch == kNoMicrobatch
                           ? IntegerAttr()
                           : builder.getI64IntegerAttr(message.microbatch);
      Type wire = message.type.getElementType();
      if (isSend)
        SendOp::create(builder, loc, message.producer.getSymName(),
                       message.result, mb, message.to, message.channel,
                       message.type, wire);
      else
        RecvOp::create(builder, loc, message.producer.getSymName(),
                       message.result, mb, message.from, message.channel,
                       message.type, wire);
    }
  }
}

LogicalResult Lowering::run() {
  if (failed(collect()) || failed(simulate()) || failed(buildMessages()))
    return failure();
  place();
  if (failed(order()))
    return failure();
  emit();
  return success();
}

struct MPMDLowerTransfersPass
    : tandem::mpmd::impl::MPMDLowerTransfersBase<MPMDLowerTransfersPass> {
  using MPMDLowerTransfersBase::MPMDLowerTransfersBase;
  void runOnOperation() override {
    bool failedAny = false;
    for (ProgramOp program : getOperation().getOps<ProgramOp>())
      if (failed(Lowering(program).run()))
        failedAny = true;
    if (failedAny)
      signalPassFailure();
  }
};

} // namespace
