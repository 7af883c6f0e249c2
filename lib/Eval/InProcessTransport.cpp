//===- InProcessTransport.cpp - every rank as a thread of one process -----===//
//
// One mutex guards all communication state and one condition variable
// announces every change, so the deadlock check sees a consistent picture:
// a rank is blocked when it waits in a group with incomplete ops or in a
// collective not every member has reached. Matching happens when an op is
// posted, so once every unfinished rank is blocked nothing can change any
// more and the step fails instead of hanging.
//
//===----------------------------------------------------------------------===//

#include "tandem/Eval/Transport.h"

#include "mlir/IR/BuiltinTypes.h"
#include "llvm/ADT/STLExtras.h"
#include "llvm/Support/raw_ostream.h"

#include <atomic>
#include <cmath>
#include <condition_variable>
#include <deque>
#include <map>
#include <mutex>
#include <set>
#include <tuple>

using namespace tandem::eval;

Transport::~Transport() = default;

void tandem::eval::combineInto(Tensor &acc, const Tensor &x,
                               Reduction reduction, RoundingOptions rounding) {
  for (size_t i = 0; i < acc.data.size(); ++i) {
    double a = acc.data[i], b = x.data[i];
    double value;
    if (reduction == Reduction::Sum)
      value = a + b;
    else
      value = std::isnan(a) || std::isnan(b) ? std::nan("") : std::max(a, b);
    acc.data[i] = roundToType(value, acc.elementType, rounding);
  }
}

static std::string typeText(mlir::Type type) {
  std::string text;
  llvm::raw_string_ostream os(text);
  os << type;
  return text;
}

static std::string ranksText(llvm::ArrayRef<int64_t> ranks) {
  std::string text;
  for (auto [i, rank] : llvm::enumerate(ranks))
    text += (i ? ", " : "") + std::to_string(rank);
  return text;
}

namespace {

/// A posted, not yet matched send or receive.
struct Pending {
  int64_t rank;
  Message *message;
};

/// The n-th collective over one set of members.
struct Instance {
  /// The first member's op, which the others must agree with.
  Collective op;
  int64_t firstRank = 0;
  std::map<int64_t, Tensor> contributions;
  std::set<int64_t> arrived;
  size_t departed = 0;
  bool complete = false;
  Tensor result;
};

enum class Status { Running, InGroup, InCollective, Done };

struct RankState {
  Status status = Status::Running;
  /// Ops of the current group not completed yet.
  size_t remaining = 0;
  llvm::MutableArrayRef<Message> group;
  Instance *instance = nullptr;
  const Collective *collective = nullptr;
};

} // namespace

struct InProcessTransport::State {
  explicit State(int64_t numRanks) : ranks(numRanks) {}

  std::mutex mutex;
  std::condition_variable changed;
  std::vector<RankState> ranks;
  /// (sender, receiver, channel) -> posted, unmatched ops in posting order.
  using Stream = std::tuple<int64_t, int64_t, int64_t>;
  std::map<Stream, std::deque<Pending>> sends, recvs;
  /// Member set (sorted) -> its collectives in entry order, and how many
  /// of them each rank has entered.
  std::map<std::vector<int64_t>, std::vector<std::unique_ptr<Instance>>>
      collectives;
  std::map<std::pair<int64_t, std::vector<int64_t>>, size_t> entered;
  std::atomic<bool> aborted{false};
  std::string reason;

  /// Aborts with `message` unless already aborted; the lock is held.
  void abortLocked(const std::string &message) {
    if (!aborted) {
      reason = message;
      aborted = true;
    }
    changed.notify_all();
  }

  llvm::Error abortedError() { return llvm::createStringError(reason); }

  bool isBlocked(const RankState &rank) const {
    if (rank.status == Status::InGroup)
      return rank.remaining > 0;
    if (rank.status == Status::InCollective)
      return !rank.instance->complete;
    return false;
  }

  /// Why `rank`'s op `message` has not completed.
  std::string describeWait(const Message &message) const {
    bool send = message.kind == Message::Kind::Send;
    std::string text = message.what + ": rank " + std::to_string(message.peer) +
                       " has not posted the matching " +
                       (send ? "recv" : "send");
    if (message.peer >= 0 && message.peer < int64_t(ranks.size()) &&
        ranks[message.peer].status == Status::Done)
      text += " (it has finished its action list)";
    return text;
  }

