//===- Verify.cpp - mpmd-verify: rendezvous simulation of all ranks -------===//
//
// Executes every rank's action list of each `mpmd.program` symbolically,
// under the rendezvous semantics of docs/mpmd.md ("mpmd-verify"):
//
// 1. Point-to-point pairing is static: the n-th send from rank a to rank b
//    on channel c pairs with the n-th recv on b from a on channel c. Paired
//    ops must name the same slot, type and wire type; an op without a
//    partner is an error.
// 2. Collectives are matched statically too: the n-th collective of a rank
//    over a set of members pairs with the n-th collective over that set of
//    every other member; all must agree (kind, group order, type, reduction
//    or root and slot for broadcasts).
// 1b. With fifo-pairs (for transports without tags, NCCL), the messages
//    between two ranks must also pair in posting order across channels:
//    the k-th send from a to b pairs with the k-th recv on b from a.
// 3. A simulation then advances the ranks: a run executes at once and needs
//    its inputs held; consecutive sends/recvs form a group posted together
//    that finishes when every op of it has met its partner; a collective
//    finishes when every member has reached it. If no rank can advance and
//    some have not finished, the blocked ranks are reported as a deadlock.
//
// After a pairing error the simulation continues as if the unpaired op had
// completed, so that each root cause is reported once.
//
//===----------------------------------------------------------------------===//

#include "tandem/Dialect/MPMD/IR/MPMDOps.h"
#include "tandem/Dialect/MPMD/Transforms/Passes.h"

#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/Diagnostics.h"
#include "mlir/IR/SymbolTable.h"
#include "llvm/ADT/DenseMap.h"
#include "llvm/ADT/DenseSet.h"
#include "llvm/ADT/STLExtras.h"
#include "llvm/ADT/SmallVector.h"
#include "llvm/ADT/TypeSwitch.h"

#include <map>
#include <tuple>
#include <vector>

namespace tandem::mpmd {
#define GEN_PASS_DEF_MPMDVERIFY
#include "tandem/Dialect/MPMD/Transforms/Passes.h.inc"
} // namespace tandem::mpmd

using namespace mlir;
using namespace tandem::mpmd;

namespace {

/// A value slot: result `result` of fragment `fragment` for `microbatch`
/// (-1 for a once-per-step producer).
using SlotKey = std::tuple<StringAttr, int64_t, int64_t>;

std::string formatSlot(const SlotKey &slot) {
  auto [fragment, result, microbatch] = slot;
  std::string text;
  llvm::raw_string_ostream os(text);
  os << "@" << fragment.getValue() << "[" << result << "]";
  if (microbatch >= 0)
    os << " microbatch " << microbatch;
  return text;
}

std::string formatRanks(ArrayRef<int64_t> ranks) {
  std::string text;
  llvm::raw_string_ostream os(text);
  llvm::interleaveComma(ranks, os);
  return text;
}

/// `type` as printed in IR, without the quotes diagnostics add to types.
std::string formatType(Type type) {
  std::string text;
  llvm::raw_string_ostream os(text);
  type.print(os);
  return text;
}

/// The slot a send, recv or collective names.
SlotKey slotOf(Operation *op) {
  auto make = [](auto action) -> SlotKey {
    std::optional<uint64_t> microbatch = action.getMicrobatch();
    return {action.getFragmentAttr().getAttr(),
            static_cast<int64_t>(action.getResult()),
            microbatch ? static_cast<int64_t>(*microbatch) : int64_t(-1)};
  };
  return TypeSwitch<Operation *, SlotKey>(op)
      .Case<SendOp, RecvOp, AllReduceOp, BroadcastOp>(make)
      .Default([](Operation *) { return SlotKey{}; });
}

bool isPointToPoint(Operation *op) { return isa<SendOp, RecvOp>(op); }
bool isCollective(Operation *op) { return isa<AllReduceOp, BroadcastOp>(op); }

/// One action of one rank.
struct Action {
  Operation *op;
  int64_t rank;
  /// Index past the last action of the block this action starts or belongs
  /// to, within the rank's list.
  unsigned blockEnd = 0;
  /// Send/recv: the paired op's action id, or -1 when unpaired.
  int partner = -1;
  /// Collective: the action ids of every member's matching collective
  /// (itself included); empty when unmatched.
  SmallVector<unsigned> members;
};

class ProgramSimulator {
public:
  ProgramSimulator(ProgramOp program, bool fifoPairs)
      : program(program), symbols(program), fifoPairs(fifoPairs) {}

