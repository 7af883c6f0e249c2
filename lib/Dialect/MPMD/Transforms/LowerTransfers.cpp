//===- LowerTransfers.cpp - mpmd-lower-transfers --------------------------===//
//
// Turns the cross-rank mpmd.transfer edges of a scheduled mpmd.program into
// mpmd.send / mpmd.recv actions. Every message (a slot needed on another
// rank) is sent right after the run that produces it and received right
// before the first run that consumes it, so each rank's communication falls
// into groups between consecutive runs. The messages are then put into one
// global order that every rank's sequence of groups respects (a topological
// order of the "earlier group before later group" constraints of all ranks),
// and each group is posted in that order. With one global order no rank can
// wait on another in a cycle under rendezvous semantics. When the constraints
// have a cycle, a receive on it moves earlier, to where its value arrives in
// a unit-time simulation of the lists, until none is left (docs/mpmd.md has
// the argument that this ends). Channels: one per cross-stage edge (producer
// slot, consumer stage), numbered in the order of the program's transfers.
//
//===----------------------------------------------------------------------===//

#include "tandem/Dialect/MPMD/IR/MPMDOps.h"
#include "tandem/Dialect/MPMD/Transforms/Passes.h"

#include "mlir/IR/Builders.h"
#include "mlir/IR/BuiltinOps.h"
#include "llvm/ADT/DenseMap.h"
#include "llvm/ADT/SmallVector.h"
#include "llvm/ADT/StringMap.h"

#include <algorithm>
#include <limits>
#include <map>
#include <optional>
#include <set>
#include <tuple>

namespace tandem::mpmd {
#define GEN_PASS_DEF_MPMDLOWERTRANSFERS
#include "tandem/Dialect/MPMD/Transforms/Passes.h.inc"
} // namespace tandem::mpmd

using namespace mlir;
using namespace tandem::mpmd;

namespace {

/// Microbatch of a run instance; -1 for once-per-step fragments.
constexpr int64_t kNoMicrobatch = -1;

struct Message {
  FragmentOp producer;
  int64_t result;
  int64_t microbatch; ///< kNoMicrobatch for once-per-step producers
  int64_t from, to;   ///< ranks
  int64_t channel;
  RankedTensorType type;
  int64_t sendGroup = 0; ///< the send goes right after run sendGroup - 1
  int64_t recvGroup = 0; ///< the receive goes right before run recvGroup
  /// The group of the receiver's first run that starts (simulated) no
  /// earlier than the producer finishes: where the value arrives.
  int64_t arrivalGroup = 0;
  int64_t consumerStart = 0; ///< simulated start of the first consumer
};

class Lowering {
public:
  explicit Lowering(ProgramOp program) : program(program) {}
  LogicalResult run();

private:
  LogicalResult collect();
  LogicalResult simulate();
  LogicalResult buildMessages();
  /// Orders the messages globally (`position`), or returns a message on a
  /// cycle of the group constraints, preferably a receive that can move
  /// earlier.
  std::optional<size_t> order();
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
  /// Simulated start of runs[r][i] (unit durations, free links).
  SmallVector<SmallVector<int64_t>> start;
  std::vector<Message> messages;
  /// Position of each message in the global order.
  std::vector<int64_t> position;
};

int64_t microbatchOf(RunOp run) {
  if (std::optional<uint64_t> mb = run.getMicrobatch())
    return static_cast<int64_t>(*mb);
  return kNoMicrobatch;
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
  SmallVector<SmallVector<int64_t>> finish(numRanks);
  for (int64_t r = 0; r < numRanks; ++r) {
    start[r].assign(runs[r].size(), -1);
    finish[r].assign(runs[r].size(), -1);
  }
  SmallVector<size_t> next(numRanks, 0);
  SmallVector<int64_t> clock(numRanks, 0);
  for (bool progress = true; progress;) {
    progress = false;
    for (int64_t r = 0; r < numRanks; ++r) {
      while (next[r] < runs[r].size()) {
        size_t i = next[r];
        int64_t at = clock[r];
        bool ready = true;
        for (auto [pr, pi] : deps[r][i]) {
          if (finish[pr][pi] < 0) {
            ready = false;
            break;
          }
          at = std::max(at, finish[pr][pi]);
        }
        if (!ready)
          break;
        start[r][i] = at;
        finish[r][i] = clock[r] = at + 1;
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
            message.sendGroup = producerIndex + 1;
            message.recvGroup = i;
            message.consumerStart = start[to][i];
            int64_t arrival = start[from][producerIndex] + 1;
            message.arrivalGroup =
                llvm::lower_bound(start[to], arrival) - start[to].begin();
            messages.push_back(message);
            continue;
          }
          Message &message = messages[it->second];
          if (int64_t(i) < message.recvGroup) {
            message.recvGroup = i;
            message.consumerStart = start[to][i];
          }
        }
      }
    }
  }
  return success();
}