  /// Fails the step if every rank that has not finished is blocked.
  void checkDeadlockLocked() {
    bool anyBlocked = false;
    for (const RankState &rank : ranks) {
      if (rank.status == Status::Done)
        continue;
      if (!isBlocked(rank))
        return;
      anyBlocked = true;
    }
    if (!anyBlocked || aborted)
      return;
    std::string message = "deadlock under rendezvous semantics: every rank "
                          "that has not finished is blocked";
    for (auto [index, rank] : llvm::enumerate(ranks)) {
      if (rank.status == Status::InGroup) {
        for (const Message &m : rank.group)
          if (!m.completed)
            message +=
                "\n  rank " + std::to_string(index) + ": " + describeWait(m);
      } else if (rank.status == Status::InCollective) {
        llvm::SmallVector<int64_t> missing;
        for (int64_t member : rank.instance->op.group)
          if (!rank.instance->arrived.count(member))
            missing.push_back(member);
        message += "\n  rank " + std::to_string(index) + ": " +
                   rank.collective->what + ": waits for rank(s) " +
                   ranksText(missing) + " to reach it";
      }
    }
    abortLocked(message);
  }

  /// Pairs `send` with `recv`, or fails when they disagree.
  llvm::Error match(Pending send, Pending recv) {
    Message &s = *send.message, &r = *recv.message;
    auto mismatch = [&](llvm::StringRef what, const std::string &sendSide,
                        const std::string &recvSide) {
      return llvm::createStringError(
          "rank " + std::to_string(send.rank) + "'s " + s.what +
          " pairs with " + "rank " + std::to_string(recv.rank) + "'s " +
          r.what +
          " (messages on a channel match in posting order), but they "
          "disagree on the " +
          what + ": " + sendSide + " vs " + recvSide);
    };
    if (s.type != r.type)
      return mismatch("type", typeText(s.type), typeText(r.type));
    if (s.wire != r.wire)
      return mismatch("wire type", typeText(s.wire), typeText(r.wire));
    if (s.slot != r.slot)
      return mismatch("slot", s.slot, r.slot);
    r.payload = s.payload;
    s.completed = r.completed = true;
    --ranks[send.rank].remaining;
    --ranks[recv.rank].remaining;
    return llvm::Error::success();
  }

  /// Waits until `done()` holds, the step is aborted or it deadlocks.
  template <typename Done>
  llvm::Error wait(std::unique_lock<std::mutex> &lock, Done done) {
    while (true) {
      if (aborted)
        return abortedError();
      if (done())
        return llvm::Error::success();
      checkDeadlockLocked();
      if (aborted)
        return abortedError();
      changed.wait(lock);
    }
  }
};

InProcessTransport::InProcessTransport(int64_t numRanks)
    : state(std::make_unique<State>(numRanks)) {}

InProcessTransport::~InProcessTransport() = default;

llvm::Error InProcessTransport::exchange(int64_t rank,
                                         llvm::MutableArrayRef<Message> group) {
  std::unique_lock<std::mutex> lock(state->mutex);
  if (state->aborted)
    return state->abortedError();
  int64_t numRanks = state->ranks.size();
  RankState &self = state->ranks[rank];
  self.status = Status::InGroup;
  self.group = group;
  self.remaining = group.size();
  for (Message &message : group) {
    message.completed = false;
    if (message.peer < 0 || message.peer >= numRanks || message.peer == rank) {
      state->abortLocked("rank " + std::to_string(rank) + ": " + message.what +
                         ": the peer must be another rank of the " +
                         std::to_string(numRanks) + "-rank grid");
      return state->abortedError();
    }
    bool send = message.kind == Message::Kind::Send;
    State::Stream stream =
        send ? State::Stream{rank, message.peer, message.channel}
             : State::Stream{message.peer, rank, message.channel};
    auto &partners = send ? state->recvs[stream] : state->sends[stream];
    if (partners.empty()) {
      (send ? state->sends : state->recvs)[stream].push_back({rank, &message});
      continue;
    }
    Pending partner = partners.front();
    partners.pop_front();
    llvm::Error error = send ? state->match({rank, &message}, partner)
                             : state->match(partner, {rank, &message});
    if (error) {
      state->abortLocked(llvm::toString(std::move(error)));
      return state->abortedError();
    }
  }
  state->changed.notify_all();
  llvm::Error error = state->wait(lock, [&] { return self.remaining == 0; });
  self.status = Status::Running;
  self.group = {};
  return error;
}