  /// Checks `program`; returns failure after reporting its violations.
  LogicalResult check();

private:
  FragmentOp lookupFragment(StringAttr name) {
    return symbols.lookup<FragmentOp>(name);
  }
  int64_t numMicrobatches() { return program.getMicrobatches(); }

  void collect();
  void pairPointToPoint();
  /// With fifoPairs: reports the first out-of-order message of each
  /// directed rank pair.
  void checkFifoPairs();
  void matchCollectives();
  void simulate();

  /// The slots the run `run` reads, with the argument each feeds.
  SmallVector<std::pair<SlotKey, unsigned>> inputsOf(RunOp run);
  /// Whether `op` leaves its rank holding `slot`.
  bool provides(Operation *op, const SlotKey &slot);
  /// Reports that rank `rank`'s action `pos` (`what`) needs `slot`, which the
  /// rank does not hold; notes where the slot comes from.
  void reportMissing(int64_t rank, unsigned pos, StringRef what,
                     const SlotKey &slot);
  /// Why the blocked action `id` waits, for a deadlock report.
  std::string describeWait(unsigned id);

  ProgramOp program;
  SymbolTable symbols;
  bool fifoPairs;
  std::vector<Action> actions;
  /// Action ids of each rank, in order.
  std::vector<SmallVector<unsigned>> rankActions;
  /// The incoming transfer of each (fragment, argument).
  DenseMap<std::pair<Operation *, unsigned>, TransferOp> incoming;
  /// The first run of each (fragment, microbatch), on any rank.
  DenseMap<std::pair<StringAttr, int64_t>, RunOp> producers;
  /// Simulation state.
  std::vector<char> posted, done;
  bool failed = false;
};

void ProgramSimulator::collect() {
  rankActions.resize(program.getNumRanks());
  for (Operation &op : program.getBodyBlock()) {
    if (auto transfer = dyn_cast<TransferOp>(op)) {
      if (FragmentOp dst = lookupFragment(transfer.getDstAttr().getAttr()))
        incoming[{dst.getOperation(),
                  static_cast<unsigned>(transfer.getArg())}] = transfer;
      continue;
    }
    auto rankOp = dyn_cast<RankOp>(op);
    if (!rankOp)
      continue;
    int64_t rank = rankOp.getRank();
    for (Operation &action : rankOp.getBodyBlock()) {
      if (!isa<RunOp, SendOp, RecvOp, AllReduceOp, BroadcastOp>(action))
        continue;
      rankActions[rank].push_back(actions.size());
      actions.push_back(Action{&action, rank});
      if (auto run = dyn_cast<RunOp>(action)) {
        std::optional<uint64_t> mb = run.getMicrobatch();
        producers.try_emplace(
            {run.getFragmentAttr().getAttr(), mb ? int64_t(*mb) : -1}, run);
      }
    }
  }
  // Blocks: a maximal sequence of consecutive sends/recvs, or one action.
  for (SmallVector<unsigned> &list : rankActions) {
    for (unsigned i = 0, e = list.size(); i < e;) {
      unsigned end = i + 1;
      if (isPointToPoint(actions[list[i]].op))
        while (end < e && isPointToPoint(actions[list[end]].op))
          ++end;
      for (unsigned j = i; j < end; ++j)
        actions[list[j]].blockEnd = end;
      i = end;
    }
  }
}

void ProgramSimulator::pairPointToPoint() {
  // (sender, receiver, channel) -> action ids in posting order.
  using Stream = std::tuple<int64_t, int64_t, int64_t>;
  std::map<Stream, SmallVector<unsigned>> sends, recvs;
  for (auto [id, action] : llvm::enumerate(actions)) {
    if (auto send = dyn_cast<SendOp>(action.op))
      sends[{action.rank, int64_t(send.getPeer()), int64_t(send.getChannel())}]
          .push_back(id);
    else if (auto recv = dyn_cast<RecvOp>(action.op))
      recvs[{int64_t(recv.getPeer()), action.rank, int64_t(recv.getChannel())}]
          .push_back(id);
  }

  // For an unpaired op: where the same slot goes between other ranks, as a
  // hint at a wrong peer or channel.
  auto noteSameSlot = [&](InFlightDiagnostic &diag, unsigned id) {
    SlotKey slot = slotOf(actions[id].op);
    bool isSend = isa<SendOp>(actions[id].op);
    for (auto [otherId, other] : llvm::enumerate(actions)) {
      if (other.partner >= 0 || otherId == id || slotOf(other.op) != slot)
        continue;
      if (auto recv = dyn_cast<RecvOp>(other.op); recv && isSend)
        diag.attachNote(recv.getLoc())
            << "rank " << other.rank << " receives " << formatSlot(slot)
            << " from rank " << recv.getPeer() << " on channel "
            << recv.getChannel() << " here";
      else if (auto send = dyn_cast<SendOp>(other.op); send && !isSend)
        diag.attachNote(send.getLoc())
            << "rank " << other.rank << " sends " << formatSlot(slot)
            << " to rank " << send.getPeer() << " on channel "
            << send.getChannel() << " here";
    }
  };

  for (auto &[stream, sendIds] : sends) {
    auto it = recvs.find(stream);
    ArrayRef<unsigned> recvIds;
    if (it != recvs.end())
      recvIds = it->second;
    for (unsigned n = 0, e = std::min(sendIds.size(), recvIds.size()); n < e;
         ++n) {
      actions[sendIds[n]].partner = recvIds[n];
      actions[recvIds[n]].partner = sendIds[n];
    }
  }

  for (auto [id, action] : llvm::enumerate(actions)) {
    if (!isPointToPoint(action.op))
      continue;
    if (action.partner < 0) {
      failed = true;
      if (auto send = dyn_cast<SendOp>(action.op)) {
        InFlightDiagnostic diag =
            send.emitError()
            << "unmatched send: rank " << action.rank << " sends "
            << formatSlot(slotOf(send)) << " to rank " << send.getPeer()
            << " on channel " << send.getChannel() << ", but rank "
            << send.getPeer() << " posts no matching recv from rank "
            << action.rank << " on channel " << send.getChannel();
        noteSameSlot(diag, id);
      } else {
        auto recv = cast<RecvOp>(action.op);
        InFlightDiagnostic diag =
            recv.emitError()
            << "unmatched recv: rank " << action.rank << " receives "
            << formatSlot(slotOf(recv)) << " from rank " << recv.getPeer()
            << " on channel " << recv.getChannel() << ", but rank "
            << recv.getPeer() << " posts no matching send to rank "
            << action.rank << " on channel " << recv.getChannel();
        noteSameSlot(diag, id);
      }
      continue;
    }
    auto send = dyn_cast<SendOp>(action.op);
    if (!send)
      continue;
    auto recv = cast<RecvOp>(actions[action.partner].op);
    int64_t receiver = actions[action.partner].rank;
    auto mismatch = [&](StringRef what) {
      failed = true;
      InFlightDiagnostic diag =
          send.emitError() << what << " mismatch: rank " << action.rank
                           << " sends " << formatSlot(slotOf(send)) << " : "
                           << formatType(send.getType()) << " wire "
                           << formatType(send.getWire()) << " to rank "
                           << receiver << " on channel " << send.getChannel()
                           << ", but the matching recv on rank " << receiver
                           << " expects " << formatSlot(slotOf(recv)) << " : "
                           << formatType(recv.getType()) << " wire "
                           << formatType(recv.getWire());
      diag.attachNote(recv.getLoc())
          << "the matching recv on rank " << receiver << " (sends and recvs "
          << "between two ranks on one channel pair in posting order)";
    };
    if (send.getType() != recv.getType())
      mismatch("type");
    else if (slotOf(send) != slotOf(recv))
      mismatch("slot"); // Equal types mean equal wire types (verifyWire).
  }
}

void ProgramSimulator::matchCollectives() {
  // Sorted member set -> member rank -> its collectives over that set.
  std::map<std::vector<int64_t>, std::map<int64_t, SmallVector<unsigned>>>
      sequences;
  for (auto [id, action] : llvm::enumerate(actions)) {
    if (!isCollective(action.op))
      continue;
    ArrayRef<int64_t> group = isa<AllReduceOp>(action.op)
                                  ? cast<AllReduceOp>(action.op).getGroup()
                                  : cast<BroadcastOp>(action.op).getGroup();
    std::vector<int64_t> members(group.begin(), group.end());
    llvm::sort(members);
    members.erase(llvm::unique(members), members.end());
    sequences[members][action.rank].push_back(id);
  }

  // What `a` and `b` (collectives over one member set) disagree in, or "".
  auto difference = [](Operation *a, Operation *b) -> StringRef {
    if (a->getName() != b->getName())
      return "kind";
    if (auto ra = dyn_cast<AllReduceOp>(a)) {
      auto rb = cast<AllReduceOp>(b);
      if (ra.getReduction() != rb.getReduction())
        return "reduction";
      if (ra.getGroup() != rb.getGroup())
        return "group order";
      if (ra.getType() != rb.getType())
        return "type";
      return "";
    }
    auto ba = cast<BroadcastOp>(a), bb = cast<BroadcastOp>(b);
    if (ba.getRoot() != bb.getRoot())
      return "root";
    if (ba.getGroup() != bb.getGroup())
      return "group order";
    if (ba.getType() != bb.getType())
      return "type";
    if (slotOf(a) != slotOf(b))
      return "slot";
    return "";
  };

  for (auto &[members, perRank] : sequences) {
    std::string memberText = "{" + formatRanks(members) + "}";
    size_t longest = 0;
    for (auto &entry : perRank)
      longest = std::max(longest, entry.second.size());
    bool reported = false;
    for (size_t n = 0; n < longest; ++n) {
      // The reference is the lowest member rank that has an n-th collective.
      int64_t refRank = -1;
      for (int64_t member : members)
        if (perRank.count(member) && perRank[member].size() > n) {
          refRank = member;
          break;
        }
      unsigned refId = perRank[refRank][n];
      Operation *ref = actions[refId].op;
      SmallVector<unsigned> matched;
      SmallVector<int64_t> absent;
      for (int64_t member : members) {
        auto it = perRank.find(member);
        if (it == perRank.end() || it->second.size() <= n) {
          absent.push_back(member);
          continue;
        }
        matched.push_back(it->second[n]);
      }
      if (!absent.empty()) {
        // Unmatched: every present member's op completes on its own.
        if (!reported) {
          failed = true;
          reported = true;
          ref->emitError() << "unmatched collective: rank " << refRank
                           << " enters this " << ref->getName()
                           << " as its collective #" << n << " over ranks "
                           << memberText << ", but rank"
                           << (absent.size() > 1 ? "s " : " ")
                           << formatRanks(absent) << " enter"
                           << (absent.size() > 1 ? "" : "s") << " only " << n
                           << " collective" << (n == 1 ? "" : "s")
                           << " over these ranks";
        }
        continue;
      }
      for (unsigned id : matched)
        actions[id].members = matched;
      if (reported)
        continue;
      for (unsigned id : matched) {
        StringRef what = difference(ref, actions[id].op);
        if (what.empty())
          continue;
        failed = true;
        reported = true;
        Operation *op = actions[id].op;
        InFlightDiagnostic diag =
            op->emitError()
            << "collective mismatch: rank " << actions[id].rank
            << " enters this " << op->getName() << " as its collective #" << n
            << " over ranks " << memberText << ", but rank " << refRank
            << "'s collective #" << n << " differs in its " << what
            << " (every member enters the same collectives in the same "
               "order)";
        diag.attachNote(ref->getLoc())
            << "rank " << refRank << "'s collective #" << n << " over ranks "
            << memberText;
        break;
      }
    }
  }
}

SmallVector<std::pair<SlotKey, unsigned>>
ProgramSimulator::inputsOf(RunOp run) {
  SmallVector<std::pair<SlotKey, unsigned>> inputs;
  FragmentOp fragment = lookupFragment(run.getFragmentAttr().getAttr());
  if (!fragment)
    return inputs;
  std::optional<uint64_t> mb = run.getMicrobatch();
  for (unsigned i = 0, e = fragment.getNumArguments(); i < e; ++i) {
    // Parameters and step inputs are available on every rank from the
    // start of the step.
    if (fragment.getParamBinding(i) || fragment.getInputBinding(i))
      continue;
    TransferOp transfer = incoming.lookup({fragment.getOperation(), i});
    if (!transfer)
      continue;
    FragmentOp src = lookupFragment(transfer.getSrcAttr().getAttr());
    if (!src)
      continue;
    StringAttr name = src.getSymNameAttr();
    int64_t result = transfer.getResult();
    if (!src.isPerMicrobatch()) {
      inputs.push_back({{name, result, -1}, i});
    } else if (mb) {
      inputs.push_back({{name, result, int64_t(*mb)}, i});
    } else {
      // Gradient accumulation: every microbatch's value is summed.
      for (int64_t k = 0, m = numMicrobatches(); k < m; ++k)
        inputs.push_back({{name, result, k}, i});
    }
  }
  return inputs;
}

bool ProgramSimulator::provides(Operation *op, const SlotKey &slot) {
  if (auto run = dyn_cast<RunOp>(op)) {
    std::optional<uint64_t> mb = run.getMicrobatch();
    return run.getFragmentAttr().getAttr() == std::get<0>(slot) &&
           (mb ? int64_t(*mb) : -1) == std::get<2>(slot);
  }
  if (isa<RecvOp, BroadcastOp>(op))
    return slotOf(op) == slot;
  return false;
}

void ProgramSimulator::reportMissing(int64_t rank, unsigned pos, StringRef what,
                                     const SlotKey &slot) {
  failed = true;
  Operation *op = actions[rankActions[rank][pos]].op;
  InFlightDiagnostic diag = op->emitError() << what << " " << formatSlot(slot)
                                            << ", which rank " << rank
                                            << " does not hold at this point";
  // Where this rank obtains it later, if it does.
  for (unsigned later : ArrayRef(rankActions[rank]).drop_front(pos + 1)) {
    Operation *laterOp = actions[later].op;
    if (!provides(laterOp, slot))
      continue;
    diag.attachNote(laterOp->getLoc())
        << "rank " << rank << " obtains " << formatSlot(slot)
        << " only here, later";
    return;
  }
  RunOp producer = producers.lookup({std::get<0>(slot), std::get<2>(slot)});
  if (!producer) {
    diag.attachNote() << "no rank runs the producer @"
                      << std::get<0>(slot).getValue()
                      << (std::get<2>(slot) >= 0 ? " for that microbatch" : "");
    return;
  }
  std::optional<int64_t> producerRank = RankOp::getOwnRank(producer);
  diag.attachNote(producer.getLoc())
      << "produced here, on rank " << (producerRank ? *producerRank : -1)
      << ", and never received by rank " << rank;
}

std::string ProgramSimulator::describeWait(unsigned id) {
  const Action &action = actions[id];
  std::string text;
  llvm::raw_string_ostream os(text);
  os << "rank " << action.rank << " waits at this ";
  if (auto send = dyn_cast<SendOp>(action.op)) {
    os << "send of " << formatSlot(slotOf(send)) << " to rank "
       << send.getPeer() << " (channel " << send.getChannel()
       << ") for its matching recv, which rank " << send.getPeer()
       << " has not posted";
  } else if (auto recv = dyn_cast<RecvOp>(action.op)) {
    os << "recv of " << formatSlot(slotOf(recv)) << " from rank "
       << recv.getPeer() << " (channel " << recv.getChannel()
       << ") for its matching send, which rank " << recv.getPeer()
       << " has not posted";
  } else {
    SmallVector<int64_t> missing;
    for (unsigned member : action.members)
      if (!posted[member])
        missing.push_back(actions[member].rank);
    os << action.op->getName() << " for rank"
       << (missing.size() > 1 ? "s " : " ") << formatRanks(missing)
       << " to reach the same collective";
  }
  return text;
}

void ProgramSimulator::simulate() {
  int64_t numRanks = rankActions.size();
  posted.assign(actions.size(), 0);
  done.assign(actions.size(), 0);
  std::vector<unsigned> pc(numRanks, 0);
  std::vector<char> blockPosted(numRanks, 0);
  std::vector<DenseSet<SlotKey>> held(numRanks);

  auto tryComplete = [&](unsigned id) {
    if (done[id])
      return;
    Action &action = actions[id];
    if (isPointToPoint(action.op)) {
      if (action.partner < 0) {
        done[id] = true; // Reported; continue as if completed.
      } else if (posted[action.partner]) {
        done[id] = true;
        done[action.partner] = true;
      }
      return;
    }
    if (action.members.empty()) {
      done[id] = true;
      return;
    }
    if (llvm::all_of(action.members, [&](unsigned m) { return posted[m]; }))
      for (unsigned m : action.members)
        done[m] = true;
  };

  // Advances rank `r` by one step; returns whether anything changed.
  auto advance = [&](int64_t r) -> bool {
    ArrayRef<unsigned> list = rankActions[r];
    if (pc[r] >= list.size())
      return false;
    unsigned begin = pc[r];
    const Action &first = actions[list[begin]];
    if (auto run = dyn_cast<RunOp>(first.op)) {
      for (auto &[slot, arg] : inputsOf(run)) {
        if (held[r].contains(slot))
          continue;
        std::string what;
        llvm::raw_string_ostream os(what);
        os << "run of @" << run.getFragment();
        if (std::optional<uint64_t> mb = run.getMicrobatch())
          os << " microbatch " << *mb;
        os << " needs, as argument " << arg << ",";
        reportMissing(r, begin, what, slot);
        break;
      }
      if (FragmentOp fragment =
              lookupFragment(run.getFragmentAttr().getAttr())) {
        std::optional<uint64_t> mb = run.getMicrobatch();
        for (unsigned i = 0, e = fragment.getNumResults(); i < e; ++i)
          held[r].insert({fragment.getSymNameAttr(), int64_t(i),
                          mb ? int64_t(*mb) : int64_t(-1)});
      }
      ++pc[r];
      return true;
    }
    unsigned end = first.blockEnd;
    bool changed = false;
    if (!blockPosted[r]) {
      // Post the whole block; data sent must be held when posting.
      for (unsigned pos = begin; pos < end; ++pos) {
        Operation *op = actions[list[pos]].op;
        SlotKey slot = slotOf(op);
        if (isa<SendOp>(op) && !held[r].contains(slot))
          reportMissing(r, pos, "send of", slot);
        else if (isa<AllReduceOp>(op) && !held[r].contains(slot))
          reportMissing(r, pos, "all_reduce of", slot);
        else if (auto bcast = dyn_cast<BroadcastOp>(op);
                 bcast && int64_t(bcast.getRoot()) == r &&
                 !held[r].contains(slot))
          reportMissing(r, pos, "broadcast from its root of", slot);
        posted[list[pos]] = true;
      }
      for (unsigned pos = begin; pos < end; ++pos)
        tryComplete(list[pos]);
      blockPosted[r] = true;
      changed = true;
    }
    for (unsigned pos = begin; pos < end; ++pos)
      if (!done[list[pos]])
        return changed;
    for (unsigned pos = begin; pos < end; ++pos)
      if (isa<RecvOp, BroadcastOp>(actions[list[pos]].op))
        held[r].insert(slotOf(actions[list[pos]].op));
    pc[r] = end;
    blockPosted[r] = false;
    return true;
  };

  for (bool progress = true; progress;) {
    progress = false;
    for (int64_t r = 0; r < numRanks; ++r)
      while (advance(r))
        progress = true;
  }

  // Every unfinished rank is blocked in a posted block.
  SmallVector<int64_t> blocked;
  SmallVector<unsigned> waits;
  for (int64_t r = 0; r < numRanks; ++r) {
    ArrayRef<unsigned> list = rankActions[r];
    if (pc[r] >= list.size())
      continue;
    blocked.push_back(r);
    unsigned end = actions[list[pc[r]]].blockEnd;
    for (unsigned pos = pc[r]; pos < end; ++pos)
      if (!done[list[pos]]) {
        waits.push_back(list[pos]);
        break;
      }
  }
  if (blocked.empty())
    return;
  failed = true;
  InFlightDiagnostic diag = actions[waits.front()].op->emitError()
                            << "deadlock under rendezvous semantics: rank"
                            << (blocked.size() > 1 ? "s " : " ")
                            << formatRanks(blocked) << " can never progress; "
                            << describeWait(waits.front());
  for (unsigned id : ArrayRef(waits).drop_front())
    diag.attachNote(actions[id].op->getLoc()) << describeWait(id);
}

void ProgramSimulator::checkFifoPairs() {
  // (sender, receiver) -> action ids in posting order (ids grow along each
  // rank's list).
  std::map<std::pair<int64_t, int64_t>, SmallVector<unsigned>> sends, recvs;
  for (auto [id, action] : llvm::enumerate(actions)) {
    if (action.partner < 0)
      continue; // Reported as unmatched already.
    if (auto send = dyn_cast<SendOp>(action.op))
      sends[{action.rank, int64_t(send.getPeer())}].push_back(id);
    else if (auto recv = dyn_cast<RecvOp>(action.op))
      recvs[{int64_t(recv.getPeer()), action.rank}].push_back(id);
  }
  for (auto &[pair, sendIds] : sends) {
    ArrayRef<unsigned> recvIds = recvs[pair];
    for (unsigned k = 0, e = std::min(sendIds.size(), recvIds.size()); k < e;
         ++k) {
      if (actions[sendIds[k]].partner == static_cast<int>(recvIds[k]))
        continue;
      failed = true;
      auto send = cast<SendOp>(actions[sendIds[k]].op);
      auto recv = cast<RecvOp>(actions[recvIds[k]].op);
      auto [from, to] = pair;
      InFlightDiagnostic diag =
          send.emitError()
          << "messages out of order for a transport without tags "
             "(fifo-pairs, NCCL): rank "
          << from << "'s send #" << k << " to rank " << to << " is "
          << formatSlot(slotOf(send)) << " on channel " << send.getChannel()
          << ", but rank " << to << "'s receive #" << k << " from rank " << from
          << " is " << formatSlot(slotOf(recv)) << " on channel "
          << recv.getChannel();
      diag.attachNote(recv.getLoc()) << "rank " << to << "'s receive #" << k
                                     << " from rank " << from << " is here";
      break;
    }
  }
}

LogicalResult ProgramSimulator::check() {
  collect();
  pairPointToPoint();
  if (fifoPairs)
    checkFifoPairs();
  matchCollectives();
  simulate();
  return failure(failed);
}

struct MPMDVerifyPass : tandem::mpmd::impl::MPMDVerifyBase<MPMDVerifyPass> {
  using MPMDVerifyBase::MPMDVerifyBase;
  void runOnOperation() override {
    bool ok = true;
    for (auto program : getOperation().getOps<ProgramOp>()) {
      ProgramSimulator simulator(program, fifoPairs);
      if (failed(simulator.check()))
        ok = false;
    }
    if (!ok)
      signalPassFailure();
  }
};

} // namespace