std::optional<size_t> Lowering::order() {
  // Nodes: messages, then one barrier between consecutive non-empty groups
  // of a rank. Edges: every message of a group -> barrier -> every message
  // of the next group.
  size_t numMessages = messages.size();
  SmallVector<SmallVector<size_t>> successors(numMessages),
      predecessors(numMessages);
  SmallVector<int64_t> barrierRank(numMessages, -1);
  auto addEdge = [&](size_t from, size_t to) {
    successors[from].push_back(to);
    predecessors[to].push_back(from);
  };
  for (int64_t r = 0; r < numRanks; ++r) {
    std::map<int64_t, SmallVector<size_t>> groups;
    for (auto [id, message] : llvm::enumerate(messages)) {
      if (message.from == r)
        groups[message.sendGroup].push_back(id);
      if (message.to == r)
        groups[message.recvGroup].push_back(id);
    }
    const SmallVector<size_t> *previous = nullptr;
    for (auto &[group, members] : groups) {
      if (previous) {
        size_t barrier = successors.size();
        successors.emplace_back();
        predecessors.emplace_back();
        barrierRank.push_back(r);
        for (size_t id : *previous)
          addEdge(id, barrier);
        for (size_t id : members)
          addEdge(barrier, id);
      }
      previous = &members;
    }
  }

  // Kahn's algorithm; among ready messages the one whose consumer starts
  // first (simulated), then the lower receiving rank, then creation order.
  // Barriers go first.
  using Key = std::tuple<int64_t, int64_t, size_t>;
  auto keyOf = [&](size_t node) -> Key {
    if (node >= numMessages)
      return {std::numeric_limits<int64_t>::min(), 0, node};
    return {messages[node].consumerStart, messages[node].to, node};
  };
  size_t numNodes = successors.size();
  SmallVector<size_t> indegree(numNodes);
  std::set<Key> ready;
  for (size_t node = 0; node < numNodes; ++node)
    if ((indegree[node] = predecessors[node].size()) == 0)
      ready.insert(keyOf(node));
  SmallVector<bool> done(numNodes, false);
  position.assign(numMessages, -1);
  int64_t placed = 0;
  while (!ready.empty()) {
    size_t node = std::get<2>(*ready.begin());
    ready.erase(ready.begin());
    done[node] = true;
    if (node < numMessages)
      position[node] = placed++;
    for (size_t succ : successors[node])
      if (--indegree[succ] == 0)
        ready.insert(keyOf(succ));
  }
  if (placed == int64_t(numMessages))
    return std::nullopt;

  // A cycle: every node left has a predecessor left; walk back until a node
  // repeats. On it, some barrier of rank r leads to a receive on r placed
  // later than where its value arrives (docs/mpmd.md): return that message.
  size_t node = 0;
  while (done[node])
    ++node;
  SmallVector<int64_t> seen(numNodes, -1);
  SmallVector<size_t> walk;
  while (seen[node] < 0) {
    seen[node] = walk.size();
    walk.push_back(node);
    for (size_t pred : predecessors[node])
      if (!done[pred]) {
        node = pred;
        break;
      }
  }
  // walk[seen[node]..] runs backwards along the cycle.
  SmallVector<size_t> cycle(walk.begin() + seen[node], walk.end());
  std::optional<size_t> lazy, any;
  for (size_t i = 0; i < cycle.size(); ++i) {
    size_t target = cycle[i];
    size_t source = cycle[(i + 1) % cycle.size()];
    if (target >= numMessages || source < numMessages)
      continue;
    any = any.value_or(target);
    const Message &message = messages[target];
    if (message.to == barrierRank[source] &&
        message.recvGroup != message.arrivalGroup && !lazy)
      lazy = target;
  }
  return lazy ? lazy : any;
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
  // Receives right before their consumers; while the groups' constraints
  // have a cycle, move a receive on it to where its value arrives in the
  // simulated timeline. With every receive there, no cycle is left
  // (docs/mpmd.md), so this ends.
  while (std::optional<size_t> stuck = order()) {
    Message &message = messages[*stuck];
    if (message.recvGroup == message.arrivalGroup) {
      InFlightDiagnostic diag =
          program.emitOpError()
          << "cannot order sends and receives without a deadlock under "
             "rendezvous semantics (internal error: a cycle at @"
          << message.producer.getSymName() << "[" << message.result << "]";
      if (message.microbatch != kNoMicrobatch)
        diag << " microbatch " << message.microbatch;
      diag << " from rank " << message.from << " to rank " << message.to << ")";
      return failure();
    }
    message.recvGroup = message.arrivalGroup;
  }
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