llvm::Error InProcessTransport::collective(int64_t rank, const Collective &op,
                                           Tensor &value) {
  std::unique_lock<std::mutex> lock(state->mutex);
  if (state->aborted)
    return state->abortedError();
  int64_t numRanks = state->ranks.size();
  std::vector<int64_t> members(op.group.begin(), op.group.end());
  llvm::sort(members);
  bool valid =
      members.size() >= 2 &&
      std::adjacent_find(members.begin(), members.end()) == members.end() &&
      members.front() >= 0 && members.back() < numRanks &&
      llvm::is_contained(members, rank);
  if (!valid) {
    state->abortLocked("rank " + std::to_string(rank) + ": " + op.what +
                       ": the group must list at least two distinct ranks of "
                       "the grid, including this one");
    return state->abortedError();
  }
  if (op.kind == Collective::Kind::Broadcast &&
      !llvm::is_contained(members, op.root)) {
    state->abortLocked("rank " + std::to_string(rank) + ": " + op.what +
                       ": the root must be a member of the group");
    return state->abortedError();
  }

  auto &sequence = state->collectives[members];
  size_t index = state->entered[{rank, members}]++;
  if (index == sequence.size()) {
    sequence.push_back(std::make_unique<Instance>());
    sequence.back()->op = op;
    sequence.back()->firstRank = rank;
  }
  Instance &instance = *sequence[index];
  const Collective &first = instance.op;
  std::string disagreement;
  if (first.kind != op.kind)
    disagreement = "kind";
  else if (first.group != op.group)
    disagreement = "group order";
  else if (first.type != op.type)
    disagreement = "type";
  else if (op.kind == Collective::Kind::AllReduce &&
           first.reduction != op.reduction)
    disagreement = "reduction";
  else if (op.kind == Collective::Kind::Broadcast && first.root != op.root)
    disagreement = "root";
  if (!disagreement.empty()) {
    state->abortLocked(
        "collective mismatch: rank " + std::to_string(rank) + "'s " + op.what +
        " and rank " + std::to_string(instance.firstRank) + "'s " + first.what +
        " are collective #" + std::to_string(index) + " over ranks {" +
        ranksText(members) + "} but differ in " + disagreement);
    return state->abortedError();
  }

  if (op.kind == Collective::Kind::AllReduce || rank == op.root)
    instance.contributions[rank] = value;
  instance.arrived.insert(rank);
  if (instance.arrived.size() == members.size()) {
    if (op.kind == Collective::Kind::Broadcast) {
      instance.result = instance.contributions[op.root];
    } else {
      // The fixed order of `group` makes every member's value bitwise equal
      // and lets a one-stage program reproduce it.
      instance.result = instance.contributions[op.group.front()];
      for (int64_t member : llvm::drop_begin(op.group))
        combineInto(instance.result, instance.contributions[member],
                    op.reduction, op.rounding);
    }
    instance.contributions.clear();
    instance.complete = true;
    state->changed.notify_all();
  }

  RankState &self = state->ranks[rank];
  self.status = Status::InCollective;
  self.instance = &instance;
  self.collective = &op;
  llvm::Error error = state->wait(lock, [&] { return instance.complete; });
  self.status = Status::Running;
  self.instance = nullptr;
  self.collective = nullptr;
  if (error)
    return error;
  value = instance.result;
  if (++instance.departed == members.size())
    instance.result = Tensor();
  return llvm::Error::success();
}

void InProcessTransport::finish(int64_t rank) {
  std::lock_guard<std::mutex> lock(state->mutex);
  state->ranks[rank].status = Status::Done;
  // The last runnable rank finishing may leave the others blocked for good.
  state->checkDeadlockLocked();
  state->changed.notify_all();
}

void InProcessTransport::abort(const std::string &reason) {
  std::lock_guard<std::mutex> lock(state->mutex);
  state->abortLocked(reason);
}

bool InProcessTransport::isAborted() const { return state->aborted; }
